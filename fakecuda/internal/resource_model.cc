// Copyright 2026 The cuhal Authors.
#include "fakecuda/internal/resource_model.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <vector>

#include "fakecuda/internal/coredump_model.h"

namespace fakecuda {
namespace {

// The tag in CUdevResource::_internal_padding (invariant 1).
struct Wire {
  char magic[4];
  std::uint32_t kind;
  std::int32_t device;
  std::uint32_t sm_count;
  std::uint64_t split;
  std::uint64_t driver_serial;
  std::uint64_t check;
};
static_assert(sizeof(Wire) <= sizeof(CUdevResource::_internal_padding),
              "the tag fits the padding");

constexpr char kMagic[4] = {'f', 'k', 'r', 's'};

std::uint64_t Check(const Wire& w) {
  std::uint64_t h = 0x2545f4914f6cdd1dULL;
  for (std::uint64_t v : {std::uint64_t{w.kind},
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(w.device)),
                          std::uint64_t{w.sm_count}, w.split, w.driver_serial}) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ULL;
  }
  return h;
}

constexpr std::uint64_t kGreenTag = 0xA0;
constexpr std::uint64_t kDescTag = 0xB0;

template <typename H>
H TaggedHandle(std::uint64_t id, std::uint64_t tag) {
  return reinterpret_cast<H>(static_cast<std::uintptr_t>((id << 8) | tag));
}
template <typename H>
std::uint64_t TaggedId(H handle, std::uint64_t tag) {
  const auto v = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle));
  return (v & 0xFF) == tag ? v >> 8 : 0;
}

// Measured: the two split flags together are CUDA_ERROR_INVALID_VALUE; other bits (4,
// 0x80000000) are not looked at.
constexpr unsigned kExclusiveSplitFlags =
    CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING |
    CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE;

}  // namespace

void ResourceModel::SmParameters(int device, unsigned* min_partition, unsigned* alignment) const {
  const int major =
      st_->profile(device).Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  // cuda.h: 6.x and 7.x: 2 SMs, multiples of 2; 8.x: 4, multiples of 2; 9.0+: 8, multiples of 8.
  if (major >= 9) {
    *min_partition = 8;
    *alignment = 8;
  } else if (major == 8) {
    *min_partition = 4;
    *alignment = 2;
  } else {
    *min_partition = 2;
    *alignment = 2;
  }
}

void ResourceModel::WriteResource(const ResourceTag& tag, CUdevResource* out) const {
  std::memset(out, 0, sizeof *out);
  out->type = CU_DEV_RESOURCE_TYPE_SM;
  Wire w;
  std::memset(&w, 0, sizeof w);
  std::memcpy(w.magic, kMagic, sizeof kMagic);
  w.kind = static_cast<std::uint32_t>(tag.kind);
  w.device = tag.device;
  w.sm_count = tag.sm_count;
  w.split = tag.split;
  w.driver_serial = st_->serial;
  w.check = Check(w);
  std::memcpy(out->_internal_padding, &w, sizeof w);
  unsigned min_partition = 0;
  unsigned alignment = 0;
  // Measured: the groups and the remainder of a split say 0 for both.
  if (tag.kind != ResourceKind::kGroup && tag.kind != ResourceKind::kRemainder) {
    SmParameters(tag.device, &min_partition, &alignment);
  }
  out->sm.smCount = tag.sm_count;
  out->sm.minSmPartitionSize = min_partition;
  out->sm.smCoscheduledAlignment = alignment;
}

bool ResourceModel::ReadResource(const CUdevResource& r, ResourceTag* tag) const {
  Wire w;
  std::memcpy(&w, r._internal_padding, sizeof w);
  if (std::memcmp(w.magic, kMagic, sizeof kMagic) != 0 || w.check != Check(w) ||
      w.driver_serial != st_->serial || w.device < 0 || w.device >= st_->device_count() ||
      r.sm.smCount != w.sm_count) {
    return false;
  }
  tag->kind = static_cast<ResourceKind>(w.kind);
  tag->device = w.device;
  tag->sm_count = w.sm_count;
  tag->split = w.split;
  return true;
}

