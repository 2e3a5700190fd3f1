# cmake -DAPI_DIR=<build>/api -DTESTS_DIR=<source>/tests -DOUTPUT=<md> [-DCHECKED_IN=<md>]
#       -P api_coverage.cmake
# Writes docs/api_coverage.md (the build's copy; the target api_coverage runs this, the test
# api_coverage_doc_is_current passes CHECKED_IN=docs/api_coverage.md, which must equal it).
#
# Reads what cmake/api_fallbacks.cmake wrote in API_DIR: cuda_modelled.txt (the drop-in
# libcuda.so.1 and cuhal::fakecuda: the same objects), nccl_dropin_modelled.txt (libnccl.so.2)
# and nccl_modelled.txt (cuhal::fakenccl), one line per symbol "<symbol> <kind> <plain> <status>",
# and the header versions (*_declared.txt.version). Scans the test sources under TESTS_DIR (*.cc,
# *.h, *.cmake, *.sh, CMakeLists.txt) for the files that name each entry point: a current or
# per-thread symbol is named by its symbol or (current) by the plain name callers write; an
# older ABI (cuMemAlloc, the plain name of cuMemAlloc_v2) only by a dlsym of its quoted name
# (dlsym(handle, "cuMemAlloc")): elsewhere that name means the current entry point.
# A file naming an entry point does not prove it tests it.
foreach(var API_DIR TESTS_DIR OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "api_coverage.cmake: -D${var}= is required")
  endif()
endforeach()

