// gemm_wgmma_ws.cu -- masked grouped NVFP4 GEMM (NT) on Hopper with a token producer (sm_90a).
//
// Same contract and the same step as gemm_wgmma.cu (gemm_wgmma_step.cuh): swap-AB, each
// consumer warpgroup streams 64 weight rows into registers, widens them there and issues wgmma
// with A from registers (RS); NVF_TOK tokens (32, 48, 64 or 128) are B. What differs is the token
// path. There every thread widens its part of the next K chunk of tokens between its MMAs and
// the warpgroups meet at each chunk (13 % of the stall samples on that hand-off, the token path
// a further 11-22 % of the time at 128 tokens: bench/NOTES.md, twelfth and fourteenth sessions).
// Here one more, producer warpgroup widens the tokens into a ring of NVF_SLOTS shared-memory
// slots (raw bytes through cp.async stages), up to NVF_SLOTS slots ahead, and the consumers only
// wait for a slot's full barrier; setmaxnreg moves registers from the producer to the consumers.
// 2-17 % faster than the same tiles without it on an H200 (bench/NOTES.md, fifteenth session).
//
// A slot holds NVF_SPS 128-K steps in the layout of nvf_wg_widen_token (as gemm_wgmma.cu's chunk
// buffers). Hand-off per slot: full (every producer thread has stored and fenced its units) and
// empty (every consumer warp has retired the MMAs that read the slot).
//
// With a workspace (p.tok_ws), nvf_ws_widen_tokens first widens every token step once, into
// slot images in global memory, and one producer thread fills each slot with a single bulk copy
// (full: the copy's bytes have landed). Without it, each of the N / NVF_ROWS CTAs of a group
// widens the same tokens again: 15-23 % of the time at 128 tokens (bench/NOTES.md, seventeenth
// session, probe 3).
#include "common.cuh"
#include "gemm_common.cuh"
#include "dequant_bf16.cuh"
#include "ptx_wgmma.cuh"
#include "ptx_tcgen05.cuh" // mbarriers (sm_90+)

#ifndef NVF_TOK
#define NVF_TOK 128 // tokens per tile: the wgmma N (32, 48, 64 or 128)
#endif
#ifndef NVF_CWG
#define NVF_CWG 3 // consumer warpgroups, 64 weight rows each (3 or 4)
#endif
#define NVF_THREADS (128 * (NVF_CWG + 1))
#define NVF_ROWS (64 * NVF_CWG)
#define NVF_STEP 128
// K steps per slot: 128 tokens fill the producer's 128 threads with one step, fewer tokens
// with two (units of one token and one step: 64, 96 or 128 of them)
#if defined(NVF_WSPROBE) && NVF_WSPROBE == 54
#define NVF_DEPTH 4 // (probe 5 with four steps in flight, below)
#else
#define NVF_DEPTH 2 // weight steps in flight per consumer thread (20 registers each)
#endif
#define NVF_SPS (NVF_TOK >= 128 ? 1 : 2)
#define NVF_UNITS (NVF_TOK * NVF_SPS)
#define NVF_B_MMA (NVF_TOK * 32)
#define NVF_SLOT_BYTES (NVF_SPS * 8 * NVF_B_MMA) // 16, 24 or 32 KB
#define NVF_SLOTS 6 // (fixed: the host sizes shared memory for 6 slots and 3 stages)
#define NVF_TSTAGES 3                    // slots' worth of raw tokens in flight through cp.async
#define NVF_STAGE_BYTES (NVF_UNITS * 72) // 64 bytes and 8 SFs a unit
#define NVF_WS_SMEM (NVF_SLOTS * NVF_SLOT_BYTES + NVF_TSTAGES * NVF_STAGE_BYTES) // the host mirrors it
// Producer registers after setmaxnreg; the consumers get the rest of the pool (152 each with
// three, 104 with four). Spills in ptxas 13.0 (sm_90a) at 56: none at 128 and 48 tokens, 4
// bytes at 64 (64 there: 64 bytes).
#ifndef NVF_PREGS
#define NVF_PREGS 56
#endif
// setmaxnreg moves registers within the CTA's pool, what the launch allocated: the register
// count __launch_bounds__ gives (65536 / threads, a multiple of 8) for every thread. An
// increase past the pool never completes (the first 640-thread build hung that way).
#define NVF_LAUNCH_REGS (65536 / NVF_THREADS / 8 * 8)
#define NVF_CREGS ((NVF_LAUNCH_REGS * NVF_THREADS / 128 - NVF_PREGS) / NVF_CWG / 8 * 8)
static_assert(NVF_PREGS * 128 + NVF_CREGS * 128 * NVF_CWG <= NVF_LAUNCH_REGS * NVF_THREADS, "register pool");
// NVF_EPI_SMEM (1 for tiles of up to 48 tokens): each consumer warp stages its results (16 weight rows x
// NVF_TOK tokens, bf16) in shared memory with stmatrix (transposed: a token's 8 rows in one 16-byte row)
// and writes D in whole 16-byte pieces, two lanes a 32-byte sector, instead of 16 scattered 2-byte stores
// a thread (which cost 1.4 us a unit, 17 % of Qwen3 GEMM2 at 32 tokens: bench/NOTES.md, twenty-fifth
// session, probe 4). NVF_TOK 32 bytes a warp after the raw token stages (after the slots with a workspace,
// which has no stages); the host mirrors it. The 64- and 128-token tiles have no room (227 KB).
#ifndef NVF_EPI_SMEM
#define NVF_EPI_SMEM (NVF_TOK <= 48)
#endif
#define NVF_EPI_WARP_BYTES (NVF_TOK * 32)
// NVF_EPI_REG (default where NVF_EPI_SMEM is off: the 64- and 128-token tiles): the same whole 16-byte
// stores without shared memory, the transpose done in registers (movmatrix, then a 4 x 4 exchange within
// each lane quad). The scattered stores cost 2-27 % of these tiles' time at 64-512 tokens (probe 4 on an
// H100, bench/NOTES.md, thirty-third session, X60); this form took 0.6-11.9 % off (X61: Qwen3 GEMM2 at
// m = 128 153.8 -> 137.8 us, about 40 % of probe 4's gain). At 16-32 tokens it ties with the shared-
// memory staging (-3.5 to +1.4 %), which those tiles keep. -DNVF_EPI_REG=0: the scattered stores.
#ifndef NVF_EPI_REG
#define NVF_EPI_REG 1
#endif
static_assert(NVF_WS_SMEM + (NVF_EPI_SMEM ? 4 * NVF_CWG * NVF_EPI_WARP_BYTES : 0) <= 227 * 1024, "shared memory");
static_assert(NVF_UNITS <= 128 && NVF_DEPTH % NVF_SPS == 0, "units per producer pass, whole slots per round");

