#include "render/cpu/particle_fields.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include "render/cpu/particle_scalars.h"

namespace ps {

void mpm_snapshot(MpmWorld& w, ParticleTable& t, bool with_stress) {
  w.sync();
  const MpmParticles& p = w.particles;
  const size_t n = p.size();
  t.id.resize(n);
  t.material.resize(n);
  t.group.resize(n);
  t.x.resize(n);
  t.y.resize(n);
  t.vx.resize(n);
  t.vy.resize(n);
  t.mass.resize(n);
  t.radius.resize(n);
  t.color.resize(n);
  if (t.extra_names.size() != kMpmColumnCount)
    t.extra_names = {"J", "Jp", "pressure", "von Mises", "plastic strain", "temperature"};
  t.extra.resize(kMpmColumnCount);
  for (auto& c : t.extra) c.resize(n);
  const auto rows = [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      const MaterialParams& m = w.materials[p.material[i]];
      t.id[i] = p.id[i];
      t.material[i] = p.material[i];
      t.group[i] = p.group[i];
      t.x[i] = p.x[i].x;
      t.y[i] = p.x[i].y;
      t.vx[i] = p.v[i].x;
      t.vy[i] = p.v[i].y;
      t.mass[i] = p.mass[i];
      t.radius[i] = 0.5f * std::sqrt(p.vol0[i]);
      t.color[i] = {m.color[0], m.color[1], m.color[2]};
      // The formulas the CUDA-GL interop kernel evaluates too (particle_scalars.h).
      t.extra[kColJ][i] = display_volume_ratio(m, p.F[i], p.J[i]);
      t.extra[kColJp][i] = p.Jp[i];
      t.extra[kColPlastic][i] = display_plastic_strain(m, p.Jp[i]);
      t.extra[kColTemperature][i] = i < p.temp.size() ? p.temp[i] : 0.f;
      float pressure = 0.f, mises = 0.f;
      if (with_stress) display_pressure_mises(particle_cauchy_stress(w, i), pressure, mises);
      t.extra[kColPressure][i] = pressure;
      t.extra[kColVonMises][i] = mises;
    }
  };
  // Two halves on two threads for large worlds: the window copies the table
  // every frame while the simulation's threads wait (rows are independent).
  if (n >= 20000 && std::thread::hardware_concurrency() > 1) {
    std::thread second([&] { rows(n / 2, n); });
    rows(0, n / 2);
    second.join();
  } else {
    rows(0, n);
  }
}

Mat2 particle_cauchy_stress(const MpmWorld& w, size_t i) {
  const MpmParticles& p = w.particles;
  if (i >= p.size()) return Mat2{};
  return display_cauchy_stress(w.materials[p.material[i]], p.F[i], p.J[i], p.Jp[i], p.C[i]);
}

int find_column(const ParticleTable& t, const std::string& name) {
  for (size_t k = 0; k < t.extra_names.size(); ++k)
    if (t.extra_names[k] == name) return static_cast<int>(k);
  return -1;
}

void value_range(const std::vector<float>& v, float& lo, float& hi) {
  bool any = false;
  lo = hi = 0.f;
  for (float x : v) {
    if (!std::isfinite(x)) continue;
    if (!any) {
      lo = hi = x;
      any = true;
      continue;
    }
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
}

}  // namespace ps

namespace ps {

void robust_range(const std::vector<float>& v, float tail, std::vector<float>& scratch, float& lo,
                  float& hi) {
  scratch.clear();
  for (float x : v)
    if (std::isfinite(x)) scratch.push_back(x);
  lo = hi = 0.f;
  if (scratch.empty()) return;
  const size_t n = scratch.size();
  tail = std::clamp(tail, 0.f, 0.5f);
  size_t k_lo = static_cast<size_t>(tail * static_cast<float>(n - 1));
  size_t k_hi = n - 1 - k_lo;
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k_lo),
                   scratch.end());
  lo = scratch[k_lo];
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k_hi),
                   scratch.end());
  hi = scratch[k_hi];
}

}  // namespace ps
