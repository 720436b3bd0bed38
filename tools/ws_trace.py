#!/usr/bin/env python3
"""Summarise probe 6's timeline of the resident token-producer GEMM tile (gemm_wgmma_ws.cu, -DNVF_WSPROBE=6).

    python3 tools/ws_trace.py TRACE[.gz]

TRACE is what `PROFILE_TRACE=FILE tools/profile_kernels` writes: 8 int32 (G, M, N, K, SMs, consumer
warpgroups, steps, 0), then u32 [256 CTAs][warpgroups][steps][4] %clock values of thread 0 of each consumer
warpgroup at each step: c0 start, c1 the previous step's MMAs retired, c2 this step's weights widened, c3 its
MMAs issued (the full-slot wait between c2 and c3). Prints, over every CTA and warpgroup, the median and the
10th / 90th percentiles (cycles) of each part of a step, inside a unit and at a unit's first and last steps, and how far
apart the four warpgroups of a CTA issue the same step's MMAs.
"""
import gzip, sys
import numpy as np

raw = (gzip.open if sys.argv[1].endswith(".gz") else open)(sys.argv[1], "rb").read()
hdr = np.frombuffer(raw[:32], dtype=np.int32)
G, M, N, K, sms, wgs, steps = (int(x) for x in hdr[:7])
tr = np.frombuffer(raw[32:], dtype=np.uint32).reshape(256, wgs, steps, 4).astype(np.int64)
nsteps = (K + 127) // 128
print(f"G {G} M {M} N {N} K {K}: {nsteps} steps a unit, {sms} SMs")
used = [c for c in range(256) if tr[c, 0, 0, 3] != 0]
def d(a, b):  # b - a on a 32-bit clock
    return (b - a) % (1 << 32)
parts = {"wait (MMAs retired)": [], "widen": [], "slot wait + issue": [], "to the next start": [], "period": []}
first = {k: [] for k in parts}
last = {k: [] for k in parts}
spread = []
for c in used:
    n = int(np.count_nonzero(tr[c, 0, :, 3]))
    for w in range(wgs):
        t = tr[c, w, :n]
        for s in range(n - 1):
            dst = first if s % nsteps == 0 else last if s % nsteps == nsteps - 1 else parts
            dst["wait (MMAs retired)"].append(d(t[s, 0], t[s, 1]))
            dst["widen"].append(d(t[s, 1], t[s, 2]))
            dst["slot wait + issue"].append(d(t[s, 2], t[s, 3]))
            dst["to the next start"].append(d(t[s, 3], t[s + 1, 0]))
            dst["period"].append(d(t[s, 0], t[s + 1, 0]))
    for s in range(n):
        ts = [tr[c, w, s, 3] for w in range(wgs)]
        spread.append(max(d(min(ts), x) for x in ts if d(min(ts), x) < 1 << 31))
def show(title, dd):
    print(title)
    for k, v in dd.items():
        if v:
            a = np.array(v)
            print(f"  {k:22s} median {np.median(a):8.0f}  p10 {np.percentile(a, 10):8.0f}  p90 {np.percentile(a, 90):8.0f}  (n {len(a)})")
print(f"{len(used)} CTAs traced")
show("steps inside a unit (cycles)", parts)
show("a unit's first step", first)
show("a unit's last step ('to the next start': the last MMAs' wait, the epilogue, the next unit's setup)", last)
a = np.array(spread)
print(f"spread of the four warpgroups' MMA issue for the same step: median {np.median(a):.0f} p10 {np.percentile(a, 10):.0f} p90 {np.percentile(a, 90):.0f}")
