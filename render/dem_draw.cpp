// DEM overlays in the scene view: walls (under the particles), bonds coloured
// by stress, broken bonds, contact-force chains and the selected particle's
// bonds (over them), and their legend. The geometry goes into the window's
// shape batches, which keep their storage between frames.
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
#include "render/window_state.h"

namespace ps {

namespace {

Vec2 vf(dem::Vec2d v) { return Vec2{static_cast<float>(v.x), static_cast<float>(v.y)}; }

const float kBroken[3] = {1.f, 0.36f, 0.86f};   // magenta: outside every colour map's hues
const float kContact[3] = {0.96f, 0.97f, 1.f};  // near-white force chains: not in any colour map

}  // namespace

void App::dem_draw_under() {
  dem::DemWorld* d = dem_world();
  demui.drawn_walls = 0;
  if (!d || !demui.show_walls) return;
  // Planes are drawn across the domain box (the view's frame), segments whole.
  Vec2 lo, hi;
  sim->bounds(lo, hi);
  const Vec2 pad = 1e-4f * (hi - lo);
  const float px = 1.f / cam.scale();
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
      under.line(a + off, b + off, band, pack_rgba(c, 0.16f));
      under.line(a, b, 2.5f, pack_rgba(c, 0.95f));
    } else {
      under.line(a, b, 4.f, pack_rgba(c, 0.95f));
      under.disc(a, 2.f * px, pack_rgba(c, 0.95f), 12);
      under.disc(b, 2.f * px, pack_rgba(c, 0.95f), 12);
    }
    ++demui.drawn_walls;
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

/// Auto range of the bond colour bar from this frame's ratios (all of them,
/// or the device's sample): expand at once, shrink slowly.
void update_bond_range(DemUi& ui, const std::vector<float>& ratios) {
  float lo = 0.f, hi = 0.f;
  robust_range(ratios, 0.002f, ui.scratch, lo, hi);
  hi = std::clamp(hi, 1e-9f, 1.f);
  ui.bond_hi = hi > ui.bond_hi ? hi : ui.bond_hi + 0.05f * (hi - ui.bond_hi);
}

}  // namespace

bool App::dem_draw_bonds_on_device(const BondView& bv, bool intact, bool broken) {
  dem::DemWorld* d = dem_world();
  const dem::DemDeviceView* view = d ? d->backend().device_view() : nullptr;
  if (!view || view->bond_count != d->bonds.size()) return false;
  if (static_cast<int>(demui.bond_cmap) != demui.bond_lut_cmap) {
    bond_color_lut(demui.bond_cmap, demui.bond_lut);
    demui.bond_lut_cmap = static_cast<int>(demui.bond_cmap);
  }
  DemBondFrame f;
  f.intact = intact;
  f.broken = broken;
  f.view = bv;
  f.bond = d->bond;
  f.lut = demui.bond_lut.data();
  f.broken_rgba = pack_rgba(kBroken[0], kBroken[1], kBroken[2], 0.8f);
  f.max_samples = intact && demui.bond_auto_range ? kDemMaxSamples : 0;
  DemBondCount& c = demui.bond_count;
  if (!interop.count_dem_bonds(*view, f, c)) return false;
  if (intact) {
    if (demui.bond_auto_range)
      update_bond_range(demui, c.sample);
    else
      demui.bond_hi = 1.f;
  }
  f.hi = demui.bond_hi;
  // At most 64 M vertices (768 MB): only a view of tens of millions of bond
  // lines would need more, and the lines past it are left out.
  constexpr size_t kMaxVertices = size_t{64} << 20;
  const size_t want = std::min(c.vertices, kMaxVertices);
  if (want > bond_lines.capacity()) {
    interop.release_bonds();  // before the buffer's storage is replaced
    bond_lines.reserve(want);
  }
  bond_lines.set_count(0);
  if (want > 0 &&
      !interop.fill_dem_bonds(*view, bond_lines.buffer(), bond_lines.capacity(), want, f))
    return false;
  bond_lines.set_count(want);
  demui.drawn_bonds = c.intact;
  demui.drawn_broken = c.broken;
  // Drawn here, between what the overlay holds so far and what follows (the
  // host path adds the bonds to the overlay at this point).
  float view_m[16];
  cam.world_to_ndc(view_m);
  over.draw(view_m);
  over.clear(1.f / cam.scale());
  bond_lines.draw(view_m);
  return true;
}

