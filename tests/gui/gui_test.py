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
import argparse
import csv
import os
import queue
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import zlib

DEADLINE = time.monotonic() + 75.0


def fail(msg):
    raise AssertionError(msg)


class App:
    """The sandbox under xvfb-run; stdout lines go to a queue."""

    def __init__(self, args, cfg, out):
        env = dict(os.environ, XDG_CONFIG_HOME=cfg)
        env.pop("WAYLAND_DISPLAY", None)
        inner = ('echo "DISPLAY=$DISPLAY XAUTHORITY=${XAUTHORITY:-}"; exec "$0" gui pic_vs_apic --verbose --paused '
                 '--size 1280x720 --threads 2 --out "$1"')
        cmd = [args.xvfb_run, "-a", "-s", "-screen 0 1280x720x24", "sh", "-c", inner, args.sandbox, out]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=env, start_new_session=True)
        self.lines = queue.Queue()
        self.log = []
        threading.Thread(target=self._read, daemon=True).start()
        self.display = None

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

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
            self.log.append(line)
            m = rx.search(line)
            if m:
                return m

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


def xenv():
    """Environment for X clients: the Xvfb display and its authority file."""
    return dict(os.environ, **X_ENV)


def xdo(args, display, *cmd):
    env = xenv()
    subprocess.run([args.xdotool] + [str(c) for c in cmd], env=env, check=True, timeout=10,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def read_png(path):
    """Decodes an 8-bit RGB/RGBA non-interlaced PNG: (width, height, channels, rows)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    pos, idat, w = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                fail("unexpected PNG format depth=%d type=%d" % (depth, ctype))
            ch = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * ch
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        ft = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - ch] if x >= ch else 0
            b = prev[x]
            c = prev[x - ch] if x >= ch else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, ch, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sandbox", required=True)
    ap.add_argument("--xvfb-run", dest="xvfb_run", default="xvfb-run")
    ap.add_argument("--xdotool", default="xdotool")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    cfg, out, dump = (os.path.join(args.work, d) for d in ("config", "captures", "dump"))
    for d in (cfg, out, dump):
        os.makedirs(d)

    # The runner's view of the initial state: IDs and positions.
    subprocess.run([args.sandbox, "run", "pic_vs_apic", "--steps", "0", "--dump-every", "1", "--quiet",
                    "--threads", "2", "--out", dump], check=True, timeout=60)
    with open(os.path.join(dump, "particles_00000.csv")) as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    header, rows = rows[0], rows[1:]
    col = {name: k for k, name in enumerate(header)}
    particles = [(int(r[col["id"]]), float(r[col["x"]]), float(r[col["y"]])) for r in rows]
    if len(particles) < 1000:
        fail("dump has only %d particles" % len(particles))

    app = App(args, cfg, out)
    try:
        d = app.expect(r"^DISPLAY=(\S+) XAUTHORITY=(\S*)")
        display = d.group(1)
        X_ENV["DISPLAY"] = display
        if d.group(2):
            X_ENV["XAUTHORITY"] = d.group(2)
        app.expect(r"^ready ", timeout=40)
        v = app.expect(r"^view scale=(\S+) cx=(\S+) cy=(\S+) sx=(\S+) sy=(\S+)")
        scale, cx, cy, sx, sy = (float(v.group(k)) for k in range(1, 6))

        def to_screen(x, y):
            return round(sx + (x - cx) * scale), round(sy - (y - cy) * scale)

        # Window origin on the X screen (no window manager: normally 0, 0).
        wid = subprocess.run([args.xdotool, "search", "--sync", "--name", "^Particle Sandbox$"],
                             env=xenv(), capture_output=True, text=True,
                             timeout=15).stdout.split()
        if not wid:
            fail("no X window named 'Particle Sandbox'")
        wid = wid[0]
        # No window manager under Xvfb: give the window the keyboard focus ourselves.
        xdo(args, display, "windowfocus", wid)

        def move(px, py):
            xdo(args, display, "mousemove", "--window", wid, px, py)

        # 1. Pick: the ID under the cursor is the dump's ID.
        target = particles[len(particles) // 3 + 17]
        tx, ty = to_screen(target[1], target[2])
        move(tx, ty)
        time.sleep(0.2)
        xdo(args, display, "key", "1")
        app.expect(r"^tool pick")
        xdo(args, display, "click", "1")
        m = app.expect(r"^pick id=(\d+)")
        if int(m.group(1)) != target[0]:
            fail("picked id %s, the dump's particle under the cursor is %d" % (m.group(1), target[0]))
        print("pick ok: id=%d at screen (%d, %d)" % (target[0], tx, ty))

        # 2. Grab near the block's centre (the initial rotation barely moves it) and drag right.
        xdo(args, display, "key", "2")
        app.expect(r"^tool grab")
        xdo(args, display, "key", "space")
        app.expect(r"^resume")
        gx, gy = to_screen(0.5, 0.5)
        move(gx, gy)
        time.sleep(0.2)
        xdo(args, display, "mousedown", "1")
        b = app.expect(r"^grab begin n=(\d+) target=\(([^,]+),([^)]+)\) centroid=\(([^,]+),([^)]+)\)")
        drag_px = 70
        for k in range(1, 8):
            move(gx + drag_px * k // 7, gy)
            time.sleep(0.08)
        time.sleep(1.5)
        xdo(args, display, "mouseup", "1")
        e = app.expect(r"^grab end n=(\d+) target=\(([^,]+),([^)]+)\) centroid=\(([^,]+),([^)]+)\) moved=(\S+)")
        n = int(b.group(1))
        dx = float(e.group(4)) - float(b.group(4))
        want = drag_px / scale
        if n < 10:
            fail("grab took only %d particles" % n)
        if dx < 0.3 * want:
            fail("grabbed particles moved %.4f in x, the cursor %.4f" % (dx, want))
        print("grab ok: %d particles moved %.4f (cursor %.4f)" % (n, dx, want))

        # 3. Preset t: translation replaces the rotation field (momentum changes).
        xdo(args, display, "key", "space")
        app.expect(r"^pause")
        xdo(args, display, "key", "t")
        p = app.expect(r"^preset translation .*momentum_before=\(([^,]+),([^)]+)\) momentum_after=\(([^,]+),([^)]+)\)")
        before = (float(p.group(1)), float(p.group(2)))
        after = (float(p.group(3)), float(p.group(4)))
        if abs(after[0] - before[0]) < 1e-3 or after[0] <= 0:
            fail("preset t did not change the velocity field: momentum %s -> %s" % (before, after))
        print("preset ok: momentum %s -> %s" % (before, after))

        # 4. Screenshot: a PNG with real content.
        xdo(args, display, "key", "F12")
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

        xdo(args, display, "key", "ctrl+q")
        app.expect(r"^quit", timeout=10)
        app.proc.wait(timeout=10)
        if app.proc.returncode != 0:
            fail("the sandbox exited with status %d" % app.proc.returncode)
        if not os.path.exists(os.path.join(cfg, "particle-sandbox", "settings.ini")):
            fail("settings were not saved under XDG_CONFIG_HOME")
        print("gui test passed")
        return 0
    except (AssertionError, subprocess.SubprocessError, OSError) as exc:
        print("FAIL: %s" % exc)
        print("--- sandbox log ---")
        print("\n".join(app.log[-40:]))
        return 1
    finally:
        app.stop()


if __name__ == "__main__":
    sys.exit(main())
