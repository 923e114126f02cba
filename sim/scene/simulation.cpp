#include "sim/scene/simulation.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include "sim/core/progress.h"
#include "sim/dem/dem_world.h"
#include "sim/io/dem_p4.h"
#include "sim/io/json_read.h"
#include "sim/scene/auto_backend.h"
#include "sim/scene/coupled.h"
#include "sim/scene/dem_scene.h"
#include "sim/scene/dem_sgf.h"
#include "sim/scene/mpm_sgf.h"

namespace ps {

// [SECTION] What callers ask of any simulation ----------------------------------------

const StepStatus* Simulation::halted() {
  if (MpmWorld* w = mpm(); w && w->halted()) return &w->failure();
  if (dem::DemWorld* d = dem(); d && d->halted()) return &d->failure();
  return nullptr;
}

const char* Simulation::halt_advice() {
  if (MpmWorld* w = mpm(); w && w->halted())
    return "Try a smaller dt, more substeps or adaptive dt, then reset.";
  return "Try a smaller dt (or auto dt with a smaller safety factor), then reset.";
}

bool Simulation::fell_back_to_cpu() {
  return (mpm() && mpm()->fallback().happened) || (dem() && dem()->fallback().happened);
}

bool Simulation::has_device_view() {
  return (mpm() && mpm()->backend().device_view()) || (dem() && dem()->backend().device_view());
}

void Simulation::set_point_force(const PointForce& f) {
  if (MpmWorld* w = mpm()) w->point_force = f;
  if (dem::DemWorld* d = dem()) d->point_force = f;
}

P4Precision Simulation::p4_precision() { return dem() ? P4Precision::Double : P4Precision::Float; }

bool Simulation::step_phases(BackendStats& out) {
  MpmWorld* w = mpm();
  if (!w) return false;
  out = w->backend_stats();
  return true;
}

std::string Simulation::scheme_note() {
  const MpmWorld* w = mpm();
  if (!w) return "";
  return std::string(", ") + transfer_name(w->solver.transfer) + " transfer, " +
         kernel_name(w->solver.kernel) + " kernel";
}

void MpmSimulation::table(ParticleTable& t) {
  MpmWorld& w = *scene_.world;
  w.sync();
  const MpmParticles& p = w.particles;
  const size_t n = p.size();
  t.id.assign(p.id.begin(), p.id.end());
  t.material.resize(n);
  t.group.assign(p.group.begin(), p.group.end());
  t.x.resize(n);
  t.y.resize(n);
  t.vx.resize(n);
  t.vy.resize(n);
  t.mass.resize(n);
  t.radius.resize(n);
  t.color.resize(n);
  // Heat scenes add temperature (deg C), melt fraction and virtual water (mass).
  const bool heat = w.heat.enabled;
  const size_t ncol = heat ? 5 : 2;
  if (t.extra_names.size() != ncol || t.extra_names[0] != "J") {
    t.extra_names = {"J", "Jp"};
    if (heat) t.extra_names.insert(t.extra_names.end(), {"T", "melt", "vwater"});
  }
  t.extra.resize(ncol);
  for (auto& col : t.extra) col.resize(n);  // reuses the caller's buffers
  for (size_t i = 0; i < n; ++i) {
    t.material[i] = p.material[i];
    t.x[i] = p.x[i].x;
    t.y[i] = p.x[i].y;
    t.vx[i] = p.v[i].x;
    t.vy[i] = p.v[i].y;
    t.mass[i] = p.mass[i];
    t.radius[i] = 0.5f * std::sqrt(p.vol0[i]);
    const float* c = w.materials[p.material[i]].color;
    t.color[i] = {c[0], c[1], c[2]};
    // Fluids track J directly; solids through det F.
    t.extra[0][i] = w.materials[p.material[i]].type == MaterialType::Fluid ? p.J[i] : det(p.F[i]);
    t.extra[1][i] = p.Jp[i];
    if (heat) {
      t.extra[2][i] = p.temp[i];
      t.extra[3][i] = p.melt[i];
      t.extra[4][i] = p.vwater[i];
    }
  }
}

void MpmSimulation::set_force_list(const SgfList& list) {
  MpmWorld& w = *scene_.world;
  if (list.files.empty()) {
    w.force_hook = nullptr;
    return;
  }
  MpmWorld* wp = &w;
  w.force_hook = make_mpm_force_hook(
      list, [wp](int64_t step, const std::vector<uint32_t>& ids, const MpmParticles&) {
        wp->post_notice(
            sgf_missing_notice(step, ids, [wp](uint32_t id) { return wp->id_retired(id); }));
      });
}

P4ParticleFrame MpmSimulation::p4_particles() {
  scene_.world->sync();
  return p4_from_mpm(scene_.world->particles, scene_.world->time());
}

P4ContactFrame MpmSimulation::p4_contacts() {
  P4ContactFrame f;
  f.time = scene_.world->time();
  return f;
}

namespace {

struct MpmSimState final : SimState {
  MpmWorldState w;
  size_t bytes() const override { return w.bytes(); }
};

struct DemSimState final : SimState {
  dem::DemWorld::State w;
  size_t bytes() const override { return w.bytes(); }
};

template <class T>
const T& state_cast(const SimState& s) {
  const T* t = dynamic_cast<const T*>(&s);
  if (!t) throw std::invalid_argument("load_state: a state saved by another kind of simulation");
  return *t;
}

}  // namespace

std::unique_ptr<SimState> MpmSimulation::save_state() {
  auto s = std::make_unique<MpmSimState>();
  scene_.world->save_state(s->w);
  s->step = scene_.world->step_count();
  return s;
}

void MpmSimulation::load_state(const SimState& s) {
  scene_.world->load_state(state_cast<MpmSimState>(s).w);
}

void MpmSimulation::bounds(Vec2& lo, Vec2& hi) const {
  const GridSpec& g = scene_.world->grid;
  lo = g.origin;
  hi = g.origin + Vec2{g.width(), g.height()};
}

namespace {

Diagnostics from_dem(const dem::DemDiagnostics& d) {
  Diagnostics o;
  o.count = d.count;
  o.mass = d.mass;
  o.momentum[0] = d.momentum[0];
  o.momentum[1] = d.momentum[1];
  o.angular_momentum = d.angular_momentum;
  o.kinetic_energy = d.kinetic_energy;
  o.max_speed = static_cast<float>(d.max_speed);
  o.hash = d.hash;
  return o;
}

/// A DEM scene behind the Simulation interface.
class DemSimulation final : public Simulation {
 public:
  DemSimulation(SceneInfo info, std::unique_ptr<dem::DemWorld> world)
      : info_(std::move(info)), w_(std::move(world)) {}
  const SceneInfo& info() const override { return info_; }
  StepStatus step(int substeps) override { return w_->step(substeps); }
  int substeps_per_frame() const override { return w_->solver.substeps; }
  int64_t step_count() const override { return w_->step_count(); }
  double time() const override { return w_->time(); }
  std::string backend_name() const override { return w_->backend_name(); }
  std::vector<std::string> material_names() const override { return w_->material_names; }
  dem::DemWorld* dem() override { return w_.get(); }
  size_t last_interactions() const override {
    const dem::DemStepResult& r = w_->last_result();
    return r.contacts + r.wall_contacts + w_->intact_bonds();
  }

