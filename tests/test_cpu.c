/* test_cpu.c -- tests that need no GPU: the host reference numerics against hand-derived
   values, the SF layouts, SHA-256, argument checks (host reference and device entry
   points through an offline context), and small helpers. */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "test_util.h"

/* ---- E2M1 ------------------------------------------------------------------------------ */

static void test_e2m1_decode_all_codes(void) {
  static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  unsigned c;
  for (c = 0; c < 16; ++c) {
    float v = nvfp4moe_ref_e2m1_to_f32(c), want = (c & 8) ? -mag[c & 7] : mag[c & 7];
    CHECK(tu_bits(v) == tu_bits(want), "code %u decodes to %g, want %g", c, v, want);
    CHECK(nvfp4moe_ref_e2m1_from_f32(v) == c, "code %u does not round-trip", c);
  }
}

static void test_e2m1_cut_points_and_ties(void) {
  /* NUMERICS.md 1: <=0.25 -> 0, <0.75 -> 0.5, <=1.25 -> 1, <1.75 -> 1.5, <=2.5 -> 2,
     <3.5 -> 3, <=5 -> 4, else 6; ties go to the even code. */
  static const struct { float x; unsigned code; } v[] = {
      {0.0f, 0}, {0.25f, 0}, {0.2500001f, 1}, {0.5f, 1}, {0.7499999f, 1}, {0.75f, 2}, {1.0f, 2},
      {1.25f, 2}, {1.2500001f, 3}, {1.7499999f, 3}, {1.75f, 4}, {2.5f, 4}, {2.5000002f, 5}, {3.0f, 5},
      {3.4999998f, 5}, {3.5f, 6}, {5.0f, 6}, {5.0000005f, 7}, {6.0f, 7}, {7.0f, 7}, {1e30f, 7},
      {-0.0f, 8}, {-0.1f, 8}, {-0.25f, 8}, {-0.3f, 9}, {-0.75f, 10}, {-2.5f, 12}, {-3.5f, 14}, {-100.0f, 15}};
  size_t i;
  for (i = 0; i < sizeof v / sizeof v[0]; ++i) {
    unsigned got = nvfp4moe_ref_e2m1_from_f32(v[i].x);
    CHECK(got == v[i].code, "e2m1(%.9g) = %u, want %u", v[i].x, got, v[i].code);
  }
  CHECK(nvfp4moe_ref_e2m1_from_f32(tu_f32(0x7F800000u)) == 7, "+inf saturates to 6");
  CHECK(nvfp4moe_ref_e2m1_from_f32(tu_f32(0xFF800000u)) == 15, "-inf saturates to -6");
}

/* The GPU quantizer's fast E2M1 rounding (kernels_src/quantize.cu, nvf_e2m1_mag_bits):
   code = min(rint(2a), rint(a) + 2, rint(a/2) + 4, 7), each rint one RNE rounding against
   the magic 1.5 * 2^23. Checked here against the reference for every f32 within 2^13 ulps of
   each cut point and grid value and for every 61st f32 below 16 elsewhere, plus +inf. (An
   exhaustive run over all 2^31 non-negative f32 found no difference; it takes ~20 s.)
   This checks the formula, in a host copy; the kernel itself is checked byte for byte
   against the reference by tests/test_gpu.c (test_quantize_e2m1_cut_points and the rest). */
static unsigned fast_e2m1_mag(float a) {
  uint32_t c0 = tu_bits(fmaf(a, 2.0f, 12582912.0f)), c1 = tu_bits(a + 12582914.0f);
  uint32_t c2 = tu_bits(fmaf(a, 0.5f, 12582916.0f)), m = c0 < c1 ? c0 : c1;
  m = m < c2 ? m : c2;
  m = m < 0x4B400007u ? m : 0x4B400007u;
  return m & 0xFFu;
}

static void test_e2m1_fast_rounding_formula(void) {
  static const float pts[] = {0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f, 5.0f, 6.0f};
  unsigned long long n = 0, bad = 0;
  uint32_t b;
  size_t i;
  for (i = 0; i < sizeof pts / sizeof pts[0]; ++i)
    for (b = tu_bits(pts[i]) - 8192u; b <= tu_bits(pts[i]) + 8192u; ++b, ++n)
      bad += fast_e2m1_mag(tu_f32(b)) != nvfp4moe_ref_e2m1_from_f32(tu_f32(b));
  for (b = 0; b < 0x41800000u; b += 61u, ++n) bad += fast_e2m1_mag(tu_f32(b)) != nvfp4moe_ref_e2m1_from_f32(tu_f32(b));
  bad += fast_e2m1_mag(tu_f32(0x7F800000u)) != 7u;
  CHECK(bad == 0, "%llu of %llu values round differently", bad, n);
  CHECK(n > 17000000ull, "only %llu values checked", n);
}

/* ---- E4M3 ------------------------------------------------------------------------------ */

static double e4m3_value(unsigned b) { /* straight from the format definition */
  unsigned e = (b >> 3) & 15, m = b & 7;
  return e == 0 ? ldexp((double)m, -9) : ldexp(1.0 + m / 8.0, (int)e - 7);
}

static void test_e4m3_decode_all_bytes(void) {
  unsigned b;
  for (b = 0; b < 0x7F; ++b) {
    float v = nvfp4moe_ref_e4m3_to_f32(b);
    CHECK((double)v == e4m3_value(b), "byte 0x%02x decodes to %g, want %g", b, v, e4m3_value(b));
    CHECK(nvfp4moe_ref_e4m3_from_f32(v) == b, "byte 0x%02x does not round-trip", b);
  }
  CHECK(nvfp4moe_ref_e4m3_to_f32(0x7F) != nvfp4moe_ref_e4m3_to_f32(0x7F), "0x7F must decode to NaN");
  CHECK(e4m3_value(0x7E) == 448.0 && e4m3_value(1) == ldexp(1.0, -9), "table sanity");
}

static void test_e4m3_rounding_and_saturation(void) {
  unsigned b;
  /* every midpoint between neighbours rounds to the even mantissa; just above goes up */
  for (b = 0; b + 1 < 0x7F; ++b) {
    double lo = e4m3_value(b), hi = e4m3_value(b + 1), mid = (lo + hi) / 2;
    unsigned want_mid = (b & 1) ? b + 1 : b;
    float fm = (float)mid; /* exact: midpoints need at most 5 significant bits */
    CHECK((double)fm == mid, "midpoint not exact in f32");
    CHECK(nvfp4moe_ref_e4m3_from_f32(fm) == want_mid, "midpoint of 0x%02x/0x%02x -> 0x%02x", b, b + 1,
          nvfp4moe_ref_e4m3_from_f32(fm));
    CHECK(nvfp4moe_ref_e4m3_from_f32(nextafterf(fm, 1e9f)) == b + 1, "above the midpoint of 0x%02x", b);
    CHECK(nvfp4moe_ref_e4m3_from_f32(nextafterf(fm, 0.0f)) == b, "below the midpoint of 0x%02x", b);
  }
  CHECK(nvfp4moe_ref_e4m3_from_f32(448.0f) == 0x7E, "448");
  CHECK(nvfp4moe_ref_e4m3_from_f32(463.9f) == 0x7E, "just under 464 saturates");
  CHECK(nvfp4moe_ref_e4m3_from_f32(464.0f) == 0x7E, "464 (would round to 480) saturates, never 0x7F");
  CHECK(nvfp4moe_ref_e4m3_from_f32(1e30f) == 0x7E, "huge saturates");
  CHECK(nvfp4moe_ref_e4m3_from_f32(tu_f32(0x7F800000u)) == 0x7E, "+inf saturates (satfinite)");
  CHECK(nvfp4moe_ref_e4m3_from_f32(tu_f32(0x7FC00000u)) == 0x7F, "NaN -> 0x7F");
  CHECK(nvfp4moe_ref_e4m3_from_f32((float)ldexp(1.0, -10)) == 0, "2^-10 ties to 0");
  CHECK(nvfp4moe_ref_e4m3_from_f32((float)ldexp(1.0, -10) * 1.001f) == 1, "just above 2^-10 -> 2^-9");
  CHECK(nvfp4moe_ref_e4m3_from_f32(1e-30f) == 0, "tiny -> 0");
  CHECK(nvfp4moe_ref_e4m3_from_f32(tu_f32(1)) == 0, "f32 subnormal -> 0");
}

/* ---- the block quantizer on hand-derived blocks ------------------------------------------- */

/* Quantize one row of 16 bf16-exact values with a host decode scale. */
static unsigned quantize_block(const float* x16, float s, unsigned flags, unsigned char q[8]) {
  unsigned short xb[16];
  unsigned char sf[128 * 4];
  nvfp4moe_quantize_args a;
  int i;
  for (i = 0; i < 16; ++i) xb[i] = nvfp4moe_ref_f32_to_bf16(x16[i]);
  memset(&a, 0, sizeof a);
  a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = 1; a.k = 16;
  a.x = NVFP4MOE_HOSTPTR(xb); a.out_e2m1 = NVFP4MOE_HOSTPTR(q); a.out_sf = NVFP4MOE_HOSTPTR(sf);
  a.sf_layout = NVFP4MOE_SF_LAYOUT_LINEAR; a.scale_value = s; a.flags = flags;
  if (nvfp4moe_ref_quantize_per_tensor(&a) != NVFP4MOE_SUCCESS) return 0x100;
  return sf[0];
}

static void test_block_hand_vectors(void) {
  /* s = 1: t = f32(1/6); amax 6 -> 6 * t = 1.0000000298 -> SF 1.0 (0x38); out = 1, so the
     codes are e2m1 of the values themselves. Element 2j in the low nibble of byte j. */
  float x[16] = {6, 3, -1.5f, 0.5f, 0, -0.0f, 4, -6, 1, 2, 0.25f, 0.75f, -3.5f, 5, 2.5f, -0.3f};
  unsigned char q[8], want[8] = {0x57, 0x1B, 0x80, 0xF6, 0x42, 0x20, 0x6E, 0x94};
  unsigned sf = quantize_block(x, 1.0f, 0, q);
  int i;
  CHECK(sf == 0x38, "SF 0x%02x, want 0x38", sf);
  for (i = 0; i < 8; ++i) CHECK(q[i] == want[i], "byte %d = 0x%02x, want 0x%02x", i, q[i], want[i]);

  /* decode scale 2: enc 0.5, t = 0.5/6; amax 12 -> 12*t = 1 -> SF 1.0; out = 1/(1*2) = 0.5 */
  {
    float y[16] = {12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1};
    sf = quantize_block(y, 2.0f, 0, q);
    CHECK(sf == 0x38, "s=2: SF 0x%02x", sf);
    CHECK(q[0] == 0x07 && q[7] == 0x90, "s=2: bytes 0x%02x 0x%02x (want 0x07, 0x90: -1*0.5 = -0.5)", q[0], q[7]);
  }
  /* a zero block: SF 0, codes +0 */
  {
    float z[16] = {0};
    sf = quantize_block(z, 1.0f, 0, q);
    CHECK(sf == 0, "zero block SF 0x%02x", sf);
    for (i = 0; i < 8; ++i) CHECK(q[i] == 0, "zero block byte %d", i);
  }
  /* amax 448*6*1000 with s = 1: SF saturates at 448 (0x7E), never NaN */
  {
    float big[16] = {2688000.0f, 1.0f};
    sf = quantize_block(big, 1.0f, 0, q);
    CHECK(sf == 0x7E, "saturated SF 0x%02x", sf);
    CHECK((q[0] & 0xF) == 7, "the saturated max is code 6");
  }
}

static void test_4over6_hand_vectors(void) {
  /* all 4.0, s = 1: 6-candidate SF = e4m3(4/6 = 0.667) = 0.6875; 4/0.6875 = 5.8 -> 6 ->
     6*0.6875 = 4.125, error 16*0.125 = 2. 4-candidate SF = e4m3(1.0) = 1.0, code 4, error 0:
     4over6 picks SF 0x38 with codes 6 (=4). Without 4over6: SF 0x33 (0.6875), codes 7. */
  float x[16], one6[16] = {6};
  unsigned char q[8];
  unsigned sf;
  int i;
  for (i = 0; i < 16; ++i) x[i] = 4.0f;
  sf = quantize_block(x, 1.0f, 0, q);
  CHECK(sf == 0x33 && q[0] == 0x77, "plain: SF 0x%02x byte 0x%02x", sf, q[0]);
  sf = quantize_block(x, 1.0f, NVFP4MOE_QUANT_4OVER6, q);
  CHECK(sf == 0x38 && q[0] == 0x66, "4over6: SF 0x%02x byte 0x%02x", sf, q[0]);
  sf = quantize_block(x, 1.0f, NVFP4MOE_QUANT_4OVER6_MSE, q);
  CHECK(sf == 0x38 && q[0] == 0x66, "4over6 MSE: SF 0x%02x byte 0x%02x", sf, q[0]);
  /* single 6: both candidates are exact (6 with SF 1.0; 4 with SF 1.5) -> the tie keeps 6 */
  sf = quantize_block(one6, 1.0f, NVFP4MOE_QUANT_4OVER6, q);
  CHECK(sf == 0x38 && (q[0] & 0xF) == 7, "tie keeps the 6-candidate: SF 0x%02x byte 0x%02x", sf, q[0]);
}

