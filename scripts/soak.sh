#!/usr/bin/env bash
# Soak test (not a timed test): runs the window's own loop under Xvfb
# on the largest built-in scene for a long time, with presets, attract / repel,
# a grab, SGF edits and a scene reset applied on a fixed schedule
# (render/soak.h), sampling resident memory every 10 s. Memory must stay flat
# after warm-up. Usage:
#   scripts/soak.sh [SECONDS=3600] [SCENE=dam_break]
# Writes out/soak/rss.csv, out/soak/rss.svg and out/soak/summary.txt; exits 1
# when resident memory grew by more than 5 % (and 8 MiB) after the first 5 minutes
# (or the first fifth of a shorter run). SANDBOX=path picks the executable
# (default: build/sandbox, built here).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-3600}"
scene="${2:-dam_break}"
plan=lecture
out=out/soak
label="$scene"
if [[ "$scene" == --classroom ]]; then plan=classroom; scene=dam_break; out=out/soak-classroom; label="the lessons"; fi
mkdir -p "$out"
exe="${SANDBOX:-}"
if [[ -z "$exe" ]]; then
  scripts/deps.sh --gui-test
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j2 --target sandbox >/dev/null
  exe=build/sandbox
fi
echo "soak: $scene ($plan) for $seconds s ($exe); log $out/soak.log"
xvfb-run -a -s '-screen 0 1280x720x24' "$exe" gui "$scene" --size 1280x720 --soak "$seconds" \
  --soak-log "$out/rss.csv" --soak-plan "$plan" --verbose --out "$out" > "$out/soak.log" 2>&1
python3 - "$out" "$seconds" "$label" <<'PY'
import csv, sys
out, seconds, scene = sys.argv[1], float(sys.argv[2]), sys.argv[3]
rows = [(float(r["seconds"]), int(r["rss_kib"]), int(r["step"])) for r in csv.DictReader(open(out + "/rss.csv"))]
warm = min(300.0, seconds / 5)
after = [r for r in rows if r[0] >= warm]
if len(after) < 2:
    print("soak: too few samples after warm-up"); sys.exit(1)
lo, hi = min(r[1] for r in after), max(r[1] for r in after)
first, last = after[0][1], after[-1][1]
n = len(after); mt = sum(r[0] for r in after) / n; mr = sum(r[1] for r in after) / n
slope = sum((r[0] - mt) * (r[1] - mr) for r in after) / max(1e-9, sum((r[0] - mt) ** 2 for r in after))
growth = last - first
ok = not (growth > 0.05 * first and growth > 8192)
summary = (f"scene {scene}, {rows[-1][0]:.0f} s, {rows[-1][2]} steps, {len(rows)} samples\n"
           f"resident after warm-up ({warm:.0f} s): first {first/1024:.1f} MiB, last {last/1024:.1f} MiB, "
           f"min {lo/1024:.1f}, max {hi/1024:.1f} MiB; trend {slope*3600/1024:+.2f} MiB/h\n"
           f"verdict: {'flat' if ok else 'GROWING'}\n")
open(out + "/summary.txt", "w").write(summary); print(summary, end="")
# SVG: resident MiB against minutes.
W, H, L, B = 640, 300, 60, 40
t1 = max(r[0] for r in rows) or 1; m0 = 0; m1 = max(r[1] for r in rows) / 1024 * 1.15
X = lambda t: L + (W - L - 20) * t / t1
Y = lambda m: H - B - (H - B - 20) * (m - m0) / (m1 - m0)
pts = " ".join(f"{X(r[0]):.1f},{Y(r[1]/1024):.1f}" for r in rows)
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W/2}" y="14" text-anchor="middle">Soak: resident memory, {scene}, {t1/60:.0f} min</text>',
       f'<line x1="{L}" y1="{H-B}" x2="{W-20}" y2="{H-B}" stroke="black"/><line x1="{L}" y1="20" x2="{L}" y2="{H-B}" stroke="black"/>',
       f'<rect x="{L}" y="20" width="{X(warm)-L:.1f}" height="{H-B-20}" fill="#eee"/>',
       f'<text x="{(L+X(warm))/2:.1f}" y="34" text-anchor="middle" fill="#777">warm-up</text>']
for k in range(6):
    m = m0 + (m1 - m0) * k / 5; t = t1 * k / 5
    svg.append(f'<text x="{L-6}" y="{Y(m)+4:.1f}" text-anchor="end">{m:.0f}</text>')
    svg.append(f'<text x="{X(t):.1f}" y="{H-B+16}" text-anchor="middle">{t/60:.0f}</text>')
svg.append(f'<text x="14" y="{H/2}" transform="rotate(-90 14 {H/2})" text-anchor="middle">resident MiB</text>')
svg.append(f'<text x="{W/2}" y="{H-6}" text-anchor="middle">minutes</text>')
svg.append(f'<polyline points="{pts}" fill="none" stroke="#1f6fb4" stroke-width="2"/></svg>')
open(out + "/rss.svg", "w").write("\n".join(svg) + "\n")
sys.exit(0 if ok else 1)
PY
