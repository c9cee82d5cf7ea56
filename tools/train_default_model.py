#!/usr/bin/python3
"""Train kvscope's embedded default model from scratch and export it.

One command does the whole chain, deterministically:
  1. generate the corpus        (tools/make_corpus.py)
  2. learn the BPE tokenizer    (tools/kvtok.py), write kvscope-tiny.tok.bin
  3. tokenize with the port of run.c's encoder
  4. train a small Llama-style model on one CPU thread
  5. export kvscope-tiny.bin in llama2.c's "version 0" checkpoint format

Run from a clone with Debian's torch:
  /usr/bin/python3 tools/train_default_model.py
Outputs go to assets/models/ (override with --out-dir); scratch files and a
training log go to tools/_out/ (git-ignored).
"""

import argparse
import json
import math
import os
import struct
import sys
import time

# One thread everywhere (BLAS included), and keep glibc from handing freed
# memory back to the kernel after every step (that cost about a quarter of
# the run time in system calls).  These must be set before the process
# starts, so the script re-executes itself once with them.
_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
        "MALLOC_MMAP_THRESHOLD_": "4294967296",
        "MALLOC_TRIM_THRESHOLD_": "4294967296",
        "MALLOC_TOP_PAD_": "536870912"}
if __name__ == "__main__" and os.environ.get("KVSCOPE_TRAIN_ENV") != "1":
    _env = dict(os.environ, KVSCOPE_TRAIN_ENV="1", **_ENV)
    os.execve(sys.executable, [sys.executable] + sys.argv, _env)

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kvtok  # noqa: E402
import make_corpus  # noqa: E402

REPO = os.path.dirname(HERE)

# Model shape.  The vocabulary is a ceiling: the BPE stops merging once every
# word of the corpus is one piece (about 1,700 tokens), so the model has about
# 0.91 M parameters (3.7 MB as float32).
CONFIG = dict(dim=128, hidden_dim=344, n_layers=4, n_heads=8, n_kv_heads=2,
              vocab_size=2048, seq_len=256)
NORM_EPS = 1e-5
ROPE_THETA = 10000.0

# Training schedule.
TRAIN_DOCS = 200000
BATCH = 16
STEPS = 2500
LR_MAX = 3e-3
LR_MIN = 3e-4
WARMUP = 60
WEIGHT_DECAY = 0.1
GRAD_CLIP = 1.0
SEED = 1234

# Words that must each be a single token (with their leading space).
LESSON_WORDS = ["nice", "warm", "delicious", "Paris", "France", "capital",
                "weather", "Today", "is", "so", "The", "of"]


def must_have_words():
    words = (LESSON_WORDS + make_corpus.COUNTRIES + make_corpus.CITIES
             + make_corpus.WEATHER_WORDS + make_corpus.FOOD_WORDS
             + make_corpus.FOODS + make_corpus.corpus_stories.STORY_NAMES)
    out = []
    for w in words:
        if " " + w not in out:
            out.append(" " + w)
    return out


# ------------------------------------------------------------------ model

def rope_tables(head_size, seq_len):
    """cos/sin for pair j of a head (elements 2j, 2j+1), as run.c computes:
    freq = 1 / theta^(2j / head_size), angle = pos * freq."""
    j = torch.arange(0, head_size, 2, dtype=torch.float64)
    freq = 1.0 / (ROPE_THETA ** (j / head_size))
    ang = torch.outer(torch.arange(seq_len, dtype=torch.float64), freq)
    return torch.cos(ang).float(), torch.sin(ang).float()