// -DNVF_VARN=1, the _varn twins (the host runs them where 0 < expected_m < m_max: masked_m varies):
// a token tile that holds fewer than NVF_TOK tokens issues its MMAs with the smallest N of NVF_TOK,
// NVF_TOK - NSTEP, - 2 NSTEP, - 3 NSTEP (NSTEP = NVF_TOK / 4 in whole 8s: 32 -> 32, 24, 16, 8; 48 -> 48,
// 40, 32, 24; 64 -> 64, 48, 32, 16; 128 -> 128, 96, 64, 32) that holds them: the first N tokens of the
// slot, into the accumulator's first N / 2 registers (a prefix of the NVF_TOK fragment). Each step
// then waits for its own MMAs inside the branch, right after their commit: with MMAs of two branches
// still pending where the branches join, ptxas serialises every wgmma of the kernel (C7512). That
// wait costs up to 5-9 % where every tile is full (K <= 2048), so the plain kernels, which wait at
// the next step's start, stay for full tiles (bench/NOTES.md, twenty-fourth session).
#ifndef NVF_VARN
#define NVF_VARN 0
#endif
#define NVF_NSTEP (NVF_TOK / 32 * 8 > 8 ? NVF_TOK / 32 * 8 : 8)

// Timing-only probes (wrong results; bench/NOTES.md, seventeenth session): -DNVF_WSPROBE=1 the
// consumers load and widen no weights (A is a constant), =2 also the producer copies and widens
// no tokens (it only passes the barriers): what the RS wgmma loop with its waits and hand-offs
// costs alone; =3 only the producer idles (the weights as always); =4 the consumers store no results
// (what each unit's epilogue costs; timed with the scattered stores: with NVF_EPI_SMEM the probe build
// spills and puts stmatrix under a per-thread branch, so time it with -DNVF_EPI_SMEM=0); =5 (resident tiles
// only) the consumers load the weights as always but neither widen them nor issue MMAs (the loads are
// folded into one register): what the weight stream's access pattern gets from DRAM at this depth; =6 (resident
// 32-token tiles, results still right) a timeline: lane 0 of each consumer warp writes five %clock values a step
// (words 0, 1: start, the previous step's MMAs retired; 4, 5, 6: this step's weights widened, the next loads
// issued and, where the step opens a slot, its tokens in, its MMAs committed) for its first NVF_TRACE_STEPS
// steps, as u32 [gridDim.x < 256][4 warpgroups][4 warps][NVF_TRACE_STEPS][8] just past D's last group (D +
// groups m_max ldd elements: the caller allocates the room; tools/profile_kernels PROFILE_TRACE, tools/ws_trace.py).
// The clocks and stores change the schedule (ptxas issues the weight loads a step earlier than in the plain
// build): intervals, not exact costs.
#ifndef NVF_WSPROBE
#define NVF_WSPROBE 0
#endif
#define NVF_WSP_W (NVF_WSPROBE == 1 || NVF_WSPROBE == 2) // no weight path
#define NVF_WSP_T (NVF_WSPROBE == 2 || NVF_WSPROBE == 3) // no token path
#define NVF_TRACE (NVF_WSPROBE == 6 && NVF_CWG == 4 && NVF_TOK == 32) // probe 6's geometry, as the host reads it
// =54: probe 5 with four weight steps in flight instead of two (without the widening the registers are
// free): does the stream alone get more from DRAM with more bytes in flight? (twenty-eighth session)
#define NVF_WSP_5 (NVF_WSPROBE == 5 || NVF_WSPROBE == 54) // weights only
#define NVF_TRACE_STEPS 128
NVF_DEV u32 nvf_clock() {
  u32 c;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(c));
  return c;
}

// NVF_PERSIST (1 for the 32-token tiles and, on TILED weights, the 48- and 64-token ones; the host's
// nvfp4moe__ws_persist mirrors it; and the 128-token tile's resident twin, below): a resident grid (the host
// launches at most one CTA per SM and sets p.tiles_m). Each CTA takes the work units u = blockIdx.x, + gridDim.x, .. (unit: group, row block,
// token tile; the token tile fastest, as the one-CTA-a-unit grid's order) that hold tokens, and its
// consumers load the next unit's first weight steps under the current unit's last ones, so the weight
// stream does not drain and refill at each unit. On an H200 (bench/NOTES.md, twenty-fifth session, X27,
// B25): 32 tokens -1.4 to -7.2 %, the Qwen3 layer -5.7 %; the 48-token tile also gains on full tiles
// and on the Qwen3 and gpt-oss layers, but the DeepSeek-V3 layer lost 14-18 % under the old numbering:
// one expert there has 49 tokens, and tiles_m (from expected_m) makes its units take two passes each,
// dealt to a fixed set of CTAs that then finish late (thirty-third session, X65: units numbered without
// gaps fix it, -6.4 % on the layer, but a per-thread cursor over the groups cost more elsewhere; a table
// instead, thirty-fourth and thirty-fifth sessions: since 0.5.5 the TILED 48-token tile is resident with
// the table, NVF_PCOMPACT below). On an H100 with the register epilogue (thirty-third
// session, X62, X63): 64 tokens at m = 64 -1.6 to -17.9 % on four GEMMs (gpt-oss +1.6 %, -5.2 % in
// X62), at Poisson(40) -0.2 to -15.5 %: resident. 128 tokens gains only where K is short (Qwen3 GEMM2,
// K 768: -10.4 % at m = 128), and the resident-built code loses even on a one-CTA-a-unit grid where K
// >= 2048 (DeepSeek-V3 GEMM2 +9.0 % at 128, +4.4 % at 512): not resident, but since 0.5.6 the host builds a
// resident twin of its TILED _k256 modules (-DNVF_PERSIST=1) for K <= 1024 (thirty-sixth session, X72, H100:
// Qwen3 GEMM2 -8.0 to -8.4 % at 128, 512 and Poisson(100) tokens; with the hoisted decode: against none there
// -1.9 % at Poisson(100), within the noise at 128 and 512; at K 1536 and 2048 the twin on the resident grid
// measured mixed, -3.6 to +2.6 %, X73). ROW_MAJOR weights keep
// 0.5.2's rule: their 64-token tile built resident spills (48 bytes of stack on sm_90a) and was not
// measured. Tuning runs: -DNVF_PERSIST=0/1 (every tile), -DNVF_PERSIST_T32 (0.5.2's rule: only the
// 32-token tiles); the host parses both.
// NVF_PCOMPACT: the resident grid's units numbered without gaps (nvf_ws_build_tab below; the host passes p.ptab
// where the table fits). By default (0.5.5) only on the TILED 48-token tile, which it puts on the resident grid
// (bench/NOTES.md, thirty-fifth session: at Poisson(33) tokens 2 to 16 % faster, where on the 32- and 64-token tiles
// it bought nothing); tuning runs: 0 none (0.5.4's kernels, the 48-token tile not resident), 1 on every resident
// tile but the 128-token one, 2 as 1 and the TILED 48-token tile resident.
#ifdef NVF_PCOMPACT_PROBE // (thirty-fifth session, timing only, alone; the host builds the table: its define reads
#define NVF_PCOMPACT 1    // "NVF_PCOMPACT") 1: the table built but not used (the old numbering); 2: used, without
                          // the hoisted decode; other values as -DNVF_PCOMPACT=1
