// gemm_swapab.cu -- masked grouped NVFP4 GEMM (NT) for few tokens per expert, sm_80+.
//
// Same contract as gemm_portable.cu. Swap-AB: the weights are the 16-row A operand of
// mma.sync m16n8k16 and the tokens the 8-column B operand, so 8 tokens already fill an
// MMA. Weights stream from global memory straight into registers (16-byte loads, several
// steps in flight) and are dequantized there, exactly, to BF16 * 2^-8; the tokens of a
// K chunk are dequantized once per CTA into shared memory.
//
// K permutation: a thread of an MMA quad holds 32 consecutive K elements of a row (16
// bytes) and feeds them to 8 MMAs as the pairs (e, e+4) of each 8-element word. A dot
// product does not care about the order of K as long as A and B agree, so the tokens are
// stored in shared memory in the same pair order.
//
// With a workspace (p.tok_ws, sm_90+, TILED weights), nvf_sw_widen_tokens below first widens each token once,
// into a row of 128 * steps bf16 in that pair order (word 64 s + 8 i + 2 t + j of step s), and
// one thread copies each chunk's token rows into shared memory by bulk copies (double buffer,
// an mbarrier a buffer) instead of every CTA of the group widening them again: the widening
// was 4-11 % of the time at m <= 8 (bench/NOTES.md, twenty-first session, NVF_SWPROBE=2).
#include "common.cuh"
#include "gemm_common.cuh"
#include "ptx_mma.cuh"
#include "dequant_bf16.cuh"
#include "ptx_tcgen05.cuh" // mbarriers and bulk copies (the workspace path, sm_90+)

#ifndef NVF_NT
#define NVF_NT 1                       // n8 tiles of tokens: 8 * NVF_NT tokens per pass
#endif
#define NVF_TOK (8 * NVF_NT)
#define NVF_WARPS 8
#define NVF_THREADS (32 * NVF_WARPS)
#define NVF_ROWS (16 * NVF_WARPS)      // weight rows (N) per CTA
// K elements of tokens staged per chunk. Tuning runs: $NVFP4MOE_TUNE_DEFINE=-DNVF_SKC=<n>
// (the host sizes shared memory from it), a multiple of 1024.
#ifdef NVF_SKC
#define NVF_KC NVF_SKC
static_assert(NVF_SKC % 1024 == 0 && NVF_SKC <= 8192, "NVF_SKC: 1024, 2048, ... 8192");
#else
#define NVF_KC 1024
#endif
#define NVF_STEP 128                   // K elements per register step (64 bytes of a row)
// Register steps of weights in flight and CTAs per SM the registers must allow: by
// default 2 and 3 for 8-16 tokens, 4 and 2 beyond; NVF_TUNE=0..3 forces one pair for
// tuning runs ($NVFP4MOE_TUNE_DEFINE, bench/NOTES.md; 0 is 4 and 2 for every tile).
#if !defined(NVF_TUNE) && NVF_NT <= 2 // measured best for 8 and 16 tokens (bench/NOTES.md)
#define NVF_DEPTH 2
#define NVF_MINB 3
#elif !defined(NVF_TUNE) || NVF_TUNE == 0
#define NVF_DEPTH 4
#define NVF_MINB 2
#elif NVF_TUNE == 1
#define NVF_DEPTH 2
#define NVF_MINB 3
#elif NVF_TUNE == 2
#define NVF_DEPTH 2
#define NVF_MINB 4
#elif NVF_TUNE == 3
#define NVF_DEPTH 1
#define NVF_MINB 4
#else
#error "NVF_TUNE must be 0, 1, 2 or 3"
#endif
#define NVF_TSTRIDE (NVF_KC / 2 + 8)   // words per token row in smem; +8 keeps 64-bit reads conflict-free
// Probe for tuning runs (wrong results, timing only; bench/NOTES.md, fourteenth session's next steps):
// -DNVF_SWPROBE=1 loads the weights and SFs as always but only folds them into one accumulator (no
// widening, no MMAs; the tokens are still staged): the rate of this grid's access pattern by itself.
// -DNVF_SWPROBE=2 stages no tokens (shared memory left as it is; the chunk barriers kept), =3 also
// drops the barriers: what the token staging costs each CTA (twenty-first session).
#if defined(NVF_SWPROBE) && NVF_SWPROBE >= 2
#define NVF_SWSTAGE 0
#else
#define NVF_SWSTAGE 1
#endif

