#!/usr/bin/env python3
"""Writes the SGF choreography of assets/scenes/dem_dance.json.

Input: the specimen of assets/specimens/dancer.png as `sandbox specimen` writes
it (particles.csv: ID,X,Y in y-up pixels; same grid as the scene's image body,
radius 1 px, so IDs match). Groups are picked by region of the figure; each
move pushes some groups; the torso takes a uniform force and a rotational
force field about its centroid so that both the net force and the net torque
of every move are zero (the dancer neither drifts nor spins).

usage: scripts/make_dance.py PARTICLES_CSV OUT_DIR [--dt 4.13e-5] [--move 0.3]
"""
import argparse
import csv
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
    groups["torso"] = [i for i, x, y in pts if i not in used]
    for k, v in groups.items():
        assert v, f"empty group {k}"

    F = a.force
    # Each move: {group: (fx, fy)} per particle; the torso balances the sum.
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
        if name.startswith("SGF") and name.endswith(".csv"):
            os.remove(os.path.join(a.out, name))
    steps = int(round(a.move / a.dt))
    start = 1
    for m in moves:
        rows = {}
        sx = sy = 0.0
        for g, (fx, fy) in m.items():
            for i in groups[g]:
                rows[i] = (fx, fy)
                sx += fx
                sy += fy
        torso = groups["torso"]
        n = len(torso)
        cx = sum(pos[i][0] for i in torso) / n
        cy = sum(pos[i][1] for i in torso) / n
        # Torque of the move about the torso centroid (pixels; only ratios matter).
        tq = sum((pos[i][0] - cx) * fy - (pos[i][1] - cy) * fx for i, (fx, fy) in rows.items())
        r2 = sum((pos[i][0] - cx) ** 2 + (pos[i][1] - cy) ** 2 for i in torso)
        k = -tq / r2  # f_i = k * perp(r_i - c) adds torque k * sum |r_i - c|^2, no net force
        for i in torso:
            dx, dy = pos[i][0] - cx, pos[i][1] - cy
            rows[i] = (-sx / n - k * dy, -sy / n + k * dx)
        end = start + steps - 1
        with open(os.path.join(a.out, f"SGF{start}-{end}.csv"), "w", newline="\n") as f:
            f.write("ID,FX,FY,FZ\n")
            for i in sorted(rows):
                fx, fy = rows[i]
                f.write(f"{i},{fx:.6g},{fy:.6g},0\n")
        start = end + 1
    print(f"{len(moves)} moves of {steps} steps, groups: " +
          ", ".join(f"{k} {len(v)}" for k, v in groups.items()))


if __name__ == "__main__":
    main()
