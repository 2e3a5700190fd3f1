// Copyright 2026 The cuhal Authors.
// The drop-in libnccl.so.2: creates and installs a FakeNccl when the library is loaded,
// configured from the environment:
//   FAKENCCL_VERSION        what ncclGetVersion reports (default: the nccl.h it was built with);
//   FAKENCCL_TIMEOUT_TICKS  NcclOptions::timeout_ticks (default 30000);
//   FAKENCCL_FAULTS         fault rules and rank deaths (NcclFaultInjector's syntax);
//   FAKENCCL_LEAK_REPORT    "1": print live communicators to stderr when the library unloads.
// It also exports the nccl.h entry points that cuhal's table does not list but that unmodified
// programs call (ncclBcast, ncclCommRegister/Deregister), each with its pnccl* alias. Collectives
// run on fakecuda, found at run time (dropin/hooks.cc).
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "fakenccl/fake_nccl.h"

namespace {

// Owned by this library for the rest of the process: queued stream work may outlive unloading.
fakenccl::FakeNccl* g_nccl = nullptr;

bool ParsePositive(const char* text, std::uint64_t* out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (*end != '\0' || v == 0) return false;
  *out = v;
  return true;
}

__attribute__((constructor)) void FakencclDropinLoad() try {
  fakenccl::NcclOptions options;
  if (const char* v = std::getenv("FAKENCCL_VERSION"); v != nullptr) {
    std::uint64_t version = 0;
    if (!ParsePositive(v, &version)) {
      std::fprintf(stderr, "fakenccl (libnccl.so.2): FAKENCCL_VERSION='%s' is not a positive "
                   "integer; using %d\n", v, options.version);
    } else {
      options.version = static_cast<int>(version);
    }
  }
  if (const char* v = std::getenv("FAKENCCL_TIMEOUT_TICKS"); v != nullptr) {
    if (!ParsePositive(v, &options.timeout_ticks)) {
      std::fprintf(stderr, "fakenccl (libnccl.so.2): FAKENCCL_TIMEOUT_TICKS='%s' is not a "
                   "positive integer; using %llu\n", v,
                   static_cast<unsigned long long>(options.timeout_ticks));
    }
  }
  std::string error;
  std::unique_ptr<fakenccl::FakeNccl> nccl = fakenccl::FakeNccl::Create(options, &error);
  if (nccl == nullptr) {
    std::fprintf(stderr, "fakenccl (libnccl.so.2): %s; no fake NCCL is installed\n",
                 error.c_str());
    return;
  }
  if (const char* spec = std::getenv("FAKENCCL_FAULTS"); spec != nullptr) {
    if (!nccl->faults().AddRulesFromSpec(spec, &error)) {
      std::fprintf(stderr, "fakenccl (libnccl.so.2): %s; no faults injected\n", error.c_str());
    }
  }
  g_nccl = nccl.release();
  fakenccl::Install(g_nccl);
} catch (...) {
  std::fprintf(stderr, "fakenccl (libnccl.so.2): loading failed with an exception; no fake NCCL "
               "is installed\n");
}

__attribute__((destructor)) void FakencclDropinUnload() try {
  if (g_nccl == nullptr) return;
  const char* report = std::getenv("FAKENCCL_LEAK_REPORT");
  if (report != nullptr && std::strcmp(report, "1") == 0) {
    std::fprintf(stderr, "fakenccl: leak report: %s\n%s",
                 g_nccl->LiveObjects().ToString().c_str(), g_nccl->LeakReport().c_str());
  }
} catch (...) {
  std::fprintf(stderr, "fakenccl (libnccl.so.2): the leak report failed with an exception\n");
}

}  // namespace

// ---- Entry points outside cuhal's table --------------------------------------------------------

// ncclBroadcast is a function-try-block; these bodies cannot throw, and are one all the same
// (the boundary is a wall).
extern "C" ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                  ncclComm_t comm, cudaStream_t stream) try {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
} catch (...) {
  return ncclInternalError;
}

// Registration is an optimization in NCCL; the fake has nothing to register. UNMEASURED: NCCL's
// checks of these arguments.
extern "C" ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t /*size*/,
                                         void** handle) try {
  if (comm == nullptr || handle == nullptr) return ncclInvalidArgument;
  *handle = buff != nullptr ? buff : reinterpret_cast<void*>(0x1);
  return ncclSuccess;
} catch (...) {
  return ncclInternalError;
}

extern "C" ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* /*handle*/) try {
  return comm == nullptr ? ncclInvalidArgument : ncclSuccess;
} catch (...) {
  return ncclInternalError;
}

extern "C" decltype(ncclBcast) pncclBcast __attribute__((alias("ncclBcast")));
extern "C" decltype(ncclCommRegister) pncclCommRegister __attribute__((alias("ncclCommRegister")));
extern "C" decltype(ncclCommDeregister) pncclCommDeregister
    __attribute__((alias("ncclCommDeregister")));
