#!/usr/bin/env bash
# One call on the GPU machine (the `device` tool of this workplace). A: the whole test
# suite plus compute-sanitizer; B: the GPU tests, the torchao check and the benchmark;
# C: JIT timings, SM100 disassembly, the main job; D: GPU tests, quantization benchmark and
# the swap-AB tuning sweep (tools/bench.py --tune); E: GPU tests, torchao check, sanitizers on
# the quantizer and the layer, the full benchmark (one call of under 10 minutes); W: GPU tests
# and the forced GEMM tile configurations $CONFIGS at token counts $MS; S: GPU tests, memcheck
# on the GEMM tests, the wgmma pipeline-depth sweep (NVF_WDEPTH 2-4) at 64, 128 and 512 tokens;
# F: GPU tests, the wgmma register-race check on the sm_90a cubins, the full benchmark,
# memcheck on the GEMM tests; V: GPU tests, the register-race check, memcheck on the GEMM tests and the
# two forced-configuration sweeps of the fourth session (wg3 at 64-512 tokens, wg4 at 8-32); X: GPU tests, the
# register-race check, the 33-64-token tile sweep with the expert layers, the quantizer's E2M1-cap A/B; Y: GPU tests,
# sanitizers on the quantizer, the staged-quantizer A/B (NVF_QSTAGE 0/1, twice), the expert layers; Z: F with a longer
# memcheck (every GEMM configuration) and Nsight Compute on the quantizer; Q: GPU tests, the decode-team A/B of the
# quantizer (NVF_QFILL 0/1, twice; that switch is gone), the wgmma chunk (NVF_WKC, run as NVF_KC) and depth (NVF_WDEPTH) sweeps.
# Fifth session: P: Nsight Compute source counters and stall breakdown of the quantizer under each
# define in $VARIANTS; R: quantizer variants $VARIANTS (full quantizer tests under each: about two
# minutes a variant) and their A/B; G: quick quantizer tests, the swap-AB configurations under each
# $VARIANTS define, their GEMM A/B at $MS tokens (the NVF_QOPT and NVF_SWR switches they ran are gone);
# H: the quick GPU suite and both sanitizers on the quick quantizer tests; I: the full benchmark;
# J: the quick GPU suite and the A/Bs of the E2M1 widening and the quantizer's per-block branches
# (the NVF_OLDCONV and NVF_QSLOWSETUP switches it compared against are gone: it now times identical builds);
# K: the quick GPU suite, then I.
# Sixth session: T: quick quantizer and SiLU tests under each define in $QVARS, memcheck and racecheck
# on the quick quantizer tests under $SVARS, the full quantizer tests if $FULLQ, then one quantizer A/B
# of $VARIANTS (it ran NVF_QREREAD=1, NVF_QLEAN=1/2 and NVF_QTUNE=9, switches that are gone: the first
# became the staged kernels, the last the SiLU default; NVF_QSTAGE=0/3 and NVF_QSILU2=1 remain);
# U: the quick GPU suite, the full SiLU tests with memcheck, the full benchmark, the SiLU A/B with the
# layers; V2: quick quantizer tests, racecheck, the full benchmark, the staging A/B.
# (Since the seventh session the wgmma depth must divide the steps per chunk: the depths 3 in S
# and Q, and 4 for the 128-token tile in S, no longer build.)
# Seventh session: S7: the quick GPU suite, Nsight Compute on the wgmma GEMM, a sweep of
# forced configurations with tuning defines ($PAIRS, CONFIG@DEFINE) with the layers.
# Eighth session: A8: an A/B of the defines $DEFS at $MS tokens with the layers (it ran the
# timing-only NVF_WTILED, now the _tiled twins' define); L8: the quick GPU suite, memcheck on the
# TILED GEMM and relayout tests, the register-race check, then (BENCH=0 stops before) B8: the full benchmark.
# Ninth session: Q9: the quantizer's tests in full, the layer tests, the torchao check, memcheck on the
# quick quantizer tests, an A/B of the defines $DEFS on the quantizer. N9: the quick GPU suite, the quantizer's
# tests in full, memcheck on the quick quantizer tests, A/Bs of run-time switches $ENVS (quantizer and layers)
# and of defines $DEFS (quantizer). F9: the full benchmark, then an A/B of $ENVS on the layers.
# Tenth session: R10: quick GEMM and layer tests under the weight-ring defines, quick quantizer tests
# under NVF_QSTAGE=7, A/Bs of $GDEFS (32 tokens, layers) and $QDEFS (quantizer), memcheck on the ring.
# H10: quick quantizer tests under NVF_QHINT=3, the A/B of $QDEFS, Nsight Compute on the quantizer (P).
# S10: the A/B of $QDEFS, the quantizer's tests in full, the layer tests, memcheck on the quick quantizer tests.
# Z10: the A/B of $QDEFS, then the quick GPU suite. (Of the defines these modes ran, only the probes
# NVF_QPROBE=1/2/3 remain in the kernels; the others are in commits 79ee2c0 and f42c0ed, and in bench/NOTES.md.)
# Eleventh session: P11: the quantizer's many-rows tests (the pair teams), the A/B of $QDEFS on the quantizer,
# the quantizer's tests in full, the layer tests, memcheck and racecheck on the many-rows tests, Nsight
# Compute (memory tables and L2/DRAM counters) on the [16384, 7168] quantizer with pairs and with NVF_QPAIR=0
# (that define and NVF_QBASE are only in commit 0ae63cb: today P11's ncu arms time two identical builds).
# G11: the quick GPU suite, then Nsight Compute (pipe utilisation, tensor pipe, stalls) on the DeepSeek-V3
# GEMM1 and GEMM2 at 32 tokens per expert (tools/profile_kernels).
# R11: the A/B of $QDEFS on the quantizer (store and stream probes), and PyTorch's read-only rate on the same input
# (amax of [16384, 7168] bf16) next to its copy rate.
# Twelfth session: T12: (TESTS=1) the quick GPU suite and the layer tests, (GAB=1) the A/B of $GDEFS on the
# GEMMs at $MS tokens with the layers, (QAB=1) the A/B of $QDEFS on the quantizer, (MC=1) memcheck on the
# quick GEMM tests; each part on unless set to 0; (QMC=1, off unless set) memcheck and racecheck on the quick
# quantizer tests.
# Thirteenth session: T13: the kernels of every define in $PDEFS compiled in parallel into the cache,
# the quick GEMM tests (TEST_CONFIGS=${TCONF:-gemm_sm90}, plus the default-tile GEMM tests) under each of
# $PDEFS at once, then (GAB=1) the A/B of $GDEFS on the GEMMs at $MS tokens with the layers, (MC=1) memcheck
# on the quick GEMM tests under $MCDEF, (FULL=1, off unless set) the quick GPU suite and the layer tests.
# (It ran NVF_WSPLIT, NVF_WCLUSTER and NVF_WPF, which are only in commit 297d481: here they build the default.)
# Fourteenth session: T14: (PC=1) the kernels of every define in $PDEFS compiled in parallel into the cache, the
# quick quantizer tests under each at once (and, FULLQ=1, every quantizer test in full under $FQDEF), the
# A/B of $QDEFS on the quantizer, memcheck on the quick quantizer tests under $MCDEF (MC=1). (It ran NVF_QWIDE,
# only in commit a06bd4b; T13 ran NVF_SWCP, NVF_SWCP2 and NVF_WSTEPMAJOR this session, only in ac3a410,
# bd16654/d68a14e and 9df9a86: here all of them build the default.)
# G14: Nsight Compute on the DeepSeek-V3 GEMM1 at $GMS tokens per expert (default 32 128 512): the speed-of-light,
# memory-workload and warp-state sections, then a second pass with the pipe and shared-memory counters
# (a wrong metric name fails only that pass).
# S14: Nsight Compute source counters (stall reasons per SASS line) of the same GEMM at $GMS tokens, as CSV.
# Fifteenth session: W15: the quick GEMM tests of the configurations matching $TCONF (default gemm_sm90_ws, the
# warp-specialised wgmma kernel), (MC=1) memcheck on them, (CONFIGS set) the forced configurations $CONFIGS timed at
# $MS tokens (default 128,512) on ${ONLY:-gemm}, (CONFIGS2 set) a second set at $MS2 on $ONLY2, (GDEFS set) the A/B of $GDEFS as gemm_ab.
# W15B: the token-producer kernels' GEMM tests, their A/Bs at 32 (with the layers) and 64 tokens, the quick suite, the
# layer tests, memcheck on their GEMM tests (each step under its own timeout, so a hang cannot take the call).
# Sixteenth session: V16: the instruction-throughput probe (tools/pipe_probe.cu), the quick GPU suite and the layer
# tests, memcheck and racecheck on the token-producer GEMM tests (each step under its own timeout).
# F16: the swap-AB GEMM tests (the few-token path), then if they pass the quick GPU suite, the layer tests, the A/B
# of $GDEFS (default: the few-token path off / on, twice) at $MS tokens (default 1,2,8), memcheck on the swap-AB GEMM tests.
# (NVF_FEW is only in commit 604b58c: here both arms build the default.)
# B16: the GEMM tests of every tile configuration (quick), then the full benchmark (as I).
# T16: the whole GPU suite, not quick ($TT s at most).
# Seventeenth session: W15 with TCONF=gemm_sm90_ws_t256 MC=1 CONFIGS=<t128_wg3,t256_wg2 twice> MS=256,512 (the
# 256-token tile's tests, memcheck and A/B); P17: the token-producer tiles under the timing probes NVF_WSPROBE
# 0-3 (gemm_wgmma_ws.cu): the 128- and 256-token tiles at 128 and 512 tokens, the 48-token tile at 32.
# W15 with TCONF=gemm_sm90_ws_t32 MC=1 CONFIGS=<ws_t48_wg4,ws_t32_wg4,swapab_t32 twice> MS=16,32 ONLY=gemm,layer
# (the 32-token tile's tests, memcheck, A/B); R17: the quick GEMM and layer tests under the new heuristic, racecheck
# on the 32-token tile's GEMM tests, an A/B of swap-AB t16 and the 32-token tile at 8 and 16 tokens; then B16.
# Eighteenth session: X18: the quick GEMM tests (each case of a token-producer tile again with the token pre-pass's
# workspace), the A/B of the pre-pass off / on twice (NVFP4MOE_TOKEN_PREPASS) at $MS tokens on the default tiles,
# then memcheck and racecheck on the token-producer tiles' GEMM tests (each step under its own timeout).
# Nineteenth session: X19: the quick GPU suite and the layer tests (the layer now passes its GEMMs the token
# workspace), memcheck on the quick layer tests, the A/B of the pre-pass off / on twice on the layers.
# N19: Nsight Compute durations and DRAM / L2 bytes of the token pre-pass kernel and the GEMM at $SHAPES
# (name:groups:N:K:tokens), with the GEMM workspace and without.
# Twentieth session: X20: the quick GEMM tests (the swap-AB tiles also on 5 CTAs, many units each), the A/B of the
# swap-AB tiles' resident grid off / on twice (NVFP4MOE_SWAPAB_PERSIST; or the contexts $ABENVS) at $MS tokens, memcheck and racecheck on the
# swap-AB tiles' GEMM tests. (NVFP4MOE_SWAPAB_PERSIST, NVF_SWOLD and NVF_SWSTRIDE are only in commit 9da6030, not kept:
# here every arm builds the default.)
# Twenty-first session: X21: the quick GPU suite (with the layer's widened-token tests), memcheck and racecheck on the
# quick layer tests, the A/B of the layer's quantizers widening the GEMMs' tokens off / on three times
# (NVFP4MOE_LAYER_WIDEN) on the layers. X21P: the swap-AB token-staging probes (NVF_SWPROBE=2: no staging, =3: nor
# the chunk barriers; timing only) against the default, twice, at $MS tokens. X21S: the quick GEMM tests, then the A/B
# of the swap-AB raw-token prefetch off / on (-DNVF_SWPF=0/1), twice, at $MS tokens (the switch is only in eb0cd48,
# not kept: here both arms build the default).
# Twenty-second session: X22: the quick GEMM and layer tests, memcheck and racecheck on the swap-AB tiles' GEMM tests
# (their token rows from the workspace). X22A: the A/B of the token pre-passes off / on three times
# (NVFP4MOE_TOKEN_PREPASS; or the contexts $ABENVS) at $MS tokens on the GEMMs. X23 (not yet run): the same A/B with
# each arm in its own process, three times, GEMMs and layers.
# Twenty-sixth session: T26: the whole GPU suite, then memcheck on the token-producer tiles' quick every-tile tests.
# X29: the layers under the resident-grid and PDL variants (-DNVF_PERSIST=0/1/2, NVFP4MOE_PDL=0; =2, no early trigger,
# only in commit 4833df5: here it builds =1), then Nsight source
# counters of Qwen3 GEMM2 at 32 tokens. X30: the resident 32-token tiles' weights through cp.async stages (NVF_WCP,
# only in commit 37656c7: here both arms build the default). X31: probes 0/1/5 at 32 tokens, every tile resident at
# Poisson(33). X32: ping-pong consumer pairs (NVF_PINGPONG, only in commit 8a48148: here both arms build the default).
# X33: Nsight source counters of probe 1 and pipe counters of probe 1 and the kernel (Qwen3 GEMM1, 32 tokens).
# X34: probe 6's timeline (tools/ws_trace.py; as first written, thread 0 of each warpgroup) on three GEMMs at 32 tokens, and
# what the probe costs. X35: probe 6 per warp (as now) on two of them. X36: fewer instructions a step (NVF_DESC_OLD,
# NVF_WFAST A/Bs). X37: TILED weights' codes re-encoded (NVF_WENC A/B).
# Everything lands in $OUT (or ./device_out).
#   bash bench/device_run.sh A|B|C
set -u
OUT=${OUT:-device_out}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
make -s all 2>&1 | grep -E "error|warning" | tee "$OUT/build.txt"
# the GPU tests (summary lines and the PASS count), and memcheck on the GEMM tests ($1 s at most)
# the summary of a test log: LABEL LOG RC [lines of failures to show]
summ() {
  echo "$1 rc $3: $(grep -c ^PASS "$2") PASS $(grep -c ^FAIL "$2") FAIL"; grep -E "^FAIL|^#   " "$2" | head -"${4:-8}"
}
gpu_tests() {
  ./build/test_gpu 2>&1 | tee "$OUT/test_gpu.log" | grep -E "^FAIL|^#   |skipped|passed" | head -30; grep -c "^PASS" "$OUT/test_gpu.log"
}
memcheck_gemm() {
  TEST_QUICK=1 TEST_ONLY=gemm timeout "$1" compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.gemm.log" 2>&1
  echo "memcheck gemm exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.gemm.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.gemm.log") PASS $(grep -c ^FAIL "$OUT/memcheck.gemm.log") FAIL"
}
# Nsight Compute on one DeepSeek-V3 layer's input quantizer, pre-pass and SiLU quantizer ($1 s at most; a layer's
# kernels in order: input quantizer, pre-pass, GEMM1, SiLU quantizer, GEMM2; the skip passes the warm-up layers;
# serialised under ncu, so no programmatic overlap in these durations)
ncu_layer_quant() {
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer timeout "$1" ncu --clock-control none -k "regex:quantize|widen_tokens" \
    --launch-skip 6 --launch-count 3 --kill yes --section SpeedOfLight --section WarpStateStats --section Occupancy \
    --section LaunchStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    python3 tools/bench.py --only layer --out /tmp/ncu_bench.json > "$OUT/ncu_layer_quant.txt" 2>&1
  echo "ncu rc $?: $(grep -E "^  nvf_|^ +Duration|Achieved Occupancy|Warp Cycles Per Issued|DRAM Throughput|Grid Size|Block Size" \
    "$OUT/ncu_layer_quant.txt" | tr -s ' ' | tr '\n' ';' | cut -c1-900)"
}
# the quick GPU suite and the layer tests
quick_suite() {
  TEST_QUICK=1 timeout 240 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick suite" "$OUT/test_gpu.log" $?
  TEST_ONLY=moe_layer timeout 60 ./build/test_gpu > "$OUT/test_layer.log" 2>&1
  summ "layer tests" "$OUT/test_layer.log" $? 4
}
# the kernels of every define in $PDEFS compiled in parallel into the cache
precompile_defs() {
  for d in ${PDEFS:-}; do
    NVFP4MOE_TUNE_DEFINE=$d ./build/nvfp4moe_precompile sm_90a > "/tmp/pc${d//=/_}.log" 2>&1 &
  done
  wait
  for d in ${PDEFS:-}; do echo "precompile $d: $(tail -1 "/tmp/pc${d//=/_}.log")"; done
}
# the token-producer tiles' quick every-tile tests, then each quick test named in $1, one summary line each
ws_quick_tests() {
  TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout 200 ./build/test_gpu > "$OUT/test_every_tile_ws.log" 2>&1
  summ "every-tile (quick), token-producer tiles" "$OUT/test_every_tile_ws.log" $?
  for t in $1; do
    TEST_QUICK=1 TEST_ONLY=$t timeout 120 ./build/test_gpu > "$OUT/test_$t.log" 2>&1
    summ "$t (quick)" "$OUT/test_$t.log" $?
  done
}
# quick GPU tests under every define in $PDEFS at once: LABEL TAG TEST_ONLY TIMEOUT [NAME=VALUE ...]
# (more environment), logs $OUT/TAG<define>.log
tests_under_defs() {
  local label=$1 tag=$2 only=$3 t=$4
  shift 4
  for d in ${PDEFS:-}; do
    (env NVFP4MOE_TUNE_DEFINE="$d" TEST_QUICK=1 TEST_ONLY="$only" "$@" timeout "$t" ./build/test_gpu > "$OUT/$tag${d//=/_}.log" 2>&1;
     echo $? > "/tmp/$tag${d//=/_}.rc") &
  done
  wait
  for d in ${PDEFS:-}; do summ "$label $d" "$OUT/$tag${d//=/_}.log" "$(cat "/tmp/$tag${d//=/_}.rc")" 6; done
}
# the quick tests named after $1 with the L2 prefetch at 100:100 (the caps' maxima), $1 s each, one summary line each
l2pf_tests() {
  local t lim=$1
  shift
  for t in "$@"; do
    NVFP4MOE_L2_PREFETCH=100:100 TEST_QUICK=1 TEST_ONLY=$t timeout "$lim" ./build/test_gpu > "$OUT/test_$t.log" 2>&1
    summ "$t (quick, 100:100)" "$OUT/test_$t.log" $?
  done
}
# the layers' A/B of the NVFP4MOE_L2_PREFETCH values in $1 (in order, space-separated) within $2 s; $t0: the mode's start
l2pf_ab() {
  local r="" v
  for v in $1; do r="$r,NVFP4MOE_L2_PREFETCH=$v"; done
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer PYTHONUNBUFFERED=1 timeout "$2" python3 tools/bench.py \
    --envs "${r#,}" --only layer --out "$OUT/layer_l2pf_ab.json" > "$OUT/layer_l2pf_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer" "$OUT/layer_l2pf_ab.log" | cut -c1-150
}
# X86's arms: the default and -DNVF_WIDEN_SKIP=1 (GEMM1's token pre-pass skips rows past masked_m). Since 0.5.13
# that is the default: both arms are the same build (X88 compares -DNVF_WIDEN_SKIP=0 with the default)
WS_A="NVFP4MOE_Y=1"; WS_W="NVFP4MOE_TUNE_DEFINE=-DNVF_WIDEN_SKIP=1"
# the four layers' A/B of those arms, a w w a a w w a, within $1 s; $t0: the mode's start
wskip_ab() {
  PYTHONUNBUFFERED=1 timeout "$1" python3 tools/bench.py --envs "$WS_A,$WS_W,$WS_W,$WS_A,$WS_A,$WS_W,$WS_W,$WS_A" \
    --only layer --out "$OUT/layer_x86_ab.json" > "$OUT/layer_x86_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer" "$OUT/layer_x86_ab.log" | cut -c1-150
}
# w or a: the arm X86F's full benchmark runs (see X86F), from the A/B file $1
wskip_pick() {
  python3 - "$1" <<'PYEOF' 2>/dev/null || echo a
import json, sys
r = json.load(open(sys.argv[1]))
ok = []
for layer in ("dsv3_ep8_layer", "qwen3_30b_layer"):
    t = {k: [x["time_us"] for x in r if x.get("shape") == layer and ("WIDEN_SKIP" in x.get("tune", "")) == (k == "w")]
         for k in "aw"}
    if len(t["a"]) < 2 or len(t["w"]) < 2:
        print("a"); sys.exit()
    ok.append((sum(t["w"]) / len(t["w"]) < sum(t["a"]) / len(t["a"]), max(t["w"]) < min(t["a"])))
print("w" if all(m for m, _ in ok) and any(s for _, s in ok) else "a")
PYEOF
}
# the quick tests named after $1 (every_tile: on the token-producer tiles) under each define of WS_DEFS ("": the
# default build), all in parallel, $1 s each, one summary line each; logs $OUT/test_<test><define, =() as _>.log
WS_DEFS=("" "-DNVF_WIDEN_SKIP=1")
wskip_tests() {
  local t lim=$1 d c n
  shift
  for t in "$@"; do
    c=""; [ "$t" = every_tile ] && c="TEST_CONFIGS=gemm_sm90_ws"
    for d in "${WS_DEFS[@]}"; do
      n="$t${d//[=()]/_}"
      (env NVFP4MOE_TUNE_DEFINE="$d" TEST_QUICK=1 TEST_ONLY=$t $c timeout "$lim" ./build/test_gpu \
        > "$OUT/test_$n.log" 2>&1; echo $? > "/tmp/x86$n.rc") &
    done
  done
  wait
  for t in "$@"; do
    for d in "${WS_DEFS[@]}"; do
      n="$t${d//[=()]/_}"; summ "$t (quick) ${d:-default}" "$OUT/test_$n.log" "$(cat "/tmp/x86$n.rc")" 6
    done
  done
  echo "tests at $(( $(date +%s) - t0 )) s"
}
# one run of the GPU tests into $L/LOG.log within LIMIT s, under the environment NAME=VALUE ..., one summary line and
# its failures: lane_test LOG LIMIT [NAME=VALUE ...] ($L: the mode's log folder, $t0: its start)
lane_test() {
  local log=$1 lim=$2; shift 2
  env "$@" timeout $lim ./build/test_gpu > $L/$log.log 2>&1
  echo "$log rc $? at $(( $(date +%s) - t0 )) s: $(grep -c ^PASS $L/$log.log) PASS $(grep -c ^FAIL $L/$log.log) FAIL $(grep -c ^SKIP $L/$log.log) SKIP"
  grep -E "^FAIL|^#   " $L/$log.log | head -4
}
# after lanes a-d ($L/lane_a.txt ... lane_d.txt): their summaries, the last-round test's PASS lines, the time
lanes_report() {
  cat $L/lane_a.txt $L/lane_b.txt $L/lane_c.txt $L/lane_d.txt
  grep -h "^PASS test_quantize_last_round" $L/*.log
  echo "tests done at $(( $(date +%s) - t0 )) s"
}
# the A/B of the quantizer cells and the layers over ARMS (tools/bench.py --envs) into $OUT/FILE within LIMIT s:
# quant_layer_ab ARMS FILE LIMIT
quant_layer_ab() {
  PYTHONUNBUFFERED=1 timeout $3 python3 tools/bench.py --envs "$1" --only quant,layer --out "$OUT/$2" > $L/ab.log 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer|^quant|^silu" $L/ab.log | cut -c1-150
}
# the full benchmark within LIMIT s, its output in LOG; the file it writes (named by the card) copied to $OUT:
# full_bench LOG LIMIT ($t0: the mode's start)
full_bench() {
  PYTHONUNBUFFERED=1 timeout $2 python3 tools/bench.py > $1 2>&1
  echo "bench exit $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer|^wrote" $1 | cut -c1-150
  local w=$(grep -m1 '^wrote ' $1 | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/"
}
# compute-sanitizer's TOOL on the quick form of TEST within LIMIT s into $L/TOOL.log, under the environment
# NAME=VALUE ..., one summary line: lane_sanitizer TOOL TEST LIMIT [NAME=VALUE ...]
lane_sanitizer() {
  local tool=$1 test=$2 lim=$3; shift 3
  env "$@" TEST_QUICK=1 TEST_ONLY=$test timeout $lim compute-sanitizer --tool $tool --error-exitcode 9 ./build/test_gpu \
    > $L/$tool.log 2>&1
  echo "$tool $test exit $?: $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $L/$tool.log | head -1) $(grep -c ^PASS $L/$tool.log) PASS $(grep -c ^FAIL $L/$tool.log) FAIL"
}
# on an H200 only, and only before LIMIT s of the mode ($t0: its start): Nsight Compute on DeepSeek-V3 GEMM1 at 32
# tokens per expert, G14's sections and metrics, then S14's per-SASS-line stall counters: h200_profile_m32 LIMIT
h200_profile_m32() {
  nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200 || return 0
  [ $(( $(date +%s) - t0 )) -lt $1 ] || return 0
  GMS=32 bash "$0" G14 2>&1 | grep -vE "^name|^NVIDIA"
  echo "G14 done at $(( $(date +%s) - t0 )) s"
  GMS=32 bash "$0" S14 2>&1 | grep -vE "^name|^NVIDIA" | tail -3
  echo "S14 done at $(( $(date +%s) - t0 )) s"
}
# the whole GPU suite ($1 s at most) and, alongside, memcheck on the token-producer tiles' quick every-tile
# tests (same limit); prints both summaries (TAG names the temporary files)
# memcheck on the token-producer tiles' quick every-tile tests ($1 s at most), one summary line
ws_memcheck() {
  TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout "$1" compute-sanitizer --tool memcheck \
    --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.ws.log" 2>&1
  echo "memcheck ws every-tile exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.ws.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.ws.log") PASS $(grep -c ^FAIL "$OUT/memcheck.ws.log") FAIL"
}
suite_and_ws_memcheck() {
  (TT=$1 OUT="$OUT" bash "$0" T16) > "/tmp/$2a.txt" 2>&1 &
  ws_memcheck "$1" > "/tmp/$2b.txt" 2>&1 &
  wait
  cat "/tmp/$2a.txt" "/tmp/$2b.txt"
}
# the A/B of the defines $QDEFS on the quantizer ($ABT2 s at most)
quant_ab() {
  PYTHONUNBUFFERED=1 timeout ${ABT2:-200} python3 tools/bench.py --defines "$QDEFS" --only quant \
    --out "$OUT/ab_quant.json" 2>&1 | grep -E "tune=" | cut -c1-170
}
# the A/B of the defines $GDEFS on the GEMMs at $MS tokens and on the layers ($ABT s at most)
gemm_ab() {
  PYTHONUNBUFFERED=1 timeout ${ABT:-300} python3 tools/bench.py --defines "$GDEFS" --ms "${MS:-32,128}" \
    --only gemm,layer --out "$OUT/ab_gemm.json" 2>&1 | grep -E "tune=" | cut -c1-170
}
# per-cell summary of A/B files (tools/bench.py --envs): each cell's times under the arms whose tune names DEF (x)
# and the others (d), and x's mean against d's; files that are missing or unreadable are skipped or named; with
# AB_BASE set, d is only the arms whose tune names it (the others are left out): [AB_BASE=D] ab_cells DEF FILE...
ab_cells() {
  python3 - "$@" <<'PYEOF'
import json, os, sys
from collections import defaultdict
for path in sys.argv[2:]:
    if not os.path.exists(path):
        continue
    try:
        r = json.load(open(path))
    except Exception as e:  # noqa: BLE001
        print(path, "unreadable:", e); continue
    t = defaultdict(list)
    for x in r:
        tune, base = x.get("tune", ""), os.environ.get("AB_BASE")
        arm = "x" if sys.argv[1] in tune else "d" if not base or base in tune else None
        if arm:
            t[(x.get("shape"), x.get("m"), arm)].append(x["time_us"])
    for k in sorted({(a, b) for a, b, _ in t}):
        d, w = t[k + ("d",)], t[k + ("x",)]
        if d and w:
            print(f"{sys.argv[1]} {path[-22:]} {k[0]:22} {k[1]:>4} d {[round(v, 1) for v in d]} x {[round(v, 1) for v in w]} "
                  f"{100 * (sum(w) / len(w) / (sum(d) / len(d)) - 1):+.1f} %")
PYEOF
}
# forty-ninth session: a trial define DEF on the 32-token tiles (x) against the default (d), logs in $OUT/TAG_logs.tgz:
# both builds precompiled side by side; then, side by side and all under x: the 32-token tiles' quick every-tile and
# resident-unit tests (with and without a workspace), the quick GEMM shape and layer tests, memcheck on the quick
# resident-unit test and racecheck on the quick every-tile test (32-token tiles); then the A/B of the GEMMs at 32 tokens
# and the four layers, d x x d ($ROUNDS times, 2 by default) into TAG_ab.json, and (POISSON=1, the default) d x x d of
# the GEMMs at Poisson(32) into TAG_ab_poisson.json, with a per-cell summary; then, on an H200 with time left (before
# $PROF_BY s), X94's Nsight passes on the default: t32_trial DEF TAG (DEF one define, no spaces or commas; t0 and L
# stay global: lane_test reads them)
t32_trial() {
  local def=$1 tag=$2 X="NVFP4MOE_TUNE_DEFINE=$1" D="NVFP4MOE_Y=1" g arms="" r
  t0=$(date +%s); L=/tmp/$tag; rm -rf $L; mkdir -p $L
  g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$g"
  timeout 150 ./build/nvfp4moe_precompile sm_90a > $L/pc_d.log 2>&1 &
  NVFP4MOE_TUNE_DEFINE=$def timeout 150 ./build/nvfp4moe_precompile sm_90a > $L/pc_x.log 2>&1 &
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s: $(tail -1 $L/pc_d.log) / $(tail -1 $L/pc_x.log)"
  lane_test every_t32_x 200 TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws_t32 $X > $L/lane_a.txt &
  lane_test resident_t32_x 200 TEST_ONLY=resident TEST_CONFIGS=gemm_sm90_ws_t32 $X > $L/lane_b.txt &
  (lane_test shapes_x 150 TEST_QUICK=1 TEST_ONLY=gemm_shapes $X
   lane_test layer_x 150 TEST_QUICK=1 TEST_ONLY=test_moe_layer $X) > $L/lane_c.txt &
  (lane_sanitizer memcheck resident 200 $X TEST_CONFIGS=gemm_sm90_ws_t32
   lane_sanitizer racecheck every_tile 200 $X TEST_CONFIGS=gemm_sm90_ws_t32) > $L/lane_d.txt 2>&1 &
  wait
  cat $L/lane_a.txt $L/lane_b.txt $L/lane_c.txt $L/lane_d.txt; echo "tests done at $(( $(date +%s) - t0 )) s"
  for r in $(seq ${ROUNDS:-2}); do arms="$arms,$D,$X,$X,$D"; done
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "${arms#,}" --ms 32 --only gemm,layer \
    --out "$OUT/${tag}_ab.json" > $L/ab.log 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"
  if [ "${POISSON:-1}" = 1 ]; then
    PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "$D,$X,$X,$D" --ms 32 --poisson --only gemm \
      --out "$OUT/${tag}_ab_poisson.json" > $L/ab_p.log 2>&1
    echo "A/B Poisson(32) rc $? at $(( $(date +%s) - t0 )) s"
  fi
  ab_cells "$def" "$OUT/${tag}_ab.json" "$OUT/${tag}_ab_poisson.json"
  h200_profile_m32 ${PROF_BY:-330}
  tar czf "$OUT/${tag}_logs.tgz" -C $L .
  echo "all done at $(( $(date +%s) - t0 )) s"
}
# fiftieth session: the 128-token tile's tail split, X99 and (QUICK=1) X99Q below: ksplit_trial
ksplit_trial() {
  # the 128-token tile's tail split (-DNVF_KSPLIT=1; nvfp4moe__ws_ksplit; $NVFP4MOE_KSPLIT).
  # (NVF_KSPLIT is only in commits 9652600 to 928f50d, not kept: here both arms build the default; rebuild from
  # 928f50d to repeat X99 or X99Q.) Precompile both; side by side under the define: the 128-token tiles' every-tile
  # test under the rule and forced to 3 pieces (quick), the quick GEMM shape test, memcheck on the quick every-tile
  # test forced to 2; then the A/B, arms o t t o (o: the default; t: the define) at 128 and 512 tokens on the five
  # GEMMs and X98's two whole-wave shapes; logs TAG_logs.tgz. QUICK=1 (X99Q): no precompile (the tests compile what
  # they use), only the two every-tile lanes, the A/B on DeepSeek-V3 GEMM1 and GEMM2 at 128 tokens.
  local q=${QUICK:-0} tag X T tl; tag=$([ $q = 1 ] && echo x99q || echo x99)
  t0=$(date +%s); L=/tmp/$tag; rm -rf $L; mkdir -p $L; nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
  X="NVFP4MOE_TUNE_DEFINE=-DNVF_KSPLIT=1"
  if [ $q = 0 ]; then
    timeout 150 ./build/nvfp4moe_precompile sm_90a > $L/pc.log 2>&1 &
    env $X timeout 150 ./build/nvfp4moe_precompile sm_90a --only gemm_sm90_ws_t128 > $L/pc_x.log 2>&1 &
    wait; echo "precompiled at $(( $(date +%s) - t0 )) s: $(tail -1 $L/pc.log) / $(tail -1 $L/pc_x.log)"
  fi
  T="TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws_t128 $X" tl=${TL:-$([ $q = 1 ] && echo 90 || echo 200)}
  : > $L/lane_c.txt; : > $L/lane_d.txt
  lane_test every_rule $tl $T > $L/lane_a.txt &
  lane_test every_k3 $tl $T NVFP4MOE_KSPLIT=3 > $L/lane_b.txt &
  if [ $q = 0 ]; then
    lane_test shapes $tl TEST_QUICK=1 TEST_ONLY=gemm_shapes $X > $L/lane_c.txt &
    lane_sanitizer memcheck every_tile $tl TEST_CONFIGS=gemm_sm90_ws_t128 NVFP4MOE_KSPLIT=2 $X > $L/lane_d.txt 2>&1 &
  fi
  wait; lanes_report
  grep -h "cases ran again" $L/every_*.log | head -4
  if [ $q = 1 ]; then set -- --ms 128 --shapes dsv3_ep8_gemm1,dsv3_ep8_gemm2
  else set -- --ms 128,512 --shapes qwen3_30b_gemm1,qwen3_30b_gemm2,dsv3_ep8_gemm1,dsv3_ep8_gemm2,gpt_oss_gemm1,dsv3_g30_gemm1,dsv3_g31_gemm2
  fi
  PYTHONUNBUFFERED=1 timeout ${ABT:-$([ $q = 1 ] && echo 60 || echo 240)} python3 tools/bench.py \
    --envs "NVFP4MOE_Y=1,$X,$X,NVFP4MOE_Y=1" --only gemm "$@" --out "$OUT/${tag}_ab.json" > $L/ab.log 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"
  ab_cells KSPLIT=1 "$OUT/${tag}_ab.json"
  tar czf "$OUT/${tag}_logs.tgz" -C $L .
}
# fifty-first session: the one-CTA-a-unit grid's short last blocks (-DNVF_TAIL=1 and =2, gemm_wgmma_ws.cu), X100:
# side by side, the 128-token tiles' every-tile test under each define, the quick GEMM shape and layer tests under
# =2 and the every-tile test (with its new cases) on the default's token-producer tiles, memcheck on the 128-token
# tiles' every-tile test under =2; then the A/B, arms o 1 2 o 2 1 (o: the default), on DeepSeek-V3's GEMMs and
# Qwen3 GEMM1 (no short block: the control) at 128 and 512 tokens; logs x100_logs.tgz (TAG, ARMS, SHAPES, EVERY_O=0,
# INTERLEAVE=1, R_ARM (one more arm, NAME=-DDEF, with its every-tile lane and summary): X101's settings)
# (the define is only in commits 6dd2dc6 to 93aa1ac: removed in the fifty-second session after X101; on a later tree
# the define arms build the default)
tail_trial() {
  local tag=${TAG:-x100}
  t0=$(date +%s); L=/tmp/$tag; rm -rf $L; mkdir -p $L; nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
  local o="NVFP4MOE_Y=1" x1="NVFP4MOE_TUNE_DEFINE=-DNVF_TAIL=1" x2="NVFP4MOE_TUNE_DEFINE=-DNVF_TAIL=2" tl=${TL:-210}
  local shapes=${SHAPES:-dsv3_ep8_gemm1,dsv3_ep8_gemm2,qwen3_30b_gemm1} arms=${ARMS:-"$o,$x1,$x2,$o,$x2,$x1"} rc
  lane_test every_t1 $tl TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws_t128 $x1 > $L/lane_a.txt &
  lane_test every_t2 $tl TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws_t128 $x2 > $L/lane_b.txt &
  (lane_test shapes_t2 $tl TEST_QUICK=1 TEST_ONLY=gemm_shapes $x2
   lane_test layer_t2 $tl TEST_QUICK=1 TEST_ONLY=test_moe_layer $x2
   [ "${EVERY_O:-1}" = 1 ] && lane_test every_o $tl TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws) > $L/lane_c.txt &
  (lane_sanitizer memcheck every_tile $tl TEST_CONFIGS=gemm_sm90_ws_t128 $x2
   [ -n "${R_ARM:-}" ] && lane_test every_r $tl TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws_t128 $R_ARM) > $L/lane_d.txt 2>&1 &
  wait; lanes_report
  ab() { # the A/B into $OUT/TAG_ab.json, log $L/ab.log: ab [--interleave]
    PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --envs "$arms" --only gemm --ms 128,512 \
      --shapes $shapes "$@" --out "$OUT/${tag}_ab.json" > $L/ab.log 2>&1
  }
  ab ${INTERLEAVE:+--interleave}; rc=$?
  echo "A/B rc $rc at $(( $(date +%s) - t0 )) s${INTERLEAVE:+ (interleaved)}"
  if [ $rc != 0 ] && [ -n "${INTERLEAVE:-}" ]; then # (--interleave's first run on a GPU: arm-major if it fails)
    tail -3 $L/ab.log; cp $L/ab.log $L/ab_interleave.log
    ab; echo "A/B (arm-major) rc $? at $(( $(date +%s) - t0 )) s"
  fi
  AB_BASE=$o ab_cells NVF_TAIL=1 "$OUT/${tag}_ab.json"; AB_BASE=$o ab_cells NVF_TAIL=2 "$OUT/${tag}_ab.json"
  [ -n "${R_ARM:-}" ] && AB_BASE=$o ab_cells "${R_ARM#*-D}" "$OUT/${tag}_ab.json"
  tar czf "$OUT/${tag}_logs.tgz" -C $L .
}
# fifty-second session: the 128-token tiles (or the configurations $TCFG names) under one define ARM (NAME=VALUE)
# side by side: their every-tile test, the quick GEMM shape and layer tests, memcheck on the every-tile test, and a
# fourth lane, the command LANE_D... (its output the lane's summary); then an interleaved A/B o ARM o ARM o ARM o ARM o
# on the five GEMMs at 128 and 512 tokens (or $ABMS) into $OUT/TAG_ab.json, its cells against o (KEY: the text that
# names ARM's records), logs TAG_logs.tgz; its own t0 and L (local: the lanes see them, the caller keeps its own):
# t128_trial TAG ARM KEY LANE_D...
# (the five standard GEMMs, and the Qwen3 GEMM2 shape in profile_kernels' terms, for the modes below)
GEMM5=dsv3_ep8_gemm1,dsv3_ep8_gemm2,qwen3_30b_gemm1,qwen3_30b_gemm2,gpt_oss_gemm1
QWEN3_G2="PROFILE_GEMM_G=128 PROFILE_GEMM_N=2048 PROFILE_GEMM_K=768"
t128_trial() {
  local tag=$1 arm=$2 key=$3 o="NVFP4MOE_Y=1" t0 L; shift 3
  t0=$(date +%s); L=/tmp/$tag; rm -rf $L; mkdir -p $L; nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
  lane_test every_x ${TL:-200} TEST_ONLY=every_tile TEST_CONFIGS=${TCFG:-gemm_sm90_ws_t128} "$arm" > $L/lane_a.txt &
  (lane_test shapes_x ${TL:-200} TEST_QUICK=1 TEST_ONLY=gemm_shapes "$arm"
   lane_test layer_x ${TL:-200} TEST_QUICK=1 TEST_ONLY=test_moe_layer "$arm") > $L/lane_b.txt &
  lane_sanitizer memcheck every_tile ${TL:-200} TEST_CONFIGS=${TCFG:-gemm_sm90_ws_t128} "$arm" > $L/lane_c.txt 2>&1 &
  "$@" > $L/lane_d.txt 2>&1 &
  wait; lanes_report
  PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --envs "$o,$arm,$o,$arm,$o,$arm,$o,$arm,$o" --only gemm \
    --ms ${ABMS:-128,512} --shapes $GEMM5 --interleave \
    --out "$OUT/${tag}_ab.json" > $L/ab.log 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"; tail -2 $L/ab.log
  AB_BASE=$o ab_cells "$key" "$OUT/${tag}_ab.json"
  tar czf "$OUT/${tag}_logs.tgz" -C $L .
}
case "${1:-A}" in
X107)
  # fifty-fifth session (any card, about four to five minutes): is the 32-token tile held by the L2? X91 (H100,
  # DeepSeek-V3 GEMM1 at 32 tokens, the default with its workspace) had "L2 Cache Throughput" (lts__throughput) at
  # 81.3 % of peak beside DRAM at 81.8 %, and none of the L2 lines its tables show above 62 %; at the H200's time for
  # the same kernel (174.8 against 203.6 us) that would be about 95 %. So: (1) Nsight metrics with lts__throughput's,
  # the memory throughput's and sm__throughput's breakdowns (which sub-unit is the 81 %) on DeepSeek-V3 GEMM1 at 32
  # tokens with the workspace, without it (the producers widen the codes: 3.6x fewer token bytes from L2), at 128,
  # and at 32 under NVF_WHINT; (2) -DNVF_WHINT=1 (gemm_common.cuh: weight loads evict_first, the 32- to 128-token
  # tiles' slot-image copies evict_last; the swap-AB tiles' token copies, 8 tokens, get no hint; evict_last may do
  # nothing without a persisting-L2 set-aside, which nothing here configures) precompiled beside (1), then the
  # 32-token tiles' quick every-tile test under it; (3) an interleaved A/B of the five GEMMs at 8 and 32 tokens (or
  # $X107_MS): with a workspace (d), without (NO_WS=1), NVF_WHINT with one (h), in the orders d n h and h d n;
  # (4) the four layers, arms o p h o (p: NVFP4MOE_TOKEN_PREPASS=0). Every step's limit is cut to what is left of
  # $X107_S s (default 560, under the tool's 600); files in $OUT/x107/ and $OUT/x107_*.json
  t0=$(date +%s); nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; L="$OUT/x107"; mkdir -p "$L"
  lim() { local left=$(( ${X107_S:-560} - ($(date +%s) - t0) - $2 )); [ $left -lt $1 ] && echo $(( left > 5 ? left : 5 )) || echo $1; }
  NVFP4MOE_TUNE_DEFINE=-DNVF_WHINT=1 timeout 200 ./build/nvfp4moe_precompile sm_90a > "$L/pc_whint.log" 2>&1 &
  pc=$!
  M="gpu__time_duration.sum,breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed,breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,lts__t_requests_srcunit_ltcfabric.sum,dram__bytes_read.sum"
  ncu_l2() { # tokens, workspace (1/0), tag, env...
    local m=$1 w=$2 tag=$3; shift 3
    env "$@" PROFILE_GEMM_M=$m PROFILE_GEMM_WS=$w timeout $(lim 90 300) ncu --clock-control none -k regex:nvf_gemm \
      --launch-skip 2 --launch-count 1 --metrics "$M" ./build/profile_kernels > "$L/l2_$tag.txt" 2>&1
    echo "ncu $tag exit $? at $(( $(date +%s) - t0 )) s; the largest shares:"
    grep -E "gpu__time_duration.sum|dram__bytes_read.sum|lts__t_sectors.sum |ltcfabric.sum" "$L/l2_$tag.txt" | cut -c1-150
    grep -E "pct_of_peak" "$L/l2_$tag.txt" | awk '{print $NF, $1}' | sort -g -r | head -10
  }
  ncu_l2 32 1 m32_ws1 NVFP4MOE_Y=1; ncu_l2 32 0 m32_ws0 NVFP4MOE_Y=1; ncu_l2 128 1 m128_ws1 NVFP4MOE_Y=1
  wait $pc; echo "NVF_WHINT precompiled at $(( $(date +%s) - t0 )) s: $(tail -1 "$L/pc_whint.log")"
  ncu_l2 32 1 m32_ws1_whint NVFP4MOE_TUNE_DEFINE=-DNVF_WHINT=1
  lane_test every_whint $(lim 90 240) TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws_t32 NVFP4MOE_TUNE_DEFINE=-DNVF_WHINT=1
  d=NVFP4MOE_BENCH_NO_WS=0; n=NVFP4MOE_BENCH_NO_WS=1; h=NVFP4MOE_TUNE_DEFINE=-DNVF_WHINT=1 # (h: with the workspace)
  for arms in "$d,$n,$h" "$h,$d,$n"; do
    f="$OUT/x107_ab$([ "$arms" = "$h,$d,$n" ] && echo _r).json"
    PYTHONUNBUFFERED=1 timeout $(lim ${ABT:-120} 80) python3 tools/bench.py --envs "$arms" --only gemm --ms ${X107_MS:-8,32} \
      --shapes $GEMM5 --interleave --out "$f" > "$L/ab_$(basename "$f" .json).log" 2>&1
    rc=$?; echo "A/B $(basename "$f") rc $rc at $(( $(date +%s) - t0 )) s"; tail -1 "$L/ab_$(basename "$f" .json).log" | cut -c1-150
  done
  AB_BASE="NVFP4MOE_BENCH_NO_WS=0" ab_cells NVFP4MOE_BENCH_NO_WS=1 "$OUT/x107_ab.json" "$OUT/x107_ab_r.json"
  AB_BASE="NVFP4MOE_BENCH_NO_WS=0" ab_cells NVF_WHINT "$OUT/x107_ab.json" "$OUT/x107_ab_r.json"
  PYTHONUNBUFFERED=1 timeout $(lim 120 5) python3 tools/bench.py --envs "NVFP4MOE_Y=1,NVFP4MOE_TOKEN_PREPASS=0,$h,NVFP4MOE_Y=1" \
    --only layer --out "$OUT/x107_layers.json" > "$L/ab_layers.log" 2>&1
  rc=$?; echo "layers A/B rc $rc at $(( $(date +%s) - t0 )) s"
  AB_BASE=NVFP4MOE_Y=1 ab_cells NVFP4MOE_TOKEN_PREPASS=0 "$OUT/x107_layers.json"
  AB_BASE=NVFP4MOE_Y=1 ab_cells NVF_WHINT "$OUT/x107_layers.json"
  echo "X107 done at $(( $(date +%s) - t0 )) s"
  ;;
X106)
  # fifty-third session, for the next (any card, about two minutes): the default's 128-token tile, S14's per-SASS-line
  # stalls on DeepSeek-V3 GEMM1 and Qwen3 GEMM2 at 128 tokens and G14's sections on Qwen3 GEMM2 (X105's files for it
  # did not come back: the device tool returns a limited number of files), all in one archive, $OUT/x106_prof.tgz,
  # with tools/ncu_source_summary.py's summaries printed
  t0=$(date +%s); nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; P=/tmp/x106; rm -rf $P; mkdir -p $P/d $P/q
  env OUT=$P/q GMS=128 $QWEN3_G2 bash "$0" G14 2>&1 | grep -vE "^name|^NVIDIA"
  for w in d q; do
    env OUT=$P/$w GMS=128 $([ $w = q ] && echo $QWEN3_G2) bash "$0" S14 2>&1 | grep -vE "^name|^NVIDIA" | tail -2
    python3 tools/ncu_source_summary.py $P/$w/src14_m128.csv.gz 2>&1 | head -45
    echo "S14 $w done at $(( $(date +%s) - t0 )) s"
  done
  tar czf "$OUT/x106_prof.tgz" -C $P .
  ;;
X105)
  # fifty-third session (the session's command line ran X97 instead where the card was an H200; this mode itself
  # runs on any card): Nsight Compute on the
  # default's 128-token tile (G14's sections and metrics for DeepSeek-V3 GEMM1 and Qwen3 GEMM2 at 128 tokens, into
  # $OUT/p_dsv3g1 and $OUT/p_qwen3g2, then S14's per-SASS-line stalls for DeepSeek-V3 GEMM1), then -DNVF_EPI_FOLD=1
  # (gemm_wgmma_ws.cu: the 2^16 applied to each token's scale, not to every accumulator) by t128_trial on every
  # token-producer tile (every-tile test, quick shapes and layers, memcheck; the default's every-tile test as the
  # fourth lane) and an interleaved A/B at 128 and 512 tokens (or $ABMS); S14 only before $S14_BY s
  t0=$(date +%s); nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
  mkdir -p "$OUT/p_dsv3g1" "$OUT/p_qwen3g2"
  OUT="$OUT/p_dsv3g1" GMS=128 bash "$0" G14 2>&1 | grep -vE "^name|^NVIDIA"
  env OUT="$OUT/p_qwen3g2" GMS=128 $QWEN3_G2 bash "$0" G14 2>&1 | grep -vE "^name|^NVIDIA"
  echo "G14 done at $(( $(date +%s) - t0 )) s"
  if [ $(( $(date +%s) - t0 )) -lt ${S14_BY:-150} ]; then
    OUT="$OUT/p_dsv3g1" GMS=128 bash "$0" S14 2>&1 | grep -vE "^name|^NVIDIA" | tail -3
    echo "S14 done at $(( $(date +%s) - t0 )) s"
  fi
  TCFG=gemm_sm90_ws ABMS=${ABMS:-128,512} t128_trial x105 "NVFP4MOE_TUNE_DEFINE=-DNVF_EPI_FOLD=1" NVF_EPI_FOLD \
    lane_test every_o ${TL:-200} TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws
  echo "X105 done at $(( $(date +%s) - t0 )) s"
  ;;
X104)
  # fifty-second session: -DNVF_MT2=1 (gemm_wgmma_ws.cu: the one-CTA-a-unit 128-token tile, not its _varn twin, with
  # two consumer warpgroups of two m64 tiles each, 256-row units); racecheck on the every-tile test as the fourth
  # lane; Qwen3 GEMM2 (K 768) runs the resident twin in both arms: the control. (Measured in the fifty-third
  # session, slower, removed: the define is only in commits be94e04 to ccd9edc; on a later tree the x arms build the
  # default)
  m="NVFP4MOE_TUNE_DEFINE=-DNVF_MT2=1"
  t128_trial x104 "$m" NVF_MT2 lane_sanitizer racecheck every_tile ${TL:-200} TEST_CONFIGS=gemm_sm90_ws_t128 "$m"
  ;;
X103)
  # fifty-second session: the 64-token four-warpgroup tile forced at 128 tokens (256-row units, two token tiles a row
  # block, on the resident grid for TILED weights) against the default's 128-token tile (192-row units): an
  # interleaved A/B o c o c o c o on the five GEMMs at 128 tokens; no kernel change (every configuration passes the
  # every-tile test)
  t0=$(date +%s); nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
  o="NVFP4MOE_Y=1" c="NVFP4MOE_GEMM_CONFIG=gemm_sm90_ws_t64_wg4"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "$o,$c,$o,$c,$o,$c,$o" --only gemm --ms 128 \
    --shapes $GEMM5 --interleave --out "$OUT/x103_ab.json" > /tmp/x103_ab.log 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"; tail -2 /tmp/x103_ab.log; cp /tmp/x103_ab.log "$OUT/"
  AB_BASE=$o ab_cells ws_t64_wg4 "$OUT/x103_ab.json"
  ;;
X102)
  # fifty-second session: -DNVF_EPI_BULK=1 (gemm_wgmma_ws.cu: the 128-token tile with a workspace stages its results
  # in shared memory and writes them by bulk copies; its every-tile workspace cases run the new epilogue); the
  # default's every-tile test as the fourth lane (the define is only in commit ea209e5: removed after X102; on a
  # later tree the b arms build the default; X102 ran with the lanes' logs named every_b, shapes_b, layer_b)
  t128_trial x102 "NVFP4MOE_TUNE_DEFINE=-DNVF_EPI_BULK=1" NVF_EPI_BULK \
    lane_test every_o ${TL:-200} TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws_t128
  ;;
X100)
  tail_trial
  ;;
X101)
  # X100 again after the vote fix (the first form's mapping branch and early return put the MMAs' B descriptors in
  # vector registers): the default's every-tile run again (its kernels unchanged, but a case added after X100, N 208),
  # arms o 1 2 three times and o,
  # interleaved (tools/bench.py --interleave: each cell under every arm in turn), X98's whole-wave shapes and gpt-oss
  # GEMM1 (no short block) added; and an arm r, the 128-token tile's resident twin up to K 2048 (-DNVF_RES128K=2048:
  # host only; measured on an H100 only, X73: -3.6 to +2.6 % at K 1536 and 2048), on the same cells
  o="NVFP4MOE_Y=1" x1="NVFP4MOE_TUNE_DEFINE=-DNVF_TAIL=1" x2="NVFP4MOE_TUNE_DEFINE=-DNVF_TAIL=2"
  r="NVFP4MOE_TUNE_DEFINE=-DNVF_RES128K=2048"
  TAG=x101 INTERLEAVE=1 R_ARM=$r ARMS="$o,$x1,$x2,$r,$o,$x2,$x1,$r,$o,$x1,$x2,$r,$o" \
    SHAPES=dsv3_ep8_gemm1,dsv3_ep8_gemm2,qwen3_30b_gemm1,gpt_oss_gemm1,dsv3_g30_gemm1,dsv3_g31_gemm2 tail_trial
  ;;
A)
  bash tests/run.sh 2>&1 | tee "$OUT/test.log" | grep -vE "^PASS|^# compiled" | tail -40
  echo "== compute-sanitizer memcheck (TEST_QUICK=1)"
  TEST_QUICK=1 TEST_ONLY=test_ compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.log" 2>&1
  echo "memcheck exit $?"; grep -E "ERROR SUMMARY|^FAIL|^PASS" "$OUT/memcheck.log" | sort | uniq -c | head -20
  echo "== compute-sanitizer racecheck (GEMM and quantization, TEST_QUICK=1)"
  TEST_QUICK=1 TEST_ONLY=gemm_shapes compute-sanitizer --tool racecheck --error-exitcode 9 ./build/test_gpu > "$OUT/racecheck.log" 2>&1
  echo "racecheck gemm exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^FAIL|^PASS" "$OUT/racecheck.log" | head
  TEST_QUICK=1 TEST_ONLY=masked_and_per_tensor compute-sanitizer --tool racecheck --error-exitcode 9 ./build/test_gpu > "$OUT/racecheck_q.log" 2>&1
  echo "racecheck quantize exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^FAIL|^PASS" "$OUT/racecheck_q.log" | head
  TEST_QUICK=1 TEST_ONLY=moe_layer compute-sanitizer --tool racecheck --error-exitcode 9 ./build/test_gpu > "$OUT/racecheck_l.log" 2>&1
  echo "racecheck layer (swap-AB GEMM, SiLU) exit $?"; grep -E "RACECHECK SUMMARY|^FAIL|^PASS" "$OUT/racecheck_l.log" | head
  ./build/jit_timing > "$OUT/jit_timing.json" 2>&1; cat "$OUT/jit_timing.json"
  ;;
B)
  ./build/test_gpu 2>&1 | tee "$OUT/test_gpu.log" | grep -vE "^PASS" | tail -20; grep -c "^PASS" "$OUT/test_gpu.log"
  python3 tests/test_torchao.py 2>&1 | tee "$OUT/torchao.log" | grep -v Warning
  PYTHONUNBUFFERED=1 python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -42
  cp bench/results/*.json "$OUT/" 2>/dev/null
  ;;
C)
  ./build/jit_timing > "$OUT/jit_timing.json" 2>&1; cat "$OUT/jit_timing.json"
  ./build/test_nvrtc 2>&1 | tee "$OUT/nvrtc.log" | grep -E "^FAIL|compiled .*sm_90a"
  rm -rf /tmp/pc100 && ./build/nvfp4moe_precompile sm_100a --cache-dir /tmp/pc100 > "$OUT/precompile_sm100.txt" 2>&1
  for f in /tmp/pc100/*.cubin; do tail -c +97 "$f" > /tmp/x.cubin; if cuobjdump -res-usage /tmp/x.cubin 2>/dev/null | grep -q nvf_gemm_sm100; then cp /tmp/x.cubin /tmp/sm100.cubin; fi; done
  cuobjdump -res-usage /tmp/sm100.cubin > "$OUT/sm100_resources.txt" 2>&1; cat "$OUT/sm100_resources.txt"
  cuobjdump -sass /tmp/sm100.cubin > "$OUT/sm100.sass" 2>&1
  grep -oE "\b(UTC[A-Z0-9_.]+|UTMALDG[A-Z0-9_.]*|UBLKCP[A-Z0-9_.]*|LDTM[A-Z0-9_.]*)" "$OUT/sm100.sass" | sort | uniq -c
  ./build/moe_layer > "$OUT/moe_layer.log" 2>&1; tail -14 "$OUT/moe_layer.log"
  ;;
D)
  ./build/test_gpu 2>&1 | tee "$OUT/test_gpu.log" | grep -vE "^PASS" | tail -20; grep -c "^PASS" "$OUT/test_gpu.log"
  PYTHONUNBUFFERED=1 python3 tools/bench.py --only quant --out "$OUT/quant.json" 2>&1 | tail -6
  PYTHONUNBUFFERED=1 python3 tools/bench.py --tune "${TUNES:-0,1,2,3}" --only gemm --out "$OUT/tune.json" 2>&1 | tail -64
  ;;
E)
  ./build/test_gpu 2>&1 | tee "$OUT/test_gpu.log" | grep -E "^FAIL|^SKIP|passed" | head; grep -c "^PASS" "$OUT/test_gpu.log"
  python3 tests/test_torchao.py 2>&1 | tee "$OUT/torchao.log" | grep -v Warning | tail -4
  for t in memcheck racecheck; do for f in quantiz moe_layer; do
    TEST_QUICK=1 TEST_ONLY=$f timeout 100 compute-sanitizer --tool $t --error-exitcode 9 ./build/test_gpu > "$OUT/$t.$f.log" 2>&1
    echo "$t $f exit $?: $(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$t.$f.log" | head -1) $(grep -c ^PASS "$OUT/$t.$f.log") PASS $(grep -c ^FAIL "$OUT/$t.$f.log") FAIL"
  done; done
  PYTHONUNBUFFERED=1 python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -34
  cp bench/results/*.json "$OUT/" 2>/dev/null
  ;;
F)
  gpu_tests
  bash tests/check_sm90_sass.sh 2>&1 | tail -1
  PYTHONUNBUFFERED=1 python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -34
  cp bench/results/*.json "$OUT/" 2>/dev/null
  memcheck_gemm 60
  ;;
S)
  gpu_tests
  memcheck_gemm 150
  NVFP4MOE_GEMM_CONFIG=gemm_sm90_t128 PYTHONUNBUFFERED=1 python3 tools/bench.py --defines -DNVF_WDEPTH=2,-DNVF_WDEPTH=3,-DNVF_WDEPTH=4 --ms 128,512 --only gemm \
    --out "$OUT/sweep128.json" 2>&1 | tail -41 | cut -c1-70,150-
  NVFP4MOE_GEMM_CONFIG=gemm_sm90_t64 PYTHONUNBUFFERED=1 python3 tools/bench.py --defines -DNVF_WDEPTH=2,-DNVF_WDEPTH=3,-DNVF_WDEPTH=4 --ms 64 --only gemm \
    --out "$OUT/sweep64.json" 2>&1 | tail -21 | cut -c1-70,150-
  ;;
V)
  gpu_tests
  bash tests/check_sm90_sass.sh 2>&1 | tail -1
  memcheck_gemm 60
  PYTHONUNBUFFERED=1 python3 tools/bench.py --configs gemm_sm90_t64,gemm_sm90_t64_wg3,gemm_sm90_t128,gemm_sm90_t128_wg3 \
    --ms 64,128,512 --only gemm --out "$OUT/configs_wg3.json" 2>&1 | tail -62 | cut -c1-150
  PYTHONUNBUFFERED=1 python3 tools/bench.py --configs gemm_swapab_t16,gemm_swapab_t32,gemm_sm90_t16_wg4,gemm_sm90_t32_wg4 \
    --ms 8,16,32 --only gemm --out "$OUT/configs_wg4.json" 2>&1 | tail -62 | cut -c1-150
  ;;
X)
  gpu_tests
  bash tests/check_sm90_sass.sh 2>&1 | tail -1
  PYTHONUNBUFFERED=1 python3 tools/bench.py --defines -DNVF_QALWAYSCAP=1,-DNVF_QNONE=1,-DNVF_QALWAYSCAP=2,-DNVF_QNONE=2 --only quant \
    --out "$OUT/quant_cap.json" 2>&1 | tail -13 | cut -c1-150
  PYTHONUNBUFFERED=1 python3 tools/bench.py --configs gemm_swapab_t48,gemm_sm90_t32_wg4,gemm_sm90_t48_wg3,gemm_sm90_t48_wg4,gemm_sm90_t64_wg3,gemm_sm90_t64_wg4 \
    --ms 40,48,64 --only gemm,layer --out "$OUT/configs_mid.json" 2>&1 | tail -20 | cut -c1-150
  ;;
Y)
  gpu_tests
  for t in memcheck racecheck; do
    TEST_QUICK=1 TEST_ONLY=quantiz timeout 100 compute-sanitizer --tool $t --error-exitcode 9 ./build/test_gpu > "$OUT/$t.q.log" 2>&1
    echo "$t quantize exit $?: $(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$t.q.log" | head -1) $(grep -c ^PASS "$OUT/$t.q.log") PASS $(grep -c ^FAIL "$OUT/$t.q.log") FAIL"
  done
  PYTHONUNBUFFERED=1 python3 tools/bench.py --defines -DNVF_QSTAGE=0,-DNVF_QSTAGE=1,-DNVF_QSTAGE=0,-DNVF_QSTAGE=1 --only quant \
    --out "$OUT/quant_stage.json" 2>&1 | tail -13 | cut -c1-150
  PYTHONUNBUFFERED=1 python3 tools/bench.py --only layer --out "$OUT/layer.json" 2>&1 | tail -3 | cut -c1-150
  ;;
Z)
  gpu_tests
  bash tests/check_sm90_sass.sh 2>&1 | tail -1
  PYTHONUNBUFFERED=1 python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -36 | cut -c1-150
  cp bench/results/*.json "$OUT/" 2>/dev/null
  memcheck_gemm 150
  timeout 60 ncu --clock-control none -k regex:nvf_quantize --launch-skip 3 --launch-count 2 --section SpeedOfLight \
    --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis ./build/profile_kernels > "$OUT/ncu_quant.txt" 2>&1
  echo "ncu exit $?"; grep -E "Duration|Throughput|Warp Cycles Per Issued|Stall|Achieved Occupancy|Issued Warp" "$OUT/ncu_quant.txt" | head -30
  ;;
Q)
  gpu_tests
  PYTHONUNBUFFERED=1 python3 tools/bench.py --defines -DNVF_QFILL=0,-DNVF_QFILL=1,-DNVF_QFILL=0,-DNVF_QFILL=1 --only quant \
    --out "$OUT/quant_fill.json" 2>&1 | tail -13 | cut -c1-150
  NVFP4MOE_GEMM_CONFIG=gemm_sm90_t32_wg4 PYTHONUNBUFFERED=1 python3 tools/bench.py --defines -DNVF_WKC=512,-DNVF_WKC=1024 --ms 32 \
    --only gemm --out "$OUT/kc32.json" 2>&1 | tail -11 | cut -c1-150
  NVFP4MOE_GEMM_CONFIG=gemm_sm90_t48_wg4 PYTHONUNBUFFERED=1 python3 tools/bench.py --defines -DNVF_WDEPTH=1,-DNVF_WDEPTH=2,-DNVF_WDEPTH=3 \
    --ms 40 --only gemm --out "$OUT/depth48.json" 2>&1 | tail -16 | cut -c1-150
  ;;
W)
  gpu_tests
  PYTHONUNBUFFERED=1 python3 tools/bench.py --configs "${CONFIGS:-gemm_sm90_t32,gemm_sm90_t64,gemm_sm90_t128}" \
    --ms "${MS:-32,128,512}" --only gemm --out "$OUT/configs.json" 2>&1 | tail -48
  ;;
R)
  # quantizer variants $VARIANTS (defines): bit-exact tests under each, then one A/B process
  for v in $(echo ${VARIANTS:-} | tr ' ' '\n' | sort -u); do
    NVFP4MOE_TUNE_DEFINE=$v TEST_ONLY=quantiz ./build/test_gpu > "$OUT/test_q.log" 2>&1
    echo "quantizer tests $v: $(grep -c ^PASS "$OUT/test_q.log") PASS $(grep -c ^FAIL "$OUT/test_q.log") FAIL"; grep ^FAIL "$OUT/test_q.log" | head -3
  done
  PYTHONUNBUFFERED=1 python3 tools/bench.py --defines "$(echo ${VARIANTS:-} | tr ' ' ,)" --only quant \
    --out "$OUT/quant_ab.json" 2>&1 | tail -${ABTAIL:-30} | cut -c1-150
  ;;
G)
  # swap-AB weight ring A/B ($VARIANTS defines): quick quantizer tests (default build), the
  # forced swap-AB configurations under each variant, then one A/B process at 1-16 tokens
  TEST_QUICK=1 TEST_ONLY=quantiz timeout 200 ./build/test_gpu > "$OUT/test_q.log" 2>&1
  echo "quick quantizer tests: $(grep -c ^PASS "$OUT/test_q.log") PASS $(grep -c ^FAIL "$OUT/test_q.log") FAIL"; grep ^FAIL "$OUT/test_q.log" | head -3
  for v in $(echo ${VARIANTS:-} | tr ' ' '\n' | sort -u); do
    NVFP4MOE_TUNE_DEFINE=$v TEST_CONFIGS=swapab TEST_ONLY=gemm_every timeout 90 ./build/test_gpu > "$OUT/test_g.log" 2>&1
    echo "swap-AB configs $v: rc $? $(grep -c ^PASS "$OUT/test_g.log") PASS $(grep -c ^FAIL "$OUT/test_g.log") FAIL"; grep -E "^FAIL|^#   " "$OUT/test_g.log" | head -4
  done
  PYTHONUNBUFFERED=1 timeout 240 python3 tools/bench.py --defines "$(echo ${VARIANTS:-} | tr ' ' ,)" --ms ${MS:-1,8,16} --only gemm \
    --out "$OUT/gemm_ab.json" 2>&1 | grep -E "tune|TB/s" | cut -c1-150
  ;;
H)
  TEST_QUICK=1 timeout 300 ./build/test_gpu 2>&1 | tee "$OUT/test_gpu.log" | grep -E "^FAIL|^#   |skipped|passed" | head -30
  for t in memcheck racecheck; do
    TEST_QUICK=1 TEST_ONLY=quantiz timeout 90 compute-sanitizer --tool $t --error-exitcode 9 ./build/test_gpu > "$OUT/$t.q.log" 2>&1
    echo "$t quantize exit $?: $(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$t.q.log" | head -1) $(grep -c ^PASS "$OUT/$t.q.log") PASS $(grep -c ^FAIL "$OUT/$t.q.log") FAIL"
  done
  ;;
K)
  TEST_QUICK=1 timeout 200 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick suite" "$OUT/test_gpu.log" $? 5
  ;&
I)
  PYTHONUNBUFFERED=1 timeout 500 python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -36 | cut -c1-150
  w=$(grep -m1 '^wrote ' "$OUT/bench.log" | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/" || echo "the benchmark wrote no file"
  ;;
J)
  # the quick GPU suite, then A/Bs against the previous code in the same process each:
  # GEMM (NVF_OLDCONV: the previous E2M1 widening and swap-AB SF addressing) and the layers,
  # quantizer (NVF_QSLOWSETUP: the previous per-block branches)
  TEST_QUICK=1 timeout 200 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick suite" "$OUT/test_gpu.log" $? 5
  PYTHONUNBUFFERED=1 timeout 200 python3 tools/bench.py --defines -DNVF_OLDCONV=1,-DNVF_Y=1,-DNVF_OLDCONV=1,-DNVF_Y=2 --ms 1,8,16,32,128 \
    --only gemm,layer --out "$OUT/gemm_conv_ab.json" 2>&1 | grep -E "tune|TB/s" | cut -c1-150
  PYTHONUNBUFFERED=1 timeout 100 python3 tools/bench.py --defines -DNVF_QSLOWSETUP=1,-DNVF_Y=1,-DNVF_QSLOWSETUP=1,-DNVF_Y=2 --only quant \
    --out "$OUT/quant_setup_ab.json" 2>&1 | grep -E "tune" | cut -c1-150
  ;;
T)
  # sixth session: the staged quantizer (rows bulk-copied into shared memory, 2 slots per
  # team by default). Quick quantizer and SiLU tests (the many-rows test included) under the
  # default and NVF_QSTAGE=0 / 3 (host-side slot counts), both sanitizers on the default,
  # then one A/B process of the quantizer rows.
  qtests() { # $1: define or "default"
    if [ "$1" = default ]; then unset NVFP4MOE_TUNE_DEFINE; else export NVFP4MOE_TUNE_DEFINE=$1; fi
    for f in quantiz silu; do
      TEST_QUICK=1 TEST_ONLY=$f timeout 150 ./build/test_gpu > "$OUT/test_q.log" 2>&1
      echo "quick $f tests $1: rc $? $(grep -c ^PASS "$OUT/test_q.log") PASS $(grep -c ^FAIL "$OUT/test_q.log") FAIL"
      grep -E "^FAIL|^#   " "$OUT/test_q.log" | head -4
    done
    unset NVFP4MOE_TUNE_DEFINE
  }
  for v in ${QVARS:-default -DNVF_QSTAGE=0 -DNVF_QSTAGE=3}; do qtests $v; done
  for v in ${SVARS:-default}; do
    if [ "$v" = default ]; then unset NVFP4MOE_TUNE_DEFINE; else export NVFP4MOE_TUNE_DEFINE=$v; fi
    for t in memcheck racecheck; do
      TEST_QUICK=1 TEST_ONLY=quantiz timeout 150 compute-sanitizer --tool $t --error-exitcode 9 ./build/test_gpu > "$OUT/$t.q.log" 2>&1
      echo "$t quantize $v exit $?: $(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$t.q.log" | head -1) $(grep -c ^PASS "$OUT/$t.q.log") PASS $(grep -c ^FAIL "$OUT/$t.q.log") FAIL"
      grep -A5 "Race reported" "$OUT/$t.q.log" | head -6
    done
    unset NVFP4MOE_TUNE_DEFINE
  done
  if [ -n "${FULLQ:-}" ]; then # the full (not quick) quantizer tests on the default build
    TEST_ONLY=quantiz timeout 240 ./build/test_gpu > "$OUT/test_qfull.log" 2>&1
    echo "full quantizer tests: rc $? $(grep -c ^PASS "$OUT/test_qfull.log") PASS $(grep -c ^FAIL "$OUT/test_qfull.log") FAIL"
    grep -E "^FAIL|^#   " "$OUT/test_qfull.log" | head -4
  fi
  PYTHONUNBUFFERED=1 timeout 150 python3 tools/bench.py --defines "${VARIANTS:--DNVF_QSTAGE=0,-DNVF_Y=1,-DNVF_QSTAGE=3,-DNVF_QSTAGE=0,-DNVF_Y=2}" \
    --only quant --out "$OUT/quant_ab.json" 2>&1 | grep -E "tune|TB/s|position" | cut -c1-150
  ;;
U)
  # sixth session, last call: the quick GPU suite, the full SiLU tests and memcheck on them,
  # the full benchmark (h200.json), then the SiLU team A/B (NVF_QSILU2=1: the previous 2
  # blocks per thread and 3 CTAs) on the quantizer rows and the expert layers
  TEST_QUICK=1 timeout 200 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick suite" "$OUT/test_gpu.log" $? 5
  TEST_ONLY=silu timeout 100 ./build/test_gpu > "$OUT/test_silu.log" 2>&1
  echo "full SiLU tests rc $?: $(grep -c ^PASS "$OUT/test_silu.log") PASS $(grep -c ^FAIL "$OUT/test_silu.log") FAIL"
  TEST_QUICK=1 TEST_ONLY=silu timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.silu.log" 2>&1
  echo "memcheck silu exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.silu.log" | head -1)"
  PYTHONUNBUFFERED=1 timeout 280 python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -36 | cut -c1-150
  cp "$(ls -t bench/results/*.json | head -1)" "$OUT/"
  PYTHONUNBUFFERED=1 timeout 120 python3 tools/bench.py --defines -DNVF_QSILU2=1,-DNVF_Y=1 --only quant,layer \
    --out "$OUT/silu_ab.json" 2>&1 | grep -E "tune" | cut -c1-150
  ;;
V2)
  # sixth session: the staged kernel without spills: quick quantizer tests, racecheck, the
  # full benchmark, the staging A/B
  TEST_QUICK=1 TEST_ONLY=quantiz timeout 100 ./build/test_gpu > "$OUT/test_q.log" 2>&1
  summ "quick quantizer tests" "$OUT/test_q.log" $? 4
  TEST_QUICK=1 TEST_ONLY=quantiz timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 ./build/test_gpu > "$OUT/racecheck.q.log" 2>&1
  echo "racecheck quantize exit $?: $(grep -hE "RACECHECK SUMMARY" "$OUT/racecheck.q.log" | head -1)"
  PYTHONUNBUFFERED=1 timeout 150 python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -36 | cut -c1-150
  cp "$(ls -t bench/results/*.json | head -1)" "$OUT/"
  PYTHONUNBUFFERED=1 timeout 60 python3 tools/bench.py --defines -DNVF_QSTAGE=0,-DNVF_Y=1 --only quant \
    --out "$OUT/quant_ab.json" 2>&1 | grep -E "tune" | cut -c1-150
  ;;
S7)
  # seventh session: the quick GPU suite; Nsight Compute on the wgmma GEMM at $PROFILE_GEMM_M
  # tokens (dsv3 GEMM1; stall breakdown, source counters, the tensor pipe's activity); then
  # the forced configurations CONFIG@DEFINE in $PAIRS at $MS tokens with the expert layers
  TEST_QUICK=1 timeout 200 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick suite" "$OUT/test_gpu.log" $? 5
  export PROFILE_GEMM_M=${PROFILE_GEMM_M:-32}
  timeout 150 ncu --clock-control none -k regex:nvf_gemm --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section SourceCounters --section InstructionStats --section Occupancy \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis -o /tmp/g7 -f ./build/profile_kernels > "$OUT/ncu_gemm_run.txt" 2>&1
  echo "ncu gemm exit $?"
  ncu --import /tmp/g7.ncu-rep --print-details all > "$OUT/ncu_gemm.txt" 2>&1
  ncu --import /tmp/g7.ncu-rep --page source --csv --print-source sass > "$OUT/src_gemm.csv" 2>&1
  grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Issue Slots Busy|DRAM Throughput" "$OUT/ncu_gemm.txt" | head -12
  timeout 60 ncu --clock-control none -k regex:nvf_gemm --launch-skip 2 --launch-count 1 \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    ./build/profile_kernels 2>&1 | tail -6 | tee "$OUT/ncu_gemm_tensor.txt"
  unset PROFILE_GEMM_M
  PYTHONUNBUFFERED=1 timeout 330 python3 tools/bench.py --variants "$PAIRS" --ms "${MS:-32}" --only gemm,layer \
    --out "$OUT/sweep.json" 2>&1 | grep -E "tune|TB/s" | cut -c1-160
  ;;
N7)
  # seventh session: Nsight Compute on the GEMM at each token count in $PMS (dsv3 GEMM1)
  for m in ${PMS:-32 8}; do
    export PROFILE_GEMM_M=$m
    timeout 150 ncu --clock-control none -k regex:nvf_gemm --launch-skip 2 --launch-count 1 --section SpeedOfLight \
      --section WarpStateStats --section SourceCounters --section InstructionStats --section Occupancy \
      -o /tmp/g7_$m -f ./build/profile_kernels > "$OUT/ncu_gemm_run_$m.txt" 2>&1
    echo "ncu gemm m=$m exit $?"
    ncu --import /tmp/g7_$m.ncu-rep --print-details all > "$OUT/ncu_gemm_$m.txt" 2>&1
    ncu --import /tmp/g7_$m.ncu-rep --page source --csv --print-source sass > "$OUT/src_gemm_$m.csv" 2>&1
    grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued|Issue Slots Busy|DRAM Throughput" "$OUT/ncu_gemm_$m.txt" | head -6
  done
  unset PROFILE_GEMM_M
  ;;
S7B)
  # seventh session: quick GEMM tests and the register-race check, an A/B of the defines $DEFS
  # (first: NVF_WOLDSHIFT, the wgmma weight slots' shift register) at $MS tokens with the layers,
  # then the forced configurations in $PAIRS at $MS2 tokens
  TEST_QUICK=1 TEST_ONLY=gemm timeout 200 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick GEMM tests" "$OUT/test_gpu.log" $? 5
  bash tests/check_sm90_sass.sh 2>&1 | tail -3
  [ -n "${MEMCHECK:-}" ] && memcheck_gemm 150
  PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --defines "${DEFS:--DNVF_WOLDSHIFT=1,-DNVF_Y=1}" --ms "${MS:-32,48,64,128,512}" \
    --only gemm,layer --out "$OUT/ab.json" 2>&1 | grep -E "tune|TB/s" | cut -c1-160
  [ -n "${PAIRS:-}" ] && PYTHONUNBUFFERED=1 timeout 240 python3 tools/bench.py --variants "$PAIRS" --ms "${MS2:-32,48}" --only gemm,layer \
    --out "$OUT/sweep.json" 2>&1 | grep -E "tune|TB/s" | cut -c1-160
  ;;
L8)
  # eighth session, TILED weights: the quick GPU suite, memcheck on the quick GEMM and relayout
  # tests, the register-race check, then the full benchmark (as I)
  TEST_QUICK=1 timeout 240 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick suite" "$OUT/test_gpu.log" $?
  TEST_QUICK=1 TEST_ONLY=tiled timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.tiled.log" 2>&1
  echo "memcheck tiled exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.tiled.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.tiled.log") PASS"
  TEST_QUICK=1 TEST_ONLY=relayout timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.relayout.log" 2>&1
  echo "memcheck relayout exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.relayout.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.relayout.log") PASS"
  bash tests/check_sm90_sass.sh 2>&1 | tail -1
  [ "${BENCH:-1}" = 1 ] || exit 0
  ;&
B8)
  PYTHONUNBUFFERED=1 timeout ${BT:-500} python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -44 | cut -c1-170
  cp "$(ls -t bench/results/*.json | head -1)" "$OUT/"
  ;;
P8)
  # eighth session: Nsight Compute on the GEMM at $PMS tokens for the shape $PN x $PK (default
  # DeepSeek-V3 GEMM2), then an A/B of $DEFS at $MS tokens with the layers (as A8)
  for m in ${PMS:-1}; do
    PROFILE_GEMM_M=$m PROFILE_GEMM_N=${PN:-7168} PROFILE_GEMM_K=${PK:-2048} timeout 150 ncu --clock-control none -k regex:nvf_gemm \
      --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SourceCounters \
      --section InstructionStats --section Occupancy --section MemoryWorkloadAnalysis -o /tmp/g8_$m -f ./build/profile_kernels > "$OUT/ncu_gemm_run_$m.txt" 2>&1
    echo "ncu gemm m=$m exit $?"
    ncu --import /tmp/g8_$m.ncu-rep --print-details all > "$OUT/ncu_gemm_$m.txt" 2>&1
    ncu --import /tmp/g8_$m.ncu-rep --page source --csv --print-source sass > "$OUT/src_gemm_$m.csv" 2>&1
    grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued|Issue Slots Busy|DRAM Throughput" "$OUT/ncu_gemm_$m.txt" | head -6
  done
  ;&
W8)
  # eighth session: quick GEMM tests and memcheck on them (the _tiled twins included), quick GEMM
  # tests under each define of $TDEFS, then an A/B of $DEFS at $MS tokens with the layers (as A8)
  TEST_QUICK=1 TEST_ONLY=gemm timeout 200 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick GEMM tests" "$OUT/test_gpu.log" $? 5
  memcheck_gemm 200
  for d in ${TDEFS:-}; do
    NVFP4MOE_TUNE_DEFINE=$d TEST_QUICK=1 TEST_ONLY=gemm timeout 150 ./build/test_gpu > "$OUT/test_gpu_$d.log" 2>&1
    echo "quick GEMM tests $d rc $?: $(grep -c ^PASS "$OUT/test_gpu_$d.log") PASS $(grep -c ^FAIL "$OUT/test_gpu_$d.log") FAIL"; grep -E "^FAIL|^#   " "$OUT/test_gpu_$d.log" | head -5
  done
  ;&
A8)
  # eighth session: an A/B of the defines $DEFS at $MS tokens with the layers (no tests: the
  # default build's SASS is identical to the last tested code; the variants read wrong bytes)
  PYTHONUNBUFFERED=1 timeout ${ABT:-400} python3 tools/bench.py --defines "$DEFS" --ms "${MS:-1,8,32,128,512}" \
    --only gemm,layer --out "$OUT/ab.json" 2>&1 | grep -E "tune|TB/s" | cut -c1-160
  ;;
Q9)
  # ninth session: every quantizer test in full (shapes, dtypes, layouts, 4over6, edge rows, SiLU,
  # weights, dequantization, the software conversions), the layer tests, the torchao check, memcheck
  # on the quick quantizer tests, then an A/B of the defines $DEFS on the quantizer (--only quant)
  TEST_ONLY=quant timeout 240 ./build/test_gpu > "$OUT/test_q.log" 2>&1
  summ "quantizer tests" "$OUT/test_q.log" $?
  for t in conversions moe_layer self_test; do
    TEST_ONLY=$t timeout 120 ./build/test_gpu > "$OUT/test_$t.log" 2>&1
    echo "$t tests rc $?: $(grep -c ^PASS "$OUT/test_$t.log") PASS $(grep -c ^FAIL "$OUT/test_$t.log") FAIL"; grep -E "^FAIL|^#   " "$OUT/test_$t.log" | head -4
  done
  timeout 120 python3 tests/test_torchao.py 2>&1 | tee "$OUT/torchao.log" | grep -v Warning | tail -4
  TEST_QUICK=1 TEST_ONLY=quant timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.q.log" 2>&1
  echo "memcheck quantizer exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.q.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.q.log") PASS"
  [ -n "${DEFS:-}" ] && PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --defines "$DEFS" --only quant \
    --out "$OUT/ab.json" 2>&1 | grep -E "tune|TB/s|quantize" | cut -c1-170
  ;;
N9)
  # ninth session: the quick GPU suite (launches with programmatic dependent launch), the
  # quantizer's tests in full, memcheck on the quick quantizer and layer tests, then the A/Bs:
  # $ENVS (run-time switches, --envs) on the quantizer and the layers, $DEFS on the quantizer
  TEST_QUICK=1 timeout 200 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick suite" "$OUT/test_gpu.log" $?
  TEST_ONLY=quant timeout 150 ./build/test_gpu > "$OUT/test_q.log" 2>&1
  summ "quantizer tests" "$OUT/test_q.log" $?
  TEST_QUICK=1 TEST_ONLY=quant timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.q.log" 2>&1
  echo "memcheck quantizer exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.q.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.q.log") PASS"
  [ -n "${ENVS:-}" ] && PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --envs "$ENVS" --only quant,layer \
    --out "$OUT/ab_envs.json" 2>&1 | grep -E "tune|TB/s|quantize|layer" | cut -c1-170
  [ -n "${DEFS:-}" ] && PYTHONUNBUFFERED=1 timeout ${ABT2:-100} python3 tools/bench.py --defines "$DEFS" --only quant \
    --out "$OUT/ab_defs.json" 2>&1 | grep -E "tune=" | cut -c1-170
  ;;
F9)
  # ninth session, final: the full benchmark (as B8), then an A/B of the run-time switches $ENVS on the layers
  PYTHONUNBUFFERED=1 timeout ${BT:-430} python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -44 | cut -c1-170
  cp "$(ls -t bench/results/*.json | head -1)" "$OUT/"
  [ -n "${ENVS:-}" ] && PYTHONUNBUFFERED=1 timeout ${ABT:-120} python3 tools/bench.py --envs "$ENVS" --only layer \
    --out "$OUT/ab_envs_layers.json" 2>&1 | grep -E "tune=" | cut -c1-170
  ;;
R10)
  # tenth session: the GEMM weight ring (tuning define NVF_WRING, TILED weights) and the
  # quantizer's 64-thread staged teams (NVF_QSTAGE=7): quick tests under each define, then
  # their A/Bs ($GDEFS at 32 tokens with the layers, $QDEFS on the quantizer), then memcheck
  for d in -DNVF_WRING=16 -DNVF_WRING=14; do
    NVFP4MOE_TUNE_DEFINE=$d TEST_QUICK=1 TEST_ONLY=gemm timeout 150 ./build/test_gpu > "$OUT/test_gemm$d.log" 2>&1
    echo "gemm tests $d rc $?: $(grep -c ^PASS "$OUT/test_gemm$d.log") PASS $(grep -c ^FAIL "$OUT/test_gemm$d.log") FAIL"; grep -E "^FAIL|^#   " "$OUT/test_gemm$d.log" | head -6
    NVFP4MOE_TUNE_DEFINE=$d TEST_QUICK=1 TEST_ONLY=moe_layer timeout 60 ./build/test_gpu > "$OUT/test_layer$d.log" 2>&1
    echo "layer tests $d rc $?: $(grep -c ^PASS "$OUT/test_layer$d.log") PASS $(grep -c ^FAIL "$OUT/test_layer$d.log") FAIL"; grep -E "^FAIL|^#   " "$OUT/test_layer$d.log" | head -4
  done
  NVFP4MOE_TUNE_DEFINE=-DNVF_QSTAGE=7 TEST_QUICK=1 TEST_ONLY=quant timeout 90 ./build/test_gpu > "$OUT/test_q7.log" 2>&1
  summ "quant tests QSTAGE=7" "$OUT/test_q7.log" $? 6
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "$GDEFS" --ms 32 --only gemm,layer \
    --out "$OUT/ab_gemm.json" 2>&1 | grep -E "tune=" | cut -c1-170
  PYTHONUNBUFFERED=1 timeout ${ABT2:-100} python3 tools/bench.py --defines "$QDEFS" --only quant \
    --out "$OUT/ab_quant.json" 2>&1 | grep -E "tune=" | cut -c1-170
  NVFP4MOE_TUNE_DEFINE=-DNVF_WRING=16 TEST_QUICK=1 TEST_ONLY=tiled timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.ring.log" 2>&1
  echo "memcheck ring exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.ring.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.ring.log") PASS"
  ;;
H10)
  # tenth session: quick quantizer tests under NVF_QHINT=3, the A/B of $QDEFS on the quantizer,
  # then Nsight Compute on the default quantizer (mode P's sections, no variants)
  NVFP4MOE_TUNE_DEFINE=-DNVF_QHINT=3 TEST_QUICK=1 TEST_ONLY=quant timeout 90 ./build/test_gpu > "$OUT/test_qh3.log" 2>&1
  summ "quant tests QHINT=3" "$OUT/test_qh3.log" $? 6
  PYTHONUNBUFFERED=1 timeout ${ABT2:-170} python3 tools/bench.py --defines "$QDEFS" --only quant \
    --out "$OUT/ab_quant.json" 2>&1 | grep -E "tune=" | cut -c1-170
  VARIANTS= bash "$0" P
  ;;
S10)
  # tenth session: the A/B of $QDEFS on the quantizer, then every quantizer test in full, the layer
  # tests, memcheck on the quick quantizer tests
  PYTHONUNBUFFERED=1 timeout ${ABT2:-120} python3 tools/bench.py --defines "$QDEFS" --only quant \
    --out "$OUT/ab_quant.json" 2>&1 | grep -E "tune=" | cut -c1-170
  TEST_ONLY=quant timeout 240 ./build/test_gpu > "$OUT/test_q.log" 2>&1
  summ "quantizer tests" "$OUT/test_q.log" $?
  TEST_ONLY=moe_layer timeout 90 ./build/test_gpu > "$OUT/test_layer.log" 2>&1
  summ "layer tests" "$OUT/test_layer.log" $? 4
  TEST_QUICK=1 TEST_ONLY=quant timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.q.log" 2>&1
  echo "memcheck quantizer exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.q.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.q.log") PASS"
  ;;
Z10)
  # tenth session, last call: the A/B of $QDEFS (store probes) on the quantizer, then the quick GPU suite
  PYTHONUNBUFFERED=1 timeout ${ABT2:-120} python3 tools/bench.py --defines "$QDEFS" --only quant \
    --out "$OUT/ab_quant.json" 2>&1 | grep -E "tune=" | cut -c1-170
  TEST_QUICK=1 timeout 240 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick suite" "$OUT/test_gpu.log" $?
  ;;
P11)
  TEST_ONLY=many_rows timeout 120 ./build/test_gpu > "$OUT/test_many.log" 2>&1
  summ "many-rows tests" "$OUT/test_many.log" $?
  PYTHONUNBUFFERED=1 timeout ${ABT2:-200} python3 tools/bench.py --defines "$QDEFS" --only quant \
    --out "$OUT/ab_quant.json" 2>&1 | grep -E "tune=" | cut -c1-170
  TEST_ONLY=quant timeout 200 ./build/test_gpu > "$OUT/test_q.log" 2>&1
  summ "quantizer tests" "$OUT/test_q.log" $?
  TEST_ONLY=moe_layer timeout 60 ./build/test_gpu > "$OUT/test_layer.log" 2>&1
  summ "layer tests" "$OUT/test_layer.log" $? 4
  TEST_QUICK=1 TEST_ONLY=many_rows timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.q.log" 2>&1
  echo "memcheck many-rows exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.q.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.q.log") PASS"
  TEST_QUICK=1 TEST_ONLY=many_rows timeout ${RACET:-100} compute-sanitizer --tool racecheck --error-exitcode 9 ./build/test_gpu > "$OUT/racecheck.q.log" 2>&1
  echo "racecheck many-rows exit $?: $(grep -hE "RACECHECK SUMMARY|ERROR SUMMARY" "$OUT/racecheck.q.log" | head -1) $(grep -c ^PASS "$OUT/racecheck.q.log") PASS"
  for v in none -DNVF_QPAIR=0; do
    if [ "$v" = none ]; then unset NVFP4MOE_TUNE_DEFINE; else export NVFP4MOE_TUNE_DEFINE=$v; fi
    tag=$(echo "$v" | tr -c 'A-Za-z0-9_\n' _)
    timeout 90 ncu --clock-control none -k regex:nvf_quantize_staged --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --section MemoryWorkloadAnalysis \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,lts__t_sectors_op_read.sum,lts__t_requests_op_read.sum \
      --print-details all ./build/profile_kernels > "$OUT/ncu_mem_$tag.txt" 2>&1
    echo "ncu $v exit $?"; grep -E "gpu__time_duration|dram__bytes|lts__t_sectors_op|lts__t_requests_op|L2 Cache Throughput|DRAM Throughput" "$OUT/ncu_mem_$tag.txt" | head -12
  done
  unset NVFP4MOE_TUNE_DEFINE
  ;;
R11)
  PYTHONUNBUFFERED=1 timeout ${ABT2:-200} python3 tools/bench.py --defines "$QDEFS" --only quant \
    --out "$OUT/ab_quant.json" 2>&1 | grep -E "tune=" | cut -c1-170
  python3 - <<'PY' 2>&1 | tee "$OUT/torch_read_rate.txt"
import torch
x = torch.randn(16384, 7168, dtype=torch.bfloat16, device="cuda"); y = torch.empty_like(x)
def t(f, n=50):
    for _ in range(5): f()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(n):
        a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    ts.sort(); return ts[len(ts) // 2]
r = t(lambda: torch.amax(x)); c = t(lambda: y.copy_(x))
print("amax [16384, 7168] bf16: %.1f us, %.3f TB/s read" % (r, x.numel() * 2 / r / 1e6))
print("copy [16384, 7168] bf16: %.1f us, %.3f TB/s read + write" % (c, 2 * x.numel() * 2 / c / 1e6))
PY
  ;;
G11)
  TEST_QUICK=1 timeout 240 ./build/test_gpu > "$OUT/test_gpu.log" 2>&1
  summ "quick suite" "$OUT/test_gpu.log" $?
  M="gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed"
  for shape in "4096 7168" "7168 2048"; do
    set -- $shape
    tag=gemm_m32_n$1_k$2
    PROFILE_GEMM_M=32 PROFILE_GEMM_N=$1 PROFILE_GEMM_K=$2 timeout 120 ncu --clock-control none -k regex:nvf_gemm --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy \
      --metrics "$M" --print-details all ./build/profile_kernels > "$OUT/ncu_$tag.txt" 2>&1
    echo "ncu $tag exit $?"; grep -E "gpu__time_duration|gmma|issue_active|pipe_alu|pipe_fma|pipe_lsu|dram__throughput|Function Name|Registers Per|Stall (Long|Wait|Barrier|GMMA|Math|Not Sel|Dispatch)|   Grid Size|Block Size" "$OUT/ncu_$tag.txt" | head -24
  done
  ;;
P)
  # Nsight Compute source counters (instructions executed per SASS line) and the stall
  # breakdown of the quantizer, for the committed kernel and each define in $VARIANTS
  for v in none ${VARIANTS:-}; do
    if [ "$v" = none ]; then unset NVFP4MOE_TUNE_DEFINE; else export NVFP4MOE_TUNE_DEFINE=$v; fi
    tag=$(echo "$v" | tr -c 'A-Za-z0-9_\n' _)
    timeout 120 ncu --clock-control none -k regex:nvf_quantize --launch-skip 3 --launch-count 2 --section SpeedOfLight \
      --section WarpStateStats --section SourceCounters --section InstructionStats --section Occupancy \
      --print-details all -o "/tmp/q_$tag" -f ./build/profile_kernels > "$OUT/ncu_$tag.txt" 2>&1
    echo "ncu $v exit $?"
    ncu --import "/tmp/q_$tag.ncu-rep" --print-details all > "$OUT/ncu_$tag.txt" 2>&1
    ncu --import "/tmp/q_$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/src_$tag.csv" 2>&1
    grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued|Achieved Occupancy|Registers Per" "$OUT/ncu_$tag.txt" | head -12
  done
  unset NVFP4MOE_TUNE_DEFINE
  ;;
T13)
  precompile_defs
  tests_under_defs "quick gemm tests" gemm gemm 300 TEST_CONFIGS="${TCONF:-gemm_sm90}"
  if [ -n "${DIAG:-}" ]; then # memcheck on the default-tile GEMM tests under the define $DIAG (where a kernel faults)
    NVFP4MOE_TUNE_DEFINE=$DIAG TEST_QUICK=1 TEST_ONLY=gemm_shapes timeout 120 compute-sanitizer --tool memcheck \
      ./build/test_gpu > "$OUT/diag.log" 2>&1
    grep -m1 -B2 -A12 "=========" "$OUT/diag.log" | cut -c1-200
  fi
  if [ "${FULL:-0}" = 1 ]; then quick_suite; fi
  if [ "${GAB:-1}" = 1 ]; then gemm_ab; fi
  if [ "${MC:-0}" = 1 ]; then echo "(memcheck under ${MCDEF:-no define})"; NVFP4MOE_TUNE_DEFINE=${MCDEF:-} memcheck_gemm ${MCT:-150}; fi
  ;;
T14)
  if [ -n "${PC:-}" ]; then precompile_defs; fi
  tests_under_defs "quick quantizer tests" q quantiz 200
  if [ "${FULLQ:-0}" = 1 ]; then
    NVFP4MOE_TUNE_DEFINE=${FQDEF:-} TEST_ONLY=quantiz timeout 200 ./build/test_gpu > "$OUT/qfull.log" 2>&1
    summ "quantizer tests in full under ${FQDEF:-no define}" "$OUT/qfull.log" $? 6
  fi
  quant_ab
  if [ "${MC:-0}" = 1 ]; then
    NVFP4MOE_TUNE_DEFINE=${MCDEF:-} TEST_QUICK=1 TEST_ONLY=quantiz timeout 150 compute-sanitizer --tool memcheck \
      --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.q.log" 2>&1
    echo "memcheck quantize under ${MCDEF:-no define} exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.q.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.q.log") PASS $(grep -c ^FAIL "$OUT/memcheck.q.log") FAIL"
  fi
  ;;
G14)
  M="gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed"
  for m in ${GMS:-32 128 512}; do
    PROFILE_GEMM_M=$m timeout 150 ncu --clock-control none -k regex:nvf_gemm --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats \
      --section LaunchStats --print-details all ./build/profile_kernels > "$OUT/ncu14_m$m.txt" 2>&1
    echo "ncu m=$m exit $?"; grep -E "Duration|Function Name|Registers Per|Shared Memory|L1/TEX Hit|Mem Busy|Max Bandwidth|Mem Pipes|DRAM Throughput|Compute \(SM\)|Stall (Long|Wait|Barrier|Math|Not Sel|Short|MIO|LG)" "$OUT/ncu14_m$m.txt" | head -30 | cut -c1-150
    PROFILE_GEMM_M=$m timeout 150 ncu --clock-control none -k regex:nvf_gemm --launch-skip 2 --launch-count 1 \
      --metrics "$M" ./build/profile_kernels > "$OUT/ncu14_metrics_m$m.txt" 2>&1
    echo "ncu metrics m=$m exit $?"; grep -E "__" "$OUT/ncu14_metrics_m$m.txt" | head -12 | cut -c1-150
  done
  ;;
S14)
  for m in ${GMS:-128}; do
    PROFILE_GEMM_M=$m timeout 200 ncu --clock-control none -k regex:nvf_gemm --launch-skip 2 --launch-count 1 \
      --section WarpStateStats --section SourceCounters -o "/tmp/g_m$m" -f ./build/profile_kernels > "$OUT/ncu14_src_m$m.txt" 2>&1
    echo "ncu source m=$m exit $?"
    ncu --import "/tmp/g_m$m.ncu-rep" --page source --csv --print-source sass > "/tmp/src_m$m.csv" 2>&1
    gzip -c "/tmp/src_m$m.csv" > "$OUT/src14_m$m.csv.gz"; ls -la "$OUT"
  done
  ;;
W15)
  TEST_QUICK=1 TEST_ONLY=gemm TEST_CONFIGS=${TCONF:-gemm_sm90_ws} timeout 240 ./build/test_gpu > "$OUT/ws_tests.log" 2>&1
  summ "quick gemm tests, configurations ${TCONF:-gemm_sm90_ws}" "$OUT/ws_tests.log" $? 12
  if [ "${MC:-0}" = 1 ]; then
    TEST_QUICK=1 TEST_ONLY=gemm_every_tile_config TEST_CONFIGS=${TCONF:-gemm_sm90_ws} timeout ${MCT:-150} compute-sanitizer \
      --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.ws.log" 2>&1
    echo "memcheck ws exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.ws.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.ws.log") PASS"
  fi
  if [ -n "${CONFIGS:-}" ]; then
    PYTHONUNBUFFERED=1 timeout ${ABT:-300} python3 tools/bench.py --configs "$CONFIGS" --ms "${MS:-128,512}" \
      --only ${ONLY:-gemm} --out "$OUT/ab_configs.json" 2>&1 | grep -E "tune=" | cut -c1-170
  fi
  if [ -n "${CONFIGS2:-}" ]; then # a second set: CONFIGS2 at MS2 on ONLY2
    PYTHONUNBUFFERED=1 timeout ${ABT:-300} python3 tools/bench.py --configs "$CONFIGS2" --ms "${MS2:-32}" \
      --only ${ONLY2:-gemm} --out "$OUT/ab_configs2.json" 2>&1 | grep -E "tune=" | cut -c1-170
  fi
  if [ -n "${GDEFS:-}" ]; then gemm_ab; fi
  ;;
W15B) # the fifteenth session's last test call: the token-producer configurations' tests, their A/Bs at 32 and
  # 64 tokens (and the layers), the quick suite, the layer tests, memcheck on the token-producer GEMM tests
  TEST_QUICK=1 TEST_ONLY=gemm TEST_CONFIGS=gemm_sm90_ws timeout 100 ./build/test_gpu > $OUT/ws.log 2>&1; echo "ws tests rc $?"; grep -E '^PASS|^FAIL|^#   ' $OUT/ws.log | head
  if grep -q '^PASS test_gemm_every_tile_config' $OUT/ws.log; then
    PYTHONUNBUFFERED=1 timeout 110 python3 tools/bench.py --configs gemm_sm90_t48_wg4,gemm_sm90_ws_t48_wg4,gemm_sm90_t48_wg4,gemm_sm90_ws_t48_wg4 --ms 32 --only gemm,layer --out $OUT/ab48.json > $OUT/ab48.txt 2>&1; echo "ab48 rc $?"
    PYTHONUNBUFFERED=1 timeout 60 python3 tools/bench.py --configs gemm_sm90_t64_wg4,gemm_sm90_ws_t64_wg4,gemm_sm90_t64_wg4,gemm_sm90_ws_t64_wg4 --ms 64 --only gemm --out $OUT/ab64.json > $OUT/ab64.txt 2>&1; echo "ab64 rc $?"
    TEST_QUICK=1 timeout 150 ./build/test_gpu > $OUT/quick.log 2>&1; echo "quick suite rc $?: $(grep -c ^PASS $OUT/quick.log) PASS $(grep -c ^FAIL $OUT/quick.log) FAIL"; grep -E '^FAIL|^#   ' $OUT/quick.log | head -5
    TEST_ONLY=moe_layer timeout 40 ./build/test_gpu > $OUT/layer.log 2>&1; echo "layer tests rc $?: $(grep -c ^PASS $OUT/layer.log) PASS $(grep -c ^FAIL $OUT/layer.log) FAIL"
    TEST_QUICK=1 TEST_ONLY=gemm_every_tile_config TEST_CONFIGS=gemm_sm90_ws timeout 70 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > $OUT/mc.log 2>&1; echo "memcheck ws rc $?: $(grep -hE 'ERROR SUMMARY' $OUT/mc.log | head -1) $(grep -c ^PASS $OUT/mc.log) PASS"
  fi
  ;;
T12)
  if [ "${TESTS:-1}" = 1 ]; then quick_suite; fi
  if [ "${GAB:-1}" = 1 ]; then gemm_ab; fi
  if [ "${QAB:-1}" = 1 ]; then quant_ab; fi
  if [ "${MC:-1}" = 1 ]; then memcheck_gemm ${MCT:-150}; fi
  if [ "${QMC:-0}" = 1 ]; then
    for t in memcheck racecheck; do
      TEST_QUICK=1 TEST_ONLY=quantiz timeout 120 compute-sanitizer --tool $t --error-exitcode 9 ./build/test_gpu > "$OUT/$t.q.log" 2>&1
      echo "$t quantize exit $?: $(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$t.q.log" | head -1) $(grep -c ^PASS "$OUT/$t.q.log") PASS $(grep -c ^FAIL "$OUT/$t.q.log") FAIL"
    done
  fi
  ;;
V16)
  nvcc -arch=sm_90a -O3 tools/pipe_probe.cu -o build/pipe_probe && timeout 60 ./build/pipe_probe | tee "$OUT/pipe_probe.txt"
  quick_suite
  for t in memcheck racecheck; do
    TEST_QUICK=1 TEST_ONLY=gemm_every_tile_config TEST_CONFIGS=gemm_sm90_ws timeout ${MCT:-150} compute-sanitizer \
      --tool $t --error-exitcode 9 ./build/test_gpu > "$OUT/$t.ws.log" 2>&1
    echo "$t ws exit $?: $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$t.ws.log" | head -1) $(grep -c ^PASS "$OUT/$t.ws.log") PASS $(grep -c ^FAIL "$OUT/$t.ws.log") FAIL"
  done
  ;;
F16)
  TEST_QUICK=1 TEST_ONLY=gemm_every_tile_config TEST_CONFIGS=gemm_swapab timeout 120 ./build/test_gpu > "$OUT/swapab.log" 2>&1
  summ "swap-AB GEMM tests" "$OUT/swapab.log" $? 12
  if grep -q '^PASS test_gemm_every_tile_config' "$OUT/swapab.log"; then
    quick_suite
    PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py \
      --defines "${GDEFS:--DNVF_FEW=0,-DNVF_SWDUMMY=1,-DNVF_FEW=0,-DNVF_SWDUMMY=1}" --ms "${MS:-1,2,8}" --only gemm \
      --out "$OUT/ab_few.json" 2>&1 | grep -E "tune=" | cut -c1-170
    TEST_QUICK=1 TEST_ONLY=gemm_every_tile_config TEST_CONFIGS=gemm_swapab timeout 150 compute-sanitizer --tool memcheck \
      --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.swapab.log" 2>&1
    echo "memcheck swapab exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.swapab.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.swapab.log") PASS"
  fi
  ;;
B16)
  TEST_QUICK=1 TEST_ONLY=gemm_every_tile_config timeout ${TLT:-200} ./build/test_gpu > "$OUT/tiles.log" 2>&1
  summ "every tile configuration" "$OUT/tiles.log" $? 12
  PYTHONUNBUFFERED=1 timeout ${BT:-450} python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -40 | cut -c1-150
  cp "$(ls -t bench/results/*.json | head -1)" "$OUT/" 2>/dev/null || cp bench/results/*.json "$OUT/"
  ;;
P17)
  v=""; for c in gemm_sm90_ws_t128_wg3 gemm_sm90_ws_t256_wg2; do for d in 0 1 2 3; do v="$v,$c@-DNVF_WSPROBE=$d"; done; done
  PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --variants "${v#,}" --ms 128,512 --only gemm \
    --out "$OUT/probe_t128_t256.json" 2>&1 | grep -E "tune=" | cut -c1-170
  v=""; for d in 0 1 2 3; do v="$v,gemm_sm90_ws_t48_wg4@-DNVF_WSPROBE=$d"; done
  PYTHONUNBUFFERED=1 timeout ${ABT:-120} python3 tools/bench.py --variants "${v#,}" --ms 32 --only gemm \
    --out "$OUT/probe_t48.json" 2>&1 | grep -E "tune=" | cut -c1-170
  ;;
R17)
  TEST_QUICK=1 TEST_ONLY=gemm timeout 200 ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests" "$OUT/gemm_tests.log" $? 8
  TEST_ONLY=moe_layer timeout 60 ./build/test_gpu > "$OUT/test_layer.log" 2>&1
  summ "layer tests" "$OUT/test_layer.log" $? 4
  TEST_QUICK=1 TEST_ONLY=gemm_every_tile_config TEST_CONFIGS=gemm_sm90_ws_t32 timeout 150 compute-sanitizer \
    --tool racecheck --error-exitcode 9 ./build/test_gpu > "$OUT/racecheck.t32.log" 2>&1
  echo "racecheck t32 exit $?: $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.t32.log" | head -1) $(grep -c ^PASS "$OUT/racecheck.t32.log") PASS"
  PYTHONUNBUFFERED=1 timeout 150 python3 tools/bench.py --configs \
    gemm_swapab_t16,gemm_sm90_ws_t32_wg4,gemm_swapab_t16,gemm_sm90_ws_t32_wg4 --ms 8,16 --only gemm \
    --out "$OUT/ab_t16_t32.json" 2>&1 | grep -E "tune=" | cut -c1-170
  ;;
X18)
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${TT:-200} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests" "$OUT/gemm_tests.log" $? 8
  if grep -q '^PASS test_gemm_every_tile_config' "$OUT/gemm_tests.log"; then
    e=NVFP4MOE_TOKEN_PREPASS
    PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --envs "$e=0,$e=1,$e=0,$e=1" --ms "${MS:-32,64,128,512}" \
      --only ${ONLY:-gemm} --out "$OUT/ab_prepass.json" 2>&1 | grep -E "tune=" | cut -c1-170
  fi
  for tool in ${SAN:-memcheck racecheck}; do
    TEST_QUICK=1 TEST_ONLY=gemm_every_tile_config TEST_CONFIGS=${TCONF:-gemm_sm90_ws} timeout ${MCT:-120} compute-sanitizer \
      --tool $tool --error-exitcode 9 ./build/test_gpu > "$OUT/$tool.ws.log" 2>&1
    echo "$tool ws exit $?: $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/$tool.ws.log" | head -1) $(grep -c ^PASS "$OUT/$tool.ws.log") PASS"
  done
  ;;
X19)
  quick_suite
  TEST_QUICK=1 TEST_ONLY=moe_layer timeout ${MCT:-120} compute-sanitizer --tool memcheck --error-exitcode 9 \
    ./build/test_gpu > "$OUT/memcheck.layer.log" 2>&1
  echo "memcheck layer exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.layer.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.layer.log") PASS"
  e=NVFP4MOE_TOKEN_PREPASS
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --envs "$e=0,$e=1,$e=0,$e=1" --only layer \
    --out "$OUT/ab_prepass_layer.json" 2>&1 | grep -E "tune=|layer" | cut -c1-170
  ;;
N19)
  M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed"
  for shape in ${SHAPES:-dsv3g1:32:4096:7168:128 dsv3g2:32:7168:2048:128 qwen3g1:128:1536:2048:128 qwen3g2:128:2048:768:128 dsv3g2:32:7168:2048:32}; do
    IFS=: read -r name g n k m <<< "$shape"
    for ws in 1 0; do
      PROFILE_GEMM_G=$g PROFILE_GEMM_N=$n PROFILE_GEMM_K=$k PROFILE_GEMM_M=$m PROFILE_GEMM_WS=$ws timeout 100 ncu --clock-control none \
        -k regex:"nvf_gemm|nvf_ws_widen" --launch-skip $((ws + 1)) --launch-count $((ws + 1)) --metrics "$M" ./build/profile_kernels \
        > "$OUT/ncu19_${name}_m${m}_ws$ws.txt" 2>&1
      echo "== $name m=$m ws=$ws exit $?"; grep -E "^  [a-z_]+|__" "$OUT/ncu19_${name}_m${m}_ws$ws.txt" | grep -vE "^==PROF" | head -20 | cut -c1-140
    done
  done
  ;;
X20)
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${TT:-240} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests" "$OUT/gemm_tests.log" $? 8
  if grep -q '^PASS test_gemm_every_tile_config' "$OUT/gemm_tests.log" && grep -q '^PASS test_gemm_shapes' "$OUT/gemm_tests.log"; then
    e=NVFP4MOE_SWAPAB_PERSIST
    PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "${ABENVS:-$e=0,$e=1,$e=0,$e=1}" --ms "${MS:-1,8,16}" \
      --only gemm --out "$OUT/ab_persist.json" 2>&1 | grep -E "tune=" | cut -c1-170
  fi
  for tool in ${SAN:-memcheck racecheck}; do
    TEST_QUICK=1 TEST_ONLY=gemm_every_tile_config TEST_CONFIGS=gemm_swapab timeout ${MCT:-120} compute-sanitizer \
      --tool $tool --error-exitcode 9 ./build/test_gpu > "$OUT/$tool.swapab.log" 2>&1
    echo "$tool swapab exit $?: $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/$tool.swapab.log" | head -1) $(grep -c ^PASS "$OUT/$tool.swapab.log") PASS"
  done
  ;;
X21)
  quick_suite
  for tool in ${SAN:-memcheck racecheck}; do
    TEST_QUICK=1 TEST_ONLY=layer timeout ${MCT:-120} compute-sanitizer --tool $tool --error-exitcode 9 \
      ./build/test_gpu > "$OUT/$tool.layer.log" 2>&1
    echo "$tool layer exit $?: $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/$tool.layer.log" | head -1) $(grep -c ^PASS "$OUT/$tool.layer.log") PASS"
  done
  e=NVFP4MOE_LAYER_WIDEN
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "${ABENVS:-$e=0,$e=3,$e=0,$e=3,$e=0,$e=3}" --only layer \
    --out "$OUT/ab_layer_widen.json" 2>&1 | grep -E "tune=|layer" | cut -c1-170
  ;;
X21P)
  d="-DNVF_SWDUMMY=1,-DNVF_SWPROBE=2,-DNVF_SWPROBE=3"
  PYTHONUNBUFFERED=1 timeout ${ABT:-400} python3 tools/bench.py --defines "$d,$d" --ms "${MS:-1,8}" --only gemm \
    --out "$OUT/ab_swapab_staging_probe.json" 2>&1 | grep -E "tune=" | cut -c1-170
  ;;
X21S)
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${TT:-240} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests" "$OUT/gemm_tests.log" $? 8
  if grep -q '^PASS test_gemm_every_tile_config' "$OUT/gemm_tests.log" && grep -q '^PASS test_gemm_shapes' "$OUT/gemm_tests.log"; then
    d="-DNVF_SWPF=0,-DNVF_SWPF=1"
    PYTHONUNBUFFERED=1 timeout ${ABT:-300} python3 tools/bench.py --defines "$d,$d" --ms "${MS:-1,8,16}" --only gemm \
      --out "$OUT/ab_swapab_prefetch.json" 2>&1 | grep -E "tune=" | cut -c1-170
  fi
  ;;
X22)
  # twenty-second session: the swap-AB tiles' token rows from the workspace (nvf_sw_widen_tokens)
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${TT:-240} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests" "$OUT/gemm_tests.log" $? 8
  grep -E "cases ran again" "$OUT/gemm_tests.log"
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-120} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests" "$OUT/layer_tests.log" $? 8
  grep -E "layer mode" "$OUT/layer_tests.log"
  for tool in ${SAN:-memcheck racecheck}; do
    TEST_QUICK=1 TEST_ONLY=gemm TEST_CONFIGS=gemm_swapab_t timeout ${MCT:-150} compute-sanitizer --tool $tool --error-exitcode 9 \
      ./build/test_gpu > "$OUT/$tool.gemm.log" 2>&1
    echo "$tool gemm (swap-AB tiles) exit $?: $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/$tool.gemm.log" | head -1) $(grep -c ^PASS "$OUT/$tool.gemm.log") PASS $(grep -c ^FAIL "$OUT/$tool.gemm.log") FAIL"
  done
  ;;
X22A)
  e=NVFP4MOE_TOKEN_PREPASS
  PYTHONUNBUFFERED=1 timeout ${ABT:-450} python3 tools/bench.py --envs "${ABENVS:-$e=0,$e=1,$e=0,$e=1,$e=0,$e=1}" --ms "${MS:-1,8,16}" \
    --only gemm --out "$OUT/ab_swapab_rows.json" 2>&1 | grep -E "tune=" | cut -c1-170
  ;;
X23)
  # next session (written in the twenty-second, not run): the token pre-passes off / on with each arm in its own
  # process (is the after-effect on later GEMMs a same-process effect?), GEMMs and layers (the decode layer row)
  e=NVFP4MOE_TOKEN_PREPASS
  for i in 1 2 3; do
    for v in 0 1; do
      PYTHONUNBUFFERED=1 timeout ${ABT:-120} python3 tools/bench.py --envs "$e=$v" --ms "${MS:-1,4,8,16}" --only gemm,layer \
        --out "$OUT/ab_process_${i}_$v.json" 2>&1 | grep -E "tune=" | cut -c1-170
    done
  done
  ;;
X24)
  # twenty-third session: the quick layer tests (mode 4 now repeats the layer under NVFP4MOE_PDL=1), then the
  # after-effect: each arm in its own process, DeepSeek-V3 GEMM1 (the workspace kernels at m <= 8) then gpt-oss
  # (row-major, no workspace), under the shared-memory carveout switch (NVFP4MOE_SMEM_CARVEOUT, only in commit
  # e3e2f51: without it those arms time the default); then the layers
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-120} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests" "$OUT/layer_tests.log" $? 8
  grep -E "layer mode|PDL" "$OUT/layer_tests.log" | head -12
  e=NVFP4MOE_TOKEN_PREPASS c=NVFP4MOE_SMEM_CARVEOUT
  for i in 1 2; do
    for arm in "$e=0" "$e=1" "$e=0;$c=100" "$e=1;$c=fit" "$e=0;$c=fit"; do
      tag=$(echo "$arm" | tr -c 'a-zA-Z0-9\n' '_')
      PYTHONUNBUFFERED=1 timeout ${ABT:-90} python3 tools/bench.py --envs "$arm" --ms "${MS:-1,8}" --only gemm \
        --shapes ${SHAPES:-dsv3_ep8_gemm1,gpt_oss_gemm1} --out "$OUT/ab_carveout_${i}_$tag.json" 2>&1 | grep -E "tune=" | cut -c1-170
    done
  done
  PYTHONUNBUFFERED=1 timeout ${LABT:-200} python3 tools/bench.py --envs "${LENVS:-$e=0,$e=1,$e=0,$e=1}" --only layer \
    --out "$OUT/ab_layers.json" 2>&1 | grep -E "tune=" | cut -c1-170
  ;;
X24B)
  # twenty-third session: TILED weights with a padded last 128-K step (K % 128 != 0, gpt-oss's K 2880): the
  # relayout tests, the A/B of gpt-oss row-major against TILED (each arm its own process, three times), the
  # layers both ways (twice), then the quick GEMM and layer tests and memcheck on the TILED tests
  TEST_ONLY=relayout timeout 60 ./build/test_gpu > "$OUT/relayout.log" 2>&1
  summ "relayout tests" "$OUT/relayout.log" $? 8
  e=NVFP4MOE_TOKEN_PREPASS=1
  for i in 1 2 3; do
    for lay in row_major preferred; do
      PYTHONUNBUFFERED=1 timeout ${ABT:-90} python3 tools/bench.py --envs "$e" --ms "${MS:-1,8,32,128,512}" --only gemm \
        --shapes gpt_oss_gemm1 --layout $lay --out "$OUT/ab_gptoss_${i}_$lay.json" 2>&1 | grep -E "tune=" | cut -c1-120 | sed "s/\$/ $lay/"
    done
  done
  for i in 1 2; do
    for lay in row_major preferred; do
      PYTHONUNBUFFERED=1 timeout ${LABT:-120} python3 tools/bench.py --envs "$e" --only layer --layout $lay \
        --out "$OUT/ab_layers_${i}_$lay.json" 2>&1 | grep -E "tune=" | cut -c1-120 | sed "s/\$/ $lay/"
    done
  done
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${TT:-200} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests" "$OUT/gemm_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-100} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests" "$OUT/layer_tests.log" $? 8
  grep -E "layer mode" "$OUT/layer_tests.log"
  TEST_QUICK=1 TEST_ONLY=tiled_same_bits timeout ${MCT:-90} compute-sanitizer --tool memcheck --error-exitcode 9 \
    ./build/test_gpu > "$OUT/memcheck.tiled.log" 2>&1
  echo "memcheck tiled exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.tiled.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.tiled.log") PASS"
  ;;
X24C)
  # twenty-third session: an L2 bulk prefetch NVF_WPF steps ahead in the TILED wgmma kernels (only in commit 4d8ca38),
  # A/B of the defines in one process (-DNVF_WPF=0 builds the default kernels under another cache key), then the layers
  PYTHONUNBUFFERED=1 timeout ${ABT:-220} python3 tools/bench.py --defines "${DEFS:--DNVF_WPF=0,-DNVF_WPF=4,-DNVF_WPF=12,-DNVF_WPF=0,-DNVF_WPF=4,-DNVF_WPF=12}" \
    --ms "${MS:-32,128,512}" --only gemm --out "$OUT/ab_wpf.json" 2>&1 | grep -E "tune=" | cut -c1-150
  PYTHONUNBUFFERED=1 timeout ${LABT:-90} python3 tools/bench.py --defines "${LDEFS:--DNVF_WPF=0,-DNVF_WPF=8,-DNVF_WPF=0,-DNVF_WPF=8}" \
    --only layer --out "$OUT/ab_wpf_layers.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X24D)
  # twenty-third session: the layers under the PDL switch (default: the quantization kernels; 1: every kernel; 0: none)
  e=NVFP4MOE_TOKEN_PREPASS=1 p=NVFP4MOE_PDL
  PYTHONUNBUFFERED=1 timeout ${LABT:-120} python3 tools/bench.py --envs "$e,$p=1,$p=0,$e,$p=1,$p=0" \
    --only layer --out "$OUT/ab_pdl_layers.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X25)
  # twenty-fourth session: a part-full token tile of the token-producer kernels issues a smaller wgmma N
  # (NVF_DYNN: 3 the new default; 0 the same code with N fixed; -1 main's kernels, the step's wait at the next
  # step's start): the every-tile GEMM tests of those tiles (every N and its bounds: the masked_m pattern 8) and the
  # quick layer tests, then the A/B of the three, twice in one process: GEMMs with Poisson masked_m, GEMMs
  # with full tiles, the layers
  TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout ${TT:-200} ./build/test_gpu > "$OUT/every_tile_ws.log" 2>&1
  summ "every-tile tests, token-producer tiles" "$OUT/every_tile_ws.log" $? 8
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-100} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests" "$OUT/layer_tests.log" $? 8
  d=-DNVF_DYNN
  D="${DEFS:-$d=-1,$d=0,$d=3,$d=-1,$d=0,$d=3}"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "$D" --poisson --ms "${MS:-16,33,64,128}" \
    --only gemm --out "$OUT/ab_dynn_poisson.json" 2>&1 | grep -E "tune=" | cut -c1-150
  PYTHONUNBUFFERED=1 timeout ${FBT:-100} python3 tools/bench.py --defines "$D" --ms "${FMS:-32,128}" \
    --only gemm --out "$OUT/ab_dynn_full.json" 2>&1 | grep -E "tune=" | cut -c1-150
  PYTHONUNBUFFERED=1 timeout ${LABT:-150} python3 tools/bench.py --defines "$D" --only layer \
    --out "$OUT/ab_dynn_layers.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X25B)
  # twenty-fourth session: the _varn twins (NVF_VARN=1, picked where 0 < expected_m < m_max): the every-tile tests of
  # the token-producer tiles, plain and _varn, the quick GEMM and layer tests, memcheck on the _varn tiles' every-tile
  # tests (quick), then the A/B of NVFP4MOE_VARN=0 / 1: the layers three times, GEMMs with Poisson masked_m twice
  TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout ${TT:-200} ./build/test_gpu > "$OUT/every_tile_ws.log" 2>&1
  summ "every-tile tests, token-producer tiles" "$OUT/every_tile_ws.log" $? 8
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${GT:-200} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests" "$OUT/gemm_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-100} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests" "$OUT/layer_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=_varn timeout ${MCT:-150} compute-sanitizer --tool memcheck \
    --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.varn.log" 2>&1
  echo "memcheck varn every-tile exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.varn.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.varn.log") PASS"
  e=NVFP4MOE_VARN
  PYTHONUNBUFFERED=1 timeout ${LABT:-150} python3 tools/bench.py --envs "$e=0,$e=1,$e=0,$e=1,$e=0,$e=1" --only layer \
    --out "$OUT/ab_varn_layers.json" 2>&1 | grep -E "tune=" | cut -c1-150
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --envs "$e=0,$e=1,$e=0,$e=1" --poisson --ms "${MS:-16,33,64,128}" \
    --only gemm --out "$OUT/ab_varn_poisson.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X25C)
  # twenty-fourth session: which _varn tile for the layers and Poisson GEMMs: the heuristic against each token-producer
  # _varn tile forced (NVFP4MOE_GEMM_CONFIG, both GEMMs of a layer): the layers twice, the GEMMs once (or $GA), one process each
  c=NVFP4MOE_GEMM_CONFIG=gemm_sm90_ws
  A="NVFP4MOE_VARN=1,${c}_t32_wg4_varn,${c}_t48_wg4_varn,${c}_t64_wg4_varn,${c}_t128_wg3_varn"
  PYTHONUNBUFFERED=1 timeout ${LABT:-200} python3 tools/bench.py --envs "$A,$A" --only layer \
    --out "$OUT/ab_varn_tiles_layers.json" 2>&1 | grep -E "tune=" | cut -c1-150
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "${GA:-$A}" --poisson --ms "${MS:-33,64}" \
    --only gemm --out "$OUT/ab_varn_tiles_poisson.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X25D)
  # twenty-fourth session: the moved wait alone on the 128-token tile: its _varn twin forced on full tiles (N stays 128)
  # against the plain tile the heuristic picks, at 128 and 512 tokens, three rounds in one process
  # (as first written the arms were the twin three times, with no plain arm: fixed in the twenty-fifth session)
  p="NVFP4MOE_GEMM_CONFIG=gemm_sm90_ws_t128_wg3" v="NVFP4MOE_GEMM_CONFIG=gemm_sm90_ws_t128_wg3_varn"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "$p,$v,$p,$v,$p,$v" --ms "${MS:-128,512}" \
    --only gemm --out "$OUT/ab_t128_wait.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
W25)
  # twenty-fifth session: the tensor pipe's rate for wgmma RS / SS and mma.sync by N (tools/wgmma_probe.cu; a
  # binary built on the workstation if it runs here, else built here), then X25D
  { [ -x tools/wgmma_probe.bin ] && ./tools/wgmma_probe.bin > "$OUT/wgmma_probe.txt" 2>&1; } || {
    nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 tools/wgmma_probe.cu -o build/wgmma_probe &&
      timeout 120 ./build/wgmma_probe > "$OUT/wgmma_probe.txt" 2>&1; }
  cat "$OUT/wgmma_probe.txt"
  OUT="$OUT" bash "$0" X25D
  ;;
X26)
  # twenty-fifth session: the wgmma descriptors built once a step (-DNVF_DESC1=1, 9 % fewer instructions in the
  # step loop): the quick GEMM and layer tests under it, then the A/B on the GEMMs at $MS tokens and the layers
  # (NVF_DESC1 is gone since the stop's read-through, commit f15b31f has it: today both arms build the same kernels)
  export NVFP4MOE_TUNE_DEFINE=-DNVF_DESC1=1
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${GT:-200} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests, DESC1" "$OUT/gemm_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-100} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests, DESC1" "$OUT/layer_tests.log" $? 8
  unset NVFP4MOE_TUNE_DEFINE
  d="-DNVF_DESC1=0,-DNVF_DESC1=1"
  PYTHONUNBUFFERED=1 timeout ${ABT:-300} python3 tools/bench.py --defines "$d,$d,$d" --ms "${MS:-32,128}" \
    --only gemm,layer --out "$OUT/ab_desc1.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X27)
  # twenty-fifth session: the token-producer tiles on a resident grid (-DNVF_PERSIST=1: one CTA per SM, the next
  # unit's first weight steps loaded under the current unit's last): quick GEMM and layer tests and memcheck on the
  # token-producer tiles' quick every-tile tests under it, then the A/B at $MS tokens with the layers, three rounds
  export NVFP4MOE_TUNE_DEFINE=-DNVF_PERSIST=1
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${GT:-200} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests, PERSIST" "$OUT/gemm_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-100} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests, PERSIST" "$OUT/layer_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout ${MCT:-150} compute-sanitizer --tool memcheck \
    --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.persist.log" 2>&1
  echo "memcheck persist every-tile exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.persist.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.persist.log") PASS $(grep -c ^FAIL "$OUT/memcheck.persist.log") FAIL"
  unset NVFP4MOE_TUNE_DEFINE
  d="-DNVF_PERSIST=0,-DNVF_PERSIST=1"
  PYTHONUNBUFFERED=1 timeout ${ABT:-300} python3 tools/bench.py --defines "$d,$d,$d" --ms "${MS:-32,128}" \
    --only gemm,layer --out "$OUT/ab_persist.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
B25)
  # twenty-fifth session's final kernels: quick GEMM tests (every tile configuration), quick layer tests, the full benchmark
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${GT:-200} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests" "$OUT/gemm_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-100} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests" "$OUT/layer_tests.log" $? 8
  PYTHONUNBUFFERED=1 timeout ${BT:-400} python3 tools/bench.py 2>&1 | tee "$OUT/bench.log" | tail -40 | cut -c1-150
  cp "$(ls -t bench/results/*.json | head -1)" "$OUT/" 2>/dev/null
  # then the 48-token tile forced, one CTA a unit against the resident grid: full tiles at 48 tokens and the layers
  c="NVFP4MOE_GEMM_CONFIG=gemm_sm90_ws_t48_wg4;NVFP4MOE_TUNE_DEFINE=-DNVF_PERSIST"
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --envs "$c=0,$c=1,$c=0,$c=1" --ms 48 --only gemm,layer \
    --out "$OUT/ab_persist_t48.json" 2>&1 | grep -E "tune=" | cut -c1-150
  # and what a unit's epilogue costs: probe 4 (no result stores) against the kernels as they are, at 32 tokens
  e=NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE
  PYTHONUNBUFFERED=1 timeout ${PBT:-90} python3 tools/bench.py --envs "$e=0,$e=4,$e=0,$e=4" --ms 32 --only gemm \
    --shapes qwen3_30b_gemm2,dsv3_ep8_gemm1 --out "$OUT/probe_epilogue.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X28)
  # twenty-fifth session: the 32- and 48-token tiles' results staged through shared memory (stmatrix, whole 16-byte
  # stores; NVF_EPI_SMEM): quick GEMM and layer tests, then the A/B against the scattered stores at 32 tokens and the layers
  TEST_QUICK=1 TEST_ONLY=gemm timeout ${GT:-150} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests" "$OUT/gemm_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-60} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests" "$OUT/layer_tests.log" $? 8
  d="-DNVF_EPI_SMEM=0,-DNVF_EPI_SMEM=1"
  PYTHONUNBUFFERED=1 timeout ${ABT:-120} python3 tools/bench.py --defines "$d,$d" --ms "${MS:-32}" \
    --only gemm,layer --out "$OUT/ab_epi.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
T16)
  timeout ${TT:-470} ./build/test_gpu > "$OUT/test_gpu_full.log" 2>&1
  summ "full GPU suite" "$OUT/test_gpu_full.log" $? 12
  grep -E '^PASS|^FAIL|^SKIP|passed' "$OUT/test_gpu_full.log"
  ;;
T26)
  # twenty-sixth session: the whole GPU suite on the staged-results kernels (stop 31's), then memcheck on the
  # token-producer tiles' quick every-tile tests (their kernels compiled by then)
  TT=${TT:-400} OUT="$OUT" bash "$0" T16
  ws_memcheck ${MCT:-150}
  ;;
X29)
  # twenty-sixth session: why every tile resident lost on the DeepSeek-V3 layer (X27, B25): the layers under the
  # default (32-token tiles resident), all tiles resident (-DNVF_PERSIST=1), all resident with no early trigger of the
  # next kernel (=2), and both with no programmatic dependent launch at all (NVFP4MOE_PDL=0), two rounds, one process;
  # then Nsight Compute source counters of the 32-token tile on Qwen3 GEMM2 at 32 tokens (where a unit costs most)
  e=NVFP4MOE_TUNE_DEFINE=-DNVF_PERSIST
  A="NVFP4MOE_VARN=1,$e=1,$e=2,NVFP4MOE_PDL=0;$e=1,NVFP4MOE_PDL=0"
  PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --envs "$A,$A" --only layer \
    --out "$OUT/ab_persist_pdl_layers.json" 2>&1 | grep -E "tune=" | cut -c1-150
  PROFILE_GEMM_G=128 PROFILE_GEMM_N=2048 PROFILE_GEMM_K=768 GMS=32 OUT="$OUT" bash "$0" S14
  PROFILE_GEMM_G=128 PROFILE_GEMM_N=2048 PROFILE_GEMM_K=768 PROFILE_GEMM_M=32 timeout 100 ncu --clock-control none \
    -k regex:nvf_gemm --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    --section LaunchStats --section Occupancy ./build/profile_kernels > "$OUT/ncu_q2_m32.txt" 2>&1
  grep -E "Duration|Registers Per|Shared Memory Config|Block Limit|Waves|DRAM Throughput|Stall|Warp Cycles" "$OUT/ncu_q2_m32.txt" | head -30 | cut -c1-150
  ;;
X30)
  # twenty-sixth session: the resident 32-token tiles' weights through per-thread cp.async stages (-DNVF_WCP=1,
  # depth 4, wait_group counts): quick GEMM tests of the 32-token tiles and layer tests under it, memcheck on their
  # every-tile tests, the A/B at $MS tokens with the layers (two rounds), Nsight source counters under it (Qwen3 GEMM2)
  export NVFP4MOE_TUNE_DEFINE=-DNVF_WCP=1
  TEST_QUICK=1 TEST_ONLY=gemm TEST_CONFIGS=gemm_sm90_ws_t32 timeout ${GT:-200} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests (32-token tiles), WCP" "$OUT/gemm_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-100} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests, WCP" "$OUT/layer_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws_t32 timeout ${MCT:-120} compute-sanitizer --tool memcheck \
    --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.wcp.log" 2>&1
  echo "memcheck wcp every-tile exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.wcp.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.wcp.log") PASS $(grep -c ^FAIL "$OUT/memcheck.wcp.log") FAIL"
  unset NVFP4MOE_TUNE_DEFINE
  d="-DNVF_WCP=0,-DNVF_WCP=1"
  PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --defines "$d,$d" --ms "${MS:-32}" \
    --only gemm,layer --out "$OUT/ab_wcp.json" 2>&1 | grep -E "tune=" | cut -c1-150
  PYTHONUNBUFFERED=1 timeout ${PBT:-120} python3 tools/bench.py --defines "$d,$d" --poisson --ms 16,32 \
    --only gemm --out "$OUT/ab_wcp_poisson.json" 2>&1 | grep -E "tune=" | cut -c1-150
  if [ "${NCU:-1}" = 1 ]; then
    export NVFP4MOE_TUNE_DEFINE=-DNVF_WCP=1
    PROFILE_GEMM_G=128 PROFILE_GEMM_N=2048 PROFILE_GEMM_K=768 GMS=32 OUT="$OUT" bash "$0" S14
    mv "$OUT/src14_m32.csv.gz" "$OUT/src_wcp_m32.csv.gz"
  fi
  ;;
X31)
  # twenty-sixth session: what the 32-token tile's weight stream gets alone: probe 5 (weights loaded as always, no
  # widening, no MMAs) and probe 1 (no weights, MMAs as always) against the kernel, two rounds at $MS tokens; then the
  # GEMMs with Poisson masked_m at 33 tokens under every tile resident (-DNVF_PERSIST=1) against the default
  e=NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "$e=0,$e=1,$e=5,$e=0,$e=1,$e=5" --ms "${MS:-32}" \
    --only gemm --out "$OUT/probe_weights.json" 2>&1 | grep -E "tune=" | cut -c1-150
  d="-DNVF_PERSIST=0,-DNVF_PERSIST=1"
  PYTHONUNBUFFERED=1 timeout ${PBT:-150} python3 tools/bench.py --defines "$d,$d" --poisson --ms 33 \
    --only gemm --out "$OUT/ab_persist_poisson33.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X32)
  # twenty-sixth session: ping-pong consumer pairs on the resident 32-token tiles (-DNVF_PINGPONG=1): quick GEMM tests
  # of the 32-token tiles and the layer tests under it, then the A/B at $MS tokens with the layers (two rounds) and
  # with Poisson masked_m at 16 and 32 tokens
  export NVFP4MOE_TUNE_DEFINE=-DNVF_PINGPONG=1
  TEST_QUICK=1 TEST_ONLY=gemm TEST_CONFIGS=gemm_sm90_ws_t32 timeout ${GT:-150} ./build/test_gpu > "$OUT/gemm_tests.log" 2>&1
  summ "quick GEMM tests (32-token tiles), PINGPONG" "$OUT/gemm_tests.log" $? 8
  TEST_QUICK=1 TEST_ONLY=layer timeout ${LT:-80} ./build/test_gpu > "$OUT/layer_tests.log" 2>&1
  summ "quick layer tests, PINGPONG" "$OUT/layer_tests.log" $? 8
  unset NVFP4MOE_TUNE_DEFINE
  d="-DNVF_PINGPONG=0,-DNVF_PINGPONG=1"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "$d,$d" --ms "${MS:-32}" \
    --only gemm,layer --out "$OUT/ab_pingpong.json" 2>&1 | grep -E "tune=" | cut -c1-150
  PYTHONUNBUFFERED=1 timeout ${PBT:-100} python3 tools/bench.py --defines "$d" --poisson --ms 16,32 \
    --only gemm --out "$OUT/ab_pingpong_poisson.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X33)
  # twenty-sixth session: where the 32-token tile's loop goes without its weight path: Nsight Compute source counters
  # of probe 1 (-DNVF_WSPROBE=1) on Qwen3 GEMM1 at 32 tokens, then pipe and issue counters of probe 1 and the kernel
  M="gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
  export PROFILE_GEMM_G=128 PROFILE_GEMM_N=1536 PROFILE_GEMM_K=2048 PROFILE_GEMM_M=32
  NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE=1 GMS=32 OUT="$OUT" bash "$0" S14
  mv "$OUT/src14_m32.csv.gz" "$OUT/src_probe1_q1_m32.csv.gz"; rm -f "$OUT/ncu14_src_m32.txt"
  for e in 0 1; do
    NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE=$e timeout 100 ncu --clock-control none -k regex:nvf_gemm --launch-skip 2 --launch-count 1 \
      --metrics "$M" ./build/profile_kernels > "$OUT/ncu_metrics_probe$e.txt" 2>&1
    echo "probe $e:"; grep -E "__" "$OUT/ncu_metrics_probe$e.txt" | cut -c1-150
  done
  ;;
X34)
  # twenty-sixth session: probe 6's timeline of the resident 32-token tile (-DNVF_WSPROBE=6: four %clock values a
  # step per consumer warpgroup) on Qwen3 GEMM1, Qwen3 GEMM2 and DeepSeek-V3 GEMM1 at 32 tokens (tools/profile_kernels
  # PROFILE_TRACE, summarised by tools/ws_trace.py), then what the probe's clocks cost: probe 6 against the kernel
  for sh in "q1 128 1536 2048" "q2 128 2048 768" "d1 32 4096 7168"; do
    set -- $sh
    NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE=6 PROFILE_GEMM_G=$2 PROFILE_GEMM_N=$3 PROFILE_GEMM_K=$4 PROFILE_GEMM_M=32 \
      PROFILE_TRACE=/tmp/tr_$1.bin timeout 120 ./build/profile_kernels | tail -1
    gzip -c /tmp/tr_$1.bin > "$OUT/trace_$1.bin.gz" && python3 tools/ws_trace.py "$OUT/trace_$1.bin.gz" | tee "$OUT/trace_$1.txt"
  done
  e=NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE
  PYTHONUNBUFFERED=1 timeout ${ABT:-90} python3 tools/bench.py --envs "$e=0,$e=6" --ms 32 --only gemm \
    --shapes qwen3_30b_gemm1,qwen3_30b_gemm2,dsv3_ep8_gemm1 --out "$OUT/probe6_cost.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X36)
  # twenty-seventh session: fewer instructions a step. Default: each MMA's descriptor one uniform add from the
  # step's first (every wgmma module); -DNVF_DESC_OLD=1 the old one built from each address; -DNVF_WFAST=1 also the
  # resident 32-token tile's weight loads without predicates or zero fills where every load is in bounds. Quick
  # GEMM tests of the token-producer tiles under the default and WFAST, the layer tests, then the A/B at 32 and
  # 128 tokens with the layers, two rounds, one process
  PDEFS="-DNVF_DESC_OLD=0 -DNVF_DESC_OLD=1 -DNVF_WFAST=1" precompile_defs
  PDEFS="-DNVF_DESC_OLD=0 -DNVF_WFAST=1" tests_under_defs "quick gemm tests (token-producer tiles)" gemm gemm ${GT:-200} \
    TEST_CONFIGS=gemm_sm90_ws
  PDEFS="-DNVF_DESC_OLD=0 -DNVF_WFAST=1" tests_under_defs "quick layer tests" layer layer ${LT:-100}
  d="-DNVF_DESC_OLD=0,-DNVF_DESC_OLD=1,-DNVF_WFAST=1"
  PYTHONUNBUFFERED=1 timeout ${ABT:-300} python3 tools/bench.py --defines "$d,$d" --ms "${MS:-32,128}" \
    --only gemm,layer --out "$OUT/ab_desc.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X37)
  # twenty-seventh session: TILED weights with their codes re-encoded (the default) against the plain codes
  # (-DNVF_WENC=0, relayout and GEMMs together): quick tests that read TILED weights (relayout, same bits, every
  # tile, layers) under the default, then the A/B at 1, 8, 32 and 128 tokens with the layers, two rounds
  PDEFS="-DNVF_WENC=1 -DNVF_WENC=0" precompile_defs
  PDEFS="-DNVF_WENC=1" tests_under_defs "quick tiled tests" tiled relayout ${GT:-60}
  PDEFS="-DNVF_WENC=1" tests_under_defs "quick same-bits tests" same gemm_tiled_same ${GT:-60}
  PDEFS="-DNVF_WENC=1" tests_under_defs "quick every-tile tests" every every_tile ${GT:-200}
  PDEFS="-DNVF_WENC=1" tests_under_defs "quick layer tests" layer layer ${LT:-100}
  d="-DNVF_WENC=1,-DNVF_WENC=0"
  PYTHONUNBUFFERED=1 timeout ${ABT:-300} python3 tools/bench.py --defines "$d,$d" --ms "${MS:-1,8,32,128}" \
    --only gemm,layer --out "$OUT/ab_wenc.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X38)
  # twenty-eighth session: the weights' 16-byte loads as ld.relaxed.gpu (the default; ptxas then issues the
  # 32-token tile's step-0 loads in step 0) against ld.global.nc (-DNVF_WLDG=0, where ptxas sinks them into
  # step 1): quick tests of every tile and the layers under the default, the A/B at 1, 8, 32 and 128 tokens with
  # the layers, two rounds, then probe 6 per warp on Qwen3 GEMM1 at 32 tokens under the default (tools/ws_trace.py)
  PDEFS="-DNVF_WLDG=1 -DNVF_WLDG=0" precompile_defs
  PDEFS="-DNVF_WLDG=1" tests_under_defs "quick every-tile tests" every every_tile ${GT:-200}
  PDEFS="-DNVF_WLDG=1" tests_under_defs "quick GEMM shape tests" shapes gemm_shapes ${GT:-120}
  PDEFS="-DNVF_WLDG=1" tests_under_defs "quick layer tests" layer layer ${LT:-100}
  d="-DNVF_WLDG=1,-DNVF_WLDG=0"
  PYTHONUNBUFFERED=1 timeout ${ABT:-300} python3 tools/bench.py --defines "$d,$d" --ms "${MS:-1,8,32,128}" \
    --only gemm,layer --out "$OUT/ab_wldg.json" 2>&1 | grep -E "tune=" | cut -c1-150
  NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE=6 PROFILE_GEMM_G=128 PROFILE_GEMM_N=1536 PROFILE_GEMM_K=2048 PROFILE_GEMM_M=32 \
    PROFILE_TRACE=/tmp/tr_q1.bin timeout 60 ./build/profile_kernels | tail -1
  gzip -c /tmp/tr_q1.bin > "$OUT/trace_wldg_q1.bin.gz" && python3 tools/ws_trace.py "$OUT/trace_wldg_q1.bin.gz" > "$OUT/trace_wldg_q1.txt"
  tail -30 "$OUT/trace_wldg_q1.txt"
  ;;
X38B)
  # twenty-eighth session, after X38: strong loads in the 32-token tiles only (the other modules as before X38):
  # quick tests of every tile and the layers under the default, then the A/B at 32 tokens with the layers,
  # three rounds in alternating order (=1 =0, =0 =1, =1 =0)
  PDEFS="-DNVF_WLDG=1 -DNVF_WLDG=0" precompile_defs
  PDEFS="-DNVF_WLDG=1" tests_under_defs "quick every-tile tests" every every_tile ${GT:-200}
  PDEFS="-DNVF_WLDG=1" tests_under_defs "quick layer tests" layer layer ${LT:-100}
  PYTHONUNBUFFERED=1 timeout ${ABT:-420} python3 tools/bench.py --ms "${MS:-32}" --only gemm,layer \
    --defines "-DNVF_WLDG=1,-DNVF_WLDG=0,-DNVF_WLDG=0,-DNVF_WLDG=1,-DNVF_WLDG=1,-DNVF_WLDG=0" \
    --out "$OUT/ab_wldg32.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X39)
  # twenty-eighth session: both SFs of a piece in one bf16x2 (-DNVF_SFPACK=1, the default) against two registers
  # (=0), every GEMM module: quick tests (every tile, GEMM shapes, layers) under the default, then the A/B at 1, 8,
  # 32 and 128 tokens with the layers, two rounds in alternating order
  PDEFS="-DNVF_SFPACK=1 -DNVF_SFPACK=0" precompile_defs
  PDEFS="-DNVF_SFPACK=1" tests_under_defs "quick every-tile tests" every every_tile ${GT:-200}
  PDEFS="-DNVF_SFPACK=1" tests_under_defs "quick GEMM shape tests" shapes gemm_shapes ${GT:-120}
  PDEFS="-DNVF_SFPACK=1" tests_under_defs "quick layer tests" layer layer ${LT:-100}
  PYTHONUNBUFFERED=1 timeout ${ABT:-330} python3 tools/bench.py --ms "${MS:-1,8,32,128}" --only gemm,layer \
    --defines "-DNVF_SFPACK=1,-DNVF_SFPACK=0,-DNVF_SFPACK=0,-DNVF_SFPACK=1" \
    --out "$OUT/ab_sfpack.json" 2>&1 | grep -E "tune=" | cut -c1-150 | tail -20
  ;;
X40)
  # twenty-eighth session, last call: the token producers' widening on two SF registers a piece (then the default; only
  # the pre-pass packed) against packed everywhere (-DNVF_PPACK=1, the SASS X39 and F28 ran): quick every-tile tests
  # under the default (each case with and without a workspace), then the GEMMs without a workspace at 32 and 128
  # tokens and with one at 32, one round each arm, alternating
  PDEFS="-DNVF_PPACK=0 -DNVF_PPACK=1" precompile_defs
  PDEFS="-DNVF_PPACK=0" tests_under_defs "quick every-tile tests" every every_tile ${GT:-120}
  NVFP4MOE_BENCH_NO_WS=1 PYTHONUNBUFFERED=1 timeout 120 python3 tools/bench.py --ms 32,128 --only gemm \
    --defines "-DNVF_PPACK=0,-DNVF_PPACK=1" --out "$OUT/ab_ppack_nows.json" 2>&1 | grep -E "tune=" | cut -c1-150
  PYTHONUNBUFFERED=1 timeout 80 python3 tools/bench.py --ms 32 --only gemm \
    --defines "-DNVF_PPACK=1,-DNVF_PPACK=0" --out "$OUT/ab_ppack_ws.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X41)
  # written in the twenty-eighth session for the next: the token producers on two SF registers a piece
  # (-DNVF_PPACK=0) against packed (=1, the default): quick every-tile and layer tests under =0, then the GEMMs
  # without a workspace (NVFP4MOE_BENCH_NO_WS=1) and with one, at 32 and 128 tokens, rounds in both orders
  PDEFS="-DNVF_PPACK=0 -DNVF_PPACK=1" precompile_defs
  PDEFS="-DNVF_PPACK=0" tests_under_defs "quick every-tile tests" every every_tile ${GT:-250}
  PDEFS="-DNVF_PPACK=0" tests_under_defs "quick layer tests" layer layer ${LT:-100}
  d="-DNVF_PPACK=0,-DNVF_PPACK=1,-DNVF_PPACK=1,-DNVF_PPACK=0"
  NVFP4MOE_BENCH_NO_WS=1 PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --ms 32,128 --only gemm \
    --defines "$d" --out "$OUT/ab_ppack_nows.json" 2>&1 | grep -E "tune=" | cut -c1-150
  GDEFS="$d" gemm_ab # with a workspace, and the layers: $OUT/ab_gemm.json
  ;;
X42)
  # written in the twenty-eighth session for the next: the 32-token tile's weight stream alone with two steps in
  # flight (probe 5) and four (=54), against the kernel (=0), two rounds at 32 tokens
  e=NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "$e=0,$e=5,$e=54,$e=54,$e=5,$e=0" --ms "${MS:-32}" \
    --only gemm --out "$OUT/probe_depth.json" 2>&1 | grep -E "tune=" | cut -c1-150
  ;;
X43)
  # twenty-ninth session, first call: the kernels under the default, -DNVF_PPACK=0 and probes 5 / 54 precompiled;
  # X42 (probe depth, timing alone on the GPU); then, in parallel (correctness only): the quick every-tile and layer
  # tests under -DNVF_PPACK=0, and memcheck on the token-producer tiles' quick every-tile tests under the default
  # (the kernels changed in stops 33-34 had no memcheck)
  t0=$(date +%s)
  PDEFS="-DNVF_PPACK=1 -DNVF_PPACK=0 -DNVF_WSPROBE=0 -DNVF_WSPROBE=5 -DNVF_WSPROBE=54" precompile_defs
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  OUT="$OUT" bash "$0" X42
  echo "X42 done at $(( $(date +%s) - t0 )) s"
  (PDEFS="-DNVF_PPACK=0" tests_under_defs "quick every-tile tests" every every_tile ${GT:-300}) > /tmp/x43a.txt 2>&1 &
  (PDEFS="-DNVF_PPACK=0" tests_under_defs "quick layer tests" layer layer ${LT:-300}) > /tmp/x43b.txt 2>&1 &
  ws_memcheck ${MCT:-300} > /tmp/x43c.txt 2>&1 &
  wait
  cat /tmp/x43a.txt /tmp/x43b.txt /tmp/x43c.txt
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X44)
  # twenty-ninth session, second call: X41's timings (its tests ran in X43): the GEMMs without a workspace at 32 and
  # 128 tokens, then with one and the layers (gemm_ab), -DNVF_PPACK=0 against =1, rounds in both orders
  PDEFS="-DNVF_PPACK=0 -DNVF_PPACK=1" precompile_defs
  d="-DNVF_PPACK=0,-DNVF_PPACK=1,-DNVF_PPACK=1,-DNVF_PPACK=0"
  NVFP4MOE_BENCH_NO_WS=1 PYTHONUNBUFFERED=1 timeout ${ABT:-220} python3 tools/bench.py --ms 32,128 --only gemm \
    --defines "$d" --out "$OUT/ab_ppack_nows.json" 2>&1 | grep -E "tune=" | cut -c1-110
  GDEFS="$d" gemm_ab | cut -c1-110
  ;;
X45)
  # twenty-ninth session: the step's loads without predicates or zero fills (-DNVF_WKFULL=1, a trial: right only
  # where K % 256 == 0, so timed on the four GEMMs and three layers with K % 256 == 0, not gpt-oss) against the
  # default, at 32 and 128 tokens, rounds in both orders; then the whole GPU suite (not quick) on the default
  # (the producers now on two SF registers) with memcheck on the token-producer tiles' quick every-tile tests
  # alongside
  t0=$(date +%s)
  PDEFS="-DNVF_WKFULL=0 -DNVF_WKFULL=1" precompile_defs
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  d="-DNVF_WKFULL=1,-DNVF_WKFULL=0,-DNVF_WKFULL=0,-DNVF_WKFULL=1"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer,dsv3_ep8_layer_decode PYTHONUNBUFFERED=1 timeout ${ABT:-200} \
    python3 tools/bench.py --defines "$d" --ms 32,128 --only gemm,layer \
    --shapes qwen3_30b_gemm1,qwen3_30b_gemm2,dsv3_ep8_gemm1,dsv3_ep8_gemm2 --out "$OUT/ab_wkfull.json" 2>&1 | grep -E "tune=" | cut -c1-100
  echo "A/B done at $(( $(date +%s) - t0 )) s"
  suite_and_ws_memcheck ${TT:-380} x45
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X46)
  # twenty-ninth session: the _k256 twins (K % 256 == 0, TILED) as the host now picks them: precompiled, then the
  # whole GPU suite (not quick; the every-tile test has two K % 256 cases) with memcheck on the token-producer
  # tiles' quick every-tile tests alongside, then the A/B of NVFP4MOE_K256=1 (default) against =0 at 32 and 128
  # tokens with the layers, rounds in both orders (gpt-oss, K 2880, runs the general modules in both: a control)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  suite_and_ws_memcheck ${TT:-330} x46
  echo "tests done at $(( $(date +%s) - t0 )) s"
  e=NVFP4MOE_K256
  PYTHONUNBUFFERED=1 timeout ${ABT:-170} python3 tools/bench.py --envs "$e=1,$e=0,$e=0,$e=1" --ms 32,128 --only gemm,layer \
    --out "$OUT/ab_k256.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -4
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X47)
  # twenty-ninth session, last call: the GPU tests the whole-suite run of X46 did not reach before its timeout (it
  # stopped in the every-tile test, which memcheck had passed alongside), each its own process, in parallel
  for t in same_bits moe_layer widened_tokens graph_replay group_isolation relayout self_test threads; do
    (TEST_ONLY=$t timeout ${TT:-170} ./build/test_gpu > "$OUT/t_$t.log" 2>&1; echo $? > "/tmp/rc_$t") &
  done
  wait
  for t in same_bits moe_layer widened_tokens graph_replay group_isolation relayout self_test threads; do
    summ "$t" "$OUT/t_$t.log" "$(cat /tmp/rc_$t)" 4
  done
  ;;
X48)
  # written in the twenty-ninth session for the next: the swap-AB tiles' weight loads without predicates
  # (-DNVF_WKFULL=1, a trial: right only where K % 256 == 0 and N % 16 == 0) against the default at 1 and 8 tokens
  # on the four GEMMs with K % 256 == 0, rounds in both orders; NVFP4MOE_K256=0 in both arms, so that no _k256
  # twin (its own -DNVF_WKFULL=1) meets the define's =0 (the token-producer tiles do not run at these token counts)
  PDEFS="-DNVF_WKFULL=0 -DNVF_WKFULL=1" precompile_defs
  d="-DNVF_WKFULL=1,-DNVF_WKFULL=0,-DNVF_WKFULL=0,-DNVF_WKFULL=1"
  NVFP4MOE_K256=0 PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "$d" --ms 1,8 --only gemm \
    --shapes qwen3_30b_gemm1,qwen3_30b_gemm2,dsv3_ep8_gemm1,dsv3_ep8_gemm2 --out "$OUT/ab_swapab_wkfull.json" 2>&1 | grep -E "tune=" | cut -c1-100
  ;;
X49)
  # thirtieth session: the whole GPU suite in one process on the current build (the _k256_tiled twins included;
  # $TT s at most) and, alongside, racecheck on the token-producer tiles' quick every-tile tests, which run the twins
  # in their TILED K % 256 cases ($RCT s at most; TEST_CONFIGS=_k256 matches no base configuration: 0 checks, FAIL)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  (TT=${TT:-420} OUT="$OUT" bash "$0" T16) > /tmp/x49a.txt 2>&1 &
  (TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=${RCC:-gemm_sm90_ws} timeout ${RCT:-420} compute-sanitizer --tool racecheck \
    --error-exitcode 9 ./build/test_gpu > "$OUT/racecheck.k256.log" 2>&1
   echo "racecheck k256 every-tile exit $?: $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/racecheck.k256.log" | head -1) $(grep -c ^PASS "$OUT/racecheck.k256.log") PASS $(grep -c ^FAIL "$OUT/racecheck.k256.log") FAIL") > /tmp/x49b.txt 2>&1 &
  wait
  cat /tmp/x49a.txt /tmp/x49b.txt
  ;;
X49b)
  # thirtieth session, second call: X48, then racecheck alone on the token-producer tiles' quick every-tile tests
  OUT="$OUT" bash "$0" X48
  TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout ${RCT:-300} compute-sanitizer --tool racecheck \
    --error-exitcode 9 ./build/test_gpu > "$OUT/racecheck.ws.log" 2>&1
  echo "racecheck ws every-tile exit $?: $(grep -hE 'RACECHECK SUMMARY' "$OUT/racecheck.ws.log" | head -1) $(grep -c ^PASS "$OUT/racecheck.ws.log") PASS $(grep -c ^FAIL "$OUT/racecheck.ws.log") FAIL"
  ;;
X50)
  # thirtieth session: the 8-token swap-AB tile's _k256_tiled twin (X48's -DNVF_WKFULL=1 as a module the host picks
  # on TILED weights with K % 256 == 0): precompiled; its GEMM tests (every-tile for the swap-AB tiles in full,
  # shapes, layers) with memcheck on the 8-token tile's quick every-tile tests alongside; the A/B of
  # NVFP4MOE_K256=1 (default) against =0 at 1 and 8 tokens with the decode layer, rounds in both orders (gpt-oss,
  # K 2880, and its layer, which runs the 16-token tile, are controls); then the full benchmark (I)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (TEST_ONLY=every_tile TEST_CONFIGS=gemm_swapab timeout ${TT:-200} ./build/test_gpu > "$OUT/t_every_swapab.log" 2>&1
   summ "every-tile swap-AB (full)" "$OUT/t_every_swapab.log" $? 6) > /tmp/x50a.txt 2>&1 &
  (for t in gemm_shapes moe_layer; do TEST_ONLY=$t timeout ${TT:-200} ./build/test_gpu > "$OUT/t_$t.log" 2>&1
   summ "$t" "$OUT/t_$t.log" $? 4; done) > /tmp/x50b.txt 2>&1 &
  (TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_swapab_t8 timeout ${TT:-200} compute-sanitizer --tool memcheck \
    --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.t8.log" 2>&1
   echo "memcheck t8 every-tile exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.t8.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.t8.log") PASS $(grep -c ^FAIL "$OUT/memcheck.t8.log") FAIL") > /tmp/x50c.txt 2>&1 &
  wait
  cat /tmp/x50a.txt /tmp/x50b.txt /tmp/x50c.txt
  echo "tests done at $(( $(date +%s) - t0 )) s"
  e=NVFP4MOE_K256
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer_decode,gpt_oss_layer PYTHONUNBUFFERED=1 timeout ${ABT:-170} python3 tools/bench.py \
    --envs "$e=1,$e=0,$e=0,$e=1" --ms 1,8 --only gemm,layer --out "$OUT/ab_k256_t8.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -4
  echo "A/B done at $(( $(date +%s) - t0 )) s"
  OUT="$OUT" bash "$0" I
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X51)
  # thirtieth session: the F16 operand trial (-DNVF_F16=1: both operands widened to F16 * 2^-14, F16 MMAs, the SF
  # in one cvt; TILED weights encoded for it, so the GEMM tests take their TILED weights from the GPU relayout,
  # TEST_GPU_RELAYOUT=1): both arms precompiled, the GEMM and layer tests under =1, then the A/B against =0 at
  # 1, 8, 32 and 128 tokens with the layers, rounds in both orders
  t0=$(date +%s)
  PDEFS="-DNVF_F16=0 -DNVF_F16=1" precompile_defs
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  PDEFS="-DNVF_F16=1" tests_under_defs "gemm tests" f16g gemm ${TT:-200} TEST_GPU_RELAYOUT=1 &
  PDEFS="-DNVF_F16=1" tests_under_defs "layer tests" f16l moe_layer ${TT:-200} TEST_GPU_RELAYOUT=1 &
  PDEFS="-DNVF_F16=1" tests_under_defs "widened tokens" f16w widened ${TT:-200} TEST_GPU_RELAYOUT=1 &
  wait
  echo "tests done at $(( $(date +%s) - t0 )) s"
  d="-DNVF_F16=1,-DNVF_F16=0,-DNVF_F16=0,-DNVF_F16=1"
  PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --defines "$d" --ms ${MS:-1,8,32,128} --only gemm,layer \
    --out "$OUT/ab_f16.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -4
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X52)
  # thirtieth session, last call: F16 operands as the default of the TILED modules (0.5.0): precompiled, the whole
  # GPU suite in its quick form, the full benchmark (I), then (what time is left) the A/B of the default against
  # -DNVF_F16=0 (everything as 0.4.2) at 1 and 32 tokens with the layers, rounds in both orders
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  TEST_QUICK=1 timeout ${TT:-200} ./build/test_gpu > "$OUT/test_gpu_quick.log" 2>&1
  summ "quick GPU suite" "$OUT/test_gpu_quick.log" $? 19
  grep -E '^PASS|^FAIL|^SKIP' "$OUT/test_gpu_quick.log" | cut -c1-100
  echo "tests done at $(( $(date +%s) - t0 )) s"
  OUT="$OUT" bash "$0" I
  echo "benchmark done at $(( $(date +%s) - t0 )) s"
  d="-DNVF_Y=1,-DNVF_F16=0,-DNVF_F16=0,-DNVF_Y=2"
  PYTHONUNBUFFERED=1 timeout ${ABT:-100} python3 tools/bench.py --defines "$d" --ms ${MS:-1,32} --only gemm,layer \
    --out "$OUT/ab_f16_default.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -4
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X53)
  # thirty-first session: 0.5.0's (F16 TILED) tests in full: the whole GPU suite in one process ($TT s at most) and,
  # alongside, racecheck on the token-producer tiles' quick every-tile tests, and memcheck on the quick widened-token
  # and layer tests (the F16 layer quantizers, the widened test's TILED cases), then on the token-producer tiles'
  # quick every-tile tests
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (TT=${TT:-440} OUT="$OUT" bash "$0" T16) > /tmp/x53a.txt 2>&1 &
  (TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout ${RCT:-440} compute-sanitizer --tool racecheck \
    --error-exitcode 9 ./build/test_gpu > "$OUT/racecheck.ws.log" 2>&1
   echo "racecheck ws every-tile exit $?: $(grep -hE 'RACECHECK SUMMARY' "$OUT/racecheck.ws.log" | head -1) $(grep -c ^PASS "$OUT/racecheck.ws.log") PASS $(grep -c ^FAIL "$OUT/racecheck.ws.log") FAIL") > /tmp/x53b.txt 2>&1 &
  (for t in widened moe_layer; do
     TEST_QUICK=1 TEST_ONLY=$t timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.$t.log" 2>&1
     echo "memcheck $t exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.$t.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.$t.log") PASS $(grep -c ^FAIL "$OUT/memcheck.$t.log") FAIL"
   done
   ws_memcheck $(( ${MCT:-500} - ($(date +%s) - t0) ))) > /tmp/x53c.txt 2>&1 &
  wait
  cat /tmp/x53a.txt /tmp/x53b.txt /tmp/x53c.txt
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X54)
  # thirty-first session: F16 (0.5.0 default) against -DNVF_F16=0 (0.4.2) again: the layers (X52's layer A/B was
  # wrong for two layers), the GEMMs without a workspace at 1, 8 and 32 tokens (the token producers widen plain codes,
  # 16 operations a word under F16), rounds in both orders; then each kernel's time alone (ncu, serialized, no PDL
  # overlap) on DeepSeek-V3 GEMM1 at 1 token with its workspace under each arm: the token pre-pass and the GEMM
  t0=$(date +%s)
  PDEFS="-DNVF_F16=0 -DNVF_Y=1" precompile_defs
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  d="-DNVF_Y=1,-DNVF_F16=0,-DNVF_F16=0,-DNVF_Y=2"
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --defines "$d" --only layer \
    --out "$OUT/ab_f16_layers.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -4
  echo "layer A/B done at $(( $(date +%s) - t0 )) s"
  NVFP4MOE_BENCH_NO_WS=1 PYTHONUNBUFFERED=1 timeout ${ABT2:-150} python3 tools/bench.py --defines "$d" --ms 1,8,32 \
    --only gemm --out "$OUT/ab_f16_nows.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -4
  echo "no-workspace A/B done at $(( $(date +%s) - t0 )) s"
  for def in -DNVF_Y=1 -DNVF_F16=0 -DNVF_Y=1 -DNVF_F16=0; do
    NVFP4MOE_TUNE_DEFINE=$def PROFILE_GEMM_M=1 timeout 90 ncu --clock-control none -k "regex:nvf_(gemm|sw_)" --launch-skip 2 \
      --launch-count 6 --metrics gpu__time_duration.sum ./build/profile_kernels > "/tmp/ncu_d1$def.txt" 2>&1
    echo "ncu $def exit $?"; grep -E "^  nvf_|gpu__time_duration" "/tmp/ncu_d1$def.txt" | sed 's/(NvfGemmParams.*//' | paste - - | tr -s ' ' | cut -c1-100
    cp "/tmp/ncu_d1$def.txt" "$OUT/"
  done
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X55)
  # thirty-first session: DeepSeek-V3 GEMM1 at 1 token, 2-3.5 % slower under F16 (X51, X52): the A/B with and
  # without programmatic dependent launch (NVFP4MOE_PDL=0; the pre-pass and the GEMM then do not overlap), at 1 and
  # 8 tokens with DeepSeek-V3 GEMM2 as a control, rounds in both orders; then each kernel alone under ncu
  # (serialized): the token pre-pass and the GEMM under each arm, 3 launches each
  t0=$(date +%s)
  PDEFS="-DNVF_F16=0 -DNVF_Y=1" precompile_defs
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  e=NVFP4MOE_TUNE_DEFINE
  A="$e=-DNVF_Y=1,$e=-DNVF_F16=0,$e=-DNVF_Y=1;NVFP4MOE_PDL=0,$e=-DNVF_F16=0;NVFP4MOE_PDL=0"
  B="$e=-DNVF_F16=0;NVFP4MOE_PDL=0,$e=-DNVF_Y=1;NVFP4MOE_PDL=0,$e=-DNVF_F16=0,$e=-DNVF_Y=1"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --envs "$A,$B" --ms 1,8 --only gemm \
    --shapes dsv3_ep8_gemm1,dsv3_ep8_gemm2 --out "$OUT/ab_f16_pdl.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -4
  echo "A/B done at $(( $(date +%s) - t0 )) s"
  for arm in Y_1 F16_0 Y_1 F16_0; do
    NVFP4MOE_TUNE_DEFINE=-DNVF_${arm/_/=} PROFILE_GEMM_M=1 timeout 90 ncu --clock-control none -k "regex:nvf_(gemm|sw_)" \
      --launch-skip 2 --launch-count 6 --metrics gpu__time_duration.sum ./build/profile_kernels > "$OUT/ncu_d1_$arm.txt" 2>&1
    echo "ncu $arm exit $?: $(awk '/^  nvf_/{n=$1} /gpu__time_duration/{printf "%s %s %s; ", n, $(NF-1), $NF}' "$OUT/ncu_d1_$arm.txt")"
    mv "$OUT/ncu_d1_$arm.txt" "$OUT/ncu_d1_${arm}_$(date +%s%N).txt"
  done
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X56)
  # thirty-first session: X55's ncu times the F16 GEMM 2 % faster alone than -DNVF_F16=0 on DeepSeek-V3 GEMM1 at 1
  # token, while the graph-timed A/B has it 3 % slower. Clocks and power under each arm: the GEMM back to back
  # ($REPS launches, tools/profile_kernels, PDL on) with nvidia-smi sampling every 50 ms, arms in both orders, at 1
  # and 8 tokens
  t0=$(date +%s)
  PDEFS="-DNVF_F16=0 -DNVF_Y=1" precompile_defs
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  for m in 1 8; do
    for arm in Y_1 F16_0 F16_0 Y_1; do
      nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits \
        -lms 50 > /tmp/smi.txt 2>&1 &
      sp=$!
      r=$(NVFP4MOE_TUNE_DEFINE=-DNVF_${arm/_/=} PROFILE_GEMM_M=$m PROFILE_GEMM_REPS=${REPS:-20000} timeout 60 \
        ./build/profile_kernels | grep back)
      kill $sp; wait $sp 2>/dev/null
      echo "m $m $arm: $r | $(awk -F', ' 'NR > 4 && $2 > 300 {c += $1; p += $2; n++; t += $3} END {if (n) printf "%d samples: SM %.0f MHz, %.0f W, %.0f C", n, c / n, p / n, t / n}' /tmp/smi.txt)"
    done
  done
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X57)
  # thirty-first session: the TILED wgmma tiles' second weight row at the load's immediate offset (one address
  # register a step for both rows, NVF_LDG_ROW8; the swap-AB tiles' machine code is unchanged): both arms
  # precompiled, the whole quick GPU suite on the new default, then the A/B against -DNVF_WIMM=0 (the form before)
  # at 8 (a control: the swap-AB tiles), 32 and 128 tokens with the layers, rounds in both orders
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_WIMM=0 -DNVF_Y=1" precompile_defs
  wait; tail -1 /tmp/pc_default.log
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  TEST_QUICK=1 timeout ${TT:-240} ./build/test_gpu > "$OUT/test_gpu_quick.log" 2>&1
  summ "quick GPU suite" "$OUT/test_gpu_quick.log" $? 19
  grep -E '^PASS|^FAIL|^SKIP' "$OUT/test_gpu_quick.log" | cut -c1-100
  echo "tests done at $(( $(date +%s) - t0 )) s"
  d="-DNVF_Y=1,-DNVF_WIMM=0,-DNVF_WIMM=0,-DNVF_Y=2"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "$d" --ms ${MS:-8,32,128} --only gemm,layer \
    --out "$OUT/ab_wimm.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -4
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X58)
  # thirty-second session: the SiLU kernels' nvf_silu_mul inlined and nvf_exp's three range tests folded into one
  # branch (bit-preserving; -DNVF_SILU_CALL=1 builds 0.5.1's form, hash-checked). Precompiled under each arm, the
  # SiLU quantizer tests in full, the widened-token, layer and software-conversion tests (quick), memcheck on the
  # SiLU tests (quick); the A/B on the quantizer rows and the layers against 0.5.1's form and the timing probe
  # -DNVF_EXPFMA=1 (fused polynomial: not the host's bits), rounds in both orders; then the DeepSeek-V3 GEMMs with
  # Poisson(33) masked_m (as in the layer) for the layer's breakdown. (NVF_EXPFMA was removed after this run, in the
  # same commit as the inlining: the define now builds the default, so its arm would time identical builds.)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_SILU_CALL=1 -DNVF_EXPFMA=1 -DNVF_Y=1" precompile_defs
  wait; tail -1 /tmp/pc_default.log
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (timeout 200 env TEST_ONLY=silu ./build/test_gpu > "$OUT/test_silu_full.log" 2>&1; echo $? > /tmp/rc_silu) &
  (rc=0; for t in widened moe_layer software; do TEST_QUICK=1 TEST_ONLY=$t timeout 150 ./build/test_gpu || rc=$?; done \
     > "$OUT/test_quick_parts.log" 2>&1; echo $rc > /tmp/rc_parts) &
  (TEST_QUICK=1 TEST_ONLY=silu timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu \
     > "$OUT/memcheck.silu.log" 2>&1
   echo "memcheck silu exit $?: $(grep -hE 'ERROR SUMMARY' "$OUT/memcheck.silu.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.silu.log") PASS $(grep -c ^FAIL "$OUT/memcheck.silu.log") FAIL" > /tmp/mc_silu.txt) &
  wait
  summ "SiLU tests in full" "$OUT/test_silu_full.log" "$(cat /tmp/rc_silu)"
  summ "widened, layer, software (quick)" "$OUT/test_quick_parts.log" "$(cat /tmp/rc_parts)"
  grep -E '^PASS|^FAIL|^SKIP' "$OUT/test_silu_full.log" "$OUT/test_quick_parts.log" | cut -c1-120
  cat /tmp/mc_silu.txt
  echo "tests done at $(( $(date +%s) - t0 )) s"
  d="-DNVF_Y=1,-DNVF_SILU_CALL=1,-DNVF_EXPFMA=1,-DNVF_EXPFMA=1,-DNVF_SILU_CALL=1,-DNVF_Y=2"
  PYTHONUNBUFFERED=1 timeout ${ABT:-220} python3 tools/bench.py --defines "$d" --only quant,layer \
    --out "$OUT/ab_silu_inline.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -6
  echo "A/B done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${PT:-90} python3 tools/bench.py --defines "-DNVF_Y=1" --poisson --ms 33 --only gemm \
    --shapes dsv3_ep8_gemm1,dsv3_ep8_gemm2 --out "$OUT/poisson33_dsv3.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -2
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X59)
  # thirty-second session: 0.5.2 (the SiLU inlined): the whole GPU suite in one process ($TT s at most) and, alongside,
  # racecheck and memcheck on the quick SiLU tests (their team reductions in shared memory) and memcheck on the quick
  # layer test
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (TT=${TT:-420} OUT="$OUT" bash "$0" T16) > /tmp/x59a.txt 2>&1 &
  (for tool in racecheck memcheck; do
     TEST_QUICK=1 TEST_ONLY=silu timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 ./build/test_gpu \
       > "$OUT/$tool.silu.log" 2>&1
     echo "$tool silu exit $?: $(grep -hE 'SUMMARY' "$OUT/$tool.silu.log" | head -1) $(grep -c ^PASS "$OUT/$tool.silu.log") PASS $(grep -c ^FAIL "$OUT/$tool.silu.log") FAIL"
   done
   TEST_QUICK=1 TEST_ONLY=moe_layer timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu \
     > "$OUT/memcheck.moe_layer.log" 2>&1
   echo "memcheck moe_layer exit $?: $(grep -hE 'SUMMARY' "$OUT/memcheck.moe_layer.log" | head -1) $(grep -c ^PASS "$OUT/memcheck.moe_layer.log") PASS $(grep -c ^FAIL "$OUT/memcheck.moe_layer.log") FAIL") > /tmp/x59b.txt 2>&1 &
  wait
  cat /tmp/x59a.txt /tmp/x59b.txt
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X59B)
  # thirty-second session: the full benchmark (I; the file is named by the card), then each kernel of the expert
  # layers alone under Nsight Compute (serialized: no PDL overlap), the DeepSeek-V3 layer's kernels from the
  # main job's eager launches (examples/moe_layer.c), for the layer's breakdown
  t0=$(date +%s)
  OUT="$OUT" bash "$0" I
  echo "benchmark done at $(( $(date +%s) - t0 )) s"
  timeout ${NT:-150} ncu --clock-control none -k regex:nvf_ --metrics gpu__time_duration.sum --csv \
    --launch-count ${NL:-600} ./build/moe_layer > "$OUT/ncu_layer_kernels.csv" 2> "$OUT/ncu_layer.err"
  echo "ncu exit $?: $(grep -c gpu__time_duration "$OUT/ncu_layer_kernels.csv") kernels"
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X59C)
  # thirty-second session: X59's whole suite ran out of its time after test_gemm_shapes (the sanitizers beside it, an
  # H100): the rest of the suite, test by test, under one deadline ($TT s); then, if time is left, the full benchmark
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  for t in every_tile group_isolation weights_relayout tiled_same_bits graph_replay test_moe_layer widened self_test threads; do
    left=$(( ${TT:-360} - ($(date +%s) - t0) ))
    [ $left -lt 10 ] && { echo "no time left for $t"; continue; }
    TEST_ONLY=$t timeout $left ./build/test_gpu > "$OUT/test_rest_$t.log" 2>&1
    echo "$t rc $?: $(grep -E '^PASS|^FAIL|^SKIP' "$OUT/test_rest_$t.log" | cut -c1-90 | tr '\n' ' ')"
    grep -E '^#   ' "$OUT/test_rest_$t.log" | head -4
  done
  echo "tests done at $(( $(date +%s) - t0 )) s"
  if [ $(( $(date +%s) - t0 )) -lt ${BENCH_BY:-430} ]; then
    PYTHONUNBUFFERED=1 timeout ${BT:-150} python3 tools/bench.py > "$OUT/bench.log" 2>&1
    echo "bench exit $?"; tail -36 "$OUT/bench.log" | cut -c1-150
    w=$(grep -m1 '^wrote ' "$OUT/bench.log" | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/"
  fi
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X60)
  # thirty-third session: probe 4 (no epilogue stores) on the 64- and 128-token tiles, whose epilogue is still
  # the scattered 2-byte stores (no shared memory left for NVF_EPI_SMEM): the ceiling of a better epilogue at
  # 64, 128 and 512 tokens, rounds in both orders; then each kernel of the DeepSeek-V3 layer alone under
  # Nsight Compute (serialized, caches not flushed), the layer's first forward calls in tools/bench.py
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_WSPROBE=4 -DNVF_Y=1" precompile_defs
  wait; tail -1 /tmp/pc_default.log
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "-DNVF_Y=1,-DNVF_WSPROBE=4,-DNVF_WSPROBE=4,-DNVF_Y=1" \
    --ms 64,128,512 --only gemm --out "$OUT/probe4_t64_t128.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -4
  echo "A/B done at $(( $(date +%s) - t0 )) s"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer timeout ${NT:-150} ncu --clock-control none --cache-control none -k regex:nvf_ \
    --metrics gpu__time_duration.sum --csv --launch-count ${NL:-24} python3 tools/bench.py --only layer \
    > "$OUT/ncu_dsv3_layer.csv" 2> "$OUT/ncu_dsv3_layer.err"
  echo "ncu exit $?: $(grep -c gpu__time_duration "$OUT/ncu_dsv3_layer.csv") kernels"
  grep gpu__time_duration "$OUT/ncu_dsv3_layer.csv" | awk -F'","' '{print $5, $(NF)}' | sed 's/(NvfGemmParams.*)//;s/(NvfQuantParams.*)//' | cut -c1-90 | head -24
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X61)
  # thirty-third session: the register-transpose epilogue (NVF_EPI_REG, default on the 64- and 128-token tiles):
  # the token-producer tiles' every-tile GEMM tests in full, the quick GEMM and layer tests, memcheck on the
  # token-producer tiles' quick every-tile tests; the same quick every-tile tests with the 32- and 48-token tiles
  # on it too (-DNVF_EPI_SMEM=0); then A/Bs, rounds in both orders: against the scattered stores
  # (-DNVF_EPI_REG=0) at 64, 128 and 512 tokens, and against the shared-memory staging at 16 and 32 tokens with
  # the layers
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_EPI_REG=0 -DNVF_EPI_SMEM=0 -DNVF_Y=1" precompile_defs
  wait; tail -1 /tmp/pc_default.log
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout 240 ./build/test_gpu > "$OUT/test_every_tile_ws.log" 2>&1; echo $? > /tmp/rc_et) &
  (rc=0; for t in gemm_shapes group_isolation tiled_same_bits graph_replay moe_layer widened; do
     TEST_QUICK=1 TEST_ONLY=$t timeout 150 ./build/test_gpu || rc=$?; done > "$OUT/test_quick_parts.log" 2>&1; echo $rc > /tmp/rc_parts) &
  ws_memcheck 240 > /tmp/mc_ws.txt 2>&1 &
  (NVFP4MOE_TUNE_DEFINE=-DNVF_EPI_SMEM=0 TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout 240 ./build/test_gpu \
     > "$OUT/test_every_tile_ws_nosmem.log" 2>&1; echo $? > /tmp/rc_et2) &
  wait
  summ "every-tile, token-producer tiles, in full" "$OUT/test_every_tile_ws.log" "$(cat /tmp/rc_et)"
  summ "quick GEMM and layer parts" "$OUT/test_quick_parts.log" "$(cat /tmp/rc_parts)"
  summ "every-tile (quick), token-producer tiles, -DNVF_EPI_SMEM=0" "$OUT/test_every_tile_ws_nosmem.log" "$(cat /tmp/rc_et2)"
  grep -hE '^PASS|^FAIL|^SKIP' "$OUT"/test_every_tile_ws*.log "$OUT/test_quick_parts.log" | cut -c1-120
  cat /tmp/mc_ws.txt
  echo "tests done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "-DNVF_Y=1,-DNVF_EPI_REG=0,-DNVF_EPI_REG=0,-DNVF_Y=1" \
    --ms 64,128,512 --only gemm --out "$OUT/ab_epi_reg.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -2
  echo "A/B 1 done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "-DNVF_Y=1,-DNVF_EPI_SMEM=0,-DNVF_EPI_SMEM=0,-DNVF_Y=1" \
    --ms 16,32 --only gemm,layer --out "$OUT/ab_epi_reg_t32.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -2
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X62)
  # thirty-third session: with the register-transpose epilogue, the resident grid (-DNVF_PERSIST=1) for the 64- and
  # 128-token tiles again (it tied at 128 tokens with the scattered stores, twenty-fifth session): the A/B at 64,
  # 128 and 512 tokens, rounds in both orders, then the token-producer tiles' quick every-tile tests under it
  t0=$(date +%s)
  PDEFS="-DNVF_PERSIST=1 -DNVF_Y=1" precompile_defs
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "-DNVF_Y=1,-DNVF_PERSIST=1,-DNVF_PERSIST=1,-DNVF_Y=1" \
    --ms 64,128,512 --only gemm --out "$OUT/ab_persist_t128.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -2
  echo "A/B done at $(( $(date +%s) - t0 )) s"
  NVFP4MOE_TUNE_DEFINE=-DNVF_PERSIST=1 TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout 200 ./build/test_gpu \
     > "$OUT/test_every_tile_ws_persist.log" 2>&1
  summ "every-tile (quick), token-producer tiles, -DNVF_PERSIST=1" "$OUT/test_every_tile_ws_persist.log" $?
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X63)
  # thirty-third session, 0.5.3: the TILED 64- and 128-token tiles built resident (the 64-token one launched so
  # always, the 128-token one where K <= 1024) against 0.5.2's rule (-DNVF_PERSIST_T32): A/B at 64, 128 and 512
  # tokens and at Poisson(40) and Poisson(100) masked_m (experts past the tile), rounds in both orders; then
  # the quick every-tile, shapes, same-bits and replay tests under the new default
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_PERSIST_T32 -DNVF_Y=1" precompile_defs
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s: $(tail -1 /tmp/pc_default.log)"
  PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py --defines "-DNVF_Y=1,-DNVF_PERSIST_T32,-DNVF_PERSIST_T32,-DNVF_Y=1" \
    --ms 64,128,512 --only gemm --out "$OUT/ab_persist_tiled.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -2
  echo "A/B 1 done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --defines "-DNVF_Y=1,-DNVF_PERSIST_T32,-DNVF_PERSIST_T32,-DNVF_Y=1" \
    --poisson --ms 40,100 --only gemm --out "$OUT/ab_persist_poisson.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -2
  echo "A/B 2 done at $(( $(date +%s) - t0 )) s"
  ws_quick_tests "gemm_shapes tiled_same_bits graph_replay group_isolation"
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X64)
  # thirty-third session: the DeepSeek-V3 layer (Poisson(33): the 48-token _varn tile) against the 64-token _varn
  # tile forced (resident on TILED weights since 0.5.3) and against every tile resident (-DNVF_PERSIST=1: the
  # 48-token tile's 14-18 % loss on the H200, twenty-fifth session, again on the H100); the layer and its two
  # GEMMs at Poisson(33), rounds in both orders
  t0=$(date +%s)
  PDEFS="-DNVF_PERSIST=1" precompile_defs
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  b="NVFP4MOE_X=0"; f="NVFP4MOE_GEMM_CONFIG=gemm_sm90_ws_t64_wg4_varn"; r="NVFP4MOE_TUNE_DEFINE=-DNVF_PERSIST=1"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer PYTHONUNBUFFERED=1 timeout ${ABT:-250} python3 tools/bench.py \
    --envs "$b,$f,$r,$r,$f,$b" --poisson --ms 33 --only gemm,layer --shapes dsv3_ep8_gemm1,dsv3_ep8_gemm2 \
    --out "$OUT/ab_dsv3_t64_resident.json" 2>&1 | grep -E "tune=" | cut -c1-150
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X65)
  # thirty-third session: the resident grid's units numbered without gaps (NVF_PCOMPACT, default) against the
  # numbering of 0.5.3 (-DNVF_PCOMPACT=0) and, compact, every tile resident (-DNVF_PERSIST=1: the 48-token tile,
  # whose resident form lost 4.5 % in the DeepSeek-V3 layer in X64 while its GEMMs gained 5-10 %): the layers and
  # the DeepSeek-V3 GEMMs at Poisson(33), then uniform 32 and 64 tokens (compact against 0.5.3's numbering);
  # then quick tests under the new default. (The NVF_PCOMPACT code was not committed, bench/NOTES.md: on main
  # this mode's arms a and b build the same kernels.)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_PCOMPACT=0 -DNVF_Y=1 -DNVF_PERSIST=1" precompile_defs
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  a="-DNVF_PCOMPACT=0"; b="-DNVF_Y=1"; c="-DNVF_PERSIST=1"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer PYTHONUNBUFFERED=1 timeout ${ABT:-200} python3 tools/bench.py \
    --defines "$a,$b,$c,$c,$b,$a" --poisson --ms 33 --only gemm,layer --shapes dsv3_ep8_gemm1,dsv3_ep8_gemm2 \
    --out "$OUT/ab_compact_layers.json" 2>&1 | grep -E "tune=" | cut -c1-150
  echo "A/B 1 done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --defines "$a,$b,$b,$a" --ms 32,64 --only gemm \
    --out "$OUT/ab_compact_uniform.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -2
  echo "A/B 2 done at $(( $(date +%s) - t0 )) s"
  ws_quick_tests "gemm_shapes graph_replay group_isolation moe_layer"
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X66)
  # thirty-fourth session (0.5.4 candidate): the resident grid's units numbered without gaps from a per-CTA table in
  # shared memory (nvf_ws_build_tab; default as run, groups found by binary search) against the old numbering compiled
  # out (-DNVF_PCOMPACT=0, 0.5.3's code) and, with the table, every tile resident (-DNVF_PERSIST=1: the 48-token tile).
  # (On main the table is off by default and found by ballots: here arms a and b build the same kernels and c has no
  # table; X67 has the arms as main names them.) Tests first: the resident-units
  # test (and under -DNVF_PERSIST=1), the token-producer tiles' quick every-tile tests, memcheck on the resident-units
  # test; then the layers and the DeepSeek-V3 GEMMs at Poisson(33), then uniform 32 and 64 tokens.
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_PCOMPACT=0 -DNVF_Y=1 -DNVF_PERSIST=1" precompile_defs
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  ws_quick_tests "resident_units"
  PDEFS="-DNVF_PERSIST=1" tests_under_defs "resident-units" ru resident_units 150
  PDEFS="-DNVF_PERSIST=1" tests_under_defs "every-tile ws" et every_tile 150 TEST_CONFIGS=gemm_sm90_ws
  TEST_QUICK=1 TEST_ONLY=resident_units timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu \
    > "$OUT/memcheck.ru.log" 2>&1
  echo "memcheck resident units exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.ru.log" | head -1)"
  echo "tests done at $(( $(date +%s) - t0 )) s"
  a="-DNVF_PCOMPACT=0"; b="-DNVF_Y=1"; c="-DNVF_PERSIST=1"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer PYTHONUNBUFFERED=1 timeout ${ABT:-170} python3 tools/bench.py \
    --defines "$a,$b,$c,$c,$b,$a" --poisson --ms 33 --only gemm,layer --shapes dsv3_ep8_gemm1,dsv3_ep8_gemm2 \
    --out "$OUT/ab_ptab_layers.json" 2>&1 | grep -E "tune=" | cut -c1-150
  echo "A/B 1 done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT2:-130} python3 tools/bench.py --defines "$a,$b,$b,$a" --ms 32,64 --only gemm \
    --out "$OUT/ab_ptab_uniform.json" 2>&1 | grep -E "tune=" | cut -c1-100 | tail -2
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X85U)
  # X85 for a budget of about 200 s: the quick layer and widened-token tests at 100:100 (under the L2 cap), the layer
  # test at the default, then (time left) the layers' A/B, arms 0:0 100:100 0:0 100:100
  t0=$(date +%s)
  l2pf_tests 150 moe_layer layer_quantizer_widened
  TEST_QUICK=1 TEST_ONLY=moe_layer timeout 60 ./build/test_gpu > "$OUT/test_layer_default.log" 2>&1
  summ "moe_layer (quick, the default 0:0)" "$OUT/test_layer_default.log" $?
  echo "tests at $(( $(date +%s) - t0 )) s"
  l2pf_ab "0:0 100:100 0:0 100:100" ${ABT:-80}
  ;;
