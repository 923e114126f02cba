#include "render/gl_draw.h"

#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "render/cpu/dem_draw_rules.h"

namespace ps {

namespace fs = std::filesystem;

// [SECTION] Shaders ------------------------------------------------------------

std::string shader_dir() {
  if (const char* env = std::getenv("PS_SHADER_DIR"); env && *env) return env;
  std::vector<fs::path> candidates;
#ifdef PS_SHADER_DIR
  candidates.emplace_back(PS_SHADER_DIR);
#endif
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    fs::path dir = fs::path(exe).parent_path();
    candidates.push_back(dir / "shaders");
    candidates.push_back(dir / ".." / "shaders");
    candidates.push_back(dir / ".." / "share" / "particle-sandbox" / "shaders");
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::exists(c / "particles.vert", ec)) return c.string();
  }
  return candidates.empty() ? std::string("shaders") : candidates.front().string();
}

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read shader " + path +
                             " (set PS_SHADER_DIR to the project's shaders/ folder)");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

GLuint compile(GLenum type, const std::string& path) {
  std::string src = read_text(path);
  GLuint s = glCreateShader(type);
  const char* p = src.c_str();
  glShaderSource(s, 1, &p, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[4096];
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    glDeleteShader(s);
    throw std::runtime_error(path + ": shader does not compile:\n" + log);
  }
  return s;
}

}  // namespace

ShaderProgram::~ShaderProgram() { release(); }

void ShaderProgram::release() {
  if (prog_) glDeleteProgram(prog_);
  prog_ = 0;
}

void ShaderProgram::load(const std::string& vert_file, const std::string& frag_file) {
  std::string dir = shader_dir();
  GLuint vs = compile(GL_VERTEX_SHADER, (fs::path(dir) / vert_file).string());
  GLuint fs_ = 0;
  try {
    fs_ = compile(GL_FRAGMENT_SHADER, (fs::path(dir) / frag_file).string());
  } catch (...) {
    glDeleteShader(vs);
    throw;
  }
  GLuint p = glCreateProgram();
  glAttachShader(p, vs);
  glAttachShader(p, fs_);
  glLinkProgram(p);
  glDeleteShader(vs);
  glDeleteShader(fs_);
  GLint ok = 0;
  glGetProgramiv(p, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[4096];
    glGetProgramInfoLog(p, sizeof log, nullptr, log);
    glDeleteProgram(p);
    throw std::runtime_error(vert_file + " + " + frag_file + ": shaders do not link:\n" + log);
  }
  if (prog_) glDeleteProgram(prog_);
  prog_ = p;
}

const char* sprite_path_name(SpritePath p) { return kSpritePathNames(p); }

uint32_t pack_rgba(float r, float g, float b, float a) {
  auto q = [](float v) {
    return static_cast<uint32_t>(std::lround(std::clamp(v, 0.f, 1.f) * 255.f));
  };
  return q(r) | (q(g) << 8) | (q(b) << 16) | (q(a) << 24);
}

// [SECTION] Particles ----------------------------------------------------------

