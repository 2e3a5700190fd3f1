// Copyright 2026 The cuhal Authors.
// The fake driver's user objects (cuUserObjectCreate, cuUserObjectRetain/Release,
// cuGraphRetainUserObject/cuGraphReleaseUserObject): a destructor callback with a reference
// count that the caller, graphs and executable graphs share. When the last reference goes, the
// destructor runs on a driver-owned thread (cuda.h: "executed by a shared internal thread"),
// never on the caller's, so a destructor may take a lock its releaser holds. Internal to
// fakecuda; the entry points are fakecuda/entry/graphx_entry.cc.
//
// Invariants:
//  1. A UserObject's count is atomic and changed only through Retain/ReleaseUserObject, so
//     references can be dropped where the driver lock is not held (a queued graph launch that
//     owns its executable graph's references drops them when its last op is destroyed).
//  2. The count reaching zero posts the destructor once to the destructor thread; the object's
//     handle is then dead (UserObjectTable::Find answers null), and the table forgets it.
//  3. UserObjectRefs (a graph's or executable graph's references) owns what it holds: copying it
//     retains the same references again (cuGraphClone, instantiation), destroying it releases
//     them.
#ifndef CUHAL_FAKECUDA_INTERNAL_USER_OBJECT_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_USER_OBJECT_MODEL_H_

#include <cuda.h>

#include <atomic>
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
// Drops `count` references; at zero posts the destructor to the destructor thread (invariant 2).
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
  // Releases `count` of the references it holds to object `id`; false (nothing released) when
  // it holds fewer.
  bool Release(std::uint64_t id, std::int64_t count);
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
  // The live object behind `handle`, or null (never made, or its count reached zero).
  std::shared_ptr<UserObject> Find(CUuserObject handle);
  // Objects whose count has not reached zero.
  int live() const;

 private:
  std::unordered_map<std::uint64_t, std::shared_ptr<UserObject>> objects_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_USER_OBJECT_MODEL_H_
