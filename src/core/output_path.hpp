#pragma once

// Where an output file's bytes go. A regular file (or a path not there yet) is replaced atomically:
// written under a short temporary name in its own directory, then renamed over it. A symbolic link is
// followed, so the file it points to is replaced and the link kept. A character or block device (such as
// /dev/null), a FIFO or a terminal is opened and written as it is, never unlinked or renamed over; a
// socket cannot be opened at all, which resolve_output says (`problem`) before any work. "-", and
// /dev/stdout, /dev/stderr or /proc/self/fd/N where they are this process's standard output or error,
// are written to that stream.

#include <sys/types.h>

#include <string>

namespace commscale {

enum class OutputKind {
  kFile,     // a regular file, or a path where one will be created: replaced atomically
  kInPlace,  // a device, FIFO or terminal (or a /proc link to one): opened and written in place
  kStream,   // this process's standard output or error: written to that file descriptor
};

struct OutputTarget {
  OutputKind kind = OutputKind::kFile;
  std::string path;     // kFile: the file to replace, links followed; kInPlace: the path to open
  bool exists = false;  // kFile: whether there is a file there now
  int stream_fd = -1;   // kStream: 1 or 2
  std::string problem;  // not empty: why nothing can be written there (a directory, a link loop, ...)
};

// Follows `path` to what would be written (see above). Never creates, opens or changes anything.
[[nodiscard]] OutputTarget resolve_output(const std::string& path);

// Directories made for outputs get at most this mode (less the umask): never writable by group or others.
inline constexpr mode_t kResultDirectoryMode = 0755;

// Creates the missing directories of `directory` with kResultDirectoryMode. Returns 0 or an errno value,
// and in `failed` the directory that could not be made.
[[nodiscard]] int make_directories(const std::string& directory, std::string* failed);

// The directory `file` is in ("." for a bare name).
[[nodiscard]] std::string directory_of(const std::string& file);

}  // namespace commscale