X85T)
  # X85 for a budget of about 300 s, after the L2 cap (each percent lowered until its pieces fit in half the L2: on a
  # 50 MiB L2, DeepSeek-V3's GEMM1 17 %, GEMM2 62 %): the quick layer and widened-token tests at 100:100, then the
  # layers' A/B, arms 0:0 100:0 0:100 100:100 and back
  t0=$(date +%s)
  l2pf_tests 100 moe_layer layer_quantizer_widened
  echo "tests at $(( $(date +%s) - t0 )) s"
  l2pf_ab "0:0 100:0 0:100 100:100 100:100 0:100 100:0 0:0" 170
  ;;
X85S)
  # X85 for a short budget: the widened-token test at 100:100, then the layers' A/B, arms 0:0 25:100 0:100 and back
  t0=$(date +%s)
  l2pf_tests 150 layer_quantizer_widened
  l2pf_ab "0:0 25:100 0:100 0:100 25:100 0:0" 100
  ;;
X86S)
  # X86 for a short budget: the four layers' A/B a w w a a w w a (a: the default, w: -DNVF_WIDEN_SKIP=1), then the quick
  # layer and widened-token tests, default and under the define, in parallel
  t0=$(date +%s)
  wskip_ab ${ABT:-150}
  wskip_tests 120 moe_layer layer_quantizer_widened
  ;;
