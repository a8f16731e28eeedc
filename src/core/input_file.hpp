#pragma once

// The one way commscale reads an input file (model, cluster, GPU and calibration files, report and
// diff-trace inputs, step programs): a regular file, or a pipe read once from start to end (a FIFO,
// `<(cat file)`, `/dev/stdin` fed by a pipe), never more than kMaxInputFileBytes. Anything else (a
// directory, /dev/zero or another device, a socket) is refused before it is read.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace commscale {

// Documented in src/runtime/RELIABILITY.md ("Input files").
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{256} << 20;  // 256 MiB

// The whole content of `file`. Throws InputError naming the file when it is not a regular file or a
// pipe, cannot be opened or read, or holds more than `max_bytes`.
[[nodiscard]] std::string read_input_file(const std::filesystem::path& file,
                                          std::size_t max_bytes = kMaxInputFileBytes);

// Whether `path` exists (following symbolic links). Throws InputError naming the path when it cannot be
// looked at: a symbolic link loop, a directory without search permission.
[[nodiscard]] bool input_exists(const std::filesystem::path& path);

// The regular files (symbolic links followed) with extension `extension` in `folder`, and with
// `recursive` in its subfolders too (links to folders are not followed), sorted. Throws InputError
// naming the folder, or the entry, that cannot be listed or looked at (a symbolic link loop), or that
// is a device, FIFO or socket; links that point nowhere are left out.
[[nodiscard]] std::vector<std::filesystem::path> list_input_folder(const std::filesystem::path& folder,
                                                                   std::string_view extension, bool recursive);

}  // namespace commscale
