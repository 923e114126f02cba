// A device backend that fails at run time: the world keeps its last good host
// state, continues on the CPU backend, and says so. Fake device backends
// (tests/sim/selfcheck/fake_backends.h) stand in for CUDA: no GPU needed.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>
#include "sim/core/backend_error.h"
#include "sim/dem/dem_world.h"
#include "sim/mpm/mpm_cpu.h"
#include "sim/scene/scene.h"
#include "sim/scene/simulation.h"
#include "sim/selfcheck/selfcheck.h"
#include "sim/selfcheck/verdict.h"
#include "tests/sim/selfcheck/fake_backends.h"

using namespace ps;

namespace {

MpmScene scene() { return check_mpm_scene(check_materials()[2].json, "apic", "quadratic", true); }

/// Steps `w` in calls of `chunk` until its clock reaches `total`; `edit` runs
/// once, before the first call that starts at step `edit_at`.
void drive(MpmWorld& w, int64_t total, int chunk, int64_t edit_at = -1,
           const std::function<void(MpmWorld&)>& edit = nullptr) {
  bool edited = false;
  while (w.step_count() < total) {
    if (edit && !edited && w.step_count() == edit_at) {
      edit(w);
      edited = true;
    }
    const int n = static_cast<int>(std::min<int64_t>(chunk, total - w.step_count()));
    REQUIRE(w.step(n).ok);
  }
}

/// The user's edits: a preset on a selection, painted particles, a material change.
void user_edit(MpmWorld& w) {
  std::vector<uint32_t> sel;
  for (uint32_t i = 0; i < w.particles.size(); i += 7) sel.push_back(i);
  w.apply_preset(Preset::Rotation, 1.5f, &sel);
  w.sync();
  for (int k = 0; k < 40; ++k)
    w.particles.add(Vec2{0.1f + 0.005f * k, 0.6f}, Vec2{0.f, -0.5f}, w.particles.mass[0],
                    w.particles.vol0[0], 0, 3);
  w.host_changed();
  w.materials[0].E *= 1.1f;
}

}  // namespace

TEST_CASE(
    "Fallback: a device that dies mid-run and the MPM world goes on on the CPU from its last host copy",
    "[selfcheck]") {
  reset_backend_failures_for_tests();
  MpmScene ref = scene(), dev = scene();
  ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
  fake::MpmFaults f;
  f.fail_after = 150;  // inside the call that starts at step 140
  fake::Calls calls;
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f, &calls));
  dev.world->checkpoint_interval = 50;  // host copies at steps 60 and 120
  dev.world->fallback_threads = 2;
  std::vector<BackendFallback> heard;  // the listener hears each fallback once, after the switch
  dev.world->on_fallback = [&](const BackendFallback& b) {
    heard.push_back(b);
    CHECK(dev.world->backend_name().rfind("cpu", 0) == 0);
  };
  const std::vector<uint32_t> ids = dev.world->particles.id;

  drive(*ref.world, 300, 20);
  drive(*dev.world, 300, 20);
  REQUIRE(heard.size() == 1);
  CHECK(heard[0].message() == dev.world->fallback().message());

  const BackendFallback& fb = dev.world->fallback();
  REQUIRE(fb.happened);
  CHECK(fb.backend == "fake-device");
  CHECK(fb.failed_step == 140);
  CHECK(fb.resumed_step ==
        120);  // the last checkpoint: 20 steps rolled back (bounded by 50 - 1 + 20)
  CHECK(fb.reason.find("illegal memory access") != std::string::npos);
  CHECK(calls.syncs == 2);
  CHECK(dev.world->backend_name().rfind("cpu", 0) == 0);
  const std::string notice = dev.world->take_notice();
  INFO(notice);
  CHECK(notice.find("fake-device failed while stepping") == 0);
  CHECK(notice.find("continuing on the CPU backend from step 120") != std::string::npos);
  CHECK(notice.find("20 steps rolled back") != std::string::npos);
  CHECK(dev.world->take_notice().empty());  // once
  CHECK(backend_failure_noted());
  // Same state, bit for bit, as a CPU run all along; IDs intact; the clock too.
  CHECK(dev.world->step_count() == ref.world->step_count());
  CHECK(dev.world->time() == ref.world->time());
  CHECK(dev.world->particles.id == ids);
  CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  reset_backend_failures_for_tests();
}

