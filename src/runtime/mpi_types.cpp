#include "runtime/mpi_types.hpp"

#include <algorithm>
#include <cstdint>

#include "runtime/mpi.hpp"

namespace commscale {
namespace {

using HalfToFloat = float (*)(std::uint16_t);
using FloatToHalf = std::uint16_t (*)(float);

struct Add {
  float operator()(float a, float b) const { return a + b; }
};
struct Multiply {
  float operator()(float a, float b) const { return a * b; }
};
struct Max {
  float operator()(float a, float b) const { return std::max(a, b); }
};
struct Min {
  float operator()(float a, float b) const { return std::min(a, b); }
};

template <HalfToFloat kLoad, FloatToHalf kStore, class F>
void half_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = kStore(F{}(kLoad(a[i]), kLoad(b[i])));
}

template <HalfToFloat kLoad, FloatToHalf kStore>
std::array<MPI_Op, 4> make_half_ops() {
  std::array<MPI_Op, 4> ops{};
  MPI_CHECK(MPI_Op_create(&half_reduce<kLoad, kStore, Add>, 1, &ops[0]));
  MPI_CHECK(MPI_Op_create(&half_reduce<kLoad, kStore, Multiply>, 1, &ops[1]));
  MPI_CHECK(MPI_Op_create(&half_reduce<kLoad, kStore, Max>, 1, &ops[2]));
  MPI_CHECK(MPI_Op_create(&half_reduce<kLoad, kStore, Min>, 1, &ops[3]));
  return ops;
}

std::size_t op_index(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return 0;
    case ReduceOp::kProd: return 1;
    case ReduceOp::kMax: return 2;
    case ReduceOp::kMin: return 3;
  }
  return 0;
}

}  // namespace

MpiTypes::MpiTypes() {
  MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &fp16_));
  MPI_CHECK(MPI_Type_commit(&fp16_));
  MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &bf16_));
  MPI_CHECK(MPI_Type_commit(&bf16_));
  fp16_ops_ = make_half_ops<&fp16_to_float, &float_to_fp16>();
  bf16_ops_ = make_half_ops<&bf16_to_float, &float_to_bf16>();
}

MpiTypes::~MpiTypes() {
  if (!MpiSession::active()) return;
  for (MPI_Op& op : fp16_ops_) MPI_Op_free(&op);
  for (MPI_Op& op : bf16_ops_) MPI_Op_free(&op);
  MPI_Type_free(&fp16_);
  MPI_Type_free(&bf16_);
}

MPI_Datatype MpiTypes::datatype(DataType type) const noexcept {
  switch (type) {
    case DataType::kInt8: return MPI_INT8_T;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kFloat16: return fp16_;
    case DataType::kBFloat16: return bf16_;
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return MPI_BYTE;  // moved as bytes; no collective reduces FP8 (dtype.hpp)
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op MpiTypes::op(DataType type, ReduceOp op) const noexcept {
  if (type == DataType::kFloat16) return fp16_ops_[op_index(op)];
  if (type == DataType::kBFloat16) return bf16_ops_[op_index(op)];
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return MPI_SUM;
    case ReduceOp::kProd: return MPI_PROD;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
  }
  return MPI_OP_NULL;
}

}  // namespace commscale
