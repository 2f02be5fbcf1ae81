#!/usr/bin/env python3
"""PyTorch baseline for bench_attention: the same shapes, float32, CPU.

PyTorch 1.13 (Debian's python3-torch) has no fused CPU attention, so its
attention is matmul -> softmax -> matmul, differentiated by autograd. Flops are
counted as in bench_attention (forward 4*N*M*D*H, backward 10*N*M*D*H, halved
for causal). Prints one line per shape: "torch D N M H Hkv mask fwd_gflops bwd_gflops".

    python3 bench_torch.py [threads] [reps] [n_max]   (n_max: skip shapes with N > n_max)
"""
import statistics
import sys
import time

import torch

# the shapes of bench_attention, in its order: H = 8, N = M in {1024, 2048}, D in {64, 128}, dense and causal
SHAPES = [(d, n, n, 8, 8, causal) for n in (1024, 2048) for d in (64, 128) for causal in (False, True)]


def attention(q, k, v, mask, scale):
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if mask is not None:
        s = s + mask
    return torch.matmul(torch.softmax(s, dim=-1), v)


def median_time(fn, reps, setup=None):
    """Median seconds of fn(setup()) over reps runs; setup is not timed."""
    arg = setup() if setup else None
    fn(arg)  # warm-up: first calls allocate and pick kernels
    times = []
    for _ in range(reps):
        arg = setup() if setup else None
        t0 = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else torch.get_num_threads()
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    n_max = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 30
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    for d, n, m, h, hkv, causal in SHAPES:
        if n > n_max:
            continue
        q = torch.rand(1, h, n, d) * 2 - 1
        k = (torch.rand(1, hkv, m, d) * 2 - 1).repeat_interleave(h // hkv, dim=1)  # GQA: contiguous groups
        v = (torch.rand(1, hkv, m, d) * 2 - 1).repeat_interleave(h // hkv, dim=1)
        q.requires_grad_(); k.requires_grad_(); v.requires_grad_()
        mask = torch.triu(torch.full((n, m), float("-inf")), diagonal=1 + m - n) if causal else None
        scale = d ** -0.5
        grad = torch.rand(1, h, n, d)
        with torch.no_grad():
            t_fwd = median_time(lambda _: attention(q, k, v, mask, scale), reps)
        # backward alone: the forward that builds autograd's graph is not timed
        t_bwd = median_time(lambda out: out.backward(grad), reps, setup=lambda: attention(q, k, v, mask, scale))
        f = 0.5 if causal else 1.0
        fwd_flops = 4.0 * n * m * d * h * f
        bwd_flops = 10.0 * n * m * d * h * f
        print(f"torch {d} {n} {m} {h} {hkv} {'causal' if causal else 'full'} {fwd_flops / t_fwd / 1e9:.1f} {bwd_flops / t_bwd / 1e9:.1f}")


if __name__ == "__main__":
    main()
