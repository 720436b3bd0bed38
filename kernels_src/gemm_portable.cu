// gemm_portable.cu -- masked grouped NVFP4 GEMM (NT) for sm_80 and newer.
//
// D[g, m, n] = bf16(alpha[g] * row_scale[g, m] * sum_k deq(A)[g,m,k] * deq(B)[g,n,k])
// for m < masked_m[g]; other rows of D are never written (NUMERICS.md 4).
//
// Each K tile of A and B is dequantized exactly to BF16 in shared memory (e2m1 * e4m3
// has at most 6 significant bits, so it fits), then mma.sync m16n8k16 BF16 with F32
// accumulation. The dequantized values carry a factor 2^-8 each (see nvf_dequant_chunk)
// that the epilogue removes exactly. Register prefetch of the next K tile overlaps the
// global loads with the MMAs of the current one.
#include "common.cuh"
#include "gemm_common.cuh"
#include "ptx_mma.cuh"
#include "scheduler.cuh"
#include "dequant_bf16.cuh" // nvf_wdec_word (TILED weights)

#ifndef NVF_BM
#define NVF_BM 64
#endif
#ifndef NVF_WARPS_M
#define NVF_WARPS_M 2
#endif
#ifndef NVF_WARPS_N
#define NVF_WARPS_N 2
#endif
#define NVF_BN 128
#define NVF_BK 64 // elements: 32 bytes of E2M1 and one 4-byte group of SFs per row
#define NVF_THREADS (32 * NVF_WARPS_M * NVF_WARPS_N)
#define NVF_WM (NVF_BM / NVF_WARPS_M)
#define NVF_WN (NVF_BN / NVF_WARPS_N)
#define NVF_MI (NVF_WM / 16)
#define NVF_NI (NVF_WN / 8)
#define NVF_ROWS (NVF_BM + NVF_BN)
#define NVF_CHUNKS (2 * NVF_ROWS) // 16-byte chunks of packed E2M1 per K tile
#define NVF_RAW ((NVF_CHUNKS + NVF_THREADS - 1) / NVF_THREADS)
#define NVF_STAGE_BYTES (NVF_ROWS * NVF_BK * 2)

static_assert(NVF_WM % 16 == 0 && NVF_WN % 16 == 0, "warp tile must be 16-aligned");

// 16 bytes (32 E2M1 codes, two SF blocks) -> 32 BF16 values * 2^-8 each, as 4 x 16 bytes.
// A code's f32 bits (mag << 22 | sign << 31) are exactly its value * 2^-126 (0.5 lands
// on the subnormal 2^-127), and sf * 2^118 < 2^127 is exact, so the product is
// value * sf * 2^-8 exactly and its top 16 bits are the BF16.
NVF_DEV void nvf_dequant_chunk(uint4 raw, u32 sf2, uint4* out) {
  const float s0 = __fmul_rn(nvf_e4m3_to_f32(sf2 & 0xFFu), nvf_f32(0x7A800000u)); // * 2^118
  const float s1 = __fmul_rn(nvf_e4m3_to_f32((sf2 >> 8) & 0xFFu), nvf_f32(0x7A800000u));
  const u32 w[4] = {raw.x, raw.y, raw.z, raw.w};
  #pragma unroll
  for (int i = 0; i < 4; ++i) { // word i: codes 8i .. 8i+7
    const float sc = i < 2 ? s0 : s1;
    u32 o[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
      const u32 byte = (w[i] >> (8 * j)) & 0xFFu;
      const float lo = __uint_as_float(((byte & 7u) << 22) | ((byte & 8u) << 28));
      const float hi = __uint_as_float((((byte >> 4) & 7u) << 22) | ((byte & 0x80u) << 24));
      const u32 blo = __float_as_uint(__fmul_rn(lo, sc)) >> 16;
      const u32 bhi = __float_as_uint(__fmul_rn(hi, sc)) & 0xFFFF0000u;
      o[j] = blo | bhi;
    }
    out[i] = make_uint4(o[0], o[1], o[2], o[3]);
  }
}

// Shared tile row: 64 BF16 = 8 chunks of 16 bytes, XOR-swizzled by row so ldmatrix
// reads of 8 rows at one K offset hit 8 different bank groups.
NVF_DEV u32 nvf_tile_off(int row, int chunk) { return (u32)(row * 128 + ((chunk ^ (row & 7)) << 4)); }

struct NvfRawTile {
  uint4 data[NVF_RAW];
  u32 sf[NVF_RAW];
};

NVF_DEV void nvf_load_raw(const NvfGemmParams& p, const NvfTile& t, int kt, int kc4, NvfRawTile& raw) {
  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k), sfb_g = nvf_sf_group_bytes_128x4(p.n, p.k);
  #pragma unroll
  for (int i = 0; i < NVF_RAW; ++i) {
    const int c = threadIdx.x + i * NVF_THREADS, row = c >> 1, half = c & 1;
    raw.data[i] = make_uint4(0u, 0u, 0u, 0u);
    raw.sf[i] = 0u;
    if (c >= NVF_CHUNKS || kt * NVF_BK + half * 32 >= p.k) continue;
    const u8* src; const u8* sf; i64 r; // src: this thread's 16 bytes
    if (row < NVF_BM) {
      r = (i64)t.m_tile * NVF_BM + row;
      if (r >= t.valid_m) continue; // invalid rows of the masked layout are never read
      src = p.a + ((i64)t.g * p.m_max + r) * (p.k / 2) + kt * 32 + half * 16;
      sf = p.a_sf + t.g * sfa_g;
    } else {
      r = (i64)t.n_tile * NVF_BN + (row - NVF_BM);
      if (r >= p.n) continue;
      src = nvf_wbyte(p, t.g, r, kt * 32 + half * 16); // either weight layout
      sf = p.b_sf + t.g * sfb_g;
    }
    raw.data[i] = *(const uint4*)src;
    if (NVF_WT_ENC && row >= NVF_BM) { // TILED weights: back to plain codes (nvf_wdec_word)
      u32* w = &raw.data[i].x;
      #pragma unroll
      for (int j = 0; j < 4; ++j) w[j] = nvf_wdec_word(w[j]);
    }
    raw.sf[i] = *(const u32*)(sf + nvf_sf_offset_128x4(r, kt * 4, kc4)) >> (16 * half);
  }
}

