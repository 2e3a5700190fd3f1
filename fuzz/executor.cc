// Copyright 2026 The cuhal Authors.
// The executor: each operation's call, with the meaning of its arguments, and its outputs.
#include "fuzz/executor.h"

#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/symbols/api_status.h"
#include "fakecuda/fake_driver.h"
#include "fakecuda/sample_kernels.h"

namespace cuhal::fuzz {
namespace {

constexpr std::uint64_t kSentinel = 0x5a5a5a5a5a5a5a5aULL;

std::string Ref(int id) {
  if (id == kNoId) return "-";
  if (id == kNullId) return "null";
  std::string out = "h";  // appended: GCC 12's -Wrestrict misfires on "h" + string at -O3
  out += std::to_string(id);
  return out;
}

std::string Hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint64_t Fnv1a(const unsigned char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ data[i]) * 0x100000001b3ULL;
  return h;
}

// The bytes cuMemcpyHtoD writes for pattern `seed`.
void FillPattern(unsigned char* out, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = static_cast<unsigned char>(seed * 31 + i * 7 + (i >> 8));
  }
}

class Executor {
 public:
  Executor(const CudaApi& api, const LineSink& emit, const std::function<void()>& before_release)
      : api_(api), emit_(emit), before_release_(before_release) {}

  void Run(const Sequence& sequence) {
    if (!Prologue()) {
      emit_("END");
      return;
    }
    for (const Call& call : sequence) {
      std::string head = FormatCallInModel(call);
      std::string why = model_.Check(call);
      if (!why.empty()) {
        emit_(head + " -> SKIP(" + why + ")");
        continue;
      }
      outputs_.clear();
      CUresult r = Dispatch(call);
      model_.Apply(call, r == CUDA_SUCCESS);
      emit_(head + " -> " + ResultText(call.op, r) + outputs_);
    }
    Teardown();
    emit_("END");
  }

 private:
  static std::string FormatCallInModel(const Call& c) {
    char buf[200];
    std::snprintf(buf, sizeof(buf), " x=%llu y=%llu z=%llu", static_cast<unsigned long long>(c.x),
                  static_cast<unsigned long long>(c.y), static_cast<unsigned long long>(c.z));
    return std::to_string(c.id) + " " + std::string(OpName(c.op)) + " a=" + Ref(c.a) +
           " b=" + Ref(c.b) + " c=" + Ref(c.c) + buf;
  }

  static std::string ResultText(Op op, CUresult r) {
    bool timing = op == Op::kStreamQuery || op == Op::kEventQuery || op == Op::kEventElapsedTime;
    if (timing && (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY)) return "SUCCESS|NOT_READY";
    std::string_view name = CudaResultEnumName(r);
    return name.empty() ? "CUresult(" + std::to_string(static_cast<int>(r)) + ")"
                        : std::string(name);
  }

  void Out(const std::string& text) { outputs_ += " " + text; }

  // What a failing creation did to its out-parameter (the driver does not always clear it).
  void OutParam(CUresult r, std::uint64_t value) {
    if (r == CUDA_SUCCESS) return;
    Out(value == kSentinel ? "out=unchanged" : value == 0 ? "out=zero" : "out=written");
  }

  bool Prologue() {
    CUresult r = api_.cuInit(0);
    emit_("P cuInit -> " + ResultText(Op::kCtxSynchronize, r));
    if (r != CUDA_SUCCESS) return false;
    r = api_.cuDeviceGet(&device_, 0);
    emit_("P cuDeviceGet -> " + ResultText(Op::kCtxSynchronize, r));
    if (r != CUDA_SUCCESS) return false;
    r = api_.cuDevicePrimaryCtxRetain(&primary_, device_);
    emit_("P cuDevicePrimaryCtxRetain -> " + ResultText(Op::kCtxSynchronize, r));
    if (r != CUDA_SUCCESS) return false;
    r = api_.cuCtxSetCurrent(primary_);
    emit_("P cuCtxSetCurrent -> " + ResultText(Op::kCtxSynchronize, r));
    return r == CUDA_SUCCESS;
  }

