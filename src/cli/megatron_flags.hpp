#pragma once

// Megatron-LM's flag names, so that a line of a Megatron-LM launch script can be pasted. Plain aliases
// (--tensor-model-parallel-size for --tp, --num-layers for --layers, ...) are second names of
// commscale's options (model_options.cpp); this file holds the flags that convert, and rejects, by
// name, the Megatron-LM flags commscale does not model (exit 2) rather than ignoring them.

#include <string>

#include <CLI/CLI.hpp>

#include "cli/model_options.hpp"
#include "workload/model_spec.hpp"

namespace commscale {

// --swiglu --group-query-attention --normalization --position-embedding-type --disable-bias-linear
// --untie-embeddings-and-output-weights --bf16 --fp16 --max-position-embeddings, and the rejected
// model flags (hidden from --help; src/cli/INPUTS.md lists them).
void add_megatron_model_flags(CLI::App& command, MegatronArguments* args);
// --num-layers-per-virtual-pipeline-stage --recompute-granularity --recompute-activations
// --recompute-method --recompute-num-layers --use-distributed-optimizer, and the rejected plan flags.
void add_megatron_plan_flags(CLI::App& command, MegatronArguments* args);

// Model overrides from the Megatron-LM flags given. Throws InputError naming the flag.
void apply_megatron_model_flags(const ModelPlanArguments& args, ModelOverrides& overrides);
// Checks the resolved model against --max-position-embeddings.
void check_megatron_model(const ModelPlanArguments& args, const TransformerConfig& model);
// The plan's recompute, ZeRO stage and chunks from the Megatron-LM flags given, checked against the
// commscale flags that say the same. Throws InputError naming the flag.
void apply_megatron_plan_flags(const ModelPlanArguments& args, const TransformerConfig& model, ParallelPlan& plan);

// The Megatron-LM model flags given, as text to paste into another command (" --swiglu ...").
[[nodiscard]] std::string megatron_model_flags_text(const ModelPlanArguments& args);

// Whether the command line gave this option (by any of its names).
[[nodiscard]] bool option_given(const CLI::App* command, const std::string& name);

}  // namespace commscale
