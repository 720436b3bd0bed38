/* nvfp4moe.h -- NVFP4 Mixture-of-Experts kernels for C and C++, in one header.

   WHAT IT IS
   Per-token NVFP4 quantization and masked grouped NVFP4 GEMM (the DeepEP low-latency
   layout, as FlashInfer's CuTe DSL grouped_gemm_nt_masked), plus per-expert
   quantization, fused SiLU-and-mul + quantize, weight quantization, scale-factor (SF)
   layout conversion, dequantization and a whole expert layer. The CUDA kernels are
   embedded in this file as text, compiled with NVRTC at first use for the GPU found,
   cached on disk, and launched through the CUDA driver API. Nothing is linked: the
   driver (libcuda.so.1 / nvcuda.dll) and NVRTC are loaded at run time.

   HOW TO INCLUDE
   In exactly one C or C++ file:
       #define NVFP4MOE_IMPLEMENTATION
       #include "nvfp4moe.h"
   Everywhere else just #include "nvfp4moe.h". Build with `cc app.c` (add -ldl on
   glibc older than 2.34). Compile the implementation file without -ffast-math: the
   host reference numerics need IEEE arithmetic. In strict ISO mode (-std=c99) include the
   implementation before other system headers, or define _POSIX_C_SOURCE=200809L
   (clock_gettime and the POSIX file calls).

   CONFIGURATION MACROS (define before the implementation include)
       NVFP4MOE_STATIC      all functions static (private to that translation unit)
       NVFP4MOE_ASSERT(c)   your assert (default: assert from <assert.h>)

   MINIMAL EXAMPLE
       nvfp4moe_desc desc = {0};              zero fields mean defaults
       nvfp4moe_context* ctx;
       if (nvfp4moe_create(&desc, &ctx) != NVFP4MOE_SUCCESS) { puts(nvfp4moe_last_error()); return 1; }
       nvfp4moe_quantize_args q = {0};
       q.dtype = NVFP4MOE_DTYPE_BF16; q.groups = 1; q.rows = M; q.k = K;
       q.x = x_dev; q.out_e2m1 = q_dev; q.out_sf = sf_dev; q.scale = scale_dev;
       nvfp4moe_quantize_per_token(ctx, &q, stream);
       nvfp4moe_destroy(ctx);

   ENVIRONMENT
       NVFP4MOE_CACHE_DIR    cubin cache directory (after desc.cache_dir; then
                             $XDG_CACHE_HOME/nvfp4moe, ~/.cache/nvfp4moe)
       NVFP4MOE_NVRTC_PATH   NVRTC library tried first; then libnvrtc.so.13 / .so.12 on the
                             loader path, $CUDA_HOME (else $CUDA_PATH)/lib64 and
                             /usr/local/cuda/lib64 (a pip wheel's NVRTC needs this variable)
       NVFP4MOE_BACKEND      portable | sm90 | sm100 (after desc.backend)
       NVFP4MOE_NO_JIT=1     fail with NVFP4MOE_ERROR_CACHE_MISS instead of compiling
       NVFP4MOE_PDL          programmatic dependent launch (sm_90+): unset = the quantization
                             kernels (but the expert layer's SiLU quantizer after a token-producer
                             GEMM1: NVFP4MOE_LAYER_PDL, README), 0 = none, 1 = every kernel (each
                             waits for the kernel ahead of it on the stream before touching memory)
       NVFP4MOE_LOG_LEVEL    level of loggers left at 0 and of the host reference functions:
                             1 error ... 4 debug, 0 or negative = silent (default 2, warnings)
       NVFP4MOE_GEMM_CONFIG, NVFP4MOE_TUNE_DEFINE   benchmarks and tuning only (README)

   CONVENTIONS
   Device memory is the caller's: pointers are CUdeviceptr values (nvfp4moe_devptr),
   streams are CUstream (nvfp4moe_stream). Nothing allocates device memory in the hot
   path. Scales are DECODE scales unless a name says otherwise: x ~= e2m1 * sf * s, as
   ModelOpt's weight_scale_2 / input_scale (FlashInfer's quantizer takes the encode
   scale 1/s). The numerics contract is docs/numerics.md of the repository.

   Licence: MIT, at the end of this file.
*/
#ifndef NVFP4MOE_H_INCLUDED
#define NVFP4MOE_H_INCLUDED

#include <stddef.h>

/* 0.2.0: nvfp4moe_gemm_args and nvfp4moe_moe_weights gained trailing fields (b_layout,
   layout), so their sizes changed: rebuild callers compiled against 0.1.
   0.3.0: TILED weights for any K % 32 == 0 (rows padded to whole 128-K steps, so a TILED
   matrix can be larger than [N, K/2]: nvfp4moe_weight_bytes, new)
   0.4.0: TILED weights' codes re-encoded within each 4-byte word (see nvfp4moe_weight_layout):
   TILED bytes made by an earlier version give wrong results; re-run nvfp4moe_weights_relayout
   on the ROW_MAJOR weights. ROW_MAJOR and the API are unchanged.
   0.4.1: nvfp4moe_create rejects desc->flags bits no NVFP4MOE_FLAG_* names (INVALID_ARGUMENT; they
   were ignored); on sm90 the TILED token-producer GEMM tiles run _k256_tiled twins where K % 256 == 0
   (NVFP4MOE_K256=0 turns them off); formats unchanged.
   0.4.2: so does the TILED 8-token swap-AB tile on sm_90a targets (gemm_swapab_t8_k256_tiled);
   formats and API unchanged.
   0.5.0: the GEMMs on TILED weights widen both operands to F16 (exact, as BF16 was) and the TILED
   codes are placed for it (see nvfp4moe_weight_layout): TILED bytes made by 0.4.x give wrong results;
   re-run nvfp4moe_weights_relayout on the ROW_MAJOR weights. ROW_MAJOR, results and the API are
   unchanged.
   0.5.1: the sm90 wgmma tiles on TILED weights load a step's second weight row at an immediate
   offset from the first (one address register fewer a step); formats, results and API unchanged.
   0.5.2: the fused SiLU-and-mul + quantize kernels compute the SiLU inline (no call per element);
   formats, results and API unchanged.
   0.5.3: the sm90 64- and 128-token tiles write their results as whole 16-byte pieces, transposed in
   registers; the 64-token tiles on TILED weights run on a resident grid, as the 32-token tiles do;
   formats, results and API unchanged.
   0.5.4: the sm90 resident grid can number its work units without gaps from a per-CTA table of units
   per group (tuning define -DNVF_PCOMPACT=1/2; off by default, the default kernels do the same loads,
   stores and barriers as 0.5.3's); formats, results and API unchanged.
   0.5.5: the sm90 48-token tile on TILED weights runs on the resident grid, its units numbered without
   gaps from the per-CTA table; the 32- and 48-token tiles decode their next unit once, when a unit
   starts (-DNVF_PCOMPACT=0 builds 0.5.4's kernels); formats, results and API unchanged.
   0.5.6: on TILED weights with K % 256 == 0 and K <= 1024 the sm90 128-token tile runs a resident twin
   (gemm_sm90_ws_t128_wg3[_varn]_k256_res_tiled; -DNVF_RES128=0 keeps 0.5.5's module); formats, results
   and API unchanged.
   0.5.7: the expert layer's SiLU quantizer is not a programmatic dependent launch after a GEMM1 on
   the sm90 token-producer tiles ($NVFP4MOE_LAYER_PDL=3 keeps 0.5.6's launches); kernels, formats,
   results and API unchanged.
   0.5.8: opt-in _img8 kernels for the layer's quantizers ($NVFP4MOE_QIMG8), slower on an H100.
   0.5.9: the _img8 kernels and $NVFP4MOE_QIMG8 (now ignored) removed: both designs measured slower
   (bench/NOTES.md, thirty-eighth to fortieth sessions); kernels, formats, results and API as 0.5.7.
   0.5.10, 0.5.11: $NVFP4MOE_L2_PREFETCH (off by default): the token pre-pass and the expert layer's
   SiLU quantizer could prefetch into L2 the first weights of the GEMM after them (capped at half
   the L2 in 0.5.11).
   0.5.12: the L2 prefetch and $NVFP4MOE_L2_PREFETCH (now ignored) removed: every setting made the
   DeepSeek-V3 layer 2-9 us slower on an H100 (bench/NOTES.md, forty-fourth session). Default
   kernels, results and API as 0.5.9; the tuning defines NVF_QSILU_MINB, NVF_QPLAIN_MINB (measured
   slower) and NVF_WIDEN_SKIP, added just after 0.5.9 (read by no default build), stay.
   0.5.13: the token pre-pass of a GEMM with a workspace no longer writes the rows past masked_m
   (NVF_WIDEN_SKIP on by default; -DNVF_WIDEN_SKIP=0 puts back 0.5.12's zeros): the DeepSeek-V3 and
   Qwen3 layers 3.7 and 3.1 us (0.9 and 1.7 %) faster on an H100, means of four runs each, every
   run faster than every 0.5.12 run (bench/NOTES.md, forty-sixth session). Results and API unchanged.
   0.5.14: the plain (unstaged, non-SiLU) quantizer gives the rows of its last round, when fewer than
   its teams, to wider teams, up to a whole CTA (NVF_QTAIL on by default; -DNVF_QTAIL=0 builds 0.5.13's
   kernels): the DeepSeek-V3 layer's input quantizer 0.7 us less exposed on an H200, traced; the layer
   within the run's noise (bench/NOTES.md, forty-seventh session). Results and API unchanged.
   0.5.15: the quantizer's outer loop without its pass counter, a thread's first code and SF offsets
   set once a pass (sm_90a: 8 to 16 fewer instructions in each non-SiLU quantize kernel, the plain
   kernels' stack 16 -> 8 bytes); on an H100 no quantizer or layer cell slower than 0.5.14's
   (bench/NOTES.md, forty-eighth session). Results and API unchanged.
   0.5.16 (host code only): every int dimension at most NVFP4MOE_DIM_MAX (2^30; larger ones are an
   argument error and give workspace size 0: int sums such as n + 127 overflowed for shapes the checks passed,
   and the layer's workspace size wrapped); the expert layer checks its weights' alignment; offline
   targets with a leading zero or five digits rejected; the disk cache takes anything but a regular
   file at a key's path as a miss (a FIFO there made the read wait) and turns itself off, with a
   warning, for a directory path longer than 511 characters (it was cut short); query_info's and
   driver_symbol's messages name the null argument; comments (a new user's trial and a breaking
   attempt, fifty-fourth session). Kernels, formats and results unchanged. */
#define NVFP4MOE_VERSION_MAJOR 0
#define NVFP4MOE_VERSION_MINOR 5
#define NVFP4MOE_VERSION_PATCH 16
#define NVFP4MOE_VERSION_STRING "0.5.16"

#if defined(NVFP4MOE_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define NVFP4MOE_API __attribute__((unused)) static
#elif defined(NVFP4MOE_STATIC)
#define NVFP4MOE_API static
#else
#define NVFP4MOE_API extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
   Types
   ====================================================================================== */

/* A device address (the value of a CUdeviceptr) and a stream (a CUstream; 0 = the
   legacy default stream). Declared here so that cuda.h is not needed. */
typedef unsigned long long nvfp4moe_devptr;
typedef void* nvfp4moe_stream;

/* Every function returns one of these; nvfp4moe_last_error() has the message. */
#define NVFP4MOE__RESULTS(X)                                                              \
  X(SUCCESS, "success")                                                                   \
  X(ERROR_INVALID_ARGUMENT, "an argument breaks a rule; the message names it")            \
  X(ERROR_OUT_OF_MEMORY, "a host allocation failed")                                      \
  X(ERROR_DRIVER_NOT_FOUND, "the CUDA driver (libcuda.so.1 / nvcuda.dll) could not be loaded") \
  X(ERROR_NVRTC_NOT_FOUND, "NVRTC (libnvrtc.so.13 / .so.12 / nvrtc64_*.dll) could not be loaded") \
  X(ERROR_NO_DEVICE, "no CUDA device with that ordinal")                                  \
  X(ERROR_UNSUPPORTED_GPU, "the GPU (or offline target) is older than compute capability 8.0") \
  X(ERROR_NVRTC_TOO_OLD, "this NVRTC cannot compile for the GPU found")                   \
  X(ERROR_COMPILE_FAILED, "NVRTC failed to compile a kernel; the log went to the logger") \
  X(ERROR_CACHE_MISS, "the no-JIT mode is on and a kernel is not in the disk cache")      \
  X(ERROR_CUDA, "a CUDA driver call failed")                                              \
  X(ERROR_NOT_SUPPORTED, "not available in this configuration")

typedef enum nvfp4moe_result {
#define NVFP4MOE__ENUM(name, text) NVFP4MOE_##name,
  NVFP4MOE__RESULTS(NVFP4MOE__ENUM)
#undef NVFP4MOE__ENUM
  NVFP4MOE_RESULT_COUNT
} nvfp4moe_result;

typedef enum nvfp4moe_dtype {
  NVFP4MOE_DTYPE_BF16 = 0,
  NVFP4MOE_DTYPE_FP16 = 1,
  NVFP4MOE_DTYPE_F32 = 2 /* outputs of dequantization only */
} nvfp4moe_dtype;

/* Scale-factor layouts (one ue4m3 byte per 16 K elements of a row; r = row, c = k/16,
   Kc4 = ceil(K/16/4)):
   128X4   off = (r/128)*Kc4*512 + (c/4)*512 + (r%32)*16 + ((r%128)/32)*4 + c%4, matrix
           size roundup(rows,128)*4*Kc4, padding bytes 0. What tcgen05 block-scaled MMA
           reads; FlashInfer SfLayout.layout_128x4, cuBLAS/torch "to_blocked".
   LINEAR  off = r*(K/16) + c (ModelOpt checkpoints). */
typedef enum nvfp4moe_sf_layout {
  NVFP4MOE_SF_LAYOUT_128X4 = 0,
  NVFP4MOE_SF_LAYOUT_LINEAR = 1
} nvfp4moe_sf_layout;

/* Byte layouts of E2M1 weights [G, N, K/2] (the GEMMs' B; the SFs stay 128x4 either way).
   ROW_MAJOR: row n of group g at (g N + n) K/2, as ModelOpt checkpoints, FlashInfer and
   SGLang store them. TILED (needs N % 16 == 0): the same codes rearranged into tiles of 16
   rows, each tile's 16 rows x 64 bytes (128 K) of one K step stored together (1 KB), the
   steps of a tile one after another; a row takes RB = ceil(K/128) x 64 bytes (K/2 when
   K % 128 == 0; else the last step is padded with zero bytes, so the matrix is larger than
   [N, K/2]: nvfp4moe_weight_bytes); byte o of row n at
   (g N + n - n % 16) RB + (o / 64) 1024 + (n % 16) 64 + o % 64, and within each little-endian
   4-byte word (elements 8j .. 8j+7 of a row, element i in nibble i of the row-major word) the codes
   re-encoded: element i's magnitude bits (E2M1 bits 0-2) at bits {9, 6, 3, 0}[i % 4] + 16 (i / 4)
   up, its sign at {15, 12, 14, 13}[i % 4] + 16 (i / 4), so the GEMMs widen a word to F16 (each
   value times 2^-14, exact) in 9 integer operations (0.4.x placed the magnitudes at {6, 3, 0, 9}
   for BF16: re-run nvfp4moe_weights_relayout on bytes made by it). That is: take the row-major word at byte o (o % 4 == 0) as
   a little-endian u32, move bit b of element i's magnitude to that place + b and its sign bit
   (bit 3 of the nibble) to its sign place, store the result little-endian at the TILED offset
   of o. An offline pre-shuffle as Marlin's: the sm_80/sm_90 GEMM kernels read one contiguous
   KB per warp and step and widen it in fewer instructions (on an H200, in one run of 0.5.0: 9.5-16 %
   less time than on row-major weights at m <= 8, 8-13 % at 32 tokens; bench/NOTES.md). Made by
   nvfp4moe_weights_relayout; nvfp4moe_preferred_weight_layout says which one to use. */
typedef enum nvfp4moe_weight_layout {
  NVFP4MOE_WEIGHTS_ROW_MAJOR = 0,
  NVFP4MOE_WEIGHTS_TILED = 1
} nvfp4moe_weight_layout;

/* GEMM backends. AUTO picks sm100 on compute capability 10.0/10.3 (after its self-test),
   sm90 on 9.0 (sm_90a target), portable elsewhere from 8.0 up. */
typedef enum nvfp4moe_backend {
  NVFP4MOE_BACKEND_AUTO = 0,
  NVFP4MOE_BACKEND_PORTABLE = 1, /* mma.sync after exact dequantization (BF16; the swap-AB tiles on
                                    TILED weights F16), sm_80+ */
  NVFP4MOE_BACKEND_SM90 = 2,     /* Hopper: wgmma after exact dequantization (sm_90a; BF16, F16 on
                                    TILED weights), the portable swap-AB kernel for the fewest tokens */
  NVFP4MOE_BACKEND_SM100 = 3     /* tcgen05 kind::mxf4nvf4 block-scaled MMA */
} nvfp4moe_backend;

/* Context flags (nvfp4moe_desc.flags). */
enum {
  NVFP4MOE_FLAG_NO_JIT = 1u,        /* a kernel missing from the disk cache is an error */
  NVFP4MOE_FLAG_NO_DISK_CACHE = 2u, /* compile in memory only */
  NVFP4MOE_FLAG_NO_SELF_TEST = 4u,  /* trust the native SM100 path without checking it */
  NVFP4MOE_FLAG_OFFLINE = 8u,       /* no GPU: compile and cache for desc.target only */
  NVFP4MOE_FLAG_SOFT_CVT = 16u      /* software E2M1/E4M3 conversion even where cvt exists */
};

/* Quantizer flags. 4over6 ("Four Over Six" adaptive block scaling): per block also try
   the scale that maps the block max to 4 instead of 6 and keep it iff its summed error
   is strictly smaller (MAE by default, MSE with the second flag). */
enum {
  NVFP4MOE_QUANT_4OVER6 = 1u,
  NVFP4MOE_QUANT_4OVER6_MSE = 2u /* implies 4over6 */
};

/* Log levels given to the logger callback. */
enum { NVFP4MOE_LOG_ERROR = 1, NVFP4MOE_LOG_WARN = 2, NVFP4MOE_LOG_INFO = 3, NVFP4MOE_LOG_DEBUG = 4 };

/* Host memory callbacks; both null = malloc/free. */
typedef struct nvfp4moe_allocator {
  void* (*alloc_fn)(size_t size, void* user_data);
  void (*free_fn)(void* ptr, void* user_data);
  void* user_data;
} nvfp4moe_allocator;

/* Log callback; func null = messages at `level` or below go to stderr. level 0 means
   $NVFP4MOE_LOG_LEVEL if set, else NVFP4MOE_LOG_WARN; a negative level silences the context's
   messages (errors are still returned, and nvfp4moe_last_error() keeps the text). The host
   reference functions take no description: their messages follow that default (to stderr;
   NVFP4MOE_LOG_LEVEL=-1 silences them). At NVFP4MOE_LOG_DEBUG
   every kernel launch is logged ("<function>: launched <kernel>, <n> CTAs of <t> threads, <b>
   bytes of dynamic shared memory"), to see which kernel a call took. The callback may be
   called from any thread that uses the context. */
typedef struct nvfp4moe_logger {
  void (*func)(int level, const char* message, void* user_data);
  void* user_data;
  int level;
} nvfp4moe_logger;

/* Context description. Zero-initialise it; every zero field means the default, and
   nvfp4moe_query_desc() returns the values in effect. */
typedef struct nvfp4moe_desc {
  int device;               /* CUDA device ordinal (default 0) */
  void* cu_context;         /* a CUcontext to use; null = the device's primary context */
  const char* cache_dir;    /* null: $NVFP4MOE_CACHE_DIR, $XDG_CACHE_HOME/nvfp4moe, ~/.cache/nvfp4moe */
  const char* target;       /* NVFP4MOE_FLAG_OFFLINE only: "sm_80", "sm_90a", "sm_100a", ... as
                               a GPU of that kind uses: H100/H200 sm_90a, B200 sm_100a, B300
                               sm_103a (a cache built for plain "sm_90" serves no GPU) */
  nvfp4moe_backend backend; /* AUTO: $NVFP4MOE_BACKEND, else by GPU */
  unsigned flags;           /* NVFP4MOE_FLAG_* ($NVFP4MOE_NO_JIT=1 adds NO_JIT) */
  nvfp4moe_allocator allocator;
  nvfp4moe_logger logger;
} nvfp4moe_desc;

typedef struct nvfp4moe_context nvfp4moe_context;

/* What a context found and did (nvfp4moe_query_info). */
typedef struct nvfp4moe_info {
  char gpu_name[128];
  char target[16];          /* NVRTC target, e.g. "sm_90a" */
  char cache_dir[512];      /* "" when the disk cache is off */
  int cc_major, cc_minor, sm_count; /* 0 on an offline context */
  int nvrtc_major, nvrtc_minor;
  int driver_version;       /* cuDriverGetVersion, 0 offline */
  nvfp4moe_backend gemm_backend;
  int sm100_self_test;      /* 0 not run, 1 passed, -1 failed (portable path used) */
  unsigned long long compiles, disk_hits, disk_writes, disk_rejects, modules_loaded;
  double compile_ms;        /* total NVRTC time in this context */
} nvfp4moe_info;

/* Quantization of activations: x [G, rows, K] bf16/fp16 (G = 1 for a plain [M, K]
   tensor) -> packed E2M1 [G, rows, K/2] (element 2j in the low nibble of byte j), one
   ue4m3 SF per 16 elements, and a decode scale per token (row) or per group.
   Masked form: masked_m int32 [G] on the device; rows >= masked_m[g] (clamped to
   [0, rows]) are neither read nor written, including their SF bytes. Without masked_m
   every row is valid and, in the 128x4 layout, the padding rows up to
   roundup(rows, 128) are written with zero SFs. Padding SF columns of written rows are
   always zero. */
typedef struct nvfp4moe_quantize_args {
  nvfp4moe_dtype dtype;       /* BF16 or FP16 */
  int groups;                 /* G >= 1 */
  int rows;                   /* rows per group (M, or M_max of the masked layout), >= 1 */
  int k;                      /* K: a positive multiple of 16 (SiLU: the output width I) */
  long long x_row_stride;     /* elements between rows of x; 0 = K (SiLU: 2K); multiple of 8 */
  nvfp4moe_devptr x;          /* input, 16-byte aligned; group g starts at g*rows*x_row_stride */
  nvfp4moe_devptr masked_m;   /* int32 [G] on the device, or 0 */
  nvfp4moe_devptr out_e2m1;   /* u8 [G, rows, K/2], 8-byte aligned */
  nvfp4moe_devptr out_sf;     /* u8, G * nvfp4moe_sf_bytes(rows, K, layout) */
  nvfp4moe_sf_layout sf_layout;
  nvfp4moe_devptr scale;      /* per-token: OUT f32 [G, rows]; per-tensor: IN f32 [G] or 0 */
  float scale_value;          /* per-tensor with scale == 0: the decode scale (finite, normal, > 0) */
  nvfp4moe_devptr gate_scale; /* SiLU only, optional f32 [G]: multiplies the gate half */
  nvfp4moe_devptr up_scale;   /* SiLU only, optional f32 [G]: multiplies the up half */
  unsigned flags;             /* NVFP4MOE_QUANT_* */
} nvfp4moe_quantize_args;

/* Weight quantization: w [E, N, K] bf16/fp16 -> per-expert decode scale
   amax(|finite w_e|) / 2688 (ModelOpt weight_scale_2), E2M1 [E, N, K/2] and 128x4 SF
   (E * nvfp4moe_sf_bytes(N, K, 128X4)), ready for the GEMM's B operand. */
typedef struct nvfp4moe_weight_quantize_args {
  nvfp4moe_dtype dtype;
  int experts, n, k;          /* E >= 1, N >= 1, K a multiple of 16 */
  nvfp4moe_devptr w;          /* 16-byte aligned */
  nvfp4moe_devptr out_e2m1;   /* 8-byte aligned */
  nvfp4moe_devptr out_sf;
  nvfp4moe_devptr out_scale;  /* f32 [E] decode scales */
  unsigned flags;             /* NVFP4MOE_QUANT_* */
} nvfp4moe_weight_quantize_args;

/* SF layout conversion of G matrices of [rows, K/16] scale factors. Every destination
   byte is written (128x4 padding = 0). */
typedef struct nvfp4moe_sf_convert_args {
  int groups, rows, k;
  nvfp4moe_devptr src, dst;   /* must not overlap */
  nvfp4moe_sf_layout dst_layout; /* the source has the other layout */
} nvfp4moe_sf_convert_args;

/* Weight layout conversion of G [N, K] matrices of E2M1 codes (nvfp4moe_weight_layout: the
   bytes rearranged and, to or from TILED, each word's codes re-encoded; the SFs are not
   touched). N % 16 == 0 and K % 32 == 0; to TILED, the padding of a last
   partial 128-K step is written as zeros. */
typedef struct nvfp4moe_weights_relayout_args {
  int groups, n, k;
  nvfp4moe_devptr src, dst;   /* each G x nvfp4moe_weight_bytes(N, K, its own layout) bytes (ROW_MAJOR
                                 G N K/2; TILED more when K % 128 != 0: not checkable here, so size
                                 them with that function), 16-byte aligned, must not overlap (no
                                 conversion in place) */
  nvfp4moe_weight_layout dst_layout; /* the source has the other layout */
} nvfp4moe_weights_relayout_args;

/* Dequantization: x = (e2m1(q) * ue4m3(sf)) * s, s per row [G, rows] or per group [G];
   an SF byte 0x7F (a faulted block) gives NaN (0x7FC00000 / bf16 0x7FFF). Rows >=
   masked_m are not written. */
typedef struct nvfp4moe_dequantize_args {
  int groups, rows, k;
  nvfp4moe_devptr e2m1, sf;   /* as the quantizer writes them */
  nvfp4moe_sf_layout sf_layout;
  nvfp4moe_devptr scale;      /* f32 decode scales */
  int scale_per_row;          /* 1: [G, rows]; 0: [G]; anything else is an argument error */
  nvfp4moe_devptr masked_m;   /* optional int32 [G] */
  nvfp4moe_dtype out_dtype;   /* F32 or BF16 */
  nvfp4moe_devptr out;        /* [G, rows, K] */
} nvfp4moe_dequantize_args;

/* Masked grouped GEMM, NT (FlashInfer grouped_gemm_nt_masked):
     D[g,m,n] = bf16(alpha[g] * row_scale[g,m] * sum_k A[g,m,k] * B[g,n,k])
   for m < masked_m[g] (clamped to [0, m_max]); rows >= masked_m[g] of D are left
   untouched. A and B are NVFP4 with 128x4 SFs; sums are f32. */
typedef struct nvfp4moe_gemm_args {
  int groups;                 /* G >= 1 */
  int m_max;                  /* rows of A and D per group, >= 1 */
  int n;                      /* multiple of 8 */
  int k;                      /* multiple of 32 */
  nvfp4moe_devptr a;          /* u8 [G, m_max, K/2], 16-byte aligned */
  nvfp4moe_devptr a_sf;       /* 128x4, G * nvfp4moe_sf_bytes(m_max, K, 128X4), 16-byte aligned */
  nvfp4moe_devptr b;          /* u8 [G, N, K/2] (weights), 16-byte aligned; TILED: G x
                                 nvfp4moe_weight_bytes(N, K, TILED) bytes */
  nvfp4moe_devptr b_sf;       /* 128x4, G * nvfp4moe_sf_bytes(N, K, 128X4), 16-byte aligned */
  nvfp4moe_devptr masked_m;   /* int32 [G] on the device; never read on the host (the nvfp4moe_ref_*
                                 host reference takes host arrays for masked_m, alpha, row_scale) */
  nvfp4moe_devptr alpha;      /* f32 [G]: the product of the decode scales not in row_scale (with
                                 row_scale, the weights' alone), or 0 for 1 */
  nvfp4moe_devptr row_scale;  /* optional f32 [G, m_max] (per-token scales of A), or 0 */
  nvfp4moe_devptr d;          /* bf16 [G, m_max, ldd], 16-byte aligned */
  long long ldd;              /* elements between rows of D; 0 = N; multiple of 8, >= N */
  int expected_m;             /* typical (mean) masked_m, picks the tiles: a tile holds about
                                 expected_m + 2 sqrt(expected_m) rows, more rows in a group cost
                                 extra passes, never correctness; 0 = m_max. On sm90 with
                                 tiles of more than 16 rows, 0 < expected_m < m_max also says
                                 masked_m varies: each part-full tile then issues its MMAs with
                                 the smallest of four N that holds its rows (README, "_varn"
                                 tiles; up to 5-9 % slower where every tile is full anyway) */
  nvfp4moe_devptr workspace;  /* optional, 16-byte aligned, >= nvfp4moe_gemm_workspace_size()
                                 bytes: the sm90 token-producer tiles (and the 8-token swap-AB
                                 tile on TILED weights, K >= 4096) widen the tokens into it
                                 once instead of in every CTA (4-20 % faster at K >= 2048 on an
                                 H200, bench/NOTES.md); 0 = none, the same result. Written by the
                                 call, so one buffer per concurrent call (stream); its contents
                                 on entry never matter (the slots of rows past masked_m are
                                 copied but neither written nor used: compute-sanitizer's
                                 initcheck may report them) */
  size_t workspace_size;      /* bytes at workspace */
  nvfp4moe_weight_layout b_layout; /* of b; 0 = ROW_MAJOR. TILED: N % 16 == 0 */
} nvfp4moe_gemm_args;

/* Activation scaling of the expert layer. */
typedef enum nvfp4moe_act_scaling {
  NVFP4MOE_ACT_PER_TOKEN = 0,  /* each token row gets its own decode scale */
  NVFP4MOE_ACT_PER_EXPERT = 1  /* checkpoint input scales (input_scale1/2 below) */
} nvfp4moe_act_scaling;

/* NVFP4 expert weights as the GEMMs take them (ModelOpt / SGLang layout). */
typedef struct nvfp4moe_moe_weights {
  /* (device pointers: w13, w13_sf, w2, w2_sf 16-byte aligned, the f32 arrays 4-byte; input_scale1
     and input_scale2 are read, and checked, only under PER_EXPERT activation scaling) */
  int experts, hidden, inter; /* E, H, I: H and I multiples of 32 */
  nvfp4moe_devptr w13;        /* u8 [E, 2I, H/2], [gate; up] rows, not interleaved */
  nvfp4moe_devptr w13_sf;     /* 128x4 over 2I rows, E * nvfp4moe_sf_bytes(2I, H, 128X4) */
  nvfp4moe_devptr w13_gate_scale; /* f32 [E] decode scale of the gate half (weight_scale_2) */
  nvfp4moe_devptr w13_up_scale;   /* f32 [E] decode scale of the up half (may equal gate's) */
  nvfp4moe_devptr w2;         /* u8 [E, H, I/2] */
  nvfp4moe_devptr w2_sf;      /* 128x4 over H rows, E * nvfp4moe_sf_bytes(H, I, 128X4) */
  nvfp4moe_devptr w2_scale;   /* f32 [E] */
  nvfp4moe_devptr input_scale1; /* PER_EXPERT: f32 [E] decode scale of x (input_scale of w13) */
  nvfp4moe_devptr input_scale2; /* PER_EXPERT: f32 [E] decode scale of the SiLU output */
  nvfp4moe_weight_layout layout; /* of w13 and w2; 0 = ROW_MAJOR. TILED: E x nvfp4moe_weight_bytes(2I, H,
                                    TILED) and E x nvfp4moe_weight_bytes(H, I, TILED) bytes */
} nvfp4moe_moe_weights;

/* One expert-layer forward in the masked (DeepEP low-latency) layout:
   x [E, m_max, H] bf16 -> quantize -> GEMM1 (w13) -> bf16(silu(gate) * up) -> quantize
   -> GEMM2 (w2) -> out [E, m_max, H] bf16 (rows >= masked_m untouched). Top-k weights
   are applied by the caller's combine, as DeepEP does. */
typedef struct nvfp4moe_moe_args {
  int m_max;                  /* rows per expert */
  int expected_m;             /* typical (mean) masked_m, picks the GEMM tiles as in
                                 nvfp4moe_gemm_args; 0 = m_max */
  nvfp4moe_act_scaling scaling;
  unsigned quant_flags;       /* NVFP4MOE_QUANT_* for both activation quantizations */
  nvfp4moe_devptr x;          /* bf16 [E, m_max, H], 16-byte aligned */
  nvfp4moe_devptr masked_m;   /* int32 [E] on the device */
  nvfp4moe_devptr out;        /* bf16 [E, m_max, H], 16-byte aligned */
  nvfp4moe_devptr workspace;  /* nvfp4moe_moe_workspace_size_for() bytes (nvfp4moe_moe_workspace_size()
                                 always fits), 256-byte aligned */
  size_t workspace_size;
} nvfp4moe_moe_args;

/* ======================================================================================
   Functions
   Every int dimension an operation takes (groups, experts, rows, m_max, N, K, hidden, 2 x inter)
   must be at most 2^30 (NVFP4MOE_DIM_MAX): larger ones are an argument error, and the workspace-
   size functions give 0 for them.
   ====================================================================================== */
#define NVFP4MOE_DIM_MAX (1 << 30)

/* ---- version, results, errors -------------------------------------------------------- */

/* (major << 16) | (minor << 8) | patch of the compiled implementation. */
NVFP4MOE_API unsigned nvfp4moe_version(void);
/* Static text for a result code ("unknown result" when out of range). */
NVFP4MOE_API const char* nvfp4moe_result_string(nvfp4moe_result r);
/* The message of the last failed call in this thread ("" if none): a thread-local buffer,
   valid until this thread's next failing call or nvfp4moe_create, which clears it (copy it to
   keep it). */
NVFP4MOE_API const char* nvfp4moe_last_error(void);

/* ---- context --------------------------------------------------------------------------- */

/* Creates a context: loads the driver and NVRTC, binds to the device (or desc->cu_context),
   picks the NVRTC target and the GEMM backend, and prepares the disk cache. Compiles
   nothing yet (see nvfp4moe_warmup). desc may be null (all defaults).
   Errors: DRIVER_NOT_FOUND, NVRTC_NOT_FOUND, NO_DEVICE, UNSUPPORTED_GPU (the GPU, or an offline
   desc->target such as "sm_75", older than sm_80), NVRTC_TOO_OLD,
   INVALID_ARGUMENT (offline without a desc->target of the form "sm_90a" or "sm_80", a bad
   desc field such as a flag bit no NVFP4MOE_FLAG_* names, or a bad environment value),
   NOT_SUPPORTED (desc->backend or NVFP4MOE_BACKEND names a backend the target lacks),
   CUDA, OUT_OF_MEMORY.
   Thread safety: a context may be used by many threads at once. */
NVFP4MOE_API nvfp4moe_result nvfp4moe_create(const nvfp4moe_desc* desc, nvfp4moe_context** out);
/* Unloads the modules and releases the primary context if it was retained. ctx null: no-op. */
NVFP4MOE_API void nvfp4moe_destroy(nvfp4moe_context* ctx);
/* The description in effect (defaults filled in; strings live as long as ctx). ctx null:
   a zeroed description. */
NVFP4MOE_API nvfp4moe_desc nvfp4moe_query_desc(const nvfp4moe_context* ctx);
/* What the context runs on and has done (nvfp4moe_info: GPU, NVRTC target, cache folder,
   backend, SM100 self-test result, compile and disk-cache counters), written to *info.
   Errors: INVALID_ARGUMENT (ctx or info null). */
NVFP4MOE_API nvfp4moe_result nvfp4moe_query_info(const nvfp4moe_context* ctx, nvfp4moe_info* info);
/* Compiles or loads from the disk cache every kernel specialisation this context can
   use (for an offline context: every one its target supports), the GEMMs' _tiled twins for
   TILED weights included.
   Errors: INVALID_ARGUMENT (ctx null), COMPILE_FAILED (NVRTC failed; the log is printed),
   CACHE_MISS (NO_JIT and a kernel not cached), CUDA (module load). */
NVFP4MOE_API nvfp4moe_result nvfp4moe_warmup(nvfp4moe_context* ctx);
/* The kernel specialisations, for tools and tests: count, name (null for an index outside
   [0, count)), and preparing one (compile or disk hit, load unless offline). from_disk and
   ms may be null. Errors: INVALID_ARGUMENT (ctx null, index outside [0, count)),
   NOT_SUPPORTED (the specialisation does not apply to the context's target; not logged),
   and nvfp4moe_warmup's. */
NVFP4MOE_API int nvfp4moe_specialization_count(void);
NVFP4MOE_API const char* nvfp4moe_specialization_name(int index);
NVFP4MOE_API nvfp4moe_result nvfp4moe_prepare_specialization(nvfp4moe_context* ctx, int index,
                                                             int* from_disk, double* ms);
/* A CUDA driver entry point (as cuGetProcAddress, CUDA 12 ABI) from the driver the
   library loaded, so tests and tools need not link libcuda. Errors: INVALID_ARGUMENT (name
   or fn null), DRIVER_NOT_FOUND, NOT_SUPPORTED (the driver has no such entry point). */
NVFP4MOE_API nvfp4moe_result nvfp4moe_driver_symbol(const char* name, void** fn);

/* ---- sizes ------------------------------------------------------------------------------ */

/* Bytes of one matrix of SFs for [rows, K] in a layout (128X4: roundup(rows,128)*4*Kc4; LINEAR:
   rows*K/16); 0 for rows <= 0, K not a positive multiple of 16 or an unknown layout. */
NVFP4MOE_API size_t nvfp4moe_sf_bytes(int rows, int k, nvfp4moe_sf_layout layout);
/* Bytes of one group's E2M1 weight matrix [N, K] in a weight layout (nvfp4moe_weight_layout):
   ROW_MAJOR N x K/2; TILED N x ceil(K/128) x 64 (the same when K % 128 == 0). 0 for N <= 0,
   K not a positive multiple of 32, TILED with N % 16 != 0, or an unknown layout. */
NVFP4MOE_API size_t nvfp4moe_weight_bytes(int n, int k, nvfp4moe_weight_layout layout);

/* ---- quantization ----------------------------------------------------------------------- */

/* Per-token quantization (as FlashInfer nvfp4_quantize(per_token_activation=True)):
   each valid row gets decode scale s = row_amax * (1/2688) written to args->scale
   [G, rows]; a zero row gets s = 0 and zero SFs and codes; a row holding NaN/Inf gets
   s = NaN, SF 0x7F and zero codes. Masked when args->masked_m != 0.
   Errors: INVALID_ARGUMENT (null pointers, K not a multiple of 16, rows/groups < 1,
   misaligned pointers or stride, args->scale == 0), NOT_SUPPORTED (offline context). */
NVFP4MOE_API nvfp4moe_result nvfp4moe_quantize_per_token(nvfp4moe_context* ctx,
                                                         const nvfp4moe_quantize_args* args,
                                                         nvfp4moe_stream stream);
/* Per-tensor / per-expert quantization with caller-given decode scales: args->scale
   f32 [G] on the device (as FlashInfer scaled_fp4_grouped_quantize, but decode), or
   args->scale_value when args->scale is 0. A device scale of 0 gives zero SFs and codes;
   a NaN, infinite, negative or subnormal device scale faults the group's rows (SF 0x7F).
   A block holding NaN/Inf gets SF 0x7F and zero codes; the row's other blocks are
   quantized normally. Errors: as per-token, plus a host scale_value that is not a
   finite normal positive number. */
NVFP4MOE_API nvfp4moe_result nvfp4moe_quantize_per_tensor(nvfp4moe_context* ctx,
                                                          const nvfp4moe_quantize_args* args,
                                                          nvfp4moe_stream stream);
/* Fused SiLU-and-mul + quantize (as SGLang silu_and_mul_scaled_nvfp4_experts_quantize):
   args->x is h [G, rows, 2K] bf16 or fp16 (args->dtype) = [gate | up]; y = bf16(silu(gate*gs)
   * (up*us)) with gs/us from gate_scale/up_scale (f32 [G]) when given; y is quantized per
   token or with the given decode scales as the two functions above.
   Errors: as those two (the row stride's width is 2K), NOT_SUPPORTED (offline context). */
NVFP4MOE_API nvfp4moe_result nvfp4moe_silu_mul_quantize_per_token(nvfp4moe_context* ctx,
                                                                  const nvfp4moe_quantize_args* args,
                                                                  nvfp4moe_stream stream);
NVFP4MOE_API nvfp4moe_result nvfp4moe_silu_mul_quantize_per_tensor(nvfp4moe_context* ctx,
                                                                   const nvfp4moe_quantize_args* args,
                                                                   nvfp4moe_stream stream);
/* Weight quantization, into existing buffers (same pointers on a reload keep CUDA-graph
   captures valid). An all-zero expert gets decode scale 0 and zero SFs and codes.
   Errors: INVALID_ARGUMENT (dtype not BF16/FP16, experts/n < 1, K not a multiple of 16,
   null or misaligned pointers, unknown flags), NOT_SUPPORTED (offline context), CUDA. */
NVFP4MOE_API nvfp4moe_result nvfp4moe_quantize_weights(nvfp4moe_context* ctx,
                                                       const nvfp4moe_weight_quantize_args* args,
                                                       nvfp4moe_stream stream);
/* SF layout conversion and dequantization (see their argument structs). Errors:
   INVALID_ARGUMENT (groups/rows < 1, K not a multiple of 16, null pointers, an unknown
   layout or output dtype, overlapping src/dst, misaligned pointers), NOT_SUPPORTED
   (offline context), CUDA. */
NVFP4MOE_API nvfp4moe_result nvfp4moe_sf_convert(nvfp4moe_context* ctx, const nvfp4moe_sf_convert_args* args,
                                                 nvfp4moe_stream stream);
NVFP4MOE_API nvfp4moe_result nvfp4moe_dequantize(nvfp4moe_context* ctx, const nvfp4moe_dequantize_args* args,
                                                 nvfp4moe_stream stream);
/* Weight layout conversion (see nvfp4moe_weights_relayout_args), e.g. ROW_MAJOR ->
   TILED once after loading or quantizing the weights. Errors: INVALID_ARGUMENT (groups < 1,
   N not a multiple of 16, K not a multiple of 32, null, misaligned or overlapping
   pointers, an unknown layout), NOT_SUPPORTED (offline context), CUDA. */
NVFP4MOE_API nvfp4moe_result nvfp4moe_weights_relayout(nvfp4moe_context* ctx, const nvfp4moe_weights_relayout_args* args,
                                                       nvfp4moe_stream stream);
/* The weight layout the context's GEMM kernels read fastest for an [N, K] weight: TILED on
   the sm90 backend when N % 16 == 0 and K % 32 == 0 (on an H200, one run of 0.5.0, bench/NOTES.md
   thirtieth session: 9.5-16 % less time at m <= 8, 8-13 % at 32 tokens, 3-14 % at 128 and 512, the
   expert layers 11-15 %; gpt-oss's K 2880, whose last step is padded, included), else ROW_MAJOR
   (the sm100 kernel reads ROW_MAJOR by TMA; given TILED it runs the sm_80 kernels). A null
   ctx gives ROW_MAJOR. */
NVFP4MOE_API nvfp4moe_weight_layout nvfp4moe_preferred_weight_layout(const nvfp4moe_context* ctx, int n, int k);

/* ---- GEMM and expert layer --------------------------------------------------------------- */

/* Masked grouped NVFP4 GEMM (see nvfp4moe_gemm_args). Reads masked_m only on the device,
   so it can be captured in a CUDA graph and replayed with new counts.
   Errors: INVALID_ARGUMENT (groups or m_max < 1, expected_m < 0, K % 32, N % 8, ldd,
   a dimension past NVFP4MOE_DIM_MAX or offsets past 63 bits, alignment, null pointers, a nonzero
   workspace smaller than nvfp4moe_gemm_workspace_size or not 16-byte aligned, an unknown
   b_layout, TILED with N % 16), NOT_SUPPORTED (offline context). */
NVFP4MOE_API nvfp4moe_result nvfp4moe_grouped_gemm_nt_masked(nvfp4moe_context* ctx,
                                                              const nvfp4moe_gemm_args* args,
                                                              nvfp4moe_stream stream);
/* Bytes of the optional GEMM workspace for these args (shapes, expected_m and b_layout; the
   pointers are not read): about 2 x m_max x K bytes a group (the tokens widened to bf16, f16 for TILED weights) where
   the context's heuristic picks an sm90 token-producer tile, or its 8-token swap-AB tile on
   TILED weights with K >= 4096 (expected_m <= 4: 3-6 % faster on an H200's DeepSeek-V3 GEMM1),
   else 0 (the other swap-AB tiles, sm100 with ROW_MAJOR weights, sm_80 tiles, offline context,
   $NVFP4MOE_TOKEN_PREPASS=0, null or invalid args).
   Same role as the workspace of CUTLASS's grouped GEMM: ask, allocate once, pass. */
NVFP4MOE_API size_t nvfp4moe_gemm_workspace_size(const nvfp4moe_context* ctx, const nvfp4moe_gemm_args* args);

/* Workspace of one expert-layer forward: quantized x, h (bf16, 2 x inter wide), quantized
   SiLU output, scales, and the GEMMs' workspace (nvfp4moe_gemm_workspace_size: widened tokens,
   up to experts x (m_max + 127) x max(hidden, inter) x 2 bytes). Depends only on the
   weights' shapes and m_max, not on the GPU: enough for every call with this m_max, on any
   context. 0 for null weights, non-positive experts, hidden, inter or m_max, a dimension past
   NVFP4MOE_DIM_MAX (2 x inter included), or a size of about 2^62 bytes or more. */
NVFP4MOE_API size_t nvfp4moe_moe_workspace_size(const nvfp4moe_moe_weights* w, int m_max);
/* The workspace one forward on this context needs for these weights' shapes, m_max and
   expected_m (as nvfp4moe_moe_args; the pointers are not read): the same regions, with the
   GEMMs' widened tokens only as large as the tiles this context picks use, and none where it
   picks none (sm100 with ROW_MAJOR weights, the swap-AB decode tiles but the 8-token one on
   TILED weights with K >= 4096, sm_80 tiles, offline, $NVFP4MOE_TOKEN_PREPASS=0). ctx null: the host reference's need (no token region). Never more
   than nvfp4moe_moe_workspace_size; nvfp4moe_moe_forward on this context with these shapes,
   m_max and expected_m accepts it. The need is not monotonic in expected_m (each tile pads
   m_max to its own token count; expected_m 0 means m_max): to size once for calls with several
   expected_m, pass expected_m = -1 (the most any expected_m needs on this context) or use
   nvfp4moe_moe_workspace_size. E.g. DeepSeek-V3 EP8 shapes (32 experts, hidden 7168, inter 2048)
   with m_max 1024 on an H200: with ROW_MAJOR weights no token region at expected_m <= 9
   (swap-AB; TILED: 470 MB for GEMM1's token rows at expected_m <= 4), 484 MB at 23-36 (the
   48-token tile), 470 MB at 37 and up; nvfp4moe_moe_workspace_size holds 528 MB. As
   CUTLASS's get_workspace_size: ask with the call's arguments, allocate, pass. 0 for null
   weights, non-positive experts, hidden, inter or m_max, a dimension past NVFP4MOE_DIM_MAX
   (2 x inter included), or a size of about 2^62 bytes or more. */
NVFP4MOE_API size_t nvfp4moe_moe_workspace_size_for(const nvfp4moe_context* ctx, const nvfp4moe_moe_weights* w,
                                                   int m_max, int expected_m);
/* The expert layer forward (see nvfp4moe_moe_args). GEMM1 applies the x scales; the
   gate and up weight scales are applied separately before the SiLU, so checkpoints
   whose halves have different global scales come out right.
   Errors: INVALID_ARGUMENT (null weights or args, experts or m_max < 1, expected_m < 0,
   hidden/inter not multiples of 32, a dimension past NVFP4MOE_DIM_MAX (2 x inter included) or
   a workspace of about 2^62 bytes or more, an unknown
   weight layout or activation scaling, null or misaligned pointers, a workspace smaller than
   nvfp4moe_moe_workspace_size_for this context and args), NOT_SUPPORTED (offline context), and those of the pieces. */
NVFP4MOE_API nvfp4moe_result nvfp4moe_moe_forward(nvfp4moe_context* ctx, const nvfp4moe_moe_weights* w,
                                                  const nvfp4moe_moe_args* args, nvfp4moe_stream stream);

/* ---- host reference (CPU, bit-exact for quantization) ------------------------------------
   Same argument structs as the device functions, but every nvfp4moe_devptr holds a HOST
   address (NVFP4MOE_HOSTPTR(p)). Same argument checks (the 16-byte alignment excepted: each
   array need only be aligned for its element type, as any C array is; that is not checked) and the same
   INVALID_ARGUMENT results; messages go to stderr at the default level (no context, no logger:
   $NVFP4MOE_LOG_LEVEL, else WARN). */
#define NVFP4MOE_HOSTPTR(p) ((nvfp4moe_devptr)(size_t)(p))

/* Scalar conversions: f32 -> E2M1 code (RNE, saturating, sign kept) and -> ue4m3 byte
   (input >= 0 or NaN; RNE, saturating to 448; a negative input gives 0x00, as an SF has no
   sign); exact decodes of the low 4 / 8 bits of code / byte (higher bits are ignored;
   0x7F decodes to NaN). */
NVFP4MOE_API unsigned nvfp4moe_ref_e2m1_from_f32(float x);
NVFP4MOE_API unsigned nvfp4moe_ref_e4m3_from_f32(float x);
NVFP4MOE_API float nvfp4moe_ref_e2m1_to_f32(unsigned code);
NVFP4MOE_API float nvfp4moe_ref_e4m3_to_f32(unsigned byte);
/* The f32 nearest the bf16 / fp16 value, and f32 -> bf16 (RNE, NaN -> 0x7FFF). */
NVFP4MOE_API float nvfp4moe_ref_bf16_to_f32(unsigned short h);
NVFP4MOE_API float nvfp4moe_ref_fp16_to_f32(unsigned short h);
NVFP4MOE_API unsigned short nvfp4moe_ref_f32_to_bf16(float x);
/* The SiLU of the fused kernel: bf16(silu(g) * u) with the library's exp, as f32. */
NVFP4MOE_API float nvfp4moe_ref_silu_mul(float g, float u);

NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_quantize_per_token(const nvfp4moe_quantize_args* args);
NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_quantize_per_tensor(const nvfp4moe_quantize_args* args);
NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_silu_mul_quantize_per_token(const nvfp4moe_quantize_args* args);
NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_silu_mul_quantize_per_tensor(const nvfp4moe_quantize_args* args);
NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_quantize_weights(const nvfp4moe_weight_quantize_args* args);
NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_sf_convert(const nvfp4moe_sf_convert_args* args);
NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_weights_relayout(const nvfp4moe_weights_relayout_args* args);
NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_dequantize(const nvfp4moe_dequantize_args* args);
/* GEMM in float64 over the dequantized operands, rounded once to bf16 (RNE). masked_m,
   alpha and row_scale are host arrays; the workspace is not used. */
NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_grouped_gemm_nt_masked(const nvfp4moe_gemm_args* args);
/* The expert layer with the reference pieces (host workspace of
   nvfp4moe_moe_workspace_size_for(NULL, ...) bytes or more). */
NVFP4MOE_API nvfp4moe_result nvfp4moe_ref_moe_forward(const nvfp4moe_moe_weights* w, const nvfp4moe_moe_args* args);

/* ---- SM100 encoders (pure functions; the native kernel takes its descriptors from
   these, and the tests check them against the PTX ISA and CUTLASS) -------------------- */

/* tcgen05 instruction descriptor for kind::mxf4nvf4.block_scale, E2M1 x E2M1, ue4m3
   scales (scale_vec::4X), K-major A and B, f32 accumulate, SF ids 0 (PTX ISA
   "Instruction descriptor format for .kind::mxf4nvf4"). m = 128, n multiple of 8 in
   [8, 256]; 0 when the shape is not allowed. */
NVFP4MOE_API unsigned nvfp4moe_sm100_idesc_mxf4nvf4(int m, int n);
/* tcgen05 shared-memory matrix descriptor (PTX ISA "Shared memory descriptor"): start
   address, leading and stride byte offsets (16-byte units are taken inside), version 1,
   base offset 0, swizzle: 0 none, 2 = 128-byte, 4 = 64-byte, 6 = 32-byte. */
NVFP4MOE_API unsigned long long nvfp4moe_sm100_smem_desc(unsigned addr, unsigned lbo, unsigned sbo, int swizzle);
/* Tensor-memory address of (lane, column), as tcgen05 instructions take it (PTX ISA "Tensor
   Memory addressing"): lane in bits 31..16, column in bits 15..0; lane in [0, 128) and column
   in [0, 512) on SM100, not checked (the bits are taken as given). */
NVFP4MOE_API unsigned nvfp4moe_sm100_tmem_addr(int lane, int column);

#ifdef __cplusplus
}
#endif
#endif /* NVFP4MOE_H_INCLUDED */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#if defined(NVFP4MOE_IMPLEMENTATION) && !defined(NVFP4MOE_IMPLEMENTATION_DONE)
#define NVFP4MOE_IMPLEMENTATION_DONE

#if defined(__FAST_MATH__)
#error "nvfp4moe: compile the implementation without -ffast-math: the reference numerics need IEEE arithmetic"
#endif
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* only effective when no system header came first */
#endif

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef NVFP4MOE_ASSERT
#include <assert.h>
#define NVFP4MOE_ASSERT(c) assert(c)
#endif

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <direct.h>
#include <io.h>
#include <process.h>
#else
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#if !defined(CLOCK_MONOTONIC)
#error "nvfp4moe: the POSIX declarations are hidden (strict ISO mode, e.g. -std=c99, with a system header included before the implementation): include it first, or define _POSIX_C_SOURCE=200809L"
#endif
#endif

#if defined(NVFP4MOE_STATIC)
#define NVFP4MOE__IMPL NVFP4MOE_API
#else
#define NVFP4MOE__IMPL
#endif
#if defined(__GNUC__) || defined(__clang__)
#define NVFP4MOE__PRIVATE __attribute__((unused)) static
#define NVFP4MOE__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NVFP4MOE__PRIVATE static
#define NVFP4MOE__PRINTF(f, a)
#endif
#if defined(_MSC_VER)
#define NVFP4MOE__TLS __declspec(thread)
#elif defined(__cplusplus) && __cplusplus >= 201103L
#define NVFP4MOE__TLS thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define NVFP4MOE__TLS _Thread_local
#else
#define NVFP4MOE__TLS __thread
#endif

/* The kernels' parameter structs hold device pointers as 64-bit integers. */
typedef char nvfp4moe__need_64bit_host[sizeof(void*) == 8 ? 1 : -1];

/* --------------------------------------------------------------------------------------
   Platform: dynamic libraries, mutexes, clocks, files, environment
   -------------------------------------------------------------------------------------- */

NVFP4MOE__PRIVATE void* nvfp4moe__dlopen(const char* name) {
#if defined(_WIN32)
  return (void*)LoadLibraryA(name);
#else
  return dlopen(name, RTLD_NOW | RTLD_LOCAL);
#endif
}

/* A symbol as a generic function pointer (memcpy: ISO C has no object-to-function cast). */
typedef void (*nvfp4moe__fnptr)(void);
NVFP4MOE__PRIVATE nvfp4moe__fnptr nvfp4moe__dlsym(void* lib, const char* name) {
  nvfp4moe__fnptr f = 0;
#if defined(_WIN32)
  FARPROC p = GetProcAddress((HMODULE)lib, name);
  memcpy(&f, &p, sizeof f);
#else
  void* p = dlsym(lib, name);
  memcpy(&f, &p, sizeof f);
#endif
  return f;
}

#if defined(_WIN32)
typedef SRWLOCK nvfp4moe__mutex;
#define NVFP4MOE__MUTEX_INIT SRWLOCK_INIT
NVFP4MOE__PRIVATE void nvfp4moe__mutex_init(nvfp4moe__mutex* m) { InitializeSRWLock(m); }
NVFP4MOE__PRIVATE void nvfp4moe__mutex_destroy(nvfp4moe__mutex* m) { (void)m; }
NVFP4MOE__PRIVATE void nvfp4moe__lock(nvfp4moe__mutex* m) { AcquireSRWLockExclusive(m); }
NVFP4MOE__PRIVATE void nvfp4moe__unlock(nvfp4moe__mutex* m) { ReleaseSRWLockExclusive(m); }
#else
typedef pthread_mutex_t nvfp4moe__mutex;
#define NVFP4MOE__MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
NVFP4MOE__PRIVATE void nvfp4moe__mutex_init(nvfp4moe__mutex* m) { pthread_mutex_init(m, 0); }
NVFP4MOE__PRIVATE void nvfp4moe__mutex_destroy(nvfp4moe__mutex* m) { pthread_mutex_destroy(m); }
NVFP4MOE__PRIVATE void nvfp4moe__lock(nvfp4moe__mutex* m) { pthread_mutex_lock(m); }
NVFP4MOE__PRIVATE void nvfp4moe__unlock(nvfp4moe__mutex* m) { pthread_mutex_unlock(m); }
#endif

NVFP4MOE__PRIVATE double nvfp4moe__now_ms(void) {
#if defined(_WIN32)
  LARGE_INTEGER f, c;
  QueryPerformanceFrequency(&f);
  QueryPerformanceCounter(&c);
  return 1000.0 * (double)c.QuadPart / (double)f.QuadPart;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec * 1e-6;
#endif
}

NVFP4MOE__PRIVATE const char* nvfp4moe__getenv(const char* name) {
  const char* v = getenv(name);
  return (v && v[0]) ? v : 0;
}

NVFP4MOE__PRIVATE unsigned long nvfp4moe__pid(void) {
#if defined(_WIN32)
  return (unsigned long)_getpid();
#else
  return (unsigned long)getpid();
#endif
}

/* mkdir -p; components created here get mode 0700 (the cache holds code that runs). */
NVFP4MOE__PRIVATE int nvfp4moe__mkdirs(const char* path) {
  char buf[1024];
  size_t i, n = strlen(path);
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, path, n + 1);
  for (i = 1; i <= n; ++i) {
    if (buf[i] == '/' || buf[i] == '\\' || buf[i] == 0) {
      char c = buf[i];
      buf[i] = 0;
#if defined(_WIN32)
      if (_mkdir(buf) != 0 && GetFileAttributesA(buf) == INVALID_FILE_ATTRIBUTES) return -1;
#else
      if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
#endif
      buf[i] = c;
    }
  }
  return 0;
}

/* Reads a whole regular file of at most 1 GiB into a malloc'ed buffer (null on any failure: a
   FIFO, a directory or a device at the path is a miss, never a wait or a huge allocation). */
NVFP4MOE__PRIVATE unsigned char* nvfp4moe__read_file(const char* path, size_t* size) {
  FILE* f;
  unsigned char* buf = 0;
  long n;
#if defined(_WIN32)
  f = fopen(path, "rb");
#else
  struct stat st;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* (O_NONBLOCK: opening a FIFO does not wait for a writer) */
  if (fd < 0) return 0;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (f = fdopen(fd, "rb")) == 0) {
    close(fd);
    return 0;
  }
#endif
  if (!f) return 0;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n <= (1L << 30) && fseek(f, 0, SEEK_SET) == 0) {
    buf = (unsigned char*)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = 0;
    }
    if (buf) *size = (size_t)n;
  }
  fclose(f);
  return buf;
}

/* Writes `path` atomically: a unique temp file in the same directory, flushed to disk,
   then renamed over the target, so readers see the old file or the whole new one and
   concurrent writers of the same key all succeed. Returns 0 on success. */
NVFP4MOE__PRIVATE int nvfp4moe__write_file_atomic(const char* path, const void* a, size_t na,
                                                   const void* b, size_t nb) {
  static unsigned long counter = 0;
  char tmp[1100];
  int ok = 0;
  snprintf(tmp, sizeof tmp, "%s.tmp.%lu.%lu.%lu", path, nvfp4moe__pid(), (unsigned long)(++counter),
           (unsigned long)((uintptr_t)&ok >> 4));
#if defined(_WIN32)
  {
    FILE* f = fopen(tmp, "wb");
    if (!f) return -1;
    ok = fwrite(a, 1, na, f) == na && fwrite(b, 1, nb, f) == nb && fflush(f) == 0 &&
         _commit(_fileno(f)) == 0;
    ok = (fclose(f) == 0) && ok;
    if (ok) ok = MoveFileExA(tmp, path, MOVEFILE_REPLACE_EXISTING) != 0;
  }
#else
  {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    const unsigned char* parts[2];
    size_t sizes[2];
    int p;
    if (fd < 0) return -1;
    parts[0] = (const unsigned char*)a; sizes[0] = na;
    parts[1] = (const unsigned char*)b; sizes[1] = nb;
    ok = 1;
    for (p = 0; p < 2 && ok; ++p) {
      size_t off = 0;
      while (off < sizes[p]) {
        ssize_t w = write(fd, parts[p] + off, sizes[p] - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { ok = 0; break; }
        off += (size_t)w;
      }
    }
    if (ok) ok = fsync(fd) == 0;
    ok = (close(fd) == 0) && ok;
    if (ok) ok = rename(tmp, path) == 0;
  }
#endif
  if (!ok) remove(tmp);
  return ok ? 0 : -1;
}

/* --------------------------------------------------------------------------------------
   Messages: the last error of this thread, the logger
   -------------------------------------------------------------------------------------- */

static NVFP4MOE__TLS char nvfp4moe__last_error_buf[1024];

NVFP4MOE__IMPL unsigned nvfp4moe_version(void) {
  return ((unsigned)NVFP4MOE_VERSION_MAJOR << 16) | ((unsigned)NVFP4MOE_VERSION_MINOR << 8) |
         (unsigned)NVFP4MOE_VERSION_PATCH;
}

NVFP4MOE__IMPL const char* nvfp4moe_result_string(nvfp4moe_result r) {
  static const char* const text[] = {
#define NVFP4MOE__TEXT(name, t) t,
      NVFP4MOE__RESULTS(NVFP4MOE__TEXT)
#undef NVFP4MOE__TEXT
  };
  if ((int)r < 0 || (int)r >= (int)NVFP4MOE_RESULT_COUNT) return "unknown result";
  return text[r];
}

NVFP4MOE__IMPL const char* nvfp4moe_last_error(void) { return nvfp4moe__last_error_buf; }

/* The level of a logger whose level is 0, and of the host reference functions: $NVFP4MOE_LOG_LEVEL
   (1 error ... 4 debug; 0 or negative = silent, -1), else NVFP4MOE_LOG_WARN. */
NVFP4MOE__PRIVATE int nvfp4moe__level_of(const nvfp4moe_logger* lg) {
  const char* env;
  int v;
  if (lg && lg->level) return lg->level;
  env = getenv("NVFP4MOE_LOG_LEVEL");
  if (!env || !*env) return NVFP4MOE_LOG_WARN;
  v = atoi(env);
  return v > 0 ? v : -1;
}

NVFP4MOE__PRIVATE void nvfp4moe__emit(const nvfp4moe_logger* lg, int level, const char* msg) {
  int max_level = nvfp4moe__level_of(lg);
  if (level > max_level) return;
  if (lg && lg->func) {
    lg->func(level, msg, lg->user_data);
  } else {
    static const char* const names[] = {"", "error", "warning", "info", "debug"};
    fprintf(stderr, "nvfp4moe %s: %s\n", names[level >= 1 && level <= 4 ? level : 0], msg);
  }
}

/* Sets the thread's last error, logs it, returns r. */
NVFP4MOE__PRIVATE NVFP4MOE__PRINTF(3, 4) nvfp4moe_result
nvfp4moe__fail_log(const nvfp4moe_logger* lg, nvfp4moe_result r, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(nvfp4moe__last_error_buf, sizeof nvfp4moe__last_error_buf, fmt, ap);
  va_end(ap);
  nvfp4moe__emit(lg, NVFP4MOE_LOG_ERROR, nvfp4moe__last_error_buf);
  return r;
}

NVFP4MOE__PRIVATE NVFP4MOE__PRINTF(3, 4) void
nvfp4moe__log(const nvfp4moe_logger* lg, int level, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  int max_level = nvfp4moe__level_of(lg);
  if (level > max_level) return;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  nvfp4moe__emit(lg, level, buf);
}

/* --------------------------------------------------------------------------------------
   SHA-256 (FIPS 180-4), for cache keys and file checksums
   -------------------------------------------------------------------------------------- */

typedef struct nvfp4moe__sha256 {
  uint32_t h[8];
  uint64_t len;
  unsigned char buf[64];
  size_t fill;
} nvfp4moe__sha256;

static const uint32_t nvfp4moe__sha256_k[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u};

#define NVFP4MOE__ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

NVFP4MOE__PRIVATE void nvfp4moe__sha256_block(nvfp4moe__sha256* s, const unsigned char* p) {
  uint32_t w[64], a, b, c, d, e, f, g, h;
  int i;
  for (i = 0; i < 16; ++i)
    w[i] = ((uint32_t)p[4 * i] << 24) | ((uint32_t)p[4 * i + 1] << 16) | ((uint32_t)p[4 * i + 2] << 8) | p[4 * i + 3];
  for (i = 16; i < 64; ++i) {
    uint32_t s0 = NVFP4MOE__ROR(w[i - 15], 7) ^ NVFP4MOE__ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = NVFP4MOE__ROR(w[i - 2], 17) ^ NVFP4MOE__ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3];
  e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
  for (i = 0; i < 64; ++i) {
    uint32_t t1 = h + (NVFP4MOE__ROR(e, 6) ^ NVFP4MOE__ROR(e, 11) ^ NVFP4MOE__ROR(e, 25)) + ((e & f) ^ (~e & g)) +
                  nvfp4moe__sha256_k[i] + w[i];
    uint32_t t2 = (NVFP4MOE__ROR(a, 2) ^ NVFP4MOE__ROR(a, 13) ^ NVFP4MOE__ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
  s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

NVFP4MOE__PRIVATE void nvfp4moe__sha256_init(nvfp4moe__sha256* s) {
  static const uint32_t h0[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  memcpy(s->h, h0, sizeof h0);
  s->len = 0;
  s->fill = 0;
}

NVFP4MOE__PRIVATE void nvfp4moe__sha256_update(nvfp4moe__sha256* s, const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  s->len += n;
  while (n > 0) {
    size_t take = 64 - s->fill;
    if (take > n) take = n;
    memcpy(s->buf + s->fill, p, take);
    s->fill += take; p += take; n -= take;
    if (s->fill == 64) {
      nvfp4moe__sha256_block(s, s->buf);
      s->fill = 0;
    }
  }
}

NVFP4MOE__PRIVATE void nvfp4moe__sha256_final(nvfp4moe__sha256* s, unsigned char out[32]) {
  uint64_t bits = s->len * 8;
  unsigned char pad = 0x80, zero = 0, len[8];
  int i;
  nvfp4moe__sha256_update(s, &pad, 1);
  while (s->fill != 56) nvfp4moe__sha256_update(s, &zero, 1);
  for (i = 0; i < 8; ++i) len[i] = (unsigned char)(bits >> (56 - 8 * i));
  nvfp4moe__sha256_update(s, len, 8);
  for (i = 0; i < 32; ++i) out[i] = (unsigned char)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

NVFP4MOE__PRIVATE void nvfp4moe__sha256_str(nvfp4moe__sha256* s, const char* str) {
  nvfp4moe__sha256_update(s, str, strlen(str) + 1); /* with the terminator: unambiguous */
}

NVFP4MOE__PRIVATE void nvfp4moe__hex(const unsigned char* d, size_t n, char* out) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for (i = 0; i < n; ++i) {
    out[2 * i] = digits[d[i] >> 4];
    out[2 * i + 1] = digits[d[i] & 15];
  }
  out[2 * n] = 0;
}

/* --------------------------------------------------------------------------------------
   The CUDA driver and NVRTC, loaded at run time
   -------------------------------------------------------------------------------------- */

typedef int nvfp4moe__CUresult;
typedef int nvfp4moe__CUdevice;
typedef void* nvfp4moe__CUcontext;
typedef void* nvfp4moe__CUmodule;
typedef void* nvfp4moe__CUfunction;
typedef void* nvfp4moe__nvrtcProgram;

#define NVFP4MOE__CU_ATTR_SM_COUNT 16
#define NVFP4MOE__CU_ATTR_CC_MAJOR 75
#define NVFP4MOE__CU_ATTR_CC_MINOR 76
#define NVFP4MOE__CU_ATTR_SMEM_OPTIN 97
#define NVFP4MOE__CU_FUNC_MAX_DYN_SMEM 8
#define NVFP4MOE__CU_FUNC_NUM_REGS 4
#define NVFP4MOE__CUDA_ABI 12000 /* cuGetProcAddress: the entry points as of CUDA 12.0 */

typedef struct nvfp4moe__driver_api {
  nvfp4moe__CUresult (*cuInit)(unsigned);
  nvfp4moe__CUresult (*cuDriverGetVersion)(int*);
  nvfp4moe__CUresult (*cuDeviceGetCount)(int*);
  nvfp4moe__CUresult (*cuDeviceGet)(nvfp4moe__CUdevice*, int);
  nvfp4moe__CUresult (*cuDeviceGetAttribute)(int*, int, nvfp4moe__CUdevice);
  nvfp4moe__CUresult (*cuDeviceGetName)(char*, int, nvfp4moe__CUdevice);
  nvfp4moe__CUresult (*cuDevicePrimaryCtxRetain)(nvfp4moe__CUcontext*, nvfp4moe__CUdevice);
  nvfp4moe__CUresult (*cuDevicePrimaryCtxRelease)(nvfp4moe__CUdevice);
  nvfp4moe__CUresult (*cuCtxGetCurrent)(nvfp4moe__CUcontext*);
  nvfp4moe__CUresult (*cuCtxPushCurrent)(nvfp4moe__CUcontext);
  nvfp4moe__CUresult (*cuCtxPopCurrent)(nvfp4moe__CUcontext*);
  nvfp4moe__CUresult (*cuCtxGetDevice)(nvfp4moe__CUdevice*);
  nvfp4moe__CUresult (*cuModuleLoadData)(nvfp4moe__CUmodule*, const void*);
  nvfp4moe__CUresult (*cuModuleUnload)(nvfp4moe__CUmodule);
  nvfp4moe__CUresult (*cuModuleGetFunction)(nvfp4moe__CUfunction*, nvfp4moe__CUmodule, const char*);
  nvfp4moe__CUresult (*cuFuncSetAttribute)(nvfp4moe__CUfunction, int, int);
  nvfp4moe__CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, nvfp4moe__CUfunction, int, size_t);
  nvfp4moe__CUresult (*cuLaunchKernel)(nvfp4moe__CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, void*, void**, void**);
  nvfp4moe__CUresult (*cuMemsetD32Async)(nvfp4moe_devptr, unsigned, size_t, void*);
  nvfp4moe__CUresult (*cuMemAlloc)(nvfp4moe_devptr*, size_t);
  nvfp4moe__CUresult (*cuMemFree)(nvfp4moe_devptr);
  nvfp4moe__CUresult (*cuMemcpyHtoD)(nvfp4moe_devptr, const void*, size_t);
  nvfp4moe__CUresult (*cuMemcpyDtoH)(void*, nvfp4moe_devptr, size_t);
  nvfp4moe__CUresult (*cuStreamSynchronize)(void*);
  nvfp4moe__CUresult (*cuGetErrorName)(nvfp4moe__CUresult, const char**);
  nvfp4moe__CUresult (*cuTensorMapEncodeTiled)(void*, int, unsigned, void*, const unsigned long long*,
                                               const unsigned long long*, const unsigned*, const unsigned*, int,
                                               int, int, int);
  nvfp4moe__CUresult (*cuFuncGetAttribute)(int*, int, nvfp4moe__CUfunction);
} nvfp4moe__driver_api;

/* CUDA 12 launch configuration (cuda.h CUlaunchConfig / CUlaunchAttribute), for the one
   attribute used: programmatic stream serialization (programmatic dependent launch, sm_90+). */
typedef struct nvfp4moe__CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    unsigned long long align8; /* cuda.h's union holds pointers: 8-byte alignment */
    int programmatic_stream_serialization_allowed;
  } value;
} nvfp4moe__CUlaunchAttribute;
typedef struct nvfp4moe__CUlaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, smem;
  void* stream;
  nvfp4moe__CUlaunchAttribute* attrs;
  unsigned num_attrs;
} nvfp4moe__CUlaunchConfig;
/* The sizes of cuda.h's structs on 64-bit hosts (the only ones CUDA supports): a mismatch fails to compile. */
typedef char nvfp4moe__check_launch_attribute_size[sizeof(nvfp4moe__CUlaunchAttribute) == 72 ? 1 : -1];
typedef char nvfp4moe__check_launch_config_size[sizeof(void*) != 8 || sizeof(nvfp4moe__CUlaunchConfig) == 56 ? 1 : -1];
#define NVFP4MOE__CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION 6
typedef nvfp4moe__CUresult (*nvfp4moe__launch_ex_t)(const nvfp4moe__CUlaunchConfig*, nvfp4moe__CUfunction, void**,
                                                    void**);
static nvfp4moe__launch_ex_t nvfp4moe__cu_launch_ex; /* optional: null where the driver lacks it */

typedef struct nvfp4moe__nvrtc_api {
  int (*nvrtcVersion)(int*, int*);
  int (*nvrtcGetNumSupportedArchs)(int*);
  int (*nvrtcGetSupportedArchs)(int*);
  int (*nvrtcCreateProgram)(nvfp4moe__nvrtcProgram*, const char*, const char*, int, const char* const*,
                            const char* const*);
  int (*nvrtcCompileProgram)(nvfp4moe__nvrtcProgram, int, const char* const*);
  int (*nvrtcGetProgramLogSize)(nvfp4moe__nvrtcProgram, size_t*);
  int (*nvrtcGetProgramLog)(nvfp4moe__nvrtcProgram, char*);
  int (*nvrtcGetCUBINSize)(nvfp4moe__nvrtcProgram, size_t*);
  int (*nvrtcGetCUBIN)(nvfp4moe__nvrtcProgram, char*);
  int (*nvrtcDestroyProgram)(nvfp4moe__nvrtcProgram*);
  const char* (*nvrtcGetErrorString)(int);
} nvfp4moe__nvrtc_api;

/* Process-wide: loaded once, never unloaded (other contexts may still use them). */
static nvfp4moe__mutex nvfp4moe__global_lock = NVFP4MOE__MUTEX_INIT;
static int nvfp4moe__driver_state; /* 0 not tried, 1 loaded, -1 failed */
static int nvfp4moe__nvrtc_state;
static nvfp4moe__driver_api nvfp4moe__cu;
static nvfp4moe__nvrtc_api nvfp4moe__rtc;
static char nvfp4moe__driver_msg[512];
static char nvfp4moe__nvrtc_msg[768];
static char nvfp4moe__nvrtc_loaded_from[512];
static int nvfp4moe__nvrtc_major, nvfp4moe__nvrtc_minor;
static int nvfp4moe__nvrtc_archs[64], nvfp4moe__nvrtc_narchs;

typedef nvfp4moe__CUresult (*nvfp4moe__getproc_v2_t)(const char*, void**, int, unsigned long long, int*);
typedef nvfp4moe__CUresult (*nvfp4moe__getproc_v1_t)(const char*, void**, int, unsigned long long);
static nvfp4moe__getproc_v2_t nvfp4moe__getproc_v2;
static nvfp4moe__getproc_v1_t nvfp4moe__getproc_v1;

NVFP4MOE__PRIVATE void* nvfp4moe__driver_proc(const char* name) {
  void* p = 0;
  int status = 0;
  if (nvfp4moe__getproc_v2) {
    if (nvfp4moe__getproc_v2(name, &p, NVFP4MOE__CUDA_ABI, 0, &status) != 0) p = 0;
  } else if (nvfp4moe__getproc_v1) {
    if (nvfp4moe__getproc_v1(name, &p, NVFP4MOE__CUDA_ABI, 0) != 0) p = 0;
  }
  return p;
}

#define NVFP4MOE__BIND(table, field, ptr) memcpy(&(table).field, &(ptr), sizeof(ptr))

/* Caller holds nvfp4moe__global_lock. */
NVFP4MOE__PRIVATE int nvfp4moe__load_driver_locked(void) {
  void* lib;
  nvfp4moe__fnptr gp;
  if (nvfp4moe__driver_state) return nvfp4moe__driver_state;
#if defined(_WIN32)
  lib = nvfp4moe__dlopen("nvcuda.dll");
#else
  lib = nvfp4moe__dlopen("libcuda.so.1"); /* never bare libcuda.so: it may be the toolkit's stub */
#endif
  if (!lib) {
#if defined(_WIN32)
    snprintf(nvfp4moe__driver_msg, sizeof nvfp4moe__driver_msg,
             "the CUDA driver was not found (looked for nvcuda.dll): no NVIDIA driver installed");
#else
    snprintf(nvfp4moe__driver_msg, sizeof nvfp4moe__driver_msg,
             "the CUDA driver was not found (dlopen: %s): no NVIDIA driver on this machine", dlerror());
#endif
    nvfp4moe__driver_state = -1;
    return -1;
  }
  gp = nvfp4moe__dlsym(lib, "cuGetProcAddress_v2");
  if (gp) memcpy(&nvfp4moe__getproc_v2, &gp, sizeof gp);
  else {
    gp = nvfp4moe__dlsym(lib, "cuGetProcAddress");
    if (gp) memcpy(&nvfp4moe__getproc_v1, &gp, sizeof gp);
  }
  if (!gp) {
    snprintf(nvfp4moe__driver_msg, sizeof nvfp4moe__driver_msg,
             "the CUDA driver is too old: cuGetProcAddress (CUDA 11.3+) is missing");
    nvfp4moe__driver_state = -1;
    return -1;
  }
  {
    static const char* const names[] = {
        "cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetAttribute",
        "cuDeviceGetName", "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuCtxGetCurrent",
        "cuCtxPushCurrent", "cuCtxPopCurrent", "cuCtxGetDevice", "cuModuleLoadData", "cuModuleUnload",
        "cuModuleGetFunction", "cuFuncSetAttribute", "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        "cuLaunchKernel", "cuMemsetD32Async", "cuMemAlloc", "cuMemFree", "cuMemcpyHtoD", "cuMemcpyDtoH",
        "cuStreamSynchronize", "cuGetErrorName", "cuTensorMapEncodeTiled", "cuFuncGetAttribute"};
    /* The table is a sequence of function pointers in the order of `names`. */
    void* ptrs[sizeof names / sizeof names[0]];
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; ++i) {
      ptrs[i] = nvfp4moe__driver_proc(names[i]);
      if (!ptrs[i]) {
        snprintf(nvfp4moe__driver_msg, sizeof nvfp4moe__driver_msg,
                 "the CUDA driver lacks %s (CUDA 12.0 or newer is needed)", names[i]);
        nvfp4moe__driver_state = -1;
        return -1;
      }
    }
    NVFP4MOE_ASSERT(sizeof ptrs == sizeof nvfp4moe__cu);
    memcpy(&nvfp4moe__cu, ptrs, sizeof ptrs);
  }
  {
    void* ex = nvfp4moe__driver_proc("cuLaunchKernelEx");
    if (ex) memcpy(&nvfp4moe__cu_launch_ex, &ex, sizeof ex);
  }
  nvfp4moe__driver_state = 1;
  return 1;
}

/* Caller holds nvfp4moe__global_lock. */
NVFP4MOE__PRIVATE int nvfp4moe__load_nvrtc_locked(void) {
  const char* tried[12];
  int ntried = 0, i;
  void* lib = 0;
  const char* env;
  char path[3][512];
  if (nvfp4moe__nvrtc_state) return nvfp4moe__nvrtc_state;
  env = nvfp4moe__getenv("NVFP4MOE_NVRTC_PATH");
  if (env) tried[ntried++] = env;
#if defined(_WIN32)
  tried[ntried++] = "nvrtc64_130_0.dll";
  tried[ntried++] = "nvrtc64_120_0.dll";
#else
  tried[ntried++] = "libnvrtc.so.13";
  tried[ntried++] = "libnvrtc.so.12";
  {
    /* a toolkit that is installed but not in the loader path */
    const char* home = nvfp4moe__getenv("CUDA_HOME");
    if (!home) home = nvfp4moe__getenv("CUDA_PATH");
    if (home) {
      snprintf(path[0], sizeof path[0], "%s/lib64/libnvrtc.so.13", home);
      snprintf(path[1], sizeof path[1], "%s/lib64/libnvrtc.so.12", home);
      tried[ntried++] = path[0];
      tried[ntried++] = path[1];
    }
    snprintf(path[2], sizeof path[2], "/usr/local/cuda/lib64/libnvrtc.so.13");
    tried[ntried++] = path[2];
  }
#endif
  for (i = 0; i < ntried && !lib; ++i) {
    lib = nvfp4moe__dlopen(tried[i]);
    if (lib) snprintf(nvfp4moe__nvrtc_loaded_from, sizeof nvfp4moe__nvrtc_loaded_from, "%s", tried[i]);
  }
  if (!lib) {
    size_t off = (size_t)snprintf(nvfp4moe__nvrtc_msg, sizeof nvfp4moe__nvrtc_msg,
                                  "NVRTC was not found; looked for");
    for (i = 0; i < ntried && off < sizeof nvfp4moe__nvrtc_msg; ++i)
      off += (size_t)snprintf(nvfp4moe__nvrtc_msg + off, sizeof nvfp4moe__nvrtc_msg - off, "%s %s",
                              i ? "," : "", tried[i]);
    if (off < sizeof nvfp4moe__nvrtc_msg)
      snprintf(nvfp4moe__nvrtc_msg + off, sizeof nvfp4moe__nvrtc_msg - off,
               " (set NVFP4MOE_NVRTC_PATH to the library, or install the CUDA NVRTC runtime)");
    nvfp4moe__nvrtc_state = -1;
    return -1;
  }
  {
    static const char* const names[] = {
        "nvrtcVersion", "nvrtcGetNumSupportedArchs", "nvrtcGetSupportedArchs", "nvrtcCreateProgram",
        "nvrtcCompileProgram", "nvrtcGetProgramLogSize", "nvrtcGetProgramLog", "nvrtcGetCUBINSize",
        "nvrtcGetCUBIN", "nvrtcDestroyProgram", "nvrtcGetErrorString"};
    nvfp4moe__fnptr ptrs[sizeof names / sizeof names[0]];
    size_t j;
    for (j = 0; j < sizeof names / sizeof names[0]; ++j) {
      ptrs[j] = nvfp4moe__dlsym(lib, names[j]);
      if (!ptrs[j]) {
        snprintf(nvfp4moe__nvrtc_msg, sizeof nvfp4moe__nvrtc_msg,
                 "%s has no %s (NVRTC 11.2 or newer is needed)", nvfp4moe__nvrtc_loaded_from, names[j]);
        nvfp4moe__nvrtc_state = -1;
        return -1;
      }
    }
    NVFP4MOE_ASSERT(sizeof ptrs == sizeof nvfp4moe__rtc);
    memcpy(&nvfp4moe__rtc, ptrs, sizeof ptrs);
  }
  nvfp4moe__rtc.nvrtcVersion(&nvfp4moe__nvrtc_major, &nvfp4moe__nvrtc_minor);
  if (nvfp4moe__rtc.nvrtcGetNumSupportedArchs(&nvfp4moe__nvrtc_narchs) != 0 || nvfp4moe__nvrtc_narchs < 0 ||
      nvfp4moe__nvrtc_narchs > 64)
    nvfp4moe__nvrtc_narchs = 0;
  if (nvfp4moe__nvrtc_narchs) nvfp4moe__rtc.nvrtcGetSupportedArchs(nvfp4moe__nvrtc_archs);
  nvfp4moe__nvrtc_state = 1;
  return 1;
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_driver_symbol(const char* name, void** fn) {
  int st;
  if (!name || !fn)
    return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, !name ? "nvfp4moe_driver_symbol: name is null" : "nvfp4moe_driver_symbol: fn is null");
  nvfp4moe__lock(&nvfp4moe__global_lock);
  st = nvfp4moe__load_driver_locked();
  nvfp4moe__unlock(&nvfp4moe__global_lock);
  if (st < 0) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_DRIVER_NOT_FOUND, "%s", nvfp4moe__driver_msg);
  *fn = nvfp4moe__driver_proc(name);
  if (!*fn)
    return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_NOT_SUPPORTED, "nvfp4moe_driver_symbol: the driver has no %s", name);
  return NVFP4MOE_SUCCESS;
}

/* --------------------------------------------------------------------------------------
   Host allocation through the context's allocator
   -------------------------------------------------------------------------------------- */

NVFP4MOE__PRIVATE void* nvfp4moe__alloc(const nvfp4moe_allocator* a, size_t n) {
  if (a && a->alloc_fn) return a->alloc_fn(n, a->user_data);
  return malloc(n);
}
NVFP4MOE__PRIVATE void nvfp4moe__free(const nvfp4moe_allocator* a, void* p) {
  if (!p) return;
  if (a && a->free_fn) a->free_fn(p, a->user_data);
  else free(p);
}

/* --------------------------------------------------------------------------------------
   Embedded kernel source (generated from kernels_src/ by tools/embed_kernels.py;
   chunks stay under 4 KB for C99 and MSVC string-literal limits)
   -------------------------------------------------------------------------------------- */

typedef struct nvfp4moe__source {
  const char* name;
  const char* const* chunks;
} nvfp4moe__source;

/* BEGIN GENERATED KERNEL SOURCE */
static const char* const nvfp4moe__src_common_cuh[] = {
  "// common.cuh -- types and the bit-exact NVFP4 numerics shared by every kernel.\n"
  "//\n"
  "// NVRTC compiles these sources with no headers at all (NVRTC 13 ships none of\n"
  "// cuda_fp4.h / cuda_bf16.h / <cstdint>), so everything is spelled out here.\n"
  "// The host reference in nvfp4moe.h implements the same operations in the same\n"
  "// order; NUMERICS.md section 2 is the contract, docs/numerics.md the decisions.\n"
  "#pragma once\n"
  "\n"
  "typedef unsigned char u8;\n"
  "typedef unsigned short u16;\n"
  "typedef unsigned int u32;\n"
  "typedef unsigned long long u64;\n"
  "typedef long long i64;\n"
  "\n"
  "#define NVF_DEV __device__ __forceinline__\n"
  "\n"
  "// f32 constants by bit pattern, so host and device use the very same values.\n"
  "#define NVF_RCP6_BITS 0x3E2AAAABu    // f32 nearest 1/6\n"
  "#define NVF_RCP2688_BITS 0x39C30C31u // f32 nearest 1/2688 (2688 = 6 * 448)\n"
  "#define NVF_FLT_MIN 1.17549435e-38f  // smallest normal f32\n"
  "\n"
  "NVF_DEV float nvf_f32(u32 bits) { return __uint_as_float(bits); }\n"
  "NVF_DEV bool nvf_is_nonfinite(float x) { return (__float_as_uint(x) & 0x7F800000u) == 0x7F800000u; }\n"
  "NVF_DEV float nvf_abs(float x) { return __uint_as_float(__float_as_uint(x) & 0x7FFFFFFFu); }\n"
  "\n"
  "// NVF_F16 (dequant_bf16.cuh): the GEMMs' operands widened to F16 * 2^-14 instead of BF16 * 2^-8, so a\n"
  "// product carries 2^-28 instead of 2^-16; NVF_DEQ_SCALE2 removes it. On in the modules for TILED weights\n"
  "// (-DNVF_WTILED=1) and the layer's quantizers that widen tokens for them (the host's _img_f16 twins,\n"
  "// -DNVF_QIMG_TILED=1: a layout define like NVF_WTILED, so that a tuning define of NVF_F16 governs both);\n"
  "// ROW_MAJOR weights stay BF16 (their plain codes take more operations to F16). NVF_WENC_F16: TILED\n"
  "// weights' codes are placed for the F16 widening (the relayout and every TILED reader agree); a tuning\n"
  "// run's -DNVF_F16=0 arm puts everything back as it was (BF16, the 0.4 placement), -DNVF_F16=1 makes\n"
  "// every module F16.\n"
  "#ifndef NVF_F16\n"
  "#if (defined(NVF_WTILED) && NVF_WTILED) || (defined(NVF_QIMG_TILED) && NVF_QIMG_TILED)\n"
  "#define NVF_F16 1\n"
  "#else\n"
  "#define NVF_F16 0\n"
  "#endif\n"
  "#define NVF_WENC_F16 1\n"
  "#elif NVF_F16\n"
  "#define NVF_WENC_F16 1\n"
  "#else\n"
  "#define NVF_WENC_F16 0\n"
  "#endif\n"
  "#define NVF_DEQ_SCALE2 (NVF_F16 \? 268435456.0f : 65536.0f)\n"
  "\n"
  "// ---- 16-bit float widening (exact) and bf16 rounding --------------------------------\n"
  "NVF_DEV float nvf_bf16_to_f32(u32 h) { return __uint_as_float(h << 16); }\n"
  "NVF_DEV float nvf_fp16_to_f32(u16 h) {\n"
  "  float f;\n"
  "  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
  "  return f;\n"
  "}\n"
  "// Round to nearest even; NaN becomes the canonical 0x7FFF (as the host reference).\n"
  "NVF_DEV u32 nvf_f32_to_bf16(float f) {\n"
  "  u16 h;\n"
  "  asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
  "  return h;\n"
  "}\n"
  "NVF_DEV u32 nvf_pack_bf16x2(float lo, float hi) {\n"
  "  u32 r;\n"
  "  asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
  "  return r;\n"
  "}\n"
  "\n"
  "// ---- E4M3 (scale factor) -------------------------------------------------------------\n"
  "// Input: amax * t >= 0, or NaN. RNE, saturating to 448 (0x7E); NaN -> 0x7F; values\n"
  "// below 2^-6 become subnormals (step 2^-9) or 0.\n"
  "NVF_DEV u32 nvf_e4m3_sw(float x) {\n"
  "  if (x != x) return 0x7Fu;\n"
  "  if (x >= 448.0f) return 0x7Eu;\n"
  "  if (x < 0.015625f) return (u32)rintf(__fmul_rn(x, 512.0f)); // exact scaling, RNE\n"
  "  u32 v = __float_as_uint(x) - (120u << 23);                   // rebias 127 -> 7\n"
  "  return (v + 0x7FFFFu + ((v >> 20) & 1u)) >> 20;              // RNE to 3 mantissa bits\n"
  "}\n"
  "// cvt.rn.satfinite.e4m3x2.f32 (sm_89+) gives the same byte for every such input (the high\n",
  "// byte of its pair is e4m3(0) = 0, so no mask).\n"
  "NVF_DEV u32 nvf_e4m3_hw(float x) {\n"
  "  u16 r;\n"
  "  asm(\"cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\" : \"=h\"(r) : \"f\"(0.0f), \"f\"(x));\n"
  "  return r;\n"
  "}\n"
  "#if defined(NVF_HW_E4M3)\n"
  "#define nvf_e4m3 nvf_e4m3_hw\n"
  "#else\n"
  "#define nvf_e4m3 nvf_e4m3_sw\n"
  "#endif\n"
  "\n"
  "// Exact decode of an E4M3 byte (sign 0): the bits shifted into f32 position are the\n"
  "// value * 2^-120 (subnormals included), and * 2^120 is exact.\n"
  "NVF_DEV float nvf_e4m3_to_f32(u32 b) {\n"
  "  return __fmul_rn(__uint_as_float((b & 0x7Fu) << 20), nvf_f32(0x7B800000u));\n"
  "}\n"
  "\n"
  "// ---- E2M1 (element) ------------------------------------------------------------------\n"
  "// Magnitude code of |v| by the RNE cut points (NUMERICS.md 1); NaN gives 0.\n"
  "NVF_DEV u32 nvf_e2m1_mag(float a) {\n"
  "  return (u32)(a > 0.25f) + (u32)(a >= 0.75f) + (u32)(a > 1.25f) + (u32)(a >= 1.75f) +\n"
  "         (u32)(a > 2.5f) + (u32)(a >= 3.5f) + (u32)(a > 5.0f);\n"
  "}\n"
  "NVF_DEV float nvf_e2m1_to_f32(u32 code) {\n"
  "  // magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6 as f32 bit patterns\n"
  "  const u32 m = code & 7u;\n"
  "  u32 bits = m < 2u \? (m \? 0x3F000000u : 0u) : ((126u + (m >> 1)) << 23) | ((m & 1u) << 22);\n"
  "  return __uint_as_float(bits | ((code & 8u) << 28));\n"
  "}\n"
  "\n"
  "// Codes of 16 values x[i] * out (out > 0). The sign always comes from x, so a zero\n"
  "// element keeps code +-0 even when out overflowed to +inf (docs/numerics.md).\n"
  "// Packing: element 2j in the low nibble of byte j.\n"
  "NVF_DEV void nvf_e2m1_pack16(const float* x, float out, u32* q) {\n"
  "#if defined(NVF_HW_E2M1)\n"
  "  #pragma unroll\n"
  "  for (int w = 0; w < 2; ++w) {\n"
  "    u32 word = 0;\n"
  "    #pragma unroll\n"
  "    for (int j = 0; j < 4; ++j) {\n"
  "      float lo = x[w * 8 + 2 * j], hi = x[w * 8 + 2 * j + 1];\n"
  "      float plo = lo == 0.0f \? lo : __fmul_rn(lo, out);\n"
  "      float phi = hi == 0.0f \? hi : __fmul_rn(hi, out);\n"
  "      u32 b;\n"
  "      // first source operand lands in the HIGH nibble\n"
  "      asm(\"{.reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %1, %2; cvt.u32.u8 %0, t;}\"\n"
  "          : \"=r\"(b) : \"f\"(phi), \"f\"(plo));\n"
  "      word |= (b & 0xFFu) << (8 * j);\n"
  "    }\n"
  "    q[w] = word;\n"
  "  }\n"
  "#else\n"
  "  #pragma unroll\n"
  "  for (int w = 0; w < 2; ++w) {\n"
  "    u32 word = 0;\n"
  "    #pragma unroll\n"
  "    for (int j = 0; j < 8; ++j) {\n"
  "      float v = x[w * 8 + j];\n"
  "      u32 c = nvf_e2m1_mag(nvf_abs(__fmul_rn(v, out))) | ((__float_as_uint(v) >> 28) & 8u);\n"
  "      word |= c << (4 * j);\n"
  "    }\n"
  "    q[w] = word;\n"
  "  }\n"
  "#endif\n"
  "}\n"
  "\n"
  "// ---- one block of 16 (NUMERICS.md 2, steps 2-5 and 4over6) --------------------------\n"
  "// s: decode scale of the row (finite, normal, > 0); t = (1/s) * (1/6). amax: max |x_i|\n"
  "// (all finite). fo6: 0 off, 1 4over6 MAE, 2 4over6 MSE. Writes 8 bytes of codes to q,\n"
  "// returns the SF byte.\n"
  "NVF_DEV float nvf_block_error(const float* x, const u32* q, float sff, float s, int mse) {\n"
  "  float err = 0.0f;\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 16; ++i) {\n"
  "    u32 c = (q[i >> 3] >> (4 * (i & 7))) & 0xFu;\n"
  "    float deq = __fmul_rn(__fmul_rn(nvf_e2m1_to_f32(c), sff), s);\n"
  "    float d = __fsub_rn(deq, x[i]);\n"
  "    err = __fadd_rn(err, mse \? __fmul_rn(d, d) : nvf_abs(d));\n"
  "  }\n"
  "  return err;\n"
  "}\n"
  "\n"
  "NVF_DEV u32 nvf_quantize_block16(const float* x, float amax, float s, float t, int fo6, u32* q) {\n"
  "  q[0] = 0u; q[1] = 0u;\n"
  "  if (amax == 0.0f) return 0u;                  // zero block: SF 0, codes +0\n"
  "  const float st = __fmul_rn(amax, t);\n"
  "  const u32 sf6 = nvf_e4m3(st);\n"
  "  if (sf6 != 0u) nvf_e2m1_pack16(x, __fdiv_rn(1.0f, __fmul_rn(nvf_e4m3_to_f32(sf6), s)), q);\n"
  "  if (!fo6) return sf6;\n",
  "  // 4over6: the block max maps to 4 instead of 6; pick it iff strictly better.\n"
  "  const u32 sf4 = nvf_e4m3(__fmul_rn(st, 1.5f));\n"
  "  u32 q4[2] = {0u, 0u};\n"
  "  if (sf4 != 0u) nvf_e2m1_pack16(x, __fdiv_rn(1.0f, __fmul_rn(nvf_e4m3_to_f32(sf4), s)), q4);\n"
  "  const float e6 = nvf_block_error(x, q, nvf_e4m3_to_f32(sf6), s, fo6 == 2);\n"
  "  const float e4 = nvf_block_error(x, q4, nvf_e4m3_to_f32(sf4), s, fo6 == 2);\n"
  "  if (e4 < e6) { q[0] = q4[0]; q[1] = q4[1]; return sf4; }\n"
  "  return sf6;\n"
  "}\n"
  "\n"
  "// ---- scale-factor layouts (NUMERICS.md 3) --------------------------------------------\n"
  "// 128x4: off = (r/128)*Kc4*512 + (c/4)*512 + (r%32)*16 + ((r%128)/32)*4 + c%4\n"
  "NVF_DEV i64 nvf_sf_offset_128x4(i64 r, int c, int kc4) {\n"
  "  return (r >> 7) * (i64)kc4 * 512 + (i64)(c >> 2) * 512 + (r & 31) * 16 + ((r & 127) >> 5) * 4 + (c & 3);\n"
  "}\n"
  "NVF_DEV i64 nvf_sf_group_bytes_128x4(int rows, int k) {\n"
  "  return (i64)((rows + 127) / 128) * 128 * 4 * ((k / 16 + 3) / 4);\n"
  "}\n"
  "\n"
  "// ---- the exp of the SiLU, deterministic on host and device ----------------------------\n"
  "// Cody-Waite reduction plus a degree-6 Taylor polynomial, every operation rounded\n"
  "// explicitly (no FMA), so the CPU reference gives the same bits. Max error 3 ulp (docs/numerics.md).\n"
  "NVF_DEV float nvf_exp(float x) {\n"
  "#if defined(NVF_SILU_CALL) && NVF_SILU_CALL // 0.5.1's form (see nvf_silu_mul)\n"
  "  if (x != x) return x;\n"
  "  if (x > 88.7228394f) return __uint_as_float(0x7F800000u);\n"
  "  if (x < -103.972084f) return 0.0f;\n"
  "#else\n"
  "  // the host's three tests (NaN, overflow, underflow) folded into one branch on the common path\n"
  "  if (!(x >= -103.972084f && x <= 88.7228394f))\n"
  "    return x > 0.0f \? __uint_as_float(0x7F800000u) : x < 0.0f \? 0.0f : x;\n"
  "#endif\n"
  "  const float n = rintf(__fmul_rn(x, 1.44269502f));\n"
  "  float r = __fsub_rn(x, __fmul_rn(n, 0.693145751953125f));\n"
  "  r = __fsub_rn(r, __fmul_rn(n, 1.42860677e-06f));\n"
  "  float p = 1.38888889e-3f;                      // 1/720\n"
  "  p = __fadd_rn(__fmul_rn(p, r), 8.33333377e-3f); // 1/120\n"
  "  p = __fadd_rn(__fmul_rn(p, r), 4.16666679e-2f); // 1/24\n"
  "  p = __fadd_rn(__fmul_rn(p, r), 0.166666672f);   // 1/6\n"
  "  p = __fadd_rn(__fmul_rn(p, r), 0.5f);\n"
  "  p = __fadd_rn(__fmul_rn(p, r), 1.0f);\n"
  "  p = __fadd_rn(__fmul_rn(p, r), 1.0f);\n"
  "  const int ni = (int)n, h = ni / 2;\n"
  "  p = __fmul_rn(p, __uint_as_float((u32)(h + 127) << 23));\n"
  "  return __fmul_rn(p, __uint_as_float((u32)(ni - h + 127) << 23));\n"
  "}\n"
  "// y = bf16_rne(silu(g) * u), silu(g) = g / (1 + exp(-g)) in f32 (NUMERICS.md 5). Inlined:\n"
  "// the SiLU kernels issue about 16 of these per thread back to back, and a call costs each one\n"
  "// its own branch, return and argument moves. -DNVF_SILU_CALL=1 (a tuning define) builds 0.5.1's\n"
  "// form: the call, and nvf_exp's three tests.\n"
  "#if defined(NVF_SILU_CALL) && NVF_SILU_CALL\n"
  "__device__ __noinline__\n"
  "#else\n"
  "NVF_DEV\n"
  "#endif\n"
  "float nvf_silu_mul(float g, float u) {\n"
  "  float sg = __fdiv_rn(g, __fadd_rn(1.0f, nvf_exp(-g)));\n"
  "  return nvf_bf16_to_f32(nvf_f32_to_bf16(__fmul_rn(sg, u)));\n"
  "}\n"
  "\n"
  "// Programmatic dependent launch (sm_90+; the host launches with it unless $NVFP4MOE_PDL=0):\n"
  "// a kernel can be scheduled while the kernel ahead of it on the stream is still running.\n"
  "// griddepcontrol.wait blocks until that kernel has completed and its writes are visible, so\n"
  "// every kernel calls this first, before any global memory access; then it lets the kernel\n"
  "// after it be scheduled (which waits the same way). Both are no-ops in a kernel launched\n"
  "// without the attribute.\n"
  "NVF_DEV void nvf_pdl_enter() {\n",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
  "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
  "  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n"
  "#endif\n"
  "}\n"
  "\n"
  "// masked_m as the contract reads it: clamped to [0, rows] so nothing past M_max is touched.\n"
  "NVF_DEV int nvf_valid_rows(const int* masked_m, int g, int rows) {\n"
  "  if (!masked_m) return rows;\n"
  "  int m = masked_m[g];\n"
  "  return m < 0 \? 0 : (m > rows \? rows : m);\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_dequant_bf16_cuh[] = {
  "// dequant_bf16.cuh -- exact NVFP4 -> BF16 widening in registers, shared by the swap-AB\n"
  "// (mma.sync) and wgmma GEMMs. E2M1 (2 significant bits) times a ue4m3 SF (4) has at most\n"
  "// 6 significant bits, so BF16 holds every product exactly; each value carries a factor\n"
  "// 2^-8 that the GEMM epilogues remove exactly (* 2^16 for the two operands).\n"
  "#pragma once\n"
  "#include \"common.cuh\"\n"
  "\n"
  "// NVF_F16 (common.cuh; the TILED modules' default since 0.5.0): both operands widened to F16 instead,\n"
  "// each value * 2^-14 exactly (E2M1 magnitude bits at 9..11: 0.5 is the F16 subnormal 2^-15; the SFs\n"
  "// of a piece converted by one cvt with no scaling; products down to 2^-24, F16's least subnormal), F16\n"
  "// MMAs (ptx_wgmma.cuh, nvf_mma_f16_16816), the epilogues' 2^16 becoming 2^28 (NVF_DEQ_SCALE2), and\n"
  "// TILED weights encoded for it (NVF_WENC_MAG below, mirrored by the host). Same products, same F32\n"
  "// sums, so the same results. Same-process A/Bs on an H200 (bench/NOTES.md, thirtieth session): X52\n"
  "// -1 to -4.4 % at 1 and 32 tokens (DeepSeek-V3 GEMM1 at 1 token +3.5 %), X51 layers -1 to -6 %.\n"
  "#if NVF_F16\n"
  "#define NVF_DEQ_M 0x8E008E00u // sign 15, magnitude 9..11, in each half\n"
  "#define NVF_FMA_X2 \"fma.rn.f16x2\" // (the products, exact: a * b + -0)\n"
  "#else\n"
  "#define NVF_FMA_X2 \"fma.rn.bf16x2\"\n"
  "#endif\n"
  "\n"
  "// 8 E2M1 codes (one word, element e in nibble e) -> 4 bf16x2 holding the pairs (p, p+4),\n"
  "// each value * 2^-126 exactly (sign to bit 15, magnitude code to bits 6..8; 0.5 becomes\n"
  "// the bf16 subnormal 2^-127).\n"
  "NVF_DEV void nvf_fp4x8_to_bf16x2(u32 q, u32* r) {\n"
  "#if NVF_F16\n"
  "  // (F16: the nibble's sign is one bit above its magnitude, F16's four: the nibble moved so its\n"
  "  // magnitude lands on 9..11 puts its sign on 12, and adding 7 x that bit moves it to 15)\n"
  "  #pragma unroll\n"
  "  for (int p = 0; p < 4; ++p) {\n"
  "    const u32 t = (p < 3 \? q << (9 - 4 * p) : q >> 3) & 0x1E001E00u;\n"
  "    r[p] = t + (t & 0x10001000u) * 7u;\n"
  "  }\n"
  "#else\n"
  "  // p = 0, 1: one multiply makes two copies of the masked nibbles, shifted by 12 - 4p (the\n"
  "  // sign lands on bit 15) and by 6 - 4p (the magnitude on bits 6..8); the copies do not\n"
  "  // overlap, so the product is their OR, and one mask keeps the wanted bits.\n"
  "  r[0] = ((q & 0x000F000Fu) * 0x1040u) & 0x81C081C0u;\n"
  "  r[1] = ((q & 0x00F000F0u) * 0x0104u) & 0x81C081C0u;\n"
  "#if !defined(NVF_WIDEN_FMA) || NVF_WIDEN_FMA != 0\n"
  "  // p = 2, 3: the same multiplies on q >> 8 (elements 2 and 6 move to nibbles 0 and 4, 3 and 7\n"
  "  // to 1 and 5): per word 9 ALU-pipe and 4 FMA-pipe operations instead of 10 and 3 (the swap-AB\n"
  "  // kernel's ALU pipe was its busiest: Nsight, K 2048, m = 1, 58 % active, 12 % of stalls on\n"
  "  // it). A/Bs on an H200 (bench/NOTES.md, eighth session): swap-AB at m <= 8 -4.3 to -6.4 % with\n"
  "  // the shift as a high multiply (NVF_WIDEN_FMA=1, FMA pipe) and another -0.4 to -1.4 % with this\n"
  "  // plain shift; wgmma -0.7 to -1.9 % at m = 32, -1.8 % on the layers, m = 128 within +-1.6 %\n"
  "  // (=1 cost it 2-6 %). Tuning runs: =1 the high multiply, =0 the form below.\n"
  "#if defined(NVF_WIDEN_FMA) && NVF_WIDEN_FMA == 1\n"
  "  const u32 q8 = __umulhi(q, 0x01000000u);\n"
  "#else\n"
  "  const u32 q8 = q >> 8;\n"
  "#endif\n"
  "  r[2] = ((q8 & 0x000F000Fu) * 0x1040u) & 0x81C081C0u;\n"
  "  r[3] = ((q8 & 0x00F000F0u) * 0x0104u) & 0x81C081C0u;\n"
  "#else\n"
  "  // p = 2, 3: the magnitude moves right, which a multiply cannot do\n"
  "  const u32 q4 = q << 4;\n"
  "  r[2] = (q4 & 0x80008000u) | ((q4 & 0x70007000u) >> 6);\n"
  "  r[3] = (q & 0x80008000u) | ((q & 0x70007000u) >> 6);\n"
  "#endif\n"
  "#endif\n"
  "}\n"
  "\n",
  "// TILED weights (nvfp4moe_weights_relayout) store each word's 8 codes re-encoded, so that the four\n"
  "// pairs come out of 9 integer operations to F16 (0.5.0; to BF16 10 in the 0.4 placement instead of\n"
  "// 13, bench/NOTES.md, twenty-seventh session; plain codes to F16 take 16): element i's magnitude bits (m, e0, e1) at bits NVF_WENC_MAG[i % 4] + 16 (i / 4) up, its\n"
  "// sign at NVF_WENC_SGN[i % 4] + 16 (i / 4). Pair 0 is then in place, pair 1 three bits low, pairs 2\n"
  "// and 3 take one multiply each as above; the four bit sets fill the word. The host mirrors the\n"
  "// tables (nvfp4moe__wenc). Tuning runs: -DNVF_WENC=0 keeps the plain codes (GPU relayout and TILED\n"
  "// GEMMs together; the host reference then disagrees).\n"
  "#if !defined(NVF_WENC) || NVF_WENC\n"
  "#define NVF_WENC_ON 1\n"
  "#else\n"
  "#define NVF_WENC_ON 0\n"
  "#endif\n"
  "#if defined(NVF_WTILED) && NVF_WTILED && NVF_WENC_ON\n"
  "#define NVF_WT_ENC true // this module's weights are TILED, so encoded\n"
  "#else\n"
  "#define NVF_WT_ENC false\n"
  "#endif\n"
  "#if NVF_WENC_F16\n"
  "// (F16: element 0 in place, 1 three bits low, 2 and 3 one multiply each: 9 operations a word)\n"
  "__device__ constexpr int NVF_WENC_MAG[4] = {9, 6, 3, 0}, NVF_WENC_SGN[4] = {15, 12, 14, 13};\n"
  "#else\n"
  "__device__ constexpr int NVF_WENC_MAG[4] = {6, 3, 0, 9}, NVF_WENC_SGN[4] = {15, 12, 14, 13};\n"
  "#endif\n"
  "#if NVF_WT_ENC && NVF_F16 != NVF_WENC_F16\n"
  "#error \"the TILED codes' placement (NVF_WENC_F16) must match the widening (NVF_F16)\"\n"
  "#endif\n"
  "NVF_DEV u32 nvf_wenc_word(u32 w) { // plain codes (element i in nibble i) -> encoded\n"
  "  u32 o = 0;\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 8; ++i) {\n"
  "    const u32 n = (w >> (4 * i)) & 15u;\n"
  "    o |= (n & 7u) << (NVF_WENC_MAG[i & 3] + 16 * (i >> 2)) | (n >> 3) << (NVF_WENC_SGN[i & 3] + 16 * (i >> 2));\n"
  "  }\n"
  "  return o;\n"
  "}\n"
  "NVF_DEV u32 nvf_wdec_word(u32 o) { // encoded -> plain codes\n"
  "  u32 w = 0;\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 8; ++i)\n"
  "    w |= ((o >> (NVF_WENC_MAG[i & 3] + 16 * (i >> 2))) & 7u | ((o >> (NVF_WENC_SGN[i & 3] + 16 * (i >> 2))) & 1u) << 3) << (4 * i);\n"
  "  return w;\n"
  "}\n"
  "// nvf_fp4x8_to_bf16x2 of an encoded word: the same four bf16x2.\n"
  "NVF_DEV void nvf_fp4x8e_to_bf16x2(u32 q, u32* r) {\n"
  "#if NVF_F16\n"
  "  r[0] = q & NVF_DEQ_M;                                // magnitudes at 9..11, signs at 15\n"
  "  r[1] = (q << 3) & NVF_DEQ_M;                         // at 6..8 and 12\n"
  "  r[2] = ((q & 0x40384038u) * 0x42u) & NVF_DEQ_M;     // at 3..5 and 14: * 64 the magnitude, * 2 the sign\n"
  "  r[3] = ((q & 0x20072007u) * 0x204u) & NVF_DEQ_M;    // at 0..2 and 13: * 512 the magnitude, * 4 the sign\n"
  "#else\n"
  "  r[0] = q & 0x81C081C0u;                                // magnitudes at 6..8, signs at 15 (and + 16)\n"
  "  r[1] = (q << 3) & 0x81C081C0u;                         // at 3..5 and 12\n"
  "  r[2] = ((q & 0x40074007u) * 0x42u) & 0x81C081C0u;      // at 0..2 and 14: * 2 the sign, * 64 the magnitude\n"
  "  r[3] = (((q >> 3) & 0x05C005C0u) * 0x21u) & 0x81C081C0u; // at 9..11 and 13: then 6..8 and 10, * 32 the sign\n"
  "#endif\n"
  "}\n"
  "\n"
  "// Two ue4m3 SFs (bytes 0, 1 of sf2) as F16, byte 0 low, exact, unscaled; SF 0x7F -> NaN (the F16\n"
  "// operands' SFs; the BF16 ones start from it on sm_89+)\n"
  "NVF_DEV u32 nvf_sf2_to_f16x2(u32 sf2) {\n"
  "#if __CUDA_ARCH__ >= 890\n"
  "  u32 h;\n"
  "  asm(\"cvt.rn.f16x2.e4m3x2 %0, %1;\" : \"=r\"(h) : \"h\"((u16)(sf2 & 0x7F7Fu))); // ue4m3: bit 7 is not a sign\n"
  "  return h;\n"
  "#else\n"
  "  u32 h = 0;\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 2; ++i) {\n"
  "    const u32 b = (sf2 >> (8 * i)) & 0xFFu;\n"
  "    u16 f;\n"
  "    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(f) : \"f\"(nvf_e4m3_to_f32(b)));\n",
  "    h |= (b == 0x7Fu \? 0x7E00u : (u32)f) << (16 * i);\n"
  "  }\n"
  "  return h;\n"
  "#endif\n"
  "}\n"
  "// Two ue4m3 SFs (bytes 0, 1 of sf2) -> bf16x2 of sf * 2^118 in both halves (exact;\n"
  "// sf * 2^118 < 2^127), so that (code * 2^-126) * (sf * 2^118) = value * sf * 2^-8.\n"
  "// SF 0x7F (a faulted block) -> NaN. sm_89+: one cvt for both bytes (e4m3 -> f16 is exact).\n"
  "// NVF_F16: f16x2 of sf, byte 0 in both halves (s0), byte 1 (s1).\n"
  "NVF_DEV void nvf_sf2_to_bf16x2(u32 sf2, u32& s0, u32& s1) {\n"
  "#if NVF_F16\n"
  "  const u32 hf = nvf_sf2_to_f16x2(sf2);\n"
  "  s0 = __byte_perm(hf, 0u, 0x1010);\n"
  "  s1 = __byte_perm(hf, 0u, 0x3232);\n"
  "#elif __CUDA_ARCH__ >= 890\n"
  "  const u32 h = nvf_sf2_to_f16x2(sf2);\n"
  "  const float f0 = __fmul_rn(nvf_fp16_to_f32((u16)h), nvf_f32(0x7A800000u));\n"
  "  const float f1 = __fmul_rn(nvf_fp16_to_f32((u16)(h >> 16)), nvf_f32(0x7A800000u));\n"
  "  s0 = nvf_pack_bf16x2(f0, f0);\n"
  "  s1 = nvf_pack_bf16x2(f1, f1);\n"
  "#else\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 2; ++i) {\n"
  "    const u32 b = (sf2 >> (8 * i)) & 0xFFu;\n"
  "    const u32 h = b == 0x7Fu \? 0x7FC0u : __float_as_uint(__fmul_rn(nvf_e4m3_to_f32(b), nvf_f32(0x7A800000u))) >> 16;\n"
  "    (i \? s1 : s0) = h | (h << 16);\n"
  "  }\n"
  "#endif\n"
  "}\n"
  "\n"
  "NVF_DEV u32 nvf_bf16x2_mul(u32 a, u32 b) { // exact here: at most 6 significant bits, normal range\n"
  "  u32 d;\n"
  "  asm(NVF_FMA_X2 \" %0, %1, %2, %3;\" : \"=r\"(d) : \"r\"(a), \"r\"(b), \"r\"(0x80008000u));\n"
  "  return d;\n"
  "}\n"
  "\n"
  "// Both SFs of sf2 in one bf16x2, sf * 2^118 each (byte 0 low half): one pack and one multiply\n"
  "// instead of two of each; the products below take their half by operand swizzle\n"
  "// (HMUL2 ... .H0_H0 / .H1_H1: ptxas folds the mov of the PTX). Same values as nvf_sf2_to_bf16x2\n"
  "// (every step exact). sm_89+ (below it the two-register form is what the packed one would build\n"
  "// from). Tuning runs: -DNVF_SFPACK=0 keeps the two-register form (twenty-eighth session).\n"
  "#if (!defined(NVF_SFPACK) || NVF_SFPACK) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890\n"
  "#define NVF_SFPACK_ON 1\n"
  "#else\n"
  "#define NVF_SFPACK_ON 0\n"
  "#endif\n"
  "NVF_DEV u32 nvf_sf2_to_bf16x2_packed(u32 sf2) {\n"
  "#if NVF_F16\n"
  "  return nvf_sf2_to_f16x2(sf2);\n"
  "#elif __CUDA_ARCH__ >= 890\n"
  "  const u32 h = nvf_sf2_to_f16x2(sf2);\n"
  "  u32 p, d;\n"
  "  p = nvf_pack_bf16x2(nvf_fp16_to_f32((u16)h), nvf_fp16_to_f32((u16)(h >> 16)));\n"
  "  d = nvf_bf16x2_mul(p, 0x7A807A80u); // x 2^118, exact (sf 2^118 < 2^127)\n"
  "  return d;\n"
  "#else\n"
  "  u32 s0, s1;\n"
  "  nvf_sf2_to_bf16x2(sf2, s0, s1);\n"
  "  return (s0 & 0xFFFFu) | (s1 << 16);\n"
  "#endif\n"
  "}\n"
  "// a * (half H of s, in both halves), bf16x2 (exact as nvf_bf16x2_mul)\n"
  "template <int H> NVF_DEV u32 nvf_bf16x2_mul_half(u32 a, u32 s) {\n"
  "  u32 d;\n"
  "  if (H == 0)\n"
  "    asm(\"{.reg .b16 l, h; .reg .b32 t; mov.b32 {l, h}, %2; mov.b32 t, {l, l}; \" NVF_FMA_X2 \" %0, %1, t, %3;}\"\n"
  "        : \"=r\"(d) : \"r\"(a), \"r\"(s), \"r\"(0x80008000u));\n"
  "  else\n"
  "    asm(\"{.reg .b16 l, h; .reg .b32 t; mov.b32 {l, h}, %2; mov.b32 t, {h, h}; \" NVF_FMA_X2 \" %0, %1, t, %3;}\"\n"
  "        : \"=r\"(d) : \"r\"(a), \"r\"(s), \"r\"(0x80008000u));\n"
  "  return d;\n"
  "}\n"
  "\n"
  "// 16 bytes of a row (32 elements, SF columns c and c+1 in sf2) -> 16 bf16x2 in pair order:\n"
  "// out[4j + p] = elements (8j + p, 8j + p + 4).\n"
  "// ENC: the piece's words are encoded (TILED weights of a module with NVF_WT_ENC).\n"
  "template <bool ENC = false> NVF_DEV void nvf_dequant_piece(uint4 q, u32 sf2, u32* out) {\n"
  "  u32 s0, s1; // NVF_SFPACK_ON: s0 holds both SFs\n"
  "  // (w[] in each branch: each keeps the statement order whose SASS was measured)\n"
  "#if NVF_SFPACK_ON\n"
  "  const u32 w[4] = {q.x, q.y, q.z, q.w};\n"
  "  s0 = nvf_sf2_to_bf16x2_packed(sf2);\n"
  "  s1 = 0u;\n"
  "#else\n",
  "  nvf_sf2_to_bf16x2(sf2, s0, s1);\n"
  "  const u32 w[4] = {q.x, q.y, q.z, q.w};\n"
  "#endif\n"
  "  #pragma unroll\n"
  "  for (int j = 0; j < 4; ++j) {\n"
  "    u32 r[4];\n"
  "    if (ENC) nvf_fp4x8e_to_bf16x2(w[j], r);\n"
  "    else nvf_fp4x8_to_bf16x2(w[j], r);\n"
  "    #pragma unroll\n"
  "    for (int p = 0; p < 4; ++p)\n"
  "      out[4 * j + p] = !NVF_SFPACK_ON \? nvf_bf16x2_mul(r[p], j < 2 \? s0 : s1)\n"
  "                     : j < 2 \? nvf_bf16x2_mul_half<0>(r[p], s0) : nvf_bf16x2_mul_half<1>(r[p], s0);\n"
  "  }\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_gemm_common_cuh[] = {
  "// gemm_common.cuh -- what the mma.sync and wgmma GEMMs share: the launch parameters\n"
  "// (mirrored by nvfp4moe__gemm_params on the host) and the swap-AB epilogue store.\n"
  "#pragma once\n"
  "#include \"common.cuh\"\n"
  "\n"
  "struct NvfGemmParams {\n"
  "  const u8* a;            // [G, m_max, k/2]\n"
  "  const u8* a_sf;         // 128x4 over m_max rows, per group\n"
  "  const u8* b;            // [G, n, k/2]\n"
  "  const u8* b_sf;         // 128x4 over n rows, per group\n"
  "  const int* masked_m;    // [G]\n"
  "  const float* alpha;     // [G] or null (1)\n"
  "  const float* row_scale; // [G, m_max] or null (1)\n"
  "  u16* d;                 // bf16 [G, m_max, ldd]\n"
  "  i64 ldd;\n"
  "  int groups, m_max, n, k;\n"
  "  u8* tok_ws; // widened tokens of the token-producer (gemm_wgmma_ws.cu) and swap-AB tiles, or null: widened in the GEMM\n"
  "  int tiles_m; // token tiles per (group, row block) of a persistent token-producer grid (NVF_PERSIST), else 0\n"
  "  int ptab;    // 1: that grid numbers its units without gaps, from a table in shared memory (gemm_wgmma_ws.cu)\n"
  "};\n"
  "\n"
  "// 16 bytes of a weight row (read-only path). Each step reads 64 bytes of a row, and rows are\n"
  "// K/2 bytes apart. WIDE (the host's choice for long rows, K >= 2560): an L2 miss fetches the\n"
  "// whole aligned 256-byte block, the row's next three steps too, so DRAM serves 256-byte reads\n"
  "// instead of 64-byte pieces of rows 3.5 KB apart (-15 % at K = 7168 and m <= 8; bench/NOTES.md,\n"
  "// seventh session). A compile-time choice: a run-time predicate on the load cost 4-6 %.\n"
  "// Volatile: a load past the weights must not be speculated out of the caller's bounds test.\n"
  "// Tuning runs: NVF_WL2=0 makes the WIDE kernels plain.\n"
  "// STRONG: ld.relaxed.gpu instead of ld.global.nc. With the .nc form ptxas sinks the 32-token\n"
  "// tile's step-0 loads into step 1 (both steps' loads then in flight one step instead of two); a\n"
  "// strong load stays in the step that issues it (bench/NOTES.md, twenty-eighth session, X38). The\n"
  "// data is read-only, so relaxed is enough. Tuning runs: NVF_WLDG=0 makes every load .nc.\n"
  "// OFF: bytes past p, as the load's immediate offset ([p+OFF]): a step's two rows (TILED: 512 bytes\n"
  "// apart) then share one address register, one IMAD.WIDE a step fewer (NVF_WIMM below).\n"
  "// -DNVF_WHINT=1 (opt-in, tuning runs; fifty-fifth session): every weight load here also asks L2 to evict its\n"
  "// line first (an evict_first policy), and the token producer's slot-image copies (gemm_wgmma_ws.cu; not the\n"
  "// swap-AB tiles' token copies) to keep theirs (evict_last, which may do nothing without a persisting-L2 set-aside):\n"
  "// the weights are read once, the slot images by every row block of their group. X91's Nsight\n"
  "// (H100, 32 tokens) had the L2 at 81 % of a peak beside DRAM's 82 %; whether the weight stream pushing the\n"
  "// images out is part of that is what the A/B asks.\n"
  "#ifndef NVF_WHINT\n"
  "#define NVF_WHINT 0\n"
  "#endif\n"
  "// (Hopper's ld takes .L2::evict_first only on 256-bit loads: a policy register and .L2::cache_hint instead;\n"
  "// the createpolicy is not volatile, so ptxas may keep one policy or remake it.)\n"
  "NVF_DEV u64 nvf_policy_evict_first() {\n"
  "  u64 pol;\n"
  "  asm(\"createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\" : \"=l\"(pol));\n"
  "  return pol;\n"
  "}\n"
  "#if NVF_WHINT\n"
  "#define NVF_WL2HINT \".L2::cache_hint\"\n"
  "#define NVF_WPOL , \"l\"(nvf_policy_evict_first())\n"
  "#define NVF_WPOLARG \", %6\"\n"
  "#else\n"
  "#define NVF_WL2HINT \"\"\n"
  "#define NVF_WPOL\n"
  "#define NVF_WPOLARG \"\"\n"
  "#endif\n"
  "template <bool WIDE, bool STRONG = false, int OFF = 0> NVF_DEV uint4 nvf_ldg_weights(const u8* p) {\n"
  "#if !defined(NVF_WL2) || NVF_WL2 != 0\n",
  "  if (WIDE) {\n"
  "    uint4 v;\n"
  "#if !defined(NVF_WLDG) || NVF_WLDG\n"
  "    if (STRONG)\n"
  "      asm volatile(\"ld.relaxed.gpu.global\" NVF_WL2HINT \".L2::256B.v4.u32 {%0, %1, %2, %3}, [%4+%5]\" NVF_WPOLARG \";\"\n"
  "                   : \"=r\"(v.x), \"=r\"(v.y), \"=r\"(v.z), \"=r\"(v.w) : \"l\"(p), \"n\"(OFF) NVF_WPOL);\n"
  "    else\n"
  "#endif\n"
  "      asm volatile(\"ld.global.nc\" NVF_WL2HINT \".L2::256B.v4.u32 {%0, %1, %2, %3}, [%4+%5]\" NVF_WPOLARG \";\"\n"
  "                   : \"=r\"(v.x), \"=r\"(v.y), \"=r\"(v.z), \"=r\"(v.w) : \"l\"(p), \"n\"(OFF) NVF_WPOL);\n"
  "    return v;\n"
  "  }\n"
  "#endif\n"
  "#if !defined(NVF_WLDG) || NVF_WLDG\n"
  "  if (STRONG) {\n"
  "    uint4 v;\n"
  "    asm volatile(\"ld.relaxed.gpu.global\" NVF_WL2HINT \".v4.u32 {%0, %1, %2, %3}, [%4+%5]\" NVF_WPOLARG \";\"\n"
  "                 : \"=r\"(v.x), \"=r\"(v.y), \"=r\"(v.z), \"=r\"(v.w) : \"l\"(p), \"n\"(OFF) NVF_WPOL);\n"
  "    return v;\n"
  "  }\n"
  "#endif\n"
  "#if NVF_WHINT\n"
  "  uint4 v;\n"
  "  asm volatile(\"ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4+%5], %6;\"\n"
  "               : \"=r\"(v.x), \"=r\"(v.y), \"=r\"(v.z), \"=r\"(v.w) : \"l\"(p), \"n\"(OFF), \"l\"(nvf_policy_evict_first()));\n"
  "  return v;\n"
  "#else\n"
  "  return __ldg((const uint4*)(p + OFF));\n"
  "#endif\n"
  "}\n"
  "\n"
  "// Weight layouts (nvfp4moe_weight_layout). Row-major: row n of group g at (g N + n) K/2, as\n"
  "// ModelOpt and FlashInfer store it. Tiled (the host builds a module with -DNVF_WTILED=1 for\n"
  "// it; N % 16 == 0): the rows in 16-row tiles, a tile's 16 rows x 64 bytes (128 K) of one step\n"
  "// contiguous, 1 KB, the steps of a tile one after another; with RB = ceil(K / 128) 64 (K/2,\n"
  "// a last partial step padded to a whole one), byte o of row n (o < K/2) at\n"
  "// (g N + n - n % 16) RB + (o / 64) 1024 + (n % 16) 64 + o % 64, each 4-byte word's codes\n"
  "// re-encoded (dequant_bf16.cuh, nvf_wenc_word). The bytes so placed: a warp of the swap-AB and\n"
  "// wgmma kernels reads 1 KB in one piece per step instead of 64 bytes from each of 16 rows (and,\n"
  "// re-encoded, is widened in fewer instructions; bench/NOTES.md has the H200 numbers); the\n"
  "// padding is never read (every load stops at K).\n"
  "// NVF_WKFULL: K % 256 == 0 promised, so the weight loads need no predicates (gemm_wgmma_step.cuh)\n"
  "#ifndef NVF_WKFULL\n"
  "#define NVF_WKFULL 0\n"
  "#endif\n"
  "// The step the loads read for step s under NVF_WKFULL (never widened where it differs), with DEPTH\n"
  "// steps in flight. AHEAD: s may pass the last step by up to DEPTH (a loop loading ahead; with two\n"
  "// steps in flight and nsteps >= 2, s < 2 nsteps: s - nsteps); else s < nsteps with two steps in\n"
  "// flight (a prologue, the resident loop). Deeper pipelines (probes, tuning depths, the swap-AB\n"
  "// 32/48-token tiles) wrap by s % nsteps.\n"
  "template <bool AHEAD, int DEPTH> NVF_DEV int nvf_step_in(int s, int nsteps) {\n"
  "  if (!NVF_WKFULL) return s;\n"
  "  if (DEPTH != 2) return s % nsteps;\n"
  "  return AHEAD && s >= nsteps \? s - nsteps : s;\n"
  "}\n"
  "#if defined(NVF_WTILED) && NVF_WTILED\n"
  "#define NVF_WSTEP_BYTES 1024 // bytes between the 128-K steps of a row\n"
  "#define NVF_WROWB(p) ((((i64)(p).k + 127) >> 7) << 6) // RB above\n"
  "#else\n"
  "#define NVF_WSTEP_BYTES 64\n"
  "#endif\n"
  "// Byte 16 t of step 0 of row r0 of group g (a 16-byte piece; the step's next pieces follow).\n"
  "NVF_DEV const u8* nvf_wpiece(const NvfGemmParams& p, int g, int r0, int t) {\n"
  "#if defined(NVF_WTILED) && NVF_WTILED\n"
  "  return p.b + ((i64)g * p.n + (r0 & ~15)) * NVF_WROWB(p) + (r0 & 15) * 64 + 16 * t;\n"
  "#else\n"
  "  return p.b + ((i64)g * p.n + r0) * (p.k / 2) + 16 * t;\n"
  "#endif\n"
  "}\n"
  "// Bytes from row r to row r + 8 (same 16-row tile: r % 16 < 8).\n"
  "#if defined(NVF_WTILED) && NVF_WTILED\n"
  "#define NVF_WROW8(p) (8 * 64)\n"
  "#else\n",
  "#define NVF_WROW8(p) ((i64)8 * ((p).k / 2))\n"
  "#endif\n"
  "// Row r + 8's 16 bytes of a step at a (row r's piece of that step): on TILED weights at the load's\n"
  "// immediate offset from a, so both loads share a's address (ptxas otherwise keeps a base and an\n"
  "// IMAD.WIDE a step for each row). Tuning runs: -DNVF_WIMM=0, a second base as before 0.5.1.\n"
  "#if defined(NVF_WTILED) && NVF_WTILED && (!defined(NVF_WIMM) || NVF_WIMM)\n"
  "#define NVF_WIMM_ON 1\n"
  "#define NVF_LDG_ROW8(WIDE, STRONG, a, w1) nvf_ldg_weights<WIDE, STRONG, 8 * 64>(a) // (NVF_WROW8 on TILED)\n"
  "#else\n"
  "#define NVF_WIMM_ON 0\n"
  "#define NVF_LDG_ROW8(WIDE, STRONG, a, w1) nvf_ldg_weights<WIDE, STRONG>(w1)\n"
  "#endif\n"
  "// Byte o (0 <= o < K/2, 16-byte aligned) of row r of group g, any access pattern.\n"
  "NVF_DEV const u8* nvf_wbyte(const NvfGemmParams& p, int g, i64 r, int o) {\n"
  "#if defined(NVF_WTILED) && NVF_WTILED\n"
  "  return p.b + ((i64)g * p.n + (r & ~(i64)15)) * NVF_WROWB(p) + (i64)(o >> 6) * 1024 + (r & 15) * 64 + (o & 63);\n"
  "#else\n"
  "  return p.b + ((i64)g * p.n + r) * (p.k / 2) + o;\n"
  "#endif\n"
  "}\n"
  "\n"
  "// The entry points of a swap-AB or wgmma module, BODY<WIDE>(p) its kernel body. Row-major\n"
  "// weights: NAME (plain loads) and NAME_l2 (256-byte L2 fetches); the host picks by K. Tiled\n"
  "// weights (-DNVF_WTILED=1, the host's twin of the module): NAME_tiled alone, plain loads (a warp\n"
  "// reads 1 KB in one piece; the 256-byte fetch measured the same).\n"
  "#if defined(NVF_WTILED) && NVF_WTILED\n"
  "#define NVF_GEMM_ENTRY_POINTS(NAME, BODY, THREADS, MINB)                                         \\\n"
  "  extern \"C\" __global__ void __launch_bounds__(THREADS, MINB) NAME##_tiled(const NvfGemmParams p) { \\\n"
  "    nvf_pdl_enter();                                                                              \\\n"
  "    BODY<false>(p);                                                                               \\\n"
  "  }\n"
  "#else\n"
  "#define NVF_GEMM_ENTRY_POINTS(NAME, BODY, THREADS, MINB)                                         \\\n"
  "  extern \"C\" __global__ void __launch_bounds__(THREADS, MINB) NAME(const NvfGemmParams p) {        \\\n"
  "    nvf_pdl_enter();                                                                              \\\n"
  "    BODY<false>(p);                                                                               \\\n"
  "  }                                                                                               \\\n"
  "  extern \"C\" __global__ void __launch_bounds__(THREADS, MINB) NAME##_l2(const NvfGemmParams p) {   \\\n"
  "    nvf_pdl_enter();                                                                              \\\n"
  "    BODY<true>(p);                                                                                \\\n"
  "  }\n"
  "#endif\n"
  "\n"
  "// One element of a swap-AB accumulator (token m, weight row n) to D[g, m, n]: undoes the\n"
  "// 2^-8 * 2^-8 of the widened operands exactly, applies alpha and the row scale. Only for\n"
  "// m < valid and n < N (rows past masked_m are never written).\n"
  "NVF_DEV void nvf_store_swapab(const NvfGemmParams& p, int g, int valid, float alpha, int m, int n, float acc) {\n"
  "  if (m < valid && n < p.n) {\n"
  "    const float rs = p.row_scale \? p.row_scale[(i64)g * p.m_max + m] : 1.0f;\n"
  "    const float v = __fmul_rn(__fmul_rn(alpha, rs), __fmul_rn(acc, NVF_DEQ_SCALE2));\n"
  "    p.d[((i64)g * p.m_max + m) * p.ldd + n] = (u16)nvf_f32_to_bf16(v);\n"
  "  }\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_gemm_portable_cu[] = {
  "// gemm_portable.cu -- masked grouped NVFP4 GEMM (NT) for sm_80 and newer.\n"
  "//\n"
  "// D[g, m, n] = bf16(alpha[g] * row_scale[g, m] * sum_k deq(A)[g,m,k] * deq(B)[g,n,k])\n"
  "// for m < masked_m[g]; other rows of D are never written (NUMERICS.md 4).\n"
  "//\n"
  "// Each K tile of A and B is dequantized exactly to BF16 in shared memory (e2m1 * e4m3\n"
  "// has at most 6 significant bits, so it fits), then mma.sync m16n8k16 BF16 with F32\n"
  "// accumulation. The dequantized values carry a factor 2^-8 each (see nvf_dequant_chunk)\n"
  "// that the epilogue removes exactly. Register prefetch of the next K tile overlaps the\n"
  "// global loads with the MMAs of the current one.\n"
  "#include \"common.cuh\"\n"
  "#include \"gemm_common.cuh\"\n"
  "#include \"ptx_mma.cuh\"\n"
  "#include \"scheduler.cuh\"\n"
  "#include \"dequant_bf16.cuh\" // nvf_wdec_word (TILED weights)\n"
  "\n"
  "#ifndef NVF_BM\n"
  "#define NVF_BM 64\n"
  "#endif\n"
  "#ifndef NVF_WARPS_M\n"
  "#define NVF_WARPS_M 2\n"
  "#endif\n"
  "#ifndef NVF_WARPS_N\n"
  "#define NVF_WARPS_N 2\n"
  "#endif\n"
  "#define NVF_BN 128\n"
  "#define NVF_BK 64 // elements: 32 bytes of E2M1 and one 4-byte group of SFs per row\n"
  "#define NVF_THREADS (32 * NVF_WARPS_M * NVF_WARPS_N)\n"
  "#define NVF_WM (NVF_BM / NVF_WARPS_M)\n"
  "#define NVF_WN (NVF_BN / NVF_WARPS_N)\n"
  "#define NVF_MI (NVF_WM / 16)\n"
  "#define NVF_NI (NVF_WN / 8)\n"
  "#define NVF_ROWS (NVF_BM + NVF_BN)\n"
  "#define NVF_CHUNKS (2 * NVF_ROWS) // 16-byte chunks of packed E2M1 per K tile\n"
  "#define NVF_RAW ((NVF_CHUNKS + NVF_THREADS - 1) / NVF_THREADS)\n"
  "#define NVF_STAGE_BYTES (NVF_ROWS * NVF_BK * 2)\n"
  "\n"
  "static_assert(NVF_WM % 16 == 0 && NVF_WN % 16 == 0, \"warp tile must be 16-aligned\");\n"
  "\n"
  "// 16 bytes (32 E2M1 codes, two SF blocks) -> 32 BF16 values * 2^-8 each, as 4 x 16 bytes.\n"
  "// A code's f32 bits (mag << 22 | sign << 31) are exactly its value * 2^-126 (0.5 lands\n"
  "// on the subnormal 2^-127), and sf * 2^118 < 2^127 is exact, so the product is\n"
  "// value * sf * 2^-8 exactly and its top 16 bits are the BF16.\n"
  "NVF_DEV void nvf_dequant_chunk(uint4 raw, u32 sf2, uint4* out) {\n"
  "  const float s0 = __fmul_rn(nvf_e4m3_to_f32(sf2 & 0xFFu), nvf_f32(0x7A800000u)); // * 2^118\n"
  "  const float s1 = __fmul_rn(nvf_e4m3_to_f32((sf2 >> 8) & 0xFFu), nvf_f32(0x7A800000u));\n"
  "  const u32 w[4] = {raw.x, raw.y, raw.z, raw.w};\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 4; ++i) { // word i: codes 8i .. 8i+7\n"
  "    const float sc = i < 2 \? s0 : s1;\n"
  "    u32 o[4];\n"
  "    #pragma unroll\n"
  "    for (int j = 0; j < 4; ++j) {\n"
  "      const u32 byte = (w[i] >> (8 * j)) & 0xFFu;\n"
  "      const float lo = __uint_as_float(((byte & 7u) << 22) | ((byte & 8u) << 28));\n"
  "      const float hi = __uint_as_float((((byte >> 4) & 7u) << 22) | ((byte & 0x80u) << 24));\n"
  "      const u32 blo = __float_as_uint(__fmul_rn(lo, sc)) >> 16;\n"
  "      const u32 bhi = __float_as_uint(__fmul_rn(hi, sc)) & 0xFFFF0000u;\n"
  "      o[j] = blo | bhi;\n"
  "    }\n"
  "    out[i] = make_uint4(o[0], o[1], o[2], o[3]);\n"
  "  }\n"
  "}\n"
  "\n"
  "// Shared tile row: 64 BF16 = 8 chunks of 16 bytes, XOR-swizzled by row so ldmatrix\n"
  "// reads of 8 rows at one K offset hit 8 different bank groups.\n"
  "NVF_DEV u32 nvf_tile_off(int row, int chunk) { return (u32)(row * 128 + ((chunk ^ (row & 7)) << 4)); }\n"
  "\n"
  "struct NvfRawTile {\n"
  "  uint4 data[NVF_RAW];\n"
  "  u32 sf[NVF_RAW];\n"
  "};\n"
  "\n"
  "NVF_DEV void nvf_load_raw(const NvfGemmParams& p, const NvfTile& t, int kt, int kc4, NvfRawTile& raw) {\n"
  "  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k), sfb_g = nvf_sf_group_bytes_128x4(p.n, p.k);\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < NVF_RAW; ++i) {\n"
  "    const int c = threadIdx.x + i * NVF_THREADS, row = c >> 1, half = c & 1;\n"
  "    raw.data[i] = make_uint4(0u, 0u, 0u, 0u);\n",
  "    raw.sf[i] = 0u;\n"
  "    if (c >= NVF_CHUNKS || kt * NVF_BK + half * 32 >= p.k) continue;\n"
  "    const u8* src; const u8* sf; i64 r; // src: this thread's 16 bytes\n"
  "    if (row < NVF_BM) {\n"
  "      r = (i64)t.m_tile * NVF_BM + row;\n"
  "      if (r >= t.valid_m) continue; // invalid rows of the masked layout are never read\n"
  "      src = p.a + ((i64)t.g * p.m_max + r) * (p.k / 2) + kt * 32 + half * 16;\n"
  "      sf = p.a_sf + t.g * sfa_g;\n"
  "    } else {\n"
  "      r = (i64)t.n_tile * NVF_BN + (row - NVF_BM);\n"
  "      if (r >= p.n) continue;\n"
  "      src = nvf_wbyte(p, t.g, r, kt * 32 + half * 16); // either weight layout\n"
  "      sf = p.b_sf + t.g * sfb_g;\n"
  "    }\n"
  "    raw.data[i] = *(const uint4*)src;\n"
  "    if (NVF_WT_ENC && row >= NVF_BM) { // TILED weights: back to plain codes (nvf_wdec_word)\n"
  "      u32* w = &raw.data[i].x;\n"
  "      #pragma unroll\n"
  "      for (int j = 0; j < 4; ++j) w[j] = nvf_wdec_word(w[j]);\n"
  "    }\n"
  "    raw.sf[i] = *(const u32*)(sf + nvf_sf_offset_128x4(r, kt * 4, kc4)) >> (16 * half);\n"
  "  }\n"
  "}\n"
  "\n"
  "NVF_DEV void nvf_store_tile(u8* stage, const NvfRawTile& raw) {\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < NVF_RAW; ++i) {\n"
  "    const int c = threadIdx.x + i * NVF_THREADS, row = c >> 1, half = c & 1;\n"
  "    if (c >= NVF_CHUNKS) continue;\n"
  "    uint4 o[4];\n"
  "    nvf_dequant_chunk(raw.data[i], raw.sf[i], o);\n"
  "    #pragma unroll\n"
  "    for (int j = 0; j < 4; ++j) *(uint4*)(stage + nvf_tile_off(row, half * 4 + j)) = o[j];\n"
  "  }\n"
  "}\n"
  "\n"
  "extern \"C\" __global__ void __launch_bounds__(NVF_THREADS)\n"
  "nvf_gemm_portable(const NvfGemmParams p) {\n"
  "  nvf_pdl_enter();\n"
  "  extern __shared__ __align__(128) u8 smem[];\n"
  "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
  "  const int wm = warp / NVF_WARPS_N, wn = warp % NVF_WARPS_N;\n"
  "  const int kc4 = (p.k / 16 + 3) / 4, kt_count = (p.k + NVF_BK - 1) / NVF_BK;\n"
  "  const int n_tiles = (p.n + NVF_BN - 1) / NVF_BN;\n"
  "\n"
  "  NvfMaskedScheduler sched;\n"
  "  sched.init(p.masked_m, p.groups, p.m_max, NVF_BM, n_tiles);\n"
  "  NvfTile t;\n"
  "  for (i64 ti = blockIdx.x; sched.get(ti, t); ti += gridDim.x) {\n"
  "    float acc[NVF_MI][NVF_NI][4];\n"
  "    #pragma unroll\n"
  "    for (int mi = 0; mi < NVF_MI; ++mi)\n"
  "      #pragma unroll\n"
  "      for (int ni = 0; ni < NVF_NI; ++ni)\n"
  "        #pragma unroll\n"
  "        for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;\n"
  "\n"
  "    NvfRawTile raw;\n"
  "    nvf_load_raw(p, t, 0, kc4, raw);\n"
  "    nvf_store_tile(smem, raw);\n"
  "    __syncthreads();\n"
  "    for (int kt = 0; kt < kt_count; ++kt) {\n"
  "      if (kt + 1 < kt_count) nvf_load_raw(p, t, kt + 1, kc4, raw);\n"
  "      const u8* st = smem + (kt & 1) * NVF_STAGE_BYTES;\n"
  "      #pragma unroll\n"
  "      for (int ks = 0; ks < NVF_BK / 16; ++ks) {\n"
  "        u32 af[NVF_MI][4], bf[NVF_NI][2];\n"
  "        #pragma unroll\n"
  "        for (int mi = 0; mi < NVF_MI; ++mi) {\n"
  "          const int row = wm * NVF_WM + mi * 16 + (lane & 15);\n"
  "          nvf_ldmatrix_x4(nvf_smem_addr(st + nvf_tile_off(row, ks * 2 + (lane >> 4))),\n"
  "                          af[mi][0], af[mi][1], af[mi][2], af[mi][3]);\n"
  "        }\n"
  "        #pragma unroll\n"
  "        for (int nj = 0; nj < NVF_NI / 2; ++nj) {\n"
  "          const int row = NVF_BM + wn * NVF_WN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);\n"
  "          nvf_ldmatrix_x4(nvf_smem_addr(st + nvf_tile_off(row, ks * 2 + ((lane >> 3) & 1))),\n"
  "                          bf[2 * nj][0], bf[2 * nj][1], bf[2 * nj + 1][0], bf[2 * nj + 1][1]);\n"
  "        }\n"
  "        #pragma unroll\n"
  "        for (int mi = 0; mi < NVF_MI; ++mi)\n"
  "          #pragma unroll\n"
  "          for (int ni = 0; ni < NVF_NI; ++ni) nvf_mma_bf16_16816(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);\n"
  "      }\n",
  "      // The other stage was last read in iteration kt-1, which the barrier below closed.\n"
  "      if (kt + 1 < kt_count) nvf_store_tile(smem + ((kt + 1) & 1) * NVF_STAGE_BYTES, raw);\n"
  "      __syncthreads();\n"
  "    }\n"
  "\n"
  "    // Epilogue: undo the 2^-8 * 2^-8 of the operands exactly, apply alpha and row scale.\n"
  "    const float alpha = p.alpha \? p.alpha[t.g] : 1.0f;\n"
  "    #pragma unroll\n"
  "    for (int mi = 0; mi < NVF_MI; ++mi)\n"
  "      #pragma unroll\n"
  "      for (int h = 0; h < 2; ++h) {\n"
  "        const int m = t.m_tile * NVF_BM + wm * NVF_WM + mi * 16 + (lane >> 2) + h * 8;\n"
  "        if (m >= t.valid_m) continue;\n"
  "        const float rs = p.row_scale \? p.row_scale[(i64)t.g * p.m_max + m] : 1.0f;\n"
  "        const float sc = __fmul_rn(alpha, rs);\n"
  "        u16* drow = p.d + ((i64)t.g * p.m_max + m) * p.ldd;\n"
  "        #pragma unroll\n"
  "        for (int ni = 0; ni < NVF_NI; ++ni) {\n"
  "          const int n = t.n_tile * NVF_BN + wn * NVF_WN + ni * 8 + (lane & 3) * 2;\n"
  "          if (n >= p.n) continue;\n"
  "          // (2^16: this kernel widens to BF16 in shared memory in every module, its _tiled twin too,\n"
  "          // where NVF_F16 is set for the other kernels: not NVF_DEQ_SCALE2)\n"
  "          const float v0 = __fmul_rn(sc, __fmul_rn(acc[mi][ni][2 * h], 65536.0f));\n"
  "          const float v1 = __fmul_rn(sc, __fmul_rn(acc[mi][ni][2 * h + 1], 65536.0f));\n"
  "          *(u32*)(drow + n) = nvf_pack_bf16x2(v0, v1);\n"
  "        }\n"
  "      }\n"
  "  }\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_gemm_sm100_cu[] = {
  "// gemm_sm100.cu -- masked grouped NVFP4 GEMM (NT) on SM100 with the native block-scaled\n"
  "// tensor-core MMA: tcgen05.mma kind::mxf4nvf4, ue4m3 scales from tensor memory.\n"
  "// Same contract as gemm_portable.cu (NUMERICS.md 4). COMPILED AND REVIEWED, NOT RUN: no\n"
  "// SM100 GPU was available; the library self-tests it against the portable kernel at\n"
  "// first use and falls back on a mismatch.\n"
  "//\n"
  "// Roles (192 threads, persistent, one CTA per SM):\n"
  "//   warp 0      producer: TMA of the A/B tiles (128-byte swizzle), bulk copy of the SF atoms\n"
  "//   warp 1      allocates TMEM; one lane issues tcgen05.cp (SFs) and tcgen05.mma\n"
  "//   warps 2..5  epilogue: tcgen05.ld of the accumulator, alpha * row_scale, bf16 stores\n"
  "//               for rows < masked_m and columns < N only\n"
  "// Tile 128 (tokens, M) x NVF_BN (weights, N) x 256 (K); NVF_STAGES smem stages; two TMEM\n"
  "// accumulators so the epilogue of one tile overlaps the MMAs of the next.\n"
  "//\n"
  "// Facts this relies on (ISA text, CUTLASS's own encoders for the numbers; see\n"
  "// tests/test_sm100_encoders.c and docs/sm100.md): idesc / smem-descriptor bit layouts,\n"
  "// the TMEM scale-factor layout for scale_vec::4X (row r -> lane r%32, column base + r/32,\n"
  "// byte = SF index, replicated to 4 lane quarters by .32x128b.warpx4), K-step of 32 bytes\n"
  "// inside a 128-byte swizzle atom, and cp -> mma ordering without a wait.\n"
  "#include \"common.cuh\"\n"
  "#include \"ptx_tcgen05.cuh\"\n"
  "#include \"scheduler.cuh\"\n"
  "\n"
  "#ifndef NVF_BN\n"
  "#define NVF_BN 128\n"
  "#endif\n"
  "#define NVF_BM 128\n"
  "#define NVF_BK 256                    // K elements per stage = 128 bytes per row = one swizzle atom\n"
  "#define NVF_STAGES 5\n"
  "#define NVF_A_BYTES (NVF_BM * 128)    // 16 KB\n"
  "#define NVF_B_BYTES (NVF_BN * 128)\n"
  "#define NVF_SF_BYTES 2048             // 4 atoms of 512 bytes = 128 rows x 16 SFs\n"
  "#define NVF_STAGE_BYTES (NVF_A_BYTES + NVF_B_BYTES + 2 * NVF_SF_BYTES)\n"
  "#define NVF_THREADS 192\n"
  "// TMEM columns: accumulators at 0 and NVF_BN; per stage 16 SFA + 16 SFB columns after them.\n"
  "#define NVF_ACC_COLS (2 * NVF_BN)\n"
  "#define NVF_SF_COL(stage) (NVF_ACC_COLS + 32 * (stage))\n"
  "#define NVF_TMEM_COLS 512\n"
  "\n"
  "static_assert(NVF_BN == 128, \"one SFB atom per MMA assumes a 128-row B tile\");\n"
  "static_assert(NVF_ACC_COLS + 32 * NVF_STAGES <= NVF_TMEM_COLS, \"TMEM budget\");\n"
  "static_assert(NVF_STAGE_BYTES % 1024 == 0, \"swizzled tiles need 1024-byte alignment\");\n"
  "\n"
  "struct __align__(64) NvfSm100Params {\n"
  "  NvfTensorMap tma_a;     // UINT8 {K/2, m_max, G}, box {128, 128, 1}, 128B swizzle\n"
  "  NvfTensorMap tma_b;     // UINT8 {K/2, N, G},     box {128, 128, 1}, 128B swizzle\n"
  "  const u8* a_sf;         // 128x4, per group roundup(m_max,128)*4*Kc4 bytes\n"
  "  const u8* b_sf;         // 128x4, per group roundup(N,128)*4*Kc4 bytes\n"
  "  const int* masked_m;\n"
  "  const float* alpha;     // or null\n"
  "  const float* row_scale; // or null\n"
  "  u16* d;\n"
  "  i64 ldd;\n"
  "  int groups, m_max, n, k;\n"
  "  u32 idesc;              // nvfp4moe_sm100_idesc_mxf4nvf4(128, NVF_BN)\n"
  "  u32 pad0;\n"
  "  u64 desc_ab;            // smem descriptor of an A/B tile at address 0 (LBO 16, SBO 1024, 128B swizzle)\n"
  "  u64 desc_sf;            // smem descriptor of an SF atom at address 0 (LBO 16, SBO 128, no swizzle)\n"
  "};\n"
  "\n"
  "struct NvfSm100Shared {\n"
  "  u64 full[NVF_STAGES], empty[NVF_STAGES], tmem_full[2], tmem_empty[2];\n"
  "  u32 tmem_base;\n"
  "};\n"
  "\n"
  "extern \"C\" __global__ void __launch_bounds__(NVF_THREADS, 1)\n"
  "nvf_gemm_sm100(const __grid_constant__ NvfSm100Params p) {\n"
  "  nvf_pdl_enter();\n"
  "  extern __shared__ u8 smem_raw[];\n"
  "  __shared__ NvfSm100Shared sh;\n",
  "  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;\n"
  "  // the 128-byte swizzle pattern is anchored to 1024-byte boundaries\n"
  "  const u32 smem_base = (nvf_smem_u32(smem_raw) + 1023u) & ~1023u;\n"
  "  const int kt_count = (p.k + NVF_BK - 1) / NVF_BK, kc4 = (p.k / 16 + 3) / 4;\n"
  "  const int n_tiles = (p.n + NVF_BN - 1) / NVF_BN;\n"
  "  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k), sfb_g = nvf_sf_group_bytes_128x4(p.n, p.k);\n"
  "\n"
  "  if (threadIdx.x == 0) {\n"
  "    for (int s = 0; s < NVF_STAGES; ++s) {\n"
  "      nvf_mbar_init(nvf_smem_u32(&sh.full[s]), 1);\n"
  "      nvf_mbar_init(nvf_smem_u32(&sh.empty[s]), 1);\n"
  "    }\n"
  "    for (int a = 0; a < 2; ++a) {\n"
  "      nvf_mbar_init(nvf_smem_u32(&sh.tmem_full[a]), 1);\n"
  "      nvf_mbar_init(nvf_smem_u32(&sh.tmem_empty[a]), 128); // every epilogue thread arrives\n"
  "    }\n"
  "    nvf_fence_mbar_init();\n"
  "  }\n"
  "  if (warp == 1) nvf_tmem_alloc(nvf_smem_u32(&sh.tmem_base), NVF_TMEM_COLS);\n"
  "  nvf_tc_fence_before();\n"
  "  __syncthreads();\n"
  "  nvf_tc_fence_after();\n"
  "  const u32 tmem = sh.tmem_base;\n"
  "\n"
  "  NvfMaskedScheduler sched;\n"
  "  sched.init(p.masked_m, p.groups, p.m_max, NVF_BM, n_tiles);\n"
  "  NvfTile t;\n"
  "\n"
  "  if (warp == 0 && lane == 0) {\n"
  "    // ---- producer ----\n"
  "    int stage = 0;\n"
  "    u32 phase = 0;\n"
  "    for (i64 ti = blockIdx.x; sched.get(ti, t); ti += gridDim.x) {\n"
  "      const u8* sfa = p.a_sf + t.g * sfa_g + ((i64)t.m_tile * kc4) * 512;\n"
  "      const u8* sfb = p.b_sf + t.g * sfb_g + ((i64)t.n_tile * kc4) * 512;\n"
  "      for (int kt = 0; kt < kt_count; ++kt) {\n"
  "        const int atoms = kc4 - 4 * kt < 4 \? kc4 - 4 * kt : 4; // one atom per K=64 MMA\n"
  "        const u32 bar = nvf_smem_u32(&sh.full[stage]);\n"
  "        const u32 st = smem_base + stage * NVF_STAGE_BYTES;\n"
  "        nvf_mbar_wait(nvf_smem_u32(&sh.empty[stage]), phase ^ 1u);\n"
  "        // TMA counts the whole box, out-of-bounds bytes (zero-filled) included\n"
  "        nvf_mbar_expect_tx(bar, NVF_A_BYTES + NVF_B_BYTES + 2u * 512u * (u32)atoms);\n"
  "        nvf_tma_load_3d(st, &p.tma_a, kt * 128, t.m_tile * NVF_BM, t.g, bar);\n"
  "        nvf_tma_load_3d(st + NVF_A_BYTES, &p.tma_b, kt * 128, t.n_tile * NVF_BN, t.g, bar);\n"
  "        nvf_bulk_load(st + NVF_A_BYTES + NVF_B_BYTES, sfa + (i64)kt * 2048, 512u * (u32)atoms, bar);\n"
  "        nvf_bulk_load(st + NVF_A_BYTES + NVF_B_BYTES + NVF_SF_BYTES, sfb + (i64)kt * 2048, 512u * (u32)atoms, bar);\n"
  "        if (++stage == NVF_STAGES) { stage = 0; phase ^= 1u; }\n"
  "      }\n"
  "    }\n"
  "  } else if (warp == 1 && lane == 0) {\n"
  "    // ---- MMA issuer ----\n"
  "    int stage = 0, acc = 0;\n"
  "    u32 phase = 0, acc_phase = 0;\n"
  "    for (i64 ti = blockIdx.x; sched.get(ti, t); ti += gridDim.x) {\n"
  "      nvf_mbar_wait(nvf_smem_u32(&sh.tmem_empty[acc]), acc_phase ^ 1u);\n"
  "      nvf_tc_fence_after();\n"
  "      const u32 d = tmem + (u32)(acc * NVF_BN);\n"
  "      for (int kt = 0; kt < kt_count; ++kt) {\n"
  "        const int atoms = kc4 - 4 * kt < 4 \? kc4 - 4 * kt : 4;\n"
  "        const u32 st = smem_base + stage * NVF_STAGE_BYTES;\n"
  "        const u32 sfa_t = tmem + NVF_SF_COL(stage), sfb_t = sfa_t + 16;\n"
  "        nvf_mbar_wait(nvf_smem_u32(&sh.full[stage]), phase);\n"
  "        nvf_tc_fence_after();\n"
  "        for (int j = 0; j < atoms; ++j) {\n"
  "          const u32 sa = st + NVF_A_BYTES + NVF_B_BYTES + 512u * j, sb = sa + NVF_SF_BYTES;\n"
  "          nvf_tmem_cp_sf(sfa_t + 4u * j, p.desc_sf | (u64)((sa & 0x3FFFFu) >> 4));\n"
  "          nvf_tmem_cp_sf(sfb_t + 4u * j, p.desc_sf | (u64)((sb & 0x3FFFFu) >> 4));\n"
  "        }\n"
  "        // cp -> mma of one thread execute in issue order (PTX: pipelined tcgen05 instructions)\n"
  "        for (int j = 0; j < atoms; ++j) {\n",
  "          const u32 a_lo = ((st & 0x3FFFFu) >> 4) + 2u * j; // +32 bytes of K per MMA\n"
  "          const u32 b_lo = (((st + NVF_A_BYTES) & 0x3FFFFu) >> 4) + 2u * j;\n"
  "          nvf_mma_mxf4nvf4(d, p.desc_ab | a_lo, p.desc_ab | b_lo, p.idesc, sfa_t + 4u * j, sfb_t + 4u * j,\n"
  "                           (kt > 0 || j > 0) \? 1u : 0u);\n"
  "        }\n"
  "        nvf_tc_commit(nvf_smem_u32(&sh.empty[stage])); // frees the stage once these MMAs are done\n"
  "        if (++stage == NVF_STAGES) { stage = 0; phase ^= 1u; }\n"
  "      }\n"
  "      nvf_tc_commit(nvf_smem_u32(&sh.tmem_full[acc]));\n"
  "      if (++acc == 2) { acc = 0; acc_phase ^= 1u; }\n"
  "    }\n"
  "  } else if (warp >= 2) {\n"
  "    // ---- epilogue: warp w reads TMEM lanes 32*(w%4) .. +31 ----\n"
  "    const int quarter = warp & 3;\n"
  "    int acc = 0;\n"
  "    u32 acc_phase = 0;\n"
  "    for (i64 ti = blockIdx.x; sched.get(ti, t); ti += gridDim.x) {\n"
  "      nvf_mbar_wait(nvf_smem_u32(&sh.tmem_full[acc]), acc_phase);\n"
  "      nvf_tc_fence_after();\n"
  "      const int m = t.m_tile * NVF_BM + quarter * 32 + lane;\n"
  "      const bool row_ok = m < t.valid_m;\n"
  "      float sc = 0.0f;\n"
  "      if (row_ok) {\n"
  "        const float alpha = p.alpha \? p.alpha[t.g] : 1.0f;\n"
  "        sc = __fmul_rn(alpha, p.row_scale \? p.row_scale[(i64)t.g * p.m_max + m] : 1.0f);\n"
  "      }\n"
  "      u16* drow = p.d + ((i64)t.g * p.m_max + (row_ok \? m : 0)) * p.ldd;\n"
  "      #pragma unroll 1\n"
  "      for (int c = 0; c < NVF_BN / 32; ++c) {\n"
  "        u32 v[32];\n"
  "        nvf_tmem_ld32(tmem + ((u32)(quarter * 32) << 16) + (u32)(acc * NVF_BN + c * 32), v);\n"
  "        if (row_ok) {\n"
  "          #pragma unroll\n"
  "          for (int g8 = 0; g8 < 4; ++g8) {\n"
  "            const int n = t.n_tile * NVF_BN + c * 32 + g8 * 8;\n"
  "            if (n < p.n) {\n"
  "              uint4 o;\n"
  "              o.x = nvf_pack_bf16x2(__fmul_rn(sc, __uint_as_float(v[g8 * 8 + 0])), __fmul_rn(sc, __uint_as_float(v[g8 * 8 + 1])));\n"
  "              o.y = nvf_pack_bf16x2(__fmul_rn(sc, __uint_as_float(v[g8 * 8 + 2])), __fmul_rn(sc, __uint_as_float(v[g8 * 8 + 3])));\n"
  "              o.z = nvf_pack_bf16x2(__fmul_rn(sc, __uint_as_float(v[g8 * 8 + 4])), __fmul_rn(sc, __uint_as_float(v[g8 * 8 + 5])));\n"
  "              o.w = nvf_pack_bf16x2(__fmul_rn(sc, __uint_as_float(v[g8 * 8 + 6])), __fmul_rn(sc, __uint_as_float(v[g8 * 8 + 7])));\n"
  "              *(uint4*)(drow + n) = o;\n"
  "            }\n"
  "          }\n"
  "        }\n"
  "      }\n"
  "      nvf_tc_fence_before();\n"
  "      nvf_mbar_arrive(nvf_smem_u32(&sh.tmem_empty[acc]));\n"
  "      if (++acc == 2) { acc = 0; acc_phase ^= 1u; }\n"
  "    }\n"
  "  }\n"
  "  __syncthreads();\n"
  "  if (warp == 1) {\n"
  "    nvf_tc_fence_after();\n"
  "    nvf_tmem_dealloc(tmem, NVF_TMEM_COLS);\n"
  "  }\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_gemm_swapab_cu[] = {
  "// gemm_swapab.cu -- masked grouped NVFP4 GEMM (NT) for few tokens per expert, sm_80+.\n"
  "//\n"
  "// Same contract as gemm_portable.cu. Swap-AB: the weights are the 16-row A operand of\n"
  "// mma.sync m16n8k16 and the tokens the 8-column B operand, so 8 tokens already fill an\n"
  "// MMA. Weights stream from global memory straight into registers (16-byte loads, several\n"
  "// steps in flight) and are dequantized there, exactly, to BF16 * 2^-8; the tokens of a\n"
  "// K chunk are dequantized once per CTA into shared memory.\n"
  "//\n"
  "// K permutation: a thread of an MMA quad holds 32 consecutive K elements of a row (16\n"
  "// bytes) and feeds them to 8 MMAs as the pairs (e, e+4) of each 8-element word. A dot\n"
  "// product does not care about the order of K as long as A and B agree, so the tokens are\n"
  "// stored in shared memory in the same pair order.\n"
  "//\n"
  "// With a workspace (p.tok_ws, sm_90+, TILED weights), nvf_sw_widen_tokens below first widens each token once,\n"
  "// into a row of 128 * steps bf16 in that pair order (word 64 s + 8 i + 2 t + j of step s), and\n"
  "// one thread copies each chunk's token rows into shared memory by bulk copies (double buffer,\n"
  "// an mbarrier a buffer) instead of every CTA of the group widening them again: the widening\n"
  "// was 4-11 % of the time at m <= 8 (bench/NOTES.md, twenty-first session, NVF_SWPROBE=2).\n"
  "#include \"common.cuh\"\n"
  "#include \"gemm_common.cuh\"\n"
  "#include \"ptx_mma.cuh\"\n"
  "#include \"dequant_bf16.cuh\"\n"
  "#include \"ptx_tcgen05.cuh\" // mbarriers and bulk copies (the workspace path, sm_90+)\n"
  "\n"
  "#ifndef NVF_NT\n"
  "#define NVF_NT 1                       // n8 tiles of tokens: 8 * NVF_NT tokens per pass\n"
  "#endif\n"
  "#define NVF_TOK (8 * NVF_NT)\n"
  "#define NVF_WARPS 8\n"
  "#define NVF_THREADS (32 * NVF_WARPS)\n"
  "#define NVF_ROWS (16 * NVF_WARPS)      // weight rows (N) per CTA\n"
  "// K elements of tokens staged per chunk. Tuning runs: $NVFP4MOE_TUNE_DEFINE=-DNVF_SKC=<n>\n"
  "// (the host sizes shared memory from it), a multiple of 1024.\n"
  "#ifdef NVF_SKC\n"
  "#define NVF_KC NVF_SKC\n"
  "static_assert(NVF_SKC % 1024 == 0 && NVF_SKC <= 8192, \"NVF_SKC: 1024, 2048, ... 8192\");\n"
  "#else\n"
  "#define NVF_KC 1024\n"
  "#endif\n"
  "#define NVF_STEP 128                   // K elements per register step (64 bytes of a row)\n"
  "// Register steps of weights in flight and CTAs per SM the registers must allow: by\n"
  "// default 2 and 3 for 8-16 tokens, 4 and 2 beyond; NVF_TUNE=0..3 forces one pair for\n"
  "// tuning runs ($NVFP4MOE_TUNE_DEFINE, bench/NOTES.md; 0 is 4 and 2 for every tile).\n"
  "#if !defined(NVF_TUNE) && NVF_NT <= 2 // measured best for 8 and 16 tokens (bench/NOTES.md)\n"
  "#define NVF_DEPTH 2\n"
  "#define NVF_MINB 3\n"
  "#elif !defined(NVF_TUNE) || NVF_TUNE == 0\n"
  "#define NVF_DEPTH 4\n"
  "#define NVF_MINB 2\n"
  "#elif NVF_TUNE == 1\n"
  "#define NVF_DEPTH 2\n"
  "#define NVF_MINB 3\n"
  "#elif NVF_TUNE == 2\n"
  "#define NVF_DEPTH 2\n"
  "#define NVF_MINB 4\n"
  "#elif NVF_TUNE == 3\n"
  "#define NVF_DEPTH 1\n"
  "#define NVF_MINB 4\n"
  "#else\n"
  "#error \"NVF_TUNE must be 0, 1, 2 or 3\"\n"
  "#endif\n"
  "#define NVF_TSTRIDE (NVF_KC / 2 + 8)   // words per token row in smem; +8 keeps 64-bit reads conflict-free\n"
  "// Probe for tuning runs (wrong results, timing only; bench/NOTES.md, fourteenth session's next steps):\n"
  "// -DNVF_SWPROBE=1 loads the weights and SFs as always but only folds them into one accumulator (no\n"
  "// widening, no MMAs; the tokens are still staged): the rate of this grid's access pattern by itself.\n"
  "// -DNVF_SWPROBE=2 stages no tokens (shared memory left as it is; the chunk barriers kept), =3 also\n"
  "// drops the barriers: what the token staging costs each CTA (twenty-first session).\n",
  "#if defined(NVF_SWPROBE) && NVF_SWPROBE >= 2\n"
  "#define NVF_SWSTAGE 0\n"
  "#else\n"
  "#define NVF_SWSTAGE 1\n"
  "#endif\n"
  "\n"
  "// Byte offset of token row m of group g in the workspace (rows of 256 bytes a step).\n"
  "NVF_DEV i64 nvf_sw_row_offset(const NvfGemmParams& p, int g, int m, int nsteps) {\n"
  "  return ((i64)g * p.m_max + m) * nsteps * 256;\n"
  "}\n"
  "\n"
  "// PRE: tokens from the workspace (two chunk buffers, filled by bulk copies), else widened here.\n"
  "template <bool WIDE, bool PRE> NVF_DEV void nvf_gemm_swapab_body(const NvfGemmParams& p) {\n"
  "  extern __shared__ __align__(16) u32 tok[]; // [PRE \? 2 : 1][NVF_TOK][NVF_TSTRIDE]\n"
  "  __shared__ __align__(8) u64 full[2];      // PRE: buffer b's copies have landed\n"
  "  const int nblocks = (p.n + NVF_ROWS - 1) / NVF_ROWS; // grid = groups * nblocks\n"
  "  const int g = blockIdx.x / nblocks, bx = blockIdx.x % nblocks;\n"
  "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, t = lane & 3;\n"
  "  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);\n"
  "  if (valid == 0) return; // an expert without tokens: its weights are not read\n"
  "  const int kc4 = (p.k / 16 + 3) / 4, nsteps = (p.k + NVF_STEP - 1) / NVF_STEP;\n"
  "  const int nchunks = (p.k + NVF_KC - 1) / NVF_KC;\n"
  "  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k), sfb_g = nvf_sf_group_bytes_128x4(p.n, p.k);\n"
  "  const int r0 = bx * NVF_ROWS + warp * 16 + (lane >> 2); // weight rows r0 and r0 + 8\n"
  "  const bool ok0 = r0 < p.n, ok1 = r0 + 8 < p.n;\n"
  "  // NVF_WKFULL (the 8-token tile's _k256_tiled twin, which the host runs on TILED weights, N % 16 == 0,\n"
  "  // where K % 256 == 0; wrong elsewhere; other tiles: tuning runs only, bench/NOTES.md thirtieth session):\n"
  "  // the weight loads without predicates, as the wgmma tiles' _k256 twins (gemm_wgmma_step.cuh): rows\n"
  "  // past N read rows N - 16 .. N - 1 (never stored), a step past the last reads step s - nsteps (two\n"
  "  // steps in flight) or s % nsteps (four: the 32- and 48-token tiles, where K may hold fewer steps;\n"
  "  // nvf_step_in, gemm_common.cuh)\n"
  "#if NVF_WKFULL\n"
  "  const int rl = ok0 \? r0 : p.n - 16 + (r0 & 15);\n"
  "#else\n"
  "  const int rl = r0;\n"
  "#endif\n"
  "  const u8* w0 = nvf_wpiece(p, g, rl, t);\n"
  "  const u8* w1 = w0 + NVF_WROW8(p);\n"
  "  (void)w1; // (unused on TILED weights: NVF_LDG_ROW8 loads row r + 8 at w0's address + 512)\n"
  "  const u8* bsf = p.b_sf + g * sfb_g;\n"
  "  // the two SF bytes of this thread's piece of step s: columns 8s + 2t, 8s + 2t + 1, i.e. the\n"
  "  // step-0 offset plus 1024 s in the 128x4 layout\n"
  "  const u8* sf0 = bsf + nvf_sf_offset_128x4(rl, 2 * t, kc4);\n"
  "  const u8* sf1 = bsf + nvf_sf_offset_128x4(rl + 8, 2 * t, kc4);\n"
  "  const float alpha = p.alpha \? p.alpha[g] : 1.0f;\n"
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
  "  // PRE: chunk cc of this CTA (token pass cc / nchunks, K chunk cc % nchunks) into buffer cc % 2,\n"
  "  // one bulk copy per token row below masked_m (the other rows' columns are never stored, so\n"
  "  // what their shared memory holds does not matter); issued by thread 0\n"
  "  const u32 full0 = nvf_smem_u32(full);\n"
  "  const auto issue = [&](int cc) {\n"
  "    const int t0 = cc / nchunks * NVF_TOK, c = cc % nchunks;\n"
  "    if (t0 >= valid) return;\n"
  "    const int rows = valid - t0 < NVF_TOK \? valid - t0 : NVF_TOK;\n"
  "    const int left = (nsteps - c * (NVF_KC / NVF_STEP)) * 256, bytes = left < NVF_KC * 2 \? left : NVF_KC * 2;\n"
  "    const u32 bar = full0 + 8u * (cc & 1), dst = nvf_smem_u32(tok) + (cc & 1) * (NVF_TOK * NVF_TSTRIDE * 4);\n"
  "    nvf_mbar_expect_tx(bar, rows * bytes);\n"
  "    for (int n = 0; n < rows; ++n)\n",
  "      nvf_bulk_load(dst + n * (NVF_TSTRIDE * 4), p.tok_ws + nvf_sw_row_offset(p, g, t0 + n, nsteps) + c * (NVF_KC * 2),\n"
  "                    bytes, bar);\n"
  "  };\n"
  "  if (PRE) {\n"
  "    if (threadIdx.x == 0) {\n"
  "      nvf_mbar_init(full0, 1);\n"
  "      nvf_mbar_init(full0 + 8u, 1);\n"
  "      nvf_fence_mbar_init(); // the inits visible to the copies' complete_tx (async proxy)\n"
  "    }\n"
  "    __syncthreads();\n"
  "  }\n"
  "#endif\n"
  "  int cc = 0; // PRE: chunks started so far\n"
  "\n"
  "  for (int tok0 = 0; tok0 < valid; tok0 += NVF_TOK) {\n"
  "    float acc[NVF_NT][4];\n"
  "    #pragma unroll\n"
  "    for (int i = 0; i < NVF_NT; ++i)\n"
  "      #pragma unroll\n"
  "      for (int e = 0; e < 4; ++e) acc[i][e] = 0.0f;\n"
  "\n"
  "    // weights of steps 0 .. DEPTH-1 in flight before the first chunk is staged\n"
  "    uint4 wq[NVF_DEPTH][2];\n"
  "    u32 ws[NVF_DEPTH][2];\n"
  "    #pragma unroll\n"
  "    for (int d = 0; d < NVF_DEPTH; ++d) {\n"
  "      const int kel = d * NVF_STEP + 32 * t; // first K element of this thread's piece\n"
  "      const bool in = NVF_WKFULL || (d < nsteps && kel < p.k);\n"
  "      const int dl = nvf_step_in<false, NVF_DEPTH>(d, nsteps); // (the step it may read)\n"
  "      wq[d][0] = (in && (NVF_WKFULL || ok0)) \? nvf_ldg_weights<WIDE>(w0 + dl * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);\n"
  "      wq[d][1] = (in && (NVF_WKFULL || ok1)) \? NVF_LDG_ROW8(WIDE, false, w0 + dl * NVF_WSTEP_BYTES, w1 + dl * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);\n"
  "      ws[d][0] = (in && (NVF_WKFULL || ok0)) \? *(const u16*)(sf0 + dl * 1024) : 0u;\n"
  "      ws[d][1] = (in && (NVF_WKFULL || ok1)) \? *(const u16*)(sf1 + dl * 1024) : 0u;\n"
  "    }\n"
  "\n"
  "    for (int c = 0; c < nchunks; ++c, ++cc) {\n"
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
  "      if (PRE) {\n"
  "        __syncthreads(); // every warp has read chunk cc - 1, whose buffer the copies of cc + 1 overwrite\n"
  "        if (threadIdx.x == 0) {\n"
  "          if (cc == 0) { // the weights of the first steps are in flight: now wait for the pre-pass\n"
  "            asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
  "            issue(0);\n"
  "          }\n"
  "          issue(cc + 1);\n"
  "        }\n"
  "        nvf_mbar_wait(full0 + 8u * (cc & 1), (cc >> 1) & 1);\n"
  "      }\n"
  "#endif\n"
  "      // ---- stage the tokens of this K chunk (dequantized, pair order) ----\n"
  "      if (!PRE) {\n"
  "#if !defined(NVF_SWPROBE) || NVF_SWPROBE != 3\n"
  "        __syncthreads(); // the previous chunk has been read by every warp\n"
  "#endif\n"
  "        for (int piece = threadIdx.x; NVF_SWSTAGE && piece < NVF_TOK * (NVF_KC / 32); piece += NVF_THREADS) {\n"
  "          const int n = piece / (NVF_KC / 32), pc = piece % (NVF_KC / 32), ss = pc >> 2, tt = pc & 3;\n"
  "          const int m = tok0 + n, kel = c * NVF_KC + pc * 32;\n"
  "          u32 v[16];\n"
  "          if (m < valid && kel < p.k) {\n"
  "            const uint4 q = *(const uint4*)(p.a + ((i64)g * p.m_max + m) * (p.k / 2) + kel / 2);\n"
  "            const u32 sf2 = *(const u16*)(p.a_sf + g * sfa_g + nvf_sf_offset_128x4(m, kel / 16, kc4));\n"
  "            nvf_dequant_piece(q, sf2, v);\n"
  "          } else {\n"
  "            #pragma unroll\n"
  "            for (int f = 0; f < 16; ++f) v[f] = 0u;\n"
  "          }\n"
  "          u32* dst = tok + n * NVF_TSTRIDE + ss * 64 + tt * 2;\n"
  "          #pragma unroll\n"
  "          for (int i = 0; i < 8; ++i) *(uint2*)(dst + i * 8) = make_uint2(v[2 * i], v[2 * i + 1]);\n"
  "        }\n"
  "#if !defined(NVF_SWPROBE) || NVF_SWPROBE != 3\n"
  "        __syncthreads();\n"
  "#endif\n"
  "      }\n"
  "      const u32* const buf = tok + (PRE \? (cc & 1) * (NVF_TOK * NVF_TSTRIDE) : 0);\n"
  "\n"
  "      // ---- 8 register steps of 128 K: dequantize, prefetch, 8 MMAs per n8 tile ----\n"
  "      #pragma unroll 1\n",
  "      for (int half = 0; half < NVF_KC / NVF_STEP / NVF_DEPTH; ++half) {\n"
  "        #pragma unroll\n"
  "        for (int d = 0; d < NVF_DEPTH; ++d) {\n"
  "          const int ss = half * NVF_DEPTH + d, s = c * (NVF_KC / NVF_STEP) + ss;\n"
  "          if (s < nsteps) {\n"
  "#if defined(NVF_SWPROBE) && NVF_SWPROBE == 1\n"
  "            // timing probe: the step's words only folded into the accumulator (no widening, no MMAs)\n"
  "            acc[0][0] += __uint_as_float((wq[d][0].x ^ wq[d][0].y ^ wq[d][0].z ^ wq[d][0].w ^ wq[d][1].x ^ wq[d][1].y ^\n"
  "                                          wq[d][1].z ^ wq[d][1].w ^ ws[d][0] ^ ws[d][1]) & 0x007FFFFFu);\n"
  "#else\n"
  "            u32 a0[16], a1[16];\n"
  "            nvf_dequant_piece<NVF_WT_ENC>(wq[d][0], ws[d][0], a0);\n"
  "            nvf_dequant_piece<NVF_WT_ENC>(wq[d][1], ws[d][1], a1);\n"
  "#endif\n"
  "            {\n"
  "#if NVF_WKFULL\n"
  "              const int sn = nvf_step_in<true, NVF_DEPTH>(s + NVF_DEPTH, nsteps);\n"
  "              wq[d][0] = nvf_ldg_weights<WIDE>(w0 + (i64)sn * NVF_WSTEP_BYTES);\n"
  "              wq[d][1] = NVF_LDG_ROW8(WIDE, false, w0 + (i64)sn * NVF_WSTEP_BYTES, w1 + (i64)sn * NVF_WSTEP_BYTES);\n"
  "              ws[d][0] = *(const u16*)(sf0 + (i64)sn * 1024);\n"
  "              ws[d][1] = *(const u16*)(sf1 + (i64)sn * 1024);\n"
  "#else\n"
  "              const int sn = s + NVF_DEPTH, kel = sn * NVF_STEP + 32 * t;\n"
  "              const bool in = sn < nsteps && kel < p.k;\n"
  "              wq[d][0] = (in && ok0) \? nvf_ldg_weights<WIDE>(w0 + (i64)sn * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);\n"
  "              wq[d][1] = (in && ok1) \? NVF_LDG_ROW8(WIDE, false, w0 + (i64)sn * NVF_WSTEP_BYTES, w1 + (i64)sn * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);\n"
  "              ws[d][0] = (in && ok0) \? *(const u16*)(sf0 + (i64)sn * 1024) : 0u;\n"
  "              ws[d][1] = (in && ok1) \? *(const u16*)(sf1 + (i64)sn * 1024) : 0u;\n"
  "#endif\n"
  "            }\n"
  "#if !defined(NVF_SWPROBE) || NVF_SWPROBE != 1\n"
  "            const u32* tb = buf + (lane >> 2) * NVF_TSTRIDE + ss * 64 + t * 2;\n"
  "            #pragma unroll\n"
  "            for (int i = 0; i < 8; ++i) {\n"
  "              const u32 af[4] = {a0[2 * i], a1[2 * i], a0[2 * i + 1], a1[2 * i + 1]};\n"
  "              #pragma unroll\n"
  "              for (int nt = 0; nt < NVF_NT; ++nt) {\n"
  "                const uint2 bv = *(const uint2*)(tb + nt * 8 * NVF_TSTRIDE + i * 8);\n"
  "#if NVF_F16\n"
  "                nvf_mma_f16_16816(acc[nt], af, bv.x, bv.y);\n"
  "#else\n"
  "                nvf_mma_bf16_16816(acc[nt], af, bv.x, bv.y);\n"
  "#endif\n"
  "              }\n"
  "            }\n"
  "#endif\n"
  "          }\n"
  "        }\n"
  "      }\n"
  "    }\n"
  "\n"
  "    // ---- epilogue: D[g, m, n] for tokens m < valid and weight rows n < N ----\n"
  "    #pragma unroll\n"
  "    for (int nt = 0; nt < NVF_NT; ++nt)\n"
  "      #pragma unroll\n"
  "      for (int e = 0; e < 4; ++e)\n"
  "        nvf_store_swapab(p, g, valid, alpha, tok0 + nt * 8 + 2 * t + (e & 1), r0 + (e >> 1) * 8, acc[nt][e]);\n"
  "  }\n"
  "}\n"
  "\n"
  "// Kernels without and with a workspace (separate, so each gets its own register allocation and\n"
  "// the path without one compiles as before); the host passes a workspace only on sm_90+ (the bulk\n"
  "// copies) and TILED weights.\n"
  "template <bool WIDE> NVF_DEV void nvf_gemm_swapab_plain(const NvfGemmParams& p) { nvf_gemm_swapab_body<WIDE, false>(p); }\n"
  "\n"
  "// nvf_gemm_swapab and nvf_gemm_swapab_l2, or nvf_gemm_swapab_tiled (gemm_common.cuh)\n"
  "NVF_GEMM_ENTRY_POINTS(nvf_gemm_swapab, nvf_gemm_swapab_plain, NVF_THREADS, NVF_MINB)\n"
  "\n"
  "// The _ws kernels run after their pre-pass as programmatic dependent launches: they read masked_m,\n",
  "// alpha and the weights (which the pre-pass does not write, and which the kernels before it have\n"
  "// finished: it waits for them before it lets this kernel start) at once, and only the thread that\n"
  "// copies the tokens waits for the pre-pass (griddepcontrol.wait, before its first copy; every\n"
  "// other thread is ordered after that by the chunk's mbarrier). Without the attribute that wait is\n"
  "// a no-op and the kernel starts after the pre-pass as usual.\n"
  "template <bool WIDE> NVF_DEV void nvf_gemm_swapab_pre(const NvfGemmParams& p) {\n"
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
  "  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\"); // (the next kernel waits for this one to complete)\n"
  "  nvf_gemm_swapab_body<WIDE, true>(p);\n"
  "#endif\n"
  "}\n"
  "// (only for 8 tokens on TILED weights: the host gives no other swap-AB tile a workspace,\n"
  "// nvfp4moe__spec_takes_ws)\n"
  "#if defined(NVF_WTILED) && NVF_WTILED && NVF_NT == 1\n"
  "extern \"C\" __global__ void __launch_bounds__(NVF_THREADS, NVF_MINB) nvf_gemm_swapab_ws_tiled(const NvfGemmParams p) {\n"
  "  nvf_gemm_swapab_pre<false>(p);\n"
  "}\n"
  "\n"
  "// The token pre-pass of a swap-AB GEMM with a workspace: each token row below masked_m widened\n"
  "// once, as the staging above does it, into the workspace's row of 128 * steps bf16 (256 bytes a\n"
  "// step, pair order, zeros past K): nvf_sw_row_offset, the host's nvfp4moe__tok_ws_bytes. One\n"
  "// thread a 32-element piece; CTA x = g ytiles + y takes the group's pieces y * 256 + threadIdx.x,\n"
  "// then every ytiles * 256 on (a warp writes 8 whole steps: full sectors).\n"
  "extern \"C\" __global__ void __launch_bounds__(256) nvf_sw_widen_tokens(const NvfGemmParams p, int ytiles) {\n"
  "  nvf_pdl_enter();\n"
  "  const int g = blockIdx.x / ytiles, y = blockIdx.x % ytiles;\n"
  "  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);\n"
  "  const int nsteps = (p.k + NVF_STEP - 1) / NVF_STEP, pieces = 4 * nsteps, kc4 = (p.k / 16 + 3) / 4;\n"
  "  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k), total = (i64)valid * pieces;\n"
  "  for (i64 i = (i64)y * 256 + threadIdx.x; i < total; i += (i64)ytiles * 256) {\n"
  "    const int m = (int)(i / pieces), pc = (int)(i % pieces), kel = 32 * pc;\n"
  "    u32 v[16];\n"
  "    if (kel < p.k) {\n"
  "      const uint4 q = __ldg((const uint4*)(p.a + ((i64)g * p.m_max + m) * (p.k / 2) + kel / 2));\n"
  "      const u32 sf2 = *(const u16*)(p.a_sf + g * sfa_g + nvf_sf_offset_128x4(m, kel / 16, kc4));\n"
  "      nvf_dequant_piece(q, sf2, v);\n"
  "    } else {\n"
  "      #pragma unroll\n"
  "      for (int f = 0; f < 16; ++f) v[f] = 0u;\n"
  "    }\n"
  "    u32* dst = (u32*)(p.tok_ws + nvf_sw_row_offset(p, g, m, nsteps)) + (pc >> 2) * 64 + (pc & 3) * 2;\n"
  "    #pragma unroll\n"
  "    for (int j = 0; j < 8; ++j) *(uint2*)(dst + j * 8) = make_uint2(v[2 * j], v[2 * j + 1]);\n"
  "  }\n"
  "}\n"
  "#endif\n",
  0};
static const char* const nvfp4moe__src_gemm_wgmma_cu[] = {
  "// gemm_wgmma.cu -- masked grouped NVFP4 GEMM (NT) on Hopper warpgroup MMA (sm_90a).\n"
  "//\n"
  "// Same contract as gemm_portable.cu (NUMERICS.md 4). Hopper has no FP4 tensor cores, so\n"
  "// both operands are widened exactly to BF16 (dequant_bf16.cuh) and multiplied by\n"
  "// wgmma m64nNk16 with F32 accumulation. Swap-AB, because wgmma takes only A from\n"
  "// registers: the weights are A (64 rows per warpgroup, streamed from global memory\n"
  "// straight into registers and widened there, never staged), the tokens are B (N =\n"
  "// NVF_TOK tokens, widened once per CTA into shared memory). The weights of a CTA are read\n"
  "// once per token tile, so one tile that holds every token of an expert reads them once.\n"
  "//\n"
  "// K permutation (as gemm_swapab.cu): a thread of an MMA quad loads 16 bytes (32\n"
  "// consecutive K elements) of its weight row per 128-K step and feeds them to the 8 k16\n"
  "// MMAs of the step as the pairs (e, e+4) of each 8-element word. The tokens are written\n"
  "// to shared memory in the same order, so A and B agree and the dot products are unchanged.\n"
  "//\n"
  "// Pipeline: weight loads run NVF_DEPTH steps ahead; a warpgroup widens step s+1's weights\n"
  "// after its step-s MMAs are done while the other warpgroup's MMAs run (one group in flight);\n"
  "// the next K chunk of tokens is copied raw (cp.async) into shared memory during the\n"
  "// current chunk and widened into the next of three buffers while the chunk's last MMAs\n"
  "// run, so the barrier between chunks never drains the tensor pipe.\n"
  "#include \"common.cuh\"\n"
  "#include \"gemm_common.cuh\"\n"
  "#include \"dequant_bf16.cuh\"\n"
  "#include \"ptx_wgmma.cuh\"\n"
  "#include \"ptx_tcgen05.cuh\" // mbarriers (sm_90+)\n"
  "\n"
  "#ifndef NVF_TOK\n"
  "#define NVF_TOK 64 // tokens per pass: the wgmma N (8, 16, 32, 48, 64 or 128)\n"
  "#endif\n"
  "// The host mirrors this geometry (128 NVF_WG threads, 64 NVF_WG weight rows, shared memory\n"
  "// as NVF_SMEM_BYTES) from the same specialisation table that sets NVF_TOK and NVF_WG.\n"
  "#ifndef NVF_WG\n"
  "#define NVF_WG 2 // warpgroups per CTA, 64 weight rows each (2, 3, 4: 255, 168, 128 registers)\n"
  "#endif\n"
  "// Tuning runs only ($NVFP4MOE_TUNE_DEFINE=-DNVF_WTUNE=<v>, mirrored by the host's shared-memory\n"
  "// size): K chunk 256 (v / 100), CTAs per SM (v / 10) % 10 for the register budget, depth v % 10;\n"
  "// three digits 1-9 (no leading zero: the preprocessor would read octal, the host decimal).\n"
  "#ifdef NVF_WTUNE\n"
  "#define NVF_WKC (256 * (NVF_WTUNE / 100))\n"
  "#define NVF_WMINB ((NVF_WTUNE / 10) % 10)\n"
  "#define NVF_WDEPTH (NVF_WTUNE % 10)\n"
  "static_assert(NVF_WTUNE >= 111 && NVF_WTUNE <= 999 && NVF_WMINB >= 1 && NVF_WDEPTH >= 1,\n"
  "              \"NVF_WTUNE: three digits 1-9\");\n"
  "#endif\n"
  "#ifndef NVF_WMINB\n"
  "#define NVF_WMINB 1\n"
  "#endif\n"
  "// Probes for tuning runs (wrong results, timing only; bench/NOTES.md, twelfth session):\n"
  "// -DNVF_WPROBE=1 stages and widens only a tile's first token chunk (later chunks reuse stale\n"
  "// buffers), =2 feeds each weight piece's raw words to wgmma unwidened (the loads stay live),\n"
  "// =3 both: what the token path and the weight widening cost. =4 fills each later token chunk\n"
  "// buffer with one bulk copy of its size from L2 (the group's weight bytes stand in for a BF16\n"
  "// image of the tokens written by a pre-pass): what loading pre-widened tokens would cost; =5 the\n"
  "// same with a quarter of the bytes (as a 4-CTA cluster's multicast would read from L2, or as the\n"
  "// E2M1 staging does today, without the widening). =6 and =7 stage and widen only the first half\n"
  "// or quarter of each chunk's token units (what CTAs of a 2- or 4-CTA cluster sharing the token\n",
  "// widening would each do, less the stores into the other CTAs' shared memory).\n"
  "#ifndef NVF_WPROBE\n"
  "#define NVF_WPROBE 0\n"
  "#endif\n"
  "#define NVF_WTOKPATH (NVF_WPROBE == 0 || NVF_WPROBE == 2 || NVF_WPROBE >= 6) // later chunks widened here\n"
  "#define NVF_WSHARE (NVF_WPROBE == 6 \? 2 : NVF_WPROBE == 7 \? 4 : 1)\n"
  "// K per token chunk (64 KiB or less); tuning runs may set a smaller one with NVF_WKC (the\n"
  "// host sizes shared memory for the default, so a larger one is refused)\n"
  "#define NVF_KC_DEFAULT (NVF_TOK >= 128 \? 256 : NVF_TOK > 32 \? 512 : 1024)\n"
  "#ifdef NVF_WKC\n"
  "#define NVF_KC NVF_WKC\n"
  "#else\n"
  "#define NVF_KC NVF_KC_DEFAULT\n"
  "#endif\n"
  "static_assert(NVF_KC <= NVF_KC_DEFAULT && NVF_KC % 256 == 0, \"NVF_WKC: a multiple of 256, at most the default\");\n"
  "// Weight steps in flight (20 registers each). Deeper measured slower (bench/NOTES.md);\n"
  "// tuning runs set it with $NVFP4MOE_TUNE_DEFINE=-DNVF_WDEPTH=<n> (read by no other kernel),\n"
  "// n dividing the steps per chunk (8, 4 or 2 by tile): the slots are indexed by step.\n"
  "#ifndef NVF_WDEPTH\n"
  "#define NVF_WDEPTH 2\n"
  "#endif\n"
  "#define NVF_DEPTH NVF_WDEPTH\n"
  "#define NVF_NBUF 3                          // token chunk buffers\n"
  "// Chunk hand-off: 1 (default) each thread arrives on the next chunk buffer's mbarrier once it has\n"
  "// widened its part, and a warpgroup waits on it just before its first wgmma of that chunk, so the\n"
  "// warpgroups keep their stagger across chunks; 0 a CTA barrier closes every chunk (tuning runs).\n"
  "#ifndef NVF_WCHUNKBAR\n"
  "#define NVF_WCHUNKBAR 1\n"
  "#endif\n"
  "#define NVF_THREADS (128 * NVF_WG)\n"
  "#define NVF_ROWS (64 * NVF_WG)              // weight rows (N of the problem) per CTA\n"
  "#define NVF_STEP 128                        // K elements per register step\n"
  "#define NVF_SPC (NVF_KC / NVF_STEP)         // steps per chunk\n"
  "#define NVF_MMA_BYTES (NVF_TOK * 32)        // B of one k16 MMA: TOK x 16 bf16\n"
  "#define NVF_STEP_BYTES (8 * NVF_MMA_BYTES)\n"
  "#define NVF_BUF_BYTES (NVF_SPC * NVF_STEP_BYTES)\n"
  "#define NVF_UNITS (NVF_TOK * NVF_SPC)      // token staging units (one token, one step) per chunk\n"
  "#define NVF_UPT ((NVF_UNITS + NVF_THREADS - 1) / NVF_THREADS)\n"
  "#define NVF_SMEM_BYTES (NVF_NBUF * NVF_BUF_BYTES + NVF_UNITS * 72) // chunk buffers, raw staging\n"
  "\n"
  "static_assert(NVF_SPC >= 2, \"a chunk has at least two steps (buffer reuse argument below)\");\n"
  "static_assert(NVF_SPC % NVF_DEPTH == 0, \"a chunk is a whole number of rounds of the weight slots\");\n"
  "\n"
  "static_assert(NVF_TOK == 8 || NVF_TOK == 16 || NVF_TOK == 32 || NVF_TOK == 48 || NVF_TOK == 64 || NVF_TOK == 128, \"NVF_TOK must be 8, 16, 32, 48, 64 or 128\");\n"
  "#include \"gemm_wgmma_step.cuh\"\n"
  "\n"
  "// Token staging works in units of one token x one 128-K step (64 bytes of E2M1, 8 SFs):\n"
  "// unit u = token u % TOK of step u / TOK, so a warp's 16-byte stores of one MMA's core-matrix\n"
  "// rows cover whole 128-byte rows (conflict-free). A thread's unit pointers are set once per\n"
  "// token tile and advance by a chunk each time.\n"
  "struct NvfTokUnit {\n"
  "  const u8* src; // E2M1 of the unit in chunk 0 (null: token past masked_m, never read)\n"
  "  const u8* sf;  // its first 4-SF group (the second is 512 bytes on)\n"
  "};\n"
  "\n"
  "NVF_DEV void nvf_tok_units(const NvfGemmParams& p, const u8* a_g, const u8* asf_g, int valid, int tok0, int kc4,\n"
  "                           NvfTokUnit* u) {\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < NVF_UPT; ++i) {\n"
  "    const int ui = threadIdx.x + i * NVF_THREADS, n = ui % NVF_TOK, ss = ui / NVF_TOK, m = tok0 + n;\n"
  "    const bool in = ui < NVF_UNITS && m < valid;\n"
  "    u[i].src = in \? a_g + (i64)m * (p.k / 2) + ss * 64 : 0;\n",
  "    u[i].sf = asf_g + nvf_sf_offset_128x4(in \? m : 0, ss * 8, kc4);\n"
  "  }\n"
  "}\n"
  "\n"
  "// Chunk c's raw units into the staging area with cp.async, 16-byte piece q of unit u at\n"
  "// stage + 16 (q UNITS + u), SF group h at stage_sf + 4 (h UNITS + u); zero-filled past\n"
  "// K and for tokens past masked_m. Nothing stays in registers while the chunk's MMAs run.\n"
  "NVF_DEV void nvf_tok_issue(const NvfGemmParams& p, const NvfTokUnit* u, int c, u32 stage, u32 stage_sf) {\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < NVF_UPT; ++i) {\n"
  "    const int ui = threadIdx.x + i * NVF_THREADS;\n"
  "    if (ui >= NVF_UNITS / NVF_WSHARE) continue;\n"
  "    const int kel = c * NVF_KC + (ui / NVF_TOK) * NVF_STEP; // first K element of the unit\n"
  "    const u8* src = u[i].src \? u[i].src + c * (NVF_KC / 2) : p.a;\n"
  "    const u8* sf = u[i].sf + c * (NVF_KC / 64) * 512;\n"
  "    #pragma unroll\n"
  "    for (int q = 0; q < 4; ++q) {\n"
  "      const bool in = u[i].src && kel + 32 * q < p.k;\n"
  "      asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" ::\"r\"(stage + 16 * (q * NVF_UNITS + ui)),\n"
  "                   \"l\"(in \? src + 16 * q : p.a), \"r\"(in \? 16 : 0) : \"memory\");\n"
  "    }\n"
  "    #pragma unroll\n"
  "    for (int h = 0; h < 2; ++h) {\n"
  "      const bool in = u[i].src && kel + 64 * h < p.k;\n"
  "      asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4, %2;\" ::\"r\"(stage_sf + 4 * (h * NVF_UNITS + ui)),\n"
  "                   \"l\"(in \? sf + 512 * h : p.a_sf), \"r\"(in \? 4 : 0) : \"memory\");\n"
  "    }\n"
  "  }\n"
  "  asm volatile(\"cp.async.commit_group;\" ::: \"memory\");\n"
  "}\n"
  "\n"
  "// Widen this thread's staged units of chunk c into a chunk buffer (per step the layout of\n"
  "// nvf_wg_widen_token).\n"
  "NVF_DEV void nvf_tok_widen(u8* buf, const u8* stage, const u32* stage_sf, int c, int k) {\n"
  "  asm volatile(\"cp.async.wait_group 0;\" ::: \"memory\"); // a thread reads only its own copies\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < NVF_UPT; ++i) {\n"
  "    const int ui = threadIdx.x + i * NVF_THREADS, n = ui % NVF_TOK, ss = ui / NVF_TOK;\n"
  "    if (ui >= NVF_UNITS / NVF_WSHARE) continue;\n"
  "    uint4 q[4];\n"
  "    #pragma unroll\n"
  "    for (int t = 0; t < 4; ++t) q[t] = *(const uint4*)(stage + 16 * (t * NVF_UNITS + ui));\n"
  "    const u32 sfw[2] = {stage_sf[ui], stage_sf[NVF_UNITS + ui]};\n"
  "    nvf_wg_widen_token(q, sfw, c * NVF_KC + ss * NVF_STEP, k, buf + ss * NVF_STEP_BYTES + (n >> 3) * 256 + (n & 7) * 16);\n"
  "  }\n"
  "}\n"
  "\n"
  "template <bool WIDE> NVF_DEV void nvf_gemm_wgmma_body(const NvfGemmParams& p) {\n"
  "  extern __shared__ __align__(128) u8 smem[]; // NVF_NBUF chunk buffers, then the raw staging area\n"
  "  const int nblocks = (p.n + NVF_ROWS - 1) / NVF_ROWS;\n"
  "  const int tiles = gridDim.x / (p.groups * nblocks); // token tiles per (group, block)\n"
  "  const int tt = blockIdx.x % tiles, gb = blockIdx.x / tiles, g = gb / nblocks, bx = gb % nblocks;\n"
  "  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, wg = threadIdx.x >> 7, t = lane & 3;\n"
  "  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);\n"
  "  if (tt * NVF_TOK >= valid) return; // no tokens for this tile: the weights are not read\n"
  "  const int kc4 = (p.k / 16 + 3) / 4, nsteps = (p.k + NVF_STEP - 1) / NVF_STEP;\n"
  "  const int nchunks = (p.k + NVF_KC - 1) / NVF_KC;\n"
  "  const i64 sfa_g = nvf_sf_group_bytes_128x4(p.m_max, p.k);\n"
  "  const int r0 = bx * NVF_ROWS + wg * 64 + warp * 16 + (lane >> 2); // weight rows r0, r0 + 8\n"
  "  const NvfWgRows wr = nvf_wg_rows(p, g, r0, t, kc4);\n"
  "  const u8* a_g = p.a + (i64)g * p.m_max * (p.k / 2);\n"
  "  const u8* asf_g = p.a_sf + g * sfa_g;\n"
  "  const u32 sbase = (u32)__cvta_generic_to_shared(smem);\n",
  "  const u32 stage = sbase + NVF_NBUF * NVF_BUF_BYTES, stage_sf = stage + NVF_UNITS * 64;\n"
  "  const u8* stage_p = smem + NVF_NBUF * NVF_BUF_BYTES;\n"
  "  const u32* stage_sf_p = (const u32*)(stage_p + NVF_UNITS * 64);\n"
  "  const float alpha = p.alpha \? p.alpha[g] : 1.0f;\n"
  "#if NVF_WCHUNKBAR\n"
  "  // full[b]: every thread has widened its part of the chunk now in buffer b (count: all threads).\n"
  "  // Chunk c + 1 goes into buffer (c + 1) % 3 = (c - 2) % 3 at the end of a thread's chunk c. Every\n"
  "  // warpgroup is done reading chunk c - 2 by then: the thread has passed full[c % 3], which needs\n"
  "  // every thread to have widened chunk c, which each does after issuing all of chunk c - 1, whose\n"
  "  // first step retired (wait<0>) chunk c - 2's last group. So no \"empty\" barrier is needed, and a\n"
  "  // warpgroup may run up to about a chunk ahead of the slowest.\n"
  "  __shared__ __align__(8) u64 full[NVF_NBUF];\n"
  "  const u32 full0 = (u32)__cvta_generic_to_shared(full);\n"
  "  if (threadIdx.x == 0) {\n"
  "    #pragma unroll\n"
  "    for (int b = 0; b < NVF_NBUF; ++b) nvf_mbar_init(full0 + 8u * b, NVF_THREADS);\n"
  "  }\n"
  "  u32 full_phase = 0; // bit b: parity of buffer b's next phase (every thread waits on every phase)\n"
  "#endif\n"
  "\n"
  "  for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {\n"
  "    float acc[NVF_TOK / 2];\n"
  "    #pragma unroll\n"
  "    for (int e = 0; e < NVF_TOK / 2; ++e) acc[e] = 0.0f;\n"
  "\n"
  "    uint4 wq[NVF_DEPTH][2];\n"
  "    u32 ws[NVF_DEPTH][2];\n"
  "    #pragma unroll\n"
  "    for (int d = 0; d < NVF_DEPTH; ++d) nvf_wg_load<WIDE>(wr, nvf_wg_step_in<false>(d, nsteps), nsteps, p.k, wq[d], ws[d]);\n"
  "    NvfTokUnit units[NVF_UPT];\n"
  "    nvf_tok_units(p, a_g, asf_g, valid, tok0, kc4, units);\n"
  "    __syncthreads(); // the previous token tile's MMAs are done in every warpgroup (wait<0>)\n"
  "    nvf_tok_issue(p, units, 0, stage, stage_sf);\n"
  "    nvf_tok_widen(smem, stage_p, stage_sf_p, 0, p.k);\n"
  "    nvf_fence_proxy_async();\n"
  "    __syncthreads();\n"
  "\n"
  "    // Widened weights of a step: row r0 (0..15), row r0 + 8 (16..31). One set: wgmma reads\n"
  "    // its A registers until the wait that retires it, and the compiler does not know that\n"
  "    // (a second set, refilled after wait<1>, had its registers reused under a pending\n"
  "    // wgmma and gave wrong results), so every step first waits for all earlier MMAs.\n"
  "    u32 a[32];\n"
  "    for (int c = 0; c < nchunks; ++c) {\n"
  "      const u32 buf = sbase + (c % NVF_NBUF) * NVF_BUF_BYTES;\n"
  "      if (c + 1 < nchunks && NVF_WTOKPATH) nvf_tok_issue(p, units, c + 1, stage, stage_sf);\n"
  "      #pragma unroll\n"
  "      for (int ss = 0; ss < NVF_SPC; ++ss) {\n"
  "        const int s = c * NVF_SPC + ss;\n"
  "        if (s < nsteps) {\n"
  "          // Step s's weights are in slot s % DEPTH = ss % DEPTH (a chunk is a whole number of\n"
  "          // rounds), a compile-time index: the slot is refilled in place. Moving the loads in\n"
  "          // flight down one place instead compiled to register moves that waited for the\n"
  "          // loads just issued (1-3 % slower, bench/NOTES.md, seventh session).\n"
  "          const int d = ss % NVF_DEPTH;\n"
  "          nvf_wgmma_wait<0>(); // step s-1, the last reader of a[], is done\n"
  "#if NVF_WPROBE == 2 || NVF_WPROBE == 3\n"
  "          #pragma unroll\n"
  "          for (int j = 0; j < 16; ++j) {\n"
  "            a[j] = (&wq[d][0].x)[j & 3] ^ ws[d][0];\n"
  "            a[16 + j] = (&wq[d][1].x)[j & 3] ^ ws[d][1];\n"
  "          }\n"
  "#else\n"
  "          nvf_dequant_piece<NVF_WT_ENC>(wq[d][0], ws[d][0], a);\n"
  "          nvf_dequant_piece<NVF_WT_ENC>(wq[d][1], ws[d][1], a + 16);\n"
  "#endif\n",
  "          nvf_wg_load<WIDE>(wr, nvf_wg_step_in<true>(s + NVF_DEPTH, nsteps), nsteps, p.k, wq[d], ws[d]);\n"
  "#if NVF_WCHUNKBAR\n"
  "          if (ss == 0 && c > 0) { // the chunk's tokens are in buf (chunk 0: the tile's CTA barrier)\n"
  "            const int b = c % NVF_NBUF;\n"
  "            nvf_mbar_wait(full0 + 8u * b, (full_phase >> b) & 1u);\n"
  "            full_phase ^= 1u << b;\n"
  "          }\n"
  "#endif\n"
  "          nvf_wgmma_fence();\n"
  "          nvf_wg_mmas(acc, a, buf + ss * NVF_STEP_BYTES);\n"
  "          nvf_wgmma_commit();\n"
  "        }\n"
  "      }\n"
  "      // Next chunk into buffer (c+1) % 3 while this chunk's last MMAs run. Its readers,\n"
  "      // chunk c-2, were done everywhere at the barrier that closed chunk c-1: a warpgroup\n"
  "      // reaches that barrier with at most one group in flight, of chunk c-1.\n"
  "      if (c + 1 < nchunks) {\n"
  "#if (NVF_WPROBE == 4 || NVF_WPROBE == 5) && NVF_WCHUNKBAR\n"
  "        constexpr u32 pbytes = NVF_WPROBE == 5 \? NVF_BUF_BYTES / 4 : NVF_BUF_BYTES;\n"
  "        const u32 fb = full0 + 8u * ((c + 1) % NVF_NBUF);\n"
  "        const i64 gbytes = (i64)p.n * (p.k / 2), off = (i64)(c + 1) * NVF_BUF_BYTES;\n"
  "        if (threadIdx.x == 0 && off + NVF_BUF_BYTES <= gbytes) {\n"
  "          nvf_mbar_expect_tx(fb, pbytes);\n"
  "          nvf_bulk_load(sbase + ((c + 1) % NVF_NBUF) * NVF_BUF_BYTES, p.b + g * gbytes + off, pbytes, fb);\n"
  "        } else {\n"
  "          nvf_mbar_arrive(fb);\n"
  "        }\n"
  "#else\n"
  "        if (NVF_WTOKPATH) nvf_tok_widen(smem + ((c + 1) % NVF_NBUF) * NVF_BUF_BYTES, stage_p, stage_sf_p, c + 1, p.k);\n"
  "        nvf_fence_proxy_async();\n"
  "#if NVF_WCHUNKBAR\n"
  "        nvf_mbar_arrive(full0 + 8u * ((c + 1) % NVF_NBUF));\n"
  "#endif\n"
  "#endif\n"
  "      }\n"
  "#if !NVF_WCHUNKBAR\n"
  "      __syncthreads();\n"
  "#endif\n"
  "    }\n"
  "    nvf_wgmma_wait<0>();\n"
  "    #pragma unroll\n"
  "    for (int e = 0; e < NVF_TOK / 2; ++e) nvf_reg_fence(acc[e]);\n"
  "\n"
  "    nvf_wg_epilogue(p, g, valid, alpha, tok0, r0, t, acc); // D[g, m, n] for m < valid, n < N\n"
  "  }\n"
  "}\n"
  "\n"
  "// nvf_gemm_wgmma and nvf_gemm_wgmma_l2, or nvf_gemm_wgmma_tiled (gemm_common.cuh)\n"
  "NVF_GEMM_ENTRY_POINTS(nvf_gemm_wgmma, nvf_gemm_wgmma_body, NVF_THREADS, NVF_WMINB)\n",
  0};
static const char* const nvfp4moe__src_gemm_wgmma_step_cuh[] = {
  "// gemm_wgmma_step.cuh -- the weight side of the swap-AB wgmma step and its epilogue, shared by\n"
  "// gemm_wgmma.cu and gemm_wgmma_ws.cu (which differ in how the tokens reach shared memory).\n"
  "// Include after NVF_TOK (the tile's tokens: the wgmma N, and the B layout's MMA stride) is defined.\n"
  "//\n"
  "// A thread of an MMA quad owns weight rows r0 and r0 + 8 of its warpgroup's 64 and loads\n"
  "// 16 bytes (32 consecutive K elements, piece t = lane % 4) of each per 128-K step, with the\n"
  "// two SF bytes of each piece; widened, they are the A fragments of the step's 8 k16 MMAs as\n"
  "// the pairs (e, e + 4) of each 8-element word (the tokens are stored in the same K order).\n"
  "#pragma once\n"
  "#include \"common.cuh\"\n"
  "#include \"gemm_common.cuh\"\n"
  "#include \"ptx_wgmma.cuh\"\n"
  "#include \"dequant_bf16.cuh\"\n"
  "\n"
  "#ifndef NVF_WSTRONG\n"
  "#define NVF_WSTRONG 0 // 1: the weights by strong loads (nvf_ldg_weights)\n"
  "#endif\n"
  "\n"
  "// NVF_WKFULL (the _k256 twins of the TILED token-producer tiles, which the host runs where K % 256 == 0):\n"
  "// the step's loads without predicates or zero fills, 6-7 % fewer instructions a step (bench/NOTES.md,\n"
  "// twenty-ninth session, X45 and X46: -0.4 to -5.3 % at 32 and 128 tokens). Every piece of every step lies\n"
  "// inside K and the steps are whole rounds of two; rows past N read rows N - 16 .. N - 1 instead\n"
  "// (their results are never stored; N % 16 == 0 and r0 % 16 < 8, so r0 and r0 + 8 are both in or both\n"
  "// out), and a step loaded past the last reads step s - nsteps (nvf_wg_step_in; never widened).\n"
  "struct NvfWgRows {\n"
  "  const u8* w0; // piece t of row r0, step 0\n"
  "  const u8* w1; // row r0 + 8\n"
  "  const u8* sf; // SF pair of row r0, step 0 (step s at + 1024 s; row r0 + 8 is 128 bytes on)\n"
  "  int t;\n"
  "  bool ok0, ok1; // rows inside N\n"
  "};\n"
  "\n"
  "NVF_DEV NvfWgRows nvf_wg_rows(const NvfGemmParams& p, int g, int r0, int t, int kc4) {\n"
  "  NvfWgRows w;\n"
  "#if NVF_WKFULL\n"
  "  if (r0 >= p.n) r0 = p.n - 16 + (r0 & 15); // (ok0, ok1 below then go unused: the loads take no predicates)\n"
  "#endif\n"
  "  w.w0 = nvf_wpiece(p, g, r0, t);\n"
  "  w.w1 = w.w0 + NVF_WROW8(p);\n"
  "  // 128x4: columns 8s + 2t, 8s + 2t + 1 of row r0; row r0 + 8 is in the same 32-row group (r0 % 32 < 24)\n"
  "  w.sf = p.b_sf + g * nvf_sf_group_bytes_128x4(p.n, p.k) + nvf_sf_offset_128x4(r0, 2 * t, kc4);\n"
  "  w.t = t;\n"
  "  w.ok0 = r0 < p.n;\n"
  "  w.ok1 = r0 + 8 < p.n;\n"
  "  return w;\n"
  "}\n"
  "// nvf_step_in (gemm_common.cuh) at this tile's depth\n"
  "template <bool AHEAD> NVF_DEV int nvf_wg_step_in(int s, int nsteps) { return nvf_step_in<AHEAD, NVF_DEPTH>(s, nsteps); }\n"
  "\n"
  "// Step s's two pieces and SF pairs; zeros past K, past the steps and for rows past N.\n"
  "template <bool WIDE> NVF_DEV void nvf_wg_load(const NvfWgRows& w, int s, int nsteps, int k, uint4* q, u32* sf) {\n"
  "#if NVF_WIMM_ON // (TILED: both rows' loads from one address, NVF_LDG_ROW8)\n"
  "  const u8* const a0 = w.w0 + (i64)s * NVF_WSTEP_BYTES;\n"
  "#define NVF_WG_A0 a0\n"
  "#else // (row-major: each load's address inside its branch, as before 0.5.1; computed ahead it lengthened the loops)\n"
  "#define NVF_WG_A0 (w.w0 + (i64)s * NVF_WSTEP_BYTES)\n"
  "#endif\n"
  "#if NVF_WKFULL\n"
  "  q[0] = nvf_ldg_weights<WIDE, NVF_WSTRONG>(NVF_WG_A0);\n"
  "  q[1] = NVF_LDG_ROW8(WIDE, NVF_WSTRONG, NVF_WG_A0, w.w1 + (i64)s * NVF_WSTEP_BYTES);\n"
  "  sf[0] = *(const u16*)(w.sf + (i64)s * 1024);\n"
  "  sf[1] = *(const u16*)(w.sf + (i64)s * 1024 + 128);\n"
  "#else\n"
  "  const bool in = s < nsteps && s * 128 + 32 * w.t < k;\n"
  "  q[0] = (in && w.ok0) \? nvf_ldg_weights<WIDE, NVF_WSTRONG>(NVF_WG_A0) : make_uint4(0, 0, 0, 0);\n",
  "  q[1] = (in && w.ok1) \? NVF_LDG_ROW8(WIDE, NVF_WSTRONG, NVF_WG_A0, w.w1 + (i64)s * NVF_WSTEP_BYTES) : make_uint4(0, 0, 0, 0);\n"
  "  sf[0] = (in && w.ok0) \? *(const u16*)(w.sf + (i64)s * 1024) : 0u;\n"
  "  sf[1] = (in && w.ok1) \? *(const u16*)(w.sf + (i64)s * 1024 + 128) : 0u;\n"
  "#endif\n"
  "#undef NVF_WG_A0\n"
  "}\n"
  "\n"
  "// The step's 8 MMAs, N = TN tokens (the tile's NVF_TOK, or fewer where a tile holds fewer: the\n"
  "// first TN tokens, the same accumulator prefix): widened weights a[] (row r0: 0..15, row r0 + 8:\n"
  "// 16..31), B of MMA i at buf + i NVF_TOK 32 (K-major core matrices, lbo 128, sbo 256).\n"
  "// MMA i's descriptor is MMA 0's plus i NVF_TOK 32 / 16 in the address field (buf + 8 NVF_TOK 32 <\n"
  "// 256 KB: no carry out of it), one uniform add each instead of building each from its address.\n"
  "template <int TN> NVF_DEV void nvf_wg_mmas_n(float* acc, const u32* a, u32 buf) {\n"
  "  const u64 d0 = nvf_wgmma_desc(buf, 128, 256);\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 8; ++i) {\n"
  "    const u32 af[4] = {a[2 * i], a[16 + 2 * i], a[2 * i + 1], a[16 + 2 * i + 1]};\n"
  "    nvf_wgmma_rs<TN>(acc, af, d0 + (u64)(i * (NVF_TOK * 32 / 16)));\n"
  "  }\n"
  "}\n"
  "NVF_DEV void nvf_wg_mmas(float* acc, const u32* a, u32 buf) { nvf_wg_mmas_n<NVF_TOK>(acc, a, buf); }\n"
  "\n"
  "// D[g, m, n] for tokens m < valid and weight rows n < N from the m64nNk16 accumulator layout (a\n"
  "// tile that ran a smaller N left the rest of acc at zero, for tokens past valid).\n"
  "NVF_DEV void nvf_wg_epilogue(const NvfGemmParams& p, int g, int valid, float alpha, int tok0, int r0, int t,\n"
  "                             const float* acc) {\n"
  "  #pragma unroll\n"
  "  for (int j = 0; j < NVF_TOK / 8; ++j)\n"
  "    #pragma unroll\n"
  "    for (int e = 0; e < 4; ++e)\n"
  "      nvf_store_swapab(p, g, valid, alpha, tok0 + j * 8 + 2 * t + (e & 1), r0 + (e >> 1) * 8, acc[4 * j + e]);\n"
  "}\n"
  "\n"
  "// 16 bytes to shared memory: through a generic pointer, or a shared-window address (st.shared,\n"
  "// which the token producer uses: its slot addresses are 32-bit).\n"
  "NVF_DEV void nvf_st16_shared(u8* p, uint4 v) { *(uint4*)p = v; }\n"
  "NVF_DEV void nvf_st16_shared(u32 a, uint4 v) {\n"
  "  asm volatile(\"st.shared.v4.b32 [%0], {%1, %2, %3, %4};\" ::\"r\"(a), \"r\"(v.x), \"r\"(v.y), \"r\"(v.z), \"r\"(v.w) : \"memory\");\n"
  "}\n"
  "\n"
  "// The token side: one token's raw 128-K step (its four 16-byte pieces q[] and two SF words\n"
  "// sfw[], K element kel0 first) widened into the layout the MMAs read, 8 MMAs x NVF_TOK / 8\n"
  "// core-matrix rows x 2 K halves x 8 tokens x 16 bytes (lbo 128, sbo 256): word j of piece t\n"
  "// gives the pairs (8j + p, 8j + p + 4), p = 0..3, of K slots 2t, 2t + 1 of MMA 2j + p / 2, K half\n"
  "// p % 2, so the four pieces fill one 16-byte core-matrix row per (MMA, half). base: the token's\n"
  "// row in MMA 0, half 0 (a pointer or a shared address). A piece past K (zero codes) takes SF 0,\n"
  "// not the row's padding SF bytes.\n"
  "// Both SFs of a piece in one register where NVF_SFPACK_ON (dequant_bf16.cuh, sm_89+) only where\n"
  "// PACK (the pre-pass kernel): packed, the producer warpgroups (56 registers) spilled in their\n"
  "// widening loop (the no-workspace path; ptxas 13.0, sm_90a: 12 bytes at 32 tokens, 28 at 128,\n"
  "// none now). gemm_wgmma.cu's staging keeps the same two-register form. Same-process A/B,\n"
  "// two rounds in both orders (bench/NOTES.md, twenty-ninth session, X44): without a workspace\n"
  "// -5.6 to +3.9 % (mean -0.8 %), with one -2.8 to +0.7 % (mean -0.5 %), layers -2.5 to +0.7 %.\n"
  "// Tuning runs: -DNVF_PPACK=1 packs everywhere (the form X39 and the twenty-eighth session's final\n"
  "// run measured).\n"
  "template <bool PACK = false, typename Dst>\n",
  "NVF_DEV void nvf_wg_widen_token(const uint4* q, const u32* sfw, int kel0, int k, Dst base) {\n"
  "#if defined(NVF_PPACK) && NVF_PPACK\n"
  "  constexpr bool pk = NVF_SFPACK_ON;\n"
  "#else\n"
  "  constexpr bool pk = PACK && NVF_SFPACK_ON;\n"
  "#endif\n"
  "  u32 s0[4], s1[4]; // pk: s0[t] holds both SFs of piece t\n"
  "  #pragma unroll\n"
  "  for (int t = 0; t < 4; ++t) {\n"
  "    const bool in = kel0 + 32 * t < k;\n"
  "    if (pk) s0[t] = nvf_sf2_to_bf16x2_packed(in \? sfw[t >> 1] >> (16 * (t & 1)) : 0u);\n"
  "    else nvf_sf2_to_bf16x2(in \? sfw[t >> 1] >> (16 * (t & 1)) : 0u, s0[t], s1[t]);\n"
  "  }\n"
  "  #pragma unroll\n"
  "  for (int j = 0; j < 4; ++j) {\n"
  "    u32 r[4][4];\n"
  "    #pragma unroll\n"
  "    for (int t = 0; t < 4; ++t) {\n"
  "      nvf_fp4x8_to_bf16x2((&q[t].x)[j], r[t]);\n"
  "      #pragma unroll\n"
  "      for (int pp = 0; pp < 4; ++pp)\n"
  "        r[t][pp] = !pk \? nvf_bf16x2_mul(r[t][pp], j < 2 \? s0[t] : s1[t])\n"
  "                 : j < 2 \? nvf_bf16x2_mul_half<0>(r[t][pp], s0[t]) : nvf_bf16x2_mul_half<1>(r[t][pp], s0[t]);\n"
  "    }\n"
  "    #pragma unroll\n"
  "    for (int pp = 0; pp < 4; ++pp)\n"
  "      nvf_st16_shared(base + (2 * j + (pp >> 1)) * (NVF_TOK * 32) + (pp & 1) * 128,\n"
  "                      make_uint4(r[0][pp], r[1][pp], r[2][pp], r[3][pp]));\n"
  "  }\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_gemm_wgmma_ws_cu[] = {
  "// gemm_wgmma_ws.cu -- masked grouped NVFP4 GEMM (NT) on Hopper with a token producer (sm_90a).\n"
  "//\n"
  "// Same contract and the same step as gemm_wgmma.cu (gemm_wgmma_step.cuh): swap-AB, each\n"
  "// consumer warpgroup streams 64 weight rows into registers, widens them there and issues wgmma\n"
  "// with A from registers (RS); NVF_TOK tokens (32, 48, 64 or 128) are B. What differs is the token\n"
  "// path. There every thread widens its part of the next K chunk of tokens between its MMAs and\n"
  "// the warpgroups meet at each chunk (13 % of the stall samples on that hand-off, the token path\n"
  "// a further 11-22 % of the time at 128 tokens: bench/NOTES.md, twelfth and fourteenth sessions).\n"
  "// Here one more, producer warpgroup widens the tokens into a ring of NVF_SLOTS shared-memory\n"
  "// slots (raw bytes through cp.async stages), up to NVF_SLOTS slots ahead, and the consumers only\n"
  "// wait for a slot's full barrier; setmaxnreg moves registers from the producer to the consumers.\n"
  "// 2-17 % faster than the same tiles without it on an H200 (bench/NOTES.md, fifteenth session).\n"
  "//\n"
  "// A slot holds NVF_SPS 128-K steps in the layout of nvf_wg_widen_token (as gemm_wgmma.cu's chunk\n"
  "// buffers). Hand-off per slot: full (every producer thread has stored and fenced its units) and\n"
  "// empty (every consumer warp has retired the MMAs that read the slot).\n"
  "//\n"
  "// With a workspace (p.tok_ws), nvf_ws_widen_tokens first widens every token step once, into\n"
  "// slot images in global memory, and one producer thread fills each slot with a single bulk copy\n"
  "// (full: the copy's bytes have landed). Without it, each of the N / NVF_ROWS CTAs of a group\n"
  "// widens the same tokens again: 15-23 % of the time at 128 tokens (bench/NOTES.md, seventeenth\n"
  "// session, probe 3).\n"
  "#include \"common.cuh\"\n"
  "#include \"gemm_common.cuh\"\n"
  "#include \"dequant_bf16.cuh\"\n"
  "#include \"ptx_wgmma.cuh\"\n"
  "#include \"ptx_tcgen05.cuh\" // mbarriers (sm_90+)\n"
  "\n"
  "#ifndef NVF_TOK\n"
  "#define NVF_TOK 128 // tokens per tile: the wgmma N (32, 48, 64 or 128)\n"
  "#endif\n"
  "#ifndef NVF_CWG\n"
  "#define NVF_CWG 3 // consumer warpgroups, 64 weight rows each (3 or 4)\n"
  "#endif\n"
  "#define NVF_THREADS (128 * (NVF_CWG + 1))\n"
  "#define NVF_ROWS (64 * NVF_CWG)\n"
  "#define NVF_STEP 128\n"
  "// K steps per slot: 128 tokens fill the producer's 128 threads with one step, fewer tokens\n"
  "// with two (units of one token and one step: 64, 96 or 128 of them)\n"
  "#if defined(NVF_WSPROBE) && NVF_WSPROBE == 54\n"
  "#define NVF_DEPTH 4 // (probe 5 with four steps in flight, below)\n"
  "#else\n"
  "#define NVF_DEPTH 2 // weight steps in flight per consumer thread (20 registers each)\n"
  "#endif\n"
  "#define NVF_SPS (NVF_TOK >= 128 \? 1 : 2)\n"
  "#define NVF_UNITS (NVF_TOK * NVF_SPS)\n"
  "#define NVF_B_MMA (NVF_TOK * 32)\n"
  "#define NVF_SLOT_BYTES (NVF_SPS * 8 * NVF_B_MMA) // 16, 24 or 32 KB\n"
  "#define NVF_SLOTS 6 // (fixed: the host sizes shared memory for 6 slots and 3 stages)\n"
  "#define NVF_TSTAGES 3                    // slots' worth of raw tokens in flight through cp.async\n"
  "#define NVF_STAGE_BYTES (NVF_UNITS * 72) // 64 bytes and 8 SFs a unit\n"
  "#define NVF_WS_SMEM (NVF_SLOTS * NVF_SLOT_BYTES + NVF_TSTAGES * NVF_STAGE_BYTES) // the host mirrors it\n"
  "// Producer registers after setmaxnreg; the consumers get the rest of the pool (152 each with\n"
  "// three, 104 with four). Spills in ptxas 13.0 (sm_90a) at 56: none at 128 and 48 tokens, 4\n"
  "// bytes at 64 (64 there: 64 bytes).\n"
  "#ifndef NVF_PREGS\n"
  "#define NVF_PREGS 56\n"
  "#endif\n"
  "// setmaxnreg moves registers within the CTA's pool, what the launch allocated: the register\n",
  "// count __launch_bounds__ gives (65536 / threads, a multiple of 8) for every thread. An\n"
  "// increase past the pool never completes (the first 640-thread build hung that way).\n"
  "#define NVF_LAUNCH_REGS (65536 / NVF_THREADS / 8 * 8)\n"
  "#define NVF_CREGS ((NVF_LAUNCH_REGS * NVF_THREADS / 128 - NVF_PREGS) / NVF_CWG / 8 * 8)\n"
  "static_assert(NVF_PREGS * 128 + NVF_CREGS * 128 * NVF_CWG <= NVF_LAUNCH_REGS * NVF_THREADS, \"register pool\");\n"
  "// NVF_EPI_SMEM (1 for tiles of up to 48 tokens): each consumer warp stages its results (16 weight rows x\n"
  "// NVF_TOK tokens, bf16) in shared memory with stmatrix (transposed: a token's 8 rows in one 16-byte row)\n"
  "// and writes D in whole 16-byte pieces, two lanes a 32-byte sector, instead of 16 scattered 2-byte stores\n"
  "// a thread (which cost 1.4 us a unit, 17 % of Qwen3 GEMM2 at 32 tokens: bench/NOTES.md, twenty-fifth\n"
  "// session, probe 4). NVF_TOK 32 bytes a warp after the raw token stages (after the slots with a workspace,\n"
  "// which has no stages); the host mirrors it. The 64- and 128-token tiles have no room (227 KB).\n"
  "#ifndef NVF_EPI_SMEM\n"
  "#define NVF_EPI_SMEM (NVF_TOK <= 48)\n"
  "#endif\n"
  "#define NVF_EPI_WARP_BYTES (NVF_TOK * 32)\n"
  "// NVF_EPI_REG (default where NVF_EPI_SMEM is off: the 64- and 128-token tiles): the same whole 16-byte\n"
  "// stores without shared memory, the transpose done in registers (movmatrix, then a 4 x 4 exchange within\n"
  "// each lane quad). The scattered stores cost 2-27 % of these tiles' time at 64-512 tokens (probe 4 on an\n"
  "// H100, bench/NOTES.md, thirty-third session, X60); this form took 0.6-11.9 % off (X61: Qwen3 GEMM2 at\n"
  "// m = 128 153.8 -> 137.8 us, about 40 % of probe 4's gain). At 16-32 tokens it ties with the shared-\n"
  "// memory staging (-3.5 to +1.4 %), which those tiles keep. -DNVF_EPI_REG=0: the scattered stores.\n"
  "#ifndef NVF_EPI_REG\n"
  "#define NVF_EPI_REG 1\n"
  "#endif\n"
  "static_assert(NVF_WS_SMEM + (NVF_EPI_SMEM \? 4 * NVF_CWG * NVF_EPI_WARP_BYTES : 0) <= 227 * 1024, \"shared memory\");\n"
  "static_assert(NVF_UNITS <= 128 && NVF_DEPTH % NVF_SPS == 0, \"units per producer pass, whole slots per round\");\n"
  "\n"
  "// -DNVF_VARN=1, the _varn twins (the host runs them where 0 < expected_m < m_max: masked_m varies):\n"
  "// a token tile that holds fewer than NVF_TOK tokens issues its MMAs with the smallest N of NVF_TOK,\n"
  "// NVF_TOK - NSTEP, - 2 NSTEP, - 3 NSTEP (NSTEP = NVF_TOK / 4 in whole 8s: 32 -> 32, 24, 16, 8; 48 -> 48,\n"
  "// 40, 32, 24; 64 -> 64, 48, 32, 16; 128 -> 128, 96, 64, 32) that holds them: the first N tokens of the\n"
  "// slot, into the accumulator's first N / 2 registers (a prefix of the NVF_TOK fragment). Each step\n"
  "// then waits for its own MMAs inside the branch, right after their commit: with MMAs of two branches\n"
  "// still pending where the branches join, ptxas serialises every wgmma of the kernel (C7512). That\n"
  "// wait costs up to 5-9 % where every tile is full (K <= 2048), so the plain kernels, which wait at\n"
  "// the next step's start, stay for full tiles (bench/NOTES.md, twenty-fourth session).\n"
  "#ifndef NVF_VARN\n"
  "#define NVF_VARN 0\n"
  "#endif\n"
  "#define NVF_NSTEP (NVF_TOK / 32 * 8 > 8 \? NVF_TOK / 32 * 8 : 8)\n"
  "\n"
  "// Timing-only probes (wrong results; bench/NOTES.md, seventeenth session): -DNVF_WSPROBE=1 the\n"
  "// consumers load and widen no weights (A is a constant), =2 also the producer copies and widens\n"
  "// no tokens (it only passes the barriers): what the RS wgmma loop with its waits and hand-offs\n"
  "// costs alone; =3 only the producer idles (the weights as always); =4 the consumers store no results\n",
  "// (what each unit's epilogue costs; timed with the scattered stores: with NVF_EPI_SMEM the probe build\n"
  "// spills and puts stmatrix under a per-thread branch, so time it with -DNVF_EPI_SMEM=0); =5 (resident tiles\n"
  "// only) the consumers load the weights as always but neither widen them nor issue MMAs (the loads are\n"
  "// folded into one register): what the weight stream's access pattern gets from DRAM at this depth; =6 (resident\n"
  "// 32-token tiles, results still right) a timeline: lane 0 of each consumer warp writes five %clock values a step\n"
  "// (words 0, 1: start, the previous step's MMAs retired; 4, 5, 6: this step's weights widened, the next loads\n"
  "// issued and, where the step opens a slot, its tokens in, its MMAs committed) for its first NVF_TRACE_STEPS\n"
  "// steps, as u32 [gridDim.x < 256][4 warpgroups][4 warps][NVF_TRACE_STEPS][8] just past D's last group (D +\n"
  "// groups m_max ldd elements: the caller allocates the room; tools/profile_kernels PROFILE_TRACE, tools/ws_trace.py).\n"
  "// The clocks and stores change the schedule (ptxas issues the weight loads a step earlier than in the plain\n"
  "// build): intervals, not exact costs.\n"
  "#ifndef NVF_WSPROBE\n"
  "#define NVF_WSPROBE 0\n"
  "#endif\n"
  "#define NVF_WSP_W (NVF_WSPROBE == 1 || NVF_WSPROBE == 2) // no weight path\n"
  "#define NVF_WSP_T (NVF_WSPROBE == 2 || NVF_WSPROBE == 3) // no token path\n"
  "#define NVF_TRACE (NVF_WSPROBE == 6 && NVF_CWG == 4 && NVF_TOK == 32) // probe 6's geometry, as the host reads it\n"
  "// =54: probe 5 with four weight steps in flight instead of two (without the widening the registers are\n"
  "// free): does the stream alone get more from DRAM with more bytes in flight\? (twenty-eighth session)\n"
  "#define NVF_WSP_5 (NVF_WSPROBE == 5 || NVF_WSPROBE == 54) // weights only\n"
  "#define NVF_TRACE_STEPS 128\n"
  "NVF_DEV u32 nvf_clock() {\n"
  "  u32 c;\n"
  "  asm volatile(\"mov.u32 %0, %%clock;\" : \"=r\"(c));\n"
  "  return c;\n"
  "}\n"
  "\n"
  "// NVF_PERSIST (1 for the 32-token tiles and, on TILED weights, the 48- and 64-token ones; the host's\n"
  "// nvfp4moe__ws_persist mirrors it; and the 128-token tile's resident twin, below): a resident grid (the host\n"
  "// launches at most one CTA per SM and sets p.tiles_m). Each CTA takes the work units u = blockIdx.x, + gridDim.x, .. (unit: group, row block,\n"
  "// token tile; the token tile fastest, as the one-CTA-a-unit grid's order) that hold tokens, and its\n"
  "// consumers load the next unit's first weight steps under the current unit's last ones, so the weight\n"
  "// stream does not drain and refill at each unit. On an H200 (bench/NOTES.md, twenty-fifth session, X27,\n"
  "// B25): 32 tokens -1.4 to -7.2 %, the Qwen3 layer -5.7 %; the 48-token tile also gains on full tiles\n"
  "// and on the Qwen3 and gpt-oss layers, but the DeepSeek-V3 layer lost 14-18 % under the old numbering:\n"
  "// one expert there has 49 tokens, and tiles_m (from expected_m) makes its units take two passes each,\n"
  "// dealt to a fixed set of CTAs that then finish late (thirty-third session, X65: units numbered without\n"
  "// gaps fix it, -6.4 % on the layer, but a per-thread cursor over the groups cost more elsewhere; a table\n"
  "// instead, thirty-fourth and thirty-fifth sessions: since 0.5.5 the TILED 48-token tile is resident with\n"
  "// the table, NVF_PCOMPACT below). On an H100 with the register epilogue (thirty-third\n"
  "// session, X62, X63): 64 tokens at m = 64 -1.6 to -17.9 % on four GEMMs (gpt-oss +1.6 %, -5.2 % in\n"
  "// X62), at Poisson(40) -0.2 to -15.5 %: resident. 128 tokens gains only where K is short (Qwen3 GEMM2,\n",
  "// K 768: -10.4 % at m = 128), and the resident-built code loses even on a one-CTA-a-unit grid where K\n"
  "// >= 2048 (DeepSeek-V3 GEMM2 +9.0 % at 128, +4.4 % at 512): not resident, but since 0.5.6 the host builds a\n"
  "// resident twin of its TILED _k256 modules (-DNVF_PERSIST=1) for K <= 1024 (thirty-sixth session, X72, H100:\n"
  "// Qwen3 GEMM2 -8.0 to -8.4 % at 128, 512 and Poisson(100) tokens; with the hoisted decode: against none there\n"
  "// -1.9 % at Poisson(100), within the noise at 128 and 512; at K 1536 and 2048 the twin on the resident grid\n"
  "// measured mixed, -3.6 to +2.6 %, X73). ROW_MAJOR weights keep\n"
  "// 0.5.2's rule: their 64-token tile built resident spills (48 bytes of stack on sm_90a) and was not\n"
  "// measured. Tuning runs: -DNVF_PERSIST=0/1 (every tile), -DNVF_PERSIST_T32 (0.5.2's rule: only the\n"
  "// 32-token tiles); the host parses both.\n"
  "// NVF_PCOMPACT: the resident grid's units numbered without gaps (nvf_ws_build_tab below; the host passes p.ptab\n"
  "// where the table fits). By default (0.5.5) only on the TILED 48-token tile, which it puts on the resident grid\n"
  "// (bench/NOTES.md, thirty-fifth session: at Poisson(33) tokens 2 to 16 % faster, where on the 32- and 64-token tiles\n"
  "// it bought nothing); tuning runs: 0 none (0.5.4's kernels, the 48-token tile not resident), 1 on every resident\n"
  "// tile but the 128-token one, 2 as 1 and the TILED 48-token tile resident.\n"
  "#ifdef NVF_PCOMPACT_PROBE // (thirty-fifth session, timing only, alone; the host builds the table: its define reads\n"
  "#define NVF_PCOMPACT 1    // \"NVF_PCOMPACT\") 1: the table built but not used (the old numbering); 2: used, without\n"
  "                          // the hoisted decode; other values as -DNVF_PCOMPACT=1\n"
  "#else\n"
  "#define NVF_PCOMPACT_PROBE 0\n"
  "#endif\n"
  "#ifndef NVF_PCOMPACT\n"
  "#define NVF_PCOMPACT_DEFAULT 1\n"
  "#define NVF_PCOMPACT (NVF_TOK == 48 \? 2 : 0)\n"
  "#else\n"
  "#define NVF_PCOMPACT_DEFAULT 0\n"
  "#endif\n"
  "// The consumers decode the next unit once, when a unit starts, and keep it (group, block, token tile) for the unit\n"
  "// after, instead of decoding it in the step loop's last round and again when it starts: on every resident tile\n"
  "// but the 64-token one, unless -DNVF_PCOMPACT=0 or -DNVF_PCOMPACT_PROBE=2; on all under -DNVF_WSNEXT=1, on none\n"
  "// under -DNVF_WSNEXT=-1 (tuning runs). Thirty-fifth session (X70, H100): the 32-token tile's step loop 476 -> 365\n"
  "// SASS instructions (stack 0 -> 8 bytes), 1.5-4.4 % faster at 32 tokens; the TILED 48-token tile's stack 0 -> 32\n"
  "// bytes (timed with it: X69's =2 arm); the 64-token tile's stack 8 -> 48 bytes and 3-4 % slower at 64: not there.\n"
  "#ifndef NVF_WSNEXT\n"
  "#define NVF_WSNEXT 0\n"
  "#endif\n"
  "#define NVF_WSNEXT_ON                                                                                                  \\\n"
  "  (NVF_WSNEXT > 0 || (NVF_WSNEXT == 0 && NVF_TOK != 64 && NVF_PCOMPACT_PROBE != 2 && (NVF_PCOMPACT_DEFAULT || NVF_PCOMPACT)))\n"
  "#ifndef NVF_PERSIST\n"
  "#if defined(NVF_PERSIST_T32) || !(defined(NVF_WTILED) && NVF_WTILED)\n"
  "#define NVF_PERSIST (NVF_TOK == 32)\n"
  "#else\n"
  "#define NVF_PERSIST (NVF_TOK == 32 || NVF_TOK == 64 || (NVF_PCOMPACT >= 2 && NVF_TOK == 48))\n"
  "#endif\n"
  "#endif\n"
  "\n"
  "// The 32-token tiles' weights by strong loads (nvf_ldg_weights: ptxas keeps them in their step);\n"
  "// the other tiles already issue them there.\n"
  "#define NVF_WSTRONG (NVF_TOK == 32)\n"
  "\n"
  "static_assert(NVF_TOK == 32 || NVF_TOK == 48 || NVF_TOK == 64 || NVF_TOK == 128, \"NVF_TOK must be 32, 48, 64 or 128\");\n"
  "#include \"gemm_wgmma_step.cuh\"\n"
  "\n",
  "// Unit u's token step s into its raw stage with cp.async, one commit group per slot (zero-filled\n"
  "// past K, past the steps and for a token past masked_m, whose copies name the 16-byte aligned\n"
  "// `dummy` and read nothing): piece q at stage + 16 (q UNITS + u), SF group h at stage + 64\n"
  "// UNITS + 4 (h UNITS + u), so a warp's copies and reads are conflict-free. Register loads would\n"
  "// not do: ptxas puts every load of a register pipeline on one scoreboard, so the first use of\n"
  "// step s + 1 would also wait for step s + 2 (bench/NOTES.md, fourteenth session).\n"
  "NVF_DEV void nvf_tp_issue(const u8* src, const u8* sf, const u8* dummy, int s, int nsteps, int k, u32 stage, int u) {\n"
  "  if (NVF_UNITS == 128 || u < NVF_UNITS) // threads past the units copy nothing (their commit groups are empty)\n"
  "  #pragma unroll\n"
  "  for (int q = 0; q < 4; ++q) {\n"
  "    const bool in = src && s < nsteps && s * NVF_STEP + 32 * q < k;\n"
  "    asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" ::\"r\"(stage + 16 * (q * NVF_UNITS + u)),\n"
  "                 \"l\"(in \? src + (i64)s * 64 + 16 * q : dummy), \"r\"(in \? 16 : 0) : \"memory\");\n"
  "  }\n"
  "  if (NVF_UNITS == 128 || u < NVF_UNITS)\n"
  "  #pragma unroll\n"
  "  for (int h = 0; h < 2; ++h) {\n"
  "    const bool in = src && s < nsteps && s * NVF_STEP + 64 * h < k;\n"
  "    asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4, %2;\" ::\"r\"(stage + 64 * NVF_UNITS + 4 * (h * NVF_UNITS + u)),\n"
  "                 \"l\"(in \? sf + (i64)s * 1024 + 512 * h : sf), \"r\"(in \? 4 : 0) : \"memory\");\n"
  "  }\n"
  "  asm volatile(\"cp.async.commit_group;\" ::: \"memory\");\n"
  "}\n"
  "\n"
  "// Widen unit u's raw token step s (in its stage) into a slot (dst: the unit's row in MMA 0).\n"
  "NVF_DEV void nvf_tp_widen(const u8* st, u32 dst, int s, int k, int u) {\n"
  "  uint4 q[4];\n"
  "  #pragma unroll\n"
  "  for (int t = 0; t < 4; ++t) q[t] = *(const uint4*)(st + 16 * (t * NVF_UNITS + u));\n"
  "  const u32 sfw[2] = {*(const u32*)(st + 64 * NVF_UNITS + 4 * u), *(const u32*)(st + 68 * NVF_UNITS + 4 * u)};\n"
  "  nvf_wg_widen_token(q, sfw, s * NVF_STEP, k, dst);\n"
  "}\n"
  "\n"
  "// Byte offset of unit (token n, step ss of the slot) in a slot (its row in MMA 0), as the\n"
  "// producer widens it and the pre-pass writes the slot images.\n"
  "NVF_DEV int nvf_slot_unit_offset(int n, int ss) { return ss * 8 * NVF_B_MMA + (n >> 3) * 256 + (n & 7) * 16; }\n"
  "\n"
  "// The next ring slot; the barrier phase flips each time the ring wraps.\n"
  "NVF_DEV void nvf_ring_next(int& slot, u32& phase) {\n"
  "  if (++slot == NVF_SLOTS) {\n"
  "    slot = 0;\n"
  "    phase ^= 1u;\n"
  "  }\n"
  "}\n"
  "\n"
  "// The step's MMAs with N = TN: fence, MMAs, commit, and with NVF_VARN the wait for them.\n"
  "template <int TN> NVF_DEV void nvf_ws_mmas_n(float* acc, const u32* a, u32 buf) {\n"
  "  nvf_wgmma_fence();\n"
  "  nvf_wg_mmas_n<TN>(acc, a, buf);\n"
  "  nvf_wgmma_commit();\n"
  "  if (NVF_VARN) nvf_wgmma_wait<0>();\n"
  "}\n"
  "// ... with N = NVF_TOK - sub NVF_NSTEP (sub 0 .. 3 with NVF_VARN, else 0; uniform in the CTA).\n"
  "NVF_DEV void nvf_ws_mmas(float* acc, const u32* a, u32 buf, int sub) {\n"
  "  if (NVF_VARN && sub == 3) nvf_ws_mmas_n<NVF_TOK - 3 * NVF_NSTEP>(acc, a, buf);\n"
  "  else if (NVF_VARN && sub == 2) nvf_ws_mmas_n<NVF_TOK - 2 * NVF_NSTEP>(acc, a, buf);\n"
  "  else if (NVF_VARN && sub == 1) nvf_ws_mmas_n<NVF_TOK - NVF_NSTEP>(acc, a, buf);\n"
  "  else nvf_ws_mmas_n<NVF_TOK>(acc, a, buf);\n"
  "}\n"
  "\n"
  "// The resident grid's work units. By default every (group, row block, token tile < tiles) is a unit and\n"
  "// CTAs skip those without tokens: an expert with more than tiles_m token tiles (tiles_m from expected_m)\n",
  "// then makes its units take two passes each, on a fixed set of CTAs that finish late (the 48-token tile's loss on the\n"
  "// DeepSeek-V3 layer). With p.ptab (the TILED 48-token tile by default, every resident tile but the 128-token\n"
  "// one under -DNVF_PCOMPACT=1 or 2; the table must fit) they are\n"
  "// numbered without gaps: one unit per (group g, row block, token tile holding tokens), the token tile\n"
  "// fastest, the groups in order; tab[g] (shared memory, groups + 1 ints after the staging areas: the host\n"
  "// adds them) counts the units before group g. Each CTA builds the table at its start (every thread loads masked_m\n"
  "// of its groups, then warp 0 scans them in place by shuffles, 32 groups a pass) and finds a unit's group from it\n"
  "// (nvf_ws_decode), so no thread carries a cursor over the groups (X65's cursor cost registers and serial\n"
  "// loads). Measured (bench/NOTES.md, thirty-fourth and thirty-fifth sessions, X66, X68-X70 on an H100, X67\n"
  "// on an H200): with the 48-token tile resident (=2) the DeepSeek-V3 layer -5.4 % / -2.5 %, the GEMMs at\n"
  "// Poisson(33) -2 to -16 %; on the 32- and 64-token tiles the table itself bought nothing (+-0.5 % at\n"
  "// Poisson(33)) and cost up to 3.5 % at Poisson(16) (Qwen3 GEMM2): so by default only on the 48-token tile.\n"
  "struct NvfWsUnit {\n"
  "  int g, blk, tt; // group, row block, first token tile\n"
  "};\n"
  "NVF_DEV void nvf_ws_build_tab(const NvfGemmParams& p, int* tab, int tiles, int nblocks) {\n"
  "  for (int g = threadIdx.x; g < p.groups; g += blockDim.x) // every thread loads: one load's latency, not one a pass\n"
  "    tab[g + 1] = min((nvf_valid_rows(p.masked_m, g, p.m_max) + NVF_TOK - 1) / NVF_TOK, tiles) * nblocks;\n"
  "  __syncthreads();\n"
  "  if (threadIdx.x >= 32) return;\n"
  "  const int lane = threadIdx.x;\n"
  "  int carry = 0;\n"
  "  if (lane == 0) tab[0] = 0;\n"
  "  for (int g0 = 0; g0 < p.groups; g0 += 32) { // in place, 32 groups a pass\n"
  "    const int g = g0 + lane;\n"
  "    int c = g < p.groups \? tab[g + 1] : 0;\n"
  "    #pragma unroll\n"
  "    for (int o = 1; o < 32; o <<= 1) {\n"
  "      const int x = __shfl_up_sync(0xffffffffu, c, o);\n"
  "      if (lane >= o) c += x;\n"
  "    }\n"
  "    if (g < p.groups) tab[g + 1] = carry + c;\n"
  "    carry += __shfl_sync(0xffffffffu, c, 31);\n"
  "  }\n"
  "}\n"
  "// Unit u's group, block and token tile. WARP: the whole warp calls it with the same u (the consumers and\n"
  "// the token producer), and the group is found by ballots: lane l tests the table at every 32nd group, then\n"
  "// at each group of the 32 that hold u (two shared-memory loads a thread); else (the workspace producer's\n"
  "// lone thread) by binary search. (A binary search a thread, twice a unit in the consumers, cost +1.2 to\n"
  "// +15.8 % at uniform 32 and 64 tokens, X66: Qwen3 GEMM2, K 768, has only six steps a unit.)\n"
  "template <bool WARP> NVF_DEV NvfWsUnit nvf_ws_decode(const NvfGemmParams& p, const int* tab, int u, int tiles, int nblocks) {\n"
  "  NvfWsUnit w;\n"
  "  if (!NVF_PCOMPACT || !p.ptab || NVF_PCOMPACT_PROBE == 1) {\n"
  "    w.g = u / (tiles * nblocks);\n"
  "    w.blk = u / tiles % nblocks;\n"
  "    w.tt = u % tiles;\n"
  "    return w;\n"
  "  }\n"
  "  int lo = 0;\n"
  "  if (WARP) {\n"
  "    const int lane = threadIdx.x & 31;\n"
  "    for (int base = 0;; base += 32 * 32) { // groups 32 c .. 32 c + 31 hold u: c = the boundaries 32 j <= u\n"
  "      const int h = base + 32 * (lane + 1);\n"
  "      const u32 b = __ballot_sync(0xffffffffu, h < p.groups && tab[h] <= u);\n"
  "      if (b != 0xffffffffu) {\n"
  "        lo = base + 32 * __popc(b);\n"
  "        break;\n"
  "      }\n"
  "    }\n"
  "    const int h = lo + lane + 1; // (lane 31 tests the next boundary: not <= u)\n",
  "    lo += __popc(__ballot_sync(0xffffffffu, h < p.groups && tab[h] <= u));\n"
  "  } else {\n"
  "    int hi = p.groups; // tab[lo] <= u < tab[hi]\n"
  "    while (hi - lo > 1) {\n"
  "      const int mid = (lo + hi) >> 1;\n"
  "      if (tab[mid] <= u) lo = mid;\n"
  "      else hi = mid;\n"
  "    }\n"
  "  }\n"
  "  const int r = u - tab[lo], nt = (tab[lo + 1] - tab[lo]) / nblocks; // the group's token tiles\n"
  "  w.g = lo;\n"
  "  w.blk = r / nt;\n"
  "  w.tt = r % nt;\n"
  "  return w;\n"
  "}\n"
  "\n"
  "// The first unit at or after u (stepping by the grid) whose token tile holds tokens, or -1.\n"
  "NVF_DEV int nvf_ws_unit(const NvfGemmParams& p, const int* tab, int u, int tiles, int nblocks) {\n"
  "  if (NVF_PCOMPACT && p.ptab && NVF_PCOMPACT_PROBE != 1) return u < tab[p.groups] \? u : -1;\n"
  "  for (; u < p.groups * nblocks * tiles; u += gridDim.x)\n"
  "    if ((u % tiles) * NVF_TOK < nvf_valid_rows(p.masked_m, u / (tiles * nblocks), p.m_max)) return u;\n"
  "  return -1;\n"
  "}\n"
  "\n"
  "// The rows of unit w's weight block a consumer thread reads: its rows rw, rw + 8 of the block; and unit u's.\n"
  "NVF_DEV NvfWgRows nvf_ws_rows(const NvfGemmParams& p, const NvfWsUnit& w, int rw, int t, int kc4) {\n"
  "  return nvf_wg_rows(p, w.g, w.blk * NVF_ROWS + rw, t, kc4);\n"
  "}\n"
  "NVF_DEV NvfWgRows nvf_ws_unit_rows(const NvfGemmParams& p, const int* tab, int u, int tiles, int nblocks, int rw, int t,\n"
  "                                   int kc4) {\n"
  "  return nvf_ws_rows(p, nvf_ws_decode<true>(p, tab, u, tiles, nblocks), rw, t, kc4);\n"
  "}\n"
  "\n"
  "// The warp's results D[g, tok0 + token, rw0 + row] (rows rw0 .. rw0 + 15: its rows r0 and r0 + 8 of the\n"
  "// m64nNk16 layout) through its staging area stg (NVF_EPI_WARP_BYTES): each value as nvf_store_swapab\n"
  "// computes it, packed in token pairs, stored by stmatrix .trans as one 16-byte row per (token, 8 rows)\n"
  "// at token 32 + 16 (half ^ token bit 2) (the swizzle spreads a matrix's 8 rows over all banks), then\n"
  "// read back a piece a lane and written whole; only tokens < valid and rows < N (N % 8 == 0: a piece is\n"
  "// all in or all out).\n"
  "// -DNVF_EPI_FOLD=1 (opt-in, tuning runs; fifty-third session): the widened operands' 2^-16 (F16: 2^-28) undone\n"
  "// on each token's scale (alpha * row_scale * 2^16, once a token) instead of on every accumulator: one multiply a\n"
  "// value fewer in the two epilogues below (net 32 a thread at 128 tokens: 64 go, 32 token scales gain one). The\n"
  "// same results: both round alpha * row_scale (s) once, then the exact product s * acc * 2^16 once (scaling by a\n"
  "// power of 2 is exact), except where one side's scaling overflows: s >= 2^112 (F16 2^100) here, |acc| >= 2^112\n"
  "// (F16 2^100) in the default (unreachable: |acc| is at most about 110 K).\n"
  "#ifndef NVF_EPI_FOLD\n"
  "#define NVF_EPI_FOLD 0\n"
  "#endif\n"
  "NVF_DEV float nvf_ws_tok_scale(float alpha, float rs) {\n"
  "  return NVF_EPI_FOLD \? __fmul_rn(__fmul_rn(alpha, rs), NVF_DEQ_SCALE2) : __fmul_rn(alpha, rs);\n"
  "}\n"
  "NVF_DEV float nvf_ws_out(float s, float acc) {\n"
  "  return NVF_EPI_FOLD \? __fmul_rn(s, acc) : __fmul_rn(s, __fmul_rn(acc, NVF_DEQ_SCALE2));\n"
  "}\n"
  "// The staging area's 16-byte row of (token tok, rows 8 h ..): halves swizzled by token bit 2.\n"
  "NVF_DEV u32 nvf_ws_epi_row(u32 stg, int tok, int h) { return stg + tok * 32 + 16 * (h ^ ((tok >> 2) & 1)); }\n"
  "\n"
  "NVF_DEV void nvf_ws_epilogue_smem(const NvfGemmParams& p, int g, int valid, float alpha, int tok0, int rw0, u32 stg,\n"
  "                                  int lane, const float* acc) {\n"
  "  const int t = lane & 3;\n"
  "  u32 v[NVF_TOK / 4]; // matrix 2j + h: tokens 8j .., rows 8h ..\n"
  "  #pragma unroll\n"
  "  for (int j = 0; j < NVF_TOK / 8; ++j) {\n",
  "    const int m = tok0 + 8 * j + 2 * t;\n"
  "    const float rs0 = p.row_scale && m < valid \? p.row_scale[(i64)g * p.m_max + m] : 1.0f;\n"
  "    const float rs1 = p.row_scale && m + 1 < valid \? p.row_scale[(i64)g * p.m_max + m + 1] : 1.0f;\n"
  "    const float s0 = nvf_ws_tok_scale(alpha, rs0), s1 = nvf_ws_tok_scale(alpha, rs1);\n"
  "    #pragma unroll\n"
  "    for (int h = 0; h < 2; ++h)\n"
  "      v[2 * j + h] = nvf_pack_bf16x2(nvf_ws_out(s0, acc[4 * j + 2 * h]), nvf_ws_out(s1, acc[4 * j + 2 * h + 1]));\n"
  "  }\n"
  "  __syncwarp(); // the last unit's reads of the area are done\n"
  "  #pragma unroll\n"
  "  for (int q = 0; q < NVF_TOK / 16; ++q) { // four matrices a stmatrix: lane k names row k % 8 of matrix k / 8\n"
  "    const int mi = 4 * q + (lane >> 3), tok = 8 * (mi >> 1) + (lane & 7), h = mi & 1;\n"
  "    asm volatile(\"stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\" ::\"r\"(nvf_ws_epi_row(stg, tok, h)),\n"
  "                 \"r\"(v[4 * q]), \"r\"(v[4 * q + 1]), \"r\"(v[4 * q + 2]), \"r\"(v[4 * q + 3]) : \"memory\");\n"
  "  }\n"
  "  __syncwarp();\n"
  "  #pragma unroll\n"
  "  for (int c = lane; c < 2 * NVF_TOK; c += 32) { // piece c: token c / 2, rows 8 (c % 2) ..\n"
  "    const int tok = c >> 1, h = c & 1, m = tok0 + tok;\n"
  "    if (m < valid && rw0 + 8 * h < p.n) {\n"
  "      uint4 x;\n"
  "      asm volatile(\"ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\" : \"=r\"(x.x), \"=r\"(x.y), \"=r\"(x.z), \"=r\"(x.w)\n"
  "                   : \"r\"(nvf_ws_epi_row(stg, tok, h)) : \"memory\");\n"
  "      *(uint4*)(p.d + ((i64)g * p.m_max + m) * p.ldd + rw0 + 8 * h) = x;\n"
  "    }\n"
  "  }\n"
  "}\n"
  "\n"
  "// An 8 x 8 b16 matrix in the mma fragment layout (lane l: row l / 4, columns 2 (l % 4) ..) transposed.\n"
  "NVF_DEV u32 nvf_movmatrix_trans(u32 x) {\n"
  "  u32 y;\n"
  "  asm volatile(\"movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\" : \"=r\"(y) : \"r\"(x));\n"
  "  return y;\n"
  "}\n"
  "\n"
  "// The same results as nvf_ws_epilogue_smem, with no staging area: the four matrices 4q .. 4q + 3 (tokens\n"
  "// 16q .., rows 8h ..: matrix 2j + h as there) are transposed by movmatrix, after which lane (l / 4, t) holds\n"
  "// word t (rows 8h + 2t, + 1) of token 8j + l / 4 of each; two butterfly exchanges within the lane quad (xor\n"
  "// 2: the off-diagonal 2 x 2 blocks, xor 1: within them) then give lane t all four words of matrix 4q + t,\n"
  "// one 16-byte piece of D (token 16q + 8 (t / 2) + l / 4, rows 8 (t % 2) ..), written whole.\n"
  "NVF_DEV void nvf_ws_epilogue_reg(const NvfGemmParams& p, int g, int valid, float alpha, int tok0, int rw0, int lane,\n"
  "                                 const float* acc) {\n"
  "  const int t = lane & 3;\n"
  "  const bool hi = (t & 2) != 0, lo = (t & 1) != 0;\n"
  "  #pragma unroll\n"
  "  for (int q = 0; q < NVF_TOK / 16; ++q) {\n"
  "    u32 a[4];\n"
  "    #pragma unroll\n"
  "    for (int jj = 0; jj < 2; ++jj) {\n"
  "      const int j = 2 * q + jj, m = tok0 + 8 * j + 2 * t;\n"
  "      const float rs0 = p.row_scale && m < valid \? p.row_scale[(i64)g * p.m_max + m] : 1.0f;\n"
  "      const float rs1 = p.row_scale && m + 1 < valid \? p.row_scale[(i64)g * p.m_max + m + 1] : 1.0f;\n"
  "      const float s0 = nvf_ws_tok_scale(alpha, rs0), s1 = nvf_ws_tok_scale(alpha, rs1);\n"
  "      #pragma unroll\n"
  "      for (int h = 0; h < 2; ++h)\n"
  "        a[2 * jj + h] = nvf_movmatrix_trans(nvf_pack_bf16x2(nvf_ws_out(s0, acc[4 * j + 2 * h]),\n"
  "                                                            nvf_ws_out(s1, acc[4 * j + 2 * h + 1])));\n"
  "    }\n"
  "    u32 r0 = __shfl_xor_sync(0xffffffffu, hi \? a[0] : a[2], 2), r1 = __shfl_xor_sync(0xffffffffu, hi \? a[1] : a[3], 2);\n"
  "    if (hi) { a[0] = r0; a[1] = r1; } else { a[2] = r0; a[3] = r1; }\n"
  "    r0 = __shfl_xor_sync(0xffffffffu, lo \? a[0] : a[1], 1);\n",
  "    r1 = __shfl_xor_sync(0xffffffffu, lo \? a[2] : a[3], 1);\n"
  "    if (lo) { a[0] = r0; a[2] = r1; } else { a[1] = r0; a[3] = r1; }\n"
  "    const int m = tok0 + 16 * q + 8 * (t >> 1) + (lane >> 2), n = rw0 + 8 * (t & 1);\n"
  "    if (m < valid && n < p.n) *(uint4*)(p.d + ((i64)g * p.m_max + m) * p.ldd + n) = make_uint4(a[0], a[1], a[2], a[3]);\n"
  "  }\n"
  "}\n"
  "\n"
  "template <bool WIDE> NVF_DEV void nvf_gemm_wgmma_ws_body(const NvfGemmParams& p) {\n"
  "  // NVF_SLOTS slots, NVF_TSTAGES raw token stages (none with a workspace), the warps' staged results (NVF_EPI_SMEM)\n"
  "  extern __shared__ __align__(128) u8 smem[];\n"
  "  __shared__ __align__(8) u64 bars[2 * NVF_SLOTS]; // full[s], then empty[s]\n"
  "  const int nblocks = (p.n + NVF_ROWS - 1) / NVF_ROWS;\n"
  "#if NVF_PERSIST\n"
  "  const int tiles = p.tiles_m; // token tiles per (group, block)\n"
  "  int* const tab = (int*)(smem + NVF_SLOTS * NVF_SLOT_BYTES + (p.tok_ws \? 0 : NVF_TSTAGES * NVF_STAGE_BYTES) +\n"
  "                          (NVF_EPI_SMEM \? 4 * NVF_CWG * NVF_EPI_WARP_BYTES : 0)); // p.ptab: units before each group\n"
  "  if (NVF_PCOMPACT && p.ptab) nvf_ws_build_tab(p, tab, tiles, nblocks);\n"
  "#if !NVF_PCOMPACT\n"
  "  const int u0 = nvf_ws_unit(p, tab, blockIdx.x, tiles, nblocks);\n"
  "  if (u0 < 0) return; // no unit with tokens for this CTA\n"
  "#endif\n"
  "#else\n"
  "  const int tiles = gridDim.x / (p.groups * nblocks); // token tiles per (group, block)\n"
  "  const int tt = blockIdx.x % tiles, gb = blockIdx.x / tiles, g = gb / nblocks, bx = gb % nblocks;\n"
  "  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);\n"
  "  if (tt * NVF_TOK >= valid) return; // no tokens for this tile: the weights are not read\n"
  "#endif\n"
  "  const int kc4 = (p.k / 16 + 3) / 4, nsteps = (p.k + NVF_STEP - 1) / NVF_STEP;\n"
  "  const u32 sbase = nvf_smem_u32(smem), full0 = nvf_smem_u32(bars), empty0 = full0 + 8u * NVF_SLOTS;\n"
  "  if (threadIdx.x == 0) {\n"
  "    #pragma unroll\n"
  "    for (int b = 0; b < NVF_SLOTS; ++b) {\n"
  "      nvf_mbar_init(full0 + 8u * b, p.tok_ws \? 1 : 128); // one bulk copy, or every producer thread\n"
  "      nvf_mbar_init(empty0 + 8u * b, 4 * NVF_CWG);\n"
  "    }\n"
  "    if (p.tok_ws) nvf_fence_mbar_init(); // the inits visible to the bulk copies' complete_tx (async proxy)\n"
  "  }\n"
  "  __syncthreads(); // (and the unit table built)\n"
  "#if NVF_PERSIST && NVF_PCOMPACT\n"
  "  const int u0 = nvf_ws_unit(p, tab, blockIdx.x, tiles, nblocks);\n"
  "  if (u0 < 0) return; // no unit with tokens for this CTA\n"
  "#endif\n"
  "\n"
  "  if (threadIdx.x >= 128 * NVF_CWG && p.tok_ws) {\n"
  "    // ---- producer with a workspace: thread 0 copies the tile's slot images, one bulk copy a slot\n"
  "    asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %0;\" ::\"n\"(NVF_PREGS));\n"
  "    if (threadIdx.x != 128 * NVF_CWG) return;\n"
  "    const int nslots = (nsteps + NVF_SPS - 1) / NVF_SPS;\n"
  "    int slot = 0;\n"
  "    u32 phase = 1; // as below\n"
  "    const u64 keep = NVF_WHINT \? nvf_policy_evict_last() : 0; // (-DNVF_WHINT=1: gemm_common.cuh)\n"
  "#if NVF_PERSIST\n"
  "    for (int u = u0; u >= 0; u = nvf_ws_unit(p, tab, u + gridDim.x, tiles, nblocks)) {\n"
  "      const NvfWsUnit w = nvf_ws_decode<false>(p, tab, u, tiles, nblocks);\n"
  "      const int tt = w.tt, g = w.g, valid = nvf_valid_rows(p.masked_m, g, p.m_max);\n"
  "#endif\n"
  "    const u8* img = p.tok_ws + (i64)g * ((p.m_max + NVF_TOK - 1) / NVF_TOK) * nslots * NVF_SLOT_BYTES;\n"
  "    for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {\n"
  "      const u8* src = img + (i64)(tok0 / NVF_TOK) * nslots * NVF_SLOT_BYTES;\n"
  "      for (int f = 0; f < nslots; ++f) {\n"
  "        nvf_mbar_wait(empty0 + 8u * slot, phase);\n",
  "        nvf_mbar_expect_tx(full0 + 8u * slot, NVF_SLOT_BYTES);\n"
  "        if (NVF_WHINT)\n"
  "          nvf_bulk_load_hint(sbase + slot * NVF_SLOT_BYTES, src + (i64)f * NVF_SLOT_BYTES, NVF_SLOT_BYTES, full0 + 8u * slot,\n"
  "                             keep);\n"
  "        else\n"
  "          nvf_bulk_load(sbase + slot * NVF_SLOT_BYTES, src + (i64)f * NVF_SLOT_BYTES, NVF_SLOT_BYTES, full0 + 8u * slot);\n"
  "        nvf_ring_next(slot, phase);\n"
  "      }\n"
  "    }\n"
  "#if NVF_PERSIST\n"
  "    }\n"
  "#endif\n"
  "    return;\n"
  "  }\n"
  "  if (threadIdx.x >= 128 * NVF_CWG) {\n"
  "    // ---- producer: unit pt = (token pt % TOK, step pt / TOK of each slot), raw through cp.async\n"
  "    // stages, widened into the ring; threads past the units only pass the barriers\n"
  "    asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %0;\" ::\"n\"(NVF_PREGS));\n"
  "    const int pt = threadIdx.x - 128 * NVF_CWG, n = NVF_SPS == 1 \? pt : pt % NVF_TOK, ss = NVF_SPS == 1 \? 0 : pt / NVF_TOK;\n"
  "    const bool live = NVF_UNITS == 128 || pt < NVF_UNITS;\n"
  "    const int nslots = (nsteps + NVF_SPS - 1) / NVF_SPS; // slot fills per token tile\n"
  "    const u32 stage0 = sbase + NVF_SLOTS * NVF_SLOT_BYTES;\n"
  "    const u32 dst0 = nvf_slot_unit_offset(n, ss);\n"
  "    int slot = 0, st = 0; // ring slot, raw stage of the fill\n"
  "    u32 phase = 1;        // empty: the phase before a fresh barrier's first counts as completed\n"
  "#if NVF_PERSIST\n"
  "    for (int u = u0; u >= 0; u = nvf_ws_unit(p, tab, u + gridDim.x, tiles, nblocks)) {\n"
  "      const NvfWsUnit w = nvf_ws_decode<true>(p, tab, u, tiles, nblocks);\n"
  "      const int tt = w.tt, g = w.g, valid = nvf_valid_rows(p.masked_m, g, p.m_max);\n"
  "#endif\n"
  "    const u8* a_g = p.a + (i64)g * p.m_max * (p.k / 2);\n"
  "    const u8* asf_g = p.a_sf + g * nvf_sf_group_bytes_128x4(p.m_max, p.k);\n"
  "    for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {\n"
  "      const int m = tok0 + n;\n"
  "      const u8* src = live && m < valid \? a_g + (i64)m * (p.k / 2) : 0;\n"
  "      const u8* sf = asf_g + nvf_sf_offset_128x4(m < valid \? m : 0, 0, kc4);\n"
  "      #pragma unroll\n"
  "      for (int d = 0; d < NVF_TSTAGES - 1; ++d)\n"
  "        if (!NVF_WSP_T) nvf_tp_issue(src, sf, p.a, d * NVF_SPS + ss, nsteps, p.k, stage0 + ((st + d) % NVF_TSTAGES) * NVF_STAGE_BYTES, pt);\n"
  "      for (int f = 0; f < nslots; ++f) {\n"
  "        if (!NVF_WSP_T) nvf_tp_issue(src, sf, p.a, (f + NVF_TSTAGES - 1) * NVF_SPS + ss, nsteps, p.k,\n"
  "                     stage0 + (st == 0 \? NVF_TSTAGES - 1 : st - 1) * NVF_STAGE_BYTES, pt); // the stage read last fill\n"
  "        nvf_mbar_wait(empty0 + 8u * slot, phase);\n"
  "        asm volatile(\"cp.async.wait_group %0;\" ::\"n\"(NVF_TSTAGES - 1) : \"memory\"); // fill f has landed\n"
  "        if (live && !NVF_WSP_T)\n"
  "          nvf_tp_widen(smem + NVF_SLOTS * NVF_SLOT_BYTES + st * NVF_STAGE_BYTES, sbase + slot * NVF_SLOT_BYTES + dst0,\n"
  "                       f * NVF_SPS + ss, p.k, pt);\n"
  "        nvf_fence_proxy_async();\n"
  "        nvf_mbar_arrive(full0 + 8u * slot);\n"
  "        nvf_ring_next(slot, phase);\n"
  "        if (++st == NVF_TSTAGES) st = 0;\n"
  "      }\n"
  "      asm volatile(\"cp.async.wait_group 0;\" ::: \"memory\"); // the zero fills past the tile's steps land first\n"
  "    }\n"
  "#if NVF_PERSIST\n"
  "    }\n"
  "#endif\n"
  "    return;\n"
  "  }\n"
  "\n"
  "  // ---- consumers: gemm_wgmma.cu's step, B from the ring ----\n"
  "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 %0;\" ::\"n\"(NVF_CREGS));\n"
  "  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, wg = threadIdx.x >> 7, t = lane & 3;\n"
  "  int slot = 0;\n"
  "  u32 phase = 0;\n",
  "  const u32 epi0 = sbase + NVF_SLOTS * NVF_SLOT_BYTES + (p.tok_ws \? 0 : NVF_TSTAGES * NVF_STAGE_BYTES); // NVF_EPI_SMEM\n"
  "#if NVF_PERSIST\n"
  "  const int rw = wg * 64 + warp * 16 + (lane >> 2); // the thread's weight rows in a block: rw, rw + 8\n"
  "  const int nsteps_e = (nsteps + NVF_DEPTH - 1) / NVF_DEPTH * NVF_DEPTH; // the step loop's length (whole rounds)\n"
  "  int u = u0;\n"
  "  u32* trace = NVF_TRACE \? (u32*)(p.d + (i64)p.groups * p.m_max * p.ldd) + (((i64)blockIdx.x * 4 + wg) * 4 + warp) * NVF_TRACE_STEPS * 8 : 0;\n"
  "  int tstep = blockIdx.x < 256 \? 0 : NVF_TRACE_STEPS; // (probe 6) steps traced; none past the caller's 256 CTAs\n"
  "#if NVF_WSNEXT_ON\n"
  "  NvfWsUnit w = nvf_ws_decode<true>(p, tab, u, tiles, nblocks); // the unit's; then the next one's, decoded below\n"
  "  NvfWgRows wr = nvf_ws_rows(p, w, rw, t, kc4);\n"
  "#else\n"
  "  NvfWgRows wr = nvf_ws_unit_rows(p, tab, u, tiles, nblocks, rw, t, kc4);\n"
  "#endif\n"
  "  uint4 wq[NVF_DEPTH][2];\n"
  "  u32 ws[NVF_DEPTH][2];\n"
  "  #pragma unroll\n"
  "  for (int d = 0; d < NVF_DEPTH; ++d)\n"
  "    if (!NVF_WSP_W) nvf_wg_load<WIDE>(wr, nvf_wg_step_in<false>(d, nsteps), nsteps, p.k, wq[d], ws[d]);\n"
  "  while (u >= 0) {\n"
  "#if !NVF_WSNEXT_ON\n"
  "    const NvfWsUnit w = nvf_ws_decode<true>(p, tab, u, tiles, nblocks);\n"
  "#endif\n"
  "    const int tt = w.tt, g = w.g, r0 = w.blk * NVF_ROWS + rw;\n"
  "    const int valid = nvf_valid_rows(p.masked_m, g, p.m_max);\n"
  "    const float alpha = p.alpha \? p.alpha[g] : 1.0f;\n"
  "    const int un = nvf_ws_unit(p, tab, u + gridDim.x, tiles, nblocks); // the next unit, whose first steps load here\n"
  "#if NVF_WSNEXT_ON\n"
  "    const NvfWsUnit wn = un >= 0 \? nvf_ws_decode<true>(p, tab, un, tiles, nblocks) : w;\n"
  "#endif\n"
  "#else\n"
  "  const int r0 = bx * NVF_ROWS + wg * 64 + warp * 16 + (lane >> 2); // weight rows r0, r0 + 8\n"
  "  const NvfWgRows wr = nvf_wg_rows(p, g, r0, t, kc4);\n"
  "  const float alpha = p.alpha \? p.alpha[g] : 1.0f;\n"
  "#endif\n"
  "  for (int tok0 = tt * NVF_TOK; tok0 < valid; tok0 += tiles * NVF_TOK) {\n"
  "    int sub = 0; // the smaller N this tile's tokens fit\n"
  "    while (NVF_VARN && sub < 3 && valid - tok0 <= NVF_TOK - (sub + 1) * NVF_NSTEP) ++sub;\n"
  "    float acc[NVF_TOK / 2];\n"
  "    #pragma unroll\n"
  "    for (int e = 0; e < NVF_TOK / 2; ++e) acc[e] = 0.0f;\n"
  "#if NVF_PERSIST\n"
  "    const bool last = tok0 + tiles * NVF_TOK >= valid; // the unit's last token tile: the loads ahead are the next unit's\n"
  "#else\n"
  "    uint4 wq[NVF_DEPTH][2];\n"
  "    u32 ws[NVF_DEPTH][2];\n"
  "    #pragma unroll\n"
  "    for (int d = 0; d < NVF_DEPTH; ++d)\n"
  "      if (!NVF_WSP_W) nvf_wg_load<WIDE>(wr, nvf_wg_step_in<false>(d, nsteps), nsteps, p.k, wq[d], ws[d]);\n"
  "#endif\n"
  "    // One set of widened weights (see gemm_wgmma.cu: a second set had its registers reused\n"
  "    // under a pending wgmma), so every step first waits for all earlier MMAs.\n"
  "    u32 a[32];\n"
  "    if (NVF_WSP_W)\n"
  "      #pragma unroll\n"
  "      for (int i = 0; i < 32; ++i) a[i] = 0x3C003C00u + (u32)(lane & 3) + 8u * (u32)i; // probe: any values\n"
  "    int prev = -1; // slot of the step in flight\n"
  "#if NVF_PERSIST\n"
  "    // Each step refills its slot d of wq[] with step s + DEPTH - ldoff of wr (ldn steps; 0: none, zeros).\n"
  "    // The rounds of DEPTH steps keep d = step % DEPTH, so the last round, past this tile's steps by a\n"
  "    // whole round, loads the next tile's first steps: this unit's next token tile, or the next unit's.\n"
  "    int ldoff = 0, ldn = nsteps;\n"
  "    u32 fold = 0; // (probe 5)\n"
  "    for (int s0 = 0; s0 < nsteps; s0 += NVF_DEPTH) {\n"
  "      if (s0 + NVF_DEPTH >= nsteps_e) { // the last round\n"
  "        ldoff = nsteps_e;\n"
  "#if NVF_WSNEXT_ON\n",
  "        if (last && un >= 0) wr = nvf_ws_rows(p, wn, rw, t, kc4);\n"
  "#else\n"
  "        if (last && un >= 0) wr = nvf_ws_unit_rows(p, tab, un, tiles, nblocks, rw, t, kc4);\n"
  "#endif\n"
  "        if (last && un < 0) ldn = 0;\n"
  "      }\n"
  "      #pragma unroll\n"
  "      for (int d = 0; d < NVF_DEPTH; ++d) {\n"
  "        const int s = s0 + d;\n"
  "        u32 c1 = 0, c2 = 0; // (probe 6)\n"
  "        if (s < nsteps) {\n"
  "          const u32 c0 = NVF_TRACE \? nvf_clock() : 0u;\n"
  "          if (!NVF_VARN) nvf_wgmma_wait<0>(); // step s - 1, the last reader of a[] (and of its slot if it ended one), is done\n"
  "          if (NVF_TRACE) { // stored at once: no clock stays live over the step\n"
  "            const u32 c4 = nvf_clock();\n"
  "            if (lane == 0 && tstep < NVF_TRACE_STEPS) *(uint2*)(trace + 8 * tstep) = make_uint2(c0, c4);\n"
  "          }\n"
  "          if (s % NVF_SPS == 0 && prev >= 0 && lane == 0) nvf_mbar_arrive(empty0 + 8u * prev);\n"
  "          if (NVF_WSP_5)\n"
  "            fold ^= wq[d][0].x ^ wq[d][0].y ^ wq[d][0].z ^ wq[d][0].w ^ wq[d][1].x ^ wq[d][1].y ^ wq[d][1].z ^ wq[d][1].w ^\n"
  "                    ws[d][0] ^ ws[d][1];\n"
  "          else if (!NVF_WSP_W) {\n"
  "            nvf_dequant_piece<NVF_WT_ENC>(wq[d][0], ws[d][0], a);\n"
  "            nvf_dequant_piece<NVF_WT_ENC>(wq[d][1], ws[d][1], a + 16);\n"
  "          }\n"
  "          if (NVF_TRACE) {\n"
  "            #pragma unroll\n"
  "            for (int i = 0; i < 32; ++i) asm volatile(\"\" : \"+r\"(a[i])); // the widening is done before the clock is read\n"
  "            c2 = nvf_clock();\n"
  "          }\n"
  "        }\n"
  "        // (zeros past ldn; under NVF_WKFULL a step in bounds, past ldn a re-read)\n"
  "        if (!NVF_WSP_W) nvf_wg_load<WIDE>(wr, nvf_wg_step_in<false>(s + NVF_DEPTH - ldoff, nsteps), ldn, p.k, wq[d], ws[d]);\n"
  "        if (s < nsteps) {\n"
  "          const bool first = s % NVF_SPS == 0; // the step opens a slot (d % SPS: known at compile time)\n"
  "          const u32 buf = sbase + slot * NVF_SLOT_BYTES + (s % NVF_SPS) * 8 * NVF_B_MMA;\n"
  "          if (first) nvf_mbar_wait(full0 + 8u * slot, phase); // the slot's tokens are in\n"
  "          if (NVF_TRACE) c1 = nvf_clock();\n"
  "          if (!NVF_WSP_5) nvf_ws_mmas(acc, a, buf, sub); // fence, MMAs, commit\n"
  "          if (NVF_TRACE) {\n"
  "            const u32 c3 = nvf_clock();\n"
  "            if (lane == 0 && tstep < NVF_TRACE_STEPS) *(uint4*)(trace + 8 * tstep + 4) = make_uint4(c2, c1, c3, 0u);\n"
  "            ++tstep;\n"
  "          }\n"
  "          if (s % NVF_SPS == NVF_SPS - 1 || s == nsteps - 1) { // the slot's last step: the next opens the next slot\n"
  "            prev = slot;\n"
  "            nvf_ring_next(slot, phase);\n"
  "          }\n"
  "        }\n"
  "      }\n"
  "    }\n"
  "    if (NVF_WSP_5) acc[0] = __uint_as_float(fold & 0x3F7FFFFFu); // the loads are not dead\n"
  "#else\n"
  "    // (the one-CTA-a-unit step as it was measured: folding it into the form above changes these kernels' SASS,\n"
  "    // with the load moved out of the step's branch, and they were not timed that way)\n"
  "    for (int s0 = 0; s0 < nsteps; s0 += NVF_DEPTH) {\n"
  "      #pragma unroll\n"
  "      for (int d = 0; d < NVF_DEPTH; ++d) {\n"
  "        const int s = s0 + d;\n"
  "        if (s < nsteps) {\n"
  "          if (!NVF_VARN) nvf_wgmma_wait<0>(); // step s - 1, the last reader of a[] (and of its slot if it ended one), is done\n"
  "          const bool first = s % NVF_SPS == 0; // the step opens a slot (d % SPS: known at compile time)\n"
  "          if (first && prev >= 0 && lane == 0) nvf_mbar_arrive(empty0 + 8u * prev);\n"
  "          if (!NVF_WSP_W) {\n"
  "            nvf_dequant_piece<NVF_WT_ENC>(wq[d][0], ws[d][0], a);\n",
  "            nvf_dequant_piece<NVF_WT_ENC>(wq[d][1], ws[d][1], a + 16);\n"
  "            nvf_wg_load<WIDE>(wr, nvf_wg_step_in<true>(s + NVF_DEPTH, nsteps), nsteps, p.k, wq[d], ws[d]);\n"
  "          }\n"
  "          const u32 buf = sbase + slot * NVF_SLOT_BYTES + (s % NVF_SPS) * 8 * NVF_B_MMA;\n"
  "          if (first) nvf_mbar_wait(full0 + 8u * slot, phase); // the slot's tokens are in\n"
  "          nvf_ws_mmas(acc, a, buf, sub); // fence, MMAs, commit\n"
  "          if (s % NVF_SPS == NVF_SPS - 1 || s == nsteps - 1) { // the slot's last step: the next opens the next slot\n"
  "            prev = slot;\n"
  "            nvf_ring_next(slot, phase);\n"
  "          }\n"
  "        }\n"
  "      }\n"
  "    }\n"
  "#endif\n"
  "    nvf_wgmma_wait<0>();\n"
  "    if (lane == 0) nvf_mbar_arrive(empty0 + 8u * prev);\n"
  "    #pragma unroll\n"
  "    for (int e = 0; e < NVF_TOK / 2; ++e) nvf_reg_fence(acc[e]);\n"
  "\n"
  "    if (NVF_WSPROBE != 4 || acc[0] == -1.2345e-38f) { // (probe 4: no epilogue stores)\n"
  "      if (NVF_EPI_SMEM) // D[g, m, n] for m < valid, n < N\n"
  "        nvf_ws_epilogue_smem(p, g, valid, alpha, tok0, r0 - (lane >> 2), epi0 + (4 * wg + warp) * NVF_EPI_WARP_BYTES, lane, acc);\n"
  "      else if (NVF_EPI_REG)\n"
  "        nvf_ws_epilogue_reg(p, g, valid, alpha, tok0, r0 - (lane >> 2), lane, acc);\n"
  "      else\n"
  "        nvf_wg_epilogue(p, g, valid, alpha, tok0, r0, t, acc);\n"
  "    }\n"
  "  }\n"
  "#if NVF_PERSIST\n"
  "    u = un; // (wr is the next unit's rows already: its last round set it)\n"
  "#if NVF_WSNEXT_ON\n"
  "    w = wn;\n"
  "#endif\n"
  "  }\n"
  "#endif\n"
  "}\n"
  "\n"
  "// nvf_gemm_wgmma_ws and nvf_gemm_wgmma_ws_l2, or nvf_gemm_wgmma_ws_tiled (gemm_common.cuh)\n"
  "NVF_GEMM_ENTRY_POINTS(nvf_gemm_wgmma_ws, nvf_gemm_wgmma_ws_body, NVF_THREADS, 1)\n"
  "\n"
  "// The token pre-pass of a GEMM with a workspace: every token step widened once, into the slot\n"
  "// images the producer above copies. Image f (slot fill f, steps f NVF_SPS ..) of token tile T of\n"
  "// group g at p.tok_ws + ((g tiles_m + T) nslots + f) NVF_SLOT_BYTES, tiles_m = ceil(m_max /\n"
  "// NVF_TOK), nslots = ceil(steps / NVF_SPS): the host's nvfp4moe__tok_ws_bytes. Tokens past\n"
  "// masked_m are not written (since 0.5.13; -DNVF_WIDEN_SKIP=0 writes zeros, as before); a valid\n"
  "// token's steps past K are zeros. 128 threads, one unit (token, step of the image) each, as the\n"
  "// producer's; CTA x = (g nslots + f) ytiles + y takes tiles T = y, y + ytiles, .. below masked_m.\n"
  "extern \"C\" __global__ void __launch_bounds__(128) nvf_ws_widen_tokens(const NvfGemmParams p, int ytiles) {\n"
  "  nvf_pdl_enter();\n"
  "  const int pt = threadIdx.x, n = NVF_SPS == 1 \? pt : pt % NVF_TOK, ss = NVF_SPS == 1 \? 0 : pt / NVF_TOK;\n"
  "  if (NVF_UNITS < 128 && pt >= NVF_UNITS) return;\n"
  "  const int nsteps = (p.k + NVF_STEP - 1) / NVF_STEP, nslots = (nsteps + NVF_SPS - 1) / NVF_SPS, kc4 = (p.k / 16 + 3) / 4;\n"
  "  const int y = blockIdx.x % ytiles, gf = blockIdx.x / ytiles, g = gf / nslots, f = gf % nslots, s = f * NVF_SPS + ss;\n"
  "  const int valid = nvf_valid_rows(p.masked_m, g, p.m_max), tiles_m = (p.m_max + NVF_TOK - 1) / NVF_TOK;\n"
  "  for (int tile = y; tile * NVF_TOK < valid; tile += ytiles) {\n"
  "    const int m = tile * NVF_TOK + n;\n"
  "#if !defined(NVF_WIDEN_SKIP) || NVF_WIDEN_SKIP // a row past masked_m feeds only its own MMA column\n"
  "    if (m >= valid) continue;                  // (whatever its slot holds), which the epilogue never stores\n"
  "#endif\n"
  "    uint4 q[4];\n"
  "    u32 sfw[2] = {0u, 0u};\n"
  "    #pragma unroll\n"
  "    for (int t = 0; t < 4; ++t) q[t] = make_uint4(0, 0, 0, 0);\n"
  "    if (m < valid && s < nsteps) { // else zeros: a step past K (or, under -DNVF_WIDEN_SKIP=0, a\n",
  "                                   // padding row, whose SF bytes may be NaN)\n"
  "      const u8* src = p.a + ((i64)g * p.m_max + m) * (p.k / 2) + (i64)s * 64;\n"
  "      const u8* sf = p.a_sf + g * nvf_sf_group_bytes_128x4(p.m_max, p.k) + nvf_sf_offset_128x4(m, 0, kc4) + (i64)s * 1024;\n"
  "      #pragma unroll\n"
  "      for (int t = 0; t < 4; ++t)\n"
  "        if (s * NVF_STEP + 32 * t < p.k) q[t] = __ldg((const uint4*)(src + 16 * t));\n"
  "      #pragma unroll\n"
  "      for (int h = 0; h < 2; ++h)\n"
  "        if (s * NVF_STEP + 64 * h < p.k) sfw[h] = __ldg((const u32*)(sf + 512 * h));\n"
  "    }\n"
  "    u8* dst = p.tok_ws + (((i64)g * tiles_m + tile) * nslots + f) * NVF_SLOT_BYTES + nvf_slot_unit_offset(n, ss);\n"
  "    nvf_wg_widen_token<true>(q, sfw, s * NVF_STEP, p.k, dst);\n"
  "  }\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_ptx_mma_cuh[] = {
  "// ptx_mma.cuh -- warp-level tensor-core wrappers (sm_80+): ldmatrix and mma.sync.\n"
  "#pragma once\n"
  "#include \"common.cuh\"\n"
  "\n"
  "NVF_DEV u32 nvf_smem_addr(const void* p) { return (u32)__cvta_generic_to_shared(p); }\n"
  "\n"
  "NVF_DEV void nvf_ldmatrix_x4(u32 addr, u32& r0, u32& r1, u32& r2, u32& r3) {\n"
  "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\"\n"
  "               : \"=r\"(r0), \"=r\"(r1), \"=r\"(r2), \"=r\"(r3) : \"r\"(addr));\n"
  "}\n"
  "\n"
  "// D += A(16x16, row) * B(16x8, col), f16 inputs (the swap-AB tiles on TILED weights: NVF_F16, common.cuh).\n"
  "NVF_DEV void nvf_mma_f16_16816(float* d, const u32* a, u32 b0, u32 b1) {\n"
  "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 \"\n"
  "               \"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b0), \"r\"(b1));\n"
  "}\n"
  "// D += A(16x16, row) * B(16x8, col), bf16 inputs, f32 accumulators.\n"
  "NVF_DEV void nvf_mma_bf16_16816(float* d, const u32* a, u32 b0, u32 b1) {\n"
  "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 \"\n"
  "               \"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b0), \"r\"(b1));\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_ptx_tcgen05_cuh[] = {
  "// ptx_tcgen05.cuh -- thin wrappers for the SM100 (sm_100a / sm_103a) instructions the\n"
  "// native GEMM uses: mbarriers, TMA and bulk copies, and the tcgen05 family (TMEM\n"
  "// allocation, SF copies into TMEM, block-scaled MMA, commit, TMEM loads, fences).\n"
  "// Forms and operand orders follow the PTX ISA 9.0 (tcgen05 section); see\n"
  "// ../shared/reference/sm100_tcgen05.md of the project for the sources.\n"
  "#pragma once\n"
  "#include \"common.cuh\"\n"
  "\n"
  "NVF_DEV u32 nvf_smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }\n"
  "\n"
  "// ---- mbarriers ------------------------------------------------------------------------\n"
  "NVF_DEV void nvf_mbar_init(u32 bar, u32 count) {\n"
  "  asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" ::\"r\"(bar), \"r\"(count) : \"memory\");\n"
  "}\n"
  "NVF_DEV void nvf_fence_mbar_init() { asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\"); }\n"
  "NVF_DEV void nvf_mbar_expect_tx(u32 bar, u32 bytes) {\n"
  "  asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" ::\"r\"(bar), \"r\"(bytes) : \"memory\");\n"
  "}\n"
  "NVF_DEV void nvf_mbar_arrive(u32 bar) {\n"
  "  asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" ::\"r\"(bar) : \"memory\");\n"
  "}\n"
  "NVF_DEV bool nvf_mbar_try_wait(u32 bar, u32 parity) {\n"
  "  u32 ok;\n"
  "  asm volatile(\"{\\n .reg .pred p;\\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\n selp.u32 %0, 1, 0, p;\\n}\"\n"
  "               : \"=r\"(ok) : \"r\"(bar), \"r\"(parity) : \"memory\");\n"
  "  return ok != 0;\n"
  "}\n"
  "// Waits until the phase with the given parity has completed.\n"
  "NVF_DEV void nvf_mbar_wait(u32 bar, u32 parity) {\n"
  "  while (!nvf_mbar_try_wait(bar, parity)) {\n"
  "  }\n"
  "}\n"
  "\n"
  "// ---- TMA (tensor) and bulk (1-D) copies into shared memory, completing on an mbarrier --\n"
  "struct __align__(64) NvfTensorMap {\n"
  "  u64 opaque[16]; // a CUtensorMap encoded on the host by cuTensorMapEncodeTiled\n"
  "};\n"
  "NVF_DEV void nvf_tma_load_3d(u32 dst, const NvfTensorMap* map, int c0, int c1, int c2, u32 bar) {\n"
  "  asm volatile(\n"
  "      \"cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\"\n"
  "      ::\"r\"(dst), \"l\"((u64)map), \"r\"(c0), \"r\"(c1), \"r\"(c2), \"r\"(bar) : \"memory\");\n"
  "}\n"
  "NVF_DEV void nvf_bulk_load(u32 dst, const void* src, u32 bytes, u32 bar) {\n"
  "  asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\"\n"
  "               ::\"r\"(dst), \"l\"(src), \"r\"(bytes), \"r\"(bar) : \"memory\");\n"
  "}\n"
  "// The same with an L2 cache policy (createpolicy), e.g. evict_last for data read again soon.\n"
  "NVF_DEV void nvf_bulk_load_hint(u32 dst, const void* src, u32 bytes, u32 bar, u64 policy) {\n"
  "  asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\"\n"
  "               ::\"r\"(dst), \"l\"(src), \"r\"(bytes), \"r\"(bar), \"l\"(policy) : \"memory\");\n"
  "}\n"
  "NVF_DEV u64 nvf_policy_evict_last() {\n"
  "  u64 pol;\n"
  "  asm volatile(\"createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\" : \"=l\"(pol));\n"
  "  return pol;\n"
  "}\n"
  "\n"
  "// ---- tensor memory -------------------------------------------------------------------\n"
  "// Whole warp: allocates `cols` columns (power of 2, >= 32), writes the base to smem `slot`.\n"
  "NVF_DEV void nvf_tmem_alloc(u32 slot, u32 cols) {\n"
  "  asm volatile(\"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\" ::\"r\"(slot), \"r\"(cols) : \"memory\");\n"
  "  asm volatile(\"tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\" ::: \"memory\");\n"
  "}\n"
  "NVF_DEV void nvf_tmem_dealloc(u32 base, u32 cols) {\n",
  "  asm volatile(\"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\" ::\"r\"(base), \"r\"(cols) : \"memory\");\n"
  "}\n"
  "NVF_DEV void nvf_tc_fence_before() { asm volatile(\"tcgen05.fence::before_thread_sync;\" ::: \"memory\"); }\n"
  "NVF_DEV void nvf_tc_fence_after() { asm volatile(\"tcgen05.fence::after_thread_sync;\" ::: \"memory\"); }\n"
  "\n"
  "// Scale factors: one 512-byte 128x4 atom in shared memory (16 bytes per row-of-32 group)\n"
  "// -> 4 TMEM columns of 32 lanes, replicated to all four lane quarters (.warpx4).\n"
  "NVF_DEV void nvf_tmem_cp_sf(u32 taddr, u64 sdesc) {\n"
  "  asm volatile(\"tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\" ::\"r\"(taddr), \"l\"(sdesc) : \"memory\");\n"
  "}\n"
  "\n"
  "// D(tmem, f32) (+)= A(smem desc) * B(smem desc)^T, E2M1 x E2M1 with ue4m3 block-16 scales\n"
  "// from TMEM; one thread issues it.\n"
  "NVF_DEV void nvf_mma_mxf4nvf4(u32 d, u64 adesc, u64 bdesc, u32 idesc, u32 sfa, u32 sfb, u32 accumulate) {\n"
  "  asm volatile(\n"
  "      \"{\\n .reg .pred p;\\n setp.ne.b32 p, %4, 0;\\n\"\n"
  "      \" tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%0], %1, %2, %3, [%5], [%6], p;\\n}\"\n"
  "      ::\"r\"(d), \"l\"(adesc), \"l\"(bdesc), \"r\"(idesc), \"r\"(accumulate), \"r\"(sfa), \"r\"(sfb) : \"memory\");\n"
  "}\n"
  "// Arrives once on `bar` when every earlier tcgen05 operation of this thread is complete.\n"
  "NVF_DEV void nvf_tc_commit(u32 bar) {\n"
  "  asm volatile(\"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\" ::\"r\"(bar) : \"memory\");\n"
  "}\n"
  "// Warp-collective: thread t reads TMEM lane (lane base + t), 32 consecutive columns.\n"
  "NVF_DEV void nvf_tmem_ld32(u32 taddr, u32* v) {\n"
  "  asm volatile(\n"
  "      \"tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, \"\n"
  "      \"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\"\n"
  "      : \"=r\"(v[0]), \"=r\"(v[1]), \"=r\"(v[2]), \"=r\"(v[3]), \"=r\"(v[4]), \"=r\"(v[5]), \"=r\"(v[6]), \"=r\"(v[7]), \"=r\"(v[8]),\n"
  "        \"=r\"(v[9]), \"=r\"(v[10]), \"=r\"(v[11]), \"=r\"(v[12]), \"=r\"(v[13]), \"=r\"(v[14]), \"=r\"(v[15]), \"=r\"(v[16]),\n"
  "        \"=r\"(v[17]), \"=r\"(v[18]), \"=r\"(v[19]), \"=r\"(v[20]), \"=r\"(v[21]), \"=r\"(v[22]), \"=r\"(v[23]), \"=r\"(v[24]),\n"
  "        \"=r\"(v[25]), \"=r\"(v[26]), \"=r\"(v[27]), \"=r\"(v[28]), \"=r\"(v[29]), \"=r\"(v[30]), \"=r\"(v[31])\n"
  "      : \"r\"(taddr) : \"memory\");\n"
  "  asm volatile(\"tcgen05.wait::ld.sync.aligned;\" ::: \"memory\");\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_ptx_wgmma_cuh[] = {
  "// ptx_wgmma.cuh -- warpgroup MMA wrappers for Hopper (sm_90a): fences, commit/wait, the\n"
  "// shared-memory matrix descriptor, and wgmma.mma_async with A from registers (RS form),\n"
  "// BF16 inputs and F32 accumulators, M = 64, N in {8, 16, 24, 32, 40, 48, 64, 96, 128}. Operand forms follow\n"
  "// the PTX ISA (warpgroup-level matrix instructions); the N variants differ only in the\n"
  "// length of the accumulator list, spelled out because inline asm needs fixed operands.\n"
  "#pragma once\n"
  "#include \"common.cuh\"\n"
  "\n"
  "NVF_DEV void nvf_wgmma_fence() { asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); }\n"
  "NVF_DEV void nvf_wgmma_commit() { asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\"); }\n"
  "template <int N> NVF_DEV void nvf_wgmma_wait() { asm volatile(\"wgmma.wait_group.sync.aligned %0;\" ::\"n\"(N) : \"memory\"); }\n"
  "// Keeps reads of an accumulator after the wait_group that retires its wgmmas: the asm\n"
  "// \"uses and redefines\" the value there, so the compiler cannot hoist the reads above it.\n"
  "NVF_DEV void nvf_reg_fence(float& r) { asm volatile(\"\" : \"+f\"(r)::\"memory\"); }\n"
  "// Generic-proxy stores to shared memory become visible to wgmma (async proxy) reads.\n"
  "NVF_DEV void nvf_fence_proxy_async() { asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); }\n"
  "\n"
  "// Matrix descriptor, no swizzle (canonical \"interleave\" layout): 8x16-byte core matrices,\n"
  "// lbo = byte distance between core matrices adjacent in K, sbo = between core matrices\n"
  "// adjacent in M/N (8-row groups). Bits: 0-13 address >> 4, 16-29 lbo >> 4, 32-45 sbo >> 4,\n"
  "// 62-63 layout 0.\n"
  "// the operand types: bf16, or f16 where NVF_F16 (TILED weights; common.cuh)\n"
  "#if NVF_F16\n"
  "#define NVF_WG_AB \"f16.f16\"\n"
  "#else\n"
  "#define NVF_WG_AB \"bf16.bf16\"\n"
  "#endif\n"
  "\n"
  "NVF_DEV u64 nvf_wgmma_desc(u32 smem_addr, u32 lbo, u32 sbo) {\n"
  "  return (u64)((smem_addr >> 4) & 0x3FFFu) | ((u64)((lbo >> 4) & 0x3FFFu) << 16) | ((u64)((sbo >> 4) & 0x3FFFu) << 32);\n"
  "}\n"
  "\n"
  "// D(64 x N, f32) += A(64 x 16, bf16, registers: the mma.sync m16n8k16 A fragment per warp)\n"
  "// * B(16 x N, bf16, K-major in shared memory at desc_b).\n"
  "NVF_DEV void nvf_wgmma_rs_n8(float* d, const u32* a, u64 desc_b) {\n"
  "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
  "               \"wgmma.mma_async.sync.aligned.m64n8k16.f32.\" NVF_WG_AB \" \"\n"
  "               \"{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1, 0;\\n}\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b));\n"
  "}\n"
  "NVF_DEV void nvf_wgmma_rs_n16(float* d, const u32* a, u64 desc_b) {\n"
  "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
  "               \"wgmma.mma_async.sync.aligned.m64n16k16.f32.\" NVF_WG_AB \" \"\n"
  "               \"{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1, 0;\\n}\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b));\n"
  "}\n"
  "NVF_DEV void nvf_wgmma_rs_n24(float* d, const u32* a, u64 desc_b) {\n"
  "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
  "               \"wgmma.mma_async.sync.aligned.m64n24k16.f32.\" NVF_WG_AB \" \"\n"
  "               \"{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, %16, p, 1, 1, 0;\\n}\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7]), \"+f\"(d[8]), \"+f\"(d[9]), \"+f\"(d[10]), \"+f\"(d[11])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b));\n"
  "}\n",
  "NVF_DEV void nvf_wgmma_rs_n32(float* d, const u32* a, u64 desc_b) {\n"
  "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
  "               \"wgmma.mma_async.sync.aligned.m64n32k16.f32.\" NVF_WG_AB \" \"\n"
  "               \"{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\\n}\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7]), \"+f\"(d[8]), \"+f\"(d[9]), \"+f\"(d[10]), \"+f\"(d[11]), \"+f\"(d[12]), \"+f\"(d[13]), \"+f\"(d[14]), \"+f\"(d[15])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b));\n"
  "}\n"
  "NVF_DEV void nvf_wgmma_rs_n40(float* d, const u32* a, u64 desc_b) {\n"
  "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
  "               \"wgmma.mma_async.sync.aligned.m64n40k16.f32.\" NVF_WG_AB \" \"\n"
  "               \"{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19}, {%20, %21, %22, %23}, %24, p, 1, 1, 0;\\n}\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7]), \"+f\"(d[8]), \"+f\"(d[9]), \"+f\"(d[10]), \"+f\"(d[11]), \"+f\"(d[12]), \"+f\"(d[13]), \"+f\"(d[14]), \"+f\"(d[15]), \"+f\"(d[16]), \"+f\"(d[17]), \"+f\"(d[18]), \"+f\"(d[19])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b));\n"
  "}\n"
  "NVF_DEV void nvf_wgmma_rs_n48(float* d, const u32* a, u64 desc_b) {\n"
  "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
  "               \"wgmma.mma_async.sync.aligned.m64n48k16.f32.\" NVF_WG_AB \" \"\n"
  "               \"{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, {%24, %25, %26, %27}, %28, p, 1, 1, 0;\\n}\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7]), \"+f\"(d[8]), \"+f\"(d[9]), \"+f\"(d[10]), \"+f\"(d[11]), \"+f\"(d[12]), \"+f\"(d[13]), \"+f\"(d[14]), \"+f\"(d[15]), \"+f\"(d[16]), \"+f\"(d[17]), \"+f\"(d[18]), \"+f\"(d[19]), \"+f\"(d[20]), \"+f\"(d[21]), \"+f\"(d[22]), \"+f\"(d[23])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b));\n"
  "}\n"
  "NVF_DEV void nvf_wgmma_rs_n64(float* d, const u32* a, u64 desc_b) {\n"
  "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
  "               \"wgmma.mma_async.sync.aligned.m64n64k16.f32.\" NVF_WG_AB \" \"\n"
  "               \"{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\\n}\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7]), \"+f\"(d[8]), \"+f\"(d[9]), \"+f\"(d[10]), \"+f\"(d[11]), \"+f\"(d[12]), \"+f\"(d[13]), \"+f\"(d[14]), \"+f\"(d[15]), \"+f\"(d[16]), \"+f\"(d[17]), \"+f\"(d[18]), \"+f\"(d[19]), \"+f\"(d[20]), \"+f\"(d[21]), \"+f\"(d[22]), \"+f\"(d[23]), \"+f\"(d[24]), \"+f\"(d[25]), \"+f\"(d[26]), \"+f\"(d[27]), \"+f\"(d[28]), \"+f\"(d[29]), \"+f\"(d[30]), \"+f\"(d[31])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b));\n"
  "}\n"
  "NVF_DEV void nvf_wgmma_rs_n96(float* d, const u32* a, u64 desc_b) {\n"
  "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
  "               \"wgmma.mma_async.sync.aligned.m64n96k16.f32.\" NVF_WG_AB \" \"\n"
  "               \"{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, {%48, %49, %50, %51}, %52, p, 1, 1, 0;\\n}\"\n",
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7]), \"+f\"(d[8]), \"+f\"(d[9]), \"+f\"(d[10]), \"+f\"(d[11]), \"+f\"(d[12]), \"+f\"(d[13]), \"+f\"(d[14]), \"+f\"(d[15]), \"+f\"(d[16]), \"+f\"(d[17]), \"+f\"(d[18]), \"+f\"(d[19]), \"+f\"(d[20]), \"+f\"(d[21]), \"+f\"(d[22]), \"+f\"(d[23]), \"+f\"(d[24]), \"+f\"(d[25]), \"+f\"(d[26]), \"+f\"(d[27]), \"+f\"(d[28]), \"+f\"(d[29]), \"+f\"(d[30]), \"+f\"(d[31]), \"+f\"(d[32]), \"+f\"(d[33]), \"+f\"(d[34]), \"+f\"(d[35]), \"+f\"(d[36]), \"+f\"(d[37]), \"+f\"(d[38]), \"+f\"(d[39]), \"+f\"(d[40]), \"+f\"(d[41]), \"+f\"(d[42]), \"+f\"(d[43]), \"+f\"(d[44]), \"+f\"(d[45]), \"+f\"(d[46]), \"+f\"(d[47])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b));\n"
  "}\n"
  "NVF_DEV void nvf_wgmma_rs_n128(float* d, const u32* a, u64 desc_b) {\n"
  "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n\"\n"
  "               \"wgmma.mma_async.sync.aligned.m64n128k16.f32.\" NVF_WG_AB \" \"\n"
  "               \"{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\\n}\"\n"
  "               : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7]), \"+f\"(d[8]), \"+f\"(d[9]), \"+f\"(d[10]), \"+f\"(d[11]), \"+f\"(d[12]), \"+f\"(d[13]), \"+f\"(d[14]), \"+f\"(d[15]), \"+f\"(d[16]), \"+f\"(d[17]), \"+f\"(d[18]), \"+f\"(d[19]), \"+f\"(d[20]), \"+f\"(d[21]), \"+f\"(d[22]), \"+f\"(d[23]), \"+f\"(d[24]), \"+f\"(d[25]), \"+f\"(d[26]), \"+f\"(d[27]), \"+f\"(d[28]), \"+f\"(d[29]), \"+f\"(d[30]), \"+f\"(d[31]), \"+f\"(d[32]), \"+f\"(d[33]), \"+f\"(d[34]), \"+f\"(d[35]), \"+f\"(d[36]), \"+f\"(d[37]), \"+f\"(d[38]), \"+f\"(d[39]), \"+f\"(d[40]), \"+f\"(d[41]), \"+f\"(d[42]), \"+f\"(d[43]), \"+f\"(d[44]), \"+f\"(d[45]), \"+f\"(d[46]), \"+f\"(d[47]), \"+f\"(d[48]), \"+f\"(d[49]), \"+f\"(d[50]), \"+f\"(d[51]), \"+f\"(d[52]), \"+f\"(d[53]), \"+f\"(d[54]), \"+f\"(d[55]), \"+f\"(d[56]), \"+f\"(d[57]), \"+f\"(d[58]), \"+f\"(d[59]), \"+f\"(d[60]), \"+f\"(d[61]), \"+f\"(d[62]), \"+f\"(d[63])\n"
  "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b));\n"
  "}\n"
  "\n"
  "// nvf_wgmma_rs<N>: the wrapper of N, for a tile that picks its N at compile time.\n"
  "template <int N> NVF_DEV void nvf_wgmma_rs(float* d, const u32* a, u64 desc_b) {\n"
  "  if constexpr (N == 8) nvf_wgmma_rs_n8(d, a, desc_b);\n"
  "  else if constexpr (N == 16) nvf_wgmma_rs_n16(d, a, desc_b);\n"
  "  else if constexpr (N == 24) nvf_wgmma_rs_n24(d, a, desc_b);\n"
  "  else if constexpr (N == 32) nvf_wgmma_rs_n32(d, a, desc_b);\n"
  "  else if constexpr (N == 40) nvf_wgmma_rs_n40(d, a, desc_b);\n"
  "  else if constexpr (N == 48) nvf_wgmma_rs_n48(d, a, desc_b);\n"
  "  else if constexpr (N == 64) nvf_wgmma_rs_n64(d, a, desc_b);\n"
  "  else if constexpr (N == 96) nvf_wgmma_rs_n96(d, a, desc_b);\n"
  "  else {\n"
  "    static_assert(N == 128, \"wgmma N: 8, 16, 24, 32, 40, 48, 64, 96 or 128\");\n"
  "    nvf_wgmma_rs_n128(d, a, desc_b);\n"
  "  }\n"
  "}\n",
  0};
static const char* const nvfp4moe__src_quantize_cu[] = {
  "// quantize.cu -- NVFP4 quantization kernels: per-token and given-scale (per tensor /\n"
  "// per expert), plain and masked, fused SiLU-and-mul + quantize, weight amax, SF layout\n"
  "// conversion, dequantization. Bit-exact with the host reference (NUMERICS.md 2-3).\n"
  "#include \"common.cuh\"\n"
  "#include \"ptx_tcgen05.cuh\" // mbarriers and the 1-D bulk copy (sm_90+)\n"
  "#include \"dequant_bf16.cuh\" // the widened tokens of the _img kernels\n"
  "\n"
  "#define NVF_QT 256   // threads per CTA\n"
  "// Blocks of 16 a thread keeps in registers (a row is read once for K <= 256 * 16 * NVF_QNB)\n"
  "// and CTAs per SM the registers must allow. Measured (bench/NOTES.md): 4 and 2 for the\n"
  "// plain quantizer; 1 and 4 for the SiLU kernel (its exp chains, not the bytes in flight,\n"
  "// set its time: one block per thread and more warps, 7 % faster than 2 and 3 on the decode\n"
  "// shape, sixth session). NVF_QTUNE=1 (plain 2 and 3, SiLU 4 and 2) and NVF_QSILU2=1 (SiLU\n"
  "// 2 and 3) are variants for tuning runs; the host picks teams to match. NVF_QSILU_MINB and\n"
  "// NVF_QPLAIN_MINB (tuning runs) set the CTAs per SM of the default SiLU and plain kernels\n"
  "// (not under NVF_QTUNE=1 or NVF_QSILU2).\n"
  "#if defined(NVF_QTUNE) && NVF_QTUNE == 1\n"
  "#if defined(NVF_SILU)\n"
  "#define NVF_QNB 4\n"
  "#define NVF_QMINB 2\n"
  "#else\n"
  "#define NVF_QNB 2\n"
  "#define NVF_QMINB 3\n"
  "#endif\n"
  "#elif defined(NVF_SILU) && defined(NVF_QSILU2)\n"
  "#define NVF_QNB 2\n"
  "#define NVF_QMINB 3\n"
  "#elif defined(NVF_SILU)\n"
  "#define NVF_QNB 1\n"
  "#if defined(NVF_QSILU_MINB) // (tuning runs: CTAs per SM of the 1-block SiLU kernels)\n"
  "#define NVF_QMINB NVF_QSILU_MINB\n"
  "#else\n"
  "#define NVF_QMINB 4\n"
  "#endif\n"
  "#else\n"
  "#define NVF_QNB 4\n"
  "#if defined(NVF_QPLAIN_MINB) // (tuning runs: CTAs per SM of the plain kernels)\n"
  "#define NVF_QMINB NVF_QPLAIN_MINB\n"
  "#else\n"
  "#define NVF_QMINB 2\n"
  "#endif\n"
  "#endif\n"
  "#define NVF_QMAXG 1024 // masked input with up to this many groups: valid rows enumerated densely\n"
  "\n"
  "struct NvfQuantParams {\n"
  "  const void* x;          // input rows, bf16 or fp16; SiLU: [gate | up], 2k wide\n"
  "  i64 x_row_stride;       // elements\n"
  "  i64 x_group_stride;     // elements\n"
  "  u8* q;                  // [G, rows, k/2] packed E2M1\n"
  "  u8* sf;                 // 128x4: G * roundup(rows,128)*4*Kc4 bytes; linear: [G, rows, k/16]\n"
  "  float* scale_out;       // per-token decode scales [G, rows]\n"
  "  const float* scale_in;  // given decode scales [G] on the device, or null\n"
  "  const float* gate_scale;// SiLU: optional f32 [G] multiplying the gate half\n"
  "  const float* up_scale;  // SiLU: optional f32 [G] multiplying the up half\n"
  "  const int* masked_m;    // [G] or null (all rows valid)\n"
  "  float scale_value;      // given decode scale when scale_in is null\n"
  "  int groups, rows, k;\n"
  "  int sf_linear;          // 0: 128x4, 1: linear\n"
  "  int per_token;          // 1: s = row_amax / 2688 per row; 0: given s\n"
  "  int fo6;                // 4over6: 0 off, 1 MAE, 2 MSE\n"
  "  int fp16;               // 1: input is fp16, 0: bf16\n"
  "  int pad_rows;           // write zero SF rows up to roundup(rows,128) (plain 128x4)\n"
  "  int team;               // threads per row: a power of two >= max(4, k/16/NVF_QNB), at most NVF_QT\n"
  "  int stage;              // staged kernels: slots (rows in flight) per team in shared memory\n"
  "};\n"
  "// (The _img kernels take their two arguments apart: fields added here change the other\n"
  "// kernels' code.)\n"
  "\n"
  "NVF_DEV u32 nvf_prmt(u32 a, u32 b, u32 sel) {\n"
  "  u32 r;\n"
  "  asm(\"prmt.b32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(sel));\n"
  "  return r;\n"
  "}\n"
  "\n"
  "// Element j (0..7) of a 4-word group of packed 16-bit floats, widened exactly.\n"
  "template <bool F16>\n",
  "NVF_DEV float nvf_elem(const u32* w, int j) {\n"
  "  const u32 x = w[j >> 1];\n"
  "  if (F16) return nvf_fp16_to_f32((u16)(x >> (16 * (j & 1))));\n"
  "  return __uint_as_float((j & 1) \? (x & 0xFFFF0000u) : (x << 16));\n"
  "}\n"
  "\n"
  "// Block b of the row to quantize, 8 words: the input itself, or bf16(silu(gate) * up).\n"
  "template <bool SILU, bool F16>\n"
  "NVF_DEV void nvf_load_block(const NvfQuantParams& p, const u8* xrow, int b, float gs, float us, u32* w) {\n"
  "  const uint4 a0 = *(const uint4*)(xrow + (i64)b * 32), a1 = *(const uint4*)(xrow + (i64)b * 32 + 16);\n"
  "  w[0] = a0.x; w[1] = a0.y; w[2] = a0.z; w[3] = a0.w; w[4] = a1.x; w[5] = a1.y; w[6] = a1.z; w[7] = a1.w;\n"
  "  if (SILU) {\n"
  "    const u8* up = xrow + (i64)p.k * 2 + (i64)b * 32;\n"
  "    const uint4 u0 = *(const uint4*)up, u1 = *(const uint4*)(up + 16);\n"
  "    const u32 uw[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};\n"
  "    #pragma unroll\n"
  "    for (int j = 0; j < 8; ++j) {\n"
  "      u32 y = 0;\n"
  "      #pragma unroll\n"
  "      for (int h = 0; h < 2; ++h) {\n"
  "        float g = nvf_elem<F16>(w + j, h), u = nvf_elem<F16>(uw + j, h);\n"
  "        if (p.gate_scale) g = __fmul_rn(g, gs);\n"
  "        if (p.up_scale) u = __fmul_rn(u, us);\n"
  "        y |= nvf_f32_to_bf16(nvf_silu_mul(g, u)) << (16 * h);\n"
  "      }\n"
  "      w[j] = y;\n"
  "    }\n"
  "  }\n"
  "}\n"
  "\n"
  "// max |x| of a block as f32 bits (exact; +-Inf -> 0x7F800000, NaN -> above it), from\n"
  "// packed max of the magnitudes (NaN-propagating) and one integer max of the two halves.\n"
  "template <bool F16>\n"
  "NVF_DEV u32 nvf_block_amax_bits(const u32* w) {\n"
  "  u32 m[8];\n"
  "  #pragma unroll\n"
  "  for (int j = 0; j < 8; ++j) m[j] = w[j] & 0x7FFF7FFFu;\n"
  "  #pragma unroll\n"
  "  for (int s = 4; s > 0; s >>= 1)\n"
  "    #pragma unroll\n"
  "    for (int j = 0; j < s; ++j) {\n"
  "      if (F16) asm(\"max.NaN.f16x2 %0, %1, %2;\" : \"=r\"(m[j]) : \"r\"(m[j]), \"r\"(m[j + s]));\n"
  "      else asm(\"max.NaN.bf16x2 %0, %1, %2;\" : \"=r\"(m[j]) : \"r\"(m[j]), \"r\"(m[j + s]));\n"
  "    }\n"
  "  const u32 lo = __float_as_uint(nvf_elem<F16>(m, 0)), hi = __float_as_uint(nvf_elem<F16>(m, 1));\n"
  "  return lo > hi \? lo : hi;\n"
  "}\n"
  "\n"
  "// Magnitude code of |v| (finite, or +inf -> 7) in the low byte of the result:\n"
  "// code = min(rint(2a), rint(a) + 2, rint(a/2) + 4, 7), each rint a single RNE rounding\n"
  "// of an exact value against the magic 1.5 * 2^23 (its bits hold rint + 0x4B400000).\n"
  "// rint is monotone, so the min of the roundings is the rounding of the min of the three\n"
  "// lines 2a, a + 2, a/2 + 4 (the E2M1 grid stretched to integers): the RNE cut points of\n"
  "// NUMERICS.md land on .5 and tie to the even code. Checked against the cut-point\n"
  "// compares for every non-negative f32 (docs/numerics.md).\n"
  "template <bool CLAMP>\n"
  "NVF_DEV u32 nvf_e2m1_mag_bits(float v) {\n"
  "  const float a = fabsf(v); // folds into the three adds as |v|\n"
  "  const u32 c0 = __float_as_uint(__fmaf_rn(a, 2.0f, 12582912.0f));\n"
  "  const u32 c1 = __float_as_uint(__fadd_rn(a, 12582914.0f));\n"
  "  const u32 c2 = __float_as_uint(__fmaf_rn(a, 0.5f, 12582916.0f));\n"
  "  // the cap at code 7 only matters for a >= 7: the fast path checks its block's max product\n"
  "  // once instead (below 7, rint(a/2) + 4 <= 7 already)\n"
  "  return CLAMP \? min(min(c0, c1), min(c2, 0x4B400007u)) : min(min(c0, c1), c2);\n"
  "}\n"
  "\n"
  "// The 8 codes of w[0..3] from their magnitude bits c[j] (low byte nn <= 7, high bits the\n"
  "// magic's): nibble pairs by a multiply-add each (no carry out of the low byte, as nn <= 7),\n"
  "// the 4 pair bytes gathered by two more and a byte permute; the signs (bits 15 and 31 of each\n"
  "// word) as sign-replicated bytes, even elements to bit 3 and odd ones to bit 7 of their byte.\n",
  "// 13 operations, 6 of them on the FMA pipe (the byte-per-code form before took 15 on the ALU pipe).\n"
  "NVF_DEV u32 nvf_e2m1_pack_codes(const u32* c, const u32* w) {\n"
  "  u32 pr[4];\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 4; ++i) pr[i] = c[2 * i + 1] * 16u + c[2 * i];\n"
  "  const u32 mag = nvf_prmt(pr[1] * 256u + pr[0], pr[3] * 256u + pr[2], 0x5410u);\n"
  "  const u32 x01 = nvf_prmt(w[0], w[1], 0xFBD9u), x23 = nvf_prmt(w[2], w[3], 0xFBD9u); // S0 S2 S1 S3, S4 S6 S5 S7\n"
  "  const u32 ev = nvf_prmt(x01, x23, 0x5410u), od = nvf_prmt(x01, x23, 0x7632u);\n"
  "  return mag | (ev & 0x08080808u) | (od & 0x80808080u);\n"
  "}\n"
  "\n"
  "// Codes of the 8 elements in w[0..3] times out (finite, > 0), packed (element j in\n"
  "// nibble j), sign from the input (so -0 and negative underflow give code 8). CLAMP false:\n"
  "// the caller knows every |element * out| < 7.\n"
  "template <bool F16, bool CLAMP = true>\n"
  "NVF_DEV u32 nvf_e2m1_pack8(const u32* w, float out) {\n"
  "#if defined(NVF_HW_E2M1)\n"
  "  // SM100: cvt.rn.satfinite.e2m1x2.f32 gives the same byte (compiled, not run on hardware:\n"
  "  // the context's first-use self-test compares it with the host reference, docs/sm100.md)\n"
  "  u32 word = 0;\n"
  "  #pragma unroll\n"
  "  for (int j = 0; j < 4; ++j) {\n"
  "    const float lo = __fmul_rn(nvf_elem<F16>(w, 2 * j), out), hi = __fmul_rn(nvf_elem<F16>(w, 2 * j + 1), out);\n"
  "    u32 b;\n"
  "    asm(\"{.reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %1, %2; cvt.u32.u8 %0, t;}\" : \"=r\"(b) : \"f\"(hi), \"f\"(lo));\n"
  "    word |= (b & 0xFFu) << (8 * j); // first source operand in the high nibble\n"
  "  }\n"
  "  return word;\n"
  "#else\n"
  "  u32 c[8];\n"
  "  #pragma unroll\n"
  "  for (int j = 0; j < 8; ++j) c[j] = nvf_e2m1_mag_bits<CLAMP>(__fmul_rn(nvf_elem<F16>(w, j), out));\n"
  "  return nvf_e2m1_pack_codes(c, w);\n"
  "#endif\n"
  "}\n"
  "\n"
  "// The exact slow path for 4over6 and for out overflowing to +inf (tiny scales): the\n"
  "// per-element functions of common.cuh. Not inlined (rare, register-hungry); the words\n"
  "// come by value so the caller's register arrays never need an address.\n"
  "template <bool F16>\n"
  "__device__ __noinline__ uint2 nvf_block_slow(uint4 lo, uint4 hi, float amax, float s, float t, int fo6, u32* sf) {\n"
  "  const u32 w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};\n"
  "  float x[16];\n"
  "  #pragma unroll\n"
  "  for (int j = 0; j < 16; ++j) x[j] = nvf_elem<F16>(w + 4 * (j >> 3), j & 7);\n"
  "  u32 q[2];\n"
  "  *sf = nvf_quantize_block16(x, amax, s, t, fo6, q);\n"
  "  return make_uint2(q[0], q[1]);\n"
  "}\n"
  "\n"
  "// One block of 16 with a valid decode scale s (mode 0) and finite amax: SF byte, codes\n"
  "// into q[0..1]. NUMERICS.md 2 steps 3-5 (1/(sf*s) as rcp.rn == 1.0f/(sf*s), the same bits).\n"
  "template <bool F16>\n"
  "NVF_DEV u32 nvf_block_quantize(const u32* w, u32 amax_bits, float s, float t, int fo6, u32* q) {\n"
  "  q[0] = 0u; q[1] = 0u;\n"
  "  if (amax_bits == 0u) return 0u; // zero block: SF 0, codes +0\n"
  "  if (!fo6) {\n"
  "    const u32 sf = nvf_e4m3(__fmul_rn(__uint_as_float(amax_bits), t));\n"
  "    if (sf == 0u) return 0u; // the SF underflowed: codes +0\n"
  "    const float out = __frcp_rn(__fmul_rn(nvf_e4m3_to_f32(sf), s));\n"
  "    if (!nvf_is_nonfinite(out)) {\n"
  "      q[0] = nvf_e2m1_pack8<F16>(w, out);\n"
  "      q[1] = nvf_e2m1_pack8<F16>(w + 4, out);\n"
  "      return sf;\n"
  "    }\n"
  "  }\n"
  "  u32 sfs;\n"
  "  const uint2 r = nvf_block_slow<F16>(make_uint4(w[0], w[1], w[2], w[3]), make_uint4(w[4], w[5], w[6], w[7]),\n"
  "                                      __uint_as_float(amax_bits), s, t, fo6, &sfs);\n"
  "  q[0] = r.x; q[1] = r.y;\n"
  "  return sfs;\n"
  "}\n"
  "\n"
  "// What a row's blocks share: its decode scale s, t = (1/s) * (1/6), the mode (0 quantize,\n",
  "// 1 zero row, 2 faulted row: SF 0x7F, codes 0), and for the fast path s * 2^120.\n"
  "// fast: mode 0, no 4over6 and 2^-100 <= s < 2^8, so every y = e4m3(sf) * s of the row is a\n"
  "// normal f32 in [2^-109, 2^17): e4m3(sf) * s is one multiply of the SF's bits shifted into\n"
  "// place by s * 2^120 (exact), and rcp.rn(y) is the approximation plus one Newton step (the\n"
  "// in-range path of __frcp_rn itself, taken without its range check).\n"
  "struct NvfRowQ {\n"
  "  float s, t, s120;\n"
  "  int mode;\n"
  "  bool fast;\n"
  "};\n"
  "\n"
  "NVF_DEV float nvf_rcp_in_range(float y) {\n"
  "  float r;\n"
  "  asm(\"rcp.approx.ftz.f32 %0, %1;\" : \"=f\"(r) : \"f\"(y));\n"
  "  return __fmaf_rn(r, __fmaf_rn(-y, r, 1.0f), r);\n"
  "}\n"
  "\n"
  "// Probes for tuning runs (wrong bytes, timing only; bench/NOTES.md, tenth and eleventh sessions):\n"
  "// -DNVF_QPROBE=1 stores no SFs, =2 no codes, =3 writes each row's SFs contiguously (the linear\n"
  "// layout's addresses) whatever the layout, =4 stores neither, =6 writes row r's SFs at the 128x4\n"
  "// offsets of row (r % 128) * (rows / 128) + r / 128 (the same pattern, the rows in flight together\n"
  "// in different 128-row groups). =7 is not wrong: plain input in one group of whole 128-row groups is\n"
  "// taken in another order, pairs of rows 2j, 2j + 1 from consecutive 128-row groups in turn.\n"
  "#if defined(NVF_QPROBE)\n"
  "#define nvf_store_q(qp, q0, q1) (NVF_QPROBE == 2 || NVF_QPROBE == 4 \? (void)0 : (void)(*(uint2*)(qp) = make_uint2(q0, q1)))\n"
  "#define nvf_store_sf(sfp, b) (NVF_QPROBE == 1 || NVF_QPROBE == 4 \? (void)0 : (void)(*(sfp) = (u8)(b)))\n"
  "#elif defined(NVF_QSFHINT)\n"
  "// -DNVF_QSFHINT (tuning runs): L2 policies on the stores. 1: SF bytes evict_last; 2: SFs and codes\n"
  "// evict_last; 3: SFs evict_first; 4: SFs and codes evict_first; 5: SFs st.global.cs (the default\n"
  "// below); 6: SFs as plain stores (the default before the twelfth session); 7: SFs with an\n"
  "// evict_normal policy (the instruction form alone, as a control).\n"
  "NVF_DEV u64 nvf_qpolicy(int kind) { // 0 evict_last, 1 evict_first, 2 evict_normal\n"
  "  u64 pol;\n"
  "  if (kind == 0) asm(\"createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\" : \"=l\"(pol));\n"
  "  else if (kind == 1) asm(\"createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\" : \"=l\"(pol));\n"
  "  else asm(\"createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\" : \"=l\"(pol));\n"
  "  return pol;\n"
  "}\n"
  "NVF_DEV void nvf_store_sf_hint(u8* sfp, u32 b) {\n"
  "  if (NVF_QSFHINT == 5)\n"
  "    asm volatile(\"st.global.cs.b8 [%0], %1;\" ::\"l\"(sfp), \"r\"(b) : \"memory\");\n"
  "  else if (NVF_QSFHINT == 6)\n"
  "    *sfp = (u8)b;\n"
  "  else\n"
  "    asm volatile(\"st.global.L2::cache_hint.b8 [%0], %1, %2;\" ::\"l\"(sfp), \"r\"(b),\n"
  "                 \"l\"(nvf_qpolicy(NVF_QSFHINT <= 2 \? 0 : NVF_QSFHINT <= 4 \? 1 : 2)) : \"memory\");\n"
  "}\n"
  "NVF_DEV void nvf_store_q_hint(u8* qp, u32 q0, u32 q1) {\n"
  "  if (NVF_QSFHINT == 2 || NVF_QSFHINT == 4)\n"
  "    asm volatile(\"st.global.L2::cache_hint.v2.b32 [%0], {%1, %2}, %3;\" ::\"l\"(qp), \"r\"(q0), \"r\"(q1),\n"
  "                 \"l\"(nvf_qpolicy(NVF_QSFHINT == 2 \? 0 : 1)) : \"memory\");\n"
  "  else\n"
  "    *(uint2*)(qp) = make_uint2(q0, q1);\n"
  "}\n"
  "#define nvf_store_q(qp, q0, q1) nvf_store_q_hint((u8*)(qp), q0, q1)\n"
  "#define nvf_store_sf(sfp, b) nvf_store_sf_hint((u8*)(sfp), (u32)(b))\n"
  "#else\n"
  "// SF bytes are stored with st.global.cs (streaming, evict-first in L2): [16384, 7168] took\n"
  "// 83.3-83.5 us against 84.7-85.2 with plain stores in two A/B runs (h200_quant_sfhint_ab.json,\n"
  "// h200_quant_sfhint2_ab.json; linear SFs -2 us, masked decode -0.3 us). Why is not known: an\n"
  "// evict_normal policy on the same instruction form gains part of it (bench/NOTES.md).\n",
  "NVF_DEV void nvf_store_sf_cs(u8* sfp, u32 b) { asm volatile(\"st.global.cs.b8 [%0], %1;\" ::\"l\"(sfp), \"r\"(b) : \"memory\"); }\n"
  "#define nvf_store_q(qp, q0, q1) (*(uint2*)(qp) = make_uint2(q0, q1))\n"
  "#define nvf_store_sf(sfp, b) nvf_store_sf_cs((u8*)(sfp), (u32)(b))\n"
  "#endif\n"
  "\n"
  "// ---- widened tokens for the expert layer's GEMMs (the _img kernels) ----\n"
  "// A token-producer GEMM tile (gemm_wgmma_ws.cu) reads its tokens widened to BF16 (F16 on TILED\n"
  "// weights: the host's _img_f16 twins, -DNVF_QIMG_TILED=1) from slot\n"
  "// images in global memory that its pre-pass, nvf_ws_widen_tokens, writes from the NVFP4 tokens.\n"
  "// In the expert layer the quantizer has the codes and SFs in hand, so it writes the images\n"
  "// itself and the GEMM skips its pre-pass (one launch and its reads less). Same bytes as the\n"
  "// pre-pass for every row below masked_m, including the zero blocks past K in the last step.\n"
  "// Not written: rows past masked_m in a group's last token tile (nor by the pre-pass since 0.5.13),\n"
  "// which feed only their own MMA columns, never stored by the epilogue, and the unused second step\n"
  "// of an odd last slot, never multiplied. The expert layer uses it for the SiLU quantizer only: the\n"
  "// input quantizer's image (K 7168) took longer than the pre-pass (bench/NOTES.md, twenty-first\n"
  "// session): a team's row owns 16 bytes of every 128-byte line, so its stores are half sectors.\n"
  "// Token n of tile T (row r = T TOK + n) of group g, 128-K step s, starts at\n"
  "// img + ((g tiles_m + T) nslots SPS + s) 8 B + (n >> 3) 256 + (n & 7) 16, B = TOK 32 bytes an\n"
  "// MMA, SPS = TOK >= 128 \? 1 : 2, nslots = ceil(steps / SPS), tiles_m = ceil(rows / TOK): the\n"
  "// slot images of the pre-pass (a slot is SPS consecutive steps). Row r's step 0 (imgp below):\n"
  "NVF_DEV u8* nvf_img_row(const NvfQuantParams& p, u8* img, int tok, int g, int r) {\n"
  "  const int sps = tok >= 128 \? 1 : 2, bmma = tok * 32;\n"
  "  const int nslots = ((p.k + 127) / 128 + sps - 1) / sps, tiles_m = (p.rows + tok - 1) / tok;\n"
  "  const int tile = r / tok, n = r - tile * tok;\n"
  "  return img + ((i64)g * tiles_m + tile) * nslots * sps * 8 * bmma + (n >> 3) * 256 + (n & 7) * 16;\n"
  "}\n"
  "\n"
  "// Block b (16 elements: codes q0, q1, SF byte sfb) widened as nvf_wg_widen_token does: within\n"
  "// step s = b / 8 the block is half b & 1 of 32-element piece t = (b & 7) / 2, its words are\n"
  "// words 2 (b & 1) and 2 (b & 1) + 1 of that piece, and pair pp of word j (elements pp, pp + 4)\n"
  "// goes to word t of the 16 bytes at MMA 2j + pp / 2, K half pp & 1.\n"
  "NVF_DEV void nvf_img_block(u8* imgp, int bmma, int b, u32 q0, u32 q1, u32 sfb) {\n"
  "  u32 s0, s1;\n"
  "  nvf_sf2_to_bf16x2(sfb & 0xFFu, s0, s1);\n"
  "  u8* dst = imgp + (i64)(b >> 3) * 8 * bmma + (b & 1) * 4 * bmma + ((b & 7) >> 1) * 4;\n"
  "  #pragma unroll\n"
  "  for (int jj = 0; jj < 2; ++jj) {\n"
  "    u32 r[4];\n"
  "    nvf_fp4x8_to_bf16x2(jj \? q1 : q0, r);\n"
  "    #pragma unroll\n"
  "    for (int pp = 0; pp < 4; ++pp)\n"
  "      *(u32*)(dst + (2 * jj + (pp >> 1)) * bmma + (pp & 1) * 128) = nvf_bf16x2_mul(r[pp], s0);\n"
  "  }\n"
  "}\n"
  "\n"
  "// Quantize one block of a row (its 8 words and amax bits) and store its 8 code bytes at qp\n"
  "// and its SF byte at sfp; mode 1 (zero row) and 2 (faulted row) store the fixed bytes.\n"
  "// IMG: also the block's widened tokens (nvf_img_block: the row's image imgp, block b).\n"
  "template <bool F16, bool IMG = false>\n"
  "NVF_DEV void nvf_quantize_store(const u32* w, u32 am, const NvfRowQ& rq, int fo6, u8* qp, u8* sfp, u8* imgp = nullptr,\n"
  "                                int bmma = 0, int b = 0) {\n"
  "  u32 q[2] = {0u, 0u}, sfb;\n",
  "  // Fast path: a finite non-zero block amax in a fast row, and every |x * out| of the block\n"
  "  // below 7 (one product: the block max's), which also excludes SF 0 (out = inf) and needs\n"
  "  // no cap on the codes. Anything else (a block whose max product reaches 7, as with some\n"
  "  // subnormal SFs or saturated given scales; a tiny or huge s; 4over6) takes the general path\n"
  "  // below, which recomputes the block from the start (the same bytes).\n"
  "  if (rq.fast) { // (a zero, infinite or NaN amax fails the product test below)\n"
  "    sfb = nvf_e4m3(__fmul_rn(__uint_as_float(am), rq.t));\n"
  "    const float out = nvf_rcp_in_range(__fmul_rn(__uint_as_float(sfb << 20), rq.s120));\n"
  "    if (__fmul_rn(__uint_as_float(am), out) < 7.0f) {\n"
  "      q[0] = nvf_e2m1_pack8<F16, false>(w, out);\n"
  "      q[1] = nvf_e2m1_pack8<F16, false>(w + 4, out);\n"
  "      nvf_store_q(qp, q[0], q[1]);\n"
  "      nvf_store_sf(sfp, sfb);\n"
  "      if (IMG) nvf_img_block(imgp, bmma, b, q[0], q[1], sfb);\n"
  "      return;\n"
  "    }\n"
  "  }\n"
  "  sfb = rq.mode == 2 \? 0x7Fu : 0u;\n"
  "  if (rq.mode == 0) {\n"
  "    if (am >= 0x7F800000u) sfb = 0x7Fu; // given scale: a non-finite block is faulted on its own\n"
  "    else sfb = nvf_block_quantize<F16>(w, am, rq.s, rq.t, fo6, q);\n"
  "  }\n"
  "  nvf_store_q(qp, q[0], q[1]);\n"
  "  nvf_store_sf(sfp, sfb);\n"
  "  if (IMG) nvf_img_block(imgp, bmma, b, q[0], q[1], sfb);\n"
  "}\n"
  "\n"
  "// Team-wide max of u32 (team threads, a power of two, aligned in the CTA). Teams wider\n"
  "// than a warp meet at their own named barrier (ids 1..NVF_QT/64); red is double-buffered\n"
  "// by the caller's parity so one barrier per call suffices.\n"
  "NVF_DEV u32 nvf_team_max(u32 v, int team, u32 (*red)[NVF_QT / 32], int parity) {\n"
  "  const int lane = threadIdx.x & 31;\n"
  "  if (team >= 32) { // the common case: one warp reduction instruction (sm_80+)\n"
  "    asm(\"redux.sync.max.u32 %0, %0, 0xffffffff;\" : \"+r\"(v));\n"
  "  } else { // a team inside one warp\n"
  "    const u32 mask = ((1u << team) - 1u) << (lane & ~(team - 1));\n"
  "    for (int o = team >> 1; o > 0; o >>= 1) {\n"
  "      const u32 t = __shfl_xor_sync(mask, v, o);\n"
  "      v = t > v \? t : v;\n"
  "    }\n"
  "  }\n"
  "  if (team <= 32) return v;\n"
  "  const int warp = threadIdx.x >> 5, wpt = team >> 5, first = warp & ~(wpt - 1);\n"
  "  if (lane == 0) red[parity][warp] = v;\n"
  "  const int id = 1 + ((int)threadIdx.x >> (__ffs(team) - 1)); // team is a power of two: no division\n"
  "  asm volatile(\"bar.sync %0, %1;\" : : \"r\"(id), \"r\"(team) : \"memory\");\n"
  "  // the team's 2, 4 or 8 warp maxima in one or two vector loads (first is a multiple of wpt)\n"
  "  const u32* rr = red[parity] + first;\n"
  "  if (wpt == 2) {\n"
  "    const uint2 a = *(const uint2*)rr;\n"
  "    v = max(a.x, a.y);\n"
  "  } else {\n"
  "    const uint4 a = *(const uint4*)rr;\n"
  "    v = max(max(a.x, a.y), max(a.z, a.w));\n"
  "    if (wpt == 8) {\n"
  "      const uint4 b = *(const uint4*)(rr + 4);\n"
  "      v = max(v, max(max(b.x, b.y), max(b.z, b.w)));\n"
  "    }\n"
  "  }\n"
  "  return v;\n"
  "}\n"
  "\n"
  "// Valid rows of every group as a dense list: prefix[g] = rows before group g.\n"
  "NVF_DEV int nvf_masked_prefix(const NvfQuantParams& p, int* prefix) {\n"
  "  const int G = p.groups;\n"
  "  for (int g = threadIdx.x; g < G; g += NVF_QT) prefix[g + 1] = nvf_valid_rows(p.masked_m, g, p.rows);\n"
  "  __syncthreads();\n"
  "  if (threadIdx.x < 32) {\n"
  "    const int lane = threadIdx.x, per = (G + 31) / 32, lo = lane * per, hi = min(G, lo + per);\n"
  "    int sum = 0;\n"
  "    for (int g = lo; g < hi; ++g) sum += prefix[g + 1];\n"
  "    int incl = sum;\n"
  "    #pragma unroll\n"
  "    for (int o = 1; o < 32; o <<= 1) {\n"
  "      const int t = __shfl_up_sync(0xFFFFFFFFu, incl, o);\n"
  "      if (lane >= o) incl += t;\n"
  "    }\n",
  "    int run = incl - sum;\n"
  "    for (int g = lo; g < hi; ++g) { run += prefix[g + 1]; prefix[g + 1] = run; }\n"
  "    if (lane == 0) prefix[0] = 0;\n"
  "  }\n"
  "  __syncthreads();\n"
  "  return prefix[G];\n"
  "}\n"
  "\n"
  "// Work item -> (group, row): the dense list of valid rows, or every (padded) row.\n"
  "NVF_DEV void nvf_item_row(const NvfQuantParams& p, i64 item, bool dense, const int* prefix, int rows_pad, int& g,\n"
  "                          int& r) {\n"
  "  if (dense) { // the group holding valid row number `item`\n"
  "    int lo = 0, hi = p.groups;\n"
  "    while (hi - lo > 1) {\n"
  "      const int mid = (lo + hi) >> 1;\n"
  "      if (prefix[mid] <= item) lo = mid; else hi = mid;\n"
  "    }\n"
  "    g = lo; r = (int)(item - prefix[lo]);\n"
  "  } else if (p.groups == 1) { // plain [M, K] input: no division\n"
  "    g = 0; r = (int)item;\n"
  "#if defined(NVF_QPROBE) && NVF_QPROBE == 7\n"
  "    if (rows_pad % 128 == 0 && item < rows_pad) {\n"
  "      const int P = (int)(item >> 1), G = rows_pad >> 7;\n"
  "      r = 2 * ((P % G) * 64 + P / G) + (int)(item & 1);\n"
  "    }\n"
  "#endif\n"
  "  } else {\n"
  "    g = (int)(item / rows_pad); r = (int)(item % rows_pad);\n"
  "  }\n"
  "}\n"
  "\n"
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
  "#define NVF_QSTAGE_ARCH 1 // cp.async.bulk and mbarrier transaction counts\n"
  "#else\n"
  "#define NVF_QSTAGE_ARCH 0\n"
  "#endif\n"
  "#define NVF_QSTAGE_MAX 4    // slots per team at most\n"
  "#define NVF_QSTAGE_MINB 3   // CTAs per SM of the staged kernels (no words held across the barrier)\n"
  "extern __shared__ __align__(128) u8 nvf_qstage[]; // staged kernels: p.stage slots of one row per team\n"
  "__shared__ __align__(8) u64 nvf_qbars[NVF_QT / 32 * NVF_QSTAGE_MAX];\n"
  "\n"
  "// The team's threads (a power of two >= 32, aligned in the CTA) meet, so a slot can be refilled.\n"
  "NVF_DEV void nvf_team_sync(int team) {\n"
  "  if (team == 32) __syncwarp();\n"
  "  else asm volatile(\"bar.sync %0, %1;\" : : \"r\"(1 + ((int)threadIdx.x >> (__ffs(team) - 1))), \"r\"(team) : \"memory\");\n"
  "}\n"
  "\n"
  "// Fills a slot with work item `item`'s row (one bulk copy), or, for an item past the end, a\n"
  "// padding row or a row past masked_m, completes the slot's phase with no bytes (the team\n"
  "// reads nothing from it then), so every item takes one phase of its slot's mbarrier.\n"
  "NVF_DEV void nvf_stage_row(const NvfQuantParams& p, i64 item, i64 total, bool dense, const int* prefix, int rows_pad,\n"
  "                           u32 rowbytes, u8* dst, u32 bar) {\n"
  "#if NVF_QSTAGE_ARCH\n"
  "  if (item < total) {\n"
  "    int g, r;\n"
  "    nvf_item_row(p, item, dense, prefix, rows_pad, g, r);\n"
  "    if (r < p.rows && (dense || r < nvf_valid_rows(p.masked_m, g, p.rows))) {\n"
  "      nvf_mbar_expect_tx(bar, rowbytes);\n"
  "      nvf_bulk_load(nvf_smem_u32(dst), (const u8*)p.x + ((i64)g * p.x_group_stride + (i64)r * p.x_row_stride) * 2,\n"
  "                    rowbytes, bar);\n"
  "      return;\n"
  "    }\n"
  "  }\n"
  "  nvf_mbar_arrive(bar);\n"
  "#endif\n"
  "}\n"
  "\n"
  "// Teams of p.team threads quantize one row at a time. Thread l of a team holds the\n"
  "// blocks l, l + team, ... (NB of them) in registers between the row-amax pass and the\n"
  "// quantization; blocks past NB * team (K > 256 * 16 * NB) are read again.\n"
  "// STAGED (sm_90+, plain input, p.stage slots per team, chosen by the host): one thread\n"
  "// per team bulk-copies the team's next rows into shared memory, each slot completing on\n"
  "// its mbarrier, so the next rows' bytes are in flight while this one is quantized at no\n"
  "// cost in registers or issue slots; pass 2 reads the words from the slot again instead of\n"
  "// keeping them in registers (80 registers, 3 CTAs per SM instead of 2), and the slot is\n",
  "// refilled once the team has met after pass 2 (bench/NOTES.md, sixth session).\n"
  "template <bool I32> struct NvfIndex { typedef i64 T; };\n"
  "template <> struct NvfIndex<true> { typedef int T; };\n"
  "\n"
  "// IMG (the _img kernels: unstaged): each row's blocks also widened into img for a GEMM tile of\n"
  "// img_tok tokens (nvf_img_row).\n"
  "template <bool SILU, bool F16, bool STAGED, int NB, bool IMG = false>\n"
  "NVF_DEV void nvf_quantize_rows(const NvfQuantParams& p, int* prefix, u32 (*red)[NVF_QT / 32], u8* img = nullptr,\n"
  "                               int img_tok = 0) {\n"
  "  constexpr bool KF16 = SILU \? false : F16; // dtype of the words kept: SiLU's y is bf16\n"
  "  constexpr bool ST = STAGED && !SILU && NVF_QSTAGE_ARCH;\n"
  "  const int nblk = p.k / 16, kc4 = (nblk + 3) / 4;\n"
  "  int team = p.team, tl = threadIdx.x & (team - 1);\n"
  "  const int tpc = NVF_QT / team;\n"
  "  const int sf_pad_cols = p.sf_linear \? nblk : kc4 * 4;\n"
  "  const i64 sf_gbytes = p.sf_linear \? (i64)p.rows * nblk : nvf_sf_group_bytes_128x4(p.rows, p.k);\n"
  "  const int rows_pad = p.pad_rows \? (p.rows + 127) / 128 * 128 : p.rows;\n"
  "  const bool dense = p.masked_m != nullptr && p.groups <= NVF_QMAXG && (i64)p.groups * p.rows < 0x7FFFFFFF;\n"
  "  typedef typename NvfIndex<ST>::T idx; // work-item numbers (the staged kernels get fewer than 2^30)\n"
  "  // Up to 32 groups and teams of whole warps (the decode shapes): each warp scans masked_m in\n"
  "  // its registers (lane g: valid rows of groups 0..g) and finds a row's group by a ballot, with\n"
  "  // no barrier and no shared-memory search (every lane of a warp has the same work item).\n"
  "  const bool wdense = dense && !ST && p.groups <= 32 && team >= 32;\n"
  "  int wincl = 0;\n"
  "  if (wdense) {\n"
  "    const int lane = threadIdx.x & 31;\n"
  "    wincl = lane < p.groups \? nvf_valid_rows(p.masked_m, lane, p.rows) : 0;\n"
  "    #pragma unroll\n"
  "    for (int o = 1; o < 32; o <<= 1) {\n"
  "      const int t = __shfl_up_sync(0xFFFFFFFFu, wincl, o);\n"
  "      if (lane >= o) wincl += t;\n"
  "    }\n"
  "  }\n"
  "  const idx total = wdense \? (idx)__shfl_sync(0xFFFFFFFFu, wincl, 31)\n"
  "                    : dense \? (idx)nvf_masked_prefix(p, prefix) : (idx)((i64)p.groups * rows_pad);\n"
  "  idx step = (idx)gridDim.x * tpc, first = (idx)blockIdx.x * tpc + threadIdx.x / team, end = total;\n"
  "  int parity = 0;\n"
  "  // The last round (unstaged, not SiLU): its rows, fewer than the teams, are spread over the CTAs\n"
  "  // first and taken by wider teams (up to the whole CTA, no wider than the row has blocks), so a\n"
  "  // thread holds fewer blocks and the round ends sooner; the teams meet at one barrier before it.\n"
  "  // -DNVF_QTAIL=0 (tuning) keeps one team size throughout (0.5.13's kernels).\n"
  "  int tail_team = team;\n"
  "#if !defined(NVF_QTAIL) || NVF_QTAIL\n"
  "  if (!ST && !SILU) { // (the SiLU kernels' teams hold one block a thread: no wider team helps)\n"
  "    const idx full = total / step * step;\n"
  "    const int per = (int)((total - full + gridDim.x - 1) / gridDim.x); // tail rows per CTA, 0 to tpc\n"
  "    int t2 = NVF_QT;\n"
  "    while (t2 > team && (t2 * per > NVF_QT || t2 / 2 >= nblk)) t2 >>= 1;\n"
  "    if (per > 0 && t2 > team) { tail_team = t2; end = full; }\n"
  "  }\n"
  "#endif\n"
  "  // staging state: this team's slots and their mbarriers, the slot of the current item and its phase\n"
  "  const int nslot = ST \? p.stage : 0;\n"
  "  const u32 rowbytes = (u32)p.k * 2u;\n"
  "  u8* slots = nvf_qstage + (threadIdx.x / team) * nslot * rowbytes;\n"
  "  const u32 slot_bar = nvf_smem_u32(nvf_qbars) + 8u * (threadIdx.x / team) * nslot;\n"
  "  int slot = 0;\n"
  "  u32 phase = 0;\n"
  "  if (ST) {\n"
  "    if (threadIdx.x == 0) {\n",
  "      for (int i = 0; i < tpc * nslot; ++i) nvf_mbar_init(nvf_smem_u32(nvf_qbars) + 8u * i, 1);\n"
  "      nvf_fence_mbar_init();\n"
  "    }\n"
  "    __syncthreads();\n"
  "    if (tl == 0)\n"
  "      for (int i = 0; i < nslot; ++i)\n"
  "        nvf_stage_row(p, (i64)blockIdx.x * tpc + threadIdx.x / team + step * i, total, dense, prefix, rows_pad, rowbytes,\n"
  "                      slots + i * rowbytes, slot_bar + 8u * i);\n"
  "  }\n"
  "\n"
  "  for (;;) { // all rows, or all but the last round's; then (end < total) the last round's\n"
  "    // this thread's first block's bytes (128x4: nvf_sf_offset_128x4(0, tl, kc4), spelled out: the\n"
  "    // helper's form compiles to other SASS than the kernels measured and tested)\n"
  "    const int tq = tl * 8, tsf = p.sf_linear \? tl : (tl >> 2) * 512 + (tl & 3);\n"
  "    for (idx item = first; item < end; item += step) {\n"
  "      int g, r;\n"
  "      if (wdense) { // lanes past the groups hold the total, which no item reaches\n"
  "        g = __popc(__ballot_sync(0xFFFFFFFFu, wincl <= item));\n"
  "        const int before = __shfl_sync(0xFFFFFFFFu, wincl, (g + 31) & 31);\n"
  "        r = (int)item - (g \? before : 0);\n"
  "      } else {\n"
  "        nvf_item_row(p, item, dense, prefix, rows_pad, g, r);\n"
  "      }\n"
  "      u8* sfg = p.sf + (i64)g * sf_gbytes;\n"
  "      if (r >= p.rows || (!dense && r >= nvf_valid_rows(p.masked_m, g, p.rows))) {\n"
  "        if (ST) { // nothing was copied for this row (nvf_stage_row only arrived): pass the slot on\n"
  "          if (tl == 0) nvf_stage_row(p, item + step * nslot, total, dense, prefix, rows_pad, rowbytes,\n"
  "                                     slots + slot * rowbytes, slot_bar + 8u * slot);\n"
  "          phase ^= slot == nslot - 1;\n"
  "          slot = slot == nslot - 1 \? 0 : slot + 1;\n"
  "        }\n"
  "        if (r >= p.rows) // zero SF padding row of the 128x4 layout\n"
  "          for (int c = tl; c < sf_pad_cols; c += team) sfg[nvf_sf_offset_128x4(r, c, kc4)] = 0;\n"
  "        continue; // a row past masked_m: neither read nor written\n"
  "      }\n"
  "      const u8* xrow = (const u8*)p.x + ((i64)g * p.x_group_stride + (i64)r * p.x_row_stride) * 2;\n"
  "      const u8* srow = slots + slot * rowbytes;\n"
  "      const float gs = p.gate_scale \? p.gate_scale[g] : 1.0f, us = p.up_scale \? p.up_scale[g] : 1.0f;\n"
  "\n"
  "      // Pass 1: this thread's first NB blocks into registers, their amax; the row amax.\n"
  "      u32 v[NB][8], bmax[NB];\n"
  "      u32 rmax = 0;\n"
  "      if (ST) nvf_mbar_wait(slot_bar + 8u * slot, phase); // the row's bytes are in the slot\n"
  "      #pragma unroll\n"
  "      for (int i = 0; i < NB; ++i) {\n"
  "        const int b = tl + team * i;\n"
  "        bmax[i] = 0;\n"
  "        // staged: a block past the row reads the row's last one instead (inside the slot, never\n"
  "        // used), so the words are defined on every path without zeroing them (no words live\n"
  "        // across rows)\n"
  "        if (ST) nvf_load_block<false, F16>(p, srow, min(b, nblk - 1), gs, us, v[i]);\n"
  "        else if (b < nblk) nvf_load_block<SILU, F16>(p, xrow, b, gs, us, v[i]);\n"
  "      }\n"
  "      #pragma unroll\n"
  "      for (int i = 0; i < NB; ++i)\n"
  "        if (tl + team * i < nblk) {\n"
  "          bmax[i] = nvf_block_amax_bits<KF16>(v[i]);\n"
  "          rmax = bmax[i] > rmax \? bmax[i] : rmax;\n"
  "        }\n"
  "      NvfRowQ rq;\n"
  "      float& s = rq.s;\n"
  "      int& mode = rq.mode;\n"
  "      if (p.per_token) {\n"
  "        if (!ST) // (the staged kernels get rows that fit the register blocks: no second read)\n"
  "        for (int b = tl + team * NB; b < nblk; b += team) {\n"
  "          u32 tw[8];\n"
  "          nvf_load_block<SILU, F16>(p, xrow, b, gs, us, tw);\n"
  "          const u32 m = nvf_block_amax_bits<KF16>(tw);\n",
  "          rmax = m > rmax \? m : rmax;\n"
  "        }\n"
  "        rmax = nvf_team_max(rmax, team, red, parity);\n"
  "        parity ^= 1;\n"
  "        s = __fmul_rn(__uint_as_float(rmax), nvf_f32(NVF_RCP2688_BITS));\n"
  "        if (rmax >= 0x7F800000u) { s = nvf_f32(0x7FC00000u); mode = 2; }\n"
  "        else if (s < NVF_FLT_MIN) { s = 0.0f; mode = 1; } // zero row, or the product underflowed\n"
  "        else mode = 0;\n"
  "        if (tl == 0) p.scale_out[(i64)g * p.rows + r] = s;\n"
  "      } else {\n"
  "        s = p.scale_in \? p.scale_in[g] : p.scale_value;\n"
  "        if (s == 0.0f) mode = 1;\n"
  "        else if (!(s >= NVF_FLT_MIN) || nvf_is_nonfinite(s)) mode = 2;\n"
  "        else mode = 0;\n"
  "      }\n"
  "      const bool in_range = s >= nvf_f32(0x0D800000u) && s < 256.0f; // 2^-100 <= s < 2^8 (so mode 0)\n"
  "      rq.fast = in_range && p.fo6 == 0;\n"
  "      // 1/s: rcp.rn, which is 1.0f/s correctly rounded, the in-range way where it can be\n"
  "      rq.t = in_range \? __fmul_rn(nvf_rcp_in_range(s), nvf_f32(NVF_RCP6_BITS))\n"
  "             : mode == 0 \? __fmul_rn(__fdiv_rn(1.0f, s), nvf_f32(NVF_RCP6_BITS)) : 0.0f;\n"
  "      rq.s120 = __fmul_rn(s, nvf_f32(0x7B800000u));                                  // s * 2^120\n"
  "\n"
  "      // Pass 2: quantize and store; the register blocks unrolled (no copies of their words),\n"
  "      // blocks past them read again. This thread's block i is b = tl + team * i: its codes at\n"
  "      // qt + i * team * 8, its SF byte at st + i * sstep (128x4: the host's teams are multiples\n"
  "      // of 4, so b % 4 = tl % 4 and b / 4 = tl / 4 + i * team / 4).\n"
  "      u8* qt = p.q + ((i64)g * p.rows + r) * (p.k / 2) + tq;\n"
  "  #if defined(NVF_QPROBE) && NVF_QPROBE == 6\n"
  "      const int rsf = rows_pad % 128 == 0 \? (r & 127) * (rows_pad >> 7) + (r >> 7) : r; // row whose SF slots to use\n"
  "  #else\n"
  "      const int rsf = r;\n"
  "  #endif\n"
  "  #if defined(NVF_QPROBE) && NVF_QPROBE == 3\n"
  "      u8* st = sfg + (i64)r * nblk + tl;\n"
  "      const int sstep = team;\n"
  "  #else\n"
  "      u8* st = sfg + (p.sf_linear \? (i64)r * nblk : nvf_sf_offset_128x4(rsf, 0, kc4)) + tsf;\n"
  "      const int sstep = p.sf_linear \? team : team * 128;\n"
  "  #endif\n"
  "      u8* const imgp = IMG \? nvf_img_row(p, img, img_tok, g, r) : nullptr;\n"
  "      const int bmma = img_tok * 32;\n"
  "      #pragma unroll\n"
  "      for (int i = 0; i < NB; ++i) {\n"
  "        const int b = tl + team * i;\n"
  "        if (ST && b < nblk) nvf_load_block<false, F16>(p, srow, b, gs, us, v[i]); // again, from the slot\n"
  "        if (b < nblk)\n"
  "          nvf_quantize_store<KF16, IMG>(v[i], bmax[i], rq, p.fo6, qt + i * team * 8, st + i * sstep, imgp, bmma, b);\n"
  "      }\n"
  "      if (ST) { // every thread of the team is done with the slot's words: refill it\n"
  "        nvf_team_sync(team);\n"
  "        if (tl == 0) nvf_stage_row(p, item + step * nslot, total, dense, prefix, rows_pad, rowbytes, slots + slot * rowbytes,\n"
  "                                   slot_bar + 8u * slot);\n"
  "        phase ^= slot == nslot - 1;\n"
  "        slot = slot == nslot - 1 \? 0 : slot + 1;\n"
  "      }\n"
  "      if (!ST)\n"
  "      for (int b = tl + team * NB, i = NB; b < nblk; b += team, ++i) {\n"
  "        u32 tw[8], am = 0;\n"
  "        if (mode == 0) {\n"
  "          nvf_load_block<SILU, F16>(p, xrow, b, gs, us, tw);\n"
  "          am = nvf_block_amax_bits<KF16>(tw);\n"
  "        }\n"
  "        nvf_quantize_store<KF16, IMG>(tw, am, rq, p.fo6, qt + (i64)i * team * 8, st + (i64)i * sstep, imgp, bmma, b);\n"
  "      }\n"
  "      if (IMG) // the last step's blocks past K: zeros, as the pre-pass writes them\n"
  "        for (int b = nblk + tl; b < (nblk + 7) / 8 * 8; b += team) nvf_img_block(imgp, bmma, b, 0u, 0u, 0u);\n",
  "      if (!p.sf_linear)\n"
  "        for (int c = nblk + tl; c < sf_pad_cols; c += team) sfg[nvf_sf_offset_128x4(r, c, kc4)] = 0;\n"
  "    }\n"
  "    if (end == total) break; // (the last round sets end = total)\n"
  "    __syncthreads(); // (every team is done with red and its named barrier)\n"
  "    team = tail_team; tl = threadIdx.x & (team - 1);\n"
  "    first = end + (idx)(threadIdx.x / team) * gridDim.x + blockIdx.x; // the last round's row j on CTA j % grid\n"
  "    end = total; step = total; parity = 0;\n"
  "  }\n"
  "}\n"
  "\n"
  "// Specialisations of this file: -DNVF_SILU builds only the fused SiLU kernel (its exp and\n"
  "// twice-wide loads make it the slow one to compile), the default the rest.\n"
  "// One kernel per input dtype (a run-time switch inside one kernel keeps ptxas from\n"
  "// unrolling the second instantiation's register blocks). The staged kernels compile for\n"
  "// every architecture; below sm_90 they are the plain ones, never launched.\n"
  "#define NVF_QUANT_KERNEL(name, silu, f16, staged, nb, minb)                              \\\n"
  "  extern \"C\" __global__ void __launch_bounds__(NVF_QT, minb) name(const NvfQuantParams p) { \\\n"
  "    nvf_pdl_enter();                                                                      \\\n"
  "    __shared__ int prefix[NVF_QMAXG + 1];                                                 \\\n"
  "    __shared__ __align__(16) u32 red[2][NVF_QT / 32];                                     \\\n"
  "    nvf_quantize_rows<silu, f16, staged, nb>(p, prefix, red);                             \\\n"
  "  }\n"
  "#define NVF_QUANT_IMG_KERNEL(name, silu, nb, minb)                                         \\\n"
  "  extern \"C\" __global__ void __launch_bounds__(NVF_QT, minb) name(const NvfQuantParams p, u8* img, int img_tok) { \\\n"
  "    nvf_pdl_enter();                                                                      \\\n"
  "    __shared__ int prefix[NVF_QMAXG + 1];                                                 \\\n"
  "    __shared__ __align__(16) u32 red[2][NVF_QT / 32];                                     \\\n"
  "    nvf_quantize_rows<silu, false, false, nb, true>(p, prefix, red, img, img_tok);        \\\n"
  "  }\n"
  "// (The SiLU build with -DNVF_QSILU2 is the \"wide\" SiLU specialisation of the host: rows\n"
  "// past one register block per thread, K > 4096, get 2 blocks and 3 CTAs, so fewer blocks\n"
  "// compute their SiLU twice. -DNVF_QSTAGED_ONLY builds only the staged kernels, compiled\n"
  "// when the host first picks them.)\n"
  "// The _img kernels (bf16 input, the expert layer's) also write the widened tokens of the\n"
  "// layer's GEMM (nvf_img_block); -DNVF_QIMG_ONLY builds only them (compiled when the layer\n"
  "// first needs them).\n"
  "#if defined(NVF_SILU) && defined(NVF_QIMG_ONLY)\n"
  "NVF_QUANT_IMG_KERNEL(nvf_silu_mul_quantize_img, true, NVF_QNB, NVF_QMINB)\n"
  "#elif defined(NVF_SILU)\n"
  "NVF_QUANT_KERNEL(nvf_silu_mul_quantize, true, false, false, NVF_QNB, NVF_QMINB)\n"
  "NVF_QUANT_KERNEL(nvf_silu_mul_quantize_f16, true, true, false, NVF_QNB, NVF_QMINB)\n"
  "#elif defined(NVF_QIMG_ONLY)\n"
  "NVF_QUANT_IMG_KERNEL(nvf_quantize_img, false, NVF_QNB, NVF_QMINB)\n"
  "#elif defined(NVF_QSTAGED_ONLY)\n"
  "NVF_QUANT_KERNEL(nvf_quantize_staged, false, false, true, NVF_QNB, NVF_QSTAGE_MINB)\n"
  "NVF_QUANT_KERNEL(nvf_quantize_staged_f16, false, true, true, NVF_QNB, NVF_QSTAGE_MINB)\n"
  "#else\n"
  "NVF_QUANT_KERNEL(nvf_quantize, false, false, false, NVF_QNB, NVF_QMINB)\n"
  "NVF_QUANT_KERNEL(nvf_quantize_f16, false, true, false, NVF_QNB, NVF_QMINB)\n"
  "\n"
  "// ---- weight quantization helpers ---------------------------------------------------\n"
  "// Per-expert max |w| over finite values (a non-finite weight faults only its own\n",
  "// block later), as f32 bits into amax[E] (zeroed by the host first).\n"
  "extern \"C\" __global__ void nvf_weight_amax(const u8* w, int fp16, i64 elems_per_expert, int blocks_per_expert,\n"
  "                                           u32* amax) {\n"
  "  nvf_pdl_enter();\n"
  "  const int e = blockIdx.x / blocks_per_expert, bx = blockIdx.x % blocks_per_expert;\n"
  "  const u8* base = w + (i64)e * elems_per_expert * 2;\n"
  "  u32 m = 0;\n"
  "  for (i64 i = ((i64)bx * blockDim.x + threadIdx.x) * 8; i < elems_per_expert;\n"
  "       i += (i64)blocks_per_expert * blockDim.x * 8) {\n"
  "    const uint4 a = *(const uint4*)(base + i * 2);\n"
  "    const u32 ws[4] = {a.x, a.y, a.z, a.w};\n"
  "    #pragma unroll\n"
  "    for (int j = 0; j < 8; ++j) {\n"
  "      const u32 h = (ws[j >> 1] >> (16 * (j & 1))) & 0xFFFFu;\n"
  "      const u32 f = __float_as_uint(fp16 \? nvf_fp16_to_f32((u16)h) : nvf_bf16_to_f32(h)) & 0x7FFFFFFFu;\n"
  "      if (f < 0x7F800000u && f > m) m = f;\n"
  "    }\n"
  "  }\n"
  "  #pragma unroll\n"
  "  for (int o = 16; o > 0; o >>= 1) {\n"
  "    const u32 t = __shfl_xor_sync(0xFFFFFFFFu, m, o);\n"
  "    m = t > m \? t : m;\n"
  "  }\n"
  "  if ((threadIdx.x & 31) == 0 && m) atomicMax(amax + e, m);\n"
  "}\n"
  "\n"
  "// In place: amax bits -> decode scale amax / 2688 (as ModelOpt's weight_scale_2); a\n"
  "// scale that is 0 or underflows to a subnormal marks an all-zero expert (scale 0).\n"
  "extern \"C\" __global__ void nvf_amax_to_scale(u32* amax_then_scale, int n) {\n"
  "  nvf_pdl_enter();\n"
  "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i >= n) return;\n"
  "  float s = __fdiv_rn(__uint_as_float(amax_then_scale[i]), 2688.0f);\n"
  "  if (s < NVF_FLT_MIN) s = 0.0f;\n"
  "  amax_then_scale[i] = __float_as_uint(s);\n"
  "}\n"
  "\n"
  "// out[i] = a[i] * b[i] (b null: a[i]); the expert layer's GEMM alphas.\n"
  "extern \"C\" __global__ void nvf_scale_product(const float* a, const float* b, float* out, int n) {\n"
  "  nvf_pdl_enter();\n"
  "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n) out[i] = b \? __fmul_rn(a[i], b[i]) : a[i];\n"
  "}\n"
  "\n"
  "// ---- scale-factor layout conversion (every destination byte written, padding 0) -------\n"
  "extern \"C\" __global__ void nvf_sf_convert(const u8* src, u8* dst, int groups, int rows, int k,\n"
  "                                          int to_128x4) {\n"
  "  nvf_pdl_enter();\n"
  "  const int nblk = k / 16, kc4 = (nblk + 3) / 4;\n"
  "  const i64 lin = (i64)rows * nblk, sw = nvf_sf_group_bytes_128x4(rows, k);\n"
  "  const i64 per_group = to_128x4 \? sw : lin;\n"
  "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < per_group * groups;\n"
  "       i += (i64)gridDim.x * blockDim.x) {\n"
  "    const i64 g = i / per_group, o = i % per_group;\n"
  "    if (to_128x4) {\n"
  "      // invert the 128x4 offset: o = rb*kc4*512 + cb*512 + r32*16 + r4*4 + c4\n"
  "      const i64 rb = o / ((i64)kc4 * 512), rem = o % ((i64)kc4 * 512);\n"
  "      const int cb = (int)(rem / 512), inner = (int)(rem % 512);\n"
  "      const i64 r = rb * 128 + ((inner >> 2) & 3) * 32 + (inner >> 4);\n"
  "      const int c = cb * 4 + (inner & 3);\n"
  "      dst[g * sw + o] = (r < rows && c < nblk) \? src[g * lin + r * nblk + c] : (u8)0;\n"
  "    } else {\n"
  "      const i64 r = o / nblk;\n"
  "      const int c = (int)(o % nblk);\n"
  "      dst[g * lin + o] = src[g * sw + nvf_sf_offset_128x4(r, c, kc4)];\n"
  "    }\n"
  "  }\n"
  "}\n"
  "\n"
  "// ---- weight byte layout conversion (nvfp4moe_weights_relayout), 16 bytes a thread -------\n"
  "// Row-major <-> tiled (gemm_common.cuh) over rows = G N rows of K/2 bytes (K % 32 == 0); N % 16\n"
  "// == 0, so a 16-row tile never spans two groups. A tiled row takes RB = ceil(K / 128) 64 bytes:\n"
  "// to tiled, the pieces past K/2 of a last partial step are written as zeros. Each 4-byte word's codes\n",
  "// are encoded on the way to tiled and decoded on the way back (nvf_wenc_word, dequant_bf16.cuh).\n"
  "extern \"C\" __global__ void nvf_weights_relayout(const u8* src, u8* dst, i64 rows, int k, int to_tiled) {\n"
  "  nvf_pdl_enter();\n"
  "  const int pieces = (int)(((i64)k + 127) / 128 * 4); // 16-byte pieces per tiled row\n"
  "  const i64 rb = (i64)pieces * 16;\n"
  "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < rows * pieces; i += (i64)gridDim.x * blockDim.x) {\n"
  "    const i64 r = i / pieces;\n"
  "    const int o = (int)(i % pieces) * 16;\n"
  "    const i64 lin = r * (k / 2) + o, til = (r & ~(i64)15) * rb + (i64)(o >> 6) * 1024 + (r & 15) * 64 + (o & 63);\n"
  "    if (o < k / 2) {\n"
  "      uint4 v = *(const uint4*)(src + (to_tiled \? lin : til));\n"
  "      if (NVF_WENC_ON) {\n"
  "        u32* w = &v.x;\n"
  "        #pragma unroll\n"
  "        for (int j = 0; j < 4; ++j) w[j] = to_tiled \? nvf_wenc_word(w[j]) : nvf_wdec_word(w[j]);\n"
  "      }\n"
  "      *(uint4*)(dst + (to_tiled \? til : lin)) = v;\n"
  "    } else if (to_tiled)\n"
  "      *(uint4*)(dst + til) = make_uint4(0, 0, 0, 0);\n"
  "  }\n"
  "}\n"
  "\n"
  "// ---- dequantization: x = (e2m1(q) * e4m3(sf)) * s, to f32 or bf16 ---------------------\n"
  "struct NvfDequantParams {\n"
  "  const u8* q; const u8* sf; const float* scale; const int* masked_m; void* out;\n"
  "  int groups, rows, k, sf_linear, scale_per_row, out_bf16;\n"
  "};\n"
  "extern \"C\" __global__ void nvf_dequantize(const NvfDequantParams p) {\n"
  "  nvf_pdl_enter();\n"
  "  const int nblk = p.k / 16, kc4 = (nblk + 3) / 4;\n"
  "  const i64 sf_gbytes = p.sf_linear \? (i64)p.rows * nblk : nvf_sf_group_bytes_128x4(p.rows, p.k);\n"
  "  const i64 total = (i64)p.groups * p.rows * nblk;\n"
  "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {\n"
  "    const int b = (int)(i % nblk);\n"
  "    const i64 gr = i / nblk;\n"
  "    const int g = (int)(gr / p.rows), r = (int)(gr % p.rows);\n"
  "    if (r >= nvf_valid_rows(p.masked_m, g, p.rows)) continue;\n"
  "    const float s = p.scale_per_row \? p.scale[gr] : p.scale[g];\n"
  "    const u8 sfb = p.sf[(i64)g * sf_gbytes + (p.sf_linear \? (i64)r * nblk + b : nvf_sf_offset_128x4(r, b, kc4))];\n"
  "    const float sff = nvf_e4m3_to_f32(sfb);\n"
  "    const uint2 qq = *(const uint2*)(p.q + gr * (p.k / 2) + (i64)b * 8);\n"
  "    float o[16];\n"
  "    #pragma unroll\n"
  "    for (int j = 0; j < 16; ++j) {\n"
  "      const u32 c = ((j < 8 \? qq.x : qq.y) >> (4 * (j & 7))) & 0xFu;\n"
  "      // a faulted block (SF 0x7F) is NaN with fixed bits, so every backend writes the same\n"
  "      o[j] = sfb == 0x7F \? nvf_f32(0x7FC00000u) : __fmul_rn(__fmul_rn(nvf_e2m1_to_f32(c), sff), s);\n"
  "    }\n"
  "    const i64 base = gr * p.k + (i64)b * 16;\n"
  "    if (p.out_bf16) {\n"
  "      u32* d = (u32*)((u16*)p.out + base);\n"
  "      #pragma unroll\n"
  "      for (int j = 0; j < 8; ++j) d[j] = nvf_f32_to_bf16(o[2 * j]) | (nvf_f32_to_bf16(o[2 * j + 1]) << 16);\n"
  "    } else {\n"
  "      float* d = (float*)p.out + base;\n"
  "      #pragma unroll\n"
  "      for (int j = 0; j < 16; ++j) d[j] = o[j];\n"
  "    }\n"
  "  }\n"
  "}\n"
  "#endif // NVF_SILU\n",
  0};
static const char* const nvfp4moe__src_scheduler_cuh[] = {
  "// scheduler.cuh -- persistent masked tile scheduler shared by the GEMM kernels.\n"
  "//\n"
  "// Maps a CTA's increasing linear tile index to (group, m-tile, n-tile). Groups are\n"
  "// walked in order; group g holds ceil(valid_m[g] / BM) * n_tiles tiles, valid_m read on\n"
  "// the device (never on the host), so a captured CUDA graph replays with new counts\n"
  "// (FlashInfer MaskedScheduler, DeepGEMM masked scheduler).\n"
  "#pragma once\n"
  "#include \"common.cuh\"\n"
  "\n"
  "struct NvfTile {\n"
  "  int g, m_tile, n_tile, valid_m;\n"
  "};\n"
  "\n"
  "struct NvfMaskedScheduler {\n"
  "  const int* masked_m;\n"
  "  int groups, m_max, bm, n_tiles;\n"
  "  int g, g_valid;\n"
  "  i64 base, g_tiles;\n"
  "\n"
  "  NVF_DEV void init(const int* mm, int groups_, int m_max_, int bm_, int n_tiles_) {\n"
  "    masked_m = mm; groups = groups_; m_max = m_max_; bm = bm_; n_tiles = n_tiles_;\n"
  "    g = 0; base = 0;\n"
  "    load_group();\n"
  "  }\n"
  "  NVF_DEV void load_group() {\n"
  "    g_valid = nvf_valid_rows(masked_m, g, m_max);\n"
  "    g_tiles = (i64)((g_valid + bm - 1) / bm) * n_tiles;\n"
  "  }\n"
  "  // Tile t (t never decreases between calls); false once t is past the last group.\n"
  "  NVF_DEV bool get(i64 t, NvfTile& tile) {\n"
  "    while (t >= base + g_tiles) {\n"
  "      base += g_tiles;\n"
  "      if (++g >= groups) return false;\n"
  "      load_group();\n"
  "    }\n"
  "    const i64 local = t - base;\n"
  "    tile.g = g;\n"
  "    tile.m_tile = (int)(local / n_tiles);\n"
  "    tile.n_tile = (int)(local % n_tiles);\n"
  "    tile.valid_m = g_valid;\n"
  "    return true;\n"
  "  }\n"
  "};\n",
  0};
static const nvfp4moe__source nvfp4moe__sources[] = {
  {"common.cuh", nvfp4moe__src_common_cuh},
  {"dequant_bf16.cuh", nvfp4moe__src_dequant_bf16_cuh},
  {"gemm_common.cuh", nvfp4moe__src_gemm_common_cuh},
  {"gemm_portable.cu", nvfp4moe__src_gemm_portable_cu},
  {"gemm_sm100.cu", nvfp4moe__src_gemm_sm100_cu},
  {"gemm_swapab.cu", nvfp4moe__src_gemm_swapab_cu},
  {"gemm_wgmma.cu", nvfp4moe__src_gemm_wgmma_cu},
  {"gemm_wgmma_step.cuh", nvfp4moe__src_gemm_wgmma_step_cuh},
  {"gemm_wgmma_ws.cu", nvfp4moe__src_gemm_wgmma_ws_cu},
  {"ptx_mma.cuh", nvfp4moe__src_ptx_mma_cuh},
  {"ptx_tcgen05.cuh", nvfp4moe__src_ptx_tcgen05_cuh},
  {"ptx_wgmma.cuh", nvfp4moe__src_ptx_wgmma_cuh},
  {"quantize.cu", nvfp4moe__src_quantize_cu},
  {"scheduler.cuh", nvfp4moe__src_scheduler_cuh},
  {0, 0}};
/* END GENERATED KERNEL SOURCE */

/* --------------------------------------------------------------------------------------
   Kernel registry: each specialisation is one NVRTC program (a source file plus
   compile-time constants), compiled once per process and context, cached on disk
   -------------------------------------------------------------------------------------- */

#define NVFP4MOE__CACHE_FORMAT 1
#define NVFP4MOE__MAX_KERNELS 9

enum { NVFP4MOE__NEEDS_SM80 = 0, NVFP4MOE__NEEDS_SM90A = 1, NVFP4MOE__NEEDS_SM100 = 2 };

typedef struct nvfp4moe__spec {
  const char* name;
  const char* file;
  const char* defines[8];
  int needs;    /* NVFP4MOE__NEEDS_*: which targets can build it */
  int fmad_off; /* bit-exact numerics: no FMA contraction anywhere */
  const char* kernels[NVFP4MOE__MAX_KERNELS];
} nvfp4moe__spec;

enum {
  NVFP4MOE__SPEC_QUANTIZE = 0,
  NVFP4MOE__SPEC_QUANTIZE_STAGED,
  NVFP4MOE__SPEC_SILU_QUANTIZE,
  NVFP4MOE__SPEC_SILU_QUANTIZE_WIDE,
  NVFP4MOE__SPEC_QUANTIZE_IMG,
  NVFP4MOE__SPEC_SILU_QUANTIZE_IMG,
  NVFP4MOE__SPEC_QUANTIZE_IMG_F16, /* the same two for a GEMM on TILED weights (F16 operands) */
  NVFP4MOE__SPEC_SILU_QUANTIZE_IMG_F16,
  NVFP4MOE__SPEC_QUANTIZE_LAST = NVFP4MOE__SPEC_SILU_QUANTIZE_IMG_F16,
  NVFP4MOE__SPEC_GEMM_P16,
  NVFP4MOE__SPEC_GEMM_P32,
  NVFP4MOE__SPEC_GEMM_P64,
  NVFP4MOE__SPEC_GEMM_P128,
  NVFP4MOE__SPEC_GEMM_T8,
  NVFP4MOE__SPEC_GEMM_T16,
  NVFP4MOE__SPEC_GEMM_T32,
  NVFP4MOE__SPEC_GEMM_T48,
  NVFP4MOE__SPEC_GEMM_W32,
  NVFP4MOE__SPEC_GEMM_W64,
  NVFP4MOE__SPEC_GEMM_W128,
  NVFP4MOE__SPEC_GEMM_W64_WG3,
  NVFP4MOE__SPEC_GEMM_W128_WG3,
  NVFP4MOE__SPEC_GEMM_W16_WG4,
  NVFP4MOE__SPEC_GEMM_W32_WG4,
  NVFP4MOE__SPEC_GEMM_W48_WG3,
  NVFP4MOE__SPEC_GEMM_W48_WG4,
  NVFP4MOE__SPEC_GEMM_W64_WG4,
  NVFP4MOE__SPEC_GEMM_WS128, /* wgmma with a token producer warpgroup (gemm_wgmma_ws.cu) */
  NVFP4MOE__SPEC_GEMM_WS48,
  NVFP4MOE__SPEC_GEMM_WS64,
  NVFP4MOE__SPEC_GEMM_WS32,
  NVFP4MOE__SPEC_GEMM_WS128_VARN, /* the same four with the MMAs' N fitted to a part-full tile (NVF_VARN) */
  NVFP4MOE__SPEC_GEMM_WS48_VARN,
  NVFP4MOE__SPEC_GEMM_WS64_VARN,
  NVFP4MOE__SPEC_GEMM_WS32_VARN,
  NVFP4MOE__SPEC_GEMM_LAST = NVFP4MOE__SPEC_GEMM_WS32_VARN,
  NVFP4MOE__SPEC_GEMM_SM100,
  /* twins of GEMM_P16 .. GEMM_LAST, in that order, for TILED weights (-DNVF_WTILED=1) */
  NVFP4MOE__SPEC_GEMM_TILED_FIRST,
  /* twins of the TILED token-producer tiles (GEMM_WS128 .. GEMM_WS32_VARN, in that order) for K % 256
     == 0: their weight loads without predicates or zero fills (-DNVF_WKFULL=1) */
  NVFP4MOE__SPEC_GEMM_K256_FIRST = NVFP4MOE__SPEC_GEMM_TILED_FIRST + NVFP4MOE__SPEC_GEMM_LAST - NVFP4MOE__SPEC_GEMM_P16 + 1,
  /* and of the TILED 8-token swap-AB tile (GEMM_T8), the same way */
  NVFP4MOE__SPEC_GEMM_K256_T8 = NVFP4MOE__SPEC_GEMM_K256_FIRST + NVFP4MOE__SPEC_GEMM_WS32_VARN - NVFP4MOE__SPEC_GEMM_WS128 + 1,
  /* the _k256 twins of GEMM_WS128 and GEMM_WS128_VARN built for the resident grid (-DNVF_PERSIST=1), for
     K <= 1024 (nvfp4moe__ws_res128) */
  NVFP4MOE__SPEC_GEMM_K256_T128R,
  NVFP4MOE__SPEC_GEMM_K256_T128R_VARN,
  NVFP4MOE__SPEC_COUNT
};
/* kernels of the quantize specialisation */
enum {
  NVFP4MOE__K_QUANTIZE = 0, NVFP4MOE__K_WEIGHT_AMAX, NVFP4MOE__K_AMAX_TO_SCALE, NVFP4MOE__K_SCALE_PRODUCT,
  NVFP4MOE__K_SF_CONVERT, NVFP4MOE__K_DEQUANTIZE, NVFP4MOE__K_QUANTIZE_F16, NVFP4MOE__K_WEIGHTS_RELAYOUT
};
/* kernels of the quantize_staged specialisation */
enum { NVFP4MOE__K_QUANTIZE_STAGED = 0, NVFP4MOE__K_QUANTIZE_STAGED_F16 };
/* kernels of the silu_quantize specialisation */
/* kernels of the silu_quantize and silu_quantize_wide specialisations */
enum { NVFP4MOE__K_SILU_QUANTIZE = 0, NVFP4MOE__K_SILU_QUANTIZE_F16 };

/* The kernels of every swap-AB and wgmma module: plain weight loads, then the same kernel with
   256-byte L2 fetches (nvfp4moe__gemm_kernel picks one). */
#define NVFP4MOE__SWAPAB_KERNELS {"nvf_gemm_swapab", "nvf_gemm_swapab_l2", 0}
#define NVFP4MOE__WGMMA_KERNELS {"nvf_gemm_wgmma", "nvf_gemm_wgmma_l2", 0}
#define NVFP4MOE__WS_KERNELS {"nvf_gemm_wgmma_ws", "nvf_gemm_wgmma_ws_l2", "nvf_ws_widen_tokens", 0}
/* ... and of their twins for TILED weights: one kernel (the 256-byte fetch measured no gain
   on tiled weights); the portable module has one kernel either way */
#define NVFP4MOE__SWAPAB_TILED_KERNELS {"nvf_gemm_swapab_tiled", 0}
/* the 8-token one's also has its token pre-pass (1) and the kernel reading its workspace (2) */
#define NVFP4MOE__SWAPAB_T8_TILED_KERNELS {"nvf_gemm_swapab_tiled", "nvf_sw_widen_tokens", "nvf_gemm_swapab_ws_tiled", 0}
#define NVFP4MOE__WGMMA_TILED_KERNELS {"nvf_gemm_wgmma_tiled", 0}
#define NVFP4MOE__WS_TILED_KERNELS {"nvf_gemm_wgmma_ws_tiled", "nvf_ws_widen_tokens", 0}
#define NVFP4MOE__PORTABLE_KERNELS {"nvf_gemm_portable", 0}
/* The GEMM specialisations, once per weight layout: SUF is the name suffix, TD the layout
   define (0: none), PK/S8K/SK/WK/XK the kernel lists of the portable, 8-token swap-AB, other
   swap-AB, wgmma and warp-specialised wgmma modules. The
   wgmma heuristic picks ws_t32_wg4, ws_t48_wg4, ws_t64_wg4 and ws_t128_wg3 (gemm_wgmma_ws.cu: four or
   three consumer warpgroups, 256 or 192 weight rows, and a token producer warpgroup), or their _varn
   twins (-DNVF_VARN=1: MMAs' N fitted to a part-full tile) where 0 < expected_m < m_max; the
   gemm_wgmma.cu tiles stay for forced configurations and A/Bs (bench/NOTES.md). */
#define NVFP4MOE__GEMM_SPECS(SUF, TD, PK, S8K, SK, WK, XK) \
    {"gemm_portable_m16" SUF, "gemm_portable.cu", {"-DNVF_BM=16", "-DNVF_WARPS_M=1", "-DNVF_WARPS_N=4", TD, 0},        \
     NVFP4MOE__NEEDS_SM80, 0, PK},                                                                                     \
    {"gemm_portable_m32" SUF, "gemm_portable.cu", {"-DNVF_BM=32", "-DNVF_WARPS_M=2", "-DNVF_WARPS_N=2", TD, 0},        \
     NVFP4MOE__NEEDS_SM80, 0, PK},                                                                                     \
    {"gemm_portable_m64" SUF, "gemm_portable.cu", {"-DNVF_BM=64", "-DNVF_WARPS_M=2", "-DNVF_WARPS_N=2", TD, 0},        \
     NVFP4MOE__NEEDS_SM80, 0, PK},                                                                                     \
    {"gemm_portable_m128" SUF, "gemm_portable.cu", {"-DNVF_BM=128", "-DNVF_WARPS_M=4", "-DNVF_WARPS_N=2", TD, 0},      \
     NVFP4MOE__NEEDS_SM80, 0, PK},                                                                                     \
    {"gemm_swapab_t8" SUF, "gemm_swapab.cu", {"-DNVF_NT=1", TD, 0}, NVFP4MOE__NEEDS_SM80, 0, S8K},                     \
    {"gemm_swapab_t16" SUF, "gemm_swapab.cu", {"-DNVF_NT=2", TD, 0}, NVFP4MOE__NEEDS_SM80, 0, SK},                     \
    {"gemm_swapab_t32" SUF, "gemm_swapab.cu", {"-DNVF_NT=4", TD, 0}, NVFP4MOE__NEEDS_SM80, 0, SK},                     \
    {"gemm_swapab_t48" SUF, "gemm_swapab.cu", {"-DNVF_NT=6", TD, 0}, NVFP4MOE__NEEDS_SM80, 0, SK},                     \
    {"gemm_sm90_t32" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=32", "-DNVF_WG=2", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK},       \
    {"gemm_sm90_t64" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=64", "-DNVF_WG=2", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK},       \
    {"gemm_sm90_t128" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=128", "-DNVF_WG=2", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK},     \
    {"gemm_sm90_t64_wg3" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=64", "-DNVF_WG=3", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK},   \
    {"gemm_sm90_t128_wg3" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=128", "-DNVF_WG=3", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK}, \
    {"gemm_sm90_t16_wg4" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=16", "-DNVF_WG=4", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK},   \
    {"gemm_sm90_t32_wg4" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=32", "-DNVF_WG=4", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK},   \
    {"gemm_sm90_t48_wg3" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=48", "-DNVF_WG=3", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK},   \
    {"gemm_sm90_t48_wg4" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=48", "-DNVF_WG=4", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK},   \
    {"gemm_sm90_t64_wg4" SUF, "gemm_wgmma.cu", {"-DNVF_TOK=64", "-DNVF_WG=4", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, WK},   \
    {"gemm_sm90_ws_t128_wg3" SUF, "gemm_wgmma_ws.cu", {"-DNVF_TOK=128", "-DNVF_CWG=3", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0, \
     XK},                                                                                                              \
    {"gemm_sm90_ws_t48_wg4" SUF, "gemm_wgmma_ws.cu", {"-DNVF_TOK=48", "-DNVF_CWG=4", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0,   \
     XK},                                                                                                              \
    {"gemm_sm90_ws_t64_wg4" SUF, "gemm_wgmma_ws.cu", {"-DNVF_TOK=64", "-DNVF_CWG=4", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0,   \
     XK},                                                                                                              \
    {"gemm_sm90_ws_t32_wg4" SUF, "gemm_wgmma_ws.cu", {"-DNVF_TOK=32", "-DNVF_CWG=4", TD, 0}, NVFP4MOE__NEEDS_SM90A, 0,   \
     XK},                                                                                                             \
    {"gemm_sm90_ws_t128_wg3_varn" SUF, "gemm_wgmma_ws.cu", {"-DNVF_TOK=128", "-DNVF_CWG=3", "-DNVF_VARN=1", TD, 0},    \
     NVFP4MOE__NEEDS_SM90A, 0, XK},                                                                                    \
    {"gemm_sm90_ws_t48_wg4_varn" SUF, "gemm_wgmma_ws.cu", {"-DNVF_TOK=48", "-DNVF_CWG=4", "-DNVF_VARN=1", TD, 0},      \
     NVFP4MOE__NEEDS_SM90A, 0, XK},                                                                                    \
    {"gemm_sm90_ws_t64_wg4_varn" SUF, "gemm_wgmma_ws.cu", {"-DNVF_TOK=64", "-DNVF_CWG=4", "-DNVF_VARN=1", TD, 0},      \
     NVFP4MOE__NEEDS_SM90A, 0, XK},                                                                                    \
    {"gemm_sm90_ws_t32_wg4_varn" SUF, "gemm_wgmma_ws.cu", {"-DNVF_TOK=32", "-DNVF_CWG=4", "-DNVF_VARN=1", TD, 0},      \
     NVFP4MOE__NEEDS_SM90A, 0, XK},
#define NVFP4MOE__K256_SPEC(NAME, ...)                                                                              \
    {NAME "_k256_tiled", "gemm_wgmma_ws.cu", {__VA_ARGS__, "-DNVF_WTILED=1", "-DNVF_WKFULL=1", 0}, NVFP4MOE__NEEDS_SM90A, \
     0, NVFP4MOE__WS_TILED_KERNELS},
#define NVFP4MOE__K256_SPECS                                                                                        \
    NVFP4MOE__K256_SPEC("gemm_sm90_ws_t128_wg3", "-DNVF_TOK=128", "-DNVF_CWG=3")                                     \
    NVFP4MOE__K256_SPEC("gemm_sm90_ws_t48_wg4", "-DNVF_TOK=48", "-DNVF_CWG=4")                                       \
    NVFP4MOE__K256_SPEC("gemm_sm90_ws_t64_wg4", "-DNVF_TOK=64", "-DNVF_CWG=4")                                       \
    NVFP4MOE__K256_SPEC("gemm_sm90_ws_t32_wg4", "-DNVF_TOK=32", "-DNVF_CWG=4")                                       \
    NVFP4MOE__K256_SPEC("gemm_sm90_ws_t128_wg3_varn", "-DNVF_TOK=128", "-DNVF_CWG=3", "-DNVF_VARN=1")                \
    NVFP4MOE__K256_SPEC("gemm_sm90_ws_t48_wg4_varn", "-DNVF_TOK=48", "-DNVF_CWG=4", "-DNVF_VARN=1")                  \
    NVFP4MOE__K256_SPEC("gemm_sm90_ws_t64_wg4_varn", "-DNVF_TOK=64", "-DNVF_CWG=4", "-DNVF_VARN=1")                  \
    NVFP4MOE__K256_SPEC("gemm_sm90_ws_t32_wg4_varn", "-DNVF_TOK=32", "-DNVF_CWG=4", "-DNVF_VARN=1")                  \
    {"gemm_swapab_t8_k256_tiled", "gemm_swapab.cu", {"-DNVF_NT=1", "-DNVF_WTILED=1", "-DNVF_WKFULL=1", 0},           \
     NVFP4MOE__NEEDS_SM90A, 0, NVFP4MOE__SWAPAB_T8_TILED_KERNELS}, /* (for sm_80 ptxas keeps 16 stack bytes) */       \
    {"gemm_sm90_ws_t128_wg3_k256_res_tiled", "gemm_wgmma_ws.cu",                                                     \
     {"-DNVF_TOK=128", "-DNVF_CWG=3", "-DNVF_WTILED=1", "-DNVF_WKFULL=1", "-DNVF_PERSIST=1", 0}, NVFP4MOE__NEEDS_SM90A,   \
     0, NVFP4MOE__WS_TILED_KERNELS},                                                                                  \
    {"gemm_sm90_ws_t128_wg3_varn_k256_res_tiled", "gemm_wgmma_ws.cu",                                                \
     {"-DNVF_TOK=128", "-DNVF_CWG=3", "-DNVF_VARN=1", "-DNVF_WTILED=1", "-DNVF_WKFULL=1", "-DNVF_PERSIST=1", 0},       \
     NVFP4MOE__NEEDS_SM90A, 0, NVFP4MOE__WS_TILED_KERNELS},
static const nvfp4moe__spec nvfp4moe__specs[NVFP4MOE__SPEC_COUNT] = {
    {"quantize", "quantize.cu", {0}, NVFP4MOE__NEEDS_SM80, 1,
     {"nvf_quantize", "nvf_weight_amax", "nvf_amax_to_scale", "nvf_scale_product", "nvf_sf_convert",
      "nvf_dequantize", "nvf_quantize_f16", "nvf_weights_relayout", 0}},
    /* sm_90+, plain input with many rows per team: rows bulk-copied into shared memory */
    {"quantize_staged", "quantize.cu", {"-DNVF_QSTAGED_ONLY", 0}, NVFP4MOE__NEEDS_SM80, 1,
     {"nvf_quantize_staged", "nvf_quantize_staged_f16", 0}},
    {"silu_quantize", "quantize.cu", {"-DNVF_SILU", 0}, NVFP4MOE__NEEDS_SM80, 1,
     {"nvf_silu_mul_quantize", "nvf_silu_mul_quantize_f16", 0}},
    /* SiLU rows with K > 4096: 2 register blocks per thread, 3 CTAs per SM */
    {"silu_quantize_wide", "quantize.cu", {"-DNVF_SILU", "-DNVF_QSILU2", 0}, NVFP4MOE__NEEDS_SM80, 1,
     {"nvf_silu_mul_quantize", "nvf_silu_mul_quantize_f16", 0}},
    /* the expert layer's: quantize and SiLU-quantize that also write the widened tokens of the
       layer's token-producer GEMM tiles (sm90 backend), instead of the GEMM's pre-pass */
    {"quantize_img", "quantize.cu", {"-DNVF_QIMG_ONLY", 0}, NVFP4MOE__NEEDS_SM80, 1, {"nvf_quantize_img", 0}},
    {"silu_quantize_img", "quantize.cu", {"-DNVF_SILU", "-DNVF_QIMG_ONLY", 0}, NVFP4MOE__NEEDS_SM80, 1,
     {"nvf_silu_mul_quantize_img", 0}},
    /* ... for GEMMs on TILED weights: their tokens widened to F16, as those GEMM modules read them
       (common.cuh, NVF_F16; the layout define, not -DNVF_F16=1, so that a tuning define of NVF_F16
       sets both sides: the options are sorted and NVRTC keeps a macro's last -D) */
    {"quantize_img_f16", "quantize.cu", {"-DNVF_QIMG_ONLY", "-DNVF_QIMG_TILED=1", 0}, NVFP4MOE__NEEDS_SM80, 1,
     {"nvf_quantize_img", 0}},
    {"silu_quantize_img_f16", "quantize.cu", {"-DNVF_SILU", "-DNVF_QIMG_ONLY", "-DNVF_QIMG_TILED=1", 0}, NVFP4MOE__NEEDS_SM80,
     1, {"nvf_silu_mul_quantize_img", 0}},
    NVFP4MOE__GEMM_SPECS("", 0, NVFP4MOE__PORTABLE_KERNELS, NVFP4MOE__SWAPAB_KERNELS, NVFP4MOE__SWAPAB_KERNELS,
                         NVFP4MOE__WGMMA_KERNELS, NVFP4MOE__WS_KERNELS)
    {"gemm_sm100_n128", "gemm_sm100.cu", {"-DNVF_BN=128", 0}, NVFP4MOE__NEEDS_SM100, 0,
     {"nvf_gemm_sm100", 0}},
    /* the twins for TILED weights (nvfp4moe_weight_layout): only the weight addressing differs */
    NVFP4MOE__GEMM_SPECS("_tiled", "-DNVF_WTILED=1", NVFP4MOE__PORTABLE_KERNELS, NVFP4MOE__SWAPAB_T8_TILED_KERNELS,
                         NVFP4MOE__SWAPAB_TILED_KERNELS, NVFP4MOE__WGMMA_TILED_KERNELS, NVFP4MOE__WS_TILED_KERNELS)
    /* the TILED token-producer tiles again for K % 256 == 0 (gemm_wgmma_step.cuh, NVF_WKFULL: 6-7 % fewer
       instructions a step; bench/NOTES.md, twenty-ninth session), then the TILED 8-token swap-AB tile
       (gemm_swapab.cu, NVF_WKFULL: 1-2.4 % faster at 1 and 8 tokens, thirtieth session) */
    NVFP4MOE__K256_SPECS
};
#undef NVFP4MOE__K256_SPEC
#undef NVFP4MOE__K256_SPECS
#undef NVFP4MOE__SWAPAB_KERNELS
#undef NVFP4MOE__WGMMA_KERNELS
#undef NVFP4MOE__SWAPAB_TILED_KERNELS
#undef NVFP4MOE__SWAPAB_T8_TILED_KERNELS
#undef NVFP4MOE__WGMMA_TILED_KERNELS
#undef NVFP4MOE__WS_KERNELS
#undef NVFP4MOE__WS_TILED_KERNELS
#undef NVFP4MOE__PORTABLE_KERNELS
#undef NVFP4MOE__GEMM_SPECS

typedef struct nvfp4moe__module {
  nvfp4moe__mutex lock;
  int state; /* 0 not prepared, 1 ready, 2 failed (failure holds why) */
  nvfp4moe_result failure;
  int from_disk;
  double ms;
  nvfp4moe__CUmodule module;
  nvfp4moe__CUfunction fn[NVFP4MOE__MAX_KERNELS];
  int smem_set[NVFP4MOE__MAX_KERNELS];   /* dynamic shared memory limit raised to this */
  int occupancy[NVFP4MOE__MAX_KERNELS];  /* resident CTAs per SM, 0 = not asked yet */
  int regs[NVFP4MOE__MAX_KERNELS];       /* registers per thread it was built with, 0 = not asked yet */
} nvfp4moe__module;

struct nvfp4moe_context {
  nvfp4moe_desc desc; /* in effect; strings point into this struct */
  char cache_dir[512];
  char target[16];
  int target_sm;      /* e.g. 90 for sm_90a */
  int offline;
  int cache_on;       /* 0 after the first failure to write, or when there is no directory */
  nvfp4moe__CUcontext cu_ctx;
  nvfp4moe__CUdevice dev;
  int retained_primary;
  int cc_major, cc_minor, sm_count, smem_optin, driver_version;
  char gpu_name[128];
  nvfp4moe_backend backend;
  int desc_backend_forced; /* desc->backend or $NVFP4MOE_BACKEND named a backend */
  int forced_gemm_spec; /* $NVFP4MOE_GEMM_CONFIG (tests, benchmarks), -1 = heuristic */
  char tune_define[64];  /* $NVFP4MOE_TUNE_DEFINE at creation (tuning runs), "" = none */
  int pdl;               /* programmatic dependent launch (sm_90+): 0 off, 1 quantization kernels (the expert layer's
                            as layer_pdl says), 2 every kernel */
  int token_prepass;     /* the token-producer tiles take a workspace of widened tokens ($NVFP4MOE_TOKEN_PREPASS) */
  int varn;              /* the heuristic may pick the token-producer tiles' _VARN twins ($NVFP4MOE_VARN) */
  int k256;              /* TILED token-producer and 8-token swap-AB tiles run their _k256 twins where K % 256 == 0
                            ($NVFP4MOE_K256) */
  int layer_widen;       /* which of the expert layer's quantizers write those tokens instead of the pre-pass: bit 0 the
                            input's (GEMM1), bit 1 the SiLU's (GEMM2) ($NVFP4MOE_LAYER_WIDEN) */
  int layer_pdl;         /* under pdl 1, which of the expert layer's quantizers take a programmatic dependent launch:
                            bit 0 the input's, bit 1 the SiLU's; -1 the default, the input's always and the SiLU's
                            unless GEMM1 ran a token-producer tile ($NVFP4MOE_LAYER_PDL; nvfp4moe__layer_quant_pdl) */
  int sm100_self_test;
  nvfp4moe__mutex state_lock; /* counters, cache_on, self-test */
  unsigned long long compiles, disk_hits, disk_writes, disk_rejects, modules_loaded;
  double compile_ms;
  unsigned char source_digest[32];
  nvfp4moe__module modules[NVFP4MOE__SPEC_COUNT];
};

NVFP4MOE__IMPL int nvfp4moe_specialization_count(void) { return NVFP4MOE__SPEC_COUNT; }
NVFP4MOE__IMPL const char* nvfp4moe_specialization_name(int index) {
  return (index >= 0 && index < NVFP4MOE__SPEC_COUNT) ? nvfp4moe__specs[index].name : 0;
}

NVFP4MOE__PRIVATE int nvfp4moe__target_is_sm100(const nvfp4moe_context* ctx) {
  return strcmp(ctx->target, "sm_100a") == 0 || strcmp(ctx->target, "sm_103a") == 0;
}
NVFP4MOE__PRIVATE int nvfp4moe__target_is_sm90a(const nvfp4moe_context* ctx) { return strcmp(ctx->target, "sm_90a") == 0; }
NVFP4MOE__PRIVATE int nvfp4moe__spec_applies(const nvfp4moe_context* ctx, int s) {
  if (nvfp4moe__specs[s].needs == NVFP4MOE__NEEDS_SM100) return nvfp4moe__target_is_sm100(ctx);
  if (nvfp4moe__specs[s].needs == NVFP4MOE__NEEDS_SM90A) return nvfp4moe__target_is_sm90a(ctx);
  return ctx->target_sm >= 80;
}

NVFP4MOE__PRIVATE const nvfp4moe__source* nvfp4moe__find_source(const char* name) {
  const nvfp4moe__source* s;
  for (s = nvfp4moe__sources; s->name; ++s)
    if (strcmp(s->name, name) == 0) return s;
  return 0;
}

/* The chunks of one embedded file joined into one string (allocator memory). */
NVFP4MOE__PRIVATE char* nvfp4moe__join_source(const nvfp4moe_allocator* al, const nvfp4moe__source* s) {
  size_t n = 0, off = 0;
  const char* const* c;
  char* out;
  for (c = s->chunks; *c; ++c) n += strlen(*c);
  out = (char*)nvfp4moe__alloc(al, n + 1);
  if (!out) return 0;
  for (c = s->chunks; *c; ++c) {
    size_t l = strlen(*c);
    memcpy(out + off, *c, l);
    off += l;
  }
  out[off] = 0;
  return out;
}

/* The options of a specialisation for this context's target, sorted. Returns the count. */
NVFP4MOE__PRIVATE int nvfp4moe__options(const nvfp4moe_context* ctx, int s, char arch[64], const char** opts) {
  const nvfp4moe__spec* sp = &nvfp4moe__specs[s];
  int n = 0, i, j;
  int soft = (ctx->desc.flags & NVFP4MOE_FLAG_SOFT_CVT) != 0;
  snprintf(arch, 64, "--gpu-architecture=%s", ctx->target);
  opts[n++] = arch;
  opts[n++] = "-std=c++17";
  if (sp->fmad_off) opts[n++] = "--fmad=false";
  for (i = 0; i < (int)(sizeof sp->defines / sizeof sp->defines[0]) && sp->defines[i]; ++i) opts[n++] = sp->defines[i];
  /* hardware conversions give the same bytes as the software path (docs/numerics.md) */
  if (!soft && ctx->target_sm >= 89) opts[n++] = "-DNVF_HW_E4M3";
  if (!soft && nvfp4moe__target_is_sm100(ctx)) opts[n++] = "-DNVF_HW_E2M1";
  if (ctx->tune_define[0]) opts[n++] = ctx->tune_define; /* tuning runs only (bench/NOTES.md) */
  for (i = 1; i < n; ++i) /* insertion sort: the key must not depend on the order */
    for (j = i; j > 0 && strcmp(opts[j - 1], opts[j]) > 0; --j) {
      const char* t = opts[j];
      opts[j] = opts[j - 1];
      opts[j - 1] = t;
    }
  return n;
}

/* Key = SHA-256 over the cache format, library version, NVRTC version, target, the
   sorted options and the digest of every embedded source file. */
NVFP4MOE__PRIVATE void nvfp4moe__cache_key(const nvfp4moe_context* ctx, const char** opts, int nopts,
                                           unsigned char key[32]) {
  nvfp4moe__sha256 h;
  char buf[96];
  int i;
  nvfp4moe__sha256_init(&h);
  snprintf(buf, sizeof buf, "nvfp4moe cubin format %d", NVFP4MOE__CACHE_FORMAT);
  nvfp4moe__sha256_str(&h, buf);
  nvfp4moe__sha256_str(&h, NVFP4MOE_VERSION_STRING);
  snprintf(buf, sizeof buf, "nvrtc %d.%d", nvfp4moe__nvrtc_major, nvfp4moe__nvrtc_minor);
  nvfp4moe__sha256_str(&h, buf);
  nvfp4moe__sha256_str(&h, ctx->target);
  for (i = 0; i < nopts; ++i) nvfp4moe__sha256_str(&h, opts[i]);
  nvfp4moe__sha256_update(&h, ctx->source_digest, 32);
  nvfp4moe__sha256_final(&h, key);
}

NVFP4MOE__PRIVATE void nvfp4moe__source_digest(unsigned char out[32]) {
  nvfp4moe__sha256 h;
  const nvfp4moe__source* s;
  const char* const* c;
  nvfp4moe__sha256_init(&h);
  for (s = nvfp4moe__sources; s->name; ++s) {
    nvfp4moe__sha256_str(&h, s->name);
    for (c = s->chunks; *c; ++c) nvfp4moe__sha256_update(&h, *c, strlen(*c));
    nvfp4moe__sha256_update(&h, "", 1);
  }
  nvfp4moe__sha256_final(&h, out);
}

/* ---- disk cache: <dir>/<hex key>.cubin = 96-byte header + cubin -----------------------
   header: "NVF4MOE\1" | u32 format | u32 header size | key[32] | u64 cubin size |
           sha256(cubin)[32] | u64 0. Anything that does not match is a miss. */
#define NVFP4MOE__CACHE_HEADER 96

NVFP4MOE__PRIVATE void nvfp4moe__put_u32(unsigned char* p, uint32_t v) {
  int i;
  for (i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}
NVFP4MOE__PRIVATE void nvfp4moe__put_u64(unsigned char* p, uint64_t v) {
  int i;
  for (i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i));
}
NVFP4MOE__PRIVATE uint64_t nvfp4moe__get_u64(const unsigned char* p) {
  uint64_t v = 0;
  int i;
  for (i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

NVFP4MOE__PRIVATE void nvfp4moe__cache_header(unsigned char* hd, const unsigned char key[32], const void* cubin,
                                              size_t size) {
  nvfp4moe__sha256 h;
  memset(hd, 0, NVFP4MOE__CACHE_HEADER);
  memcpy(hd, "NVF4MOE\1", 8);
  nvfp4moe__put_u32(hd + 8, NVFP4MOE__CACHE_FORMAT);
  nvfp4moe__put_u32(hd + 12, NVFP4MOE__CACHE_HEADER);
  memcpy(hd + 16, key, 32);
  nvfp4moe__put_u64(hd + 48, (uint64_t)size);
  nvfp4moe__sha256_init(&h);
  nvfp4moe__sha256_update(&h, cubin, size);
  nvfp4moe__sha256_final(&h, hd + 56);
}

NVFP4MOE__PRIVATE void nvfp4moe__cache_path(const nvfp4moe_context* ctx, const unsigned char key[32], char* path,
                                            size_t n) {
  char hex[65];
  nvfp4moe__hex(key, 32, hex);
  snprintf(path, n, "%s/%s.cubin", ctx->cache_dir, hex);
}

/* A valid cached cubin (malloc'ed) or null; a damaged file counts in disk_rejects. */
NVFP4MOE__PRIVATE unsigned char* nvfp4moe__cache_read(nvfp4moe_context* ctx, const unsigned char key[32],
                                                      size_t* size) {
  char path[700];
  size_t n = 0;
  unsigned char* f;
  nvfp4moe__cache_path(ctx, key, path, sizeof path);
  f = nvfp4moe__read_file(path, &n);
  if (!f) return 0;
  if (n >= NVFP4MOE__CACHE_HEADER && nvfp4moe__get_u64(f + 48) == (uint64_t)(n - NVFP4MOE__CACHE_HEADER)) {
    unsigned char expect[NVFP4MOE__CACHE_HEADER];
    nvfp4moe__cache_header(expect, key, f + NVFP4MOE__CACHE_HEADER, n - NVFP4MOE__CACHE_HEADER);
    if (memcmp(expect, f, NVFP4MOE__CACHE_HEADER) == 0) {
      memmove(f, f + NVFP4MOE__CACHE_HEADER, n - NVFP4MOE__CACHE_HEADER);
      *size = n - NVFP4MOE__CACHE_HEADER;
      return f;
    }
  }
  free(f);
  nvfp4moe__lock(&ctx->state_lock);
  ctx->disk_rejects++;
  nvfp4moe__unlock(&ctx->state_lock);
  nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_INFO, "cache: %s is damaged; recompiling and rewriting it", path);
  return 0;
}

NVFP4MOE__PRIVATE void nvfp4moe__cache_write(nvfp4moe_context* ctx, const unsigned char key[32], const void* cubin,
                                             size_t size) {
  char path[700];
  unsigned char hd[NVFP4MOE__CACHE_HEADER];
  int ok;
  nvfp4moe__cache_path(ctx, key, path, sizeof path);
  nvfp4moe__cache_header(hd, key, cubin, size);
  ok = nvfp4moe__write_file_atomic(path, hd, sizeof hd, cubin, size) == 0;
  nvfp4moe__lock(&ctx->state_lock);
  if (ok) ctx->disk_writes++;
  else if (ctx->cache_on) {
    ctx->cache_on = 0; /* log once, then run uncached */
    nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_WARN,
                  "cache: cannot write to %s; kernels will be compiled in memory only", ctx->cache_dir);
  }
  nvfp4moe__unlock(&ctx->state_lock);
}

/* ---- JIT ------------------------------------------------------------------------------ */

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__nvrtc_compile(nvfp4moe_context* ctx, int s, const char** opts, int nopts,
                                                          unsigned char** cubin, size_t* size) {
  const nvfp4moe_allocator* al = &ctx->desc.allocator;
  const nvfp4moe__spec* sp = &nvfp4moe__specs[s];
  const nvfp4moe__source* src;
  const char* hdr_src[16];
  const char* hdr_name[16];
  char* main_src = 0;
  int nh = 0, i, rc;
  nvfp4moe__nvrtcProgram prog = 0;
  nvfp4moe_result res = NVFP4MOE_SUCCESS;
  size_t logsize = 0;

  src = nvfp4moe__find_source(sp->file);
  if (!src) return nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_COMPILE_FAILED, "kernel source %s is not embedded", sp->file);
  main_src = nvfp4moe__join_source(al, src);
  for (src = nvfp4moe__sources; src->name && nh < 16; ++src) { /* every .cuh is an in-memory header */
    size_t l = strlen(src->name);
    if (l > 4 && strcmp(src->name + l - 4, ".cuh") == 0) {
      hdr_name[nh] = src->name;
      hdr_src[nh] = nvfp4moe__join_source(al, src);
      if (!hdr_src[nh]) res = NVFP4MOE_ERROR_OUT_OF_MEMORY;
      ++nh;
    }
  }
  if (!main_src || res != NVFP4MOE_SUCCESS) {
    res = nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_OUT_OF_MEMORY, "out of host memory joining kernel sources");
    goto done;
  }
  rc = nvfp4moe__rtc.nvrtcCreateProgram(&prog, main_src, sp->file, nh, hdr_src, hdr_name);
  if (rc != 0) {
    res = nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_COMPILE_FAILED, "nvrtcCreateProgram(%s): %s", sp->name,
                             nvfp4moe__rtc.nvrtcGetErrorString(rc));
    goto done;
  }
  rc = nvfp4moe__rtc.nvrtcCompileProgram(prog, nopts, opts);
  if (nvfp4moe__rtc.nvrtcGetProgramLogSize(prog, &logsize) == 0 && logsize > 1) {
    char* log = (char*)nvfp4moe__alloc(al, logsize + 1);
    if (log && nvfp4moe__rtc.nvrtcGetProgramLog(prog, log) == 0) {
      log[logsize] = 0;
      nvfp4moe__log(&ctx->desc.logger, rc ? NVFP4MOE_LOG_ERROR : NVFP4MOE_LOG_DEBUG, "NVRTC log for %s (%s):\n%s",
                    sp->name, ctx->target, log);
    }
    nvfp4moe__free(al, log);
  }
  if (rc != 0) {
    res = nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_COMPILE_FAILED,
                             "NVRTC could not compile %s for %s: %s (log above)", sp->name, ctx->target,
                             nvfp4moe__rtc.nvrtcGetErrorString(rc));
    goto done;
  }
  if (nvfp4moe__rtc.nvrtcGetCUBINSize(prog, size) != 0 || *size == 0) {
    res = nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_COMPILE_FAILED, "NVRTC produced no cubin for %s (%s)",
                             sp->name, ctx->target);
    goto done;
  }
  *cubin = (unsigned char*)malloc(*size);
  if (!*cubin) {
    res = nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_OUT_OF_MEMORY, "out of host memory for a cubin");
    goto done;
  }
  nvfp4moe__rtc.nvrtcGetCUBIN(prog, (char*)*cubin);
done:
  if (prog) nvfp4moe__rtc.nvrtcDestroyProgram(&prog);
  nvfp4moe__free(al, main_src);
  for (i = 0; i < nh; ++i) nvfp4moe__free(al, (void*)hdr_src[i]);
  return res;
}

/* Makes specialisation s ready: disk hit or compile (+ write), then load unless offline.
   Failures are remembered, so a broken kernel is not recompiled on every call. */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__prepare(nvfp4moe_context* ctx, int s) {
  nvfp4moe__module* m = &ctx->modules[s];
  nvfp4moe_result res = NVFP4MOE_SUCCESS;
  nvfp4moe__lock(&m->lock);
  if (m->state == 1) { nvfp4moe__unlock(&m->lock); return NVFP4MOE_SUCCESS; }
  if (m->state == 2) {
    res = m->failure;
    nvfp4moe__unlock(&m->lock);
    return nvfp4moe__fail_log(0, res, "kernel %s failed to build earlier in this context", nvfp4moe__specs[s].name);
  }
  {
    char arch[64];
    const char* opts[16];
    int nopts = nvfp4moe__options(ctx, s, arch, opts);
    unsigned char key[32];
    unsigned char* cubin = 0;
    size_t size = 0;
    int use_cache, i;
    double t0 = nvfp4moe__now_ms();
    nvfp4moe__cache_key(ctx, opts, nopts, key);
    nvfp4moe__lock(&ctx->state_lock);
    use_cache = ctx->cache_on;
    nvfp4moe__unlock(&ctx->state_lock);
    if (use_cache) cubin = nvfp4moe__cache_read(ctx, key, &size);
    m->from_disk = cubin != 0;
    if (!cubin) {
      if (ctx->desc.flags & NVFP4MOE_FLAG_NO_JIT) {
        char hex[65];
        nvfp4moe__hex(key, 32, hex);
        res = nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_CACHE_MISS,
                                 "kernel %s for %s is not in the cache %s (key %s) and JIT is off (NVFP4MOE_FLAG_NO_JIT); "
                                 "fill the cache with tools/nvfp4moe_precompile",
                                 nvfp4moe__specs[s].name, ctx->target, ctx->cache_dir[0] ? ctx->cache_dir : "(none)", hex);
      } else {
        res = nvfp4moe__nvrtc_compile(ctx, s, opts, nopts, &cubin, &size);
        if (res == NVFP4MOE_SUCCESS) {
          nvfp4moe__lock(&ctx->state_lock);
          ctx->compiles++;
          ctx->compile_ms += nvfp4moe__now_ms() - t0;
          use_cache = ctx->cache_on;
          nvfp4moe__unlock(&ctx->state_lock);
          if (use_cache) nvfp4moe__cache_write(ctx, key, cubin, size);
        }
      }
    } else {
      nvfp4moe__lock(&ctx->state_lock);
      ctx->disk_hits++;
      nvfp4moe__unlock(&ctx->state_lock);
    }
    if (res == NVFP4MOE_SUCCESS && !ctx->offline) {
      nvfp4moe__CUresult cr = nvfp4moe__cu.cuModuleLoadData(&m->module, cubin);
      for (i = 0; cr == 0 && i < NVFP4MOE__MAX_KERNELS && nvfp4moe__specs[s].kernels[i]; ++i)
        cr = nvfp4moe__cu.cuModuleGetFunction(&m->fn[i], m->module, nvfp4moe__specs[s].kernels[i]);
      if (cr != 0) {
        const char* name = "?";
        nvfp4moe__cu.cuGetErrorName(cr, &name);
        res = nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_CUDA, "loading kernel %s: %s", nvfp4moe__specs[s].name,
                                 name);
      } else {
        nvfp4moe__lock(&ctx->state_lock);
        ctx->modules_loaded++;
        nvfp4moe__unlock(&ctx->state_lock);
      }
    }
    free(cubin);
    m->ms = nvfp4moe__now_ms() - t0;
    m->state = res == NVFP4MOE_SUCCESS ? 1 : 2;
    m->failure = res;
  }
  nvfp4moe__unlock(&m->lock);
  return res;
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_prepare_specialization(nvfp4moe_context* ctx, int index, int* from_disk,
                                                               double* ms) {
  nvfp4moe_result r;
  if (!ctx) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, "nvfp4moe_prepare_specialization: ctx is null");
  if (index < 0 || index >= NVFP4MOE__SPEC_COUNT)
    return nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_INVALID_ARGUMENT,
                              "nvfp4moe_prepare_specialization: index %d is not in [0, %d)", index, NVFP4MOE__SPEC_COUNT);
  if (!nvfp4moe__spec_applies(ctx, index)) { /* an answer, not a failure: no log line */
    snprintf(nvfp4moe__last_error_buf, sizeof nvfp4moe__last_error_buf, "kernel %s does not apply to target %s",
             nvfp4moe__specs[index].name, ctx->target);
    return NVFP4MOE_ERROR_NOT_SUPPORTED;
  }
  r = nvfp4moe__prepare(ctx, index);
  if (from_disk) *from_disk = ctx->modules[index].from_disk;
  if (ms) *ms = ctx->modules[index].ms;
  return r;
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_warmup(nvfp4moe_context* ctx) {
  int s;
  if (!ctx) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, "nvfp4moe_warmup: ctx is null");
  for (s = 0; s < NVFP4MOE__SPEC_COUNT; ++s) {
    nvfp4moe_result r;
    if (!nvfp4moe__spec_applies(ctx, s)) continue;
    /* a context forced onto the portable path never needs the native kernels */
    if (s == NVFP4MOE__SPEC_GEMM_SM100 && !ctx->offline && ctx->backend != NVFP4MOE_BACKEND_SM100) continue;
    r = nvfp4moe__prepare(ctx, s);
    if (r != NVFP4MOE_SUCCESS) return r;
  }
  return NVFP4MOE_SUCCESS;
}

/* --------------------------------------------------------------------------------------
   Context
   -------------------------------------------------------------------------------------- */

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__cuda_fail(const nvfp4moe_logger* lg, nvfp4moe__CUresult cr,
                                                      const char* what) {
  const char* name = "unknown";
  if (nvfp4moe__cu.cuGetErrorName) nvfp4moe__cu.cuGetErrorName(cr, &name);
  return nvfp4moe__fail_log(lg, NVFP4MOE_ERROR_CUDA, "%s failed: %s (CUresult %d)", what, name, cr);
}

/* "sm_90a" -> 90 and arch-specific flag; 0 when malformed. */
NVFP4MOE__PRIVATE int nvfp4moe__parse_target(const char* t, int* specific) {
  int v = 0, i = 3;
  if (!t || strncmp(t, "sm_", 3) != 0 || t[3] == '0') return 0; /* (no leading zero: NVRTC would refuse "sm_090a") */
  while (t[i] >= '0' && t[i] <= '9' && i < 7) v = v * 10 + (t[i++] - '0'); /* at most 4 digits */
  *specific = t[i] == 'a';
  if (t[i] == 'a') ++i;
  if (t[i] != 0 || i < 5) return 0;
  return v;
}

NVFP4MOE__PRIVATE int nvfp4moe__nvrtc_supports(int sm) {
  int i;
  if (nvfp4moe__nvrtc_narchs == 0) return 1; /* no list: let NVRTC decide */
  for (i = 0; i < nvfp4moe__nvrtc_narchs; ++i)
    if (nvfp4moe__nvrtc_archs[i] == sm) return 1;
  return 0;
}

/* The NVRTC target for a GPU: sm_100a / sm_103a on 10.0 / 10.3 (native path), sm_90a on
   9.0, plain sm_XY elsewhere, capped by what this NVRTC can compile. */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__pick_target(nvfp4moe_context* ctx) {
  int sm = ctx->cc_major * 10 + ctx->cc_minor, best = 0, i;
  int maxsm = nvfp4moe__nvrtc_narchs ? nvfp4moe__nvrtc_archs[nvfp4moe__nvrtc_narchs - 1] : sm;
  if (!nvfp4moe__nvrtc_supports(sm)) {
    /* a cubin for sm_XY runs on sm_XZ with Z >= Y: take the newest of the same major */
    for (i = 0; i < nvfp4moe__nvrtc_narchs; ++i)
      if (nvfp4moe__nvrtc_archs[i] / 10 == sm / 10 && nvfp4moe__nvrtc_archs[i] <= sm) best = nvfp4moe__nvrtc_archs[i];
    if (!best)
      return nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_NVRTC_TOO_OLD,
                                "the GPU is compute capability %d.%d (sm_%d) but NVRTC %d.%d (%s) compiles at most sm_%d: "
                                "install a newer NVRTC or point NVFP4MOE_NVRTC_PATH at one",
                                ctx->cc_major, ctx->cc_minor, sm, nvfp4moe__nvrtc_major, nvfp4moe__nvrtc_minor,
                                nvfp4moe__nvrtc_loaded_from, maxsm);
    sm = best;
  }
  ctx->target_sm = sm;
  snprintf(ctx->target, sizeof ctx->target, "sm_%d%s", sm, (sm == 90 || sm == 100 || sm == 103) ? "a" : "");
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__PRIVATE void nvfp4moe__resolve_cache_dir(nvfp4moe_context* ctx) {
  const char* v;
  int len = 0; /* the path's length, which may not fit */
  ctx->cache_dir[0] = 0;
  if (ctx->desc.flags & NVFP4MOE_FLAG_NO_DISK_CACHE) return;
  if (ctx->desc.cache_dir && ctx->desc.cache_dir[0]) len = snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s", ctx->desc.cache_dir);
  else if ((v = nvfp4moe__getenv("NVFP4MOE_CACHE_DIR")) != 0) len = snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s", v);
  else if ((v = nvfp4moe__getenv("XDG_CACHE_HOME")) != 0) len = snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/nvfp4moe", v);
#if defined(_WIN32)
  else if ((v = nvfp4moe__getenv("LOCALAPPDATA")) != 0) len = snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/nvfp4moe", v);
#else
  else if ((v = nvfp4moe__getenv("HOME")) != 0) len = snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/.cache/nvfp4moe", v);
#endif
  if (len < 0 || len >= (int)sizeof ctx->cache_dir) { /* never a cut-short path: it would name another directory */
    nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_WARN,
                  "cache: the directory path is %d characters, more than %d; kernels will be compiled in memory only", len,
                  (int)sizeof ctx->cache_dir - 1);
    ctx->cache_dir[0] = 0;
    return;
  }
  if (!ctx->cache_dir[0]) {
    nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_INFO, "cache: no directory (no HOME); kernels compile in memory");
    return;
  }
  if (nvfp4moe__mkdirs(ctx->cache_dir) != 0) {
    nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_WARN, "cache: cannot create %s; kernels will be compiled in memory only",
                  ctx->cache_dir);
    return;
  }
#if !defined(_WIN32)
  {
    /* cubins are code: never load them from a directory someone else can write */
    struct stat st;
    if (stat(ctx->cache_dir, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
      nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_WARN,
                    "cache: %s is not owned by this user or is writable by others; not using it", ctx->cache_dir);
      return;
    }
  }
#endif
  ctx->cache_on = 1;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__parse_backend(const nvfp4moe_logger* lg, const char* v, nvfp4moe_backend* b) {
  if (strcmp(v, "auto") == 0) *b = NVFP4MOE_BACKEND_AUTO;
  else if (strcmp(v, "portable") == 0) *b = NVFP4MOE_BACKEND_PORTABLE;
  else if (strcmp(v, "sm90") == 0) *b = NVFP4MOE_BACKEND_SM90;
  else if (strcmp(v, "sm100") == 0) *b = NVFP4MOE_BACKEND_SM100;
  else
    return nvfp4moe__fail_log(lg, NVFP4MOE_ERROR_INVALID_ARGUMENT,
                              "NVFP4MOE_BACKEND=%s: expected auto, portable, sm90 or sm100", v);
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__open_device(nvfp4moe_context* ctx) {
  const nvfp4moe_logger* lg = &ctx->desc.logger;
  nvfp4moe__CUresult cr;
  int st, count = 0;
  nvfp4moe__lock(&nvfp4moe__global_lock);
  st = nvfp4moe__load_driver_locked();
  nvfp4moe__unlock(&nvfp4moe__global_lock);
  if (st < 0) return nvfp4moe__fail_log(lg, NVFP4MOE_ERROR_DRIVER_NOT_FOUND, "%s", nvfp4moe__driver_msg);
  cr = nvfp4moe__cu.cuInit(0);
  if (cr == 100 /* CUDA_ERROR_NO_DEVICE */)
    return nvfp4moe__fail_log(lg, NVFP4MOE_ERROR_NO_DEVICE, "the CUDA driver is installed but reports no GPU");
  if (cr != 0) return nvfp4moe__cuda_fail(lg, cr, "cuInit");
  if (ctx->desc.cu_context) {
    nvfp4moe__CUcontext prev;
    ctx->cu_ctx = ctx->desc.cu_context;
    if ((cr = nvfp4moe__cu.cuCtxPushCurrent(ctx->cu_ctx)) != 0) return nvfp4moe__cuda_fail(lg, cr, "cuCtxPushCurrent(desc->cu_context)");
    cr = nvfp4moe__cu.cuCtxGetDevice(&ctx->dev);
    nvfp4moe__cu.cuCtxPopCurrent(&prev);
    if (cr != 0) return nvfp4moe__cuda_fail(lg, cr, "cuCtxGetDevice(desc->cu_context)");
  } else {
    if ((cr = nvfp4moe__cu.cuDeviceGetCount(&count)) != 0) return nvfp4moe__cuda_fail(lg, cr, "cuDeviceGetCount");
    if (ctx->desc.device < 0 || ctx->desc.device >= count)
      return nvfp4moe__fail_log(lg, NVFP4MOE_ERROR_NO_DEVICE, "desc->device = %d but the driver reports %d CUDA device(s)",
                                ctx->desc.device, count);
    if ((cr = nvfp4moe__cu.cuDeviceGet(&ctx->dev, ctx->desc.device)) != 0) return nvfp4moe__cuda_fail(lg, cr, "cuDeviceGet");
    if ((cr = nvfp4moe__cu.cuDevicePrimaryCtxRetain(&ctx->cu_ctx, ctx->dev)) != 0)
      return nvfp4moe__cuda_fail(lg, cr, "cuDevicePrimaryCtxRetain");
    ctx->retained_primary = 1;
  }
  nvfp4moe__cu.cuDeviceGetAttribute(&ctx->cc_major, NVFP4MOE__CU_ATTR_CC_MAJOR, ctx->dev);
  nvfp4moe__cu.cuDeviceGetAttribute(&ctx->cc_minor, NVFP4MOE__CU_ATTR_CC_MINOR, ctx->dev);
  nvfp4moe__cu.cuDeviceGetAttribute(&ctx->sm_count, NVFP4MOE__CU_ATTR_SM_COUNT, ctx->dev);
  nvfp4moe__cu.cuDeviceGetAttribute(&ctx->smem_optin, NVFP4MOE__CU_ATTR_SMEM_OPTIN, ctx->dev);
  nvfp4moe__cu.cuDeviceGetName(ctx->gpu_name, (int)sizeof ctx->gpu_name, ctx->dev);
  nvfp4moe__cu.cuDriverGetVersion(&ctx->driver_version);
  if (ctx->cc_major < 8)
    return nvfp4moe__fail_log(lg, NVFP4MOE_ERROR_UNSUPPORTED_GPU, "%s is compute capability %d.%d; nvfp4moe needs 8.0 or newer",
                              ctx->gpu_name, ctx->cc_major, ctx->cc_minor);
  return nvfp4moe__pick_target(ctx);
}

NVFP4MOE__IMPL void nvfp4moe_destroy(nvfp4moe_context* ctx) {
  int s;
  nvfp4moe_allocator al;
  if (!ctx) return;
  if (!ctx->offline && ctx->cu_ctx) {
    nvfp4moe__CUcontext prev;
    int pushed = nvfp4moe__cu.cuCtxPushCurrent(ctx->cu_ctx) == 0;
    for (s = 0; s < NVFP4MOE__SPEC_COUNT; ++s)
      if (ctx->modules[s].module) nvfp4moe__cu.cuModuleUnload(ctx->modules[s].module);
    if (pushed) nvfp4moe__cu.cuCtxPopCurrent(&prev);
    if (ctx->retained_primary) nvfp4moe__cu.cuDevicePrimaryCtxRelease(ctx->dev);
  }
  for (s = 0; s < NVFP4MOE__SPEC_COUNT; ++s) nvfp4moe__mutex_destroy(&ctx->modules[s].lock);
  nvfp4moe__mutex_destroy(&ctx->state_lock);
  al = ctx->desc.allocator;
  nvfp4moe__free(&al, ctx);
}

NVFP4MOE__PRIVATE void nvfp4moe__self_test(nvfp4moe_context* ctx);

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_create(const nvfp4moe_desc* desc, nvfp4moe_context** out) {
  nvfp4moe_desc d;
  nvfp4moe_context* ctx;
  nvfp4moe_result r;
  const char* v;
  const char* backend_src = "desc->backend"; /* for messages: where a forced backend came from */
  int st, s;
  nvfp4moe__last_error_buf[0] = 0;
  memset(&d, 0, sizeof d);
  if (desc) d = *desc;
  if (!out) return nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_INVALID_ARGUMENT, "nvfp4moe_create: out is null");
  *out = 0;
  if ((d.allocator.alloc_fn == 0) != (d.allocator.free_fn == 0))
    return nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_INVALID_ARGUMENT,
                              "nvfp4moe_create: desc->allocator needs both alloc_fn and free_fn, or neither");
  if ((int)d.backend < 0 || (int)d.backend > (int)NVFP4MOE_BACKEND_SM100)
    return nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_INVALID_ARGUMENT, "nvfp4moe_create: desc->backend = %d is not a backend",
                              (int)d.backend);
  if (d.flags & ~31u) /* NVFP4MOE_FLAG_*: a bit no version defines is a mistake, not a wish */
    return nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_INVALID_ARGUMENT,
                              "nvfp4moe_create: desc->flags = 0x%x has unknown bits (0x%x)", d.flags, d.flags & ~31u);
  if (d.backend == NVFP4MOE_BACKEND_AUTO && (v = nvfp4moe__getenv("NVFP4MOE_BACKEND")) != 0) {
    backend_src = "NVFP4MOE_BACKEND";
    r = nvfp4moe__parse_backend(&d.logger, v, &d.backend);
    if (r != NVFP4MOE_SUCCESS) return r;
  }
  if ((v = nvfp4moe__getenv("NVFP4MOE_NO_JIT")) != 0 && strcmp(v, "0") != 0) d.flags |= NVFP4MOE_FLAG_NO_JIT;

  nvfp4moe__lock(&nvfp4moe__global_lock);
  st = nvfp4moe__load_nvrtc_locked();
  nvfp4moe__unlock(&nvfp4moe__global_lock);
  if (st < 0) return nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_NVRTC_NOT_FOUND, "%s", nvfp4moe__nvrtc_msg);

  ctx = (nvfp4moe_context*)nvfp4moe__alloc(&d.allocator, sizeof *ctx);
  if (!ctx) return nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_OUT_OF_MEMORY, "nvfp4moe_create: out of host memory");
  memset(ctx, 0, sizeof *ctx);
  ctx->desc = d;
  ctx->forced_gemm_spec = -1;
  nvfp4moe__mutex_init(&ctx->state_lock);
  for (s = 0; s < NVFP4MOE__SPEC_COUNT; ++s) nvfp4moe__mutex_init(&ctx->modules[s].lock);
  ctx->offline = (d.flags & NVFP4MOE_FLAG_OFFLINE) != 0;

  if (ctx->offline) {
    int specific = 0;
    ctx->target_sm = nvfp4moe__parse_target(d.target, &specific);
    if (!ctx->target_sm) {
      r = nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_INVALID_ARGUMENT,
                             "nvfp4moe_create: an offline context needs desc->target like \"sm_90a\" (got \"%s\")",
                             d.target ? d.target : "(null)");
      goto fail;
    }
    if (ctx->target_sm < 80) {
      r = nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_UNSUPPORTED_GPU, "nvfp4moe_create: desc->target = %s: nvfp4moe needs sm_80 or newer", d.target);
      goto fail;
    }
    if (!nvfp4moe__nvrtc_supports(ctx->target_sm)) {
      r = nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_NVRTC_TOO_OLD, "nvfp4moe_create: desc->target = %s: NVRTC %d.%d (%s) cannot compile for it",
                             d.target, nvfp4moe__nvrtc_major, nvfp4moe__nvrtc_minor, nvfp4moe__nvrtc_loaded_from);
      goto fail;
    }
    snprintf(ctx->target, sizeof ctx->target, "%s", d.target);
    /* GPUs of compute capability 9.0, 10.0 and 10.3 get the arch-specific target */
    if (!specific && (ctx->target_sm == 90 || ctx->target_sm == 100 || ctx->target_sm == 103))
      nvfp4moe__log(&d.logger, NVFP4MOE_LOG_WARN,
                    "desc->target %s: a GPU of this kind runs %sa kernels, so a cache built for %s serves no GPU "
                    "(and has no native GEMM)", d.target, d.target, d.target);
  } else {
    r = nvfp4moe__open_device(ctx);
    if (r != NVFP4MOE_SUCCESS) goto fail;
  }

  if (d.backend == NVFP4MOE_BACKEND_SM90 && !nvfp4moe__target_is_sm90a(ctx)) {
    r = nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_NOT_SUPPORTED,
                           "nvfp4moe_create: %s = sm90 needs an sm_90a target (wgmma exists only on compute "
                           "capability 9.0); this one is %s",
                           backend_src, ctx->target);
    goto fail;
  }
  if (d.backend == NVFP4MOE_BACKEND_SM100 && !nvfp4moe__target_is_sm100(ctx)) {
    r = nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_NOT_SUPPORTED,
                           "nvfp4moe_create: %s = sm100 needs an sm_100a/sm_103a target (tcgen05 exists only on "
                           "compute capability 10.x); this one is %s",
                           backend_src, ctx->target);
    goto fail;
  }
  ctx->desc_backend_forced = d.backend != NVFP4MOE_BACKEND_AUTO;
  ctx->backend = d.backend != NVFP4MOE_BACKEND_AUTO ? d.backend
                 : nvfp4moe__target_is_sm100(ctx) ? NVFP4MOE_BACKEND_SM100
                 : nvfp4moe__target_is_sm90a(ctx)  ? NVFP4MOE_BACKEND_SM90
                                                   : NVFP4MOE_BACKEND_PORTABLE;
  if ((v = nvfp4moe__getenv("NVFP4MOE_GEMM_CONFIG")) != 0) {
    for (s = 0; s < NVFP4MOE__SPEC_COUNT; ++s)
      if (strcmp(v, nvfp4moe__specs[s].name) == 0 && strncmp(v, "gemm_", 5) == 0)
        ctx->forced_gemm_spec = s < NVFP4MOE__SPEC_GEMM_TILED_FIRST ? s /* a twin forces its tile configuration */
                                : s < NVFP4MOE__SPEC_GEMM_K256_FIRST ? s - NVFP4MOE__SPEC_GEMM_TILED_FIRST + NVFP4MOE__SPEC_GEMM_P16
                                : s == NVFP4MOE__SPEC_GEMM_K256_T8   ? NVFP4MOE__SPEC_GEMM_T8
                                : s == NVFP4MOE__SPEC_GEMM_K256_T128R ? NVFP4MOE__SPEC_GEMM_WS128
                                : s == NVFP4MOE__SPEC_GEMM_K256_T128R_VARN
                                    ? NVFP4MOE__SPEC_GEMM_WS128_VARN
                                    : s - NVFP4MOE__SPEC_GEMM_K256_FIRST + NVFP4MOE__SPEC_GEMM_WS128;
    if (ctx->forced_gemm_spec < 0 || !nvfp4moe__spec_applies(ctx, ctx->forced_gemm_spec)) {
      r = nvfp4moe__fail_log(&d.logger, NVFP4MOE_ERROR_INVALID_ARGUMENT,
                             "NVFP4MOE_GEMM_CONFIG=%s is not a GEMM specialisation for %s", v, ctx->target);
      goto fail;
    }
  }
  if ((v = nvfp4moe__getenv("NVFP4MOE_TUNE_DEFINE")) != 0 && strncmp(v, "-D", 2) == 0 && strlen(v) < sizeof ctx->tune_define &&
      strncmp(v, "-DNVF_WTILED", 12) != 0) /* the layout define belongs to the _tiled twins only */
    strcpy(ctx->tune_define, v); /* read once: the kernels and the launches must agree */
  if (strncmp(ctx->tune_define, "-DNVF_WENC=0", 12) == 0 || strcmp(ctx->tune_define, "-DNVF_F16=0") == 0)
    /* an A/B arm: the kernels read plain codes, or the 0.4 placement (BF16 widening) */
    nvfp4moe__log(&d.logger, NVFP4MOE_LOG_WARN,
                  "NVFP4MOE_TUNE_DEFINE=%s: the TILED kernels and relayout use %s, which the host reference and "
                  "TILED bytes from other contexts do not", ctx->tune_define,
                  ctx->tune_define[6] == 'W' ? "plain codes" : "the 0.4 placement of the codes");
  /* Programmatic dependent launch: a kernel may be scheduled while the one ahead of it on the
     stream finishes; every kernel waits for that one (griddepcontrol.wait, common.cuh) before
     it touches global memory. By default the quantization kernels are launched so (their
     persistent grids fill every SM anyway): 1.5-4 % faster alone, the Qwen3 layer 0.7 %
     faster, the DeepSeek-V3 layer about 1 % slower (also with the GEMMs launched so;
     bench/NOTES.md, ninth session). $NVFP4MOE_PDL=0 turns it off, =1 puts it on every launch. */
  v = nvfp4moe__getenv("NVFP4MOE_PDL");
  if (v && strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
    nvfp4moe__log(&d.logger, NVFP4MOE_LOG_WARN, "NVFP4MOE_PDL=%s is neither 0 nor 1: the default (the quantization kernels)", v);
  ctx->pdl = ctx->offline || ctx->cc_major < 9 || nvfp4moe__cu_launch_ex == 0 || (v && strcmp(v, "0") == 0) ? 0
             : v && strcmp(v, "1") == 0                                                                  ? 2
                                                                                                         : 1;
  /* The token pre-pass of the token-producer GEMM tiles (gemm_wgmma_ws.cu), which asks
     nvfp4moe_gemm_workspace_size for the widened tokens; $NVFP4MOE_TOKEN_PREPASS=0 turns it off
     (A/B runs: the same kernels, the tokens widened by every CTA). */
  v = nvfp4moe__getenv("NVFP4MOE_TOKEN_PREPASS");
  ctx->token_prepass = !(v && strcmp(v, "0") == 0);
  /* The token-producer tiles' _VARN twins (MMAs' N fitted to a part-full tile) where expected_m <
     m_max; $NVFP4MOE_VARN=0 keeps the plain tiles everywhere (A/B runs). */
  v = nvfp4moe__getenv("NVFP4MOE_VARN");
  ctx->varn = !(v && strcmp(v, "0") == 0);
  /* On TILED weights with K % 256 == 0 the token-producer tiles' _k256 twins (weight loads without
     predicates); $NVFP4MOE_K256=0 keeps the general modules (A/B runs). */
  v = nvfp4moe__getenv("NVFP4MOE_K256");
  ctx->k256 = !(v && strcmp(v, "0") == 0);
  /* In the expert layer a quantizer can write its GEMM's widened tokens itself (the _img kernels),
     so that GEMM launches no pre-pass: $NVFP4MOE_LAYER_WIDEN is a mask, bit 0 the input quantizer
     (GEMM1), bit 1 the SiLU quantizer (GEMM2, inter <= 4096). Default 2: the input quantizer's
     image was slower than the pre-pass on an H200 (bench/NOTES.md, twenty-first session); 0 keeps
     the pre-pass for both (A/B runs, and the tests that every mask gives the same bits). */
  v = nvfp4moe__getenv("NVFP4MOE_LAYER_WIDEN");
  ctx->layer_widen = v && v[0] >= '0' && v[0] <= '3' && !v[1] ? v[0] - '0' : 2;
  if (v && !(v[0] >= '0' && v[0] <= '3' && !v[1]))
    nvfp4moe__log(&d.logger, NVFP4MOE_LOG_WARN, "NVFP4MOE_LAYER_WIDEN=%s is not a mask 0-3: the default (2)", v);
  /* Which of the expert layer's quantizers take a programmatic dependent launch where the
     quantization kernels do (ctx->pdl 1, $NVFP4MOE_PDL unset): $NVFP4MOE_LAYER_PDL is a mask,
     bit 0 the input quantizer, bit 1 the SiLU quantizer (3: 0.5.6's launches, for A/B runs).
     Unset (-1): the input quantizer always, the SiLU quantizer unless GEMM1 ran a token-producer
     tile. Traced on an H100 (bench/NOTES.md, thirty-seventh session): after the DeepSeek-V3 EP8
     GEMM1 (48-token tile) the SiLU quantizer ran 24.6 us past GEMM1's end with the early launch
     against 19.3 us without (the layer 1.2-1.6 % faster without; also without its widened
     tokens, 0.7 %; Qwen3's layer, 32-token tile, +0.1-0.4 %), while after the swap-AB GEMM1 of
     the decode layer it gained 0.9 us with it. */
  v = nvfp4moe__getenv("NVFP4MOE_LAYER_PDL");
  ctx->layer_pdl = v && v[0] >= '0' && v[0] <= '3' && !v[1] ? v[0] - '0' : -1;
  if (v && !(v[0] >= '0' && v[0] <= '3' && !v[1]))
    nvfp4moe__log(&d.logger, NVFP4MOE_LOG_WARN, "NVFP4MOE_LAYER_PDL=%s is not a mask 0-3: the default", v);
  nvfp4moe__resolve_cache_dir(ctx);
  nvfp4moe__source_digest(ctx->source_digest);
  ctx->desc.cache_dir = ctx->cache_dir;
  ctx->desc.target = ctx->target;
  ctx->desc.backend = ctx->backend;
  ctx->desc.device = ctx->offline ? d.device : ctx->desc.device;
  ctx->desc.cu_context = ctx->cu_ctx;
  if (!ctx->desc.logger.level) ctx->desc.logger.level = nvfp4moe__level_of(&ctx->desc.logger);
  nvfp4moe__self_test(ctx);
  ctx->desc.backend = ctx->backend;
  *out = ctx;
  return NVFP4MOE_SUCCESS;
fail:
  nvfp4moe_destroy(ctx);
  return r;
}

NVFP4MOE__IMPL nvfp4moe_desc nvfp4moe_query_desc(const nvfp4moe_context* ctx) {
  nvfp4moe_desc d;
  memset(&d, 0, sizeof d);
  if (ctx) d = ctx->desc;
  return d;
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_query_info(const nvfp4moe_context* ctx, nvfp4moe_info* info) {
  nvfp4moe_context* c = (nvfp4moe_context*)ctx; /* counters are read under the lock */
  if (!ctx || !info)
    return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, !ctx ? "nvfp4moe_query_info: ctx is null" : "nvfp4moe_query_info: info is null");
  memset(info, 0, sizeof *info);
  snprintf(info->gpu_name, sizeof info->gpu_name, "%s", ctx->offline ? "(offline)" : ctx->gpu_name);
  snprintf(info->target, sizeof info->target, "%s", ctx->target);
  info->cc_major = ctx->cc_major;
  info->cc_minor = ctx->cc_minor;
  info->sm_count = ctx->sm_count;
  info->nvrtc_major = nvfp4moe__nvrtc_major;
  info->nvrtc_minor = nvfp4moe__nvrtc_minor;
  info->driver_version = ctx->driver_version;
  info->gemm_backend = ctx->backend;
  nvfp4moe__lock(&c->state_lock);
  snprintf(info->cache_dir, sizeof info->cache_dir, "%s", ctx->cache_on ? ctx->cache_dir : "");
  info->sm100_self_test = ctx->sm100_self_test;
  info->compiles = ctx->compiles;
  info->disk_hits = ctx->disk_hits;
  info->disk_writes = ctx->disk_writes;
  info->disk_rejects = ctx->disk_rejects;
  info->modules_loaded = ctx->modules_loaded;
  info->compile_ms = ctx->compile_ms;
  nvfp4moe__unlock(&c->state_lock);
  return NVFP4MOE_SUCCESS;
}

/* --------------------------------------------------------------------------------------
   Launching: make the context current for the call, prepare the kernel, launch
   -------------------------------------------------------------------------------------- */

typedef struct nvfp4moe__scope {
  int pushed;
} nvfp4moe__scope;

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__enter(nvfp4moe_context* ctx, const char* op, nvfp4moe__scope* sc) {
  nvfp4moe__CUcontext cur = 0;
  nvfp4moe__CUresult cr;
  sc->pushed = 0;
  if (ctx->offline)
    return nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_NOT_SUPPORTED,
                              "%s: this context is offline (compile only, target %s); it cannot launch kernels", op,
                              ctx->target);
  nvfp4moe__cu.cuCtxGetCurrent(&cur);
  if (cur == ctx->cu_ctx) return NVFP4MOE_SUCCESS;
  cr = nvfp4moe__cu.cuCtxPushCurrent(ctx->cu_ctx);
  if (cr != 0) return nvfp4moe__cuda_fail(&ctx->desc.logger, cr, "cuCtxPushCurrent");
  sc->pushed = 1;
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__leave(nvfp4moe__scope* sc, nvfp4moe_result r) {
  nvfp4moe__CUcontext prev;
  if (sc->pushed) nvfp4moe__cu.cuCtxPopCurrent(&prev);
  return r;
}

/* Dynamic shared memory above 48 KB must be opted into, once per kernel. */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__set_smem(nvfp4moe_context* ctx, int s, int k, unsigned smem) {
  nvfp4moe__module* m = &ctx->modules[s];
  nvfp4moe__CUresult cr = 0;
  if (smem == 0) return NVFP4MOE_SUCCESS; /* (the 48 KB limit counts static shared memory too) */
  nvfp4moe__lock(&m->lock);
  if (m->smem_set[k] < (int)smem) {
    cr = nvfp4moe__cu.cuFuncSetAttribute(m->fn[k], NVFP4MOE__CU_FUNC_MAX_DYN_SMEM, (int)smem);
    if (cr == 0) m->smem_set[k] = (int)smem;
  }
  nvfp4moe__unlock(&m->lock);
  return cr ? nvfp4moe__cuda_fail(&ctx->desc.logger, cr, "cuFuncSetAttribute(max dynamic shared memory)") : NVFP4MOE_SUCCESS;
}

/* Resident CTAs per SM of a kernel (for persistent grids), asked once. */
NVFP4MOE__PRIVATE int nvfp4moe__occupancy(nvfp4moe_context* ctx, int s, int k, int block, unsigned smem) {
  nvfp4moe__module* m = &ctx->modules[s];
  int occ;
  nvfp4moe__lock(&m->lock);
  if (!m->occupancy[k]) {
    int n = 0;
    if (nvfp4moe__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, m->fn[k], block, smem) != 0 || n < 1) n = 1;
    m->occupancy[k] = n;
  }
  occ = m->occupancy[k];
  nvfp4moe__unlock(&m->lock);
  return occ;
}

/* Registers per thread kernel k of module s was built with (-1 if the driver cannot say), asked once. */
NVFP4MOE__PRIVATE int nvfp4moe__num_regs(nvfp4moe_context* ctx, int s, int k) {
  nvfp4moe__module* m = &ctx->modules[s];
  int regs;
  nvfp4moe__lock(&m->lock);
  if (!m->regs[k]) {
    int n = 0;
    if (nvfp4moe__cu.cuFuncGetAttribute(&n, NVFP4MOE__CU_FUNC_NUM_REGS, m->fn[k]) != 0 || n < 1) n = -1;
    m->regs[k] = n;
  }
  regs = m->regs[k];
  nvfp4moe__unlock(&m->lock);
  return regs;
}

/* Whether kernel s launches as a programmatic dependent launch. pdl_always 1: wherever the context
   allows one at all (ctx->pdl != 0), for a kernel written to start under the kernel before it (the
   swap-AB GEMM after its token pre-pass); -1: only where every kernel does (ctx->pdl 2; the expert
   layer's quantizers that ctx->layer_pdl leaves out); 0: as ctx->pdl says */
NVFP4MOE__PRIVATE int nvfp4moe__pdl_on(const nvfp4moe_context* ctx, int s, int pdl_always) {
  return ctx->pdl == 2 ||
         (ctx->pdl == 1 && pdl_always >= 0 && (pdl_always || strncmp(nvfp4moe__specs[s].name, "gemm_", 5) != 0));
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__launch_as(nvfp4moe_context* ctx, const char* op, int s, int k, unsigned grid,
                                                      unsigned block, unsigned smem, nvfp4moe_stream stream, void** args,
                                                      int pdl_always) {
  nvfp4moe__CUresult cr;
  nvfp4moe_result r;
  int pdl;
  if (grid == 0) return NVFP4MOE_SUCCESS;
  r = nvfp4moe__prepare(ctx, s);
  if (r != NVFP4MOE_SUCCESS) return r;
  r = nvfp4moe__set_smem(ctx, s, k, smem);
  if (r != NVFP4MOE_SUCCESS) return r;
  pdl = nvfp4moe__pdl_on(ctx, s, pdl_always);
  if (pdl) {
    nvfp4moe__CUlaunchAttribute at;
    nvfp4moe__CUlaunchConfig cfg;
    memset(&at, 0, sizeof at);
    memset(&cfg, 0, sizeof cfg);
    at.id = NVFP4MOE__CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at.value.programmatic_stream_serialization_allowed = 1;
    cfg.grid_x = grid; cfg.grid_y = cfg.grid_z = 1;
    cfg.block_x = block; cfg.block_y = cfg.block_z = 1;
    cfg.smem = smem;
    cfg.stream = stream;
    cfg.attrs = &at;
    cfg.num_attrs = 1;
    cr = nvfp4moe__cu_launch_ex(&cfg, ctx->modules[s].fn[k], args, 0);
    if (cr != 0) { /* a driver or capture that refuses the attribute: the plain launch below */
      nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_WARN,
                    "%s: cuLaunchKernelEx with programmatic dependent launch failed (%d); launching without it", op,
                    (int)cr);
      pdl = 0;
    }
  }
  if (!pdl) cr = nvfp4moe__cu.cuLaunchKernel(ctx->modules[s].fn[k], grid, 1, 1, block, 1, 1, smem, stream, args, 0);
  if (cr != 0) {
    char what[160];
    snprintf(what, sizeof what, "%s: %s(%s)", op, pdl ? "cuLaunchKernelEx" : "cuLaunchKernel",
             nvfp4moe__specs[s].kernels[k]);
    return nvfp4moe__cuda_fail(&ctx->desc.logger, cr, what);
  }
  nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_DEBUG, "%s: launched %s, %u CTAs of %u threads, %u bytes of dynamic shared memory",
                op, nvfp4moe__specs[s].kernels[k], grid, block, smem);
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__launch(nvfp4moe_context* ctx, const char* op, int s, int k, unsigned grid,
                                                   unsigned block, unsigned smem, nvfp4moe_stream stream, void** args) {
  return nvfp4moe__launch_as(ctx, op, s, k, grid, block, smem, stream, args, 0);
}

/* --------------------------------------------------------------------------------------
   Host numerics: the same operations, in the same order, as kernels_src/common.cuh.
   Every product and sum goes through a volatile so the compiler cannot fuse or keep
   extra precision; decodes build bit patterns, so no subnormal arithmetic is needed
   for them (the reference assumes the default FP environment: no FTZ/DAZ).
   -------------------------------------------------------------------------------------- */

NVFP4MOE__PRIVATE float nvfp4moe__f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
NVFP4MOE__PRIVATE uint32_t nvfp4moe__bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
NVFP4MOE__PRIVATE float nvfp4moe__mul(float a, float b) { volatile float r = a * b; return r; }
NVFP4MOE__PRIVATE float nvfp4moe__add(float a, float b) { volatile float r = a + b; return r; }
NVFP4MOE__PRIVATE float nvfp4moe__sub(float a, float b) { volatile float r = a - b; return r; }
NVFP4MOE__PRIVATE float nvfp4moe__div(float a, float b) { volatile float r = a / b; return r; }
/* round to nearest even integer, |x| < 2^22 (as cvt.rni) */
NVFP4MOE__PRIVATE float nvfp4moe__rint(float x) { volatile float t = x + 12582912.0f; return t - 12582912.0f; }
NVFP4MOE__PRIVATE float nvfp4moe__fabs(float x) { return nvfp4moe__f32(nvfp4moe__bits(x) & 0x7FFFFFFFu); }
NVFP4MOE__PRIVATE int nvfp4moe__nonfinite(float x) { return (nvfp4moe__bits(x) & 0x7F800000u) == 0x7F800000u; }

#define NVFP4MOE__RCP6 0x3E2AAAABu    /* f32 nearest 1/6 */
#define NVFP4MOE__RCP2688 0x39C30C31u /* f32 nearest 1/2688 */
#define NVFP4MOE__FLT_MIN 1.17549435e-38f
#define NVFP4MOE__NAN 0x7FC00000u

NVFP4MOE__IMPL unsigned nvfp4moe_ref_e4m3_from_f32(float x) {
  uint32_t v;
  if (x != x) return 0x7Fu;
  if (!(x > 0.0f)) return 0u; /* ue4m3 has no sign: 0 and negatives give 0 */
  if (x >= 448.0f) return 0x7Eu;
  if (x < 0.015625f) return (unsigned)nvfp4moe__rint(nvfp4moe__mul(x, 512.0f));
  v = nvfp4moe__bits(x) - (120u << 23);
  return (v + 0x7FFFFu + ((v >> 20) & 1u)) >> 20;
}

NVFP4MOE__IMPL float nvfp4moe_ref_e4m3_to_f32(unsigned b) {
  b &= 0x7Fu;
  if (b == 0x7Fu) return nvfp4moe__f32(NVFP4MOE__NAN);
  if ((b >> 3) == 0) return (float)(b & 7u) * 0.001953125f; /* subnormal: m * 2^-9, exact */
  return nvfp4moe__f32((((b >> 3) + 120u) << 23) | ((b & 7u) << 20));
}

NVFP4MOE__PRIVATE unsigned nvfp4moe__e2m1_mag(float a) {
  return (unsigned)(a > 0.25f) + (unsigned)(a >= 0.75f) + (unsigned)(a > 1.25f) + (unsigned)(a >= 1.75f) +
         (unsigned)(a > 2.5f) + (unsigned)(a >= 3.5f) + (unsigned)(a > 5.0f);
}

NVFP4MOE__IMPL unsigned nvfp4moe_ref_e2m1_from_f32(float x) {
  return nvfp4moe__e2m1_mag(nvfp4moe__fabs(x)) | ((nvfp4moe__bits(x) >> 28) & 8u);
}

NVFP4MOE__IMPL float nvfp4moe_ref_e2m1_to_f32(unsigned code) {
  unsigned m = code & 7u;
  uint32_t bits = m < 2u ? (m ? 0x3F000000u : 0u) : ((126u + (m >> 1)) << 23) | ((m & 1u) << 22);
  return nvfp4moe__f32(bits | ((uint32_t)(code & 8u) << 28));
}

NVFP4MOE__IMPL float nvfp4moe_ref_bf16_to_f32(unsigned short h) { return nvfp4moe__f32((uint32_t)h << 16); }

NVFP4MOE__IMPL float nvfp4moe_ref_fp16_to_f32(unsigned short h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
  if (e == 31) return nvfp4moe__f32(sign | 0x7F800000u | (m << 13));
  if (e == 0) {
    float v = (float)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
    return sign ? -v : v;
  }
  return nvfp4moe__f32(sign | ((e + 112u) << 23) | (m << 13));
}

NVFP4MOE__IMPL unsigned short nvfp4moe_ref_f32_to_bf16(float x) {
  uint32_t u = nvfp4moe__bits(x);
  if (x != x) return 0x7FFF; /* canonical NaN, as cvt.rn.bf16.f32 */
  return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* double -> bf16 with one rounding (RNE): via f32, correcting the one case where the
   first rounding manufactured a tie. */
NVFP4MOE__PRIVATE unsigned short nvfp4moe__f64_to_bf16(double d) {
  float f = (float)d;
  uint32_t u = nvfp4moe__bits(f);
  if (d != d) return 0x7FFF;
  if ((u & 0xFFFFu) == 0x8000u && (double)f != d) {
    int away = (d < 0 ? -d : d) > (f < 0 ? -(double)f : (double)f);
    return (unsigned short)((away ? u + 0x8000u : u) >> 16);
  }
  return nvfp4moe_ref_f32_to_bf16(f);
}

NVFP4MOE__PRIVATE float nvfp4moe__exp(float x) {
  float n, r, p;
  int ni, h;
  if (x != x) return x;
  if (x > 88.7228394f) return nvfp4moe__f32(0x7F800000u);
  if (x < -103.972084f) return 0.0f;
  n = nvfp4moe__rint(nvfp4moe__mul(x, 1.44269502f));
  r = nvfp4moe__sub(x, nvfp4moe__mul(n, 0.693145751953125f));
  r = nvfp4moe__sub(r, nvfp4moe__mul(n, 1.42860677e-06f));
  p = 1.38888889e-3f;
  p = nvfp4moe__add(nvfp4moe__mul(p, r), 8.33333377e-3f);
  p = nvfp4moe__add(nvfp4moe__mul(p, r), 4.16666679e-2f);
  p = nvfp4moe__add(nvfp4moe__mul(p, r), 0.166666672f);
  p = nvfp4moe__add(nvfp4moe__mul(p, r), 0.5f);
  p = nvfp4moe__add(nvfp4moe__mul(p, r), 1.0f);
  p = nvfp4moe__add(nvfp4moe__mul(p, r), 1.0f);
  ni = (int)n;
  h = ni / 2;
  p = nvfp4moe__mul(p, nvfp4moe__f32((uint32_t)(h + 127) << 23));
  return nvfp4moe__mul(p, nvfp4moe__f32((uint32_t)(ni - h + 127) << 23));
}

NVFP4MOE__IMPL float nvfp4moe_ref_silu_mul(float g, float u) {
  float sg = nvfp4moe__div(g, nvfp4moe__add(1.0f, nvfp4moe__exp(-g)));
  return nvfp4moe_ref_bf16_to_f32(nvfp4moe_ref_f32_to_bf16(nvfp4moe__mul(sg, u)));
}

/* 16 codes of x[i] * out, sign from x (a zero keeps +-0 even if out is +inf). */
NVFP4MOE__PRIVATE void nvfp4moe__e2m1_pack16(const float* x, float out, uint32_t* q) {
  int w, j;
  for (w = 0; w < 2; ++w) {
    uint32_t word = 0;
    for (j = 0; j < 8; ++j) {
      float v = x[w * 8 + j];
      uint32_t c = nvfp4moe__e2m1_mag(nvfp4moe__fabs(nvfp4moe__mul(v, out))) | ((nvfp4moe__bits(v) >> 28) & 8u);
      word |= c << (4 * j);
    }
    q[w] = word;
  }
}

NVFP4MOE__PRIVATE float nvfp4moe__block_error(const float* x, const uint32_t* q, float sff, float s, int mse) {
  float err = 0.0f;
  int i;
  for (i = 0; i < 16; ++i) {
    unsigned c = (q[i >> 3] >> (4 * (i & 7))) & 0xFu;
    float deq = nvfp4moe__mul(nvfp4moe__mul(nvfp4moe_ref_e2m1_to_f32(c), sff), s);
    float d = nvfp4moe__sub(deq, x[i]);
    err = nvfp4moe__add(err, mse ? nvfp4moe__mul(d, d) : nvfp4moe__fabs(d));
  }
  return err;
}

/* NUMERICS.md 2, steps 2-5 and 4over6, for one block of 16 finite values. */
NVFP4MOE__PRIVATE unsigned nvfp4moe__quantize_block16(const float* x, float amax, float s, float t, int fo6,
                                                      uint32_t* q) {
  float st;
  unsigned sf6, sf4;
  uint32_t q4[2] = {0u, 0u};
  float e6, e4;
  q[0] = q[1] = 0u;
  if (amax == 0.0f) return 0u;
  st = nvfp4moe__mul(amax, t);
  sf6 = nvfp4moe_ref_e4m3_from_f32(st);
  if (sf6) nvfp4moe__e2m1_pack16(x, nvfp4moe__div(1.0f, nvfp4moe__mul(nvfp4moe_ref_e4m3_to_f32(sf6), s)), q);
  if (!fo6) return sf6;
  sf4 = nvfp4moe_ref_e4m3_from_f32(nvfp4moe__mul(st, 1.5f));
  if (sf4) nvfp4moe__e2m1_pack16(x, nvfp4moe__div(1.0f, nvfp4moe__mul(nvfp4moe_ref_e4m3_to_f32(sf4), s)), q4);
  e6 = nvfp4moe__block_error(x, q, nvfp4moe_ref_e4m3_to_f32(sf6), s, fo6 == 2);
  e4 = nvfp4moe__block_error(x, q4, nvfp4moe_ref_e4m3_to_f32(sf4), s, fo6 == 2);
  if (e4 < e6) {
    q[0] = q4[0];
    q[1] = q4[1];
    return sf4;
  }
  return sf6;
}

NVFP4MOE__PRIVATE long long nvfp4moe__sf_off_128x4(long long r, int c, int kc4) {
  return (r / 128) * kc4 * 512 + (long long)(c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4);
}

NVFP4MOE__IMPL size_t nvfp4moe_weight_bytes(int n, int k, nvfp4moe_weight_layout layout) {
  if (n <= 0 || k <= 0 || k % 32 != 0) return 0;
  if (layout == NVFP4MOE_WEIGHTS_ROW_MAJOR) return (size_t)n * (size_t)(k / 2);
  if (layout == NVFP4MOE_WEIGHTS_TILED && n % 16 == 0) return (size_t)n * (((size_t)k + 127) / 128) * 64;
  return 0;
}

NVFP4MOE__IMPL size_t nvfp4moe_sf_bytes(int rows, int k, nvfp4moe_sf_layout layout) {
  size_t nblk, kc4;
  if (rows <= 0 || k <= 0 || k % 16 != 0) return 0;
  if (layout != NVFP4MOE_SF_LAYOUT_LINEAR && layout != NVFP4MOE_SF_LAYOUT_128X4) return 0;
  nblk = (size_t)k / 16;
  kc4 = (nblk + 3) / 4;
  if (layout == NVFP4MOE_SF_LAYOUT_LINEAR) return (size_t)rows * nblk;
  return (((size_t)rows + 127) / 128) * 128 * 4 * kc4;
}

/* --------------------------------------------------------------------------------------
   Argument checks, shared by the device entry points and the host reference
   -------------------------------------------------------------------------------------- */

NVFP4MOE__PRIVATE NVFP4MOE__PRINTF(3, 4) nvfp4moe_result
nvfp4moe__arg_fail(const nvfp4moe_logger* lg, const char* fn, const char* fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return nvfp4moe__fail_log(lg, NVFP4MOE_ERROR_INVALID_ARGUMENT, "%s: %s", fn, msg);
}

#define NVFP4MOE__REQUIRE(cond, ...)                                        \
  do {                                                                      \
    if (!(cond)) return nvfp4moe__arg_fail(lg, fn, __VA_ARGS__);            \
  } while (0)
#define NVFP4MOE__ALIGNED(p, n) (!dev || ((p) % (n)) == 0)
/* one pointer a check, so the message names the null one ("args->sf is null") */
#define NVFP4MOE__NONNULL(s, name, f) NVFP4MOE__REQUIRE((s)->f != 0, name "->" #f " is null")
/* a device pointer field aligned to n bytes ("args->x = 0x... must be 16-byte aligned") */
#define NVFP4MOE__ALIGNED_FIELD(s, name, f, n) \
  NVFP4MOE__REQUIRE(NVFP4MOE__ALIGNED((s)->f, n), name "->" #f " = 0x%llx must be " #n "-byte aligned", (s)->f)
/* a dimension past NVFP4MOE_DIM_MAX (so that sums such as rows + 127 stay in an int) */
#define NVFP4MOE__DIM(s, name, f) \
  NVFP4MOE__REQUIRE((s)->f <= NVFP4MOE_DIM_MAX, name "->" #f " = %d is past 2^30 (NVFP4MOE_DIM_MAX)", (s)->f)

NVFP4MOE__PRIVATE int nvfp4moe__normal_positive(float s) { return s >= NVFP4MOE__FLT_MIN && !nvfp4moe__nonfinite(s); }

/* dev: device pointers (alignment rules apply). Returns the effective row stride. */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__check_quantize(const nvfp4moe_logger* lg, const char* fn,
                                                           const nvfp4moe_quantize_args* a, int per_token, int silu,
                                                           int dev, long long* stride) {
  long long width;
  NVFP4MOE__REQUIRE(a != 0, "args is null");
  NVFP4MOE__REQUIRE(a->dtype == NVFP4MOE_DTYPE_BF16 || a->dtype == NVFP4MOE_DTYPE_FP16,
                    "args->dtype = %d: the input must be BF16 or FP16", (int)a->dtype);
  NVFP4MOE__REQUIRE(a->groups >= 1, "args->groups = %d must be >= 1", a->groups);
  NVFP4MOE__REQUIRE(a->rows >= 1, "args->rows = %d must be >= 1", a->rows);
  NVFP4MOE__REQUIRE(a->k > 0 && a->k % 16 == 0, "args->k = %d must be a positive multiple of 16 (one SF per 16 elements)",
                    a->k);
  NVFP4MOE__DIM(a, "args", groups);
  NVFP4MOE__DIM(a, "args", rows);
  NVFP4MOE__DIM(a, "args", k);
  width = silu ? 2LL * a->k : a->k;
  *stride = a->x_row_stride ? a->x_row_stride : width;
  NVFP4MOE__REQUIRE(*stride >= width, "args->x_row_stride = %lld is smaller than the row width %lld", *stride, width);
  NVFP4MOE__REQUIRE(*stride % 8 == 0, "args->x_row_stride = %lld must be a multiple of 8 elements (16-byte rows)", *stride);
  NVFP4MOE__REQUIRE((double)a->groups * a->rows * (double)*stride < 9.0e18, "args->groups * rows * row stride overflows");
  NVFP4MOE__REQUIRE(a->x != 0, "args->x is null");
  NVFP4MOE__ALIGNED_FIELD(a, "args", x, 16);
  NVFP4MOE__REQUIRE(a->out_e2m1 != 0, "args->out_e2m1 is null");
  NVFP4MOE__ALIGNED_FIELD(a, "args", out_e2m1, 8);
  NVFP4MOE__REQUIRE(a->out_sf != 0, "args->out_sf is null");
  NVFP4MOE__REQUIRE(a->sf_layout == NVFP4MOE_SF_LAYOUT_128X4 || a->sf_layout == NVFP4MOE_SF_LAYOUT_LINEAR,
                    "args->sf_layout = %d is not a layout", (int)a->sf_layout);
  NVFP4MOE__ALIGNED_FIELD(a, "args", masked_m, 4);
  NVFP4MOE__REQUIRE((a->flags & ~3u) == 0, "args->flags = 0x%x has unknown bits (NVFP4MOE_QUANT_*)", a->flags);
  if (per_token) {
    NVFP4MOE__REQUIRE(a->scale != 0, "args->scale is null: per-token quantization writes the decode scales there");
  } else {
    NVFP4MOE__REQUIRE(a->scale != 0 || nvfp4moe__normal_positive(a->scale_value),
                      "args->scale_value = %g must be a finite normal decode scale > 0 (or give args->scale)",
                      (double)a->scale_value);
  }
  NVFP4MOE__ALIGNED_FIELD(a, "args", scale, 4);
  NVFP4MOE__REQUIRE(silu || (a->gate_scale == 0 && a->up_scale == 0),
                    "args->gate_scale / up_scale are for the SiLU functions only");
  NVFP4MOE__ALIGNED_FIELD(a, "args", gate_scale, 4);
  NVFP4MOE__ALIGNED_FIELD(a, "args", up_scale, 4);
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__check_gemm(const nvfp4moe_logger* lg, const char* fn,
                                                       const nvfp4moe_gemm_args* a, int dev, long long* ldd) {
  NVFP4MOE__REQUIRE(a != 0, "args is null");
  NVFP4MOE__REQUIRE(a->groups >= 1, "args->groups = %d must be >= 1", a->groups);
  NVFP4MOE__REQUIRE(a->m_max >= 1, "args->m_max = %d must be >= 1", a->m_max);
  NVFP4MOE__REQUIRE(a->n > 0 && a->n % 8 == 0, "args->n = %d must be a positive multiple of 8 (16-byte bf16 rows)", a->n);
  NVFP4MOE__REQUIRE(a->k > 0 && a->k % 32 == 0, "args->k = %d must be a positive multiple of 32 (16-byte E2M1 rows)", a->k);
  NVFP4MOE__DIM(a, "args", groups);
  NVFP4MOE__DIM(a, "args", m_max);
  NVFP4MOE__DIM(a, "args", n);
  NVFP4MOE__DIM(a, "args", k);
  *ldd = a->ldd ? a->ldd : a->n;
  NVFP4MOE__REQUIRE(*ldd >= a->n && *ldd % 8 == 0, "args->ldd = %lld must be >= n = %d and a multiple of 8", *ldd, a->n);
  NVFP4MOE__NONNULL(a, "args", a);
  NVFP4MOE__NONNULL(a, "args", a_sf);
  NVFP4MOE__NONNULL(a, "args", b);
  NVFP4MOE__NONNULL(a, "args", b_sf);
  NVFP4MOE__REQUIRE(a->d != 0, "args->d is null");
  NVFP4MOE__REQUIRE(a->masked_m != 0, "args->masked_m is null (int32 [G], %s)", dev ? "on the device" : "a host array here");
  NVFP4MOE__REQUIRE(NVFP4MOE__ALIGNED(a->a, 16) && NVFP4MOE__ALIGNED(a->b, 16) && NVFP4MOE__ALIGNED(a->d, 16),
                    "args->a, b and d must be 16-byte aligned (a=0x%llx b=0x%llx d=0x%llx)", a->a, a->b, a->d);
  NVFP4MOE__ALIGNED_FIELD(a, "args", a_sf, 16);
  NVFP4MOE__ALIGNED_FIELD(a, "args", b_sf, 16);
  NVFP4MOE__ALIGNED_FIELD(a, "args", masked_m, 4);
  NVFP4MOE__ALIGNED_FIELD(a, "args", alpha, 4);
  NVFP4MOE__ALIGNED_FIELD(a, "args", row_scale, 4);
  NVFP4MOE__REQUIRE((double)a->groups * a->m_max * (double)*ldd < 9.0e18 &&
                        (double)a->groups * a->n * (double)a->k < 9.0e18,
                    "args shapes overflow 64-bit offsets");
  NVFP4MOE__REQUIRE(a->expected_m >= 0, "args->expected_m = %d must be >= 0", a->expected_m);
  NVFP4MOE__REQUIRE(a->b_layout == NVFP4MOE_WEIGHTS_ROW_MAJOR || a->b_layout == NVFP4MOE_WEIGHTS_TILED,
                    "args->b_layout = %d is not a weight layout", (int)a->b_layout);
  NVFP4MOE__REQUIRE(a->b_layout != NVFP4MOE_WEIGHTS_TILED || a->n % 16 == 0,
                    "args->b_layout is TILED, which needs n %% 16 == 0 (n = %d)", a->n);
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__check_sf_convert(const nvfp4moe_logger* lg, const char* fn,
                                                             const nvfp4moe_sf_convert_args* a) {
  size_t s, d;
  NVFP4MOE__REQUIRE(a != 0, "args is null");
  NVFP4MOE__REQUIRE(a->groups >= 1, "args->groups = %d must be >= 1", a->groups);
  NVFP4MOE__REQUIRE(a->rows >= 1, "args->rows = %d must be >= 1", a->rows);
  NVFP4MOE__REQUIRE(a->k > 0 && a->k % 16 == 0, "args->k = %d must be a positive multiple of 16", a->k);
  NVFP4MOE__DIM(a, "args", groups);
  NVFP4MOE__DIM(a, "args", rows);
  NVFP4MOE__DIM(a, "args", k);
  NVFP4MOE__REQUIRE((double)a->groups * ((double)a->rows + 128.0) * (double)a->k < 9.0e18, "args shapes overflow 64-bit offsets");
  NVFP4MOE__NONNULL(a, "args", src);
  NVFP4MOE__NONNULL(a, "args", dst);
  NVFP4MOE__REQUIRE(a->dst_layout == NVFP4MOE_SF_LAYOUT_128X4 || a->dst_layout == NVFP4MOE_SF_LAYOUT_LINEAR,
                    "args->dst_layout = %d is not a layout", (int)a->dst_layout);
  d = nvfp4moe_sf_bytes(a->rows, a->k, a->dst_layout) * (size_t)a->groups;
  s = nvfp4moe_sf_bytes(a->rows, a->k, a->dst_layout == NVFP4MOE_SF_LAYOUT_LINEAR ? NVFP4MOE_SF_LAYOUT_128X4
                                                                                : NVFP4MOE_SF_LAYOUT_LINEAR) *
      (size_t)a->groups;
  NVFP4MOE__REQUIRE(a->src + s <= a->dst || a->dst + d <= a->src, "args->src and dst overlap");
  return NVFP4MOE_SUCCESS;
}

/* Byte o (< K/2; TILED: up to ceil(K/128) 64, the padding) of row r of an [rows, K] weight matrix in a
   weight layout (nvfp4moe_weight_layout). */
NVFP4MOE__PRIVATE size_t nvfp4moe__weight_byte(int layout, size_t r, size_t o, int k) {
  if (layout == NVFP4MOE_WEIGHTS_ROW_MAJOR) return r * (size_t)(k / 2) + o;
  return (r - r % 16) * (((size_t)k + 127) / 128) * 64 + o / 64 * 1024 + r % 16 * 64 + o % 64;
}

/* The TILED layout's code encoding within each little-endian 4-byte word (kernels_src/dequant_bf16.cuh,
   nvf_wenc_word): element i (0..7, nibble i of the plain word) keeps its magnitude bits at bit
   nvfp4moe__wenc_mag[i % 4] + 16 (i / 4) up and its sign at nvfp4moe__wenc_sgn[i % 4] + 16 (i / 4). */
static const int nvfp4moe__wenc_mag[4] = {9, 6, 3, 0}, nvfp4moe__wenc_sgn[4] = {15, 12, 14, 13};
NVFP4MOE__PRIVATE unsigned nvfp4moe__wenc(unsigned w) { /* plain -> encoded */
  unsigned o = 0;
  int i;
  for (i = 0; i < 8; ++i) {
    unsigned n = (w >> (4 * i)) & 15u;
    o |= (n & 7u) << (nvfp4moe__wenc_mag[i & 3] + 16 * (i >> 2)) | (n >> 3) << (nvfp4moe__wenc_sgn[i & 3] + 16 * (i >> 2));
  }
  return o;
}
/* Element i's code (0..15) of an encoded word. */
NVFP4MOE__PRIVATE unsigned nvfp4moe__wdec_code(unsigned o, int i) {
  return ((o >> (nvfp4moe__wenc_mag[i & 3] + 16 * (i >> 2))) & 7u) | ((o >> (nvfp4moe__wenc_sgn[i & 3] + 16 * (i >> 2))) & 1u) << 3;
}
NVFP4MOE__PRIVATE unsigned nvfp4moe__wdec(unsigned o) { /* encoded -> plain */
  unsigned w = 0;
  int i;
  for (i = 0; i < 8; ++i) w |= nvfp4moe__wdec_code(o, i) << (4 * i);
  return w;
}
NVFP4MOE__PRIVATE unsigned nvfp4moe__ld32(const unsigned char* p) {
  return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24;
}
NVFP4MOE__PRIVATE void nvfp4moe__st32(unsigned char* p, unsigned v) {
  p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}

/* The code (0..15) of element c of row r of a weight matrix in a layout. */
NVFP4MOE__PRIVATE unsigned nvfp4moe__weight_code(const unsigned char* q, int layout, size_t r, int c, int k) {
  if (layout == NVFP4MOE_WEIGHTS_ROW_MAJOR) {
    unsigned char byte = q[nvfp4moe__weight_byte(layout, r, (size_t)(c / 2), k)];
    return (c & 1) ? byte >> 4 : byte & 15u;
  }
  return nvfp4moe__wdec_code(nvfp4moe__ld32(q + nvfp4moe__weight_byte(layout, r, (size_t)(c / 8 * 4), k)), c % 8);
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__check_relayout(const nvfp4moe_logger* lg, const char* fn,
                                                           const nvfp4moe_weights_relayout_args* a, int dev) {
  size_t bytes;
  NVFP4MOE__REQUIRE(a != 0, "args is null");
  NVFP4MOE__REQUIRE(a->groups >= 1, "args->groups = %d must be >= 1", a->groups);
  NVFP4MOE__REQUIRE(a->n > 0 && a->n % 16 == 0, "args->n = %d must be a positive multiple of 16 (16-row tiles)", a->n);
  NVFP4MOE__REQUIRE(a->k > 0 && a->k % 32 == 0, "args->k = %d must be a positive multiple of 32", a->k);
  NVFP4MOE__DIM(a, "args", groups);
  NVFP4MOE__DIM(a, "args", n);
  NVFP4MOE__DIM(a, "args", k);
  NVFP4MOE__REQUIRE(a->dst_layout == NVFP4MOE_WEIGHTS_ROW_MAJOR || a->dst_layout == NVFP4MOE_WEIGHTS_TILED,
                    "args->dst_layout = %d is not a weight layout", (int)a->dst_layout);
  NVFP4MOE__NONNULL(a, "args", src);
  NVFP4MOE__NONNULL(a, "args", dst);
  NVFP4MOE__ALIGNED_FIELD(a, "args", src, 16);
  NVFP4MOE__ALIGNED_FIELD(a, "args", dst, 16);
  NVFP4MOE__REQUIRE((double)a->groups * a->n * (double)a->k < 9.0e18, "args shapes overflow 64-bit offsets");
  { /* each buffer's own size: a TILED one is larger when K % 128 != 0 */
    size_t sb = (size_t)a->groups * nvfp4moe_weight_bytes(a->n, a->k, a->dst_layout == NVFP4MOE_WEIGHTS_TILED
                                                                              ? NVFP4MOE_WEIGHTS_ROW_MAJOR
                                                                              : NVFP4MOE_WEIGHTS_TILED);
    bytes = (size_t)a->groups * nvfp4moe_weight_bytes(a->n, a->k, a->dst_layout);
    NVFP4MOE__REQUIRE(a->src + sb <= a->dst || a->dst + bytes <= a->src, "args->src and dst overlap");
  }
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__check_dequantize(const nvfp4moe_logger* lg, const char* fn,
                                                             const nvfp4moe_dequantize_args* a, int dev) {
  NVFP4MOE__REQUIRE(a != 0, "args is null");
  NVFP4MOE__REQUIRE(a->groups >= 1, "args->groups = %d must be >= 1", a->groups);
  NVFP4MOE__REQUIRE(a->rows >= 1, "args->rows = %d must be >= 1", a->rows);
  NVFP4MOE__REQUIRE(a->k > 0 && a->k % 16 == 0, "args->k = %d must be a positive multiple of 16", a->k);
  NVFP4MOE__DIM(a, "args", groups);
  NVFP4MOE__DIM(a, "args", rows);
  NVFP4MOE__DIM(a, "args", k);
  NVFP4MOE__REQUIRE((double)a->groups * ((double)a->rows + 128.0) * (double)a->k < 9.0e18, "args shapes overflow 64-bit offsets");
  NVFP4MOE__NONNULL(a, "args", e2m1);
  NVFP4MOE__NONNULL(a, "args", sf);
  NVFP4MOE__NONNULL(a, "args", scale);
  NVFP4MOE__NONNULL(a, "args", out);
  NVFP4MOE__REQUIRE(a->scale_per_row == 0 || a->scale_per_row == 1,
                    "args->scale_per_row = %d must be 0 (scale f32 [G]) or 1 ([G, rows])", a->scale_per_row);
  NVFP4MOE__REQUIRE(a->sf_layout == NVFP4MOE_SF_LAYOUT_128X4 || a->sf_layout == NVFP4MOE_SF_LAYOUT_LINEAR,
                    "args->sf_layout = %d is not a layout", (int)a->sf_layout);
  NVFP4MOE__REQUIRE(a->out_dtype == NVFP4MOE_DTYPE_F32 || a->out_dtype == NVFP4MOE_DTYPE_BF16,
                    "args->out_dtype = %d must be F32 or BF16", (int)a->out_dtype);
  NVFP4MOE__ALIGNED_FIELD(a, "args", e2m1, 8);
  NVFP4MOE__ALIGNED_FIELD(a, "args", out, 16);
  NVFP4MOE__ALIGNED_FIELD(a, "args", scale, 4);
  NVFP4MOE__ALIGNED_FIELD(a, "args", masked_m, 4);
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__check_weights(const nvfp4moe_logger* lg, const char* fn,
                                                          const nvfp4moe_weight_quantize_args* a, int dev) {
  NVFP4MOE__REQUIRE(a != 0, "args is null");
  NVFP4MOE__REQUIRE(a->dtype == NVFP4MOE_DTYPE_BF16 || a->dtype == NVFP4MOE_DTYPE_FP16,
                    "args->dtype = %d: weights must be BF16 or FP16", (int)a->dtype);
  NVFP4MOE__REQUIRE(a->experts >= 1, "args->experts = %d must be >= 1", a->experts);
  NVFP4MOE__REQUIRE(a->n >= 1, "args->n = %d must be >= 1", a->n);
  NVFP4MOE__DIM(a, "args", experts);
  NVFP4MOE__DIM(a, "args", n);
  NVFP4MOE__REQUIRE(a->k > 0 && a->k % 16 == 0, "args->k = %d must be a positive multiple of 16", a->k);
  NVFP4MOE__DIM(a, "args", k);
  NVFP4MOE__REQUIRE((double)a->experts * ((double)a->n + 128.0) * (double)a->k < 9.0e18, "args shapes overflow 64-bit offsets");
  NVFP4MOE__NONNULL(a, "args", w);
  NVFP4MOE__NONNULL(a, "args", out_e2m1);
  NVFP4MOE__NONNULL(a, "args", out_sf);
  NVFP4MOE__NONNULL(a, "args", out_scale);
  NVFP4MOE__REQUIRE(NVFP4MOE__ALIGNED(a->w, 16), "args->w must be 16-byte aligned");
  NVFP4MOE__REQUIRE(NVFP4MOE__ALIGNED(a->out_e2m1, 8), "args->out_e2m1 must be 8-byte aligned");
  NVFP4MOE__REQUIRE(NVFP4MOE__ALIGNED(a->out_scale, 4), "args->out_scale must be 4-byte aligned");
  NVFP4MOE__REQUIRE((a->flags & ~3u) == 0, "args->flags = 0x%x has unknown bits (NVFP4MOE_QUANT_*)", a->flags);
  return NVFP4MOE_SUCCESS;
}

/* Positive shapes within NVFP4MOE_DIM_MAX (2 I, GEMM1's N, included) whose expert-layer workspace
   stays below 2^63 bytes (nvfp4moe__moe_layout's regions sum to less than 16 E (m_max + 128)
   (max(H, I) + 256) bytes: a bound, so sizes from about 2^62 bytes fail it too), so that its size_t
   sums cannot wrap and the GEMMs' int arithmetic cannot overflow. */
NVFP4MOE__PRIVATE int nvfp4moe__moe_shapes_ok(const nvfp4moe_moe_weights* w, int m_max) {
  double wide;
  if (!w || w->experts < 1 || w->hidden < 1 || w->inter < 1 || m_max < 1 || w->experts > NVFP4MOE_DIM_MAX ||
      w->hidden > NVFP4MOE_DIM_MAX || w->inter > NVFP4MOE_DIM_MAX / 2 || m_max > NVFP4MOE_DIM_MAX)
    return 0;
  wide = (double)(w->hidden > w->inter ? w->hidden : w->inter) + 256.0;
  return (double)w->experts * ((double)m_max + 128.0) * wide * 16.0 < 9.0e18;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__check_moe(const nvfp4moe_logger* lg, const char* fn,
                                                      const nvfp4moe_moe_weights* w, const nvfp4moe_moe_args* a, int dev,
                                                      size_t need) {
  NVFP4MOE__REQUIRE(w != 0, "weights is null");
  NVFP4MOE__REQUIRE(a != 0, "args is null");
  NVFP4MOE__REQUIRE(w->experts >= 1, "weights->experts = %d must be >= 1", w->experts);
  NVFP4MOE__REQUIRE(w->hidden > 0 && w->hidden % 32 == 0, "weights->hidden = %d must be a positive multiple of 32",
                    w->hidden);
  NVFP4MOE__REQUIRE(w->inter > 0 && w->inter % 32 == 0, "weights->inter = %d must be a positive multiple of 32", w->inter);
  NVFP4MOE__NONNULL(w, "weights", w13);
  NVFP4MOE__NONNULL(w, "weights", w13_sf);
  NVFP4MOE__NONNULL(w, "weights", w13_gate_scale);
  NVFP4MOE__NONNULL(w, "weights", w13_up_scale);
  NVFP4MOE__NONNULL(w, "weights", w2);
  NVFP4MOE__NONNULL(w, "weights", w2_sf);
  NVFP4MOE__NONNULL(w, "weights", w2_scale);
  NVFP4MOE__ALIGNED_FIELD(w, "weights", w13, 16);
  NVFP4MOE__ALIGNED_FIELD(w, "weights", w13_sf, 16);
  NVFP4MOE__ALIGNED_FIELD(w, "weights", w2, 16);
  NVFP4MOE__ALIGNED_FIELD(w, "weights", w2_sf, 16);
  NVFP4MOE__ALIGNED_FIELD(w, "weights", w13_gate_scale, 4);
  NVFP4MOE__ALIGNED_FIELD(w, "weights", w13_up_scale, 4);
  NVFP4MOE__ALIGNED_FIELD(w, "weights", w2_scale, 4);
  NVFP4MOE__REQUIRE(w->layout == NVFP4MOE_WEIGHTS_ROW_MAJOR || w->layout == NVFP4MOE_WEIGHTS_TILED,
                    "weights->layout = %d is not a weight layout", (int)w->layout);
  NVFP4MOE__REQUIRE(a->scaling == NVFP4MOE_ACT_PER_TOKEN || a->scaling == NVFP4MOE_ACT_PER_EXPERT,
                    "args->scaling = %d is not an activation scaling", (int)a->scaling);
  NVFP4MOE__REQUIRE(a->scaling == NVFP4MOE_ACT_PER_TOKEN || (w->input_scale1 && w->input_scale2),
                    "per-expert activation scaling needs weights->input_scale1 and input_scale2");
  if (a->scaling == NVFP4MOE_ACT_PER_EXPERT) { /* (read only then) */
    NVFP4MOE__ALIGNED_FIELD(w, "weights", input_scale1, 4);
    NVFP4MOE__ALIGNED_FIELD(w, "weights", input_scale2, 4);
  }
  NVFP4MOE__REQUIRE(a->m_max >= 1, "args->m_max = %d must be >= 1", a->m_max);
  NVFP4MOE__DIM(w, "weights", experts);
  NVFP4MOE__DIM(w, "weights", hidden);
  NVFP4MOE__REQUIRE(w->inter <= NVFP4MOE_DIM_MAX / 2, "weights->inter = %d is past 2^29: GEMM1's N, 2 x inter, is past 2^30 "
                    "(NVFP4MOE_DIM_MAX)", w->inter);
  NVFP4MOE__DIM(a, "args", m_max);
  NVFP4MOE__REQUIRE(nvfp4moe__moe_shapes_ok(w, a->m_max),
                    "weights->experts %d, hidden %d, inter %d with args->m_max %d: the workspace would pass 2^62 bytes",
                    w->experts, w->hidden, w->inter, a->m_max);
  NVFP4MOE__REQUIRE(a->expected_m >= 0, "args->expected_m = %d must be >= 0", a->expected_m);
  NVFP4MOE__REQUIRE((a->quant_flags & ~3u) == 0, "args->quant_flags = 0x%x has unknown bits", a->quant_flags);
  NVFP4MOE__NONNULL(a, "args", x);
  NVFP4MOE__NONNULL(a, "args", masked_m);
  NVFP4MOE__NONNULL(a, "args", out);
  NVFP4MOE__ALIGNED_FIELD(a, "args", x, 16);
  NVFP4MOE__ALIGNED_FIELD(a, "args", out, 16);
  NVFP4MOE__NONNULL(a, "args", workspace);
  NVFP4MOE__ALIGNED_FIELD(a, "args", workspace, 256);
  NVFP4MOE__REQUIRE(a->workspace_size >= need, "args->workspace_size = %zu but this call needs %zu (nvfp4moe_moe_workspace_size_for)",
                    a->workspace_size, need);
  return NVFP4MOE_SUCCESS;
}

/* --------------------------------------------------------------------------------------
   Operations: quantization
   -------------------------------------------------------------------------------------- */

/* Mirror of NvfQuantParams (kernels_src/quantize.cu): same fields, same order. */
typedef struct nvfp4moe__quant_params {
  nvfp4moe_devptr x;
  long long x_row_stride, x_group_stride;
  nvfp4moe_devptr q, sf, scale_out, scale_in, gate_scale, up_scale, masked_m;
  float scale_value;
  int groups, rows, k, sf_linear, per_token, fo6, fp16, pad_rows, team, stage;
} nvfp4moe__quant_params;

NVFP4MOE__PRIVATE int nvfp4moe__fo6(unsigned flags) {
  return (flags & NVFP4MOE_QUANT_4OVER6_MSE) ? 2 : (flags & NVFP4MOE_QUANT_4OVER6) ? 1 : 0;
}

NVFP4MOE__PRIVATE nvfp4moe__quant_params nvfp4moe__quant_params_of(const nvfp4moe_quantize_args* a, long long stride,
                                                                   int per_token) {
  nvfp4moe__quant_params p;
  memset(&p, 0, sizeof p);
  p.x = a->x;
  p.x_row_stride = stride;
  p.x_group_stride = stride * a->rows;
  p.q = a->out_e2m1;
  p.sf = a->out_sf;
  if (per_token) p.scale_out = a->scale;
  else p.scale_in = a->scale;
  p.gate_scale = a->gate_scale;
  p.up_scale = a->up_scale;
  p.masked_m = a->masked_m;
  p.scale_value = a->scale_value;
  p.groups = a->groups;
  p.rows = a->rows;
  p.k = a->k;
  p.sf_linear = a->sf_layout == NVFP4MOE_SF_LAYOUT_LINEAR;
  p.per_token = per_token;
  p.fo6 = nvfp4moe__fo6(a->flags);
  p.fp16 = a->dtype == NVFP4MOE_DTYPE_FP16;
  p.pad_rows = !a->masked_m && !p.sf_linear;
  return p;
}

/* img, img_tok: the expert layer's widened tokens (the _img kernels' two more arguments), or 0;
   img_layout: the weight layout of the GEMM that reads them (TILED: widened to F16); pdl: -1 no
   programmatic dependent launch unless every kernel takes one, 0 as the context says
   (nvfp4moe__pdl_on) */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__launch_quantize(nvfp4moe_context* ctx, const char* fn,
                                                            const nvfp4moe__quant_params* p, int silu,
                                                            nvfp4moe_devptr img, int img_tok,
                                                            nvfp4moe_weight_layout img_layout, nvfp4moe_stream stream,
                                                            int pdl) {
  /* A team of threads per row (a power of two, at least 4: the kernels step a thread's
     128x4 SF bytes by team / 4 column groups), each keeping nb blocks of 16 in registers
     (NVF_QNB of quantize.cu: 4, SiLU 1; other values in the tuning variants there),
     so a row is read once for K <= 256 * 16 * nb; a persistent grid of resident
     256-thread CTAs. */
  int tune1 = strcmp(ctx->tune_define, "-DNVF_QTUNE=1") == 0;
  int nb = silu ? (tune1 ? 4 : strcmp(ctx->tune_define, "-DNVF_QSILU2=1") == 0 ? 2 : 1) : tune1 ? 2 : 4;
  long long rows_pad = p->pad_rows ? (p->rows + 127) / 128 * 128 : p->rows, items = p->groups * rows_pad;
  int need, team = 4, spec = silu ? NVFP4MOE__SPEC_SILU_QUANTIZE : NVFP4MOE__SPEC_QUANTIZE;
  long long ctas, cap, rowbytes = 2LL * p->k, budget;
  unsigned smem = 0;
  nvfp4moe__quant_params q = *p;
  void* args[3];
  int kern = !p->fp16 ? (int)NVFP4MOE__K_QUANTIZE
             : silu ? (int)NVFP4MOE__K_SILU_QUANTIZE_F16 : (int)NVFP4MOE__K_QUANTIZE_F16;
  nvfp4moe_result r;
  /* SiLU rows past one register block per 256-thread team (K > 4096): the wide
     specialisation, 2 blocks per thread (the setting measured before the sixth session), so
     fewer blocks compute their SiLU twice; the default 1 block was measured at K = 2048 only */
  if (silu && nb == 1 && p->k / 16 > 256 && !img) {
    nb = 2;
    spec = NVFP4MOE__SPEC_SILU_QUANTIZE_WIDE;
  }
  /* the expert layer's kernels that also write its GEMM's widened tokens (bf16 input, masked,
     unstaged; the SiLU one keeps 1 block per thread at any K: rows past it are read again) */
  if (img) {
    spec = silu ? NVFP4MOE__SPEC_SILU_QUANTIZE_IMG : NVFP4MOE__SPEC_QUANTIZE_IMG;
    if (img_layout == NVFP4MOE_WEIGHTS_TILED)
      spec += NVFP4MOE__SPEC_QUANTIZE_IMG_F16 - NVFP4MOE__SPEC_QUANTIZE_IMG;
    kern = 0;
  }
  need = (p->k / 16 + nb - 1) / nb;
  while (team < need && team < 256) team *= 2;
  q.team = team;
  /* The staged kernels (sm_90+: each team's next rows bulk-copied into 2 shared-memory
     slots, 3 CTAs per SM; kernels_src/quantize.cu) for plain, unmasked input whose rows fit
     the registers' blocks, teams of at least a warp, and at least 4 rows per resident team:
     18 % faster on [16384, 7168], slower where a team has 1-2 rows (the decode shapes: the
     bulk copies of all rows queue at the start) and for the SiLU kernel (bench/NOTES.md,
     sixth session; for masked decode input 10.2 -> 11.8 us again in the ninth). NVF_QSTAGE=0 / 3
     (tune define) turn it off or use 3 slots. The kernels
     rely on these conditions (no second read of a row, fewer than 2^30 work items). Their
     specialisation is compiled when first picked. */
  if (!silu && !p->masked_m && !img && ctx->cc_major >= 9 && team >= 32 && p->k / 16 <= team * nb &&
      items >= 4LL * 3 * ctx->sm_count * (256 / team) && items < (1LL << 30) &&
      strcmp(ctx->tune_define, "-DNVF_QSTAGE=0") != 0) {
    int occ, slots = strcmp(ctx->tune_define, "-DNVF_QSTAGE=3") == 0 ? 3 : 2;
    r = nvfp4moe__prepare(ctx, NVFP4MOE__SPEC_QUANTIZE_STAGED);
    if (r != NVFP4MOE_SUCCESS) return r;
    occ = nvfp4moe__occupancy(ctx, NVFP4MOE__SPEC_QUANTIZE_STAGED, NVFP4MOE__K_QUANTIZE_STAGED, 256, 0);
    /* the shared memory of an SM (opt-in limit + 1 KB) over the CTAs the registers allow,
       less the static shared memory and the 1 KB the driver keeps per CTA */
    budget = (ctx->smem_optin + 1024) / occ - 6 * 1024;
    while (slots > 0 && (256 / team) * slots * rowbytes > budget) --slots;
    /* 32-bit work-item numbers there: items < 2^30 and the refill's look-ahead, step * slots
       (step = CTAs * teams per CTA <= occ * SMs * 8), far below 2^30, keep item + step * slots
       below 2^31. One slot (GPUs with ~100 KB of shared memory per SM) was never measured:
       at least two. */
    if (slots >= 2 && items >= 4LL * occ * ctx->sm_count * (256 / team) &&
        3LL * occ * ctx->sm_count * (256 / team) < (1LL << 30)) {
      spec = NVFP4MOE__SPEC_QUANTIZE_STAGED;
      kern = p->fp16 ? (int)NVFP4MOE__K_QUANTIZE_STAGED_F16 : (int)NVFP4MOE__K_QUANTIZE_STAGED;
      q.stage = slots;
      smem = (unsigned)((256 / team) * slots * rowbytes);
    }
  }
  r = nvfp4moe__prepare(ctx, spec);
  if (r != NVFP4MOE_SUCCESS) return r;
  cap = (long long)nvfp4moe__occupancy(ctx, spec, kern, 256, 0) * ctx->sm_count;
  ctas = (items + 256 / team - 1) / (256 / team);
  args[0] = (void*)&q;
  args[1] = &img;
  args[2] = &img_tok;
  return nvfp4moe__launch_as(ctx, fn, spec, kern, (unsigned)(ctas < cap ? ctas : cap), 256, smem, stream, args, pdl);
}

/* img (img_tok): the expert layer's widened tokens for its GEMM tile of img_tok tokens, or 0; img_layout:
   that GEMM's weight layout; pdl: as nvfp4moe__launch_quantize's */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__quantize_op(nvfp4moe_context* ctx, const nvfp4moe_quantize_args* a,
                                                        nvfp4moe_stream stream, const char* fn, int per_token, int silu,
                                                        nvfp4moe_devptr img, int img_tok, nvfp4moe_weight_layout img_layout,
                                                        int pdl) {
  long long stride = 0;
  nvfp4moe__quant_params p;
  nvfp4moe__scope sc;
  nvfp4moe_result r;
  if (!ctx) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, "%s: ctx is null", fn);
  r = nvfp4moe__check_quantize(&ctx->desc.logger, fn, a, per_token, silu, 1, &stride);
  if (r != NVFP4MOE_SUCCESS) return r;
  r = nvfp4moe__enter(ctx, fn, &sc);
  if (r != NVFP4MOE_SUCCESS) return r;
  p = nvfp4moe__quant_params_of(a, stride, per_token);
  return nvfp4moe__leave(&sc, nvfp4moe__launch_quantize(ctx, fn, &p, silu, img, img_tok, img_layout, stream, pdl));
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_quantize_per_token(nvfp4moe_context* ctx, const nvfp4moe_quantize_args* args,
                                                           nvfp4moe_stream stream) {
  return nvfp4moe__quantize_op(ctx, args, stream, "nvfp4moe_quantize_per_token", 1, 0, 0, 0, NVFP4MOE_WEIGHTS_ROW_MAJOR, 0);
}
NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_quantize_per_tensor(nvfp4moe_context* ctx, const nvfp4moe_quantize_args* args,
                                                            nvfp4moe_stream stream) {
  return nvfp4moe__quantize_op(ctx, args, stream, "nvfp4moe_quantize_per_tensor", 0, 0, 0, 0, NVFP4MOE_WEIGHTS_ROW_MAJOR, 0);
}
NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_silu_mul_quantize_per_token(nvfp4moe_context* ctx,
                                                                    const nvfp4moe_quantize_args* args,
                                                                    nvfp4moe_stream stream) {
  return nvfp4moe__quantize_op(ctx, args, stream, "nvfp4moe_silu_mul_quantize_per_token", 1, 1, 0, 0, NVFP4MOE_WEIGHTS_ROW_MAJOR, 0);
}
NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_silu_mul_quantize_per_tensor(nvfp4moe_context* ctx,
                                                                     const nvfp4moe_quantize_args* args,
                                                                     nvfp4moe_stream stream) {
  return nvfp4moe__quantize_op(ctx, args, stream, "nvfp4moe_silu_mul_quantize_per_tensor", 0, 1, 0, 0, NVFP4MOE_WEIGHTS_ROW_MAJOR, 0);
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_quantize_weights(nvfp4moe_context* ctx, const nvfp4moe_weight_quantize_args* a,
                                                         nvfp4moe_stream stream) {
  const char* fn = "nvfp4moe_quantize_weights";
  nvfp4moe__scope sc;
  nvfp4moe_result r;
  nvfp4moe__CUresult cr;
  nvfp4moe__quant_params p;
  long long elems;
  int fp16, bpe, e;
  unsigned grid;
  void* args[5];
  if (!ctx) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, "%s: ctx is null", fn);
  r = nvfp4moe__check_weights(&ctx->desc.logger, fn, a, 1);
  if (r != NVFP4MOE_SUCCESS) return r;
  r = nvfp4moe__enter(ctx, fn, &sc);
  if (r != NVFP4MOE_SUCCESS) return r;
  /* 1. amax per expert (bits of a non-negative f32 compare as integers) */
  cr = nvfp4moe__cu.cuMemsetD32Async(a->out_scale, 0, (size_t)a->experts, stream);
  if (cr != 0) return nvfp4moe__leave(&sc, nvfp4moe__cuda_fail(&ctx->desc.logger, cr, "nvfp4moe_quantize_weights: cuMemsetD32Async"));
  elems = (long long)a->n * a->k;
  bpe = (int)((elems / 8 + 255) / 256);
  if (bpe > 4 * ctx->sm_count) bpe = 4 * ctx->sm_count;
  if (bpe < 1) bpe = 1;
  fp16 = a->dtype == NVFP4MOE_DTYPE_FP16;
  args[0] = (void*)&a->w; args[1] = &fp16; args[2] = &elems; args[3] = &bpe; args[4] = (void*)&a->out_scale;
  r = nvfp4moe__launch(ctx, fn, NVFP4MOE__SPEC_QUANTIZE, NVFP4MOE__K_WEIGHT_AMAX, (unsigned)bpe * (unsigned)a->experts, 256, 0,
                       stream, args);
  /* 2. amax -> decode scale, in place */
  if (r == NVFP4MOE_SUCCESS) {
    e = a->experts;
    args[0] = (void*)&a->out_scale; args[1] = &e;
    grid = (unsigned)((e + 255) / 256);
    r = nvfp4moe__launch(ctx, fn, NVFP4MOE__SPEC_QUANTIZE, NVFP4MOE__K_AMAX_TO_SCALE, grid, 256, 0, stream, args);
  }
  /* 3. quantize with the per-expert scales (rows of an expert = N, padding rows zeroed) */
  if (r == NVFP4MOE_SUCCESS) {
    memset(&p, 0, sizeof p);
    p.x = a->w; p.x_row_stride = a->k; p.x_group_stride = elems;
    p.q = a->out_e2m1; p.sf = a->out_sf; p.scale_in = a->out_scale;
    p.groups = a->experts; p.rows = a->n; p.k = a->k;
    p.fo6 = nvfp4moe__fo6(a->flags); p.fp16 = fp16; p.pad_rows = 1;
    r = nvfp4moe__launch_quantize(ctx, fn, &p, 0, 0, 0, NVFP4MOE_WEIGHTS_ROW_MAJOR, stream, 0);
  }
  return nvfp4moe__leave(&sc, r);
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_sf_convert(nvfp4moe_context* ctx, const nvfp4moe_sf_convert_args* a,
                                                   nvfp4moe_stream stream) {
  const char* fn = "nvfp4moe_sf_convert";
  nvfp4moe__scope sc;
  nvfp4moe_result r;
  int to128;
  long long total, cap;
  void* args[6];
  if (!ctx) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, "%s: ctx is null", fn);
  r = nvfp4moe__check_sf_convert(&ctx->desc.logger, fn, a);
  if (r != NVFP4MOE_SUCCESS) return r;
  r = nvfp4moe__enter(ctx, fn, &sc);
  if (r != NVFP4MOE_SUCCESS) return r;
  to128 = a->dst_layout == NVFP4MOE_SF_LAYOUT_128X4;
  total = (long long)nvfp4moe_sf_bytes(a->rows, a->k, a->dst_layout) * a->groups;
  cap = (long long)ctx->sm_count * 16;
  args[0] = (void*)&a->src; args[1] = (void*)&a->dst; args[2] = (void*)&a->groups;
  args[3] = (void*)&a->rows; args[4] = (void*)&a->k; args[5] = &to128;
  total = (total + 255) / 256;
  r = nvfp4moe__launch(ctx, fn, NVFP4MOE__SPEC_QUANTIZE, NVFP4MOE__K_SF_CONVERT, (unsigned)(total < cap ? total : cap), 256, 0,
                       stream, args);
  return nvfp4moe__leave(&sc, r);
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_weights_relayout(nvfp4moe_context* ctx, const nvfp4moe_weights_relayout_args* a,
                                                         nvfp4moe_stream stream) {
  const char* fn = "nvfp4moe_weights_relayout";
  nvfp4moe__scope sc;
  nvfp4moe_result r;
  int to_tiled;
  long long rows, total, cap;
  void* args[5];
  if (!ctx) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, "%s: ctx is null", fn);
  r = nvfp4moe__check_relayout(&ctx->desc.logger, fn, a, 1);
  if (r != NVFP4MOE_SUCCESS) return r;
  r = nvfp4moe__enter(ctx, fn, &sc);
  if (r != NVFP4MOE_SUCCESS) return r;
  to_tiled = a->dst_layout == NVFP4MOE_WEIGHTS_TILED;
  rows = (long long)a->groups * a->n; /* groups end on tile boundaries (N % 16 == 0) */
  total = (rows * (((long long)a->k + 127) / 128 * 4) + 255) / 256; /* 16 bytes a thread, the TILED padding included */
  cap = (long long)ctx->sm_count * 16;
  args[0] = (void*)&a->src; args[1] = (void*)&a->dst; args[2] = &rows; args[3] = (void*)&a->k; args[4] = &to_tiled;
  r = nvfp4moe__launch(ctx, fn, NVFP4MOE__SPEC_QUANTIZE, NVFP4MOE__K_WEIGHTS_RELAYOUT, (unsigned)(total < cap ? total : cap),
                       256, 0, stream, args);
  return nvfp4moe__leave(&sc, r);
}

NVFP4MOE__IMPL nvfp4moe_weight_layout nvfp4moe_preferred_weight_layout(const nvfp4moe_context* ctx, int n, int k) {
  if (ctx && ctx->backend == NVFP4MOE_BACKEND_SM90 && n > 0 && n % 16 == 0 && k > 0 && k % 32 == 0)
    return NVFP4MOE_WEIGHTS_TILED;
  return NVFP4MOE_WEIGHTS_ROW_MAJOR;
}

/* Mirror of NvfDequantParams. */
typedef struct nvfp4moe__dequant_params {
  nvfp4moe_devptr q, sf, scale, masked_m, out;
  int groups, rows, k, sf_linear, scale_per_row, out_bf16;
} nvfp4moe__dequant_params;

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_dequantize(nvfp4moe_context* ctx, const nvfp4moe_dequantize_args* a,
                                                   nvfp4moe_stream stream) {
  const char* fn = "nvfp4moe_dequantize";
  nvfp4moe__scope sc;
  nvfp4moe_result r;
  nvfp4moe__dequant_params p;
  long long total, cap;
  void* args[1];
  if (!ctx) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, "%s: ctx is null", fn);
  r = nvfp4moe__check_dequantize(&ctx->desc.logger, fn, a, 1);
  if (r != NVFP4MOE_SUCCESS) return r;
  r = nvfp4moe__enter(ctx, fn, &sc);
  if (r != NVFP4MOE_SUCCESS) return r;
  p.q = a->e2m1; p.sf = a->sf; p.scale = a->scale; p.masked_m = a->masked_m; p.out = a->out;
  p.groups = a->groups; p.rows = a->rows; p.k = a->k;
  p.sf_linear = a->sf_layout == NVFP4MOE_SF_LAYOUT_LINEAR;
  p.scale_per_row = a->scale_per_row;
  p.out_bf16 = a->out_dtype == NVFP4MOE_DTYPE_BF16;
  total = ((long long)a->groups * a->rows * (a->k / 16) + 255) / 256;
  cap = (long long)ctx->sm_count * 16;
  args[0] = &p;
  r = nvfp4moe__launch(ctx, fn, NVFP4MOE__SPEC_QUANTIZE, NVFP4MOE__K_DEQUANTIZE, (unsigned)(total < cap ? total : cap), 256, 0,
                       stream, args);
  return nvfp4moe__leave(&sc, r);
}

/* --------------------------------------------------------------------------------------
   Operations: GEMM and expert layer
   -------------------------------------------------------------------------------------- */

/* Mirror of NvfGemmParams (kernels_src/gemm_common.cuh). */
typedef struct nvfp4moe__gemm_params {
  nvfp4moe_devptr a, a_sf, b, b_sf, masked_m, alpha, row_scale, d;
  long long ldd;
  int groups, m_max, n, k;
  nvfp4moe_devptr tok_ws; /* the token-producer and 8-token swap-AB tiles' widened tokens (nvfp4moe__tok_ws_bytes), or 0 */
  int tiles_m;            /* token tiles per (group, row block) of a persistent token-producer grid, else 0 */
  int ptab;               /* 1: that grid numbers its units without gaps (gemm_wgmma_ws.cu, nvf_ws_build_tab) */
} nvfp4moe__gemm_params;

static const int nvfp4moe__portable_bm[4] = {16, 32, 64, 128};
static const int nvfp4moe__swapab_tok[4] = {8, 16, 32, 48};
static const int nvfp4moe__wgmma_tok[10] = {32, 64, 128, 64, 128, 16, 32, 48, 48, 64}; /* NVF_TOK, NVF_WG of the W specs */
static const int nvfp4moe__wgmma_wg[10] = {2, 2, 2, 3, 3, 4, 4, 3, 4, 4};
static const int nvfp4moe__ws_tok[8] = {128, 48, 64, 32, 128, 48, 64, 32}; /* NVF_TOK, NVF_CWG of the WS */
static const int nvfp4moe__ws_cwg[8] = {3, 4, 4, 4, 3, 4, 4, 4};                /* specs, then their _VARN twins */

/* Tile choice of the portable and sm90 backends. sm90: expected_m is a mean, so the tile
   should also hold the experts that get more (one past its tile costs a second pass over
   its weights): the token count to cover is expected_m + 2 sqrt(expected_m) (two standard
   deviations of a Poisson count), at most m_max; then, from forced-configuration sweeps on
   an H200 (bench/NOTES.md, fourth and fifth sessions), swap-AB mma.sync up to 16 covered
   tokens (expected_m <= 9), the wgmma kernel with four warpgroups and 32 tokens up to 32
   (5-10 % faster than the 48-token tile at 16 and 32 tokens with the token producer,
   seventeenth session; without it the 48-token tile had won), 48 tokens up to 48, 64 up to
   64, and beyond that 128 tokens with three; each of these tiles with a token producer
   warpgroup (gemm_wgmma_ws.cu: 2-17 % faster than the same tile without it at 32-512 tokens
   on the five shapes, fifteenth session). Where expected_m < m_max (masked_m varies, as in a
   layer), each tile's _VARN twin, which issues its MMAs with an N fitted to the tile's tokens
   (twenty-fourth session: -2 / -4 % on the Qwen3 / DeepSeek-V3 layers, -1 to -16 % on GEMMs with
   Poisson masked_m; up to 5-9 % slower where every tile is full, hence not there). sm80 (not re-measured with the margin): swap-AB for
   expected_m up to 48, then the tiled mma.sync kernel with the smallest M tile. */
NVFP4MOE__PRIVATE int nvfp4moe__cover_m(const nvfp4moe_gemm_args* a) {
  long long e = a->expected_m, x, y;
  if (e <= 0 || e >= a->m_max) return a->m_max;
  x = e; /* integer Newton iteration: x = floor(sqrt(e)), then round up */
  y = (x + 1) / 2;
  while (y < x) { x = y; y = (x + e / x) / 2; }
  if (x * x < e) ++x;
  return e + 2 * x < a->m_max ? (int)(e + 2 * x) : a->m_max;
}

NVFP4MOE__PRIVATE int nvfp4moe__portable_spec(const nvfp4moe_context* ctx, const nvfp4moe_gemm_args* a) {
  int em = a->expected_m > 0 && a->expected_m < a->m_max ? a->expected_m : a->m_max, i;
  if (ctx->forced_gemm_spec >= NVFP4MOE__SPEC_GEMM_P16 && ctx->forced_gemm_spec <= NVFP4MOE__SPEC_GEMM_LAST)
    return ctx->forced_gemm_spec;
  if (ctx->backend == NVFP4MOE_BACKEND_SM90) {
    em = nvfp4moe__cover_m(a);
    if (em > 16) {
      /* expected_m below m_max: masked_m varies, so many tiles are part full: the _VARN twin */
      const int varn = ctx->varn && a->expected_m > 0 && a->expected_m < a->m_max
                           ? NVFP4MOE__SPEC_GEMM_WS128_VARN - NVFP4MOE__SPEC_GEMM_WS128
                           : 0;
      return varn + (em <= 32   ? NVFP4MOE__SPEC_GEMM_WS32
                     : em <= 48 ? NVFP4MOE__SPEC_GEMM_WS48
                     : em <= 64 ? NVFP4MOE__SPEC_GEMM_WS64
                                : NVFP4MOE__SPEC_GEMM_WS128);
    }
  }
  for (i = 0; i < 4; ++i)
    if (em <= nvfp4moe__swapab_tok[i]) return NVFP4MOE__SPEC_GEMM_T8 + i;
  return em <= 64 ? NVFP4MOE__SPEC_GEMM_P64 : NVFP4MOE__SPEC_GEMM_P128;
}

/* Whether a tile configuration takes a workspace of widened tokens on sm90 for weights in this
   layout with this K: the token-producer tiles (GEMM_WS128 .. GEMM_WS32_VARN) always; the 8-token
   swap-AB tile (the heuristic's up to 8 covered tokens) on TILED weights with K >= 4096, the one
   case where every A/B on an H200 agreed on a gain (bench/NOTES.md, twenty-second session:
   DeepSeek-V3 GEMM1, K 7168, -4.5 to -5.7 % at one token). At K 2048 and below the swap-AB
   tiles went both ways, on ROW_MAJOR weights they lost up to 20 % (a row is read 64 bytes a
   step, each 128-byte line twice through L1, which the second chunk buffer's shared memory
   shrinks), and the 16-token tile's two buffers (67 KB a CTA) were followed by a slower next
   GEMM. (The forced T16, T32 and T48 keep widening in every CTA.) */
NVFP4MOE__PRIVATE int nvfp4moe__spec_takes_ws(int spec, nvfp4moe_weight_layout layout, int k) {
  if (spec >= NVFP4MOE__SPEC_GEMM_WS128 && spec <= NVFP4MOE__SPEC_GEMM_WS32_VARN) return 1;
  return layout == NVFP4MOE_WEIGHTS_TILED && k >= 4096 && spec == NVFP4MOE__SPEC_GEMM_T8;
}

/* Bytes of the widened tokens of a tile that takes them (nvfp4moe__spec_takes_ws), 256 bytes a
   (token, 128-K step), about 2 m_max K bytes a group (4x the NVFP4 tokens). A token-producer
   tile's, as nvf_ws_widen_tokens writes them: per group, ceil(m_max / NVF_TOK) token tiles of
   ceil(steps / NVF_SPS) slot images of NVF_SPS steps x NVF_TOK tokens. A swap-AB tile's, as
   nvf_sw_widen_tokens writes them (the 8-token tile's): per group, m_max token rows of every step. */
NVFP4MOE__PRIVATE size_t nvfp4moe__tok_ws_bytes(int spec, int groups, int m_max, int k) {
  size_t tok, sps, steps = ((size_t)k + 127) / 128, nslots;
  if (spec == NVFP4MOE__SPEC_GEMM_T8) return (size_t)groups * (size_t)m_max * steps * 256;
  tok = (size_t)nvfp4moe__ws_tok[spec - NVFP4MOE__SPEC_GEMM_WS128];
  sps = tok >= 128 ? 1 : 2;
  nslots = (steps + sps - 1) / sps;
  return (size_t)groups * (((size_t)m_max + tok - 1) / tok) * nslots * sps * tok * 256;
}

/* The tile configuration nvfp4moe_grouped_gemm_nt_masked runs, and the widened-token bytes it
   can use (0 where none). */
/* Whether this context gives a GEMM of these groups and K a token workspace at all. */
NVFP4MOE__PRIVATE int nvfp4moe__ws_possible(const nvfp4moe_context* ctx, const nvfp4moe_gemm_args* a) {
  return ctx->token_prepass && !ctx->offline && ctx->backend == NVFP4MOE_BACKEND_SM90 &&
         (long long)a->groups * ((a->k + 127) / 128) <= 0x7FFFFFFFLL; /* the pre-pass grid */
}

NVFP4MOE__PRIVATE size_t nvfp4moe__gemm_ws_need(const nvfp4moe_context* ctx, const nvfp4moe_gemm_args* a, int* spec) {
  *spec = nvfp4moe__portable_spec(ctx, a);
  if (!nvfp4moe__ws_possible(ctx, a) || !nvfp4moe__spec_takes_ws(*spec, a->b_layout, a->k)) return 0;
  /* (tuning runs with larger swap-AB chunks: two buffers of them may not fit in shared memory) */
  if (*spec == NVFP4MOE__SPEC_GEMM_T8 && strncmp(ctx->tune_define, "-DNVF_SKC=", 10) == 0) return 0;
  return nvfp4moe__tok_ws_bytes(*spec, a->groups, a->m_max, a->k);
}

/* The most nvfp4moe__gemm_ws_need gives these shapes for any expected_m (every tile that takes
   a workspace and the heuristic or a forced configuration can pick). */
NVFP4MOE__PRIVATE size_t nvfp4moe__gemm_ws_need_any(const nvfp4moe_context* ctx, const nvfp4moe_gemm_args* a) {
  size_t most = 0, b;
  int s;
  if (!nvfp4moe__ws_possible(ctx, a)) return 0;
  if (ctx->forced_gemm_spec >= NVFP4MOE__SPEC_GEMM_P16 && ctx->forced_gemm_spec <= NVFP4MOE__SPEC_GEMM_LAST)
    return nvfp4moe__gemm_ws_need(ctx, a, &s); /* a forced tile, whatever expected_m */
  for (s = NVFP4MOE__SPEC_GEMM_P16; s <= NVFP4MOE__SPEC_GEMM_LAST; ++s) {
    b = nvfp4moe__spec_takes_ws(s, a->b_layout, a->k) ? nvfp4moe__tok_ws_bytes(s, a->groups, a->m_max, a->k) : 0;
    if (b > most) most = b;
  }
  return most;
}

NVFP4MOE__IMPL size_t nvfp4moe_gemm_workspace_size(const nvfp4moe_context* ctx, const nvfp4moe_gemm_args* args) {
  int spec;
  if (!ctx || !args || args->groups < 1 || args->m_max < 1 || args->k < 32 || args->groups > NVFP4MOE_DIM_MAX ||
      args->m_max > NVFP4MOE_DIM_MAX || args->k > NVFP4MOE_DIM_MAX || args->n > NVFP4MOE_DIM_MAX)
    return 0;
  return nvfp4moe__gemm_ws_need(ctx, args, &spec);
}

/* Kernel 1 of a swap-AB or wgmma module (nvf_gemm_*_l2) has each weight load fetch the whole
   256-byte block into L2: on an H200 faster where rows are long (DeepSeek-V3 GEMM1, K 7168:
   -15 % at m <= 8), slower where they are short (K <= 2048: +1-5 %); bench/NOTES.md, seventh
   session. Only where it was measured: sm_90 (sm_80 builds it as a 128-byte fetch). */
NVFP4MOE__PRIVATE int nvfp4moe__gemm_kernel(const nvfp4moe_context* ctx, const nvfp4moe__gemm_params* p) {
  return ctx->target_sm == 90 && p->k >= 2560;
}

/* A tuning run's -DNVF_PCOMPACT[=v] (gemm_wgmma_ws.cu; as the preprocessor reads it: bare is 1), else -1 (the
   default: the unit table on the 48-token tile only) */
NVFP4MOE__PRIVATE int nvfp4moe__ws_pcompact(const nvfp4moe_context* ctx) {
  const char* d = strstr(ctx->tune_define, "NVF_PCOMPACT");
  return !d ? -1 : d[12] != '=' ? 1 : atoi(d + 13);
}

/* Whether the token-producer tile of `tok` tokens runs on a resident grid: the kernel's NVF_PERSIST
   default (the 32-token tiles, and on TILED weights the 48- and 64-token ones: gemm_wgmma_ws.cu; the 48-token
   one since 0.5.5, with the unit table), or a tuning run's -DNVF_PERSIST=0/1 (every tile), -DNVF_PERSIST_T32
   (only the 32-token tiles, 0.5.2's rule) or -DNVF_PCOMPACT=0/1 (0.5.4's rule: not the 48-token tile) from
   $NVFP4MOE_TUNE_DEFINE */
NVFP4MOE__PRIVATE int nvfp4moe__ws_persist(const nvfp4moe_context* ctx, unsigned tok, int tiled) {
  const char* d = strstr(ctx->tune_define, "NVF_PERSIST");
  const int pc = nvfp4moe__ws_pcompact(ctx);
  if (d && strncmp(d + 11, "_T32", 4) == 0) return tok == 32u;
  if (d) return d[11] != '=' || atoi(d + 12) != 0; /* as the preprocessor reads -DNVF_PERSIST[=v] */
  if ((pc < 0 || pc >= 2) && tiled && tok == 48u) return 1;
  return tok == 32u || (tiled && tok == 64u);
}

/* Whether the TILED 128-token tile with K % 256 == 0 runs its resident twin (GEMM_K256_T128R, built with
   -DNVF_PERSIST=1): where K <= 1024. There a unit is a few 128-K steps (six at K 768), so each unit's start
   and end, which the resident grid overlaps with the next unit's first loads, are a large part of it: on an
   H100 every tile resident measured Qwen3 GEMM2 (K 768) 10.5 % faster at 128 tokens and 4.8 % at 512
   (bench/NOTES.md, thirty-third session, X62), the twin -8.0 to -8.4 % at 128, 512 and Poisson(100) tokens,
   others unchanged (thirty-sixth session, X72). At K 1536 and 2048 the twin measured mixed, -3.6 to +2.6 %
   against a control band of about +-1 % (X73), so the bound stays where the gain was measured. Not under a
   tuning run's -DNVF_PERSIST (whose rules then hold for every tile) or -DNVF_RES128=0 (A/B runs: the kernel
   ignores it); under -DNVF_PCOMPACT=0 too. A tuning run's -DNVF_RES128K=<K> moves the bound. */
NVFP4MOE__PRIVATE int nvfp4moe__ws_res128(const nvfp4moe_context* ctx, int k) {
  const char* d = strstr(ctx->tune_define, "NVF_RES128K=");
  const char* off = strstr(ctx->tune_define, "NVF_RES128=");
  return k <= (d ? atoi(d + 12) : 1024) && !strstr(ctx->tune_define, "NVF_PERSIST") && !(off && atoi(off + 11) == 0);
}

/* Whether a resident grid of the `tok`-token tile numbers its units without gaps from a table of groups + 1
   ints in shared memory (gemm_wgmma_ws.cu, nvf_ws_build_tab; p.ptab): by default the 48-token tile's (on the
   32- and 64-token tiles it bought nothing and cost up to 3.5 % at Poisson(16) tokens: bench/NOTES.md,
   thirty-fifth session), every tile's but the 128-token one's under a tuning run's -DNVF_PCOMPACT[=1 or 2], none
   under =0; and only where the table fits beside the kernel's `smem` bytes */
NVFP4MOE__PRIVATE int nvfp4moe__ws_ptab(const nvfp4moe_context* ctx, int groups, unsigned smem, unsigned tok) {
  const int pc = nvfp4moe__ws_pcompact(ctx);
  if (pc == 0 || (pc < 0 && tok != 48u) || tok >= 128u) return 0; /* (never measured on the 128-token tile) */
  /* 1 KB kept for the kernel's static shared memory (the ring's barriers) */
  return (long long)smem + 4LL * (groups + 1) + 1024 <= (long long)ctx->smem_optin;
}

/* The module that runs tile configuration `spec` (GEMM_P16 .. GEMM_LAST) for weights in this layout and K: spec
   itself on ROW_MAJOR weights; on TILED ones its _tiled twin, or for K % 256 == 0 a token-producer tile's (and on
   sm_90a targets the 8-token swap-AB tile's) _k256 twin (every step's pieces inside K, whole rounds of two steps:
   loads without predicates; the rows past N it reads are rows of N), or the 128-token tile's resident one
   where K <= 1024 (nvfp4moe__ws_res128) */
NVFP4MOE__PRIVATE int nvfp4moe__gemm_module(const nvfp4moe_context* ctx, int spec, int tiled, int k) {
  const int ws = spec >= NVFP4MOE__SPEC_GEMM_WS128 && spec <= NVFP4MOE__SPEC_GEMM_WS32_VARN;
  const int k256 = tiled && ctx->k256 && k % 256 == 0;
  if (!tiled) return spec;
  if (k256 && (spec == NVFP4MOE__SPEC_GEMM_WS128 || spec == NVFP4MOE__SPEC_GEMM_WS128_VARN) && nvfp4moe__ws_res128(ctx, k))
    return spec == NVFP4MOE__SPEC_GEMM_WS128 ? NVFP4MOE__SPEC_GEMM_K256_T128R : NVFP4MOE__SPEC_GEMM_K256_T128R_VARN;
  if (k256 && ws) return spec - NVFP4MOE__SPEC_GEMM_WS128 + NVFP4MOE__SPEC_GEMM_K256_FIRST;
  if (k256 && spec == NVFP4MOE__SPEC_GEMM_T8 && nvfp4moe__spec_applies(ctx, NVFP4MOE__SPEC_GEMM_K256_T8))
    return NVFP4MOE__SPEC_GEMM_K256_T8;
  return spec - NVFP4MOE__SPEC_GEMM_P16 + NVFP4MOE__SPEC_GEMM_TILED_FIRST;
}

/* Grid of the wgmma kernels: one CTA per (group, `rows` weight rows, token tile of `tok`), the
   tiles covering em tokens; past 2^31 - 1 CTAs fewer tiles (each kernel loops over its tiles). */
NVFP4MOE__PRIVATE unsigned nvfp4moe__wgmma_grid(const nvfp4moe__gemm_params* p, int rows, unsigned tok, int em) {
  long long blocks = (long long)p->groups * ((p->n + rows - 1) / rows);
  long long tiles = ((long long)em + tok - 1) / tok;
  if (tiles > 0x7FFFFFFFLL / blocks) tiles = 0x7FFFFFFFLL / blocks > 0 ? 0x7FFFFFFFLL / blocks : 1;
  return (unsigned)(blocks * tiles);
}

/* em: rows per expert the token tiles cover (nvfp4moe__cover_m), 1..m_max; spec: the tile
   configuration (GEMM_P16 .. GEMM_LAST); tiled: the weights are TILED (the module: nvfp4moe__gemm_module) */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__gemm_portable(nvfp4moe_context* ctx, const char* fn,
                                                          const nvfp4moe__gemm_params* p, int spec, int em, int tiled,
                                                          int widened, nvfp4moe_stream stream) {
  const int ws = spec >= NVFP4MOE__SPEC_GEMM_WS128 && spec <= NVFP4MOE__SPEC_GEMM_WS32_VARN;
  const int mod = nvfp4moe__gemm_module(ctx, spec, tiled, p->k);
  const int res128 = mod == NVFP4MOE__SPEC_GEMM_K256_T128R || mod == NVFP4MOE__SPEC_GEMM_K256_T128R_VARN;
  const int kern = tiled ? 0 : nvfp4moe__gemm_kernel(ctx, p);
  int bm;
  if (ws) {
    /* one CTA per (group, 64 NVF_CWG weight rows, token tile), or a resident grid taking those units
       in turn (below; nvfp4moe__ws_persist and nvfp4moe__ws_res128 say where): NVF_CWG consumer warpgroups and a
       token producer;
       shared memory as NVF_WS_SMEM: 6 ring slots of NVF_SPS steps (1 for 128 tokens, else 2), 3 raw
       token stages of NVF_UNITS = NVF_TOK NVF_SPS units of 72 bytes (none with a workspace), and for
       32 and 48 tokens each consumer warp's staged results (NVF_EPI_SMEM) */
    unsigned tok = (unsigned)nvfp4moe__ws_tok[spec - NVFP4MOE__SPEC_GEMM_WS128];
    int cwg = nvfp4moe__ws_cwg[spec - NVFP4MOE__SPEC_GEMM_WS128];
    unsigned sps = tok >= 128 ? 1u : 2u;
    unsigned smem = 6u * sps * tok * 256u + (p->tok_ws ? 0u : 3u * tok * sps * 72u) /* no raw stages with a workspace */
                    + (tok <= 48u ? 4u * (unsigned)cwg * tok * 32u : 0u); /* NVF_EPI_SMEM: a warp's staged results */
    unsigned threads = 128u * (unsigned)(cwg + 1);
    int regs, want = (int)(65536u / threads / 8u * 8u);
    void* args[1];
    nvfp4moe_result r = nvfp4moe__prepare(ctx, mod);
    if (r != NVFP4MOE_SUCCESS) return r;
    /* setmaxnreg moves registers within the pool the launch allocates, so the kernel must carry
       the full count its launch bounds allow (NVF_LAUNCH_REGS): with fewer, the consumers'
       increase would never complete and the launch would hang instead of failing */
    regs = nvfp4moe__num_regs(ctx, mod, kern);
    if (regs >= 0 && regs != want)
      return nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_NOT_SUPPORTED,
                                "%s: %s was built with %d registers per thread, not the %d its warp specialisation "
                                "needs; force another tile (NVFP4MOE_GEMM_CONFIG) or report the NVRTC version",
                                fn, nvfp4moe__specs[mod].name, regs, want);
    if (p->tok_ws && !widened) { /* the token pre-pass: 128 threads a (group, slot image, token tile), nvf_ws_widen_tokens */
      void* wargs[2];
      long long nslots = ((p->k + 127) / 128 + (long long)sps - 1) / sps, per = (long long)p->groups * nslots;
      long long ytiles = ((long long)em + tok - 1) / tok;
      int wk = tiled ? 1 : 2, y;
      if (ytiles > 0x7FFFFFFFLL / per) ytiles = 0x7FFFFFFFLL / per; /* >= 1: nvfp4moe__gemm_ws_need bounds per */
      y = (int)ytiles;
      wargs[0] = (void*)p;
      wargs[1] = &y;
      r = nvfp4moe__launch(ctx, fn, mod, wk, (unsigned)(per * ytiles), 128, 0, stream, wargs);
      if (r != NVFP4MOE_SUCCESS) return r;
    }
    {
      /* the resident grid (gemm_wgmma_ws.cu, NVF_PERSIST; nvfp4moe__ws_persist, or the 128-token tile's resident
         twin, nvfp4moe__ws_res128): at most one CTA per
         SM, each taking every grid-th (group, row block, token tile) unit; the kernel reads tiles_m */
      nvfp4moe__gemm_params q = *p;
      unsigned grid = nvfp4moe__wgmma_grid(p, 64 * cwg, tok, em);
      if (res128 || nvfp4moe__ws_persist(ctx, tok, tiled)) {
        const unsigned blocks = (unsigned)p->groups * (unsigned)((p->n + 64 * cwg - 1) / (64 * cwg));
        /* the kernel steps u + gridDim.x in int: keep the units that far below 2^31 (fewer token tiles
           only make each unit loop over more) */
        const long long most = (0x7FFFFFFFLL - ctx->sm_count) / blocks;
        q.ptab = nvfp4moe__ws_ptab(ctx, p->groups, smem, tok);
        /* numbered without gaps, every token tile of m_max is a unit (those without tokens are not
           numbered); else the tiles cover em and an expert past them loops */
        q.tiles_m = q.ptab ? (p->m_max + (int)tok - 1) / (int)tok : (int)(grid / blocks);
        if (q.tiles_m > most) q.tiles_m = most > 0 ? (int)most : 1;
        if (q.ptab) { /* the table; and CTAs for every unit an expert past em adds (those without one return) */
          smem += 4u * (unsigned)(p->groups + 1);
          grid = blocks * (unsigned)q.tiles_m; /* < 2^31: `most` */
        }
        if (grid > (unsigned)ctx->sm_count) grid = (unsigned)ctx->sm_count;
      }
      args[0] = (void*)&q;
      return nvfp4moe__launch(ctx, fn, mod, kern, grid, threads, smem, stream, args);
    }
  }
  if (spec >= NVFP4MOE__SPEC_GEMM_W32 && spec <= NVFP4MOE__SPEC_GEMM_W64_WG4) {
    /* one CTA per (group, 64 * NVF_WG weight rows, token tile); the token tiles cover
       nvfp4moe__cover_m (the kernel loops when an expert has more); shared memory as NVF_SMEM_BYTES */
    unsigned tok = (unsigned)nvfp4moe__wgmma_tok[spec - NVFP4MOE__SPEC_GEMM_W32];
    int wg = nvfp4moe__wgmma_wg[spec - NVFP4MOE__SPEC_GEMM_W32];
    unsigned kc = tok >= 128 ? 256u : tok > 32 ? 512u : 1024u, units;
    if (strncmp(ctx->tune_define, "-DNVF_WTUNE=", 12) == 0) kc = 256u * (unsigned)(atoi(ctx->tune_define + 12) / 100);
    units = tok * (kc / 128u);
    unsigned smem = 3u * units * 256u + units * 72u;
    void* args[1];
    args[0] = (void*)p;
    return nvfp4moe__launch(ctx, fn, mod, kern, nvfp4moe__wgmma_grid(p, 64 * wg, tok, em), 128u * (unsigned)wg, smem,
                            stream, args);
  }
  if (spec >= NVFP4MOE__SPEC_GEMM_T8 && spec <= NVFP4MOE__SPEC_GEMM_T48) {
    /* one CTA per (group, 128 weight rows); tokens of a 1024-K chunk in shared memory, two
       chunk buffers with a workspace */
    unsigned tok = (unsigned)nvfp4moe__swapab_tok[spec - NVFP4MOE__SPEC_GEMM_T8];
    unsigned kc = strncmp(ctx->tune_define, "-DNVF_SKC=", 10) == 0 ? (unsigned)atoi(ctx->tune_define + 10) : 1024u;
    unsigned smem = (p->tok_ws ? 2u : 1u) * tok * (kc / 2u + 8u) * 4u; /* NVF_TOK x NVF_TSTRIDE words (NVF_KC: tuning runs) */
    long long grid = (long long)p->groups * ((p->n + 127) / 128);
    void* args[1];
    if (p->tok_ws && !widened) { /* the token pre-pass: a thread a 32-element piece of the rows em covers, nvf_sw_widen_tokens */
      void* wargs[2];
      long long ytiles = ((long long)em * ((p->k + 127) / 128) * 4 + 255) / 256;
      int y;
      nvfp4moe_result r;
      if (ytiles > 0x7FFFFFFFLL / p->groups) ytiles = 0x7FFFFFFFLL / p->groups; /* >= 1: nvfp4moe__ws_possible */
      y = (int)ytiles;
      wargs[0] = (void*)p;
      wargs[1] = &y;
      r = nvfp4moe__launch(ctx, fn, mod, 1, (unsigned)(p->groups * ytiles), 256, 0, stream, wargs);
      if (r != NVFP4MOE_SUCCESS) return r;
    }
    args[0] = (void*)p;
    /* the kernel reading the workspace (2; only TILED weights get one, nvfp4moe__spec_takes_ws);
       after the pre-pass a programmatic dependent launch, so that its weight loads start under
       it (only the thread that copies the tokens waits for it) */
    return nvfp4moe__launch_as(ctx, fn, mod, p->tok_ws ? 2 : kern, (unsigned)grid, 256, smem, stream, args,
                               p->tok_ws && !widened);
  }
  bm = nvfp4moe__portable_bm[spec - NVFP4MOE__SPEC_GEMM_P16];
  unsigned threads = bm == 128 ? 256 : 128, smem = 2u * (unsigned)(bm + 128) * 128u;
  long long tiles = (long long)p->groups * ((p->m_max + bm - 1) / bm) * ((p->n + 127) / 128), cap;
  nvfp4moe_result r;
  void* args[1];
  r = nvfp4moe__prepare(ctx, mod);
  if (r == NVFP4MOE_SUCCESS) r = nvfp4moe__set_smem(ctx, mod, 0, smem);
  if (r != NVFP4MOE_SUCCESS) return r;
  cap = (long long)nvfp4moe__occupancy(ctx, mod, 0, (int)threads, smem) * ctx->sm_count;
  args[0] = (void*)p;
  return nvfp4moe__launch(ctx, fn, mod, 0, (unsigned)(tiles < cap ? tiles : cap), threads, smem, stream, args);
}

/* Mirror of NvfSm100Params (kernels_src/gemm_sm100.cu): two 128-byte tensor maps, then
   the pointers; padded to the device struct's 64-byte alignment (384 bytes). */
typedef struct nvfp4moe__sm100_params {
  unsigned long long tma_a[16], tma_b[16];
  nvfp4moe_devptr a_sf, b_sf, masked_m, alpha, row_scale, d;
  long long ldd;
  int groups, m_max, n, k;
  unsigned idesc, pad0;
  unsigned long long desc_ab, desc_sf;
  unsigned long long pad1[4];
} nvfp4moe__sm100_params;
typedef char nvfp4moe__sm100_params_size[sizeof(nvfp4moe__sm100_params) == 384 ? 1 : -1];

#define NVFP4MOE__SM100_STAGES 5
#define NVFP4MOE__SM100_SMEM (NVFP4MOE__SM100_STAGES * (128 * 128 * 2 + 2048 * 2) + 1024)

/* A 3-D UINT8 tensor map {K/2, rows, G} with a {128, 128, 1} box and the 128-byte swizzle
   the MMA's K-major descriptors expect (TMA zero-fills rows past `rows` and bytes past K/2). */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__tensor_map(nvfp4moe_context* ctx, unsigned long long* out, nvfp4moe_devptr base,
                                                       int rows, int k, int groups) {
  unsigned long long storage[16 + 8];
  void* aligned = (void*)(((size_t)storage + 63) & ~(size_t)63);
  unsigned long long dims[3], strides[2];
  unsigned box[3] = {128, 128, 1}, estr[3] = {1, 1, 1};
  nvfp4moe__CUresult cr;
  dims[0] = (unsigned long long)k / 2; dims[1] = (unsigned long long)rows; dims[2] = (unsigned long long)groups;
  strides[0] = (unsigned long long)k / 2; strides[1] = (unsigned long long)rows * (unsigned long long)(k / 2);
  cr = nvfp4moe__cu.cuTensorMapEncodeTiled(aligned, 0 /* UINT8 */, 3, (void*)(size_t)base, dims, strides, box, estr,
                                           0 /* no interleave */, 3 /* 128B swizzle */, 3 /* L2 256B */, 0 /* zero fill */);
  if (cr != 0) return nvfp4moe__cuda_fail(&ctx->desc.logger, cr, "cuTensorMapEncodeTiled");
  memcpy(out, aligned, 128);
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__gemm_sm100(nvfp4moe_context* ctx, const char* fn, const nvfp4moe__gemm_params* g,
                                                       nvfp4moe_stream stream) {
  nvfp4moe__sm100_params p;
  nvfp4moe_result r;
  long long tiles = (long long)g->groups * ((g->m_max + 127) / 128) * ((g->n + 127) / 128);
  void* args[1];
  memset(&p, 0, sizeof p);
  r = nvfp4moe__tensor_map(ctx, p.tma_a, g->a, g->m_max, g->k, g->groups);
  if (r == NVFP4MOE_SUCCESS) r = nvfp4moe__tensor_map(ctx, p.tma_b, g->b, g->n, g->k, g->groups);
  if (r != NVFP4MOE_SUCCESS) return r;
  p.a_sf = g->a_sf; p.b_sf = g->b_sf; p.masked_m = g->masked_m; p.alpha = g->alpha; p.row_scale = g->row_scale;
  p.d = g->d; p.ldd = g->ldd; p.groups = g->groups; p.m_max = g->m_max; p.n = g->n; p.k = g->k;
  p.idesc = nvfp4moe_sm100_idesc_mxf4nvf4(128, 128);
  p.desc_ab = nvfp4moe_sm100_smem_desc(0, 16, 1024, 2);
  p.desc_sf = nvfp4moe_sm100_smem_desc(0, 16, 128, 0);
  args[0] = &p;
  return nvfp4moe__launch(ctx, fn, NVFP4MOE__SPEC_GEMM_SM100, 0, (unsigned)(tiles < ctx->sm_count ? tiles : ctx->sm_count),
                          192, NVFP4MOE__SM100_SMEM, stream, args);
}

/* widened: the expert layer's quantizer has already written the widened tokens into
   a->workspace (nvf_img_block), so the token pre-pass is not launched */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__gemm_op(nvfp4moe_context* ctx, const nvfp4moe_gemm_args* a, int widened,
                                                   nvfp4moe_stream stream) {
  const char* fn = "nvfp4moe_grouped_gemm_nt_masked";
  nvfp4moe__scope sc;
  nvfp4moe__gemm_params p;
  nvfp4moe_result r;
  long long ldd = 0;
  if (!ctx) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, "%s: ctx is null", fn);
  r = nvfp4moe__check_gemm(&ctx->desc.logger, fn, a, 1, &ldd);
  if (r != NVFP4MOE_SUCCESS) return r;
  r = nvfp4moe__enter(ctx, fn, &sc);
  if (r != NVFP4MOE_SUCCESS) return r;
  p.a = a->a; p.a_sf = a->a_sf; p.b = a->b; p.b_sf = a->b_sf; p.masked_m = a->masked_m;
  p.alpha = a->alpha; p.row_scale = a->row_scale; p.d = a->d; p.ldd = ldd;
  p.groups = a->groups; p.m_max = a->m_max; p.n = a->n; p.k = a->k; p.tok_ws = 0; p.tiles_m = 0; p.ptab = 0;
  /* the tcgen05 kernel reads ROW_MAJOR weights by TMA; TILED ones take the sm_80 kernels */
  if (ctx->backend == NVFP4MOE_BACKEND_SM100 && a->b_layout == NVFP4MOE_WEIGHTS_ROW_MAJOR) {
    r = nvfp4moe__gemm_sm100(ctx, fn, &p, stream);
  } else {
    int spec;
    size_t need = nvfp4moe__gemm_ws_need(ctx, a, &spec);
    if (need && a->workspace) { /* without one the token-producer tiles widen the tokens in every CTA */
      if (a->workspace_size < need || a->workspace % 16 != 0)
        return nvfp4moe__leave(&sc, nvfp4moe__fail_log(&ctx->desc.logger, NVFP4MOE_ERROR_INVALID_ARGUMENT,
                                                       "%s: args->workspace (0x%llx, %zu bytes) must be 16-byte aligned and "
                                                       "hold nvfp4moe_gemm_workspace_size() = %zu bytes, or be 0",
                                                       fn, a->workspace, a->workspace_size, need));
      p.tok_ws = a->workspace;
    }
    r = nvfp4moe__gemm_portable(ctx, fn, &p, spec, nvfp4moe__cover_m(a), a->b_layout == NVFP4MOE_WEIGHTS_TILED,
                                widened && p.tok_ws, stream);
  }
  return nvfp4moe__leave(&sc, r);
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_grouped_gemm_nt_masked(nvfp4moe_context* ctx, const nvfp4moe_gemm_args* a,
                                                               nvfp4moe_stream stream) {
  return nvfp4moe__gemm_op(ctx, a, 0, stream);
}

/* ---- first-use self-test of the native SM100 path ----------------------------------------
   The tcgen05 kernel and the hardware E2M1/E4M3 conversions were compiled and reviewed but
   never run on an SM100 GPU by their authors. At context creation a small problem with
   awkward shapes (K tail, N tail, masked rows poisoned with NaN SFs) is run through the
   native GEMM and the portable one, and an awkward quantization through the
   hardware-conversion kernel and the host reference. A mismatch logs a warning and
   switches to the portable GEMM / software conversions. NVFP4MOE_SELF_TEST=force runs the
   same plumbing on any GPU (portable against portable), =force-fail also corrupts the
   result, for the tests of the fallback itself. */
#define NVFP4MOE__ST_G 3
#define NVFP4MOE__ST_M 200
#define NVFP4MOE__ST_N 264
#define NVFP4MOE__ST_K 288

NVFP4MOE__PRIVATE unsigned nvfp4moe__lcg(unsigned* s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

/* Returns 1 if the native GEMM agrees with the portable one (or -1 on a mismatch, 0 if the
   test itself could not run), and fills why. */
NVFP4MOE__PRIVATE int nvfp4moe__self_test_gemm(nvfp4moe_context* ctx, int mode, char* why, size_t nwhy) {
  enum { G = NVFP4MOE__ST_G, M = NVFP4MOE__ST_M, N = NVFP4MOE__ST_N, K = NVFP4MOE__ST_K };
  static const int mm[G] = {0, 131, 200};
  const size_t na = (size_t)G * M * K / 2, nb = (size_t)G * N * K / 2, nd = (size_t)G * M * N;
  const size_t sfa_g = nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4), sfb_g = nvfp4moe_sf_bytes(N, K, NVFP4MOE_SF_LAYOUT_128X4);
  const size_t off_asf = (na + 255) / 256 * 256, off_b = off_asf + (G * sfa_g + 255) / 256 * 256;
  const size_t off_bsf = off_b + (nb + 255) / 256 * 256, off_mm = off_bsf + (G * sfb_g + 255) / 256 * 256;
  const size_t off_al = off_mm + 256, off_rs = off_al + 256, off_d1 = off_rs + ((size_t)G * M * 4 + 255) / 256 * 256;
  const size_t off_d2 = off_d1 + (nd * 2 + 255) / 256 * 256, total = off_d2 + nd * 2;
  unsigned char* h = (unsigned char*)malloc(total);
  unsigned short *d1, *d2;
  float alpha[G] = {0.5f, 1.0f, 2.0f}, *rs;
  unsigned seed = 12345u;
  nvfp4moe_devptr dev = 0;
  nvfp4moe__gemm_params p;
  int g, m, n, k, r, c, kc4 = (K / 16 + 3) / 4, result = 1;
  long long bad = 0;
  nvfp4moe_result res;
  if (!h || nvfp4moe__cu.cuMemAlloc(&dev, total) != 0) {
    free(h);
    snprintf(why, nwhy, "could not allocate %zu bytes for the self-test", total);
    return 0;
  }
  memset(h, 0, total);
  for (k = 0; k < (int)na; ++k) h[k] = (unsigned char)nvfp4moe__lcg(&seed);
  for (k = 0; k < (int)nb; ++k) h[off_b + (size_t)k] = (unsigned char)nvfp4moe__lcg(&seed);
  for (g = 0; g < G; ++g) {
    for (r = 0; r < M; ++r)
      for (c = 0; c < K / 16; ++c) /* rows past masked_m carry NaN SFs: they must change nothing */
        h[off_asf + (size_t)g * sfa_g + (size_t)nvfp4moe__sf_off_128x4(r, c, kc4)] =
            r < mm[g] ? (unsigned char)(0x30 + nvfp4moe__lcg(&seed) % 16) : 0x7F;
    for (r = 0; r < N; ++r)
      for (c = 0; c < K / 16; ++c)
        h[off_bsf + (size_t)g * sfb_g + (size_t)nvfp4moe__sf_off_128x4(r, c, kc4)] = (unsigned char)(0x30 + nvfp4moe__lcg(&seed) % 16);
  }
  memcpy(h + off_mm, mm, sizeof mm);
  memcpy(h + off_al, alpha, sizeof alpha);
  rs = (float*)(h + off_rs);
  for (k = 0; k < G * M; ++k) rs[k] = 0.25f + (float)(nvfp4moe__lcg(&seed) % 64) / 32.0f;
  memset(h + off_d1, 0xAB, 4 * nd); /* d1 and d2 sentinels (adjacent regions) */
  memset(&p, 0, sizeof p);
  p.a = dev; p.a_sf = dev + off_asf; p.b = dev + off_b; p.b_sf = dev + off_bsf; p.masked_m = dev + off_mm;
  p.alpha = dev + off_al; p.row_scale = dev + off_rs; p.ldd = N; p.groups = G; p.m_max = M; p.n = N; p.k = K;
  res = nvfp4moe__cu.cuMemcpyHtoD(dev, h, total) == 0 ? NVFP4MOE_SUCCESS : NVFP4MOE_ERROR_CUDA;
  if (res == NVFP4MOE_SUCCESS) {
    p.d = dev + off_d1;
    res = mode == 0 ? nvfp4moe__gemm_sm100(ctx, "self-test", &p, 0)
                    : nvfp4moe__gemm_portable(ctx, "self-test", &p, NVFP4MOE__SPEC_GEMM_P64, p.m_max, 0, 0, 0);
  }
  if (res == NVFP4MOE_SUCCESS) {
    p.d = dev + off_d2;
    res = nvfp4moe__gemm_portable(ctx, "self-test", &p, NVFP4MOE__SPEC_GEMM_P16, p.m_max, 0, 0, 0);
  }
  if (res == NVFP4MOE_SUCCESS && (nvfp4moe__cu.cuStreamSynchronize(0) != 0 ||
                                  nvfp4moe__cu.cuMemcpyDtoH(h + off_d1, dev + off_d1, total - off_d1) != 0))
    res = NVFP4MOE_ERROR_CUDA;
  if (res != NVFP4MOE_SUCCESS) {
    snprintf(why, nwhy, "the self-test could not run: %.180s", nvfp4moe_last_error());
    result = mode == 0 ? -1 : 0; /* a native kernel that fails to launch is not usable */
  } else {
    d1 = (unsigned short*)(h + off_d1);
    d2 = (unsigned short*)(h + off_d2);
    if (mode == 2) d1[(size_t)1 * M * N + 5] ^= 0x4000; /* force-fail: corrupt one valid element */
    for (g = 0; g < G; ++g) {
      /* both are bf16 roundings of f32 sums in different orders: a few bf16 ulps, plus
         slack for cancellation relative to the group's RMS; a layout error is O(RMS) */
      double rms = 0;
      long long cnt = 0;
      for (m = 0; m < mm[g]; ++m)
        for (n = 0; n < N; ++n, ++cnt) {
          double x2 = nvfp4moe_ref_bf16_to_f32(d2[((size_t)g * M + (size_t)m) * N + (size_t)n]);
          rms += x2 * x2;
        }
      rms = cnt ? rms / (double)cnt : 0;
      for (m = 0; m < M; ++m)
        for (n = 0; n < N; ++n) {
          size_t o = ((size_t)g * M + (size_t)m) * N + (size_t)n;
          double x1, x2, diff;
          if (m >= mm[g]) { bad += d1[o] != 0xABAB; continue; } /* rows past masked_m untouched */
          x1 = nvfp4moe_ref_bf16_to_f32(d1[o]);
          x2 = nvfp4moe_ref_bf16_to_f32(d2[o]);
          diff = x1 > x2 ? x1 - x2 : x2 - x1;
          if (!(diff * diff <= (x2 * x2) / 4096.0 + rms / 65536.0)) ++bad;
        }
    }
    if (bad) {
      snprintf(why, nwhy, "%lld outputs differ from the portable kernel", bad);
      result = -1;
    }
  }
  nvfp4moe__cu.cuMemFree(dev);
  free(h);
  return result;
}

/* The quantizer with hardware conversions against the host reference on blocks that
   exercise ties, saturation and subnormal SFs. 1 pass, -1 mismatch, 0 could not run. */
NVFP4MOE__PRIVATE int nvfp4moe__self_test_quantize(nvfp4moe_context* ctx, int mode, char* why, size_t nwhy) {
  enum { M = 8, K = 128 };
  static const float ties[8] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f};
  unsigned short x[M * K];
  unsigned char q[2][M * K / 2], sf[2][128 * 4 * 2];
  float s[2][M];
  unsigned seed = 777u;
  nvfp4moe_quantize_args a;
  nvfp4moe__quant_params p;
  nvfp4moe_devptr dev = 0;
  int i, result = 1;
  for (i = 0; i < M * K; ++i) {
    int row = i / K, blk = (i % K) / 16;
    float v = (nvfp4moe__lcg(&seed) & 1 ? -1.0f : 1.0f) * ties[nvfp4moe__lcg(&seed) % 8];
    if (blk == 1) v *= 1e-8f;                   /* tiny: subnormal SFs */
    if (blk == 2 && (i % 16) == 0) v = 3e38f;   /* a huge element */
    if (row == 3) v = 0.0f;                     /* a zero row */
    x[i] = nvfp4moe_ref_f32_to_bf16(v * (float)(1 << (row % 5)));
  }
  memset(&a, 0, sizeof a);
  a.dtype = NVFP4MOE_DTYPE_BF16; a.groups = 1; a.rows = M; a.k = K; a.flags = NVFP4MOE_QUANT_4OVER6;
  a.x = NVFP4MOE_HOSTPTR(x); a.out_e2m1 = NVFP4MOE_HOSTPTR(q[0]); a.out_sf = NVFP4MOE_HOSTPTR(sf[0]); a.scale = NVFP4MOE_HOSTPTR(s[0]);
  nvfp4moe_ref_quantize_per_token(&a);
  if (nvfp4moe__cu.cuMemAlloc(&dev, 65536) != 0) { snprintf(why, nwhy, "no memory for the self-test"); return 0; }
  p = nvfp4moe__quant_params_of(&a, K, 1);
  p.x = dev; p.q = dev + 16384; p.sf = dev + 32768; p.scale_out = dev + 49152;
  if (nvfp4moe__cu.cuMemcpyHtoD(dev, x, sizeof x) != 0 || nvfp4moe__launch_quantize(ctx, "self-test", &p, 0, 0, 0, NVFP4MOE_WEIGHTS_ROW_MAJOR, 0, 0) != NVFP4MOE_SUCCESS ||
      nvfp4moe__cu.cuStreamSynchronize(0) != 0 || nvfp4moe__cu.cuMemcpyDtoH(q[1], dev + 16384, sizeof q[1]) != 0 ||
      nvfp4moe__cu.cuMemcpyDtoH(sf[1], dev + 32768, nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4)) != 0 ||
      nvfp4moe__cu.cuMemcpyDtoH(s[1], dev + 49152, sizeof s[1]) != 0) {
    snprintf(why, nwhy, "the quantizer self-test could not run: %.180s", nvfp4moe_last_error());
    result = 0;
  } else {
    if (mode == 2) q[1][3] ^= 1;
    if (memcmp(q[0], q[1], sizeof q[0]) || memcmp(sf[0], sf[1], nvfp4moe_sf_bytes(M, K, NVFP4MOE_SF_LAYOUT_128X4)) ||
        memcmp(s[0], s[1], sizeof s[0])) {
      snprintf(why, nwhy, "the quantizer with hardware conversions differs from the host reference");
      result = -1;
    }
  }
  nvfp4moe__cu.cuMemFree(dev);
  return result;
}

/* Runs at context creation (so never inside a graph capture). */
NVFP4MOE__PRIVATE void nvfp4moe__self_test(nvfp4moe_context* ctx) {
  const char* env = nvfp4moe__getenv("NVFP4MOE_SELF_TEST");
  int mode = env && strcmp(env, "force") == 0 ? 1 : env && strcmp(env, "force-fail") == 0 ? 2 : 0;
  int native = nvfp4moe__target_is_sm100(ctx);
  char why[256];
  nvfp4moe__scope sc;
  if (ctx->offline || (!native && !mode)) return;
  if (!mode && (ctx->desc.flags & NVFP4MOE_FLAG_NO_SELF_TEST)) return;
  if (nvfp4moe__enter(ctx, "self-test", &sc) != NVFP4MOE_SUCCESS) return;
  why[0] = 0;
  if ((native && !(ctx->desc.flags & NVFP4MOE_FLAG_SOFT_CVT)) || mode) {
    if (nvfp4moe__self_test_quantize(ctx, mode, why, sizeof why) < 0) {
      int s;
      nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_WARN, "self-test: %s; using software E2M1/E4M3 conversions", why);
      ctx->desc.flags |= NVFP4MOE_FLAG_SOFT_CVT; /* new options -> new keys: recompiled on next use */
      for (s = NVFP4MOE__SPEC_QUANTIZE; s <= NVFP4MOE__SPEC_QUANTIZE_LAST; ++s) {
        if (ctx->modules[s].module) nvfp4moe__cu.cuModuleUnload(ctx->modules[s].module);
        memset(ctx->modules[s].fn, 0, sizeof ctx->modules[s].fn);
        memset(ctx->modules[s].smem_set, 0, sizeof ctx->modules[s].smem_set);
        memset(ctx->modules[s].occupancy, 0, sizeof ctx->modules[s].occupancy);
        memset(ctx->modules[s].regs, 0, sizeof ctx->modules[s].regs);
        ctx->modules[s].module = 0;
        ctx->modules[s].state = 0;
      }
    }
  }
  /* an explicit desc->backend / NVFP4MOE_BACKEND = sm100 forces the native path untested */
  if ((ctx->backend == NVFP4MOE_BACKEND_SM100 && ctx->desc_backend_forced == 0) || mode) {
    int r = nvfp4moe__self_test_gemm(ctx, mode, why, sizeof why);
    ctx->sm100_self_test = r;
    if (r < 0) {
      nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_WARN, "self-test: the native SM100 GEMM failed (%s); using the portable path",
                    why);
      ctx->backend = NVFP4MOE_BACKEND_PORTABLE;
    } else if (r == 0) {
      nvfp4moe__log(&ctx->desc.logger, NVFP4MOE_LOG_WARN, "self-test skipped: %s", why);
    }
  }
  nvfp4moe__leave(&sc, NVFP4MOE_SUCCESS);
}

/* Workspace of the expert layer, regions 256-byte aligned. */
typedef struct nvfp4moe__moe_ws {
  size_t xq, xsf, xs, h, yq, ysf, ys, alpha2, tok, tok_bytes, total;
} nvfp4moe__moe_ws;

NVFP4MOE__PRIVATE size_t nvfp4moe__carve(size_t* off, size_t bytes) {
  size_t at = *off;
  *off += (bytes + 255) / 256 * 256;
  return at;
}

NVFP4MOE__PRIVATE nvfp4moe__moe_ws nvfp4moe__moe_layout(const nvfp4moe_moe_weights* w, int m_max) {
  nvfp4moe__moe_ws ws;
  size_t off = 0, rows = (size_t)w->experts * (size_t)m_max;
  ws.xq = nvfp4moe__carve(&off, rows * (size_t)w->hidden / 2);
  ws.xsf = nvfp4moe__carve(&off, (size_t)w->experts * nvfp4moe_sf_bytes(m_max, w->hidden, NVFP4MOE_SF_LAYOUT_128X4));
  ws.xs = nvfp4moe__carve(&off, rows * 4);
  ws.h = nvfp4moe__carve(&off, rows * (size_t)w->inter * 4); /* bf16 [E, m_max, 2I] */
  ws.yq = nvfp4moe__carve(&off, rows * (size_t)w->inter / 2);
  ws.ysf = nvfp4moe__carve(&off, (size_t)w->experts * nvfp4moe_sf_bytes(m_max, w->inter, NVFP4MOE_SF_LAYOUT_128X4));
  ws.ys = nvfp4moe__carve(&off, rows * 4);
  ws.alpha2 = nvfp4moe__carve(&off, (size_t)w->experts * 4);
  /* the GEMM workspace both GEMMs share (one after the other on the stream): widened tokens,
     at most G (m_max + 127) roundup(K, 256) bf16 for K = hidden or inter, a bound on
     nvfp4moe__tok_ws_bytes for every token tile (NVF_TOK <= 128, NVF_SPS <= 2) */
  ws.tok_bytes = (size_t)w->experts * ((size_t)m_max + 127) *
                 (((size_t)(w->hidden > w->inter ? w->hidden : w->inter) + 255) / 256 * 256) * 2;
  ws.tok = nvfp4moe__carve(&off, ws.tok_bytes);
  ws.total = off;
  return ws;
}

NVFP4MOE__IMPL size_t nvfp4moe_moe_workspace_size(const nvfp4moe_moe_weights* w, int m_max) {
  if (!nvfp4moe__moe_shapes_ok(w, m_max)) return 0;
  return nvfp4moe__moe_layout(w, m_max).total;
}

/* Bytes of the layer's token region its two GEMMs use on ctx (0 for the host reference): the
   larger of their nvfp4moe_gemm_workspace_size (expected_m < 0: the most any expected_m needs),
   both at most the layout's bound. (The tile does not depend on N, which is left 0.) */
NVFP4MOE__PRIVATE size_t nvfp4moe__moe_tok_need(const nvfp4moe_context* ctx, const nvfp4moe_moe_weights* w, int m_max,
                                                int expected_m) {
  nvfp4moe_gemm_args g;
  size_t n1, n2;
  int spec;
  if (!ctx) return 0;
  memset(&g, 0, sizeof g);
  g.groups = w->experts; g.m_max = m_max; g.expected_m = expected_m; g.b_layout = w->layout;
  g.k = w->hidden;
  n1 = expected_m < 0 ? nvfp4moe__gemm_ws_need_any(ctx, &g) : nvfp4moe__gemm_ws_need(ctx, &g, &spec);
  g.k = w->inter;
  n2 = expected_m < 0 ? nvfp4moe__gemm_ws_need_any(ctx, &g) : nvfp4moe__gemm_ws_need(ctx, &g, &spec);
  return n1 > n2 ? n1 : n2;
}

NVFP4MOE__IMPL size_t nvfp4moe_moe_workspace_size_for(const nvfp4moe_context* ctx, const nvfp4moe_moe_weights* w,
                                                     int m_max, int expected_m) {
  if (!nvfp4moe__moe_shapes_ok(w, m_max)) return 0;
  return nvfp4moe__moe_layout(w, m_max).tok + nvfp4moe__moe_tok_need(ctx, w, m_max, expected_m < 0 ? -1 : expected_m);
}

/* NVF_TOK of the token-producer tile the GEMM `a` (with the layer's workspace) runs with its
   pre-pass, which the layer's quantizer then replaces; 0 where it runs another tile. The
   layer's workspace region holds its widened tokens (bound in nvfp4moe__moe_layout). */
NVFP4MOE__PRIVATE int nvfp4moe__layer_img_tok(const nvfp4moe_context* ctx, const nvfp4moe_gemm_args* a) {
  int spec;
  if (nvfp4moe__gemm_ws_need(ctx, a, &spec) == 0) return 0; /* (0 on every backend but sm90) */
  /* (the swap-AB tiles' token rows are written by their own pre-pass: the _img kernels write
     the token-producer tiles' slot images) */
  return spec >= NVFP4MOE__SPEC_GEMM_WS128 && spec <= NVFP4MOE__SPEC_GEMM_WS32_VARN ? nvfp4moe__ws_tok[spec - NVFP4MOE__SPEC_GEMM_WS128]
                                                                                 : 0;
}

/* The pdl argument (nvfp4moe__launch_quantize) of the expert layer's input (silu 0) or SiLU (silu 1)
   quantizer: 0 where ctx->layer_pdl's bit says so; unset (-1), the input quantizer always and the
   SiLU quantizer unless GEMM1 ran a token-producer tile (gemm1_tp); else -1 (no early launch) */
NVFP4MOE__PRIVATE int nvfp4moe__layer_quant_pdl(const nvfp4moe_context* ctx, int silu, int gemm1_tp) {
  if (ctx->layer_pdl < 0) return silu && gemm1_tp ? -1 : 0;
  return ctx->layer_pdl & (silu ? 2 : 1) ? 0 : -1;
}

/* The layer's four steps; ctx null runs the host reference on host buffers. */
NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__moe_run(nvfp4moe_context* ctx, const nvfp4moe_moe_weights* w,
                                                    const nvfp4moe_moe_args* a, nvfp4moe_stream stream) {
  const char* fn = ctx ? "nvfp4moe_moe_forward" : "nvfp4moe_ref_moe_forward";
  const nvfp4moe_logger* lg = ctx ? &ctx->desc.logger : 0;
  nvfp4moe__moe_ws ws;
  nvfp4moe_quantize_args q;
  nvfp4moe_gemm_args g;
  nvfp4moe_devptr base, alpha2;
  nvfp4moe_result r;
  int per_token, img1, img2, tok1;
  size_t need = 0;
  memset(&ws, 0, sizeof ws);
  if (a && nvfp4moe__moe_shapes_ok(w, a->m_max)) {
    ws = nvfp4moe__moe_layout(w, a->m_max);
    /* the token region as large as this call's GEMMs use (nvfp4moe_moe_workspace_size_for) */
    need = ws.tok + (a->expected_m >= 0 ? nvfp4moe__moe_tok_need(ctx, w, a->m_max, a->expected_m) : 0);
  }
  r = nvfp4moe__check_moe(lg, fn, w, a, ctx != 0, need);
  if (r != NVFP4MOE_SUCCESS) return r;
  base = a->workspace;
  per_token = a->scaling == NVFP4MOE_ACT_PER_TOKEN;

  /* The GEMMs' tiles: where one is a token-producer tile with the workspace (sm90), the
     quantizer before it writes its widened tokens (img_tok: the tile's tokens; 0 none). */
  memset(&g, 0, sizeof g);
  g.groups = w->experts; g.m_max = a->m_max; g.expected_m = a->expected_m; g.b_layout = w->layout;
  g.n = 2 * w->inter; g.k = w->hidden;
  tok1 = ctx ? nvfp4moe__layer_img_tok(ctx, &g) : 0; /* (also says GEMM1 runs a token-producer tile: nvfp4moe__layer_quant_pdl) */
  img1 = ctx && (ctx->layer_widen & 1) ? tok1 : 0;
  g.n = w->hidden; g.k = w->inter;
  /* (the SiLU one only where it keeps one register block a thread, inter <= 4096: past that the
     plain SiLU quantizer takes its wide specialisation, which the _img kernel has not) */
  img2 = ctx && (ctx->layer_widen & 2) && w->inter <= 4096 ? nvfp4moe__layer_img_tok(ctx, &g) : 0;

  /* 1. x -> NVFP4 */
  memset(&q, 0, sizeof q);
  q.dtype = NVFP4MOE_DTYPE_BF16; q.groups = w->experts; q.rows = a->m_max; q.k = w->hidden;
  q.x = a->x; q.masked_m = a->masked_m; q.out_e2m1 = base + ws.xq; q.out_sf = base + ws.xsf;
  q.flags = a->quant_flags;
  q.scale = per_token ? base + ws.xs : w->input_scale1;
  if (ctx)
    r = nvfp4moe__quantize_op(ctx, &q, stream, per_token ? "nvfp4moe_quantize_per_token" : "nvfp4moe_quantize_per_tensor",
                              per_token, 0, img1 ? base + ws.tok : 0, img1, w->layout,
                              nvfp4moe__layer_quant_pdl(ctx, 0, tok1 != 0));
  else r = per_token ? nvfp4moe_ref_quantize_per_token(&q) : nvfp4moe_ref_quantize_per_tensor(&q);
  if (r != NVFP4MOE_SUCCESS) return r;

  /* 2. GEMM1: h = x_scale * (x . w13^T); the weight scales come in step 3 */
  memset(&g, 0, sizeof g);
  g.groups = w->experts; g.m_max = a->m_max; g.n = 2 * w->inter; g.k = w->hidden;
  g.a = base + ws.xq; g.a_sf = base + ws.xsf; g.b = w->w13; g.b_sf = w->w13_sf;
  g.masked_m = a->masked_m; g.alpha = per_token ? 0 : w->input_scale1; g.row_scale = per_token ? base + ws.xs : 0;
  g.d = base + ws.h; g.ldd = 2 * w->inter; g.expected_m = a->expected_m; g.b_layout = w->layout;
  g.workspace = ctx ? base + ws.tok : 0; g.workspace_size = ctx ? a->workspace_size - ws.tok : 0;
  r = ctx ? nvfp4moe__gemm_op(ctx, &g, img1 != 0, stream) : nvfp4moe_ref_grouped_gemm_nt_masked(&g);
  if (r != NVFP4MOE_SUCCESS) return r;

  /* 3. y = bf16(silu(gate * gs) * (up * us)) -> NVFP4 (by default no programmatic dependent launch
     after a token-producer GEMM1: nvfp4moe__layer_quant_pdl) */
  memset(&q, 0, sizeof q);
  q.dtype = NVFP4MOE_DTYPE_BF16; q.groups = w->experts; q.rows = a->m_max; q.k = w->inter;
  q.x = base + ws.h; q.masked_m = a->masked_m; q.out_e2m1 = base + ws.yq; q.out_sf = base + ws.ysf;
  q.gate_scale = w->w13_gate_scale; q.up_scale = w->w13_up_scale; q.flags = a->quant_flags;
  q.scale = per_token ? base + ws.ys : w->input_scale2;
  if (ctx)
    r = nvfp4moe__quantize_op(ctx, &q, stream,
                              per_token ? "nvfp4moe_silu_mul_quantize_per_token" : "nvfp4moe_silu_mul_quantize_per_tensor",
                              per_token, 1, img2 ? base + ws.tok : 0, img2, w->layout,
                              nvfp4moe__layer_quant_pdl(ctx, 1, tok1 != 0));
  else r = per_token ? nvfp4moe_ref_silu_mul_quantize_per_token(&q) : nvfp4moe_ref_silu_mul_quantize_per_tensor(&q);
  if (r != NVFP4MOE_SUCCESS) return r;

  /* 4. GEMM2 with alpha = w2_scale (* input_scale2 per expert) */
  alpha2 = w->w2_scale;
  if (!per_token) {
    alpha2 = base + ws.alpha2;
    if (ctx) {
      nvfp4moe__scope sc;
      void* args[4];
      int e = w->experts;
      r = nvfp4moe__enter(ctx, fn, &sc);
      if (r != NVFP4MOE_SUCCESS) return r;
      args[0] = (void*)&w->w2_scale; args[1] = (void*)&w->input_scale2; args[2] = &alpha2; args[3] = &e;
      r = nvfp4moe__leave(&sc, nvfp4moe__launch(ctx, fn, NVFP4MOE__SPEC_QUANTIZE, NVFP4MOE__K_SCALE_PRODUCT,
                                                (unsigned)((e + 255) / 256), 256, 0, stream, args));
      if (r != NVFP4MOE_SUCCESS) return r;
    } else {
      int e;
      const float* s2 = (const float*)(size_t)w->w2_scale;
      const float* i2 = (const float*)(size_t)w->input_scale2;
      float* al = (float*)(size_t)alpha2;
      for (e = 0; e < w->experts; ++e) al[e] = nvfp4moe__mul(s2[e], i2[e]);
    }
  }
  memset(&g, 0, sizeof g);
  g.groups = w->experts; g.m_max = a->m_max; g.n = w->hidden; g.k = w->inter;
  g.a = base + ws.yq; g.a_sf = base + ws.ysf; g.b = w->w2; g.b_sf = w->w2_sf;
  g.masked_m = a->masked_m; g.alpha = alpha2; g.row_scale = per_token ? base + ws.ys : 0;
  g.d = a->out; g.ldd = w->hidden; g.expected_m = a->expected_m; g.b_layout = w->layout;
  g.workspace = ctx ? base + ws.tok : 0; g.workspace_size = ctx ? a->workspace_size - ws.tok : 0;
  return ctx ? nvfp4moe__gemm_op(ctx, &g, img2 != 0, stream) : nvfp4moe_ref_grouped_gemm_nt_masked(&g);
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_moe_forward(nvfp4moe_context* ctx, const nvfp4moe_moe_weights* w,
                                                    const nvfp4moe_moe_args* args, nvfp4moe_stream stream) {
  if (!ctx) return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_INVALID_ARGUMENT, "nvfp4moe_moe_forward: ctx is null");
  return nvfp4moe__moe_run(ctx, w, args, stream);
}

/* --------------------------------------------------------------------------------------
   Host reference operations (host addresses in the nvfp4moe_devptr fields)
   -------------------------------------------------------------------------------------- */

#define NVFP4MOE__HP(type, p) ((type)(size_t)(p))

NVFP4MOE__PRIVATE int nvfp4moe__ref_valid_rows(const int* masked_m, int g, int rows) {
  int m;
  if (!masked_m) return rows;
  m = masked_m[g];
  return m < 0 ? 0 : (m > rows ? rows : m);
}

/* Block b of a row: the input, or bf16(silu(gate * gs) * (up * us)). */
NVFP4MOE__PRIVATE void nvfp4moe__ref_load_block(const unsigned short* row, int fp16, int silu, int k, int b, float gs,
                                                float us, int use_gs, int use_us, float* v) {
  int j;
  for (j = 0; j < 16; ++j) {
    unsigned short h = row[(size_t)b * 16 + (size_t)j];
    v[j] = fp16 ? nvfp4moe_ref_fp16_to_f32(h) : nvfp4moe_ref_bf16_to_f32(h);
    if (silu) {
      unsigned short hu = row[(size_t)k + (size_t)b * 16 + (size_t)j];
      float u = fp16 ? nvfp4moe_ref_fp16_to_f32(hu) : nvfp4moe_ref_bf16_to_f32(hu);
      float g = use_gs ? nvfp4moe__mul(v[j], gs) : v[j];
      v[j] = nvfp4moe_ref_silu_mul(g, use_us ? nvfp4moe__mul(u, us) : u);
    }
  }
}

NVFP4MOE__PRIVATE nvfp4moe_result nvfp4moe__ref_quantize(const nvfp4moe_quantize_args* a, const char* fn, int per_token,
                                                         int silu) {
  long long stride = 0;
  int g, r, b, c, nblk, kc4, rows_pad, fo6, fp16, linear, pad;
  nvfp4moe_result res = nvfp4moe__check_quantize(0, fn, a, per_token, silu, 0, &stride);
  const int* mm;
  unsigned char *qout, *sfout;
  size_t sf_g;
  if (res != NVFP4MOE_SUCCESS) return res;
  nblk = a->k / 16;
  kc4 = (nblk + 3) / 4;
  linear = a->sf_layout == NVFP4MOE_SF_LAYOUT_LINEAR;
  pad = !a->masked_m && !linear;
  rows_pad = pad ? (a->rows + 127) / 128 * 128 : a->rows;
  fo6 = nvfp4moe__fo6(a->flags);
  fp16 = a->dtype == NVFP4MOE_DTYPE_FP16;
  mm = NVFP4MOE__HP(const int*, a->masked_m);
  qout = NVFP4MOE__HP(unsigned char*, a->out_e2m1);
  sfout = NVFP4MOE__HP(unsigned char*, a->out_sf);
  sf_g = nvfp4moe_sf_bytes(a->rows, a->k, a->sf_layout);
  for (g = 0; g < a->groups; ++g) {
    unsigned char* sfg = sfout + (size_t)g * sf_g;
    int valid = nvfp4moe__ref_valid_rows(mm, g, a->rows);
    float gs = a->gate_scale ? NVFP4MOE__HP(const float*, a->gate_scale)[g] : 1.0f;
    float us = a->up_scale ? NVFP4MOE__HP(const float*, a->up_scale)[g] : 1.0f;
    for (r = 0; r < rows_pad; ++r) {
      const unsigned short* xrow;
      float s, t = 0.0f, v[16];
      int mode;
      unsigned char* qrow;
      if (r >= a->rows) {
        for (c = 0; c < kc4 * 4; ++c) sfg[nvfp4moe__sf_off_128x4(r, c, kc4)] = 0;
        continue;
      }
      if (r >= valid) continue;
      xrow = NVFP4MOE__HP(const unsigned short*, a->x) + ((size_t)g * (size_t)a->rows + (size_t)r) * (size_t)stride;
      if (per_token) {
        uint32_t amax = 0, bad = 0;
        int j;
        for (b = 0; b < nblk; ++b) {
          nvfp4moe__ref_load_block(xrow, fp16, silu, a->k, b, gs, us, a->gate_scale != 0, a->up_scale != 0, v);
          for (j = 0; j < 16; ++j) {
            uint32_t m = nvfp4moe__bits(v[j]) & 0x7FFFFFFFu;
            bad |= m >= 0x7F800000u;
            if (m > amax) amax = m;
          }
        }
        s = nvfp4moe__mul(nvfp4moe__f32(amax), nvfp4moe__f32(NVFP4MOE__RCP2688));
        if (bad) { s = nvfp4moe__f32(NVFP4MOE__NAN); mode = 2; }
        else if (s < NVFP4MOE__FLT_MIN) { s = 0.0f; mode = 1; }
        else mode = 0;
        NVFP4MOE__HP(float*, a->scale)[(size_t)g * (size_t)a->rows + (size_t)r] = s;
      } else {
        s = a->scale ? NVFP4MOE__HP(const float*, a->scale)[g] : a->scale_value;
        mode = s == 0.0f ? 1 : nvfp4moe__normal_positive(s) ? 0 : 2;
      }
      if (mode == 0) t = nvfp4moe__mul(nvfp4moe__div(1.0f, s), nvfp4moe__f32(NVFP4MOE__RCP6));
      qrow = qout + ((size_t)g * (size_t)a->rows + (size_t)r) * (size_t)(a->k / 2);
      for (b = 0; b < nblk; ++b) {
        uint32_t q[2] = {0u, 0u};
        unsigned sfb = mode == 2 ? 0x7Fu : 0u;
        int j;
        if (mode == 0) {
          uint32_t amax = 0, bad = 0;
          nvfp4moe__ref_load_block(xrow, fp16, silu, a->k, b, gs, us, a->gate_scale != 0, a->up_scale != 0, v);
          for (j = 0; j < 16; ++j) {
            uint32_t m = nvfp4moe__bits(v[j]) & 0x7FFFFFFFu;
            bad |= m >= 0x7F800000u;
            if (m > amax) amax = m;
          }
          sfb = bad ? 0x7Fu : nvfp4moe__quantize_block16(v, nvfp4moe__f32(amax), s, t, fo6, q);
        }
        for (j = 0; j < 4; ++j) {
          qrow[b * 8 + j] = (unsigned char)(q[0] >> (8 * j));
          qrow[b * 8 + 4 + j] = (unsigned char)(q[1] >> (8 * j));
        }
        sfg[linear ? (size_t)r * (size_t)nblk + (size_t)b : (size_t)nvfp4moe__sf_off_128x4(r, b, kc4)] = (unsigned char)sfb;
      }
      if (!linear)
        for (c = nblk; c < kc4 * 4; ++c) sfg[nvfp4moe__sf_off_128x4(r, c, kc4)] = 0;
    }
  }
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_quantize_per_token(const nvfp4moe_quantize_args* args) {
  return nvfp4moe__ref_quantize(args, "nvfp4moe_ref_quantize_per_token", 1, 0);
}
NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_quantize_per_tensor(const nvfp4moe_quantize_args* args) {
  return nvfp4moe__ref_quantize(args, "nvfp4moe_ref_quantize_per_tensor", 0, 0);
}
NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_silu_mul_quantize_per_token(const nvfp4moe_quantize_args* args) {
  return nvfp4moe__ref_quantize(args, "nvfp4moe_ref_silu_mul_quantize_per_token", 1, 1);
}
NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_silu_mul_quantize_per_tensor(const nvfp4moe_quantize_args* args) {
  return nvfp4moe__ref_quantize(args, "nvfp4moe_ref_silu_mul_quantize_per_tensor", 0, 1);
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_quantize_weights(const nvfp4moe_weight_quantize_args* a) {
  const char* fn = "nvfp4moe_ref_quantize_weights";
  nvfp4moe_quantize_args q;
  nvfp4moe_result r = nvfp4moe__check_weights(0, fn, a, 0);
  int e;
  if (r != NVFP4MOE_SUCCESS) return r;
  for (e = 0; e < a->experts; ++e) {
    const unsigned short* w = NVFP4MOE__HP(const unsigned short*, a->w) + (size_t)e * (size_t)a->n * (size_t)a->k;
    size_t i, n = (size_t)a->n * (size_t)a->k;
    uint32_t amax = 0;
    float s;
    for (i = 0; i < n; ++i) {
      float v = a->dtype == NVFP4MOE_DTYPE_FP16 ? nvfp4moe_ref_fp16_to_f32(w[i]) : nvfp4moe_ref_bf16_to_f32(w[i]);
      uint32_t m = nvfp4moe__bits(v) & 0x7FFFFFFFu;
      if (m < 0x7F800000u && m > amax) amax = m; /* finite values only */
    }
    s = nvfp4moe__div(nvfp4moe__f32(amax), 2688.0f);
    NVFP4MOE__HP(float*, a->out_scale)[e] = s < NVFP4MOE__FLT_MIN ? 0.0f : s;
  }
  memset(&q, 0, sizeof q);
  q.dtype = a->dtype; q.groups = a->experts; q.rows = a->n; q.k = a->k; q.x = a->w;
  q.out_e2m1 = a->out_e2m1; q.out_sf = a->out_sf; q.scale = a->out_scale; q.flags = a->flags;
  return nvfp4moe__ref_quantize(&q, fn, 0, 0);
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_weights_relayout(const nvfp4moe_weights_relayout_args* a) {
  nvfp4moe_result r = nvfp4moe__check_relayout(0, "nvfp4moe_ref_weights_relayout", a, 0);
  size_t row, o, rows;
  const unsigned char* src;
  unsigned char* dst;
  if (r != NVFP4MOE_SUCCESS) return r;
  src = NVFP4MOE__HP(const unsigned char*, a->src);
  dst = NVFP4MOE__HP(unsigned char*, a->dst);
  rows = (size_t)a->groups * (size_t)a->n;
  if (a->dst_layout == NVFP4MOE_WEIGHTS_TILED) /* the padding of a last partial step */
    memset(dst, 0, (size_t)a->groups * nvfp4moe_weight_bytes(a->n, a->k, NVFP4MOE_WEIGHTS_TILED));
  for (row = 0; row < rows; ++row)
    for (o = 0; o < (size_t)(a->k / 2); o += 4) { /* whole 4-byte words (K % 32 == 0), their codes encoded */
      size_t lin = row * (size_t)(a->k / 2) + o, til = nvfp4moe__weight_byte(NVFP4MOE_WEIGHTS_TILED, row, o, a->k);
      if (a->dst_layout == NVFP4MOE_WEIGHTS_TILED) nvfp4moe__st32(dst + til, nvfp4moe__wenc(nvfp4moe__ld32(src + lin)));
      else nvfp4moe__st32(dst + lin, nvfp4moe__wdec(nvfp4moe__ld32(src + til)));
    }
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_sf_convert(const nvfp4moe_sf_convert_args* a) {
  nvfp4moe_result r = nvfp4moe__check_sf_convert(0, "nvfp4moe_ref_sf_convert", a);
  int g, row, c, nblk, kc4, rows_pad;
  size_t lin, sw;
  const unsigned char* src;
  unsigned char* dst;
  if (r != NVFP4MOE_SUCCESS) return r;
  nblk = a->k / 16;
  kc4 = (nblk + 3) / 4;
  rows_pad = (a->rows + 127) / 128 * 128;
  lin = nvfp4moe_sf_bytes(a->rows, a->k, NVFP4MOE_SF_LAYOUT_LINEAR);
  sw = nvfp4moe_sf_bytes(a->rows, a->k, NVFP4MOE_SF_LAYOUT_128X4);
  src = NVFP4MOE__HP(const unsigned char*, a->src);
  dst = NVFP4MOE__HP(unsigned char*, a->dst);
  for (g = 0; g < a->groups; ++g)
    for (row = 0; row < rows_pad; ++row)
      for (c = 0; c < kc4 * 4; ++c) {
        int real = row < a->rows && c < nblk;
        size_t o128 = (size_t)g * sw + (size_t)nvfp4moe__sf_off_128x4(row, c, kc4);
        size_t olin = (size_t)g * lin + (size_t)row * (size_t)nblk + (size_t)c;
        if (a->dst_layout == NVFP4MOE_SF_LAYOUT_128X4) dst[o128] = real ? src[olin] : 0;
        else if (real) dst[olin] = src[o128];
      }
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_dequantize(const nvfp4moe_dequantize_args* a) {
  nvfp4moe_result r = nvfp4moe__check_dequantize(0, "nvfp4moe_ref_dequantize", a, 0);
  int g, row, b, j, nblk, kc4;
  size_t sf_g;
  if (r != NVFP4MOE_SUCCESS) return r;
  nblk = a->k / 16;
  kc4 = (nblk + 3) / 4;
  sf_g = nvfp4moe_sf_bytes(a->rows, a->k, a->sf_layout);
  for (g = 0; g < a->groups; ++g) {
    int valid = nvfp4moe__ref_valid_rows(NVFP4MOE__HP(const int*, a->masked_m), g, a->rows);
    for (row = 0; row < valid; ++row) {
      size_t gr = (size_t)g * (size_t)a->rows + (size_t)row;
      float s = NVFP4MOE__HP(const float*, a->scale)[a->scale_per_row ? gr : (size_t)g];
      for (b = 0; b < nblk; ++b) {
        const unsigned char* sfp = NVFP4MOE__HP(const unsigned char*, a->sf) + (size_t)g * sf_g;
        unsigned sfb = sfp[a->sf_layout == NVFP4MOE_SF_LAYOUT_LINEAR ? (size_t)row * (size_t)nblk + (size_t)b
                                                                     : (size_t)nvfp4moe__sf_off_128x4(row, b, kc4)];
        float sff = nvfp4moe_ref_e4m3_to_f32(sfb);
        for (j = 0; j < 16; ++j) {
          unsigned char byte = NVFP4MOE__HP(const unsigned char*, a->e2m1)[gr * (size_t)(a->k / 2) + (size_t)b * 8 + (size_t)(j / 2)];
          unsigned code = (j & 1) ? byte >> 4 : byte & 15u;
          float v = sfb == 0x7Fu ? nvfp4moe__f32(NVFP4MOE__NAN)
                                 : nvfp4moe__mul(nvfp4moe__mul(nvfp4moe_ref_e2m1_to_f32(code), sff), s);
          size_t o = gr * (size_t)a->k + (size_t)b * 16 + (size_t)j;
          if (a->out_dtype == NVFP4MOE_DTYPE_BF16) NVFP4MOE__HP(unsigned short*, a->out)[o] = nvfp4moe_ref_f32_to_bf16(v);
          else NVFP4MOE__HP(float*, a->out)[o] = v;
        }
      }
    }
  }
  return NVFP4MOE_SUCCESS;
}

/* Dequantized [rows, K] of one NVFP4 matrix (weight layout, 128x4 SFs, decode scale 1) into f32. */
NVFP4MOE__PRIVATE void nvfp4moe__ref_deq_rows(const unsigned char* q, int layout, const unsigned char* sf, int rows, int k,
                                              float* out) {
  int r, c, nblk = k / 16, kc4 = (nblk + 3) / 4;
  for (r = 0; r < rows; ++r)
    for (c = 0; c < k; ++c) {
      float sff = nvfp4moe_ref_e4m3_to_f32(sf[nvfp4moe__sf_off_128x4(r, c / 16, kc4)]);
      out[(size_t)r * (size_t)k + (size_t)c] =
          nvfp4moe__mul(nvfp4moe_ref_e2m1_to_f32(nvfp4moe__weight_code(q, layout, (size_t)r, c, k)), sff);
    }
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_grouped_gemm_nt_masked(const nvfp4moe_gemm_args* a) {
  const char* fn = "nvfp4moe_ref_grouped_gemm_nt_masked";
  long long ldd = 0;
  nvfp4moe_result r = nvfp4moe__check_gemm(0, fn, a, 0, &ldd);
  float *ad, *bd;
  int g, m, n, kk;
  size_t sfa_g, sfb_g;
  if (r != NVFP4MOE_SUCCESS) return r;
  ad = (float*)malloc((size_t)a->k * sizeof(float));
  bd = (float*)malloc((size_t)a->n * (size_t)a->k * sizeof(float));
  if (!ad || !bd) {
    free(ad);
    free(bd);
    return nvfp4moe__fail_log(0, NVFP4MOE_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  }
  sfa_g = nvfp4moe_sf_bytes(a->m_max, a->k, NVFP4MOE_SF_LAYOUT_128X4);
  sfb_g = nvfp4moe_sf_bytes(a->n, a->k, NVFP4MOE_SF_LAYOUT_128X4);
  for (g = 0; g < a->groups; ++g) {
    int valid = nvfp4moe__ref_valid_rows(NVFP4MOE__HP(const int*, a->masked_m), g, a->m_max);
    double alpha = a->alpha ? NVFP4MOE__HP(const float*, a->alpha)[g] : 1.0;
    if (valid == 0) continue;
    nvfp4moe__ref_deq_rows(NVFP4MOE__HP(const unsigned char*, a->b) + (size_t)g * nvfp4moe_weight_bytes(a->n, a->k, a->b_layout),
                           (int)a->b_layout, NVFP4MOE__HP(const unsigned char*, a->b_sf) + (size_t)g * sfb_g, a->n, a->k,
                           bd);
    for (m = 0; m < valid; ++m) {
      size_t row = (size_t)g * (size_t)a->m_max + (size_t)m;
      const unsigned char* aq = NVFP4MOE__HP(const unsigned char*, a->a) + row * (size_t)(a->k / 2);
      const unsigned char* asf = NVFP4MOE__HP(const unsigned char*, a->a_sf) + (size_t)g * sfa_g;
      double scale = alpha * (a->row_scale ? NVFP4MOE__HP(const float*, a->row_scale)[row] : 1.0);
      int c, nblk = a->k / 16, kc4 = (nblk + 3) / 4;
      for (c = 0; c < a->k; ++c) {
        unsigned char byte = aq[c / 2];
        float sff = nvfp4moe_ref_e4m3_to_f32(asf[nvfp4moe__sf_off_128x4(m, c / 16, kc4)]);
        ad[c] = nvfp4moe__mul(nvfp4moe_ref_e2m1_to_f32((c & 1) ? byte >> 4 : byte & 15u), sff);
      }
      for (n = 0; n < a->n; ++n) {
        const float* brow = bd + (size_t)n * (size_t)a->k;
        double acc = 0.0;
        for (kk = 0; kk < a->k; ++kk) acc += (double)ad[kk] * (double)brow[kk];
        NVFP4MOE__HP(unsigned short*, a->d)[row * (size_t)ldd + (size_t)n] = nvfp4moe__f64_to_bf16(scale * acc);
      }
    }
  }
  free(ad);
  free(bd);
  return NVFP4MOE_SUCCESS;
}

NVFP4MOE__IMPL nvfp4moe_result nvfp4moe_ref_moe_forward(const nvfp4moe_moe_weights* w, const nvfp4moe_moe_args* args) {
  return nvfp4moe__moe_run(0, w, args, 0);
}

/* --------------------------------------------------------------------------------------
   SM100 encoders (PTX ISA: tcgen05 instruction descriptor, shared memory descriptor,
   tensor memory addressing)
   -------------------------------------------------------------------------------------- */

NVFP4MOE__IMPL unsigned nvfp4moe_sm100_idesc_mxf4nvf4(int m, int n) {
  unsigned d = 0;
  if (m != 128 || n < 8 || n > 256 || n % 8 != 0) return 0;
  d |= 1u << 7;                 /* bits 7-9   atype: E2M1 */
  d |= 1u << 10;                /* bits 10-11 btype: E2M1 */
  d |= (unsigned)(n >> 3) << 17;/* bits 17-22 N >> 3 */
  d |= 0u << 23;                /* bit 23     scale type: UE4M3 */
  d |= (unsigned)(m >> 7) << 27;/* bits 27-28 M >> 7 */
  return d;                     /* sparsity, negate, transpose (K-major), SF ids, K64: 0 */
}

NVFP4MOE__IMPL unsigned long long nvfp4moe_sm100_smem_desc(unsigned addr, unsigned lbo, unsigned sbo, int swizzle) {
  unsigned long long d = 0;
  d |= (unsigned long long)((addr & 0x3FFFFu) >> 4);         /* bits 0-13  start address >> 4 */
  d |= (unsigned long long)((lbo & 0x3FFFFu) >> 4) << 16;    /* bits 16-29 leading byte offset >> 4 */
  d |= (unsigned long long)((sbo & 0x3FFFFu) >> 4) << 32;    /* bits 32-45 stride byte offset >> 4 */
  d |= 1ull << 46;                                            /* bits 46-48 fixed 0b001 (SM100) */
  d |= (unsigned long long)(swizzle & 7) << 61;               /* bits 61-63 swizzle mode */
  return d;                                                   /* base offset 0, LBO mode relative */
}

NVFP4MOE__IMPL unsigned nvfp4moe_sm100_tmem_addr(int lane, int column) {
  return ((unsigned)lane << 16) | ((unsigned)column & 0xFFFFu);
}

#endif /* NVFP4MOE_IMPLEMENTATION */

/*
   MIT License

   Copyright (c) 2026 The nvfp4moe authors

   Permission is hereby granted, free of charge, to any person obtaining a copy of this
   software and associated documentation files (the "Software"), to deal in the Software
   without restriction, including without limitation the rights to use, copy, modify,
   merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
   permit persons to whom the Software is furnished to do so, subject to the following
   conditions:

   The above copyright notice and this permission notice shall be included in all copies
   or substantial portions of the Software.

   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
   INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
   PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT
   HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
   CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE
   OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
*/
