# cuhal_set_warnings(<target>): the project's warning set; errors when CUHAL_WERROR is on.
function(cuhal_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual -Wformat=2
    -Wimplicit-fallthrough)
  # Clang checks the lock discipline written with core/base/mutex.h's annotations (GCC has no
  # such analysis; the `thread-safety` preset builds the libraries with Clang for it).
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety -Wthread-safety-beta)
  endif()
  if(CUHAL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
