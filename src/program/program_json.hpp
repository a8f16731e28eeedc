#pragma once

// JSON form of the step program (program/op.hpp), for dumps and for engines in other processes:
//
// {"schema_version": 1, "kind": "commscale-step-program", "world_size": N,
//  "programs": [[op, ...], ...],                      // each distinct op list once
//  "ranks": [{"rank": r, "program": i, "groups": [{"name": "tp", "members": [0, 1]}, ...]}, ...]}
//
// op: {"id", "name", "stream", "phase", "deps": [...], "microbatch", "layer", "type", ...} where type is
//   "gemm":       "m", "n", "k", "batch", "dtype", "accumulate_dtype", "flops"
//   "memory":     "kernel", "bytes_read", "bytes_written", "elements"
//   "collective": "collective", "group", "bytes", "dtype"
//   "p2p":        "direction", "group", "peer", "bytes", "dtype"
// Reading rejects unknown keys and wrong types with an InputError naming the op and the key.

#include <string_view>

#include <nlohmann/json.hpp>

#include "program/op.hpp"

namespace commscale {

inline constexpr int kProgramSchemaVersion = 1;

void to_json(nlohmann::json& j, const Op& op);
void from_json(const nlohmann::json& j, Op& op);
void to_json(nlohmann::json& j, const Group& g);
void from_json(const nlohmann::json& j, Group& g);
void to_json(nlohmann::json& j, const RankProgram& r);
void from_json(const nlohmann::json& j, RankProgram& r);
void to_json(nlohmann::json& j, const ProgramSet& set);
void from_json(const nlohmann::json& j, ProgramSet& set);

// A program file's document as a set the engines can run: read as above, then proven by the checker
// (program/checker.hpp), so a rank short, an op list index out of range, a missing group, a member
// outside the world or a dangling dependency is an InputError naming `file` and the first problem,
// never an out-of-range access later.
[[nodiscard]] ProgramSet read_program_set(const nlohmann::json& doc, std::string_view file);

}  // namespace commscale