unsigned ResourceModel::DeviceSmCount(int device) const {
  return static_cast<unsigned>(
      std::max(0, st_->profile(device).Attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)));
}

CUresult ResourceModel::DeviceResource(int device, int type, CUdevResource* out) {
  st_->mu.AssertHeld();
  if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  ResourceTag tag;
  tag.kind = ResourceKind::kDevice;
  tag.device = device;
  tag.sm_count = DeviceSmCount(device);
  WriteResource(tag, out);
  return CUDA_SUCCESS;
}

CUresult ResourceModel::ContextResource(const Context& ctx, int type, CUdevResource* out) {
  st_->mu.AssertHeld();
  if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  if (const GreenContext* g = GreenOfContext(ctx.id); g != nullptr) {
    ResourceTag tag{ResourceKind::kGreen, g->device, g->sm_count, 0};
    WriteResource(tag, out);
    return CUDA_SUCCESS;
  }
  CUresult r = DeviceResource(ctx.device, type, out);
  return r;
}

CUresult ResourceModel::GreenResource(CUgreenCtx green, int type, CUdevResource* out) {
  st_->mu.AssertHeld();
  CUresult err = CUDA_SUCCESS;
  GreenContext* g = FindGreen(green, &err);
  if (g == nullptr) return err;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  ResourceTag tag{ResourceKind::kGreen, g->device, g->sm_count, 0};
  WriteResource(tag, out);
  return CUDA_SUCCESS;
}

