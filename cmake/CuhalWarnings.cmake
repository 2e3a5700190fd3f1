# cuhal_set_warnings(<target>): the project's warning set; errors when CUHAL_WERROR is on.
function(cuhal_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual -Wformat=2
    -Wimplicit-fallthrough)
  if(CUHAL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