NVF_DEV void nvf_store_tile(u8* stage, const NvfRawTile& raw) {
  #pragma unroll
  for (int i = 0; i < NVF_RAW; ++i) {
    const int c = threadIdx.x + i * NVF_THREADS, row = c >> 1, half = c & 1;
    if (c >= NVF_CHUNKS) continue;
    uint4 o[4];
    nvf_dequant_chunk(raw.data[i], raw.sf[i], o);
    #pragma unroll
    for (int j = 0; j < 4; ++j) *(uint4*)(stage + nvf_tile_off(row, half * 4 + j)) = o[j];
  }
}

extern "C" __global__ void __launch_bounds__(NVF_THREADS)
nvf_gemm_portable(const NvfGemmParams p) {
  nvf_pdl_enter();
  extern __shared__ __align__(128) u8 smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wm = warp / NVF_WARPS_N, wn = warp % NVF_WARPS_N;
  const int kc4 = (p.k / 16 + 3) / 4, kt_count = (p.k + NVF_BK - 1) / NVF_BK;
  const int n_tiles = (p.n + NVF_BN - 1) / NVF_BN;

  NvfMaskedScheduler sched;
  sched.init(p.masked_m, p.groups, p.m_max, NVF_BM, n_tiles);
  NvfTile t;
  for (i64 ti = blockIdx.x; sched.get(ti, t); ti += gridDim.x) {
    float acc[NVF_MI][NVF_NI][4];
    #pragma unroll
    for (int mi = 0; mi < NVF_MI; ++mi)
      #pragma unroll
      for (int ni = 0; ni < NVF_NI; ++ni)
        #pragma unroll
        for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;

    NvfRawTile raw;
    nvf_load_raw(p, t, 0, kc4, raw);
    nvf_store_tile(smem, raw);
    __syncthreads();
    for (int kt = 0; kt < kt_count; ++kt) {
      if (kt + 1 < kt_count) nvf_load_raw(p, t, kt + 1, kc4, raw);
      const u8* st = smem + (kt & 1) * NVF_STAGE_BYTES;
      #pragma unroll
      for (int ks = 0; ks < NVF_BK / 16; ++ks) {
        u32 af[NVF_MI][4], bf[NVF_NI][2];
        #pragma unroll
        for (int mi = 0; mi < NVF_MI; ++mi) {
          const int row = wm * NVF_WM + mi * 16 + (lane & 15);
          nvf_ldmatrix_x4(nvf_smem_addr(st + nvf_tile_off(row, ks * 2 + (lane >> 4))),
                          af[mi][0], af[mi][1], af[mi][2], af[mi][3]);
        }
        #pragma unroll
        for (int nj = 0; nj < NVF_NI / 2; ++nj) {
          const int row = NVF_BM + wn * NVF_WN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
          nvf_ldmatrix_x4(nvf_smem_addr(st + nvf_tile_off(row, ks * 2 + ((lane >> 3) & 1))),
                          bf[2 * nj][0], bf[2 * nj][1], bf[2 * nj + 1][0], bf[2 * nj + 1][1]);
        }
        #pragma unroll
        for (int mi = 0; mi < NVF_MI; ++mi)
          #pragma unroll
          for (int ni = 0; ni < NVF_NI; ++ni) nvf_mma_bf16_16816(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
      }
      // The other stage was last read in iteration kt-1, which the barrier below closed.
      if (kt + 1 < kt_count) nvf_store_tile(smem + ((kt + 1) & 1) * NVF_STAGE_BYTES, raw);
      __syncthreads();
    }

    // Epilogue: undo the 2^-8 * 2^-8 of the operands exactly, apply alpha and row scale.
    const float alpha = p.alpha ? p.alpha[t.g] : 1.0f;
    #pragma unroll
    for (int mi = 0; mi < NVF_MI; ++mi)
      #pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = t.m_tile * NVF_BM + wm * NVF_WM + mi * 16 + (lane >> 2) + h * 8;
        if (m >= t.valid_m) continue;
        const float rs = p.row_scale ? p.row_scale[(i64)t.g * p.m_max + m] : 1.0f;
        const float sc = __fmul_rn(alpha, rs);
        u16* drow = p.d + ((i64)t.g * p.m_max + m) * p.ldd;
        #pragma unroll
        for (int ni = 0; ni < NVF_NI; ++ni) {
          const int n = t.n_tile * NVF_BN + wn * NVF_WN + ni * 8 + (lane & 3) * 2;
          if (n >= p.n) continue;
          // (2^16: this kernel widens to BF16 in shared memory in every module, its _tiled twin too,
          // where NVF_F16 is set for the other kernels: not NVF_DEQ_SCALE2)
          const float v0 = __fmul_rn(sc, __fmul_rn(acc[mi][ni][2 * h], 65536.0f));
          const float v1 = __fmul_rn(sc, __fmul_rn(acc[mi][ni][2 * h + 1], 65536.0f));
          *(u32*)(drow + n) = nvf_pack_bf16x2(v0, v1);
        }
      }
  }
}
