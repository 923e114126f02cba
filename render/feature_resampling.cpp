// Particle resampling in the window (a feature, render/feature.h): the
// window's copy of the world's ResampleParams, the P key, the Resampling panel
// (the live switch and the main parameters, the last pass and the running
// totals, the interior hole count) and its two overlays: under the particles
// the narrow-band signed distance with the interior holes, over them a fading
// ring on every particle a pass inserted (green) or kept as the survivor of a
// merge (orange).
#include <glad/gl.h>  // before GLFW (window_state.h includes it)

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "imgui.h"
#include "render/feature.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"

namespace ps {

namespace {

/// The rings fade over this many frames' worth of substeps.
constexpr int kMarkFrames = 45;

class ResamplingFeature final : public Feature {
 public:
  const char* name() const override { return "resampling"; }

  void pull(App& a) override {
    if (MpmWorld* w = a.world()) params_ = w->resampling;
  }
  void push(App& a) override {
    if (MpmWorld* w = a.world()) w->resampling = params_;
  }
  void on_scene(App&) override {
    interior_holes_ = -1;
    holes_time_ = -1.0;
    holes_history_.clear();
    first_logged_ = false;
    inserted_at_switch_ = 0;
  }
  bool key(App& a, int key, int) override {
    if (key != GLFW_KEY_P || !a.world()) return false;
    params_.enabled = !params_.enabled;
    log_switch(a);
    a.set_status(params_.enabled ? "resampling on: interior holes are refilled every " +
                                       std::to_string(params_.interval) + " substeps"
                                 : "resampling off");
    return true;
  }
  void after_step(App& a) override;
  void sample(App& a, double now) override;
  void draw_under(App& a) override;
  void draw_over(App& a) override;
  void panel(App& a) override;
  void load_settings(const SettingsFile& s) override {
    show_sdf_band_ = s.get_bool("view.sdf_band", show_sdf_band_);
    show_marks_ = s.get_bool("view.resample_marks", show_marks_);
  }
  void save_settings(SettingsFile& s) const override {
    s.set_bool("view.sdf_band", show_sdf_band_);
    s.set_bool("view.resample_marks", show_marks_);
  }
  void help(std::vector<HelpRow>& rows) const override {
    rows.push_back({"P", "particle resampling on / off (fills numerical holes)"});
  }

 private:
  /// Logs a switch with the totals so far ("resampling off passes=N inserted=N merged=N").
  void log_switch(App& a);

