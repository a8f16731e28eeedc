#include "runtime/host_backend.hpp"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/size.hpp"
#include "runtime/mpi_communicator.hpp"

namespace commscale {
namespace {

constexpr std::size_t kAlignment = 4096;

class HostBuffer final : public Buffer {
 public:
  HostBuffer(std::byte* data, Bytes size) : Buffer(data, size) {}
  ~HostBuffer() override { std::free(data()); }
};

}  // namespace

HostBackend::HostBackend(const MpiComm& world) : world_(world), types_(std::make_shared<MpiTypes>()) {}

std::unique_ptr<Buffer> HostBackend::allocate(Bytes size, const std::string& what) {
  const std::size_t rounded = (size.count() + kAlignment - 1) / kAlignment * kAlignment + kAlignment;
  auto* data = static_cast<std::byte*>(std::aligned_alloc(kAlignment, rounded));
  if (data == nullptr) {
    throw RuntimeFailure(fmt::format("cannot allocate {} of host memory for the {} on {}", format_size(size), what,
                                     process_identity()));
  }
  return std::make_unique<HostBuffer>(data, size);
}

void HostBackend::fill_pattern(Buffer& buffer, std::uint64_t offset, std::uint64_t count, const PatternSpec& spec) {
  fill_pattern_host(buffer.data() + offset * size_of(spec.type), count, spec);
}

void HostBackend::poison(Buffer& buffer, std::uint64_t offset_bytes, Bytes size) {
  std::memset(buffer.data() + offset_bytes, kPoisonByte, size.count());
}

std::uint64_t HostBackend::count_wrong(const Buffer& buffer, std::uint64_t offset, std::uint64_t count,
                                       const PatternSpec& spec) {
  return count_wrong_host(buffer.data() + offset * size_of(spec.type), count, spec);
}

void HostBackend::store_element(Buffer& buffer, std::uint64_t offset, DataType type, double value) {
  store_element_host(buffer.data(), type, offset, value);
}

std::unique_ptr<Communicator> HostBackend::world() {
  return std::make_unique<MpiCommunicator>(world_.split(0, world_.rank()), types_);
}

void HostBackend::describe(RankPlacement& placement, RunContext& context) const {
  placement.device = -1;
  context.backend = kind();
  context.comm_library = "MPI on host memory";
}

}  // namespace commscale
