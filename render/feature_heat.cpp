// Heat and melting in the window (sim/mpm/heat.h): the Heat panel
// (switches, walls, air, solver, the last pass, ice / water / heat content,
// the energy ledger and its drift, plots over time), the heat lamp tool, the
// thermal fields of the Materials panel and the Inspector, the temperature and
// melt-fraction legends, and two overlays: under the particles the walls and
// plates held at a temperature (and optionally the last pass's node
// temperatures), over them the scene's lamps and the heat tool's cursor, and
// the K key. A feature (render/feature.h): the panels edit its copy of the
// world's HeatParams, which `push` gives the world at the sync point. The
// temperature colour range (App::temp_auto, temp_lo, temp_hi) stays with the
// view's colour modes.
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
#include "render/cpu/particle_fields.h"
#include "render/feature.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/mpm/material_table.h"

// "°C" (UTF-8; the panel fonts cover Latin-1).
#define PS_DEG_C \
  "\xC2\xB0"     \
  "C"

namespace ps {

namespace {

using ui::begin_props;
using ui::help_marker;
using ui::kGood;
using ui::kMuted;
using ui::kWarn;
using ui::prop;
using ui::section_label;

const char* kSides[4] = {"left", "right", "bottom", "top"};
const char* kAirModels[3] = {"none (insulated)", "photons (radiation)", "convection"};

/// "12.3 kJ/m": a value with an SI prefix.
std::string si(double v, const char* unit) {
  const double a = std::fabs(v);
  const char* prefix = "";
  double s = 1.0;
  if (a >= 1e9) {
    prefix = "G";
    s = 1e9;
  } else if (a >= 1e6) {
    prefix = "M";
    s = 1e6;
  } else if (a >= 1e3) {
    prefix = "k";
    s = 1e3;
  } else if (a > 0.0 && a < 1e-3) {
    prefix = "\xC2\xB5";
    s = 1e-6;
  }  // micro
  char b[64];
  std::snprintf(b, sizeof b, "%.4g %s%s", v / s, prefix, unit);
  return b;
}

/// Heat time in the unit that reads best (s, min, h, days).
std::string duration_text(double s) {
  char b[48];
  if (s < 120.0)
    std::snprintf(b, sizeof b, "%.3g s", s);
  else if (s < 7200.0)
    std::snprintf(b, sizeof b, "%.3g min", s / 60.0);
  else if (s < 172800.0)
    std::snprintf(b, sizeof b, "%.3g h", s / 3600.0);
  else
    std::snprintf(b, sizeof b, "%.3g days", s / 86400.0);
  return b;
}

ImU32 im_col(const std::array<float, 3>& c, float a = 1.f) {
  auto q = [](float v) { return static_cast<int>(std::lround(std::clamp(v, 0.f, 1.f) * 255.f)); };
  return IM_COL32(q(c[0]), q(c[1]), q(c[2]), q(a));
}

/// Heating orange, cooling blue (lamps, the heat tool).
std::array<float, 3> lamp_rgb(float power) {
  return power >= 0.f ? std::array<float, 3>{1.f, 0.58f, 0.22f}
                      : std::array<float, 3>{0.45f, 0.75f, 1.f};
}

class HeatFeature final : public Feature {
 public:
  const char* name() const override { return "heat"; }
  void pull(App& a) override {
    if (MpmWorld* w = a.world()) params_ = w->heat;
  }
  void push(App& a) override {
    if (MpmWorld* w = a.world()) w->heat = params_;
  }
  void on_scene(App&) override {
    ice_history_.clear();
    water_history_.clear();
    heat_history_.clear();
    have_totals_ = false;
    lamp_held_ = false;
    last_sample_ = -1.0;
  }
  bool key(App& a, int key, int) override {
    if (key != GLFW_KEY_K || !a.world()) return false;
    // Open and in view: close it; closed or scrolled away: open it and scroll to it.
    panel_request_ = panel_open_ && header_visible_ ? -1 : 1;
    a.log("heat panel open=%d", panel_request_ > 0 ? 1 : 0);
    return true;
  }
  void sample(App& a, double now) override;
  void pointer(App& a, Vec2 wm, bool over_scene) override;
  void draw_under(App& a) override;
  void draw_over(App& a) override;
  void panel(App& a) override;
  bool tool_panel(App& a, Tool tool) override;
  void material(App& a, MaterialParams& m) override;
  void inspector(App& a, size_t row) override;
  void stats_rows(App& a) override {
    if (MpmWorld* w = a.world(); w && w->heat.enabled && w->heat_ledger().passes > 0) {
      const HeatReport& h = w->last_heat();
      prop("heat solve", "%d it, res %.1e, %.2f ms", h.iterations, h.residual,
           w->heat_ledger().last_ms);
    }
  }
  void stats(App& a) override {
    if (MpmWorld* w = a.world(); w && w->heat.enabled) {
      ImGui::PushID("stats_heat");
      plots(a);  // ice, water and heat content (the Heat panel shows the same)
      ImGui::PopID();
    }
  }
  bool legend(App& a) override;
  void load_settings(const SettingsFile& s) override {
    show_sources_ = s.get_bool("view.heat_sources", show_sources_);
    show_grid_ = s.get_bool("view.heat_grid", show_grid_);
  }
  void save_settings(SettingsFile& s) const override {
    s.set_bool("view.heat_sources", show_sources_);
    s.set_bool("view.heat_grid", show_grid_);
  }
  void help(std::vector<HelpRow>& rows) const override {
    rows.push_back({"K", "Heat panel: open / close (heat and melting)"});
  }

