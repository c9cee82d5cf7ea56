#!/usr/bin/env python3
"""The peer of scripts/gpu-check.sh: a model kvscope exported with `export --hf`, run by Hugging
Face transformers, greedy from the prompt token ids of kvscope's own run of that model (its trace
JSON: each model's own tokenizer, its own token count), in two modes: eager (the dynamic cache)
and, where the installed version has them, the static cache with the forward pass compiled for
CUDA graphs (torch.compile mode "reduce-overhead"). Both of a mode's timed calls ask for the same
number of new tokens, the short one stopped after the first by a stopping criterion, so the static
cache has one length and the compiled forward pass is not compiled again. Prints one JSON object:
per mode the generated ids and the decode speed (tokens after the first over the time they took,
synchronised around each generate call, median of --runs), or why the mode did not run; on a GPU
the device-to-device copy bandwidth measured in the same process (bytes read plus written over the
time of a 1 GiB copy, median of 20), the ceiling a decode step's weight reads are compared with.
Before anything is imported the prompt ids are checked against the export's config.json (every
id inside its vocabulary, prompt and new tokens inside its context): a mismatch exits 2.

    python3 scripts/gpu_peer.py --hf DIR --trace KVSCOPE.json [--device cuda|cpu] [--runs 5]
"""
import argparse
import json
import statistics
import sys
import time


def synchronize(torch):
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def stop_after(torch, transformers, length):
    """A stopping criterion that ends generation once the sequence is `length` tokens long."""

    class StopAt(transformers.StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            done = input_ids.shape[1] >= length
            return torch.full((input_ids.shape[0],), done, dtype=torch.bool,
                              device=input_ids.device)

    return transformers.StoppingCriteriaList([StopAt()])


def timed_generate(torch, transformers, model, ids, new, stop_at_one=False, **kw):
    """generate() of `new` tokens (or stopped after the first: the same static cache length)."""
    if stop_at_one:
        kw["stopping_criteria"] = stop_after(torch, transformers, ids.shape[1] + 1)
    synchronize(torch)
    t0 = time.perf_counter()
    out = model.generate(ids, max_new_tokens=new, do_sample=False, **kw)
    synchronize(torch)
    return out, time.perf_counter() - t0


def decode_rate(torch, transformers, model, ids, new, runs, **kw):
    """Decode tokens per second: (new - 1) tokens over generate(new) less generate(1)."""
    first, rest = [], []
    out = None
    for _ in range(runs):
        _, t1 = timed_generate(torch, transformers, model, ids, new, stop_at_one=True, **kw)
        out, tn = timed_generate(torch, transformers, model, ids, new, **kw)
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


def check_inputs(hf, ids, new):
    """Why the ids cannot go to this export (another model's tokenizer, too long), or ''."""
    with open(f"{hf}/config.json") as f:
        config = json.load(f)
    vocab = config.get("vocab_size")
    context = config.get("max_position_embeddings")
    bad = [t for t in ids if not 0 <= t < (vocab or 0)]
    if bad:
        return (f"prompt id {bad[0]} is outside the export's vocabulary of {vocab} "
                f"({hf}: ids from another model's tokenizer?)")
    if context and len(ids) + new > context:
        return f"{len(ids)} prompt ids and {new} new tokens do not fit the export's context of {context}"
    return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hf", required=True)
    ap.add_argument("--trace", required=True, help="kvscope's trace JSON of the same model")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    a = ap.parse_args()
    with open(a.trace) as f:
        trace = json.load(f)
    prompt = trace["prompt_tokens"]
    new = len(trace["tokens"]) - len(prompt)
    why = check_inputs(a.hf, prompt, new)
    if why:
        print(f"gpu_peer: {why}", file=sys.stderr)
        return 2
    result = {"hf": a.hf, "new": new, "dtype": a.dtype, "device_asked": a.device,
              "checked": f"{len(prompt)} prompt ids inside the export's vocabulary, "
                         f"{new} new tokens inside its context"}
    try:
        import torch
        import transformers
    except Exception as e:  # noqa: BLE001 - the report says what is missing
        result["error"] = f"{type(e).__name__}: {e}"
        print(json.dumps(result))
        return 1
    result["torch"] = torch.__version__
    result["transformers"] = transformers.__version__
    if a.device == "cuda" and not torch.cuda.is_available():
        result["error"] = "torch sees no CUDA device"
        print(json.dumps(result))
        return 1
    if a.device == "cuda":
        result["device"] = torch.cuda.get_device_name(0)
        result["copy_bytes_per_s"] = copy_bandwidth(torch)
    else:
        result["device"] = "cpu"
    dtype = getattr(torch, a.dtype)
    ids = torch.tensor([prompt], device=a.device)
    model = transformers.AutoModelForCausalLM.from_pretrained(a.hf, torch_dtype=dtype)
    model = model.to(a.device).eval()
    model.generation_config.eos_token_id = None  # as many tokens as asked, like kvscope's count
    model.generation_config.pad_token_id = 0
    with torch.no_grad():
        gen, rate, ttft = decode_rate(torch, transformers, model, ids, new, a.runs)
        result["eager"] = {"ids": gen, "decode_tok_s": rate, "first_token_s": ttft}
        try:
            model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
            kw = {"cache_implementation": "static"}
            timed_generate(torch, transformers, model, ids, new, **kw)  # compile and capture
            gen, rate, ttft = decode_rate(torch, transformers, model, ids, new, a.runs, **kw)
            result["static_cuda_graphs"] = {"ids": gen, "decode_tok_s": rate,
                                            "first_token_s": ttft}
        except Exception as e:  # noqa: BLE001 - a version without it: said, not hidden
            result["static_cuda_graphs"] = {"error": f"not available: {type(e).__name__}: {e}"[:300]}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
