// SGF lists: loading (order, overlaps, subfolders, errors), saving (byte
// identical), the editor model, and applying forces (array level and a real
// MpmWorld).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include "sim/mpm/mpm_world.h"
#include "sim/scene/mpm_sgf.h"
#include "sim/sgf/sgf.h"

using namespace ps;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(PS_TEST_DATA_DIR) + "/sgf/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A fresh empty folder under the system temp directory.
std::string temp_dir(const std::string& tag) {
  static std::mt19937_64 rng(std::random_device{}());
  fs::path d = fs::temp_directory_path() / ("ps_sgf_" + tag + "_" + std::to_string(rng()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

SgfFile file(int64_t s, int64_t e, std::vector<SgfRow> rows) {
  SgfFile f;
  f.start = s;
  f.end = e;
  f.rows = std::move(rows);
  return f;
}

/// Forces at `step` on particles with IDs 1..n (index = ID - 1).
std::vector<Vec2> forces_at(SgfSchedule& s, int64_t step, size_t n) {
  std::vector<uint32_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = static_cast<uint32_t>(i + 1);
  IdIndexMap map(ids.data(), n);
  std::vector<Vec2> f(n);
  s.add_forces(step, map, f.data(), n);
  return f;
}

}  // namespace

TEST_CASE(
    "SGF folder: files in step order, subfolders and other files ignored, byte-identical re-save",
    "[sgf]") {
  const std::string dir = kData + "basic";
  const SgfLoadResult r = load_sgf_folder(dir);
  REQUIRE(r.ok());
  REQUIRE(r.list.files.size() == 2);  // nested/SGF1-10.csv and README.txt ignored
  CHECK(r.list.files[0].start == 1);
  CHECK(r.list.files[0].end == 10);
  CHECK(r.list.files[1].start == 5);
  CHECK(r.list.files[1].end == 20);
  REQUIRE(r.list.files[1].rows.size() == 3);
  CHECK(r.list.files[1].rows[1].id == 4u);
  CHECK(r.list.files[1].rows[1].fx == -1e-07);
  CHECK(r.list.files[1].rows[1].fy == 2.5e20);
  CHECK(r.list.files[0].rows[0].fy == 400000.0);

  const std::string out = temp_dir("resave");
  save_sgf_folder(r.list, out);
  for (const char* name : {"SGF1-10.csv", "SGF5-20.csv"}) {
    INFO(name);
    CHECK(slurp(out + "/" + name) == slurp(dir + "/" + name));
  }
  // A second save of a smaller list replaces the set (stale SGF files go).
  SgfList smaller;
  smaller.files.push_back(r.list.files[1]);
  save_sgf_folder(smaller, out);
  CHECK_FALSE(fs::exists(out + "/SGF1-10.csv"));
  CHECK(fs::exists(out + "/SGF5-20.csv"));
  fs::remove_all(out);
}

TEST_CASE(
    "SGF: malformed names and rows are reported precisely - a file with a problem is skipped whole",
    "[sgf]") {
  const std::string dir = kData + "malformed";
  const SgfLoadResult r = load_sgf_folder(dir);
  std::vector<std::string> m;
  for (const auto& e : r.diagnostics) m.push_back(e.what());
  const std::string f15 = (fs::path(dir) / "SGF1-5.csv").string();
  const std::string f23 = (fs::path(dir) / "SGF2-3.csv").string();
  REQUIRE(m.size() == 7);
  CHECK(m[0] == f15 + ":3:3: field 'FX': expected a finite number, got 'abc'");
  CHECK(m[1] == f15 + ":4:6: field 'FZ': expected 4 fields ID,FX,FY,FZ, got 3");
  CHECK(m[2] == f15 + ":6:1: field 'ID': expected a particle ID (integer >= 1), got '0'");
  CHECK(m[3] == f15 + ":8:9: field 'row': expected 4 fields ID,FX,FY,FZ, got 5");
  CHECK(m[4] == f23 + ":1:1: field 'header': expected the header 'ID,FX,FY,FZ', got 'ID,FORCE'");
  CHECK(m[5].find("SGF9-2.csv: field 'name': expected a file name SGF<start>-<end>.csv") !=
        std::string::npos);
  CHECK(m[6].find("SGFx-3.csv: field 'name'") != std::string::npos);
  CHECK(r.diagnostics[0].loc().line == 3);
  CHECK(r.diagnostics[0].field() == "FX");
  // Every file has a problem: none loads (a move must not reach part of its group), each is listed.
  CHECK(r.list.files.empty());
  REQUIRE(r.skipped.size() == 4);
  CHECK(r.skipped[0] == f15);
  CHECK(r.skipped[1] == f23);
  // The rows themselves still parse as they did (parse_sgf_csv keeps the good rows of a file).
  std::vector<InputError> diags;
  const SgfFile a = parse_sgf_csv("ID,FX,FY,FZ\r\n1,1,2,3\r\n2,abc,0,0\r\n4, 4.5 ,-1,0\r\n",
                                  "x.csv", 1, 5, diags);
  CHECK(diags.size() == 1);
  REQUIRE(a.rows.size() == 2);
  CHECK(a.rows[1].fx == 4.5);
}

TEST_CASE("SGF names", "[sgf]") {
  int64_t s = -1, e = -1;
  CHECK(parse_sgf_file_name("SGF0-100.csv", s, e));
  CHECK((s == 0 && e == 100));
  CHECK(parse_sgf_file_name("SGF95000-100000.csv", s, e));
  CHECK(e == 100000);
  CHECK_FALSE(parse_sgf_file_name("SGF5.csv", s, e));
  CHECK_FALSE(parse_sgf_file_name("SGF-1-5.csv", s, e));
  CHECK_FALSE(parse_sgf_file_name("SGF7-3.csv", s, e));
  CHECK_FALSE(parse_sgf_file_name("SGF1-2.txt", s, e));
  CHECK(sgf_file_name(3001, 6000) == "SGF3001-6000.csv");
}

TEST_CASE("SGF apply: a group gets F exactly in [s0, s1], not at s0-1 or s1+1 - others untouched",
          "[sgf]") {
  const int64_t s0 = 5, s1 = 9;
  const Vec2 F{2.5f, -1.25f};
  SgfSet set;
  SgfGroup g;
  g.name = "arm";
  g.ids = {2, 3, 7};
  g.entries.push_back(SgfEntry{s0, s1, F.x, F.y, 99.0});  // z is ignored in 2D
  set.groups.push_back(g);
  SgfSchedule sch(set);
  for (int64_t step = 1; step <= 12; ++step) {
    INFO("step " << step);
    const std::vector<Vec2> f = forces_at(sch, step, 10);
    const bool on = step >= s0 && step <= s1;
    for (uint32_t id = 1; id <= 10; ++id) {
      const bool member = id == 2 || id == 3 || id == 7;
      const Vec2 want = on && member ? F : Vec2{};
      CHECK(f[id - 1] == want);
    }
  }
  CHECK(sch.first_step() == s0);
  CHECK(sch.last_step() == s1);
}

TEST_CASE("SGF apply: overlapping ranges add - file order does not matter", "[sgf]") {
  const SgfFile a = file(1, 10, {{1, 1.0, 0.0, 0.0}, {2, 0.5, 0.5, 0.0}});
  const SgfFile b = file(5, 20, {{1, 0.25, 2.0, 0.0}, {3, -1.0, 0.0, 0.0}});
  const SgfFile c = file(8, 8, {{1, 0.125, 0.0, 0.0}});
  SgfList ab, cba;
  ab.files = {a, b, c};
  cba.files = {c, b, a};
  SgfSchedule s1(ab), s2(cba);
  for (int64_t step = 0; step <= 22; ++step) {
    INFO("step " << step);
    const auto f1 = forces_at(s1, step, 3);
    const auto f2 = forces_at(s2, step, 3);
    for (size_t i = 0; i < 3; ++i) CHECK(f1[i] == f2[i]);  // bitwise, same summation order
    Vec2 want1{};
    if (step >= 1 && step <= 10) want1 += Vec2{1.f, 0.f};
    if (step >= 5 && step <= 20) want1 += Vec2{0.25f, 2.f};
    if (step == 8) want1 += Vec2{0.125f, 0.f};
    CHECK(f1[0] == want1);
    CHECK(f1[2] == (step >= 5 && step <= 20 ? Vec2{-1.f, 0.f} : Vec2{}));
  }
  // Going backwards rewinds the event list.
  CHECK(forces_at(s1, 3, 3)[0] == Vec2{1.f, 0.f});
  CHECK(forces_at(s1, 30, 3)[0] == Vec2{});
  CHECK(forces_at(s1, 8, 3)[0] == Vec2{1.375f, 2.f});
}

TEST_CASE("SGF apply: the event list touches only active files", "[sgf]") {
  SgfList list;
  for (int k = 0; k < 200; ++k)
    list.files.push_back(file(10 * k + 1, 10 * k + 10, {{1, double(k), 0.0, 0.0}}));
  SgfSchedule s(list);
  for (int64_t step = 1; step <= 2000; ++step) {
    const auto& act = s.active(step);
    REQUIRE(act.size() == 1);
    REQUIRE(act[0] == static_cast<uint32_t>((step - 1) / 10));
  }
  CHECK(s.active(2001).empty());
}

TEST_CASE("SGF apply: IDs map to indices after reordering - missing IDs are counted", "[sgf]") {
  SgfList list;
  list.files.push_back(
      file(1, 1, {{40, 1.0, 0.0, 0.0}, {7, 0.0, 1.0, 0.0}, {999999, 5.0, 5.0, 0.0}}));
  const uint32_t ids[3] = {7, 123456789, 40};  // sparse IDs use the sorted map
  SgfForceApplier apply(list);
  Vec2 f[3] = {};
  CHECK(apply(1, ids, 3, f));
  CHECK(f[0] == Vec2{0.f, 1.f});
  CHECK(f[1] == Vec2{});
  CHECK(f[2] == Vec2{1.f, 0.f});
  CHECK(apply.schedule().missing() == 1);
  Vec2 g[3] = {};
  CHECK_FALSE(apply(2, ids, 3, g));
  CHECK(g[0] == Vec2{});
}

TEST_CASE("SGF: MPM hook zeroes fext and reports activity", "[sgf]") {
  SgfList list;
  list.files.push_back(file(2, 3, {{2, 4.0, 0.0, 0.0}}));
  auto hook = make_mpm_force_hook(list);
  MpmParticles p;
  for (int i = 0; i < 3; ++i) p.add(Vec2{0.5f, 0.5f}, Vec2{}, 1.f, 1.f, 0, 0);
  p.fext[0] = Vec2{7.f, 7.f};  // stale value from someone else
  CHECK_FALSE(hook(1, p));
  CHECK(hook(2, p));
  CHECK(p.fext[0] == Vec2{});
  CHECK(p.fext[1] == Vec2{4.f, 0.f});
  CHECK(hook(3, p));
  CHECK(p.fext[1] == Vec2{4.f, 0.f});  // set, not accumulated across steps
  CHECK_FALSE(hook(4, p));
  CHECK(p.fext[1] == Vec2{});
}

TEST_CASE("SGF: a row naming a retired or unknown ID is reported once, not silently dropped",
          "[sgf]") {
  SgfList list;
  list.files.push_back(file(1, 5, {{2, 1.0, 0.0, 0.0}, {5, 0.0, 1.0, 0.0}, {50, 1.0, 1.0, 0.0}}));
  std::vector<std::pair<int64_t, std::vector<uint32_t>>> reports;
  std::string notice;
  const std::vector<uint32_t> merged_away = {3, 5};  // as MpmWorld::id_retired would say
  auto retired = [&](uint32_t id) {
    return std::count(merged_away.begin(), merged_away.end(), id) > 0;
  };
  auto hook = make_mpm_force_hook(
      list, [&](int64_t step, const std::vector<uint32_t>& ids, const MpmParticles&) {
        reports.emplace_back(step, ids);
        notice = sgf_missing_notice(step, ids, retired);
      });
  MpmParticles p;
  for (int i = 0; i < 3; ++i) p.add(Vec2{0.5f, 0.5f}, Vec2{}, 1.f, 1.f, 0, 0);  // IDs 1, 2, 3
  CHECK(hook(1, p));
  CHECK(p.fext[1] == Vec2{1.f, 0.f});  // the live row still applies
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].first == 1);
  CHECK(reports[0].second == std::vector<uint32_t>{5, 50});
  CHECK(notice.find("ID 5, 50") != std::string::npos);
  CHECK(notice.find("1 retired by resampling") != std::string::npos);
  CHECK(hook(2, p));
  CHECK(hook(3, p));
  CHECK(reports.size() == 1);  // once per ID, not once per step
  // Another missing ID later is reported on its own.
  p.id[2] = 77;  // (as if reindexed): ID 3 disappears
  list.files[0].rows.push_back(SgfRow{3, 0.0, 0.0, 1.0});
  auto hook2 = make_mpm_force_hook(
      list, [&](int64_t step, const std::vector<uint32_t>& ids, const MpmParticles&) {
        reports.emplace_back(step, ids);
        notice = sgf_missing_notice(step, ids, retired);
      });
  CHECK(hook2(4, p));
  REQUIRE(reports.size() == 2);
  CHECK(reports[1].second == std::vector<uint32_t>{3, 5, 50});
  CHECK(notice.find("2 retired by resampling, the others never existed") != std::string::npos);
  // ID 0 (a 0-based mistake) never existed, resampling or not.
  CHECK(sgf_missing_notice(7, {0}, retired).find("no particle ever had these IDs") !=
        std::string::npos);
}

