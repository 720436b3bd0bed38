/* test_sm100_encoders.c -- unit tests of the pure SM100 host encoders
   (nvfp4moe_sm100_idesc_mxf4nvf4, nvfp4moe_sm100_smem_desc, nvfp4moe_sm100_tmem_addr), of the
   constants the host hands to the native kernel (nvfp4moe__gemm_sm100: p.idesc, p.desc_ab,
   p.desc_sf) and of the kernel's per-MMA address steps, against
     (a) numbers derived by hand from the PTX ISA bit tables (literals below, with the
         derivation written next to each), and
     (b) tests/data/cutlass_sm100_encodings.txt: values produced by CUTLASS's own encoders
         (read at run time; the tests run from the repository root, see tests/run.sh).
   Nothing here needs a GPU.

   Sources (quoted where each rule is used):
     [ISA-T40]  PTX ISA 9.7.16.4.1 "Shared Memory Descriptor", Table 40 (bits 0-13 start,
                16-29 LBO, 32-45 SBO, 46-48 fixed 0b001, 49-51 base offset, 52 LBO mode,
                53-60 zero, 61-63 swizzle: 0 none, 1 128B/32B-atom, 2 128B, 4 64B, 6 32B),
                matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4; Table 41 (128B pattern
                repeats at 1024-byte boundaries -> base offset 0).
     [ISA-T47]  PTX ISA, "Instruction descriptor format for .kind::mxf4 and .kind::mxf4nvf4"
                (Table 44 or 47 depending on the ISA revision): 0-1 reserved, 2 sparsity,
                3 reserved, 4-5 SFB id, 6 reserved, 7-9 atype (E2M1 = 1), 10-11 btype
                (E2M1 = 1), 12 reserved, 13/14 negate A/B, 15/16 transpose A/B (must be 0),
                17-22 N >> 3, 23 scale type (UE4M3 = 0, UE8M0 = 1), 24-26 reserved,
                27-28 M >> 7, 29-30 SFA id, 31 K (0 = dense K=64).
     [ISA-SF]   PTX ISA 9.7.16.10.7.2.3 / .3.3: scale_vec::4X -> "The SFA_ID / SFB_ID value
                must be 0".
     [ISA-LBO]  PTX ISA 9.7.16.3.1.1: K-major, swizzled layouts: LBO "not used, assumed to
                be 1" (= 16 bytes encoded as 1); 9.7.16.3.2: K-major SBO = "offset from the
                first 8 rows to the next 8 rows".
     [ISA-TM]   PTX ISA "Tensor Memory Addressing": address = lane in bits 16-31, column in
                bits 0-15.
     [C]        NVIDIA/cutlass @7107b05, cute/arch/mma_sm100_desc.hpp (InstrDescriptorBlockScaled,
                SmemDescriptor, make_umma_desc), cute/atom/mma_traits_sm100.hpp, the block-scaled
                SM100 collective; values in tests/data/cutlass_sm100_encodings.txt. */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "test_util.h"
#include <stddef.h>

#define CUTLASS_FILE "tests/data/cutlass_sm100_encodings.txt"

/* ---- the CUTLASS reference file -------------------------------------------------------- */

typedef struct {
  char name[160];
  unsigned long long v;
} enc_entry;

static enc_entry* g_ent;
static int g_nent, g_loaded, g_file_ok;

/* Lines "name = 0xHEX  # comment"; '#' lines are comments. */
static void load_cutlass_file(void) {
  FILE* f;
  static char line[16384];
  int cap = 0;
  if (g_loaded) return;
  g_loaded = 1;
  f = fopen(CUTLASS_FILE, "r");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    char *p = line, *q, *eq;
    size_t len = strlen(line);
    if (len && line[len - 1] != '\n' && !feof(f)) { /* overlong line: drop its rest */
      int ch;
      while ((ch = fgetc(f)) != EOF && ch != '\n') {
      }
    }
    while (*p == ' ' || *p == '\t') ++p;
    if (*p == '#' || *p == '\n' || *p == '\r' || *p == 0) continue;
    eq = strchr(p, '=');
    if (!eq) continue;
    q = eq;
    while (q > p && (q[-1] == ' ' || q[-1] == '\t')) --q;
    if (q == p || (size_t)(q - p) >= sizeof g_ent[0].name) continue;
    if (g_nent == cap) {
      enc_entry* n;
      cap = cap ? 2 * cap : 512;
      n = (enc_entry*)realloc(g_ent, (size_t)cap * sizeof *n);
      if (!n) break;
      g_ent = n;
    }
    memcpy(g_ent[g_nent].name, p, (size_t)(q - p));
    g_ent[g_nent].name[q - p] = 0;
    g_ent[g_nent].v = strtoull(eq + 1, 0, 16);
    ++g_nent;
  }
  fclose(f);
  g_file_ok = g_nent > 0;
}

static int cutlass_value(const char* name, unsigned long long* v) {
  int i;
  for (i = 0; i < g_nent; ++i)
    if (strcmp(g_ent[i].name, name) == 0) {
      *v = g_ent[i].v;
      return 1;
    }
  return 0;
}

