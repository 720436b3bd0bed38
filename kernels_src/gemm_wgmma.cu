// gemm_wgmma.cu -- masked grouped NVFP4 GEMM (NT) on Hopper warpgroup MMA (sm_90a).
//
// Same contract as gemm_portable.cu (NUMERICS.md 4). Hopper has no FP4 tensor cores, so
// both operands are widened exactly to BF16 (dequant_bf16.cuh) and multiplied by
// wgmma m64nNk16 with F32 accumulation. Swap-AB, because wgmma takes only A from
// registers: the weights are A (64 rows per warpgroup, streamed from global memory
// straight into registers and widened there, never staged), the tokens are B (N =
// NVF_TOK tokens, widened once per CTA into shared memory). The weights of a CTA are read
// once per token tile, so one tile that holds every token of an expert reads them once.
//
// K permutation (as gemm_swapab.cu): a thread of an MMA quad loads 16 bytes (32
// consecutive K elements) of its weight row per 128-K step and feeds them to the 8 k16
// MMAs of the step as the pairs (e, e+4) of each 8-element word. The tokens are written
// to shared memory in the same order, so A and B agree and the dot products are unchanged.
//
// Pipeline: weight loads run NVF_DEPTH steps ahead; a warpgroup widens step s+1's weights
// once its step-s MMAs are done (one register set), while the other warpgroup's MMAs keep
// the tensor cores busy; the next K chunk of tokens is copied raw (cp.async) into shared
// memory during the current chunk and widened into the other buffer while the chunk's
// last MMAs run.
#include "common.cuh"
#include "dequant_bf16.cuh"
#include "ptx_wgmma.cuh"

#ifndef NVF_TOK
#define NVF_TOK 64 // tokens per pass: the wgmma N (8, 16, 32, 64 or 128)
#endif
#ifndef NVF_WG
#define NVF_WG 2 // warpgroups per CTA, 64 weight rows each
#endif
#ifndef NVF_KC // K elements of tokens per shared-memory chunk: 64 KiB per buffer
#define NVF_KC (NVF_TOK >= 128 ? 256 : NVF_TOK >= 64 ? 512 : 1024)
#endif
#define NVF_DEPTH 2                         // weight steps in flight
#define NVF_THREADS (128 * NVF_WG)
#define NVF_ROWS (64 * NVF_WG)              // weight rows (N of the problem) per CTA
#define NVF_STEP 128                        // K elements per register step
#define NVF_SPC (NVF_KC / NVF_STEP)         // steps per chunk
#define NVF_MMA_BYTES (NVF_TOK * 32)        // B of one k16 MMA: TOK x 16 bf16
#define NVF_STEP_BYTES (8 * NVF_MMA_BYTES)
#define NVF_BUF_BYTES (NVF_SPC * NVF_STEP_BYTES)
#define NVF_PIECES (NVF_TOK * NVF_KC / 32)  // 16-byte token pieces per chunk
#define NVF_PPT ((NVF_PIECES + NVF_THREADS - 1) / NVF_THREADS)
#define NVF_SMEM_BYTES (2 * NVF_BUF_BYTES + NVF_PIECES * 20) // two chunk buffers, raw staging

#if NVF_TOK == 8
#define nvf_wgmma_rs nvf_wgmma_rs_n8
#elif NVF_TOK == 16
#define nvf_wgmma_rs nvf_wgmma_rs_n16
#elif NVF_TOK == 32
#define nvf_wgmma_rs nvf_wgmma_rs_n32
#elif NVF_TOK == 64
#define nvf_wgmma_rs nvf_wgmma_rs_n64
#elif NVF_TOK == 128
#define nvf_wgmma_rs nvf_wgmma_rs_n128
#else
#error "NVF_TOK must be 8, 16, 32, 64 or 128"
#endif

struct NvfGemmParams {
  const u8* a; const u8* a_sf; const u8* b; const u8* b_sf;
  const int* masked_m; const float* alpha; const float* row_scale; u16* d;
  i64 ldd;
  int groups, m_max, n, k;
};

// Token piece pi of a chunk: lane bits 0-1 = t (32-K piece of a step), bits 2-4 = token
// within an 8-token core matrix, so a warp's 4-byte stores of one pair hit 32 banks.
struct NvfPiece {
  int t, n, ss;
};
NVF_DEV NvfPiece nvf_piece(int pi) {
  const int rest = pi >> 5;
  NvfPiece r;
  r.t = pi & 3;
  r.n = (rest / NVF_SPC) * 8 + ((pi >> 2) & 7);
  r.ss = rest % NVF_SPC;
  return r;
}

