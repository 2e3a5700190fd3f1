// Copyright 2026 The cuhal Authors.
// Entry points: the JIT linker (cuLinkCreate_v2, cuLinkAddData_v2, cuLinkAddFile_v2,
// cuLinkComplete, cuLinkDestroy). The fake "links" PTX: each input is checked as the JIT would
// compile it when added, cuLinkComplete joins the inputs into one PTX module (the first input's
// header, every input's body, the `.extern .func` declarations that another input defines
// dropped), checks it as cuModuleLoadData would, and hands out a cubin: an ELF file holding that
// PTX (fakecuda/internal/fake_cubin.h), which cuModuleLoadData and cuLibraryLoadData accept. The
// state lives in fakecuda/internal/legacy_model.h.
//
// Measured on an H100 (driver 580.159.04, ci/gpu-probes/legacy_probe.cc "link:*",
// ci/gpu-probes/results/2026-12-06-h100-legacy.real.txt):
//  - cuLinkCreate needs a current context (CUDA_ERROR_INVALID_CONTEXT); an option out of range,
//    or options without their arrays, are CUDA_ERROR_INVALID_VALUE. CU_JIT_WALL_TIME is not
//    written. A link for CU_JIT_TARGET sm_100 completes, and its cubin does not load on sm_90
//    (CUDA_ERROR_NO_BINARY_FOR_GPU).
//  - cuLinkAddData: null data or size 0, an unknown input type, options without arrays:
//    CUDA_ERROR_INVALID_VALUE. PTX with a syntax error: CUDA_ERROR_INVALID_PTX (the input is
//    dropped; the error log gets the message, not the input's name); text that is not PTX:
//    CUDA_ERROR_INVALID_IMAGE; a function or entry another input defines:
//    CUDA_ERROR_INVALID_SOURCE; a linked (executable) cubin: CUDA_ERROR_NO_BINARY_FOR_GPU;
//    garbage as CUBIN or FATBINARY: CUDA_ERROR_INVALID_IMAGE; PTX text as OBJECT: accepted;
//    as LIBRARY: CUDA_ERROR_UNKNOWN; as NVVM: CUDA_ERROR_INVALID_IMAGE. Those errors but
//    INVALID_PTX and INVALID_VALUE stay with the state: cuLinkComplete answers the first of them.
//  - cuLinkAddFile: a missing file CUDA_ERROR_FILE_NOT_FOUND, a directory
//    CUDA_ERROR_OUT_OF_MEMORY, an empty or null path CUDA_ERROR_INVALID_VALUE.
//  - cuLinkComplete: a null cubinOut is CUDA_ERROR_INVALID_VALUE, a null sizeOut is allowed;
//    a link of no input succeeds; an `.extern` function no input defines is
//    CUDA_ERROR_INVALID_SOURCE (the log names it). Once completed, the state's image stays until
//    cuLinkDestroy, but a second cuLinkComplete answers CUDA_ERROR_INVALID_HANDLE and a later
//    cuLinkAddData CUDA_ERROR_INVALID_VALUE. The context may be destroyed in between.
//  - A null state is CUDA_ERROR_INVALID_HANDLE, even before cuInit. A made-up or destroyed state
//    crashed the real driver (SIGSEGV); the fake answers CUDA_ERROR_INVALID_HANDLE.
// The fake cannot read real cubins, relocatable objects, libraries or NVVM IR: a cubin input
// that is not its own answers CUDA_ERROR_NOT_SUPPORTED with the reason in the error log.
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "fakecuda/entry/entry.h"
#include "fakecuda/entry/legacy_launch.h"
#include "fakecuda/internal/fake_cubin.h"
#include "fakecuda/internal/legacy_model.h"
#include "fakecuda/internal/module_image.h"
#include "fakecuda/internal/module_model.h"

using fakecuda::LinkRecord;

