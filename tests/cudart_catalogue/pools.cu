// Stream-ordered allocation through the CUDA runtime: the default pool, created
// pools, their attributes after a sequence of allocations, trimming, reuse
// across streams with events, and invalid uses.
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

void Show(const char* what, cudaError_t e) { std::printf("%s: %s\n", what, cudaGetErrorName(e)); }

constexpr std::uint64_t kMiB = 1 << 20;

// Prints used memory exactly and reserved memory in MiB (the real driver maps
// 32 MiB pieces).
void Usage(const char* label, cudaMemPool_t pool) {
  std::uint64_t used = 0, used_high = 0, reserved = 0, reserved_high = 0;
  cudaError_t a = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
  cudaError_t b = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used_high);
  cudaError_t c = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
  cudaError_t d = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reserved_high);
  std::printf(
      "%s: used %llu high %llu, reserved %llu MiB high %llu MiB (%s %s "
      "%s %s)\n",
      label, static_cast<unsigned long long>(used), static_cast<unsigned long long>(used_high),
      static_cast<unsigned long long>(reserved / kMiB),
      static_cast<unsigned long long>(reserved_high / kMiB), cudaGetErrorName(a),
      cudaGetErrorName(b), cudaGetErrorName(c), cudaGetErrorName(d));
}

__global__ void Fill(int* out, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value + i;
}

