// The window's heat view without a window (render/cpu/heat_view.*, the heat
// lamp tool in render/cpu/tools.*, the snapshot's temperature column).
#include <catch2/catch.hpp>

#include <cmath>

#include "render/cpu/heat_view.h"
#include "render/cpu/particle_fields.h"
#include "render/cpu/tools.h"
#include "sim/scene/simulation.h"

using namespace ps;

namespace {

/// ice (melts into water), water, sand (takes no part).
std::vector<MaterialParams> three_materials() {
  std::vector<MaterialParams> m(3);
  m[0].type = MaterialType::Jelly;
  m[0].latent_heat = 334000.f;
  m[0].melts_into = 1;
  m[1].type = MaterialType::Fluid;
  m[2].type = MaterialType::Sand;
  return m;
}

}  // namespace

TEST_CASE("melt roles: melting material, its melt target, the rest", "[render][heat]") {
  std::vector<MaterialParams> m = three_materials();
  std::vector<MeltRole> r;
  melt_roles(m, r);
  REQUIRE(r.size() == 3);
  CHECK(r[0] == MeltRole::Melts);
  CHECK(r[1] == MeltRole::Target);
  CHECK(r[2] == MeltRole::Inert);
  // Without latent heat ice does not melt, and water is nobody's target.
  m[0].latent_heat = 0.f;
  melt_roles(m, r);
  CHECK(r[0] == MeltRole::Inert);
  CHECK(r[1] == MeltRole::Inert);

  CHECK(melt_display_value(MeltRole::Melts, 0.25f) == 0.25f);
  CHECK(melt_display_value(MeltRole::Melts, 1.5f) == 1.f);
  CHECK(melt_display_value(MeltRole::Melts, -0.1f) == 0.f);
  CHECK(melt_display_value(MeltRole::Melts, std::nanf("")) == 0.f);
  CHECK(melt_display_value(MeltRole::Target, 0.f) == 1.f);
  CHECK(std::isnan(melt_display_value(MeltRole::Inert, 0.5f)));
  CHECK(melt_rgb(Colormap::IceWater, std::nanf("")) == kNoMeltGrey);
  CHECK(melt_rgb(Colormap::IceWater, 1.f) == colormap_rgb(Colormap::IceWater, 1.f));
}

TEST_CASE("the ice-water map goes from pale ice to dark water", "[render][heat]") {
  auto lum = [](const std::array<float, 3>& c) {
    return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
  };
  float last = 2.f;
  for (int k = 0; k <= 20; ++k) {
    const auto c = colormap_rgb(Colormap::IceWater, k / 20.f);
    CHECK(c[2] >= c[0]);  // blue throughout
    CHECK(lum(c) < last);
    last = lum(c);
  }
  // The grey of non-melting particles is no colour of the map.
  for (int k = 0; k <= 20; ++k) CHECK(colormap_rgb(Colormap::IceWater, k / 20.f) != kNoMeltGrey);
}

TEST_CASE("heat particle colours: temperature over its range, melt fraction with grey",
          "[render][heat]") {
  const std::vector<MaterialParams> m = three_materials();
  MpmParticles p;
  p.add(Vec2{0.1f, 0.1f}, Vec2{}, 1.f, 1.f, 0, 0, -5.f);  // ice, cold
  p.add(Vec2{0.2f, 0.1f}, Vec2{}, 1.f, 1.f, 1, 0, 20.f);  // water
  p.add(Vec2{0.3f, 0.1f}, Vec2{}, 1.f, 1.f, 2, 0, 60.f);  // sand, hot
  p.melt[0] = 0.5f;
  float lo, hi;
  temperature_range(p, lo, hi);
  CHECK(lo == -5.f);
  CHECK(hi == 60.f);

  std::vector<std::array<float, 3>> c;
  heat_particle_rgb(p, m, HeatColor::Temperature, Colormap::Coolwarm, 0.f, 0.f,
                    c);  // auto: min / max
  REQUIRE(c.size() == 3);
  CHECK(c[0] == colormap_rgb(Colormap::Coolwarm, 0.f));
  CHECK(c[2] == colormap_rgb(Colormap::Coolwarm, 1.f));
  heat_particle_rgb(p, m, HeatColor::Temperature, Colormap::Coolwarm, -10.f, 30.f,
                    c);  // fixed, clamped
  CHECK(c[1] == temperature_rgb(Colormap::Coolwarm, 20.f, -10.f, 30.f));
  CHECK(c[2] == colormap_rgb(Colormap::Coolwarm, 1.f));

  heat_particle_rgb(p, m, HeatColor::MeltFraction, Colormap::IceWater, 0.f, 0.f, c);
  CHECK(c[0] == colormap_rgb(Colormap::IceWater, 0.5f));
  CHECK(c[1] == colormap_rgb(Colormap::IceWater, 1.f));
  CHECK(c[2] == kNoMeltGrey);
}

