/// OpenGL drawing for the window: the particle sprite renderer and a batch of
/// coloured overlay shapes. All buffers are allocated once and grown by
/// doubling; a frame only writes into them (glBufferSubData).
#pragma once
#include <glad/gl.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>
#include "render/cpu/colormap.h"
#include "render/cpu/dem_draw_rules.h"
#include "render/cpu/sprite_layer.h"
#include "sim/core/names.h"
#include "sim/core/vec.h"

namespace ps {

/// A linked GLSL program from two files in the shader folder. Throws
/// std::runtime_error naming the file and the compiler log.
class ShaderProgram {
 public:
  ShaderProgram() = default;
  ShaderProgram(const ShaderProgram&) = delete;
  ShaderProgram& operator=(const ShaderProgram&) = delete;
  ~ShaderProgram();
  void load(const std::string& vert_file, const std::string& frag_file);
  GLuint id() const { return prog_; }
  GLint uniform(const char* name) const { return glGetUniformLocation(prog_, name); }
  /// Deletes the program (while the context is still current).
  void release();

 private:
  GLuint prog_ = 0;
};

/// The shader folder: $PS_SHADER_DIR, else the source tree's shaders/ (compiled
/// in), else ../share/particle-sandbox/shaders and ./shaders beside the executable.
std::string shader_dir();

/// Particle columns as GPU buffers, one per attribute, so the CUDA-GL interop
/// (render/cuda/particle_interop.h) can map them and write each column on the
/// device. The renderer owns them; the interop only registers them.
struct ParticleGpuBuffers {
  GLuint pos = 0, vel = 0, scalar = 0, color = 0, radius = 0;
  size_t capacity = 0;  ///< particles the buffers hold
};

enum class ParticleShade : int { Base = 0, Scalar = 1, Direction = 2 };

/// How sprites reach the pixels. Points: one GL_POINTS vertex a particle,
/// sized in the vertex shader. Quads: one instanced quad (4 vertices) a
/// particle. Software: the discs drawn on the CPU into one layer
/// (render/cpu/sprite_layer.h), put over the scene as one textured quad. All
/// three shade the same disc; points and quads differ at the viewport's edge
/// (a quad is cut pixel by pixel, a point vanishes when its centre leaves),
/// and in cost: software OpenGL (Mesa's llvmpipe, the renderer of a machine
/// without a GPU driver) pays per instance and then per primitive, so at
/// 100 k particles on 2 cores points draw about 2.5x faster than quads and
/// the CPU layer faster again (docs/benchmarks.md). Auto takes, while every
/// sprite is small (radius <= kPointSpriteMaxRadiusPx), the CPU layer under
/// software OpenGL and points on a GPU; quads when zoomed in.
/// Settings key view.sprites = auto | points | quads | software.
enum class SpritePath : int { Auto = 0, Points = 1, Quads = 2, Software = 3 };
inline constexpr NameTable<SpritePath, 4> kSpritePathNames{0,
                                                           {"auto", "points", "quads", "software"}};
const char* sprite_path_name(SpritePath p);
constexpr float kPointSpriteMaxRadiusPx = 4.f;

class ParticleRenderer {
 public:
  void init();
  void destroy();
  /// Grows the buffers (doubling) to hold n particles; no-op when they do.
  /// Growing replaces their storage: release the interop's registration first.
  void reserve(size_t n);
  const ParticleGpuBuffers& buffers() const { return buf_; }
  /// Draws the first n rows from now on, written by someone else (the
  /// interop kernel); n must not exceed the capacity.
  /// `max_radius` (world units) is the largest row's radius (see SpritePath).
  void set_count(size_t n, float max_radius) {
    count_ = n <= buf_.capacity ? n : buf_.capacity;
    max_radius_ = max_radius;
    host_count_ = 0;  // the columns are on the device only
  }
  void set_sprite_path(SpritePath p) { path_ = p; }
  /// The path the last draw() took (the fps and screenshot log lines name it).
  SpritePath drew() const { return used_; }
  /// Whether the OpenGL renderer is a software one (llvmpipe, softpipe, SwiftShader).
  bool software_gl() const { return software_gl_; }

  /// Uploads n particles' columns (each may be null to keep the old contents).
  void upload(size_t n, const float* xy, const float* vxy, const float* scalar, const uint8_t* rgba,
              const float* radius);
  void set_colormap(Colormap c);
  /// Draws n particles; `selected` (row) is drawn last with a ring, or -1.
  void draw(const float view[16], float px_per_world, float size_scale, ParticleShade shade,
            float lo, float hi, int64_t selected);

