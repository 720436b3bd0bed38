// dequant_bf16.cuh -- exact NVFP4 -> BF16 widening in registers, shared by the swap-AB
// (mma.sync) and wgmma GEMMs. E2M1 (2 significant bits) times a ue4m3 SF (4) has at most
// 6 significant bits, so BF16 holds every product exactly; each value carries a factor
// 2^-8 that the GEMM epilogues remove exactly (* 2^16 for the two operands).
#pragma once
#include "common.cuh"

// NVF_F16 (common.cuh; the TILED modules' default since 0.5.0): both operands widened to F16 instead,
// each value * 2^-14 exactly (E2M1 magnitude bits at 9..11: 0.5 is the F16 subnormal 2^-15; the SFs
// of a piece converted by one cvt with no scaling; products down to 2^-24, F16's least subnormal), F16
// MMAs (ptx_wgmma.cuh, nvf_mma_f16_16816), the epilogues' 2^16 becoming 2^28 (NVF_DEQ_SCALE2), and
// TILED weights encoded for it (NVF_WENC_MAG below, mirrored by the host). Same products, same F32
// sums, so the same results. Same-process A/Bs on an H200 (bench/NOTES.md, thirtieth session): X52
// -1 to -4.4 % at 1 and 32 tokens (DeepSeek-V3 GEMM1 at 1 token +3.5 %), X51 layers -1 to -6 %.
#if NVF_F16
#define NVF_DEQ_M 0x8E008E00u // sign 15, magnitude 9..11, in each half
#define NVF_FMA_X2 "fma.rn.f16x2" // (the products, exact: a * b + -0)
#else
#define NVF_FMA_X2 "fma.rn.bf16x2"
#endif

// 8 E2M1 codes (one word, element e in nibble e) -> 4 bf16x2 holding the pairs (p, p+4),
// each value * 2^-126 exactly (sign to bit 15, magnitude code to bits 6..8; 0.5 becomes
// the bf16 subnormal 2^-127).
NVF_DEV void nvf_fp4x8_to_bf16x2(u32 q, u32* r) {
#if NVF_F16
  // (F16: the nibble's sign is one bit above its magnitude, F16's four: the nibble moved so its
  // magnitude lands on 9..11 puts its sign on 12, and adding 7 x that bit moves it to 15)
  #pragma unroll
  for (int p = 0; p < 4; ++p) {
    const u32 t = (p < 3 ? q << (9 - 4 * p) : q >> 3) & 0x1E001E00u;
    r[p] = t + (t & 0x10001000u) * 7u;
  }
#else
  // p = 0, 1: one multiply makes two copies of the masked nibbles, shifted by 12 - 4p (the
  // sign lands on bit 15) and by 6 - 4p (the magnitude on bits 6..8); the copies do not
  // overlap, so the product is their OR, and one mask keeps the wanted bits.
  r[0] = ((q & 0x000F000Fu) * 0x1040u) & 0x81C081C0u;
  r[1] = ((q & 0x00F000F0u) * 0x0104u) & 0x81C081C0u;
#if !defined(NVF_WIDEN_FMA) || NVF_WIDEN_FMA != 0
  // p = 2, 3: the same multiplies on q >> 8 (elements 2 and 6 move to nibbles 0 and 4, 3 and 7
  // to 1 and 5): per word 9 ALU-pipe and 4 FMA-pipe operations instead of 10 and 3 (the swap-AB
  // kernel's ALU pipe was its busiest: Nsight, K 2048, m = 1, 58 % active, 12 % of stalls on
  // it). A/Bs on an H200 (bench/NOTES.md, eighth session): swap-AB at m <= 8 -4.3 to -6.4 % with
  // the shift as a high multiply (NVF_WIDEN_FMA=1, FMA pipe) and another -0.4 to -1.4 % with this
  // plain shift; wgmma -0.7 to -1.9 % at m = 32, -1.8 % on the layers, m = 128 within +-1.6 %
  // (=1 cost it 2-6 %). Tuning runs: =1 the high multiply, =0 the form below.
#if defined(NVF_WIDEN_FMA) && NVF_WIDEN_FMA == 1
  const u32 q8 = __umulhi(q, 0x01000000u);
#else
  const u32 q8 = q >> 8;
#endif
  r[2] = ((q8 & 0x000F000Fu) * 0x1040u) & 0x81C081C0u;
  r[3] = ((q8 & 0x00F000F0u) * 0x0104u) & 0x81C081C0u;
#else
  // p = 2, 3: the magnitude moves right, which a multiply cannot do
  const u32 q4 = q << 4;
  r[2] = (q4 & 0x80008000u) | ((q4 & 0x70007000u) >> 6);
  r[3] = (q & 0x80008000u) | ((q & 0x70007000u) >> 6);
#endif
#endif
}

