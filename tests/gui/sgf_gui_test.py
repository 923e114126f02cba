#!/usr/bin/env python3
"""GUI test of the SGF editor in the sandbox window, under Xvfb with xdotool.

Opens a small DEM scene (the soft disk, with gravity, bonds and its initial
velocity switched off, so nothing moves unless a force acts) and, against the
app's one-line action log (--verbose):
  1. select tool (key 6) + a box drag selects particles (the IDs are listed);
  2. "New from selection" makes a group of exactly those IDs;
  3. "+ Add entry" and typing a force (-0.0005, 0, 0) into it; the edit is
     applied to the running simulation at once (no reset);
  4. running, then pausing: the group's mean velocity points along -x while
     the other particles stay at rest (the app logs both on pause);
  5. Save writes SGF<s0>-<s1>.csv and groups.json; Load reads them back;
  6. Load of a damaged copy while running: the error names the file, nothing
     is loaded, the simulation keeps stepping; a screenshot shows the message.
Widget positions come from the "ui name=..." lines the app logs in verbose
mode. Standard library only. Exits 0 on success, 1 with a reason on failure.
"""

import csv
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guilib  # noqa: E402
from guilib import App, connect, pointer, fail, parse_args, quit_cleanly, report_failure, work_dirs, xdo  # noqa: E402

guilib.DEADLINE[0] = time.monotonic() + 60.0
SETS = ["solver.gravity=[0,0]", "bodies.0.velocity=[0,0]", "bond.enabled=false"]


