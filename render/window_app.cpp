// The sandbox window: a labelled linear script (setup, state, main loop: poll
// events, input, sync, step, snapshot, render, UI, present; cleanup), after
// Dear ImGui's example_glfw_opengl3/main.cpp.
//
// Threading: the simulation steps on the main thread under a time budget per
// frame (kStepBudgetMs). A frame wants `solver.substeps` substeps; it runs as
// many as fit in the budget and shows "slow motion" when it falls behind. We
// chose this over a simulation thread because every edit (panels, presets,
// grab, paint, backend switch, reset) then applies at one sync point with no
// locks or copies of the particle state, the CPU backend already spreads each
// substep over its own worker threads, and a CUDA backend steps
// asynchronously anyway; the UI stays responsive because one frame never
// steps longer than the budget, or one substep where a substep exceeds it
// (a frame stops when the next substep is predicted to end past the budget).
#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "backends/imgui_impl_glfw.h"
#include "backends/imgui_impl_opengl3.h"
#include "imgui.h"
#include "render/build_progress.h"
#include "render/cpu/layout.h"
#include "render/cpu/particle_fields.h"
#include "render/cpu/particle_scalars.h"
#include "render/cpu/picking.h"
#include "render/gl_context.h"
#include "render/window_state.h"
#include "sim/core/progress.h"
#include "sim/scene/coupled.h"
#include "sim/scene/regrid.h"
#include "sim/selfcheck/verdict.h"

namespace ps {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
constexpr double kStepBudgetMs = 12.0;  // simulation time per frame, at most
constexpr double kFrameTargetMs =
    15.5;  // the step's budget shrinks so that a frame fits this (~64 fps)
constexpr double kMinStepBudgetMs = 4.0;  // ... but never below this: a heavy scene still moves

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void glfw_error(int code, const char* msg) {
  std::fprintf(stderr, "GLFW error %d: %s\n", code, msg);
}
}  // namespace

// [SECTION] Logging and status -------------------------------------------------

void App::log(const char* fmt, ...) const {
  if (!opt.verbose) return;
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stdout, fmt, ap);
  va_end(ap);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void App::log_run_state() {
  if (!running && compare.cmp) {
    std::string L;
    for (size_t k = 0; k < compare.cmp->size(); ++k) {
      char b[48];
      std::snprintf(b, sizeof b, "%s%.9g", k ? "," : "",
                    compare.cmp->pane(k).sim->totals().angular_momentum);
      L += b;
    }
    log("pause compare step=%lld angular=[%s]",
        static_cast<long long>(compare.cmp->pane(0).sim->step_count()), L.c_str());
    return;
  }
  if (running || !sim || !opt.verbose) {
    log(running ? "resume" : "pause");
    return;
  }
  const Diagnostics d = sim->diagnostics();  // a sync and a hash: only for the log line
  log("pause step=%lld t=%.9g ke=%.9g angular=%.9g", static_cast<long long>(sim->step_count()),
      sim->time(), d.kinetic_energy, d.angular_momentum);
}

void App::set_status(const std::string& s) {
  status_line = s;
  status_time = glfwGetTime();
}

void App::update_temperature_range(const std::vector<float>& v) {
  if (!temp_auto) {
    range_lo = temp_lo;
    range_hi = temp_hi;
    return;
  }
  float lo, hi;
  value_range(v, lo, hi);
  if (!(hi > lo)) hi = lo + 1e-3f;
  // Expand at once, shrink slowly: the legend does not flicker.
  range_lo = lo < range_lo ? lo : range_lo + 0.1f * (lo - range_lo);
  range_hi = hi > range_hi ? hi : range_hi + 0.1f * (hi - range_hi);
}

void App::log_view() const {
  Vec2 c = cam.viewport().centre();
  // viewport: where the scene is fitted; area: it and the legends' dock (x, width, height).
  const ScreenRect a = scene_area();
  log("view scale=%.9g cx=%.9g cy=%.9g sx=%.9g sy=%.9g window=%dx%d ratio=%.4g viewport=%dx%d area=%d,%dx%d dock=%s",
      static_cast<double>(cam.scale()), static_cast<double>(cam.centre().x),
      static_cast<double>(cam.centre().y), static_cast<double>(c.x), static_cast<double>(c.y),
      static_cast<int>(cam.width()), static_cast<int>(cam.height()),
      static_cast<double>(cam.pixel_ratio()), static_cast<int>(cam.viewport().w),
      static_cast<int>(cam.viewport().h), static_cast<int>(a.x), static_cast<int>(a.w),
      static_cast<int>(a.h), overlay_dock.column ? "column" : "band");
}

void App::toggle_fullscreen() {
  if (glfwGetWindowMonitor(window)) {
    glfwSetWindowMonitor(window, nullptr, windowed[0], windowed[1], windowed[2], windowed[3],
                         GLFW_DONT_CARE);
    fullscreen = false;
    log("fullscreen on=0 size=%dx%d", windowed[2], windowed[3]);
    return;
  }
  int count = 0;
  GLFWmonitor** monitors = glfwGetMonitors(&count);
  std::vector<DesktopRect> rects;
  for (int k = 0; k < count; ++k) {
    DesktopRect r;
    glfwGetMonitorPos(monitors[k], &r.x, &r.y);
    if (const GLFWvidmode* m = glfwGetVideoMode(monitors[k])) {
      r.w = m->width;
      r.h = m->height;
    }
    rects.push_back(r);
  }
  glfwGetWindowPos(window, &windowed[0], &windowed[1]);
  glfwGetWindowSize(window, &windowed[2], &windowed[3]);
  const int k =
      monitor_of_window(DesktopRect{windowed[0], windowed[1], windowed[2], windowed[3]}, rects);
  const GLFWvidmode* mode = k >= 0 ? glfwGetVideoMode(monitors[k]) : nullptr;
  if (!mode) {
    log("fullscreen on=0 reason=\"no monitor\"");
    set_status("Full screen: no monitor found");
    return;
  }
  glfwSetWindowMonitor(window, monitors[k], 0, 0, mode->width, mode->height, mode->refreshRate);
  fullscreen = true;
  const char* name = glfwGetMonitorName(monitors[k]);
  log("fullscreen on=1 size=%dx%d monitor=\"%s\"", mode->width, mode->height, name ? name : "");
  set_status("full screen: F11 goes back to the window");
}

// [SECTION] Scenes ------------------------------------------------------------

MpmScene* App::mpm_scene() {
  Simulation* s = sim.get();
  if (auto* c = dynamic_cast<CoupledSimulation*>(s)) s = c->matter();  // bodies and MPM matter
  auto* m = dynamic_cast<MpmSimulation*>(s);
  return m ? &m->scene() : nullptr;
}

void App::adopt_world_params() {
  if (MpmWorld* w = world()) {
    solver = w->solver;
    materials = w->materials;
    grid_edit = w->grid.nx;
    if (tools.paint_material >= static_cast<int>(materials.size())) tools.paint_material = 0;
  }
  for (auto& f : features) f->pull(*this);
}

bool App::load_scene(const std::string& name_or_path, const std::vector<std::string>& ovr,
                     bool keep_edits) {
  std::unique_ptr<Simulation> next;
  const std::string what = fs::path(name_or_path).stem().string();
  load_cancelled = false;
  try {
    // On a worker thread, with a progress bar and Cancel after a second (render/build_progress.h).
    build_with_progress(*this, what, [&] {
      // The command line's scene keeps its refinement through reloads and resets.
      next = opt.refine > 1 && name_or_path == opt.scene
                 ? load_refined(name_or_path, ovr, opt.refine, backend, opt.threads)
                 : load_simulation(name_or_path, ovr, backend, opt.threads);
    });
  } catch (const Cancelled&) {
    // Not an error: what ran before goes on (the first scene: the window opens empty).
    load_cancelled = true;
    log("load cancelled what=\"%s\"", what.c_str());
    set_status("Building " + what + " was cancelled" +
               (sim ? "; the scene before it runs on" : ""));
    return false;
  } catch (const InputError& e) {
    load_error = e.what();
  } catch (const std::exception& e) {
    load_error = std::string(name_or_path) + ": " + e.what();
  }
  if (!next) {
    log("load error %s", load_error.c_str());
    std::fprintf(stderr, "sandbox: %s\n", load_error.c_str());
    return false;
  }
  adopt_scene(std::move(next), name_or_path, ovr, keep_edits);
  return true;
}

void App::adopt_scene(std::unique_ptr<Simulation> next, const std::string& name_or_path,
                      const std::vector<std::string>& ovr, bool keep_edits) {
  // A reset or re-grid of the same scene keeps the parameters edited in the
  // window; a different scene starts from its file.
  bool same = keep_edits && sim && next->info().path == sim->info().path && next->mpm() &&
              world() && next->mpm()->materials.size() == materials.size();
  scene_reloaded = keep_edits && sim && next->info().path == sim->info().path;
  sim = std::move(next);
  if (same) {
    world()->solver = solver;
    world()->materials = materials;
    grid_edit = world()->grid.nx;
    for (auto& f : features) f->push(*this);
  } else {
    adopt_world_params();
  }
  scene_arg = name_or_path;
  overrides = ovr;
  load_error.clear();
  selected_id = 0;
  selected_row = -1;
  selected_slot = -1;
  host_table_stale = true;
  grab_rows.clear();
  stroke.end();
  paint_sites.clear();
  ke.clear();
  momentum_x.clear();
  momentum_y.clear();
  angular.clear();
  last_diag_time = -1.0;
  pending.fit_view = true;
  view_touched = false;
  grid_ref_speed = particle_ref_speed = 0.f;
  if (color_mode == ColorMode::Speed) range_lo = range_hi = 0.f;  // the speed range starts again
  if (save_path.empty() || !same)
    save_path = (fs::path(out_dir) / (fs::path(sim->info().path).stem().string() + "-edited.json"))
                    .string();
  for (auto& f : features) f->on_scene(*this);
  diag = sim->diagnostics();
  log("scene name=\"%s\" path=%s particles=%zu backend=\"%s\"", sim->info().name.c_str(),
      sim->info().path.c_str(), diag.count, sim->backend_name().c_str());
}

Vec2 App::centroid(const std::vector<uint32_t>& rows) const {
  Vec2 c{};
  if (!sim || rows.empty()) return c;
  const MpmWorld* w = const_cast<App*>(this)->world();
  if (!w) return c;
  double sx = 0, sy = 0;
  size_t n = 0;
  for (uint32_t r : rows) {
    if (r >= w->particles.size()) continue;
    sx += w->particles.x[r].x;
    sy += w->particles.x[r].y;
    ++n;
  }
  if (n) c = Vec2{static_cast<float>(sx / n), static_cast<float>(sy / n)};
  return c;
}

// [SECTION] Sync point: apply everything the UI asked for ---------------------

