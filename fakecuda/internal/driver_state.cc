// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/driver_state.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>

#include "fakecuda/internal/array_model.h"
#include "fakecuda/internal/per_thread_mode.h"
#include "fakecuda/internal/mem_pool.h"
#include "fakecuda/internal/graph_model.h"
#include "fakecuda/internal/legacy_model.h"
#include "fakecuda/internal/library_model.h"
#include "fakecuda/internal/module_model.h"
#include "fakecuda/internal/vmm_model.h"
#include "fakecuda/internal/coredump_model.h"
#include "fakecuda/internal/devext_model.h"
#include "fakecuda/internal/resource_model.h"
#include "fakecuda/internal/thread_state.h"
#include "fakecuda/race/race_detector.h"
#include "fakecuda/virtual_clock.h"

namespace fakecuda {
namespace {

std::atomic<std::uint64_t> g_serial{1};

}  // namespace

DriverState::DriverState(DriverOptions opts)
    : options(std::move(opts)),
      device_count_(static_cast<int>(options.devices.size())),
      contexts_(options.devices) {
  serial = g_serial.fetch_add(1);
  rng_ = options.seed ^ 0x5851f42d4c957f2dULL;
  if (options.racecheck.value_or(RaceCheck::kOff) != RaceCheck::kOff) {
    race_ = std::make_unique<RaceDetector>(*options.racecheck, serial);
  }
}

DriverState::~DriverState() {
  StopLanes();
  while (!memory_.all().empty()) ReleaseAllocation(memory_.all().begin()->first);
}

PoolModel& DriverState::pools() {
  if (pools_ == nullptr) pools_ = std::make_unique<PoolModel>(this);
  return *pools_;
}

ModuleModel& DriverState::modules() {
  if (modules_ == nullptr) modules_ = std::make_unique<ModuleModel>();
  return *modules_;
}

VmmModel& DriverState::vmm() {
  if (vmm_ == nullptr) vmm_ = std::make_unique<VmmModel>(this);
  return *vmm_;
}

ArrayModel& DriverState::arrays() {
  if (arrays_ == nullptr) arrays_ = std::make_unique<ArrayModel>(this);
  return *arrays_;
}

CoredumpModel& DriverState::coredump() {
  if (coredump_ == nullptr) coredump_ = std::make_unique<CoredumpModel>();
  return *coredump_;
}

ResourceModel& DriverState::resources() {
  if (resources_ == nullptr) resources_ = std::make_unique<ResourceModel>(this);
  return *resources_;
}

DevextModel& DriverState::devext() {
  if (devext_ == nullptr) devext_ = std::make_unique<DevextModel>();
  return *devext_;
}

LibraryModel& DriverState::libraries() {
  if (libraries_ == nullptr) libraries_ = std::make_unique<LibraryModel>();
  return *libraries_;
}

LegacyModel& DriverState::legacy() {
  if (legacy_ == nullptr) legacy_ = std::make_unique<LegacyModel>(this);
  return *legacy_;
}

GraphModel& DriverState::graphs() {
  if (graphs_ == nullptr) graphs_ = std::make_unique<GraphModel>();
  return *graphs_;
}

std::uint64_t DriverState::NextRandom() {
  std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Context* DriverState::FindContext(CUcontext handle) { return contexts_.Find(handle); }

Stream* DriverState::FindStream(std::uint64_t id) { return streams_.FindStream(id); }

Event* DriverState::FindEvent(CUevent handle) {
  const std::uint64_t id = DecodeHandle(HandleKind::kEvent, handle);
  return id == 0 ? nullptr : streams_.FindEvent(id);
}

Context* DriverState::CurrentContext() {
  auto& stack = ThreadContextStack(serial);
  if (stack.empty()) return nullptr;
  return FindContext(EncodeHandle<CUcontext>(HandleKind::kContext, stack.back()));
}

Stream* DriverState::NewStream(Context* ctx, unsigned flags, int priority,
                               std::uint64_t public_id) {
  Stream* s = streams_.AddStream(NewId(), ctx->id, flags, priority);
  if (public_id == 0) public_id = streams_.TakePublicIds(1);
  s->public_id = public_id == kNoPublicId ? 0 : public_id;
  return s;
}

Stream* DriverState::ResolveStream(CUstream handle, CUresult* error) {
  *error = CUDA_SUCCESS;
  // Inside a `_ptds` entry point the implicit default stream is the per-thread one.
  if (ImplicitStreamIsPerThread() && (handle == nullptr || handle == CU_STREAM_LEGACY)) {
    handle = CU_STREAM_PER_THREAD;
  }
  auto raw = reinterpret_cast<std::uintptr_t>(handle);
  if (raw == 0 || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
    Context* ctx = CurrentContext();
    if (ctx == nullptr) {
      *error = CUDA_ERROR_INVALID_CONTEXT;
      return nullptr;
    }
    if (handle == CU_STREAM_PER_THREAD) {
      std::uint64_t key = ThreadKey();
      auto it = ctx->per_thread_streams.find(key);
      if (it != ctx->per_thread_streams.end()) return FindStream(it->second);
      Stream* s = NewStream(ctx, CU_STREAM_DEFAULT, 0);
      s->per_thread_default = true;
      // Measured (streamctx_probe "ids:stream"): a per-thread stream takes an id of the counter
      // but reports a large one (the value itself is the fake's).
      s->public_id |= std::uint64_t{1} << 48;
      ctx->per_thread_streams.emplace(key, s->id);
      return s;
    }
    if (ctx->legacy_stream_id == 0) {
      Stream* s = NewStream(ctx, CU_STREAM_DEFAULT, 0,
                            ctx->legacy_public_id != 0 ? ctx->legacy_public_id : kNoPublicId);
      s->legacy_default = true;
      ctx->legacy_stream_id = s->id;
      return s;
    }
    return FindStream(ctx->legacy_stream_id);
  }
  std::uint64_t id = DecodeHandle(HandleKind::kStream, handle);
  Stream* s = FindStream(id);
  if (s == nullptr || s->destroyed) {
    *error = CUDA_ERROR_INVALID_HANDLE;
    return nullptr;
  }
  return s;
}

// Fitted to the H200 (driver 580.159.04, 2026-12-03, ci/gpu-probes, docs/driver_facts.md "Cost
// model"): device to device 7.0 us + bytes / 2.3 TB/s; pinned host copies 5.0 us (HtoD) and 3.9 us
// (DtoH) + bytes / 53-55 GB/s, modelled as 4.5 us + bytes / 54 GB/s; memsets 4.3 us + bytes /
// 4.0 TB/s. Pageable copies (about 10 GB/s there) are not modelled apart: they cost as pinned.
double DriverState::CopyCostUs(std::size_t bytes, bool device_to_device) {
  if (device_to_device) return 7.0 + static_cast<double>(bytes) / 2.3e6;  // bytes per us
  return 4.5 + static_cast<double>(bytes) / 5.4e4;
}

double DriverState::MemsetCostUs(std::size_t bytes) {
  return 4.3 + static_cast<double>(bytes) / 4.0e6;
}

CUdeviceptr DriverState::ReserveVa(int device, std::size_t size, std::size_t alignment) {
  Device& d = contexts_.device(device);
  CUdeviceptr base = (d.next_va + alignment - 1) / alignment * alignment;
  d.next_va = base + std::max<std::size_t>((size + 511) / 512 * 512, 512);
  return base;
}

void DriverState::AddDeviceAllocation(Allocation a) {
  contexts_.device(a.device).bytes_in_use += a.size;
  memory_.Add(std::move(a));
}

void DriverState::ReleaseAllocation(std::uintptr_t base) {
  const Allocation* a = memory_.At(base);
  if (a == nullptr) return;
  if (race_ != nullptr) race_->OnRelease(a->id);
  if (a->pinned_chunk != 0) pinned_chunks_.Release({a->pinned_chunk, a->pinned_offset, false});
  if (a->type == MemoryType::kDevice && a->device >= 0 && a->device < contexts_.device_count()) {
    contexts_.device(a->device).bytes_in_use -= a->size;
  }
  memory_.Release(base);
}

void DriverState::TeardownContext(std::uint64_t ctx_id) {
  if (graphs_ != nullptr) graphs_->DiscardCapturesOfContext(ctx_id);
  (void)SyncAll(ctx_id);
  ModulesOnContextTeardown(this, ctx_id);
  streams_.EraseContext(ctx_id);
  if (arrays_ != nullptr) arrays_->OnContextTeardown(ctx_id);
  std::vector<std::uintptr_t> doomed;
  for (const auto& [base, a] : memory_.all()) {
    if (a.ctx_id == ctx_id && a.type != MemoryType::kPool) doomed.push_back(base);
  }
  for (std::uintptr_t base : doomed) ReleaseAllocation(base);
  if (coredump_ != nullptr) coredump_->OnContextTeardown(ctx_id);
  if (legacy_ != nullptr) legacy_->OnContextTeardown(ctx_id);
}

namespace {

// The fields of Inventory that count objects a context holds (all but the primary-context
// retains, which a release changes by itself).
#define CUHAL_CONTEXT_OBJECT_COUNTS(X)                                                    \
  X(contexts) X(streams) X(events) X(device_allocations) X(host_allocations)              \
  X(host_registrations) X(managed_allocations) X(pools) X(pool_allocations) X(modules)    \
  X(graphs) X(graph_execs) X(vmm_allocations) X(vmm_reservations) X(vmm_mappings) X(arrays) \
  X(green_contexts) X(libraries)

// *into += a - b, field by field, over CUHAL_CONTEXT_OBJECT_COUNTS.
void AddDifference(Inventory* into, const Inventory& a, const Inventory& b) {
#define CUHAL_ADD_DIFFERENCE(field) into->field += std::max(0, a.field - b.field);
  CUHAL_CONTEXT_OBJECT_COUNTS(CUHAL_ADD_DIFFERENCE)
#undef CUHAL_ADD_DIFFERENCE
}

}  // namespace

void DriverState::NoteRuntimeTeardown(const Inventory& before,
                                      const std::string& described_before) {
  AddDifference(&runtime_teardown_, before, CountLive());
  const std::string after = DescribeLive();
  std::multiset<std::string> remaining;
  std::istringstream after_lines(after);
  for (std::string line; std::getline(after_lines, line);) remaining.insert(line);
  std::istringstream before_lines(described_before);
  for (std::string line; std::getline(before_lines, line);) {
    if (line.rfind("primary context of device ", 0) == 0) continue;  // the retains
    if (auto it = remaining.find(line); it != remaining.end()) {
      remaining.erase(it);
    } else {
      runtime_teardown_lines_ += line + " (left to the CUDA runtime's teardown at exit)\n";
    }
  }
}

Inventory DriverState::CountLive() const {
  Inventory inv;
  for (const auto& [id, c] : contexts_.all()) {
    // A green context's converted context is counted as the green context (ResourceModel).
    if (!c->primary && (resources_ == nullptr || resources_->GreenOfContextConst(id) == nullptr)) {
      ++inv.contexts;
    }
  }
  for (const Device& d : contexts_.devices()) {
    const int runtime = std::min(d.runtime_retains, d.primary_refcount);
    inv.primary_retains += d.primary_refcount - runtime;
    inv.runtime_primary_retains += runtime;
  }
  for (const auto& [id, s] : streams_.streams()) {
    if (!s->legacy_default && !s->per_thread_default && !s->destroyed) ++inv.streams;
  }
  inv.events = static_cast<int>(streams_.events().size());
  inv.pools = PoolsLive(*this);
  for (const auto& [base, a] : memory_.all()) {
    switch (a.type) {
      case MemoryType::kDevice: ++inv.device_allocations; break;
      case MemoryType::kPinnedHost: ++inv.host_allocations; break;
      case MemoryType::kRegisteredHost: ++inv.host_registrations; break;
      case MemoryType::kManaged: ++inv.managed_allocations; break;
      case MemoryType::kPool: ++inv.pool_allocations; break;
      case MemoryType::kVmm: ++inv.vmm_mappings; break;
    }
  }
  ModulesCountLive(*this, &inv);
  if (graphs_ != nullptr) graphs_->CountLive(&inv);
  if (vmm_ != nullptr) vmm_->CountLive(&inv);
  if (arrays_ != nullptr) arrays_->CountLive(&inv);
  if (resources_ != nullptr) resources_->CountLive(&inv);
  if (libraries_ != nullptr) libraries_->CountLive(*this, &inv);
  AddDifference(&inv, runtime_teardown_, Inventory{});
  return inv;
}

std::string DriverState::DescribeLive() const {
  std::ostringstream os;
  for (const auto& [id, c] : contexts_.all()) {
    if (!c->primary && (resources_ == nullptr || resources_->GreenOfContextConst(id) == nullptr)) {
      os << "context " << id << " on device " << c->device << " (cuCtxCreate)\n";
    }
  }
  for (const Device& d : contexts_.devices()) {
    const int runtime = std::min(d.runtime_retains, d.primary_refcount);
    if (d.primary_refcount > runtime) {
      os << "primary context of device " << d.ordinal << ": " << d.primary_refcount - runtime
         << " outstanding cuDevicePrimaryCtxRetain\n";
    }
    if (runtime > 0) {
      os << "primary context of device " << d.ordinal << ": " << runtime
         << " cuDevicePrimaryCtxRetain held by the CUDA runtime, not the program (libcudart "
            "does not release a retain after cudaDeviceReset resets the context; not a leak)\n";
    }
  }
  for (const auto& [id, s] : streams_.streams()) {
    if (!s->legacy_default && !s->per_thread_default && !s->destroyed) {
      os << "stream " << id << " (flags " << s->flags << ", priority " << s->priority << ")\n";
    }
  }
  for (const auto& [id, e] : streams_.events()) {
    os << "event " << id << " (flags " << e->flags << ")\n";
  }
  for (const auto& [base, a] : memory_.all()) {
    os << "allocation 0x" << std::hex << base << std::dec << " of " << a.size << " bytes ("
       << a.created_by << ")\n";
  }
  os << PoolsDescribe(*this);
  os << ModulesDescribe(*this);
  if (graphs_ != nullptr) os << graphs_->Describe();
  if (vmm_ != nullptr) os << vmm_->Describe();
  if (arrays_ != nullptr) os << arrays_->Describe();
  if (resources_ != nullptr) os << resources_->Describe();
  if (libraries_ != nullptr) os << libraries_->Describe();
  if (legacy_ != nullptr) os << legacy_->Describe();
  os << runtime_teardown_lines_;
  return os.str();
}

}  // namespace fakecuda
