// The GPU step engine: one rank's step program on one GPU. Every op is issued, in program order, on
// the CUDA stream of its program stream (compute, tp, dp, pp-send, pp-recv, h2d, d2h); a dependency on an op of
// another stream is a cudaStreamWaitEvent on that op's completion event, so the host never waits
// inside a step. Compute ops are cuBLASLt GEMMs at their exact shapes and the memory-bound kernels of
// kernels/step_kernels.cu; collectives run on an NCCL communicator per group (split from one over all
// ranks); each directed point-to-point link (a pipeline's forward sends from stage i to i+1, say) has
// a two-rank communicator of its own, so a rank's sends to its next stage and receives from its
// previous one never queue behind each other inside NCCL, which runs one communicator's operations
// one at a time.
//
// Offload: a host copy (HostCopy) is a cudaMemcpyAsync between its pool slice and its slice of a pinned host
// pool (step_buffers.hpp) on the h2d or d2h stream, so it overlaps compute as a copy engine does; the host
// optimizer (MemoryKernelKind::kHostOptimizer) is, on the compute stream, the gradient copied into pinned memory,
// CPU AdamW in a host function (cudaLaunchHostFunc; host_adam.hpp, on this rank's share of the node's cores)
// and the weights copied back: the GPU waits for the host's update as ZeRO-Offload's step does.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/size.hpp"
#include "runtime/control_plane.hpp"
#include "kernels/step_kernels.cuh"
#include "runtime/cuda/cublaslt_gemm.hpp"
#include "runtime/cuda/cuda_queue.hpp"
#include "runtime/cuda/cuda_step_engine.hpp"
#include "runtime/cuda/device_memory.hpp"
#include "runtime/cuda/nccl_communicator.hpp"
#include "runtime/cuda/probe_timing.hpp"
#include "runtime/host_adam.hpp"
#include "runtime/host_pacer.hpp"

namespace commscale {
namespace {

std::unique_ptr<NcclComm> init_world_comm(const MpiComm& world, Seconds timeout) {
  ncclUniqueId id{};
  if (world.rank() == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, world.get()));
  ncclComm_t comm = nullptr;
  ncclConfig_t config = nonblocking_config();
  NCCL_CHECK(ncclCommInitRankConfig(&comm, world.size(), id, world.rank(), &config));
  auto out = std::make_unique<NcclComm>(comm);
  out->wait_ready(timeout, fmt::format("the initialisation of the NCCL communicator over all {} ranks", world.size()));
  return out;
}

// The streams a step forks from the compute stream and joins at its end: the five every program may use (what
// calibrate counts as the step's fixed host work, bench/calibrate_rows.hpp), and the copy streams only where the
// program copies, so that a program without offload costs the host what it did before they existed.
std::array<bool, kStreamCount> joined_streams(const std::vector<Op>& ops) {
  std::array<bool, kStreamCount> joined{};
  for (std::size_t s = 0; s < static_cast<std::size_t>(Stream::kHostToDevice); ++s) joined[s] = true;
  for (const Op& op : ops) joined[static_cast<std::size_t>(op.stream)] = true;
  return joined;
}

// The host optimizer's threads: the cores of this node shared by its ranks (each drives one GPU).
int host_threads(const MpiComm& world) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split_type(world.get(), MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &node));
  int ranks = 1;
  MPI_CHECK(MPI_Comm_size(node, &ranks));
  MPI_CHECK(MPI_Comm_free(&node));
  const auto cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, ranks));
}

// What the host function of one host optimizer op needs: it runs on CUDA's callback thread and calls no CUDA.
struct HostCall {
  HostAdam* adam = nullptr;
  HostUpdate* update = nullptr;
  std::byte* staging = nullptr;  // pinned: the gradient in, the weights out
};

void CUDART_CB run_host_update(void* data) {
  auto* call = static_cast<HostCall*>(data);
  HostUpdate& u = *call->update;
  call->adam->update(u.first, u.count, ++u.steps, call->staging, call->staging, u.width);
}

