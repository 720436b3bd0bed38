// gemm_wgmma_ws.cu -- masked grouped NVFP4 GEMM (NT) on Hopper, warp-specialised (sm_90a).
//
// Same contract as gemm_portable.cu (NUMERICS.md 4) and the same exact BF16 widening and
// swap-AB as gemm_wgmma.cu (A = weights, 64 rows per consumer warpgroup; B = tokens, N =
// NVF_TOK), for 128 tokens per expert and more. There each warpgroup widens its own weights
// between its MMAs, so its tensor pipe waits for its ALU work (47-52 % busy at 128-512
// tokens, bench/NOTES.md, fourteenth session). Here producer warpgroups widen both operands
// of each 128-K step into a ring of shared-memory slots and consumer warpgroups only issue
// wgmma with both operands in shared memory (SS): the widening of later steps runs under
// the MMAs of earlier ones. The price is shared-memory traffic (the widened weights are
// written and read once per CTA, 4x their E2M1 bytes).
//
// Slot layout (one 128-K step): A (NVF_ROWS weight rows), then B (NVF_TOK tokens), each as
// 8 k16 MMAs x (rows / 8 core-matrix rows x 2 K halves x 8 rows x 16 bytes): K-major, no
// swizzle, lbo 128, sbo 256. K order: word j of a row's 16-byte piece q (K 32q + 8j ..
// + 7) is K half j % 2 of MMA 2q + j / 2, its 8 elements in the pair order (e, e + 4) that
// nvf_fp4x8_to_bf16x2 produces. A and B use the same order, so the dot products are the
// contract's. A producer thread widens whole (row, step) units, lanes on consecutive rows:
// a quarter warp's 16-byte stores cover one 128-byte core matrix (conflict-free).
//
// Hand-off per slot: full (every producer thread has stored and fenced its units) and empty
// (every consumer warp's MMAs that read the slot are retired). A consumer keeps one commit
// group in flight and releases a slot when the next step's group is issued.
#include "common.cuh"
#include "gemm_common.cuh"
#include "dequant_bf16.cuh"
#include "ptx_wgmma.cuh"
#include "ptx_tcgen05.cuh" // mbarriers (sm_90+)

// Tile: 128 weight rows x 128 tokens a CTA; two consumer warpgroups (m64n128k16 each) and
// NVF_PWG producer warpgroups. The host mirrors the thread count and NVF_WS_SMEM.
#define NVF_TOK 128 // tokens per tile: the wgmma N
#define NVF_CWG 2   // consumer warpgroups, 64 weight rows each
#ifndef NVF_PWG
#define NVF_PWG 1 // producer warpgroups: 1 (a thread widens a weight row and a token) or 2 (one each)
#endif
#ifndef NVF_WSDEPTH
#define NVF_WSDEPTH 2 // steps of raw token bytes a producer thread holds in registers
#endif
#ifndef NVF_WSTAGES
#define NVF_WSTAGES 3 // steps of raw weight bytes in flight through cp.async (count-based waits)
#endif
#define NVF_THREADS (128 * (NVF_CWG + NVF_PWG))
#define NVF_ROWS (64 * NVF_CWG)
#define NVF_STEP 128
#define NVF_A_MMA (NVF_ROWS * 32) // bytes of one k16 MMA's A (all consumers' rows)
#define NVF_B_MMA (NVF_TOK * 32)
#define NVF_SLOT_BYTES (8 * (NVF_A_MMA + NVF_B_MMA))
#define NVF_SLOTS 3
#define NVF_STAGE_BYTES (NVF_ROWS * 72) // raw weights of a step: 64 bytes and 8 SFs a row
#define NVF_WS_SMEM (NVF_SLOTS * NVF_SLOT_BYTES + NVF_WSTAGES * NVF_STAGE_BYTES) // the host mirrors it
static_assert(NVF_ROWS == 128 && NVF_TOK == 128, "a producer thread's rows: weight row and token pt % 128");
static_assert(NVF_PWG == 1 || NVF_PWG == 2, "NVF_PWG: 1 or 2");