 private:
  void log_switch(App& a);  ///< "heat on|off passes=... lamps=... melted=..."
  void plots(App& a);  ///< ice mass, water mass and heat content over time (Heat and Stats panels)
  /// The temperature colours the overlays use: the colour mode's range while it
  /// shows temperature, else the fixed range (or the particles' when auto).
  void overlay_range(const App& a, float& lo, float& hi) const {
    if (a.color_mode == ColorMode::Temperature) {
      lo = a.range_lo;
      hi = a.range_hi;
    } else if (a.temp_auto && have_totals_ && totals_.max_T > totals_.min_T) {
      lo = static_cast<float>(totals_.min_T);
      hi = static_cast<float>(totals_.max_T);
    } else {
      lo = a.temp_lo;
      hi = a.temp_hi;
    }
  }

  HeatParams params_;            ///< the window's copy of the world's, applied at the sync point
  bool panel_open_ = false;      ///< the Heat header was open last frame
  bool header_visible_ = false;  ///< its header was in view last frame
  int panel_request_ = 0;        ///< key K: +1 open (and scroll to it), -1 close, at the next draw
  bool show_sources_ = true;     ///< walls held at a temperature, plates and scene lamps
  bool show_grid_ = false;       ///< the last pass's node temperatures under the particles
  HeatTotals totals_;  ///< sampled with the diagnostics while heat is on or the panel open
  bool have_totals_ = false;
  double last_sample_ = -1.0;
  History ice_history_, water_history_, heat_history_;  ///< the plots
  bool lamp_held_ = false;                              ///< the heat tool is held over the scene
  double lamp_energy_at_press_ = 0.0;  ///< the ledger's lamp energy when it was pressed
};

}  // namespace

// [SECTION] Switch log -------------------------------------------------------------

void HeatFeature::log_switch(App& a) {
  MpmWorld* w = a.world();
  const HeatLedger L = w ? w->heat_ledger() : HeatLedger{};
  a.log("heat %s passes=%" PRId64 " walls=%.6g air=%.6g lamps=%.6g melted=%.6g emitted=%" PRId64,
        params_.enabled ? "on" : "off", L.passes, L.walls, L.air, L.lamps, L.melted, L.emitted);
}

// [SECTION] Heat panel -------------------------------------------------------------

void HeatFeature::panel(App& a) {
  MpmWorld* w = a.world();
  if (!w) return;
  const MpmScene* ms = a.mpm_scene();
  const bool in_scene = params_.enabled || (ms && ms->doc.find("heat"));
  // Key K opens (and scrolls the column to) or closes the panel.
  header_visible_ = false;
  const bool scroll_here = panel_request_ > 0;
  if (scroll_here) ImGui::SetScrollHereY(0.f);
  if (panel_request_ != 0) ImGui::SetNextItemOpen(panel_request_ > 0);
  panel_request_ = 0;
  panel_open_ = false;
  const bool open =
      ImGui::CollapsingHeader("Heat and melting", in_scene ? ImGuiTreeNodeFlags_DefaultOpen : 0);
  header_visible_ = ImGui::IsItemVisible();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Key K opens this panel (and scrolls to it) or closes it.");
  if (!open) return;
  panel_open_ = true;
  ImGui::PushID("heat");  // labels such as "every" are also in the Resampling panel (same window)
  const float label_w = ImGui::GetFontSize() * 6.f;
  ImGui::PushItemWidth(-label_w);

  if (ImGui::Checkbox("heat on", &params_.enabled)) log_switch(a);
  help_marker(
      "Heat conduction on the MPM grid: the particles' heat goes to the nodes, an implicit step\n"
      "(backward Euler, solved by preconditioned conjugate gradients) spreads it, and the change goes\n"
      "back to the particles. Above its melting point ice puts the energy into melting (latent heat):\n"
      "its water runs down over the surface and drips off as water particles.");
  ImGui::SameLine();
  if (ImGui::Checkbox("heat only", &params_.only)) a.log("heat only=%d", params_.only ? 1 : 0);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The material stays where it is: conduction alone, no motion.");
  ImGui::SliderInt("every", &params_.interval, 1, 200, "%d substeps", ImGuiSliderFlags_Logarithmic);
  params_.interval = std::max(1, params_.interval);
  ImGui::SliderFloat("time scale", &params_.time_scale, 0.01f, 1e6f, "x %.4g",
                     ImGuiSliderFlags_Logarithmic);
  params_.time_scale = std::max(params_.time_scale, 1e-6f);
  help_marker(
      "Heat time per second of motion. Melting a block of ice takes hours, its motion a\n"
      "fraction of a second: a class demo runs heat thousands of times faster.");

  // One click to the two heat colour modes (the View panel has them too).
  const float bw = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  auto color_button = [&](const char* label, ColorMode m, const char* mark) {
    const bool on = a.color_mode == m;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.26f, 0.45f, 0.70f, 1.f));
    if (ImGui::Button(label, ImVec2(bw, 0)) && !on) {
      a.color_mode = m;
      a.range_lo = a.range_hi = 0.f;
      a.log("color %s", color_mode_name(a.color_mode));
    }
    ui_mark(a, mark);
    if (on) ImGui::PopStyleColor();
  };
  color_button("Temperature", ColorMode::Temperature, "heat_color_temperature");
  ImGui::SameLine();
  color_button("Melt fraction", ColorMode::MeltFraction, "heat_color_melt");

  // Boundaries: each wall insulated or held at a temperature; the air.
  section_label("walls and air");
  if (ImGui::BeginTable("##walls", 3, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("side", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 3.6f);
    ImGui::TableSetupColumn("held", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 5.2f);
    ImGui::TableSetupColumn("T", ImGuiTableColumnFlags_WidthStretch);
    for (int k = 0; k < 4; ++k) {
      HeatWall& wall = params_.walls[k];
      ImGui::PushID(k);
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted(kSides[k]);
      ImGui::TableSetColumnIndex(1);
      if (ImGui::Checkbox("held", &wall.fixed))
        a.log("heat wall %s %s T=%.6g", kSides[k], wall.fixed ? "held" : "insulated",
              static_cast<double>(wall.temperature));
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Held: the wall's boundary layer of nodes stays at this temperature.\n"
            "Off: insulated (no heat crosses it).");
      ImGui::TableSetColumnIndex(2);
      ImGui::BeginDisabled(!wall.fixed);
      ImGui::SetNextItemWidth(-FLT_MIN);
      ImGui::DragFloat("##T", &wall.temperature, 0.25f, -100.f, 500.f, "%.1f " PS_DEG_C);
      ImGui::EndDisabled();
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  int air = static_cast<int>(params_.air);
  if (ImGui::Combo("air", &air, kAirModels, 3)) {
    params_.air = static_cast<AirModel>(air);
    a.log("heat air %s", kAirModels[air]);
  }
  help_marker(
      "What the material's free surface exchanges with the air around it.\n"
      "Photons: the air's thermal radiation, absorbed where photons shot from the border hit\n"
      "the body (emissivity). Convection: h (T_air - T) through every face towards empty cells.");
  ImGui::BeginDisabled(params_.air == AirModel::None);
  ImGui::SliderFloat("air temp.", &params_.air_temperature, -50.f, 200.f, "%.1f " PS_DEG_C);
  ImGui::EndDisabled();
  if (params_.air == AirModel::Convection)
    ImGui::SliderFloat("h", &params_.convection_h, 0.f, 1000.f, "%.3g W/(m\xC2\xB2 K)",
                       ImGuiSliderFlags_Logarithmic);
  if (params_.air == AirModel::Photons) {
    ImGui::SliderFloat("emissivity", &params_.emissivity, 0.f, 1.f, "%.2f");
    ImGui::SliderInt("photons", &params_.photons, 100, 100000, "%d a pass",
                     ImGuiSliderFlags_Logarithmic);
  }
  if (!params_.plates.empty() || !params_.lamps.empty())
    ImGui::TextDisabled("scene: %zu plate(s), %zu lamp(s)", params_.plates.size(),
                        params_.lamps.size());

  if (ImGui::TreeNode("solver and water")) {
    int pre = static_cast<int>(params_.preconditioner);
    const char* pres[2] = {"Jacobi (diagonal)", "IC(0) (incomplete Cholesky)"};
    if (ImGui::Combo("precond.", &pre, pres, 2)) {
      params_.preconditioner = static_cast<HeatPreconditioner>(pre);
      a.log("heat preconditioner %s", pre ? "ic0" : "jacobi");
    }
    help_marker(
        "The conjugate gradient's preconditioner: IC(0) needs several times fewer iterations\n"
        "than Jacobi on the same system (compare the iteration count below).");
    if (w->backend_name().rfind("cuda", 0) == 0) {  // only a device backend can solve elsewhere
      int where = static_cast<int>(params_.device_solve);
      const std::string auto_label =
          "auto (device from " + std::to_string(kDeviceSolveFrom) + " unknowns)";
      const char* wheres[3] = {"host (CPU)", auto_label.c_str(), "device (GPU)"};
      if (ImGui::Combo("solve on", &where, wheres, 3)) {
        params_.device_solve = static_cast<HeatDeviceSolve>(where);
        a.log("heat device_solve %s", kHeatDeviceSolveNames[where]);
      }
      help_marker(
          "Where the heat equation's linear system is solved. The GPU runs a Jacobi PCG (IC(0)\n"
          "is sequential), so it needs more iterations but wins on large grids; the rest of the\n"
          "heat pass runs on the CPU either way. Compare 'cost' and 'solve' below.");
    }
    float tol = static_cast<float>(params_.tolerance);
    if (ImGui::SliderFloat("tolerance", &tol, 1e-12f, 1e-2f, "%.0e", ImGuiSliderFlags_Logarithmic))
      params_.tolerance = std::clamp(static_cast<double>(tol), 1e-14, 0.1);
    ImGui::SliderInt("max iter.", &params_.max_iterations, 10, 5000, "%d",
                     ImGuiSliderFlags_Logarithmic);
    params_.max_iterations = std::max(1, params_.max_iterations);
    ImGui::SliderFloat("T transfer", &params_.flip, 0.f, 1.f, "%.2f FLIP");
    help_marker(
        "Grid to particle: the share of the temperature increment (FLIP: keeps detail, may\n"
        "overshoot) against the interpolated temperature (PIC: smooth, never overshoots).");
    ImGui::Checkbox("water runs down", &params_.water_flow);
    ImGui::BeginDisabled(!params_.water_flow);
    ImGui::SliderFloat("down rate", &params_.flow_down_rate, 0.f, 200.f, "%.3g /s",
                       ImGuiSliderFlags_Logarithmic);
    ImGui::SliderFloat("level rate", &params_.flow_level_rate, 0.f, 200.f, "%.3g /s",
                       ImGuiSliderFlags_Logarithmic);
    ImGui::EndDisabled();
    ImGui::TreePop();
  }
  ImGui::Checkbox("show walls, plates and lamps", &show_sources_);
  ImGui::Checkbox("show grid temperature", &show_grid_);
  help_marker(
      "Under the particles: the temperature of every node of the last heat pass (material and\n"
      "held nodes), in the temperature colours.");

  // Readouts: the last pass, the state, the ledger.
  const HeatReport& r = w->last_heat();
  const HeatLedger& L = w->heat_ledger();
  if (begin_props("##heat_pass")) {
    if (L.passes > 0) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
      ImGui::TextUnformatted("last pass");
      ImGui::PopStyleColor();
      ImGui::TableSetColumnIndex(1);
      ImGui::PushStyleColor(ImGuiCol_Text, r.converged ? kGood : kWarn);
      ImGui::Text("%s", r.converged ? "converged" : "NOT converged");
      ImGui::PopStyleColor();
      prop("PCG", "%d it., residual %.1e%s", r.iterations, r.residual,
           r.on_device ? (r.host_finish ? " (GPU, CPU finished)" : " (GPU)") : "");
      prop("unknowns", "%d nodes", r.unknowns);
      prop("heat step", "%s", duration_text(r.dt).c_str());
      prop("cost", "%.2f ms a pass (solve %.2f)", L.last_ms, r.solve_ms);
      prop("passes", "%" PRId64 " (%" PRId64 " unconv.)", L.passes, L.unconverged);
      prop("heat time", "%s", duration_text(L.heat_time).c_str());
      if (L.emitted > 0 || L.converted > 0)
        prop("drops", "%" PRId64 " shed, %" PRId64 " gone", L.emitted, L.converted);
    } else {
      prop("last pass", "%s", params_.enabled ? "none yet (run)" : "heat is off");
    }
    if (have_totals_) {
      const HeatTotals& t = totals_;
      prop("ice", "%s", si(t.ice_mass, "kg/m").c_str());
      prop("water", "%s", si(t.water_mass, "kg/m").c_str());
      if (t.virtual_water > 0.0) prop("  on the ice", "%s", si(t.virtual_water, "kg/m").c_str());
      prop("T", "%.2f to %.2f " PS_DEG_C, t.min_T, t.max_T);
      prop("heat", "%s", si(t.heat(), "J/m").c_str());
      prop("  sensible", "%s", si(t.sensible, "J/m").c_str());
      prop("  latent", "%s", si(t.latent, "J/m").c_str());
    }
    ImGui::EndTable();
  }
  if (have_totals_) {
    const HeatBalance b = heat_balance(L, totals_);
    section_label("energy ledger (since load)");
    help_marker(
        "Heat content = sum over particles of c m (T - T_ref) + L m_water (T_ref: the lowest\n"
        "melting point). What came in through walls (and plates), air and lamps should be\n"
        "the change of the heat content: the difference is the drift of the passes (the\n"
        "linear solver's residual and round-off).");
    if (begin_props("##heat_ledger")) {
      prop("walls", "%s", si(L.walls, "J/m").c_str());
      prop("air", "%s", si(L.air, "J/m").c_str());
      prop("lamps", "%s", si(L.lamps, "J/m").c_str());
      prop("in, total", "%s", si(b.inflow, "J/m").c_str());
      prop("heat change", "%s", si(b.now - b.initial, "J/m").c_str());
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
      ImGui::TextUnformatted("drift");
      ImGui::PopStyleColor();
      ImGui::TableSetColumnIndex(1);
      ImGui::PushStyleColor(ImGuiCol_Text, b.relative < 1e-4 ? kGood : kWarn);
      ImGui::Text("%s (%.1e)", si(b.drift, "J/m").c_str(), b.relative);
      ImGui::PopStyleColor();
      if (L.melted > 0.0) prop("melted", "%s", si(L.melted, "kg/m").c_str());
      ImGui::EndTable();
    }
  }
  plots(a);
  ImGui::PopItemWidth();
  ImGui::PopID();
}

