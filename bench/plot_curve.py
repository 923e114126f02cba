#!/usr/bin/env python3
"""The cost curve of docs/benchmarks.md from a device call's CSVs (matplotlib).

usage: bench/plot_curve.py RESULTS_DIR OUT.svg
RESULTS_DIR holds curve_mpm88_cuda.csv (gpu_session.sh curve) and, where the curve's
smallest sizes ran another path, classroom_PS_CUDA_FUSED_0.csv (their unfused rows are used).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(results, out):
    curve = list(csv.DictReader(open(os.path.join(results, "curve_mpm88_cuda.csv"))))
    unfused = {}
    path = os.path.join(results, "classroom_PS_CUDA_FUSED_0.csv")
    if os.path.exists(path):
        unfused = {int(r["size"]): r for r in csv.DictReader(open(path)) if r["scene"] == "mpm88"}
    pts = []
    for r in curve:
        src = unfused.get(int(r["size"]), r)
        pts.append((int(src["particles"]), float(src["ms_per_step"]), float(src["rate"])))
    n = [p[0] for p in pts]
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].loglog(n, [p[1] for p in pts], "o-")
    ax[0].set_xlabel("particles")
    ax[0].set_ylabel("ms per substep")
    ax[0].grid(True, which="both", alpha=0.3)
    ax[0].set_title("mpm88: cost of one substep")
    ax[1].semilogx(n, [p[2] for p in pts], "o-")
    ax[1].set_xlabel("particles")
    ax[1].set_ylabel("particle-substeps / s")
    ax[1].grid(True, which="both", alpha=0.3)
    ax[1].axhline(1.2e10, ls="--", c="gray")
    ax[1].text(n[0], 1.15e10, "goal 1.2e10", color="gray", va="top")
    ax[1].set_title("throughput (launch-bound below ~1e5)")
    fig.tight_layout()
    fig.savefig(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
