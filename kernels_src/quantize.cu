// quantize.cu -- NVFP4 quantization kernels: per-token and given-scale (per tensor /
// per expert), plain and masked, fused SiLU-and-mul + quantize, weight amax, SF layout
// conversion, dequantization. Bit-exact with the host reference (NUMERICS.md 2-3).
#include "common.cuh"
#include "ptx_tcgen05.cuh" // mbarriers and the 1-D bulk copy (sm_90+)
#include "dequant_bf16.cuh" // the widened tokens of the _img kernels

#define NVF_QT 256   // threads per CTA
// Blocks of 16 a thread keeps in registers (a row is read once for K <= 256 * 16 * NVF_QNB)
// and CTAs per SM the registers must allow. Measured (bench/NOTES.md): 4 and 2 for the
// plain quantizer; 1 and 4 for the SiLU kernel (its exp chains, not the bytes in flight,
// set its time: one block per thread and more warps, 7 % faster than 2 and 3 on the decode
// shape, sixth session). NVF_QTUNE=1 (plain 2 and 3, SiLU 4 and 2) and NVF_QSILU2=1 (SiLU
// 2 and 3) are variants for tuning runs; the host picks teams to match. NVF_QSILU_MINB and
// NVF_QPLAIN_MINB (tuning runs) set the CTAs per SM of the default SiLU and plain kernels
// (not under NVF_QTUNE=1 or NVF_QSILU2).
#if defined(NVF_QTUNE) && NVF_QTUNE == 1
#if defined(NVF_SILU)
#define NVF_QNB 4
#define NVF_QMINB 2
#else
#define NVF_QNB 2
#define NVF_QMINB 3
#endif
#elif defined(NVF_SILU) && defined(NVF_QSILU2)
#define NVF_QNB 2
#define NVF_QMINB 3
#elif defined(NVF_SILU)
#define NVF_QNB 1
#if defined(NVF_QSILU_MINB) // (tuning runs: CTAs per SM of the 1-block SiLU kernels)
#define NVF_QMINB NVF_QSILU_MINB
#else
#define NVF_QMINB 4
#endif
#else
#define NVF_QNB 4
#if defined(NVF_QPLAIN_MINB) // (tuning runs: CTAs per SM of the plain kernels)
#define NVF_QMINB NVF_QPLAIN_MINB
#else
#define NVF_QMINB 2
#endif
#endif
#define NVF_QMAXG 1024 // masked input with up to this many groups: valid rows enumerated densely

struct NvfQuantParams {
  const void* x;          // input rows, bf16 or fp16; SiLU: [gate | up], 2k wide
  i64 x_row_stride;       // elements
  i64 x_group_stride;     // elements
  u8* q;                  // [G, rows, k/2] packed E2M1
  u8* sf;                 // 128x4: G * roundup(rows,128)*4*Kc4 bytes; linear: [G, rows, k/16]
  float* scale_out;       // per-token decode scales [G, rows]
  const float* scale_in;  // given decode scales [G] on the device, or null
  const float* gate_scale;// SiLU: optional f32 [G] multiplying the gate half
  const float* up_scale;  // SiLU: optional f32 [G] multiplying the up half
  const int* masked_m;    // [G] or null (all rows valid)
  float scale_value;      // given decode scale when scale_in is null
  int groups, rows, k;
  int sf_linear;          // 0: 128x4, 1: linear
  int per_token;          // 1: s = row_amax / 2688 per row; 0: given s
  int fo6;                // 4over6: 0 off, 1 MAE, 2 MSE
  int fp16;               // 1: input is fp16, 0: bf16
  int pad_rows;           // write zero SF rows up to roundup(rows,128) (plain 128x4)
  int team;               // threads per row: a power of two >= max(4, k/16/NVF_QNB), at most NVF_QT
  int stage;              // staged kernels: slots (rows in flight) per team in shared memory
};
// (The _img kernels take their two arguments apart: fields added here change the other
// kernels' code.)

NVF_DEV u32 nvf_prmt(u32 a, u32 b, u32 sel) {
  u32 r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
  return r;
}

// Element j (0..7) of a 4-word group of packed 16-bit floats, widened exactly.
template <bool F16>
NVF_DEV float nvf_elem(const u32* w, int j) {
  const u32 x = w[j >> 1];
  if (F16) return nvf_fp16_to_f32((u16)(x >> (16 * (j & 1))));
  return __uint_as_float((j & 1) ? (x & 0xFFFF0000u) : (x << 16));
}

// Block b of the row to quantize, 8 words: the input itself, or bf16(silu(gate) * up).
template <bool SILU, bool F16>
NVF_DEV void nvf_load_block(const NvfQuantParams& p, const u8* xrow, int b, float gs, float us, u32* w) {
  const uint4 a0 = *(const uint4*)(xrow + (i64)b * 32), a1 = *(const uint4*)(xrow + (i64)b * 32 + 16);
  w[0] = a0.x; w[1] = a0.y; w[2] = a0.z; w[3] = a0.w; w[4] = a1.x; w[5] = a1.y; w[6] = a1.z; w[7] = a1.w;
  if (SILU) {
    const u8* up = xrow + (i64)p.k * 2 + (i64)b * 32;
    const uint4 u0 = *(const uint4*)up, u1 = *(const uint4*)(up + 16);
    const u32 uw[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
    #pragma unroll
    for (int j = 0; j < 8; ++j) {
      u32 y = 0;
      #pragma unroll
      for (int h = 0; h < 2; ++h) {
        float g = nvf_elem<F16>(w + j, h), u = nvf_elem<F16>(uw + j, h);
        if (p.gate_scale) g = __fmul_rn(g, gs);
        if (p.up_scale) u = __fmul_rn(u, us);
        y |= nvf_f32_to_bf16(nvf_silu_mul(g, u)) << (16 * h);
      }
      w[j] = y;
    }
  }
}

// max |x| of a block as f32 bits (exact; +-Inf -> 0x7F800000, NaN -> above it), from
// packed max of the magnitudes (NaN-propagating) and one integer max of the two halves.
template <bool F16>
NVF_DEV u32 nvf_block_amax_bits(const u32* w) {
  u32 m[8];
  #pragma unroll
  for (int j = 0; j < 8; ++j) m[j] = w[j] & 0x7FFF7FFFu;
  #pragma unroll
  for (int s = 4; s > 0; s >>= 1)
    #pragma unroll
    for (int j = 0; j < s; ++j) {
      if (F16) asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(m[j]) : "r"(m[j]), "r"(m[j + s]));
      else asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(m[j]) : "r"(m[j]), "r"(m[j + s]));
    }
  const u32 lo = __float_as_uint(nvf_elem<F16>(m, 0)), hi = __float_as_uint(nvf_elem<F16>(m, 1));
  return lo > hi ? lo : hi;
}

