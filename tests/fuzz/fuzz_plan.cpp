// libFuzzer target: the parallel plan as its flags give it. The input is whitespace-separated fields
// in the order of the flags below; every field goes through the parser or check the flag uses, and a
// plan that passes validation must build a step program that passes the checker.
//
//   tp pp dp zero micro_batch global_batch chunks schedule recompute order sp

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "parallel/plan.hpp"
#include "parallel/program_builder.hpp"
#include "program/checker.hpp"
#include "workload/op_list.hpp"
#include "workload/presets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  commscale::ParallelPlan p;
  std::string schedule = "1f1b";
  std::string recompute = "none";
  int sp = 0;
  in >> p.tp >> p.pp >> p.dp >> p.zero_stage >> p.micro_batch >> p.global_batch >> p.chunks >> schedule >> recompute >>
      p.order >> sp;
  p.sequence_parallel = sp != 0;
  try {
    const commscale::TransformerConfig model = commscale::find_preset("tiny", "--model");
    p.schedule = commscale::parse_schedule(schedule, "--schedule");
    p.recompute = commscale::parse_recompute(recompute, "--recompute");
    const commscale::CheckedPlan checked(model, p);
    // Valid, but too large to build within the fuzzer's time per input.
    if (commscale::world_size(p) > 64 || commscale::microbatches_per_step(p) * (model.layers / p.pp) > 4096) return 0;
    const commscale::ProgramSet set = commscale::build_program(checked);
    if (!commscale::check_program(set).ok()) std::abort();  // a valid plan built a bad program
  } catch (const commscale::InputError&) {
  }
  return 0;
}
