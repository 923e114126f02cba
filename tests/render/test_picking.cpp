// Picking (render/cpu/picking.*): the nearest particle whose disc holds the
// point, nothing outside; IDs come from the same table the runner dumps.
#include <catch2/catch.hpp>

#include "render/cpu/particle_fields.h"
#include "render/cpu/picking.h"
#include "sim/scene/simulation.h"

using namespace ps;

namespace {

ParticleTable make_table(std::initializer_list<std::array<float, 3>> xyr) {
  ParticleTable t;
  uint32_t id = 100;
  for (const auto& p : xyr) {
    t.id.push_back(id++);
    t.x.push_back(p[0]);
    t.y.push_back(p[1]);
    t.radius.push_back(p[2]);
  }
  return t;
}

}  // namespace

TEST_CASE("picking returns the nearest particle within its radius", "[render]") {
  ParticleTable t = make_table({{0.f, 0.f, 0.1f}, {0.15f, 0.f, 0.1f}, {1.f, 1.f, 0.05f}});
  // Overlapping discs: the nearer centre wins.
  CHECK(pick_particle(t, Vec2{0.05f, 0.f}) == 0);
  CHECK(pick_particle(t, Vec2{0.09f, 0.f}) == 1);
  CHECK(pick_particle(t, Vec2{0.15f, 0.09f}) == 1);
  CHECK(pick_particle(t, Vec2{1.04f, 1.f}) == 2);
  // Exactly at a centre.
  CHECK(pick_particle(t, Vec2{1.f, 1.f}) == 2);
}

TEST_CASE("picking returns nothing outside every disc - slack widens them", "[render]") {
  ParticleTable t = make_table({{0.f, 0.f, 0.1f}, {1.f, 1.f, 0.05f}});
  CHECK(pick_particle(t, Vec2{0.5f, 0.5f}) == -1);
  CHECK(pick_particle(t, Vec2{0.f, 0.11f}) == -1);
  CHECK(pick_particle(t, Vec2{1.06f, 1.f}) == -1);
  CHECK(pick_particle(t, Vec2{1.06f, 1.f}, 0.02f) == 1);
  CHECK(pick_particle(ParticleTable{}, Vec2{0.f, 0.f}) == -1);
}

TEST_CASE("picking ties go to the lower row", "[render]") {
  ParticleTable t = make_table({{-0.1f, 0.f, 0.2f}, {0.1f, 0.f, 0.2f}});
  CHECK(pick_particle(t, Vec2{0.f, 0.f}) == 0);
}

TEST_CASE("particles_within selects by centre distance, in row order", "[render]") {
  ParticleTable t = make_table(
      {{0.f, 0.f, 0.01f}, {0.2f, 0.f, 0.01f}, {0.05f, 0.05f, 0.01f}, {-0.1f, 0.f, 0.01f}});
  std::vector<uint32_t> rows{99};
  particles_within(t, Vec2{0.f, 0.f}, 0.1f, rows);
  CHECK(rows == std::vector<uint32_t>{0, 2, 3});
  particles_within(t, Vec2{5.f, 5.f}, 0.1f, rows);
  CHECK(rows.empty());
}

TEST_CASE("picking a scene's particle gives the ID the runner exports", "[render]") {
  auto sim = load_simulation("pic_vs_apic", {}, "cpu", 1);
  ParticleTable runner;
  sim->table(runner);  // what `sandbox run --dump-every` writes
  ParticleTable window;
  mpm_snapshot(*sim->mpm(), window, true);  // what the window draws and picks from
  REQUIRE(window.size() == runner.size());
  CHECK(window.id == runner.id);
  CHECK(window.x == runner.x);
  CHECK(window.radius == runner.radius);
  CHECK(window.extra[kColJ] == runner.extra[0]);
  for (size_t row : {size_t{0}, size_t{1234}, runner.size() - 1}) {
    Vec2 p{runner.x[row] + 0.3f * runner.radius[row], runner.y[row]};
    int64_t got = pick_particle(window, p);
    REQUIRE(got >= 0);
    CHECK(window.id[static_cast<size_t>(got)] == runner.id[row]);
  }
}
