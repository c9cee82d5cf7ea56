#!/usr/bin/env bash
# Seeds of fuzz_gguf (corpus/gguf/): tiny random-weight models written by our own tools
# (kvscope-cli make-model, then export in each type), a GQA one with a separate classifier, a
# GPT-2 one (make_gpt2_folder.py, exported), and a few cut or patched copies. Usage:
# tests/fuzz/make_gguf_corpus.sh [path/to/kvscope-cli]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cli="${1:-$here/../../build/cli/kvscope-cli}"
out="$here/corpus/gguf"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$cli" make-model --out "$tmp/a.bin" --dim 32 --hidden 32 --layers 1 --heads 2 --kv-heads 1 \
    --vocab 259 --seq-len 8 >/dev/null
"$cli" make-model --out "$tmp/b.bin" --dim 8 --hidden 12 --layers 2 --heads 2 --vocab 262 \
    --seq-len 4 >/dev/null
for t in f16 q8_0 q4_0; do  # f32 and bf16 seeds would be over the 40 kB max_len
    "$cli" export --model "$tmp/a.bin" --gguf "$out/gqa-$t.gguf" --type "$t" >/dev/null
done
"$cli" export --model "$tmp/b.bin" --gguf "$out/small-q8_0-f16-fallback.gguf" --type q8_0 >/dev/null
# GPT-2 (architecture gpt2, fused attn_qkv): a tiny GPT2LMHeadModel folder with the small
# model's tokenizer, exported (rows of 8: F16 matrices).
python3 "$here/make_gpt2_folder.py" "$tmp/gpt2" 262
cp "$tmp/b.tok.bin" "$tmp/gpt2/tokenizer.bin"
"$cli" export --model "$tmp/gpt2" --gguf "$out/gpt2-f16.gguf" --type f16 >/dev/null
# K-quants: rows of 256 for ffn_down only (hidden 256), so the file stays small; every other
# matrix falls back to F16 (rows of 8). One seed per type the writer makes, and a Q8_K one made
# from the Q6_K seed below (ggml's intermediate type: no writer makes it).
"$cli" make-model --out "$tmp/k.bin" --dim 8 --hidden 256 --layers 1 --heads 2 --vocab 262 \
    --seq-len 4 >/dev/null
for t in q2_k q3_k q4_k q5_k q6_k; do
    "$cli" export --model "$tmp/k.bin" --gguf "$out/kquant-$t.gguf" --type "$t" >/dev/null
done
head -c 3000 "$out/gqa-q8_0.gguf" >"$out/cut-in-metadata.gguf"
python3 - "$out" <<'PY'
import struct, sys
d = sys.argv[1]
b = bytearray(open(f"{d}/gqa-q4_0.gguf", "rb").read())
b[4:8] = struct.pack("<I", 2)  # the same file as version 2
open(f"{d}/version2.gguf", "wb").write(b)

# A seed with some tensors in another type: the tensor infos' types and offsets and the data laid
# out again. change(type, n, bytes) gives the new type and bytes, or None to keep the tensor.
def relayout(src_name, dst_name, change):
    src = open(f"{d}/{src_name}", "rb").read()
    at = 4
    def take(fmt):
        nonlocal at
        v = struct.unpack_from(fmt, src, at)
        at += struct.calcsize(fmt)
        return v[0]
    def string():
        nonlocal at
        n = take("<Q")
        at += n
    SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    def value(t):
        nonlocal at
        if t == 8:
            string()
        elif t == 9:
            et, n = take("<I"), take("<Q")
            for _ in range(n):
                value(et)
        else:
            at += SCALAR[t]
    version, n_tensors, n_kv = take("<I"), take("<Q"), take("<Q")
    for _ in range(n_kv):
        string()
        value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        string()
        nd = take("<I")
        dims = [take("<Q") for _ in range(nd)]
        type_at = at
        ty = take("<I")
        off_at = at
        off = take("<Q")
        infos.append([dims, type_at, ty, off_at, off])
    header = bytearray(src[:at])
    data_start = (at + 31) // 32 * 32
    BLOCK = {0: (4, 1), 1: (2, 1), 2: (18, 32), 8: (34, 32), 14: (210, 256), 15: (292, 256)}
    data = bytearray()
    for dims, type_at, ty, off_at, off in infos:
        n = 1
        for x in dims:
            n *= x
        size = n // BLOCK[ty][1] * BLOCK[ty][0]
        chunk = src[data_start + off:data_start + off + size]
        changed = change(ty, n, chunk)
        if changed:
            ty, chunk = changed
            struct.pack_into("<I", header, type_at, ty)
        data += b"\0" * ((32 - len(data) % 32) % 32)
        struct.pack_into("<Q", header, off_at, len(data))
        data += chunk
    header += b"\0" * (data_start - at)
    open(f"{d}/{dst_name}", "wb").write(bytes(header) + bytes(data))

# The Q6_K seed with its Q6_K tensor made Q8_K (292-byte blocks: float d, 256 int8, 16 sums).
def q6k_to_q8k(ty, n, chunk):
    if ty != 14:
        return None
    out = bytearray()
    for b in range(n // 256):
        qs = [((x + b) % 255) - 127 for x in range(256)]
        out += struct.pack("<f", 1e-3) + bytes(q & 0xFF for q in qs)
        out += struct.pack("<16h", *[sum(qs[16 * g:16 * g + 16]) for g in range(16)])
    return 15, out
relayout("kquant-q6_k.gguf", "kquant-q8_k.gguf", q6k_to_q8k)

# The Q4_0 seed's Q4_0 tensors as Q5_0 and Q5_1 with the same values: q5 = q4 + 8 (its fifth bit
# in the block's 32-bit qh, bit j for value j), Q5_0's x = d (q5 - 16), Q5_1's x = d q5 + m with
# m = -16 d (exact in f16). kvscope reads both as the Q4_0 file's floats, bit for bit.
def q4_0_to_q5(q51):
    def change(ty, n, chunk):
        if ty != 2:
            return None
        out = bytearray()
        for b in range(n // 32):
            blk = chunk[18 * b:18 * b + 18]
            qs4 = [blk[2 + j] & 15 for j in range(16)] + [blk[2 + j] >> 4 for j in range(16)]
            q5 = [q + 8 for q in qs4]
            qh = sum(((q >> 4) & 1) << j for j, q in enumerate(q5))
            qs = bytes((q5[j] & 15) | ((q5[j + 16] & 15) << 4) for j in range(16))
            out += blk[0:2]
            if q51:
                h = struct.unpack("<e", blk[0:2])[0]
                out += struct.pack("<e", -16 * h)
            out += struct.pack("<I", qh) + qs
        return (7 if q51 else 6), out
    return change
relayout("gqa-q4_0.gguf", "gqa-q5_0.gguf", q4_0_to_q5(False))
relayout("gqa-q4_0.gguf", "gqa-q5_1.gguf", q4_0_to_q5(True))
PY
# The hostile-input classes next to the valid seeds (numbers at their edges, depth, NUL, bidi).
python3 "$here/make_hostile_seeds.py"
ls -l "$out"