TEST_CASE("SGF in a real MpmWorld: a free group gains dv = F/m (s1-s0+1) dt, others untouched",
          "[sgf]") {
  MpmWorld w;
  w.grid = GridSpec{};  // unit domain, 128 cells
  w.solver.gravity = Vec2{0.f, 0.f};
  w.solver.dt = 1e-4f;
  w.solver.adaptive_dt = false;
  MaterialParams tracer;
  tracer.type = MaterialType::Tracer;
  w.materials = {tracer};
  const float m = 1e-3f;
  // Group A (IDs 1..16) near x = 0.3, group B (IDs 17..32) near x = 0.7.
  for (int body = 0; body < 2; ++body)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i)
        w.particles.add(Vec2{0.3f + 0.4f * body + 0.004f * i, 0.5f + 0.004f * j}, Vec2{}, m, 1e-5f,
                        0, static_cast<uint16_t>(body));
  w.host_changed();
  const int64_t s0 = 4, s1 = 13;
  const Vec2 F{0.5f, -0.25f};
  SgfSet set;
  SgfGroup g;
  g.name = "A";
  for (uint32_t id = 1; id <= 16; ++id) g.ids.push_back(id);
  g.entries.push_back(SgfEntry{s0, s1, F.x, F.y, 0.0});
  set.groups.push_back(g);
  w.force_hook = make_mpm_force_hook(set);

  REQUIRE(w.step(static_cast<int>(s0 - 1)).ok);  // steps 1..s0-1: no force
  w.sync();
  for (size_t i = 0; i < w.particles.size(); ++i) CHECK(w.particles.v[i] == Vec2{});
  REQUIRE(w.step(static_cast<int>(s1 - s0 + 1)).ok);
  w.sync();
  const Vec2 after_s1 = w.particles.v[0];
  REQUIRE(w.step(5).ok);  // steps s1+1..: no force, free flight keeps v
  w.sync();
  const double dv_x = double(F.x) / m * double(s1 - s0 + 1) * w.solver.dt;
  const double dv_y = double(F.y) / m * double(s1 - s0 + 1) * w.solver.dt;
  double px = 0.0, py = 0.0;
  for (size_t i = 0; i < w.particles.size(); ++i) {
    INFO("particle " << w.particles.id[i]);
    if (w.particles.group[i] == 0) {
      CHECK(w.particles.v[i].x == Approx(dv_x).epsilon(1e-4));
      CHECK(w.particles.v[i].y == Approx(dv_y).epsilon(1e-4));
      px += double(w.particles.mass[i]) * w.particles.v[i].x;
      py += double(w.particles.mass[i]) * w.particles.v[i].y;
    } else {
      CHECK(w.particles.v[i] == Vec2{});
      CHECK(w.particles.x[i].x >= 0.7f);  // never moved
    }
  }
  CHECK(w.particles.v[0].x == Approx(after_s1.x).epsilon(1e-5));
  // Momentum change = sum F dt over the active steps.
  CHECK(px == Approx(16.0 * F.x * w.solver.dt * double(s1 - s0 + 1)).epsilon(1e-4));
  CHECK(py == Approx(16.0 * F.y * w.solver.dt * double(s1 - s0 + 1)).epsilon(1e-4));
}