  template <typename T>
  T As(int id) const {
    if (id < 0) return T{};
    auto it = raw_.find(id);
    std::uint64_t v = it == raw_.end() ? 0 : it->second;
    if constexpr (std::is_pointer_v<T>) {
      return reinterpret_cast<T>(static_cast<std::uintptr_t>(v));
    } else {
      return static_cast<T>(v);
    }
  }
  CUstream S(int id) const { return As<CUstream>(id); }
  CUdeviceptr D(int id) const { return As<CUdeviceptr>(id); }

  // A handle's name in model terms: "primary", "h<id>", "null" or "other".
  std::string Name(std::uint64_t raw) const {
    if (raw == 0) return "null";
    if (raw == reinterpret_cast<std::uintptr_t>(primary_)) return "primary";
    for (const auto& [id, v] : raw_) {
      if (v == raw && model_.Find(id) != nullptr && model_.Find(id)->live) return Ref(id);
    }
    return "other";
  }

  template <typename T>
  void Keep(const Call& call, CUresult r, T handle) {
    if (r == CUDA_SUCCESS && call.z != 1) {
      if constexpr (std::is_pointer_v<T>) {
        raw_[call.id] = reinterpret_cast<std::uintptr_t>(handle);
      } else {
        raw_[call.id] = static_cast<std::uint64_t>(handle);
      }
    }
  }

  CUresult Dispatch(const Call& c);
  void Teardown();

  const CudaApi& api_;
  const LineSink& emit_;
  const std::function<void()>& before_release_;
  Model model_;
  std::map<int, std::uint64_t> raw_;  // id -> the driver's handle or address
  std::string outputs_;
  CUdevice device_ = 0;
  CUcontext primary_ = nullptr;
};