/* sscanf that must consume the whole name */
#define FULL_MATCH(name, fmt, ...) (pos = -1, sscanf(name, fmt "%n", __VA_ARGS__, &pos) >= 0 && pos == (int)strlen(name))

enum { CAT_NONE, CAT_IDESC, CAT_IDESCE, CAT_SMEM_AB, CAT_SF_COPY, CAT_TMEM_ADDR, CAT_TMEM_OFFSET, CAT_TMEM_BASE, CAT_COUNT };
static const char* const cat_name[CAT_COUNT] = {"unmapped", "idesc", "idescE64", "A/B smem descriptors",
                                                "SF copy descriptors", "TMEM SF addresses", "TMEM per-MMA SF offsets",
                                                "TMEM SF base columns"};
/* how many values of each category the file held when these tests were written */
static const int cat_expected[CAT_COUNT] = {0, 32, 28, 156, 64, 11, 32, 6};

static unsigned long long enc_ab(unsigned addr) { return nvfp4moe_sm100_smem_desc(addr, 16, 1024, 2); }
static unsigned long long enc_sf(unsigned addr) { return nvfp4moe_sm100_smem_desc(addr, 16, 128, 0); }

/* Maps a CUTLASS value name to what our encoders give for the same configuration.
   Returns the category (CAT_NONE when the name is not understood). */
static int map_entry(const char* name, unsigned long long* expect) {
  int pos, m, n, r, c, s, j, mb, rep, sf;
  unsigned sfa, sfb, addr;
  char ab;
  /* [C] make_instr_desc_block_scaled / MMA_Traits::idesc_ (SF ids 0) */
  if (FULL_MATCH(name, "idesc_m%d_n%d", &m, &n)) {
    *expect = nvfp4moe_sm100_idesc_mxf4nvf4(m, n);
    return CAT_IDESC;
  }
  /* [C] make_runtime_instr_desc_block_scaled(tmem_sfa, tmem_sfb): SF ids = address bits 30-31,
     placed at [ISA-T47] bits 29-30 (A) and 4-5 (B). */
  if (FULL_MATCH(name, "idesc_m%d_n%d_rt_sfa%x_sfb%x", &m, &n, &sfa, &sfb)) {
    *expect = nvfp4moe_sm100_idesc_mxf4nvf4(m, n) | ((sfa >> 30) & 3u) << 29 | ((sfb >> 30) & 3u) << 4;
    return CAT_IDESC;
  }
  if (FULL_MATCH(name, "idescE64_m%d_n%d_rt_sfa%x_sfb%x", &m, &n, &sfa, &sfb)) {
    *expect = (unsigned long long)(nvfp4moe_sm100_idesc_mxf4nvf4(m, n) | ((sfa >> 30) & 3u) << 29 | ((sfb >> 30) & 3u) << 4)
              << 32;
    return CAT_IDESCE;
  }
  /* [C] make_umma_desc<K>(Layout_K_SW128_Atom<e2m1> tiled to r x c) at a given address;
     a (_k) fragment is the K=64 MMA k of the tile (+32 bytes each), an (_m) fragment the
     128-row MMA block m (+128 rows x 128 bytes). */
  if (FULL_MATCH(name, "smem_desc_a_%dx%d_sw128_addr%x", &r, &c, &addr)) {
    *expect = enc_ab(addr);
    return CAT_SMEM_AB;
  }
  if (FULL_MATCH(name, "smem_desc_a_%dx%d_sw128_k%d_addr%x", &r, &c, &j, &addr)) {
    *expect = enc_ab(addr + 32u * (unsigned)j);
    return CAT_SMEM_AB;
  }
  if (FULL_MATCH(name, "smem_desc_a_%dx%d_sw128_m%d_k%d_addr%x", &r, &c, &mb, &j, &addr)) {
    *expect = enc_ab(addr + (unsigned)mb * 128u * 128u + 32u * (unsigned)j);
    return CAT_SMEM_AB;
  }
  /* [C] collective: per stage an r x 256 E2M1 tile = r * 128 bytes (SmemLayoutA/B stage
     stride 32768 / N*256 4-bit elements), MMA k at +32 bytes */
  if (FULL_MATCH(name, "collective_n%d_smem_desc_%c_%dx%d_sw128_base%x_stage%d_k%d", &n, &ab, &r, &c, &addr, &s, &j) &&
      (ab == 'a' || ab == 'b') && c == 256) {
    *expect = enc_ab(addr + (unsigned)s * (unsigned)r * 128u + 32u * (unsigned)j);
    return CAT_SMEM_AB;
  }
  /* [C] get_utccp_smem_desc_tensor: one 512-byte 128x4 SF atom per copy, no swizzle, SBO 128 */
  if (FULL_MATCH(name, "sf_cp_desc_addr%x", &addr)) {
    *expect = enc_sf(addr);
    return CAT_SF_COPY;
  }
  if (FULL_MATCH(name, "sf_cp_desc_addr%x_atom%d", &addr, &j)) {
    *expect = enc_sf(addr + 512u * (unsigned)j);
    return CAT_SF_COPY;
  }
  /* SFA stage stride 2048 bytes; SFB 2048 (N <= 128) or 4096 (two 128-row atoms per k block) */
  if (FULL_MATCH(name, "collective_n%d_utccp_sf%c_desc_stage%d_i%d", &n, &ab, &s, &j) && (ab == 'a' || ab == 'b')) {
    unsigned stage_bytes = (ab == 'b' && n > 128) ? 4096u : 2048u;
    *expect = enc_sf((unsigned)s * stage_bytes + 512u * (unsigned)j);
    return CAT_SF_COPY;
  }
  /* [C] tmem_sf_frg: scale (row m, sf) -> lane m%32 + 32*rep, column m/32, byte sf; CUTLASS
     keeps the byte index in address bits 30-31 (cute::tmem_ptr), not an ISA field */
  if (FULL_MATCH(name, "tmem_sfa_addr_m%d_rep%d_sf%d", &m, &rep, &sf)) {
    *expect = (unsigned long long)(nvfp4moe_sm100_tmem_addr(m % 32 + 32 * rep, m / 32) | (unsigned)sf << 30);
    return CAT_TMEM_ADDR;
  }
  /* [C] per-MMA (k block) SF columns: 4 per 128 rows (4X: one 32-bit column holds the 4 SFs of
     one row for K=64) */
  if (FULL_MATCH(name, "collective_n%d_tmem_sf%c_offset_k%d", &n, &ab, &j) && (ab == 'a' || ab == 'b')) {
    int cols = ab == 'a' ? 4 : 4 * ((n + 127) / 128);
    *expect = nvfp4moe_sm100_tmem_addr(0, cols * j);
    return CAT_TMEM_OFFSET;
  }
  /* [C] set_tmem_offsets: SFA after 2 accumulator stages of N columns, SFB 16 columns later */
  if (FULL_MATCH(name, "collective_n%d_tmem_sf%c_base_col", &n, &ab) && (ab == 'a' || ab == 'b')) {
    *expect = nvfp4moe_sm100_tmem_addr(0, 2 * n + (ab == 'b' ? 16 : 0));
    return CAT_TMEM_BASE;
  }
  return CAT_NONE;
}