TEST_CASE("Fallback: the user's edits since the last checkpoint survive a device failure",
          "[selfcheck]") {
  reset_backend_failures_for_tests();
  MpmScene ref = scene(), dev = scene();
  ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
  fake::MpmFaults f;
  f.fail_after = 125;
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f));
  dev.world->checkpoint_interval = 50;
  drive(*ref.world, 200, 10, 110, user_edit);
  drive(*dev.world, 200, 10, 110, user_edit);
  const BackendFallback& fb = dev.world->fallback();
  REQUIRE(fb.happened);
  CHECK(fb.resumed_step == 110);  // the edit made the host copy current at step 110
  CHECK(dev.world->particles.size() == ref.world->particles.size());
  CHECK(dev.world->particles.id == ref.world->particles.id);
  CHECK(dev.world->materials[0].E == ref.world->materials[0].E);
  CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  reset_backend_failures_for_tests();
}

TEST_CASE("Fallback: an error that leaves the device state intact loses no steps", "[selfcheck]") {
  reset_backend_failures_for_tests();
  MpmScene ref = scene(), dev = scene();
  ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
  fake::MpmFaults f;
  f.fail_after = 140;            // at the start of the call from step 140 (nothing launched yet)...
  f.fail_state_intact = true;    // ...like an out-of-memory error for a new grid
  f.dead_after_failure = false;  // the device still answers: its state is read back
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f));
  dev.world->checkpoint_interval = 50;
  drive(*ref.world, 200, 20);
  drive(*dev.world, 200, 20);
  const BackendFallback& fb = dev.world->fallback();
  REQUIRE(fb.happened);
  CHECK(fb.failed_step == 140);
  CHECK(fb.resumed_step == 140);
  CHECK(dev.world->take_notice().find("no steps rolled back") != std::string::npos);
  CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  reset_backend_failures_for_tests();
}

TEST_CASE("Fallback: a device lost while copying to the host, or while taking an edit",
          "[selfcheck]") {
  reset_backend_failures_for_tests();
  SECTION("sync_to_host fails: diagnostics come from the last host copy, the CPU goes on from it") {
    MpmScene ref = scene(), dev = scene();
    ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
    fake::MpmFaults f;
    f.fail_sync = true;
    dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f));
    REQUIRE(dev.world->step(30).ok);
    const Diagnostics d = dev.world->diagnostics();  // the sync fails here
    CHECK(dev.world->fallback().happened);
    CHECK(dev.world->fallback().during == "copying the state to the host");
    CHECK(dev.world->step_count() == 0);  // the host copy is the initial state
    CHECK(d.hash == ref.world->diagnostics().hash);
    drive(*ref.world, 60, 20);
    drive(*dev.world, 60, 20);
    CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  }
  SECTION("host_changed fails: the edited host state is kept") {
    MpmScene ref = scene(), dev = scene();
    ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
    fake::MpmFaults f;
    f.fail_upload_after = 1;  // set_backend's upload works, the edit's does not
    dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f));
    drive(*ref.world, 100, 20, 40, user_edit);
    drive(*dev.world, 100, 20, 40, user_edit);
    const BackendFallback& fb = dev.world->fallback();
    REQUIRE(fb.happened);
    CHECK(fb.during == "taking the edited state");
    CHECK(fb.failed_step == 40);
    CHECK(fb.resumed_step == 40);
    CHECK(dev.world->particles.id == ref.world->particles.id);
    CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  }
  reset_backend_failures_for_tests();
}

TEST_CASE(
    "Fallback: a device lost during a resampling pass: the CPU goes on from the preserved state, no extra pass",
    "[selfcheck][resample]") {
  reset_backend_failures_for_tests();
  auto load = [] {
    MpmScene s = load_mpm_scene(resolve_scene_path("toffee"),
                                {"resampling.enabled=true", "materials.toffee.eta=0.1"});
    s.world->checkpoint_interval = 1000000;  // the pass's own sync is the first read-back
    return s;
  };
  MpmScene ref = load(), dev = load();
  ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
  fake::MpmFaults f;
  f.fail_sync = true;
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f));
  REQUIRE(dev.world->step(10).ok);  // the pass at step 10 cannot read the device back
  CHECK(dev.world->fallback().happened);
  CHECK(dev.world->step_count() == 0);  // back to the host copy: the initial state
  CHECK(dev.world->resample_totals().calls ==
        0);  // the failed pass did not run on the rolled-back state
  drive(*ref.world, 400, 40);
  drive(*dev.world, 400, 40);
  CHECK(dev.world->resample_totals().calls == ref.world->resample_totals().calls);
  CHECK(dev.world->particles.id == ref.world->particles.id);
  CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  reset_backend_failures_for_tests();
}

