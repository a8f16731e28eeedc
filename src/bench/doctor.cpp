#include "bench/doctor.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/doctor_comm.hpp"
#include "bench/doctor_gpu.hpp"
#include "bench/doctor_node.hpp"
#include "bench/doctor_pairs.hpp"
#include "core/size.hpp"

namespace commscale {
namespace {

using predict::DoctorCheck;

class DoctorRun {
 public:
  DoctorRun(const DoctorOptions& o, RankSession& session, const MpiComm& world,
            const predict::DoctorExpectations* expect, DoctorReporter* reporter)
      : o_(o),
        session_(session),
        world_(world),
        expect_(expect),
        reporter_(reporter),
        job_(job_layout(session.context)),
        gpu_(session.backend->kind() == "gpu"),
        size_(o.size.value_or(default_collective_size(gpu_))),
        pair_size_(o.pair_size.value_or(default_pair_size(gpu_))),
        pairs_(plan_pairs(o.pairs, job_)),
        min_ratio_(o.min_ratio.value_or(gpu_ ? predict::kDefaultMinRatio : predict::kCpuDefaultMinRatio)) {}

  DoctorReport run();

 private:
  [[nodiscard]] bool rank0() const { return world_.rank() == 0; }
  [[nodiscard]] bool wanted(const std::string& phase) const {
    return std::find(o_.phases.begin(), o_.phases.end(), phase) != o_.phases.end();
  }
  void phase(const std::string& name, const std::string& what, const std::function<void()>& body);
  void emit(DoctorCheck c);
  void emit_all(std::vector<DoctorCheck> checks) {
    for (DoctorCheck& c : checks) emit(std::move(c));
  }
  void begin();
  void gpu_phase();
  void node_phase();
  void node_collectives();
  void job_phase();
  void pairs_phase();
  void xid_phase();
  [[nodiscard]] std::vector<std::string> gather(const std::string& mine) const { return world_.allgather(mine); }

  const DoctorOptions& o_;
  RankSession& session_;
  const MpiComm& world_;
  const predict::DoctorExpectations* expect_;
  DoctorReporter* reporter_;
  JobLayout job_;
  bool gpu_;
  Bytes size_;
  Bytes pair_size_;
  PairPlan pairs_;
  double min_ratio_;
  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<GpuDoctor> gpu_doctor_;
  std::vector<GpuMeasurement> gpus_;                // rank 0
  std::map<std::string, std::string> nearest_nic_;  // rank 0: GPU bus id -> NIC
  DoctorReport report_;
};

void DoctorRun::emit(DoctorCheck c) {
  if (!rank0()) return;
  if (reporter_ != nullptr) reporter_->check(c);
  report_.checks.push_back(std::move(c));
}

void DoctorRun::phase(const std::string& name, const std::string& what, const std::function<void()>& body) {
  if (!wanted(name)) return;
  if (rank0() && reporter_ != nullptr) reporter_->phase_begin(name, what);
  const auto start = std::chrono::steady_clock::now();
  body();
  world_.barrier();
  const DoctorPhaseTime t{name, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), what};
  if (!rank0()) return;
  if (reporter_ != nullptr) reporter_->phase_end(t);
  report_.phases.push_back(t);
}

void DoctorRun::begin() {
  DoctorSetup& s = report_.setup;
  s.context = session_.context;
  s.backend = session_.backend->kind();
  s.min_ratio = min_ratio_;
  s.hosts = job_.hosts;
  s.ranks = world_.size();
  s.size = size_;
  s.pair_size = pair_size_;
  s.pair_units = pairs_.units;
  s.pair_unit_count = pairs_.unit_count;
  s.rounds = pairs_.rounds;
  s.expectation_source = expect_->source();
  s.expectation_notes = expect_->notes();
  s.phases = o_.phases;
  s.command_line = session_.context.command_line;
  if (reporter_ != nullptr) reporter_->begin(s);
}

void DoctorRun::gpu_phase() {
  if (!gpu_) {
    emit(predict::not_run("gpu", "gpu", "every rank",
                          "the CPU backend has no GPU: no NVML checks (identity, PCIe link, NVLink, clocks, ECC, "
                          "XID) and no GEMM"));
    return;
  }
  const RankPlacement& me = session_.context.ranks.at(static_cast<std::size_t>(world_.rank()));
  gpu_doctor_ = std::make_unique<GpuDoctor>(o_, me);
  const std::vector<std::string> all = gather(nlohmann::json(gpu_doctor_->measure(world_.rank())).dump());
  if (!rank0()) return;
  for (const std::string& text : all) {
    gpus_.push_back(nlohmann::json::parse(text).get<GpuMeasurement>());
    emit_all(gpu_checks(gpus_.back(), *expect_, min_ratio_));
  }
}

void DoctorRun::node_phase() {
  const bool first_on_node = session_.node.local_rank == 0;
  std::string mine;
  if (first_on_node) {
    std::vector<std::string> buses;
    for (int r : job_.node_ranks.at(static_cast<std::size_t>(job_.node_of.at(static_cast<std::size_t>(world_.rank())))))
      buses.push_back(job_.ranks.at(static_cast<std::size_t>(r)).pci_bus_id);
    mine = nlohmann::json(measure_node(o_, session_.node.host, buses, gpu_)).dump();
  }
  const std::vector<std::string> all = gather(mine);
  if (rank0()) {
    std::vector<NodeMeasurement> nodes;
    for (const std::string& text : all) {
      if (text.empty()) continue;
      nodes.push_back(nlohmann::json::parse(text).get<NodeMeasurement>());
      nearest_nic_.insert(nodes.back().nearest_nic.begin(), nodes.back().nearest_nic.end());
    }
    emit_all(node_checks(nodes, *expect_, min_ratio_));
  }
  node_collectives();
}

void DoctorRun::node_collectives() {
  if (job_.hosts.size() == 1) {
    emit(predict::not_run("node", "node_all_reduce", job_.hosts.front(),
                          "one node: the job phase's collectives are this node's"));
    return;
  }
  if (job_.largest_node() < 2) {
    emit(predict::not_run("node", "node_all_reduce", "every node", "one rank per node: no collective inside a node"));
    return;
  }
  const GroupTimes t =
      time_groups(Collective::kAllReduce, size_, job_.node_ranks, o_, *session_.backend, *comm_, world_);
  if (rank0()) {
    emit_all(
        collective_checks(Collective::kAllReduce, t, size_, job_, "node", "node_all_reduce", *expect_, min_ratio_));
  }
}

void DoctorRun::job_phase() {
  if (world_.size() < 2) {
    emit(predict::not_run("job", "all_reduce", "the job", "one rank: no collective to time"));
    return;
  }
  std::vector<int> all(static_cast<std::size_t>(world_.size()));
  for (int r = 0; r < world_.size(); ++r) all[static_cast<std::size_t>(r)] = r;
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather}) {
    const GroupTimes t = time_groups(c, size_, {all}, o_, *session_.backend, *comm_, world_);
    if (rank0()) emit_all(collective_checks(c, t, size_, job_, "job", std::string(name(c)), *expect_, min_ratio_));
  }
}

