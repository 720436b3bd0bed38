#!/usr/bin/env bash
# The test suite: `make test` runs this. Every check prints PASS, FAIL or SKIP; the
# last line is "N passed, N failed, N skipped". GPU tests skip (visibly) without a GPU.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() { # count the PASS/FAIL/SKIP lines of $log
  pass=$((pass + $(grep -c '^PASS ' "$log")))
  fail=$((fail + $(grep -c '^FAIL ' "$log")))
  skip=$((skip + $(grep -c '^SKIP ' "$log")))
}
step() { # name, command...: run, echo, count; a crash without a FAIL line is a failure
  local name=$1 rc
  shift
  echo "== $name"
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  count
  if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$log"; then
    echo "FAIL $name: exited with status $rc"
    fail=$((fail + 1))
  fi
}
single() { # name, command...: one check whose exit status is the verdict
  local name=$1
  shift
  if out=$("$@" 2>&1); then echo "PASS $name"; pass=$((pass + 1))
  else echo "FAIL $name: $(echo "$out" | tail -5 | tr '\n' ' ')"; fail=$((fail + 1)); fi
}

echo "== embedded kernel source"
single embedded_source_matches_kernels_src python3 tools/embed_kernels.py --check
step "compile matrix" bash tests/compile_matrix.sh
echo "== build"
if make -s tests examples >"$log" 2>&1; then
  echo "PASS build"; pass=$((pass + 1))
else
  cat "$log"; echo "FAIL build"; fail=$((fail + 1))
  echo "$pass passed, $fail failed, $skip skipped"
  exit 1
fi
step "host numerics, layouts, argument checks" ./build/test_cpu
step "NVRTC compiles every kernel" ./build/test_nvrtc
step "wgmma register-race checker on hand-written SASS" python3 tests/test_check_wgmma_regs.py
step "sm_90a wgmma register races (SASS)" bash tests/check_sm90_sass.sh
step "SM100 encoders (PTX ISA, CUTLASS values)" ./build/test_sm100_encoders
step "SM100 layout model" ./build/test_sm100_model
step "disk cache" ./build/test_cache
step "numerics against ml_dtypes" python3 tests/test_numerics.py
step "quantizer against torchao" python3 tests/test_torchao.py
step "GPU" ./build/test_gpu
echo "== examples"
single example_moe_layer_runs ./build/moe_layer
single example_quantize_runs ./build/quantize_example 256 2048
single example_grouped_gemm_runs ./build/grouped_gemm_example
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
