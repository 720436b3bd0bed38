/* moe_layer.c -- the main job: NVFP4 MoE expert layers in the masked (DeepEP
   low-latency) layout, end to end on the GPU:
     quantize x per token -> GEMM1 (w13) -> SiLU-and-mul + quantize -> GEMM2 (w2)
   for a Qwen3-30B-A3B-sized layer (H 2048, I 768, 128 experts, top-8) and a DeepSeek-V3
   EP8 layer (H 7168, I 2048, 32 of 256 experts local, top-8, about 33 tokens per
   expert). Activations are heavy-tailed with a few outlier channels; the routing is
   skewed. Prints the time, and the error on sampled rows against
     (a) a float64 reference of the unquantized BF16 layer, and
     (b) the library's host reference of the same NVFP4 layer (dequantized weights).
   Without a GPU it says so and runs the host reference on a small layer.
     make run          or   cc examples/moe_layer.c -o moe_layer -ldl -lm -lpthread */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "../tools/cuda_driver.h"
#include <math.h>
#include <stdlib.h>

typedef struct layer_cfg {
  const char* name;
  int experts, total_experts, hidden, inter, topk, tokens, m_max;
} layer_cfg;

/* ---- random numbers -------------------------------------------------------------------------- */
static unsigned long long g_rng = 0x853c49e6748fea9bull;
static unsigned next32(void) {
  g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(g_rng >> 33);
}
static double uniform(void) { return (next32() + 0.5) / 2147483648.0; } /* (0, 1) */
static double gauss(void) { return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform()); }

static unsigned short bf16(double v) { return nvfp4moe_ref_f32_to_bf16((float)v); }
static double from_bf16(unsigned short h) { return nvfp4moe_ref_bf16_to_f32(h); }

/* A token's hidden state: gaussian times a per-token log-normal scale, heavy tails, and a
   few outlier channels (as seen in real activations). */
static void make_token(unsigned short* x, int h) {
  double scale = exp(gauss() * 0.7);
  int i;
  for (i = 0; i < h; ++i) {
    double v = gauss() * scale;
    if (uniform() < 0.002) v *= 12.0;
    if (i % 173 == 11) v *= 30.0;
    x[i] = bf16(v);
  }
}

/* Routing: each token picks topk distinct experts out of total with skewed popularity;
   masked_m[e] counts the tokens of local expert e (e < experts). */
static void route(const layer_cfg* c, int* masked_m) {
  int t, j, e;
  double* w = (double*)malloc(sizeof(double) * (size_t)c->total_experts);
  double sum = 0;
  for (e = 0; e < c->total_experts; ++e) sum += (w[e] = exp(gauss() * 0.6));
  for (e = 0; e < c->experts; ++e) masked_m[e] = 0;
  for (t = 0; t < c->tokens; ++t) {
    int chosen[16], n = 0;
    while (n < c->topk) {
      double u = uniform() * sum, acc = 0;
      int dup = 0;
      for (e = 0; e < c->total_experts - 1 && acc + w[e] < u; ++e) acc += w[e];
      for (j = 0; j < n; ++j) dup |= chosen[j] == e;
      if (!dup) chosen[n++] = e;
    }
    for (j = 0; j < n; ++j)
      if (chosen[j] < c->experts && masked_m[chosen[j]] < c->m_max) masked_m[chosen[j]]++;
  }
  free(w);
}

/* float64 reference of one token through one unquantized BF16 expert. */
static void expert_f64(const unsigned short* x, const unsigned short* w13, const unsigned short* w2, int h, int inter,
                       double* out) {
  double* y = (double*)malloc(sizeof(double) * (size_t)inter);
  int i, k;
  for (i = 0; i < inter; ++i) {
    double g = 0, u = 0;
    for (k = 0; k < h; ++k) {
      g += from_bf16(x[k]) * from_bf16(w13[(size_t)i * h + k]);
      u += from_bf16(x[k]) * from_bf16(w13[((size_t)inter + i) * h + k]);
    }
    y[i] = g / (1.0 + exp(-g)) * u;
  }
  for (i = 0; i < h; ++i) {
    double acc = 0;
    for (k = 0; k < inter; ++k) acc += y[k] * from_bf16(w2[(size_t)i * inter + k]);
    out[i] = acc;
  }
  free(y);
}

static void fill_weights(unsigned short* w, size_t n, double bound) {
  size_t i;
  for (i = 0; i < n; ++i) w[i] = bf16((uniform() * 2.0 - 1.0) * bound);
}