X99Q)
  # fiftieth session, X99 cut to the device time left (about 150 s), as it ran
  QUICK=1 ksplit_trial
  ;;
X99)
  ksplit_trial
  ;;
X98)
  # fiftieth session: do the 128-token tile's CTA waves show in the time? DeepSeek-V3 GEMM1 with 32, 30 and 33 groups
  # (704, 660, 726 CTAs of 192 rows: 5.33, 5.00, 5.50 waves of 132) and GEMM2 with 32, 31, 29 (1216, 1178, 1102:
  # 9.21, 8.92, 8.35), at 128 tokens, three arms of the same default build
  t0=$(date +%s); nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
  PYTHONUNBUFFERED=1 timeout ${ABT:-240} python3 tools/bench.py --envs "NVFP4MOE_Y=1,NVFP4MOE_Y=2,NVFP4MOE_Y=1" --ms 128 \
    --only gemm --shapes dsv3_ep8_gemm1,dsv3_g30_gemm1,dsv3_g33_gemm1,dsv3_ep8_gemm2,dsv3_g31_gemm2,dsv3_g29_gemm2 \
    --out "$OUT/x98_waves.json" > /tmp/x98.log 2>&1
  echo "bench rc $? at $(( $(date +%s) - t0 )) s"; grep -E "dsv3" /tmp/x98.log | cut -c1-170 | head -30; cp /tmp/x98.log "$OUT/"
  ;;
