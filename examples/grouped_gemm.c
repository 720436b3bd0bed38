/* grouped_gemm.c -- masked grouped NVFP4 GEMM on a DeepSeek-V3 EP8 GEMM2 shape
   (32 experts, N 7168, K 2048, about 33 tokens per expert), against float64.
     cc examples/grouped_gemm.c -o grouped_gemm -ldl -lm -lpthread && ./grouped_gemm */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "../tools/cuda_driver.h"
#include <math.h>
#include <stdlib.h>

static unsigned rng = 2024;
static unsigned next(void) { rng = rng * 1664525u + 1013904223u; return rng >> 8; }

int main(void) {
  int G = 32, M = 128, N = 7168, K = 2048, g, m, n, k, it;
  size_t na = (size_t)G * M * K / 2, nb = (size_t)G * N * K / 2;
  size_t nsfa = (size_t)G * nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4);
  size_t nsfb = (size_t)G * nvfp4moe_sf_bytes(N, K, NVFP4MOE_SF_LAYOUT_128X4), i;
  unsigned char *a = (unsigned char*)malloc(na), *b = (unsigned char*)malloc(nb);
  unsigned char *sfa = (unsigned char*)malloc(nsfa), *sfb = (unsigned char*)malloc(nsfb);
  unsigned short* d = (unsigned short*)malloc((size_t)G * M * N * 2);
  int mm[32];
  float alpha[32];
  nvfp4moe_context* ctx = 0;
  const char* why = 0;
  nvfp4moe_gemm_args ga;
  double worst = 0;
  for (i = 0; i < na; ++i) a[i] = (unsigned char)next();
  for (i = 0; i < nb; ++i) b[i] = (unsigned char)next();
  for (i = 0; i < nsfa; ++i) sfa[i] = (unsigned char)(0x30 + next() % 16);
  for (i = 0; i < nsfb; ++i) sfb[i] = (unsigned char)(0x30 + next() % 16);
  for (g = 0; g < G; ++g) { mm[g] = 20 + (int)(next() % 27); alpha[g] = 1.0f / 64.0f; }
  if (!gu_open(0, &ctx, &why)) {
    printf("no GPU here (%s); nothing to run\n", why);
    return 0;
  }
  {
    nvfp4moe_devptr da = gu_alloc(na), db = gu_alloc(nb), dsfa = gu_alloc(nsfa), dsfb = gu_alloc(nsfb);
    nvfp4moe_devptr dd = gu_alloc((size_t)G * M * N * 2), dmm = gu_alloc(sizeof mm), dal = gu_alloc(sizeof alpha);
    gu_event e0, e1;
    float ms = 0;
    gu_put(da, a, na); gu_put(db, b, nb); gu_put(dsfa, sfa, nsfa); gu_put(dsfb, sfb, nsfb);
    gu_put(dmm, mm, sizeof mm); gu_put(dal, alpha, sizeof alpha);
    memset(&ga, 0, sizeof ga);
    ga.groups = G; ga.m_max = M; ga.n = N; ga.k = K; ga.a = da; ga.a_sf = dsfa; ga.b = db; ga.b_sf = dsfb;
    ga.masked_m = dmm; ga.alpha = dal; ga.d = dd; ga.expected_m = 33;
    /* optional: the workspace the chosen tiles can use (widened tokens on Hopper; 0 bytes elsewhere) */
    ga.workspace_size = nvfp4moe_gemm_workspace_size(ctx, &ga);
    if (ga.workspace_size) ga.workspace = gu_alloc(ga.workspace_size);
    if (nvfp4moe_grouped_gemm_nt_masked(ctx, &ga, 0) != NVFP4MOE_SUCCESS) { printf("error: %s\n", nvfp4moe_last_error()); return 1; }
    gu.event_create(&e0, 0); gu.event_create(&e1, 0);
    gu.event_record(e0, 0);
    for (it = 0; it < 20; ++it) nvfp4moe_grouped_gemm_nt_masked(ctx, &ga, 0);
    gu.event_record(e1, 0);
    gu.event_sync(e1);
    gu.event_elapsed(&ms, e0, e1);
    gu_get(d, dd, (size_t)G * M * N * 2);
    /* check a sample of outputs in float64 */
    for (it = 0; it < 200; ++it) {
      int kc4 = (K / 16 + 3) / 4;
      double acc = 0, got;
      g = (int)(next() % (unsigned)G); m = (int)(next() % (unsigned)mm[g]); n = (int)(next() % (unsigned)N);
      for (k = 0; k < K; ++k) {
        unsigned char qa = a[((size_t)g * M + m) * (K / 2) + k / 2], qb = b[((size_t)g * N + n) * (K / 2) + k / 2];
        double va = nvfp4moe_ref_e2m1_to_f32(k & 1 ? qa >> 4 : qa & 15) *
                    nvfp4moe_ref_e4m3_to_f32(sfa[(size_t)g * nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4) + nvfp4moe__sf_off_128x4(m, k / 16, kc4)]);
        double vb = nvfp4moe_ref_e2m1_to_f32(k & 1 ? qb >> 4 : qb & 15) *
                    nvfp4moe_ref_e4m3_to_f32(sfb[(size_t)g * nvfp4moe_sf_bytes(N, K, NVFP4MOE_SF_LAYOUT_128X4) + nvfp4moe__sf_off_128x4(n, k / 16, kc4)]);
        acc += va * vb;
      }
      acc *= alpha[g];
      got = nvfp4moe_ref_bf16_to_f32(d[((size_t)g * M + m) * N + n]);
      if (acc != 0 && fabs(got - acc) / fabs(acc) > worst) worst = fabs(got - acc) / fabs(acc);
    }
    printf("grouped GEMM G=%d N=%d K=%d (masked_m 20..46, workspace %zu bytes): %.1f us per call (events, 20 calls, "
           "no L2 rotation), worst relative error on 200 samples %.2e\n", G, N, K, ga.workspace_size, 1000.0 * ms / 20, worst);
  }
  nvfp4moe_destroy(ctx);
  return 0;
}
