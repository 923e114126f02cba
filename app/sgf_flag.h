// `--sgf DIR` of `sandbox run` and `sandbox compare`: timed body forces from a
// folder of SGF files, by the rule the window's SGF panel follows too
// (SgfLoadResult, sim/sgf/sgf.h): the good files load, a file with any problem
// is skipped whole, and each problem is reported (file:line:col: field).
#pragma once
#include <cstdio>
#include <filesystem>
#include <string>
#include "app/cli.h"
#include "sim/sgf/sgf.h"

namespace ps {

/// Loads the folder, prints a warning per problem and per skipped file and
/// (unless quiet) a line with the counts. Throws UsageError when `dir` is not
/// a folder.
inline SgfList load_sgf_flag(const std::string& dir, bool quiet) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError("--sgf: '" + dir + "' is not a folder");
  SgfLoadResult sgf = load_sgf_folder(dir);
  for (const auto& d : sgf.diagnostics) std::fprintf(stderr, "warning: %s\n", d.what());
  for (const auto& p : sgf.skipped)
    std::fprintf(stderr, "warning: %s: skipped (its problems are above)\n", p.c_str());
  if (!quiet) {
    std::printf("sgf %s: %zu files, %zu rows", dir.c_str(), sgf.list.files.size(),
                sgf.list.row_count());
    if (!sgf.skipped.empty())
      std::printf(" (%zu %s skipped, see warnings)", sgf.skipped.size(),
                  sgf.skipped.size() == 1 ? "file" : "files");
    std::printf("\n");
  }
  return std::move(sgf.list);
}

}  // namespace ps
