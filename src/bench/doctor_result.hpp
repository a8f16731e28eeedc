#pragma once

// What `commscale doctor` was asked to do and what it found: plain records handed to the reporters
// (text, JSON, JSON Lines). The checks themselves are predict/doctor_check.hpp.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fault_injection.hpp"
#include "core/run_context.hpp"
#include "core/units.hpp"
#include "predict/doctor_check.hpp"

namespace commscale {

inline constexpr int kDoctorSchemaVersion = 1;
// The exit code of a run whose checks found something below expectation (src/runtime/RELIABILITY.md, "Exit codes").
inline constexpr int kDoctorBelowExpectation = 6;

// The phases, in the order they run.
inline constexpr const char* kDoctorPhases[] = {"gpu", "node", "job", "pairs"};

enum class PairUnits { kAuto, kNodes, kRanks };

// --inject-sm-hog RANK:FRACTION: on that rank, a kernel holds FRACTION of the GPU's SMs while the GEMM
// check runs (runtime/sm_hog.hpp).
struct SmHogRequest {
  int rank = 0;
  double fraction = 0.5;
};

struct DoctorOptions {
  std::vector<std::string> phases = {"gpu", "node", "job", "pairs"};  // those not skipped, in run order
  std::optional<double> min_ratio;  // default by backend: predict::kDefaultMinRatio, kCpuDefaultMinRatio
  std::optional<Bytes> size;        // collectives (job and node); default by backend (doctor.cpp)
  std::optional<Bytes> pair_size;   // each pair-round transfer
  int iters = 10;
  int warmup = 3;
  double gemm_seconds = 2.0;  // the GEMM runs this long before it is timed, so its clocks settle
  int gemm_reps = 30;
  PairUnits pairs = PairUnits::kAuto;
  std::string json_path;
  std::string jsonl_path;
  Seconds timeout{0.0};
  std::optional<RankDelay> slow_rank;  // testing
  std::optional<SmHogRequest> sm_hog;  // testing
};

// One phase as it ran: its wall time on rank 0, and what it did in a few words.
struct DoctorPhaseTime {
  std::string phase;
  double seconds = 0.0;
  std::string what;  // "2 rounds x 2 directions of 4-node pairs, 1 MiB"
};

struct DoctorSetup {
  RunContext context;
  std::string backend;  // "gpu" or "cpu"
  double min_ratio = predict::kDefaultMinRatio;
  std::vector<std::string> hosts;  // node order: node i is hosts[i]
  int ranks = 1;
  Bytes size;
  Bytes pair_size;
  std::string pair_units;  // "nodes", "ranks" or "none"
  int pair_unit_count = 0;
  int rounds = 0;                  // ceil(log2 units)
  std::string expectation_source;  // where expectations come from, one line
  std::vector<std::string> expectation_notes;
  std::vector<std::string> phases;  // those that will run
  std::string command_line;
};

struct DoctorReport {
  DoctorSetup setup;
  std::vector<predict::DoctorCheck> checks;
  std::vector<predict::Suspect> suspects;
  std::vector<DoctorPhaseTime> phases;
  std::vector<double> round_seconds;  // each pair round, both directions
  predict::Verdict verdict;
  double total_seconds = 0.0;
};

class DoctorReporter {
 public:
  virtual ~DoctorReporter() = default;
  virtual void begin(const DoctorSetup& setup) = 0;
  virtual void phase_begin(const std::string& /*phase*/, const std::string& /*what*/) {}
  virtual void check(const predict::DoctorCheck& check) = 0;
  virtual void suspect(const predict::Suspect& /*suspect*/) {}
  virtual void phase_end(const DoctorPhaseTime& /*phase*/) {}
  virtual void end(const DoctorReport& report) = 0;
};

// Forwards every call to each reporter in turn.
class DoctorReporterList final : public DoctorReporter {
 public:
  void add(std::unique_ptr<DoctorReporter> r) { reporters_.push_back(std::move(r)); }
  void begin(const DoctorSetup& s) override {
    for (auto& r : reporters_) r->begin(s);
  }
  void phase_begin(const std::string& p, const std::string& w) override {
    for (auto& r : reporters_) r->phase_begin(p, w);
  }
  void check(const predict::DoctorCheck& c) override {
    for (auto& r : reporters_) r->check(c);
  }
  void suspect(const predict::Suspect& s) override {
    for (auto& r : reporters_) r->suspect(s);
  }
  void phase_end(const DoctorPhaseTime& p) override {
    for (auto& r : reporters_) r->phase_end(p);
  }
  void end(const DoctorReport& report) override {
    for (auto& r : reporters_) r->end(report);
  }

 private:
  std::vector<std::unique_ptr<DoctorReporter>> reporters_;
};

}  // namespace commscale
