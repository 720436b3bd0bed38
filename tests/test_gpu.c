/* test_gpu.c -- GPU results against the host reference on fresh random data each run.
   Quantization (per-token, per-tensor, masked, SiLU, weights, layouts, dequantization)
   must match byte for byte, padding and untouched bytes included; the GEMM and the
   expert layer must stay within the NUMERICS.md tolerance of a float64 reference.
   Without a GPU every test prints SKIP with the reason. TEST_QUICK=1 runs fewer shapes
   (for compute-sanitizer); TEST_ONLY=<substring> runs the matching tests; TEST_CONFIGS=<substring>
   limits the every-tile-configuration and resident-units tests to matching configurations (tuning runs). */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "test_util.h"
#include "../tools/cuda_driver.h"
#include <math.h>
#include <pthread.h>

static nvfp4moe_context* g_ctx;
/* SF padding bytes of the GEMM operands: NaN (0x7F), which no GEMM may read, except on the
   SM100 path, whose contract needs zero padding (it reads whole 4-SF groups) */
static unsigned char g_sf_pad = 0x7F;
static int g_have_gpu, g_quick;
static char g_why[1200];

#define NEED_GPU()        \
  do {                    \
    if (!g_have_gpu) {    \
      tu_skip(g_why);     \
      return;             \
    }                     \
  } while (0)

/* ---- data ---------------------------------------------------------------------------------- */

static unsigned short f32_to_fp16(float f) {
  uint32_t u = tu_bits(f), sign = (u >> 16) & 0x8000u, r;
  u &= 0x7FFFFFFFu;
  if (u >= 0x7F800000u) return (unsigned short)(sign | 0x7C00u | (u > 0x7F800000u ? 0x200u : 0u));
  if (u >= 0x477FF000u) return (unsigned short)(sign | 0x7C00u); /* >= 65520 rounds to inf */
  if (u < 0x38800000u) return (unsigned short)(sign | (unsigned)nearbyintf(tu_f32(u) * 16777216.0f));
  r = u - (112u << 23);
  return (unsigned short)(sign | ((r + 0xFFFu + ((r >> 13) & 1u)) >> 13));
}
static unsigned short to_half(double v, int fp16) {
  return fp16 ? f32_to_fp16((float)v) : nvfp4moe_ref_f32_to_bf16((float)v);
}

/* One row of a kind the field has seen break quantizers (EDGE_CASES.md). */
static void gen_row(unsigned short* x, int n, int fp16, int allow_nonfinite) {
  int kind = (int)(tu_rand() % 100), i;
  double scale = exp(tu_normal() * 2.0);
  if (kind < 35) { /* gaussian */
    for (i = 0; i < n; ++i) x[i] = to_half(tu_normal() * scale, fp16);
  } else if (kind < 55) { /* heavy tails */
    for (i = 0; i < n; ++i) x[i] = to_half(tu_normal() * exp(tu_normal() * 1.5) * scale, fp16);
  } else if (kind < 70) { /* a few outlier channels */
    for (i = 0; i < n; ++i) x[i] = to_half(tu_normal() * scale * ((i % 97 == 3) ? 300.0 : 1.0), fp16);
  } else if (kind < 74) { /* zero row */
    for (i = 0; i < n; ++i) x[i] = (tu_rand() & 1) ? 0x8000 : 0;
  } else if (kind < 78) { /* zero blocks and all-negative blocks */
    for (i = 0; i < n; ++i) x[i] = ((i / 16) % 3 == 0) ? 0 : to_half(-fabs(tu_normal()) * scale, fp16);
  } else if (kind < 82) { /* tiny values: E4M3 subnormal SFs, fp16 subnormals */
    for (i = 0; i < n; ++i) x[i] = to_half(tu_normal() * (fp16 ? 1e-6 : 1e-30), fp16);
  } else if (kind < 85) { /* huge values */
    for (i = 0; i < n; ++i) x[i] = to_half(tu_normal() * (fp16 ? 2e4 : 1e30), fp16);
  } else if (kind < 90) { /* exact e2m1 tie points on power-of-two blocks */
    static const double ties[] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0};
    for (i = 0; i < n; ++i) x[i] = to_half((tu_rand() & 1 ? -1 : 1) * ties[tu_rand() % 8] * ldexp(1.0, (int)(tu_rand() % 5)), fp16);
  } else if (kind < 93 && allow_nonfinite) { /* NaN or Inf somewhere */
    for (i = 0; i < n; ++i) x[i] = to_half(tu_normal(), fp16);
    x[tu_rand() % (unsigned)n] = fp16 ? (tu_rand() & 1 ? 0x7E00 : 0xFC00) : (tu_rand() & 1 ? 0x7FC0 : 0x7F80);
  } else { /* one element dominates its row */
    for (i = 0; i < n; ++i) x[i] = to_half(tu_normal() * 1e-3 * scale, fp16);
    x[tu_rand() % (unsigned)n] = to_half(scale * 1e3, fp16);
  }
}

static int g_mm_total; /* pattern 9's valid rows, at most groups * rows */
static int* make_masked_m(int groups, int rows, int pattern) {
  int* mm = (int*)malloc(sizeof(int) * (size_t)groups);
  int g;
  for (g = 0; g < groups; ++g) {
    switch (pattern) {
      case 0: mm[g] = rows; break;                           /* all valid */
      case 1: mm[g] = 0; break;                              /* all empty */
      case 2: mm[g] = g >= groups / 2 ? 0 : rows; break;     /* trailing zeros */
      case 3: mm[g] = 1; break;
      case 5: mm[g] = 16 + (int)(tu_rand() % 35u); if (mm[g] > rows) mm[g] = rows; break; /* decode: ~33 */
      case 6: mm[g] = 50 + (int)(tu_rand() % 31u); if (mm[g] > rows) mm[g] = rows; break; /* ~65 */
      case 7: mm[g] = 1 + g % 3; if (mm[g] > rows) mm[g] = rows; break; /* 1, 2, 3 tokens per group */
      case 9: mm[g] = g_mm_total / groups + (g < g_mm_total % groups); break; /* g_mm_total valid rows in all */
      case 8: { /* each side of every token count a wgmma tile picks its N by (8 .. 128: gemm_wgmma_ws.cu) */
        static const int edge[] = {1, 8, 9, 16, 17, 24, 25, 32, 33, 40, 41, 47, 48, 49, 64, 65, 95, 96, 97, 128, 129, 140};
        mm[g] = edge[g % (int)(sizeof edge / sizeof edge[0])];
        if (mm[g] > rows) mm[g] = rows;
        break;
      }
      default: {                                             /* random, with 0, 1, M_max and out-of-range */
        unsigned r = (unsigned)(tu_rand() % 10);
        mm[g] = r == 0 ? 0 : r == 1 ? 1 : r == 2 ? rows : r == 3 ? rows + 7 : r == 4 ? -3 : (int)(tu_rand() % (unsigned)rows);
      }
    }
  }
  return mm;
}

static int valid_rows(const int* mm, int g, int rows) {
  int m = mm ? mm[g] : rows;
  return m < 0 ? 0 : m > rows ? rows : m;
}

static long long first_diff(const unsigned char* a, const unsigned char* b, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (a[i] != b[i]) return (long long)i;
  return -1;
}

/* ---- quantization: GPU bytes == reference bytes -------------------------------------------- */

typedef struct qcase {
  int groups, rows, k, fp16, linear, flags, per_token, silu, mm_pattern, stride_extra, dev_scale, gate_up;
} qcase;

static nvfp4moe_context* g_qctx; /* the context quantization cases run on */

static void run_qcase(const qcase* c) {
  int width = c->silu ? 2 * c->k : c->k, g, r;
  long long stride = width + c->stride_extra;
  size_t nx = (size_t)c->groups * c->rows * (size_t)stride, nq = (size_t)c->groups * c->rows * (size_t)c->k / 2;
  size_t nsf = (size_t)c->groups * nvfp4moe_sf_bytes(c->rows, c->k, c->linear ? NVFP4MOE_SF_LAYOUT_LINEAR : NVFP4MOE_SF_LAYOUT_128X4);
  size_t nscale = c->per_token ? (size_t)c->groups * c->rows : (size_t)c->groups;
  unsigned short* x = (unsigned short*)malloc(nx * 2);
  unsigned char *q = (unsigned char*)malloc(nq), *qr = (unsigned char*)malloc(nq);
  unsigned char *sf = (unsigned char*)malloc(nsf), *sfr = (unsigned char*)malloc(nsf);
  float *scale = (float*)malloc(nscale * 4), *scaler = (float*)malloc(nscale * 4);
  float gate[512], up[512];
  int* mm = c->mm_pattern >= 0 ? make_masked_m(c->groups, c->rows, c->mm_pattern) : 0;
  nvfp4moe_devptr dx, dq, dsf, dscale, dmm = 0, dgate = 0, dup = 0;
  nvfp4moe_quantize_args a;
  nvfp4moe_result rg, rr;
  long long d;
  for (g = 0; g < c->groups; ++g)
    for (r = 0; r < c->rows; ++r) {
      unsigned short* row = x + ((size_t)g * c->rows + r) * (size_t)stride;
      gen_row(row, width, c->fp16, 1);
      if (mm && r >= valid_rows(mm, g, c->rows)) /* invalid rows hold NaN: must change nothing */
        for (d = 0; d < width; ++d) row[d] = c->fp16 ? 0x7E00 : 0x7FC0;
      for (d = width; d < stride; ++d) row[d] = 0x7FC0; /* the gap of a strided input too */
    }
  for (g = 0; g < c->groups && g < 512; ++g) {
    gate[g] = (float)exp(tu_normal());
    up[g] = (float)exp(tu_normal());
  }
  memset(&a, 0, sizeof a);
  a.dtype = c->fp16 ? NVFP4MOE_DTYPE_FP16 : NVFP4MOE_DTYPE_BF16;
  a.groups = c->groups; a.rows = c->rows; a.k = c->k; a.x_row_stride = c->stride_extra ? stride : 0;
  a.sf_layout = c->linear ? NVFP4MOE_SF_LAYOUT_LINEAR : NVFP4MOE_SF_LAYOUT_128X4;
  a.flags = (unsigned)c->flags;
  if (!c->per_token) {
    if (c->dev_scale) { /* per-group decode scales, a few invalid ones to fault their own group */
      for (g = 0; g < c->groups; ++g) {
        unsigned s = (unsigned)(tu_rand() % 16);
        scale[g] = s == 0 ? 0.0f : s == 1 ? tu_f32(0x7FC00000u) : s == 2 ? -1.0f : s == 3 ? 1e-40f
                 : (float)(exp(tu_normal() * 3.0) / 2688.0);
      }
    } else {
      a.scale_value = (float)(exp(tu_normal() * 2.0) / 448.0);
    }
  }
  memcpy(scaler, scale, nscale * 4);
  dx = gu_alloc(nx * 2); dq = gu_alloc(nq); dsf = gu_alloc(nsf); dscale = gu_alloc(nscale * 4);
  gu_put(dx, x, nx * 2);
  memset(q, 0xA5, nq); memset(sf, 0xA5, nsf);
  gu_fill(dq, 0xA5, nq); gu_fill(dsf, 0xA5, nsf);
  if (c->per_token) { memset(scale, 0xA5, nscale * 4); memset(scaler, 0xA5, nscale * 4); }
  gu_put(dscale, scale, nscale * 4);
  if (mm) { dmm = gu_alloc(4 * (size_t)c->groups); gu_put(dmm, mm, 4 * (size_t)c->groups); }
  if (c->gate_up) { dgate = gu_alloc(4 * (size_t)c->groups); dup = gu_alloc(4 * (size_t)c->groups);
                    gu_put(dgate, gate, 4 * (size_t)c->groups); gu_put(dup, up, 4 * (size_t)c->groups); }
  /* device run */
  a.x = dx; a.out_e2m1 = dq; a.out_sf = dsf; a.masked_m = dmm; a.gate_scale = dgate; a.up_scale = dup;
  a.scale = (c->per_token || c->dev_scale) ? dscale : 0;
  if (c->silu) rg = c->per_token ? nvfp4moe_silu_mul_quantize_per_token(g_qctx, &a, 0) : nvfp4moe_silu_mul_quantize_per_tensor(g_qctx, &a, 0);
  else rg = c->per_token ? nvfp4moe_quantize_per_token(g_qctx, &a, 0) : nvfp4moe_quantize_per_tensor(g_qctx, &a, 0);
  CHECK(rg == NVFP4MOE_SUCCESS, "GPU: %s", nvfp4moe_last_error());
  gu_sync();
  /* reference run on host buffers */
  a.x = NVFP4MOE_HOSTPTR(x); a.out_e2m1 = NVFP4MOE_HOSTPTR(qr); a.out_sf = NVFP4MOE_HOSTPTR(sfr);
  a.masked_m = NVFP4MOE_HOSTPTR(mm); a.gate_scale = c->gate_up ? NVFP4MOE_HOSTPTR(gate) : 0;
  a.up_scale = c->gate_up ? NVFP4MOE_HOSTPTR(up) : 0;
  a.scale = (c->per_token || c->dev_scale) ? NVFP4MOE_HOSTPTR(scaler) : 0;
  memset(qr, 0xA5, nq); memset(sfr, 0xA5, nsf);
  if (c->silu) rr = c->per_token ? nvfp4moe_ref_silu_mul_quantize_per_token(&a) : nvfp4moe_ref_silu_mul_quantize_per_tensor(&a);
  else rr = c->per_token ? nvfp4moe_ref_quantize_per_token(&a) : nvfp4moe_ref_quantize_per_tensor(&a);
  CHECK(rr == NVFP4MOE_SUCCESS, "ref: %s", nvfp4moe_last_error());
  gu_get(q, dq, nq); gu_get(sf, dsf, nsf); gu_get(scale, dscale, nscale * 4);
  d = first_diff(q, qr, nq);
  CHECK(d < 0, "G%d M%d K%d %s %s fo6=%d tok=%d silu=%d mm=%d: E2M1 byte %lld: gpu 0x%02x ref 0x%02x", c->groups, c->rows,
        c->k, c->fp16 ? "fp16" : "bf16", c->linear ? "linear" : "128x4", c->flags, c->per_token, c->silu, c->mm_pattern, d,
        d >= 0 ? q[d] : 0, d >= 0 ? qr[d] : 0);
  d = first_diff(sf, sfr, nsf);
  CHECK(d < 0, "G%d M%d K%d %s %s fo6=%d tok=%d silu=%d mm=%d: SF byte %lld: gpu 0x%02x ref 0x%02x", c->groups, c->rows,
        c->k, c->fp16 ? "fp16" : "bf16", c->linear ? "linear" : "128x4", c->flags, c->per_token, c->silu, c->mm_pattern, d,
        d >= 0 ? sf[d] : 0, d >= 0 ? sfr[d] : 0);
  d = first_diff((unsigned char*)scale, (unsigned char*)scaler, nscale * 4);
  CHECK(d < 0, "G%d M%d K%d: scale byte %lld differs (gpu %.9g ref %.9g)", c->groups, c->rows, c->k, d,
        d >= 0 ? scale[d / 4] : 0.0, d >= 0 ? scaler[d / 4] : 0.0);
  gu_free(dx); gu_free(dq); gu_free(dsf); gu_free(dscale); gu_free(dmm); gu_free(dgate); gu_free(dup);
  free(x); free(q); free(qr); free(sf); free(sfr); free(scale); free(scaler); free(mm);
}

/* The cases of a table, on the default context. */
static void run_qcase_table(const qcase* cases, int n) {
  int i;
  g_qctx = g_ctx;
  for (i = 0; i < n; ++i) run_qcase(&cases[i]);
}

