#include "runtime/process.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

struct Identity {
  std::string host;
  int rank = -1;
};

Identity& identity() {
  static Identity id;
  return id;
}

}  // namespace

void set_process_identity(std::string host, int world_rank) {
  identity() = Identity{std::move(host), world_rank};
}

std::string process_identity() {
  const Identity& id = identity();
  const std::string host = id.host.empty() ? host_name() : id.host;
  return id.rank < 0 ? fmt::format("host {}", host) : fmt::format("host {}, rank {}", host, id.rank);
}

std::string host_name() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return "unknown-host";
  return std::string(name.data());
}

void throw_library_error(const char* library, const char* expr, const std::string& reason, const char* file,
                         int line) {
  throw RuntimeFailure(
      fmt::format("{} error in {} at {}:{} on {}: {}", library, expr, file, line, process_identity(), reason));
}

void report_library_error_nothrow(const char* library, const char* expr, const char* reason, const char* file,
                                  int line) noexcept {
  try {
    fmt::print(stderr, "commscale: {} error in {} at {}:{} on {}: {}\n", library, expr, file, line,
               process_identity(), reason);
  } catch (...) {
    std::fputs("commscale: error while reporting an error\n", stderr);
  }
}

}  // namespace commscale