X97)
  # fiftieth session: on an H200 only (stops at once on another card): X96 again (t32_trial -DNVF_WRING=1 on a tree
  # with b049219's NVF_WRING code, which is not in the tree: run \`patch -p1 < bench/patches/x96_wring.patch\` first,
  # in the same command, before this script builds; the patch is git diff 71f0bfc b049219 of the three files (in
  # the fifty-first session merged onto the tree with NVF_TAIL; since NVF_TAIL's removal the original again; in the
  # fifty-third session regenerated, the same change, for the kernel and header of the commit that last changed the
  # patch: git log bench/patches/x96_wring.patch; in the fifty-fifth merged onto NVF_WHINT's tree, the default SASS
  # of the patched tree hash-checked equal to the unpatched one's), whose end runs X94's Nsight
  # passes on the default (before $PROF_BY s), then G14 at 32 tokens under the define into $OUT/wring/ (before
  # $WPROF_BY s)
  g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  echo "$g" | grep -q H200 || { echo "$g: not an H200: stopped"; exit 3; }
  PROF_BY=${PROF_BY:-400} ABT=${ABT:-150} t32_trial -DNVF_WRING=1 h200_x97
  if [ $(( $(date +%s) - t0 )) -lt ${WPROF_BY:-430} ]; then
    mkdir -p "$OUT/wring"
    OUT="$OUT/wring" NVFP4MOE_TUNE_DEFINE=-DNVF_WRING=1 GMS=32 bash "$0" G14 2>&1 | grep -vE "^name|^NVIDIA"
  fi
  echo "X97 done at $(( $(date +%s) - t0 )) s"
  ;;