#else
#define NVF_PCOMPACT_PROBE 0
#endif
#ifndef NVF_PCOMPACT
#define NVF_PCOMPACT_DEFAULT 1
#define NVF_PCOMPACT (NVF_TOK == 48 ? 2 : 0)
#else
#define NVF_PCOMPACT_DEFAULT 0
#endif
// The consumers decode the next unit once, when a unit starts, and keep it (group, block, token tile) for the unit
// after, instead of decoding it in the step loop's last round and again when it starts: on every resident tile
// but the 64-token one, unless -DNVF_PCOMPACT=0 or -DNVF_PCOMPACT_PROBE=2; on all under -DNVF_WSNEXT=1, on none
// under -DNVF_WSNEXT=-1 (tuning runs). Thirty-fifth session (X70, H100): the 32-token tile's step loop 476 -> 365
// SASS instructions (stack 0 -> 8 bytes), 1.5-4.4 % faster at 32 tokens; the TILED 48-token tile's stack 0 -> 32
// bytes (timed with it: X69's =2 arm); the 64-token tile's stack 8 -> 48 bytes and 3-4 % slower at 64: not there.
#ifndef NVF_WSNEXT
#define NVF_WSNEXT 0
#endif
#define NVF_WSNEXT_ON                                                                                                  \
  (NVF_WSNEXT > 0 || (NVF_WSNEXT == 0 && NVF_TOK != 64 && NVF_PCOMPACT_PROBE != 2 && (NVF_PCOMPACT_DEFAULT || NVF_PCOMPACT)))
#ifndef NVF_PERSIST
#if defined(NVF_PERSIST_T32) || !(defined(NVF_WTILED) && NVF_WTILED)
#define NVF_PERSIST (NVF_TOK == 32)
#else
#define NVF_PERSIST (NVF_TOK == 32 || NVF_TOK == 64 || (NVF_PCOMPACT >= 2 && NVF_TOK == 48))
#endif
#endif

// The 32-token tiles' weights by strong loads (nvf_ldg_weights: ptxas keeps them in their step);
// the other tiles already issue them there.
#define NVF_WSTRONG (NVF_TOK == 32)

static_assert(NVF_TOK == 32 || NVF_TOK == 48 || NVF_TOK == 64 || NVF_TOK == 128, "NVF_TOK must be 32, 48, 64 or 128");
#include "gemm_wgmma_step.cuh"

// Unit u's token step s into its raw stage with cp.async, one commit group per slot (zero-filled
// past K, past the steps and for a token past masked_m, whose copies name the 16-byte aligned
// `dummy` and read nothing): piece q at stage + 16 (q UNITS + u), SF group h at stage + 64
// UNITS + 4 (h UNITS + u), so a warp's copies and reads are conflict-free. Register loads would
// not do: ptxas puts every load of a register pipeline on one scoreboard, so the first use of
// step s + 1 would also wait for step s + 2 (bench/NOTES.md, fourteenth session).
NVF_DEV void nvf_tp_issue(const u8* src, const u8* sf, const u8* dummy, int s, int nsteps, int k, u32 stage, int u) {
  if (NVF_UNITS == 128 || u < NVF_UNITS) // threads past the units copy nothing (their commit groups are empty)
  #pragma unroll
  for (int q = 0; q < 4; ++q) {
    const bool in = src && s < nsteps && s * NVF_STEP + 32 * q < k;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(stage + 16 * (q * NVF_UNITS + u)),
                 "l"(in ? src + (i64)s * 64 + 16 * q : dummy), "r"(in ? 16 : 0) : "memory");
  }
  if (NVF_UNITS == 128 || u < NVF_UNITS)
  #pragma unroll
  for (int h = 0; h < 2; ++h) {
    const bool in = src && s < nsteps && s * NVF_STEP + 64 * h < k;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(stage + 64 * NVF_UNITS + 4 * (h * NVF_UNITS + u)),
                 "l"(in ? sf + (i64)s * 1024 + 512 * h : sf), "r"(in ? 4 : 0) : "memory");
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Widen unit u's raw token step s (in its stage) into a slot (dst: the unit's row in MMA 0).
NVF_DEV void nvf_tp_widen(const u8* st, u32 dst, int s, int k, int u) {
  uint4 q[4];
  #pragma unroll
  for (int t = 0; t < 4; ++t) q[t] = *(const uint4*)(st + 16 * (t * NVF_UNITS + u));
  const u32 sfw[2] = {*(const u32*)(st + 64 * NVF_UNITS + 4 * u), *(const u32*)(st + 68 * NVF_UNITS + 4 * u)};
  nvf_wg_widen_token(q, sfw, s * NVF_STEP, k, dst);
}

// Byte offset of unit (token n, step ss of the slot) in a slot (its row in MMA 0), as the
// producer widens it and the pre-pass writes the slot images.
NVF_DEV int nvf_slot_unit_offset(int n, int ss) { return ss * 8 * NVF_B_MMA + (n >> 3) * 256 + (n & 7) * 16; }

// The next ring slot; the barrier phase flips each time the ring wraps.
NVF_DEV void nvf_ring_next(int& slot, u32& phase) {
  if (++slot == NVF_SLOTS) {
    slot = 0;
    phase ^= 1u;
  }
}

// The step's MMAs with N = TN: fence, MMAs, commit, and with NVF_VARN the wait for them.
template <int TN> NVF_DEV void nvf_ws_mmas_n(float* acc, const u32* a, u32 buf) {
  nvf_wgmma_fence();
  nvf_wg_mmas_n<TN>(acc, a, buf);
  nvf_wgmma_commit();
  if (NVF_VARN) nvf_wgmma_wait<0>();
}
// ... with N = NVF_TOK - sub NVF_NSTEP (sub 0 .. 3 with NVF_VARN, else 0; uniform in the CTA).
NVF_DEV void nvf_ws_mmas(float* acc, const u32* a, u32 buf, int sub) {
  if (NVF_VARN && sub == 3) nvf_ws_mmas_n<NVF_TOK - 3 * NVF_NSTEP>(acc, a, buf);
  else if (NVF_VARN && sub == 2) nvf_ws_mmas_n<NVF_TOK - 2 * NVF_NSTEP>(acc, a, buf);
  else if (NVF_VARN && sub == 1) nvf_ws_mmas_n<NVF_TOK - NVF_NSTEP>(acc, a, buf);
  else nvf_ws_mmas_n<NVF_TOK>(acc, a, buf);
}

