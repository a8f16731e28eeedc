#include "runtime/mpi_transport.hpp"

#include <mpi.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <vector>

namespace commscale {
namespace {

constexpr const char* kDefault = "default";

// The string control variables named in `wanted` (MPI_T name -> our key) that have a value.
void read_control_variables(const std::map<std::string, std::string>& wanted, std::map<std::string, std::string>* out) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return;
  int count = 0;
  if (MPI_T_cvar_get_num(&count) == MPI_SUCCESS) {
    for (int i = 0; i < count; ++i) {
      std::array<char, 256> name{};
      int name_length = static_cast<int>(name.size());
      int verbosity = 0, bind = 0, scope = 0;
      MPI_Datatype type = MPI_DATATYPE_NULL;
      MPI_T_enum enumeration = MPI_T_ENUM_NULL;
      if (MPI_T_cvar_get_info(i, name.data(), &name_length, &verbosity, &type, &enumeration, nullptr, nullptr, &bind,
                              &scope) != MPI_SUCCESS ||
          type != MPI_CHAR) {
        continue;
      }
      const auto key = wanted.find(name.data());
      if (key == wanted.end()) continue;
      MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
      int length = 0;
      if (MPI_T_cvar_handle_alloc(i, nullptr, &handle, &length) != MPI_SUCCESS) continue;
      std::vector<char> value(static_cast<std::size_t>(length) + 1, '\0');
      if (MPI_T_cvar_read(handle, value.data()) == MPI_SUCCESS && value.front() != '\0') {
        (*out)[key->second] = value.data();
      }
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
}

// The PML components whose libraries (mca_pml_NAME.so) this process has mapped.
std::set<std::string> mapped_pml_components() {
  std::set<std::string> found;
  std::ifstream maps("/proc/self/maps");
  const std::regex library(R"(/mca_pml_([a-z0-9_]+)\.so)");
  std::smatch match;
  for (std::string line; std::getline(maps, line);) {
    if (std::regex_search(line, match, library)) found.insert(match[1].str());
  }
  return found;
}

}  // namespace

std::map<std::string, std::string> mpi_transport_settings() {
  std::map<std::string, std::string> s = {{"pml", "unknown"},
                                          {"pml_requested", kDefault},
                                          {"btl_requested", kDefault},
                                          {"pml_ucx_tls", kDefault},
                                          {"pml_ucx_devices", kDefault}};
  read_control_variables({{"pml", "pml_requested"},
                          {"btl", "btl_requested"},
                          {"pml_ucx_tls", "pml_ucx_tls"},
                          {"pml_ucx_devices", "pml_ucx_devices"}},
                         &s);
  std::set<std::string> pml = mapped_pml_components();
  pml.erase("monitoring");  // an interposer, present only when asked for, never the transport itself
  if (pml.size() == 1) s["pml"] = *pml.begin();
  for (const char* variable : {"UCX_TLS", "UCX_NET_DEVICES"}) {
    const char* value = std::getenv(variable);
    s[variable] = value != nullptr && *value != '\0' ? value : kDefault;
  }
  return s;
}

}  // namespace commscale
