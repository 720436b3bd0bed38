#!/usr/bin/env python3
"""The library's E2M1 / E4M3 conversions against an independent public implementation:
ml_dtypes' float4_e2m1fn and float8_e4m3fn casts (RNE), through ctypes on
build/libnvfp4moe.so. Every E4M3 byte, every E2M1 code, every tie point and a large
random sample of f32 values. Two documented differences are checked as such:
  - E4M3 above the largest finite value: the contract saturates to 448 (0x7E, as
    cvt.rn.satfinite); ml_dtypes' float8_e4m3fn overflows to NaN (0x7F).
  - E2M1 of NaN: ml_dtypes gives 0x8; the quantizer never converts a NaN (non-finite
    blocks are faulted before the cast), so the contract does not define it.
Prints PASS/FAIL/SKIP lines like the C tests."""
import ctypes
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    try:
        import numpy as np
        import ml_dtypes
    except ImportError as e:
        print(f"SKIP numerics_vs_ml_dtypes: {e} (pip install numpy ml_dtypes)")
        return 0
    lib = ctypes.CDLL(os.path.join(ROOT, "build", "libnvfp4moe.so"))
    lib.nvfp4moe_ref_e2m1_from_f32.argtypes = [ctypes.c_float]
    lib.nvfp4moe_ref_e2m1_from_f32.restype = ctypes.c_uint
    lib.nvfp4moe_ref_e4m3_from_f32.argtypes = [ctypes.c_float]
    lib.nvfp4moe_ref_e4m3_from_f32.restype = ctypes.c_uint
    lib.nvfp4moe_ref_e2m1_to_f32.argtypes = [ctypes.c_uint]
    lib.nvfp4moe_ref_e2m1_to_f32.restype = ctypes.c_float
    lib.nvfp4moe_ref_e4m3_to_f32.argtypes = [ctypes.c_uint]
    lib.nvfp4moe_ref_e4m3_to_f32.restype = ctypes.c_float
    f4, f8 = ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e4m3fn
    failures = 0

    def report(name, bad, total, detail=""):
        nonlocal failures
        if bad == 0 and total > 0:
            print(f"PASS {name} ({total} values)")
        else:
            failures += 1
            print(f"FAIL {name}: {bad} of {total} differ {detail}")

    def ours_e4m3(xs):
        return np.array([lib.nvfp4moe_ref_e4m3_from_f32(float(v)) for v in xs], dtype=np.uint8)

    def ours_e2m1(xs):
        return np.array([lib.nvfp4moe_ref_e2m1_from_f32(float(v)) for v in xs], dtype=np.uint8)

    def theirs_e4m3(xs):
        return np.asarray(xs, dtype=np.float32).astype(f8).view(np.uint8)

    def theirs_e2m1(xs):
        return np.asarray(xs, dtype=np.float32).astype(f4).view(np.uint8) & 0xF

    # decodes
    b = np.arange(0x7F, dtype=np.uint8)
    want = b.view(f8).astype(np.float32)
    got = np.array([lib.nvfp4moe_ref_e4m3_to_f32(int(v)) for v in b], dtype=np.float32)
    report("e4m3_decode_every_byte", int(np.sum(got.view(np.uint32) != want.view(np.uint32))), len(b))
    nan_ok = np.isnan(lib.nvfp4moe_ref_e4m3_to_f32(0x7F)) and np.isnan(np.uint8(0x7F).view(f8).astype(np.float32))
    report("e4m3_decode_0x7F_is_nan", 0 if nan_ok else 1, 1)
    c = np.arange(16, dtype=np.uint8)
    want = c.view(f4).astype(np.float32)
    got = np.array([lib.nvfp4moe_ref_e2m1_to_f32(int(v)) for v in c], dtype=np.float32)
    report("e2m1_decode_every_code", int(np.sum(got.view(np.uint32) != want.view(np.uint32))), 16)

    # E4M3 ties: every midpoint between neighbours, and one f32 ulp either side
    vals = b[:0x7F].view(f8).astype(np.float64)
    mids = (vals[:-1] + vals[1:]) / 2
    pts = np.concatenate([mids, np.nextafter(mids.astype(np.float32), np.float32(1e9)),
                          np.nextafter(mids.astype(np.float32), np.float32(0)), vals]).astype(np.float32)
    pts = pts[pts < 464]
    o, t = ours_e4m3(pts), theirs_e4m3(pts)
    report("e4m3_encode_ties_and_neighbours", int(np.sum(o != t)), len(pts))

    # E4M3 saturation: the one documented difference
    big = np.array([448, 449, 463.99, 464, 480, 1e6, 3e38, np.inf], dtype=np.float32)
    o, t = ours_e4m3(big), theirs_e4m3(big)
    sat_ok = bool(np.all(o == 0x7E)) and bool(np.all(t[big > 464] == 0x7F)) and bool(np.all(t[big <= 464] == 0x7E))
    report("e4m3_saturates_where_ml_dtypes_overflows_to_nan", 0 if sat_ok else 1, len(big), f"ours {o} theirs {t}")

    # E2M1 ties and cut points, both signs
    cuts = np.array([0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 100, np.inf], dtype=np.float32)
    pts = np.concatenate([cuts, np.nextafter(cuts, np.float32(1e9)), np.nextafter(cuts, np.float32(0))])
    pts = np.concatenate([pts, -pts])
    o, t = ours_e2m1(pts), theirs_e2m1(pts)
    report("e2m1_encode_cut_points_ties_signs", int(np.sum(o != t)), len(pts), f"at {pts[o != t][:5]}")

    # a large random sample
    rng = np.random.default_rng()
    n = int(os.environ.get("NUMERICS_SAMPLES", "1000000"))
    x8 = np.exp2(rng.uniform(-24, 9.5, n)).astype(np.float32)
    x8 = x8[x8 < 464]
    o, t = ours_e4m3(x8), theirs_e4m3(x8)
    report("e4m3_encode_random_f32", int(np.sum(o != t)), len(x8), f"e.g. {x8[o != t][:3]}")
    x4 = (rng.standard_normal(n) * np.exp2(rng.uniform(-4, 4, n))).astype(np.float32)
    o, t = ours_e2m1(x4), theirs_e2m1(x4)
    report("e2m1_encode_random_f32", int(np.sum(o != t)), len(x4), f"e.g. {x4[o != t][:3]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