void HeatFeature::plots(App& a) {
  if (ice_history_.count > 1) {
    // PlotLines (1.86) takes an explicit size: negative widths are not resolved.
    const ImVec2 plot(ImGui::GetContentRegionAvail().x, 44.f * a.ui_scale);
    char over[96];
    std::snprintf(over, sizeof over, "ice %s", si(ice_history_.last(), "kg/m").c_str());
    ImGui::PlotLines("##ice", ice_history_.v.data(), ice_history_.count, ice_history_.offset(),
                     over, FLT_MAX, FLT_MAX, plot);
    std::snprintf(over, sizeof over, "water %s", si(water_history_.last(), "kg/m").c_str());
    ImGui::PlotLines("##water", water_history_.v.data(), water_history_.count,
                     water_history_.offset(), over, FLT_MAX, FLT_MAX, plot);
    std::snprintf(over, sizeof over, "heat content %s", si(heat_history_.last(), "J/m").c_str());
    ImGui::PlotLines("##heat", heat_history_.v.data(), heat_history_.count, heat_history_.offset(),
                     over, FLT_MAX, FLT_MAX, plot);
  }
}

void HeatFeature::sample(App& a, double now) {
  if (last_sample_ >= 0.0 && now - last_sample_ < kDiagPeriod)
    return;  // with the plots' diagnostics
  last_sample_ = now;
  MpmWorld* w = a.world();
  if (!w || (!w->heat.enabled && !panel_open_)) return;
  totals_ = w->heat_totals();  // syncs (with the interop: at the host table's refreshes only)
  have_totals_ = true;
  if (a.running || ice_history_.count == 0) {
    ice_history_.push(static_cast<float>(totals_.ice_mass));
    water_history_.push(static_cast<float>(totals_.water_mass));
    heat_history_.push(static_cast<float>(totals_.heat()));
  }
}