// Byte offset of token row m of group g in the workspace (rows of 256 bytes a step).
NVF_DEV i64 nvf_sw_row_offset(const NvfGemmParams& p, int g, int m, int nsteps) {
  return ((i64)g * p.m_max + m) * nsteps * 256;
}

// PRE: tokens from the workspace (two chunk buffers, filled by bulk copies), else widened here.
template <bool WIDE, bool PRE> NVF_DEV void nvf_gemm_swapab_body(const NvfGemmParams& p) {
  extern __shared__ __align__(16) u32 tok[]; // [PRE ? 2 : 1][NVF_TOK][NVF_TSTRIDE]
  __shared__ __align__(8) u64 full[2];      // PRE: buffer b's copies have landed
  const int nblocks = (p.n + NVF_ROWS - 1) / NVF_ROWS; // grid = groups * nblocks
  const int g = blockIdx.x / nblocks, bx = blockIdx.x % nblocks;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, t = lane & 3;
  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);
  if (valid == 0) return; // an expert without tokens: its weights are not read
  const int kc4 = (p.k / 16 + 3) / 4, nsteps = (p.k + NVF_STEP - 1) / NVF_STEP;
  const int nchunks = (p.k + NVF_KC - 1) / NVF_KC;
  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k), sfb_g = nvf_sf_group_bytes_128x4(p.n, p.k);
  const int r0 = bx * NVF_ROWS + warp * 16 + (lane >> 2); // weight rows r0 and r0 + 8
  const bool ok0 = r0 < p.n, ok1 = r0 + 8 < p.n;
  // NVF_WKFULL (the 8-token tile's _k256_tiled twin, which the host runs on TILED weights, N % 16 == 0,
  // where K % 256 == 0; wrong elsewhere; other tiles: tuning runs only, bench/NOTES.md thirtieth session):
  // the weight loads without predicates, as the wgmma tiles' _k256 twins (gemm_wgmma_step.cuh): rows
  // past N read rows N - 16 .. N - 1 (never stored), a step past the last reads step s - nsteps (two
  // steps in flight) or s % nsteps (four: the 32- and 48-token tiles, where K may hold fewer steps;
  // nvf_step_in, gemm_common.cuh)
#if NVF_WKFULL
  const int rl = ok0 ? r0 : p.n - 16 + (r0 & 15);
#else
  const int rl = r0;
#endif
  const u8* w0 = nvf_wpiece(p, g, rl, t);
  const u8* w1 = w0 + NVF_WROW8(p);
  (void)w1; // (unused on TILED weights: NVF_LDG_ROW8 loads row r + 8 at w0's address + 512)
  const u8* bsf = p.b_sf + g * sfb_g;
  // the two SF bytes of this thread's piece of step s: columns 8s + 2t, 8s + 2t + 1, i.e. the
  // step-0 offset plus 1024 s in the 128x4 layout
  const u8* sf0 = bsf + nvf_sf_offset_128x4(rl, 2 * t, kc4);
  const u8* sf1 = bsf + nvf_sf_offset_128x4(rl + 8, 2 * t, kc4);
  const float alpha = p.alpha ? p.alpha[g] : 1.0f;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // PRE: chunk cc of this CTA (token pass cc / nchunks, K chunk cc % nchunks) into buffer cc % 2,
  // one bulk copy per token row below masked_m (the other rows' columns are never stored, so
  // what their shared memory holds does not matter); issued by thread 0
  const u32 full0 = nvf_smem_u32(full);
  const auto issue = [&](int cc) {
    const int t0 = cc / nchunks * NVF_TOK, c = cc % nchunks;
    if (t0 >= valid) return;
    const int rows = valid - t0 < NVF_TOK ? valid - t0 : NVF_TOK;
    const int left = (nsteps - c * (NVF_KC / NVF_STEP)) * 256, bytes = left < NVF_KC * 2 ? left : NVF_KC * 2;
    const u32 bar = full0 + 8u * (cc & 1), dst = nvf_smem_u32(tok) + (cc & 1) * (NVF_TOK * NVF_TSTRIDE * 4);
    nvf_mbar_expect_tx(bar, rows * bytes);
    for (int n = 0; n < rows; ++n)
      nvf_bulk_load(dst + n * (NVF_TSTRIDE * 4), p.tok_ws + nvf_sw_row_offset(p, g, t0 + n, nsteps) + c * (NVF_KC * 2),
                    bytes, bar);
  };
  if (PRE) {
    if (threadIdx.x == 0) {
      nvf_mbar_init(full0, 1);
      nvf_mbar_init(full0 + 8u, 1);
      nvf_fence_mbar_init(); // the inits visible to the copies' complete_tx (async proxy)
    }
    __syncthreads();
  }