class CudaStepEngine final : public StepEngine {
 public:
  CudaStepEngine(const StepEngineConfig& config, const MpiComm& world)
      : config_(config),
        world_(world),
        ops_(ops_of(*config.set, config.rank)),
        buffers_(place_step_buffers(ops_, config.modelled)),
        cross_(cross_stream_dependencies(ops_)),
        gemm_(config.tf32),
        pacer_(config.host),
        joined_(joined_streams(ops_)),
        host_updates_(host_updates(ops_)) {
    allocate_pool();
    prepare_host_updates();
    make_group_comms();
    make_link_comms();
    for (std::size_t i = 0; i < 2 * ops_.size() + 2 + 2 * kStreamCount; ++i) events_.emplace_back();
    NCCL_CHECK(ncclGetVersion(&nccl_version_));
  }
  ~CudaStepEngine() override { CUDA_CHECK_NOTHROW(cudaFree(pool_)); }
  // Throws InputError naming --fp8 where the device has no FP8 tensor cores (before sm_89).
  void require_fp8_tensor_cores() const;
  CudaStepEngine(const CudaStepEngine&) = delete;
  CudaStepEngine& operator=(const CudaStepEngine&) = delete;

  [[nodiscard]] std::string method() const override {
    std::string s =
        "GPU backend: every op on its program stream's CUDA stream, dependencies as CUDA events; cuBLASLt "
        "GEMMs, memory-bound kernels, NCCL per group (two-rank communicators per point-to-point link); "
        "host copies as cudaMemcpyAsync from pinned memory on the h2d and d2h streams, the host optimizer as "
        "copies and CPU AdamW in a host function; ops timed with CUDA events (an op's start is the end of the "
        "op before it on its stream unless a cross-stream wait comes between)";
    if (has_fp8_gemm(ops_)) {
      s += "; the FP8 GEMMs (--fp8) as cuBLASLt FP8 GEMMs (E4M3/E5M2 inputs with unit scales, fp32 accumulate, "
           "bf16 output), their casts and amax work as memory kernels";
    }
    return s;
  }
  [[nodiscard]] const StepBuffers& buffers() const noexcept override { return buffers_; }
  [[nodiscard]] StepRun run_step(StepTiming timing) override;
  [[nodiscard]] std::optional<Seconds> standalone_gemm(const Gemm& g, int repetitions) override;

 private:
  void allocate_pool();
  void make_group_comms();
  void make_link_comms();
  void prepare_host_updates();
  void issue(const Op& op, cudaStream_t stream);
  void copy(const HostCopy& h, const OpBuffers& b, cudaStream_t stream);
  void update_on_host(const Op& op, const MemoryKernel& k, const OpBuffers& b, cudaStream_t stream);
  // After an NCCL call on a non-blocking communicator: waits until it has been enqueued.
  void enqueued(NcclComm& comm, const Op& op) {
    comm.wait_ready(config_.timeout, [&] { return fmt::format("enqueueing op {} ({})", op.id, op.name); });
  }
  // --debug-skip-collective: counts this rank's collective calls and says whether to skip this one.
  [[nodiscard]] bool skip_this_collective() {
    const std::uint64_t index = collectives_++;
    return config_.skip && config_.skip->rank == config_.rank && config_.skip->index <= index;
  }
  void wait_for(cudaEvent_t event);
  [[nodiscard]] std::string timeout_message();
  [[nodiscard]] cudaStream_t stream_of(const Op& op) const { return streams_[static_cast<std::size_t>(op.stream)].get(); }
  [[nodiscard]] std::byte* at(const Slice& s) const { return pool_ + s.offset; }
  [[nodiscard]] std::byte* host_at(const Slice& s) const {
    return host_pool_ ? host_pool_->data() + s.offset : nullptr;
  }
  [[nodiscard]] cudaEvent_t start_event(OpId id) const { return events_[2 * id].get(); }
  [[nodiscard]] cudaEvent_t end_event(OpId id) const { return events_[2 * id + 1].get(); }
  [[nodiscard]] cudaEvent_t step_event(std::size_t k) const { return events_[2 * ops_.size() + k].get(); }
  // The host's wait for every op issued so far (HostSync::kBeforeOptimizer).
  void sync_issued();