void App::dem_draw_over() {
  dem::DemWorld* d = dem_world();
  demui.drawn_bonds = demui.drawn_broken = demui.drawn_contacts = 0;
  demui.device_bonds = false;
  demui.bond_note.clear();
  if (!d) return;
  const dem::DemParticles& p = d->particles;
  const dem::DemBonds& b = d->bonds;
  const size_t n = p.size();
  const float scale = cam.scale();
  const uint32_t halo = pack_rgba(0.02f, 0.02f, 0.03f, 0.6f);
  auto bond_width = [&](uint32_t i, uint32_t j) {
    return bond_width_px(p.radius[i], p.radius[j], scale);
  };

  // Bonds, intact (coloured by their stress / strength) and broken (dashed),
  // where their rest length is at least kBondMinPx on screen and they cross
  // the window: when none can be (the longest rest length is shorter), no
  // pass over the bonds at all.
  const bool want_intact = demui.show_bonds && b.size() > 0,
             want_broken = demui.show_broken && b.size() > 0;
  if (want_intact || want_broken) {
    demui.bond_index.update(*d);  // a pass over the bonds only when their topology changed
    const BondView bv = bond_view(cam);
    if (!bond_long_enough(demui.bond_index.max_length0, scale)) {
      char note[160];
      std::snprintf(note, sizeof note,
                    "bonds not drawn: %.2g px long on screen (under %.1f px); zoom in to see them",
                    demui.bond_index.max_length0 * static_cast<double>(scale),
                    static_cast<double>(kBondMinPx));
      demui.bond_note = note;
    } else if (interop_frame) {
      // The CUDA-GL interop drew the particles: the host arrays are not
      // current, the bonds are drawn from the device.
      demui.device_bonds = dem_draw_bonds_on_device(bv, want_intact, want_broken);
    } else {
      if (want_intact) {
        bond_stress_ratios(*d, demui.ratios);
        if (demui.bond_auto_range)
          update_bond_range(demui, demui.ratios);
        else
          demui.bond_hi = 1.f;
        const float top = demui.bond_hi;
        for (size_t k = 0; k < b.size(); ++k) {
          if (b.broken[k]) continue;
          const uint32_t i = b.i[k], j = b.j[k];
          if (i >= n || j >= n || !bond_long_enough(b.length0[k], scale)) continue;
          const Vec2 a = vf(p.x[i]), e = vf(p.x[j]);
          const float w = bond_width(i, j);
          if (!segment_in_view(a, e, (0.5f * w + 1.f) * bv.px, bv)) continue;
          over.line(a, e, w, pack_rgba(bond_stress_rgb(demui.bond_cmap, demui.ratios[k], top)));
          ++demui.drawn_bonds;
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
            over.line(s0, s1, w, col);
          }
          ++demui.drawn_broken;
        }
      }
    }
  }
  // Contact forces as force chains: width proportional to |F| (the host path:
  // the interop leaves it to the host while they are shown).
  if (demui.show_contacts) {
    d->backend().read_contacts(demui.pairs, demui.wall_contacts);
    demui.force_mag.clear();
    for (const dem::DemContact& c : demui.pairs)
      demui.force_mag.push_back(static_cast<float>(length(c.f_i)));
    for (const dem::DemContact& c : demui.wall_contacts)
      demui.force_mag.push_back(static_cast<float>(length(c.f_i)));
    demui.force_scale.update(demui.force_mag, demui.scratch);
    float rmean = 0.f;
    for (size_t i = 0; i < n; i += std::max<size_t>(1, n / 256))
      rmean = std::max(rmean, static_cast<float>(p.radius[i]));
    const float max_px = std::clamp(0.8f * rmean * scale, 2.f, 7.f);
    const uint32_t col = pack_rgba(kContact[0], kContact[1], kContact[2], 0.9f);
    size_t q = 0;
    for (const dem::DemContact& c : demui.pairs) {
      const float w = demui.force_scale.width_px(demui.force_mag[q++], max_px);
      if (w <= 0.f || c.i >= n || c.j >= n) continue;
      over.line(vf(p.x[c.i]), vf(p.x[c.j]), w + 1.5f, halo);
      over.line(vf(p.x[c.i]), vf(p.x[c.j]), w, col);
      ++demui.drawn_contacts;
    }
    for (const dem::DemContact& c : demui.wall_contacts) {
      const float w = demui.force_scale.width_px(demui.force_mag[q++], max_px);
      if (w <= 0.f || c.i >= n) continue;
      over.line(vf(p.x[c.i]), vf(c.point), w + 1.5f, halo);
      over.line(vf(p.x[c.i]), vf(c.point), w, col);
      ++demui.drawn_contacts;
    }
  }
  // The selected particle's bonds, highlighted (the inspector lists them):
  // its state as this frame saw it (host arrays or the interop's read-back).
  const DemSelected& sel = demui.selected;
  const int64_t srow = selected_row - static_cast<int64_t>(dem_row0);  // the grain's index
  if (sel.valid && srow == static_cast<int64_t>(sel.index) && sel.index < n &&
      p.id[sel.index] == selected_id) {
    for (const DemSelectedBond& sb : sel.bonds) {
      if (sb.other >= n) continue;
      // In the bond's (i, j) order, as the bonds are drawn.
      const bool first = sel.index < sb.other;
      const Vec2 a = vf(first ? sel.x : sb.other_x), e = vf(first ? sb.other_x : sel.x);
      const float w = bond_width(sel.index, sb.other) + 1.5f;
      std::array<float, 3> c{kBroken[0], kBroken[1], kBroken[2]};
      if (!sb.broken)
        c = bond_stress_rgb(demui.bond_cmap, static_cast<float>(sb.stress.ratio), demui.bond_hi);
      over.line(a, e, w + 3.f, pack_rgba(1.f, 1.f, 1.f, 0.9f));
      over.line(a, e, w, pack_rgba(c));
    }
  }
  // A screenshot's log line says what the overlays hold (scripts check it).
  const bool shot =
      pending.screenshot || (opt.screenshot_after_frames >= 0 &&
                             frame == opt.screenshot_after_frames && !opt.screenshot_path.empty());
  if (shot)
    log("dem overlay bonds=%zu broken=%zu contacts=%zu walls=%zu device=%d", demui.drawn_bonds,
        demui.drawn_broken, demui.drawn_contacts, demui.drawn_walls, demui.device_bonds ? 1 : 0);
}