void ParticleRenderer::init() {
  prog_.load("particles.vert", "particles.frag");
  glGenVertexArrays(1, &vao_);
  glBindVertexArray(vao_);
  const float corners[8] = {-1.f, -1.f, 1.f, -1.f, -1.f, 1.f, 1.f, 1.f};
  glGenBuffers(1, &quad_);
  glBindBuffer(GL_ARRAY_BUFFER, quad_);
  glBufferData(GL_ARRAY_BUFFER, sizeof corners, corners, GL_STATIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  GLuint* bufs[5] = {&buf_.pos, &buf_.vel, &buf_.scalar, &buf_.color, &buf_.radius};
  for (GLuint* b : bufs) glGenBuffers(1, b);
  glBindVertexArray(0);
  glGenVertexArrays(1, &points_vao_);
  GLfloat range[2] = {1.f, 1.f};
  glGetFloatv(GL_POINT_SIZE_RANGE, range);
  max_point_px_ = range[1];
  // Software OpenGL: small sprites go through the CPU layer (SpritePath).
  const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  std::string lower = renderer ? renderer : "";
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  software_gl_ = lower.find("llvmpipe") != std::string::npos ||
                 lower.find("softpipe") != std::string::npos ||
                 lower.find("swiftshader") != std::string::npos;
  layer_prog_.load("layer.vert", "layer.frag");
  glGenVertexArrays(1, &layer_vao_);
  glBindVertexArray(layer_vao_);
  glBindBuffer(GL_ARRAY_BUFFER, quad_);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  glBindVertexArray(0);
  glGenTextures(1, &layer_tex_);
  glGenTextures(1, &cmap_tex_);
  reserve(4096);
  set_colormap(Colormap::Viridis);
}

void ParticleRenderer::destroy() {
  GLuint bufs[6] = {quad_, buf_.pos, buf_.vel, buf_.scalar, buf_.color, buf_.radius};
  glDeleteBuffers(6, bufs);
  glDeleteVertexArrays(1, &vao_);
  glDeleteVertexArrays(1, &points_vao_);
  glDeleteVertexArrays(1, &layer_vao_);
  glDeleteTextures(1, &cmap_tex_);
  glDeleteTextures(1, &layer_tex_);
  vao_ = points_vao_ = layer_vao_ = quad_ = cmap_tex_ = layer_tex_ = 0;
  layer_w_ = layer_h_ = 0;
  prog_.release();
  layer_prog_.release();
  buf_ = ParticleGpuBuffers{};
}

void ParticleRenderer::reserve(size_t n) {
  if (n <= buf_.capacity) return;
  size_t cap = std::max<size_t>(buf_.capacity, 4096);
  while (cap < n) cap *= 2;
  // The same columns feed two vertex arrays: per instance (quads) and per vertex (points).
  auto alloc = [&](GLuint b, GLuint loc, int comps, size_t elem, GLenum type, GLboolean norm) {
    glBindBuffer(GL_ARRAY_BUFFER, b);
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(cap * elem), nullptr, GL_DYNAMIC_DRAW);
    for (GLuint vao : {vao_, points_vao_}) {
      glBindVertexArray(vao);
      glEnableVertexAttribArray(loc);
      glVertexAttribPointer(loc, comps, type, norm, 0, nullptr);
      glVertexAttribDivisor(loc, vao == vao_ ? 1 : 0);
    }
  };
  alloc(buf_.pos, 1, 2, 2 * sizeof(float), GL_FLOAT, GL_FALSE);
  alloc(buf_.vel, 2, 2, 2 * sizeof(float), GL_FLOAT, GL_FALSE);
  alloc(buf_.scalar, 3, 1, sizeof(float), GL_FLOAT, GL_FALSE);
  alloc(buf_.color, 4, 4, 4, GL_UNSIGNED_BYTE, GL_TRUE);
  alloc(buf_.radius, 5, 1, sizeof(float), GL_FLOAT, GL_FALSE);
  glBindVertexArray(0);
  buf_.capacity = cap;
}

void ParticleRenderer::upload(size_t n, const float* xy, const float* vxy, const float* scalar,
                              const uint8_t* rgba, const float* radius) {
  reserve(n);
  count_ = n;
  if (n == 0) return;
  auto sub = [](GLuint b, const void* data, size_t bytes) {
    if (!data) return;
    glBindBuffer(GL_ARRAY_BUFFER, b);
    glBufferSubData(GL_ARRAY_BUFFER, 0, static_cast<GLsizeiptr>(bytes), data);
  };
  sub(buf_.pos, xy, n * 2 * sizeof(float));
  sub(buf_.vel, vxy, n * 2 * sizeof(float));
  sub(buf_.scalar, scalar, n * sizeof(float));
  sub(buf_.color, rgba, n * 4);
  sub(buf_.radius, radius, n * sizeof(float));
  if (radius) max_radius_ = *std::max_element(radius, radius + n);
  // Host copies for the software layer (only where it can be used).
  host_count_ = 0;
  if (software_gl_ || path_ == SpritePath::Software) {
    auto keep = [n](auto& dst, const auto* src, size_t per) {
      if (src) dst.assign(src, src + n * per);
    };
    keep(host_.xy, xy, 2);
    keep(host_.vxy, vxy, 2);
    keep(host_.scalar, scalar, 1);
    keep(host_.rgba, rgba, 4);
    keep(host_.radius, radius, 1);
    if (host_.xy.size() >= 2 * n && host_.radius.size() >= n) host_count_ = n;
  }
}

