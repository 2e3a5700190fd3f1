// Copyright 2026 The cuhal Authors.
// The differential fuzzer's call sequences: what a call is, the model of live handles that
// decides which calls are safe to make, the generator (a 64-bit seed -> a sequence) and the list
// of calls the fuzzer never makes.
//
// Invariants (both the generator and the executor keep them, through Model::Check):
//   - a call names handles by id: the index, in the generated sequence, of the call that created
//     the handle. Ids never change when calls are removed (minimization), so a sequence with any
//     subset of its calls removed is still well-formed; a call whose handle was never created (its
//     creator was removed or failed) is skipped, identically on every backend;
//   - no call reaches memory or driver objects that are gone, except the stale-handle calls the
//     real driver answers by address lookup (ExcludedCalls lists the rest, with the reason);
//   - device memory is read back (and hashed) only when all of it was written and no
//     asynchronous work on it can be pending, so contents never depend on timing;
//   - every object lives in the device's primary context, which the executor makes current
//     before the first call; created contexts are popped at once and never hold objects.
#ifndef CUHAL_FUZZ_SEQUENCE_H_
#define CUHAL_FUZZ_SEQUENCE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuhal::fuzz {

// Every operation the generator emits: X(name). One operation is one driver call, except
// kCtxCreate (cuCtxCreate, then cuCtxPopCurrent when it succeeded).
#define CUHAL_FUZZ_OPS(X)                                                                     \
  X(CtxSynchronize) X(CtxGetCurrent) X(CtxGetDevice) X(CtxGetFlags) X(CtxGetApiVersion)      \
  X(CtxGetStreamPriorityRange) X(CtxGetLimit) X(PrimaryRetain) X(PrimaryRelease)             \
  X(PrimaryGetState) X(CtxCreate) X(CtxDestroy)                                              \
  X(StreamCreate) X(StreamCreateWithPriority) X(StreamDestroy) X(StreamQuery)                \
  X(StreamSynchronize) X(StreamGetFlags) X(StreamGetPriority) X(StreamWaitEvent)             \
  X(EventCreate) X(EventDestroy) X(EventRecord) X(EventQuery) X(EventSynchronize)            \
  X(EventElapsedTime)                                                                        \
  X(MemAlloc) X(MemFree) X(MemsetD8) X(MemsetD32) X(MemsetD8Async) X(MemcpyHtoD)             \
  X(MemcpyDtoH) X(MemcpyDtoD) X(MemcpyDtoDAsync) X(PointerGetAttribute)                      \
  X(MemGetAddressRange) X(MemGetInfo)                                                        \
  X(MemHostAlloc) X(MemFreeHost) X(MemHostGetFlags) X(MemcpyHtoDAsync)                       \
  X(MemPoolCreate) X(MemPoolDestroy) X(MemPoolSetAttribute) X(MemPoolGetAttribute)           \
  X(MemPoolTrimTo) X(MemAllocFromPoolAsync) X(MemFreeAsync)                                  \
  X(ModuleLoadData) X(ModuleUnload) X(ModuleGetFunction) X(FuncGetAttribute) X(LaunchKernel) \
  X(GraphCreate) X(GraphAddEmptyNode) X(GraphAddMemsetNode) X(GraphInstantiate)              \
  X(GraphLaunch) X(GraphExecDestroy) X(GraphDestroy)

enum class Op : std::uint8_t {
#define CUHAL_FUZZ_OP_ENUM(name) k##name,
  CUHAL_FUZZ_OPS(CUHAL_FUZZ_OP_ENUM)
#undef CUHAL_FUZZ_OP_ENUM
};

// "cuStreamCreate"-style names without the "cu" (e.g. "StreamCreate").
std::string_view OpName(Op op);
std::optional<Op> OpFromName(std::string_view name);

