#!/usr/bin/env python3
"""Seeds of the hostile-input classes, derived from committed valid seeds (make_hf_corpus.sh and
make_gguf_corpus.sh run this last). fuzz_hf and fuzz_gguf: numbers at the edges of their types
(negative, 2^31, 2^64 - 1, 1e300, a product of two fields past 2^32), JSON nested at the depth
bound and one level past it, NUL and bidi controls in names and values. Every JSON reader
(fuzz_hf's config.json and safetensors header, fuzz_tokenizer_json, fuzz_trace): a key given
twice at the top level and inside a nested object, a UTF-8 and a UTF-16 byte order mark, the text
cut short and junk after it. fuzz_settings and fuzz_lesson: a UTF-8 and a UTF-16 byte order mark
and bytes that are not UTF-8. Each is a valid seed with one thing changed, so the fuzzer starts
next to every refusal."""
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


# Every JSON reader: a key twice (top level, nested), byte order marks, cut short, junk after.
def dump_dup(v, path):
    """JSON text of `v` with the first key of the object at `path` (a list of keys) given twice;
    path None: no key twice below here."""
    if isinstance(v, dict):
        items = list(v.items())
        here = path == []
        if here and items:
            items = [items[0]] + items
        return '{' + ','.join(
            json.dumps(k) + ':' + dump_dup(x, path[1:] if path and path[0] == k and not here
                                           else None) for k, x in items) + '}'
    if isinstance(v, list):
        return '[' + ','.join(dump_dup(x, None) for x in v) + ']'
    return json.dumps(v)


def nested_path(obj):  # the keys down to the first nested object with a member
    for k, x in obj.items():
        if isinstance(x, dict) and x:
            return [k]
    return None


def json_classes(text):
    """(name, bytes) of the hostile JSON classes derived from one valid JSON text."""
    obj = json.loads(text)
    out = [('key-twice-top', dump_dup(obj, []).encode())]
    if nested_path(obj):
        out.append(('key-twice-nested', dump_dup(obj, nested_path(obj)).encode()))
    raw = text.encode()
    out += [('bom-utf8', b'\xef\xbb\xbf' + raw),
            ('bom-utf16', b'\xff\xfe' + text[:200].encode('utf-16-le')),
            ('cut-short', raw[:len(raw) * 2 // 3]),
            ('junk-after', raw + b' }]x')]
    return out


def join_hf_bytes(config_bytes, header_text, data):
    return config_bytes + join_hf('', header_text, data)


# config.json has no nested object of its own: one with a member is added.
for name, b in json_classes(json.dumps(dict(cfg, notes={'a': 1}))):
    put('hf', 'config-' + name + '.hf', join_hf_bytes(b, header, data))
for name, b in json_classes(header):
    if name in ('key-twice-top', 'key-twice-nested'):  # the header's length must stay right
        put('hf', 'header-' + name + '.hf', join_hf(config, b.decode(), data))
tok = open(os.path.join(CORPUS, 'tokenizer_json', 'gpt2.json')).read()
for name, b in json_classes(tok):
    put('tokenizer_json', name + '.json', b)
trace = open(os.path.join(CORPUS, 'trace', 'cached.json')).read()
for name, b in json_classes(trace):
    put('trace', name + '.json', b)

# Text a user writes: settings.txt and a lesson with a byte order mark, and in Latin-1.
settings = open(os.path.join(CORPUS, 'settings', 'saved.txt'), 'rb').read()
put('settings', 'bom.txt', b'\xef\xbb\xbf' + settings)
put('settings', 'latin1.txt', settings + b'prompt = caf\xe9\n')
put('settings', 'utf16.txt', b'\xff\xfe' + settings.decode().encode('utf-16-le'))
lesson = open(os.path.join(CORPUS, 'lesson', 'every-directive.md'), 'rb').read()
put('lesson', 'bom.md', b'\xef\xbb\xbf' + lesson)
put('lesson', 'latin1.md', lesson + b'caf\xe9 \xb5s\n')
put('lesson', 'utf16.md', b'\xff\xfe' + lesson[:1000].decode('utf-8', 'ignore').encode('utf-16-le'))
