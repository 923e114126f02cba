"""Shared plumbing of the GUI tests: the sandbox under xvfb-run with its
verbose log in a queue, xdotool, the runner's dump, and a PNG reader.
Standard library only."""
import argparse
import csv
import os
import queue
import re
import shutil
import signal
import struct
import subprocess
import threading
import time
import zlib

DEADLINE = [time.monotonic() + 75.0]  # overall limit; a test sets DEADLINE[0]
X_ENV = {}  # DISPLAY and XAUTHORITY of the Xvfb server


def fail(msg):
    raise AssertionError(msg)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sandbox", required=True)
    ap.add_argument("--xvfb-run", dest="xvfb_run", default="xvfb-run")
    ap.add_argument("--xdotool", default="xdotool")
    ap.add_argument("--work", required=True)
    ap.add_argument("--images", default="", help="also keep the test's named screenshots here (docs/images)")
    return ap.parse_args()


def keep_image(args, path, name):
    """Copies a screenshot to --images as NAME.png when that folder is given (scripts/doc_images.sh)."""
    if args.images:
        os.makedirs(args.images, exist_ok=True)
        shutil.copyfile(path, os.path.join(args.images, name + ".png"))


def builtin_lessons():
    """The built-in lessons' ids (file stems, sorted) from assets/lessons, which becomes the
    window's lessons folder (PS_LESSONS_DIR, inherited by the App)."""
    src = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "lessons"))
    os.environ["PS_LESSONS_DIR"] = src
    return sorted(os.path.splitext(n)[0] for n in os.listdir(src) if n.endswith(".json"))


def pointer(args, wid):
    """move(x, y) of the pointer in the window and hold(key): a key held down 0.15 s (a tap
    can fall between two frames and be missed)."""
    def move(px, py):
        xdo(args, "mousemove", "--window", wid, int(px), int(py))

    def hold(key):
        xdo(args, "keydown", key)
        time.sleep(0.15)
        xdo(args, "keyup", key)
        time.sleep(0.1)

    return move, hold


def work_dirs(args, *names):
    """Fresh work folder with the given subfolders; returns their paths."""
    shutil.rmtree(args.work, ignore_errors=True)
    paths = [os.path.join(args.work, n) for n in names]
    for p in paths:
        os.makedirs(p)
    return paths


def dump_particles(args, scene, dump, minimum):
    """The runner's view of a scene's initial state: [(id, x, y)]."""
    subprocess.run([args.sandbox, "run", scene, "--steps", "0", "--dump-every", "1", "--quiet",
                    "--threads", "2", "--out", dump], check=True, timeout=60)
    with open(os.path.join(dump, "particles_00000.csv")) as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    header, rows = rows[0], rows[1:]
    col = {name: k for k, name in enumerate(header)}
    particles = [(int(r[col["id"]]), float(r[col["x"]]), float(r[col["y"]])) for r in rows]
    if len(particles) < minimum:
        fail("dump has only %d particles" % len(particles))
    return particles


def xenv():
    """Environment for X clients: the Xvfb display and its authority file."""
    return dict(os.environ, **X_ENV)


