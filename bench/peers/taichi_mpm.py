#!/usr/bin/env python3
"""Times Taichi's own MPM examples (shipped inside the `taichi` wheel) on the
same machine as `sandbox bench`, at a chosen size, and prints particle-substeps
per second.

The example's source is read from the installed taichi package and rewritten
before it is imported:
  * its size constants are scaled by --quality K: particles x K^2, grid x K
    (so dx / K and inv_dx x K, which the examples derive from n_grid) and
    dt / K. mpm99 and mpm128 do this through their own `quality` variable;
    mpm88 has none, so its n_particles, n_grid and dt are scaled by hand the
    same way;
  * its `ti.init(...)` line asks for --arch (and --threads on the CPU);
  * its GUI loop is cut: everything from the `gui = ti.GUI(...)` line, or from
    `def main():` (mpm99), on. mpm88 and mpm128 open a window when imported,
    so they cannot be imported as shipped on a machine without a display.
The result is written to a temporary .py file and imported from that file
(Taichi reads a kernel's source from disk). Then the example's own
initializer runs (mpm99 `initialize`, mpm88 `init`, mpm128 `reset`, which also
gets mpm128's gravity [0, -1] that its GUI loop would set), and `substep()` is
timed after --warmup substeps, with ti.sync() around, best of --repeat.

usage: bench/peers/taichi_mpm.py [--example mpm99|mpm88|mpm128] [--quality K]
                                 [--arch cpu|cuda] [--threads K] [--steps N]
                                 [--warmup N] [--repeat R] [--keep FILE.py]
prints: taichi EXAMPLE arch=A quality=K particles=N grid=G ms/substep=X
        particle-substeps/s=Y (then threads, dt, steps, finite, version)
(bench/compare_taichi.sh parses `ms/substep=`). Exit status 1 when a particle
position is not finite after the timed substeps (the example blew up).
"""
import argparse
import importlib.util
import os
import re
import sys
import tempfile
import time

EXAMPLES = ("mpm99", "mpm88", "mpm128")
INITIALIZERS = {"mpm99": "initialize", "mpm88": "init", "mpm128": "reset"}


def sub_once(pattern, repl, text, what):
    """re.subn that must match exactly once (a changed example fails loudly)."""
    out, n = re.subn(pattern, repl, text, count=0, flags=re.M)
    if n != 1:
        raise SystemExit(f"taichi_mpm.py: expected one {what} in the example, found {n}")
    return out


def rewrite(src, example, quality, arch, threads):
    """The example's source, scaled by `quality`, on `arch`, without its GUI loop."""
    init = f"ti.init(arch=ti.{arch}"
    if arch == "cpu" and threads > 0:
        init += f", cpu_max_num_threads={threads}"
    init += ", log_level=ti.WARN)"
    src = sub_once(r"^ti\.init\(.*\)[^\n]*$", init, src, "ti.init(...) line")
    if example in ("mpm99", "mpm128"):
        # quality scales n_particles (x K^2), n_grid (x K), dx, inv_dx and dt (/ K).
        src = sub_once(r"^quality = 1\b", f"quality = {quality}", src, "`quality = 1` line")
    else:
        # mpm88 has no quality variable: scale its constants by hand, the same way.
        # dx = 1 / n_grid and p_vol = (dx * 0.5) ** 2 follow from n_grid.
        src = sub_once(r"^n_particles = 8192$", f"n_particles = 8192 * {quality}**2", src, "`n_particles = 8192`")
        src = sub_once(r"^n_grid = 128$", f"n_grid = 128 * {quality}", src, "`n_grid = 128`")
        src = sub_once(r"^dt = 2e-4$", f"dt = 2e-4 / {quality}", src, "`dt = 2e-4`")
    # Cut the GUI loop: from the first top-level `gui = ti.GUI(` or `def main():` on.
    m = re.search(r"^(gui = ti\.GUI\(|def main\(\):)", src, flags=re.M)
    if not m:
        raise SystemExit("taichi_mpm.py: no `gui = ti.GUI(` or `def main():` line in the example")
    src = src[: m.start()]
    # mpm128 prints a key hint for its window before the loop.
    src = re.sub(r"^print\(\"\[Hint\].*$", "", src, flags=re.M)
    if "GUI" in src:
        raise SystemExit("taichi_mpm.py: the example still uses the GUI after the cut")
    return src


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--example", default="mpm99", choices=EXAMPLES)
    ap.add_argument("--quality", type=int, default=1, help="K: particles x K^2, grid x K, dt / K")
    ap.add_argument("--arch", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: all)")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", default="", help="also write the rewritten example to this file")
    a = ap.parse_args()
    if a.quality < 1 or a.steps < 1 or a.repeat < 1 or a.warmup < 0:
        ap.error("--quality, --steps and --repeat must be >= 1, --warmup >= 0")

    import taichi as ti

    pkg = os.path.dirname(importlib.util.find_spec("taichi").origin)
    src_path = os.path.join(pkg, "examples", "simulation", a.example + ".py")
    with open(src_path, encoding="utf-8") as f:
        src = rewrite(f.read(), a.example, a.quality, a.arch, a.threads)
    if a.keep:
        with open(a.keep, "w", encoding="utf-8") as f:
            f.write(src)
    name = f"taichi_peer_{a.example}_q{a.quality}"
    with tempfile.TemporaryDirectory(prefix="taichi_peer_") as tmp:
        path = os.path.join(tmp, name + ".py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(src)
        mod = load(path, name)  # runs ti.init and allocates the fields
        getattr(mod, INITIALIZERS[a.example])()
        if a.example == "mpm128":
            mod.gravity[None] = [0, -1]  # what mpm128 sets after reset(), before its loop
        n = mod.n_particles
        for _ in range(a.warmup):
            mod.substep()
        ti.sync()
        best = float("inf")
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            for _ in range(a.steps):
                mod.substep()
            ti.sync()
            best = min(best, time.perf_counter() - t0)
        import numpy as np

        finite = bool(np.isfinite(mod.x.to_numpy()).all())
    version = ".".join(str(v) for v in ti.__version__)
    print(f"taichi {a.example} arch={a.arch} quality={a.quality} particles={n} grid={mod.n_grid} "
          f"ms/substep={1e3 * best / a.steps:.4f} particle-substeps/s={n * a.steps / best:.4g} "
          f"threads={a.threads or 'all'} dt={mod.dt:.4g} steps={a.steps} warmup={a.warmup} "
          f"repeat={a.repeat} finite={'yes' if finite else 'NO'} version={version}", flush=True)
    if not finite:
        print(f"taichi_mpm.py: {a.example} at quality {a.quality}: a particle position is not finite "
              f"after {a.warmup + a.repeat * a.steps} substeps (the example blew up)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
