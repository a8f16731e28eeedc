#pragma once

// The SM clock under the board's power limit. Back-to-back GEMMs hold a GPU at its power limit, and it
// runs them at a lower clock than it reaches when memory-bound kernels (which draw less power) or idle
// time fill part of the step. calibrate's GEMM rows are timed at the clock 20 ms of an 8192^3 GEMM
// (its heat) leaves, the most power-hungry load; a step runs its GEMMs faster, the more so the smaller
// their share of its time. calibrate --measure clock times one GEMM alternating with the step's
// memory-bound kernel for 300 ms at shares from 1 down to 0.2 (CALIBRATION.md, "clock"):
// speedup(s) = its time as its GEMM row is timed over its time at s (above 1 even at s = 1: that GEMM
// back to back settles at a higher clock than the heat leaves), linear between the measured shares,
// the end points' value beyond them.
//
// In the step: a simulated rank's GEMM share is the time its compute ops spend in GEMMs (the GEMM part
// of a fused op) over the step time, so idle time counts as the memory kernel's (it draws less power
// still: the model is conservative there). apply_clock() re-simulates with every GEMM shortened by
// speedup(share), then with the share of that simulation, until the speedup settles. A curve applies
// to the GPU it was measured on only (the power limit and the clocks are that GPU's); without one,
// GEMMs run at their rows' rates.

#include <memory>
#include <string>

#include "hw/gpu_spec.hpp"
#include "predict/calibration.hpp"
#include "predict/interference.hpp"
#include "predict/simulator.hpp"

namespace commscale::predict {

class ClockModel {
 public:
  ClockModel() = default;  // no curve: every GEMM at its rows' rate
  explicit ClockModel(ClockCurve curve) : curve_(std::move(curve)) {}

  [[nodiscard]] bool empty() const noexcept { return curve_.points.empty(); }
  [[nodiscard]] const std::string& source() const noexcept { return curve_.source; }
  // A GEMM's row time over its time where GEMMs take `gemm_share` of the step (1 without a curve).
  [[nodiscard]] double speedup(double gemm_share) const noexcept;
  // The most any share gives, and at least 1: what a bound on a step's GEMM time divides by.
  [[nodiscard]] double max_speedup() const noexcept;

 private:
  ClockCurve curve_;
};

// The profile's curve where it was measured on `gpu`, else none; `note` (when given) says why a
// profile's curve is not used.
[[nodiscard]] ClockModel clock_for(const hw::GpuSpec& gpu, const CalibrationProfile* profile, std::string* note);

struct ClockResult {
  int iterations = 0;         // simulations run after the first
  double gemm_share = 0.0;    // of the step, mean over simulated ranks, at the settled clock
  double speedup = 1.0;       // mean over simulated ranks
};

// Re-simulates `sim` (a simulation of `set` under `costs` and `options`) with each rank's GEMMs at the
// speed its GEMM share allows, until the speedup changes by less than 0.1% (at most `max_iterations`
// more simulations); `sim` is replaced by the last simulation. Returns the durations it simulated
// with, for passes after it (interference), or null when the model is empty or nothing changed.
[[nodiscard]] std::unique_ptr<OpCosts> apply_clock(const ProgramSet& set, const OpCosts& costs,
                                                   const InterferenceCosts& shares, const ClockModel& model,
                                                   const SimulationOptions& options, Simulation& sim,
                                                   ClockResult* result, int max_iterations = 4);

}  // namespace commscale::predict