// Chunk c's raw pieces for tokens tok0.. into the staging area with cp.async: 16 bytes of
// E2M1 at stage + 16 pi, the 4-byte SF group holding the piece's two SFs at stage_sf + 4 pi
// (zero-filled past valid rows and past K: rows past masked_m are never read). Nothing is
// held in registers while the chunk's MMAs run.
NVF_DEV void nvf_tok_issue(const NvfGemmParams& p, const u8* a_g, const u8* asf_g, int valid, int tok0, int c, int kc4,
                           u32 stage, u32 stage_sf) {
  #pragma unroll
  for (int i = 0; i < NVF_PPT; ++i) {
    const int pi = threadIdx.x + i * NVF_THREADS;
    const NvfPiece pc = nvf_piece(pi);
    const int m = tok0 + pc.n, kel = c * NVF_KC + pc.ss * NVF_STEP + 32 * pc.t;
    const bool in = pi < NVF_PIECES && m < valid && kel < p.k;
    const u8* src = in ? a_g + (i64)m * (p.k / 2) + kel / 2 : a_g;
    const u8* ssrc = in ? asf_g + nvf_sf_offset_128x4(m, (kel / 16) & ~3, kc4) : asf_g;
    if (pi < NVF_PIECES) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(stage + 16 * pi), "l"(src), "r"(in ? 16 : 0) : "memory");
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(stage_sf + 4 * pi), "l"(ssrc), "r"(in ? 4 : 0) : "memory");
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Widen this thread's staged pieces into a chunk buffer, laid out per step as 8 MMAs x
// TOK/8 core-matrix rows x 2 K halves x 8 tokens x 16 bytes (lbo 128, sbo 256).
NVF_DEV void nvf_tok_widen(u8* buf, const u8* stage, const u32* stage_sf) {
  asm volatile("cp.async.wait_group 0;" ::: "memory"); // a thread reads only its own copies
  #pragma unroll
  for (int i = 0; i < NVF_PPT; ++i) {
    const int pi = threadIdx.x + i * NVF_THREADS;
    if (pi >= NVF_PIECES) continue;
    const NvfPiece pc = nvf_piece(pi);
    u32 v[16];
    nvf_dequant_piece(*(const uint4*)(stage + 16 * pi), stage_sf[pi] >> (8 * (2 * pc.t & 3)), v);
    u8* base = buf + pc.ss * NVF_STEP_BYTES + (pc.n >> 3) * 256 + (pc.n & 7) * 16 + 4 * pc.t;
    #pragma unroll
    for (int j = 0; j < 16; ++j) *(u32*)(base + (j >> 1) * NVF_MMA_BYTES + (j & 1) * 128) = v[j];
  }
}

