"""examples/attention against PyTorch SDPA (flash backend) in one GPU run: runs our binary (which
checks every shape against a float64 reference, then times it), then times SDPA on the same
shapes in this process, and prints one table with the ratio.

    python3 bench/attention_compare.py PATH/TO/attention [--reps 20] [--seqs 1024,4096,8192,16384]
        [--ours-args "--static"]

Exit status: our binary's when it failed (a failed check is 1), else 0. Ratio = SDPA's time / ours
(above 1: ours is faster).
"""

import argparse
import re
import subprocess
import sys

from attention_sdpa import flops, time_sdpa


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seqs", default="1024,4096,8192,16384")
    ap.add_argument("--ours-args", default="", help="more arguments for our binary, e.g. --static")
    args = ap.parse_args()
    ours = {}
    cmd = [args.binary, "--reps", str(args.reps), "--seqs", args.seqs] + args.ours_args.split()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:
        print(line, end="", flush=True)
        m = re.match(r"BENCH d=(\d+) causal=(\d) seq=(\d+) batch=(\d+) heads=(\d+) pp=(\d) ms=([\d.]+)", line)
        if m:
            d, causal, seq, batch, heads, pp = (int(x) for x in m.groups()[:6])
            ours.setdefault((d, causal, seq, batch, heads), {})[pp] = float(m.group(7))
    if proc.wait() != 0:
        print(f"attention exited with {proc.returncode}; SDPA not timed")
        sys.exit(proc.returncode)
    import torch

    print(f"\nSDPA: torch {torch.__version__}, flash backend, on {torch.cuda.get_device_name()}")
    rows = []
    for (d, causal, seq, batch, heads), by_pp in sorted(ours.items()):
        theirs = time_sdpa(batch, heads, seq, d, bool(causal), args.reps)
        f = flops(batch, heads, seq, d, bool(causal))
        rows.append((d, causal, seq, batch, heads, by_pp.get(0), by_pp.get(1), theirs, f))
    tf = lambda f, ms: f"{f / ms / 1e9:6.1f}" if ms else "     -"
    ratio = lambda theirs, ms: f"{theirs / ms:5.2f}" if ms else "    -"
    print(f"\n{'d':>4} {'causal':>6} {'seq':>6} {'b x h':>7} | {'pp=0 TF/s':>9} {'pp=1 TF/s':>9} | {'SDPA ms':>8} {'TF/s':>6} | ratio pp=0  pp=1")
    for d, causal, seq, batch, heads, ms0, ms1, sms, f in rows:
        print(
            f"{d:>4} {causal:>6} {seq:>6} {batch:>3}x{heads:<3} | {tf(f, ms0):>9} {tf(f, ms1):>9} | {sms:>8.3f} {tf(f, sms)} |"
            f"      {ratio(sms, ms0)} {ratio(sms, ms1)}"
        )
    print(f"(median of {args.reps}; ratio = SDPA time / ours; pp=1: the ping-pong kernels)")


if __name__ == "__main__":
    main()
