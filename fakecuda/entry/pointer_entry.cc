// Copyright 2026 The cuhal Authors.
// Entry points: pointer attributes (cuPointerGetAttribute, cuPointerGetAttributes,
// cuPointerSetAttribute) of every kind of memory the memory map holds; VMM mappings answer
// through the VMM model (fakecuda/internal/vmm_model.h).
//
// Measured 2026-12-06 on an H100 80GB HBM3, driver 580.159.04 (ci/gpu-probes/managed_probe.cc;
// docs/driver_facts.md, "Pointer and managed-range attributes"), for cuMemAllocManaged,
// cuMemAlloc, cuMemAllocHost and cuMemAllocAsync memory; registered host memory is taken to
// answer as pinned host memory does (not measured).
#include <cstring>

#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/vmm_model.h"

using fakecuda::Allocation;
using fakecuda::DriverState;
using fakecuda::MemoryType;

namespace fakecuda {
namespace {

constexpr std::size_t kTwoMiB = std::size_t{2} << 20;

bool IsHostKind(const Allocation& a) {
  return a.type == MemoryType::kPinnedHost || a.type == MemoryType::kRegisteredHost;
}

// SYNC_MEMOPS: 1 on device, managed and pool memory until set, 0 on host memory.
int SyncMemops(const Allocation& a) {
  if (a.sync_memops >= 0) return a.sync_memops;
  return IsHostKind(a) ? 0 : 1;
}

}  // namespace

CUresult PointerAttribute(DriverState* st, void* data, CUpointer_attribute attribute,
                          CUdeviceptr ptr) CUHAL_REQUIRES(st->mu) {
  Allocation* a = st->FindAllocation(ptr, 1);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (a->type == MemoryType::kVmm) {
    const Context* ctx = st->CurrentContext();
    return st->vmm().PointerAttribute(data, attribute, ptr, ctx != nullptr ? ctx->device : 0);
  }
  bool device = a->type == MemoryType::kDevice || a->type == MemoryType::kPool;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      // Measured on the H200 (ci/gpu-probes, case "ptrattr"): a pool allocation belongs to no
      // context (NULL, CUDA_SUCCESS), for the default pool and a created one alike.
      *static_cast<CUcontext*>(data) =
          a->type == MemoryType::kPool ? nullptr
                                       : EncodeHandle<CUcontext>(HandleKind::kContext, a->ctx_id);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned*>(data) =
          (device || a->type == MemoryType::kManaged) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      *static_cast<CUdeviceptr*>(data) = ptr;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (device) {
        *static_cast<void**>(data) = nullptr;  // measured: written NULL, then refused
        return CUDA_ERROR_INVALID_VALUE;
      }
      *static_cast<void**>(data) = reinterpret_cast<void*>(ptr);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: {
      // Measured: answered for device, managed and pool memory; host memory has the buffer
      // written, then refused. The token values are not modelled (zeros).
      CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens{};
      std::memcpy(data, &tokens, sizeof(tokens));
      return IsHostKind(*a) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
      *static_cast<int*>(data) = SyncMemops(*a);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
      *static_cast<unsigned long long*>(data) = a->id;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *static_cast<int*>(data) = a->type == MemoryType::kManaged ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = a->device;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *static_cast<CUdeviceptr*>(data) = a->base;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *static_cast<size_t*>(data) = a->size;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
      *static_cast<int*>(data) = 1;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      if (a->type != MemoryType::kPool) {
        *static_cast<CUmemoryPool*>(data) = nullptr;
        return CUDA_SUCCESS;
      }
      *static_cast<CUmemoryPool*>(data) = EncodeHandle<CUmemoryPool>(HandleKind::kPool, a->pool_id);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
      *static_cast<int*>(data) = a->type == MemoryType::kDevice ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      // Measured: 0 for every kind (pool memory: of a pool made without handle types).
      *static_cast<unsigned long long*>(data) = 0;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      // Measured: 1 on cuMemAlloc memory only (0 on managed, pinned and pool memory).
      *static_cast<int*>(data) = a->type == MemoryType::kDevice ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      // Measured for small allocations: a pool allocation sits in one of the pool's 32 MiB
      // mappings; 1000- and 4096-byte cuMemAlloc, cuMemAllocManaged and cuMemAllocHost memory in
      // a 2 MiB one (larger sizes are taken to round up to 2 MiB: not measured).
      if (a->type == MemoryType::kPool) {
        *static_cast<size_t*>(data) = std::size_t{32} << 20;
        return CUDA_SUCCESS;
      }
      *static_cast<size_t*>(data) = (a->size + kTwoMiB - 1) / kTwoMiB * kTwoMiB;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      // Measured: the allocation's base for a lone allocation of each kind (allocations that
      // share a mapping in the real driver are not modelled: each is its own mapping here).
      *static_cast<CUdeviceptr*>(data) = a->base;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      *static_cast<unsigned long long*>(data) = a->id;  // measured: nonzero
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      *static_cast<int*>(data) = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace fakecuda

extern "C" {

CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) try {
  FAKECUDA_ENTER(cuPointerGetAttribute)
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fakecuda::PointerAttribute(st, data, attribute, ptr);
} catch (...) {
  return ::fakecuda::EntryFailed("cuPointerGetAttribute");
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes,
                                        CUpointer_attribute* attributes, void** data,
                                        CUdeviceptr ptr) try {
  FAKECUDA_ENTER(cuPointerGetAttributes)
  if (numAttributes == 0 || attributes == nullptr || data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Unlike the singular form, an unknown pointer is not an error here: each attribute reads as
  // "not a CUDA allocation" (zero / null), as the real driver reports.
  bool known = st->FindAllocation(ptr, 1) != nullptr;
  for (unsigned i = 0; i < numAttributes; ++i) {
    if (data[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!known) {
      switch (attributes[i]) {
        case CU_POINTER_ATTRIBUTE_CONTEXT:
        case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
          *static_cast<void**>(data[i]) = nullptr;
          break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
          *static_cast<unsigned*>(data[i]) = 0;
          break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
          *static_cast<unsigned long long*>(data[i]) = 0;
          break;
        case CU_POINTER_ATTRIBUTE_HOST_POINTER:
          // Measured (tests/cudart_catalogue memory.cu, H100, driver 580.159.04, 2026-12-06;
          // the runtime's cudaPointerGetAttributes makes this one call, attributes 1, 2, 3, 4,
          // 8, 9, and copies the answer): the address itself, for malloc and stack memory and
          // for freed device memory alike (NULL for NULL).
          *static_cast<void**>(data[i]) = reinterpret_cast<void*>(ptr);
          break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
          *static_cast<size_t*>(data[i]) = 0;
          break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
          *static_cast<int*>(data[i]) = -2;
          break;
        default:
          *static_cast<int*>(data[i]) = 0;
          break;
      }
      continue;
    }
    CUresult e = fakecuda::PointerAttribute(st, data[i], attributes[i], ptr);
    // Measured (H100, driver 580.159.04): HOST_POINTER of device or pool memory, refused by the
    // singular form, reads NULL here and the list succeeds (cuda-python's test_cuda_pointer_attr).
    if (e != CUDA_SUCCESS && attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) continue;
    if (e != CUDA_SUCCESS) return e;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuPointerGetAttributes");
}

CUresult CUDAAPI cuPointerSetAttribute(const void* value, CUpointer_attribute attribute,
                                       CUdeviceptr ptr) try {
  FAKECUDA_ENTER(cuPointerSetAttribute)
  // SYNC_MEMOPS is the only settable attribute (cuda.h). Measured: set to 1 then 0 on managed,
  // device, pinned and pool memory, each read back. VMM mappings: not measured, not modelled.
  if (value == nullptr || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Allocation* a = st->FindAllocation(ptr, 1);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (a->type == MemoryType::kVmm) return CUDA_ERROR_NOT_SUPPORTED;
  unsigned int v = 0;
  std::memcpy(&v, value, sizeof(v));
  a->sync_memops = v != 0 ? 1 : 0;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuPointerSetAttribute");
}

}  // extern "C"
