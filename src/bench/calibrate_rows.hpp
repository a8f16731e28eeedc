#pragma once

// The profile rows of `calibrate --measure host,interference` (src/predict/CALIBRATION.md): built as
// the profile's own types, so that they are written by the readers' writers (section_json) and read
// back by them unchanged.

#include <string>
#include <vector>

#include "predict/calibration.hpp"
#include "program/host_costs.hpp"
#include "runtime/calibration_probes.hpp"

namespace commscale {

// What commscale's executor does on the host per op with per-op timing (train's default), and once a
// step (runtime/cuda/cuda_step_engine.cpp run_step):
//  - a GEMM: the cuBLASLt call and the op's end event;
//  - a memory kernel: its launch with the error check, and the end event;
//  - a collective or a transfer: the NCCL call with the wait for its enqueue, the end event, and one
//    cross-stream wait (on the compute op that produced its data);
//  - the step: the barrier over the job, 6 event records and 8 cross-stream waits (the step's start
//    and end on five streams: compute, tp, dp, pp-send, pp-recv; a program that offloads also forks and
//    joins the h2d and d2h streams, 2 records and 4 waits more, not counted here).
inline constexpr int kStepEventRecords = 6;
inline constexpr int kStepStreamWaits = 8;

// The "commscale" host row: every phase at the same costs, no synchronisation inside the step.
[[nodiscard]] HostCosts commscale_host_costs(const HostIssueTimes& t, double barrier_us, const std::string& measured_by);
[[nodiscard]] predict::DeviceFigures device_figures(const HostIssueTimes& t, const std::string& measured_by);

// One row per measurement: probe_GBps is the probe's rate alone (0 when it only held SMs), the
// slowdowns are the time together over the time alone (the probe's: its rate alone over its rate
// during the overlap; 1 when it only held SMs). A measurement whose slowdown a profile would refuse
// (below 0.9 or above 100: a broken run, not interference) is left out and named in `skipped`.
[[nodiscard]] std::vector<predict::InterferencePoint> interference_points(const InterferenceResult& r,
                                                                        const std::string& measured_by,
                                                                        std::vector<std::string>* skipped);

}  // namespace commscale
