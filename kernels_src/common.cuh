// common.cuh -- types and the bit-exact NVFP4 numerics shared by every kernel.
//
// NVRTC compiles these sources with no headers at all (NVRTC 13 ships none of
// cuda_fp4.h / cuda_bf16.h / <cstdint>), so everything is spelled out here.
// The host reference in nvfp4moe.h implements the same operations in the same
// order; NUMERICS.md section 2 is the contract, docs/numerics.md the decisions.
#pragma once

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

#define NVF_DEV __device__ __forceinline__

// f32 constants by bit pattern, so host and device use the very same values.
#define NVF_RCP6_BITS 0x3E2AAAABu    // f32 nearest 1/6
#define NVF_RCP2688_BITS 0x39C30C31u // f32 nearest 1/2688 (2688 = 6 * 448)
#define NVF_FLT_MIN 1.17549435e-38f  // smallest normal f32

NVF_DEV float nvf_f32(u32 bits) { return __uint_as_float(bits); }
NVF_DEV bool nvf_is_nonfinite(float x) { return (__float_as_uint(x) & 0x7F800000u) == 0x7F800000u; }
NVF_DEV float nvf_abs(float x) { return __uint_as_float(__float_as_uint(x) & 0x7FFFFFFFu); }

// NVF_F16 (dequant_bf16.cuh): the GEMMs' operands widened to F16 * 2^-14 instead of BF16 * 2^-8, so a
// product carries 2^-28 instead of 2^-16; NVF_DEQ_SCALE2 removes it. On in the modules for TILED weights
// (-DNVF_WTILED=1) and the layer's quantizers that widen tokens for them (the host's _img_f16 twins,
// -DNVF_QIMG_TILED=1: a layout define like NVF_WTILED, so that a tuning define of NVF_F16 governs both);
// ROW_MAJOR weights stay BF16 (their plain codes take more operations to F16). NVF_WENC_F16: TILED
// weights' codes are placed for the F16 widening (the relayout and every TILED reader agree); a tuning
// run's -DNVF_F16=0 arm puts everything back as it was (BF16, the 0.4 placement), -DNVF_F16=1 makes
// every module F16.
#ifndef NVF_F16
#if (defined(NVF_WTILED) && NVF_WTILED) || (defined(NVF_QIMG_TILED) && NVF_QIMG_TILED)
#define NVF_F16 1
#else
#define NVF_F16 0
#endif
#define NVF_WENC_F16 1
#elif NVF_F16
#define NVF_WENC_F16 1
#else
#define NVF_WENC_F16 0
#endif
#define NVF_DEQ_SCALE2 (NVF_F16 ? 268435456.0f : 65536.0f)