void ParticleRenderer::set_colormap(Colormap c) {
  if (static_cast<int>(c) == cmap_) return;
  cmap_ = static_cast<int>(c);
  uint8_t texels[256 * 4];
  for (int i = 0; i < 256; ++i) {
    auto rgb = colormap_rgb(c, static_cast<float>(i) / 255.f);
    for (int k = 0; k < 3; ++k)
      texels[4 * i + k] = static_cast<uint8_t>(std::lround(rgb[static_cast<size_t>(k)] * 255.f));
    texels[4 * i + 3] = 255;
  }
  std::copy(texels, texels + 256 * 4, cmap_texels_.begin());
  glBindTexture(GL_TEXTURE_1D, cmap_tex_);
  glTexImage1D(GL_TEXTURE_1D, 0, GL_RGBA8, 256, 0, GL_RGBA, GL_UNSIGNED_BYTE, texels);
  glTexParameteri(GL_TEXTURE_1D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_1D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_1D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
}

void ParticleRenderer::draw(const float view[16], float px_per_world, float size_scale,
                            ParticleShade shade, float lo, float hi, int64_t selected) {
  if (count_ == 0) return;
  glUseProgram(prog_.id());
  glUniformMatrix4fv(prog_.uniform("u_view"), 1, GL_FALSE, view);
  glUniform1f(prog_.uniform("u_px_per_world"), px_per_world);
  glUniform1f(prog_.uniform("u_size_scale"), size_scale);
  glUniform1i(prog_.uniform("u_mode"), static_cast<int>(shade));
  glUniform2f(prog_.uniform("u_range"), lo, hi);
  glUniform1i(prog_.uniform("u_cmap"), 0);
  glUniform1i(prog_.uniform("u_selected"), -1);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_1D, cmap_tex_);
  // The largest sprite's radius in pixels decides the path (see SpritePath).
  const float r_px_max = std::max(max_radius_ * size_scale * px_per_world, 1.f);
  const bool small = r_px_max <= kPointSpriteMaxRadiusPx;
  const bool host = host_count_ == count_;
  if ((path_ == SpritePath::Software || (path_ == SpritePath::Auto && software_gl_ && small)) &&
      host) {
    used_ = SpritePath::Software;
  } else if ((path_ == SpritePath::Points || (path_ == SpritePath::Auto && small)) &&
             2.f * r_px_max <= max_point_px_) {
    used_ = SpritePath::Points;
  } else {
    used_ = SpritePath::Quads;
  }
  if (used_ == SpritePath::Software) {
    draw_layer(view, px_per_world, size_scale, shade, lo, hi);
    glUseProgram(prog_.id());
  } else if (used_ == SpritePath::Points) {
    glUniform1i(prog_.uniform("u_points"), 1);
    glEnable(GL_PROGRAM_POINT_SIZE);
    glBindVertexArray(points_vao_);
    glDrawArrays(GL_POINTS, 0, static_cast<GLsizei>(count_));
    glDisable(GL_PROGRAM_POINT_SIZE);
  }
  glUniform1i(prog_.uniform("u_points"), 0);
  glBindVertexArray(vao_);
  if (used_ == SpritePath::Quads)
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, static_cast<GLsizei>(count_));
  if (selected >= 0 && static_cast<size_t>(selected) < count_) {
    // Drawn again on top so neighbours never hide it; gl_InstanceID is 0 here.
    glUniform1i(prog_.uniform("u_selected"), 0);
    glDrawArraysInstancedBaseInstance(GL_TRIANGLE_STRIP, 0, 4, 1, static_cast<GLuint>(selected));
  }
  glBindVertexArray(0);
}

