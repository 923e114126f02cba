#!/usr/bin/env bash
# Everything that needs a GPU, in one call (device sessions are short):
# build without the window, the CUDA-vs-CPU tests, compute-sanitizer on a short
# test, the benchmark on every backend at several sizes (with the per-phase
# breakdown), the deterministic mode's cost, and Taichi's own examples on the
# same GPU when its wheels were carried (scripts/gpu_bundle.sh).
# Writes logs to $OUT (or out/gpu). Run from the repository root:
#   scripts/gpu_check.sh [--quick]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out/gpu}
mkdir -p "$out"
quick=0; [[ "${1:-}" == "--quick" ]] && quick=1
export PATH=/usr/local/cuda/bin:$PATH
log() { echo "== $*" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"
log "date $(date -u +%FT%TZ); $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)"
log "cpu $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
args=(-DCMAKE_BUILD_TYPE=Release -DPS_WINDOW=OFF -DPS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${ARCHS:-90}")
[[ -d .deps/usr ]] && args+=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
t0=$(date +%s)
cmake -S . -B build-gpu "${gen[@]}" "${args[@]}" >"$out/configure.log" 2>&1 || { log "configure failed"; tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { log "build failed"; grep -E "error" "$out/build.log" | head -40; exit 1; }
log "built in $(( $(date +%s) - t0 )) s"

log "CUDA tests"
./build-gpu/tests/cuda_tests -d yes 2>&1 | tee "$out/cuda_tests.log" | grep -E "passed|failed|FAILED|SKIPPED|s: " | tail -40
log "cuda_tests exit ${PIPESTATUS[0]}"
if command -v compute-sanitizer >/dev/null; then
  compute-sanitizer --tool memcheck --print-limit 20 ./build-gpu/tests/cuda_tests \
    "CUDA grid conserves mass and the backend reports timings" >"$out/memcheck.log" 2>&1
  log "memcheck exit $? ($(grep -c 'Invalid\|error' "$out/memcheck.log") error lines)"; tail -5 "$out/memcheck.log"
fi
log "CUDA self-check (issue #16): the gate --backend auto uses, timed"
t1=$(date +%s.%N)
XDG_CONFIG_HOME="$out/config" ./build-gpu/sandbox info --self-check >"$out/selfcheck.log" 2>&1
rc=$?
tail -25 "$out/selfcheck.log"
log "self-check exit $rc in $(echo "$(date +%s.%N) - $t1" | bc 2>/dev/null || echo '?') s"
XDG_CONFIG_HOME="$out/config" ./build-gpu/sandbox info 2>&1 | grep -iE "self-check|verdict|cuda" | tee -a "$out/selfcheck.log"
[[ $quick == 1 ]] && exit 0

log "bench: CUDA, MPM scenes at growing sizes"
./build-gpu/sandbox bench --backend cuda --scenes mpm88,mpm99,dam_break,snowball --sizes 1,4,8,16,23 \
  --steps 400 --warmup 40 --phases 2>&1 | tee -a "$out/bench.txt"
log "bench: CUDA deterministic mode (fixed-point scatter)"
./build-gpu/sandbox bench --backend cuda --scenes mpm88 --sizes 1,16,23 --steps 400 --phases \
  --set solver.deterministic=true 2>&1 | tee -a "$out/bench.txt"
log "bench: CUDA, no graphs (launch overhead)"
PS_CUDA_GRAPHS=0 ./build-gpu/sandbox bench --backend cuda --scenes mpm99 --sizes 1 --steps 2000 2>&1 | tee -a "$out/bench.txt"
log "bench: CPU on this machine"
./build-gpu/sandbox bench --backend cpu --scenes mpm88,mpm99 --sizes 1,4 --steps 200 2>&1 | tee -a "$out/bench.txt"
log "bench: DEM on both backends"
./build-gpu/sandbox bench --backend all --scenes dem_hopper,dem_smash --sizes 1,4 --steps 200 2>&1 | tee -a "$out/bench.txt"

if ls .whl/taichi-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >"$out/pip.log" 2>&1
  export PYTHONPATH=/tmp/site
  # Taichi's own examples scaled like `bench --sizes` (quality K: particles x K^2, grid x K, dt / K).
  for ex in mpm99 mpm128 mpm88; do
    for q in 1 4 8 16 23; do
      log "taichi $ex cuda quality $q"
      timeout 240 python3 bench/peers/taichi_mpm.py --example $ex --quality $q --arch cuda --steps 400 --warmup 40 \
        --repeat 3 2>&1 | tail -2 | tee -a "$out/bench.txt"
    done
    log "taichi $ex cpu quality 1"
    timeout 240 python3 bench/peers/taichi_mpm.py --example $ex --arch cpu --steps 2000 --warmup 200 2>&1 |
      tail -2 | tee -a "$out/bench.txt"
  done
  log "ours on the same GPU, the same examples' sizes"
  ./build-gpu/sandbox bench --backend cuda --scenes mpm99,mpm88 --steps 2000 --warmup 200 2>&1 | tee -a "$out/bench.txt"
fi
log "done in $(( $(date +%s) - t0 )) s"
