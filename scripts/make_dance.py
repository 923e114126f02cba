#!/usr/bin/env python3
"""Writes the SGF choreography of assets/scenes/dem_dance.json.

Input: the specimen of assets/specimens/dancer.png as `sandbox specimen` writes
it (particles.csv: ID,X,Y in y-up pixels; same grid as the scene's image body,
radius 1 px, so IDs match). Groups are picked by region of the figure; each
move pushes some groups; the torso, split into four quadrants about its
centroid, takes one uniform force per quadrant, the least-norm choice that
makes both the net force and the net torque of every move zero (the dancer
neither drifts nor spins). Writes the SGF CSVs (rows grouped by group) and
groups.json, the editor's index of named, coloured groups (docs/sgf.md).

usage: scripts/make_dance.py PARTICLES_CSV OUT_DIR [--dt 4.13e-5] [--move 0.3]
"""
import argparse
import csv
import json
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("particles")
    ap.add_argument("out")
    ap.add_argument("--dt", type=float, default=4.1336e-5, help="DEM step of the scene (s)")
    ap.add_argument("--move", type=float, default=0.33, help="duration of one move (s)")
    ap.add_argument("--force", type=float, default=8e-4, help="force per particle (N)")
    a = ap.parse_args()

    pts = [(int(r["ID"]), float(r["X"]), float(r["Y"])) for r in csv.DictReader(open(a.particles))]
    pos = {i: (x, y) for i, x, y in pts}
    groups = {
        "head": [i for i, x, y in pts if y > 160 and x < 85],
        "right_arm": [i for i, x, y in pts if x > 82 and y > 112],
        "left_arm": [i for i, x, y in pts if x < 52 and 90 < y < 150],
        "left_leg": [i for i, x, y in pts if y < 78 and x < 66],
        "right_leg": [i for i, x, y in pts if y < 78 and x >= 66],
        "hips": [i for i, x, y in pts if 78 <= y < 100],
    }
    used = set(i for g in groups.values() for i in g)
    torso = [i for i, x, y in pts if i not in used]
    assert torso, "empty torso"
    tcx = sum(pos[i][0] for i in torso) / len(torso)
    tcy = sum(pos[i][1] for i in torso) / len(torso)
    for q, name in enumerate(["torso_lower_left", "torso_lower_right", "torso_upper_left", "torso_upper_right"]):
        groups[name] = [i for i in torso if (pos[i][0] > tcx) + 2 * (pos[i][1] > tcy) == q]
    for k, v in groups.items():
        assert v, f"empty group {k}"
    quads = [k for k in groups if k.startswith("torso_")]
    colors = {
        "head": (0.95, 0.75, 0.3), "right_arm": (0.9, 0.35, 0.3), "left_arm": (0.3, 0.55, 0.95),
        "left_leg": (0.35, 0.8, 0.45), "right_leg": (0.75, 0.45, 0.9), "hips": (0.96, 0.79, 0.63),
        "torso_lower_left": (0.5, 0.55, 0.65), "torso_lower_right": (0.55, 0.6, 0.7),
        "torso_upper_left": (0.6, 0.65, 0.75), "torso_upper_right": (0.65, 0.7, 0.8),
    }

    F = a.force
    # Each move: {group: (fx, fy)} per particle; the torso quadrants balance it.
    moves = [
        {"right_arm": (0, -F), "left_arm": (0, F)},
        {"right_arm": (0, F), "left_arm": (0, -F)},
        {"hips": (F, 0), "head": (-F, 0)},
        {"hips": (-F, 0), "head": (F, 0)},
        {"left_leg": (-F, F)},
        {"left_leg": (F, -F)},
        {"right_leg": (F, F)},
        {"right_leg": (-F, -F)},
        {"right_arm": (-F, -F), "left_arm": (F, F)},
        {"right_arm": (F, F), "left_arm": (-F, -F)},
        {"hips": (F, 0), "head": (-F, 0)},
        {"hips": (-F, 0), "head": (F, 0)},
    ]
    os.makedirs(a.out, exist_ok=True)
    for name in os.listdir(a.out):
        if (name.startswith("SGF") and name.endswith(".csv")) or name == "groups.json":
            os.remove(os.path.join(a.out, name))
    steps = int(round(a.move / a.dt))
    entries = {g: [] for g in groups}
    start = 1
    n_torso = len(torso)
    for m in moves:
        # Net force S and torque T (about the torso centroid) of the move's groups.
        S = [0.0, 0.0]
        T = 0.0
        for g, (fx, fy) in m.items():
            for i in groups[g]:
                S[0] += fx
                S[1] += fy
                T += (pos[i][0] - tcx) * fy - (pos[i][1] - tcy) * fx
        cq = {}
        for q in quads:
            n = len(groups[q])
            cq[q] = (sum(pos[i][0] for i in groups[q]) / n - tcx, sum(pos[i][1] for i in groups[q]) / n - tcy)
        lam = -T / sum(len(groups[q]) * (cq[q][0] ** 2 + cq[q][1] ** 2) for q in quads)
        forces = dict(m)
        for q in quads:
            forces[q] = (-S[0] / n_torso - lam * cq[q][1], -S[1] / n_torso + lam * cq[q][0])
        end = start + steps - 1
        fname = f"SGF{start}-{end}.csv"
        row = 0
        with open(os.path.join(a.out, fname), "w", newline="\n") as f:
            f.write("ID,FX,FY,FZ\n")
            for g in groups:  # rows grouped by group, IDs ascending
                if g not in forces:
                    continue
                fx, fy = forces[g]
                ids = sorted(groups[g])
                for i in ids:
                    f.write(f"{i},{fx:.6g},{fy:.6g},0\n")
                entries[g].append({"file": fname, "row": row, "count": len(ids)})
                row += len(ids)
        start = end + 1
    index = {
        "format": "particle-sandbox-sgf-groups",
        "version": 1,
        "groups": [
            {"name": g.replace("_", " "), "color": list(colors[g]), "ids": sorted(groups[g]), "entries": entries[g]}
            for g in groups
        ],
    }
    with open(os.path.join(a.out, "groups.json"), "w", newline="\n") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    print(f"{len(moves)} moves of {steps} steps, groups: " +
          ", ".join(f"{k} {len(v)}" for k, v in groups.items()))


if __name__ == "__main__":
    main()
