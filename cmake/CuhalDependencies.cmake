# Dependencies. Each missing one stops configure with ONE message naming it and the command that
# installs it (ci/install-deps does all of them).
include(CuhalCudaHeaders)

set(CUHAL_APT_PACKAGES "libgtest-dev libgmock-dev libbenchmark-dev libtrompeloeil-cpp-dev nlohmann-json3-dev libcli11-dev")
macro(cuhal_require_package pkg debian)
  find_package(${pkg} ${ARGN} QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR "cuhal: missing dependency '${pkg}'. Install it with: "
      "sudo apt-get install -y ${debian}   (or all of cuhal's: ci/install-deps)")
  endif()
endmacro()

find_package(Threads REQUIRED)
cuhal_require_package(nlohmann_json nlohmann-json3-dev)
if(CUHAL_BUILD_CLI)
  cuhal_require_package(CLI11 libcli11-dev)
endif()
if(CUHAL_BUILD_TESTS)
  cuhal_require_package(GTest "libgtest-dev libgmock-dev")
  if(NOT TARGET GTest::gmock)
    message(FATAL_ERROR "cuhal: missing dependency 'GoogleMock'. Install it with: "
      "sudo apt-get install -y libgmock-dev")
  endif()
  cuhal_require_package(trompeloeil libtrompeloeil-cpp-dev)
endif()
if(CUHAL_BUILD_BENCHMARKS)
  cuhal_require_package(benchmark libbenchmark-dev)
endif()
