#pragma once

// One line of progress for long runs (bench sweeps, train steps, plan searches), rewritten in place
// with a carriage return: "bench  12/40  30%  all_reduce 1 MiB  3 s, about 7 s left". Only rank 0
// makes one, only when its stderr is a terminal (or --progress says mpirun's is), and never with
// --quiet (progress_enabled); results and logs on stdout are never touched. The line is cleared when the work ends or the object goes.

#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace commscale {

// True when progress should be shown: not quiet, and stderr is a terminal or `forced` (--progress:
// under mpirun a rank's stderr is a pipe even when mpirun's is a terminal, so the launcher decides).
[[nodiscard]] bool progress_enabled(bool quiet, bool forced = false);

class Progress {
 public:
  using Clock = std::function<double()>;  // seconds since some fixed point

  // `out` null: the object does nothing. `total` 0: no percentage or estimate.
  Progress(std::ostream* out, std::string what, std::size_t total, Clock clock = {});
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` items of `total` are finished; `detail` says what runs now. Redraws at most every 0.1 s
  // (and always for the last item).
  void update(std::size_t done, std::string_view detail = {});
  // When the total is known only once the work has started.
  void set_total(std::size_t total) noexcept { total_ = total; }
  // Clears the line (idempotent).
  void finish();

  // The text of the line, without the carriage return (for tests).
  [[nodiscard]] std::string line(std::size_t done, std::string_view detail, double elapsed_s) const;

 private:
  std::ostream* out_;
  std::string what_;
  std::size_t total_;
  Clock clock_;
  double start_s_;
  double last_draw_s_ = -1.0;
  std::size_t drawn_width_ = 0;
};

}  // namespace commscale