/* Host NVFP4 weights of one expert (reference quantizer), for the no-GPU path. */
typedef struct host_expert {
  unsigned char *w13, *w13_sf, *w2, *w2_sf;
  float s13, s2;
} host_expert;

/* ---- the small CPU-only run -------------------------------------------------------------------- */
static int run_cpu_only(const char* why) {
  layer_cfg c = {"small layer (CPU reference)", 4, 4, 256, 128, 2, 24, 16};
  int E = c.experts, H = c.hidden, I = c.inter, M = c.m_max, e, r, mm[4];
  size_t n13 = (size_t)E * 2 * I * H, n2 = (size_t)E * H * I;
  unsigned short *w13 = (unsigned short*)malloc(2 * n13), *w2 = (unsigned short*)malloc(2 * n2);
  unsigned short *x = (unsigned short*)malloc(2 * (size_t)E * M * H), *out = (unsigned short*)malloc(2 * (size_t)E * M * H);
  unsigned char *q13 = (unsigned char*)malloc(n13 / 2), *q2 = (unsigned char*)malloc(n2 / 2);
  size_t sf13 = (size_t)E * nvfp4moe_sf_bytes(2 * I, H, NVFP4MOE_SF_LAYOUT_128X4), sf2 = (size_t)E * nvfp4moe_sf_bytes(H, I, NVFP4MOE_SF_LAYOUT_128X4);
  unsigned char *s13 = (unsigned char*)malloc(sf13), *s2 = (unsigned char*)malloc(sf2);
  float sc13[4], sc2[4];
  nvfp4moe_weight_quantize_args wq;
  nvfp4moe_moe_weights w;
  nvfp4moe_moe_args a;
  size_t ws;
  unsigned char* wsb;
  double num = 0, den = 0;
  /* the library has already logged why (an "nvfp4moe error:" line on stderr, unless
     NVFP4MOE_LOG_LEVEL silences it); repeat the reason only when it was not printed */
  {
    const char* lv = getenv("NVFP4MOE_LOG_LEVEL");
    if (lv && *lv && atoi(lv) <= 0) printf("no GPU: %s\n", why);
    else printf("no GPU (the nvfp4moe error line above says why)\n");
  }
  printf("running the host reference of a %s: E=%d H=%d I=%d\n", c.name, E, H, I);
  fill_weights(w13, n13, sqrt(3.0 / H));
  fill_weights(w2, n2, sqrt(3.0 / I));
  route(&c, mm);
  for (e = 0; e < E; ++e)
    for (r = 0; r < M; ++r) make_token(x + ((size_t)e * M + r) * H, H);
  memset(&wq, 0, sizeof wq);
  wq.dtype = NVFP4MOE_DTYPE_BF16; wq.experts = E; wq.n = 2 * I; wq.k = H;
  wq.w = NVFP4MOE_HOSTPTR(w13); wq.out_e2m1 = NVFP4MOE_HOSTPTR(q13); wq.out_sf = NVFP4MOE_HOSTPTR(s13); wq.out_scale = NVFP4MOE_HOSTPTR(sc13);
  nvfp4moe_ref_quantize_weights(&wq);
  wq.n = H; wq.k = I; wq.w = NVFP4MOE_HOSTPTR(w2); wq.out_e2m1 = NVFP4MOE_HOSTPTR(q2); wq.out_sf = NVFP4MOE_HOSTPTR(s2);
  wq.out_scale = NVFP4MOE_HOSTPTR(sc2);
  nvfp4moe_ref_quantize_weights(&wq);
  memset(&w, 0, sizeof w);
  w.experts = E; w.hidden = H; w.inter = I;
  w.w13 = NVFP4MOE_HOSTPTR(q13); w.w13_sf = NVFP4MOE_HOSTPTR(s13); w.w13_gate_scale = w.w13_up_scale = NVFP4MOE_HOSTPTR(sc13);
  w.w2 = NVFP4MOE_HOSTPTR(q2); w.w2_sf = NVFP4MOE_HOSTPTR(s2); w.w2_scale = NVFP4MOE_HOSTPTR(sc2);
  ws = nvfp4moe_moe_workspace_size(&w, M);
  wsb = (unsigned char*)malloc(ws + 256);
  memset(&a, 0, sizeof a);
  a.m_max = M; a.x = NVFP4MOE_HOSTPTR(x); a.masked_m = NVFP4MOE_HOSTPTR(mm); a.out = NVFP4MOE_HOSTPTR(out);
  a.workspace = (NVFP4MOE_HOSTPTR(wsb) + 255) / 256 * 256; a.workspace_size = ws;
  if (nvfp4moe_ref_moe_forward(&w, &a) != NVFP4MOE_SUCCESS) {
    printf("error: %s\n", nvfp4moe_last_error());
    return 1;
  }
  for (e = 0; e < E; ++e)
    for (r = 0; r < mm[e]; ++r) {
      double ref[256];
      int i;
      expert_f64(x + ((size_t)e * M + r) * H, w13 + (size_t)e * 2 * I * H, w2 + (size_t)e * H * I, H, I, ref);
      for (i = 0; i < H; ++i) {
        double d = from_bf16(out[((size_t)e * M + r) * H + i]) - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
      }
    }
  printf("tokens per expert (masked_m): %d %d %d %d\n", mm[0], mm[1], mm[2], mm[3]);
  printf("NVFP4 layer (host reference) vs float64 BF16 layer: relative L2 error %.4f\n"
         "  (expected about 0.2: weights and activations in 4 bits, four quantizations in a row)\n",
         sqrt(num / den));
  printf("run this on a machine with an NVIDIA GPU (compute capability 8.0+) for the full layers\n");
  return 0;
}

