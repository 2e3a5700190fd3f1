// Copyright 2026 The cuhal Authors.
// Copies and memsets through the CUDA runtime: cudaMemcpy in every direction (cudaMemcpyDefault
// too), 2D and 3D copies between pitched and linear memory, copies to and from __device__ and
// __constant__ symbols, cudaMemset/2D/3D, the asynchronous forms on a stream, and invalid kinds,
// pitches, sizes and symbols. Prints a checksum of the data after each step.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__device__ int device_table[64];
__constant__ int constant_table[64];

__global__ void SumTables(int* out) {
  int i = threadIdx.x;
  out[i] = device_table[i] + constant_table[i];
}

namespace {

void Show(const char* what, cudaError_t error) {
  std::printf("%s: %s\n", what, cudaGetErrorName(error));
}

// FNV-1a over the bytes.
uint32_t Checksum(const void* data, size_t bytes) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < bytes; ++i) {
    hash = (hash ^ static_cast<const unsigned char*>(data)[i]) * 16777619u;
  }
  return hash;
}

void ShowCopy(const char* what, cudaError_t error, const void* data, size_t bytes) {
  std::printf("%s: %s, checksum %08x\n", what, cudaGetErrorName(error), Checksum(data, bytes));
}

constexpr int kCount = 4096;
constexpr size_t kBytes = kCount * sizeof(int);

void Fill(int* p, int n, int seed) {
  for (int i = 0; i < n; ++i) p[i] = i * 7 + seed;
}

void LinearCopies() {
  int* src = static_cast<int*>(std::malloc(kBytes));
  int* dst = static_cast<int*>(std::malloc(kBytes));
  Fill(src, kCount, 1);
  std::memset(dst, 0, kBytes);
  std::printf("source checksum %08x\n", Checksum(src, kBytes));
  int* a = nullptr;
  int* b = nullptr;
  cudaMalloc(&a, kBytes);
  cudaMalloc(&b, kBytes);
  Show("cudaMemcpy(HostToDevice)", cudaMemcpy(a, src, kBytes, cudaMemcpyHostToDevice));
  Show("cudaMemcpy(DeviceToDevice)", cudaMemcpy(b, a, kBytes, cudaMemcpyDeviceToDevice));
  ShowCopy("cudaMemcpy(DeviceToHost)", cudaMemcpy(dst, b, kBytes, cudaMemcpyDeviceToHost), dst,
           kBytes);
  std::memset(dst, 0, kBytes);
  ShowCopy("cudaMemcpy(HostToHost)", cudaMemcpy(dst, src, kBytes, cudaMemcpyHostToHost), dst,
           kBytes);
  Fill(src, kCount, 2);
  Show("cudaMemcpy(Default, host to device)", cudaMemcpy(a, src, kBytes, cudaMemcpyDefault));
  Show("cudaMemcpy(Default, device to device)", cudaMemcpy(b, a, kBytes, cudaMemcpyDefault));
  ShowCopy("cudaMemcpy(Default, device to host)", cudaMemcpy(dst, b, kBytes, cudaMemcpyDefault),
           dst, kBytes);
  ShowCopy("cudaMemcpy(Default, host to host)", cudaMemcpy(dst, src, kBytes / 2, cudaMemcpyDefault),
           dst, kBytes);
  ShowCopy("cudaMemcpy(0 bytes)", cudaMemcpy(dst, b, 0, cudaMemcpyDeviceToHost), dst, kBytes);
  ShowCopy("cudaMemcpy(part, offset)",
           cudaMemcpy(dst + 10, a + 100, 64 * sizeof(int), cudaMemcpyDeviceToHost), dst, kBytes);
  Show("cudaMemcpy(kind 7)", cudaMemcpy(b, a, kBytes, static_cast<cudaMemcpyKind>(7)));
  Show("cudaGetLastError", cudaGetLastError());
  Show("cudaMemcpyPeer(same device)", cudaMemcpyPeer(b, 0, a, 0, kBytes));
  Show("cudaMemcpyPeer(device 99)", cudaMemcpyPeer(b, 99, a, 0, kBytes));

  Show("cudaMemset(0x5a)", cudaMemset(a, 0x5a, kBytes));
  ShowCopy("read back", cudaMemcpy(dst, a, kBytes, cudaMemcpyDeviceToHost), dst, kBytes);
  Show("cudaMemset(odd offset and size)", cudaMemset(reinterpret_cast<char*>(a) + 3, 0x11, 1001));
  ShowCopy("read back", cudaMemcpy(dst, a, kBytes, cudaMemcpyDeviceToHost), dst, kBytes);
  Show("cudaMemset(0 bytes)", cudaMemset(a, 0, 0));
  cudaFree(a);
  cudaFree(b);
  std::free(src);
  std::free(dst);
}