// [SECTION] Heat tool (Tools panel, input) -----------------------------------------

bool HeatFeature::tool_panel(App& a, Tool tool) {
  if (tool != Tool::Heat) return false;
  ImGui::SliderFloat("power", &a.tools.heat_power, -kHeatPowerMax, kHeatPowerMax, "%.4g W/m",
                     ImGuiSliderFlags_Logarithmic);
  help_marker(
      "Watts per metre of depth that the lamp gives material covering its whole disk, most at\n"
      "the centre, falling to zero at the radius; partly covered, it gives the covered share.\n"
      "Negative: a cold spot that draws heat out.");
  if (!a.world()) {
    ImGui::TextDisabled("heat works on MPM scenes only");
    return true;
  }
  if (!params_.enabled) {
    ImGui::PushStyleColor(ImGuiCol_Text, kWarn);
    ImGui::TextWrapped("Heat is off: the lamp does nothing until it is on.");
    ImGui::PopStyleColor();
    if (ImGui::Button("Turn heat on", ImVec2(-FLT_MIN, 0))) {
      params_.enabled = true;
      log_switch(a);
    }
    return true;
  }
  if (lamp_held_) {
    MpmWorld* w = a.world();
    ImGui::Text("lamp: %s so far",
                si(w->heat_ledger().lamps - lamp_energy_at_press_, "J/m").c_str());
  } else {
    ImGui::TextDisabled(a.tools.heat_power >= 0.f ? "hold the button over the material to heat it"
                                                  : "hold the button over the material to cool it");
  }
  return true;
}

