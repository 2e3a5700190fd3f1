// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/vmm_model.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <utility>

#include "fakecuda/internal/driver_state.h"
#include "fakecuda/race/race_detector.h"

namespace fakecuda {
namespace {

constexpr std::uint64_t kHandleKind = 10;  // low 4 bits of a handle value (HandleKind style)

bool Aligned(std::uint64_t v) { return v % VmmModel::kGranularity == 0; }

// Whether [p, p + n) wraps around the address space (UNMEASURED on the H200: refused as
// CUDA_ERROR_INVALID_VALUE, never walked).
bool Wraps(std::uintptr_t p, std::size_t n) { return n > UINTPTR_MAX - p; }

std::uintptr_t AlignUp(std::uintptr_t v, std::size_t a) { return (v + a - 1) / a * a; }

bool ValidAccessFlags(unsigned long long f) {
  return f == CU_MEM_ACCESS_FLAGS_PROT_NONE || f == CU_MEM_ACCESS_FLAGS_PROT_READ ||
         f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

std::size_t HostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::size_t{1} << 40;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

// Replaces [p, p + n) of the region with fresh anonymous memory (invariant 2).
void ResetRange(std::byte* p, std::size_t n) {
  void* r = mmap(p, n, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) {
    (void)mmap(p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  }
}

}  // namespace

// Physical memory: a memfd (invariant 1). Closed when the last handle on it goes.
struct VmmModel::Memory {
  Memory() = default;
  ~Memory() {
    if (fd >= 0) close(fd);
  }
  Memory(const Memory&) = delete;             // owns the descriptor
  Memory& operator=(const Memory&) = delete;  // ditto
  std::uint64_t id = 0;  // MEMORY_BLOCK_ID
  int fd = -1;
  std::size_t size = 0;
  bool host = false;  // host-located (CU_MEM_LOCATION_TYPE_HOST / HOST_NUMA)
  int device = 0;     // the device charged (device-located)
  dev_t st_dev = 0;
  ino_t st_ino = 0;
  CUmemAllocationProp prop{};  // as created
};

VmmModel::VmmModel(DriverState* st) : st_(st) {}

VmmModel::~VmmModel() {
  if (region_ != nullptr) munmap(region_, region_size_);
}

CUmemGenericAllocationHandle VmmModel::HandleValue(std::uint64_t id) const {
  return (id << 4) | kHandleKind;
}

VmmModel::Handle* VmmModel::FindHandle(CUmemGenericAllocationHandle handle) {
  if ((handle & 0xF) != kHandleKind) return nullptr;
  auto it = handles_.find(handle >> 4);
  return it == handles_.end() ? nullptr : &it->second;
}

const VmmModel::Handle* VmmModel::FindHandle(CUmemGenericAllocationHandle handle) const {
  if ((handle & 0xF) != kHandleKind) return nullptr;
  auto it = handles_.find(handle >> 4);
  return it == handles_.end() ? nullptr : &it->second;
}

CUmemGenericAllocationHandle VmmModel::AddHandle(const CUmemAllocationProp& prop,
                                                 std::size_t size, std::shared_ptr<Memory> memory,
                                                 const char* created_by) {
  const std::uint64_t id = st_->NewId();
  Handle h;
  h.id = id;
  h.prop = prop;
  h.size = size;
  h.memory = std::move(memory);
  h.created_by = created_by;
  handles_.emplace(id, std::move(h));
  return HandleValue(id);
}

void VmmModel::MaybeDestroy(std::uint64_t id) {
  auto it = handles_.find(id);
  if (it == handles_.end() || it->second.refs > 0 || it->second.mappings > 0) return;
  std::shared_ptr<Memory> m = std::move(it->second.memory);
  handles_.erase(it);
  if (m != nullptr && m.use_count() == 1 && !m->host && m->device >= 0 &&
      m->device < st_->device_count()) {
    Device& d = st_->device(m->device);
    d.bytes_in_use -= std::min(d.bytes_in_use, m->size);
  }
}

CUresult VmmModel::Create(const CUmemAllocationProp& prop, std::size_t size,
                          unsigned long long flags, CUmemGenericAllocationHandle* out) {
  st_->mu.AssertHeld();
  // The checks and their answers as measured (case "create").
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (prop.type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (prop.win32HandleMetaData != nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned char b : prop.allocFlags.reserved) {
    if (b != 0) return CUDA_ERROR_INVALID_VALUE;
  }
  if (prop.allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_NONE &&
      prop.allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_GENERIC) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const auto types = static_cast<unsigned>(prop.requestedHandleTypes);
  if ((types & (CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // No IMEX channel on the machine: fabric handles are not permitted.
  if ((types & CU_MEM_HANDLE_TYPE_FABRIC) != 0) return CUDA_ERROR_NOT_PERMITTED;
  bool host = false;
  switch (prop.location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (prop.location.id < 0 || prop.location.id >= st_->device_count()) {
        return CUDA_ERROR_INVALID_DEVICE;
      }
      break;
    case CU_MEM_LOCATION_TYPE_HOST:  // any id
      host = true;
      break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:  // the one host NUMA node, 0
      if (prop.location.id != 0) return CUDA_ERROR_INVALID_VALUE;
      host = true;
      break;
    default:  // INVALID, HOST_NUMA_CURRENT, anything else
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (host && (types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (size == 0 || !Aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  if (host ? size > HostMemoryBytes() : size > st_->device(prop.location.id).free_bytes()) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  auto m = std::make_shared<Memory>();
  m->fd = memfd_create("fakecuda-vmm", MFD_CLOEXEC);
  struct stat sb {};
  if (m->fd < 0 || ftruncate(m->fd, static_cast<off_t>(size)) != 0 || fstat(m->fd, &sb) != 0) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  m->id = st_->NewId();
  m->size = size;
  m->host = host;
  m->device = host ? 0 : prop.location.id;
  m->st_dev = sb.st_dev;
  m->st_ino = sb.st_ino;
  // What cuMemGetAllocationPropertiesFromHandle answers (case "props"): host memory reads as
  // HOST_NUMA node 0, unknown handle-type bits and the usage are dropped.
  CUmemAllocationProp kept{};
  kept.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  kept.requestedHandleTypes =
      static_cast<CUmemAllocationHandleType>(types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  kept.location.type = host ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_DEVICE;
  kept.location.id = host ? 0 : prop.location.id;
  kept.allocFlags.compressionType = prop.allocFlags.compressionType;
  kept.allocFlags.gpuDirectRDMACapable = prop.allocFlags.gpuDirectRDMACapable;
  m->prop = kept;
  if (!host) st_->device(m->device).bytes_in_use += size;
  *out = AddHandle(kept, size, std::move(m), "cuMemCreate");
  return CUDA_SUCCESS;
}

CUresult VmmModel::Release(CUmemGenericAllocationHandle handle) {
  st_->mu.AssertHeld();
  Handle* h = FindHandle(handle);
  // A destroyed or bogus handle, or one more release than references (measured: a mapped
  // handle whose references are all released answers CUDA_ERROR_INVALID_VALUE).
  if (h == nullptr || h->refs == 0) return CUDA_ERROR_INVALID_VALUE;
  --h->refs;
  MaybeDestroy(h->id);
  return CUDA_SUCCESS;
}

CUresult VmmModel::Properties(CUmemGenericAllocationHandle handle,
                              CUmemAllocationProp* out) const {
  const Handle* h = FindHandle(handle);
  if (h == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = h->prop;
  return CUDA_SUCCESS;
}

std::size_t VmmModel::HandleSize(CUmemGenericAllocationHandle handle) const {
  const Handle* h = FindHandle(handle);
  return h == nullptr ? 0 : h->size;
}

bool VmmModel::EnsureRegion() {
  if (region_ != nullptr) return true;
  // 2 TiB of address space if the process has it (sanitizers' layouts may not), else less.
  for (std::size_t n = std::size_t{1} << 41; n >= (std::size_t{1} << 34); n >>= 1) {
    void* p = mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      region_ = static_cast<std::byte*>(p);
      region_size_ = n;
      return true;
    }
  }
  return false;
}

std::uintptr_t VmmModel::OverlapEnd(std::uintptr_t va, std::size_t size) const {
  auto it = reservations_.lower_bound(va);
  if (it != reservations_.begin() && std::prev(it)->first + std::prev(it)->second > va) {
    return std::prev(it)->first + std::prev(it)->second;
  }
  if (it != reservations_.end() && it->first < va + size) return it->first + it->second;
  auto m = mappings_.lower_bound(va);
  if (m != mappings_.begin() && std::prev(m)->first + std::prev(m)->second.size > va) {
    return std::prev(m)->first + std::prev(m)->second.size;
  }
  if (m != mappings_.end() && m->first < va + size) return m->first + m->second.size;
  return 0;
}

std::uintptr_t VmmModel::ReservationOf(std::uintptr_t ptr) const {
  auto it = reservations_.upper_bound(ptr);
  if (it == reservations_.begin()) return 0;
  --it;
  return ptr - it->first < it->second ? it->first : 0;
}

const VmmModel::Mapping* VmmModel::MappingAt(std::uintptr_t ptr) const {
  auto it = mappings_.upper_bound(ptr);
  if (it == mappings_.begin()) return nullptr;
  --it;
  return ptr - it->first < it->second.size ? &it->second : nullptr;
}

CUresult VmmModel::Reserve(std::size_t size, std::size_t alignment, CUdeviceptr hint,
                           unsigned long long flags, CUdeviceptr* out) {
  // Case "reserve": flags, sizes, alignments (0 or a power of two) and hints (granularity
  // aligned) are checked; too large is CUDA_ERROR_OUT_OF_MEMORY.
  if (flags != 0 || size == 0 || !Aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!Aligned(hint)) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t align = std::max(alignment, kGranularity);
  if (size > kMaxReservation || !EnsureRegion() || size > region_size_) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const std::uintptr_t end = kVaBase + region_size_;
  std::uintptr_t base = 0;
  // A free hint is honoured exactly (also inside freed reservations); an occupied one is not.
  if (hint >= kVaBase && hint % align == 0 && hint <= end - size && OverlapEnd(hint, size) == 0) {
    base = hint;
  } else {
    // First fit from the region's start: the H200 put a second reservation right after the
    // first, and a freed range is found again.
    std::uintptr_t c = AlignUp(kVaBase, align);
    for (;;) {
      if (c > end - size) return CUDA_ERROR_OUT_OF_MEMORY;
      const std::uintptr_t next = OverlapEnd(c, size);
      if (next == 0) break;
      c = AlignUp(next, align);
    }
    base = c;
  }
  reservations_.emplace(base, size);
  *out = base;
  return CUDA_SUCCESS;
}

CUresult VmmModel::Free(CUdeviceptr ptr, std::size_t size) {
  auto it = reservations_.find(ptr);
  // Only a whole live reservation, with nothing mapped in it (case "lifetime": freeing a mapped
  // reservation is CUDA_ERROR_INVALID_VALUE).
  if (it == reservations_.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
  for (const auto& [va, m] : mappings_) {
    if (m.reservation == ptr) return CUDA_ERROR_INVALID_VALUE;
  }
  reservations_.erase(it);
  return CUDA_SUCCESS;
}

CUresult VmmModel::Map(CUdeviceptr va, std::size_t size, std::size_t offset,
                       CUmemGenericAllocationHandle handle, unsigned long long flags) {
  st_->mu.AssertHeld();
  // Case "map": flags, size 0, an unknown handle, an unaligned or unreserved address are
  // CUDA_ERROR_INVALID_VALUE; anything but the whole handle at offset 0 is
  // CUDA_ERROR_NOT_SUPPORTED; a range that overlaps a mapping is CUDA_ERROR_INVALID_VALUE. Only
  // the start must lie in a reservation (the H200 mapped 2 granules from a reservation's last
  // granule on).
  if (flags != 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  Handle* h = FindHandle(handle);
  if (h == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (va == 0 || !Aligned(va)) return CUDA_ERROR_INVALID_VALUE;
  const std::uintptr_t res = ReservationOf(va);
  if (res == 0) return CUDA_ERROR_INVALID_VALUE;
  if (offset != 0 || size != h->size) return CUDA_ERROR_NOT_SUPPORTED;
  if (Wraps(va, size) || va + size > kVaBase + region_size_) return CUDA_ERROR_INVALID_VALUE;
  auto it = mappings_.lower_bound(va);
  if (it != mappings_.end() && it->first < va + size) return CUDA_ERROR_INVALID_VALUE;
  if (it != mappings_.begin() && std::prev(it)->first + std::prev(it)->second.size > va) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  void* p = mmap(HostOf(va), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, h->memory->fd,
                 0);
  if (p == MAP_FAILED) {
    ResetRange(HostOf(va), size);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  Mapping m;
  m.va = va;
  m.size = size;
  m.handle_id = h->id;
  m.reservation = res;
  m.buffer_id = st_->NewId();
  m.access = std::make_shared<VmmAccess>(st_->device_count());
  Allocation a;
  a.id = m.buffer_id;
  a.type = MemoryType::kVmm;
  a.base = va;
  a.size = size;
  a.data = HostOf(va);
  a.device = h->memory->device;
  a.created_by = "cuMemMap";
  st_->memory().Add(std::move(a));
  mappings_.emplace(va, std::move(m));
  ++h->mappings;
  return CUDA_SUCCESS;
}

CUresult VmmModel::Unmap(CUdeviceptr va, std::size_t size) {
  st_->mu.AssertHeld();
  // Case "map": the range must start in a reservation and may hold nothing mapped (success);
  // a mapping it covers only in part is CUDA_ERROR_INVALID_VALUE (no partial unmaps).
  if (size == 0 || !Aligned(va) || !Aligned(size) || Wraps(va, size)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (ReservationOf(va) == 0) return CUDA_ERROR_INVALID_VALUE;
  const std::uintptr_t end = va + size;
  std::vector<std::uintptr_t> gone;
  auto it = mappings_.lower_bound(va);
  if (it != mappings_.begin() && std::prev(it)->first + std::prev(it)->second.size > va) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (; it != mappings_.end() && it->first < end; ++it) {
    if (it->first + it->second.size > end) return CUDA_ERROR_INVALID_VALUE;
    gone.push_back(it->first);
  }
  for (std::uintptr_t base : gone) {
    auto m = mappings_.find(base);
    // Queued work that still uses it fails when it runs (invariant 2).
    m->second.access->mapped.store(false, std::memory_order_release);
    ResetRange(HostOf(base), m->second.size);
    if (st_->race() != nullptr) st_->race()->OnRelease(m->second.buffer_id);
    st_->memory().Forget(base);
    const std::uint64_t hid = m->second.handle_id;
    mappings_.erase(m);
    auto h = handles_.find(hid);
    if (h != handles_.end()) {
      --h->second.mappings;
      MaybeDestroy(hid);
    }
  }
  return CUDA_SUCCESS;
}

CUresult VmmModel::SetAccess(CUdeviceptr va, std::size_t size, const CUmemAccessDesc* desc,
                             std::size_t count) {
  st_->mu.AssertHeld();
  // Case "map": the range must be whole mappings, back to back; each descriptor names a valid
  // device (else CUDA_ERROR_INVALID_VALUE) or the host (CUDA_ERROR_NOT_SUPPORTED for device
  // memory) with valid flags; later descriptors win.
  if (size == 0 || !Aligned(va) || !Aligned(size) || Wraps(va, size)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::vector<Mapping*> covered;
  bool device_memory = false;
  for (std::uintptr_t c = va; c < va + size;) {
    auto it = mappings_.find(c);
    if (it == mappings_.end() || it->first + it->second.size > va + size) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto h = handles_.find(it->second.handle_id);
    if (h != handles_.end() && !h->second.memory->host) device_memory = true;
    covered.push_back(&it->second);
    c += it->second.size;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const CUmemAccessDesc& d = desc[i];
    if (!ValidAccessFlags(d.flags)) return CUDA_ERROR_INVALID_VALUE;
    switch (d.location.type) {
      case CU_MEM_LOCATION_TYPE_DEVICE:
        if (d.location.id < 0 || d.location.id >= st_->device_count()) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        break;
      case CU_MEM_LOCATION_TYPE_HOST:
      case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        if (device_memory) return CUDA_ERROR_NOT_SUPPORTED;
        break;
      default:
        return CUDA_ERROR_INVALID_VALUE;
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) continue;
    for (Mapping* m : covered) {
      m->access->flags[static_cast<std::size_t>(desc[i].location.id)].store(
          static_cast<unsigned>(desc[i].flags), std::memory_order_release);
    }
  }
  return CUDA_SUCCESS;
}

CUresult VmmModel::GetAccess(unsigned long long* flags, const CUmemLocation& location,
                             CUdeviceptr ptr) const {
  st_->mu.AssertHeld();
  const bool host = location.type == CU_MEM_LOCATION_TYPE_HOST ||
                    location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA;
  if (!host && (location.type != CU_MEM_LOCATION_TYPE_DEVICE || location.id < 0 ||
                location.id >= st_->device_count())) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  const Mapping* m = MappingAt(ptr);
  if (m == nullptr) {
    *flags = 0;  // measured: written 0 also when refused
    // cuMemAlloc memory answers "no access" (0), successfully; anything else is refused.
    const Allocation* a = st_->memory().Find(ptr, 1);
    return a != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
  // The host reads as read-write (measured for device memory, and for host memory after a
  // host descriptor).
  *flags = host ? static_cast<unsigned>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
                : m->access->flags[static_cast<std::size_t>(location.id)].load();
  return CUDA_SUCCESS;
}

CUresult VmmModel::Retain(CUmemGenericAllocationHandle* out, std::uintptr_t addr) {
  st_->mu.AssertHeld();
  const Mapping* m = MappingAt(addr);
  if (m == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto h = handles_.find(m->handle_id);
  if (h == handles_.end()) return CUDA_ERROR_INVALID_VALUE;
  ++h->second.refs;
  *out = HandleValue(h->first);
  return CUDA_SUCCESS;
}

CUresult VmmModel::Export(void* out, CUmemGenericAllocationHandle handle,
                          CUmemAllocationHandleType type, unsigned long long flags) const {
  const Handle* h = FindHandle(handle);
  if (h == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  // Case "export": every type but POSIX_FILE_DESCRIPTOR, and a handle not created with it, are
  // CUDA_ERROR_INVALID_VALUE.
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
      (h->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const int fd = fcntl(h->memory->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
  *static_cast<int*>(out) = fd;
  return CUDA_SUCCESS;
}

int VmmModel::MemoryDescriptor(std::uint64_t st_dev, std::uint64_t st_ino, std::size_t* size,
                               int* device) const {
  for (const auto& [id, h] : handles_) {
    const Memory& m = *h.memory;
    if (static_cast<std::uint64_t>(m.st_dev) != st_dev ||
        static_cast<std::uint64_t>(m.st_ino) != st_ino) {
      continue;
    }
    *size = m.size;
    *device = m.device;
    return m.fd;
  }
  return -1;
}

CUresult VmmModel::Import(CUmemGenericAllocationHandle* out, void* os_handle,
                          CUmemAllocationHandleType type) {
  st_->mu.AssertHeld();
  // UNMEASURED (the H200 dereferenced the descriptor as a fabric handle and crashed): a fabric
  // import answers like a fabric cuMemCreate, without reading *os_handle.
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) return CUDA_ERROR_NOT_PERMITTED;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  const auto fd = static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle));
  struct stat sb {};
  if (fd < 0 || fstat(fd, &sb) != 0) return CUDA_ERROR_INVALID_VALUE;
  for (const auto& [id, h] : handles_) {
    const Memory& m = *h.memory;
    if (m.st_dev != sb.st_dev || m.st_ino != sb.st_ino) continue;
    // Measured: an import is a new handle (another value) on the same memory; it reads with no
    // shareable handle types and charges nothing more.
    CUmemAllocationProp prop = m.prop;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    *out = AddHandle(prop, m.size, h.memory, "cuMemImportFromShareableHandle");
    return CUDA_SUCCESS;
  }
  // UNMEASURED: a descriptor of no live VMM memory.
  return CUDA_ERROR_INVALID_VALUE;
}

bool VmmModel::Resolve(std::uintptr_t ptr, std::size_t size, int device, unsigned need,
                       VmmSpan* out) const {
  if (Wraps(ptr, std::max<std::size_t>(size, 1))) return false;
  const std::uintptr_t end = ptr + std::max<std::size_t>(size, 1);
  out->guards.clear();
  for (std::uintptr_t c = ptr; c < end;) {
    const Mapping* m = MappingAt(c);
    if (m == nullptr || !m->access->Allows(device, need)) return false;
    out->guards.push_back(m->access);
    c = m->va + m->size;
  }
  out->data = HostOf(ptr);
  return true;
}

CUresult VmmModel::PointerAttribute(void* data, CUpointer_attribute attribute,
                                    std::uintptr_t ptr, int device) const {
  st_->mu.AssertHeld();
  const Mapping* m = MappingAt(ptr);
  if (m == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto hit = handles_.find(m->handle_id);
  if (hit == handles_.end()) return CUDA_ERROR_INVALID_VALUE;
  const Handle& h = hit->second;
  const bool accessible = m->access->Allows(device, CU_MEM_ACCESS_FLAGS_PROT_READ);
  // Case "map" (device memory with and without access) and "lifetime" (host memory).
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *static_cast<CUcontext*>(data) = nullptr;  // VMM memory belongs to no context
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned*>(data) = h.memory->host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      if (!accessible) return CUDA_ERROR_INVALID_VALUE;
      *static_cast<CUdeviceptr*>(data) = ptr;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      *static_cast<void**>(data) = nullptr;  // written NULL, then refused
      return CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      *static_cast<int*>(data) = 0;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
      *static_cast<unsigned long long*>(data) = m->buffer_id;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = h.memory->device;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:  // the reservation, not the mapping
      *static_cast<CUdeviceptr*>(data) = m->reservation;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: {
      auto r = reservations_.find(m->reservation);
      *static_cast<size_t*>(data) = r == reservations_.end() ? m->size : r->second;
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_MAPPED:
      *static_cast<int*>(data) = 1;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      *static_cast<unsigned long long*>(data) =
          static_cast<unsigned long long>(h.prop.requestedHandleTypes);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
      *static_cast<int*>(data) = h.prop.allocFlags.gpuDirectRDMACapable != 0 ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      *static_cast<int*>(data) = static_cast<int>(
          device >= 0 && device < st_->device_count()
              ? m->access->flags[static_cast<std::size_t>(device)].load()
              : 0U);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      *static_cast<CUmemoryPool*>(data) = nullptr;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      *static_cast<size_t*>(data) = m->size;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      *static_cast<CUdeviceptr*>(data) = m->va;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      *static_cast<unsigned long long*>(data) = h.memory->id;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult VmmModel::AddressRange(CUdeviceptr* base, std::size_t* size, std::uintptr_t ptr,
                                int device) const {
  const Mapping* m = MappingAt(ptr);
  if (m == nullptr || !m->access->Allows(device, CU_MEM_ACCESS_FLAGS_PROT_READ)) {
    return CUDA_ERROR_NOT_FOUND;  // measured: also for a mapping without access
  }
  auto h = handles_.find(m->handle_id);
  const bool host = h != handles_.end() && h->second.memory->host;
  // Host memory answers another base (measured: neither the mapping nor the pointer); the fake
  // gives its host view's address.
  if (base != nullptr) {
    *base = host ? static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(HostOf(m->va)))
                 : m->va;
  }
  if (size != nullptr) *size = m->size;
  return CUDA_SUCCESS;
}

void VmmModel::CountLive(Inventory* inv) const {
  inv->vmm_allocations += static_cast<int>(handles_.size());
  inv->vmm_reservations += static_cast<int>(reservations_.size());
}

std::string VmmModel::Describe() const {
  std::ostringstream os;
  for (const auto& [id, h] : handles_) {
    os << "VMM allocation " << id << " of " << h.size << " bytes (" << h.created_by << "), "
       << h.refs << " reference(s), " << h.mappings << " mapping(s)\n";
  }
  for (const auto& [base, size] : reservations_) {
    os << "VMM reservation 0x" << std::hex << base << std::dec << " of " << size
       << " bytes (cuMemAddressReserve)\n";
  }
  return os.str();
}

}  // namespace fakecuda
