#pragma once

// Readers and writers of the calibration profile's sections beyond GEMMs, memory kernels and
// collective curves (the format is in CALIBRATION.md): flash attention rows, host costs per
// framework, the device's kernel floor, the interference probe's rows and the clock curve. A host-costs object has
// the same form in a profile and in the catalog's frameworks file (host_catalog.hpp).

#include <nlohmann/json.hpp>

#include "hw/gpu_spec.hpp"
#include "hw/json_reader.hpp"
#include "predict/calibration.hpp"

namespace commscale::predict {

[[nodiscard]] AttentionPoint read_attention(hw::JsonObject& o, const hw::GpuSpec& gpu);
[[nodiscard]] HostCosts read_host_costs(hw::JsonObject& o);
[[nodiscard]] DeviceFigures read_device(hw::JsonObject& o);
[[nodiscard]] InterferencePoint read_interference(hw::JsonObject& o);
[[nodiscard]] ClockCurve read_clock(hw::JsonObject& o);

// Throws InputError at `where` when two rows describe the same case.
void reject_duplicate_attention(const std::vector<AttentionPoint>& rows, const std::string& where);
void reject_duplicate_host(const std::vector<HostCosts>& rows, const std::string& where);
void reject_duplicate_interference(const std::vector<InterferencePoint>& rows, const std::string& where);

[[nodiscard]] nlohmann::ordered_json section_json(const AttentionPoint& a);
[[nodiscard]] nlohmann::ordered_json section_json(const HostCosts& h);
[[nodiscard]] nlohmann::ordered_json section_json(const DeviceFigures& d);
[[nodiscard]] nlohmann::ordered_json section_json(const InterferencePoint& p);
[[nodiscard]] nlohmann::ordered_json section_json(const ClockCurve& c);

}  // namespace commscale::predict