// Magnitude code of |v| (finite, or +inf -> 7) in the low byte of the result:
// code = min(rint(2a), rint(a) + 2, rint(a/2) + 4, 7), each rint a single RNE rounding
// of an exact value against the magic 1.5 * 2^23 (its bits hold rint + 0x4B400000).
// rint is monotone, so the min of the roundings is the rounding of the min of the three
// lines 2a, a + 2, a/2 + 4 (the E2M1 grid stretched to integers): the RNE cut points of
// NUMERICS.md land on .5 and tie to the even code. Checked against the cut-point
// compares for every non-negative f32 (docs/numerics.md).
template <bool CLAMP>
NVF_DEV u32 nvf_e2m1_mag_bits(float v) {
  const float a = fabsf(v); // folds into the three adds as |v|
  const u32 c0 = __float_as_uint(__fmaf_rn(a, 2.0f, 12582912.0f));
  const u32 c1 = __float_as_uint(__fadd_rn(a, 12582914.0f));
  const u32 c2 = __float_as_uint(__fmaf_rn(a, 0.5f, 12582916.0f));
  // the cap at code 7 only matters for a >= 7: the fast path checks its block's max product
  // once instead (below 7, rint(a/2) + 4 <= 7 already)
  return CLAMP ? min(min(c0, c1), min(c2, 0x4B400007u)) : min(min(c0, c1), c2);
}

// The 8 codes of w[0..3] from their magnitude bits c[j] (low byte nn <= 7, high bits the
// magic's): nibble pairs by a multiply-add each (no carry out of the low byte, as nn <= 7),
// the 4 pair bytes gathered by two more and a byte permute; the signs (bits 15 and 31 of each
// word) as sign-replicated bytes, even elements to bit 3 and odd ones to bit 7 of their byte.
// 13 operations, 6 of them on the FMA pipe (the byte-per-code form before took 15 on the ALU pipe).
NVF_DEV u32 nvf_e2m1_pack_codes(const u32* c, const u32* w) {
  u32 pr[4];
  #pragma unroll
  for (int i = 0; i < 4; ++i) pr[i] = c[2 * i + 1] * 16u + c[2 * i];
  const u32 mag = nvf_prmt(pr[1] * 256u + pr[0], pr[3] * 256u + pr[2], 0x5410u);
  const u32 x01 = nvf_prmt(w[0], w[1], 0xFBD9u), x23 = nvf_prmt(w[2], w[3], 0xFBD9u); // S0 S2 S1 S3, S4 S6 S5 S7
  const u32 ev = nvf_prmt(x01, x23, 0x5410u), od = nvf_prmt(x01, x23, 0x7632u);
  return mag | (ev & 0x08080808u) | (od & 0x80808080u);
}

// Codes of the 8 elements in w[0..3] times out (finite, > 0), packed (element j in
// nibble j), sign from the input (so -0 and negative underflow give code 8). CLAMP false:
// the caller knows every |element * out| < 7.
template <bool F16, bool CLAMP = true>
NVF_DEV u32 nvf_e2m1_pack8(const u32* w, float out) {
#if defined(NVF_HW_E2M1)
  // SM100: cvt.rn.satfinite.e2m1x2.f32 gives the same byte (compiled, not run on hardware:
  // the context's first-use self-test compares it with the host reference, docs/sm100.md)
  u32 word = 0;
  #pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float lo = __fmul_rn(nvf_elem<F16>(w, 2 * j), out), hi = __fmul_rn(nvf_elem<F16>(w, 2 * j + 1), out);
    u32 b;
    asm("{.reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %1, %2; cvt.u32.u8 %0, t;}" : "=r"(b) : "f"(hi), "f"(lo));
    word |= (b & 0xFFu) << (8 * j); // first source operand in the high nibble
  }
  return word;
#else
  u32 c[8];
  #pragma unroll
  for (int j = 0; j < 8; ++j) c[j] = nvf_e2m1_mag_bits<CLAMP>(__fmul_rn(nvf_elem<F16>(w, j), out));
  return nvf_e2m1_pack_codes(c, w);
#endif
}

// The exact slow path for 4over6 and for out overflowing to +inf (tiny scales): the
// per-element functions of common.cuh. Not inlined (rare, register-hungry); the words
// come by value so the caller's register arrays never need an address.
template <bool F16>
__device__ __noinline__ uint2 nvf_block_slow(uint4 lo, uint4 hi, float amax, float s, float t, int fo6, u32* sf) {
  const u32 w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  float x[16];
  #pragma unroll
  for (int j = 0; j < 16; ++j) x[j] = nvf_elem<F16>(w + 4 * (j >> 3), j & 7);
  u32 q[2];
  *sf = nvf_quantize_block16(x, amax, s, t, fo6, q);
  return make_uint2(q[0], q[1]);
}

// One block of 16 with a valid decode scale s (mode 0) and finite amax: SF byte, codes
// into q[0..1]. NUMERICS.md 2 steps 3-5 (1/(sf*s) as rcp.rn == 1.0f/(sf*s), the same bits).
template <bool F16>
NVF_DEV u32 nvf_block_quantize(const u32* w, u32 amax_bits, float s, float t, int fo6, u32* q) {
  q[0] = 0u; q[1] = 0u;
  if (amax_bits == 0u) return 0u; // zero block: SF 0, codes +0
  if (!fo6) {
    const u32 sf = nvf_e4m3(__fmul_rn(__uint_as_float(amax_bits), t));
    if (sf == 0u) return 0u; // the SF underflowed: codes +0
    const float out = __frcp_rn(__fmul_rn(nvf_e4m3_to_f32(sf), s));
    if (!nvf_is_nonfinite(out)) {
      q[0] = nvf_e2m1_pack8<F16>(w, out);
      q[1] = nvf_e2m1_pack8<F16>(w + 4, out);
      return sf;
    }
  }
  u32 sfs;
  const uint2 r = nvf_block_slow<F16>(make_uint4(w[0], w[1], w[2], w[3]), make_uint4(w[4], w[5], w[6], w[7]),
                                      __uint_as_float(amax_bits), s, t, fo6, &sfs);
  q[0] = r.x; q[1] = r.y;
  return sfs;
}

// What a row's blocks share: its decode scale s, t = (1/s) * (1/6), the mode (0 quantize,
// 1 zero row, 2 faulted row: SF 0x7F, codes 0), and for the fast path s * 2^120.
// fast: mode 0, no 4over6 and 2^-100 <= s < 2^8, so every y = e4m3(sf) * s of the row is a
// normal f32 in [2^-109, 2^17): e4m3(sf) * s is one multiply of the SF's bits shifted into
// place by s * 2^120 (exact), and rcp.rn(y) is the approximation plus one Newton step (the
// in-range path of __frcp_rn itself, taken without its range check).
struct NvfRowQ {
  float s, t, s120;
  int mode;
  bool fast;
};

