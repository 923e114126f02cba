// Particle Sandbox command line: a labelled linear script per command.
//   sandbox                 window on the default scene (headless run without a display)
//   sandbox gui [SCENE]     window
//   sandbox run SCENE ...   headless run with dumps, images and a summary
//   sandbox compare SCENE --vary path=a,b ...   2 to 4 settings side by side
//   sandbox bench ...       particle-substeps per second of the built-in scenes
//   sandbox info            backends and devices
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "app/cli.h"
#include "app/compare_cmd.h"
#include "app/frame_image.h"
#include "app/sgf_flag.h"
#include "app/verify_cmd.h"
#include "render/cpu/dem_view.h"
#include "render/cpu/heat_view.h"
#include "render/cpu/lesson.h"
#include "render/cpu/raster.h"
#include "sim/core/atomic_write.h"
#include "sim/core/progress.h"
#include "sim/cuda/cuda_info.h"
#include "sim/io/dump.h"
#include "sim/scene/coupled.h"
#include "sim/scene/rigid_scene.h"
#include "sim/scene/run_report.h"
#include "sim/scene/simulation.h"
#include "sim/selfcheck/verdict.h"
#include "sim/specimen/specimen.h"
#if defined(PS_HAVE_WINDOW)
#include "render/window_app.h"
#endif

namespace fs = std::filesystem;
using namespace ps;

namespace {

// [SECTION] Help -------------------------------------------------------------------

const char* kUsage =
    "Particle Sandbox: hybrid particle methods (MLS-MPM, DEM), live.\n"
    "\n"
    "usage:\n"
    "  sandbox [SCENE]            open the window (headless run when there is no display)\n"
    "  sandbox gui [SCENE | --lesson NAME] [--backend B] [--threads K] [--set key=value]... [--verbose [--log-hashes]]\n"
    "                      [--paused] [--size WxH] [--screenshot FILE.png]\n"
    "                      [--screenshot-after N] [--quit-after N] [--seconds S] [--compare \"path=a,b,...\"]\n"
    "                      [--refine K] [--interop on|off] [--vsync on|off] [--gl glx|egl]\n"
    "                      [--soak SECONDS [--soak-log FILE.csv] [--soak-plan lecture|classroom]]   unattended soak (scripts/soak.sh)\n"
    "  sandbox run SCENE [--steps N | --frames N] [--backend cpu|cuda|auto] [--threads K]\n"
    "                    [--set key=value]... [--refine K] [--out DIR] [--dump-every K]\n"
    "                    [--format csv|ply|vtk|p4] [--images K] [--color material|temperature|melt]\n"
    "                    [--sgf DIR] [--quiet]\n"
    "  sandbox compare SCENE --vary path=a,b[,c,d] [--vary path=a,b]... [--set key=value]...\n"
    "                    [--frames N | --steps N] [--out DIR] [--images K] [--video] [--fps F]\n"
    "                    [--sgf DIR] [--backend cpu|cuda|auto] [--threads K] [--quiet]\n"
    "  sandbox bench [--backend all|cpu|cuda|auto] [--threads K] [--scenes a,b,...]\n"
    "                [--sizes 1,2,4] [--steps N] [--warmup N] [--phases] [--csv FILE] [--set key=value]...\n"
    "  sandbox specimen IMAGE [--radius-px R] [--test winding|nearest|nearest_oriented]\n"
    "                  [--mask dark|not_background] [--threshold T] [--tolerance T] [--invert]\n"
    "                  [--belt T] [--out DIR]\n"
    "  sandbox verify [--quick] [--out DIR] [--threads K] [--only ID,...] [--list] [--backend cpu|cuda]\n"
    "  sandbox info [--self-check]\n"
    "\n"
    "SCENE is a scene file or a built-in name (see `sandbox info`).\n"
    "--lesson NAME opens a guided lesson (a file, a built-in id such as 01_pic_loses_rotation, or a\n"
    "  unique prefix such as 01; `sandbox info` lists them): its scene, its view and its text.\n"
    "--set overrides any scene setting by its path, e.g. --set solver.transfer=pic,\n"
    "  --set solver.flip_blend=0.95, --set materials.water.bulk_modulus=800.\n"
    "--refine K runs the scene refined K times as `bench --sizes K` does (MPM grid x K, body\n"
    "  spacing and dt / K; DEM radius / K): particles about x K^2, K times the substeps per second.\n"
    "compare builds one pane per combination of the --vary values (2 to 4 panes) from the same\n"
    "  scene, steps them in lockstep (the first pane's clock) and writes DIR/frame_NNNNN.png (panes\n"
    "  side by side, labelled), curves.csv (frame, time, pane, kinetic energy, momentum, angular\n"
    "  momentum per pane), curves.svg and with --video compare.mp4 (when ffmpeg is on PATH);\n"
    "  default DIR out/compare_SCENE, a picture every frame (--images K: every K frames).\n"
    "--dump-every K writes the particles every K frames (every K steps with --steps);\n"
    "specimen fills a silhouette with particles and writes particles.csv (ID, x, y in pixels),\n"
    "  colors.csv (ID, R, G, B), belt.txt (IDs whose pixel is brighter than T in every channel)\n"
    "  and inside_tests.png (red: only the nearest-contour test keeps a point; blue: only winding).\n"
    "bench runs each scene at each size on each backend (--backend all, the default: every\n"
    "  backend this machine has); --phases adds where an MPM substep's time goes; --csv FILE also\n"
    "  writes the table as CSV (scene, kind, backend, size, particles, steps, ms/step, rate, hash). A\n"
    "  coupled scene against the same matter without its bodies: run it again with --set rigid=null.\n"
    "gui --refine K opens the scene refined as run --refine does; --interop off draws the CUDA\n"
    "  backend's particles from a host copy (on: straight from the device); --vsync on|off overrides\n"
    "  the saved setting; --seconds S closes the window after S seconds (with --screenshot and no\n"
    "  --screenshot-after, the last frame is saved); --gl egl renders with EGL on a GPU that has no\n"
    "  display of its own (a headless server with Xvfb or VNC) and copies each frame into the window.\n"
    "verify runs the verification cases (each model against a cited reference) and writes\n"
    "  DIR/report.html and DIR/summary.md (default out/verify/); --quick runs the ctest subset;\n"
    "  --only runs the cases named (an id ending in * names every case it begins, e.g. scene.*);\n"
    "  exit status 1 when a must-pass case misses. --backend cpu (the default) runs them on the\n"
    "  reference backend; --backend cuda runs every case's worlds (MPM, DEM, heat solves, the\n"
    "  matter beside rigid bodies) on the device with the same references and tolerances, and\n"
    "  each case says where it ran (\"ran on: cuda (DEVICE)\", or \"ran on: cpu\" and why for a\n"
    "  case with nothing to put on a device); a device world that fails mid-case goes on on the CPU,\n"
    "  is reported, and makes the exit status 1. Without a device --backend cuda exits 2 and\n"
    "  runs nothing.\n"
    "--backend auto (the default) uses CUDA only on a device that passed the CUDA self-check (each\n"
    "  material and transfer, and DEM, against the CPU for a few hundred steps) with this build; the\n"
    "  check runs the first time auto meets a device and build, and its verdict is kept in\n"
    "  ~/.config/particle-sandbox/cuda-selfcheck.txt. A failed check, or a CUDA error while running\n"
    "  (the run then goes on on the CPU from its last state copied to the host), prints why.\n"
    "  --backend cuda uses CUDA without the check; `sandbox info` shows each device's verdict and\n"
    "  `sandbox info --self-check` runs the check again (exit status 1 when it fails).\n"
    "--images K writes a PNG every K frames. Exit status: 0 ok, 1 blow-up or run error (bench: any\n"
    "scene that blew up), "
    "2 bad command line or bad input.\n";

// [SECTION] Helpers ----------------------------------------------------------------

bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

#if defined(PS_HAVE_WINDOW)
/// A flag that takes on or off (--interop, --vsync).
bool on_off(const Args& a, const std::string& k, bool def) {
  if (!a.has(k)) return def;
  const std::string v = a.get(k, "");
  if (v == "on") return true;
  if (v == "off") return false;
  throw UsageError("--" + k + ": expected on or off, got '" + v + "'");
}
#endif

/// The simulation's notices (auto backend choice, CUDA fallback) on stderr.
void print_notices(Simulation& sim) {
  const std::string n = sim.take_notice();
  if (!n.empty()) std::fprintf(stderr, "sandbox: %s\n", n.c_str());
}

std::string summary_line(const char* label, int64_t n, const Simulation& sim,
                         const Diagnostics& d) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s %6" PRId64 " step %8" PRId64
                " t=%.6f particles=%zu mass=%.9g momentum=(%.9g, %.9g) "
                "angular_momentum=%.9g kinetic_energy=%.9g max_speed=%.6g hash=%016" PRIx64,
                label, n, sim.step_count(), sim.time(), d.count, d.mass, d.momentum[0],
                d.momentum[1], d.angular_momentum, d.kinetic_energy,
                static_cast<double>(d.max_speed), d.hash);
  return buf;
}

