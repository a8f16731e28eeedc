// The CPU step engine: one rank's step program on host memory, with OpenBLAS GEMMs, plain loops for
// the memory-bound kernels and MPI non-blocking collectives and transfers, scheduled by one host
// thread that keeps the program's seven streams: each stream runs its ops one at a time in program
// order, an op starts once its cross-stream dependencies are done, communication runs in the
// background (progressed by MPI_Test) while the thread computes.
//
// Compute is in fp32 whatever the program's type (OpenBLAS's sgemm; the pool is laid out for 4-byte
// GEMM elements), FP8 GEMMs included: they run at their shapes in fp32, as method() says; communication moves
// the program's bytes in the program's type.
//
// Offload: the "device" pool is host memory here, so a host copy (HostCopy, on h2d or d2h) is a memcpy
// between its pool slice and its slice of a second host pool, run by the same thread as compute (it
// overlaps communication, not compute); the host optimizer copies the gradient out with a memcpy, runs
// CPU AdamW on this thread (host_adam.hpp: one rank per core) and copies the weights back.

#include <cblas.h>

#include <array>
#include <map>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <thread>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "core/error.hpp"
#include "core/size.hpp"
#include "runtime/control_plane.hpp"
#include "runtime/host_adam.hpp"
#include "runtime/host_backend.hpp"
#include "runtime/host_pacer.hpp"
#include "runtime/interrupt.hpp"
#include "runtime/mpi_communicator.hpp"
#include "runtime/step_engine.hpp"

namespace commscale {
namespace {

using Clock = std::chrono::steady_clock;

// out[i] = f(in[i mod n_in]) over the bytes a memory kernel writes: it reads and writes what the
// workload model says, with arithmetic of its kind.
void run_memory_kernel(const MemoryKernel& k, const float* in, float* out) {
  const std::uint64_t n_in = std::max<std::uint64_t>(1, k.bytes_read.count() / sizeof(float));
  const std::uint64_t n_out = k.bytes_written.count() / sizeof(float);
  if (k.bytes_read.count() < sizeof(float)) {
    std::fill(out, out + n_out, 1.0f);
    return;
  }
  for (std::uint64_t i = 0; i < n_out; ++i) {
    const float x = in[i % n_in];
    switch (k.kind) {
      case MemoryKernelKind::kActivation: out[i] = x / (1.0f + std::exp(-1.702f * x)); break;
      case MemoryKernelKind::kSoftmax: out[i] = std::exp(std::fmin(x, 10.0f)); break;
      case MemoryKernelKind::kNorm: out[i] = x * 0.999f + 0.001f; break;
      default: out[i] = x * 0.5f + 0.25f; break;
    }
  }
}

class HostStepEngine final : public StepEngine {
 public:
  HostStepEngine(const StepEngineConfig& config, const MpiComm& world, std::shared_ptr<const MpiTypes> types)
      : config_(config),
        world_(world),
        ops_(ops_of(*config.set, config.rank)),
        buffers_(place_step_buffers(ops_, config.modelled, sizeof(float))),
        pacer_(config.host),
        host_updates_(host_updates(ops_)),
        adam_(host_parameters(host_updates_)) {
    openblas_set_num_threads(1);  // one rank per core: threads would only contend
#if defined(__SSE__)
    _mm_setcsr(_mm_getcsr() | 0x8040);  // flush denormals to zero: their slow path is not what we measure
#endif
    allocate_pool();
    make_communicators(std::move(types));
    for (const Op& op : ops_) by_stream_[static_cast<std::size_t>(op.stream)].push_back(op.id);
  }

  [[nodiscard]] std::string method() const override {
    std::string s =
        "CPU backend: one host thread runs the seven streams (OpenBLAS sgemm, loops, MPI non-blocking "
        "operations progressed between ops; host copies as memcpy, the host optimizer as CPU AdamW); ops timed "
        "with the host's steady clock";
    if (has_fp8_gemm(ops_)) {
      s += "; the program's FP8 GEMMs (--fp8) ran in fp32 at their shapes, as every GEMM here: the CPU has no FP8, "
           "so their times are not FP8 times";
    }
    return s;
  }

  [[nodiscard]] StepRun run_step(StepTiming timing) override;
  [[nodiscard]] const StepBuffers& buffers() const noexcept override { return buffers_; }
  [[nodiscard]] std::optional<Seconds> standalone_gemm(const Gemm&, int) override { return std::nullopt; }

 private:
  struct InFlight {
    OpId op = 0;
    MpiCommunicator::Started started;
  };