void App::sync() {
  // A lesson first: it may ask for a comparison and a preset, handled below in this frame.
  // One that does not build when paged to is marked as not loading (reported once) and skipped.
  for (int tries = 0; !pending.open_lesson.empty() && tries < 1000; ++tries) {
    const std::string p = pending.open_lesson;
    const int step = pending.lesson_step;
    pending.open_lesson.clear();
    pending.lesson_step = 0;
    if (open_lesson(p) || step == 0 || load_cancelled)
      break;  // a cancelled lesson is not skipped past
    lesson_titles.catalog.mark_failed(p, load_error);
    step_lesson(step);
  }
  // The comparison view: start, restart (Shift+R), end; presets act on its panes.
  if (pending.compare_end) {
    pending.compare_end = false;
    end_compare();
  }
  if (compare.cmp && pending.reset) {
    pending.reset = false;
    pending.compare_vary = compare.vary;
  }
  if (!pending.compare_vary.empty()) {
    const std::string v = pending.compare_vary;
    pending.compare_vary.clear();
    start_compare(v);
  }
  if (compare.cmp && pending.preset) {
    const Preset p = *pending.preset;
    pending.preset.reset();
    compare.cmp->apply_preset(p,
                              preset_speed);  // (a pending fit of a new comparison stays pending)
    if (color_mode == ColorMode::Speed) range_lo = range_hi = 0.f;  // the speed range starts again
    log("compare preset %s hash0=%016" PRIx64, preset_name(p), log_hash(*compare.cmp->pane(0).sim));
  }
  if (compare.cmp && compare.pending_seek >= 0) {
    const int64_t f = compare.pending_seek;
    compare.pending_seek = -1;
    compare.grabbing = false;  // the restored controls say what is grabbed; a held drag ends here
    const StepStatus st = compare.cmp->seek_frame(f);
    if (!st.ok)
      compare.halted = st.message;
    else
      compare.halted.clear();
    for (auto& cv : compare.curves)
      cv = CompareUi::Curves{};  // the plots refill as the replay runs
    compare.last_sample = -1.0;
    log("compare seek frame=%" PRId64 " hash0=%016" PRIx64 " hash1=%016" PRIx64,
        compare.cmp->frame(), log_hash(*compare.cmp->pane(0).sim),
        log_hash(*compare.cmp->pane(1).sim));
  }
  if (!pending.open_path.empty()) {
    std::string p = pending.open_path;
    pending.open_path.clear();
    // A failed load keeps the current scene running; the error shows in the window.
    std::vector<std::string> base = opt.overrides;
    if (load_scene(p, base)) {
      end_compare();
      set_status("opened " + sim->info().name);
      close_lesson();  // another scene: the lesson's text no longer applies
    }
  }

  if (pending.grid > 0) {
    int n = pending.grid;
    pending.grid = 0;
    // dt follows the cell size (as --refine), so a finer grid keeps the CFL number and does not blow up;
    // the edited parameters go to the new world (adopt_scene keeps the window's copies).
    const MpmWorld* w0 = world();
    const RegridPlan plan =
        plan_regrid(overrides, w0 ? w0->grid.nx : n, n, solver.dt, solver.substeps);
    const SolverParams before = solver;
    solver.dt = plan.dt;
    solver.substeps = plan.substeps;
    if (sim && load_scene(scene_arg, plan.overrides)) {
      log("grid n=%d dt=%.9g substeps=%d", n, static_cast<double>(solver.dt), solver.substeps);
      set_status(plan.status);
    } else {
      solver = before;
    }
  }
  if (pending.reset) {
    pending.reset = false;
    if (sim && load_scene(scene_arg, overrides)) log("reset");
  }
  MpmWorld* w = world();
  if (!pending.backend.empty()) {
    std::string b = pending.backend;
    pending.backend.clear();
    if (w) {
      try {
        // "auto" goes through the CUDA self-check gate (sim/selfcheck/verdict.h).
        const std::string kind = b == "auto" ? choose_auto_backend().kind : b;
        w->set_backend(make_backend(kind, opt.threads));
        backend = b;
        log("backend %s", w->backend_name().c_str());
        for (auto& f : features) f->backend_changed(*this);  // e.g. the rewind's recording
      } catch (const std::exception& e) {
        load_error = "backend " + b + ": " + e.what();
      }
    }
  }
  // The features' edits that may replace the simulation (a drawn body wraps the scene with a rigid
  // world), then the rewind (listed last): a new simulation starts a new recording, a requested
  // seek restores its snapshot here, before the panels' copies are written.
  for (auto& f : features) f->sync(*this);
  w = world();
  if (!w) {
    for (auto& f : features) f->push(*this);  // e.g. the SGF set
    if (sim) rw.ring.note_controls(*sim);     // DEM: parameters, grab, point force
    return;
  }
  // The panels' copies become the world's parameters here, once per frame;
  // the recording logs a change of the world's controls (parameters, grab,
  // point force, heat lamp) with this step, and the edits below as actions.
  w->solver = solver;
  if (w->materials.size() == materials.size()) w->materials = materials;
  for (auto& f : features) f->push(*this);
  rw.ring.note_controls(*sim);
  if (!paint_sites.empty()) {
    RewindAction paint;
    paint.kind = RewindAction::Kind::Paint;
    paint.sites.swap(paint_sites);
    paint.material = tools.paint_material;
    paint.spacing = tools.paint_spacing > 0.f ? tools.paint_spacing : default_paint_spacing(*w);
    paint.velocity = tools.paint_velocity;
    paint.group = paint_group;
    rw.ring.apply(*sim, std::move(paint));
    paint_sites.clear();
    host_table_stale = true;
  }
  if (pending.preset) {
    Preset p = *pending.preset;
    pending.preset.reset();
    Diagnostics before = w->diagnostics();
    RewindAction preset;
    preset.kind = RewindAction::Kind::Preset;
    preset.preset = p;
    preset.speed = preset_speed;
    rw.ring.apply(*sim, std::move(preset));
    grid_ref_speed = particle_ref_speed = 0.f;
    if (color_mode == ColorMode::Speed) range_lo = range_hi = 0.f;  // the speed range starts again
    host_table_stale = true;
    Diagnostics after = w->diagnostics();
    diag = after;
    log("preset %s ke_before=%.9g ke_after=%.9g momentum_before=(%.9g,%.9g) momentum_after=(%.9g,%.9g) "
        "angular_before=%.9g angular_after=%.9g",
        preset_name(p), before.kinetic_energy, after.kinetic_energy, before.momentum[0],
        before.momentum[1], after.momentum[0], after.momentum[1], before.angular_momentum,
        after.angular_momentum);
  }
}

// [SECTION] Stepping under a frame budget ---------------------------------------

void App::step_frame() {
  substeps_last = 0;
  if (compare.cmp) {
    compare_step_frame();
    return;
  }
  if (!sim) return;
  // The SGF timeline's scrub (fast-forward or re-simulate to a step), then a rewind seek or the
  // replay of the recorded future.
  for (auto& f : features)
    if (f->step(*this)) return;
  if (sim->halted()) return;
  bool single = !running && pending.single_frames > 0;
  if (!running && !single) return;
  if (single) --pending.single_frames;
  const int want = std::max(1, sim->substeps_per_frame());
  // N steps exactly one frame's substeps, whatever the cost. Running, the
  // step gets what the rest of the frame leaves of kFrameTargetMs, so a large
  // scene keeps ~60 frames per second; where the rest alone is too slow for
  // that (software OpenGL), the full kStepBudgetMs keeps the simulation moving.
  const bool can_reach = frame_rest_ms < kFrameTargetMs - kMinStepBudgetMs;
  const double budget =
      single      ? 1e30
      : can_reach ? std::clamp(kFrameTargetMs - frame_rest_ms, kMinStepBudgetMs, kStepBudgetMs)
                  : kStepBudgetMs;
  auto t0 = Clock::now();
  int done = 0;
  double elapsed_ms = 0.0;
  while (done < want) {
    // Substeps that fit the rest of the budget (in double: N's budget is 1e30).
    const double fit = ms_per_substep > 0.0 ? (budget - elapsed_ms) / ms_per_substep : 1.0;
    if (done > 0 && fit < 1.0) break;  // the next substep would end past the budget
    const int chunk = static_cast<int>(std::clamp(fit, 1.0, static_cast<double>(want - done)));
    StepStatus st = rw.ring.step(*sim, chunk);  // recorded: the call's size, a snapshot when due
    done += chunk;
    elapsed_ms = 1e3 * seconds_since(t0);
    if (!st.ok) {
      log("halt step=%" PRId64 " particle=%u message=\"%s\"", st.step, st.particle_id,
          st.message.c_str());
      break;
    }
    if (elapsed_ms >= budget) break;
  }
  substeps_last = done;
  for (auto& f : features) f->after_step(*this);  // the rewind logs the frame's hash
  double per = elapsed_ms / std::max(1, done);
  ms_per_substep = ms_per_substep > 0.0 ? 0.8 * ms_per_substep + 0.2 * per : per;
  double ratio = static_cast<double>(done) / want;
  speed_ratio = single ? 1.0 : 0.85 * speed_ratio + 0.15 * ratio;
  if (single) log("step frame substeps=%d want=%d step=%" PRId64, done, want, sim->step_count());
}

// [SECTION] Particle snapshot and upload ------------------------------------------