// ---- 16-bit float widening (exact) and bf16 rounding --------------------------------
NVF_DEV float nvf_bf16_to_f32(u32 h) { return __uint_as_float(h << 16); }
NVF_DEV float nvf_fp16_to_f32(u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
// Round to nearest even; NaN becomes the canonical 0x7FFF (as the host reference).
NVF_DEV u32 nvf_f32_to_bf16(float f) {
  u16 h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
NVF_DEV u32 nvf_pack_bf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// ---- E4M3 (scale factor) -------------------------------------------------------------
// Input: amax * t >= 0, or NaN. RNE, saturating to 448 (0x7E); NaN -> 0x7F; values
// below 2^-6 become subnormals (step 2^-9) or 0.
NVF_DEV u32 nvf_e4m3_sw(float x) {
  if (x != x) return 0x7Fu;
  if (x >= 448.0f) return 0x7Eu;
  if (x < 0.015625f) return (u32)rintf(__fmul_rn(x, 512.0f)); // exact scaling, RNE
  u32 v = __float_as_uint(x) - (120u << 23);                   // rebias 127 -> 7
  return (v + 0x7FFFFu + ((v >> 20) & 1u)) >> 20;              // RNE to 3 mantissa bits
}
// cvt.rn.satfinite.e4m3x2.f32 (sm_89+) gives the same byte for every such input (the high
// byte of its pair is e4m3(0) = 0, so no mask).
NVF_DEV u32 nvf_e4m3_hw(float x) {
  u16 r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(0.0f), "f"(x));
  return r;
}
#if defined(NVF_HW_E4M3)
#define nvf_e4m3 nvf_e4m3_hw
#else
#define nvf_e4m3 nvf_e4m3_sw
#endif

// Exact decode of an E4M3 byte (sign 0): the bits shifted into f32 position are the
// value * 2^-120 (subnormals included), and * 2^120 is exact.
NVF_DEV float nvf_e4m3_to_f32(u32 b) {
  return __fmul_rn(__uint_as_float((b & 0x7Fu) << 20), nvf_f32(0x7B800000u));
}

// ---- E2M1 (element) ------------------------------------------------------------------
// Magnitude code of |v| by the RNE cut points (NUMERICS.md 1); NaN gives 0.
NVF_DEV u32 nvf_e2m1_mag(float a) {
  return (u32)(a > 0.25f) + (u32)(a >= 0.75f) + (u32)(a > 1.25f) + (u32)(a >= 1.75f) +
         (u32)(a > 2.5f) + (u32)(a >= 3.5f) + (u32)(a > 5.0f);
}
NVF_DEV float nvf_e2m1_to_f32(u32 code) {
  // magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6 as f32 bit patterns
  const u32 m = code & 7u;
  u32 bits = m < 2u ? (m ? 0x3F000000u : 0u) : ((126u + (m >> 1)) << 23) | ((m & 1u) << 22);
  return __uint_as_float(bits | ((code & 8u) << 28));
}

// Codes of 16 values x[i] * out (out > 0). The sign always comes from x, so a zero
// element keeps code +-0 even when out overflowed to +inf (docs/numerics.md).
// Packing: element 2j in the low nibble of byte j.
NVF_DEV void nvf_e2m1_pack16(const float* x, float out, u32* q) {
#if defined(NVF_HW_E2M1)
  #pragma unroll
  for (int w = 0; w < 2; ++w) {
    u32 word = 0;
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
      float lo = x[w * 8 + 2 * j], hi = x[w * 8 + 2 * j + 1];
      float plo = lo == 0.0f ? lo : __fmul_rn(lo, out);
      float phi = hi == 0.0f ? hi : __fmul_rn(hi, out);
      u32 b;
      // first source operand lands in the HIGH nibble
      asm("{.reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %1, %2; cvt.u32.u8 %0, t;}"
          : "=r"(b) : "f"(phi), "f"(plo));
      word |= (b & 0xFFu) << (8 * j);
    }
    q[w] = word;
  }
#else
  #pragma unroll
  for (int w = 0; w < 2; ++w) {
    u32 word = 0;
    #pragma unroll
    for (int j = 0; j < 8; ++j) {
      float v = x[w * 8 + j];
      u32 c = nvf_e2m1_mag(nvf_abs(__fmul_rn(v, out))) | ((__float_as_uint(v) >> 28) & 8u);
      word |= c << (4 * j);
    }
    q[w] = word;
  }
#endif
}

// ---- one block of 16 (NUMERICS.md 2, steps 2-5 and 4over6) --------------------------
// s: decode scale of the row (finite, normal, > 0); t = (1/s) * (1/6). amax: max |x_i|
// (all finite). fo6: 0 off, 1 4over6 MAE, 2 4over6 MSE. Writes 8 bytes of codes to q,
// returns the SF byte.
NVF_DEV float nvf_block_error(const float* x, const u32* q, float sff, float s, int mse) {
  float err = 0.0f;
  #pragma unroll
  for (int i = 0; i < 16; ++i) {
    u32 c = (q[i >> 3] >> (4 * (i & 7))) & 0xFu;
    float deq = __fmul_rn(__fmul_rn(nvf_e2m1_to_f32(c), sff), s);
    float d = __fsub_rn(deq, x[i]);
    err = __fadd_rn(err, mse ? __fmul_rn(d, d) : nvf_abs(d));
  }
  return err;
}

NVF_DEV u32 nvf_quantize_block16(const float* x, float amax, float s, float t, int fo6, u32* q) {
  q[0] = 0u; q[1] = 0u;
  if (amax == 0.0f) return 0u;                  // zero block: SF 0, codes +0
  const float st = __fmul_rn(amax, t);
  const u32 sf6 = nvf_e4m3(st);
  if (sf6 != 0u) nvf_e2m1_pack16(x, __fdiv_rn(1.0f, __fmul_rn(nvf_e4m3_to_f32(sf6), s)), q);
  if (!fo6) return sf6;
  // 4over6: the block max maps to 4 instead of 6; pick it iff strictly better.
  const u32 sf4 = nvf_e4m3(__fmul_rn(st, 1.5f));
  u32 q4[2] = {0u, 0u};
  if (sf4 != 0u) nvf_e2m1_pack16(x, __fdiv_rn(1.0f, __fmul_rn(nvf_e4m3_to_f32(sf4), s)), q4);
  const float e6 = nvf_block_error(x, q, nvf_e4m3_to_f32(sf6), s, fo6 == 2);
  const float e4 = nvf_block_error(x, q4, nvf_e4m3_to_f32(sf4), s, fo6 == 2);
  if (e4 < e6) { q[0] = q4[0]; q[1] = q4[1]; return sf4; }
  return sf6;
}

