#!/usr/bin/env python3
"""GUI test of long builds ("nothing shows progress while a large
scene builds, and it cannot be cancelled"), under Xvfb, with xdotool.

The slow scene is written here: one jelly disk outlined by a 2000-point
polygon over a lattice of 1.4 M points (1.1 M particles; about 3e9 winding-number
tests, several seconds on any machine, 150 MB).
  1. `sandbox run SLOW --steps 0`: progress lines on stderr once the build has
     taken a second, their percentages rising.
  2. The window on dam_break, running; Page Down opens a lesson (from a
     lessons folder given by PS_LESSONS_DIR) whose scene is SLOW: after a second
     the window logs "build progress" and draws the progress box (F12 takes a
     screenshot of it, which this test reads back: a 1280x720 PNG); Esc cancels:
     "build cancel", "lesson cancelled", and no new scene is adopted; Space
     pauses dam_break at a step past the one it had (it ran on).
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, connect, drive, fail, parse_args, read_png, work_dirs, xdo  # noqa: E402


def write_slow_scene(path):
    pts = [[0.5 + 0.45 * math.cos(2 * math.pi * k / 2000), 0.5 + 0.45 * math.sin(2 * math.pi * k / 2000)]
           for k in range(2000)]
    scene = {
        "name": "Slow to build", "kind": "mpm", "frames": 10,
        "domain": {"size": [1, 1], "grid": 256},
        "solver": {"transfer": "apic", "dt": 0.0001, "substeps": 1},
        "materials": {"jelly": {"type": "jelly", "density": 1000, "E": 1e4, "nu": 0.2}},
        "bodies": [{"shape": "polygon", "points": pts, "material": "jelly", "spacing": 0.00076}],
    }
    with open(path, "w") as f:
        json.dump(scene, f)


def cli_lines(args, slow):
    r = subprocess.run([args.sandbox, "run", slow, "--steps", "0", "--threads", "1", "--quiet"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("sandbox run of the slow scene failed: %s" % r.stderr)
    pct = [float(m.group(1)) for m in re.finditer(r"^sandbox: building the scene: body 1 of 1, (\d+) %", r.stderr, re.M)]
    if not pct:
        fail("no progress line on stderr for a build of several seconds: %r" % r.stderr[:400])
    if pct != sorted(pct):
        fail("progress went backwards: %s" % pct)
    print("command line: %d progress lines, %s %%" % (len(pct), pct))


def window_steps(app, args):
    connect(app, args, ready_timeout=30)
    xdo(args, "key", "space")
    app.expect(r"^resume")
    time.sleep(0.5)
    xdo(args, "key", "Next")  # Page Down: the next lesson
    app.expect(r'^build progress what="Slow to build"', timeout=20)
    xdo(args, "key", "F12")
    shot = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)", timeout=10)
    xdo(args, "key", "Escape")
    app.expect(r'^build cancel what="Slow to build"', timeout=10)
    app.expect(r"^lesson cancelled id=slow", timeout=20)
    if any(line.startswith("scene name=\"Slow") for line in app.log):
        fail("the cancelled scene was adopted")
    xdo(args, "key", "space")
    p = app.expect(r"^pause step=(\d+)")
    if int(p.group(1)) <= 0:
        fail("dam_break did not run on")
    w, h, _, _ = read_png(shot.group(1))
    if (w, h) != (1280, 720):
        fail("the progress screenshot is %dx%d" % (w, h))
    print("window: progress box shown (%s), cancelled, dam_break ran on to step %s" % (shot.group(1), p.group(1)))


def main():
    args = parse_args()
    cfg, out, lessons = work_dirs(args, "config", "captures", "lessons")
    slow = os.path.join(args.work, "slow.json")
    write_slow_scene(slow)
    with open(os.path.join(lessons, "slow.json"), "w") as f:
        json.dump({"title": "Slow to build", "scene": slow, "text": ["A scene that takes seconds to build."]}, f)
    guilib.DEADLINE[0] = time.monotonic() + 150
    cli_lines(args, slow)
    os.environ["PS_LESSONS_DIR"] = lessons
    app = App(args, cfg, out, "dam_break")
    return drive(app, args, "gui build progress", lambda: window_steps(app, args))


if __name__ == "__main__":
    sys.exit(main())