// The resident grid's work units. By default every (group, row block, token tile < tiles) is a unit and
// CTAs skip those without tokens: an expert with more than tiles_m token tiles (tiles_m from expected_m)
// then makes its units take two passes each, on a fixed set of CTAs that finish late (the 48-token tile's loss on the
// DeepSeek-V3 layer). With p.ptab (the TILED 48-token tile by default, every resident tile but the 128-token
// one under -DNVF_PCOMPACT=1 or 2; the table must fit) they are
// numbered without gaps: one unit per (group g, row block, token tile holding tokens), the token tile
// fastest, the groups in order; tab[g] (shared memory, groups + 1 ints after the staging areas: the host
// adds them) counts the units before group g. Each CTA builds the table at its start (every thread loads masked_m
// of its groups, then warp 0 scans them in place by shuffles, 32 groups a pass) and finds a unit's group from it
// (nvf_ws_decode), so no thread carries a cursor over the groups (X65's cursor cost registers and serial
// loads). Measured (bench/NOTES.md, thirty-fourth and thirty-fifth sessions, X66, X68-X70 on an H100, X67
// on an H200): with the 48-token tile resident (=2) the DeepSeek-V3 layer -5.4 % / -2.5 %, the GEMMs at
// Poisson(33) -2 to -16 %; on the 32- and 64-token tiles the table itself bought nothing (+-0.5 % at
// Poisson(33)) and cost up to 3.5 % at Poisson(16) (Qwen3 GEMM2): so by default only on the 48-token tile.
struct NvfWsUnit {
  int g, blk, tt; // group, row block, first token tile
};
NVF_DEV void nvf_ws_build_tab(const NvfGemmParams& p, int* tab, int tiles, int nblocks) {
  for (int g = threadIdx.x; g < p.groups; g += blockDim.x) // every thread loads: one load's latency, not one a pass
    tab[g + 1] = min((nvf_valid_rows(p.masked_m, g, p.m_max) + NVF_TOK - 1) / NVF_TOK, tiles) * nblocks;
  __syncthreads();
  if (threadIdx.x >= 32) return;
  const int lane = threadIdx.x;
  int carry = 0;
  if (lane == 0) tab[0] = 0;
  for (int g0 = 0; g0 < p.groups; g0 += 32) { // in place, 32 groups a pass
    const int g = g0 + lane;
    int c = g < p.groups ? tab[g + 1] : 0;
    #pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int x = __shfl_up_sync(0xffffffffu, c, o);
      if (lane >= o) c += x;
    }
    if (g < p.groups) tab[g + 1] = carry + c;
    carry += __shfl_sync(0xffffffffu, c, 31);
  }
}
// Unit u's group, block and token tile. WARP: the whole warp calls it with the same u (the consumers and
// the token producer), and the group is found by ballots: lane l tests the table at every 32nd group, then
// at each group of the 32 that hold u (two shared-memory loads a thread); else (the workspace producer's
// lone thread) by binary search. (A binary search a thread, twice a unit in the consumers, cost +1.2 to
// +15.8 % at uniform 32 and 64 tokens, X66: Qwen3 GEMM2, K 768, has only six steps a unit.)
template <bool WARP> NVF_DEV NvfWsUnit nvf_ws_decode(const NvfGemmParams& p, const int* tab, int u, int tiles, int nblocks) {
  NvfWsUnit w;
  if (!NVF_PCOMPACT || !p.ptab || NVF_PCOMPACT_PROBE == 1) {
    w.g = u / (tiles * nblocks);
    w.blk = u / tiles % nblocks;
    w.tt = u % tiles;
    return w;
  }
  int lo = 0;
  if (WARP) {
    const int lane = threadIdx.x & 31;
    for (int base = 0;; base += 32 * 32) { // groups 32 c .. 32 c + 31 hold u: c = the boundaries 32 j <= u
      const int h = base + 32 * (lane + 1);
      const u32 b = __ballot_sync(0xffffffffu, h < p.groups && tab[h] <= u);
      if (b != 0xffffffffu) {
        lo = base + 32 * __popc(b);
        break;
      }
    }
    const int h = lo + lane + 1; // (lane 31 tests the next boundary: not <= u)
    lo += __popc(__ballot_sync(0xffffffffu, h < p.groups && tab[h] <= u));
  } else {
    int hi = p.groups; // tab[lo] <= u < tab[hi]
    while (hi - lo > 1) {
      const int mid = (lo + hi) >> 1;
      if (tab[mid] <= u) lo = mid;
      else hi = mid;
    }
  }
  const int r = u - tab[lo], nt = (tab[lo + 1] - tab[lo]) / nblocks; // the group's token tiles
  w.g = lo;
  w.blk = r / nt;
  w.tt = r % nt;
  return w;
}

// The first unit at or after u (stepping by the grid) whose token tile holds tokens, or -1.
NVF_DEV int nvf_ws_unit(const NvfGemmParams& p, const int* tab, int u, int tiles, int nblocks) {
  if (NVF_PCOMPACT && p.ptab && NVF_PCOMPACT_PROBE != 1) return u < tab[p.groups] ? u : -1;
  for (; u < p.groups * nblocks * tiles; u += gridDim.x)
    if ((u % tiles) * NVF_TOK < nvf_valid_rows(p.masked_m, u / (tiles * nblocks), p.m_max)) return u;
  return -1;
}

// The rows of unit w's weight block a consumer thread reads: its rows rw, rw + 8 of the block; and unit u's.
NVF_DEV NvfWgRows nvf_ws_rows(const NvfGemmParams& p, const NvfWsUnit& w, int rw, int t, int kc4) {
  return nvf_wg_rows(p, w.g, w.blk * NVF_ROWS + rw, t, kc4);
}
NVF_DEV NvfWgRows nvf_ws_unit_rows(const NvfGemmParams& p, const int* tab, int u, int tiles, int nblocks, int rw, int t,
                                   int kc4) {
  return nvf_ws_rows(p, nvf_ws_decode<true>(p, tab, u, tiles, nblocks), rw, t, kc4);
}

// The warp's results D[g, tok0 + token, rw0 + row] (rows rw0 .. rw0 + 15: its rows r0 and r0 + 8 of the
// m64nNk16 layout) through its staging area stg (NVF_EPI_WARP_BYTES): each value as nvf_store_swapab
// computes it, packed in token pairs, stored by stmatrix .trans as one 16-byte row per (token, 8 rows)
// at token 32 + 16 (half ^ token bit 2) (the swizzle spreads a matrix's 8 rows over all banks), then
// read back a piece a lane and written whole; only tokens < valid and rows < N (N % 8 == 0: a piece is
// all in or all out).
// -DNVF_EPI_FOLD=1 (opt-in, tuning runs; fifty-third session): the widened operands' 2^-16 (F16: 2^-28) undone
// on each token's scale (alpha * row_scale * 2^16, once a token) instead of on every accumulator: one multiply a
// value fewer in the two epilogues below (net 32 a thread at 128 tokens: 64 go, 32 token scales gain one). The
// same results: both round alpha * row_scale (s) once, then the exact product s * acc * 2^16 once (scaling by a
// power of 2 is exact), except where one side's scaling overflows: s >= 2^112 (F16 2^100) here, |acc| >= 2^112
// (F16 2^100) in the default (unreachable: |acc| is at most about 110 K).
#ifndef NVF_EPI_FOLD
#define NVF_EPI_FOLD 0
#endif
NVF_DEV float nvf_ws_tok_scale(float alpha, float rs) {
  return NVF_EPI_FOLD ? __fmul_rn(__fmul_rn(alpha, rs), NVF_DEQ_SCALE2) : __fmul_rn(alpha, rs);
}
NVF_DEV float nvf_ws_out(float s, float acc) {
  return NVF_EPI_FOLD ? __fmul_rn(s, acc) : __fmul_rn(s, __fmul_rn(acc, NVF_DEQ_SCALE2));
}
// The staging area's 16-byte row of (token tok, rows 8 h ..): halves swizzled by token bit 2.
NVF_DEV u32 nvf_ws_epi_row(u32 stg, int tok, int h) { return stg + tok * 32 + 16 * (h ^ ((tok >> 2) & 1)); }

