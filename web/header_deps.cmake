# The page's header-only libraries from Debian's packages (included by the top CMakeLists.txt
# under Emscripten, before the folders that use them): Emscripten looks only in its own sysroot,
# so each comes through a folder in the build tree that holds only it (no glibc header from
# /usr/include reaches Emscripten's own).
set(KVSCOPE_WEB_INCLUDE "${CMAKE_BINARY_DIR}/web-include")
file(MAKE_DIRECTORY "${KVSCOPE_WEB_INCLUDE}")
file(CREATE_LINK /usr/include/nlohmann "${KVSCOPE_WEB_INCLUDE}/nlohmann" SYMBOLIC)
file(CREATE_LINK /usr/include/CLI "${KVSCOPE_WEB_INCLUDE}/CLI" SYMBOLIC)
foreach(h stb_truetype.h stb_image_write.h stb_rect_pack.h)
  file(CREATE_LINK "/usr/include/stb/${h}" "${KVSCOPE_WEB_INCLUDE}/${h}" SYMBOLIC)
endforeach()
# CLI11 (cmdline/): what find_package(CLI11) gives on the desktop.
add_library(CLI11::CLI11 INTERFACE IMPORTED)
target_include_directories(CLI11::CLI11 SYSTEM INTERFACE "${KVSCOPE_WEB_INCLUDE}")
set(CLI11_FOUND TRUE)
# std::bit_cast, missing from Emscripten 3.1.6's libc++ (web/std_compat.h), for every C++ file.
add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:SHELL:-include ${CMAKE_SOURCE_DIR}/web/std_compat.h>")
# WebAssembly SIMD128 for the whole page (a browser loads a module with SIMD or not at all): the
# fast CPU ops then run the simd128 path (kernels/cpu/isa.h), else the plain one.
option(KVSCOPE_WEB_SIMD "Build the page with WebAssembly SIMD128 (-msimd128)" ON)
if(KVSCOPE_WEB_SIMD)
  add_compile_options(-msimd128)
endif()
