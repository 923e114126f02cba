/// The window's lesson state (internal to render/; part of App, window_state.h; code:
/// panel_lesson.cpp): the open lesson, the view it borrowed, its panel's requests, and the
/// Lessons list.
#pragma once
#include <array>
#include <optional>
#include "render/cpu/colormap.h"
#include "render/cpu/lesson.h"
#include "render/cpu/tools.h"

namespace ps {

struct LessonState {
  std::optional<Lesson> lesson;  ///< the open lesson (its panel shows), if any
  /// The open lesson's comparison was ended (Esc): its text, about the panes, is put away.
  bool lesson_compare_ended = false;
  bool lesson_panel_request = false;  ///< open the Lesson header at the next draw
  /// Frames until the Lesson panel logs what its first page shows (`lesson page ...`): the
  /// column is scrolled to the top when a lesson opens, and laid out by then.
  int lesson_page_frames = 0;
  /// What a lesson's view sets (colour, overlays, tool, preset speed).
  struct LessonView {
    ColorMode color_mode = ColorMode::Material;
    std::array<Colormap, kColorModeCount> cmap{};
    float range_lo = 0.f, range_hi = 1.f;
    bool grid = false, grid_velocity = false, particle_velocity = false, affine = true;
    bool contacts = true, forces = true;
    Tool tool = Tool::Grab;
    float preset_speed = 1.f;
  };
  /// The view as it was before the first lesson changed it: closing the lesson
  /// (or opening another scene) gives it back, and settings.ini keeps it, not
  /// the lesson's.
  std::optional<LessonView> view_before_lesson;
  /// The Lessons list: the folder re-read every 2 s (not every frame), a file parsed again
  /// only when it changed, a file that does not load reported once and skipped.
  struct LessonTitles {
    LessonCatalog catalog;
    double time = -1.0;
  } lesson_titles;
};

}  // namespace ps
