# Finds the CUDA toolkit's cuda.h and nccl.h (headers only: nothing links libcuda or libnccl) and
# defines the INTERFACE target cuhal::cuda_headers. Used by the build and by the installed package.
# Hints, in order: CUHAL_CUDA_INCLUDE_DIR, CUDAToolkit_ROOT, $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
if(TARGET cuhal::cuda_headers)
  return()
endif()
set(_cuhal_cuda_hints "")
foreach(_root IN ITEMS "${CUDAToolkit_ROOT}" "$ENV{CUDAToolkit_ROOT}" "$ENV{CUDA_HOME}"
                       "$ENV{CUDA_PATH}" /usr/local/cuda /usr)
  if(_root)
    list(APPEND _cuhal_cuda_hints "${_root}/include" "${_root}/targets/x86_64-linux/include")
  endif()
endforeach()
find_path(CUHAL_CUDA_INCLUDE_DIR cuda.h HINTS ${_cuhal_cuda_hints})
find_path(CUHAL_NCCL_INCLUDE_DIR nccl.h HINTS ${CUHAL_CUDA_INCLUDE_DIR} ${_cuhal_cuda_hints})
if(NOT CUHAL_CUDA_INCLUDE_DIR OR NOT CUHAL_NCCL_INCLUDE_DIR)
  set(_missing "")
  if(NOT CUHAL_CUDA_INCLUDE_DIR)
    list(APPEND _missing "cuda.h")
  endif()
  if(NOT CUHAL_NCCL_INCLUDE_DIR)
    list(APPEND _missing "nccl.h")
  endif()
  message(FATAL_ERROR
    "cuhal: cannot find ${_missing} (headers only; no GPU or libcuda is needed). "
    "Looked in: ${_cuhal_cuda_hints}. Install the CUDA toolkit headers (they live in "
    "/usr/local/cuda/include on NVIDIA's images; on Debian: 'apt-get install nvidia-cuda-toolkit-gcc "
    "libnccl-dev' from non-free) or pass -DCUHAL_CUDA_INCLUDE_DIR=/path/to/include.")
endif()
add_library(cuhal_cuda_headers INTERFACE IMPORTED GLOBAL)
add_library(cuhal::cuda_headers ALIAS cuhal_cuda_headers)
target_include_directories(cuhal_cuda_headers SYSTEM INTERFACE
  ${CUHAL_CUDA_INCLUDE_DIR} ${CUHAL_NCCL_INCLUDE_DIR})
