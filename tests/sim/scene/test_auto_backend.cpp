// "auto" in the scene builder (sim/scene/auto_backend.h): the rule a program
// installs decides; without one the CPU, with a notice. The test mains install
// the CUDA self-check gate (sim/selfcheck/verdict.h), as sandbox does.
#include <catch2/catch.hpp>

#include "sim/mpm/mpm_world.h"
#include "sim/scene/auto_backend.h"
#include "sim/scene/simulation.h"
#include "sim/selfcheck/verdict.h"

using namespace ps;

TEST_CASE("'auto' asks the installed rule, after the scene has loaded, and a named backend is kept",
          "[scene][backend]") {
  int asked = 0;
  set_auto_backend_rule([&] {
    ++asked;
    return AutoChoice{"cpu", "chosen by the test's rule"};
  });
  CHECK(resolve_backend("cuda").kind == "cuda");
  CHECK(asked == 0);
  std::unique_ptr<Simulation> sim = load_simulation("mpm88", {}, "auto", 1);
  CHECK(asked == 1);
  CHECK(sim->take_notice() == "chosen by the test's rule");
  // A bad file fails before the rule is asked (no self-check for a scene that cannot load).
  CHECK_THROWS(load_simulation("mpm88", {"domain.grid=-3"}, "auto", 1));
  CHECK(asked == 1);

  set_auto_backend_rule(nullptr);
  const AutoChoice none = resolve_backend("auto");
  CHECK(none.kind == "cpu");
  CHECK(none.notice.find("no CUDA self-check") != std::string::npos);

  install_auto_backend();  // back to what the test main installed
  CHECK(resolve_backend("auto").kind == choose_auto_backend().kind);
}