NVF_DEV void nvf_ws_epilogue_smem(const NvfGemmParams& p, int g, int valid, float alpha, int tok0, int rw0, u32 stg,
                                  int lane, const float* acc) {
  const int t = lane & 3;
  u32 v[NVF_TOK / 4]; // matrix 2j + h: tokens 8j .., rows 8h ..
  #pragma unroll
  for (int j = 0; j < NVF_TOK / 8; ++j) {
    const int m = tok0 + 8 * j + 2 * t;
    const float rs0 = p.row_scale && m < valid ? p.row_scale[(i64)g * p.m_max + m] : 1.0f;
    const float rs1 = p.row_scale && m + 1 < valid ? p.row_scale[(i64)g * p.m_max + m + 1] : 1.0f;
    const float s0 = nvf_ws_tok_scale(alpha, rs0), s1 = nvf_ws_tok_scale(alpha, rs1);
    #pragma unroll
    for (int h = 0; h < 2; ++h)
      v[2 * j + h] = nvf_pack_bf16x2(nvf_ws_out(s0, acc[4 * j + 2 * h]), nvf_ws_out(s1, acc[4 * j + 2 * h + 1]));
  }
  __syncwarp(); // the last unit's reads of the area are done
  #pragma unroll
  for (int q = 0; q < NVF_TOK / 16; ++q) { // four matrices a stmatrix: lane k names row k % 8 of matrix k / 8
    const int mi = 4 * q + (lane >> 3), tok = 8 * (mi >> 1) + (lane & 7), h = mi & 1;
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(nvf_ws_epi_row(stg, tok, h)),
                 "r"(v[4 * q]), "r"(v[4 * q + 1]), "r"(v[4 * q + 2]), "r"(v[4 * q + 3]) : "memory");
  }
  __syncwarp();
  #pragma unroll
  for (int c = lane; c < 2 * NVF_TOK; c += 32) { // piece c: token c / 2, rows 8 (c % 2) ..
    const int tok = c >> 1, h = c & 1, m = tok0 + tok;
    if (m < valid && rw0 + 8 * h < p.n) {
      uint4 x;
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w)
                   : "r"(nvf_ws_epi_row(stg, tok, h)) : "memory");
      *(uint4*)(p.d + ((i64)g * p.m_max + m) * p.ldd + rw0 + 8 * h) = x;
    }
  }
}

// An 8 x 8 b16 matrix in the mma fragment layout (lane l: row l / 4, columns 2 (l % 4) ..) transposed.
NVF_DEV u32 nvf_movmatrix_trans(u32 x) {
  u32 y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}

// The same results as nvf_ws_epilogue_smem, with no staging area: the four matrices 4q .. 4q + 3 (tokens
// 16q .., rows 8h ..: matrix 2j + h as there) are transposed by movmatrix, after which lane (l / 4, t) holds
// word t (rows 8h + 2t, + 1) of token 8j + l / 4 of each; two butterfly exchanges within the lane quad (xor
// 2: the off-diagonal 2 x 2 blocks, xor 1: within them) then give lane t all four words of matrix 4q + t,
// one 16-byte piece of D (token 16q + 8 (t / 2) + l / 4, rows 8 (t % 2) ..), written whole.
NVF_DEV void nvf_ws_epilogue_reg(const NvfGemmParams& p, int g, int valid, float alpha, int tok0, int rw0, int lane,
                                 const float* acc) {
  const int t = lane & 3;
  const bool hi = (t & 2) != 0, lo = (t & 1) != 0;
  #pragma unroll
  for (int q = 0; q < NVF_TOK / 16; ++q) {
    u32 a[4];
    #pragma unroll
    for (int jj = 0; jj < 2; ++jj) {
      const int j = 2 * q + jj, m = tok0 + 8 * j + 2 * t;
      const float rs0 = p.row_scale && m < valid ? p.row_scale[(i64)g * p.m_max + m] : 1.0f;
      const float rs1 = p.row_scale && m + 1 < valid ? p.row_scale[(i64)g * p.m_max + m + 1] : 1.0f;
      const float s0 = nvf_ws_tok_scale(alpha, rs0), s1 = nvf_ws_tok_scale(alpha, rs1);
      #pragma unroll
      for (int h = 0; h < 2; ++h)
        a[2 * jj + h] = nvf_movmatrix_trans(nvf_pack_bf16x2(nvf_ws_out(s0, acc[4 * j + 2 * h]),
                                                            nvf_ws_out(s1, acc[4 * j + 2 * h + 1])));
    }
    u32 r0 = __shfl_xor_sync(0xffffffffu, hi ? a[0] : a[2], 2), r1 = __shfl_xor_sync(0xffffffffu, hi ? a[1] : a[3], 2);
    if (hi) { a[0] = r0; a[1] = r1; } else { a[2] = r0; a[3] = r1; }
    r0 = __shfl_xor_sync(0xffffffffu, lo ? a[0] : a[1], 1);
    r1 = __shfl_xor_sync(0xffffffffu, lo ? a[2] : a[3], 1);
    if (lo) { a[0] = r0; a[2] = r1; } else { a[1] = r0; a[3] = r1; }
    const int m = tok0 + 16 * q + 8 * (t >> 1) + (lane >> 2), n = rw0 + 8 * (t & 1);
    if (m < valid && n < p.n) *(uint4*)(p.d + ((i64)g * p.m_max + m) * p.ldd + n) = make_uint4(a[0], a[1], a[2], a[3]);
  }
}

template <bool WIDE> NVF_DEV void nvf_gemm_wgmma_ws_body(const NvfGemmParams& p) {
  // NVF_SLOTS slots, NVF_TSTAGES raw token stages (none with a workspace), the warps' staged results (NVF_EPI_SMEM)
  extern __shared__ __align__(128) u8 smem[];
  __shared__ __align__(8) u64 bars[2 * NVF_SLOTS]; // full[s], then empty[s]
  const int nblocks = (p.n + NVF_ROWS - 1) / NVF_ROWS;
#if NVF_PERSIST
  const int tiles = p.tiles_m; // token tiles per (group, block)
  int* const tab = (int*)(smem + NVF_SLOTS * NVF_SLOT_BYTES + (p.tok_ws ? 0 : NVF_TSTAGES * NVF_STAGE_BYTES) +
                          (NVF_EPI_SMEM ? 4 * NVF_CWG * NVF_EPI_WARP_BYTES : 0)); // p.ptab: units before each group
  if (NVF_PCOMPACT && p.ptab) nvf_ws_build_tab(p, tab, tiles, nblocks);
#if !NVF_PCOMPACT
  const int u0 = nvf_ws_unit(p, tab, blockIdx.x, tiles, nblocks);
  if (u0 < 0) return; // no unit with tokens for this CTA
#endif
#else
  const int tiles = gridDim.x / (p.groups * nblocks); // token tiles per (group, block)
  const int tt = blockIdx.x % tiles, gb = blockIdx.x / tiles, g = gb / nblocks, bx = gb % nblocks;
  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);
  if (tt * NVF_TOK >= valid) return; // no tokens for this tile: the weights are not read
