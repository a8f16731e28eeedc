#pragma once

// Per-architecture defaults of the compute model (src/predict/compute_model.hpp) for a GPU priced without
// a calibration profile: topologies/compute.json, one entry per family, matched by the GPU's
// compute_capability and market ("any" matches every market). Every figure carries its tag and source.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/figure.hpp"
#include "hw/gpu_spec.hpp"

namespace commscale::hw {

struct ComputeDefaults {
  std::string family;                       // "ampere-datacenter"
  std::string label;                        // "Ampere data-centre"
  std::string compute_capability;           // "8.0"
  std::string market;                       // "datacenter", "professional", "geforce" or "any"
  // GEMMs of commscale's own executor (its cuBLASLt calls, at the clocks its steps run at):
  Figure<double> gemm_efficiency_ceiling;   // fraction of the dense peak before tile and depth losses
  Figure<double> gemm_call_us;              // fixed time of a GEMM call
  // GEMMs issued through PyTorch (Megatron-LM, Megatron-DeepSpeed, PyTorch DDP and FSDP): cuBLAS's own
  // heuristics, at the rate of GEMMs timed back to back (measured on an H200: results/h200x1-2026-12-03c).
  Figure<double> pytorch_gemm_efficiency_ceiling;
  Figure<double> pytorch_gemm_call_us;
  Figure<double> memory_kernel_efficiency;  // fraction of the catalog memory bandwidth
  Figure<double> memory_kernel_us;          // fixed time of a memory kernel
  Figure<double> copy_efficiency;           // the GEMM's memory roofline, fraction of the catalog bandwidth
};

struct ComputeCatalog {
  std::string file;  // where it was read from (named in notes)
  std::string default_family;
  std::vector<ComputeDefaults> families;
};

// Validates a compute.json document: unknown or missing keys, a bad tag, an efficiency outside (0, 1],
// a market other than datacenter/professional/geforce/any, two entries for one compute capability and
// market, or a default_family that names no entry: InputError naming `file` and the key path.
[[nodiscard]] ComputeCatalog parse_compute_catalog(const nlohmann::json& doc, const std::string& file);
[[nodiscard]] ComputeCatalog read_compute_catalog(const std::filesystem::path& file);
// topologies/compute.json of hw::find_topologies_dir(), read once per directory.
[[nodiscard]] const ComputeCatalog& compute_catalog();

struct ComputeMatch {
  const ComputeDefaults* defaults = nullptr;
  bool fallback = false;  // no entry for the GPU's family: the catalog's default family
};
// The entry for `gpu`: exact market first, then "any"; else the default family (fallback).
[[nodiscard]] ComputeMatch match_compute_defaults(const ComputeCatalog& catalog, const GpuSpec& gpu);

}  // namespace commscale::hw
