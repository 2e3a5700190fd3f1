// Copyright 2026 The cuhal Authors.
// fakenccl's C++ API: build a fake NCCL, install it, fill an NcclApi table from it.
//
// STATUS: MINIMAL. This is the Foundation's placeholder; a later issue (issue 5) makes fakenccl a
// full fake whose communicators run collectives on fakecuda streams and memory. Today:
//   - implemented for real:  ncclGetVersion (the configured NcclOptions::version; a null pointer
//                            is ncclInvalidArgument), ncclGetErrorString (NCCL's own strings),
//                            ncclGetLastError, ncclGetUniqueId (128 random non-zero bytes);
//   - every other entry of core/symbols/nccl_symbols.inc exists, with nccl.h's exact name and
//     signature (so that the table filler can take its address and the same objects can later be
//     linked into a drop-in libnccl.so.2), but returns ncclInvalidUsage and sets the text that
//     ncclGetLastError() returns to "fakenccl: <name> is not implemented yet (issue 5)".
//
// The entry points are extern "C" functions named as in nccl.h (ncclGetVersion, ...). They serve
// the process-wide installed FakeNccl (Install/ScopedNccl), as libnccl is process-wide. With none
// installed, every entry point that needs one returns ncclInvalidUsage and sets the last error to
// "fakenccl: no FakeNccl is installed (create a fakenccl::ScopedNccl first)"; ncclGetErrorString
// and ncclGetLastError need none.
//
// Difference from NCCL, on purpose: the text behind ncclGetLastError() is kept per thread (NCCL
// keeps one process-wide buffer), so that ranks run as threads of one test do not overwrite each
// other's message. The comm argument is ignored, as NCCL does.
#ifndef CUHAL_FAKENCCL_FAKE_NCCL_H_
#define CUHAL_FAKENCCL_FAKE_NCCL_H_

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "core/symbols/nccl_api.h"

namespace fakenccl {

struct NcclOptions {
  // What ncclGetVersion reports, in NCCL_VERSION_CODE form (2.28.9 is 22809). Must be > 0.
  int version = NCCL_VERSION_CODE;
};

// A fake NCCL instance.
//
// Ownership: the creator owns it (unique_ptr). While installed (Install/ScopedNccl) the C entry
// points serve it; it must outlive its installation. Thread-safety: every method and every entry
// point may be called from any thread. Stream ordering: none yet (no collectives); later,
// collectives will be ordered on the fakecuda stream they are given, as NCCL defines.
class FakeNccl {
 public:
  // Returns null and sets *error (when given) when the options are invalid (version <= 0).
  static std::unique_ptr<FakeNccl> Create(NcclOptions options = {}, std::string* error = nullptr);
  ~FakeNccl() = default;
  FakeNccl(const FakeNccl&) = delete;             // installed by address; holds a mutex
  FakeNccl& operator=(const FakeNccl&) = delete;  // ditto

  const NcclOptions& options() const { return options_; }

  // Fills *id with 128 random non-zero bytes (what ncclGetUniqueId returns). Thread-safe.
  void NewUniqueId(ncclUniqueId* id);

 private:
  explicit FakeNccl(NcclOptions options);

  const NcclOptions options_;
  std::mutex mutex_;
  std::mt19937_64 random_;  // guarded by mutex_
};

// The process-wide FakeNccl that the C entry points (ncclGetVersion, ...) serve; null when none.
// Install replaces any previous one (it does not own it). Thread-safe.
void Install(FakeNccl* nccl);
FakeNccl* Installed();

// Creates a FakeNccl and installs it for its lifetime; restores the previous one afterwards.
// Not thread-safe with respect to other ScopedNccl objects: nest them, do not interleave them.
class ScopedNccl {
 public:
  // Aborts (printing why) when the options are invalid: it is a test fixture.
  explicit ScopedNccl(NcclOptions options = {});
  ~ScopedNccl();
  ScopedNccl(const ScopedNccl&) = delete;             // restores the previous one exactly once
  ScopedNccl& operator=(const ScopedNccl&) = delete;  // ditto
  FakeNccl& nccl() { return *nccl_; }
  FakeNccl* operator->() { return nccl_.get(); }

 private:
  std::unique_ptr<FakeNccl> nccl_;
  FakeNccl* previous_;
};

// Fills every entry of `api` with fakenccl's entry points (they serve the installed FakeNccl).
// The table stays valid for the life of the process.
void FillNcclApi(cuhal::NcclApi* api);

}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_FAKE_NCCL_H_