CUresult ResourceModel::Split(CUdevResource* result, unsigned* nb_groups,
                              const CUdevResource* input, CUdevResource* remaining,
                              unsigned flags, unsigned min_count) {
  st_->mu.AssertHeld();
  if (nb_groups == nullptr || input == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (input->type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  if ((flags & kExclusiveSplitFlags) == kExclusiveSplitFlags) return CUDA_ERROR_INVALID_VALUE;
  // Measured: an SM resource the driver did not make (zeros, the device's numbers copied into a
  // zeroed one, garbage) is CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION.
  ResourceTag in;
  if (!ReadResource(*input, &in)) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  // The results of a split cannot be split again (cuda.h).
  if (in.kind == ResourceKind::kGroup || in.kind == ResourceKind::kRemainder ||
      in.kind == ResourceKind::kCombined) {
    return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  }
  if (min_count > in.sm_count) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  unsigned min_partition = 0;
  unsigned alignment = 0;
  SmParameters(in.device, &min_partition, &alignment);
  if (flags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING) {
    min_partition = std::min(min_partition, 2u);
    alignment = std::min(alignment, 2u);
  }
  unsigned size = std::max(min_count, min_partition);
  size = (size + alignment - 1) / alignment * alignment;
  // Measured: a count the alignment rounds past the whole resource gets the whole resource
  // (132 SMs, min 132: one group of 132).
  size = std::min(size, in.sm_count);
  const unsigned possible = size == 0 ? 0 : in.sm_count / size;
  if (result == nullptr) {
    *nb_groups = possible;
    return CUDA_SUCCESS;
  }
  if (*nb_groups == 0) return CUDA_ERROR_INVALID_VALUE;
  if (possible == 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  const unsigned n = std::min(*nb_groups, possible);
  const std::uint64_t split = next_split_++;
  for (unsigned i = 0; i < n; ++i) {
    WriteResource(ResourceTag{ResourceKind::kGroup, in.device, size, split}, &result[i]);
  }
  if (remaining != nullptr) {
    WriteResource(ResourceTag{ResourceKind::kRemainder, in.device, in.sm_count - n * size, split},
                  remaining);
  }
  *nb_groups = n;
  return CUDA_SUCCESS;
}

CUresult ResourceModel::GenerateDesc(CUdevResourceDesc* out, const CUdevResource* resources,
                                     unsigned n) {
  st_->mu.AssertHeld();
  if (out == nullptr || resources == nullptr || n == 0) return CUDA_ERROR_INVALID_VALUE;
  ResourceDesc d;
  for (unsigned i = 0; i < n; ++i) {
    if (resources[i].type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    ResourceTag t;
    // Measured: as for a split, a resource the driver did not make.
    if (!ReadResource(resources[i], &t)) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    if (i == 0) {
      d.device = t.device;
      d.split = t.split;
    } else if (t.device != d.device) {
      return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;  // UNMEASURED (one device measured)
    }
    // Measured: resources of different splits, the same group twice, the device's resource
    // with a group or twice are all accepted (cuda.h asks for one split instance). The fake
    // adds their SM counts, capped at the device's.
    d.sm_count += t.sm_count;
  }
  d.sm_count = std::min(d.sm_count, DeviceSmCount(d.device));
  d.id = st_->NewId();
  descs_.emplace(d.id, d);
  *out = TaggedHandle<CUdevResourceDesc>(d.id, kDescTag);
  return CUDA_SUCCESS;
}

CUgreenCtx ResourceModel::GreenHandle(std::uint64_t id) {
  return TaggedHandle<CUgreenCtx>(id, kGreenTag);
}

GreenContext* ResourceModel::FindGreen(CUgreenCtx green, CUresult* error) {
  st_->mu.AssertHeld();
  if (green == nullptr) {
    // Measured for cuGreenCtxStreamCreate, cuGreenCtxRecordEvent and cuGreenCtxWaitEvent.
    *error = CUDA_ERROR_INVALID_CONTEXT;
    return nullptr;
  }
  const std::uint64_t id = TaggedId(green, kGreenTag);
  auto it = greens_.find(id);
  if (it != greens_.end()) return &it->second;
  *error = green_destroyed_.count(id) != 0 ? CUDA_ERROR_CONTEXT_IS_DESTROYED
                                           : CUDA_ERROR_INVALID_CONTEXT;
  return nullptr;
}

GreenContext* ResourceModel::GreenOfContext(std::uint64_t ctx_id) {
  st_->mu.AssertHeld();
  return const_cast<GreenContext*>(GreenOfContextConst(ctx_id));
}

const GreenContext* ResourceModel::GreenOfContextConst(std::uint64_t ctx_id) const {
  for (const auto& [id, g] : greens_) {
    if (g.ctx_id == ctx_id) return &g;
  }
  return nullptr;
}

CUresult ResourceModel::CreateGreen(CUgreenCtx* out, CUdevResourceDesc desc, CUdevice dev,
                                    unsigned flags) {
  st_->mu.AssertHeld();
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (flags != CU_GREEN_CTX_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
  // Measured: a null descriptor makes a green context (the fake gives it the whole device).
  // A garbage one crashes the real driver; the fake answers CUDA_ERROR_INVALID_VALUE.
  const ResourceDesc* found = nullptr;
  if (desc != nullptr) {
    auto it = descs_.find(TaggedId(desc, kDescTag));
    if (it == descs_.end()) return CUDA_ERROR_INVALID_VALUE;
    found = &it->second;
  }
  if (dev < 0 || dev >= st_->device_count()) return CUDA_ERROR_INVALID_DEVICE;
  if (found != nullptr && dev != found->device) return CUDA_ERROR_INVALID_VALUE;
  const unsigned sm_count = found != nullptr ? found->sm_count : DeviceSmCount(dev);
  // Retains the primary context (as cuDevicePrimaryCtxRetain does).
  Device& d = st_->device(dev);
  if (d.primary_ctx_id == 0) d.primary_ctx_id = st_->NewId();
  if (!st_->contexts().IsLive(d.primary_ctx_id)) {
    st_->contexts().Create(d.primary_ctx_id, dev, /*primary=*/true, d.primary_flags);
    st_->coredump().OnContextCreated(d.primary_ctx_id, d.primary_flags);
  }
  ++d.primary_refcount;
  Context* ctx = st_->contexts().Create(st_->NewId(), dev, /*primary=*/false, d.primary_flags);
  st_->coredump().OnContextCreated(ctx->id, d.primary_flags);
  // CU_GREEN_CTX_DEFAULT_STREAM: the context's default (legacy) stream, made now.
  Stream* s = st_->NewStream(ctx, CU_STREAM_DEFAULT, 0);
  s->legacy_default = true;
  ctx->legacy_stream_id = s->id;
  GreenContext g;
  g.id = st_->NewId();
  g.device = dev;
  g.ctx_id = ctx->id;
  g.sm_count = sm_count;
  greens_.emplace(g.id, g);
  *out = GreenHandle(g.id);
  return CUDA_SUCCESS;
}

CUresult ResourceModel::DestroyGreen(CUgreenCtx green) {
  st_->mu.AssertHeld();
  CUresult err = CUDA_SUCCESS;
  GreenContext* g = FindGreen(green, &err);
  if (g == nullptr) return err;
  const GreenContext copy = *g;
  greens_.erase(copy.id);
  green_destroyed_.insert(copy.id);
  if (st_->contexts().IsLive(copy.ctx_id)) {
    st_->TeardownContext(copy.ctx_id);
    st_->contexts().Remove(copy.ctx_id);
  }
  Device& d = st_->device(copy.device);
  if (d.primary_refcount > 0 && --d.primary_refcount == 0 &&
      st_->contexts().IsLive(d.primary_ctx_id)) {
    st_->TeardownContext(d.primary_ctx_id);
    st_->contexts().Remove(d.primary_ctx_id);
  }
  return CUDA_SUCCESS;
}

CUresult ResourceModel::RecordEvent(const GreenContext& g, CUevent event) {
  st_->mu.AssertHeld();
  Event* e = st_->FindEvent(event);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  Context* ctx = st_->contexts().Find(g.ctx_id);
  if (ctx == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  Stream* def = st_->FindStream(ctx->legacy_stream_id);
  if (def == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  Op op;
  op.what = "cuGreenCtxRecordEvent";
  // After everything queued so far on any stream of the green context.
  for (const auto& [sid, s] : st_->streams().streams()) {
    if (s->ctx_id == g.ctx_id && sid != def->id && s->last_enqueued_seq > s->completed_seq) {
      op.deps.emplace_back(sid, s->last_enqueued_seq);
      def->waited[sid] = std::max(def->waited[sid], s->last_enqueued_seq);
    }
  }
  e->generation++;
  e->complete = false;
  e->stream_id = def->id;
  e->waited = def->waited;
  op.record_event_id = e->id;
  op.record_generation = e->generation;
  e->seq = st_->streams().next_seq();
  st_->Enqueue(def, std::move(op));
  return CUDA_SUCCESS;
}

CUresult ResourceModel::WaitEvent(const GreenContext& g, CUevent event) {
  st_->mu.AssertHeld();
  Event* e = st_->FindEvent(event);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (st_->contexts().Find(g.ctx_id) == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (e->stream_id == 0) return CUDA_SUCCESS;  // never recorded: nothing to wait for
  const std::uint64_t rec_stream = e->stream_id;
  const std::uint64_t rec_seq = e->seq;
  const bool pending = !e->complete;
  std::vector<std::uint64_t> targets;
  for (const auto& [sid, s] : st_->streams().streams()) {
    if (s->ctx_id == g.ctx_id && !s->destroyed) targets.push_back(sid);
  }
  for (std::uint64_t sid : targets) {
    Stream* s = st_->FindStream(sid);  // Enqueue may run work: look each up again
    if (s == nullptr || s->destroyed) continue;
    Op op;
    op.what = "cuGreenCtxWaitEvent";
    if (pending && sid != rec_stream) op.deps.emplace_back(rec_stream, rec_seq);
    s->waited[rec_stream] = std::max(s->waited[rec_stream], rec_seq);
    op.after_stream = rec_stream;
    op.after_seq = rec_seq;
    st_->Enqueue(s, std::move(op));
  }
  return CUDA_SUCCESS;
}

void ResourceModel::CountLive(Inventory* inv) const {
  st_->mu.AssertHeld();
  inv->green_contexts += static_cast<int>(greens_.size());
  // Each green context's retain of its primary context is counted as the green context.
  inv->primary_retains = std::max(0, inv->primary_retains - static_cast<int>(greens_.size()));
}

std::string ResourceModel::Describe() const {
  st_->mu.AssertHeld();
  std::ostringstream os;
  for (const auto& [id, g] : greens_) {
    os << "green context " << id << " on device " << g.device << " (" << g.sm_count
       << " SMs, cuGreenCtxCreate)\n";
  }
  return os.str();
}

}  // namespace fakecuda