namespace fakecuda {
namespace {

// The JIT options of cuLinkCreate / cuLinkAddData: the log buffers (the link writes them) and
// the target are remembered, the rest have no effect on the fake (CU_JIT_WALL_TIME is not
// written, as measured). An option out of range, or
// options without their arrays, are CUDA_ERROR_INVALID_VALUE.
CUresult ReadLinkOptions(unsigned n, CUjit_option* options, void** values, LinkRecord* out) {
  if (n > 0 && (options == nullptr || values == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < n; ++i) {
    const int option = EnumBits(options[i]);
    if (option < 0 || option >= CU_JIT_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
    if (out == nullptr) continue;
    const auto size = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(values[i]));
    switch (option) {
      case CU_JIT_ERROR_LOG_BUFFER: out->error_log = values[i]; break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: out->error_log_size = size; break;
      case CU_JIT_INFO_LOG_BUFFER: out->info_log = values[i]; break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: out->info_log_size = size; break;
      case CU_JIT_TARGET: out->target_sm = static_cast<int>(size); break;
      default: break;
    }
  }
  return CUDA_SUCCESS;
}

// Writes `text` into the state's error log buffer (NUL-terminated, truncated), as the JIT does.
void WriteErrorLog(const LinkRecord& l, const std::string& text) {
  if (l.error_log == nullptr || l.error_log_size == 0) return;
  const std::size_t n = std::min(text.size(), l.error_log_size - 1);
  std::memcpy(l.error_log, text.data(), n);
  static_cast<char*>(l.error_log)[n] = '\0';
}

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || c == '%';
}

// The function name after a `.func` at `at` (past an optional return parameter list).
std::string FuncName(const std::string& s, std::size_t at) {
  std::size_t i = at + 5;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) ++i;
  if (i < s.size() && s[i] == '(') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      if (s[i] == '(') ++depth;
      if (s[i] == ')' && --depth == 0) break;
    }
    ++i;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) ++i;
  }
  std::size_t start = i;
  while (i < s.size() && IsIdentChar(s[i])) ++i;
  return s.substr(start, i - start);
}

