// Copyright 2026 The cuhal Authors.
// Entry points: managed-memory advice and prefetch (cuMemAdvise, cuMemPrefetchAsync) and the
// range attributes that report them (cuMemRangeGetAttribute, cuMemRangeGetAttributes). The state
// lives in each managed allocation (Allocation::advice, fakecuda/internal/memory_map.h), one per
// allocation rather than per page.
//
// Encodings measured 2026-12-06 on an H100 80GB HBM3, driver 580.159.04
// (ci/gpu-probes/managed_probe.cc; docs/driver_facts.md, "Pointer and managed-range
// attributes"): location ids are the device ordinal, -1 for the CPU and -2 for none; the _TYPE
// attributes are CUmemLocationType (0 none, 1 device, 2 host); ACCESSED_BY fills its 4-byte
// slots with the accessors (devices by ordinal, then the CPU) and -2 after them; every other
// attribute takes exactly 4 bytes.
#include <cstring>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"

using fakecuda::Allocation;
using fakecuda::DriverState;
using fakecuda::ManagedAdvice;
using fakecuda::MemoryType;
using fakecuda::Op;
using fakecuda::Stream;

namespace {

constexpr int kNoLocation = -2;  // CU_DEVICE_INVALID
constexpr int kCpu = -1;         // CU_DEVICE_CPU

// A location as the advice state keeps it ({type, id}); false for a location cuMemAdvise and
// cuMemPrefetchAsync refuse (*err: the code; not measured beyond a valid device and the host).
bool StoredLocation(const DriverState& st, CUmemLocation loc, int* type, int* id,
                    CUresult* err) {
  switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (loc.id < 0 || loc.id >= st.device_count()) {
        *err = CUDA_ERROR_INVALID_DEVICE;
        return false;
      }
      *type = CU_MEM_LOCATION_TYPE_DEVICE;
      *id = loc.id;
      return true;
    case CU_MEM_LOCATION_TYPE_HOST:  // the id is ignored; measured: reads back -1
      *type = CU_MEM_LOCATION_TYPE_HOST;
      *id = kCpu;
      return true;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      if (loc.id < 0) {
        *err = CUDA_ERROR_INVALID_VALUE;
        return false;
      }
      *type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
      *id = loc.id;
      return true;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:  // the fake's host has one NUMA node, 0
      *type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
      *id = 0;
      return true;
    default:
      *err = CUDA_ERROR_INVALID_VALUE;
      return false;
  }
}

// The legacy (CUdevice) form of a stored location: the ordinal, -1 for any host kind, -2 none.
int LegacyLocation(int type, int id) {
  if (type == CU_MEM_LOCATION_TYPE_INVALID) return kNoLocation;
  if (type == CU_MEM_LOCATION_TYPE_DEVICE) return id;
  return kCpu;
}

// The managed allocation holding all of [ptr, ptr + count), or null.
Allocation* ManagedRange(DriverState* st, CUdeviceptr ptr, std::size_t count)
    CUHAL_REQUIRES(st->mu) {
  if (count == 0) return nullptr;
  Allocation* a = st->FindAllocation(ptr, count);
  return a != nullptr && a->type == MemoryType::kManaged ? a : nullptr;
}