void HeatFeature::pointer(App& a, Vec2 wm, bool /*over_scene*/) {
  MpmWorld* w = a.world();
  if (!w) return;
  const bool active = a.left_down && a.tools.tool == Tool::Heat;
  tool_heat_lamps(a.tools, wm, active && params_.enabled, w->heat_tool);
  if (active && !lamp_held_) {
    lamp_held_ = true;
    lamp_energy_at_press_ = w->heat_ledger().lamps;
    a.log("heat lamp begin x=%.9g y=%.9g radius=%.6g power=%.6g heat=%s heat_time=%.9g",
          static_cast<double>(wm.x), static_cast<double>(wm.y), static_cast<double>(a.tools.radius),
          static_cast<double>(a.tools.heat_power), params_.enabled ? "on" : "off",
          w->heat_ledger().heat_time);
    if (!params_.enabled)
      a.set_status("heat is off: the lamp does nothing (turn it on in the Heat panel, key K)");
  } else if (!active && lamp_held_) {
    lamp_held_ = false;
    const HeatLedger& L = w->heat_ledger();
    const HeatTotals t = w->heat_totals();
    a.log(
        "heat lamp end x=%.9g y=%.9g lamp_energy=%.9g lamps_total=%.9g heat_time=%.9g passes=%" PRId64
        " melted=%.6g ice=%.6g water=%.6g T=[%.4f,%.4f]",
        static_cast<double>(wm.x), static_cast<double>(wm.y), L.lamps - lamp_energy_at_press_,
        L.lamps, L.heat_time, L.passes, L.melted, t.ice_mass, t.water_mass, t.min_T, t.max_T);
  }
}

