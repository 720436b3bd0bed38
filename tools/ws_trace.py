#!/usr/bin/env python3
"""Summarise probe 6's timeline of the resident 32-token GEMM tile (gemm_wgmma_ws.cu, -DNVF_WSPROBE=6).

    python3 tools/ws_trace.py TRACE[.gz]

TRACE is what `PROFILE_TRACE=FILE tools/profile_kernels` writes: 8 int32 (G, M, N, K, SMs, consumer
warpgroups, steps, warps a warpgroup), then u32 [256 CTAs][warpgroups][warps][steps][8]: %clock values of lane 0
of each consumer warp at each step: words 0 start, 1 the previous step's MMAs retired (the wgmma wait), 4 its
weights widened, 5 the next loads issued and (where the step opens a slot) the slot's tokens in, 6 its MMAs
committed (2, 3, 7 unused). All cycles. Prints, split by the step's place in its round of two (even steps open a token slot;
odd steps end the round, where the weight loads are waited for) and for a unit's last step, the median and
10th / 90th percentiles of each part; then, per warpgroup and step, how far apart its four warps reach the MMAs
and commit them (if the warpgroup-wide wgmma issue held each warp until all four had arrived, the commits
would line up a fixed time after the last arrival), which warp is last, and how far apart the four warpgroups
run. The probe changes the schedule (see the kernel's comment): these are intervals of the probe build.
"""
import gzip, sys
import numpy as np

raw = (gzip.open if sys.argv[1].endswith(".gz") else open)(sys.argv[1], "rb").read()
G, M, N, K, sms, wgs, steps, warps = (int(x) for x in np.frombuffer(raw[:32], dtype=np.int32))
tr = np.frombuffer(raw[32:], dtype=np.uint32).reshape(256, wgs, warps, steps, 8).astype(np.int64)
nsteps = (K + 127) // 128
tr = tr[..., [0, 1, 4, 5, 6]]  # start, retired, widened, slot in, committed
used = [c for c in range(256) if tr[c, 0, 0, 0, 4] != 0]
print(f"G {G} M {M} N {N} K {K}: {nsteps} steps a unit, {len(used)} CTAs traced; cycles, lane 0 of each warp")
W = 1 << 32
def d(a, b):  # b - a on a 32-bit clock
    return (b - a) % W
def rel(x):  # values relative to the first, wrap-safe (all within 2^31 of each other)
    return ((x - x[..., :1] + W // 2) % W) - W // 2
PARTS = ["MMAs retired (wait)", "widen", "loads + slot wait", "MMA issue to commit", "to the next start", "period"]
groups = {k: {p: [] for p in PARTS} for k in ("even step (opens a slot)", "odd step (round end)", "a unit's last step")}
arr_spread, com_spread, com_after_last, last_warp = [], [], [], np.zeros(warps, dtype=np.int64)
wg_off = [[] for _ in range(wgs)]
for c in used:
    n = int(min(np.count_nonzero(tr[c, w, v, :, 4]) for w in range(wgs) for v in range(warps)))
    t = tr[c, :, :, :n]  # [wg][warp][step][8]
    for s in range(n - 1):
        key = "a unit's last step" if s % nsteps == nsteps - 1 else "even step (opens a slot)" if s % 2 == 0 else "odd step (round end)"
        g = groups[key]
        x, y = t[:, :, s], t[:, :, s + 1]
        for p, v in zip(PARTS, (d(x[..., 0], x[..., 1]), d(x[..., 1], x[..., 2]), d(x[..., 2], x[..., 3]),
                                d(x[..., 3], x[..., 4]), d(x[..., 4], y[..., 0]), d(x[..., 0], y[..., 0]))):
            g[p].extend(v.ravel())
    for s in range(n):
        arrive = rel(t[:, :, s, 3])  # [wg][warp]: each warp's arrival at the MMAs after its warpgroup's warp 0's
        for w in range(wgs):
            a = arrive[w]
            cm = rel(t[w, :, s, 4][None, :])[0] + d(t[w, 0, s, 3], t[w, 0, s, 4])  # commits after warp 0's arrival
            arr_spread.append(a.max() - a.min())
            com_spread.append(cm.max() - cm.min())
            com_after_last.extend(cm - a.max())
            last_warp[int(np.argmax(a))] += 1
        lead = rel(t[:, 0, s, 4][None, :])[0]  # the warpgroups' warp-0 commits
        for w in range(wgs):
            wg_off[w].append(lead.max() - lead[w])
def q(v):
    a = np.array(v)
    return f"median {np.median(a):7.0f}  p10 {np.percentile(a, 10):7.0f}  p90 {np.percentile(a, 90):7.0f}"
for k, g in groups.items():
    if g["period"]:
        print(f"{k} (n {len(g['period'])})")
        for p in PARTS:
            print(f"  {p:22s} {q(g[p])}")
print(f"a warpgroup's four warps reach the MMAs over       {q(arr_spread)}")
print(f"  and commit them over                              {q(com_spread)}")
print(f"  each warp's commit after the last warp's arrival  {q(com_after_last)}")
print(f"  which warp arrives last (0-3, one per sub-partition): {last_warp.tolist()}")
for w in range(wgs):
    print(f"warpgroup {w} behind the leading warpgroup (warp 0's commit): {q(wg_off[w])}")
