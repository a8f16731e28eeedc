#pragma once

// Who this process is, for error messages: every check macro names the host and rank it failed on.
// Set once at bootstrap; read only when an error is being reported.

#include <string>

namespace commscale {

void set_process_identity(std::string host, int world_rank);

// "host node01, rank 3" (or "host node01" before the rank is known).
[[nodiscard]] std::string process_identity();

// This machine's host name.
[[nodiscard]] std::string host_name();

// Throws RuntimeFailure: "<library> error in <expr> at <file>:<line> on <host, rank>: <reason>".
[[noreturn]] void throw_library_error(const char* library, const char* expr, const std::string& reason,
                                      const char* file, int line);

// For destructors and cleanup paths that must not throw: prints the same message to stderr.
void report_library_error_nothrow(const char* library, const char* expr, const char* reason, const char* file,
                                  int line) noexcept;

}  // namespace commscale