// [SECTION] Materials and Inspector ------------------------------------------------

void HeatFeature::material(App& a, MaterialParams& m) {
  MpmWorld* w = a.world();
  section_label("heat");
  for (int f = 0; f < thermal_field_count(); ++f) {
    const MaterialField& fd = thermal_fields()[f];
    float& value = m.*fd.member;
    if (ImGui::SliderFloat(fd.key, &value, fd.ui_min, fd.ui_max, fd.format,
                           fd.log_slider ? ImGuiSliderFlags_Logarithmic : ImGuiSliderFlags_None))
      value = static_cast<float>(std::min(std::max(static_cast<double>(value), fd.min), fd.max));
    if (ImGui::IsItemHovered()) ui::wrapped_tooltip(fd.help);
  }
  if (m.melts_into >= 0 && w && static_cast<size_t>(m.melts_into) < w->material_names.size())
    ImGui::TextDisabled(
        m.latent_heat > 0.f ? "melts into %s" : "melts into %s (once latent_heat > 0)",
        w->material_names[static_cast<size_t>(m.melts_into)].c_str());
  else
    ImGui::TextDisabled("does not melt");
}

void HeatFeature::inspector(App& a, size_t r) {
  MpmWorld* w = a.world();
  if (!w || r >= w->particles.size() || r >= w->particles.temp.size()) return;
  const MpmParticles& p = w->particles;
  const MaterialParams& m = w->materials[p.material[r]];
  if (!params_.enabled && !material_melts(m)) return;
  prop("temperature", "%.3f " PS_DEG_C, static_cast<double>(p.temp[r]));
  if (material_melts(m)) {
    prop("melt fraction", "%.4f", static_cast<double>(p.melt[r]));
    prop("water on it", "%.4g", static_cast<double>(p.vwater[r]));
  }
}

// [SECTION] Temperature range and legends ------------------------------------------

