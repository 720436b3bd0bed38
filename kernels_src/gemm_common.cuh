// gemm_common.cuh -- what the mma.sync and wgmma GEMMs share: the launch parameters
// (mirrored by nvfp4moe__gemm_params on the host) and the swap-AB epilogue store.
#pragma once
#include "common.cuh"

struct NvfGemmParams {
  const u8* a;            // [G, m_max, k/2]
  const u8* a_sf;         // 128x4 over m_max rows, per group
  const u8* b;            // [G, n, k/2]
  const u8* b_sf;         // 128x4 over n rows, per group
  const int* masked_m;    // [G]
  const float* alpha;     // [G] or null (1)
  const float* row_scale; // [G, m_max] or null (1)
  u16* d;                 // bf16 [G, m_max, ldd]
  i64 ldd;
  int groups, m_max, n, k;
};

// One element of a swap-AB accumulator (token m, weight row n) to D[g, m, n]: undoes the
// 2^-8 * 2^-8 of the widened operands exactly, applies alpha and the row scale. Only for
// m < valid and n < N (rows past masked_m are never written).
NVF_DEV void nvf_store_swapab(const NvfGemmParams& p, int g, int valid, float alpha, int m, int n, float acc) {
  if (m < valid && n < p.n) {
    const float rs = p.row_scale ? p.row_scale[(i64)g * p.m_max + m] : 1.0f;
    const float v = __fmul_rn(__fmul_rn(alpha, rs), __fmul_rn(acc, 65536.0f));
    p.d[((i64)g * p.m_max + m) * p.ldd + n] = (u16)nvf_f32_to_bf16(v);
  }
}
