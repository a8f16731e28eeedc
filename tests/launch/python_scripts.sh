#!/usr/bin/env bash
# The PyTorch scripts on a machine without PyTorch: --help works, the reference's --grid is read and
# checked (--dry-run lists the points; a bad line is refused with exit 2 naming the file and line),
# pytorch_kernels.py --dry-run checks its profile and counts its cases, gemm_context.py refuses bad
# shapes and contexts, and regime_grid.py writes the
# grid both engines share and refuses a bad points file. (The scripts' measurements need a GPU: the
# launch/regime-grid-device.sh dry run and the GPU machine.)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
for script in pytorch_reference.py pytorch_host.py pytorch_kernels.py regime_grid.py gemm_context.py megatron_host.py \
    fp8_gemm_probe.py offload_probe.py; do
  python3 "$root/launch/$script" --help > /dev/null || fail "$script --help"
done
points="$root/tests/data/results/h200x1-2026-12-02b/points.jsonl"
python3 "$root/launch/regime_grid.py" pytorch-grid "$points" --out "$work" > /dev/null
python3 "$root/launch/pytorch_reference.py" --mode dp --grid "$work/grid.jsonl" --dry-run > "$work/listed.txt"
[ "$(grep -c '"dry_run": true' "$work/listed.txt")" = 19 ] || fail "19 PyTorch runs expected from points.jsonl"
grep -q '"id": "q05-s512-mb1-sdpa", .*"arch": "llama", .*"kv_heads": 2, "ffn": 4864' "$work/listed.txt" ||
  fail "the Llama point's settings: $(head -1 "$work/listed.txt")"
grep -q '"dropout": 0.0' "$work/listed.txt" || fail "Llama runs without dropout"
# host-bound points (8 runs) take 30 steps after 5, the others 5 after 2
[ "$(grep -c '"steps": 30, "warmup": 5' "$work/grid.jsonl")" = 8 ] || fail "8 host-bound runs of 30 steps expected"
[ "$(grep -c '"steps": 5, "warmup": 2' "$work/grid.jsonl")" = 11 ] || fail "11 runs of 5 steps expected"

refused() {  # refused WANT_TEXT COMMAND...: exit 2 and the text on stderr
  local want=$1 rc=0
  shift
  "$@" > /dev/null 2> "$work/err" || rc=$?
  [ "$rc" = 2 ] || fail "exit 2 expected from '$*', got $rc"
  grep -qF -- "$want" "$work/err" || fail "'$want' expected from '$*', got: $(cat "$work/err")"
}
printf '{"hidden": 1024, "heads": 16}\n{"hiden": 1}\n' > "$work/bad.jsonl"
refused "bad.jsonl:2: unknown key \"hiden\"" python3 "$root/launch/pytorch_reference.py" --mode dp --grid "$work/bad.jsonl" --dry-run
printf '{"arch": "llama", "hidden": 1024, "heads": 16}\n' > "$work/bad.jsonl"
refused "llama needs ffn" python3 "$root/launch/pytorch_reference.py" --mode dp --grid "$work/bad.jsonl" --dry-run
printf '{"layers": "8"}\n' > "$work/bad.jsonl"
refused '"layers" is "8", expected int' python3 "$root/launch/pytorch_reference.py" --mode dp --grid "$work/bad.jsonl" --dry-run

base="$root/tests/data/results/h200x1-2026-12-01b/calibration/cal-heat20.json"
# 2 head sizes x 5 sequences x 3 batch counts x 2 phases; GPT blocks once more with dropout, Llama's not.
python3 "$root/launch/pytorch_kernels.py" --base "$base" -o "$work/x.json" --dry-run | grep -q "120 attention rows" ||
  fail "pytorch_kernels.py --dry-run: 120 attention rows expected (GPT: without and with dropout)"
python3 "$root/launch/pytorch_kernels.py" --arch llama --ffn 2816 --base "$base" -o "$work/x.json" --dry-run |
  grep -q "60 attention rows" || fail "pytorch_kernels.py --arch llama --dry-run: 60 attention rows expected"
[ ! -e "$work/x.json" ] || fail "a dry run wrote a profile"
echo '{}' > "$work/notprofile.json"
refused "not a commscale calibration profile" python3 "$root/launch/pytorch_kernels.py" --base "$work/notprofile.json" -o "$work/x.json" --dry-run
refused "--attention-seqs takes positive integers" python3 "$root/launch/pytorch_kernels.py" --base "$base" -o "$work/x.json" --attention-seqs 0 --dry-run

# the optimizer rows (4 per block) are among the memory rows; --gemms is a flag of its own
python3 "$root/launch/pytorch_kernels.py" --arch llama --ffn 2816 --base "$base" -o "$work/x.json" --dry-run |
  grep -q "103 memory rows" || fail "pytorch_kernels.py --arch llama --dry-run: 103 memory rows expected"
python3 "$root/launch/pytorch_kernels.py" --gemms --base "$base" -o "$work/x.json" --dry-run > /dev/null ||
  fail "pytorch_kernels.py --gemms --dry-run"
refused "--shape: expected M,N,K" python3 "$root/launch/gemm_context.py" --shape 1,2
refused "--contexts: unknown idle" python3 "$root/launch/gemm_context.py" --contexts idle

printf '{"id": "a", "arch": "gpt", "layers": 1, "hidden": 64, "heads": 4, "seq": 32, "micro_batch": 1}\n{"id": "a", "arch": "gpt", "layers": 1, "hidden": 64, "heads": 4, "seq": 32, "micro_batch": 1}\n' > "$work/points.jsonl"
refused 'id "a" appears twice' python3 "$root/launch/regime_grid.py" pytorch-grid "$work/points.jsonl" --out "$work"
# megatron_host.py refuses a folder without megatron/core, and bad --layers, before importing anything.
set +e
python3 "$root/launch/megatron_host.py" --megatron "$work" -o "$work/m.json" 2> "$work/m.err"
rc=$?
python3 "$root/launch/megatron_host.py" --megatron "$work" --layers 4 -o "$work/m.json" 2> "$work/l.err"
rc_layers=$?
set -e
if [ "$rc" != 2 ] || ! grep -q -- "--megatron: no megatron/core under" "$work/m.err"; then
  fail "megatron_host.py: $(cat "$work/m.err")"
fi
if [ "$rc_layers" != 2 ] || ! grep -q -- "--layers: expected at least two depths" "$work/l.err"; then
  fail "megatron_host.py --layers 4: $(cat "$work/l.err")"
fi
echo "python_scripts: ok"