TEST_CASE("SGF editor model: flatten and infer are inverse for distinct groups", "[sgf]") {
  SgfSet set;
  SgfGroup a;
  a.name = "group 1";
  a.ids = {1, 2, 3};
  a.entries = {SgfEntry{1, 100, 0.0, 4e5, 0.0}, SgfEntry{101, 200, 4e5, -4e5, 0.0}};
  SgfGroup b;
  b.name = "group 2";
  b.ids = {10, 11};
  b.entries = {SgfEntry{1, 100, -1.5, 0.0, 0.0}};
  set.groups = {a, b};
  const SgfList flat = sgf_flatten(set);
  REQUIRE(flat.files.size() == 2);  // ranges [1,100] (shared) and [101,200]
  CHECK(flat.files[0].rows.size() == 5);
  CHECK(flat.files[1].rows.size() == 3);
  const SgfSet back = sgf_infer_groups(flat);
  REQUIRE(back.groups.size() == 2);
  CHECK(back.groups[0].name == "group 1");
  CHECK(back.groups[0].ids == a.ids);
  REQUIRE(back.groups[0].entries.size() == 2);
  CHECK(back.groups[0].entries[1].s0 == 101);
  CHECK(back.groups[0].entries[1].fy == -4e5);
  CHECK(back.groups[1].ids == b.ids);
}

