// `--sgf DIR` of `sandbox run` and `sandbox compare`: timed body forces from a
// folder of SGF files; malformed files or rows are reported, the rest loads.
#pragma once
#include <cstdio>
#include <filesystem>
#include <string>
#include "app/cli.h"
#include "sim/sgf/sgf.h"

namespace ps {

/// Loads the folder, prints a warning per skipped row and (unless quiet) a
/// line with the counts. Throws UsageError when `dir` is not a folder.
inline SgfList load_sgf_flag(const std::string& dir, bool quiet) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw UsageError("--sgf: '" + dir + "' is not a folder");
  SgfLoadResult sgf = load_sgf_folder(dir);
  for (const auto& d : sgf.diagnostics) std::fprintf(stderr, "warning: %s\n", d.what());
  if (!quiet)
    std::printf("sgf %s: %zu files, %zu rows%s\n", dir.c_str(), sgf.list.files.size(), sgf.list.row_count(),
                sgf.diagnostics.empty() ? "" : " (some rows skipped, see warnings)");
  return std::move(sgf.list);
}

}  // namespace ps
