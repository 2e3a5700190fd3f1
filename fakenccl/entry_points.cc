// Copyright 2026 The cuhal Authors.
// fakenccl's C entry points: nccl.h's functions, with its exact names and signatures, serving the
// installed fakenccl::FakeNccl. Each one:
//   1. finds the installed FakeNccl (none: ncclInvalidUsage, with a last-error text saying so);
//   2. lets the fault injector fail the call before it has any effect;
//   3. checks its arguments in NCCL's order with NCCL's codes, and does its work in the engine
//      (fakenccl/internal/engine.h); on an error, sets the calling thread's last-error text.
// The calling thread's group (ncclGroupStart/End depth, the calls waiting for the group's end and
// the group's first error) is kept here, per thread, as NCCL keeps it.
//
// Every entry point listed in core/symbols/nccl_symbols.inc must be defined here: FillNcclApi
// takes each one's address, so a missing one fails to link. nccl.h declares them extern "C", so a
// definition whose signature differs from nccl.h's does not compile. Every body is a
// function-try-block: whatever it throws is answered ncclInternalError (EntryFailed). Built with
// FAKENCCL_PROFILING_ALIASES (the drop-in libnccl.so.2), each also gets its pncclX alias.
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fakenccl/datatypes.h"
#include "fakenccl/fake_nccl.h"
#include "fakenccl/fallback.h"
#include "fakenccl/internal/engine.h"
#include "fakenccl/internal/fakecuda_hooks.h"

