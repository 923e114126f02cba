/// DEM in the window, a feature (render/feature.h; internal to render/): the DEM panel (bond and
/// material parameters, solver and time step, counters, overlays), the inspector for a grain and
/// its bonds, the window-owned parameter copies (taken on load, written at the sync point), the
/// grab / attract / repel tools on grains, and the overlays: walls under the particles, bonds
/// coloured by stress / strength, broken bonds, contact-force chains and the selected grain's
/// bonds over them, with their legend beside the scene. Active when the scene has a DEM world.
/// feature_dem.cpp: the copies, tools, panel and inspector; dem_draw.cpp: the overlays.
/// What the particle snapshot reads back with the grains (the interop's fill, the selected
/// grain, the bond index) is the app's: App::dem_view (render/dem_ui.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "render/cpu/colormap.h"
#include "render/cpu/dem_view.h"
#include "render/feature.h"
#include "sim/dem/dem_world.h"

namespace ps {

struct BondView;

class DemFeature final : public Feature {
 public:
  const char* name() const override { return "dem"; }

  void on_scene(App& a) override;
  void pull(App& a) override;
  void sync(App& a) override;
  bool press(App& a, Vec2 world) override;
  void drag(App& a, Vec2 world) override;
  void release(App& a, Vec2 world) override;
  void draw_under(App& a) override;
  void draw_over(App& a) override;
  void panel(App& a) override;
  bool inspect_row(App& a, size_t row) override;
  void legend_box(App& a) override;

 private:
  /// The bond lines through the CUDA-GL interop; false when they could not be drawn there.
  bool draw_bonds_on_device(App& a, const BondView& view, bool intact, bool broken);
  /// Auto range of the bond colour bar from this frame's ratios: expand at once, shrink slowly.
  void update_bond_range(const std::vector<float>& ratios);

  // Window-owned copies (valid when `have_`) of `copies_of_`'s parameters; written to the world
  // at the sync point.
  bool have_ = false;
  const dem::DemWorld* copies_of_ = nullptr;
  dem::DemSolverParams solver_;
  dem::DemBondParams bond_;
  std::vector<dem::DemMaterial> materials_;
  std::vector<double> applied_density_;  ///< density the particles' masses were made with
  double auto_safety_ = 0.2;             ///< dt safety restored when switching back to auto dt

  // Overlays.
  bool show_bonds_ = true, show_broken_ = true, show_contacts_ = false, show_walls_ = true;
  /// Off (the default): the colour bar is 0..1 of the strength, so bright means near breaking;
  /// on: it spans the frame's largest ratio.
  bool bond_auto_range_ = false;
  Colormap bond_cmap_ = Colormap::Turbo;
  float bond_hi_ = 1.f;  ///< top of the bond colour bar (ratio)
  ForceScale force_scale_;

  // Grab on grains.
  std::vector<uint32_t> grab_rows_, grab_index_;
  Vec2 grab_centroid_start_{0.f, 0.f};
  bool grabbing_ = false;

  // Time-step estimate, refreshed a few times a second (it walks all bonds).
  dem::DemTimeStep ts_;
  double ts_time_ = -1.0;

  // The bond lines on the device (dem_draw.cpp).
  bool device_bonds_ = false;       ///< this frame's bonds were drawn on the device
  std::vector<uint32_t> bond_lut_;  ///< the bond colour map as packed RGBA8 (bond_color_lut)
  int bond_lut_cmap_ = -1;          ///< which map bond_lut_ holds
  DemBondCount bond_count_;         ///< the device's last count
  /// Why the bond overlay draws nothing now ("" when it draws): the bonds are too short on
  /// screen (zoom in).
  std::string bond_note_;

  // Reused storage (no allocation per frame once sizes are stable).
  std::vector<float> ratios_, scratch_, force_mag_;
  std::vector<dem::DemContact> pairs_, wall_contacts_;
  size_t drawn_bonds_ = 0, drawn_broken_ = 0, drawn_contacts_ = 0, drawn_walls_ = 0;
};

}  // namespace ps
