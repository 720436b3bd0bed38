// scheduler.cuh -- persistent masked tile scheduler shared by the GEMM kernels.
//
// Maps a CTA's increasing linear tile index to (group, m-tile, n-tile). Groups are
// walked in order; group g holds ceil(valid_m[g] / BM) * n_tiles tiles, valid_m read on
// the device (never on the host), so a captured CUDA graph replays with new counts
// (FlashInfer MaskedScheduler, DeepGEMM masked scheduler).
#pragma once
#include "common.cuh"

struct NvfTile {
  int g, m_tile, n_tile, valid_m;
};

struct NvfMaskedScheduler {
  const int* masked_m;
  int groups, m_max, bm, n_tiles;
  int g, g_valid;
  i64 base, g_tiles;

  NVF_DEV void init(const int* mm, int groups_, int m_max_, int bm_, int n_tiles_) {
    masked_m = mm; groups = groups_; m_max = m_max_; bm = bm_; n_tiles = n_tiles_;
    g = 0; base = 0;
    load_group();
  }
  NVF_DEV void load_group() {
    g_valid = nvf_valid_rows(masked_m, g, m_max);
    g_tiles = (i64)((g_valid + bm - 1) / bm) * n_tiles;
  }
  // Tile t (t never decreases between calls); false once t is past the last group.
  NVF_DEV bool get(i64 t, NvfTile& tile) {
    while (t >= base + g_tiles) {
      base += g_tiles;
      if (++g >= groups) return false;
      load_group();
    }
    const i64 local = t - base;
    tile.g = g;
    tile.m_tile = (int)(local / n_tiles);
    tile.n_tile = (int)(local % n_tiles);
    tile.valid_m = g_valid;
    return true;
  }
};