// TILED weights (nvfp4moe_weights_relayout) store each word's 8 codes re-encoded, so that the four
// pairs come out of 9 integer operations to F16 (0.5.0; to BF16 10 in the 0.4 placement instead of
// 13, bench/NOTES.md, twenty-seventh session; plain codes to F16 take 16): element i's magnitude bits (m, e0, e1) at bits NVF_WENC_MAG[i % 4] + 16 (i / 4) up, its
// sign at NVF_WENC_SGN[i % 4] + 16 (i / 4). Pair 0 is then in place, pair 1 three bits low, pairs 2
// and 3 take one multiply each as above; the four bit sets fill the word. The host mirrors the
// tables (nvfp4moe__wenc). Tuning runs: -DNVF_WENC=0 keeps the plain codes (GPU relayout and TILED
// GEMMs together; the host reference then disagrees).
#if !defined(NVF_WENC) || NVF_WENC
#define NVF_WENC_ON 1
#else
#define NVF_WENC_ON 0
#endif
#if defined(NVF_WTILED) && NVF_WTILED && NVF_WENC_ON
#define NVF_WT_ENC true // this module's weights are TILED, so encoded
#else
#define NVF_WT_ENC false
#endif
#if NVF_WENC_F16
// (F16: element 0 in place, 1 three bits low, 2 and 3 one multiply each: 9 operations a word)
__device__ constexpr int NVF_WENC_MAG[4] = {9, 6, 3, 0}, NVF_WENC_SGN[4] = {15, 12, 14, 13};
#else
__device__ constexpr int NVF_WENC_MAG[4] = {6, 3, 0, 9}, NVF_WENC_SGN[4] = {15, 12, 14, 13};
#endif
#if NVF_WT_ENC && NVF_F16 != NVF_WENC_F16
#error "the TILED codes' placement (NVF_WENC_F16) must match the widening (NVF_F16)"
#endif
NVF_DEV u32 nvf_wenc_word(u32 w) { // plain codes (element i in nibble i) -> encoded
  u32 o = 0;
  #pragma unroll
  for (int i = 0; i < 8; ++i) {
    const u32 n = (w >> (4 * i)) & 15u;
    o |= (n & 7u) << (NVF_WENC_MAG[i & 3] + 16 * (i >> 2)) | (n >> 3) << (NVF_WENC_SGN[i & 3] + 16 * (i >> 2));
  }
  return o;
}
NVF_DEV u32 nvf_wdec_word(u32 o) { // encoded -> plain codes
  u32 w = 0;
  #pragma unroll
  for (int i = 0; i < 8; ++i)
    w |= ((o >> (NVF_WENC_MAG[i & 3] + 16 * (i >> 2))) & 7u | ((o >> (NVF_WENC_SGN[i & 3] + 16 * (i >> 2))) & 1u) << 3) << (4 * i);
  return w;
}
// nvf_fp4x8_to_bf16x2 of an encoded word: the same four bf16x2.
NVF_DEV void nvf_fp4x8e_to_bf16x2(u32 q, u32* r) {
#if NVF_F16
  r[0] = q & NVF_DEQ_M;                                // magnitudes at 9..11, signs at 15
  r[1] = (q << 3) & NVF_DEQ_M;                         // at 6..8 and 12
  r[2] = ((q & 0x40384038u) * 0x42u) & NVF_DEQ_M;     // at 3..5 and 14: * 64 the magnitude, * 2 the sign
  r[3] = ((q & 0x20072007u) * 0x204u) & NVF_DEQ_M;    // at 0..2 and 13: * 512 the magnitude, * 4 the sign
#else
  r[0] = q & 0x81C081C0u;                                // magnitudes at 6..8, signs at 15 (and + 16)
  r[1] = (q << 3) & 0x81C081C0u;                         // at 3..5 and 12
  r[2] = ((q & 0x40074007u) * 0x42u) & 0x81C081C0u;      // at 0..2 and 14: * 2 the sign, * 64 the magnitude
  r[3] = (((q >> 3) & 0x05C005C0u) * 0x21u) & 0x81C081C0u; // at 9..11 and 13: then 6..8 and 10, * 32 the sign
#endif
}

