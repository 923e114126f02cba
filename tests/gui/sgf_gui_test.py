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
  5. Save writes SGF<s0>-<s1>.csv and groups.json; Load reads them back.
Widget positions come from the "ui name=..." lines the app logs in verbose
mode. Standard library only. Exits 0 on success, 1 with a reason on failure.
"""
import argparse
import csv
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

DEADLINE = time.monotonic() + 60.0
SETS = ["solver.gravity=[0,0]", "bodies.0.velocity=[0,0]", "bond.enabled=false"]


def fail(msg):
    raise AssertionError(msg)


class App:
    """The sandbox under xvfb-run; stdout lines go to a queue; ui rectangles are remembered."""

    def __init__(self, args, cfg, out):
        env = dict(os.environ, XDG_CONFIG_HOME=cfg)
        env.pop("WAYLAND_DISPLAY", None)
        sets = " ".join("--set '%s'" % s for s in SETS)
        inner = ('echo "DISPLAY=$DISPLAY XAUTHORITY=${XAUTHORITY:-}"; exec "$0" gui dem_soft_body --verbose --paused '
                 '--size 1280x720 --threads 2 --out "$1" ' + sets)
        cmd = [args.xvfb_run, "-a", "-s", "-screen 0 1280x720x24", "sh", "-c", inner, args.sandbox, out]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=env, start_new_session=True)
        self.lines = queue.Queue()
        self.log = []
        self.ui = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _take(self, line):
        self.log.append(line)
        m = re.match(r"^ui name=(\S+) x=(-?\d+) y=(-?\d+) w=(\d+) h=(\d+) visible=(\d)", line)
        if m:
            self.ui[m.group(1)] = tuple(int(m.group(k)) for k in range(2, 7))

    def expect(self, pattern, timeout=15.0):
        """Next line matching `pattern` (regex), or fail on timeout / exit."""
        rx = re.compile(pattern)
        end = min(time.monotonic() + timeout, DEADLINE)
        while True:
            left = end - time.monotonic()
            if left <= 0:
                fail("timed out waiting for a line matching %r" % pattern)
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                fail("the sandbox exited while waiting for %r" % pattern)
            self._take(line)
            m = rx.search(line)
            if m:
                return m

    def drain(self, seconds):
        """Reads whatever arrives for `seconds` (keeps the ui rectangles current)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                fail("the sandbox exited")
            self._take(line)

    def widget(self, name, scroll, timeout=10.0):
        """Rectangle of a logged widget, scrolling its panel (scroll(+1/-1)) until it is wholly visible."""
        end = time.monotonic() + timeout
        self.drain(0.3)
        tries = 0
        def placed(r):
            # Wholly visible and clear of the window's top and bottom edges.
            return r[4] and (tries > 8 or (60 <= r[1] and r[1] + r[3] <= 690))

        while name not in self.ui or not placed(self.ui[name]):
            if time.monotonic() > end:
                fail("the widget %s was never shown" % name)
            if name in self.ui:
                # Low in the panel: scroll down; high: scroll up.
                scroll(1 if self.ui[name][1] > 360 else -1)
                tries += 1
            self.drain(0.25)
        self.drain(0.2)
        return self.ui[name][:4]

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


X_ENV = {}


def xdo(args, *cmd):
    env = dict(os.environ, **X_ENV)
    subprocess.run([args.xdotool] + [str(c) for c in cmd], env=env, check=True, timeout=10,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sandbox", required=True)
    ap.add_argument("--xvfb-run", dest="xvfb_run", default="xvfb-run")
    ap.add_argument("--xdotool", default="xdotool")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    cfg, out = (os.path.join(args.work, d) for d in ("config", "captures"))
    for d in (cfg, out):
        os.makedirs(d)

    app = App(args, cfg, out)
    try:
        d = app.expect(r"^DISPLAY=(\S+) XAUTHORITY=(\S*)")
        X_ENV["DISPLAY"] = d.group(1)
        if d.group(2):
            X_ENV["XAUTHORITY"] = d.group(2)
        app.expect(r"^ready ", timeout=40)
        wid = subprocess.run([args.xdotool, "search", "--sync", "--name", "^Particle Sandbox$"],
                             env=dict(os.environ, **X_ENV), capture_output=True, text=True, timeout=15).stdout.split()
        if not wid:
            fail("no X window named 'Particle Sandbox'")
        wid = wid[0]
        xdo(args, "windowfocus", wid)

        def move(px, py):
            xdo(args, "mousemove", "--window", wid, int(px), int(py))

        def hold(key):
            xdo(args, "keydown", key)
            time.sleep(0.15)
            xdo(args, "keyup", key)
            time.sleep(0.1)

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

        move(640, 200)
        xdo(args, "key", "F12")
        shot = app.expect(r"^screenshot path=(\S+)")
        print("screenshot: %s" % shot.group(1))
        xdo(args, "key", "ctrl+q")
        app.expect(r"^quit", timeout=10)
        app.proc.wait(timeout=10)
        if app.proc.returncode != 0:
            fail("the sandbox exited with status %d" % app.proc.returncode)
        print("sgf gui test passed")
        return 0
    except (AssertionError, subprocess.SubprocessError, OSError) as exc:
        print("FAIL: %s" % exc)
        print("--- sandbox log ---")
        print("\n".join(l for l in app.log[-40:]))
        return 1
    finally:
        app.stop()


if __name__ == "__main__":
    sys.exit(main())
