#!/usr/bin/env python3
"""GUI test of the Lesson panel's first page under Xvfb at 1280x720, with xdotool.

In front of a class the teacher should not have to scroll to show what to
watch: every lesson leads with one or two sentences and its "look for" lines,
and the rest of its text is behind a "More" header, collapsed when the lesson
opens. Starts `sandbox gui --lesson 01 --verbose --paused --size 1280x720` and
checks against the app's one-line action log:
  1. each built-in lesson, opened in turn with Page Down (01 to 08), logs what
     its first page shows (`lesson page id=... visible=1`): the lead's sentences
     (at most two), the look-for lines' bottom above the column's bottom edge
     with the column scrolled to the top, and the paragraphs behind More;
  2. a click on More opens it (`lesson more open=1`), and the next lesson opens
     with it collapsed again;
  3. the same first page fits in projector mode (F2: 35 % larger text).
The checks are on the logged layout, not on how many frames run meanwhile.
Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, builtin_lessons, colour_bins, connect, drive, fail, parse_args, work_dirs, xdo  # noqa: E402

PAGE = (r"^lesson page id=(\S+) lead_sentences=(\d+) look_for=(\d+) more=(\d+) look_for_bottom=(\S+) "
        r"panel_bottom=(\S+) scroll=(\S+) visible=(\d)")


def check_page(app, want_id, first=False, timeout=30):
    # The first lesson opens with the window, its line logged before "ready" (already read).
    early = [re.search(PAGE, line) for line in app.log if first and line.startswith("lesson page id=%s " % want_id)]
    m = early[0] if early else app.expect(PAGE, timeout=timeout)
    lid, sentences, look, more, bottom, panel, scroll, visible = m.groups()
    if lid != want_id:
        fail("expected the first page of %s, the log has %s" % (want_id, m.group(0)))
    if not (1 <= int(sentences) <= 2):
        fail("%s leads with %s sentences" % (lid, sentences))
    if int(look) < 1 or int(more) < 1:
        fail("%s: no look-for line or nothing behind More: %s" % (lid, m.group(0)))
    if visible != "1" or float(bottom) > float(panel) or float(scroll) != 0.0:
        fail("%s: the look-for lines end at y=%s, below the column's bottom %s (scroll %s): a class would not see them"
             % (lid, bottom, panel, scroll))
    return m


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")
    ids = builtin_lessons()
    guilib.DEADLINE[0] = time.monotonic() + 150.0
    app = App(args, cfg, out, "--lesson 01")

    def steps():
        wid = connect(app, args, ready_timeout=20)
        check_page(app, ids[0], first=True)
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+) width=(\d+) height=(\d+)")
        if colour_bins(shot.group(1))[2] < 8:
            fail("screenshot looks blank")
        print("lesson %s: first page ok, screenshot %s" % (ids[0], shot.group(1)))
        # More, collapsed: a click opens it.
        more = app.widget("lesson_more", lambda d: None)
        xdo(args, "mousemove", "--window", wid, more[0] + 20, more[1] + more[3] // 2)
        time.sleep(0.2)
        xdo(args, "click", "1")
        app.expect(r"^lesson more open=1 id=%s" % ids[0])
        print("More opens on a click")
        for lid in ids[1:]:
            xdo(args, "key", "Next")  # Page Down
            app.expect(r"^lesson open id=%s " % lid, timeout=30)
            m = check_page(app, lid)
            print("lesson %s: %s" % (lid, m.group(0)))
        # More was collapsed again when each lesson opened: no `lesson more open=1` after the click.
        opened = [line for line in app.log if line.startswith("lesson more open=1")]
        if len(opened) != 1:
            fail("More was open in a lesson that had just opened: %s" % opened)
        # Projector mode: larger text, narrower panels; the first page still holds the look-for lines.
        xdo(args, "key", "F2")
        app.expect(r"^ui scale=\S+ user=\S+ projector=1")
        def scroll(d):  # the wheel over the left column
            xdo(args, "mousemove", "--window", wid, 120, 400)
            xdo(args, "click", "5" if d > 0 else "4")

        restart = app.widget("lesson_restart", scroll)  # below the first page: scrolled to
        xdo(args, "mousemove", "--window", wid, restart[0] + restart[2] // 2, restart[1] + restart[3] // 2)
        time.sleep(0.2)
        xdo(args, "click", "1")  # the last lesson again, in projector mode: it opens at the top
        app.expect(r"^lesson open id=%s " % ids[-1], timeout=30)
        m = check_page(app, ids[-1])
        print("projector, lesson %s: %s" % (ids[-1], m.group(0)))
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+)")
        print("projector screenshot of %s: %s" % (ids[-1], shot.group(1)))
        for lid in reversed(ids[:-1]):
            xdo(args, "key", "Prior")  # Page Up
            app.expect(r"^lesson open id=%s " % lid, timeout=30)
            m = check_page(app, lid)
            print("projector, lesson %s: %s" % (lid, m.group(0)))
        xdo(args, "key", "F12")  # lesson 01 in projector mode
        shot = app.expect(r"^screenshot path=(\S+)")
        print("projector screenshot of %s: %s" % (ids[0], shot.group(1)))

    rc = drive(app, args, "lesson page gui test", steps)
    return rc


if __name__ == "__main__":
    sys.exit(main())
