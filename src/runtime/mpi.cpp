#include "runtime/mpi.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/control_plane.hpp"

namespace commscale {

std::string mpi_error_string(int code) {
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  if (MPI_Error_string(code, text.data(), &length) != MPI_SUCCESS) return fmt::format("MPI error {}", code);
  return std::string(text.data(), static_cast<std::size_t>(length));
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

bool MpiSession::active() noexcept {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

void MpiSession::abort(ExitCode code) noexcept {
  MPI_Abort(MPI_COMM_WORLD, static_cast<int>(code));
  std::_Exit(static_cast<int>(code));  // MPI_Abort does not return; this is for the compiler
}

MpiComm::MpiComm(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  if (comm_ == MPI_COMM_NULL) {  // this rank is not a member (split with MPI_UNDEFINED)
    rank_ = -1;
    size_ = 0;
    return;
  }
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiComm MpiComm::world() { return MpiComm(MPI_COMM_WORLD, false); }

MpiComm::MpiComm(MpiComm&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      owned_(std::exchange(other.owned_, false)),
      rank_(other.rank_),
      size_(other.size_) {}

MpiComm& MpiComm::operator=(MpiComm&& other) noexcept {
  if (this != &other) {
    if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    owned_ = std::exchange(other.owned_, false);
    rank_ = other.rank_;
    size_ = other.size_;
  }
  return *this;
}

MpiComm::~MpiComm() {
  if (owned_ && comm_ != MPI_COMM_NULL && MpiSession::active()) MPI_Comm_free(&comm_);
}

MpiComm MpiComm::split(int color, int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split(comm_, color, key, &out));
  return MpiComm(out, true);
}

MpiComm MpiComm::split_shared_memory() const {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &out));
  return MpiComm(out, true);
}

// The control plane's collectives are started non-blocking and completed by wait_polled, so a rank
// waiting in one still notices a lost rank and answers other ranks' questions.
void MpiComm::barrier() const {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Ibarrier(comm_, &request));
  wait_polled(request, fmt::format("a barrier of {} ranks", size_));
}

std::vector<double> MpiComm::gather(std::span<const double> values, int root) const {
  std::vector<double> all(rank_ == root ? values.size() * static_cast<std::size_t>(size_) : 0);
  const int n = static_cast<int>(values.size());
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Igather(values.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, root, comm_, &request));
  wait_polled(request, fmt::format("a gather to rank {} of {} ranks", root, size_));
  return all;
}

std::vector<std::string> MpiComm::allgather(const std::string& value) const {
  const std::vector<int> lengths = allgather(static_cast<int>(value.size()));
  std::vector<int> offsets(lengths.size(), 0);
  for (std::size_t i = 1; i < lengths.size(); ++i) offsets[i] = offsets[i - 1] + lengths[i - 1];
  std::string joined(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Iallgatherv(value.data(), static_cast<int>(value.size()), MPI_CHAR, joined.data(), lengths.data(),
                            offsets.data(), MPI_CHAR, comm_, &request));
  wait_polled(request, fmt::format("an all-gather of {} ranks", size_));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) out.push_back(joined.substr(offsets[i], lengths[i]));
  return out;
}

std::vector<int> MpiComm::allgather(int value) const {
  std::vector<int> all(static_cast<std::size_t>(size_));
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Iallgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, comm_, &request));
  wait_polled(request, fmt::format("an all-gather of {} ranks", size_));
  return all;
}

std::uint64_t MpiComm::sum(std::uint64_t value) const {
  std::uint64_t total = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Iallreduce(&value, &total, 1, MPI_UINT64_T, MPI_SUM, comm_, &request));
  wait_polled(request, fmt::format("an all-reduce of {} ranks", size_));
  return total;
}

int MpiComm::max(int value) const {
  return allreduce_int(value, MPI_MAX);
}

int MpiComm::min(int value) const {
  return allreduce_int(value, MPI_MIN);
}

