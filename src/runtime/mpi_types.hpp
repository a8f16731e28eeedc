#pragma once

// MPI datatypes and reduction operators for our element types. MPI has no 16-bit floating types,
// so fp16 and bf16 are 2-byte contiguous types with user-defined operators that compute in float
// and round back, as a GPU reduction does.

#include <mpi.h>

#include <array>

#include "core/dtype.hpp"

namespace commscale {

class MpiTypes {
 public:
  MpiTypes();
  ~MpiTypes();
  MpiTypes(const MpiTypes&) = delete;
  MpiTypes& operator=(const MpiTypes&) = delete;

  [[nodiscard]] MPI_Datatype datatype(DataType type) const noexcept;
  // The operator MPI applies; avg is a sum that the caller divides afterwards.
  [[nodiscard]] MPI_Op op(DataType type, ReduceOp op) const noexcept;

 private:
  MPI_Datatype fp16_ = MPI_DATATYPE_NULL;
  MPI_Datatype bf16_ = MPI_DATATYPE_NULL;
  std::array<MPI_Op, 4> fp16_ops_{};  // sum, prod, max, min
  std::array<MPI_Op, 4> bf16_ops_{};
};

}  // namespace commscale