bool HeatFeature::legend(App& a) {
  MpmWorld* w = a.world();
  if (!a.sim || !w) return false;
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  const ScreenRect v = a.cam.viewport();
  const float pad = 12.f * a.ui_scale, fs_ = ImGui::GetFontSize();
  const ImU32 text = IM_COL32(228, 232, 240, 255), muted = IM_COL32(150, 158, 175, 255);
  const ImU32 bg = IM_COL32(16, 18, 24, 215);

  // The temperature of every held wall, outside the domain beside it (kept
  // inside the scene view).
  if (show_sources_ && params_.enabled && !a.overlay_flow.measuring()) {
    Vec2 lo, hi;
    a.sim->bounds(lo, hi);
    const Vec2 mid{0.5f * (lo.x + hi.x), 0.5f * (lo.y + hi.y)};
    const Vec2 at[4] = {{lo.x, mid.y}, {hi.x, mid.y}, {mid.x, lo.y}, {mid.x, hi.y}};
    const float gap = 5.f * a.ui_scale;
    for (int k = 0; k < 4; ++k) {
      if (!params_.walls[k].fixed) continue;
      char b[48];
      std::snprintf(b, sizeof b, "%s %.1f " PS_DEG_C, kSides[k],
                    static_cast<double>(params_.walls[k].temperature));
      const ImVec2 ts = ImGui::CalcTextSize(b);
      Vec2 s = a.cam.world_to_screen(at[k]);
      if (k == 0) s.x -= ts.x + gap;
      if (k == 1) s.x += gap;
      if (k == 2) s.y += gap;
      if (k == 3) s.y -= ts.y + gap;
      if (k >= 2) s.x -= 0.5f * ts.x;
      if (k < 2) s.y -= 0.5f * ts.y;
      s.x = std::clamp(s.x, v.x + 2.f, std::max(v.x + 2.f, v.x + v.w - ts.x - 2.f));
      s.y = std::clamp(s.y, v.y + 2.f, std::max(v.y + 2.f, v.y + v.h - ts.y - 2.f));
      dl->AddRectFilled(ImVec2(s.x - 3.f, s.y - 1.f), ImVec2(s.x + ts.x + 3.f, s.y + ts.y + 1.f),
                        bg, 3.f);
      dl->AddText(ImVec2(s.x, s.y), text, b);
    }
  }

  if (a.color_mode != ColorMode::Temperature && a.color_mode != ColorMode::MeltFraction)
    return false;
  const bool temp = a.color_mode == ColorMode::Temperature;
  const Colormap cm = a.cmap[static_cast<size_t>(a.color_mode)];
  const float bar_w = 220.f * a.ui_scale, bar_h = 12.f * a.ui_scale, line = fs_ * 1.35f;

  // Extra rows: the melting points, ticked inside the range (temperature), the
  // materials that take no part (melt fraction).
  std::vector<std::string> notes;
  std::vector<float> ticks, named;
  if (temp) {
    for (size_t k = 0; k < w->materials.size(); ++k) {
      const MaterialParams& m = w->materials[k];
      // Every melting material named, its tick drawn where the range holds its melting point
      // (a legend that does not grow and shrink as the range moves: the scene beside it stays put).
      if (!material_melts(m) ||
          std::find(named.begin(), named.end(), m.melting_point) != named.end())
        continue;
      named.push_back(m.melting_point);
      if (m.melting_point > a.range_lo && m.melting_point < a.range_hi)
        ticks.push_back(m.melting_point);
      char b[96];
      std::snprintf(b, sizeof b, "| %s melts at %.1f " PS_DEG_C,
                    k < w->material_names.size() ? w->material_names[k].c_str() : "?",
                    static_cast<double>(m.melting_point));
      notes.push_back(b);
    }
    if (!a.temp_auto && have_totals_) {
      char b[96];
      std::snprintf(b, sizeof b, "particles: %.1f to %.1f " PS_DEG_C, totals_.min_T, totals_.max_T);
      notes.push_back(b);
    }
  } else {
    melt_roles(w->materials, a.melt_role);
    std::vector<uint8_t> present(w->materials.size(), 0);
    for (uint8_t m : a.table.material)
      if (m < present.size()) present[m] = 1;
    std::string inert;
    for (size_t k = 0; k < present.size(); ++k)
      if (present[k] && a.melt_role[k] == MeltRole::Inert && k < w->material_names.size())
        inert += (inert.empty() ? "" : ", ") + w->material_names[k];
    if (!inert.empty()) notes.push_back("does not melt: " + inert);
  }

  const char* title = temp ? "temperature (" PS_DEG_C ")" : "melt fraction";
  const char* kind = temp ? (a.temp_auto ? "auto: min to max" : "fixed range") : "";
  float width =
      std::max(bar_w, ImGui::CalcTextSize(title).x + ImGui::CalcTextSize(kind).x + 1.5f * fs_);
  for (const auto& n : notes)
    width = std::max(width, ImGui::CalcTextSize(n.c_str()).x + (temp ? 0.f : fs_ * 1.4f));
  const ImVec2 size(width + 2 * pad,
                    bar_h + 2.6f * fs_ + 1.5f * pad + line * static_cast<float>(notes.size()));
  const Vec2 at = a.overlay_slot(Vec2{size.x, size.y});  // beside the scene (render/cpu/layout.h)
  const ImVec2 p0(at.x, at.y);
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), bg, 6.f * a.ui_scale);
  dl->AddText(ImVec2(p0.x + pad, p0.y + pad * 0.75f), muted, title);
  dl->AddText(ImVec2(p0.x + pad + width - ImGui::CalcTextSize(kind).x, p0.y + pad * 0.75f), muted,
              kind);
  const float x0 = p0.x + pad, y0 = p0.y + pad * 0.75f + fs_ * 1.35f;
  const int n = 64;
  for (int k = 0; k < n; ++k) {
    const float a0 = x0 + bar_w * k / n, a1 = x0 + bar_w * (k + 1) / n;
    const ImU32 ca = im_col(colormap_rgb(cm, static_cast<float>(k) / n)),
                cb = im_col(colormap_rgb(cm, static_cast<float>(k + 1) / n));
    dl->AddRectFilledMultiColor(ImVec2(a0, y0), ImVec2(a1 + 0.5f, y0 + bar_h), ca, cb, cb, ca);
  }
  for (float t : ticks) {
    const float x = x0 + bar_w * (t - a.range_lo) / (a.range_hi - a.range_lo);
    dl->AddLine(ImVec2(x, y0 - 3.f * a.ui_scale), ImVec2(x, y0 + bar_h + 3.f * a.ui_scale),
                IM_COL32(0, 0, 0, 200), 3.f * a.ui_scale);
    dl->AddLine(ImVec2(x, y0 - 3.f * a.ui_scale), ImVec2(x, y0 + bar_h + 3.f * a.ui_scale),
                IM_COL32(255, 255, 255, 255), 1.4f * a.ui_scale);
  }
  char lo[40], hi[40], mid[40];
  if (temp) {
    // Tenths of a degree; "+ 0.0" turns a rounded -0.0 into 0.0.
    auto deg = [](char* b, size_t n, double t) {
      const double r = std::round(t * 10.0) / 10.0 + 0.0;
      std::snprintf(b, n, "%.1f", r == 0.0 ? 0.0 : r);
    };
    deg(lo, sizeof lo, static_cast<double>(a.range_lo));
    deg(hi, sizeof hi, static_cast<double>(a.range_hi));
    deg(mid, sizeof mid, 0.5 * (static_cast<double>(a.range_lo) + a.range_hi));
  } else {
    std::snprintf(lo, sizeof lo, "0 ice");
    std::snprintf(hi, sizeof hi, "water 1");
    std::snprintf(mid, sizeof mid, "0.5");
  }
  const float ty = y0 + bar_h + 3.f * a.ui_scale;
  dl->AddText(ImVec2(x0, ty), text, lo);
  dl->AddText(ImVec2(x0 + 0.5f * (bar_w - ImGui::CalcTextSize(mid).x), ty), text, mid);
  dl->AddText(ImVec2(x0 + bar_w - ImGui::CalcTextSize(hi).x, ty), text, hi);
  float y = ty + line;
  for (const auto& note : notes) {
    float x = x0;
    if (!temp) {
      dl->AddCircleFilled(ImVec2(x + fs_ * 0.45f, y + fs_ * 0.55f), fs_ * 0.4f, im_col(kNoMeltGrey),
                          20);
      x += fs_ * 1.4f;
    }
    dl->AddText(ImVec2(x, y), muted, note.c_str());
    y += line;
  }
  return true;
}

