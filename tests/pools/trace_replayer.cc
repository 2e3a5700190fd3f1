// Copyright 2026 The cuhal Authors.
#include "tests/pools/trace_replayer.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "core/symbols/api_status.h"

namespace cuhal::pools {
namespace {

// How long a blocked stream's host function waits for its unblock step before giving up (so
// that a trace that synchronizes a blocked stream fails instead of hanging).
constexpr auto kGateTimeout = std::chrono::seconds(20);

std::vector<std::string> Split(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  std::string word;
  while (in >> word) out.push_back(word);
  return out;
}

bool ParseOneNumber(std::string_view s, std::uint64_t* out) {
  if (s == "max") {
    *out = std::numeric_limits<std::uint64_t>::max();
    return true;
  }
  if (s.empty()) return false;
  std::uint64_t multiplier = 1;
  switch (s.back()) {
    case 'K':
      multiplier = 1ULL << 10;
      break;
    case 'M':
      multiplier = 1ULL << 20;
      break;
    case 'G':
      multiplier = 1ULL << 30;
      break;
    default:
      break;
  }
  if (multiplier != 1) s.remove_suffix(1);
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  *out = v * multiplier;
  return true;
}

// "32M+1" -> 33554433.
bool ParseNumber(std::string_view s, std::uint64_t* out) {
  std::uint64_t total = 0;
  while (true) {
    size_t plus = s.find('+');
    std::uint64_t v = 0;
    if (!ParseOneNumber(s.substr(0, plus), &v)) return false;
    total += v;
    if (plus == std::string_view::npos) break;
    s = s.substr(plus + 1);
  }
  *out = total;
  return true;
}

bool ParseResultName(std::string_view name, CUresult* out) {
  for (int code = 0; code <= 1000; ++code) {
    if (cuhal::CudaResultEnumName(static_cast<CUresult>(code)) == name) {
      *out = static_cast<CUresult>(code);
      return true;
    }
  }
  return false;
}

struct OpSpec {
  const char* name;
  size_t min_args;
  size_t max_args;
};
constexpr OpSpec kOps[] = {
    {"pool", 1, 16},
    {"try_create", 0, 16},
    {"stream", 1, 2},
    {"event", 1, 1},
    {"alloc", 3, 3},
    {"alloc_async", 3, 3},
    {"alloc_null", 2, 2},
    {"free", 2, 2},
    {"free_ptr", 2, 2},
    {"free_sync", 1, 1},
    {"record", 2, 2},
    {"wait", 2, 2},
    {"sync_stream", 1, 1},
    {"sync_event", 1, 1},
    {"sync_ctx", 0, 0},
    {"query_stream", 1, 1},
    {"poll_stream", 1, 1},
    {"poll_event", 1, 1},
    {"block", 1, 1},
    {"unblock", 1, 1},
    {"trim", 1, 1},
    {"set", 2, 2},
    {"get", 1, 1},
    {"destroy", 0, 0},
    {"destroy_default", 0, 0},
    {"set_current", 1, 1},
    {"get_current", 0, 0},
    {"set_access", 2, 3},
    {"get_access", 1, 1},
    {"attr_pool", 1, 1},
    {"no_context", 0, 0},
    {"restore_context", 0, 0},
};

const OpSpec* FindOp(std::string_view op) {
  for (const OpSpec& spec : kOps) {
    if (op == spec.name) return &spec;
  }
  return nullptr;
}

bool AttrFromName(std::string_view name, CUmemPool_attribute* attr, bool* is_int) {
  struct Entry {
    const char* name;
    CUmemPool_attribute attr;
    bool is_int;
  };
  static constexpr Entry kAttrs[] = {
      {"follow_event_deps", CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, true},
      {"opportunistic", CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, true},
      {"internal_deps", CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, true},
      {"release_threshold", CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, false},
      {"reserved_current", CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, false},
      {"reserved_high", CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, false},
      {"used_current", CU_MEMPOOL_ATTR_USED_MEM_CURRENT, false},
      {"used_high", CU_MEMPOOL_ATTR_USED_MEM_HIGH, false},
  };
  for (const Entry& e : kAttrs) {
    if (name == e.name) {
      *attr = e.attr;
      *is_int = e.is_int;
      return true;
    }
  }
  return false;
}

// Pool properties from "key=value" words.
bool ParseProps(const std::vector<std::string>& words, size_t first, CUmemPoolProps* props,
                std::string* error) {
  *props = CUmemPoolProps{};
  props->allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props->handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props->location.id = 0;
  for (size_t i = first; i < words.size(); ++i) {
    const std::string& w = words[i];
    size_t eq = w.find('=');
    if (eq == std::string::npos) {
      *error = "pool property '" + w + "' is not key=value";
      return false;
    }
    std::string key = w.substr(0, eq);
    std::string value = w.substr(eq + 1);
    std::uint64_t n = 0;
    bool numeric = ParseNumber(value, &n);
    if (key == "alloc") {
      if (value == "pinned") {
        props->allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      } else if (value == "managed") {
        props->allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
      } else if (numeric) {
        props->allocType = static_cast<CUmemAllocationType>(n);
      } else {
        *error = "alloc=" + value;
        return false;
      }
    } else if (key == "loc") {
      if (value == "device") {
        props->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      } else if (value == "host") {
        props->location.type = CU_MEM_LOCATION_TYPE_HOST;
      } else if (value == "host_numa") {
        props->location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
      } else if (numeric) {
        props->location.type = static_cast<CUmemLocationType>(n);
      } else {
        *error = "loc=" + value;
        return false;
      }
    } else if (key == "dev" && (numeric || value == "-1")) {
      props->location.id = value == "-1" ? -1 : static_cast<int>(n);
    } else if (key == "handles" && numeric) {
      props->handleTypes = static_cast<CUmemAllocationHandleType>(n);
    } else if (key == "max" && numeric) {
      props->maxSize = static_cast<size_t>(n);
    } else if (key == "usage" && numeric) {
      props->usage = static_cast<unsigned short>(n);
    } else if (key == "reserved" && numeric) {
      props->reserved[0] = static_cast<unsigned char>(n);
    } else if (key == "win32" && numeric) {
      props->win32SecurityAttributes = n != 0 ? reinterpret_cast<void*>(0x1000) : nullptr;
    } else {
      *error = "unknown pool property '" + w + "'";
      return false;
    }
  }
  return true;
}

std::string Hex(std::uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

// Holds a stream's later work behind a host function until Open(). Never synchronizes anything
// itself (a synchronization would release pool memory and change what the trace measures).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  bool timed_out = false;

  static void CUDA_CB Run(void* self) {
    auto* gate = static_cast<Gate*>(self);
    std::unique_lock<std::mutex> lock(gate->mu);
    if (!gate->cv.wait_for(lock, kGateTimeout, [gate] { return gate->open; })) {
      gate->timed_out = true;
      gate->open = true;
    }
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

struct Slot {
  CUdeviceptr ptr = 0;  // the last pointer it held (kept after the free, for double frees)
  std::size_t size = 0;
  bool live = false;
};

// Replays one trace. Owns every driver object it makes and destroys them in Cleanup().
class Replayer {
 public:
  Replayer(const cuhal::CudaApi& api, const Trace& trace) : api_(api), trace_(trace) {}
  ~Replayer() = default;
  Replayer(const Replayer&) = delete;             // owns driver objects
  Replayer& operator=(const Replayer&) = delete;  // ditto

  ReplayResult Run() {
    ReplayResult result;
    if (CUresult r = api_.cuDeviceGet(&device_, 0); r != CUDA_SUCCESS) {
      result.fatal = "cuDeviceGet(0) = " + ResultName(r);
      return result;
    }
    if (CUresult r = api_.cuDevicePrimaryCtxRetain(&ctx_, device_); r != CUDA_SUCCESS) {
      result.fatal = "cuDevicePrimaryCtxRetain = " + ResultName(r);
      return result;
    }
    retained_ = true;
    if (CUresult r = api_.cuCtxSetCurrent(ctx_); r != CUDA_SUCCESS) {
      result.fatal = "cuCtxSetCurrent = " + ResultName(r);
      Cleanup(&result);
      return result;
    }
    if (CUresult r = api_.cuDeviceGetDefaultMemPool(&default_pool_, device_); r != CUDA_SUCCESS) {
      result.fatal = "cuDeviceGetDefaultMemPool = " + ResultName(r);
      Cleanup(&result);
      return result;
    }
    for (const TraceStep& step : trace_.steps) {
      StepResult out;
      std::string fatal;
      out.err = Do(step, &out, &fatal);
      if (!fatal.empty()) {
        result.fatal = trace_.name + ":" + std::to_string(step.line) + ": " + fatal;
        break;
      }
      if (stats_readable_) ReadStats(&out);
      result.steps.push_back(std::move(out));
    }
    Cleanup(&result);
    return result;
  }

 private:
  CUstream StreamOf(const std::string& name, std::string* fatal) {
    if (name == "legacy") return CU_STREAM_LEGACY;
    auto it = streams_.find(name);
    if (it == streams_.end()) {
      *fatal = "unknown stream " + name;
      return nullptr;
    }
    return it->second;
  }
  CUevent EventOf(const std::string& name, std::string* fatal) {
    auto it = events_.find(name);
    if (it == events_.end()) {
      *fatal = "unknown event " + name;
      return nullptr;
    }
    return it->second;
  }

  void ReadStats(StepResult* out) {
    static constexpr CUmemPool_attribute kAttrs[kNumStats] = {
        CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
        CU_MEMPOOL_ATTR_USED_MEM_CURRENT, CU_MEMPOOL_ATTR_USED_MEM_HIGH};
    PoolStats stats{};
    for (int i = 0; i < kNumStats; ++i) {
      cuuint64_t v = 0;
      CUresult r = api_.cuMemPoolGetAttribute(pool_, kAttrs[i], &v);
      if (r != CUDA_SUCCESS) {
        out->stats_err = r;
        return;
      }
      stats[static_cast<size_t>(i)] = v;
    }
    out->stats = stats;
  }

  // Whether [ptr, ptr + size) overlaps memory freed earlier; forgets the ranges it overlaps.
  bool TakeFreed(CUdeviceptr ptr, std::size_t size) {
    bool overlap = false;
    for (auto it = freed_.begin(); it != freed_.end();) {
      if (ptr < it->first + it->second && it->first < ptr + size) {
        overlap = true;
        it = freed_.erase(it);
      } else {
        ++it;
      }
    }
    return overlap;
  }

  CUresult Alloc(const TraceStep& step, bool from_pool, StepResult* out, std::string* fatal) {
    std::uint64_t bytes = 0;
    if (!ParseNumber(step.args[1], &bytes)) {
      *fatal = "bad size " + step.args[1];
      return CUDA_SUCCESS;
    }
    CUstream s = StreamOf(step.args[2], fatal);
    if (!fatal->empty()) return CUDA_SUCCESS;
    CUdeviceptr p = 0;
    CUresult r = from_pool ? api_.cuMemAllocFromPoolAsync(&p, bytes, pool_, s)
                           : api_.cuMemAllocAsync(&p, bytes, s);
    if (r != CUDA_SUCCESS) return r;
    Slot& slot = slots_[step.args[0]];
    if (slot.live) {
      *fatal = "slot " + step.args[0] + " is still live";
      return r;
    }
    slot = Slot{p, static_cast<std::size_t>(bytes), true};
    out->reuse = TakeFreed(p, slot.size);
    if (!step.same_as.empty()) {
      auto it = slots_.find(step.same_as);
      out->same = it != slots_.end() && it->second.ptr == p;
    }
    out->values["ptr"] = Hex(p);
    return r;
  }

  CUresult Free(Slot& slot, CUstream s) {
    CUresult r = api_.cuMemFreeAsync(slot.ptr, s);
    if (r == CUDA_SUCCESS && slot.live) {
      slot.live = false;
      freed_.emplace_back(slot.ptr, slot.size);
    }
    return r;
  }

  CUresult Poll(const std::function<CUresult()>& query) {
    CUresult r = CUDA_ERROR_NOT_READY;
    for (int i = 0; i < 200000 && r == CUDA_ERROR_NOT_READY; ++i) {
      r = query();
      if (r == CUDA_ERROR_NOT_READY && i > 100) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    return r;
  }

  CUresult Do(const TraceStep& step, StepResult* out, std::string* fatal) {
    const std::string& op = step.op;
    const auto& a = step.args;
    if (op == "pool") {
      if (a[0] == "create") {
        CUmemPoolProps props;
        if (!ParseProps(a, 1, &props, fatal)) return CUDA_SUCCESS;
        CUresult r = api_.cuMemPoolCreate(&pool_, &props);
        if (r == CUDA_SUCCESS) {
          own_pool_ = true;
          stats_readable_ = true;
        }
        return r;
      }
      if (a[0] == "default") {
        pool_ = default_pool_;
        // Start from an empty default pool with default attributes (earlier users of the
        // process may have left memory in it).
        api_.cuCtxSynchronize();
        int one = 1;
        cuuint64_t zero = 0;
        api_.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &one);
        api_.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &one);
        api_.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &one);
        api_.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero);
        api_.cuMemPoolTrimTo(pool_, 0);
        api_.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero);
        api_.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero);
        stats_readable_ = true;
        default_adopted_ = true;
        return CUDA_SUCCESS;
      }
      *fatal = "pool create|default";
      return CUDA_SUCCESS;
    }
    if (op == "try_create") {
      CUmemPoolProps props;
      if (!ParseProps(a, 0, &props, fatal)) return CUDA_SUCCESS;
      CUmemoryPool p = nullptr;
      CUresult r = api_.cuMemPoolCreate(&p, &props);
      if (r == CUDA_SUCCESS) api_.cuMemPoolDestroy(p);
      return r;
    }
    if (op == "stream") {
      unsigned flags = a.size() > 1 && a[1] == "nonblocking" ? CU_STREAM_NON_BLOCKING : 0;
      CUstream s = nullptr;
      CUresult r = api_.cuStreamCreate(&s, flags);
      if (r == CUDA_SUCCESS) streams_[a[0]] = s;
      return r;
    }
    if (op == "event") {
      CUevent e = nullptr;
      CUresult r = api_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
      if (r == CUDA_SUCCESS) events_[a[0]] = e;
      return r;
    }
    if (op == "alloc") return Alloc(step, true, out, fatal);
    if (op == "alloc_async") return Alloc(step, false, out, fatal);
    if (op == "alloc_null") {
      std::uint64_t bytes = 0;
      ParseNumber(a[0], &bytes);
      CUstream s = StreamOf(a[1], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      return api_.cuMemAllocFromPoolAsync(nullptr, bytes, pool_, s);
    }
    if (op == "free") {
      auto it = slots_.find(a[0]);
      CUstream s = StreamOf(a[1], fatal);
      if (it == slots_.end()) *fatal = "unknown slot " + a[0];
      if (!fatal->empty()) return CUDA_SUCCESS;
      return Free(it->second, s);
    }
    if (op == "free_ptr") {
      CUstream s = StreamOf(a[1], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      CUdeviceptr p = 0;
      if (a[0] == "null") {
        p = 0;
      } else if (a[0] == "unknown") {
        p = 0x10000;
      } else if (a[0].rfind("interior:", 0) == 0) {
        p = slots_[a[0].substr(9)].ptr + 256;
      } else if (a[0] == "device") {
        if (device_block_ == 0) {
          if (CUresult r = api_.cuMemAlloc(&device_block_, 4096); r != CUDA_SUCCESS) {
            *fatal = "cuMemAlloc for free_ptr device = " + ResultName(r);
            return CUDA_SUCCESS;
          }
        }
        p = device_block_;
      } else {
        *fatal = "free_ptr null|unknown|interior:K|device";
        return CUDA_SUCCESS;
      }
      return api_.cuMemFreeAsync(p, s);
    }
    if (op == "free_sync") {
      auto it = slots_.find(a[0]);
      if (it == slots_.end()) {
        *fatal = "unknown slot " + a[0];
        return CUDA_SUCCESS;
      }
      CUresult r = api_.cuMemFree(it->second.ptr);
      if (r == CUDA_SUCCESS && it->second.live) {
        it->second.live = false;
        freed_.emplace_back(it->second.ptr, it->second.size);
      }
      return r;
    }
    if (op == "record") {
      CUevent e = EventOf(a[0], fatal);
      CUstream s = StreamOf(a[1], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      return api_.cuEventRecord(e, s);
    }
    if (op == "wait") {
      CUstream s = StreamOf(a[0], fatal);
      CUevent e = EventOf(a[1], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      return api_.cuStreamWaitEvent(s, e, CU_EVENT_WAIT_DEFAULT);
    }
    if (op == "sync_stream") {
      CUstream s = StreamOf(a[0], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      return api_.cuStreamSynchronize(s);
    }
    if (op == "sync_event") {
      CUevent e = EventOf(a[0], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      return api_.cuEventSynchronize(e);
    }
    if (op == "sync_ctx") return api_.cuCtxSynchronize();
    if (op == "query_stream") {
      CUstream s = StreamOf(a[0], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      return api_.cuStreamQuery(s);
    }
    if (op == "poll_stream") {
      CUstream s = StreamOf(a[0], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      return Poll([&] { return api_.cuStreamQuery(s); });
    }
    if (op == "poll_event") {
      CUevent e = EventOf(a[0], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      return Poll([&] { return api_.cuEventQuery(e); });
    }
    if (op == "block") {
      CUstream s = StreamOf(a[0], fatal);
      if (!fatal->empty()) return CUDA_SUCCESS;
      auto gate = std::make_unique<Gate>();
      CUresult r = api_.cuLaunchHostFunc(s, &Gate::Run, gate.get());
      if (r == CUDA_SUCCESS) {
        open_gates_[a[0]] = gate.get();
        gates_.push_back(std::move(gate));
      }
      return r;
    }
    if (op == "unblock") {
      auto it = open_gates_.find(a[0]);
      if (it == open_gates_.end()) {
        *fatal = "stream " + a[0] + " is not blocked";
        return CUDA_SUCCESS;
      }
      it->second->Open();
      open_gates_.erase(it);
      return CUDA_SUCCESS;
    }
    if (op == "trim") {
      std::uint64_t keep = 0;
      ParseNumber(a[0], &keep);
      return api_.cuMemPoolTrimTo(pool_, static_cast<size_t>(keep));
    }
    if (op == "set" || op == "get") {
      CUmemPool_attribute attr;
      bool is_int = false;
      if (!AttrFromName(a[0], &attr, &is_int)) {
        *fatal = "unknown attribute " + a[0];
        return CUDA_SUCCESS;
      }
      if (op == "set") {
        std::uint64_t v = 0;
        ParseNumber(a[1], &v);
        int iv = static_cast<int>(v);
        cuuint64_t uv = v;
        return api_.cuMemPoolSetAttribute(pool_, attr, is_int ? static_cast<void*>(&iv) : &uv);
      }
      int iv = -1;
      cuuint64_t uv = ~cuuint64_t{0} - 1;
      CUresult r = api_.cuMemPoolGetAttribute(pool_, attr, is_int ? static_cast<void*>(&iv) : &uv);
      if (r == CUDA_SUCCESS)
        out->values["value"] = is_int ? std::to_string(iv) : std::to_string(uv);
      return r;
    }
    if (op == "destroy") {
      CUresult r = api_.cuMemPoolDestroy(pool_);
      if (r == CUDA_SUCCESS) {
        own_pool_ = false;
        stats_readable_ = false;
      }
      return r;
    }
    if (op == "destroy_default") return api_.cuMemPoolDestroy(default_pool_);
    if (op == "set_current") {
      return api_.cuDeviceSetMemPool(device_, a[0] == "default" ? default_pool_ : pool_);
    }
    if (op == "get_current") {
      CUmemoryPool p = nullptr;
      CUresult r = api_.cuDeviceGetMemPool(&p, device_);
      if (r == CUDA_SUCCESS) {
        out->values["current"] = p == default_pool_ ? "default" : p == pool_ ? "trace" : "other";
      }
      return r;
    }
    if (op == "set_access") {
      CUmemAccessDesc desc{};
      desc.location.type =
          a.size() > 2 && a[2] == "host" ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
      desc.location.id = std::atoi(a[0].c_str());
      desc.flags = a[1] == "rw"     ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                   : a[1] == "read" ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                    : CU_MEM_ACCESS_FLAGS_PROT_NONE;
      return api_.cuMemPoolSetAccess(pool_, &desc, 1);
    }
    if (op == "get_access") {
      CUmemLocation loc{};
      loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
      loc.id = std::atoi(a[0].c_str());
      CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_MAX;
      CUresult r = api_.cuMemPoolGetAccess(&flags, pool_, &loc);
      if (r == CUDA_SUCCESS) {
        out->values["access"] = flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? "rw"
                                : flags == CU_MEM_ACCESS_FLAGS_PROT_READ    ? "read"
                                : flags == CU_MEM_ACCESS_FLAGS_PROT_NONE    ? "none"
                                                                            : "other";
      }
      return r;
    }
    if (op == "attr_pool") {
      CUmemoryPool p = nullptr;
      CUresult r =
          api_.cuPointerGetAttribute(&p, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, slots_[a[0]].ptr);
      if (r == CUDA_SUCCESS) {
        out->values["pool"] = p == nullptr         ? "none"
                              : p == default_pool_ ? "default"
                              : p == pool_         ? "trace"
                                                   : "other";
      }
      return r;
    }
    if (op == "no_context") return api_.cuCtxSetCurrent(nullptr);
    if (op == "restore_context") return api_.cuCtxSetCurrent(ctx_);
    *fatal = "unknown step " + op;
    return CUDA_SUCCESS;
  }

  void Note(ReplayResult* result, const std::string& what, CUresult r) {
    if (r != CUDA_SUCCESS) result->notes.push_back("cleanup: " + what + " = " + ResultName(r));
  }

  void Cleanup(ReplayResult* result) {
    api_.cuCtxSetCurrent(ctx_);
    for (auto& gate : gates_) gate->Open();
    CUstream any = streams_.empty() ? nullptr : streams_.begin()->second;
    for (auto& [name, slot] : slots_) {
      if (slot.live) Note(result, "freeing slot " + name, api_.cuMemFreeAsync(slot.ptr, any));
    }
    Note(result, "cuCtxSynchronize", api_.cuCtxSynchronize());
    for (auto& gate : gates_) {
      if (gate->timed_out) {
        result->notes.push_back("a blocked stream was synchronized before its unblock step");
      }
    }
    if (own_pool_) Note(result, "cuMemPoolDestroy", api_.cuMemPoolDestroy(pool_));
    if (default_adopted_) {
      api_.cuMemPoolTrimTo(default_pool_, 0);
      api_.cuDeviceSetMemPool(device_, default_pool_);
    }
    if (device_block_ != 0) api_.cuMemFree(device_block_);  // may already be gone
    for (auto& [name, e] : events_) Note(result, "cuEventDestroy " + name, api_.cuEventDestroy(e));
    for (auto& [name, s] : streams_) {
      Note(result, "cuStreamDestroy " + name, api_.cuStreamDestroy(s));
    }
    api_.cuCtxSetCurrent(nullptr);
    if (retained_)
      Note(result, "cuDevicePrimaryCtxRelease", api_.cuDevicePrimaryCtxRelease(device_));
  }

  const cuhal::CudaApi& api_;
  const Trace& trace_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
  bool retained_ = false;
  CUmemoryPool pool_ = nullptr;
  CUmemoryPool default_pool_ = nullptr;
  bool own_pool_ = false;
  bool default_adopted_ = false;
  bool stats_readable_ = false;
  CUdeviceptr device_block_ = 0;
  std::map<std::string, CUstream> streams_;
  std::map<std::string, CUevent> events_;
  std::map<std::string, Slot> slots_;
  std::vector<std::pair<CUdeviceptr, std::size_t>> freed_;
  std::vector<std::unique_ptr<Gate>> gates_;
  std::map<std::string, Gate*> open_gates_;
};

std::string StatsValue(const std::optional<PoolStats>& stats, int i) {
  return stats ? std::to_string((*stats)[static_cast<size_t>(i)]) : "(none)";
}

std::string Bool(const std::optional<bool>& b) { return !b ? "(none)" : *b ? "yes" : "no"; }

}  // namespace

std::string ResultName(CUresult result) {
  std::string_view name = cuhal::CudaResultEnumName(result);
  if (name.empty()) return "CUresult " + std::to_string(static_cast<int>(result));
  return std::string(name);
}

bool ParseTrace(std::string_view text, const std::string& name, Trace* trace, std::string* error) {
  *trace = Trace{};
  trace->name = name;
  std::optional<PoolStats> carried;
  std::set<std::string> blocked;
  std::map<std::string, std::string> event_on_blocked;  // event -> stream, recorded while blocked
  std::istringstream in{std::string(text)};
  std::string raw;
  int line_no = 0;
  auto fail = [&](const std::string& what) {
    *error = name + ":" + std::to_string(line_no) + ": " + what;
    return false;
  };
  while (std::getline(in, raw)) {
    ++line_no;
    std::string line = raw;
    std::string comment;
    if (size_t hash = line.find('#'); hash != std::string::npos) {
      comment = line.substr(hash + 1);
      line = line.substr(0, hash);
    }
    std::string expect_text;
    if (size_t arrow = line.find("->"); arrow != std::string::npos) {
      expect_text = line.substr(arrow + 2);
      line = line.substr(0, arrow);
    }
    std::vector<std::string> words = Split(line);
    if (words.empty()) {
      if (!Split(expect_text).empty()) return fail("expectations without a step");
      continue;
    }
    TraceStep step;
    step.line = line_no;
    step.op = words[0];
    step.args.assign(words.begin() + 1, words.end());
    step.unmeasured = comment.find("UNMEASURED") != std::string::npos;
    {
      std::ostringstream joined;
      for (size_t i = 0; i < words.size(); ++i) joined << (i ? " " : "") << words[i];
      step.text = joined.str();
    }
    const OpSpec* spec = FindOp(step.op);
    if (spec == nullptr) return fail("unknown step '" + step.op + "'");
    if (step.args.size() < spec->min_args || step.args.size() > spec->max_args) {
      return fail("'" + step.op + "' takes " + std::to_string(spec->min_args) + " to " +
                  std::to_string(spec->max_args) + " arguments");
    }
    if (step.op == "pool") {
      if (carried) return fail("a trace has one pool");
      carried = PoolStats{};
    }
    // A blocked stream must not be waited for before its unblock step (on the real driver that
    // would hang until the gate's timeout).
    if (step.op == "block") {
      if (!blocked.insert(step.args[0]).second) return fail("stream already blocked");
      trace->uses_gates = true;
    } else if (step.op == "unblock") {
      if (blocked.erase(step.args[0]) == 0) return fail("stream is not blocked");
      for (auto it = event_on_blocked.begin(); it != event_on_blocked.end();) {
        it = it->second == step.args[0] ? event_on_blocked.erase(it) : std::next(it);
      }
    } else if (step.op == "record") {
      if (blocked.count(step.args[1])) {
        event_on_blocked[step.args[0]] = step.args[1];
      } else {
        event_on_blocked.erase(step.args[0]);
      }
    } else if ((step.op == "sync_stream" || step.op == "poll_stream" ||
                step.op == "query_stream") &&
               blocked.count(step.args[0])) {
      // (A query counts: the adversarial fake runs the next op of a polled stream, the blocking
      // host function included, on the polling thread.)
      return fail("waits for a blocked stream");
    } else if ((step.op == "sync_event" || step.op == "poll_event") &&
               event_on_blocked.count(step.args[0])) {
      return fail("waits for an event behind a blocked stream");
    } else if ((step.op == "sync_ctx" || step.op == "free_sync") && !blocked.empty()) {
      return fail("synchronizes the context while a stream is blocked");
    }
    for (const std::string& e : Split(expect_text)) {
      size_t eq = e.find('=');
      if (eq == std::string::npos) return fail("expectation '" + e + "' is not key=value");
      std::string key = e.substr(0, eq);
      std::string value = e.substr(eq + 1);
      bool is_stat = false;
      for (int i = 0; i < kNumStats; ++i) {
        if (key != kStatNames[static_cast<size_t>(i)]) continue;
        is_stat = true;
        std::uint64_t v = 0;
        if (!ParseNumber(value, &v)) return fail("bad number '" + value + "'");
        if (!carried) return fail("statistics before the pool step");
        (*carried)[static_cast<size_t>(i)] = v;
      }
      if (is_stat) continue;
      if (key == "err") {
        if (!ParseResultName(value, &step.err)) return fail("unknown CUresult '" + value + "'");
      } else if (key == "reuse") {
        if (value != "yes" && value != "no") return fail("reuse=yes|no");
        step.reuse = value == "yes";
      } else if (key == "same_as") {
        step.same_as = value;
      } else if (key == "value" || key == "current" || key == "access" || key == "pool") {
        step.values[key] = value;
      } else {
        return fail("unknown expectation '" + key + "'");
      }
    }
    if ((step.op == "alloc" || step.op == "alloc_async") && step.err == CUDA_SUCCESS &&
        !step.reuse) {
      return fail("a successful allocation must say reuse=yes|no");
    }
    // After the trace pool is destroyed its statistics are no longer read.
    if (step.op == "destroy" && step.err == CUDA_SUCCESS) {
      step.stats.reset();
      trace->steps.push_back(std::move(step));
      carried.reset();
      continue;
    }
    if (step.op == "pool" && step.err != CUDA_SUCCESS) carried.reset();
    step.stats = carried;
    trace->steps.push_back(std::move(step));
  }
  if (!blocked.empty()) return fail("a stream is still blocked at the end");
  return true;
}

bool LoadTrace(const std::string& path, Trace* trace, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseTrace(text.str(), std::filesystem::path(path).stem().string(), trace, error);
}

std::vector<std::string> ListTraces(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".trace") out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

ReplayResult Replay(const cuhal::CudaApi& api, const Trace& trace) {
  Replayer replayer(api, trace);
  return replayer.Run();
}

std::string Mismatch::ToString(const char* left_name, const char* right_name) const {
  std::ostringstream os;
  os << "(" << trace << ", line " << line << " '" << step << "', " << what << ", " << left_name
     << " " << left << ", " << right_name << " " << right << ")"
     << (unmeasured ? " [UNMEASURED expectation]" : "");
  return os.str();
}

std::vector<Mismatch> CompareToExpected(const Trace& trace, const ReplayResult& observed) {
  std::vector<Mismatch> out;
  auto add = [&](const TraceStep& step, const std::string& what, const std::string& expected,
                 const std::string& got) {
    out.push_back(Mismatch{trace.name, step.line, step.text, what, expected, got, step.unmeasured});
  };
  if (!observed.fatal.empty()) {
    out.push_back(Mismatch{trace.name, 0, "", "replay", "completes", observed.fatal, false});
  }
  for (size_t i = 0; i < observed.steps.size() && i < trace.steps.size(); ++i) {
    const TraceStep& step = trace.steps[i];
    const StepResult& got = observed.steps[i];
    if (got.err != step.err) add(step, "err", ResultName(step.err), ResultName(got.err));
    if (step.stats) {
      if (!got.stats) {
        add(step, "stats", "readable", "cuMemPoolGetAttribute = " + ResultName(got.stats_err));
      } else {
        for (int s = 0; s < kNumStats; ++s) {
          if ((*step.stats)[static_cast<size_t>(s)] != (*got.stats)[static_cast<size_t>(s)]) {
            add(step, kStatNames[static_cast<size_t>(s)], StatsValue(step.stats, s),
                StatsValue(got.stats, s));
          }
        }
      }
    }
    if (step.reuse && got.err == CUDA_SUCCESS && got.reuse != step.reuse) {
      add(step, "reuse", Bool(step.reuse), Bool(got.reuse));
    }
    if (!step.same_as.empty() && got.err == CUDA_SUCCESS && got.same != std::optional<bool>(true)) {
      add(step, "same_as " + step.same_as, "same address", "another address");
    }
    for (const auto& [key, value] : step.values) {
      auto it = got.values.find(key);
      std::string g = it == got.values.end() ? "(none)" : it->second;
      if (g != value) add(step, key, value, g);
    }
  }
  return out;
}

std::vector<Mismatch> CompareResults(const Trace& trace, const ReplayResult& left,
                                     const ReplayResult& right) {
  std::vector<Mismatch> out;
  auto add = [&](const TraceStep& step, const std::string& what, const std::string& l,
                 const std::string& r) {
    out.push_back(Mismatch{trace.name, step.line, step.text, what, l, r, step.unmeasured});
  };
  if (left.steps.size() != right.steps.size()) {
    out.push_back(Mismatch{trace.name, 0, "", "steps replayed", std::to_string(left.steps.size()),
                           std::to_string(right.steps.size()), false});
  }
  for (size_t i = 0; i < left.steps.size() && i < right.steps.size() && i < trace.steps.size();
       ++i) {
    const TraceStep& step = trace.steps[i];
    const StepResult& l = left.steps[i];
    const StepResult& r = right.steps[i];
    if (l.err != r.err) add(step, "err", ResultName(l.err), ResultName(r.err));
    if (l.stats.has_value() != r.stats.has_value()) {
      add(step, "stats", l.stats ? "readable" : ResultName(l.stats_err),
          r.stats ? "readable" : ResultName(r.stats_err));
    } else if (l.stats) {
      for (int s = 0; s < kNumStats; ++s) {
        if ((*l.stats)[static_cast<size_t>(s)] != (*r.stats)[static_cast<size_t>(s)]) {
          add(step, kStatNames[static_cast<size_t>(s)], StatsValue(l.stats, s),
              StatsValue(r.stats, s));
        }
      }
    }
    if (l.reuse != r.reuse) add(step, "reuse", Bool(l.reuse), Bool(r.reuse));
    if (l.same != r.same) add(step, "same_as " + step.same_as, Bool(l.same), Bool(r.same));
    for (const char* key : {"value", "current", "access", "pool"}) {
      auto li = l.values.find(key);
      auto ri = r.values.find(key);
      std::string lv = li == l.values.end() ? "(none)" : li->second;
      std::string rv = ri == r.values.end() ? "(none)" : ri->second;
      if (lv != rv) add(step, key, lv, rv);
    }
  }
  return out;
}

}  // namespace cuhal::pools
