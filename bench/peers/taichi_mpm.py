#!/usr/bin/env python3
"""Times Taichi's own MPM examples (shipped inside the `taichi` wheel) on the
same machine as `sandbox bench`, and prints particle-substeps per second.

The example module is imported unchanged; only ti.init is redirected to the
requested arch (cpu or cuda) and thread count before the import.

usage: bench/peers/taichi_mpm.py [--example mpm99|mpm128] [--arch cpu|cuda]
                                 [--threads K] [--steps N] [--warmup N] [--repeat R]
"""
import argparse
import importlib
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", default="mpm99", choices=["mpm99", "mpm128", "mpm88"])
    ap.add_argument("--arch", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: all)")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()

    import taichi as ti

    real_init = ti.init

    def init(*args, **kwargs):
        kwargs["arch"] = ti.cpu if a.arch == "cpu" else ti.cuda
        if a.threads > 0 and a.arch == "cpu":
            kwargs["cpu_max_num_threads"] = a.threads
        kwargs.setdefault("log_level", ti.WARN)
        return real_init(**kwargs)

    ti.init = init
    mod = importlib.import_module(f"taichi.examples.simulation.{a.example}")
    n = mod.n_particles if hasattr(mod, "n_particles") else mod.x.shape[0]
    if hasattr(mod, "initialize"):
        mod.initialize()
    elif hasattr(mod, "init"):
        mod.init()
    elif hasattr(mod, "reset"):
        mod.reset()
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
    print(f"taichi {ti.__version__} {a.example} arch={a.arch} threads={a.threads or 'all'} particles={n} "
          f"grid={mod.n_grid} steps={a.steps} ms/substep={1e3 * best / a.steps:.4f} "
          f"particle-substeps/s={n * a.steps / best:.4g}")


if __name__ == "__main__":
    sys.exit(main())
