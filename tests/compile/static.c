/* The STATIC variant: everything private to this translation unit. */
#define NVFP4MOE_STATIC
#define NVFP4MOE_IMPLEMENTATION
#include "../../nvfp4moe.h"
int main(void) { return nvfp4moe_ref_e4m3_from_f32(448.0f) == 0x7E ? 0 : 1; }