  StepEngineConfig config_;
  const MpiComm& world_;
  const std::vector<Op>& ops_;
  StepBuffers buffers_;
  std::vector<bool> cross_;  // ops another stream waits for: their end is always recorded
  std::byte* pool_ = nullptr;
  CublasLtGemm gemm_;
  std::array<CudaStream, kStreamCount> streams_;
  HostPacer pacer_;
  std::vector<CudaEvent> events_;  // start and end of each op; then step start, step end, one per stream
                                   // at the step's end and one per stream for the host's sync
  std::vector<cudaEvent_t> started_by_;  // per-op timing: the event that marks each op's start
  std::unique_ptr<NcclComm> world_comm_;
  std::vector<std::unique_ptr<NcclComm>> group_comms_;   // by handle; null where unused
  std::vector<int> group_sizes_;
  std::vector<int> group_ranks_;
  std::map<P2pLink, std::unique_ptr<NcclComm>> link_comms_;
  std::vector<std::shared_ptr<GroupCalls>> group_calls_;  // by handle: the collectives started on it
  std::map<P2pLink, std::shared_ptr<GroupCalls>> transfer_calls_;  // the transfers started on each link
  std::vector<std::uint64_t> call_of_;  // by op id: its number on its group or link (0: none)
  std::uint64_t collectives_ = 0;
  int nccl_version_ = 0;
  std::array<bool, kStreamCount> joined_;    // the streams a step forks and joins (joined_streams)
  std::unique_ptr<PinnedMemory> host_pool_;  // offload's host side; null where the program has none
  std::vector<HostUpdate> host_updates_;     // not resized after construction: host_calls_ point into it
  std::unique_ptr<HostAdam> adam_;
  std::vector<HostCall> host_calls_;  // by host update
};

void CudaStepEngine::require_fp8_tensor_cores() const {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (prop.major * 10 + prop.minor < 89) {
    throw InputError("--fp8",
                     fmt::format("FP8 GEMMs on {} (compute capability {}.{}) on {}, which has no FP8 tensor "
                                 "cores (compute capability 8.9 or later)",
                                 prop.name, prop.major, prop.minor, process_identity()),
                     "--fp8 none on this GPU");
  }
}