/* ---- rows: per-token scale, zero rows, non-finite rows and blocks -------------------------- */

static void test_per_token_rows(void) {
  enum { K = 32, M = 4 };
  unsigned short x[M * K];
  unsigned char q[M * K / 2], sf[128 * 4];
  float s[M];
  nvfp4moe_quantize_args a;
  int i;
  for (i = 0; i < M * K; ++i) x[i] = nvfp4moe_ref_f32_to_bf16((float)((i % 7) - 3));
  x[0] = nvfp4moe_ref_f32_to_bf16(2688.0f);                            /* row 0 amax 2688 */
  for (i = K; i < 2 * K; ++i) x[i] = 0;                                /* row 1 zero */
  x[2 * K + 20] = 0x7FC0;                                              /* row 2: a NaN */
  for (i = 3 * K; i < 4 * K; ++i) x[i] = nvfp4moe_ref_f32_to_bf16(-1.0f - (float)(i % 3)); /* all negative */
  memset(&a, 0, sizeof a);
  a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = M; a.k = K;
  a.x = NVFP4MOE_HOSTPTR(x); a.out_e2m1 = NVFP4MOE_HOSTPTR(q); a.out_sf = NVFP4MOE_HOSTPTR(sf);
  a.scale = NVFP4MOE_HOSTPTR(s);
  memset(sf, 0xCC, sizeof sf);
  CHECK(nvfp4moe_ref_quantize_per_token(&a) == NVFP4MOE_SUCCESS, "quantize: %s", nvfp4moe_last_error());
  CHECK(s[0] == (float)(2688.0 * (double)tu_f32(0x39C30C31u)), "row 0 scale %.9g", s[0]);
  CHECK(s[1] == 0.0f && tu_bits(s[1]) == 0, "zero row scale %g", s[1]);
  CHECK(tu_bits(s[2]) == 0x7FC00000u, "NaN row scale bits 0x%08x", tu_bits(s[2]));
  CHECK(s[3] == (float)(3.0 * (double)tu_f32(0x39C30C31u)), "all-negative row: |min| is the amax (%.9g)", s[3]);
  for (i = 0; i < 2; ++i) {
    CHECK(sf[nvfp4moe__sf_off_128x4(1, i, 1)] == 0, "zero row SF");
    CHECK(sf[nvfp4moe__sf_off_128x4(2, i, 1)] == 0x7F, "NaN row SF must be 0x7F in every block");
  }
  for (i = 0; i < K / 2; ++i) {
    CHECK(q[K / 2 + i] == 0, "zero row codes");
    CHECK(q[K + i] == 0, "NaN row codes must be 0");
  }
  /* SF padding: columns 2..3 of every row, rows 4..127: zero */
  for (i = 0; i < 128; ++i) {
    CHECK(sf[nvfp4moe__sf_off_128x4(i, 2, 1)] == 0 && sf[nvfp4moe__sf_off_128x4(i, 3, 1)] == 0, "padding column, row %d", i);
    if (i >= M) CHECK(sf[nvfp4moe__sf_off_128x4(i, 0, 1)] == 0, "padding row %d", i);
  }
  /* all-negative row: amax 3 -> s = 3/2688, block SF 1*... every code negative */
  for (i = 0; i < K / 2; ++i) CHECK((q[3 * K / 2 + i] & 0x88) == 0x88, "negative codes keep their sign");
}

