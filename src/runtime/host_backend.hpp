#pragma once

// The CPU backend: host memory, MPI collectives, plain loops for the data pattern. It runs anywhere
// MPI runs, and is what commscale uses when no GPU is visible.

#include <memory>
#include <string>

#include "runtime/backend.hpp"
#include "runtime/mpi.hpp"
#include "runtime/mpi_types.hpp"

namespace commscale {

class HostBackend final : public Backend {
 public:
  explicit HostBackend(const MpiComm& world);

  [[nodiscard]] std::string kind() const override { return "cpu"; }
  [[nodiscard]] std::unique_ptr<Buffer> allocate(Bytes size, const std::string& what) override;
  void fill_pattern(Buffer& buffer, std::uint64_t offset, std::uint64_t count, const PatternSpec& spec) override;
  void poison(Buffer& buffer, std::uint64_t offset_bytes, Bytes size) override;
  [[nodiscard]] std::uint64_t count_wrong(const Buffer& buffer, std::uint64_t offset, std::uint64_t count,
                                          const PatternSpec& spec) override;
  void store_element(Buffer& buffer, std::uint64_t offset, DataType type, double value) override;
  [[nodiscard]] std::unique_ptr<Communicator> world() override;
  void describe(RankPlacement& placement, RunContext& context) const override;
  [[nodiscard]] std::unique_ptr<StepEngine> make_step_engine(const StepEngineConfig& config) override;

 private:
  const MpiComm& world_;
  std::shared_ptr<const MpiTypes> types_;
};

}  // namespace commscale