NVF_DEV float nvf_rcp_in_range(float y) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return __fmaf_rn(r, __fmaf_rn(-y, r, 1.0f), r);
}

// Probes for tuning runs (wrong bytes, timing only; bench/NOTES.md, tenth and eleventh sessions):
// -DNVF_QPROBE=1 stores no SFs, =2 no codes, =3 writes each row's SFs contiguously (the linear
// layout's addresses) whatever the layout, =4 stores neither, =6 writes row r's SFs at the 128x4
// offsets of row (r % 128) * (rows / 128) + r / 128 (the same pattern, the rows in flight together
// in different 128-row groups). =7 is not wrong: plain input in one group of whole 128-row groups is
// taken in another order, pairs of rows 2j, 2j + 1 from consecutive 128-row groups in turn.
#if defined(NVF_QPROBE)
#define nvf_store_q(qp, q0, q1) (NVF_QPROBE == 2 || NVF_QPROBE == 4 ? (void)0 : (void)(*(uint2*)(qp) = make_uint2(q0, q1)))
#define nvf_store_sf(sfp, b) (NVF_QPROBE == 1 || NVF_QPROBE == 4 ? (void)0 : (void)(*(sfp) = (u8)(b)))
#elif defined(NVF_QSFHINT)
// -DNVF_QSFHINT (tuning runs): L2 policies on the stores. 1: SF bytes evict_last; 2: SFs and codes
// evict_last; 3: SFs evict_first; 4: SFs and codes evict_first; 5: SFs st.global.cs (the default
// below); 6: SFs as plain stores (the default before the twelfth session); 7: SFs with an
// evict_normal policy (the instruction form alone, as a control).
NVF_DEV u64 nvf_qpolicy(int kind) { // 0 evict_last, 1 evict_first, 2 evict_normal
  u64 pol;
  if (kind == 0) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  else if (kind == 1) asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  else asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
NVF_DEV void nvf_store_sf_hint(u8* sfp, u32 b) {
  if (NVF_QSFHINT == 5)
    asm volatile("st.global.cs.b8 [%0], %1;" ::"l"(sfp), "r"(b) : "memory");
  else if (NVF_QSFHINT == 6)
    *sfp = (u8)b;
  else
    asm volatile("st.global.L2::cache_hint.b8 [%0], %1, %2;" ::"l"(sfp), "r"(b),
                 "l"(nvf_qpolicy(NVF_QSFHINT <= 2 ? 0 : NVF_QSFHINT <= 4 ? 1 : 2)) : "memory");
}
NVF_DEV void nvf_store_q_hint(u8* qp, u32 q0, u32 q1) {
  if (NVF_QSFHINT == 2 || NVF_QSFHINT == 4)
    asm volatile("st.global.L2::cache_hint.v2.b32 [%0], {%1, %2}, %3;" ::"l"(qp), "r"(q0), "r"(q1),
                 "l"(nvf_qpolicy(NVF_QSFHINT == 2 ? 0 : 1)) : "memory");
  else
    *(uint2*)(qp) = make_uint2(q0, q1);
}
#define nvf_store_q(qp, q0, q1) nvf_store_q_hint((u8*)(qp), q0, q1)
#define nvf_store_sf(sfp, b) nvf_store_sf_hint((u8*)(sfp), (u32)(b))
#else
// SF bytes are stored with st.global.cs (streaming, evict-first in L2): [16384, 7168] took
// 83.3-83.5 us against 84.7-85.2 with plain stores in two A/B runs (h200_quant_sfhint_ab.json,
// h200_quant_sfhint2_ab.json; linear SFs -2 us, masked decode -0.3 us). Why is not known: an
// evict_normal policy on the same instruction form gains part of it (bench/NOTES.md).
NVF_DEV void nvf_store_sf_cs(u8* sfp, u32 b) { asm volatile("st.global.cs.b8 [%0], %1;" ::"l"(sfp), "r"(b) : "memory"); }
#define nvf_store_q(qp, q0, q1) (*(uint2*)(qp) = make_uint2(q0, q1))
#define nvf_store_sf(sfp, b) nvf_store_sf_cs((u8*)(sfp), (u32)(b))
#endif

// ---- widened tokens for the expert layer's GEMMs (the _img kernels) ----
// A token-producer GEMM tile (gemm_wgmma_ws.cu) reads its tokens widened to BF16 (F16 on TILED
// weights: the host's _img_f16 twins, -DNVF_QIMG_TILED=1) from slot
// images in global memory that its pre-pass, nvf_ws_widen_tokens, writes from the NVFP4 tokens.
// In the expert layer the quantizer has the codes and SFs in hand, so it writes the images
// itself and the GEMM skips its pre-pass (one launch and its reads less). Same bytes as the
// pre-pass for every row below masked_m, including the zero blocks past K in the last step.
// Not written: rows past masked_m in a group's last token tile (nor by the pre-pass since 0.5.13),
// which feed only their own MMA columns, never stored by the epilogue, and the unused second step
// of an odd last slot, never multiplied. The expert layer uses it for the SiLU quantizer only: the
// input quantizer's image (K 7168) took longer than the pre-pass (bench/NOTES.md, twenty-first
// session): a team's row owns 16 bytes of every 128-byte line, so its stores are half sectors.
// Token n of tile T (row r = T TOK + n) of group g, 128-K step s, starts at
// img + ((g tiles_m + T) nslots SPS + s) 8 B + (n >> 3) 256 + (n & 7) 16, B = TOK 32 bytes an
// MMA, SPS = TOK >= 128 ? 1 : 2, nslots = ceil(steps / SPS), tiles_m = ceil(rows / TOK): the
// slot images of the pre-pass (a slot is SPS consecutive steps). Row r's step 0 (imgp below):
NVF_DEV u8* nvf_img_row(const NvfQuantParams& p, u8* img, int tok, int g, int r) {
  const int sps = tok >= 128 ? 1 : 2, bmma = tok * 32;
  const int nslots = ((p.k + 127) / 128 + sps - 1) / sps, tiles_m = (p.rows + tok - 1) / tok;
  const int tile = r / tok, n = r - tile * tok;
  return img + ((i64)g * tiles_m + tile) * nslots * sps * 8 * bmma + (n >> 3) * 256 + (n & 7) * 16;
}

// Block b (16 elements: codes q0, q1, SF byte sfb) widened as nvf_wg_widen_token does: within
// step s = b / 8 the block is half b & 1 of 32-element piece t = (b & 7) / 2, its words are
// words 2 (b & 1) and 2 (b & 1) + 1 of that piece, and pair pp of word j (elements pp, pp + 4)
// goes to word t of the 16 bytes at MMA 2j + pp / 2, K half pp & 1.
NVF_DEV void nvf_img_block(u8* imgp, int bmma, int b, u32 q0, u32 q1, u32 sfb) {
  u32 s0, s1;
  nvf_sf2_to_bf16x2(sfb & 0xFFu, s0, s1);
  u8* dst = imgp + (i64)(b >> 3) * 8 * bmma + (b & 1) * 4 * bmma + ((b & 7) >> 1) * 4;
  #pragma unroll
  for (int jj = 0; jj < 2; ++jj) {
    u32 r[4];
    nvf_fp4x8_to_bf16x2(jj ? q1 : q0, r);
    #pragma unroll
    for (int pp = 0; pp < 4; ++pp)
      *(u32*)(dst + (2 * jj + (pp >> 1)) * bmma + (pp & 1) * 128) = nvf_bf16x2_mul(r[pp], s0);
  }
}

// Quantize one block of a row (its 8 words and amax bits) and store its 8 code bytes at qp
// and its SF byte at sfp; mode 1 (zero row) and 2 (faulted row) store the fixed bytes.
// IMG: also the block's widened tokens (nvf_img_block: the row's image imgp, block b).
template <bool F16, bool IMG = false>
NVF_DEV void nvf_quantize_store(const u32* w, u32 am, const NvfRowQ& rq, int fo6, u8* qp, u8* sfp, u8* imgp = nullptr,
                                int bmma = 0, int b = 0) {
  u32 q[2] = {0u, 0u}, sfb;
  // Fast path: a finite non-zero block amax in a fast row, and every |x * out| of the block
  // below 7 (one product: the block max's), which also excludes SF 0 (out = inf) and needs
  // no cap on the codes. Anything else (a block whose max product reaches 7, as with some
  // subnormal SFs or saturated given scales; a tiny or huge s; 4over6) takes the general path
  // below, which recomputes the block from the start (the same bytes).
  if (rq.fast) { // (a zero, infinite or NaN amax fails the product test below)
    sfb = nvf_e4m3(__fmul_rn(__uint_as_float(am), rq.t));
    const float out = nvf_rcp_in_range(__fmul_rn(__uint_as_float(sfb << 20), rq.s120));
    if (__fmul_rn(__uint_as_float(am), out) < 7.0f) {
      q[0] = nvf_e2m1_pack8<F16, false>(w, out);
      q[1] = nvf_e2m1_pack8<F16, false>(w + 4, out);
      nvf_store_q(qp, q[0], q[1]);
      nvf_store_sf(sfp, sfb);
      if (IMG) nvf_img_block(imgp, bmma, b, q[0], q[1], sfb);
      return;
    }
  }
  sfb = rq.mode == 2 ? 0x7Fu : 0u;
  if (rq.mode == 0) {
    if (am >= 0x7F800000u) sfb = 0x7Fu; // given scale: a non-finite block is faulted on its own
    else sfb = nvf_block_quantize<F16>(w, am, rq.s, rq.t, fo6, q);
  }
  nvf_store_q(qp, q[0], q[1]);
  nvf_store_sf(sfp, sfb);
  if (IMG) nvf_img_block(imgp, bmma, b, q[0], q[1], sfb);
}

// Team-wide max of u32 (team threads, a power of two, aligned in the CTA). Teams wider
// than a warp meet at their own named barrier (ids 1..NVF_QT/64); red is double-buffered
// by the caller's parity so one barrier per call suffices.
NVF_DEV u32 nvf_team_max(u32 v, int team, u32 (*red)[NVF_QT / 32], int parity) {
  const int lane = threadIdx.x & 31;
  if (team >= 32) { // the common case: one warp reduction instruction (sm_80+)
    asm("redux.sync.max.u32 %0, %0, 0xffffffff;" : "+r"(v));
  } else { // a team inside one warp
    const u32 mask = ((1u << team) - 1u) << (lane & ~(team - 1));
    for (int o = team >> 1; o > 0; o >>= 1) {
      const u32 t = __shfl_xor_sync(mask, v, o);
      v = t > v ? t : v;
    }
  }
  if (team <= 32) return v;
  const int warp = threadIdx.x >> 5, wpt = team >> 5, first = warp & ~(wpt - 1);
  if (lane == 0) red[parity][warp] = v;
  const int id = 1 + ((int)threadIdx.x >> (__ffs(team) - 1)); // team is a power of two: no division
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(team) : "memory");
  // the team's 2, 4 or 8 warp maxima in one or two vector loads (first is a multiple of wpt)
  const u32* rr = red[parity] + first;
  if (wpt == 2) {
    const uint2 a = *(const uint2*)rr;
    v = max(a.x, a.y);
  } else {
    const uint4 a = *(const uint4*)rr;
    v = max(max(a.x, a.y), max(a.z, a.w));
    if (wpt == 8) {
      const uint4 b = *(const uint4*)(rr + 4);
      v = max(v, max(max(b.x, b.y), max(b.z, b.w)));
    }
  }
  return v;
}

