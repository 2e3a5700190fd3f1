# The API surface of cuda.h and nccl.h as the compiler sees it, and the fallbacks that make the
# drop-ins export all of it (docs/api_coverage.md says what is modelled and what falls back).
#
# cuhal_api_declarations(<out_file> HEADER <header>... PREFIXES <p>... [PER_THREAD]
#                        [VERSION_MACRO <macro>])
#   At configure time, preprocesses `#include <header>` of each HEADER (in order) with the C++
#   compiler (the same include directories as cuhal::cuda_headers; the driver API is cuda.h and
#   cudaProfiler.h, whose cuProfilerStart/Stop libcuda exports and cuGetProcAddress resolves like
#   the rest) and writes every function they declare whose name starts
#   with one of PREFIXES to <out_file>, one line each: "<symbol> <kind> <plain> <return>", where
#   <symbol> is the name after cuda.h's macros (cuMemAlloc_v2), <plain> the name callers write
#   and cuGetProcAddress is asked for (cuMemAlloc), <return> CUresult, ncclResult_t, const_char_ptr
#   or void, and <kind> one of
#     current     declared by the plain preprocessing;
#     per_thread  declared only under CUDA_API_PER_THREAD_DEFAULT_STREAM (PER_THREAD given):
#                 the _ptds/_ptsz variants;
#     older       a plain name that cuda.h maps to a versioned symbol (#define cuMemAlloc
#                 cuMemAlloc_v2): the older ABI the real driver still exports under the plain
#                 name (CUDA 13.0's libcuda.so exports cuMemAlloc, cuCtxCreate, ...). The older
#                 per-thread variants (cuStreamBeginCapture_ptsz) and the intermediate versions
#                 (cuCtxCreate_v3) cannot be derived from the header and are not listed.
#   VERSION_MACRO: also writes the header's value of <macro> (CUDA_VERSION) to <out_file>.version.
#   Re-runs when the header changes (CMAKE_CONFIGURE_DEPENDS).
#
# cuhal_api_fallbacks(TARGET <target> API <cuda|nccl> DECLARED <file> OBJECTS <objlib>...
#                     OUTPUT <cc> MODELLED <list file> [EXCLUDE <regex>])
#   At build time, lists the entry points the objects of <objlib>... define (nm), writes them to
#   <list file>, generates <cc> with a fallback definition for every declared entry point that is
#   not defined, and adds <cc> to <target> (cmake/api_fallbacks.cmake has the details).

