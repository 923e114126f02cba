#!/usr/bin/env bash
# One device call, several parts (device time is short; see docs/benchmarks.md):
#   scripts/gpu_session.sh PART...
# PARTs, run in the order given after the build:
#   tests     the CUDA tests (tests/cuda), every case
#   sanitize  compute-sanitizer memcheck, racecheck, initcheck and synccheck over every
#             CUDA test case, one process per (tool, case), 8 at a time
#   ncu       Nsight Compute on the hot MPM and DEM kernels at large sizes
#   bench     sandbox bench: MPM and DEM scenes at growing sizes, both backends
#   selfcheck `sandbox info --self-check` (the gate --backend auto uses), timed
#   verify    `sandbox verify --only <the DEM cases> --backend cuda`
#   heat      the heat pass's solve on the host and on the device (ice_cube at growing grids),
#             and `sandbox verify --only heat.pcg_poisson --backend cuda`
#   taichi    Taichi's own MPM examples on the same GPU (wheels from scripts/gpu_bundle.sh)
# Carry .deps (scripts/gpu_bundle.sh: Catch2) and, for taichi, .whl.
# Logs go to $OUT (or out/gpu): summary.txt plus logs.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out/gpu}
mkdir -p "$out/logs"
export PATH=/usr/local/cuda/bin:$PATH
log() { echo "== $*" | tee -a "$out/summary.txt"; }
finish() { tar -czf "$out/logs.tar.gz" -C "$out" logs 2>/dev/null; rm -rf "$out/logs"; }
trap finish EXIT
log "date $(date -u +%FT%TZ); $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1)"
log "cpu $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; commit $(cat .commit 2>/dev/null || echo '?')"
args=(-DCMAKE_BUILD_TYPE=Release -DPS_WINDOW=OFF -DPS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${ARCHS:-90}")
[[ -d .deps/usr ]] && args+=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
t0=$(date +%s)
B=${BUILD:-build-gpu}  # BUILD=DIR SKIP_BUILD=1: use a build made by another script (gpu_window.sh)
if [[ -z "${SKIP_BUILD:-}" ]]; then
  cmake -S . -B "$B" "${gen[@]}" "${args[@]}" >"$out/logs/configure.log" 2>&1 || { log "configure failed"; tail -30 "$out/logs/configure.log"; exit 1; }
  cmake --build "$B" -j "$(nproc)" >"$out/logs/build.log" 2>&1 || { log "build failed"; grep -E "error" "$out/logs/build.log" | head -40; exit 1; }
  log "built in $(( $(date +%s) - t0 )) s"
fi
T=./$B/tests/cuda_tests
S=./$B/sandbox

for part in "$@"; do
  t1=$(date +%s)
  case $part in
  tests)
    log "CUDA tests"
    $T -d yes >"$out/logs/cuda_tests.log" 2>&1
    rc=$?
    grep -E "^[0-9.]+ s: |FAILED|failed|passed" "$out/logs/cuda_tests.log" | tail -40 | tee -a "$out/summary.txt"
    log "cuda_tests exit $rc"
    ;;
  sanitize)
    log "compute-sanitizer over every CUDA test case"
    $T --list-test-names-only | sed '/^$/d' | grep -v "test cases" >"$out/logs/cases.txt"
    : >"$out/logs/jobs.txt"
    for tool in memcheck racecheck initcheck synccheck; do
      i=0
      while IFS= read -r name; do
        i=$((i + 1))
        echo "$tool|$i|$name" >>"$out/logs/jobs.txt"
      done <"$out/logs/cases.txt"
    done
    run_one() {
      IFS='|' read -r tool i name <<<"$1"
      f="$out/logs/san_${tool}_$i.log"
      extra=()
      [[ $tool == memcheck ]] && extra=(--leak-check full)
      timeout "$SAN_TIMEOUT" compute-sanitizer --tool "$tool" "${extra[@]}" --print-limit 30 --error-exitcode 9 \
        $T "${name//,/\\,}" >"$f" 2>&1
      rc=$?
      summ=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$f" | tr '\n' ' ')
      echo "$tool | $name | exit $rc | ${summ:-no summary}"
    }
    # Each job gets what is left before DEADLINE (seconds since the epoch), if set.
    SAN_TIMEOUT=${SAN_TIMEOUT:-300}
    if [[ -n "${DEADLINE:-}" ]]; then
      left=$(( DEADLINE - $(date +%s) - 15 ))
      (( left < SAN_TIMEOUT )) && SAN_TIMEOUT=$left
    fi
    log "sanitizer jobs: at most $SAN_TIMEOUT s each"
    export -f run_one; export T out SAN_TIMEOUT
    xargs -d '\n' -P "${SAN_JOBS:-8}" -n 1 bash -c 'run_one "$0"' <"$out/logs/jobs.txt" | sort | tee -a "$out/summary.txt"
    ;;
  ncu)
    log "ncu: MPM 2D APIC fluid (mpm99 x23) and DEM hopper (x8)"
    timeout 240 ncu --set basic --kernel-name regex:'p2g|g2p|grid_kernel|clear' --launch-skip 40 --launch-count 8 \
      $S bench --backend cuda --scenes mpm99 --sizes 23 --steps 40 --warmup 20 >"$out/logs/ncu_mpm.log" 2>&1
    grep -E "^  [a-z_]+.*\(|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Compute \(SM\)" \
      "$out/logs/ncu_mpm.log" | head -80 | tee -a "$out/summary.txt"
    timeout 240 ncu --set basic --kernel-name regex:'contact|integrate|bond|gather|cell' --launch-skip 30 --launch-count 10 \
      $S bench --backend cuda --scenes dem_hopper --sizes 8 --steps 10 --warmup 5 >"$out/logs/ncu_dem.log" 2>&1
    grep -E "^  [a-z_]+.*\(|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Compute \(SM\)" \
      "$out/logs/ncu_dem.log" | head -80 | tee -a "$out/summary.txt"
    ;;
  bench)
    log "bench: CUDA MPM at growing sizes (phases)"
    $S bench --backend cuda --scenes mpm88,mpm99,dam_break --sizes ${MPM_SIZES:-1,4,16,23} --steps 400 --warmup 40 \
      --phases 2>&1 | tee -a "$out/summary.txt"
    log "bench: CUDA MPM, classroom sizes, long runs"
    $S bench --backend cuda --scenes mpm88,mpm99,snowball,pic_vs_apic --sizes 1,2 --steps 4000 --warmup 400 2>&1 |
      tee -a "$out/summary.txt"
    log "bench: coupled MPM scenes (batched rigid-body exchange) and the same water without its bodies"
    $S bench --backend cuda --scenes rigid_float,rigid_paddle_wheel --sizes 1,2,4 --steps 400 --warmup 40 2>&1 |
      tee -a "$out/summary.txt"
    $S bench --backend cuda --scenes rigid_float,rigid_paddle_wheel --sizes 1,2,4 --steps 400 --warmup 40 \
      --set rigid=null 2>&1 | tee -a "$out/summary.txt"
    log "bench: CUDA deterministic mode"
    $S bench --backend cuda --scenes mpm99 --sizes 1,23 --steps 400 --set solver.deterministic=true 2>&1 |
      tee -a "$out/summary.txt"
    log "bench: CPU ($(nproc) threads) MPM"
    $S bench --backend cpu --scenes mpm88,mpm99 --sizes 1,4 --steps 200 2>&1 | tee -a "$out/summary.txt"
    log "bench: DEM, both backends (x10: >= 100 k particles)"
    $S bench --backend all --scenes dem_hopper,dem_smash,dem_soft_body --sizes 1,10 --steps 100 --warmup 20 2>&1 |
      tee -a "$out/summary.txt"
    log "bench: DEM, CUDA at about 1 M particles"
    $S bench --backend cuda --scenes dem_hopper,dem_smash --sizes ${DEM_BIG:-30} --steps 200 --warmup 20 2>&1 |
      tee -a "$out/summary.txt"
    ;;
  selfcheck)
    t2=$(date +%s.%N)
    XDG_CONFIG_HOME="$out/logs/config" $S info --self-check >"$out/logs/selfcheck.log" 2>&1
    rc=$?
    tail -25 "$out/logs/selfcheck.log" | tee -a "$out/summary.txt"
    log "self-check exit $rc in $(python3 -c "import time; print(round(time.time() - $t2, 1))") s"
    ;;
  verify)
    ids=$($S verify --list | awk '$1 ~ /^dem\./ {print $1}' | paste -sd, -)
    $S verify --only "$ids" --backend cuda --out "$out/logs/verify_cuda" 2>&1 | tail -15 | tee -a "$out/summary.txt"
    ;;
  taichi)
    if ls .whl/taichi-*.whl >/dev/null 2>&1; then
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >"$out/logs/pip.log" 2>&1
      export PYTHONPATH=/tmp/site
      # Taichi's own examples scaled by quality q (particles x q^2, grid x q, dt / q), and ours
      # at the same refinement (bench --sizes q scales the same way), same GPU, same timing.
      for ex in mpm99 mpm88; do
        for q in ${TAICHI_Q:-1 4 16 23}; do
          timeout 150 python3 bench/peers/taichi_mpm.py --example $ex --arch cuda --quality $q --steps 2000 \
            --warmup 200 2>&1 | grep -E "ms/substep|Error|error" | tail -2 | tee -a "$out/summary.txt"
        done
        $S bench --backend cuda --scenes $ex --sizes "$(echo ${TAICHI_Q:-1 4 16 23} | tr ' ' ,)" --steps 2000 \
          --warmup 200 2>&1 | tee -a "$out/summary.txt"
      done
    else
      log "taichi: no wheels carried (.whl)"
    fi
    ;;
  heat)
    # The heat pass's linear solve on the host (IC(0)) against the device (Jacobi PCG), same
    # scene and state: ice_cube refined, every pass solves (the plate heats the block).
    log "heat: ice_cube, CUDA backend, heat.device_solve in ${HEAT_WHERE:-off on} (off: host IC(0), on: device)"
    for G in ${HEAT_GRIDS:-128 256 512 1024}; do
      dt=$(python3 -c "print(1e-4*128/$G)")
      for where in ${HEAT_WHERE:-off on}; do
        line=$(timeout 120 $S run ice_cube --backend cuda --steps 400 --set domain.grid=$G --set solver.dt=$dt \
          --set heat.device_solve=$where 2>&1 | grep -E "^heat [0-9]+ passes|rror")
        log "grid $G solve $where: $line"
      done
    done
    $S verify --only heat.pcg_poisson --backend cuda --out "$out/logs/verify_heat" 2>&1 | tail -6 |
      tee -a "$out/summary.txt"
    grep -o "Jacobi[^;]*;\|IC(0)[^;]*;" "$out/logs/verify_heat/summary.md" 2>/dev/null | tee -a "$out/summary.txt"
    ;;
  *) log "unknown part $part" ;;
  esac
  log "$part took $(( $(date +%s) - t1 )) s"
done
log "done in $(( $(date +%s) - t0 )) s"
