// Copyright 2026 The cuhal Authors.
// The export tables (export_tables.h) and their slots. Where the layouts and the slots' meanings
// come from: docs/cudart_on_the_fake.md, "The export tables". In short, the table layouts are
// those ZLUDA (github.com/vosen/ZLUDA, dark_api/src/lib.rs and zluda/src/impl/driver.rs) found
// by observing the real runtime and driver, and the slots the CUDA 13.0 runtime calls on the fake
// were confirmed with FAKECUDA_TRACE_EXPORT_TABLE=1 (the trace prints every call). Nothing here
// is NVIDIA code. Every slot is C ABI (the runtime calls them through plain function pointers),
// catches everything, and never dereferences a pointer argument it has not checked for null.
#include "fakecuda/internal/export_tables.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "core/base/mutex.h"
#include "fakecuda/entry/entry.h"

namespace fakecuda {
namespace {

// ---------------------------------------------------------------------------------------------
// MD2 (RFC 1319).

// PI_SUBST of RFC 1319 (a permutation of 0..255 built from the digits of pi).
constexpr unsigned char kMd2Substitution[256] = {
    41, 46, 67, 201, 162, 216, 124, 1, 61, 54, 84, 161, 236, 240, 6, 19,
    98, 167, 5, 243, 192, 199, 115, 140, 152, 147, 43, 217, 188, 76, 130, 202,
    30, 155, 87, 60, 253, 212, 224, 22, 103, 66, 111, 24, 138, 23, 229, 18,
    190, 78, 196, 214, 218, 158, 222, 73, 160, 251, 245, 142, 187, 47, 238, 122,
    169, 104, 121, 145, 21, 178, 7, 63, 148, 194, 16, 137, 11, 34, 95, 33,
    128, 127, 93, 154, 90, 144, 50, 39, 53, 62, 204, 231, 191, 247, 151, 3,
    255, 25, 48, 179, 72, 165, 181, 209, 215, 94, 146, 42, 172, 86, 170, 198,
    79, 184, 56, 210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4, 241,
    69, 157, 112, 89, 100, 113, 135, 32, 134, 91, 207, 101, 230, 45, 168, 2,
    27, 96, 37, 173, 174, 176, 185, 246, 28, 70, 97, 105, 52, 64, 126, 15,
    85, 71, 163, 35, 221, 81, 175, 58, 195, 92, 249, 206, 186, 197, 234, 38,
    44, 83, 13, 110, 133, 40, 132, 9, 211, 223, 205, 244, 65, 129, 77, 82,
    106, 220, 55, 200, 108, 193, 171, 250, 36, 225, 123, 8, 12, 189, 177, 74,
    120, 136, 149, 139, 227, 99, 232, 109, 233, 203, 213, 254, 59, 0, 29, 57,
    242, 239, 183, 14, 102, 88, 208, 228, 166, 119, 114, 248, 235, 117, 75, 10,
    49, 68, 80, 180, 143, 237, 31, 26, 219, 153, 141, 51, 159, 17, 131, 20,
};

// A streaming MD2: Update any number of times, then Final once.
class Md2Hasher {
 public:
  void Update(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      block_[fill_++] = p[i];
      if (fill_ == 16) {
        Compress(block_);
        fill_ = 0;
      }
    }
  }
  void Final(unsigned char digest[16]) {
    unsigned char pad = static_cast<unsigned char>(16 - fill_);  // 1..16 bytes of value `pad`
    for (unsigned i = 0; i < pad; ++i) Update(&pad, 1);
    unsigned char checksum[16];
    std::memcpy(checksum, checksum_, 16);
    Compress(checksum);
    std::memcpy(digest, state_, 16);
  }

