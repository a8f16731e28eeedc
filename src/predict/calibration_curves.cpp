// Interpolation in a calibration profile (the rules are in CALIBRATION.md).

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "predict/calibration.hpp"
#include "predict/nccl_tables.hpp"

namespace commscale::predict {
namespace {

// A profile's GEMM rows of one type price the GEMMs of that type; the FP8 rows (calibrate's, E4M3 x E4M3) price
// every FP8 GEMM, E5M2 gradients included: cuBLASLt runs both formats on the same tensor cores at one rate.
bool same_gemm_rows(DataType row, DataType gemm) noexcept { return row == gemm || (is_fp8(row) && is_fp8(gemm)); }

// How many of the nearest rows a GEMM's efficiency is interpolated from: as many as a cell of the
// (m, n, k) grid has corners.
constexpr std::size_t kGemmNeighbours = 8;

std::array<double, 4> shape_point(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  return {std::log2(static_cast<double>(m)), std::log2(static_cast<double>(n)), std::log2(static_cast<double>(k)),
          std::log2(static_cast<double>(batch))};
}

// Linear interpolation of y at x between (x0, y0) and (x1, y1), x0 < x1.
double lerp(double x, double x0, double y0, double x1, double y1) { return y0 + (y1 - y0) * (x - x0) / (x1 - x0); }

// Time from the memory rows of `key` (the profile keeps them sorted by bytes; rules in
// CALIBRATION.md); nullopt when there is no such row.
std::optional<Seconds> interpolated_memory_time(const std::vector<MemoryPoint>& rows,
                                                const std::optional<MemoryRowKey>& key, Bytes bytes, GBps bw) {
  const MemoryPoint* below = nullptr;
  for (const MemoryPoint& p : rows) {
    if (p.key != key) continue;
    if (bytes <= p.bytes) {
      if (below == nullptr) return p.time;
      const double efficiency =
          lerp(std::log2(static_cast<double>(bytes.count())), std::log2(static_cast<double>(below->bytes.count())),
               below->efficiency, std::log2(static_cast<double>(p.bytes.count())), p.efficiency);
      return transfer_time(bytes, bw * efficiency);
    }
    below = &p;
  }
  if (below == nullptr) return std::nullopt;
  return transfer_time(bytes, bw * below->efficiency);
}


// Nearest-rows interpolation (CALIBRATION.md): the rows `rows` keeps, as (point, value), weighted by
// inverse squared distance to `q`; an exact point returns its own row's value.
template <class Row, std::size_t N, class Keep, class Point, class Value>
std::optional<double> nearest_efficiency(const std::vector<Row>& rows, const std::array<double, N>& q, Keep keep,
                                         Point point, Value value) {
  struct Near {
    double d2;
    double efficiency;
  };
  std::vector<Near> near;
  for (const Row& row : rows) {
    if (!keep(row)) continue;
    const std::array<double, N> x = point(row);
    double d2 = 0.0;
    for (std::size_t i = 0; i < N; ++i) d2 += (x[i] - q[i]) * (x[i] - q[i]);
    if (d2 < 1e-18) return value(row);
    near.push_back({d2, value(row)});
  }
  if (near.empty()) return std::nullopt;
  // Only the nearest rows: over a whole grid, the many far rows would outweigh the few near ones.
  const auto kept = std::min(near.size(), kGemmNeighbours);
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(kept), near.end(),
                    [](const Near& a, const Near& b) { return a.d2 < b.d2; });
  double weighted = 0.0;
  double weights = 0.0;
  for (std::size_t i = 0; i < kept; ++i) {
    weighted += near[i].efficiency / near[i].d2;
    weights += 1.0 / near[i].d2;
  }
  return weighted / weights;
}

}  // namespace

bool same_family(const hw::GpuSpec& a, const hw::GpuSpec& b) {
  const ComputeCapability ca = parse_capability(*a.compute_capability.value);
  const ComputeCapability cb = parse_capability(*b.compute_capability.value);
  return ca.major > 0 && ca.major == cb.major;
}

