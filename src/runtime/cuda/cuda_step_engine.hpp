#pragma once

#include <memory>

#include "runtime/mpi.hpp"
#include "runtime/step_engine.hpp"

namespace commscale {

// The GPU step engine on the current CUDA device (see cuda_step_engine.cpp). Collective over `world`.
[[nodiscard]] std::unique_ptr<StepEngine> make_cuda_step_engine(const StepEngineConfig& config, const MpiComm& world);

}  // namespace commscale
