"""kvscope's tokenizer tools: a small BPE trainer, the llama2.c tokenizer.bin
writer/reader, and a Python port of run.c's encode()/decode().

Vocabulary layout (what run.c and kvscope's C++ engine expect):
  0 "<unk>", 1 "<s>" (BOS), 2 "</s>" (EOS),
  3..258 byte-fallback tokens "<0x00>".."<0xFF>" (id = byte + 3),
  then merged pieces (score = -merge_rank, best first),
  then the single characters of the base alphabet (lowest scores).

Pieces never contain a space except as their first character, and never mix
letters with punctuation.  Because of the first rule no run.c merge can
cross the position just before a space, so encoding a text segment by
segment (split before each space) gives exactly what run.c gives for the
whole text; `encode_fast` relies on that and the tests in `self_check` and
the trainer compare it with the exact port `encode`.
"""

import re
import struct
from collections import Counter

UNK, BOS, EOS = 0, 1, 2
N_SPECIAL = 3
N_BYTES = 256
FIRST_PIECE = N_SPECIAL + N_BYTES  # 259

# Pre-tokenizer used only while learning merges: a word with its leading
# space, a contraction tail like "'s", a number, or one punctuation mark.
_CHUNK_RE = re.compile(r" ?[A-Za-z]+|'[a-z]+| ?[0-9]+| ?[^A-Za-z0-9 ]| ")


def _chunks(text):
    # run.c puts a " " token in front of every non-empty text (dummy prefix)
    return _CHUNK_RE.findall(" " + text)


def train_bpe(texts, vocab_size, must_have=(), must_weight=10 ** 7):
    """Learn BPE merges on `texts` until the vocabulary holds `vocab_size`
    tokens.  Words in `must_have` (with their leading space) get a very large
    count so that each of them surely ends up as one piece.

    Returns (pieces, scores): the full vocabulary list (strings) and scores.
    """
    words = Counter()
    for t in texts:
        words.update(_chunks(t))
    for w in must_have:
        words[w] += must_weight
    alphabet = sorted({ch for w in words for ch in w} | {" "})
    n_free = vocab_size - FIRST_PIECE - len(alphabet)
    assert n_free > 0, "vocab_size too small for the alphabet"

    # words as lists of symbols, with their counts
    wl = [(list(w), c) for w, c in words.items()]
    pair_counts = Counter()
    for syms, c in wl:
        for a, b in zip(syms, syms[1:]):
            pair_counts[(a, b)] += c

    merges = []
    vocab_set = set(alphabet)
    while len(merges) < n_free:
        best = None
        best_c = 0
        for p, c in pair_counts.items():
            # highest count wins; ties broken by the pair's text, so the
            # result does not depend on dict order
            if c > best_c or (c == best_c and best is not None and p < best):
                best, best_c = p, c
        if best is None or best_c <= 0:
            break
        a, b = best
        new = a + b
        merges.append(new)
        vocab_set.add(new)
        # apply the merge and update pair counts incrementally
        for syms, c in wl:
            if len(syms) < 2:
                continue
            i = 0
            changed = False
            while i < len(syms) - 1:
                if syms[i] == a and syms[i + 1] == b:
                    if not changed:
                        for x, y in zip(syms, syms[1:]):
                            pair_counts[(x, y)] -= c
                        changed = True
                    syms[i:i + 2] = [new]
                i += 1
            if changed:
                for x, y in zip(syms, syms[1:]):
                    pair_counts[(x, y)] += c
        pair_counts = Counter({p: c for p, c in pair_counts.items() if c > 0})

    pieces = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(256)]
    scores = [0.0] * FIRST_PIECE
    for rank, m in enumerate(merges):
        pieces.append(m)
        scores.append(-float(rank))
    base = len(merges)
    for i, ch in enumerate(alphabet):
        pieces.append(ch)
        scores.append(-float(base + i))
    assert len(set(pieces)) == len(pieces), "duplicate pieces"
    return pieces, scores


# ------------------------------------------------------------ file format