TEST_CASE("the heat ledger's balance and drift", "[render][heat]") {
  HeatLedger L;
  HeatTotals t;
  t.sensible = -100.0;
  t.latent = 30.0;
  HeatBalance b = heat_balance(L, t);  // no pass yet: initial = now
  CHECK(b.initial == Approx(-70.0));
  CHECK(b.drift == 0.0);
  CHECK(b.relative == 0.0);
  L.have_initial = true;
  L.initial_heat = -200.0;
  L.walls = 100.0;
  L.air = 20.0;
  L.lamps = 10.0;
  b = heat_balance(L, t);
  CHECK(b.inflow == Approx(130.0));
  CHECK(b.drift == Approx(0.0).margin(1e-12));
  t.latent = 31.0;  // one joule appeared from nowhere
  b = heat_balance(L, t);
  CHECK(b.drift == Approx(1.0));
  CHECK(b.relative == Approx(1.0 / 131.0));
}

TEST_CASE("the heat tool gives one lamp while pressed, none otherwise", "[render][heat]") {
  ToolSettings s;
  s.tool = Tool::Heat;
  s.radius = 0.04f;
  s.heat_power = -300.f;
  std::vector<HeatLamp> lamps;
  tool_heat_lamps(s, Vec2{0.3f, 0.2f}, true, lamps);
  REQUIRE(lamps.size() == 1);
  CHECK(lamps[0].pos == Vec2{0.3f, 0.2f});
  CHECK(lamps[0].radius == 0.04f);
  CHECK(lamps[0].power == -300.f);  // cooling
  tool_heat_lamps(s, Vec2{0.3f, 0.2f}, false, lamps);
  CHECK(lamps.empty());
  s.tool = Tool::Grab;
  tool_heat_lamps(s, Vec2{0.3f, 0.2f}, true, lamps);
  CHECK(lamps.empty());
  s.tool = Tool::Heat;
  s.heat_power = 1e9f;  // clamped to the slider's range
  tool_heat_lamps(s, Vec2{0.3f, 0.2f}, true, lamps);
  REQUIRE(lamps.size() == 1);
  CHECK(lamps[0].power == kHeatPowerMax);
  CHECK(std::string(tool_name(Tool::Heat)) == "heat");
}

TEST_CASE(
    "the heat lamp over the ice cube feeds the ledger, and the snapshot shows the temperature",
    "[render][heat]") {
  auto sim = load_simulation("ice_cube", {}, "cpu", 1);
  REQUIRE(sim->mpm());
  MpmWorld& w = *sim->mpm();
  REQUIRE(w.heat.enabled);
  ToolSettings s;
  s.tool = Tool::Heat;
  s.radius = 0.05f;
  s.heat_power = 500.f;
  tool_heat_lamps(s, Vec2{0.5f, 0.12f}, true, w.heat_tool);  // inside the block
  sim->step(100);
  const HeatLedger& L = w.heat_ledger();
  REQUIRE(L.passes > 0);
  CHECK(L.lamps > 0.0);
  CHECK(L.lamps <= 500.0 * L.heat_time * (1.0 + 1e-9));  // at most power x time (full cover)
  CHECK(L.lamps > 0.5 * 500.0 * L.heat_time);            // the disk is inside the ice
  tool_heat_lamps(s, Vec2{}, false, w.heat_tool);
  const double lamps = L.lamps;
  sim->step(20);
  CHECK(w.heat_ledger().lamps == lamps);  // released: no more lamp energy

  const HeatBalance b = heat_balance(w.heat_ledger(), w.heat_totals());
  CHECK(b.relative < 1e-4);

  ParticleTable t;
  mpm_snapshot(w, t, false);
  REQUIRE(find_column(t, "temperature") == kColTemperature);
  float lo = 1e30f, hi = -1e30f;
  for (size_t i = 0; i < w.particles.size(); ++i) {
    REQUIRE(t.extra[kColTemperature][i] == w.particles.temp[i]);
    lo = std::min(lo, w.particles.temp[i]);
    hi = std::max(hi, w.particles.temp[i]);
  }
  float rlo, rhi;
  temperature_range(w.particles, rlo, rhi);
  CHECK(rlo == lo);
  CHECK(rhi == hi);
  CHECK(hi > lo);  // the plate and the lamp warmed part of it
}