 private:
  void Compress(const unsigned char block[16]) {
    // The checksum first (RFC 1319 3.2, with the errata's L = C[j]).
    unsigned char l = checksum_[15];
    for (int j = 0; j < 16; ++j) {
      checksum_[j] ^= kMd2Substitution[block[j] ^ l];
      l = checksum_[j];
    }
    unsigned char x[48];
    for (int j = 0; j < 16; ++j) {
      x[j] = state_[j];
      x[16 + j] = block[j];
      x[32 + j] = static_cast<unsigned char>(state_[j] ^ block[j]);
    }
    unsigned t = 0;
    for (unsigned round = 0; round < 18; ++round) {
      for (unsigned char& b : x) {
        b ^= kMd2Substitution[t];
        t = b;
      }
      t = (t + round) & 0xFF;
    }
    std::memcpy(state_, x, 16);
  }

  unsigned char state_[16] = {};
  unsigned char checksum_[16] = {};
  unsigned char block_[16] = {};
  unsigned fill_ = 0;
};

void HmacMd2Parts(const unsigned char key[16], const void* a, std::size_t a_size, const void* b,
                  std::size_t b_size, unsigned char digest[16]) {
  unsigned char pad[16];
  Md2Hasher inner;
  for (int i = 0; i < 16; ++i) pad[i] = static_cast<unsigned char>(key[i] ^ 0x36);
  inner.Update(pad, 16);
  inner.Update(a, a_size);
  if (b_size > 0) inner.Update(b, b_size);
  unsigned char inner_digest[16];
  inner.Final(inner_digest);
  Md2Hasher outer;
  for (int i = 0; i < 16; ++i) pad[i] = static_cast<unsigned char>(key[i] ^ 0x5C);
  outer.Update(pad, 16);
  outer.Update(inner_digest, 16);
  outer.Final(digest);
}

// ---------------------------------------------------------------------------------------------
// The tables. Each is a struct of pointer-sized words laid out exactly as the runtime reads them
// (a size word, then function pointers), defined at the end of this file; constant-initialized,
// so a lookup before this library's static constructors have run still finds them.

// A slot whose meaning is not known: NULL in every table (ZLUDA leaves the same slots NULL, and
// the runtime works with that; it has not been seen calling one).
using UnknownSlot = const void*;

// The prologue of a slot that returns a CUresult: the installed driver (none: not initialized),
// the fault injector (rules name the slot "<table>[<index>]"), the callback-lane rule, the lock
// and cuInit, as every entry point (entry.h).
#define FAKECUDA_ENTER_SLOT(slot_name)                \
  FAKECUDA_ENTER_NOLOCK_NAMED(slot_name)              \
  cuhal::MutexLock lock(st->mu);                      \
  if (!st->initialized) return CUDA_ERROR_NOT_INITIALIZED;

// ---------------------------------------------------------------------------------------------
// cudart_interface (6bd5fb6c-5bf4-e74a-8987-d93912fd9df9), 13 words.

// The fat-binary wrapper nvcc emits for every translation unit (__fatBinC_Wrapper_t): a magic,
// a version and the fat binary itself.
struct FatbinWrapper {
  std::uint32_t magic;  // 0x466243B1
  std::uint32_t version;
  const void* data;     // the fat binary (its header's magic is 0xBA55ED50)
  const void* filename_or_fatbins;
};
constexpr std::uint32_t kFatbinWrapperMagic = 0x466243B1;

// Loads the fat binary `image` into the current context, as cuModuleLoadData would.
CUresult LoadFatbin(CUmodule* module, const void* image) {
  return cuModuleLoadData(module, image);
}

// [1] (CUmodule* module, const __fatBinC_Wrapper_t* wrapper): loads the wrapper's fat binary
// into the current context.
CUresult CudartLoadWrapper(CUmodule* module, const FatbinWrapper* wrapper) noexcept try {
  CUresult r = CUDA_ERROR_INVALID_VALUE;
  if (module != nullptr && wrapper != nullptr && wrapper->magic == kFatbinWrapperMagic) {
    r = LoadFatbin(module, wrapper->data);
  }
  ExportTables::Trace("cudart_interface[1](module=%p, wrapper=%p) -> %d", static_cast<void*>(module),
                      static_cast<const void*>(wrapper), r);
  return r;
} catch (...) {
  return EntryFailed("cudart_interface[1]");
}

// [2] (CUcontext* pctx, CUdevice dev): the device's primary context handle, without retaining it
// or making it active (ZLUDA's test cudart_interface_fn2_creates_inactive_primary_ctx: the
// primary context stays inactive, and a later cuDevicePrimaryCtxRetain returns the same handle).
CUresult CudartPrimaryContext(CUcontext* pctx, CUdevice dev) noexcept try {
  CUresult r = [&]() -> CUresult {
    FAKECUDA_ENTER_SLOT("cudart_interface[2]")
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!ValidDevice(st, dev)) return CUDA_ERROR_INVALID_DEVICE;
    Device& d = st->device(dev);
    if (d.primary_ctx_id == 0) d.primary_ctx_id = st->NewId();  // as the first retain would
    *pctx = EncodeHandle<CUcontext>(HandleKind::kContext, d.primary_ctx_id);
    return CUDA_SUCCESS;
  }();
  ExportTables::Trace("cudart_interface[2](pctx=%p, dev=%d) -> %d%s%p", static_cast<void*>(pctx),
                      dev, r, r == CUDA_SUCCESS ? ", ctx=" : "",
                      r == CUDA_SUCCESS ? static_cast<void*>(*pctx) : nullptr);
  return r;
} catch (...) {
  return EntryFailed("cudart_interface[2]");
}

