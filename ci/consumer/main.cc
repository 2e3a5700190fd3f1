// Copyright 2026 The cuhal Authors.
// Uses the installed cuhal package as a downstream project would: fills the CudaApi/NcclApi
// tables from the fakes, opens device 0 through the core, moves bytes through a pool-backed
// buffer and prints the pool statistics. Exits 0 on success. (The README's "Using the core"
// example is this program.)
#include <cstddef>
#include <cstdio>
#include <memory>
#include <vector>

#include "core/base/status.h"
#include "core/base/status_or.h"
#include "core/device/device.h"
#include "core/driver/driver.h"
#include "core/memory/allocator.h"
#include "core/symbols/cuda_api.h"
#include "core/symbols/nccl_api.h"
#include "fakecuda/fake_driver.h"
#include "fakenccl/fake_nccl.h"

namespace {

cuhal::Status Run(const cuhal::CudaApi* cuda, const cuhal::NcclApi* nccl) {
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<cuhal::Driver> driver, cuhal::Driver::Create(cuda, nccl));
  CUHAL_ASSIGN_OR_RETURN(std::unique_ptr<cuhal::Device> device, cuhal::Device::Create(*driver, 0));
  std::printf("cuhal consumer: opened %s (%s)\n", device->info().name.c_str(),
              device->info().uuid.c_str());
  {
    // A buffer from the device-local pool: written, read back, freed (stream-ordered).
    CUHAL_ASSIGN_OR_RETURN(cuhal::Buffer buffer,
                           device->allocator().Allocate({.heap = cuhal::MemoryHeap::kDeviceLocal,
                                                         .pool = cuhal::MemoryPoolKind::kDeviceLocal},
                                                        1 << 20));
    std::vector<std::byte> in(1 << 20, std::byte{42});
    std::vector<std::byte> out(1 << 20);
    cuhal::Queue& queue = device->queue(0);
    CUHAL_RETURN_IF_ERROR(queue.Write(in, buffer, 0));
    CUHAL_RETURN_IF_ERROR(queue.Read(buffer, 0, out));
    CUHAL_RETURN_IF_ERROR(queue.Synchronize());
    if (out != in) return cuhal::InternalError("read back different bytes");
    CUHAL_ASSIGN_OR_RETURN(cuhal::MemoryPoolsStatistics stats, device->QueryPoolStatistics());
    std::printf("cuhal consumer: 1 MiB round trip ok; device-local pool reserved %llu, used %llu\n",
                static_cast<unsigned long long>(stats.device_local.reserved_current),
                static_cast<unsigned long long>(stats.device_local.used_current));
  }  // the buffer is freed here, before the device
  return device->Trim();
}

}  // namespace

int main() {
  fakecuda::ScopedDriver fake_cuda;  // one fake H200 (the built-in profile)
  fakenccl::ScopedNccl fake_nccl;
  cuhal::CudaApi cuda;
  fakecuda::FillCudaApi(&cuda);
  cuhal::NcclApi nccl;
  fakenccl::FillNcclApi(&nccl);
  const cuhal::Status status = Run(&cuda, &nccl);
  if (!status.ok()) {
    std::fprintf(stderr, "cuhal consumer: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
