/// The window's input state (internal to render/; part of App, window_state.h): the tools'
/// settings, the mouse and the key presses queued between frames, the particle grab and the
/// paint stroke in progress.
#pragma once
#include <cstdint>
#include <vector>
#include "render/cpu/tools.h"
#include "sim/core/vec.h"

namespace ps {

struct InputState {
  ToolSettings tools;
  bool left_down = false, right_down = false;
  Vec2 mouse{0.f, 0.f}, last_mouse{0.f, 0.f};
  /// Key presses since the last frame (GLFW key, mods), queued by a GLFW
  /// callback: ImGui 1.86 polls key state per frame and would miss a press
  /// and release that both fall between two frames.
  struct KeyPress {
    int key, mods;
  };
  std::vector<KeyPress> key_queue;
  std::vector<uint32_t> grab_rows;
  Vec2 grab_centroid_start{};
  PaintStroke stroke;
  std::vector<Vec2> paint_sites;
  uint16_t paint_group = 0;
};

}  // namespace ps