// One unit's raw bytes: four 16-byte pieces (128 K of one row) and its 8 SFs.
struct NvfWsRaw {
  uint4 q[4];
  u32 sf[2];
};

// Widen a unit (one row, one step) into its slot: piece q, word j -> MMA 2q + j / 2, K half
// j % 2. A piece past K was loaded as zero codes; it takes SF 0 too, not the row's padding SF bytes.
NVF_DEV void nvf_ws_store(u32 dst, u32 mma_bytes, int s, int k, const NvfWsRaw& r) {
  #pragma unroll
  for (int q = 0; q < 4; ++q) {
    const bool in = s * NVF_STEP + 32 * q < k;
    u32 w[16];
    nvf_dequant_piece(r.q[q], in ? r.sf[q >> 1] >> (16 * (q & 1)) : 0u, w);
    #pragma unroll
    for (int j = 0; j < 4; ++j)
      asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(dst + (2 * q + (j >> 1)) * mma_bytes + (j & 1) * 128),
                   "r"(w[4 * j]), "r"(w[4 * j + 1]), "r"(w[4 * j + 2]), "r"(w[4 * j + 3])
                   : "memory");
  }
}

// Step s of a token row into registers (src null: a token past masked_m, zeros).
NVF_DEV void nvf_ws_load_token(const u8* src, const u8* sf, int s, int k, NvfWsRaw& r) {
  #pragma unroll
  for (int q = 0; q < 4; ++q) {
    const bool in = src && s * NVF_STEP + 32 * q < k;
    r.q[q] = in ? __ldg((const uint4*)(src + (i64)s * 64 + 16 * q)) : make_uint4(0, 0, 0, 0);
  }
  #pragma unroll
  for (int h = 0; h < 2; ++h) {
    const bool in = src && s * NVF_STEP + 64 * h < k;
    r.sf[h] = in ? *(const u32*)(sf + (i64)s * 1024 + 512 * h) : 0u;
  }
}

// Step s of weight row `row` (0..127 of the CTA) into its raw stage with cp.async, one commit
// group per step (empty past K or past the steps): piece q at stage + 16 (q 128 + row), SF
// group h at stage + 8192 + 4 (h 128 + row), so a warp's copies and reads are conflict-free.
// Register loads would not do: ptxas puts every load of a register pipeline on one scoreboard,
// so the first use of step s + 1 also waits for step s + 2 (bench/NOTES.md, fourteenth session).
template <bool WIDE> NVF_DEV void nvf_ws_issue_weights(const u8* src, const u8* sf, int s, int nsteps, int k, u32 stage,
                                                       int row) {
  #pragma unroll
  for (int q = 0; q < 4; ++q) {
    const bool in = src && s < nsteps && s * NVF_STEP + 32 * q < k;
    const u8* g = in ? src + (i64)s * NVF_WSTEP_BYTES + 16 * q : sf;
    if (WIDE)
      asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;" ::"r"(stage + 16 * (q * 128 + row)), "l"(g),
                   "r"(in ? 16 : 0) : "memory");
    else
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(stage + 16 * (q * 128 + row)), "l"(g),
                   "r"(in ? 16 : 0) : "memory");
  }
  #pragma unroll
  for (int h = 0; h < 2; ++h) {
    const bool in = src && s < nsteps && s * NVF_STEP + 64 * h < k;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(stage + 8192 + 4 * (h * 128 + row)),
                 "l"(in ? sf + (i64)s * 1024 + 512 * h : sf), "r"(in ? 4 : 0) : "memory");
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