static void test_given_scale_nonfinite_block(void) {
  enum { K = 48 };
  unsigned short x[K];
  unsigned char q[K / 2], sf[3];
  nvfp4moe_quantize_args a;
  int i;
  for (i = 0; i < K; ++i) x[i] = nvfp4moe_ref_f32_to_bf16(1.0f + (float)i / 8.0f);
  x[20] = 0x7F80; /* +inf in block 1 */
  memset(&a, 0, sizeof a);
  a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = 1; a.k = K;
  a.x = NVFP4MOE_HOSTPTR(x); a.out_e2m1 = NVFP4MOE_HOSTPTR(q); a.out_sf = NVFP4MOE_HOSTPTR(sf);
  a.sf_layout = NVFP4MOE_SF_LAYOUT_LINEAR; a.scale_value = 1.0f / 256.0f;
  CHECK(nvfp4moe_ref_quantize_per_tensor(&a) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  CHECK(sf[1] == 0x7F, "the inf block gets SF 0x7F (got 0x%02x)", sf[1]);
  for (i = 8; i < 16; ++i) CHECK(q[i] == 0, "the inf block's codes are 0");
  CHECK(sf[0] != 0 && sf[0] != 0x7F && sf[2] != 0 && sf[2] != 0x7F, "other blocks quantized normally");
}

/* ---- magnitude, not only shape: dequantize(quantize(x)) ~= x ------------------------------ */

static void test_roundtrip_magnitude(void) {
  enum { M = 37, K = 272 };
  unsigned short x[M * K];
  float xf[M * K], deq[M * K], s[M];
  unsigned char q[M * K / 2], sf[256 * 4 * 5];
  nvfp4moe_quantize_args a;
  nvfp4moe_dequantize_args d;
  double num = 0, den = 0, sx = 0, sd = 0;
  int i;
  for (i = 0; i < M * K; ++i) {
    x[i] = nvfp4moe_ref_f32_to_bf16((float)(tu_normal() * 3.0));
    xf[i] = nvfp4moe_ref_bf16_to_f32(x[i]);
  }
  memset(&a, 0, sizeof a);
  a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = M; a.k = K;
  a.x = NVFP4MOE_HOSTPTR(x); a.out_e2m1 = NVFP4MOE_HOSTPTR(q); a.out_sf = NVFP4MOE_HOSTPTR(sf);
  a.scale = NVFP4MOE_HOSTPTR(s);
  CHECK(nvfp4moe_ref_quantize_per_token(&a) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  memset(&d, 0, sizeof d);
  d.groups = 1; d.rows = M; d.k = K; d.e2m1 = a.out_e2m1; d.sf = a.out_sf; d.scale = a.scale; d.scale_per_row = 1;
  d.out_dtype = NVFP4MOE_DTYPE_F32; d.out = NVFP4MOE_HOSTPTR(deq);
  CHECK(nvfp4moe_ref_dequantize(&d) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  for (i = 0; i < M * K; ++i) {
    num += (deq[i] - xf[i]) * (double)(deq[i] - xf[i]);
    den += (double)xf[i] * xf[i];
    sx += fabs(xf[i]);
    sd += fabs(deq[i]);
  }
  /* NVFP4 on gaussian data: relative RMS error about 0.09-0.12 */
  CHECK(sqrt(num / den) < 0.15, "relative RMS error %.4f", sqrt(num / den));
  CHECK(sd / sx > 0.9 && sd / sx < 1.1, "magnitude ratio %.4f (an encode/decode mix-up gives a constant factor)", sd / sx);
}

/* ---- layouts ---------------------------------------------------------------------------------- */

/* 128x4 built the other way: pad to [Mp, Kp], reshape (Mp/128, 4, 32, Kp/4, 4) and
   permute to (m_tile, k_tile, r32, r4, c4) (SGLang swizzle_blockscale). */
static void swizzle_by_permute(const unsigned char* lin, int rows, int nblk, unsigned char* out) {
  int mp = (rows + 127) / 128 * 128, kp = (nblk + 3) / 4 * 4;
  int mt, r4, r32, kt, c4;
  size_t o = 0;
  for (mt = 0; mt < mp / 128; ++mt)
    for (kt = 0; kt < kp / 4; ++kt)
      for (r32 = 0; r32 < 32; ++r32)
        for (r4 = 0; r4 < 4; ++r4)
          for (c4 = 0; c4 < 4; ++c4) {
            int r = mt * 128 + r4 * 32 + r32, c = kt * 4 + c4;
            out[o++] = (r < rows && c < nblk) ? lin[(size_t)r * nblk + c] : 0;
          }
}

static void test_sf_layouts(void) {
  static const int rows_set[] = {1, 31, 128, 129, 300}, k_set[] = {16, 48, 64, 80, 2880};
  size_t ri, ki;
  for (ri = 0; ri < 5; ++ri)
    for (ki = 0; ki < 5; ++ki) {
      int rows = rows_set[ri], k = k_set[ki], nblk = k / 16, g;
      size_t lin_n = nvfp4moe_sf_bytes(rows, k, NVFP4MOE_SF_LAYOUT_LINEAR);
      size_t sw_n = nvfp4moe_sf_bytes(rows, k, NVFP4MOE_SF_LAYOUT_128X4);
      unsigned char *lin = (unsigned char*)malloc(2 * lin_n), *sw = (unsigned char*)malloc(2 * sw_n);
      unsigned char *want = (unsigned char*)malloc(sw_n), *back = (unsigned char*)malloc(2 * lin_n);
      nvfp4moe_sf_convert_args c;
      size_t i;
      CHECK(sw_n == (size_t)((rows + 127) / 128) * 128 * 4 * ((nblk + 3) / 4), "size rows=%d k=%d", rows, k);
      for (i = 0; i < 2 * lin_n; ++i) lin[i] = (unsigned char)(tu_rand() % 0x7F);
      memset(&c, 0, sizeof c);
      c.groups = 2; c.rows = rows; c.k = k; c.src = NVFP4MOE_HOSTPTR(lin); c.dst = NVFP4MOE_HOSTPTR(sw);
      c.dst_layout = NVFP4MOE_SF_LAYOUT_128X4;
      memset(sw, 0xEE, 2 * sw_n);
      CHECK(nvfp4moe_ref_sf_convert(&c) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
      for (g = 0; g < 2; ++g) {
        swizzle_by_permute(lin + g * lin_n, rows, nblk, want);
        CHECK(memcmp(want, sw + g * sw_n, sw_n) == 0, "128x4 differs from the permute construction rows=%d k=%d g=%d",
              rows, k, g);
      }
      c.src = NVFP4MOE_HOSTPTR(sw); c.dst = NVFP4MOE_HOSTPTR(back); c.dst_layout = NVFP4MOE_SF_LAYOUT_LINEAR;
      CHECK(nvfp4moe_ref_sf_convert(&c) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
      CHECK(memcmp(back, lin, 2 * lin_n) == 0, "round trip rows=%d k=%d", rows, k);
      free(lin); free(sw); free(want); free(back);
    }
}

/* ---- SHA-256 (FIPS 180-2 test vectors) -------------------------------------------------------- */

static void sha_hex(const void* data, size_t n, char out[65]) {
  nvfp4moe__sha256 h;
  unsigned char d[32];
  nvfp4moe__sha256_init(&h);
  nvfp4moe__sha256_update(&h, data, n);
  nvfp4moe__sha256_final(&h, d);
  nvfp4moe__hex(d, 32, out);
}

static void test_sha256_vectors(void) {
  char hex[65];
  char* mil = (char*)malloc(1000000);
  nvfp4moe__sha256 h;
  unsigned char d[32];
  size_t i;
  sha_hex("", 0, hex);
  CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0, "empty: %s", hex);
  sha_hex("abc", 3, hex);
  CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0, "abc: %s", hex);
  sha_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
  CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0, "448-bit: %s", hex);
  memset(mil, 'a', 1000000);
  nvfp4moe__sha256_init(&h);
  for (i = 0; i < 1000000; i += 999) nvfp4moe__sha256_update(&h, mil + i, i + 999 <= 1000000 ? 999 : 1000000 - i);
  nvfp4moe__sha256_final(&h, d);
  nvfp4moe__hex(d, 32, hex);
  CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0, "million a: %s", hex);
  free(mil);
}

/* ---- SiLU exp, bf16 rounding ------------------------------------------------------------------ */

static void test_exp_and_silu(void) {
  int i;
  for (i = 0; i < 200000; ++i) {
    float x = (float)((tu_uniform() - 0.5) * 200.0);
    double want = exp((double)x);
    float got = nvfp4moe__exp(x);
    if (want > 3.4028234663852886e38) CHECK(got == tu_f32(0x7F800000u), "exp(%g) should overflow", x);
    else if (want > 1e-37) CHECK(fabs(got - want) <= 4.0 * want * 1.1920929e-7, "exp(%.9g) = %.9g, want %.9g", x, got, want);
  }
  CHECK(nvfp4moe__exp(0.0f) == 1.0f, "exp(0)");
  CHECK(nvfp4moe_ref_silu_mul(-200.0f, 3.0f) == 0.0f, "silu(-200) * 3 = -0");
  CHECK(fabs(nvfp4moe_ref_silu_mul(2.0f, 1.0f) - 1.7615942) < 0.01, "silu(2)");
  CHECK(nvfp4moe_ref_silu_mul(tu_f32(0x7FC00000u), 1.0f) != nvfp4moe_ref_silu_mul(tu_f32(0x7FC00000u), 1.0f), "NaN stays NaN");
}

static void test_bf16_rounding(void) {
  CHECK(nvfp4moe_ref_f32_to_bf16(1.0f) == 0x3F80, "1.0");
  CHECK(nvfp4moe_ref_f32_to_bf16(tu_f32(0x3F808000u)) == 0x3F80, "tie to even (down)");
  CHECK(nvfp4moe_ref_f32_to_bf16(tu_f32(0x3F818000u)) == 0x3F82, "tie to even (up)");
  CHECK(nvfp4moe_ref_f32_to_bf16(tu_f32(0x3F808001u)) == 0x3F81, "above the tie");
  CHECK(nvfp4moe_ref_f32_to_bf16(tu_f32(0x7FC00001u)) == 0x7FFF, "NaN -> canonical 0x7FFF");
  CHECK(nvfp4moe_ref_f32_to_bf16(tu_f32(0x7F7FFFFFu)) == 0x7F80, "FLT_MAX rounds to inf");
  /* f64: 1 + 2^-8 + 2^-40 is above the bf16 tie; via f32 it would look like a tie */
  CHECK(nvfp4moe__f64_to_bf16(1.0 + ldexp(1.0, -8) + ldexp(1.0, -40)) == 0x3F81, "f64 just above a tie rounds up");
  CHECK(nvfp4moe__f64_to_bf16(1.0 + ldexp(1.0, -8) - ldexp(1.0, -40)) == 0x3F80, "f64 just below a tie rounds down");
  CHECK(nvfp4moe__f64_to_bf16(1.0 + ldexp(1.0, -8)) == 0x3F80, "f64 exact tie rounds to even");
  CHECK(nvfp4moe_ref_fp16_to_f32(0x0001) == (float)ldexp(1.0, -24), "fp16 subnormal");
  CHECK(nvfp4moe_ref_fp16_to_f32(0xFBFF) == -65504.0f, "fp16 max");
}

/* ---- GEMM reference on a hand example ----------------------------------------------------------- */

static void test_ref_gemm_hand(void) {
  /* K = 32: A row = codes 2 (1.0) everywhere with SF 1.0 -> all ones; B row 0 = code 4 (2.0)
     with SF 0.5 -> all ones; B row 1 = first block code 7 (6) SF 2 -> 12, second block 0.
     D[0,0] = 32 * 1, D[0,1] = 16 * 12 = 192; alpha 0.5, row scale 3 -> 48 and 288. */
  unsigned char a[16], asf[512], b[8 * 16], bsf[512];
  unsigned short d[2 * 8];
  int mm = 1;
  float alpha = 0.5f, rs[2] = {3.0f, 100.0f};
  nvfp4moe_gemm_args g;
  memset(a, 0x22, sizeof a);
  memset(asf, 0, sizeof asf);
  asf[0] = asf[1] = 0x38;
  memset(b, 0, sizeof b);
  memset(bsf, 0, sizeof bsf);
  memset(b, 0x44, 16);
  bsf[nvfp4moe__sf_off_128x4(0, 0, 1)] = bsf[nvfp4moe__sf_off_128x4(0, 1, 1)] = 0x30; /* 0.5 */
  memset(b + 16, 0x77, 8);
  bsf[nvfp4moe__sf_off_128x4(1, 0, 1)] = 0x40; /* 2.0 */
  memset(d, 0xAB, sizeof d);
  memset(&g, 0, sizeof g);
  g.groups = 1; g.m_max = 2; g.n = 8; g.k = 32;
  g.a = NVFP4MOE_HOSTPTR(a); g.a_sf = NVFP4MOE_HOSTPTR(asf); g.b = NVFP4MOE_HOSTPTR(b); g.b_sf = NVFP4MOE_HOSTPTR(bsf);
  g.masked_m = NVFP4MOE_HOSTPTR(&mm); g.alpha = NVFP4MOE_HOSTPTR(&alpha); g.row_scale = NVFP4MOE_HOSTPTR(rs);
  g.d = NVFP4MOE_HOSTPTR(d);
  CHECK(nvfp4moe_ref_grouped_gemm_nt_masked(&g) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  CHECK(nvfp4moe_ref_bf16_to_f32(d[0]) == 48.0f, "D[0,0] = %g, want 48", nvfp4moe_ref_bf16_to_f32(d[0]));
  CHECK(nvfp4moe_ref_bf16_to_f32(d[1]) == 288.0f, "D[0,1] = %g, want 288", nvfp4moe_ref_bf16_to_f32(d[1]));
  CHECK(d[2] == 0, "D[0,2] = 0 (zero B row)");
  CHECK(d[8] == 0xABAB && d[15] == 0xABAB, "row 1 >= masked_m untouched");
}

/* ---- argument checks ------------------------------------------------------------------------------- */

static nvfp4moe_context* offline_ctx(const char* target) {
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  memset(&d, 0, sizeof d);
  d.flags = NVFP4MOE_FLAG_OFFLINE | NVFP4MOE_FLAG_NO_DISK_CACHE;
  d.target = target;
  d.logger.func = tu_logger;
  if (nvfp4moe_create(&d, &ctx) != NVFP4MOE_SUCCESS) return 0;
  return ctx;
}

#define EXPECT_ARG_ERROR(call, needle)                                                                        \
  do {                                                                                                        \
    nvfp4moe_result r_ = (call);                                                                              \
    CHECK(r_ == NVFP4MOE_ERROR_INVALID_ARGUMENT, "%s returned %s", #call, nvfp4moe_result_string(r_));        \
    CHECK(strstr(nvfp4moe_last_error(), needle) != 0, "message \"%s\" does not name %s", nvfp4moe_last_error(), \
          needle);                                                                                            \
  } while (0)

/* Bytes the host reference writes to stderr for one bad call under $NVFP4MOE_LOG_LEVEL = level
   (null: unset); the call still fails with a message in nvfp4moe_last_error(). */
static long stderr_bytes_of_bad_call(const char* level) {
  nvfp4moe_dequantize_args dq;
  FILE* tmp = tmpfile();
  int saved = dup(2);
  long n = -1;
  nvfp4moe_result r;
  if (!tmp || saved < 0) return -1;
  if (level) setenv("NVFP4MOE_LOG_LEVEL", level, 1); else unsetenv("NVFP4MOE_LOG_LEVEL");
  memset(&dq, 0, sizeof dq); /* groups 0 */
  fflush(stderr);
  dup2(fileno(tmp), 2);
  r = nvfp4moe_ref_dequantize(&dq);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  unsetenv("NVFP4MOE_LOG_LEVEL");
  if (r == NVFP4MOE_ERROR_INVALID_ARGUMENT && strstr(nvfp4moe_last_error(), "args->groups")) n = ftell(tmp);
  fclose(tmp);
  return n;
}

static void test_log_level_env(void) {
  const long quiet = stderr_bytes_of_bad_call("-1"), zero = stderr_bytes_of_bad_call("0");
  const long loud = stderr_bytes_of_bad_call(0), err = stderr_bytes_of_bad_call("1");
  CHECK(quiet == 0 && zero == 0, "NVFP4MOE_LOG_LEVEL=-1 / 0 silence the host reference: %ld / %ld bytes", quiet, zero);
  CHECK(loud > 0 && err > 0, "unset and 1 print the error: %ld / %ld bytes", loud, err);
}

static void test_argument_checks(void) {
  nvfp4moe_context* ctx = offline_ctx("sm_90a");
  static unsigned char buf[1 << 16];
  static int mm[4] = {1, 1, 1, 1};
  nvfp4moe_quantize_args q, q0;
  nvfp4moe_gemm_args g, g0;
  nvfp4moe_dequantize_args dq;
  nvfp4moe_sf_convert_args sc;
  nvfp4moe_weight_quantize_args wq;
  nvfp4moe_moe_weights mw;
  nvfp4moe_moe_args ma;
  nvfp4moe_devptr base = NVFP4MOE_HOSTPTR(buf);
  base = (base + 255) / 256 * 256;
  CHECK(ctx != 0, "offline context: %s", nvfp4moe_last_error());
  if (!ctx) return;
  memset(&q0, 0, sizeof q0);
  q0.dtype = NVFP4MOE_DTYPE_BF16; q0.groups = 1; q0.rows = 4; q0.k = 64;
  q0.x = base; q0.out_e2m1 = base + 4096; q0.out_sf = base + 8192; q0.scale = base + 16384;
  q = q0; q.k = 40;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "args->k");
  EXPECT_ARG_ERROR(nvfp4moe_ref_quantize_per_token(&q), "args->k");
  q = q0; q.k = 0;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "args->k");
  q = q0; q.x = 0;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "args->x");
  EXPECT_ARG_ERROR(nvfp4moe_ref_quantize_per_token(&q), "args->x");
  q = q0; q.x = base + 8;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "16-byte aligned");
  q = q0; q.out_e2m1 = base + 4;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "args->out_e2m1");
  q = q0; q.rows = 0;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "args->rows");
  q = q0; q.groups = 0;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "args->groups");
  q = q0; q.scale = 0;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "args->scale");
  q = q0; q.x_row_stride = 60;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "x_row_stride");
  q = q0; q.x_row_stride = 68;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "multiple of 8");
  q = q0; q.dtype = NVFP4MOE_DTYPE_F32;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "args->dtype");
  q = q0; q.flags = 8;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "args->flags");
  q = q0; q.scale = 0; q.scale_value = 0.0f;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_tensor(ctx, &q, 0), "scale_value");
  q.scale_value = -1.0f;
  EXPECT_ARG_ERROR(nvfp4moe_ref_quantize_per_tensor(&q), "scale_value");
  q.scale_value = tu_f32(0x7F800000u);
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_tensor(ctx, &q, 0), "scale_value");
  q.scale_value = tu_f32(0x7FC00000u);
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_tensor(ctx, &q, 0), "scale_value");
  q.scale_value = 1e-40f; /* subnormal: its reciprocal overflows */
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_tensor(ctx, &q, 0), "scale_value");
  q = q0; q.gate_scale = base;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_per_token(ctx, &q, 0), "gate_scale");
  /* valid arguments on an offline context: not an argument error, a clear refusal */
  q = q0;
  CHECK(nvfp4moe_quantize_per_token(ctx, &q, 0) == NVFP4MOE_ERROR_NOT_SUPPORTED, "offline launch must be refused");
  CHECK(strstr(nvfp4moe_last_error(), "offline") != 0, "message: %s", nvfp4moe_last_error());
  CHECK(nvfp4moe_quantize_per_token(0, &q, 0) == NVFP4MOE_ERROR_INVALID_ARGUMENT, "null ctx");
  CHECK(nvfp4moe_quantize_per_token(ctx, 0, 0) == NVFP4MOE_ERROR_INVALID_ARGUMENT, "null args");

  memset(&g0, 0, sizeof g0);
  g0.groups = 2; g0.m_max = 8; g0.n = 64; g0.k = 64;
  g0.a = base; g0.a_sf = base + 1024; g0.b = base + 4096; g0.b_sf = base + 8192; g0.d = base + 16384;
  g0.masked_m = NVFP4MOE_HOSTPTR(mm);
  g = g0; g.k = 48;
  EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0), "args->k");
  EXPECT_ARG_ERROR(nvfp4moe_ref_grouped_gemm_nt_masked(&g), "args->k");
  g = g0; g.n = 60;
  EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0), "args->n");
  g = g0; g.m_max = 0;
  EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0), "args->m_max");
  g = g0; g.ldd = 32;
  EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0), "args->ldd");
  g = g0; g.ldd = 66;
  EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0), "args->ldd");
  g = g0; g.masked_m = 0;
  EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0), "masked_m");
  g = g0; g.b = base + 4100;
  EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0), "16-byte aligned");
  g = g0; g.d = 0;
  EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0), "args->d");
  g = g0; g.alpha = base + 2;
  EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0), "alpha");
  g = g0;
  CHECK(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0) == NVFP4MOE_ERROR_NOT_SUPPORTED, "offline GEMM refused");

  memset(&dq, 0, sizeof dq);
  dq.groups = 1; dq.rows = 1; dq.k = 24; dq.e2m1 = base; dq.sf = base; dq.scale = base; dq.out = base;
  EXPECT_ARG_ERROR(nvfp4moe_dequantize(ctx, &dq, 0), "args->k");
  dq.k = 32; dq.out_dtype = NVFP4MOE_DTYPE_FP16;
  EXPECT_ARG_ERROR(nvfp4moe_ref_dequantize(&dq), "out_dtype");
  dq.out_dtype = NVFP4MOE_DTYPE_F32; dq.scale_per_row = 2;
  EXPECT_ARG_ERROR(nvfp4moe_ref_dequantize(&dq), "args->scale_per_row = 2");
  dq.scale_per_row = 1; dq.sf = 0; /* a null pointer is named alone */
  EXPECT_ARG_ERROR(nvfp4moe_ref_dequantize(&dq), "args->sf is null");
  dq.sf = base; dq.rows = 0;
  EXPECT_ARG_ERROR(nvfp4moe_dequantize(ctx, &dq, 0), "args->rows = 0");

  memset(&sc, 0, sizeof sc);
  sc.groups = 1; sc.rows = 4; sc.k = 64; sc.src = base; sc.dst = base + 8;
  EXPECT_ARG_ERROR(nvfp4moe_sf_convert(ctx, &sc, 0), "overlap");
  sc.dst = base + 4096; sc.dst_layout = (nvfp4moe_sf_layout)7;
  EXPECT_ARG_ERROR(nvfp4moe_ref_sf_convert(&sc), "dst_layout");

  memset(&wq, 0, sizeof wq);
  wq.experts = 1; wq.n = 8; wq.k = 20; wq.w = base; wq.out_e2m1 = base; wq.out_sf = base; wq.out_scale = base;
  EXPECT_ARG_ERROR(nvfp4moe_quantize_weights(ctx, &wq, 0), "args->k");
  wq.k = 32; wq.out_scale = 0;
  EXPECT_ARG_ERROR(nvfp4moe_ref_quantize_weights(&wq), "out_scale");

  memset(&mw, 0, sizeof mw);
  mw.experts = 2; mw.hidden = 64; mw.inter = 48;
  mw.w13 = mw.w13_sf = mw.w13_gate_scale = mw.w13_up_scale = mw.w2 = mw.w2_sf = mw.w2_scale = base;
  memset(&ma, 0, sizeof ma);
  ma.m_max = 4; ma.x = base; ma.out = base; ma.masked_m = base; ma.workspace = base;
  ma.workspace_size = nvfp4moe_moe_workspace_size(&mw, 4);
  EXPECT_ARG_ERROR(nvfp4moe_moe_forward(ctx, &mw, &ma, 0), "inter");
  mw.inter = 64; ma.workspace_size = 10;
  EXPECT_ARG_ERROR(nvfp4moe_moe_forward(ctx, &mw, &ma, 0), "workspace_size");
  ma.workspace_size = nvfp4moe_moe_workspace_size_for(0, &mw, 4, 0) - 1;
  EXPECT_ARG_ERROR(nvfp4moe_ref_moe_forward(&mw, &ma), "this call needs");
  ma.workspace_size = nvfp4moe_moe_workspace_size(&mw, 4); ma.scaling = NVFP4MOE_ACT_PER_EXPERT;
  EXPECT_ARG_ERROR(nvfp4moe_ref_moe_forward(&mw, &ma), "input_scale1");
  ma.scaling = NVFP4MOE_ACT_PER_TOKEN; mw.w2_sf = 0;
  EXPECT_ARG_ERROR(nvfp4moe_moe_forward(ctx, &mw, &ma, 0), "weights->w2_sf is null");
  mw.w2_sf = base;
  mw.w2_sf = base + 4; /* device weights' alignment is checked before any kernel runs */
  EXPECT_ARG_ERROR(nvfp4moe_moe_forward(ctx, &mw, &ma, 0), "weights->w2_sf");
  mw.w2_sf = base; mw.w2_scale = base + 2;
  EXPECT_ARG_ERROR(nvfp4moe_moe_forward(ctx, &mw, &ma, 0), "weights->w2_scale");
  mw.w2_scale = base;
  /* shapes whose workspace would pass 2^63 bytes (or whose 2 I passes an int): sizes 0, the call an
     argument error, never a wrapped size that a small workspace would satisfy */
  {
    nvfp4moe_moe_weights big = mw;
    big.experts = 1 << 30; big.hidden = 1 << 30; big.inter = 1 << 30;
    CHECK(nvfp4moe_moe_workspace_size(&big, 1 << 30) == 0 && nvfp4moe_moe_workspace_size_for(0, &big, 1 << 30, 0) == 0,
          "sizes past 2^63 bytes give 0, not a wrapped value");
    /* (x null: were the shape checks gone, the call would fail on x, not read past a buffer) */
    ma.workspace_size = (size_t)-1; ma.x = 0;
    big.experts = 1 << 20; big.hidden = 1 << 20; big.inter = 1 << 20; ma.m_max = 1 << 20;
    CHECK(nvfp4moe_moe_workspace_size(&big, 1 << 20) == 0, "a workspace past 2^62 bytes gives 0");
    EXPECT_ARG_ERROR(nvfp4moe_ref_moe_forward(&big, &ma), "2^62");
    ma.m_max = 4;
    big.experts = 1; big.hidden = 64; big.inter = 0x20000020; /* 2 I past 2^30 */
    CHECK(nvfp4moe_moe_workspace_size(&big, 1) == 0, "2 * inter past NVFP4MOE_DIM_MAX gives 0");
    EXPECT_ARG_ERROR(nvfp4moe_moe_forward(ctx, &big, &ma, 0), "weights->inter = 536870944");
    big.inter = 64; big.hidden = 0x7FFFFFE0; /* a multiple of 32 past 2^30 */
    CHECK(nvfp4moe_moe_workspace_size_for(ctx, &big, 1, 0) == 0, "hidden past NVFP4MOE_DIM_MAX gives 0");
    EXPECT_ARG_ERROR(nvfp4moe_ref_moe_forward(&big, &ma), "weights->hidden = 2147483616");
    ma.workspace_size = nvfp4moe_moe_workspace_size(&mw, 4); ma.x = base;
  }
  { /* shape overflow in the remaining operations (2^30 each is within NVFP4MOE_DIM_MAX) */
    nvfp4moe_sf_convert_args sb;
    nvfp4moe_dequantize_args db;
    nvfp4moe_weight_quantize_args wb;
    memset(&sb, 0, sizeof sb);
    sb.groups = 1 << 30; sb.rows = 1 << 30; sb.k = 1 << 30; sb.src = base; sb.dst = base;
    EXPECT_ARG_ERROR(nvfp4moe_ref_sf_convert(&sb), "overflow");
    memset(&db, 0, sizeof db);
    db.groups = 1 << 30; db.rows = 1 << 30; db.k = 1 << 30; db.e2m1 = db.sf = db.scale = db.out = base;
    EXPECT_ARG_ERROR(nvfp4moe_ref_dequantize(&db), "overflow");
    memset(&wb, 0, sizeof wb);
    wb.experts = 1 << 30; wb.n = 1 << 30; wb.k = 1 << 30; wb.w = wb.out_e2m1 = wb.out_sf = wb.out_scale = base;
    EXPECT_ARG_ERROR(nvfp4moe_ref_quantize_weights(&wb), "overflow");
  }
  {
    nvfp4moe_gemm_args gb = g0;
    gb.n = 0x7FFFFFF8; /* a multiple of 8 whose n + 127 would pass INT_MAX */
    EXPECT_ARG_ERROR(nvfp4moe_ref_grouped_gemm_nt_masked(&gb), "args->n = 2147483640");
    gb = g0; gb.k = 0x7FFFFFE0;
    CHECK(nvfp4moe_gemm_workspace_size(ctx, &gb) == 0, "K past NVFP4MOE_DIM_MAX: workspace size 0");
    EXPECT_ARG_ERROR(nvfp4moe_grouped_gemm_nt_masked(ctx, &gb, 0), "args->k = 2147483616");
  }
  g = g0; g.a_sf = 0;
  EXPECT_ARG_ERROR(nvfp4moe_ref_grouped_gemm_nt_masked(&g), "args->a_sf is null");
  g = g0; g.masked_m = 0;
  EXPECT_ARG_ERROR(nvfp4moe_ref_grouped_gemm_nt_masked(&g), "a host array here");
  /* sizes of invalid shapes are 0, not a guess */
  CHECK(nvfp4moe_sf_bytes(5, 40, NVFP4MOE_SF_LAYOUT_128X4) == 0, "K % 16 != 0 gives 0");
  CHECK(nvfp4moe_sf_bytes(5, 64, (nvfp4moe_sf_layout)7) == 0, "an unknown layout gives 0");
  CHECK(nvfp4moe_sf_bytes(5, 64, NVFP4MOE_SF_LAYOUT_128X4) == 512 && nvfp4moe_sf_bytes(5, 64, NVFP4MOE_SF_LAYOUT_LINEAR) == 20,
        "sf_bytes of [5, 64]");
  nvfp4moe_destroy(ctx);
}