namespace {

/// Why a feature draws from the host table this frame (Feature::needs_host_rows; null: none
/// does): the interop then leaves the frame to the host path.
const char* needs_host_rows(const App& a) {
  for (const auto& f : a.features)
    if (const char* why = f->needs_host_rows(a)) return why;
  return nullptr;
}

/// The snapshot computes the stress columns only for the modes that show them.
bool wants_stress(const App& a) {
  return a.color_mode == ColorMode::Stress ||
         (a.color_mode == ColorMode::Scalar &&
          (a.scalar_column == kColPressure || a.scalar_column == kColVonMises));
}

/// Row of the particle with this ID in host order among rows [lo, hi), or -1
/// (rows are stable for MPM: painting appends, so the guess lo + id - 1
/// nearly always hits). A scene with MPM matter and DEM grains numbers each
/// kind from 1: the range says which kind is meant.
int64_t row_of_id(const std::vector<uint32_t>& id, uint32_t want, size_t lo = 0,
                  size_t hi = SIZE_MAX) {
  if (want == 0) return -1;
  hi = std::min(hi, id.size());
  const size_t guess = lo + want - 1;
  if (guess < hi && id[guess] == want) return static_cast<int64_t>(guess);
  for (size_t i = lo; i < hi; ++i)
    if (id[i] == want) return static_cast<int64_t>(i);
  return -1;
}

/// Auto colour range from the shown scalar (all of it, or the interop's sample).
void update_auto_range(App& a, const std::vector<float>& v) {
  float lo, hi;
  robust_range(v, 0.005f, a.range_scratch, lo, hi);
  if (a.color_mode == ColorMode::Speed) {
    // Decay shows as colours fading (a lesson's "from the outside in"), and a
    // block come to rest is the slow end, not noise stretched over the bar.
    hold_speed_range(hi, a.range_lo, a.range_hi);
    return;
  }
  if (a.color_mode == ColorMode::Speed || a.color_mode == ColorMode::Stress ||
      a.color_mode == ColorMode::PlasticStrain)
    lo = 0.f;
  if (a.color_mode == ColorMode::VolumeRatio) {
    float d = std::max({std::fabs(lo - 1.f), std::fabs(hi - 1.f), 1e-3f});
    lo = 1.f - d;
    hi = 1.f + d;
  }
  if (!(hi > lo)) hi = lo + 1e-6f;
  // Expand at once, shrink slowly: the legend does not flicker.
  a.range_lo = lo < a.range_lo ? lo : a.range_lo + 0.1f * (lo - a.range_lo);
  a.range_hi = hi > a.range_hi ? hi : a.range_hi + 0.1f * (hi - a.range_hi);
}

/// What the interop kernel writes for the colour mode; null, or why the mode
/// needs the host table.
const char* device_fill(App& a, InteropFrame& f) {
  switch (a.color_mode) {
    case ColorMode::Material: f.fill = InteropFill::Color; return nullptr;
    case ColorMode::Direction: f.fill = InteropFill::Velocity; return nullptr;
    case ColorMode::Speed:
      f.fill = InteropFill::Scalar;
      f.scalar = InteropScalar::Speed;
      return nullptr;
    case ColorMode::VolumeRatio:
      f.fill = InteropFill::Scalar;
      f.scalar = InteropScalar::VolumeRatio;
      return nullptr;
    case ColorMode::Stress:
      f.fill = InteropFill::Scalar;
      f.scalar = InteropScalar::VonMises;
      return nullptr;
    case ColorMode::PlasticStrain:
      f.fill = InteropFill::Scalar;
      f.scalar = InteropScalar::PlasticStrain;
      return nullptr;
    case ColorMode::Temperature:
    case ColorMode::MeltFraction: return "heat colours come from the host table";
    case ColorMode::Scalar:
      if (a.scalar_column < 0 || a.scalar_column >= kMpmColumnCount) a.scalar_column = 0;
      if (a.scalar_column == kColTemperature) return "the temperature comes from the host table";
      f.fill = InteropFill::Scalar;
      switch (a.scalar_column) {
        case kColJ: f.scalar = InteropScalar::VolumeRatio; break;
        case kColJp: f.scalar = InteropScalar::Jp; break;
        case kColPressure: f.scalar = InteropScalar::Pressure; break;
        case kColPlastic: f.scalar = InteropScalar::PlasticStrain; break;
        default: f.scalar = InteropScalar::VonMises; break;
      }
      return nullptr;
    case ColorMode::Group: return "group colours come from the host table";
  }
  return "unknown colour mode";
}

/// Whether this frame may draw through the interop at all: a device
/// backend (`have_view`), the switch on, no failure this session; else the
/// note says why.
bool interop_allowed(App& a, bool have_view) {
  if (!have_view)
    a.interop_note = "CUDA-GL interop: off: CPU backend";
  else if (!a.interop_wanted)
    a.interop_note = "CUDA-GL interop: off: turned off (Stats panel or --interop off)";
  else if (!a.interop.usable())
    a.interop_note = a.interop.note();
  else
    return true;
  return false;
}

/// The renderer's particle buffers for n rows (grown first: the interop's
/// registration is released before their storage is replaced).
InteropTargets interop_targets(App& a, size_t n) {
  if (n > a.particles.buffers().capacity) {
    a.interop.release();  // before reserve() replaces the buffers' storage
    a.particles.reserve(n);
  }
  const ParticleGpuBuffers& b = a.particles.buffers();
  InteropTargets t;
  t.pos = b.pos;
  t.vel = b.vel;
  t.scalar = b.scalar;
  t.color = b.color;
  t.radius = b.radius;
  t.capacity = b.capacity;
  return t;
}

/// After a fill that declined: why (logged once when it disabled the interop).
void interop_declined(App& a) {
  if (a.interop.usable()) {
    a.interop_note = "CUDA-GL interop: off: the device arrays are not ready";
  } else {
    a.interop_note = a.interop.note();
    a.log("interop off reason=\"%s\"", a.interop_note.c_str());
  }
}

/// The host table (IDs, materials, groups for picking and the panels): a full
/// device -> host copy, only when stale (and on demand, App::refresh_host_table).
template <class Rebuild>
void refresh_stale_table(App& a, size_t n, Rebuild&& rebuild) {
  if (a.host_table_stale || a.table.size() != n || a.host_table_time < 0.0) {
    rebuild();
    a.host_table_time = glfwGetTime();
    a.host_table_stale = false;
  }
}

/// Draws this frame's particles through the CUDA-GL interop when it can:
/// buffers written on the device in slot order, the selected particle's host
/// row patched from the device every frame. The host table is rebuilt only
/// when it is stale (an edit, a load) or a tool asks (refresh_host_table):
/// nothing per particle comes back per frame. False: the caller takes the host
/// path (interop_note says why).
bool snapshot_interop(App& a, MpmWorld& w, bool stress) {
  const DeviceParticleView* view = w.backend().device_view();
  if (!interop_allowed(a, view != nullptr)) return false;
  InteropFrame f;
  const char* why = device_fill(a, f);
  if (!why && a.show_particle_velocity) why = "particle velocity arrows need the host table";
  if (!why) why = needs_host_rows(a);
  MpmParticles& p = w.particles;
  const size_t n = p.size();
  if (!why && n == 0) why = "no particles";
  if (!why && view->count != n) why = "the device arrays are not current";
  if (why) {
    a.interop_note = std::string("CUDA-GL interop: off: ") + why;
    return false;
  }

  // The selection follows its ID through the host's ID column (never
  // changed on the device, so current without a sync).
  a.selected_row = row_of_id(p.id, a.selected_id);
  const InteropTargets t = interop_targets(a, n);
  f.materials = w.materials.data();
  f.material_count = static_cast<int>(w.materials.size());
  f.count = n;
  f.max_samples = f.fill == InteropFill::Scalar && a.auto_range ? kMaxInteropSamples : 0;
  f.selected = a.selected_row;
  if (!a.interop.fill(*view, t, f, a.interop_result)) {
    interop_declined(a);
    return false;
  }
  a.particles.set_count(n, a.interop_result.radius_max);
  a.interop_frame = true;
  a.interop_note = a.interop.note();
  refresh_stale_table(a, n, [&] { mpm_snapshot(w, a.table, stress); });

  // The selected particle, current every frame for the inspector and the
  // affine overlay: its state came back with its slot. Writing it into the
  // host arrays is safe: they are either current (then it is the same state)
  // or stale, and every host edit syncs them before changing anything.
  const InteropResult& r = a.interop_result;
  if (r.selected_slot >= 0 && a.selected_row >= 0) {
    a.selected_slot = r.selected_slot;
    const size_t i = static_cast<size_t>(a.selected_row);
    p.x[i] = r.selected.x;
    p.v[i] = r.selected.v;
    p.C[i] = r.selected.C;
    p.F[i] = r.selected.F;
    p.J[i] = r.selected.J;
    p.Jp[i] = r.selected.Jp;
    ParticleTable& tb = a.table;
    if (i < tb.size() && tb.extra.size() == static_cast<size_t>(kMpmColumnCount) &&
        p.material[i] < w.materials.size()) {
      tb.x[i] = p.x[i].x;
      tb.y[i] = p.x[i].y;
      tb.vx[i] = p.v[i].x;
      tb.vy[i] = p.v[i].y;
      tb.extra[kColJ][i] = display_volume_ratio(w.materials[p.material[i]], p.F[i], p.J[i]);
      tb.extra[kColJp][i] = p.Jp[i];
      if (stress)
        display_pressure_mises(particle_cauchy_stress(w, i), tb.extra[kColPressure][i],
                               tb.extra[kColVonMises][i]);
    }
  }
  if (f.fill == InteropFill::Scalar && a.auto_range) update_auto_range(a, r.sample);
  return true;
}

/// What the DEM fill writes for the colour mode; null, or why the mode needs
/// the host table. The host table's DEM columns are "omega" and "theta".
const char* dem_device_fill(App& a, DemFillFrame& f) {
  switch (a.color_mode) {
    case ColorMode::Material: f.column = DemFillColumn::Color; return nullptr;
    case ColorMode::Group:
      // The SGF groups' colours (render/cpu/group_table.h) come from the host table; the scene's
      // group numbers take the palette on the device.
      if (!a.sgf.set.groups.empty()) return "SGF group colours come from the host table";
      f.column = DemFillColumn::Color;
      f.group_colors = true;
      return nullptr;
    case ColorMode::Direction: f.column = DemFillColumn::Velocity; return nullptr;
    case ColorMode::Speed:
      f.column = DemFillColumn::Scalar;
      f.scalar = DemScalar::Speed;
      return nullptr;
    case ColorMode::Scalar:
      if (a.scalar_column < 0 || a.scalar_column >= 2) a.scalar_column = 0;
      f.column = DemFillColumn::Scalar;
      f.scalar = a.scalar_column == 0 ? DemScalar::Omega : DemScalar::Theta;
      return nullptr;
    case ColorMode::VolumeRatio:
    case ColorMode::Stress:
    case ColorMode::PlasticStrain:
    case ColorMode::Temperature:
    case ColorMode::MeltFraction: return "the colour mode is not a DEM field";
  }
  return "unknown colour mode";
}

/// The DEM counterpart of snapshot_interop: a CUDA DEM world's sprites filled
/// on the device (rows in host order), its selected particle and bonds read
/// back every frame, the host table rebuilt only when stale or on demand.
bool snapshot_dem_interop(App& a, dem::DemWorld& d) {
  const dem::DemDeviceView* view = d.backend().device_view();
  if (!interop_allowed(a, view != nullptr)) return false;
  DemFillFrame f;
  const char* why = dem_device_fill(a, f);
  if (!why && a.show_particle_velocity) why = "particle velocity arrows need the host table";
  if (!why) why = needs_host_rows(a);
  if (!why && a.dem_view.contact_chains)
    why = "contact force chains are drawn from a host copy of every contact";
  const dem::DemParticles& p = d.particles;
  const size_t n = p.size();
  if (!why && n == 0) why = "no particles";
  if (!why && (view->count != n || view->bond_count != d.bonds.size()))
    why = "the device arrays are not current";
  if (!why && d.materials.empty()) why = "no materials";
  if (why) {
    a.interop_note = std::string("CUDA-GL interop: off: ") + why;
    return false;
  }

  // The selection follows its ID through the host's ID column (never changed
  // on the device). DEM rows are indices: the buffers' rows are host rows.
  a.selected_row = row_of_id(p.id, a.selected_id);
  const InteropTargets t = interop_targets(a, n);
  a.dem_view.material_rgb.resize(3 * d.materials.size());
  for (size_t m = 0; m < d.materials.size(); ++m)
    for (size_t c = 0; c < 3; ++c) a.dem_view.material_rgb[3 * m + c] = d.materials[m].color[c];
  f.material_rgb = a.dem_view.material_rgb.data();
  f.material_count = static_cast<int>(d.materials.size());
  for (int g = 0; g < kDemGroupColors; ++g) {
    const std::array<float, 3> c = group_rgb(static_cast<unsigned>(g));
    for (size_t k = 0; k < 3; ++k) f.group_rgb[g][k] = c[k];
  }
  f.count = n;
  f.max_samples = f.column == DemFillColumn::Scalar && a.auto_range ? kDemMaxSamples : 0;
  f.selected = a.selected_row;
  f.bond = d.bond;
  if (!a.interop.fill_dem(*view, t, f, a.dem_view.fill)) {
    interop_declined(a);
    return false;
  }
  a.particles.set_count(n, a.dem_view.fill.radius_max);
  a.interop_frame = true;
  a.interop_note = a.interop.note();
  a.selected_slot = a.selected_row;
  a.dem_row0 = 0;
  a.sgf_rows = SIZE_MAX;

  refresh_stale_table(a, n, [&] { a.sim->table(a.table); });  // synced
  a.dem_view.selected = a.dem_view.fill.selected;
  if (f.column == DemFillColumn::Scalar && a.auto_range)
    update_auto_range(a, a.dem_view.fill.sample);
  return true;
}

}  // namespace

