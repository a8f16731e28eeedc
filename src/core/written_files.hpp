#pragma once

// The result files this process has written so far, as they stand: for the one line an interrupted
// run prints about what it kept (runtime/interrupt.hpp). JSON Lines files count their lines; files
// written whole (atomically) are named once, however often they were rewritten.

#include <cstdint>
#include <string>

namespace commscale {

// A file written whole (write_file_atomically).
void note_file_written(const std::string& path);
// One more line appended to a JSON Lines file (written whole).
void note_line_appended(const std::string& path);

// "a.jsonl (13 whole lines), a.json", in the order first written; "" when nothing was written.
[[nodiscard]] std::string describe_written_files();

}  // namespace commscale
