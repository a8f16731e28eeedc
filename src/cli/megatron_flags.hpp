#pragma once

// Megatron-LM's flag names on the command line (parallel/megatron_flags.hpp converts them): the flags that
// convert, bound to MegatronArguments, and those commscale does not model, refused by name (exit 2) as soon
// as they are read rather than ignored.

#include <string>

#include <CLI/CLI.hpp>

#include "cli/model_options.hpp"
#include "parallel/megatron_flags.hpp"

namespace commscale {

// --swiglu --group-query-attention --normalization --position-embedding-type --disable-bias-linear
// --untie-embeddings-and-output-weights --bf16 --fp16 --max-position-embeddings, and the rejected
// training flags (hidden from --help; src/cli/INPUTS.md lists them).
void add_megatron_model_flags(CLI::App& command, MegatronArguments* args);
// --num-layers-per-virtual-pipeline-stage --recompute-granularity --recompute-activations
// --recompute-method --recompute-num-layers --use-distributed-optimizer --overlap-grad-reduce
// --no-gradient-accumulation-fusion, and the rejected flags that change the step.
void add_megatron_plan_flags(CLI::App& command, MegatronArguments* args);

// The Megatron-LM flags given, for the request (`command` tells which were).
[[nodiscard]] MegatronFlags megatron_flags(const MegatronArguments& args, const CLI::App* command);

// Whether the command line gave this option (by any of its names).
[[nodiscard]] bool option_given(const CLI::App* command, const std::string& name);

}  // namespace commscale
