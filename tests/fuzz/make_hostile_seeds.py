#!/usr/bin/env python3
"""Seeds of the hostile-input classes for fuzz_hf and fuzz_gguf, derived from their committed
valid seeds (make_hf_corpus.sh and make_gguf_corpus.sh run this last): numbers at the edges of
their types (negative, 2^31, 2^64 - 1, 1e300, a product of two fields past 2^32), JSON nested at
the depth bound and one level past it, NUL and bidi controls in names and values. Each is a valid
seed with one thing changed, so the fuzzer starts next to every refusal."""
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, 'corpus')


def put(target, name, data):
    with open(os.path.join(CORPUS, target, name), 'wb') as f:
        f.write(data)


# fuzz_hf: config.json, NUL, then a safetensors file.
def split_hf(name):
    b = open(os.path.join(CORPUS, 'hf', name), 'rb').read()
    nul = b.index(0)
    n = struct.unpack('<Q', b[nul + 1:nul + 9])[0]
    return b[:nul].decode(), b[nul + 9:nul + 9 + n].decode(), b[nul + 9 + n:]


def join_hf(config_text, header_text, data):
    h = header_text.encode()
    h += b' ' * (-len(h) % 8)
    return config_text.encode() + b'\0' + struct.pack('<Q', len(h)) + h + data


config, header, data = split_hf('small-f32.hf')
cfg = json.loads(config)


def with_key(key, raw):  # the config with `key` set to the JSON text `raw`, as written
    c = {k: v for k, v in cfg.items() if k != key}
    return json.dumps(c)[:-1] + ', "%s": %s}' % (key, raw)


heads = cfg['num_attention_heads']
wrap = (2**32 + cfg['hidden_size']) // heads  # heads x wrap passes 2^32 and lands on hidden_size
for name, key, raw in [
        ('size-negative', 'hidden_size', '-1'),
        ('size-2p31', 'hidden_size', str(2**31)),
        ('size-u64-max', 'hidden_size', str(2**64 - 1)),
        ('size-float', 'hidden_size', '1e300'),
        ('head-dim-wrap', 'head_dim', str(wrap)),
        ('ids-extreme', 'bos_token_id', '-9223372036854775808'),
        ('depth-64', 'notes', '[' * 63 + ']' * 63),
        ('depth-65', 'notes', '[' * 64 + ']' * 64),
        ('bidi-arch', 'architectures', '["Llama\\u202eFor\\u200bCausalLM"]'),
        ('nul-act', 'hidden_act', '"si\\u0000lu"')]:
    put('hf', name + '.hf', join_hf(with_key(key, raw), header, data))
h = json.loads(header)
first = next(k for k in h if k != '__metadata__')
for name, field, value in [('shape-u64-max', 'shape', [2**64 - 1, 1]),
                           ('shape-product', 'shape', [2**32, 2**32]),
                           ('offsets-huge', 'data_offsets', [2**63, 2**64 - 1])]:
    g = dict(h)
    g[first] = dict(h[first], **{field: value})
    put('hf', name + '.hf', join_hf(config, json.dumps(g, separators=(',', ':')), data))
put('hf', 'header-depth-65.hf',
    join_hf(config, header[:-1] + ',"__metadata__":{"x":' + '[' * 63 + ']' * 63 + '}}', data))


# fuzz_gguf: patch a metadata value or a tensor dimension in place (same width).
def gguf_layout(b):
    at = 24
    n_tensors, n_kv = struct.unpack('<QQ', b[8:24])
    kv = {}

    def string(at):
        n = struct.unpack('<Q', b[at:at + 8])[0]
        return b[at + 8:at + 8 + n].decode('utf-8', 'replace'), at + 8 + n
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    for _ in range(n_kv):
        key, at = string(at)
        t = struct.unpack('<I', b[at:at + 4])[0]
        at += 4
        kv[key] = (t, at)
        if t == 8:
            _, at = string(at)
        elif t == 9:
            et, count = struct.unpack('<IQ', b[at:at + 12])
            at += 12
            for _ in range(count):
                if et == 8:
                    _, at = string(at)
                else:
                    at += sizes[et]
        else:
            at += sizes[t]
    dims = {}
    for _ in range(n_tensors):
        name, at = string(at)
        nd = struct.unpack('<I', b[at:at + 4])[0]
        dims[name] = at + 4
        at += 4 + 8 * nd + 4 + 8
    return kv, dims


g = bytearray(open(os.path.join(CORPUS, 'gguf', 'gqa-f16.gguf'), 'rb').read())
kv, dims = gguf_layout(bytes(g))


def patched(offset, fmt, value):
    b = bytearray(g)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


def u32_key(key, value):
    t, at = kv[key]
    return patched(at, '<I' if t in (4, 5) else '<Q', value)


put('gguf', 'length-2p31.gguf', u32_key('llama.embedding_length', 2**31))
put('gguf', 'length-u32-max.gguf', u32_key('llama.embedding_length', 2**32 - 1))
put('gguf', 'heads-zero.gguf', u32_key('llama.attention.head_count', 0))
put('gguf', 'bos-u32-max.gguf', u32_key('tokenizer.ggml.bos_token_id', 2**32 - 1))
put('gguf', 'dim-u64-max.gguf', patched(dims['token_embd.weight'], '<Q', 2**64 - 1))
put('gguf', 'dim-product.gguf', patched(dims['token_embd.weight'] + 8, '<Q', 2**40))
name_at = bytes(g).index(b'token_embd.weight')
nul = bytearray(g)
nul[name_at + 5] = 0  # a NUL inside a tensor name
put('gguf', 'nul-in-name.gguf', bytes(nul))