extern "C" __global__ void __launch_bounds__(NVF_THREADS, 1)
nvf_gemm_wgmma(const NvfGemmParams p) {
  extern __shared__ __align__(128) u8 smem[]; // 2 chunk buffers, then the raw staging area
  const int nblocks = (p.n + NVF_ROWS - 1) / NVF_ROWS;
  const int tiles = gridDim.x / (p.groups * nblocks); // token tiles per (group, block)
  const int tt = blockIdx.x % tiles, gb = blockIdx.x / tiles, g = gb / nblocks, bx = gb % nblocks;
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, wg = threadIdx.x >> 7, t = lane & 3;
  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);
  if (tt * NVF_TOK >= valid) return; // no tokens for this tile: the weights are not read
  const int kc4 = (p.k / 16 + 3) / 4, nsteps = (p.k + NVF_STEP - 1) / NVF_STEP;
  const int nchunks = (p.k + NVF_KC - 1) / NVF_KC;
  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k), sfb_g = nvf_sf_group_bytes_128x4(p.n, p.k);
  const int r0 = bx * NVF_ROWS + wg * 64 + warp * 16 + (lane >> 2); // weight rows r0, r0 + 8
  const bool ok0 = r0 < p.n, ok1 = r0 + 8 < p.n;
  const u8* w0 = p.b + ((i64)g * p.n + r0) * (p.k / 2) + 16 * t;
  const u8* w1 = w0 + (i64)8 * (p.k / 2);
  const u8* bsf = p.b_sf + g * sfb_g;
  const u8* a_g = p.a + (i64)g * p.m_max * (p.k / 2);
  const u8* asf_g = p.a_sf + g * sfa_g;
  const u32 sbase = (u32)__cvta_generic_to_shared(smem);
  const u32 stage = sbase + 2 * NVF_BUF_BYTES, stage_sf = stage + NVF_PIECES * 16;
  const float alpha = p.alpha ? p.alpha[g] : 1.0f;

  for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {
    float acc[NVF_TOK / 2];
    #pragma unroll
    for (int e = 0; e < NVF_TOK / 2; ++e) acc[e] = 0.0f;

    uint4 wq[NVF_DEPTH][2];
    u32 ws[NVF_DEPTH][2];
    #pragma unroll
    for (int d = 0; d < NVF_DEPTH; ++d) {
      const int kel = d * NVF_STEP + 32 * t;
      const bool in = d < nsteps && kel < p.k;
      wq[d][0] = (in && ok0) ? __ldg((const uint4*)(w0 + d * 64)) : make_uint4(0, 0, 0, 0);
      wq[d][1] = (in && ok1) ? __ldg((const uint4*)(w1 + d * 64)) : make_uint4(0, 0, 0, 0);
      ws[d][0] = (in && ok0) ? *(const u16*)(bsf + nvf_sf_offset_128x4(r0, kel / 16, kc4)) : 0u;
      ws[d][1] = (in && ok1) ? *(const u16*)(bsf + nvf_sf_offset_128x4(r0 + 8, kel / 16, kc4)) : 0u;
    }
    __syncthreads(); // the previous token tile's last chunk has been read by every warpgroup
    nvf_tok_issue(p, a_g, asf_g, valid, tok0, 0, kc4, stage, stage_sf);
    nvf_tok_widen(smem, smem + 2 * NVF_BUF_BYTES, (const u32*)(smem + 2 * NVF_BUF_BYTES + NVF_PIECES * 16));
    nvf_fence_proxy_async();
    __syncthreads();

    u32 a[32]; // widened weights of a step: row r0 (0..15), row r0 + 8 (16..31)
    for (int c = 0; c < nchunks; ++c) {
      const u32 buf = sbase + (c & 1) * NVF_BUF_BYTES;
      if (c + 1 < nchunks) nvf_tok_issue(p, a_g, asf_g, valid, tok0, c + 1, kc4, stage, stage_sf);
      #pragma unroll 1
      for (int h = 0; h < NVF_SPC / NVF_DEPTH; ++h) {
        #pragma unroll
        for (int d = 0; d < NVF_DEPTH; ++d) {
          const int ss = h * NVF_DEPTH + d, s = c * NVF_SPC + ss;
          if (s < nsteps) {
            nvf_wgmma_wait<0>(); // step s-1, the last reader of a[], is done
            nvf_dequant_piece(wq[d][0], ws[d][0], a);
            nvf_dequant_piece(wq[d][1], ws[d][1], a + 16);
            {
              const int sn = s + NVF_DEPTH, kel = sn * NVF_STEP + 32 * t;
              const bool in = sn < nsteps && kel < p.k;
              wq[d][0] = (in && ok0) ? __ldg((const uint4*)(w0 + (i64)sn * 64)) : make_uint4(0, 0, 0, 0);
              wq[d][1] = (in && ok1) ? __ldg((const uint4*)(w1 + (i64)sn * 64)) : make_uint4(0, 0, 0, 0);
              ws[d][0] = (in && ok0) ? *(const u16*)(bsf + nvf_sf_offset_128x4(r0, kel / 16, kc4)) : 0u;
              ws[d][1] = (in && ok1) ? *(const u16*)(bsf + nvf_sf_offset_128x4(r0 + 8, kel / 16, kc4)) : 0u;
            }
            nvf_wgmma_fence();
            #pragma unroll
            for (int i = 0; i < 8; ++i) {
              const u32 af[4] = {a[2 * i], a[16 + 2 * i], a[2 * i + 1], a[16 + 2 * i + 1]};
              nvf_wgmma_rs(acc, af, nvf_wgmma_desc(buf + ss * NVF_STEP_BYTES + i * NVF_MMA_BYTES, 128, 256));
            }
            nvf_wgmma_commit();
          }
        }
      }
      // Next chunk into the other buffer while this chunk's last MMAs run: that buffer's
      // readers (chunk c-1) all finished before the barrier that closed chunk c-1.
      if (c + 1 < nchunks) {
        nvf_tok_widen(smem + ((c + 1) & 1) * NVF_BUF_BYTES, smem + 2 * NVF_BUF_BYTES,
                      (const u32*)(smem + 2 * NVF_BUF_BYTES + NVF_PIECES * 16));
        nvf_fence_proxy_async();
      }
      nvf_wgmma_wait<0>();
      __syncthreads();
    }

    // ---- epilogue: D[g, m, n] for tokens m < valid and weight rows n < N ----
    #pragma unroll
    for (int j = 0; j < NVF_TOK / 8; ++j)
      #pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int m = tok0 + j * 8 + 2 * t + (e & 1), n = r0 + (e >> 1) * 8;
        if (m < valid && n < p.n) {
          const float rs = p.row_scale ? p.row_scale[(i64)g * p.m_max + m] : 1.0f;
          const float v = __fmul_rn(__fmul_rn(alpha, rs), __fmul_rn(acc[4 * j + e], 65536.0f));
          p.d[((i64)g * p.m_max + m) * p.ldd + n] = (u16)nvf_f32_to_bf16(v);
        }
      }
  }
}
