// The DEM feature (render/feature_dem.h): the window-owned parameter copies
// (taken on load, written at the sync point), the grab / attract / repel tools
// on grains, the DEM panel (bond and material parameters, solver and time step,
// counters, overlays) and the inspector for a grain and its bonds. Its
// overlays: dem_draw.cpp.
#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <memory>

#include "imgui.h"
#include "render/cpu/dem_view.h"
#include "render/cpu/picking.h"
#include "render/feature_dem.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/dem/dem_kernels.h"

namespace ps {

namespace {
using ui::begin_props;
using ui::help_marker;
using ui::kMuted;
using ui::kWarn;
using ui::mono_font;
using ui::prop;
using ui::section_label;

const ImVec4 kBrokenText{1.00f, 0.45f, 0.80f, 1.f};

/// "1.23 MPa": stresses span Pa to GPa.
void format_pa(char* buf, size_t n, double v) {
  const double a = std::fabs(v);
  if (a >= 1e9)
    std::snprintf(buf, n, "%.3g GPa", v * 1e-9);
  else if (a >= 1e6)
    std::snprintf(buf, n, "%.3g MPa", v * 1e-6);
  else if (a >= 1e3)
    std::snprintf(buf, n, "%.3g kPa", v * 1e-3);
  else
    std::snprintf(buf, n, "%.3g Pa", v);
}

/// "1.2e-05 s" as "12.0 us".
void format_s(char* buf, size_t n, double v) {
  if (!std::isfinite(v))
    std::snprintf(buf, n, "none");
  else if (v < 1e-3)
    std::snprintf(buf, n, "%.3g us", v * 1e6);
  else
    std::snprintf(buf, n, "%.3g ms", v * 1e3);
}

/// A double slider; true when an edit has just finished (for the log).
bool slider_double(const char* label, double* v, double lo, double hi, const char* fmt,
                   bool logarithmic) {
  ImGui::SliderScalar(label, ImGuiDataType_Double, v, &lo, &hi, fmt,
                      logarithmic ? ImGuiSliderFlags_Logarithmic : ImGuiSliderFlags_None);
  return ImGui::IsItemDeactivatedAfterEdit();
}

}  // namespace

// [SECTION] Parameter copies ----------------------------------------------------------

void DemFeature::on_scene(App& a) {
  const bool same_scene = a.scene_reloaded;
  grab_index_.clear();
  grabbing_ = false;
  force_scale_.reset();
  bond_hi_ = 0.f;
  ts_time_ = -1.0;
  dem::DemWorld* d = a.dem_world();
  copies_of_ = d;
  if (!d) {
    have_ = false;
    return;
  }
  // The fresh world's particles have the file's densities.
  applied_density_.resize(d->materials.size());
  for (size_t m = 0; m < d->materials.size(); ++m) applied_density_[m] = d->materials[m].density;
  if (same_scene && have_ && materials_.size() == d->materials.size()) {
    // A reset keeps what was edited in the window (densities rescale the masses at the next sync).
    d->solver = solver_;
    d->bond = bond_;
    d->materials = materials_;
  } else {
    solver_ = d->solver;
    bond_ = d->bond;
    materials_ = d->materials;
    auto_safety_ = d->solver.dt_safety > 0.0 ? d->solver.dt_safety : 0.2;
  }
  have_ = true;
}

void DemFeature::pull(App& a) {
  // The world's parameters after the recording changed them (a restore, a replayed edit). A new
  // world is on_scene's: a reset keeps the window's edits.
  dem::DemWorld* d = a.dem_world();
  if (!d || !have_ || d != copies_of_) return;
  solver_ = d->solver;
  bond_ = d->bond;
  materials_ = d->materials;
  applied_density_.resize(d->materials.size());
  for (size_t m = 0; m < d->materials.size(); ++m) applied_density_[m] = d->materials[m].density;
}

void DemFeature::sync(App& a) {
  a.dem_view.contact_chains = show_contacts_;
  dem::DemWorld* d = a.dem_world();
  if (!d) return;
  a.pending.preset.reset();  // the velocity presets are MPM teaching fields
  if (!have_) return;
  d->solver = solver_;
  d->bond = bond_;  // stiffness and strengths act on the existing bonds from the next step
  if (d->materials.size() != materials_.size()) return;
  d->materials = materials_;
  // A density edit changes the masses and inertias of that material's
  // particles (spheres, as the scene builder makes them).
  bool changed = false;
  for (size_t m = 0; m < materials_.size() && m < applied_density_.size(); ++m) {
    const double rho = materials_[m].density;
    if (rho == applied_density_[m] || ImGui::IsAnyItemActive()) continue;
    d->sync();
    dem::DemParticles& p = d->particles;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p.material[i] != m) continue;
      p.mass[i] = dem::sphere_mass(rho, p.radius[i]);
      p.inertia[i] = dem::sphere_inertia(p.mass[i], p.radius[i]);
    }
    applied_density_[m] = rho;
    changed = true;
  }
  if (changed) {
    d->host_changed();
    a.rw.ring.keyframe(*a.sim);  // the new masses: the whole state, recorded with this step
  }
}

