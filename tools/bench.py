#!/usr/bin/env python3
"""Benchmark of nvfp4moe against PyTorch baselines, measured in one process on one GPU.

The library is loaded through ctypes (build/libnvfp4moe.so, `make build/libnvfp4moe.so`);
PyTorch provides the memory, the CUDA graphs and the events. Every kernel -- ours and
PyTorch's -- is timed as a CUDA graph of back-to-back launches (so Python and launch
overhead do not count), median of several replays. Weight buffers of every GEMM shape are
larger than the L2 cache; activations are rotated between copies.

Ceilings measured in the same run: device-to-device copy bandwidth (bytes read + written)
and the dense BF16 matrix rate (torch.matmul 8192^3). floor_us = max(bytes / bandwidth,
FLOPs / BF16 rate); frac_of_floor = floor_us / time_us.

Writes bench/results/<card>.json (h200.json, h100.json, ...) (a JSON array of records) and prints a table.
    python3 tools/bench.py [--quick] [--out PATH] [--only quant,gemm,layer]
    python3 tools/bench.py --tune 0,1,2,3 --only gemm --out PATH   (swap-AB variants, m <= 32,
                                                       NVFP4MOE_TUNE_DEFINE=-DNVF_TUNE=<v>)
    python3 tools/bench.py --tune 0,1 --only quant --out PATH      (quantizer variants, -DNVF_QTUNE=<v>)
    python3 tools/bench.py --configs gemm_sm90_t64,gemm_swapab_t32 --ms 32,128 --only gemm --out PATH
                                                   (forced tile configurations, NVFP4MOE_GEMM_CONFIG)
    NVFP4MOE_GEMM_CONFIG=gemm_sm90_t128 python3 tools/bench.py --defines -DNVF_WDEPTH=1,-DNVF_WDEPTH=2 \
        --ms 128 --only gemm --out PATH            (any defines, one context each)
    python3 tools/bench.py --variants gemm_sm90_t32@-DNVF_WTUNE=121,gemm_swapab_t32 --ms 32 --only gemm,layer
                                                   (forced configurations, each with an optional define)
    python3 tools/bench.py --envs "NVFP4MOE_PDL=0,NVFP4MOE_PDL=1" --only quant,layer --out PATH
    (with --envs, --defines, --configs: --shapes dsv3_ep8_gemm2,dsv3_ep8_gemm1,dsv3_ep8_gemm2 picks and orders the GEMMs)
                                                   (contexts under run-time environment switches)
    (NVFP4MOE_BENCH_NO_WS=1: the GEMMs without a workspace; as an --envs arm, that arm's GEMM cells only:
     --envs "NVFP4MOE_BENCH_NO_WS=0,NVFP4MOE_BENCH_NO_WS=1" --interleave --only gemm;
     NVFP4MOE_BENCH_LAYERS=a,b: only those layers;
    NVFP4MOE_BENCH_PROFILE=1: each layer's kernels from a profiler trace of its graph, in the record as "kernels";
    for A/B runs, not record runs: later timings in the process may carry the profiler's overhead)
    (--poisson --mmax N: the Poisson A/B runs with m_max N)
    (and --poisson: masked_m drawn from Poisson(m) per group, m_max = m + 4 sqrt(m) + 4, as in a layer;
     the time compares arms, the floor columns still count m tokens per group)
"""
import ctypes
import datetime
import json
import math
import os
import re
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from nvfp4moe_ctypes import (Desc, GemmArgs, Info, MoeArgs, MoeWeights, QuantArgs,  # noqa: E402
                             lib)

# the five GEMMs of the standard shapes (groups = local experts, N, K)
SHAPES = [("qwen3_30b_gemm1", 128, 1536, 2048), ("qwen3_30b_gemm2", 128, 2048, 768),
          ("dsv3_ep8_gemm1", 32, 4096, 7168), ("dsv3_ep8_gemm2", 32, 7168, 2048),
          ("gpt_oss_gemm1", 128, 5760, 2880)]
