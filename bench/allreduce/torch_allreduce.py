"""PyTorch's side of bench/allreduce: torch.distributed.all_reduce (NCCL, sum, float32, in place)
with one process per GPU, timed like the Rust side (CUDA events around `iters` calls after
`warmup`, the slowest rank's mean). Prints one JSON object per line to stdout: first
{"torch": version, "nccl": version, "gpus": n}, then {"bytes": b, "us": t, "ok": bool} per size.
Started by oxide-bench-allreduce (the same job); runs alone too:
    python3 torch_allreduce.py --devices 2 --sizes 1048576,1073741824 --iters 20 --warmup 5
"""
import argparse
import json
import os
import queue
import socket
import sys

# NVLink multicast off, before torch (and NCCL) load: on shared multi-GPU hosts a program using it
# can take the host's GPUs out of service.
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402


def worker(rank, n, port, sizes, iters, warmup, out):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n,
                            device_id=torch.device("cuda", rank))
    results = []
    for size in sizes:
        count = size // 4
        x = torch.full((count,), float(rank + 1), dtype=torch.float32, device="cuda")
        dist.all_reduce(x)
        torch.cuda.synchronize()
        want = n * (n + 1) / 2
        probe = torch.cat([x[:4096], x[count // 2:count // 2 + 4096], x[-4096:]])
        ok = bool(torch.all(probe == want).item())
        for _ in range(warmup):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dist.barrier()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            dist.all_reduce(x)
        end.record()
        torch.cuda.synchronize()
        us = torch.tensor([start.elapsed_time(end) * 1000.0 / iters], device="cuda")
        oks = torch.tensor([0.0 if ok else 1.0], device="cuda")
        dist.all_reduce(us, op=dist.ReduceOp.MAX)
        dist.all_reduce(oks, op=dist.ReduceOp.MAX)
        results.append({"bytes": size, "us": us.item(), "ok": oks.item() == 0.0})
        del x
        torch.cuda.empty_cache()
    if rank == 0:
        out.put(results)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, required=True)
    parser.add_argument("--sizes", required=True, help="bytes, comma-separated")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if torch.cuda.device_count() < args.devices:
        sys.exit(f"torch sees {torch.cuda.device_count()} GPU(s), {args.devices} asked for")
    version = torch.cuda.nccl.version()  # a tuple in recent releases, an int (2xxyy) in old ones
    nccl = ".".join(str(v) for v in version) if isinstance(version, tuple) else str(version)
    print(json.dumps({"torch": torch.__version__, "nccl": nccl, "gpus": args.devices}), flush=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, args.devices, port, sizes, args.iters, args.warmup, out))
             for r in range(args.devices)]
    for p in procs:
        p.start()
    results = None
    while results is None:
        try:
            results = out.get(timeout=5)
        except queue.Empty:
            failed = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            if failed:
                for p in procs:
                    p.kill()
                sys.exit(f"a torch worker exited with {failed[0]}")
    for p in procs:
        p.join()
        if p.exitcode != 0:
            sys.exit(f"a torch worker exited with {p.exitcode}")
    for r in results:
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
