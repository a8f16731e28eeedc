#include "report/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

namespace commscale {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string duration_text(double s) {
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, static_cast<int>(s) % 3600 / 60);
}

}  // namespace

bool progress_enabled(bool quiet, bool forced) { return !quiet && (forced || isatty(STDERR_FILENO) == 1); }

Progress::Progress(std::ostream* out, std::string what, std::size_t total, Clock clock)
    : out_(out),
      what_(std::move(what)),
      total_(total),
      clock_(clock ? std::move(clock) : Clock(steady_seconds)),
      start_s_(clock_()) {}

Progress::~Progress() { finish(); }

std::string Progress::line(std::size_t done, std::string_view detail, double elapsed_s) const {
  std::string text = what_;
  if (total_ > 0) {
    text +=
        fmt::format("  {}/{}  {:.0f}%", done, total_, 100.0 * static_cast<double>(done) / static_cast<double>(total_));
  } else {
    text += fmt::format("  {}", done);
  }
  if (!detail.empty()) text += fmt::format("  {}", detail);
  text += "  " + duration_text(elapsed_s);
  // The rest at the rate so far, once something is done.
  if (total_ > 0 && done > 0 && done < total_) {
    const double left = elapsed_s / static_cast<double>(done) * static_cast<double>(total_ - done);
    text += ", about " + duration_text(left) + " left";
  }
  return text;
}

void Progress::update(std::size_t done, std::string_view detail) {
  if (out_ == nullptr) return;
  const double now = clock_();
  const bool last = total_ > 0 && done >= total_;
  if (!last && last_draw_s_ >= 0 && now - last_draw_s_ < 0.1) return;
  last_draw_s_ = now;
  const std::string text = line(done, detail, now - start_s_);
  // Pad over what the previous line left behind.
  const std::size_t pad = drawn_width_ > text.size() ? drawn_width_ - text.size() : 0;
  *out_ << '\r' << text << std::string(pad, ' ') << std::flush;
  drawn_width_ = text.size();
}

void Progress::finish() {
  if (out_ == nullptr || drawn_width_ == 0) return;
  *out_ << '\r' << std::string(drawn_width_, ' ') << '\r' << std::flush;
  drawn_width_ = 0;
}

}  // namespace commscale