template <bool WIDE> NVF_DEV void nvf_gemm_wgmma_ws_body(const NvfGemmParams& p) {
  extern __shared__ __align__(128) u8 smem[]; // NVF_SLOTS slots, then NVF_WSTAGES raw weight stages
  __shared__ __align__(8) u64 bars[2 * NVF_SLOTS]; // full[s], then empty[s]
  const int nblocks = (p.n + NVF_ROWS - 1) / NVF_ROWS;
  const int tiles = gridDim.x / (p.groups * nblocks); // token tiles per (group, block)
  const int tt = blockIdx.x % tiles, gb = blockIdx.x / tiles, g = gb / nblocks, bx = gb % nblocks;
  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);
  if (tt * NVF_TOK >= valid) return; // no tokens for this tile: the weights are not read
  const int kc4 = (p.k / 16 + 3) / 4, nsteps = (p.k + NVF_STEP - 1) / NVF_STEP;
  const u32 sbase = nvf_smem_u32(smem), full0 = nvf_smem_u32(bars), empty0 = full0 + 8u * NVF_SLOTS;
  if (threadIdx.x == 0) {
    #pragma unroll
    for (int b = 0; b < NVF_SLOTS; ++b) {
      nvf_mbar_init(full0 + 8u * b, 128 * NVF_PWG);
      nvf_mbar_init(empty0 + 8u * b, 4 * NVF_CWG);
    }
  }
  __syncthreads();

  if (threadIdx.x >= 128 * NVF_CWG) {
    // ---- producers: raw weights through cp.async stages, raw tokens through registers, both
    // widened into the ring; with two producer warpgroups the first does weights, the second tokens
    const int pt = threadIdx.x - 128 * NVF_CWG, row = pt & 127;
    const bool has_w = NVF_PWG == 1 || pt < 128, has_t = NVF_PWG == 1 || pt >= 128;
    const int wr = bx * NVF_ROWS + row;
    const u8* wsrc = has_w && wr < p.n ? nvf_wpiece(p, g, wr, 0) : 0;
    const u8* wsf = p.b_sf + g * nvf_sf_group_bytes_128x4(p.n, p.k) + nvf_sf_offset_128x4(wr < p.n ? wr : 0, 0, kc4);
    const u8* a_g = p.a + (i64)g * p.m_max * (p.k / 2);
    const u8* asf_g = p.a_sf + g * nvf_sf_group_bytes_128x4(p.m_max, p.k);
    const u32 stage0 = sbase + NVF_SLOTS * NVF_SLOT_BYTES, wdst = (row >> 3) * 256 + (row & 7) * 16;
    const u32 tdst = 8 * NVF_A_MMA + wdst;
    int slot = 0, wst = 0; // ring slot, raw weight stage of the step
    u32 phase = 1;         // empty: the phase before a fresh barrier's first counts as completed
    for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {
      const int m = tok0 + row;
      const u8* tsrc = has_t && m < valid ? a_g + (i64)m * (p.k / 2) : 0;
      const u8* tsf = asf_g + nvf_sf_offset_128x4(m < valid ? m : 0, 0, kc4);
      if (has_w) {
        #pragma unroll
        for (int d = 0; d < NVF_WSTAGES - 1; ++d)
          nvf_ws_issue_weights<WIDE>(wsrc, wsf, d, nsteps, p.k, stage0 + ((wst + d) % NVF_WSTAGES) * NVF_STAGE_BYTES, row);
      }
      NvfWsRaw traw[NVF_WSDEPTH];
      #pragma unroll
      for (int d = 0; d < NVF_WSDEPTH; ++d) nvf_ws_load_token(d < nsteps ? tsrc : 0, tsf, d, p.k, traw[d]);
      for (int s0 = 0; s0 < nsteps; s0 += NVF_WSDEPTH) {
        #pragma unroll
        for (int d = 0; d < NVF_WSDEPTH; ++d) {
          const int s = s0 + d;
          if (s < nsteps) {
            const u32 sl = sbase + slot * NVF_SLOT_BYTES;
            if (has_w) { // step s + STAGES - 1 into the stage read at step s - 1
              const int ws = wst == 0 ? NVF_WSTAGES - 1 : wst - 1;
              nvf_ws_issue_weights<WIDE>(wsrc, wsf, s + NVF_WSTAGES - 1, nsteps, p.k, stage0 + ws * NVF_STAGE_BYTES, row);
            }
            nvf_mbar_wait(empty0 + 8u * slot, phase);
            if (has_w) {
              asm volatile("cp.async.wait_group %0;" ::"n"(NVF_WSTAGES - 1) : "memory"); // step s has landed
              const u8* st = smem + NVF_SLOTS * NVF_SLOT_BYTES + wst * NVF_STAGE_BYTES;
              NvfWsRaw w;
              #pragma unroll
              for (int q = 0; q < 4; ++q) w.q[q] = *(const uint4*)(st + 16 * (q * 128 + row));
              w.sf[0] = *(const u32*)(st + 8192 + 4 * row);
              w.sf[1] = *(const u32*)(st + 8192 + 512 + 4 * row);
              nvf_ws_store(sl + wdst, NVF_A_MMA, s, p.k, w);
            }
            if (has_t) nvf_ws_store(sl + tdst, NVF_B_MMA, s, p.k, traw[d]);
            nvf_fence_proxy_async();
            nvf_mbar_arrive(full0 + 8u * slot);
            if (++slot == NVF_SLOTS) {
              slot = 0;
              phase ^= 1u;
            }
            if (++wst == NVF_WSTAGES) wst = 0;
            nvf_ws_load_token(s + NVF_WSDEPTH < nsteps ? tsrc : 0, tsf, s + NVF_WSDEPTH, p.k, traw[d]);
          }
        }
      }
      if (has_w) asm volatile("cp.async.wait_group 0;" ::: "memory"); // the empty groups past the tile
    }
    return;
  }

  // ---- consumers: wgmma from the ring, one commit group in flight ----
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, wg = threadIdx.x >> 7, t = lane & 3;
  const int r0 = bx * NVF_ROWS + wg * 64 + warp * 16 + (lane >> 2); // weight rows r0, r0 + 8
  const float alpha = p.alpha ? p.alpha[g] : 1.0f;
  int slot = 0;
  u32 phase = 0;
  for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {
    float acc[NVF_TOK / 2];
    #pragma unroll
    for (int e = 0; e < NVF_TOK / 2; ++e) acc[e] = 0.0f;
    int prev = -1; // slot of the group in flight
    for (int s = 0; s < nsteps; ++s) {
      const u32 sl = sbase + slot * NVF_SLOT_BYTES;
      nvf_mbar_wait(full0 + 8u * slot, phase);
      nvf_wgmma_fence();
      #pragma unroll
      for (int i = 0; i < 8; ++i)
        nvf_wgmma_ss_n128(acc, nvf_wgmma_desc(sl + i * NVF_A_MMA + wg * 2048, 128, 256),
                          nvf_wgmma_desc(sl + 8 * NVF_A_MMA + i * NVF_B_MMA, 128, 256));
      nvf_wgmma_commit();
      nvf_wgmma_wait<1>(); // the previous step's MMAs are retired: their slot is free
      if (prev >= 0 && lane == 0) nvf_mbar_arrive(empty0 + 8u * prev);
      prev = slot;
      if (++slot == NVF_SLOTS) {
        slot = 0;
        phase ^= 1u;
      }
    }
    nvf_wgmma_wait<0>();
    if (lane == 0) nvf_mbar_arrive(empty0 + 8u * prev);
    #pragma unroll
    for (int e = 0; e < NVF_TOK / 2; ++e) nvf_reg_fence(acc[e]);

    // ---- epilogue: D[g, m, n] for tokens m < valid and weight rows n < N ----
    #pragma unroll
    for (int j = 0; j < NVF_TOK / 8; ++j)
      #pragma unroll
      for (int e = 0; e < 4; ++e)
        nvf_store_swapab(p, g, valid, alpha, tok0 + j * 8 + 2 * t + (e & 1), r0 + (e >> 1) * 8, acc[4 * j + e]);
  }
}

// nvf_gemm_wgmma_ws and nvf_gemm_wgmma_ws_l2, or nvf_gemm_wgmma_ws_tiled (gemm_common.cuh)
NVF_GEMM_ENTRY_POINTS(nvf_gemm_wgmma_ws, nvf_gemm_wgmma_ws_body, NVF_THREADS, 1)
