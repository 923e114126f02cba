// The rewind (sim/scene/rewind.h): saved states, the snapshot ring and the
// action log. A replay must reproduce the recorded run's state hash exactly.
#include <catch2/catch.hpp>
#include <map>
#include "sim/dem/dem_world.h"
#include "sim/scene/rewind.h"

using namespace ps;

namespace {

uint64_t hash_of(Simulation& s) { return s.diagnostics().hash; }

/// Drives a simulation the way the window does: edits, then the sync
/// point's note_controls, then one recorded step call; logs each step's hash.
struct Driver {
  Simulation& sim;
  Rewind& rw;
  std::map<int64_t, uint64_t> hashes;
  void frame(int n) {
    rw.note_controls(sim);
    REQUIRE(rw.step(sim, n).ok);
    rw.end_frame();
    hashes[sim.step_count()] = hash_of(sim);
  }
};

/// Indices of the particles within r of c.
std::vector<uint32_t> near(const MpmWorld& w, Vec2 c, float r) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < w.particles.size(); ++i)
    if (length(w.particles.x[i] - c) < r) out.push_back(static_cast<uint32_t>(i));
  return out;
}

}  // namespace

TEST_CASE(
    "Rewind replays an MPM run with grab, preset, parameter edit and painting to the same hash",
    "[rewind][mpm]") {
  std::unique_ptr<Simulation> sim = load_simulation("mpm99", {"domain.grid=48"}, "cpu", 2);
  MpmWorld& w = *sim->mpm();
  Rewind rw(size_t{256} << 20);
  REQUIRE(rw.reset(*sim));
  const uint64_t h0 = hash_of(*sim);
  Driver d{*sim, rw, {}};
  d.hashes[0] = h0;
  d.frame(7);
  d.frame(5);  // calls of different sizes, as the window's time budget gives
  // Grab: begin, move, end (the window calls the world; note_controls records).
  const Vec2 c = w.particles.x[w.particles.size() / 2];
  w.grab_stiffness = 3000.f;
  w.grab_begin(near(w, c, 0.05f), c);
  d.frame(6);
  w.grab_move(c + Vec2{0.05f, 0.08f});
  d.frame(6);
  w.grab_end();
  d.frame(6);
  // A velocity preset and a parameter edit at the same step.
  RewindAction preset;
  preset.kind = RewindAction::Kind::Preset;
  preset.preset = Preset::Rotation;
  preset.speed = 0.7f;
  rw.apply(*sim, preset);
  w.materials[0].E *= 1.5f;
  w.solver.transfer = Transfer::PIC;
  d.frame(8);
  // Painted particles, then attract with the point force.
  RewindAction paint;
  paint.kind = RewindAction::Kind::Paint;
  paint.sites = {Vec2{0.5f, 0.8f}, Vec2{0.51f, 0.8f}, Vec2{0.5f, 0.81f}, Vec2{0.51f, 0.81f}};
  paint.material = 1;
  paint.spacing = 0.01f;
  paint.velocity = Vec2{0.f, -1.f};
  paint.group = 7;
  const size_t n_before = w.particles.size();
  rw.apply(*sim, paint);
  REQUIRE(w.particles.size() == n_before + 4);
  d.frame(5);
  w.point_force = PointForce{true, Vec2{0.4f, 0.4f}, 0.2f, 80.f};
  d.frame(5);
  w.point_force.active = false;
  // An SGF list on a painted particle.
  RewindAction sgf;
  sgf.kind = RewindAction::Kind::ForceList;
  auto list = std::make_shared<SgfList>();
  SgfFile f;
  f.start = 0;
  f.end = 1000;
  f.rows.push_back(SgfRow{w.particles.id[n_before], 0.0, 0.002, 0.0});
  list->files.push_back(f);
  sgf.list = list;
  rw.apply(*sim, sgf);
  d.frame(9);
  d.frame(9);
  const int64_t head = sim->step_count();
  REQUIRE(rw.head() == head);
  const uint64_t h_head = hash_of(*sim);
  REQUIRE(rw.stats().actions >= 7);

  SECTION("seek to 0 gives the initial hash") {
    REQUIRE(rw.seek(*sim, 0) == 0);
    REQUIRE(hash_of(*sim) == h0);
    REQUIRE(w.particles.size() == n_before);
    REQUIRE(w.solver.transfer == Transfer::APIC);
  }
  SECTION("seek back and forward reproduces every recorded hash") {
    rw.seek(*sim, 0);
    for (const auto& [step, h] : d.hashes) {
      REQUIRE(rw.seek(*sim, step) == step);
      INFO("step " << step);
      REQUIRE(hash_of(*sim) == h);
    }
    // Backwards too (each seek restores from the ring).
    for (auto it = d.hashes.rbegin(); it != d.hashes.rend(); ++it) {
      REQUIRE(rw.seek(*sim, it->first) == it->first);
      REQUIRE(hash_of(*sim) == it->second);
    }
    REQUIRE(rw.seek(*sim, head) == head);
    REQUIRE(hash_of(*sim) == h_head);
  }
  SECTION(
      "a replay from step 0 through every action ends on the recorded hash, and live stepping goes on") {
    rw.seek(*sim, 0);
    int done = 0;
    while (sim->step_count() < head) {
      REQUIRE(rw.replay_call(*sim, head, done).ok);
      REQUIRE(done > 0);
    }
    REQUIRE(hash_of(*sim) == h_head);
    REQUIRE(!rw.behind_head(*sim));
    d.frame(4);  // live again: recorded as usual
    REQUIRE(rw.head() == head + 4);
  }
  SECTION("a seek inside a recorded call steps part of it") {
    const int64_t mid = 3;  // inside the first call (7 substeps)
    REQUIRE(rw.seek(*sim, mid) == mid);
    std::unique_ptr<Simulation> ref = load_simulation("mpm99", {"domain.grid=48"}, "cpu", 1);
    ref->step(3);
    REQUIRE(hash_of(*sim) == hash_of(*ref));
    REQUIRE(rw.seek(*sim, 12) == 12);
    REQUIRE(hash_of(*sim) == d.hashes.at(12));
  }
}