static void check_category(int cat) {
  int i, found = 0;
  load_cutlass_file();
  CHECK(g_file_ok, "cannot read %s (run from the repository root)", CUTLASS_FILE);
  for (i = 0; i < g_nent; ++i) {
    unsigned long long want;
    if (map_entry(g_ent[i].name, &want) != cat) continue;
    ++found;
    CHECK(want == g_ent[i].v, "%s: CUTLASS 0x%016llx, ours 0x%016llx", g_ent[i].name, g_ent[i].v, want);
  }
  CHECK(found >= cat_expected[cat], "only %d %s values found in %s, expected %d", found, cat_name[cat], CUTLASS_FILE,
        cat_expected[cat]);
}

/* ---- (a) hand derivations from the ISA tables ----------------------------------------------- */

static void test_idesc_from_isa_table(void) {
  /* [ISA-T47], M = 128, dense, K-major A and B, no negation, UE4M3 scales, SF ids 0, K = 64:
       atype E2M1 = 1 at bits 7-9   -> 1 << 7  = 0x00000080
       btype E2M1 = 1 at bits 10-11 -> 1 << 10 = 0x00000400
       scale type UE4M3 = 0 (bit 23), SFA/SFB ids 0, sparsity/negate/transpose/K bits 0
       M >> 7 = 1 at bits 27-28     -> 1 << 27 = 0x08000000
       N >> 3 at bits 17-22 -> N=64: 8 << 17 = 0x00100000, N=128: 16 << 17 = 0x00200000,
                               N=192: 24 << 17 = 0x00300000, N=256: 32 << 17 = 0x00400000 */
  static const struct { int n; unsigned want; } v[] = {
      {64, 0x08000000u | 0x00100000u | 0x400u | 0x80u},  /* 0x08100480 */
      {128, 0x08000000u | 0x00200000u | 0x400u | 0x80u}, /* 0x08200480 */
      {192, 0x08000000u | 0x00300000u | 0x400u | 0x80u}, /* 0x08300480 */
      {256, 0x08000000u | 0x00400000u | 0x400u | 0x80u}, /* 0x08400480 */
      {8, 0x08000000u | (1u << 17) | 0x400u | 0x80u},    /* 0x08020480: smallest N of the encoder's contract */
      {248, 0x08000000u | (31u << 17) | 0x400u | 0x80u}, /* 0x083E0480 */
  };
  size_t i;
  CHECK(v[0].want == 0x08100480u && v[1].want == 0x08200480u && v[2].want == 0x08300480u && v[3].want == 0x08400480u,
        "literal arithmetic");
  for (i = 0; i < sizeof v / sizeof v[0]; ++i) {
    unsigned d = nvfp4moe_sm100_idesc_mxf4nvf4(128, v[i].n);
    CHECK(d == v[i].want, "idesc(128, %d) = 0x%08x, want 0x%08x", v[i].n, d, v[i].want);
    /* field by field, decoded here from the table */
    CHECK((d & 3u) == 0 && (d >> 2 & 1u) == 0 && (d >> 3 & 1u) == 0, "bits 0-3 (reserved, dense) of N=%d", v[i].n);
    CHECK((d >> 4 & 3u) == 0, "SFB id must be 0 with scale_vec::4X [ISA-SF]");
    CHECK((d >> 6 & 1u) == 0 && (d >> 7 & 7u) == 1 && (d >> 10 & 3u) == 1 && (d >> 12 & 1u) == 0, "atype/btype E2M1 = 1");
    CHECK((d >> 13 & 3u) == 0 && (d >> 15 & 3u) == 0, "no negate, K-major (no transpose) for E2M1");
    CHECK((int)((d >> 17 & 63u) << 3) == v[i].n, "N field");
    CHECK((d >> 23 & 1u) == 0, "scale type UE4M3 = 0");
    CHECK((d >> 24 & 7u) == 0 && (d >> 27 & 3u) == 1, "M field: M >> 7 = 1");
    CHECK((d >> 29 & 3u) == 0 && (d >> 31) == 0, "SFA id 0, K = 64");
  }
}

