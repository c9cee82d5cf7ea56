#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (corpus/<target>/): a few valid and near-valid inputs per
target, all made here from scratch (no third-party model or text). Run it from anywhere; the
files are committed, so this only needs re-running when the seeds change."""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(9)


def put(target, name, data):
    d = os.path.join(HERE, 'corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode('utf-8'))


def stored_floats(dim, hidden, layers, heads, kv_heads, vocab, seq, shared):
    kv = kv_heads * (dim // heads)
    n = vocab * dim + layers * dim + 2 * layers * dim * dim + 2 * layers * kv * dim
    n += layers * dim + 3 * layers * hidden * dim + dim + 2 * seq * ((dim // heads) // 2)
    return n + (0 if shared else vocab * dim)


def checkpoint(dim, hidden, layers, heads, kv_heads, vocab, seq, shared=True, fill=None):
    head = struct.pack('<7i', dim, hidden, layers, heads, kv_heads, vocab if shared else -vocab, seq)
    n = stored_floats(dim, hidden, layers, heads, kv_heads, vocab, seq, shared)
    if fill is None:
        body = struct.pack(f'<{n}f', *[rng.gauss(0, 0.5) for _ in range(n)])
    else:
        body = fill * n
    return head + body


def tokenizer(pieces, vocab=None):
    v = ['<unk>', '\n<s>\n', '\n</s>\n'] + [f'<0x{b:02X}>' for b in range(256)] + pieces
    v = [p.encode('utf-8') for p in v]
    if vocab is not None:
        v = v[:vocab]
    out = struct.pack('<i', max(len(p) for p in v))
    for i, p in enumerate(v):
        score = -(i - 259) if i >= 259 else 0.0
        out += struct.pack('<fi', score, len(p)) + p
    return out


# Checkpoints: small but real shapes (shared and separate classifier, GQA, a vocabulary with byte
# pieces), then the ways a file goes wrong.
ok = checkpoint(4, 8, 1, 2, 1, 8, 4)
put('checkpoint', 'tiny-shared.bin', ok)
put('checkpoint', 'tiny-separate.bin', checkpoint(2, 2, 1, 1, 1, 4, 2, shared=False))
put('checkpoint', 'gqa-2layers.bin', checkpoint(8, 4, 2, 4, 2, 6, 3))
put('checkpoint', 'vocab-262.bin', checkpoint(2, 1, 1, 1, 1, 262, 3))
put('checkpoint', 'nan-weights.bin', checkpoint(4, 8, 1, 2, 1, 8, 4, fill=b'\xff\xff\xff\x7f'))
put('checkpoint', 'inf-weights.bin', checkpoint(4, 8, 1, 2, 1, 8, 4, fill=struct.pack('<f', 3e38)))
put('checkpoint', 'truncated.bin', ok[:-5])
put('checkpoint', 'header-only.bin', ok[:28])
put('checkpoint', 'export-v1.bin', b'24ka' + ok[4:])  # magic 0x616b3432, little-endian
put('checkpoint', 'huge-header.bin', struct.pack('<7i', 16384, 65536, 256, 1024, 1024, 1 << 20, 1 << 17))

# Tokenizers: a real-looking one, the smallest legal one, and broken ones.
tok = tokenizer([' ', 'e', ' t', 'he', ' the', '你', '好', '你好', '😀'])
put('tokenizer_parse', 'bytes-and-merges.tok', tok)
put('tokenizer_parse', 'three-tokens.tok', tokenizer([], vocab=3))
put('tokenizer_parse', 'truncated.tok', tok[:-3])
put('tokenizer_parse', 'negative-length.tok', struct.pack('<ifi', 8, 0.0, -1))
put('tokenizer_parse', 'zero-max-len.tok', struct.pack('<i', 0))
put('tokenizer_parse', 'empty-pieces.tok', struct.pack('<i', 1) + struct.pack('<fi', 0.0, 0) * 5)

# Prompts: what people paste.
for name, text in [('english', 'Once upon a time, the cat sat on the mat.'),
                   ('chinese', '你好，世界。今天天气很好'),
                   ('emoji', 'hi 😀 👍🏽 🇩🇪 e\u0301'),
                   ('controls', 'tab\there\r\nbell\x07 esc\x1b[31m del\x7f'),
                   ('byte-pieces-as-text', '<0x41> <s> </s> <unk>')]:
    put('tokenizer_encode', name + '.txt', text)
put('tokenizer_encode', 'invalid-utf8.bin', b'\xff\xfe\xc3\x28\xa0\xa1\xe2\x28\xa1\xed\xa0\x80\xf5\x80\x80\x80')
put('tokenizer_encode', 'nul-and-high.bin', bytes(range(256)))

# Lessons: one that parses with every kind of directive, and near misses.
lesson = '''# A small lesson

Intro.

## Prefill

Text with `code`.

@model toy
@prompt "Today weather is so"
@limit 3
@cache compare
@prefill
@expect rows == 4
@expect head(0, 3, 2) == 31/3 within 1e-6
@highlight layer=0 head=1
@show attention

## Decode

```
@not-a-directive inside a fence
```
\\@ prose that starts with an at sign
@decode 2
@decode all
@reset
@whatif
@batch sizes=1,2 decode=2 repeats=1 prompts="a b" | "c"
@scale model=llama2-7b context=4096 gpu=h100-sxm batch=2 dtype=bf16
@expect finish == "end token"
'''
put('lesson', 'every-directive.md', lesson)
put('lesson', 'crlf.md', lesson.replace('\n', '\r\n'))
put('lesson', 'typo.md', '# T\n\n## S\n\n@decod 2\n')
put('lesson', 'no-title.md', '## S\n@prefill\n')
put('lesson', 'open-fence.md', '# T\n## S\n```\n@prefill\n')
put('lesson', 'bad-expect.md', '# T\n## S\n@expect (1 + == 2\n')
put('lesson', 'bad-batch.md', '# T\n## S\n@batch sizes=1,,9 prompts="a" |\n')
# Nesting that once overflowed the stack at a megabyte; the check length is now bounded.
put('lesson', 'deep-nesting.md', '# T\n## S\n@expect ' + '(' * 1500 + '1' + ')' * 1500 + ' == 1\n')
put('lesson', 'bad-scale.md', '# T\n## S\n@scale model=llama2-7b context=99999999 gpu=h100-sxm\n')
