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
// after its step-s MMAs are done while the other warpgroup's MMAs run (one group in flight);
// the next K chunk of tokens is copied raw (cp.async) into shared memory during the
// current chunk and widened into the next of three buffers while the chunk's last MMAs
// run, so the barrier between chunks never drains the tensor pipe.
#include "common.cuh"
#include "gemm_common.cuh"
#include "dequant_bf16.cuh"
#include "ptx_wgmma.cuh"
#include "ptx_tcgen05.cuh" // mbarriers (sm_90+)

#ifndef NVF_TOK
#define NVF_TOK 64 // tokens per pass: the wgmma N (8, 16, 32, 48, 64 or 128)
#endif
// The host mirrors this geometry (128 NVF_WG threads, 64 NVF_WG weight rows, shared memory
// as NVF_SMEM_BYTES) from the same specialisation table that sets NVF_TOK and NVF_WG.
#ifndef NVF_WG
#define NVF_WG 2 // warpgroups per CTA, 64 weight rows each (2, 3, 4: 255, 168, 128 registers)
#endif
// Tuning runs only ($NVFP4MOE_TUNE_DEFINE=-DNVF_WTUNE=<v>, mirrored by the host's shared-memory
// size): K chunk 256 (v / 100), CTAs per SM (v / 10) % 10 for the register budget, depth v % 10;
// three digits 1-9 (no leading zero: the preprocessor would read octal, the host decimal).
#ifdef NVF_WTUNE
#define NVF_WKC (256 * (NVF_WTUNE / 100))
#define NVF_WMINB ((NVF_WTUNE / 10) % 10)
#define NVF_WDEPTH (NVF_WTUNE % 10)
static_assert(NVF_WTUNE >= 111 && NVF_WTUNE <= 999 && NVF_WMINB >= 1 && NVF_WDEPTH >= 1,
              "NVF_WTUNE: three digits 1-9");
#endif
#ifndef NVF_WMINB
#define NVF_WMINB 1
#endif
// Probes for tuning runs (wrong results, timing only; bench/NOTES.md, twelfth session):
// -DNVF_WPROBE=1 stages and widens only a tile's first token chunk (later chunks reuse stale
// buffers), =2 feeds each weight piece's raw words to wgmma unwidened (the loads stay live),
// =3 both: what the token path and the weight widening cost. =4 fills each later token chunk
// buffer with one bulk copy of its size from L2 (the group's weight bytes stand in for a BF16
// image of the tokens written by a pre-pass): what loading pre-widened tokens would cost; =5 the
// same with a quarter of the bytes (as a 4-CTA cluster's multicast would read from L2, or as the
// E2M1 staging does today, without the widening). =6 and =7 stage and widen only the first half
// or quarter of each chunk's token units (what CTAs of a 2- or 4-CTA cluster sharing the token
// widening would each do, less the stores into the other CTAs' shared memory).
#ifndef NVF_WPROBE
#define NVF_WPROBE 0
#endif
#define NVF_WTOKPATH (NVF_WPROBE == 0 || NVF_WPROBE == 2 || NVF_WPROBE >= 6) // later chunks widened here
#define NVF_WSHARE (NVF_WPROBE == 6 ? 2 : NVF_WPROBE == 7 ? 4 : 1)
// K per token chunk (64 KiB or less); tuning runs may set a smaller one with NVF_WKC (the
// host sizes shared memory for the default, so a larger one is refused)
#define NVF_KC_DEFAULT (NVF_TOK >= 128 ? 256 : NVF_TOK > 32 ? 512 : 1024)
#ifdef NVF_WKC
#define NVF_KC NVF_WKC
#else
#define NVF_KC NVF_KC_DEFAULT
#endif
static_assert(NVF_KC <= NVF_KC_DEFAULT && NVF_KC % 256 == 0, "NVF_WKC: a multiple of 256, at most the default");
// Weight steps in flight (20 registers each). Deeper measured slower (bench/NOTES.md);
// tuning runs set it with $NVFP4MOE_TUNE_DEFINE=-DNVF_WDEPTH=<n> (read by no other kernel),
// n dividing the steps per chunk (8, 4 or 2 by tile): the slots are indexed by step.
#ifndef NVF_WDEPTH
#define NVF_WDEPTH 2
#endif
#define NVF_DEPTH NVF_WDEPTH
#define NVF_NBUF 3                          // token chunk buffers
// Chunk hand-off: 1 (default) each thread arrives on the next chunk buffer's mbarrier once it has
// widened its part, and a warpgroup waits on it just before its first wgmma of that chunk, so the
// warpgroups keep their stagger across chunks; 0 a CTA barrier closes every chunk (tuning runs).
#ifndef NVF_WCHUNKBAR
#define NVF_WCHUNKBAR 1
#endif
#define NVF_THREADS (128 * NVF_WG)
#define NVF_ROWS (64 * NVF_WG)              // weight rows (N of the problem) per CTA
#define NVF_STEP 128                        // K elements per register step
#define NVF_SPC (NVF_KC / NVF_STEP)         // steps per chunk
#define NVF_MMA_BYTES (NVF_TOK * 32)        // B of one k16 MMA: TOK x 16 bf16
#define NVF_STEP_BYTES (8 * NVF_MMA_BYTES)
#define NVF_BUF_BYTES (NVF_SPC * NVF_STEP_BYTES)
#define NVF_UNITS (NVF_TOK * NVF_SPC)      // token staging units (one token, one step) per chunk
#define NVF_UPT ((NVF_UNITS + NVF_THREADS - 1) / NVF_THREADS)
#define NVF_SMEM_BYTES (NVF_NBUF * NVF_BUF_BYTES + NVF_UNITS * 72) // chunk buffers, raw staging

