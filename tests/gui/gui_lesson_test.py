#!/usr/bin/env python3
"""GUI test of guided lessons under Xvfb, with xdotool.

Starts `sandbox gui --lesson 01 --verbose --paused --size 1280x720` and checks
against the app's one-line action log:
  1. the first lesson opens its scene with PIC and spins the block (the
     rotation preset gives it angular momentum);
  2. running it, PIC loses angular momentum (the Stats sample logged on pause);
  3. Page Down, with lesson 01 running, opens the next lesson (APIC) on the
     same block, spun again and paused (lessons wait for the teacher: Space
     then runs it);
  4. a screenshot with the lesson panel shows (kept in the work folder);
  5. Page Down opens lesson 03: four panes (PIC, APIC, FLIP, PolyPIC) from one
     state, fitted to the pane (not drawn at a pixel per metre), paused on
     their first frame (a screenshot); Space runs them,
     PIC loses the rotation the others keep; Home restores every pane to the
     start (the first frame's hash, after the lesson's preset), Right steps one recorded frame, Space replays
     and runs on; a screenshot of the four panes.
  6. the lessons' view (speed colours, the affine overlay, the grab tool) is
     theirs: quitting with a lesson open saves the view from before the first
     lesson in settings.ini (direction colours, no affine overlay, attract).
  7. bad files in the lessons folder (a copy of assets/lessons, PS_LESSONS_DIR)
     are reported once each, located, and skipped: one that is not valid JSON
     (found when the list reads the folder) and one whose "set" value the
     scene refuses (found when Page Down reaches it), both between lessons 02
     and 03: Page Down from 02 opens 03, the running lesson untouched until then,
     and the folder, re-read every 2 s, does not report them again.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import glob
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, colour_bins, connect, drive, fail, parse_args, work_dirs, xdo  # noqa: E402


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    settings = os.path.join(cfg, "particle-sandbox", "settings.ini")
    os.makedirs(os.path.dirname(settings))
    before = {"view.color_mode": "2", "view.affine": "0", "tool": "2"}  # direction, no affine overlay, attract
    with open(settings, "w") as f:
        f.write("".join("%s = %s\n" % kv for kv in before.items()))
    lessons = os.path.join(args.work, "lessons")
    os.makedirs(lessons)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "lessons")
    for f in glob.glob(os.path.join(src, "*.json")):
        shutil.copy(f, lessons)
    bad_json = os.path.join(lessons, "02a_bad_json.json")
    with open(bad_json, "w") as f:
        f.write('{"title": "broken",\n "scene": "pic_vs_apic" "text": "x"}\n')
    bad_set = os.path.join(lessons, "02b_bad_set.json")
    with open(bad_set, "w") as f:
        f.write('{"title": "bad set", "scene": "pic_vs_apic", "text": "x",\n "set": ["solver.transfer=bogus"]}\n')
    os.environ["PS_LESSONS_DIR"] = lessons  # the window's folder of lessons (the App inherits it)
    guilib.DEADLINE[0] = time.monotonic() + 70.0
    app = App(args, cfg, out, "--lesson 01")

    def steps():
        connect(app, args, ready_timeout=20)
        # Logged while the window opened (before "ready").
        if not any(line.startswith("lesson open id=01_pic_loses_rotation ") for line in app.log):
            fail("the first lesson did not open")
        spun = [re.search(r"angular_after=(\S+)", line) for line in app.log if line.startswith("preset rotation ")]
        if not spun:
            fail("the lesson did not spin the block")
        l0 = float(spun[0].group(1))
        if not abs(l0) > 0.0:
            fail("the rotation preset gave angular momentum %g" % l0)
        xdo(args, "key", "space")
        app.expect(r"^resume")
        time.sleep(2.0)
        xdo(args, "key", "space")
        s = app.expect(r"^pause step=(\d+) t=(\S+) ke=(\S+) angular=(\S+)")
        l1 = float(s.group(4))
        if not abs(l1) < 0.8 * abs(l0):
            fail("after %s steps with PIC the block kept L=%g of %g" % (s.group(1), l1, l0))
        print("PIC lost rotation: L %g -> %g after %s steps (t=%s s)" % (l0, l1, s.group(1), s.group(2)))
        # A lesson waits for the teacher: opened while the window runs, it still opens paused.
        xdo(args, "key", "space")
        app.expect(r"^resume")
        xdo(args, "key", "Next")  # Page Down
        o2 = app.expect(r"^lesson open id=02_apic_keeps_rotation .* paused=(\d)")
        if o2.group(1) != "1":
            fail("lesson 02, opened while lesson 01 ran, did not open paused: %s" % o2.group(0))
        app.expect(r"^transfer apic")  # the lesson's transfer, not the one edited before
        p2 = app.expect(r"^preset rotation .* angular_before=(\S+) angular_after=(\S+)")
        if abs(float(p2.group(2)) - l0) > 1e-6 * abs(l0):
            fail("lesson 2 spun the block to L=%s, lesson 1 to %g" % (p2.group(2), l0))
        print("lessons ok: 01 then 02 (Page Down), both spun to L=%g" % l0)
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        w, h, bins = colour_bins(shot.group(1))
        if bins < 8:
            fail("screenshot looks blank")
        print("screenshot ok (lesson 02 paused on its first frame): %s" % shot.group(1))
        xdo(args, "key", "space")  # paused, so Space runs it (running, Space would pause it)
        app.expect(r"^resume")
        print("lesson 02 opened paused; Space ran it")
        xdo(args, "key", "Next")  # past the two bad files to lesson 03: the comparison
        o3 = app.expect(r"^lesson open id=03_side_by_side .* paused=(\d)")
        if o3.group(1) != "1":
            fail("lesson 03, opened while lesson 02 ran, did not open paused: %s" % o3.group(0))
        start = app.expect(r'^compare start panes=4 labels="transfer=pic \| transfer=apic \| transfer=flip \| '
                           r'transfer=polypic" hash0=([0-9a-f]+)')
        # Frame 0 as last shown: after the lesson's rotation preset (the scene's bodies start spun
        # already, so the state is the same; the check is that Home holds the edits made at frame 0).
        spun0 = app.expect(r"^compare preset rotation hash0=([0-9a-f]+)")
        fit = app.expect(r"^compare fit scale=(\S+)")
        if float(fit.group(1)) < 100.0:
            fail("the panes were fitted at %s pixels per metre (the block is a dot)" % fit.group(1))
        time.sleep(1.0)
        xdo(args, "key", "F12")  # the four panes waiting on their first frame
        shot = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        print("paused comparison screenshot: %s" % shot.group(1))
        # A fixed number of frames, one N (single frame) at a time, then Space twice (runs, pauses:
        # a frame or two more). Running for a fixed wall time instead took as many steps as the
        # machine managed, and past about 1000 the spinning block's corners reach the walls'
        # layer, where APIC loses angular momentum to the walls too.
        for _ in range(30):
            xdo(args, "key", "n")
            time.sleep(0.05)
        xdo(args, "key", "space")  # the lesson opened paused: Space runs it
        app.expect(r"^resume")
        xdo(args, "key", "space")
        pc = app.expect(r"^pause compare step=(\d+) angular=\[(\S+)\]")
        if not 100 <= int(pc.group(1)) <= 800:
            fail("30 single frames and a run took the comparison to step %s (expected about 300)" % pc.group(1))
        L = [float(v) for v in pc.group(2).split(",")]
        # PIC loses it, APIC and PolyPIC keep it, FLIP lies between (it loses some every substep).
        if not (abs(L[0]) < 0.8 * abs(l0) and min(abs(L[1]), abs(L[3])) > 0.97 * abs(l0)
                and abs(L[0]) < abs(L[2]) < abs(L[1])):
            fail("after %s steps the panes keep L=%s (PIC should lose it, APIC and PolyPIC keep it, FLIP between)" % (pc.group(1), L))
        print("compare ok: after %s steps L = %s" % (pc.group(1), L))
        xdo(args, "key", "Home")
        home = app.expect(r"^compare seek frame=0 hash0=([0-9a-f]+)")
        if home.group(1) != spun0.group(1):
            fail("Home gave hash %s, the comparison's first frame (spun) was %s" % (home.group(1), spun0.group(1)))
        xdo(args, "key", "Right")
        app.expect(r"^compare seek frame=1 ")
        xdo(args, "key", "space")
        app.expect(r"^resume")
        app.expect(r"^compare replay frame=2 ")
        print("rewind ok: Home gives the first frame's hash %s, Right frame 1, Space replays" % spun0.group(1))
        time.sleep(0.5)
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        w, h, bins = colour_bins(shot.group(1))
        if bins < 8:
            fail("comparison screenshot looks blank")
        print("comparison screenshot ok: %s" % shot.group(1))
        # The bad files: each reported once (the folder has been re-read since), located.
        app.drain(2.5)
        errors = [line for line in app.log if line.startswith("lesson error ")]
        want = {bad_json: bad_json + ":2:25: expected ',' or '}' in object",
                bad_set: bad_set + ":2:10: field 'set[0]': \"solver.transfer=bogus\": scene field 'solver.transfer': "}
        for path, text in want.items():
            hits = [line for line in errors if path in line]
            if len(hits) != 1 or text not in hits[0]:
                fail("%s: expected one located report (%r), the log has %s" % (path, text, hits))
        if len(errors) != 2:
            fail("lesson errors other than the two bad files: %s" % errors)
        print("bad lessons ok: reported once each, located, and skipped by Page Down")

    rc = drive(app, args, "lesson gui test", steps)
    if rc != 0:
        return rc
    with open(settings) as f:
        saved = dict(line.split("=", 1) for line in f if "=" in line)
    saved = {k.strip(): v.strip() for k, v in saved.items()}
    kept = {k: saved.get(k) for k in before}
    if kept != before:
        print("FAIL: settings.ini after quitting inside lesson 03 holds %s, the view before the lessons was %s"
              % (kept, before))
        return 1
    print("settings ok: the view from before the lessons was saved (%s), not the lessons'" % kept)
    return 0


if __name__ == "__main__":
    sys.exit(main())