class Progress {
 public:
  Progress(int64_t total, bool enabled, bool tty) : total_(total), enabled_(enabled), tty_(tty) {}
  void update(int64_t done, double secs) {
    if (!enabled_ || total_ <= 0) return;
    int pct = static_cast<int>(100 * done / total_);
    if (tty_) {
      int bar = static_cast<int>(30 * done / total_);
      std::fprintf(stderr, "\r[%.*s%*s] %3d%% %" PRId64 "/%" PRId64 " %.1fs", bar,
                   "##############################", 30 - bar, "", pct, done, total_, secs);
      if (done == total_) std::fputc('\n', stderr);
      std::fflush(stderr);
    } else if (pct / 10 != last_ / 10 || done == total_) {
      std::fprintf(stderr, "progress %3d%% (%" PRId64 "/%" PRId64 ") %.1fs\n", pct, done, total_,
                   secs);
    }
    last_ = pct;
  }

 private:
  int64_t total_;
  bool enabled_, tty_;
  int last_ = -1;
};

// [SECTION] run ----------------------------------------------------------------------

/// `built`: the scene already built with a.sets (a lesson's, build_lesson), else loaded here.
int cmd_run(const Args& a, bool default_headless, std::unique_ptr<Simulation> built = nullptr) {
  // Setup: the scene and its settings.
  std::string scene = a.positional.empty() ? default_scene_name() : a.positional[0];
  if (a.positional.size() > 1)
    throw UsageError("run takes one scene, got '" + a.positional[1] + "' as well");
  if (a.has("steps") && a.has("frames")) throw UsageError("--steps and --frames are exclusive");
  DumpFormat fmt = DumpFormat::CSV;
  if (a.has("format") && !parse_dump_format(a.get("format", ""), fmt))
    throw UsageError("--format: expected csv, ply, vtk or p4, got '" + a.get("format", "") + "'");
  std::string backend = a.get("backend", "auto");
  if (backend != "cpu" && backend != "cuda" && backend != "auto")
    throw UsageError("--backend: expected cpu, cuda or auto, got '" + backend + "'");
  int threads = static_cast<int>(a.get_int("threads", 0, 0, 1024));
  long dump_every = a.get_int("dump-every", 0, 0, 1L << 40);
  long image_every = a.get_int("images", default_headless ? 10 : 0, 0, 1L << 40);
  bool quiet = a.has("quiet");
  // --refine K: the scene `bench --sizes K` times, run headless (the same load_refined).
  const int refine = static_cast<int>(a.get_int("refine", 1, 1, 64));
  std::unique_ptr<Simulation> sim = refine > 1
                                        ? load_refined(scene, a.sets, refine, backend, threads)
                                    : built ? std::move(built)
                                            : load_simulation(scene, a.sets, backend, threads);
  print_notices(*sim);
  if (a.has("sgf")) sim->set_force_list(load_sgf_flag(a.get("sgf", ""), quiet));
  std::string out_dir =
      a.get("out", default_headless ? "out/" + fs::path(sim->info().path).stem().string() : "");
  if ((dump_every > 0 || image_every > 0) && out_dir.empty())
    out_dir = "out/" + fs::path(sim->info().path).stem().string();
  if (!out_dir.empty()) create_output_dir(out_dir);
  image_every = png_interval(image_every);

  // Colour of the images: the materials', or temperature / melt fraction
  // (MPM scenes with heat). The temperature range is fixed for the run: the
  // particles' at the start, the fixed walls, plates and the air.
  ImageColor color;
  {
    const std::string c = a.get("color", "material");
    if (c == "temperature" || c == "melt") {
      MpmWorld* w = sim->mpm();
      if (!w || !w->heat.enabled)
        throw UsageError("--color " + c +
                         ": the scene has no heat (add \"heat\": {} or --set heat.enabled=true)");
      color.heat = true;
      color.mode = c == "melt" ? HeatColor::MeltFraction : HeatColor::Temperature;
      temperature_range(w->particles, color.lo, color.hi);
      auto widen = [&](float t) {
        color.lo = std::min(color.lo, t);
        color.hi = std::max(color.hi, t);
      };
      for (const HeatWall& hw : w->heat.walls)
        if (hw.fixed) widen(hw.temperature);
      for (const HeatPlate& pl : w->heat.plates) widen(pl.temperature);
      if (w->heat.air != AirModel::None) widen(w->heat.air_temperature);
      if (!(color.hi > color.lo)) color.hi = color.lo + 1.f;
    } else if (c != "material") {
      throw UsageError("--color: expected material, temperature or melt, got '" + c + "'");
    }
  }

  const int spf = sim->substeps_per_frame();
  const bool by_steps = a.has("steps");
  const int64_t total_steps = by_steps ? a.get_int("steps", 0, 0, 1L << 40)
                                       : a.get_int("frames", sim->info().frames, 0, 1L << 40) * spf;
  const int64_t unit = by_steps ? 1 : spf;  // dump-every counts frames unless --steps
  if (!quiet) {
    // MPM scenes name their transfer and kernel (e.g. "polypic, quadratic").
    const std::string scheme = sim->scheme_note();
    std::printf("scene %s (%s)%s: %zu particles, backend %s%s, %" PRId64 " steps (%d per frame)\n",
                sim->info().name.c_str(), sim->info().path.c_str(),
                refine > 1 ? (" refined " + std::to_string(refine) + "x").c_str() : "",
                sim->diagnostics().count, sim->backend_name().c_str(), scheme.c_str(), total_steps,
                spf);
  }

  // State: summary file and counters.
  std::ofstream summary;
  if (!out_dir.empty()) summary.open(fs::path(out_dir) / "summary.txt");
  auto emit = [&](const std::string& line) {
    if (!quiet) std::printf("%s\n", line.c_str());
    if (summary) summary << line << "\n";
    std::fflush(stdout);
  };
  ParticleTable table;
  int dump_index = 0;
  // Heat scenes: ice, water and heat content with the ledger's drift; rigid
  // bodies: one line each (position, angle, velocity, spin).
  auto heat_line = [&](const char* tag) {
    for (const std::string& l : heat_state_lines(*sim, tag)) emit(l);
  };
  auto bodies_line = [&](const char* tag) {
    for (const std::string& l : body_lines(*sim, tag)) emit(l);
  };
  auto do_dump = [&]() {
    Diagnostics d = sim->diagnostics();
    if (dump_every > 0 && fmt == DumpFormat::P4) {
      // The original tool appends one block per saved time to one file each.
      // An append cannot be atomic: a failed one is cut back off, so the file
      // keeps whole blocks, and the error names the file and the OS reason.
      auto append = [&](const std::string& name, const std::string& text) {
        const fs::path p = fs::path(out_dir) / name;
        std::error_code ec;
        const uintmax_t before = dump_index == 0 ? 0 : fs::file_size(p, ec);
        errno = 0;
        std::ofstream f(p, dump_index == 0 ? std::ios::trunc : std::ios::app);
        f << text;
        f.flush();
        if (!f) {
          const int err = errno;
          f.close();
          if (!ec) fs::resize_file(p, before, ec);
          throw std::runtime_error(
              p.string() + ": write failed" +
              (err ? ": " + std::generic_category().message(err) : std::string()));
        }
      };
      // MPM state is float: write the shortest text that reads back to that float.
      append("particles.p4p", p4p_text({sim->p4_particles()}, sim->p4_precision()));
      append("contacts.p4c", p4c_text({sim->p4_contacts()}));
    } else if (dump_every > 0) {
      sim->table(table);
      char name[64];
      std::snprintf(name, sizeof name, "particles_%05d.%s", dump_index, dump_extension(fmt));
      write_dump((fs::path(out_dir) / name).string(), fmt, table);
    }
    if (const rigid::RigidWorld* rw = sim->rigid(); rw && dump_every > 0) {
      char name[64];
      std::snprintf(name, sizeof name, "bodies_%05d.csv", dump_index);
      write_file_atomic((fs::path(out_dir) / name).string(), rigid::bodies_csv(*rw));
      if (fmt == DumpFormat::VTK) {
        std::snprintf(name, sizeof name, "bodies_%05d.vtk", dump_index);
        write_file_atomic((fs::path(out_dir) / name).string(), rigid::bodies_vtk(*rw));
      }
    }
    emit(summary_line("dump", dump_index, *sim, d));
    bodies_line("dump");
    heat_line("dump");
    ++dump_index;
  };
  auto do_image = [&](int64_t frame) {
    char name[64];
    std::snprintf(name, sizeof name, "frame_%05" PRId64 ".png", frame);
    std::string err;
    if (!write_image(*sim, (fs::path(out_dir) / name).string(), table, &err, color))
      throw std::runtime_error(err);
  };

  // Main loop: step in chunks of one frame (or one dump interval).
  emit(summary_line("start", 0, *sim, sim->diagnostics()));
  heat_line("start");
  if (dump_every > 0) do_dump();
  if (image_every > 0) do_image(0);
  int64_t last_image = 0;
  Progress progress(total_steps, !quiet, stderr_is_tty());
  auto t0 = std::chrono::steady_clock::now();
  int64_t done = 0;
  const int64_t step0 = sim->step_count();
  while (done < total_steps) {
    // One frame (with --frames: up to the next frame boundary, where a CUDA
    // fallback that rolled the state back to mid-frame rejoins them).
    int64_t chunk = std::min<int64_t>(by_steps ? spf : spf - done % spf, total_steps - done);
    // Stop at every dump step: with --steps K need not be a multiple of the substeps per frame.
    if (dump_every > 0)
      chunk = std::min<int64_t>(chunk, dump_every * unit - done % (dump_every * unit));
    StepStatus st = sim->step(static_cast<int>(chunk));
    // Counted by the simulation's clock: a CUDA failure makes it go on on the
    // CPU from its last preserved state, which may lie some steps back.
    done = sim->step_count() - step0;
    print_notices(*sim);
    if (!st.ok) {
      emit(summary_line("halt", 0, *sim, sim->diagnostics()));
      std::fprintf(stderr, "error: %s\n", st.message.c_str());
      return 1;
    }
    if (dump_every > 0 && done % (dump_every * unit) == 0) do_dump();
    // --images K: a picture every K frames, with --steps too (named by the step then, by the frame otherwise).
    if (image_every > 0 && done % spf == 0 && (done / spf) % image_every == 0) {
      do_image(by_steps ? done : done / spf);
      last_image = done;
    }
    progress.update(done,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Diagnostics fin = sim->diagnostics();
  emit(summary_line("final", 0, *sim, fin));
  bodies_line("final");
  heat_line("final");
  if (image_every > 0 && by_steps && last_image != done)
    do_image(done);  // the last step, off the frame grid
  char perf[256];
  std::snprintf(
      perf, sizeof perf, "performance %.3f s, %.4g particle-substeps/s", secs,
      secs > 0 ? static_cast<double>(fin.count) * static_cast<double>(total_steps) / secs : 0.0);
  emit(perf);
  for (const std::string& l : cost_lines(*sim, secs, total_steps)) emit(l);
  if (!out_dir.empty() && !quiet) std::printf("output written to %s/\n", out_dir.c_str());
  return 0;
}

// [SECTION] bench ----------------------------------------------------------------------

int cmd_bench(const Args& a) {
  const std::string backend_arg = a.get("backend", "all");
  std::vector<std::string> backends;
  if (backend_arg == "all")
    backends = available_backends();
  else
    backends.push_back(backend_arg);
  const bool phases = a.has("phases");
  int threads = static_cast<int>(a.get_int("threads", 0, 0, 1024));
  long steps = a.get_int("steps", 400, 1, 1L << 30);
  long warmup = a.get_int("warmup", 40, 0, 1L << 30);
  std::vector<std::string> scenes;
  // rigid_float: MPM water with rigid bodies (the batched exchange's cost:
  // the same command with --set rigid=null times the water alone).
  std::string list = a.get("scenes",
                           "mpm88,mpm99,dam_break,sand_column,snowball,pic_vs_apic,rigid_float,"
                           "dem_hopper,dem_smash,dem_soft_body,dem_dance");
  // --sizes k1,k2,...: linear refinement factors (particles grow by k^2).
  std::vector<int> sizes;
  {
    std::string sz = a.get("sizes", "1");
    size_t b = 0;
    while (b <= sz.size()) {
      size_t c = sz.find(',', b);
      std::string tok = sz.substr(b, c == std::string::npos ? std::string::npos : c - b);
      char* end = nullptr;
      long k = std::strtol(tok.c_str(), &end, 10);
      if (tok.empty() || *end != '\0' || k < 1 || k > 64)
        throw UsageError("--sizes: expected comma-separated integers in [1, 64], got '" + sz + "'");
      sizes.push_back(static_cast<int>(k));
      if (c == std::string::npos) break;
      b = c + 1;
    }
  }
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string s =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!s.empty()) scenes.push_back(s);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  int failed = 0;
  // --csv FILE: the table as CSV (bench/results keeps them), rewritten after
  // every row so a run cut short keeps what it measured.
  const std::string csv_path = a.get("csv", "");
  std::string csv = "scene,kind,backend,size,particles,steps,ms_per_step,rate,contact_rate,hash\n";
  auto csv_row = [&](const std::string& row) {
    if (csv_path.empty()) return;
    csv += row;
    write_file_atomic(csv_path, csv);
  };
  csv_row("");  // a header even when every scene fails
  std::printf("%-14s %-4s %-18s %4s %9s %7s %11s %16s %15s  %s\n", "scene", "kind", "backend",
              "size", "particles", "steps", "ms/step", "particle-steps/s", "contact-steps/s",
              "hash");
  for (const auto& name : scenes)
    for (int k : sizes)
      for (const auto& backend : backends) {
        // A scene that cannot be built at this size (an image body refined below half a pixel, a
        // memory limit) is reported with its name and size, and the other scenes still run.
        std::unique_ptr<Simulation> sim;
        try {
          sim = k == 1 ? load_simulation(name, a.sets, backend, threads)
                       : load_refined(name, a.sets, k, backend, threads);
        } catch (const std::exception& e) {
          std::printf("%-14s %-4s %-18s %3dx FAILED: %s\n", name.c_str(), "", backend.c_str(), k,
                      e.what());
          csv_row(name + ",,\"" + backend + "\"," + std::to_string(k) + ",,,FAILED,,,\n");
          std::fprintf(stderr, "bench: %s at size %dx on %s could not be built: %s\n", name.c_str(),
                       k, backend.c_str(), e.what());
          std::fflush(stdout);
          ++failed;
          continue;
        }
        print_notices(*sim);
        StepStatus st = sim->step(static_cast<int>(warmup));
        size_t n = sim->diagnostics().count;
        // DEM: count the pairwise interactions of every timed step.
        const bool per_step = sim->counts_interactions();
        double interactions = 0.0;
        auto t0 = std::chrono::steady_clock::now();
        if (per_step) {
          for (long k = 0; k < steps && st.ok; ++k) {
            st = sim->step(1);
            interactions += static_cast<double>(sim->last_interactions());
          }
        } else if (st.ok) {
          st = sim->step(static_cast<int>(steps));
        }
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        Diagnostics d = sim->diagnostics();
        print_notices(*sim);  // a CUDA fallback: the row then measures the CPU from the fallback on
        if (!st.ok) {
          // A benchmark of a scene that blew up measures nothing: say so loudly and fail the run.
          std::printf("%-14s %-4s %-18s %3dx FAILED: %s\n", name.c_str(), sim->info().kind.c_str(),
                      sim->backend_name().c_str(), k, st.message.c_str());
          csv_row(name + "," + sim->info().kind + ",\"" + sim->backend_name() + "\"," +
                  std::to_string(k) + "," + std::to_string(n) + "," + std::to_string(steps) +
                  ",FAILED,,,\n");
          std::fprintf(stderr, "bench: %s at size %dx on %s failed: %s\n", name.c_str(), k,
                       sim->backend_name().c_str(), st.message.c_str());
          std::fflush(stdout);
          ++failed;
          continue;
        }
        char contact_rate[32] = "-";
        if (per_step) std::snprintf(contact_rate, sizeof contact_rate, "%.4g", interactions / secs);
        std::printf("%-14s %-4s %-18s %3dx %9zu %7ld %11.4f %16.4g %15s  %016" PRIx64 "\n",
                    name.c_str(), sim->info().kind.c_str(), sim->backend_name().c_str(), k, n,
                    steps, 1e3 * secs / static_cast<double>(steps),
                    static_cast<double>(n) * steps / secs, contact_rate, d.hash);
        {
          char row[512];
          std::snprintf(row, sizeof row, "%s,%s,\"%s\",%d,%zu,%ld,%.6g,%.6g,%s,%016" PRIx64 "\n",
                        name.c_str(), sim->info().kind.c_str(), sim->backend_name().c_str(), k, n,
                        steps, 1e3 * secs / static_cast<double>(steps),
                        static_cast<double>(n) * steps / secs, per_step ? contact_rate : "",
                        d.hash);
          csv_row(row);
        }
        BackendStats bs;
        if (phases && sim->step_phases(bs)) {
          std::printf("    %s:", bs.device.c_str());
          for (const PhaseTiming& p : bs.phases) std::printf("  %s %.4f ms", p.name.c_str(), p.ms);
          if (!bs.notes.empty()) std::printf("  [%s]", bs.notes.c_str());
          std::printf("\n");
        }
        std::fflush(stdout);
      }
  if (failed > 0) {
    std::fprintf(stderr, "bench: %d run%s failed (see FAILED above)\n", failed,
                 failed == 1 ? "" : "s");
    return 1;
  }
  return 0;
}

// [SECTION] specimen ------------------------------------------------------------------------

int cmd_specimen(const Args& a) {
  if (a.positional.size() != 1) throw UsageError("specimen needs one image (PNG or JPG)");
  const std::string path = a.positional[0];
  SpecimenParams sp;
  std::string test = a.get("test", "winding");
  if (test == "winding")
    sp.test = InsideTest::Winding;
  else if (test == "nearest")
    sp.test = InsideTest::NearestContour;
  else if (test == "nearest_oriented")
    sp.test = InsideTest::NearestContourOriented;
  else
    throw UsageError("--test: expected winding, nearest or nearest_oriented, got '" + test + "'");
  std::string mask = a.get("mask", "not_background");
  if (mask == "dark")
    sp.mask.rule = MaskRule::Dark;
  else if (mask == "not_background")
    sp.mask.rule = MaskRule::NotBackground;
  else
    throw UsageError("--mask: expected dark or not_background, got '" + mask + "'");
  sp.mask.threshold = static_cast<int>(a.get_int("threshold", 128, 0, 255));
  sp.mask.tolerance = static_cast<int>(a.get_int("tolerance", 32, 0, 255));
  sp.mask.invert = a.has("invert");
  const long belt = a.get_int("belt", 160, 0, 255);
  const std::string rp = a.get("radius-px", "1");
  char* end = nullptr;
  sp.grid.radius_px = std::strtof(rp.c_str(), &end);
  if (rp.empty() || *end != '\0' || !(sp.grid.radius_px >= 0.5f && sp.grid.radius_px <= 1000.f))
    throw UsageError("--radius-px: expected a number in [0.5, 1000], got '" + rp + "'");
  const std::string out = a.get("out", "out/specimen");
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw std::runtime_error(out + ": cannot create output folder: " + ec.message());

  const Image img = load_image(path);  // InputError naming the file
  const Mask m = make_mask(img, sp.mask);
  const std::vector<Contour> contours = trace_contours(m);
  const Specimen s = make_specimen(img, m, contours, sp);
  {
    std::string text = "ID,X,Y\n";
    char buf[96];
    for (size_t k = 0; k < s.size(); ++k) {
      std::snprintf(buf, sizeof buf, "%u,%.9g,%.9g\n", s.id[k], s.pos_px[k].x, s.pos_px[k].y);
      text += buf;
    }
    write_file_atomic((fs::path(out) / "particles.csv").string(),
                      text);  // WriteError naming the file
  }
  save_color_csv(s, (fs::path(out) / "colors.csv").string());
  const std::vector<uint32_t> belt_ids = select_bright(s, static_cast<int>(belt));
  save_id_list(belt_ids, (fs::path(out) / "belt.txt").string());
  // Where the source document's nearest-contour test and the winding test disagree.
  const auto diff = inside_test_disagreements(m, contours, sp.grid, InsideTest::NearestContour);
  Image overlay = img;
  for (size_t k = 0; k < s.size(); ++k) {
    int col = static_cast<int>(s.pos_px[k].x),
        row = img.height - 1 - static_cast<int>(s.pos_px[k].y);
    if (col >= 0 && row >= 0 && col < img.width && row < img.height) {
      uint8_t* px = overlay.at(col, row);
      px[0] = 40;
      px[1] = 200;
      px[2] = 90;  // kept particle centres
    }
  }
  for (const auto& d : diff) {
    int col = static_cast<int>(d.pos_px.x), row = img.height - 1 - static_cast<int>(d.pos_px.y);
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int c = col + dx, r = row + dy;
        if (c < 0 || r < 0 || c >= img.width || r >= img.height) continue;
        uint8_t* px = overlay.at(c, r);
        px[0] = d.nearest_inside ? 230 : 30;
        px[1] = 40;
        px[2] = d.nearest_inside ? 40 : 230;
      }
  }
  save_png((fs::path(out) / "inside_tests.png").string(), overlay);
  std::printf(
      "specimen %s: %dx%d px, %zu contours, %zu particles (radius %.3g px, %s test), %zu in the belt (> %ld), "
      "%zu points where the nearest-contour and winding tests disagree\n",
      path.c_str(), img.width, img.height, contours.size(), s.size(), sp.grid.radius_px,
      test.c_str(), belt_ids.size(), belt, diff.size());
  std::printf("written to %s/: particles.csv colors.csv belt.txt inside_tests.png\n", out.c_str());
  return 0;
}

