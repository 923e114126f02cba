// Name tables (sim/core/names.h): one list per enum for the writers and the scene reader.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "sim/core/error.h"
#include "sim/core/names.h"
#include "sim/io/json.h"
#include "sim/io/json_read.h"
#include "sim/mpm/mpm_params.h"
#include "sim/mpm/mpm_world.h"
#include "sim/rigid/rigid_world.h"
#include "sim/scene/scene.h"
#include "sim/selfcheck/verdict.h"

namespace ps {
namespace {

/// Every name is distinct, reads back as its own value, and the value names as it.
template <class E, size_t N>
void check_round_trip(const NameTable<E, N>& t) {
  std::set<std::string> seen;
  for (size_t i = 0; i < N; ++i) {
    const E e = t.value(static_cast<int>(i));
    CHECK(std::string(t(e)) == t.names[i]);
    REQUIRE(t.find(t.names[i]).has_value());
    CHECK(*t.find(t.names[i]) == e);
    CHECK(seen.insert(t.names[i]).second);
  }
  CHECK_FALSE(t.find("no such name").has_value());
  CHECK(std::string(t(t.value(static_cast<int>(N)))) == "?");  // one past the end
}

}  // namespace

TEST_CASE("Name tables round-trip every value and name the enums' values in their order",
          "[names]") {
  check_round_trip(kTransferNames);
  check_round_trip(kFlipAdvectNames);
  check_round_trip(kKernelNames);
  check_round_trip(kBoundaryNames);
  check_round_trip(kPresetNames);
  check_round_trip(rigid::kBodyTypeNames);
  check_round_trip(kVerdictStateNames);
  // The order is the enums' (the tables are indexed by value).
  CHECK(std::string(transfer_name(Transfer::PolyPIC)) == "polypic");
  CHECK(std::string(kernel_name(Kernel::Linear)) == "linear");  // Kernel starts at 1
  CHECK(std::string(kernel_name(Kernel::Cubic)) == "cubic");
  CHECK(std::string(boundary_name(Boundary::Separate)) == "separate");
  CHECK(std::string(preset_name(Preset::Dilation)) == "dilation");
  CHECK(std::string(rigid::body_type_name(rigid::BodyType::Kinematic)) == "kinematic");
}

TEST_CASE(
    "The scene reader takes a name table: the default when absent, the value named, and a "
    "located error listing the names",
    "[names]") {
  Json doc = Json::parse(R"({"kernel": "cubic", "bad": "quartic"})", "solver.json");
  ObjReader r(doc, "solver");
  CHECK(r.choice("kernel", Kernel::Quadratic, kKernelNames) == Kernel::Cubic);
  CHECK(r.choice("absent", Kernel::Linear, kKernelNames) == Kernel::Linear);
  try {
    r.choice("bad", Kernel::Quadratic, kKernelNames);
    FAIL("an unknown name was accepted");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("solver.json:1") != std::string::npos);
    CHECK(what.find("solver.bad") != std::string::npos);
    CHECK(what.find("linear") != std::string::npos);
    CHECK(what.find("cubic") != std::string::npos);
  }
}

}  // namespace ps