// Arguments of each operation (a, b, c are handle refs; x, y, z scalars):
CUresult Executor::Dispatch(const Call& c) {
  const CudaApi& a = api_;
  switch (c.op) {
    case Op::kCtxSynchronize:
      return a.cuCtxSynchronize();
    case Op::kCtxGetCurrent: {
      CUcontext ctx = nullptr;
      CUresult r = a.cuCtxGetCurrent(&ctx);
      if (r == CUDA_SUCCESS) Out("ctx=" + Name(reinterpret_cast<std::uintptr_t>(ctx)));
      return r;
    }
    case Op::kCtxGetDevice: {
      CUdevice dev = -1;
      CUresult r = a.cuCtxGetDevice(&dev);
      if (r == CUDA_SUCCESS) Out("device=" + std::to_string(dev));
      return r;
    }
    case Op::kCtxGetFlags: {
      unsigned flags = 0;
      CUresult r = a.cuCtxGetFlags(&flags);
      if (r == CUDA_SUCCESS) Out("flags=" + std::to_string(flags));
      return r;
    }
    case Op::kCtxGetApiVersion: {  // a: a created context, or null (the current one)
      unsigned version = 0;
      CUresult r = a.cuCtxGetApiVersion(As<CUcontext>(c.a), &version);
      if (r == CUDA_SUCCESS) Out("version=" + std::to_string(version));
      return r;
    }
    case Op::kCtxGetStreamPriorityRange: {
      int least = 99;
      int greatest = 99;
      CUresult r = a.cuCtxGetStreamPriorityRange(&least, &greatest);
      if (r == CUDA_SUCCESS) Out("least=" + std::to_string(least) + " greatest=" +
                                 std::to_string(greatest));
      return r;
    }
    case Op::kCtxGetLimit: {  // x: index into the limits below (5..7: invalid values)
      static const unsigned kLimits[] = {CU_LIMIT_STACK_SIZE, CU_LIMIT_PRINTF_FIFO_SIZE,
                                         CU_LIMIT_MALLOC_HEAP_SIZE,
                                         CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH,
                                         CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
                                         0x20, 0x21, 0x99};
      std::size_t value = 0;
      CUresult r = a.cuCtxGetLimit(&value, static_cast<CUlimit>(kLimits[c.x % 8]));
      if (r == CUDA_SUCCESS) Out("value=" + std::to_string(value));
      return r;
    }
    case Op::kPrimaryRetain: {  // x: device ordinal (7: no such device)
      CUcontext ctx = nullptr;
      CUresult r = a.cuDevicePrimaryCtxRetain(&ctx, static_cast<CUdevice>(c.x));
      if (r == CUDA_SUCCESS) Out("ctx=" + Name(reinterpret_cast<std::uintptr_t>(ctx)));
      return r;
    }
    case Op::kPrimaryRelease:
      return a.cuDevicePrimaryCtxRelease(static_cast<CUdevice>(c.x));
    case Op::kPrimaryGetState: {
      unsigned flags = 0;
      int active = -1;
      CUresult r = a.cuDevicePrimaryCtxGetState(static_cast<CUdevice>(c.x), &flags, &active);
      if (r == CUDA_SUCCESS) Out("flags=" + std::to_string(flags) + " active=" +
                                 std::to_string(active));
      return r;
    }
    case Op::kCtxCreate: {  // x: flags; the new context is popped at once
      CUctxCreateParams params;
      std::memset(&params, 0, sizeof(params));
      CUcontext ctx = reinterpret_cast<CUcontext>(kSentinel);
      CUresult r = a.cuCtxCreate(&ctx, &params, static_cast<unsigned>(c.x), device_);
      OutParam(r, reinterpret_cast<std::uintptr_t>(ctx));
      if (r != CUDA_SUCCESS) return r;
      Keep(c, r, ctx);
      CUcontext popped = nullptr;
      CUresult pop = a.cuCtxPopCurrent(&popped);
      Out("pop=" + ResultText(c.op, pop) + " popped_new=" + (popped == ctx ? "1" : "0"));
      return r;
    }
    case Op::kCtxDestroy:
      return a.cuCtxDestroy(As<CUcontext>(c.a));
    case Op::kStreamCreate: {  // x: flags; z == 1: null out-pointer
      CUstream s = reinterpret_cast<CUstream>(kSentinel);
      CUresult r = a.cuStreamCreate(c.z == 1 ? nullptr : &s, static_cast<unsigned>(c.x));
      if (c.z != 1) OutParam(r, reinterpret_cast<std::uintptr_t>(s));
      Keep(c, r, s);
      return r;
    }
    case Op::kStreamCreateWithPriority: {  // x: flags; y: priority + 16
      CUstream s = nullptr;
      CUresult r = a.cuStreamCreateWithPriority(&s, static_cast<unsigned>(c.x),
                                                static_cast<int>(c.y) - 16);
      Keep(c, r, s);
      return r;
    }
    case Op::kStreamDestroy:
      return a.cuStreamDestroy(S(c.a));
    case Op::kStreamQuery:
      return a.cuStreamQuery(S(c.a));
    case Op::kStreamSynchronize:
      return a.cuStreamSynchronize(S(c.a));
    case Op::kStreamGetFlags: {
      unsigned flags = 0;
      CUresult r = a.cuStreamGetFlags(S(c.a), &flags);
      if (r == CUDA_SUCCESS) Out("flags=" + std::to_string(flags));
      return r;
    }
    case Op::kStreamGetPriority: {
      int priority = 99;
      CUresult r = a.cuStreamGetPriority(S(c.a), &priority);
      if (r == CUDA_SUCCESS) Out("priority=" + std::to_string(priority));
      return r;
    }
    case Op::kStreamWaitEvent:  // a: stream; b: event; x: flags
      return a.cuStreamWaitEvent(S(c.a), As<CUevent>(c.b), static_cast<unsigned>(c.x));
    case Op::kEventCreate: {  // x: flags; z == 1: null out-pointer
      CUevent e = reinterpret_cast<CUevent>(kSentinel);
      CUresult r = a.cuEventCreate(c.z == 1 ? nullptr : &e, static_cast<unsigned>(c.x));
      if (c.z != 1) OutParam(r, reinterpret_cast<std::uintptr_t>(e));
      Keep(c, r, e);
      return r;
    }
    case Op::kEventDestroy:
      return a.cuEventDestroy(As<CUevent>(c.a));
    case Op::kEventRecord:  // a: event; b: stream
      return a.cuEventRecord(As<CUevent>(c.a), S(c.b));
    case Op::kEventQuery:
      return a.cuEventQuery(As<CUevent>(c.a));
    case Op::kEventSynchronize:
      return a.cuEventSynchronize(As<CUevent>(c.a));
    case Op::kEventElapsedTime: {  // code only: the value is timing
      float ms = 0;
      return a.cuEventElapsedTime(&ms, As<CUevent>(c.a), As<CUevent>(c.b));
    }
    case Op::kMemAlloc: {  // x: bytes; z == 1: null out-pointer
      CUdeviceptr p = kSentinel;
      CUresult r = a.cuMemAlloc(c.z == 1 ? nullptr : &p, c.x);
      if (c.z != 1) OutParam(r, p);
      Keep(c, r, p);
      return r;
    }
    case Op::kMemFree:  // a: live, stale or null
      return a.cuMemFree(D(c.a));
    case Op::kMemsetD8:  // a: memory; x: offset; y: bytes; z: value
      return a.cuMemsetD8(D(c.a) + c.x, static_cast<unsigned char>(c.z), c.y);
    case Op::kMemsetD32:  // x: offset (multiple of 4); y: words; z: value
      return a.cuMemsetD32(D(c.a) + c.x, static_cast<unsigned>(c.z), c.y);
    case Op::kMemsetD8Async:  // a: memory; b: stream; x: offset; y: bytes; z: value
      return a.cuMemsetD8Async(D(c.a) + c.x, static_cast<unsigned char>(c.z), c.y, S(c.b));
    case Op::kMemcpyHtoD: {  // a: memory; x: offset; y: bytes; z: pattern
      std::vector<unsigned char> buf(c.y);
      FillPattern(buf.data(), buf.size(), c.z);
      return a.cuMemcpyHtoD(D(c.a) + c.x, buf.data(), c.y);
    }
    case Op::kMemcpyDtoH: {  // a: memory; x: offset; y: bytes; output: hash of the bytes
      std::vector<unsigned char> buf(c.y + 1);
      CUresult r = a.cuMemcpyDtoH(buf.data(), D(c.a) + c.x, c.y);
      if (r == CUDA_SUCCESS) Out("hash=" + Hex(Fnv1a(buf.data(), c.y)));
      return r;
    }
    case Op::kMemcpyDtoD:  // a: dst; b: src; x: bytes
      return a.cuMemcpyDtoD(D(c.a), D(c.b), c.x);
    case Op::kMemcpyDtoDAsync:  // a: dst; b: src; c: stream; x: bytes
      return a.cuMemcpyDtoDAsync(D(c.a), D(c.b), c.x, S(c.c));
    case Op::kPointerGetAttribute: {  // a: memory; x: attribute index; y: offset
      static const CUpointer_attribute kAttrs[] = {
          CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
          CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_HOST_POINTER,
          CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
          CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
          CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE};
      CUpointer_attribute attr = kAttrs[c.x % 9];
      std::uint64_t value[2] = {0, 0};
      CUdeviceptr ptr = D(c.a) + c.y;
      CUresult r = a.cuPointerGetAttribute(value, attr, ptr);
      if (r != CUDA_SUCCESS) return r;
      switch (attr) {
        case CU_POINTER_ATTRIBUTE_CONTEXT: case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
          Out("value=" + Name(value[0]));
          break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
          Out("value=" + std::to_string(static_cast<std::uint32_t>(value[0])));
          break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
          Out("offset=" + std::to_string(ptr - value[0]));
          break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
          Out("value=" + std::to_string(value[0]));
          break;
        default:  // addresses: code only
          break;
      }
      return r;
    }
    case Op::kMemGetAddressRange: {  // a: memory; y: offset
      CUdeviceptr base = 0;
      std::size_t size = 0;
      CUdeviceptr ptr = D(c.a) + c.y;
      CUresult r = a.cuMemGetAddressRange(&base, &size, ptr);
      if (r == CUDA_SUCCESS) Out("offset=" + std::to_string(ptr - base) + " size=" +
                                 std::to_string(size));
      return r;
    }
    case Op::kMemGetInfo: {  // code only: the values change with every other process
      std::size_t free_bytes = 0;
      std::size_t total = 0;
      return a.cuMemGetInfo(&free_bytes, &total);
    }
    case Op::kMemHostAlloc: {  // x: bytes; y: flags
      void* p = reinterpret_cast<void*>(kSentinel);
      CUresult r = a.cuMemHostAlloc(&p, c.x, static_cast<unsigned>(c.y));
      OutParam(r, reinterpret_cast<std::uintptr_t>(p));
      if (r == CUDA_SUCCESS) FillPattern(static_cast<unsigned char*>(p), c.x, c.id);
      Keep(c, r, p);
      return r;
    }
    case Op::kMemFreeHost:
      return a.cuMemFreeHost(As<void*>(c.a));
    case Op::kMemHostGetFlags: {
      unsigned flags = 0;
      CUresult r = a.cuMemHostGetFlags(&flags, As<void*>(c.a));
      if (r == CUDA_SUCCESS) Out("flags=" + std::to_string(flags));
      return r;
    }
    case Op::kMemcpyHtoDAsync:  // a: memory; b: pinned host memory; c: stream; x: bytes
      return a.cuMemcpyHtoDAsync(D(c.a), As<void*>(c.b), c.x, S(c.c));
    case Op::kMemPoolCreate: {  // x: maxSize; y: 0 valid, 1 bad alloc type, 2 bad device
      CUmemPoolProps props;
      std::memset(&props, 0, sizeof(props));
      props.allocType = c.y == 1 ? CU_MEM_ALLOCATION_TYPE_INVALID : CU_MEM_ALLOCATION_TYPE_PINNED;
      props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
      props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      props.location.id = c.y == 2 ? 7 : device_;
      props.maxSize = c.x;
      CUmemoryPool pool = reinterpret_cast<CUmemoryPool>(kSentinel);
      CUresult r = a.cuMemPoolCreate(c.z == 1 ? nullptr : &pool, &props);
      if (c.z != 1) OutParam(r, reinterpret_cast<std::uintptr_t>(pool));
      Keep(c, r, pool);
      return r;
    }
    case Op::kMemPoolDestroy:
      return a.cuMemPoolDestroy(As<CUmemoryPool>(c.a));
    case Op::kMemPoolSetAttribute: case Op::kMemPoolGetAttribute: {
      // x: attribute 1 + x (REUSE_* are int, the rest cuuint64_t); y: the value to set
      auto attr = static_cast<CUmemPool_attribute>(1 + c.x % 8);
      bool is_int = attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
      int iv = static_cast<int>(c.y & 0x7fffffff);
      cuuint64_t uv = c.y;
      void* value = is_int ? static_cast<void*>(&iv) : static_cast<void*>(&uv);
      if (c.op == Op::kMemPoolSetAttribute) {
        return a.cuMemPoolSetAttribute(As<CUmemoryPool>(c.a), attr, value);
      }
      iv = -1;
      uv = kSentinel;
      CUresult r = a.cuMemPoolGetAttribute(As<CUmemoryPool>(c.a), attr, value);
      // The statistics depend on when frees complete: code only.
      if (r == CUDA_SUCCESS && attr <= CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) {
        Out("value=" + (is_int ? std::to_string(iv) : std::to_string(uv)));
      }
      return r;
    }
    case Op::kMemPoolTrimTo:  // x: bytes to keep
      return a.cuMemPoolTrimTo(As<CUmemoryPool>(c.a), c.x);
    case Op::kMemAllocFromPoolAsync: {  // a: pool; b: stream; x: bytes
      CUdeviceptr p = kSentinel;
      CUresult r = a.cuMemAllocFromPoolAsync(&p, c.x, As<CUmemoryPool>(c.a), S(c.b));
      OutParam(r, p);
      Keep(c, r, p);
      return r;
    }
    case Op::kMemFreeAsync:  // a: pool memory; b: stream
      return a.cuMemFreeAsync(D(c.a), S(c.b));
    case Op::kModuleLoadData: {  // x: 0 the sample PTX, 1 not an image; z == 1: null out
      CUmodule m = reinterpret_cast<CUmodule>(kSentinel);
      const char* image = c.x == 0 ? fakecuda::kSamplePtx : "hello, world";
      CUresult r = a.cuModuleLoadData(c.z == 1 ? nullptr : &m, image);
      if (c.z != 1) OutParam(r, reinterpret_cast<std::uintptr_t>(m));
      Keep(c, r, m);
      return r;
    }
    case Op::kModuleUnload:
      return a.cuModuleUnload(As<CUmodule>(c.a));
    case Op::kModuleGetFunction: {  // a: module; x: 0 add_one, 1 write_params, 2 no such name
      static const char* kNames[] = {"add_one", "write_params", "no_such_kernel"};
      CUfunction f = reinterpret_cast<CUfunction>(kSentinel);
      CUresult r = a.cuModuleGetFunction(c.z == 1 ? nullptr : &f, As<CUmodule>(c.a),
                                         kNames[c.x % 3]);
      if (c.z != 1) OutParam(r, reinterpret_cast<std::uintptr_t>(f));
      Keep(c, r, f);
      return r;
    }
    case Op::kFuncGetAttribute: {  // x: attribute (10, 11: invalid); code only
      static const int kAttrs[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 99, 1000};
      int value = 0;
      return a.cuFuncGetAttribute(&value, static_cast<CUfunction_attribute>(kAttrs[c.x % 12]),
                                  As<CUfunction>(c.a));
    }
    case Op::kLaunchKernel: {  // add_one: a: function; b: memory; c: stream; x: n; y: block;
                               // z: grid
      CUdeviceptr data = D(c.b);
      unsigned n = static_cast<unsigned>(c.x);
      void* args[] = {&data, &n};
      return a.cuLaunchKernel(As<CUfunction>(c.a), static_cast<unsigned>(c.z), 1, 1,
                              static_cast<unsigned>(c.y), 1, 1, 0, S(c.c), args, nullptr);
    }
    case Op::kGraphCreate: {  // x: flags; z == 1: null out
      CUgraph g = reinterpret_cast<CUgraph>(kSentinel);
      CUresult r = a.cuGraphCreate(c.z == 1 ? nullptr : &g, static_cast<unsigned>(c.x));
      if (c.z != 1) OutParam(r, reinterpret_cast<std::uintptr_t>(g));
      Keep(c, r, g);
      return r;
    }
    case Op::kGraphAddEmptyNode: {  // a: graph; b: dependency node or -
      CUgraphNode node = nullptr;
      CUgraphNode dep = As<CUgraphNode>(c.b);
      CUresult r = a.cuGraphAddEmptyNode(&node, As<CUgraph>(c.a), c.b >= 0 ? &dep : nullptr,
                                         c.b >= 0 ? 1 : 0);
      Keep(c, r, node);
      return r;
    }
    case Op::kGraphAddMemsetNode: {  // a: graph; b: memory; c: dependency; x: bytes; y: value
      CUgraphNode node = nullptr;
      CUgraphNode dep = As<CUgraphNode>(c.c);
      CUDA_MEMSET_NODE_PARAMS params;
      std::memset(&params, 0, sizeof(params));
      params.dst = D(c.b);
      params.value = static_cast<unsigned>(c.y);
      params.elementSize = 1;
      params.width = c.x;
      params.height = 1;
      CUresult r = a.cuGraphAddMemsetNode(&node, As<CUgraph>(c.a), c.c >= 0 ? &dep : nullptr,
                                          c.c >= 0 ? 1 : 0, &params, primary_);
      Keep(c, r, node);
      return r;
    }
    case Op::kGraphInstantiate: {  // a: graph or null; x: flags
      CUgraphExec exec = reinterpret_cast<CUgraphExec>(kSentinel);
      CUresult r = a.cuGraphInstantiateWithFlags(&exec, As<CUgraph>(c.a), c.x);
      OutParam(r, reinterpret_cast<std::uintptr_t>(exec));
      Keep(c, r, exec);
      return r;
    }
    case Op::kGraphLaunch:  // a: exec or null; b: stream
      return a.cuGraphLaunch(As<CUgraphExec>(c.a), S(c.b));
    case Op::kGraphExecDestroy:
      return a.cuGraphExecDestroy(As<CUgraphExec>(c.a));
    case Op::kGraphDestroy:
      return a.cuGraphDestroy(As<CUgraph>(c.a));
  }
  return CUDA_ERROR_UNKNOWN;
}

