#include "render/soak.h"

#include <unistd.h>
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <vector>
#include "render/cpu/picking.h"
#include "render/rewind_ui.h"
#include "render/window_state.h"

#include <GLFW/glfw3.h>

namespace ps {

int64_t resident_kib() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<int64_t>(resident) * (sysconf(_SC_PAGESIZE) / 1024);
}

void SoakDriver::start(double seconds, const std::string& csv, const std::string& plan) {
  seconds_ = seconds;
  classroom_ = plan == "classroom";
  t0_ = glfwGetTime();
  next_sample_ = 0.0;
  if (!csv.empty()) {
    csv_ = std::fopen(csv.c_str(), "w");
    if (!csv_)
      std::fprintf(stderr, "sandbox: --soak-log %s: cannot open for writing\n", csv.c_str());
    else
      std::fprintf(csv_, "seconds,rss_kib,frame,step,particles\n");
  }
}

SoakDriver::~SoakDriver() {
  if (csv_) std::fclose(csv_);
}

bool SoakDriver::tick(App& a) {
  if (!enabled()) return true;
  const double t = glfwGetTime() - t0_;
  const int64_t f = frame_++;
  if (t >= next_sample_) {
    next_sample_ += 10.0;
    const int64_t rss = resident_kib();
    const int64_t step = a.sim ? a.sim->step_count() : 0;
    a.log("soak t=%.1f rss_kib=%" PRId64 " frame=%" PRId64 " step=%" PRId64 " particles=%zu", t,
          rss, a.frame, step, a.table.size());
    if (csv_) {
      std::fprintf(csv_, "%.1f,%" PRId64 ",%" PRId64 ",%" PRId64 ",%zu\n", t, rss, a.frame, step,
                   a.table.size());
      std::fflush(csv_);
    }
  }
  if (t >= seconds_) {
    if (grabbing_ && a.world()) a.world()->grab_end();
    if (classroom_)
      a.log("soak classroom lessons=%" PRId64 " compares=%" PRId64 " seeks=%" PRId64,
            lessons_opened_, compares_started_, seeks_);
    return false;
  }
  if (classroom_) classroom_tick(a, f);
  if (!a.sim) return true;
  a.running = true;
  Vec2 lo, hi;
  a.sim->bounds(lo, hi);
  const Vec2 mid = 0.5f * (lo + hi), half = 0.5f * (hi - lo);
  const int64_t phase = f % 240;
  MpmWorld* w = a.world();
  // Presets (MPM): t, r, s, d in turn.
  if (phase == 0 && w) a.pending.preset = static_cast<Preset>(preset_++ % 4);
  // Attract then repel at a point that walks around the domain.
  const float ang = 0.05f * static_cast<float>(f);
  const Vec2 at{mid.x + 0.5f * half.x * std::cos(ang), mid.y + 0.5f * half.y * std::sin(ang)};
  ToolSettings ts = a.tools;
  ts.tool = phase < 90 ? Tool::Attract : Tool::Repel;
  const bool pressed = phase >= 60 && phase < 120;
  a.sim->set_point_force(tool_point_force(ts, at, pressed));
  // Grab (MPM): the particles near the middle, dragged round a circle.
  if (w) {
    if (phase == 120 && !grabbing_) {
      a.refresh_host_table();
      particles_within(a.table, mid, 0.1f * std::max(half.x, half.y), a.grab_rows);
      if (!a.grab_rows.empty()) {
        w->grab_stiffness = a.tools.grab_stiffness;
        w->grab_begin(a.grab_rows, mid);
        grabbing_ = true;
      }
    } else if (grabbing_ && phase < 180) {
      w->grab_move(at);
    } else if (grabbing_) {
      w->grab_end();
      a.grab_rows.clear();
      grabbing_ = false;
    }
  }
  // SGF edit: a group of the first particles, pushed for the next 100 steps.
  if (phase == 200 && !a.table.id.empty()) {
    SgfGroup g;
    g.name = "soak";
    const size_t n = std::min<size_t>(a.table.id.size(), 64);
    g.ids.assign(a.table.id.begin(), a.table.id.begin() + static_cast<std::ptrdiff_t>(n));
    std::sort(g.ids.begin(), g.ids.end());
    const int64_t s0 = a.sim->step_count() + 1;
    g.entries.push_back(SgfEntry{s0, s0 + 100, (f / 240) % 2 ? 1e-3 : -1e-3, 0.0, 0.0});
    a.sgf.set.groups.assign(1, g);
    a.sgf.dirty = true;
    a.sgf.edited = true;
  }
  // A reset every 2400 frames: reload churn (scene, backend, buffers); the
  // classroom plan reloads with each lesson instead.
  if (!classroom_ && f > 0 && f % 2400 == 0) {
    if (grabbing_ && w) w->grab_end();
    grabbing_ = false;
    a.grab_rows.clear();
    a.pending.reset = true;
  }
  return true;
}

// One lesson per 1200 frames: open it, compare (frames 300-600 of the cycle),
// scrub the rewind strip back (700) and to the head (800), then run on.
void SoakDriver::classroom_tick(App& a, int64_t f) {
  const int64_t phase = f % 1200;
  if (phase == 0) {
    if (grabbing_ && a.world()) a.world()->grab_end();
    grabbing_ = false;
    a.grab_rows.clear();
    a.step_lesson(+1);
    if (a.pending.open_lesson.empty()) {  // past the last lesson: back to the first
      a.close_lesson();
      a.step_lesson(+1);
    }
    if (!a.pending.open_lesson.empty()) ++lessons_opened_;
    return;
  }
  if (!a.sim) return;
  if (phase == 300 && !a.compare.cmp && a.world()) {
    a.pending.compare_vary = "solver.transfer=pic,apic";
    ++compares_started_;
  } else if (phase == 600 && a.compare.cmp) {
    a.pending.compare_end = true;
  } else if (phase == 700 && !a.compare.cmp) {
    const Rewind& r = a.rw.ring;
    rewind_request_seek(a, r.start() + (r.head() - r.start()) / 2);
    ++seeks_;
  } else if (phase == 800 && !a.compare.cmp) {
    rewind_request_seek(a, a.rw.ring.head());
    ++seeks_;
  }
}

}  // namespace ps
