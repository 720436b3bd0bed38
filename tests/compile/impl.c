/* One translation unit holds the implementation... */
#define NVFP4MOE_IMPLEMENTATION
#include "../../nvfp4moe.h"
#include "../../nvfp4moe.h" /* a second include is harmless */