X96)
  # forty-ninth session: -DNVF_WRING=1, the TILED 32-token tiles' weights and SFs copied into the token slots by the
  # producer (bulk copies; 3 slots of 52 KB), as t32_trial above (its second run, b049219; the first, 87c6b5c, ran one
  # round and no Poisson A/B). (NVF_WRING is only in commits e75a60e to b049219, not kept: here both arms build the
  # default; rebuild from b049219 to repeat it.)
  t32_trial -DNVF_WRING=1 x96
  ;;
X95)
  # forty-ninth session: -DNVF_WSX2=1, the 32-token tiles as two CTAs an SM, each of two consumer warpgroups and the
  # producer, as t32_trial above but with one round of d x x d and no Poisson A/B (as it ran). (NVF_WSX2 is only in
  # commit 71b4313, not kept: here both arms build the default; rebuild from 71b4313 to repeat it.)
  ROUNDS=1 POISSON=0 t32_trial -DNVF_WSX2=1 x95
  ;;
X94)
  # forty-eighth session: on an H200 only (stops at once on another card): Nsight Compute on the DeepSeek-V3 GEMM1 at
  # 32 tokens per expert (G14's sections and metrics, then S14's per-SASS-line stall counters), then the full
  # benchmark if fewer than $BENCH_BY s have passed
  t0=$(date +%s); g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$g"
  echo "$g" | grep -q H200 || { echo "not an H200: stopped"; exit 3; }
  h200_profile_m32 999999
  if [ $(( $(date +%s) - t0 )) -lt ${BENCH_BY:-330} ]; then
    full_bench /tmp/x94_bench.log ${BT:-150}
  fi
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X93)
  # forty-eighth session, 0.5.15 candidate: the quantizer's outer loop without its pass counter, tq / tsf set once a
  # pass (t: the default; o: -DNVF_QLOOP_OLD, which built 0.5.14's loop, the same SASS as ff9b24f; only in commit
  # 5d3028c: here both arms build the default).
  # Both precompiled side by side (o: its quantizer modules; its layers' GEMMs compile in the A/B); then side by side: the quantizer tests in full (the last-round test's second
  # form with them), the SiLU and layer tests in full, the quick last-round test under -DNVF_QTAIL=0 and the quick
  # widened-token test, memcheck and racecheck on the quick last-round test; then the A/B of the quantizer cells and
  # the layers, arms o t t o; logs in x93_logs.tgz (X93B follows on the warm machine)
  t0=$(date +%s); L=/tmp/x93; rm -rf $L; mkdir -p $L; O="NVFP4MOE_TUNE_DEFINE=-DNVF_QLOOP_OLD"; T="NVFP4MOE_Y=1"
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
  timeout 120 ./build/nvfp4moe_precompile sm_90a > $L/pc_t.log 2>&1 &
  NVFP4MOE_TUNE_DEFINE=-DNVF_QLOOP_OLD timeout 120 ./build/nvfp4moe_precompile sm_90a --only quant > $L/pc_o.log 2>&1 &
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s: $(tail -1 $L/pc_t.log) / $(tail -1 $L/pc_o.log)"
  lane_test quant_full 280 TEST_ONLY=quantize > $L/lane_a.txt &
  (lane_test silu_full 200 TEST_ONLY=silu_mul_quantize
   lane_test layer_full 150 TEST_ONLY=test_moe_layer) > $L/lane_b.txt &
  (lane_test last_quick_q0 120 TEST_QUICK=1 TEST_ONLY=last_round NVFP4MOE_TUNE_DEFINE=-DNVF_QTAIL=0
   lane_test widened_quick 120 TEST_QUICK=1 TEST_ONLY=widened) > $L/lane_c.txt &
  (for tool in memcheck racecheck; do lane_sanitizer $tool last_round 130; done) > $L/lane_d.txt 2>&1 &
  wait
  lanes_report
  # (worst case 120 + 280 + ABT s; X93 ran: the precompile and the tests 208 s together, the A/B 11 s)
  quant_layer_ab "$O,$T,$T,$O" x93_ab.json ${ABT:-150}
  tar czf "$OUT/x93_logs.tgz" -C $L .
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X93B)
  # forty-eighth session, after X93 on the same machine: the full benchmark (the record where the card is an H200),
  # then (NCU=1, the default on an H200) Nsight Compute on the DeepSeek-V3 GEMM1 at 32 tokens per expert (G14)
  t0=$(date +%s); g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$g"
  full_bench /tmp/x93b_bench.log ${BT:-150}
  cp /tmp/x93b_bench.log "$OUT/"
  if [ "${NCU:-$(echo "$g" | grep -q H200 && echo 1 || echo 0)}" = 1 ]; then
    GMS=32 bash "$0" G14 2>&1 | grep -vE "^name|^NVIDIA"
  fi
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X91)
  # forty-seventh session (0.5.14), written for an H200 (it ran on an H100): the four layers traced (the default
  # build, twice), the full benchmark again (a repeat, x91_bench.json: the record stays X87's),
  # then Nsight Compute (G14's sections and metrics) on the DeepSeek-V3 GEMM1 at 32 tokens per expert
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout 120 python3 tools/bench.py --envs "NVFP4MOE_Y=1,NVFP4MOE_Y=1" \
    --only layer --out "$OUT/x91_profile.json" > /tmp/x91_prof.log 2>&1
  echo "profile rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer" /tmp/x91_prof.log | cut -c1-110
  PYTHONUNBUFFERED=1 timeout 120 python3 tools/bench.py --out "$OUT/x91_bench.json" > /tmp/x91_bench.log 2>&1
  echo "bench rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer" /tmp/x91_bench.log | cut -c1-110
  GMS=32 bash bench/device_run.sh G14 2>&1 | grep -vE "^name|^NVIDIA"
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X90)
  # forty-seventh session, 0.5.14 candidate: the unstaged quantizer's last round taken by wider teams (t: the default;
  # o: -DNVF_QTAIL=0, 0.5.13's kernels). Both builds precompiled side by side; then, side by side: the quantizer tests
  # in full (with the new last-round test) and the layer tests in full at the default, the quick quantizer tests under
  # o, memcheck and racecheck on the quick last-round test; then the A/B of the quantizer cells and the four layers,
  # arms o t t o o t t o, and the DeepSeek-V3 and 3-token decode layers traced, o t o t; logs in x90_logs.tgz
  t0=$(date +%s); L=/tmp/x90; rm -rf $L; mkdir -p $L; O="NVFP4MOE_TUNE_DEFINE=-DNVF_QTAIL=0"; T="NVFP4MOE_Y=1"
  ./build/nvfp4moe_precompile sm_90a > $L/pc_t.log 2>&1 &
  NVFP4MOE_TUNE_DEFINE=-DNVF_QTAIL=0 ./build/nvfp4moe_precompile sm_90a > $L/pc_o.log 2>&1 &
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s: $(tail -1 $L/pc_t.log) / $(tail -1 $L/pc_o.log)"
  lane_test quant_full 300 TEST_ONLY=quantize > $L/lane_a.txt &
  lane_test layer_full 300 TEST_ONLY=test_moe_layer > $L/lane_b.txt &
  (lane_test quant_quick_o 300 TEST_QUICK=1 TEST_ONLY=quantize NVFP4MOE_TUNE_DEFINE=-DNVF_QTAIL=0
   lane_test layer_quick_o 200 TEST_QUICK=1 TEST_ONLY=test_moe_layer NVFP4MOE_TUNE_DEFINE=-DNVF_QTAIL=0) > $L/lane_c.txt &
  (for tool in memcheck racecheck; do lane_sanitizer $tool last_round 250; done) > $L/lane_d.txt 2>&1 &
  wait
  lanes_report
  quant_layer_ab "$O,$T,$T,$O,$O,$T,$T,$O" x90_ab.json ${ABT:-200}
  if [ $(( $(date +%s) - t0 )) -lt ${PROF_BY:-480} ]; then
    NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,dsv3_ep8_layer_decode NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 \
      timeout ${PT:-90} python3 tools/bench.py --envs "$O,$T,$O,$T" --only layer --out "$OUT/x90_profile.json" > $L/prof.log 2>&1
    echo "profile rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer" $L/prof.log | cut -c1-150
  fi
  tar czf "$OUT/x90_logs.tgz" -C $L .
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X89)
  # forty-sixth session, after review: the widened-token test's new check that the pre-pass leaves rows past masked_m
  # untouched, quick form, side by side: the default (must pass), -DNVF_WIDEN_SKIP=0 (0.5.12's zeros; the check is
  # off, must pass) and -DNVF_WIDEN_SKIP=(0) (the zeros again, spelled so the test does not see it: must FAIL on
  # that check, showing it can); with the quick layer test at the default
  t0=$(date +%s)
  (TEST_QUICK=1 TEST_ONLY=test_moe_layer timeout 200 ./build/test_gpu > /tmp/x89layer.log 2>&1; summ "layer (quick)" /tmp/x89layer.log $?) \
    > /tmp/x89layer.txt &
  WS_DEFS=("" "-DNVF_WIDEN_SKIP=0" "-DNVF_WIDEN_SKIP=(0)")
  wskip_tests 200 widened
  for f in "$OUT"/test_widened*.log; do echo "$f: $(grep -c 'the pre-pass wrote [0-9]* bytes' "$f") pre-pass check failures"; done
  cat /tmp/x89layer.txt
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X88)
  # forty-sixth session, 0.5.13: where the pre-pass's skipped rows pay off. The DeepSeek-V3 and Qwen3 layers, arms
  # o n n o o n n o (o: -DNVF_WIDEN_SKIP=0, 0.5.12's zeros; n: the default), then the same arms traced, o n o n o n
  # (the kernels' durations: the pre-pass itself, or GEMM1 after it?)
  t0=$(date +%s); O="NVFP4MOE_TUNE_DEFINE=-DNVF_WIDEN_SKIP=0"; N="NVFP4MOE_Y=1"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py \
    --envs "$O,$N,$N,$O,$O,$N,$N,$O" --only layer --out "$OUT/layer_x88_ab.json" > "$OUT/layer_x88_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer" "$OUT/layer_x88_ab.log" | cut -c1-150
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout ${PT:-200} \
    python3 tools/bench.py --envs "$O,$N,$O,$N,$O,$N" --only layer --out "$OUT/layer_x88_profile.json" \
    > "$OUT/layer_x88_profile.log" 2>&1
  echo "profile rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer" "$OUT/layer_x88_profile.log" | cut -c1-150
  ;;