static void test_idesc_invalid_shapes(void) {
  /* the encoder's contract: M = 128 only (block-scaled kinds have no M=64 with
     cta_group::1 in this library), N a multiple of 8 in [8, 256]; else 0 */
  static const int bad_m[] = {0, 64, 127, 129, 256, -128};
  static const int bad_n[] = {0, -8, 4, 12, 60, 130, 255, 257, 260, 264, 512};
  size_t i;
  for (i = 0; i < sizeof bad_m / sizeof bad_m[0]; ++i)
    CHECK(nvfp4moe_sm100_idesc_mxf4nvf4(bad_m[i], 128) == 0, "idesc(M=%d, 128) must be 0", bad_m[i]);
  for (i = 0; i < sizeof bad_n / sizeof bad_n[0]; ++i)
    CHECK(nvfp4moe_sm100_idesc_mxf4nvf4(128, bad_n[i]) == 0, "idesc(128, N=%d) must be 0", bad_n[i]);
  CHECK(nvfp4moe_sm100_idesc_mxf4nvf4(64, 64) == 0, "idesc(64, 64) must be 0");
}

static void test_smem_desc_from_isa_table(void) {
  /* [ISA-T40] A/B tile (K-major, 128-byte swizzle), LBO 16, SBO 1024:
       start 0 >> 4 = 0              (bits 0-13)
       LBO 16 >> 4 = 1 at bit 16     -> 0x0000000000010000
       SBO 1024 >> 4 = 64 at bit 32  -> 0x0000004000000000
       fixed 0b001 at bits 46-48     -> 0x0000400000000000
       base offset 0, LBO mode 0
       swizzle 2 (128B) at bit 61    -> 0x4000000000000000      sum 0x4000404000010000 */
  const unsigned long long ab0 = 0x4000000000000000ull | 0x0000400000000000ull | 0x0000004000000000ull | 0x10000ull;
  /* SF atom (tcgen05.cp source): no swizzle, LBO 16, SBO 128 (8 rows x 16 B):
       LBO 1 at bit 16 -> 0x10000; SBO 128 >> 4 = 8 at bit 32 -> 0x0000000800000000;
       fixed bit 46 -> 0x0000400000000000; swizzle 0         sum 0x0000400800010000 */
  const unsigned long long sf0 = 0x0000400000000000ull | 0x0000000800000000ull | 0x10000ull;
  unsigned long long d;
  CHECK(ab0 == 0x4000404000010000ull && sf0 == 0x0000400800010000ull, "literal arithmetic");
  CHECK(enc_ab(0) == ab0, "A/B desc at 0: 0x%016llx", enc_ab(0));
  CHECK(enc_ab(0x400) == (ab0 | 0x40), "A/B desc at 0x400 = start field 0x400 >> 4 = 0x40");
  CHECK(enc_ab(0x400 + 32) == (ab0 | 0x42), "A/B desc at 0x420: +32 bytes = +2 in the start field");
  CHECK(enc_ab(0x3FFF0) == (ab0 | 0x3FFF), "largest 18-bit address: start field 0x3FFF");
  CHECK(enc_ab(0x40400) == enc_ab(0x400), "matrix-descriptor-encode keeps address bits 4-17 only");
  CHECK(enc_ab(0x40F) == enc_ab(0x400), "the 4 least significant bits are dropped");
  CHECK(enc_sf(0) == sf0, "SF desc at 0: 0x%016llx", enc_sf(0));
  CHECK(enc_sf(0x800) == (sf0 | 0x80), "SF desc at 0x800: start field 0x80");
  CHECK(enc_sf(0x800 + 3 * 512) == (sf0 | 0xE0), "SF desc of atom 3 at 0x800: start 0xE00 >> 4 = 0xE0");
  /* other swizzle codes land in bits 61-63 unchanged: 4 (64B) -> 0x8000..., 6 (32B) -> 0xC000... */
  CHECK(nvfp4moe_sm100_smem_desc(0, 16, 1024, 4) == (ab0 & ~(7ull << 61)) + (4ull << 61), "64B swizzle code 4");
  CHECK(nvfp4moe_sm100_smem_desc(0, 16, 1024, 6) == (ab0 & ~(7ull << 61)) + (6ull << 61), "32B swizzle code 6");
  /* every field decoded back from the A/B descriptor at 0x1400 */
  d = enc_ab(0x1400);
  CHECK((d & 0x3FFFu) << 4 == 0x1400, "start address field");
  CHECK((d >> 14 & 3u) == 0 && (d >> 30 & 3u) == 0, "reserved bits 14-15, 30-31");
  CHECK(((d >> 16) & 0x3FFFu) << 4 == 16, "LBO = 16 ([ISA-LBO]: unused for swizzled K-major, assumed 1)");
  CHECK(((d >> 32) & 0x3FFFu) << 4 == 1024, "SBO = 1024 (8 rows x 128 bytes)");
  CHECK((d >> 46 & 7u) == 1, "bits 46-48 = 0b001");
  CHECK((d >> 49 & 7u) == 0, "base offset 0 (tile on a 1024-byte boundary, [ISA-T40] Table 41)");
  CHECK((d >> 52 & 1u) == 0 && (d >> 53 & 0xFFu) == 0, "LBO mode relative, bits 53-60 zero");
  CHECK((d >> 61) == 2, "swizzle 128B = 2");
}

