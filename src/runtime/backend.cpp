#include "runtime/backend.hpp"

#include "core/error.hpp"

namespace commscale {

void Queue::begin_capture() {
  throw InputError("-G/--cudagraph", "graph capture needs the GPU backend", "-G 0 with --backend cpu");
}

std::unique_ptr<Graph> Queue::end_capture() {
  throw InputError("-G/--cudagraph", "graph capture needs the GPU backend", "-G 0 with --backend cpu");
}

}  // namespace commscale