// [SECTION] Tools on DEM particles ------------------------------------------------------

bool DemFeature::press(App& a, Vec2 wm) {
  dem::DemWorld* d = a.dem_world();
  if (!d) return false;
  if (a.tools.tool == Tool::Grab) {
    particles_within(a.table, wm, a.tools.radius, grab_rows_);
    // Beside MPM matter the grains' rows come after the matter's: only those.
    grab_rows_.erase(std::remove_if(grab_rows_.begin(), grab_rows_.end(),
                                    [&](uint32_t r) { return r < a.dem_row0; }),
                     grab_rows_.end());
    dem_rows_to_indices(a.table, *d, grab_rows_, grab_index_);
    if (!grab_index_.empty()) {
      d->grab_stiffness = a.tools.grab_stiffness;
      d->grab_begin(grab_index_, dem::Vec2d{wm.x, wm.y});
      grabbing_ = true;
      grab_centroid_start_ = dem_centroid(*d, grab_index_);
      a.log("grab begin n=%zu target=(%.9g,%.9g) centroid=(%.9g,%.9g)", grab_index_.size(),
            static_cast<double>(wm.x), static_cast<double>(wm.y),
            static_cast<double>(grab_centroid_start_.x),
            static_cast<double>(grab_centroid_start_.y));
    }
  }
  if (a.tools.tool == Tool::Attract || a.tools.tool == Tool::Repel)
    a.log("%s begin x=%.9g y=%.9g", tool_name(a.tools.tool), static_cast<double>(wm.x),
          static_cast<double>(wm.y));
  return false;  // the app's own tools act on the same press
}

void DemFeature::drag(App& a, Vec2 wm) {
  dem::DemWorld* d = a.dem_world();
  if (d && grabbing_ && d->grabbing()) d->grab_move(dem::Vec2d{wm.x, wm.y});
}

void DemFeature::release(App& a, Vec2 wm) {
  dem::DemWorld* d = a.dem_world();
  if (!d) return;
  if (grabbing_) {
    d->sync();
    Vec2 c = dem_centroid(*d, grab_index_);
    a.log("grab end n=%zu target=(%.9g,%.9g) centroid=(%.9g,%.9g) moved=%.9g", grab_index_.size(),
          static_cast<double>(wm.x), static_cast<double>(wm.y), static_cast<double>(c.x),
          static_cast<double>(c.y), static_cast<double>(length(c - grab_centroid_start_)));
    d->grab_end();
    grabbing_ = false;
    grab_index_.clear();
    grab_rows_.clear();
  }
  if (a.tools.tool == Tool::Attract || a.tools.tool == Tool::Repel)
    a.log("%s end", tool_name(a.tools.tool));
}

// [SECTION] DEM panel ----------------------------------------------------------------------

