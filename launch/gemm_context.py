#!/usr/bin/env python3
"""Times one GEMM shape in the contexts it meets in a training step, to tell apart why a step's GEMMs
run faster than `commscale calibrate`'s row of the same shape (results/h200x1-2026-12-03b: 8-12% at
1024 x 8192 x 2048 in an unfused step): the SM clock (a GEMM between memory-bound kernels runs while
the GPU draws less power, so at a higher clock), or L2 (in the step a GEMM reads the activation the
kernel before it has just written; calibrate rotates its operands through a pool so that none is in L2).

Each context issues CALLS rounds back to back after --heat-ms of an 8192^3 bf16 GEMM (calibrate's
sustained-load heat); a CUDA event pair around each round's GEMM times it alone, the median is
reported. NVML samples the SM clock and the board power every millisecond while the rounds run.

  sustained-rotated  GEMM after GEMM, operands rotated through --pool-gib (calibrate's rows)
  sustained-same     GEMM after GEMM, the same operands every call (all of them L2-resident if they fit)
  between-memory     a memory-bound kernel (a copy of --memory-mib) then the GEMM on rotated operands:
                     the step's alternation, L2 holding the copy's data, not the GEMM's
  between-memory-hot the same, then a small kernel writes the GEMM's A operand just before the GEMM
                     (the step: a norm or an activation writes what the next GEMM reads)
  between-idle       a spin kernel on one SM as long as the copy, then the GEMM on rotated operands: the
                     duty cycle of between-memory without its memory traffic
  between-memory-x3  three copies then the GEMM: a lower GEMM duty cycle

    python3 launch/gemm_context.py --shape 1024,8192,2048 --shape 4096,14336,4096 -o gemm-context.json

--data says what the operands hold (a tensor core's power, so its clock, depends on the bits it
multiplies): randn (normal values, as activations and weights are), commscale (the bit pattern
`calibrate` and `train` filled their buffers with until run-12 of results/h200x1-2026-12-03b:
positive, exponents 0x3C-0x3F, random low bits), commscale-signed (the same with a random sign, their
fill since: kernels/step_kernels.cu), zeros, or nan. --contexts picks some of the contexts above.

prints one line per (shape, context) and writes them all as JSON. A clock or power the machine will not
report is written as null.
"""

import argparse
import ctypes
import json
import statistics
import sys
import threading
import time

try:
    import torch
except ImportError:
    torch = None


class Nvml:
    """The SM clock (MHz) and board power (W) of GPU 0 through libnvidia-ml, sampled on a thread."""

    def __init__(self):
        self.lib = None
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                return
            handle = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) != 0:
                return
            self.lib, self.handle = lib, handle
        except OSError:
            pass

    def read(self):
        if self.lib is None:
            return None, None
        clock, milliwatts = ctypes.c_uint(), ctypes.c_uint()
        sm = clock.value if self.lib.nvmlDeviceGetClockInfo(self.handle, 1, ctypes.byref(clock)) == 0 else None
        got_power = self.lib.nvmlDeviceGetPowerUsage(self.handle, ctypes.byref(milliwatts)) == 0
        watts = milliwatts.value / 1e3 if got_power else None
        return sm, watts

    def sample_while(self, work):
        """Runs work() and returns (its result, [(clock, watts)] sampled every millisecond meanwhile)."""
        samples, done = [], threading.Event()

        def sampler():
            while not done.is_set():
                samples.append(self.read())
                time.sleep(0.001)

        thread = threading.Thread(target=sampler)
        thread.start()
        try:
            result = work()
        finally:
            done.set()
            thread.join()
        return result, samples


def mean_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def operand(rows, cols, data):
    if data == "randn":
        return torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
    if data == "zeros":
        return torch.zeros(rows, cols, device="cuda", dtype=torch.bfloat16)
    if data == "nan":
        return torch.full((rows, cols), float("nan"), device="cuda", dtype=torch.bfloat16)
    bits = torch.randint(0, 1 << 16, (rows, cols), device="cuda", dtype=torch.int32)
    keep = 0x83FF if data == "commscale-signed" else 0x03FF
    halves = (bits & keep) | 0x3C00
    halves = halves - ((halves >> 15) << 16)  # the sign bit set: as int16, negative
    return halves.to(torch.int16).view(torch.bfloat16)