void Executor::Teardown() {
  auto line = [&](const char* what, int id, CUresult r) {
    emit_("T " + std::string(what) + " " + Ref(id) + " -> " + ResultText(Op::kCtxSynchronize, r));
  };
  line("cuCtxSynchronize", kNoId, api_.cuCtxSynchronize());
  for (int id : model_.Live(Kind::kGraphExec)) {
    line("cuGraphExecDestroy", id, api_.cuGraphExecDestroy(As<CUgraphExec>(id)));
  }
  for (int id : model_.Live(Kind::kGraph)) {
    line("cuGraphDestroy", id, api_.cuGraphDestroy(As<CUgraph>(id)));
  }
  for (int id : model_.Live(Kind::kPoolPtr)) {
    line("cuMemFreeAsync", id, api_.cuMemFreeAsync(D(id), nullptr));
  }
  line("cuCtxSynchronize", kNoId, api_.cuCtxSynchronize());
  for (int id : model_.Live(Kind::kPool)) {
    line("cuMemPoolDestroy", id, api_.cuMemPoolDestroy(As<CUmemoryPool>(id)));
  }
  for (int id : model_.Live(Kind::kDevicePtr)) {
    line("cuMemFree", id, api_.cuMemFree(D(id)));
  }
  for (int id : model_.Live(Kind::kHostPtr)) {
    line("cuMemFreeHost", id, api_.cuMemFreeHost(As<void*>(id)));
  }
  for (int id : model_.Live(Kind::kModule)) {
    line("cuModuleUnload", id, api_.cuModuleUnload(As<CUmodule>(id)));
  }
  for (int id : model_.Live(Kind::kEvent)) {
    line("cuEventDestroy", id, api_.cuEventDestroy(As<CUevent>(id)));
  }
  for (int id : model_.Live(Kind::kStream)) {
    line("cuStreamDestroy", id, api_.cuStreamDestroy(S(id)));
  }
  for (int id : model_.Live(Kind::kContext)) {
    line("cuCtxDestroy", id, api_.cuCtxDestroy(As<CUcontext>(id)));
  }
  for (int i = 0; i < model_.extra_primary_retains(); ++i) {
    line("cuDevicePrimaryCtxRelease", kNoId, api_.cuDevicePrimaryCtxRelease(device_));
  }
  if (before_release_) before_release_();
  line("cuCtxSetCurrent", kNullId, api_.cuCtxSetCurrent(nullptr));
  line("cuDevicePrimaryCtxRelease", kNoId, api_.cuDevicePrimaryCtxRelease(device_));
}

}  // namespace

