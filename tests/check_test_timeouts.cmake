# Checks that every CTest test of a build tree has a TIMEOUT (tests/CMakeLists.txt says why):
#   cmake -DCTEST=<ctest> -DBUILD_DIR=<build tree> -P check_test_timeouts.cmake
# Reads `ctest --show-only=json-v1`, which lists the discovered GoogleTest cases too. Fails naming
# the tests without one (or with TIMEOUT 0, which means none).
if(NOT CTEST OR NOT BUILD_DIR)
  message(FATAL_ERROR "usage: cmake -DCTEST=<ctest> -DBUILD_DIR=<dir> -P check_test_timeouts.cmake")
endif()
execute_process(COMMAND ${CTEST} --test-dir ${BUILD_DIR} --show-only=json-v1
                RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctest --show-only=json-v1 failed (${rc}): ${err}")
endif()
string(JSON count LENGTH "${json}" tests)
if(count LESS 2)
  message(FATAL_ERROR "ctest lists ${count} test(s): the check itself is broken")
endif()

# The fast path: as many positive TIMEOUT properties as tests.
string(REGEX MATCHALL "\"name\" *: *\"TIMEOUT\"[ \n\r\t]*,[ \n\r\t]*\"value\" *: *[1-9]" timeouts
       "${json}")
list(LENGTH timeouts with_timeout)
if(with_timeout EQUAL count)
  message(STATUS "${count} tests, each with a TIMEOUT")
  return()
endif()

# Otherwise name the tests that lack one.
set(missing "")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON test GET "${json}" tests ${i})
  string(JSON name GET "${test}" name)
  set(has_timeout FALSE)
  string(JSON property_count ERROR_VARIABLE no_properties LENGTH "${test}" properties)
  if(NOT no_properties AND property_count GREATER 0)
    math(EXPR last_property "${property_count} - 1")
    foreach(p RANGE ${last_property})
      string(JSON property_name GET "${test}" properties ${p} name)
      if(property_name STREQUAL "TIMEOUT")
        string(JSON value GET "${test}" properties ${p} value)
        if(value GREATER 0)
          set(has_timeout TRUE)
        endif()
      endif()
    endforeach()
  endif()
  if(NOT has_timeout)
    string(APPEND missing "  ${name}\n")
  endif()
endforeach()
message(FATAL_ERROR "${count} tests, ${with_timeout} with a TIMEOUT; without one (give it one: "
                    "cuhal_add_test's TIMEOUT or cuhal_set_test_timeout):\n${missing}")
