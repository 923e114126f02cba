/// Opening files while a scene runs, GL-free: the window's panels call these
/// and the tests reach them without a window (tests/render/test_file_open.cpp).
///
/// The rule: a file is parsed into a fresh object, and the live one (the SGF
/// editor's set, which sgf_sync hands to the running Simulation, or the
/// specimen window's image) is replaced only after a complete success. A
/// failure returns a line saying what was kept and the problems, each
/// "FILE:LINE:COL: field 'FX': ..."; the caller shows them and changes nothing,
/// so the running Simulation and its force list are untouched. (Scenes follow
/// the same rule in App::load_scene: load_simulation builds a new Simulation
/// and the window swaps it in only when it loaded.)
#pragma once
#include <cstddef>
#include <string>
#include <vector>
#include "sim/core/image.h"
#include "sim/sgf/sgf.h"

namespace ps {

/// An SGF folder opened for the editor.
struct SgfSetOpen {
  bool ok = false;                    ///< complete: `set` may replace the live set
  SgfSet set;                         ///< the loaded set; empty unless ok
  size_t entries = 0;                 ///< timed entries over all groups
  /// Empty when ok; else the verdict ("FOLDER: not loaded, N problems (the
  /// current set is kept ...)") then the first 100 problems.
  std::vector<std::string> messages;
};

/// Loads `folder` (SGF CSVs, groups.json when present) with load_sgf_set.
/// Not ok when it is not a folder or when any file name, row or index entry
/// was reported: a partly loaded set would apply some forces and silently
/// drop others, so it is never handed out.
SgfSetOpen open_sgf_set(const std::string& folder);

/// The set as the running simulation gets it (Simulation::set_force_list).
/// An empty set still installs a hook (one file with no rows) so forces that
/// were on are switched off cleanly: both worlds' hooks rewrite the
/// external-force array every step.
SgfList sgf_list_for_sim(const SgfSet& set);

/// An image opened for the specimen window.
struct ImageOpen {
  bool ok = false;
  Image image;          ///< empty unless ok
  std::string message;  ///< the error, naming the file, when not ok
};

/// load_image plus the checks the specimen window needs (a non-empty image).
ImageOpen open_image_file(const std::string& path);

}  // namespace ps
