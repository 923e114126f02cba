// Opening files while a scene runs (render/cpu/file_open.h, what the window's
// SGF and specimen panels call): a file that does not load completely changes
// nothing live. The running Simulation keeps stepping to the same state hash
// as a twin that never tried, and the editor's SGF set stays as it was; the
// error names file, line and field.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include "render/cpu/file_open.h"
#include "sim/io/p4.h"
#include "sim/scene/simulation.h"

using namespace ps;
namespace fs = std::filesystem;

#include "tests/temp_files.h"

using ps::test::TempDir;
using ps::test::put;

namespace {

const std::string kData = std::string(PS_TEST_DATA_DIR);


SgfSet live_set() {
  SgfSet s;
  SgfGroup g;
  g.name = "pushed";
  for (uint32_t id = 1; id <= 40; ++id) g.ids.push_back(id);
  g.entries.push_back(SgfEntry{1, 400, 0.002, 0.001, 0.0});
  s.groups.push_back(g);
  return s;
}

bool same_set(const SgfSet& a, const SgfSet& b) {
  if (a.groups.size() != b.groups.size()) return false;
  for (size_t g = 0; g < a.groups.size(); ++g) {
    const SgfGroup &x = a.groups[g], &y = b.groups[g];
    if (x.name != y.name || x.ids != y.ids || x.entries.size() != y.entries.size()) return false;
    for (size_t e = 0; e < x.entries.size(); ++e)
      if (x.entries[e].s0 != y.entries[e].s0 || x.entries[e].s1 != y.entries[e].s1 ||
          x.entries[e].fx != y.entries[e].fx || x.entries[e].fy != y.entries[e].fy)
        return false;
  }
  return true;
}

/// What the window's SGF "Load" does (panel_sgf.cpp): replace the live set and
/// hand it to the simulation only when the open succeeded.
bool window_load(const std::string& folder, SgfSet& live, Simulation& sim, std::vector<std::string>& shown) {
  SgfSetOpen r = open_sgf_set(folder);
  if (!r.ok) {
    shown = r.messages;
    return false;
  }
  live = std::move(r.set);
  sim.set_force_list(sgf_list_for_sim(live));
  return true;
}

bool any_contains(const std::vector<std::string>& m, const std::string& part) {
  for (const auto& s : m)
    if (s.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("Opening bad SGF folders, P4P files and images while a scene runs leaves it untouched", "[open][sgf]") {
  for (const char* scene : {"mpm88", "dem_beam"}) {
    INFO(scene);
    std::unique_ptr<Simulation> a = load_simulation(scene, {}, "cpu", 1);
    std::unique_ptr<Simulation> b = load_simulation(scene, {}, "cpu", 1);
    SgfSet live = live_set();
    a->set_force_list(sgf_list_for_sim(live));
    b->set_force_list(sgf_list_for_sim(live));
    const int chunk = 40;
    REQUIRE(a->step(chunk).ok);
    REQUIRE(b->step(chunk).ok);

    TempDir d("open_bad");
    // A folder whose index names rows the CSV does not hold (a hand edit).
    {
      SgfSet other = live_set();
      other.groups[0].name = "other";
      save_sgf_set(other, d / "bad_index");
      put(d / "bad_index/SGF1-400.csv", "ID,FX,FY,FZ\n1,5,0,0\n2,5,0,0\n");
    }
    // A folder with one good file and one bad row.
    fs::create_directories(d / "bad_row");
    put(d / "bad_row/SGF1-10.csv", "ID,FX,FY,FZ\n1,1,0,0\n");
    put(d / "bad_row/SGF20-30.csv", "ID,FX,FY,FZ\n3,1,0,0\n4,nan?,0,0\n");

    std::vector<std::string> shown;
    CHECK_FALSE(window_load(kData + "/sgf/malformed", live, *a, shown));
    REQUIRE(shown.size() >= 2);
    CHECK(shown.front().find("not loaded, 7 problems (the current set is kept") != std::string::npos);
    CHECK(any_contains(shown, "SGF1-5.csv:3:3: field 'FX': expected a finite number, got 'abc'"));
    REQUIRE(a->step(chunk).ok);

    CHECK_FALSE(window_load(d / "bad_row", live, *a, shown));
    CHECK(any_contains(shown, "SGF20-30.csv:3:3: field 'FX'"));
    CHECK_FALSE(window_load(d / "bad_index", live, *a, shown));
    CHECK(any_contains(shown, "groups.json"));
    CHECK_FALSE(window_load(d / "no_such_folder", live, *a, shown));
    CHECK(shown.front().find("no such folder (the current set is kept)") != std::string::npos);
    CHECK_FALSE(window_load(kData + "/p4/sample.p4p", live, *a, shown));  // a file, not a folder

    // P4P / P4C and images parse into their own objects; errors name file:line:col.
    const P4pLoad p = load_p4p(kData + "/p4/bad.p4p");
    CHECK_FALSE(p.ok());
    CHECK(std::string(p.diagnostics.front().what()).find("bad.p4p:5:") != std::string::npos);
    CHECK_FALSE(load_p4c(kData + "/p4/bad.p4c").ok());
    put(d / "not_an_image.png", "this is not a PNG\n");
    const ImageOpen img = open_image_file(d / "not_an_image.png");
    CHECK_FALSE(img.ok);
    CHECK(img.message.find(d / "not_an_image.png") != std::string::npos);
    CHECK(img.image.width == 0);
    CHECK_FALSE(open_image_file(d / "missing.png").ok);
    REQUIRE(a->step(chunk).ok);
    REQUIRE(b->step(2 * chunk).ok);

    // Nothing changed: the live set, the step count, the state.
    CHECK(same_set(live, live_set()));
    CHECK(a->step_count() == b->step_count());
    CHECK(a->diagnostics().hash == b->diagnostics().hash);

    // The control: a good folder does load, and applying it does change the run
    // (so the equality above is not vacuous).
    SgfSet good;
    SgfGroup g;
    g.name = "strong";
    for (uint32_t id = 1; id <= 40; ++id) g.ids.push_back(id);
    g.entries.push_back(SgfEntry{0, 100000, -0.002, 0.0, 0.0});
    good.groups.push_back(g);
    save_sgf_set(good, d / "good");
    REQUIRE(window_load(d / "good", live, *a, shown));
    CHECK(same_set(live, good));
    REQUIRE(a->step(chunk).ok);
    REQUIRE(b->step(chunk).ok);
    CHECK(a->diagnostics().hash != b->diagnostics().hash);
  }
}

TEST_CASE("open_sgf_set: a complete folder loads, a broken one gives the verdict then at most 100 problems", "[open][sgf]") {
  TempDir d("open_many");
  std::string csv = "ID,FX,FY,FZ\n";
  for (int i = 0; i < 500; ++i) csv += "x,1,0,0\n";
  put(d / "SGF1-2.csv", csv);
  const SgfSetOpen r = open_sgf_set(d.path);
  CHECK_FALSE(r.ok);
  CHECK(r.set.groups.empty());
  REQUIRE(r.messages.size() == 101);
  CHECK(r.messages[0] == d.path + ": not loaded, 500 problems (the current set is kept; fix the files and load again)");
  CHECK(r.messages[1] == (d / "SGF1-2.csv") + ":2:1: field 'ID': expected a particle ID (integer >= 1), got 'x'");

  const SgfSetOpen ok = open_sgf_set(kData + "/sgf/basic");
  CHECK(ok.ok);
  CHECK(ok.messages.empty());
  CHECK(ok.entries > 0);
  // An empty set still installs a hook that switches forces off.
  const SgfList off = sgf_list_for_sim(SgfSet{});
  REQUIRE(off.files.size() == 1);
  CHECK(off.files[0].rows.empty());
}