void App::dem_draw_legend() {
  dem::DemWorld* d = dem_world();
  if (!d) return;
  const bool bonds = demui.show_bonds && demui.drawn_bonds > 0;
  const bool broken = demui.show_broken && demui.drawn_broken > 0;
  const bool contacts = demui.show_contacts && demui.force_scale.ref > 0.f;
  if (!bonds && !broken && !contacts) return;
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  const float pad = 12.f * ui_scale, fs = ImGui::GetFontSize(), line = fs * 1.35f;
  const ImU32 text = IM_COL32(228, 232, 240, 255), muted = IM_COL32(150, 158, 175, 255);
  const ImU32 bg = IM_COL32(16, 18, 24, 215);
  auto col = [](const std::array<float, 3>& c, float a = 1.f) {
    return IM_COL32(static_cast<int>(c[0] * 255.f + 0.5f), static_cast<int>(c[1] * 255.f + 0.5f),
                    static_cast<int>(c[2] * 255.f + 0.5f), static_cast<int>(a * 255.f + 0.5f));
  };
  const float bar_w = 200.f * ui_scale, bar_h = 10.f * ui_scale;
  char force[64] = "";
  if (contacts)
    std::snprintf(force, sizeof force, "contact force (full width %.3g N)",
                  static_cast<double>(demui.force_scale.ref));
  float width = bar_w;
  width = std::max(width, ImGui::CalcTextSize("bond stress / strength").x);
  if (contacts) width = std::max(width, fs * 2.4f + ImGui::CalcTextSize(force).x);
  if (broken) width = std::max(width, fs * 2.4f + ImGui::CalcTextSize("broken bond").x);
  float height = pad * 1.5f;
  if (bonds) height += line + bar_h + fs * 1.3f;
  if (broken) height += line;
  if (contacts) height += line;
  const Vec2 at =
      overlay_slot(Vec2{width + 2.f * pad, height});  // beside the scene (render/cpu/layout.h)
  const ImVec2 p0(at.x, at.y);
  dl->AddRectFilled(p0, ImVec2(p0.x + width + 2.f * pad, p0.y + height), bg, 6.f * ui_scale);
  float y = p0.y + 0.75f * pad;
  const float x = p0.x + pad;
  if (bonds) {
    dl->AddText(ImVec2(x, y), muted, "bond stress / strength");
    y += line;
    const int segs = 48;
    for (int k = 0; k < segs; ++k) {
      float x0 = x + bar_w * k / segs, x1 = x + bar_w * (k + 1) / segs;
      ImU32 a = col(colormap_rgb(demui.bond_cmap, static_cast<float>(k) / segs));
      ImU32 c = col(colormap_rgb(demui.bond_cmap, static_cast<float>(k + 1) / segs));
      dl->AddRectFilledMultiColor(ImVec2(x0, y), ImVec2(x1 + 0.5f, y + bar_h), a, c, c, a);
    }
    y += bar_h + 2.f * ui_scale;
    char hi[32];
    if (demui.bond_hi >= 0.9995f)
      std::snprintf(hi, sizeof hi, "1 (breaks)");
    else
      std::snprintf(hi, sizeof hi, "%.3g", static_cast<double>(demui.bond_hi));
    dl->AddText(ImVec2(x, y), text, "0");
    dl->AddText(ImVec2(x + bar_w - ImGui::CalcTextSize(hi).x, y), text, hi);
    y += fs * 1.3f;
  }
  if (broken) {
    const ImU32 c = col({kBroken[0], kBroken[1], kBroken[2]});
    const float ly = y + 0.55f * fs;
    for (int q = 0; q < 3; ++q)
      dl->AddLine(ImVec2(x + q * 0.7f * fs, ly), ImVec2(x + q * 0.7f * fs + 0.4f * fs, ly), c,
                  2.f * ui_scale);
    dl->AddText(ImVec2(x + 2.4f * fs, y), text, "broken bond");
    y += line;
  }
  if (contacts) {
    const ImU32 c = col({kContact[0], kContact[1], kContact[2]});
    dl->AddLine(ImVec2(x, y + 0.55f * fs), ImVec2(x + 1.8f * fs, y + 0.55f * fs), c,
                4.f * ui_scale);
    dl->AddText(ImVec2(x + 2.4f * fs, y), text, force);
  }
}

}  // namespace ps