void CudaStepEngine::allocate_pool() {
  void* pool = nullptr;
  const cudaError_t rc = cudaMalloc(&pool, buffers_.pool.count());
  if (rc == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    throw RuntimeFailure(fmt::format(
        "out of GPU memory on {}: the plan needs {} per rank here (weights, gradients, optimizer states, activations "
        "as the memory model counts them; see `commscale plan`), and {} of {} is free: the plan does not fit",
        process_identity(), format_size(buffers_.pool), format_size(Bytes(free_bytes)), format_size(Bytes(total_bytes))));
  }
  CUDA_CHECK(rc);
  pool_ = static_cast<std::byte*>(pool);
  kernels::launch_fill_random(pool_, buffers_.pool.count(), static_cast<std::uint32_t>(config_.rank) + 1, nullptr);
  // FP8 GEMMs read finite FP8 values (NaN operands run faster, results/h200x1-2026-12-03c): the region GEMMs read,
  // which nothing writes, filled so that its bytes are.
  if (has_fp8_gemm(ops_)) {
    require_fp8_tensor_cores();
    kernels::launch_fill_random(pool_, buffers_.gemm_inputs.count(), static_cast<std::uint32_t>(config_.rank) + 1,
                                nullptr, true);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  if (buffers_.host_pool.count() == 0) return;
  host_pool_ = std::make_unique<PinnedMemory>(buffers_.host_pool, "host side of offload's copies");
  std::memset(host_pool_->data(), 0x3C, buffers_.host_pool.count());  // small, normal bf16/fp32 values
}

// The host optimizer's state, allocated once: every update of the program has its range of it.
void CudaStepEngine::prepare_host_updates() {
  if (host_updates_.empty()) return;
  adam_ = std::make_unique<HostAdam>(host_parameters(host_updates_), host_threads(world_));
  for (HostUpdate& u : host_updates_) {
    host_calls_.push_back(HostCall{adam_.get(), &u, host_at(buffers_.operands.at(u.op).host)});
  }
}

void CudaStepEngine::copy(const HostCopy& h, const OpBuffers& b, cudaStream_t stream) {
  if (h.direction == CopyDirection::kToHost) {
    CUDA_CHECK(cudaMemcpyAsync(host_at(b.host), at(b.c), h.bytes.count(), cudaMemcpyDeviceToHost, stream));
  } else {
    CUDA_CHECK(cudaMemcpyAsync(at(b.c), host_at(b.host), h.bytes.count(), cudaMemcpyHostToDevice, stream));
  }
}

// ZeRO-Offload's update, in stream order: the gradient out, CPU AdamW, the weights back.
void CudaStepEngine::update_on_host(const Op& op, const MemoryKernel& k, const OpBuffers& b, cudaStream_t stream) {
  const auto u =
      std::find_if(host_updates_.begin(), host_updates_.end(), [&](const HostUpdate& x) { return x.op == op.id; });
  HostCall& call = host_calls_.at(static_cast<std::size_t>(u - host_updates_.begin()));
  CUDA_CHECK(cudaMemcpyAsync(call.staging, at(b.a), k.bytes_read.count(), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaLaunchHostFunc(stream, run_host_update, &call));
  CUDA_CHECK(cudaMemcpyAsync(at(b.c), call.staging, k.bytes_written.count(), cudaMemcpyHostToDevice, stream));
}

// One split of the world communicator per group handle, in handle order on every rank.
void CudaStepEngine::make_group_comms() {
  world_comm_ = init_world_comm(world_, config_.timeout);
  call_of_.assign(ops_.size(), 0);
  int handles = 0;
  for (const RankProgram& r : config_.set->ranks) handles = std::max(handles, static_cast<int>(r.groups.size()));
  const RankProgram& me = config_.set->ranks.at(static_cast<std::size_t>(config_.rank));
  for (int h = 0; h < handles; ++h) {
    const int color = collective_group_color(*config_.set, config_.rank, static_cast<std::uint32_t>(h));
    int key = 0;
    if (color >= 0) {
      const std::vector<int>& m = me.groups[static_cast<std::size_t>(h)].members;
      key = static_cast<int>(std::find(m.begin(), m.end(), config_.rank) - m.begin());
    }
    ncclComm_t comm = nullptr;
    ncclConfig_t nccl_config = nonblocking_config();
    NCCL_CHECK(ncclCommSplit(world_comm_->get(), color >= 0 ? color : NCCL_SPLIT_NOCOLOR, key, &comm, &nccl_config));
    world_comm_->wait_ready(config_.timeout, fmt::format("the NCCL split for group handle {}", h));
    group_comms_.push_back(comm != nullptr ? std::make_unique<NcclComm>(comm) : nullptr);
    if (comm != nullptr) {
      group_comms_.back()->wait_ready(config_.timeout, fmt::format("the NCCL communicator of group handle {}", h));
    }
    group_calls_.push_back(color >= 0 ? group_calls(me.groups[static_cast<std::size_t>(h)].members) : nullptr);
    int size = 0;
    int rank = 0;
    if (comm != nullptr) {
      NCCL_CHECK(ncclCommCount(comm, &size));
      NCCL_CHECK(ncclCommUserRank(comm, &rank));
    }
    group_sizes_.push_back(size);
    group_ranks_.push_back(rank);
  }
}

// A two-rank communicator per directed link: the sender is its rank 0, the receiver rank 1. Every
// rank walks the links in the same order, so the blocking initializations cannot wait in a circle.
void CudaStepEngine::make_link_comms() {
  int tag = 0;
  for (const P2pLink& link : p2p_links(*config_.set)) {
    ++tag;
    if (link.from != config_.rank && link.to != config_.rank) continue;
    ncclUniqueId id{};
    if (link.from == config_.rank) {
      NCCL_CHECK(ncclGetUniqueId(&id));
      MPI_CHECK(MPI_Send(&id, sizeof(id), MPI_BYTE, link.to, tag, world_.get()));
    } else {
      MPI_CHECK(MPI_Recv(&id, sizeof(id), MPI_BYTE, link.from, tag, world_.get(), MPI_STATUS_IGNORE));
    }
    ncclComm_t comm = nullptr;
    ncclConfig_t nccl_config = nonblocking_config();
    NCCL_CHECK(ncclCommInitRankConfig(&comm, 2, id, link.from == config_.rank ? 0 : 1, &nccl_config));
    auto owned = std::make_unique<NcclComm>(comm);
    owned->wait_ready(config_.timeout,
                      fmt::format("the NCCL communicator from rank {} to rank {}", link.from, link.to));
    link_comms_.emplace(link, std::move(owned));
  }
}

void CudaStepEngine::issue(const Op& op, cudaStream_t stream) {
  const OpBuffers& b = buffers_.operands.at(op.id);
  if (const auto* g = std::get_if<Gemm>(&op.payload)) {
    gemm_.run(*g, at(b.a), at(b.b), at(b.c), stream);
  } else if (const auto* h = std::get_if<HostCopy>(&op.payload)) {
    copy(*h, b, stream);
  } else if (const auto* k = std::get_if<MemoryKernel>(&op.payload)) {
    if (k->kind == MemoryKernelKind::kHostOptimizer) {
      update_on_host(op, *k, b, stream);
      return;
    }
    kernels::launch_memory_kernel(k->kind, at(b.a), k->bytes_read.count(), at(b.c), k->bytes_written.count(), stream);
    CUDA_CHECK(cudaGetLastError());
  } else if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
    if (skip_this_collective()) return;  // testing: the op's end event completes at once
    const int size = group_sizes_.at(c->group);
    const int rank = group_ranks_.at(c->group);
    const CollectiveLayout l = collective_layout(c->kind, c->bytes, c->dtype, size, rank);
    std::byte* data = at(b.c);
    const CollectiveCall call{c->kind,
                              data + l.send_inplace_offset * size_of(c->dtype),
                              data + l.recv_inplace_offset * size_of(c->dtype),
                              l.count,
                              c->dtype,
                              ReduceOp::kSum,
                              0,
                              {},
                              {}};
    NcclComm& comm = *group_comms_.at(c->group);
    launch_nccl_collective(call, comm.get(), stream, rank, size, nccl_version_);
    call_of_.at(op.id) = ++group_calls_.at(c->group)->started;
    enqueued(comm, op);
  } else {
    const auto& p = std::get<PointToPoint>(op.payload);
    const RankProgram& me = config_.set->ranks.at(static_cast<std::size_t>(config_.rank));
    const bool send = p.direction == P2pDirection::kSend;
    const P2pLink link = link_of(me, p);
    NcclComm& link_comm = *link_comms_.at(link);
    std::shared_ptr<GroupCalls>& calls = transfer_calls_[link];
    if (!calls) calls = transfer_calls(std::string(name(me.groups.at(p.group).role)), link.from, link.to);
    call_of_.at(op.id) = ++calls->started;
    ncclComm_t comm = link_comm.get();
    const std::uint64_t count = p.bytes.count() / size_of(p.dtype);
    if (send) {
      NCCL_CHECK(ncclSend(at(b.c), count, nccl_type(p.dtype), 1, comm, stream));
    } else {
      NCCL_CHECK(ncclRecv(at(b.c), count, nccl_type(p.dtype), 0, comm, stream));
    }
    enqueued(link_comm, op);
  }
}

// Waits for `event`, checking every NCCL communicator for asynchronous errors, within the timeout.
void CudaStepEngine::wait_for(cudaEvent_t event) {
  using Clock = std::chrono::steady_clock;
  static const std::string kWhat = "the step's GPU work (compute and NCCL) to complete";
  const WaitingFor waiting(kWhat);  // for other ranks that ask, and this rank's report of a long wait
  const auto start = Clock::now();
  for (int polls = 0;; ++polls) {
    const cudaError_t state = cudaEventQuery(event);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) CUDA_CHECK(state);
    if (polls % 256 == 0) {
      for (auto& comm : group_comms_) {
        if (!comm) continue;
        ncclResult_t async = ncclSuccess;
        NCCL_CHECK(ncclCommGetAsyncError(comm->get(), &async));
        if (async != ncclSuccess && async != ncclInProgress) {
          throw_library_error("NCCL", "a collective of the step", nccl_error_text(async), __FILE__, __LINE__);
        }
      }
    }
    poll_control_plane();
    if (config_.timeout.value() > 0 &&
        Clock::now() - start > std::chrono::duration<double>(config_.timeout.value())) {
      std::string message = timeout_message();  // before aborting: it asks the other ranks over MPI
      for (auto& comm : group_comms_) {
        if (comm) comm->abort();
      }
      for (auto& [link, comm] : link_comms_) comm->abort();
      throw TimeoutError(message + " (the NCCL communicators were aborted)");
    }
    if (polls > 1000) std::this_thread::yield();
  }
}

