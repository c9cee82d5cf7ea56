#!/usr/bin/env bash
# Seeds of fuzz_hf (corpus/hf/): tiny random-weight models written by our own tools (kvscope-cli
# make-model, then export --hf), each as config.json, a NUL byte, then model.safetensors: a GQA
# one with tied embeddings in F16 and BF16, and one in F32; a GPT-2 one (make_gpt2_folder.py).
# Usage:
# tests/fuzz/make_hf_corpus.sh [path/to/kvscope-cli]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cli="${1:-$here/../../build/cli/kvscope-cli}"
out="$here/corpus/hf"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$cli" make-model --out "$tmp/a.bin" --dim 32 --hidden 32 --layers 1 --heads 4 --kv-heads 2 \
    --vocab 259 --seq-len 8 >/dev/null
"$cli" make-model --out "$tmp/b.bin" --dim 8 --hidden 12 --layers 2 --heads 2 --vocab 262 \
    --seq-len 4 >/dev/null
seed() {  # model type name
    "$cli" export --model "$tmp/$1.bin" --hf "$tmp/$1-$2" --type "$2" >/dev/null
    { cat "$tmp/$1-$2/config.json"; printf '\0'; cat "$tmp/$1-$2/model.safetensors"; } >"$out/$3"
}
seed a f16 gqa-f16.hf
seed a bf16 gqa-bf16.hf
seed b f32 small-f32.hf
# Two seeds made from those: the small model as a Qwen2 (q/k/v biases added, RoPE base 1e6,
# epsilon 1e-6), and the GQA one with Llama 3's rope scaling.
python3 - "$out" <<'PY'
import json, struct, sys
d = sys.argv[1]
def split(name):
    b = open(f"{d}/{name}", "rb").read()
    nul = b.index(0)
    n = struct.unpack("<Q", b[nul + 1:nul + 9])[0]
    return json.loads(b[:nul]), json.loads(b[nul + 9:nul + 9 + n]), b[nul + 9 + n:]
def join(name, config, header, data):
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    open(f"{d}/{name}", "wb").write(json.dumps(config).encode() + b"\0" +
                                    struct.pack("<Q", len(h)) + h + data)
config, header, data = split("small-f32.hf")
config.update(architectures=["Qwen2ForCausalLM"], model_type="qwen2", rope_theta=1e6,
              rms_norm_eps=1e-6)
kv = config["num_key_value_heads"] * config["hidden_size"] // config["num_attention_heads"]
data = bytearray(data)
for l in range(config["num_hidden_layers"]):
    for w, n in (("q", config["hidden_size"]), ("k", kv), ("v", kv)):
        header[f"model.layers.{l}.self_attn.{w}_proj.bias"] = {
            "dtype": "F32", "shape": [n], "data_offsets": [len(data), len(data) + 4 * n]}
        data += struct.pack(f"<{n}f", *[0.01 * (i + 1) for i in range(n)])
join("qwen2-f32.hf", config, header, bytes(data))
config, header, data = split("gqa-f16.hf")
config.update(rope_theta=500000.0, rope_scaling={
    "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 4})
join("llama3-rope-f16.hf", config, header, data)
PY
# GPT-2 (GPT2LMHeadModel as the hub names it: no prefix, Conv1D [in, out], mask buffers), F32.
python3 "$here/make_gpt2_folder.py" "$tmp/gpt2" 262
{ cat "$tmp/gpt2/config.json"; printf '\0'; cat "$tmp/gpt2/model.safetensors"; } >"$out/gpt2-f32.hf"
# The hostile-input classes next to the valid seeds (numbers at their edges, depth, NUL, bidi).
python3 "$here/make_hostile_seeds.py"
ls -l "$out"
