#pragma once

// Writing result files. A regular file is replaced atomically: written under a short temporary name
// in its own directory (flushed to disk where asked), then renamed over it, so a reader (or a killed
// run) never sees half a file. Devices, FIFOs and standard output are written in place
// (core/output_path.hpp says which is which).

#include <sys/types.h>

#include <string>
#include <string_view>

#include "core/output_check.hpp"  // ensure_writable, check_outputs: before the work

namespace commscale {

// Result files are created with this mode, less the process's umask: readable by all, writable by the
// owner and group as the umask allows, never by everyone.
inline constexpr mode_t kResultFileMode = 0664;

// How far write_file_atomically takes the bytes before it returns.
enum class Flush {
  // fsync before the rename: the file survives a crash of the machine. A run's final results.
  kToDisk,
  // write(2) and the rename only: the file survives the process (killed, or stopped by a signal) but
  // not a crash of the machine. For a file rewritten as a run goes (bench's -J and --csv after each
  // row), which is written kToDisk at the end: an fsync per row perturbs the measurement and, on a
  // slow disk, can hold a rank for seconds, past the grace a signal gives it (runtime/interrupt.hpp).
  kToKernel,
};

// Writes `content` to `path` as above, creating missing directories (core/output_path.hpp). Throws
// RuntimeFailure naming the path and the system's reason (a full disk, a full /dev/full, ...).
void write_file_atomically(const std::string& path, std::string_view content, Flush flush = Flush::kToDisk);

// Whether write_file_atomically replaces `path` as a whole (a regular file or a new one). Writers that
// rewrite a file as they go (bench's -J and --csv) write a device, FIFO or stream once, at the end.
[[nodiscard]] bool replaced_atomically(const std::string& path);

}  // namespace commscale
