#include "render/cpu/video.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace ps {

namespace fs = std::filesystem;

bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string p = path;
  size_t start = 0;
  while (start <= p.size()) {
    size_t colon = p.find(':', start);
    std::string dir =
        p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty() && access((fs::path(dir) / name).c_str(), X_OK) == 0) return true;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return false;
}

namespace {

/// The text in single quotes for /bin/sh ('it'\''s').
std::string shell_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

}  // namespace

bool encode_png_sequence(const std::string& pattern, int fps, const std::string& mp4,
                         std::string* error) {
  if (!on_path("ffmpeg")) {
    if (error) *error = "ffmpeg is not on PATH";
    return false;
  }
  // Even sizes for yuv420p; the frames keep their pixels otherwise.
  const std::string cmd = "ffmpeg -loglevel error -y -framerate " +
                          std::to_string(fps > 0 ? fps : 30) + " -i " + shell_quote(pattern) +
                          " -vf " + shell_quote("pad=ceil(iw/2)*2:ceil(ih/2)*2") +
                          " -c:v libx264 -pix_fmt yuv420p -crf 18 " + shell_quote(mp4);
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    if (error) *error = "ffmpeg failed (exit status " + std::to_string(rc) + ") writing " + mp4;
    return false;
  }
  return true;
}

}  // namespace ps
