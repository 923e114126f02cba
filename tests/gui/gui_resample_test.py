#!/usr/bin/env python3
"""GUI test of particle resampling on the toffee scene, under Xvfb
with xdotool.

Starts `sandbox gui toffee --verbose --paused --size 1280x720` with the
distance-band overlay and the highlight rings switched on in its settings
file, and checks against the app's one-line action log:
  1. the key P switches resampling on (the scene ships with it off);
  2. running the pull with it on inserts particles (the log line of the next
     switch reports passes and inserted particles, and the count grew);
  3. a screenshot taken while it runs shows the green rings of freshly
     inserted particles;
  4. P switches it off again and the scene keeps running.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, connect, fail, parse_args, quit_cleanly, read_png, report_failure, work_dirs, xdo  # noqa: E402

SCENE = "toffee"


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    os.makedirs(os.path.join(cfg, "particle-sandbox"))
    with open(os.path.join(cfg, "particle-sandbox", "settings.ini"), "w") as f:
        f.write("view.sdf_band = 1\nview.resample_marks = 1\n")
    guilib.DEADLINE[0] = time.monotonic() + 90.0

    app = App(args, cfg, out, SCENE)
    try:
        connect(app, args, ready_timeout=30)
        # 1. P: on.
        xdo(args, "key", "p")
        on = app.expect(r"^resampling on passes=(\d+) inserted=(\d+) merged=(\d+) particles=(\d+)")
        n0 = int(on.group(4))
        # 2. Run the pull for a while (the bar stretches from t = 0).
        xdo(args, "key", "space")
        app.expect(r"^resume")
        # 3. Screenshot at the first frame whose passes inserted particles:
        # pause there (the rings fade by substeps, so they hold while paused).
        app.expect(r"^resample first insert step=(\d+) inserted=(\d+)", timeout=40)
        xdo(args, "key", "space")
        app.expect(r"^pause")
        xdo(args, "key", "F12")
        s = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        xdo(args, "key", "space")
        app.expect(r"^resume")
        time.sleep(4.0)
        # 4. P: off, with the totals of the run.
        xdo(args, "key", "p")
        off = app.expect(r"^resampling off passes=(\d+) inserted=(\d+) merged=(\d+) particles=(\d+)")
        passes, inserted, n1 = int(off.group(1)), int(off.group(2)), int(off.group(4))
        if passes < 20:
            fail("only %d resampling passes ran" % passes)
        if inserted <= 0 or n1 <= n0:
            fail("resampling inserted %d particles (count %d -> %d)" % (inserted, n0, n1))
        print("resampling ok: %d passes, %d inserted, %s merged, %d -> %d particles"
              % (passes, inserted, off.group(3), n0, n1))

        w, h, ch, img = read_png(s.group(1))
        green = 0
        for y in range(h):
            line = img[y]
            for x in range(0, w):
                r, g, b = line[x * ch], line[x * ch + 1], line[x * ch + 2]
                if g > 190 and r < 150 and b < 190 and g - r > 80:
                    green += 1
        if green < 20:
            fail("no highlight rings in the screenshot (%d ring-green pixels)" % green)
        print("highlight ok: %d ring-green pixels in %s" % (green, s.group(1)))

        quit_cleanly(app, args, "gui resample test")
        return 0
    except (AssertionError, subprocess.SubprocessError, OSError) as exc:
        return report_failure(app, exc)
    finally:
        app.stop()


if __name__ == "__main__":
    sys.exit(main())
