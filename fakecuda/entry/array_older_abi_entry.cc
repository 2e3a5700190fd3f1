// Copyright 2026 The cuhal Authors.
// Entry points: the older (CUDA 2.x, 32-bit sizes) ABIs of the array calls and the pitched
// copies, which the real driver still exports under the plain names (cuArrayCreate,
// cuMemcpyHtoA, cuMemcpy2D, ...; cuda.h declares them only under __CUDA_API_VERSION_INTERNAL).
// Each widens its arguments and forwards to the current entry point (array_entry.cc), which
// does the fault accounting under the plain name. Their 32-bit device pointers can never name
// fake device memory (it lies above 2^48): such a side answers as an unknown device address.
// The structures below are cuda.h's *_v1 layouts, field for field.
#include <cuda.h>

#include <cstring>

namespace {

using DevicePtrV1 = unsigned int;

struct Memcpy2DV1 {
  unsigned int srcXInBytes;
  unsigned int srcY;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  DevicePtrV1 srcDevice;
  CUarray srcArray;
  unsigned int srcPitch;
  unsigned int dstXInBytes;
  unsigned int dstY;
  CUmemorytype dstMemoryType;
  void* dstHost;
  DevicePtrV1 dstDevice;
  CUarray dstArray;
  unsigned int dstPitch;
  unsigned int WidthInBytes;
  unsigned int Height;
};

struct Memcpy3DV1 {
  unsigned int srcXInBytes;
  unsigned int srcY;
  unsigned int srcZ;
  unsigned int srcLOD;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  DevicePtrV1 srcDevice;
  CUarray srcArray;
  void* reserved0;
  unsigned int srcPitch;
  unsigned int srcHeight;
  unsigned int dstXInBytes;
  unsigned int dstY;
  unsigned int dstZ;
  unsigned int dstLOD;
  CUmemorytype dstMemoryType;
  void* dstHost;
  DevicePtrV1 dstDevice;
  CUarray dstArray;
  void* reserved1;
  unsigned int dstPitch;
  unsigned int dstHeight;
  unsigned int WidthInBytes;
  unsigned int Height;
  unsigned int Depth;
};

struct ArrayDescriptorV1 {
  unsigned int Width;
  unsigned int Height;
  CUarray_format Format;
  unsigned int NumChannels;
};

struct Array3DDescriptorV1 {
  unsigned int Width;
  unsigned int Height;
  unsigned int Depth;
  CUarray_format Format;
  unsigned int NumChannels;
  unsigned int Flags;
};

CUDA_MEMCPY2D Widen(const Memcpy2DV1& c) {
  CUDA_MEMCPY2D w;
  std::memset(&w, 0, sizeof w);
  w.srcXInBytes = c.srcXInBytes;
  w.srcY = c.srcY;
  w.srcMemoryType = c.srcMemoryType;
  w.srcHost = c.srcHost;
  w.srcDevice = c.srcDevice;
  w.srcArray = c.srcArray;
  w.srcPitch = c.srcPitch;
  w.dstXInBytes = c.dstXInBytes;
  w.dstY = c.dstY;
  w.dstMemoryType = c.dstMemoryType;
  w.dstHost = c.dstHost;
  w.dstDevice = c.dstDevice;
  w.dstArray = c.dstArray;
  w.dstPitch = c.dstPitch;
  w.WidthInBytes = c.WidthInBytes;
  w.Height = c.Height;
  return w;
}

CUDA_MEMCPY3D Widen(const Memcpy3DV1& c) {
  CUDA_MEMCPY3D w;
  std::memset(&w, 0, sizeof w);
  w.srcXInBytes = c.srcXInBytes;
  w.srcY = c.srcY;
  w.srcZ = c.srcZ;
  w.srcLOD = c.srcLOD;
  w.srcMemoryType = c.srcMemoryType;
  w.srcHost = c.srcHost;
  w.srcDevice = c.srcDevice;
  w.srcArray = c.srcArray;
  w.reserved0 = c.reserved0;
  w.srcPitch = c.srcPitch;
  w.srcHeight = c.srcHeight;
  w.dstXInBytes = c.dstXInBytes;
  w.dstY = c.dstY;
  w.dstZ = c.dstZ;
  w.dstLOD = c.dstLOD;
  w.dstMemoryType = c.dstMemoryType;
  w.dstHost = c.dstHost;
  w.dstDevice = c.dstDevice;
  w.dstArray = c.dstArray;
  w.reserved1 = c.reserved1;
  w.dstPitch = c.dstPitch;
  w.dstHeight = c.dstHeight;
  w.WidthInBytes = c.WidthInBytes;
  w.Height = c.Height;
  w.Depth = c.Depth;
  return w;
}

// A 64-bit size that does not fit the older ABI's 32 bits (its descriptors cannot say it).
bool Narrow(size_t v, unsigned int* out) {
  if (v > 0xffffffffu) return false;
  *out = static_cast<unsigned int>(v);
  return true;
}

}  // namespace