/* ---- one layer on the GPU ------------------------------------------------------------------------ */
static int run_layer(nvfp4moe_context* ctx, const layer_cfg* c) {
  int E = c->experts, H = c->hidden, I = c->inter, M = c->m_max, e, r, i, it, sample[2] = {0, 0};
  int* mm = (int*)malloc(sizeof(int) * (size_t)E);
  size_t n13 = (size_t)2 * I * H, n2 = (size_t)H * I, nx = (size_t)E * M * H;
  size_t sf13 = nvfp4moe_sf_bytes(2 * I, H, NVFP4MOE_SF_LAYOUT_128X4), sf2 = nvfp4moe_sf_bytes(H, I, NVFP4MOE_SF_LAYOUT_128X4);
  unsigned short *wst13 = (unsigned short*)malloc(2 * n13), *wst2 = (unsigned short*)malloc(2 * n2);
  unsigned short *keep13[2], *keep2[2];
  unsigned short *x = (unsigned short*)malloc(2 * nx), *out = (unsigned short*)malloc(2 * nx);
  nvfp4moe_devptr d13, d13sf, d13s, d2, d2sf, d2s, dstage, dx, dout, dmm, dws, t13 = 0, t2 = 0;
  nvfp4moe_weight_quantize_args wq;
  nvfp4moe_moe_weights w;
  nvfp4moe_moe_args a;
  size_t ws;
  long long total = 0;
  int mn = 1 << 30, mx = 0;
  double t0 = nvfp4moe__now_ms();
  gu_event e0, e1;
  float ms_eager = 0, ms_graph = 0;

  route(c, mm);
  for (e = 0; e < E; ++e) {
    total += mm[e];
    if (mm[e] < mn) mn = mm[e];
    if (mm[e] > mx) mx = mm[e];
    if (mm[e] > mm[sample[0]]) { sample[1] = sample[0]; sample[0] = e; }
    else if (e != sample[0] && mm[e] > mm[sample[1]]) sample[1] = e;
  }
  if (sample[1] == sample[0]) sample[1] = (sample[0] + 1) % E;
  printf("\n== %s: H=%d I=%d, %d local experts of %d, top-%d, %d tokens -> masked_m min %d mean %.1f max %d, m_max %d\n",
         c->name, H, I, E, c->total_experts, c->topk, c->tokens, mn, (double)total / E, mx, M);

  /* weights: BF16 generated expert by expert, quantized on the GPU into the final buffers */
  d13 = gu_alloc((size_t)E * n13 / 2); d13sf = gu_alloc((size_t)E * sf13); d13s = gu_alloc(4 * (size_t)E);
  d2 = gu_alloc((size_t)E * n2 / 2); d2sf = gu_alloc((size_t)E * sf2); d2s = gu_alloc(4 * (size_t)E);
  dstage = gu_alloc(2 * (n13 > n2 ? n13 : n2));
  for (e = 0; e < E; ++e) {
    fill_weights(wst13, n13, sqrt(3.0 / H));
    fill_weights(wst2, n2, sqrt(3.0 / I));
    for (i = 0; i < 2; ++i)
      if (e == sample[i]) {
        keep13[i] = (unsigned short*)malloc(2 * n13); memcpy(keep13[i], wst13, 2 * n13);
        keep2[i] = (unsigned short*)malloc(2 * n2); memcpy(keep2[i], wst2, 2 * n2);
      }
    memset(&wq, 0, sizeof wq);
    wq.dtype = NVFP4MOE_DTYPE_BF16; wq.experts = 1;
    wq.n = 2 * I; wq.k = H; wq.w = dstage;
    wq.out_e2m1 = d13 + (size_t)e * n13 / 2; wq.out_sf = d13sf + (size_t)e * sf13; wq.out_scale = d13s + 4 * (size_t)e;
    gu_put(dstage, wst13, 2 * n13);
    if (nvfp4moe_quantize_weights(ctx, &wq, 0) != NVFP4MOE_SUCCESS) { printf("error: %s\n", nvfp4moe_last_error()); return 1; }
    gu_sync();
    wq.n = H; wq.k = I;
    wq.out_e2m1 = d2 + (size_t)e * n2 / 2; wq.out_sf = d2sf + (size_t)e * sf2; wq.out_scale = d2s + 4 * (size_t)e;
    gu_put(dstage, wst2, 2 * n2);
    if (nvfp4moe_quantize_weights(ctx, &wq, 0) != NVFP4MOE_SUCCESS) { printf("error: %s\n", nvfp4moe_last_error()); return 1; }
    gu_sync();
  }
  gu_free(dstage);
  for (e = 0; e < E; ++e)
    for (r = 0; r < M; ++r) {
      unsigned short* row = x + ((size_t)e * M + r) * H;
      if (r < mm[e]) make_token(row, H);
      else for (i = 0; i < H; ++i) row[i] = 0x7FC0; /* DeepEP leaves garbage past masked_m */
    }
  dx = gu_alloc(2 * nx); dout = gu_alloc(2 * nx); dmm = gu_alloc(4 * (size_t)E);
  gu_put(dx, x, 2 * nx); gu_put(dmm, mm, 4 * (size_t)E); gu_fill(dout, 0, 2 * nx);
  memset(&w, 0, sizeof w);
  w.experts = E; w.hidden = H; w.inter = I;
  w.w13 = d13; w.w13_sf = d13sf; w.w13_gate_scale = w.w13_up_scale = d13s; w.w2 = d2; w.w2_sf = d2sf; w.w2_scale = d2s;
  /* Pre-shuffle the weights once into the layout this GPU's kernels read fastest (TILED on
     Hopper); the row-major copies stay for the host check below. */
  if (nvfp4moe_preferred_weight_layout(ctx, 2 * I, H) == NVFP4MOE_WEIGHTS_TILED &&
      nvfp4moe_preferred_weight_layout(ctx, H, I) == NVFP4MOE_WEIGHTS_TILED) {
    nvfp4moe_weights_relayout_args rl;
    /* (a TILED matrix pads K to whole 128-element steps: its own size) */
    t13 = gu_alloc((size_t)E * nvfp4moe_weight_bytes(2 * I, H, NVFP4MOE_WEIGHTS_TILED));
    t2 = gu_alloc((size_t)E * nvfp4moe_weight_bytes(H, I, NVFP4MOE_WEIGHTS_TILED));
    memset(&rl, 0, sizeof rl);
    rl.groups = E; rl.n = 2 * I; rl.k = H; rl.src = d13; rl.dst = t13; rl.dst_layout = NVFP4MOE_WEIGHTS_TILED;
    if (nvfp4moe_weights_relayout(ctx, &rl, 0) != NVFP4MOE_SUCCESS) { printf("error: %s\n", nvfp4moe_last_error()); return 1; }
    rl.n = H; rl.k = I; rl.src = d2; rl.dst = t2;
    if (nvfp4moe_weights_relayout(ctx, &rl, 0) != NVFP4MOE_SUCCESS) { printf("error: %s\n", nvfp4moe_last_error()); return 1; }
    gu_sync();
    w.w13 = t13; w.w2 = t2; w.layout = NVFP4MOE_WEIGHTS_TILED;
  }
  printf("weights: %s layout\n", w.layout == NVFP4MOE_WEIGHTS_TILED ? "TILED (pre-shuffled)" : "row-major");
  memset(&a, 0, sizeof a);
  a.m_max = M; a.expected_m = (int)((total + E - 1) / E); a.scaling = NVFP4MOE_ACT_PER_TOKEN;
  /* the workspace this context needs for these shapes and expected_m (nvfp4moe_moe_workspace_size
     would fit any call with this m_max, on any GPU) */
  ws = nvfp4moe_moe_workspace_size_for(ctx, &w, M, a.expected_m);
  dws = gu_alloc(ws);
  a.x = dx; a.masked_m = dmm; a.out = dout; a.workspace = dws; a.workspace_size = ws;
  printf("setup (weights generated and quantized on the GPU): %.0f ms; workspace %.1f MB (%.1f MB for any call)\n",
         nvfp4moe__now_ms() - t0, (double)ws / 1e6, (double)nvfp4moe_moe_workspace_size(&w, M) / 1e6);

  /* time: eager launches, then the same four kernels replayed from a CUDA graph */
  for (it = 0; it < 3; ++it)
    if (nvfp4moe_moe_forward(ctx, &w, &a, 0) != NVFP4MOE_SUCCESS) { printf("error: %s\n", nvfp4moe_last_error()); return 1; }
  gu_sync();
  gu.event_create(&e0, 0); gu.event_create(&e1, 0);
  gu.event_record(e0, 0);
  for (it = 0; it < 20; ++it) nvfp4moe_moe_forward(ctx, &w, &a, 0);
  gu.event_record(e1, 0);
  gu.event_sync(e1);
  gu.event_elapsed(&ms_eager, e0, e1);
  {
    gu_stream s;
    gu_graph g;
    gu_graph_exec ge;
    gu.stream_create(&s, 1);
    gu.begin_capture(s, 0);
    nvfp4moe_moe_forward(ctx, &w, &a, s);
    gu.end_capture(s, &g);
    gu.graph_instantiate(&ge, g, 0);
    gu.graph_launch(ge, s);
    gu.stream_sync(s);
    gu.event_record(e0, s);
    for (it = 0; it < 20; ++it) gu.graph_launch(ge, s);
    gu.event_record(e1, s);
    gu.event_sync(e1);
    gu.event_elapsed(&ms_graph, e0, e1);
    gu.graph_exec_destroy(ge); gu.graph_destroy(g); gu.stream_destroy(s);
  }
  gu_get(out, dout, 2 * nx);
  printf("GPU layer time: %.1f us eager, %.1f us from a CUDA graph (mean of 20; weights stay in L2 only if they "
         "fit; tools/bench.py has the rotated-buffer numbers)\n", 1000.0 * ms_eager / 20, 1000.0 * ms_graph / 20);

  /* errors on the rows of two sampled experts */
  {
    double n_a = 0, d_a = 0, n_b = 0, d_b = 0;
    int s, rows_used = 0;
    for (s = 0; s < 2; ++s) {
      int ex = sample[s], rows = mm[ex] < 8 ? mm[ex] : 8;
      /* (b): the host reference layer on this expert alone, from the GPU's quantized weights */
      unsigned char *h13 = (unsigned char*)malloc(n13 / 2), *h13sf = (unsigned char*)malloc(sf13);
      unsigned char *h2 = (unsigned char*)malloc(n2 / 2), *h2sf = (unsigned char*)malloc(sf2);
      unsigned short* ho = (unsigned short*)malloc(2 * (size_t)M * H);
      float s13, s2v;
      nvfp4moe_moe_weights hw;
      nvfp4moe_moe_args ha;
      size_t hws = 0;
      unsigned char* hwsb;
      int one_mm = rows;
      if (rows == 0) continue;
      gu_get(h13, d13 + (size_t)ex * n13 / 2, n13 / 2); gu_get(h13sf, d13sf + (size_t)ex * sf13, sf13);
      gu_get(h2, d2 + (size_t)ex * n2 / 2, n2 / 2); gu_get(h2sf, d2sf + (size_t)ex * sf2, sf2);
      gu_get(&s13, d13s + 4 * (size_t)ex, 4); gu_get(&s2v, d2s + 4 * (size_t)ex, 4);
      memset(&hw, 0, sizeof hw);
      hw.experts = 1; hw.hidden = H; hw.inter = I;
      hw.w13 = NVFP4MOE_HOSTPTR(h13); hw.w13_sf = NVFP4MOE_HOSTPTR(h13sf); hw.w13_gate_scale = hw.w13_up_scale = NVFP4MOE_HOSTPTR(&s13);
      hw.w2 = NVFP4MOE_HOSTPTR(h2); hw.w2_sf = NVFP4MOE_HOSTPTR(h2sf); hw.w2_scale = NVFP4MOE_HOSTPTR(&s2v);
      hws = nvfp4moe_moe_workspace_size(&hw, M);
      hwsb = (unsigned char*)malloc(hws + 256);
      memset(&ha, 0, sizeof ha);
      ha.m_max = M; ha.x = NVFP4MOE_HOSTPTR(x + (size_t)ex * M * H); ha.masked_m = NVFP4MOE_HOSTPTR(&one_mm);
      ha.out = NVFP4MOE_HOSTPTR(ho); ha.workspace = (NVFP4MOE_HOSTPTR(hwsb) + 255) / 256 * 256; ha.workspace_size = hws;
      if (nvfp4moe_ref_moe_forward(&hw, &ha) != NVFP4MOE_SUCCESS) printf("reference error: %s\n", nvfp4moe_last_error());
      for (r = 0; r < rows; ++r) {
        double* ref = (double*)malloc(sizeof(double) * (size_t)H);
        const unsigned short* got = out + ((size_t)ex * M + r) * H;
        expert_f64(x + ((size_t)ex * M + r) * H, keep13[s], keep2[s], H, I, ref);
        for (i = 0; i < H; ++i) {
          double g = from_bf16(got[i]), rb = from_bf16(ho[(size_t)r * H + i]);
          n_a += (g - ref[i]) * (g - ref[i]);
          d_a += ref[i] * ref[i];
          n_b += (g - rb) * (g - rb);
          d_b += rb * rb;
        }
        free(ref);
        ++rows_used;
      }
      free(h13); free(h13sf); free(h2); free(h2sf); free(ho); free(hwsb);
      free(keep13[s]); free(keep2[s]);
    }
    printf("error on %d sampled rows (experts %d and %d), relative L2:\n", rows_used, sample[0], sample[1]);
    printf("  (a) vs float64 of the unquantized BF16 layer: %.4f  (expected about 0.2: weights and activations in\n"
           "      4 bits, four quantizations in a row)\n",
           sqrt(n_a / d_a));
    printf("  (b) vs the host reference of the same NVFP4 layer: %.2e (f32 sum order only)\n", sqrt(n_b / d_b));
  }
  gu_free(d13); gu_free(d13sf); gu_free(d13s); gu_free(d2); gu_free(d2sf); gu_free(d2s);
  if (t13) gu_free(t13);
  if (t2) gu_free(t2);
  gu_free(dx); gu_free(dout); gu_free(dmm); gu_free(dws);
  free(mm); free(wst13); free(wst2); free(x); free(out);
  return 0;
}

