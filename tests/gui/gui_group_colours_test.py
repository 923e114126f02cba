#!/usr/bin/env python3
"""GUI test of the group colours under Xvfb at 1280x720, with xdotool.

Lesson 07 (the dancer, coloured by group) must show one set of group names and
colours: the legend's, the SGF tab's list and the particles' own. Starts
`sandbox gui --lesson 07 --verbose --paused --size 1280x720` and checks:
  1. the legend logs the SGF groups with their colours (`legend group
     title="SGF group" entries="head #f2bf4d|..."`), the same text the SGF tab
     logs for its list (`sgf groups entries="..."`), and both name the groups
     of the scene's groups.json in its colours;
  2. a screenshot: particle pixels of the head's, the arms' and the legs'
     colours lie in the scene, and none in the scene groups' palette colour the
     body had before (group 1's orange).
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, connect, drive, fail, parse_args, read_png, work_dirs, xdo  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def hexrgb(c):
    return "#%02x%02x%02x" % tuple(int(round(min(max(v, 0.0), 1.0) * 255)) for v in c)


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    os.environ["PS_LESSONS_DIR"] = os.path.abspath(os.path.join(ROOT, "assets", "lessons"))
    with open(os.path.join(ROOT, "assets", "scenes", "dem_dance", "groups.json")) as f:
        groups = json.load(f)["groups"]
    want = "|".join("%s %s" % (g["name"], hexrgb(g["color"])) for g in groups)
    guilib.DEADLINE[0] = time.monotonic() + 60.0
    app = App(args, cfg, out, "--lesson 07")

    def steps():
        connect(app, args, ready_timeout=30)
        legend = [line for line in app.log if line.startswith("legend group ")]
        lst = [line for line in app.log if line.startswith("sgf groups entries=")]
        lg = app.expect(r'^legend group title="([^"]*)" entries="([^"]*)"') if not legend else None
        legend_line = legend[-1] if legend else lg.group(0)
        if not lst:
            lst = [app.expect(r'^sgf groups entries=').string]
        title = legend_line.split('title="', 1)[1].split('"', 1)[0]
        entries = legend_line.split('entries="', 1)[1].rsplit('"', 1)[0]
        tab = lst[-1].split('entries="', 1)[1].rsplit('"', 1)[0]
        if title != "SGF group":
            fail("the legend shows %r, not the SGF groups: %s" % (title, legend_line))
        shown = entries[:-len("|no SGF group #6b6e75")] if entries.endswith("|no SGF group #6b6e75") else entries
        if shown != tab:
            fail("the legend %r and the SGF tab %r differ" % (entries, tab))
        # groups.json's colours, to a level in 255 (the window rounds floats, Python doubles).
        def parse(text):
            out = []
            for item in text.split("|"):
                name, hx = item.rsplit(" ", 1)
                out.append((name, tuple(int(hx[k:k + 2], 16) for k in (1, 3, 5))))
            return out
        got, exp = parse(tab), parse(want)
        if [n for n, _ in got] != [n for n, _ in exp] or any(
                max(abs(a - b) for a, b in zip(c1, c2)) > 1 for (_, c1), (_, c2) in zip(got, exp)):
            fail("the SGF tab and legend show %r, groups.json has %r" % (tab, want))
        print("legend = SGF tab = groups.json: %s" % tab[:100])
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+)")
        w, h, ch, rows = read_png(shot.group(1))
        # The scene lies between the side panels (the legend sits in its bottom-right corner).
        left, right = 340, 790
        counts = {}
        palette = {g["name"]: tuple(int(round(c * 255)) for c in g["color"]) for g in groups}
        palette["scene group 1 (orange)"] = (242, 142, 43)
        for name, rgb in palette.items():
            n = 0
            for y in range(60, 500):
                line = rows[y]
                for x in range(left, right):
                    k = x * ch
                    if abs(line[k] - rgb[0]) <= 2 and abs(line[k + 1] - rgb[1]) <= 2 and abs(line[k + 2] - rgb[2]) <= 2:
                        n += 1
            counts[name] = n
        for name in ("head", "right arm", "left arm", "left leg", "right leg"):
            if counts[name] < 5:
                fail("no particles of %s's colour %s in the scene: %s" % (name, palette[name], counts))
        if counts["scene group 1 (orange)"] > 0:
            fail("the body is still drawn in scene group 1's orange: %s" % counts)
        print("screenshot %s: pixels per group colour %s" % (shot.group(1), counts))

    return drive(app, args, "group colours gui test", steps)


if __name__ == "__main__":
    sys.exit(main())