// [6] (CUmodule*, const __fatBinC_Wrapper_t*, void*, void*, unsigned): [1] with three more
// arguments whose meaning is unknown; with them all zero it is [1] (ZLUDA), else the safe
// answer is CUDA_ERROR_NOT_SUPPORTED.
CUresult CudartLoadWrapperExt(CUmodule* module, const FatbinWrapper* wrapper, void* arg3,
                              void* arg4, unsigned arg5) noexcept try {
  CUresult r = CUDA_ERROR_NOT_SUPPORTED;
  if (arg3 == nullptr && arg4 == nullptr && arg5 == 0) {
    r = CUDA_ERROR_INVALID_VALUE;
    if (module != nullptr && wrapper != nullptr && wrapper->magic == kFatbinWrapperMagic) {
      r = LoadFatbin(module, wrapper->data);
    }
  }
  ExportTables::Trace("cudart_interface[6](module=%p, wrapper=%p, %p, %p, %u) -> %d",
                      static_cast<void*>(module), static_cast<const void*>(wrapper), arg3, arg4,
                      arg5, r);
  return r;
} catch (...) {
  return EntryFailed("cudart_interface[6]");
}

// [7] (size_t): returns nothing; its meaning is unknown, and doing nothing is what ZLUDA does.
void CudartSlot7(std::size_t arg) noexcept {
  ExportTables::Trace("cudart_interface[7](%zu): ignored (meaning unknown)", arg);
}

// [8] (const fatbin header*, CUmodule*, void*, void*, unsigned): [6] with the fat binary itself
// (not its wrapper) first.
CUresult CudartLoadFatbinExt(const void* fatbin, CUmodule* module, void* arg3, void* arg4,
                             unsigned arg5) noexcept try {
  CUresult r = CUDA_ERROR_NOT_SUPPORTED;
  if (arg3 == nullptr && arg4 == nullptr && arg5 == 0) {
    r = module == nullptr || fatbin == nullptr ? CUDA_ERROR_INVALID_VALUE : LoadFatbin(module, fatbin);
  }
  ExportTables::Trace("cudart_interface[8](fatbin=%p, module=%p, %p, %p, %u) -> %d", fatbin,
                      static_cast<void*>(module), arg3, arg4, arg5, r);
  return r;
} catch (...) {
  return EntryFailed("cudart_interface[8]");
}