class Rig:
    def __init__(self, m, n, k, pool_bytes, memory_bytes, data):
        self.m, self.n, self.k = m, n, k
        element = 2
        per_set = (m * k + k * n + m * n) * element
        self.sets = max(2, min(64, pool_bytes // per_set))
        self.a = [operand(m, k, data) for _ in range(self.sets)]
        self.b = [operand(k, n, data) for _ in range(self.sets)]
        self.c = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(self.sets)]
        half = memory_bytes // 2 // element
        self.src = torch.randn(half, device="cuda", dtype=torch.bfloat16)
        self.dst = torch.empty_like(self.src)
        self.a_source = operand(m, k, data)
        heater = 8192
        self.heat_a = torch.randn(heater, heater, device="cuda", dtype=torch.bfloat16)
        self.heat_b = torch.randn(heater, heater, device="cuda", dtype=torch.bfloat16)
        self.heat_c = torch.empty(heater, heater, device="cuda", dtype=torch.bfloat16)
        self.copy_cycles = self.spin_cycles_like_copy()

    def gemm(self, i):
        j = i % self.sets
        torch.matmul(self.a[j], self.b[j], out=self.c[j])

    def copy(self):
        self.dst.copy_(self.src)

    def median_ms(self, fn, calls=20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(calls):
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    def spin_cycles_like_copy(self):
        """torch.cuda._sleep cycles that take as long as one copy."""
        copy_ms = self.median_ms(self.copy)
        probe = 1_000_000
        spin_ms = self.median_ms(lambda: torch.cuda._sleep(probe), calls=5)
        return max(1000, int(probe * copy_ms / spin_ms))

    def heat(self, ms):
        one = self.median_ms(lambda: torch.matmul(self.heat_a, self.heat_b, out=self.heat_c), calls=3)
        for _ in range(max(1, int(ms / one))):
            torch.matmul(self.heat_a, self.heat_b, out=self.heat_c)

    def run(self, context, calls, heat_ms):
        before = {
            "sustained-rotated": lambda i: None,
            "sustained-same": lambda i: None,
            "between-memory": lambda i: self.copy(),
            "between-memory-hot": lambda i: (self.copy(), self.a[i % self.sets].copy_(self.a_source)),
            "between-idle": lambda i: torch.cuda._sleep(self.copy_cycles),
            "between-memory-x3": lambda i: (self.copy(), self.copy(), self.copy()),
        }[context]
        index = (lambda i: 0) if context == "sustained-same" else (lambda i: i)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
        wall = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        self.heat(heat_ms)
        wall[0].record()
        for i in range(calls):
            before(i)
            starts[i].record()
            self.gemm(index(i))
            ends[i].record()
        wall[1].record()
        torch.cuda.synchronize()
        gemm_ms = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        return statistics.median(gemm_ms), sum(gemm_ms) / wall[0].elapsed_time(wall[1])


CONTEXTS = ["sustained-rotated", "sustained-same", "between-memory", "between-memory-hot", "between-idle",
            "between-memory-x3"]


def parse_shape(text):
    try:
        m, n, k = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shape: expected M,N,K (three integers), got '{text}'")
    if min(m, n, k) <= 0:
        raise argparse.ArgumentTypeError(f"--shape: M, N and K must be positive, got '{text}'")
    return m, n, k


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", type=parse_shape, action="append", help="M,N,K of a bf16 GEMM (repeatable)")
    parser.add_argument("--calls", type=int, default=200, help="timed rounds per context (default 200)")
    parser.add_argument("--heat-ms", type=float, default=20.0, help="8192^3 GEMMs before each context (default 20)")
    parser.add_argument("--pool-gib", type=float, default=8.0, help="memory the rotated operands span (default 8)")
    parser.add_argument("--memory-mib", type=int, default=256, help="bytes one copy moves, read + write (default 256)")
    parser.add_argument("--repeats", type=int, default=3, help="passes over the contexts; each row is their median")
    parser.add_argument("--data", choices=["randn", "commscale", "commscale-signed", "zeros", "nan"], default="randn",
                        help="what the GEMM's operands hold (default randn)")
    parser.add_argument("--contexts", default=",".join(CONTEXTS), help="comma-separated subset of the contexts")
    parser.add_argument("-o", "--output", help="JSON file to write")
    args = parser.parse_args(argv)
    shapes = args.shape or [(1024, 8192, 2048)]
    contexts = args.contexts.split(",")
    unknown = [c for c in contexts if c not in CONTEXTS]
    if unknown:
        parser.error(f"--contexts: unknown {', '.join(unknown)} (expected some of {', '.join(CONTEXTS)})")
    if args.calls < 5 or args.repeats < 1:
        parser.error("--calls must be at least 5 and --repeats at least 1")
    if torch is None or not torch.cuda.is_available():
        print("gemm_context.py: needs PyTorch with a CUDA GPU", file=sys.stderr)
        return 2
    nvml = Nvml()
    rows = []
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, operands {args.data}; "
          f"median of {args.repeats} passes of "
          f"{args.calls} rounds; clocks and power: NVML mean over the rounds")
    print(f"{'M x N x K':>22} {'context':>20} {'gemm us':>9} {'vs rotated':>10} {'duty':>6} {'SM MHz':>7} {'W':>6}")
    for m, n, k in shapes:
        rig = Rig(m, n, k, int(args.pool_gib * 2**30), args.memory_mib * 2**20, args.data)
        passes = {c: [] for c in contexts}
        for _ in range(args.repeats):
            for context in contexts:
                (gemm_ms, duty), samples = nvml.sample_while(lambda: rig.run(context, args.calls, args.heat_ms))
                clock, watts = mean_or_none(s[0] for s in samples), mean_or_none(s[1] for s in samples)
                passes[context].append((gemm_ms, duty, clock, watts))
        reference = None
        for context in contexts:
            got = passes[context]
            gemm_us = statistics.median(p[0] for p in got) * 1e3
            duty = statistics.median(p[1] for p in got)
            clock = mean_or_none(p[2] for p in got)
            watts = mean_or_none(p[3] for p in got)
            reference = reference or gemm_us
            rows.append({"m": m, "n": n, "k": k, "dtype": "bf16", "data": args.data, "context": context,
                         "gemm_us": gemm_us,
                         "vs_rotated": gemm_us / reference, "gemm_duty": duty, "sm_mhz": clock, "watts": watts,
                         "passes_us": [p[0] * 1e3 for p in got], "operand_sets": rig.sets})
            print(f"{f'{m} x {n} x {k}':>22} {context:>20} {gemm_us:9.1f} {gemm_us / reference:10.3f} {duty:6.2f} "
                  f"{clock or float('nan'):7.0f} {watts or float('nan'):6.0f}", flush=True)
        del rig
        torch.cuda.empty_cache()
    if args.output:
        with open(args.output, "w") as f:
            options = vars(args) | {"shape": shapes}
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "options": options,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