 private:
  ShaderProgram prog_;
  GLuint vao_ = 0, points_vao_ = 0, quad_ = 0, cmap_tex_ = 0;
  float max_point_px_ = 1.f;  ///< GL_POINT_SIZE_RANGE's upper end
  float max_radius_ = 0.f;    ///< world units, over the rows drawn
  SpritePath path_ = SpritePath::Auto;
  SpritePath used_ = SpritePath::Quads;
  // The software path: host copies of the uploaded columns (kept only under
  // software OpenGL or when asked for), the colour map's texels, the layer.
  void draw_layer(const float view[16], float px_per_world, float size_scale, ParticleShade shade,
                  float lo, float hi);
  bool software_gl_ = false;
  struct HostColumns {
    std::vector<float> xy, vxy, scalar, radius;
    std::vector<uint8_t> rgba;
  } host_;
  size_t host_count_ =
      0;  ///< rows the host copies hold (0: none; the interop writes on the device)
  std::array<uint8_t, 256 * 4> cmap_texels_{};
  SpriteLayer layer_;
  ShaderProgram layer_prog_;
  GLuint layer_vao_ = 0, layer_tex_ = 0;
  int layer_w_ = 0, layer_h_ = 0;
  int cmap_ = -1;
  size_t count_ = 0;
  ParticleGpuBuffers buf_;
};

/// Overlay geometry in world units: thick lines, arrows, discs, rectangles.
/// Widths are given in screen pixels and converted with `px_to_world`.
class ShapeBatch {
 public:
  void init();
  void destroy();
  void clear(float px_to_world) {
    verts_.clear();
    px_ = px_to_world;
  }
  void line(Vec2 a, Vec2 b, float width_px, uint32_t rgba);
  /// Arrow from a to b with a head scaled to the pixel width.
  void arrow(Vec2 a, Vec2 b, float width_px, uint32_t rgba);
  void rect(Vec2 lo, Vec2 hi, uint32_t rgba);
  void rect_outline(Vec2 lo, Vec2 hi, float width_px, uint32_t rgba);
  void circle(Vec2 c, float r, float width_px, uint32_t rgba, int segments = 64);
  void disc(Vec2 c, float r, uint32_t rgba, int segments = 32);
  /// A filled convex polygon (a fan from its first vertex).
  void convex(const Vec2* v, int n, uint32_t rgba);
  /// The closed outline of a polygon.
  void outline(const Vec2* v, int n, float width_px, uint32_t rgba);
  void draw(const float view[16]);
  size_t vertex_count() const { return verts_.size(); }

 private:
  using Vertex = LineVertex;  // render/cpu/dem_draw_rules.h: the device's bond lines share it
  void tri(Vec2 a, Vec2 b, Vec2 c, uint32_t rgba);
  ShaderProgram prog_;
  GLuint vao_ = 0, vbo_ = 0;
  size_t capacity_ = 0;
  float px_ = 1.f;
  std::vector<Vertex> verts_;
};

/// Lines in ShapeBatch's vertex format (position, RGBA8; two triangles a
/// line) written on the device: the DEM bond lines of the CUDA-GL interop
/// (render/cuda/particle_interop.h registers the buffer and fills it), drawn
/// with the shapes program. Nothing crosses to the host.
class DeviceLineBuffer {
 public:
  void init();
  void destroy();
  /// Grows (doubling) to hold n vertices; no-op when it does. Growing
  /// replaces the storage: release the interop's registration first.
  void reserve(size_t n);
  GLuint buffer() const { return vbo_; }
  size_t capacity() const { return capacity_; }
  /// Draws the first n vertices from now on (at most the capacity).
  void set_count(size_t n) { count_ = n <= capacity_ ? n : capacity_; }
  size_t count() const { return count_; }
  void draw(const float view[16]);

 private:
  ShaderProgram prog_;
  GLuint vao_ = 0, vbo_ = 0;
  size_t capacity_ = 0, count_ = 0;
};

/// Packs 0..1 RGB and an alpha into a little-endian RGBA8 word.
uint32_t pack_rgba(float r, float g, float b, float a = 1.f);
inline uint32_t pack_rgba(const std::array<float, 3>& c, float a = 1.f) {
  return pack_rgba(c[0], c[1], c[2], a);
}

}  // namespace ps