namespace fakenccl {
namespace {

using internal::CallDesc;
using internal::CallKind;

// The text ncclGetLastError returns. Per thread (see fake_nccl.h); NCCL's buffer is 1024 bytes.
thread_local char t_last_error[1024] = "";

void SetLastError(const std::string& text) {
  std::snprintf(t_last_error, sizeof(t_last_error), "%s", text.c_str());
}

// The calling thread's group (NCCL's ncclGroupDepth and friends, which are thread-local too).
struct ThreadGroup {
  std::uint64_t serial = 0;  // the FakeNccl this state belongs to
  int depth = 0;
  ncclResult_t error = ncclSuccess;  // first error of a call inside the group
  std::string error_text;
  std::vector<internal::GroupOp> ops;
  std::vector<std::pair<std::uint64_t, bool>> inits;  // (handle id, blocking) to wait for
};
thread_local ThreadGroup t_group;

ThreadGroup& Group(const FakeNccl& nccl) {
  if (t_group.serial != nccl.serial()) {
    t_group = ThreadGroup{};
    t_group.serial = nccl.serial();
  }
  return t_group;
}

// NCCL's ncclGroupErrCheck: inside a group, the group remembers the first error.
ncclResult_t GroupErrCheck(ThreadGroup& g, ncclResult_t result, const std::string& text) {
  if (g.depth > 0 && result != ncclSuccess && result != ncclInProgress &&
      g.error == ncclSuccess) {
    g.error = result;
    g.error_text = text;
  }
  return result;
}

ncclResult_t Fail(ncclResult_t result, const std::string& text) {
  SetLastError(text);
  return result;
}

// The answer of an entry point whose body threw (call only from a catch block): the boundary is a
// wall (nothing unwinds into a C caller). Locks are released by their guards during unwinding, so
// the communicator is left as the last completed step left it.
ncclResult_t EntryFailed(const char* entry) noexcept {
  const char* what = "an exception that is not a std::exception";
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::snprintf(t_last_error, sizeof(t_last_error), "fakenccl: %s: internal error: %s", entry,
                what);
  std::fprintf(stderr, "%s\n", t_last_error);
  return ncclInternalError;
}

FakeNccl* InstalledOrSetError() {
  FakeNccl* nccl = Installed();
  if (nccl == nullptr) {
    SetLastError("fakenccl: no FakeNccl is installed (create a fakenccl::ScopedNccl first)");
  }
  return nccl;
}

// Steps 1 and 2 of every entry point (see the top of this file).
#define FAKENCCL_ENTER(name)                                                               \
  ::fakenccl::FakeNccl* nccl = ::fakenccl::InstalledOrSetError();                          \
  if (nccl == nullptr) return ncclInvalidUsage;                                            \
  if (ncclResult_t fakenccl_injected_ = nccl->faults().OnCall(#name);                      \
      fakenccl_injected_ != ncclSuccess) {                                                 \
    return ::fakenccl::Fail(fakenccl_injected_,                                            \
                            "fakenccl: injected fault: " #name " returns " +               \
                                ::fakenccl::NcclResultName(fakenccl_injected_));           \
  }

// NCCL's parseCommConfig for the ncclConfig_t of the installed nccl.h. Sets *blocking.
ncclResult_t ParseConfig(const ncclConfig_t* config, int* blocking, std::string* text) {
  ncclConfig_t defaults = NCCL_CONFIG_INITIALIZER;
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  if (config != nullptr) {
    std::size_t real_size = 0;
    std::memcpy(&real_size, config, sizeof(real_size));
    real_size = std::min(real_size, sizeof(ncclConfig_t));
    c.magic = 0;
    std::memcpy(static_cast<void*>(&c), config, real_size);
    if (c.magic != defaults.magic) {
      *text = "ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER";
      return ncclInvalidArgument;
    }
    if (c.version < NCCL_VERSION(2, 14, 0)) c.blocking = defaults.blocking;
    if (c.version < NCCL_VERSION(2, 17, 0)) {
      c.cgaClusterSize = defaults.cgaClusterSize;
      c.minCTAs = defaults.minCTAs;
      c.maxCTAs = defaults.maxCTAs;
      c.netName = defaults.netName;
    }
    if (c.version < NCCL_VERSION(2, 25, 0)) c.trafficClass = defaults.trafficClass;
    if (c.version < NCCL_VERSION(2, 27, 0)) {
      c.collnetEnable = defaults.collnetEnable;
      c.CTAPolicy = defaults.CTAPolicy;
      c.shrinkShare = defaults.shrinkShare;
      c.nvlsCTAs = defaults.nvlsCTAs;
    }
    if (c.version < NCCL_VERSION(2, 28, 0)) {
      c.nChannelsPerNetPeer = defaults.nChannelsPerNetPeer;
      c.nvlinkCentricSched = defaults.nvlinkCentricSched;
    }
  }
  constexpr int kUndef = NCCL_CONFIG_UNDEF_INT;
  auto bad = [text](const char* what, int value) {
    char buffer[128];
    std::snprintf(buffer, sizeof(buffer), "Invalid config %s attribute value %d", what, value);
    *text = buffer;
    return ncclInvalidArgument;
  };
  auto zero_or_one = [](int v) { return v == kUndef || v == 0 || v == 1; };
  if (!zero_or_one(c.blocking)) return bad("blocking", c.blocking);
  if (c.cgaClusterSize != kUndef && c.cgaClusterSize < 0) {
    return bad("cgaClusterSize", c.cgaClusterSize);
  }
  // NCCL compares the raw values, so a minCTAs set with maxCTAs left undefined (INT_MIN) fails
  // too (measured: NCCL 2.28.9 on the H200 rejects minCTAs=4 alone, "4/-2147483648").
  if ((c.minCTAs != kUndef && c.minCTAs <= 0) || (c.maxCTAs != kUndef && c.maxCTAs <= 0) ||
      c.minCTAs > c.maxCTAs) {
    char buffer[128];
    std::snprintf(buffer, sizeof(buffer), "Invalid config min/max channels attribute value %d/%d",
                  c.minCTAs, c.maxCTAs);
    *text = buffer;
    return ncclInvalidArgument;
  }
  if (!zero_or_one(c.splitShare)) return bad("splitShare", c.splitShare);
  if (!zero_or_one(c.collnetEnable)) return bad("collnetEnable", c.collnetEnable);
  if (c.CTAPolicy != kUndef && (c.CTAPolicy < 0 || c.CTAPolicy > 3)) {
    return bad("policy", c.CTAPolicy);
  }
  if (!zero_or_one(c.shrinkShare)) return bad("shrinkShare", c.shrinkShare);
  if (c.nvlsCTAs != kUndef && c.nvlsCTAs <= 0) return bad("nvlsCTAs", c.nvlsCTAs);
  // UNMEASURED: MAXCHANNELS taken as 64.
  if (c.nChannelsPerNetPeer != kUndef &&
      (c.nChannelsPerNetPeer <= 0 || c.nChannelsPerNetPeer > 64)) {
    return bad("nChannelsPerNetPeer", c.nChannelsPerNetPeer);
  }
  if (!zero_or_one(c.nvlinkCentricSched)) return bad("nvlinkCentricSched", c.nvlinkCentricSched);
  *blocking = c.blocking == kUndef ? 1 : c.blocking;
  return ncclSuccess;
}

// The calling thread's current device (its current context's), or -1; and its compute
// capability major number.
int CurrentDevice(int* cc_major) {
  *cc_major = 0;
  const internal::FakecudaHooks* hooks = internal::Hooks();
  if (hooks == nullptr) return -1;
  int device = hooks->stream_device(nullptr);
  if (device >= 0) *cc_major = hooks->compute_capability_major(device);
  return device;
}

ncclResult_t InitRankCommon(FakeNccl* nccl, const char* api, ncclComm_t* comm, int nranks,
                            const ncclUniqueId& id, int rank, const ncclConfig_t* config) {
  ThreadGroup& g = Group(*nccl);
  std::string text;
  auto fail = [&](ncclResult_t r) { return GroupErrCheck(g, Fail(r, text), text); };
  if (comm == nullptr) {
    text = "CommInitRank : newcomm argument is NULL";
    return fail(ncclInvalidArgument);
  }
  if (nranks < 1) {  // NCCL checks its number of ids (1) against nranks first
    text = "improper usage of ncclCommInitRank: nId = 1, nranks=" + std::to_string(nranks);
    *comm = nullptr;
    return fail(ncclInvalidArgument);
  }
  if (rank < 0 || rank >= nranks) {
    text = "Invalid rank requested : " + std::to_string(rank) + "/" + std::to_string(nranks);
    *comm = nullptr;
    return fail(ncclInvalidArgument);
  }
  int blocking = 1;
  if (ncclResult_t r = ParseConfig(config, &blocking, &text); r != ncclSuccess) {
    *comm = nullptr;
    return fail(r);
  }
  int cc_major = 0;
  int device = CurrentDevice(&cc_major);
  if (device < 0) {
    text = std::string("fakenccl: ") + api +
           (internal::Hooks() == nullptr
                ? std::string(": ") + internal::HooksUnavailableReason()
                : std::string(": the calling thread has no current CUDA context of the installed "
                              "fake driver (its device is the rank's device; fakenccl does not "
                              "model the runtime's implicit device 0)"));
    *comm = nullptr;
    return fail(ncclUnhandledCudaError);
  }
  const bool in_group = g.depth > 0;
  ncclResult_t r = nccl->engine().InitRank(comm, nranks, id, rank, device, cc_major,
                                           blocking != 0, /*wait=*/blocking != 0 && !in_group,
                                           api, &text);
  if (r != ncclSuccess) return fail(r);
  if (in_group) {
    g.inits.emplace_back(internal::DecodeComm(*comm), blocking != 0);
    return ncclSuccess;
  }
  return blocking != 0 ? ncclSuccess : ncclInProgress;
}

// Checks one communication call and, outside a group, launches it at once (a lone call is its own
// group, as in NCCL).
// "Cuda failure 'text'" (NCCL's CUDACHECK) / "Cuda failure N 'text'" (its CUCHECK) for a driver
// result, with the fake driver's string (the runtime's strings are the driver's for these).
std::string CudaFailure(const internal::DriverFunctions& d, CUresult r, bool with_number) {
  const char* s = nullptr;
  if (d.cuGetErrorString(r, &s) != CUDA_SUCCESS || s == nullptr) s = "unknown error";
  return with_number ? "Cuda failure " + std::to_string(static_cast<int>(r)) + " '" + s + "'"
                     : std::string("Cuda failure '") + s + "'";
}

// Whether a checked collective is, on a one-rank communicator, NCCL 2.28.9's ncclLaunchOneRank
// copy: every collective (AlltoAll, Gather and Scatter too: UNMEASURED, from the source) except
// PreMulSum, which the average of floating types becomes too: a kernel, left to the engine.
bool IsOneRankCopy(const CallDesc& d) {
  if (internal::IsPointToPoint(d.kind)) return false;
  return !(internal::IsReduction(d.kind) &&
           (d.op.kind == ReduceKind::kPreMulSum ||
            (d.op.kind == ReduceKind::kAvg && IsFloatingType(d.type))));
}

// NCCL's single-rank collectives out of place (taskAppend -> ncclLaunchOneRank): no kernel and no
// peer, one cudaMemcpyAsync(recv, send, bytes, Default, stream) at the time of the call (inside a
// group too). (In place NCCL does nothing at all: measured on NCCL 2.28.3, NULL, host and
// unallocated pointers succeed.) An unallocated send buffer crashes NCCL 2.28.3 (its pageable copy
// reads it); the fake driver's copy refuses it instead (CUDA_ERROR_INVALID_VALUE), answered
// ncclUnhandledCudaError. Called after CheckCall accepted the call and appended it to g.ops.
ncclResult_t OneRankCollective(ThreadGroup& g, const CallDesc& desc) {
  internal::GroupOp op = g.ops.back();
  g.ops.pop_back();
  const internal::FakecudaHooks* hooks = internal::Hooks();
  if (hooks == nullptr) {
    std::string text = std::string("fakenccl: ") + internal::HooksUnavailableReason();
    return GroupErrCheck(g, Fail(ncclUnhandledCudaError, text), text);
  }
  const internal::DriverFunctions& d = hooks->driver;
  const std::size_t bytes = desc.count * TypeSize(op.desc.type);
  CUresult r = d.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(desc.recvbuff),
                               reinterpret_cast<CUdeviceptr>(desc.sendbuff), bytes, desc.stream);
  if (r != CUDA_SUCCESS) {
    std::string text = CudaFailure(d, r, /*with_number=*/false);
    return GroupErrCheck(g, Fail(ncclUnhandledCudaError, text), text);
  }
  return ncclSuccess;
}

ncclResult_t Communicate(FakeNccl* nccl, const char* op_name, ncclComm_t comm,
                         const CallDesc& desc) {
  ThreadGroup& g = Group(*nccl);
  std::string text;
  const std::size_t queued = g.ops.size();
  ncclResult_t r = nccl->engine().CheckCall(comm, desc, op_name, nccl->faults(), &g.ops, &text);
  if (r != ncclSuccess) return GroupErrCheck(g, Fail(r, text), text);
  // In place the engine's one-rank path already moves nothing (InPlaceNoOpOnOneRank), and keeps
  // the call's declared accesses for the race detector: only the copies are taken here.
  if (g.ops.size() > queued && desc.sendbuff != desc.recvbuff &&
      IsOneRankCopy(g.ops.back().desc) && nccl->engine().ReadyRanks(comm) == 1) {
    return OneRankCollective(g, desc);
  }
  if (g.depth > 0) return ncclSuccess;
  std::vector<internal::GroupOp> ops = std::move(g.ops);
  g.ops.clear();
  if (ops.empty()) return ncclSuccess;
  r = nccl->engine().Launch(ops, &text);
  if (r != ncclSuccess) SetLastError(text);
  return r;
}

// The bits of an enum argument as an int. A C caller may pass any int, and loading a value outside
// the enumeration's range as the C++ enum type is undefined; a copy of the bytes is not.
template <typename Enum>
int Raw(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int));
  int bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

CallDesc MakeDesc(CallKind kind, const void* sendbuff, void* recvbuff, std::size_t count,
                  int raw_type, int raw_op, int root, cudaStream_t stream) {
  CallDesc d;
  d.kind = kind;
  d.sendbuff = sendbuff;
  d.recvbuff = recvbuff;
  d.count = count;
  d.raw_type = raw_type;
  d.raw_op = raw_op;
  d.root = root;
  d.stream = reinterpret_cast<CUstream>(stream);
  return d;
}

}  // namespace

