#!/usr/bin/env python3
"""GUI test of the scene browser (render/feature_browser.cpp) under Xvfb, with xdotool.

Starts `sandbox gui pic_vs_apic --verbose --paused --size 1280x720` with an empty
settings folder and checks:
  1. B opens the browser: every built-in scene and lesson is listed (`browser open
     entries=N` equals the files in assets/scenes and assets/lessons), none cached yet;
     the thumbnails are drawn on the worker until `browser thumbnails N/N ready failed=0`;
  2. a screenshot: each visible card's thumbnail cell is a picture (many colours), not
     the placeholder box; the cards lie inside the 1280x720 window;
  3. F2 (projector mode, larger text): the cards are laid out again inside the window
     (a second screenshot), F2 back;
  4. a click on dam_break's card (its rectangle from the `browser entry` lines, scrolled
     into view with the wheel when needed) opens it: `browser choose` then its `scene` line;
     every thumbnail was cached as a PNG in the settings folder;
  5. a second start with the same settings folder and a lessons folder holding copies of
     the built-in lessons plus one that does not build: the copies' and the scenes'
     thumbnails come from the cache (`browser thumbnails cached N`: the key is the
     content, not the path), the broken lesson's card shows its located error (logged
     `browser thumbnail error`), Esc closes the browser.
Screenshots are kept in the work folder. Standard library only. Exits 0 on success,
1 with a reason on failure.
"""

import glob
import json
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, connect, drive, fail, parse_args, read_png, work_dirs, xdo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENTRY = re.compile(r"^browser entry (\S+) x=(-?\d+) y=(-?\d+) w=(\d+) h=(\d+) visible=(\d)")
BAD_LESSON = {
    "title": "A lesson that does not build",
    "scene": "dam_break",
    "set": ["materials.water.bulk_modulus=lots"],
    "text": ["Its set entry is not a number. The browser shows why instead of a picture."],
}


def entries(app):
    """The latest rectangle of each card: {path: (x, y, w, h, visible)}."""
    app.drain(0.4)
    rects = {}
    for line in app.log:
        m = ENTRY.match(line)
        if m:
            rects[m.group(1)] = tuple(int(m.group(k)) for k in range(2, 7))
    return rects


def wait_ready(app, total, failed=0, timeout=90.0):
    m = app.expect(r"^browser thumbnails %d/%d ready failed=(\d+)" % (total, total), timeout=timeout)
    if int(m.group(1)) != failed:
        fail("%s failed thumbnails, %d expected" % (m.group(1), failed))


def screenshot(app, args, wid):
    """F12 with the pointer on the browser's title bar (no card hovered, no tooltip)."""
    xdo(args, "mousemove", "--window", wid, 640, 8)
    time.sleep(0.4)
    xdo(args, "key", "F12")
    return app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)").group(1)


def check_cards(shot, rects, label):
    """Every visible card inside the window; each visible thumbnail cell a picture."""
    w, h, ch, img = read_png(shot)
    pictures = 0
    for path, (x, y, cw, chh, vis) in rects.items():
        if not vis:
            continue
        if x < 0 or y < 0 or x + cw > w or y + chh > h:
            fail("%s: the card of %s (%d,%d %dx%d) is not inside the %dx%d window" % (label, path, x, y, cw, chh, w, h))
        s = chh / 112.0  # a card is the thumbnail (96 px at scale 1) and 8 px above and below
        x0, y0 = int(x + 8 * s) + 2, int(y + 8 * s) + 2
        x1, y1 = int(x0 + 128 * s) - 4, int(y0 + 96 * s) - 4
        colours = set()
        for yy in range(y0, y1, 2):
            row = img[yy]
            for xx in range(x0, x1, 2):
                colours.add((row[xx * ch] >> 3, row[xx * ch + 1] >> 3, row[xx * ch + 2] >> 3))
        if len(colours) < 4:
            fail("%s: the thumbnail of %s has %d colours: not a picture" % (label, path, len(colours)))
        pictures += 1
    if pictures < 6:
        fail("%s: only %d cards visible" % (label, pictures))
    return pictures


