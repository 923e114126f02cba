#!/usr/bin/env python3
"""GUI test of the two sprite paths (render/gl_draw.h, SpritePath) under Xvfb.

The particles are drawn as GL_POINTS while every sprite is small (or, under
software OpenGL, into a CPU layer put over the scene as one texture) and as
instanced quads when zoomed in. All three must show the same picture.
  1. settings view.sprites = points, quads, then software: the same paused
     scene (pic_vs_apic) screenshotted by F12; the log names the path taken;
     the scene region of the images holds the block (many particle pixels)
     and quads and software each differ from points (by more than 24 levels)
     in fewer pixels than 2 % of the particle pixels;
  2. view.sprites = auto: the default view takes points (software under a
     software OpenGL, as Xvfb's); zoomed in with the mouse wheel until a
     sprite is wider than 8 pixels, quads.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, connect, fail, parse_args, quit_cleanly, read_png, report_failure, work_dirs, xdo  # noqa: E402

BACKGROUND_MAX = 60  # the domain's fill is (19, 21, 26); particles are brighter


def shot(app, args):
    xdo(args, "key", "F12")
    s = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+) sprites=(\w+)")
    return s.group(1), s.group(4)


def run(args, cfg, out, path, check):
    """Starts the window with view.sprites = path, runs check(app), quits."""
    os.makedirs(os.path.join(cfg, "particle-sandbox"), exist_ok=True)
    with open(os.path.join(cfg, "particle-sandbox", "settings.ini"), "w") as f:
        f.write("view.sprites = %s\n" % path)
    app = App(args, cfg, out, "pic_vs_apic")
    try:
        connect(app, args, ready_timeout=20)
        v = app.expect(r"^view scale=(\S+) cx=(\S+) cy=(\S+) sx=(\S+) sy=(\S+)")
        result = check(app, (float(v.group(4)), float(v.group(5))))
        quit_cleanly(app, args, "sprites=%s run" % path)
        return result
    except Exception as exc:
        report_failure(app, exc)
        raise
    finally:
        app.stop()


def region(path, centre, half=180):
    w, h, ch, img = read_png(path)
    cx, cy = int(centre[0]), int(centre[1])
    px = []
    for y in range(max(0, cy - half), min(h, cy + half)):
        row = img[y]
        for x in range(max(0, cx - half), min(w, cx + half)):
            px.append(tuple(row[x * ch + k] for k in range(3)))
    return px


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    guilib.DEADLINE[0] = time.monotonic() + 90.0

    def forced(path):
        def check(app, centre):
            time.sleep(0.3)
            png, used = shot(app, args)
            if used != path:
                fail("view.sprites=%s drew %s" % (path, used))
            return png, centre
        return run(args, cfg, out, path, check)

    try:
        (png_points, centre), (png_quads, _), (png_soft, _) = forced("points"), forced("quads"), forced("software")
        a = region(png_points, centre)
        lit = sum(1 for p in a if max(p) > BACKGROUND_MAX)
        if lit < 2000:
            fail("the points image shows only %d particle pixels around the view centre" % lit)
        for name, png in (("quads", png_quads), ("software", png_soft)):
            b = region(png, centre)
            differ = sum(1 for p, q in zip(a, b) if max(abs(p[k] - q[k]) for k in range(3)) > 24)
            print("points vs %s: %d of %d pixels differ (%d particle pixels), %s %s"
                  % (name, differ, len(a), lit, png_points, png))
            if differ > 0.02 * lit:
                fail("points and %s differ in %d pixels (of %d particle pixels)" % (name, differ, lit))

        def auto(app, centre):
            time.sleep(0.3)
            _, used = shot(app, args)
            if used not in ("points", "software"):  # software under a software OpenGL such as Xvfb's llvmpipe
                fail("auto drew %s at the default view" % used)
            first = used
            xdo(args, "mousemove", int(centre[0]), int(centre[1]))
            for _ in range(3):
                xdo(args, "click", "--repeat", "6", "4")  # wheel up: zoom in
                time.sleep(0.2)
            time.sleep(0.3)
            _, used = shot(app, args)
            if used != "quads":
                fail("auto drew %s zoomed in" % used)
            print("auto: %s at the default view, quads zoomed in" % first)
        run(args, cfg, out, "auto", auto)
    except (AssertionError, OSError) as exc:
        print("FAIL: %s" % exc)
        return 1
    print("sprites gui test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