TEST_CASE("Rewind replays a DEM run with bonds, contact history, SGF and a grab to the same hash",
          "[rewind][dem]") {
  // The dancer: a bonded soft body driven by its SGF choreography.
  std::unique_ptr<Simulation> sim = load_simulation("dem_dance", {}, "cpu", 2);
  dem::DemWorld& w = *sim->dem();
  Rewind rw(size_t{256} << 20);
  REQUIRE(rw.reset(*sim));
  Driver d{*sim, rw, {}};
  d.hashes[0] = hash_of(*sim);
  for (int k = 0; k < 4; ++k) d.frame(40);
  w.sync();
  std::vector<uint32_t> grab = {0, 1, 2};
  w.grab_begin(grab, w.particles.x[0]);
  d.frame(30);
  w.grab_move(w.particles.x[0] + dem::Vec2d{0.01, 0.02});
  d.frame(30);
  w.grab_end();
  w.materials[0].friction *= 0.5;  // a parameter edit
  w.point_force = PointForce{true, Vec2{0.3f, 0.2f}, 0.2f, -30.f};
  d.frame(25);
  w.point_force.active = false;
  d.frame(35);
  d.frame(35);
  const int64_t head = sim->step_count();
  REQUIRE(w.last_result().contacts + w.intact_bonds() > 0);

  REQUIRE(rw.seek(*sim, 0) == 0);
  REQUIRE(hash_of(*sim) == d.hashes.at(0));
  for (const auto& [step, h] : d.hashes) {
    REQUIRE(rw.seek(*sim, step) == step);
    INFO("step " << step);
    REQUIRE(hash_of(*sim) == h);
  }
  REQUIRE(sim->step_count() == head);
  // Backwards from the head: restores from the ring, contact history included.
  for (auto it = d.hashes.rbegin(); it != d.hashes.rend(); ++it) {
    REQUIRE(rw.seek(*sim, it->first) == it->first);
    REQUIRE(hash_of(*sim) == it->second);
  }
}