// Valid rows of every group as a dense list: prefix[g] = rows before group g.
NVF_DEV int nvf_masked_prefix(const NvfQuantParams& p, int* prefix) {
  const int G = p.groups;
  for (int g = threadIdx.x; g < G; g += NVF_QT) prefix[g + 1] = nvf_valid_rows(p.masked_m, g, p.rows);
  __syncthreads();
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x, per = (G + 31) / 32, lo = lane * per, hi = min(G, lo + per);
    int sum = 0;
    for (int g = lo; g < hi; ++g) sum += prefix[g + 1];
    int incl = sum;
    #pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int t = __shfl_up_sync(0xFFFFFFFFu, incl, o);
      if (lane >= o) incl += t;
    }
    int run = incl - sum;
    for (int g = lo; g < hi; ++g) { run += prefix[g + 1]; prefix[g + 1] = run; }
    if (lane == 0) prefix[0] = 0;
  }
  __syncthreads();
  return prefix[G];
}

// Work item -> (group, row): the dense list of valid rows, or every (padded) row.
NVF_DEV void nvf_item_row(const NvfQuantParams& p, i64 item, bool dense, const int* prefix, int rows_pad, int& g,
                          int& r) {
  if (dense) { // the group holding valid row number `item`
    int lo = 0, hi = p.groups;
    while (hi - lo > 1) {
      const int mid = (lo + hi) >> 1;
      if (prefix[mid] <= item) lo = mid; else hi = mid;
    }
    g = lo; r = (int)(item - prefix[lo]);
  } else if (p.groups == 1) { // plain [M, K] input: no division
    g = 0; r = (int)item;
#if defined(NVF_QPROBE) && NVF_QPROBE == 7
    if (rows_pad % 128 == 0 && item < rows_pad) {
      const int P = (int)(item >> 1), G = rows_pad >> 7;
      r = 2 * ((P % G) * 64 + P / G) + (int)(item & 1);
    }
#endif
  } else {
    g = (int)(item / rows_pad); r = (int)(item % rows_pad);
  }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define NVF_QSTAGE_ARCH 1 // cp.async.bulk and mbarrier transaction counts
#else
#define NVF_QSTAGE_ARCH 0
#endif
#define NVF_QSTAGE_MAX 4    // slots per team at most
#define NVF_QSTAGE_MINB 3   // CTAs per SM of the staged kernels (no words held across the barrier)
extern __shared__ __align__(128) u8 nvf_qstage[]; // staged kernels: p.stage slots of one row per team
__shared__ __align__(8) u64 nvf_qbars[NVF_QT / 32 * NVF_QSTAGE_MAX];

// The team's threads (a power of two >= 32, aligned in the CTA) meet, so a slot can be refilled.
NVF_DEV void nvf_team_sync(int team) {
  if (team == 32) __syncwarp();
  else asm volatile("bar.sync %0, %1;" : : "r"(1 + ((int)threadIdx.x >> (__ffs(team) - 1))), "r"(team) : "memory");
}

// Fills a slot with work item `item`'s row (one bulk copy), or, for an item past the end, a
// padding row or a row past masked_m, completes the slot's phase with no bytes (the team
// reads nothing from it then), so every item takes one phase of its slot's mbarrier.
NVF_DEV void nvf_stage_row(const NvfQuantParams& p, i64 item, i64 total, bool dense, const int* prefix, int rows_pad,
                           u32 rowbytes, u8* dst, u32 bar) {
#if NVF_QSTAGE_ARCH
  if (item < total) {
    int g, r;
    nvf_item_row(p, item, dense, prefix, rows_pad, g, r);
    if (r < p.rows && (dense || r < nvf_valid_rows(p.masked_m, g, p.rows))) {
      nvf_mbar_expect_tx(bar, rowbytes);
      nvf_bulk_load(nvf_smem_u32(dst), (const u8*)p.x + ((i64)g * p.x_group_stride + (i64)r * p.x_row_stride) * 2,
                    rowbytes, bar);
      return;
    }
  }
  nvf_mbar_arrive(bar);
#endif
}

// Teams of p.team threads quantize one row at a time. Thread l of a team holds the
// blocks l, l + team, ... (NB of them) in registers between the row-amax pass and the
// quantization; blocks past NB * team (K > 256 * 16 * NB) are read again.
// STAGED (sm_90+, plain input, p.stage slots per team, chosen by the host): one thread
// per team bulk-copies the team's next rows into shared memory, each slot completing on
// its mbarrier, so the next rows' bytes are in flight while this one is quantized at no
// cost in registers or issue slots; pass 2 reads the words from the slot again instead of
// keeping them in registers (80 registers, 3 CTAs per SM instead of 2), and the slot is
// refilled once the team has met after pass 2 (bench/NOTES.md, sixth session).
template <bool I32> struct NvfIndex { typedef i64 T; };
template <> struct NvfIndex<true> { typedef int T; };

// IMG (the _img kernels: unstaged): each row's blocks also widened into img for a GEMM tile of
// img_tok tokens (nvf_img_row).
template <bool SILU, bool F16, bool STAGED, int NB, bool IMG = false>
NVF_DEV void nvf_quantize_rows(const NvfQuantParams& p, int* prefix, u32 (*red)[NVF_QT / 32], u8* img = nullptr,
                               int img_tok = 0) {
  constexpr bool KF16 = SILU ? false : F16; // dtype of the words kept: SiLU's y is bf16
  constexpr bool ST = STAGED && !SILU && NVF_QSTAGE_ARCH;
  const int nblk = p.k / 16, kc4 = (nblk + 3) / 4;
  int team = p.team, tl = threadIdx.x & (team - 1);
  const int tpc = NVF_QT / team;
  const int sf_pad_cols = p.sf_linear ? nblk : kc4 * 4;
  const i64 sf_gbytes = p.sf_linear ? (i64)p.rows * nblk : nvf_sf_group_bytes_128x4(p.rows, p.k);
  const int rows_pad = p.pad_rows ? (p.rows + 127) / 128 * 128 : p.rows;
  const bool dense = p.masked_m != nullptr && p.groups <= NVF_QMAXG && (i64)p.groups * p.rows < 0x7FFFFFFF;
  typedef typename NvfIndex<ST>::T idx; // work-item numbers (the staged kernels get fewer than 2^30)
  // Up to 32 groups and teams of whole warps (the decode shapes): each warp scans masked_m in
  // its registers (lane g: valid rows of groups 0..g) and finds a row's group by a ballot, with
  // no barrier and no shared-memory search (every lane of a warp has the same work item).
  const bool wdense = dense && !ST && p.groups <= 32 && team >= 32;
  int wincl = 0;
  if (wdense) {
    const int lane = threadIdx.x & 31;
    wincl = lane < p.groups ? nvf_valid_rows(p.masked_m, lane, p.rows) : 0;
    #pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int t = __shfl_up_sync(0xFFFFFFFFu, wincl, o);
      if (lane >= o) wincl += t;
    }
  }
  const idx total = wdense ? (idx)__shfl_sync(0xFFFFFFFFu, wincl, 31)
                    : dense ? (idx)nvf_masked_prefix(p, prefix) : (idx)((i64)p.groups * rows_pad);
  idx step = (idx)gridDim.x * tpc, first = (idx)blockIdx.x * tpc + threadIdx.x / team, end = total;
  int parity = 0;
  // The last round (unstaged, not SiLU): its rows, fewer than the teams, are spread over the CTAs
  // first and taken by wider teams (up to the whole CTA, no wider than the row has blocks), so a
  // thread holds fewer blocks and the round ends sooner; the teams meet at one barrier before it.
  // -DNVF_QTAIL=0 (tuning) keeps one team size throughout (0.5.13's kernels).
  int tail_team = team;
#if !defined(NVF_QTAIL) || NVF_QTAIL
  if (!ST && !SILU) { // (the SiLU kernels' teams hold one block a thread: no wider team helps)
    const idx full = total / step * step;
    const int per = (int)((total - full + gridDim.x - 1) / gridDim.x); // tail rows per CTA, 0 to tpc
    int t2 = NVF_QT;
    while (t2 > team && (t2 * per > NVF_QT || t2 / 2 >= nblk)) t2 >>= 1;
    if (per > 0 && t2 > team) { tail_team = t2; end = full; }
  }
#endif
  // staging state: this team's slots and their mbarriers, the slot of the current item and its phase
  const int nslot = ST ? p.stage : 0;
  const u32 rowbytes = (u32)p.k * 2u;
  u8* slots = nvf_qstage + (threadIdx.x / team) * nslot * rowbytes;
  const u32 slot_bar = nvf_smem_u32(nvf_qbars) + 8u * (threadIdx.x / team) * nslot;
  int slot = 0;
  u32 phase = 0;
  if (ST) {
    if (threadIdx.x == 0) {
      for (int i = 0; i < tpc * nslot; ++i) nvf_mbar_init(nvf_smem_u32(nvf_qbars) + 8u * i, 1);
      nvf_fence_mbar_init();
    }
    __syncthreads();
    if (tl == 0)
      for (int i = 0; i < nslot; ++i)
        nvf_stage_row(p, (i64)blockIdx.x * tpc + threadIdx.x / team + step * i, total, dense, prefix, rows_pad, rowbytes,
                      slots + i * rowbytes, slot_bar + 8u * i);
  }

  for (;;) { // all rows, or all but the last round's; then (end < total) the last round's
    // this thread's first block's bytes (128x4: nvf_sf_offset_128x4(0, tl, kc4), spelled out: the
    // helper's form compiles to other SASS than the kernels measured and tested)
    const int tq = tl * 8, tsf = p.sf_linear ? tl : (tl >> 2) * 512 + (tl & 3);
    for (idx item = first; item < end; item += step) {
      int g, r;
      if (wdense) { // lanes past the groups hold the total, which no item reaches
        g = __popc(__ballot_sync(0xFFFFFFFFu, wincl <= item));
        const int before = __shfl_sync(0xFFFFFFFFu, wincl, (g + 31) & 31);
        r = (int)item - (g ? before : 0);
      } else {
        nvf_item_row(p, item, dense, prefix, rows_pad, g, r);
      }
      u8* sfg = p.sf + (i64)g * sf_gbytes;
      if (r >= p.rows || (!dense && r >= nvf_valid_rows(p.masked_m, g, p.rows))) {
        if (ST) { // nothing was copied for this row (nvf_stage_row only arrived): pass the slot on
          if (tl == 0) nvf_stage_row(p, item + step * nslot, total, dense, prefix, rows_pad, rowbytes,
                                     slots + slot * rowbytes, slot_bar + 8u * slot);
          phase ^= slot == nslot - 1;
          slot = slot == nslot - 1 ? 0 : slot + 1;
        }
        if (r >= p.rows) // zero SF padding row of the 128x4 layout
          for (int c = tl; c < sf_pad_cols; c += team) sfg[nvf_sf_offset_128x4(r, c, kc4)] = 0;
        continue; // a row past masked_m: neither read nor written
      }
      const u8* xrow = (const u8*)p.x + ((i64)g * p.x_group_stride + (i64)r * p.x_row_stride) * 2;
      const u8* srow = slots + slot * rowbytes;
      const float gs = p.gate_scale ? p.gate_scale[g] : 1.0f, us = p.up_scale ? p.up_scale[g] : 1.0f;

      // Pass 1: this thread's first NB blocks into registers, their amax; the row amax.
      u32 v[NB][8], bmax[NB];
      u32 rmax = 0;
      if (ST) nvf_mbar_wait(slot_bar + 8u * slot, phase); // the row's bytes are in the slot
      #pragma unroll
      for (int i = 0; i < NB; ++i) {
        const int b = tl + team * i;
        bmax[i] = 0;
        // staged: a block past the row reads the row's last one instead (inside the slot, never
        // used), so the words are defined on every path without zeroing them (no words live
        // across rows)
        if (ST) nvf_load_block<false, F16>(p, srow, min(b, nblk - 1), gs, us, v[i]);
        else if (b < nblk) nvf_load_block<SILU, F16>(p, xrow, b, gs, us, v[i]);
      }
      #pragma unroll
      for (int i = 0; i < NB; ++i)
        if (tl + team * i < nblk) {
          bmax[i] = nvf_block_amax_bits<KF16>(v[i]);
          rmax = bmax[i] > rmax ? bmax[i] : rmax;
        }
      NvfRowQ rq;
      float& s = rq.s;
      int& mode = rq.mode;
      if (p.per_token) {
        if (!ST) // (the staged kernels get rows that fit the register blocks: no second read)
        for (int b = tl + team * NB; b < nblk; b += team) {
          u32 tw[8];
          nvf_load_block<SILU, F16>(p, xrow, b, gs, us, tw);
          const u32 m = nvf_block_amax_bits<KF16>(tw);
          rmax = m > rmax ? m : rmax;
        }
        rmax = nvf_team_max(rmax, team, red, parity);
        parity ^= 1;
        s = __fmul_rn(__uint_as_float(rmax), nvf_f32(NVF_RCP2688_BITS));
        if (rmax >= 0x7F800000u) { s = nvf_f32(0x7FC00000u); mode = 2; }
        else if (s < NVF_FLT_MIN) { s = 0.0f; mode = 1; } // zero row, or the product underflowed
        else mode = 0;
        if (tl == 0) p.scale_out[(i64)g * p.rows + r] = s;
      } else {
        s = p.scale_in ? p.scale_in[g] : p.scale_value;
        if (s == 0.0f) mode = 1;
        else if (!(s >= NVF_FLT_MIN) || nvf_is_nonfinite(s)) mode = 2;
        else mode = 0;
      }
      const bool in_range = s >= nvf_f32(0x0D800000u) && s < 256.0f; // 2^-100 <= s < 2^8 (so mode 0)
      rq.fast = in_range && p.fo6 == 0;
      // 1/s: rcp.rn, which is 1.0f/s correctly rounded, the in-range way where it can be
      rq.t = in_range ? __fmul_rn(nvf_rcp_in_range(s), nvf_f32(NVF_RCP6_BITS))
             : mode == 0 ? __fmul_rn(__fdiv_rn(1.0f, s), nvf_f32(NVF_RCP6_BITS)) : 0.0f;
      rq.s120 = __fmul_rn(s, nvf_f32(0x7B800000u));                                  // s * 2^120

      // Pass 2: quantize and store; the register blocks unrolled (no copies of their words),
      // blocks past them read again. This thread's block i is b = tl + team * i: its codes at
      // qt + i * team * 8, its SF byte at st + i * sstep (128x4: the host's teams are multiples
      // of 4, so b % 4 = tl % 4 and b / 4 = tl / 4 + i * team / 4).
      u8* qt = p.q + ((i64)g * p.rows + r) * (p.k / 2) + tq;
  #if defined(NVF_QPROBE) && NVF_QPROBE == 6
      const int rsf = rows_pad % 128 == 0 ? (r & 127) * (rows_pad >> 7) + (r >> 7) : r; // row whose SF slots to use
  #else
      const int rsf = r;
  #endif
  #if defined(NVF_QPROBE) && NVF_QPROBE == 3
      u8* st = sfg + (i64)r * nblk + tl;
      const int sstep = team;
  #else
      u8* st = sfg + (p.sf_linear ? (i64)r * nblk : nvf_sf_offset_128x4(rsf, 0, kc4)) + tsf;
      const int sstep = p.sf_linear ? team : team * 128;
  #endif
      u8* const imgp = IMG ? nvf_img_row(p, img, img_tok, g, r) : nullptr;
      const int bmma = img_tok * 32;
      #pragma unroll
      for (int i = 0; i < NB; ++i) {
        const int b = tl + team * i;
        if (ST && b < nblk) nvf_load_block<false, F16>(p, srow, b, gs, us, v[i]); // again, from the slot
        if (b < nblk)
          nvf_quantize_store<KF16, IMG>(v[i], bmax[i], rq, p.fo6, qt + i * team * 8, st + i * sstep, imgp, bmma, b);
      }
      if (ST) { // every thread of the team is done with the slot's words: refill it
        nvf_team_sync(team);
        if (tl == 0) nvf_stage_row(p, item + step * nslot, total, dense, prefix, rows_pad, rowbytes, slots + slot * rowbytes,
                                   slot_bar + 8u * slot);
        phase ^= slot == nslot - 1;
        slot = slot == nslot - 1 ? 0 : slot + 1;
      }
      if (!ST)
      for (int b = tl + team * NB, i = NB; b < nblk; b += team, ++i) {
        u32 tw[8], am = 0;
        if (mode == 0) {
          nvf_load_block<SILU, F16>(p, xrow, b, gs, us, tw);
          am = nvf_block_amax_bits<KF16>(tw);
        }
        nvf_quantize_store<KF16, IMG>(tw, am, rq, p.fo6, qt + (i64)i * team * 8, st + (i64)i * sstep, imgp, bmma, b);
      }
      if (IMG) // the last step's blocks past K: zeros, as the pre-pass writes them
        for (int b = nblk + tl; b < (nblk + 7) / 8 * 8; b += team) nvf_img_block(imgp, bmma, b, 0u, 0u, 0u);
      if (!p.sf_linear)
        for (int c = nblk + tl; c < sf_pad_cols; c += team) sfg[nvf_sf_offset_128x4(r, c, kc4)] = 0;
    }
    if (end == total) break; // (the last round sets end = total)
    __syncthreads(); // (every team is done with red and its named barrier)
    team = tail_team; tl = threadIdx.x & (team - 1);
    first = end + (idx)(threadIdx.x / team) * gridDim.x + blockIdx.x; // the last round's row j on CTA j % grid
    end = total; step = total; parity = 0;
  }
}

