#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (corpus/<target>/): a few valid and near-valid inputs per
target, all made here from scratch (no third-party model or text). Run it from anywhere; the
files are committed, so this only needs re-running when the seeds change."""
import json
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
# Deep nesting: a megabyte of it would overflow the stack without the bound on a check's length.
put('lesson', 'deep-nesting.md', '# T\n## S\n@expect ' + '(' * 1500 + '1' + ')' * 1500 + ' == 1\n')
put('lesson', 'bad-scale.md', '# T\n## S\n@scale model=llama2-7b context=99999999 gpu=h100-sxm\n')

# fuzz_lesson_expr: checks on the toy model, with every kind of index.
for name, check in [
        ('weight-negative', 'weight(-1, -4, -1, 0) > 0'),
        ('weight-issue15', 'weight(-4,-8,0,0) > 0'),
        ('head-row', 'head(0, 3, 2) == 31/3 within 1e-6'),
        ('token-huge', 'token(1e300) == " nice"'),
        ('token-nan', 'token(0/0) == "x"'),
        ('token-neg', 'token(-2) != token(-1)'),
        ('top-rank', 'top(-1) != top(0)'),
        ('logit', 'logit("nice") > logit("warm") + 1'),
        ('uncached', 'uncached_rows(1) >= rows(-1)'),
        ('compare', 'max_logit_diff <= 1e-4'),
        ('model', 'kv_per_token("mha") == n_layers * 2 * dim * 4')]:
    put('lesson_expr', name + '.txt', check)


def ttf(glyphs=3, cut=None):
    """A minimal TrueType font made here: an empty outline per glyph, a format-4 cmap mapping
    'A'.. to glyphs 1.., metrics for each. Enough for stb_truetype and the window's check."""
    def table(tag, data):
        return tag, data + b'\0' * (-len(data) % 4)
    head = struct.pack('>IIIIHHqqhhhhHHhhh', 0x00010000, 0, 0, 0x5F0F3CF5, 0, 1000, 0, 0,
                       0, 0, 1000, 1000, 0, 8, 2, 0, 0)  # indexToLocFormat 0 (short)
    hhea = struct.pack('>IhhhHhhhhhhhhhhhH', 0x00010000, 800, -200, 0, 1000, 0, 0, 1000, 1, 0,
                       0, 0, 0, 0, 0, 0, glyphs)
    maxp = struct.pack('>IH', 0x00005000, glyphs)
    hmtx = b''.join(struct.pack('>Hh', 500, 0) for _ in range(glyphs))
    loca = b''.join(struct.pack('>H', 0) for _ in range(glyphs + 1))  # every glyph empty
    end = 0x41 + glyphs - 2
    seg = struct.pack('>HHHH', 4, 4, 1, 0)  # segCountX2 = 4: one range and the 0xFFFF end
    # endCode[2], pad, startCode[2], idDelta[2], idRangeOffset[2]
    arrays = struct.pack('>9H', end, 0xFFFF, 0, 0x41, 0xFFFF, (1 - 0x41) & 0xFFFF, 1, 0, 0)
    fmt4 = struct.pack('>HHH', 4, 14 + len(arrays), 0) + seg + arrays
    cmap = struct.pack('>HHHHI', 0, 1, 3, 1, 12) + fmt4
    tables = [table(b'cmap', cmap), table(b'glyf', b''), table(b'head', head),
              table(b'hhea', hhea), table(b'hmtx', hmtx), table(b'loca', loca),
              table(b'maxp', maxp)]
    out = struct.pack('>IHHHH', 0x00010000, len(tables), 0, 0, 0)
    offset = 12 + 16 * len(tables)
    body = b''
    for tag, data in tables:
        out += tag + struct.pack('>III', 0, offset + len(body), len(data))
        body += data
    data = out + body
    return data[:cut] if cut else data


put('font', 'minimal.ttf', ttf())
put('font', 'truncated.ttf', ttf(cut=60))
put('font', 'ttc.ttc', struct.pack('>IIII', 0x74746366, 0x00010000, 1, 16) + ttf())
put('font', 'otto.otf', b'OTTO' + ttf()[4:])
put('font', 'empty.ttf', b'')

