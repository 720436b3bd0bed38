#!/usr/bin/env bash
# The sm_90a wgmma GEMM kernels, as NVRTC builds them, have no register race with their
# asynchronous wgmma (tools/check_wgmma_regs.py). Needs cuobjdump and nvdisasm: on PATH, or
# from the nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels (.ci/run installs them);
# SKIP without them. No GPU needed.
set -u
cd "$(dirname "$0")/.."
wheel_bin=$(python3 -c "import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], 'cu13/bin'))" 2>/dev/null)
[ -n "$wheel_bin" ] && export PATH="$PATH:$wheel_bin"
obj=$(command -v cuobjdump)
if [ -z "$obj" ] || ! command -v nvdisasm > /dev/null; then
  echo "SKIP sm90_wgmma_register_races: no cuobjdump/nvdisasm (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)"; exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if ! ./build/nvfp4moe_precompile sm_90a --cache-dir "$dir/cache" --only gemm_sm90 > "$dir/precompile.log" 2>&1; then
  echo "FAIL sm90_wgmma_register_races: precompile for sm_90a failed: $(tail -3 "$dir/precompile.log" | tr '\n' ' ')"; exit 1
fi
n=0
for f in "$dir"/cache/*.cubin; do
  tail -c +97 "$f" > "$dir/k.cubin" # the cache's 96-byte header
  "$obj" -sass "$dir/k.cubin" > "$dir/k.sass" 2>&1 || { echo "FAIL sm90_wgmma_register_races: cuobjdump failed on $f"; exit 1; }
  grep -q HGMMA "$dir/k.sass" || continue
  n=$((n + 1))
  if ! out=$(python3 tools/check_wgmma_regs.py "$dir/k.sass"); then
    echo "FAIL sm90_wgmma_register_races: $(echo "$out" | head -4 | tr '\n' ' ')"; exit 1
  fi
  echo "$out" | sed "s|$dir/k.sass: ||; s|^|# |"
done
if [ "$n" -lt 46 ]; then echo "FAIL sm90_wgmma_register_races: $n wgmma modules found, expected 46 (the gemm_sm90_* specialisations, their _tiled twins, the _k256_tiled ones and the two _k256_res_tiled)"; exit 1; fi
echo "PASS sm90_wgmma_register_races ($n wgmma modules and their kernels, row-major, _tiled and _k256_tiled twins; 0 races)"
