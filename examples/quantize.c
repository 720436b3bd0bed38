/* quantize.c -- per-token NVFP4 quantization of a [M, K] bf16 activation on the GPU,
   checked byte for byte against the library's host reference.
     cc examples/quantize.c -o quantize -ldl -lm -lpthread && ./quantize [M K] */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "../tools/cuda_driver.h"
#include <stdlib.h>

int main(int argc, char** argv) {
  int M = argc > 2 ? atoi(argv[1]) : 1024, K = argc > 2 ? atoi(argv[2]) : 7168, i;
  size_t nx = (size_t)M * K, nsf = nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4);
  unsigned short* x = (unsigned short*)malloc(nx * 2);
  unsigned char *q = (unsigned char*)malloc(nx / 2), *qr = (unsigned char*)malloc(nx / 2);
  unsigned char *sf = (unsigned char*)malloc(nsf), *sfr = (unsigned char*)malloc(nsf);
  float *s = (float*)malloc(4 * (size_t)M), *sr = (float*)malloc(4 * (size_t)M);
  nvfp4moe_context* ctx = 0;
  nvfp4moe_quantize_args a;
  const char* why = 0;
  unsigned r = 12345;
  for (i = 0; i < (int)nx; ++i) { /* a cheap heavy-tailed signal */
    r = r * 1664525u + 1013904223u;
    x[i] = nvfp4moe_ref_f32_to_bf16(((float)(r >> 8) / 16777216.0f - 0.5f) * ((r & 255) == 7 ? 50.0f : 1.0f));
  }
  memset(&a, 0, sizeof a);
  a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = M; a.k = K;
  /* the host reference: same arguments, host addresses */
  a.x = NVFP4MOE_HOSTPTR(x); a.out_e2m1 = NVFP4MOE_HOSTPTR(qr); a.out_sf = NVFP4MOE_HOSTPTR(sfr); a.scale = NVFP4MOE_HOSTPTR(sr);
  if (nvfp4moe_ref_quantize_per_token(&a) != NVFP4MOE_SUCCESS) return 1;
  printf("host reference: row 0 decode scale %.6g, first bytes %02x %02x, SF %02x\n", sr[0], qr[0], qr[1], sfr[0]);
  if (!gu_open(0, &ctx, &why)) {
    printf("no GPU here (%s): only the host reference ran\n", why);
    return 0;
  }
  {
    nvfp4moe_devptr dx = gu_alloc(nx * 2), dq = gu_alloc(nx / 2), dsf = gu_alloc(nsf), ds = gu_alloc(4 * (size_t)M);
    gu_put(dx, x, nx * 2);
    a.x = dx; a.out_e2m1 = dq; a.out_sf = dsf; a.scale = ds;
    if (nvfp4moe_quantize_per_token(ctx, &a, 0) != NVFP4MOE_SUCCESS) {
      printf("error: %s\n", nvfp4moe_last_error());
      return 1;
    }
    gu_sync();
    gu_get(q, dq, nx / 2); gu_get(sf, dsf, nsf); gu_get(s, ds, 4 * (size_t)M);
    printf("GPU [%d, %d] per-token quantization %s the host reference\n", M, K,
           memcmp(q, qr, nx / 2) == 0 && memcmp(sf, sfr, nsf) == 0 && memcmp(s, sr, 4 * (size_t)M) == 0 ? "matches"
                                                                                                     : "DIFFERS FROM");
    gu_free(dx); gu_free(dq); gu_free(dsf); gu_free(ds);
  }
  nvfp4moe_destroy(ctx);
  return 0;
}