TEST_CASE("A DEM state restored mid-run steps on bit-identically (contact history kept)",
          "[rewind][dem]") {
  std::unique_ptr<Simulation> a = load_simulation("dem_smash", {}, "cpu", 2);
  a->step(200);
  std::unique_ptr<SimState> s = a->save_state();
  REQUIRE(s);
  REQUIRE(s->step == 200);
  a->step(150);
  const uint64_t h = hash_of(*a);
  const size_t broken = a->dem()->bonds_broken_total();
  a->load_state(*s);
  REQUIRE(a->step_count() == 200);
  a->step(150);
  REQUIRE(hash_of(*a) == h);
  REQUIRE(a->dem()->bonds_broken_total() == broken);
}

TEST_CASE("A PolyPIC state restored mid-run steps on bit-identically (its higher modes saved)",
          "[rewind][mpm][polypic]") {
  std::unique_ptr<Simulation> a =
      load_simulation("pic_vs_apic", {"solver.transfer=polypic"}, "cpu", 2);
  a->mpm()->apply_preset(Preset::Rotation, 1.f);
  a->step(60);
  std::unique_ptr<SimState> s = a->save_state();
  REQUIRE(s);
  a->step(60);
  const uint64_t h = hash_of(*a);
  a->step(40);  // the modes move on past the saved state
  a->load_state(*s);
  REQUIRE(a->step_count() == 60);
  a->step(60);
  REQUIRE(hash_of(*a) == h);
  // The modes are a per-particle column like the others: sized, compacted and
  // counted in a saved state's bytes with them (MpmParticles::for_each_array).
  MpmParticles& p = a->mpm()->particles;
  size_t nonzero = 0;
  for (const PolyModes& m : p.poly)
    for (const Vec2& c : m.c) nonzero += (c.x != 0.f || c.y != 0.f);
  REQUIRE(nonzero > 0);
  size_t column_bytes = 0;
  p.for_each_array([&](const auto& col) { column_bytes += col.size() * sizeof(col[0]); });
  CHECK(column_bytes >= p.size() * sizeof(PolyModes));
  p.resize(p.size() + 3);
  CHECK(p.poly.size() == p.x.size());
}

TEST_CASE("The rewind ring respects its byte budget and keeps step 0", "[rewind][mpm]") {
  std::unique_ptr<Simulation> sim = load_simulation("pic_vs_apic", {}, "cpu", 2);
  const size_t snap = sim->save_state()->bytes();
  const size_t budget = 6 * snap;
  Rewind rw(budget);
  REQUIRE(rw.reset(*sim));
  Driver d{*sim, rw, {}};
  d.hashes[0] = hash_of(*sim);
  for (int k = 0; k < 60; ++k) {
    d.frame(10);
    const RewindStats st = rw.stats();
    REQUIRE(st.snapshot_bytes + st.log_bytes <= budget);
    REQUIRE(rw.snapshot_steps().front() == 0);
  }
  const RewindStats st = rw.stats();
  CHECK(st.snapshots >= 3);
  CHECK(st.interval > 10);  // K grew so the ring spans the whole recording
  // The ring spans the recording: snapshots near the start and near the head.
  const std::vector<int64_t> steps = rw.snapshot_steps();
  CHECK(steps.back() >= rw.head() - 2 * st.interval);
  // Every recorded step is still reachable exactly.
  for (int64_t s : {int64_t{0}, int64_t{10}, int64_t{230}, int64_t{470}, int64_t{600}}) {
    REQUIRE(rw.seek(*sim, s) == s);
    REQUIRE(hash_of(*sim) == d.hashes.at(s));
  }
  // A smaller budget trims at once; step 0 stays even when nothing else fits.
  rw.set_budget(snap / 2);
  REQUIRE(rw.snapshot_steps() == std::vector<int64_t>{0});
  REQUIRE(rw.seek(*sim, 300) == 300);
  REQUIRE(hash_of(*sim) == d.hashes.at(300));
  // Recording on with no room for a second snapshot: none is taken.
  rw.seek(*sim, rw.head());
  d.frame(10);
  REQUIRE(rw.snapshot_steps() == std::vector<int64_t>{0});
}

