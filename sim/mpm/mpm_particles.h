/// Particle state in structure-of-arrays form. Index i holds the particle
/// with the stable ID `id[i]` (1-based, as in SGF and P4P files).
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>
#include "sim/core/vec.h"

namespace ps {

/// PolyPIC's extra velocity modes of one particle (Fu, Guo, Wang & Jiang 2017):
/// the coefficients of the six polynomial modes of the quadratic 3x3 stencil
/// beyond APIC's constant (v) and affine (C) ones, in the order
/// xy, G(x), G(y), G(x) y, x G(y), G(x) G(y) (mpm::kPolyModes). x, y are the
/// node offsets in grid units and G the quadratic orthogonal to 1 and x under
/// the stencil weights; each mode is scaled to unit norm under the weights of
/// the particle's current stencil, so each coefficient is a velocity (m/s),
/// the mode's weighted RMS over the stencil, and the modes hold kinetic energy
/// (1/2) m sum_r |c_r|^2 wherever the particle is (mpm_kernels.h, [SECTION]
/// PolyPIC, says why). 12 floats, 48 bytes per particle.
struct PolyModes {
  Vec2 c[6] = {};
};

struct MpmParticles {
  std::vector<Vec2> x;   ///< position
  std::vector<Vec2> v;   ///< velocity
  std::vector<Mat2> C;   ///< affine velocity field (APIC) / velocity gradient
  std::vector<Mat2> F;   ///< deformation gradient (elastic part)
  std::vector<float> J;  ///< volume ratio, integrated for fluids only (solids: det F)
  std::vector<float>
      Jp;  ///< plastic volume ratio (snow; sand: the volume its plastic flow and tension cut-off added)
  std::vector<float> mass;
  std::vector<float> vol0;        ///< rest volume (area)
  std::vector<uint8_t> material;  ///< index into the material table
  std::vector<uint16_t> group;    ///< user group (body index by default)
  std::vector<uint32_t> id;       ///< stable 1-based ID
  std::vector<Vec2> fext;         ///< external force this step (SGF, grab); zero by default
  /// PolyPIC's higher velocity modes (48 B per particle; see PolyModes):
  /// empty unless the world steps with PolyPIC, then as long as x (MpmWorld
  /// allocates them zeroed when PolyPIC starts and frees them when it stops).
  std::vector<PolyModes> poly;
  std::vector<float> temp;    ///< temperature, deg C (sim/mpm/heat.h)
  std::vector<float> melt;    ///< melt fraction of the particle's initial ice, 0..1
  std::vector<float> vwater;  ///< virtual water on the particle (mass, part of `mass`)
  /// One above every ID this set has ever held: resampling gives new
  /// particles IDs from here and never reuses a retired one (an ID below
  /// next_id that is not in `id` has been retired by a merge).
  uint32_t next_id = 1;

  size_t size() const { return x.size(); }
  void clear() {
    resize(0);
    next_id = 1;
  }
  /// Raises next_id above every ID in `id` (after IDs were written directly).
  void note_ids() {
    for (uint32_t v : id)
      if (v >= next_id) next_id = v + 1u;
  }
  /// Calls f on every per-particle array (one place lists them: resize,
  /// reserve, the resampler's compaction and insertion go through it).
  /// PolyPIC's modes count only while they are allocated (48 bytes a
  /// particle the other transfers do not carry, nor copy into snapshots).
  template <class Fn>
  void for_each_array(Fn&& f) {
    each_array(*this, f);
  }
  template <class Fn>
  void for_each_array(Fn&& f) const {
    each_array(*this, f);
  }
  void resize(size_t n) {
    for_each_array([n](auto& a) { a.resize(n); });
  }
  /// Whether every per-particle array holds size() entries (PolyPIC's modes
  /// aside: the step rebuilds them when they are stale).
  bool consistent() const {
    bool ok = true;
    const size_t n = size();
    for_each_array([&](const auto& a) {
      if constexpr (!std::is_same_v<std::decay_t<decltype(a)>, std::vector<PolyModes>>)
        ok = ok && a.size() == n;
    });
    return ok;
  }
  void reserve(size_t n) {
    for_each_array([n](auto& a) { a.reserve(n); });
  }
  /// Appends one particle at rest state; returns its index.
  size_t add(Vec2 pos, Vec2 vel, float m, float vol, uint8_t mat, uint16_t grp,
             float temperature = 20.f) {
    size_t i = size();
    uint32_t new_id = i == 0 ? 1u : id.back() + 1u;
    if (new_id < next_id) new_id = next_id;
    next_id = new_id + 1u;
    x.push_back(pos);
    v.push_back(vel);
    C.push_back(Mat2{});
    F.push_back(Mat2::identity());
    J.push_back(1.f);
    Jp.push_back(1.f);
    mass.push_back(m);
    vol0.push_back(vol);
    material.push_back(mat);
    group.push_back(grp);
    id.push_back(new_id);
    fext.push_back(Vec2{});
    temp.push_back(temperature);
    melt.push_back(0.f);
    vwater.push_back(0.f);
    if (!poly.empty()) poly.push_back(PolyModes{});
    return i;
  }

 private:
  template <class Self, class Fn>
  static void each_array(Self& s, Fn& f) {
    f(s.x);
    f(s.v);
    f(s.C);
    f(s.F);
    f(s.J);
    f(s.Jp);
    f(s.mass);
    f(s.vol0);
    f(s.material);
    f(s.group);
    f(s.id);
    f(s.fext);
    f(s.temp);
    f(s.melt);
    f(s.vwater);
    if (!s.poly.empty()) f(s.poly);
  }
};

}  // namespace ps
