// pipe_probe.cu -- throughput of the single instructions an in-register NVFP4 widening can be
// built from (LOP3, shifts, IMAD, PRMT, the e4m3x2 -> f16x2 convert F2FP, packed bf16/f16
// multiplies), alone and in pairs, in warp-instructions per clock per SM (at an assumed 1.98 GHz).
// A measurement tool for bench/NOTES.md, not part of the library: nvcc -arch=sm_90a -O3 tools/pipe_probe.cu -o build/pipe_probe
#include <cstdio>
#include <cuda_runtime.h>

#define CHAINS 8
#define ITERS 4096

// ASM_A on the even chains, ASM_B on the odd ones: the same instruction twice is its single rate;
// two instructions give about the sum of their single rates if they issue to different pipes,
// about one rate if they share one.
#define PROBE2(NAME, ASM_A, ASM_B)                                                         \
  __global__ void NAME(unsigned* out, unsigned seed, unsigned k1, unsigned k2) {           \
    unsigned v[CHAINS];                                                                    \
    for (int c = 0; c < CHAINS; ++c) v[c] = seed * (threadIdx.x + 1) + c * 0x9E3779B9u;    \
    for (int i = 0; i < ITERS; ++i) {                                                      \
      _Pragma("unroll") for (int c = 0; c < CHAINS; c += 2) {                              \
        asm volatile(ASM_A : "+r"(v[c]) : "r"(k1), "r"(k2));                              \
        asm volatile(ASM_B : "+r"(v[c + 1]) : "r"(k1), "r"(k2));                           \
      }                                                                                    \
    }                                                                                      \
    unsigned x = 0;                                                                        \
    for (int c = 0; c < CHAINS; ++c) x ^= v[c];                                            \
    if (x == 0x12345678u) out[threadIdx.x] = x;                                            \
  }
#define PROBE(NAME, ASM) PROBE2(NAME, ASM, ASM)

PROBE(p_lop3, "lop3.b32 %0, %0, %1, %2, 0xE8;")
PROBE(p_shf, "shf.l.wrap.b32 %0, %0, %0, %1;")
PROBE(p_imad, "mad.lo.u32 %0, %0, %1, %2;")
PROBE(p_prmt, "prmt.b32 %0, %0, %1, %2;")
PROBE(p_f2fp, "{.reg .b16 h; mov.b32 {h, _}, %0; cvt.rn.f16x2.e4m3x2 %0, h;}")
PROBE(p_hfma2_bf16, "fma.rn.bf16x2 %0, %0, %1, %2;")
PROBE(p_hmul2_f16, "mul.rn.f16x2 %0, %0, %1;")
PROBE(p_ffma, "{.reg .f32 f, g, h; mov.b32 f, %0; mov.b32 g, %1; mov.b32 h, %2; fma.rn.f32 f, f, g, h; mov.b32 %0, f;}")

#define LOP3 "lop3.b32 %0, %0, %1, %2, 0xE8;"
PROBE2(p_lop3_imad, LOP3, "mad.lo.u32 %0, %0, %1, %2;")
PROBE2(p_lop3_f2fp, LOP3, "{.reg .b16 h; mov.b32 {h, _}, %0; cvt.rn.f16x2.e4m3x2 %0, h;}")
PROBE2(p_lop3_prmt, LOP3, "prmt.b32 %0, %0, %1, %2;")
PROBE2(p_lop3_shf, LOP3, "shf.l.wrap.b32 %0, %0, %0, %1;")
PROBE2(p_imad_f2fp, "mad.lo.u32 %0, %0, %1, %2;", "{.reg .b16 h; mov.b32 {h, _}, %0; cvt.rn.f16x2.e4m3x2 %0, h;}")
PROBE2(p_lop3_bf16, LOP3, "fma.rn.bf16x2 %0, %0, %1, %2;")
PROBE2(p_imad_ffma, "mad.lo.u32 %0, %0, %1, %2;",
       "{.reg .f32 f, g, h; mov.b32 f, %0; mov.b32 g, %1; mov.b32 h, %2; fma.rn.f32 f, f, g, h; mov.b32 %0, f;}")

typedef void (*probe_fn)(unsigned*, unsigned, unsigned, unsigned);

int main() {
  const struct { const char* name; probe_fn fn; } probes[] = {
      {"lop3", p_lop3}, {"shf", p_shf}, {"imad", p_imad}, {"prmt", p_prmt}, {"cvt.f16x2.e4m3x2 (F2FP)", p_f2fp},
      {"fma.bf16x2", p_hfma2_bf16}, {"mul.f16x2", p_hmul2_f16}, {"fma.f32", p_ffma},
      {"lop3 | imad", p_lop3_imad}, {"lop3 | F2FP", p_lop3_f2fp}, {"lop3 | prmt", p_lop3_prmt}, {"lop3 | shf", p_lop3_shf},
      {"imad | F2FP", p_imad_f2fp}, {"lop3 | fma.bf16x2", p_lop3_bf16}, {"imad | fma.f32", p_imad_ffma}};
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  unsigned* out;
  cudaMalloc(&out, 1024 * sizeof(unsigned));
  const int threads = 512, blocks = sms * 4;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  printf("# %d SMs, %d blocks of %d threads, %d chains x %d iterations; clock for the rate: the SM clock\n", sms,
         blocks, threads, CHAINS, ITERS);
  for (const auto& p : probes) {
    p.fn<<<blocks, threads>>>(out, 1u, 0x3F803F80u, 0x80008000u); // warm-up
    cudaEventRecord(a);
    p.fn<<<blocks, threads>>>(out, 2u, 0x3F803F80u, 0x80008000u);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    double warp_instr = (double)blocks * threads / 32 * CHAINS * ITERS;
    double per_sm_per_ns = warp_instr / sms / (ms * 1e6);
    printf("%-26s %8.3f ms  %6.3f warp-instr/ns/SM  (%.2f per clock at 1.98 GHz)\n", p.name, ms, per_sm_per_ns,
           per_sm_per_ns / 1.98);
  }
  cudaError_t e = cudaGetLastError();
  printf("%s\n", e == cudaSuccess ? "ok" : cudaGetErrorString(e));
  return 0;
}