void DemFeature::panel(App& a) {
  dem::DemWorld* d = a.dem_world();
  if (!d || !have_) return;
  if (!ImGui::CollapsingHeader("DEM", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const float label_w = ImGui::GetFontSize() * 7.f;
  char t1[48], t2[48];

  // Counters (kept by the world from each step's result: no pass over the bonds).
  const dem::DemStepResult& last = d->last_result();
  const dem::DemLastBreak& lb = d->last_break();
  const size_t nbonds = d->bonds.size();
  if (begin_props("dem_counts")) {
    prop("particles", "%zu", d->particles.size());
    if (nbonds > 0) {
      const size_t intact = d->intact_bonds();
      prop("bonds", "%zu intact, %zu broken", intact, nbonds - intact);
      const size_t k = static_cast<size_t>(lb.bond);
      if (lb.step > 0 && lb.bond >= 0 && k < nbonds) {
        const dem::DemParticles& p = d->particles;
        const uint32_t i = d->bonds.i[k], j = d->bonds.j[k];
        prop("last break", "step %" PRId64 ", %s", lb.step, bond_break_name(lb.mode));
        prop("between", "particles %u and %u", i < p.size() ? p.id[i] : 0u,
             j < p.size() ? p.id[j] : 0u);
      } else
        prop("last break", "none yet");
    }
    prop("contacts", "%zu pairs, %zu walls", last.contacts, last.wall_contacts);
    ImGui::EndTable();
  }

  // Overlays.
  section_label("draw");
  const auto toggle = [&a](const char* label, const char* key, bool* v) {
    if (ImGui::Checkbox(label, v)) a.log("dem show_%s=%d", key, *v ? 1 : 0);
  };
  if (nbonds > 0) {
    toggle("bonds, coloured by stress", "bonds", &show_bonds_);
    help_marker(
        "Each bond is a line between the two centres, coloured by max(sigma / sigma_t, sigma_c / sigma_c,max, "
        "tau / tau_max): 1 breaks it. Auto range stretches the colour bar to the largest value now.");
    ImGui::Indent();
    if (ImGui::Checkbox("auto range", &bond_auto_range_))
      a.log("dem bond_auto_range=%d", bond_auto_range_ ? 1 : 0);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-FLT_MIN);
    int c = static_cast<int>(bond_cmap_);
    if (ImGui::BeginCombo("##bond_cmap", colormap_name(bond_cmap_))) {
      for (int k = 0; k < kColormapCount; ++k)
        if (ImGui::Selectable(colormap_name(static_cast<Colormap>(k)), k == c)) c = k;
      ImGui::EndCombo();
    }
    if (c != static_cast<int>(bond_cmap_)) {
      bond_cmap_ = static_cast<Colormap>(c);
      a.log("dem bond_colormap=%s", colormap_name(bond_cmap_));
    }
    ImGui::Unindent();
    toggle("broken bonds (dashed)", "broken", &show_broken_);
    help_marker(
        "Broken bonds are drawn dashed while their particles stay within three rest lengths of each other.");
    if (!bond_note_.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
      ImGui::TextWrapped("%s", bond_note_.c_str());
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "A bond is drawn once its rest length is %.1f px on screen; shorter ones would lie a.under\n"
            "their particles. The wheel zooms about the cursor.",
            static_cast<double>(kBondMinPx));
    }
  }
  toggle("contact forces", "contacts", &show_contacts_);
  help_marker(
      "Force chains: a line from centre to centre (or to the wall) for every unbonded contact, "
      "its width proportional to |F|; the legend gives the force drawn at full width.");
  toggle("walls", "walls", &show_walls_);

  // Bonds.
  if (nbonds > 0 && ImGui::TreeNodeEx("Bonds (EBPM)", ImGuiTreeNodeFlags_DefaultOpen)) {
    ImGui::PushItemWidth(-label_w);
    dem::DemBondParams& bp = bond_;
    if (slider_double("E", &bp.E, 1e3, 1e11, "%.3g Pa", true)) a.log("dem bond_E=%.9g", bp.E);
    if (slider_double("nu", &bp.nu, 0.0, 0.49, "%.3f", false)) a.log("dem bond_nu=%.9g", bp.nu);
    if (slider_double("radius ratio", &bp.radius_ratio, 0.05, 1.5, "%.3f", false))
      a.log("dem bond_radius_ratio=%.9g", bp.radius_ratio);
    help_marker(
        "lambda: the bond is a cylinder of radius lambda min(R_i, R_j). E, nu and lambda act on the "
        "existing bonds at the next step (the bonds store displacements, not forces).");
    if (slider_double("tensile", &bp.tensile_strength, 1e2, 1e10, "%.3g Pa", true))
      a.log("dem bond_tensile_strength=%.9g", bp.tensile_strength);
    if (slider_double("compressive", &bp.compressive_strength, 1e2, 1e10, "%.3g Pa", true))
      a.log("dem bond_compressive_strength=%.9g", bp.compressive_strength);
    if (slider_double("shear", &bp.shear_strength, 1e2, 1e10, "%.3g Pa", true))
      a.log("dem bond_shear_strength=%.9g", bp.shear_strength);
    help_marker(
        "Strengths: a bond breaks for good when a stress reaches its strength. Lowering them "
        "breaks the loaded bonds at the next step.");
    if (slider_double("damping", &bp.damping, 0.0, 1.0, "%.3f", false))
      a.log("dem bond_damping=%.9g", bp.damping);
    ImGui::PopItemWidth();
    ImGui::TreePop();
  }

  // Materials.
  if (ImGui::TreeNodeEx("Materials##dem", ImGuiTreeNodeFlags_None)) {
    for (size_t m = 0; m < materials_.size(); ++m) {
      dem::DemMaterial& mat = materials_[m];
      const char* name = m < d->material_names.size() ? d->material_names[m].c_str() : "material";
      ImGui::PushID(static_cast<int>(m));
      if (ImGui::ColorEdit3("##c", mat.color,
                            ImGuiColorEditFlags_NoInputs | ImGuiColorEditFlags_NoLabel))
        a.log("dem material=%s color=(%.3f,%.3f,%.3f)", name, static_cast<double>(mat.color[0]),
              static_cast<double>(mat.color[1]), static_cast<double>(mat.color[2]));
      ImGui::SameLine();
      if (ImGui::TreeNodeEx("##m", ImGuiTreeNodeFlags_DefaultOpen, "%s", name)) {
        ImGui::PushItemWidth(-label_w);
        if (slider_double("E", &mat.E, 1e3, 1e11, "%.3g Pa", true))
          a.log("dem material=%s E=%.9g", name, mat.E);
        if (slider_double("nu", &mat.nu, 0.0, 0.49, "%.3f", false))
          a.log("dem material=%s nu=%.9g", name, mat.nu);
        if (slider_double("density", &mat.density, 10.0, 5e4, "%.4g kg/m3", true))
          a.log("dem material=%s density=%.9g", name, mat.density);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip(
              "Rescales the mass and inertia of this material's particles when released.");
        if (slider_double("friction", &mat.friction, 0.0, 2.0, "%.3f", false))
          a.log("dem material=%s friction=%.9g", name, mat.friction);
        if (slider_double("restitution", &mat.restitution, 0.01, 1.0, "%.3f", false))
          a.log("dem material=%s restitution=%.9g", name, mat.restitution);
        if (slider_double("rolling", &mat.rolling_friction, 0.0, 0.5, "%.3f", false))
          a.log("dem material=%s rolling_friction=%.9g", name, mat.rolling_friction);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("Rolling friction mu_r: caps the rolling moment at mu_r R* F_n.");
        if (slider_double("rolling damping", &mat.rolling_damping, 0.0, 1.0, "%.2f", false))
          a.log("dem material=%s rolling_damping=%.9g", name, mat.rolling_damping);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip(
              "Rolling damping ratio eta_r (Ai et al. 2011, model C): a viscous rolling moment\n"
              "-eta_r 2 sqrt(I_r k_r) omega_rel while the rolling spring is below its cap.");
        ImGui::PopItemWidth();
        ImGui::TreePop();
      }
      ImGui::PopID();
    }
    ImGui::TreePop();
  }

  // Solver and time step.
  if (ImGui::TreeNodeEx("Solver##dem", ImGuiTreeNodeFlags_DefaultOpen)) {
    dem::DemSolverParams& s = solver_;
    const double now = glfwGetTime();
    if (ts_time_ < 0.0 || now - ts_time_ > 0.25) {
      ts_ = d->estimate_time_step();
      ts_time_ = now;
    }
    const dem::DemTimeStep& ts = ts_;
    const double bound = std::min(ts.rayleigh, std::min(ts.bond, 0.5 * ts.hertz));
    bool autodt = s.dt_safety > 0.0;
    section_label("time step");
    if (ImGui::RadioButton("auto", autodt) && !autodt) {
      s.dt_safety = auto_safety_ > 0.0 ? auto_safety_ : 0.2;
      autodt = true;
      a.log("dem dt=auto safety=%.9g", s.dt_safety);
    }
    ImGui::SameLine();
    if (ImGui::RadioButton("fixed", !autodt) && autodt) {
      auto_safety_ = s.dt_safety;
      s.dt = std::isfinite(ts.recommended) && ts.recommended > 0.0 ? ts.recommended : s.dt;
      s.dt_safety = 0.0;
      autodt = false;
      a.log("dem dt=fixed value=%.9g", s.dt);
    }
    help_marker(
        "Auto: dt = safety x min(Rayleigh time, bond bound, Hertz time / 2), recomputed every a.frame "
        "(0.2 gives LIGGGHTS' limits). Fixed: the dt you set; above the stable bound the run blows up.");
    ImGui::PushItemWidth(-label_w);
    if (autodt) {
      if (slider_double("safety", &s.dt_safety, 0.01, 1.0, "%.2f", false))
        a.log("dem dt_safety=%.9g", s.dt_safety);
    } else {
      if (slider_double("dt", &s.dt, 1e-8, 1e-3, "%.3e s", true)) a.log("dem dt=%.9g", s.dt);
    }
    ImGui::PopItemWidth();
    if (begin_props("dem_dt")) {
      format_s(t1, sizeof t1, ts.rayleigh);
      prop("Rayleigh", "%s", t1);
      format_s(t1, sizeof t1, ts.hertz);
      prop("Hertz", "%s", t1);
      format_s(t1, sizeof t1, ts.bond);
      prop("bond bound", "%s", t1);
      format_s(t1, sizeof t1, bound);
      format_s(t2, sizeof t2, autodt ? ts.recommended : s.dt);
      prop("stable", "%s  (dt %s)", t1, t2);
      format_s(t1, sizeof t1, d->last_dt() > 0.0 ? d->last_dt() : d->next_dt());
      prop("dt in use", "%s", t1);
      ImGui::EndTable();
    }
    if (!autodt && s.dt > bound) {
      ImGui::PushStyleColor(ImGuiCol_Text, kWarn);
      ImGui::TextWrapped("dt is above the stable bound: expect a blow-up.");
      ImGui::PopStyleColor();
    }
    section_label("stepping");
    ImGui::PushItemWidth(-label_w);
    ImGui::SliderInt("substeps", &s.substeps, 1, 2000, "%d / a.frame",
                     ImGuiSliderFlags_Logarithmic);
    if (ImGui::IsItemDeactivatedAfterEdit()) a.log("dem substeps=%d", s.substeps);
    double g[2] = {s.gravity.x, s.gravity.y};
    const double glo = -100.0, ghi = 100.0;
    ImGui::DragScalarN("gravity", ImGuiDataType_Double, g, 2, 0.05f, &glo, &ghi, "%.2f");
    s.gravity = dem::Vec2d{g[0], g[1]};
    if (ImGui::IsItemDeactivatedAfterEdit())
      a.log("dem gravity=(%.9g,%.9g)", s.gravity.x, s.gravity.y);
    if (slider_double("local damping", &s.local_damping, 0.0, 0.9, "%.2f", false))
      a.log("dem local_damping=%.9g", s.local_damping);
    help_marker(
        "Cundall's local damping alpha: each force component loses alpha |F| against the velocity. "
        "Settles piles and beams without changing their equilibria.");
    ImGui::PopItemWidth();
    ImGui::TreePop();
  }
}

