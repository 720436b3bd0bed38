/* profile_kernels -- launches the hot kernels on benchmark shapes, a few times each, for a
   profiler (ncu) to look at; checks nothing, and times nothing unless $PROFILE_GEMM_REPS is set
   (then the GEMM back to back that many times, the mean printed: for watching clocks and power
   alongside, not for performance claims, which come from tools/bench.py).
     ncu --clock-control none --section SpeedOfLight --section WarpStateStats ./build/profile_kernels */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "cuda_driver.h"
#include <stdlib.h>

static void fill_random(nvfp4moe_devptr d, size_t n, unsigned lo, unsigned span) {
  unsigned char* h = (unsigned char*)malloc(n);
  unsigned s = 99u;
  size_t i;
  for (i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    h[i] = (unsigned char)(lo + (s >> 8) % span);
  }
  gu_put(d, h, n);
  free(h);
}

static int env_int(const char* name, int dflt, int lo, int hi) {
  int v = getenv(name) ? atoi(getenv(name)) : dflt;
  return v < lo ? lo : v > hi ? hi : v;
}

int main(void) {
  nvfp4moe_context* ctx;
  const char* why;
  int it;
  if (!gu_open(0, &ctx, &why)) { printf("no GPU: %s\n", why); return 0; }
  { /* per-token quantization [16384, 7168] bf16 and the masked decode shape */
    int M = 16384, K = 7168, mm[32], g;
    nvfp4moe_devptr x = gu_alloc((size_t)M * K * 2), q = gu_alloc((size_t)M * K / 2);
    nvfp4moe_devptr sf = gu_alloc(nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4)), s = gu_alloc((size_t)M * 4);
    nvfp4moe_devptr dmm = gu_alloc(sizeof mm);
    nvfp4moe_quantize_args a;
    fill_random(x, (size_t)M * K * 2, 0x30, 0x10); /* bf16 values around 1e-9 .. 1: exponent byte 0x30..0x3F */
    memset(&a, 0, sizeof a);
    a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = M; a.k = K; a.x = x; a.out_e2m1 = q; a.out_sf = sf; a.scale = s;
    for (it = 0; it < 4; ++it) nvfp4moe_quantize_per_token(ctx, &a, 0);
    for (g = 0; g < 32; ++g) mm[g] = 20 + (g * 7) % 27;
    gu_put(dmm, mm, sizeof mm);
    a.groups = 32; a.rows = 256; a.masked_m = dmm;
    for (it = 0; it < 4; ++it) nvfp4moe_quantize_per_token(ctx, &a, 0);
    gu_sync();
    gu_free(x); gu_free(q); gu_free(sf); gu_free(s); gu_free(dmm);
  }
  { /* the GEMM, DeepSeek-V3 EP8 GEMM1 at $PROFILE_GEMM_M tokens per expert (default 8);
       $PROFILE_GEMM_N / $PROFILE_GEMM_K / $PROFILE_GEMM_G for another shape (GEMM2: 7168 / 2048;
       Qwen3 GEMM1: 1536 / 2048 / 128), with the GEMM workspace unless $PROFILE_GEMM_WS=0;
       $PROFILE_TRACE=FILE: room for probe 6's timeline past D (NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE=6,
       gemm_wgmma_ws.cu; the 32-token tiles), written to FILE after the last launch: a header of 8 int32
       (G, M, N, K, SMs, consumer warpgroups 4, steps 128, warps a warpgroup 4), then u32
       [CTAs 256][4][4][128][8] (NVF_TRACE_STEPS and the layout as the kernel writes them) */
    int G = env_int("PROFILE_GEMM_G", 32, 1, 256);
    int M = env_int("PROFILE_GEMM_M", 8, 1, 1 << 16), mm[256], g;
    int N = env_int("PROFILE_GEMM_N", 4096, 8, 1 << 20);
    int K = env_int("PROFILE_GEMM_K", 7168, 32, 1 << 20);
    nvfp4moe_devptr a = gu_alloc((size_t)G * M * K / 2), asf = gu_alloc((size_t)G * nvfp4moe_sf_bytes(M, K, 0));
    /* the layout first: a TILED matrix is larger than N x K/2 when K % 128 != 0 */
    const nvfp4moe_weight_layout lay = nvfp4moe_preferred_weight_layout(ctx, N, K);
    const size_t nb = (size_t)G * nvfp4moe_weight_bytes(N, K, lay);
    nvfp4moe_devptr b = gu_alloc(nb), bsf = gu_alloc((size_t)G * nvfp4moe_sf_bytes(N, K, 0));
    const size_t trace_bytes = getenv("PROFILE_TRACE") ? (size_t)256 * 4 * 4 * 128 * 32 : 0;
    nvfp4moe_devptr d = gu_alloc((size_t)G * M * N * 2 + trace_bytes), dmm = gu_alloc(sizeof mm);
    nvfp4moe_gemm_args ga;
    fill_random(a, (size_t)G * M * K / 2, 0, 256); fill_random(b, nb, 0, 256);
    fill_random(asf, (size_t)G * nvfp4moe_sf_bytes(M, K, 0), 0x30, 0x10);
    fill_random(bsf, (size_t)G * nvfp4moe_sf_bytes(N, K, 0), 0x30, 0x10);
    for (g = 0; g < G; ++g) mm[g] = M;
    gu_put(dmm, mm, sizeof mm);
    memset(&ga, 0, sizeof ga);
    ga.groups = G; ga.m_max = M; ga.n = N; ga.k = K; ga.a = a; ga.a_sf = asf; ga.b = b; ga.b_sf = bsf;
    ga.masked_m = dmm; ga.d = d; ga.expected_m = M;
    ga.b_layout = lay; /* random bytes: either layout */
    if (!(getenv("PROFILE_GEMM_WS") && strcmp(getenv("PROFILE_GEMM_WS"), "0") == 0)) {
      ga.workspace_size = nvfp4moe_gemm_workspace_size(ctx, &ga);
      if (ga.workspace_size) ga.workspace = gu_alloc(ga.workspace_size);
    }
    unsigned char* h = trace_bytes ? (unsigned char*)calloc(1, trace_bytes) : 0; /* the trace: zeros, then read back */
    if (h) gu_put(d + (size_t)G * M * N * 2, h, trace_bytes);
    for (it = 0; it < 4; ++it) nvfp4moe_grouped_gemm_nt_masked(ctx, &ga, 0);
    gu_sync();
    const int reps = env_int("PROFILE_GEMM_REPS", 0, 0, 1 << 24);
    if (reps > 0) { /* (the default stream; events around the loop) */
      gu_event e0, e1;
      float ms = 0.f;
      gu_check(gu.event_create(&e0, 0), "cuEventCreate");
      gu_check(gu.event_create(&e1, 0), "cuEventCreate");
      gu_check(gu.event_record(e0, 0), "cuEventRecord");
      for (it = 0; it < reps; ++it) nvfp4moe_grouped_gemm_nt_masked(ctx, &ga, 0);
      gu_check(gu.event_record(e1, 0), "cuEventRecord");
      gu_check(gu.event_sync(e1), "cuEventSynchronize");
      gu_check(gu.event_elapsed(&ms, e0, e1), "cuEventElapsedTime");
      printf("gemm G %d M %d N %d K %d: %d back to back, %.2f us each\n", G, M, N, K, reps, 1000.0 * ms / reps);
      gu.event_destroy(e0);
      gu.event_destroy(e1);
    }
    if (h) {
      FILE* f = fopen(getenv("PROFILE_TRACE"), "wb");
      nvfp4moe_info info;
      int hdr[8] = {G, M, N, K, 0, 4, 128, 4};
      nvfp4moe_query_info(ctx, &info);
      hdr[4] = info.sm_count;
      gu_get(h, d + (size_t)G * M * N * 2, trace_bytes);
      if (f) {
        const int ok = fwrite(hdr, sizeof hdr, 1, f) == 1 && fwrite(h, trace_bytes, 1, f) == 1;
        printf("trace: %s%s\n", getenv("PROFILE_TRACE"), fclose(f) == 0 && ok ? "" : " (write failed)");
      } else {
        printf("trace: could not open %s\n", getenv("PROFILE_TRACE"));
      }
      free(h);
    }
  }
  printf("done\n");
  nvfp4moe_destroy(ctx);
  return 0;
}
