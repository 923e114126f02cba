// Where the verification cases run (sim/verify/case_backend.h, run_case): the
// backend a run asks for reaches every case's worlds, a case with nothing to
// put on a device says why, a device world that falls back to the CPU is
// reported, and a case that ignores the backend is an error. Fake device
// backends (tests/sim/selfcheck/fake_backends.h) stand in for CUDA: they step
// with the CPU reference on their own copy of the state, so a case that reads
// the host arrays without syncing them measures something else.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>
#include "sim/core/backend_error.h"
#include "sim/cuda/cuda_info.h"
#include "sim/verify/case_backend.h"
#include "sim/verify/verify.h"
#include "tests/sim/selfcheck/fake_backends.h"

using namespace ps;

namespace {

/// Options whose factory refuses every backend, naming what it was asked for:
/// a case that asks for a backend stops at its first world with that message.
verify::Options refusing(const std::string& backend) {
  verify::Options o;
  o.quick = true;
  o.threads = 1;
  o.backend = backend;
  o.factory.mpm = [](const std::string& kind, int) -> std::unique_ptr<MpmBackend> {
    throw std::runtime_error("fake factory: asked for an MPM backend '" + kind + "'");
  };
  o.factory.dem = [](const std::string& kind, int) -> std::unique_ptr<dem::DemBackend> {
    throw std::runtime_error("fake factory: asked for a DEM backend '" + kind + "'");
  };
  return o;
}

/// Options that put every world on a fake device (MPM: failing after
/// `fail_after` substeps, -1: never).
verify::Options fake_device(int64_t fail_after = -1) {
  verify::Options o;
  o.quick = true;
  o.threads = 1;
  o.backend = "cuda";
  o.factory.mpm = [fail_after](const std::string&, int) -> std::unique_ptr<MpmBackend> {
    fake::MpmFaults f;
    f.fail_after = fail_after;
    return std::make_unique<fake::DeviceMpm>(f);
  };
  o.factory.dem = [](const std::string&, int) -> std::unique_ptr<dem::DemBackend> {
    return std::make_unique<fake::DeviceDem>();
  };
  return o;
}

verify::Options cpu() {
  verify::Options o;
  o.quick = true;
  o.threads = 1;
  return o;
}

const verify::CaseSpec& spec_of(const std::vector<verify::CaseSpec>& all, const std::string& id) {
  for (const verify::CaseSpec& s : all)
    if (s.id == id) return s;
  throw std::runtime_error("no case " + id);
}

/// A case that runs nothing and passes (to test what the runner makes of it).
verify::CaseSpec idle_case(bool says_why) {
  verify::CaseSpec spec;
  spec.id = "test.idle";
  spec.group = "Test group";
  spec.run = [says_why](const verify::Options& opt) {
    if (says_why) verify::on_host(opt, "a closed form, nothing to step");
    verify::CaseResult r;
    r.checks.push_back(verify::make_check("one", 1.0, 1.0, 0.0, verify::Compare::Near));
    return r;
  };
  return spec;
}

}  // namespace

TEST_CASE(
    "Every verification case asks the run's backend factory for its worlds, or says why it has none",
    "[verify][backend]") {
  // The cases with no world at all: they run on the host whatever the backend
  // and say why. A new entry here is a case that cannot use a device.
  const std::set<std::string> host_only = {"mpm.viscoplastic_uniaxial"};
  // The heat solver's cases have no world either: on a device they ask for a
  // backend for its solver, on the CPU they solve on the host.
  const std::set<std::string> solver_only = {"heat.pcg_poisson", "heat.slab_backward_euler"};
  const std::vector<verify::CaseSpec> all = verify::all_cases();
  for (const char* backend : {"cuda", "cpu"}) {
    for (const verify::CaseSpec& spec : all) {
      const verify::CaseResult r = verify::run_case(spec, refusing(backend));
      INFO(backend << ": " << spec.id << ": error '" << r.error << "', ran on '" << r.ran_on.text()
                   << "'");
      CHECK(r.ran_on.requested == backend);
      if (host_only.count(spec.id) ||
          (solver_only.count(spec.id) && std::string(backend) == "cpu")) {
        CHECK(r.error.empty());
        CHECK(r.passed());
        CHECK_FALSE(r.ran_on.on_device());
        if (std::string(backend) == "cuda") {
          CHECK_FALSE(r.ran_on.host.empty());
          CHECK(r.ran_on.text().rfind("cpu — ", 0) == 0);
        }
      } else {
        // Asked for this run's backend (the CPU run goes through the same factory).
        CHECK(r.error.find("fake factory: asked for a") != std::string::npos);
        CHECK(r.error.find(std::string("backend '") + backend + "'") != std::string::npos);
        CHECK_FALSE(r.passed());
      }
    }
  }
}

