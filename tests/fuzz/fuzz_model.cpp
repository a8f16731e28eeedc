// libFuzzer target: model files (--model-file). Any input either loads as a valid model or ends in
// InputError; a model that loads must go through the workload's arithmetic (parameters, FLOPs,
// memory) without undefined behaviour.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hw/json_reader.hpp"
#include "parallel/plan.hpp"
#include "parallel/plan_memory.hpp"
#include "workload/flops.hpp"
#include "workload/hf_config.hpp"
#include "workload/model_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json doc = commscale::hw::parse_json_text(text, "fuzz.json");  // as load_model_file reads
    const commscale::TransformerConfig model = commscale::is_hf_config(doc)
                                                   ? commscale::model_from_hf_config(doc, "fuzz.json", std::nullopt)
                                                   : commscale::model_from_json(doc, "fuzz.json");
    const commscale::ParallelPlan plan;
    commscale::validate_plan(model, plan, 1);
    const commscale::MemoryOptions memory;
    (void)commscale::memory_per_stage(model, plan, memory);
    (void)commscale::megatron_model_flops(model, 1);
    (void)commscale::model_to_json(model);
  } catch (const commscale::InputError&) {
  }
  return 0;
}