def apply_rope(x, cos, sin):
    # x: (B, T, heads, head_size); rotate adjacent pairs (x[2j], x[2j+1])
    B, T, Hh, hs = x.shape
    xp = x.reshape(B, T, Hh, hs // 2, 2)
    x0, x1 = xp[..., 0], xp[..., 1]
    c = cos[:T].view(1, T, 1, hs // 2)
    s = sin[:T].view(1, T, 1, hs // 2)
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).reshape(B, T, Hh, hs)


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + NORM_EPS) * self.weight


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, hd = c["dim"], c["hidden_dim"]
        self.n_heads, self.n_kv = c["n_heads"], c["n_kv_heads"]
        self.hs = d // self.n_heads
        kv_dim = self.hs * self.n_kv
        self.attention_norm = RMSNorm(d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, kv_dim, bias=False)
        self.wv = nn.Linear(d, kv_dim, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.ffn_norm = RMSNorm(d)
        self.w1 = nn.Linear(d, hd, bias=False)
        self.w2 = nn.Linear(hd, d, bias=False)
        self.w3 = nn.Linear(d, hd, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, D = x.shape
        h = self.attention_norm(x)
        q = apply_rope(self.wq(h).view(B, T, self.n_heads, self.hs), cos, sin)
        k = apply_rope(self.wk(h).view(B, T, self.n_kv, self.hs), cos, sin)
        v = self.wv(h).view(B, T, self.n_kv, self.hs)
        rep = self.n_heads // self.n_kv
        # query head i uses kv head i // rep
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.hs) + mask[:T, :T]
        o = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
        x = x + self.wo(o)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.tok_embeddings = nn.Embedding(c["vocab_size"], c["dim"])
        self.layers = nn.ModuleList(Block(c) for _ in range(c["n_layers"]))
        self.norm = RMSNorm(c["dim"])
        cos, sin = rope_tables(c["dim"] // c["n_heads"], c["seq_len"])
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        mask = torch.full((c["seq_len"], c["seq_len"]), float("-inf")).triu(1)
        self.register_buffer("mask", mask, persistent=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if name.endswith("wo.weight") or name.endswith("w2.weight"):
                    std = 0.02 / math.sqrt(2 * c["n_layers"])
                nn.init.normal_(p, mean=0.0, std=std)

    def forward(self, idx, targets=None):
        x = self.tok_embeddings(idx)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin, self.mask)
        x = self.norm(x)
        logits = x @ self.tok_embeddings.weight.t()  # shared classifier
        if targets is None:
            return logits
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


# ------------------------------------------------------------------ data

def pack_windows(docs, seq_len):
    """Each window has seq_len + 1 tokens and starts with the BOS of a
    document, so position 0 always holds BOS as it does in the app.  A
    document cut at the end of one window is seen whole in the next."""
    stream = np.concatenate([np.asarray(d, dtype=np.int64) for d in docs])
    starts = np.flatnonzero(stream == kvtok.BOS)
    windows = []
    n = seq_len + 1
    i = 0
    while i < len(starts) and starts[i] + n <= len(stream):
        s = starts[i]
        windows.append(stream[s:s + n])
        j = int(np.searchsorted(starts, s + n))  # first start past the window
        # restart at the last document that began inside this window
        i = j - 1 if j - 1 > i else j
    return np.stack(windows)


# ------------------------------------------------------------------ export

def export_llama2c(model, path):
    c = model.c
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    L = c["n_layers"]

    def stack(name):
        return np.stack([sd["layers.%d.%s" % (i, name)] for i in range(L)])

    hs = c["dim"] // c["n_heads"]
    cos, sin = rope_tables(hs, c["seq_len"])
    header = struct.pack("<7i", c["dim"], c["hidden_dim"], c["n_layers"],
                         c["n_heads"], c["n_kv_heads"], c["vocab_size"],
                         c["seq_len"])  # positive vocab: shared classifier
    parts = [sd["tok_embeddings.weight"], stack("attention_norm.weight"),
             stack("wq.weight"), stack("wk.weight"), stack("wv.weight"),
             stack("wo.weight"), stack("ffn_norm.weight"), stack("w1.weight"),
             stack("w2.weight"), stack("w3.weight"), sd["norm.weight"],
             cos.numpy(), sin.numpy()]
    with open(path, "wb") as f:
        f.write(header)
        for p in parts:
            f.write(np.ascontiguousarray(p, dtype="<f4").tobytes())


# ------------------------------------------------------------------ main

def lr_at(step):
    if step < WARMUP:
        return LR_MAX * (step + 1) / WARMUP
    t = (step - WARMUP) / max(1, STEPS - WARMUP)
    return LR_MIN + 0.5 * (LR_MAX - LR_MIN) * (1 + math.cos(math.pi * t))


@torch.no_grad()
def eval_loss(model, windows, batch=BATCH):
    model.eval()
    tot, n = 0.0, 0
    for i in range(0, len(windows), batch):
        w = torch.from_numpy(windows[i:i + batch])
        loss = model(w[:, :-1], w[:, 1:])
        tot += loss.item() * len(w)
        n += len(w)
    model.train()
    return tot / n


def main():
    global STEPS
    ap = argparse.ArgumentParser(description="train kvscope's default model")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "assets", "models"))
    ap.add_argument("--work-dir", default=os.path.join(HERE, "_out"))
    ap.add_argument("--steps", type=int, default=STEPS)
    args = ap.parse_args()
    STEPS = args.steps

    t0 = time.time()
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    os.makedirs(args.out_dir, exist_ok=True)
    os.makedirs(args.work_dir, exist_ok=True)
    c = dict(CONFIG)

    # 1. corpus
    train_docs = make_corpus.make_documents(TRAIN_DOCS, make_corpus.SEED)
    val_docs = make_corpus.make_documents(TRAIN_DOCS // 50, make_corpus.SEED + 1)
    make_corpus.heldout_check(train_docs + val_docs)
    print("corpus: %d train docs, %d val docs, %d chars"
          % (len(train_docs), len(val_docs), sum(map(len, train_docs))), flush=True)

    # 2. tokenizer
    pieces, scores = kvtok.train_bpe(train_docs, c["vocab_size"], must_have_words())
    assert len(pieces) <= c["vocab_size"]
    c["vocab_size"] = len(pieces)
    tok_path = os.path.join(args.out_dir, "kvscope-tiny.tok.bin")
    kvtok.write_tokenizer(tok_path, pieces, scores)
    tok = kvtok.Tokenizer.load(tok_path)  # use what was written
    for w in must_have_words():
        ids = tok.encode(w[1:], bos=False)  # dummy prefix gives the space
        assert len(ids) == 1, "%r is not a single token: %r" % (w, ids)
    # every word of the corpus, with its leading space or after a quote, is
    # one token: the model writes words, never a word letter by letter
    chunks = set()
    for d in train_docs[:20000]:
        chunks.update(kvtok._chunks(d))
    split = sorted(ch for ch in chunks if len(tok._merge(tok._initial(ch))) != 1)
    assert not split, "corpus words that are not single tokens: %r" % split[:20]
    kvtok.self_check(tok, train_docs[:3000] + val_docs[:500])
    print("tokenizer: %d pieces -> %s" % (len(pieces), tok_path), flush=True)

    # 3. tokenize and pack
    train_ids = [tok.encode_fast(d) for d in train_docs]
    val_ids = [tok.encode_fast(d) for d in val_docs]
    train_w = pack_windows(train_ids, c["seq_len"])
    val_w = pack_windows(val_ids, c["seq_len"])[:64]
    n_tok = sum(map(len, train_ids))
    print("tokens: %d train in %d windows, %d val windows; prep %.1fs"
          % (n_tok, len(train_w), len(val_w), time.time() - t0), flush=True)

    # 4. train
    model = Llama(c)
    n_params = sum(p.numel() for p in model.parameters())
    print("model: %s, %d parameters" % (c, n_params), flush=True)
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=LR_MAX, betas=(0.9, 0.95), eps=1e-8)
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(train_w))
    need = STEPS * BATCH
    while len(order) < need:
        order = np.concatenate([order, rng.permutation(len(train_w))])
    log = []
    t_train = time.time()
    cpu_train = time.process_time()
    ema = None
    for step in range(STEPS):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        batch = torch.from_numpy(train_w[order[step * BATCH:(step + 1) * BATCH]])
        loss = model(batch[:, :-1], batch[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
        opt.step()
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        if step % 50 == 0 or step == STEPS - 1:
            entry = {"step": step, "loss": loss.item(), "loss_ema": ema,
                     "lr": lr_at(step), "elapsed_s": time.time() - t_train,
                     "cpu_s": time.process_time() - cpu_train}
            if step % 250 == 0 or step == STEPS - 1:
                entry["val_loss"] = eval_loss(model, val_w)
            log.append(entry)
            print(json.dumps(entry), flush=True)
    train_s = time.time() - t_train
    train_cpu_s = time.process_time() - cpu_train
    final_train = eval_loss(model, train_w[order[:64]])
    final_val = eval_loss(model, val_w)

    # 5. export
    model_path = os.path.join(args.out_dir, "kvscope-tiny.bin")
    export_llama2c(model, model_path)
    # read the file back with the evaluator's independent numpy forward pass
    # and compare its logits with the torch model's
    import eval_default_model as ev
    ck = ev.Checkpoint(model_path)
    sample = tok.encode_fast(val_docs[0])[:40]
    np_logits, _ = ev.forward(ck, sample)
    with torch.no_grad():
        model.eval()
        th_logits = model(torch.tensor([sample]))[0].double().numpy()
    diff = float(np.abs(np_logits - th_logits).max())
    print("export check: max |numpy - torch| logit difference %.2e" % diff)
    assert diff < 1e-3, "exported model does not match the trained one"
    summary = {"config": c, "params": n_params, "steps": STEPS, "batch": BATCH,
               "train_tokens_total": n_tok, "train_windows": int(len(train_w)),
               "tokens_seen": STEPS * BATCH * c["seq_len"],
               "final_train_loss": final_train, "final_val_loss": final_val,
               "train_seconds": train_s, "train_cpu_seconds": train_cpu_s,
               "total_seconds": time.time() - t0, "total_cpu_seconds": time.process_time(),
               "model_bytes": os.path.getsize(model_path),
               "tokenizer_bytes": os.path.getsize(tok_path), "log": log}
    with open(os.path.join(args.work_dir, "train_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("final train loss %.4f, val loss %.4f; training %.0fs (%.0fs of CPU), total %.0fs"
          % (final_train, final_val, train_s, train_cpu_s, time.time() - t0))
    print("wrote %s (%d bytes), %s (%d bytes)"
          % (model_path, summary["model_bytes"], tok_path, summary["tokenizer_bytes"]))


if __name__ == "__main__":
    main()