// Specialisations of this file: -DNVF_SILU builds only the fused SiLU kernel (its exp and
// twice-wide loads make it the slow one to compile), the default the rest.
// One kernel per input dtype (a run-time switch inside one kernel keeps ptxas from
// unrolling the second instantiation's register blocks). The staged kernels compile for
// every architecture; below sm_90 they are the plain ones, never launched.
#define NVF_QUANT_KERNEL(name, silu, f16, staged, nb, minb)                              \
  extern "C" __global__ void __launch_bounds__(NVF_QT, minb) name(const NvfQuantParams p) { \
    nvf_pdl_enter();                                                                      \
    __shared__ int prefix[NVF_QMAXG + 1];                                                 \
    __shared__ __align__(16) u32 red[2][NVF_QT / 32];                                     \
    nvf_quantize_rows<silu, f16, staged, nb>(p, prefix, red);                             \
  }
#define NVF_QUANT_IMG_KERNEL(name, silu, nb, minb)                                         \
  extern "C" __global__ void __launch_bounds__(NVF_QT, minb) name(const NvfQuantParams p, u8* img, int img_tok) { \
    nvf_pdl_enter();                                                                      \
    __shared__ int prefix[NVF_QMAXG + 1];                                                 \
    __shared__ __align__(16) u32 red[2][NVF_QT / 32];                                     \
    nvf_quantize_rows<silu, false, false, nb, true>(p, prefix, red, img, img_tok);        \
  }
