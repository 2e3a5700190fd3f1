# CUHAL_BUILD_LIBFUZZER: the libFuzzer targets of fuzz/libfuzzer (docs/fuzzing.md "libFuzzer").
# They need Clang, whose -fsanitize=fuzzer,address,undefined must link (Debian: the compiler-rt
# package of that Clang, libclang-rt-16-dev for clang-16; ci/install-deps installs it). When it
# does not, the option is turned off with a warning. When on, every library of the build is
# compiled with -fsanitize=fuzzer-no-link (coverage for libFuzzer) and address,undefined, so use
# a build directory of its own: the `libfuzzer` preset, which builds only the fuzz targets and
# the sources they need.
if(NOT CUHAL_BUILD_LIBFUZZER)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(WARNING "CUHAL_BUILD_LIBFUZZER needs Clang (the compiler is ${CMAKE_CXX_COMPILER_ID});"
                  " the libFuzzer targets are not built")
  set(CUHAL_BUILD_LIBFUZZER OFF)
  return()
endif()
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address,undefined")
check_cxx_source_compiles([[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }
]] CUHAL_LIBFUZZER_LINKS)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT CUHAL_LIBFUZZER_LINKS)
  message(WARNING "CUHAL_BUILD_LIBFUZZER: ${CMAKE_CXX_COMPILER} cannot link "
                  "-fsanitize=fuzzer,address,undefined (is the compiler-rt package of this Clang "
                  "installed? Debian: libclang-rt-<version>-dev); the libFuzzer targets are not built")
  set(CUHAL_BUILD_LIBFUZZER OFF)
  return()
endif()
if(CUHAL_SANITIZE STREQUAL "")
  set(CUHAL_SANITIZE "address,undefined")
elseif(NOT CUHAL_SANITIZE STREQUAL "address,undefined")
  message(FATAL_ERROR "CUHAL_BUILD_LIBFUZZER runs with CUHAL_SANITIZE=address,undefined, "
                      "not '${CUHAL_SANITIZE}'")
endif()
add_compile_options(-fsanitize=fuzzer-no-link)
