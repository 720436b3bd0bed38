#!/usr/bin/env python3
"""Summarise probe 6's timeline of the resident token-producer GEMM tile (gemm_wgmma_ws.cu, -DNVF_WSPROBE=6).

    python3 tools/ws_trace.py TRACE[.gz]

TRACE is what `PROFILE_TRACE=FILE tools/profile_kernels` writes: 8 int32 (G, M, N, K, SMs, consumer
warpgroups, steps, warps a warpgroup), then u32 [256 CTAs][warpgroups][warps][steps][4]: %clock values of lane
0 of each consumer warp at each step: c0 start, c1 its weights widened, c2 its slot's tokens in (the next loads
issued, and the full-slot wait where the step opens a slot), c3 its MMAs issued (the warpgroup-wide wgmma
instructions: they wait for the warpgroup's slowest warp). Prints the median and 10th / 90th percentiles
(cycles) of each part of a step inside a unit, a unit's last step, how far apart a warpgroup's four warps reach
the MMAs, which warp (sub-partition) is last, and how far apart the four warpgroups issue the same step.
"""
import gzip, sys
import numpy as np

raw = (gzip.open if sys.argv[1].endswith(".gz") else open)(sys.argv[1], "rb").read()
G, M, N, K, sms, wgs, steps, warps = (int(x) for x in np.frombuffer(raw[:32], dtype=np.int32))
tr = np.frombuffer(raw[32:], dtype=np.uint32).reshape(256, wgs, warps, steps, 4).astype(np.int64)
nsteps = (K + 127) // 128
used = [c for c in range(256) if tr[c, 0, 0, 0, 3] != 0]
print(f"G {G} M {M} N {N} K {K}: {nsteps} steps a unit, {len(used)} CTAs traced, warp lane 0s, cycles")
W = 1 << 32
def d(a, b):  # b - a on a 32-bit clock, as arrays
    return (b - a) % W
inside = {"widen (from the step's start)": [], "next loads + slot wait": [], "MMA issue (warpgroup)": [],
          "to the next start": [], "period": []}
last = {k: [] for k in inside}
arrive_spread, slowest, wg_spread = [], np.zeros(warps, dtype=np.int64), []
slow_widen, fast_widen = [], []
for c in used:
    n = int(min(np.count_nonzero(tr[c, w, v, :, 3]) for w in range(wgs) for v in range(warps)))
    t = tr[c, :, :, :n]  # [wg][warp][step][4]
    for s in range(n - 1):
        dst = last if s % nsteps == nsteps - 1 else inside
        dst["widen (from the step's start)"].extend(d(t[:, :, s, 0], t[:, :, s, 1]).ravel())
        dst["next loads + slot wait"].extend(d(t[:, :, s, 1], t[:, :, s, 2]).ravel())
        dst["MMA issue (warpgroup)"].extend(d(t[:, :, s, 2], t[:, :, s, 3]).ravel())
        dst["to the next start"].extend(d(t[:, :, s, 3], t[:, :, s + 1, 0]).ravel())
        dst["period"].extend(d(t[:, :, s, 0], t[:, :, s + 1, 0]).ravel())
    for s in range(n):
        for w in range(wgs):
            ready = t[w, :, s, 2]  # each warp at the MMAs
            base = ready.min()
            rel = d(base, ready)
            rel = np.where(rel < W // 2, rel, 0)
            arrive_spread.append(rel.max())
            k = int(rel.argmax())
            slowest[k] += 1
            wd = d(t[w, :, s, 0], t[w, :, s, 1])
            slow_widen.append(wd[k])
            fast_widen.append(np.delete(wd, k).mean())
        iss = t[:, 0, s, 3]
        rel = d(iss.min(), iss)
        wg_spread.append(np.where(rel < W // 2, rel, 0).max())
def q(v):
    a = np.array(v)
    return f"median {np.median(a):7.0f}  p10 {np.percentile(a, 10):7.0f}  p90 {np.percentile(a, 90):7.0f}"
def show(title, dd):
    print(title)
    for k, v in dd.items():
        if v:
            print(f"  {k:32s} {q(v)}  (n {len(v)})")
show("steps inside a unit", inside)
show("a unit's last step ('to the next start': its last MMAs' wait, the epilogue, the next unit's setup)", last)
print(f"a warpgroup's four warps reach the MMAs over: {q(arrive_spread)}")
print(f"  the last of them, its widening: {q(slow_widen)}; the other three's: {q(fast_widen)}")
print(f"  which warp is last (0-3, one per sub-partition): {slowest.tolist()}")
print(f"the four warpgroups issue the same step's MMAs over: {q(wg_spread)}")