X87)
  # forty-sixth session, 0.5.13 (the pre-pass skips rows past masked_m by default): the whole GPU suite, not quick,
  # in three processes side by side (every-tile; the other GEMM tests; the quantizers, layers and the rest), every
  # test under one deadline ($TT s from the start), memcheck on the quick widened-token and layer tests beside them,
  # then the full benchmark (the record, the file named by the card) if fewer than $BENCH_BY s have passed; the
  # logs come back as one archive (the tool returns few files)
  t0=$(date +%s); L=/tmp/x87; mkdir -p $L
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  x87_lane() {
    for t in "$@"; do
      left=$(( ${TT:-380} - ($(date +%s) - t0) ))
      [ $left -lt 10 ] && { echo "no time left for $t"; continue; }
      TEST_ONLY=$t timeout $left ./build/test_gpu > $L/full_$t.log 2>&1
      echo "$t rc $? at $(( $(date +%s) - t0 )) s: $(grep -E '^PASS|^FAIL|^SKIP' $L/full_$t.log | cut -c1-90 | tr '\n' ' ')"
      grep -E '^#   ' $L/full_$t.log | head -4
    done
  }
  x87_lane every_tile > $L/lane_a.txt 2>&1 &
  x87_lane gemm_shapes resident_units group_isolation weights_relayout tiled_same_bits graph_replay > $L/lane_b.txt 2>&1 &
  x87_lane per_token_all_shapes masked_and_per_tensor silu_mul_quantize software_conversions e2m1_cut_points \
    long_rows many_rows weight_quantization sf_convert test_moe_layer widened self_test threads > $L/lane_c.txt 2>&1 &
  (for t in layer_quantizer_widened test_moe_layer; do
     TEST_QUICK=1 TEST_ONLY=$t timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu \
       > $L/memcheck.$t.log 2>&1
     echo "memcheck $t exit $?: $(grep -hE 'ERROR SUMMARY' $L/memcheck.$t.log | head -1) $(grep -c ^PASS $L/memcheck.$t.log) PASS $(grep -c ^FAIL $L/memcheck.$t.log) FAIL"
   done) > $L/lane_d.txt 2>&1 &
  wait
  cat $L/lane_a.txt $L/lane_b.txt $L/lane_c.txt $L/lane_d.txt
  echo "tests done at $(( $(date +%s) - t0 )) s"
  if [ $(( $(date +%s) - t0 )) -lt ${BENCH_BY:-470} ]; then
    full_bench $L/bench.log ${BT:-100}
  fi
  tar czf "$OUT/x87_logs.tgz" -C $L .
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X86F)
  # forty-fifth session: X86 without the traced pass, then the full benchmark (the record, the file named by the
  # card) under the arm the A/B favours: w (-DNVF_WIDEN_SKIP=1) where its mean is below the default's on both
  # DeepSeek-V3 and Qwen3 and every w arm is below every default arm on at least one of them, else the default;
  # the arm is written to bench_arm.txt
  t0=$(date +%s)
  wskip_ab ${ABT:-180}
  wskip_tests 120 moe_layer layer_quantizer_widened every_tile
  arm=$(wskip_pick "$OUT/layer_x86_ab.json")
  echo "bench arm: $arm" | tee "$OUT/bench_arm.txt"
  [ "$arm" = w ] && export NVFP4MOE_TUNE_DEFINE=-DNVF_WIDEN_SKIP=1
  left=$(( ${LIMIT:-585} - SECONDS )); [ $left -gt 240 ] && left=240
  if [ $left -lt 150 ]; then echo "no full benchmark: $left s left"; exit 0; fi
  PYTHONUNBUFFERED=1 timeout $left python3 tools/bench.py > "$OUT/bench.log" 2>&1
  echo "bench exit $? (limit $left s) at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer|^wrote" "$OUT/bench.log" | cut -c1-150
  w=$(grep -m1 '^wrote ' "$OUT/bench.log" | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/"
  ;;
X86)
  # forty-fourth session: X85 found the L2 prefetch slower in every arm; the repeat A/B of NVF_WIDEN_SKIP=1 (GEMM1's
  # token pre-pass skips rows past masked_m; X84: both w arms faster on both layers, by about the spread on
  # DeepSeek-V3). All four layers, arms a w w a a w w a (a: the default), then the quick layer, widened-token and
  # token-producer every-tile tests, default and under the define (in parallel), then (time left) a w a w traced
  t0=$(date +%s)
  wskip_ab 200
  wskip_tests 200 moe_layer layer_quantizer_widened every_tile
  if [ $(( $(date +%s) - t0 )) -lt 430 ]; then # the kernels' durations, traced
    NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout 100 \
      python3 tools/bench.py --envs "$WS_A,$WS_W,$WS_A,$WS_W" --only layer --out "$OUT/layer_x86_profile.json" \
      > "$OUT/layer_x86_profile.log" 2>&1
    echo "profile rc $? at $(( $(date +%s) - t0 )) s"
  fi
  ;;