static void test_free(void* p, void* user) {
  (void)user;
  free(p);
}

static void test_context_errors_and_queries(void) {
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  nvfp4moe_info info;
  memset(&d, 0, sizeof d);
  d.logger.func = tu_logger;
  d.flags = NVFP4MOE_FLAG_OFFLINE;
  d.target = "compute_90";
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_ERROR_INVALID_ARGUMENT && ctx == 0, "bad target rejected");
  CHECK(strstr(nvfp4moe_last_error(), "desc->target") != 0, "message: %s", nvfp4moe_last_error());
  d.target = "sm_090a"; /* NVRTC refuses a leading zero; a long run of them was cut to the target buffer */
  EXPECT_ARG_ERROR(nvfp4moe_create(&d, &ctx), "desc->target");
  d.target = "sm_0000000000000000090a";
  EXPECT_ARG_ERROR(nvfp4moe_create(&d, &ctx), "desc->target");
  d.target = "sm_10000a";
  EXPECT_ARG_ERROR(nvfp4moe_create(&d, &ctx), "desc->target");
  d.target = "sm_75";
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_ERROR_UNSUPPORTED_GPU, "sm_75 rejected");
  d.target = "sm_990";
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_ERROR_NVRTC_TOO_OLD, "an arch NVRTC lacks: %s", nvfp4moe_last_error());
  d.target = "sm_90a";
  d.backend = (nvfp4moe_backend)9;
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_ERROR_INVALID_ARGUMENT, "bad backend");
  d.backend = NVFP4MOE_BACKEND_SM100;
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_ERROR_NOT_SUPPORTED, "sm100 backend on sm_90a refused");
  d.target = "sm_80";
  d.backend = NVFP4MOE_BACKEND_SM90;
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_ERROR_NOT_SUPPORTED, "sm90 backend on sm_80 refused");
  CHECK(strstr(nvfp4moe_last_error(), "desc->backend = sm90") != 0 && strstr(nvfp4moe_last_error(), "sm_90a") != 0,
        "message names the argument: %s", nvfp4moe_last_error());
  d.target = "sm_90a";
  d.backend = NVFP4MOE_BACKEND_AUTO;
  d.allocator.alloc_fn = 0;
  d.allocator.free_fn = test_free;
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_ERROR_INVALID_ARGUMENT, "half an allocator");
  d.allocator.free_fn = 0;
  d.flags |= 0x4000u;
  EXPECT_ARG_ERROR(nvfp4moe_create(&d, &ctx), "desc->flags");
  CHECK(ctx == 0, "no context on a bad flag");
  d.flags = NVFP4MOE_FLAG_OFFLINE | NVFP4MOE_FLAG_NO_DISK_CACHE;
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  if (ctx) {
    nvfp4moe_desc e = nvfp4moe_query_desc(ctx);
    CHECK(strcmp(e.target, "sm_90a") == 0, "query_desc target %s", e.target);
    CHECK(e.backend == NVFP4MOE_BACKEND_SM90, "effective backend %d (sm90 on sm_90a)", (int)e.backend);
    CHECK(e.logger.level == NVFP4MOE_LOG_WARN, "default log level filled in");
    CHECK(nvfp4moe_query_info(ctx, &info) == NVFP4MOE_SUCCESS && info.nvrtc_major >= 12, "info: nvrtc %d.%d",
          info.nvrtc_major, info.nvrtc_minor);
    CHECK(info.cache_dir[0] == 0, "NO_DISK_CACHE leaves no cache dir");
    EXPECT_ARG_ERROR(nvfp4moe_query_info(ctx, 0), "info is null");
    EXPECT_ARG_ERROR(nvfp4moe_query_info(0, &info), "ctx is null");
    nvfp4moe_destroy(ctx);
  }
  CHECK(nvfp4moe_version() == ((NVFP4MOE_VERSION_MAJOR << 16) | (NVFP4MOE_VERSION_MINOR << 8) | NVFP4MOE_VERSION_PATCH),
        "version");
  CHECK(strcmp(nvfp4moe_result_string(NVFP4MOE_SUCCESS), "success") == 0, "result string");
  CHECK(strcmp(nvfp4moe_result_string((nvfp4moe_result)99), "unknown result") == 0, "out of range result");
  CHECK(nvfp4moe_specialization_name(-1) == 0 && nvfp4moe_specialization_name(0) != 0, "specialisation names");
}

/* ---- GEMM tile heuristic and the sm90 geometry tables ------------------------------------ */

static int pick_varn(int backend, int expected_m, int m_max, int varn) {
  nvfp4moe_context* c = (nvfp4moe_context*)calloc(1, sizeof(nvfp4moe_context));
  nvfp4moe_gemm_args a;
  int s;
  memset(&a, 0, sizeof a);
  c->backend = backend; c->forced_gemm_spec = -1; c->varn = varn;
  a.expected_m = expected_m; a.m_max = m_max;
  s = nvfp4moe__portable_spec(c, &a);
  free(c);
  return s;
}
static int pick(int backend, int expected_m, int m_max) { return pick_varn(backend, expected_m, m_max, 1); }

/* Specialisation s is built from `file` with -D<n0>=<v0> and -D<n1>=<v1> as its first two
   defines (the values the host's launch tables hold for it). */
static void check_spec_defines(int s, const char* file, const char* n0, int v0, const char* n1, int v1) {
  const nvfp4moe__spec* sp = &nvfp4moe__specs[s];
  char d0[32], d1[32];
  snprintf(d0, sizeof d0, "-D%s=%d", n0, v0);
  snprintf(d1, sizeof d1, "-D%s=%d", n1, v1);
  CHECK(strcmp(sp->file, file) == 0 && sp->defines[0] && sp->defines[1] && strcmp(sp->defines[0], d0) == 0 &&
            strcmp(sp->defines[1], d1) == 0,
        "%s: compiled with %s %s, host table says %s %s", sp->name, sp->defines[0] ? sp->defines[0] : "-",
        sp->defines[0] && sp->defines[1] ? sp->defines[1] : "-", d0, d1);
}

