// P4P / P4C files: layout, lossless round trips, located errors, MPM conversion.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include "sim/io/p4.h"
#include "sim/mpm/mpm_particles.h"

using namespace ps;

namespace {

const std::string kDir = std::string(PS_TEST_DATA_DIR) + "/p4/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> messages(const std::vector<InputError>& d) {
  std::vector<std::string> m;
  for (const auto& e : d) m.push_back(e.what());
  return m;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

TEST_CASE("P4P: multi-timestep file loads and re-saves byte-identical", "[p4]") {
  const std::string path = kDir + "sample.p4p";
  const P4pLoad r = load_p4p(path);
  INFO(messages(r.diagnostics).size());
  REQUIRE(r.ok());
  REQUIRE(r.frames.size() == 2);
  CHECK(r.frames[0].time == 0.0);
  CHECK(r.frames[1].time == 0.005);
  REQUIRE(r.frames[0].particles.size() == 3);
  const P4Particle& p = r.frames[0].particles[2];
  CHECK(p.id == 3u);
  CHECK(p.group == 1);
  CHECK(p.volume == 4.1887902047863905);
  CHECK(p.mass == 4188.790204786391);
  CHECK(p.px == 97.5);
  CHECK(p.py == 14.25);
  CHECK(p.vx == -0.001);
  CHECK(p.vy == 1e-05);
  const P4Particle& q = r.frames[1].particles[2];
  CHECK(std::signbit(q.pz));
  CHECK(q.vx == -1.25e20);
  CHECK(r.frames[1].particles[0].px == 99.00000000000001);
  CHECK(p4p_text(r.frames) == slurp(path));
}

TEST_CASE("P4P: the original writers' variants load (single space, 0.0, CRLF, blank lines)",
          "[p4]") {
  const P4pLoad r = load_p4p(kDir + "original_style.p4p");
  REQUIRE(r.ok());
  REQUIRE(r.frames.size() == 2);
  CHECK(r.frames[0].particles.size() == 2);
  CHECK(r.frames[0].particles[1].group == 3);
  CHECK(r.frames[0].particles[1].px == 101.5);
  CHECK(r.frames[1].time == 0.01);
  CHECK(r.frames[1].particles[0].vy == -50.0);
  // Our writer's canonical form of the same values, and it is stable.
  const std::string text = p4p_text(r.frames);
  CHECK(text.compare(0, 20, "TIMESTEP  PARTICLES\n") == 0);
  CHECK(text.find("\n1 0 4.18879 4188.79 99 12 0 0 0 0\n") != std::string::npos);
  const P4pLoad again = parse_p4p(text, "again");
  REQUIRE(again.ok());
  CHECK(p4p_text(again.frames) == text);
}

TEST_CASE("P4C: bonded column, empty frames and the old 8-column header round-trip", "[p4]") {
  const std::string path = kDir + "sample.p4c";
  const P4cLoad r = load_p4c(path);
  REQUIRE(r.ok());
  REQUIRE(r.frames.size() == 2);
  REQUIRE(r.frames[0].contacts.size() == 2);
  CHECK(r.frames[1].contacts.empty());
  const P4Contact& c = r.frames[0].contacts[1];
  CHECK(c.p1 == 2u);
  CHECK(c.p2 == 3u);
  CHECK(c.cy == 13.125);
  CHECK(c.fx == -12.5);
  CHECK(c.fy == 3.75e-06);
  CHECK(c.bonded == 0);
  CHECK(r.frames[0].contacts[0].bonded == 1);
  CHECK(p4c_text(r.frames) == slurp(path));

  const P4cLoad old = load_p4c(kDir + "old_header.p4c");
  REQUIRE(old.ok());
  REQUIRE(old.frames.size() == 1);
  CHECK_FALSE(old.frames[0].has_bonded_column);
  CHECK(p4c_text(old.frames) == slurp(kDir + "old_header.p4c") + "\n");
}

TEST_CASE("P4P: malformed rows and blocks name file, line, column and field - the rest loads",
          "[p4]") {
  const std::string path = kDir + "bad.p4p";
  const P4pLoad r = load_p4p(path);
  const std::vector<std::string> m = messages(r.diagnostics);
  REQUIRE(m.size() == 4);
  CHECK(m[0] == path + ":5:9: field 'PX': expected a finite number, got 'x'");
  CHECK(m[1] == path + ":6:18: field 'VZ': expected 10 fields, got 9");
  CHECK(m[2] == path + ":7:1: field 'ID': expected a particle ID (integer >= 1), got '-4'");
  CHECK(m[3] == path + ":9:5: field 'count': expected a row count (integer >= 0), got 'abc'");
  REQUIRE(r.frames.size() == 2);
  REQUIRE(r.frames[0].particles.size() == 1);
  CHECK(r.frames[0].particles[0].id == 1u);
  CHECK(r.frames[1].time == 2.0);
  REQUIRE(r.frames[1].particles.size() == 1);
  CHECK(r.frames[1].particles[0].id == 5u);
  CHECK(r.diagnostics[0].field() == "PX");
  CHECK(r.diagnostics[0].loc().line == 5);
}

TEST_CASE("P4C: malformed rows are reported with their field", "[p4]") {
  const std::string path = kDir + "bad.p4c";
  const P4cLoad r = load_p4c(path);
  const std::vector<std::string> m = messages(r.diagnostics);
  REQUIRE(m.size() == 2);
  CHECK(m[0] == path + ":5:17: field 'CONTACT_IS_BONDED': expected an integer, got 'yes'");
  CHECK(m[1] == path + ":6:14: field 'FZ': expected 9 fields, got 7");
  REQUIRE(r.frames.size() == 1);
  CHECK(r.frames[0].contacts.size() == 1);
}

TEST_CASE("P4: missing file, wrong title, short block", "[p4]") {
  const P4pLoad none = load_p4p(kDir + "does_not_exist.p4p");
  REQUIRE(none.diagnostics.size() == 1);
  CHECK(std::string(none.diagnostics[0].what()).find("cannot open file") != std::string::npos);

  const P4pLoad wrong = parse_p4p("TIMESTEP  CONTACTS\n0 0\nP1  P2\n", "x.p4p");
  REQUIRE(wrong.diagnostics.size() == 1);
  CHECK(
      std::string(wrong.diagnostics[0].what()) ==
      "x.p4p:1:1: field 'TIMESTEP': expected the block title 'TIMESTEP  PARTICLES', got 'TIMESTEP  CONTACTS'");

  const P4pLoad shortb = parse_p4p(
      "TIMESTEP  PARTICLES\n0 2\nID  GROUP  VOLUME  MASS  PX  PY  PZ  VX  VY  VZ\n1 0 1 1 0 0 0 0 0 0\n",
      "s.p4p");
  REQUIRE(shortb.diagnostics.size() == 1);
  CHECK(std::string(shortb.diagnostics[0].what()) ==
        "s.p4p:1:1: field 'count': block declares 2 rows but has 1");
  CHECK(shortb.frames[0].particles.size() == 1);
}

TEST_CASE("P4: MPM particles round-trip bit-identical through text", "[p4]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  MpmParticles p;
  for (int i = 0; i < 500; ++i)
    p.add(Vec2{u(rng), u(rng) * 1e-3f}, Vec2{u(rng) * 1e5f, u(rng)}, std::fabs(u(rng)) + 1e-6f,
          std::fabs(u(rng)) * 1e-7f, 0, static_cast<uint16_t>(i % 5));
  p.id[3] = 1000000;  // IDs are carried, not renumbered
  for (P4Precision pr : {P4Precision::Float, P4Precision::Double}) {
    const std::string text = p4p_text({p4_from_mpm(p, 0.25)}, pr);
    const P4pLoad r = parse_p4p(text, "mem");
    REQUIRE(r.ok());
    REQUIRE(r.frames.size() == 1);
    CHECK(r.frames[0].time == 0.25);
    MpmParticles q;
    mpm_from_p4(r.frames[0], q, 2);
    REQUIRE(q.size() == p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      REQUIRE(bits(q.x[i].x) == bits(p.x[i].x));
      REQUIRE(bits(q.x[i].y) == bits(p.x[i].y));
      REQUIRE(bits(q.v[i].x) == bits(p.v[i].x));
      REQUIRE(bits(q.v[i].y) == bits(p.v[i].y));
      REQUIRE(bits(q.mass[i]) == bits(p.mass[i]));
      REQUIRE(bits(q.vol0[i]) == bits(p.vol0[i]));
      REQUIRE(q.id[i] == p.id[i]);
      REQUIRE(q.group[i] == p.group[i]);
      REQUIRE(q.material[i] == 2);
      REQUIRE(q.F[i] == Mat2::identity());
    }
    // Re-saving what was read gives the same bytes.
    CHECK(p4p_text(r.frames, pr) == text);
  }
  // Float precision writes what a person would type.
  CHECK(shortest_number(0.1f, P4Precision::Float) == "0.1");
  CHECK(shortest_number(0.1f, P4Precision::Double) == "0.10000000149011612");
  CHECK(shortest_number(400000.0) == "400000");
  CHECK(shortest_number(1e-5) == "1e-05");
  CHECK(shortest_number(1e16) == "1e+16");
  CHECK(shortest_number(0.0001) == "0.0001");
}

TEST_CASE("P4: a group that does not fit MPM is an error naming the field", "[p4]") {
  P4ParticleFrame f;
  P4Particle a;
  a.id = 9;
  a.group = 70000;
  f.particles.push_back(a);
  MpmParticles p;
  try {
    mpm_from_p4(f, p);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.field() == "GROUP");
    CHECK(std::string(e.what()).find("particle 9") != std::string::npos);
  }
}