static void test_tmem_addr(void) {
  /* [ISA-TM] lane << 16 | column */
  CHECK(nvfp4moe_sm100_tmem_addr(0, 0) == 0x00000000u, "(0,0)");
  CHECK(nvfp4moe_sm100_tmem_addr(0, 256) == 0x00000100u, "(0,256)");
  CHECK(nvfp4moe_sm100_tmem_addr(32, 0) == 0x00200000u, "(32,0): lane 32 = 0x20 << 16");
  CHECK(nvfp4moe_sm100_tmem_addr(96, 16) == 0x00600010u, "(96,16)");
  CHECK(nvfp4moe_sm100_tmem_addr(127, 511) == 0x007F01FFu, "(127,511)");
  CHECK(nvfp4moe_sm100_tmem_addr(5, 2) == 0x00050002u, "(5,2)");
}

/* ---- (b) against CUTLASS's numbers ------------------------------------------------------------ */

static void test_cutlass_file_idesc(void) { check_category(CAT_IDESC); }
static void test_cutlass_file_idesc64(void) { check_category(CAT_IDESCE); }
static void test_cutlass_file_ab_smem_desc(void) { check_category(CAT_SMEM_AB); }
static void test_cutlass_file_sf_copy_desc(void) { check_category(CAT_SF_COPY); }
static void test_cutlass_file_tmem_sf_layout(void) {
  check_category(CAT_TMEM_ADDR);
  check_category(CAT_TMEM_OFFSET);
  check_category(CAT_TMEM_BASE);
}

static void test_cutlass_file_complete(void) {
  int i, count[CAT_COUNT] = {0}, c;
  unsigned long long v = 0;
  load_cutlass_file();
  CHECK(g_file_ok, "cannot read %s (run from the repository root)", CUTLASS_FILE);
  for (i = 0; i < g_nent; ++i) {
    c = map_entry(g_ent[i].name, &v);
    ++count[c];
    CHECK(c != CAT_NONE, "value %s of the CUTLASS file is not mapped to an encoder", g_ent[i].name);
  }
  for (c = 1; c < CAT_COUNT; ++c)
    CHECK(count[c] >= cat_expected[c], "%d %s values, expected at least %d", count[c], cat_name[c], cat_expected[c]);
  CHECK(g_nent >= 329, "%d values in %s, expected 329", g_nent, CUTLASS_FILE);
  /* the headline values, by name */
  CHECK(cutlass_value("idesc_m128_n128", &v) && v == 0x08200480ull, "idesc_m128_n128");
  CHECK(cutlass_value("smem_desc_a_128x256_sw128_addr0", &v) && v == 0x4000404000010000ull, "smem_desc addr0");
  CHECK(cutlass_value("sf_cp_desc_addr0", &v) && v == 0x0000400800010000ull, "sf_cp_desc_addr0");
}

/* ---- the host's kernel parameters, captured through stubbed driver entry points -------------- */

static struct {
  int launches, encodes;
  nvfp4moe__sm100_params p;
  unsigned grid, block, smem;
} g_cap;

