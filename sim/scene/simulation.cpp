#include "sim/scene/simulation.h"

#include <cmath>

namespace ps {

void MpmSimulation::table(ParticleTable& t) {
  MpmWorld& w = *scene_.world;
  w.sync();
  const MpmParticles& p = w.particles;
  const size_t n = p.size();
  t.id.assign(p.id.begin(), p.id.end());
  t.material.resize(n);
  t.group.assign(p.group.begin(), p.group.end());
  t.x.resize(n); t.y.resize(n); t.vx.resize(n); t.vy.resize(n); t.mass.resize(n); t.radius.resize(n);
  t.color.resize(n);
  t.extra_names = {"J", "Jp"};
  t.extra.assign(2, std::vector<float>(n));
  for (size_t i = 0; i < n; ++i) {
    t.material[i] = p.material[i];
    t.x[i] = p.x[i].x; t.y[i] = p.x[i].y;
    t.vx[i] = p.v[i].x; t.vy[i] = p.v[i].y;
    t.mass[i] = p.mass[i];
    t.radius[i] = 0.5f * std::sqrt(p.vol0[i]);
    const float* c = w.materials[p.material[i]].color;
    t.color[i] = {c[0], c[1], c[2]};
    // Fluids track J directly; solids through det F.
    t.extra[0][i] = w.materials[p.material[i]].type == MaterialType::Fluid ? p.J[i] : det(p.F[i]);
    t.extra[1][i] = p.Jp[i];
  }
}

void MpmSimulation::bounds(Vec2& lo, Vec2& hi) const {
  const GridSpec& g = scene_.world->grid;
  lo = g.origin;
  hi = g.origin + Vec2{g.width(), g.height()};
}

std::unique_ptr<Simulation> load_simulation(const std::string& name_or_path,
                                            const std::vector<std::string>& overrides,
                                            const std::string& backend, int threads) {
  std::string path = resolve_scene_path(name_or_path);
  Json doc = read_scene_document(path, overrides);
  std::string kind = scene_kind(doc);
  if (kind == "mpm") {
    MpmScene scene = build_mpm_scene(doc, path);
    scene.world->set_backend(make_backend(backend, threads));
    return std::make_unique<MpmSimulation>(std::move(scene));
  }
  const Json* k = doc.find("kind");
  throw InputError(k ? k->loc() : doc.loc(), "kind", "unknown scene kind '" + kind + "' (expected mpm or dem)");
}

}  // namespace ps
