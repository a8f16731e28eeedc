#pragma once

// `commscale doctor`: a cluster acceptance test. Every rank measures; rank 0 judges each measurement
// against what the thing measured should deliver (predict/doctor_expect.hpp) and reports as it goes.
// Phases, in order (each can be skipped):
//   gpu    each rank's GPU: identity, PCIe link under load, NVLink links, clocks and their reasons,
//          ECC / retired pages / remapped rows, a sustained GEMM; XIDs over the whole run (at the end)
//   node   each node: its NICs (rate, state, PCIe link); GPU <-> GPU and host <-> GPU copies; an
//          all_reduce inside every node at once
//   job    all_reduce and all_gather across the job
//   pairs  ceil(log2 N) rounds of disjoint pairs, both directions (bench/doctor_pairs.hpp), and blame
// The CPU backend has no GPU: the gpu phase and the copies do not run, and the report says so.

#include "bench/doctor_result.hpp"
#include "predict/doctor_expect.hpp"
#include "runtime/mpi.hpp"
#include "runtime/session.hpp"

namespace commscale {

// Runs on every rank. Rank 0 passes the expectations and its reporter; the others pass nullptr.
// Every rank gets the verdict in report.verdict; the rest of the report is filled on rank 0.
[[nodiscard]] DoctorReport run_doctor(const DoctorOptions& options, RankSession& session, const MpiComm& world,
                                      const predict::DoctorExpectations* expect, DoctorReporter* reporter);

// The sizes doctor uses on a backend when not given: collectives 4 GiB on GPUs (nccl-tests' largest
// common size, where the catalog's measurements are taken) and 1 MiB on the CPU backend (MPI's
// all_reduce of 16 MiB among processes sharing cores takes half a second an iteration); pair
// transfers 1 GiB and 4 MiB (below that, the CPU backend's healthy transfers vary tenfold).
[[nodiscard]] Bytes default_collective_size(bool gpu);
[[nodiscard]] Bytes default_pair_size(bool gpu);

}  // namespace commscale
