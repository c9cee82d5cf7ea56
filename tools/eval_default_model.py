#!/usr/bin/python3
"""Evaluate kvscope's default model from the EXPORTED files.

Reads assets/models/kvscope-tiny.bin and kvscope-tiny.tok.bin exactly as the
C++ engine does (llama2.c formats), runs a small numpy reimplementation of
run.c's forward pass, and prints:
  - greedy next-word accuracy per sentence family, on training forms and on
    held-out forms, plus a "key word" accuracy per family
  - P(" nice"), P(" warm"), P(" delicious") after "Today's weather is so"
  - greedy continuations of "The capital of X is" for every country
  - which (layer, head) attends most to " France" at the last position of
    "The capital of France is"
  - the window's default run: 20 greedy tokens after "Once upon a time",
    and how many of them are single letters
  - how spread the next-token distributions are: entropy, the top token's
    probability and the size of the top-p 0.9 nucleus at every step of a
    few greedy runs and along validation text, and how many different
    texts sampling (temperature 1, top-p 0.9) writes
Because nothing here shares code with the trainer's model, good numbers are
also a check that the export is right.

  /usr/bin/python3 tools/eval_default_model.py [--model M] [--tokenizer T]
       [--n 150] [--json OUT]
"""

import argparse
import json
import os
import random
import re
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kvtok  # noqa: E402
import make_corpus as mc  # noqa: E402

REPO = os.path.dirname(HERE)
EVAL_SEED = 777


# ------------------------------------------------------------ checkpoint