#endif
  int cc = 0; // PRE: chunks started so far

  for (int tok0 = 0; tok0 < valid; tok0 += NVF_TOK) {
    float acc[NVF_NT][4];
    #pragma unroll
    for (int i = 0; i < NVF_NT; ++i)
      #pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][e] = 0.0f;

    // weights of steps 0 .. DEPTH-1 in flight before the first chunk is staged
    uint4 wq[NVF_DEPTH][2];
    u32 ws[NVF_DEPTH][2];
    #pragma unroll
    for (int d = 0; d < NVF_DEPTH; ++d) {
      const int kel = d * NVF_STEP + 32 * t; // first K element of this thread's piece
      const bool in = NVF_WKFULL || (d < nsteps && kel < p.k);
      const int dl = nvf_step_in<false, NVF_DEPTH>(d, nsteps); // (the step it may read)
      wq[d][0] = (in && (NVF_WKFULL || ok0)) ? nvf_ldg_weights<WIDE>(w0 + dl * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);
      wq[d][1] = (in && (NVF_WKFULL || ok1)) ? NVF_LDG_ROW8(WIDE, false, w0 + dl * NVF_WSTEP_BYTES, w1 + dl * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);
      ws[d][0] = (in && (NVF_WKFULL || ok0)) ? *(const u16*)(sf0 + dl * 1024) : 0u;
      ws[d][1] = (in && (NVF_WKFULL || ok1)) ? *(const u16*)(sf1 + dl * 1024) : 0u;
    }

    for (int c = 0; c < nchunks; ++c, ++cc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if (PRE) {
        __syncthreads(); // every warp has read chunk cc - 1, whose buffer the copies of cc + 1 overwrite
        if (threadIdx.x == 0) {
          if (cc == 0) { // the weights of the first steps are in flight: now wait for the pre-pass
            asm volatile("griddepcontrol.wait;" ::: "memory");
            issue(0);
          }
          issue(cc + 1);
        }
        nvf_mbar_wait(full0 + 8u * (cc & 1), (cc >> 1) & 1);
      }
#endif
      // ---- stage the tokens of this K chunk (dequantized, pair order) ----
      if (!PRE) {
#if !defined(NVF_SWPROBE) || NVF_SWPROBE != 3
        __syncthreads(); // the previous chunk has been read by every warp
#endif
        for (int piece = threadIdx.x; NVF_SWSTAGE && piece < NVF_TOK * (NVF_KC / 32); piece += NVF_THREADS) {
          const int n = piece / (NVF_KC / 32), pc = piece % (NVF_KC / 32), ss = pc >> 2, tt = pc & 3;
          const int m = tok0 + n, kel = c * NVF_KC + pc * 32;
          u32 v[16];
          if (m < valid && kel < p.k) {
            const uint4 q = *(const uint4*)(p.a + ((i64)g * p.m_max + m) * (p.k / 2) + kel / 2);
            const u32 sf2 = *(const u16*)(p.a_sf + g * sfa_g + nvf_sf_offset_128x4(m, kel / 16, kc4));
            nvf_dequant_piece(q, sf2, v);
          } else {
            #pragma unroll
            for (int f = 0; f < 16; ++f) v[f] = 0u;
          }
          u32* dst = tok + n * NVF_TSTRIDE + ss * 64 + tt * 2;
          #pragma unroll
          for (int i = 0; i < 8; ++i) *(uint2*)(dst + i * 8) = make_uint2(v[2 * i], v[2 * i + 1]);
        }
#if !defined(NVF_SWPROBE) || NVF_SWPROBE != 3
        __syncthreads();
#endif
      }
      const u32* const buf = tok + (PRE ? (cc & 1) * (NVF_TOK * NVF_TSTRIDE) : 0);

      // ---- 8 register steps of 128 K: dequantize, prefetch, 8 MMAs per n8 tile ----
      #pragma unroll 1
      for (int half = 0; half < NVF_KC / NVF_STEP / NVF_DEPTH; ++half) {
        #pragma unroll
        for (int d = 0; d < NVF_DEPTH; ++d) {
          const int ss = half * NVF_DEPTH + d, s = c * (NVF_KC / NVF_STEP) + ss;
          if (s < nsteps) {
#if defined(NVF_SWPROBE) && NVF_SWPROBE == 1
            // timing probe: the step's words only folded into the accumulator (no widening, no MMAs)
            acc[0][0] += __uint_as_float((wq[d][0].x ^ wq[d][0].y ^ wq[d][0].z ^ wq[d][0].w ^ wq[d][1].x ^ wq[d][1].y ^
                                          wq[d][1].z ^ wq[d][1].w ^ ws[d][0] ^ ws[d][1]) & 0x007FFFFFu);
#else
            u32 a0[16], a1[16];
            nvf_dequant_piece<NVF_WT_ENC>(wq[d][0], ws[d][0], a0);
            nvf_dequant_piece<NVF_WT_ENC>(wq[d][1], ws[d][1], a1);
#endif
            {
#if NVF_WKFULL
              const int sn = nvf_step_in<true, NVF_DEPTH>(s + NVF_DEPTH, nsteps);
              wq[d][0] = nvf_ldg_weights<WIDE>(w0 + (i64)sn * NVF_WSTEP_BYTES);
              wq[d][1] = NVF_LDG_ROW8(WIDE, false, w0 + (i64)sn * NVF_WSTEP_BYTES, w1 + (i64)sn * NVF_WSTEP_BYTES);
              ws[d][0] = *(const u16*)(sf0 + (i64)sn * 1024);
              ws[d][1] = *(const u16*)(sf1 + (i64)sn * 1024);
#else
              const int sn = s + NVF_DEPTH, kel = sn * NVF_STEP + 32 * t;
              const bool in = sn < nsteps && kel < p.k;
              wq[d][0] = (in && ok0) ? nvf_ldg_weights<WIDE>(w0 + (i64)sn * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);
              wq[d][1] = (in && ok1) ? NVF_LDG_ROW8(WIDE, false, w0 + (i64)sn * NVF_WSTEP_BYTES, w1 + (i64)sn * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);
              ws[d][0] = (in && ok0) ? *(const u16*)(sf0 + (i64)sn * 1024) : 0u;
              ws[d][1] = (in && ok1) ? *(const u16*)(sf1 + (i64)sn * 1024) : 0u;
#endif
            }
#if !defined(NVF_SWPROBE) || NVF_SWPROBE != 1
            const u32* tb = buf + (lane >> 2) * NVF_TSTRIDE + ss * 64 + t * 2;
            #pragma unroll
            for (int i = 0; i < 8; ++i) {
              const u32 af[4] = {a0[2 * i], a1[2 * i], a0[2 * i + 1], a1[2 * i + 1]};
              #pragma unroll
              for (int nt = 0; nt < NVF_NT; ++nt) {
                const uint2 bv = *(const uint2*)(tb + nt * 8 * NVF_TSTRIDE + i * 8);
#if NVF_F16
                nvf_mma_f16_16816(acc[nt], af, bv.x, bv.y);
#else
                nvf_mma_bf16_16816(acc[nt], af, bv.x, bv.y);
#endif
              }
            }
#endif
          }
        }
      }
    }

    // ---- epilogue: D[g, m, n] for tokens m < valid and weight rows n < N ----
    #pragma unroll
    for (int nt = 0; nt < NVF_NT; ++nt)
      #pragma unroll
      for (int e = 0; e < 4; ++e)
        nvf_store_swapab(p, g, valid, alpha, tok0 + nt * 8 + 2 * t + (e & 1), r0 + (e >> 1) * 8, acc[nt][e]);
  }
}

