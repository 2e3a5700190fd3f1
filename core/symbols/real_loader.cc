// Copyright 2026 The cuhal Authors.
#include "core/symbols/real_loader.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <utility>

#include "core/base/env.h"
#include "core/symbols/api_status.h"

namespace cuhal {
namespace {

static_assert(sizeof(void*) == sizeof(&::cuInit),
              "function and object pointers must have the same size to fill the tables");

// The current resolver (cuda.h maps cuGetProcAddress to cuGetProcAddress_v2, CUDA >= 12.0) and
// the legacy one (CUDA 11.3-11.8), which has no symbolStatus out-parameter.
using GetProcAddressV2Fn = decltype(&::cuGetProcAddress);
using GetProcAddressLegacyFn = CUresult (*)(const char* symbol, void** pfn, int cuda_version,
                                            cuuint64_t flags);
static_assert(internal::FunctionArity<decltype(::cuGetProcAddress)>::value == 5,
              "cuda.h's cuGetProcAddress is expected to be the _v2 (5-parameter) variant");

// "13.0" for 13000.
std::string CudaVersionText(int version) {
  return StrCat(version / 1000, ".", (version % 1000) / 10);
}

std::string_view QueryResultName(CUdriverProcAddressQueryResult result) {
  switch (result) {
    case CU_GET_PROC_ADDRESS_SUCCESS: return "CU_GET_PROC_ADDRESS_SUCCESS";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: return "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT:
      return "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT";
  }
  return "";
}

std::string CuResultText(CUresult result) {
  std::string_view name = CudaResultEnumName(result);
  return name.empty() ? StrCat("CUresult ", static_cast<int>(result)) : std::string(name);
}

// Writes `pfn` into the function-pointer slot at `offset` of `table`.
template <typename Api>
void StoreEntry(Api& table, std::size_t offset, void* pfn) {
  std::memcpy(reinterpret_cast<char*>(&table) + offset, &pfn, sizeof(pfn));
}

// Entries whose name cuGetProcAddress answers, at the table's API version, with a newer ABI than
// the one cuda.h declares under that name (and so the one CudaApi's member type has). Measured on
// driver 580.159.04 (CUDA 13.0): at 13000 "cuCtxSynchronize" resolves to
// cuCtxSynchronize_v2(CUcontext), "cuCtxGetDevice" to cuCtxGetDevice_v2(CUdevice*, CUcontext)
// (both introduced in 13.0) and "cuStreamGetCtx" to cuStreamGetCtx_v2(CUstream, CUcontext*,
// CUgreenCtx*) (12.5), while cuda.h 13.0 declares the one- and two-parameter forms under the
// plain names. These are resolved at `abi_version`, a version whose answer is the declared ABI.
struct AbiPin {
  std::string_view name;
  int abi_version;
};
constexpr AbiPin kAbiPins[] = {
    {"cuCtxSynchronize", 12000},
    {"cuCtxGetDevice", 12000},
    {"cuStreamGetCtx", 12000},
};

// The version to resolve `name` at when the table asks for `api_version`.
int ResolveVersionFor(std::string_view name, int api_version) {
  for (const AbiPin& pin : kAbiPins) {
    if (pin.name == name) return std::min(api_version, pin.abi_version);
  }
  return api_version;
}

// One entry point looked up through the driver's resolver.
struct Lookup {
  void* pfn = nullptr;
  std::string why_missing;  // Set when pfn is null: "symbolStatus=..., ..." for the message.
};

// Resolves entry points through whichever cuGetProcAddress the driver exports.
class Resolver {
 public:
  Resolver(GetProcAddressV2Fn v2, GetProcAddressLegacyFn legacy, int api_version)
      : v2_(v2), legacy_(legacy), api_version_(api_version) {}

