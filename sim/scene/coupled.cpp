#include "sim/scene/coupled.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include "sim/core/error.h"
#include "sim/core/hash.h"
#include "sim/dem/dem_world.h"
#include "sim/io/json_read.h"
#include "sim/rigid/rigid_scene.h"

namespace ps {

namespace {

/// The grains' mean diameter (0 without grains): a DEM body's default depth,
/// and the layer a DEM world beside MPM matter stands for.
double mean_grain_diameter(const dem::DemWorld& w) {
  double sum = 0.0;
  for (double r : w.particles.radius) sum += 2.0 * r;
  return w.particles.size() ? sum / static_cast<double>(w.particles.size()) : 0.0;
}

}  // namespace

CoupledSimulation::CoupledSimulation(SceneInfo info, std::unique_ptr<Simulation> matter,
                                     std::unique_ptr<rigid::RigidWorld> rigid, Vec2 lo, Vec2 hi, double dt,
                                     int substeps)
    : info_(std::move(info)), matter_(std::move(matter)), rigid_(std::move(rigid)), lo_(lo), hi_(hi), dt_(dt),
      substeps_(substeps) {
  body_impulse_.assign(3 * rigid_->body_count(), 0.0);
  if (dem::DemWorld* w = matter_ ? matter_->dem() : nullptr) dem_scene_walls_ = w->walls.size();
}

void CoupledSimulation::add_grains(std::unique_ptr<Simulation> grains, Json doc) {
  grains_ = std::move(grains);
  grains_doc_ = std::move(doc);
  grain_scale_ = 1.0;
  dem_scene_walls_ = 0;
  if (dem::DemWorld* w = grains_ ? grains_->dem() : nullptr) {
    dem_scene_walls_ = w->walls.size();
    const double d = mean_grain_diameter(*w);
    if (d > 0.0) grain_scale_ = 1.0 / d;
  }
}

void CoupledSimulation::place_dem_walls(dem::DemWorld& w) {
  // Every part as a moving wall (the body's rigid velocity field about its
  // centre of mass), after the scene's walls.
  w.walls.resize(dem_scene_walls_ + parts_.size());
  for (size_t k = 0; k < parts_.size(); ++k) {
    const rigid::WorldPart& p = parts_[k];
    const rigid::BodyState st = rigid_->state(p.body);
    dem::DemWall& dw = w.walls[dem_scene_walls_ + k];
    dw = dem::DemWall{};
    if (p.shape == ColliderShape::Disk) {
      dw.type = dem::WallType::Disk;
      dw.a = p.v[0];
      dw.radius = p.radius;
    } else {
      dw.type = dem::WallType::Polygon;
      dw.count = p.count;
      for (int v = 0; v < p.count; ++v) dw.v[v] = p.v[v];
    }
    dw.c = st.com;
    dw.vel = st.velocity;
    dw.omega = st.omega;
    dw.material = rigid_->def(p.body).dem_material;
  }
  w.want_wall_reaction = true;
}

StepStatus CoupledSimulation::step_dem(dem::DemWorld& w) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  // 1. Every part as a moving wall, after the scene's walls.
  rigid_->world_parts(parts_);
  place_dem_walls(w);
  const Clock::time_point t1 = Clock::now();
  // 2. One DEM step: the reactions are the forces the grains put on each wall.
  StepStatus st = w.step(1);
  const Clock::time_point t2 = Clock::now();
  if (!st.ok) return st;
  // 3. Their impulses (force x dt, torque about the centre of mass x dt) to
  //    the bodies, then Box2D over the same dt.
  const std::vector<double>& J = w.wall_impulse();
  for (size_t k = 0; k < parts_.size() && 3 * (dem_scene_walls_ + k) + 2 < J.size(); ++k)
    give_impulse(parts_[k].body, &J[3 * (dem_scene_walls_ + k)]);
  finish_step(w.last_dt(), (t1 - t0) + (Clock::now() - t2));
  return st;
}

