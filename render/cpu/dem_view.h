/// What the window shows of a DEM world, GL-free (unit tested without a
/// window): bond stress normalised by the strengths and its colour, the
/// scale of contact-force lines, walls clipped to the view box, a particle's
/// bonds (and an index of them), the selected particle's state, the last bond
/// break, and the mapping from table rows (picking, the grab brush) to DEM
/// particle indices. The formulas the CUDA-GL interop shares are in
/// dem_draw_rules.h.
#pragma once
#include <array>
#include <cstdint>
#include <vector>
#include "render/cpu/colormap.h"
#include "render/cpu/dem_draw_rules.h"
#include "render/cuda/dem_fill.h"
#include "sim/core/vec.h"
#include "sim/dem/dem_world.h"
#include "sim/scene/simulation.h"

namespace ps {

/// Bond k's stresses now (bond_stress_now on the host arrays). Broken bonds
/// carry nothing (all zero).
BondStress bond_stress(const dem::DemWorld& w, size_t k);

/// Ratio of every bond (-1 for broken ones), into reused storage.
void bond_stress_ratios(const dem::DemWorld& w, std::vector<float>& out);

/// Colour of a stress ratio on a colour map spanning [0, hi].
std::array<float, 3> bond_stress_rgb(Colormap cm, float ratio, float hi);

/// The colour map as kDemBondLut packed RGBA8 entries over t in [0, 1], for
/// the device's bond lines (the host draws colormap_rgb(t) itself: the two
/// differ by at most one level in 255).
void bond_color_lut(Colormap cm, std::vector<uint32_t>& out);

const char* bond_break_name(dem::BondBreak m);

/// Width of contact-force lines: the reference force (a robust maximum of
/// the frame's forces) is drawn `max_px` wide, smaller forces proportionally
/// thinner; the reference grows at once and shrinks slowly so the picture
/// does not flicker.
struct ForceScale {
  float ref = 0.f;
  /// Updates `ref` from this frame's magnitudes (99th percentile).
  void update(const std::vector<float>& magnitudes, std::vector<float>& scratch);
  /// Line width in pixels for force f; 0 below 2 % of the reference (not drawn).
  float width_px(float f, float max_px) const;
  void reset() { ref = 0.f; }
};

/// DEM particle indices of table rows (the table is DemSimulation::table:
/// rows are indices, checked by ID; a row whose ID moved is looked up).
void dem_rows_to_indices(const ParticleTable& t, const dem::DemWorld& w,
                         const std::vector<uint32_t>& rows, std::vector<uint32_t>& out);

/// Mean position of the particles `idx` (0, 0 when empty).
Vec2 dem_centroid(const dem::DemWorld& w, const std::vector<uint32_t>& idx);

/// The drawable part of a wall inside the box [lo, hi]: a segment as it is,
/// a plane (infinite line) clipped to the box. False when nothing is inside.
bool wall_segment(const dem::DemWall& wall, Vec2 lo, Vec2 hi, Vec2& a, Vec2& b);

/// Bonds (indices into w.bonds) that join particle `index`, intact and broken,
/// in index order (a pass over every bond: DemBondIndex::bonds_of is the
/// window's).
void bonds_of(const dem::DemBonds& b, uint32_t index, std::vector<uint32_t>& out);

/// Each particle's bonds (as i: a range of the bonds, sorted by (i, j); as j:
/// a list) and the longest rest length, built once per bond topology: the
/// topology changes only when the host arrays become the state (the world's
/// host_generation) or the counts change.
struct DemBondIndex {
  /// Rebuilds when stale (a pass over the bonds); otherwise nothing.
  void update(const dem::DemWorld& w);
  /// bonds_of(w.bonds, index, out), in O(the particle's bonds).
  void bonds_of(uint32_t index, std::vector<uint32_t>& out) const;
  double max_length0 = 0.0;  ///< the longest rest length (0 without bonds)

 private:
  uint64_t generation_ = ~0ull;
  size_t particles_ = ~size_t{0}, bonds_ = ~size_t{0};
  std::vector<uint32_t> start_i_, start_j_, list_j_;
};

/// The selected particle's state and bonds from the host arrays (current on
/// the host path), as the interop reads them back on the device path.
void dem_selected_from_host(const dem::DemWorld& w, const DemBondIndex& idx, uint32_t index,
                            DemSelected& out);

/// The most recent bond break: its step, mode and particle IDs (step 0: none yet).
struct LastBreak {
  int64_t step = 0;
  dem::BondBreak mode = dem::BondBreak::None;
  uint32_t id_i = 0, id_j = 0;
  size_t broken = 0;  ///< broken bonds in total
};
LastBreak last_bond_break(const dem::DemWorld& w);

}  // namespace ps
