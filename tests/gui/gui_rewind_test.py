#!/usr/bin/env python3
"""GUI test of the rewind under Xvfb, driven with xdotool.

Runs pic_vs_apic with a preset (t) and a grab while the window logs each live
frame's state hash ("rewind frame step=S hash=H"), then pauses and checks:
  1. Home seeks to step 0 and the hash is the start hash;
  2. Right steps forward one recorded frame at a time, each hash the one logged
     when that step was first reached;
  3. dragging the strip under the scene scrubs to a recorded frame with its hash;
  4. Space replays the recorded future (preset and grab included) to the head
     with the recorded hashes, then runs live;
  5. a screenshot after scrubbing back (looked at by hand: the strip shows the
     recorded range, snapshot ticks, action dots and the playhead).
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guilib import (App, DEADLINE, colour_bins, connect, drive, fail, parse_args, view_transform,  # noqa: E402
                    work_dirs, xdo)

FRAME = re.compile(r"^rewind (frame|replay) step=(\d+) hash=([0-9a-f]{16})")


def main():
    args = parse_args()
    DEADLINE[0] = time.monotonic() + 110.0
    cfg, out = work_dirs(args, "config", "captures")
    app = App(args, cfg, out, "pic_vs_apic")
    recorded = {}

    def collect(seconds):
        """Reads the log for `seconds`; remembers every live frame's hash logged so far."""
        app.drain(seconds)
        for line in app.log:
            m = FRAME.match(line)
            if m and m.group(1) == "frame":
                recorded[int(m.group(2))] = m.group(3)

    def seek_line():
        m = app.expect(r"^rewind seek step=(\d+) hash=([0-9a-f]{16}) from=(\d+)")
        return int(m.group(1)), m.group(2), int(m.group(3))

    def check_recorded(step, h, what):
        if step not in recorded:
            fail("%s landed on step %d, which no live frame logged" % (what, step))
        if recorded[step] != h:
            fail("%s: step %d hash %s, recorded %s" % (what, step, h, recorded[step]))

    def key(name, pattern):
        xdo(args, "key", name)
        return app.expect(pattern)

    def drag(wid, points, begin=None):
        """Presses at the first point, moves through the others, releases."""
        xdo(args, "mousemove", "--window", wid, *points[0])
        time.sleep(0.15)
        xdo(args, "mousedown", "1")
        if begin:
            app.expect(begin)
        for p in points[1:]:
            xdo(args, "mousemove", "--window", wid, *p)
            time.sleep(0.08)
        time.sleep(0.3)
        xdo(args, "mouseup", "1")

    def steps():
        wid = connect(app, args)
        to_screen, _ = view_transform(app)
        start = [m for m in (re.match(r"^rewind start step=0 hash=([0-9a-f]{16})", l) for l in app.log) if m]
        if not start:
            fail("no 'rewind start step=0' line")
        h0 = start[0].group(1)
        recorded[0] = h0

        # Record: run, a preset, a grab drag, run on.
        key("space", r"^resume")
        collect(1.0)
        key("t", r"^preset translation")
        collect(0.6)
        key("2", r"^tool grab")
        gx, gy = to_screen(0.55, 0.5)
        drag(wid, [(gx + 10 * k, gy - 6 * k) for k in range(6)], r"^grab begin")
        app.expect(r"^grab end")
        collect(0.8)
        key("space", r"^pause")
        collect(0.3)
        head = max(recorded)
        if head < 100 or len(recorded) < 10:
            fail("too little was recorded: %d frames up to step %d" % (len(recorded), head))
        print("recorded %d frames up to step %d" % (len(recorded), head))

        # 1. Home: the start hash.
        xdo(args, "key", "Home")
        s, h, _ = seek_line()
        if s != 0 or h != h0:
            fail("Home: step %d hash %s, the start was step 0 hash %s" % (s, h, h0))
        print("home ok: step 0 hash %s" % h)

        # 2. Right, five times: one recorded frame each, hashes as recorded.
        for _ in range(5):
            xdo(args, "key", "Right")
            s, h, _ = seek_line()
            check_recorded(s, h, "Right")
        print("right ok: up to step %d" % s)

        # 3. Drag the strip from 30 % to 60 % of its width and let go.
        bar = app.widget("rewind_bar", lambda d: None)
        bx, by, bw, bh = bar
        y = by + bh // 2
        drag(wid, [(bx + int((0.3 + 0.05 * k) * bw), y) for k in range(7)])
        m = app.expect(r"^rewind scrub end step=(\d+)")
        target = int(m.group(1))
        app.drain(0.5)
        seeks = [re.match(r"^rewind seek step=(\d+) hash=([0-9a-f]{16})", l) for l in app.log]
        seeks = [x for x in seeks if x]
        last = seeks[-1]
        if int(last.group(1)) != target:
            fail("the strip scrub ended on step %d, the last seek reached %s" % (target, last.group(1)))
        check_recorded(int(last.group(1)), last.group(2), "strip scrub")
        if not (0.4 * head <= target <= 0.75 * head):
            fail("the strip scrub reached step %d of %d (wanted about 60 %%)" % (target, head))
        print("strip ok: step %d hash %s" % (target, last.group(2)))

        # 5 (before replaying): a screenshot of the scrubbed state.
        sc = key("F12", r"^screenshot path=(\S+)")
        w, h_px, colours = colour_bins(sc.group(1))
        if colours < 8:
            fail("the screenshot looks blank (%d colours)" % colours)
        print("screenshot: %s" % sc.group(1))

        # 4. Space: replay the recorded future to the head, then live.
        mark = len(app.log)
        key("space", r"^resume")
        app.expect(r"^rewind live step=(\d+)", timeout=20)
        n_checked = 0
        for line in app.log[mark:]:
            m = FRAME.match(line)
            if m and m.group(1) == "replay" and int(m.group(2)) in recorded:
                check_recorded(int(m.group(2)), m.group(3), "replay")
                n_checked += 1
        if n_checked < 3:
            fail("only %d replayed frames could be compared" % n_checked)
        app.expect(r"^rewind frame step=(\d+)")  # live again
        print("replay ok: %d replayed frames matched the recorded hashes" % n_checked)

    return drive(app, args, "gui rewind test", steps)


if __name__ == "__main__":
    sys.exit(main())
