# One CTest test per GoogleTest suite of a test program (tests/CMakeLists.txt says why). Run after
# the program is linked (a POST_BUILD step, as gtest_discover_tests runs its discovery):
#   cmake -DPROGRAM=<program> -DNAME=<target> -DOUT=<file to write> -DWORKDIR=<dir>
#         -DLABELS=<a;b> -DCASE_TIMEOUT=<s> -DPER_CASE_SECONDS=<s> -DSERIAL=<regex or "">
#         -DSKIP_CODE=<exit code> -DLIST_TIMEOUT=<s> -P discover_suites.cmake
# Lists the program's cases (--gtest_list_tests) and writes OUT, a CTest script that adds, for
# each suite S with at least one enabled case, the test "<NAME>.<S>" running
# `<program> --gtest_filter=<S>.*` in WORKDIR, with:
#   LABELS       LABELS (every one: this script writes the list itself);
#   TIMEOUT      CASE_TIMEOUT + PER_CASE_SECONDS x (cases - 1): one case may take the whole
#                timeout of a case, the others a few seconds each (a hang still fails the suite,
#                by name, in bounded time);
#   SKIP_RETURN_CODE and ENVIRONMENT CUHAL_GTEST_SKIP_EXIT_CODE=SKIP_CODE: a suite whose every case
#                skipped (real tests without a GPU) is reported as skipped (tests/support/test_main.cc);
#   RUN_SERIAL   when one of its cases' full names matches SERIAL;
#   COST         its number of cases: with no timing history (a fresh clone in CI) ctest -j starts
#                the larger suites first, so that a long one does not run alone at the end.
# It also sets <NAME>_TESTS to the list of tests added, as gtest_discover_tests does.
foreach(var PROGRAM NAME OUT WORKDIR CASE_TIMEOUT PER_CASE_SECONDS SKIP_CODE LIST_TIMEOUT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "discover_suites.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${PROGRAM}" --gtest_list_tests
                WORKING_DIRECTORY "${WORKDIR}"
                TIMEOUT ${LIST_TIMEOUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_VARIABLE errors)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "discover_suites.cmake: '${PROGRAM} --gtest_list_tests' failed (${rc}):\n"
                      "${listing}\n${errors}")
endif()

# The listing: "Suite." lines (an optional "  # TypeParam = ..." after them), then one indented
# line per case ("  Case" or "  Case/0  # GetParam() = ..."). Other lines (a program's own
# output before the listing) are ignored.
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
set(current "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([A-Za-z_][A-Za-z0-9_/]*)\\.( *#.*)?$")
    set(current "${CMAKE_MATCH_1}")
    continue()
  endif()
  if(current STREQUAL "" OR NOT line MATCHES "^  ([A-Za-z0-9_/]+)")
    continue()
  endif()
  set(case_name "${CMAKE_MATCH_1}")
  if(current MATCHES "^DISABLED_|/DISABLED_" OR case_name MATCHES "^DISABLED_")
    continue()
  endif()
  string(MAKE_C_IDENTIFIER "${current}" key)
  if(NOT DEFINED count_${key})
    list(APPEND suites "${current}")
    set(count_${key} 0)
    set(serial_${key} FALSE)
  endif()
  math(EXPR count_${key} "${count_${key}} + 1")
  if(NOT "${SERIAL}" STREQUAL "" AND "${current}.${case_name}" MATCHES "${SERIAL}")
    set(serial_${key} TRUE)
  endif()
endforeach()

set(script "# Written by tests/discover_suites.cmake from '${PROGRAM} --gtest_list_tests'.\n")
set(names "")
foreach(suite IN LISTS suites)
  string(MAKE_C_IDENTIFIER "${suite}" key)
  set(test "${NAME}.${suite}")
  math(EXPR timeout "${CASE_TIMEOUT} + ${PER_CASE_SECONDS} * (${count_${key}} - 1)")
  string(APPEND script
    "add_test([==[${test}]==] [==[${PROGRAM}]==] [==[--gtest_filter=${suite}.*]==])\n"
    "set_tests_properties([==[${test}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKDIR}]==]"
    " LABELS [==[${LABELS}]==] TIMEOUT ${timeout} SKIP_RETURN_CODE ${SKIP_CODE}"
    " ENVIRONMENT [==[CUHAL_GTEST_SKIP_EXIT_CODE=${SKIP_CODE}]==] COST ${count_${key}})\n")
  if(serial_${key})
    string(APPEND script "set_tests_properties([==[${test}]==] PROPERTIES RUN_SERIAL TRUE)\n")
  endif()
  list(APPEND names "${test}")
endforeach()
if(names STREQUAL "")
  message(FATAL_ERROR "discover_suites.cmake: '${PROGRAM} --gtest_list_tests' lists no test")
endif()
string(APPEND script "set(${NAME}_TESTS [==[${names}]==])\n")
file(WRITE "${OUT}" "${script}")