// (The SiLU build with -DNVF_QSILU2 is the "wide" SiLU specialisation of the host: rows
// past one register block per thread, K > 4096, get 2 blocks and 3 CTAs, so fewer blocks
// compute their SiLU twice. -DNVF_QSTAGED_ONLY builds only the staged kernels, compiled
// when the host first picks them.)
// The _img kernels (bf16 input, the expert layer's) also write the widened tokens of the
// layer's GEMM (nvf_img_block); -DNVF_QIMG_ONLY builds only them (compiled when the layer
// first needs them).
#if defined(NVF_SILU) && defined(NVF_QIMG_ONLY)
NVF_QUANT_IMG_KERNEL(nvf_silu_mul_quantize_img, true, NVF_QNB, NVF_QMINB)
#elif defined(NVF_SILU)
NVF_QUANT_KERNEL(nvf_silu_mul_quantize, true, false, false, NVF_QNB, NVF_QMINB)
NVF_QUANT_KERNEL(nvf_silu_mul_quantize_f16, true, true, false, NVF_QNB, NVF_QMINB)
#elif defined(NVF_QIMG_ONLY)
NVF_QUANT_IMG_KERNEL(nvf_quantize_img, false, NVF_QNB, NVF_QMINB)
#elif defined(NVF_QSTAGED_ONLY)
NVF_QUANT_KERNEL(nvf_quantize_staged, false, false, true, NVF_QNB, NVF_QSTAGE_MINB)
NVF_QUANT_KERNEL(nvf_quantize_staged_f16, false, true, true, NVF_QNB, NVF_QSTAGE_MINB)
#else
NVF_QUANT_KERNEL(nvf_quantize, false, false, false, NVF_QNB, NVF_QMINB)
NVF_QUANT_KERNEL(nvf_quantize_f16, false, true, false, NVF_QNB, NVF_QMINB)

