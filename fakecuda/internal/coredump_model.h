// Copyright 2026 The cuhal Authors.
// The fake driver's GPU coredump settings (cuCoredumpGetAttribute[Global],
// cuCoredumpSetAttribute[Global]): the process-wide ones and each context's. The fake never
// writes a coredump; it keeps the settings and answers with the sizes, defaults and errors
// measured 2026-12-06 on H100 80GB HBM3, driver 580.159.04 (ci/gpu-probes/misc_probe.cc, cases
// coredump:*; docs/driver_facts.md, "IPC, profiler, coredump attributes, green contexts").
//
// Invariants:
//  1. A context's settings are a copy of the global ones made when the context is created
//     (OnContextCreated; measured: a global set after that does not reach it) and live until
//     the context is torn down (OnContextTeardown).
//  2. LIGHTWEIGHT and TRIGGER_HOST are views of GENERATION_FLAGS (CU_COREDUMP_LIGHTWEIGHT_FLAGS
//     all set / CU_COREDUMP_SKIP_ABORT clear), as cuda.h describes them and as measured.
//  3. ENABLE_ON_EXCEPTION and ENABLE_USER_TRIGGER hold the byte last set (measured: 2 reads 2).
#ifndef CUHAL_FAKECUDA_INTERNAL_COREDUMP_MODEL_H_
#define CUHAL_FAKECUDA_INTERNAL_COREDUMP_MODEL_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace fakecuda {

// Measured defaults: everything 0, FILE and PIPE "" (not cuda.h's core.cuda.HOSTNAME.PID names).
struct CoredumpSettings {
  unsigned char enable_on_exception = 0;
  unsigned char enable_user_trigger = 0;
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

  // cuCoredumpGetAttribute[Global]: `value` null is a size query (*size set). A boolean or
  // GENERATION_FLAGS needs *size exactly its size; FILE and PIPE take any *size and leave it.
  // `per_context` refuses the global-only attributes (GlobalOnly) with CUDA_ERROR_INVALID_VALUE.
  CUresult Get(const CoredumpSettings& s, int attrib, void* value, std::size_t* size,
               bool per_context) const;
  // cuCoredumpSetAttribute[Global], with the same size and `per_context` rules as Get.
  CUresult Set(CoredumpSettings* s, int attrib, const void* value, std::size_t* size,
               bool per_context);

  CoredumpSettings& global() { return global_; }
  // A context was created: its settings become a copy of the global ones (invariant 1), with
  // CU_CTX_COREDUMP_ENABLE / CU_CTX_USER_COREDUMP_ENABLE applied.
  void OnContextCreated(std::uint64_t ctx_id, unsigned ctx_flags);
  // Context `ctx_id`'s settings (made as OnContextCreated does if it was not told).
  CoredumpSettings& ForContext(std::uint64_t ctx_id, unsigned ctx_flags);
  void OnContextTeardown(std::uint64_t ctx_id) { contexts_.erase(ctx_id); }

  // The size of attribute `attrib`'s value; 0 for an invalid attribute.
  static std::size_t SizeOf(int attrib);
  // ENABLE_USER_TRIGGER and PIPE: the per-context forms refuse them (measured).
  static bool GlobalOnly(int attrib);

 private:
  CoredumpSettings global_;
  std::unordered_map<std::uint64_t, CoredumpSettings> contexts_;
};

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_COREDUMP_MODEL_H_
