/* libnvfp4moe.c -- the header as a shared library, for tools that load it with ctypes
   (tools/bench.py) or link it instead of including it. */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