# (X85, X85S, X85T and X85U set NVFP4MOE_L2_PREFETCH, whose prefetch 0.5.12 removed: they run as written on trees
# from their own commits (X85 4596ec6, X85S 795b292, X85T b841fa6, X85U d771c33) to 55825c9.)
X85)
  # forty-second session: the L2 prefetch of a token-producer GEMM's first-wave weights (NVFP4MOE_L2_PREFETCH=P1:P2:
  # percent of K of each first-wave 16-row tile, GEMM1 by its token pre-pass, GEMM2 by the layer's SiLU quantizer):
  # quick layer and widened-token tests at 100:100 and the layer test at the default; then the layers' A/B, arms
  # 0:0 10:0 100:0 0:100 0:50 10:100 100:100 and back (under 0.5.11's L2 cap, 100 % on a 50 MiB L2 is DeepSeek-V3
  # GEMM1 17 %, GEMM2 62 %); then (time left) arms 0:0 25:100 0:100 traced
  t0=$(date +%s)
  l2pf_tests 150 moe_layer layer_quantizer_widened
  TEST_QUICK=1 TEST_ONLY=moe_layer timeout 120 ./build/test_gpu > "$OUT/test_layer_default.log" 2>&1
  summ "moe_layer (quick, the default 0:0)" "$OUT/test_layer_default.log" $?
  echo "tests at $(( $(date +%s) - t0 )) s"
  l2pf_ab "0:0 10:0 100:0 0:100 0:50 10:100 100:100 100:100 10:100 0:50 0:100 100:0 10:0 0:0" 300
  if [ $(( $(date +%s) - t0 )) -lt 420 ]; then # the kernels' durations, traced
    NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout 100 \
      python3 tools/bench.py --envs "NVFP4MOE_L2_PREFETCH=0:0,NVFP4MOE_L2_PREFETCH=25:100,NVFP4MOE_L2_PREFETCH=0:100" \
      --only layer --out "$OUT/layer_l2pf_profile.json" > "$OUT/layer_l2pf_profile.log" 2>&1
    echo "profile rc $? at $(( $(date +%s) - t0 )) s"
  fi
  ;;
X84)
  # forty-second session, after F38's Nsight run (DeepSeek-V3 layer, 1076 valid rows: the SiLU quantizer's 1056 resident
  # teams and the input quantizer's 528 leave 20 teams a further row; SMs active 70 % of each kernel's time): the tuning
  # defines s = NVF_QSILU_MINB=5 (SiLU quantizer 5 CTAs per SM, 48 registers: every row resident), p = NVF_QPLAIN_MINB=3
  # (input quantizer 3 CTAs, 80 registers), w = NVF_WIDEN_SKIP=1 (GEMM1's pre-pass skips rows past masked_m). Caches
  # warmed per arm in parallel, quick tests under each define, the layers' A/B a s p w w p s a (a: the default), the
  # quantizer / every-tile tests, then (time left) the same arms traced
  t0=$(date +%s)
  PDEFS="-DNVF_QSILU_MINB=5 -DNVF_QPLAIN_MINB=3 -DNVF_WIDEN_SKIP=1"
  LAY=dsv3_ep8_layer,qwen3_30b_layer
  for d in "" $PDEFS; do
    (env NVFP4MOE_TUNE_DEFINE="$d" NVFP4MOE_BENCH_LAYERS=$LAY timeout 240 python3 tools/bench.py --only layer \
      --out "/tmp/warm${d//=/_}.json" > "$OUT/warm${d//=/_}.log" 2>&1; echo "warm '$d' rc $?") &
  done
  wait
  echo "warmed at $(( $(date +%s) - t0 )) s"
  tests_under_defs "moe_layer (quick)" tl moe_layer 150
  tests_under_defs "widened (quick)" tw layer_quantizer_widened 150
  echo "tests at $(( $(date +%s) - t0 )) s"
  a="NVFP4MOE_Y=1"; b="NVFP4MOE_TUNE_DEFINE=-DNVF_QSILU_MINB=5"; c="NVFP4MOE_TUNE_DEFINE=-DNVF_QPLAIN_MINB=3"
  d="NVFP4MOE_TUNE_DEFINE=-DNVF_WIDEN_SKIP=1"
  NVFP4MOE_BENCH_LAYERS=$LAY PYTHONUNBUFFERED=1 timeout 150 python3 tools/bench.py --envs "$a,$b,$c,$d,$d,$c,$b,$a" \
    --only layer --out "$OUT/layer_x84_ab.json" > "$OUT/layer_x84_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer" "$OUT/layer_x84_ab.log" | cut -c1-150
  PDEFS="-DNVF_QSILU_MINB=5 -DNVF_QPLAIN_MINB=3" tests_under_defs "quantize (quick)" tq quantize 120
  PDEFS="-DNVF_WIDEN_SKIP=1" tests_under_defs "every-tile token-producer (quick)" te every_tile 150 TEST_CONFIGS=gemm_sm90_ws
  echo "more tests at $(( $(date +%s) - t0 )) s"
  if [ $(( $(date +%s) - t0 )) -lt 470 ]; then
    NVFP4MOE_BENCH_LAYERS=$LAY NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout 90 python3 tools/bench.py \
      --envs "$a,$b,$c,$d" --only layer --out "$OUT/layer_x84_profile.json" > "$OUT/layer_x84_profile.log" 2>&1
    echo "profile rc $? at $(( $(date +%s) - t0 )) s"
  fi
  ;;
F38B)
  # F38 for a short budget: no precompile (the kernels compile as first used), the same Nsight Compute run on one
  # DeepSeek-V3 layer's input quantizer, pre-pass and SiLU quantizer, then the quick widened-token test
  t0=$(date +%s)
  ncu_layer_quant ${NT:-150}
  echo "at $(( $(date +%s) - t0 )) s"
  TEST_QUICK=1 TEST_ONLY=layer_quantizer_widened timeout 150 ./build/test_gpu > "$OUT/test_widened.log" 2>&1
  summ "layer_quantizer_widened (quick)" "$OUT/test_widened.log" $?
  echo "test at $(( $(date +%s) - t0 )) s"
  ;;
F38)
  # forty-first session, 0.5.9 (the _img8 kernels removed; every other module's SASS as 0.5.8's): the quick layer and
  # widened-token tests, Nsight Compute on the DeepSeek-V3 layer's three quantizing kernels (input quantizer, GEMM1's
  # token pre-pass, the SiLU quantizer writing GEMM2's widened tokens: why 9-19 us for 14-20 MB each, 2-4x their
  # byte time?), then the full benchmark without tracing (the record, the file named by the card)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  for t in test_moe_layer layer_quantizer_widened; do
    TEST_QUICK=1 TEST_ONLY=$t timeout 120 ./build/test_gpu > "$OUT/test_$t.log" 2>&1
    summ "$t (quick)" "$OUT/test_$t.log" $?
  done
  ncu_layer_quant ${NT:-90}
  echo "at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${BT:-200} python3 tools/bench.py > "$OUT/bench.log" 2>&1
  echo "bench exit $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer|^wrote" "$OUT/bench.log" | cut -c1-150
  w=$(grep -m1 '^wrote ' "$OUT/bench.log" | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/"
  ;;
F37B)
  # thirty-seventh session, after review: F37 traced each layer after timing it, so every layer timed after the
  # first trace may carry the profiler's overhead. 0.5.7 as committed (the SiLU quantizer's early launch keyed on
  # GEMM1's tile): the quick layer and widened-token tests, the full benchmark without tracing (the record), then
  # the layers' A/B without tracing, contexts Y P3 P3 Y Y P3 (Y: the default, P3: NVFP4MOE_LAYER_PDL=3, 0.5.6)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  for t in test_moe_layer layer_quantizer_widened; do
    TEST_QUICK=1 TEST_ONLY=$t timeout 120 ./build/test_gpu > "$OUT/test_$t.log" 2>&1
    summ "$t (quick)" "$OUT/test_$t.log" $?
  done
  PYTHONUNBUFFERED=1 timeout ${BT:-330} python3 tools/bench.py > "$OUT/bench.log" 2>&1
  echo "bench exit $? at $(( $(date +%s) - t0 )) s"; grep -E "^moe_layer|^wrote" "$OUT/bench.log" | cut -c1-150
  w=$(grep -m1 '^wrote ' "$OUT/bench.log" | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/"
  r="NVFP4MOE_Y=1,NVFP4MOE_LAYER_PDL=3,NVFP4MOE_LAYER_PDL=3,NVFP4MOE_Y=1,NVFP4MOE_Y=1,NVFP4MOE_LAYER_PDL=3"
  PYTHONUNBUFFERED=1 timeout 150 python3 tools/bench.py --envs "$r" --only layer --out "$OUT/layer_pdl_noprof_ab.json" \
    > "$OUT/layer_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"
  ;;
F37)
  # thirty-seventh session's last call (0.5.7 as committed): F36's tests in parallel (token-producer every-tile,
  # resident units, the layer) plus the widened-token test, then the full benchmark with the layers' kernels traced
  # (NVFP4MOE_BENCH_PROFILE=1: after each layer's timing; the file named by the card)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout 150 ./build/test_gpu > "$OUT/t_et.log" 2>&1; echo "# rc $?" >> "$OUT/t_et.log") &
  (TEST_QUICK=1 TEST_ONLY=resident_units timeout 150 ./build/test_gpu > "$OUT/t_ru.log" 2>&1; echo "# rc $?" >> "$OUT/t_ru.log") &
  (TEST_QUICK=1 TEST_ONLY=test_moe_layer timeout 150 ./build/test_gpu > "$OUT/t_layer.log" 2>&1; echo "# rc $?" >> "$OUT/t_layer.log") &
  (TEST_QUICK=1 TEST_ONLY=layer_quantizer_widened timeout 150 ./build/test_gpu > "$OUT/t_wid.log" 2>&1; echo "# rc $?" >> "$OUT/t_wid.log") &
  wait
  for l in "$OUT"/t_*.log; do echo "$(basename "$l"): $(grep -E '^PASS|^FAIL|^SKIP|^# rc' "$l" | cut -c1-110 | tr '\n' ' ')"; done
  echo "tests done at $(( $(date +%s) - t0 )) s"
  NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout ${BT:-330} python3 tools/bench.py > "$OUT/bench.log" 2>&1
  echo "bench exit $?"; grep -vE "^(dsv3|qwen3|gpt)_.*layer" "$OUT/bench.log" | tail -40 | cut -c1-150
  w=$(grep -m1 '^wrote ' "$OUT/bench.log" | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/"
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
# (X80-X83 set NVFP4MOE_QIMG8, whose _img8 kernels 0.5.9 removed: they run as written on trees up to dc6825b.)
X80)
  # thirty-eighth session: the _img8 kernels (a CTA a chunk of 8 tokens, whole image lines through shared memory).
  # The widened-token test (10 cases, the _img and _img8 kernels each: image against the pre-pass, codes, SFs and
  # per-token scales against the plain quantizer) and the quick layer tests; memcheck and racecheck on the
  # widened-token test; then the DeepSeek-V3 and Qwen3 layers timed and traced: a = NVFP4MOE_QIMG8=0 (0.5.7),
  # b = NVFP4MOE_QIMG8=1 (the SiLU quantizer's _img8), c = b with NVFP4MOE_LAYER_WIDEN=3 (the input quantizer's _img8
  # too, GEMM1 without its pre-pass), d = a with NVFP4MOE_LAYER_WIDEN=3; order a b c d d c b a, twice
  # (X80 and X81 ran at 0921467 and e59c5b9, where the _img8 kernels were the default and b was NVFP4MOE_Y=1, c
  # NVFP4MOE_LAYER_WIDEN=3; since 0.5.8 they are opt-in, so b and c below set NVFP4MOE_QIMG8=1)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (TEST_ONLY=layer_quantizer_widened timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu \
     > "$OUT/memcheck_w.log" 2>&1; echo "# rc $?" >> "$OUT/memcheck_w.log"
   TEST_ONLY=layer_quantizer_widened timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 ./build/test_gpu \
     > "$OUT/racecheck_w.log" 2>&1; echo "# rc $?" >> "$OUT/racecheck_w.log") &
  TEST_ONLY=layer_quantizer_widened timeout 150 ./build/test_gpu > "$OUT/test_widened.log" 2>&1
  summ "widened tokens" "$OUT/test_widened.log" $?
  grep -E "^# widened" "$OUT/test_widened.log" | head -20
  grep -h -A6 "^FAIL" "$OUT/test_widened.log" | head -12
  TEST_QUICK=1 TEST_ONLY=moe_layer timeout 150 ./build/test_gpu > "$OUT/test_moe_layer.log" 2>&1
  summ "moe_layer (quick)" "$OUT/test_moe_layer.log" $?
  grep -h -A6 "^FAIL" "$OUT/test_moe_layer.log" | head -12
  echo "tests at $(( $(date +%s) - t0 )) s"
  if grep -q "^FAIL" "$OUT/test_widened.log" "$OUT/test_moe_layer.log"; then wait; exit 0; fi
  a="NVFP4MOE_QIMG8=0"; b="NVFP4MOE_QIMG8=1"; c="NVFP4MOE_QIMG8=1;NVFP4MOE_LAYER_WIDEN=3"; d="NVFP4MOE_QIMG8=0;NVFP4MOE_LAYER_WIDEN=3"
  r="$a,$b,$c,$d,$d,$c,$b,$a"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout ${ABT:-270} \
    python3 tools/bench.py --envs "$r,$r" --only layer --out "$OUT/layer_img8_ab.json" > "$OUT/layer_img8_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"
  wait
  for l in "$OUT"/memcheck_w.log "$OUT"/racecheck_w.log; do
    echo "$(basename "$l"): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^PASS|^FAIL|^# rc' "$l" | cut -c1-110 | tr '\n' ' ')"
  done
  ;;
X83)
  # fortieth session, after X82 (the block-a-thread _img8 kernels 15 % slower than _img for the DeepSeek-V3 SiLU
  # quantizer, 1.6x for its input): is it the tail (at 128 threads a row one 1024-thread CTA an SM, about 150 chunks
  # on 132 SMs)? The layers traced with the team fixed: a = NVFP4MOE_QIMG8=0, b = 1 (the host's team), b64 / b32 =
  # 64 / 32 threads a row (2 / 4 CTAs an SM), c64 = b64 with NVFP4MOE_LAYER_WIDEN=3 (the input kernel too; X82 ran
  # it at the host's team); forward then backward. Then Nsight Compute on the DeepSeek-V3 SiLU quantizer, _img and
  # _img8 at team 128
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  # (the kernels are X82's, whose widened-token test ran every team size: no test here)
  a="NVFP4MOE_QIMG8=0"; b="NVFP4MOE_QIMG8=1"; b64="NVFP4MOE_QIMG8=64"; b32="NVFP4MOE_QIMG8=32"
  c64="$b64;NVFP4MOE_LAYER_WIDEN=3"
  r="$a,$b,$b64,$b32,$c64,$c64,$b32,$b64,$b,$a"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout ${ABT:-250} \
    python3 tools/bench.py --envs "$r" --only layer --out "$OUT/layer_img8_team_ab.json" > "$OUT/layer_img8_team_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"
  for q in 0 1; do
    NVFP4MOE_QIMG8=$q NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer timeout 60 ncu --clock-control none \
      -k regex:silu_mul_quantize_img --launch-skip 3 --launch-count 1 --kill yes --section SpeedOfLight \
      --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
      --section MemoryWorkloadAnalysis python3 tools/bench.py --only layer > "$OUT/ncu_silu_$q.txt" 2>&1
    echo "ncu QIMG8=$q rc $?: $(grep -E "^ +Duration|Achieved Occupancy|Warp Cycles Per Issued Instruction|Grid Size|Block Size" \
      "$OUT/ncu_silu_$q.txt" | tr -s ' ' | tr '\n' ';' | cut -c1-300)"
  done
  echo "ncu at $(( $(date +%s) - t0 )) s"
  ;;
X82)
  # thirty-ninth session: the _img8 kernels redone a block a thread (a team of 32-128 threads a row, 8 rows a CTA of
  # up to 1024 threads). The widened-token test (12 cases; the _img kernels, then the _img8 ones at the host's
  # threads a row and at 32, 64, 128), memcheck and racecheck on it, the quick layer tests under NVFP4MOE_QIMG8=1;
  # then the DeepSeek-V3 and Qwen3 layers timed and traced: a = NVFP4MOE_QIMG8=0 (0.5.8's default), b =
  # NVFP4MOE_QIMG8=1 (the SiLU quantizer's _img8), c = b with NVFP4MOE_LAYER_WIDEN=3 (the input quantizer's _img8
  # too, GEMM1 without its pre-pass); order a b c c b a, twice
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (TEST_ONLY=layer_quantizer_widened timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu \
     > "$OUT/memcheck_w.log" 2>&1; echo "# rc $?" >> "$OUT/memcheck_w.log"
   TEST_ONLY=layer_quantizer_widened timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 ./build/test_gpu \
     > "$OUT/racecheck_w.log" 2>&1; echo "# rc $?" >> "$OUT/racecheck_w.log") &
  TEST_ONLY=layer_quantizer_widened timeout 150 ./build/test_gpu > "$OUT/test_widened.log" 2>&1
  summ "widened tokens" "$OUT/test_widened.log" $?
  grep -E "^# widened" "$OUT/test_widened.log" | grep -c . 
  grep -h -A6 "^FAIL" "$OUT/test_widened.log" | head -16
  NVFP4MOE_QIMG8=1 TEST_QUICK=1 TEST_ONLY=moe_layer timeout 150 ./build/test_gpu > "$OUT/test_moe_layer.log" 2>&1
  summ "moe_layer (quick, QIMG8=1)" "$OUT/test_moe_layer.log" $?
  grep -h -A6 "^FAIL" "$OUT/test_moe_layer.log" | head -12
  echo "tests at $(( $(date +%s) - t0 )) s"
  if grep -q "^FAIL" "$OUT/test_widened.log" "$OUT/test_moe_layer.log"; then wait; exit 0; fi
  a="NVFP4MOE_QIMG8=0"; b="NVFP4MOE_QIMG8=1"; c="NVFP4MOE_QIMG8=1;NVFP4MOE_LAYER_WIDEN=3"
  r="$a,$b,$c,$c,$b,$a"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout ${ABT:-250} \
    python3 tools/bench.py --envs "$r,$r" --only layer --out "$OUT/layer_img8b_ab.json" > "$OUT/layer_img8b_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"
  wait
  for l in "$OUT"/memcheck_w.log "$OUT"/racecheck_w.log; do
    echo "$(basename "$l"): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^PASS|^FAIL|^# rc' "$l" | cut -c1-110 | tr '\n' ' ')"
  done
  ;;