void PitchedCopies() {
  constexpr size_t kWidth = 100;  // bytes
  constexpr size_t kHeight = 16;
  constexpr size_t kHostPitch = 128;
  unsigned char host[kHostPitch * kHeight];
  unsigned char back[kHostPitch * kHeight];
  for (size_t i = 0; i < sizeof(host); ++i) host[i] = static_cast<unsigned char>(i * 13);
  std::memset(back, 0, sizeof(back));
  // Linear device memory with an explicit pitch (cudaMallocPitch has its own program).
  constexpr size_t kDevicePitch = 256;
  unsigned char* d = nullptr;
  unsigned char* e = nullptr;
  cudaMalloc(&d, kDevicePitch * kHeight);
  cudaMalloc(&e, kDevicePitch * kHeight);
  cudaMemset(d, 0, kDevicePitch * kHeight);
  Show("cudaMemcpy2D(HostToDevice)",
       cudaMemcpy2D(d, kDevicePitch, host, kHostPitch, kWidth, kHeight, cudaMemcpyHostToDevice));
  Show("cudaMemcpy2D(DeviceToDevice)",
       cudaMemcpy2D(e, kDevicePitch, d, kDevicePitch, kWidth, kHeight, cudaMemcpyDeviceToDevice));
  ShowCopy("cudaMemcpy2D(DeviceToHost, pitch 100)",
           cudaMemcpy2D(back, kWidth, e, kDevicePitch, kWidth, kHeight, cudaMemcpyDeviceToHost),
           back, sizeof(back));
  Show("cudaMemset2D(0x33, 40 x 4)", cudaMemset2D(d + 8, kDevicePitch, 0x33, 40, 4));
  ShowCopy("read back 2D",
           cudaMemcpy2D(back, kHostPitch, d, kDevicePitch, kWidth, kHeight, cudaMemcpyDeviceToHost),
           back, sizeof(back));
  Show("cudaMemcpy2D(width > destination pitch)",
       cudaMemcpy2D(d, 64, host, kHostPitch, kWidth, kHeight, cudaMemcpyHostToDevice));
  Show("cudaMemcpy2D(width > source pitch)",
       cudaMemcpy2D(d, kDevicePitch, host, 64, kWidth, kHeight, cudaMemcpyHostToDevice));
  Show("cudaMemcpy2D(kind 9)", cudaMemcpy2D(d, kDevicePitch, host, kHostPitch, kWidth, kHeight,
                                            static_cast<cudaMemcpyKind>(9)));
  Show("cudaMemcpy2D(height 0)",
       cudaMemcpy2D(d, kDevicePitch, host, kHostPitch, kWidth, 0, cudaMemcpyHostToDevice));
  Show("cudaMemset2D(width > pitch)", cudaMemset2D(d, 64, 0, kWidth, 2));
  Show("cudaGetLastError", cudaGetLastError());
  cudaFree(d);
  cudaFree(e);
}

