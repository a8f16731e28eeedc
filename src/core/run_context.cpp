#include "core/run_context.hpp"

#include <array>
#include <ctime>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/printable.hpp"
#include "core/utf8.hpp"

namespace commscale {

std::map<std::string, std::string> relevant_environment(const char* const* environ_entries) {
  static constexpr std::array<std::string_view, 5> kPrefixes = {"NCCL_", "UCX_", "OMPI_", "SLURM_", "COMMSCALE_"};
  std::map<std::string, std::string> found;
  for (const char* const* entry = environ_entries; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = text.substr(0, eq);
    for (std::string_view prefix : kPrefixes) {
      if (key.starts_with(prefix)) {
        found.emplace(escape_invalid_utf8(key), escape_invalid_utf8(text.substr(eq + 1)));
        break;
      }
    }
  }
  return found;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  const std::size_t n = std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(text.data(), n);
}

void to_json(nlohmann::json& out, const RankPlacement& p) {
  out = {{"rank", p.rank}, {"local_rank", p.local_rank}, {"pid", p.pid}, {"host", p.host}};
  if (p.device >= 0) {
    out["device"] = p.device;
    out["gpu"] = {{"name", p.gpu_name},
                  {"pci_bus_id", p.pci_bus_id},
                  {"uuid", p.gpu_uuid},
                  {"memory_GiB", p.gpu_memory_GiB},
                  {"compute_capability", p.compute_capability}};
  }
}

void from_json(const nlohmann::json& in, RankPlacement& p) {
  p.rank = in.at("rank");
  p.local_rank = in.at("local_rank");
  p.pid = in.at("pid");
  p.host = in.at("host");
  if (!in.contains("gpu")) return;
  const nlohmann::json& gpu = in.at("gpu");
  p.device = in.at("device");
  p.gpu_name = gpu.at("name");
  p.pci_bus_id = gpu.at("pci_bus_id");
  p.gpu_uuid = gpu.at("uuid");
  p.gpu_memory_GiB = gpu.at("memory_GiB");
  p.compute_capability = gpu.at("compute_capability");
}

void to_json(nlohmann::json& out, const RunContext& c) {
  out = {{"commscale_version", c.commscale_version},
         {"git_sha", c.git_sha},
         {"command_line", c.command_line},
         {"start_time_utc", c.start_time_utc},
         {"backend", c.backend},
         {"backend_note", c.backend_note},
         {"comm_library", c.comm_library},
         {"mpi_library", c.mpi_library},
         {"cuda_runtime", c.cuda_runtime},
         {"cuda_driver", c.cuda_driver},
         {"gpu_driver", c.gpu_driver},
         {"hosts", c.hosts},
         {"ranks", c.ranks},
         {"environment", c.environment}};
  if (!c.mpi_transport.empty()) out["mpi_transport"] = c.mpi_transport;
}

namespace {

// in[key] when it is a string, else "": the context's descriptive keys are shown, never relied on.
std::string text_or_empty(const JsonAt& in, std::string_view key) {
  return in.has(key) && in.at(key).value().is_string() ? in.string(key) : std::string();
}

RankPlacement placement_from(const JsonAt& in) {
  RankPlacement p;
  if (!in.value().is_object()) return p;
  p.rank = static_cast<int>(in.number_or("rank", 0));
  p.local_rank = static_cast<int>(in.number_or("local_rank", 0));
  p.pid = static_cast<int>(in.number_or("pid", 0));
  p.host = text_or_empty(in, "host");
  if (!in.has("gpu")) return p;
  const JsonAt gpu = in.at("gpu");
  p.device = static_cast<int>(in.number_or("device", 0));
  p.gpu_name = text_or_empty(gpu, "name");
  p.pci_bus_id = gpu.string_or("pci_bus_id", "");
  p.gpu_uuid = text_or_empty(gpu, "uuid");
  p.gpu_memory_GiB = gpu.number_or("memory_GiB", 0.0);
  p.compute_capability = static_cast<int>(gpu.number_or("compute_capability", 0));
  return p;
}

std::map<std::string, std::string> text_map(const JsonAt& in, std::string_view key) {
  std::map<std::string, std::string> out;
  if (!in.has(key) || !in.at(key).value().is_object()) return out;
  const JsonAt m = in.at(key);
  for (const auto& [name, value] : m.value().items()) {
    if (value.is_string()) out[name] = m.string(name);
  }
  return out;
}

}  // namespace

void from_json(const JsonAt& in, RunContext& c) {
  c = RunContext{};
  c.commscale_version = text_or_empty(in, "commscale_version");
  c.git_sha = text_or_empty(in, "git_sha");
  c.command_line = text_or_empty(in, "command_line");
  c.start_time_utc = text_or_empty(in, "start_time_utc");
  c.backend = in.string_or("backend", "");
  c.backend_note = text_or_empty(in, "backend_note");
  c.comm_library = text_or_empty(in, "comm_library");
  c.mpi_library = text_or_empty(in, "mpi_library");
  c.cuda_runtime = text_or_empty(in, "cuda_runtime");
  c.cuda_driver = text_or_empty(in, "cuda_driver");
  c.gpu_driver = text_or_empty(in, "gpu_driver");
  if (in.has("hosts")) {
    for (const JsonAt& h : in.array("hosts")) c.hosts.push_back(h.value().is_string() ? printable(h.value().get<std::string>()) : "");
  }
  if (in.has("ranks")) {
    for (const JsonAt& r : in.array("ranks")) c.ranks.push_back(placement_from(r));
  }
  c.environment = text_map(in, "environment");
  c.mpi_transport = text_map(in, "mpi_transport");
}

}  // namespace commscale