  ResampleParams params_;       ///< the window's copy of the world's, applied at the sync point
  bool show_sdf_band_ = false;  ///< signed-distance band and interior holes under the particles
  bool show_marks_ = true;      ///< rings on inserted (green) and merged (orange) particles, fading
  bool first_logged_ = false;   ///< "resample first insert" logged since the last switch
  int64_t inserted_at_switch_ = 0;
  bool panel_open_ =
      false;  ///< the Resampling header was open last frame (holes are measured then)
  int interior_holes_ = -1;  ///< measured now and then (-1: not yet)
  History holes_history_;    ///< interior_holes_ at each measurement (the panel's plot)
  double holes_time_ = -1.0;
  std::vector<uint32_t> id_row_;  ///< ID -> host row scratch for the rings
};

// The first frame whose passes inserted particles since resampling was
// switched on (tests wait for it; one line per switch).
void ResamplingFeature::after_step(App& a) {
  MpmWorld* w = a.world();
  if (w && params_.enabled && !first_logged_ &&
      w->resample_totals().inserted > inserted_at_switch_) {
    first_logged_ = true;
    a.log("resample first insert step=%" PRId64 " inserted=%" PRId64 " particles=%zu",
          w->step_count(), w->resample_totals().inserted - inserted_at_switch_,
          w->particles.size());
  }
}

// Interior holes (and the signed distance the band overlay draws), now and then.
void ResamplingFeature::sample(App& a, double now) {
  MpmWorld* w = a.world();
  if (w && (show_sdf_band_ || panel_open_) &&
      (holes_time_ < 0.0 || now - holes_time_ >= kDiagPeriod * 2)) {
    interior_holes_ = w->measure_interior_holes();
    holes_time_ = now;
    if (a.running || holes_history_.count == 0)
      holes_history_.push(static_cast<float>(interior_holes_));
  }
}

void ResamplingFeature::panel(App& a) {
  MpmWorld* w = a.world();
  if (!w) return;
  const MpmScene* ms = a.mpm_scene();
  const bool in_scene = params_.enabled || (ms && ms->doc.find("resampling"));
  panel_open_ = false;
  if (!ImGui::CollapsingHeader("Resampling", in_scene ? ImGuiTreeNodeFlags_DefaultOpen : 0)) return;
  panel_open_ = true;
  const float label_w = ImGui::GetFontSize() * 6.f;
  ImGui::PushItemWidth(-label_w);

  if (ImGui::Checkbox("resample particles (P)", &params_.enabled)) log_switch(a);
  ui::help_marker(
      "Stretched material spreads its particles apart; where a cell inside the body is left with too few,\n"
      "MPM sees empty space and the body tears there although nothing broke (a numerical hole).\n"
      "Resampling fills such holes with new particles (Poisson-disk darts) and merges particles that come\n"
      "too close. A signed distance to the body's surface keeps real outside space, real cracks and notches\n"
      "empty. Mass and momentum are conserved exactly; a merge and an insertion lose a little kinetic energy.\n"
      "Only jelly and viscoplastic particles are resampled: water, sand and snow spread apart for real.");
  ImGui::SliderInt("every", &params_.interval, 1, 200, "%d substeps", ImGuiSliderFlags_Logarithmic);
  ImGui::SliderInt("hole below", &params_.min_per_cell, 1, 8, "%d per cell");
  ui::help_marker(
      "An interior cell with fewer particles than this gets new ones (towards 'refill to').\n"
      "2 finds the holes of a tear; 4 also fills the sparse stripes of a stretched bar.");
  ImGui::SliderInt("refill to", &params_.target_per_cell, 1, 8, "%d per cell");
  params_.target_per_cell = std::max(params_.target_per_cell, params_.min_per_cell);
  ImGui::SliderFloat("merge below", &params_.merge_distance, 0.f, 0.45f, "%.2f cells");
  ImGui::SliderFloat("smoothing", &params_.smoothing, 0.5f, 2.f, "%.2f cells");
  ui::help_marker(
      "Radius of the particle disks whose union is the body. Gaps narrower than about twice\n"
      "this count as inside (a crack that thin is refilled); larger lets stretched material\n"
      "look like outside space.");
  ImGui::Checkbox("show distance band and holes", &show_sdf_band_);
  ui::help_marker(
      "Under the particles: the signed distance to the body's surface within its narrow band\n"
      "(blue inside, amber outside; the line is the surface) and, in red, the interior cells\n"
      "holding too few particles with room for one more: the numerical holes.");
  ImGui::Checkbox("highlight new and merged", &show_marks_);

  if (ui::begin_props("##resample")) {
    if (interior_holes_ >= 0) ui::prop("holes now", "%d interior cells", interior_holes_);
    const ResampleTotals& t = w->resample_totals();
    if (w->last_resample_step() >= 0) {
      const ResampleReport& r = w->last_resample();
      ui::prop("last pass", "step %" PRId64 ": +%d, %d merged", w->last_resample_step(), r.inserted,
               r.merged);
      ui::prop("holes", "%d before, %d after", r.interior_holes_before, r.interior_holes_after);
      ui::prop("cost", "%.2f ms a pass, %.3f ms a substep", t.last_ms,
               t.last_ms / std::max(1, params_.interval));
    }
    if (t.calls > 0)
      ui::prop("since load", "%" PRId64 " passes, +%" PRId64 ", %" PRId64 " merged", t.calls,
               t.inserted, t.merged);
    ui::prop("particles", "%zu (next ID %u)", w->particles.size(), w->particles.next_id);
    ImGui::EndTable();
  }
  if (holes_history_.count > 1) {
    // PlotLines (1.86) takes an explicit size: negative widths are not resolved.
    const ImVec2 plot(ImGui::GetContentRegionAvail().x, 44.f * a.ui_scale);
    char over[64];
    std::snprintf(over, sizeof over, "interior holes %d", interior_holes_);
    ImGui::PlotLines("##holes", holes_history_.v.data(), holes_history_.count,
                     holes_history_.offset(), over, 0.f, FLT_MAX, plot);
  }
  ImGui::PopItemWidth();
}

void ResamplingFeature::log_switch(App& a) {
  const MpmWorld* w = a.world();
  const ResampleTotals t = w ? w->resample_totals() : ResampleTotals{};
  first_logged_ = false;
  inserted_at_switch_ = t.inserted;
  a.log("resampling %s passes=%" PRId64 " inserted=%" PRId64 " merged=%" PRId64 " particles=%zu",
        params_.enabled ? "on" : "off", t.calls, t.inserted, t.merged,
        w ? w->particles.size() : size_t{0});
}

void ResamplingFeature::draw_under(App& a) {
  MpmWorld* w = a.world();
  if (!w || !show_sdf_band_) return;
  ShapeBatch& under = a.under;
  const std::vector<float>& sdf = w->resampler().sdf();
  const std::vector<uint8_t>& hole = w->resampler().holes();
  const GridSpec& g = w->grid;
  if (sdf.size() != static_cast<size_t>(g.nx) * static_cast<size_t>(g.ny) ||
      hole.size() != sdf.size())
    return;
  const float band = std::max(params_.band, 0.5f) * g.dx;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      const size_t c = static_cast<size_t>(j) * static_cast<size_t>(g.nx) + static_cast<size_t>(i);
      const float s = sdf[c];
      const Vec2 lo = g.origin + Vec2{g.dx * i, g.dx * j};
      const Vec2 hi = lo + Vec2{g.dx, g.dx};
      if (hole[c]) {
        under.rect(lo, hi, pack_rgba(0.95f, 0.25f, 0.25f, 0.55f));  // an interior hole
        continue;
      }
      if (std::fabs(s) >= band) continue;
      const float alpha = 0.38f * (1.f - std::fabs(s) / band);
      under.rect(
          lo, hi,
          s < 0.f ? pack_rgba(0.30f, 0.55f, 1.0f, alpha) : pack_rgba(1.0f, 0.72f, 0.30f, alpha));
    }
  // The surface: the zero level of the signed distance, by marching squares
  // on the cell centres (saddles resolved by the quad average).
  const uint32_t line = pack_rgba(0.9f, 0.95f, 1.f, 0.7f);
  const size_t nx = static_cast<size_t>(g.nx);
  for (int j = 0; j + 1 < g.ny; ++j)
    for (int i = 0; i + 1 < g.nx; ++i) {
      const size_t c = static_cast<size_t>(j) * nx + static_cast<size_t>(i);
      const float v[4] = {sdf[c], sdf[c + 1], sdf[c + 1 + nx], sdf[c + nx]};
      const bool in[4] = {v[0] < 0.f, v[1] < 0.f, v[2] < 0.f, v[3] < 0.f};
      if (in[0] == in[1] && in[1] == in[2] && in[2] == in[3]) continue;
      const Vec2 base = g.origin + Vec2{g.dx * (i + 0.5f), g.dx * (j + 0.5f)};
      const Vec2 corner[4] = {base, base + Vec2{g.dx, 0.f}, base + Vec2{g.dx, g.dx},
                              base + Vec2{0.f, g.dx}};
      Vec2 pt[4];
      int edge[4], ne = 0;
      for (int k = 0; k < 4; ++k) {
        const int k1 = (k + 1) & 3;
        if (in[k] == in[k1]) continue;
        const float t = v[k] / (v[k] - v[k1]);
        pt[k] = corner[k] + t * (corner[k1] - corner[k]);
        edge[ne++] = k;
      }
      if (ne == 2) {
        under.line(pt[edge[0]], pt[edge[1]], 1.4f, line);
      } else if (ne == 4) {
        const bool centre_in = v[0] + v[1] + v[2] + v[3] < 0.f;
        if (centre_in == in[0]) {
          under.line(pt[0], pt[1], 1.4f, line);
          under.line(pt[2], pt[3], 1.4f, line);
        } else {
          under.line(pt[3], pt[0], 1.4f, line);
          under.line(pt[1], pt[2], 1.4f, line);
        }
      }
    }
}

void ResamplingFeature::draw_over(App& a) {
  MpmWorld* w = a.world();
  if (!w || !show_marks_) return;
  const std::vector<ResampleMark>& marks = w->resample_marks();
  if (marks.empty()) return;
  const int64_t now = w->step_count();
  const int64_t fade = int64_t{kMarkFrames} * std::max(1, a.sim->substeps_per_frame());
  if (marks.back().step <= now - fade) return;
  // Positions: the host table on the host path; the world's host arrays (as of
  // the last pass, which synced them) when the CUDA interop drew the frame.
  const ParticleTable& table = a.table;
  const bool use_table = !a.interop_frame && table.size() == w->particles.size();
  const std::vector<uint32_t>& ids = use_table ? table.id : w->particles.id;
  uint32_t max_id = 0;
  for (uint32_t v : ids) max_id = std::max(max_id, v);
  id_row_.assign(static_cast<size_t>(max_id) + 1, UINT32_MAX);
  for (size_t i = 0; i < ids.size(); ++i) id_row_[ids[i]] = static_cast<uint32_t>(i);
  const float r = std::max(0.32f * w->grid.dx,
                           3.5f / a.cam.scale());  // at least 3.5 px: visible when zoomed out
  for (const ResampleMark& m : marks) {
    const int64_t age = now - m.step;
    if (age >= fade || m.id >= id_row_.size() || id_row_[m.id] == UINT32_MAX) continue;
    const size_t i = id_row_[m.id];
    const Vec2 x = use_table ? Vec2{table.x[i], table.y[i]} : w->particles.x[i];
    const float alpha = 0.95f * (1.f - static_cast<float>(age) / static_cast<float>(fade));
    a.over.circle(
        x, r, 2.2f,
        m.merged ? pack_rgba(1.f, 0.55f, 0.15f, alpha) : pack_rgba(0.35f, 1.f, 0.55f, alpha), 12);
  }
}

}  // namespace

std::unique_ptr<Feature> make_resampling_feature() { return std::make_unique<ResamplingFeature>(); }

}  // namespace ps
