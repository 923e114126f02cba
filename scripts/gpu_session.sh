#!/usr/bin/env bash
# One device call, several parts (device time is short; see docs/benchmarks.md):
#   scripts/gpu_session.sh PART...
# PARTs, run in the order given after the build:
#   tests     the CUDA tests (tests/cuda), every case
#   sanitize  compute-sanitizer memcheck, racecheck, initcheck and synccheck over every
#             CUDA test case, one process per (tool, case), 8 at a time
#   ncu       Nsight Compute on the hot MPM and DEM kernels at large sizes
#   bench     sandbox bench: MPM and DEM scenes at growing sizes, both backends (CSV in results/)
#   classroom sandbox bench of the classroom scenes at 1x and 2x, long runs (CSV in results/)
#   selfcheck `sandbox info --self-check` (the gate --backend auto uses), timed
#   verify    `sandbox verify --backend cuda` (every case on the device; VERIFY_ARGS, e.g. --quick
#             or --only ID,..., narrows it), each case's "ran on" line and the per-backend counts
#   throughput MPM at >= 4 M particles (float, deterministic) and DEM at about 1 M, CUDA (CSV in results/)
#   curve     mpm88 from 8 100 to 10.5 M particles, CUDA (results/curve_mpm88_cuda.csv)
#   coupled   coupled MPM scenes against the same matter without bodies, and with K = 1 (CSV in results/)
#   demhash   the DEM hopper's and dem_smash's CPU and CUDA hashes against the predicted ones
#   window    the window on the GPU (needs .deps/window.tar.xz, scripts/gpu_bundle.sh --window):
#             Xvfb, `sandbox gui --backend cuda --verbose --gl egl` (WIN_GL: OpenGL through EGL
#             on the GPU, frames put into the Xvfb window; glx: GLX handed to the NVIDIA driver,
#             which returned no framebuffer configurations on Xvfb on 2026-11-27)
#             for WIN_SECONDS (8) per case, WIN_CASES (below); the fps lines go to
#             results/window_fps.txt, a screenshot of each case to shots/
#   heat      the heat pass's solve on the host and on the device (ice_cube at growing grids),
#             and `sandbox verify --only heat.pcg_poisson --backend cuda`
#   taichi    Taichi's own MPM examples on the same GPU (wheels from scripts/gpu_bundle.sh)
#   fused     the fused substeps (sm_90): tests/cuda [fused]; the classroom bench fused and
#             unfused (PS_CUDA_FUSED=0), alternating, twice, with --phases, float and
#             deterministic; racecheck and memcheck on one float and one deterministic case
# Carry .deps (scripts/gpu_bundle.sh: Catch2, Box2D; --window adds window.tar.xz) and, for taichi, .whl.
# With .deps/window.tar.xz the build has the window (its packages unpacked into .deps/win, not
# into /); WINDOW=0 builds without it.
# Output in $OUT (or out/gpu), at most 8 files: summary.txt, logs.tar.gz (every log),
# results.tar.gz (bench CSVs, fps lines, verify report: bench/results/<gpu>-<date>-<commit>/),
# shots*.tar (the window's screenshots, split under 16 MB).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out/gpu}
mkdir -p "$out/logs" "$out/results" "$out/shots"
export PATH=/usr/local/cuda/bin:$PATH
log() { echo "== $*" | tee -a "$out/summary.txt"; }
finish() {
  [[ -n "${FINISHED:-}" ]] && return
  FINISHED=1
  [[ -n "${XVFB_PID:-}" ]] && kill "$XVFB_PID" 2>/dev/null
  tar -czf "$out/logs.tar.gz" -C "$out" logs 2>/dev/null
  tar -czf "$out/results.tar.gz" -C "$out" results 2>/dev/null
  # Screenshots: tars of at most ~15 MB each (a returned file may hold 16 MB).
  local k=0 size=0 f
  for f in "$out"/shots/*.png; do
    [[ -e $f ]] || break
    local b; b=$(stat -c %s "$f")
    if (( size > 0 && size + b > 15000000 )); then k=$((k + 1)); size=0; fi
    tar -rf "$out/shots$k.tar" -C "$out/shots" "$(basename "$f")"
    size=$((size + b))
  done
  rm -rf "$out/logs" "$out/results" "$out/shots"
}
trap finish EXIT
trap 'log "stopped by a signal"; finish; exit 143' TERM INT
log "date $(date -u +%FT%TZ); $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1)"
log "cpu $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; commit $(cat .commit 2>/dev/null || echo '?')"

# The window's packages (Debian 12, scripts/gpu_bundle.sh --window), unpacked beside the tree.
W=$PWD/.deps/win
WL=$W/usr/lib/x86_64-linux-gnu
have_window=0
if [[ "${WINDOW:-1}" != 0 && ( -f .deps/window.tar.xz || -d $W/usr ) ]]; then
  if [[ ! -d $W/usr ]]; then
    mkdir -p "$W" && tar -xJf .deps/window.tar.xz -C "$W" || { log "window bundle: unpacking failed"; rm -rf "$W"; }
  fi
  if [[ -d $W/usr ]]; then
    have_window=1
    # Base libraries this machine lacks (a minimal image): from the bundle's fallback folder.
    mkdir -p "$W/missing"
    for f in "$W"/fallback/*.so.*; do
      [[ -L $f ]] && continue
      n=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
      [[ -n $n ]] || continue
      ldconfig -p | grep -q "^[[:space:]]*$n " || ln -sf "$f" "$W/missing/$n"
    done
    # glad, the loader generator, runs on this machine's python3 (it has jinja2).
    # (In place of the package's script, whose #! names /usr/bin/python3: CMake finds it first.)
    printf '#!/bin/sh\nPYTHONPATH=%s exec python3 -c "import sys; from glad.__main__ import main; sys.exit(main())" "$@"\n' \
      "$W/usr/lib/python3/dist-packages" >"$W/usr/bin/glad"
    chmod +x "$W/usr/bin/glad"
    export PATH=$W/usr/bin:$PATH
    export PKG_CONFIG=$W/usr/bin/pkgconf PKG_CONFIG_SYSROOT_DIR=$W PKG_CONFIG_LIBDIR=$WL/pkgconfig:$W/usr/share/pkgconfig
    # The NVIDIA driver's libraries first, then the bundle's (and the fallbacks last).
    nv=""
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu/nvidia; do [[ -d $d ]] && nv="$nv$d:"; done
    export LD_LIBRARY_PATH=$nv$WL:$W/missing${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    log "window bundle: $(du -sh "$W" | cut -f1) unpacked; missing base libraries linked: $(ls "$W/missing" | tr '\n' ' ')"
  fi
fi

args=(-DCMAKE_BUILD_TYPE=Release -DPS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${ARCHS:-90}")
prefix="$PWD/.deps/usr"
if ((have_window)); then
  args+=(-DPS_WINDOW=ON -DPKG_CONFIG_EXECUTABLE="$W/usr/bin/pkgconf" "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,$WL")
  prefix="$prefix;$W/usr"
else
  args+=(-DPS_WINDOW=OFF)
fi
args+=(-DCMAKE_PREFIX_PATH="$prefix")
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
t0=$(date +%s)
B=${BUILD:-build-gpu}  # BUILD=DIR SKIP_BUILD=1: use a build made by an earlier call
if [[ -z "${SKIP_BUILD:-}" ]]; then
  cmake -S . -B "$B" "${gen[@]}" "${args[@]}" >"$out/logs/configure.log" 2>&1 || { log "configure failed"; tail -30 "$out/logs/configure.log"; exit 1; }
  grep -E "Particle Sandbox:" "$out/logs/configure.log" | tee -a "$out/summary.txt"
  # The device needs the programs, not the CPU test suite (BUILD_TARGETS=all builds everything).
  targets=(); for t in ${BUILD_TARGETS:-sandbox cuda_tests}; do targets+=(--target "$t"); done
  cmake --build "$B" -j "$(nproc)" "${targets[@]}" >"$out/logs/build.log" 2>&1 ||
    { log "build failed"; grep -E "error" "$out/logs/build.log" | head -40; exit 1; }
  log "built in $(( $(date +%s) - t0 )) s"
fi
T=$B/tests/cuda_tests
S=$B/sandbox
R=$out/results

# The X server for the window part: Xvfb with its GLX extension (Mesa's swrast from the bundle);
# clients get the NVIDIA GLX library through glvnd, so their OpenGL runs on the GPU.
start_xvfb() {
  [[ -n "${XVFB_PID:-}" ]] && return 0
  # Xvfb runs xkbcomp from /usr/bin (compiled in); a link there when the machine has none.
  [[ -e /usr/bin/xkbcomp ]] || ln -s "$W/usr/bin/xkbcomp" /usr/bin/xkbcomp
  LIBGL_DRIVERS_PATH=$WL/dri Xvfb :99 -screen 0 1280x720x24 -ac -nolisten tcp +extension GLX \
    -xkbdir "$W/usr/share/X11/xkb" >"$out/logs/xvfb.log" 2>&1 &
  XVFB_PID=$!
  for _ in $(seq 50); do [[ -e /tmp/.X11-unix/X99 ]] && break; sleep 0.1; done
  export DISPLAY=:99 __GLX_VENDOR_LIBRARY_NAME=${GLX_VENDOR:-nvidia}  # GLX_VENDOR=mesa: a dry run without a GPU
  # EGL (gui --gl egl): glvnd finds the NVIDIA vendor through its JSON file.
  for j in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
    [[ -f $j ]] && { export __EGL_VENDOR_LIBRARY_FILENAMES=$j; break; }
  done
  kill -0 "$XVFB_PID" 2>/dev/null || { log "Xvfb did not start"; tail -20 "$out/logs/xvfb.log"; XVFB_PID=; return 1; }
  log "Xvfb up; GLX vendor $__GLX_VENDOR_LIBRARY_NAME: $(ldconfig -p | grep -c libGLX_nvidia) in the cache, $(ls ${LD_LIBRARY_PATH//:/ } 2>/dev/null | grep -c libGLX_nvidia) on the path"
}

# One window case: label scene refine [gui flags...]; the fps lines (after the first 2 s) go to
# results/window_fps.txt prefixed by the label, the last frame to shots/LABEL.png.
window_case() {
  local label=$1 scene=$2 k=$3
  shift 3
  local secs=${WIN_SECONDS:-8}
  XDG_CONFIG_HOME="$out/logs/config" timeout $((secs + 30)) $S gui "$scene" --refine "$k" --backend "${WIN_BACKEND:-cuda}" --verbose \
    --vsync off --size 1280x720 --seconds "$secs" --screenshot "$out/shots/$label.png" --gl "${WIN_GL:-egl}" "$@" \
    >"$out/logs/win_$label.log" 2>&1
  local rc=$?
  grep -E "^fps |ready |scene name" "$out/logs/win_$label.log" | sed "s/^/$label /" >>"$R/window_fps.txt"
  local last; last=$(grep -E "^fps " "$out/logs/win_$label.log" | tail -1)
  log "window $label (exit $rc): ${last:-no fps line: $(grep -iE "error|cannot|sandbox:" "$out/logs/win_$label.log" | head -3 | tr '\n' ' ')}"
}

for part in "$@"; do
  t1=$(date +%s)
  # DEADLINE (seconds since the epoch): parts that would start within 30 s of it are skipped, so
  # the outputs are packed before the device call's limit.
  if [[ -n "${DEADLINE:-}" ]] && (( t1 > DEADLINE - 30 )); then log "skipped $part: past the deadline"; continue; fi
  case $part in
  tests)
    log "CUDA tests"
    timeout "${TESTS_TIMEOUT:-300}" $T -d yes >"$out/logs/cuda_tests.log" 2>&1
    rc=$?
    cp "$out/logs/cuda_tests.log" "$R/cuda_tests.log"
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
    # The hot MPM kernels in full (memory, scheduler and warp-state sections), the DEM ones basic.
    log "ncu: MPM 2D APIC fluid (mpm99 x23), p2g and g2p, --set full"
    timeout ${NCU_TIMEOUT:-150} ncu --set full --kernel-name regex:'p2g|g2p' --launch-skip 20 --launch-count 4 \
      $S bench --backend cuda --scenes mpm99 --sizes 23 --steps 30 --warmup 10 >"$out/logs/ncu_mpm.log" 2>&1
    grep -E "^  [a-z_]+.*\(|Duration|Memory Throughput|DRAM Throughput|L2 Hit Rate|L1/TEX Hit Rate|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\)|Warp Cycles Per Issued|No Eligible|Block Limit|Stall" \
      "$out/logs/ncu_mpm.log" | head -120 | tee -a "$out/summary.txt"
    if [[ "${NCU_DEM:-1}" != 0 ]]; then
      log "ncu: DEM hopper (x8)"
      timeout ${NCU_TIMEOUT:-150} ncu --set basic --kernel-name regex:'contact|integrate|bond|gather|cell|force' --launch-skip 30 --launch-count 10 \
        $S bench --backend cuda --scenes dem_hopper --sizes 8 --steps 10 --warmup 5 >"$out/logs/ncu_dem.log" 2>&1
      grep -E "^  [a-z_]+.*\(|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Compute \(SM\)" \
        "$out/logs/ncu_dem.log" | head -80 | tee -a "$out/summary.txt"
    fi
    ;;
  fused)
    log "fused: CUDA tests [fused]"
    $T "[fused]" -d yes >"$out/logs/fused_tests.log" 2>&1
    rc=$?
    grep -E "^[0-9.]+ s: |FAILED|failed|passed" "$out/logs/fused_tests.log" | tail -40 | tee -a "$out/summary.txt"
    log "fused tests exit $rc"
    for round in 1 2; do
      for f in 1 0; do
        log "fused: classroom sizes, PS_CUDA_FUSED=$f, round $round"
        PS_CUDA_FUSED=$f $S bench --backend cuda --scenes mpm88,mpm99,snowball,pic_vs_apic --sizes 1,2 --steps 4000 \
          --warmup 400 --phases --csv "$R/classroom_fused${f}_round$round.csv" 2>&1 | tee -a "$out/summary.txt"
      done
    done
    for f in 1 0; do
      log "fused: deterministic mpm99, PS_CUDA_FUSED=$f"
      PS_CUDA_FUSED=$f $S bench --backend cuda --scenes mpm99 --sizes 1,2 --steps 4000 --warmup 400 --phases \
        --set solver.deterministic=true --csv "$R/classroom_deterministic_fused$f.csv" 2>&1 | tee -a "$out/summary.txt"
    done
    for tool in racecheck memcheck; do
      k=0
      for name in "CUDA fused adaptive dt follows the CPU in float mode" \
                  "CUDA fused blow-ups are reported at the unfused path's step and particle"; do
        k=$((k + 1))
        timeout 180 compute-sanitizer --tool "$tool" --error-exitcode 9 "$T" "$name" >"$out/logs/fused_${tool}_$k.log" 2>&1
        log "fused $tool, $name: exit $?; $(grep -E 'SUMMARY' "$out/logs/fused_${tool}_$k.log" | tail -1)"
      done
    done
    ;;
  bench)
    log "bench: CUDA MPM at growing sizes (phases)"
    $S bench --backend cuda --scenes mpm88,mpm99,dam_break --sizes ${MPM_SIZES:-1,4,16,23} --steps 400 --warmup 40 \
      --phases --csv "$R/bench_mpm_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    log "bench: CUDA MPM, classroom sizes, long runs"
    $S bench --backend cuda --scenes mpm88,mpm99,snowball,pic_vs_apic --sizes 1,2 --steps 4000 --warmup 400 \
      --csv "$R/bench_classroom_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    log "bench: CUDA deterministic mode"
    $S bench --backend cuda --scenes mpm99 --sizes 1,23 --steps 400 --set solver.deterministic=true \
      --csv "$R/bench_deterministic_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    log "bench: CPU ($(nproc) threads) MPM"
    $S bench --backend cpu --scenes mpm88,mpm99 --sizes 1,4 --steps 200 --csv "$R/bench_mpm_cpu.csv" 2>&1 |
      tee -a "$out/summary.txt"
    log "bench: DEM, both backends (x10: >= 100 k particles)"
    $S bench --backend all --scenes dem_hopper,dem_smash,dem_soft_body --sizes 1,10 --steps 100 --warmup 20 \
      --csv "$R/bench_dem_both.csv" 2>&1 | tee -a "$out/summary.txt"
    log "bench: DEM, CUDA at about 1 M particles"
    $S bench --backend cuda --scenes dem_hopper --sizes ${DEM_BIG:-30} --steps 200 --warmup 20 \
      --csv "$R/bench_dem_big_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    log "bench: DEM bonded, CUDA at about 1 M particles (dem_soft_body 45x)"
    $S bench --backend cuda --scenes dem_soft_body --sizes 45 --steps 200 --warmup 20 \
      --csv "$R/bench_dem_bonded_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    ;;
  classroom)
    # Classroom sizes, long runs: substeps per second (1 / ms per step). CLASSROOM_ENV: e.g.
    # "PS_CUDA_FUSED=1" for the fused path (off by default) beside the default.
    for envs in ${CLASSROOM_ENV:-default}; do
      log "classroom: CUDA, $envs"
      tag=${envs//[^A-Za-z0-9_]/_}
      timeout 120 env $([[ $envs == default ]] || echo "$envs") $S bench --backend cuda --scenes mpm88,mpm99,snowball,pic_vs_apic \
        --sizes 1,2 --steps ${CLASSROOM_STEPS:-4000} --warmup 400 --phases --csv "$R/classroom_$tag.csv" 2>&1 |
        tee -a "$out/summary.txt"
    done
    ;;
  throughput)
    # MPM 2D APIC fluid at >= 4 M particles (float and deterministic) and DEM at about 1 M (the throughput goals in docs/benchmarks.md).
    log "throughput: MPM at 23x (mpm88 4.28 M, mpm99 4.80 M), float"
    $S bench --backend cuda --scenes mpm88,mpm99 --sizes 23 --steps 400 --warmup 40 --phases \
      --csv "$R/throughput_mpm_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    log "throughput: MPM deterministic (mpm99 1x and 23x)"
    $S bench --backend cuda --scenes mpm99 --sizes 1,23 --steps 400 --warmup 40 --set solver.deterministic=true \
      --csv "$R/throughput_mpm_deterministic_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    log "throughput: MPM float mpm99 1x (the deterministic ratio's other half)"
    $S bench --backend cuda --scenes mpm99 --sizes 1 --steps 400 --warmup 40 \
      --csv "$R/throughput_mpm99_1x_float_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    log "throughput: DEM hopper 30x and bonded soft body 45x"
    $S bench --backend cuda --scenes dem_hopper --sizes 30 --steps 200 --warmup 20 \
      --csv "$R/throughput_dem_hopper_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    $S bench --backend cuda --scenes dem_soft_body --sizes 45 --steps 200 --warmup 20 \
      --csv "$R/throughput_dem_soft_body_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    ;;
  coupled)
    # Coupled MPM scenes (rigid bodies, batched exchange) against the same matter without its bodies,
    # and the per-substep exchange (K = 1) the goal compares with: coupled / uncoupled <= 1.5.
    for variant in "" "--set rigid=null" "--set rigid.exchange_substeps=1"; do
      tag=$(echo "${variant:-coupled}" | tr -c 'A-Za-z0-9_\n' _)
      log "coupled: rigid_float, rigid_paddle_wheel ${variant:-(K = 16)}"
      # shellcheck disable=SC2086
      $S bench --backend cuda --scenes rigid_float,rigid_paddle_wheel --sizes 1,2,4 --steps 400 --warmup 40 $variant \
        --csv "$R/coupled_$tag.csv" 2>&1 | tee -a "$out/summary.txt"
    done
    ;;
  demhash)
    # Why the hopper's CPU and CUDA hashes differ (docs/benchmarks.md, "DEM: why the hopper's CPU and
    # CUDA hashes differ"): predicted CUDA hashes from a CPU emulation of the device's summation order.
    log "demhash: predicted CUDA 1x 78ea476b8c4d4fec, 10x b5a7472e77b27af0 (CPU c3f01827359647b0, 35393699ea159756)"
    $S bench --backend all --scenes dem_hopper --sizes 1,10 --steps 100 --warmup 20 --csv "$R/demhash_hopper.csv" 2>&1 |
      tee -a "$out/summary.txt"
    log "demhash: predicted CUDA 0d8f281e75bf6c22 (CPU c04264d2bec2b1e3)"
    $S bench --backend all --scenes dem_hopper --sizes 1 --steps 1 --warmup 0 2>&1 | tee -a "$out/summary.txt"
    log "demhash: dem_smash 2780 steps equal (6e243a4b136f797c), 3000 steps CUDA 32aae6caa0fe1484 (CPU a70274cdeb6c800a)"
    $S bench --backend all --scenes dem_smash --sizes 1 --steps 2780 --warmup 20 2>&1 | tee -a "$out/summary.txt"
    $S bench --backend all --scenes dem_smash --sizes 1 --steps 3000 --warmup 20 2>&1 | tee -a "$out/summary.txt"
    ;;
  curve)
    # The cost curve: mpm88 from 8 100 particles (1x) to 10.5 M (36x), CUDA, one table.
    $S bench --backend cuda --scenes mpm88 --sizes ${CURVE_SIZES:-1,2,4,8,16,23,32,36} --steps 200 --warmup 20 \
      --csv "$R/curve_mpm88_cuda.csv" 2>&1 | tee -a "$out/summary.txt"
    ;;
  window)
    if ((!have_window)); then log "window: no bundle (scripts/gpu_bundle.sh --window) or WINDOW=0"; continue; fi
    start_xvfb || continue
    # label scene refine [flags]: mpm88 refined 4 / 12 / 23 (130 k / 1.17 M / 4.28 M particles),
    # dem_soft_body refined 14 / 45 (101 k / 1.06 M bonded particles); running and paused;
    # interop on and off (DEM: as the build draws it).
    cases=${WIN_CASES:-"mpm_130k_run_on mpm_130k_run_off mpm_130k_pause_on mpm_130k_pause_off
      mpm_1m_run_on mpm_1m_run_off mpm_1m_pause_on mpm_1m_pause_off
      mpm_4m_run_on mpm_4m_run_off mpm_4m_pause_on mpm_4m_pause_off
      dem_100k_run_on dem_100k_run_off dem_100k_pause_on dem_1m_run_on dem_1m_run_off dem_1m_pause_on"}
    for c in $cases; do
      IFS=_ read -r kind size state io <<<"$c"
      case $kind$size in
        mpm130k) sc=mpm88 k=4 ;; mpm1m) sc=mpm88 k=12 ;; mpm4m) sc=mpm88 k=23 ;;
        dem100k) sc=dem_soft_body k=14 ;; dem1m) sc=dem_soft_body k=45 ;;
        *) log "window: unknown case $c"; continue ;;
      esac
      flags=(--interop "$io")
      [[ $state == pause ]] && flags+=(--paused)
      window_case "$c" "$sc" "$k" "${flags[@]}"
    done
    # Interop on and off draw the same picture: the paused cases show the loaded state.
    python3 - "$out/shots" <<'PY' 2>&1 | tee -a "$out/summary.txt"
import sys, glob, os
try:
    from PIL import Image, ImageChops
except ImportError:
    print("compare: no PIL"); sys.exit()
d = sys.argv[1]
for on in sorted(glob.glob(os.path.join(d, "*_on.png"))):
    off = on[:-7] + "_off.png"
    if not os.path.exists(off): continue
    a, b = Image.open(on).convert("RGB"), Image.open(off).convert("RGB")
    if a.size != b.size: print("compare", os.path.basename(on), "sizes differ"); continue
    diff = ImageChops.difference(a, b)
    px = sum(1 for p in diff.getdata() if p != (0, 0, 0))
    print("compare %s vs %s: %d of %d pixels differ, largest channel difference %d" %
          (os.path.basename(on), os.path.basename(off), px, a.size[0] * a.size[1], max(m for _, m in diff.getextrema())))
PY
    ;;
  selfcheck)
    t2=$(date +%s.%N)
    XDG_CONFIG_HOME="$out/logs/config" $S info --self-check >"$out/logs/selfcheck.log" 2>&1
    rc=$?
    tail -25 "$out/logs/selfcheck.log" | tee -a "$out/summary.txt"
    log "self-check exit $rc in $(python3 -c "import time; print(round(time.time() - $t2, 1))") s"
    ;;
  verify)
    # Within DEADLINE when set (a case cut off is missing from the log, not reported as passed).
    vlimit=3600
    [[ -n "${DEADLINE:-}" ]] && vlimit=$(( DEADLINE - $(date +%s) - 25 ))
    # shellcheck disable=SC2086  # VERIFY_ARGS is a list of flags
    timeout "$vlimit" $S verify ${VERIFY_ARGS:-} --backend cuda --out "$R/verify_cuda" >"$out/logs/verify_cuda.log" 2>&1
    rc=$?
    cp "$out/logs/verify_cuda.log" "$R/verify_cuda.log" 2>/dev/null
    grep -E "^(PASS|MISS|ERROR) |ran on:|error:|miss:|^verify:" "$out/logs/verify_cuda.log" | tee -a "$out/summary.txt"
    log "verify --backend cuda exit $rc"
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