// One range attribute of `advice` into `data` (dataSize bytes, checked here).
CUresult RangeAttribute(const ManagedAdvice& advice, void* data, std::size_t dataSize,
                        CUmem_range_attribute attribute) {
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (attribute == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
    if (dataSize == 0 || dataSize % sizeof(int) != 0) return CUDA_ERROR_INVALID_VALUE;
    const std::size_t slots = dataSize / sizeof(int);
    std::size_t n = 0;
    auto put = [&](int v) {
      if (n < slots) std::memcpy(static_cast<char*>(data) + n * sizeof(int), &v, sizeof(int));
      ++n;
    };
    for (int d = 0; d < 64; ++d) {
      if (advice.accessed_by_devices & (std::uint64_t{1} << d)) put(d);
    }
    if (advice.accessed_by_host) put(kCpu);
    while (n < slots) put(kNoLocation);
    return CUDA_SUCCESS;
  }
  if (dataSize != sizeof(int)) return CUDA_ERROR_INVALID_VALUE;
  int v = 0;
  switch (attribute) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
      v = advice.read_mostly ? 1 : 0;
      break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
      v = LegacyLocation(advice.preferred_type, advice.preferred_id);
      break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
      v = LegacyLocation(advice.prefetch_type, advice.prefetch_id);
      break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
      v = advice.preferred_type;
      break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
      v = advice.preferred_id;
      break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
      v = advice.prefetch_type;
      break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
      v = advice.prefetch_id;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  std::memcpy(data, &v, sizeof(v));
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                    unsigned int flags, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemPrefetchAsync)
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Allocation* a = st->FindAllocation(devPtr, count);
  if (a == nullptr || a->type != MemoryType::kManaged) return CUDA_ERROR_INVALID_VALUE;
  int type = 0;
  int id = kNoLocation;
  CUresult bad = CUDA_ERROR_INVALID_VALUE;
  if (!StoredLocation(*st, location, &type, &id, &bad)) return bad;
  CUresult err;
  Stream* s = st->ResolveStream(hStream, &err);
  if (s == nullptr) return err;
  if (CUresult r = CUDA_SUCCESS; fakecuda::CaptureRefuse(st, s, &r)) return r;  // modelling
  // The last prefetch location is recorded when the prefetch is issued, not when it runs (the
  // probe reads it after a synchronize; a read before that is not measured).
  a->advice.prefetch_type = type;
  a->advice.prefetch_id = id;
  Op op;
  op.what = "cuMemPrefetchAsync";
  op.cost_us = DriverState::CopyCostUs(count, false);
  st->Enqueue(s, std::move(op));
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemPrefetchAsync");
}

CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                             CUmemLocation location) try {
  FAKECUDA_ENTER(cuMemAdvise)
  if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Allocation* a = st->FindAllocation(devPtr, count);
  if (a == nullptr || a->type != MemoryType::kManaged) return CUDA_ERROR_INVALID_VALUE;
  ManagedAdvice& state = a->advice;
  // READ_MOSTLY and UNSET_PREFERRED_LOCATION ignore the location.
  if (advice == CU_MEM_ADVISE_SET_READ_MOSTLY || advice == CU_MEM_ADVISE_UNSET_READ_MOSTLY) {
    state.read_mostly = advice == CU_MEM_ADVISE_SET_READ_MOSTLY;
    return CUDA_SUCCESS;
  }
  if (advice == CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION) {
    state.preferred_type = CU_MEM_LOCATION_TYPE_INVALID;
    state.preferred_id = kNoLocation;
    return CUDA_SUCCESS;
  }
  int type = 0;
  int id = kNoLocation;
  CUresult bad = CUDA_ERROR_INVALID_VALUE;
  if (!StoredLocation(*st, location, &type, &id, &bad)) return bad;
  if (advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION) {
    state.preferred_type = type;
    state.preferred_id = id;
    return CUDA_SUCCESS;
  }
  const bool set = advice == CU_MEM_ADVISE_SET_ACCESSED_BY;
  if (type == CU_MEM_LOCATION_TYPE_DEVICE) {
    if (id >= 64) return CUDA_ERROR_INVALID_DEVICE;  // beyond the fake's bitmask
    const std::uint64_t bit = std::uint64_t{1} << id;
    state.accessed_by_devices = set ? (state.accessed_by_devices | bit)
                                    : (state.accessed_by_devices & ~bit);
  } else {
    state.accessed_by_host = set;
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemAdvise");
}

CUresult CUDAAPI cuMemRangeGetAttribute(void* data, size_t dataSize,
                                        CUmem_range_attribute attribute, CUdeviceptr devPtr,
                                        size_t count) try {
  FAKECUDA_ENTER(cuMemRangeGetAttribute)
  // Measured: a zero count, a range past the allocation's end and device memory are refused.
  const Allocation* a = ManagedRange(st, devPtr, count);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return RangeAttribute(a->advice, data, dataSize, attribute);
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemRangeGetAttribute");
}

CUresult CUDAAPI cuMemRangeGetAttributes(void** data, size_t* dataSizes,
                                         CUmem_range_attribute* attributes, size_t numAttributes,
                                         CUdeviceptr devPtr, size_t count) try {
  FAKECUDA_ENTER(cuMemRangeGetAttributes)
  if (data == nullptr || dataSizes == nullptr || attributes == nullptr || numAttributes == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const Allocation* a = ManagedRange(st, devPtr, count);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::size_t i = 0; i < numAttributes; ++i) {
    if (CUresult e = RangeAttribute(a->advice, data[i], dataSizes[i], attributes[i]);
        e != CUDA_SUCCESS) {
      return e;
    }
  }
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemRangeGetAttributes");
}

}  // extern "C"
