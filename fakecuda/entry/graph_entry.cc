// Copyright 2026 The cuhal Authors.
// PLACEHOLDER: not modelled yet; every entry answers CUDA_ERROR_NOT_SUPPORTED.
#include "fakecuda/entry/entry.h"

extern "C" {

CUresult CUDAAPI cuGraphCreate([[maybe_unused]] CUgraph *phGraph, [[maybe_unused]] unsigned int flags) {
  FAKECUDA_ENTER(cuGraphCreate)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphDestroy([[maybe_unused]] CUgraph hGraph) {
  FAKECUDA_ENTER(cuGraphDestroy)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphAddEmptyNode([[maybe_unused]] CUgraphNode *phGraphNode, [[maybe_unused]] CUgraph hGraph, [[maybe_unused]] const CUgraphNode *dependencies, [[maybe_unused]] size_t numDependencies) {
  FAKECUDA_ENTER(cuGraphAddEmptyNode)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphAddKernelNode([[maybe_unused]] CUgraphNode *phGraphNode, [[maybe_unused]] CUgraph hGraph, [[maybe_unused]] const CUgraphNode *dependencies, [[maybe_unused]] size_t numDependencies, [[maybe_unused]] const CUDA_KERNEL_NODE_PARAMS *nodeParams) {
  FAKECUDA_ENTER(cuGraphAddKernelNode)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphAddMemcpyNode([[maybe_unused]] CUgraphNode *phGraphNode, [[maybe_unused]] CUgraph hGraph, [[maybe_unused]] const CUgraphNode *dependencies, [[maybe_unused]] size_t numDependencies, [[maybe_unused]] const CUDA_MEMCPY3D *copyParams, [[maybe_unused]] CUcontext ctx) {
  FAKECUDA_ENTER(cuGraphAddMemcpyNode)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphAddMemsetNode([[maybe_unused]] CUgraphNode *phGraphNode, [[maybe_unused]] CUgraph hGraph, [[maybe_unused]] const CUgraphNode *dependencies, [[maybe_unused]] size_t numDependencies, [[maybe_unused]] const CUDA_MEMSET_NODE_PARAMS *memsetParams, [[maybe_unused]] CUcontext ctx) {
  FAKECUDA_ENTER(cuGraphAddMemsetNode)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphAddHostNode([[maybe_unused]] CUgraphNode *phGraphNode, [[maybe_unused]] CUgraph hGraph, [[maybe_unused]] const CUgraphNode *dependencies, [[maybe_unused]] size_t numDependencies, [[maybe_unused]] const CUDA_HOST_NODE_PARAMS *nodeParams) {
  FAKECUDA_ENTER(cuGraphAddHostNode)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphAddEventRecordNode([[maybe_unused]] CUgraphNode *phGraphNode, [[maybe_unused]] CUgraph hGraph, [[maybe_unused]] const CUgraphNode *dependencies, [[maybe_unused]] size_t numDependencies, [[maybe_unused]] CUevent event) {
  FAKECUDA_ENTER(cuGraphAddEventRecordNode)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphAddEventWaitNode([[maybe_unused]] CUgraphNode *phGraphNode, [[maybe_unused]] CUgraph hGraph, [[maybe_unused]] const CUgraphNode *dependencies, [[maybe_unused]] size_t numDependencies, [[maybe_unused]] CUevent event) {
  FAKECUDA_ENTER(cuGraphAddEventWaitNode)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags([[maybe_unused]] CUgraphExec *phGraphExec, [[maybe_unused]] CUgraph hGraph, [[maybe_unused]] unsigned long long flags) {
  FAKECUDA_ENTER(cuGraphInstantiateWithFlags)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphExecDestroy([[maybe_unused]] CUgraphExec hGraphExec) {
  FAKECUDA_ENTER(cuGraphExecDestroy)
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuGraphLaunch([[maybe_unused]] CUgraphExec hGraphExec, [[maybe_unused]] CUstream hStream) {
  FAKECUDA_ENTER(cuGraphLaunch)
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // extern "C"
