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
  u8* tok_ws; // widened tokens of the token-producer (gemm_wgmma_ws.cu) and swap-AB tiles, or null: widened in the GEMM
  int tiles_m; // token tiles per (group, row block) of a persistent token-producer grid (NVF_PERSIST), else 0
  int ptab;    // 1: that grid numbers its units without gaps, from a table in shared memory (gemm_wgmma_ws.cu)
};

// 16 bytes of a weight row (read-only path). Each step reads 64 bytes of a row, and rows are
// K/2 bytes apart. WIDE (the host's choice for long rows, K >= 2560): an L2 miss fetches the
// whole aligned 256-byte block, the row's next three steps too, so DRAM serves 256-byte reads
// instead of 64-byte pieces of rows 3.5 KB apart (-15 % at K = 7168 and m <= 8; bench/NOTES.md,
// seventh session). A compile-time choice: a run-time predicate on the load cost 4-6 %.
// Volatile: a load past the weights must not be speculated out of the caller's bounds test.
// Tuning runs: NVF_WL2=0 makes the WIDE kernels plain.
// STRONG: ld.relaxed.gpu instead of ld.global.nc. With the .nc form ptxas sinks the 32-token
// tile's step-0 loads into step 1 (both steps' loads then in flight one step instead of two); a
// strong load stays in the step that issues it (bench/NOTES.md, twenty-eighth session, X38). The
// data is read-only, so relaxed is enough. Tuning runs: NVF_WLDG=0 makes every load .nc.
// OFF: bytes past p, as the load's immediate offset ([p+OFF]): a step's two rows (TILED: 512 bytes
// apart) then share one address register, one IMAD.WIDE a step fewer (NVF_WIMM below).
// -DNVF_WHINT=1 (opt-in, tuning runs; fifty-fifth session): every weight load here also asks L2 to evict its
// line first (an evict_first policy), and the token producer's slot-image copies (gemm_wgmma_ws.cu; not the
// swap-AB tiles' token copies) to keep theirs (evict_last, which may do nothing without a persisting-L2 set-aside):
// the weights are read once, the slot images by every row block of their group. X91's Nsight
// (H100, 32 tokens) had the L2 at 81 % of a peak beside DRAM's 82 %; whether the weight stream pushing the
// images out is part of that is what the A/B asks.
#ifndef NVF_WHINT
#define NVF_WHINT 0
#endif
// (Hopper's ld takes .L2::evict_first only on 256-bit loads: a policy register and .L2::cache_hint instead;
// the createpolicy is not volatile, so ptxas may keep one policy or remake it.)
NVF_DEV u64 nvf_policy_evict_first() {
  u64 pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
#if NVF_WHINT
#define NVF_WL2HINT ".L2::cache_hint"
#define NVF_WPOL , "l"(nvf_policy_evict_first())
#define NVF_WPOLARG ", %6"
#else
#define NVF_WL2HINT ""
#define NVF_WPOL
#define NVF_WPOLARG ""
#endif
template <bool WIDE, bool STRONG = false, int OFF = 0> NVF_DEV uint4 nvf_ldg_weights(const u8* p) {
#if !defined(NVF_WL2) || NVF_WL2 != 0
  if (WIDE) {
    uint4 v;
#if !defined(NVF_WLDG) || NVF_WLDG
    if (STRONG)
      asm volatile("ld.relaxed.gpu.global" NVF_WL2HINT ".L2::256B.v4.u32 {%0, %1, %2, %3}, [%4+%5]" NVF_WPOLARG ";"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "n"(OFF) NVF_WPOL);
    else
#endif
      asm volatile("ld.global.nc" NVF_WL2HINT ".L2::256B.v4.u32 {%0, %1, %2, %3}, [%4+%5]" NVF_WPOLARG ";"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "n"(OFF) NVF_WPOL);
    return v;
  }
#endif
#if !defined(NVF_WLDG) || NVF_WLDG
  if (STRONG) {
    uint4 v;
    asm volatile("ld.relaxed.gpu.global" NVF_WL2HINT ".v4.u32 {%0, %1, %2, %3}, [%4+%5]" NVF_WPOLARG ";"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "n"(OFF) NVF_WPOL);
    return v;
  }
#endif
#if NVF_WHINT
  uint4 v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4+%5], %6;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "n"(OFF), "l"(nvf_policy_evict_first()));
  return v;
#else
  return __ldg((const uint4*)(p + OFF));
#endif
}

