#!/usr/bin/env python3
"""GUI test of the window on a DEM scene (dem_soft_body) under Xvfb, with xdotool.

Starts `sandbox gui dem_soft_body --verbose --paused --size 1280x720`, and checks
against the app's one-line action log:
  1. picking: clicking a DEM particle's screen position reports the ID the
     headless runner's dump gives that particle;
  2. grab: dragging the jelly disk upwards with the grab tool lifts the
     grabbed DEM particles (they would fall without it);
  3. screenshot: F12 with bonds drawn (the default) logs the DEM overlay
     (bonds and walls drawn) and writes a PNG that is not blank.
Shares the helpers of gui_test.py. Standard library only. Exits 0 on
success, 1 with a reason on failure.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, check_pick, connect, dump_particles, fail, parse_args, quit_cleanly, read_png, report_failure, view_transform, work_dirs, xdo  # noqa: E402

SCENE = "dem_soft_body"


def main():
    args = parse_args()
    cfg, out, dump = work_dirs(args, "config", "captures", "dump")
    particles = dump_particles(args, SCENE, dump, 100)
    cx0 = sum(p[1] for p in particles) / len(particles)
    cy0 = sum(p[2] for p in particles) / len(particles)
    guilib.DEADLINE[0] = time.monotonic() + 28.0

    app = App(args, cfg, out, SCENE)
    try:
        wid = connect(app, args, ready_timeout=20)
        to_screen, scale = view_transform(app)

        def move(px, py):
            xdo(args, "mousemove", "--window", wid, px, py)

        # 1. Pick a DEM particle: the ID under the cursor is the dump's ID.
        check_pick(app, args, wid, particles[len(particles) // 3 + 7], to_screen)

        # 2. Grab the disk at its centre and lift it: without the grab it falls.
        xdo(args, "key", "2")
        app.expect(r"^tool grab")
        gx, gy = to_screen(cx0, cy0)
        move(gx, gy)
        time.sleep(0.2)
        xdo(args, "mousedown", "1")
        b = app.expect(r"^grab begin n=(\d+) target=\(([^,]+),([^)]+)\) centroid=\(([^,]+),([^)]+)\)")
        xdo(args, "key", "space")
        app.expect(r"^resume")
        drag_px = 60
        for k in range(1, 7):
            move(gx, gy - drag_px * k // 6)
            time.sleep(0.08)
        # DEM steps are microseconds: the scene runs slower than real time, so
        # give the spring a few seconds of wall time to lift the bonded disk.
        time.sleep(5.0)
        xdo(args, "mouseup", "1")
        e = app.expect(r"^grab end n=(\d+) target=\(([^,]+),([^)]+)\) centroid=\(([^,]+),([^)]+)\) moved=(\S+)")
        n = int(b.group(1))
        dy = float(e.group(5)) - float(b.group(5))
        want = drag_px / scale
        if n < 10:
            fail("grab took only %d particles" % n)
        if dy < 0.3 * want:
            fail("grabbed DEM particles moved %.4f in y, the cursor %.4f" % (dy, want))
        print("grab ok: %d DEM particles lifted %.4f (cursor %.4f)" % (n, dy, want))

        # 3. Screenshot with the bonds drawn.
        xdo(args, "key", "space")
        app.expect(r"^pause")
        xdo(args, "key", "F12")
        o = app.expect(r"^dem overlay bonds=(\d+) broken=(\d+) contacts=(\d+) walls=(\d+)")
        bonds, walls = int(o.group(1)), int(o.group(4))
        if bonds < 1000:
            fail("only %d bonds drawn (the jelly disk has over 1000)" % bonds)
        if walls != 4:
            fail("%d walls drawn, the scene has 4" % walls)
        s = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        path = s.group(1)
        w, h, ch, img = read_png(path)
        if (w, h) != (int(s.group(2)), int(s.group(3))):
            fail("screenshot is %dx%d, log says %sx%s" % (w, h, s.group(2), s.group(3)))
        n_px, total, total2, colours = 0, 0.0, 0.0, set()
        for y in range(0, h, 4):
            line = img[y]
            for x in range(0, w, 4):
                r, g, bb = line[x * ch], line[x * ch + 1], line[x * ch + 2]
                lum = 0.299 * r + 0.587 * g + 0.114 * bb
                total += lum
                total2 += lum * lum
                n_px += 1
                colours.add((r >> 4, g >> 4, bb >> 4))
        var = total2 / n_px - (total / n_px) ** 2
        if var < 100.0 or len(colours) < 8:
            fail("screenshot looks blank: variance %.1f, %d colours" % (var, len(colours)))
        print("screenshot ok: %s %dx%d, %d bonds drawn, variance %.0f, %d colour bins" %
              (path, w, h, bonds, var, len(colours)))

        quit_cleanly(app, args, "dem gui test")
        return 0
    except (AssertionError, subprocess.SubprocessError, OSError) as exc:
        return report_failure(app, exc)
    finally:
        app.stop()


if __name__ == "__main__":
    sys.exit(main())