void CoupledSimulation::give_impulse(int body, const double* j) {
  rigid_->apply_impulse(body, dem::Vec2d{j[0], j[1]}, j[2]);
  for (int c = 0; c < 3; ++c) body_impulse_[3 * static_cast<size_t>(body) + c] += j[c];
}

void CoupledSimulation::finish_step(double dt, std::chrono::steady_clock::duration coupling_before_box2d) {
  const auto t0 = std::chrono::steady_clock::now();
  rigid_->step(dt);
  const double ms =
      std::chrono::duration<double, std::milli>(coupling_before_box2d + (std::chrono::steady_clock::now() - t0))
          .count();
  coupling_ms_ += (coupling_ms_ == 0.0 ? 1.0 : 0.05) * (ms - coupling_ms_);
}

StepStatus CoupledSimulation::step_mpm(MpmWorld& w, dem::DemWorld* grains) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  // 1. The bodies' parts at the substep's start (and as the grains' walls).
  rigid_->mpm_colliders(w.colliders);
  w.collider_impulse.assign(3 * w.colliders.size(), 0.0);
  if (grains) {
    rigid_->world_parts(parts_);
    place_dem_walls(*grains);
    grain_impulse_.assign(3 * parts_.size(), 0.0);
  }
  const Clock::time_point t1 = Clock::now();
  // 2. One MPM substep; the grid rule adds each part's impulse.
  StepStatus st = w.step(1);
  if (!st.ok) return st;
  // 2b. The grains catch up with the MPM clock in steps of their own dt,
  //     the parts held where they were (as in the MPM substep).
  if (grains) {
    const double until = w.time() - 1e-6 * w.last_dt();
    for (int n = 0; grains->time() < until; ++n) {
      if (n >= kMaxGrainSteps) {
        st.ok = false;
        st.step = w.step_count();
        st.message = "DEM grains: more than " + std::to_string(kMaxGrainSteps) +
                     " DEM steps in one MPM substep (the DEM time step is too small against the MPM one)";
        return st;
      }
      StepStatus g = grains->step(1);
      if (!g.ok) return g;
      const std::vector<double>& J = grains->wall_impulse();
      for (size_t q = 0; q < grain_impulse_.size() && 3 * dem_scene_walls_ + q < J.size(); ++q)
        grain_impulse_[q] += J[3 * dem_scene_walls_ + q];
    }
  }
  const Clock::time_point t2 = Clock::now();
  // 3. The matter's impulses to the bodies, then Box2D over the same dt.
  for (size_t k = 0; k < w.colliders.size(); ++k) give_impulse(w.colliders[k].body, &w.collider_impulse[3 * k]);
  for (size_t k = 0; k < parts_.size() && grains; ++k) {
    const double j[3] = {grain_scale_ * grain_impulse_[3 * k], grain_scale_ * grain_impulse_[3 * k + 1],
                         grain_scale_ * grain_impulse_[3 * k + 2]};
    give_impulse(parts_[k].body, j);
  }
  finish_step(w.last_dt(), (t1 - t0) + (Clock::now() - t2));
  return st;
}

StepStatus CoupledSimulation::step(int substeps) {
  body_impulse_.assign(3 * rigid_->body_count(), 0.0);  // bodies may have been added (the window's draw tool)
  const double t_start = time();
  struct Span {  // the simulated time this call covered, however it returns
    CoupledSimulation& c;
    double t0;
    ~Span() { c.last_step_seconds_ = c.time() - t0; }
  } span{*this, t_start};
  if (MpmWorld* w = matter_ ? matter_->mpm() : nullptr) {
    dem::DemWorld* grains = grains_ ? grains_->dem() : nullptr;
    for (int s = 0; s < substeps; ++s) {
      StepStatus st = step_mpm(*w, grains);
      if (!st.ok) return st;
    }
    return StepStatus{};
  }
  if (dem::DemWorld* w = matter_ ? matter_->dem() : nullptr) {
    for (int s = 0; s < substeps; ++s) {
      StepStatus st = step_dem(*w);
      if (!st.ok) return st;
    }
    return StepStatus{};
  }
  // Bodies alone.
  for (int s = 0; s < substeps; ++s) {
    rigid_->step(dt_);
    ++steps_;
  }
  return StepStatus{};
}

