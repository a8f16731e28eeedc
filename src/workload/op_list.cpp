#include "workload/op_list.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

std::vector<int> without_absent(std::vector<int> deps) {
  std::erase(deps, -1);
  return deps;
}

}  // namespace

int OpListBuilder::add(WorkloadOp op) {
  op.phase = phase_;
  ops_.push_back(std::move(op));
  return static_cast<int>(ops_.size() - 1);
}

int OpListBuilder::compute(std::string name, Gemm gemm, std::vector<int> deps) {
  last_compute_ = add({std::move(name), phase_, gemm, without_absent(std::move(deps)), 0});
  return last_compute_;
}

int OpListBuilder::compute(std::string name, MemoryKernel kernel, std::vector<int> deps) {
  last_compute_ = add({std::move(name), phase_, kernel, without_absent(std::move(deps)), 0});
  return last_compute_;
}

int OpListBuilder::collective(bool enabled, std::string name, LayerCollective c) {
  if (!enabled) return -1;
  std::vector<int> deps;
  if (last_compute_ >= 0) deps.push_back(last_compute_);
  return add({std::move(name), phase_, c, std::move(deps), 0});
}

int OpListBuilder::prefetch(bool enabled, std::string name, LayerCollective c) {
  if (!enabled) return -1;
  return add({std::move(name), phase_, c, {}, 0});
}

void OpListBuilder::set_grad_parameters(int index, std::uint64_t parameters, bool experts) {
  if (accumulation_.add_read == 0.0 || parameters == 0) {
    ops_.at(static_cast<std::size_t>(index)).grad_parameters = parameters;
    ops_.at(static_cast<std::size_t>(index)).expert_grads = experts;
    return;
  }
  const std::string name = ops_.at(static_cast<std::size_t>(index)).name;
  if (accumulation_.cast_read > 0.0) {
    compute(name + ".to_fp32",
            eager_kernel(MemoryKernelKind::kCopy, parameters, accumulation_.cast_read, accumulation_.cast_written));
  }
  const int add = compute(name + ".accumulate", eager_kernel(MemoryKernelKind::kAdd, parameters, accumulation_.add_read,
                                                             accumulation_.add_written));
  ops_.at(static_cast<std::size_t>(add)).grad_parameters = parameters;
  ops_.at(static_cast<std::size_t>(add)).expert_grads = experts;
}

MemoryKernel memory_kernel(MemoryKernelKind kind, std::uint64_t elements, double read_per_element,
                           double written_per_element) {
  MemoryKernel k;
  k.kind = kind;
  k.elements = elements;
  const auto e = static_cast<double>(elements);
  k.bytes_read = Bytes(static_cast<std::uint64_t>(std::llround(e * read_per_element)));
  k.bytes_written = Bytes(static_cast<std::uint64_t>(std::llround(e * written_per_element)));
  return k;
}

MemoryKernel eager_kernel(MemoryKernelKind kind, std::uint64_t elements, double read_per_element,
                          double written_per_element) {
  MemoryKernel k = memory_kernel(kind, elements, read_per_element, written_per_element);
  k.kernels = KernelSet::kEager;
  return k;
}

Flops gemm_flops(const OpList& ops) {
  Flops total;
  for (const WorkloadOp& op : ops) {
    if (const auto* g = std::get_if<Gemm>(&op.payload)) total += g->flops;
  }
  return total;
}

}  // namespace commscale