  Diagnostics diagnostics() override { return from_dem(w_->diagnostics()); }
  /// The plots' sums: on the device with the CUDA backend (DemWorld::totals).
  Diagnostics totals() override { return from_dem(w_->totals()); }

  void table(ParticleTable& t) override {
    w_->sync();
    const dem::DemParticles& p = w_->particles;
    const size_t n = p.size();
    t.id.assign(p.id.begin(), p.id.end());
    t.group.assign(p.group.begin(), p.group.end());
    t.material.resize(n);
    t.x.resize(n);
    t.y.resize(n);
    t.vx.resize(n);
    t.vy.resize(n);
    t.mass.resize(n);
    t.radius.resize(n);
    t.color.resize(n);
    if (t.extra_names.size() != 2 || t.extra_names[0] != "omega")
      t.extra_names = {"omega", "theta"};
    t.extra.resize(2);
    for (auto& col : t.extra) col.resize(n);  // reuses the caller's buffers
    for (size_t i = 0; i < n; ++i) {
      t.material[i] = p.material[i];
      t.x[i] = static_cast<float>(p.x[i].x);
      t.y[i] = static_cast<float>(p.x[i].y);
      t.vx[i] = static_cast<float>(p.v[i].x);
      t.vy[i] = static_cast<float>(p.v[i].y);
      t.mass[i] = static_cast<float>(p.mass[i]);
      t.radius[i] = static_cast<float>(p.radius[i]);
      const float* c = w_->materials[p.material[i]].color;
      t.color[i] = {c[0], c[1], c[2]};
      t.extra[0][i] = static_cast<float>(p.omega[i]);
      t.extra[1][i] = static_cast<float>(p.theta[i]);
    }
  }

