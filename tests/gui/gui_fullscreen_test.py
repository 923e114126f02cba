#!/usr/bin/env python3
"""GUI test of the window in front of a class under Xvfb, with xdotool: the side
panels clamped to the window, and full screen (F11).

The settings folder is one written on a 1600x900 screen with wide panels (ImGui keeps
the panels' widths in imgui.ini beside settings.ini: 620 px each). The window opens at
1280x720 (the Xvfb screen) on pic_vs_apic and checks:
  1. F2 (projector mode): both panels are shown and together take at most 40 % of the
     width, the scene's viewport at least 60 % (the `panels` and `view` lines);
  2. the window resized to 1000x600 (xdotool): the panels are clamped again;
  3. F11: full screen on the screen's monitor, 1280x720 (the `fullscreen` line, the
     framebuffer's size and a screenshot's), the panels clamped to it;
  4. F11 again: back to the 1000x600 window.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, connect, drive, fail, parse_args, read_png, work_dirs, xdo  # noqa: E402

# A settings folder from a 1600x900 screen: wide panels (ImGui's imgui.ini) and the window's settings.
IMGUI_INI = """[Window][Particle Sandbox]
Pos=0,0
Size=620,900
Collapsed=0

[Window][Inspect]
Pos=980,0
Size=620,900
Collapsed=0
"""
SETTINGS_INI = """# Particle Sandbox window settings (written when they change and on exit)
ui.projector = 0
ui.scale = 1
view.sprite_scale = 1
"""


def expect_panels(app, window_w, share, since=None):
    """The next `panels` line for a window `window_w` wide (or one read since the log mark
    `since`): both panels shown, together at most `share` of the width."""
    rx = r"^panels left=(\d+) right=(\d+) window=%d share=(\S+)" % window_w
    m = app.expect(rx) if since is None else app.expect_since(since, rx)
    left, right = int(m.group(1)), int(m.group(2))
    if not (left > 0 and right > 0 and left + right <= share * window_w + 1):
        fail("panels %d + %d px in a %d px window (at most %.0f %% wanted)" % (left, right, window_w, 100 * share))
    return left, right


def expect_scene_share(app, window_w, least, since=None):
    """A `view` line whose scene area (the viewport the scene is fitted in and the legends'
    dock beside it) lies between the two panels and is at least `least` of the window's width;
    waits for it (the view is fitted again when the viewport changes)."""
    rx = r"^view scale=\S+ cx=\S+ cy=\S+ sx=\S+ sy=\S+ window=(\d+)x(\d+) ratio=\S+ viewport=\d+x\d+ area=(\d+),(\d+)x(\d+)"
    # The view is set in the frame that changes the panels, its line logged before theirs: the
    # last one read already counts.
    # After a resize (the log mark `since`), every view line read since then counts.
    seen = [re.match(rx, line) for line in app.log[since or 0:] if line.startswith("view ")]
    queued = [v for v in seen if v] if since is not None else seen[-1:]
    while True:
        v = queued.pop(0) if queued else app.expect(rx)
        w = int(v.group(4))
        x0 = float(v.group(3))
        if int(v.group(1)) == window_w and w >= least * window_w:
            if not (x0 > 50 and x0 + w < window_w - 50):
                fail("the scene's viewport %d px from x=%.0f does not lie between two panels" % (w, x0))
            return w


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    folder = os.path.join(cfg, "particle-sandbox")
    os.makedirs(folder)
    with open(os.path.join(folder, "imgui.ini"), "w") as f:
        f.write(IMGUI_INI)
    with open(os.path.join(folder, "settings.ini"), "w") as f:
        f.write(SETTINGS_INI)
    guilib.DEADLINE[0] = time.monotonic() + 60.0
    app = App(args, cfg, out, "pic_vs_apic")

    def steps():
        wid = connect(app, args, ready_timeout=20)
        xdo(args, "key", "F2")
        app.expect(r"^ui scale=\S+ user=\S+ projector=1")
        left, right = expect_panels(app, 1280, 0.4)
        w = expect_scene_share(app, 1280, 0.6)
        print("projector at 1280x720 with a 1600x900 imgui.ini: panels %d + %d px, scene %d px" % (left, right, w))
        time.sleep(0.3)
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")

        resized = app.mark()
        xdo(args, "windowsize", wid, 1000, 600)
        app.expect(r"^window size=1000x600 ")
        left, right = expect_panels(app, 1000, 0.4, since=resized)
        w = expect_scene_share(app, 1000, 0.6, since=resized)
        print("resized to 1000x600: panels %d + %d px, scene %d px" % (left, right, w))

        full_on = app.mark()
        xdo(args, "key", "F11")
        app.expect(r"^fullscreen on=1 size=1280x720")
        app.expect(r"^window size=1280x720 framebuffer=1280x720 fullscreen=1")
        expect_panels(app, 1280, 0.4, since=full_on)
        w = expect_scene_share(app, 1280, 0.6, since=full_on)
        time.sleep(0.3)
        xdo(args, "key", "F12")
        full = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        if (int(full.group(2)), int(full.group(3))) != (1280, 720):
            fail("full screen screenshot is %sx%s, not the monitor's 1280x720" % (full.group(2), full.group(3)))
        fw, fh, _, _ = read_png(full.group(1))
        if (fw, fh) != (1280, 720):
            fail("full screen PNG is %dx%d" % (fw, fh))
        print("F11: full screen 1280x720, scene %d px, %s" % (w, full.group(1)))

        full_off = app.mark()
        xdo(args, "key", "F11")
        app.expect(r"^fullscreen on=0 size=1000x600")
        app.expect(r"^window size=1000x600 framebuffer=1000x600 fullscreen=0")
        expect_scene_share(app, 1000, 0.6, since=full_off)
        print("F11 again: back to the 1000x600 window; projector screenshot %s" % shot.group(1))

    return drive(app, args, "fullscreen gui test", steps)


if __name__ == "__main__":
    sys.exit(main())
