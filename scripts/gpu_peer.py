#!/usr/bin/env python3
"""The GPU peer of scripts/gpu-check.sh: a model kvscope exported with `export --hf`, run by
Hugging Face transformers on the GPU, greedy from the same prompt token ids, in two modes:
eager (the dynamic cache) and, where the installed version has them, the static cache with the
forward pass compiled for CUDA graphs (torch.compile mode "reduce-overhead"). Prints one JSON
object: per mode the generated ids and the decode speed (tokens after the first over the time
they took, CUDA synchronised around each generate call, median of --runs), or why the mode did
not run; and the device-to-device copy bandwidth measured in the same process (bytes read plus
written over the time of a 1 GiB copy, median of 20), the ceiling a decode step's weight reads
are compared with.

    python3 scripts/gpu_peer.py --hf DIR --ids 1,422,... --new 64 [--runs 5]
"""
import argparse
import json
import statistics
import sys
import time


def timed_generate(torch, model, ids, new, **kw):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False, **kw)
    torch.cuda.synchronize()
    return out, time.perf_counter() - t0


def decode_rate(torch, model, ids, new, runs, **kw):
    """Decode tokens per second: (new - 1) tokens over generate(new) less generate(1)."""
    first, rest = [], []
    out = None
    for _ in range(runs):
        _, t1 = timed_generate(torch, model, ids, 1, **kw)
        out, tn = timed_generate(torch, model, ids, new, **kw)
        first.append(t1)
        rest.append(tn)
    t1, tn = statistics.median(first), statistics.median(rest)
    gen = out[0, ids.shape[1]:].tolist()
    return gen, (new - 1) / max(tn - t1, 1e-9), t1


def copy_bandwidth(torch):
    n = 1 << 28  # floats: 1 GiB
    src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return 2 * 4 * n / statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hf", required=True)
    ap.add_argument("--ids", required=True, help="prompt token ids, comma separated")
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    a = ap.parse_args()
    result = {"hf": a.hf, "new": a.new, "dtype": a.dtype}
    try:
        import torch
        import transformers
    except Exception as e:  # noqa: BLE001 - the report says what is missing
        result["error"] = f"not run: {e}"
        print(json.dumps(result))
        return 1
    result["torch"] = torch.__version__
    result["transformers"] = transformers.__version__
    if not torch.cuda.is_available():
        result["error"] = "not run: torch sees no CUDA device"
        print(json.dumps(result))
        return 1
    result["device"] = torch.cuda.get_device_name(0)
    result["copy_bytes_per_s"] = copy_bandwidth(torch)
    dtype = getattr(torch, a.dtype)
    ids = torch.tensor([[int(t) for t in a.ids.split(",")]], device="cuda")
    model = transformers.AutoModelForCausalLM.from_pretrained(a.hf, torch_dtype=dtype)
    model = model.to("cuda").eval()
    model.generation_config.eos_token_id = None  # as many tokens as asked, like kvscope's count
    model.generation_config.pad_token_id = 0
    with torch.no_grad():
        gen, rate, ttft = decode_rate(torch, model, ids, a.new, a.runs)
        result["eager"] = {"ids": gen, "decode_tok_s": rate, "first_token_s": ttft}
        try:
            model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
            kw = {"cache_implementation": "static"}
            timed_generate(torch, model, ids, a.new, **kw)  # compile and capture first
            gen, rate, ttft = decode_rate(torch, model, ids, a.new, a.runs, **kw)
            result["static_cuda_graphs"] = {"ids": gen, "decode_tok_s": rate,
                                            "first_token_s": ttft}
        except Exception as e:  # noqa: BLE001 - a version without it: said, not hidden
            result["static_cuda_graphs"] = {"error": f"not available: {type(e).__name__}: {e}"[:300]}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