  void bounds(Vec2& lo, Vec2& hi) const override {
    lo = Vec2{static_cast<float>(w_->domain_min.x), static_cast<float>(w_->domain_min.y)};
    hi = Vec2{static_cast<float>(w_->domain_max.x), static_cast<float>(w_->domain_max.y)};
  }

  void set_force_list(const SgfList& list) override {
    if (list.files.empty()) {
      w_->force_hook = nullptr;
      return;
    }
    // SGF forces reach the DEM in double, exactly as read (0.3 N is 0.3 N).
    w_->force_hook = make_dem_force_hook(list);
  }

  P4ParticleFrame p4_particles() override {
    w_->sync();
    return dem::p4_from_dem(w_->particles, w_->time());
  }
  std::string take_notice() override { return w_->take_notice(); }
  std::string rewind_unsupported() const override { return ""; }
  std::unique_ptr<SimState> save_state() override {
    auto s = std::make_unique<DemSimState>();
    w_->save_state(s->w);
    s->step = w_->step_count();
    return s;
  }
  void load_state(const SimState& s) override { w_->load_state(state_cast<DemSimState>(s).w); }
  std::string controls() const override { return w_->controls(); }
  void set_controls(const std::string& image) override { w_->set_controls(image); }
  P4ContactFrame p4_contacts() override {
    // Particle pairs only: the original format has no wall contacts.
    std::vector<dem::ContactRecord> rec;
    w_->contacts(rec, false);
    return dem::p4_from_contacts(rec, w_->time());
  }

