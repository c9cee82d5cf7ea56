# Reliability builds (docs/reliability.md), both off by default:
#   -DKVSCOPE_SANITIZE=ON  AddressSanitizer + UndefinedBehaviorSanitizer on every kvscope target
#                          (engine, kernels, CLI, tests): the whole suite runs instrumented.
#   -DKVSCOPE_FUZZ=ON      clang only: the engine instrumented for libFuzzer as well, and the fuzz
#                          targets of tests/fuzz/ (build the target kvscope_fuzzers).
# Any finding aborts (-fno-sanitize-recover=all), so a test or fuzz run fails instead of logging.
# The flags ride on kvscope_flags, which every kvscope target links; nvcc-compiled code is not
# instrumented (scripts/sanitize.sh builds without CUDA, see there).
option(KVSCOPE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(KVSCOPE_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang)" OFF)

if(KVSCOPE_SANITIZE OR KVSCOPE_FUZZ)
  set(KVSCOPE_SANITIZERS address,undefined)
  if(KVSCOPE_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
      message(FATAL_ERROR "KVSCOPE_FUZZ needs clang (-DCMAKE_CXX_COMPILER=clang++), "
                          "not ${CMAKE_CXX_COMPILER_ID}")
    endif()
    # Coverage feedback for libFuzzer in every engine file; its main() comes with the targets.
    set(KVSCOPE_SANITIZERS fuzzer-no-link,${KVSCOPE_SANITIZERS})
    # Without the stack-depth feature (on by default on Linux): it counts how far below the
    # first frame the stack reached, and where the first frame sits moves with the size of the
    # environment and command line (and with stack randomisation), so the same seed explored
    # differently under another shell or folder. The check must give one answer per commit.
    set(KVSCOPE_FUZZ_FLAGS -fno-sanitize-coverage=stack-depth)
  endif()
  target_compile_options(kvscope_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${KVSCOPE_SANITIZERS} ${KVSCOPE_FUZZ_FLAGS}
                              -fno-omit-frame-pointer -fno-sanitize-recover=all>)
  target_link_options(kvscope_flags INTERFACE -fsanitize=address,undefined)
  message(STATUS "kvscope: sanitizers ON (${KVSCOPE_SANITIZERS})")
endif()