static void test_quantize_per_token_all_shapes(void) {
  static const int ks[] = {16, 32, 48, 80, 768, 2048, 2880, 7168};
  static const int ms[] = {1, 31, 32, 33, 127, 128, 129, 4096};
  int ki, mi, combo;
  NEED_GPU();
  g_qctx = g_ctx;
  for (ki = 0; ki < 8; ++ki)
    for (mi = 0; mi < 8; ++mi) {
      long long elems = (long long)ks[ki] * ms[mi];
      if (g_quick && elems > (1 << 18)) continue;
      /* every (dtype, layout, 4over6) combination on the small shapes; two on the big ones */
      for (combo = 0; combo < 12; ++combo) {
        qcase c;
        if (elems > (1 << 21) && combo != (ki + mi) % 12 && combo != (ki * 5 + mi * 3 + 7) % 12) continue;
        memset(&c, 0, sizeof c);
        c.groups = 1; c.rows = ms[mi]; c.k = ks[ki]; c.per_token = 1; c.mm_pattern = -1;
        c.fp16 = combo & 1; c.linear = (combo >> 1) & 1;
        c.flags = combo / 4 == 0 ? 0 : combo / 4 == 1 ? NVFP4MOE_QUANT_4OVER6 : NVFP4MOE_QUANT_4OVER6_MSE;
        run_qcase(&c);
      }
    }
}

static void test_quantize_masked_and_per_tensor(void) {
  /* 1024 groups: the last count whose valid rows the kernel lists in shared memory; 1100:
     the fallback that walks every (group, row) slot */
  static const int shapes[][3] = {{32, 256, 7168}, {8, 129, 2880}, {5, 33, 80}, {3, 1, 16}, {17, 200, 768},
                                  {1024, 3, 32}, {1100, 5, 48}};
  int s, pattern, variant;
  NEED_GPU();
  g_qctx = g_ctx;
  /* patterns 5 and 6 (about 33 and 65 valid rows per group, the decode shapes) on the first shape */
  for (s = 0; s < 7; ++s)
    for (pattern = 0; pattern < 7; ++pattern)
      for (variant = 0; variant < 4; ++variant) {
        qcase c;
        if ((g_quick && s == 0) || (pattern >= 5 && s != 0)) continue;
        memset(&c, 0, sizeof c);
        c.groups = shapes[s][0]; c.rows = shapes[s][1]; c.k = shapes[s][2];
        c.mm_pattern = pattern == 4 && variant == 3 ? -1 : pattern;
        c.per_token = variant & 1; c.dev_scale = variant == 2; c.fp16 = (s + pattern) & 1;
        c.linear = (s + variant) % 3 == 0; c.flags = (pattern + variant) % 3 == 0 ? NVFP4MOE_QUANT_4OVER6 : 0;
        c.stride_extra = variant == 3 ? 24 : 0;
        run_qcase(&c);
      }
}

static void test_silu_mul_quantize(void) {
  static const int shapes[][3] = {{32, 256, 2048}, {8, 40, 768}, {4, 129, 1536}, {2, 7, 16}};
  int s, variant;
  NEED_GPU();
  g_qctx = g_ctx;
  for (s = 0; s < 4; ++s)
    for (variant = 0; variant < 6; ++variant) {
      qcase c;
      if (g_quick && s == 0) continue;
      memset(&c, 0, sizeof c);
      c.groups = shapes[s][0]; c.rows = shapes[s][1]; c.k = shapes[s][2]; c.silu = 1;
      c.mm_pattern = variant % 5; c.per_token = variant & 1; c.dev_scale = !(variant & 1);
      c.gate_up = variant >= 2; c.flags = variant == 4 ? NVFP4MOE_QUANT_4OVER6 : variant == 5 ? NVFP4MOE_QUANT_4OVER6_MSE : 0;
      run_qcase(&c);
    }
}

/* The software E2M1/E4M3 path (NVFP4MOE_FLAG_SOFT_CVT) must give the same bytes too. */
static void test_software_conversions(void) {
  nvfp4moe_desc d;
  nvfp4moe_context* soft = 0;
  int i;
  NEED_GPU();
  memset(&d, 0, sizeof d);
  d.flags = NVFP4MOE_FLAG_SOFT_CVT;
  CHECK(nvfp4moe_create(&d, &soft) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  if (!soft) return;
  g_qctx = soft;
  for (i = 0; i < 6; ++i) {
    qcase c;
    memset(&c, 0, sizeof c);
    c.groups = 1 + i; c.rows = 33 + 40 * i; c.k = i == 5 ? 7168 : 80 * (i + 1); c.per_token = i & 1; c.dev_scale = i == 2;
    c.mm_pattern = i > 2 ? 4 : -1; c.flags = i == 4 ? NVFP4MOE_QUANT_4OVER6 : 0; c.silu = i == 3; c.fp16 = i == 1;
    run_qcase(&c);
  }
  g_qctx = g_ctx;
  nvfp4moe_destroy(soft);
}

/* Rows longer than a team's registers (K > 16384: blocks read again in pass 2; SiLU rows
   past 4096 take the wide SiLU kernels, 2 blocks per thread, so 8208 is read again and 6144
   is not), teams of 256 threads, and the fp16 SiLU kernel. */
static void test_quantize_long_rows_and_fp16_silu(void) {
  static const qcase cases[] = {
      /* groups, rows, k, fp16, linear, flags, per_token, silu, mm_pattern, stride_extra, dev_scale, gate_up */
      {1, 5, 20480, 0, 0, 0, 1, 0, -1, 0, 0, 0},
      {2, 3, 16400, 1, 0, 0, 0, 0, 4, 0, 1, 0},
      {1, 4, 9216, 0, 0, 0, 0, 0, -1, 0, 0, 0},
      {2, 5, 8208, 0, 0, 0, 1, 1, 4, 0, 0, 1},
      {3, 17, 768, 1, 0, 0, 1, 1, -1, 0, 0, 0},
      {2, 9, 2048, 1, 0, 0, 0, 1, 4, 0, 1, 1},
      {3, 6, 6144, 1, 0, 0, 0, 1, -1, 0, 1, 0}};
  NEED_GPU();
  run_qcase_table(cases, (int)(sizeof cases / sizeof cases[0]));
}

/* Many rows per team. Plain input with at least 4 rows per resident team takes the staged
   kernels on sm_90+ (each team's rows pass through its shared-memory slots, every slot
   refilled many times): teams of 32, 64, 128 and 256 threads, 128x4 padding rows at the end
   of each group, the given-scale path (one value, and per-group device scales), 4over6, a
   strided input, odd row counts (in one group and in two, both layouts). The test asks a
   context that logs its launches which kernel each case took: on sm_90+ the staged one for
   these, never for masked input or SiLU. Masked input stays on the plain kernels: 1100
   groups (rows past masked_m skipped in the walk), the dense list of valid rows; and SiLU.
   Run in TEST_QUICK too: the other quick shapes give each team at most two rows. */
static char g_launched[256]; /* the last "launched" debug message of a context logging them */
static void launch_logger(int level, const char* msg, void* user) {
  (void)user;
  if (level == NVFP4MOE_LOG_DEBUG && strstr(msg, ": launched ")) snprintf(g_launched, sizeof g_launched, "%s", msg);
}

static void test_quantize_many_rows_per_team(void) {
  static const qcase cases[] = {
      /* groups, rows, k, fp16, linear, flags, per_token, silu, mm_pattern, stride_extra, dev_scale, gate_up */
      {1, 13000, 1040, 0, 0, 0, 1, 0, -1, 0, 0, 0},
      {2, 3200, 2880, 0, 0, NVFP4MOE_QUANT_4OVER6_MSE, 1, 0, -1, 0, 0, 0},
      {1, 3300, 7168, 1, 1, 0, 0, 0, -1, 8, 0, 0},
      {1, 3200, 7168, 0, 0, NVFP4MOE_QUANT_4OVER6, 1, 0, -1, 0, 0, 0},
      {1100, 12, 1040, 1, 0, 0, 0, 0, 4, 0, 1, 0},
      {40, 260, 2880, 0, 1, 0, 1, 0, 6, 0, 0, 0},
      {8, 2048, 768, 0, 0, 0, 1, 1, 0, 0, 0, 1},
      {1, 1700, 9216, 0, 0, 0, 1, 0, -1, 0, 0, 0},
      {3, 1100, 7168, 0, 0, 0, 0, 0, -1, 0, 1, 0},
      {1, 3301, 7168, 0, 0, 0, 1, 0, -1, 0, 0, 0},
      {1, 3301, 7168, 1, 1, 0, 1, 0, -1, 0, 0, 0},
      {2, 1651, 7168, 0, 1, 0, 1, 0, -1, 0, 0, 0}};
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  nvfp4moe_info info;
  int i, staged = 0;
  NEED_GPU();
  /* on a context that logs its launches: which kernel each case took */
  memset(&d, 0, sizeof d);
  d.logger.func = launch_logger;
  d.logger.level = NVFP4MOE_LOG_DEBUG;
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  if (!ctx) return;
  nvfp4moe_query_info(ctx, &info);
  g_qctx = ctx;
  for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); ++i) {
    const qcase* c = &cases[i];
    g_launched[0] = 0;
    run_qcase(c);
    CHECK(g_launched[0] != 0, "G%d M%d K%d: no launch logged", c->groups, c->rows, c->k);
    if (strstr(g_launched, "nvf_quantize_staged")) {
      ++staged; /* the staged kernels read every row of every group: never for masked input */
      CHECK(c->mm_pattern < 0 && !c->silu, "G%d M%d K%d: masked or SiLU input took %s", c->groups, c->rows, c->k,
            g_launched);
    }
  }
  g_qctx = g_ctx;
  nvfp4moe_destroy(ctx);
  /* on sm_90+ (132 SMs on the H200) the 9 unmasked, non-SiLU cases reach the staged kernels;
     fewer SMs lower the thresholds, so at least 8 */
  if (info.cc_major >= 9 && info.sm_count <= 132 && !getenv("NVFP4MOE_TUNE_DEFINE"))
    CHECK(staged >= 8, "staged kernels taken by %d cases (last: %s)", staged, g_launched);
}

/* The unstaged quantizer's last round (kernels_src/quantize.cu): with rows left over after the
   full rounds of all teams, fewer than the teams, those rows go to wider teams (up to the
   whole CTA). The valid rows in all are set each side of the points where that changes, for
   teams of 128 (K 7168), 64 (K 2880) and 32 threads (K 2048): a last round of none, one row
   per CTA, exactly as many rows as CTAs, one more, several per CTA (K 2048: 3, teams of 64).
   A round is 2 CTAs an SM (the plain kernel's occupancy at 128 registers) times the SMs times
   the teams per CTA; on a GPU where it is otherwise the totals still run, not at the edges.
   Inputs: masked with 32 groups (each warp finds a row's group by a ballot) and with 40 (the
   valid rows listed in shared memory); plain [M, K] with M past one round (the full grid),
   linear SFs, and 128x4, whose padding rows up to roundup(M, 128) are items of the last round
   too; fp16, given scales. Every byte is compared with the reference and rows past masked_m
   must keep their fill, so a row missed fails; a row quantized twice writes the same bytes. */
static void test_quantize_last_round(void) {
  static const int ks[] = {7168, 2880, 2048}, tpcs[] = {2, 4, 8};
  nvfp4moe_info info;
  int ki, t, grid;
  NEED_GPU();
  nvfp4moe_query_info(g_ctx, &info);
  g_qctx = g_ctx;
  grid = 2 * info.sm_count;
  for (ki = 0; ki < 3; ++ki) {
    const int step = grid * tpcs[ki];
    /* kind 0: masked, 32 groups; 1: masked, 40 groups; 2: plain, linear SFs; 3: plain, 128x4 */
    const struct { int kind, total, quick; } cases[] = {
        {0, 1, 1}, {0, grid - 3, 1}, {0, grid, 1}, {0, grid + 1, 1}, {0, step - 1, 0}, {0, step, 1},
        {0, step + 20, 1}, {0, step + grid, 0}, {0, step + grid + 1, 1}, {0, step + 2 * grid + 5, 1},
        {0, 2 * step + 20, 0}, {1, step + 20, 1}, {1, step + 2 * grid + 5, 0}, {2, step + 20, 1},
        {2, 2 * step + grid, 0}, {2, 2 * step + 2 * grid + 7, 0}, {3, step + 20, 1}};
    for (t = 0; t < (int)(sizeof cases / sizeof cases[0]); ++t) {
      qcase c;
      if (g_quick && !cases[t].quick) continue;
      memset(&c, 0, sizeof c);
      c.k = ks[ki]; c.per_token = t % 4 != 3; c.dev_scale = t % 4 == 3; c.fp16 = t % 3 == 1;
      if (cases[t].kind >= 2) {
        c.groups = 1; c.rows = cases[t].total; c.mm_pattern = -1; c.linear = cases[t].kind == 2;
      } else {
        c.groups = cases[t].kind ? 40 : 32; c.rows = (2 * step + 20 + 31) / 32; c.mm_pattern = 9;
        c.linear = t % 5 == 2; g_mm_total = cases[t].total;
      }
      run_qcase(&c);
    }
  }
}

/* Every E2M1 cut point exactly, and its neighbours one bf16/fp16 step away, through the fast
   rounding of the GPU quantizer: a per-tensor scale of 1 and a 6 in every block make the
   block's SF 1.0 (0x38), so each element is rounded as given. GPU bytes == reference bytes,
   and the codes are also checked against the contract's table (NUMERICS.md 1). */