void App::refresh_host_table() {
  if (!sim || !interop_frame) return;  // the host path rebuilt it for the last frame
  if (MpmWorld* w = world())
    mpm_snapshot(*w, table, wants_stress(*this));
  else
    sim->table(table);  // a DEM world: synced
  host_table_time = glfwGetTime();
  host_table_stale = false;
}

void App::snapshot() {
  interop_frame = false;
  selected_slot = -1;
  if (compare.cmp) {
    compare_snapshot();
    return;
  }
  if (!sim) {
    table = ParticleTable{};
    particles.upload(0, nullptr, nullptr, nullptr, nullptr, nullptr);
    interop_note = "CUDA-GL interop: off: no scene";
    return;
  }
  MpmWorld* w = world();
  bool stress = wants_stress(*this);
  const double now = glfwGetTime();
  bool diag_due = last_diag_time < 0.0 || now - last_diag_time >= kDiagPeriod;
  dem::DemWorld* d = dem_world();
  if (!w && !d) interop_note = "CUDA-GL interop: off: no particles";
  // DEM grains beside the MPM matter: drawn from the host table, after the matter's rows.
  auto* coupled = dynamic_cast<CoupledSimulation*>(sim.get());
  Simulation* grains = coupled ? coupled->grains() : nullptr;
  if (w && grains)
    interop_note = "CUDA-GL interop: off: the scene has DEM grains beside the MPM matter";
  bool device = false;
  if (w && !grains)
    device = snapshot_interop(*this, *w, stress);
  else if (!w && d)
    device = snapshot_dem_interop(*this, *d);
  if (!device) {
    if (w)
      mpm_snapshot(*w, table, stress);
    else
      sim->table(table);
    // A selected grain stays a grain (the two kinds' IDs overlap).
    const bool grain_selected = dem_row0 > 0 && selected_row >= static_cast<int64_t>(dem_row0);
    dem_row0 = 0;
    sgf_rows = SIZE_MAX;
    if (w && grains) {
      const size_t n0 = table.size();
      dem_row0 = sgf_rows = n0;
      grains->table(grain_table);
      append_table_rows(table, grain_table, static_cast<uint16_t>(w->materials.size()));
      for (auto& col :
           table.extra)  // the MPM's columns do not apply to grains: 0 for the colour maps
        for (size_t i = n0; i < col.size(); ++i)
          if (std::isnan(col[i])) col[i] = 0.f;
      for (auto& col : table.extra)
        for (size_t i = 0; i < n0 && i < col.size(); ++i)
          if (std::isnan(col[i])) col[i] = 0.f;
    }
    host_table_time = now;
    host_table_stale = false;
    const size_t n = table.size();

    // Which column a scalar mode shows.
    const std::vector<float>* column = nullptr;
    if (color_mode == ColorMode::VolumeRatio) {
      int k = find_column(table, "J");
      if (k >= 0) column = &table.extra[static_cast<size_t>(k)];
    } else if (color_mode == ColorMode::PlasticStrain) {
      int k = find_column(table, "plastic strain");
      if (k >= 0) column = &table.extra[static_cast<size_t>(k)];
    } else if (color_mode == ColorMode::Temperature) {
      int k = find_column(table, "temperature");
      if (k >= 0) column = &table.extra[static_cast<size_t>(k)];
    } else if (color_mode == ColorMode::Stress) {
      int k = find_column(table, "von Mises");
      if (k >= 0) column = &table.extra[static_cast<size_t>(k)];
    } else if (color_mode == ColorMode::Scalar) {
      if (scalar_column >= static_cast<int>(table.extra.size())) scalar_column = 0;
      if (!table.extra.empty()) column = &table.extra[static_cast<size_t>(scalar_column)];
    }

    xy.resize(2 * n);
    for (size_t i = 0; i < n; ++i) {
      xy[2 * i] = table.x[i];
      xy[2 * i + 1] = table.y[i];
    }
    const float* vel = nullptr;
    const float* sc = nullptr;
    const uint8_t* col = nullptr;
    if (color_mode == ColorMode::Direction) {
      vxy.resize(2 * n);
      for (size_t i = 0; i < n; ++i) {
        vxy[2 * i] = table.vx[i];
        vxy[2 * i + 1] = table.vy[i];
      }
      vel = vxy.data();
    } else if (color_mode == ColorMode::Speed || column) {
      scalar.resize(n);
      if (color_mode == ColorMode::Speed)
        for (size_t i = 0; i < n; ++i)
          scalar[i] = std::sqrt(table.vx[i] * table.vx[i] + table.vy[i] * table.vy[i]);
      else
        std::copy(column->begin(), column->end(), scalar.begin());
      sc = scalar.data();
      if (color_mode == ColorMode::Temperature)
        update_temperature_range(scalar);
      else if (auto_range)
        update_auto_range(*this, scalar);
    } else {
      rgba.resize(4 * n);
      // Melt fraction (MPM): the host arrays are current (mpm_snapshot synced them), same rows as the table.
      const bool melt = color_mode == ColorMode::MeltFraction && w && w->particles.melt.size() == n;
      if (melt) melt_roles(w->materials, melt_role);
      const Colormap melt_map = cmap[static_cast<size_t>(ColorMode::MeltFraction)];
      // Neighbouring rows mostly share a colour (a material's or a group's): bytes packed once per run.
      std::array<float, 3> last{-1.f, -1.f, -1.f};
      uint8_t packed[3] = {0, 0, 0};
      const GroupTable* groups = color_mode == ColorMode::Group ? &group_table() : nullptr;
      for (size_t i = 0; i < n; ++i) {
        std::array<float, 3> c = groups && i < groups->size() ? groups->rgb(i) : table.color[i];
        if (melt) {
          const size_t m = table.material[i];
          c = melt_rgb(melt_map,
                       melt_display_value(m < melt_role.size() ? melt_role[m] : MeltRole::Inert,
                                          w->particles.melt[i]));
        }
        if (c != last) {
          for (size_t k = 0; k < 3; ++k)
            packed[k] = static_cast<uint8_t>(std::lround(std::clamp(c[k], 0.f, 1.f) * 255.f));
          last = c;
        }
        rgba[4 * i] = packed[0];
        rgba[4 * i + 1] = packed[1];
        rgba[4 * i + 2] = packed[2];
        rgba[4 * i + 3] = 255;
      }
      col = rgba.data();
    }
    if (n > particles.buffers().capacity) interop.release();  // before upload() grows the buffers
    particles.upload(n, xy.data(), vel, sc, col, table.radius.data());

    // The selection follows its ID (rows are stable for MPM: painting appends).
    selected_row = dem_row0 == 0    ? row_of_id(table.id, selected_id)
                   : grain_selected ? row_of_id(table.id, selected_id, dem_row0)
                                    : row_of_id(table.id, selected_id, 0, dem_row0);
    // A DEM world's selected particle from the host arrays (synced by the table).
    dem_view.selected = DemSelected{};
    if (d && selected_row >= static_cast<int64_t>(dem_row0)) {
      dem_view.bond_index.update(*d);
      dem_selected_from_host(*d, dem_view.bond_index,
                             static_cast<uint32_t>(selected_row - static_cast<int64_t>(dem_row0)),
                             dem_view.selected);
    }
  }

  if (w && (show_grid_velocity || show_grid))
    w->read_grid(grid_spec, grid_mass, grid_vel);  // guarded: a CUDA error falls back
  for (auto& f : features) f->sample(*this, now);

  // Diagnostics for the plots, sampled at a fixed rate (a CUDA world sums on
  // the device: MpmWorld::totals).
  if (diag_due) {
    last_diag_time = now;
    diag = sim->totals();  // no state hash: the plots need the totals only
    if (running || ke.count == 0) {
      ke.push(static_cast<float>(diag.kinetic_energy));
      momentum_x.push(static_cast<float>(diag.momentum[0]));
      momentum_y.push(static_cast<float>(diag.momentum[1]));
      angular.push(static_cast<float>(diag.angular_momentum));
    }
  }
}

// [SECTION] Input ------------------------------------------------------------------

ScreenRect App::scene_area() const {
  ScreenRect r;
  r.x = side_left();
  r.y = 0.f;
  r.w = std::max(64.f, cam.width() - side_left() - side_right());
  float strips = 0.f;  // the SGF timeline, the rewind strip
  for (const auto& f : features) strips += f->strip_height(*this);
  r.h = std::max(64.f, cam.height() - strips);
  return r;
}

ScreenRect App::scene_viewport() {
  const ScreenRect area = scene_area();
  Simulation* shown = compare.cmp ? compare.cmp->pane(0).sim.get() : sim.get();
  if (!shown) {
    overlay_dock = OverlayDock{area, ScreenRect{area.x, area.y + area.h, area.w, 0.f}, false};
    return area;
  }
  Vec2 lo, hi;
  shown->bounds(lo, hi);
  const float aspect = std::max(hi.x - lo.x, 1e-6f) / std::max(hi.y - lo.y, 1e-6f);
  const int panes = compare.cmp ? static_cast<int>(compare.cmp->size()) : 1;
  // How large the scene is drawn in a content rectangle: fitted whole, or in the comparison's tiling.
  const float pane_gap = compare_pane_gap(), band = compare.cmp ? compare_label_band() : 0.f;
  const auto drawn = [aspect, panes, pane_gap, band](const ScreenRect& r) {
    if (panes > 1) {
      const Tiling t = choose_tiling(panes, r.w, r.h, aspect, pane_gap, band);
      return t.scene_w * t.scene_h;
    }
    const float w = std::min(r.w, r.h * aspect);
    return w * (w / aspect);
  };
  // The dock is kept while the legends fit it and the area and what is shown stay the same.
  const OverlayKey key{area.x, area.y, area.w, area.h, shown, panes};
  if (key == overlay_key &&
      overlay_boxes_fit(overlay_dock, overlay_boxes, overlay_gap(), overlay_check))
    return overlay_dock.content;
  overlay_key = key;
  overlay_dock = split_overlay_dock(area, overlay_boxes, overlay_gap(), drawn);
  return overlay_dock.content;
}

