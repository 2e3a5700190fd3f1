// Copyright 2026 The cuhal Authors.
// Probes of the driver's answers to valid and invalid calls of the module, launch, graph, error
// and cuGetProcAddress entry points. A plain cuda.h program: run against the real libcuda.so.1 on
// the GPU machine, its output is the reference (probe_expected.txt); run against the drop-in
// fake, it must print the same lines. Lines print only what the fake must reproduce (results and
// exact values), not what may differ (a JIT's register count, its log's wording). Of cuhal it uses
// only core/base's environment reader (PROBE_SKIP).
//
//   probe_program            all probes, one "name: answer" line each
//   probe_program strings    FAKECUDA_ERROR_STRING(code, "text") for every code (the real
//                            driver's output is fakecuda/cuda_error_strings.inc)
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "core/base/env.h"

namespace {

const char* Name(CUresult r) {
  const char* name = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) return "(unnamed)";
  return name;
}

// Probes named in $PROBE_SKIP (','-separated) crashed the driver in an earlier run: they print
// "CRASH" instead of running. Each probe prints its name before it calls the driver, so the last
// line of a run that crashed names the culprit (tests/fakecuda_dropin/run_probes.sh reruns with it
// skipped).
bool Begin(const char* probe) {
  if (const std::optional<std::string> skip = cuhal::env::ReadString("PROBE_SKIP")) {
    std::string list = "," + *skip + ",";
    if (list.find(std::string(",") + probe + ",") != std::string::npos) {
      std::printf("%s: CRASH\n", probe);
      std::fflush(stdout);
      return false;
    }
  }
  std::printf("%s: ", probe);
  std::fflush(stdout);
  return true;
}

#define PROBE(probe, expr)                        \
  do {                                            \
    if (Begin(probe)) {                           \
      CUresult probe_result_ = (expr);            \
      std::printf("%s\n", Name(probe_result_));   \
      std::fflush(stdout);                        \
    }                                             \
  } while (0)

// The result, then `value` when the call succeeded.
#define PROBE_VALUE(probe, expr, value)                                                   \
  do {                                                                                    \
    if (Begin(probe)) {                                                                   \
      CUresult probe_result_ = (expr);                                                    \
      std::printf("%s %lld\n", Name(probe_result_),                                       \
                  probe_result_ == CUDA_SUCCESS ? static_cast<long long>(value) : 0LL);   \
      std::fflush(stdout);                                                                \
    }                                                                                     \
  } while (0)

const char* kPtx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .global .align 4 .u32 g = 7;
.visible .entry k(.param .u64 p, .param .u32 n)
{
	ret;
}
.visible .entry bounded(.param .u64 p)
.maxntid 256, 1, 1
{
	.reg .b32 %r<3>;
	.shared .align 4 .b8 smem[1024];
	mov.u32 %r1, smem;
	mov.u32 %r2, %tid.x;
	st.shared.u32 [%r1], %r2;
	ret;
}
)";

