#pragma once

// Whether a process of this machine is still the one we started with: its state and start time from
// /proc/<pid>/stat. The start time (clock ticks since boot) tells a live rank from a new process that
// got the same pid after the rank died.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace commscale {

struct ProcessStatus {
  std::string name;               // the command name (field 2), at most 15 characters
  char state = '?';               // R, S, D, T (stopped), Z (zombie), X (dead), ...
  int ppid = 0;                   // field 4
  std::uint64_t start_ticks = 0;  // field 22 of /proc/<pid>/stat
};

// Parses the text of /proc/<pid>/stat; nullopt when it is not in that form. The command name (field 2)
// may hold spaces and parentheses, so fields are counted from its last ')'.
[[nodiscard]] std::optional<ProcessStatus> parse_proc_stat(std::string_view text) noexcept;

// This machine's process `pid`; nullopt when there is none (or /proc cannot show it).
[[nodiscard]] std::optional<ProcessStatus> read_process_status(int pid);

// The process is there, is the same process (start time), and has not exited (zombie or dead).
[[nodiscard]] bool process_alive(int pid, std::uint64_t start_ticks);

}  // namespace commscale