def click_entry(app, args, wid, stem):
    """Scrolls the card of `stem` into view (the wheel over the browser) and clicks its middle."""
    for _ in range(30):
        rects = entries(app)
        hit = [(p, r) for p, r in rects.items() if os.path.basename(p) == stem + ".json"]
        if not hit:
            fail("no card for %s" % stem)
        path, (x, y, w, h, vis) = hit[0]
        if vis:
            xdo(args, "mousemove", "--window", wid, x + w // 2, y + h // 2)
            time.sleep(0.3)
            xdo(args, "click", "1")
            return path
        xdo(args, "mousemove", "--window", wid, 640, 400)
        xdo(args, "click", "5" if y > 360 else "4")
    fail("the card of %s never came into view" % stem)


def expected_count(lessons_dir):
    scenes = glob.glob(os.path.join(ROOT, "assets", "scenes", "*.json"))
    lessons = glob.glob(os.path.join(lessons_dir, "*.json"))
    return len(scenes), len(lessons)


def main():
    args = parse_args()
    cfg, out, lessons = work_dirs(args, "config", "captures", "lessons")
    guilib.DEADLINE[0] = time.monotonic() + 170.0
    n_scenes, n_lessons = expected_count(os.path.join(ROOT, "assets", "lessons"))
    total = n_scenes + n_lessons

    # First start: nothing cached.
    app = App(args, cfg, out, "pic_vs_apic")

    def first_start():
        wid = connect(app, args, ready_timeout=30)
        xdo(args, "key", "b")
        m = app.expect(r"^browser open entries=(\d+)")
        if int(m.group(1)) != total:
            fail("the browser lists %s entries; assets hold %d scenes and %d lessons" % (m.group(1), n_scenes, n_lessons))
        if int(app.expect(r"^browser thumbnails cached (\d+)").group(1)) != 0:
            fail("thumbnails cached in a fresh settings folder")
        wait_ready(app, total)
        shot = screenshot(app, args, wid)
        n = check_cards(shot, entries(app), "normal")
        print("browser: %d entries, all thumbnails drawn, %d cards visible, %s" % (total, n, shot))

        xdo(args, "key", "F2")
        app.expect(r"^ui scale=\S+ user=\S+ projector=1")
        app.drain(0.8)
        shot_p = screenshot(app, args, wid)
        n = check_cards(shot_p, entries(app), "projector")
        print("projector mode: %d cards visible, %s" % (n, shot_p))
        xdo(args, "key", "F2")
        app.expect(r"^ui scale=\S+ user=\S+ projector=0")
        app.drain(0.8)

        path = click_entry(app, args, wid, "dam_break")
        app.expect(r"^browser choose %s$" % re.escape(path))
        app.expect(r"^browser close")
        app.expect(r'^scene name="Dam break" path=\S*dam_break\.json ')
        print("clicked dam_break: opened")

    if drive(app, args, "browser first start", first_start):
        return 1
    cached = glob.glob(os.path.join(cfg, "particle-sandbox", "thumbnails", "*.png"))
    if len(cached) != total:
        print("FAIL: %d thumbnails cached in the settings folder, %d expected" % (len(cached), total))
        return 1

    # Second start: the same settings folder; the lessons copied to another folder, plus a broken one.
    for p in glob.glob(os.path.join(ROOT, "assets", "lessons", "*.json")):
        shutil.copy(p, lessons)
    bad = os.path.join(lessons, "99_broken.json")
    with open(bad, "w") as f:
        json.dump(BAD_LESSON, f, indent=2)
    os.environ["PS_LESSONS_DIR"] = lessons
    app2 = App(args, cfg, out, "pic_vs_apic")

    def second_start():
        wid = connect(app2, args, ready_timeout=30)
        xdo(args, "key", "b")
        app2.expect(r"^browser open entries=%d" % (total + 1))
        m = app2.expect(r"^browser thumbnails cached (\d+)")
        if int(m.group(1)) != total:
            fail("second start: %s thumbnails from the cache, %d expected" % (m.group(1), total))
        e = app2.expect(r"^browser thumbnail error (\S+): (.*)")
        if e.group(1) != bad or not e.group(2).startswith(bad + ":") or "set[0]" not in e.group(2):
            fail("the broken lesson's error is not located in its file: %s" % e.group(0))
        wait_ready(app2, total + 1, failed=1)
        shot = screenshot(app2, args, wid)
        print("second start: %d thumbnails from the cache; the broken lesson shows \"%s\"; %s" % (total, e.group(2), shot))
        xdo(args, "key", "Escape")
        app2.expect(r"^browser close")

    return drive(app2, args, "browser gui test", second_start)

if __name__ == "__main__":
    sys.exit(main())
