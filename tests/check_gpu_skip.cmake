# check_gpu_skip.cmake - runs one test of a GPU test binary (EXE, FILTER) as
# ctest runs it (--verbose) and checks that ctest's skip rule for GPU tests
# (SKIP_REGULAR_EXPRESSION NOTHING_TESTED, tests/CMakeLists.txt) counts it as
# what it did: skipped, with the reason in the output, when there is no
# usable GPU; run (not skipped) when there is one.
#   cmake -DEXE=... -DFILTER=suite/test -DNOTHING_TESTED=regex -P check_gpu_skip.cmake
execute_process(COMMAND ${EXE} --verbose --filter ${FILTER} OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
string(REGEX MATCH "\\[SKIP\\] [^\n]*: no GPU to test on[^\n]*" reason "${out}")
if(reason)
  if(NOT out MATCHES "${NOTHING_TESTED}")
    message(FATAL_ERROR "ctest would count a GPU test that skipped (${reason}) as passed: its output does not "
                        "match '${NOTHING_TESTED}':\n${out}")
  endif()
  message(STATUS "skipped, and ctest counts it so: ${reason}")
elseif(out MATCHES "${NOTHING_TESTED}")
  message(FATAL_ERROR "the test ran on a GPU, yet ctest would count it as skipped:\n${out}")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --filter ${FILTER} failed (${rc}):\n${out}")
else()
  message(STATUS "ran on a GPU, and ctest counts it as run")
endif()