// [12] (): in the real driver it loads the PTX compiler and libnvvm (ZLUDA's note); the fake
// has its own PTX reader, so there is nothing to load.
CUresult CudartLoadCompilers() noexcept {
  ExportTables::Trace("cudart_interface[12]() -> 0");
  return CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// tools_runtime_callback_hooks (a094798c-2e74-2e74-93f2-0800200c0a66), 7 words. Slots 2 and 6
// hand out two buffers that the runtime writes (tool callback state; the runtime reads back only
// what it wrote). The sizes reported are ZLUDA's (1024 and 14); the buffers are larger, zeroed
// and 16-byte aligned, in case the runtime counts the size in bigger units than bytes.

alignas(16) unsigned char g_callback_buffer1[1024 * 8];
alignas(16) unsigned char g_callback_buffer2[14 * 8];

void CallbackBuffer1(void** ptr, std::size_t* size) noexcept {
  if (ptr != nullptr) *ptr = g_callback_buffer1;
  if (size != nullptr) *size = 1024;
  ExportTables::Trace("tools_runtime_callback_hooks[2](ptr=%p, size=%p)", static_cast<void*>(ptr),
                      static_cast<void*>(size));
}

void CallbackBuffer2(void** ptr, std::size_t* size) noexcept {
  if (ptr != nullptr) *ptr = g_callback_buffer2;
  if (size != nullptr) *size = 14;
  ExportTables::Trace("tools_runtime_callback_hooks[6](ptr=%p, size=%p)", static_cast<void*>(ptr),
                      static_cast<void*>(size));
}

// ---------------------------------------------------------------------------------------------
// context_local_storage (c693336e-1121-df11-a8c3-68f355d89593), 4 words, no size word: slot 0
// puts, 1 deletes and 2 gets a value by (context, key); a NULL context is the current one. The
// runtime keeps its per-context state there.

using ContextStorageDtor = void (*)(CUcontext, void*, void*);

struct StorageKey {
  std::uint64_t driver_serial;
  std::uint64_t ctx_id;
  std::uintptr_t key;
  bool operator<(const StorageKey& o) const {
    return std::tie(driver_serial, ctx_id, key) < std::tie(o.driver_serial, o.ctx_id, o.key);
  }
};
struct StorageValue {
  void* value;
  ContextStorageDtor dtor;  // called when the context is destroyed (OnContextDestroy); may be null
};

// The storage, with its own lock (taken only after the driver lock is released).
struct ContextStorage {
  cuhal::Mutex mu;
  std::map<StorageKey, StorageValue> values CUHAL_GUARDED_BY(mu);
};

ContextStorage& Storage() {
  static ContextStorage* storage = new ContextStorage;  // never destroyed: used at exit
  return *storage;
}

// What a storage call tells the driver about the runtime's retains of a primary context
// (Device::runtime_retains): a put attaches the runtime's state to the context (the runtime
// retained it just before), a delete detaches it (the runtime releases it just after).
enum class RuntimeState { kUnchanged, kAttach, kDetach };

// The key of (ctx, key) in the installed driver: a NULL `ctx` is the calling thread's current
// context (CUDA_ERROR_INVALID_CONTEXT without one); any other must be a live context. Applies
// `change` to a primary context's runtime accounting.
CUresult ResolveStorageKey(const char* slot, CUcontext ctx, void* key, RuntimeState change,
                           StorageKey* out) {
  FAKECUDA_ENTER_SLOT(slot)
  Context* c = nullptr;
  if (ctx == nullptr) {
    if (CUresult e = CurrentContextOrError(st, &c); e != CUDA_SUCCESS) return e;
  } else {
    c = st->FindContext(ctx);
    if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (c->primary && change == RuntimeState::kAttach && !c->runtime_state) {
    c->runtime_state = true;
    ++st->device(c->device).runtime_retains;
  } else if (c->primary && change == RuntimeState::kDetach && c->runtime_state) {
    c->runtime_state = false;
    st->device(c->device).runtime_release_due = true;
  }
  *out = StorageKey{st->serial, c->id, reinterpret_cast<std::uintptr_t>(key)};
  return CUDA_SUCCESS;
}

CUresult StoragePut(CUcontext ctx, void* key, void* value, ContextStorageDtor dtor) noexcept try {
  StorageKey k{};
  CUresult r = ResolveStorageKey("context_local_storage[0]", ctx, key, RuntimeState::kAttach, &k);
  if (r == CUDA_SUCCESS) {
    ContextStorage& s = Storage();
    cuhal::MutexLock lock(s.mu);
    s.values[k] = StorageValue{value, dtor};
  }
  ExportTables::Trace("context_local_storage[0](ctx=%p, key=%p, value=%p, dtor=%p) -> %d",
                      static_cast<void*>(ctx), key, value, reinterpret_cast<void*>(dtor), r);
  return r;
} catch (...) {
  return EntryFailed("context_local_storage[0]");
}

CUresult StorageDelete(CUcontext ctx, void* key) noexcept try {
  StorageKey k{};
  CUresult r = ResolveStorageKey("context_local_storage[1]", ctx, key, RuntimeState::kDetach, &k);
  if (r == CUDA_SUCCESS) {
    ContextStorage& s = Storage();
    cuhal::MutexLock lock(s.mu);
    s.values.erase(k);
  }
  ExportTables::Trace("context_local_storage[1](ctx=%p, key=%p) -> %d", static_cast<void*>(ctx),
                      key, r);
  return r;
} catch (...) {
  return EntryFailed("context_local_storage[1]");
}

// Note the argument order: the out-pointer first. No value under the key:
// CUDA_ERROR_INVALID_HANDLE (ZLUDA; the runtime then creates its state and puts it).
CUresult StorageGet(void** value, CUcontext ctx, void* key) noexcept try {
  CUresult r = CUDA_ERROR_INVALID_VALUE;
  if (value != nullptr) {
    *value = nullptr;
    StorageKey k{};
    r = ResolveStorageKey("context_local_storage[2]", ctx, key, RuntimeState::kUnchanged, &k);
    if (r == CUDA_SUCCESS) {
      ContextStorage& s = Storage();
      cuhal::MutexLock lock(s.mu);
      auto it = s.values.find(k);
      if (it == s.values.end()) {
        r = CUDA_ERROR_INVALID_HANDLE;
      } else {
        *value = it->second.value;
      }
    }
  }
  ExportTables::Trace("context_local_storage[2](value=%p, ctx=%p, key=%p) -> %d%s%p",
                      static_cast<void*>(value), static_cast<void*>(ctx), key, r,
                      r == CUDA_SUCCESS ? ", value=" : "",
                      r == CUDA_SUCCESS ? *value : nullptr);
  return r;
} catch (...) {
  return EntryFailed("context_local_storage[2]");
}

// ---------------------------------------------------------------------------------------------
// integrity_check (d4082055-bde6-704b-8d34-ba123c66e1f2), 3 words. Slot 1
// (unsigned version, uint64 unix_seconds, uint64 result[2]): the runtime checks that it talks to
// a genuine driver by asking for a keyed hash of values both sides know. As ZLUDA found: for
// version % 10 of 0 and 1 two fixed answers; else HMAC-MD2 (RFC 2104 over RFC 1319, written
// here from the RFCs) with the fixed key below, over the 48-byte record IntegrityRecord, then
// one 28-byte IntegrityDevice per device in ordinal order.

constexpr unsigned char kIntegrityKey[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                                             0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};

struct IntegrityRecord {
  std::uint32_t driver_version;  // what cuDriverGetVersion answers
  std::uint32_t version;         // the slot's first argument
  std::uint32_t process;         // getpid()
  std::uint32_t thread;          // the low 32 bits of pthread_self()
  const void* cudart_table;      // the cudart_interface table
  const void* integrity_table;   // this table
  const void* function;          // this slot's function
  std::uint64_t unix_seconds;    // the slot's second argument
};
static_assert(sizeof(IntegrityRecord) == 48);

struct IntegrityDevice {
  CUuuid uuid;  // cuDeviceGetUuid_v2
  std::int32_t pci_domain;
  std::int32_t pci_bus;
  std::int32_t pci_device;
};
static_assert(sizeof(IntegrityDevice) == 28);

CUresult IntegrityCheckAnswer(unsigned version, std::uint64_t unix_seconds,
                              std::uint64_t* result);

CUresult IntegrityCheck(unsigned version, std::uint64_t unix_seconds,
                        std::uint64_t* result) noexcept try {
  CUresult r = IntegrityCheckAnswer(version, unix_seconds, result);
  ExportTables::Trace("integrity_check[1](version=%u, unix_seconds=%llu, result=%p) -> %d",
                      version, static_cast<unsigned long long>(unix_seconds),
                      static_cast<void*>(result), r);
  return r;
} catch (...) {
  return EntryFailed("integrity_check[1]");
}

// ---------------------------------------------------------------------------------------------
// context_checks (263e8860-7cd2-6143-92f6-bbd5006dfa7e), 4 words. Slot 2
// (CUcontext, unsigned* flags, const void** detail) and slot 3 () -> unsigned check bits that
// are never observed set (ZLUDA): the fake answers 0 and NULL.

CUresult ContextCheck(CUcontext ctx, unsigned* flags, const void** detail) noexcept {
  if (flags != nullptr) *flags = 0;
  if (detail != nullptr) *detail = nullptr;
  ExportTables::Trace("context_checks[2](ctx=%p) -> 0", static_cast<void*>(ctx));
  return CUDA_SUCCESS;
}

unsigned ContextChecksSlot3() noexcept {
  ExportTables::Trace("context_checks[3]() -> 0");
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The tables' layouts and contents.

struct FatbinWrapper;

struct CudartInterfaceTable {
  std::size_t size;  // 13 words
  CUresult (*load_wrapper)(CUmodule*, const FatbinWrapper*) noexcept;                   // [1]
  CUresult (*primary_context)(CUcontext*, CUdevice) noexcept;                           // [2]
  UnknownSlot unknown3, unknown4, unknown5;                                             // [3-5]
  CUresult (*load_wrapper_ext)(CUmodule*, const FatbinWrapper*, void*, void*, unsigned) noexcept;
  void (*slot7)(std::size_t) noexcept;                                                  // [7]
  CUresult (*load_fatbin_ext)(const void*, CUmodule*, void*, void*, unsigned) noexcept; // [8]
  UnknownSlot unknown9, unknown10, unknown11;                                           // [9-11]
  CUresult (*load_compilers)() noexcept;                                                // [12]
};
static_assert(sizeof(CudartInterfaceTable) == 13 * sizeof(void*));

// tools_tls (42d85a81-23f6-cb47-8298-f6e78a3aecdc): a size word and no function (ZLUDA); the
// runtime asks for it and, finding no functions, calls none.
struct ToolsTlsTable {
  std::size_t size;  // 4 words
  UnknownSlot unknown1, unknown2, unknown3;
};
static_assert(sizeof(ToolsTlsTable) == 4 * sizeof(void*));

struct CallbackHooksTable {
  std::size_t size;  // 7 words
  UnknownSlot unknown1;
  void (*buffer1)(void**, std::size_t*) noexcept;  // [2]
  UnknownSlot unknown3, unknown4, unknown5;
  void (*buffer2)(void**, std::size_t*) noexcept;  // [6]
};
static_assert(sizeof(CallbackHooksTable) == 7 * sizeof(void*));

struct ContextStorageTable {  // no size word
  CUresult (*put)(CUcontext, void*, void*, ContextStorageDtor) noexcept;  // [0]
  CUresult (*erase)(CUcontext, void*) noexcept;                           // [1]
  CUresult (*get)(void**, CUcontext, void*) noexcept;                     // [2]
  UnknownSlot unknown3;
};
static_assert(sizeof(ContextStorageTable) == 4 * sizeof(void*));

struct IntegrityCheckTable {
  std::size_t size;  // 3 words
  CUresult (*check)(unsigned, std::uint64_t, std::uint64_t*) noexcept;  // [1]
  UnknownSlot unknown2;
};
static_assert(sizeof(IntegrityCheckTable) == 3 * sizeof(void*));

struct ContextChecksTable {
  std::size_t size;  // 4 words
  UnknownSlot unknown1;
  CUresult (*check)(CUcontext, unsigned*, const void**) noexcept;  // [2]
  unsigned (*check3)() noexcept;                                    // [3]
};
static_assert(sizeof(ContextChecksTable) == 4 * sizeof(void*));

constexpr CudartInterfaceTable kCudartInterface = {
    sizeof(CudartInterfaceTable), &CudartLoadWrapper, &CudartPrimaryContext, nullptr, nullptr,
    nullptr, &CudartLoadWrapperExt, &CudartSlot7, &CudartLoadFatbinExt, nullptr, nullptr, nullptr,
    &CudartLoadCompilers};
constexpr ToolsTlsTable kToolsTls = {sizeof(ToolsTlsTable), nullptr, nullptr, nullptr};
constexpr CallbackHooksTable kCallbackHooks = {sizeof(CallbackHooksTable), nullptr,
                                               &CallbackBuffer1, nullptr, nullptr, nullptr,
                                               &CallbackBuffer2};
constexpr ContextStorageTable kContextStorage = {&StoragePut, &StorageDelete, &StorageGet, nullptr};
constexpr IntegrityCheckTable kIntegrityCheck = {sizeof(IntegrityCheckTable), &IntegrityCheck,
                                                 nullptr};
constexpr ContextChecksTable kContextChecks = {sizeof(ContextChecksTable), nullptr, &ContextCheck,
                                               &ContextChecksSlot3};

// The integrity check's answer (see IntegrityCheck above), which hashes the tables' addresses.
CUresult IntegrityCheckAnswer(unsigned version, std::uint64_t unix_seconds,
                              std::uint64_t* result) {
  if (result == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (version % 10) {
    case 0:
      result[0] = 0x3341181C03CB675CULL;
      result[1] = 0x8ED383AA1F4CD1E8ULL;
      return CUDA_SUCCESS;
    case 1:
      result[0] = 0x1841181C03CB675CULL;
      result[1] = 0x8ED383AA1F4CD1E8ULL;
      return CUDA_SUCCESS;
    default: break;
  }
  // The values through the public entry points (each takes the driver lock itself).
  int driver_version = 0;
  if (CUresult e = cuDriverGetVersion(&driver_version); e != CUDA_SUCCESS) return e;
  int count = 0;
  if (CUresult e = cuDeviceGetCount(&count); e != CUDA_SUCCESS) return e;
  std::vector<IntegrityDevice> devices(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    IntegrityDevice& d = devices[static_cast<std::size_t>(i)];
    if (CUresult e = cuDeviceGetUuid_v2(&d.uuid, i); e != CUDA_SUCCESS) return e;
    if (CUresult e = cuDeviceGetAttribute(&d.pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, i);
        e != CUDA_SUCCESS) {
      return e;
    }
    if (CUresult e = cuDeviceGetAttribute(&d.pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, i);
        e != CUDA_SUCCESS) {
      return e;
    }
    if (CUresult e = cuDeviceGetAttribute(&d.pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, i);
        e != CUDA_SUCCESS) {
      return e;
    }
  }
  IntegrityRecord record{};
  record.driver_version = static_cast<std::uint32_t>(driver_version);
  record.version = version;
  record.process = static_cast<std::uint32_t>(getpid());
  record.thread = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(
      reinterpret_cast<void*>(pthread_self())));
  record.cudart_table = &kCudartInterface;
  record.integrity_table = &kIntegrityCheck;
  record.function = reinterpret_cast<const void*>(&IntegrityCheck);
  record.unix_seconds = unix_seconds;
  unsigned char digest[16];
  HmacMd2Parts(kIntegrityKey, &record, sizeof(record), devices.data(),
               devices.size() * sizeof(IntegrityDevice), digest);
  std::memcpy(result, digest, sizeof(digest));
  return CUDA_SUCCESS;
}

struct TableEntry {
  unsigned char uuid[16];
  const char* name;
  const void* table;
};

const TableEntry kTables[] = {
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
     "cudart_interface",
     &kCudartInterface},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
     "tools_tls",
     &kToolsTls},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
     "tools_runtime_callback_hooks",
     &kCallbackHooks},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     "context_local_storage",
     &kContextStorage},
    {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
     "integrity_check",
     &kIntegrityCheck},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
     "context_checks",
     &kContextChecks},
};

