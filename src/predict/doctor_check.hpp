#pragma once

// `commscale doctor`'s unit of output: one check of one thing (a GPU, a link, a NIC, a node, a pair of
// nodes) against what it should deliver. A check with a number states what was measured, what was
// expected, where the expectation comes from, the ratio and the threshold it was judged by; a check
// that could not run says why. Pure data and the few rules that judge it, so the verdict is tested
// without a GPU or MPI.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commscale::predict {

enum class CheckStatus : std::uint8_t {
  kPass,    // measured at or above threshold x expected (or a state check that holds)
  kFail,    // below it: the thing named is slower than it should be, or in a bad state
  kInfo,    // measured and shown, not judged (no expectation, or one known to be unreliable)
  kNotRun,  // could not run here: `detail` says why (no GPU, no NVML, one node, ...)
};
[[nodiscard]] std::string_view name(CheckStatus s) noexcept;  // "pass", "FAIL", "info", "not run"

// Where one check's subject lives; -1 / empty where it does not apply.
struct CheckPlace {
  std::string host;
  int rank = -1;
  int gpu = -1;            // CUDA device ordinal on that host
  std::string pci_bus_id;  // of the GPU
  std::string link;        // "gpu0 -> gpu3", "node-a -> node-c", "PCIe"
  std::string nic;         // "mlx5_3"
  bool operator==(const CheckPlace&) const = default;
};

struct DoctorCheck {
  std::string phase;    // "gpu", "node", "job", "pairs"
  std::string check;    // "gemm", "pcie_link", "nvlink_links", "clocks", "ecc", "xid", "p2p_copy",
                        // "host_copy", "nic_rate", "node_all_reduce", "all_reduce", "pair", "data"
  std::string subject;  // what a person reads: "node07 rank 3 GPU 3 [0000:4e:00.0]"
  CheckPlace place;
  std::optional<double> measured;
  std::optional<double> expected;
  std::string unit;        // "GB/s", "TFLOP/s", "links", "GT/s x lanes"
  std::string basis;       // where `expected` comes from, one phrase
  double threshold = 0.0;  // the ratio below which it fails (--min-ratio); 0 when not judged by ratio
  CheckStatus status = CheckStatus::kInfo;
  std::string detail;  // what else matters: the reason for a fail, not run or info; sample spread

  [[nodiscard]] std::optional<double> ratio() const noexcept;
  bool operator==(const DoctorCheck&) const = default;
};

// Sets the status of a check that has a measurement and maybe an expectation: pass when
// measured >= min_ratio x expected, fail below; info (with `detail` saying so) without an expectation
// or a measurement. Records min_ratio as the threshold.
[[nodiscard]] DoctorCheck judge(DoctorCheck check, double min_ratio);

// A check that could not run: status not run, `why` in detail.
[[nodiscard]] DoctorCheck not_run(std::string phase, std::string check, std::string subject, std::string why);

// One thing doctor blames, from one or more failed checks: "node node-c (rank 2): its receive path"
// with the numbers behind it.
struct Suspect {
  std::string kind;  // "gpu", "rank", "node", "nic", "link"
  std::string name;  // "node-c", "rank 2 on node-a", "node-a -> node-c"
  CheckPlace place;
  std::string evidence;  // one sentence: which measurements, measured against expected
  bool operator==(const Suspect&) const = default;
};

// One suspect per failed check of the gpu, node and job phases (the pair rounds blame their own,
// predict/doctor_rounds.hpp): the GPU, NIC, link or node the check names, with its numbers.
[[nodiscard]] std::vector<Suspect> suspects_of(const std::vector<DoctorCheck>& checks);

// "412.3 GB/s against 370.8 expected (1.11)" or what a check without numbers says.
[[nodiscard]] std::string describe_numbers(const DoctorCheck& c);

// The outcome of a run: passed when no check failed.
struct Verdict {
  int passed = 0;
  int failed = 0;
  int info = 0;
  int not_run = 0;
  [[nodiscard]] bool ok() const noexcept { return failed == 0; }
};
[[nodiscard]] Verdict tally(const std::vector<DoctorCheck>& checks) noexcept;

// The default --min-ratio and why (src/bench/DOCTOR.md, "The threshold"): healthy runs of the same path on the
// project's GPUs differ by up to 8% between repetitions (nccl-tests' all_gather 4 GiB in place, 301.9
// and 325.8 GB/s, results/h200x2-2026-12-01) and the expectations below are set to what a healthy
// machine delivers; twice that spread below 1 passes every healthy repetition seen, while the faults
// doctor looks for (a PCIe link trained to x8, half the NVLink links down, a NIC at half rate, a
// second process on a GPU) cost a factor of 2 or more.
inline constexpr double kDefaultMinRatio = 0.85;
// On the CPU backend (MPI on host memory) doctor can only compare transfers with each other, and
// processes that share cores vary far more: on this project's 2-core machine, 94 healthy 4 MiB
// transfers in 11 runs of 3 to 8 namespace nodes ran at 0.263 to 2.007 of their peer reference, while
// a node's link throttled to 100 Mbit/s ran at 0.030 and a rank delayed 50 ms per call at 0.028-0.031
// (results/doctor-cpu-netns/README.md). 0.15 sits between the two, about 1.8 times from each.
inline constexpr double kCpuDefaultMinRatio = 0.15;

}  // namespace commscale::predict
