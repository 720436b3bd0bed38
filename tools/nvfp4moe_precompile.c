/* nvfp4moe_precompile -- fills the cubin cache ahead of time for a named architecture,
   with no GPU (NVRTC only), so production can run with NVFP4MOE_NO_JIT=1.
     nvfp4moe_precompile sm_100a [--cache-dir DIR] [--soft-cvt] [--only SUBSTRING]
   --only compiles just the specialisations whose name contains SUBSTRING (e.g. gemm_sm90).
   Targets: sm_80 ... sm_89, sm_90a, sm_100a, sm_103a, sm_120 (what this NVRTC lists). */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"

int main(int argc, char** argv) {
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  nvfp4moe_info info;
  int i, s, failed = 0, matched = 0;
  const char* only = 0;
  memset(&d, 0, sizeof d);
  d.flags = NVFP4MOE_FLAG_OFFLINE;
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--cache-dir") == 0 && i + 1 < argc) d.cache_dir = argv[++i];
    else if (strcmp(argv[i], "--soft-cvt") == 0) d.flags |= NVFP4MOE_FLAG_SOFT_CVT;
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else if (argv[i][0] != '-') d.target = argv[i];
    else {
      fprintf(stderr, "usage: %s TARGET [--cache-dir DIR] [--soft-cvt] [--only SUBSTRING]\n", argv[0]);
      return 2;
    }
  }
  if (!d.target) {
    fprintf(stderr, "usage: %s TARGET [--cache-dir DIR] [--soft-cvt]   (TARGET like sm_90a or sm_100a)\n", argv[0]);
    return 2;
  }
  if (nvfp4moe_create(&d, &ctx) != NVFP4MOE_SUCCESS) {
    fprintf(stderr, "%s\n", nvfp4moe_last_error());
    return 1;
  }
  nvfp4moe_query_info(ctx, &info);
  if (!info.cache_dir[0]) {
    fprintf(stderr, "no usable cache directory (see the warning above); nothing would be kept\n");
    nvfp4moe_destroy(ctx);
    return 1;
  }
  printf("target %s, NVRTC %d.%d, cache %s\n", info.target, info.nvrtc_major, info.nvrtc_minor, info.cache_dir);
  for (s = 0; s < nvfp4moe_specialization_count(); ++s) {
    int from_disk = 0;
    double ms = 0;
    nvfp4moe_result r;
    if (only && !strstr(nvfp4moe_specialization_name(s), only)) continue;
    ++matched;
    r = nvfp4moe_prepare_specialization(ctx, s, &from_disk, &ms);
    if (r == NVFP4MOE_ERROR_NOT_SUPPORTED) continue;
    printf("  %-26s %s (%.0f ms)\n", nvfp4moe_specialization_name(s),
           r != NVFP4MOE_SUCCESS ? nvfp4moe_last_error() : from_disk ? "already cached" : "compiled", ms);
    failed |= r != NVFP4MOE_SUCCESS;
  }
  nvfp4moe_query_info(ctx, &info);
  printf("%llu compiled, %llu already cached, %llu written\n", info.compiles, info.disk_hits, info.disk_writes);
  if (only && !matched) { /* a misspelt --only would otherwise pass for a full cache */
    fprintf(stderr, "--only %s matches no specialisation\n", only);
    failed = 1;
  }
  if (info.disk_writes < info.compiles) { /* e.g. a directory that took no file: the cache is off (warning above) */
    fprintf(stderr, "%llu compiled kernels were not written to the cache\n", info.compiles - info.disk_writes);
    failed = 1;
  }
  nvfp4moe_destroy(ctx);
  return failed;
}
