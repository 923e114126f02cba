#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang 14, ASan + UBSan; build-fuzz/) and runs
# each for a bounded time. Used two ways:
#   scripts/fuzz.sh --smoke          every harness ~30 s (what scripts/test.sh runs)
#   scripts/fuzz.sh --seconds 1800   a campaign; or --runs N for a fixed execution count
#   scripts/fuzz.sh --seconds 60 scene p4p     only some harnesses
# Corpora grow in out/fuzz/corpus/<target> (seeded from the shipped assets,
# tests/data, tests/fuzz/seeds and the committed regressions); a crash, leak,
# sanitizer report or timeout leaves its input in out/fuzz/findings/<target>/
# and makes the script exit 1. A summary table (executions, coverage, corpus,
# findings) is written to out/fuzz/summary.md. See docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=30
runs=""
targets=()
while (($#)); do
  case "$1" in
    --smoke) seconds=30; shift ;;
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(scene set lesson sgf_csv sgf_index p4p p4c image settings)
((${#targets[@]})) || targets=("${all[@]}")

scripts/deps.sh --fuzz  # clang 14 with libFuzzer's runtime
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPS_FUZZ=ON \
  -DPS_WINDOW=OFF -DPS_CUDA=OFF -DPS_BUILD_TESTS=OFF -DPS_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j2 >/dev/null

out="$root/out/fuzz"
mkdir -p "$out"
seed_dir() {  # seed corpus of a target, assembled from what the project ships
  local t="$1" d="$out/seeds/$1"
  rm -rf "$d"; mkdir -p "$d"
  case "$t" in
    scene) cp assets/scenes/*.json "$d"/ ;;
    lesson) cp assets/lessons/*.json "$d"/ ;;
    sgf_csv)
      local f
      for f in tests/data/sgf/*.csv tests/data/sgf/basic/*.csv tests/data/sgf/malformed/*.csv assets/scenes/dem_dance/SGF1*.csv; do
        [[ -f "$f" ]] || continue
        { basename "$f"; head -c 4000 "$f"; } > "$d/$(echo "$f" | tr '/' '_')"
      done ;;
    p4p) cp tests/data/p4/*.p4p "$d"/ ;;
    p4c) cp tests/data/p4/*.p4c "$d"/ ;;
    image) cp assets/specimens/*.png "$d"/ ;;
  esac
  [[ -d tests/fuzz/seeds/$t ]] && cp tests/fuzz/seeds/"$t"/* "$d"/ 2>/dev/null || true
  return 0
}

status=0
printf '| harness | seconds | executions | exec/s | coverage (edges) | features | corpus | findings |\n' > "$out/summary.md"
printf '|---|---|---|---|---|---|---|---|\n' >> "$out/summary.md"
for t in "${targets[@]}"; do
  exe="build-fuzz/tests/fuzz/fuzz_$t"
  [[ -x "$exe" ]] || { echo "fuzz.sh: no harness '$t' (known: ${all[*]})" >&2; exit 2; }
  seed_dir "$t"
  corpus="$out/corpus/$t"; findings="$out/findings/$t"
  mkdir -p "$corpus" "$findings"
  regress=(); [[ -d tests/fuzz/regressions/$t ]] && regress=(tests/fuzz/regressions/"$t")
  limit=(-max_total_time="$seconds"); [[ -n "$runs" ]] && limit=(-runs="$runs")
  log="$out/$t.log"
  start=$(date +%s)
  set +e
  "$exe" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -dict=tests/fuzz/dict/"$t".dict -artifact_prefix="$findings/" "$corpus" "$out/seeds/$t" "${regress[@]}" > "$log" 2>&1
  rc=$?
  set -e
  took=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ncorp=$(find "$corpus" -type f | wc -l)
  nfind=$(find "$findings" -type f | wc -l)
  rate=$(( ${execs:-0} / (took > 0 ? took : 1) ))
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$took" "${execs:-?}" "$rate" "${cov:-?}" "${ft:-?}" "$ncorp" \
    "$nfind" >> "$out/summary.md"
  if ((rc != 0)) || ((nfind > 0)); then
    echo "fuzz.sh: $t FAILED (exit $rc, $nfind finding(s) in $findings); log: $log" >&2
    grep -E 'ERROR|SUMMARY|runtime error|property violated|Test unit written' "$log" | head -10 >&2 || true
    status=1
  else
    echo "fuzz.sh: $t ok: ${execs:-?} executions in ${took} s, coverage ${cov:-?} edges"
  fi
done
cat "$out/summary.md"
exit $status
