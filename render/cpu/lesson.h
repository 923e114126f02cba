/// Guided lessons (issue #15), GL-free: a lesson file (JSON beside the scenes,
/// assets/lessons/*.json; docs/lessons.md) names a scene and its overrides,
/// the view to start with (colour mode, overlays, tool, a velocity preset, a
/// selected particle), and a short text: what happens, what to look at, which
/// keys to press. The window opens it (render/panel_lesson.cpp); teachers
/// write their own in the same format. Bad files get located errors (file,
/// line, column, field), like scene files.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ps {

struct LessonKey {
  std::string key;   ///< "R", "A", "Space", "drag"
  std::string what;  ///< what it does in this lesson
};

struct Lesson {
  std::string path;   ///< the lesson file
  std::string id;     ///< its stem ("01_pic_loses_rotation")
  std::string title;
  std::string scene;  ///< built-in scene name or a path (relative paths: to the lesson file)
  std::vector<std::string> set;  ///< --set overrides for the scene
  std::vector<std::string> text;      ///< paragraphs
  std::vector<std::string> look_for;  ///< what to watch, one line each
  std::vector<LessonKey> keys;
  // The view at the start (absent: the window's current choice stays).
  int color = -1;  ///< the window's colour mode index (material, speed, direction, J, stress, group,
                   ///< scalar, plastic_strain, temperature, melt_fraction), -1: unchanged
  std::optional<bool> grid, grid_velocity, particle_velocity, affine, contacts, forces;
  int tool = -1;   ///< render/cpu/tools.h Tool index, -1: unchanged
  bool paused = false;
  int preset = -1;  ///< Preset index (translation, rotation, shear, dilation) applied at the start, -1: none
  float preset_speed = 1.f;
  unsigned select_id = 0;  ///< particle ID selected at the start (its affine field shows), 0: none
  std::string compare;     ///< open the comparison view with these `path=a,b,...` items (sim/scene/compare.h), if set
};

/// Colour-mode names a lesson may use, in the window's ColorMode order.
const std::vector<const char*>& lesson_color_names();

/// Reads a lesson; throws InputError naming file, line, column and field.
Lesson load_lesson(const std::string& path);

/// The built-in lessons (assets/lessons/*.json), sorted by file name.
std::vector<std::string> builtin_lesson_paths();

/// A built-in lesson's id ("01_pic_loses_rotation" or a unique prefix such as
/// "01") or a path; throws InputError listing the built-ins when none matches.
std::string resolve_lesson_path(const std::string& name_or_path);

/// The lesson's scene as load_simulation takes it: a built-in name, or the
/// path resolved against the lesson file's folder.
std::string lesson_scene_arg(const Lesson& l);

}  // namespace ps
