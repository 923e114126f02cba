/// What the window shows of a DEM world, GL-free (unit tested without a
/// window): bond stress normalised by the strengths and its colour, the
/// scale of contact-force lines, walls clipped to the view box, a particle's
/// bonds, the last bond break, and the mapping from table rows (picking,
/// the grab brush) to DEM particle indices.
#pragma once
#include <array>
#include <cstdint>
#include <vector>
#include "render/cpu/colormap.h"
#include "sim/core/vec.h"
#include "sim/dem/dem_world.h"
#include "sim/scene/simulation.h"

namespace ps {

/// A bond's stresses (Pa) and how close they are to breaking it.
struct BondStress {
  double sigma = 0.0;    ///< max tensile stress T/A + |M_b| r_b / I
  double sigma_c = 0.0;  ///< max compressive stress -T/A + |M_b| r_b / I
  double tau = 0.0;      ///< shear stress |F_s| / A
  /// max(sigma / sigma_t, sigma_c / sigma_c,max, tau / tau_max, 0): 1 breaks the bond.
  double ratio = 0.0;
  /// The criterion with the largest ratio (the mode it would break in);
  /// None when no stress is positive.
  dem::BondBreak critical = dem::BondBreak::None;
};

/// Normalises stresses by the bond strengths (ties in the order tensile,
/// compressive, shear, as the solver's break check).
BondStress normalise_bond_stress(const dem::DemBondParams& bp, double sigma, double sigma_c, double tau);

/// Bond k's stresses now: the solver's bond law (dem_kernels.h bond_force)
/// on the current positions, rotations and bond parameters, so an edit of E,
/// nu or the bond radius shows at once, even while paused. Broken bonds
/// carry nothing (all zero).
BondStress bond_stress(const dem::DemWorld& w, size_t k);

/// Ratio of every bond (-1 for broken ones), into reused storage.
void bond_stress_ratios(const dem::DemWorld& w, std::vector<float>& out);

/// Colour of a stress ratio on a colour map spanning [0, hi].
std::array<float, 3> bond_stress_rgb(Colormap cm, float ratio, float hi);

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
void dem_rows_to_indices(const ParticleTable& t, const dem::DemWorld& w, const std::vector<uint32_t>& rows,
                         std::vector<uint32_t>& out);

/// Mean position of the particles `idx` (0, 0 when empty).
Vec2 dem_centroid(const dem::DemWorld& w, const std::vector<uint32_t>& idx);

/// The drawable part of a wall inside the box [lo, hi]: a segment as it is,
/// a plane (infinite line) clipped to the box. False when nothing is inside.
bool wall_segment(const dem::DemWall& wall, Vec2 lo, Vec2 hi, Vec2& a, Vec2& b);

/// Bonds (indices into w.bonds) that join particle `index`, intact and broken.
void bonds_of(const dem::DemBonds& b, uint32_t index, std::vector<uint32_t>& out);

/// The most recent bond break: its step, mode and particle IDs (step 0: none yet).
struct LastBreak {
  int64_t step = 0;
  dem::BondBreak mode = dem::BondBreak::None;
  uint32_t id_i = 0, id_j = 0;
  size_t broken = 0;  ///< broken bonds in total
};
LastBreak last_bond_break(const dem::DemWorld& w);

}  // namespace ps