const TableEntry* FindEntry(const CUuuid& id) {
  for (const TableEntry& t : kTables) {
    if (std::memcmp(t.uuid, id.bytes, 16) == 0) return &t;
  }
  return nullptr;
}

#undef FAKECUDA_ENTER_SLOT

}  // namespace

const void* ExportTables::Find(const CUuuid& id) noexcept {
  const TableEntry* t = FindEntry(id);
  return t == nullptr ? nullptr : t->table;
}

const char* ExportTables::Name(const CUuuid& id) noexcept {
  const TableEntry* t = FindEntry(id);
  return t == nullptr ? nullptr : t->name;
}

void ExportTables::OnContextDestroy(std::uint64_t driver_serial, std::uint64_t ctx_id) noexcept {
  struct Pending {
    std::uintptr_t key;
    StorageValue value;
  };
  std::vector<Pending> pending;
  try {
    ContextStorage& s = Storage();
    cuhal::MutexLock lock(s.mu);
    auto it = s.values.lower_bound(StorageKey{driver_serial, ctx_id, 0});
    while (it != s.values.end() && it->first.driver_serial == driver_serial &&
           it->first.ctx_id == ctx_id) {
      pending.push_back(Pending{it->first.key, it->second});
      it = s.values.erase(it);
    }
  } catch (...) {
    return;  // no memory for the list: the values stay (the runtime's state is kept, not freed)
  }
  CUcontext handle = EncodeHandle<CUcontext>(HandleKind::kContext, ctx_id);
  for (const Pending& p : pending) {
    Trace("context_local_storage: context %p destroyed: destructor %p(key=%p, value=%p)",
          static_cast<void*>(handle), reinterpret_cast<void*>(p.value.dtor),
          reinterpret_cast<void*>(p.key), p.value.value);
    if (p.value.dtor != nullptr) p.value.dtor(handle, reinterpret_cast<void*>(p.key), p.value.value);
  }
}

bool ExportTables::TraceOn() noexcept {
  static const bool on = [] {
    const char* v = std::getenv("FAKECUDA_TRACE_EXPORT_TABLE");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void ExportTables::Trace(const char* format, ...) noexcept {
  if (!TraceOn()) return;
  char line[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  std::fprintf(stderr, "fakecuda: export table: %s\n", line);
}

void Md2(const void* data, std::size_t size, unsigned char digest[16]) noexcept {
  Md2Hasher h;
  h.Update(data, size);
  h.Final(digest);
}

void HmacMd2(const unsigned char key[16], const void* message, std::size_t size,
             unsigned char digest[16]) noexcept {
  HmacMd2Parts(key, message, size, nullptr, 0, digest);
}

}  // namespace fakecuda
