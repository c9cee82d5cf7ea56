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
# What the CPU backend says it runs on in the page (scripts/web.sh builds with SIMD128 unless
# KVSCOPE_WEB_SIMD=OFF).
set(KVSCOPE_WEB_DEVICE "WebAssembly, SIMD128" CACHE STRING
    "The page's backend line the web tests expect ('WebAssembly, no SIMD' without SIMD)")
# The toy: the tutorials' sentence, prefill and three decode steps; the site's size budget; and,
# at a laptop's, a projector's and a narrow viewport, the open button beside the canvas, not over
# it.
kvscope_web_test(toy "model=toy&prompt=Today%20weather%20is%20so&decode=3" ${_cli}
  --max-site-mb 15 --pixels --page-sizes=1280x800,1920x1080,800x600)
# The default model after its prefill alone: a lower triangle of the prompt's tokens, every KV
# column written by the one step.
kvscope_web_test(default_prefill "model=default&prompt=Once%20upon%20a%20time&prefill" ${_cli}
  --pixels)
# The default model (in the page's data) in compare mode: both sessions against the CLI, on the
# page's SIMD path (logits within 1e-5 of the desktop's).
# The page is 28 px taller than its window (the bar under the canvas): a 1280x800 window, as the
# desktop's screenshot tests draw this stage.
kvscope_web_test(default_compare
  "model=default&cache=compare&prompt=Once%20upon%20a%20time&decode=8" ${_cli}
  --expect-device ${KVSCOPE_WEB_DEVICE} --pixels --size 1280,828)
# Ctrl+S downloads a PNG of the page, as it saves one on the desktop.
kvscope_web_test(screenshot_download "model=toy&decode=1" --download)
# The bench parameter runs kvscope-cli bench's code in the page (one short length: the figures
# themselves are for docs/web.md, not for a test).
kvscope_web_test(bench "model=toy" "--bench=--model=default --lengths=32 --repeats=1 --warmup=0")
# The settings persist in localStorage: a second visit without parameters is in Chinese, on the
# toy.
kvscope_web_test(settings "model=toy&lang=zh" --settings)
# A user's llama2.c checkpoint from disk, through the page's file input.
set(_shared_models "${CMAKE_SOURCE_DIR}/../shared/models")
if(EXISTS "${_shared_models}/stories260K.bin" AND EXISTS "${_shared_models}/tok512.bin")
  kvscope_web_test(open_file "model=toy" ${_cli}
    --open "${_shared_models}/stories260K.bin,${_shared_models}/tok512.bin")
  # The same files dropped on the page (a drop event carrying them, as from a file manager).
  kvscope_web_test(drop_file "model=toy" ${_cli}
    --drop "${_shared_models}/stories260K.bin,${_shared_models}/tok512.bin")
  # 512 tokens in the cache: stories260K (its context is 512; in the page's data when ../shared
  # was there at its build), a 271-token prompt and 240 decode steps; still the CLI's numbers,
  # and the log has the frame time at that length.
  string(REPEAT "Lily%20went%20to%20the%20park.%20" 29 _long_prompt)
  string(APPEND _long_prompt "Lily%20went%20to%20the%20park.")
  # The logits reach 22 here, and the desktop's own SIMD paths differ by 9.5e-6 at this length
  # (sse against avx2, measured): the page is held to 3e-5 of the desktop's widest path.
  kvscope_web_test(stories_512 "model=stories260K&prompt=${_long_prompt}&decode=240" ${_cli}
    --expect-device ${KVSCOPE_WEB_DEVICE} --tol 3e-5)