// Handle-id values besides call indices.
inline constexpr int kNoId = -1;    // the argument is not used
inline constexpr int kNullId = -2;  // pass a null handle (or a null pointer, 0 for CUdeviceptr)

// One call. a, b, c name handles (ids, kNoId or kNullId); x, y, z are scalar arguments whose
// meaning each operation documents in executor.cc (sizes, offsets, flags, values, variants).
struct Call {
  Op op = Op::kCtxSynchronize;
  int id = kNoId;  // the id this call gives the handle it creates (its index when generated)
  int a = kNoId;
  int b = kNoId;
  int c = kNoId;
  std::uint64_t x = 0;
  std::uint64_t y = 0;
  std::uint64_t z = 0;
  friend bool operator==(const Call&, const Call&) = default;
};

using Sequence = std::vector<Call>;

// One line per call: "<id> <op> a=<a> b=<b> c=<c> x=<x> y=<y> z=<z>", and back. Parse returns
// false (and sets *error) on a malformed text.
std::string FormatCall(const Call& call);
std::string FormatSequence(const Sequence& sequence);
bool ParseSequence(std::string_view text, Sequence* out, std::string* error);

// The kinds of handles the model tracks.
enum class Kind : std::uint8_t {
  kContext, kStream, kEvent, kDevicePtr, kPoolPtr, kHostPtr, kPool, kModule, kFunction,
  kGraph, kNode, kGraphExec,
};

// What the model knows about one handle.
struct Handle {
  Kind kind = Kind::kContext;
  bool live = true;          // created and not destroyed/freed
  std::uint64_t size = 0;    // bytes, for memory
  bool initialized = false;  // device memory: every byte written since allocation
  bool pending = false;      // device memory: async work on it may not have completed
  std::uint64_t freed_at_epoch = 0;  // device memory: the allocation epoch when it was freed
  bool bad_flags = false;    // events created without timing etc. (see executor.cc)
  int owner = kNoId;         // nodes: their graph; functions: their module; pool memory: its pool
  std::vector<int> targets;  // graphs, execs, memset nodes: the memory their memsets write
};

// The model of live handles: which ids exist and in what state. Both the generator (predicting
// that valid calls succeed) and the executor (from the actual result codes) update it, and both
// ask Check before a call, so that a removed or failed creation never leads to an unsafe call.
class Model {
 public:
  // "" when `call` may be made now; otherwise why not (the executor records it as a skip).
  std::string Check(const Call& call) const;
  // Records the effect of `call`, made with result `ok` (true for CUDA_SUCCESS).
  void Apply(const Call& call, bool ok);

  const Handle* Find(int id) const;
  // Ids of live handles of `kind`, in creation order.
  std::vector<int> Live(Kind kind) const;
  // Freed device allocations that may be named as stale (no allocation happened since).
  std::vector<int> Stale() const;
  int extra_primary_retains() const { return extra_primary_retains_; }
  std::uint64_t epoch() const { return epoch_; }
  const std::map<int, Handle>& handles() const { return handles_; }

 private:
  // The handle `id` when it is live and of `kind`, else null.
  const Handle* LiveOf(int id, Kind kind) const;
  Handle* Mutable(int id);
  void MarkPending(int id);

  std::map<int, Handle> handles_;
  int extra_primary_retains_ = 0;
  std::uint64_t epoch_ = 0;  // counts successful allocations of any memory (streams, modules too)
};

// The sequence for `seed`: between min_calls and max_calls calls. Deterministic: the same seed
// and bounds give the same sequence on every machine (it uses its own PRNG, not <random>'s
// implementation-defined distributions).
Sequence Generate(std::uint64_t seed, int min_calls = 30, int max_calls = 80);

// A call the fuzzer never makes, and why.
struct ExcludedCall {
  const char* call;
  const char* reason;
};
const std::vector<ExcludedCall>& ExcludedCalls();

}  // namespace cuhal::fuzz

#endif  // CUHAL_FUZZ_SEQUENCE_H_
