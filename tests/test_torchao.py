#!/usr/bin/env python3
"""The quantizer against an independent public NVFP4 reference: torchao's
`nvfp4_quantize(x, per_tensor_scale=s)` (torchao.prototype.mx_formats.nvfp4_tensor), on
CPU, over a few million random bf16 elements, with the same per-tensor decode scale s.

The two differ by construction in three places, and every differing byte must be one of
them (else the test fails):
  1. the SF: torchao computes e4m3(clamp((amax / 6) / s, 2^-9, 448)) with two divisions;
     the contract computes e4m3(amax * ((1/s) * f32(1/6))). The two f32 values differ by a
     few ulps, so at an e4m3 rounding boundary they land on neighbouring bytes.
  2. blocks whose SF would be below 2^-6 (zero blocks included): torchao clamps the SF to
     torch.finfo(float8_e4m3fn).tiny = 2^-6, the smallest normal; the contract writes SF 0
     (codes 0) or an E4M3 subnormal (2^-9 .. 7 * 2^-9).
  3. a code: torchao scales by (1/s) / sf, the contract by 1 / (sf * s); at an E2M1 cut
     point the two products can fall on different sides.
Needs torch and torchao (carried as wheels to the GPU machine); prints SKIP otherwise."""
import ctypes
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))


def main():
    try:
        import numpy as np
        import torch
        from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize
    except Exception as e:  # noqa: BLE001
        print(f"SKIP quantizer_vs_torchao: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
        return 0
    import ml_dtypes
    from nvfp4moe_ctypes import QuantArgs, lib

    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    M, K = 2048, 2048
    x = torch.randn(M, K) * torch.exp(torch.randn(M, 1) * 2) * torch.exp(torch.randn(M, K) * 0.5)
    x[::97, 100:164] = 0  # zero blocks
    x = x.to(torch.bfloat16)
    s = float((x.float().abs().max() / (448.0 * 6.0)).item())
    sf_t, q_t = nvfp4_quantize(x.contiguous(), 16, torch.tensor(s, dtype=torch.float32))
    sf_t = sf_t.view(torch.uint8).reshape(M, K // 16).numpy()
    q_t = q_t.view(torch.uint8).reshape(M, K // 2).numpy()

    xb = np.ascontiguousarray(x.view(torch.int16).numpy()).view(np.uint16)
    q = np.zeros((M, K // 2), dtype=np.uint8)
    sf = np.zeros((M, K // 16), dtype=np.uint8)
    a = QuantArgs(dtype=0, groups=1, rows=M, k=K, x=xb.ctypes.data, out_e2m1=q.ctypes.data, out_sf=sf.ctypes.data,
                  sf_layout=1, scale_value=s)
    rc = lib.nvfp4moe_ref_quantize_per_tensor(ctypes.byref(a))
    if rc != 0:
        print(f"FAIL quantizer_vs_torchao: {lib.nvfp4moe_last_error().decode()}")
        return 1

    f8 = ml_dtypes.float8_e4m3fn
    xf = x.float().numpy().reshape(M, K // 16, 16)
    amax = np.abs(xf).max(axis=-1).astype(np.float32)
    s32 = np.float32(s)
    ours_pre = amax * ((np.float32(1) / s32) * np.float32(1.0 / 6.0))  # f32 ops, as the contract
    theirs_pre = (amax / np.float32(6.0)) / s32
    sf_diff = sf != sf_t
    tiny = theirs_pre < np.float32(2.0 ** -6)
    # 1. boundary: the two pre-rounding values straddle a rounding boundary of e4m3
    cast = lambda v: np.clip(v, 0, 448).astype(f8).view(np.uint8)
    boundary = cast(ours_pre) != cast(theirs_pre)
    explained_sf = sf_diff & ((boundary & ~tiny) | tiny)
    unexplained_sf = int(np.sum(sf_diff & ~explained_sf))

    # 3. codes in blocks with equal SFs: the two scaled values straddle a cut point (or sit on one)
    same = ~sf_diff
    sff = sf.astype(np.uint8).view(f8).astype(np.float32)
    np.seterr(divide="ignore", invalid="ignore")  # blocks with SF 0 are not compared below
    out_ours = np.float32(1) / (sff * s32)
    out_theirs = (np.float32(1) / s32) / sff
    a_o = np.abs(xf * out_ours[..., None])
    a_t = np.abs(xf * out_theirs[..., None])
    cuts = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=np.float32)
    lo, hi = np.minimum(a_o, a_t), np.maximum(a_o, a_t)
    straddle = np.zeros(lo.shape, dtype=bool)
    for c in cuts:
        straddle |= (lo <= c) & (hi >= c)
    codes = np.stack([q & 15, q >> 4], axis=-1).reshape(M, K // 16, 16)
    codes_t = np.stack([q_t & 15, q_t >> 4], axis=-1).reshape(M, K // 16, 16)
    code_diff = (codes != codes_t) & same[..., None]
    unexplained_codes = int(np.sum(code_diff & ~straddle))

    n_blocks, n_elems = sf.size, M * K
    print(f"# {n_elems} elements, {n_blocks} blocks: SF differs in {int(sf_diff.sum())} blocks "
          f"({int((sf_diff & boundary & ~tiny).sum())} at an e4m3 boundary, {int((sf_diff & tiny).sum())} below 2^-6, clamped by torchao), "
          f"codes differ in {int(code_diff.sum())} elements of blocks with equal SFs (at an E2M1 cut point)")
    if unexplained_sf or unexplained_codes:
        print(f"FAIL quantizer_vs_torchao: {unexplained_sf} SF bytes and {unexplained_codes} codes differ without "
              f"one of the documented reasons")
        return 1
    normal = int(np.sum(~tiny))
    if int((sf_diff & ~tiny).sum()) > normal // 20:  # boundary cases are rare; many would mean another formula
        print(f"FAIL quantizer_vs_torchao: {int((sf_diff & ~tiny).sum())} of {normal} normal-range SFs differ")
        return 1
    print(f"PASS quantizer_vs_torchao ({n_elems} elements, every difference explained)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
