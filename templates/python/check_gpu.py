#!/usr/bin/env python3
"""GPU check of the {{crate_name}} extension against PyTorch.

Random inputs, outputs poisoned with NaN first, compared with torch's own op; the exceptions
bad arguments raise; ordering on torch's current stream; CuPy arrays (through
__cuda_array_interface__) when CuPy is installed; then the call overhead next to a trivial
torch op's. Prints PASS/FAIL per check and exits non-zero on any failure.

    cargo oxide build --release
    PYTHONPATH=target/oxide/release/python python3 check_gpu.py
"""
import importlib
import sys
import time

import torch

MODULE = "{{crate_name}}"
ext = importlib.import_module(MODULE)
failed = 0


def check(name, fn):
    global failed
    try:
        fn()
        print(f"PASS {MODULE}/{name}")
    except Exception as e:  # noqa: BLE001 - report every kind of failure the same way
        failed += 1
        print(f"FAIL {MODULE}/{name}: {type(e).__name__}: {e}")


def close(got, want):
    # The GPU may fuse x + alpha * y into one FMA: within an ulp or two of torch's result.
    if not torch.allclose(got, want, rtol=1e-6, atol=1e-6):
        bad = (got - want).abs().argmax().item()
        raise AssertionError(f"max error at {bad}: got {got.flatten()[bad].item()}, want {want.flatten()[bad].item()}")


def results():
    gen = torch.Generator(device="cuda").manual_seed(int(time.time()))
    for shape in [(1,), (1_000_003,), (64, 257), (3, 0)]:
        x = torch.randn(shape, device="cuda", generator=gen)
        y = torch.randn(shape, device="cuda", generator=gen)
        alpha = torch.randn((), generator=gen, device="cuda").item()
        out = torch.full(shape, float("nan"), device="cuda")
        ext.scaled_add(x, y, alpha, out)
        torch.cuda.synchronize()
        close(out, torch.add(x, y, alpha=alpha))


def raises(kind, text, fn):
    try:
        fn()
    except kind as e:
        if text not in str(e):
            raise AssertionError(f"{kind.__name__} without {text!r}: {e}") from e
        return
    raise AssertionError(f"no {kind.__name__} ({text!r})")


def errors():
    x = torch.randn(1024, device="cuda")
    out = torch.empty_like(x)
    raises(TypeError, "x.cuda()", lambda: ext.scaled_add(x.cpu(), x, 1.0, out))
    raises(TypeError, "torch.float32", lambda: ext.scaled_add(x.double(), x, 1.0, out))
    raises(TypeError, "not a CUDA array", lambda: ext.scaled_add([1.0], x, 1.0, out))
    m = torch.randn(32, 64, device="cuda")
    raises(ValueError, "contiguous()", lambda: ext.scaled_add(m.t(), m.t(), 1.0, torch.empty(64, 32, device="cuda")))
    raises(ValueError, "same shape", lambda: ext.scaled_add(x, x[:1000], 1.0, out))
    raises(ValueError, "requires grad", lambda: ext.scaled_add(x, x, 1.0, torch.zeros(1024, device="cuda", requires_grad=True)))
    if torch.cuda.device_count() > 1:
        raises(ValueError, "cuda:1", lambda: ext.scaled_add(x, x.to("cuda:1"), 1.0, out))


def current_stream():
    # x is made by a matmul queued on a side stream; the extension's kernel, called at once on
    # that stream, must run after it (on another stream it would read x before it is written).
    s = torch.cuda.Stream()
    a = torch.randn(4096, 4096, device="cuda")
    y = torch.randn(4096 * 4096, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        x = (a @ a).flatten()
        out = torch.full_like(x, float("nan"))
        ext.scaled_add(x, y, 0.25, out)
        want = torch.add(x, y, alpha=0.25)
    s.synchronize()
    close(out, want)


def cupy_arrays():
    try:
        import cupy
    except ImportError:
        print(f"     {MODULE}/cupy: CuPy is not installed, skipped")
        return
    x = cupy.random.standard_normal(100_003, dtype=cupy.float32)
    y = cupy.random.standard_normal(100_003, dtype=cupy.float32)
    out = cupy.full(100_003, cupy.nan, dtype=cupy.float32)
    ext.scaled_add(x, y, 1.5, out)  # __cuda_array_interface__ v3, CuPy's stream waited for
    cupy.cuda.get_current_stream().synchronize()
    torch.cuda.synchronize()
    close(torch.as_tensor(out, device="cuda"), torch.as_tensor(x, device="cuda") + 1.5 * torch.as_tensor(y, device="cuda"))
    raises(TypeError, "float32", lambda: ext.scaled_add(x.astype(cupy.float64), y, 1.0, out))


def overhead():
    # Host time per call on small tensors (the GPU work is tiny, so this is the call's cost),
    # next to torch's own add into an existing tensor.
    x = torch.randn(1024, device="cuda")
    y = torch.randn(1024, device="cuda")
    out = torch.empty_like(x)
    calls = 20_000

    def per_call(fn):
        for _ in range(1000):
            fn()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / calls * 1e6

    ours = per_call(lambda: ext.scaled_add(x, y, 0.5, out))
    theirs = per_call(lambda: torch.add(x, y, alpha=0.5, out=out))
    print(f"     call overhead (1024 float32, {calls} calls, µs per call):")
    print(f"     | {MODULE}.scaled_add | {ours:8.2f} |")
    print(f"     | torch.add(out=)     | {theirs:8.2f} |")
    print(f"     | ratio               | {ours / theirs:8.2f} |")


print(f"{MODULE} from {ext.__file__}; torch {torch.__version__}, {torch.cuda.get_device_name()}")
check("results", results)
check("errors", errors)
check("current-stream", current_stream)
check("cupy", cupy_arrays)
check("overhead", overhead)
print(f"{MODULE}: {'all passed' if failed == 0 else f'{failed} failed'}")
sys.exit(1 if failed else 0)