void ParticleRenderer::draw_layer(const float view[16], float px_per_world, float size_scale,
                                  ParticleShade shade, float lo, float hi) {
  // The region: the scissor box where one is set (comparison panes), else the viewport.
  GLint vp[4] = {0, 0, 0, 0};
  glGetIntegerv(GL_VIEWPORT, vp);
  GLint r[4] = {vp[0], vp[1], vp[2], vp[3]};
  if (glIsEnabled(GL_SCISSOR_TEST)) {
    GLint sc[4];
    glGetIntegerv(GL_SCISSOR_BOX, sc);
    const GLint x0 = std::max(vp[0], sc[0]), y0 = std::max(vp[1], sc[1]);
    const GLint x1 = std::min(vp[0] + vp[2], sc[0] + sc[2]),
                y1 = std::min(vp[1] + vp[3], sc[1] + sc[3]);
    r[0] = x0;
    r[1] = y0;
    r[2] = std::max(0, x1 - x0);
    r[3] = std::max(0, y1 - y0);
  }
  if (r[2] <= 0 || r[3] <= 0) return;
  // World -> NDC (column-major view matrix) -> framebuffer pixels.
  const float sx = 0.5f * static_cast<float>(vp[2]), sy = 0.5f * static_cast<float>(vp[3]);
  SpriteLayerView v;
  v.a00 = view[0] * sx;
  v.a01 = view[4] * sx;
  v.b0 = (view[12] + 1.f) * sx + static_cast<float>(vp[0]);
  v.a10 = view[1] * sy;
  v.a11 = view[5] * sy;
  v.b1 = (view[13] + 1.f) * sy + static_cast<float>(vp[1]);
  v.x0 = r[0];
  v.y0 = r[1];
  v.w = r[2];
  v.h = r[3];
  SpriteLayerInput in;
  in.n = count_;
  in.xy = host_.xy.data();
  in.vxy = host_.vxy.size() >= 2 * count_ ? host_.vxy.data() : nullptr;
  in.scalar = host_.scalar.size() >= count_ ? host_.scalar.data() : nullptr;
  in.rgba = host_.rgba.size() >= 4 * count_ ? host_.rgba.data() : nullptr;
  in.radius = host_.radius.data();
  in.px_per_world = px_per_world;
  in.size_scale = size_scale;
  in.mode = static_cast<int>(shade);
  in.lo = lo;
  in.hi = hi;
  in.cmap = cmap_texels_.data();
  layer_.draw(v, in);
  const LayerRect d = layer_.drawn();
  if (d.empty()) return;  // nothing on screen

  // Upload and composite the sprites' bounding box only (the rest is transparent).
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, layer_tex_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  if (layer_w_ != v.w || layer_h_ != v.h) {
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, v.w, v.h, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                 layer_.pixels().data());
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    layer_w_ = v.w;
    layer_h_ = v.h;
  } else {
    glPixelStorei(GL_UNPACK_ROW_LENGTH, v.w);
    glPixelStorei(GL_UNPACK_SKIP_PIXELS, d.x);
    glPixelStorei(GL_UNPACK_SKIP_ROWS, d.y);
    glTexSubImage2D(GL_TEXTURE_2D, 0, d.x, d.y, d.w, d.h, GL_RGBA, GL_UNSIGNED_BYTE,
                    layer_.pixels().data());
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
    glPixelStorei(GL_UNPACK_SKIP_ROWS, 0);
  }
  glUseProgram(layer_prog_.id());
  const auto ndc_x = [&](GLint x) {
    return 2.f * static_cast<float>(x - vp[0]) / static_cast<float>(vp[2]) - 1.f;
  };
  const auto ndc_y = [&](GLint y) {
    return 2.f * static_cast<float>(y - vp[1]) / static_cast<float>(vp[3]) - 1.f;
  };
  const GLint fx0 = r[0] + d.x, fy0 = r[1] + d.y;  // the box in framebuffer pixels
  glUniform4f(layer_prog_.uniform("u_rect"), ndc_x(fx0), ndc_y(fy0), ndc_x(fx0 + d.w),
              ndc_y(fy0 + d.h));
  const float iw = 1.f / static_cast<float>(v.w), ih = 1.f / static_cast<float>(v.h);
  glUniform4f(layer_prog_.uniform("u_uv"), static_cast<float>(d.x) * iw,
              static_cast<float>(d.y) * ih, static_cast<float>(d.x + d.w) * iw,
              static_cast<float>(d.y + d.h) * ih);
  glUniform1i(layer_prog_.uniform("u_layer"), 0);
  // Premultiplied "over"; the blend state is restored for what follows.
  GLint src_rgb = GL_SRC_ALPHA, dst_rgb = GL_ONE_MINUS_SRC_ALPHA, src_a = GL_SRC_ALPHA,
        dst_a = GL_ONE_MINUS_SRC_ALPHA;
  glGetIntegerv(GL_BLEND_SRC_RGB, &src_rgb);
  glGetIntegerv(GL_BLEND_DST_RGB, &dst_rgb);
  glGetIntegerv(GL_BLEND_SRC_ALPHA, &src_a);
  glGetIntegerv(GL_BLEND_DST_ALPHA, &dst_a);
  glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glBindVertexArray(layer_vao_);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  glBlendFuncSeparate(static_cast<GLenum>(src_rgb), static_cast<GLenum>(dst_rgb),
                      static_cast<GLenum>(src_a), static_cast<GLenum>(dst_a));
  glBindTexture(GL_TEXTURE_2D, 0);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_1D,
                cmap_tex_);  // the sprite program's colour map, for the selection drawn next
}

