// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/coredump_model.h"

#include <unistd.h>

#include <cstring>

namespace fakecuda {
namespace {

std::string HostAndPid() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + "." + std::to_string(getpid());
}

bool IsBool(int attrib) {
  return attrib == CU_COREDUMP_ENABLE_ON_EXCEPTION || attrib == CU_COREDUMP_TRIGGER_HOST ||
         attrib == CU_COREDUMP_LIGHTWEIGHT || attrib == CU_COREDUMP_ENABLE_USER_TRIGGER;
}

constexpr std::uint32_t kLightweight = CU_COREDUMP_LIGHTWEIGHT_FLAGS;

}  // namespace

CoredumpModel::CoredumpModel() {
  const std::string suffix = HostAndPid();
  global_.file = "core.cuda." + suffix;
  global_.pipe = "corepipe.cuda." + suffix;
}

std::size_t CoredumpModel::SizeOf(int attrib) {
  if (IsBool(attrib)) return sizeof(bool);
  if (attrib == CU_COREDUMP_FILE || attrib == CU_COREDUMP_PIPE) return kMaxString + 1;
  if (attrib == CU_COREDUMP_GENERATION_FLAGS) return sizeof(std::uint32_t);
  return 0;
}

CoredumpSettings& CoredumpModel::ForContext(std::uint64_t ctx_id, unsigned ctx_flags) {
  auto it = contexts_.find(ctx_id);
  if (it != contexts_.end()) return it->second;
  CoredumpSettings s = global_;
  if (ctx_flags & CU_CTX_COREDUMP_ENABLE) s.enable_on_exception = true;
  if (ctx_flags & CU_CTX_USER_COREDUMP_ENABLE) s.enable_user_trigger = true;
  return contexts_.emplace(ctx_id, std::move(s)).first->second;
}

CUresult CoredumpModel::Get(const CoredumpSettings& s, int attrib, void* value,
                            std::size_t* size) const {
  const std::size_t need = SizeOf(attrib);
  if (need == 0 || size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (value == nullptr) {
    *size = need;
    return CUDA_SUCCESS;
  }
  if (*size < need) return CUDA_ERROR_INVALID_VALUE;
  switch (attrib) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION:
      *static_cast<bool*>(value) = s.enable_on_exception;
      break;
    case CU_COREDUMP_TRIGGER_HOST:
      *static_cast<bool*>(value) = (s.generation_flags & CU_COREDUMP_SKIP_ABORT) == 0;
      break;
    case CU_COREDUMP_LIGHTWEIGHT:
      *static_cast<bool*>(value) = (s.generation_flags & kLightweight) == kLightweight;
      break;
    case CU_COREDUMP_ENABLE_USER_TRIGGER:
      *static_cast<bool*>(value) = s.enable_user_trigger;
      break;
    case CU_COREDUMP_FILE:
    case CU_COREDUMP_PIPE: {
      const std::string& str = attrib == CU_COREDUMP_FILE ? s.file : s.pipe;
      std::memcpy(value, str.c_str(), str.size() + 1);
      break;
    }
    case CU_COREDUMP_GENERATION_FLAGS:
      std::memcpy(value, &s.generation_flags, sizeof s.generation_flags);
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  *size = need;
  return CUDA_SUCCESS;
}

CUresult CoredumpModel::Set(CoredumpSettings* s, int attrib, const void* value,
                            std::size_t* size, bool per_context) {
  const std::size_t need = SizeOf(attrib);
  if (need == 0 || size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (value == nullptr) {
    *size = need;
    return CUDA_SUCCESS;
  }
  if (per_context &&
      (attrib == CU_COREDUMP_ENABLE_USER_TRIGGER || attrib == CU_COREDUMP_PIPE)) {
    return CUDA_ERROR_NOT_PERMITTED;
  }
  if (attrib == CU_COREDUMP_FILE || attrib == CU_COREDUMP_PIPE) {
    const std::size_t len = strnlen(static_cast<const char*>(value), *size);
    if (len == *size || len > kMaxString) return CUDA_ERROR_INVALID_VALUE;  // no terminator
    (attrib == CU_COREDUMP_FILE ? s->file : s->pipe).assign(static_cast<const char*>(value), len);
    return CUDA_SUCCESS;
  }
  if (*size < need) return CUDA_ERROR_INVALID_VALUE;
  if (attrib == CU_COREDUMP_GENERATION_FLAGS) {
    std::uint32_t v = 0;
    std::memcpy(&v, value, sizeof v);
    s->generation_flags = v;
    return CUDA_SUCCESS;
  }
  const bool on = *static_cast<const unsigned char*>(value) != 0;
  switch (attrib) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION:
      s->enable_on_exception = on;
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
      s->enable_user_trigger = on;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

}  // namespace fakecuda