// Kernels without and with a workspace (separate, so each gets its own register allocation and
// the path without one compiles as before); the host passes a workspace only on sm_90+ (the bulk
// copies) and TILED weights.
template <bool WIDE> NVF_DEV void nvf_gemm_swapab_plain(const NvfGemmParams& p) { nvf_gemm_swapab_body<WIDE, false>(p); }

// nvf_gemm_swapab and nvf_gemm_swapab_l2, or nvf_gemm_swapab_tiled (gemm_common.cuh)
NVF_GEMM_ENTRY_POINTS(nvf_gemm_swapab, nvf_gemm_swapab_plain, NVF_THREADS, NVF_MINB)

// The _ws kernels run after their pre-pass as programmatic dependent launches: they read masked_m,
// alpha and the weights (which the pre-pass does not write, and which the kernels before it have
// finished: it waits for them before it lets this kernel start) at once, and only the thread that
// copies the tokens waits for the pre-pass (griddepcontrol.wait, before its first copy; every
// other thread is ordered after that by the chunk's mbarrier). Without the attribute that wait is
// a no-op and the kernel starts after the pre-pass as usual.
template <bool WIDE> NVF_DEV void nvf_gemm_swapab_pre(const NvfGemmParams& p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); // (the next kernel waits for this one to complete)
  nvf_gemm_swapab_body<WIDE, true>(p);
