// Copyright 2026 The cuhal Authors.
// The fake driver's devices and contexts: each device's primary-context state and memory budget,
// the live contexts (created and primary), and the created contexts destroyed so far.
//
// Invariants:
//  1. The device list is fixed at construction (one Device per DriverOptions profile, ordinal =
//     index); a device's profile never changes, so DriverState::profile() may read it without
//     the lock.
//  2. A context id is never reused. A primary context keeps one id per device for the driver's
//     life (Device::primary_ctx_id, 0 until first retained); it is live while in the table.
//  3. A created context, once removed, is remembered as destroyed with its device (the H200 still
//     answers cuCtxGetDevice for a destroyed context made current again; context_entry.cc).
//  4. Removing a context only forgets it: its streams, events, memory and modules are torn down
//     first by DriverState::TeardownContext.
#ifndef CUHAL_FAKECUDA_INTERNAL_CONTEXT_TABLE_H_
#define CUHAL_FAKECUDA_INTERNAL_CONTEXT_TABLE_H_

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fakecuda/device_profile.h"

namespace fakecuda {

struct Device {
  int ordinal = 0;
  DeviceProfile profile;
  std::uint64_t primary_ctx_id = 0;  // 0 until first retained; never changes after
  int primary_refcount = 0;
  // Of primary_refcount, the retains the CUDA runtime (libcudart) holds: counted when it puts
  // its per-context state on an activation of the primary context (context_local_storage[0]),
  // uncounted by the first successful release after it deleted that state (context_local_storage
  // [1], its exit path). A cuDevicePrimaryCtxReset (cudaDeviceReset) leaves the runtime's retain
  // owed, and the runtime never releases it: the leak report names these as the runtime's, not
  // the program's (docs/cudart_on_the_fake.md, "The leak report").
  int runtime_retains = 0;
  bool runtime_release_due = false;  // the runtime deleted its state: its release comes next
  unsigned primary_flags = 0;
  std::size_t bytes_in_use = 0;  // device allocations + pool reservations
  CUdeviceptr next_va = 0;       // bump pointer of this device's virtual address range
  std::uint64_t default_pool_id = 0;
  std::uint64_t current_pool_id = 0;
  // Set when a context of this device was destroyed (or the primary context reset) while it held
  // a sticky error; from then on no context of the device can be made (retain and create are
  // CUDA_ERROR_DEVICE_UNAVAILABLE) for the driver's life (context_entry.cc, MarkIfFaulted).
  bool unavailable = false;
  // Some context of this device has been made (the first one takes more stream ids:
  // context_entry.cc, MakeContext).
  bool had_context = false;

  // Bytes of device memory not in use.
  std::size_t free_bytes() const {
    return profile.total_memory - std::min(bytes_in_use, profile.total_memory);
  }
};

struct Context {
  std::uint64_t id = 0;
  // What cuCtxGetId reports: the real driver's context ids count every context made, a primary
  // context made active again included (ContextTable::Create), unlike `id`.
  std::uint64_t public_id = 0;
  // cuStreamGetId of its legacy stream (one of the stream ids the context takes when it is made;
  // context_entry.cc, MakeContext).
  std::uint64_t legacy_public_id = 0;
  // cuCtxAttach's count of attachments not yet detached (streamctx_entry.cc).
  int attach_count = 0;
  int device = 0;
  bool primary = false;
  unsigned flags = 0;
  CUresult sticky = CUDA_SUCCESS;  // once set, every call on this context returns it
  std::uint64_t legacy_stream_id = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> per_thread_streams;  // thread key -> stream id
  std::map<int, std::size_t> limits;
  std::set<std::uint64_t> peers;  // contexts whose memory this one may access
  // A primary context the CUDA runtime has put its per-context state on (Device::runtime_retains).
  bool runtime_state = false;
  // cuCtxSetCacheConfig / cuCtxSetSharedMemConfig (fakecuda/entry/streamctx_entry.cc): stored
  // preferences, with no effect on the fake's kernels.
  int cache_config = CU_FUNC_CACHE_PREFER_NONE;
  int shared_mem_config = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
  // cuCtxWaitEvent: the event records (stream id, seq) every op enqueued in this context from
  // then on waits for (DriverState::Enqueue adds them; satisfied ones are dropped there).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> waits;
};

// Devices and contexts of one fake driver.
//
// Ownership: one per DriverState, held privately by it (DriverState::contexts()); owns the
// Context objects (pointers stay valid until Remove). Thread-safety: none of its own; every use
// is under DriverState::mu, which the accessor requires (checked by the thread-safety preset),
// except the fixed profiles (invariant 1). Stream ordering: none here.
class ContextTable {
 public:
  using Map = std::unordered_map<std::uint64_t, std::unique_ptr<Context>>;

  explicit ContextTable(const std::vector<DeviceProfile>& profiles);
  ContextTable(const ContextTable&) = delete;             // owns the contexts
  ContextTable& operator=(const ContextTable&) = delete;  // ditto

  // --- devices (ordinals must be valid: 0 <= ordinal < device_count()) ---
  int device_count() const { return static_cast<int>(devices_.size()); }
  Device& device(int ordinal) { return devices_[static_cast<std::size_t>(ordinal)]; }
  const Device& device(int ordinal) const { return devices_[static_cast<std::size_t>(ordinal)]; }
  const std::vector<Device>& devices() const { return devices_; }

  // --- contexts ---
  // The live context with this id or handle, or null.
  Context* Find(std::uint64_t id);
  const Context* Find(std::uint64_t id) const;
  Context* Find(CUcontext handle);
  bool IsLive(std::uint64_t id) const { return contexts_.count(id) != 0; }
  // The sticky error of live context `id`; CUDA_SUCCESS for a healthy or missing one.
  CUresult StickyError(std::uint64_t id) const;
  // Makes a live context `id` (not live already) on `device`.
  Context* Create(std::uint64_t id, int device, bool primary, unsigned flags);
  // Forgets live context `id` (torn down already, invariant 4); a created one is remembered as
  // destroyed (invariant 3). Nothing happens for an id that is not live.
  void Remove(std::uint64_t id);
  // The device of `id` when it names a destroyed context (a destroyed created context, or a
  // device's primary context while inactive), else -1.
  int DestroyedContextDevice(std::uint64_t id) const;
  // Read-only view of the live contexts (inventories, leak reports).
  const Map& all() const { return contexts_; }

 private:
  std::vector<Device> devices_;
  Map contexts_;
  // Created contexts destroyed so far: id -> device.
  std::unordered_map<std::uint64_t, int> destroyed_;
  std::uint64_t next_public_id_ = 1;  // Context::public_id
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_CONTEXT_TABLE_H_