// ---- scale-factor layouts (NUMERICS.md 3) --------------------------------------------
// 128x4: off = (r/128)*Kc4*512 + (c/4)*512 + (r%32)*16 + ((r%128)/32)*4 + c%4
NVF_DEV i64 nvf_sf_offset_128x4(i64 r, int c, int kc4) {
  return (r >> 7) * (i64)kc4 * 512 + (i64)(c >> 2) * 512 + (r & 31) * 16 + ((r & 127) >> 5) * 4 + (c & 3);
}
NVF_DEV i64 nvf_sf_group_bytes_128x4(int rows, int k) {
  return (i64)((rows + 127) / 128) * 128 * 4 * ((k / 16 + 3) / 4);
}

// ---- the exp of the SiLU, deterministic on host and device ----------------------------
// Cody-Waite reduction plus a degree-6 Taylor polynomial, every operation rounded
// explicitly (no FMA), so the CPU reference gives the same bits. Max error 3 ulp (docs/numerics.md).
NVF_DEV float nvf_exp(float x) {
#if defined(NVF_SILU_CALL) && NVF_SILU_CALL // 0.5.1's form (see nvf_silu_mul)
  if (x != x) return x;
  if (x > 88.7228394f) return __uint_as_float(0x7F800000u);
  if (x < -103.972084f) return 0.0f;
#else
  // the host's three tests (NaN, overflow, underflow) folded into one branch on the common path
  if (!(x >= -103.972084f && x <= 88.7228394f))
    return x > 0.0f ? __uint_as_float(0x7F800000u) : x < 0.0f ? 0.0f : x;
#endif
  const float n = rintf(__fmul_rn(x, 1.44269502f));
  float r = __fsub_rn(x, __fmul_rn(n, 0.693145751953125f));
  r = __fsub_rn(r, __fmul_rn(n, 1.42860677e-06f));
  float p = 1.38888889e-3f;                      // 1/720
  p = __fadd_rn(__fmul_rn(p, r), 8.33333377e-3f); // 1/120
  p = __fadd_rn(__fmul_rn(p, r), 4.16666679e-2f); // 1/24
  p = __fadd_rn(__fmul_rn(p, r), 0.166666672f);   // 1/6
  p = __fadd_rn(__fmul_rn(p, r), 0.5f);
  p = __fadd_rn(__fmul_rn(p, r), 1.0f);
  p = __fadd_rn(__fmul_rn(p, r), 1.0f);
  const int ni = (int)n, h = ni / 2;
  p = __fmul_rn(p, __uint_as_float((u32)(h + 127) << 23));
  return __fmul_rn(p, __uint_as_float((u32)(ni - h + 127) << 23));
}
// y = bf16_rne(silu(g) * u), silu(g) = g / (1 + exp(-g)) in f32 (NUMERICS.md 5). Inlined:
// the SiLU kernels issue about 16 of these per thread back to back, and a call costs each one
// its own branch, return and argument moves. -DNVF_SILU_CALL=1 (a tuning define) builds 0.5.1's
// form: the call, and nvf_exp's three tests.
#if defined(NVF_SILU_CALL) && NVF_SILU_CALL
__device__ __noinline__
#else
NVF_DEV
#endif
float nvf_silu_mul(float g, float u) {
  float sg = __fdiv_rn(g, __fadd_rn(1.0f, nvf_exp(-g)));
  return nvf_bf16_to_f32(nvf_f32_to_bf16(__fmul_rn(sg, u)));
}

// Programmatic dependent launch (sm_90+; the host launches with it unless $NVFP4MOE_PDL=0):
// a kernel can be scheduled while the kernel ahead of it on the stream is still running.
// griddepcontrol.wait blocks until that kernel has completed and its writes are visible, so
// every kernel calls this first, before any global memory access; then it lets the kernel
// after it be scheduled (which waits the same way). Both are no-ops in a kernel launched
// without the attribute.
NVF_DEV void nvf_pdl_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// masked_m as the contract reads it: clamped to [0, rows] so nothing past M_max is touched.
NVF_DEV int nvf_valid_rows(const int* masked_m, int g, int rows) {
  if (!masked_m) return rows;
  int m = masked_m[g];
  return m < 0 ? 0 : (m > rows ? rows : m);
}