  void allocate_pool() {
    const std::uint64_t bytes = buffers_.pool.count();
    pool_.reset(static_cast<float*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096 + 4096)));
    if (!pool_) {
      throw RuntimeFailure(fmt::format("the plan needs {:.2f} GiB of host memory per rank; allocating it failed on {}",
                                       buffers_.pool.gib(), process_identity()));
    }
    std::memset(pool_.get(), 0x3C, bytes);  // 0.0115 as fp32 or bf16, 1.06 as fp16: small, normal numbers
    if (buffers_.host_pool.count() == 0) return;
    const std::uint64_t host_bytes = (buffers_.host_pool.count() + 4095) / 4096 * 4096;
    host_pool_.reset(static_cast<std::byte*>(std::aligned_alloc(4096, host_bytes)));
    if (!host_pool_) {
      throw RuntimeFailure(fmt::format("offload's host buffers need {}; allocating them failed on {}",
                                       format_size(buffers_.host_pool), process_identity()));
    }
    std::memset(host_pool_.get(), 0x3C, buffers_.host_pool.count());
  }

  void make_communicators(std::shared_ptr<const MpiTypes> types) {
    const RankProgram& rp = config_.set->ranks.at(static_cast<std::size_t>(config_.rank));
    // Every rank splits once per group handle, in handle order, so the splits match across ranks.
    int handles = 0;
    for (const RankProgram& r : config_.set->ranks) handles = std::max(handles, static_cast<int>(r.groups.size()));
    for (int h = 0; h < handles; ++h) {
      const bool member = static_cast<std::size_t>(h) < rp.groups.size();
      int color = MPI_UNDEFINED;
      int key = 0;
      if (member) {
        const std::vector<int>& m = rp.groups[static_cast<std::size_t>(h)].members;
        color = *std::min_element(m.begin(), m.end());
        key = static_cast<int>(std::find(m.begin(), m.end(), config_.rank) - m.begin());
      }
      MpiComm comm = world_.split(color, key);
      groups_.push_back(member ? std::make_unique<MpiCommunicator>(std::move(comm), types) : nullptr);
    }
  }

  [[nodiscard]] std::byte* at(const Slice& s) const { return reinterpret_cast<std::byte*>(pool_.get()) + s.offset; }
  [[nodiscard]] std::byte* host_at(const Slice& s) const { return host_pool_ ? host_pool_.get() + s.offset : nullptr; }

  // A host copy between the op's pool slice and its host slice.
  void copy(const HostCopy& h, const OpBuffers& b) const {
    if (h.bytes.count() == 0) return;
    if (h.direction == CopyDirection::kToHost) {
      std::memcpy(host_at(b.host), at(b.c), h.bytes.count());
    } else {
      std::memcpy(at(b.c), host_at(b.host), h.bytes.count());
    }
  }

  // ZeRO-Offload's update: the gradient copied out of the pool, AdamW on this thread, the weights copied back.
  void update_on_host(const Op& op, const MemoryKernel& k, const OpBuffers& b) {
    const auto u =
        std::find_if(host_updates_.begin(), host_updates_.end(), [&](const HostUpdate& x) { return x.op == op.id; });
    std::byte* staging = host_at(b.host);
    if (staging == nullptr) return;  // nothing to copy either way
    std::memcpy(staging, at(b.a), k.bytes_read.count());
    adam_.update(u->first, u->count, ++u->steps, staging, staging, u->width);
    std::memcpy(at(b.c), staging, k.bytes_written.count());
  }