// Two ue4m3 SFs (bytes 0, 1 of sf2) as F16, byte 0 low, exact, unscaled; SF 0x7F -> NaN (the F16
// operands' SFs; the BF16 ones start from it on sm_89+)
NVF_DEV u32 nvf_sf2_to_f16x2(u32 sf2) {
#if __CUDA_ARCH__ >= 890
  u32 h;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"((u16)(sf2 & 0x7F7Fu))); // ue4m3: bit 7 is not a sign
  return h;
#else
  u32 h = 0;
  #pragma unroll
  for (int i = 0; i < 2; ++i) {
    const u32 b = (sf2 >> (8 * i)) & 0xFFu;
    u16 f;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(f) : "f"(nvf_e4m3_to_f32(b)));
    h |= (b == 0x7Fu ? 0x7E00u : (u32)f) << (16 * i);
  }
  return h;
#endif
}
// Two ue4m3 SFs (bytes 0, 1 of sf2) -> bf16x2 of sf * 2^118 in both halves (exact;
// sf * 2^118 < 2^127), so that (code * 2^-126) * (sf * 2^118) = value * sf * 2^-8.
// SF 0x7F (a faulted block) -> NaN. sm_89+: one cvt for both bytes (e4m3 -> f16 is exact).
// NVF_F16: f16x2 of sf, byte 0 in both halves (s0), byte 1 (s1).
NVF_DEV void nvf_sf2_to_bf16x2(u32 sf2, u32& s0, u32& s1) {
#if NVF_F16
  const u32 hf = nvf_sf2_to_f16x2(sf2);
  s0 = __byte_perm(hf, 0u, 0x1010);
  s1 = __byte_perm(hf, 0u, 0x3232);
#elif __CUDA_ARCH__ >= 890
  const u32 h = nvf_sf2_to_f16x2(sf2);
  const float f0 = __fmul_rn(nvf_fp16_to_f32((u16)h), nvf_f32(0x7A800000u));
  const float f1 = __fmul_rn(nvf_fp16_to_f32((u16)(h >> 16)), nvf_f32(0x7A800000u));
  s0 = nvf_pack_bf16x2(f0, f0);
  s1 = nvf_pack_bf16x2(f1, f1);
#else
  #pragma unroll
  for (int i = 0; i < 2; ++i) {
    const u32 b = (sf2 >> (8 * i)) & 0xFFu;
    const u32 h = b == 0x7Fu ? 0x7FC0u : __float_as_uint(__fmul_rn(nvf_e4m3_to_f32(b), nvf_f32(0x7A800000u))) >> 16;
    (i ? s1 : s0) = h | (h << 16);
  }
#endif
}

