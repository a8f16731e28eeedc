# Multi-head latent attention (src/workload/MLA.md): plan and predict of deepseek-v2-lite carry its MLA; train runs
# a small MLA model on 2 CPU ranks (tp 2 with sequence parallelism) with the plan's tensor-parallel collectives,
# as many and as large; MLA with what is not modelled names its flag.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan --model deepseek-v2-lite --world 8 --ep 8 --global-batch 16 --json)
string(JSON kv_lora GET "${plan_json}" model mla kv_lora_rank)
expect_equal(${kv_lora} 512 "model.mla.kv_lora_rank")
string(JSON q_lora GET "${plan_json}" model mla q_lora_rank)
expect_equal(${q_lora} 0 "model.mla.q_lora_rank")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-h100 --model deepseek-v2-lite --ep 8 --dp 8
                                       --global-batch 64)
expect_contains("${out}" "deepseek-v2-lite")

# A small MLA model: 2 layers of h 128, 4 heads, a q latent of 32, a kv latent of 16.
file(WRITE "${WORK_DIR}/tiny-mla.json" [=[
{"name": "tiny-mla", "layers": 2, "hidden": 128, "heads": 4, "ffn": 256, "vocab": 1024, "seq": 64,
 "activation": "swiglu", "norm": "rmsnorm", "positions": "rotary", "linear_bias": false, "dropout": false,
 "tied_embeddings": false,
 "mla": {"q_lora_rank": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16}}
]=])
set(plan_args --model-file ${WORK_DIR}/tiny-mla.json --tp 2 --sp --flash-attn --global-batch 2)
commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan ${plan_args} --json)
planned_calls("${plan_json}" tp all_gather)
set(gathers ${planned_count})
set(gather_bytes ${planned_bytes})
commscale_run(EXPECT 0 RANKS 2 OUTPUT out ARGS train --backend cpu ${plan_args} --steps 1 --warmup 1 -J train.json)
file(READ "${WORK_DIR}/train.json" train_json)
trained_calls("${train_json}" tp all_gather)
math(EXPR expected_calls "2 * ${gathers}")
expect_equal(${trained_calls} ${expected_calls} "train's tp all-gathers (2 ranks)")

# Not modelled with MLA: named by its flag, exit 2.
commscale_run(EXPECT 2 ERROR err ARGS plan --model-file ${WORK_DIR}/tiny-mla.json --kernels eager)
expect_contains("${err}" "--kernels: eager with multi-head latent attention")
file(WRITE "${WORK_DIR}/gqa-mla.json" [=[
{"layers": 2, "hidden": 128, "heads": 4, "kv_heads": 2, "ffn": 256, "vocab": 1024, "seq": 64, "linear_bias": false,
 "mla": {"kv_lora_rank": 16, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16}}
]=])
commscale_run(EXPECT 2 ERROR err ARGS plan --model-file ${WORK_DIR}/gqa-mla.json)
expect_contains("${err}" "gqa-mla.json: kv_heads")

# The same model from Megatron-LM's flags (--qk-head-dim is d_nope, --qk-pos-emb-head-dim d_rope).
commscale_run(EXPECT 0 OUTPUT flags_json ARGS plan --num-layers 2 --hidden-size 128 --num-attention-heads 4
              --ffn-hidden-size 256 --vocab-size 1024 --seq-length 64 --swiglu --normalization RMSNorm
              --position-embedding-type rope --disable-bias-linear --untie-embeddings-and-output-weights
              --multi-latent-attention --q-lora-rank 32 --kv-lora-rank 16 --qk-head-dim 16 --qk-pos-emb-head-dim 8
              --v-head-dim 16 --tp 2 --sp --flash-attn --global-batch 2 --json)
foreach(key q_lora_rank kv_lora_rank qk_nope_head_dim qk_rope_head_dim v_head_dim)
  string(JSON from_flags GET "${flags_json}" model mla ${key})
  string(JSON from_file GET "${plan_json}" model mla ${key})
  expect_equal(${from_flags} ${from_file} "model.mla.${key} from Megatron-LM's flags")
endforeach()
string(JSON flags_params GET "${flags_json}" parameters)
string(JSON file_params GET "${plan_json}" parameters)
expect_equal(${flags_params} ${file_params} "parameters from Megatron-LM's flags")
# --multi-latent-attention alone: Megatron-LM's defaults (a kv latent of 32, heads of 128 + 64 and 128).
commscale_run(EXPECT 0 OUTPUT default_json ARGS plan --num-layers 2 --hidden-size 512 --num-attention-heads 4
              --seq-length 64 --vocab-size 1024 --disable-bias-linear --multi-latent-attention --json)
string(JSON default_kv GET "${default_json}" model mla kv_lora_rank)
expect_equal(${default_kv} 32 "--multi-latent-attention's kv latent")
# A field without a kv latent names the flag.
commscale_run(EXPECT 2 ERROR err ARGS plan --model llama2-7b --q-lora-rank 64)
expect_contains("${err}" "--kv-lora-rank")
