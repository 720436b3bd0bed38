#!/usr/bin/env python3
"""Checks `cuobjdump -sass` text for register races with asynchronous wgmma (HGMMA).

An issued HGMMA reads its A operand registers (RS form) and owns its accumulator
registers until a `WARPGROUP.DEPBAR.LE gsb0, 0x0` retires it. The compiler does not model
that read (kernels_src/gemm_wgmma.cu, bench/NOTES.md), so this follows the control flow
of every function (branches and loop back-edges, to a fixed point) and reports any other
instruction that writes a pending A register, or reads or writes a pending accumulator,
on some path. Conservative: only wait_group 0 retires anything.

    python3 tools/check_wgmma_regs.py kernel.sass [more.sass ...]

Exit 0: HGMMAs found and no race; 1: a race; 2: no HGMMA in the input (nothing checked).
"""
import re
import sys

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
REG = re.compile(r"\bR(\d+)\b")


def parse(text):
    """-> {function: [(addr, pred, opcode, operands)]}"""
    funcs, cur = {}, None
    for raw in text.splitlines():
        if "Function :" in raw:
            cur = raw.split("Function :", 1)[1].strip()
            funcs[cur] = []
            continue
        m = LINE.search(raw)
        if not m or cur is None:
            continue
        body = m.group(2)
        pm = re.match(r"(@!?U?P\w+)\s+(.*)", body)
        pred, body = (pm.group(1), pm.group(2)) if pm else (None, body)
        op, _, args = body.partition(" ")
        funcs[cur].append((int(m.group(1), 16), pred, op, args))
    return funcs


def width(op):
    return 4 if ".128" in op else 2 if (".64" in op or ".WIDE" in op) else 1


def no_dest(op):
    return op.startswith(("ST", "RED", "BAR", "BRA", "EXIT", "RET", "WARPSYNC", "MEMBAR", "FENCE", "DEPBAR",
                          "LDGDEPBAR", "ARRIVES", "SYNCS", "NOP", "CALL", "ERRBAR", "CCTL", "UTMA", "ISETP",
                          "FSETP", "PLOP3", "R2UR", "WARPGROUP"))


def check(name, ins):
    addr_index = {a: i for i, (a, _, _, _) in enumerate(ins)}
    succ = []
    for i, (_, pred, op, args) in enumerate(ins):
        s = []
        if op.startswith("BRA"):
            t = re.search(r"0x([0-9a-f]+)", args)
            if t and int(t.group(1), 16) in addr_index:
                s.append(addr_index[int(t.group(1), 16)])
            if pred and i + 1 < len(ins):
                s.append(i + 1)
        elif op.startswith(("EXIT", "RET")) and not pred:
            pass
        elif i + 1 < len(ins):
            s.append(i + 1)
        succ.append(s)
    state = [None] * len(ins)  # (pending A regs, pending accumulators) on entry
    state[0] = (frozenset(), frozenset())
    work, races, hgmma = [0], set(), 0
    while work:
        i = work.pop()
        pa, pacc = state[i]
        _, pred, op, args = ins[i]
        regs = [int(r) for r in REG.findall(args)]
        if op.startswith("HGMMA"):
            n = int(re.match(r"HGMMA\.64x(\d+)x", op).group(1))
            acc = set(range(regs[0], regs[0] + n // 2))
            a = set(range(regs[1], regs[1] + 4)) if len(regs) >= 3 else set()  # RS form: R acc, R a, gdesc, R acc
            pa, pacc = pa | a, pacc | acc
        elif op.startswith("WARPGROUP.DEPBAR") and re.search(r"gsb0,\s*0x0\b", args) and not pred:
            pa, pacc = frozenset(), frozenset()
        elif not op.startswith("WARPGROUP"):
            if regs and not no_dest(op) and set(range(regs[0], regs[0] + width(op))) & pa:
                races.add((ins[i][0], f"writes pending A register: {op} {args}"))
            if set(regs) & pacc:
                races.add((ins[i][0], f"touches pending accumulator: {op} {args}"))
        out = (frozenset(pa), frozenset(pacc))
        for j in succ[i]:
            old = state[j]
            new = out if old is None else (old[0] | out[0], old[1] | out[1])
            if new != old:
                state[j] = new
                work.append(j)
    hgmma = sum(1 for _, _, op, _ in ins if op.startswith("HGMMA"))
    return hgmma, sorted(races)


def main():
    total, bad = 0, 0
    for path in sys.argv[1:]:
        for name, ins in parse(open(path).read()).items():
            if not ins:
                continue
            n, races = check(name, ins)
            if not n:
                continue
            total += n
            bad += len(races)
            print(f"{path}: {name}: {n} HGMMA, {len(races)} register races")
            for addr, what in races[:8]:
                print(f"  /*{addr:04x}*/ {what}")
    if total == 0:
        print("no HGMMA found: nothing was checked")
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
