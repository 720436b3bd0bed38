// gemm_wgmma_step.cuh -- the weight side of the swap-AB wgmma step and its epilogue, shared by
// gemm_wgmma.cu and gemm_wgmma_ws.cu (which differ in how the tokens reach shared memory).
// Include after NVF_TOK (the tile's tokens: the wgmma N, and the B layout's MMA stride) is defined.
//
// A thread of an MMA quad owns weight rows r0 and r0 + 8 of its warpgroup's 64 and loads
// 16 bytes (32 consecutive K elements, piece t = lane % 4) of each per 128-K step, with the
// two SF bytes of each piece; widened, they are the A fragments of the step's 8 k16 MMAs as
// the pairs (e, e + 4) of each 8-element word (the tokens are stored in the same K order).
#pragma once
#include "common.cuh"
#include "gemm_common.cuh"
#include "ptx_wgmma.cuh"
#include "dequant_bf16.cuh"

#ifndef NVF_WSTRONG
#define NVF_WSTRONG 0 // 1: the weights by strong loads (nvf_ldg_weights)
#endif

// NVF_WKFULL (the _k256 twins of the TILED token-producer tiles, which the host runs where K % 256 == 0):
// the step's loads without predicates or zero fills, 6-7 % fewer instructions a step (bench/NOTES.md,
// twenty-ninth session, X45 and X46: -0.4 to -5.3 % at 32 and 128 tokens). Every piece of every step lies
// inside K and the steps are whole rounds of two; rows past N read rows N - 16 .. N - 1 instead
// (their results are never stored; N % 16 == 0 and r0 % 16 < 8, so r0 and r0 + 8 are both in or both
// out), and a step loaded past the last reads step s - nsteps (nvf_wg_step_in; never widened).
struct NvfWgRows {
  const u8* w0; // piece t of row r0, step 0
  const u8* w1; // row r0 + 8
  const u8* sf; // SF pair of row r0, step 0 (step s at + 1024 s; row r0 + 8 is 128 bytes on)
  int t;
  bool ok0, ok1; // rows inside N
};

NVF_DEV NvfWgRows nvf_wg_rows(const NvfGemmParams& p, int g, int r0, int t, int kc4) {
  NvfWgRows w;
#if NVF_WKFULL
  if (r0 >= p.n) r0 = p.n - 16 + (r0 & 15); // (ok0, ok1 below then go unused: the loads take no predicates)
#endif
  w.w0 = nvf_wpiece(p, g, r0, t);
  w.w1 = w.w0 + NVF_WROW8(p);
  // 128x4: columns 8s + 2t, 8s + 2t + 1 of row r0; row r0 + 8 is in the same 32-row group (r0 % 32 < 24)
  w.sf = p.b_sf + g * nvf_sf_group_bytes_128x4(p.n, p.k) + nvf_sf_offset_128x4(r0, 2 * t, kc4);
  w.t = t;
  w.ok0 = r0 < p.n;
  w.ok1 = r0 + 8 < p.n;
  return w;
}
// nvf_step_in (gemm_common.cuh) at this tile's depth
template <bool AHEAD> NVF_DEV int nvf_wg_step_in(int s, int nsteps) { return nvf_step_in<AHEAD, NVF_DEPTH>(s, nsteps); }

// Step s's two pieces and SF pairs; zeros past K, past the steps and for rows past N.
template <bool WIDE> NVF_DEV void nvf_wg_load(const NvfWgRows& w, int s, int nsteps, int k, uint4* q, u32* sf) {
#if NVF_WIMM_ON // (TILED: both rows' loads from one address, NVF_LDG_ROW8)
  const u8* const a0 = w.w0 + (i64)s * NVF_WSTEP_BYTES;
#define NVF_WG_A0 a0
#else // (row-major: each load's address inside its branch, as before 0.5.1; computed ahead it lengthened the loops)
#define NVF_WG_A0 (w.w0 + (i64)s * NVF_WSTEP_BYTES)
#endif
#if NVF_WKFULL
  q[0] = nvf_ldg_weights<WIDE, NVF_WSTRONG>(NVF_WG_A0);
  q[1] = NVF_LDG_ROW8(WIDE, NVF_WSTRONG, NVF_WG_A0, w.w1 + (i64)s * NVF_WSTEP_BYTES);
  sf[0] = *(const u16*)(w.sf + (i64)s * 1024);
  sf[1] = *(const u16*)(w.sf + (i64)s * 1024 + 128);
#else
  const bool in = s < nsteps && s * 128 + 32 * w.t < k;
  q[0] = (in && w.ok0) ? nvf_ldg_weights<WIDE, NVF_WSTRONG>(NVF_WG_A0) : make_uint4(0, 0, 0, 0);
  q[1] = (in && w.ok1) ? NVF_LDG_ROW8(WIDE, NVF_WSTRONG, NVF_WG_A0, w.w1 + (i64)s * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);
  sf[0] = (in && w.ok0) ? *(const u16*)(w.sf + (i64)s * 1024) : 0u;
  sf[1] = (in && w.ok1) ? *(const u16*)(w.sf + (i64)s * 1024 + 128) : 0u;
#endif
#undef NVF_WG_A0
}