TEST_CASE("An action behind the head starts a branch: the old future is discarded",
          "[rewind][mpm]") {
  std::unique_ptr<Simulation> sim = load_simulation("pic_vs_apic", {}, "cpu", 2);
  Rewind rw(size_t{64} << 20);
  REQUIRE(rw.reset(*sim));
  Driver d{*sim, rw, {}};
  for (int k = 0; k < 6; ++k) d.frame(10);
  RewindAction shear;
  shear.kind = RewindAction::Kind::Preset;
  shear.preset = Preset::Shear;
  rw.apply(*sim, shear);
  for (int k = 0; k < 4; ++k) d.frame(10);
  REQUIRE(rw.head() == 100);
  const uint64_t old_at_80 = d.hashes.at(80);

  REQUIRE(rw.seek(*sim, 30) == 30);
  REQUIRE(rw.behind_head(*sim));
  RewindAction dil;
  dil.kind = RewindAction::Kind::Preset;
  dil.preset = Preset::Dilation;
  rw.apply(*sim, dil);
  REQUIRE(rw.head() == 30);
  REQUIRE(rw.stats().branches == 1);
  REQUIRE(rw.actions().size() == 1);
  REQUIRE(rw.actions().back().preset == Preset::Dilation);
  for (int64_t s : rw.snapshot_steps()) REQUIRE(s <= 30);
  d.hashes.clear();
  for (int k = 0; k < 5; ++k) d.frame(10);
  REQUIRE(rw.head() == 80);
  REQUIRE(d.hashes.at(80) != old_at_80);
  REQUIRE(rw.seek(*sim, 50) == 50);
  REQUIRE(hash_of(*sim) == d.hashes.at(50));
  REQUIRE(rw.seek(*sim, 200) == 80);  // clamped to the new head
  REQUIRE(hash_of(*sim) == d.hashes.at(80));

  SECTION("a live step behind the head is a branch too") {
    rw.seek(*sim, 40);
    REQUIRE(rw.step(*sim, 10).ok);
    REQUIRE(rw.head() == 50);
    REQUIRE(rw.stats().branches == 2);
  }
  SECTION("a parameter edit behind the head is recorded as a branch") {
    rw.seek(*sim, 40);
    REQUIRE_FALSE(rw.note_controls(*sim));  // a restore is not an edit
    sim->mpm()->solver.transfer = Transfer::PIC;
    REQUIRE(rw.note_controls(*sim));
    REQUIRE(rw.head() == 40);
    REQUIRE(rw.actions().back().kind == RewindAction::Kind::Controls);
  }
}

TEST_CASE("Scenes with rigid bodies refuse rewind with a reason and actions still apply",
          "[rewind][rigid]") {
  std::unique_ptr<Simulation> sim = load_simulation("rigid_float", {}, "cpu", 1);
  Rewind rw;
  REQUIRE_FALSE(rw.reset(*sim));
  REQUIRE_FALSE(rw.active());
  REQUIRE(rw.why_off().find("rigid bodies") != std::string::npos);
  REQUIRE(sim->save_state() == nullptr);
  rw.note_controls(*sim);
  REQUIRE(rw.step(*sim, 3).ok);
  REQUIRE(sim->step_count() == 3);
  REQUIRE(rw.actions().empty());
}