int FallbackCall(const char* name) noexcept {
  try {
    FakeNccl* nccl = InstalledOrSetError();
    if (nccl == nullptr) return ncclInvalidUsage;
    if (ncclResult_t injected = nccl->faults().OnCall(name); injected != ncclSuccess) {
      return Fail(injected, std::string("fakenccl: injected fault: ") + name + " returns " +
                                NcclResultName(injected));
    }
    return Fail(ncclInvalidUsage, std::string("fakenccl: ") + name +
                                      " is not modelled by fakenccl (answered ncclInvalidUsage)");
  } catch (...) {
    return EntryFailed(name);
  }
}

}  // namespace fakenccl

using fakenccl::internal::CallKind;

// ---- Versions, ids, errors ---------------------------------------------------------------------

extern "C" ncclResult_t ncclGetVersion(int* version) try {
  FAKENCCL_ENTER(ncclGetVersion)
  if (version == nullptr) {
    // Measured on NCCL 2.28.3 (ci/gpu-probes, case "nccl_basic"): refused, and unlike the
    // other argument checks it leaves ncclGetLastError as it was.
    return ncclInvalidArgument;
  }
  *version = nccl->options().version;
  return ncclSuccess;
} catch (...) {
  return fakenccl::EntryFailed("ncclGetVersion");
}

extern "C" ncclResult_t ncclGetUniqueId(ncclUniqueId* unique_id) try {
  FAKENCCL_ENTER(ncclGetUniqueId)
  if (unique_id == nullptr) {
    return fakenccl::Fail(ncclInvalidArgument, "GetUniqueId : out argument is NULL");
  }
  nccl->NewUniqueId(unique_id);
  return ncclSuccess;
} catch (...) {
  return fakenccl::EntryFailed("ncclGetUniqueId");
}

// NCCL's own strings (src/init.cc, ncclGetErrorString), word for word.
extern "C" const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

extern "C" const char* ncclGetLastError(ncclComm_t /*comm*/) { return fakenccl::t_last_error; }

// ---- Communicators -----------------------------------------------------------------------------

extern "C" ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId comm_id,
                                         int rank) try {
  FAKENCCL_ENTER(ncclCommInitRank)
  return fakenccl::InitRankCommon(nccl, "ncclCommInitRank", comm, nranks, comm_id, rank, nullptr);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommInitRank");
}

extern "C" ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks,
                                               ncclUniqueId comm_id, int rank,
                                               ncclConfig_t* config) try {
  FAKENCCL_ENTER(ncclCommInitRankConfig)
  return fakenccl::InitRankCommon(nccl, "ncclCommInitRankConfig", comm, nranks, comm_id, rank,
                                  config);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommInitRankConfig");
}

