// The window's OpenGL context: GLX through GLFW, or EGL on a GPU with no
// display, presented by read-back (see gl_context.h).
#include "render/gl_context.h"

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(PS_HAVE_EGL)
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
// GLFW's native X11 access (glfw3native.h declares these, but it also wants
// the XRandR headers, which nothing here needs).
extern "C" Display* glfwGetX11Display(void);
extern "C" Window glfwGetX11Window(GLFWwindow* window);
#endif

namespace ps {

bool parse_gl_backend(const std::string& s, GlBackend& out) {
  if (s == "glx")
    out = GlBackend::Glx;
  else if (s == "egl")
    out = GlBackend::Egl;
  else
    return false;
  return true;
}

struct GlContext::Impl {
  GlBackend backend = GlBackend::Glx;
  GLFWwindow* window = nullptr;
  std::string description = "GLX";
#if defined(PS_HAVE_EGL)
  EGLDisplay dpy = EGL_NO_DISPLAY;
  EGLConfig config = nullptr;
  EGLContext ctx = EGL_NO_CONTEXT;
  EGLSurface surface = EGL_NO_SURFACE;
  int width = 0, height = 0;  // the surface's
  // Presentation: the frame read back (bottom-up), flipped into an XImage.
  Display* x = nullptr;
  Window xwin = 0;
  GC gc = nullptr;
  XImage* image = nullptr;
  std::vector<uint32_t> pixels;  // the XImage's rows, top-down
  std::vector<uint32_t> readback;

  void destroy_image() {
    if (image) {
      image->data = nullptr;  // ours (pixels), not Xlib's to free
      XDestroyImage(image);
      image = nullptr;
    }
  }

  bool make_surface(int w, int h, std::string& error) {
    if (surface != EGL_NO_SURFACE) {
      eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx);
      eglDestroySurface(dpy, surface);
      surface = EGL_NO_SURFACE;
    }
    const EGLint attrs[] = {EGL_WIDTH, w, EGL_HEIGHT, h, EGL_NONE};
    surface = eglCreatePbufferSurface(dpy, config, attrs);
    if (surface == EGL_NO_SURFACE) {
      error = "eglCreatePbufferSurface failed (" + std::to_string(eglGetError()) + ")";
      return false;
    }
    if (!eglMakeCurrent(dpy, surface, surface, ctx)) {
      error = "eglMakeCurrent failed (" + std::to_string(eglGetError()) + ")";
      return false;
    }
    width = w;
    height = h;
    destroy_image();
    pixels.assign(static_cast<size_t>(w) * static_cast<size_t>(h), 0u);
    readback.assign(pixels.size(), 0u);
    XWindowAttributes wa{};
    XGetWindowAttributes(x, xwin, &wa);
    image = XCreateImage(x, wa.visual, static_cast<unsigned>(wa.depth), ZPixmap, 0,
                         reinterpret_cast<char*>(pixels.data()), static_cast<unsigned>(w),
                         static_cast<unsigned>(h), 32, 0);
    if (!image) {
      error = "XCreateImage failed (the window's visual is not 24 or 32 bits deep)";
      return false;
    }
    return true;
  }