TEST_CASE(
    "Fallback: with per-substep forces (SGF) at most one substep is lost, and the forces stay",
    "[selfcheck]") {
  reset_backend_failures_for_tests();
  MpmScene ref = scene(), dev = scene();
  ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
  fake::MpmFaults f;
  f.fail_after = 77;
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f));
  auto hook = [](int64_t step, MpmParticles& p) {
    for (size_t i = 0; i < p.size(); ++i)
      p.fext[i] = Vec2{i % 3 == 0 ? 0.5f * p.mass[i] * (step % 7) : 0.f, 0.f};
    return true;
  };
  ref.world->force_hook = hook;
  dev.world->force_hook = hook;
  drive(*ref.world, 120, 20);
  drive(*dev.world, 120, 20);
  REQUIRE(dev.world->fallback().happened);
  CHECK(dev.world->fallback().resumed_step == 77);
  CHECK(static_cast<bool>(dev.world->force_hook));
  CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  reset_backend_failures_for_tests();
}

TEST_CASE(
    "Fallback: a DEM device that dies and the world goes on on the CPU from the preserved state",
    "[selfcheck]") {
  reset_backend_failures_for_tests();
  // The fake device steps with the CPU reference, so up to the checkpoint it
  // matches a CPU run bit for bit; the CPU backend then starts with fresh
  // contact history, as after any host edit: the reference does the same.
  std::unique_ptr<dem::DemWorld> ref = check_dem_world(), dev = check_dem_world();
  ref->set_backend(dem::make_dem_backend("cpu", 1));
  fake::DemFaults f;
  f.fail_after = 130;
  dev->set_backend(std::make_unique<fake::DeviceDem>(f));
  dev->checkpoint_interval = 50;
  int heard = 0;
  dev->on_fallback = [&](const BackendFallback& b) {
    ++heard;
    CHECK(b.resumed_step == 120);
  };
  const std::vector<uint32_t> ids = dev->particles.id;
  const size_t bonds = dev->bonds.size();
  std::vector<uint32_t> grabbed = {3, 4, 5};
  for (dem::DemWorld* w : {ref.get(), dev.get()}) w->grab_begin(grabbed, dem::Vec2d{0.1, 0.1});
  // Steps of 20: checkpoints at 60 and 120; the failure comes at step 130.
  while (dev->step_count() < 240) REQUIRE(dev->step(20).ok);
  REQUIRE(dev->fallback().happened);
  CHECK(heard == 1);
  CHECK(dev->fallback().failed_step ==
        130);  // DEM steps one at a time: the world counts up to the failure
  CHECK(dev->fallback().resumed_step == 120);
  CHECK(dev->backend_name().rfind("cpu", 0) == 0);
  const std::string notice = dev->take_notice();
  CHECK(notice.find("continuing on the CPU backend from step 120") != std::string::npos);
  CHECK(notice.find("10 steps rolled back") != std::string::npos);
  while (ref->step_count() < 120) REQUIRE(ref->step(20).ok);
  ref->host_changed();  // contact history restarts, as at the fallback
  while (ref->step_count() < 240) REQUIRE(ref->step(20).ok);
  CHECK(dev->particles.id == ids);
  CHECK(dev->bonds.size() == bonds);
  CHECK(dev->grabbing());
  CHECK(dev->step_count() == ref->step_count());
  CHECK(dev->time() == ref->time());
  CHECK(dev->diagnostics().hash == ref->diagnostics().hash);
  reset_backend_failures_for_tests();
}

TEST_CASE("Fallback: the Simulation passes the notice on, and auto then picks the CPU",
          "[selfcheck]") {
  reset_backend_failures_for_tests();
  std::unique_ptr<Simulation> sim = load_simulation("pic_vs_apic", {}, "cpu", 1);
  REQUIRE(sim->mpm());
  fake::MpmFaults f;
  f.fail_after = 5;
  sim->mpm()->set_backend(std::make_unique<fake::DeviceMpm>(f));
  CHECK(sim->take_notice().empty());
  REQUIRE(sim->step(20).ok);
  const std::string notice = sim->take_notice();
  CHECK(notice.find("fake-device failed while stepping") == 0);
  CHECK(sim->backend_name().rfind("cpu", 0) == 0);
  REQUIRE(sim->step(20).ok);  // and goes on
  CHECK(sim->step_count() == 20);
  CHECK(choose_auto_backend().kind == "cpu");
  reset_backend_failures_for_tests();
}

