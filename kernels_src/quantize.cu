// quantize.cu -- NVFP4 quantization kernels: per-token and given-scale (per tensor /
// per expert), plain and masked, fused SiLU-and-mul + quantize, weight amax, SF layout
// conversion, dequantization. Bit-exact with the host reference (NUMERICS.md 2-3).
#include "common.cuh"

#define NVF_QT 256 // threads per CTA: 8 warps, one row per warp at a time
#define NVF_QNB 4  // 16-element blocks a lane keeps in registers (one read for K <= 2048)

struct NvfQuantParams {
  const void* x;          // input rows, bf16 or fp16; SiLU: [gate | up], 2k wide
  i64 x_row_stride;       // elements
  i64 x_group_stride;     // elements
  u8* q;                  // [G, rows, k/2] packed E2M1
  u8* sf;                 // 128x4: G * roundup(rows,128)*4*Kc4 bytes; linear: [G, rows, k/16]
  float* scale_out;       // per-token decode scales [G, rows]
  const float* scale_in;  // given decode scales [G] on the device, or null
  const float* gate_scale;// SiLU: optional f32 [G] multiplying the gate half
  const float* up_scale;  // SiLU: optional f32 [G] multiplying the up half
  const int* masked_m;    // [G] or null (all rows valid)
  float scale_value;      // given decode scale when scale_in is null
  int groups, rows, k;
  int sf_linear;          // 0: 128x4, 1: linear
  int per_token;          // 1: s = row_amax / 2688 per row; 0: given s
  int fo6;                // 4over6: 0 off, 1 MAE, 2 MSE
  int fp16;               // 1: input is fp16, 0: bf16
  int pad_rows;           // write zero SF rows up to roundup(rows,128) (plain 128x4)
};

// A block of 16 values is kept as 8 words of packed 16-bit floats (half the registers
// of f32): the input as loaded, or for SiLU the bf16 y itself (y is bf16 by contract).
NVF_DEV float nvf_half_to_f32(u32 w, int j, int fp16) {
  const u32 h = (w >> (16 * (j & 1))) & 0xFFFFu;
  return fp16 ? nvf_fp16_to_f32((u16)h) : nvf_bf16_to_f32(h);
}
NVF_DEV void nvf_unpack16(const u32* w, int fp16, float* v) {
  #pragma unroll
  for (int j = 0; j < 16; ++j) v[j] = nvf_half_to_f32(w[j >> 1], j, fp16);
}

