#include "runtime/proc_stat.hpp"

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace commscale {

std::optional<ProcessStatus> parse_proc_stat(std::string_view text) noexcept {
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || open > close ||
      close + 2 >= text.size()) {
    return std::nullopt;
  }
  std::string_view rest = text.substr(close + 2);  // "S ppid pgrp ..." from field 3 on
  ProcessStatus status;
  status.state = rest.front();
  if (rest.size() < 3) return std::nullopt;
  const auto [ppid_end, ppid_ec] = std::from_chars(rest.data() + 2, rest.data() + rest.size(), status.ppid);
  if (ppid_ec != std::errc() || ppid_end == rest.data() + 2) return std::nullopt;
  // Field 22 is the 20th field after the state (field 3).
  for (int field = 3; field < 22; ++field) {
    const std::size_t space = rest.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    rest = rest.substr(space + 1);
  }
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), status.start_ticks);
  if (ec != std::errc() || end == rest.data()) return std::nullopt;
  try {
    status.name = std::string(text.substr(open + 1, close - open - 1));
  } catch (...) {
    return std::nullopt;  // noexcept: out of memory for a 15-character name
  }
  return status;
}

std::optional<ProcessStatus> read_process_status(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return parse_proc_stat(text.str());
}

bool process_alive(int pid, std::uint64_t start_ticks) {
  const std::optional<ProcessStatus> status = read_process_status(pid);
  return status && status->start_ticks == start_ticks && status->state != 'Z' && status->state != 'X';
}

}  // namespace commscale
