# CUDA is optional. With a working nvcc, the CUDA language is enabled here (at the top level, so
# every target that links kvscope_kernels can link its CUDA objects) and KVSCOPE_CUDA is ON;
# without one, KVSCOPE_CUDA is OFF and the build is C++ only (the emulated CUDA backend still
# builds and is tested). -DCMAKE_CUDA_COMPILER=OFF forces the C++-only build.
#
# KVSCOPE_CUDA_DEVICE: whether a CUDA device answered when this build was configured (printed
# only: the GPU tests are registered in every CUDA build and decide at run time whether to skip).
include(CheckLanguage)
check_language(CUDA)
set(KVSCOPE_CUDA OFF)
set(KVSCOPE_CUDA_DEVICE OFF)
if(CMAKE_CUDA_COMPILER AND EXISTS "${CMAKE_CUDA_COMPILER}")
  # Real code for Turing..Hopper (the 90 entry also embeds compute_90 PTX, which newer GPUs
  # compile at load time), and Blackwell below. Must be set before enable_language; -DCMAKE_CUDA_ARCHITECTURES=...
  # overrides it (e.g. 90 alone for a faster build aimed at one H100).
  # Blackwell (sm_100 data centre, sm_120 desktop) is added where this nvcc can build it
  # (nvcc --list-gpu-code names the codes it can emit; 12.8 and later).
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(_kvs_archs "75-real;80-real;86-real;89-real;90")
    execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-code
                    OUTPUT_VARIABLE _kvs_codes ERROR_QUIET RESULT_VARIABLE _kvs_codes_rc)
    if(_kvs_codes_rc EQUAL 0)
      string(REGEX MATCHALL "sm_[0-9]+" _kvs_codes "${_kvs_codes}")
      foreach(_kvs_sm 100 120)
        if("sm_${_kvs_sm}" IN_LIST _kvs_codes)
          list(APPEND _kvs_archs "${_kvs_sm}-real")
        endif()
      endforeach()
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${_kvs_archs}" CACHE STRING
        "CUDA architectures to build kernels for")
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 has no C++20 flags for nvcc; the .cu files need 17
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(KVSCOPE_CUDA ON)
  message(STATUS "kvscope: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES})")

  # Probed at every configure (a second or two), so a build dir moved to a GPU machine notices.
  try_run(_kvs_probe_run _kvs_probe_compiled
          "${CMAKE_BINARY_DIR}/cuda_device_probe"
          "${CMAKE_CURRENT_LIST_DIR}/cuda_device_probe.cpp"
          LINK_LIBRARIES CUDA::cudart_static
          COMPILE_OUTPUT_VARIABLE _kvs_probe_log
          RUN_OUTPUT_VARIABLE _kvs_probe_out)
  string(STRIP "${_kvs_probe_out}" _kvs_probe_out)
  if(_kvs_probe_compiled AND _kvs_probe_run EQUAL 0)
    set(KVSCOPE_CUDA_DEVICE ON)
  elseif(NOT _kvs_probe_compiled)
    message(WARNING "kvscope: the CUDA device probe did not compile:\n${_kvs_probe_log}")
  endif()
  message(STATUS "kvscope: CUDA device at configure time: ${KVSCOPE_CUDA_DEVICE} "
                 "(${_kvs_probe_out}); ctest -L gpu skips without one")
else()
  message(STATUS "kvscope: no nvcc: CUDA backend OFF (the emulated CUDA backend is still built)")
endif()
