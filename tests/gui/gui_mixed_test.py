#!/usr/bin/env python3
"""GUI test of a scene with MPM matter, DEM grains and a rigid body
under Xvfb, with xdotool.

Starts `sandbox gui rigid_balance --verbose --paused --size 1280x720` and
checks against the app's one-line action log:
  1. pick: a click on the jelly block and one on the pebbles both pick a
     particle, the pebble in a row after all of the jelly's (one table, MPM
     rows first, then the grains); grab on the jelly takes jelly particles
     and no grains;
  2. run: the loads fall into the pans and the balance stays within its
     +-20 degree stops (screenshot of the running scene);
  3. grab: the grab tool on the balance's stand drags it (Box2D's mouse joint);
  4. screenshot: F12 logs the body drawn and writes a PNG that is not blank.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, colour_bins, connect, drive, fail, parse_args, view_transform, work_dirs, xdo  # noqa: E402

SCENE = "rigid_balance"


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    guilib.DEADLINE[0] = time.monotonic() + 40.0

    app = App(args, cfg, out, SCENE)

    def steps():
        wid = connect(app, args, ready_timeout=20)
        to_screen, scale = view_transform(app)

        def move(x, y):
            xdo(args, "mousemove", "--window", wid, x, y)
            time.sleep(0.1)

        # 1. Pick the jelly, then a pebble.
        xdo(args, "key", "1")
        app.expect(r"^tool pick")
        rows = []
        for name, (x, y) in (("jelly", (0.25, 0.67)), ("pebble", (0.75, 0.67))):
            move(*to_screen(x, y))
            xdo(args, "click", "1")
            m = app.expect(r"^pick id=(\d+) row=(\d+) x=(\S+) y=(\S+)")
            px, py = float(m.group(3)), float(m.group(4))
            if abs(px - x) > 0.02 or abs(py - y) > 0.02:
                fail("picked %s at (%.4f, %.4f), clicked (%.2f, %.2f)" % (name, px, py, x, y))
            rows.append(int(m.group(2)))
            print("pick ok: %s row %s id %s" % (name, m.group(2), m.group(1)))
        if rows[1] <= rows[0]:
            fail("the pebble's row %d is not after the jelly's %d" % (rows[1], rows[0]))

        # 1b. Grab the jelly (paused): the MPM grab takes it, the grains' grab nothing
        #     (their rows come after the jelly's; IDs alone would mix them up).
        xdo(args, "key", "2")
        app.expect(r"^tool grab")
        jx, jy = to_screen(0.25, 0.67)
        move(jx, jy)
        xdo(args, "mousedown", "1")
        g = app.expect(r"^grab begin n=(\d+) target=\S+ centroid=\(([^,]+),([^)]+)\)")
        cx, cy = float(g.group(2)), float(g.group(3))
        if abs(cx - 0.25) > 0.06 or abs(cy - 0.67) > 0.06:
            fail("grab took particles centred at (%.3f, %.3f), the jelly is at (0.25, 0.67)" % (cx, cy))
        move(jx + 5, jy)
        xdo(args, "mouseup", "1")
        nxt = app.expect(r"^grab (begin|end)")
        if nxt.group(1) != "end":
            fail("a second grab began with the jelly's: %s" % nxt.string.strip())
        print("grab ok: %s jelly particles, no grains" % g.group(1))
        xdo(args, "key", "1")
        app.expect(r"^tool pick")

        # 2. Run: the loads land in the pans.
        xdo(args, "key", "space")
        app.expect(r"^resume")
        time.sleep(4.0)

        # 3. Grab the balance by its stand, near the pin (where the beam's tilt
        #    moves it least), and pull it sideways.
        xdo(args, "key", "2")
        app.expect(r"^tool grab")
        gx, gy = to_screen(0.5, 0.36)
        move(gx, gy)
        time.sleep(0.2)
        xdo(args, "mousedown", "1")
        app.expect(r"^grab body=1 ")
        for k in range(1, 9):
            move(gx + 60 * k // 8, gy)
        time.sleep(1.5)
        xdo(args, "mouseup", "1")
        e = app.expect(r"^grab body end=1 x=(\S+) y=(\S+)")
        print("grab ok: beam released at (%s, %s)" % (e.group(1), e.group(2)))

        # 4. Screenshot with the body, the jelly and the grains drawn.
        xdo(args, "key", "space")
        app.expect(r"^pause")
        xdo(args, "key", "F12")
        o = app.expect(r"^rigid overlay bodies=(\d+) contacts=(\d+)")
        if int(o.group(1)) != 1:
            fail("%s bodies drawn, the scene has 1" % o.group(1))
        s = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        w, h, bins = colour_bins(s.group(1))
        if bins < 8:
            fail("screenshot looks blank: %d colour bins" % bins)
        print("screenshot ok: %s %dx%d, %d colour bins" % (s.group(1), w, h, bins))

    return drive(app, args, "mixed gui test", steps)


if __name__ == "__main__":
    sys.exit(main())