X81)
  # thirty-eighth session, after X80 (the _img8 kernels 2.8-4.8x slower than the _img ones): the same A/B once
  # (a b c d d c b a) with the occupancy query after the 64 KB opt-in (X80 asked before it: at most 1 CTA an SM)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a --only quantize_img 2>&1 | tail -1 # (also the _img8 modules since 0.5.8)
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  TEST_ONLY=layer_quantizer_widened timeout 150 ./build/test_gpu > "$OUT/test_widened.log" 2>&1
  summ "widened tokens" "$OUT/test_widened.log" $?
  a="NVFP4MOE_QIMG8=0"; b="NVFP4MOE_QIMG8=1"; c="NVFP4MOE_QIMG8=1;NVFP4MOE_LAYER_WIDEN=3"; d="NVFP4MOE_QIMG8=0;NVFP4MOE_LAYER_WIDEN=3"
  r="$a,$b,$c,$d,$d,$c,$b,$a"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout ${ABT:-200} \
    python3 tools/bench.py --envs "$r" --only layer --out "$OUT/layer_img8_occ_ab.json" > "$OUT/layer_img8_occ_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"
  ;;
X79)
  # thirty-seventh session, after X78: the layer default as committed (the SiLU quantizer without programmatic
  # dependent launch only where it writes GEMM2's widened tokens), its quick layer tests; then on the DeepSeek-V3 and
  # Qwen3 layers (timed and traced) a = the default, b = NVFP4MOE_LAYER_WIDEN=0 (GEMM2's pre-pass; the SiLU
  # quantizer then launched early), c = b with NVFP4MOE_LAYER_PDL=1 (not early), d = NVFP4MOE_PDL=0, e =
  # NVFP4MOE_LAYER_PDL=3 (0.5.6), in the order a b c d e e d c b a, twice
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  for t in moe_layer layer_quantizer_widened; do
    TEST_QUICK=1 TEST_ONLY=$t timeout 150 ./build/test_gpu > "$OUT/test_$t.log" 2>&1
    summ "$t (quick)" "$OUT/test_$t.log" $?
  done
  a="NVFP4MOE_Y=1"; b="NVFP4MOE_LAYER_WIDEN=0"; c="NVFP4MOE_LAYER_WIDEN=0;NVFP4MOE_LAYER_PDL=1"; d="NVFP4MOE_PDL=0"
  e="NVFP4MOE_LAYER_PDL=3"; r="$a,$b,$c,$d,$e,$e,$d,$c,$b,$a"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout 300 \
    python3 tools/bench.py --envs "$r,$r" --only layer --out "$OUT/layer_widen_pdl_ab.json" > "$OUT/layer_widen_pdl_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"
  ;;
X78)
  # thirty-seventh session: the expert layer's SiLU quantizer without programmatic dependent launch (new default,
  # NVFP4MOE_LAYER_PDL=1) against 0.5.6's launches (=3) and no PDL at all (NVFP4MOE_PDL=0): the quick layer tests,
  # then the layers timed and traced, contexts P3 Y P0 P0 Y P3 twice (Y: no such switch, the new default)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  for t in moe_layer layer_quantizer_widened; do
    TEST_QUICK=1 TEST_ONLY=$t timeout 150 ./build/test_gpu > "$OUT/test_$t.log" 2>&1
    summ "$t (quick)" "$OUT/test_$t.log" $?
  done
  r="NVFP4MOE_LAYER_PDL=3,NVFP4MOE_Y=1,NVFP4MOE_PDL=0,NVFP4MOE_PDL=0,NVFP4MOE_Y=1,NVFP4MOE_LAYER_PDL=3"
  NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout 300 python3 tools/bench.py --envs "$r,$r" --only layer \
    --out "$OUT/layer_pdl_ab.json" > "$OUT/layer_pdl_ab.log" 2>&1
  echo "A/B rc $? at $(( $(date +%s) - t0 )) s"
  grep -E "^dsv3_ep8_layer " "$OUT/layer_pdl_ab.log" | head -3 | cut -c1-600
  ;;
X77)
  # thirty-seventh session, after X76 (the DeepSeek-V3 layer's SiLU quantizer ran about 24 us past GEMM1's end,
  # where the SiLU quantizer alone takes about 11): the layers' kernels traced under the default, under
  # NVFP4MOE_PDL=0 (no programmatic dependent launch) and under NVFP4MOE_LAYER_WIDEN=0 (the SiLU quantizer without
  # the widened tokens, GEMM2 with its pre-pass); contexts in the order Y P W W P Y (Y: no such switch, the default)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  e="NVFP4MOE_Y=1,NVFP4MOE_PDL=0,NVFP4MOE_LAYER_WIDEN=0,NVFP4MOE_LAYER_WIDEN=0,NVFP4MOE_PDL=0,NVFP4MOE_Y=1"
  NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout 200 python3 tools/bench.py --envs "$e" --only layer \
    --out "$OUT/layer_profile_envs.json" > "$OUT/profile_envs.log" 2>&1
  echo "profile rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^(dsv3|qwen3|gpt)" "$OUT/profile_envs.log" | cut -c1-1500
  ;;
X76)
  # thirty-seventh session: where the DeepSeek-V3 layer's time goes. The layer (386 us in F36) is 20-25 us more
  # than its parts timed alone (GEMMs at Poisson(33) with m_max 59, both quantizers); the layer's buffers have
  # m_max 256. (1) each layer's kernels from a profiler trace of its graph (NVFP4MOE_BENCH_PROFILE=1): durations
  # and gaps; (2) the DeepSeek-V3 GEMMs at Poisson(33) with m_max 59 against 256 (same draw), four runs interleaved
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  NVFP4MOE_BENCH_PROFILE=1 PYTHONUNBUFFERED=1 timeout 150 python3 tools/bench.py --only layer \
    --out "$OUT/layer_profile.json" > "$OUT/profile.log" 2>&1
  echo "profile rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^(dsv3|qwen3|gpt)" "$OUT/profile.log" | cut -c1-1500
  sh="dsv3_ep8_gemm1,dsv3_ep8_gemm2"; e="NVFP4MOE_Y=1,NVFP4MOE_Y=1,NVFP4MOE_Y=1"  # (no such switch: three default contexts)
  for i in 1 2; do
    PYTHONUNBUFFERED=1 timeout 60 python3 tools/bench.py --envs "$e" --poisson --ms 33 --only gemm --shapes "$sh" \
      --out "$OUT/mmax59_$i.json" > "$OUT/mmax59_$i.log" 2>&1; echo "m_max 59 run $i rc $?"
    PYTHONUNBUFFERED=1 timeout 60 python3 tools/bench.py --envs "$e" --poisson --ms 33 --mmax 256 --only gemm \
      --shapes "$sh" --out "$OUT/mmax256_$i.json" > "$OUT/mmax256_$i.log" 2>&1; echo "m_max 256 run $i rc $?"
  done
  echo "done at $(( $(date +%s) - t0 )) s"
  ;;
X75)
  # proposed first call of the next session (not run in the thirty-sixth): X73 again with more rounds where it
  # leaned to a gain (512 tokens and Poisson(100)), to tell whether the 128-token twin pays up to K 2048: a =
  # -DNVF_Y=1 (K <= 1024), b = -DNVF_RES128K=2048; 16 rounds; control Qwen3 GEMM2 (the twin in both arms)
  t0=$(date +%s)
  PDEFS="-DNVF_Y=1 -DNVF_RES128K=2048" precompile_defs
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  a="-DNVF_Y=1"; b="-DNVF_RES128K=2048"; r="$a,$b,$b,$a"; sh="qwen3_235b_ep8_gemm2,qwen3_30b_gemm1,dsv3_ep8_gemm2,qwen3_30b_gemm2"
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --defines "$r,$r,$r,$r,$r,$r,$r,$r" --ms 512 --only gemm \
    --shapes "$sh" --out "$OUT/ab_res128k_512.json" > "$OUT/ab1.log" 2>&1
  echo "A/B 1 rc $? at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT2:-100} python3 tools/bench.py --defines "$r,$r,$r,$r,$r,$r,$r,$r" --poisson --ms 100 \
    --only gemm --shapes "$sh" --out "$OUT/ab_res128k_poisson16.json" > "$OUT/ab2.log" 2>&1
  echo "A/B 2 rc $? at $(( $(date +%s) - t0 )) s"
  ;;
X74)
  # thirty-sixth session, after review: the resident-units test with its new case (400 groups, K 768, TILED: every
  # resident tile's CTAs take several units, the 128-token twin's included), every define set; memcheck on it for
  # the 128-token tiles
  t0=$(date +%s)
  (TEST_QUICK=1 TEST_ONLY=resident_units timeout 150 ./build/test_gpu > "$OUT/t_ru.log" 2>&1; echo "# rc $?" >> "$OUT/t_ru.log") &
  TEST_QUICK=1 TEST_ONLY=resident_units TEST_CONFIGS=ws_t128 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
    ./build/test_gpu > "$OUT/memcheck.ru.log" 2>&1
  echo "memcheck resident units (128-token tiles) exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.ru.log" | head -1)"
  wait
  echo "t_ru.log: $(grep -E '^PASS|^FAIL|^SKIP|^# [0-9]+ launches|^# rc' "$OUT/t_ru.log" | cut -c1-110 | tr '\n' ' ')"
  grep -h -A3 "^FAIL" "$OUT/t_ru.log" | head -12
  echo "done at $(( $(date +%s) - t0 )) s"
  ;;
X73)
  # thirty-sixth session: where the 128-token tile's resident twin should stop. a = -DNVF_Y=1 (0.5.6: K <= 1024),
  # b = -DNVF_RES128K=2048 (resident up to K 2048): Qwen3-235B EP8 GEMM2 (K 1536), Qwen3 GEMM1 and DeepSeek-V3 GEMM2
  # (K 2048), Qwen3 GEMM2 (K 768, resident in both: the control); uniform 128/512 and Poisson(100), 8 rounds. First
  # every-tile and resident units on the 128-token tiles under b.
  t0=$(date +%s)
  PDEFS="-DNVF_Y=1 -DNVF_RES128K=2048" precompile_defs
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (NVFP4MOE_TUNE_DEFINE=-DNVF_RES128K=2048 TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=ws_t128 timeout 120 ./build/test_gpu \
     > "$OUT/t_et.log" 2>&1; echo "# rc $?" >> "$OUT/t_et.log") &
  (NVFP4MOE_TUNE_DEFINE=-DNVF_RES128K=2048 TEST_QUICK=1 TEST_ONLY=resident_units TEST_CONFIGS=ws_t128 timeout 120 ./build/test_gpu \
     > "$OUT/t_ru.log" 2>&1; echo "# rc $?" >> "$OUT/t_ru.log") &
  wait
  for l in "$OUT"/t_*.log; do echo "$(basename "$l"): $(grep -E '^PASS|^FAIL|^SKIP|^# rc' "$l" | cut -c1-110 | tr '\n' ' ')"; done
  echo "tests done at $(( $(date +%s) - t0 )) s"
  a="-DNVF_Y=1"; b="-DNVF_RES128K=2048"; r="$a,$b,$b,$a"; sh="qwen3_235b_ep8_gemm2,qwen3_30b_gemm1,dsv3_ep8_gemm2,qwen3_30b_gemm2"
  PYTHONUNBUFFERED=1 timeout ${ABT:-100} python3 tools/bench.py --defines "$r,$r,$r,$r" --ms 128,512 --only gemm --shapes "$sh" \
    --out "$OUT/ab_res128k_uniform.json" > "$OUT/ab1.log" 2>&1
  echo "A/B 1 rc $? at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT2:-60} python3 tools/bench.py --defines "$r,$r,$r,$r" --poisson --ms 100 --only gemm --shapes "$sh" \
    --out "$OUT/ab_res128k_poisson.json" > "$OUT/ab2.log" 2>&1
  echo "A/B 2 rc $? at $(( $(date +%s) - t0 )) s"
  ;;
B36)
  # thirty-sixth session's last call (0.5.6 as committed, tested in X72 and F36 on an H100): the full benchmark
  # alone (the file named by the card), for an H200 if one comes
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${BT:-300} python3 tools/bench.py > "$OUT/bench.log" 2>&1
  echo "bench exit $?"; tail -40 "$OUT/bench.log" | cut -c1-150
  w=$(grep -m1 '^wrote ' "$OUT/bench.log" | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/"
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X72)
  # thirty-sixth session: the 128-token tile's resident twin on TILED weights with K % 256 == 0 and K <= 1024
  # (gemm_sm90_ws_t128_wg3[_varn]_k256_res_tiled): its tests in parallel (every-tile on the 128-token tiles under
  # the default and under -DNVF_WSNEXT=-1, resident units with every define set, the rest of the GEMM and layer
  # tests; memcheck on resident units of the 128-token tiles), then the A/B a = -DNVF_RES128=0 (0.5.5's choice),
  # b = the default (the twin, hoisted decode), c = -DNVF_WSNEXT=-1 (the twin without the hoisted decode):
  # uniform 128 and 512 tokens on every shape, Poisson(100) on the Qwen3 GEMMs
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_Y=1 -DNVF_RES128=0 -DNVF_WSNEXT=-1" precompile_defs
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s: $(tail -1 /tmp/pc_default.log)"
  (TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=ws_t128 timeout 200 ./build/test_gpu > "$OUT/t_et.log" 2>&1
   echo "# rc $?" >> "$OUT/t_et.log") &
  (NVFP4MOE_TUNE_DEFINE=-DNVF_WSNEXT=-1 TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=ws_t128 timeout 200 ./build/test_gpu \
     > "$OUT/t_et_nohoist.log" 2>&1; echo "# rc $?" >> "$OUT/t_et_nohoist.log") &
  (TEST_QUICK=1 TEST_ONLY=resident_units timeout 200 ./build/test_gpu > "$OUT/t_ru.log" 2>&1; echo "# rc $?" >> "$OUT/t_ru.log") &
  (for t in gemm_shapes group_isolation tiled_same_bits graph_replay test_moe_layer widened; do
     TEST_QUICK=1 TEST_ONLY=$t timeout 100 ./build/test_gpu > "$OUT/t_$t.log" 2>&1; echo "# rc $?" >> "$OUT/t_$t.log"
   done) &
  TEST_QUICK=1 TEST_ONLY=resident_units TEST_CONFIGS=ws_t128 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
    ./build/test_gpu > "$OUT/memcheck.ru.log" 2>&1
  echo "memcheck resident units (128-token tiles) exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.ru.log" | head -1)"
  wait
  for l in "$OUT"/t_*.log; do echo "$(basename "$l"): $(grep -E '^PASS|^FAIL|^SKIP|^# [0-9]+ launches|^# rc' "$l" | cut -c1-110 | tr '\n' ' ')"; done
  grep -h -A3 "^FAIL" "$OUT"/t_*.log | head -20
  echo "tests done at $(( $(date +%s) - t0 )) s"
  a="-DNVF_RES128=0"; b="-DNVF_Y=1"; c="-DNVF_WSNEXT=-1"; r="$a,$b,$c,$c,$b,$a"
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --defines "$r,$r,$r,$r" --ms 128,512 --only gemm \
    --out "$OUT/ab_res128_uniform.json" > "$OUT/ab1.log" 2>&1
  echo "A/B 1 rc $? at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT2:-100} python3 tools/bench.py --defines "$r,$r,$r,$r" --poisson --ms 100 --only gemm \
    --shapes qwen3_30b_gemm1,qwen3_30b_gemm2 --out "$OUT/ab_res128_poisson.json" > "$OUT/ab2.log" 2>&1
  echo "A/B 2 rc $? at $(( $(date +%s) - t0 )) s"
  ;;
F36)
  # thirty-sixth session (ran on 0.5.5 as committed, after X71, then on 0.5.6 after X72): a few GPU tests in parallel on
  # this card (token-producer every-tile, resident units, the layer), then the full benchmark (the file named by the card)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout 150 ./build/test_gpu > "$OUT/t_et.log" 2>&1; echo "# rc $?" >> "$OUT/t_et.log") &
  (TEST_QUICK=1 TEST_ONLY=resident_units timeout 150 ./build/test_gpu > "$OUT/t_ru.log" 2>&1; echo "# rc $?" >> "$OUT/t_ru.log") &
  (TEST_QUICK=1 TEST_ONLY=test_moe_layer timeout 150 ./build/test_gpu > "$OUT/t_layer.log" 2>&1; echo "# rc $?" >> "$OUT/t_layer.log") &
  wait
  for l in "$OUT"/t_*.log; do echo "$(basename "$l"): $(grep -E '^PASS|^FAIL|^SKIP|^# rc' "$l" | cut -c1-110 | tr '\n' ' ')"; done
  echo "tests done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${BT:-330} python3 tools/bench.py > "$OUT/bench.log" 2>&1
  echo "bench exit $?"; tail -40 "$OUT/bench.log" | cut -c1-150
  w=$(grep -m1 '^wrote ' "$OUT/bench.log" | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/"
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X71)
  # thirty-fifth session's last call (0.5.5 candidate: the unit table and residency on the TILED 48-token tile, the
  # hoisted decode on the 32- and 48-token tiles): tests of the new default, in parallel (token-producer every-tile;
  # resident units under the default and -DNVF_PCOMPACT=0/1/2; the rest of the quick GPU suite, test by test, under
  # one deadline ($TT s from the start); memcheck on resident units), then the A/B of the default (b) against 0.5.4's
  # kernels (a = -DNVF_PCOMPACT=0): uniform 32/64 eight rounds, Poisson(16)/(33) and the four layers six rounds.
  # Not run in the thirty-fifth session (no device time left); ran as the thirty-sixth session's first call (H100).
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_Y=1 -DNVF_PCOMPACT=0 -DNVF_PCOMPACT=1 -DNVF_PCOMPACT=2" precompile_defs
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  (TEST_QUICK=1 TEST_ONLY=every_tile TEST_CONFIGS=gemm_sm90_ws timeout 200 ./build/test_gpu > "$OUT/t_et.log" 2>&1
   echo "# rc $?" >> "$OUT/t_et.log") &
  (TEST_QUICK=1 TEST_ONLY=resident_units timeout 200 ./build/test_gpu > "$OUT/t_ru.log" 2>&1; echo "# rc $?" >> "$OUT/t_ru.log") &
  (for t in quantize_per_token quantize_masked silu_mul_quantize software e2m1 long_rows many_rows weight_quant sf_convert \
           gemm_shapes group_isolation weights_relayout tiled_same_bits graph_replay test_moe_layer widened self_test threads; do
     left=$(( ${TT:-330} - ($(date +%s) - t0) ))
     [ $left -lt 10 ] && { echo "no time left for $t" > "$OUT/t_$t.log"; continue; }
     TEST_QUICK=1 TEST_ONLY=$t timeout $left ./build/test_gpu > "$OUT/t_$t.log" 2>&1; echo "# rc $?" >> "$OUT/t_$t.log"
   done) &
  TEST_QUICK=1 TEST_ONLY=resident_units timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_gpu \
    > "$OUT/memcheck.ru.log" 2>&1
  echo "memcheck resident units exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.ru.log" | head -1)"
  wait
  for l in "$OUT"/t_*.log; do echo "$(basename "$l"): $(grep -E '^PASS|^FAIL|^SKIP|^# [0-9]+ launches|^# rc|^no time' "$l" | cut -c1-110 | tr '\n' ' ')"; done
  echo "tests done at $(( $(date +%s) - t0 )) s"
  a="-DNVF_PCOMPACT=0"; b="-DNVF_Y=1"
  PYTHONUNBUFFERED=1 timeout ${ABT:-100} python3 tools/bench.py --defines "$a,$b,$b,$a,$a,$b,$b,$a,$a,$b,$b,$a,$a,$b,$b,$a" \
    --ms 32,64 --only gemm --out "$OUT/ab_055_uniform.json" > "$OUT/ab1.log" 2>&1
  echo "A/B 1 rc $? at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT2:-120} python3 tools/bench.py --defines "$a,$b,$b,$a,$a,$b,$b,$a,$a,$b,$b,$a" \
    --poisson --ms 16,33 --only gemm,layer --out "$OUT/ab_055_poisson.json" > "$OUT/ab2.log" 2>&1
  echo "A/B 2 rc $? at $(( $(date +%s) - t0 )) s"
  ;;
X70)
  # thirty-fifth session: where the table's cost at 64 uniform tokens lies (X69: +4 to +5 %, the numbering unchanged):
  # a = default, b = the table (-DNVF_PCOMPACT=1), c = the table built but not used (-DNVF_PCOMPACT_PROBE=1), d = used
  # without the hoisted decode (-DNVF_PCOMPACT_PROBE=2), e = the hoisted decode alone (-DNVF_WSNEXT=1); uniform 32 and
  # 64 tokens and Poisson(16), eight rounds, on Qwen3 GEMM1/GEMM2 and DeepSeek-V3 GEMM2
  t0=$(date +%s)
  PDEFS="-DNVF_Y=1 -DNVF_PCOMPACT=1 -DNVF_PCOMPACT_PROBE=1 -DNVF_PCOMPACT_PROBE=2 -DNVF_WSNEXT=1" precompile_defs
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  a="-DNVF_Y=1"; b="-DNVF_PCOMPACT=1"; c="-DNVF_PCOMPACT_PROBE=1"; d="-DNVF_PCOMPACT_PROBE=2"; e="-DNVF_WSNEXT=1"
  r="$a,$b,$c,$d,$e,$e,$d,$c,$b,$a"
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --defines "$r,$r,$r,$r" --ms 32,64 --only gemm \
    --shapes qwen3_30b_gemm1,qwen3_30b_gemm2,dsv3_ep8_gemm2 --out "$OUT/ab_probe_uniform.json" > "$OUT/ab1.log" 2>&1
  echo "A/B 1 rc $? at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT2:-100} python3 tools/bench.py --defines "$r,$r,$r,$r" --poisson --ms 16 --only gemm \
    --shapes qwen3_30b_gemm1,qwen3_30b_gemm2,dsv3_ep8_gemm2 --out "$OUT/ab_probe_poisson.json" > "$OUT/ab2.log" 2>&1
  echo "A/B 2 rc $? at $(( $(date +%s) - t0 )) s"
  ;;
X69)
  # thirty-fifth session: X68's arms again with more rounds, to tell the table's cost from the spread of the
  # uniform GEMM rows: a = default, b = the table (-DNVF_PCOMPACT=1), c = the table and the 48-token tile resident
  # (=2); uniform 32 and 64 tokens twelve rounds, Poisson(16) and Poisson(33) on every GEMM shape six rounds, the four
  # layers six rounds
  t0=$(date +%s)
  PDEFS="-DNVF_Y=1 -DNVF_PCOMPACT=1 -DNVF_PCOMPACT=2" precompile_defs
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  a="-DNVF_Y=1"; b="-DNVF_PCOMPACT=1"; c="-DNVF_PCOMPACT=2"
  PYTHONUNBUFFERED=1 timeout ${ABT:-150} python3 tools/bench.py --defines "$a,$b,$c,$c,$b,$a,$a,$b,$c,$c,$b,$a,$a,$b,$c,$c,$b,$a,$a,$b,$c,$c,$b,$a" \
    --ms 32,64 --only gemm --out "$OUT/ab_ptab_uniform12.json" > "$OUT/ab1.log" 2>&1
  echo "A/B 1 rc $? at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT2:-150} python3 tools/bench.py --defines "$a,$b,$c,$c,$b,$a,$a,$b,$c,$c,$b,$a,$a,$b,$c,$c,$b,$a" \
    --poisson --ms 16,33 --only gemm,layer --out "$OUT/ab_ptab_poisson.json" > "$OUT/ab2.log" 2>&1
  echo "A/B 2 rc $? at $(( $(date +%s) - t0 )) s"
  ;;
X68)
  # thirty-fifth session: the consumers decode the next unit once, when a unit starts (-DNVF_WSNEXT=1; always with the
  # table), and the table's counts loaded by every thread. Tests: the token-producer every-tile and resident-units
  # tests, the layer, group-isolation and graph-replay tests under the default (0.5.4's first GPU run); every-tile and
  # resident units under the new arms; memcheck on resident units under -DNVF_PCOMPACT=2; then the layers and the
  # DeepSeek-V3 GEMMs at Poisson(33), then uniform 32 and 64 tokens: a = default, b = WSNEXT, c = table + t48 resident
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_Y=1 -DNVF_WSNEXT=1 -DNVF_PCOMPACT=1 -DNVF_PCOMPACT=2" precompile_defs
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  ws_quick_tests "resident_units moe_layer group_isolation graph_replay" &
  PDEFS="-DNVF_WSNEXT=1 -DNVF_PCOMPACT=2" tests_under_defs "every-tile ws" et every_tile 150 TEST_CONFIGS=gemm_sm90_ws > /tmp/x68b.txt 2>&1 &
  wait
  cat /tmp/x68b.txt
  PDEFS="-DNVF_WSNEXT=1 -DNVF_PCOMPACT=2" tests_under_defs "resident-units" ru resident_units 100 &
  NVFP4MOE_TUNE_DEFINE=-DNVF_PCOMPACT=2 TEST_QUICK=1 TEST_ONLY=resident_units timeout 100 compute-sanitizer --tool memcheck \
    --error-exitcode 9 ./build/test_gpu > "$OUT/memcheck.ru.log" 2>&1
  echo "memcheck resident units (=2) exit $?: $(grep -hE "ERROR SUMMARY" "$OUT/memcheck.ru.log" | head -1)"
  wait
  echo "tests done at $(( $(date +%s) - t0 )) s"
  a="-DNVF_Y=1"; b="-DNVF_WSNEXT=1"; c="-DNVF_PCOMPACT=2"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer PYTHONUNBUFFERED=1 timeout ${ABT:-100} python3 tools/bench.py \
    --defines "$a,$b,$c,$c,$b,$a,$a,$b,$c" --poisson --ms 33 --only gemm,layer --shapes dsv3_ep8_gemm1,dsv3_ep8_gemm2 \
    --out "$OUT/ab_next_layers.json" 2>&1 | grep -E "tune=" | grep layer | cut -c1-150
  echo "A/B 1 done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT2:-75} python3 tools/bench.py --defines "$a,$b,$c,$c,$b,$a" --ms 32,64 --only gemm \
    --out "$OUT/ab_next_uniform.json" > /dev/null 2>&1
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
X67)
  # thirty-fourth session: X66 again with the units' groups found by warp ballots (nvf_ws_decode<true>) instead of a
  # binary search a thread (cut to fit what was left of the session's device time): quick tests (resident units
  # with the table and with the table and the 48-token tile resident, token-producer every-tile, layer), then the
  # A/Bs of X66 with a third round. As run the table was the default, its arms "-DNVF_PCOMPACT=0, -DNVF_Y=1,
  # -DNVF_PERSIST=1"; here as main names them (=2 makes only the TILED 48-token tile resident besides 0.5.3's, where
  # -DNVF_PERSIST=1 made every tile resident: the same kernels on the layers and the DeepSeek-V3 GEMMs at Poisson(33))
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a > /tmp/pc_default.log 2>&1 &
  PDEFS="-DNVF_Y=1 -DNVF_PCOMPACT=1 -DNVF_PCOMPACT=2" precompile_defs
  wait
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  PDEFS="-DNVF_PCOMPACT=1 -DNVF_PCOMPACT=2" tests_under_defs "resident-units" ru resident_units 100
  ws_quick_tests "moe_layer"
  echo "tests done at $(( $(date +%s) - t0 )) s"
  a="-DNVF_Y=1"; b="-DNVF_PCOMPACT=1"; c="-DNVF_PCOMPACT=2"
  NVFP4MOE_BENCH_LAYERS=dsv3_ep8_layer,qwen3_30b_layer PYTHONUNBUFFERED=1 timeout ${ABT:-60} python3 tools/bench.py \
    --defines "$a,$b,$c,$c,$b,$a,$a,$b,$c" --poisson --ms 33 --only gemm,layer --shapes dsv3_ep8_gemm1,dsv3_ep8_gemm2 \
    --out "$OUT/ab_ptab_layers.json" 2>&1 | grep -E "tune=" | grep layer | cut -c1-150
  echo "A/B 1 done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${ABT2:-40} python3 tools/bench.py --defines "$a,$b,$b,$a,$a,$b" --ms 32,64 --only gemm \
    --out "$OUT/ab_ptab_uniform.json" > /dev/null 2>&1
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
F33)
  # thirty-third session's final call (0.5.3): the quick GPU suite, test by test, under one deadline ($TT s), then
  # the full benchmark (the file named by the card)
  t0=$(date +%s)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  echo "precompiled at $(( $(date +%s) - t0 )) s"
  for t in quantize_per_token quantize_masked silu_mul_quantize software e2m1 long_rows many_rows weight_quant sf_convert gemm_shapes \
           every_tile group_isolation weights_relayout tiled_same_bits graph_replay test_moe_layer widened self_test threads; do
    left=$(( ${TT:-300} - ($(date +%s) - t0) ))
    [ $left -lt 10 ] && { echo "no time left for $t"; continue; }
    TEST_QUICK=1 TEST_ONLY=$t timeout $left ./build/test_gpu > "$OUT/test_$t.log" 2>&1
    echo "$t rc $?: $(grep -E '^PASS|^FAIL|^SKIP' "$OUT/test_$t.log" | cut -c1-90 | tr '\n' ' ')"
    grep -E '^#   ' "$OUT/test_$t.log" | head -4
  done
  echo "tests done at $(( $(date +%s) - t0 )) s"
  PYTHONUNBUFFERED=1 timeout ${BT:-240} python3 tools/bench.py > "$OUT/bench.log" 2>&1
  echo "bench exit $?"; tail -40 "$OUT/bench.log" | cut -c1-150
  w=$(grep -m1 '^wrote ' "$OUT/bench.log" | cut -c7-); [ -n "$w" ] && cp "$w" "$OUT/"
  echo "all done at $(( $(date +%s) - t0 )) s"
  ;;
F28)
  # twenty-eighth session's final call: the kernels precompiled, the whole GPU suite in its quick form (every test;
  # fewer large shapes), then the full benchmark (I)
  ./build/nvfp4moe_precompile sm_90a 2>&1 | tail -1
  TEST_QUICK=1 timeout ${TT:-220} ./build/test_gpu > "$OUT/test_gpu_quick.log" 2>&1
  summ "quick GPU suite" "$OUT/test_gpu_quick.log" $? 19
  grep -E '^PASS|^FAIL|^SKIP' "$OUT/test_gpu_quick.log" | cut -c1-100
  OUT="$OUT" bash "$0" I
  ;;
X35)
  # twenty-sixth session: probe 6 per warp (each consumer warp's lane 0: start, widened, slot in, MMAs issued) on
  # Qwen3 GEMM1 and DeepSeek-V3 GEMM1 at 32 tokens (tools/ws_trace.py)
  for sh in "q1 128 1536 2048" "d1 32 4096 7168"; do
    set -- $sh
    NVFP4MOE_TUNE_DEFINE=-DNVF_WSPROBE=6 PROFILE_GEMM_G=$2 PROFILE_GEMM_N=$3 PROFILE_GEMM_K=$4 PROFILE_GEMM_M=32 \
      PROFILE_TRACE=/tmp/tr_$1.bin timeout 60 ./build/profile_kernels | tail -1
    gzip -c /tmp/tr_$1.bin > "$OUT/trace_warps_$1.bin.gz" && python3 tools/ws_trace.py "$OUT/trace_warps_$1.bin.gz" | tee "$OUT/trace_warps_$1.txt"
  done
  ;;
esac