// [SECTION] info -------------------------------------------------------------------------

/// `sandbox info --self-check`: the CUDA self-check again, case by case.
int cmd_self_check() {
  GateDecision d = recheck_cuda_device();
  if (!d.ran_check) {
    std::printf("CUDA self-check: nothing to check: %s\n", d.message.c_str());
    return 0;
  }
  std::printf("CUDA self-check of %s against the CPU reference:\n", cuda_device_label(0).c_str());
  for (const SelfCheckCase& c : d.report.cases)
    std::printf("  %-30s %s  %s\n", c.name.c_str(), c.pass ? "pass" : "FAIL", c.detail.c_str());
  std::printf(
      "verdict: %s (%.1f s)\n",
      d.report.pass ? "pass: --backend auto uses CUDA" : "FAIL: --backend auto uses the CPU",
      d.report.seconds);
  if (!d.report.pass) std::printf("reason: %s\n", d.report.reason.c_str());
  const std::string cache = verdict_cache_path();
  if (!d.cache_error.empty())
    std::printf("verdict not stored: %s\n", d.cache_error.c_str());
  else if (!cache.empty())
    std::printf("verdict stored in %s\n", cache.c_str());
  return d.report.pass ? 0 : 1;
}

int cmd_info(const Args& a) {
  if (a.has("self-check")) return cmd_self_check();
  std::printf("Particle Sandbox %s\n", "0.1.0");
  std::printf("backends:\n");
  std::printf("  cpu    available (%u hardware threads)\n",
              std::max(1u, std::thread::hardware_concurrency()));
  std::string why;
  auto devices = cuda_devices(&why);
  const std::string cache = verdict_cache_path();
  std::string auto_pick = "cpu";
  if (!cuda_compiled()) {
    std::printf("  cuda   not built (%s)\n", why.c_str());
  } else if (devices.empty()) {
    std::printf("  cuda   compiled, no device found (%s)\n",
                why.empty() ? "no CUDA device" : why.c_str());
  } else {
    for (const auto& d : devices) {
      std::printf("  cuda   device %d: %s, compute capability %d.%d, %.1f GiB, %d SMs%s%s\n",
                  d.index, d.name.c_str(), d.cc_major, d.cc_minor, d.memory_bytes / 1073741824.0,
                  d.multiprocessors, d.pci_bus_id.empty() ? "" : ", PCI ", d.pci_bus_id.c_str());
      // The verdict this build has for the device (the steppers run on device 0).
      const Verdict v = read_verdict(cache, cuda_device_key(d.index));
      char when[64] = "";
      if (v.when > 0) {
        const std::time_t t = static_cast<std::time_t>(v.when);
        std::strftime(when, sizeof when, " on %Y-%m-%d %H:%M", std::localtime(&t));
      }
      if (v.state == VerdictState::Pass)
        std::printf("         self-check: pass%s (%.1f s)\n", when, v.seconds);
      else if (v.state == VerdictState::Fail)
        std::printf("         self-check: FAIL%s: %s\n", when, v.reason.c_str());
      else
        std::printf("         self-check: not yet checked with this build%s\n",
                    d.index == 0 ? " (the first --backend auto run checks it)"
                                 : " (the CUDA backends use device 0)");
      if (d.index == 0)
        auto_pick = v.state == VerdictState::Pass   ? "cuda"
                    : v.state == VerdictState::Fail ? "cpu"
                                                    : "cuda after its self-check passes, else cpu";
    }
    std::printf("  self-check verdicts: %s (`sandbox info --self-check` checks again)\n",
                cache.empty() ? "not stored (no settings folder)" : cache.c_str());
  }
  auto usable = available_backends();
  std::string list;
  for (const auto& b : usable) list += (list.empty() ? "" : ", ") + b;
  std::printf("usable MPM backends: %s (auto picks %s)\n", list.c_str(), auto_pick.c_str());
#if defined(PS_HAVE_WINDOW)
  std::printf("window: built (GLFW + OpenGL 4.3 + Dear ImGui)\n");
#else
  std::printf("window: not built (headless runner only)\n");
#endif
  std::printf("PNG output: %s\n", png_supported() ? "yes" : "no");
  std::printf("scenes (%s):\n", scenes_dir().c_str());
  for (const auto& p : builtin_scene_paths()) {
    std::string name = fs::path(p).stem().string();
    try {
      Json doc = Json::parse_file(p);
      const Json* d = doc.find("name");
      std::printf("  %-16s %s\n", name.c_str(), d && d->is_string() ? d->as_string().c_str() : "");
    } catch (const std::exception& e) {
      std::printf("  %-16s (unreadable: %s)\n", name.c_str(), e.what());
    }
  }
  std::printf("lessons (sandbox --lesson NAME):\n");
  for (const auto& p : builtin_lesson_paths()) {
    const std::string name = fs::path(p).stem().string();
    try {
      std::printf("  %-28s %s\n", name.c_str(), load_lesson(p).title.c_str());
    } catch (const std::exception& e) {
      std::printf("  %-28s (does not load: %s)\n", name.c_str(), e.what());
    }
  }
  return 0;
}