TEST_CASE(
    "Fallback: an MPM device with background checkpoints rolls back to the last one that arrived",
    "[selfcheck]") {
  reset_backend_failures_for_tests();
  MpmScene ref = scene(), dev = scene();
  ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
  fake::MpmFaults f;
  f.fail_after = 150;  // inside the call that starts at step 140
  f.background_checkpoints = true;
  fake::Calls calls;
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f, &calls));
  dev.world->checkpoint_interval =
      50;  // copies begin at steps 60 and 120, noted as arrived a call later
  drive(*ref.world, 200, 20);
  drive(*dev.world, 200, 20);
  const BackendFallback& fb = dev.world->fallback();
  REQUIRE(fb.happened);
  CHECK(fb.failed_step == 140);
  CHECK(fb.resumed_step == 120);
  CHECK(calls.syncs == 0);  // no checkpoint stopped the stepping for a copy to the host
  CHECK(calls.checkpoints == 2);
  CHECK(calls.restores == 1);
  CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  reset_backend_failures_for_tests();
}

TEST_CASE(
    "Fallback: a DEM device with background checkpoints rolls back to the last one that arrived",
    "[selfcheck]") {
  reset_backend_failures_for_tests();
  std::unique_ptr<dem::DemWorld> ref = check_dem_world(), dev = check_dem_world();
  ref->set_backend(dem::make_dem_backend("cpu", 1));
  fake::DemFaults f;
  f.fail_after = 150;
  f.background_checkpoints = true;
  fake::Calls calls;
  dev->set_backend(std::make_unique<fake::DeviceDem>(f, &calls));
  dev->checkpoint_interval = 50;
  const int syncs_at_start = calls.syncs;
  while (dev->step_count() < 240) REQUIRE(dev->step(20).ok);
  REQUIRE(dev->fallback().happened);
  CHECK(dev->fallback().failed_step == 150);
  CHECK(dev->fallback().resumed_step == 120);  // the copy begun at 120, noted at the call from 140
  CHECK(calls.syncs == syncs_at_start);
  CHECK(calls.checkpoints == 2);
  CHECK(calls.restores == 1);
  CHECK(dev->take_notice().find("30 steps rolled back") != std::string::npos);
  // As the fallback did: the CPU from the state at 120 with fresh contact history.
  while (ref->step_count() < 120) REQUIRE(ref->step(20).ok);
  ref->host_changed();
  while (ref->step_count() < 240) REQUIRE(ref->step(20).ok);
  CHECK(dev->step_count() == ref->step_count());
  CHECK(dev->diagnostics().hash == ref->diagnostics().hash);
  reset_backend_failures_for_tests();
}

TEST_CASE(
    "Fallback: a device lost while its newest checkpoint is in transfer rolls back to the one before",
    "[selfcheck]") {
  // The copy begun at 120 is not known to have arrived when the device dies at
  // 130 (the world asks at its next call): the copy begun at 60, complete since
  // the next one began, is still whole in host memory.
  reset_backend_failures_for_tests();
  SECTION("MPM") {
    MpmScene ref = scene(), dev = scene();
    ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
    fake::MpmFaults f;
    f.fail_after = 130;
    f.background_checkpoints = true;
    fake::Calls calls;
    dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f, &calls));
    dev.world->checkpoint_interval = 50;
    drive(*ref.world, 200, 20);
    drive(*dev.world, 200, 20);
    REQUIRE(dev.world->fallback().happened);
    CHECK(dev.world->fallback().failed_step == 120);
    CHECK(dev.world->fallback().resumed_step == 60);
    CHECK(calls.syncs == 0);
    CHECK(calls.restores == 1);
    CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  }
  SECTION("DEM") {
    std::unique_ptr<dem::DemWorld> ref = check_dem_world(), dev = check_dem_world();
    ref->set_backend(dem::make_dem_backend("cpu", 1));
    fake::DemFaults f;
    f.fail_after = 130;
    f.background_checkpoints = true;
    fake::Calls calls;
    dev->set_backend(std::make_unique<fake::DeviceDem>(f, &calls));
    dev->checkpoint_interval = 50;
    const int syncs_at_start = calls.syncs;
    while (dev->step_count() < 200) REQUIRE(dev->step(20).ok);
    REQUIRE(dev->fallback().happened);
    CHECK(dev->fallback().failed_step == 130);
    CHECK(dev->fallback().resumed_step == 60);
    CHECK(calls.syncs == syncs_at_start);
    CHECK(calls.restores == 1);
    while (ref->step_count() < 60) REQUIRE(ref->step(20).ok);
    ref->host_changed();
    while (ref->step_count() < 200) REQUIRE(ref->step(20).ok);
    CHECK(dev->diagnostics().hash == ref->diagnostics().hash);
  }
  reset_backend_failures_for_tests();
}
