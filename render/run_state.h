/// The window's running state (internal to render/; part of App, window_state.h): the requests
/// panels and keys leave for the sync point (Pending), the frame counter and timings, the slow-
/// motion rate, and the plots' histories.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include "render/cpu/time_rate.h"
#include "sim/mpm/mpm_world.h"
#include "sim/scene/simulation.h"

namespace ps {

/// How often the plots sample the simulation (seconds).
inline constexpr double kDiagPeriod = 1.0 / 20;

/// A fixed-size history for ImGui::PlotLines (no allocation after construction).
struct History {
  static constexpr int kSize = 240;
  std::array<float, kSize> v{};
  int head = 0, count = 0;
  void push(float x) {
    v[static_cast<size_t>(head)] = x;
    head = (head + 1) % kSize;
    count = count < kSize ? count + 1 : kSize;
  }
  void clear() { head = count = 0; }
  /// Offset for PlotLines so the oldest sample comes first.
  int offset() const { return count < kSize ? 0 : head; }
  float last() const { return count ? v[static_cast<size_t>((head + kSize - 1) % kSize)] : 0.f; }
};

/// Actions requested by panels and keys, applied at the sync point.
struct Pending {
  bool reset = false;
  std::string open_path;    ///< load this scene (name or path)
  std::string open_lesson;  ///< open this lesson (id or path; render/panel_lesson.cpp)
  /// open_lesson came from Page Down (+1) / Up (-1): on failure go on past it.
  int lesson_step = 0;
  std::string compare_vary;  ///< start (or restart) the comparison view with these items
  bool compare_end = false;  ///< back to the single view
  int grid = 0;              ///< re-initialise with this grid resolution
  std::string backend;       ///< switch backend
  std::optional<Preset> preset;
  bool fit_view = false;
  bool screenshot = false;
  bool scene_shot = false;  ///< Shift+F12: the scene alone (no panels, legends or text), for slides
  bool toggle_record = false;
  int single_frames = 0;  ///< N: frames to step while paused
};

struct RunState {
  bool running = true;
  Pending pending;
  int64_t frame = 0;
  double ms_per_substep = 0.0;  ///< smoothed
  double speed_ratio = 1.0;     ///< substeps done / substeps wanted (smoothed): < 1 is slow motion
  SimRate sim_rate;             ///< simulated seconds per wall second (render/cpu/time_rate.h)
  bool slow_shown = false;      ///< the slow-motion line is up (logged when it comes and goes)
  /// Its line was logged with a measured rate (the first may come before one).
  bool slow_rate_logged = false;
  /// It was logged naming the frame budget (logged again when that changes).
  bool slow_cut_logged = false;
  int substeps_last = 0;
  double fps = 0.0, frame_ms = 0.0;
  History ke, momentum_x, momentum_y, angular;
  Diagnostics diag;
  double last_diag_time = -1.0;
};

}  // namespace ps
