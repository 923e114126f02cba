#include "render/recorder.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

namespace ps {

namespace fs = std::filesystem;

std::string timestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

bool Recorder::start(const std::string& dir, int w, int h, int fps, std::string* error) {
  stop();
  w_ = w & ~1;
  h_ = h & ~1;
  frames_ = 0;
  if (w_ < 2 || h_ < 2) {
    if (error) *error = "viewport too small to record";
    return false;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    if (error) *error = dir + ": cannot create folder: " + ec.message();
    return false;
  }
  std::string stem = (fs::path(dir) / ("recording-" + timestamp())).string();
  if (on_path("ffmpeg")) {
    // Rows arrive bottom-up from glReadPixels: vflip puts them right.
    target_ = stem + ".mp4";
    std::string cmd = "ffmpeg -loglevel error -y -f rawvideo -pixel_format rgb24 -video_size " +
                      std::to_string(w_) + "x" + std::to_string(h_) + " -framerate " +
                      std::to_string(fps) +
                      " -i - -vf vflip -c:v libx264 -pix_fmt yuv420p -crf 18 '" + target_ + "'";
    pipe_ = popen(cmd.c_str(), "w");
    if (pipe_) {
      active_ = true;
      return true;
    }
  }
  if (!png_supported()) {
    if (error) *error = "neither ffmpeg nor PNG output (libstb) is available";
    return false;
  }
  target_ = stem;
  fs::create_directories(target_, ec);
  if (ec) {
    if (error) *error = target_ + ": cannot create folder: " + ec.message();
    return false;
  }
  img_.resize(w_, h_);
  active_ = true;
  return true;
}

bool Recorder::write_bottom_up(const uint8_t* rgb, std::string* error) {
  if (!active_) return false;
  const size_t row = static_cast<size_t>(w_) * 3;
  if (pipe_) {
    if (std::fwrite(rgb, 1, row * h_, pipe_) != row * h_) {
      if (error) *error = "ffmpeg stopped accepting frames";
      stop();
      return false;
    }
  } else {
    for (int y = 0; y < h_; ++y) std::memcpy(&img_.rgb[row * y], rgb + row * (h_ - 1 - y), row);
    char name[32];
    std::snprintf(name, sizeof name, "frame_%05d.png", frames_);
    if (!write_png((fs::path(target_) / name).string(), img_, error)) {
      stop();
      return false;
    }
  }
  ++frames_;
  return true;
}

void Recorder::stop() {
  if (pipe_) pclose(pipe_);
  pipe_ = nullptr;
  active_ = false;
}

}  // namespace ps