NVF_DEV u32 nvf_bf16x2_mul(u32 a, u32 b) { // exact here: at most 6 significant bits, normal range
  u32 d;
  asm(NVF_FMA_X2 " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(0x80008000u));
  return d;
}

// Both SFs of sf2 in one bf16x2, sf * 2^118 each (byte 0 low half): one pack and one multiply
// instead of two of each; the products below take their half by operand swizzle
// (HMUL2 ... .H0_H0 / .H1_H1: ptxas folds the mov of the PTX). Same values as nvf_sf2_to_bf16x2
// (every step exact). sm_89+ (below it the two-register form is what the packed one would build
// from). Tuning runs: -DNVF_SFPACK=0 keeps the two-register form (twenty-eighth session).
#if (!defined(NVF_SFPACK) || NVF_SFPACK) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define NVF_SFPACK_ON 1
#else
#define NVF_SFPACK_ON 0
#endif
NVF_DEV u32 nvf_sf2_to_bf16x2_packed(u32 sf2) {
#if NVF_F16
  return nvf_sf2_to_f16x2(sf2);
#elif __CUDA_ARCH__ >= 890
  const u32 h = nvf_sf2_to_f16x2(sf2);
  u32 p, d;
  p = nvf_pack_bf16x2(nvf_fp16_to_f32((u16)h), nvf_fp16_to_f32((u16)(h >> 16)));
  d = nvf_bf16x2_mul(p, 0x7A807A80u); // x 2^118, exact (sf 2^118 < 2^127)
  return d;
#else
  u32 s0, s1;
  nvf_sf2_to_bf16x2(sf2, s0, s1);
  return (s0 & 0xFFFFu) | (s1 << 16);
#endif
}
// a * (half H of s, in both halves), bf16x2 (exact as nvf_bf16x2_mul)
template <int H> NVF_DEV u32 nvf_bf16x2_mul_half(u32 a, u32 s) {
  u32 d;
  if (H == 0)
    asm("{.reg .b16 l, h; .reg .b32 t; mov.b32 {l, h}, %2; mov.b32 t, {l, l}; " NVF_FMA_X2 " %0, %1, t, %3;}"
        : "=r"(d) : "r"(a), "r"(s), "r"(0x80008000u));
  else
    asm("{.reg .b16 l, h; .reg .b32 t; mov.b32 {l, h}, %2; mov.b32 t, {h, h}; " NVF_FMA_X2 " %0, %1, t, %3;}"
        : "=r"(d) : "r"(a), "r"(s), "r"(0x80008000u));
  return d;
}

// 16 bytes of a row (32 elements, SF columns c and c+1 in sf2) -> 16 bf16x2 in pair order:
// out[4j + p] = elements (8j + p, 8j + p + 4).
// ENC: the piece's words are encoded (TILED weights of a module with NVF_WT_ENC).
template <bool ENC = false> NVF_DEV void nvf_dequant_piece(uint4 q, u32 sf2, u32* out) {
  u32 s0, s1; // NVF_SFPACK_ON: s0 holds both SFs
  // (w[] in each branch: each keeps the statement order whose SASS was measured)
#if NVF_SFPACK_ON
  const u32 w[4] = {q.x, q.y, q.z, q.w};
  s0 = nvf_sf2_to_bf16x2_packed(sf2);
  s1 = 0u;
#else
  nvf_sf2_to_bf16x2(sf2, s0, s1);
  const u32 w[4] = {q.x, q.y, q.z, q.w};
#endif
  #pragma unroll
  for (int j = 0; j < 4; ++j) {
    u32 r[4];
    if (ENC) nvf_fp4x8e_to_bf16x2(w[j], r);
    else nvf_fp4x8_to_bf16x2(w[j], r);
    #pragma unroll
    for (int p = 0; p < 4; ++p)
      out[4 * j + p] = !NVF_SFPACK_ON ? nvf_bf16x2_mul(r[p], j < 2 ? s0 : s1)
                     : j < 2 ? nvf_bf16x2_mul_half<0>(r[p], s0) : nvf_bf16x2_mul_half<1>(r[p], s0);
  }
}