void CudaStepEngine::sync_issued() {
  for (std::size_t s = 0; s < kStreamCount; ++s) {
    if (!joined_[s]) continue;
    const cudaEvent_t event = step_event(2 + kStreamCount + s);
    CUDA_CHECK(cudaEventRecord(event, streams_[s].get()));
    wait_for(event);
  }
}

// Names, per stream, the first communication op that has not completed and, for a collective, the ranks
// of its group that did not reach it. Every communication op's end event is recorded (run_step).
std::string CudaStepEngine::timeout_message() {
  std::string text = fmt::format("the step did not complete within {} s on {}", config_.timeout.value(),
                                 process_identity());
  const RankProgram& rp = config_.set->ranks.at(static_cast<std::size_t>(config_.rank));
  std::array<bool, kStreamCount> reported{};
  for (const Op& op : ops_) {
    const auto stream = static_cast<std::size_t>(op.stream);
    if (reported[stream] || std::holds_alternative<Gemm>(op.payload) ||
        std::holds_alternative<MemoryKernel>(op.payload) || cudaEventQuery(end_event(op.id)) != cudaErrorNotReady) {
      continue;
    }
    reported[stream] = true;
    text += fmt::format("; waiting for op {} ({}, stream {})", op.id, op.name, name(op.stream));
    if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
      const P2pLink link = link_of(rp, *p);
      text += fmt::format(": {}, transfer {} from rank {} to rank {}", describe_transfer(rp, op, *p),
                          call_of_.at(op.id), link.from, link.to);
      const auto calls = transfer_calls_.find(link);
      if (calls == transfer_calls_.end() || call_of_.at(op.id) == 0) continue;
      const std::string diagnosis = diagnose_group(*calls->second, call_of_.at(op.id));
      if (!diagnosis.empty()) text += "; " + diagnosis;
      continue;
    }
    const auto* c = std::get_if<CollectiveOp>(&op.payload);
    if (c == nullptr || call_of_.at(op.id) == 0) continue;
    text += fmt::format(": {} of {} on group {}", name(c->kind), format_size(c->bytes), name(rp.groups.at(c->group).role));
    const std::string diagnosis = diagnose_group(*group_calls_.at(c->group), call_of_.at(op.id));
    if (!diagnosis.empty()) text += ", " + diagnosis;
  }
  return text;
}

