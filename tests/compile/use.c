/* ...another only includes the declarations and calls into it. */
#include "../../nvfp4moe.h"
#include <stdio.h>
#include <string.h>
int main(void) {
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  nvfp4moe_quantize_args q;
  memset(&d, 0, sizeof d); /* C++ users may write `nvfp4moe_desc d = {};` */
  memset(&q, 0, sizeof q);
  d.flags = NVFP4MOE_FLAG_OFFLINE;
  d.target = "sm_80";
  printf("%u %s %u\n", nvfp4moe_version(), nvfp4moe_result_string(nvfp4moe_ref_quantize_per_token(&q)),
         nvfp4moe_ref_e2m1_from_f32(1.0f));
  if (nvfp4moe_create(&d, &ctx) == NVFP4MOE_SUCCESS) nvfp4moe_destroy(ctx);
  return (int)nvfp4moe_sf_bytes(1, 16, NVFP4MOE_SF_LAYOUT_LINEAR) - 1;
}
