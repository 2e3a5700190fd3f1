// Copyright 2026 The cuhal Authors.
// Entry points: CUDA arrays (cuArrayCreate, cuArray3DCreate, the descriptor getters,
// cuArrayDestroy, cuArrayGetPlane, cuArrayGetMemoryRequirements, cuArrayGetSparseProperties),
// the 1D copies to and from arrays (cuMemcpyHtoA/AtoH/DtoA/AtoD/AtoA, cuMemcpyHtoAAsync/AtoHAsync)
// and the pitched copies with any endpoints (cuMemcpy2D, cuMemcpy2DUnaligned, cuMemcpy2DAsync,
// cuMemcpy3D, cuMemcpy3DAsync). The arrays are fakecuda/internal/array_model.h's; the linear
// endpoints resolve as the linear copies' do (fakecuda/internal/copy_resolve.h).
//
// Stream ordering: every copy is stream work (on the legacy stream for the synchronous ones).
// As on the real driver, copies from pageable host memory are staged at the call, copies into
// pageable host memory make the call wait, and the synchronous copies wait for their work unless
// both sides are device memory (arrays count as device memory). The asynchronous copies on a
// capturing stream become memcpy nodes (as on the H100, measured 2026-12-06: array_probe
// "capture"), checked as they would run.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "fakecuda/entry/capture_hooks.h"
#include "fakecuda/entry/entry.h"
#include "fakecuda/internal/array_model.h"
#include "fakecuda/internal/copy_resolve.h"
#include "fakecuda/internal/engine_access.h"
#include "fakecuda/race/race_detector.h"