TEST_CASE("Cases on a device report it and measure what the CPU measures", "[verify][backend]") {
  // The fake device steps with the CPU reference on its own copy of the state:
  // the figures are the CPU's only if every host read is synced first.
  const std::vector<verify::CaseSpec> all = verify::all_cases();
  for (const char* id :
       {"mpm.rotation_angular_momentum", "mpm.vibrating_bar_period", "heat.slab_particles",
        "heat.energy_balance", "dem.hertz_impact", "dem.restitution", "rigid.dem_plate_hertz"}) {
    const verify::CaseSpec& spec = spec_of(all, id);
    const verify::CaseResult ref = verify::run_case(spec, cpu());
    const verify::CaseResult dev = verify::run_case(spec, fake_device());
    INFO(id << ": ran on '" << dev.ran_on.text() << "', error '" << dev.error << "'");
    CHECK(ref.ran_on.text() == "cpu");
    CHECK(dev.error.empty());
    CHECK(dev.ran_on.on_device());
    CHECK(dev.ran_on.backend == "cuda");
    CHECK(dev.ran_on.device == "fake-device");
    CHECK_FALSE(dev.ran_on.fell_back());
    CHECK(dev.ran_on.text().rfind("fake-device", 0) == 0);
    CHECK(dev.passed() == ref.passed());
    REQUIRE(dev.checks.size() == ref.checks.size());
    for (size_t k = 0; k < ref.checks.size(); ++k) {
      INFO(ref.checks[k].quantity << ": CPU " << ref.checks[k].measured << ", device "
                                  << dev.checks[k].measured);
      CHECK(dev.checks[k].measured == ref.checks[k].measured);
    }
  }
  // A world with heat solves its systems on the device (the fake has no
  // solver: the host does) and says that its passes' transfers are host work.
  const verify::CaseResult heat =
      verify::run_case(spec_of(all, "heat.slab_particles"), fake_device());
  CHECK(heat.ran_on.host.find("heat passes") != std::string::npos);
  CHECK(heat.ran_on.text().find("; on the host: ") != std::string::npos);
}

TEST_CASE("A device world that falls back to the CPU mid-case is reported in the case's result",
          "[verify][backend]") {
  reset_backend_failures_for_tests();
  const std::vector<verify::CaseSpec> all = verify::all_cases();
  const verify::CaseSpec& spec = spec_of(all, "mpm.rotation_angular_momentum");
  const verify::CaseResult ref = verify::run_case(spec, cpu());
  const verify::CaseResult r = verify::run_case(spec, fake_device(100));
  INFO(r.ran_on.text());
  CHECK(r.error.empty());
  CHECK(r.ran_on.on_device());
  REQUIRE(r.ran_on.fell_back());
  CHECK(r.ran_on.fallback.find("fake-device failed while stepping") != std::string::npos);
  CHECK(r.ran_on.fallback.find("continuing on the CPU backend") != std::string::npos);
  CHECK(r.ran_on.text().find(", fell back to the cpu: ") != std::string::npos);
  // The world went on from its last host copy: the verdict is still the model's.
  CHECK(r.passed() == ref.passed());
  const verify::BackendTally t = verify::tally_backends({ref, r});
  CHECK(t.on_device == 0);
  CHECK(t.fell_back == 1);
  CHECK(t.on_cpu == 1);
  reset_backend_failures_for_tests();
}

