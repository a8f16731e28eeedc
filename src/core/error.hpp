#pragma once

// Typed errors and the exit codes they map to. Library code throws; `main` catches once, reports,
// and (under MPI) aborts the job so that no rank is left waiting. Input is never `assert`ed.

#include <stdexcept>
#include <string>
#include <string_view>

namespace commscale {

// Documented in src/runtime/RELIABILITY.md ("Exit codes"); stable for scripts.
enum class ExitCode : int {
  kOk = 0,
  kCheckFailed = 1,   // a benchmark ran but failed its checks: wrong data or below --min-busbw
  kUsage = 2,         // bad flag, bad input file, bad environment override
  kRuntime = 3,       // a library or system failure: CUDA, NCCL, MPI, cuBLAS, out of memory, I/O
  kTimeout = 4,       // an operation did not complete within --timeout
  kRankLost = 5,      // another rank of the job died. 128 + N: signal N stopped the run (runtime/interrupt.hpp)
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// Bad user input. `where` names the flag, file or file:key; `expected` says what would be accepted.
class InputError : public Error {
 public:
  InputError(std::string_view where, std::string_view problem, std::string_view expected = {});
};

// A failure of a library or the system, with the failing expression and its location.
class RuntimeFailure : public Error {
 public:
  explicit RuntimeFailure(const std::string& message) : Error(ExitCode::kRuntime, message) {}
};

class TimeoutError : public Error {
 public:
  explicit TimeoutError(const std::string& message) : Error(ExitCode::kTimeout, message) {}
};

// Another rank of the job ended while the job was running (killed, crashed): the rank that notices
// names it and ends the job with kRankLost.
class RankLostError : public Error {
 public:
  explicit RankLostError(const std::string& message) : Error(ExitCode::kRankLost, message) {}
};

// This rank is fine but another rank reported an error, which that rank prints. `main` gives it a
// moment to do so before ending the job.
class PeerFailure : public Error {
 public:
  explicit PeerFailure(const std::string& message) : Error(ExitCode::kRuntime, message) {}
};

}  // namespace commscale
