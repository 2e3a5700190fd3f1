// Copyright 2026 The cuhal Authors.
// The fake driver's user objects (cuUserObjectCreate, cuUserObjectRetain/Release,
// cuGraphRetainUserObject/cuGraphReleaseUserObject): a destructor callback with a reference
// count that the caller, graphs and executable graphs share. When the last reference goes, the
// destructor runs on a driver-owned thread (cuda.h: "executed by a shared internal thread"),
// never on the caller's, so a destructor may take a lock its releaser holds. Internal to
// fakecuda; the entry points are fakecuda/entry/graphx_entry.cc.
//
// Measured 2026-12-06 on an H100, driver 580.159.04 (ci/gpu-probes/graphx_probe.cc; results in
// ci/gpu-probes/results/2026-12-06-h100-graphx.real.txt): the count is one number per object, and
// the destructor runs when a release brings it to exactly zero: on the releasing thread, inside
// the call, for cuUserObjectRelease; on a driver thread, after the call, when a graph or
// executable graph lets go. Releases are not checked against what the releaser holds (releasing
// more than a graph holds succeeds and takes the object's count down; later releases take it
// below zero, and no destructor runs again), and the handle of a dead object is still accepted.
//
// Invariants:
//  1. A UserObject's count is atomic and changed only through Retain/DropUserObjectRefs, so
//     references can be dropped where the driver lock is not held (a queued graph launch that
//     owns its executable graph's references drops them when its last op is destroyed).
//  2. A drop that brings the count to exactly zero runs the destructor once (on the caller's
//     thread for cuUserObjectRelease, else posted to the destructor thread).
//  3. UserObjectRefs (a graph's or executable graph's references) owns what it holds: copying it
//     retains the same references again (cuGraphClone, instantiation), destroying it releases
//     them.
//  4. The table keeps dead objects (their handles stay usable, as on the real driver); it forgets
//     them once every kMaxDeadUserObjects creations.
#ifndef CUHAL_FAKECUDA_INTERNAL_USER_OBJECT_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_USER_OBJECT_MODEL_H_

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fakecuda {

struct UserObject {
  std::uint64_t id = 0;
  void* ptr = nullptr;
  CUhostFn destroy = nullptr;
  std::atomic<std::int64_t> refs{0};
};

// Adds `count` references.
void RetainUserObject(UserObject& object, std::int64_t count);
// Drops `count` references; true when that brought the count to exactly zero (the caller then
// runs the destructor, invariant 2).
bool DropUserObjectRefs(UserObject& object, std::int64_t count);
// Drops `count` references; at zero posts the destructor to the destructor thread.
void ReleaseUserObject(UserObject& object, std::int64_t count);
// How many destructors the destructor thread has run so far (all drivers; for tests).
std::uint64_t UserObjectDestructorsRun();

// References held by a graph or an executable graph (invariant 3).
class UserObjectRefs {
 public:
  UserObjectRefs() = default;
  UserObjectRefs(const UserObjectRefs& other);  // retains the same references again
  UserObjectRefs(UserObjectRefs&& other) noexcept
      : refs_(std::move(other.refs_)), nested_(std::move(other.nested_)) {
    other.refs_.clear();
    other.nested_.clear();
  }
  UserObjectRefs& operator=(const UserObjectRefs&) = delete;  // owns references
  UserObjectRefs& operator=(UserObjectRefs&& other) noexcept;
  ~UserObjectRefs();

  // Takes over `count` references to `object` (already counted on it).
  void Add(std::shared_ptr<UserObject> object, std::int64_t count);
  // cuGraphReleaseUserObject: the holder lets go of up to `count` of its references to `object`,
  // and the object's count drops by `count` whatever it held (measured).
  void Release(const std::shared_ptr<UserObject>& object, std::int64_t count);
  // Shares another holder's references (a child graph node's, held by an executable graph).
  void AddNested(std::shared_ptr<const UserObjectRefs> refs) {
    if (refs != nullptr) nested_.push_back(std::move(refs));
  }
  bool empty() const { return refs_.empty() && nested_.empty(); }

 private:
  void ReleaseAll();
  std::map<std::uint64_t, std::pair<std::shared_ptr<UserObject>, std::int64_t>> refs_;
  std::vector<std::shared_ptr<const UserObjectRefs>> nested_;
};

// The live user objects of one driver, by handle. Thread-safety: none of its own; used under
// DriverState::mu (it is GraphModel's).
class UserObjectTable {
 public:
  // A new object with `refs` references; returns its handle.
  CUuserObject Add(std::uint64_t id, void* ptr, CUhostFn destroy, std::int64_t refs);
  // The object behind `handle` (dead ones too, invariant 4), or null.
  std::shared_ptr<UserObject> Find(CUuserObject handle);
  // Objects whose count is above zero.
  int live() const;

  static constexpr std::size_t kMaxDeadUserObjects = 65536;

 private:
  std::size_t adds_since_prune_ = 0;
  std::unordered_map<std::uint64_t, std::shared_ptr<UserObject>> objects_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_USER_OBJECT_MODEL_H_