  void compute(const Op& op) {
    const OpBuffers& b = buffers_.operands.at(op.id);
    if (const auto* h = std::get_if<HostCopy>(&op.payload)) {
      copy(*h, b);
      return;
    }
    if (const auto* g = std::get_if<Gemm>(&op.payload)) {
      const auto* a = reinterpret_cast<const float*>(at(b.a));
      const auto* bb = reinterpret_cast<const float*>(at(b.b));
      auto* c = reinterpret_cast<float*>(at(b.c));
      for (std::int64_t i = 0; i < g->batch; ++i) {
        cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, static_cast<blasint>(g->m), static_cast<blasint>(g->n),
                    static_cast<blasint>(g->k), 1.0f, a + i * g->k * g->m, static_cast<blasint>(g->k),
                    bb + i * g->k * g->n, static_cast<blasint>(g->k), 0.0f, c + i * g->m * g->n,
                    static_cast<blasint>(g->m));
      }
      return;
    }
    const auto& k = std::get<MemoryKernel>(op.payload);
    if (k.kind == MemoryKernelKind::kHostOptimizer) {
      update_on_host(op, k, b);
      return;
    }
    run_memory_kernel(k, reinterpret_cast<const float*>(at(b.a)), reinterpret_cast<float*>(at(b.c)));
  }

  [[nodiscard]] MpiCommunicator::Started communicate(const Op& op) {
    const OpBuffers& b = buffers_.operands.at(op.id);
    std::byte* data = at(b.c);
    if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
      if (skip_this_collective()) return MpiCommunicator::Started{};  // a null request: done at once
      MpiCommunicator& comm = *groups_.at(c->group);
      const CollectiveLayout l = collective_layout(c->kind, c->bytes, c->dtype, comm.size(), comm.rank());
      // In place, as Megatron-LM and PyTorch run them: the send buffer is where the layout puts it.
      CollectiveCall call{c->kind,
                          data + l.send_inplace_offset * size_of(c->dtype),
                          data + l.recv_inplace_offset * size_of(c->dtype),
                          l.count,
                          c->dtype,
                          ReduceOp::kSum,
                          0,
                          {},
                          {}};
      return comm.begin(call);
    }
    const auto& p = std::get<PointToPoint>(op.payload);
    MpiCommunicator& comm = *groups_.at(p.group);
    const std::uint64_t count = p.bytes.count() / size_of(p.dtype);
    const int tag = static_cast<int>(p.group);
    MpiCommunicator::Started s = p.direction == P2pDirection::kSend
                                     ? comm.begin_send(data, count, p.dtype, p.peer, tag)
                                     : comm.begin_recv(data, count, p.dtype, p.peer, tag);
    s.call = ++link_calls(p).started;
    return s;
  }

  // The transfers this rank has started on the link `p` uses (its sends, or its receives), which the
  // peer is asked about when one times out.
  [[nodiscard]] GroupCalls& link_calls(const PointToPoint& p) {
    const P2pLink link = link_of(program(), p);
    std::shared_ptr<GroupCalls>& calls = links_[link];
    if (!calls) calls = transfer_calls(std::string(name(program().groups.at(p.group).role)), link.from, link.to);
    return *calls;
  }

  [[nodiscard]] const RankProgram& program() const {
    return config_.set->ranks.at(static_cast<std::size_t>(config_.rank));
  }

  // --debug-skip-collective: counts this rank's collective calls and says whether to skip this one.
  [[nodiscard]] bool skip_this_collective() {
    const std::uint64_t index = collectives_++;
    return config_.skip && config_.skip->rank == config_.rank && config_.skip->index <= index;
  }

  [[nodiscard]] std::string timeout_message(const std::array<std::optional<InFlight>, kStreamCount>& running,
                                            std::size_t finished) const;
  // "the step's op 300 (L0.fwd.attn.all_reduce), op 314 (mb2.fwd.recv)": its communication in flight.
  [[nodiscard]] std::string running_activity(const std::array<std::optional<InFlight>, kStreamCount>& running) const {
    std::vector<std::string> ops;
    for (const std::optional<InFlight>& f : running) {
      if (f) ops.push_back(fmt::format("op {} ({})", f->op, ops_[f->op].name));
    }
    if (ops.empty()) return "the step's dependencies";
    return fmt::format("the step's {}", fmt::join(ops, ", "));
  }

  StepEngineConfig config_;
  std::uint64_t collectives_ = 0;
  const MpiComm& world_;
  const std::vector<Op>& ops_;
  StepBuffers buffers_;
  std::unique_ptr<float, decltype(&std::free)> pool_{nullptr, &std::free};
  std::unique_ptr<std::byte, decltype(&std::free)> host_pool_{nullptr, &std::free};  // offload's host side
  std::vector<std::unique_ptr<MpiCommunicator>> groups_;  // by handle; null where not a member
  std::map<P2pLink, std::shared_ptr<GroupCalls>> links_;
  std::string activity_;
  std::array<std::vector<OpId>, kStreamCount> by_stream_;
  HostPacer pacer_;
  std::vector<HostUpdate> host_updates_;
  HostAdam adam_;  // the host optimizer's state, for every update of the program (none: empty)
};

