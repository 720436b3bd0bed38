// ptx_tcgen05.cuh -- thin wrappers for the SM100 (sm_100a / sm_103a) instructions the
// native GEMM uses: mbarriers, TMA and bulk copies, and the tcgen05 family (TMEM
// allocation, SF copies into TMEM, block-scaled MMA, commit, TMEM loads, fences).
// Forms and operand orders follow the PTX ISA 9.0 (tcgen05 section); see
// ../shared/reference/sm100_tcgen05.md of the project for the sources.
#pragma once
#include "common.cuh"

NVF_DEV u32 nvf_smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }

// ---- mbarriers ------------------------------------------------------------------------
NVF_DEV void nvf_mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
NVF_DEV void nvf_fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
NVF_DEV void nvf_mbar_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
NVF_DEV void nvf_mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
NVF_DEV bool nvf_mbar_try_wait(u32 bar, u32 parity) {
  u32 ok;
  asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
               : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
  return ok != 0;
}
// Waits until the phase with the given parity has completed.
NVF_DEV void nvf_mbar_wait(u32 bar, u32 parity) {
  while (!nvf_mbar_try_wait(bar, parity)) {
  }
}

// ---- TMA (tensor) and bulk (1-D) copies into shared memory, completing on an mbarrier --
struct __align__(64) NvfTensorMap {
  u64 opaque[16]; // a CUtensorMap encoded on the host by cuTensorMapEncodeTiled
};
NVF_DEV void nvf_tma_load_3d(u32 dst, const NvfTensorMap* map, int c0, int c1, int c2, u32 bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
      ::"r"(dst), "l"((u64)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar) : "memory");
}
NVF_DEV void nvf_bulk_load(u32 dst, const void* src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
// The same with an L2 cache policy (createpolicy), e.g. evict_last for data read again soon.
NVF_DEV void nvf_bulk_load_hint(u32 dst, const void* src, u32 bytes, u32 bar, u64 policy) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar), "l"(policy) : "memory");
}
NVF_DEV u64 nvf_policy_evict_last() {
  u64 pol;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

// ---- tensor memory -------------------------------------------------------------------
// Whole warp: allocates `cols` columns (power of 2, >= 32), writes the base to smem `slot`.
NVF_DEV void nvf_tmem_alloc(u32 slot, u32 cols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot), "r"(cols) : "memory");
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
NVF_DEV void nvf_tmem_dealloc(u32 base, u32 cols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(base), "r"(cols) : "memory");
}
NVF_DEV void nvf_tc_fence_before() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }
NVF_DEV void nvf_tc_fence_after() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }

// Scale factors: one 512-byte 128x4 atom in shared memory (16 bytes per row-of-32 group)
// -> 4 TMEM columns of 32 lanes, replicated to all four lane quarters (.warpx4).
NVF_DEV void nvf_tmem_cp_sf(u32 taddr, u64 sdesc) {
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(sdesc) : "memory");
}

// D(tmem, f32) (+)= A(smem desc) * B(smem desc)^T, E2M1 x E2M1 with ue4m3 block-16 scales
// from TMEM; one thread issues it.
NVF_DEV void nvf_mma_mxf4nvf4(u32 d, u64 adesc, u64 bdesc, u32 idesc, u32 sfa, u32 sfb, u32 accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
      " tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%0], %1, %2, %3, [%5], [%6], p;\n}"
      ::"r"(d), "l"(adesc), "l"(bdesc), "r"(idesc), "r"(accumulate), "r"(sfa), "r"(sfb) : "memory");
}
// Arrives once on `bar` when every earlier tcgen05 operation of this thread is complete.
NVF_DEV void nvf_tc_commit(u32 bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar) : "memory");
}
// Warp-collective: thread t reads TMEM lane (lane base + t), 32 consecutive columns.
NVF_DEV void nvf_tmem_ld32(u32 taddr, u32* v) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7]), "=r"(v[8]),
        "=r"(v[9]), "=r"(v[10]), "=r"(v[11]), "=r"(v[12]), "=r"(v[13]), "=r"(v[14]), "=r"(v[15]), "=r"(v[16]),
        "=r"(v[17]), "=r"(v[18]), "=r"(v[19]), "=r"(v[20]), "=r"(v[21]), "=r"(v[22]), "=r"(v[23]), "=r"(v[24]),
        "=r"(v[25]), "=r"(v[26]), "=r"(v[27]), "=r"(v[28]), "=r"(v[29]), "=r"(v[30]), "=r"(v[31])
      : "r"(taddr) : "memory");
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}