static void test_gemm_tile_heuristic(void) {
  /* sm90: the tile covers expected_m + 2 ceil(sqrt(expected_m)), at most m_max; a token-producer tile's
     _VARN twin where 0 < expected_m < m_max (masked_m varies), the plain one where not */
  static const int sm90[][3] = {
      {0, 8, NVFP4MOE__SPEC_GEMM_T8},        {8, 8, NVFP4MOE__SPEC_GEMM_T8},
      {1, 256, NVFP4MOE__SPEC_GEMM_T8},      {4, 256, NVFP4MOE__SPEC_GEMM_T8},      /* 1 + 2 = 3, 4 + 4 = 8 */
      {5, 256, NVFP4MOE__SPEC_GEMM_T16},     {9, 256, NVFP4MOE__SPEC_GEMM_T16},     /* 5 + 6 = 11, 9 + 6 = 15 */
      {16, 16, NVFP4MOE__SPEC_GEMM_T16},     {10, 256, NVFP4MOE__SPEC_GEMM_WS32_VARN}, /* 10 + 8 = 18 */
      {16, 256, NVFP4MOE__SPEC_GEMM_WS32_VARN}, {32, 32, NVFP4MOE__SPEC_GEMM_WS32},  /* 16 + 8 = 24; capped at 32 */
      {22, 256, NVFP4MOE__SPEC_GEMM_WS32_VARN}, {23, 256, NVFP4MOE__SPEC_GEMM_WS48_VARN}, /* 22 + 10 = 32, 23 + 10 = 33 */
      {33, 256, NVFP4MOE__SPEC_GEMM_WS48_VARN}, {36, 256, NVFP4MOE__SPEC_GEMM_WS48_VARN}, /* 45, 48 */
      {37, 256, NVFP4MOE__SPEC_GEMM_WS64_VARN}, {64, 64, NVFP4MOE__SPEC_GEMM_WS64},  /* 37 + 14 = 51 */
      {33, 40, NVFP4MOE__SPEC_GEMM_WS48_VARN},  {50, 256, NVFP4MOE__SPEC_GEMM_WS128_VARN}, /* capped at 40; 50 + 16 */
      {0, 512, NVFP4MOE__SPEC_GEMM_WS128}, {4096, 4096, NVFP4MOE__SPEC_GEMM_WS128}, {5000, 4096, NVFP4MOE__SPEC_GEMM_WS128},
      {32, 33, NVFP4MOE__SPEC_GEMM_WS48_VARN}, {2147395601, 2147483647, NVFP4MOE__SPEC_GEMM_WS128_VARN}};
  /* sm80: expected_m itself (no margin) */
  static const int sm80[][3] = {
      {0, 8, NVFP4MOE__SPEC_GEMM_T8},   {16, 256, NVFP4MOE__SPEC_GEMM_T16}, {33, 256, NVFP4MOE__SPEC_GEMM_T48},
      {48, 48, NVFP4MOE__SPEC_GEMM_T48}, {49, 256, NVFP4MOE__SPEC_GEMM_P64}, {65, 256, NVFP4MOE__SPEC_GEMM_P128},
      {0, 100, NVFP4MOE__SPEC_GEMM_P128}};
  size_t i;
  for (i = 0; i < sizeof sm90 / sizeof sm90[0]; ++i) {
    int got = pick(NVFP4MOE_BACKEND_SM90, sm90[i][0], sm90[i][1]);
    CHECK(got == sm90[i][2], "sm90 expected_m %d m_max %d: spec %s, want %s", sm90[i][0], sm90[i][1],
          nvfp4moe__specs[got].name, nvfp4moe__specs[sm90[i][2]].name);
  }
  for (i = 0; i < sizeof sm80 / sizeof sm80[0]; ++i) {
    int got = pick(NVFP4MOE_BACKEND_PORTABLE, sm80[i][0], sm80[i][1]);
    CHECK(got == sm80[i][2], "sm80 expected_m %d m_max %d: spec %s, want %s", sm80[i][0], sm80[i][1],
          nvfp4moe__specs[got].name, nvfp4moe__specs[sm80[i][2]].name);
  }
  /* the host's copies of NVF_TOK and NVF_WG (grid, threads, shared memory) match the defines
     each wgmma specialisation is compiled with; the same for NVF_TOK and NVF_CWG of the
     token-producer ones */
  CHECK(sizeof nvfp4moe__wgmma_tok / sizeof nvfp4moe__wgmma_tok[0] ==
            (size_t)(NVFP4MOE__SPEC_GEMM_W64_WG4 - NVFP4MOE__SPEC_GEMM_W32 + 1) &&
        sizeof nvfp4moe__wgmma_wg == sizeof nvfp4moe__wgmma_tok, "wgmma tables: %d entries",
        (int)(sizeof nvfp4moe__wgmma_tok / sizeof nvfp4moe__wgmma_tok[0]));
  CHECK(sizeof nvfp4moe__ws_tok / sizeof nvfp4moe__ws_tok[0] ==
            (size_t)(NVFP4MOE__SPEC_GEMM_WS32_VARN - NVFP4MOE__SPEC_GEMM_WS128 + 1) &&
        sizeof nvfp4moe__ws_cwg == sizeof nvfp4moe__ws_tok && NVFP4MOE__SPEC_GEMM_WS32_VARN == NVFP4MOE__SPEC_GEMM_LAST,
        "token-producer tables: %d entries", (int)(sizeof nvfp4moe__ws_tok / sizeof nvfp4moe__ws_tok[0]));
  for (i = 0; i < sizeof nvfp4moe__wgmma_tok / sizeof nvfp4moe__wgmma_tok[0]; ++i)
    check_spec_defines(NVFP4MOE__SPEC_GEMM_W32 + (int)i, "gemm_wgmma.cu", "NVF_TOK", nvfp4moe__wgmma_tok[i], "NVF_WG",
                       nvfp4moe__wgmma_wg[i]);
  for (i = 0; i < sizeof nvfp4moe__ws_tok / sizeof nvfp4moe__ws_tok[0]; ++i)
    check_spec_defines(NVFP4MOE__SPEC_GEMM_WS128 + (int)i, "gemm_wgmma_ws.cu", "NVF_TOK", nvfp4moe__ws_tok[i], "NVF_CWG",
                       nvfp4moe__ws_cwg[i]);
  { /* the resident grid: the 32-token tiles, and on TILED weights the 48- and 64-token ones (the kernel's
       NVF_PERSIST default), or as a tuning define says */
    nvfp4moe_context* c = (nvfp4moe_context*)calloc(1, sizeof *c);
    unsigned tk;
    int tl, got;
    for (i = 0; i < sizeof nvfp4moe__ws_tok / sizeof nvfp4moe__ws_tok[0]; ++i)
      for (tl = 0; tl < 2; ++tl) {
        tk = (unsigned)nvfp4moe__ws_tok[i];
        got = nvfp4moe__ws_persist(c, tk, tl);
        CHECK(got == (tk == 32u || (tl && (tk == 48u || tk == 64u))), "resident grid for the %u-token tile (tiled %d): %d",
              tk, tl, got);
      }
    strcpy(c->tune_define, "-DNVF_PERSIST=0");
    CHECK(!nvfp4moe__ws_persist(c, 32u, 1), "-DNVF_PERSIST=0 keeps the 32-token tile off the resident grid");
    strcpy(c->tune_define, "-DNVF_PERSIST=1");
    CHECK(nvfp4moe__ws_persist(c, 128u, 0), "-DNVF_PERSIST=1 puts the 128-token tile on the resident grid");
    strcpy(c->tune_define, "-DNVF_PERSIST"); /* defined as 1 by the preprocessor, so resident too */
    CHECK(nvfp4moe__ws_persist(c, 48u, 1), "-DNVF_PERSIST puts the 48-token tile on the resident grid");
    strcpy(c->tune_define, "-DNVF_PERSIST_T32");
    CHECK(!nvfp4moe__ws_persist(c, 64u, 1), "-DNVF_PERSIST_T32 keeps the 64-token tile off the resident grid");
    CHECK(nvfp4moe__ws_persist(c, 32u, 1), "-DNVF_PERSIST_T32 keeps the 32-token tile on it");
    /* the gap-free unit table: groups + 1 ints beside the kernel's bytes and 1 KB, else the old numbering */
    c->smem_optin = 232448;
    c->tune_define[0] = '\0';
    CHECK(!nvfp4moe__ws_ptab(c, 32, 98304u, 32u) && !nvfp4moe__ws_ptab(c, 32, 224256u, 64u),
          "the old numbering by default on the 32- and 64-token tiles");
    CHECK(nvfp4moe__ws_ptab(c, 32, 98304u, 48u), "the table by default on the 48-token tile");
    strcpy(c->tune_define, "-DNVF_PCOMPACT");
    CHECK(nvfp4moe__ws_ptab(c, 32, 224256u, 64u), "the unit table of 32 groups fits beside 224256 bytes");
    CHECK(nvfp4moe__ws_ptab(c, 1791, 224256u, 64u), "1792 ints fit exactly (224256 + 7168 + 1024 = 232448)");
    CHECK(!nvfp4moe__ws_ptab(c, 1792, 224256u, 64u), "1793 ints do not fit");
    strcpy(c->tune_define, "-DNVF_PCOMPACT=0");
    CHECK(!nvfp4moe__ws_ptab(c, 32, 98304u, 48u) && !nvfp4moe__ws_persist(c, 48u, 1),
          "-DNVF_PCOMPACT=0 gives the old numbering, and the 48-token tile off the resident grid (0.5.4)");
    strcpy(c->tune_define, "-DNVF_PCOMPACT=1");
    CHECK(nvfp4moe__ws_ptab(c, 32, 98304u, 32u), "-DNVF_PCOMPACT=1 gives the table");
    CHECK(!nvfp4moe__ws_persist(c, 48u, 1), "-DNVF_PCOMPACT=1 keeps the 48-token tile off the resident grid");
    strcpy(c->tune_define, "-DNVF_PCOMPACT=2");
    CHECK(nvfp4moe__ws_ptab(c, 32, 98304u, 32u) && nvfp4moe__ws_persist(c, 48u, 1) && !nvfp4moe__ws_persist(c, 48u, 0) &&
              nvfp4moe__ws_persist(c, 64u, 1) && !nvfp4moe__ws_persist(c, 128u, 1),
          "-DNVF_PCOMPACT=2: the table, and the TILED 48-token tile resident too");
    strcpy(c->tune_define, "-DNVF_PCOMPACT");
    CHECK(!nvfp4moe__ws_ptab(c, 32, 98304u, 128u), "never the table on the 128-token tile");
    /* the module a tile runs: on TILED weights with K % 256 == 0 and K <= 1024 the 128-token tile's resident twin */
    c->tune_define[0] = '\0';
    c->k256 = 1;
    for (i = 0; i < 2; ++i) {
      const int sp = i ? NVFP4MOE__SPEC_GEMM_WS128_VARN : NVFP4MOE__SPEC_GEMM_WS128;
      const int res = i ? NVFP4MOE__SPEC_GEMM_K256_T128R_VARN : NVFP4MOE__SPEC_GEMM_K256_T128R;
      const int k256 = sp - NVFP4MOE__SPEC_GEMM_WS128 + NVFP4MOE__SPEC_GEMM_K256_FIRST;
      const int twin = sp - NVFP4MOE__SPEC_GEMM_P16 + NVFP4MOE__SPEC_GEMM_TILED_FIRST;
      CHECK(nvfp4moe__gemm_module(c, sp, 1, 768) == res && nvfp4moe__gemm_module(c, sp, 1, 1024) == res &&
                nvfp4moe__gemm_module(c, sp, 1, 256) == res,
            "%s: the resident twin at K 256, 768, 1024", nvfp4moe__specs[sp].name);
      CHECK(nvfp4moe__gemm_module(c, sp, 1, 1280) == k256 && nvfp4moe__gemm_module(c, sp, 1, 2048) == k256,
            "%s: the _k256 twin at K 1280 and 2048", nvfp4moe__specs[sp].name);
      CHECK(nvfp4moe__gemm_module(c, sp, 1, 736) == twin && nvfp4moe__gemm_module(c, sp, 0, 768) == sp,
            "%s: K 736 (not a multiple of 256) and ROW_MAJOR weights: not resident", nvfp4moe__specs[sp].name);
      strcpy(c->tune_define, "-DNVF_RES128=0");
      CHECK(nvfp4moe__gemm_module(c, sp, 1, 768) == k256, "%s: -DNVF_RES128=0 keeps the _k256 twin", nvfp4moe__specs[sp].name);
      strcpy(c->tune_define, "-DNVF_RES128=1");
      CHECK(nvfp4moe__gemm_module(c, sp, 1, 768) == res, "%s: -DNVF_RES128=1 keeps the twin", nvfp4moe__specs[sp].name);
      strcpy(c->tune_define, "-DNVF_PERSIST=0");
      CHECK(nvfp4moe__gemm_module(c, sp, 1, 768) == k256, "%s: -DNVF_PERSIST=0 keeps the _k256 twin", nvfp4moe__specs[sp].name);
      strcpy(c->tune_define, "-DNVF_RES128K=2048");
      CHECK(nvfp4moe__gemm_module(c, sp, 1, 2048) == res && nvfp4moe__gemm_module(c, sp, 1, 2304) == k256,
            "%s: -DNVF_RES128K=2048 moves the bound to K 2048", nvfp4moe__specs[sp].name);
      c->tune_define[0] = '\0';
      c->k256 = 0;
      CHECK(nvfp4moe__gemm_module(c, sp, 1, 768) == twin, "%s: $NVFP4MOE_K256=0 keeps the _tiled twin", nvfp4moe__specs[sp].name);
      c->k256 = 1;
    }
    for (i = NVFP4MOE__SPEC_GEMM_WS48; i <= NVFP4MOE__SPEC_GEMM_WS32; ++i)
      CHECK(nvfp4moe__gemm_module(c, (int)i, 1, 768) == (int)i - NVFP4MOE__SPEC_GEMM_WS128 + NVFP4MOE__SPEC_GEMM_K256_FIRST,
            "%s at K 768: its _k256 twin", nvfp4moe__specs[i].name);
    free(c);
  }
  /* $NVFP4MOE_VARN=0 (ctx->varn 0): the plain tile where the twin would run; the twins take the
     plain tiles' token workspace, byte for byte */
  for (i = 0; i < sizeof sm90 / sizeof sm90[0]; ++i) {
    int got = pick_varn(NVFP4MOE_BACKEND_SM90, sm90[i][0], sm90[i][1], 0), want = sm90[i][2];
    if (want >= NVFP4MOE__SPEC_GEMM_WS128_VARN) want -= NVFP4MOE__SPEC_GEMM_WS128_VARN - NVFP4MOE__SPEC_GEMM_WS128;
    CHECK(got == want, "sm90 varn off, expected_m %d m_max %d: spec %s, want %s", sm90[i][0], sm90[i][1],
          nvfp4moe__specs[got].name, nvfp4moe__specs[want].name);
  }
  for (i = 0; i < 4; ++i)
    CHECK(nvfp4moe__tok_ws_bytes(NVFP4MOE__SPEC_GEMM_WS128 + (int)i, 3, 77, 2880) ==
              nvfp4moe__tok_ws_bytes(NVFP4MOE__SPEC_GEMM_WS128_VARN + (int)i, 3, 77, 2880),
          "token workspace of %s", nvfp4moe__specs[NVFP4MOE__SPEC_GEMM_WS128_VARN + (int)i].name);
  /* the _VARN twins: the plain tile's defines, then -DNVF_VARN=1; the plain ones without it */
  for (i = 0; i < 4; ++i) {
    const nvfp4moe__spec* v = &nvfp4moe__specs[NVFP4MOE__SPEC_GEMM_WS128_VARN + (int)i];
    const nvfp4moe__spec* f = &nvfp4moe__specs[NVFP4MOE__SPEC_GEMM_WS128 + (int)i];
    CHECK(v->defines[2] && strcmp(v->defines[2], "-DNVF_VARN=1") == 0 && strstr(v->name, "_varn") &&
              !strstr(f->name, "_varn") && (!f->defines[2] || !strstr(f->defines[2], "VARN")),
          "%s / %s: the _VARN twin's defines", v->name, f->name);
  }
}