extern "C" ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) try {
  FAKENCCL_ENTER(ncclCommInitAll)
  if (comms == nullptr) {
    return fakenccl::Fail(ncclInvalidArgument, "CommInitAll : comms argument is NULL");
  }
  if (ndev < 0) {
    return fakenccl::Fail(ncclInvalidArgument,
                          "Invalid device count requested : " + std::to_string(ndev));
  }
  const fakenccl::internal::FakecudaHooks* hooks = fakenccl::internal::Hooks();
  const int total = hooks != nullptr ? hooks->device_count() : -1;
  // ndev == 0 makes nothing and succeeds here; NCCL 2.28.9 crashes on it (it dereferences
  // comms[0] after its loop), so there is nothing to measure.
  if (total < 0) {
    return fakenccl::Fail(ncclUnhandledCudaError,
                          std::string("fakenccl: ncclCommInitAll: ") +
                              (hooks == nullptr ? fakenccl::internal::HooksUnavailableReason()
                                                : "no fake CUDA driver is installed"));
  }
  std::vector<int> devices;
  std::vector<char> seen(static_cast<std::size_t>(total), 0);
  for (int i = 0; i < ndev; ++i) {
    int dev = devlist != nullptr ? devlist[i] : i;
    if (devlist != nullptr) {
      if (dev < 0 || dev >= total) {
        return fakenccl::Fail(ncclInvalidArgument, "Invalid device " + std::to_string(dev) +
                                                       " (totalnDev=" + std::to_string(total) +
                                                       ")");
      }
      if (seen[static_cast<std::size_t>(dev)]) {
        return fakenccl::Fail(ncclInvalidUsage, "fakenccl: ncclCommInitAll: device " +
                                                    std::to_string(dev) +
                                                    " appears twice in devlist");
      }
      seen[static_cast<std::size_t>(dev)] = 1;
    } else if (dev >= total) {
      // NCCL's cudaSetDevice(i) fails.
      return fakenccl::Fail(ncclUnhandledCudaError,
                            "Cuda failure 'invalid device ordinal' (fakenccl: ncclCommInitAll "
                            "with ndev=" + std::to_string(ndev) + " but " +
                                std::to_string(total) + " devices)");
    }
    devices.push_back(dev);
  }
  std::vector<int> cc;
  for (int dev : devices) cc.push_back(hooks->compute_capability_major(dev));
  std::string text;
  ncclResult_t r = nccl->engine().InitAll(comms, devices, cc, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommInitAll");
}

extern "C" ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                      ncclConfig_t* config) try {
  FAKENCCL_ENTER(ncclCommSplit)
  fakenccl::ThreadGroup& g = fakenccl::Group(*nccl);
  std::string text;
  int blocking = -1;  // NULL config: the parent's
  if (config != nullptr) {
    if (ncclResult_t r = fakenccl::ParseConfig(config, &blocking, &text); r != ncclSuccess) {
      if (newcomm != nullptr) *newcomm = nullptr;
      return fakenccl::GroupErrCheck(g, fakenccl::Fail(r, text), text);
    }
  }
  const bool in_group = g.depth > 0;
  bool child_blocking = true;
  ncclResult_t r = nccl->engine().Split(comm, color, key, blocking, in_group, newcomm,
                                        &child_blocking, &text);
  if (r != ncclSuccess) return fakenccl::GroupErrCheck(g, fakenccl::Fail(r, text), text);
  if (*newcomm != nullptr) {
    if (in_group) {
      g.inits.emplace_back(fakenccl::internal::DecodeComm(*newcomm), child_blocking);
    } else if (!child_blocking) {
      return ncclInProgress;
    }
  }
  return ncclSuccess;
} catch (...) {
  return fakenccl::EntryFailed("ncclCommSplit");
}

