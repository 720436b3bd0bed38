#!/usr/bin/env python3
"""Makespan of a one-CTA-a-unit grid, in units of one whole unit's time: the CTAs in index order, each
started on the SM that frees first (greedy list scheduling, as the hardware deals a grid when one CTA
fills an SM). For predictions of row-block orders (gemm_wgmma_ws.cu's NVF_TAIL, commits 6dd2dc6 to 93aa1ac;
bench/NOTES.md, fiftieth to fifty-second sessions); a model, not a measurement: X101 measured a smaller gain
than it predicted (short units costing more than c1 and c2 guess, or the define's own cost: X101 cannot tell).

  python3 tools/waves.py --groups 32 --n 7168 --tiles 1 [--sms 132] [--c1 0.5 --c2 0.75]
prints, for the default order and NVF_TAIL=1 and =2, the units and the makespan; c1 and c2 are the guessed
costs of a unit with one and two warpgroups' rows against a whole one (three warpgroups, 192 rows)."""
import argparse
import heapq


def makespan(costs, sms):
    free = [0.0] * sms
    heapq.heapify(free)
    end = 0.0
    for c in costs:
        t = heapq.heappop(free) + c
        end = max(end, t)
        heapq.heappush(free, t)
    return end


def orders(groups, n, tiles, c1, c2, rows=192):
    cost = {1: c1, 2: c2, 3: 1.0}
    nb, r = divmod(n, rows)
    wgs = lambda x: min(3, (x + 63) // 64)  # warpgroups with rows in a block of x rows
    blocks = [rows] * nb + ([r] if r else [])
    out = {}
    # default: every block costs a whole unit (idle warpgroups still issue their MMAs), group-major
    out["default"] = [1.0] * (groups * len(blocks) * tiles)
    # =1: short block last, idle warpgroups return
    out["tail=1"] = [1.0] * (groups * nb * tiles) + ([cost[wgs(r)]] * (groups * tiles) if r else [])
    # =2: a last whole block plus 64 rows become two 128-row blocks
    if r == 64 and nb >= 1:
        out["tail=2"] = [1.0] * (groups * (nb - 1) * tiles) + [c2] * (groups * 2 * tiles)
    else:
        out["tail=2"] = out["tail=1"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--tiles", type=int, default=1, help="token tiles per (group, block): ceil(m / 128)")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--c1", type=float, default=0.5)
    ap.add_argument("--c2", type=float, default=0.75)
    a = ap.parse_args()
    res = orders(a.groups, a.n, a.tiles, a.c1, a.c2)
    base = makespan(res["default"], a.sms)
    for k, costs in res.items():
        t = makespan(costs, a.sms)
        print(f"{k:8} units {len(costs):6} work {sum(costs) / a.sms:7.2f} waves  makespan {t:7.2f}  {100 * (t / base - 1):+.1f} %")


if __name__ == "__main__":
    main()