// [SECTION] Inspector ------------------------------------------------------------------------

bool DemFeature::inspect_row(App& a, size_t row) {
  dem::DemWorld* d = a.dem_world();
  if (!d || row < a.dem_row0) return false;  // not a grain: the app's particle rows
  if (row >= a.table.size()) return true;
  const dem::DemParticles& p = d->particles;
  size_t i = row - a.dem_row0;
  if (i >= p.size() || p.id[i] != a.table.id[row]) {
    int64_t k = d->index_of(a.table.id[row]);
    if (k < 0) {
      ImGui::TextDisabled("particle %u is gone", a.table.id[row]);
      return true;
    }
    i = static_cast<size_t>(k);
  }
  // Its state as this frame saw it: the host arrays, or the interop's
  // read-back (radius, mass, material, group and the fixed flag never change
  // on the device).
  const DemSelected& sel = a.dem_view.selected;
  if (!sel.valid || sel.index != i) {
    ImGui::TextDisabled("particle %u: its state comes with the next frame", p.id[i]);
    return true;
  }
  const char* mat =
      p.material[i] < d->material_names.size() ? d->material_names[p.material[i]].c_str() : "?";
  size_t broken = 0;
  for (const DemSelectedBond& sb : sel.bonds) broken += sb.broken ? 1 : 0;
  if (begin_props("dem_insp")) {
    prop("ID", "%u", p.id[i]);
    prop("group", "%u", static_cast<unsigned>(p.group[i]));
    prop("material", "%s", mat);
    prop("position", "%.5f, %.5f", sel.x.x, sel.x.y);
    prop("velocity", "%.4f, %.4f", sel.v.x, sel.v.y);
    prop("omega", "%.4g rad/s", sel.omega);
    prop("radius", "%.4g m", p.radius[i]);
    prop("mass", "%.4g kg", p.mass[i]);
    prop("fixed", "%s", p.fixed[i] ? "yes (kinematic)" : "no");
    if (!sel.bonds.empty())
      prop("bonds", "%zu intact, %zu broken", sel.bonds.size() - broken, broken);
    ImGui::EndTable();
  }
  if (sel.bonds.empty()) {
    if (d->bonds.size() > 0) ImGui::TextDisabled("no bonds");
    return true;
  }
  if (sel.bond_total > static_cast<int>(sel.bonds.size()))
    ImGui::TextDisabled("the first %zu of its %d bonds", sel.bonds.size(), sel.bond_total);
  const ImGuiTableFlags f =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH;
  if (!ImGui::BeginTable("dem_bonds", 4, f)) return true;
  ImGui::TableSetupColumn("partner", ImGuiTableColumnFlags_WidthStretch, 0.9f);
  ImGui::TableSetupColumn("sigma", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableSetupColumn("tau", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableSetupColumn("state", ImGuiTableColumnFlags_WidthStretch, 1.3f);
  ImGui::TableHeadersRow();
  ImFont* mono = mono_font();
  char buf[48];
  for (const DemSelectedBond& sb : sel.bonds) {
    const BondStress& st = sb.stress;
    ImGui::TableNextRow();
    if (mono) ImGui::PushFont(mono);
    ImGui::TableSetColumnIndex(0);
    ImGui::Text("%u", sb.other < p.size() ? p.id[sb.other] : 0u);
    ImGui::TableSetColumnIndex(1);
    if (sb.broken)
      ImGui::TextDisabled("-");
    else {
      format_pa(buf, sizeof buf, st.sigma);
      ImGui::TextUnformatted(buf);
      if (ImGui::IsItemHovered()) {
        char c[48];
        format_pa(c, sizeof c, st.sigma_c);
        ImGui::SetTooltip("max tensile stress (T/A + |M| r/I); compressive: %s", c);
      }
    }
    ImGui::TableSetColumnIndex(2);
    if (sb.broken)
      ImGui::TextDisabled("-");
    else {
      format_pa(buf, sizeof buf, st.tau);
      ImGui::TextUnformatted(buf);
    }
    ImGui::TableSetColumnIndex(3);
    if (sb.broken) {
      ImGui::PushStyleColor(ImGuiCol_Text, kBrokenText);
      ImGui::Text("%s", bond_break_name(sb.mode));
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("broke in %s at step %" PRId64, bond_break_name(sb.mode), sb.break_step);
    } else {
      std::array<float, 3> c = bond_stress_rgb(bond_cmap_, static_cast<float>(st.ratio), bond_hi_);
      ImGui::ColorButton("##s", ImVec4(c[0], c[1], c[2], 1.f),
                         ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoBorder,
                         ImVec2(ImGui::GetFontSize() * 0.7f, ImGui::GetFontSize() * 0.7f));
      ImGui::SameLine(0.f, 4.f);
      ImGui::Text("%.0f%%", 100.0 * std::min(st.ratio, 9.99));
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "intact, at %.1f%% of its %s strength", 100.0 * st.ratio,
            st.critical == dem::BondBreak::None ? "tensile" : bond_break_name(st.critical));
    }
    if (mono) ImGui::PopFont();
  }
  ImGui::EndTable();
  return true;
}

std::unique_ptr<Feature> make_dem_feature() { return std::make_unique<DemFeature>(); }

}  // namespace ps
