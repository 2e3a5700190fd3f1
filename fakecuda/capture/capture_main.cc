// Copyright 2026 The cuhal Authors.
// fakecuda_capture: records device profiles and error strings from the real driver.
//   fakecuda_capture OUT_DIR [ORDINAL]
// writes OUT_DIR/device<N>.json (one per device, or only ORDINAL) and
// OUT_DIR/cuda_error_strings.inc, creating OUT_DIR; a file it cannot write is an error (exit 1).
// Uses the real binding (libcuda.so.1, or $CUHAL_LIBCUDA_PATH).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/symbols/real_loader.h"
#include "fakecuda/profile_capture.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [ORDINAL]\n", argv[0]);
    return 2;
  }
  std::string out = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    std::fprintf(stderr, "fakecuda_capture: cannot create %s: %s\n", out.c_str(),
                 ec.message().c_str());
    return 1;
  }
  // Writes `text` to `path`; false (with a message) when the file cannot be written whole.
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream file(path);
    file << text;
    file.close();
    if (!file) std::fprintf(stderr, "fakecuda_capture: cannot write %s\n", path.c_str());
    return static_cast<bool>(file);
  };
  auto cuda = cuhal::RealCuda::Load();
  if (!cuda.ok()) {
    std::fprintf(stderr, "fakecuda_capture: %s\n", cuda.status().ToString().c_str());
    return 1;
  }
  const cuhal::CudaApi& api = (*cuda)->api();
  if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
    std::fprintf(stderr, "fakecuda_capture: cuInit failed with CUresult %d\n", static_cast<int>(r));
    return 1;
  }
  int count = 0;
  api.cuDeviceGetCount(&count);
  int first = argc > 2 ? std::atoi(argv[2]) : 0;
  int last = argc > 2 ? first + 1 : count;
  for (int i = first; i < last; ++i) {
    fakecuda::DeviceProfile profile;
    std::string skipped, error;
    if (!fakecuda::CaptureProfile(api, i, &profile, &skipped, &error)) {
      std::fprintf(stderr, "fakecuda_capture: device %d: %s\n", i, error.c_str());
      return 1;
    }
    std::string path = out + "/device" + std::to_string(i) + ".json";
    if (!write(path, fakecuda::ProfileToJson(profile))) return 1;
    std::printf("device %d: %s, %zu bytes, %zu attributes -> %s\n", i, profile.name.c_str(),
                profile.total_memory, profile.attributes.size(), path.c_str());
    if (!skipped.empty()) std::printf("attributes the driver rejected:\n%s", skipped.c_str());
  }
  if (!write(out + "/cuda_error_strings.inc", fakecuda::CaptureErrorStrings(api))) return 1;
  std::printf("error strings -> %s/cuda_error_strings.inc\n", out.c_str());
  return 0;
}