 private:
  SceneInfo info_;
  std::unique_ptr<dem::DemWorld> w_;
};

}  // namespace

std::unique_ptr<Simulation> make_dem_simulation(SceneInfo info,
                                                std::unique_ptr<dem::DemWorld> world) {
  return std::make_unique<DemSimulation>(std::move(info), std::move(world));
}

std::unique_ptr<Simulation> load_simulation(const std::string& name_or_path,
                                            const std::vector<std::string>& overrides,
                                            const std::string& backend, int threads) {
  const std::string path = resolve_scene_path(name_or_path);
  return simulation_from_document(read_scene_document(path, overrides), path, backend, threads);
}

std::unique_ptr<Simulation> load_refined(const std::string& name,
                                         const std::vector<std::string>& sets, int k,
                                         const std::string& backend, int threads) {
  if (k <= 1) return load_simulation(name, sets, backend, threads);
  std::string path = resolve_scene_path(name);
  Json doc = read_scene_document(path, sets);
  doc.erase("sgf");
  auto scale = [&](Json* j, double f) {
    if (!j || !j->is_number()) return;
    const SourceLoc at = j->loc();  // errors about the scaled value still point into the file
    *j = Json::number(j->as_number() * f);
    j->set_loc(at);
  };
  const std::string kind = scene_kind(doc);
  if (Json* solver = doc.find("solver"); solver && solver->is_object())
    scale(solver->find("dt"), 1.0 / k);
  if (Json* bodies = doc.find("bodies"); bodies && bodies->is_array())
    for (size_t i = 0; i < bodies->size(); ++i) {
      if (!bodies->at(i).is_object()) continue;
      scale(bodies->at(i).find(kind == "dem" ? "radius" : "spacing"), 1.0 / k);
    }
  if (kind == "mpm") {
    Json* domain = doc.find("domain");
    if (domain && domain->is_object()) {
      if (Json* g = domain->find("grid"))
        scale(g, k);
      else
        domain->set("grid", Json::number(128.0 * k));
    }
  }
  return build_simulation(doc, path, kind, backend, threads);
}

std::unique_ptr<Simulation> simulation_from_document(Json doc, const std::string& path,
                                                     const std::string& backend, int threads) {
  std::string kind = scene_kind(doc);
  // "sgf": a folder of SGF force lists shipped with the scene (relative to it),
  // applied in headless runs and in the window alike.
  SgfList sgf;
  if (const Json* s = doc.find("sgf")) {
    if (!s->is_string())
      throw InputError(s->loc(), "sgf", "expected a folder name, got " + describe(*s));
    std::filesystem::path dir = s->as_string();
    if (dir.is_relative()) dir = std::filesystem::path(path).parent_path() / dir;
    if (!std::filesystem::is_directory(dir))
      throw InputError(s->loc(), "sgf", "no such folder '" + dir.string() + "'");
    SgfLoadResult r = load_sgf_folder(dir.string());
    if (!r.diagnostics.empty()) throw r.diagnostics.front();
    sgf = std::move(r.list);
    doc.erase("sgf");
  }
  std::unique_ptr<Simulation> sim = build_simulation(doc, path, kind, backend, threads);
  if (!sgf.files.empty()) sim->set_force_list(sgf);
  return sim;
}

namespace {

/// DEM grains beside MPM matter: the scene's "dem" section is a DEM scene
/// document without "kind" and without the domain's corners (the MPM
/// domain's; its "domain" may say "walls" and "wall_material", all four sides
/// by default). Errors are located at "dem.<field>".
std::unique_ptr<Simulation> build_grains(const Json& section, Vec2 lo, Vec2 hi,
                                         const std::string& path, const std::string& backend,
                                         int threads) {
  if (!section.is_object())
    throw InputError(section.loc(), "dem", "expected an object {...}, got " + describe(section));
  if (const Json* k = section.find("kind"))
    throw InputError(k->loc(), "dem.kind", "not allowed: the \"dem\" section is always DEM grains");
  Json g = section;
  g.set("kind", Json::string("dem")).set_loc(section.loc());
  Json dom = Json::object();
  dom.set_loc(section.loc());
  if (const Json* d = section.find("domain")) {
    if (!d->is_object())
      throw InputError(d->loc(), "dem.domain", "expected an object {...}, got " + describe(*d));
    for (const char* corner : {"min", "max"})
      if (const Json* c = d->find(corner))
        throw InputError(
            c->loc(), std::string("dem.domain.") + corner,
            "not allowed: the grains share the MPM domain (set its \"domain\" instead)");
    dom = *d;
  } else {
    dom.set("walls", Json::boolean(true));
  }
  auto corner = [&](Vec2 v) {
    Json a = Json::array();
    a.push_back(Json::number(v.x));
    a.push_back(Json::number(v.y));
    a.set_loc(dom.loc());
    return a;
  };
  dom.set("min", corner(lo));
  dom.set("max", corner(hi));
  g.set("domain", dom);
  try {
    return build_simulation(g, path, "dem", backend, threads);
  } catch (const InputError& e) {
    throw InputError(e.loc(), e.field().empty() ? "dem" : "dem." + e.field(), e.message());
  }
}

}  // namespace

std::unique_ptr<Simulation> build_simulation(const Json& doc, const std::string& path,
                                             const std::string& kind,
                                             const std::string& backend_arg, int threads) {
  // Rigid bodies: the matter is built from the document without them, on
  // the backend asked for, then composed with the bodies (sim/scene/coupled.h):
  // Box2D steps on the host; the CUDA MPM stepper's collider kernels and the
  // CUDA DEM stepper's moving walls take the parts in and give the impulses
  // back once per substep (tests/cuda, "CUDA coupled scenes").
  // "rigid": null is no rigid section (`--set rigid=null`: the same scene without its bodies).
  if (const Json* r = doc.find("rigid"); r && r->is_null()) {
    Json rest = doc;
    rest.erase("rigid");
    return build_simulation(rest, path, kind, backend_arg, threads);
  }
  const Json* grains_section = doc.find("dem");
  if (grains_section && kind != "mpm")
    throw InputError(
        grains_section->loc(), "dem",
        "a \"dem\" section adds DEM grains to an MPM scene (this scene is of kind " + kind + ")");
  if (const Json* rigid = doc.find("rigid"); rigid || kind == "rigid" || grains_section) {
    if (!rigid && kind == "rigid")
      throw InputError(doc.loc(), "rigid", "a scene of kind rigid needs a \"rigid\" section");
    const Json rigid_doc = rigid ? *rigid : Json::object();
    std::unique_ptr<Simulation> matter, grains;
    Json grains_doc;
    if (kind != "rigid") {
      Json rest = doc;
      rest.erase("rigid");
      rest.erase("dem");
      matter = build_simulation(rest, path, kind, backend_arg, threads);
    }
    if (grains_section) {
      grains_doc = *grains_section;
      Vec2 lo, hi;
      matter->bounds(lo, hi);
      grains = build_grains(grains_doc, lo, hi, path, backend_arg, threads);
    }
    return build_coupled(doc, rigid_doc, path, kind, std::move(matter), std::move(grains),
                         grains_doc);
  }
  // "auto": CUDA only on a device that passed its self-check (run once per
  // device and build, after the scene has loaded); the reason for the CPU,
  // if any, becomes a notice.
  std::string backend = backend_arg, notice;
  auto resolve = [&] {
    AutoChoice a =
        resolve_backend(backend);  // the installed rule: the self-check gate, a layer above
    backend = a.kind;
    notice = a.notice;
  };
  if (kind == "mpm") {
    MpmScene scene = build_mpm_scene(doc, path);
    progress("starting the stepper",
             0.9);  // sim/core/progress.h: the backend's buffers (a device's upload)
    resolve();
    scene.world->fallback_threads = threads;
    scene.world->set_backend(make_backend(backend, threads));
    scene.world->post_notice(notice);
    return std::make_unique<MpmSimulation>(std::move(scene));
  }
  if (kind == "dem") {
    SceneInfo info;
    info.path = path;
    info.kind = kind;
    info.name = std::filesystem::path(path).stem().string();
    if (const Json* n = doc.find("name"); n && n->is_string()) info.name = n->as_string();
    if (const Json* d = doc.find("description"); d && d->is_string())
      info.description = d->as_string();
    if (const Json* f = doc.find("frames"))
      info.frames = static_cast<int>(json_number(*f, "frames", 1, 1e7));
    auto world = std::make_unique<dem::DemWorld>();
    dem::load_dem_scene(doc, std::filesystem::path(path).parent_path().string(), *world);
    progress("starting the stepper", 0.9);
    resolve();
    world->fallback_threads = threads;
    world->set_backend(dem::make_dem_backend(backend, threads));
    world->post_notice(notice);
    return make_dem_simulation(std::move(info), std::move(world));
  }
  const Json* k = doc.find("kind");
  throw InputError(k ? k->loc() : doc.loc(), "kind",
                   "unknown scene kind '" + kind + "' (expected mpm, dem or rigid)");
}

}  // namespace ps