// Weight layouts (nvfp4moe_weight_layout). Row-major: row n of group g at (g N + n) K/2, as
// ModelOpt and FlashInfer store it. Tiled (the host builds a module with -DNVF_WTILED=1 for
// it; N % 16 == 0): the rows in 16-row tiles, a tile's 16 rows x 64 bytes (128 K) of one step
// contiguous, 1 KB, the steps of a tile one after another; with RB = ceil(K / 128) 64 (K/2,
// a last partial step padded to a whole one), byte o of row n (o < K/2) at
// (g N + n - n % 16) RB + (o / 64) 1024 + (n % 16) 64 + o % 64, each 4-byte word's codes
// re-encoded (dequant_bf16.cuh, nvf_wenc_word). The bytes so placed: a warp of the swap-AB and
// wgmma kernels reads 1 KB in one piece per step instead of 64 bytes from each of 16 rows (and,
// re-encoded, is widened in fewer instructions; bench/NOTES.md has the H200 numbers); the
// padding is never read (every load stops at K).
// NVF_WKFULL: K % 256 == 0 promised, so the weight loads need no predicates (gemm_wgmma_step.cuh)
#ifndef NVF_WKFULL
#define NVF_WKFULL 0
#endif
// The step the loads read for step s under NVF_WKFULL (never widened where it differs), with DEPTH
// steps in flight. AHEAD: s may pass the last step by up to DEPTH (a loop loading ahead; with two
// steps in flight and nsteps >= 2, s < 2 nsteps: s - nsteps); else s < nsteps with two steps in
// flight (a prologue, the resident loop). Deeper pipelines (probes, tuning depths, the swap-AB
// 32/48-token tiles) wrap by s % nsteps.
template <bool AHEAD, int DEPTH> NVF_DEV int nvf_step_in(int s, int nsteps) {
  if (!NVF_WKFULL) return s;
  if (DEPTH != 2) return s % nsteps;
  return AHEAD && s >= nsteps ? s - nsteps : s;
}
#if defined(NVF_WTILED) && NVF_WTILED
#define NVF_WSTEP_BYTES 1024 // bytes between the 128-K steps of a row
#define NVF_WROWB(p) ((((i64)(p).k + 127) >> 7) << 6) // RB above
#else
#define NVF_WSTEP_BYTES 64
#endif
// Byte 16 t of step 0 of row r0 of group g (a 16-byte piece; the step's next pieces follow).
NVF_DEV const u8* nvf_wpiece(const NvfGemmParams& p, int g, int r0, int t) {
#if defined(NVF_WTILED) && NVF_WTILED
  return p.b + ((i64)g * p.n + (r0 & ~15)) * NVF_WROWB(p) + (r0 & 15) * 64 + 16 * t;
#else
  return p.b + ((i64)g * p.n + r0) * (p.k / 2) + 16 * t;
#endif
}
// Bytes from row r to row r + 8 (same 16-row tile: r % 16 < 8).
#if defined(NVF_WTILED) && NVF_WTILED
#define NVF_WROW8(p) (8 * 64)
#else
#define NVF_WROW8(p) ((i64)8 * ((p).k / 2))
#endif
// Row r + 8's 16 bytes of a step at a (row r's piece of that step): on TILED weights at the load's
// immediate offset from a, so both loads share a's address (ptxas otherwise keeps a base and an
// IMAD.WIDE a step for each row). Tuning runs: -DNVF_WIMM=0, a second base as before 0.5.1.
#if defined(NVF_WTILED) && NVF_WTILED && (!defined(NVF_WIMM) || NVF_WIMM)
#define NVF_WIMM_ON 1
#define NVF_LDG_ROW8(WIDE, STRONG, a, w1) nvf_ldg_weights<WIDE, STRONG, 8 * 64>(a) // (NVF_WROW8 on TILED)
#else
#define NVF_WIMM_ON 0
#define NVF_LDG_ROW8(WIDE, STRONG, a, w1) nvf_ldg_weights<WIDE, STRONG>(w1)
#endif
// Byte o (0 <= o < K/2, 16-byte aligned) of row r of group g, any access pattern.
NVF_DEV const u8* nvf_wbyte(const NvfGemmParams& p, int g, i64 r, int o) {
#if defined(NVF_WTILED) && NVF_WTILED
  return p.b + ((i64)g * p.n + (r & ~(i64)15)) * NVF_WROWB(p) + (i64)(o >> 6) * 1024 + (r & 15) * 64 + (o & 63);
#else
  return p.b + ((i64)g * p.n + r) * (p.k / 2) + o;
#endif
}

// The entry points of a swap-AB or wgmma module, BODY<WIDE>(p) its kernel body. Row-major
// weights: NAME (plain loads) and NAME_l2 (256-byte L2 fetches); the host picks by K. Tiled
// weights (-DNVF_WTILED=1, the host's twin of the module): NAME_tiled alone, plain loads (a warp
// reads 1 KB in one piece; the 256-byte fetch measured the same).
#if defined(NVF_WTILED) && NVF_WTILED
#define NVF_GEMM_ENTRY_POINTS(NAME, BODY, THREADS, MINB)                                         \
  extern "C" __global__ void __launch_bounds__(THREADS, MINB) NAME##_tiled(const NvfGemmParams p) { \
    nvf_pdl_enter();                                                                              \
    BODY<false>(p);                                                                               \
  }
#else
#define NVF_GEMM_ENTRY_POINTS(NAME, BODY, THREADS, MINB)                                         \
  extern "C" __global__ void __launch_bounds__(THREADS, MINB) NAME(const NvfGemmParams p) {        \
    nvf_pdl_enter();                                                                              \
    BODY<false>(p);                                                                               \
  }                                                                                               \
  extern "C" __global__ void __launch_bounds__(THREADS, MINB) NAME##_l2(const NvfGemmParams p) {   \
    nvf_pdl_enter();                                                                              \
    BODY<true>(p);                                                                                \
  }
#endif

// One element of a swap-AB accumulator (token m, weight row n) to D[g, m, n]: undoes the
// 2^-8 * 2^-8 of the widened operands exactly, applies alpha and the row scale. Only for
// m < valid and n < N (rows past masked_m are never written).
NVF_DEV void nvf_store_swapab(const NvfGemmParams& p, int g, int valid, float alpha, int m, int n, float acc) {
  if (m < valid && n < p.n) {
    const float rs = p.row_scale ? p.row_scale[(i64)g * p.m_max + m] : 1.0f;
    const float v = __fmul_rn(__fmul_rn(alpha, rs), __fmul_rn(acc, NVF_DEQ_SCALE2));
    p.d[((i64)g * p.m_max + m) * p.ldd + n] = (u16)nvf_f32_to_bf16(v);
  }
}