static nvfp4moe__CUresult stub_encode(void* map, int dt, unsigned rank, void* addr, const unsigned long long* dims,
                                      const unsigned long long* strides, const unsigned* box, const unsigned* estr,
                                      int il, int sw, int l2, int oob) {
  (void)dt; (void)rank; (void)addr; (void)dims; (void)strides; (void)box; (void)estr; (void)il; (void)sw; (void)l2;
  (void)oob;
  memset(map, 0, 128);
  ++g_cap.encodes;
  return 0;
}
static nvfp4moe__CUresult stub_set_attr(nvfp4moe__CUfunction f, int a, int v) {
  (void)f; (void)a; (void)v;
  return 0;
}
static nvfp4moe__CUresult stub_launch(nvfp4moe__CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                      unsigned by, unsigned bz, unsigned smem, void* stream, void** args, void** extra) {
  (void)f; (void)gy; (void)gz; (void)by; (void)bz; (void)stream; (void)extra;
  memcpy(&g_cap.p, args[0], sizeof g_cap.p);
  g_cap.grid = gx;
  g_cap.block = bx;
  g_cap.smem = smem;
  ++g_cap.launches;
  return 0;
}

/* Runs nvfp4moe__gemm_sm100 against a fake, already "loaded" context with the driver entry
   points it touches replaced by recorders; returns its result. */
static nvfp4moe_result capture_sm100_launch(void) {
  static nvfp4moe__mutex init_lock = NVFP4MOE__MUTEX_INIT;
  nvfp4moe_context* ctx = (nvfp4moe_context*)calloc(1, sizeof *ctx);
  nvfp4moe__driver_api saved = nvfp4moe__cu;
  nvfp4moe__gemm_params gp;
  static unsigned char buf[4096];
  static int masked[2] = {100, 7};
  nvfp4moe_result r;
  if (!ctx) return NVFP4MOE_ERROR_OUT_OF_MEMORY;
  ctx->sm_count = 148;
  ctx->modules[NVFP4MOE__SPEC_GEMM_SM100].lock = init_lock;
  ctx->modules[NVFP4MOE__SPEC_GEMM_SM100].state = 1;
  ctx->modules[NVFP4MOE__SPEC_GEMM_SM100].fn[0] = (nvfp4moe__CUfunction)buf;
  memset(&gp, 0, sizeof gp);
  gp.a = gp.a_sf = gp.b = gp.b_sf = gp.d = NVFP4MOE_HOSTPTR(buf);
  gp.masked_m = NVFP4MOE_HOSTPTR(masked);
  gp.groups = 2; gp.m_max = 100; gp.n = 136; gp.k = 288; gp.ldd = 136;
  memset(&g_cap, 0, sizeof g_cap);
  nvfp4moe__cu.cuTensorMapEncodeTiled = stub_encode;
  nvfp4moe__cu.cuFuncSetAttribute = stub_set_attr;
  nvfp4moe__cu.cuLaunchKernel = stub_launch;
  r = nvfp4moe__gemm_sm100(ctx, "test_sm100_encoders", &gp, 0);
  nvfp4moe__cu = saved;
  free(ctx);
  return r;
}

static void test_host_constants_vs_cutlass(void) {
  unsigned long long v = 0;
  load_cutlass_file();
  CHECK(g_file_ok, "cannot read %s", CUTLASS_FILE);
  CHECK(capture_sm100_launch() == NVFP4MOE_SUCCESS && g_cap.launches == 1 && g_cap.encodes == 2,
        "nvfp4moe__gemm_sm100 did not reach the (stubbed) launch");
  /* the struct the kernel reads: idesc / desc_ab / desc_sf at 328 / 336 / 344 of the 384-byte
     NvfSm100Params (two 128-byte maps, 6 pointers, ldd, 4 ints, idesc + pad0, two u64) */
  CHECK(offsetof(nvfp4moe__sm100_params, idesc) == 328 && offsetof(nvfp4moe__sm100_params, desc_ab) == 336 &&
            offsetof(nvfp4moe__sm100_params, desc_sf) == 344,
        "host mirror of NvfSm100Params has moved fields");
  CHECK(g_cap.p.idesc == 0x08200480u, "p.idesc = 0x%08x, hand-derived 0x08200480", g_cap.p.idesc);
  CHECK(cutlass_value("idesc_m128_n128", &v) && g_cap.p.idesc == v, "p.idesc vs CUTLASS idesc_m128_n128");
  CHECK(cutlass_value("idesc_m128_n128_rt_sfa0x00000000_sfb0x00000000", &v) && g_cap.p.idesc == v,
        "p.idesc vs CUTLASS runtime idesc (SF ids 0)");
  CHECK(cutlass_value("smem_desc_a_128x256_sw128_addr0", &v) && g_cap.p.desc_ab == v, "p.desc_ab = 0x%016llx",
        g_cap.p.desc_ab);
  CHECK(cutlass_value("collective_n128_smem_desc_b_128x256_sw128_base0_stage0_k0", &v) && g_cap.p.desc_ab == v,
        "p.desc_ab vs CUTLASS's B descriptor");
  CHECK(cutlass_value("sf_cp_desc_addr0", &v) && g_cap.p.desc_sf == v, "p.desc_sf = 0x%016llx", g_cap.p.desc_sf);
  CHECK(cutlass_value("collective_n128_utccp_sfb_desc_stage0_i0", &v) && g_cap.p.desc_sf == v,
        "p.desc_sf vs CUTLASS's SFB copy descriptor");
  /* the kernel ORs the start field in: it must be empty in the templates */
  CHECK((g_cap.p.desc_ab & 0xFFFFull) == 0x0000 && (g_cap.p.desc_sf & 0xFFFFull) == 0, "start fields of the templates");
  CHECK(g_cap.block == 192, "block %u, the kernel has 6 warps (NVF_THREADS 192)", g_cap.block);
}

