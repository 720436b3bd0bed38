#!/usr/bin/env python3
"""Checks `cuobjdump -sass` text for register races with asynchronous wgmma (HGMMA).

An issued HGMMA reads its A operand registers (RS form) and owns its accumulator
registers until a `WARPGROUP.DEPBAR.LE gsb0, N` retires its commit group (the HGMMA marked
`gsb0` closes a group; the wait retires all but the newest N closed groups). The compiler
is not trusted to model that read (kernels_src/gemm_wgmma.cu, bench/NOTES.md), so this
follows the control flow of every function (branches and loop back-edges, to a fixed point)
with the list of pending groups and reports any other instruction that writes a pending A
register, or reads or writes a pending accumulator, on some path. Conservative: where paths
meet, their lists are merged group by group from the newest, and a list longer than MAXG
keeps its oldest groups as one (retired no earlier than the newest of them).

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


MAXG = 16
EMPTY = (frozenset(), frozenset())  # a group with no registers: (A registers, accumulators)


def merge(groups):
    return (frozenset().union(*(g[0] for g in groups)), frozenset().union(*(g[1] for g in groups)))


def join(x, y):
    """Where two paths meet: closed groups aligned from the newest, the open groups merged."""
    gx, gy = x[0], y[0]
    n = max(len(gx), len(gy))
    gx, gy = (EMPTY,) * (n - len(gx)) + gx, (EMPTY,) * (n - len(gy)) + gy
    return (tuple(merge((a, b)) for a, b in zip(gx, gy)), merge((x[1], y[1])))


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
    # state on entry: (closed groups oldest first, each (A regs, accumulators); the open group)
    state = [None] * len(ins)
    state[0] = ((), EMPTY)
    work, races = [0], set()
    while work:
        i = work.pop()
        groups, opened = state[i]
        _, pred, op, args = ins[i]
        regs = [int(r) for r in REG.findall(args)]
        pa = frozenset().union(opened[0], *(g[0] for g in groups))
        pacc = frozenset().union(opened[1], *(g[1] for g in groups))
        if op.startswith("HGMMA"):
            n = int(re.match(r"HGMMA\.64x(\d+)x", op).group(1))
            acc = frozenset(range(regs[0], regs[0] + n // 2))
            a = frozenset(range(regs[1], regs[1] + 4)) if len(regs) >= 3 else frozenset()  # RS: R acc, R a, gdesc
            opened = (opened[0] | a, opened[1] | acc)
            if re.search(r"\bgsb0\b", args):  # closes the commit group
                groups, opened = groups + (opened,), EMPTY
        elif op.startswith("WARPGROUP.DEPBAR"):
            m = re.search(r"gsb0,\s*0x([0-9a-f]+)", args)
            if m and not pred:
                groups = groups[max(0, len(groups) - int(m.group(1), 16)):]  # the newest N stay
        elif not op.startswith("WARPGROUP"):
            if regs and not no_dest(op) and set(range(regs[0], regs[0] + width(op))) & pa:
                races.add((ins[i][0], f"writes pending A register: {op} {args}"))
            if set(regs) & pacc:
                races.add((ins[i][0], f"touches pending accumulator: {op} {args}"))
        if len(groups) > MAXG:  # the oldest as one group: retired when the newest of them is
            old = groups[: len(groups) - MAXG + 1]
            groups = (merge(old),) + groups[len(groups) - MAXG + 1:]
        out = (groups, opened)
        for j in succ[i]:
            new = out if state[j] is None else join(state[j], out)
            if new != state[j]:
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
