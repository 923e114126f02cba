/// Guided lessons, GL-free: a lesson file (JSON beside the scenes,
/// assets/lessons/*.json; docs/lessons.md) names a scene and its overrides,
/// the view to start with (colour mode, overlays, tool, a velocity preset, a
/// selected particle), and a short text: what happens, what to look at, which
/// keys to press. The window opens it (render/panel_lesson.cpp); teachers
/// write their own in the same format. Bad files get located errors (file,
/// line, column, field), like scene files.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "sim/core/error.h"
#include "sim/io/json.h"
#include "sim/scene/compare.h"
#include "sim/scene/simulation.h"

namespace ps {

struct LessonKey {
  std::string key;   ///< "R", "A", "Space", "drag"
  std::string what;  ///< what it does in this lesson
};

struct Lesson {
  std::string path;  ///< the lesson file
  std::string id;    ///< its stem ("01_pic_loses_rotation")
  std::string title;
  std::string scene;  ///< built-in scene name or a path (relative paths: to the lesson file)
  std::vector<std::string> set;       ///< --set overrides for the scene
  std::vector<std::string> text;      ///< paragraphs
  std::vector<std::string> look_for;  ///< what to watch, one line each
  std::vector<LessonKey> keys;
  // The view at the start (absent: the window's current choice stays).
  int color =
      -1;  ///< the window's colour mode index (material, speed, direction, J, stress, group,
           ///< scalar, plastic_strain, temperature, melt_fraction), -1: unchanged
  int colormap = -1;  ///< render/cpu/colormap.h Colormap index for that colour mode, -1: unchanged
  std::optional<bool> grid, grid_velocity, particle_velocity, affine, contacts, forces;
  int tool = -1;  ///< render/cpu/tools.h Tool index, -1: unchanged
  bool paused =
      true;  ///< opens paused (the teacher presses Space); a file opts out with "paused": false
  int preset =
      -1;  ///< Preset index (translation, rotation, shear, dilation) applied at the start, -1: none
  float preset_speed = 1.f;
  unsigned select_id = 0;  ///< particle ID selected at the start (its affine field shows), 0: none
  std::string
      compare;  ///< open the comparison view with these `path=a,b,...` items (sim/scene/compare.h), if set
  // Where the entries that name other input are in the file (their errors point there).
  SourceLoc scene_loc;
  std::vector<SourceLoc> set_locs;  ///< one per `set` entry
  SourceLoc compare_loc;
};

/// How the Lesson panel stages a lesson's text: the lead (what happens, one or
/// two sentences) and the "look for" lines on the first page, the rest behind
/// a "More" header, collapsed when the lesson opens.
struct LessonPage {
  std::string lead;  ///< the first paragraph, cut after its second sentence
  std::vector<std::string>
      more;  ///< the rest of the first paragraph (if cut), then the other paragraphs
};
/// Sentences a lead keeps (a longer first paragraph goes on under "More").
constexpr size_t kLeadSentences = 2;
/// A paragraph's sentences: one ends at '.', '!' or '?' (and any closing quote
/// or bracket after it) followed by a space and a capital letter, or at the
/// end; "Jiang et al. 2015" and "0.95" end none. Each keeps its punctuation,
/// without the space after it.
std::vector<std::string> split_sentences(const std::string& paragraph);
/// The lead and the rest of a lesson's `text`.
LessonPage lesson_page(const std::vector<std::string>& text);

/// Reads a lesson; throws InputError naming file, line, column and field.
/// Checks what needs no scene: the fields, an empty scene name, the form of
/// each `set` entry, and the `compare` items with their pane count (counted
/// before any pane is made). A compare's values are checked by build_lesson.
Lesson load_lesson(const std::string& path);
/// The same from the file's text (`path` names it in errors and resolves a
/// relative scene).
Lesson parse_lesson(const std::string& text, const std::string& path);

/// What opening a lesson builds.
struct LessonOptions {
  std::vector<std::string> extra_sets;  ///< the command line's --set, applied after the lesson's
  std::string backend = "cpu";          ///< the scene's backend ("cpu", "cuda", "auto")
  std::string compare_backend = "cpu";  ///< the panes' backend (the window runs them on the CPU)
  int threads = 0;
  bool build_comparison = true;
  /// Reads the resolved scene file (a seam for the fuzz harness, which reads
  /// small copies of the built-in scenes); empty: Json::parse_file.
  std::function<Json(const std::string& path)> read_scene;
};

struct LessonBuild {
  std::string scene_path;  ///< the resolved scene file
  std::vector<std::string>
      overrides;  ///< the lesson's `set` entries, then extra_sets (what a reload applies)
  std::unique_ptr<Simulation> sim;  ///< the scene with them
  std::vector<PaneSpec> panes;      ///< the comparison's panes (empty: the lesson compares nothing)
  std::unique_ptr<Comparison> comparison;  ///< built when asked and the lesson compares
};

/// Opens a lesson without a window, as `sandbox --lesson` and the window do:
/// resolves and reads its scene, applies its `set` entries (then extra_sets),
/// builds the simulation, and builds its comparison (the panes from the
/// scene with the entries whose paths they do not vary). Every InputError
/// names the lesson file and the line, column and field of the entry at
/// fault ("scene", "set[1]", "compare"), then what is wrong inside it (the
/// scene field; the pane; a located error in the scene file itself).
/// The command line's --set errors keep their "--set" form. Throws
/// std::runtime_error for an unavailable backend.
LessonBuild build_lesson(const Lesson& l, const LessonOptions& opt);

/// The folder of the built-in lessons: $PS_LESSONS_DIR when set (a
/// teacher's folder, or a test's), else assets/lessons.
std::string lessons_dir();
/// The built-in lessons (lessons_dir()/*.json), sorted by file name.
std::vector<std::string> builtin_lesson_paths();

/// The lessons of a folder as the window lists them, re-read as teachers
/// edit them: a file is parsed again only when its size or modification
/// time changes, and a file that does not load is reported once per change
/// (its located error) and listed as not loading.
class LessonCatalog {
 public:
  struct Entry {
    std::string path;
    std::string title;  ///< the lesson's title ("" when it does not load)
    std::string error;  ///< the located error of a file that does not load, else ""
    std::uintmax_t size = 0;
    std::filesystem::file_time_type mtime{};
  };
  explicit LessonCatalog(std::string dir = "") : dir_(std::move(dir)) {}
  /// Re-reads the folder (lessons_dir() when none was given); returns the
  /// errors not reported before, one line each ("FILE:LINE:COL: field ...").
  std::vector<std::string> refresh();
  const std::vector<Entry>& entries() const { return entries_; }
  /// The error of a listed lesson ("" when it loads or is not listed).
  std::string error_of(const std::string& path) const;
  /// A listed lesson that parsed but did not build (its scene, a `set` or
  /// `compare` value; build_lesson's error): listed as not loading, and not
  /// reported again, until the file changes.
  void mark_failed(const std::string& path, const std::string& error);

 private:
  std::string dir_;
  std::vector<Entry> entries_;
};

/// A built-in lesson's id ("01_pic_loses_rotation" or a unique prefix such as
/// "01") or a path; throws InputError listing the built-ins when none matches.
std::string resolve_lesson_path(const std::string& name_or_path);

/// The lesson's scene as load_simulation takes it: a built-in name, or the
/// path resolved against the lesson file's folder.
std::string lesson_scene_arg(const Lesson& l);

}  // namespace ps
