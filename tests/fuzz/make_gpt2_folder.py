#!/usr/bin/env python3
"""A tiny GPT-2 Hugging Face folder for the fuzz seeds: config.json and model.safetensors named
as openai-community/gpt2 names them (no "transformer." prefix, Conv1D weights [in, out], each
layer's causal-mask buffers attn.bias and attn.masked_bias), F32 random weights (fixed seed).
The tokenizer.bin beside it is the caller's (make-model's FILE.tok.bin of the same vocabulary).
Usage: make_gpt2_folder.py OUT_DIR VOCAB"""
import json
import os
import random
import struct
import sys

out, vocab = sys.argv[1], int(sys.argv[2])
d, layers, heads, positions = 8, 2, 2, 4
hidden = 4 * d
rng = random.Random(18)
tensors = []  # (name, shape, floats)


def add(name, shape, centre=0.0, spread=0.35):
    n = 1
    for x in shape:
        n *= x
    tensors.append((name, shape, [centre + rng.uniform(-spread, spread) for _ in range(n)]))


add("wte.weight", [vocab, d])
add("wpe.weight", [positions, d])
for l in range(layers):
    h = f"h.{l}."
    add(h + "ln_1.weight", [d], 1.0, 0.25)
    add(h + "ln_1.bias", [d], 0.0, 0.1)
    add(h + "attn.c_attn.weight", [d, 3 * d])
    add(h + "attn.c_attn.bias", [3 * d], 0.0, 0.1)
    add(h + "attn.c_proj.weight", [d, d])
    add(h + "attn.c_proj.bias", [d], 0.0, 0.1)
    add(h + "ln_2.weight", [d], 1.0, 0.25)
    add(h + "ln_2.bias", [d], 0.0, 0.1)
    add(h + "mlp.c_fc.weight", [d, hidden])
    add(h + "mlp.c_fc.bias", [hidden], 0.0, 0.1)
    add(h + "mlp.c_proj.weight", [hidden, d])
    add(h + "mlp.c_proj.bias", [d], 0.0, 0.1)
    mask = [1.0 if j <= i else 0.0 for i in range(positions) for j in range(positions)]
    tensors.append((h + "attn.bias", [1, 1, positions, positions], mask))
    tensors.append((h + "attn.masked_bias", [], [-1e4]))
add("ln_f.weight", [d], 1.0, 0.25)
add("ln_f.bias", [d], 0.0, 0.1)

header, data = {}, b""
for name, shape, values in tensors:
    b = struct.pack(f"<{len(values)}f", *values)
    header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(b)]}
    data += b
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": d,
          "n_layer": layers, "n_head": heads, "n_positions": positions, "n_ctx": positions,
          "n_inner": None, "vocab_size": vocab, "activation_function": "gelu_new",
          "layer_norm_epsilon": 1e-5}
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(config, f)