static_assert(NVF_SPC >= 2, "a chunk has at least two steps (buffer reuse argument below)");
static_assert(NVF_SPC % NVF_DEPTH == 0, "a chunk is a whole number of rounds of the weight slots");

static_assert(NVF_TOK == 8 || NVF_TOK == 16 || NVF_TOK == 32 || NVF_TOK == 48 || NVF_TOK == 64 || NVF_TOK == 128, "NVF_TOK must be 8, 16, 32, 48, 64 or 128");
#include "gemm_wgmma_step.cuh"

// Token staging works in units of one token x one 128-K step (64 bytes of E2M1, 8 SFs):
// unit u = token u % TOK of step u / TOK, so a warp's 16-byte stores of one MMA's core-matrix
// rows cover whole 128-byte rows (conflict-free). A thread's unit pointers are set once per
// token tile and advance by a chunk each time.
struct NvfTokUnit {
  const u8* src; // E2M1 of the unit in chunk 0 (null: token past masked_m, never read)
  const u8* sf;  // its first 4-SF group (the second is 512 bytes on)
};

NVF_DEV void nvf_tok_units(const NvfGemmParams& p, const u8* a_g, const u8* asf_g, int valid, int tok0, int kc4,
                           NvfTokUnit* u) {
  #pragma unroll
  for (int i = 0; i < NVF_UPT; ++i) {
    const int ui = threadIdx.x + i * NVF_THREADS, n = ui % NVF_TOK, ss = ui / NVF_TOK, m = tok0 + n;
    const bool in = ui < NVF_UNITS && m < valid;
    u[i].src = in ? a_g + (i64)m * (p.k / 2) + ss * 64 : 0;
    u[i].sf = asf_g + nvf_sf_offset_128x4(in ? m : 0, ss * 8, kc4);
  }
}

