// What the launcher says about this process before MPI starts: its rank, the job's size and, under
// Open MPI's MPMD form (`mpirun -np 2 A : -np 2 B`), where its own command line's ranks begin. Usage
// errors are found before MPI starts, by every process that parses a command line; these decide which
// one reports, so a job prints each message once and a process that no rank 0 will speak for (a stale
// OMPI_COMM_WORLD_RANK in a shell, the second command of an MPMD job) still prints its own.

#include <array>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <thread>

#include "cli/command.hpp"

namespace commscale {
namespace {

// A launcher's rank variable and the variables that hold the size of the job it belongs to.
struct LauncherVariables {
  const char* rank;
  std::array<const char*, 3> sizes;  // the first set is the job's size; null: no more
};

const LauncherVariables kLaunchers[] = {
    {"OMPI_COMM_WORLD_RANK", {"OMPI_COMM_WORLD_SIZE", nullptr, nullptr}},
    {"PMIX_RANK", {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}},
    {"PMI_RANK", {"PMI_SIZE", nullptr, nullptr}},
    {"SLURM_PROCID", {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"}},
};

// A non-negative number from the start of `text` (`end` past it), or nullopt.
std::optional<long> number_at(std::string_view text, std::size_t* end = nullptr) {
  long value = -1;
  const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value < 0) return std::nullopt;
  if (end != nullptr) *end = static_cast<std::size_t>(stop - text.data());
  return value;
}

std::optional<long> variable_number(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  std::size_t end = 0;
  const std::optional<long> value = number_at(text, &end);
  if (!value || end != std::strlen(text)) return std::nullopt;
  return value;
}

// The rank this process has in a job of more than one process, by the first launcher variable set; or
// nullopt where there is no such job: no variable, or one left over from another context (no job size
// beside it, a size of 1, a rank outside the job).
std::optional<long> rank_in_job() {
  for (const LauncherVariables& launcher : kLaunchers) {
    const char* text = std::getenv(launcher.rank);
    if (text == nullptr || *text == '\0') continue;
    const std::optional<long> rank = variable_number(launcher.rank);
    std::optional<long> size;
    for (const char* name : launcher.sizes) {
      if (name != nullptr && (size = variable_number(name))) break;
    }
    if (!rank || !size || *size <= 1 || *rank >= *size) return std::nullopt;
    return rank;
  }
  return std::nullopt;
}

// Under Open MPI's MPMD form, the world rank where this process's command line's ranks begin:
// OMPI_APP_CTX_NUM_PROCS lists the ranks of each command ("2 2"), OMPI_MCA_orte_app_num says which is
// this one's. (OMPI_FIRST_RANKS would say it directly, but Open MPI 4.1 sets it to "0 0" there.)
std::optional<long> first_rank_of_this_command() {
  const std::optional<long> app = variable_number("OMPI_MCA_orte_app_num");
  const char* counts = std::getenv("OMPI_APP_CTX_NUM_PROCS");
  if (!app || counts == nullptr) return std::nullopt;
  std::string_view rest = counts;
  long first = 0;
  for (long i = 0; i < *app; ++i) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    std::size_t end = 0;
    const std::optional<long> count = number_at(rest, &end);
    if (!count) return std::nullopt;
    first += *count;
    rest.remove_prefix(end);
  }
  return first;
}

}  // namespace

bool launched_as_rank_zero() {
  const std::optional<long> rank = rank_in_job();
  return !rank || *rank == 0;
}

bool reports_usage_errors() {
  const std::optional<long> rank = rank_in_job();
  if (!rank || *rank == 0) return true;
  const std::optional<long> first = first_rank_of_this_command();
  return first && *first == *rank;
}

void wait_before_usage_exit() {
  if (!rank_in_job()) return;
  std::this_thread::sleep_for(reports_usage_errors() ? std::chrono::seconds(1) : std::chrono::seconds(5));
}

}  // namespace commscale
