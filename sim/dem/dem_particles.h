/// DEM state in structure-of-arrays form: particles (disks in the plane that
/// carry sphere mass and inertia, see docs/dem.md) and EBPM bonds.
/// Particle index i holds the particle with the stable ID `id[i]` (1-based,
/// as in SGF, P4P and P4C files).
#pragma once
#include <cstdint>
#include <vector>
#include "sim/dem/dem_vec.h"

namespace ps {
namespace dem {

struct DemParticles {
  std::vector<Vec2d> x;           ///< centre position, m
  std::vector<Vec2d> v;           ///< velocity, m/s
  std::vector<double> theta;      ///< rotation angle about z, rad
  std::vector<double> omega;      ///< angular velocity about z, rad/s
  std::vector<double> radius;     ///< m
  std::vector<double> mass;       ///< kg (sphere: 4/3 pi R^3 rho)
  std::vector<double> inertia;    ///< kg m^2 (sphere: 2/5 m R^2)
  std::vector<uint8_t> material;  ///< index into the material table
  std::vector<uint16_t> group;    ///< user group (loads, SGF lists, selection)
  std::vector<uint32_t> body;  ///< bonding body: bonds form only within one body; 0 = never bonded
  std::vector<uint8_t> fixed;  ///< 1: kinematic, keeps its v and omega whatever the forces (clamps)
  std::vector<uint32_t> id;    ///< stable 1-based ID
  std::vector<Vec2d> fext;     ///< external force this step (SGF lists); zero by default

  size_t size() const { return x.size(); }
  /// Whether every column holds size() entries.
  bool consistent() const {
    const size_t n = size();
    return v.size() == n && theta.size() == n && omega.size() == n && radius.size() == n &&
           mass.size() == n && inertia.size() == n && material.size() == n && group.size() == n &&
           body.size() == n && fixed.size() == n && id.size() == n && fext.size() == n;
  }
  void clear() { resize(0); }
  void resize(size_t n) {
    x.resize(n);
    v.resize(n);
    theta.resize(n);
    omega.resize(n);
    radius.resize(n);
    mass.resize(n);
    inertia.resize(n);
    material.resize(n);
    group.resize(n);
    body.resize(n);
    fixed.resize(n);
    id.resize(n);
    fext.resize(n);
  }
  /// Appends a particle at rest orientation; returns its index.
  size_t add(Vec2d pos, Vec2d vel, double r, double m, double I, uint8_t mat, uint16_t grp,
             uint32_t bdy) {
    size_t i = size();
    uint32_t next_id = i == 0 ? 1u : id.back() + 1u;
    x.push_back(pos);
    v.push_back(vel);
    theta.push_back(0.0);
    omega.push_back(0.0);
    radius.push_back(r);
    mass.push_back(m);
    inertia.push_back(I);
    material.push_back(mat);
    group.push_back(grp);
    body.push_back(bdy);
    fixed.push_back(0);
    id.push_back(next_id);
    fext.push_back(Vec2d{});
    return i;
  }
};

/// Why a bond broke (the first criterion exceeded, by stress / strength).
enum class BondBreak : uint8_t { None = 0, Tensile = 1, Compressive = 2, Shear = 3 };

/// EBPM bonds, sorted by (i, j) with i < j. A broken bond stays in the list
/// (for drawing and statistics) and never re-forms.
struct DemBonds {
  std::vector<uint32_t> i, j;       ///< particle indices, i < j
  std::vector<double> length0;      ///< rest length |x_j - x_i| at formation
  std::vector<double> shear_disp;   ///< accumulated tangential displacement delta_s, m
  std::vector<double> bend_angle;   ///< accumulated relative rotation theta_b, rad
  std::vector<uint8_t> broken;      ///< 0 intact, 1 broken
  std::vector<BondBreak> mode;      ///< why it broke
  std::vector<int64_t> break_step;  ///< step at which it broke (0 while intact)
  // Outputs of the last step, for drawing and export.
  std::vector<float> sigma;  ///< max normal stress, tension positive: T/A + |M_b| r_b / I  (Pa)
  std::vector<float> tau;    ///< max shear stress |F_s| / A (Pa)
  std::vector<Vec2d> force;  ///< force on particle i by j (elastic + damping), N

  size_t size() const { return i.size(); }
  /// Whether every column holds size() entries (O(1)).
  bool consistent() const {
    const size_t n = size();
    return j.size() == n && length0.size() == n && shear_disp.size() == n &&
           bend_angle.size() == n && broken.size() == n && mode.size() == n &&
           break_step.size() == n && sigma.size() == n && tau.size() == n && force.size() == n;
  }
  /// Whether every bond joins two of `particles` particles, i < j (a pass over the bonds: at
  /// edits, not per step).
  bool indices_valid(size_t particles) const {
    for (size_t k = 0; k < i.size(); ++k)
      if (!(i[k] < j[k] && j[k] < particles)) return false;
    return true;
  }
  void clear() { resize(0); }
  void resize(size_t n) {
    i.resize(n);
    j.resize(n);
    length0.resize(n);
    shear_disp.resize(n);
    bend_angle.resize(n);
    broken.resize(n);
    mode.resize(n);
    break_step.resize(n);
    sigma.resize(n);
    tau.resize(n);
    force.resize(n);
  }
  size_t add(uint32_t a, uint32_t b, double L0) {
    size_t k = size();
    i.push_back(a);
    j.push_back(b);
    length0.push_back(L0);
    shear_disp.push_back(0.0);
    bend_angle.push_back(0.0);
    broken.push_back(0);
    mode.push_back(BondBreak::None);
    break_step.push_back(0);
    sigma.push_back(0.f);
    tau.push_back(0.f);
    force.push_back(Vec2d{});
    return k;
  }
  size_t intact() const {
    size_t c = 0;
    for (uint8_t b : broken) c += b ? 0 : 1;
    return c;
  }
};

}  // namespace dem
}  // namespace ps
