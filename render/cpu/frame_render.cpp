#include "render/cpu/frame_render.h"

#include <algorithm>
#include <array>
#include <vector>
#include "render/cpu/dem_view.h"
#include "sim/dem/dem_world.h"
#include "sim/rigid/rigid_world.h"

namespace ps {

namespace {

void make_splats(const ParticleTable& t, std::vector<Splat>& out) {
  out.resize(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    Splat& s = out[i];
    s.x = Vec2{t.x[i], t.y[i]};
    s.radius = t.radius[i];
    for (int c = 0; c < 3; ++c) s.rgb[c] = t.color[i][static_cast<size_t>(c)];
  }
}

}  // namespace

void render_frame(Simulation& sim, ParticleTable& table, const ImageColor& color, Image& img) {
  sim.table(table);
  std::vector<Splat> splats;
  make_splats(table, splats);
  if (color.heat) {
    if (MpmWorld* w = sim.mpm()) {
      std::vector<std::array<float, 3>> rgb;
      heat_particle_rgb(
          w->particles, w->materials, color.mode,
          color.mode == HeatColor::Temperature ? Colormap::Coolwarm : Colormap::IceWater, color.lo,
          color.hi, rgb);
      for (size_t i = 0; i < splats.size() && i < rgb.size(); ++i)
        for (int c = 0; c < 3; ++c) splats[i].rgb[c] = rgb[i][static_cast<size_t>(c)];
    }
  }
  Vec2 lo, hi;
  sim.bounds(lo, hi);
  const float bg[3] = {0.07f, 0.08f, 0.10f};
  rasterize(img, lo, hi, splats, bg, true);
  std::vector<FilledPolygon> polys;
  if (const dem::DemWorld* dw = sim.dem()) {
    // DEM walls (planes clipped to the view, segments) as thin grey bands.
    const float half = 0.0025f * std::max(hi.x - lo.x, hi.y - lo.y);
    for (const dem::DemWall& wall : dw->walls) {
      Vec2 a, b;
      if (!wall_segment(wall, lo, hi, a, b)) continue;
      const Vec2 d = b - a;
      const float L = length(d);
      if (!(L > 0.f)) continue;
      const Vec2 n = (half / L) * perp(d);
      FilledPolygon fp;
      fp.pts = {a - n, b - n, b + n, a + n};
      fp.rgb[0] = fp.rgb[1] = fp.rgb[2] = 0.55f;
      polys.push_back(std::move(fp));
    }
  }
  if (const rigid::RigidWorld* rw = sim.rigid()) {
    std::vector<std::vector<dem::Vec2d>> parts;
    for (size_t b = 0; b < rw->body_count(); ++b) {
      rw->outline(static_cast<int>(b), parts);
      for (const auto& part : parts) {
        FilledPolygon fp;
        for (const dem::Vec2d& q : part)
          fp.pts.push_back(Vec2{static_cast<float>(q.x), static_cast<float>(q.y)});
        for (int c = 0; c < 3; ++c) fp.rgb[c] = rw->def(static_cast<int>(b)).color[c];
        polys.push_back(std::move(fp));
      }
    }
  }
  draw_polygons(img, lo, hi, polys);
}

}  // namespace ps