namespace fakecuda {
namespace {

// What a handle that names no live array gets. Measured 2026-12-06, H100 driver 580.159.04
// (array_probe "descriptor", "plane", "noctx", "noinit"): cuArrayGetDescriptor,
// cuArray3DGetDescriptor, cuArrayGetPlane and cuArrayDestroy answer CUDA_ERROR_INVALID_HANDLE
// for a null handle and CUDA_ERROR_INVALID_CONTEXT for a made-up one (the driver reads the
// context out of the object the handle points at), the getters even before cuInit. A destroyed
// handle crashed the real driver (SIGNAL 11) in every call tried; the fake answers it as a
// made-up one.
CUresult NoSuchArray(CUarray handle) {
  return handle == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_CONTEXT;
}
// The same handle given to a copy, cuArrayGetMemoryRequirements or cuArrayGetSparseProperties:
// CUDA_ERROR_INVALID_VALUE, null or made up (measured likewise, "copy1d", "copy2d", "async",
// "memreq"; the last two even before cuInit).
constexpr CUresult kNoSuchArrayInCopy = CUDA_ERROR_INVALID_VALUE;

// The driver keeps an array's dimensions in 32 bits: measured (array_probe "create"), a
// cuArrayCreate of Height 2^40 succeeds (as a 1D array) and one of Width 2^40 fails (Width 0).
CUDA_ARRAY3D_DESCRIPTOR Truncated(CUDA_ARRAY3D_DESCRIPTOR d) {
  d.Width = static_cast<std::uint32_t>(d.Width);
  d.Height = static_cast<std::uint32_t>(d.Height);
  d.Depth = static_cast<std::uint32_t>(d.Depth);
  return d;
}

CUDA_ARRAY3D_DESCRIPTOR From2D(const CUDA_ARRAY_DESCRIPTOR& d) {
  CUDA_ARRAY3D_DESCRIPTOR e;
  std::memset(&e, 0, sizeof e);
  e.Width = d.Width;
  e.Height = d.Height;
  e.Depth = 0;
  e.Format = d.Format;
  e.NumChannels = d.NumChannels;
  e.Flags = 0;
  return e;
}

CUresult CreateArray(DriverState* st, CUarray* out, const CUDA_ARRAY3D_DESCRIPTOR* desc,
                     const char* what) CUHAL_REQUIRES(st->mu) {
  // Measured (array_probe "noctx"): the context is checked before the arguments.
  FAKECUDA_REQUIRE_CONTEXT()
  if (out == nullptr || desc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_ARRAY3D_DESCRIPTOR d = Truncated(*desc);
  if (CUresult e = ArrayModel::Validate(st->profile(ctx->device), d); e != CUDA_SUCCESS) {
    return e;
  }
  return st->arrays().Create(ctx->id, ctx->device, d, what, out);
}

// A sparse array's properties: 64 KiB tiles of the standard shapes for its element size (2D:
// 256x256 texels of 1 byte ... 64x64 of 16; 3D: 64x32x32 ... 16x16x16). An array smaller than
// one tile in some dimension lies wholly in a single mip tail. Measured 2026-12-06, H100 driver
// 580.159.04 (array_probe "memreq") for a 2D 64x64 u8 array (tile 256x256x1, mip tail level 0
// of 65536 bytes, CU_ARRAY_SPARSE_PROPERTIES_SINGLE_MIPTAIL) and a 3D 64x64x64 float one (tile
// 32x32x16, no mip tail: level 0, size 0, flags 0); the other shapes follow the same rule.
void SparseProperties(const ArrayRecord& a, CUDA_ARRAY_SPARSE_PROPERTIES* out) {
  const SparseTile t = ArrayModel::TileOf(a.desc, a.element_size);
  const bool three_d = a.desc.Depth != 0 && (a.desc.Flags & CUDA_ARRAY3D_LAYERED) == 0;
  std::memset(out, 0, sizeof *out);
  out->tileExtent.width = t.w;
  out->tileExtent.height = t.h;
  out->tileExtent.depth = t.d;
  const bool small = a.desc.Width < t.w || std::max<std::size_t>(a.desc.Height, 1) < t.h ||
                     (three_d && a.desc.Depth < t.d);
  if (small) {
    out->miptailSize = ArrayModel::MemoryRequirement(a.desc, a.element_size);
    out->flags = CU_ARRAY_SPARSE_PROPERTIES_SINGLE_MIPTAIL;
  }
}

// One side of a copy: where byte (x, y, z) of the copied box is, and how rows and layers step.
struct Side {
  std::byte* origin = nullptr;
  std::size_t pitch = 0;  // bytes from one row to the next
  std::size_t slice = 0;  // bytes from one layer to the next
  bool array = false;
  Resolved linear;                          // a linear side: the resolution of its extent
  std::shared_ptr<ArrayBacking> keep;       // an array side: its bytes (array_model.h inv. 2)
  bool pageable() const { return !array && IsPageable(linear); }
  bool device_side() const { return array || DeviceSide(linear); }
};

// x + n <= limit, without overflow.
bool Fits(std::size_t x, std::size_t n, std::size_t limit) { return x <= limit && n <= limit - x; }

// An array side: the box (x bytes, y, z) + (w bytes, h, d) must lie inside the array. Measured
// (array_probe "copy2d", "copy3d"): it need not be whole elements (x 2 and width 62 bytes on a
// 4-byte format are copied).
CUresult ArraySide(DriverState* st, CUarray handle, std::size_t x, std::size_t y, std::size_t z,
                   std::size_t w, std::size_t h, std::size_t d, Side* out)
    CUHAL_REQUIRES(st->mu) {
  ArrayRecord* a = st->arrays().Find(handle);
  if (a == nullptr) return kNoSuchArrayInCopy;
  if (!Fits(x, w, a->row_bytes) || !Fits(y, h, a->rows) || !Fits(z, d, a->layers)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  out->array = true;
  out->pitch = a->row_bytes;
  out->slice = a->row_bytes * a->rows;
  out->origin = a->backing->data() + z * out->slice + y * out->pitch + x;
  out->keep = a->backing;
  return CUDA_SUCCESS;
}

// A 1D copy's array side: `n` bytes at byte offset `offset` of the array's first row. Measured
// (array_probe "copy1d", "copy2d", "copy3d"): on a 2D or 3D array the 1D copies reach the first
// row only (64 bytes of a 64x16 u8 array copy, 1024 bytes or offset 32 + 64 bytes fail).
CUresult ArrayBytes(DriverState* st, CUarray handle, std::size_t offset, std::size_t n,
                    Side* out) CUHAL_REQUIRES(st->mu) {
  ArrayRecord* a = st->arrays().Find(handle);
  if (a == nullptr) return kNoSuchArrayInCopy;
  if (!Fits(offset, n, a->row_bytes)) return CUDA_ERROR_INVALID_VALUE;
  out->array = true;
  out->pitch = n;
  out->slice = n;
  out->origin = a->backing->data() + offset;
  out->keep = a->backing;
  return CUDA_SUCCESS;
}

// A linear side of type `type` at `base`: rows of `pitch` bytes, layers of `height` rows.
CUresult LinearSide(DriverState* st, CUmemorytype type, const void* host, CUdeviceptr device,
                    std::size_t x, std::size_t y, std::size_t z, std::size_t pitch,
                    std::size_t height, std::size_t w, std::size_t h, std::size_t d,
                    unsigned need, Side* out) CUHAL_REQUIRES(st->mu) {
  // cuda.h: "If specified, srcPitch must be greater than or equal to WidthInBytes + srcXInBytes"
  // and "srcHeight must be greater than or equal to Height + srcY"; a pitch (height) is needed
  // as soon as there is more than one row (layer).
  if (pitch != 0 ? !Fits(x, w, pitch) : (h > 1 || d > 1)) return CUDA_ERROR_INVALID_VALUE;
  if (height != 0 ? !Fits(y, h, height) : d > 1) return CUDA_ERROR_INVALID_VALUE;
  // Byte offsets of the box's first byte and its extent, overflow-checked.
  std::size_t slice = 0, start = 0, span = 0, t = 0;
  if (__builtin_mul_overflow(pitch, height, &slice)) return CUDA_ERROR_INVALID_VALUE;
  if (__builtin_mul_overflow(z, slice, &start) || __builtin_mul_overflow(y, pitch, &t) ||
      __builtin_add_overflow(start, t, &start) || __builtin_add_overflow(start, x, &start)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (__builtin_mul_overflow(d - 1, slice, &span) ||
      __builtin_mul_overflow(h - 1, pitch, &t) || __builtin_add_overflow(span, t, &span) ||
      __builtin_add_overflow(span, w, &span)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Resolved r;
  CUresult e = CUDA_ERROR_INVALID_VALUE;
  switch (type) {
    case CU_MEMORYTYPE_HOST: {
      if (host == nullptr) return CUDA_ERROR_INVALID_VALUE;
      const auto p = reinterpret_cast<std::uintptr_t>(host);
      if (p + start < p) return CUDA_ERROR_INVALID_VALUE;
      e = ResolveHost(st, reinterpret_cast<const void*>(p + start), span, &r);
      break;
    }
    case CU_MEMORYTYPE_DEVICE:
      if (device + start < device) return CUDA_ERROR_INVALID_VALUE;
      e = ResolveDevice(st, device + start, span, &r, need);
      break;
    case CU_MEMORYTYPE_UNIFIED:
      if (device == 0 || device + start < device) return CUDA_ERROR_INVALID_VALUE;
      e = ResolveAny(st, device + start, span, &r, need);
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (e != CUDA_SUCCESS) return e;
  out->array = false;
  out->linear = r;
  out->origin = r.data;
  out->pitch = pitch;
  out->slice = slice;
  return CUDA_SUCCESS;
}

// The device address of a linear side's first byte (race detector), or 0 for pageable memory.
std::uintptr_t RaceAddress(const Side& s) {
  if (s.array || s.linear.allocation == nullptr) return 0;
  const Allocation* a = s.linear.allocation;
  return a->base + static_cast<std::uintptr_t>(s.linear.data - a->data);
}

// Queues the copy of a w x h x d box from `src` to `dst` on `s`.
CUresult EnqueueBox(DriverState* st, Stream* s, Side dst, Side src, std::size_t w, std::size_t h,
                    std::size_t d, bool synchronous, const char* what) CUHAL_REQUIRES(st->mu) {
  if (w == 0 || h == 0 || d == 0) return CUDA_SUCCESS;
  Op op;
  op.what = what;
  const std::size_t total = w * h * d;
  op.cost_us = DriverState::CopyCostUs(total, dst.device_side() && src.device_side());
  // A pageable source is read now (the real driver stages it before returning).
  std::shared_ptr<std::vector<std::byte>> staged;
  if (src.pageable()) {
    staged = std::make_shared<std::vector<std::byte>>(total);
    for (std::size_t z = 0; z < d; ++z) {
      for (std::size_t y = 0; y < h; ++y) {
        std::memcpy(staged->data() + (z * h + y) * w, src.origin + z * src.slice + y * src.pitch,
                    w);
      }
    }
    src.origin = staged->data();
    src.pitch = w;
    src.slice = w * h;
  }
  if (st->race() != nullptr) {
    for (const auto& [side, write] : {std::pair{&dst, true}, std::pair{&src, false}}) {
      const std::uintptr_t at = side == &src && staged != nullptr ? 0 : RaceAddress(*side);
      if (at == 0) continue;
      op.accesses.push_back({at, (d - 1) * side->slice + (h - 1) * side->pitch + w, write});
    }
  }
  auto dst_side = std::make_shared<Side>(std::move(dst));
  auto src_side = std::make_shared<Side>(std::move(src));
  op.body = [dst_side, src_side, staged, w, h, d] {
    for (const Side* side : {dst_side.get(), src_side.get()}) {
      if (!side->array && !StillAccessible(side->linear)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    const Side& to = *dst_side;
    const Side& from = *src_side;
    for (std::size_t z = 0; z < d; ++z) {
      for (std::size_t y = 0; y < h; ++y) {
        EngineMove(to.origin + z * to.slice + y * to.pitch,
                   from.origin + z * from.slice + y * from.pitch, w);
      }
    }
    return CUDA_SUCCESS;
  };
  const bool wait = synchronous || dst_side->pageable();
  // Enqueue may run the op and reap a destroyed stream: read nothing of `s` after it.
  const std::uint64_t id = s->id;
  const std::uint64_t seq = st->Enqueue(s, std::move(op));
  if (wait) {
    if (Stream* cur = st->FindStream(id)) return TakeRaceVerdict(st->SyncStream(cur, seq));
  }
  return TakeRaceVerdict();
}

// The stream of a copy (the legacy stream for a synchronous one). An asynchronous copy on a
// capturing stream is captured as a memcpy node of `capture` instead (*captured set, the
// result in the return value).
CUresult CopyStream(DriverState* st, CUstream handle, bool async, const CUDA_MEMCPY3D& capture,
                    bool* captured, Stream** out) CUHAL_REQUIRES(st->mu) {
  *captured = false;
  if (async) {
    if (CUresult r = CUDA_SUCCESS; CaptureCopy3D(st, handle, capture, &r)) {
      *captured = true;
      return r;
    }
  }
  CUresult e = CUDA_SUCCESS;
  Stream* s = st->ResolveStream(async ? handle : CU_STREAM_LEGACY, &e);
  if (s == nullptr) return e;
  *out = s;
  return CUDA_SUCCESS;
}

// One side of a CUDA_MEMCPY3D (2D copies are converted: z 0, depth 1).
struct SideSpec {
  CUmemorytype type;
  const void* host;
  CUdeviceptr device;
  CUarray array;
  std::size_t x, y, z, pitch, height;
};

// The CUDA_MEMCPY3D of a copy between two sides (the memcpy node a captured copy becomes).
CUDA_MEMCPY3D Describe(const SideSpec& dst, const SideSpec& src, std::size_t w, std::size_t h,
                       std::size_t d) {
  CUDA_MEMCPY3D c;
  std::memset(&c, 0, sizeof c);
  c.srcMemoryType = src.type;
  c.srcHost = src.host;
  c.srcDevice = src.device;
  c.srcArray = src.array;
  c.srcXInBytes = src.x;
  c.srcY = src.y;
  c.srcZ = src.z;
  c.srcPitch = src.pitch;
  c.srcHeight = src.height;
  c.dstMemoryType = dst.type;
  c.dstHost = const_cast<void*>(dst.host);
  c.dstDevice = dst.device;
  c.dstArray = dst.array;
  c.dstXInBytes = dst.x;
  c.dstY = dst.y;
  c.dstZ = dst.z;
  c.dstPitch = dst.pitch;
  c.dstHeight = dst.height;
  c.WidthInBytes = w;
  c.Height = h;
  c.Depth = d;
  return c;
}

CUresult ResolveSpec(DriverState* st, const SideSpec& sp, std::size_t w, std::size_t h,
                     std::size_t d, unsigned need, Side* out) CUHAL_REQUIRES(st->mu) {
  if (sp.type == CU_MEMORYTYPE_ARRAY) return ArraySide(st, sp.array, sp.x, sp.y, sp.z, w, h, d, out);
  return LinearSide(st, sp.type, sp.host, sp.device, sp.x, sp.y, sp.z, sp.pitch, sp.height, w, h,
                    d, need, out);
}

// cuMemcpy2D*, cuMemcpy3D*: validates and queues a copy described by two sides.
CUresult CopyBox(DriverState* st, Context* ctx, const SideSpec& dst, const SideSpec& src,
                 std::size_t w, std::size_t h, std::size_t d, bool check_pitch, bool async,
                 CUstream stream, const char* what) CUHAL_REQUIRES(st->mu) {
  if (check_pitch && (h > 1 || d > 1)) {  // measured: one row's pitch is not checked
    const auto max_pitch = static_cast<std::size_t>(
        std::max(st->profile(ctx->device).Attribute(CU_DEVICE_ATTRIBUTE_MAX_PITCH), 0));
    for (const SideSpec* sp : {&dst, &src}) {
      if (sp->type != CU_MEMORYTYPE_ARRAY && sp->pitch > max_pitch) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
  }
  if (w == 0 || h == 0 || d == 0) return CUDA_SUCCESS;
  Side to, from;
  if (CUresult e = ResolveSpec(st, dst, w, h, d, kWrite, &to); e != CUDA_SUCCESS) return e;
  if (CUresult e = ResolveSpec(st, src, w, h, d, kRead, &from); e != CUDA_SUCCESS) return e;
  Stream* s = nullptr;
  bool captured = false;
  const CUresult e = CopyStream(st, stream, async, Describe(dst, src, w, h, d), &captured, &s);
  if (captured || e != CUDA_SUCCESS) return e;
  const bool synchronous = !async && !(to.device_side() && from.device_side());
  return EnqueueBox(st, s, std::move(to), std::move(from), w, h, d, synchronous, what);
}

// A 2D copy is one layer: its sides have no layer height.
SideSpec SrcOf(const CUDA_MEMCPY2D& c) {
  return {c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, c.srcXInBytes, c.srcY, 0,
          c.srcPitch, 0};
}
SideSpec DstOf(const CUDA_MEMCPY2D& c) {
  return {c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, c.dstXInBytes, c.dstY, 0,
          c.dstPitch, 0};
}
SideSpec SrcOf(const CUDA_MEMCPY3D& c) {
  return {c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, c.srcXInBytes, c.srcY, c.srcZ,
          c.srcPitch, c.srcHeight};
}
SideSpec DstOf(const CUDA_MEMCPY3D& c) {
  return {c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, c.dstXInBytes, c.dstY, c.dstZ,
          c.dstPitch, c.dstHeight};
}

CUresult Copy2D(DriverState* st, const CUDA_MEMCPY2D* c, bool check_pitch, bool async,
                CUstream stream, const char* what) CUHAL_REQUIRES(st->mu) {
  // Measured (array_probe "noctx"): the context is checked before the structure.
  FAKECUDA_REQUIRE_CONTEXT()
  if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return CopyBox(st, ctx, DstOf(*c), SrcOf(*c), c->WidthInBytes, c->Height, 1, check_pitch, async,
                 stream, what);
}

CUresult Copy3D(DriverState* st, const CUDA_MEMCPY3D* c, bool async, CUstream stream,
                const char* what) CUHAL_REQUIRES(st->mu) {
  FAKECUDA_REQUIRE_CONTEXT()
  if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Measured (array_probe "copy3d"): a nonzero srcLOD is refused; dstLOD, reserved0 and
  // reserved1 are ignored.
  if (c->srcLOD != 0) return CUDA_ERROR_INVALID_VALUE;
  // cuda.h: "cuMemcpy3D() returns an error if any pitch is greater than the maximum allowed".
  return CopyBox(st, ctx, DstOf(*c), SrcOf(*c), c->WidthInBytes, c->Height, c->Depth, true, async,
                 stream, what);
}

// cuMemcpy3DPeer[Async]: a 3D copy whose sides name their contexts. UNMEASURED (cuda.h): a
// context that is not live is CUDA_ERROR_INVALID_CONTEXT, as for cuMemcpyPeer (measured there);
// a NULL one is taken as the current context. The copy then runs as cuMemcpy3D's (unified
// addressing: each side's memory is found by its address, whatever context made it).
CUresult Copy3DPeer(DriverState* st, const CUDA_MEMCPY3D_PEER* p, bool async, CUstream stream,
                    const char* what) CUHAL_REQUIRES(st->mu) {
  FAKECUDA_REQUIRE_CONTEXT()
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (CUcontext c : {p->srcContext, p->dstContext}) {
    if (c != nullptr && st->FindContext(c) == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  }
  CUDA_MEMCPY3D c{};
  c.srcXInBytes = p->srcXInBytes;
  c.srcY = p->srcY;
  c.srcZ = p->srcZ;
  c.srcLOD = p->srcLOD;
  c.srcMemoryType = p->srcMemoryType;
  c.srcHost = p->srcHost;
  c.srcDevice = p->srcDevice;
  c.srcArray = p->srcArray;
  c.srcPitch = p->srcPitch;
  c.srcHeight = p->srcHeight;
  c.dstXInBytes = p->dstXInBytes;
  c.dstY = p->dstY;
  c.dstZ = p->dstZ;
  c.dstLOD = p->dstLOD;
  c.dstMemoryType = p->dstMemoryType;
  c.dstHost = p->dstHost;
  c.dstDevice = p->dstDevice;
  c.dstArray = p->dstArray;
  c.dstPitch = p->dstPitch;
  c.dstHeight = p->dstHeight;
  c.WidthInBytes = p->WidthInBytes;
  c.Height = p->Height;
  c.Depth = p->Depth;
  return Copy3D(st, &c, async, stream, what);
}

// The 1D copies: `n` bytes between two sides resolved by the caller; `capture` describes the
// copy for a capturing stream (asynchronous copies).
CUresult Copy1D(DriverState* st, Side to, Side from, std::size_t n, bool synchronous,
                bool async, CUstream stream, const CUDA_MEMCPY3D& capture, const char* what)
    CUHAL_REQUIRES(st->mu) {
  Stream* s = nullptr;
  bool captured = false;
  const CUresult e = CopyStream(st, stream, async, capture, &captured, &s);
  if (captured || e != CUDA_SUCCESS) return e;
  to.pitch = to.slice = from.pitch = from.slice = n;
  return EnqueueBox(st, s, std::move(to), std::move(from), n, 1, 1, synchronous, what);
}

// The CUDA_MEMCPY3D of a 1D copy of `n` bytes: array sides at byte `x` of their first row.
CUDA_MEMCPY3D Describe1D(CUmemorytype dst_type, void* dst_host, CUdeviceptr dst_device,
                         CUarray dst_array, std::size_t dst_x, CUmemorytype src_type,
                         const void* src_host, CUdeviceptr src_device, CUarray src_array,
                         std::size_t src_x, std::size_t n) {
  return Describe({dst_type, dst_host, dst_device, dst_array, dst_x, 0, 0, 0, 0},
                  {src_type, src_host, src_device, src_array, src_x, 0, 0, 0, 0}, n, 1, 1);
}

CUresult HostSide(DriverState* st, const void* host, std::size_t n, Side* out)
    CUHAL_REQUIRES(st->mu) {
  if (CUresult e = ResolveHost(st, host, n, &out->linear); e != CUDA_SUCCESS) return e;
  out->origin = out->linear.data;
  return CUDA_SUCCESS;
}

CUresult DeviceSideOf(DriverState* st, CUdeviceptr p, std::size_t n, unsigned need, Side* out)
    CUHAL_REQUIRES(st->mu) {
  if (CUresult e = ResolveDevice(st, p, n, &out->linear, need); e != CUDA_SUCCESS) return e;
  out->origin = out->linear.data;
  return CUDA_SUCCESS;
}

}  // namespace

CUresult Copy3DAsync(DriverState* st, const CUDA_MEMCPY3D& c, CUstream stream, const char* what) {
  return Copy3D(st, &c, true, stream, what);
}

}  // namespace fakecuda

using fakecuda::ArrayModel;
using fakecuda::ArrayRecord;
using fakecuda::Side;

extern "C" {

// --- arrays ---

CUresult CUDAAPI cuArrayCreate(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* pAllocateArray) try {
  FAKECUDA_ENTER(cuArrayCreate)
  if (pAllocateArray == nullptr) return fakecuda::CreateArray(st, pHandle, nullptr, "cuArrayCreate");
  const CUDA_ARRAY3D_DESCRIPTOR d = fakecuda::From2D(*pAllocateArray);
  return fakecuda::CreateArray(st, pHandle, &d, "cuArrayCreate");
} catch (...) {
  return ::fakecuda::EntryFailed("cuArrayCreate");
}

CUresult CUDAAPI cuArray3DCreate(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pAllocateArray) try {
  FAKECUDA_ENTER(cuArray3DCreate)
  return fakecuda::CreateArray(st, pHandle, pAllocateArray, "cuArray3DCreate");
} catch (...) {
  return ::fakecuda::EntryFailed("cuArray3DCreate");
}

// The getters below answer before cuInit too (measured, array_probe "noinit"): they take the lock
// without the init check (no array exists before cuInit).
CUresult CUDAAPI cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR* pArrayDescriptor, CUarray hArray) try {
  FAKECUDA_ENTER_NOLOCK(cuArrayGetDescriptor)
  cuhal::MutexLock lock(st->mu);
  if (pArrayDescriptor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ArrayRecord* a = st->arrays().Find(hArray);
  if (a == nullptr) return fakecuda::NoSuchArray(hArray);
  pArrayDescriptor->Width = a->desc.Width;
  pArrayDescriptor->Height = a->desc.Height;
  pArrayDescriptor->Format = a->desc.Format;
  pArrayDescriptor->NumChannels = a->desc.NumChannels;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuArrayGetDescriptor");
}

CUresult CUDAAPI cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR* pArrayDescriptor,
                                        CUarray hArray) try {
  FAKECUDA_ENTER_NOLOCK(cuArray3DGetDescriptor)
  cuhal::MutexLock lock(st->mu);
  if (pArrayDescriptor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ArrayRecord* a = st->arrays().Find(hArray);
  if (a == nullptr) return fakecuda::NoSuchArray(hArray);
  *pArrayDescriptor = a->desc;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuArray3DGetDescriptor");
}

CUresult CUDAAPI cuArrayDestroy(CUarray hArray) try {
  FAKECUDA_ENTER(cuArrayDestroy)
  const ArrayRecord* a = st->arrays().Find(hArray);
  if (a == nullptr) return fakecuda::NoSuchArray(hArray);
  const std::uint64_t id = a->id;
  // As cuMemFree: the device stops using the memory first.
  if (CUresult e = st->SyncAll(a->ctx_id); e != CUDA_SUCCESS) return e;
  // SyncAll released the lock: another thread may have destroyed it meanwhile.
  if (st->arrays().Find(hArray) == nullptr) return fakecuda::NoSuchArray(hArray);
  st->arrays().Destroy(id);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuArrayDestroy");
}

CUresult CUDAAPI cuArrayGetPlane(CUarray* pPlaneArray, CUarray hArray, unsigned int planeIdx) try {
  FAKECUDA_ENTER_NOLOCK(cuArrayGetPlane)
  cuhal::MutexLock lock(st->mu);
  (void)planeIdx;
  if (pPlaneArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (st->arrays().Find(hArray) == nullptr) return fakecuda::NoSuchArray(hArray);
  // No modelled format is planar (NV12 and the other YUV formats are refused at creation).
  return CUDA_ERROR_INVALID_VALUE;
} catch (...) {
  return ::fakecuda::EntryFailed("cuArrayGetPlane");
}

CUresult CUDAAPI cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* memoryRequirements,
                                              CUarray array, CUdevice device) try {
  FAKECUDA_ENTER_NOLOCK(cuArrayGetMemoryRequirements)
  cuhal::MutexLock lock(st->mu);
  // Measured (array_probe "memreq", "noinit"): every failure is CUDA_ERROR_INVALID_VALUE, an
  // invalid device ordinal too, and the call answers before cuInit.
  if (memoryRequirements == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ArrayRecord* a = st->arrays().Find(array);
  if (a == nullptr) return fakecuda::kNoSuchArrayInCopy;
  if (!fakecuda::ValidDevice(st, device)) return CUDA_ERROR_INVALID_VALUE;
  if ((a->desc.Flags & CUDA_ARRAY3D_DEFERRED_MAPPING) == 0) return CUDA_ERROR_INVALID_VALUE;
  // Measured (legacy_probe "mipmap:memreq"): a level of a deferred-mapping mipmapped array is
  // CUDA_ERROR_INVALID_VALUE (cuMipmappedArrayGetMemoryRequirements answers for the whole).
  if (a->mipmap_id != 0) return CUDA_ERROR_INVALID_VALUE;
  std::memset(memoryRequirements, 0, sizeof *memoryRequirements);
  memoryRequirements->size = ArrayModel::MemoryRequirement(a->desc, a->element_size);
  memoryRequirements->alignment = ArrayModel::kAlignment;
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuArrayGetMemoryRequirements");
}

CUresult CUDAAPI cuArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES* sparseProperties,
                                            CUarray array) try {
  FAKECUDA_ENTER_NOLOCK(cuArrayGetSparseProperties)
  cuhal::MutexLock lock(st->mu);
  if (sparseProperties == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ArrayRecord* a = st->arrays().Find(array);
  if (a == nullptr) return fakecuda::kNoSuchArrayInCopy;
  // Only sparse arrays have sparse properties.
  if ((a->desc.Flags & CUDA_ARRAY3D_SPARSE) == 0) return CUDA_ERROR_INVALID_VALUE;
  fakecuda::SparseProperties(*a, sparseProperties);
  return CUDA_SUCCESS;
} catch (...) {
  return ::fakecuda::EntryFailed("cuArrayGetSparseProperties");
}

// --- 1D copies ---

CUresult CUDAAPI cuMemcpyHtoA(CUarray dstArray, size_t dstOffset, const void* srcHost,
                              size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpyHtoA)
  FAKECUDA_REQUIRE_CONTEXT()
  Side d, s;
  if (CUresult e = fakecuda::ArrayBytes(st, dstArray, dstOffset, ByteCount, &d); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::HostSide(st, srcHost, ByteCount, &s); e != CUDA_SUCCESS) return e;
  return fakecuda::Copy1D(st, d, s, ByteCount, true, false, nullptr,
                            fakecuda::Describe1D(CU_MEMORYTYPE_ARRAY, nullptr, 0, dstArray, dstOffset, CU_MEMORYTYPE_HOST, srcHost, 0, nullptr, 0, ByteCount), "cuMemcpyHtoA");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyHtoA");
}

CUresult CUDAAPI cuMemcpyAtoH(void* dstHost, CUarray srcArray, size_t srcOffset,
                              size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpyAtoH)
  FAKECUDA_REQUIRE_CONTEXT()
  Side d, s;
  if (CUresult e = fakecuda::HostSide(st, dstHost, ByteCount, &d); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ArrayBytes(st, srcArray, srcOffset, ByteCount, &s); e != CUDA_SUCCESS) return e;
  return fakecuda::Copy1D(st, d, s, ByteCount, true, false, nullptr,
                            fakecuda::Describe1D(CU_MEMORYTYPE_HOST, dstHost, 0, nullptr, 0, CU_MEMORYTYPE_ARRAY, nullptr, 0, srcArray, srcOffset, ByteCount), "cuMemcpyAtoH");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyAtoH");
}

CUresult CUDAAPI cuMemcpyDtoA(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
                              size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpyDtoA)
  FAKECUDA_REQUIRE_CONTEXT()
  Side d, s;
  if (CUresult e = fakecuda::ArrayBytes(st, dstArray, dstOffset, ByteCount, &d); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::DeviceSideOf(st, srcDevice, ByteCount, fakecuda::kRead, &s); e != CUDA_SUCCESS) return e;
  return fakecuda::Copy1D(st, d, s, ByteCount, false, false, nullptr,
                            fakecuda::Describe1D(CU_MEMORYTYPE_ARRAY, nullptr, 0, dstArray, dstOffset, CU_MEMORYTYPE_DEVICE, nullptr, srcDevice, nullptr, 0, ByteCount), "cuMemcpyDtoA");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyDtoA");
}

CUresult CUDAAPI cuMemcpyAtoD(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
                              size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpyAtoD)
  FAKECUDA_REQUIRE_CONTEXT()
  Side d, s;
  if (CUresult e = fakecuda::DeviceSideOf(st, dstDevice, ByteCount, fakecuda::kWrite, &d); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ArrayBytes(st, srcArray, srcOffset, ByteCount, &s); e != CUDA_SUCCESS) return e;
  return fakecuda::Copy1D(st, d, s, ByteCount, false, false, nullptr,
                            fakecuda::Describe1D(CU_MEMORYTYPE_DEVICE, nullptr, dstDevice, nullptr, 0, CU_MEMORYTYPE_ARRAY, nullptr, 0, srcArray, srcOffset, ByteCount), "cuMemcpyAtoD");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyAtoD");
}

CUresult CUDAAPI cuMemcpyAtoA(CUarray dstArray, size_t dstOffset, CUarray srcArray,
                              size_t srcOffset, size_t ByteCount) try {
  FAKECUDA_ENTER(cuMemcpyAtoA)
  FAKECUDA_REQUIRE_CONTEXT()
  Side d, s;
  if (CUresult e = fakecuda::ArrayBytes(st, dstArray, dstOffset, ByteCount, &d); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ArrayBytes(st, srcArray, srcOffset, ByteCount, &s); e != CUDA_SUCCESS) return e;
  return fakecuda::Copy1D(st, d, s, ByteCount, false, false, nullptr,
                            fakecuda::Describe1D(CU_MEMORYTYPE_ARRAY, nullptr, 0, dstArray, dstOffset, CU_MEMORYTYPE_ARRAY, nullptr, 0, srcArray, srcOffset, ByteCount), "cuMemcpyAtoA");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyAtoA");
}

CUresult CUDAAPI cuMemcpyHtoAAsync(CUarray dstArray, size_t dstOffset, const void* srcHost,
                                   size_t ByteCount, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpyHtoAAsync)
  FAKECUDA_REQUIRE_CONTEXT()
  Side d, s;
  if (CUresult e = fakecuda::ArrayBytes(st, dstArray, dstOffset, ByteCount, &d); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::HostSide(st, srcHost, ByteCount, &s); e != CUDA_SUCCESS) return e;
  return fakecuda::Copy1D(st, d, s, ByteCount, false, true, hStream,
                            fakecuda::Describe1D(CU_MEMORYTYPE_ARRAY, nullptr, 0, dstArray, dstOffset, CU_MEMORYTYPE_HOST, srcHost, 0, nullptr, 0, ByteCount), "cuMemcpyHtoAAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyHtoAAsync");
}

CUresult CUDAAPI cuMemcpyAtoHAsync(void* dstHost, CUarray srcArray, size_t srcOffset,
                                   size_t ByteCount, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpyAtoHAsync)
  FAKECUDA_REQUIRE_CONTEXT()
  Side d, s;
  if (CUresult e = fakecuda::HostSide(st, dstHost, ByteCount, &d); e != CUDA_SUCCESS) return e;
  if (CUresult e = fakecuda::ArrayBytes(st, srcArray, srcOffset, ByteCount, &s); e != CUDA_SUCCESS) return e;
  return fakecuda::Copy1D(st, d, s, ByteCount, false, true, hStream,
                            fakecuda::Describe1D(CU_MEMORYTYPE_HOST, dstHost, 0, nullptr, 0, CU_MEMORYTYPE_ARRAY, nullptr, 0, srcArray, srcOffset, ByteCount), "cuMemcpyAtoHAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpyAtoHAsync");
}

// --- pitched copies ---

CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D* pCopy) try {
  FAKECUDA_ENTER(cuMemcpy2D)
  return fakecuda::Copy2D(st, pCopy, true, false, nullptr, "cuMemcpy2D");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpy2D");
}

CUresult CUDAAPI cuMemcpy2DUnaligned(const CUDA_MEMCPY2D* pCopy) try {
  FAKECUDA_ENTER(cuMemcpy2DUnaligned)
  return fakecuda::Copy2D(st, pCopy, false, false, nullptr, "cuMemcpy2DUnaligned");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpy2DUnaligned");
}

CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D* pCopy, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpy2DAsync)
  return fakecuda::Copy2D(st, pCopy, true, true, hStream, "cuMemcpy2DAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpy2DAsync");
}

CUresult CUDAAPI cuMemcpy3D(const CUDA_MEMCPY3D* pCopy) try {
  FAKECUDA_ENTER(cuMemcpy3D)
  return fakecuda::Copy3D(st, pCopy, false, nullptr, "cuMemcpy3D");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpy3D");
}

CUresult CUDAAPI cuMemcpy3DAsync(const CUDA_MEMCPY3D* pCopy, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpy3DAsync)
  return fakecuda::Copy3D(st, pCopy, true, hStream, "cuMemcpy3DAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpy3DAsync");
}

CUresult CUDAAPI cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER* pCopy) try {
  FAKECUDA_ENTER(cuMemcpy3DPeer)
  return fakecuda::Copy3DPeer(st, pCopy, false, nullptr, "cuMemcpy3DPeer");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpy3DPeer");
}

CUresult CUDAAPI cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER* pCopy, CUstream hStream) try {
  FAKECUDA_ENTER(cuMemcpy3DPeerAsync)
  return fakecuda::Copy3DPeer(st, pCopy, true, hStream, "cuMemcpy3DPeerAsync");
} catch (...) {
  return ::fakecuda::EntryFailed("cuMemcpy3DPeerAsync");
}

}  // extern "C"
