#pragma once

// Checking a command's output paths before it does any work: each can be written, no two of them would
// replace the same file (one result would be lost), and none replaces one of the command's inputs.
// Nothing is created, opened or changed here.

#include <string>
#include <string_view>
#include <vector>

namespace commscale {

// Checks that `path` can be written: the file, or the directory it goes in (or the nearest one there
// is, when some are still to be made), must be writable. Throws InputError naming `where` (the flag).
void ensure_writable(const std::string& path, std::string_view where);

struct NamedOutput {
  std::string flag;  // as the user knows it: "-J/--output_file", "--csv", ...
  std::string path;  // empty: not asked for
};

// ensure_writable for each output given, and a check that no two name one file once links are followed
// (the same path, or another name of the same file). Devices, FIFOs and standard output may take
// several outputs: each is written there in turn and none is lost. Throws InputError naming both flags.
void check_outputs(const std::vector<NamedOutput>& outputs);

// Throws InputError naming both when `output` would replace the file that `input` (an input option, as
// messages name it) reads at `input_path`: the same file once links are followed (device and inode), however
// the two paths are spelled. An input that is not a regular file (it is read as it streams, or not at all),
// and an output written in place (a device, a FIFO, standard output), are no conflict.
void check_not_input(const NamedOutput& output, std::string_view input, const std::string& input_path);

}  // namespace commscale
