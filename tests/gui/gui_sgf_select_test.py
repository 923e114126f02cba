#!/usr/bin/env python3
"""GUI test of the SGF tab in front of a class, under Xvfb with xdotool.

On the soft disk (DEM, nothing moves unless a force acts), against the app's
one-line action log (--verbose):
  1. typing `100-200, 5000` into the selection field and clicking Select twice
     at the same place selects the particles both times: the list of what is
     selected grows below Select and Clear, so the second click is not a
     Clear (the Select and Clear rectangles are logged, and Clear is never
     where Select was);
  2. the timeline's step field follows the simulation's step while the rewind
     strip is dragged: held on an earlier recorded step, the field shows that
     step (`timeline field step=S` after `rewind seek step=S`, the button
     still down).
Checks are on log lines and logged rectangles, not on frame counts or timing.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, connect, pointer, drive, fail, parse_args, work_dirs, xdo  # noqa: E402

SETS = ["solver.gravity=[0,0]", "bodies.0.velocity=[0,0]", "bond.enabled=false"]


def overlaps(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    guilib.DEADLINE[0] = time.monotonic() + 90.0
    app = App(args, cfg, out, "dem_soft_body", SETS)

    def steps():
        wid = connect(app, args)
        move, hold = pointer(args, wid)

        def scroll(direction):  # the wheel over the right column (the SGF forces tab)
            move(1110, 130)
            xdo(args, "click", "5" if direction > 0 else "4")

        # The select tool brings the SGF tab forward and shows the timeline.
        move(640, 300)
        xdo(args, "key", "6")
        app.expect(r"^tool select")

        # 1. Typed IDs, Select clicked twice at the same place.
        x, y, w, h = app.widget("sgf_ids", scroll)
        move(x + 20, y + h // 2)
        time.sleep(0.15)
        xdo(args, "click", "1")
        time.sleep(0.2)
        xdo(args, "type", "--delay", "60", "--", "100-200, 5000")
        time.sleep(0.2)
        sel = app.widget("sgf_select", scroll)
        clear_before = app.ui.get("sgf_clear")
        if clear_before and overlaps(sel, clear_before):
            fail("Clear %s overlaps Select %s" % (clear_before, sel))
        at = (sel[0] + sel[2] // 2, sel[1] + sel[3] // 2)
        move(*at)
        time.sleep(0.15)
        xdo(args, "click", "1")
        first = app.expect(r"^select n=(\d+) ids=(.*) kind=typed op=replace")
        if (first.group(1), first.group(2)) != ("102", "100-200, 5000"):
            fail("Select gave %s" % first.group(0))
        app.drain(0.5)  # the list of what is selected appears: the rectangles are logged again
        sel_after, clear_after = app.ui["sgf_select"], app.ui.get("sgf_clear")
        if sel_after[:4] != sel[:4]:
            fail("Select moved from %s to %s when the selection appeared" % (sel[:4], sel_after[:4]))
        if clear_after is None or (clear_after[0] <= at[0] < clear_after[0] + clear_after[2]
                                   and clear_after[1] <= at[1] < clear_after[1] + clear_after[3]):
            fail("Clear %s is now under the cursor at %s, where Select was" % (clear_after, at))
        xdo(args, "click", "1")  # the cursor has not moved
        second = app.expect(r"^select n=(\d+) ids=(.*) kind=(\S+)")
        if second.group(3) != "typed" or second.group(1) != "102":
            fail("the second click on Select did %s" % second.group(0))
        print("select twice ok: %s; Select stays at %s, Clear at %s" % (second.group(0), sel[:4], clear_after[:4]))

        # 2. Run a while, pause, then hold the rewind strip on an earlier step.
        move(640, 300)
        xdo(args, "key", "space")
        app.expect(r"^resume")
        frames = [app.expect(r"^rewind frame step=(\d+)") for _ in range(40)]
        xdo(args, "key", "space")
        p = app.expect(r"^pause step=(\d+)")
        head = int(p.group(1))
        f = app.expect(r"^timeline field step=(\d+)")
        if int(f.group(1)) != head:
            fail("paused at step %d, the timeline's step field shows %s" % (head, f.group(1)))
        bx, by, bw, bh = app.widget("rewind_bar", lambda d: None)
        move(bx + bw // 4, by + bh // 2)
        time.sleep(0.15)
        xdo(args, "mousedown", "1")
        try:
            move(bx + bw // 4 + 3, by + bh // 2)  # a drag: the strip is the active widget
            seek = app.expect(r"^rewind seek step=(\d+)")
            s = int(seek.group(1))
            if not 0 <= s < head:
                fail("the scrub went to step %d (head %d)" % (s, head))
            f = app.expect(r"^timeline field step=(\d+)")
            if int(f.group(1)) != s:
                fail("held on rewind step %d, the timeline's step field shows %s" % (s, f.group(1)))
        finally:
            xdo(args, "mouseup", "1")
        app.expect(r"^rewind scrub end step=")
        print("timeline field ok: %d while the rewind strip was held at step %d (head %d, %d frames run)"
              % (s, s, head, len(frames)))
        move(640, 300)
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+)")
        print("screenshot: %s" % shot.group(1))

    return drive(app, args, "sgf select gui test", steps)


if __name__ == "__main__":
    sys.exit(main())