namespace {

/// d += g: counts, mass, momentum, angular momentum, energy; the larger speed.
void add_totals(Diagnostics& d, const Diagnostics& g) {
  d.count += g.count;
  d.mass += g.mass;
  d.momentum[0] += g.momentum[0];
  d.momentum[1] += g.momentum[1];
  d.angular_momentum += g.angular_momentum;
  d.kinetic_energy += g.kinetic_energy;
  d.max_speed = std::max(d.max_speed, g.max_speed);
}

}  // namespace

Diagnostics CoupledSimulation::grain_totals(bool with_hash) {
  Diagnostics g = with_hash ? grains_->diagnostics() : grains_->totals();
  g.mass *= grain_scale_;
  g.momentum[0] *= grain_scale_;
  g.momentum[1] *= grain_scale_;
  g.angular_momentum *= grain_scale_;
  g.kinetic_energy *= grain_scale_;
  return g;
}

Diagnostics CoupledSimulation::diagnostics() {
  Diagnostics d = totals_of(matter_ ? matter_->diagnostics() : Diagnostics{});
  Fnv1a h;
  h.add(&d.hash, sizeof d.hash);
  if (grains_) {
    const Diagnostics g = grain_totals(true);
    add_totals(d, g);
    h.add(&g.hash, sizeof g.hash);
  }
  const uint64_t rh = rigid_->hash();
  h.add(&rh, sizeof rh);
  d.hash = h.h;
  return d;
}

Diagnostics CoupledSimulation::totals() {
  Diagnostics d = totals_of(matter_ ? matter_->totals() : Diagnostics{});
  if (grains_) add_totals(d, grain_totals(false));
  return d;
}

Diagnostics CoupledSimulation::totals_of(Diagnostics d) const {
  // Totals of matter plus dynamic bodies (the conserved quantities of the
  // coupled system), about the same centre as the matter's.
  const rigid::RigidTotals t = rigid_->totals(dem::Vec2d{0.5 * (lo_.x + hi_.x), 0.5 * (lo_.y + hi_.y)});
  d.mass += t.mass;
  d.momentum[0] += t.momentum[0];
  d.momentum[1] += t.momentum[1];
  d.angular_momentum += t.angular_momentum;
  d.kinetic_energy += t.kinetic_energy;
  for (size_t i = 0; i < rigid_->body_count(); ++i) {
    const rigid::BodyState s = rigid_->state(static_cast<int>(i));
    d.max_speed = std::max(d.max_speed, static_cast<float>(std::hypot(s.velocity.x, s.velocity.y)));
  }
  return d;
}

void CoupledSimulation::table(ParticleTable& t) {
  if (!matter_) {
    t = ParticleTable{};
    return;
  }
  matter_->table(t);
  if (!grains_) return;
  // The grains' rows after the matter's, their materials after the matter's;
  // the columns are the union (NaN where a column does not apply).
  ParticleTable g;
  grains_->table(g);
  append_table_rows(t, g, static_cast<uint16_t>(matter_->material_names().size()));
}

std::vector<std::string> CoupledSimulation::material_names() const {
  std::vector<std::string> n = matter_ ? matter_->material_names() : std::vector<std::string>{};
  if (grains_)
    for (const std::string& s : grains_->material_names()) n.push_back(s);
  return n;
}

P4ParticleFrame CoupledSimulation::p4_particles() {
  // P4P is the DEM tool's format: with MPM and DEM together it holds the grains.
  if (grains_) return grains_->p4_particles();
  if (matter_) return matter_->p4_particles();
  P4ParticleFrame f;
  f.time = time();
  return f;
}

