// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/coredump_model.h"

#include <algorithm>
#include <cstring>

namespace fakecuda {
namespace {

bool IsBool(int attrib) {
  return attrib == CU_COREDUMP_ENABLE_ON_EXCEPTION || attrib == CU_COREDUMP_TRIGGER_HOST ||
         attrib == CU_COREDUMP_LIGHTWEIGHT || attrib == CU_COREDUMP_ENABLE_USER_TRIGGER;
}

constexpr std::uint32_t kLightweight = CU_COREDUMP_LIGHTWEIGHT_FLAGS;

}  // namespace

CoredumpModel::CoredumpModel() = default;

std::size_t CoredumpModel::SizeOf(int attrib) {
  if (IsBool(attrib)) return sizeof(bool);
  if (attrib == CU_COREDUMP_FILE || attrib == CU_COREDUMP_PIPE) return kMaxString + 1;
  if (attrib == CU_COREDUMP_GENERATION_FLAGS) return sizeof(std::uint32_t);
  return 0;
}

bool CoredumpModel::GlobalOnly(int attrib) {
  return attrib == CU_COREDUMP_ENABLE_USER_TRIGGER || attrib == CU_COREDUMP_PIPE;
}

void CoredumpModel::OnContextCreated(std::uint64_t ctx_id, unsigned ctx_flags) {
  contexts_.erase(ctx_id);
  (void)ForContext(ctx_id, ctx_flags);
}

CoredumpSettings& CoredumpModel::ForContext(std::uint64_t ctx_id, unsigned ctx_flags) {
  auto it = contexts_.find(ctx_id);
  if (it != contexts_.end()) return it->second;
  CoredumpSettings s = global_;
  // Measured: either creation flag makes ENABLE_ON_EXCEPTION read 1.
  if (ctx_flags & (CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE)) {
    s.enable_on_exception = 1;
  }
  if (ctx_flags & CU_CTX_USER_COREDUMP_ENABLE) s.enable_user_trigger = 1;
  return contexts_.emplace(ctx_id, std::move(s)).first->second;
}

CUresult CoredumpModel::Get(const CoredumpSettings& s, int attrib, void* value, std::size_t* size,
                            bool per_context) const {
  const std::size_t need = SizeOf(attrib);
  if (need == 0 || size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (per_context && GlobalOnly(attrib)) return CUDA_ERROR_INVALID_VALUE;
  if (value == nullptr) {
    *size = need;
    return CUDA_SUCCESS;
  }
  if (attrib == CU_COREDUMP_FILE || attrib == CU_COREDUMP_PIPE) {
    // Measured: any *size succeeds and *size is left as it is. The fake writes at most *size
    // bytes (how much the real driver writes into a smaller buffer is not measured).
    const std::string& str = attrib == CU_COREDUMP_FILE ? s.file : s.pipe;
    std::memcpy(value, str.c_str(), std::min(str.size() + 1, *size));
    return CUDA_SUCCESS;
  }
  if (*size != need) return CUDA_ERROR_INVALID_VALUE;  // measured: exactly the size
  switch (attrib) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION:
      *static_cast<unsigned char*>(value) = s.enable_on_exception;
      break;
    case CU_COREDUMP_TRIGGER_HOST:
      *static_cast<unsigned char*>(value) = (s.generation_flags & CU_COREDUMP_SKIP_ABORT) == 0;
      break;
    case CU_COREDUMP_LIGHTWEIGHT:
      *static_cast<unsigned char*>(value) = (s.generation_flags & kLightweight) == kLightweight;
      break;
    case CU_COREDUMP_ENABLE_USER_TRIGGER:
      *static_cast<unsigned char*>(value) = s.enable_user_trigger;
      break;
    case CU_COREDUMP_GENERATION_FLAGS:
      std::memcpy(value, &s.generation_flags, sizeof s.generation_flags);
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult CoredumpModel::Set(CoredumpSettings* s, int attrib, const void* value,
                            std::size_t* size, bool per_context) {
  const std::size_t need = SizeOf(attrib);
  if (need == 0 || size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (per_context && GlobalOnly(attrib)) return CUDA_ERROR_INVALID_VALUE;
  if (value == nullptr) {
    *size = need;
    return CUDA_SUCCESS;
  }
  if (attrib == CU_COREDUMP_FILE || attrib == CU_COREDUMP_PIPE) {
    // Measured: the process-wide setter reads the string up to its terminator whatever *size
    // says ("/tmp/x" with size 3 sets "/tmp/x"; cuda-bindings passes a bytes value with size
    // len(value), no terminator counted); the per-context one reads at most *size characters
    // ("/tmp/x" with size 3 sets "/tm"). Longer than kMaxString: CUDA_ERROR_INVALID_VALUE.
    const char* text = static_cast<const char*>(value);
    const std::size_t len = strnlen(text, per_context ? *size : kMaxString + 1);
    if (len > kMaxString) return CUDA_ERROR_INVALID_VALUE;
    (attrib == CU_COREDUMP_FILE ? s->file : s->pipe).assign(text, len);
    return CUDA_SUCCESS;
  }
  if (*size != need) return CUDA_ERROR_INVALID_VALUE;  // measured: exactly the size
  if (attrib == CU_COREDUMP_GENERATION_FLAGS) {
    std::uint32_t v = 0;
    std::memcpy(&v, value, sizeof v);
    s->generation_flags = v;
    return CUDA_SUCCESS;
  }
  // Measured: the byte is kept as given (2 reads back 2) where the attribute is stored, and
  // taken as "non-zero" where it is a view of the generation flags.
  const unsigned char byte = *static_cast<const unsigned char*>(value);
  const bool on = byte != 0;
  switch (attrib) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION:
      s->enable_on_exception = byte;
      break;
    case CU_COREDUMP_TRIGGER_HOST:
      s->generation_flags = on ? (s->generation_flags & ~std::uint32_t{CU_COREDUMP_SKIP_ABORT})
                               : (s->generation_flags | CU_COREDUMP_SKIP_ABORT);
      break;
    case CU_COREDUMP_LIGHTWEIGHT:
      s->generation_flags = on ? (s->generation_flags | kLightweight)
                               : (s->generation_flags & ~kLightweight);
      break;
    case CU_COREDUMP_ENABLE_USER_TRIGGER:
      s->enable_user_trigger = byte;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

}  // namespace fakecuda
