/// Where the window's OpenGL context lives.
///
/// Glx (the default): GLFW's own context on the window, as on any desktop.
///
/// Egl: a GPU with no display of its own (a headless server, a virtual X
/// server such as Xvfb or a VNC session). Its X server cannot hand GLX to the
/// GPU's driver, so the window's context would be a software one. Here the
/// context is made with EGL on the GPU itself (EGL_EXT_platform_device, the
/// device CUDA uses when the driver says which one that is) and renders into
/// an off-screen surface of the window's size; each frame is read back and
/// put into the window (XPutImage), as VirtualGL does. OpenGL and the
/// CUDA-GL interop then run on the GPU; the copy costs about a frame's
/// pixels over the bus (3.7 MB at 1280 x 720).
#pragma once
#include <memory>
#include <string>

struct GLFWwindow;

namespace ps {

enum class GlBackend { Glx, Egl };

/// "glx" or "egl"; false for another word.
bool parse_gl_backend(const std::string& s, GlBackend& out);

class GlContext {
 public:
  GlContext();
  ~GlContext();
  GlContext(const GlContext&) = delete;
  GlContext& operator=(const GlContext&) = delete;

  /// The window hints glfwCreateWindow needs for this backend (call after glfwInit).
  static void window_hints(GlBackend b);
  /// Makes the context current and loads OpenGL 4.3 core (glad). False with `error` set.
  bool create(GlBackend b, GLFWwindow* window, std::string& error);
  /// The off-screen surface follows the framebuffer's size (EGL; GLX: nothing to do).
  void resize(int fb_width, int fb_height);
  /// Shows the frame: glfwSwapBuffers, or the read-back into the window.
  void swap();
  void swap_interval(int n);
  /// Releases the EGL context and surface (before the window and GLFW go).
  void destroy();
  /// "GLX" or "EGL (device N), frames copied into the window".
  const std::string& describe() const;
  GlBackend backend() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