// [SECTION] Overlay shapes -----------------------------------------------------

namespace {

/// The shapes program, a vertex array and its buffer of LineVertex
/// (position, normalised RGBA8), `capacity` vertices (0: no storage yet).
void init_line_vertices(ShaderProgram& prog, GLuint& vao, GLuint& vbo, size_t capacity) {
  prog.load("shapes.vert", "shapes.frag");
  glGenVertexArrays(1, &vao);
  glGenBuffers(1, &vbo);
  glBindVertexArray(vao);
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  if (capacity)
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(capacity * sizeof(LineVertex)), nullptr,
                 GL_DYNAMIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(LineVertex), nullptr);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(LineVertex),
                        reinterpret_cast<void*>(2 * sizeof(float)));
  glBindVertexArray(0);
}

}  // namespace

void ShapeBatch::init() {
  capacity_ = 1 << 16;
  init_line_vertices(prog_, vao_, vbo_, capacity_);
  verts_.reserve(capacity_);
}

void ShapeBatch::destroy() {
  glDeleteBuffers(1, &vbo_);
  glDeleteVertexArrays(1, &vao_);
  vbo_ = vao_ = 0;
  prog_.release();
}

void ShapeBatch::tri(Vec2 a, Vec2 b, Vec2 c, uint32_t rgba) {
  verts_.push_back({a.x, a.y, rgba});
  verts_.push_back({b.x, b.y, rgba});
  verts_.push_back({c.x, c.y, rgba});
}

void ShapeBatch::line(Vec2 a, Vec2 b, float width_px, uint32_t rgba) {
  Vec2 v[6];
  if (!line_triangles(a, b, width_px, px_, v))
    return;  // the device's bond lines use the same triangles
  tri(v[0], v[1], v[2], rgba);
  tri(v[3], v[4], v[5], rgba);
}

void ShapeBatch::arrow(Vec2 a, Vec2 b, float width_px, uint32_t rgba) {
  Vec2 d = b - a;
  float len = length(d);
  if (!(len > 0.f)) return;
  Vec2 u = d / len;
  // Head: at most 40 % of the arrow, about 3.5 line widths long.
  float head = std::min(0.4f * len, 3.5f * width_px * px_ + 2.f * px_);
  Vec2 base = b - u * head;
  line(a, base, width_px, rgba);
  Vec2 n = perp(u) * (0.6f * head);
  tri(b, base + n, base - n, rgba);
}

void ShapeBatch::rect(Vec2 lo, Vec2 hi, uint32_t rgba) {
  tri(lo, Vec2{hi.x, lo.y}, hi, rgba);
  tri(lo, hi, Vec2{lo.x, hi.y}, rgba);
}