StepRun CudaStepEngine::run_step(StepTiming timing) {
  const bool per_op = timing == StepTiming::kPerOp;
  const cudaStream_t compute = streams_[0].get();
  world_.barrier();
  CUDA_CHECK(cudaEventRecord(step_event(0), compute));
  for (std::size_t s = 1; s < kStreamCount; ++s) {
    if (joined_[s]) CUDA_CHECK(cudaStreamWaitEvent(streams_[s].get(), step_event(0), 0));
  }
  // Per-op timing records one event per op where it can: back to back on a stream, an op starts when
  // the one before it ends, so that end event is its start too. Each event costs GPU time (about a
  // microsecond), which is what keeps per-op timing within 1% of the step. At a framework's host costs
  // the GPU waits for the host between ops, and each op gets a start event of its own, recorded when
  // it is issued, so that the wait shows as idle time and not as the op's.
  if (per_op) started_by_.assign(ops_.size(), nullptr);
  std::array<cudaEvent_t, kStreamCount> last_end{};
  pacer_.begin_step();
  for (const Op& op : ops_) {
    const cudaStream_t stream = stream_of(op);
    const auto s = static_cast<std::size_t>(op.stream);
    if (pacer_.must_sync_before(op)) {
      sync_issued();
      pacer_.synced();
    }
    pacer_.before_issue(op);
    if (pacer_.active()) last_end[s] = nullptr;
    for (OpId d : op.deps) {
      if (ops_[d].stream != op.stream) {
        CUDA_CHECK(cudaStreamWaitEvent(stream, end_event(d), 0));
        last_end[s] = nullptr;
      }
    }
    if (per_op) {
      if (last_end[s] == nullptr) {
        CUDA_CHECK(cudaEventRecord(start_event(op.id), stream));
        last_end[s] = start_event(op.id);
      }
      started_by_[op.id] = last_end[s];
    }
    issue(op, stream);
    const bool communication =
        !std::holds_alternative<Gemm>(op.payload) && !std::holds_alternative<MemoryKernel>(op.payload);
    if (per_op || cross_[op.id] || communication) {
      CUDA_CHECK(cudaEventRecord(end_event(op.id), stream));
      last_end[s] = end_event(op.id);
    }
  }
  // The step ends when every stream has finished.
  for (std::size_t s = 1; s < kStreamCount; ++s) {
    if (!joined_[s]) continue;
    CUDA_CHECK(cudaEventRecord(step_event(2 + s), streams_[s].get()));
    CUDA_CHECK(cudaStreamWaitEvent(compute, step_event(2 + s), 0));
  }
  CUDA_CHECK(cudaEventRecord(step_event(1), compute));
  wait_for(step_event(1));

  StepRun run;
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, step_event(0), step_event(1)));
  run.step = milliseconds(ms);
  if (per_op) {
    run.start_s.resize(ops_.size());
    run.end_s.resize(ops_.size());
    for (const Op& op : ops_) {
      CUDA_CHECK(cudaEventElapsedTime(&ms, step_event(0), started_by_[op.id]));
      run.start_s[op.id] = ms * 1e-3;
      CUDA_CHECK(cudaEventElapsedTime(&ms, step_event(0), end_event(op.id)));
      run.end_s[op.id] = ms * 1e-3;
    }
  }
  return run;
}

std::optional<Seconds> CudaStepEngine::standalone_gemm(const Gemm& g, int repetitions) {
  return median_gemm_time(gemm_, g, pool_, buffers_.gemm_inputs.count(), streams_[0].get(), repetitions);
}

}  // namespace

std::unique_ptr<StepEngine> make_cuda_step_engine(const StepEngineConfig& config, const MpiComm& world) {
  return std::make_unique<CudaStepEngine>(config, world);
}

}  // namespace commscale