void Execute(const CudaApi& api, const Sequence& sequence, const LineSink& emit,
             const std::function<void()>& before_release) {
  Executor(api, emit, before_release).Run(sequence);
}

void RunOnFake(const Sequence& sequence, const LineSink& emit,
               const std::function<void(CudaApi*)>& wrap) {
  fakecuda::DriverOptions options;
  // The race detector checks the model: a generated sequence must have no stream-order race
  // (one would make its results timing-dependent on the real driver). Findings become "RACE"
  // lines; kReport leaves every result code as it is.
  options.racecheck = fakecuda::RaceCheck::kReport;
  std::string error;
  std::unique_ptr<fakecuda::ScopedDriver> driver = fakecuda::ScopedDriver::Create(options, &error);
  if (driver == nullptr) {
    emit("ERROR fake driver: " + error);
    return;
  }
  CudaApi api;
  fakecuda::FillCudaApi(&api);
  if (wrap) wrap(&api);
  auto report_leaks = [&](int own_retains) {
    fakecuda::Inventory live = driver->driver().LiveObjects();
    live.primary_retains -= own_retains;
    if (live.Total() == 0) return;
    emit("LEAK " + live.ToString());
    std::string report = driver->driver().LeakReport();
    std::size_t start = 0;
    while (start < report.size()) {
      std::size_t nl = report.find('\n', start);
      if (nl == std::string::npos) nl = report.size();
      emit("LEAK " + report.substr(start, nl - start));
      start = nl + 1;
    }
  };
  bool ended = false;
  Execute(
      api, sequence,
      [&](const std::string& line) {
        if (line == "END") {
          ended = true;  // after the leak check
        } else {
          emit(line);
        }
      },
      [&] { report_leaks(1); });
  report_leaks(0);
  for (const std::string& finding : driver->driver().RaceFindings()) emit("RACE " + finding);
  if (ended) emit("END");
}

std::vector<std::string> RunOnFake(const Sequence& sequence,
                                   const std::function<void(CudaApi*)>& wrap) {
  std::vector<std::string> lines;
  RunOnFake(sequence, [&](const std::string& line) { lines.push_back(line); }, wrap);
  return lines;
}

}  // namespace cuhal::fuzz