void ShapeBatch::rect_outline(Vec2 lo, Vec2 hi, float width_px, uint32_t rgba) {
  float h = 0.5f * width_px * px_;
  line(Vec2{lo.x - h, lo.y}, Vec2{hi.x + h, lo.y}, width_px, rgba);
  line(Vec2{lo.x - h, hi.y}, Vec2{hi.x + h, hi.y}, width_px, rgba);
  line(Vec2{lo.x, lo.y}, Vec2{lo.x, hi.y}, width_px, rgba);
  line(Vec2{hi.x, lo.y}, Vec2{hi.x, hi.y}, width_px, rgba);
}

void ShapeBatch::circle(Vec2 c, float r, float width_px, uint32_t rgba, int segments) {
  float h = 0.5f * width_px * px_;
  for (int k = 0; k < segments; ++k) {
    float a0 = 6.2831853f * k / segments, a1 = 6.2831853f * (k + 1) / segments;
    Vec2 u0{std::cos(a0), std::sin(a0)}, u1{std::cos(a1), std::sin(a1)};
    Vec2 i0 = c + (r - h) * u0, o0 = c + (r + h) * u0, i1 = c + (r - h) * u1, o1 = c + (r + h) * u1;
    tri(i0, o0, o1, rgba);
    tri(i0, o1, i1, rgba);
  }
}

void ShapeBatch::disc(Vec2 c, float r, uint32_t rgba, int segments) {
  for (int k = 0; k < segments; ++k) {
    float a0 = 6.2831853f * k / segments, a1 = 6.2831853f * (k + 1) / segments;
    tri(c, c + r * Vec2{std::cos(a0), std::sin(a0)}, c + r * Vec2{std::cos(a1), std::sin(a1)},
        rgba);
  }
}

void ShapeBatch::convex(const Vec2* v, int n, uint32_t rgba) {
  for (int k = 1; k + 1 < n; ++k) tri(v[0], v[k], v[k + 1], rgba);
}

void ShapeBatch::outline(const Vec2* v, int n, float width_px, uint32_t rgba) {
  for (int k = 0; k < n; ++k) line(v[k], v[(k + 1) % n], width_px, rgba);
}

void ShapeBatch::draw(const float view[16]) {
  if (verts_.empty()) return;
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  if (verts_.size() > capacity_) {
    while (capacity_ < verts_.size()) capacity_ *= 2;
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(capacity_ * sizeof(Vertex)), nullptr,
                 GL_DYNAMIC_DRAW);
  }
  glBufferSubData(GL_ARRAY_BUFFER, 0, static_cast<GLsizeiptr>(verts_.size() * sizeof(Vertex)),
                  verts_.data());
  glUseProgram(prog_.id());
  glUniformMatrix4fv(prog_.uniform("u_view"), 1, GL_FALSE, view);
  glDrawArrays(GL_TRIANGLES, 0, static_cast<GLsizei>(verts_.size()));
  glBindVertexArray(0);
}

// [SECTION] Device-written lines -------------------------------------------------

void DeviceLineBuffer::init() { init_line_vertices(prog_, vao_, vbo_, 0); }

void DeviceLineBuffer::destroy() {
  glDeleteBuffers(1, &vbo_);
  glDeleteVertexArrays(1, &vao_);
  vbo_ = vao_ = 0;
  capacity_ = count_ = 0;
  prog_.release();
}

void DeviceLineBuffer::reserve(size_t n) {
  if (n <= capacity_ || vbo_ == 0) return;
  size_t cap = capacity_ ? capacity_ : 1 << 16;
  while (cap < n) cap *= 2;
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(cap * sizeof(LineVertex)), nullptr,
               GL_DYNAMIC_DRAW);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  capacity_ = cap;
  count_ = 0;
}

void DeviceLineBuffer::draw(const float view[16]) {
  if (count_ == 0) return;
  glBindVertexArray(vao_);
  glUseProgram(prog_.id());
  glUniformMatrix4fv(prog_.uniform("u_view"), 1, GL_FALSE, view);
  glDrawArrays(GL_TRIANGLES, 0, static_cast<GLsizei>(count_));
  glBindVertexArray(0);
}

}  // namespace ps
