#pragma once

// Doctor's per-GPU phase, on each rank's own GPU: what NVML says (PCIe link under load, NVLink links,
// clocks and the reasons they are held, ECC, retired pages and remapped rows, XIDs while doctor
// runs) and a sustained GEMM (calibrate's cuBLASLt probe: it runs --gemm-seconds before it is timed,
// while a thread samples NVML). Each rank measures; rank 0 judges every rank's measurement.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/doctor_result.hpp"
#include "core/run_context.hpp"
#include "hw/machine.hpp"
#include "predict/doctor_expect.hpp"
#include "runtime/nvml_health.hpp"

namespace commscale {

struct GpuMeasurement {
  RankPlacement placement;
  std::string nvml_status;  // empty when NVML answered; else why not
  PcieLink pcie_max;        // NVML: what this GPU in this slot can run at
  PcieLink pcie_loaded;     // the widest and fastest seen while the GEMM ran
  int nvlinks_present = 0;
  int nvlinks_active = 0;
  std::optional<int> sm_clock_MHz;             // median while the GEMM ran
  std::optional<int> sm_clock_max_MHz;         // NVML's maximum
  std::optional<std::uint64_t> clock_reasons;  // every reason seen while the GEMM ran
  std::optional<double> power_W;               // median while the GEMM ran
  std::optional<double> power_limit_W;
  std::optional<int> temperature_C;  // hottest while the GEMM ran
  int samples = 0;                   // NVML samples taken while the GEMM ran
  GpuErrorState errors;
  std::optional<std::vector<std::uint64_t>> xids;  // filled at the end of the run
  // The GEMM: its shape and type, rate, or why it did not run.
  std::string gemm_status;  // empty when it ran
  std::string gemm_what;    // "bf16 8192 x 8192 x 8192, cuBLASLt, after 2.0 s of the same GEMM"
  DataType gemm_type = DataType::kBFloat16;
  double gemm_TFLOPS = 0.0;
  int hog_sms = 0;  // --inject-sm-hog: SMs held during the GEMM (0: none)
};

void to_json(nlohmann::json& out, const GpuMeasurement& m);
void from_json(const nlohmann::json& in, GpuMeasurement& m);

// Keeps NVML open on this rank's GPU from the start of the phase to the end of the run, so the XID
// events of the whole run are seen.
class GpuDoctor {
 public:
  GpuDoctor(const DoctorOptions& options, const RankPlacement& placement);
  ~GpuDoctor();
  GpuDoctor(const GpuDoctor&) = delete;
  GpuDoctor& operator=(const GpuDoctor&) = delete;

  [[nodiscard]] GpuMeasurement measure(int world_rank);
  // The XID events since the constructor; nullopt where NVML cannot watch them.
  [[nodiscard]] std::optional<std::vector<std::uint64_t>> xids();

 private:
  void run_gemm(GpuMeasurement& m, int world_rank);

  const DoctorOptions& options_;
  RankPlacement placement_;
  std::string nvml_status_;
  std::unique_ptr<NvmlHealth> nvml_;
};

// Rank 0: every check of one GPU's measurement but XIDs, and the XID check once m.xids is filled.
[[nodiscard]] std::vector<predict::DoctorCheck> gpu_checks(const GpuMeasurement& m,
                                                           const predict::DoctorExpectations& expect, double min_ratio);
[[nodiscard]] predict::DoctorCheck xid_check(const GpuMeasurement& m);

// "node-a rank 3 GPU 3 [0000:4e:00.0]".
[[nodiscard]] std::string describe_rank(const RankPlacement& p);
[[nodiscard]] predict::CheckPlace place_of(const RankPlacement& p);

}  // namespace commscale
