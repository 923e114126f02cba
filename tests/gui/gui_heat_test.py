#!/usr/bin/env python3
"""GUI test of heat and melting on the ice_cube scene, under Xvfb
with xdotool.

Starts `sandbox gui ice_cube --verbose --paused --size 1280x720` (heat is on in
the scene: a block of ice at -5 C on a plate held at 60 C) and checks against
the app's one-line action log:
  1. the key K opens the Heat panel;
  2. its "Temperature" button switches the colour mode to temperature;
  3. key 7 picks the heat lamp tool; holding the left button over the middle
     of the block while the scene runs feeds the lamp's energy into the heat
     passes: the log line of the release reports the ledger's lamp energy of
     the hold, which must be positive and at most power x the heat time of
     the hold (all of it goes in only while material covers the whole disk:
     melting ice covers less);
  4. a screenshot taken while the lamp is held shows the block in the
     temperature map's cold colours (not the ice's material colour) and the
     lamp's orange ring; after "Melt fraction" the block is drawn lighter
     (ice is the pale end of the ice-water map);
  5. K closes the panel and Ctrl+Q quits cleanly.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import (App, connect, fail, latest_view_transform, parse_args, quit_cleanly, read_png, report_failure, view_transform,  # noqa: E402
                    work_dirs, xdo)

SCENE = "ice_cube"
POWER = 500.0          # W per unit depth (settings.ini below)
RADIUS = 0.05          # the tool's brush radius, world units
LAMP = (0.5, 0.12)     # inside the 0.2 x 0.2 block [0.4, 0.6] x [0.023, 0.223]
INNER = (0.43, 0.05, 0.57, 0.20)  # block pixels sampled for colours (x0, y0, x1, y1), world units


def block_pixels(path, to_screen, skip=None):
    """RGB of the particle pixels inside INNER (minus a disk `skip` = (cx, cy, r) in
    pixels): the dark background between particles (melting ice particles shrink) is left out."""
    w, h, ch, img = read_png(path)
    x0, y1 = to_screen(INNER[0], INNER[1])
    x1, y0 = to_screen(INNER[2], INNER[3])
    out = []
    for y in range(max(0, y0), min(h, y1)):
        line = img[y]
        for x in range(max(0, x0), min(w, x1)):
            if skip and (x - skip[0]) ** 2 + (y - skip[1]) ** 2 <= skip[2] ** 2:
                continue
            r, g, b = line[x * ch], line[x * ch + 1], line[x * ch + 2]
            if r + g + b >= 150:
                out.append((r, g, b))
    if len(out) < 300:
        fail("only %d pixels of the block in %s" % (len(out), path))
    return out, (w, h, ch, img)


def block_pixel_map(path, to_screen):
    """{(x, y): RGB} of the particle pixels inside INNER, the dark background left out."""
    w, h, ch, img = read_png(path)
    x0, y1 = to_screen(INNER[0], INNER[1])
    x1, y0 = to_screen(INNER[2], INNER[3])
    out = {}
    for y in range(max(0, y0), min(h, y1)):
        line = img[y]
        for x in range(max(0, x0), min(w, x1)):
            p = (line[x * ch], line[x * ch + 1], line[x * ch + 2])
            if sum(p) >= 150:
                out[(x, y)] = p
    return out


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    os.makedirs(os.path.join(cfg, "particle-sandbox"))
    with open(os.path.join(cfg, "particle-sandbox", "settings.ini"), "w") as f:
        f.write("tool.radius = %g\ntool.heat_power = %g\nview.color_mode = 0\n" % (RADIUS, POWER))
    guilib.DEADLINE[0] = time.monotonic() + 100.0

    app = App(args, cfg, out, SCENE)
    try:
        wid = connect(app, args, ready_timeout=30)
        to_screen, scale = view_transform(app)

        def move(px, py):
            xdo(args, "mousemove", "--window", wid, int(px), int(py))

        def scroll(direction):
            # Mouse wheel over the left column (the Heat panel is there).
            move(150, 360)
            xdo(args, "click", "5" if direction > 0 else "4")

        def click(name):
            x, y, w, h = app.widget(name, scroll)
            move(x + w // 2, y + h // 2)
            time.sleep(0.15)
            xdo(args, "click", "1")

        # 1. K: the Heat panel opens (and the left column scrolls to it).
        move(640, 300)
        xdo(args, "key", "k")
        app.expect(r"^heat panel open=1")
        # 2. Colour by temperature from the panel's button.
        click("heat_color_temperature")
        app.expect(r"^color temperature")
        to_screen, scale = latest_view_transform(app)  # the temperature legend is larger: the scene moved
        # 3. The heat lamp: key 7, run, hold it over the middle of the block.
        lx, ly = to_screen(*LAMP)
        move(lx, ly)
        xdo(args, "key", "7")
        app.expect(r"^tool heat")
        xdo(args, "key", "space")
        app.expect(r"^resume")
        time.sleep(1.0)
        move(lx, ly)
        time.sleep(0.3)
        xdo(args, "mousedown", "1")
        b = app.expect(r"^heat lamp begin x=(\S+) y=(\S+) radius=(\S+) power=(\S+) heat=(\w+) heat_time=(\S+)")
        if b.group(5) != "on":
            fail("heat is off in %s" % SCENE)
        if abs(float(b.group(1)) - LAMP[0]) > 0.01 or abs(float(b.group(2)) - LAMP[1]) > 0.01:
            fail("the lamp is at (%s, %s), the cursor at %s" % (b.group(1), b.group(2), LAMP))
        time.sleep(2.5)
        # 4. Screenshot while it is held (the lit ring), then release.
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        time.sleep(1.0)
        xdo(args, "mouseup", "1")
        e = app.expect(r"^heat lamp end x=(\S+) y=(\S+) lamp_energy=(\S+) lamps_total=(\S+) heat_time=(\S+) "
                       r"passes=(\d+) melted=(\S+)")
        energy = float(e.group(3))
        held = float(e.group(5)) - float(b.group(6))
        if held <= 0.0:
            fail("no heat pass ran while the lamp was held (heat time %s -> %s)" % (b.group(6), e.group(5)))
        if not energy > 0.0:
            fail("the lamp gave no energy: lamp_energy=%s over %.4g s of heat time" % (e.group(3), held))
        ratio = energy / (POWER * held)
        if not 0.05 < ratio <= 1.0 + 1e-6:
            fail("lamp energy %.6g J/m is %.3f x power x heat time (%.6g s), expected (0.05, 1]"
                 % (energy, ratio, held))
        print("lamp ok: %.6g J/m over %.4g s of heat time (%.3f of %g W/m x time), melted %s kg/m so far"
              % (energy, held, ratio, POWER, e.group(7)))

        # The block in the temperature colours: cool-warm's cold blue, not the
        # ice's material colour (#cfe8ff); the lamp's orange ring around the cursor.
        ring_r = RADIUS * scale
        px, img = block_pixels(shot.group(1), to_screen, (lx, ly, ring_r + 14))
        cold = sum(1 for r, g, bl in px if bl > r + 60 and r < 150)
        if cold < 0.5 * len(px):
            fail("the block is not in the temperature colours: %d of %d pixels cold blue" % (cold, len(px)))
        w, h, ch, rows = img
        orange = 0
        for y in range(max(0, int(ly - ring_r - 4)), min(h, int(ly + ring_r + 5))):
            line = rows[y]
            for x in range(max(0, int(lx - ring_r - 4)), min(w, int(lx + ring_r + 5))):
                r, g, bl = line[x * ch], line[x * ch + 1], line[x * ch + 2]
                if r > 200 and 90 < g < 190 and bl < 110:
                    orange += 1
        if orange < 40:
            fail("no lamp ring in the screenshot (%d orange pixels around the cursor)" % orange)
        print("temperature colours ok: %d of %d block pixels cold blue, %d ring pixels, in %s"
              % (cold, len(px), orange, shot.group(1)))

        # Melt fraction against temperature on the same paused frame: the unmelted ice
        # (fraction 0) turns to the pale end of the ice-water map, and every pale pixel was
        # cold blue in temperature (ice is at or below 0 C). Melting ice sits at 0 C, blue
        # in both maps, so the check is pale => cold, not cold => pale. One frame compared
        # pixel by pixel keeps it apart from how much the lamp melted, which depends on how
        # many frames the machine ran while the lamp was held.
        xdo(args, "key", "space")
        app.expect(r"^pause")
        move(640, 40)
        time.sleep(0.4)
        xdo(args, "key", "F12")
        shot_t = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        click("heat_color_melt")
        app.expect(r"^color melt fraction")
        move(640, 40)
        time.sleep(0.4)
        xdo(args, "key", "F12")
        shot_m = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        t_px = block_pixel_map(shot_t.group(1), to_screen)
        m_px = block_pixel_map(shot_m.group(1), to_screen)
        cold_t = {xy for xy, (r, g, bl) in t_px.items() if bl > r + 60 and r < 150}
        pale = [xy for xy, p in m_px.items() if min(p) > 150]
        pale_t = sum(1 for p in t_px.values() if min(p) > 150)
        if len(pale) < 100 or len(pale) < 2 * pale_t:
            fail("melt fraction did not draw the ice pale: %d pale pixels in %s, %d in the temperature "
                 "colours %s" % (len(pale), shot_m.group(1), pale_t, shot_t.group(1)))
        was_cold = sum(1 for xy in pale if xy in cold_t)
        if was_cold < 0.9 * len(pale):
            fail("pale (unmelted) pixels that were not cold in temperature: %d of %d (%s, %s)"
                 % (len(pale) - was_cold, len(pale), shot_t.group(1), shot_m.group(1)))
        print("melt fraction ok: %d pale ice pixels (%d in temperature colours), %d of them cold blue "
              "in temperature, in %s" % (len(pale), pale_t, was_cold, shot_m.group(1)))

        # 5. K closes the panel.
        move(640, 300)
        xdo(args, "key", "k")
        app.expect(r"^heat panel open=0")
        quit_cleanly(app, args, "gui heat test")
        return 0
    except (AssertionError, subprocess.SubprocessError, OSError) as exc:
        return report_failure(app, exc)
    finally:
        app.stop()


if __name__ == "__main__":
    sys.exit(main())