# GEMM shapes that only the A/B runs' --shapes can name (not in the full benchmark): Qwen3-235B-A22B's GEMM2 under
# EP8 (16 experts, hidden 4096, moe_intermediate 1536), a K between the standard shapes' 768 and 2048
# and (fiftieth session) DeepSeek-V3's GEMMs with other group counts, whose 128-token tiles fill a whole number of
# CTA waves or not (192 rows a CTA: GEMM1 22 row blocks a group, GEMM2 38; 132 SMs)
AB_SHAPES = [("qwen3_235b_ep8_gemm2", 16, 4096, 1536),
             ("dsv3_g30_gemm1", 30, 4096, 7168), ("dsv3_g33_gemm1", 33, 4096, 7168),
             ("dsv3_g31_gemm2", 31, 7168, 2048), ("dsv3_g29_gemm2", 29, 7168, 2048)]


def gemm_bytes(G, N, K, m):
    """Bytes a masked GEMM moves at least: the NVFP4 weights and their SFs, the NVFP4
    activations and their SFs, and the BF16 output."""
    return G * N * K // 2 + G * N * K // 16 + G * m * (K // 2 + K // 16) + G * m * N * 2


def wrow(K):
    """Bytes a weight row takes in either layout: TILED pads K/2 to whole 128-K steps
    (nvfp4moe_weight_bytes, asked for 16 rows); one buffer serves both layouts."""
    return max(lib.nvfp4moe_weight_bytes(16, K, 0), lib.nvfp4moe_weight_bytes(16, K, 1)) // 16


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: {lib.nvfp4moe_last_error().decode()}")


def stream():
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