// The `.func` statements of PTX `text` outside bodies: where each starts (after the previous
// `;` or `}` at depth 0), ends (its `;`, for a declaration), whether it is `.extern`, its name.
struct FuncDecl {
  std::size_t start = 0;
  std::size_t end = 0;
  bool is_extern = false;
  std::string name;
};
std::vector<FuncDecl> FuncDecls(const std::string& s) {
  std::vector<FuncDecl> out;
  int depth = 0;
  std::size_t statement = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}' && depth > 0 && --depth == 0) statement = i + 1;
    if (depth == 0 && c == ';') statement = i + 1;
    if (depth == 0 && s.compare(i, 5, ".func") == 0 &&
        (i + 5 >= s.size() || !IsIdentChar(s[i + 5]))) {
      FuncDecl d;
      // The linkage directives right before `.func` (.extern, .visible, .weak) start it.
      d.start = i;
      for (std::size_t j = i; j > statement;) {
        while (j > statement && std::isspace(static_cast<unsigned char>(s[j - 1])) != 0) --j;
        std::size_t k = j;
        while (k > statement && std::isspace(static_cast<unsigned char>(s[k - 1])) == 0) --k;
        const std::string word = s.substr(k, j - k);
        if (word != ".extern" && word != ".visible" && word != ".weak") break;
        d.is_extern = d.is_extern || word == ".extern";
        d.start = k;
        j = k;
      }
      d.name = FuncName(s, i);
      if (d.is_extern) {
        std::size_t semi = s.find(';', i);
        d.end = semi == std::string::npos ? s.size() : semi + 1;
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

// The text after the module header (.version, .target, .address_size directives).
std::string Body(const std::string& s) {
  std::size_t i = 0;
  for (const char* d : {".version", ".target", ".address_size"}) {
    std::size_t at = s.find(d, i);
    if (at == std::string::npos) continue;
    std::size_t eol = s.find('\n', at);
    i = eol == std::string::npos ? s.size() : eol + 1;
  }
  return s.substr(i);
}

// Joins the inputs' PTX into one module; *log names a function declared `.extern` that no
// input defines (then the result is empty).
std::string JoinPtx(const std::vector<std::string>& inputs, std::string* log) {
  std::set<std::string> defined;
  for (const std::string& p : inputs) {
    for (const FuncDecl& d : FuncDecls(p)) {
      if (!d.is_extern) defined.insert(d.name);
    }
  }
  std::string out;
  for (std::size_t n = 0; n < inputs.size(); ++n) {
    std::string text = inputs[n];
    std::vector<FuncDecl> decls = FuncDecls(text);
    for (auto it = decls.rbegin(); it != decls.rend(); ++it) {
      if (!it->is_extern) continue;
      if (defined.count(it->name) == 0) {
        *log = "ptxas fatal   : Unresolved extern function '" + it->name + "'";
        return std::string();
      }
      text.erase(it->start, it->end - it->start);
    }
    out += n == 0 ? text : Body(text);
    out += '\n';
  }
  return out;
}

// The PTX text an input of `type` holds (the bytes, up to a NUL or `size`), or the error.
CUresult InputPtx(CUjitInputType type, const void* data, std::size_t size, std::string* ptx,
                  std::string* log) {
  const auto* bytes = static_cast<const char*>(data);
  switch (EnumBits(type)) {
    case CU_JIT_INPUT_PTX: {
      ptx->assign(bytes, strnlen(bytes, size));
      ModuleImage parsed;
      std::string text = *ptx;
      if (CUresult e = ParseModuleImage(text.c_str(), text.size() + 1, &parsed, log);
          e != CUDA_SUCCESS) {
        return e;
      }
      if (parsed.format != ImageFormat::kPtx) return CUDA_ERROR_INVALID_IMAGE;
      return CUDA_SUCCESS;
    }
    case CU_JIT_INPUT_CUBIN: {
      if (!IsElf(data, size)) return CUDA_ERROR_INVALID_IMAGE;
      std::string linked;
      FakeCubinPtx(data, size, &linked);
      if (!linked.empty()) {
        // Measured: a cubin out of cuLinkComplete (an executable, not relocatable) is refused.
        *log = "nvlink error   : the input is not a relocatable cubin";
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
      }
      *log = "cubin inputs other than fakecuda's own are not modelled by fakecuda";
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    case CU_JIT_INPUT_FATBINARY: {
      ModuleImage parsed;
      if (CUresult e = ParseModuleImage(data, size, &parsed, log); e != CUDA_SUCCESS) return e;
      if (!parsed.fatbin.present) return CUDA_ERROR_INVALID_IMAGE;
      if (parsed.format != ImageFormat::kPtx) {
        *log = "fat binaries without PTX are not modelled by fakecuda's linker";
        return CUDA_ERROR_NOT_SUPPORTED;
      }
      // The fat binary's PTX, again (ParseModuleImage keeps the parsed form only).
      *log = "fat binary inputs are not modelled by fakecuda's linker";
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    case CU_JIT_INPUT_OBJECT:
      // Measured: PTX text given as an object is accepted (and, in the fake, ignored); a real
      // relocatable object is not modelled.
      if (IsElf(data, size)) {
        *log = "relocatable objects are not modelled by fakecuda's linker";
        return CUDA_ERROR_NOT_SUPPORTED;
      }
      return CUDA_SUCCESS;
    case CU_JIT_INPUT_LIBRARY:
      *log = "libraries are not modelled by fakecuda's linker";
      return CUDA_ERROR_UNKNOWN;  // measured for PTX text given as a library
    case CU_JIT_INPUT_NVVM:
      *log = "NVVM IR needs link-time optimization (CU_JIT_LTO), not modelled";
      return CUDA_ERROR_INVALID_IMAGE;  // measured for PTX text given as NVVM
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

// The entries and (non-extern) functions PTX `text` defines.
std::set<std::string> Definitions(const std::string& text) {
  std::set<std::string> out;
  ModuleImage parsed;
  std::string log;
  if (ParseModuleImage(text.c_str(), text.size() + 1, &parsed, &log) == CUDA_SUCCESS) {
    for (const KernelInfo& k : parsed.kernels) out.insert(k.name);
  }
  for (const FuncDecl& d : FuncDecls(text)) {
    if (!d.is_extern) out.insert(d.name);
  }
  return out;
}

// cuLinkAddData's work once the state and arguments are checked.
CUresult AddInput(LinkRecord* l, CUjitInputType type, const void* data, std::size_t size,
                  const char* name) {
  std::string ptx, log;
  CUresult r = InputPtx(type, data, size, &ptx, &log);
  if (r == CUDA_SUCCESS && !ptx.empty()) {
    for (const std::string& d : Definitions(ptx)) {
      if (l->defined.count(d) != 0) {
        log = "nvlink error   : Multiple definition of '" + d + "'";
        r = CUDA_ERROR_INVALID_SOURCE;
      }
    }
  }
  if (r != CUDA_SUCCESS) {
    WriteErrorLog(*l, log);
    // Measured: these stay with the state (cuLinkComplete answers the first); a PTX syntax
    // error and argument errors do not.
    if (r != CUDA_ERROR_INVALID_PTX && r != CUDA_ERROR_INVALID_VALUE &&
        l->sticky == CUDA_SUCCESS) {
      l->sticky = r;
    }
    return r;
  }
  if (ptx.empty()) return CUDA_SUCCESS;  // an input the fake takes and ignores (OBJECT)
  for (const std::string& d : Definitions(ptx)) l->defined.insert(d);
  l->ptx.push_back(std::move(ptx));
  l->names.emplace_back(name != nullptr ? name : "");
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fakecuda

extern "C" {

// The state's handle is checked before cuInit is (measured: a null state is
// CUDA_ERROR_INVALID_HANDLE before cuInit).
#define FAKECUDA_LINK_STATE(name, handle)                                  \
  FAKECUDA_ENTER_NOLOCK(name)                                              \
  cuhal::MutexLock lock(st->mu);                                           \
  LinkRecord* l = st->legacy().FindLink(handle);                           \
  if (l == nullptr) return CUDA_ERROR_INVALID_HANDLE;                      \
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;

CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues,
                              CUlinkState* stateOut) try {
  FAKECUDA_ENTER(cuLinkCreate)
  if (stateOut == nullptr) return CUDA_ERROR_INVALID_VALUE;
  LinkRecord l;
  if (CUresult e = fakecuda::ReadLinkOptions(numOptions, options, optionValues, &l);
      e != CUDA_SUCCESS) {
    return e;
  }
  FAKECUDA_REQUIRE_CONTEXT()
  l.ctx_id = ctx->id;
  l.device = ctx->device;
  if (l.target_sm == 0) {
    const fakecuda::DeviceProfile& p = st->profile(ctx->device);
    l.target_sm = p.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                  p.Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  }
  st->legacy().AddLink(std::move(l), stateOut);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLinkCreate");
}

CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size,
                               const char* name, unsigned int numOptions, CUjit_option* options,
                               void** optionValues) try {
  FAKECUDA_LINK_STATE(cuLinkAddData, state)
  if (data == nullptr || size == 0 || l->completed) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::ReadLinkOptions(numOptions, options, optionValues, nullptr);
      e != CUDA_SUCCESS) {
    return e;
  }
  return fakecuda::AddInput(l, type, data, size, name);
} catch (...) {
  return ::fakecuda::EntryFailed("cuLinkAddData");
}

CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path,
                               unsigned int numOptions, CUjit_option* options,
                               void** optionValues) try {
  FAKECUDA_LINK_STATE(cuLinkAddFile, state)
  if (path == nullptr || *path == '\0' || l->completed) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = fakecuda::ReadLinkOptions(numOptions, options, optionValues, nullptr);
      e != CUDA_SUCCESS) {
    return e;
  }
  struct stat info;
  if (stat(path, &info) != 0) return CUDA_ERROR_FILE_NOT_FOUND;
  if (S_ISDIR(info.st_mode)) return CUDA_ERROR_OUT_OF_MEMORY;  // measured
  if (!S_ISREG(info.st_mode)) return CUDA_ERROR_FILE_NOT_FOUND;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CUDA_ERROR_FILE_NOT_FOUND;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) return CUDA_ERROR_INVALID_IMAGE;
  return fakecuda::AddInput(l, type, bytes.data(), bytes.size(), path);
} catch (...) {
  return ::fakecuda::EntryFailed("cuLinkAddFile");
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut) try {
  FAKECUDA_LINK_STATE(cuLinkComplete, state)
  if (cubinOut == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (l->completed) return CUDA_ERROR_INVALID_HANDLE;  // measured: the state is used up
  if (l->sticky != CUDA_SUCCESS) return l->sticky;
  std::string log;
  std::string joined;
  if (l->ptx.empty()) {
    // Measured: a link of nothing succeeds; its image is an empty module.
    joined = ".version 8.0\n.target sm_" + std::to_string(l->target_sm) + "\n.address_size 64\n";
  } else {
    joined = fakecuda::JoinPtx(l->ptx, &log);
    if (joined.empty()) {
      fakecuda::WriteErrorLog(*l, log);
      return CUDA_ERROR_INVALID_SOURCE;
    }
    fakecuda::ModuleImage parsed;
    CUresult r = fakecuda::ParseModuleImage(joined.c_str(), joined.size() + 1, &parsed, &log);
    if (r == CUDA_SUCCESS) r = fakecuda::CheckImageForDevice(st, l->device, parsed, &log);
    if (r != CUDA_SUCCESS) {
      fakecuda::WriteErrorLog(*l, log);
      return r;
    }
  }
  l->image = fakecuda::MakeFakeCubin(joined, l->target_sm);
  l->completed = true;
  fakecuda::WriteErrorLog(*l, std::string());
  if (l->info_log != nullptr && l->info_log_size > 0) static_cast<char*>(l->info_log)[0] = '\0';
  *cubinOut = l->image.data();
  if (sizeOut != nullptr) *sizeOut = l->image.size();
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLinkComplete");
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state) try {
  FAKECUDA_LINK_STATE(cuLinkDestroy, state)
  st->legacy().DestroyLink(l->id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuLinkDestroy");
}

}  // extern "C"

// The older ABIs the real driver still exports under the plain names (cuda.h maps those to the
// _v2 forms): the same signatures, forwarded. UNMEASURED that the real v1 forms differ.
extern "C" {
CUresult CUDAAPI FakecudaLinkCreateV1(unsigned int numOptions, CUjit_option* options,
                                      void** optionValues, CUlinkState* stateOut)
    __asm__("cuLinkCreate");
CUresult CUDAAPI FakecudaLinkAddDataV1(CUlinkState state, CUjitInputType type, void* data,
                                       size_t size, const char* name, unsigned int numOptions,
                                       CUjit_option* options, void** optionValues)
    __asm__("cuLinkAddData");
CUresult CUDAAPI FakecudaLinkAddFileV1(CUlinkState state, CUjitInputType type, const char* path,
                                       unsigned int numOptions, CUjit_option* options,
                                       void** optionValues) __asm__("cuLinkAddFile");

CUresult CUDAAPI FakecudaLinkCreateV1(unsigned int numOptions, CUjit_option* options,
                                      void** optionValues, CUlinkState* stateOut) {
  return cuLinkCreate(numOptions, options, optionValues, stateOut);
}
CUresult CUDAAPI FakecudaLinkAddDataV1(CUlinkState state, CUjitInputType type, void* data,
                                       size_t size, const char* name, unsigned int numOptions,
                                       CUjit_option* options, void** optionValues) {
  return cuLinkAddData(state, type, data, size, name, numOptions, options, optionValues);
}
CUresult CUDAAPI FakecudaLinkAddFileV1(CUlinkState state, CUjitInputType type, const char* path,
                                       unsigned int numOptions, CUjit_option* options,
                                       void** optionValues) {
  return cuLinkAddFile(state, type, path, numOptions, options, optionValues);
}
}  // extern "C"
