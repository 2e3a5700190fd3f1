# nvcc, for CUDA C++ compiled to PTX at build time (no GPU needed): the kernel catalogue of
# tests/ptx and the kernel `cuhal demo` launches (cli/). cuhal itself is plain C++; without nvcc
# the catalogue tests skip and the demo falls back to its hand-written PTX, each saying why.
#
#   CUHAL_NVCC              the nvcc found (cache; -DCUHAL_NVCC=/path/to/nvcc picks another)
#   CUHAL_USE_NVCC          OFF builds as if there were no nvcc (to check the fallbacks)
#   CUHAL_NVCC_MISSING      empty when nvcc is used, else why not (for skip messages)
#   cuhal_nvcc_ptx(<out.ptx> <source.cu>)   a build rule making PTX for sm_90 from <source.cu>
#   cuhal_embed_text(<out.cc> <input> <namespace> <function> [DEPENDS_TARGET ...])
#       a build rule writing <out.cc> that defines `std::string_view <namespace>::<function>()`
#       returning the text of <input> (the generated file includes <string_view> only)
option(CUHAL_USE_NVCC "Compile CUDA C++ test and demo kernels to PTX with nvcc when it is found" ON)
find_program(CUHAL_NVCC nvcc HINTS /usr/local/cuda/bin $ENV{CUDA_HOME}/bin
             DOC "nvcc for the PTX of tests/ptx and of cuhal demo")
set(CUHAL_NVCC_MISSING "")
if(NOT CUHAL_USE_NVCC)
  set(CUHAL_NVCC_MISSING "nvcc is not used (CUHAL_USE_NVCC=OFF when cuhal was configured)")
elseif(NOT CUHAL_NVCC)
  set(CUHAL_NVCC_MISSING
      "nvcc was not found when cuhal was configured (PATH, /usr/local/cuda/bin, $CUDA_HOME/bin)")
endif()
if(CUHAL_NVCC_MISSING)
  message(STATUS "cuhal: ${CUHAL_NVCC_MISSING}: the PTX catalogue tests skip and cuhal demo uses "
                 "its hand-written PTX")
else()
  message(STATUS "cuhal: CUDA C++ kernels are compiled to PTX with ${CUHAL_NVCC}")
endif()

function(cuhal_nvcc_ptx output source)
  get_filename_component(name ${source} NAME)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CUHAL_NVCC} -ptx -arch=sm_90 -O3 ${source} -o ${output}
    DEPENDS ${source}
    COMMENT "nvcc -ptx ${name}"
    VERBATIM)
endfunction()

set(CUHAL_EMBED_TEXT_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_text.cmake)
function(cuhal_embed_text output input namespace function)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DNAMESPACE=${namespace}
            -DFUNCTION=${function} -P ${CUHAL_EMBED_TEXT_SCRIPT}
    DEPENDS ${input} ${CUHAL_EMBED_TEXT_SCRIPT}
    COMMENT "embedding ${input}"
    VERBATIM)
endfunction()
