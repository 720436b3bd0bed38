/* test_nvrtc.c -- NVRTC compiles every embedded kernel specialisation for sm_80, sm_90a
   and sm_100a (and sm_103a where this NVRTC has it). Needs NVRTC, no GPU. Prints the cold
   compile time of each. */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "test_util.h"

static const char* g_target;

static void compile_all_for_target(void) {
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  nvfp4moe_result r;
  int s, built = 0;
  memset(&d, 0, sizeof d);
  d.flags = NVFP4MOE_FLAG_OFFLINE | NVFP4MOE_FLAG_NO_DISK_CACHE;
  d.target = g_target;
  d.logger.level = NVFP4MOE_LOG_ERROR; /* NVRTC logs of failures go to stderr */
  r = nvfp4moe_create(&d, &ctx);
  if (r == NVFP4MOE_ERROR_NVRTC_TOO_OLD && strcmp(g_target, "sm_103a") == 0) {
    tu_skip("this NVRTC has no sm_103a");
    return;
  }
  CHECK(r == NVFP4MOE_SUCCESS, "create(%s): %s", g_target, nvfp4moe_last_error());
  if (r != NVFP4MOE_SUCCESS) return;
  for (s = 0; s < nvfp4moe_specialization_count(); ++s) {
    double ms = 0;
    int from_disk = -1;
    int applies = nvfp4moe__spec_applies(ctx, s);
    r = nvfp4moe_prepare_specialization(ctx, s, &from_disk, &ms);
    if (applies) {
      CHECK(r == NVFP4MOE_SUCCESS, "%s for %s: %s", nvfp4moe_specialization_name(s), g_target, nvfp4moe_last_error());
      CHECK(from_disk == 0, "no disk cache here");
      printf("# compiled %-20s for %-8s in %7.0f ms\n", nvfp4moe_specialization_name(s), g_target, ms);
      ++built;
    } else {
      CHECK(r == NVFP4MOE_ERROR_NOT_SUPPORTED, "%s must not apply to %s", nvfp4moe_specialization_name(s), g_target);
    }
  }
  CHECK(built >= 6, "only %d specialisations built", built);
  /* warm-up compiles nothing more: everything is in memory already */
  {
    nvfp4moe_info before, after;
    nvfp4moe_query_info(ctx, &before);
    CHECK(nvfp4moe_warmup(ctx) == NVFP4MOE_SUCCESS, "warmup: %s", nvfp4moe_last_error());
    nvfp4moe_query_info(ctx, &after);
    CHECK(after.compiles == before.compiles, "warm-up recompiled something");
  }
  nvfp4moe_destroy(ctx);
}

int main(void) {
  static const char* targets[] = {"sm_80", "sm_90a", "sm_100a", "sm_103a"};
  static const char* names[] = {"nvrtc_compiles_all_for_sm_80", "nvrtc_compiles_all_for_sm_90a",
                                "nvrtc_compiles_all_for_sm_100a", "nvrtc_compiles_all_for_sm_103a"};
  int i;
  for (i = 0; i < 4; ++i) {
    g_target = targets[i];
    tu_run(names[i], compile_all_for_target);
  }
  return tu_total_fail ? 1 : 0;
}
