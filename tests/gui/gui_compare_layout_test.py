#!/usr/bin/env python3
"""GUI test of the comparison view's layout under Xvfb, with xdotool.

1. dam_break (a 2:1 scene) compared three ways at 1280x720: the panes are stacked in
   three rows (`compare layout rows=3 cols=1`), not three tall thin columns; every pane
   lies between the side panels, and every label inside its own pane (`compare label`
   lines), so no label runs into another or under a panel. A screenshot is kept.
2. Lesson 03 (four panes of a square block): 2 x 2; Esc ends the comparison and the
   Lesson panel puts away the text about the four panes (`lesson text hidden`, the note
   in its place is drawn); Page Down then opens lesson 04, the lesson after it.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, colour_bins, connect, drive, fail, keep_image, parse_args, work_dirs, xdo  # noqa: E402


class Reader:
    """Log lines in order, those read while waiting for others (connect() reads up to `ready`)
    included: the first match after the last one taken."""

    def __init__(self, app):
        self.app, self.pos = app, 0

    def expect(self, pattern, timeout=15.0):
        rx = re.compile(pattern)
        while True:
            while self.pos < len(self.app.log):
                line = self.app.log[self.pos]
                self.pos += 1
                m = rx.search(line)
                if m:
                    return m
            self.app.expect(r"", timeout)  # one more line into app.log


def inside(a, b):
    """Rectangle a (x, y, w, h) within rectangle b."""
    return a[0] >= b[0] and a[1] >= b[1] and a[0] + a[2] <= b[0] + b[2] and a[1] + a[3] <= b[1] + b[3]


def disjoint(a, b):
    return a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1]


def check_labels(log, n, left, right, window_w=1280):
    """The `compare label` lines of n panes: each label inside its pane, the panes apart and
    between the side panels (left, right: their widths)."""
    panes, labels = [], []
    for k in range(n):
        m = log.expect(r"^compare label pane=%d x=(-?\d+) y=(-?\d+) w=(\d+) h=(\d+) font=(\S+) "
                       r"pane_rect=(-?\d+),(-?\d+),(\d+),(\d+)" % k)
        label = tuple(int(m.group(i)) for i in range(1, 5))
        pane = tuple(int(m.group(i)) for i in range(6, 10))
        if not inside(label, pane):
            fail("pane %d's label %s is not inside its pane %s" % (k, label, pane))
        if pane[0] < left - 1 or pane[0] + pane[2] > window_w - right + 1:
            fail("pane %d %s reaches under a side panel (%d px | %d px)" % (k, pane, left, right))
        panes.append(pane)
        labels.append((label, m.group(5)))
    for i in range(n):
        for j in range(i + 1, n):
            if not disjoint(panes[i], panes[j]):
                fail("panes %d and %d overlap: %s %s" % (i, j, panes[i], panes[j]))
    return panes, labels


def side_panels(app, window_w=1280):
    """The side panels' widths from the first `view` line: the scene's area (the viewport and
    the legends' dock) lies between them."""
    m = Reader(app).expect(r"^view scale=\S+ .* area=(\d+),(\d+)x(\d+)")
    x0, w = int(m.group(1)), int(m.group(2))
    return x0, window_w - x0 - w


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    guilib.DEADLINE[0] = time.monotonic() + 60.0
    app = App(args, cfg, out, "dam_break --compare solver.transfer=pic,apic,flip")

    def steps():
        connect(app, args, ready_timeout=30)
        log = Reader(app)
        m = log.expect(r"^compare layout rows=(\d+) cols=(\d+) panes=3 viewport=(\d+)x(\d+) pane=(\d+)x(\d+) "
                       r"band=\d+ scene=(\d+)x(\d+) aspect=(\S+)")
        rows, cols = int(m.group(1)), int(m.group(2))
        if abs(float(m.group(9)) - 2.0) > 0.01:
            fail("dam_break's aspect is %s, expected 2" % m.group(9))
        if (rows, cols) != (3, 1):
            fail("dam_break's three panes laid out %d x %d, expected 3 rows x 1 column" % (rows, cols))
        left, right = side_panels(app)
        panes, labels = check_labels(log, 3, left, right)
        time.sleep(0.3)
        xdo(args, "key", "F12")
        shot = log.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        if colour_bins(shot.group(1))[2] < 8:
            fail("screenshot looks blank")
        keep_image(args, shot.group(1), "compare_dam_break_by_aspect")
        print("dam_break x3: %d rows x %d column, scene %sx%s px per pane, labels %s; %s"
              % (rows, cols, m.group(7), m.group(8), [f for _, f in labels], shot.group(1)))

        xdo(args, "key", "Next")  # lesson 01 (no lesson open: the first)
        log.expect(r"^lesson open id=01_")
        log.expect(r"^compare end")
        xdo(args, "key", "Next")
        log.expect(r"^lesson open id=02_")
        xdo(args, "key", "Next")
        log.expect(r"^lesson open id=03_side_by_side")
        m = log.expect(r"^compare layout rows=(\d+) cols=(\d+) panes=4 ")
        if (int(m.group(1)), int(m.group(2))) != (2, 2):
            fail("lesson 03's four square panes laid out %s x %s, expected 2 x 2" % (m.group(1), m.group(2)))
        check_labels(log, 4, left, right)
        time.sleep(0.3)
        xdo(args, "key", "F12")
        four = log.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        xdo(args, "key", "Escape")
        log.expect(r"^compare end")
        log.expect(r'^lesson text hidden id=03_side_by_side reason="comparison ended"')
        log.expect(r"^ui name=lesson_compare_ended x=\d+ y=\d+ w=\d+ h=\d+ visible=1")
        time.sleep(0.3)
        xdo(args, "key", "F12")
        single = log.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        print("lesson 03: 2 x 2 (%s); Esc put the lesson's text away: %s" % (four.group(1), single.group(1)))
        xdo(args, "key", "Next")
        log.expect(r"^lesson open id=04_")
        print("Page Down after Esc opened lesson 04")

    return drive(app, args, "compare layout gui test", steps)


if __name__ == "__main__":
    sys.exit(main())