def write_tokenizer(path, pieces, scores):
    raw = [p.encode("utf-8") for p in pieces]
    with open(path, "wb") as f:
        f.write(struct.pack("<i", max(len(b) for b in raw)))
        for b, s in zip(raw, scores):
            f.write(struct.pack("<fi", s, len(b)))
            f.write(b)


def read_tokenizer(path):
    """Read a llama2.c tokenizer.bin (vocab size is implied by the file)."""
    data = open(path, "rb").read()
    off = 4
    pieces, scores = [], []
    while off < len(data):
        s, n = struct.unpack_from("<fi", data, off)
        off += 8
        pieces.append(data[off:off + n].decode("utf-8"))
        scores.append(s)
        off += n
    return pieces, scores


# ------------------------------------------------------- run.c encode port

class Tokenizer:
    def __init__(self, pieces, scores):
        self.pieces = pieces
        # float32 scores, as run.c compares them
        self.scores = [struct.unpack("<f", struct.pack("<f", s))[0] for s in scores]
        self.lookup = {}
        for i, p in enumerate(pieces):
            self.lookup.setdefault(p, i)
        for i, p in enumerate(pieces):
            if i >= FIRST_PIECE:
                assert " " not in p[1:], "space inside a piece: %r" % p
        self._cache = {}

    @classmethod
    def load(cls, path):
        return cls(*read_tokenizer(path))

    @property
    def vocab_size(self):
        return len(self.pieces)

    def _merge(self, toks):
        # run.c: repeatedly merge the adjacent pair whose concatenation is a
        # piece with the highest score (strictly greater -> leftmost on ties)
        pieces, lookup, scores = self.pieces, self.lookup, self.scores
        while True:
            best_score, best_id, best_idx = -1e10, -1, -1
            for i in range(len(toks) - 1):
                j = lookup.get(pieces[toks[i]] + pieces[toks[i + 1]], -1)
                if j != -1 and scores[j] > best_score:
                    best_score, best_id, best_idx = scores[j], j, i
            if best_idx == -1:
                return toks
            toks[best_idx:best_idx + 2] = [best_id]

    def _initial(self, text):
        toks = []
        for ch in text:  # one UTF-8 codepoint at a time
            j = self.lookup.get(ch, -1)
            if j != -1:
                toks.append(j)
            else:
                toks.extend(b + N_SPECIAL for b in ch.encode("utf-8"))
        return toks

    def encode(self, text, bos=True, eos=False):
        """Exact port of run.c encode()."""
        toks = [BOS] if bos else []
        if text:
            toks.append(self.lookup[" "])
        toks.extend(self._initial(text))
        toks = self._merge(toks)
        if eos:
            toks.append(EOS)
        return toks

    def encode_fast(self, text, bos=True, eos=False):
        """Same result as encode(), computed per space-led segment with a
        cache (see the module docstring for why that is exact)."""
        toks = [BOS] if bos else []
        if text:
            s = " " + text
            starts = [0] + [i for i in range(1, len(s)) if s[i] == " "]
            for a, b in zip(starts, starts[1:] + [len(s)]):
                seg = s[a:b]
                got = self._cache.get(seg)
                if got is None:
                    got = self._merge(self._initial(seg))
                    self._cache[seg] = got
                toks.extend(got)
        if eos:
            toks.append(EOS)
        return toks

    def decode_piece(self, prev, tok):
        """run.c decode(): bytes of token `tok` following token `prev`."""
        p = self.pieces[tok]
        if prev == BOS and p.startswith(" "):
            p = p[1:]
        m = re.fullmatch(r"<0x([0-9A-F]{2})>", p)
        if m:
            return bytes([int(m.group(1), 16)])
        return p.encode("utf-8")

    def decode(self, toks):
        out = b""
        prev = BOS
        for t in toks:
            out += self.decode_piece(prev, t)
            prev = t
        return out.decode("utf-8", errors="replace")


def self_check(tok, texts):
    """encode_fast must equal the exact run.c port."""
    for t in texts:
        a, b = tok.encode(t), tok.encode_fast(t)
        assert a == b, (t, a, b)