void App::handle_input() {
  ImGuiIO& io = ImGui::GetIO();
  last_mouse = mouse;
  mouse = Vec2{io.MousePos.x, io.MousePos.y};
  const bool mouse_valid = io.MousePos.x > -1e30f;
  const Vec2 wm = cam.screen_to_world(mouse);
  MpmWorld* w = world();

  // Keys (the help overlay, H, lists them all).
  std::vector<KeyPress> keys;
  keys.swap(key_queue);
  if (!io.WantCaptureKeyboard) {
    auto pressed = [&keys](int key) {
      for (const KeyPress& k : keys)
        if (k.key == key) return true;
      return false;
    };
    auto mods_of = [&keys](int key) {
      for (const KeyPress& k : keys)
        if (k.key == key) return k.mods;
      return 0;
    };
    if (pressed(GLFW_KEY_SPACE)) {
      running = !running;
      log_run_state();
    }
    if (pressed(GLFW_KEY_N)) {
      if (running) {
        running = false;
        log("pause");
      }
      pending.single_frames++;
    }
    if (pressed(GLFW_KEY_R)) {
      if (mods_of(GLFW_KEY_R) & GLFW_MOD_SHIFT)
        pending.reset = true;
      else
        pending.preset = Preset::Rotation;
    }
    if (pressed(GLFW_KEY_T)) pending.preset = Preset::Translation;
    if (pressed(GLFW_KEY_S)) pending.preset = Preset::Shear;
    if (pressed(GLFW_KEY_D)) pending.preset = Preset::Dilation;
    if (pressed(GLFW_KEY_A) && w) {
      solver.transfer = solver.transfer == Transfer::PIC ? Transfer::APIC : Transfer::PIC;
      log("transfer %s", transfer_name(solver.transfer));
    }
    // The features' keys (render/feature.h): a key a feature takes is not seen by the keys below.
    keys.erase(std::remove_if(keys.begin(), keys.end(),
                              [this](const KeyPress& k) {
                                for (auto& f : features)
                                  if (f->key(*this, k.key, k.mods)) return true;
                                return false;
                              }),
               keys.end());
    if (pressed(GLFW_KEY_F12)) {
      if (mods_of(GLFW_KEY_F12) & GLFW_MOD_SHIFT)
        pending.scene_shot = true;
      else
        pending.screenshot = true;
    }
    if (pressed(GLFW_KEY_F11)) toggle_fullscreen();
    if (pressed(GLFW_KEY_TAB)) {
      panels_hidden = !panels_hidden;
      log("panels hidden=%d", panels_hidden ? 1 : 0);
      if (panels_hidden) set_status("panels hidden: Tab shows them again");
    }
    if (pressed(GLFW_KEY_PAGE_DOWN)) step_lesson(+1);  // a presenter's remote sends Page Down / Up
    if (pressed(GLFW_KEY_PAGE_UP)) step_lesson(-1);
    if (pressed(GLFW_KEY_F2)) {
      projector = !projector;
      ui_rebuild = true;
    }
    // Ctrl+= / Ctrl++ (keypad) / Ctrl+- / Ctrl+0: the UI scale, 10 % a press.
    const bool ctrl_scale =
        (mods_of(GLFW_KEY_EQUAL) | mods_of(GLFW_KEY_KP_ADD) | mods_of(GLFW_KEY_MINUS) |
         mods_of(GLFW_KEY_KP_SUBTRACT) | mods_of(GLFW_KEY_0)) &
        GLFW_MOD_CONTROL;
    if (ctrl_scale) {
      const float before = user_scale;
      if (pressed(GLFW_KEY_EQUAL) || pressed(GLFW_KEY_KP_ADD))
        user_scale = std::min(3.f, user_scale * 1.1f);
      if (pressed(GLFW_KEY_MINUS) || pressed(GLFW_KEY_KP_SUBTRACT))
        user_scale = std::max(0.6f, user_scale / 1.1f);
      if (pressed(GLFW_KEY_0)) user_scale = 1.f;
      if (user_scale != before) ui_rebuild = true;
    }
    if (pressed(GLFW_KEY_F9)) pending.toggle_record = true;
    if (pressed(GLFW_KEY_H)) show_help = !show_help;
    if (pressed(GLFW_KEY_ESCAPE)) {
      if (!show_help && compare.cmp) pending.compare_end = true;
      show_help = false;
    }
    if (pressed(GLFW_KEY_F)) pending.fit_view = true;
    if (pressed(GLFW_KEY_G)) show_grid = !show_grid;
    if (pressed(GLFW_KEY_V)) show_grid_velocity = !show_grid_velocity;
    if (pressed(GLFW_KEY_Q) && (mods_of(GLFW_KEY_Q) & GLFW_MOD_CONTROL))
      glfwSetWindowShouldClose(window, 1);
    for (int k = 0; k < kToolCount; ++k) {
      if (pressed(GLFW_KEY_1 + k)) {
        tools.tool = static_cast<Tool>(k);
        log("tool %s", tool_name(tools.tool));
      }
    }
  }

  const bool over_scene = mouse_valid && !io.WantCaptureMouse && cam.viewport().contains(mouse);
  if (compare.cmp) {
    compare_input(over_scene);
    keys.clear();
    key_queue.swap(keys);  // keep the storage: no allocation per frame
    return;
  }

  // Wheel: zoom about the cursor.
  if (over_scene && io.MouseWheel != 0.f) {
    cam.zoom_about(mouse, std::pow(1.15f, io.MouseWheel));
    view_touched = true;
    log_view();
  }
  // Right drag: pan.
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Right) && over_scene) right_down = true;
  if (right_down) {
    if (io.MouseDown[ImGuiMouseButton_Right]) {
      Vec2 d = mouse - last_mouse;
      if (d.x != 0.f || d.y != 0.f) {
        cam.pan(d);
        view_touched = true;
      }
    } else {
      right_down = false;
      log_view();
    }
  }

  // Left drag: the current tool.
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && over_scene) {
    left_down = true;
    rw.playback =
        false;  // a press over the scene takes the tools back (an edit behind the head is a branch)
    // Picking, grabbing, selecting and painting read the host table: make it
    // what the last frame showed (a sync when the interop drew it).
    refresh_host_table();
    // A press a feature takes (a body picked or grabbed, the Body tool) is that feature's alone.
    bool taken = false;
    for (auto& f : features)
      if (f->press(*this, wm)) {
        taken = true;
        break;
      }
    if (!taken && (tools.tool == Tool::Pick || tools.tool == Tool::Grab)) {
      // Picking is exact: the row's ID is the ID the runner's dumps carry.
      float slack = 3.f / cam.scale();
      int64_t row = pick_particle(table, wm, slack);
      if (row >= 0) {
        selected_id = table.id[static_cast<size_t>(row)];
        selected_row = row;
        log("pick id=%u row=%" PRId64 " x=%.9g y=%.9g mouse=(%.1f,%.1f)", selected_id, row,
            static_cast<double>(table.x[static_cast<size_t>(row)]),
            static_cast<double>(table.y[static_cast<size_t>(row)]), static_cast<double>(mouse.x),
            static_cast<double>(mouse.y));
      } else if (tools.tool == Tool::Pick) {
        selected_id = 0;
        selected_row = -1;
        log("pick none x=%.9g y=%.9g", static_cast<double>(wm.x), static_cast<double>(wm.y));
      }
    }
    if (tools.tool == Tool::Grab && w && !taken) {
      particles_within(table, wm, tools.radius, grab_rows);
      if (!grab_rows.empty()) {
        w->grab_stiffness = tools.grab_stiffness;
        w->grab_begin(grab_rows, wm);
        grab_centroid_start = centroid(grab_rows);
        log("grab begin n=%zu target=(%.9g,%.9g) centroid=(%.9g,%.9g)", grab_rows.size(),
            static_cast<double>(wm.x), static_cast<double>(wm.y),
            static_cast<double>(grab_centroid_start.x), static_cast<double>(grab_centroid_start.y));
      }
    }
    if ((tools.tool == Tool::Attract || tools.tool == Tool::Repel) && w)
      log("%s begin x=%.9g y=%.9g", tool_name(tools.tool), static_cast<double>(wm.x),
          static_cast<double>(wm.y));
    if (tools.tool == Tool::Paint && w) {
      uint16_t g = 0;
      for (uint16_t x : w->particles.group) g = std::max(g, x);
      paint_group = static_cast<uint16_t>(w->particles.size() ? g + 1 : 0);
      float h = tools.paint_spacing > 0.f ? tools.paint_spacing : default_paint_spacing(*w);
      Vec2 lo, hi;
      paintable_region(*w, lo, hi);
      stroke.begin(wm, h, tools.radius, lo, hi, &table, paint_sites);
    }
  }
  if (left_down) {
    if (io.MouseDown[ImGuiMouseButton_Left]) {
      if (w && w->grabbing()) w->grab_move(wm);
      for (auto& f : features) f->drag(*this, wm);
      if (stroke.active()) stroke.extend(wm, paint_sites);
    } else {
      left_down = false;
      if (tools.tool == Tool::Select || (w && w->grabbing())) refresh_host_table();
      if (w && w->grabbing()) {
        grab_rows = w->grab_indices();  // resampling passes may have moved the rows
        Vec2 c = centroid(grab_rows);
        log("grab end n=%zu target=(%.9g,%.9g) centroid=(%.9g,%.9g) moved=%.9g", grab_rows.size(),
            static_cast<double>(wm.x), static_cast<double>(wm.y), static_cast<double>(c.x),
            static_cast<double>(c.y), static_cast<double>(length(c - grab_centroid_start)));
        w->grab_end();
        grab_rows.clear();
      }
      if (stroke.active()) {
        log("paint n=%zu material=%d", stroke.emitted(), tools.paint_material);
        stroke.end();
      }
      if ((tools.tool == Tool::Attract || tools.tool == Tool::Repel) && w)
        log("%s end", tool_name(tools.tool));
      for (auto& f : features) f->release(*this, wm);
    }
  }
  // While the shown state comes from the rewind, the tools leave the world's
  // point force and lamps as recorded until a button is pressed over the scene.
  const bool tools_live = !rw.playback;
  if (sim && tools_live) sim->set_point_force(tool_point_force(tools, wm, left_down));
  if (tools_live)
    for (auto& f : features) f->pointer(*this, wm, over_scene);
  keys.clear();
  key_queue.swap(keys);  // keep the storage: no allocation per frame
}

