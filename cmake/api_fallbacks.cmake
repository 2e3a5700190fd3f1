# cmake -DAPI=<cuda|nccl> -DNM=<nm> -DOBJECTS=<file> -DDECLARED=<file> -DOUTPUT=<cc>
#       -DMODELLED=<file> [-DEXCLUDE=<regex>] -P api_fallbacks.cmake
# Build-time half of cmake/CuhalApiSurface.cmake (cuhal_api_fallbacks).
#
# Reads the entry points cuda.h or nccl.h declares (DECLARED, from cuhal_api_declarations) and the
# object files of the library that models them (OBJECTS: one path a line), and writes
#   MODELLED  one line per declared entry point, "<symbol> <kind> <plain> <status>" with status
#             `modelled` (an object defines the symbol) or `fallback`, then one line
#             "<symbol> extra <symbol> modelled" per entry point the objects define that the
#             header does not declare (older ABIs the code knows, e.g. cuCtxCreate_v3);
#   OUTPUT    a C++ source with a fallback definition of every declared entry point no object
#             defines, and (cuda) the table of every declared entry point that cuGetProcAddress
#             consults (fakecuda/entry/fallback.h) or (nccl) nothing more.
# A fallback is an extern "C" function under the entry point's symbol name (an asm label: the
# source does not include the header, so the parameter list need not match: the fallback reads
# no argument) that calls fakecuda::FallbackCall(<plain name>) / fakenccl::FallbackCall(<name>).
# Symbols matching EXCLUDE are left out entirely (fakenccl's static library has no pnccl*).
# Both files are rewritten on every run (the custom command runs when an object changes).
foreach(var API NM OBJECTS DECLARED OUTPUT MODELLED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "api_fallbacks.cmake: -D${var}= is required")
  endif()
endforeach()

if(API STREQUAL "cuda")
  set(prefix_regex "cu")
elseif(API STREQUAL "nccl")
  set(prefix_regex "p?nccl")
else()
  message(FATAL_ERROR "api_fallbacks.cmake: API must be cuda or nccl, not '${API}'")
endif()

file(STRINGS ${OBJECTS} objects)
# $<TARGET_OBJECTS> also names a target's precompiled header (cmake_pch.hxx.gch): not an object.
list(FILTER objects EXCLUDE REGEX "[.](gch|pch)$")
execute_process(COMMAND ${NM} --defined-only -g ${objects}
                OUTPUT_VARIABLE nm_out RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "api_fallbacks.cmake: ${NM} failed: ${err}")
endif()
string(REPLACE "\n" ";" nm_lines "${nm_out}")
set(defined "")
foreach(line IN LISTS nm_lines)
  if(line MATCHES " [TW] ((${prefix_regex})[A-Za-z0-9_]*)$")
    set(defined_${CMAKE_MATCH_1} TRUE)
    list(APPEND defined ${CMAKE_MATCH_1})
  endif()
endforeach()
list(REMOVE_DUPLICATES defined)

file(STRINGS ${DECLARED} declared)
set(modelled_lines "")
set(fallback_defs "")
set(api_decls "")
set(table_rows "")
set(count 0)
foreach(line IN LISTS declared)
  string(REPLACE " " ";" fields "${line}")
  list(GET fields 0 symbol)
  list(GET fields 1 kind)
  list(GET fields 2 plain)
  list(GET fields 3 ret)
  if(DEFINED EXCLUDE AND symbol MATCHES "${EXCLUDE}")
    continue()
  endif()
  set(declared_${symbol} TRUE)
  string(MAKE_C_IDENTIFIER "${symbol}" id)
  if(defined_${symbol})
    list(APPEND modelled_lines "${symbol} ${kind} ${plain} modelled")
    string(APPEND api_decls "void FakeApi_${id}() __asm__(\"${symbol}\");\n")
    set(modelled_flag true)
  else()
    list(APPEND modelled_lines "${symbol} ${kind} ${plain} fallback")
    set(modelled_flag false)
    if(API STREQUAL "cuda")
      string(APPEND api_decls "int FakeApi_${id}() __asm__(\"${symbol}\");\n")
      string(APPEND fallback_defs
             "int FakeApi_${id}() { return ::fakecuda::FallbackCall(\"${plain}\"); }\n")
    elseif(ret STREQUAL "void")
      string(APPEND api_decls "void FakeApi_${id}() __asm__(\"${symbol}\");\n")
      string(APPEND fallback_defs
             "void FakeApi_${id}() { (void)::fakenccl::FallbackCall(\"${plain}\"); }\n")
    elseif(ret STREQUAL "const_char_ptr")
      string(APPEND api_decls "const char* FakeApi_${id}() __asm__(\"${symbol}\");\n")
      string(APPEND fallback_defs
             "const char* FakeApi_${id}() { (void)::fakenccl::FallbackCall(\"${plain}\"); return \"\"; }\n")
    else()
      string(APPEND api_decls "int FakeApi_${id}() __asm__(\"${symbol}\");\n")
      string(APPEND fallback_defs
             "int FakeApi_${id}() { return ::fakenccl::FallbackCall(\"${plain}\"); }\n")
    endif()
  endif()
  if(API STREQUAL "cuda")
    string(APPEND table_rows
           "    {\"${plain}\", \"${symbol}\", ApiKind::k_${kind}, ${modelled_flag}, reinterpret_cast<void (*)()>(&FakeApi_${id})},\n")
  endif()
  math(EXPR count "${count} + 1")
endforeach()
foreach(symbol IN LISTS defined)
  if(NOT declared_${symbol} AND NOT (DEFINED EXCLUDE AND symbol MATCHES "${EXCLUDE}"))
    list(APPEND modelled_lines "${symbol} extra ${symbol} modelled")
  endif()
endforeach()
list(SORT modelled_lines)
string(JOIN "\n" modelled_text ${modelled_lines})
file(WRITE ${MODELLED} "${modelled_text}\n")

if(API STREQUAL "cuda")
  set(header "fakecuda/entry/fallback.h")
  set(table "
namespace fakecuda {
const ApiEntry kApiEntries[] = {
${table_rows}};
const int kApiEntryCount = ${count};
}  // namespace fakecuda
")
else()
  set(header "fakenccl/fallback.h")
  set(table "")
endif()
set(source "// Generated by cmake/api_fallbacks.cmake from ${DECLARED}: do not edit.
// The fallbacks of the entry points no object of the library defines, and (cuda) the table of
// every entry point the header declares.
#include \"${header}\"

extern \"C\" {
${api_decls}
${fallback_defs}}  // extern \"C\"
${table}")
file(WRITE ${OUTPUT} "${source}")