TEST_CASE("The default rewind budget is a quarter of the memory, at most 512 MiB", "[rewind]") {
  const size_t b = default_rewind_budget();
  REQUIRE(b >= (size_t{64} << 20));
  REQUIRE(b <= (size_t{512} << 20));
  constexpr size_t MiB = size_t{1} << 20, GiB = size_t{1} << 30;
  CHECK(default_rewind_budget_for(2 * GiB) == 512 * MiB);  // a quarter
  CHECK(default_rewind_budget_for(1 * GiB) == 256 * MiB);
  CHECK(default_rewind_budget_for(8 * GiB) == 512 * MiB);  // a classroom laptop: the cap
  CHECK(default_rewind_budget_for(128 * GiB) == 512 * MiB);
  CHECK(default_rewind_budget_for(0) == 512 * MiB);  // unknown
}

TEST_CASE("Rewind frame boundaries step between displayed frames, not every call", "[rewind]") {
  std::unique_ptr<Simulation> sim = load_simulation("pic_vs_apic", {}, "cpu", 1);
  Rewind rw(size_t{64} << 20);
  REQUIRE(rw.reset(*sim));
  // Frame 1 in three calls (a split frame), frame 2 in one.
  rw.step(*sim, 1);
  rw.step(*sim, 2);
  rw.step(*sim, 7);
  rw.end_frame();
  rw.step(*sim, 10);
  rw.end_frame();
  rw.step(*sim, 4);  // not yet a frame
  REQUIRE(rw.head() == 24);
  REQUIRE(rw.next_boundary(0) == 10);
  REQUIRE(rw.next_boundary(3) == 10);
  REQUIRE(rw.next_boundary(10) == 20);
  REQUIRE(rw.next_boundary(20) == 24);  // the head
  REQUIRE(rw.prev_boundary(24) == 20);
  REQUIRE(rw.prev_boundary(20) == 10);
  REQUIRE(rw.prev_boundary(10) == 0);
  REQUIRE(rw.prev_boundary(5) == 0);
}

TEST_CASE(
    "Rewind restores resampling and heat state exactly (toffee with resampling, ice cube with a lamp)",
    "[rewind][mpm]") {
  struct Case {
    const char* scene;
    std::vector<std::string> sets;
  };
  for (const Case& c : {Case{"toffee", {"resampling.enabled=true"}}, Case{"ice_cube", {}}}) {
    INFO(c.scene);
    std::unique_ptr<Simulation> sim = load_simulation(c.scene, c.sets, "cpu", 2);
    MpmWorld& w = *sim->mpm();
    REQUIRE((w.resampling.enabled || w.heat.enabled));
    Rewind rw(size_t{128} << 20);
    REQUIRE(rw.reset(*sim));
    Driver d{*sim, rw, {}};
    d.hashes[0] = hash_of(*sim);
    const int frame = sim->substeps_per_frame();
    for (int k = 0; k < 6; ++k) d.frame(frame);
    if (w.heat.enabled)
      w.heat_tool = {HeatLamp{Vec2{0.5f, 0.2f}, 0.08f, 400.f}};  // the heat lamp held
    for (int k = 0; k < 6; ++k) d.frame(frame);
    w.heat_tool.clear();
    for (int k = 0; k < 4; ++k) d.frame(frame);
    if (w.resampling.enabled) REQUIRE(w.resample_totals().calls > 0);
    if (w.heat.enabled) REQUIRE(w.heat_ledger().lamps > 0.0);
    const size_t n_head = w.particles.size();
    for (auto it = d.hashes.rbegin(); it != d.hashes.rend(); ++it) {
      REQUIRE(rw.seek(*sim, it->first) == it->first);
      REQUIRE(hash_of(*sim) == it->second);
    }
    REQUIRE(rw.seek(*sim, rw.head()) == rw.head());
    REQUIRE(hash_of(*sim) == d.hashes.rbegin()->second);
    REQUIRE(w.particles.size() == n_head);
  }
}
