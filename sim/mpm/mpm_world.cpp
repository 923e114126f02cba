#include "sim/mpm/mpm_world.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include "sim/core/hash.h"
#include "sim/mpm/mpm_kernels.h"

namespace ps {

MpmWorld::MpmWorld() : backend_(make_backend("cpu", 0)) { backend_->bind(&particles); }
MpmWorld::~MpmWorld() = default;

void MpmWorld::set_backend(std::unique_ptr<MpmBackend> backend) {
  if (backend_) backend_->sync_to_host();
  backend_ = std::move(backend);
  backend_->bind(&particles);
  backend_->host_changed();
}

std::string MpmWorld::backend_name() const { return backend_->name(); }

StepRule MpmWorld::step_rule() const {
  StepRule r;
  r.adaptive = solver.adaptive_dt;
  r.dt_max = solver.dt;
  r.dt_min = solver.dt_min;
  r.cfl = solver.cfl;
  r.dx = grid.dx;
  for (const auto& m : materials) r.wave_speed = std::max(r.wave_speed, mpm::wave_speed(m));
  return r;
}

float MpmWorld::next_dt() const { return next_substep_dt(step_rule(), clock_.last_max_speed); }

void MpmWorld::host_changed() { backend_->host_changed(); }
void MpmWorld::sync() { backend_->sync_to_host(); }

StepStatus MpmWorld::step(int n) {
  if (!failure_.ok) return failure_;
  if (particles.size() == 0 || materials.empty()) {
    clock_.step += n;
    return StepStatus{};
  }
  SubstepInput in;
  in.grid = grid;
  in.solver = solver;
  in.materials = materials.data();
  in.material_count = static_cast<int>(materials.size());
  in.point = point_force;
  in.grab.index = grab_.index.data();
  in.grab.offset = grab_.offset.data();
  in.grab.count = static_cast<int>(grab_.index.size());
  in.grab.target = grab_.target;
  in.grab.stiffness = grab_stiffness;
  const StepRule rule = step_rule();
  SubstepResult r;
  if (force_hook) {
    // The hook edits host forces before each substep: one substep at a time.
    for (int s = 0; s < n && r.ok; ++s) {
      backend_->sync_to_host();
      in.use_fext = force_hook(clock_.step + 1, particles);
      if (in.use_fext) backend_->host_changed();
      r = backend_->advance(in, 1, rule, clock_);
    }
  } else {
    r = backend_->advance(in, n, rule, clock_);
  }
  if (r.ok) return StepStatus{};
  backend_->sync_to_host();
  StepStatus st;
  st.ok = false;
  st.step = clock_.step;
  st.index = r.bad_index;
  size_t i = static_cast<size_t>(r.bad_index);
  st.particle_id = i < particles.size() ? particles.id[i] : 0;
  char buf[256];
  Vec2 v = i < particles.size() ? particles.v[i] : Vec2{};
  float J = i < particles.size() ? det(particles.F[i]) * particles.J[i] : 0.f;
  std::snprintf(buf, sizeof buf,
                "numerical blow-up at step %lld: particle %u has velocity (%g, %g) "
                "(limit %g) and volume ratio %g; stepping stopped",
                static_cast<long long>(st.step), st.particle_id, v.x, v.y, solver.velocity_limit, J);
  st.message = buf;
  failure_ = st;
  return st;
}

const char* preset_name(Preset p) {
  switch (p) {
    case Preset::Translation: return "translation";
    case Preset::Rotation: return "rotation";
    case Preset::Shear: return "shear";
    case Preset::Dilation: return "dilation";
  }
  return "?";
}

void MpmWorld::apply_preset(Preset preset, float speed, const std::vector<uint32_t>* selection) {
  backend_->sync_to_host();
  const size_t n = particles.size();
  auto for_each = [&](auto&& fn) {
    if (selection) {
      for (uint32_t i : *selection)
        if (i < n) fn(i);
    } else {
      for (size_t i = 0; i < n; ++i) fn(i);
    }
  };
  double m = 0.0, cx = 0.0, cy = 0.0;
  for_each([&](size_t i) {
    m += particles.mass[i];
    cx += particles.mass[i] * particles.x[i].x;
    cy += particles.mass[i] * particles.x[i].y;
  });
  if (m <= 0.0) return;
  Vec2 c{static_cast<float>(cx / m), static_cast<float>(cy / m)};
  Mat2 grad{};
  switch (preset) {
    case Preset::Translation: grad = Mat2{}; break;
    case Preset::Rotation: grad = Mat2{0.f, speed, -speed, 0.f}; break;
    case Preset::Shear: grad = Mat2{0.f, 0.f, speed, 0.f}; break;
    case Preset::Dilation: grad = Mat2{0.f, 0.f, 0.f, speed}; break;
  }
  for_each([&](size_t i) {
    Vec2 d = particles.x[i] - c;
    Vec2 v{};
    switch (preset) {
      case Preset::Translation: v = Vec2{speed, 0.f}; break;
      case Preset::Rotation: v = Vec2{speed * d.y, -speed * d.x}; break;
      case Preset::Shear: v = Vec2{0.f, speed * d.x}; break;
      case Preset::Dilation: v = Vec2{0.f, speed * d.y}; break;
    }
    particles.v[i] = v;
    particles.C[i] = grad;
  });
  backend_->host_changed();
}

void MpmWorld::grab_begin(const std::vector<uint32_t>& indices, Vec2 target) {
  backend_->sync_to_host();
  grab_.begin(indices, particles.x, target);
}

void MpmWorld::grab_end() { grab_.end(); }

Diagnostics MpmWorld::diagnostics() {
  backend_->sync_to_host();
  Vec2 centre{grid.origin.x + 0.5f * grid.width(), grid.origin.y + 0.5f * grid.height()};
  return compute_diagnostics(particles, centre);
}

Diagnostics compute_diagnostics(const MpmParticles& p, Vec2 centre) {
  Diagnostics d;
  d.count = p.size();
  for (size_t i = 0; i < p.size(); ++i) {
    double m = p.mass[i], vx = p.v[i].x, vy = p.v[i].y;
    double rx = static_cast<double>(p.x[i].x) - centre.x, ry = static_cast<double>(p.x[i].y) - centre.y;
    d.mass += m;
    d.momentum[0] += m * vx;
    d.momentum[1] += m * vy;
    d.angular_momentum += m * (rx * vy - ry * vx);
    d.kinetic_energy += 0.5 * m * (vx * vx + vy * vy);
    d.max_speed = std::max(d.max_speed, length(p.v[i]));
  }
  d.hash = state_hash(p);
  return d;
}

uint64_t state_hash(const MpmParticles& p) {
  Fnv1a h;
  h.add_array(p.x.data(), p.size());
  h.add_array(p.v.data(), p.size());
  h.add_array(p.C.data(), p.size());
  h.add_array(p.F.data(), p.size());
  h.add_array(p.J.data(), p.size());
  h.add_array(p.Jp.data(), p.size());
  return h.h;
}

double elastic_energy(const MpmParticles& p, const std::vector<MaterialParams>& materials) {
  double e = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    const MaterialParams& m = materials[p.material[i]];
    float mu, la;
    lame(m, mu, la);
    double psi = 0.0;
    switch (m.type) {
      case MaterialType::Tracer: break;
      case MaterialType::Fluid: {
        const double dj = static_cast<double>(p.J[i]) - 1.0;
        psi = 0.5 * m.bulk_modulus * dj * dj;
        break;
      }
      case MaterialType::Sand: {
        Mat2 U, V;
        Vec2 sig;
        svd2(p.F[i], U, sig, V);
        const double e1 = std::log(std::max(std::fabs(sig.x), 1e-6f)), e2 = std::log(std::max(std::fabs(sig.y), 1e-6f));
        psi = mu * (e1 * e1 + e2 * e2) + 0.5 * la * (e1 + e2) * (e1 + e2);
        break;
      }
      default: {
        Mat2 U, V;
        Vec2 sig;
        svd2(p.F[i], U, sig, V);
        double h = 1.0;
        if (m.type == MaterialType::Snow)
          h = std::min(std::max(std::exp(m.hardening * (1.0 - p.Jp[i])), 0.1), 5.0);
        const double s1 = sig.x - 1.0, s2 = sig.y - 1.0, dj = static_cast<double>(sig.x) * sig.y - 1.0;
        psi = h * (mu * (s1 * s1 + s2 * s2) + 0.5 * la * dj * dj);
        break;
      }
    }
    e += p.vol0[i] * psi;
  }
  return e;
}

}  // namespace ps
