#pragma once

// `calibrate --measure host,interference` on rank 0's GPU (src/bench/calibrate_probes.cpp turns the
// results into profile rows; the method is in src/bench/CALIBRATE.md).
//
// Host: the time commscale's executor spends on the host issuing one op of each class, on its own
// launch path (runtime/cuda/cuda_step_engine.cpp), measured while a spin kernel keeps the GPU busy so
// that every call only queues: `calls` calls back to back, timed by the host's steady clock, the
// median over `samples` such batches. The spin is checked to outlast the batch (else it is doubled and
// the batch run again), and batches stay below ~500 queued entries (CUDA's launch queue blocks the
// host near 1024).
//
// Interference: a probe holding k SMs (kernels/probe.cuh) beside a loop of large bf16 GEMMs, or of
// the step's memory-bound kernel, on another stream; each timed alone and together.

#include <string>
#include <vector>

namespace commscale {

struct HostIssueOptions {
  int calls = 200;   // calls per batch
  int samples = 9;   // batches; the median is kept
  double timeout_s = 60.0;
};

// Microseconds of host time per call.
struct HostIssueTimes {
  double gemm_us = 0;          // CublasLtGemm::run, bf16 512 x 512 x 512 (its plan made before)
  double kernel_us = 0;        // the step's memory kernel launch and cudaGetLastError
  double collective_us = 0;    // an NCCL all-reduce (bf16, 8 KiB, in place) and the wait for its enqueue
  double p2p_us = 0;           // an NCCL send or receive (see p2p_note)
  double event_record_us = 0;  // cudaEventRecord on a busy stream
  double stream_wait_us = 0;   // cudaStreamWaitEvent on an event not yet complete
  double kernel_floor_us = 0;  // GPU time: the period of back-to-back empty kernels on one stream
  bool p2p_measured = false;
  std::string p2p_note;  // how p2p was measured, or why it was derived from the collective
  int calls = 0;
  int samples = 0;
};

// Throws RuntimeFailure in a build without the GPU backend.
[[nodiscard]] HostIssueTimes measure_host_issue(const HostIssueOptions& options);

struct InterferenceOptions {
  std::vector<int> sms = {1, 2, 4, 8, 16, 32};
  int repetitions = 3;            // alone/together pairs per setting; medians kept
  double compute_ms = 20.0;       // the GEMM or memory-kernel loop runs about this long alone
  double heat_ms = 20.0;          // a GEMM runs this long before each pair
};

struct InterferenceMeasurement {
  int sms = 0;
  bool streams_memory = false;  // the probe copies memory (else it only holds its SMs)
  bool beside_gemm = true;      // beside the GEMM loop, else beside the memory-kernel loop
  double probe_alone_GBps = 0;  // the probe's rate alone (0 when it only holds SMs)
  double probe_together_GBps = 0;
  double compute_alone_ms = 0;
  double compute_together_ms = 0;
};

struct InterferenceResult {
  std::vector<InterferenceMeasurement> rows;
  std::string method;  // the loops' shapes and sizes, the probe's blocks, how the overlap was made sure of
  // Rows that could not be measured, and why: a compute kernel that cannot start all its blocks while
  // the probe holds SMs (a persistent GEMM sized to every SM) waits for the probe to give up (2 s).
  std::vector<std::string> not_measured;
};

// Throws RuntimeFailure in a build without the GPU backend, or when the probe's blocks did not all
// start; a row whose compute outlasted the probe is left out, named in not_measured.
[[nodiscard]] InterferenceResult measure_interference(const InterferenceOptions& options);

}  // namespace commscale