void Copies3D() {
  const cudaExtent extent = make_cudaExtent(60, 8, 4);  // width in bytes
  cudaPitchedPtr device{};
  Show("cudaMalloc3D", cudaMalloc3D(&device, extent));
  std::printf("3D pitch at least the width: %s, xsize %zu, ysize %zu\n",
              device.pitch >= extent.width ? "yes" : "no", device.xsize, device.ysize);
  constexpr size_t kHostBytes = 64 * 8 * 4;
  unsigned char host[kHostBytes];
  unsigned char back[kHostBytes];
  for (size_t i = 0; i < kHostBytes; ++i) host[i] = static_cast<unsigned char>(i * 5 + 1);
  std::memset(back, 0, kHostBytes);
  Show("cudaMemset3D(0)", cudaMemset3D(device, 0, extent));
  cudaMemcpy3DParms to{};
  to.srcPtr = make_cudaPitchedPtr(host, 64, 60, 8);
  to.dstPtr = device;
  to.extent = extent;
  to.kind = cudaMemcpyHostToDevice;
  Show("cudaMemcpy3D(HostToDevice)", cudaMemcpy3D(&to));
  cudaMemcpy3DParms from{};
  from.srcPtr = device;
  from.dstPtr = make_cudaPitchedPtr(back, 64, 60, 8);
  from.extent = extent;
  from.kind = cudaMemcpyDeviceToHost;
  ShowCopy("cudaMemcpy3D(DeviceToHost)", cudaMemcpy3D(&from), back, kHostBytes);
  Show("cudaMemset3D(0x44, 10 x 2 x 2)", cudaMemset3D(device, 0x44, make_cudaExtent(10, 2, 2)));
  std::memset(back, 0, kHostBytes);
  ShowCopy("read back 3D", cudaMemcpy3D(&from), back, kHostBytes);
  from.kind = cudaMemcpyDefault;
  ShowCopy("cudaMemcpy3D(Default)", cudaMemcpy3D(&from), back, kHostBytes);

  cudaMemcpy3DParms bad = to;
  bad.kind = static_cast<cudaMemcpyKind>(9);
  Show("cudaMemcpy3D(kind 9)", cudaMemcpy3D(&bad));
  bad = to;
  bad.srcPtr.pitch = 32;  // less than the width
  Show("cudaMemcpy3D(source pitch < width)", cudaMemcpy3D(&bad));
  bad = to;
  bad.extent = make_cudaExtent(0, 0, 0);
  Show("cudaMemcpy3D(empty extent)", cudaMemcpy3D(&bad));
  Show("cudaMemcpy3D(nullptr)", cudaMemcpy3D(nullptr));
  Show("cudaGetLastError", cudaGetLastError());
  cudaFree(device.ptr);
}

void Symbols() {
  int host[64];
  int back[64];
  Fill(host, 64, 3);
  Show("cudaMemcpyToSymbol(device_table)", cudaMemcpyToSymbol(device_table, host, sizeof(host)));
  Fill(host, 64, 1000);
  Show("cudaMemcpyToSymbol(constant_table)",
       cudaMemcpyToSymbol(constant_table, host, sizeof(host)));
  Show("cudaMemcpyToSymbol(offset 128, 16 ints)",
       cudaMemcpyToSymbol(device_table, host, 16 * sizeof(int), 128));
  std::memset(back, 0, sizeof(back));
  ShowCopy("cudaMemcpyFromSymbol(device_table)",
           cudaMemcpyFromSymbol(back, device_table, sizeof(back)), back, sizeof(back));
  ShowCopy("cudaMemcpyFromSymbol(constant_table)",
           cudaMemcpyFromSymbol(back, constant_table, sizeof(back)), back, sizeof(back));
  size_t size = 0;
  Show("cudaGetSymbolSize", cudaGetSymbolSize(&size, device_table));
  std::printf("symbol size %zu\n", size);
  int* address = nullptr;
  Show("cudaGetSymbolAddress",
       cudaGetSymbolAddress(reinterpret_cast<void**>(&address), device_table));
  int* out = nullptr;
  cudaMalloc(&out, sizeof(back));
  SumTables<<<1, 64>>>(out);
  Show("kernel launch", cudaGetLastError());
  ShowCopy("sum of the tables", cudaMemcpy(back, out, sizeof(back), cudaMemcpyDeviceToHost), back,
           sizeof(back));
  ShowCopy("cudaMemcpy from the symbol's address",
           cudaMemcpy(back, address, sizeof(back), cudaMemcpyDeviceToHost), back, sizeof(back));
  Show("cudaMemcpyToSymbol(past the end)", cudaMemcpyToSymbol(device_table, host, sizeof(host), 4));
  Show("cudaMemcpyFromSymbol(past the end)",
       cudaMemcpyFromSymbol(back, device_table, 8, sizeof(host)));
  static int not_a_symbol[64];
  Show("cudaMemcpyToSymbol(host variable)", cudaMemcpyToSymbol(not_a_symbol, host, sizeof(host)));
  Show("cudaGetSymbolSize(host variable)", cudaGetSymbolSize(&size, not_a_symbol));
  Show("cudaMemcpyToSymbol(kind DeviceToHost)",
       cudaMemcpyToSymbol(device_table, host, sizeof(host), 0, cudaMemcpyDeviceToHost));
  Show("cudaGetLastError", cudaGetLastError());
  cudaFree(out);
}

