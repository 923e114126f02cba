#!/usr/bin/env python3
"""GUI test of rigid bodies in the window under Xvfb, with xdotool.

Starts `sandbox gui rigid_float --verbose --paused --size 1280x720` and checks
against the app's one-line action log:
  1. pick: clicking the middle box reports body 2, "oak", with its mass
     (density 500 x 0.16 x 0.1 m x 1 m depth = 8 kg);
  2. draw: the Body tool (key 8) dragged corner to corner adds "drawn 1", a
     box whose mass is the tool's density (500) times the dragged area;
  3. grab: the grab tool on the left box lifts it with Box2D's mouse joint
     while the scene runs (without it, the box falls into the water);
  4. screenshot: F12 logs the bodies drawn and writes a PNG that is not blank.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, colour_bins, connect, drive, fail, parse_args, view_transform, work_dirs, xdo  # noqa: E402

SCENE = "rigid_float"


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

        # 1. Pick the oak box.
        xdo(args, "key", "1")
        app.expect(r"^tool pick")
        move(*to_screen(0.5, 0.55))
        xdo(args, "click", "1")
        m = app.expect(r'^pick body=(\d+) name="([^"]+)" mass=(\S+)')
        if m.group(1) != "2" or m.group(2) != "oak":
            fail("picked body %s '%s', expected 2 'oak'" % (m.group(1), m.group(2)))
        mass = float(m.group(3))
        if abs(mass - 8.0) > 0.01 * 8.0:
            fail("oak's mass %.4f kg, expected 8 (500 kg/m^3 x 0.016 m^2 x 1 m)" % mass)
        print("pick ok: body 2 oak, %.4f kg" % mass)

        # 2. Draw a box with the Body tool, corner to corner.
        xdo(args, "key", "8")
        app.expect(r"^tool body")
        ax, ay = to_screen(0.30, 0.80)
        bx, by = to_screen(0.42, 0.88)
        move(ax, ay)
        time.sleep(0.2)
        xdo(args, "mousedown", "1")
        time.sleep(0.2)  # the press lands in a frame of its own, as a person's does
        for k in range(1, 6):
            move(ax + (bx - ax) * k // 5, ay + (by - ay) * k // 5)
        xdo(args, "mouseup", "1")
        a = app.expect(r'^body add id=(\d+) name="([^"]+)" shape=(\w+) x=(\S+) y=(\S+) mass=(\S+)')
        w_world, h_world = abs(bx - ax) / scale, abs(by - ay) / scale
        want = 500.0 * w_world * h_world
        got = float(a.group(6))
        if a.group(1) != "4" or a.group(2) != "drawn 1" or a.group(3) != "box":
            fail("added %s" % a.group(0))
        if abs(got - want) > 0.02 * want:
            fail("drawn box mass %.4f kg, expected %.4f (500 x %.4f x %.4f)" % (got, want, w_world, h_world))
        print("draw ok: %s, %.4f kg (expected %.4f)" % (a.group(2), got, want))

        # 3. Grab the pine box and hold it up while the water settles.
        xdo(args, "key", "2")
        app.expect(r"^tool grab")
        gx, gy = to_screen(0.2, 0.55)
        move(gx, gy)
        time.sleep(0.2)
        xdo(args, "mousedown", "1")
        app.expect(r"^grab body=1 ")
        xdo(args, "key", "space")
        app.expect(r"^resume")
        lift = 80
        for k in range(1, 9):
            move(gx, gy - lift * k // 8)
        time.sleep(3.0)
        xdo(args, "mouseup", "1")
        e = app.expect(r"^grab body end=1 x=(\S+) y=(\S+)")
        y = float(e.group(2))
        # Gravity alone would have dropped it below its start (the scene runs in slow
        # motion on a small machine, so how far it rose depends on the machine).
        if y < 0.56:
            fail("grabbed box is at y=%.4f, below its start plus 0.01: the cursor lifted it towards %.4f" %
                 (y, 0.55 + lift / scale))
        print("grab ok: pine held at y=%.4f (cursor %.4f)" % (y, 0.55 + lift / scale))

        # 4. Screenshot with the bodies drawn.
        xdo(args, "key", "space")
        app.expect(r"^pause")
        xdo(args, "key", "F12")
        o = app.expect(r"^rigid overlay bodies=(\d+) contacts=(\d+)")
        if int(o.group(1)) != 4:
            fail("%s bodies drawn, the scene has 4" % o.group(1))
        s = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        w, h, bins = colour_bins(s.group(1))
        if bins < 8:
            fail("screenshot looks blank: %d colour bins" % bins)
        print("screenshot ok: %s %dx%d, %d colour bins" % (s.group(1), w, h, bins))

    return drive(app, args, "rigid gui test", steps)


if __name__ == "__main__":
    sys.exit(main())
