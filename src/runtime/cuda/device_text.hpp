#pragma once

// How CUDA's numbers and ids are written in reports: versions as "13.0", UUIDs as nvidia-smi prints them.

#include <string>

#include <cuda_runtime.h>
#include <fmt/format.h>

namespace commscale {

// A CUDA version code (13000) as "13.0".
[[nodiscard]] inline std::string cuda_version_text(int code) {
  return fmt::format("{}.{}", code / 1000, (code % 1000) / 10);
}

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L prints it.
[[nodiscard]] inline std::string gpu_uuid_text(const cudaUUID_t& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    text += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

}  // namespace commscale
