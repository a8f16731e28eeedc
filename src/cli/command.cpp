#include "cli/command.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "runtime/control_plane.hpp"
#include "runtime/process.hpp"

namespace commscale {

void add_runtime_options(CLI::App& command, RuntimeOptions* options, std::string* backend_text) {
  command.add_option("--backend", *backend_text,
                     "auto: GPUs with NCCL when visible, else the CPU backend (MPI on host memory); gpu; cpu")
      ->capture_default_str();
  command.add_option("--devices", options->devices,
                     "CUDA devices by local rank: local rank i uses the (i mod n)-th of this list "
                     "(default: local rank mod the number of visible GPUs)")
      ->delimiter(',');
}

void finish_runtime_options(RuntimeOptions* options, const std::string& backend_text) {
  if (backend_text == "auto") {
    options->backend = BackendChoice::kAuto;
  } else if (backend_text == "gpu") {
    options->backend = BackendChoice::kGpu;
  } else if (backend_text == "cpu") {
    options->backend = BackendChoice::kCpu;
  } else {
    throw InputError("--backend", fmt::format("unknown backend \"{}\"", backend_text), "auto, gpu or cpu");
  }
  for (int device : options->devices) {
    if (device < 0) throw InputError("--devices", fmt::format("{} is not a device number", device), "0, 1, 2, ...");
  }
}

int run_on_all_ranks(const std::function<int(const MpiComm& world)>& body) {
  MpiSession mpi(nullptr, nullptr);
  const MpiComm world = MpiComm::world();
  ExitCode code = ExitCode::kRuntime;
  std::unique_ptr<ControlPlane> control;
  try {
    control = std::make_unique<ControlPlane>(world);
    const int rc = body(world);
    control->finish();  // every rank is done: from here a rank that ends is not lost
    return rc;
  } catch (const PeerFailure&) {
    if (control) control->stop_watching();
    // The rank that failed reports and aborts; give it time to do so before ending the job here.
    std::this_thread::sleep_for(std::chrono::seconds(5));
    code = ExitCode::kRuntime;
  } catch (const Error& e) {
    if (control) control->stop_watching();
    std::cerr << fmt::format("commscale: error on {}: {}\n", process_identity(), e.what()) << std::flush;
    code = e.code();
  } catch (const std::exception& e) {
    if (control) control->stop_watching();
    std::cerr << fmt::format("commscale: unexpected error on {}: {}\n", process_identity(), e.what()) << std::flush;
  }
  if (world.size() > 1) MpiSession::abort(code);
  return static_cast<int>(code);
}

std::string join_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!line.empty()) line += ' ';
    const bool plain = !arg.empty() && arg.find_first_of(" \t\"'\\$`") == std::string::npos;
    line += plain ? arg : fmt::format("'{}'", arg);
  }
  return line;
}

std::vector<std::string> split_list(const std::string& text, const std::string& where) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw InputError(where, fmt::format("\"{}\" has an empty item", text), "a comma-separated list");
    items.push_back(item);
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

}  // namespace commscale
