#!/usr/bin/env python3
"""GUI test of the sandbox window under Xvfb, driven with xdotool.

Starts `sandbox gui pic_vs_apic --verbose --paused --size 1280x720`, reads the
view transform the app logs, and checks, against the app's one-line action log:
  1. picking: clicking a particle's screen position reports the same ID the
     headless runner's dump gives that particle;
  2. grab: dragging with the grab tool moves the grabbed particles along;
  3. presets: the key t changes the velocity field (momentum before/after);
  4. screenshot: F12 writes a PNG that is not blank (pixel variance).
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guilib import App, check_pick, connect, dump_particles, fail, parse_args, read_png, report_failure, view_transform, work_dirs, xdo  # noqa: E402


def main():
    args = parse_args()
    cfg, out, dump = work_dirs(args, "config", "captures", "dump")
    particles = dump_particles(args, "pic_vs_apic", dump, 1000)

    app = App(args, cfg, out, "pic_vs_apic")
    try:
        wid = connect(app, args)
        to_screen, scale = view_transform(app)

        def move(px, py):
            xdo(args, "mousemove", "--window", wid, px, py)

        # 1. Pick: the ID under the cursor is the dump's ID.
        check_pick(app, args, wid, particles[len(particles) // 3 + 17], to_screen)

        # 2. Grab near the block's centre (the initial rotation barely moves it) and drag right.
        xdo(args, "key", "2")
        app.expect(r"^tool grab")
        xdo(args, "key", "space")
        app.expect(r"^resume")
        gx, gy = to_screen(0.5, 0.5)
        move(gx, gy)
        time.sleep(0.2)
        xdo(args, "mousedown", "1")
        b = app.expect(r"^grab begin n=(\d+) target=\(([^,]+),([^)]+)\) centroid=\(([^,]+),([^)]+)\)")
        drag_px = 70
        for k in range(1, 8):
            move(gx + drag_px * k // 7, gy)
            time.sleep(0.08)
        time.sleep(1.5)
        xdo(args, "mouseup", "1")
        e = app.expect(r"^grab end n=(\d+) target=\(([^,]+),([^)]+)\) centroid=\(([^,]+),([^)]+)\) moved=(\S+)")
        n = int(b.group(1))
        dx = float(e.group(4)) - float(b.group(4))
        want = drag_px / scale
        if n < 10:
            fail("grab took only %d particles" % n)
        if dx < 0.3 * want:
            fail("grabbed particles moved %.4f in x, the cursor %.4f" % (dx, want))
        print("grab ok: %d particles moved %.4f (cursor %.4f)" % (n, dx, want))

        # 3. Pause, then N: one whole frame, every substep of it, even though the
        #    frames before ran under the time budget (a regression: a budget of
        #    1e30 ms once overflowed an int and N ran one substep).
        xdo(args, "key", "space")
        app.expect(r"^pause")
        xdo(args, "key", "n")
        f = app.expect(r"^step frame substeps=(\d+) want=(\d+)")
        if int(f.group(1)) != int(f.group(2)) or int(f.group(2)) < 2:
            fail("N stepped %s substeps of a %s-substep frame" % (f.group(1), f.group(2)))
        print("single frame ok: %s of %s substeps" % (f.group(1), f.group(2)))

        # 4. Preset t: translation replaces the rotation field (momentum changes).
        xdo(args, "key", "t")
        p = app.expect(r"^preset translation .*momentum_before=\(([^,]+),([^)]+)\) momentum_after=\(([^,]+),([^)]+)\)")
        before = (float(p.group(1)), float(p.group(2)))
        after = (float(p.group(3)), float(p.group(4)))
        if abs(after[0] - before[0]) < 1e-3 or after[0] <= 0:
            fail("preset t did not change the velocity field: momentum %s -> %s" % (before, after))
        print("preset ok: momentum %s -> %s" % (before, after))

        # 5. Screenshot: a PNG with real content.
        xdo(args, "key", "F12")
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
        print("screenshot ok: %s %dx%d variance %.0f, %d colour bins" % (path, w, h, var, len(colours)))

        xdo(args, "key", "ctrl+q")
        app.expect(r"^quit", timeout=10)
        app.proc.wait(timeout=10)
        if app.proc.returncode != 0:
            fail("the sandbox exited with status %d" % app.proc.returncode)
        if not os.path.exists(os.path.join(cfg, "particle-sandbox", "settings.ini")):
            fail("settings were not saved under XDG_CONFIG_HOME")
        print("gui test passed")
        return 0
    except (AssertionError, subprocess.SubprocessError, OSError) as exc:
        return report_failure(app, exc)
    finally:
        app.stop()


if __name__ == "__main__":
    sys.exit(main())
