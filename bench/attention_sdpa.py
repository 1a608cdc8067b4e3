"""PyTorch's scaled_dot_product_attention, flash backend only, timed on the shapes examples/attention
times: bf16 Q, K, V of shape [batch, heads, seq, d] (contiguous), causal or not, default scale
1/sqrt(d). CUDA events around each call, 3 warm-ups, the median of `reps`.

    python3 bench/attention_sdpa.py [--reps 20] [--seqs 1024,4096,8192,16384]

Prints one `SDPA d=… causal=… seq=… batch=… heads=… ms=… tflops=…` line per shape;
bench/attention_compare.py imports `time_sdpa` to put it beside ours.
"""

import argparse
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention


def flops(batch, heads, seq, d, causal):
    """FlashAttention's count: 4 * b * h * s^2 * d, half of it when causal."""
    full = 4.0 * batch * heads * seq * seq * d
    return full / 2 if causal else full


def time_sdpa(batch, heads, seq, d, causal, reps=20):
    """Median milliseconds of one flash-backend SDPA forward on random bf16 inputs."""
    gen = torch.Generator(device="cuda").manual_seed(seq * 131 + d)
    shape = (batch, heads, seq, d)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), torch.no_grad():
        for _ in range(3):
            scaled_dot_product_attention(q, k, v, is_causal=causal)
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for start, stop in events:
            start.record()
            scaled_dot_product_attention(q, k, v, is_causal=causal)
            stop.record()
        torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seqs", default="1024,4096,8192,16384")
    args = ap.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    for d in (64, 128):
        heads = 2048 // d
        for seq in (int(s) for s in args.seqs.split(",")):
            batch = -(-16384 // seq)
            for causal in (False, True):
                ms = time_sdpa(batch, heads, seq, d, causal, args.reps)
                tf = flops(batch, heads, seq, d, causal) / ms / 1e9
                print(f"SDPA d={d} causal={int(causal)} seq={seq} batch={batch} heads={heads} ms={ms:.4f} tflops={tf:.1f}")


if __name__ == "__main__":
    main()