// ---- weight quantization helpers ---------------------------------------------------
// Per-expert max |w| over finite values (a non-finite weight faults only its own
// block later), as f32 bits into amax[E] (zeroed by the host first).
extern "C" __global__ void nvf_weight_amax(const u8* w, int fp16, i64 elems_per_expert, int blocks_per_expert,
                                           u32* amax) {
  nvf_pdl_enter();
  const int e = blockIdx.x / blocks_per_expert, bx = blockIdx.x % blocks_per_expert;
  const u8* base = w + (i64)e * elems_per_expert * 2;
  u32 m = 0;
  for (i64 i = ((i64)bx * blockDim.x + threadIdx.x) * 8; i < elems_per_expert;
       i += (i64)blocks_per_expert * blockDim.x * 8) {
    const uint4 a = *(const uint4*)(base + i * 2);
    const u32 ws[4] = {a.x, a.y, a.z, a.w};
    #pragma unroll
    for (int j = 0; j < 8; ++j) {
      const u32 h = (ws[j >> 1] >> (16 * (j & 1))) & 0xFFFFu;
      const u32 f = __float_as_uint(fp16 ? nvf_fp16_to_f32((u16)h) : nvf_bf16_to_f32(h)) & 0x7FFFFFFFu;
      if (f < 0x7F800000u && f > m) m = f;
    }
  }
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const u32 t = __shfl_xor_sync(0xFFFFFFFFu, m, o);
    m = t > m ? t : m;
  }
  if ((threadIdx.x & 31) == 0 && m) atomicMax(amax + e, m);
}

