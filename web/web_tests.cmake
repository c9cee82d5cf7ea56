# ctest -L web: the page (scripts/web.sh builds it) in headless Chromium. Registered only where
# emscripten and chromium are installed: elsewhere the desktop build and its tests are unchanged.
# Each test serves the site on 127.0.0.1, loads the page with the window's options as URL
# parameters, screenshots it and, where it says --cli, compares the engine's numbers with
# kvscope-cli's (web/check_page.py). A site not built yet: the tests are skipped (77), saying so.
find_program(KVSCOPE_EMCC emcc)
find_program(KVSCOPE_CHROMIUM NAMES chromium chromium-browser)
find_package(Python3 COMPONENTS Interpreter)
set(KVSCOPE_WEB_SITE "${CMAKE_SOURCE_DIR}/build-web/site" CACHE PATH
    "The site scripts/web.sh built, for ctest -L web")
if(NOT KVSCOPE_EMCC OR NOT KVSCOPE_CHROMIUM OR NOT Python3_Interpreter_FOUND)
  message(STATUS "Web tests (ctest -L web) not registered: they need emscripten, chromium and "
                 "python3 (scripts/web.sh installs them)")
  return()
endif()

function(kvscope_web_test name params)
  add_test(NAME web_${name}
    COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/web/check_page.py
            --site ${KVSCOPE_WEB_SITE} --chromium ${KVSCOPE_CHROMIUM}
            --out ${CMAKE_BINARY_DIR}/web-screenshots/${name}.png --params ${params} ${ARGN})
  # One Chromium at a time: each renders on the CPU (SwiftShader) and the machine is small.
  set_tests_properties(web_${name} PROPERTIES LABELS web SKIP_RETURN_CODE 77 RUN_SERIAL ON
                       TIMEOUT 300)
endfunction()

set(_cli --cli $<TARGET_FILE:kvscope-cli>)
# The toy: the tutorials' sentence, prefill and three decode steps.
kvscope_web_test(toy "model=toy&prompt=Today%20weather%20is%20so&decode=3" ${_cli})
# The default model (in the page's data) in compare mode: both sessions against the CLI.
kvscope_web_test(default_compare
  "model=default&cache=compare&prompt=Once%20upon%20a%20time&decode=8" ${_cli})
# A lesson in Chinese: the lesson file and the Chinese font are in the page.
kvscope_web_test(lesson_zh "lang=zh&lesson=4&lesson-step=2")