int main(void) {
  static const layer_cfg layers[] = {
      {"Qwen3-30B-A3B layer (decode, 256 tokens)", 128, 128, 2048, 768, 8, 256, 64},
      {"DeepSeek-V3 EP8 layer (128 tokens/rank x 8 ranks)", 32, 256, 7168, 2048, 8, 1024, 1024},
  };
  nvfp4moe_context* ctx = 0;
  nvfp4moe_info info;
  const char* why = 0;
  size_t i;
  if (!gu_open(0, &ctx, &why)) return run_cpu_only(why);
  nvfp4moe_query_info(ctx, &info);
  printf("GPU: %s (compute capability %d.%d, %d SMs), NVRTC target %s, GEMM backend %s\n", info.gpu_name, info.cc_major,
         info.cc_minor, info.sm_count, info.target,
         info.gemm_backend == NVFP4MOE_BACKEND_SM100 ? "sm100" : info.gemm_backend == NVFP4MOE_BACKEND_SM90 ? "sm90" : "portable");
  {
    double t0 = nvfp4moe__now_ms();
    if (nvfp4moe_warmup(ctx) != NVFP4MOE_SUCCESS) { printf("warm-up failed: %s\n", nvfp4moe_last_error()); return 1; }
    nvfp4moe_query_info(ctx, &info);
    printf("kernels ready in %.0f ms (%llu compiled, %llu from the disk cache %s)\n", nvfp4moe__now_ms() - t0,
           info.compiles, info.disk_hits, info.cache_dir[0] ? info.cache_dir : "(off)");
  }
  for (i = 0; i < sizeof layers / sizeof layers[0]; ++i)
    if (run_layer(ctx, &layers[i]) != 0) return 1;
  nvfp4moe_destroy(ctx);
  return 0;
}