/* ---- the kernel's per-MMA steps, read from the embedded kernel source ----------------------- */

static char* embedded_source(const char* file) {
  const nvfp4moe__source* s;
  for (s = nvfp4moe__sources; s->name; ++s)
    if (strcmp(s->name, file) == 0) {
      size_t n = 0, o = 0;
      const char* const* c;
      char* out;
      for (c = s->chunks; *c; ++c) n += strlen(*c);
      out = (char*)malloc(n + 1);
      if (!out) return 0;
      for (c = s->chunks; *c; ++c) {
        size_t l = strlen(*c);
        memcpy(out + o, *c, l);
        o += l;
      }
      out[o] = 0;
      return out;
    }
  return 0;
}

/* whitespace runs -> one space, leading and trailing whitespace dropped; in place */
static void squeeze(char* s) {
  char *o = s, *start = s;
  int sp = 0;
  for (; *s; ++s) {
    if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
      sp = 1;
      continue;
    }
    if (sp && o != start) *o++ = ' ';
    sp = 0;
    *o++ = *s;
  }
  *o = 0;
}

/* the integer right after `prefix` in the squeezed text, followed by `suffix`; -1 if absent */
static long number_after(const char* src, const char* prefix, const char* suffix) {
  char pre[256], suf[128], *end;
  const char *at, *sp;
  long v;
  snprintf(pre, sizeof pre, "%s", prefix);
  snprintf(suf, sizeof suf, "%s", suffix);
  squeeze(pre);
  squeeze(suf);
  at = src ? strstr(src, pre) : 0;
  if (!at) return -1;
  at += strlen(pre);
  v = strtol(at, &end, 10);
  if (end == at) return -1;
  for (sp = end; *sp == ' '; ++sp) {
  }
  return strncmp(sp, suf, strlen(suf)) == 0 ? v : -1;
}