endif()
# A K-quant GGUF (rows of 256: Q4_K matrices, kept as the file stores them, the page's scalar
# integer dot products), made by kvscope-cli afresh each run (make-model replaces no checkpoint), picked
# in the page's file input.
set(_kq "${CMAKE_BINARY_DIR}/web-kquant")
add_test(NAME web_kquant_file
  COMMAND sh -c "rm -rf '${_kq}' && mkdir -p '${_kq}' && \"$0\" make-model --out '${_kq}/k.bin' --dim 256 --hidden 256 --layers 1 --heads 4 --vocab 300 --seq-len 64 >/dev/null && \"$0\" export --model '${_kq}/k.bin' --gguf '${_kq}/k-q4_k.gguf' --type q4_k >/dev/null"
          $<TARGET_FILE:kvscope-cli>)
set_tests_properties(web_kquant_file PROPERTIES LABELS web FIXTURES_SETUP web_kquant)
kvscope_web_test(open_kquant "model=toy" ${_cli} --open "${_kq}/k-q4_k.gguf")
set_tests_properties(web_open_kquant PROPERTIES FIXTURES_REQUIRED web_kquant)
# The Serving view (key V): the built-in eight prompts after 12 scheduler steps, the scheduler
# run a step per frame in the page.
kvscope_web_test(serving "model=default&serve-steps=12" --serving 12)
# A lesson in Chinese: the lesson file and the Chinese font are in the page.
kvscope_web_test(lesson_zh "lang=zh&lesson=4&lesson-step=2")
# The page as one file (scripts/web.sh --single-file), opened from file:// with no server: the
# WebAssembly, the data package (the default model, the lessons, the fonts) inside it. Both
# sessions against the CLI with the pixels checked, and a lesson in Chinese (the cut font inside).
set(KVSCOPE_WEB_SINGLE_FILE "${CMAKE_SOURCE_DIR}/build-web/kvscope.html" CACHE FILEPATH
    "The one-file page scripts/web.sh --single-file built, for ctest -L web")
add_test(NAME web_single_file_compare
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/web/check_page.py
          --file ${KVSCOPE_WEB_SINGLE_FILE} --chromium ${KVSCOPE_CHROMIUM}
          --out ${CMAKE_BINARY_DIR}/web-screenshots/single_file_compare.png
          --params "model=default&cache=compare&prompt=Once%20upon%20a%20time&decode=8"
          ${_cli} --pixels --size 1280,828 --max-site-mb 20)
add_test(NAME web_single_file_lesson_zh
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/web/check_page.py
          --file ${KVSCOPE_WEB_SINGLE_FILE} --chromium ${KVSCOPE_CHROMIUM}
          --out ${CMAKE_BINARY_DIR}/web-screenshots/single_file_lesson_zh.png
          --params "lang=zh&lesson=4&lesson-step=2")
set_tests_properties(web_single_file_compare web_single_file_lesson_zh PROPERTIES LABELS web
                     SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 300)
# The same file in Firefox, where it is installed (scripts/web.sh does not install it): on a virtual
# display, as headless Firefox has no WebGL without a GPU (web/check_firefox.py).
find_program(KVSCOPE_FIREFOX NAMES firefox-esr firefox)
find_program(KVSCOPE_XVFB Xvfb)
if(KVSCOPE_FIREFOX AND KVSCOPE_XVFB)
  add_test(NAME web_single_file_firefox
    COMMAND ${CMAKE_SOURCE_DIR}/tests/gui/with-xvfb.sh ${Python3_EXECUTABLE}
            ${CMAKE_SOURCE_DIR}/web/check_firefox.py --file ${KVSCOPE_WEB_SINGLE_FILE}
            --firefox ${KVSCOPE_FIREFOX}
            --out ${CMAKE_BINARY_DIR}/web-screenshots/single_file_firefox.png
            --params "model=toy&decode=3")
  set_tests_properties(web_single_file_firefox PROPERTIES LABELS web SKIP_RETURN_CODE 77
                       RUN_SERIAL ON TIMEOUT 300 ENVIRONMENT "KVSCOPE_XVFB_SCREEN=1280x900x24")
else()
  message(STATUS "web_single_file_firefox not registered: it needs firefox-esr and Xvfb")
endif()