// Block b of the row to quantize: the input itself, or bf16(silu(gate) * up).
template <bool SILU>
NVF_DEV void nvf_load_block(const NvfQuantParams& p, const u8* xrow, int b, float gs, float us, u32* w) {
  const uint4 a0 = *(const uint4*)(xrow + (i64)b * 32), a1 = *(const uint4*)(xrow + (i64)b * 32 + 16);
  w[0] = a0.x; w[1] = a0.y; w[2] = a0.z; w[3] = a0.w; w[4] = a1.x; w[5] = a1.y; w[6] = a1.z; w[7] = a1.w;
  if (SILU) {
    const u8* up = xrow + (i64)p.k * 2 + (i64)b * 32;
    const uint4 u0 = *(const uint4*)up, u1 = *(const uint4*)(up + 16);
    const u32 uw[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
    #pragma unroll
    for (int j = 0; j < 8; ++j) {
      u32 y = 0;
      #pragma unroll
      for (int h = 0; h < 2; ++h) {
        float g = nvf_half_to_f32(w[j], h, p.fp16), u = nvf_half_to_f32(uw[j], h, p.fp16);
        if (p.gate_scale) g = __fmul_rn(g, gs);
        if (p.up_scale) u = __fmul_rn(u, us);
        y |= nvf_f32_to_bf16(nvf_silu_mul(g, u)) << (16 * h);
      }
      w[j] = y;
    }
  }
}

NVF_DEV void nvf_block_amax(const u32* w, int fp16, u32& amax_bits, u32& bad) {
  #pragma unroll
  for (int j = 0; j < 16; ++j) {
    const u32 a = __float_as_uint(nvf_half_to_f32(w[j >> 1], j, fp16)) & 0x7FFFFFFFu;
    bad |= (u32)(a >= 0x7F800000u);
    amax_bits = a > amax_bits ? a : amax_bits;
  }
}

// One warp quantizes one row at a time (no block-wide barrier): lane l takes the blocks
// l, l + 32, ...; the first NVF_QNB of them stay in registers between the amax pass and
// the quantization pass, later ones are read again (from L2: the row was just read).
template <bool SILU>
NVF_DEV void nvf_quantize_rows(const NvfQuantParams& p) {
  const int lane = threadIdx.x & 31, nblk = p.k / 16, kc4 = (nblk + 3) / 4;
  const int sf_pad_cols = p.sf_linear ? nblk : kc4 * 4;
  const i64 sf_gbytes = p.sf_linear ? (i64)p.rows * nblk : nvf_sf_group_bytes_128x4(p.rows, p.k);
  const int rows_pad = p.pad_rows ? (p.rows + 127) / 128 * 128 : p.rows;
  const i64 total = (i64)p.groups * rows_pad;
  const i64 warps = (i64)gridDim.x * (NVF_QT / 32);

  for (i64 slot = (i64)blockIdx.x * (NVF_QT / 32) + (threadIdx.x >> 5); slot < total; slot += warps) {
    const int g = (int)(slot / rows_pad), r = (int)(slot % rows_pad);
    u8* sfg = p.sf + (i64)g * sf_gbytes;
    if (r >= p.rows) { // zero SF padding row of the 128x4 layout
      for (int c = lane; c < sf_pad_cols; c += 32) sfg[nvf_sf_offset_128x4(r, c, kc4)] = 0;
      continue;
    }
    if (r >= nvf_valid_rows(p.masked_m, g, p.rows)) continue; // neither read nor written
    const u8* xrow = (const u8*)p.x + ((i64)g * p.x_group_stride + (i64)r * p.x_row_stride) * 2;
    const float gs = p.gate_scale ? p.gate_scale[g] : 1.0f, us = p.up_scale ? p.up_scale[g] : 1.0f;
    const int vfp16 = SILU ? 0 : p.fp16; // dtype of the words kept

    // Pass 1: the first NVF_QNB blocks of this lane into registers; the row amax.
    u32 v[NVF_QNB][8];
    u32 amax_bits = 0, bad = 0;
    #pragma unroll
    for (int i = 0; i < NVF_QNB; ++i) {
      const int b = lane + 32 * i;
      if (b < nblk) {
        nvf_load_block<SILU>(p, xrow, b, gs, us, v[i]);
        if (p.per_token) nvf_block_amax(v[i], vfp16, amax_bits, bad);
      }
    }
    float s;
    int mode; // 0 quantize, 1 zero row, 2 faulted row (SF 0x7F, codes 0)
    if (p.per_token) {
      for (int b = lane + 32 * NVF_QNB; b < nblk; b += 64) { // two blocks in flight
        u32 t0[8], t1[8];
        nvf_load_block<SILU>(p, xrow, b, gs, us, t0);
        if (b + 32 < nblk) nvf_load_block<SILU>(p, xrow, b + 32, gs, us, t1);
        nvf_block_amax(t0, vfp16, amax_bits, bad);
        if (b + 32 < nblk) nvf_block_amax(t1, vfp16, amax_bits, bad);
      }
      #pragma unroll
      for (int o = 16; o > 0; o >>= 1) {
        const u32 m = __shfl_xor_sync(0xFFFFFFFFu, amax_bits, o);
        amax_bits = m > amax_bits ? m : amax_bits;
        bad |= __shfl_xor_sync(0xFFFFFFFFu, bad, o);
      }
      s = __fmul_rn(__uint_as_float(amax_bits), nvf_f32(NVF_RCP2688_BITS));
      if (bad) { s = nvf_f32(0x7FC00000u); mode = 2; }
      else if (s < NVF_FLT_MIN) { s = 0.0f; mode = 1; } // zero row, or the product underflowed
      else mode = 0;
      if (lane == 0) p.scale_out[(i64)g * p.rows + r] = s;
    } else {
      s = p.scale_in ? p.scale_in[g] : p.scale_value;
      if (s == 0.0f) mode = 1;
      else if (!(s >= NVF_FLT_MIN) || nvf_is_nonfinite(s)) mode = 2;
      else mode = 0;
    }
    const float t = mode == 0 ? __fmul_rn(__fdiv_rn(1.0f, s), nvf_f32(NVF_RCP6_BITS)) : 0.0f;

    // Pass 2: quantize and store.
    u8* qrow = p.q + ((i64)g * p.rows + r) * (p.k / 2);
    for (int i = 0, b = lane; b < nblk; ++i, b += 32) {
      u32 w[8];
      if (i < NVF_QNB) {
        #pragma unroll
        for (int ii = 0; ii < NVF_QNB; ++ii)
          if (ii == i) {
            #pragma unroll
            for (int j = 0; j < 8; ++j) w[j] = v[ii][j];
          }
      } else if (mode == 0) {
        nvf_load_block<SILU>(p, xrow, b, gs, us, w);
      }
      u32 q[2] = {0u, 0u}, sfb = mode == 2 ? 0x7Fu : 0u;
      if (mode == 0) {
        u32 ab = 0, bb = 0;
        nvf_block_amax(w, vfp16, ab, bb);
        if (bb) {
          sfb = 0x7Fu; // given scale: a non-finite block is faulted on its own
        } else {
          float x[16];
          nvf_unpack16(w, vfp16, x);
          sfb = nvf_quantize_block16(x, __uint_as_float(ab), s, t, p.fo6, q);
        }
      }
      *(uint2*)(qrow + (i64)b * 8) = make_uint2(q[0], q[1]);
      sfg[p.sf_linear ? (i64)r * nblk + b : nvf_sf_offset_128x4(r, b, kc4)] = (u8)sfb;
    }
    if (!p.sf_linear)
      for (int c = nblk + lane; c < sf_pad_cols; c += 32) sfg[nvf_sf_offset_128x4(r, c, kc4)] = 0;
  }
}

// Two specialisations of this file: -DNVF_SILU builds only the fused SiLU kernel (its
// exp and twice-wide loads make it the slow one to compile), the default the rest.
#if defined(NVF_SILU)
extern "C" __global__ void __launch_bounds__(NVF_QT) nvf_silu_mul_quantize(const NvfQuantParams p) {
  nvf_quantize_rows<true>(p);
}
#else
extern "C" __global__ void __launch_bounds__(NVF_QT) nvf_quantize(const NvfQuantParams p) {
  nvf_quantize_rows<false>(p);
}

// ---- weight quantization helpers ---------------------------------------------------
// Per-expert max |w| over finite values (a non-finite weight faults only its own
// block later), as f32 bits into amax[E] (zeroed by the host first).
extern "C" __global__ void nvf_weight_amax(const u8* w, int fp16, i64 elems_per_expert, int blocks_per_expert,
                                           u32* amax) {
  const int e = blockIdx.x / blocks_per_expert, bx = blockIdx.x % blocks_per_expert;
  const u8* base = w + (i64)e * elems_per_expert * 2;
  u32 m = 0;
  for (i64 i = ((i64)bx * blockDim.x + threadIdx.x) * 8; i < elems_per_expert;
       i += (i64)blocks_per_expert * blockDim.x * 8) {
    const uint4 a = *(const uint4*)(base + i * 2);
    const u32 ws[4] = {a.x, a.y, a.z, a.w};
    #pragma unroll
    for (int j = 0; j < 8; ++j) {
      const u32 h = (ws[j >> 1] >> (16 * (j & 1))) & 0xFFFFu;
      const u32 f = __float_as_uint(fp16 ? nvf_fp16_to_f32((u16)h) : nvf_bf16_to_f32(h)) & 0x7FFFFFFFu;
      if (f < 0x7F800000u && f > m) m = f;
    }
  }
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const u32 t = __shfl_xor_sync(0xFFFFFFFFu, m, o);
    m = t > m ? t : m;
  }
  if ((threadIdx.x & 31) == 0 && m) atomicMax(amax + e, m);
}

