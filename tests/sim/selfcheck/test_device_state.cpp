// A device backend's state stays on the device: the world's saved states (the
// rewind) are device copies, its checkpoints arrive in the background, its
// totals are summed there. The fake device (fake_backends.h) stands in for
// CUDA: it keeps its own copy of the particles, so a world that read the
// host arrays where it should not would see stale values and these tests fail.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>
#include "sim/core/backend_error.h"
#include "sim/mpm/mpm_cpu.h"
#include "sim/scene/scene.h"
#include "sim/selfcheck/selfcheck.h"
#include "sim/selfcheck/verdict.h"
#include "tests/sim/selfcheck/fake_backends.h"
#include "tests/totals_match.h"

using namespace ps;

namespace {

MpmScene scene() { return check_mpm_scene(check_materials()[2].json, "apic", "quadratic", true); }

fake::MpmFaults device_state() {
  fake::MpmFaults f;
  f.device_state = true;
  return f;
}

}  // namespace

TEST_CASE("Device state: saves stay on the device and restore the exact state",
          "[selfcheck][rewind]") {
  MpmScene ref = scene(), dev = scene();
  ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
  fake::Calls calls;
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(device_state(), &calls));
  dev.world->checkpoint_interval = 1000;
  REQUIRE(ref.world->step(30).ok);
  REQUIRE(dev.world->step(30).ok);
  const int syncs = calls.syncs;
  MpmWorldState s;
  dev.world->save_state(s);
  CHECK(calls.device_saves == 1);
  CHECK(calls.syncs == syncs);  // nothing came to the host
  CHECK(s.device != nullptr);
  CHECK(s.particles.size() == 0);  // the stepped columns are on the device
  REQUIRE(s.host_columns != nullptr);
  CHECK(s.host_columns->id == dev.world->particles.id);
  CHECK(s.bytes() > s.device->bytes());

  // On: 40 substeps, and the same 40 again from the restored copy.
  MpmWorldState r;
  ref.world->save_state(r);
  REQUIRE(ref.world->step(40).ok);
  REQUIRE(dev.world->step(40).ok);
  const uint64_t h40 = ref.world->diagnostics().hash;
  CHECK(dev.world->diagnostics().hash == h40);
  dev.world->load_state(s);
  CHECK(calls.device_loads == 1);
  CHECK(dev.world->step_count() == 30);
  ref.world->load_state(r);
  CHECK(dev.world->diagnostics().hash ==
        ref.world->diagnostics().hash);  // the host got the restored state
  REQUIRE(dev.world->step(40).ok);
  CHECK(dev.world->diagnostics().hash == h40);

  // Two saves with no host edit between them share the host columns; an edit makes new ones.
  MpmWorldState a, b, c;
  dev.world->save_state(a);
  dev.world->save_state(b);
  CHECK(a.host_columns == b.host_columns);
  dev.world->apply_preset(Preset::Rotation, 1.f);
  dev.world->save_state(c);
  CHECK(c.host_columns != a.host_columns);
}

TEST_CASE("Device state: a save from another backend is refused and changes nothing",
          "[selfcheck][rewind]") {
  MpmScene dev = scene();
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(device_state()));
  REQUIRE(dev.world->step(10).ok);
  MpmWorldState s;
  dev.world->save_state(s);
  REQUIRE(s.device != nullptr);
  REQUIRE(dev.world->step(10).ok);
  dev.world->set_backend(std::make_unique<MpmCpuBackend>(1));
  const uint64_t before = dev.world->diagnostics().hash;
  CHECK_THROWS_AS(dev.world->load_state(s), std::invalid_argument);
  CHECK(dev.world->step_count() == 20);
  CHECK(dev.world->diagnostics().hash == before);
}

TEST_CASE(
    "Device state: checkpoints arrive in the background and a failure rolls back to the newest",
    "[selfcheck]") {
  reset_backend_failures_for_tests();
  MpmScene ref = scene(), dev = scene();
  ref.world->set_backend(std::make_unique<MpmCpuBackend>(1));
  fake::MpmFaults f = device_state();
  f.fail_after = 150;  // inside the call that starts at step 140
  fake::Calls calls;
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(f, &calls));
  dev.world->checkpoint_interval = 50;  // checkpoints begin at steps 60 and 120
  dev.world->fallback_threads = 2;
  for (int64_t s = 0; s < 300; s += 20) REQUIRE(ref.world->step(20).ok);
  for (int64_t s = 0; dev.world->step_count() < 300; s += 20) REQUIRE(dev.world->step(20).ok);
  const BackendFallback& fb = dev.world->fallback();
  REQUIRE(fb.happened);
  CHECK(fb.failed_step == 140);
  CHECK(fb.resumed_step == 120);  // the checkpoint that arrived, not a host copy
  CHECK(calls.checkpoints == 2);
  CHECK(calls.syncs == 0);  // no checkpoint stopped the stepping to copy
  CHECK(dev.world->diagnostics().hash == ref.world->diagnostics().hash);
  reset_backend_failures_for_tests();
}

TEST_CASE("Device state: the plots' totals are summed on the device and equal the host's",
          "[selfcheck]") {
  MpmScene dev = scene();
  fake::Calls calls;
  dev.world->set_backend(std::make_unique<fake::DeviceMpm>(device_state(), &calls));
  dev.world->apply_preset(Preset::Rotation, 2.f);
  REQUIRE(dev.world->step(25).ok);
  const int syncs = calls.syncs;
  const Diagnostics t = dev.world->totals();
  CHECK(calls.totals == 1);
  CHECK(calls.syncs == syncs);
  const Diagnostics d = dev.world->diagnostics(false);  // syncs, sums on the host in index order
  CHECK(t.count == d.count);
  check_totals_match(t, d);
  // Also with the host copy current: the device sums (a paused window's plots).
  dev.world->totals();
  CHECK(calls.totals == 2);
}
