/* jit_timing -- on the GPU found: cold first-call latency (NVRTC compile) of every kernel
   specialisation into an empty cache, then, in fresh processes, the warm start from the
   disk cache: context creation to the end of the first launch. Prints one JSON object.
     jit_timing [CACHE_DIR]            (default: a new directory under /tmp) */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "cuda_driver.h"
#include <stdlib.h>
#include <sys/wait.h>

/* child: a fresh process with every kernel already on disk. First the CUDA driver itself
   (cuInit + retaining the primary context, which any CUDA program pays once), then
   nvfp4moe_create -> first quantize launch -> sync, then loading all other kernels. */
typedef int (*cu_init_t)(unsigned);
typedef int (*cu_dev_get_t)(int*, int);
typedef int (*cu_retain_t)(void**, int);
static int warm_child(const char* dir) {
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  nvfp4moe_quantize_args a;
  nvfp4moe_devptr buf;
  double t0 = nvfp4moe__now_ms(), t1, t2, t3, t4, t5;
  nvfp4moe_info info;
  const char* why;
  void *f_init, *f_get, *f_retain, *pctx = 0;
  int dev = 0;
  if (nvfp4moe_driver_symbol("cuInit", &f_init) || nvfp4moe_driver_symbol("cuDeviceGet", &f_get) ||
      nvfp4moe_driver_symbol("cuDevicePrimaryCtxRetain", &f_retain))
    return 1;
  ((cu_init_t)f_init)(0);
  ((cu_dev_get_t)f_get)(&dev, 0);
  ((cu_retain_t)f_retain)(&pctx, dev);
  t1 = nvfp4moe__now_ms();
  memset(&d, 0, sizeof d);
  d.cache_dir = dir;
  d.flags = NVFP4MOE_FLAG_NO_JIT; /* a miss would be an error, not a silent compile */
  if (!gu_open(&d, &ctx, &why)) { fprintf(stderr, "%s\n", why); return 1; }
  t2 = nvfp4moe__now_ms();
  buf = gu_alloc(1 << 20);
  memset(&a, 0, sizeof a);
  a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = 32; a.k = 1024;
  a.x = buf; a.out_e2m1 = buf + 65536; a.out_sf = buf + 131072; a.scale = buf + 262144;
  gu_fill(buf, 0, 65536);
  gu_sync();
  t3 = nvfp4moe__now_ms();
  if (nvfp4moe_quantize_per_token(ctx, &a, 0) != NVFP4MOE_SUCCESS) { fprintf(stderr, "%s\n", nvfp4moe_last_error()); return 1; }
  gu_sync();
  t4 = nvfp4moe__now_ms();
  if (nvfp4moe_warmup(ctx) != NVFP4MOE_SUCCESS) { fprintf(stderr, "%s\n", nvfp4moe_last_error()); return 1; }
  t5 = nvfp4moe__now_ms();
  nvfp4moe_query_info(ctx, &info);
  printf("{\"cuda_driver_init_ms\": %.2f, \"nvfp4moe_create_ms\": %.2f, \"first_quantize_launch_ms\": %.2f, "
         "\"library_create_to_first_launch_ms\": %.2f, \"load_all_other_kernels_ms\": %.2f, \"disk_hits\": %llu, "
         "\"compiles\": %llu}\n",
         t1 - t0, t2 - t1, t4 - t3, (t2 - t1) + (t4 - t3), t5 - t4, info.disk_hits, info.compiles);
  gu_free(buf);
  nvfp4moe_destroy(ctx);
  return 0;
}

int main(int argc, char** argv) {
  char dir[512];
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  nvfp4moe_info info;
  int s, run;
  const char* why;
  if (argc == 3 && strcmp(argv[1], "--warm") == 0) return warm_child(argv[2]);
  if (argc > 1) snprintf(dir, sizeof dir, "%s", argv[1]);
  else {
    char tmpl[] = "/tmp/nvfp4moe_jit_timing.XXXXXX";
    if (!mkdtemp(tmpl)) return 1;
    snprintf(dir, sizeof dir, "%s/cache", tmpl);
  }
  memset(&d, 0, sizeof d);
  d.cache_dir = dir;
  if (!gu_open(&d, &ctx, &why)) { printf("{\"error\": \"no GPU: %s\"}\n", why); return 0; }
  nvfp4moe_query_info(ctx, &info);
  printf("{\"gpu\": \"%s\", \"target\": \"%s\", \"nvrtc\": \"%d.%d\", \"cold_compile_ms\": {", info.gpu_name, info.target,
         info.nvrtc_major, info.nvrtc_minor);
  for (s = 0; s < nvfp4moe_specialization_count(); ++s) {
    double ms = 0;
    int from_disk = 0;
    nvfp4moe_result r = nvfp4moe_prepare_specialization(ctx, s, &from_disk, &ms);
    if (r == NVFP4MOE_ERROR_NOT_SUPPORTED) continue;
    printf("%s\"%s\": %.1f", s ? ", " : "", nvfp4moe_specialization_name(s), r == NVFP4MOE_SUCCESS && !from_disk ? ms : -1.0);
  }
  printf("},\n \"warm_start\": [\n");
  fflush(stdout);
  nvfp4moe_destroy(ctx);
  for (run = 0; run < 3; ++run) {
    pid_t pid = fork();
    if (pid == 0) {
      execl(argv[0], argv[0], "--warm", dir, (char*)0);
      _exit(127);
    }
    waitpid(pid, 0, 0);
    if (run < 2) printf(",\n");
    fflush(stdout);
  }
  printf("]}\n");
  return 0;
}