def main():
    args = parse_args()
    cfg, out = work_dirs(args, "config", "captures")

    app = App(args, cfg, out, "dem_soft_body", SETS)
    try:
        wid = connect(app, args)
        move, hold = pointer(args, wid)

        def scroll(direction):
            # Mouse wheel over the right column (the SGF forces tab).
            move(1110, 130)
            xdo(args, "click", "5" if direction > 0 else "4")

        def click(name, dx=None):
            x, y, w, h = app.widget(name, scroll)
            move(x + (w // 2 if dx is None else dx), y + h // 2)
            time.sleep(0.15)
            xdo(args, "click", "1")

        # 1. Select tool: the timeline appears, the view refits; box-select the disk's left part.
        move(640, 300)
        xdo(args, "key", "6")
        app.expect(r"^tool select")
        v = app.expect(r"^view scale=(\S+) cx=(\S+) cy=(\S+) sx=(\S+) sy=(\S+)")
        scale, cx, cy, sx, sy = (float(v.group(k)) for k in range(1, 6))

        def to_screen(x, y):
            return round(sx + (x - cx) * scale), round(sy - (y - cy) * scale)

        # The disk: centre (0.5, 0.45), radius 0.12. Box x in [0.36, 0.42], y in [0.39, 0.51].
        x0, y0 = to_screen(0.36, 0.51)
        x1, y1 = to_screen(0.42, 0.39)
        move(x0, y0)
        time.sleep(0.2)
        xdo(args, "mousedown", "1")
        for k in range(1, 7):
            move(x0 + (x1 - x0) * k // 6, y0 + (y1 - y0) * k // 6)
            time.sleep(0.06)
        time.sleep(0.2)
        xdo(args, "mouseup", "1")
        s = app.expect(r"^select n=(\d+) ids=(.*) kind=box op=replace")
        n_sel = int(s.group(1))
        if n_sel < 10:
            fail("the box selected only %d particles" % n_sel)
        print("select ok: %d particles, ids %s" % (n_sel, s.group(2)[:80]))

        # 2. A group from the selection.
        click("sgf_group_new")
        g = app.expect(r'^sgf group add name="([^"]+)" n=(\d+)')
        if int(g.group(2)) != n_sel:
            fail("the group has %s particles, the selection %d" % (g.group(2), n_sel))
        name = g.group(1)

        # 3. An entry, then its force typed in: fx = -0.0005 N per particle.
        click("sgf_entry_add")
        e = app.expect(r"^sgf entry s0=(\d+) s1=(\d+) f=\(0,0,0\) .*action=add")
        s0, s1 = int(e.group(1)), int(e.group(2))
        app.expect(r"^sgf apply files=1 ")
        click("sgf_entry0_force", dx=12)
        time.sleep(0.2)
        # ImGui 1.86 polls key state once per frame: hold keys across frames.
        hold("ctrl+a")
        xdo(args, "type", "--delay", "60", "--", "-0.0005")
        hold("Return")
        # The set is re-applied while typing; the edit line comes when the field is left.
        app.expect(r"^sgf entry s0=%d s1=%d f=\(-0\.0005,0,0\) .*action=edit" % (s0, s1))
        print("group ok: %s, %d particles, steps %d-%d, force (-0.0005, 0, 0)" % (name, n_sel, s0, s1))

        # 4. Run for a while, pause: the group moves along -x, the rest stays at rest.
        move(640, 200)
        time.sleep(0.1)
        xdo(args, "key", "space")
        app.expect(r"^resume")
        time.sleep(2.0)
        xdo(args, "key", "space")
        app.expect(r"^pause")
        m = app.expect(r'^sgf motion group="%s" n=(\d+) v=\(([^,]+),([^)]+)\) others n=(\d+) v=\(([^,]+),([^)]+)\) '
                       r'step=(\d+)' % re.escape(name))
        n_in, vx, vy = int(m.group(1)), float(m.group(2)), float(m.group(3))
        n_out, ox, oy, step = int(m.group(4)), float(m.group(5)), float(m.group(6)), int(m.group(7))
        if n_in != n_sel or n_out < 100:
            fail("motion line counts %d / %d particles" % (n_in, n_out))
        if step < 50:
            fail("the simulation ran only %d steps" % step)
        if not (vx < 0 and abs(vx) > 10 * abs(vy)):
            fail("the group's velocity (%g, %g) does not point along the force (-x)" % (vx, vy))
        if (ox * ox + oy * oy) ** 0.5 > 0.02 * abs(vx):
            fail("the other particles moved too: v = (%g, %g), group (%g, %g)" % (ox, oy, vx, vy))
        print("motion ok after %d steps: group v = (%.4g, %.4g), others v = (%.3g, %.3g)" % (step, vx, vy, ox, oy))

        # 5. Save and load back.
        click("sgf_save")
        sv = app.expect(r"^sgf save dir=(\S+) groups=(\d+) files=(\d+)")
        folder = sv.group(1)
        if (int(sv.group(2)), int(sv.group(3))) != (1, 1):
            fail("saved %s groups, %s files" % (sv.group(2), sv.group(3)))
        csv_path = os.path.join(folder, "SGF%d-%d.csv" % (s0, s1))
        index_path = os.path.join(folder, "groups.json")
        for p in (csv_path, index_path):
            if not os.path.isfile(p):
                fail("save did not write %s" % p)
        with open(csv_path) as f:
            rows = list(csv.reader(f))
        if rows[0] != ["ID", "FX", "FY", "FZ"] or len(rows) != n_sel + 1 or rows[1][1:] != ["-0.0005", "0", "0"]:
            fail("unexpected %s: %s ..." % (csv_path, rows[:2]))
        with open(index_path) as f:
            index = json.load(f)
        if [gr["name"] for gr in index["groups"]] != [name] or len(index["groups"][0]["ids"]) != n_sel:
            fail("unexpected groups.json: %s" % str(index)[:200])
        click("sgf_load")
        ld = app.expect(r"^sgf load dir=(\S+) groups=(\d+) entries=(\d+) problems=(\d+)")
        if (ld.group(1), int(ld.group(2)), int(ld.group(3)), int(ld.group(4))) != (folder, 1, 1, 0):
            fail("load read back %s" % ld.group(0))
        print("save/load ok: %s (%d rows), groups.json" % (csv_path, n_sel))

        # 6. Load a damaged copy while the scene runs: the error names the file and
        #    line, nothing is loaded, and the simulation keeps running with its current set.
        with open(csv_path, "a") as f:
            f.write("%d,oops,0,0\n" % (n_sel + 1000))
        move(640, 200)
        xdo(args, "key", "space")
        app.expect(r"^resume")
        click("sgf_load")
        bad = app.expect(r"^sgf load error (.*)")
        if os.path.basename(csv_path) + ":" not in bad.group(1) or "not loaded" not in bad.group(1):
            fail("the failed load does not name the file or say that nothing was loaded: %s" % bad.group(1))
        time.sleep(1.0)
        move(640, 200)
        xdo(args, "key", "space")
        app.expect(r"^pause")
        m2 = app.expect(r'^sgf motion group="%s" n=(\d+) v=\(([^,]+),([^)]+)\) others n=(\d+) v=\(([^,]+),([^)]+)\) '
                        r'step=(\d+)' % re.escape(name))
        if int(m2.group(7)) <= step:
            fail("the simulation did not keep running after the failed load (step %s)" % m2.group(7))
        print("damaged load ok: %s; still running at step %s" % (bad.group(1)[:100], m2.group(7)))

        move(640, 200)
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+)")
        print("screenshot: %s" % shot.group(1))
        quit_cleanly(app, args, "sgf gui test")
        return 0
    except (AssertionError, subprocess.SubprocessError, OSError) as exc:
        return report_failure(app, exc)
    finally:
        app.stop()


if __name__ == "__main__":
    sys.exit(main())