#endif
  const int kc4 = (p.k / 16 + 3) / 4, nsteps = (p.k + NVF_STEP - 1) / NVF_STEP;
  const u32 sbase = nvf_smem_u32(smem), full0 = nvf_smem_u32(bars), empty0 = full0 + 8u * NVF_SLOTS;
  if (threadIdx.x == 0) {
    #pragma unroll
    for (int b = 0; b < NVF_SLOTS; ++b) {
      nvf_mbar_init(full0 + 8u * b, p.tok_ws ? 1 : 128); // one bulk copy, or every producer thread
      nvf_mbar_init(empty0 + 8u * b, 4 * NVF_CWG);
    }
    if (p.tok_ws) nvf_fence_mbar_init(); // the inits visible to the bulk copies' complete_tx (async proxy)
  }
  __syncthreads(); // (and the unit table built)
#if NVF_PERSIST && NVF_PCOMPACT
  const int u0 = nvf_ws_unit(p, tab, blockIdx.x, tiles, nblocks);
  if (u0 < 0) return; // no unit with tokens for this CTA
#endif

  if (threadIdx.x >= 128 * NVF_CWG && p.tok_ws) {
    // ---- producer with a workspace: thread 0 copies the tile's slot images, one bulk copy a slot
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(NVF_PREGS));
    if (threadIdx.x != 128 * NVF_CWG) return;
    const int nslots = (nsteps + NVF_SPS - 1) / NVF_SPS;
    int slot = 0;
    u32 phase = 1; // as below
    const u64 keep = NVF_WHINT ? nvf_policy_evict_last() : 0; // (-DNVF_WHINT=1: gemm_common.cuh)
#if NVF_PERSIST
    for (int u = u0; u >= 0; u = nvf_ws_unit(p, tab, u + gridDim.x, tiles, nblocks)) {
      const NvfWsUnit w = nvf_ws_decode<false>(p, tab, u, tiles, nblocks);
      const int tt = w.tt, g = w.g, valid = nvf_valid_rows(p.masked_m, g, p.m_max);
#endif
    const u8* img = p.tok_ws + (i64)g * ((p.m_max + NVF_TOK - 1) / NVF_TOK) * nslots * NVF_SLOT_BYTES;
    for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {
      const u8* src = img + (i64)(tok0 / NVF_TOK) * nslots * NVF_SLOT_BYTES;
      for (int f = 0; f < nslots; ++f) {
        nvf_mbar_wait(empty0 + 8u * slot, phase);
        nvf_mbar_expect_tx(full0 + 8u * slot, NVF_SLOT_BYTES);
        if (NVF_WHINT)
          nvf_bulk_load_hint(sbase + slot * NVF_SLOT_BYTES, src + (i64)f * NVF_SLOT_BYTES, NVF_SLOT_BYTES, full0 + 8u * slot,
                             keep);
        else
          nvf_bulk_load(sbase + slot * NVF_SLOT_BYTES, src + (i64)f * NVF_SLOT_BYTES, NVF_SLOT_BYTES, full0 + 8u * slot);
        nvf_ring_next(slot, phase);
      }
    }
#if NVF_PERSIST
    }
#endif
    return;
  }
  if (threadIdx.x >= 128 * NVF_CWG) {
    // ---- producer: unit pt = (token pt % TOK, step pt / TOK of each slot), raw through cp.async
    // stages, widened into the ring; threads past the units only pass the barriers
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(NVF_PREGS));
    const int pt = threadIdx.x - 128 * NVF_CWG, n = NVF_SPS == 1 ? pt : pt % NVF_TOK, ss = NVF_SPS == 1 ? 0 : pt / NVF_TOK;
    const bool live = NVF_UNITS == 128 || pt < NVF_UNITS;
    const int nslots = (nsteps + NVF_SPS - 1) / NVF_SPS; // slot fills per token tile
    const u32 stage0 = sbase + NVF_SLOTS * NVF_SLOT_BYTES;
    const u32 dst0 = nvf_slot_unit_offset(n, ss);
    int slot = 0, st = 0; // ring slot, raw stage of the fill
    u32 phase = 1;        // empty: the phase before a fresh barrier's first counts as completed
#if NVF_PERSIST
    for (int u = u0; u >= 0; u = nvf_ws_unit(p, tab, u + gridDim.x, tiles, nblocks)) {
      const NvfWsUnit w = nvf_ws_decode<true>(p, tab, u, tiles, nblocks);
      const int tt = w.tt, g = w.g, valid = nvf_valid_rows(p.masked_m, g, p.m_max);
#endif
    const u8* a_g = p.a + (i64)g * p.m_max * (p.k / 2);
    const u8* asf_g = p.a_sf + g * nvf_sf_group_bytes_128x4(p.m_max, p.k);
    for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {
      const int m = tok0 + n;
      const u8* src = live && m < valid ? a_g + (i64)m * (p.k / 2) : 0;
      const u8* sf = asf_g + nvf_sf_offset_128x4(m < valid ? m : 0, 0, kc4);
      #pragma unroll
      for (int d = 0; d < NVF_TSTAGES - 1; ++d)
        if (!NVF_WSP_T) nvf_tp_issue(src, sf, p.a, d * NVF_SPS + ss, nsteps, p.k, stage0 + ((st + d) % NVF_TSTAGES) * NVF_STAGE_BYTES, pt);
      for (int f = 0; f < nslots; ++f) {
        if (!NVF_WSP_T) nvf_tp_issue(src, sf, p.a, (f + NVF_TSTAGES - 1) * NVF_SPS + ss, nsteps, p.k,
                     stage0 + (st == 0 ? NVF_TSTAGES - 1 : st - 1) * NVF_STAGE_BYTES, pt); // the stage read last fill
        nvf_mbar_wait(empty0 + 8u * slot, phase);
        asm volatile("cp.async.wait_group %0;" ::"n"(NVF_TSTAGES - 1) : "memory"); // fill f has landed
        if (live && !NVF_WSP_T)
          nvf_tp_widen(smem + NVF_SLOTS * NVF_SLOT_BYTES + st * NVF_STAGE_BYTES, sbase + slot * NVF_SLOT_BYTES + dst0,
                       f * NVF_SPS + ss, p.k, pt);
        nvf_fence_proxy_async();
        nvf_mbar_arrive(full0 + 8u * slot);
        nvf_ring_next(slot, phase);
        if (++st == NVF_TSTAGES) st = 0;
      }
      asm volatile("cp.async.wait_group 0;" ::: "memory"); // the zero fills past the tile's steps land first
    }
#if NVF_PERSIST
    }
#endif
    return;
  }

  // ---- consumers: gemm_wgmma.cu's step, B from the ring ----
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(NVF_CREGS));
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, wg = threadIdx.x >> 7, t = lane & 3;
  int slot = 0;
  u32 phase = 0;
  const u32 epi0 = sbase + NVF_SLOTS * NVF_SLOT_BYTES + (p.tok_ws ? 0 : NVF_TSTAGES * NVF_STAGE_BYTES); // NVF_EPI_SMEM