int MpiComm::allreduce_int(int value, MPI_Op op) const {
  int out = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Iallreduce(&value, &out, 1, MPI_INT, op, comm_, &request));
  wait_polled(request, fmt::format("an all-reduce of {} ranks", size_));
  return out;
}

std::vector<int> MpiComm::world_ranks() const {
  if (comm_ == MPI_COMM_NULL) return {};
  MPI_Group mine = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  MPI_CHECK(MPI_Comm_group(comm_, &mine));
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  std::vector<int> local(static_cast<std::size_t>(size_));
  for (int i = 0; i < size_; ++i) local[static_cast<std::size_t>(i)] = i;
  std::vector<int> out(local.size());
  MPI_CHECK(MPI_Group_translate_ranks(mine, size_, local.data(), world, out.data()));
  MPI_Group_free(&mine);
  MPI_Group_free(&world);
  return out;
}

double MpiComm::broadcast(double value, int root) const {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Ibcast(&value, 1, MPI_DOUBLE, root, comm_, &request));
  wait_polled(request, fmt::format("a broadcast from rank {} of {} ranks", root, size_));
  return value;
}

void fail_on_all_ranks(const MpiComm& world, const InputError& error) {
  if (world.rank() == 0) throw error;
  throw PeerFailure(error.what());
}

namespace {

// The launcher's idea of this rank's local index, or -1 if no launcher variable is set.
int local_rank_from_environment(std::string* source) {
  for (const char* variable : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}) {
    const char* text = std::getenv(variable);
    if (text == nullptr || *text == '\0') continue;
    int value = -1;
    const char* end = text + std::strlen(text);
    const auto [stop, ec] = std::from_chars(text, end, value);
    if (ec != std::errc() || stop != end || value < 0) {
      throw InputError(fmt::format("environment variable {}", variable), fmt::format("\"{}\" is not a rank", text),
                       "a non-negative integer set by the launcher");
    }
    *source = variable;
    return value;
  }
  return -1;
}

}  // namespace

NodeInfo discover_node(const MpiComm& world) {
  NodeInfo info;
  info.host = host_name();
  const MpiComm node = world.split_shared_memory();
  info.local_size = node.size();
  info.local_rank = local_rank_from_environment(&info.local_rank_source);
  if (info.local_rank < 0) {
    info.local_rank = node.rank();
    info.local_rank_source = "MPI_COMM_TYPE_SHARED";
  }
  // The launcher's local ranks on this node must be exactly 0..local_size-1.
  std::vector<int> local_ranks = node.allgather(info.local_rank);
  std::sort(local_ranks.begin(), local_ranks.end());
  bool consistent = true;
  for (int i = 0; i < info.local_size; ++i) consistent = consistent && local_ranks[static_cast<std::size_t>(i)] == i;
  if (world.min(consistent ? 1 : 0) == 0) {
    if (!consistent) {
      throw InputError(fmt::format("{} on host {}", info.local_rank_source, info.host),
                       fmt::format("the {} ranks sharing this node have local ranks {}", info.local_size, local_ranks),
                       fmt::format("each of 0..{} exactly once; start ranks with mpirun or srun", info.local_size - 1));
    }
    throw PeerFailure("local ranks are inconsistent on another node");
  }
  // Number the nodes by their lowest world rank.
  const MpiComm leaders = world.split(node.rank() == 0 ? 0 : MPI_UNDEFINED, world.rank());
  double index_and_count[2] = {0, 0};
  if (node.rank() == 0) index_and_count[0] = leaders.rank(), index_and_count[1] = leaders.size();
  MPI_CHECK(MPI_Bcast(index_and_count, 2, MPI_DOUBLE, 0, node.get()));
  info.node_index = static_cast<int>(index_and_count[0]);
  info.node_count = static_cast<int>(index_and_count[1]);
  return info;
}

}  // namespace commscale