StepRun HostStepEngine::run_step(StepTiming timing) {
  const std::size_t n = ops_.size();
  std::vector<char> done(n, 0);
  std::array<std::size_t, kStreamCount> next{};  // per stream: index into by_stream_
  std::array<std::optional<InFlight>, kStreamCount> running;
  StepRun run;
  run.start_s.assign(n, 0.0);
  run.end_s.assign(n, 0.0);
  std::size_t finished = 0;

  world_.barrier();
  // What this rank waits for, for another rank whose wait timed out and asks (control_plane.hpp).
  bool running_changed = true;
  const WaitingFor waiting(activity_);
  const Clock::time_point t0 = Clock::now();
  auto now = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  pacer_.begin_step();
  while (finished < n) {
    throw_if_interrupted();  // a stage may compute for long between waits
    bool progressed = false;
    for (std::size_t s = 0; s < kStreamCount; ++s) {
      if (running[s]) {
        int complete = 0;
        auto& requests = running[s]->started.requests;
        MPI_CHECK(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &complete, MPI_STATUSES_IGNORE));
        if (!complete) continue;
        if (running[s]->started.then) running[s]->started.then();
        const OpId id = running[s]->op;
        run.end_s[id] = now();
        done[id] = 1;
        ++finished;
        running[s].reset();
        running_changed = true;
        progressed = true;
      }
      if (next[s] >= by_stream_[s].size()) continue;
      const Op& op = ops_[by_stream_[s][next[s]]];
      if (!std::all_of(op.deps.begin(), op.deps.end(), [&](OpId d) { return done[d] != 0; })) continue;
      if (pacer_.must_sync_before(op)) {
        // The host waits for every op started so far: compute ran to completion when it started, so
        // only communication can still be in flight.
        if (std::any_of(running.begin(), running.end(), [](const auto& f) { return f.has_value(); })) continue;
        pacer_.synced();
      }
      pacer_.before_issue(op);
      ++next[s];
      progressed = true;
      run.start_s[op.id] = now();
      if (std::holds_alternative<Gemm>(op.payload) || std::holds_alternative<MemoryKernel>(op.payload) ||
          std::holds_alternative<HostCopy>(op.payload)) {
        compute(op);
        run.end_s[op.id] = now();
        done[op.id] = 1;
        ++finished;
      } else {
        running[s] = InFlight{op.id, communicate(op)};
        running_changed = true;
      }
    }
    if (progressed) {
      note_progress();  // the step's WaitingFor spans its work: a long wait is one without progress
      continue;
    }
    if (running_changed) {
      activity_ = running_activity(running);
      running_changed = false;
    }
    poll_control_plane();
    if (config_.timeout.value() > 0 && now() > config_.timeout.value()) {
      throw TimeoutError(timeout_message(running, finished));
    }
  }
  run.step = Seconds(now());
  if (timing == StepTiming::kStepOnly) {
    run.start_s.clear();
    run.end_s.clear();
  }
  return run;
}

// Names the communication ops still running and, for collectives, which ranks of the group have not
// reached them (the control plane asks them).
std::string HostStepEngine::timeout_message(const std::array<std::optional<InFlight>, kStreamCount>& running,
                                            std::size_t finished) const {
  std::string text = fmt::format("the step did not complete within {} s on {} ({} of {} ops done)",
                                 config_.timeout.value(), process_identity(), finished, ops_.size());
  const RankProgram& rp = config_.set->ranks.at(static_cast<std::size_t>(config_.rank));
  for (const std::optional<InFlight>& f : running) {
    if (!f) continue;
    const Op& op = ops_[f->op];
    text += fmt::format("; waiting for op {} ({}, stream {})", op.id, op.name, name(op.stream));
    if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
      text += ": " + describe_transfer(rp, op, *p);
      const GroupCalls& link = *links_.at(link_of(rp, *p));
      text += fmt::format(", transfer {} from rank {} to rank {}", f->started.call, link.members[0], link.members[1]);
      const std::string diagnosis = diagnose_group(link, f->started.call);
      if (!diagnosis.empty()) text += "; " + diagnosis;
      continue;
    }
    const auto* c = std::get_if<CollectiveOp>(&op.payload);
    if (c == nullptr || f->started.call == 0) continue;
    const std::string diagnosis = diagnose_group(groups_.at(c->group)->calls(), f->started.call);
    text += fmt::format(": {} of {} on group {}", name(c->kind), format_size(c->bytes),
                        name(rp.groups.at(c->group).role));
    if (!diagnosis.empty()) text += ", " + diagnosis;
  }
  return text;
}

}  // namespace

std::unique_ptr<StepEngine> HostBackend::make_step_engine(const StepEngineConfig& config) {
  return std::make_unique<HostStepEngine>(config, world_, types_);
}

}  // namespace commscale