def capture_graph(calls, inner):
    """A CUDA graph of `inner` launches of `calls` (closures, cycled), warmed up and replayed once."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for c in calls:  # warm-up outside the capture: JIT, occupancy queries
            c()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(inner):
            calls[i % len(calls)]()
    g.replay()
    torch.cuda.synchronize()
    return g


def time_graph(calls, inner=20, replays=7):
    """Median microseconds per call of `calls` (a list of closures, cycled) replayed from a
    CUDA graph of `inner` launches."""
    g = capture_graph(calls, inner)
    times = []
    for _ in range(replays):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1000.0 / inner)
    del g
    times.sort()
    return times[len(times) // 2]


def profile_graph(call, inner=10, replays=5):
    """The kernels of `call`, one launch sequence, from a torch.profiler (CUPTI) trace of a CUDA
    graph of `inner` calls replayed `replays` times: per position in the sequence its kernel's
    name, median duration and median gap from the previous kernel's end (us; for the first
    kernel, from the previous call's last kernel in the same replay: negative where it started
    under it), plus the median span of one call (first start to last end) and period (start to
    the next call's start). A kernel launched with programmatic dependent launch can start under
    the one before it: its duration then includes its wait (griddepcontrol.wait), and its gap is
    negative. Timings taken later in the same process may carry the profiler's overhead
    (CUPTI stays attached unless TEARDOWN_CUPTI=1), so record runs do not trace."""
    import tempfile
    g = capture_graph([call], inner)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            g.replay()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        with open(f.name) as fh:
            ev = json.load(fh)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    ks = sorted((e["ts"], e["dur"], e["name"]) for e in ev if e.get("cat") == "kernel" and "dur" in e)
    if not ks or len(ks) % (inner * replays):
        return {"error": f"{len(ks)} kernels traced for {inner * replays} calls"}
    n = len(ks) // (inner * replays)
    calls = [ks[i:i + n] for i in range(0, len(ks), n)]
    if any([k[2] for k in c] != [k[2] for k in calls[0]] for c in calls):
        return {"error": "the calls' kernel sequences differ"}
    med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    seq = []
    for j in range(n):
        durs = [c[j][1] for c in calls]
        gaps = ([c[j][0] - (c[j - 1][0] + c[j - 1][1]) for c in calls] if j else
                [calls[i][0][0] - (calls[i - 1][-1][0] + calls[i - 1][-1][1]) for i in range(1, len(calls)) if i % inner]
                or [0.0])
        seq.append(dict(name=re.sub(r"\(.*", "", calls[0][j][2])[:60], dur_us=round(med(durs), 2),
                        gap_us=round(med(gaps), 2)))
    spans = [c[-1][0] + c[-1][1] - c[0][0] for c in calls]
    periods = [calls[i + 1][0][0] - calls[i][0][0] for i in range(len(calls) - 1) if (i + 1) % inner]
    return {"seq": seq, "span_us": round(med(spans), 2), "period_us": round(med(periods), 2) if periods else None}


def random_fp4(shape):
    return torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda")


def random_sf(nbytes):
    return torch.randint(0x30, 0x41, (nbytes,), dtype=torch.uint8, device="cuda")  # ue4m3 0.5 .. 2


def main():
    quick = "--quick" in sys.argv
    out_path = None
    if "--out" in sys.argv:
        out_path = sys.argv[sys.argv.index("--out") + 1]
    only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else ["quant", "gemm", "layer"]
    tunes = [int(v) for v in sys.argv[sys.argv.index("--tune") + 1].split(",")] if "--tune" in sys.argv else None
    configs = sys.argv[sys.argv.index("--configs") + 1].split(",") if "--configs" in sys.argv else None
    defines = sys.argv[sys.argv.index("--defines") + 1].split(",") if "--defines" in sys.argv else None
    # --variants CONFIG@DEFINE,...: a forced tile configuration built with a tuning define
    pairs = [v.split("@") for v in sys.argv[sys.argv.index("--variants") + 1].split(",")] if "--variants" in sys.argv else None
    # --envs A=1;B=2,A=0,...: contexts created under these environment variables (run-time switches
    # such as NVFP4MOE_PDL, which change no kernel)
    envsets = ([dict(kv.split("=", 1) for kv in v.split(";")) for v in sys.argv[sys.argv.index("--envs") + 1].split(",")]
               if "--envs" in sys.argv else None)
    tune_ms = [int(v) for v in sys.argv[sys.argv.index("--ms") + 1].split(",")] if "--ms" in sys.argv else [1, 8, 32]
    # --shapes a,b,a: the GEMM shapes of the A/B runs, in this order (repeats allowed: sequence effects)
    tune_shapes = ([next(sh for sh in SHAPES + AB_SHAPES if sh[0] == nm)
                    for nm in sys.argv[sys.argv.index("--shapes") + 1].split(",")]
                   if "--shapes" in sys.argv else SHAPES)
    # --layout row_major|tiled|preferred (default): the weights' byte layout (nvfp4moe_weight_layout).
    # The weights are random bytes, so one buffer serves either layout.
    layout_opt = sys.argv[sys.argv.index("--layout") + 1] if "--layout" in sys.argv else "preferred"
    # --poisson: in the A/B runs, masked_m drawn per group from Poisson(m) (the same draw in every arm),
    # m_max = m + 4 sqrt(m) + 4, expected_m = m, as a layer's experts get them; else masked_m = m_max = m
    poisson = "--poisson" in sys.argv
    # --mmax N: with --poisson, m_max N instead (a layer's buffers: the DeepSeek-V3 layer row has 256)
    mmax_opt = int(sys.argv[sys.argv.index("--mmax") + 1]) if "--mmax" in sys.argv else None
    # --interleave (with --only gemm and arms): each (shape, m) cell timed under every arm in turn, the arms'
    # contexts created first, instead of every cell under one arm, then the next arm: drift over the run (clocks,
    # heat) then falls on every arm alike (X100 on an H200: the same build's two runs of one cell 11 % apart)
    interleave = "--interleave" in sys.argv
    if interleave and (only != ["gemm"] or not any(f in sys.argv for f in ("--envs", "--tune", "--configs", "--defines",
                                                                               "--variants"))):
        sys.exit("--interleave times the GEMM cells of an A/B: give --only gemm and the arms (--envs, --defines, ..)")
    if mmax_opt is not None and (not poisson or mmax_opt < 1):
        sys.exit("--mmax N (N >= 1) needs --poisson")

    def give_workspace(c, ga, keep, no_ws=None):
        # the workspace the configuration asks for (the token-producer tiles' widened tokens),
        # allocated once per case like any caller's, outside the timed region; none when no_ws
        # (an A/B arm's NVFP4MOE_BENCH_NO_WS) or, when no_ws is None, $NVFP4MOE_BENCH_NO_WS is set and not 0
        n = lib.nvfp4moe_gemm_workspace_size(c, ctypes.byref(ga))
        # A/B arms with and without a workspace must not differ in where the caching allocator
        # puts later buffers (the weights of the next shapes): a GEMM with no workspace in either
        # arm measured up to 9 % apart after one arm had allocated one (bench/NOTES.md,
        # twenty-second session). So every case takes the same 64 MB block unless it needs more.
        buf = torch.empty(max(n, 64 << 20), dtype=torch.uint8, device="cuda")
        keep.append(buf)
        if no_ws is None:
            no_ws = os.environ.get("NVFP4MOE_BENCH_NO_WS", "0") not in ("", "0")
        if n and not no_ws:  # (A/Bs of the path without a workspace)
            ga.workspace, ga.workspace_size = buf.data_ptr(), n

    def layout_for(c, N, K):
        if layout_opt == "preferred":
            return lib.nvfp4moe_preferred_weight_layout(c, N, K)
        return 1 if layout_opt == "tiled" and N % 16 == 0 and K % 32 == 0 else 0
    torch.manual_seed(0)
    dev = torch.cuda.get_device_properties(0)
    gpu = torch.cuda.get_device_name(0)
    date = datetime.date.today().isoformat()
    torch.zeros(1, device="cuda")  # the primary context, shared with the library
    ctx = ctypes.c_void_p()
    check(lib.nvfp4moe_create(ctypes.byref(Desc()), ctypes.byref(ctx)), "nvfp4moe_create")
    info = Info()
    lib.nvfp4moe_query_info(ctx, ctypes.byref(info))
    backend = {1: "portable", 2: "sm90", 3: "sm100"}.get(info.gemm_backend, "?")

    # ---- ceilings ----
    # an elementwise kernel (a captured copy_ becomes a copy-engine memcpy, which is slower)
    nbytes = 2 << 30
    src = torch.randn(nbytes // 2, dtype=torch.bfloat16, device="cuda")
    dst = torch.empty_like(src)
    t = time_graph([lambda: torch.mul(src, 1.0, out=dst)], inner=5)
    bw = 2 * nbytes / (t * 1e-6)  # bytes/s, read + write
    del src, dst
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    t = time_graph([lambda: torch.matmul(a, b)], inner=5)
    bf16_rate = 2 * 8192 ** 3 / (t * 1e-6)
    del a, b
    print(f"{gpu}: copy {bw / 1e12:.2f} TB/s, bf16 dense {bf16_rate / 1e12:.0f} TFLOP/s, backend {backend}")
    # Let the card settle after the ceilings' matmuls: the quantizer measured right after them
    # was 15-20 % slower, 4 % a moment later and not at all 2 s later (bench/NOTES.md, fifth session).
    torch.cuda.synchronize()
    time.sleep(3)
    records = []

    def record(op, t_us, bytes_, flops=0, **kw):
        floor = max(bytes_ / bw, flops / bf16_rate) * 1e6
        r = dict(op=op, time_us=round(t_us, 3), bytes=int(bytes_), floor_us=round(floor, 3),
                 frac_of_floor=round(floor / t_us, 4), gpu=gpu, date=date, backend=backend,
                 copy_tb_s=round(bw / 1e12, 3), bf16_tflop_s=round(bf16_rate / 1e12, 1))
        r.update(kw)
        records.append(r)
        return r

    # ---- quantization ----
    def quant_case(op, G, rows, K, masked, silu=False, copies=3, c=None, sf_layout=0, **extra):
        c = c if c is not None else ctx
        width = 2 * K if silu else K
        xs = [torch.randn(G, rows, width, dtype=torch.bfloat16, device="cuda") for _ in range(copies)]
        q = torch.empty(G, rows, K // 2, dtype=torch.uint8, device="cuda")
        sf = torch.empty(G * lib.nvfp4moe_sf_bytes(rows, K, sf_layout), dtype=torch.uint8, device="cuda")
        sc = torch.empty(G, rows, dtype=torch.float32, device="cuda")
        mm = masked if masked is not None else None
        mm_t = torch.tensor(mm, dtype=torch.int32, device="cuda") if mm is not None else None
        args = []
        for x in xs:
            qa = QuantArgs(dtype=0, groups=G, rows=rows, k=K, x=x.data_ptr(), out_e2m1=q.data_ptr(),
                           out_sf=sf.data_ptr(), scale=sc.data_ptr(), masked_m=mm_t.data_ptr() if mm_t is not None else 0,
                           sf_layout=sf_layout)
            args.append(qa)
        fn = lib.nvfp4moe_silu_mul_quantize_per_token if silu else lib.nvfp4moe_quantize_per_token
        calls = [(lambda qa=qa: check(fn(c, ctypes.byref(qa), stream()), op)) for qa in args]
        t_us = time_graph(calls)
        valid = sum(mm) if mm is not None else G * rows
        bytes_ = valid * (width * 2 + K // 2 + K // 16 + 4)
        if sf_layout:
            extra["sf_layout"] = "linear"
        return record(op, t_us, bytes_, m=rows, n=0, k=K, groups=G,
                      masked_m_mean=round(valid / G, 1) if mm is not None else None, **extra)

    masked = [int(x) for x in torch.poisson(torch.full((32,), 33.0)).clamp(0, 256).tolist()]

    def quant_cases(**kw):
        quant_case("quantize_per_token", 1, 16384, 7168, None, **kw)
        # the same with linear SFs (no 128x4 scatter; bench/NOTES.md, eleventh session)
        quant_case("quantize_per_token_linear_sf", 1, 16384, 7168, None, sf_layout=1, **kw)
        quant_case("quantize_per_token_masked_decode", 32, 256, 7168, masked, **kw)
        quant_case("silu_mul_quantize_per_token_masked_decode", 32, 256, 2048, masked, silu=True, **kw)

    def layer_cases(c, **extra):
        torch.manual_seed(1)  # the same masked_m draw in every context
        # (the decode row: 3 tokens per expert, where the swap-AB tiles run, added in the twenty-second
        # session; gpt-oss-120b, 128 experts, H = I = 2880, 8 tokens per expert (256 tokens, top-4), added in
        # the twenty-third: K % 128 == 64, so TILED weights with a padded last step)
        for name, E, H, I, mean_m, m_max in [("dsv3_ep8_layer", 32, 7168, 2048, 33, 256),
                                             ("qwen3_30b_layer", 128, 2048, 768, 16, 64),
                                             ("dsv3_ep8_layer_decode", 32, 7168, 2048, 3, 64),
                                             ("gpt_oss_layer", 128, 2880, 2880, 8, 64)]:
            if os.environ.get("NVFP4MOE_BENCH_LAYERS") and name not in os.environ["NVFP4MOE_BENCH_LAYERS"].split(","):
                continue  # (A/Bs of a trial that holds only on some shapes)
            w13, w2 = random_fp4((E, 2 * I, wrow(H))), random_fp4((E, H, wrow(I)))
            s13, s2 = random_sf(E * lib.nvfp4moe_sf_bytes(2 * I, H, 0)), random_sf(E * lib.nvfp4moe_sf_bytes(H, I, 0))
            ws13 = torch.full((E,), 1e-3, dtype=torch.float32, device="cuda")
            ws2 = torch.full((E,), 1e-3, dtype=torch.float32, device="cuda")
            lay = layout_for(c, 2 * I, H) & layout_for(c, H, I)
            mw = MoeWeights(experts=E, hidden=H, inter=I, w13=w13.data_ptr(), w13_sf=s13.data_ptr(),
                            w13_gate_scale=ws13.data_ptr(), w13_up_scale=ws13.data_ptr(), w2=w2.data_ptr(),
                            w2_sf=s2.data_ptr(), w2_scale=ws2.data_ptr(), layout=lay)
            mm = [int(v) for v in torch.poisson(torch.full((E,), float(mean_m))).clamp(0, m_max).tolist()]
            mm_t = torch.tensor(mm, dtype=torch.int32, device="cuda")
            x = torch.randn(E, m_max, H, dtype=torch.bfloat16, device="cuda")
            out = torch.empty_like(x)
            wsz = lib.nvfp4moe_moe_workspace_size(ctypes.byref(mw), m_max)
            wsb = torch.empty(wsz + 256, dtype=torch.uint8, device="cuda")
            wsp = (wsb.data_ptr() + 255) // 256 * 256
            ma = MoeArgs(m_max=m_max, expected_m=mean_m, scaling=0, x=x.data_ptr(), masked_m=mm_t.data_ptr(),
                         out=out.data_ptr(), workspace=wsp, workspace_size=wsz)
            t_us = time_graph([lambda: check(lib.nvfp4moe_moe_forward(c, ctypes.byref(mw), ctypes.byref(ma), stream()),
                                             name)], inner=10)
            t_rm = None
            if lay and "tune" not in extra:  # the same layer on row-major weights, for comparison
                mw.layout = 0
                t_rm = time_graph([lambda: check(lib.nvfp4moe_moe_forward(c, ctypes.byref(mw), ctypes.byref(ma),
                                                                              stream()), name)], inner=10)
            tok = sum(mm)
            weight_bytes = (E * 2 * I * H // 2 + E * 2 * I * H // 16 + E * H * I // 2 + E * H * I // 16)
            act_bytes = tok * (H * 2 + H // 2 + H // 16 + 2 * I * 2 * 2 + I // 2 + I // 16 + H * 2)
            r = record("moe_layer", t_us, weight_bytes + act_bytes, flops=2 * tok * (2 * I * H + H * I), shape=name,
                       m=mean_m, n=H, k=I, groups=E, tokens=tok, weight_layout=["row_major", "tiled"][lay],
                       masked_m_max=max(mm), **extra)
            if t_rm is not None:
                r["row_major_time_us"] = round(t_rm, 3)
            if os.environ.get("NVFP4MOE_BENCH_PROFILE"):
                mw.layout = lay
                r["kernels"] = profile_graph(lambda: check(lib.nvfp4moe_moe_forward(c, ctypes.byref(mw), ctypes.byref(ma),
                                                                                     stream()), name))
                print(name, extra.get("tune", ""), json.dumps(r["kernels"]))
            g1 = E * 2 * I * (H // 2 + H // 16) + tok * (H // 2 + H // 16) + tok * 2 * I * 2
            g2 = E * H * (I // 2 + I // 16) + tok * (I // 2 + I // 16) + tok * H * 2
            r["gemm_memory_floor_sum_us"] = round((g1 + g2) / bw * 1e6, 3)
            r["time_over_gemm_floor_sum"] = round(t_us / r["gemm_memory_floor_sum_us"], 3)
            del w13, w2, s13, s2, x, out, wsb
            torch.cuda.empty_cache()

    if "quant" in only and tunes is None:
        quant_cases(position="first")

    # kernel variants (--tune: a define, part of the cache key) or forced tile configurations
    # (--configs: NVFP4MOE_GEMM_CONFIG), one context each
    variants = ([{"NVFP4MOE_TUNE_DEFINE": f"-DNVF_TUNE={tv}" if "gemm" in only else f"-DNVF_QTUNE={tv}"} for tv in tunes]
                if tunes is not None else [{"NVFP4MOE_TUNE_DEFINE": d} for d in defines] if defines is not None
                else [{"NVFP4MOE_GEMM_CONFIG": c} for c in configs] if configs is not None
                else [dict(zip(("NVFP4MOE_GEMM_CONFIG", "NVFP4MOE_TUNE_DEFINE"), pr)) for pr in pairs]
                if pairs is not None else envsets)
    if variants is not None:
        ws_off = {}  # context -> no workspace for its GEMM cells (an --envs arm's NVFP4MOE_BENCH_NO_WS)

        def arm_context(envs):  # (context, its tune label), created under the arm's environment
            define = "@".join(envs.values()) if envsets is None else ";".join(f"{k}={v}" for k, v in envs.items())
            saved = {k: os.environ.get(k) for k in envs}
            os.environ.update(envs)
            tctx = ctypes.c_void_p()
            check(lib.nvfp4moe_create(ctypes.byref(Desc()), ctypes.byref(tctx)), "nvfp4moe_create")
            # read at each cell, after the environment is restored (None: $NVFP4MOE_BENCH_NO_WS decides)
            ws_off[tctx.value] = (envs["NVFP4MOE_BENCH_NO_WS"] not in ("", "0")) if "NVFP4MOE_BENCH_NO_WS" in envs else None
            for k, v in saved.items():  # the environment as it was (a variable the arm set but the caller had not: unset)
                if v is None:
                    del os.environ[k]
                else:
                    os.environ[k] = v
            return tctx, define

        def gemm_cell(tctx, define, name, G, N, K, m, w, wsf):  # one A/B cell: fresh tokens, timed, recorded
            mmax = (mmax_opt or m + int(4 * m ** 0.5) + 4) if poisson else m
            A = random_fp4((G, mmax, K // 2))
            asf = random_sf(G * lib.nvfp4moe_sf_bytes(mmax, K, 0))
            if poisson:
                gen = torch.Generator().manual_seed(m)  # the same draw in every arm
                mm_t = torch.poisson(torch.full((G,), float(m)), generator=gen).clamp(0, mmax).to(torch.int32).cuda()
            else:
                mm_t = torch.full((G,), m, dtype=torch.int32, device="cuda")
            alpha = torch.ones(G, dtype=torch.float32, device="cuda")
            d = torch.empty(G, mmax, N, dtype=torch.bfloat16, device="cuda")
            ga = GemmArgs(groups=G, m_max=mmax, n=N, k=K, a=A.data_ptr(), a_sf=asf.data_ptr(), b=w.data_ptr(),
                          b_sf=wsf.data_ptr(), masked_m=mm_t.data_ptr(), alpha=alpha.data_ptr(),
                          d=d.data_ptr(), ldd=N, expected_m=m, b_layout=layout_for(tctx, N, K))
            wkeep = []
            give_workspace(tctx, ga, wkeep, ws_off.get(tctx.value))
            t_us = time_graph([lambda: check(lib.nvfp4moe_grouped_gemm_nt_masked(tctx, ctypes.byref(ga),
                                                                                 stream()), name)])
            bytes_ = gemm_bytes(G, N, K, m)
            record("grouped_gemm_nt_masked_tune", t_us, bytes_, flops=2 * G * m * N * K, shape=name, m=m,
                   n=N, k=K, groups=G, tune=define, weight_layout=["row_major", "tiled"][ga.b_layout],
                   workspace_bytes=ga.workspace_size, m_max=mmax,
                   masked_m_mean=round(float(mm_t.float().mean()), 2) if poisson else None)
            return A, asf, mm_t, alpha, d, wkeep  # (kept by the caller until the next cell's are made, as before)

        last = None  # the last cell's buffers, alive until the next cell's exist (the placement the records had)
        if interleave:  # cell-major: every arm's context first, then each (shape, m) under every arm in turn
            arms = [arm_context(envs) for envs in variants]
            for name, G, N, K in tune_shapes:
                w = random_fp4((G, N, wrow(K)))
                wsf = random_sf(G * lib.nvfp4moe_sf_bytes(N, K, 0))
                for m in tune_ms:
                    for tctx, define in arms:
                        last = gemm_cell(tctx, define, name, G, N, K, m, w, wsf)
                del w, wsf
            for tctx, _ in arms:
                lib.nvfp4moe_destroy(tctx)
        else:  # arm-major: each arm's cells, then the next arm
            for envs in variants:
                tctx, define = arm_context(envs)
                if "quant" in only:
                    quant_cases(c=tctx, tune=define)
                for name, G, N, K in (tune_shapes if "gemm" in only else []):
                    w = random_fp4((G, N, wrow(K)))
                    wsf = random_sf(G * lib.nvfp4moe_sf_bytes(N, K, 0))
                    for m in tune_ms:
                        last = gemm_cell(tctx, define, name, G, N, K, m, w, wsf)
                    del w, wsf
                if "layer" in only:
                    layer_cases(tctx, tune=define)
                lib.nvfp4moe_destroy(tctx)
        del last
        only = []

    # ---- GEMMs ----
    ms = [1, 8, 32, 128, 512] if not quick else [1, 32]
    for name, G, N, K in (SHAPES if "gemm" in only else []):
        # Settle after the previous shape's m = 512 PyTorch baselines (dense BF16/FP8 work): the
        # next shape's m = 1 and the layers measured right after them ran 3-20 % slow in the main
        # context, while the A/B contexts, which time no baselines, did not (bench/NOTES.md,
        # eighth session; the same effect as the pause after the ceilings above).
        torch.cuda.synchronize()
        time.sleep(3)
        w = random_fp4((G, N, wrow(K)))
        wsf = random_sf(G * lib.nvfp4moe_sf_bytes(N, K, 0))
        w_bf16 = None
        for m in ms:
            a_copies = 2
            As = [random_fp4((G, m, K // 2)) for _ in range(a_copies)]
            asf = [random_sf(G * lib.nvfp4moe_sf_bytes(m, K, 0)) for _ in range(a_copies)]
            mm_t = torch.full((G,), m, dtype=torch.int32, device="cuda")
            alpha = torch.ones(G, dtype=torch.float32, device="cuda")
            d = torch.empty(G, m, N, dtype=torch.bfloat16, device="cuda")
            lay = layout_for(ctx, N, K)
            args = [GemmArgs(groups=G, m_max=m, n=N, k=K, a=As[i].data_ptr(), a_sf=asf[i].data_ptr(), b=w.data_ptr(),
                             b_sf=wsf.data_ptr(), masked_m=mm_t.data_ptr(), alpha=alpha.data_ptr(), d=d.data_ptr(),
                             ldd=N, expected_m=m, b_layout=lay) for i in range(a_copies)]
            wkeep = []
            for ga in args:
                give_workspace(ctx, ga, wkeep)
            calls = [(lambda ga=ga: check(lib.nvfp4moe_grouped_gemm_nt_masked(ctx, ctypes.byref(ga), stream()), name))
                     for ga in args]
            t_us = time_graph(calls)
            bytes_ = gemm_bytes(G, N, K, m)
            r = record("grouped_gemm_nt_masked", t_us, bytes_, flops=2 * G * m * N * K, shape=name, m=m, n=N, k=K,
                       groups=G, weight_layout=["row_major", "tiled"][lay], workspace_bytes=args[0].workspace_size)
            if lay:  # the same GEMM on row-major weights, for comparison
                for ga in args:
                    ga.b_layout = 0
                r["row_major_time_us"] = round(time_graph(calls), 3)
            # PyTorch baselines on the same shapes
            if w_bf16 is None:
                w_bf16 = torch.randn(G, N, K, dtype=torch.bfloat16, device="cuda")
                w_fp8 = w_bf16.to(torch.float8_e4m3fn)
                scale_b = torch.ones(G, N, dtype=torch.float32, device="cuda")
            a_bf16 = torch.randn(G, m, K, dtype=torch.bfloat16, device="cuda")
            a2d = a_bf16.reshape(G * m, K)
            offs = torch.arange(1, G + 1, dtype=torch.int32, device="cuda") * m
            a8 = a2d.to(torch.float8_e4m3fn)
            sa = torch.ones(G * m, dtype=torch.float32, device="cuda")
            for key, fn in [
                ("torch_bf16_bmm_us", lambda: torch.bmm(a_bf16, w_bf16.transpose(1, 2))),
                ("torch_grouped_bf16_us", lambda: torch._grouped_mm(a2d, w_bf16.transpose(1, 2), offs=offs)),
                ("torch_grouped_fp8_us", lambda: torch._scaled_grouped_mm(
                    a8, w_fp8.transpose(1, 2), sa, scale_b, offs=offs, out_dtype=torch.bfloat16)),
            ]:
                try:
                    r[key] = round(time_graph([fn], inner=10, replays=5), 3)
                except Exception as e:  # noqa: BLE001 -- a baseline that does not run on this build
                    r[key] = None
                    r[key.replace("_us", "_error")] = str(e).splitlines()[0][:160]
            del As, asf, d, a_bf16
        del w, wsf, w_bf16, w_fp8
        torch.cuda.empty_cache()

    # ---- expert layers (masked layout, per-token activation scales) ----
    if "layer" in only:
        torch.cuda.synchronize()
        time.sleep(3)  # settle, as before each GEMM shape
        layer_cases(ctx)

    # The quantizer again, same context, at the end of the run: a check on the settling pause
    # above (both rows are kept, told apart by "position").
    if "quant" in only and tunes is None and variants is None:
        quant_cases(position="end")

    # ---- write ----
    # the card's model (H200, H100, B200, ...) names the file: "NVIDIA H100 80GB HBM3" -> h100.json
    # (GH200 -> gh200; a name with no such model, e.g. "RTX 6000 Ada Generation" -> rtx_6000_ada_generation)
    card = re.search(r"\b([A-Z]{1,2}\d{2,3}[A-Za-z]*)\b", gpu.replace("NVIDIA", ""))
    name = card.group(1).lower() if card else re.sub(r"[^a-z0-9]+", "_", gpu.replace("NVIDIA", "").lower()).strip("_")
    path = out_path or os.path.join(ROOT, "bench", "results", name + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(records, f, indent=1)
    print(f"wrote {path}")
    print(f"{'op':<44} {'shape':<16} {'m':>5} {'us':>9} {'floor':>9} {'frac':>6} {'bmm':>8} {'grp16':>8} {'grp8':>8}")
    for r in records:
        print(f"{r['op']:<44} {str(r.get('shape', '')):<16} {str(r.get('m', '')):>5} {r['time_us']:>9.1f} "
              f"{r['floor_us']:>9.1f} {r['frac_of_floor']:>6.2f} {str(r.get('torch_bf16_bmm_us', '')):>8} "
              f"{str(r.get('torch_grouped_bf16_us', '')):>8} {str(r.get('torch_grouped_fp8_us', '')):>8}"
              + (f" tune={r['tune']}" if "tune" in r else "") + (f" position={r['position']}" if "position" in r else ""))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