// In place: amax bits -> decode scale amax / 2688 (as ModelOpt's weight_scale_2); a
// scale that is 0 or underflows to a subnormal marks an all-zero expert (scale 0).
extern "C" __global__ void nvf_amax_to_scale(u32* amax_then_scale, int n) {
  nvf_pdl_enter();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = __fdiv_rn(__uint_as_float(amax_then_scale[i]), 2688.0f);
  if (s < NVF_FLT_MIN) s = 0.0f;
  amax_then_scale[i] = __float_as_uint(s);
}

// out[i] = a[i] * b[i] (b null: a[i]); the expert layer's GEMM alphas.
extern "C" __global__ void nvf_scale_product(const float* a, const float* b, float* out, int n) {
  nvf_pdl_enter();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = b ? __fmul_rn(a[i], b[i]) : a[i];
}

// ---- scale-factor layout conversion (every destination byte written, padding 0) -------
extern "C" __global__ void nvf_sf_convert(const u8* src, u8* dst, int groups, int rows, int k,
                                          int to_128x4) {
  nvf_pdl_enter();
  const int nblk = k / 16, kc4 = (nblk + 3) / 4;
  const i64 lin = (i64)rows * nblk, sw = nvf_sf_group_bytes_128x4(rows, k);
  const i64 per_group = to_128x4 ? sw : lin;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < per_group * groups;
       i += (i64)gridDim.x * blockDim.x) {
    const i64 g = i / per_group, o = i % per_group;
    if (to_128x4) {
      // invert the 128x4 offset: o = rb*kc4*512 + cb*512 + r32*16 + r4*4 + c4
      const i64 rb = o / ((i64)kc4 * 512), rem = o % ((i64)kc4 * 512);
      const int cb = (int)(rem / 512), inner = (int)(rem % 512);
      const i64 r = rb * 128 + ((inner >> 2) & 3) * 32 + (inner >> 4);
      const int c = cb * 4 + (inner & 3);
      dst[g * sw + o] = (r < rows && c < nblk) ? src[g * lin + r * nblk + c] : (u8)0;
    } else {
      const i64 r = o / nblk;
      const int c = (int)(o % nblk);
      dst[g * lin + o] = src[g * sw + nvf_sf_offset_128x4(r, c, kc4)];
    }
  }
}

// ---- weight byte layout conversion (nvfp4moe_weights_relayout), 16 bytes a thread -------
// Row-major <-> tiled (gemm_common.cuh) over rows = G N rows of K/2 bytes (K % 32 == 0); N % 16
// == 0, so a 16-row tile never spans two groups. A tiled row takes RB = ceil(K / 128) 64 bytes:
// to tiled, the pieces past K/2 of a last partial step are written as zeros. Each 4-byte word's codes
// are encoded on the way to tiled and decoded on the way back (nvf_wenc_word, dequant_bf16.cuh).
extern "C" __global__ void nvf_weights_relayout(const u8* src, u8* dst, i64 rows, int k, int to_tiled) {
  nvf_pdl_enter();
  const int pieces = (int)(((i64)k + 127) / 128 * 4); // 16-byte pieces per tiled row
  const i64 rb = (i64)pieces * 16;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < rows * pieces; i += (i64)gridDim.x * blockDim.x) {
    const i64 r = i / pieces;
    const int o = (int)(i % pieces) * 16;
    const i64 lin = r * (k / 2) + o, til = (r & ~(i64)15) * rb + (i64)(o >> 6) * 1024 + (r & 15) * 64 + (o & 63);
    if (o < k / 2) {
      uint4 v = *(const uint4*)(src + (to_tiled ? lin : til));
      if (NVF_WENC_ON) {
        u32* w = &v.x;
        #pragma unroll
        for (int j = 0; j < 4; ++j) w[j] = to_tiled ? nvf_wenc_word(w[j]) : nvf_wdec_word(w[j]);
      }
      *(uint4*)(dst + (to_tiled ? til : lin)) = v;
    } else if (to_tiled)
      *(uint4*)(dst + til) = make_uint4(0, 0, 0, 0);
  }
}

// ---- dequantization: x = (e2m1(q) * e4m3(sf)) * s, to f32 or bf16 ---------------------
struct NvfDequantParams {
  const u8* q; const u8* sf; const float* scale; const int* masked_m; void* out;
  int groups, rows, k, sf_linear, scale_per_row, out_bf16;
};
extern "C" __global__ void nvf_dequantize(const NvfDequantParams p) {
  nvf_pdl_enter();
  const int nblk = p.k / 16, kc4 = (nblk + 3) / 4;
  const i64 sf_gbytes = p.sf_linear ? (i64)p.rows * nblk : nvf_sf_group_bytes_128x4(p.rows, p.k);
  const i64 total = (i64)p.groups * p.rows * nblk;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
    const int b = (int)(i % nblk);
    const i64 gr = i / nblk;
    const int g = (int)(gr / p.rows), r = (int)(gr % p.rows);
    if (r >= nvf_valid_rows(p.masked_m, g, p.rows)) continue;
    const float s = p.scale_per_row ? p.scale[gr] : p.scale[g];
    const u8 sfb = p.sf[(i64)g * sf_gbytes + (p.sf_linear ? (i64)r * nblk + b : nvf_sf_offset_128x4(r, b, kc4))];
    const float sff = nvf_e4m3_to_f32(sfb);
    const uint2 qq = *(const uint2*)(p.q + gr * (p.k / 2) + (i64)b * 8);
    float o[16];
    #pragma unroll
    for (int j = 0; j < 16; ++j) {
      const u32 c = ((j < 8 ? qq.x : qq.y) >> (4 * (j & 7))) & 0xFu;
      // a faulted block (SF 0x7F) is NaN with fixed bits, so every backend writes the same
      o[j] = sfb == 0x7F ? nvf_f32(0x7FC00000u) : __fmul_rn(__fmul_rn(nvf_e2m1_to_f32(c), sff), s);
    }
    const i64 base = gr * p.k + (i64)b * 16;
    if (p.out_bf16) {
      u32* d = (u32*)((u16*)p.out + base);
      #pragma unroll
      for (int j = 0; j < 8; ++j) d[j] = nvf_f32_to_bf16(o[2 * j]) | (nvf_f32_to_bf16(o[2 * j + 1]) << 16);
    } else {
      float* d = (float*)p.out + base;
      #pragma unroll
      for (int j = 0; j < 16; ++j) d[j] = o[j];
    }
  }
}
#endif // NVF_SILU