/* The GEMM token workspace: nvfp4moe__tok_ws_bytes by hand for three tiles, the query's zeros
   (null ctx or args, offline context, pre-pass off, a forced 32-token swap-AB tile), and the
   layer's bound, which must hold every tile's need for hidden and inter alike. */
static void test_gemm_workspace_size(void) {
  static const int ms[] = {1, 8, 33, 47, 48, 49, 127, 128, 129, 300, 1024}, ks[] = {32, 96, 128, 160, 768, 2048, 2880, 7168};
  nvfp4moe_context* c = (nvfp4moe_context*)calloc(1, sizeof(nvfp4moe_context));
  nvfp4moe_moe_weights w;
  nvfp4moe_gemm_args a;
  int s;
  size_t i, j;
  /* 128-token tile: 2 groups x 2 token tiles (200 rows) x 56 steps x 128 tokens x 256 bytes */
  CHECK(nvfp4moe__tok_ws_bytes(NVFP4MOE__SPEC_GEMM_WS128, 2, 200, 7168) == (size_t)2 * 2 * 56 * 128 * 256, "ws128 bytes");
  /* 48-token tile, 2 steps a slot: K 2080 has 17 steps -> 9 slots of 2 */
  CHECK(nvfp4moe__tok_ws_bytes(NVFP4MOE__SPEC_GEMM_WS48, 1, 33, 2080) == (size_t)9 * 2 * 48 * 256, "ws48 bytes");
  /* the 8-token swap-AB tile: every one of m_max token rows, 256 bytes a 128-K step (K 2080: 17 steps) */
  CHECK(nvfp4moe__tok_ws_bytes(NVFP4MOE__SPEC_GEMM_T8, 3, 33, 2080) == (size_t)3 * 33 * 17 * 256, "swap-AB bytes");
  memset(&a, 0, sizeof a);
  a.groups = 4; a.m_max = 256; a.n = 4096; a.k = 7168; a.expected_m = 128;
  CHECK(nvfp4moe_gemm_workspace_size(0, &a) == 0 && nvfp4moe_gemm_workspace_size(c, 0) == 0, "null ctx or args: 0");
  c->backend = NVFP4MOE_BACKEND_SM90; c->forced_gemm_spec = -1; c->token_prepass = 1;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == nvfp4moe__tok_ws_bytes(NVFP4MOE__SPEC_GEMM_WS128, 4, 256, 7168),
        "sm90, 128 tokens expected: the 128-token tile's bytes");
  a.expected_m = 4;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == 0, "8-token swap-AB tile, row-major: 0");
  a.b_layout = NVFP4MOE_WEIGHTS_TILED;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == (size_t)4 * 256 * 56 * 256, "8-token swap-AB tile, tiled, K 7168: its rows");
  a.k = 2048;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == 0, "8-token swap-AB tile, tiled, K 2048: 0");
  a.k = 4096;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == (size_t)4 * 256 * 32 * 256, "8-token swap-AB tile, tiled, K 4096");
  a.k = 7168; a.b_layout = NVFP4MOE_WEIGHTS_ROW_MAJOR;
  a.expected_m = 8; /* 8 + 2 x 3 = 14 -> T16 */
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == 0, "16-token swap-AB tile, row-major: 0");
  a.b_layout = NVFP4MOE_WEIGHTS_TILED;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == 0, "16-token swap-AB tile, tiled: 0");
  a.b_layout = NVFP4MOE_WEIGHTS_ROW_MAJOR; a.expected_m = 4;
  c->forced_gemm_spec = NVFP4MOE__SPEC_GEMM_T32;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == 0, "a forced 32-token swap-AB tile: 0");
  c->forced_gemm_spec = -1;
  a.expected_m = 128; c->token_prepass = 0;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == 0, "pre-pass off: 0");
  c->token_prepass = 1; c->offline = 1;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == 0, "offline: 0");
  c->offline = 0; c->backend = NVFP4MOE_BACKEND_SM100;
  CHECK(nvfp4moe_gemm_workspace_size(c, &a) == 0, "sm100, row-major weights: 0");
  { /* the layer's query on a context: the token region only where a tile uses it */
    nvfp4moe_moe_weights lw;
    nvfp4moe__moe_ws lay;
    size_t any, none;
    memset(&lw, 0, sizeof lw);
    lw.experts = 32; lw.hidden = 7168; lw.inter = 2048;
    lay = nvfp4moe__moe_layout(&lw, 1024);
    any = nvfp4moe_moe_workspace_size(&lw, 1024);
    none = nvfp4moe_moe_workspace_size_for(0, &lw, 1024, 33);
    CHECK(none == lay.tok && none < any, "host reference: no token region (%zu of %zu)", none, any);
    CHECK(nvfp4moe_moe_workspace_size_for(c, &lw, 1024, 33) == none, "sm100, row-major: no token region");
    c->backend = NVFP4MOE_BACKEND_SM90;
    CHECK(nvfp4moe_moe_workspace_size_for(c, &lw, 1024, 4) == none, "sm90, swap-AB decode (expected_m 4), row-major: none");
    lw.layout = NVFP4MOE_WEIGHTS_TILED;
    CHECK(nvfp4moe_moe_workspace_size_for(c, &lw, 1024, 4) == lay.tok + (size_t)32 * 1024 * 56 * 256,
          "sm90, swap-AB decode (expected_m 4), tiled: GEMM1's token rows (K 7168; GEMM2's K 2048 takes none)");
    lw.layout = NVFP4MOE_WEIGHTS_ROW_MAJOR;
    CHECK(nvfp4moe_moe_workspace_size_for(c, &lw, 1024, 33) ==
              lay.tok + nvfp4moe__tok_ws_bytes(NVFP4MOE__SPEC_GEMM_WS48, 32, 1024, 7168),
          "sm90, expected_m 33: the 48-token tile's GEMM1 tokens (the larger GEMM)");
    CHECK(nvfp4moe_moe_workspace_size_for(c, &lw, 1024, 33) <= any, "never above the any-call size");
    CHECK(nvfp4moe_moe_workspace_size_for(c, &lw, 1024, 0) ==
              lay.tok + nvfp4moe__tok_ws_bytes(NVFP4MOE__SPEC_GEMM_WS128, 32, 1024, 7168),
          "expected_m 0 (= m_max): the 128-token tile, less than the 48-token tile's (not monotonic)");
    CHECK(nvfp4moe_moe_workspace_size_for(c, &lw, 1024, -1) == nvfp4moe_moe_workspace_size_for(c, &lw, 1024, 33) &&
              nvfp4moe_moe_workspace_size_for(c, &lw, 1024, -1) <= any,
          "expected_m -1: the most any expected_m needs (the 48-token tile's here)");
    { /* every expected_m fits the -1 size, for either weight layout */
      int em, worse = 0, lay2;
      for (lay2 = 0; lay2 < 2; ++lay2) {
        size_t most;
        lw.layout = lay2 ? NVFP4MOE_WEIGHTS_TILED : NVFP4MOE_WEIGHTS_ROW_MAJOR;
        most = nvfp4moe_moe_workspace_size_for(c, &lw, 1024, -1);
        for (em = 0; em <= 1100; ++em) worse += nvfp4moe_moe_workspace_size_for(c, &lw, 1024, em) > most;
      }
      lw.layout = NVFP4MOE_WEIGHTS_ROW_MAJOR;
      CHECK(worse == 0, "%d expected_m need more than the -1 size", worse);
    }
    lw.hidden = 2048; lw.inter = 7168; /* GEMM2 has the longer K: its tokens set the region */
    lay = nvfp4moe__moe_layout(&lw, 1024);
    CHECK(nvfp4moe_moe_workspace_size_for(c, &lw, 1024, 33) ==
              lay.tok + nvfp4moe__tok_ws_bytes(NVFP4MOE__SPEC_GEMM_WS48, 32, 1024, 7168),
          "inter > hidden: GEMM2's tokens");
    { /* the forward asks for exactly that: one byte less is refused before anything runs */
      nvfp4moe_moe_args la;
      unsigned char dummy[512];
      nvfp4moe_devptr p = (NVFP4MOE_HOSTPTR(dummy) + 255) / 256 * 256;
      lw.w13 = lw.w13_sf = lw.w13_gate_scale = lw.w13_up_scale = lw.w2 = lw.w2_sf = lw.w2_scale = p;
      memset(&la, 0, sizeof la);
      la.m_max = 1024; la.expected_m = 33; la.x = la.out = la.masked_m = la.workspace = p;
      la.workspace_size = nvfp4moe_moe_workspace_size_for(c, &lw, 1024, 33) - 1;
      EXPECT_ARG_ERROR(nvfp4moe_moe_forward(c, &lw, &la, 0), "this call needs");
      la.workspace_size = nvfp4moe_moe_workspace_size_for(0, &lw, 1024, 33);
      EXPECT_ARG_ERROR(nvfp4moe_moe_forward(c, &lw, &la, 0), "this call needs");
    }
    CHECK(nvfp4moe_moe_workspace_size_for(c, &lw, 0, 33) == 0 && nvfp4moe_moe_workspace_size_for(c, 0, 64, 33) == 0,
          "invalid arguments: 0");
  }
  free(c);
  memset(&w, 0, sizeof w);
  w.experts = 3;
  for (i = 0; i < sizeof ms / sizeof ms[0]; ++i)
    for (j = 0; j < sizeof ks / sizeof ks[0]; ++j) {
      nvfp4moe__moe_ws ws;
      w.hidden = ks[j]; w.inter = 32;
      ws = nvfp4moe__moe_layout(&w, ms[i]);
      for (s = NVFP4MOE__SPEC_GEMM_P16; s <= NVFP4MOE__SPEC_GEMM_LAST; ++s) {
        size_t need = nvfp4moe__spec_takes_ws(s, NVFP4MOE_WEIGHTS_TILED, ks[j]) || nvfp4moe__spec_takes_ws(s, NVFP4MOE_WEIGHTS_ROW_MAJOR, ks[j])
                          ? nvfp4moe__tok_ws_bytes(s, 3, ms[i], ks[j]) : 0;
        CHECK(need <= ws.tok_bytes && ws.tok % 256 == 0 && ws.tok + ws.tok_bytes <= ws.total,
              "layer bound: %s m_max %d K %d needs %zu, region %zu", nvfp4moe__specs[s].name, ms[i], ks[j], need,
              ws.tok_bytes);
      }
    }
}