TEST_CASE("A case that ignores a requested device is an error, one that says why runs on the CPU",
          "[verify][backend]") {
  verify::Options cuda;
  cuda.backend = "cuda";
  const verify::CaseResult silent = verify::run_case(idle_case(false), cuda);
  CHECK_FALSE(silent.passed());
  CHECK(silent.error.find("asked to run on cuda, the case put no world on it and gave no reason") !=
        std::string::npos);
  CHECK(silent.ran_on.backend == "cpu");
  const verify::CaseResult said = verify::run_case(idle_case(true), cuda);
  CHECK(said.passed());
  CHECK(said.ran_on.text() == "cpu — a closed form, nothing to step");
  // On the CPU nothing needs a reason.
  const verify::CaseResult on_cpu = verify::run_case(idle_case(false), verify::Options{});
  CHECK(on_cpu.passed());
  CHECK(on_cpu.ran_on.text() == "cpu");
  // The runner keeps its own id, group and verdict.
  CHECK(on_cpu.id == "test.idle");
  CHECK(on_cpu.group == "Test group");
}

TEST_CASE("RanOn and the backend tally say where cases ran", "[verify][backend]") {
  verify::RanOn r;
  CHECK(r.text() == "cpu");
  r.requested = "cuda";
  r.host = "no world";
  CHECK(r.text() == "cpu — no world");
  r.backend = "cuda";
  r.device = "cuda (NVIDIA H100)";
  r.host.clear();
  CHECK(r.text() == "cuda (NVIDIA H100)");
  r.host = "reference solves";
  CHECK(r.text() == "cuda (NVIDIA H100); on the host: reference solves");
  r.host.clear();
  r.fallback =
      "cuda (NVIDIA H100) failed while stepping (out of memory); continuing on the CPU backend from step 0";
  CHECK(r.text().rfind(
            "cuda (NVIDIA H100), fell back to the cpu: cuda (NVIDIA H100) failed while stepping",
            0) == 0);

  std::vector<verify::CaseResult> rs(4);
  for (auto& c : rs) c.ran_on.requested = "cuda";
  rs[0].ran_on.backend = rs[1].ran_on.backend = rs[2].ran_on.backend = "cuda";
  rs[0].ran_on.device = rs[1].ran_on.device = rs[2].ran_on.device = "cuda (NVIDIA H100)";
  rs[2].ran_on.fallback = "failed";
  rs[3].ran_on.host = "no world";
  const verify::BackendTally t = verify::tally_backends(rs);
  CHECK(t.on_device == 2);
  CHECK(t.fell_back == 1);
  CHECK(t.on_cpu == 1);
  CHECK(t.device == "cuda (NVIDIA H100)");
  CHECK(
      verify::backend_tally_text(rs, "cuda") ==
      "2 cases on cuda (NVIDIA H100), 1 on the cpu (each says why), 1 fell back from the device to the cpu");
  std::vector<verify::CaseResult> on_cpu(3);
  CHECK(verify::backend_tally_text(on_cpu, "cpu") == "3 cases on the cpu backend (the reference)");
}

TEST_CASE("verify takes cpu or cuda and says when cuda cannot run here", "[verify][backend]") {
  CHECK_NOTHROW(verify::check_backend_name("cpu"));
  CHECK_NOTHROW(verify::check_backend_name("cuda"));
  for (const char* bad : {"gpu", "auto", "", "CUDA"}) {
    INFO(bad);
    try {
      verify::check_backend_name(bad);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("expected cpu (the reference) or cuda, got '" +
                                       std::string(bad) + "'") != std::string::npos);
    }
  }
  CHECK(verify::backend_unavailable("cpu").empty());
  const std::string why = verify::backend_unavailable("cuda");
  CHECK(why.empty() == cuda_device_available());
  if (!why.empty())
    CHECK((why.find("no CUDA device") == 0 || why.find("this build has no CUDA support") == 0));
}
