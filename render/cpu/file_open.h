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
  bool ok = false;     ///< `set` may replace the live set
  SgfSet set;          ///< the loaded set (the good files); empty unless ok
  size_t entries = 0;  ///< timed entries over all groups
  size_t files = 0;    ///< the SGF files loaded
  std::vector<std::string>
      skipped;          ///< the SGF files skipped (each with its problems in `messages`)
  size_t problems = 0;  ///< problems reported (files, rows, index entries)
  /// Empty when everything loaded; else the verdict ("FOLDER: N problems, K of M
  /// files skipped (the other files are loaded)", or "... not loaded ..." when
  /// nothing could be) then the first 100 problems (file:line:col: field ...).
  std::vector<std::string> messages;
};

/// Loads `folder` (SGF CSVs, groups.json when present) with load_sgf_set, by
/// the rule `sandbox run --sgf` follows too (SgfLoadResult): the good files load,
/// a file with any problem is skipped whole, and each problem is listed. Not ok
/// (the live set is kept) when it is not a folder, or when it has problems and
/// not one file loaded.
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
