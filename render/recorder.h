/// Records the scene viewport to a video: raw RGB frames piped to `ffmpeg`
/// (H.264 MP4) when it is on PATH, else a numbered PNG sequence in a folder.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
#include "render/cpu/raster.h"
#include "render/cpu/video.h"

namespace ps {

class Recorder {
 public:
  ~Recorder() { stop(); }
  /// Starts recording w x h frames (both made even) into `dir`; returns false
  /// and sets *error when neither ffmpeg nor PNG output is possible.
  bool start(const std::string& dir, int w, int h, int fps, std::string* error);
  /// One frame, bottom row first (as glReadPixels returns it), RGB8.
  bool write_bottom_up(const uint8_t* rgb, std::string* error);
  void stop();
  bool active() const { return active_; }
  int width() const { return w_; }
  int height() const { return h_; }
  int frames() const { return frames_; }
  /// The .mp4 file or the PNG folder.
  const std::string& target() const { return target_; }
  bool uses_ffmpeg() const { return pipe_ != nullptr; }

 private:
  bool active_ = false;
  FILE* pipe_ = nullptr;
  int w_ = 0, h_ = 0, frames_ = 0;
  std::string target_;
  Image img_;  // PNG path: reused frame buffer
};

/// "YYYYmmdd-HHMMSS" in local time.
std::string timestamp();

}  // namespace ps