extern "C" {

CUresult CUDAAPI FakecudaArrayCreateV1(CUarray* pHandle, const ArrayDescriptorV1* d)
    __asm__("cuArrayCreate");
CUresult CUDAAPI FakecudaArrayGetDescriptorV1(ArrayDescriptorV1* d, CUarray hArray)
    __asm__("cuArrayGetDescriptor");
CUresult CUDAAPI FakecudaArray3DCreateV1(CUarray* pHandle, const Array3DDescriptorV1* d)
    __asm__("cuArray3DCreate");
CUresult CUDAAPI FakecudaArray3DGetDescriptorV1(Array3DDescriptorV1* d, CUarray hArray)
    __asm__("cuArray3DGetDescriptor");
CUresult CUDAAPI FakecudaMemcpyHtoAV1(CUarray a, unsigned int off, const void* h, unsigned int n)
    __asm__("cuMemcpyHtoA");
CUresult CUDAAPI FakecudaMemcpyAtoHV1(void* h, CUarray a, unsigned int off, unsigned int n)
    __asm__("cuMemcpyAtoH");
CUresult CUDAAPI FakecudaMemcpyDtoAV1(CUarray a, unsigned int off, DevicePtrV1 d, unsigned int n)
    __asm__("cuMemcpyDtoA");
CUresult CUDAAPI FakecudaMemcpyAtoDV1(DevicePtrV1 d, CUarray a, unsigned int off, unsigned int n)
    __asm__("cuMemcpyAtoD");
CUresult CUDAAPI FakecudaMemcpyAtoAV1(CUarray d, unsigned int doff, CUarray s, unsigned int soff,
                                      unsigned int n) __asm__("cuMemcpyAtoA");
CUresult CUDAAPI FakecudaMemcpyHtoAAsyncV1(CUarray a, unsigned int off, const void* h,
                                           unsigned int n, CUstream s)
    __asm__("cuMemcpyHtoAAsync");
CUresult CUDAAPI FakecudaMemcpyAtoHAsyncV1(void* h, CUarray a, unsigned int off, unsigned int n,
                                           CUstream s) __asm__("cuMemcpyAtoHAsync");
CUresult CUDAAPI FakecudaMemcpy2DV1(const Memcpy2DV1* c) __asm__("cuMemcpy2D");
CUresult CUDAAPI FakecudaMemcpy2DUnalignedV1(const Memcpy2DV1* c) __asm__("cuMemcpy2DUnaligned");
CUresult CUDAAPI FakecudaMemcpy2DAsyncV1(const Memcpy2DV1* c, CUstream s)
    __asm__("cuMemcpy2DAsync");
CUresult CUDAAPI FakecudaMemcpy3DV1(const Memcpy3DV1* c) __asm__("cuMemcpy3D");
CUresult CUDAAPI FakecudaMemcpy3DAsyncV1(const Memcpy3DV1* c, CUstream s)
    __asm__("cuMemcpy3DAsync");

CUresult CUDAAPI FakecudaArrayCreateV1(CUarray* pHandle, const ArrayDescriptorV1* d) {
  if (d == nullptr) return cuArrayCreate(pHandle, nullptr);
  CUDA_ARRAY_DESCRIPTOR w;
  std::memset(&w, 0, sizeof w);
  w.Width = d->Width;
  w.Height = d->Height;
  w.Format = d->Format;
  w.NumChannels = d->NumChannels;
  return cuArrayCreate(pHandle, &w);
}

CUresult CUDAAPI FakecudaArrayGetDescriptorV1(ArrayDescriptorV1* d, CUarray hArray) {
  CUDA_ARRAY_DESCRIPTOR w;
  std::memset(&w, 0, sizeof w);
  CUresult r = cuArrayGetDescriptor(d != nullptr ? &w : nullptr, hArray);
  if (r != CUDA_SUCCESS) return r;
  ArrayDescriptorV1 n{};
  if (!Narrow(w.Width, &n.Width) || !Narrow(w.Height, &n.Height)) return CUDA_ERROR_INVALID_VALUE;
  n.Format = w.Format;
  n.NumChannels = w.NumChannels;
  *d = n;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaArray3DCreateV1(CUarray* pHandle, const Array3DDescriptorV1* d) {
  if (d == nullptr) return cuArray3DCreate(pHandle, nullptr);
  CUDA_ARRAY3D_DESCRIPTOR w;
  std::memset(&w, 0, sizeof w);
  w.Width = d->Width;
  w.Height = d->Height;
  w.Depth = d->Depth;
  w.Format = d->Format;
  w.NumChannels = d->NumChannels;
  w.Flags = d->Flags;
  return cuArray3DCreate(pHandle, &w);
}

CUresult CUDAAPI FakecudaArray3DGetDescriptorV1(Array3DDescriptorV1* d, CUarray hArray) {
  CUDA_ARRAY3D_DESCRIPTOR w;
  std::memset(&w, 0, sizeof w);
  CUresult r = cuArray3DGetDescriptor(d != nullptr ? &w : nullptr, hArray);
  if (r != CUDA_SUCCESS) return r;
  Array3DDescriptorV1 n{};
  if (!Narrow(w.Width, &n.Width) || !Narrow(w.Height, &n.Height) ||
      !Narrow(w.Depth, &n.Depth)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  n.Format = w.Format;
  n.NumChannels = w.NumChannels;
  n.Flags = w.Flags;
  *d = n;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakecudaMemcpyHtoAV1(CUarray a, unsigned int off, const void* h, unsigned int n) {
  return cuMemcpyHtoA(a, off, h, n);
}
CUresult CUDAAPI FakecudaMemcpyAtoHV1(void* h, CUarray a, unsigned int off, unsigned int n) {
  return cuMemcpyAtoH(h, a, off, n);
}
CUresult CUDAAPI FakecudaMemcpyDtoAV1(CUarray a, unsigned int off, DevicePtrV1 d, unsigned int n) {
  return cuMemcpyDtoA(a, off, d, n);
}
CUresult CUDAAPI FakecudaMemcpyAtoDV1(DevicePtrV1 d, CUarray a, unsigned int off, unsigned int n) {
  return cuMemcpyAtoD(d, a, off, n);
}
CUresult CUDAAPI FakecudaMemcpyAtoAV1(CUarray d, unsigned int doff, CUarray s, unsigned int soff,
                                      unsigned int n) {
  return cuMemcpyAtoA(d, doff, s, soff, n);
}
CUresult CUDAAPI FakecudaMemcpyHtoAAsyncV1(CUarray a, unsigned int off, const void* h,
                                           unsigned int n, CUstream s) {
  return cuMemcpyHtoAAsync(a, off, h, n, s);
}
CUresult CUDAAPI FakecudaMemcpyAtoHAsyncV1(void* h, CUarray a, unsigned int off, unsigned int n,
                                           CUstream s) {
  return cuMemcpyAtoHAsync(h, a, off, n, s);
}
CUresult CUDAAPI FakecudaMemcpy2DV1(const Memcpy2DV1* c) {
  if (c == nullptr) return cuMemcpy2D(nullptr);
  const CUDA_MEMCPY2D w = Widen(*c);
  return cuMemcpy2D(&w);
}
CUresult CUDAAPI FakecudaMemcpy2DUnalignedV1(const Memcpy2DV1* c) {
  if (c == nullptr) return cuMemcpy2DUnaligned(nullptr);
  const CUDA_MEMCPY2D w = Widen(*c);
  return cuMemcpy2DUnaligned(&w);
}
CUresult CUDAAPI FakecudaMemcpy2DAsyncV1(const Memcpy2DV1* c, CUstream s) {
  if (c == nullptr) return cuMemcpy2DAsync(nullptr, s);
  const CUDA_MEMCPY2D w = Widen(*c);
  return cuMemcpy2DAsync(&w, s);
}
CUresult CUDAAPI FakecudaMemcpy3DV1(const Memcpy3DV1* c) {
  if (c == nullptr) return cuMemcpy3D(nullptr);
  const CUDA_MEMCPY3D w = Widen(*c);
  return cuMemcpy3D(&w);
}
CUresult CUDAAPI FakecudaMemcpy3DAsyncV1(const Memcpy3DV1* c, CUstream s) {
  if (c == nullptr) return cuMemcpy3DAsync(nullptr, s);
  const CUDA_MEMCPY3D w = Widen(*c);
  return cuMemcpy3DAsync(&w, s);
}

}  // extern "C"
