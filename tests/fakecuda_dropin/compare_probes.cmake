# Runs probe_program (PROGRAM) on the drop-in (DROPIN_DIR) and compares its output with the real
# driver's (EXPECTED, '#' lines are comments). Probes that crashed the real driver are skipped.
file(STRINGS ${EXPECTED} expected REGEX "^[^#]")
set(skip "")
foreach(line IN LISTS expected)
  if(line MATCHES "^(.*): CRASH$")
    list(APPEND skip "${CMAKE_MATCH_1}")
  endif()
endforeach()
string(REPLACE ";" "," skip "${skip}")
# The race detector in report mode (not fail, whatever CI's environment says): the probes make
# odd call sequences on purpose, and one of them is racy (the graph's memset and memcpy nodes
# overlap with no edge between them); the answers must stay the real driver's, and the detector
# must find that race (a true positive on a program written for the real driver).
execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${DROPIN_DIR}
                        FAKECUDA_NOOP_KERNELS=* FAKECUDA_RACECHECK=report PROBE_SKIP=${skip}
                        ${PROGRAM}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}:\n${out}${err}")
endif()
if(NOT err MATCHES "fakecuda: race: cuGraphLaunch \\(memcpy node\\)[^\n]*graph node [0-9]+ reads[^\n]*cuGraphLaunch \\(memset node\\)[^\n]*graph node [0-9]+ writes")
  message(FATAL_ERROR "the race detector did not report the probes' racy graph (memset and "
                      "memcpy nodes with no edge) on stderr:\n${err}")
endif()
string(REGEX REPLACE "\n$" "" out "${out}")
string(REPLACE "\n" ";" actual "${out}")
list(LENGTH expected n_expected)
list(LENGTH actual n_actual)
set(diffs "")
math(EXPR last "${n_expected} - 1")
foreach(i RANGE ${last})
  list(GET expected ${i} want)
  set(got "(missing)")
  if(i LESS n_actual)
    list(GET actual ${i} got)
  endif()
  if(NOT want STREQUAL got)
    string(APPEND diffs "  real: ${want}\n  fake: ${got}\n")
  endif()
endforeach()
if(NOT n_actual EQUAL n_expected)
  string(APPEND diffs "  ${n_actual} lines from the fake, ${n_expected} from the real driver\n")
endif()
if(diffs)
  message(FATAL_ERROR "the fake answers differently from the real driver:\n${diffs}")
endif()
message("all ${n_expected} probes answered as on the real driver")
