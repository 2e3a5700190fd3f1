// Copyright 2026 The cuhal Authors.
// User objects and the destructor thread (see user_object_model.h).
#include "fakecuda/internal/user_object_model.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <thread>

#include "core/base/mutex.h"
#include "fakecuda/internal/driver_state.h"

namespace fakecuda {
namespace {

// The process-wide thread that runs user object destructors, in the order their objects died.
// Started on first use and never stopped: it outlives every driver (a destructor may be posted by
// a queued launch's last op while a driver is torn down), so it is made once and deliberately
// never destroyed (it holds no resource but the thread).
class DestructorThread {
 public:
  void Post(CUhostFn fn, void* ptr) {
    cuhal::MutexLock lock(mu_);
    if (!started_) {
      started_ = true;
      thread_ = std::thread([this] { Loop(); });
    }
    queue_.emplace_back(fn, ptr);
    cv_.NotifyOne();
  }
  std::uint64_t run() const { return run_.load(); }

 private:
  void Loop() {
    cuhal::MutexLock lock(mu_);
    for (;;) {
      while (queue_.empty()) cv_.Wait(mu_);
      // Woken by a post: the destructors run a moment later, after the call that posted them has
      // returned (measured: none had run right after cuGraphExecDestroy returned), not racing it.
      {
        cuhal::MutexUnlock unlock(mu_);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      while (!queue_.empty()) {
        const auto [fn, ptr] = queue_.front();
        queue_.pop_front();
        cuhal::MutexUnlock unlock(mu_);
        try {
          fn(ptr);
        } catch (...) {
          // A destructor that throws: the real driver would terminate; the fake drops it.
        }
        run_.fetch_add(1);
      }
    }
  }

  cuhal::Mutex mu_;
  cuhal::CondVar cv_;
  bool started_ CUHAL_GUARDED_BY(mu_) = false;
  std::thread thread_;
  std::deque<std::pair<CUhostFn, void*>> queue_ CUHAL_GUARDED_BY(mu_);
  std::atomic<std::uint64_t> run_{0};
};

DestructorThread& Destructors() {
  static DestructorThread* const thread = new DestructorThread;  // never destroyed (above)
  return *thread;
}

constexpr HandleKind kUserObjectKind = HandleKind::kUserObject;

}  // namespace

void RetainUserObject(UserObject& object, std::int64_t count) { object.refs.fetch_add(count); }

bool DropUserObjectRefs(UserObject& object, std::int64_t count) {
  return object.refs.fetch_sub(count) == count;
}

void ReleaseUserObject(UserObject& object, std::int64_t count) {
  if (DropUserObjectRefs(object, count)) Destructors().Post(object.destroy, object.ptr);
}

std::uint64_t UserObjectDestructorsRun() { return Destructors().run(); }

UserObjectRefs::UserObjectRefs(const UserObjectRefs& other)
    : refs_(other.refs_), nested_(other.nested_) {
  for (auto& [id, held] : refs_) RetainUserObject(*held.first, held.second);
}

UserObjectRefs& UserObjectRefs::operator=(UserObjectRefs&& other) noexcept {
  if (this != &other) {
    ReleaseAll();
    refs_ = std::move(other.refs_);
    nested_ = std::move(other.nested_);
    other.refs_.clear();
    other.nested_.clear();
  }
  return *this;
}

UserObjectRefs::~UserObjectRefs() { ReleaseAll(); }

void UserObjectRefs::ReleaseAll() {
  for (auto& [id, held] : refs_) ReleaseUserObject(*held.first, held.second);
  refs_.clear();
  nested_.clear();
}

void UserObjectRefs::Add(std::shared_ptr<UserObject> object, std::int64_t count) {
  auto& held = refs_[object->id];
  held.first = std::move(object);
  held.second += count;
}

void UserObjectRefs::Release(const std::shared_ptr<UserObject>& object, std::int64_t count) {
  auto it = refs_.find(object->id);
  if (it != refs_.end()) {
    it->second.second -= std::min(it->second.second, count);
    if (it->second.second == 0) refs_.erase(it);
  }
  ReleaseUserObject(*object, count);
}

CUuserObject UserObjectTable::Add(std::uint64_t id, void* ptr, CUhostFn destroy,
                                  std::int64_t refs) {
  // Dead objects are kept (invariant 4) until there are many.
  if (++adds_since_prune_ > kMaxDeadUserObjects) {
    adds_since_prune_ = 0;
    for (auto it = objects_.begin(); it != objects_.end();) {
      it = it->second->refs.load() <= 0 ? objects_.erase(it) : std::next(it);
    }
  }
  auto object = std::make_shared<UserObject>();
  object->id = id;
  object->ptr = ptr;
  object->destroy = destroy;
  object->refs.store(refs);
  objects_.emplace(id, std::move(object));
  return EncodeHandle<CUuserObject>(kUserObjectKind, id);
}

std::shared_ptr<UserObject> UserObjectTable::Find(CUuserObject handle) {
  auto it = objects_.find(DecodeHandle(kUserObjectKind, handle));
  return it == objects_.end() ? nullptr : it->second;
}

int UserObjectTable::live() const {
  int n = 0;
  for (const auto& [id, object] : objects_) n += object->refs.load() > 0 ? 1 : 0;
  return n;
}

}  // namespace fakecuda
