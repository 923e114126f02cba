#!/usr/bin/env python3
"""GUI test of the comparison view under Xvfb, with xdotool.

Starts `sandbox gui pic_vs_apic --compare "solver.transfer=pic,apic" --verbose
--paused --size 1280x720` and checks against the app's one-line action log:
  1. two panes start from one state (the log gives their labels and the hash);
  2. R applies the rotation preset to every pane; running, PIC's pane loses
     angular momentum while APIC's keeps it (logged per pane on pause);
  3. a grab in the first pane takes particles (in every pane);
  4. a screenshot of the panes (kept in the work folder); Esc ends the
     comparison.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, colour_bins, connect, drive, fail, parse_args, work_dirs, xdo  # noqa: E402


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    guilib.DEADLINE[0] = time.monotonic() + 40.0
    app = App(args, cfg, out, "pic_vs_apic --compare solver.transfer=pic,apic")

    def steps():
        wid = connect(app, args, ready_timeout=20)
        if not any(line.startswith("compare start panes=2 labels=\"transfer=pic | transfer=apic\"")
                   for line in app.log):
            fail("the comparison did not start with the two panes")
        xdo(args, "key", "r")
        app.expect(r"^compare preset rotation")
        # 30 single frames (N), then Space twice: a fixed number of steps. A fixed wall time ran as
        # many as the machine managed, and past about 1000 the spinning block's corners reach the
        # walls' layer, where APIC loses angular momentum to the walls too.
        for _ in range(30):
            xdo(args, "key", "n")
            time.sleep(0.05)
        xdo(args, "key", "space")
        app.expect(r"^resume")
        xdo(args, "key", "space")
        p = app.expect(r"^pause compare step=(\d+) angular=\[(\S+),(\S+)\]")
        if not 100 <= int(p.group(1)) <= 800:
            fail("30 single frames and a run took the comparison to step %s (expected about 300)" % p.group(1))
        l_pic, l_apic = abs(float(p.group(2))), abs(float(p.group(3)))
        if not (l_pic < 0.5 * l_apic and l_apic > 0.02):
            fail("after %s steps |L| PIC %g, APIC %g (APIC should keep ~0.0207, PIC lose it)" % (p.group(1), l_pic, l_apic))
        print("compare ok: after %s steps |L| PIC %g, APIC %g" % (p.group(1), l_pic, l_apic))
        # Grab the first pane's block a little left of and below its centre: the pane's rectangle
        # from its label line (the panes are tiled by the scene's aspect), the scene fitted below
        # the pane's label band.
        pane = None
        for line in app.log:
            m = re.match(r"^compare layout rows=\d+ cols=\d+ panes=2 .* band=(\d+) ", line)
            if m:
                band = int(m.group(1))
            m = re.match(r"^compare label pane=0 .* pane_rect=(-?\d+),(-?\d+),(\d+),(\d+)", line)
            if m:
                pane = tuple(int(m.group(k)) for k in range(1, 5))
        if pane is None:
            fail("no compare label line for pane 0")
        gx, gy = pane[0] + pane[2] // 2 - 21, pane[1] + (pane[3] + band) // 2 + 15
        xdo(args, "key", "2")
        app.expect(r"^tool grab")
        xdo(args, "mousemove", "--window", wid, gx, gy)
        time.sleep(0.2)
        xdo(args, "mousedown", "1")
        g = app.expect(r"^compare grab begin n=(\d+) pane=(\d)")
        xdo(args, "mousemove", "--window", wid, gx, gy - 60)
        time.sleep(0.2)
        xdo(args, "mouseup", "1")
        app.expect(r"^compare grab end")
        if int(g.group(1)) < 5 or g.group(2) != "0":
            fail("grab took %s particles in pane %s" % (g.group(1), g.group(2)))
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        if colour_bins(shot.group(1))[2] < 8:
            fail("screenshot looks blank")
        print("grab ok (%s particles); screenshot %s" % (g.group(1), shot.group(1)))
        xdo(args, "key", "Escape")
        app.expect(r"^compare end")

    return drive(app, args, "compare gui test", steps)


if __name__ == "__main__":
    sys.exit(main())