static void test_quantize_e2m1_cut_points(void) {
  static const float cuts[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const int K = 16 * 64, ncut = (int)(sizeof cuts / sizeof cuts[0]);
  int fp16, i, j, vi;
  NEED_GPU();
  for (fp16 = 0; fp16 < 2; ++fp16) {
    unsigned short x[16 * 64];
    float val[16 * 64];
    unsigned char q[16 * 64 / 2], qr[16 * 64 / 2], sf[512 * 16], sfr[512 * 16];
    nvfp4moe_devptr dx = gu_alloc(sizeof x), dq = gu_alloc(sizeof q), dsf = gu_alloc(sizeof sf);
    nvfp4moe_quantize_args a;
    long long d;
    j = 0;
    /* values: each cut point, one step below and above it in the input format, both signs, and +-0 */
    for (i = 0, vi = 0; i < K; ++i) {
      if (i % 16 == 0) { x[i] = to_half(6.0, fp16); val[i] = 6.0f; continue; }
      {
        int c = vi % ncut, kind = (vi / ncut) % 3, neg = (vi / (3 * ncut)) % 2;
        unsigned short h = to_half(cuts[c], fp16);
        if (kind == 1) h = (unsigned short)(h - 1);
        if (kind == 2) h = (unsigned short)(h + 1);
        if (vi % 97 == 13) h = 0; /* a +0 and a -0 now and then */
        if (neg) h = (unsigned short)(h | 0x8000u);
        x[i] = h;
        val[i] = fp16 ? 0.0f : tu_f32((uint32_t)h << 16);
        ++vi;
      }
    }
    gu_put(dx, x, sizeof x);
    gu_fill(dq, 0xA5, sizeof q); gu_fill(dsf, 0xA5, sizeof sf);
    memset(&a, 0, sizeof a);
    a.dtype = fp16 ? NVFP4MOE_DTYPE_FP16 : NVFP4MOE_DTYPE_BF16;
    a.groups = 1; a.rows = 1; a.k = K; a.scale_value = 1.0f;
    a.x = dx; a.out_e2m1 = dq; a.out_sf = dsf;
    CHECK(nvfp4moe_quantize_per_tensor(g_ctx, &a, 0) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
    gu_sync();
    gu_get(q, dq, sizeof q); gu_get(sf, dsf, nvfp4moe_sf_bytes(1, K, NVFP4MOE_SF_LAYOUT_128X4));
    a.x = NVFP4MOE_HOSTPTR(x); a.out_e2m1 = NVFP4MOE_HOSTPTR(qr); a.out_sf = NVFP4MOE_HOSTPTR(sfr);
    CHECK(nvfp4moe_ref_quantize_per_tensor(&a) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
    d = first_diff(q, qr, sizeof q);
    CHECK(d < 0, "%s: E2M1 byte %lld: gpu 0x%02x ref 0x%02x", fp16 ? "fp16" : "bf16", d, d >= 0 ? q[d] : 0, d >= 0 ? qr[d] : 0);
    d = first_diff(sf, sfr, nvfp4moe_sf_bytes(1, K, NVFP4MOE_SF_LAYOUT_128X4));
    CHECK(d < 0, "%s: SF byte %lld differs", fp16 ? "fp16" : "bf16", d);
    CHECK(sf[0] == 0x38, "SF of a block with max 6 and scale 1: 0x%02x, want 0x38", sf[0]);
    if (!fp16) /* the bf16 values are exact in f32: check the codes against the cut-point table */
      for (i = 0, j = 0; i < K; ++i) {
        float a_ = fabsf(val[i]);
        unsigned want = (unsigned)(a_ > 0.25f) + (a_ >= 0.75f) + (a_ > 1.25f) + (a_ >= 1.75f) + (a_ > 2.5f) + (a_ >= 3.5f) +
                        (a_ > 5.0f);
        unsigned got = (q[i / 2] >> (4 * (i & 1))) & 0xFu;
        want |= (tu_bits(val[i]) >> 28) & 8u;
        if (got != want && j++ < 3) CHECK(got == want, "x = %a: code %u, want %u", (double)val[i], got, want);
      }
    CHECK(j == 0, "%d codes differ from the contract's cut points", j);
    gu_free(dx); gu_free(dq); gu_free(dsf);
  }
}

static void test_weight_quantization_in_place(void) {
  static const int shapes[][3] = {{4, 384, 256}, {3, 130, 2880}, {2, 64, 48}};
  int s, pass;
  NEED_GPU();
  for (s = 0; s < 3; ++s) {
    int E = shapes[s][0], N = shapes[s][1], K = shapes[s][2], e;
    size_t nw = (size_t)E * N * K, nq = nw / 2, nsf = (size_t)E * nvfp4moe_sf_bytes(N, K, NVFP4MOE_SF_LAYOUT_128X4);
    unsigned short* w = (unsigned short*)malloc(nw * 2);
    unsigned char *q = (unsigned char*)malloc(nq), *qr = (unsigned char*)malloc(nq);
    unsigned char *sf = (unsigned char*)malloc(nsf), *sfr = (unsigned char*)malloc(nsf);
    float sc[8], scr[8];
    nvfp4moe_devptr dw = gu_alloc(nw * 2), dq = gu_alloc(nq), dsf = gu_alloc(nsf), ds = gu_alloc(4 * (size_t)E);
    nvfp4moe_weight_quantize_args a;
    /* two loads into the same buffers: a reload must not need new pointers */
    for (pass = 0; pass < 2; ++pass) {
      size_t i;
      for (i = 0; i < nw; ++i) w[i] = to_half(tu_normal() * 0.02 * (1 + pass), s == 1);
      for (i = 0; i < (size_t)N * K; ++i) w[i] = 0; /* expert 0: all zero */
      if (E > 2) w[(size_t)2 * N * K + 77] = 0x7F80;  /* expert 2: one inf weight */
      memset(&a, 0, sizeof a);
      a.dtype = s == 1 ? NVFP4MOE_DTYPE_FP16 : NVFP4MOE_DTYPE_BF16; a.experts = E; a.n = N; a.k = K;
      a.flags = pass ? NVFP4MOE_QUANT_4OVER6 : 0;
      gu_put(dw, w, nw * 2);
      gu_fill(dsf, 0xA5, nsf);
      a.w = dw; a.out_e2m1 = dq; a.out_sf = dsf; a.out_scale = ds;
      CHECK(nvfp4moe_quantize_weights(g_ctx, &a, 0) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
      a.w = NVFP4MOE_HOSTPTR(w); a.out_e2m1 = NVFP4MOE_HOSTPTR(qr); a.out_sf = NVFP4MOE_HOSTPTR(sfr);
      a.out_scale = NVFP4MOE_HOSTPTR(scr);
      memset(sfr, 0xA5, nsf);
      CHECK(nvfp4moe_ref_quantize_weights(&a) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
      gu_sync();
      gu_get(q, dq, nq); gu_get(sf, dsf, nsf); gu_get(sc, ds, 4 * (size_t)E);
      CHECK(first_diff(q, qr, nq) < 0, "weights E%d N%d K%d pass %d: codes differ at %lld", E, N, K, pass, first_diff(q, qr, nq));
      CHECK(first_diff(sf, sfr, nsf) < 0, "weights E%d N%d K%d pass %d: SFs differ at %lld", E, N, K, pass, first_diff(sf, sfr, nsf));
      CHECK(memcmp(sc, scr, 4 * (size_t)E) == 0, "weights: decode scales differ (%.9g vs %.9g)", sc[1], scr[1]);
      CHECK(sc[0] == 0.0f, "an all-zero expert has decode scale 0 (got %g)", sc[0]);
      for (e = 1; e < E; ++e) CHECK(sc[e] > 0 && sc[e] < 1, "expert %d decode scale %g: amax/2688 of finite weights", e, sc[e]);
    }
    gu_free(dw); gu_free(dq); gu_free(dsf); gu_free(ds);
    free(w); free(q); free(qr); free(sf); free(sfr);
  }
}

static void test_sf_convert_and_dequantize(void) {
  int groups = 3, rows = 200, k = 2880, to;
  size_t lin = (size_t)groups * nvfp4moe_sf_bytes(rows, k, NVFP4MOE_SF_LAYOUT_LINEAR);
  size_t sw = (size_t)groups * nvfp4moe_sf_bytes(rows, k, NVFP4MOE_SF_LAYOUT_128X4), i, nq = (size_t)groups * rows * k / 2;
  unsigned char *a, *b, *br, *q;
  float *s, *out, *outr;
  int mm[3] = {200, 17, 0};
  nvfp4moe_devptr da, db, dq, ds, dout, dmm;
  NEED_GPU();
  a = (unsigned char*)malloc(sw); b = (unsigned char*)malloc(sw); br = (unsigned char*)malloc(sw);
  q = (unsigned char*)malloc(nq); s = (float*)malloc(4 * (size_t)groups * rows);
  out = (float*)malloc(4 * (size_t)groups * rows * k); outr = (float*)malloc(4 * (size_t)groups * rows * k);
  da = gu_alloc(sw); db = gu_alloc(sw); dq = gu_alloc(nq); ds = gu_alloc(4 * (size_t)groups * rows);
  dout = gu_alloc(4 * (size_t)groups * rows * k); dmm = gu_alloc(12);
  for (to = 0; to < 2; ++to) {
    nvfp4moe_sf_convert_args c;
    size_t nsrc = to ? lin : sw, ndst = to ? sw : lin;
    for (i = 0; i < nsrc; ++i) a[i] = (unsigned char)(tu_rand() % 0x80);
    memset(&c, 0, sizeof c);
    c.groups = groups; c.rows = rows; c.k = k; c.dst_layout = to ? NVFP4MOE_SF_LAYOUT_128X4 : NVFP4MOE_SF_LAYOUT_LINEAR;
    gu_put(da, a, nsrc); gu_fill(db, 0xA5, ndst);
    c.src = da; c.dst = db;
    CHECK(nvfp4moe_sf_convert(g_ctx, &c, 0) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
    c.src = NVFP4MOE_HOSTPTR(a); c.dst = NVFP4MOE_HOSTPTR(br);
    memset(br, 0xA5, ndst);
    CHECK(nvfp4moe_ref_sf_convert(&c) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
    gu_sync();
    gu_get(b, db, ndst);
    CHECK(first_diff(b, br, ndst) < 0, "sf_convert to %s differs at %lld", to ? "128x4" : "linear", first_diff(b, br, ndst));
  }
  /* dequantize: random codes and SFs (0x7F included), per-row scales, masked */
  {
    nvfp4moe_dequantize_args d;
    size_t n = (size_t)groups * rows * k;
    for (i = 0; i < nq; ++i) q[i] = (unsigned char)tu_rand();
    for (i = 0; i < sw; ++i) a[i] = (unsigned char)(tu_rand() % 0x80);
    for (i = 0; i < (size_t)groups * rows; ++i) s[i] = (float)exp(tu_normal() * 3);
    gu_put(dq, q, nq); gu_put(da, a, sw); gu_put(ds, s, 4 * (size_t)groups * rows); gu_put(dmm, mm, 12);
    gu_fill(dout, 0xA5, 4 * n);
    memset(&d, 0, sizeof d);
    d.groups = groups; d.rows = rows; d.k = k; d.scale_per_row = 1; d.out_dtype = NVFP4MOE_DTYPE_F32;
    d.e2m1 = dq; d.sf = da; d.scale = ds; d.masked_m = dmm; d.out = dout;
    CHECK(nvfp4moe_dequantize(g_ctx, &d, 0) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
    d.e2m1 = NVFP4MOE_HOSTPTR(q); d.sf = NVFP4MOE_HOSTPTR(a); d.scale = NVFP4MOE_HOSTPTR(s);
    d.masked_m = NVFP4MOE_HOSTPTR(mm); d.out = NVFP4MOE_HOSTPTR(outr);
    memset(outr, 0xA5, 4 * n);
    CHECK(nvfp4moe_ref_dequantize(&d) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
    gu_sync();
    gu_get(out, dout, 4 * n);
    CHECK(first_diff((unsigned char*)out, (unsigned char*)outr, 4 * n) < 0, "dequantize differs at byte %lld",
          first_diff((unsigned char*)out, (unsigned char*)outr, 4 * n));
  }
  gu_free(da); gu_free(db); gu_free(dq); gu_free(ds); gu_free(dout); gu_free(dmm);
  free(a); free(b); free(br); free(q); free(s); free(out); free(outr);
}

/* ---- GEMM: within tolerance of float64 ------------------------------------------------------ */

typedef struct gcase {
  int groups, m_max, n, k, mm_pattern, row_scale, alpha, ldd_extra, expected_m;
  int tiled; /* the GPU gets the weights in the TILED layout (the check reads the row-major copy) */
} gcase;

typedef struct gdata {
  gcase c;
  long long ldd;
  int* mm;
  unsigned char *a, *asf, *b, *bsf;
  float *alpha, *rs;
  size_t na, nasf, nb, nbsf, nd, nbt; /* nbt: bytes of b on the GPU, in its layout */
  nvfp4moe_devptr da, dasf, db, dbsf, dmm, dalpha, drs, dd;
} gdata;

/* Random NVFP4 operands: every code, SFs over a wide range; invalid A rows and the SF
   padding (columns past K/16, rows past the matrix) get NaN SFs (g_sf_pad). */
/* TEST_GPU_RELAYOUT=1 (tuning runs whose define changes the TILED encoding, -DNVF_F16=0 or -DNVF_WENC=0, which the
   host reference's tables do not follow): TILED weights made by the GPU relayout of the context under
   test instead of the host reference's. Returns 1 when it did so. */
static int gpu_relayout_tiled(nvfp4moe_devptr dst, const unsigned char* src, size_t nsrc, int groups, int n, int k) {
  nvfp4moe_weights_relayout_args rl;
  nvfp4moe_devptr d;
  if (!getenv("TEST_GPU_RELAYOUT")) return 0;
  d = gu_alloc(nsrc);
  gu_put(d, src, nsrc);
  memset(&rl, 0, sizeof rl);
  rl.groups = groups; rl.n = n; rl.k = k; rl.src = d; rl.dst = dst;
  rl.dst_layout = NVFP4MOE_WEIGHTS_TILED;
  CHECK(nvfp4moe_weights_relayout(g_ctx, &rl, 0) == NVFP4MOE_SUCCESS, "GPU relayout: %s", nvfp4moe_last_error());
  gu_sync();
  gu_free(d);
  return 1;
}

static void gdata_make(gdata* t, const gcase* c) {
  size_t i;
  int g, r, cc, nblk = c->k / 16, kc4 = (nblk + 3) / 4;
  memset(t, 0, sizeof *t);
  t->c = *c;
  t->ldd = c->n + c->ldd_extra;
  t->mm = make_masked_m(c->groups, c->m_max, c->mm_pattern);
  t->na = (size_t)c->groups * c->m_max * c->k / 2;
  t->nasf = (size_t)c->groups * nvfp4moe_sf_bytes(c->m_max, c->k, NVFP4MOE_SF_LAYOUT_128X4);
  t->nb = (size_t)c->groups * c->n * c->k / 2;
  t->nbsf = (size_t)c->groups * nvfp4moe_sf_bytes(c->n, c->k, NVFP4MOE_SF_LAYOUT_128X4);
  t->nd = (size_t)c->groups * c->m_max * (size_t)t->ldd;
  t->a = (unsigned char*)malloc(t->na); t->asf = (unsigned char*)malloc(t->nasf);
  t->b = (unsigned char*)malloc(t->nb); t->bsf = (unsigned char*)malloc(t->nbsf);
  t->alpha = (float*)malloc(4 * (size_t)c->groups); t->rs = (float*)malloc(4 * (size_t)c->groups * c->m_max);
  for (i = 0; i < t->na; ++i) t->a[i] = (unsigned char)tu_rand();
  for (i = 0; i < t->nb; ++i) t->b[i] = (unsigned char)tu_rand();
  memset(t->asf, g_sf_pad, t->nasf);
  memset(t->bsf, g_sf_pad, t->nbsf);
  for (g = 0; g < c->groups; ++g) {
    size_t ga = (size_t)g * nvfp4moe_sf_bytes(c->m_max, c->k, NVFP4MOE_SF_LAYOUT_128X4);
    size_t gb = (size_t)g * nvfp4moe_sf_bytes(c->n, c->k, NVFP4MOE_SF_LAYOUT_128X4);
    int valid = valid_rows(t->mm, g, c->m_max);
    for (r = 0; r < c->m_max; ++r)
      for (cc = 0; cc < nblk; ++cc)
        t->asf[ga + nvfp4moe__sf_off_128x4(r, cc, kc4)] = r < valid ? (unsigned char)(0x18 + tu_rand() % 0x48) : 0x7F;
    for (r = 0; r < c->n; ++r)
      for (cc = 0; cc < nblk; ++cc) t->bsf[gb + nvfp4moe__sf_off_128x4(r, cc, kc4)] = (unsigned char)(0x18 + tu_rand() % 0x48);
    t->alpha[g] = (float)exp(tu_normal() - 4.0);
  }
  for (i = 0; i < (size_t)c->groups * c->m_max; ++i) t->rs[i] = (float)exp(tu_normal());
  /* (TILED pads a last partial 128-K step: its own size) */
  t->nbt = (size_t)c->groups * nvfp4moe_weight_bytes(c->n, c->k, c->tiled ? NVFP4MOE_WEIGHTS_TILED : NVFP4MOE_WEIGHTS_ROW_MAJOR);
  t->da = gu_alloc(t->na); t->dasf = gu_alloc(t->nasf); t->db = gu_alloc(t->nbt); t->dbsf = gu_alloc(t->nbsf);
  t->dmm = gu_alloc(4 * (size_t)c->groups); t->dalpha = gu_alloc(4 * (size_t)c->groups);
  t->drs = gu_alloc(4 * (size_t)c->groups * c->m_max); t->dd = gu_alloc(2 * t->nd);
  gu_put(t->da, t->a, t->na); gu_put(t->dasf, t->asf, t->nasf); gu_put(t->dbsf, t->bsf, t->nbsf);
  if (c->tiled && gpu_relayout_tiled(t->db, t->b, t->nb, c->groups, c->n, c->k)) {
    /* (TEST_GPU_RELAYOUT) */
  } else if (c->tiled) { /* the host reference rearranges the codes; the check keeps reading t->b */
    unsigned char* bt = (unsigned char*)malloc(t->nbt);
    nvfp4moe_weights_relayout_args rl;
    memset(&rl, 0, sizeof rl);
    rl.groups = c->groups; rl.n = c->n; rl.k = c->k; rl.src = NVFP4MOE_HOSTPTR(t->b); rl.dst = NVFP4MOE_HOSTPTR(bt);
    rl.dst_layout = NVFP4MOE_WEIGHTS_TILED;
    CHECK(nvfp4moe_ref_weights_relayout(&rl) == NVFP4MOE_SUCCESS, "ref relayout: %s", nvfp4moe_last_error());
    { /* the padding of a last partial 128-K step poisoned (0x77777777 words, which decode to codes 3, 13,
         14, 15 = 1.5, -3, -4, -6): a kernel that read it would add them in */
      const size_t rb = nvfp4moe_weight_bytes(16, c->k, NVFP4MOE_WEIGHTS_TILED) / 16;
      size_t row, o;
      for (row = 0; row < (size_t)c->groups * c->n; ++row)
        for (o = (size_t)c->k / 2; o < rb; ++o) bt[nvfp4moe__weight_byte(NVFP4MOE_WEIGHTS_TILED, row, o, c->k)] = 0x77;
    }
    gu_put(t->db, bt, t->nbt);
    free(bt);
  } else {
    gu_put(t->db, t->b, t->nb);
  }
  gu_put(t->dmm, t->mm, 4 * (size_t)c->groups); gu_put(t->dalpha, t->alpha, 4 * (size_t)c->groups);
  gu_put(t->drs, t->rs, 4 * (size_t)c->groups * c->m_max);
}

static void gdata_free(gdata* t) {
  gu_free(t->da); gu_free(t->dasf); gu_free(t->db); gu_free(t->dbsf); gu_free(t->dmm); gu_free(t->dalpha);
  gu_free(t->drs); gu_free(t->dd);
  free(t->a); free(t->asf); free(t->b); free(t->bsf); free(t->alpha); free(t->rs); free(t->mm);
}

static nvfp4moe_gemm_args gdata_args(const gdata* t) {
  nvfp4moe_gemm_args g;
  memset(&g, 0, sizeof g);
  g.groups = t->c.groups; g.m_max = t->c.m_max; g.n = t->c.n; g.k = t->c.k;
  g.a = t->da; g.a_sf = t->dasf; g.b = t->db; g.b_sf = t->dbsf; g.masked_m = t->dmm;
  g.alpha = t->c.alpha ? t->dalpha : 0; g.row_scale = t->c.row_scale ? t->drs : 0;
  g.d = t->dd; g.ldd = t->ldd; g.expected_m = t->c.expected_m;
  g.b_layout = t->c.tiled ? NVFP4MOE_WEIGHTS_TILED : NVFP4MOE_WEIGHTS_ROW_MAJOR;
  return g;
}

static float deq_elem(const unsigned char* q, const unsigned char* sf, int row, int col, int k) {
  unsigned char byte = q[(size_t)row * (k / 2) + col / 2];
  int kc4 = (k / 16 + 3) / 4;
  return nvfp4moe_ref_e2m1_to_f32((col & 1) ? byte >> 4 : byte & 15u) *
         nvfp4moe_ref_e4m3_to_f32(sf[nvfp4moe__sf_off_128x4(row, col / 16, kc4)]);
}

/* Checks D (downloaded) against float64; returns the number of bad elements. */
static long long gemm_verify(const gdata* t, const unsigned short* d, double* worst_rel) {
  const gcase* c = &t->c;
  long long bad = 0;
  int g, m, n, kk;
  float* ad = (float*)malloc(4 * (size_t)c->k);
  float* bd = (float*)malloc(4 * (size_t)c->n * c->k);
  *worst_rel = 0;
  for (g = 0; g < c->groups; ++g) {
    const unsigned char* ga = t->a + (size_t)g * c->m_max * c->k / 2;
    const unsigned char* gasf = t->asf + (size_t)g * nvfp4moe_sf_bytes(c->m_max, c->k, NVFP4MOE_SF_LAYOUT_128X4);
    const unsigned char* gb = t->b + (size_t)g * c->n * c->k / 2;
    const unsigned char* gbsf = t->bsf + (size_t)g * nvfp4moe_sf_bytes(c->n, c->k, NVFP4MOE_SF_LAYOUT_128X4);
    int valid = valid_rows(t->mm, g, c->m_max);
    for (n = 0; n < c->n && valid > 0; ++n)
      for (kk = 0; kk < c->k; ++kk) bd[(size_t)n * c->k + kk] = deq_elem(gb, gbsf, n, kk, c->k);
    for (m = 0; m < c->m_max; ++m) {
      const unsigned short* drow = d + ((size_t)g * c->m_max + m) * (size_t)t->ldd;
      double sc = (c->alpha ? t->alpha[g] : 1.0) * (c->row_scale ? t->rs[(size_t)g * c->m_max + m] : 1.0);
      if (m >= valid) { /* rows past masked_m keep their sentinel */
        for (n = 0; n < t->ldd; ++n) bad += drow[n] != 0xABAB;
        continue;
      }
      for (kk = 0; kk < c->k; ++kk) ad[kk] = deq_elem(ga, gasf, m, kk, c->k);
      for (n = 0; n < c->n; ++n) {
        const float* br = bd + (size_t)n * c->k;
        double acc = 0, mag = 0, ref, got, tol;
        for (kk = 0; kk < c->k; ++kk) {
          double p = (double)ad[kk] * br[kk];
          acc += p;
          mag += fabs(p);
        }
        ref = sc * acc;
        got = nvfp4moe_ref_bf16_to_f32(drow[n]);
        tol = ldexp(fabs(ref), -8) + c->k * ldexp(1.0, -23) * fabs(sc) * mag;
        if (!(fabs(got - ref) <= tol)) {
          if (bad < 3) printf("#   g%d m%d n%d: got %.6g ref %.6g tol %.3g\n", g, m, n, got, ref, tol);
          ++bad;
        }
        if (ref != 0 && fabs(got - ref) / fabs(ref) > *worst_rel) *worst_rel = fabs(got - ref) / fabs(ref);
      }
      for (n = c->n; n < t->ldd; ++n) bad += drow[n] != 0xABAB; /* columns past N untouched */
    }
  }
  free(ad);
  free(bd);
  return bad;
}

static int g_ws_cases; /* run_gcase calls that ran again with a GEMM workspace */

/* returns whether it ran again with a workspace */
static int run_gcase(nvfp4moe_context* ctx, const gcase* c, const char* label) {
  gdata t;
  nvfp4moe_gemm_args g;
  unsigned short* d;
  double worst;
  long long bad;
  gdata_make(&t, c);
  g = gdata_args(&t);
  gu_fill(t.dd, 0xAB, 2 * t.nd);
  CHECK(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0) == NVFP4MOE_SUCCESS, "%s: %s", label, nvfp4moe_last_error());
  gu_sync();
  d = (unsigned short*)malloc(2 * t.nd);
  gu_get(d, t.dd, 2 * t.nd);
  bad = gemm_verify(&t, d, &worst);
  CHECK(bad == 0, "%s G%d M%d N%d K%d mm%d rs%d tiled%d: %lld elements out of tolerance or touched", label, c->groups,
        c->m_max, c->n, c->k, c->mm_pattern, c->row_scale, c->tiled, bad);
  /* again with the workspace the configuration asks for (the token-producer tiles' widened
     tokens), filled with NaN bytes first: the same result */
  g.workspace_size = nvfp4moe_gemm_workspace_size(ctx, &g);
  if (g.workspace_size > 0) {
    ++g_ws_cases;
    g.workspace = gu_alloc(g.workspace_size);
    gu_fill(g.workspace, 0xFF, g.workspace_size);
    gu_fill(t.dd, 0xAB, 2 * t.nd);
    CHECK(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0) == NVFP4MOE_SUCCESS, "%s with workspace: %s", label,
          nvfp4moe_last_error());
    gu_sync();
    gu_get(d, t.dd, 2 * t.nd);
    bad = gemm_verify(&t, d, &worst);
    CHECK(bad == 0, "%s with a %zu-byte workspace G%d M%d N%d K%d mm%d rs%d tiled%d: %lld elements out of tolerance or "
          "touched", label, g.workspace_size, c->groups, c->m_max, c->n, c->k, c->mm_pattern, c->row_scale, c->tiled, bad);
    g.workspace_size -= 16; /* 16 bytes short: refused, naming the workspace */
    CHECK(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0) == NVFP4MOE_ERROR_INVALID_ARGUMENT &&
          strstr(nvfp4moe_last_error(), "workspace") != 0, "%s: a short workspace gave '%s'", label, nvfp4moe_last_error());
    gu_sync();
    gu_free(g.workspace);
  }
  free(d);
  gdata_free(&t);
  return g.workspace_size > 0;
}

static const gcase g_gemm_cases[] = {
    /* groups, m_max, n, k, masked_m pattern, row_scale, alpha, ldd_extra, expected_m */
    {1, 300, 2944, 2880, 4, 1, 1, 0, 0, 0},   {1, 257, 1856, 768, 0, 0, 1, 8, 0, 0},   {8, 64, 1856, 736, 4, 1, 1, 0, 33, 0},
    {8, 50, 2880, 768, 2, 0, 0, 0, 0, 0},     {32, 40, 512, 512, 4, 1, 1, 16, 20, 0},  {32, 256, 256, 1024, 4, 1, 1, 0, 33, 0},
    {128, 16, 128, 256, 4, 0, 1, 0, 8, 0},    {128, 9, 136, 96, 3, 1, 1, 0, 1, 0},     {256, 8, 64, 128, 2, 1, 1, 0, 4, 0},
    {256, 4, 72, 64, 1, 1, 1, 0, 0, 0},       {4, 129, 384, 2048, 0, 1, 1, 0, 129, 0}, {2, 1, 8, 32, 0, 0, 0, 0, 0, 0},
    /* TILED weights (N % 16 == 0): decode, the wgmma tiles, one 128-K step; then K % 128 != 0 (the last
       step padded: K 2880 ends half way, K 96 is one partial step, K 4160 a quarter in) */
    {8, 40, 272, 1152, 4, 1, 1, 0, 4, 1},  {8, 64, 400, 2048, 4, 1, 1, 8, 33, 1}, {4, 129, 144, 128, 0, 1, 1, 0, 129, 1},
    {8, 8, 288, 2880, 4, 1, 1, 0, 1, 1},   {8, 64, 160, 2880, 4, 1, 1, 0, 33, 1}, {16, 9, 64, 96, 3, 1, 1, 0, 1, 1},
    {2, 300, 144, 4160, 0, 1, 1, 0, 129, 1},
    /* decode with more (group, 128-row) CTAs of the swap-AB tile than an H200 holds at once (576 > 3 x 132);
       N ends inside a block */
    {64, 8, 1056, 256, 4, 1, 1, 0, 4, 0},
};

static void test_gemm_shapes(void) {
  size_t i;
  NEED_GPU();
  for (i = 0; i < sizeof g_gemm_cases / sizeof g_gemm_cases[0]; ++i) {
    if (g_quick && i < 2) continue;
    run_gcase(g_ctx, &g_gemm_cases[i], "default tiles");
  }
}

/* Every tile configuration the dispatcher can pick (every gemm_* specialisation but the
   SM100 one, which has its own backend), forced through NVFP4MOE_GEMM_CONFIG, in the same
   process as the default one. */
static void test_gemm_every_tile_config(void) {
  /* the last case: expected_m 20 below masked_m (300), so the wgmma kernels loop over token tiles;
     K 4160 ends inside a 128-K step, N 136 inside a 128-row block */
  static const gcase cases[] = {{3, 300, 1856, 736, 4, 1, 1, 8, 0, 0}, {5, 70, 264, 2880, 4, 0, 1, 0, 0, 0},
                                {2, 300, 136, 4160, 0, 1, 1, 0, 20, 0},
                                /* TILED weights: the twin module of the configuration; N 272 ends
                                   inside a 128-row block, K 1152 inside a 1024-K chunk */
                                {3, 300, 272, 1152, 4, 1, 1, 8, 0, 1}, {2, 300, 144, 4224, 0, 1, 1, 0, 20, 1},
                                /* 1, 2 and 3 tokens per group (groups far below every tile): K 4160 over
                                   five 1024-K chunks ending inside a step, N 264 inside a 128-row block;
                                   then TILED weights */
                                {6, 8, 264, 4160, 7, 1, 1, 8, 0, 0}, {6, 16, 272, 1152, 7, 1, 1, 0, 0, 1},
                                /* TILED, K 4224 (33 steps, five chunks): the swap-AB tiles' token workspace */
                                {6, 16, 272, 4224, 7, 1, 1, 0, 0, 1},
                                /* TILED with a padded last step: K 2880 (half a step), K 4160 (a quarter;
                                   1-3 tokens: the swap-AB workspace) */
                                {3, 300, 272, 2880, 4, 1, 1, 8, 0, 1}, {6, 16, 272, 4160, 7, 1, 1, 0, 0, 1},
                                /* 22 groups, 1 .. 140 tokens: every N a token-producer tile picks for a
                                   part-full tile, and each side of its bounds; both layouts */
                                {22, 140, 272, 1152, 8, 1, 1, 0, 0, 0}, {22, 140, 272, 2880, 8, 0, 1, 0, 0, 1},
                                /* TILED with K % 256 == 0: the token-producer tiles' _k256 twins (loads without
                                   predicates); N 272 ends inside a block; K 256 is one round of two steps, with
                                   expected_m 20 below masked_m so the tiles loop over token tiles; these two
                                   and K 4096 with 1-3 tokens (the token workspace) run the 8-token swap-AB
                                   tile's _k256 twin too */
                                {3, 300, 272, 1024, 4, 1, 1, 8, 0, 1}, {2, 300, 144, 256, 0, 1, 1, 0, 20, 1},
                                {6, 16, 272, 4096, 7, 1, 1, 0, 0, 1},
                                /* N 448: two 192-row blocks and one of 64 rows (the 128-token tile's three
                                   warpgroups), one 256-row block and one of 192 (four); 140 tokens in every
                                   group: two 128-token tiles a block; TILED with K 2048 and 1152 (the 128-token
                                   tile's _k256 and _tiled twins on the one-CTA-a-unit grid, K > 1024), then
                                   row-major */
                                {3, 140, 448, 2048, 0, 1, 1, 0, 0, 1}, {2, 140, 448, 1152, 0, 0, 1, 0, 0, 1},
                                {3, 140, 448, 736, 0, 1, 1, 8, 0, 0},
                                /* N 208: a 16-row last block, its one warpgroup's rows ending inside it */
                                {2, 140, 208, 2048, 0, 0, 1, 0, 0, 1}};
  nvfp4moe_info info;
  const char* config;
  int i, want, wrong;
  size_t j;
  NEED_GPU();
  nvfp4moe_query_info(g_ctx, &info);
  if (getenv("TEST_CONFIGS")) printf("# TEST_CONFIGS=%s: only the matching configurations\n", getenv("TEST_CONFIGS"));
  for (i = 0; (config = nvfp4moe_specialization_name(i)) != 0; ++i) {
    nvfp4moe_context* ctx = 0;
    nvfp4moe_desc d;
    if (strncmp(config, "gemm_", 5) != 0 || strncmp(config, "gemm_sm100", 10) == 0) continue;
    if (strstr(config, "_tiled")) continue; /* a twin: run with its configuration's TILED cases */
    if (getenv("TEST_CONFIGS") && !strstr(config, getenv("TEST_CONFIGS"))) continue; /* tuning runs: a subset */
    if (strncmp(config, "gemm_sm90", 9) == 0 && strcmp(info.target, "sm_90a") != 0) {
      printf("# %s skipped: needs an sm_90a target (this GPU's is %s)\n", config, info.target);
      continue;
    }
    memset(&d, 0, sizeof d);
    setenv("NVFP4MOE_GEMM_CONFIG", config, 1);
    CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_SUCCESS, "%s: %s", config, nvfp4moe_last_error());
    unsetenv("NVFP4MOE_GEMM_CONFIG");
    if (!ctx) continue;
    /* on the sm90 backend a token-producer tile asks for the token workspace in every case, the
       8-token swap-AB tile for TILED weights with K >= 4096 */
    want = wrong = 0;
    for (j = 0; j < sizeof cases / sizeof cases[0]; ++j) {
      int ran = run_gcase(ctx, &cases[j], config);
      int expect = strstr(config, "gemm_sm90_ws") ||
                   (!strcmp(config, "gemm_swapab_t8") && cases[j].tiled && cases[j].k >= 4096);
      want += expect;
      wrong += ran != expect;
    }
    if (info.gemm_backend == NVFP4MOE_BACKEND_SM90 && !getenv("NVFP4MOE_TOKEN_PREPASS"))
      CHECK(wrong == 0, "%s: %d of %d cases ran with a workspace where the rule says otherwise (%d should)", config, wrong,
            (int)(sizeof cases / sizeof cases[0]), want);
    nvfp4moe_destroy(ctx);
  }
  printf("# %d cases ran again with the token workspace\n", g_ws_cases);
}

/* The resident grid's work units (gemm_wgmma_ws.cu): the token-producer tiles forced, under the default (the
   gap-free numbering, from a table of units per group in shared memory, on the TILED 48-token tile, which is
   resident; the old numbering on the others) and the tuning defines -DNVF_PCOMPACT=0 (no table, the 48-token
   tile not resident: 0.5.4), =1 (the table on every resident tile) and =2 (and the 48-token tile resident), or
   only under $NVFP4MOE_TUNE_DEFINE where a tuning run sets one; and the 128-token tile, resident (never with the
   table) on TILED weights with K % 256 == 0 and K <= 1024. Each launch's logged dynamic shared memory says
   whether the table was built: the kernel's bytes, plus 4 (groups + 1) where the define asks for it, the tile is
   resident and it fits; a resident launch has at most one CTA per SM. */
/* The number a launch logged just before `what` (" CTAs of ", " bytes of dynamic shared memory"), or -1 */
static long long launched_number(const char* launched, const char* what) {
  const char* e = strstr(launched, what);
  const char* b = e;
  while (b && b > launched && b[-1] >= '0' && b[-1] <= '9') --b;
  return e && b < e ? atoll(b) : -1;
}
/* Whether the host puts the `tok`-token tile on the resident grid under the define `def` for K `k`
   (nvfp4moe__ws_persist's and nvfp4moe__ws_res128's rules, written out again; level: def's NVF_PCOMPACT, -1
   without one) */
static int resident_tile(const char* def, int tok, int tiled, int level, int k) {
  const char* d = strstr(def, "NVF_PERSIST");
  const char* k256 = getenv("NVFP4MOE_K256");
  if (d && strncmp(d + 11, "_T32", 4) == 0) return tok == 32;
  if (d) return d[11] != '=' || atoi(d + 12) != 0; /* every tile, or none */
  if (tok == 128) /* the resident twin of the TILED _k256 module, K <= 1024 (or a tuning run's -DNVF_RES128K=<K>) */
    return tiled && k % 256 == 0 && k <= (strstr(def, "NVF_RES128K=") ? atoi(strstr(def, "NVF_RES128K=") + 12) : 1024) &&
           !(k256 && strcmp(k256, "0") == 0) && !(strstr(def, "NVF_RES128=") && atoi(strstr(def, "NVF_RES128=") + 11) == 0);
  return tok == 32 || (tiled && (tok == 64 || (tok == 48 && (level < 0 || level >= 2))));
}
/* ... for some K and layout */
static int resident_somewhere(const char* def, int tok, int level) {
  return resident_tile(def, tok, 0, level, 256) || resident_tile(def, tok, 1, level, 256);
}
static void test_gemm_resident_units(void) {
  static const gcase cases[] = {
      /* 70 groups of 1 .. 140 tokens (each side of every tile's token counts), expected_m 20: with the table
         every token tile of m_max is a unit; three passes of its 32-group scan; TILED, then row-major */
      {70, 140, 144, 1152, 8, 1, 1, 0, 20, 1}, {70, 140, 144, 1152, 8, 1, 1, 8, 20, 0},
      /* one group of 140 tokens (expected_m 20: with the table, units past what the grid from expected_m
         covers); 64 groups (whole passes of the scan, lane 31's boundary) of ~33 tokens */
      {1, 140, 272, 1152, 0, 1, 1, 0, 20, 1}, {64, 70, 144, 256, 5, 0, 1, 0, 33, 1},
      /* 1800 groups of 0 .. 4 tokens (random: empty, full and out-of-range masked_m), over 1024 (the ballot
         search's second round): without a workspace the 64-token tile's table (1801 ints) does not fit beside
         its 224256 bytes (227 KB on every sm_90a card), with one (no raw token stages) it does */
      {1800, 4, 16, 256, 9, 0, 1, 0, 0, 1},
      /* K 768, TILED (the 128-token tile's resident twin): up to 300 tokens, expected_m 129, so experts past
         the tiles it covers loop; N 400 ends inside a 192-row block */
      {3, 300, 400, 768, 0, 1, 1, 0, 129, 1},
      /* K 768, TILED, 400 groups of 0 .. 4 tokens (random, out-of-range masked_m too): 400 units over the SMs, so
         each CTA takes about three and loads the next one's first steps in its last round (six 128-K steps a
         unit); a grid of more CTAs than SMs here would fail the resident check below */
      {400, 4, 192, 768, 9, 1, 1, 0, 0, 1}};
  static const char* configs[] = {"gemm_sm90_ws_t32_wg4",      "gemm_sm90_ws_t32_wg4_varn", "gemm_sm90_ws_t64_wg4",
                                  "gemm_sm90_ws_t64_wg4_varn", "gemm_sm90_ws_t48_wg4",      "gemm_sm90_ws_t48_wg4_varn",
                                  "gemm_sm90_ws_t128_wg3",     "gemm_sm90_ws_t128_wg3_varn"};
  static const char* defines[] = {"", "-DNVF_PCOMPACT=0", "-DNVF_PCOMPACT=1", "-DNVF_PCOMPACT=2"};
  const char* env = getenv("NVFP4MOE_TUNE_DEFINE");
  const char* prepass = getenv("NVFP4MOE_TOKEN_PREPASS");
  char given[64] = "";
  nvfp4moe_info info;
  size_t i, j, n;
  int di, tables = 0;
  NEED_GPU();
  nvfp4moe_query_info(g_ctx, &info);
  if (strcmp(info.target, "sm_90a") != 0) {
    char why[128];
    snprintf(why, sizeof why, "the token-producer tiles need an sm_90a target (this GPU's is %s)", info.target);
    tu_skip(why);
    return;
  }
  if (info.gemm_backend != NVFP4MOE_BACKEND_SM90 || (prepass && strcmp(prepass, "0") == 0)) {
    tu_skip("the token-producer tiles run on the sm90 GEMM backend with the token workspace (not under "
            "NVFP4MOE_BACKEND=portable or NVFP4MOE_TOKEN_PREPASS=0)");
    return;
  }
  /* a tuning run's define, as the context keeps it (nvfp4moe_create: -D..., under 64 characters, not the layout's) */
  if (env && strncmp(env, "-D", 2) == 0 && strlen(env) < sizeof given && strncmp(env, "-DNVF_WTILED", 12) != 0) {
    strcpy(given, env);
    printf("# NVFP4MOE_TUNE_DEFINE=%s: only under it\n", given);
    if (!resident_somewhere(given, 32, -1) && !resident_somewhere(given, 64, -1) && !resident_somewhere(given, 48, -1) &&
        !resident_somewhere(given, 128, -1)) {
      tu_skip("no token-producer tile is resident under this tuning define (-DNVF_PERSIST=0)");
      return;
    }
  }
  for (di = 0; di < 4; ++di) {
    const char* def = given[0] ? given : defines[di];
    const char* pc = strstr(def, "NVF_PCOMPACT");
    const int level = !pc ? -1 : pc[12] != '=' ? 1 : atoi(pc + 13); /* -1: the default */
    const int compact = level != 0;
    int with_table = 0, may_table = 0;
    if (given[0] && di > 0) break;
    for (i = 0; i < sizeof configs / sizeof configs[0]; ++i) {
      const int tok = atoi(strstr(configs[i], "_t") + 2);
      const int cwg = tok == 128 ? 3 : 4, sps = tok == 128 ? 1 : 2;
      const int tabled = tok != 128 && (level < 0 ? tok == 48 : level > 0); /* the define asks for the table */
      nvfp4moe_context* ctx = 0;
      nvfp4moe_desc d;
      if (!resident_somewhere(def, tok, level)) continue; /* not resident: the every-tile test's */
      if (getenv("TEST_CONFIGS") && !strstr(configs[i], getenv("TEST_CONFIGS"))) continue; /* tuning runs: a subset */
      if (g_quick && !tabled && strstr(configs[i], "_varn")) continue; /* quick, no table: the every-tile test runs those */
      memset(&d, 0, sizeof d);
      d.logger.func = launch_logger;
      d.logger.level = NVFP4MOE_LOG_DEBUG;
      setenv("NVFP4MOE_GEMM_CONFIG", configs[i], 1);
      if (def[0]) setenv("NVFP4MOE_TUNE_DEFINE", def, 1);
      CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_SUCCESS, "%s %s: %s", configs[i], def, nvfp4moe_last_error());
      unsetenv("NVFP4MOE_GEMM_CONFIG");
      if (env) setenv("NVFP4MOE_TUNE_DEFINE", given[0] ? given : env, 1);
      else unsetenv("NVFP4MOE_TUNE_DEFINE");
      if (!ctx) continue;
      may_table += tabled;
      for (j = 0; j < sizeof cases / sizeof cases[0]; ++j) {
        const gcase* c = &cases[j];
        const int resident = resident_tile(def, tok, c->tiled, level, c->k);
        gdata t;
        nvfp4moe_gemm_args g;
        unsigned short* out;
        double worst;
        gdata_make(&t, c);
        g = gdata_args(&t);
        out = (unsigned short*)malloc(2 * t.nd);
        for (n = 0; n < 2; ++n) { /* without, then with the workspace (NaN bytes first) */
          const int base = 6 * sps * tok * 256 + (n ? 0 : 3 * tok * sps * 72) + (tok <= 48 ? 4 * cwg * tok * 32 : 0);
          const int table = tabled && resident && base + 4 * (c->groups + 1) + 1024 <= 232448;
          long long bad, smem;
          if (n) {
            g.workspace_size = nvfp4moe_gemm_workspace_size(ctx, &g);
            CHECK(g.workspace_size > 0, "%s: the token-producer tile asks for a workspace", configs[i]);
            if (g.workspace_size == 0) break;
            g.workspace = gu_alloc(g.workspace_size);
            gu_fill(g.workspace, 0xFF, g.workspace_size);
          }
          gu_fill(t.dd, 0xAB, 2 * t.nd);
          g_launched[0] = '\0';
          CHECK(nvfp4moe_grouped_gemm_nt_masked(ctx, &g, 0) == NVFP4MOE_SUCCESS, "%s %s: %s", configs[i], def,
                nvfp4moe_last_error());
          gu_sync();
          gu_get(out, t.dd, 2 * t.nd);
          bad = gemm_verify(&t, out, &worst);
          CHECK(bad == 0, "%s %s G%d M%d N%d K%d tiled%d workspace %d: %lld elements out of tolerance or touched",
                configs[i], def, c->groups, c->m_max, c->n, c->k, c->tiled, (int)n, bad);
          smem = launched_number(g_launched, " bytes of dynamic shared memory");
          CHECK(smem == base + (table ? 4 * (c->groups + 1) : 0),
                "%s %s G%d tiled%d workspace %d: launched with %lld bytes of dynamic shared memory, want %d (table %d): '%s'",
                configs[i], def, c->groups, c->tiled, (int)n, smem, base + (table ? 4 * (c->groups + 1) : 0),
                table, g_launched);
          if (resident) /* at most one CTA per SM (1800 groups: far more units than SMs) */
            CHECK(launched_number(g_launched, " CTAs of ") <= info.sm_count, "%s %s G%d K%d tiled%d: resident, yet '%s'",
                  configs[i], def, c->groups, c->k, c->tiled, g_launched);
          if (table) { /* a CTA per unit up to the SM count: row blocks x every token tile of m_max */
            const long long units = (long long)c->groups * ((c->n + 64 * cwg - 1) / (64 * cwg)) * ((c->m_max + tok - 1) / tok);
            const long long want = units < info.sm_count ? units : info.sm_count;
            CHECK(launched_number(g_launched, " CTAs of ") == want, "%s %s G%d workspace %d: want %lld CTAs: '%s'", configs[i],
                  def, c->groups, (int)n, want, g_launched);
          }
          CHECK(strstr(g_launched, c->tiled ? "nvf_gemm_wgmma_ws_tiled," : "nvf_gemm_wgmma_ws,") != 0,
                "%s %s: the last launch was not the token-producer GEMM: '%s'", configs[i], def, g_launched);
          with_table += table;
          if (n) gu_free(g.workspace);
        }
        free(out);
        gdata_free(&t);
      }
      nvfp4moe_destroy(ctx);
    }
    if (compact && !given[0] && may_table) /* (a given define's launches are checked one by one above) */
      CHECK(with_table > 0, "%s: no launch built the unit table", def);
    tables += with_table;
  }
  printf("# %d launches with the unit table\n", tables);
}

/* A poisoned group (NaN SFs in A, NaN alpha) changes nothing in the other groups. */
static void test_gemm_group_isolation(void) {
  gcase c = {4, 70, 256, 512, 0, 1, 1, 0, 0, 0};
  gdata t;
  nvfp4moe_gemm_args g;
  unsigned short *clean, *poisoned;
  size_t per_group;
  float nan = tu_f32(0x7FC00000u);
  int gi;
  NEED_GPU();
  gdata_make(&t, &c);
  g = gdata_args(&t);
  per_group = (size_t)c.m_max * (size_t)t.ldd;
  clean = (unsigned short*)malloc(2 * t.nd);
  poisoned = (unsigned short*)malloc(2 * t.nd);
  gu_fill(t.dd, 0xAB, 2 * t.nd);
  CHECK(nvfp4moe_grouped_gemm_nt_masked(g_ctx, &g, 0) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  gu_sync();
  gu_get(clean, t.dd, 2 * t.nd);
  gu_fill(t.dasf + nvfp4moe_sf_bytes(c.m_max, c.k, NVFP4MOE_SF_LAYOUT_128X4), 0x7F,
          nvfp4moe_sf_bytes(c.m_max, c.k, NVFP4MOE_SF_LAYOUT_128X4)); /* group 1: every SF NaN */
  gu_put(t.dalpha + 4, &nan, 4);
  gu_fill(t.dd, 0xAB, 2 * t.nd);
  CHECK(nvfp4moe_grouped_gemm_nt_masked(g_ctx, &g, 0) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  gu_sync();
  gu_get(poisoned, t.dd, 2 * t.nd);
  for (gi = 0; gi < 4; ++gi) {
    if (gi == 1) {
      size_t i, nans = 0;
      for (i = 0; i < per_group; ++i) nans += (poisoned[per_group + i] & 0x7FFF) > 0x7F80;
      CHECK(nans == per_group, "the poisoned group shows its fault (%zu of %zu NaN)", nans, per_group);
    } else {
      CHECK(memcmp(clean + gi * per_group, poisoned + gi * per_group, 2 * per_group) == 0, "group %d changed", gi);
    }
  }
  free(clean); free(poisoned);
  gdata_free(&t);
}

/* Weight relayout on the GPU: the host reference's bytes, both directions, the bytes around
   the destination untouched, and the argument checks. */
static void test_weights_relayout(void) {
  static const int shapes[][3] = {{1, 16, 128}, {3, 272, 1152}, {2, 48, 7168}, {3, 48, 2880}, {2, 16, 96}, {1, 32, 4160}};
  size_t i, si;
  NEED_GPU();
  for (si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
    const int G = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
    /* nt: the TILED matrix, larger than nb when K % 128 != 0 (zero padding, which the reference writes too) */
    const size_t nb = (size_t)G * N * K / 2, nt = (size_t)G * nvfp4moe_weight_bytes(N, K, NVFP4MOE_WEIGHTS_TILED);
    unsigned char *w = (unsigned char*)malloc(nb), *ref = (unsigned char*)malloc(nt), *got = (unsigned char*)malloc(nt + 64);
    nvfp4moe_devptr dsrc = gu_alloc(nb), ddst = gu_alloc(nt + 64), dback = gu_alloc(nb + 64);
    nvfp4moe_weights_relayout_args a;
    long long diff = 0, guard = 0;
    for (i = 0; i < nb; ++i) w[i] = (unsigned char)tu_rand();
    gu_put(dsrc, w, nb);
    gu_fill(ddst, 0xAB, nt + 64);
    gu_fill(dback, 0xCD, nb + 64);
    CHECK(nt == (size_t)G * N * ((K + 127) / 128) * 64 && (K % 128 != 0) == (nt > nb), "nvfp4moe_weight_bytes: %zu", nt);
    memset(&a, 0, sizeof a);
    a.groups = G; a.n = N; a.k = K; a.src = NVFP4MOE_HOSTPTR(w); a.dst = NVFP4MOE_HOSTPTR(ref);
    a.dst_layout = NVFP4MOE_WEIGHTS_TILED;
    CHECK(nvfp4moe_ref_weights_relayout(&a) == NVFP4MOE_SUCCESS, "ref: %s", nvfp4moe_last_error());
    a.src = dsrc; a.dst = ddst;
    CHECK(nvfp4moe_weights_relayout(g_ctx, &a, 0) == NVFP4MOE_SUCCESS, "to tiled: %s", nvfp4moe_last_error());
    a.src = ddst; a.dst = dback; a.dst_layout = NVFP4MOE_WEIGHTS_ROW_MAJOR;
    CHECK(nvfp4moe_weights_relayout(g_ctx, &a, 0) == NVFP4MOE_SUCCESS, "back: %s", nvfp4moe_last_error());
    gu_sync();
    gu_get(got, ddst, nt + 64);
    for (i = 0; i < nt; ++i) diff += got[i] != ref[i];
    for (i = nt; i < nt + 64; ++i) guard += got[i] != 0xAB;
    CHECK(diff == 0 && guard == 0, "G%d N%d K%d: %lld bytes differ from the reference, %lld written past the end", G, N, K,
          diff, guard);
    gu_get(got, dback, nb + 64);
    diff = 0;
    guard = 0;
    for (i = 0; i < nb; ++i) diff += got[i] != w[i];
    for (i = nb; i < nb + 64; ++i) guard += got[i] != 0xCD;
    CHECK(diff == 0 && guard == 0, "G%d N%d K%d: %lld bytes differ after the round trip, %lld written past the end", G, N,
          K, diff, guard);
    /* bad arguments: nothing launched, a message naming the argument */
    a.src = dsrc; a.dst = ddst; a.dst_layout = NVFP4MOE_WEIGHTS_TILED;
    a.k = K + 16;
    CHECK(nvfp4moe_weights_relayout(g_ctx, &a, 0) == NVFP4MOE_ERROR_INVALID_ARGUMENT && strstr(nvfp4moe_last_error(), "args->k"),
          "K %% 32: %s", nvfp4moe_last_error());
    a.k = K; a.n = N + 8;
    CHECK(nvfp4moe_weights_relayout(g_ctx, &a, 0) == NVFP4MOE_ERROR_INVALID_ARGUMENT && strstr(nvfp4moe_last_error(), "args->n"),
          "N %% 16: %s", nvfp4moe_last_error());
    a.n = N; a.dst = dsrc + 16;
    CHECK(nvfp4moe_weights_relayout(g_ctx, &a, 0) == NVFP4MOE_ERROR_INVALID_ARGUMENT && strstr(nvfp4moe_last_error(), "overlap"),
          "overlap: %s", nvfp4moe_last_error());
    a.dst = ddst + 8;
    CHECK(nvfp4moe_weights_relayout(g_ctx, &a, 0) == NVFP4MOE_ERROR_INVALID_ARGUMENT && strstr(nvfp4moe_last_error(), "aligned"),
          "misaligned: %s", nvfp4moe_last_error());
    a.dst = ddst; a.dst_layout = (nvfp4moe_weight_layout)7;
    CHECK(nvfp4moe_weights_relayout(g_ctx, &a, 0) == NVFP4MOE_ERROR_INVALID_ARGUMENT &&
              strstr(nvfp4moe_last_error(), "dst_layout"), "layout: %s", nvfp4moe_last_error());
    gu_free(dsrc); gu_free(ddst); gu_free(dback);
    free(w); free(ref); free(got);
  }
}

/* The same GEMM on ROW_MAJOR and TILED weights gives the same bits where both layouts run the
   same specialisation (sm80/sm90 backends: only the addresses differ), for the default tiles at
   decode and wgmma token counts; both are within the GEMM tolerance everywhere (on sm100 TILED
   runs the sm_80 kernels, which sum in another order); a TILED GEMM with N % 16 != 0 is
   refused naming b_layout. */
static void test_gemm_tiled_same_bits(void) {
  static const gcase cases[] = {{8, 8, 512, 2048, 0, 1, 1, 0, 4, 0}, {4, 48, 256, 7168, 4, 1, 1, 0, 33, 0},
                                {2, 200, 384, 768, 4, 0, 1, 0, 150, 0}, {8, 8, 512, 2880, 0, 1, 1, 0, 4, 0},
                                {4, 48, 256, 2880, 4, 1, 1, 0, 33, 0}};
  size_t j;
  nvfp4moe_info info;
  int same_kernel;
  NEED_GPU();
  nvfp4moe_query_info(g_ctx, &info);
  same_kernel = info.gemm_backend != NVFP4MOE_BACKEND_SM100;
  if (!same_kernel) printf("# sm100 backend: TILED runs the sm_80 kernels; compared within tolerance, not bit for bit\n");
  for (j = 0; j < sizeof cases / sizeof cases[0]; ++j) {
    gcase c = cases[j];
    gdata t;
    nvfp4moe_gemm_args g;
    unsigned short *d0 = 0, *d1 = 0;
    long long diff = 0;
    size_t i;
    int pass;
    const uint64_t state = tu_rng_state;
    for (pass = 0; pass < 2; ++pass) {
      c.tiled = pass;
      tu_rng_state = state; /* the same random operands for both layouts */
      gdata_make(&t, &c);
      g = gdata_args(&t);
      gu_fill(t.dd, 0xAB, 2 * t.nd);
      CHECK(nvfp4moe_grouped_gemm_nt_masked(g_ctx, &g, 0) == NVFP4MOE_SUCCESS, "tiled %d: %s", pass, nvfp4moe_last_error());
      gu_sync();
      if (pass == 0) { d0 = (unsigned short*)malloc(2 * t.nd); gu_get(d0, t.dd, 2 * t.nd); }
      else { d1 = (unsigned short*)malloc(2 * t.nd); gu_get(d1, t.dd, 2 * t.nd); }
      {
        double worst;
        long long bad = gemm_verify(&t, pass ? d1 : d0, &worst);
        CHECK(bad == 0, "tiled %d G%d M%d N%d K%d: %lld elements out of tolerance or touched", pass, c.groups, c.m_max,
              c.n, c.k, bad);
      }
      if (pass == 1) {
        for (i = 0; i < t.nd && same_kernel; ++i) diff += d0[i] != d1[i];
        CHECK(diff == 0, "G%d M%d N%d K%d: %lld outputs differ between ROW_MAJOR and TILED weights", c.groups, c.m_max,
              c.n, c.k, diff);
        g.n = c.n - 8; /* still a multiple of 8, no longer of 16 */
        CHECK(nvfp4moe_grouped_gemm_nt_masked(g_ctx, &g, 0) == NVFP4MOE_ERROR_INVALID_ARGUMENT &&
                  strstr(nvfp4moe_last_error(), "b_layout"), "TILED with N %% 16: %s", nvfp4moe_last_error());
      }
      gdata_free(&t);
    }
    free(d0); free(d1);
  }
}

/* A captured CUDA graph replayed with new masked_m values equals eager execution. */
static void test_gemm_graph_replay(void) {
  gcase c = {6, 96, 384, 768, 0, 1, 1, 0, 40, 0};
  gdata t;
  nvfp4moe_gemm_args g;
  gu_stream s = 0;
  gu_graph graph = 0;
  gu_graph_exec exec = 0;
  unsigned short *eager, *replay;
  int round;
  NEED_GPU();
  gdata_make(&t, &c);
  g = gdata_args(&t);
  eager = (unsigned short*)malloc(2 * t.nd);
  replay = (unsigned short*)malloc(2 * t.nd);
  gu_check(gu.stream_create(&s, 1), "cuStreamCreate");
  gu_check(gu.begin_capture(s, 0 /* global */), "cuStreamBeginCapture");
  CHECK(nvfp4moe_grouped_gemm_nt_masked(g_ctx, &g, s) == NVFP4MOE_SUCCESS, "capture: %s", nvfp4moe_last_error());
  gu_check(gu.end_capture(s, &graph), "cuStreamEndCapture");
  gu_check(gu.graph_instantiate(&exec, graph, 0), "cuGraphInstantiateWithFlags");
  for (round = 0; round < 4; ++round) {
    int* mm = make_masked_m(c.groups, c.m_max, 4);
    gu_put(t.dmm, mm, 4 * (size_t)c.groups);
    gu_fill(t.dd, 0xAB, 2 * t.nd);
    gu_check(gu.graph_launch(exec, s), "cuGraphLaunch");
    gu_check(gu.stream_sync(s), "sync");
    gu_get(replay, t.dd, 2 * t.nd);
    gu_fill(t.dd, 0xAB, 2 * t.nd);
    CHECK(nvfp4moe_grouped_gemm_nt_masked(g_ctx, &g, s) == NVFP4MOE_SUCCESS, "eager: %s", nvfp4moe_last_error());
    gu_check(gu.stream_sync(s), "sync");
    gu_get(eager, t.dd, 2 * t.nd);
    CHECK(memcmp(eager, replay, 2 * t.nd) == 0, "round %d: replay differs from eager", round);
    free(t.mm);
    t.mm = mm;
    {
      double worst;
      CHECK(gemm_verify(&t, replay, &worst) == 0, "round %d: replay wrong", round);
    }
  }
  gu.graph_exec_destroy(exec);
  gu.graph_destroy(graph);
  gu.stream_destroy(s);
  free(eager); free(replay);
  gdata_free(&t);
}

/* ---- the expert layer --------------------------------------------------------------------------- */

/* NVFP4 weights [E, rows, K] from bf16 values with one decode scale per expert and per
   half (gate and up may differ), 128x4 SFs. Host buffers. */
static void make_half(const float* w, int E, int rows, int K, float* scale, unsigned char* q, unsigned char* sflin) {
  int e;
  for (e = 0; e < E; ++e) {
    size_t n = (size_t)rows * K, i;
    unsigned short* wb = (unsigned short*)malloc(n * 2);
    nvfp4moe_quantize_args a;
    double amax = 0;
    for (i = 0; i < n; ++i) {
      wb[i] = nvfp4moe_ref_f32_to_bf16(w[(size_t)e * n + i]);
      if (fabs(nvfp4moe_ref_bf16_to_f32(wb[i])) > amax) amax = fabs(nvfp4moe_ref_bf16_to_f32(wb[i]));
    }
    scale[e] = (float)(amax / 2688.0);
    memset(&a, 0, sizeof a);
    a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = rows; a.k = K; a.x = NVFP4MOE_HOSTPTR(wb);
    a.out_e2m1 = NVFP4MOE_HOSTPTR(q + (size_t)e * n / 2); a.out_sf = NVFP4MOE_HOSTPTR(sflin + (size_t)e * rows * (K / 16));
    a.sf_layout = NVFP4MOE_SF_LAYOUT_LINEAR; a.scale_value = scale[e];
    nvfp4moe_ref_quantize_per_tensor(&a);
    free(wb);
  }
}

/* mode 0, 2: per-token scaling, 1: per-expert (expected_m 30: the 48-token tile on sm90, else 32); 3: per-token with TILED weights (I 256), checked
   against the reference on the row-major weights; 4: as 3 with hidden 4096 in decode (expected_m 4: the 8-token swap-AB
   tile, on sm90 GEMM1's token rows in the workspace, many groups above 8 tokens); 5: as 3 with hidden 352 and inter 224
   (TILED with a padded last 128-K step in both GEMMs) */
static void test_moe_layer(void) {
  int E = 8, H, I, M = 40, e, r, mode;
  size_t nx, nb13, nb2;
  NEED_GPU();
  for (mode = 0; mode < 6; ++mode) {
    I = mode == 5 ? 224 : mode >= 3 ? 256 : 192;
    H = mode == 4 ? 4096 : mode == 5 ? 352 : 256; /* (mode 4: GEMM1 K >= 4096, where the swap-AB tiles take the workspace) */
    nx = (size_t)E * M * H;
    float *wg = (float*)malloc(4 * (size_t)E * I * H), *wu = (float*)malloc(4 * (size_t)E * I * H);
    float *w2 = (float*)malloc(4 * (size_t)E * H * I);
    float gs[8], us[8], s2[8], in1[8], in2[8];
    unsigned char *qg = (unsigned char*)malloc((size_t)E * I * H / 2), *qu = (unsigned char*)malloc((size_t)E * I * H / 2);
    unsigned char *q13 = (unsigned char*)malloc((size_t)E * I * H), *q2 = (unsigned char*)malloc((size_t)E * H * I / 2);
    unsigned char *lg = (unsigned char*)malloc((size_t)E * I * H / 16), *lu = (unsigned char*)malloc((size_t)E * I * H / 16);
    unsigned char *l13 = (unsigned char*)malloc((size_t)E * 2 * I * H / 16), *l2 = (unsigned char*)malloc((size_t)E * H * I / 16);
    size_t n13sf = (size_t)E * nvfp4moe_sf_bytes(2 * I, H, NVFP4MOE_SF_LAYOUT_128X4);
    size_t n2sf = (size_t)E * nvfp4moe_sf_bytes(H, I, NVFP4MOE_SF_LAYOUT_128X4);
    unsigned char *s13 = (unsigned char*)malloc(n13sf), *s2f = (unsigned char*)malloc(n2sf);
    unsigned short *x = (unsigned short*)malloc(2 * nx), *out = (unsigned short*)malloc(2 * nx), *outr = (unsigned short*)malloc(2 * nx);
    int* mm = make_masked_m(E, M, 4);
    nvfp4moe_moe_weights w, wh;
    nvfp4moe_moe_args a, ah;
    nvfp4moe_sf_convert_args cv;
    size_t ws, i;
    unsigned char* hws;
    nvfp4moe_devptr d13, d13sf, dgs, dus, d2, d2sf, ds2, din1, din2, dx, dout, dmm, dws;
    double num = 0, den = 0;
    long long touched = 0, nans = 0;
    for (i = 0; i < (size_t)E * I * H; ++i) {
      wg[i] = (float)(tu_normal() * 0.05);
      wu[i] = (float)(tu_normal() * (mode == 2 ? 0.005 : 0.05)); /* different gate / up global scales */
      w2[i] = (float)(tu_normal() * 0.05);
    }
    make_half(wg, E, I, H, gs, qg, lg);
    make_half(wu, E, I, H, us, qu, lu);
    make_half(w2, E, H, I, s2, q2, l2);
    for (e = 0; e < E; ++e) { /* w13 = [gate; up] rows */
      memcpy(q13 + (size_t)e * I * H, qg + (size_t)e * I * H / 2, (size_t)I * H / 2);
      memcpy(q13 + (size_t)e * I * H + (size_t)I * H / 2, qu + (size_t)e * I * H / 2, (size_t)I * H / 2);
      memcpy(l13 + (size_t)e * 2 * I * (H / 16), lg + (size_t)e * I * (H / 16), (size_t)I * (H / 16));
      memcpy(l13 + (size_t)e * 2 * I * (H / 16) + (size_t)I * (H / 16), lu + (size_t)e * I * (H / 16), (size_t)I * (H / 16));
      in1[e] = (float)(4.0 / 2688.0);
      in2[e] = (float)(0.5 / 2688.0);
    }
    memset(&cv, 0, sizeof cv);
    cv.groups = E; cv.rows = 2 * I; cv.k = H; cv.src = NVFP4MOE_HOSTPTR(l13); cv.dst = NVFP4MOE_HOSTPTR(s13);
    nvfp4moe_ref_sf_convert(&cv);
    cv.rows = H; cv.k = I; cv.src = NVFP4MOE_HOSTPTR(l2); cv.dst = NVFP4MOE_HOSTPTR(s2f);
    nvfp4moe_ref_sf_convert(&cv);
    for (e = 0; e < E; ++e)
      for (r = 0; r < M; ++r) {
        unsigned short* row = x + ((size_t)e * M + r) * H;
        if (r < valid_rows(mm, e, M)) for (i = 0; i < (size_t)H; ++i) row[i] = nvfp4moe_ref_f32_to_bf16((float)(tu_normal() * (i % 61 == 5 ? 20 : 1)));
        else for (i = 0; i < (size_t)H; ++i) row[i] = 0x7FC0; /* padding rows hold NaN */
      }
    memset(&w, 0, sizeof w);
    w.experts = E; w.hidden = H; w.inter = I;
    w.layout = mode >= 3 ? NVFP4MOE_WEIGHTS_TILED : NVFP4MOE_WEIGHTS_ROW_MAJOR; /* (the query reads it) */
    /* modes 2 and 4 with the workspace this context asks for (expected_m 20, 4), the others with the any-call size */
    ws = mode == 2 || mode == 4 ? nvfp4moe_moe_workspace_size_for(g_ctx, &w, M, mode == 2 ? 20 : 4)
                                : nvfp4moe_moe_workspace_size(&w, M);
    if (mode == 4 && g_ctx->backend == NVFP4MOE_BACKEND_SM90 && g_ctx->token_prepass)
      CHECK(ws > nvfp4moe_moe_workspace_size_for(0, &w, M, 4), "mode 4: no token region on sm90 (%zu bytes)", ws);
    CHECK(ws > 0 && ws <= nvfp4moe_moe_workspace_size(&w, M), "mode %d: workspace %zu", mode, ws);
    /* (TILED: each matrix's own size, a padded last step included) */
    nb13 = (size_t)E * nvfp4moe_weight_bytes(2 * I, H, w.layout);
    nb2 = (size_t)E * nvfp4moe_weight_bytes(H, I, w.layout);
    d13 = gu_alloc(nb13); d13sf = gu_alloc(n13sf); dgs = gu_alloc(4 * E); dus = gu_alloc(4 * E);
    d2 = gu_alloc(nb2); d2sf = gu_alloc(n2sf); ds2 = gu_alloc(4 * E); din1 = gu_alloc(4 * E);
    din2 = gu_alloc(4 * E); dx = gu_alloc(2 * nx); dout = gu_alloc(2 * nx); dmm = gu_alloc(4 * E); dws = gu_alloc(ws);
    if (mode >= 3 && gpu_relayout_tiled(d13, q13, (size_t)E * I * H, E, 2 * I, H) &&
        gpu_relayout_tiled(d2, q2, (size_t)E * H * I / 2, E, H, I)) {
      /* (TEST_GPU_RELAYOUT) */
    } else if (mode >= 3) { /* the GPU gets TILED copies; the reference below reads q13 and q2 */
      unsigned char* t13 = (unsigned char*)malloc(nb13);
      unsigned char* t2 = (unsigned char*)malloc(nb2);
      nvfp4moe_weights_relayout_args rl;
      memset(&rl, 0, sizeof rl);
      rl.groups = E; rl.n = 2 * I; rl.k = H; rl.src = NVFP4MOE_HOSTPTR(q13); rl.dst = NVFP4MOE_HOSTPTR(t13);
      rl.dst_layout = NVFP4MOE_WEIGHTS_TILED;
      CHECK(nvfp4moe_ref_weights_relayout(&rl) == NVFP4MOE_SUCCESS, "relayout w13: %s", nvfp4moe_last_error());
      rl.n = H; rl.k = I; rl.src = NVFP4MOE_HOSTPTR(q2); rl.dst = NVFP4MOE_HOSTPTR(t2);
      CHECK(nvfp4moe_ref_weights_relayout(&rl) == NVFP4MOE_SUCCESS, "relayout w2: %s", nvfp4moe_last_error());
      gu_put(d13, t13, nb13); gu_put(d2, t2, nb2);
      free(t13); free(t2);
    } else {
      gu_put(d13, q13, (size_t)E * I * H); gu_put(d2, q2, (size_t)E * H * I / 2);
    }
    gu_put(d13sf, s13, n13sf); gu_put(dgs, gs, 4 * E); gu_put(dus, us, 4 * E);
    gu_put(d2sf, s2f, n2sf); gu_put(ds2, s2, 4 * E); gu_put(din1, in1, 4 * E);
    gu_put(din2, in2, 4 * E); gu_put(dx, x, 2 * nx); gu_put(dmm, mm, 4 * E); gu_fill(dout, 0xAB, 2 * nx);
    w.w13 = d13; w.w13_sf = d13sf; w.w13_gate_scale = dgs; w.w13_up_scale = dus; w.w2 = d2; w.w2_sf = d2sf; w.w2_scale = ds2;
    w.input_scale1 = din1; w.input_scale2 = din2;
    memset(&a, 0, sizeof a);
    a.m_max = M; a.expected_m = mode == 1 ? 30 : mode == 4 ? 4 : 20; a.scaling = mode == 1 ? NVFP4MOE_ACT_PER_EXPERT : NVFP4MOE_ACT_PER_TOKEN;
    a.x = dx; a.masked_m = dmm; a.out = dout; a.workspace = dws; a.workspace_size = ws;
    CHECK(nvfp4moe_moe_forward(g_ctx, &w, &a, 0) == NVFP4MOE_SUCCESS, "forward: %s", nvfp4moe_last_error());
    gu_sync();
    gu_get(out, dout, 2 * nx);
    { /* the GEMMs' tokens widened by their pre-pass (0) or by the layer's quantizers (bit 0: the
         input's, bit 1: the SiLU's): the same bits every way */
      unsigned short* out0 = (unsigned short*)malloc(2 * nx);
      int saved = g_ctx->layer_widen, lw;
      for (lw = 0; lw < 4; ++lw) {
        g_ctx->layer_widen = lw;
        gu_fill(dout, 0xAB, 2 * nx);
        gu_fill(dws, 0xFF, ws); /* stale NaN in the workspace: no unwritten token may reach an output */
        CHECK(nvfp4moe_moe_forward(g_ctx, &w, &a, 0) == NVFP4MOE_SUCCESS, "forward, widen %d: %s", lw, nvfp4moe_last_error());
        gu_sync();
        gu_get(out0, dout, 2 * nx);
        CHECK(memcmp(out, out0, 2 * nx) == 0, "mode %d: the layer with NVFP4MOE_LAYER_WIDEN=%d gives other bits", mode, lw);
      }
      g_ctx->layer_widen = saved;
      if (mode == 4) { /* every kernel a programmatic dependent launch (NVFP4MOE_PDL=1): the swap-AB GEMM's
                          pre-pass then starts under the quantizer before it, and the GEMM under the pre-pass */
        nvfp4moe_context* pc = 0;
        nvfp4moe_desc pd;
        memset(&pd, 0, sizeof pd);
        setenv("NVFP4MOE_PDL", "1", 1);
        CHECK(nvfp4moe_create(&pd, &pc) == NVFP4MOE_SUCCESS, "context with NVFP4MOE_PDL=1: %s", nvfp4moe_last_error());
        unsetenv("NVFP4MOE_PDL");
        if (pc) {
          gu_fill(dout, 0xAB, 2 * nx);
          gu_fill(dws, 0xFF, ws);
          CHECK(nvfp4moe_moe_forward(pc, &w, &a, 0) == NVFP4MOE_SUCCESS, "forward, NVFP4MOE_PDL=1: %s", nvfp4moe_last_error());
          gu_sync();
          gu_get(out0, dout, 2 * nx);
          CHECK(memcmp(out, out0, 2 * nx) == 0, "mode 4: the layer with NVFP4MOE_PDL=1 gives other bits");
          nvfp4moe_destroy(pc);
        }
      }
      free(out0);
    }
    /* the same layer with the host reference pieces */
    wh = w;
    wh.w13 = NVFP4MOE_HOSTPTR(q13); wh.w13_sf = NVFP4MOE_HOSTPTR(s13); wh.w13_gate_scale = NVFP4MOE_HOSTPTR(gs);
    wh.w13_up_scale = NVFP4MOE_HOSTPTR(us); wh.w2 = NVFP4MOE_HOSTPTR(q2); wh.w2_sf = NVFP4MOE_HOSTPTR(s2f);
    wh.w2_scale = NVFP4MOE_HOSTPTR(s2); wh.input_scale1 = NVFP4MOE_HOSTPTR(in1); wh.input_scale2 = NVFP4MOE_HOSTPTR(in2);
    wh.layout = NVFP4MOE_WEIGHTS_ROW_MAJOR;
    hws = (unsigned char*)malloc(ws + 256);
    ah = a;
    ah.x = NVFP4MOE_HOSTPTR(x); ah.masked_m = NVFP4MOE_HOSTPTR(mm); ah.out = NVFP4MOE_HOSTPTR(outr);
    ah.workspace = (NVFP4MOE_HOSTPTR(hws) + 255) / 256 * 256;
    memset(outr, 0xAB, 2 * nx);
    CHECK(nvfp4moe_ref_moe_forward(&wh, &ah) == NVFP4MOE_SUCCESS, "reference forward: %s", nvfp4moe_last_error());
    for (e = 0; e < E; ++e)
      for (r = 0; r < M; ++r)
        for (i = 0; i < (size_t)H; ++i) {
          size_t o = ((size_t)e * M + r) * H + i;
          if (r >= valid_rows(mm, e, M)) { touched += out[o] != 0xABAB; continue; }
          {
            double gv = nvfp4moe_ref_bf16_to_f32(out[o]), rv = nvfp4moe_ref_bf16_to_f32(outr[o]);
            nans += gv != gv;
            num += (gv - rv) * (gv - rv);
            den += rv * rv;
          }
        }
    /* GEMM sums in another order can move an intermediate by one bf16 ulp and so change an
       FP4 code downstream: compare the whole layer in relative L2, not bit for bit. */
    CHECK(nans == 0, "mode %d: %lld NaN outputs", mode, nans);
    CHECK(touched == 0, "mode %d: %lld elements of rows >= masked_m were written", mode, touched);
    CHECK(den > 0 && sqrt(num / den) < 1e-2, "mode %d: relative L2 difference to the reference layer %.3g", mode,
          den > 0 ? sqrt(num / den) : -1.0);
    printf("# layer mode %d: relative L2 GPU vs reference %.3g\n", mode, den > 0 ? sqrt(num / den) : -1.0);
    gu_free(d13); gu_free(d13sf); gu_free(dgs); gu_free(dus); gu_free(d2); gu_free(d2sf); gu_free(ds2); gu_free(din1);
    gu_free(din2); gu_free(dx); gu_free(dout); gu_free(dmm); gu_free(dws);
    free(wg); free(wu); free(w2); free(qg); free(qu); free(q13); free(q2); free(lg); free(lu); free(l13); free(l2);
    free(s13); free(s2f); free(x); free(out); free(outr); free(mm); free(hws);
  }
}

/* ---- the layer's quantizers writing the GEMM's widened tokens (sm90) -------------------------- */

/* The _img quantizers (the expert layer's, nvf_img_block) must write the same slot-image bytes as
   the GEMM's token pre-pass (nvf_ws_widen_tokens) for every row below masked_m, and nothing for
   the rows past it. Per case: quantize x with an image (the private nvfp4moe__quantize_op) into a
   buffer of 0xEE bytes; run a GEMM on the same tokens with a workspace of 0xEE bytes, whose
   pre-pass writes its images there; compare, unit by unit, from the layout derived here. Cases
   2, 3, 5 and 8 give the GEMM TILED weights, whose modules and the _img_f16 quantizers widen to F16.
   Each case also checks the codes, SFs and per-token scales against the plain quantizer's. */
static void test_layer_quantizer_widened_tokens(void) {
  /* K, SiLU, per-token, expected_m (picks the tile), masked_m pattern, groups (0: 5) */
  /* (K 7168 and SiLU 2304: wide rows, many steps; 160: 10 blocks, a part step and column group, SF
     padding in the last column group; 40 groups: past 32 groups the kernels' shared-memory prefix of
     masked_m instead of the warp's, and more rows than resident teams, so a team takes several in turn) */
  static const int cases[][6] = {{1056, 0, 1, 16, 4, 0}, {1056, 1, 1, 30, 4, 0}, {384, 0, 0, 40, 4, 0},
                                 {256, 1, 0, 100, 0, 0}, {2048, 0, 1, 100, 5, 0}, {224, 1, 1, 16, 7, 0},
                                 {7168, 0, 1, 40, 5, 0}, {2304, 1, 1, 30, 4, 0}, {160, 0, 0, 16, 4, 0},
                                 {160, 1, 1, 40, 6, 0},  {1056, 1, 1, 100, 0, 40}, {2048, 0, 1, 40, 4, 40},
                                 {1056, 0, 0, 40, 4, 40}};
  const int M = 150, N = 128;
  /* since 0.5.13 the pre-pass leaves the rows past masked_m as they were, unless a tuning run
     builds 0.5.12's zeros (-DNVF_WIDEN_SKIP=0) */
  const char* td = getenv("NVFP4MOE_TUNE_DEFINE");
  const int pre_skips = !(td && strstr(td, "NVF_WIDEN_SKIP=0"));
  int ci;
  NEED_GPU();
  for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ++ci) {
    const int K = cases[ci][0], silu = cases[ci][1], per_token = cases[ci][2], G = cases[ci][5] ? cases[ci][5] : 5;
    const int xk = silu ? 2 * K : K, nsteps = (K + 127) / 128;
    size_t nx = (size_t)G * M * xk, nq = (size_t)G * M * K / 2, nsf = (size_t)G * nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4);
    /* (TILED: two plain (2, 8) and two SiLU (3, 5) cases, K 256 on a _k256 twin; row-major: five plain, four SiLU) */
    const nvfp4moe_weight_layout lay = ci == 2 || ci == 3 || ci == 5 || ci == 8 ? NVFP4MOE_WEIGHTS_TILED : NVFP4MOE_WEIGHTS_ROW_MAJOR;
    size_t nb = (size_t)G * nvfp4moe_weight_bytes(N, K, lay), nbsf = (size_t)G * nvfp4moe_sf_bytes(N, K, NVFP4MOE_SF_LAYOUT_128X4), wsz, i;
    unsigned short* x = (unsigned short*)malloc(nx * 2);
    unsigned char *bq = (unsigned char*)malloc(nb), *bsf = (unsigned char*)malloc(nbsf), *img, *pre;
    int* mm = make_masked_m(G, M, cases[ci][4]);
    float scale[40] = {0.01f, 0.002f, 0.5f, 0.03f, 1.0f}; /* per-expert scales (the rest below) */
    nvfp4moe_devptr dx, dq, dsf, dscale, dmm, db, dbsf, dd, dimg, dws;
    nvfp4moe_quantize_args q;
    nvfp4moe_gemm_args g;
    int tok, sps, tiles_m, nslots, e, r, s, units = 0, bad = 0, touched = 0, written = 0, pre_touched = 0;
    for (i = 0; i < nx; ++i) x[i] = nvfp4moe_ref_f32_to_bf16((float)(tu_normal() * (i % 37 == 3 ? 30 : 1)));
    for (i = 0; i < (size_t)xk; ++i) x[(size_t)1 * M * xk + i] = 0; /* a zero row (group 1, row 0) */
    for (i = 0; i < nb; ++i) bq[i] = (unsigned char)tu_rand();
    for (i = 0; i < nbsf; ++i) bsf[i] = (unsigned char)(0x30 + tu_rand() % 16);
    dx = gu_alloc(nx * 2); dq = gu_alloc(nq); dsf = gu_alloc(nsf); dscale = gu_alloc(4 * (size_t)G * M);
    dmm = gu_alloc(4 * (size_t)G); db = gu_alloc(nb); dbsf = gu_alloc(nbsf); dd = gu_alloc((size_t)G * M * N * 2);
    gu_put(dx, x, nx * 2); gu_put(dmm, mm, 4 * (size_t)G); gu_put(db, bq, nb); gu_put(dbsf, bsf, nbsf);
    for (i = 5; i < 40; ++i) scale[i] = 0.004f * (float)(i % 7 + 1);
    if (!per_token) gu_put(dscale, scale, sizeof(float) * (size_t)G);
    memset(&g, 0, sizeof g);
    g.groups = G; g.m_max = M; g.n = N; g.k = K; g.a = dq; g.a_sf = dsf; g.b = db; g.b_sf = dbsf; g.masked_m = dmm;
    g.d = dd; g.expected_m = cases[ci][3]; g.b_layout = lay;
    tok = nvfp4moe__layer_img_tok(g_ctx, &g);
    if (tok == 0) { /* not the sm90 backend: the layer widens nothing in its quantizers */
      tu_skip("no token-producer GEMM tile on this GPU's backend");
    } else {
      sps = tok >= 128 ? 1 : 2; tiles_m = (M + tok - 1) / tok; nslots = (nsteps + sps - 1) / sps;
      wsz = nvfp4moe_gemm_workspace_size(g_ctx, &g);
      CHECK(wsz == (size_t)G * tiles_m * nslots * sps * 8 * tok * 32, "case %d: workspace %zu for tile %d", ci, wsz, tok);
      img = (unsigned char*)malloc(wsz); pre = (unsigned char*)malloc(wsz);
      dimg = gu_alloc(wsz); dws = gu_alloc(wsz);
      memset(&q, 0, sizeof q);
      q.dtype = NVFP4MOE_DTYPE_BF16; q.groups = G; q.rows = M; q.k = K; q.x = dx; q.masked_m = dmm;
      q.scale = dscale;
      /* the plain quantizer's codes, SFs and per-token scales, over the same fill: what the _img
         kernels must also write, byte for byte (rows past masked_m untouched by all) */
      {
        size_t ns = 4 * (size_t)G * M;
        unsigned char *ref = (unsigned char*)malloc(nq + nsf + ns), *got = (unsigned char*)malloc(nq + nsf + ns);
        nvfp4moe_devptr rq = gu_alloc(nq), rsf = gu_alloc(nsf), rsc = gu_alloc(ns);
        if (!ref || !got) { printf("FAIL test_layer_quantizer_widened_tokens: host buffers\n"); exit(2); } /* as gu_check */
        gu_fill(rq, 0xA5, nq); gu_fill(rsf, 0xA5, nsf);
        if (per_token) gu_fill(rsc, 0xA5, ns);
        q.out_e2m1 = rq; q.out_sf = rsf; q.scale = per_token ? rsc : dscale;
        CHECK(nvfp4moe__quantize_op(g_ctx, &q, 0, "test", per_token, silu, 0, 0, lay, 0) == NVFP4MOE_SUCCESS,
              "plain quantize: %s", nvfp4moe_last_error());
        gu_sync();
        gu_get(ref, rq, nq); gu_get(ref + nq, rsf, nsf);
        if (per_token) gu_get(ref + nq + nsf, rsc, ns);
        q.out_e2m1 = dq; q.out_sf = dsf; q.scale = dscale;
        gu_fill(dimg, 0xEE, wsz); gu_fill(dws, 0xEE, wsz);
        gu_fill(dq, 0xA5, nq); gu_fill(dsf, 0xA5, nsf);
        if (per_token) gu_fill(dscale, 0xA5, ns);
        CHECK(nvfp4moe__quantize_op(g_ctx, &q, 0, "test", per_token, silu, dimg, tok, lay, silu ? -1 : 0) == NVFP4MOE_SUCCESS,
              "quantize: %s", nvfp4moe_last_error());
        if (per_token) g.row_scale = dscale; else g.alpha = dscale;
        g.workspace = dws; g.workspace_size = wsz;
        CHECK(nvfp4moe_grouped_gemm_nt_masked(g_ctx, &g, 0) == NVFP4MOE_SUCCESS, "gemm: %s", nvfp4moe_last_error());
        gu_sync();
        gu_get(img, dimg, wsz); gu_get(pre, dws, wsz);
        gu_get(got, dq, nq); gu_get(got + nq, dsf, nsf);
        if (per_token) gu_get(got + nq + nsf, dscale, ns);
        CHECK(memcmp(got, ref, nq) == 0, "case %d: codes differ from the plain quantizer's", ci);
        CHECK(memcmp(got + nq, ref + nq, nsf) == 0, "case %d: SFs differ from the plain quantizer's", ci);
        CHECK(!per_token || memcmp(got + nq + nsf, ref + nq + nsf, ns) == 0,
              "case %d: per-token scales differ from the plain quantizer's", ci);
        for (e = 0; e < G; ++e)
          for (r = 0; r < tiles_m * tok; ++r) {
            int valid = valid_rows(mm, e, M), n = r % tok, ti = r / tok;
            if (ti * tok >= valid) continue; /* a tile the GEMM never reads: neither writes it */
            for (s = 0; s < nsteps; ++s) {
              size_t at = (((size_t)e * tiles_m + ti) * nslots * sps + s) * 8 * tok * 32 + (n >> 3) * 256 + (n & 7) * 16;
              int m, h;
              for (m = 0; m < 8; ++m)
                for (h = 0; h < 2; ++h) {
                  const unsigned char *a = img + at + (size_t)m * tok * 32 + h * 128, *b = pre + at + (size_t)m * tok * 32 + h * 128;
                  if (r < valid) {
                    static const unsigned char ee16[16] = {0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE,
                                                           0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE};
                    ++units; bad += memcmp(a, b, 16) != 0; written += memcmp(b, ee16, 16) != 0;
                  }
                  else {
                    int z;
                    for (z = 0; z < 16; ++z) { touched += a[z] != 0xEE; pre_touched += pre_skips && b[z] != 0xEE; }
                  }
                }
            }
          }
        CHECK(units > 0, "case %d: no valid rows compared", ci);
        /* the pre-pass wrote its images (else unwritten 0xEE bytes on both sides would compare equal) */
        CHECK(2 * written > units, "case %d: the pre-pass wrote %d of %d valid-row units", ci, written, units);
        CHECK(bad == 0, "case %d (K %d, %s, tile %d): %d of %d 16-byte units differ from the pre-pass", ci, K,
              silu ? "SiLU" : "plain", tok, bad, units);
        CHECK(touched == 0, "case %d: %d bytes of rows past masked_m written", ci, touched);
        CHECK(pre_touched == 0, "case %d: the pre-pass wrote %d bytes of rows past masked_m", ci, pre_touched);
        printf("# widened tokens case %d (K %d, %s, %s, tile %d, %s): %d units equal to the pre-pass, codes, SFs%s as "
               "the plain quantizer's\n", ci, K, silu ? "SiLU" : "plain", per_token ? "per-token" : "per-expert", tok,
               lay ? "TILED" : "row-major", units - bad, per_token ? ", scales" : "");
        gu_free(rq); gu_free(rsf); gu_free(rsc); free(ref); free(got);
      }
      free(img); free(pre); gu_free(dimg); gu_free(dws);
    }
    gu_free(dx); gu_free(dq); gu_free(dsf); gu_free(dscale); gu_free(dmm); gu_free(db); gu_free(dbsf); gu_free(dd);
    free(x); free(bq); free(bsf); free(mm);
  }
}

/* ---- the first-use self-test and its fallback (plumbing run on any GPU) ------------------------ */

static int g_st_warns;
static char g_st_last[512];
static void st_logger(int level, const char* msg, void* user) {
  (void)user;
  if (level <= NVFP4MOE_LOG_WARN) {
    ++g_st_warns;
    snprintf(g_st_last, sizeof g_st_last, "%s", msg);
  }
}

static void test_self_test_and_fallback(void) {
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  nvfp4moe_info info;
  NEED_GPU();
  memset(&d, 0, sizeof d);
  d.logger.func = st_logger;
  /* force: the comparison runs (portable against portable here) and must pass */
  g_st_warns = 0;
  setenv("NVFP4MOE_SELF_TEST", "force", 1);
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  unsetenv("NVFP4MOE_SELF_TEST");
  if (ctx) {
    nvfp4moe_query_info(ctx, &info);
    CHECK(info.sm100_self_test == 1, "forced self-test result %d (%s)", info.sm100_self_test, g_st_last);
    CHECK(g_st_warns == 0, "no warning when it passes (%s)", g_st_last);
    CHECK((nvfp4moe_query_desc(ctx).flags & NVFP4MOE_FLAG_SOFT_CVT) == 0, "conversions unchanged");
    nvfp4moe_destroy(ctx);
    ctx = 0;
  }
  /* force-fail: a corrupted result must switch to the fallbacks, with warnings, and the
     context must still compute right */
  g_st_warns = 0;
  setenv("NVFP4MOE_SELF_TEST", "force-fail", 1);
  CHECK(nvfp4moe_create(&d, &ctx) == NVFP4MOE_SUCCESS, "%s", nvfp4moe_last_error());
  unsetenv("NVFP4MOE_SELF_TEST");
  if (ctx) {
    qcase c;
    nvfp4moe_query_info(ctx, &info);
    CHECK(info.sm100_self_test == -1, "failed self-test recorded (%d)", info.sm100_self_test);
    CHECK(info.gemm_backend == NVFP4MOE_BACKEND_PORTABLE, "portable GEMM after the failure");
    CHECK(g_st_warns == 2 && strstr(g_st_last, "self-test") != 0, "%d warnings, last: %s", g_st_warns, g_st_last);
    CHECK((nvfp4moe_query_desc(ctx).flags & NVFP4MOE_FLAG_SOFT_CVT) != 0, "software conversions after the failure");
    g_qctx = ctx;
    memset(&c, 0, sizeof c);
    c.groups = 2; c.rows = 77; c.k = 2880; c.per_token = 1; c.mm_pattern = 4; c.flags = NVFP4MOE_QUANT_4OVER6;
    run_qcase(&c);
    g_qctx = g_ctx;
    {
      gcase gc = {3, 70, 264, 288, 4, 1, 1, 0, 0, 0};
      run_gcase(ctx, &gc, "after fallback");
    }
    nvfp4moe_destroy(ctx);
  }
}

/* ---- many threads, one context ------------------------------------------------------------------ */

typedef struct worker {
  int id, ok;
} worker;

static void* worker_main(void* p) {
  worker* wk = (worker*)p;
  int it, M = 64 + 8 * wk->id, K = 1024;
  size_t nx = (size_t)M * K, i;
  unsigned short* x = (unsigned short*)malloc(2 * nx);
  unsigned char *q = (unsigned char*)malloc(nx / 2), *qr = (unsigned char*)malloc(nx / 2);
  float *s = (float*)malloc(4 * (size_t)M), *sr = (float*)malloc(4 * (size_t)M);
  unsigned char sf[256 * 4 * 16], sfr[256 * 4 * 16];
  nvfp4moe_devptr dx, dq, dsf, ds;
  gu_stream st = 0;
  nvfp4moe_quantize_args a;
  wk->ok = 1;
  gu.ctx_set_current(nvfp4moe_query_desc(g_ctx).cu_context); /* a new thread has no current context */
  dx = gu_alloc(2 * nx); dq = gu_alloc(nx / 2); dsf = gu_alloc(sizeof sf); ds = gu_alloc(4 * (size_t)M);
  gu.stream_create(&st, 1);
  for (it = 0; it < 8; ++it) {
    for (i = 0; i < nx; ++i) x[i] = nvfp4moe_ref_f32_to_bf16((float)((double)((wk->id * 7919 + it * 104729 + (int)i) % 2001) - 1000.0));
    gu_put(dx, x, 2 * nx);
    memset(&a, 0, sizeof a);
    a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = M; a.k = K;
    a.x = dx; a.out_e2m1 = dq; a.out_sf = dsf; a.scale = ds;
    if (nvfp4moe_quantize_per_token(g_ctx, &a, st) != NVFP4MOE_SUCCESS) wk->ok = 0;
    gu.stream_sync(st);
    a.x = NVFP4MOE_HOSTPTR(x); a.out_e2m1 = NVFP4MOE_HOSTPTR(qr); a.out_sf = NVFP4MOE_HOSTPTR(sfr); a.scale = NVFP4MOE_HOSTPTR(sr);
    nvfp4moe_ref_quantize_per_token(&a);
    gu_get(q, dq, nx / 2); gu_get(sf, dsf, nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4)); gu_get(s, ds, 4 * (size_t)M);
    if (memcmp(q, qr, nx / 2) || memcmp(sf, sfr, nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4)) || memcmp(s, sr, 4 * (size_t)M))
      wk->ok = 0;
  }
  gu.stream_destroy(st);
  gu_free(dx); gu_free(dq); gu_free(dsf); gu_free(ds);
  free(x); free(q); free(qr); free(s); free(sr);
  return 0;
}

static void test_threads_share_a_context(void) {
  pthread_t th[4];
  worker wk[4];
  int i;
  NEED_GPU();
  for (i = 0; i < 4; ++i) {
    wk[i].id = i;
    pthread_create(&th[i], 0, worker_main, &wk[i]);
  }
  for (i = 0; i < 4; ++i) {
    pthread_join(th[i], 0);
    CHECK(wk[i].ok, "thread %d got wrong results or an error", i);
  }
}

int main(void) {
  const char* why = 0;
  nvfp4moe_info info;
  tu_seed_from_env();
  g_quick = getenv("TEST_QUICK") != 0;
  g_have_gpu = gu_open(0, &g_ctx, &why);
  if (!g_have_gpu) {
    snprintf(g_why, sizeof g_why, "GPU test not run: %s", why ? why : "?");
    printf("# %s\n", g_why);
  } else {
    nvfp4moe_query_info(g_ctx, &info);
    if (info.gemm_backend == NVFP4MOE_BACKEND_SM100) g_sf_pad = 0;
    printf("# GPU %s (cc %d.%d, %d SMs), target %s, backend %d, NVRTC %d.%d\n", info.gpu_name, info.cc_major,
           info.cc_minor, info.sm_count, info.target, (int)info.gemm_backend, info.nvrtc_major, info.nvrtc_minor);
  }
  RUN(test_quantize_per_token_all_shapes);
  RUN(test_quantize_masked_and_per_tensor);
  RUN(test_silu_mul_quantize);
  RUN(test_software_conversions);
  RUN(test_quantize_e2m1_cut_points);
  RUN(test_quantize_long_rows_and_fp16_silu);
  RUN(test_quantize_many_rows_per_team);
  RUN(test_quantize_last_round);
  RUN(test_weight_quantization_in_place);
  RUN(test_sf_convert_and_dequantize);
  RUN(test_gemm_shapes);
  RUN(test_gemm_every_tile_config);
  RUN(test_gemm_resident_units);
  RUN(test_gemm_group_isolation);
  RUN(test_weights_relayout);
  RUN(test_gemm_tiled_same_bits);
  RUN(test_gemm_graph_replay);
  RUN(test_moe_layer);
  RUN(test_layer_quantizer_widened_tokens);
  RUN(test_self_test_and_fallback);
  RUN(test_threads_share_a_context);
  if (g_have_gpu) nvfp4moe_destroy(g_ctx);
  return tu_total_fail ? 1 : 0;
}