# --- the test sources ---
file(GLOB_RECURSE test_files RELATIVE ${TESTS_DIR} ${TESTS_DIR}/*.cc ${TESTS_DIR}/*.h
     ${TESTS_DIR}/*.cmake ${TESTS_DIR}/*.sh ${TESTS_DIR}/*CMakeLists.txt)
list(SORT test_files)
foreach(rel IN LISTS test_files)
  file(READ ${TESTS_DIR}/${rel} text)
  string(REGEX MATCHALL "p?(cu|nccl)[A-Za-z0-9_]+" tokens "${text}")
  string(REGEX MATCHALL "dlsym\\([^,;()]*, *\"p?(cu|nccl)[A-Za-z0-9_]+\"\\)" quoted "${text}")
  list(REMOVE_DUPLICATES tokens)
  list(REMOVE_DUPLICATES quoted)
  foreach(token IN LISTS tokens)
    list(APPEND named_${token} "tests/${rel}")
  endforeach()
  foreach(token IN LISTS quoted)
    string(REGEX REPLACE "^.*\"(.*)\"\\)$" "\\1" token "${token}")
    list(APPEND quoted_${token} "tests/${rel}")
  endforeach()
endforeach()

# The files naming one row's entry point, as a Markdown cell, in ${out}.
function(named_by out symbol kind plain)
  set(files "")
  if(kind STREQUAL "older" OR kind STREQUAL "extra")
    list(APPEND files ${quoted_${symbol}})
  else()
    list(APPEND files ${named_${symbol}})
    if(kind STREQUAL "current")
      list(APPEND files ${named_${plain}})
    endif()
  endif()
  list(REMOVE_DUPLICATES files)
  list(SORT files)
  string(JOIN ", " cell ${files})
  set(${out} "${cell}" PARENT_SCOPE)
endfunction()

function(read_version out file)
  set(version "unknown")
  if(EXISTS ${file})
    file(STRINGS ${file} version LIMIT_COUNT 1)
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()
read_version(cuda_version ${API_DIR}/cuda_declared.txt.version)
read_version(nccl_version ${API_DIR}/nccl_declared.txt.version)

set(kind_text_current "current")
set(kind_text_per_thread "per-thread")
set(kind_text_older "older ABI")
set(kind_text_extra "older ABI (not in cuda.h)")

# --- cuda.h ---
file(STRINGS ${API_DIR}/cuda_modelled.txt cuda_rows)
set(cuda_table "")
foreach(kind IN ITEMS current per_thread older extra)
  set(total_${kind} 0)
  set(modelled_${kind} 0)
  set(tested_${kind} 0)
endforeach()
foreach(row IN LISTS cuda_rows)
  string(REPLACE " " ";" fields "${row}")
  list(GET fields 0 symbol)
  list(GET fields 1 kind)
  list(GET fields 2 plain)
  list(GET fields 3 status)
  math(EXPR total_${kind} "${total_${kind}} + 1")
  if(status STREQUAL "modelled")
    math(EXPR modelled_${kind} "${modelled_${kind}} + 1")
    set(status_text "modelled")
  else()
    set(status_text "fallback: not modelled, answers CUDA_ERROR_NOT_SUPPORTED")
  endif()
  named_by(tests ${symbol} ${kind} ${plain})
  if(tests)
    math(EXPR tested_${kind} "${tested_${kind}} + 1")
  endif()
  string(APPEND cuda_table
         "| `${symbol}` | `${plain}` | ${kind_text_${kind}} | ${status_text} | ${tests} |\n")
endforeach()
set(cuda_totals "")
set(all_total 0)
set(all_modelled 0)
foreach(kind IN ITEMS current per_thread older extra)
  math(EXPR fallback "${total_${kind}} - ${modelled_${kind}}")
  math(EXPR all_total "${all_total} + ${total_${kind}}")
  math(EXPR all_modelled "${all_modelled} + ${modelled_${kind}}")
  string(APPEND cuda_totals "| ${kind_text_${kind}} | ${total_${kind}} | ${modelled_${kind}} | ${fallback} | ${tested_${kind}} |\n")
endforeach()
math(EXPR all_fallback "${all_total} - ${all_modelled}")
string(APPEND cuda_totals "| all exported by libcuda.so.1 | ${all_total} | ${all_modelled} | ${all_fallback} | |\n")

# --- nccl.h ---
file(STRINGS ${API_DIR}/nccl_dropin_modelled.txt nccl_rows)
file(STRINGS ${API_DIR}/nccl_modelled.txt static_rows)
foreach(row IN LISTS static_rows)
  string(REPLACE " " ";" fields "${row}")
  list(GET fields 0 symbol)
  list(GET fields 3 status)
  set(static_${symbol} ${status})
endforeach()
set(nccl_table "")
foreach(part IN ITEMS nccl pnccl)
  set(total_${part} 0)
  set(modelled_${part} 0)
  set(static_modelled_${part} 0)
endforeach()
foreach(row IN LISTS nccl_rows)
  string(REPLACE " " ";" fields "${row}")
  list(GET fields 0 symbol)
  list(GET fields 1 kind)
  list(GET fields 3 status)
  set(part nccl)
  if(symbol MATCHES "^pnccl")
    set(part pnccl)
  endif()
  math(EXPR total_${part} "${total_${part}} + 1")
  if(status STREQUAL "modelled")
    math(EXPR modelled_${part} "${modelled_${part}} + 1")
    set(status_text "modelled")
  else()
    set(status_text "fallback: not modelled, answers ncclInvalidUsage")
  endif()
  if(NOT DEFINED static_${symbol})
    set(static_text "not built (profiling alias)")
  elseif(static_${symbol} STREQUAL "modelled")
    math(EXPR static_modelled_${part} "${static_modelled_${part}} + 1")
    set(static_text "modelled")
  else()
    set(static_text "fallback")
  endif()
  named_by(tests ${symbol} current ${symbol})
  string(APPEND nccl_table "| `${symbol}` | ${status_text} | ${static_text} | ${tests} |\n")
endforeach()
math(EXPR fallback_nccl "${total_nccl} - ${modelled_nccl}")
math(EXPR fallback_pnccl "${total_pnccl} - ${modelled_pnccl}")

set(text "# API coverage of fakecuda and fakenccl

Generated: do not edit. `cmake --build --preset release --target api_coverage` writes it to
`build/release/api/api_coverage.md` (cmake/api_coverage.cmake) and `--target api_coverage_update`
copies it here; the test `api_coverage_doc_is_current` fails when this file differs from it.

Every function `cuda.h` (CUDA_VERSION ${cuda_version}; with it `cudaProfiler.h`, whose
cuProfiler* libcuda also exports, listed under cuda.h below) and `nccl.h` (NCCL_VERSION_CODE
${nccl_version}) declare, as the compiler preprocesses them (cmake/CuhalApiSurface.cmake), is
exported by the drop-ins `libcuda.so.1` and `libnccl.so.2`; `cuGetProcAddress` resolves every
plain name of `cuda.h` and `cudaProfiler.h`. An entry point is **modelled** when fakecuda's or
fakenccl's objects define it (listed by `nm` at build time); every other one is a generated
**fallback** that reads no argument and answers as a driver without the feature would
(fakecuda/entry/fallback.h, fakenccl/fallback.h): CUDA_ERROR_NOT_INITIALIZED before `cuInit`,
else CUDA_ERROR_NOT_SUPPORTED (counted, and failed on request, by FAKECUDA_FAULTS under its
plain name); ncclInvalidUsage with the last-error text \"not modelled by fakenccl\". A fallback
is not what the H200 answers (UNMEASURED). Kinds: *current* is the symbol plain `cuda.h` maps
the name to; *per-thread* the `_ptds`/`_ptsz` symbol of CUDA_API_PER_THREAD_DEFAULT_STREAM;
*older ABI* the plain name of a versioned entry point, which the real driver still exports;
*older ABI (not in cuda.h)* an older ABI fakecuda defines that the header does not declare.
\"Tests naming it\" lists the files under tests/ that contain the symbol or (current) the plain
name, or (older ABIs) a `dlsym` of the quoted name: a scan of the sources, not a proof that a
test exercises it.

## Totals

| cuda.h | symbols | modelled | fallback | named by a test |
|---|---|---|---|---|
${cuda_totals}
| nccl.h | symbols | modelled in libnccl.so.2 | fallback | modelled in cuhal::fakenccl |
|---|---|---|---|---|
| nccl* | ${total_nccl} | ${modelled_nccl} | ${fallback_nccl} | ${static_modelled_nccl} |
| pnccl* (profiling aliases) | ${total_pnccl} | ${modelled_pnccl} | ${fallback_pnccl} | not built |

## cuda.h

| symbol | name | kind | status | tests naming it |
|---|---|---|---|---|
${cuda_table}
## nccl.h

| symbol | libnccl.so.2 | cuhal::fakenccl | tests naming it |
|---|---|---|---|
${nccl_table}")
file(WRITE ${OUTPUT} "${text}")

# The test api_coverage_doc_is_current: the checked-in copy must equal the one just written.
if(DEFINED CHECKED_IN)
  set(fix "run `cmake --build --preset release --target api_coverage_update` (it regenerates \
the table and copies it to docs/api_coverage.md) and commit the result")
  if(NOT EXISTS ${CHECKED_IN})
    message(FATAL_ERROR "${CHECKED_IN} is missing: ${fix}")
  endif()
  file(READ ${CHECKED_IN} checked_in)
  if(NOT checked_in STREQUAL text)
    # The rows that differ, in the log (a CI log is often all one has): diff's first 4000 bytes.
    set(rows "")
    find_program(diff_program diff)
    if(diff_program)
      execute_process(COMMAND ${diff_program} ${CHECKED_IN} ${OUTPUT} OUTPUT_VARIABLE rows
                      ERROR_QUIET)
      string(SUBSTRING "${rows}" 0 4000 rows)
      set(rows "\ndiff checked-in generated:\n${rows}")
    endif()
    message(FATAL_ERROR "${CHECKED_IN} differs from the generated table ${OUTPUT} (an entry "
            "point became modelled or a fallback, cuda.h or nccl.h changed, or a test started "
            "or stopped naming one): ${fix}${rows}")
  endif()
  message(STATUS "${CHECKED_IN} is current")
endif()