std::optional<double> gemm_efficiency(const CalibrationProfile& profile, const Gemm& gemm, Seconds fixed) {
  return nearest_efficiency(
      profile.gemm, shape_point(gemm.m, gemm.n, gemm.k, gemm.batch),
      [&](const GemmPoint& p) { return same_gemm_rows(p.dtype, gemm.dtype); },
      [](const GemmPoint& p) { return shape_point(p.m, p.n, p.k, p.batch); },
      [&](const GemmPoint& p) {
        // The row's work over its time less the fixed part, at most the peak (the fastest row's own work
        // takes no time beyond it).
        const double beyond = p.time.value() - fixed.value();
        return beyond > p.efficiency * p.time.value() ? p.efficiency * p.time.value() / beyond : 1.0;
      });
}

std::optional<Seconds> fastest_gemm(const CalibrationProfile& profile, DataType dtype) {
  std::optional<Seconds> fastest;
  for (const GemmPoint& p : profile.gemm) {
    if (same_gemm_rows(p.dtype, dtype) && (!fastest || p.time < *fastest)) fastest = p.time;
  }
  return fastest;
}

std::optional<double> attention_efficiency(const CalibrationProfile& profile, const Gemm& gemm, bool backward) {
  // A flash product's m is the sequence, its batch micro-batch x heads, and its head size the one
  // dimension that is neither the sequence nor the causal keys.
  const std::int64_t head_dim = std::min({gemm.m, gemm.n, gemm.k});
  const auto log2 = [](std::int64_t v) { return std::log2(static_cast<double>(v)); };
  // The rows of the kernel's own dropout where the profile has some, else the others.
  const bool dropout_rows = std::any_of(profile.attention.begin(), profile.attention.end(), [&](const AttentionPoint& p) {
    return p.dropout == gemm.flash_dropout && p.dtype == gemm.dtype && p.backward == backward && p.head_dim == head_dim;
  });
  return nearest_efficiency(
      profile.attention, std::array<double, 2>{log2(gemm.m), log2(gemm.batch)},
      [&](const AttentionPoint& p) {
        return p.dtype == gemm.dtype && p.backward == backward && p.head_dim == head_dim &&
               (!dropout_rows || p.dropout == gemm.flash_dropout);
      },
      [&](const AttentionPoint& p) { return std::array<double, 2>{log2(p.seq), log2(p.batch)}; },
      [](const AttentionPoint& p) { return p.efficiency; });
}

const HostCosts* find_host_costs(const CalibrationProfile& profile, std::string_view framework) {
  for (const HostCosts& h : profile.host) {
    if (h.framework == framework) return &h;
  }
  return nullptr;
}

MemoryRowKey memory_row_key(const MemoryKernel& kernel, Phase phase) noexcept {
  return {kernel.kind, kernel.kernels, phase == Phase::kBackward};
}

std::optional<Seconds> memory_time(const CalibrationProfile& profile, Bytes bytes, GBps bw,
                                   std::optional<MemoryRowKey> key) {
  if (key) {
    if (auto t = interpolated_memory_time(profile.memory, key, bytes, bw)) return t;
  }
  return interpolated_memory_time(profile.memory, std::nullopt, bytes, bw);
}

const CollectiveCurve* find_curve(const CalibrationProfile& profile, Collective c, int ranks, int nodes,
                                  hw::PathClass path_class) {
  for (const CollectiveCurve& curve : profile.collectives) {
    if (curve.collective == c && curve.ranks == ranks && curve.nodes == nodes && curve.path_class == path_class) {
      return &curve;
    }
  }
  return nullptr;
}

Seconds curve_time(const CollectiveCurve& curve, Bytes size) {
  const auto& pts = curve.points;
  if (size <= pts.front().size) return pts.front().time;
  if (size >= pts.back().size) {
    // The largest size's bus bandwidth: time grows with the size from there.
    return pts.back().time * (static_cast<double>(size.count()) / static_cast<double>(pts.back().size.count()));
  }
  const double x = std::log(static_cast<double>(size.count()));
  for (std::size_t i = 1; i < pts.size(); ++i) {
    if (size <= pts[i].size) {
      const double y =
          lerp(x, std::log(static_cast<double>(pts[i - 1].size.count())), std::log(pts[i - 1].time.value()),
               std::log(static_cast<double>(pts[i].size.count())), std::log(pts[i].time.value()));
      return Seconds(std::exp(y));
    }
  }
  return pts.back().time;
}

}  // namespace commscale::predict