const char* kBroken = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry broken(\n";

int Strings() {
  static const struct {
    CUresult code;
    const char* name;
  } kCodes[] = {
#define CUHAL_CU_RESULT(code) {code, #code},
#include "core/symbols/cu_result_list.inc"
#undef CUHAL_CU_RESULT
  };
  for (const auto& c : kCodes) {
    const char* text = nullptr;
    if (cuGetErrorString(c.code, &text) != CUDA_SUCCESS || text == nullptr) text = "";
    std::string escaped;
    for (const char* p = text; *p; ++p) {
      if (*p == '"' || *p == '\\') escaped += '\\';
      escaped += *p;
    }
    std::printf("FAKECUDA_ERROR_STRING(%s, \"%s\")\n", c.name, escaped.c_str());
  }
  return 0;
}

void ProcAddress(bool initialized) {
  const char* when = initialized ? "after-init" : "before-init";
  char probe[128];
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  auto run = [&](const char* what, const char* symbol, int version, cuuint64_t flags) {
    pfn = reinterpret_cast<void*>(1);
    int raw = 77;  // "untouched" (not an enumerator: handled as bytes only)
    std::memcpy(&status, &raw, sizeof(raw));
    std::snprintf(probe, sizeof(probe), "getproc.%s.%s", when, what);
    if (!Begin(probe)) return;
    CUresult r = cuGetProcAddress(symbol, &pfn, version, flags, &status);
    std::memcpy(&raw, &status, sizeof(raw));
    std::printf("%s status=%d pfn=%s\n", Name(r), raw,
                pfn == nullptr ? "null" : (pfn == reinterpret_cast<void*>(1) ? "untouched" : "set"));
    std::fflush(stdout);
  };
  run("cuInit", "cuInit", CUDA_VERSION, 0);
  run("unknown", "cuNoSuchFunction", CUDA_VERSION, 0);
  run("versioned_name", "cuMemAlloc_v2", CUDA_VERSION, 0);
  run("mempool_11010", "cuMemAllocAsync", 11010, 0);
  run("mempool_11020", "cuMemAllocAsync", 11020, 0);
  run("ctxcreate_12040", "cuCtxCreate", 12040, 0);
  run("ctxcreate_3020", "cuCtxCreate", 3020, 0);
  run("getproc_11080", "cuGetProcAddress", 11080, 0);
  run("newer_than_driver", "cuInit", 99000, 0);
  run("flags_4", "cuInit", CUDA_VERSION, 4);
  run("flags_3", "cuStreamQuery", CUDA_VERSION, 3);
  run("launchkernel_3000", "cuLaunchKernel", 3000, 0);
  if (initialized) {
    PROBE("getproc.null_symbol", cuGetProcAddress(nullptr, &pfn, CUDA_VERSION, 0, &status));
    PROBE("getproc.null_pfn", cuGetProcAddress("cuInit", nullptr, CUDA_VERSION, 0, &status));
    void* legacy = nullptr;
    void* per_thread = nullptr;
    cuGetProcAddress("cuStreamSynchronize", &legacy, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                     nullptr);
    cuGetProcAddress("cuStreamSynchronize", &per_thread, CUDA_VERSION,
                     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, nullptr);
    std::printf("getproc.ptds_differs: %s\n", legacy != per_thread ? "yes" : "no");
    void* plain = nullptr;
    void* plain_ptds = nullptr;
    cuGetProcAddress("cuMemAlloc", &plain, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, nullptr);
    cuGetProcAddress("cuMemAlloc", &plain_ptds, CUDA_VERSION,
                     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, nullptr);
    std::printf("getproc.no_stream_same: %s\n", plain == plain_ptds ? "yes" : "no");
    // The legacy (4-parameter) resolver that cuGetProcAddress hands out for CUDA 11.3-11.8.
    void* legacy_pfn = nullptr;
    cuGetProcAddress("cuGetProcAddress", &legacy_pfn, 11080, 0, nullptr);
    using Legacy = CUresult (*)(const char*, void**, int, cuuint64_t);
    Legacy legacy_resolver = nullptr;
    std::memcpy(&legacy_resolver, &legacy_pfn, sizeof(legacy_pfn));
    if (legacy_resolver != nullptr) {
      void* out = reinterpret_cast<void*>(1);
      if (Begin("getproc.legacy.unknown")) {
        CUresult r = legacy_resolver("cuNoSuchFunction", &out, 11080, 0);
        std::printf("%s pfn=%s\n", Name(r), out == nullptr ? "null" : "set");
      }
      out = reinterpret_cast<void*>(1);
      if (Begin("getproc.legacy.too_new")) {
        CUresult r = legacy_resolver("cuMemAllocAsync", &out, 11010, 0);
        std::printf("%s pfn=%s\n", Name(r), out == nullptr ? "null" : "set");
      }
      if (Begin("getproc.legacy.cuInit")) {
        CUresult r = legacy_resolver("cuInit", &out, 11080, 0);
        std::printf("%s pfn=%s\n", Name(r), out == nullptr ? "null" : "set");
      }
    }
  }
}

void Errors() {
  // An out-of-range code: passed as the int the ABI carries (no enum value exists for it).
  using ByInt = CUresult (*)(int, const char**);
  ByInt name_by_int = nullptr;
  ByInt string_by_int = nullptr;
  auto name_fn = &cuGetErrorName;
  auto string_fn = &cuGetErrorString;
  std::memcpy(&name_by_int, &name_fn, sizeof(name_fn));
  std::memcpy(&string_by_int, &string_fn, sizeof(string_fn));
  const int unknown = 987654;
  const char* s = reinterpret_cast<const char*>(1);
  if (Begin("errors.name_unknown")) {
    CUresult r = name_by_int(unknown, &s);
    std::printf("%s %s\n", Name(r), s == nullptr ? "null" : "set");
  }
  s = reinterpret_cast<const char*>(1);
  if (Begin("errors.string_unknown")) {
    CUresult r = string_by_int(unknown, &s);
    std::printf("%s %s\n", Name(r), s == nullptr ? "null" : "set");
  }
  PROBE("errors.name_null", cuGetErrorName(CUDA_SUCCESS, nullptr));
  PROBE("errors.string_null", cuGetErrorString(CUDA_SUCCESS, nullptr));
}

void Modules() {
  CUmodule m = nullptr;
  PROBE("module.load.no_context", cuModuleLoadData(&m, kPtx));
  CUcontext ctx = nullptr;
  cuDevicePrimaryCtxRetain(&ctx, 0);
  cuCtxPushCurrent(ctx);
  PROBE("module.load.null_module", cuModuleLoadData(nullptr, kPtx));
  PROBE("module.load.null_image", cuModuleLoadData(&m, nullptr));
  PROBE("module.load.text", cuModuleLoadData(&m, "hello, world"));
  PROBE("module.load.empty", cuModuleLoadData(&m, ""));
  PROBE("module.load.broken_ptx", cuModuleLoadData(&m, kBroken));
  PROBE("module.load.sm_120",
        cuModuleLoadData(&m, ".version 8.7\n.target sm_120\n.address_size 64\n"
                             ".visible .entry k()\n{\n\tret;\n}\n"));
  PROBE("module.load.ptx_9_9",
        cuModuleLoadData(&m, ".version 9.9\n.target sm_80\n.address_size 64\n"
                             ".visible .entry k()\n{\n\tret;\n}\n"));
  PROBE("module.load.no_target",
        cuModuleLoadData(&m, ".version 8.0\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"));
  PROBE("module.loadex.options_without_arrays", cuModuleLoadDataEx(&m, kPtx, 1, nullptr, nullptr));
  CUjit_option bad_option[] = {static_cast<CUjit_option>(9999)};
  void* bad_values[] = {nullptr};
  PROBE("module.loadex.unknown_option", cuModuleLoadDataEx(&m, kPtx, 1, bad_option, bad_values));
  char log[1024];
  std::memset(log, 'x', sizeof(log));
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(std::uintptr_t{sizeof(log)})};
  CUresult r = CUDA_SUCCESS;
  if (Begin("module.loadex.broken_log")) {
    r = cuModuleLoadDataEx(&m, kBroken, 2, opts, vals);
    std::printf("%s nonempty=%s terminated=%s\n", Name(r),
                log[0] != 'x' && log[0] != '\0' ? "yes" : "no",
                std::memchr(log, '\0', sizeof(log)) != nullptr ? "yes" : "no");
  }

  CUmodule mod = nullptr;
  PROBE("module.load.good", cuModuleLoadData(&mod, kPtx));
  CUfunction k = nullptr, bounded = nullptr, f = nullptr;
  PROBE("module.getfunction", cuModuleGetFunction(&k, mod, "k"));
  cuModuleGetFunction(&bounded, mod, "bounded");
  PROBE("module.getfunction.unknown", cuModuleGetFunction(&f, mod, "nope"));
  PROBE("module.getfunction.null_out", cuModuleGetFunction(nullptr, mod, "k"));
  PROBE("module.getfunction.null_name", cuModuleGetFunction(&f, mod, nullptr));
  PROBE("module.getfunction.null_module", cuModuleGetFunction(&f, nullptr, "k"));
  CUdeviceptr gp = 0;
  size_t gbytes = 0;
  PROBE_VALUE("module.getglobal", cuModuleGetGlobal(&gp, &gbytes, mod, "g"), gbytes);
  PROBE("module.getglobal.unknown", cuModuleGetGlobal(&gp, &gbytes, mod, "nope"));
  PROBE("module.getglobal.null_name", cuModuleGetGlobal(&gp, &gbytes, mod, nullptr));
  PROBE("module.getglobal.null_outputs", cuModuleGetGlobal(nullptr, nullptr, mod, "g"));
  PROBE("module.getglobal.null_module", cuModuleGetGlobal(&gp, &gbytes, nullptr, "g"));

  // Function attributes (values the fake must match exactly).
  static const struct {
    CUfunction_attribute attr;
    const char* name;
  } kAttrs[] = {
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max_threads"},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "shared"},
      {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "const"},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local"},
      {CU_FUNC_ATTRIBUTE_PTX_VERSION, "ptx_version"},
      {CU_FUNC_ATTRIBUTE_BINARY_VERSION, "binary_version"},
      {CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, "cache_mode_ca"},
      {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max_dynamic_shared"},
      {CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "carveout"},
      {CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, "cluster_must_be_set"},
      {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, "cluster_width"},
      {CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, "non_portable_cluster"},
      {CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, "cluster_policy"},
  };
  char probe[128];
  for (CUfunction fn : {k, bounded}) {
    for (const auto& a : kAttrs) {
      int v = -12345;
      std::snprintf(probe, sizeof(probe), "func.%s.%s", fn == k ? "k" : "bounded", a.name);
      PROBE_VALUE(probe, cuFuncGetAttribute(&v, a.attr, fn), v);
    }
  }
  int regs = 0;
  if (Begin("func.k.num_regs_positive")) {
    r = cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k);
    std::printf("%s %s\n", Name(r), regs > 0 ? "yes" : "no");
  }
  int v = 0;
  PROBE("func.get.attr_max", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, k));
  PROBE("func.get.null_out", cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, k));
  PROBE("func.get.null_function", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr));
  PROBE("func.set.num_regs", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_NUM_REGS, 8));
  PROBE("func.set.max_threads", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 128));
  PROBE("func.set.carveout_50", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
  PROBE("func.set.carveout_101", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101));
  PROBE("func.set.carveout_-1", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1));
  PROBE("func.set.carveout_-2", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -2));
  int optin = 0;
  cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0);
  std::printf("device.optin_shared: %d\n", optin);
  PROBE("func.set.dynamic_shared_optin",
        cuFuncSetAttribute(bounded, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 1024));
  PROBE("func.set.dynamic_shared_over",
        cuFuncSetAttribute(bounded, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 1024 + 1));
  PROBE("func.set.dynamic_shared_negative",
        cuFuncSetAttribute(bounded, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1));
  PROBE("func.set.cluster_width_2", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));
  PROBE("func.set.cluster_width_0", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 0));
  PROBE("func.set.non_portable_2", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2));
  PROBE_VALUE("func.get.non_portable_after_2",
              cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, k), v);
  PROBE("func.set.non_portable_-1", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, -1));
  PROBE("func.set.policy_3", cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 3));

  // Launches (k does nothing; bounded writes shared memory only).
  CUdeviceptr data = 0;
  cuMemAlloc(&data, 4096);
  unsigned n = 0;
  void* params[] = {&data, &n};
  auto launch = [&](const char* probe_name, CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                    unsigned bx, unsigned by, unsigned bz, unsigned shared, void** p, void** extra) {
    if (!Begin(probe_name)) return;
    CUresult lr = cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, shared, nullptr, p, extra);
    CUresult sr = cuCtxSynchronize();
    std::printf("%s sync=%s\n", Name(lr), Name(sr));
    std::fflush(stdout);
  };
  launch("launch.ok", k, 1, 1, 1, 1024, 1, 1, 0, params, nullptr);
  launch("launch.block_1025", k, 1, 1, 1, 1025, 1, 1, 0, params, nullptr);
  launch("launch.block_z_65", k, 1, 1, 1, 1, 1, 65, 0, params, nullptr);
  launch("launch.threads_2048", k, 1, 1, 1, 32, 32, 2, 0, params, nullptr);
  launch("launch.grid_0", k, 0, 1, 1, 1, 1, 1, 0, params, nullptr);
  launch("launch.block_0", k, 1, 1, 1, 0, 1, 1, 0, params, nullptr);
  launch("launch.grid_y_65536", k, 1, 65536, 1, 1, 1, 1, 0, params, nullptr);
  launch("launch.grid_x_2p31", k, 2147483648u, 1, 1, 1, 1, 1, 0, params, nullptr);
  launch("launch.shared_49152", k, 1, 1, 1, 1, 1, 1, 49152, params, nullptr);
  launch("launch.shared_49153", k, 1, 1, 1, 1, 1, 1, 49153, params, nullptr);
  void* bparams[] = {&data};
  launch("launch.over_maxntid", bounded, 1, 1, 1, 512, 1, 1, 0, bparams, nullptr);
  launch("launch.bounded_256", bounded, 1, 1, 1, 256, 1, 1, 0, bparams, nullptr);
  alignas(8) unsigned char buffer[12] = {};
  std::memcpy(buffer, &data, 8);
  size_t size = sizeof(buffer);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  launch("launch.extra", k, 1, 1, 1, 1, 1, 1, 0, nullptr, extra);
  launch("launch.params_and_extra", k, 1, 1, 1, 1, 1, 1, 0, params, extra);
  size_t small = 8;
  void* extra_small[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                         CU_LAUNCH_PARAM_END};
  launch("launch.extra_small", k, 1, 1, 1, 1, 1, 1, 0, nullptr, extra_small);
  size_t big = 64;
  alignas(8) unsigned char big_buffer[64] = {};
  std::memcpy(big_buffer, &data, 8);
  void* extra_big[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, big_buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &big,
                       CU_LAUNCH_PARAM_END};
  launch("launch.extra_big", k, 1, 1, 1, 1, 1, 1, 0, nullptr, extra_big);
  size_t sixteen = 16;
  void* extra_16[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, big_buffer, CU_LAUNCH_PARAM_BUFFER_SIZE,
                      &sixteen, CU_LAUNCH_PARAM_END};
  launch("launch.extra_16", k, 1, 1, 1, 1, 1, 1, 0, nullptr, extra_16);
  size_t seventeen = 17;
  void* extra_17[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, big_buffer, CU_LAUNCH_PARAM_BUFFER_SIZE,
                      &seventeen, CU_LAUNCH_PARAM_END};
  launch("launch.extra_17", k, 1, 1, 1, 1, 1, 1, 0, nullptr, extra_17);
  void* extra_no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, big_buffer, CU_LAUNCH_PARAM_END};
  launch("launch.extra_no_size", k, 1, 1, 1, 1, 1, 1, 0, nullptr, extra_no_size);
  launch("launch.no_params", k, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr);
  void* extra_unknown[] = {reinterpret_cast<void*>(0x55), buffer, CU_LAUNCH_PARAM_END};
  launch("launch.extra_unknown_key", k, 1, 1, 1, 1, 1, 1, 0, nullptr, extra_unknown);
  launch("launch.null_function", nullptr, 1, 1, 1, 1, 1, 1, 0, params, nullptr);
  // A function of this context launched while another context is current.
  CUcontext other = nullptr;
  cuCtxCreate(&other, nullptr, 0, 0);
  launch("launch.other_context", k, 1, 1, 1, 1, 1, 1, 0, params, nullptr);
  cuCtxDestroy(other);

  // Graphs.
  CUgraph graph = nullptr;
  PROBE("graph.create.flags_1", cuGraphCreate(&graph, 1));
  PROBE("graph.create.null", cuGraphCreate(nullptr, 0));
  cuGraphCreate(&graph, 0);
  CUgraph other_graph = nullptr;
  cuGraphCreate(&other_graph, 0);
  CUgraphNode a = nullptr, foreign = nullptr, x = nullptr;
  PROBE("graph.empty.null_graph", cuGraphAddEmptyNode(&x, nullptr, nullptr, 0));
  PROBE("graph.empty.null_out", cuGraphAddEmptyNode(nullptr, graph, nullptr, 0));
  PROBE("graph.empty.null_deps", cuGraphAddEmptyNode(&x, graph, nullptr, 1));
  cuGraphAddEmptyNode(&a, graph, nullptr, 0);
  cuGraphAddEmptyNode(&foreign, other_graph, nullptr, 0);
  PROBE("graph.empty.foreign_dep", cuGraphAddEmptyNode(&x, graph, &foreign, 1));
  CUgraphNode dup[] = {a, a};
  PROBE("graph.empty.duplicate_dep", cuGraphAddEmptyNode(&x, graph, dup, 2));
  CUDA_HOST_NODE_PARAMS hp{};
  PROBE("graph.host.null_fn", cuGraphAddHostNode(&x, graph, nullptr, 0, &hp));
  PROBE("graph.host.null_params", cuGraphAddHostNode(&x, graph, nullptr, 0, nullptr));
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = data;
  ms.elementSize = 3;
  ms.width = 4;
  ms.height = 1;
  PROBE("graph.memset.element_3", cuGraphAddMemsetNode(&x, graph, nullptr, 0, &ms, ctx));
  ms.elementSize = 4;
  ms.width = 4096;
  PROBE("graph.memset.out_of_bounds", cuGraphAddMemsetNode(&x, graph, nullptr, 0, &ms, ctx));
  ms.width = 4;
  ms.dst = data + 2;
  PROBE("graph.memset.misaligned", cuGraphAddMemsetNode(&x, graph, nullptr, 0, &ms, ctx));
  ms.dst = data;
  PROBE("graph.memset.null_ctx", cuGraphAddMemsetNode(&x, graph, nullptr, 0, &ms, nullptr));
  ms.height = 2;
  ms.pitch = 8;
  PROBE("graph.memset.pitch_too_small", cuGraphAddMemsetNode(&x, graph, nullptr, 0, &ms, ctx));
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = data;
  cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.dstDevice = data + 2048;
  cp.WidthInBytes = 4096;
  cp.Height = 1;
  cp.Depth = 1;
  PROBE("graph.memcpy.out_of_bounds", cuGraphAddMemcpyNode(&x, graph, nullptr, 0, &cp, ctx));
  cp.WidthInBytes = 1024;
  PROBE("graph.memcpy.ok", cuGraphAddMemcpyNode(&x, graph, nullptr, 0, &cp, ctx));
  PROBE("graph.event_record.null_event", cuGraphAddEventRecordNode(&x, graph, nullptr, 0, nullptr));
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = k;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 2048;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = params;
  PROBE("graph.kernel.block_2048", cuGraphAddKernelNode(&x, graph, nullptr, 0, &kp));
  kp.blockDimX = 1;
  kp.func = nullptr;
  PROBE("graph.kernel.null_func", cuGraphAddKernelNode(&x, graph, nullptr, 0, &kp));
  CUgraphExec exec = nullptr;
  PROBE("graph.instantiate.flags_big", cuGraphInstantiateWithFlags(&exec, graph, 1ull << 20));
  PROBE("graph.instantiate.flag_upload", cuGraphInstantiateWithFlags(&exec, graph, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD));
  if (exec != nullptr) cuGraphExecDestroy(exec);
  exec = nullptr;
  PROBE("graph.instantiate.null_graph", cuGraphInstantiateWithFlags(&exec, nullptr, 0));
  PROBE("graph.instantiate.ok", cuGraphInstantiateWithFlags(&exec, graph, 0));
  PROBE("graph.launch.ok", cuGraphLaunch(exec, nullptr));
  PROBE("graph.launch.sync", cuCtxSynchronize());
  PROBE("graph.launch.null_exec", cuGraphLaunch(nullptr, nullptr));
  PROBE("graph.exec_destroy.null", cuGraphExecDestroy(nullptr));
  PROBE("graph.destroy.null", cuGraphDestroy(nullptr));
  cuGraphExecDestroy(exec);
  cuGraphDestroy(graph);
  cuGraphDestroy(other_graph);
  PROBE("module.unload.null", cuModuleUnload(nullptr));
  PROBE("module.unload.good", cuModuleUnload(mod));
  // Stale handles (may crash the real driver: the runner then records CRASH).
  PROBE("stale.module_getfunction", cuModuleGetFunction(&f, mod, "k"));
  PROBE("stale.function_attribute", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k));
  PROBE("stale.module_unload", cuModuleUnload(mod));
  PROBE("stale.graph_destroy", cuGraphDestroy(graph));
  PROBE("stale.exec_destroy", cuGraphExecDestroy(exec));
  cuMemFree(data);
  cuCtxPopCurrent(nullptr);
  cuDevicePrimaryCtxRelease(0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "strings") == 0) return Strings();
  Errors();
  ProcAddress(/*initialized=*/false);
  int count = 0;
  PROBE("before_init.device_count", cuDeviceGetCount(&count));
  PROBE("init", cuInit(0));
  ProcAddress(/*initialized=*/true);
  Modules();
  return 0;
}