extern "C" ncclResult_t ncclCommFinalize(ncclComm_t comm) try {
  FAKENCCL_ENTER(ncclCommFinalize)
  std::string text;
  ncclResult_t r = nccl->engine().Finalize(comm, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommFinalize");
}

extern "C" ncclResult_t ncclCommDestroy(ncclComm_t comm) try {
  FAKENCCL_ENTER(ncclCommDestroy)
  std::string text;
  ncclResult_t r = nccl->engine().Destroy(comm, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommDestroy");
}

extern "C" ncclResult_t ncclCommAbort(ncclComm_t comm) try {
  FAKENCCL_ENTER(ncclCommAbort)
  std::string text;
  ncclResult_t r = nccl->engine().Abort(comm, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommAbort");
}

extern "C" ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) try {
  FAKENCCL_ENTER(ncclCommGetAsyncError)
  std::string text;
  ncclResult_t r = nccl->engine().GetAsyncError(comm, async_error, &text);
  if (r != ncclSuccess) return fakenccl::Fail(r, text);
  if (*async_error != ncclSuccess && *async_error != ncclInProgress) fakenccl::SetLastError(text);
  return ncclSuccess;
} catch (...) {
  return fakenccl::EntryFailed("ncclCommGetAsyncError");
}

extern "C" ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) try {
  FAKENCCL_ENTER(ncclCommCount)
  std::string text;
  ncclResult_t r = nccl->engine().Query(comm, 0, count, "CommCount", &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommCount");
}

extern "C" ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) try {
  FAKENCCL_ENTER(ncclCommCuDevice)
  std::string text;
  ncclResult_t r = nccl->engine().Query(comm, 2, device, "CommCuDevice", &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommCuDevice");
}

extern "C" ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) try {
  FAKENCCL_ENTER(ncclCommUserRank)
  std::string text;
  ncclResult_t r = nccl->engine().Query(comm, 1, rank, "CommUserRank", &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommUserRank");
}

// ---- Reduction operators -----------------------------------------------------------------------

extern "C" ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar,
                                                 ncclDataType_t datatype,
                                                 ncclScalarResidence_t residence,
                                                 ncclComm_t comm) try {
  FAKENCCL_ENTER(ncclRedOpCreatePreMulSum)
  std::string text;
  ncclResult_t r = nccl->engine().CreatePreMulSum(op, scalar, fakenccl::Raw(datatype),
                                                  fakenccl::Raw(residence), comm, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclRedOpCreatePreMulSum");
}

extern "C" ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) try {
  FAKENCCL_ENTER(ncclRedOpDestroy)
  std::string text;
  ncclResult_t r = nccl->engine().DestroyRedOp(fakenccl::Raw(op), comm, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclRedOpDestroy");
}

// ---- Collectives -------------------------------------------------------------------------------

extern "C" ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclAllReduce)
  return fakenccl::Communicate(
      nccl, "AllReduce", comm,
      fakenccl::MakeDesc(CallKind::kAllReduce, sendbuff, recvbuff, count, fakenccl::Raw(datatype),
                         fakenccl::Raw(op), 0, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclAllReduce");
}

extern "C" ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, int root, ncclComm_t comm,
                                      cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclBroadcast)
  return fakenccl::Communicate(
      nccl, "Broadcast", comm,
      fakenccl::MakeDesc(CallKind::kBroadcast, sendbuff, recvbuff, count, fakenccl::Raw(datatype),
                         ncclSum, root, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclBroadcast");
}

extern "C" ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                   ncclDataType_t datatype, ncclRedOp_t op, int root,
                                   ncclComm_t comm, cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclReduce)
  return fakenccl::Communicate(
      nccl, "Reduce", comm,
      fakenccl::MakeDesc(CallKind::kReduce, sendbuff, recvbuff, count, fakenccl::Raw(datatype),
                         fakenccl::Raw(op), root, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclReduce");
}

extern "C" ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                      ncclDataType_t datatype, ncclComm_t comm,
                                      cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclAllGather)
  return fakenccl::Communicate(
      nccl, "AllGather", comm,
      fakenccl::MakeDesc(CallKind::kAllGather, sendbuff, recvbuff, sendcount,
                         fakenccl::Raw(datatype), ncclSum, 0, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclAllGather");
}

extern "C" ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                          ncclDataType_t datatype, ncclRedOp_t op,
                                          ncclComm_t comm, cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclReduceScatter)
  return fakenccl::Communicate(
      nccl, "ReduceScatter", comm,
      fakenccl::MakeDesc(CallKind::kReduceScatter, sendbuff, recvbuff, recvcount,
                         fakenccl::Raw(datatype), fakenccl::Raw(op), 0, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclReduceScatter");
}

extern "C" ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                     ncclDataType_t datatype, ncclComm_t comm,
                                     cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclAlltoAll)
  return fakenccl::Communicate(
      nccl, "AlltoAll", comm,
      fakenccl::MakeDesc(CallKind::kAlltoAll, sendbuff, recvbuff, count, fakenccl::Raw(datatype),
                         ncclSum, 0, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclAlltoAll");
}

extern "C" ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                   ncclDataType_t datatype, int root, ncclComm_t comm,
                                   cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclGather)
  return fakenccl::Communicate(
      nccl, "Gather", comm,
      fakenccl::MakeDesc(CallKind::kGather, sendbuff, recvbuff, count, fakenccl::Raw(datatype),
                         ncclSum, root, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclGather");
}

extern "C" ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                    ncclDataType_t datatype, int root, ncclComm_t comm,
                                    cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclScatter)
  return fakenccl::Communicate(
      nccl, "Scatter", comm,
      fakenccl::MakeDesc(CallKind::kScatter, sendbuff, recvbuff, count, fakenccl::Raw(datatype),
                         ncclSum, root, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclScatter");
}

// ---- Point to point and groups -----------------------------------------------------------------

extern "C" ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                 int peer, ncclComm_t comm, cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclSend)
  return fakenccl::Communicate(
      nccl, "Send", comm,
      fakenccl::MakeDesc(CallKind::kSend, sendbuff, nullptr, count, fakenccl::Raw(datatype),
                         ncclSum, peer, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclSend");
}

extern "C" ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                 ncclComm_t comm, cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclRecv)
  return fakenccl::Communicate(
      nccl, "Recv", comm,
      fakenccl::MakeDesc(CallKind::kRecv, nullptr, recvbuff, count, fakenccl::Raw(datatype),
                         ncclSum, peer, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclRecv");
}

extern "C" ncclResult_t ncclGroupStart() try {
  FAKENCCL_ENTER(ncclGroupStart)
  ++fakenccl::Group(*nccl).depth;
  return ncclSuccess;
} catch (...) {
  return fakenccl::EntryFailed("ncclGroupStart");
}

extern "C" ncclResult_t ncclGroupEnd() try {
  FAKENCCL_ENTER(ncclGroupEnd)
  fakenccl::ThreadGroup& g = fakenccl::Group(*nccl);
  if (g.depth == 0) {
    return fakenccl::Fail(ncclInvalidUsage, "ncclGroupEnd: not in a group call.");
  }
  if (--g.depth > 0) return ncclSuccess;
  std::vector<fakenccl::internal::GroupOp> ops = std::move(g.ops);
  std::vector<std::pair<std::uint64_t, bool>> inits = std::move(g.inits);
  g.ops.clear();
  g.inits.clear();
  if (g.error != ncclSuccess) {
    // NCCL drops the whole group when one of its calls failed.
    ncclResult_t error = g.error;
    std::string text = std::move(g.error_text);
    g.error = ncclSuccess;
    g.error_text.clear();
    return fakenccl::Fail(error, text);
  }
  ncclResult_t result = ncclSuccess;
  std::string text;
  for (const auto& [id, blocking] : inits) {
    if (!blocking) {
      if (result == ncclSuccess) result = ncclInProgress;
      continue;
    }
    std::string init_text;
    ncclResult_t r = nccl->engine().WaitInitialized(id, &init_text);
    if (r != ncclSuccess && (result == ncclSuccess || result == ncclInProgress)) {
      result = r;
      text = init_text;
    }
  }
  if (!ops.empty()) {
    std::string launch_text;
    ncclResult_t r = nccl->engine().Launch(ops, &launch_text);
    if (r != ncclSuccess && (result == ncclSuccess || result == ncclInProgress)) {
      result = r;
      text = launch_text;
    }
  }
  if (result != ncclSuccess && result != ncclInProgress) fakenccl::SetLastError(text);
  return result;
} catch (...) {
  return fakenccl::EntryFailed("ncclGroupEnd");
}

// ---- Entry points after cuhal's table (nccl.h 2.19 to 2.28) ------------------------------------
// Modelled on NCCL 2.28.9's source, each check in its order with its WARN text. UNMEASURED, all of
// it: ci/gpu-probes/ncclx_probe.cc is written for the GPU machine and has not run there yet
// (docs/fakenccl.md, "Entry points after 2.18").

extern "C" ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                  ncclComm_t comm, cudaStream_t stream) try {
  FAKENCCL_ENTER(ncclBcast)
  // NCCL 2.28.9: ncclBroadcast(buff, buff, ...), so its messages say "Broadcast".
  return fakenccl::Communicate(
      nccl, "Broadcast", comm,
      fakenccl::MakeDesc(CallKind::kBroadcast, buff, buff, count, fakenccl::Raw(datatype),
                         ncclSum, root, stream));
} catch (...) {
  return fakenccl::EntryFailed("ncclBcast");
}

extern "C" ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size,
                                         void** handle) try {
  FAKENCCL_ENTER(ncclCommRegister)
  std::string text;
  ncclResult_t r = nccl->engine().Register(comm, buff, size, handle, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommRegister");
}

extern "C" ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) try {
  FAKENCCL_ENTER(ncclCommDeregister)
  std::string text;
  ncclResult_t r = nccl->engine().Deregister(comm, handle, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommDeregister");
}

extern "C" ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size,
                                               ncclWindow_t* win, int win_flags) try {
  FAKENCCL_ENTER(ncclCommWindowRegister)
  std::string text;
  ncclResult_t r = nccl->engine().WindowRegister(comm, buff, size, win, win_flags, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommWindowRegister");
}

extern "C" ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) try {
  FAKENCCL_ENTER(ncclCommWindowDeregister)
  std::string text;
  ncclResult_t r = nccl->engine().WindowDeregister(comm, win, &text);
  return r == ncclSuccess ? r : fakenccl::Fail(r, text);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommWindowDeregister");
}