TEST_CASE("SGF editor set: save and load with groups.json keeps names, colours, IDs, entries",
          "[sgf]") {
  SgfSet set;
  SgfGroup a;
  a.name = "left \"arm\"";
  a.color[0] = 0.1f;
  a.color[1] = 0.2f;
  a.color[2] = 0.9f;
  for (uint32_t id = 1; id <= 40; ++id) a.ids.push_back(id * 3);
  a.entries = {SgfEntry{1, 50, 1.0, 2.0, 0.0}, SgfEntry{51, 60, 0.1, -0.2, 0.0}};
  SgfGroup b;  // overlaps a's IDs and shares a's first range with one force
  b.name = "twin";
  b.ids = {3, 6, 9};
  b.entries = {SgfEntry{1, 50, 1.0, 2.0, 0.0}};
  SgfGroup c;  // no entries yet
  c.name = "belt";
  c.ids = {500, 501};
  set.groups = {a, b, c};

  const std::string dir = temp_dir("set");
  save_sgf_set(set, dir);
  CHECK(fs::exists(dir + "/groups.json"));
  CHECK(fs::exists(dir + "/SGF1-50.csv"));
  CHECK(fs::exists(dir + "/SGF51-60.csv"));
  const SgfSetLoadResult r = load_sgf_set(dir);
  for (const auto& e : r.diagnostics) INFO(e.what());
  REQUIRE(r.ok());
  REQUIRE(r.set.groups.size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    const SgfGroup& x = set.groups[k];
    const SgfGroup& y = r.set.groups[k];
    CHECK(y.name == x.name);
    for (int ch = 0; ch < 3; ++ch) CHECK(y.color[ch] == x.color[ch]);
    CHECK(y.ids == x.ids);
    REQUIRE(y.entries.size() == x.entries.size());
    for (size_t e = 0; e < x.entries.size(); ++e) {
      CHECK(y.entries[e].s0 == x.entries[e].s0);
      CHECK(y.entries[e].s1 == x.entries[e].s1);
      CHECK(y.entries[e].fx == x.entries[e].fx);
      CHECK(y.entries[e].fy == x.entries[e].fy);
    }
  }
  // Saving what was loaded gives the same bytes.
  const std::string dir2 = temp_dir("set2");
  save_sgf_set(r.set, dir2);
  for (const char* name : {"groups.json", "SGF1-50.csv", "SGF51-60.csv"}) {
    INFO(name);
    CHECK(slurp(dir2 + "/" + name) == slurp(dir + "/" + name));
  }

  // A hand-added row nobody claims becomes an "unassigned" group.
  {
    std::ofstream f(dir + "/SGF51-60.csv", std::ios::app | std::ios::binary);
    f << "777,0,9,0\n";
  }
  const SgfSetLoadResult r2 = load_sgf_set(dir);
  REQUIRE(r2.ok());
  REQUIRE(r2.set.groups.size() == 4);
  CHECK(r2.set.groups[3].name == "unassigned 1");
  CHECK(r2.set.groups[3].ids == std::vector<uint32_t>{777});
  CHECK(r2.set.groups[3].entries[0].s0 == 51);

  // An index entry that no longer matches its rows is reported and skipped.
  {
    std::ofstream f(dir + "/SGF1-50.csv", std::ios::binary | std::ios::trunc);
    f << "ID,FX,FY,FZ\n3,1,2,0\n";
  }
  const SgfSetLoadResult r3 = load_sgf_set(dir);
  REQUIRE_FALSE(r3.ok());
  CHECK(std::string(r3.diagnostics[0].what()).find("groups.json") != std::string::npos);
  CHECK(r3.diagnostics[0].field().find("entries[0]") != std::string::npos);
  fs::remove_all(dir);
  fs::remove_all(dir2);
}

