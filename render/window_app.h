/// Entry point of the GLFW/OpenGL/ImGui window (built when PS_HAVE_WINDOW).
#pragma once
#include <string>
#include <vector>
#include "render/gl_context.h"

namespace ps {

struct WindowOptions {
  std::string scene;   ///< built-in name or path
  std::string lesson;  ///< open this lesson instead of the scene (id or path), if set
  std::string
      compare;  ///< start in the comparison view with these items ("solver.transfer=pic,apic")
  std::vector<std::string> overrides;  ///< --set key=value
  std::string backend = "auto";
  int threads = 0;
  int refine = 1;        ///< the command line's scene refined K times (load_refined)
  bool interop = true;   ///< false: draw the CUDA backend's particles from the host copy
  int vsync = -1;        ///< 0 / 1 override the saved setting; -1 keeps it
  double seconds = 0.0;  ///< > 0: close after this much wall time (measurements)
  GlBackend gl =
      GlBackend::Glx;    ///< --gl egl: OpenGL on a GPU with no display (render/gl_context.h)
  bool verbose = false;  ///< log every user action to stdout (GUI tests read it)
  /// With verbose: the state hash on every recorded frame's log line (the
  /// rewind tests compare them). A full hash costs ~6 ms a frame at 100 k particles.
  bool log_hashes = false;
  std::string screenshot_path;       ///< save a PNG after `screenshot_after_frames`
  int screenshot_after_frames = -1;  ///< -2: on the last frame (with `seconds`)
  int quit_after_frames = -1;        ///< close after this many frames (tests)
  int width = 1280, height = 720;
  bool paused = false;        ///< start paused
  std::string out_dir;        ///< screenshots and recordings (default ./captures)
  double soak_seconds = 0.0;  ///< > 0: run the soak schedule this long, then close (render/soak.h)
  std::string soak_log;       ///< CSV of resident memory samples during the soak
  std::string soak_plan =
      "lecture";  ///< lecture (one scene) or classroom (lessons, comparisons, rewind)
};

/// Opens the window and runs until closed; returns the process exit code.
int run_window(const WindowOptions& options);

}  // namespace ps