// [SECTION] Overlays ------------------------------------------------------------------

void HeatFeature::draw_under(App& a) {
  MpmWorld* w = a.world();
  if (!w || !params_.enabled) return;
  float lo, hi;
  overlay_range(a, lo, hi);
  const Colormap cm = a.cmap[static_cast<size_t>(ColorMode::Temperature)];
  const GridSpec& g = w->grid;
  if (show_grid_) {
    const std::vector<double>& T = w->heat_solver().grid_temperature();
    const std::vector<uint8_t>& kind = w->heat_solver().node_kind();
    const int nx = g.nodes_x(), ny = g.nodes_y();
    if (T.size() == kind.size() &&
        kind.size() == static_cast<size_t>(nx) * static_cast<size_t>(ny)) {
      const Vec2 half{0.5f * g.dx, 0.5f * g.dx};
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const size_t k =
              static_cast<size_t>(j) * static_cast<size_t>(nx) + static_cast<size_t>(i);
          if (kind[k] == 0) continue;
          const Vec2 c = g.origin + Vec2{g.dx * i, g.dx * j};
          a.under.rect(c - half, c + half,
                       pack_rgba(temperature_rgb(cm, static_cast<float>(T[k]), lo, hi), 0.55f));
        }
    }
  }
  if (!show_sources_) return;
  Vec2 dlo, dhi;
  a.sim->bounds(dlo, dhi);
  const float b = g.dx * static_cast<float>(w->solver.boundary_nodes);
  const Vec2 band_lo[4] = {dlo, {dhi.x - b, dlo.y}, dlo, {dlo.x, dhi.y - b}};
  const Vec2 band_hi[4] = {{dlo.x + b, dhi.y}, dhi, {dhi.x, dlo.y + b}, dhi};
  for (int k = 0; k < 4; ++k)
    if (params_.walls[k].fixed)
      a.under.rect(band_lo[k], band_hi[k],
                   pack_rgba(temperature_rgb(cm, params_.walls[k].temperature, lo, hi), 0.8f));
  for (const HeatPlate& p : params_.plates) {
    a.under.rect(p.lo, p.hi, pack_rgba(temperature_rgb(cm, p.temperature, lo, hi), 0.6f));
    a.under.rect_outline(p.lo, p.hi, 1.2f, pack_rgba(0.9f, 0.92f, 0.96f, 0.6f));
  }
}

void HeatFeature::draw_over(App& a) {
  MpmWorld* w = a.world();
  if (!w) return;
  if (show_sources_ && params_.enabled) {
    for (const HeatLamp& L : params_.lamps) {
      a.over.circle(L.pos, L.radius, 1.4f, pack_rgba(lamp_rgb(L.power), 0.8f), 48);
      a.over.disc(L.pos, 3.f / a.cam.scale(), pack_rgba(lamp_rgb(L.power), 0.9f), 12);
    }
  }
  // The heat tool's cursor: orange (heating) or blue (cooling), lit while held.
  if (a.tools.tool != Tool::Heat || !a.cam.viewport().contains(a.mouse) ||
      (ImGui::GetIO().WantCaptureMouse && !a.left_down))
    return;
  const Vec2 c = a.cam.screen_to_world(a.mouse);
  const float r = a.tools.radius;
  const std::array<float, 3> col = lamp_rgb(a.tools.heat_power);
  const bool lit = lamp_held_ && params_.enabled;
  if (lit) a.over.disc(c, r, pack_rgba(col, 0.16f), 48);
  a.over.circle(c, r, lit ? 2.4f : 1.5f,
                pack_rgba(col, lit ? 0.95f : (params_.enabled ? 0.6f : 0.3f)), 64);
  // Rays: outwards for a lamp, inwards for a cold spot.
  const float px = 1.f / a.cam.scale();
  const float len = std::max(0.18f * r, 6.f * px);
  for (int k = 0; k < 8; ++k) {
    const float ang = 0.7853982f * static_cast<float>(k) + 0.3926991f;
    const Vec2 d{std::cos(ang), std::sin(ang)};
    const Vec2 p0 = c + (r + 3.f * px) * d, p1 = c + (r + 3.f * px + len) * d;
    if (a.tools.heat_power >= 0.f)
      a.over.line(p0, p1, lit ? 2.f : 1.2f, pack_rgba(col, lit ? 0.9f : 0.45f));
    else
      a.over.arrow(p1, p0, lit ? 2.f : 1.2f, pack_rgba(col, lit ? 0.9f : 0.45f));
  }
}

std::unique_ptr<Feature> make_heat_feature() { return std::make_unique<HeatFeature>(); }

}  // namespace ps