  [[nodiscard]] Lookup Find(const char* name) const {
    Lookup out;
    const int version = ResolveVersionFor(name, api_version_);
    if (v2_ != nullptr) {
      CUdriverProcAddressQueryResult query = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      CUresult result = v2_(name, &out.pfn, version, CU_GET_PROC_ADDRESS_DEFAULT, &query);
      if (result == CUDA_SUCCESS && query == CU_GET_PROC_ADDRESS_SUCCESS && out.pfn != nullptr) {
        return out;
      }
      std::string_view query_name = QueryResultName(query);
      out.why_missing = StrCat("symbolStatus=",
                               query_name.empty() ? StrCat(static_cast<int>(query))
                                                  : std::string(query_name));
      if (result != CUDA_SUCCESS && result != CUDA_ERROR_NOT_FOUND) {
        out.why_missing += StrCat(", ", CuResultText(result));
      }
      if (result == CUDA_SUCCESS && query == CU_GET_PROC_ADDRESS_SUCCESS) {
        out.why_missing += ", but a null pointer was returned";
      }
    } else {
      // The legacy resolver reports only a CUresult (CUDA_ERROR_NOT_FOUND for both "unknown"
      // and "too new for the requested version").
      CUresult result = legacy_(name, &out.pfn, version, CU_GET_PROC_ADDRESS_DEFAULT);
      if (result == CUDA_SUCCESS && out.pfn != nullptr) return out;
      out.why_missing = StrCat("legacy cuGetProcAddress, no symbolStatus: ", CuResultText(result));
    }
    out.pfn = nullptr;
    return out;
  }

  [[nodiscard]] bool is_legacy() const { return v2_ == nullptr; }