static void test_kernel_steps_vs_cutlass(void) {
  char* src = embedded_source("gemm_sm100.cu");
  long kstep_a, kstep_b, sfa_step, sfb_step, cpa_step, cpb_step, sfb_off, bn, acc_mult, sf_stage_cols;
  unsigned long long v = 0, v0 = 0;
  int j;
  load_cutlass_file();
  CHECK(g_file_ok, "cannot read %s", CUTLASS_FILE);
  if (!g_cap.launches) capture_sm100_launch();
  CHECK(g_cap.launches == 1, "host launch not captured");
  CHECK(src != 0, "embedded gemm_sm100.cu not found");
  if (!src) return;
  squeeze(src);
  kstep_a = number_after(src, "const u32 a_lo = ((st & 0x3FFFFu) >> 4) + ", "u * j;");
  kstep_b = number_after(src, "const u32 b_lo = (((st + NVF_A_BYTES) & 0x3FFFFu) >> 4) + ", "u * j;");
  sfa_step = number_after(src, "nvf_mma_mxf4nvf4(d, p.desc_ab | a_lo, p.desc_ab | b_lo, p.idesc, sfa_t + ", "u * j,");
  sfb_step = number_after(strstr(src, "nvf_mma_mxf4nvf4(d, p.desc_ab"), "sfb_t + ", "u * j,");
  cpa_step = number_after(src, "nvf_tmem_cp_sf(sfa_t + ", "u * j, p.desc_sf | (u64)((sa & 0x3FFFFu) >> 4));");
  cpb_step = number_after(src, "nvf_tmem_cp_sf(sfb_t + ", "u * j, p.desc_sf | (u64)((sb & 0x3FFFFu) >> 4));");
  sfb_off = number_after(src, "const u32 sfa_t = tmem + NVF_SF_COL(stage), sfb_t = sfa_t + ", ";");
  bn = number_after(src, "#define NVF_BN ", "#endif");
  acc_mult = number_after(src, "#define NVF_ACC_COLS (", " * NVF_BN)");
  sf_stage_cols = number_after(src, "#define NVF_SF_COL(stage) (NVF_ACC_COLS + ", " * (stage))");
  CHECK(kstep_a == 2 && kstep_b == 2, "per-MMA K step of A/B = %ld/%ld start-field units, want 2 (32 bytes)", kstep_a,
        kstep_b);
  CHECK(cpa_step == sfa_step && cpb_step == sfb_step, "tcgen05.cp writes SFs at +%ld/+%ld columns, the MMA reads +%ld/+%ld",
        cpa_step, cpb_step, sfa_step, sfb_step);
  CHECK(bn == 128, "NVF_BN default %ld (this test maps the N=128 CUTLASS collective)", bn);
  /* K advance: CUTLASS's k-th K=64 fragment of a SW128 K-major E2M1 tile = k0 + 2k in the start field */
  for (j = 0; j < 4; ++j) {
    char name[128];
    snprintf(name, sizeof name, "collective_n128_smem_desc_a_128x256_sw128_base0_stage0_k%d", j);
    CHECK(cutlass_value(name, &v) && v == (g_cap.p.desc_ab | (unsigned long long)(0 + kstep_a * j)),
          "%s = 0x%016llx vs kernel desc_ab | (0 + %ld*%d)", name, v, kstep_a, j);
    snprintf(name, sizeof name, "collective_n128_smem_desc_b_128x256_sw128_base0x400_stage0_k%d", j);
    CHECK(cutlass_value(name, &v) && v == (g_cap.p.desc_ab | (unsigned long long)(0x40 + kstep_b * j)),
          "%s vs kernel desc_ab | (0x40 + %ld*%d)", name, kstep_b, j);
    CHECK(cutlass_value("collective_n128_smem_desc_a_128x256_sw128_base0_stage0_k0", &v0), "k0 value missing");
    snprintf(name, sizeof name, "collective_n128_smem_desc_a_128x256_sw128_base0_stage0_k%d", j);
    CHECK(cutlass_value(name, &v) && (long)(v & 0x3FFFu) - (long)(v0 & 0x3FFFu) == kstep_a * j, "%s: K step", name);
    /* SF columns per MMA at N = 128 */
    snprintf(name, sizeof name, "collective_n128_tmem_sfa_offset_k%d", j);
    CHECK(cutlass_value(name, &v) && (long)v == sfa_step * j, "%s = %llu vs kernel sfa_t + %ld*%d", name, v, sfa_step, j);
    snprintf(name, sizeof name, "collective_n128_tmem_sfb_offset_k%d", j);
    CHECK(cutlass_value(name, &v) && (long)v == sfb_step * j, "%s = %llu vs kernel sfb_t + %ld*%d", name, v, sfb_step, j);
    /* the SF copy of atom j: kernel desc_sf | ((base + 512 j) >> 4) vs CUTLASS's sf_cp_desc */
    if (j) snprintf(name, sizeof name, "sf_cp_desc_addr0_atom%d", j);
    else snprintf(name, sizeof name, "sf_cp_desc_addr0");
    CHECK(cutlass_value(name, &v) && v == (g_cap.p.desc_sf | (unsigned long long)((512u * (unsigned)j & 0x3FFFFu) >> 4)),
          "%s vs kernel desc_sf | (512*%d >> 4)", name, j);
    if (j) snprintf(name, sizeof name, "sf_cp_desc_addr0x800_atom%d", j);
    else snprintf(name, sizeof name, "sf_cp_desc_addr0x800");
    CHECK(cutlass_value(name, &v) &&
              v == (g_cap.p.desc_sf | (unsigned long long)(((0x800u + 512u * (unsigned)j) & 0x3FFFFu) >> 4)),
          "%s vs kernel desc_sf | ((0x800 + 512*%d) >> 4)", name, j);
  }
  /* SFB columns follow the 16 SFA columns (4 MMAs x 4), as CUTLASS's set_tmem_offsets */
  CHECK(cutlass_value("collective_n128_tmem_sfa_base_col", &v) && cutlass_value("collective_n128_tmem_sfb_base_col", &v0) &&
            (long)(v0 - v) == sfb_off,
        "SFB - SFA base columns: CUTLASS %llu, kernel %ld", v0 - v, sfb_off);
  CHECK(sfb_off == 4 * sfa_step, "SFA region of a stage = 4 MMAs x %ld columns", sfa_step);
  /* stage 0's SF columns sit after the two accumulators, like CUTLASS's plan at N = 128 */
  CHECK(cutlass_value("collective_n128_tmem_sfa_base_col", &v) && (long)v == acc_mult * bn,
        "SFA base column: CUTLASS %llu, kernel NVF_SF_COL(0) = %ld", v, acc_mult * bn);
  CHECK(sf_stage_cols == 2 * sfb_off && acc_mult * bn + 5 * sf_stage_cols <= 512,
        "per-stage SF slot of %ld columns (SFA 16 + SFB 16), 5 stages within 512 columns", sf_stage_cols);
  free(src);
}

int main(void) {
  RUN(test_idesc_from_isa_table);
  RUN(test_idesc_invalid_shapes);
  RUN(test_smem_desc_from_isa_table);
  RUN(test_tmem_addr);
  RUN(test_cutlass_file_idesc);
  RUN(test_cutlass_file_idesc64);
  RUN(test_cutlass_file_ab_smem_desc);
  RUN(test_cutlass_file_sf_copy_desc);
  RUN(test_cutlass_file_tmem_sf_layout);
  RUN(test_cutlass_file_complete);
  RUN(test_host_constants_vs_cutlass);
  RUN(test_kernel_steps_vs_cutlass);
  free(g_ent);
  return tu_total_fail ? 1 : 0;
}