// Chunk c's raw units into the staging area with cp.async, 16-byte piece q of unit u at
// stage + 16 (q UNITS + u), SF group h at stage_sf + 4 (h UNITS + u); zero-filled past
// K and for tokens past masked_m. Nothing stays in registers while the chunk's MMAs run.
NVF_DEV void nvf_tok_issue(const NvfGemmParams& p, const NvfTokUnit* u, int c, u32 stage, u32 stage_sf) {
  #pragma unroll
  for (int i = 0; i < NVF_UPT; ++i) {
    const int ui = threadIdx.x + i * NVF_THREADS;
    if (ui >= NVF_UNITS / NVF_WSHARE) continue;
    const int kel = c * NVF_KC + (ui / NVF_TOK) * NVF_STEP; // first K element of the unit
    const u8* src = u[i].src ? u[i].src + c * (NVF_KC / 2) : p.a;
    const u8* sf = u[i].sf + c * (NVF_KC / 64) * 512;
    #pragma unroll
    for (int q = 0; q < 4; ++q) {
      const bool in = u[i].src && kel + 32 * q < p.k;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(stage + 16 * (q * NVF_UNITS + ui)),
                   "l"(in ? src + 16 * q : p.a), "r"(in ? 16 : 0) : "memory");
    }
    #pragma unroll
    for (int h = 0; h < 2; ++h) {
      const bool in = u[i].src && kel + 64 * h < p.k;
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(stage_sf + 4 * (h * NVF_UNITS + ui)),
                   "l"(in ? sf + 512 * h : p.a_sf), "r"(in ? 4 : 0) : "memory");
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Widen this thread's staged units of chunk c into a chunk buffer (per step the layout of
// nvf_wg_widen_token).
NVF_DEV void nvf_tok_widen(u8* buf, const u8* stage, const u32* stage_sf, int c, int k) {
  asm volatile("cp.async.wait_group 0;" ::: "memory"); // a thread reads only its own copies
  #pragma unroll
  for (int i = 0; i < NVF_UPT; ++i) {
    const int ui = threadIdx.x + i * NVF_THREADS, n = ui % NVF_TOK, ss = ui / NVF_TOK;
    if (ui >= NVF_UNITS / NVF_WSHARE) continue;
    uint4 q[4];
    #pragma unroll
    for (int t = 0; t < 4; ++t) q[t] = *(const uint4*)(stage + 16 * (t * NVF_UNITS + ui));
    const u32 sfw[2] = {stage_sf[ui], stage_sf[NVF_UNITS + ui]};
    nvf_wg_widen_token(q, sfw, c * NVF_KC + ss * NVF_STEP, k, buf + ss * NVF_STEP_BYTES + (n >> 3) * 256 + (n & 7) * 16);
  }
}

template <bool WIDE> NVF_DEV void nvf_gemm_wgmma_body(const NvfGemmParams& p) {
  extern __shared__ __align__(128) u8 smem[]; // NVF_NBUF chunk buffers, then the raw staging area
  const int nblocks = (p.n + NVF_ROWS - 1) / NVF_ROWS;
  const int tiles = gridDim.x / (p.groups * nblocks); // token tiles per (group, block)
  const int tt = blockIdx.x % tiles, gb = blockIdx.x / tiles, g = gb / nblocks, bx = gb % nblocks;
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, wg = threadIdx.x >> 7, t = lane & 3;
  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);
  if (tt * NVF_TOK >= valid) return; // no tokens for this tile: the weights are not read
  const int kc4 = (p.k / 16 + 3) / 4, nsteps = (p.k + NVF_STEP - 1) / NVF_STEP;
  const int nchunks = (p.k + NVF_KC - 1) / NVF_KC;
  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k);
  const int r0 = bx * NVF_ROWS + wg * 64 + warp * 16 + (lane >> 2); // weight rows r0, r0 + 8
  const NvfWgRows wr = nvf_wg_rows(p, g, r0, t, kc4);
  const u8* a_g = p.a + (i64)g * p.m_max * (p.k / 2);
  const u8* asf_g = p.a_sf + g * sfa_g;
  const u32 sbase = (u32)__cvta_generic_to_shared(smem);
  const u32 stage = sbase + NVF_NBUF * NVF_BUF_BYTES, stage_sf = stage + NVF_UNITS * 64;
  const u8* stage_p = smem + NVF_NBUF * NVF_BUF_BYTES;
  const u32* stage_sf_p = (const u32*)(stage_p + NVF_UNITS * 64);
  const float alpha = p.alpha ? p.alpha[g] : 1.0f;
#if NVF_WCHUNKBAR
  // full[b]: every thread has widened its part of the chunk now in buffer b (count: all threads).
  // Chunk c + 1 goes into buffer (c + 1) % 3 = (c - 2) % 3 at the end of a thread's chunk c. Every
  // warpgroup is done reading chunk c - 2 by then: the thread has passed full[c % 3], which needs
  // every thread to have widened chunk c, which each does after issuing all of chunk c - 1, whose
  // first step retired (wait<0>) chunk c - 2's last group. So no "empty" barrier is needed, and a
  // warpgroup may run up to about a chunk ahead of the slowest.
  __shared__ __align__(8) u64 full[NVF_NBUF];
  const u32 full0 = (u32)__cvta_generic_to_shared(full);
  if (threadIdx.x == 0) {
    #pragma unroll
    for (int b = 0; b < NVF_NBUF; ++b) nvf_mbar_init(full0 + 8u * b, NVF_THREADS);
  }
  u32 full_phase = 0; // bit b: parity of buffer b's next phase (every thread waits on every phase)
