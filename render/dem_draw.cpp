// The DEM feature's overlays (render/feature_dem.h) in the scene view: walls
// (under the particles), bonds coloured by stress, broken bonds, contact-force
// chains and the selected particle's bonds (over them), and their legend. The
// geometry goes into the window's shape batches, which keep their storage
// between frames.
#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "imgui.h"
#include "render/cpu/dem_draw_rules.h"
#include "render/cpu/dem_view.h"
#include "render/cpu/particle_fields.h"
#include "render/feature_dem.h"
#include "render/window_state.h"

namespace ps {

namespace {

Vec2 vf(dem::Vec2d v) { return Vec2{static_cast<float>(v.x), static_cast<float>(v.y)}; }

const float kBroken[3] = {1.f, 0.36f, 0.86f};   // magenta: outside every colour map's hues
const float kContact[3] = {0.96f, 0.97f, 1.f};  // near-white force chains: not in any colour map

}  // namespace

void DemFeature::draw_under(App& app) {
  dem::DemWorld* d = app.dem_world();
  drawn_walls_ = 0;
  if (!d || !show_walls_) return;
  // Planes are drawn across the domain box (the view's frame), segments whole.
  Vec2 lo, hi;
  app.sim->bounds(lo, hi);
  const Vec2 pad = 1e-4f * (hi - lo);
  const float px = 1.f / app.cam.scale();
  for (const dem::DemWall& wall : d->walls) {
    Vec2 a, b;
    if (!wall_segment(wall, lo - pad, hi + pad, a, b)) continue;
    std::array<float, 3> c{0.7f, 0.74f, 0.8f};
    if (wall.material >= 0 && static_cast<size_t>(wall.material) < d->materials.size()) {
      const float* m = d->materials[static_cast<size_t>(wall.material)].color;
      for (int k = 0; k < 3; ++k)
        c[static_cast<size_t>(k)] = 0.45f * m[k] + 0.55f;  // lightened: reads on the dark view
    }
    if (wall.type == dem::WallType::Plane) {
      // The solid side (-n) as a band, then the surface line.
      const float band = 9.f;
      Vec2 n = vf(wall.n);
      Vec2 off = -(0.5f * band * px) * n;
      app.under.line(a + off, b + off, band, pack_rgba(c, 0.16f));
      app.under.line(a, b, 2.5f, pack_rgba(c, 0.95f));
    } else {
      app.under.line(a, b, 4.f, pack_rgba(c, 0.95f));
      app.under.disc(a, 2.f * px, pack_rgba(c, 0.95f), 12);
      app.under.disc(b, 2.f * px, pack_rgba(c, 0.95f), 12);
    }
    ++drawn_walls_;
  }
}

namespace {

/// The window in world units (the whole framebuffer: GL draws outside the
/// scene viewport too, under the panels), for the on-screen rule.
BondView bond_view(const Camera2D& cam) {
  BondView v;
  v.scale = cam.scale();
  v.px = 1.f / v.scale;
  const Vec2 a = cam.screen_to_world(Vec2{0.f, 0.f}),
             b = cam.screen_to_world(Vec2{cam.width(), cam.height()});
  v.lo = Vec2{std::min(a.x, b.x), std::min(a.y, b.y)};
  v.hi = Vec2{std::max(a.x, b.x), std::max(a.y, b.y)};
  return v;
}

}  // namespace

void DemFeature::update_bond_range(const std::vector<float>& ratios) {
  float lo = 0.f, hi = 0.f;
  robust_range(ratios, 0.002f, scratch_, lo, hi);
  hi = std::clamp(hi, 1e-9f, 1.f);
  bond_hi_ = hi > bond_hi_ ? hi : bond_hi_ + 0.05f * (hi - bond_hi_);
}

bool DemFeature::draw_bonds_on_device(App& app, const BondView& bv, bool intact, bool broken) {
  dem::DemWorld* d = app.dem_world();
  const dem::DemDeviceView* view = d ? d->backend().device_view() : nullptr;
  if (!view || view->bond_count != d->bonds.size()) return false;
  if (static_cast<int>(bond_cmap_) != bond_lut_cmap_) {
    bond_color_lut(bond_cmap_, bond_lut_);
    bond_lut_cmap_ = static_cast<int>(bond_cmap_);
  }
  DemBondFrame f;
  f.intact = intact;
  f.broken = broken;
  f.view = bv;
  f.bond = d->bond;
  f.lut = bond_lut_.data();
  f.broken_rgba = pack_rgba(kBroken[0], kBroken[1], kBroken[2], 0.8f);
  f.max_samples = intact && bond_auto_range_ ? kDemMaxSamples : 0;
  DemBondCount& c = bond_count_;
  if (!app.interop.count_dem_bonds(*view, f, c)) return false;
  if (intact) {
    if (bond_auto_range_)
      update_bond_range(c.sample);
    else
      bond_hi_ = 1.f;
  }
  f.hi = bond_hi_;
  // At most 64 M vertices (768 MB): only a view of tens of millions of bond
  // lines would need more, and the lines past it are left out.
  constexpr size_t kMaxVertices = size_t{64} << 20;
  const size_t want = std::min(c.vertices, kMaxVertices);
  if (want > app.bond_lines.capacity()) {
    app.interop.release_bonds();  // before the buffer's storage is replaced
    app.bond_lines.reserve(want);
  }
  app.bond_lines.set_count(0);
  if (want > 0 && !app.interop.fill_dem_bonds(*view, app.bond_lines.buffer(),
                                              app.bond_lines.capacity(), want, f))
    return false;
  app.bond_lines.set_count(want);
  drawn_bonds_ = c.intact;
  drawn_broken_ = c.broken;
  // Drawn here, between what the overlay holds so far and what follows (the
  // host path adds the bonds to the overlay at this point).
  float view_m[16];
  app.cam.world_to_ndc(view_m);
  app.over.draw(view_m);
  app.over.clear(1.f / app.cam.scale());
  app.bond_lines.draw(view_m);
  return true;
}

void DemFeature::draw_over(App& app) {
  dem::DemWorld* d = app.dem_world();
  drawn_bonds_ = drawn_broken_ = drawn_contacts_ = 0;
  device_bonds_ = false;
  bond_note_.clear();
  if (!d) return;
  const dem::DemParticles& p = d->particles;
  const dem::DemBonds& b = d->bonds;
  const size_t n = p.size();
  const float scale = app.cam.scale();
  const uint32_t halo = pack_rgba(0.02f, 0.02f, 0.03f, 0.6f);
  auto bond_width = [&](uint32_t i, uint32_t j) {
    return bond_width_px(p.radius[i], p.radius[j], scale);
  };

  // Bonds, intact (coloured by their stress / strength) and broken (dashed),
  // where their rest length is at least kBondMinPx on screen and they cross
  // the window: when none can be (the longest rest length is shorter), no
  // pass over the bonds at all.
  const bool want_intact = show_bonds_ && b.size() > 0, want_broken = show_broken_ && b.size() > 0;
  if (want_intact || want_broken) {
    app.dem_view.bond_index.update(*d);  // a pass over the bonds only when their topology changed
    const BondView bv = bond_view(app.cam);
    if (!bond_long_enough(app.dem_view.bond_index.max_length0, scale)) {
      char note[160];
      std::snprintf(
          note, sizeof note,
          "bonds not drawn: %.2g px long on screen (app.under %.1f px); zoom in to see them",
          app.dem_view.bond_index.max_length0 * static_cast<double>(scale),
          static_cast<double>(kBondMinPx));
      bond_note_ = note;
    } else if (app.interop_frame) {
      // The CUDA-GL interop drew the particles: the host arrays are not
      // current, the bonds are drawn from the device.
      device_bonds_ = draw_bonds_on_device(app, bv, want_intact, want_broken);
    } else {
      if (want_intact) {
        bond_stress_ratios(*d, ratios_);
        if (bond_auto_range_)
          update_bond_range(ratios_);
        else
          bond_hi_ = 1.f;
        const float top = bond_hi_;
        for (size_t k = 0; k < b.size(); ++k) {
          if (b.broken[k]) continue;
          const uint32_t i = b.i[k], j = b.j[k];
          if (i >= n || j >= n || !bond_long_enough(b.length0[k], scale)) continue;
          const Vec2 a = vf(p.x[i]), e = vf(p.x[j]);
          const float w = bond_width(i, j);
          if (!segment_in_view(a, e, (0.5f * w + 1.f) * bv.px, bv)) continue;
          app.over.line(a, e, w, pack_rgba(bond_stress_rgb(bond_cmap_, ratios_[k], top)));
          ++drawn_bonds_;
        }
      }
      // Broken bonds: dashed, while the two particles are still near each other.
      if (want_broken) {
        const uint32_t col = pack_rgba(kBroken[0], kBroken[1], kBroken[2], 0.8f);
        for (size_t k = 0; k < b.size(); ++k) {
          if (!b.broken[k]) continue;
          const uint32_t i = b.i[k], j = b.j[k];
          if (i >= n || j >= n || !bond_long_enough(b.length0[k], scale)) continue;
          const Vec2 a = vf(p.x[i]), e = vf(p.x[j]);
          const int dashes = broken_bond_dashes(length(e - a), b.length0[k], scale);
          if (dashes == 0) continue;
          const float w = broken_bond_width_px(p.radius[i], p.radius[j], scale);
          if (!segment_in_view(a, e, (0.5f * w + 1.f) * bv.px, bv)) continue;
          for (int q = 0; q < dashes; ++q) {
            Vec2 s0, s1;
            broken_bond_dash(a, e, dashes, q, s0, s1);
            app.over.line(s0, s1, w, col);
          }
          ++drawn_broken_;
        }
      }
    }
  }
  // Contact forces as force chains: width proportional to |F| (the host path:
  // the interop leaves it to the host while they are shown).
  if (show_contacts_) {
    d->backend().read_contacts(pairs_, wall_contacts_);
    force_mag_.clear();
    for (const dem::DemContact& c : pairs_) force_mag_.push_back(static_cast<float>(length(c.f_i)));
    for (const dem::DemContact& c : wall_contacts_)
      force_mag_.push_back(static_cast<float>(length(c.f_i)));
    force_scale_.update(force_mag_, scratch_);
    float rmean = 0.f;
    for (size_t i = 0; i < n; i += std::max<size_t>(1, n / 256))
      rmean = std::max(rmean, static_cast<float>(p.radius[i]));
    const float max_px = std::clamp(0.8f * rmean * scale, 2.f, 7.f);
    const uint32_t col = pack_rgba(kContact[0], kContact[1], kContact[2], 0.9f);
    size_t q = 0;
    for (const dem::DemContact& c : pairs_) {
      const float w = force_scale_.width_px(force_mag_[q++], max_px);
      if (w <= 0.f || c.i >= n || c.j >= n) continue;
      app.over.line(vf(p.x[c.i]), vf(p.x[c.j]), w + 1.5f, halo);
      app.over.line(vf(p.x[c.i]), vf(p.x[c.j]), w, col);
      ++drawn_contacts_;
    }
    for (const dem::DemContact& c : wall_contacts_) {
      const float w = force_scale_.width_px(force_mag_[q++], max_px);
      if (w <= 0.f || c.i >= n) continue;
      app.over.line(vf(p.x[c.i]), vf(c.point), w + 1.5f, halo);
      app.over.line(vf(p.x[c.i]), vf(c.point), w, col);
      ++drawn_contacts_;
    }
  }
  // The selected particle's bonds, highlighted (the inspector lists them):
  // its state as this frame saw it (host arrays or the interop's read-back).
  const DemSelected& sel = app.dem_view.selected;
  const int64_t srow = app.selected_row - static_cast<int64_t>(app.dem_row0);  // the grain's index
  if (sel.valid && srow == static_cast<int64_t>(sel.index) && sel.index < n &&
      p.id[sel.index] == app.selected_id) {
    for (const DemSelectedBond& sb : sel.bonds) {
      if (sb.other >= n) continue;
      // In the bond's (i, j) order, as the bonds are drawn.
      const bool first = sel.index < sb.other;
      const Vec2 a = vf(first ? sel.x : sb.other_x), e = vf(first ? sb.other_x : sel.x);
      const float w = bond_width(sel.index, sb.other) + 1.5f;
      std::array<float, 3> c{kBroken[0], kBroken[1], kBroken[2]};
      if (!sb.broken)
        c = bond_stress_rgb(bond_cmap_, static_cast<float>(sb.stress.ratio), bond_hi_);
      app.over.line(a, e, w + 3.f, pack_rgba(1.f, 1.f, 1.f, 0.9f));
      app.over.line(a, e, w, pack_rgba(c));
    }
  }
  // A screenshot's log line says what the overlays hold (scripts check it).
  const bool shot = app.pending.screenshot || (app.opt.screenshot_after_frames >= 0 &&
                                               app.frame == app.opt.screenshot_after_frames &&
                                               !app.opt.screenshot_path.empty());
  if (shot)
    app.log("dem overlay bonds=%zu broken=%zu contacts=%zu walls=%zu device=%d", drawn_bonds_,
            drawn_broken_, drawn_contacts_, drawn_walls_, device_bonds_ ? 1 : 0);
}

void DemFeature::legend_box(App& app) {
  dem::DemWorld* d = app.dem_world();
  if (!d) return;
  const bool bonds = show_bonds_ && drawn_bonds_ > 0;
  const bool broken = show_broken_ && drawn_broken_ > 0;
  const bool contacts = show_contacts_ && force_scale_.ref > 0.f;
  if (!bonds && !broken && !contacts) return;
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  const float pad = 12.f * app.ui_scale, fs = ImGui::GetFontSize(), line = fs * 1.35f;
  const ImU32 text = IM_COL32(228, 232, 240, 255), muted = IM_COL32(150, 158, 175, 255);
  const ImU32 bg = IM_COL32(16, 18, 24, 215);
  auto col = [](const std::array<float, 3>& c, float a = 1.f) {
    return IM_COL32(static_cast<int>(c[0] * 255.f + 0.5f), static_cast<int>(c[1] * 255.f + 0.5f),
                    static_cast<int>(c[2] * 255.f + 0.5f), static_cast<int>(a * 255.f + 0.5f));
  };
  const float bar_w = 200.f * app.ui_scale, bar_h = 10.f * app.ui_scale;
  char force[64] = "";
  if (contacts)
    std::snprintf(force, sizeof force, "contact force (full width %.3g N)",
                  static_cast<double>(force_scale_.ref));
  float width = bar_w;
  width = std::max(width, ImGui::CalcTextSize("bond stress / strength").x);
  if (contacts) width = std::max(width, fs * 2.4f + ImGui::CalcTextSize(force).x);
  if (broken) width = std::max(width, fs * 2.4f + ImGui::CalcTextSize("broken bond").x);
  float height = pad * 1.5f;
  if (bonds) height += line + bar_h + fs * 1.3f;
  if (broken) height += line;
  if (contacts) height += line;
  const Vec2 at =
      app.overlay_slot(Vec2{width + 2.f * pad, height});  // beside the scene (render/cpu/layout.h)
  const ImVec2 p0(at.x, at.y);
  dl->AddRectFilled(p0, ImVec2(p0.x + width + 2.f * pad, p0.y + height), bg, 6.f * app.ui_scale);
  float y = p0.y + 0.75f * pad;
  const float x = p0.x + pad;
  if (bonds) {
    dl->AddText(ImVec2(x, y), muted, "bond stress / strength");
    y += line;
    const int segs = 48;
    for (int k = 0; k < segs; ++k) {
      float x0 = x + bar_w * k / segs, x1 = x + bar_w * (k + 1) / segs;
      ImU32 a = col(colormap_rgb(bond_cmap_, static_cast<float>(k) / segs));
      ImU32 c = col(colormap_rgb(bond_cmap_, static_cast<float>(k + 1) / segs));
      dl->AddRectFilledMultiColor(ImVec2(x0, y), ImVec2(x1 + 0.5f, y + bar_h), a, c, c, a);
    }
    y += bar_h + 2.f * app.ui_scale;
    char hi[32];
    if (bond_hi_ >= 0.9995f)
      std::snprintf(hi, sizeof hi, "1 (breaks)");
    else
      std::snprintf(hi, sizeof hi, "%.3g", static_cast<double>(bond_hi_));
    dl->AddText(ImVec2(x, y), text, "0");
    dl->AddText(ImVec2(x + bar_w - ImGui::CalcTextSize(hi).x, y), text, hi);
    y += fs * 1.3f;
  }
  if (broken) {
    const ImU32 c = col({kBroken[0], kBroken[1], kBroken[2]});
    const float ly = y + 0.55f * fs;
    for (int q = 0; q < 3; ++q)
      dl->AddLine(ImVec2(x + q * 0.7f * fs, ly), ImVec2(x + q * 0.7f * fs + 0.4f * fs, ly), c,
                  2.f * app.ui_scale);
    dl->AddText(ImVec2(x + 2.4f * fs, y), text, "broken bond");
    y += line;
  }
  if (contacts) {
    const ImU32 c = col({kContact[0], kContact[1], kContact[2]});
    dl->AddLine(ImVec2(x, y + 0.55f * fs), ImVec2(x + 1.8f * fs, y + 0.55f * fs), c,
                4.f * app.ui_scale);
    dl->AddText(ImVec2(x + 2.4f * fs, y), text, force);
  }
}

}  // namespace ps