class Checkpoint:
    """llama2.c version-0 checkpoint, read as run.c reads it."""

    def __init__(self, path):
        data = open(path, "rb").read()
        (self.dim, self.hidden_dim, self.n_layers, self.n_heads,
         self.n_kv_heads, vocab, self.seq_len) = struct.unpack_from("<7i", data, 0)
        self.shared = vocab > 0
        self.vocab_size = abs(vocab)
        d, hd, L, V = self.dim, self.hidden_dim, self.n_layers, self.vocab_size
        self.head_size = d // self.n_heads
        self.kv_dim = d * self.n_kv_heads // self.n_heads
        kv = self.kv_dim
        shapes = [("tok", (V, d)), ("rms_att", (L, d)), ("wq", (L, d, d)),
                  ("wk", (L, kv, d)), ("wv", (L, kv, d)), ("wo", (L, d, d)),
                  ("rms_ffn", (L, d)), ("w1", (L, hd, d)), ("w2", (L, d, hd)),
                  ("w3", (L, hd, d)), ("rms_final", (d,)),
                  ("freq_real", (self.seq_len, self.head_size // 2)),
                  ("freq_imag", (self.seq_len, self.head_size // 2))]
        if not self.shared:
            shapes.append(("wcls", (V, d)))
        need = 28 + 4 * sum(int(np.prod(s)) for _, s in shapes)
        if need != len(data):
            raise ValueError("file is %d bytes, header implies %d" % (len(data), need))
        off = 28
        for name, shape in shapes:
            n = int(np.prod(shape))
            arr = np.frombuffer(data, dtype="<f4", count=n, offset=off).reshape(shape)
            setattr(self, name, arr.astype(np.float64))
            off += 4 * n
        if self.shared:
            self.wcls = self.tok
        self.n_params = sum(int(np.prod(s)) for n_, s in shapes
                            if not n_.startswith("freq"))
        self.header = dict(dim=self.dim, hidden_dim=self.hidden_dim,
                           n_layers=self.n_layers, n_heads=self.n_heads,
                           n_kv_heads=self.n_kv_heads, vocab_size=vocab,
                           seq_len=self.seq_len)


def rmsnorm(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-5) * w


def rope(x, n_heads_in_x, head_size, positions):
    # run.c: for i = 0, 2, 4..: hd = i % head_size,
    # freq = 1 / 10000^(hd / head_size), rotate (x[i], x[i+1]) by pos*freq
    T = x.shape[0]
    out = x.copy()
    for i in range(0, n_heads_in_x * head_size, 2):
        hd = i % head_size
        freq = 1.0 / (10000.0 ** (hd / head_size))
        ang = positions * freq
        c, s = np.cos(ang), np.sin(ang)
        v0, v1 = x[:, i], x[:, i + 1]
        out[:, i] = v0 * c - v1 * s
        out[:, i + 1] = v0 * s + v1 * c
    assert out.shape[0] == T
    return out


def forward(ck, tokens):
    """Logits for every position of `tokens` (positions 0..T-1) and the
    attention weights [layer][head] -> (T, T).  Same math as run.c's
    forward() called once per position with its KV cache."""
    T = len(tokens)
    pos = np.arange(T, dtype=np.float64)
    hs, H, KV = ck.head_size, ck.n_heads, ck.n_kv_heads
    rep = H // KV
    x = ck.tok[np.asarray(tokens)]
    mask = np.triu(np.full((T, T), -np.inf), 1)
    atts = []
    for l in range(ck.n_layers):
        xb = rmsnorm(x, ck.rms_att[l])
        q = rope(xb @ ck.wq[l].T, H, hs, pos)
        k = rope(xb @ ck.wk[l].T, KV, hs, pos)
        v = xb @ ck.wv[l].T
        out = np.zeros_like(q)
        layer_att = []
        for h in range(H):
            kh = h // rep  # GQA: query head h reads kv head h / (H / KV)
            qh = q[:, h * hs:(h + 1) * hs]
            kk = k[:, kh * hs:(kh + 1) * hs]
            vv = v[:, kh * hs:(kh + 1) * hs]
            sc = qh @ kk.T / np.sqrt(hs) + mask
            sc = np.exp(sc - sc.max(axis=1, keepdims=True))
            sc /= sc.sum(axis=1, keepdims=True)
            layer_att.append(sc)
            out[:, h * hs:(h + 1) * hs] = sc @ vv
        atts.append(layer_att)
        x = x + out @ ck.wo[l].T
        xb = rmsnorm(x, ck.rms_ffn[l])
        a = xb @ ck.w1[l].T
        silu = a / (1.0 + np.exp(-a))
        x = x + (silu * (xb @ ck.w3[l].T)) @ ck.w2[l].T
    x = rmsnorm(x, ck.rms_final)
    return x @ ck.wcls.T, atts


def softmax(z):
    z = np.exp(z - z.max())
    return z / z.sum()


def greedy(ck, tok, prompt, max_new=10, stop_at_period=True, ids=None):
    if ids is None:
        ids = tok.encode(prompt)
    out = []
    for _ in range(max_new):
        logits, _ = forward(ck, ids)
        nxt = int(np.argmax(logits[-1]))
        if nxt == kvtok.BOS:  # the app stops when BOS is produced
            break
        out.append(nxt)
        ids.append(nxt)
        if stop_at_period and tok.pieces[nxt] in (".", "?", "!"):
            break
    return out


# ----------------------------------------------------------- evaluation

def token_spans(tok, ids):
    """Character range of every token within " " + text (dummy prefix)."""
    spans, off = [], 0
    for t in ids:
        n = 0 if t == kvtok.BOS else len(tok.pieces[t])
        spans.append((off, off + n))
        off += n
    return spans


def words_in(text):
    """(start, end, word) of each word with its leading space, in " "+text."""
    return [(m.start(), m.end(), m.group(0)[1:])
            for m in re.finditer(r" [A-Za-z']+", " " + text)]


def score_text(ck, tok, text, key_kind=None):
    """Return (n_words, n_correct, key_result) for one eval text.
    A word counts as correct when every one of its tokens is the argmax
    given the true prefix, i.e. greedy decoding would write that word."""
    ids = tok.encode(text)
    logits, _ = forward(ck, ids)
    pred = np.argmax(logits, axis=1)
    spans = token_spans(tok, ids)
    ws = words_in(text)
    n = ok = 0
    word_ok = []
    word_tok = []
    for (a, b, w) in ws:
        toks = [i for i, (s, e) in enumerate(spans) if s < b and e > a and i > 0]
        good = all(pred[i - 1] == ids[i] for i in toks)
        word_ok.append(good)
        word_tok.append(toks)
    for good in word_ok[1:]:  # the first word follows BOS alone: skip it
        n += 1
        ok += good
    key = None
    if key_kind is not None:
        cls, exact = key_kind
        idx = max(i for i, (_, _, w) in enumerate(ws) if w in cls)
        if exact:
            key = word_ok[idx]
        else:
            # greedy continuation of the prefix up to the end of the
            # sentence: its first weather-or-food adjective must be of the
            # right family ("was" -> " so delicious." counts for food)
            first = word_tok[idx][0]
            cont = greedy(ck, tok, None, max_new=4, ids=list(ids[:first]))
            key = False
            for t in cont:
                w = tok.pieces[t].strip()
                if w in ADJECTIVES:
                    key = w in cls
                    break
    return n, ok, key
    return n, ok, key


def family_sets(n):
    rng = random.Random(EVAL_SEED)
    sets = {}
    for fam in ("weather", "food", "capitals", "stories"):
        for split, held in (("train forms", False), ("held-out forms", True)):
            sets[(fam, split)] = [mc.sentence(rng, fam, held) for _ in range(n)]
    return sets


KEYS = {
    "weather": (set(mc.WEATHER_WORDS), False),  # right class of word
    "food": (set(mc.FOOD_WORDS), False),
    "capitals": (set(mc.COUNTRIES) | set(mc.CITIES), True),  # exact word
    "stories": None,
}

ADJECTIVES = set(mc.WEATHER_WORDS) | set(mc.FOOD_WORDS)

TEN = ["France", "Japan", "Italy", "Germany", "Egypt", "Canada", "Greece",
       "Norway", "Kenya", "Peru"]

# The window's default prompt and run (gui/state/settings.h: greedy), and the
# prompts whose runs the spread figures are taken on.
WINDOW_PROMPT = "Once upon a time"
WINDOW_TOKENS = 20
SPREAD_PROMPTS = [WINDOW_PROMPT, "One day Tom went to the park with his dog.",
                  "Lily had a red ball.", "Today's weather is so",
                  "The capital of France is"]


def single_letters(tok, toks):
    """(letters inside a longer word, one-letter tokens in all).  A piece
    that is one letter spells part of a word when the token before or after
    it continues the same word (no space between them): g-i-r-l.  The word
    " a" on its own counts only in the second figure."""
    def one_letter(t):
        p = tok.pieces[t]
        return len(p.lstrip(" ")) == 1 and p.lstrip(" ").isalpha()

    def joins(a, b):  # b continues a's word
        pa, pb = tok.pieces[a], tok.pieces[b]
        return pa[-1:].isalpha() and pb[:1].isalpha()

    inside = total = 0
    for i, t in enumerate(toks):
        if not one_letter(t):
            continue
        total += 1
        if (i > 0 and joins(toks[i - 1], t)) or (i + 1 < len(toks) and joins(t, toks[i + 1])):
            inside += 1
    return inside, total


def spread(p, top_p=0.9):
    """Entropy (bits), top probability and the size of the smallest set of
    tokens whose mass reaches top_p, for one distribution."""
    nz = p[p > 0]
    ent = float(-(nz * np.log2(nz)).sum())
    srt = np.sort(p)[::-1]
    nucleus = int(np.searchsorted(np.cumsum(srt), top_p) + 1)
    return ent, float(srt[0]), nucleus


def spread_summary(rows):
    ent = np.array([r[0] for r in rows])
    top = np.array([r[1] for r in rows])
    nuc = np.array([r[2] for r in rows])
    return {"steps": len(rows), "entropy_bits_median": float(np.median(ent)),
            "entropy_bits_mean": float(ent.mean()),
            "share_top_ge_0.99": float((top >= 0.99).mean()),
            "share_top_lt_0.9": float((top < 0.9).mean()),
            "share_top_lt_0.5": float((top < 0.5).mean()),
            "nucleus_0.9_mean": float(nuc.mean()), "nucleus_0.9_max": int(nuc.max()),
            "share_nucleus_gt_1": float((nuc > 1).mean())}


def sample(ck, tok, prompt, n, rng, temperature=1.0, top_p=0.9):
    """n tokens drawn as the app's sampler draws them (temperature, then the
    top-p nucleus renormalised); stops at BOS."""
    ids = tok.encode(prompt)
    out = []
    for _ in range(n):
        logits, _ = forward(ck, ids)
        p = softmax(logits[-1] / temperature)
        order = np.argsort(-p)
        keep = order[:int(np.searchsorted(np.cumsum(p[order]), top_p) + 1)]
        q = p[keep] / p[keep].sum()
        nxt = int(keep[rng.choice(len(keep), p=q)])
        if nxt == kvtok.BOS:
            break
        out.append(nxt)
        ids.append(nxt)
    return out


def window_report(ck, tok, res):
    """The window's default run, token by token, and its single letters."""
    toks = greedy(ck, tok, WINDOW_PROMPT, max_new=WINDOW_TOKENS, stop_at_period=False)
    inside, total = single_letters(tok, toks)
    res["window"] = {"prompt": WINDOW_PROMPT, "tokens": toks,
                     "pieces": [tok.pieces[t] for t in toks], "text": tok.decode(toks),
                     "letters_inside_words": inside, "one_letter_tokens": total}
    print("\nthe window's default run: %r + %d greedy tokens" % (WINDOW_PROMPT, len(toks)))
    print("  text: %r" % res["window"]["text"])
    print("  tokens: %s" % " | ".join(repr(tok.pieces[t]) for t in toks))
    print("  single letters spelling part of a word: %d of %d tokens; one-letter tokens in all "
          "(the word ' a' included): %d" % (inside, len(toks), total))


def spread_report(ck, tok, res, val_texts):
    """How much choice the model's next-token distributions leave."""
    runs = []
    for prompt in SPREAD_PROMPTS:
        ids = tok.encode(prompt)
        for _ in range(30):
            logits, _ = forward(ck, ids)
            p = softmax(logits[-1])
            runs.append(spread(p))
            nxt = int(np.argmax(p))
            if nxt == kvtok.BOS:
                break
            ids.append(nxt)
    teacher = []
    for t in val_texts:
        logits, _ = forward(ck, tok.encode(t))
        teacher += [spread(softmax(z)) for z in logits[1:]]
    res["spread_greedy"] = spread_summary(runs)
    res["spread_teacher_forced"] = spread_summary(teacher)
    print("\nnext-token spread (entropy in bits; nucleus = the fewest tokens holding 90%):")
    print("| where | steps | median entropy | mean entropy | top p >= 0.99 | top p < 0.9 "
          "| top p < 0.5 | nucleus mean | nucleus > 1 token |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, key in (("greedy runs of %d prompts, 30 tokens each" % len(SPREAD_PROMPTS),
                       "spread_greedy"),
                      ("%d validation documents, every position" % len(val_texts),
                       "spread_teacher_forced")):
        r = res[key]
        print("| %s | %d | %.2f | %.2f | %.0f%% | %.0f%% | %.0f%% | %.1f | %.0f%% |" % (
            name, r["steps"], r["entropy_bits_median"], r["entropy_bits_mean"],
            100 * r["share_top_ge_0.99"], 100 * r["share_top_lt_0.9"],
            100 * r["share_top_lt_0.5"], r["nucleus_0.9_mean"],
            100 * r["share_nucleus_gt_1"]))
    rng = np.random.default_rng(EVAL_SEED)
    texts = [tok.decode(sample(ck, tok, WINDOW_PROMPT, WINDOW_TOKENS, rng)) for _ in range(10)]
    res["samples"] = texts
    res["distinct_samples"] = len(set(texts))
    print("\n10 samples of %d tokens after %r (temperature 1, top-p 0.9): %d different"
          % (WINDOW_TOKENS, WINDOW_PROMPT, len(set(texts))))
    for t in texts[:5]:
        print("  %r" % t)


def main():
    ap = argparse.ArgumentParser(description="evaluate kvscope-tiny")
    ap.add_argument("--model", default=os.path.join(REPO, "assets", "models", "kvscope-tiny.bin"))
    ap.add_argument("--tokenizer", default=os.path.join(REPO, "assets", "models", "kvscope-tiny.tok.bin"))
    ap.add_argument("--n", type=int, default=150, help="sentences per family and split")
    ap.add_argument("--json", default=None, help="also write results here")
    args = ap.parse_args()

    ck = Checkpoint(args.model)
    tok = kvtok.Tokenizer.load(args.tokenizer)
    assert tok.vocab_size == ck.vocab_size
    res = {"header": ck.header, "params": ck.n_params,
           "model_bytes": os.path.getsize(args.model),
           "tokenizer_bytes": os.path.getsize(args.tokenizer)}
    print("header %s, %d parameters, %d + %d bytes"
          % (ck.header, ck.n_params, res["model_bytes"], res["tokenizer_bytes"]))

    # lesson tokens
    ids = {}
    for w in ["nice", "warm", "delicious", "Paris", "France", "capital",
              "weather", "Today", "is", "so", "The", "of"]:
        e = tok.encode(w, bos=False)
        assert len(e) == 1, (w, e)
        ids[" " + w] = e[0]
    res["token_ids"] = ids
    print("token ids:", ", ".join("%r=%d" % kv for kv in ids.items()))

    # 1. per-family accuracy
    print("\n| family | forms | sentences | next-word acc. | key-word acc. |")
    print("|---|---|---|---|---|")
    res["families"] = []
    for (fam, split), texts in family_sets(args.n).items():
        nw = nok = nk = kok = 0
        for t in texts:
            a, b, key = score_text(ck, tok, t, KEYS[fam])
            nw += a
            nok += b
            if key is not None:
                nk += 1
                kok += key
        row = {"family": fam, "forms": split, "sentences": len(texts),
               "word_acc": nok / nw, "key_acc": (kok / nk) if nk else None}
        res["families"].append(row)
        print("| %s | %s | %d | %.1f%% | %s |" % (
            fam, split, len(texts), 100 * row["word_acc"],
            "%.1f%%" % (100 * row["key_acc"]) if nk else "-"))
    print("\nnext-word acc.: share of words (all but the first) that greedy "
          "decoding of the true prefix reproduces exactly")
    print("key word: weather/food = the first weather-or-food adjective in the "
          "greedy continuation (up to 4 tokens) before the sentence's last "
          "adjective is of the right family; capitals = the sentence's last "
          "country or capital is reproduced exactly")

    # 2. weather probe
    prompt = "Today's weather is so"
    p_ids = tok.encode(prompt)
    logits, _ = forward(ck, p_ids)
    p = softmax(logits[-1])
    top = np.argsort(-p)[:8]
    res["weather_prompt_ids"] = p_ids
    res["weather_probs"] = {w: float(p[ids[w]]) for w in (" nice", " warm", " delicious")}
    res["weather_top"] = [(tok.pieces[i], float(p[i])) for i in top]
    print("\nencode(%r) = %s" % (prompt, p_ids))
    print("P(next) after %r: %s" % (prompt, ", ".join(
        "%r %.2f%%" % (w, 100 * v) for w, v in res["weather_probs"].items())))
    print("top: " + ", ".join("%r %.1f%%" % (t, 100 * v) for t, v in res["weather_top"]))

    # 3. capitals
    prompt = "The capital of France is"
    f_ids = tok.encode(prompt)
    res["france_prompt_ids"] = f_ids
    cont = tok.decode(greedy(ck, tok, prompt))
    res["france_greedy"] = cont
    print("\nencode(%r) = %s" % (prompt, f_ids))
    print("greedy: %r -> %r" % (prompt, cont))
    caps = {}
    for country, city in mc.CAPITALS:
        out = tok.decode(greedy(ck, tok, "The capital of %s is" % country))
        caps[country] = (city, out, out.strip().rstrip(".") == city)
    res["capitals"] = {c: {"want": v[0], "got": v[1], "ok": v[2]} for c, v in caps.items()}
    n10 = sum(caps[c][2] for c in TEN)
    nall = sum(v[2] for v in caps.values())
    res["capitals_10"] = n10
    res["capitals_all"] = [nall, len(caps)]
    print("\n| country | capital | greedy continuation | right |")
    print("|---|---|---|---|")
    for c in TEN:
        print("| %s | %s | %r | %s |" % (c, caps[c][0], caps[c][1], "yes" if caps[c][2] else "NO"))
    print("10 listed: %d/10 right; all %d countries: %d right" % (n10, len(caps), nall))
    wrong = [c for c, v in caps.items() if not v[2]]
    if wrong:
        print("wrong: " + ", ".join("%s -> %r" % (c, caps[c][1]) for c in wrong))

    # 4. attention to " France"
    _, atts = forward(ck, f_ids)
    fpos = f_ids.index(ids[" France"])
    heads = []
    print("\nattention at the last position (%r) of %r:" % (tok.pieces[f_ids[-1]], prompt))
    for l, layer in enumerate(atts):
        row = []
        for h, a in enumerate(layer):
            last = a[-1]
            am = int(np.argmax(last))
            row.append("%s:%.2f" % (tok.pieces[f_ids[am]].strip() or "BOS" if am else "<s>", last[am]))
            if am == fpos:
                heads.append({"layer": l, "head": h, "weight": float(last[fpos])})
        print("  layer %d: %s" % (l, "  ".join(row)))
    res["france_heads"] = heads
    print("heads whose largest weight is on ' France' (layer, head, weight): %s"
          % ", ".join("(%d, %d, %.2f)" % (x["layer"], x["head"], x["weight"]) for x in heads))

    # 5. the window's default run, and 6. the spread of the distributions
    window_report(ck, tok, res)
    val = mc.make_documents(40, mc.SEED + 1)
    spread_report(ck, tok, res, val)

    ok = (max(res["weather_probs"][" nice"], res["weather_probs"][" warm"]) == float(max(p))
          and res["weather_probs"][" delicious"] < 0.01
          and cont.strip().startswith("Paris") and n10 >= 8 and heads
          and res["window"]["letters_inside_words"] <= 2)
    res["all_checks_pass"] = bool(ok)
    print("\nchecks (nice/warm greedy, delicious < 1%%, Paris, >= 8/10 capitals, "
          "a France head, at most 2 letters spelling words in the window's run): %s"
          % ("PASS" if ok else "FAIL"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