#if defined(PS_HAVE_WINDOW)
bool display_present() {
  const char* d = std::getenv("DISPLAY");
  const char* w = std::getenv("WAYLAND_DISPLAY");
  return (d && *d) || (w && *w);
}
#endif

}  // namespace

// [SECTION] main ------------------------------------------------------------------------

// A build that takes over a second prints a progress line a second on stderr
// (sim/core/progress.h); a build starts at fraction 0.
ProgressListener build_progress_lines() {
  struct State {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    double printed = 0.0;
  };
  auto st = std::make_shared<State>();
  return [st](const std::string& stage, double fraction) {
    const auto now = std::chrono::steady_clock::now();
    if (fraction <= 0.0) {
      st->t0 = now;
      st->printed = 0.0;
    }
    const double t = std::chrono::duration<double>(now - st->t0).count();
    if (t >= 1.0 && t >= st->printed + 1.0) {
      st->printed = t;
      std::fprintf(stderr, "sandbox: building the scene: %s, %.0f %% (%.1f s)\n", stage.c_str(),
                   100.0 * fraction, t);
      std::fflush(stderr);
    }
    return true;
  };
}

int main(int argc, char** argv) {
  install_auto_backend();  // "auto" in the scene builder goes through the CUDA self-check gate
  // A CUDA self-check that `--backend auto` starts says so on stderr, case by case.
  set_self_check_reporter([](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  });
  try {
    Args a = parse_args(argc, argv);
    ProgressScope progress_lines(a.has("no-progress") ? ProgressListener{}
                                                      : build_progress_lines());
    if (a.command == "help" || a.has("help")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a.command == "version") {
      std::puts("Particle Sandbox 0.1.0");
      return 0;
    }
    if (a.command == "info") return cmd_info(a);
    if (a.command == "bench") return cmd_bench(a);
    if (a.command == "specimen") return cmd_specimen(a);
    if (a.command == "verify") return cmd_verify(a);
    if (a.command == "compare") return cmd_compare(a);
    if (a.command == "run") {
      if (a.positional.empty())
        throw UsageError("run needs a scene (a file or a built-in name; see `sandbox info`)");
      return cmd_run(a, false);
    }
    // Default and "gui": the window when there is one, else a headless run.
    // --lesson NAME: the lesson's scene with its overrides (the window also
    // shows its text and sets up its view).
    std::string lesson_path;
    std::optional<Lesson> lesson;
    if (a.has("lesson")) {
      lesson_path = resolve_lesson_path(a.get("lesson", ""));
      lesson = load_lesson(lesson_path);  // a bad file is reported before anything opens
      if (!a.positional.empty()) throw UsageError("give a scene or --lesson, not both");
      a.positional = {lesson_scene_arg(*lesson)};
    }
#if defined(PS_HAVE_WINDOW)
    if (display_present()) {
      WindowOptions w;
      w.lesson = lesson_path;
      w.compare = a.get("compare", "");
      w.scene = a.positional.empty() ? default_scene_name() : a.positional[0];
      w.overrides = a.sets;
      w.backend = a.get("backend", "auto");
      w.threads = static_cast<int>(a.get_int("threads", 0, 0, 1024));
      w.verbose = a.has("verbose");
      w.log_hashes = a.has("log-hashes");
      w.paused = a.has("paused");
      w.screenshot_path = a.get("screenshot", "");
      w.screenshot_after_frames = static_cast<int>(
          a.get_int("screenshot-after", w.screenshot_path.empty() ? -1 : 60, -1, 1 << 30));
      w.quit_after_frames = static_cast<int>(a.get_int("quit-after", -1, -1, 1 << 30));
      w.refine = static_cast<int>(a.get_int("refine", 1, 1, 64));
      w.interop = on_off(a, "interop", true);
      if (a.has("vsync")) w.vsync = on_off(a, "vsync", true) ? 1 : 0;
      w.seconds = static_cast<double>(a.get_int("seconds", 0, 0, 1000000));
      if (a.has("gl") && !parse_gl_backend(a.get("gl", ""), w.gl))
        throw UsageError("--gl: expected glx or egl, got '" + a.get("gl", "") + "'");
      // A timed run with a screenshot and no frame for it: the last frame's.
      if (w.seconds > 0 && !w.screenshot_path.empty() && !a.has("screenshot-after"))
        w.screenshot_after_frames = -2;
      w.out_dir = a.get("out", "");
      w.soak_seconds = static_cast<double>(a.get_int("soak", 0, 0, 10000000));
      w.soak_log = a.get("soak-log", "");
      w.soak_plan = a.get("soak-plan", "lecture");
      if (w.soak_plan != "lecture" && w.soak_plan != "classroom")
        throw UsageError("--soak-plan: expected lecture or classroom, got '" + w.soak_plan + "'");
      if (a.has("size")) {
        std::string s = a.get("size", "");
        if (std::sscanf(s.c_str(), "%dx%d", &w.width, &w.height) != 2 || w.width < 320 ||
            w.height < 240)
          throw UsageError("--size: expected WIDTHxHEIGHT of at least 320x240, got '" + s + "'");
      }
      return run_window(w);
    }
#endif
    if (a.command == "gui") {
#if defined(PS_HAVE_WINDOW)
      std::fprintf(stderr, "no display (DISPLAY is not set): running the scene headless instead\n");
#else
      std::fprintf(
          stderr,
          "this build has no window (GLFW/ImGui were not found): running the scene headless instead\n");
#endif
    }
    Args run = a;
    run.opt.erase("screenshot");
    run.opt.erase("screenshot-after");
    run.opt.erase("quit-after");
    run.opt.erase("size");
    run.opt.erase("verbose");
    run.opt.erase("paused");
    run.opt.erase("soak");
    run.opt.erase("soak-log");
    run.opt.erase("soak-plan");
    run.opt.erase("lesson");
    run.opt.erase("interop");
    run.opt.erase("vsync");
    run.opt.erase("seconds");
    run.opt.erase("gl");
    if (run.has("compare")) throw UsageError("--compare needs the window (a display)");
    std::unique_ptr<Simulation> built;
    if (lesson) {
      // What the window's open_lesson builds, so every error of the lesson (its scene, "set" and
      // "compare" entries) is reported here, located, before the run: the scene with the lesson's
      // overrides (run below) and its comparison (built to check it, then dropped: a headless run
      // is the lesson's scene).
      LessonOptions o;
      o.extra_sets = a.sets;
      o.backend = a.get("backend", "auto");
      if (o.backend != "cpu" && o.backend != "cuda" && o.backend != "auto")
        throw UsageError("--backend: expected cpu, cuda or auto, got '" + o.backend + "'");
      o.threads = static_cast<int>(a.get_int("threads", 0, 0, 1024));
      LessonBuild b = build_lesson(*lesson, o);
      run.sets = b.overrides;
      built = std::move(b.sim);
    }
    return cmd_run(run, true, std::move(built));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "sandbox: %s\n", e.what());
    return 2;
  } catch (const InputError& e) {
    std::fprintf(stderr, "sandbox: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sandbox: %s\n", e.what());
    return 1;
  }
}
