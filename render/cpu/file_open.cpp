#include "render/cpu/file_open.h"

#include <exception>
#include <filesystem>

namespace ps {

namespace {
constexpr size_t kMaxMessages = 100;  // a broken file can report a problem per row
}  // namespace

SgfSetOpen open_sgf_set(const std::string& folder) {
  SgfSetOpen out;
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    out.messages.push_back(folder + ": no such folder (the current set is kept)");
    return out;
  }
  SgfSetLoadResult r;
  try {
    r = load_sgf_set(folder);
  } catch (const std::exception& e) {  // e.g. out of memory on a huge folder
    out.messages.push_back(std::string(e.what()) + " (the current set is kept)");
    return out;
  }
  out.files = r.files;
  out.skipped = r.skipped;
  out.problems = r.diagnostics.size();
  if (!r.ok()) {
    // The verdict first (the panel shows the first few lines), then the problems.
    const size_t n = r.diagnostics.size(), all = r.files + r.skipped.size();
    const std::string problems = std::to_string(n) + (n == 1 ? " problem" : " problems");
    if (r.files == 0) {
      out.messages.push_back(folder + ": not loaded, " + problems +
                             " (the current set is kept; fix the files and load again)");
    } else {
      out.messages.push_back(folder + ": " + problems + ", " + std::to_string(r.skipped.size()) +
                             " of " + std::to_string(all) +
                             " SGF files skipped (the other files are loaded)");
    }
    for (size_t k = 0; k < n && k < kMaxMessages; ++k)
      out.messages.push_back(r.diagnostics[k].what());
    if (r.files == 0) return out;
  }
  out.ok = true;
  out.set = std::move(r.set);
  for (const SgfGroup& g : out.set.groups) out.entries += g.entries.size();
  return out;
}

SgfList sgf_list_for_sim(const SgfSet& set) {
  SgfList l = sgf_flatten(set);
  if (l.files.empty()) {
    SgfFile f;
    f.start = f.end = 0;
    l.files.push_back(f);
  }
  return l;
}

ImageOpen open_image_file(const std::string& path) {
  ImageOpen out;
  try {
    Image img = load_image(path);  // InputError naming the file
    if (img.width <= 0 || img.height <= 0) {
      out.message = path + ": empty image";
      return out;
    }
    out.image = std::move(img);
    out.ok = true;
  } catch (const std::exception& e) {
    out.message = e.what();
  }
  return out;
}

}  // namespace ps
