#include "cli/command.hpp"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cli/number_options.hpp"
#include "core/error.hpp"
#include "core/interruptible_output.hpp"
#include "core/utf8.hpp"
#include "core/written_files.hpp"
#include "runtime/control_plane.hpp"
#include "runtime/interrupt.hpp"
#include "runtime/process.hpp"

namespace commscale {

namespace {

// --devices 0,1 (or 0 1): device numbers, each a whole number from 0; a device may repeat (ranks share it).
std::vector<int> runtime_devices(const std::vector<std::string>& words) {
  std::vector<int> devices;
  for (const std::string& word : words) {
    for (const std::string& item : split_list(word, "--devices")) {
      int device = -1;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), device);
      if (ec != std::errc() || end != item.data() + item.size() || device < 0) {
        throw InputError("--devices", fmt::format("\"{}\" is not a device number", item), "a comma list such as 0,1");
      }
      devices.push_back(device);
    }
  }
  return devices;
}

}  // namespace

void add_runtime_options(CLI::App& command, RuntimeOptions* options, std::string* backend_text) {
  command.add_option("--backend", *backend_text,
                     "auto: GPUs with NCCL when visible, else the CPU backend (MPI on host memory); gpu; cpu")
      ->capture_default_str();
  // Split here, not by CLI11's delimiter, which drops empty items: "0,,1" would run as "0,1".
  command.add_option_function<std::vector<std::string>>(
      "--devices", [options](const std::vector<std::string>& words) { options->devices = runtime_devices(words); },
      "CUDA devices by local rank: local rank i uses the (i mod n)-th of this list "
      "(default: local rank mod the number of visible GPUs)");
  command.add_option_function<std::string>(
      "--wait-report",
      [options](const std::string& text) {
        options->wait_report = Seconds(parse_real(text, "--wait-report", wait_report_s_range()));
      },
      "seconds a rank waits for others before it says on stderr for what, and what the others do (again each "
      "time the wait has doubled); nothing is ended by it, -T does that (default 60; 0: never)");
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
}

namespace {

// The one line of an interrupted run. Rank 0 writes the result files, so it says what was kept; another
// rank speaks only when the signal was sent to it alone (the launcher passes one on to every rank, and
// also ends a job so after another rank's error, which that rank reports). Then the process ends at
// once: MPI_Finalize could still complete transfers into buffers the unwinding has freed.
[[noreturn]] void report_interruption(const MpiComm& world, int signal) {
  const InterruptSource source = interrupt_source();
  const auto code = kInterruptedBase + signal;
  const std::string sender =
      source.pid > 0 ? fmt::format(" from {} (pid {})", source.name.empty() ? "a process" : source.name, source.pid)
                     : "";
  if (world.rank() == 0) {
    const std::string kept = describe_written_files();
    std::cerr << fmt::format("commscale: interrupted by {}{} on {}: the run stopped; {}; exit code {}\n",
                             signal_name(signal), sender, process_identity(),
                             kept.empty() ? "nothing had been written yet" : "kept what was written: " + kept, code);
  } else if (!source.launcher) {
    std::cerr << fmt::format("commscale: interrupted by {}{} on {}, sent to this rank alone: ending the job\n",
                             signal_name(signal), sender, process_identity());
  }
  std::cout.flush();
  std::cerr.flush();
  interrupt_reported();
  // The others must not wait for a rank that was signalled alone.
  if (!source.launcher && world.size() > 1) MpiSession::abort(static_cast<ExitCode>(code));
  std::_Exit(code);
}

}  // namespace

int run_on_all_ranks(const std::function<int(const MpiComm& world)>& body) {
  MpiSession mpi(nullptr, nullptr);
  const MpiComm world = MpiComm::world();
  install_interrupt_handlers(world.rank());
  // A launcher that stops reading this rank's output must not keep it from seeing a signal.
  const InterruptibleStream out(std::cout, STDOUT_FILENO, [] { return interrupt_signal() != 0; });
  ExitCode code = ExitCode::kRuntime;
  std::unique_ptr<ControlPlane> control;
  try {
    control = std::make_unique<ControlPlane>(world);
    const int rc = body(world);
    control->finish();  // every rank is done: from here a rank that ends is not lost
    return rc;
  } catch (const InterruptedError& e) {
    if (control) control->stop_watching();
    report_interruption(world, e.signal());
  } catch (const PeerFailure&) {
    if (control) control->stop_watching();
    interrupt_reported();  // the launcher may end this rank while it waits below: quietly
    // The rank that failed reports and aborts; give it time to do so before ending the job here.
    std::this_thread::sleep_for(std::chrono::seconds(5));
    code = ExitCode::kRuntime;
  } catch (const Error& e) {
    if (control) control->stop_watching();
    // A peer that a signal ended first can make a wait here fail: the signal is the story.
    if (interrupt_signal() != 0) report_interruption(world, interrupt_signal());
    std::cerr << fmt::format("commscale: error on {}: {}\n", process_identity(), e.what()) << std::flush;
    code = e.code();
  } catch (const std::exception& e) {
    if (control) control->stop_watching();
    if (interrupt_signal() != 0) report_interruption(world, interrupt_signal());
    std::cerr << fmt::format("commscale: unexpected error on {}: {}\n", process_identity(), e.what()) << std::flush;
  }
  interrupt_reported();  // a signal from here on (the launcher ending the job) ends this rank quietly
  if (world.size() > 1) MpiSession::abort(code);
  return static_cast<int>(code);
}

std::string join_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!line.empty()) line += ' ';
    const bool plain = !arg.empty() && arg.find_first_of(" \t\"'\\$`") == std::string::npos;
    const std::string text = escape_invalid_utf8(arg);  // result files are JSON: UTF-8 only
    line += plain ? text : fmt::format("'{}'", text);
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
