// Copyright 2026 The cuhal Authors.
// The fake driver's GPU coredump settings (cuCoredumpGetAttribute[Global],
// cuCoredumpSetAttribute[Global]): the process-wide ones and each context's. The fake never
// writes a coredump; it keeps the settings and answers with the sizes, defaults and errors that
// cuda.h describes (UNMEASURED on the H200: ci/gpu-probes/misc_probe.cc, cases coredump:*, asks;
// docs/driver_facts.md, "IPC, profiler, coredump attributes, green contexts (not measured)").
//
// Invariants:
//  1. A context's settings are made from the global ones when first touched and live until the
//     context is torn down (OnContextTeardown); afterwards a global set does not reach them.
//  2. LIGHTWEIGHT and TRIGGER_HOST are views of GENERATION_FLAGS (CU_COREDUMP_LIGHTWEIGHT_FLAGS
//     all set / CU_COREDUMP_SKIP_ABORT clear), as cuda.h describes them.
#ifndef CUHAL_FAKECUDA_INTERNAL_COREDUMP_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_COREDUMP_MODEL_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace fakecuda {

struct CoredumpSettings {
  bool enable_on_exception = false;
  bool enable_user_trigger = false;
  std::uint32_t generation_flags = CU_COREDUMP_DEFAULT_FLAGS;
  std::string file;
  std::string pipe;
};

// Ownership: one per DriverState, created on first use (DriverState::coredump()).
// Thread-safety: none of its own; every use is under DriverState::mu. Stream ordering: none
// (settings are host state, effective at once).
class CoredumpModel {
 public:
  // The longest FILE or PIPE string, without its terminator (cuda.h: "up to 1023 characters").
  static constexpr std::size_t kMaxString = 1023;

  CoredumpModel();
  CoredumpModel(const CoredumpModel&) = delete;             // holds per-context state by id
  CoredumpModel& operator=(const CoredumpModel&) = delete;  // ditto

  // cuCoredumpGetAttribute[Global]: `value` null is a size query (*size set).
  CUresult Get(const CoredumpSettings& s, int attrib, void* value, std::size_t* size) const;
  // cuCoredumpSetAttribute[Global]; `per_context` refuses what only the global form may set.
  CUresult Set(CoredumpSettings* s, int attrib, const void* value, std::size_t* size,
               bool per_context);

  CoredumpSettings& global() { return global_; }
  // Context `ctx_id`'s settings, made from the global ones (and the context's creation flags)
  // on first use (invariant 1).
  CoredumpSettings& ForContext(std::uint64_t ctx_id, unsigned ctx_flags);
  void OnContextTeardown(std::uint64_t ctx_id) { contexts_.erase(ctx_id); }

  // The size of attribute `attrib`'s value; 0 for an invalid attribute.
  static std::size_t SizeOf(int attrib);

 private:
  CoredumpSettings global_;
  std::unordered_map<std::uint64_t, CoredumpSettings> contexts_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_COREDUMP_MODEL_H_