 private:
  GetProcAddressV2Fn v2_;
  GetProcAddressLegacyFn legacy_;
  int api_version_;
};

// "<label>: required entry point X not found (why)" plus the other missing required entries.
Status MissingRequiredError(const std::string& label,
                            const std::vector<std::pair<std::string, std::string>>& missing) {
  std::string message = StrCat(label, ": required entry point ", missing.front().first,
                               " not found (", missing.front().second, ")");
  if (missing.size() > 1) {
    message += StrCat("; ", missing.size() - 1, " more required entry point",
                      missing.size() > 2 ? "s" : "", " missing:");
    for (std::size_t i = 1; i < missing.size(); ++i) {
      message += StrCat(i == 1 ? " " : ", ", missing[i].first);
    }
  }
  return UnavailableError(std::move(message));
}

}  // namespace

std::string ResolveLibraryPath(std::string_view requested, const char* env_var,
                               const char* default_name) {
  if (!requested.empty()) return std::string(requested);
  if (env_var != nullptr) {
    if (std::optional<std::string> from_env = env::ReadString(env_var)) return *from_env;
  }
  return default_name;
}

StatusOr<std::unique_ptr<RealCuda>> RealCuda::Load(CudaLoadOptions options) {
  if (options.api_version < 1000 || options.api_version > kCudaApiVersion) {
    return InvalidArgumentError(
        StrCat("CudaLoadOptions::api_version must be in [1000, ", kCudaApiVersion,
               "] (the cuda.h cuhal was built with), got ", options.api_version));
  }
  const std::string path =
      ResolveLibraryPath(options.library_path, kLibcudaPathEnv, kDefaultLibcudaName);
  CUHAL_ASSIGN_OR_RETURN(DynamicLibrary library,
                         DynamicLibrary::Open(path, DynamicLibrary::OpenMode::kKeepLoaded),
                         "loading the CUDA driver ", kDefaultLibcudaName);
  const std::string label = StrCat(kDefaultLibcudaName, " (", library.loaded_path(), ")");

  GetProcAddressV2Fn v2 = nullptr;
  GetProcAddressLegacyFn legacy = nullptr;
  if (void* sym = library.Symbol("cuGetProcAddress_v2"); sym != nullptr) {
    std::memcpy(&v2, &sym, sizeof(sym));
  } else if (void* old_sym = library.Symbol("cuGetProcAddress"); old_sym != nullptr) {
    std::memcpy(&legacy, &old_sym, sizeof(old_sym));
  } else {
    return UnavailableError(StrCat(label, ": exports neither cuGetProcAddress_v2 nor "
                                   "cuGetProcAddress (a driver for CUDA 11.3 or newer is needed)"));
  }
  const Resolver resolver(v2, legacy, options.api_version);

  // The driver's version first: an older driver would hand out entry points with older ABIs.
  Lookup get_version = resolver.Find("cuDriverGetVersion");
  if (get_version.pfn == nullptr) {
    return MissingRequiredError(label, {{"cuDriverGetVersion", get_version.why_missing}});
  }
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  std::memcpy(&driver_get_version, &get_version.pfn, sizeof(get_version.pfn));
  int driver_version = 0;
  if (CUresult result = driver_get_version(&driver_version); result != CUDA_SUCCESS) {
    return UnavailableError(StrCat(label, ": cuDriverGetVersion failed: ", CuResultText(result)));
  }
  if (driver_version < options.api_version) {
    return FailedPreconditionError(StrCat(
        label, ": the driver supports CUDA ", CudaVersionText(driver_version), " (",
        driver_version, "), older than the API version ", CudaVersionText(options.api_version),
        " (", options.api_version, ") that cuhal resolves its table at; it would hand out entry "
        "points with older signatures. Install a newer driver."));
  }

  std::unique_ptr<RealCuda> cuda(new RealCuda(std::move(library)));
  cuda->driver_version_ = driver_version;
  cuda->api_version_ = options.api_version;
  cuda->legacy_resolver_ = resolver.is_legacy();
  std::vector<std::pair<std::string, std::string>> missing_required;
  for (const SymbolInfo& symbol : CudaSymbols()) {
    Lookup found;
    if (resolver.is_legacy() && std::strcmp(symbol.name, "cuGetProcAddress") == 0) {
      // The legacy resolver would answer with itself: a 4-parameter function the table's _v2
      // type cannot hold.
      found.why_missing = "legacy driver";
    } else {
      found = resolver.Find(symbol.name);
    }
    StoreEntry(cuda->api_, symbol.offset, found.pfn);
    if (found.pfn != nullptr) continue;
    if (symbol.kind == SymbolKind::kRequired) {
      missing_required.emplace_back(symbol.name, std::move(found.why_missing));
    } else {
      cuda->missing_optional_.emplace_back(symbol.name);
    }
  }
  if (!missing_required.empty()) return MissingRequiredError(label, missing_required);
  return cuda;
}

NcclVersion DecodeNcclVersion(int code) {
  if (code <= 0) return {};
  if (code >= 10000) return {code / 10000, (code % 10000) / 100, code % 100};
  return {code / 1000, (code % 1000) / 100, code % 100};
}

StatusOr<std::unique_ptr<RealNccl>> RealNccl::Load(NcclLoadOptions options) {
  const std::string path =
      ResolveLibraryPath(options.library_path, kLibncclPathEnv, kDefaultLibncclName);
  CUHAL_ASSIGN_OR_RETURN(DynamicLibrary library,
                         DynamicLibrary::Open(path, DynamicLibrary::OpenMode::kKeepLoaded),
                         "loading NCCL ", kDefaultLibncclName);
  const std::string label = StrCat(kDefaultLibncclName, " (", library.loaded_path(), ")");

  // The version first, before trusting any other symbol's signature.
  void* get_version_sym = library.Symbol("ncclGetVersion");
  if (get_version_sym == nullptr) {
    return MissingRequiredError(label, {{"ncclGetVersion", "not exported"}});
  }
  decltype(&::ncclGetVersion) get_version = nullptr;
  std::memcpy(&get_version, &get_version_sym, sizeof(get_version_sym));
  int code = 0;
  if (ncclResult_t result = get_version(&code); result != ncclSuccess) {
    std::string_view name = NcclResultEnumName(result);
    return UnavailableError(StrCat(label, ": ncclGetVersion failed: ",
                                   name.empty() ? StrCat("ncclResult ", static_cast<int>(result))
                                                : std::string(name)));
  }
  const NcclVersion version = DecodeNcclVersion(code);
  if (version.major != kNcclMajorVersion) {
    return FailedPreconditionError(StrCat(
        label, ": NCCL version ", version.major, ".", version.minor, ".", version.patch, " (",
        code, ") has major version ", version.major, ", but cuhal was built against nccl.h ",
        NCCL_MAJOR, ".", NCCL_MINOR, ".", NCCL_PATCH, " (major ", kNcclMajorVersion, ")"));
  }

  std::unique_ptr<RealNccl> nccl(new RealNccl(std::move(library)));
  nccl->version_ = code;
  std::vector<std::pair<std::string, std::string>> missing_required;
  for (const SymbolInfo& symbol : NcclSymbols()) {
    void* pfn = nccl->library_.Symbol(symbol.name);
    StoreEntry(nccl->api_, symbol.offset, pfn);
    if (pfn != nullptr) continue;
    if (symbol.kind == SymbolKind::kRequired) {
      missing_required.emplace_back(symbol.name, "not exported");
    } else {
      nccl->missing_optional_.emplace_back(symbol.name);
    }
  }
  if (!missing_required.empty()) return MissingRequiredError(label, missing_required);
  return nccl;
}

}  // namespace cuhal