# fuzz_settings: what the window writes (the options' names: options.txt), the other spellings
# the settings reader accepts (keys with '_', the lesson step from 0: saved.txt), and what a hand
# may leave.
options = '''# kvscope settings: one option a line, named as kvscope --help names it.
theme = light
font-scale = 1.25
model = /tmp/m.bin
model-path = /tmp/m.bin
backend = cpu
cache = compare
prompt = Once upon a time
play-speed = 4
layer = 1
head = 3
weight-scale = log
log-time = 0
temperature = 0.7
top-k = 40
top-p = 0.95
seed = 18446744073709551615
lang = zh
lesson = 4
lesson-step = 3
'''
put('settings', 'options.txt', options)
put('settings', 'options-bad.txt', 'temperature = -5\nbackend = quantum\ntop-p = 2\nseed = 1.5\n'
    'font-scale = nan\nlayer = 99999999999\nweight-scale = cubic\nmodel =\nlesson = 0\n'
    'lesson-step = 1000\nlog-time = yes\nmodel_path = \nlesson_step = -1\n')
settings = '''# kvscope settings (rewritten on exit)
theme = light
font_scale = 1.25
model = file
model_path = /tmp/m.bin
backend = cpu
cache = compare
prompt = Once upon a time
play_speed = 4
layer = 1
head = 3
weight_scale = log
log_time = 0
temperature = 0.7
top_k = 40
top_p = 0.95
seed = 18446744073709551615
lang = zh
lesson = 4
lesson_step = 2
'''
put('settings', 'saved.txt', settings)
put('settings', 'bad.txt', 'temperature = -5\nbackend = quantum\ntop_p = 2\nseed = 1.5\n'
    'font_scale = nan\nlayer = 99999999999\nweight_scale = cubic\n')
put('settings', 'crlf.txt', settings.replace('\n', '\r\n'))

