# Checks that the kRequired/kOptional mark of every entry of core/symbols/cuda_symbols.inc and
# nccl_symbols.inc matches what the device core calls:
#   cmake -DSOURCE_DIR=<repository root> -P check_symbol_marks.cmake
# An entry counts as called by core/ when a source file of core/ (comments removed; the lists
# themselves and symbol_tables.cc, which expand every entry, left out) uses it as a table member
# (`api.cuX`, `api->cuX`), through the checking macros (`CUHAL_CU(api, cuX, ...)`,
# `CUHAL_NCCL(api, ncclX, ...)`), as a handle's destroy function (`CUHAL_CUDA_HANDLE_TRAITS(...,
# cuX)`), or by name in the real loader before the table exists (`Symbol("ncclX")`,
# `Find("cuX")`). Fails, naming them, for a kRequired entry that core/ does not call (a driver
# without it would be refused for nothing) and for a kOptional entry that it does call (a driver
# without it would be accepted and then fail).
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository root> -P check_symbol_marks.cmake")
endif()

file(GLOB_RECURSE core_files "${SOURCE_DIR}/core/*.cc" "${SOURCE_DIR}/core/*.h")
list(FILTER core_files EXCLUDE REGEX "/core/symbols/symbol_tables\\.cc$")
set(code "")
foreach(file IN LISTS core_files)
  file(READ "${file}" text)
  string(REGEX REPLACE "//[^\n]*" "" text "${text}")
  string(APPEND code "${text}\n")
endforeach()

set(ident "(cu|nccl)[A-Z][A-Za-z0-9_]*")
set(called "")
foreach(pattern IN ITEMS
    "(\\.|->)${ident}"
    "CUHAL_(CU|NCCL)\\([^,()]*(\\([^()]*\\))?[^,()]*, *${ident}"
    "CUHAL_CUDA_HANDLE_TRAITS\\([^)]*, *${ident}\\)"
    "(Symbol|Find)\\(\"${ident}\"\\)")
  string(REGEX MATCHALL "${pattern}" uses "${code}")
  foreach(use IN LISTS uses)
    string(REGEX MATCH "${ident}[^A-Za-z0-9_]*$" name "${use}")
    string(REGEX REPLACE "[^A-Za-z0-9_]+$" "" name "${name}")
    list(APPEND called "${name}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES called)
# Not a use of the table entry: the real loader dlsyms the legacy resolver by this name (after
# cuGetProcAddress_v2) to fill the table; the table's own cuGetProcAddress slot is for callers.
list(REMOVE_ITEM called cuGetProcAddress)

set(problems "")
set(entries 0)
foreach(list_file IN ITEMS cuda_symbols.inc nccl_symbols.inc)
  file(STRINGS "${SOURCE_DIR}/core/symbols/${list_file}" lines
       REGEX "^CUHAL_(CU|NCCL)_PFN\\(")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^CUHAL_(CU|NCCL)_PFN\\((kRequired|kOptional), *([A-Za-z0-9_]+),")
      string(APPEND problems "  ${list_file}: cannot read the line '${line}'\n")
      continue()
    endif()
    set(kind "${CMAKE_MATCH_2}")
    set(name "${CMAKE_MATCH_3}")
    math(EXPR entries "${entries} + 1")
    list(FIND called "${name}" index)
    if(kind STREQUAL "kRequired" AND index EQUAL -1)
      string(APPEND problems "  ${list_file}: ${name} is kRequired but core/ never calls it\n")
    elseif(kind STREQUAL "kOptional" AND NOT index EQUAL -1)
      string(APPEND problems "  ${list_file}: ${name} is kOptional but core/ calls it\n")
    endif()
  endforeach()
endforeach()

if(entries LESS 100)
  message(FATAL_ERROR "read only ${entries} entries from the lists: the check itself is broken")
endif()
if(problems)
  message(FATAL_ERROR "table entry marks disagree with what core/ calls "
                      "(fix the mark in core/symbols/*.inc):\n${problems}")
endif()
message(STATUS "${entries} entries: every kRequired one is called by core/, no kOptional one is")