/* TILED weights: the reference relayout (bytes moved, codes re-encoded) against the layout written out element by element
   (16-row tiles of 1 KB per 128-K step), its inverse, the reference GEMM reading either layout
   (same bits), the argument checks, and the twin specialisations (same tiles, one define more). */
/* Whether spec t is spec b's twin: b's name with ins before a trailing "_tiled" (else at the end), b's
   file and defines, then extra as its last define. */
static int is_twin(const nvfp4moe__spec* b, const nvfp4moe__spec* t, const char* ins, const char* extra) {
  char name[64];
  size_t n = strlen(b->name);
  int j;
  if (n >= 6 && strcmp(b->name + n - 6, "_tiled") == 0) snprintf(name, sizeof name, "%.*s%s_tiled", (int)(n - 6), b->name, ins);
  else snprintf(name, sizeof name, "%s%s", b->name, ins);
  if (strcmp(t->name, name) != 0 || strcmp(t->file, b->file) != 0) return 0;
  const int most = (int)(sizeof b->defines / sizeof b->defines[0]);
  for (j = 0; j < most && b->defines[j]; ++j)
    if (!t->defines[j] || strcmp(t->defines[j], b->defines[j]) != 0) return 0;
  return j < most && t->defines[j] && strcmp(t->defines[j], extra) == 0 && (j == most - 1 || !t->defines[j + 1]);
}