# fuzz_tokenizer_json: Hugging Face tokenizer.json files, a byte-level BPE with GPT-2's byte
# alphabet (the 256 byte tokens, a few merges, an added token and a BOS post-processor) under each
# pre-tokenizer kvscope reads; then the classes of hostile input the reader refuses by name: ids
# negative, at the top of the 64-bit range, huge, fractional; nesting at the 64-level bound and
# one past it; NUL and bidi controls inside strings; merges that are not strings.
def byte_chars():
    keep = list(range(ord('!'), ord('~') + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, n = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + n)
            n += 1
    return chars


def hf_tokenizer(pre, added_id=None, extra=None, ignore_merges=False):
    chars = byte_chars()
    vocab = {chars[b]: b for b in range(256)}
    merges = [['h', 'e'], ['l', 'l'], ['he', 'll'], [chars[32], 't']]
    for m in merges:
        vocab.setdefault(m[0] + m[1], len(vocab))
    added = [{'id': len(vocab) if added_id is None else added_id, 'content': '<|end|>',
              'special': True}]
    model = {'type': 'BPE', 'vocab': vocab, 'merges': merges}
    if ignore_merges:
        model['ignore_merges'] = True
    j = {'model': model, 'pre_tokenizer': pre,
         'added_tokens': added,
         'post_processor': {'type': 'TemplateProcessing',
                            'single': [{'SpecialToken': {'id': '<|end|>', 'type_id': 0}}]}}
    j.update(extra or {})
    return json.dumps(j, ensure_ascii=False, separators=(',', ':'))


LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| "
          r"?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = LLAMA3.replace(r'\p{N}{1,3}', r'\p{N}')
byte_level = {'type': 'ByteLevel', 'add_prefix_space': False}
split = lambda rx: {'type': 'Split', 'pattern': {'Regex': rx}, 'behavior': 'Isolated',
                    'invert': False}
no_regex = {'type': 'ByteLevel', 'add_prefix_space': False, 'use_regex': False}
put('tokenizer_json', 'gpt2.json', hf_tokenizer(byte_level))
put('tokenizer_json', 'llama3.json',
    hf_tokenizer({'type': 'Sequence', 'pretokenizers': [split(LLAMA3), no_regex]},
                 ignore_merges=True))
put('tokenizer_json', 'qwen2.json',
    hf_tokenizer({'type': 'Sequence', 'pretokenizers': [split(QWEN2), no_regex]}))
put('tokenizer_json', 'smollm.json',
    hf_tokenizer({'type': 'Sequence', 'pretokenizers': [
        {'type': 'Digits', 'individual_digits': True}, byte_level]}))
# The same as the hub's tokenizers library writes them: every model field (null, "", false), the
# ByteLevel post-processor and decoder, added tokens with all their flags, merges as "LEFT RIGHT"
# strings (GPT-2's, as tokenizers before 0.20 wrote them) or pairs; Llama 3's BOS template inside
# a Sequence post-processor, Qwen2's NFC normaliser.
def hub_tokenizer(kind):
    j = json.loads(hf_tokenizer(byte_level))
    bl = lambda prefix, trim, regex: {'type': 'ByteLevel', 'add_prefix_space': prefix,
                                      'trim_offsets': trim, 'use_regex': regex}
    model = j['model']
    hub_model = {'type': 'BPE', 'dropout': None, 'unk_token': None,
                 'continuing_subword_prefix': '', 'end_of_word_suffix': '', 'fuse_unk': False,
                 'byte_fallback': False, 'ignore_merges': kind == 'llama3',
                 'vocab': model['vocab'],
                 'merges': [' '.join(m) for m in model['merges']] if kind == 'gpt2'
                 else model['merges']}
    added = [dict(a, single_word=False, lstrip=False, rstrip=False, normalized=False)
             for a in j['added_tokens']]
    template = j['post_processor']
    template['special_tokens'] = {'<|end|>': {'id': '<|end|>', 'ids': [added[0]['id']],
                                               'tokens': ['<|end|>']}}
    if kind == 'gpt2':
        pre, post, norm = bl(False, True, True), bl(True, False, True), None
    elif kind == 'qwen2':
        pre = {'type': 'Sequence', 'pretokenizers': [split(QWEN2), bl(False, False, False)]}
        post, norm = bl(False, False, False), {'type': 'NFC'}
    else:
        pre = {'type': 'Sequence', 'pretokenizers': [split(LLAMA3), bl(False, True, False)]}
        post = {'type': 'Sequence', 'processors': [bl(True, False, True), template]}
        norm = None
    hub = {'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': added,
           'normalizer': norm, 'pre_tokenizer': pre, 'post_processor': post,
           'decoder': bl(True, True, True), 'model': hub_model}
    return json.dumps(hub, ensure_ascii=False, indent=2)


for kind in ('gpt2', 'qwen2', 'llama3'):
    put('tokenizer_json', kind + '-hub.json', hub_tokenizer(kind))
for name, idv in [('id-negative', -1), ('id-u64-max', 2**64 - 1), ('id-i64-min', -2**63),
                  ('id-huge', 4000000000), ('id-float', 1.5e300), ('id-string', '3')]:
    put('tokenizer_json', name + '.json', hf_tokenizer(byte_level, added_id=idv))
put('tokenizer_json', 'depth-64.json',
    hf_tokenizer(byte_level, extra={'normalizer': json.loads('[' * 62 + ']' * 62)}))
put('tokenizer_json', 'depth-65.json',
    hf_tokenizer(byte_level, extra={'normalizer': json.loads('[' * 64 + ']' * 64)}))
put('tokenizer_json', 'nul-and-bidi.json',
    hf_tokenizer(byte_level).replace('<|end|>', '<|e\\u0000n\u202ed\u200b|>'))
put('tokenizer_json', 'merge-numbers.json',
    hf_tokenizer(byte_level).replace('["h","e"]', '[1,2]'))
put('tokenizer_json', 'tiny.json',
    '{"model":{"vocab":{"a":0,"b":1,"c":2}},"pre_tokenizer":{"type":"ByteLevel"},'
    '"added_tokens":[{"id":-1,"content":"x"}]}')
