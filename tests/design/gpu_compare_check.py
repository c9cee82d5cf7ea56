#!/usr/bin/env python3
"""scripts/gpu_compare.py on made-up traces: the same tokens pass; tokens that part where the CPU's
two choices are a near tie pass and say so; tokens that part elsewhere fail; a peer whose ids come
from another model's vocabulary is refused by scripts/gpu_peer.py before any import (exit 2).

    tests/design/gpu_compare_check.py SOURCE_DIR
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "scripts"))
import gpu_compare  # noqa: E402


def trace(tokens, logits, backend):
    steps = [{"phase": "prefill" if i == 0 else "decode", "token_out": t, "logits": row,
              "time": {"forward_s": 1e-3}} for i, (t, row) in enumerate(zip(tokens, logits))]
    return {"prompt_tokens": [1, 5], "tokens": [1, 5] + tokens, "steps": steps,
            "recorded": {"backend": backend}, "model": {"parameters": 10}}


def rows(n, vocab, picks, second_gap):
    """Logits whose argmax is picks[i], the runner-up (picks[i] + 1) second_gap[i] below it."""
    out = []
    for i in range(n):
        row = [0.0] * vocab
        row[picks[i]] = 10.0
        row[(picks[i] + 1) % vocab] = 10.0 - second_gap[i]
        out.append(row)
    return out


def run_text(cpu, cuda):
    d = tempfile.mkdtemp()
    a, b = os.path.join(d, "cpu.json"), os.path.join(d, "cuda.json")
    json.dump(cpu, open(a, "w"))
    json.dump(cuda, open(b, "w"))
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        rc = gpu_compare.text(a, b)
    return rc, said.getvalue()


failures = []
picks = [3, 4, 5, 6, 7, 8]
gaps = [5.0, 5.0, 5.0, 1e-4, 5.0, 5.0]  # step 3 is a near tie
cpu_logits = rows(6, 12, picks, gaps)
cpu = trace(picks, cpu_logits, "cpu")

rc, said = run_text(cpu, trace(picks, cpu_logits, "cuda"))
if rc != 0 or "the same 6 tokens" not in said:
    failures.append(f"identical tokens: rc {rc}, {said!r}")

tie = picks[:3] + [picks[3] + 1, 0, 0]  # parts at the tie, then goes elsewhere
rc, said = run_text(cpu, trace(tie, cpu_logits, "cuda"))
if rc != 0 or "near tie at step 3" not in said:
    failures.append(f"a near tie: rc {rc}, {said!r}")

far = picks[:1] + [picks[1] + 1] + picks[2:]  # parts at step 1, a 5.0 gap
rc, said = run_text(cpu, trace(far, cpu_logits, "cuda"))
if rc == 0 or "FAILED" not in said:
    failures.append(f"a parting that is no tie passed: {said!r}")

drift = [[v + (0.5 if j == 0 else 0.0) for j, v in enumerate(r)] for r in cpu_logits]
rc, said = run_text(cpu, trace(picks, drift, "cuda"))  # same tokens, logits 5% off
if rc == 0:
    failures.append(f"logits 5% apart passed: {said!r}")

# gpu_peer.py: ids outside the export's vocabulary (another model's tokenizer) are refused.
d = tempfile.mkdtemp()
json.dump({"vocab_size": 4, "max_position_embeddings": 64}, open(os.path.join(d, "config.json"), "w"))
json.dump(cpu, open(os.path.join(d, "kvs.json"), "w"))
r = subprocess.run([sys.executable, os.path.join(root, "scripts", "gpu_peer.py"), "--hf", d,
                    "--trace", os.path.join(d, "kvs.json"), "--device", "cpu"],
                   capture_output=True, text=True)
if r.returncode != 2 or "outside the export's vocabulary of 4" not in r.stderr:
    failures.append(f"gpu_peer.py took another model's ids: exit {r.returncode}, {r.stderr!r}")

for f in failures:
    print("gpu_compare:", f)
if not failures:
    print("gpu_compare: same tokens pass, a near tie passes and is said, a parting or a logit "
          "drift fails; gpu_peer.py refuses ids outside its export's vocabulary")
sys.exit(1 if failures else 0)