#if NVF_PERSIST
  const int rw = wg * 64 + warp * 16 + (lane >> 2); // the thread's weight rows in a block: rw, rw + 8
  const int nsteps_e = (nsteps + NVF_DEPTH - 1) / NVF_DEPTH * NVF_DEPTH; // the step loop's length (whole rounds)
  int u = u0;
  u32* trace = NVF_TRACE ? (u32*)(p.d + (i64)p.groups * p.m_max * p.ldd) + (((i64)blockIdx.x * 4 + wg) * 4 + warp) * NVF_TRACE_STEPS * 8 : 0;
  int tstep = blockIdx.x < 256 ? 0 : NVF_TRACE_STEPS; // (probe 6) steps traced; none past the caller's 256 CTAs
#if NVF_WSNEXT_ON
  NvfWsUnit w = nvf_ws_decode<true>(p, tab, u, tiles, nblocks); // the unit's; then the next one's, decoded below
  NvfWgRows wr = nvf_ws_rows(p, w, rw, t, kc4);
#else
  NvfWgRows wr = nvf_ws_unit_rows(p, tab, u, tiles, nblocks, rw, t, kc4);
#endif
  uint4 wq[NVF_DEPTH][2];
  u32 ws[NVF_DEPTH][2];
  #pragma unroll
  for (int d = 0; d < NVF_DEPTH; ++d)
    if (!NVF_WSP_W) nvf_wg_load<WIDE>(wr, nvf_wg_step_in<false>(d, nsteps), nsteps, p.k, wq[d], ws[d]);
  while (u >= 0) {
#if !NVF_WSNEXT_ON
    const NvfWsUnit w = nvf_ws_decode<true>(p, tab, u, tiles, nblocks);
#endif
    const int tt = w.tt, g = w.g, r0 = w.blk * NVF_ROWS + rw;
    const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);
    const float alpha = p.alpha ? p.alpha[g] : 1.0f;
    const int un = nvf_ws_unit(p, tab, u + gridDim.x, tiles, nblocks); // the next unit, whose first steps load here
#if NVF_WSNEXT_ON
    const NvfWsUnit wn = un >= 0 ? nvf_ws_decode<true>(p, tab, un, tiles, nblocks) : w;
#endif
#else
  const int r0 = bx * NVF_ROWS + wg * 64 + warp * 16 + (lane >> 2); // weight rows r0, r0 + 8
  const NvfWgRows wr = nvf_wg_rows(p, g, r0, t, kc4);
  const float alpha = p.alpha ? p.alpha[g] : 1.0f;
#endif
  for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {
    int sub = 0; // the smaller N this tile's tokens fit
    while (NVF_VARN && sub < 3 && valid - tok0 <= NVF_TOK - (sub + 1) * NVF_NSTEP) ++sub;
    float acc[NVF_TOK / 2];
    #pragma unroll
    for (int e = 0; e < NVF_TOK / 2; ++e) acc[e] = 0.0f;
#if NVF_PERSIST
    const bool last = tok0 + tiles * NVF_TOK >= valid; // the unit's last token tile: the loads ahead are the next unit's
#else
    uint4 wq[NVF_DEPTH][2];
    u32 ws[NVF_DEPTH][2];
    #pragma unroll
    for (int d = 0; d < NVF_DEPTH; ++d)
      if (!NVF_WSP_W) nvf_wg_load<WIDE>(wr, nvf_wg_step_in<false>(d, nsteps), nsteps, p.k, wq[d], ws[d]);
#endif
    // One set of widened weights (see gemm_wgmma.cu: a second set had its registers reused
    // under a pending wgmma), so every step first waits for all earlier MMAs.
    u32 a[32];
    if (NVF_WSP_W)
      #pragma unroll
      for (int i = 0; i < 32; ++i) a[i] = 0x3C003C00u + (u32)(lane & 3) + 8u * (u32)i; // probe: any values
    int prev = -1; // slot of the step in flight
#if NVF_PERSIST
    // Each step refills its slot d of wq[] with step s + DEPTH - ldoff of wr (ldn steps; 0: none, zeros).
    // The rounds of DEPTH steps keep d = step % DEPTH, so the last round, past this tile's steps by a
    // whole round, loads the next tile's first steps: this unit's next token tile, or the next unit's.
    int ldoff = 0, ldn = nsteps;
    u32 fold = 0; // (probe 5)
    for (int s0 = 0; s0 < nsteps; s0 += NVF_DEPTH) {
      if (s0 + NVF_DEPTH >= nsteps_e) { // the last round
        ldoff = nsteps_e;
#if NVF_WSNEXT_ON
        if (last && un >= 0) wr = nvf_ws_rows(p, wn, rw, t, kc4);
#else
        if (last && un >= 0) wr = nvf_ws_unit_rows(p, tab, un, tiles, nblocks, rw, t, kc4);
#endif
        if (last && un < 0) ldn = 0;
      }
      #pragma unroll
      for (int d = 0; d < NVF_DEPTH; ++d) {
        const int s = s0 + d;
        u32 c1 = 0, c2 = 0; // (probe 6)
        if (s < nsteps) {
          const u32 c0 = NVF_TRACE ? nvf_clock() : 0u;
          if (!NVF_VARN) nvf_wgmma_wait<0>(); // step s - 1, the last reader of a[] (and of its slot if it ended one), is done
          if (NVF_TRACE) { // stored at once: no clock stays live over the step
            const u32 c4 = nvf_clock();
            if (lane == 0 && tstep < NVF_TRACE_STEPS) *(uint2*)(trace + 8 * tstep) = make_uint2(c0, c4);
          }
          if (s % NVF_SPS == 0 && prev >= 0 && lane == 0) nvf_mbar_arrive(empty0 + 8u * prev);
          if (NVF_WSP_5)
            fold ^= wq[d][0].x ^ wq[d][0].y ^ wq[d][0].z ^ wq[d][0].w ^ wq[d][1].x ^ wq[d][1].y ^ wq[d][1].z ^ wq[d][1].w ^
                    ws[d][0] ^ ws[d][1];
          else if (!NVF_WSP_W) {
            nvf_dequant_piece<NVF_WT_ENC>(wq[d][0], ws[d][0], a);
            nvf_dequant_piece<NVF_WT_ENC>(wq[d][1], ws[d][1], a + 16);
          }
          if (NVF_TRACE) {
            #pragma unroll
            for (int i = 0; i < 32; ++i) asm volatile("" : "+r"(a[i])); // the widening is done before the clock is read
            c2 = nvf_clock();
          }
        }
        // (zeros past ldn; under NVF_WKFULL a step in bounds, past ldn a re-read)
        if (!NVF_WSP_W) nvf_wg_load<WIDE>(wr, nvf_wg_step_in<false>(s + NVF_DEPTH - ldoff, nsteps), ldn, p.k, wq[d], ws[d]);
        if (s < nsteps) {
          const bool first = s % NVF_SPS == 0; // the step opens a slot (d % SPS: known at compile time)
          const u32 buf = sbase + slot * NVF_SLOT_BYTES + (s % NVF_SPS) * 8 * NVF_B_MMA;
          if (first) nvf_mbar_wait(full0 + 8u * slot, phase); // the slot's tokens are in
          if (NVF_TRACE) c1 = nvf_clock();
          if (!NVF_WSP_5) nvf_ws_mmas(acc, a, buf, sub); // fence, MMAs, commit
          if (NVF_TRACE) {
            const u32 c3 = nvf_clock();
            if (lane == 0 && tstep < NVF_TRACE_STEPS) *(uint4*)(trace + 8 * tstep + 4) = make_uint4(c2, c1, c3, 0u);
            ++tstep;
          }
          if (s % NVF_SPS == NVF_SPS - 1 || s == nsteps - 1) { // the slot's last step: the next opens the next slot
            prev = slot;
            nvf_ring_next(slot, phase);
          }
        }
      }
    }
    if (NVF_WSP_5) acc[0] = __uint_as_float(fold & 0x3F7FFFFFu); // the loads are not dead
#else
    // (the one-CTA-a-unit step as it was measured: folding it into the form above changes these kernels' SASS,
    // with the load moved out of the step's branch, and they were not timed that way)
    for (int s0 = 0; s0 < nsteps; s0 += NVF_DEPTH) {
      #pragma unroll
      for (int d = 0; d < NVF_DEPTH; ++d) {
        const int s = s0 + d;
        if (s < nsteps) {
          if (!NVF_VARN) nvf_wgmma_wait<0>(); // step s - 1, the last reader of a[] (and of its slot if it ended one), is done
          const bool first = s % NVF_SPS == 0; // the step opens a slot (d % SPS: known at compile time)
          if (first && prev >= 0 && lane == 0) nvf_mbar_arrive(empty0 + 8u * prev);
          if (!NVF_WSP_W) {
            nvf_dequant_piece<NVF_WT_ENC>(wq[d][0], ws[d][0], a);
            nvf_dequant_piece<NVF_WT_ENC>(wq[d][1], ws[d][1], a + 16);
            nvf_wg_load<WIDE>(wr, nvf_wg_step_in<true>(s + NVF_DEPTH, nsteps), nsteps, p.k, wq[d], ws[d]);
          }
          const u32 buf = sbase + slot * NVF_SLOT_BYTES + (s % NVF_SPS) * 8 * NVF_B_MMA;
          if (first) nvf_mbar_wait(full0 + 8u * slot, phase); // the slot's tokens are in
          nvf_ws_mmas(acc, a, buf, sub); // fence, MMAs, commit
          if (s % NVF_SPS == NVF_SPS - 1 || s == nsteps - 1) { // the slot's last step: the next opens the next slot
            prev = slot;
            nvf_ring_next(slot, phase);
          }
        }
      }
    }
#endif
    nvf_wgmma_wait<0>();
    if (lane == 0) nvf_mbar_arrive(empty0 + 8u * prev);
    #pragma unroll
    for (int e = 0; e < NVF_TOK / 2; ++e) nvf_reg_fence(acc[e]);

    if (NVF_WSPROBE != 4 || acc[0] == -1.2345e-38f) { // (probe 4: no epilogue stores)
      if (NVF_EPI_SMEM) // D[g, m, n] for m < valid, n < N
        nvf_ws_epilogue_smem(p, g, valid, alpha, tok0, r0 - (lane >> 2), epi0 + (4 * wg + warp) * NVF_EPI_WARP_BYTES, lane, acc);
      else if (NVF_EPI_REG)
        nvf_ws_epilogue_reg(p, g, valid, alpha, tok0, r0 - (lane >> 2), lane, acc);
      else
        nvf_wg_epilogue(p, g, valid, alpha, tok0, r0, t, acc);
    }
  }
