/// The window's DEM state (internal to render/): the app-owned copies of the
/// DEM parameters the DEM panel edits (applied to the world at App::sync,
/// like the MPM solver and materials), the overlay toggles, and storage the
/// DEM drawing reuses every frame. Used by panel_dem.cpp and dem_draw.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "render/cpu/colormap.h"
#include "render/cpu/dem_view.h"
#include "sim/dem/dem_world.h"

namespace ps {

struct DemUi {
  // App-owned copies (valid when `have`); App::dem_sync writes them to the world.
  bool have = false;
  dem::DemSolverParams solver;
  dem::DemBondParams bond;
  std::vector<dem::DemMaterial> materials;
  std::vector<double> applied_density;  ///< density the particles' masses were made with
  double auto_safety = 0.2;             ///< dt safety restored when switching back to auto dt

  // Overlays.
  bool show_bonds = true, show_broken = true, show_contacts = false, show_walls = true;
  /// Off (the default): the colour bar is 0..1 of the strength, so bright means near breaking;
  /// on: it spans the frame's largest ratio.
  bool bond_auto_range = false;
  Colormap bond_cmap = Colormap::Turbo;
  float bond_hi = 1.f;  ///< top of the bond colour bar (ratio)
  ForceScale force_scale;

  // Grab on DEM particles.
  std::vector<uint32_t> grab_index;
  Vec2 grab_centroid_start{0.f, 0.f};
  bool grabbing = false;

  // Time-step estimate, refreshed a few times a second (it walks all bonds).
  dem::DemTimeStep ts;
  double ts_time = -1.0;

  // Each particle's bonds and the longest rest length (rebuilt when the bond
  // topology changes), and the selected particle as the last frame saw it
  // (the inspector and its bonds' overlay: from the host arrays, or read back
  // by the CUDA-GL interop).
  DemBondIndex bond_index;
  DemSelected selected;

  // The CUDA-GL interop (App::snapshot, dem_draw.cpp).
  DemFillResult fill;               ///< the last particle fill's read-back
  std::vector<float> material_rgb;  ///< 3 floats per material for the fill
  bool device_bonds = false;        ///< this frame's bonds were drawn on the device
  std::vector<uint32_t> bond_lut;   ///< the bond colour map as packed RGBA8 (bond_color_lut)
  int bond_lut_cmap = -1;           ///< which map bond_lut holds
  DemBondCount bond_count;          ///< the device's last count
  /// Why the bond overlay draws nothing now ("" when it draws): the bonds
  /// are too short on screen (zoom in).
  std::string bond_note;

  // Reused storage (no allocation per frame once sizes are stable).
  std::vector<float> ratios, scratch, force_mag;
  std::vector<dem::DemContact> pairs, wall_contacts;
  std::vector<uint32_t> sel_bonds;
  size_t drawn_bonds = 0, drawn_broken = 0, drawn_contacts = 0, drawn_walls = 0;
};

}  // namespace ps