extern "C" ncclResult_t ncclCommRevoke(ncclComm_t comm, int revoke_flags) try {
  FAKENCCL_ENTER(ncclCommRevoke)
  std::string text;
  ncclResult_t r = nccl->engine().Revoke(comm, revoke_flags, &text);
  if (r != ncclSuccess && !text.empty()) fakenccl::SetLastError(text);
  return r;
} catch (...) {
  return fakenccl::EntryFailed("ncclCommRevoke");
}

extern "C" ncclResult_t ncclCommShrink(ncclComm_t comm, int* exclude_ranks_list,
                                       int exclude_ranks_count, ncclComm_t* newcomm,
                                       ncclConfig_t* config, int shrink_flags) try {
  FAKENCCL_ENTER(ncclCommShrink)
  // NCCL_SHRINK_ABORT first stops the parent's kernels; the fake's parent has none running
  // beyond its queued stream work, which the shrink does not touch (UNMEASURED: the flag is
  // accepted and otherwise ignored; NCCL ignores unknown bits too).
  (void)shrink_flags;
  fakenccl::ThreadGroup& g = fakenccl::Group(*nccl);
  std::string text;
  int blocking = -1;  // NULL config: the parent's
  if (config != nullptr) {
    if (ncclResult_t r = fakenccl::ParseConfig(config, &blocking, &text); r != ncclSuccess) {
      if (newcomm != nullptr) *newcomm = nullptr;
      return fakenccl::GroupErrCheck(g, fakenccl::Fail(r, text), text);
    }
  }
  const bool in_group = g.depth > 0;
  bool child_blocking = true;
  const std::span<const int> exclude(exclude_ranks_list,
                                     exclude_ranks_count > 0
                                         ? static_cast<std::size_t>(exclude_ranks_count)
                                         : 0);
  ncclResult_t r = nccl->engine().Shrink(comm, exclude, blocking, in_group, newcomm,
                                         &child_blocking, &text);
  if (r != ncclSuccess) {
    if (!text.empty()) fakenccl::SetLastError(text);
    return fakenccl::GroupErrCheck(g, r, text);
  }
  if (*newcomm != nullptr) {
    if (in_group) {
      g.inits.emplace_back(fakenccl::internal::DecodeComm(*newcomm), child_blocking);
    } else if (!child_blocking) {
      return ncclInProgress;
    }
  }
  return ncclSuccess;
} catch (...) {
  return fakenccl::EntryFailed("ncclCommShrink");
}

extern "C" ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank,
                                                 int n_id, ncclUniqueId* comm_ids,
                                                 ncclConfig_t* config) try {
  FAKENCCL_ENTER(ncclCommInitRankScalable)
  fakenccl::ThreadGroup& g = fakenccl::Group(*nccl);
  if (n_id <= 0 || n_id > nranks) {  // before anything else, *newcomm untouched
    std::string text = "improper usage of ncclCommInitRank: nId = " + std::to_string(n_id) +
                       ", nranks=" + std::to_string(nranks);
    return fakenccl::GroupErrCheck(g, fakenccl::Fail(ncclInvalidArgument, text), text);
  }
  if (comm_ids == nullptr) {
    // NCCL 2.28.9 copies nId ids from it (a crash); the fake refuses.
    std::string text = "fakenccl: ncclCommInitRankScalable : commId argument is NULL";
    return fakenccl::GroupErrCheck(g, fakenccl::Fail(ncclInvalidArgument, text), text);
  }
  // Every rank passes the same nId ids; the first one names the fake's rendezvous (NCCL spreads
  // its bootstrap over them, which a fake of threads does not need).
  return fakenccl::InitRankCommon(nccl, "ncclCommInitRankScalable", newcomm, nranks, comm_ids[0],
                                  myrank, config);
} catch (...) {
  return fakenccl::EntryFailed("ncclCommInitRankScalable");
}

