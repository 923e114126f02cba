#!/usr/bin/env bash
# Side-by-side: `sandbox bench` against Taichi's own mpm99 example on the CPU,
# same machine, same particle count class (9075 vs 9000), grid 128^2, dt 1e-4,
# substeps timed after a warm-up; best of R runs each, alternating.
#
# usage: bench/compare_taichi.sh [THREADS...]    (default: 1 and all cores)
# needs: build/sandbox, and Taichi in PY (default .venv-bench/bin/python):
#        python3 -m venv .venv-bench && .venv-bench/bin/pip install taichi
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv-bench/bin/python}
STEPS=${STEPS:-2000}
REPEAT=${REPEAT:-3}
threads=("$@")
[[ ${#threads[@]} -gt 0 ]] || threads=(1 "$(nproc)")
[[ -x build/sandbox ]] || { echo "build/sandbox missing: run scripts/sandbox.sh or cmake --build build" >&2; exit 1; }
"$PY" -c "import taichi" 2>/dev/null || { echo "taichi missing for $PY (see usage)" >&2; exit 1; }
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%F)"
for t in "${threads[@]}"; do
  best_ours=1e9; best_ti=1e9
  for ((r = 0; r < REPEAT; ++r)); do
    # ms/step is the first decimal number of the scene's row (after "cpu (N threads)", size, particles, steps).
    ours=$(build/sandbox bench --threads "$t" --scenes mpm99 --steps "$STEPS" --warmup 100 |
           awk 'NR==2{for(i=1;i<=NF;i++) if($i ~ /^[0-9]+\.[0-9]+$/){print $i; exit}}')
    ti=$("$PY" bench/peers/taichi_mpm.py --threads "$t" --steps "$STEPS" --warmup 100 --repeat 1 2>/dev/null |
         sed -n 's/.*ms\/substep=\([0-9.]*\).*/\1/p')
    best_ours=$(python3 -c "print(min($best_ours, $ours))")
    best_ti=$(python3 -c "print(min($best_ti, $ti))")
  done
  python3 - "$t" "$best_ours" "$best_ti" <<'PY'
import sys
t, ours, ti = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
# per particle: ours 9075 particles, Taichi 9000
print(f"threads {t}: sandbox {ours:.4f} ms/substep ({9075/ours*1e3:.3g} particle-substeps/s), "
      f"taichi {ti:.4f} ms/substep ({9000/ti*1e3:.3g}), ratio (per particle) {9075/ours/(9000/ti):.2f}x")
PY
done
