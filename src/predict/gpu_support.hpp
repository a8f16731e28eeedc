#pragma once

// What a GPU can train with, checked before a prediction on it:
//   - the training type needs a tensor (or, for fp32, vector) rate of that type in the GPU's file: a V100
//     has fp16 and no bf16 (bf16 starts with Ampere; its file's bf16_tensor_fp32acc_TFLOPS is null);
//   - fused (flash) attention needs compute capability 8.0 or later: FlashAttention's kernels
//     (flash-attn 2, cuDNN's and TransformerEngine's fused attention) run on Ampere and later only;
//   - FP8 training (--fp8) needs FP8 tensor cores: an FP8 rate in the GPU's file (fp8_tensor_TFLOPS); `compare`
//     trains in FP8 where the GPU has them and in the training type elsewhere (TrainingChoices::
//     fp8_where_supported), as its question is which hardware, with FP8 where the hardware has it.
// What the user chose on the command line and the GPU cannot run is refused (InputError naming the flag
// and the GPU, exit 2). A default the user did not choose (a preset's bf16, a framework's flash attention)
// becomes what the GPU runs (fp16, attention unfused), and a note says so.

#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/plan_terms.hpp"
#include "hw/gpu_spec.hpp"

namespace commscale::predict {

struct TrainingChoices {
  DataType dtype = DataType::kBFloat16;
  std::string dtype_flag;  // the flag that chose it ("--dtype", "--bf16"); empty: a default
  bool flash_attention = true;
  std::string flash_flag;  // the flag that asked for it ("--flash-attn"); empty: a default
  Fp8Recipe fp8 = Fp8Recipe::kNone;  // always the user's choice (--fp8, --fp8-format): refused, never changed...
  // ...but where the caller compares GPUs (compare): FP8 where the GPU has it, bf16 elsewhere, with a note.
  bool fp8_where_supported = false;
};

// Whether the GPU has a rate for training in `dtype` (fp32 accumulate).
[[nodiscard]] bool gpu_trains_in(const hw::GpuSpec& gpu, DataType dtype);
// Whether the GPU has FP8 tensor cores (an FP8 rate in its file: Ada, Hopper, Blackwell; not A100, 3090, V100).
[[nodiscard]] bool gpu_has_fp8(const hw::GpuSpec& gpu);
// Whether the GPU runs FlashAttention's kernels (compute capability 8.0 or later).
[[nodiscard]] bool gpu_runs_flash_attention(const hw::GpuSpec& gpu);

// Changes the defaults in `c` the GPU cannot run and returns a note for each; throws InputError for a
// choice the user made (named by its flag) that the GPU cannot run.
[[nodiscard]] std::vector<std::string> fit_to_gpu(const hw::GpuSpec& gpu, TrainingChoices& c);

}  // namespace commscale::predict