// The step's 8 MMAs, N = TN tokens (the tile's NVF_TOK, or fewer where a tile holds fewer: the
// first TN tokens, the same accumulator prefix): widened weights a[] (row r0: 0..15, row r0 + 8:
// 16..31), B of MMA i at buf + i NVF_TOK 32 (K-major core matrices, lbo 128, sbo 256).
// MMA i's descriptor is MMA 0's plus i NVF_TOK 32 / 16 in the address field (buf + 8 NVF_TOK 32 <
// 256 KB: no carry out of it), one uniform add each instead of building each from its address.
template <int TN> NVF_DEV void nvf_wg_mmas_n(float* acc, const u32* a, u32 buf) {
  const u64 d0 = nvf_wgmma_desc(buf, 128, 256);
  #pragma unroll
  for (int i = 0; i < 8; ++i) {
    const u32 af[4] = {a[2 * i], a[16 + 2 * i], a[2 * i + 1], a[16 + 2 * i + 1]};
    nvf_wgmma_rs<TN>(acc, af, d0 + (u64)(i * (NVF_TOK * 32 / 16)));
  }
}
NVF_DEV void nvf_wg_mmas(float* acc, const u32* a, u32 buf) { nvf_wg_mmas_n<NVF_TOK>(acc, a, buf); }

// D[g, m, n] for tokens m < valid and weight rows n < N from the m64nNk16 accumulator layout (a
// tile that ran a smaller N left the rest of acc at zero, for tokens past valid).
NVF_DEV void nvf_wg_epilogue(const NvfGemmParams& p, int g, int valid, float alpha, int tok0, int r0, int t,
                             const float* acc) {
  #pragma unroll
  for (int j = 0; j < NVF_TOK / 8; ++j)
    #pragma unroll
    for (int e = 0; e < 4; ++e)
      nvf_store_swapab(p, g, valid, alpha, tok0 + j * 8 + 2 * t + (e & 1), r0 + (e >> 1) * 8, acc[4 * j + e]);
}

// 16 bytes to shared memory: through a generic pointer, or a shared-window address (st.shared,
// which the token producer uses: its slot addresses are 32-bit).
NVF_DEV void nvf_st16_shared(u8* p, uint4 v) { *(uint4*)p = v; }
NVF_DEV void nvf_st16_shared(u32 a, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// The token side: one token's raw 128-K step (its four 16-byte pieces q[] and two SF words
// sfw[], K element kel0 first) widened into the layout the MMAs read, 8 MMAs x NVF_TOK / 8
// core-matrix rows x 2 K halves x 8 tokens x 16 bytes (lbo 128, sbo 256): word j of piece t
// gives the pairs (8j + p, 8j + p + 4), p = 0..3, of K slots 2t, 2t + 1 of MMA 2j + p / 2, K half
// p % 2, so the four pieces fill one 16-byte core-matrix row per (MMA, half). base: the token's
// row in MMA 0, half 0 (a pointer or a shared address). A piece past K (zero codes) takes SF 0,
// not the row's padding SF bytes.
// Both SFs of a piece in one register where NVF_SFPACK_ON (dequant_bf16.cuh, sm_89+) only where
// PACK (the pre-pass kernel): packed, the producer warpgroups (56 registers) spilled in their
// widening loop (the no-workspace path; ptxas 13.0, sm_90a: 12 bytes at 32 tokens, 28 at 128,
// none now). gemm_wgmma.cu's staging keeps the same two-register form. Same-process A/B,
// two rounds in both orders (bench/NOTES.md, twenty-ninth session, X44): without a workspace
// -5.6 to +3.9 % (mean -0.8 %), with one -2.8 to +0.7 % (mean -0.5 %), layers -2.5 to +0.7 %.
// Tuning runs: -DNVF_PPACK=1 packs everywhere (the form X39 and the twenty-eighth session's final
// run measured).
template <bool PACK = false, typename Dst>
NVF_DEV void nvf_wg_widen_token(const uint4* q, const u32* sfw, int kel0, int k, Dst base) {
#if defined(NVF_PPACK) && NVF_PPACK
  constexpr bool pk = NVF_SFPACK_ON;
#else
  constexpr bool pk = PACK && NVF_SFPACK_ON;
#endif
  u32 s0[4], s1[4]; // pk: s0[t] holds both SFs of piece t
  #pragma unroll
  for (int t = 0; t < 4; ++t) {
    const bool in = kel0 + 32 * t < k;
    if (pk) s0[t] = nvf_sf2_to_bf16x2_packed(in ? sfw[t >> 1] >> (16 * (t & 1)) : 0u);
    else nvf_sf2_to_bf16x2(in ? sfw[t >> 1] >> (16 * (t & 1)) : 0u, s0[t], s1[t]);
  }
  #pragma unroll
  for (int j = 0; j < 4; ++j) {
    u32 r[4][4];
    #pragma unroll
    for (int t = 0; t < 4; ++t) {
      nvf_fp4x8_to_bf16x2((&q[t].x)[j], r[t]);
      #pragma unroll
      for (int pp = 0; pp < 4; ++pp)
        r[t][pp] = !pk ? nvf_bf16x2_mul(r[t][pp], j < 2 ? s0[t] : s1[t])
                 : j < 2 ? nvf_bf16x2_mul_half<0>(r[t][pp], s0[t]) : nvf_bf16x2_mul_half<1>(r[t][pp], s0[t]);
    }
    #pragma unroll
    for (int pp = 0; pp < 4; ++pp)
      nvf_st16_shared(base + (2 * j + (pp >> 1)) * (NVF_TOK * 32) + (pp & 1) * 128,
                      make_uint4(r[0][pp], r[1][pp], r[2][pp], r[3][pp]));
  }
}