#if NVF_PERSIST
    u = un; // (wr is the next unit's rows already: its last round set it)
#if NVF_WSNEXT_ON
    w = wn;
#endif
  }
#endif
}

// nvf_gemm_wgmma_ws and nvf_gemm_wgmma_ws_l2, or nvf_gemm_wgmma_ws_tiled (gemm_common.cuh)
NVF_GEMM_ENTRY_POINTS(nvf_gemm_wgmma_ws, nvf_gemm_wgmma_ws_body, NVF_THREADS, 1)

// The token pre-pass of a GEMM with a workspace: every token step widened once, into the slot
// images the producer above copies. Image f (slot fill f, steps f NVF_SPS ..) of token tile T of
// group g at p.tok_ws + ((g tiles_m + T) nslots + f) NVF_SLOT_BYTES, tiles_m = ceil(m_max /
// NVF_TOK), nslots = ceil(steps / NVF_SPS): the host's nvfp4moe__tok_ws_bytes. Tokens past
// masked_m are not written (since 0.5.13; -DNVF_WIDEN_SKIP=0 writes zeros, as before); a valid
// token's steps past K are zeros. 128 threads, one unit (token, step of the image) each, as the
// producer's; CTA x = (g nslots + f) ytiles + y takes tiles T = y, y + ytiles, .. below masked_m.
extern "C" __global__ void __launch_bounds__(128) nvf_ws_widen_tokens(const NvfGemmParams p, int ytiles) {
  nvf_pdl_enter();
  const int pt = threadIdx.x, n = NVF_SPS == 1 ? pt : pt % NVF_TOK, ss = NVF_SPS == 1 ? 0 : pt / NVF_TOK;
  if (NVF_UNITS < 128 && pt >= NVF_UNITS) return;
  const int nsteps = (p.k + NVF_STEP - 1) / NVF_STEP, nslots = (nsteps + NVF_SPS - 1) / NVF_SPS, kc4 = (p.k / 16 + 3) / 4;
  const int y = blockIdx.x % ytiles, gf = blockIdx.x / ytiles, g = gf / nslots, f = gf % nslots, s = f * NVF_SPS + ss;
  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max), tiles_m = (p.m_max + NVF_TOK - 1) / NVF_TOK;
  for (int tile = y; tile * NVF_TOK < valid; tile += ytiles) {
    const int m = tile * NVF_TOK + n;
#if !defined(NVF_WIDEN_SKIP) || NVF_WIDEN_SKIP // a row past masked_m feeds only its own MMA column
    if (m >= valid) continue;                  // (whatever its slot holds), which the epilogue never stores
#endif
    uint4 q[4];
    u32 sfw[2] = {0u, 0u};
    #pragma unroll
    for (int t = 0; t < 4; ++t) q[t] = make_uint4(0, 0, 0, 0);
    if (m < valid && s < nsteps) { // else zeros: a step past K (or, under -DNVF_WIDEN_SKIP=0, a
                                   // padding row, whose SF bytes may be NaN)
      const u8* src = p.a + ((i64)g * p.m_max + m) * (p.k / 2) + (i64)s * 64;
      const u8* sf = p.a_sf + g * nvf_sf_group_bytes_128x4(p.m_max, p.k) + nvf_sf_offset_128x4(m, 0, kc4) + (i64)s * 1024;
      #pragma unroll
      for (int t = 0; t < 4; ++t)
        if (s * NVF_STEP + 32 * t < p.k) q[t] = __ldg((const uint4*)(src + 16 * t));
      #pragma unroll
      for (int h = 0; h < 2; ++h)
        if (s * NVF_STEP + 64 * h < p.k) sfw[h] = __ldg((const u32*)(sf + 512 * h));
    }
    u8* dst = p.tok_ws + (((i64)g * tiles_m + tile) * nslots + f) * NVF_SLOT_BYTES + nvf_slot_unit_offset(n, ss);
    nvf_wg_widen_token<true>(q, sfw, s * NVF_STEP, p.k, dst);
  }
}