#endif
}
// (only for 8 tokens on TILED weights: the host gives no other swap-AB tile a workspace,
// nvfp4moe__spec_takes_ws)
#if defined(NVF_WTILED) && NVF_WTILED && NVF_NT == 1
extern "C" __global__ void __launch_bounds__(NVF_THREADS, NVF_MINB) nvf_gemm_swapab_ws_tiled(const NvfGemmParams p) {
  nvf_gemm_swapab_pre<false>(p);
}

// The token pre-pass of a swap-AB GEMM with a workspace: each token row below masked_m widened
// once, as the staging above does it, into the workspace's row of 128 * steps bf16 (256 bytes a
// step, pair order, zeros past K): nvf_sw_row_offset, the host's nvfp4moe__tok_ws_bytes. One
// thread a 32-element piece; CTA x = g ytiles + y takes the group's pieces y * 256 + threadIdx.x,
// then every ytiles * 256 on (a warp writes 8 whole steps: full sectors).
extern "C" __global__ void __launch_bounds__(256) nvf_sw_widen_tokens(const NvfGemmParams p, int ytiles) {
  nvf_pdl_enter();
  const int g = blockIdx.x / ytiles, y = blockIdx.x % ytiles;
  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);
  const int nsteps = (p.k + NVF_STEP - 1) / NVF_STEP, pieces = 4 * nsteps, kc4 = (p.k / 16 + 3) / 4;
  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k), total = (i64)valid * pieces;
  for (i64 i = (i64)y * 256 + threadIdx.x; i < total; i += (i64)ytiles * 256) {
    const int m = (int)(i / pieces), pc = (int)(i % pieces), kel = 32 * pc;
    u32 v[16];
    if (kel < p.k) {
      const uint4 q = __ldg((const uint4*)(p.a + ((i64)g * p.m_max + m) * (p.k / 2) + kel / 2));
      const u32 sf2 = *(const u16*)(p.a_sf + g * sfa_g + nvf_sf_offset_128x4(m, kel / 16, kc4));
      nvf_dequant_piece(q, sf2, v);
    } else {
      #pragma unroll
      for (int f = 0; f < 16; ++f) v[f] = 0u;
    }
    u32* dst = (u32*)(p.tok_ws + nvf_sw_row_offset(p, g, m, nsteps)) + (pc >> 2) * 64 + (pc & 3) * 2;
    #pragma unroll
    for (int j = 0; j < 8; ++j) *(uint2*)(dst + j * 8) = make_uint2(v[2 * j], v[2 * j + 1]);
  }
}
#endif
