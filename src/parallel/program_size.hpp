#pragma once

// How large a full step program (program_builder.hpp) may be. build_program checks it; commands that
// do slow work before building (predict expands the cluster's link graph) check it first.

#include "parallel/plan.hpp"

namespace commscale {

// Throws InputError naming --dp/--tp/--pp when the program of every rank would be too large to build,
// check and simulate in reasonable time and memory; says why and what would do.
void check_program_size(const ParallelPlan& plan);

}  // namespace commscale
