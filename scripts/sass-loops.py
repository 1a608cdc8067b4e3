#!/usr/bin/env python3
"""Per-kernel SASS summary for comparing two compilers' code (bench/notes.md, issue 11).

    scripts/sass-loops.py FILE.cubin|FILE.sass KERNEL...

For each kernel: instructions (NOPs excluded) and, for each loop (a branch back to a lower
address), its instructions, opcode histogram and static stall cycles: the sum of the 4-bit stall
field (bits 105-108 of each 128-bit instruction, set by ptxas), a lower bound of the cycles one
warp needs per iteration when nothing else is ready. A .cubin is disassembled with the cuobjdump
on PATH or the one `cargo oxide setup` installed.
"""
import glob
import os
import re
import shutil
import subprocess
import sys


def sass_text(path):
    if not path.endswith(".cubin"):
        return open(path).read()
    tool = shutil.which("cuobjdump") or next(
        iter(sorted(glob.glob(os.path.expanduser("~/.cuda-oxide/cuda-*/nvidia/cu13/bin/cuobjdump")))), None)
    if tool is None:
        sys.exit("no cuobjdump: put the CUDA toolkit on PATH or run `cargo oxide setup`")
    return subprocess.run([tool, "-sass", path], check=True, capture_output=True, text=True).stdout


def instructions(text, kernel):
    """(address, text, stall cycles) of `kernel`'s instructions, NOPs excluded."""
    lines, out, inside = text.split("\n"), [], False
    for i, line in enumerate(lines):
        if "Function : " in line:
            inside = line.strip().endswith(": " + kernel)
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);\s+/\* (0x[0-9a-f]+) \*/", line)
        if not (inside and m) or m.group(2).startswith("NOP"):
            continue
        hi = re.search(r"/\* (0x[0-9a-f]+) \*/", lines[i + 1])
        word = (int(hi.group(1), 16) << 64 | int(m.group(3), 16)) if hi else 0
        out.append((int(m.group(1), 16), m.group(2).strip(), (word >> 105) & 0xF))
    return out


def opcode(text):
    words = text.split()
    op = words[1] if words[0].startswith("@") else words[0]
    return op.split(".")[0]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    text = sass_text(sys.argv[1])
    for kernel in sys.argv[2:]:
        ins = instructions(text, kernel)
        if not ins:
            print(f"{kernel}: not found")
            continue
        print(f"{kernel}: {len(ins)} instructions, {sum(s for _, _, s in ins)} stall cycles")
        for addr, body, _ in ins:
            m = re.search(r"BRA (?:`\(\.L_x_\d+\) )?0x([0-9a-f]+)", body)
            if not m or int(m.group(1), 16) >= addr:
                continue
            start = int(m.group(1), 16)
            loop = [x for x in ins if start <= x[0] <= addr]
            ops = {}
            for _, b, _ in loop:
                ops[opcode(b)] = ops.get(opcode(b), 0) + 1
            hist = " ".join(f"{k}:{v}" for k, v in sorted(ops.items(), key=lambda kv: -kv[1]))
            print(f"  loop {start:#x}-{addr:#x}: {len(loop)} instructions, "
                  f"{sum(s for _, _, s in loop)} stall cycles; {hist}")


if __name__ == "__main__":
    main()
