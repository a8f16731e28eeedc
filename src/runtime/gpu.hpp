#pragma once

// The GPU backend's entry points. Implemented in runtime/cuda/ when commscale is built with CUDA,
// and by runtime/no_gpu.cpp (which reports why there is none) otherwise.

#include <memory>
#include <string>

#include "runtime/backend.hpp"
#include "runtime/mpi.hpp"

namespace commscale {

// The number of CUDA devices this process sees. 0, with the reason in *why, when there are none:
// no driver, no device, CUDA_VISIBLE_DEVICES empty, or a build without the GPU backend.
[[nodiscard]] int visible_gpu_count(std::string* why);

// The GPU backend on CUDA device `device`; NCCL communicators bootstrap over `world`, and their
// non-blocking initialisation must complete within `timeout` (0: no limit).
[[nodiscard]] std::unique_ptr<Backend> make_gpu_backend(const MpiComm& world, int device, Seconds timeout);

// NVIDIA's driver version ("580.159.03") read through NVML, which is loaded with dlopen so the binary
// runs where it is absent; empty when it cannot be read.
[[nodiscard]] std::string nvml_driver_version();

}  // namespace commscale
