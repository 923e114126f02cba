/// Videos without GL: finding `ffmpeg` and encoding a numbered PNG sequence
/// into an H.264 MP4 (`sandbox compare --video`; the window's recorder pipes
/// raw frames to the same ffmpeg, render/recorder.h).
#pragma once
#include <string>

namespace ps {

/// True when an executable `name` is found on $PATH.
bool on_path(const std::string& name);

/// Runs `ffmpeg` on the PNG files `pattern` (printf style, "DIR/frame_%05d.png",
/// numbered from 0) at `fps` frames per second into `mp4`. False and *error
/// when ffmpeg is not on PATH or fails.
bool encode_png_sequence(const std::string& pattern, int fps, const std::string& mp4,
                         std::string* error);

}  // namespace ps
