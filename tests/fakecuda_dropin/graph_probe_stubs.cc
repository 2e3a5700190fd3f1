// Copyright 2026 The cuhal Authors.
// Lets ci/gpu-probes/graph_probe.cc link against a drop-in that lacks the exec-update entry
// points (the graphcmd work, fakecuda/entry/graph_update_entry.cc): each stub forwards to the
// library's own definition when it has one (dlsym on libcuda.so.1), else answers
// CUDA_ERROR_NOT_SUPPORTED. Remove with the exec_update filter of fakecuda_dropin_graph_probe
// once the drop-in exports them.
#include <cuda.h>
#include <dlfcn.h>

namespace {

template <typename Fn>
Fn Find(const char* name) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void* sym = lib != nullptr ? dlsym(lib, name) : nullptr;
  if (lib != nullptr) dlclose(lib);
  return reinterpret_cast<Fn>(sym);
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec e, CUgraphNode n,
                                                const CUDA_KERNEL_NODE_PARAMS* p) {
  static auto fn =
      Find<decltype(&cuGraphExecKernelNodeSetParams)>("cuGraphExecKernelNodeSetParams_v2");
  return fn != nullptr && fn != &cuGraphExecKernelNodeSetParams ? fn(e, n, p)
                                                                : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo* info) {
  static auto fn = Find<decltype(&cuGraphExecUpdate)>("cuGraphExecUpdate_v2");
  return fn != nullptr && fn != &cuGraphExecUpdate ? fn(e, g, info) : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS* p) {
  static auto fn = Find<decltype(&cuGraphKernelNodeSetParams)>("cuGraphKernelNodeSetParams_v2");
  return fn != nullptr && fn != &cuGraphKernelNodeSetParams ? fn(n, p) : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphMemsetNodeSetParams(CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS* p) {
  static auto fn = Find<decltype(&cuGraphMemsetNodeSetParams)>("cuGraphMemsetNodeSetParams");
  return fn != nullptr && fn != &cuGraphMemsetNodeSetParams ? fn(n, p) : CUDA_ERROR_NOT_SUPPORTED;
}

}  // extern "C"
