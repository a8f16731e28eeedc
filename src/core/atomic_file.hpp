#pragma once

// Result files are replaced atomically: written to a temporary file beside the target, flushed to
// disk, then renamed over it, so a reader (or a crash) never sees half a file.

#include <sys/types.h>

#include <string>
#include <string_view>

namespace commscale {

// Result files are created with this mode, less the process's umask: readable by all, writable by the
// owner and group as the umask allows, never by everyone.
inline constexpr mode_t kResultFileMode = 0664;

// Throws RuntimeFailure naming the path and the system's reason.
void write_file_atomically(const std::string& path, std::string_view content);

// Checks, before any measurement starts, that `path` can be written: creates missing parent
// directories and a probe file beside it. Throws InputError naming `where` (the flag) otherwise.
void ensure_writable(const std::string& path, std::string_view where);

}  // namespace commscale
