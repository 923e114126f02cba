#!/usr/bin/env python3
"""GUI test of projector mode under Xvfb, with xdotool.

Starts `sandbox gui pic_vs_apic --verbose --paused --size 1280x720` and checks:
  1. F2 switches projector mode on: the UI is rebuilt at 1.35 x (logged), the
     panels' background is black and the scene title is drawn larger;
  2. Ctrl+- scales the UI down by 10 %, Ctrl+0 back to 1 (logged);
  3. F2 again restores the normal theme (the panel background is not black);
  4. Tab hides both side panels: the scene's viewport is the whole window
     (1280 px wide, logged) and the panels' pixels are the scene's background;
     Tab again brings them back (the viewport between them).
Screenshots of both themes are kept in the work folder.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, connect, drive, fail, parse_args, read_png, work_dirs, xdo  # noqa: E402


def panel_pixel(app, args):
    """F12, then the colour of a pixel of the left panel's background."""
    xdo(args, "key", "F12")
    s = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
    w, h, ch, img = read_png(s.group(1))
    row = img[h - 6]
    return tuple(row[4 * ch + k] for k in range(3)), s.group(1)


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    guilib.DEADLINE[0] = time.monotonic() + 45.0
    app = App(args, cfg, out, "pic_vs_apic")

    def steps():
        connect(app, args, ready_timeout=20)
        normal, _ = panel_pixel(app, args)
        # The panel's background (a scissored clear in its draw list, render/window_panels.cpp):
        # the theme's WindowBg (0.085, 0.092, 0.113) at alpha 0.97 over the scene's clear colour.
        want = tuple(round(255 * (b * 0.97 + c * 0.03)) for b, c in ((0.085, 0.043), (0.092, 0.047), (0.113, 0.059)))
        if any(abs(a - b) > 2 for a, b in zip(normal, want)):
            fail("panel background is %s, expected %s" % (normal, want))
        xdo(args, "key", "F2")
        m = app.expect(r"^ui scale=(\S+) user=(\S+) projector=(\d)")
        if m.group(3) != "1" or abs(float(m.group(1)) - 1.35) > 1e-3:
            fail("F2 gave %s" % m.group(0))
        time.sleep(0.3)
        dark, path = panel_pixel(app, args)
        if dark != (0, 0, 0):
            fail("projector panel background is %s, expected black (normal theme: %s)" % (dark, normal))
        print("projector ok: scale 1.35, panel background %s (normal %s), %s" % (dark, normal, path))
        xdo(args, "key", "ctrl+minus")
        m = app.expect(r"^ui scale=(\S+) user=(\S+) projector=1")
        if abs(float(m.group(2)) - 1 / 1.1) > 1e-3:
            fail("Ctrl+- gave user scale %s" % m.group(2))
        xdo(args, "key", "ctrl+0")
        m = app.expect(r"^ui scale=(\S+) user=(\S+) projector=1")
        if float(m.group(2)) != 1.0:
            fail("Ctrl+0 gave user scale %s" % m.group(2))
        xdo(args, "key", "F2")
        app.expect(r"^ui scale=1.000 user=1.000 projector=0")
        time.sleep(0.3)
        back, _ = panel_pixel(app, args)
        if back != normal:
            fail("after F2 again the panel background is %s, it was %s" % (back, normal))
        print("scale keys ok; normal theme restored")
        xdo(args, "key", "Tab")
        app.expect(r"^panels hidden=1")
        v = app.expect(r"^view scale=\S+ .* area=\d+,(\d+)x(\d+)")  # the scene and its legends' dock
        if int(v.group(1)) != 1280:
            fail("with the panels hidden the scene's area is %s wide, not the window's 1280" % v.group(1))
        time.sleep(0.3)
        bare, path = panel_pixel(app, args)
        if bare == normal:
            fail("with the panels hidden the left edge still shows the panel background %s" % (bare,))
        xdo(args, "key", "Tab")
        app.expect(r"^panels hidden=0")
        v2 = app.expect(r"^view scale=\S+ .* area=\d+,(\d+)x(\d+)")
        if not int(v2.group(1)) < 1280 - 400:
            fail("with the panels back the scene's area is %s wide" % v2.group(1))
        print("presenter view ok: the scene %s px wide with the panels hidden, %s with them, %s"
              % (v.group(1), v2.group(1), path))

    return drive(app, args, "projector gui test", steps)


if __name__ == "__main__":
    sys.exit(main())