__global__ void Sum(const int* in, int n, unsigned long long* total) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, static_cast<unsigned long long>(in[i]));
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  cudaMemPool_t def = nullptr, current = nullptr;
  Show("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&def, 0));
  Show("cudaDeviceGetMemPool", cudaDeviceGetMemPool(&current, 0));
  std::printf("current pool is the default: %d\n", current == def);
  std::uint64_t threshold = 1;
  Show("get release threshold",
       cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &threshold));
  std::printf("default release threshold %llu\n", static_cast<unsigned long long>(threshold));
  int flag = -1;
  const cudaMemPoolAttr reuse[] = {cudaMemPoolReuseFollowEventDependencies,
                                   cudaMemPoolReuseAllowOpportunistic,
                                   cudaMemPoolReuseAllowInternalDependencies};
  for (cudaMemPoolAttr a : reuse) {
    cudaError_t e = cudaMemPoolGetAttribute(def, a, &flag);
    std::printf("reuse attribute %d: %d (%s)\n", static_cast<int>(a), flag, cudaGetErrorName(e));
  }

  // A sequence on the default pool; the threshold 0 releases memory at
  // synchronization.
  cudaStream_t s1, s2;
  Show("cudaStreamCreate", cudaStreamCreate(&s1));
  Show("cudaStreamCreate", cudaStreamCreate(&s2));
  int *a = nullptr, *b = nullptr, *c = nullptr;
  Show("cudaMallocAsync 1 MiB", cudaMallocAsync(&a, kMiB, s1));
  Show("cudaMallocAsync 40 MiB", cudaMallocAsync(&b, 40 * kMiB, s1));
  Show("cudaMallocAsync 1000 bytes", cudaMallocAsync(&c, 1000, s1));
  Usage("default after 3", def);
  Fill<<<(1 << 18) / 256, 256, 0, s1>>>(a, 1 << 18, 1);
  unsigned long long* total = nullptr;
  Show("cudaMallocAsync total", cudaMallocAsync(&total, sizeof(*total), s1));
  Show("cudaMemsetAsync total", cudaMemsetAsync(total, 0, sizeof(*total), s1));
  Sum<<<(1 << 18) / 256, 256, 0, s1>>>(a, 1 << 18, total);
  unsigned long long host_total = 0;
  Show("cudaMemcpyAsync",
       cudaMemcpyAsync(&host_total, total, sizeof(host_total), cudaMemcpyDeviceToHost, s1));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s1));
  std::printf("sum of 1..262144 = %llu\n", host_total);
  Show("cudaFreeAsync 40 MiB", cudaFreeAsync(b, s1));
  Show("cudaFreeAsync 1000 bytes", cudaFreeAsync(c, s1));
  Usage("default after 2 frees, before sync", def);
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s1));
  Usage("default after sync", def);
  Show("cudaFreeAsync 1 MiB", cudaFreeAsync(a, s1));
  Show("cudaFreeAsync total", cudaFreeAsync(total, s1));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s1));
  Usage("default after all freed", def);

  // A created pool with a high release threshold, reuse across streams ordered
  // by an event.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  Show("cudaMemPoolCreate", cudaMemPoolCreate(&pool, &props));
  threshold = UINT64_MAX;
  Show("set release threshold max",
       cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  int* p = nullptr;
  Show("cudaMallocFromPoolAsync 8 MiB", cudaMallocFromPoolAsync(&p, 8 * kMiB, pool, s1));
  Fill<<<64, 256, 0, s1>>>(p, 64 * 256, 100);
  Show("cudaFreeAsync on s1", cudaFreeAsync(p, s1));
  cudaEvent_t ev;
  Show("cudaEventCreate", cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  Show("cudaEventRecord", cudaEventRecord(ev, s1));
  Show("cudaStreamWaitEvent", cudaStreamWaitEvent(s2, ev, 0));
  int* q = nullptr;
  Show("cudaMallocFromPoolAsync 8 MiB on s2", cudaMallocFromPoolAsync(&q, 8 * kMiB, pool, s2));
  std::printf("s2 reuses s1's freed block: %d\n", q == p);
  Usage("pool with one live block", pool);
  Show("cudaStreamSynchronize s2", cudaStreamSynchronize(s2));
  Show("cudaFreeAsync on s2", cudaFreeAsync(q, s2));
  Show("cudaStreamSynchronize s2", cudaStreamSynchronize(s2));
  Usage("pool after free (threshold max)", pool);
  Show("cudaMemPoolTrimTo 0", cudaMemPoolTrimTo(pool, 0));
  Usage("pool after trim", pool);
  std::uint64_t zero = 0;
  Show("reset used high", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  Show("reset reserved high", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
  Usage("pool after reset of the highs", pool);

  // The created pool as the device's current pool: cudaMallocAsync takes from
  // it.
  Show("cudaDeviceSetMemPool", cudaDeviceSetMemPool(0, pool));
  Show("cudaDeviceGetMemPool", cudaDeviceGetMemPool(&current, 0));
  std::printf("current pool is the created one: %d\n", current == pool);
  Show("cudaMallocAsync 3 MiB", cudaMallocAsync(&p, 3 * kMiB, s1));
  Usage("pool after cudaMallocAsync", pool);
  Usage("default pool meanwhile", def);
  Show("cudaFreeAsync", cudaFreeAsync(p, s1));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s1));
  Show("cudaDeviceSetMemPool default", cudaDeviceSetMemPool(0, def));

  // Reuse flags can be turned off and read back.
  flag = 0;
  Show("set opportunistic 0",
       cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &flag));
  flag = -1;
  Show("get opportunistic",
       cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &flag));
  std::printf("opportunistic %d\n", flag);

  // Invalid uses.
  int* plain = nullptr;
  Show("cudaMalloc", cudaMalloc(&plain, 4096));
  Show("cudaFreeAsync of cudaMalloc memory", cudaFreeAsync(plain, s1));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(s1));
  int on_stack = 0;
  Show("cudaFreeAsync of a host pointer", cudaFreeAsync(&on_stack, s1));
  Show("cudaFreeAsync of null", cudaFreeAsync(nullptr, s1));
  Show("cudaMallocAsync of 0 bytes", cudaMallocAsync(&p, 0, s1));
  std::printf("pointer of 0 bytes is null: %d\n", p == nullptr);
  Show("cudaMallocAsync null out", cudaMallocAsync(static_cast<void**>(nullptr), 16, s1));
  Show("cudaMallocAsync 1 PiB", cudaMallocAsync(&p, kMiB * kMiB * 1024, s1));
  Show("get attribute 0x7fff",
       cudaMemPoolGetAttribute(pool, static_cast<cudaMemPoolAttr>(0x7fff), &threshold));
  Show("set used current", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &zero));
  std::uint64_t nonzero = 5;
  Show("set used high to 5", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &nonzero));
  Show("cudaMemPoolDestroy default", cudaMemPoolDestroy(def));
  props.location.id = 99;
  cudaMemPool_t bad = nullptr;
  Show("cudaMemPoolCreate on device 99", cudaMemPoolCreate(&bad, &props));
  Show("cudaDeviceSetMemPool on device 99", cudaDeviceSetMemPool(99, pool));
  Show("get", cudaGetLastError());

  Show("cudaMemPoolDestroy", cudaMemPoolDestroy(pool));
  Show("cudaEventDestroy", cudaEventDestroy(ev));
  Show("cudaStreamDestroy", cudaStreamDestroy(s1));
  Show("cudaStreamDestroy", cudaStreamDestroy(s2));
  Usage("default at the end", def);
  std::printf("done\n");
  return 0;
}