// In place: amax bits -> decode scale amax / 2688 (as ModelOpt's weight_scale_2); a
// scale that is 0 or underflows to a subnormal marks an all-zero expert (scale 0).
extern "C" __global__ void nvf_amax_to_scale(u32* amax_then_scale, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = __fdiv_rn(__uint_as_float(amax_then_scale[i]), 2688.0f);
  if (s < NVF_FLT_MIN) s = 0.0f;
  amax_then_scale[i] = __float_as_uint(s);
}

// out[i] = a[i] * b[i] (b null: a[i]); the expert layer's GEMM alphas.
extern "C" __global__ void nvf_scale_product(const float* a, const float* b, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = b ? __fmul_rn(a[i], b[i]) : a[i];
}

// ---- scale-factor layout conversion (every destination byte written, padding 0) -------
extern "C" __global__ void nvf_sf_convert(const u8* src, u8* dst, int groups, int rows, int k,
                                          int to_128x4) {
  const int nblk = k / 16, kc4 = (nblk + 3) / 4;
  const i64 lin = (i64)rows * nblk, sw = nvf_sf_group_bytes_128x4(rows, k);
  const i64 per_group = to_128x4 ? sw : lin;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < per_group * groups;
       i += (i64)gridDim.x * blockDim.x) {
    const i64 g = i / per_group, o = i % per_group;
    if (to_128x4) {
      // invert the 128x4 offset: o = rb*kc4*512 + cb*512 + r32*16 + r4*4 + c4
      const i64 rb = o / ((i64)kc4 * 512), rem = o % ((i64)kc4 * 512);
      const int cb = (int)(rem / 512), inner = (int)(rem % 512);
      const i64 r = rb * 128 + ((inner >> 2) & 3) * 32 + (inner >> 4);
      const int c = cb * 4 + (inner & 3);
      dst[g * sw + o] = (r < rows && c < nblk) ? src[g * lin + r * nblk + c] : (u8)0;
    } else {
      const i64 r = o / nblk;
      const int c = (int)(o % nblk);
      dst[g * lin + o] = src[g * sw + nvf_sf_offset_128x4(r, c, kc4)];
    }
  }
}