P4ContactFrame CoupledSimulation::p4_contacts() {
  if (grains_) return grains_->p4_contacts();
  if (matter_) return matter_->p4_contacts();
  P4ContactFrame f;
  f.time = time();
  return f;
}

std::string CoupledSimulation::take_notice() {
  std::string out = notices_;
  notices_.clear();
  for (Simulation* s : {matter_.get(), grains_.get()}) {
    if (!s) continue;
    const std::string m = s->take_notice();
    if (!m.empty()) out += (out.empty() ? "" : "\n") + m;
  }
  return out;
}

std::unique_ptr<Simulation> build_coupled(const Json& doc, const Json& rigid_doc, const std::string& path,
                                          const std::string& kind, std::unique_ptr<Simulation> matter,
                                          std::unique_ptr<Simulation> grains, const Json& grains_doc) {
  rigid::RigidSceneContext ctx;
  SceneInfo info;
  Vec2 lo, hi;
  double dt = 1.0 / 600.0;
  int substeps = 10;
  if (matter) {
    info = matter->info();
    matter->bounds(lo, hi);
    if (MpmWorld* w = matter->mpm()) {
      ctx.gravity = dem::Vec2d{w->solver.gravity.x, w->solver.gravity.y};
      ctx.default_depth = 1.0;  // MPM matter is per metre of depth
      if (dem::DemWorld* g = grains ? grains->dem() : nullptr) ctx.dem_materials = g->material_names;
    } else if (dem::DemWorld* w = matter->dem()) {
      ctx.gravity = w->solver.gravity;
      const double d = mean_grain_diameter(*w);
      ctx.default_depth = d > 0.0 ? d : 0.01;
      ctx.dem_materials = w->material_names;
    }
  } else {
    // A scene of bodies only: name, domain and a fixed-step clock.
    ObjReader r(doc, "");
    info.path = path;
    info.kind = kind;
    info.name = r.string("name", std::filesystem::path(path).stem().string());
    info.description = r.string("description", "");
    info.frames = r.integer("frames", 200, 1, 10000000);
    r.get("kind");
    r.get("rigid");
    {
      const Json* d = r.get("domain");
      if (!d) r.fail("domain", "required field is missing");
      ObjReader dr(*d, "domain");
      const Vec2 size = dr.vec2("size", Vec2{1.f, 1.f});
      if (!(size.x > 0.f && size.y > 0.f)) dr.fail("size", "both sides must be positive");
      lo = dr.vec2("origin", Vec2{0.f, 0.f});
      hi = lo + size;
      dr.finish();
    }
    if (const Json* s = r.get("solver")) {
      ObjReader sr(*s, "solver");
      dt = sr.number("dt", dt, 1e-7, 0.1);
      substeps = sr.integer("substeps", substeps, 1, 100000);
      const Vec2 g = sr.vec2("gravity", Vec2{0.f, -9.81f});
      ctx.gravity = dem::Vec2d{g.x, g.y};
      sr.finish();
    }
    r.finish();
  }
  ctx.domain_lo = dem::Vec2d{lo.x, lo.y};
  ctx.domain_hi = dem::Vec2d{hi.x, hi.y};
  std::unique_ptr<rigid::RigidWorld> rw = rigid::read_rigid_section(rigid_doc, ctx);
  auto sim = std::make_unique<CoupledSimulation>(info, std::move(matter), std::move(rw), lo, hi, dt, substeps);
  sim->set_rigid_doc(rigid_doc);
  if (grains) sim->add_grains(std::move(grains), grains_doc);
  return sim;
}

std::unique_ptr<CoupledSimulation> with_bodies(std::unique_ptr<Simulation> matter) {
  const SceneInfo info = matter->info();
  std::string notice = matter->take_notice();
  std::unique_ptr<Simulation> sim = build_coupled(Json::object(), Json::object(), info.path, info.kind, std::move(matter));
  auto* c = static_cast<CoupledSimulation*>(sim.release());
  c->post_notice(notice);
  return std::unique_ptr<CoupledSimulation>(c);
}

}  // namespace ps