static void test_weight_layouts(void) {
  enum { G = 2, N = 48, K = 384, KMAX = 2880 };
  /* (t holds the largest TILED matrix: KMAX rounded up to whole 128-K steps) */
  static unsigned char w[G * N * KMAX / 2], t[G * N * ((KMAX + 127) / 128) * 64], back[G * N * KMAX / 2];
  static const int ks[] = {K, 96, 160, 2880, 2080};
  nvfp4moe_weights_relayout_args a;
  long long wrong = 0, diff = 0;
  int g, n, k, s, ki;
  size_t i;
  memset(&a, 0, sizeof a);
  for (ki = 0; ki < (int)(sizeof ks / sizeof ks[0]); ++ki) {
    /* the layout written out element by element: tile, step, row in tile; a row takes ceil(K/128) x 64
       bytes, the bytes past K/2 in a last partial step zero */
    const int kk = ks[ki], steps = (kk + 127) / 128;
    const size_t nt = (size_t)G * N * steps * 64;
    size_t covered = 0;
    CHECK(nvfp4moe_weight_bytes(N, kk, NVFP4MOE_WEIGHTS_TILED) * G == nt &&
              nvfp4moe_weight_bytes(N, kk, NVFP4MOE_WEIGHTS_ROW_MAJOR) == (size_t)N * kk / 2,
          "K %d: nvfp4moe_weight_bytes", kk);
    for (i = 0; i < (size_t)G * N * kk / 2; ++i) w[i] = (unsigned char)tu_rand();
    memset(t, 0xEE, sizeof t);
    a.groups = G; a.n = N; a.k = kk; a.src = NVFP4MOE_HOSTPTR(w); a.dst = NVFP4MOE_HOSTPTR(t);
    a.dst_layout = NVFP4MOE_WEIGHTS_TILED;
    CHECK(nvfp4moe_ref_weights_relayout(&a) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
    wrong = 0;
    for (g = 0; g < G; ++g)
      for (n = 0; n < N; ++n)
        for (k = 0; k < steps * 128; k += 8) { /* the 4-byte word of elements k .. k + 7 of row n */
          static const int mag[4] = {9, 6, 3, 0}, sgn[4] = {15, 12, 14, 13}; /* the codes' encoding */
          size_t tile = (size_t)g * (N / 16) + (size_t)(n / 16), step = (size_t)(k / 128);
          size_t at = (tile * steps + step) * 1024 + (size_t)(n % 16) * 64 + (size_t)(k % 128) / 2;
          unsigned word = (unsigned)t[at] | (unsigned)t[at + 1] << 8 | (unsigned)t[at + 2] << 16 | (unsigned)t[at + 3] << 24;
          int e;
          for (e = 0; e < 8; ++e) {
            unsigned code = ((word >> (mag[e % 4] + 16 * (e / 4))) & 7u) | ((word >> (sgn[e % 4] + 16 * (e / 4))) & 1u) << 3;
            unsigned want = 0;
            if (k < kk) {
              unsigned char byte = w[((size_t)g * N + (size_t)n) * (kk / 2) + (size_t)(k + e) / 2];
              want = e % 2 ? byte >> 4 : byte & 15u;
            }
            wrong += code != want;
          }
          covered += 4;
        }
    for (i = nt; i < sizeof t; ++i) wrong += t[i] != 0xEE;
    CHECK(wrong == 0 && covered == nt, "K %d: %lld codes not where the TILED layout puts them", kk, wrong);
    { /* the reference GEMM on both layouts: the same bits, with the padding poisoned (never read) */
      enum { M = 3 };
      static unsigned char aq[G * M * KMAX / 2], asf[G * 512 * 45], bsf[G * 512 * 45];
      unsigned short d0[G * M * N], d1[G * M * N];
      int mm[G] = {3, 2};
      nvfp4moe_gemm_args gm;
      size_t sfa = nvfp4moe_sf_bytes(M, kk, NVFP4MOE_SF_LAYOUT_128X4), sfb = nvfp4moe_sf_bytes(N, kk, NVFP4MOE_SF_LAYOUT_128X4);
      CHECK(G * sfa <= sizeof asf && G * sfb <= sizeof bsf, "test buffers");
      for (g = 0; g < G; ++g)
        for (n = 0; n < N; ++n)
          for (k = kk; k < steps * 128; k += 2) t[((size_t)g * (N / 16) + (size_t)(n / 16)) * steps * 1024 +
                                                    (size_t)(k / 128) * 1024 + (size_t)(n % 16) * 64 + (size_t)(k % 128) / 2] = 0x77;
      for (i = 0; i < sizeof aq; ++i) aq[i] = (unsigned char)tu_rand();
      for (i = 0; i < sizeof asf; ++i) asf[i] = (unsigned char)(0x20 + tu_rand() % 0x30);
      for (i = 0; i < sizeof bsf; ++i) bsf[i] = (unsigned char)(0x20 + tu_rand() % 0x30);
      memset(&gm, 0, sizeof gm);
      gm.groups = G; gm.m_max = M; gm.n = N; gm.k = kk;
      gm.a = NVFP4MOE_HOSTPTR(aq); gm.a_sf = NVFP4MOE_HOSTPTR(asf); gm.b = NVFP4MOE_HOSTPTR(w); gm.b_sf = NVFP4MOE_HOSTPTR(bsf);
      gm.masked_m = NVFP4MOE_HOSTPTR(mm); gm.d = NVFP4MOE_HOSTPTR(d0);
      memset(d0, 0xAB, sizeof d0);
      memset(d1, 0xAB, sizeof d1);
      CHECK(nvfp4moe_ref_grouped_gemm_nt_masked(&gm) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
      gm.b = NVFP4MOE_HOSTPTR(t); gm.b_layout = NVFP4MOE_WEIGHTS_TILED; gm.d = NVFP4MOE_HOSTPTR(d1);
      CHECK(nvfp4moe_ref_grouped_gemm_nt_masked(&gm) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
      diff = 0;
      for (i = 0; i < (size_t)G * M * N; ++i) diff += d0[i] != d1[i];
      CHECK(diff == 0, "K %d: %lld outputs differ between the layouts", kk, diff);
    }
    a.src = NVFP4MOE_HOSTPTR(t); a.dst = NVFP4MOE_HOSTPTR(back); a.dst_layout = NVFP4MOE_WEIGHTS_ROW_MAJOR;
    CHECK(nvfp4moe_ref_weights_relayout(&a) == NVFP4MOE_SUCCESS && memcmp(back, w, (size_t)G * N * kk / 2) == 0,
          "K %d: round trip", kk);
  }
  CHECK(nvfp4moe_weight_bytes(40, 256, NVFP4MOE_WEIGHTS_TILED) == 0 && nvfp4moe_weight_bytes(48, 48, NVFP4MOE_WEIGHTS_TILED) == 0 &&
            nvfp4moe_weight_bytes(0, 256, NVFP4MOE_WEIGHTS_ROW_MAJOR) == 0 &&
            nvfp4moe_weight_bytes(48, 256, (nvfp4moe_weight_layout)2) == 0,
        "nvfp4moe_weight_bytes: 0 for N %% 16 (TILED), K %% 32, N 0, an unknown layout");
  /* from here on K = 384 */
  for (i = 0; i < (size_t)G * N * K / 2; ++i) w[i] = (unsigned char)tu_rand();
  a.groups = G; a.n = N; a.k = K; a.src = NVFP4MOE_HOSTPTR(w); a.dst = NVFP4MOE_HOSTPTR(t);
  a.dst_layout = NVFP4MOE_WEIGHTS_TILED;
  CHECK(nvfp4moe_ref_weights_relayout(&a) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  a.src = NVFP4MOE_HOSTPTR(t); a.dst = NVFP4MOE_HOSTPTR(back); a.dst_layout = NVFP4MOE_WEIGHTS_ROW_MAJOR;
  a.k = 48;
  EXPECT_ARG_ERROR(nvfp4moe_ref_weights_relayout(&a), "args->k");
  a.k = K; a.n = 40;
  EXPECT_ARG_ERROR(nvfp4moe_ref_weights_relayout(&a), "args->n");
  a.n = N; a.dst = NVFP4MOE_HOSTPTR(t) + 100;
  EXPECT_ARG_ERROR(nvfp4moe_ref_weights_relayout(&a), "overlap");
  a.dst = NVFP4MOE_HOSTPTR(back); a.dst_layout = (nvfp4moe_weight_layout)2;
  EXPECT_ARG_ERROR(nvfp4moe_ref_weights_relayout(&a), "args->dst_layout");
  { /* K 2880: a TILED source takes G N 1472 bytes, so a row-major destination starting G N 1440 + 16 bytes in
       overlaps it (and stays inside buf if the check ever let it through) */
    unsigned char* buf = (unsigned char*)calloc((size_t)G * N * (1472 + 1440) + 32, 1);
    CHECK(buf != 0, "malloc");
    if (buf) {
      a.k = 2880; a.dst_layout = NVFP4MOE_WEIGHTS_ROW_MAJOR;
      a.src = NVFP4MOE_HOSTPTR(buf); a.dst = NVFP4MOE_HOSTPTR(buf) + (size_t)G * N * 1440 + 16;
      EXPECT_ARG_ERROR(nvfp4moe_ref_weights_relayout(&a), "overlap");
      a.dst = NVFP4MOE_HOSTPTR(buf) + (size_t)G * N * 1472; /* just past the TILED source: allowed */
      CHECK(nvfp4moe_ref_weights_relayout(&a) == NVFP4MOE_SUCCESS, "adjacent buffers: %s", nvfp4moe_last_error());
      free(buf);
    }
    a.k = K;
  }

  { /* the reference GEMM's layout checks */
    nvfp4moe_gemm_args gm;
    static unsigned char d[G * 4 * N * 2];
    int mm[G] = {3, 2};
    memset(&gm, 0, sizeof gm);
    gm.groups = G; gm.m_max = 3; gm.n = 40; gm.k = K; /* N a multiple of 8, not of 16 */
    gm.a = gm.a_sf = gm.b = gm.b_sf = NVFP4MOE_HOSTPTR(w); gm.masked_m = NVFP4MOE_HOSTPTR(mm); gm.d = NVFP4MOE_HOSTPTR(d);
    gm.b_layout = NVFP4MOE_WEIGHTS_TILED;
    EXPECT_ARG_ERROR(nvfp4moe_ref_grouped_gemm_nt_masked(&gm), "args->b_layout");
    gm.n = N; gm.b_layout = (nvfp4moe_weight_layout)3;
    EXPECT_ARG_ERROR(nvfp4moe_ref_grouped_gemm_nt_masked(&gm), "args->b_layout");
  }
  /* twins: the same name plus "_tiled", file and defines, and -DNVF_WTILED=1 */
  for (s = NVFP4MOE__SPEC_GEMM_P16; s <= NVFP4MOE__SPEC_GEMM_LAST; ++s) {
    const nvfp4moe__spec* b = &nvfp4moe__specs[s];
    const nvfp4moe__spec* tw = &nvfp4moe__specs[s - NVFP4MOE__SPEC_GEMM_P16 + NVFP4MOE__SPEC_GEMM_TILED_FIRST];
    CHECK(is_twin(b, tw, "_tiled", "-DNVF_WTILED=1") && tw->needs == b->needs, "twin of %s: %s", b->name, tw->name);
  }
  /* the K % 256 twins of the TILED token-producer tiles: the TILED twin's name with "_k256" before
     "_tiled", its file and defines, and -DNVF_WKFULL=1 */
  for (s = NVFP4MOE__SPEC_GEMM_WS128; s <= NVFP4MOE__SPEC_GEMM_WS32_VARN; ++s) {
    const nvfp4moe__spec* tw = &nvfp4moe__specs[s - NVFP4MOE__SPEC_GEMM_P16 + NVFP4MOE__SPEC_GEMM_TILED_FIRST];
    const nvfp4moe__spec* kw = &nvfp4moe__specs[s - NVFP4MOE__SPEC_GEMM_WS128 + NVFP4MOE__SPEC_GEMM_K256_FIRST];
    CHECK(is_twin(tw, kw, "_k256", "-DNVF_WKFULL=1") && kw->needs == tw->needs, "K %% 256 twin of %s: %s", tw->name,
          kw->name);
  }
  { /* ... and of the TILED 8-token swap-AB tile, after them */
    const nvfp4moe__spec* tw = &nvfp4moe__specs[NVFP4MOE__SPEC_GEMM_T8 - NVFP4MOE__SPEC_GEMM_P16 + NVFP4MOE__SPEC_GEMM_TILED_FIRST];
    const nvfp4moe__spec* kw = &nvfp4moe__specs[NVFP4MOE__SPEC_GEMM_K256_T8];
    CHECK(is_twin(tw, kw, "_k256", "-DNVF_WKFULL=1") && kw->needs == NVFP4MOE__NEEDS_SM90A && kw->kernels[2] &&
              strcmp(kw->kernels[2], tw->kernels[2]) == 0,
          "K %% 256 twin of gemm_swapab_t8: %s", kw->name);
  }
  /* the layer's quantizers for GEMMs on TILED weights: the _img ones with -DNVF_QIMG_TILED=1 (their tokens
     widened to F16, as the TILED GEMM modules read them; a tuning define of NVF_F16 sets both) */
  for (s = 0; s < 2; ++s) {
    const nvfp4moe__spec* b = &nvfp4moe__specs[NVFP4MOE__SPEC_QUANTIZE_IMG + s];
    const nvfp4moe__spec* f = &nvfp4moe__specs[NVFP4MOE__SPEC_QUANTIZE_IMG_F16 + s];
    CHECK(is_twin(b, f, "_f16", "-DNVF_QIMG_TILED=1") && strcmp(f->kernels[0], b->kernels[0]) == 0 && !f->kernels[1] &&
              f->fmad_off == b->fmad_off,
          "F16 twin of %s: %s", b->name, f->name);
  }
  /* the resident twins of the 128-token tile's K % 256 twins (K <= 1024): "_res" before "_tiled", -DNVF_PERSIST=1 */
  for (s = 0; s < 2; ++s) {
    const int base = s ? NVFP4MOE__SPEC_GEMM_WS128_VARN : NVFP4MOE__SPEC_GEMM_WS128;
    const nvfp4moe__spec* kw = &nvfp4moe__specs[base - NVFP4MOE__SPEC_GEMM_WS128 + NVFP4MOE__SPEC_GEMM_K256_FIRST];
    const nvfp4moe__spec* rw = &nvfp4moe__specs[NVFP4MOE__SPEC_GEMM_K256_T128R + s];
    CHECK(is_twin(kw, rw, "_res", "-DNVF_PERSIST=1") && rw->needs == kw->needs && strcmp(rw->kernels[0], kw->kernels[0]) == 0,
          "resident twin of %s: %s", kw->name, rw->name);
  }
  CHECK(NVFP4MOE__SPEC_COUNT == NVFP4MOE__SPEC_GEMM_K256_T128R_VARN + 1 &&
        NVFP4MOE__SPEC_GEMM_K256_T128R == NVFP4MOE__SPEC_GEMM_K256_T8 + 1 &&
        NVFP4MOE__SPEC_GEMM_K256_T8 == NVFP4MOE__SPEC_GEMM_K256_FIRST + NVFP4MOE__SPEC_GEMM_WS32_VARN - NVFP4MOE__SPEC_GEMM_WS128 + 1 &&
            NVFP4MOE__SPEC_GEMM_K256_FIRST ==
                NVFP4MOE__SPEC_GEMM_TILED_FIRST + NVFP4MOE__SPEC_GEMM_LAST - NVFP4MOE__SPEC_GEMM_P16 + 1,
        "spec count %d", (int)NVFP4MOE__SPEC_COUNT);
  CHECK(nvfp4moe_preferred_weight_layout(0, 256, 1024) == NVFP4MOE_WEIGHTS_ROW_MAJOR, "null ctx: row-major");
  { /* offline contexts: the preferred layout by backend, relayout refused, twin names force their
       configuration */
    nvfp4moe_context *c90 = offline_ctx("sm_90a"), *c80 = offline_ctx("sm_80"), *ct = 0;
    nvfp4moe_desc d;
    CHECK(c90 && c80, "offline contexts: %s", nvfp4moe_last_error());
    if (c90 && c80) {
      CHECK(nvfp4moe_preferred_weight_layout(c90, 256, 1024) ==
                (c90->backend == NVFP4MOE_BACKEND_SM90 ? NVFP4MOE_WEIGHTS_TILED : NVFP4MOE_WEIGHTS_ROW_MAJOR),
            "sm_90a: TILED on the sm90 backend");
      CHECK(nvfp4moe_preferred_weight_layout(c90, 264, 1024) == NVFP4MOE_WEIGHTS_ROW_MAJOR &&
                nvfp4moe_preferred_weight_layout(c90, 256, 1040) == NVFP4MOE_WEIGHTS_ROW_MAJOR,
            "shapes TILED cannot hold (N %% 16, K %% 32): row-major");
      CHECK(nvfp4moe_preferred_weight_layout(c90, 5760, 2880) ==
                (c90->backend == NVFP4MOE_BACKEND_SM90 ? NVFP4MOE_WEIGHTS_TILED : NVFP4MOE_WEIGHTS_ROW_MAJOR),
            "sm_90a, K 2880 (a padded last step): TILED");
      CHECK(nvfp4moe_preferred_weight_layout(c80, 256, 1024) == NVFP4MOE_WEIGHTS_ROW_MAJOR, "sm_80: row-major");
      a.groups = G; a.n = N; a.k = K; a.src = 4096; a.dst = 1 << 20; a.dst_layout = NVFP4MOE_WEIGHTS_TILED;
      CHECK(nvfp4moe_weights_relayout(c90, &a, 0) == NVFP4MOE_ERROR_NOT_SUPPORTED, "offline relayout refused");
      a.k = 80;
      EXPECT_ARG_ERROR(nvfp4moe_weights_relayout(c90, &a, 0), "args->k");
    }
    memset(&d, 0, sizeof d);
    d.flags = NVFP4MOE_FLAG_OFFLINE | NVFP4MOE_FLAG_NO_DISK_CACHE;
    d.target = "sm_90a";
    d.logger.func = tu_logger;
    { /* a twin's name forces its tile configuration */
      static const struct { const char* name; int spec; } forced[] = {
          {"gemm_swapab_t16_tiled", NVFP4MOE__SPEC_GEMM_T16},
          {"gemm_sm90_ws_t32_wg4_varn_k256_tiled", NVFP4MOE__SPEC_GEMM_WS32_VARN},
          {"gemm_swapab_t8_k256_tiled", NVFP4MOE__SPEC_GEMM_T8},
          {"gemm_sm90_ws_t128_wg3_k256_res_tiled", NVFP4MOE__SPEC_GEMM_WS128},
          {"gemm_sm90_ws_t128_wg3_varn_k256_res_tiled", NVFP4MOE__SPEC_GEMM_WS128_VARN}};
      size_t fi;
      for (fi = 0; fi < sizeof forced / sizeof forced[0]; ++fi) {
        ct = 0;
        setenv("NVFP4MOE_GEMM_CONFIG", forced[fi].name, 1);
        CHECK(nvfp4moe_create(&d, &ct) == NVFP4MOE_SUCCESS && ct && ct->forced_gemm_spec == forced[fi].spec,
              "NVFP4MOE_GEMM_CONFIG=%s forces %s", forced[fi].name, nvfp4moe__specs[forced[fi].spec].name);
        unsetenv("NVFP4MOE_GEMM_CONFIG");
        nvfp4moe_destroy(ct);
      }
    }
    { /* which of the expert layer's quantizers take a programmatic dependent launch ($NVFP4MOE_LAYER_PDL; unset
         or not a mask 0-3: -1, the layer's default), and the launch decision under each context setting */
      static const struct { const char* v; int mask; } lp[] = {{0, -1}, {"3", 3}, {"0", 0}, {"2", 2}, {"7", -1}, {"1x", -1}};
      size_t li;
      nvfp4moe_context* c = (nvfp4moe_context*)calloc(1, sizeof *c);
      for (li = 0; li < sizeof lp / sizeof lp[0]; ++li) {
        ct = 0;
        if (lp[li].v) setenv("NVFP4MOE_LAYER_PDL", lp[li].v, 1);
        else unsetenv("NVFP4MOE_LAYER_PDL"); /* (a caller's A/B setting must not decide the unset case) */
        CHECK(nvfp4moe_create(&d, &ct) == NVFP4MOE_SUCCESS && ct && ct->layer_pdl == lp[li].mask,
              "NVFP4MOE_LAYER_PDL=%s: mask %d, got %d", lp[li].v ? lp[li].v : "(unset)", lp[li].mask, ct ? ct->layer_pdl : -1);
        unsetenv("NVFP4MOE_LAYER_PDL");
        nvfp4moe_destroy(ct);
      }
      CHECK(c != 0, "calloc");
      if (c) {
        c->pdl = 1; /* the default: the quantization kernels */
        CHECK(nvfp4moe__pdl_on(c, NVFP4MOE__SPEC_QUANTIZE, 0) && !nvfp4moe__pdl_on(c, NVFP4MOE__SPEC_QUANTIZE, -1) &&
                  !nvfp4moe__pdl_on(c, NVFP4MOE__SPEC_GEMM_WS128, 0) && nvfp4moe__pdl_on(c, NVFP4MOE__SPEC_GEMM_WS128, 1),
              "pdl 1: quantizers unless left out (-1), GEMMs only where written for it (1)");
        c->pdl = 2; /* $NVFP4MOE_PDL=1: every kernel, the left-out quantizers too */
        CHECK(nvfp4moe__pdl_on(c, NVFP4MOE__SPEC_QUANTIZE, -1) && nvfp4moe__pdl_on(c, NVFP4MOE__SPEC_GEMM_WS128, 0),
              "pdl 2: every launch");
        c->pdl = 0;
        CHECK(!nvfp4moe__pdl_on(c, NVFP4MOE__SPEC_QUANTIZE, 0) && !nvfp4moe__pdl_on(c, NVFP4MOE__SPEC_GEMM_WS128, 1),
              "pdl 0: none");
        /* the layer's quantizers: unset, the SiLU one not early after a token-producer GEMM1; a mask as it says */
        c->layer_pdl = -1;
        CHECK(nvfp4moe__layer_quant_pdl(c, 0, 1) == 0 && nvfp4moe__layer_quant_pdl(c, 0, 0) == 0 &&
                  nvfp4moe__layer_quant_pdl(c, 1, 1) == -1 && nvfp4moe__layer_quant_pdl(c, 1, 0) == 0,
              "layer default: input quantizer early, SiLU quantizer early only after a swap-AB GEMM1");
        c->layer_pdl = 3;
        CHECK(nvfp4moe__layer_quant_pdl(c, 0, 1) == 0 && nvfp4moe__layer_quant_pdl(c, 1, 1) == 0, "mask 3: both (0.5.6)");
        c->layer_pdl = 2;
        CHECK(nvfp4moe__layer_quant_pdl(c, 0, 0) == -1 && nvfp4moe__layer_quant_pdl(c, 1, 1) == 0, "mask 2: the SiLU one");
        c->layer_pdl = 0;
        CHECK(nvfp4moe__layer_quant_pdl(c, 0, 0) == -1 && nvfp4moe__layer_quant_pdl(c, 1, 0) == -1, "mask 0: neither");
        free(c);
      }
    }
    nvfp4moe_destroy(c90);
    nvfp4moe_destroy(c80);
  }
}

int main(void) {
  tu_seed_from_env();
  RUN(test_e2m1_decode_all_codes);
  RUN(test_e2m1_cut_points_and_ties);
  RUN(test_e2m1_fast_rounding_formula);
  RUN(test_e4m3_decode_all_bytes);
  RUN(test_e4m3_rounding_and_saturation);
  RUN(test_block_hand_vectors);
  RUN(test_4over6_hand_vectors);
  RUN(test_per_token_rows);
  RUN(test_given_scale_nonfinite_block);
  RUN(test_roundtrip_magnitude);
  RUN(test_sf_layouts);
  RUN(test_sha256_vectors);
  RUN(test_exp_and_silu);
  RUN(test_bf16_rounding);
  RUN(test_ref_gemm_hand);
  RUN(test_argument_checks);
  RUN(test_log_level_env);
  RUN(test_context_errors_and_queries);
  RUN(test_gemm_tile_heuristic);
  RUN(test_gemm_workspace_size);
  RUN(test_weight_layouts);
  return tu_total_fail ? 1 : 0;
}