  bool create_egl(std::string& error) {
    auto query_devices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
        eglGetProcAddress("eglGetPlatformDisplayEXT"));
    auto query_attrib = reinterpret_cast<PFNEGLQUERYDEVICEATTRIBEXTPROC>(
        eglGetProcAddress("eglQueryDeviceAttribEXT"));
    if (!query_devices || !platform_display) {
      error = "EGL has no device platform (EGL_EXT_device_enumeration, EGL_EXT_platform_device)";
      return false;
    }
    EGLDeviceEXT devices[16];
    EGLint count = 0;
    if (!query_devices(16, devices, &count) || count <= 0) {
      error = "EGL finds no GPU";
      return false;
    }
    // The device CUDA calls 0 when the driver says which one that is
    // (EGL_NV_device_cuda), else the first: the interop needs them to match.
    int pick = 0;
    for (int i = 0; i < count && query_attrib; ++i) {
      EGLAttrib cuda = -1;
#ifdef EGL_CUDA_DEVICE_NV
      if (query_attrib(devices[i], EGL_CUDA_DEVICE_NV, &cuda) && cuda == 0) {
        pick = i;
        break;
      }
#endif
    }
    for (int i = pick; i < count; ++i) {
      dpy = platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
      EGLint major = 0, minor = 0;
      if (dpy != EGL_NO_DISPLAY && eglInitialize(dpy, &major, &minor)) {
        description = "EGL " + std::to_string(major) + "." + std::to_string(minor) + " on GPU " +
                      std::to_string(i) + ", frames copied into the window";
        break;
      }
      dpy = EGL_NO_DISPLAY;
    }
    if (dpy == EGL_NO_DISPLAY) {
      error = "eglInitialize failed on every GPU EGL lists";
      return false;
    }
    if (!eglBindAPI(EGL_OPENGL_API)) {
      error = "EGL cannot bind the OpenGL API";
      return false;
    }
    const EGLint cfg[] = {EGL_SURFACE_TYPE,
                          EGL_PBUFFER_BIT,
                          EGL_RENDERABLE_TYPE,
                          EGL_OPENGL_BIT,
                          EGL_RED_SIZE,
                          8,
                          EGL_GREEN_SIZE,
                          8,
                          EGL_BLUE_SIZE,
                          8,
                          EGL_ALPHA_SIZE,
                          8,
                          EGL_DEPTH_SIZE,
                          24,
                          EGL_NONE};
    EGLint n = 0;
    if (!eglChooseConfig(dpy, cfg, &config, 1, &n) || n < 1) {
      error = "no EGL configuration with an RGBA8 pbuffer";
      return false;
    }
    const EGLint ctx_attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                4,
                                EGL_CONTEXT_MINOR_VERSION,
                                3,
                                EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                EGL_NONE};
    ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, ctx_attrs);
    if (ctx == EGL_NO_CONTEXT) {
      error = "eglCreateContext (OpenGL 4.3 core) failed (" + std::to_string(eglGetError()) + ")";
      return false;
    }
    x = glfwGetX11Display();
    xwin = glfwGetX11Window(window);
    if (!x || !xwin) {
      error = "the window is not an X11 window";
      return false;
    }
    gc = XCreateGC(x, xwin, 0, nullptr);
    int fbw = 0, fbh = 0;
    glfwGetFramebufferSize(window, &fbw, &fbh);
    return make_surface(fbw > 0 ? fbw : 1, fbh > 0 ? fbh : 1, error);
  }

  void present() {
    if (!image || width <= 0 || height <= 0) return;
    glReadPixels(0, 0, width, height, GL_BGRA, GL_UNSIGNED_BYTE, readback.data());
    const size_t w = static_cast<size_t>(width);
    for (int r = 0; r < height; ++r)  // OpenGL's rows go up, X's down
      std::memcpy(&pixels[static_cast<size_t>(r) * w],
                  &readback[static_cast<size_t>(height - 1 - r) * w], w * sizeof(uint32_t));
    XPutImage(x, xwin, gc, image, 0, 0, 0, 0, static_cast<unsigned>(width),
              static_cast<unsigned>(height));
    XFlush(x);
  }

  void destroy() {
    destroy_image();
    if (gc && x) XFreeGC(x, gc);
    gc = nullptr;
    x = nullptr;
    if (dpy != EGL_NO_DISPLAY) {
      eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      if (surface != EGL_NO_SURFACE) eglDestroySurface(dpy, surface);
      if (ctx != EGL_NO_CONTEXT) eglDestroyContext(dpy, ctx);
      eglTerminate(dpy);
    }
    dpy = EGL_NO_DISPLAY;
    surface = EGL_NO_SURFACE;
    ctx = EGL_NO_CONTEXT;
  }
#endif
};

GlContext::GlContext() : impl_(std::make_unique<Impl>()) {}

GlContext::~GlContext() { destroy(); }

void GlContext::destroy() {
#if defined(PS_HAVE_EGL)
  impl_->destroy();
#endif
}

void GlContext::window_hints(GlBackend b) {
  if (b == GlBackend::Egl) {
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);  // the context is EGL's, not the window's
  } else {
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  }
}

bool GlContext::create(GlBackend b, GLFWwindow* window, std::string& error) {
  Impl& s = *impl_;
  s.backend = b;
  s.window = window;
  int glv = 0;
  if (b == GlBackend::Egl) {
#if defined(PS_HAVE_EGL)
    if (!s.create_egl(error)) return false;
    glv = gladLoadGL(reinterpret_cast<GLADloadfunc>(eglGetProcAddress));
#else
    error = "this build has no EGL (libegl-dev and libx11-dev were missing when it was configured)";
    return false;
#endif
  } else {
    glfwMakeContextCurrent(window);
    glv = gladLoadGL(glfwGetProcAddress);
  }
  if (glv == 0 || GLAD_VERSION_MAJOR(glv) < 4 ||
      (GLAD_VERSION_MAJOR(glv) == 4 && GLAD_VERSION_MINOR(glv) < 3)) {
    error = "OpenGL 4.3 core is required (got " + std::to_string(GLAD_VERSION_MAJOR(glv)) + "." +
            std::to_string(GLAD_VERSION_MINOR(glv)) + ")";
    return false;
  }
  return true;
}

void GlContext::resize(int fb_width, int fb_height) {
#if defined(PS_HAVE_EGL)
  Impl& s = *impl_;
  if (s.backend != GlBackend::Egl || fb_width <= 0 || fb_height <= 0) return;
  if (fb_width == s.width && fb_height == s.height) return;
  std::string error;
  if (!s.make_surface(fb_width, fb_height, error))
    std::fprintf(stderr, "sandbox: %s\n", error.c_str());
#else
  (void)fb_width;
  (void)fb_height;
#endif
}

void GlContext::swap() {
  Impl& s = *impl_;
  if (s.backend == GlBackend::Glx) {
    glfwSwapBuffers(s.window);
    return;
  }
#if defined(PS_HAVE_EGL)
  s.present();
#endif
}

void GlContext::swap_interval(int n) {
  if (impl_->backend == GlBackend::Glx) glfwSwapInterval(n);
  // EGL: a pbuffer has no vertical blank; the window's 62 fps cap applies.
}

const std::string& GlContext::describe() const { return impl_->description; }
GlBackend GlContext::backend() const { return impl_->backend; }

}  // namespace ps