TEST_CASE("SGF: folder without groups.json loads as inferred groups", "[sgf]") {
  const SgfSetLoadResult r = load_sgf_set(kData + "basic");
  REQUIRE(r.ok());
  // SGF1-10: ids {1,2} at (0,4e5), {3} at (1.5,-2.25); SGF5-20: {3}, {4}, {2}.
  REQUIRE(r.set.groups.size() == 4);
  CHECK(r.set.groups[0].ids == std::vector<uint32_t>{1, 2});
  CHECK(r.set.groups[1].ids == std::vector<uint32_t>{3});
  CHECK(r.set.groups[1].entries.size() == 2);
}

TEST_CASE("ID lists: one ID per line, bad lines reported", "[sgf]") {
  const std::string dir = temp_dir("ids");
  const std::string path = dir + "/belt.txt";
  save_id_list({5, 6, 42}, path);
  CHECK(slurp(path) == "5\n6\n42\n");
  std::vector<InputError> d;
  CHECK(load_id_list(path, d) == std::vector<uint32_t>{5, 6, 42});
  CHECK(d.empty());
  {
    std::ofstream f(path, std::ios::app);
    f << "\nx7\n8\n";
  }
  CHECK(load_id_list(path, d) == std::vector<uint32_t>{5, 6, 42, 8});
  REQUIRE(d.size() == 1);
  CHECK(std::string(d[0].what()) ==
        path + ":5:1: field 'ID': expected one particle ID (integer >= 1) per line, got 'x7'");
  fs::remove_all(dir);
}
