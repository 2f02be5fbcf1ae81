#!/usr/bin/env python3
"""PyTorch twin of examples/gpt (train_austen): the same baby GPT and training step.

Model (as examples/gpt/gpt.c): token + position embeddings, n_layer pre-norm
blocks (LayerNorm with a gain and no bias -> causal self-attention with one
fused qkv projection -> residual; LayerNorm -> Linear 4C -> GELU (tanh) ->
Linear C -> residual), a final LayerNorm and an LM head tied to the token
embedding; no biases anywhere. Training: AdamW (betas 0.9/0.99, eps 1e-8,
weight decay 0.1 on the matrices only), gradient clipping at norm 1, warm-up
then cosine learning rate, batches of 12 x 64 random windows of the text.
PyTorch 1.13 has no fused CPU attention: softmax(q k^T / sqrt(D) + mask) v.

--precision bf16 runs forward and loss under torch.autocast("cpu", bfloat16)
(oneDNN's bf16 GEMMs, on AMX where the CPU has it); fp32 is plain float.
Run it with OPENBLAS_NUM_THREADS=1: OpenBLAS threads under torch's own
threads oversubscribe the cores (2.6x slower on 2 cores).

Prints tokens/s (wall clock) per logging interval and their median, and
tokens per CPU second of the steps (all threads; steadier on a loaded machine):
    python3 gpt_torch.py [--threads N] [--iters N] [--data FILE] [--log-interval N] [--precision fp32|bf16]
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    """LayerNorm with a gain and no bias (as gpt.c: norm(x) * w)."""

    def __init__(self, c):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(c))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, None, 1e-5)


class Block(nn.Module):
    def __init__(self, c, n_head):
        super().__init__()
        self.n_head = n_head
        self.ln1 = LayerNorm(c)
        self.qkv = nn.Linear(c, 3 * c, bias=False)
        self.proj = nn.Linear(c, c, bias=False)
        self.ln2 = LayerNorm(c)
        self.fc = nn.Linear(c, 4 * c, bias=False)
        self.mlp_proj = nn.Linear(4 * c, c, bias=False)

    def attention(self, x, mask):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1))) + mask[:T, :T]
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))

    def forward(self, x, mask):
        x = x + self.attention(self.ln1(x), mask)
        return x + self.mlp_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab, ctx, c, n_layer, n_head):
        super().__init__()
        self.wte = nn.Embedding(vocab, c)
        self.wpe = nn.Embedding(ctx, c)
        self.blocks = nn.ModuleList(Block(c, n_head) for _ in range(n_layer))
        self.lnf = LayerNorm(c)
        self.register_buffer("mask", torch.full((ctx, ctx), float("-inf")).triu(1))
        for name, p in self.named_parameters():  # gpt.c's initialisation
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for b in self.blocks:
            x = b(x, self.mask)
        logits = self.lnf(x) @ self.wte.weight.t()  # tied LM head
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def lr_at(step, lr, min_lr, warmup, decay):
    if step < warmup:
        return lr * (step + 1) / (warmup + 1)
    if step > decay:
        return min_lr
    ratio = (step - warmup) / max(decay - warmup, 1)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--data", default="data/austen.txt")
    ap.add_argument("--log-interval", type=int, default=20)
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--ctx", type=int, default=64)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--embd", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1337)
    text = open(a.data, "rb").read()
    vocab = sorted(set(text))
    lut = torch.zeros(256, dtype=torch.long)
    lut[torch.tensor(vocab)] = torch.arange(len(vocab))
    data = lut[torch.frombuffer(bytearray(text), dtype=torch.uint8).long()]
    n_train = int(0.9 * len(data))
    model = GPT(len(vocab), a.ctx, a.embd, a.layers, a.heads)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99), eps=1e-8)
    print(f"torch {torch.__version__} {a.precision}, {torch.get_num_threads()} thread(s), vocabulary {len(vocab)}, "
          f"{sum(p.numel() for p in model.parameters())} weights, batch {a.batch} x {a.ctx}")
    rates, t_int, tokens_int, cpu_steps = [], 0.0, 0, 0.0
    for step in range(a.iters):
        ix = torch.randint(n_train - a.ctx - 1, (a.batch,))
        x = torch.stack([data[i:i + a.ctx] for i in ix])
        y = torch.stack([data[i + 1:i + 1 + a.ctx] for i in ix])
        t0, c0 = time.perf_counter(), time.process_time()
        for g in opt.param_groups:
            g["lr"] = lr_at(step, 1e-3, 1e-4, 100, 2000)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        t_int += time.perf_counter() - t0
        cpu_steps += time.process_time() - c0
        tokens_int += a.batch * a.ctx
        if (step + 1) % a.log_interval == 0:
            rates.append(tokens_int / t_int)
            print(f"step {step + 1}/{a.iters} | loss {loss.item():.4f} | {rates[-1]:.0f} tokens/s")
            t_int, tokens_int = 0.0, 0
    if rates:
        print(f"median {statistics.median(rates):.0f} tokens/s in training steps")
    print(f"cpu {a.iters * a.batch * a.ctx / max(cpu_steps, 1e-9):.0f} tokens per CPU second in training steps")


if __name__ == "__main__":
    main()