// ---- dequantization: x = (e2m1(q) * e4m3(sf)) * s, to f32 or bf16 ---------------------
struct NvfDequantParams {
  const u8* q; const u8* sf; const float* scale; const int* masked_m; void* out;
  int groups, rows, k, sf_linear, scale_per_row, out_bf16;
};
extern "C" __global__ void nvf_dequantize(const NvfDequantParams p) {
  const int nblk = p.k / 16, kc4 = (nblk + 3) / 4;
  const i64 sf_gbytes = p.sf_linear ? (i64)p.rows * nblk : nvf_sf_group_bytes_128x4(p.rows, p.k);
  const i64 total = (i64)p.groups * p.rows * nblk;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
    const int b = (int)(i % nblk);
    const i64 gr = i / nblk;
    const int g = (int)(gr / p.rows), r = (int)(gr % p.rows);
    if (r >= nvf_valid_rows(p.masked_m, g, p.rows)) continue;
    const float s = p.scale_per_row ? p.scale[gr] : p.scale[g];
    const u8 sfb = p.sf[(i64)g * sf_gbytes + (p.sf_linear ? (i64)r * nblk + b : nvf_sf_offset_128x4(r, b, kc4))];
    const float sff = nvf_e4m3_to_f32(sfb);
    const uint2 qq = *(const uint2*)(p.q + gr * (p.k / 2) + (i64)b * 8);
    float o[16];
    #pragma unroll
    for (int j = 0; j < 16; ++j) {
      const u32 c = ((j < 8 ? qq.x : qq.y) >> (4 * (j & 7))) & 0xFu;
      // a faulted block (SF 0x7F) is NaN with fixed bits, so every backend writes the same
      o[j] = sfb == 0x7F ? nvf_f32(0x7FC00000u) : __fmul_rn(__fmul_rn(nvf_e2m1_to_f32(c), sff), s);
    }
    const i64 base = gr * p.k + (i64)b * 16;
    if (p.out_bf16) {
      u32* d = (u32*)((u16*)p.out + base);
      #pragma unroll
      for (int j = 0; j < 8; ++j) d[j] = nvf_f32_to_bf16(o[2 * j]) | (nvf_f32_to_bf16(o[2 * j + 1]) << 16);
    } else {
      float* d = (float*)p.out + base;
      #pragma unroll
      for (int j = 0; j < 16; ++j) d[j] = o[j];
    }
  }
}
#endif // NVF_SILU