extern "C" ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* sim_info) try {
  FAKENCCL_ENTER(ncclGroupSimulateEnd)
  if (sim_info == nullptr) return ncclGroupEnd();  // NCCL: a plain ncclGroupEnd
  fakenccl::ThreadGroup& g = fakenccl::Group(*nccl);
  if (g.depth == 0) {
    return fakenccl::Fail(ncclInvalidUsage, "ncclGroupEnd: not in a group call.");
  }
  if (--g.depth > 0) return ncclSuccess;
  std::vector<fakenccl::internal::GroupOp> ops = std::move(g.ops);
  std::vector<std::pair<std::uint64_t, bool>> inits = std::move(g.inits);
  g.ops.clear();
  g.inits.clear();
  if (g.error != ncclSuccess) {
    ncclResult_t error = g.error;
    std::string text = std::move(g.error_text);
    g.error = ncclSuccess;
    g.error_text.clear();
    return fakenccl::Fail(error, text);
  }
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  std::size_t real_size = 0;
  std::memcpy(&real_size, sim_info, sizeof(real_size));
  real_size = std::min(real_size, sizeof(ncclSimInfo_t));
  info.magic = 0;
  std::memcpy(static_cast<void*>(&info), sim_info, real_size);
  if (info.magic != 0x74685283) {
    // NCCL drops the group's work (its fail path cleans the group up).
    return fakenccl::Fail(ncclInvalidArgument,
                          "ncclSimInfo_t argument not initialized via NCCL_SIM_INFO_INITIALIZER");
  }
  // Communicators initialized in the group still complete, as at ncclGroupEnd.
  for (const auto& [id, blocking] : inits) {
    if (!blocking) continue;
    std::string init_text;
    if (ncclResult_t r = nccl->engine().WaitInitialized(id, &init_text); r != ncclSuccess) {
      return fakenccl::Fail(r, init_text);
    }
  }
  // A one-rank communicator's collectives never become NCCL tasks: ncclLaunchOneRank did their
  // work at the call (the engine's deferred in-place no-op or PreMulSum kernel runs now). Only
  // the rest is simulated, and NCCL copies the info back only when some is left.
  std::vector<fakenccl::internal::GroupOp> one_rank;
  std::vector<fakenccl::internal::GroupOp> planned;
  for (fakenccl::internal::GroupOp& op : ops) {
    const bool alone = !fakenccl::internal::IsPointToPoint(op.desc.kind) &&
                       nccl->engine().ReadyRanks(fakenccl::internal::EncodeComm(op.handle_id)) == 1;
    (alone ? one_rank : planned).push_back(std::move(op));
  }
  if (!one_rank.empty()) {
    std::string launch_text;
    if (ncclResult_t r = nccl->engine().Launch(one_rank, &launch_text); r != ncclSuccess) {
      return fakenccl::Fail(r, launch_text);
    }
  }
  if (planned.empty()) return ncclSuccess;
  // NCCL plans the collectives and launches nothing. The fake's estimate (UNMEASURED against
  // NCCL's tuning model): 10 us per call plus its bytes at 100 GB/s.
  double seconds = 0;
  for (const fakenccl::internal::GroupOp& op : planned) {
    seconds += 10e-6 + static_cast<double>(op.desc.count * fakenccl::TypeSize(op.desc.type)) /
                           100e9;
  }
  info.estimatedTime = static_cast<float>(seconds * 1e6);  // NCCL reports microseconds
  std::memcpy(static_cast<void*>(sim_info), &info, real_size);
  return ncclSuccess;
} catch (...) {
  return fakenccl::EntryFailed("ncclGroupSimulateEnd");
}

// NCCL 2.28.9: deprecated; marks the debug settings (NCCL_DEBUG...) to be read again. The fake has
// none, and the call touches nothing else (not the last-error text).
extern "C" void ncclResetDebugInit() {}

// ---- ncclMemAlloc / ncclMemFree -----------------------------------------------------------------
// NCCL 2.28.9's allocator (src/allocator.cc) with the runtime calls it makes done as the runtime
// does them on the fake driver: cudaGetDevice is the current context's device, else device 0.

