// gemm_sm100.cu -- masked grouped NVFP4 GEMM (NT) on SM100 with the native block-scaled
// tensor-core MMA: tcgen05.mma kind::mxf4nvf4, ue4m3 scales from tensor memory.
// Same contract as gemm_portable.cu (NUMERICS.md 4). COMPILED AND REVIEWED, NOT RUN: no
// SM100 GPU was available; the library self-tests it against the portable kernel at
// first use and falls back on a mismatch.
//
// Roles (192 threads, persistent, one CTA per SM):
//   warp 0      producer: TMA of the A/B tiles (128-byte swizzle), bulk copy of the SF atoms
//   warp 1      allocates TMEM; one lane issues tcgen05.cp (SFs) and tcgen05.mma
//   warps 2..5  epilogue: tcgen05.ld of the accumulator, alpha * row_scale, bf16 stores
//               for rows < masked_m and columns < N only
// Tile 128 (tokens, M) x NVF_BN (weights, N) x 256 (K); NVF_STAGES smem stages; two TMEM
// accumulators so the epilogue of one tile overlaps the MMAs of the next.
//
// Facts this relies on (ISA text, CUTLASS's own encoders for the numbers; see
// tests/test_sm100_encoders.c and docs/sm100.md): idesc / smem-descriptor bit layouts,
// the TMEM scale-factor layout for scale_vec::4X (row r -> lane r%32, column base + r/32,
// byte = SF index, replicated to 4 lane quarters by .32x128b.warpx4), K-step of 32 bytes
// inside a 128-byte swizzle atom, and cp -> mma ordering without a wait.
#include "common.cuh"
#include "ptx_tcgen05.cuh"
#include "scheduler.cuh"

#ifndef NVF_BN
#define NVF_BN 128
#endif
#define NVF_BM 128
#define NVF_BK 256                    // K elements per stage = 128 bytes per row = one swizzle atom
#define NVF_STAGES 5
#define NVF_A_BYTES (NVF_BM * 128)    // 16 KB
#define NVF_B_BYTES (NVF_BN * 128)
#define NVF_SF_BYTES 2048             // 4 atoms of 512 bytes = 128 rows x 16 SFs
#define NVF_STAGE_BYTES (NVF_A_BYTES + NVF_B_BYTES + 2 * NVF_SF_BYTES)
#define NVF_THREADS 192
// TMEM columns: accumulators at 0 and NVF_BN; per stage 16 SFA + 16 SFB columns after them.
#define NVF_ACC_COLS (2 * NVF_BN)
#define NVF_SF_COL(stage) (NVF_ACC_COLS + 32 * (stage))
#define NVF_TMEM_COLS 512

static_assert(NVF_BN == 128, "one SFB atom per MMA assumes a 128-row B tile");
static_assert(NVF_ACC_COLS + 32 * NVF_STAGES <= NVF_TMEM_COLS, "TMEM budget");
static_assert(NVF_STAGE_BYTES % 1024 == 0, "swizzled tiles need 1024-byte alignment");

struct __align__(64) NvfSm100Params {
  NvfTensorMap tma_a;     // UINT8 {K/2, m_max, G}, box {128, 128, 1}, 128B swizzle
  NvfTensorMap tma_b;     // UINT8 {K/2, N, G},     box {128, 128, 1}, 128B swizzle
  const u8* a_sf;         // 128x4, per group roundup(m_max,128)*4*Kc4 bytes
  const u8* b_sf;         // 128x4, per group roundup(N,128)*4*Kc4 bytes
  const int* masked_m;
  const float* alpha;     // or null
  const float* row_scale; // or null
  u16* d;
  i64 ldd;
  int groups, m_max, n, k;
  u32 idesc;              // nvfp4moe_sm100_idesc_mxf4nvf4(128, NVF_BN)
  u32 pad0;
  u64 desc_ab;            // smem descriptor of an A/B tile at address 0 (LBO 16, SBO 1024, 128B swizzle)
  u64 desc_sf;            // smem descriptor of an SF atom at address 0 (LBO 16, SBO 128, no swizzle)
};

struct NvfSm100Shared {
  u64 full[NVF_STAGES], empty[NVF_STAGES], tmem_full[2], tmem_empty[2];
  u32 tmem_base;
};

