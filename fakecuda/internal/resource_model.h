// Copyright 2026 The cuhal Authors.
// The fake driver's device resources and green contexts: SM resources of devices and contexts
// (cuDeviceGetDevResource, cuCtxGetDevResource, cuGreenCtxGetDevResource), their splits
// (cuDevSmResourceSplitByCount), resource descriptors (cuDevResourceGenerateDesc) and green
// contexts (cuGreenCtxCreate/Destroy, cuCtxFromGreenCtx, their streams and events).
//
// A green context is modelled as a context of its own in the ContextTable (the "converted"
// context cuCtxFromGreenCtx returns, so cuCtxSetCurrent and every context-taking call work on
// it) plus a record here; creating one retains the device's primary context and destroying it
// releases that retain, as cuda.h says. The SM partitioning is bookkeeping only: the fake runs
// work the same whatever SMs a context has.
//
// Invariants:
//  1. A CUdevResource the fake writes carries, in its _internal_padding, a tag (magic, kind,
//     device, SM count, split instance, driver serial, checksum); a resource whose tag does not
//     check is not one the fake made (forged or garbage) and is refused, so nothing needs a table
//     of issued resources.
//  2. Descriptors are never destroyed (cuda.h has no call for it): they live as long as the
//     driver. Green contexts live until cuGreenCtxDestroy; ids are never reused and a destroyed
//     one is remembered (CUDA_ERROR_CONTEXT_IS_DESTROYED... see green_destroyed_).
//  3. Handles have a zero low nibble (no HandleKind of driver_state.h matches them) and a tag
//     in the next one: 0xA green context, 0xB descriptor.
#ifndef CUHAL_FAKECUDA_INTERNAL_RESOURCE_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_RESOURCE_MODEL_H_

#include <cuda.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "fakecuda/fake_driver.h"
#include "fakecuda/internal/driver_state.h"

namespace fakecuda {

// What a resource is, in its tag (invariant 1).
enum class ResourceKind : std::uint32_t {
  kDevice = 1,
  kContext = 2,
  kGreen = 3,
  kGroup = 4,      // a group of a split
  kRemainder = 5,  // the remaining part of a split
  kCombined = 6,   // several resources of one split, as a descriptor holds them
};

struct ResourceTag {
  ResourceKind kind = ResourceKind::kDevice;
  int device = 0;
  unsigned sm_count = 0;
  std::uint64_t split = 0;  // the split instance (groups and remainders); 0 otherwise
};

struct ResourceDesc {
  std::uint64_t id = 0;
  int device = 0;
  unsigned sm_count = 0;
  std::uint64_t split = 0;
};

struct GreenContext {
  std::uint64_t id = 0;
  int device = 0;
  std::uint64_t ctx_id = 0;  // the converted context (ContextTable)
  unsigned sm_count = 0;
};

// Ownership: one per DriverState, created on first use (DriverState::resources()).
// Thread-safety: none of its own; every method requires DriverState::mu held: the public ones,
// reached only through DriverState::resources() (which requires it), assert it for the analysis,
// as VmmModel's do. Stream ordering: cuGreenCtxRecordEvent records after all work
// queued so far on the green context's streams; cuGreenCtxWaitEvent makes each of its streams
// (those live at the call) wait for the event's last record.
class ResourceModel {
 public:
  explicit ResourceModel(DriverState* st) : st_(st) {}
  ResourceModel(const ResourceModel&) = delete;             // holds state by id
  ResourceModel& operator=(const ResourceModel&) = delete;  // ditto

  // The SM resource of `device` (an ordinal already validated).
  CUresult DeviceResource(int device, int type, CUdevResource* out);
  // The SM resource of a live context (a converted green context's: the green context's).
  CUresult ContextResource(const Context& ctx, int type, CUdevResource* out);
  CUresult GreenResource(CUgreenCtx green, int type, CUdevResource* out);
  CUresult Split(CUdevResource* result, unsigned* nb_groups, const CUdevResource* input,
                 CUdevResource* remaining, unsigned flags, unsigned min_count);
  CUresult GenerateDesc(CUdevResourceDesc* out, const CUdevResource* resources, unsigned n);

  CUresult CreateGreen(CUgreenCtx* out, CUdevResourceDesc desc, CUdevice dev, unsigned flags);
  CUresult DestroyGreen(CUgreenCtx green);
  // The live green context of a handle, or null; *error says why not
  // (CUDA_ERROR_CONTEXT_IS_DESTROYED for a destroyed one, else CUDA_ERROR_INVALID_CONTEXT, null
  // included).
  GreenContext* FindGreen(CUgreenCtx green, CUresult* error);
  // The green context whose converted context is `ctx_id`, or null.
  GreenContext* GreenOfContext(std::uint64_t ctx_id);
  const GreenContext* GreenOfContextConst(std::uint64_t ctx_id) const;
  static CUgreenCtx GreenHandle(std::uint64_t id);

  CUresult RecordEvent(const GreenContext& g, CUevent event);
  CUresult WaitEvent(const GreenContext& g, CUevent event);

  // The SM partition parameters of `device`: minimum partition size and co-scheduling
  // alignment, by compute capability (cuda.h's guideline; measured 8 and 8 on the H100, 9.0).
  void SmParameters(int device, unsigned* min_partition, unsigned* alignment) const;
  // The SM count of `device` (its profile's MULTIPROCESSOR_COUNT).
  unsigned DeviceSmCount(int device) const;

  void CountLive(Inventory* inv) const;
  std::string Describe() const;

 private:
  void WriteResource(const ResourceTag& tag, CUdevResource* out) const CUHAL_REQUIRES(st_->mu);
  // Reads back a resource the fake wrote; false when its tag does not check (invariant 1).
  bool ReadResource(const CUdevResource& r, ResourceTag* tag) const CUHAL_REQUIRES(st_->mu);

  DriverState* const st_;
  std::map<std::uint64_t, ResourceDesc> descs_;
  std::map<std::uint64_t, GreenContext> greens_;
  std::set<std::uint64_t> green_destroyed_;
  std::uint64_t next_split_ = 1;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_RESOURCE_MODEL_H_