// [SECTION] Scene drawing ------------------------------------------------------

void App::draw_scene() {
  int fbw = 0, fbh = 0;
  glfwGetFramebufferSize(window, &fbw, &fbh);
  glViewport(0, 0, fbw, fbh);
  if (projector)
    glClearColor(0.f, 0.f, 0.f, 1.f);
  else
    glClearColor(0.043f, 0.047f, 0.059f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (!sim) return;
  if (compare.cmp) {
    compare_draw();
    return;
  }
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  float view[16];
  cam.world_to_ndc(view);
  const float px = 1.f / cam.scale();  // one logical pixel in world units

  // Under the particles: the domain, its boundary layer and the grid.
  Vec2 lo, hi;
  sim->bounds(lo, hi);
  under.clear(px);
  under.rect(lo, hi, pack_rgba(0.075f, 0.082f, 0.102f));
  MpmWorld* w = world();
  if (w) {
    float b = w->grid.dx * static_cast<float>(w->solver.boundary_nodes);
    uint32_t band = pack_rgba(0.11f, 0.10f, 0.12f);
    under.rect(lo, Vec2{hi.x, lo.y + b}, band);
    under.rect(Vec2{lo.x, hi.y - b}, hi, band);
    under.rect(Vec2{lo.x, lo.y + b}, Vec2{lo.x + b, hi.y - b}, band);
    under.rect(Vec2{hi.x - b, lo.y + b}, Vec2{hi.x, hi.y - b}, band);
    if (show_grid) {
      const GridSpec& g = w->grid;
      float cell_px = g.dx * cam.scale();
      if (cell_px >= 3.f) {
        float a = std::min(0.35f, 0.08f + 0.01f * cell_px);
        uint32_t minor = pack_rgba(0.55f, 0.62f, 0.75f, a);
        for (int i = 0; i <= g.nx; ++i) {
          float x = g.origin.x + g.dx * i;
          under.line(Vec2{x, lo.y}, Vec2{x, hi.y}, 1.f, minor);
        }
        for (int j = 0; j <= g.ny; ++j) {
          float y = g.origin.y + g.dx * j;
          under.line(Vec2{lo.x, y}, Vec2{hi.x, y}, 1.f, minor);
        }
      }
    }
  }
  under.rect_outline(lo, hi, 1.5f, pack_rgba(0.33f, 0.37f, 0.45f));
  for (auto& f : features) f->draw_under(*this);
  under.draw(view);

  // The particles.
  ParticleShade shade = ParticleShade::Base;
  if (color_mode == ColorMode::Direction)
    shade = ParticleShade::Direction;
  else if (color_mode != ColorMode::Material && color_mode != ColorMode::Group &&
           color_mode != ColorMode::MeltFraction)
    shade = ParticleShade::Scalar;
  if (shade == ParticleShade::Scalar && table.extra.empty() && color_mode != ColorMode::Speed)
    shade = ParticleShade::Base;
  particles.set_colormap(cmap[static_cast<size_t>(color_mode)]);
  // The interop writes rows in the backend's slot order: the ring goes on the selected particle's slot.
  particles.set_sprite_path(sprite_path);
  particles.draw(view, cam.framebuffer_scale(), projector ? 1.3f * sprite_scale : sprite_scale,
                 shade, range_lo, range_hi, interop_frame ? selected_slot : selected_row);

  // Over the particles: the features' (rigid bodies, ...), velocity arrows, the selected particle's
  // affine field, the brush.
  over.clear(px);
  for (auto& f : features) f->draw_over(*this);
  const uint32_t halo =
      pack_rgba(0.02f, 0.02f, 0.03f, 0.55f);  // dark edge: arrows read on any colour
  const float dx = w ? w->grid.dx : 0.02f * (hi.x - lo.x);
  if (w && show_grid_velocity && !grid_mass.empty()) {
    // Arrows of the grid velocity after the last grid update; the fastest
    // speed since the last load or preset is drawn 1.5 cells long.
    float vmax = 0.f;
    for (size_t k = 0; k < grid_mass.size(); ++k)
      if (grid_mass[k] > 0.f) vmax = std::max(vmax, length(grid_vel[k]));
    grid_ref_speed = std::max(grid_ref_speed, vmax);
    if (vmax > 0.f) {
      float s = 1.5f * grid_spec.dx / grid_ref_speed;
      int nx = grid_spec.nodes_x();
      uint32_t col = pack_rgba(0.55f, 0.85f, 1.0f, 0.9f);
      for (size_t k = 0; k < grid_mass.size(); ++k) {
        if (!(grid_mass[k] > 0.f)) continue;
        int i = static_cast<int>(k % static_cast<size_t>(nx)),
            j = static_cast<int>(k / static_cast<size_t>(nx));
        Vec2 p = grid_spec.origin + Vec2{grid_spec.dx * i, grid_spec.dx * j};
        over.disc(p, 1.5f * px, col, 8);
        if (length(grid_vel[k]) * s * cam.scale() > 1.f) {
          over.arrow(p, p + s * grid_vel[k], 3.f, halo);
          over.arrow(p, p + s * grid_vel[k], 1.4f, col);
        }
      }
    }
  }
  if (show_particle_velocity && table.size() > 0) {
    // At most ~3000 arrows so the field stays readable.
    size_t stride = std::max<size_t>(1, table.size() / 3000);
    float vmax = 0.f;
    for (size_t i = 0; i < table.size(); i += stride)
      vmax = std::max(vmax, std::hypot(table.vx[i], table.vy[i]));
    particle_ref_speed = std::max(particle_ref_speed, vmax);
    if (vmax > 0.f) {
      float s = 2.f * dx / particle_ref_speed;
      uint32_t col = pack_rgba(1.f, 1.f, 1.f, 0.75f);
      for (size_t i = 0; i < table.size(); i += stride) {
        Vec2 p{table.x[i], table.y[i]};
        Vec2 v{table.vx[i], table.vy[i]};
        if (length(v) * s * cam.scale() > 1.f) {
          over.arrow(p, p + s * v, 2.8f, halo);
          over.arrow(p, p + s * v, 1.2f, col);
        }
      }
    }
  }
  if (w && show_affine && selected_row >= 0 &&
      static_cast<size_t>(selected_row) < w->particles.size()) {
    // The selected particle's affine field C (x - x_p) on a 5x5 lattice of
    // grid-cell spacing (the quadratic kernel's reach): what APIC carries to
    // the grid and PIC discards. Normalised so the longest arrow is 0.9 dx.
    size_t r = static_cast<size_t>(selected_row);
    Vec2 xp = w->particles.x[r];
    Mat2 C = w->particles.C[r];
    float h = w->grid.dx;
    float cmax = 0.f;
    for (int j = -2; j <= 2; ++j)
      for (int i = -2; i <= 2; ++i) cmax = std::max(cmax, length(C * Vec2{h * i, h * j}));
    const bool pic = solver.transfer == Transfer::PIC;
    over.circle(xp, 2.5f * h, 3.f, pack_rgba(0.f, 0.f, 0.f, 0.35f), 64);
    over.circle(xp, 2.5f * h, 1.2f, pack_rgba(1.f, 0.36f, 0.72f, pic ? 0.45f : 0.9f), 64);
    if (cmax > 0.f) {
      float s = 0.9f * h / cmax;
      uint32_t col = pack_rgba(1.f, 0.36f, 0.72f, pic ? 0.5f : 1.f);
      for (int j = -2; j <= 2; ++j)
        for (int i = -2; i <= 2; ++i) {
          Vec2 d{h * i, h * j};
          Vec2 v = C * d;
          if (length(v) * s * cam.scale() > 1.f) {
            over.arrow(xp + d, xp + d + s * v, 3.4f, halo);
            over.arrow(xp + d, xp + d + s * v, 1.8f, col);
          }
        }
    }
  }
  if (cam.viewport().contains(mouse) && !ImGui::GetIO().WantCaptureMouse &&
      tools.tool != Tool::Pick && tools.tool != Tool::Select &&
      tools.tool != Tool::Heat &&  // the heat lamp: the heat feature draws it
      tools.tool != Tool::Body &&  // the body's draft: feature_rigid.cpp
      (w || (dem_world() && tools.tool != Tool::Paint))) {
    Vec2 wm = cam.screen_to_world(mouse);
    uint32_t col = pack_rgba(0.9f, 0.9f, 0.95f, 0.5f);
    if (tools.tool == Tool::Attract) col = pack_rgba(0.35f, 0.85f, 0.55f, left_down ? 0.9f : 0.5f);
    if (tools.tool == Tool::Repel) col = pack_rgba(1.f, 0.4f, 0.35f, left_down ? 0.9f : 0.5f);
    if (tools.tool == Tool::Paint && tools.paint_material < static_cast<int>(materials.size())) {
      const float* c = materials[static_cast<size_t>(tools.paint_material)].color;
      col = pack_rgba(c[0], c[1], c[2], 0.7f);
    }
    over.circle(wm, tools.radius, 1.5f, col);
  }
  over.draw(view);
  glDisable(GL_BLEND);
}

// [SECTION] Screenshots and recording -------------------------------------------

void App::take_screenshot(const std::string& path, const ScreenRect* area) {
  int win_w = 0, win_h = 0;
  glfwGetFramebufferSize(window, &win_w, &win_h);
  // The part to read, in framebuffer pixels (GL's rows run upwards).
  int x0 = 0, y0 = 0, fbw = win_w, fbh = win_h;
  if (area) {
    const float r = cam.pixel_ratio();
    x0 = std::clamp(static_cast<int>(std::lround(area->x * r)), 0, win_w - 1);
    const int top = std::clamp(static_cast<int>(std::lround(area->y * r)), 0, win_h - 1);
    fbw = std::clamp(static_cast<int>(std::lround(area->w * r)), 1, win_w - x0);
    fbh = std::clamp(static_cast<int>(std::lround(area->h * r)), 1, win_h - top);
    y0 = win_h - top - fbh;
  }
  readback.resize(static_cast<size_t>(fbw) * fbh * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(x0, y0, fbw, fbh, GL_RGB, GL_UNSIGNED_BYTE, readback.data());
  Image img;
  img.resize(fbw, fbh);
  const size_t row = static_cast<size_t>(fbw) * 3;
  for (int y = 0; y < fbh; ++y) std::memcpy(&img.rgb[row * y], &readback[row * (fbh - 1 - y)], row);
  std::error_code ec;
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path(), ec);
  std::string err;
  if (write_png(path, img, &err)) {
    set_status("screenshot saved: " + path);
    const SpritePath drew = compare.cmp ? compare.renderers[0].drew() : particles.drew();
    log("screenshot path=%s width=%d height=%d sprites=%s scene_only=%d", path.c_str(), fbw, fbh,
        sprite_path_name(drew), area ? 1 : 0);
  } else {
    load_error = "screenshot: " + err;
    log("screenshot error %s", err.c_str());
  }
}

void App::record_frame() {
  if (pending.toggle_record) {
    pending.toggle_record = false;
    if (recorder.active()) {
      recorder.stop();
      set_status("recording saved: " + recorder.target() + " (" +
                 std::to_string(recorder.frames()) + " frames)");
      log("record stop path=%s frames=%d", recorder.target().c_str(), recorder.frames());
    } else {
      ScreenRect v = cam.viewport();
      float r = cam.pixel_ratio();
      std::string err;
      if (recorder.start(out_dir, static_cast<int>(v.w * r), static_cast<int>(v.h * r), 30, &err)) {
        set_status("recording to " + recorder.target());
        log("record start path=%s ffmpeg=%d", recorder.target().c_str(),
            recorder.uses_ffmpeg() ? 1 : 0);
      } else {
        load_error = "recording: " + err;
      }
    }
  }
  if (!recorder.active()) return;
  int fbw = 0, fbh = 0;
  glfwGetFramebufferSize(window, &fbw, &fbh);
  ScreenRect v = cam.viewport();
  float r = cam.pixel_ratio();
  int x0 = static_cast<int>(v.x * r), y0 = fbh - static_cast<int>((v.y + v.h) * r);
  x0 = std::max(0, x0);
  y0 = std::max(0, y0);
  if (x0 + recorder.width() > fbw || y0 + recorder.height() > fbh) {
    recorder.stop();
    set_status("recording stopped (the window shrank): " + recorder.target());
    return;
  }
  readback.resize(static_cast<size_t>(recorder.width()) * recorder.height() * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(x0, y0, recorder.width(), recorder.height(), GL_RGB, GL_UNSIGNED_BYTE,
               readback.data());
  std::string err;
  if (!recorder.write_bottom_up(readback.data(), &err)) load_error = "recording: " + err;
}

// [SECTION] Settings -------------------------------------------------------------

void App::load_settings() {
  config_dir = settings_dir();
  if (config_dir.empty()) return;
  settings_path = (fs::path(config_dir) / "settings.ini").string();
  imgui_ini_path = (fs::path(config_dir) / "imgui.ini").string();
  settings.load(settings_path);
  settings_autosave.saved(settings.text(),
                          0.0);  // what the file holds (written again once it differs)
  const SettingsFile& s = settings;
  tools.tool =
      static_cast<Tool>(s.get_int("tool", static_cast<int>(tools.tool), 0, kToolCount - 1));
  tools.radius = s.get_float("tool.radius", tools.radius, 1e-6f, 1e6f);
  tools.force = s.get_float("tool.force", tools.force, 0.f, 1e9f);
  tools.grab_stiffness = s.get_float("tool.grab_stiffness", tools.grab_stiffness, 1.f, 1e9f);
  tools.heat_power =
      s.get_float("tool.heat_power", tools.heat_power, -kHeatPowerMax, kHeatPowerMax);
  color_mode = static_cast<ColorMode>(s.get_int("view.color_mode", 0, 0, kColorModeCount - 1));
  for (int m = 0; m < kColorModeCount; ++m)
    cmap[static_cast<size_t>(m)] = static_cast<Colormap>(
        s.get_int("view.colormap." + std::to_string(m),
                  static_cast<int>(cmap[static_cast<size_t>(m)]), 0, kColormapCount - 1));
  auto_range = s.get_bool("view.auto_range", auto_range);
  sprite_scale = s.get_float("view.sprite_scale", sprite_scale, 0.25f, 4.f);
  show_grid = s.get_bool("view.grid", show_grid);
  show_grid_velocity = s.get_bool("view.grid_velocity", show_grid_velocity);
  show_particle_velocity = s.get_bool("view.particle_velocity", show_particle_velocity);
  show_affine = s.get_bool("view.affine", show_affine);
  for (auto& f : features) f->load_settings(s);
  temp_auto = s.get_bool("view.temperature.auto", temp_auto);
  temp_lo = s.get_float("view.temperature.lo", temp_lo, -273.15f, 1e5f);
  temp_hi = s.get_float("view.temperature.hi", temp_hi, -273.15f, 1e5f);
  if (!(temp_hi > temp_lo)) temp_hi = temp_lo + 1.f;
  vsync = s.get_bool("view.vsync", vsync);
  {
    const std::string v = s.get("view.sprites", "auto");
    sprite_path = SpritePath::Auto;
    for (SpritePath p : {SpritePath::Points, SpritePath::Quads, SpritePath::Software})
      if (v == sprite_path_name(p)) sprite_path = p;
    if (sprite_path == SpritePath::Auto && v != "auto")
      log("settings %s: view.sprites=\"%s\" is not one of auto, points, quads, software; using auto",
          settings_path.c_str(), v.c_str());
  }
  user_scale = s.get_float("ui.scale", user_scale, 0.6f, 3.f);
  projector = s.get_bool("ui.projector", projector);
  // The rewind's memory budget in MiB (0: a quarter of the memory, at most 512 MiB).
  rw.ring.set_budget(rewind_budget_from_settings(s.get_int("rewind.budget_mb", 0, 0, 1 << 20)));
  preset_speed = s.get_float("presets.speed", preset_speed, 0.01f, 100.f);
  out_dir = s.get("output.folder", out_dir);
  open_folder = s.get("scene.folder", open_folder);
}

void App::fill_settings() {
  SettingsFile& s = settings;
  // A lesson's view is the lesson's: while one is open, the view before it is what is kept.
  const LessonView view = view_before_lesson ? *view_before_lesson : current_view();
  s.set_int("tool", static_cast<int>(view.tool));
  if (!s.has("rewind.budget_mb"))
    s.set_int("rewind.budget_mb", 0);  // listed, so it can be found and edited
  s.set_float("tool.radius", tools.radius);
  s.set_float("tool.force", tools.force);
  s.set_float("tool.grab_stiffness", tools.grab_stiffness);
  s.set_float("tool.heat_power", tools.heat_power);
  s.set_int("view.color_mode", static_cast<int>(view.color_mode));
  for (int m = 0; m < kColorModeCount; ++m)
    s.set_int("view.colormap." + std::to_string(m), static_cast<int>(cmap[static_cast<size_t>(m)]));
  s.set_bool("view.auto_range", auto_range);
  s.set_float("view.sprite_scale", sprite_scale);
  s.set_bool("view.grid", view.grid);
  s.set_bool("view.grid_velocity", view.grid_velocity);
  s.set_bool("view.particle_velocity", view.particle_velocity);
  s.set_bool("view.affine", view.affine);
  for (const auto& f : features) f->save_settings(s);
  s.set_bool("view.temperature.auto", temp_auto);
  s.set_float("view.temperature.lo", temp_lo);
  s.set_float("view.temperature.hi", temp_hi);
  s.set_bool("view.vsync", vsync);
  s.set("view.sprites", sprite_path_name(sprite_path));
  s.set_float("ui.scale", user_scale);
  s.set_bool("ui.projector", projector);
  s.set_float("presets.speed", view.preset_speed);
  s.set("output.folder", out_dir);
  s.set("scene.folder", open_folder);
}

void App::save_settings() {
  if (settings_path.empty()) return;
  fill_settings();
  // Best effort (on exit, nothing to show it in): the reason goes to stderr.
  std::string err;
  if (!settings.save(settings_path, &err))
    std::fprintf(stderr, "sandbox: settings not saved: %s\n", err.c_str());
}

bool App::autosave_settings(double now) {
  if (settings_path.empty() || (settings_offered >= 0.0 && now - settings_offered < 0.25))
    return false;
  settings_offered = now;
  fill_settings();
  const std::string text = settings.text();
  if (!settings_autosave.due(text, now)) return false;
  std::string err;
  if (!settings.save(settings_path, &err)) {
    // Reported once per change (the autosave waits for the next change or for quitting).
    std::fprintf(stderr, "sandbox: settings not saved: %s\n", err.c_str());
    log("settings error %s", err.c_str());
  } else {
    log("settings saved path=%s", settings_path.c_str());
  }
  settings_autosave.saved(text, now);
  return true;
}

void App::sample_sim_rate(double now) {
  // The clock of what is shown: the single scene, or a comparison's first pane (the others follow it).
  Simulation* clock = compare.cmp ? compare.cmp->pane(0).sim.get() : sim.get();
  if (!clock) {
    sim_rate.reset();
    return;
  }
  sim_rate.sample(now, clock->time(), clock->step_count(), running);
}

// [SECTION] Entry point ----------------------------------------------------------

int run_window(const WindowOptions& options) {
  // Setup: window, GL 4.3 core context, loader, ImGui.
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr, "sandbox: cannot initialise GLFW (no display?)\n");
    return 1;
  }
  GlContext::window_hints(options.gl);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE);
  GLFWwindow* window =
      glfwCreateWindow(options.width, options.height, "Particle Sandbox", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "sandbox: cannot open a window with an OpenGL 4.3 core context\n");
    glfwTerminate();
    return 1;
  }
  GlContext gl;
  {
    std::string error;
    if (!gl.create(options.gl, window, error)) {
      std::fprintf(stderr, "sandbox: %s\n", error.c_str());
      gl.destroy();
      glfwDestroyWindow(window);
      glfwTerminate();
      return 1;
    }
  }

  // State.
  App app;
  app.opt = options;
  app.window = window;
  app.backend = options.backend;
  app.running = !options.paused;
  if (!options.out_dir.empty()) app.out_dir = options.out_dir;
  app.load_settings();
  if (!options.out_dir.empty()) app.out_dir = options.out_dir;
  if (options.vsync >= 0) app.vsync = options.vsync == 1;
  app.interop_wanted = options.interop;
  {
    float sx = 1.f, sy = 1.f;
    glfwGetWindowContentScale(window, &sx, &sy);
    app.content_scale = std::clamp(std::max(sx, sy), 1.f, 4.f);
    app.ui_scale = std::clamp(app.effective_ui_scale(), 0.5f, 6.f);
  }
  {
    // As App::rebuild_ui: the panels grow with the text, within their share of the window.
    int ww = 0, wh = 0;
    glfwGetWindowSize(window, &ww, &wh);
    app.left_pref *= app.ui_scale;
    app.right_pref *= app.ui_scale;
    const SidePanels sp = clamp_side_panels(app.left_pref, app.right_pref, static_cast<float>(ww),
                                            side_panel_share(app.projector), 240.f * app.ui_scale);
    app.left_w = sp.left;
    app.right_w = sp.right;
  }
  if (const GLubyte* r = glGetString(GL_RENDERER))
    app.gl_renderer = reinterpret_cast<const char*>(r);
  if (options.gl == GlBackend::Egl) app.gl_renderer += " (" + gl.describe() + ")";

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = app.imgui_ini_path.empty() ? nullptr : app.imgui_ini_path.c_str();
  if (!app.config_dir.empty()) {
    std::error_code ec;
    fs::create_directories(app.config_dir, ec);
  }
  app.setup_style();
  // Installed before ImGui's callbacks, which chain to it.
  app.key_queue.reserve(64);
  glfwSetWindowUserPointer(window, &app);
  glfwSetKeyCallback(window, [](GLFWwindow* win, int key, int, int action, int mods) {
    auto* a = static_cast<App*>(glfwGetWindowUserPointer(win));
    if (a && action == GLFW_PRESS && a->key_queue.size() < 64)
      a->key_queue.push_back(App::KeyPress{key, mods});
  });
  if (options.gl == GlBackend::Egl)
    ImGui_ImplGlfw_InitForOther(window, true);
  else
    ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 430 core");
  // Tab is the window's (the panels hidden or shown), not ImGui's: its focus cycling put the
  // keyboard in the SGF timeline's step field once the panels were hidden, and every key after
  // (F12, Space, the remote's Page Down) went into the field.
  ImGui::GetIO().KeyMap[ImGuiKey_Tab] = -1;
  gl.swap_interval(app.vsync ? 1 : 0);
  app.present = [&gl] { gl.swap(); };

  int rc = 0;
  try {
    app.particles.init();
    app.under.init();
    app.over.init();
    app.bond_lines.init();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sandbox: %s\n", e.what());
    rc = 1;
  }
  if (rc == 0 && !options.lesson.empty() && app.open_lesson(options.lesson)) {
    // The lesson's scene is open.
  } else if (rc == 0 && !app.load_scene(options.scene, options.overrides)) {
    // The window still opens: the error shows there and another scene can be opened.
    app.open_path = options.scene;
  }
  if (app.open_folder.empty()) app.open_folder = scenes_dir();
  if (!options.compare.empty() && app.sim) app.pending.compare_vary = options.compare;
  if (options.soak_seconds > 0.0)
    app.soak.start(options.soak_seconds, options.soak_log, options.soak_plan);

  // Main loop.
  bool applied_vsync = app.vsync;
  auto last = Clock::now();
  auto rate_t0 = last;  // --verbose frame-rate log: frames counted over ~2 s of wall time
  int64_t rate_f0 = 0;
  double phase_sum[5] = {
      0, 0, 0, 0, 0};  // step, snapshot, scene, UI, swap: ms summed over the fps line's frames
  int phase_frames = 0;
  int64_t phase_substeps = 0;
  const auto run_start = last;  // --seconds: the last frame is the first to start after it
  std::array<int, 4> last_size{0, 0, 0, 0};  // window and framebuffer size: a change is logged
  while (rc == 0 && !glfwWindowShouldClose(window)) {
    auto frame_start = Clock::now();
    const bool last_frame = options.seconds > 0.0 && seconds_since(run_start) >= options.seconds;
    // Poll events.
    glfwPollEvents();
    int ww = 0, wh = 0, fbw = 0, fbh = 0;
    glfwGetWindowSize(window, &ww, &wh);
    glfwGetFramebufferSize(window, &fbw, &fbh);
    if (ww <= 0 || wh <= 0 || fbw <= 0 || fbh <= 0) {  // minimised
      glfwWaitEventsTimeout(0.1);
      continue;
    }
    if (app.frame > 0 &&
        (ww != last_size[0] || wh != last_size[1] || fbw != last_size[2] || fbh != last_size[3]))
      app.log("window size=%dx%d framebuffer=%dx%d fullscreen=%d", ww, wh, fbw, fbh,
              app.fullscreen ? 1 : 0);
    last_size = {ww, wh, fbw, fbh};
    gl.resize(fbw, fbh);  // EGL: the off-screen surface follows the window
    app.cam.set_window(static_cast<float>(ww), static_cast<float>(wh),
                       static_cast<float>(fbw) / ww);

    if (app.ui_rebuild) app.rebuild_ui();  // projector mode or UI scale changed last frame
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    // The scene's place: its area less the legends' dock, sized from the legends measured
    // first (render/cpu/layout.h), so the first frame is laid out as the rest.
    app.measure_overlays();
    app.cam.set_viewport(app.scene_viewport());
    ScreenRect vp = app.cam.viewport();
    bool vp_changed = vp.x != app.last_fit_viewport.x || vp.w != app.last_fit_viewport.w ||
                      vp.h != app.last_fit_viewport.h;
    if (app.sim && (app.pending.fit_view || (vp_changed && !app.view_touched))) {
      Vec2 lo, hi;
      app.sim->bounds(lo, hi);
      app.cam.fit(lo, hi);
      app.last_fit_viewport = vp;
      if (app.pending.fit_view) app.view_touched = false;
      app.pending.fit_view = false;
      if (app.frame > 0) app.log_view();
    }

    // Input, sync point, stepping.
    app.handle_input();
    if (!app.soak.tick(app)) glfwSetWindowShouldClose(window, GLFW_TRUE);
    app.sync();
    auto ph0 = Clock::now();
    app.step_frame();
    auto ph1 = Clock::now();
    app.sample_sim_rate(seconds_since(run_start));
    app.autosave_settings(seconds_since(run_start));  // a killed window keeps its settings
    app.snapshot();
    auto ph2 = Clock::now();
    // Notices from the simulation: the auto backend's choice, or a CUDA
    // failure after which the world goes on on the CPU from its last
    // preserved state (docs/reliability.md).
    if (app.sim) {
      const std::string note = app.sim->take_notice();
      if (!note.empty()) {
        app.set_status(note);
        app.host_table_stale = true;
        // After a CUDA failure, reloads and resets stay on the CPU too.
        if (app.sim->fell_back_to_cpu()) app.backend = "cpu";
        std::fprintf(stderr, "sandbox: %s\n", note.c_str());
        app.log("notice \"%s\"", note.c_str());
      }
    }

    // Render the scene; record it before the panels are drawn over it.
    auto ph3 = Clock::now();
    app.draw_scene();
    app.record_frame();
    if (app.pending
            .scene_shot) {  // the scene before the panels, legends and text are drawn over it
      app.pending.scene_shot = false;
      char name[96];
      std::snprintf(name, sizeof name, "scene-%s-%02d.png", timestamp().c_str(), ++app.screenshots);
      const ScreenRect content = app.cam.viewport();
      app.take_screenshot((fs::path(app.out_dir) / name).string(), &content);
    }
    auto ph4 = Clock::now();

    // UI.
    app.draw_panels();
    ImGui::Render();
    app.clear_panel_backgrounds();  // the panels' background, first in their draw lists
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

    if (app.pending.screenshot) {
      app.pending.screenshot = false;
      char name[96];
      std::snprintf(name, sizeof name, "screenshot-%s-%02d.png", timestamp().c_str(),
                    ++app.screenshots);
      app.take_screenshot((fs::path(app.out_dir) / name).string());
    }
    if (!options.screenshot_path.empty() &&
        ((options.screenshot_after_frames >= 0 && app.frame == options.screenshot_after_frames) ||
         (options.screenshot_after_frames == -2 && last_frame)))
      app.take_screenshot(options.screenshot_path);

    auto ph5 = Clock::now();
    gl.swap();
    {
      // Where a frame's time goes (the fps line): step, snapshot, scene, UI, swap (software GL rasterises here).
      auto ms = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
      };
      const auto frame_end = Clock::now();
      const double now_ph[5] = {ms(ph0, ph1), ms(ph1, ph2), ms(ph3, ph4), ms(ph4, ph5),
                                ms(ph5, frame_end)};
      // What the frame costs besides stepping (input, snapshot, drawing, swap): the step budget's complement.
      const double rest = std::max(0.0, ms(frame_start, frame_end) - now_ph[0]);
      app.frame_rest_ms = app.frame_rest_ms > 0.0 ? 0.9 * app.frame_rest_ms + 0.1 * rest : rest;
      for (int k = 0; k < 5; ++k) phase_sum[k] += now_ph[k];
      phase_substeps += app.substeps_last;
      ++phase_frames;
    }
    if (app.vsync != applied_vsync) {
      gl.swap_interval(app.vsync ? 1 : 0);
      applied_vsync = app.vsync;
    }
    ++app.frame;
    if (app.frame == 3) {
      app.log("ready scene=%s particles=%zu window=%dx%d framebuffer=%dx%d",
              app.sim ? app.sim->info().path.c_str() : "-", app.table.size(), ww, wh, fbw, fbh);
      app.log_view();
    }
    if (options.quit_after_frames >= 0 && app.frame >= options.quit_after_frames) break;
    if (last_frame) break;

    // With vsync on, never exceed ~60 frames per second even where swapping
    // does not block (virtual displays): leaves the cores to the simulation.
    if (app.vsync) {
      double spent = seconds_since(frame_start);
      if (spent < 1.0 / 62)
        std::this_thread::sleep_for(std::chrono::duration<double>(1.0 / 62 - spent));
    }
    double dt = seconds_since(last);
    last = Clock::now();
    app.frame_ms = app.frame_ms > 0 ? 0.9 * app.frame_ms + 0.1 * dt * 1e3 : dt * 1e3;
    app.fps = app.frame_ms > 0 ? 1e3 / app.frame_ms : 0.0;
    if (const double span = seconds_since(rate_t0); span >= 2.0) {
      const double rate = static_cast<double>(app.frame - rate_f0) / span;
      const SpritePath drew =
          app.compare.cmp ? app.compare.renderers[0].drew() : app.particles.drew();
      const double pf = std::max(1, phase_frames);
      app.log(
          "fps frames=%lld fps=%.1f frame_ms=%.2f running=%d particles=%zu vsync=%d sprites=%s "
          "substeps=%.2f ms_step=%.2f ms_snapshot=%.2f ms_scene=%.2f ms_ui=%.2f ms_swap=%.2f renderer=\"%s\" "
          "interop=\"%s\"",
          static_cast<long long>(app.frame - rate_f0), rate, rate > 0 ? 1e3 / rate : 0.0,
          app.running ? 1 : 0, app.table.size(), app.vsync ? 1 : 0, sprite_path_name(drew),
          phase_substeps / pf, phase_sum[0] / pf, phase_sum[1] / pf, phase_sum[2] / pf,
          phase_sum[3] / pf, phase_sum[4] / pf, app.gl_renderer.c_str(), app.interop_note.c_str());
      for (double& v : phase_sum) v = 0.0;
      phase_frames = 0;
      phase_substeps = 0;
      rate_t0 = Clock::now();
      rate_f0 = app.frame;
    }
  }

  // Cleanup.
  app.recorder.stop();
  app.interop.release();  // before the renderer deletes the buffers, with the context current
  app.save_settings();
  for (auto& f : app.features) f->shutdown(app);  // with the GL context current
  if (ImGui::GetCurrentContext() && io.IniFilename) ImGui::SaveIniSettingsToDisk(io.IniFilename);
  app.particles.destroy();
  app.under.destroy();
  app.over.destroy();
  app.interop.release_bonds();  // before the line buffer goes, with the context current
  app.bond_lines.destroy();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  gl.destroy();
  glfwDestroyWindow(window);
  glfwTerminate();
  app.log("quit");
  return rc;
}

}  // namespace ps