#endif

  for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {
    float acc[NVF_TOK / 2];
    #pragma unroll
    for (int e = 0; e < NVF_TOK / 2; ++e) acc[e] = 0.0f;

    uint4 wq[NVF_DEPTH][2];
    u32 ws[NVF_DEPTH][2];
    #pragma unroll
    for (int d = 0; d < NVF_DEPTH; ++d) nvf_wg_load<WIDE>(wr, nvf_wg_step_in<false>(d, nsteps), nsteps, p.k, wq[d], ws[d]);
    NvfTokUnit units[NVF_UPT];
    nvf_tok_units(p, a_g, asf_g, valid, tok0, kc4, units);
    __syncthreads(); // the previous token tile's MMAs are done in every warpgroup (wait<0>)
    nvf_tok_issue(p, units, 0, stage, stage_sf);
    nvf_tok_widen(smem, stage_p, stage_sf_p, 0, p.k);
    nvf_fence_proxy_async();
    __syncthreads();

    // Widened weights of a step: row r0 (0..15), row r0 + 8 (16..31). One set: wgmma reads
    // its A registers until the wait that retires it, and the compiler does not know that
    // (a second set, refilled after wait<1>, had its registers reused under a pending
    // wgmma and gave wrong results), so every step first waits for all earlier MMAs.
    u32 a[32];
    for (int c = 0; c < nchunks; ++c) {
      const u32 buf = sbase + (c % NVF_NBUF) * NVF_BUF_BYTES;
      if (c + 1 < nchunks && NVF_WTOKPATH) nvf_tok_issue(p, units, c + 1, stage, stage_sf);
      #pragma unroll
      for (int ss = 0; ss < NVF_SPC; ++ss) {
        const int s = c * NVF_SPC + ss;
        if (s < nsteps) {
          // Step s's weights are in slot s % DEPTH = ss % DEPTH (a chunk is a whole number of
          // rounds), a compile-time index: the slot is refilled in place. Moving the loads in
          // flight down one place instead compiled to register moves that waited for the
          // loads just issued (1-3 % slower, bench/NOTES.md, seventh session).
          const int d = ss % NVF_DEPTH;
          nvf_wgmma_wait<0>(); // step s-1, the last reader of a[], is done
#if NVF_WPROBE == 2 || NVF_WPROBE == 3
          #pragma unroll
          for (int j = 0; j < 16; ++j) {
            a[j] = (&wq[d][0].x)[j & 3] ^ ws[d][0];
            a[16 + j] = (&wq[d][1].x)[j & 3] ^ ws[d][1];
          }
#else
          nvf_dequant_piece<NVF_WT_ENC>(wq[d][0], ws[d][0], a);
          nvf_dequant_piece<NVF_WT_ENC>(wq[d][1], ws[d][1], a + 16);
#endif
          nvf_wg_load<WIDE>(wr, nvf_wg_step_in<true>(s + NVF_DEPTH, nsteps), nsteps, p.k, wq[d], ws[d]);
#if NVF_WCHUNKBAR
          if (ss == 0 && c > 0) { // the chunk's tokens are in buf (chunk 0: the tile's CTA barrier)
            const int b = c % NVF_NBUF;
            nvf_mbar_wait(full0 + 8u * b, (full_phase >> b) & 1u);
            full_phase ^= 1u << b;
          }
#endif
          nvf_wgmma_fence();
          nvf_wg_mmas(acc, a, buf + ss * NVF_STEP_BYTES);
          nvf_wgmma_commit();
        }
      }
      // Next chunk into buffer (c+1) % 3 while this chunk's last MMAs run. Its readers,
      // chunk c-2, were done everywhere at the barrier that closed chunk c-1: a warpgroup
      // reaches that barrier with at most one group in flight, of chunk c-1.
      if (c + 1 < nchunks) {
#if (NVF_WPROBE == 4 || NVF_WPROBE == 5) && NVF_WCHUNKBAR
        constexpr u32 pbytes = NVF_WPROBE == 5 ? NVF_BUF_BYTES / 4 : NVF_BUF_BYTES;
        const u32 fb = full0 + 8u * ((c + 1) % NVF_NBUF);
        const i64 gbytes = (i64)p.n * (p.k / 2), off = (i64)(c + 1) * NVF_BUF_BYTES;
        if (threadIdx.x == 0 && off + NVF_BUF_BYTES <= gbytes) {
          nvf_mbar_expect_tx(fb, pbytes);
          nvf_bulk_load(sbase + ((c + 1) % NVF_NBUF) * NVF_BUF_BYTES, p.b + g * gbytes + off, pbytes, fb);
        } else {
          nvf_mbar_arrive(fb);
        }
#else
        if (NVF_WTOKPATH) nvf_tok_widen(smem + ((c + 1) % NVF_NBUF) * NVF_BUF_BYTES, stage_p, stage_sf_p, c + 1, p.k);
        nvf_fence_proxy_async();
#if NVF_WCHUNKBAR
        nvf_mbar_arrive(full0 + 8u * ((c + 1) % NVF_NBUF));
#endif
#endif
      }
#if !NVF_WCHUNKBAR
      __syncthreads();
#endif
    }
    nvf_wgmma_wait<0>();
    #pragma unroll
    for (int e = 0; e < NVF_TOK / 2; ++e) nvf_reg_fence(acc[e]);

    nvf_wg_epilogue(p, g, valid, alpha, tok0, r0, t, acc); // D[g, m, n] for m < valid, n < N
  }
}

// nvf_gemm_wgmma and nvf_gemm_wgmma_l2, or nvf_gemm_wgmma_tiled (gemm_common.cuh)
NVF_GEMM_ENTRY_POINTS(nvf_gemm_wgmma, nvf_gemm_wgmma_body, NVF_THREADS, NVF_WMINB)