def xdo(args, *cmd):
    """Runs xdotool. On a loaded CI machine it once failed with status 1 on a plain key press
    (a fresh-clone CI run, 2026-11-26: gui_mixed's ctrl+q, the app still up), so it is retried
    twice, and a last failure reports xdotool's own message. A call that hangs (CI, 2026-11-28:
    gui_lesson's ctrl+q took over 10 s beside a 2-thread verify run) is retried the same way."""
    argv = [args.xdotool] + [str(c) for c in cmd]
    why = ""
    for attempt in range(3):
        try:
            r = subprocess.run(argv, env=xenv(), timeout=20, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except subprocess.TimeoutExpired:
            why = "no answer in 20 s"
            continue
        if r.returncode == 0:
            return
        why = "status %d: %s" % (r.returncode, r.stderr.decode(errors="replace").strip())
        time.sleep(0.3)
    raise RuntimeError("%s failed 3 times, last with %s" % (" ".join(argv), why))


class App:
    """The sandbox under xvfb-run; stdout lines go to a queue; ui rectangles are remembered."""

    def __init__(self, args, cfg, out, scene, sets=()):
        env = dict(os.environ, XDG_CONFIG_HOME=cfg)  # settings of this run only
        env.pop("WAYLAND_DISPLAY", None)
        extra = " ".join("--set '%s'" % s for s in sets)
        inner = ('echo "DISPLAY=$DISPLAY XAUTHORITY=${XAUTHORITY:-}"; exec "$0" gui ' + scene + ' --verbose --log-hashes --paused '
                 '--size 1280x720 --threads 2 --out "$1" ' + extra)
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
        end = min(time.monotonic() + timeout, DEADLINE[0])
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

    def mark(self):
        """A place in the log: `expect_since` also finds lines read after it."""
        return len(self.log)

    def expect_since(self, mark, pattern, timeout=15.0):
        """A line matching `pattern` read since `mark`, or the next one: for lines whose order
        among themselves the window system decides (a resize's framebuffer and window size
        events arrive in either order, and the panels follow the first)."""
        rx = re.compile(pattern)
        for line in self.log[mark:]:
            m = rx.search(line)
            if m:
                return m
        return self.expect(pattern, timeout)

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



def connect(app, args, ready_timeout=40):
    """Waits for the window, gives it the keyboard focus (there is no window
    manager under Xvfb) and returns its X window id."""
    d = app.expect(r"^DISPLAY=(\S+) XAUTHORITY=(\S*)")
    X_ENV["DISPLAY"] = d.group(1)
    if d.group(2):
        X_ENV["XAUTHORITY"] = d.group(2)
    app.expect(r"^ready ", timeout=ready_timeout)
    wid = subprocess.run([args.xdotool, "search", "--sync", "--name", "^Particle Sandbox$"],
                         env=xenv(), capture_output=True, text=True, timeout=15).stdout.split()
    if not wid:
        fail("no X window named 'Particle Sandbox'")
    xdo(args, "windowfocus", wid[0])
    return wid[0]


def latest_view_transform(app, settle=0.5):
    """view_transform from the last view line logged after `settle` seconds: a colour mode
    whose legend is larger moves the scene (the legends go beside it, never over it)."""
    app.drain(settle)
    lines = [line for line in app.log if line.startswith("view scale=")]
    if not lines:
        return view_transform(app)
    app.lines.put(lines[-1])  # read again by view_transform, as the next line
    return view_transform(app)


def view_transform(app):
    """(world -> window pixels, pixels per world unit), from the view line the app logs."""
    v = app.expect(r"^view scale=(\S+) cx=(\S+) cy=(\S+) sx=(\S+) sy=(\S+)")
    scale, cx, cy, sx, sy = (float(v.group(k)) for k in range(1, 6))

    def to_screen(x, y):
        return round(sx + (x - cx) * scale), round(sy - (y - cy) * scale)

    return to_screen, scale


def check_pick(app, args, wid, target, to_screen):
    """Clicks the dump particle `target` (id, x, y) with the pick tool and
    checks the window reports the same ID."""
    tx, ty = to_screen(target[1], target[2])
    xdo(args, "mousemove", "--window", wid, tx, ty)
    time.sleep(0.2)
    xdo(args, "key", "1")
    app.expect(r"^tool pick")
    xdo(args, "click", "1")
    m = app.expect(r"^pick id=(\d+)")
    if int(m.group(1)) != target[0]:
        fail("picked id %s, the dump's particle under the cursor is %d" % (m.group(1), target[0]))
    print("pick ok: id=%d at screen (%d, %d)" % (target[0], tx, ty))


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


def quit_cleanly(app, args, name):
    """Ctrl+Q: the app logs quit and exits 0; prints '<name> passed'."""
    xdo(args, "key", "ctrl+q")
    app.expect(r"^quit", timeout=10)
    app.proc.wait(timeout=10)
    if app.proc.returncode != 0:
        fail("the sandbox exited with status %d" % app.proc.returncode)
    print("%s passed" % name)


def report_failure(app, exc):
    """Prints the reason and the app's last 40 log lines; returns the exit status 1."""
    print("FAIL: %s" % exc)
    print("--- sandbox log ---")
    print("\n".join(app.log[-40:]))
    return 1


def colour_bins(path):
    """Distinct 4-bit-per-channel colours on a 4-pixel lattice of a PNG (a blank frame has few)."""
    w, h, ch, img = read_png(path)
    colours = set()
    for yy in range(0, h, 4):
        line = img[yy]
        for x in range(0, w, 4):
            colours.add((line[x * ch] >> 4, line[x * ch + 1] >> 4, line[x * ch + 2] >> 4))
    return w, h, len(colours)


def drive(app, args, name, steps):
    """Runs steps() against the started app, quits it cleanly; 0 on success,
    1 with the reason and the app's log on failure."""
    try:
        steps()
        quit_cleanly(app, args, name)
        return 0
    except (AssertionError, subprocess.SubprocessError, OSError) as exc:
        return report_failure(app, exc)
    finally:
        app.stop()