namespace fakenccl {
namespace {

// cudaGetDevice: initializes the driver, answers the current context's device or 0.
CUresult RuntimeDevice(const internal::DriverFunctions& d, int* device) {
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) return r;
  CUcontext current = nullptr;
  if (d.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != nullptr) {
    CUdevice dev = 0;
    if (CUresult r = d.cuCtxGetDevice(&dev); r != CUDA_SUCCESS) return r;
    *device = static_cast<int>(dev);
    return CUDA_SUCCESS;
  }
  *device = 0;
  return CUDA_SUCCESS;
}

// cudaMalloc(ptr, size) as NCCL's fallback makes it (a NULL ptr or a zero size).
ncclResult_t RuntimeMallocFallback(const internal::DriverFunctions& d, void** ptr,
                                   std::size_t size) {
  if (ptr == nullptr) return Fail(ncclUnhandledCudaError, "Cuda failure 'invalid argument'");
  // UNMEASURED: cudaMalloc of 0 bytes succeeds with a NULL pointer.
  (void)d;
  *ptr = nullptr;
  (void)size;
  return ncclSuccess;
}

ncclResult_t MemAlloc(const internal::DriverFunctions& d, void** ptr, std::size_t size) {
  if (ptr == nullptr || size == 0) return RuntimeMallocFallback(d, ptr, size);
  int cuda_dev = 0;
  if (CUresult r = RuntimeDevice(d, &cuda_dev); r != CUDA_SUCCESS) {
    return Fail(ncclUnhandledCudaError, CudaFailure(d, r, false));
  }
  auto cu_fail = [&](CUresult r) { return Fail(ncclUnhandledCudaError, CudaFailure(d, r, true)); };
  CUdevice dev = 0;
  if (CUresult r = d.cuDeviceGet(&dev, cuda_dev); r != CUDA_SUCCESS) return cu_fail(r);
  int types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  int flag = 0;
  (void)d.cuDeviceGetAttribute(&flag, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, dev);
  if (flag) types |= CU_MEM_HANDLE_TYPE_FABRIC;
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(types);
  prop.location.id = dev;
  flag = 0;
  if (CUresult r = d.cuDeviceGetAttribute(
          &flag, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, dev);
      r != CUDA_SUCCESS) {
    return cu_fail(r);
  }
  if (flag) prop.allocFlags.gpuDirectRDMACapable = 1;
  std::size_t gran = 0;
  if (CUresult r = d.cuMemGetAllocationGranularity(&gran, &prop,
                                                   CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
      r != CUDA_SUCCESS) {
    return cu_fail(r);
  }
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    return Fail(ncclUnhandledCudaError, CudaFailure(d, r, false));
  }
  if (gran == 0) gran = 1;
  // NCCL's ALIGN_SIZE, wrapping as it does: SIZE_MAX becomes 0 (refused by cuMemCreate).
  const std::size_t handle_size = (size + gran - 1) / gran * gran;
  CUmemGenericAllocationHandle handle = 0;
  CUresult r = d.cuMemCreate(&handle, handle_size, &prop, 0);
  if ((types & CU_MEM_HANDLE_TYPE_FABRIC) &&
      (r == CUDA_ERROR_NOT_PERMITTED || r == CUDA_ERROR_NOT_SUPPORTED)) {
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    r = d.cuMemCreate(&handle, handle_size, &prop, 0);
  }
  if (r != CUDA_SUCCESS) return cu_fail(r);
  // The steps after cuMemCreate fail only under injected faults; unlike NCCL (which leaks what
  // it made), the fake undoes them.
  CUdeviceptr va = 0;
  if (r = d.cuMemAddressReserve(&va, handle_size, gran, 0, 0); r != CUDA_SUCCESS) {
    d.cuMemRelease(handle);
    return cu_fail(r);
  }
  if (r = d.cuMemMap(va, handle_size, 0, handle, 0); r != CUDA_SUCCESS) {
    d.cuMemAddressFree(va, handle_size);
    d.cuMemRelease(handle);
    return cu_fail(r);
  }
  for (int i = 0; i < count; ++i) {
    int p2p = 0;
    if (i != cuda_dev &&
        (d.cuDeviceCanAccessPeer(&p2p, i, cuda_dev) != CUDA_SUCCESS || p2p == 0)) {
      continue;
    }
    CUmemAccessDesc access = {};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = i;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (r = d.cuMemSetAccess(va, handle_size, &access, 1); r != CUDA_SUCCESS) {
      d.cuMemUnmap(va, handle_size);
      d.cuMemAddressFree(va, handle_size);
      d.cuMemRelease(handle);
      return cu_fail(r);
    }
  }
  // NCCL keeps the cuMemCreate reference (ncclMemFree releases it) and writes the address.
  *ptr = reinterpret_cast<void*>(va);
  return ncclSuccess;
}

ncclResult_t MemFree(const internal::DriverFunctions& d, void* ptr) {
  int save = 0;
  if (CUresult r = RuntimeDevice(d, &save); r != CUDA_SUCCESS) {
    return Fail(ncclUnhandledCudaError, CudaFailure(d, r, false));
  }
  if (ptr == nullptr) return ncclSuccess;  // cudaFree(NULL)
  auto cu_fail = [&](CUresult r) { return Fail(ncclUnhandledCudaError, CudaFailure(d, r, true)); };
  const auto va = reinterpret_cast<CUdeviceptr>(ptr);
  int ordinal = 0;
  if (CUresult r = d.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va);
      r != CUDA_SUCCESS) {
    return cu_fail(r);
  }
  // ncclCuMemFree, step by step.
  CUmemGenericAllocationHandle handle = 0;
  if (CUresult r = d.cuMemRetainAllocationHandle(&handle, ptr); r != CUDA_SUCCESS) {
    return cu_fail(r);
  }
  if (CUresult r = d.cuMemRelease(handle); r != CUDA_SUCCESS) return cu_fail(r);
  std::size_t size = 0;
  if (CUresult r = d.cuMemGetAddressRange(nullptr, &size, va); r != CUDA_SUCCESS) {
    return cu_fail(r);
  }
  if (CUresult r = d.cuMemUnmap(va, size); r != CUDA_SUCCESS) return cu_fail(r);
  if (CUresult r = d.cuMemRelease(handle); r != CUDA_SUCCESS) return cu_fail(r);
  if (CUresult r = d.cuMemAddressFree(va, size); r != CUDA_SUCCESS) return cu_fail(r);
  return ncclSuccess;
}

const internal::DriverFunctions* DriverOrSetError(const char* api) {
  const internal::FakecudaHooks* hooks = internal::Hooks();
  if (hooks == nullptr) {
    SetLastError(std::string("fakenccl: ") + api + ": " + internal::HooksUnavailableReason());
    return nullptr;
  }
  return &hooks->driver;
}

}  // namespace
}  // namespace fakenccl

extern "C" ncclResult_t ncclMemAlloc(void** ptr, size_t size) try {
  FAKENCCL_ENTER(ncclMemAlloc)
  const fakenccl::internal::DriverFunctions* d = fakenccl::DriverOrSetError("ncclMemAlloc");
  return d == nullptr ? ncclUnhandledCudaError : fakenccl::MemAlloc(*d, ptr, size);
} catch (...) {
  return fakenccl::EntryFailed("ncclMemAlloc");
}

extern "C" ncclResult_t ncclMemFree(void* ptr) try {
  FAKENCCL_ENTER(ncclMemFree)
  const fakenccl::internal::DriverFunctions* d = fakenccl::DriverOrSetError("ncclMemFree");
  return d == nullptr ? ncclUnhandledCudaError : fakenccl::MemFree(*d, ptr);
} catch (...) {
  return fakenccl::EntryFailed("ncclMemFree");
}

// ---- Profiling aliases (drop-in library only) --------------------------------------------------
#ifdef FAKENCCL_PROFILING_ALIASES
#define CUHAL_NCCL_PFN(kind, name, arity) \
  extern "C" decltype(::name) p##name __attribute__((alias(#name)));
#include "core/symbols/nccl_symbols.inc"
#undef CUHAL_NCCL_PFN
#define FAKENCCL_ALIAS(name) extern "C" decltype(::name) p##name __attribute__((alias(#name)));
FAKENCCL_ALIAS(ncclBcast)
FAKENCCL_ALIAS(ncclCommRegister)
FAKENCCL_ALIAS(ncclCommDeregister)
FAKENCCL_ALIAS(ncclCommWindowRegister)
FAKENCCL_ALIAS(ncclCommWindowDeregister)
FAKENCCL_ALIAS(ncclCommRevoke)
FAKENCCL_ALIAS(ncclCommShrink)
FAKENCCL_ALIAS(ncclCommInitRankScalable)
FAKENCCL_ALIAS(ncclGroupSimulateEnd)
FAKENCCL_ALIAS(ncclMemAlloc)
FAKENCCL_ALIAS(ncclMemFree)
#undef FAKENCCL_ALIAS
extern "C" void pncclResetDebugInit() __attribute__((alias("ncclResetDebugInit")));
#endif