extern "C" __global__ void __launch_bounds__(NVF_THREADS, 1)
nvf_gemm_sm100(const __grid_constant__ NvfSm100Params p) {
  nvf_pdl_enter();
  extern __shared__ u8 smem_raw[];
  __shared__ NvfSm100Shared sh;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // the 128-byte swizzle pattern is anchored to 1024-byte boundaries
  const u32 smem_base = (nvf_smem_u32(smem_raw) + 1023u) & ~1023u;
  const int kt_count = (p.k + NVF_BK - 1) / NVF_BK, kc4 = (p.k / 16 + 3) / 4;
  const int n_tiles = (p.n + NVF_BN - 1) / NVF_BN;
  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k), sfb_g = nvf_sf_group_bytes_128x4(p.n, p.k);

  if (threadIdx.x == 0) {
    for (int s = 0; s < NVF_STAGES; ++s) {
      nvf_mbar_init(nvf_smem_u32(&sh.full[s]), 1);
      nvf_mbar_init(nvf_smem_u32(&sh.empty[s]), 1);
    }
    for (int a = 0; a < 2; ++a) {
      nvf_mbar_init(nvf_smem_u32(&sh.tmem_full[a]), 1);
      nvf_mbar_init(nvf_smem_u32(&sh.tmem_empty[a]), 128); // every epilogue thread arrives
    }
    nvf_fence_mbar_init();
  }
  if (warp == 1) nvf_tmem_alloc(nvf_smem_u32(&sh.tmem_base), NVF_TMEM_COLS);
  nvf_tc_fence_before();
  __syncthreads();
  nvf_tc_fence_after();
  const u32 tmem = sh.tmem_base;

  NvfMaskedScheduler sched;
  sched.init(p.masked_m, p.groups, p.m_max, NVF_BM, n_tiles);
  NvfTile t;

  if (warp == 0 && lane == 0) {
    // ---- producer ----
    int stage = 0;
    u32 phase = 0;
    for (i64 ti = blockIdx.x; sched.get(ti, t); ti += gridDim.x) {
      const u8* sfa = p.a_sf + t.g * sfa_g + ((i64)t.m_tile * kc4) * 512;
      const u8* sfb = p.b_sf + t.g * sfb_g + ((i64)t.n_tile * kc4) * 512;
      for (int kt = 0; kt < kt_count; ++kt) {
        const int atoms = kc4 - 4 * kt < 4 ? kc4 - 4 * kt : 4; // one atom per K=64 MMA
        const u32 bar = nvf_smem_u32(&sh.full[stage]);
        const u32 st = smem_base + stage * NVF_STAGE_BYTES;
        nvf_mbar_wait(nvf_smem_u32(&sh.empty[stage]), phase ^ 1u);
        // TMA counts the whole box, out-of-bounds bytes (zero-filled) included
        nvf_mbar_expect_tx(bar, NVF_A_BYTES + NVF_B_BYTES + 2u * 512u * (u32)atoms);
        nvf_tma_load_3d(st, &p.tma_a, kt * 128, t.m_tile * NVF_BM, t.g, bar);
        nvf_tma_load_3d(st + NVF_A_BYTES, &p.tma_b, kt * 128, t.n_tile * NVF_BN, t.g, bar);
        nvf_bulk_load(st + NVF_A_BYTES + NVF_B_BYTES, sfa + (i64)kt * 2048, 512u * (u32)atoms, bar);
        nvf_bulk_load(st + NVF_A_BYTES + NVF_B_BYTES + NVF_SF_BYTES, sfb + (i64)kt * 2048, 512u * (u32)atoms, bar);
        if (++stage == NVF_STAGES) { stage = 0; phase ^= 1u; }
      }
    }
  } else if (warp == 1 && lane == 0) {
    // ---- MMA issuer ----
    int stage = 0, acc = 0;
    u32 phase = 0, acc_phase = 0;
    for (i64 ti = blockIdx.x; sched.get(ti, t); ti += gridDim.x) {
      nvf_mbar_wait(nvf_smem_u32(&sh.tmem_empty[acc]), acc_phase ^ 1u);
      nvf_tc_fence_after();
      const u32 d = tmem + (u32)(acc * NVF_BN);
      for (int kt = 0; kt < kt_count; ++kt) {
        const int atoms = kc4 - 4 * kt < 4 ? kc4 - 4 * kt : 4;
        const u32 st = smem_base + stage * NVF_STAGE_BYTES;
        const u32 sfa_t = tmem + NVF_SF_COL(stage), sfb_t = sfa_t + 16;
        nvf_mbar_wait(nvf_smem_u32(&sh.full[stage]), phase);
        nvf_tc_fence_after();
        for (int j = 0; j < atoms; ++j) {
          const u32 sa = st + NVF_A_BYTES + NVF_B_BYTES + 512u * j, sb = sa + NVF_SF_BYTES;
          nvf_tmem_cp_sf(sfa_t + 4u * j, p.desc_sf | (u64)((sa & 0x3FFFFu) >> 4));
          nvf_tmem_cp_sf(sfb_t + 4u * j, p.desc_sf | (u64)((sb & 0x3FFFFu) >> 4));
        }
        // cp -> mma of one thread execute in issue order (PTX: pipelined tcgen05 instructions)
        for (int j = 0; j < atoms; ++j) {
          const u32 a_lo = ((st & 0x3FFFFu) >> 4) + 2u * j; // +32 bytes of K per MMA
          const u32 b_lo = (((st + NVF_A_BYTES) & 0x3FFFFu) >> 4) + 2u * j;
          nvf_mma_mxf4nvf4(d, p.desc_ab | a_lo, p.desc_ab | b_lo, p.idesc, sfa_t + 4u * j, sfb_t + 4u * j,
                           (kt > 0 || j > 0) ? 1u : 0u);
        }
        nvf_tc_commit(nvf_smem_u32(&sh.empty[stage])); // frees the stage once these MMAs are done
        if (++stage == NVF_STAGES) { stage = 0; phase ^= 1u; }
      }
      nvf_tc_commit(nvf_smem_u32(&sh.tmem_full[acc]));
      if (++acc == 2) { acc = 0; acc_phase ^= 1u; }
    }
  } else if (warp >= 2) {
    // ---- epilogue: warp w reads TMEM lanes 32*(w%4) .. +31 ----
    const int quarter = warp & 3;
    int acc = 0;
    u32 acc_phase = 0;
    for (i64 ti = blockIdx.x; sched.get(ti, t); ti += gridDim.x) {
      nvf_mbar_wait(nvf_smem_u32(&sh.tmem_full[acc]), acc_phase);
      nvf_tc_fence_after();
      const int m = t.m_tile * NVF_BM + quarter * 32 + lane;
      const bool row_ok = m < t.valid_m;
      float sc = 0.0f;
      if (row_ok) {
        const float alpha = p.alpha ? p.alpha[t.g] : 1.0f;
        sc = __fmul_rn(alpha, p.row_scale ? p.row_scale[(i64)t.g * p.m_max + m] : 1.0f);
      }
      u16* drow = p.d + ((i64)t.g * p.m_max + (row_ok ? m : 0)) * p.ldd;
      #pragma unroll 1
      for (int c = 0; c < NVF_BN / 32; ++c) {
        u32 v[32];
        nvf_tmem_ld32(tmem + ((u32)(quarter * 32) << 16) + (u32)(acc * NVF_BN + c * 32), v);
        if (row_ok) {
          #pragma unroll
          for (int g8 = 0; g8 < 4; ++g8) {
            const int n = t.n_tile * NVF_BN + c * 32 + g8 * 8;
            if (n < p.n) {
              uint4 o;
              o.x = nvf_pack_bf16x2(__fmul_rn(sc, __uint_as_float(v[g8 * 8 + 0])), __fmul_rn(sc, __uint_as_float(v[g8 * 8 + 1])));
              o.y = nvf_pack_bf16x2(__fmul_rn(sc, __uint_as_float(v[g8 * 8 + 2])), __fmul_rn(sc, __uint_as_float(v[g8 * 8 + 3])));
              o.z = nvf_pack_bf16x2(__fmul_rn(sc, __uint_as_float(v[g8 * 8 + 4])), __fmul_rn(sc, __uint_as_float(v[g8 * 8 + 5])));
              o.w = nvf_pack_bf16x2(__fmul_rn(sc, __uint_as_float(v[g8 * 8 + 6])), __fmul_rn(sc, __uint_as_float(v[g8 * 8 + 7])));
              *(uint4*)(drow + n) = o;
            }
          }
        }
      }
      nvf_tc_fence_before();
      nvf_mbar_arrive(nvf_smem_u32(&sh.tmem_empty[acc]));
      if (++acc == 2) { acc = 0; acc_phase ^= 1u; }
    }
  }
  __syncthreads();
  if (warp == 1) {
    nvf_tc_fence_after();
    nvf_tmem_dealloc(tmem, NVF_TMEM_COLS);
  }
}