function(cuhal_api_declarations out_file)
  cmake_parse_arguments(ARG "PER_THREAD" "VERSION_MACRO" "HEADER;PREFIXES" ${ARGN})
  get_target_property(include_dirs cuhal::cuda_headers INTERFACE_INCLUDE_DIRECTORIES)
  set(include_flags "")
  foreach(dir IN LISTS include_dirs)
    list(APPEND include_flags "-I${dir}")
  endforeach()
  set(work_dir ${CMAKE_CURRENT_BINARY_DIR}/api_surface)
  list(GET ARG_HEADER 0 first_header)
  string(MAKE_C_IDENTIFIER "${first_header}" stem)
  set(source ${work_dir}/${stem}.cc)
  set(includes "")
  foreach(header IN LISTS ARG_HEADER)
    string(APPEND includes "#include <${header}>\n")
    set(header_path "")
    foreach(dir IN LISTS include_dirs)
      if(NOT header_path AND EXISTS "${dir}/${header}")
        set(header_path "${dir}/${header}")
      endif()
    endforeach()
    if(NOT header_path)
      message(FATAL_ERROR "cuhal_api_declarations: ${header} not found in ${include_dirs}")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header_path})
  endforeach()
  file(WRITE ${source} "${includes}")

  string(JOIN "|" prefix_regex ${ARG_PREFIXES})
  # Declarations: "<return type> <name>(", on one line once the newlines are spaces.
  set(decl_regex "(CUresult|ncclResult_t|const char ?\\*|void) +((${prefix_regex})[A-Za-z0-9_]*) *\\(")
  set(variants plain)
  if(ARG_PER_THREAD)
    list(APPEND variants per_thread)
  endif()
  foreach(variant IN LISTS variants)
    set(defines "")
    if(variant STREQUAL "per_thread")
      set(defines -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1)
    endif()
    execute_process(
      COMMAND ${CMAKE_CXX_COMPILER} -E -P -x c++ ${include_flags} ${defines} ${source}
      OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "cuhal_api_declarations: preprocessing ${ARG_HEADER} failed: ${err}")
    endif()
    string(REPLACE "\n" " " text "${text}")
    string(REGEX MATCHALL "${decl_regex}" decls "${text}")
    set(names_${variant} "")
    foreach(decl IN LISTS decls)
      string(REGEX MATCH "${decl_regex}" unused "${decl}")
      set(name "${CMAKE_MATCH_2}")
      set(type "${CMAKE_MATCH_1}")
      if(type MATCHES "char")
        set(type const_char_ptr)
      endif()
      if(NOT DEFINED return_${name})
        set(return_${name} ${type})
        list(APPEND names_${variant} ${name})
      endif()
    endforeach()
  endforeach()
  if(NOT names_plain)
    message(FATAL_ERROR "cuhal_api_declarations: found no declarations in ${ARG_HEADER}")
  endif()

  # The macros that map plain names to symbols: "#define P S", "#define P __CUDA_API_PTDS(S)".
  execute_process(
    COMMAND ${CMAKE_CXX_COMPILER} -E -dM -x c++ ${include_flags} ${source}
    OUTPUT_VARIABLE macros RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cuhal_api_declarations: preprocessing ${ARG_HEADER} failed: ${err}")
  endif()
  string(REPLACE "\n" ";" macro_lines "${macros}")
  if(ARG_VERSION_MACRO)
    set(version "unknown")
    foreach(line IN LISTS macro_lines)
      if(line MATCHES "^#define ${ARG_VERSION_MACRO} ([0-9]+)$")
        set(version ${CMAKE_MATCH_1})
      endif()
    endforeach()
    file(CONFIGURE OUTPUT ${out_file}.version CONTENT "${version}\n" @ONLY)
  endif()
  set(older "")
  foreach(line IN LISTS macro_lines)
    if(NOT line MATCHES "^#define ((${prefix_regex})[A-Za-z0-9_]*) (__CUDA_API_(PTDS|PTSZ)\\()?((${prefix_regex})[A-Za-z0-9_]*)\\)?$")
      continue()
    endif()
    set(plain "${CMAKE_MATCH_1}")
    set(symbol "${CMAKE_MATCH_5}")
    set(suffix "")
    if(CMAKE_MATCH_4)
      string(TOLOWER "_${CMAKE_MATCH_4}" suffix)
    endif()
    set(plain_of_${symbol} ${plain})
    if(suffix)
      set(plain_of_${symbol}${suffix} ${plain})
    endif()
    if(NOT plain STREQUAL symbol AND DEFINED return_${symbol} AND NOT DEFINED return_${plain})
      list(APPEND older ${plain})
      set(return_${plain} ${return_${symbol}})
      set(plain_of_${plain} ${plain})
    endif()
  endforeach()

  set(lines "")
  foreach(name IN LISTS names_plain)
    set(plain ${name})
    if(DEFINED plain_of_${name})
      set(plain ${plain_of_${name}})
    endif()
    list(APPEND lines "${name} current ${plain} ${return_${name}}")
  endforeach()
  foreach(name IN LISTS names_per_thread)
    set(plain ${name})
    if(DEFINED plain_of_${name})
      set(plain ${plain_of_${name}})
    else()
      # Declared only under CUDA_API_PER_THREAD_DEFAULT_STREAM without a macro for it.
      string(REGEX REPLACE "_(ptds|ptsz)$" "" base "${name}")
      if(DEFINED plain_of_${base})
        set(plain ${plain_of_${base}})
      else()
        set(plain ${base})
      endif()
    endif()
    list(APPEND lines "${name} per_thread ${plain} ${return_${name}}")
  endforeach()
  foreach(name IN LISTS older)
    list(APPEND lines "${name} older ${name} ${return_${name}}")
  endforeach()
  list(SORT lines)
  string(JOIN "\n" content ${lines})
  file(CONFIGURE OUTPUT ${out_file} CONTENT "${content}\n" @ONLY)
endfunction()

function(cuhal_api_fallbacks)
  cmake_parse_arguments(ARG "" "TARGET;API;DECLARED;OUTPUT;MODELLED;EXCLUDE" "OBJECTS" ${ARGN})
  set(exclude "")
  if(ARG_EXCLUDE)
    set(exclude "-DEXCLUDE=${ARG_EXCLUDE}")
  endif()
  if(NOT CMAKE_NM)
    message(FATAL_ERROR "cuhal_api_fallbacks: no nm (CMAKE_NM) to list what ${ARG_TARGET} defines")
  endif()
  set(objects_file ${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}_api_objects.txt)
  set(object_list "")
  set(object_deps "")
  foreach(objlib IN LISTS ARG_OBJECTS)
    list(APPEND object_list "$<TARGET_OBJECTS:${objlib}>")
    list(APPEND object_deps ${objlib} "$<TARGET_OBJECTS:${objlib}>")
  endforeach()
  file(GENERATE OUTPUT ${objects_file} CONTENT "$<JOIN:${object_list},\n>\n")
  add_custom_command(
    OUTPUT ${ARG_OUTPUT} ${ARG_MODELLED}
    COMMAND ${CMAKE_COMMAND} -DAPI=${ARG_API} -DNM=${CMAKE_NM} -DOBJECTS=${objects_file}
            -DDECLARED=${ARG_DECLARED} -DOUTPUT=${ARG_OUTPUT} -DMODELLED=${ARG_MODELLED}
            ${exclude}
            -P ${PROJECT_SOURCE_DIR}/cmake/api_fallbacks.cmake
    DEPENDS ${object_deps} ${objects_file} ${ARG_DECLARED}
            ${PROJECT_SOURCE_DIR}/cmake/api_fallbacks.cmake
    COMMENT "Generating the ${ARG_API} fallbacks of ${ARG_TARGET}"
    VERBATIM)
  target_sources(${ARG_TARGET} PRIVATE ${ARG_OUTPUT})
endfunction()
