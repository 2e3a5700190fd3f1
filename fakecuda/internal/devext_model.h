// Copyright 2026 The cuhal Authors.
// The fake driver's host-side state for the "devext" entry points (fakecuda/entry/devext_*.cc):
// async-notification and log callback registrations, the descriptors
// cuMemPoolExportToShareableHandle handed out (so that an import can name the pool again), and
// external memory / semaphore objects imported from a VMM memory's descriptor. None of it is
// stream work: everything takes effect at the call.
//
// Invariants:
//  1. Registration handles (CUasyncCallbackHandle, CUlogsCallbackHandle, CUexternalMemory,
//     CUexternalSemaphore) are never-reused ids encoded with the low 4 bits 0 (no HandleKind
//     uses 0, so no other table ever decodes one) and the registration kind in bits 4-7; they
//     are looked up, never dereferenced, so garbage and unregistered handles are not found.
//  2. An exported pool descriptor is a memfd the caller owns; the model keeps only its identity
//     (st_dev, st_ino) and the pool's id (pools' ids are never reused), so a descriptor that
//     outlives its pool names nothing.
//  3. An external memory object holds its own duplicate of the memory's memfd (closed when the
//     object is destroyed, or with the model), so the bytes outlive cuMemRelease of the handle
//     it came from; buffers mapped from it are mmaps of that memfd (device allocations that
//     cuMemFree releases).
#ifndef CUHAL_FAKECUDA_INTERNAL_DEVEXT_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_DEVEXT_MODEL_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

namespace fakecuda {

// Ownership: one per DriverState, created on first use (DriverState::devext()). Thread-safety:
// none of its own; every use is under DriverState::mu.
class DevextModel {
 public:
  enum class Kind : std::uint64_t {
    kAsyncNotification = 1,
    kLogCallback = 2,
    kExternalMemory = 3,
    kExternalSemaphore = 4,
  };

  struct Registration {
    Kind kind = Kind::kAsyncNotification;
    int device = 0;  // async notifications only
    void* fn = nullptr;
    void* user = nullptr;
    // External memory (invariant 3): the duplicated memfd and the imported size.
    int fd = -1;
    std::size_t size = 0;
  };

  DevextModel() = default;
  ~DevextModel();  // closes the descriptors of external memory objects still alive
  DevextModel(const DevextModel&) = delete;             // registrations are named by id
  DevextModel& operator=(const DevextModel&) = delete;  // ditto

  // A new registration's handle value (invariant 1).
  std::uintptr_t Register(const Registration& r);
  // The registration `handle` names, of `kind`, or null.
  const Registration* Find(Kind kind, std::uintptr_t handle) const;
  // Removes it (closing an external memory's descriptor); false when `handle` names no
  // registration of `kind`.
  bool Unregister(Kind kind, std::uintptr_t handle);

  // Pool export descriptors (invariant 2).
  void NoteExport(std::uint64_t st_dev, std::uint64_t st_ino, std::uint64_t pool_id);
  // The pool id an exported descriptor names, or 0.
  std::uint64_t ExportedPool(std::uint64_t st_dev, std::uint64_t st_ino) const;

 private:
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, Registration> registrations_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> exports_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_DEVEXT_MODEL_H_