void AsyncCopies() {
  cudaStream_t stream = nullptr;
  cudaStreamCreate(&stream);
  int* pinned = nullptr;
  int* pinned_back = nullptr;
  cudaMallocHost(&pinned, kBytes);
  cudaMallocHost(&pinned_back, kBytes);
  int* pageable = static_cast<int*>(std::malloc(kBytes));
  Fill(pinned, kCount, 5);
  Fill(pageable, kCount, 6);
  std::memset(pinned_back, 0, kBytes);
  int* a = nullptr;
  int* b = nullptr;
  cudaMalloc(&a, kBytes);
  cudaMalloc(&b, kBytes);
  Show("cudaMemcpyAsync(HostToDevice, pinned)",
       cudaMemcpyAsync(a, pinned, kBytes, cudaMemcpyHostToDevice, stream));
  Show("cudaMemcpyAsync(DeviceToDevice)",
       cudaMemcpyAsync(b, a, kBytes, cudaMemcpyDeviceToDevice, stream));
  Show("cudaMemcpyAsync(DeviceToHost, pinned)",
       cudaMemcpyAsync(pinned_back, b, kBytes, cudaMemcpyDeviceToHost, stream));
  ShowCopy("cudaStreamSynchronize", cudaStreamSynchronize(stream), pinned_back, kBytes);
  Show("cudaMemcpyAsync(HostToDevice, pageable)",
       cudaMemcpyAsync(a, pageable, kBytes, cudaMemcpyHostToDevice, stream));
  Show("cudaMemsetAsync(0x77, second half)",
       cudaMemsetAsync(a + kCount / 2, 0x77, kBytes / 2, stream));
  Show("cudaMemcpyAsync(Default, to pageable)",
       cudaMemcpyAsync(pageable, a, kBytes, cudaMemcpyDefault, stream));
  ShowCopy("cudaStreamSynchronize", cudaStreamSynchronize(stream), pageable, kBytes);
  Show("cudaMemset2DAsync(0x12, 64 x 8)", cudaMemset2DAsync(b, 256, 0x12, 64, 8, stream));
  Show("cudaMemcpy2DAsync(DeviceToHost)",
       cudaMemcpy2DAsync(pinned_back, 256, b, 256, 128, 8, cudaMemcpyDeviceToHost, stream));
  ShowCopy("cudaStreamSynchronize", cudaStreamSynchronize(stream), pinned_back, kBytes);
  cudaPitchedPtr volume = make_cudaPitchedPtr(b, 256, 256, 4);
  Show("cudaMemset3DAsync(0x21, 32 x 4 x 2)",
       cudaMemset3DAsync(volume, 0x21, make_cudaExtent(32, 4, 2), stream));
  cudaMemcpy3DParms from{};
  from.srcPtr = volume;
  from.dstPtr = make_cudaPitchedPtr(pinned_back, 256, 256, 4);
  from.extent = make_cudaExtent(256, 4, 2);
  from.kind = cudaMemcpyDeviceToHost;
  Show("cudaMemcpy3DAsync(DeviceToHost)", cudaMemcpy3DAsync(&from, stream));
  ShowCopy("cudaStreamSynchronize", cudaStreamSynchronize(stream), pinned_back, kBytes);
  int table[64];
  Fill(table, 64, 9);
  Show("cudaMemcpyToSymbolAsync", cudaMemcpyToSymbolAsync(device_table, table, sizeof(table), 0,
                                                          cudaMemcpyHostToDevice, stream));
  std::memset(table, 0, sizeof(table));
  Show("cudaMemcpyFromSymbolAsync", cudaMemcpyFromSymbolAsync(table, device_table, sizeof(table), 0,
                                                              cudaMemcpyDeviceToHost, stream));
  ShowCopy("cudaStreamSynchronize", cudaStreamSynchronize(stream), table, sizeof(table));
  Show("cudaMemcpyAsync(kind 7)",
       cudaMemcpyAsync(b, a, kBytes, static_cast<cudaMemcpyKind>(7), stream));
  Show("cudaMemcpy2DAsync(width > pitch)",
       cudaMemcpy2DAsync(b, 64, a, 256, 128, 2, cudaMemcpyDeviceToDevice, stream));
  Show("cudaMemcpyAsync(0 bytes)", cudaMemcpyAsync(b, a, 0, cudaMemcpyDeviceToDevice, stream));
  Show("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  Show("cudaGetLastError", cudaGetLastError());
  cudaStreamDestroy(stream);
  cudaFree(a);
  cudaFree(b);
  cudaFreeHost(pinned);
  cudaFreeHost(pinned_back);
  std::free(pageable);
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a hang keeps the lines before it
  LinearCopies();
  PitchedCopies();
  Copies3D();
  Symbols();
  AsyncCopies();
  return 0;
}