void DoctorRun::pairs_phase() {
  if (pairs_.units == "none") {
    emit(predict::not_run("pairs", "pair", "the job", pairs_.why_none));
    return;
  }
  const PairRoundsResult r =
      run_pair_rounds(pairs_, job_, pair_size_, o_, *session_.backend, *comm_, world_, rank0() ? expect_ : nullptr);
  if (!rank0()) return;
  report_.round_seconds = r.round_seconds;
  std::vector<DoctorCheck> checks;
  std::vector<predict::Suspect> suspects;
  judge_pair_rounds(pairs_, r, job_, pair_size_, min_ratio_, nearest_nic_, &checks, &suspects);
  emit_all(std::move(checks));
  for (predict::Suspect& s : suspects) report_.suspects.push_back(std::move(s));
  if (r.wrong > 0) {
    DoctorCheck data = predict::not_run("pairs", "data", "the pair rounds", "");
    data.status = predict::CheckStatus::kFail;
    data.measured = static_cast<double>(r.wrong);
    data.unit = "wrong elements";
    data.detail = "a checked broadcast delivered wrong data";
    emit(std::move(data));
  }
}

void DoctorRun::xid_phase() {
  if (!gpu_doctor_) return;
  const std::optional<std::vector<std::uint64_t>> mine = gpu_doctor_->xids();
  const std::vector<std::string> all = gather(mine ? nlohmann::json(*mine).dump() : "null");
  if (!rank0()) return;
  for (std::size_t r = 0; r < all.size() && r < gpus_.size(); ++r) {
    const nlohmann::json j = nlohmann::json::parse(all[r]);
    if (!j.is_null()) gpus_[r].xids = j.get<std::vector<std::uint64_t>>();
    emit(xid_check(gpus_[r]));
  }
}

DoctorReport DoctorRun::run() {
  const auto start = std::chrono::steady_clock::now();
  if (rank0()) begin();
  comm_ = session_.backend->world();
  phase("gpu", "each rank's GPU: NVML and a sustained GEMM", [this] { gpu_phase(); });
  phase("node", fmt::format("each node: NICs, copies, all_reduce of {} inside each node", format_size(size_)),
        [this] { node_phase(); });
  phase("job", fmt::format("all_reduce and all_gather of {} across {} ranks", format_size(size_), world_.size()),
        [this] { job_phase(); });
  phase("pairs",
        pairs_.units == "none"
            ? pairs_.why_none
            : fmt::format("{} round(s) (ceil(log2 {})) of disjoint {} pairs, each way, broadcast of {}", pairs_.rounds,
                          pairs_.unit_count, pairs_.units == "nodes" ? "node" : "rank", format_size(pair_size_)),
        [this] { pairs_phase(); });
  if (wanted("gpu")) xid_phase();
  if (rank0()) {
    std::vector<predict::Suspect> found = predict::suspects_of(report_.checks);
    report_.suspects.insert(report_.suspects.begin(), found.begin(), found.end());
    if (reporter_ != nullptr) {
      for (const predict::Suspect& s : report_.suspects) reporter_->suspect(s);
    }
    report_.verdict = predict::tally(report_.checks);
    report_.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (reporter_ != nullptr) reporter_->end(report_);
  }
  const double failed = world_.broadcast(static_cast<double>(report_.verdict.failed), 0);
  report_.verdict.failed = static_cast<int>(failed);
  return std::move(report_);
}

}  // namespace

Bytes default_collective_size(bool gpu) { return gpu ? Bytes(4ull << 30) : Bytes(1ull << 20); }
Bytes default_pair_size(bool gpu) { return gpu ? Bytes(1ull << 30) : Bytes(4ull << 20); }

DoctorReport run_doctor(const DoctorOptions& options, RankSession& session, const MpiComm& world,
                        const predict::DoctorExpectations* expect, DoctorReporter* reporter) {
  DoctorRun run(options, session, world, expect, reporter);
  return run.run();
}

}  // namespace commscale
