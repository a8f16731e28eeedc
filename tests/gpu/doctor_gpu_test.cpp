// Doctor's per-GPU phase on a real GPU: NVML answers, the sustained GEMM runs at what the catalog
// expects of the GPU, and with half its SMs held by --inject-sm-hog's kernel the GEMM check fails and
// names this rank's GPU. Skips without a GPU; judges only a GPU the catalog knows.
#include <gtest/gtest.h>

#include "bench/doctor_gpu.hpp"
#include "hw/catalog.hpp"
#include "hw/gpu_match.hpp"
#include "hw/topology_dir.hpp"
#include "runtime/gpu.hpp"
#include "runtime/session.hpp"

namespace commscale {
namespace {

const predict::DoctorCheck& find(const std::vector<predict::DoctorCheck>& checks, const std::string& name) {
  for (const predict::DoctorCheck& c : checks) {
    if (c.check == name) return c;
  }
  throw std::runtime_error("no check " + name);
}

TEST(GpuDoctor, HealthyGemmPassesAndAHeldHalfOfTheSmsFailsIt) {
  std::string why;
  if (visible_gpu_count(&why) == 0) GTEST_SKIP() << why;
  const MpiComm world = MpiComm::world();
  if (world.size() > visible_gpu_count(&why)) GTEST_SKIP() << "more ranks than GPUs";
  RuntimeOptions runtime;
  runtime.backend = BackendChoice::kGpu;
  const RankSession session = start_rank_session(runtime, world);
  const RankPlacement& me = session.context.ranks.at(static_cast<std::size_t>(world.rank()));

  DoctorOptions o;
  o.gemm_seconds = 1.0;
  o.gemm_reps = 20;
  GpuMeasurement healthy = GpuDoctor(o, me).measure(world.rank());
  EXPECT_EQ(healthy.nvml_status, "") << "NVML should load on a GPU machine";
  EXPECT_EQ(healthy.gemm_status, "");
  EXPECT_GT(healthy.gemm_TFLOPS, 0.0);
  EXPECT_TRUE(healthy.pcie_loaded.known());
  EXPECT_GT(healthy.samples, 10);  // sampled every 25 ms over about a second
  EXPECT_TRUE(healthy.clock_reasons.has_value());

  o.sm_hog = SmHogRequest{world.rank(), 0.5};
  const GpuMeasurement held = GpuDoctor(o, me).measure(world.rank());
  EXPECT_GT(held.hog_sms, 0);
  // Half the SMs gone: the GEMM runs at well under 0.85 of its healthy rate (about half of it).
  EXPECT_LT(held.gemm_TFLOPS, 0.75 * healthy.gemm_TFLOPS) << held.gemm_what;

  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  const std::optional<std::string> gpu = hw::match_gpu_name(me.gpu_name, catalog.gpu_names());
  if (!gpu) GTEST_SKIP() << me.gpu_name << " is not in the catalog: nothing to judge it against";
  std::optional<hw::ClusterSpec> one;
  for (const std::string& name : catalog.cluster_names()) {
    hw::ClusterSpec c = catalog.cluster(name, "test");
    if (c.gpu.name == *gpu && c.gpus_per_node() == 1) one = std::move(c);
  }
  if (!one) GTEST_SKIP() << "no one-GPU catalog cluster of " << *gpu;
  const predict::DoctorExpectations expect(catalog, *one, one->name, 1, nullptr, {});
  healthy.xids = std::vector<std::uint64_t>{};
  const std::vector<predict::DoctorCheck> ok = gpu_checks(healthy, expect, predict::kDefaultMinRatio);
  EXPECT_EQ(find(ok, "identity").status, predict::CheckStatus::kPass);
  EXPECT_EQ(find(ok, "gemm").status, predict::CheckStatus::kPass) << find(ok, "gemm").detail;
  EXPECT_EQ(find(ok, "pcie_link").status, predict::CheckStatus::kPass) << find(ok, "pcie_link").detail;
  EXPECT_EQ(xid_check(healthy).status, predict::CheckStatus::kPass);
  const std::vector<predict::DoctorCheck> held_checks = gpu_checks(held, expect, predict::kDefaultMinRatio);
  const predict::DoctorCheck slow = find(held_checks, "gemm");  // a copy: g++ 13 warns of a dangling reference
  EXPECT_EQ(slow.status, predict::CheckStatus::kFail) << slow.detail;
  EXPECT_EQ(slow.place.rank, world.rank());
  EXPECT_EQ(slow.place.pci_bus_id, me.pci_bus_id);
}

}  // namespace
}  // namespace commscale
