#!/usr/bin/env python3
"""What optimizer offload (ZeRO-Offload) costs on this host, measured through PyTorch.

- Copies between GPU and host memory: pinned and pageable, host to device and back, at a few sizes
  (the gradients going down and the updated bf16 weights coming up each step).
- The host's memory bandwidth: a copy of a large fp32 tensor on the CPU (read + write).
- Adam on the CPU, as ZeRO-Offload runs it on fp32 master weights: torch.optim.Adam (foreach and, where
  this PyTorch has it, fused) over `--params` parameters, seconds per step and parameters per second
  on torch's intra-op threads; the bytes it touches per parameter (read weight, gradient, two moments;
  write weight and moments: 28 B) give an effective bandwidth.

    python3 launch/offload_probe.py -o offload.json

Writes JSON (machine, rows) and prints a table.
"""
import argparse
import json
import os
import statistics
import sys
import time



def gpu_copy_rows(sizes_mib, trials):
    rows = []
    for mib in sizes_mib:
        n = mib * 1024 * 1024
        device = torch.empty(n, dtype=torch.uint8, device="cuda")
        for pinned in (True, False):
            host = torch.empty(n, dtype=torch.uint8, pin_memory=pinned)
            for direction in ("h2d", "d2h"):
                src, dst = (host, device) if direction == "h2d" else (device, host)
                dst.copy_(src, non_blocking=pinned)
                torch.cuda.synchronize()
                times = []
                for _ in range(trials):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    dst.copy_(src, non_blocking=pinned)
                    end.record()
                    end.synchronize()
                    times.append(start.elapsed_time(end) / 1000.0)
                s = statistics.median(times)
                rows.append({"what": "copy", "direction": direction, "pinned": pinned, "MiB": mib,
                             "seconds": s, "GBps": n / s / 1e9})
            del host
        del device
    return rows


def host_bandwidth_row(gib, trials):
    n = int(gib * 1024 ** 3 / 4)
    src = torch.ones(n, dtype=torch.float32)
    dst = torch.empty_like(src)
    dst.copy_(src)
    times = []
    for _ in range(trials):
        t = time.perf_counter()
        dst.copy_(src)
        times.append(time.perf_counter() - t)
    s = statistics.median(times)
    return {"what": "host-copy", "GiB": gib, "threads": torch.get_num_threads(), "seconds": s,
            "GBps": 2 * n * 4 / s / 1e9}  # read + write


def adam_rows(params, trials):
    rows = []
    variants = [("foreach", {"foreach": True})]
    try:
        torch.optim.Adam([torch.zeros(16, requires_grad=True)], fused=True)
        variants.append(("fused", {"fused": True}))
    except (RuntimeError, TypeError, ValueError):
        pass
    chunk = 16 * 1024 * 1024  # parameters per tensor, as a bucket of flattened weights
    for name, kwargs in variants:
        tensors = [torch.zeros(min(chunk, params - i), dtype=torch.float32, requires_grad=True)
                   for i in range(0, params, chunk)]
        for t in tensors:
            t.grad = torch.randn_like(t)
        opt = torch.optim.Adam(tensors, lr=1e-4, **kwargs)
        opt.step()  # allocates the moments
        times = []
        for _ in range(trials):
            t0 = time.perf_counter()
            opt.step()
            times.append(time.perf_counter() - t0)
        s = statistics.median(times)
        rows.append({"what": "cpu-adam", "variant": name, "params": params, "threads": torch.get_num_threads(),
                     "seconds": s, "params_per_s": params / s, "GBps_effective": 28 * params / s / 1e9})
        del opt, tensors
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--out", required=True, help="JSON file to write")
    parser.add_argument("--params", type=int, default=256 * 1024 * 1024, help="parameters CPU Adam updates")
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    global torch  # imported after the arguments, so that --help runs where PyTorch is not installed
    import torch
    if not torch.cuda.is_available():
        sys.exit("offload_probe: no CUDA device")
    rows = gpu_copy_rows([64, 256, 1024], args.trials)
    rows.append(host_bandwidth_row(2, args.trials))
    rows += adam_rows(args.params, args.trials)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "")
    doc = {"kind": "offload-probe", "gpu": torch.cuda.get_device_name(0), "cpu": cpu,
           "cpus": os.cpu_count(), "torch": torch.__version__, "rows": rows}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{doc['gpu']}; {cpu} ({os.cpu_count()} CPUs); torch {torch.__version__}")
    for r in rows:
        if r["what"] == "copy":
            print(f"copy {r['direction']} {'pinned' if r['pinned'] else 'pageable':8} {r['MiB']:5} MiB "
                  f"{r['GBps']:6.1f} GB/s")
        elif r["what"] == "host-copy":
            print(f"host memory copy {r['GiB']} GiB on {r['threads']} threads: {r['GBps']:.1f} GB/s (read + write)")
        else:
            print(f"cpu adam {r['variant']:8} {r['params'] / 1e6:.0f}M params on {r['threads']} threads: "
                  f"{r['seconds'] * 1000:.0f} ms, {r['params_per_s'] / 1e9:.2f} G params/s, "
                  f"{r['GBps_effective']:.1f} GB/s effective")


if __name__ == "__main__":
    main()
