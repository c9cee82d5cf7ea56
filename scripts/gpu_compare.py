#!/usr/bin/env python3
"""The comparisons of scripts/gpu-check.sh, on kvscope's trace JSON (docs/trace-json.md).

    gpu_compare.py text CPU.json CUDA.json
        the same greedy tokens on both backends until the first near tie: where the tokens part,
        the CPU's logit of the token CUDA chose must be within TIE of the CPU's own choice
        (TIE = 2e-3 of the step's largest |logit|, twice the gpu tests' logit tolerance), and up
        to there every step's logits must agree within 1e-3 of that range. Said either way.
    gpu_compare.py peer [--rehearsal] KVS_DEFAULT.json PEER_DEFAULT.json KVS_85M.json PEER_85M.json
        Hugging Face transformers' greedy ids (scripts/gpu_peer.py) against kvscope's on the same
        prompt ids, by the same rule (kvscope's logits judge the tie), with both decode rates and,
        for the 85M model, its weight bytes a token against the copy bandwidth. A mode that did not
        run fails, except the compiled one where the installed version lacks it, and, with
        --rehearsal (no GPU, no PyTorch or transformers), a peer said not run.
Pure Python (no numpy): it runs wherever the script does.
"""
import json
import sys

LOGIT_TOL = 1e-3  # of the step's largest |logit|, as tests/cuda/test_cuda_device.cpp
TIE_TOL = 2e-3


def load(path):
    with open(path) as f:
        return json.load(f)


def generated(trace):
    return trace["tokens"][len(trace["prompt_tokens"]):]


def step_logits(trace):
    """Per generated token, the logits that chose it (the prefill's last row, then each step's)."""
    rows = [s.get("logits") for s in trace["steps"] if s.get("token_out") is not None]
    return rows[: len(generated(trace))]


def part_at(mine, theirs, logits):
    """None when `theirs` equals `mine` as far as both go; else (step, is_near_tie, gap, tol)."""
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a == b:
            continue
        row = logits[i] if i < len(logits) else None
        if not row:
            return i, False, float("nan"), 0.0
        tol = TIE_TOL * max(abs(v) for v in row)
        gap = row[a] - row[b]
        return i, gap <= tol, gap, tol
    return None


def decode_rate(trace):
    """Tokens a second over the decode steps' forward passes (each step's own median time)."""
    times = [s["time"]["forward_s"] for s in trace["steps"] if s.get("phase") == "decode"]
    return len(times) / sum(times) if times and sum(times) > 0 else float("nan")


def text(cpu_path, cuda_path):
    cpu, cuda = load(cpu_path), load(cuda_path)
    if cpu["prompt_tokens"] != cuda["prompt_tokens"]:
        print("text: FAILED: the prompts were tokenized differently")
        return 1
    mine, theirs = generated(cpu), generated(cuda)
    la, lb = step_logits(cpu), step_logits(cuda)
    where = part_at(mine, theirs, la)
    upto = len(mine) if where is None else where[0]
    worst = 0.0
    for i in range(min(upto, len(la), len(lb))):
        if la[i] and lb[i]:
            scale = max(abs(v) for v in la[i]) or 1.0
            worst = max(worst, max(abs(x - y) for x, y in zip(la[i], lb[i])) / scale)
    backend = cuda.get("recorded", {}).get("backend", "cuda")
    ok_logits = worst <= LOGIT_TOL
    if where is None and len(mine) == len(theirs):
        print(f"text: the same {len(mine)} tokens on cpu and {backend}; logits within "
              f"{worst:.1e} of the range at every step (at most {LOGIT_TOL:g})")
        return 0 if ok_logits else 1
    if where is None:
        print(f"text: FAILED: {len(mine)} tokens on cpu, {len(theirs)} on {backend}")
        return 1
    i, tie, gap, tol = where
    what = (f"step {i}: cpu chose {mine[i]}, {backend} {theirs[i]}, whose cpu logit is {gap:.2e} "
            f"below (a near tie is at most {tol:.2e})")
    if tie and ok_logits:
        print(f"text: the same {i} tokens on cpu and {backend}, then a near tie at {what}; "
              f"logits within {worst:.1e} of the range up to there: the texts part at the tie, "
              f"as the CPU tests allow")
        return 0
    print(f"text: FAILED: the tokens part at {what}; logits within {worst:.1e} before")
    return 1


def peer(rehearsal, pairs):
    ok = True
    for name, kvs_path, peer_path in pairs:
        kvs = load(kvs_path)
        try:
            p = load(peer_path)
        except (OSError, ValueError) as e:
            print(f"peer {name}: FAILED: no result from gpu_peer.py ({e})")
            ok = False
            continue
        mine = generated(kvs)
        rate = decode_rate(kvs)
        where = kvs.get("recorded", {}).get("backend", "?")
        line = f"peer {name}: kvscope ({where}) decode {rate:.1f} tok/s, {len(mine)} tokens"
        if name == "85M":
            bytes_tok = 4 * kvs["model"]["parameters"]
            line += f"; {bytes_tok / 1e6:.0f} MB of float32 weights a token = {bytes_tok * rate / 1e9:.1f} GB/s read"
            if "copy_bytes_per_s" in p:
                bw = p["copy_bytes_per_s"]
                line += f", {100 * bytes_tok * rate / bw:.0f}% of the copy bandwidth {bw / 1e12:.2f} TB/s"
        print(line)
        if "error" in p:
            said = f"peer {name}: not run: {p['error']}"
            if rehearsal:
                print(said + " (rehearsal: its inputs were checked: "
                      f"{p.get('checked', 'nothing')})")
            else:
                print(said)
                ok = False
            continue
        print(f"peer {name}: {p.get('device')}, torch {p.get('torch')}, transformers {p.get('transformers')}")
        for mode in ("eager", "static_cuda_graphs"):
            m = p.get(mode, {})
            if "ids" not in m:
                print(f"peer {name} {mode}: {m.get('error', 'not run')}")
                ok = ok and mode != "eager" and "not available" in m.get("error", "")
                continue
            part = part_at(mine, m["ids"], step_logits(kvs))
            if part is None:
                same = "the same greedy ids as kvscope"
            else:
                i, tie, gap, tol = part
                same = (f"the same ids as kvscope up to step {i}, then "
                        + ("a near tie" if tie else "NOT a near tie")
                        + f" (kvscope's logit gap {gap:.2e}, a tie at most {tol:.2e})")
                ok = ok and tie
            print(f"peer {name} {mode}: decode {m['decode_tok_s']:.1f} tok/s; {same}")
    return 0 if ok else 1


def main(argv):
    if len(argv) == 3 and argv[0] == "text":
        return text(argv[1], argv[2])
    if argv and argv[0] == "peer":
        rest = argv[1:]
        rehearsal = bool(rest) and rest[0] == "--rehearsal"
        if rehearsal:
            rest = rest[1:]
        if len(rest) == 4:
            return peer(rehearsal, [("default", rest[0], rest[1]), ("85M", rest[2], rest[3])])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
