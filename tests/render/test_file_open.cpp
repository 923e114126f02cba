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

using ps::test::put;
using ps::test::TempDir;

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
bool window_load(const std::string& folder, SgfSet& live, Simulation& sim,
                 std::vector<std::string>& shown) {
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

TEST_CASE("Opening bad SGF folders, P4P files and images while a scene runs leaves it untouched",
          "[open][sgf]") {
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
    // A folder whose only file has a bad header, and groups.json naming it.
    {
      SgfSet other = live_set();
      other.groups[0].name = "other";
      save_sgf_set(other, d / "bad_index");
      put(d / "bad_index/SGF1-400.csv", "ID,FX\n1,5,0,0\n2,5,0,0\n");
    }
    // A folder whose only file has a bad row: the file is skipped, so nothing loads.
    fs::create_directories(d / "bad_row");
    put(d / "bad_row/SGF20-30.csv", "ID,FX,FY,FZ\n3,1,0,0\n4,nan?,0,0\n");

    std::vector<std::string> shown;
    CHECK_FALSE(window_load(kData + "/sgf/malformed", live, *a, shown));
    REQUIRE(shown.size() >= 2);
    CHECK(shown.front().find("not loaded, 7 problems (the current set is kept") !=
          std::string::npos);
    CHECK(any_contains(shown, "SGF1-5.csv:3:3: field 'FX': expected a finite number, got 'abc'"));
    REQUIRE(a->step(chunk).ok);

    CHECK_FALSE(window_load(d / "bad_row", live, *a, shown));
    CHECK(shown.front().find("not loaded, 1 problem (the current set is kept") !=
          std::string::npos);
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

TEST_CASE(
    "open_sgf_set: a complete folder loads, a broken one gives the verdict then at most 100 problems",
    "[open][sgf]") {
  TempDir d("open_many");
  std::string csv = "ID,FX,FY,FZ\n";
  for (int i = 0; i < 500; ++i) csv += "x,1,0,0\n";
  put(d / "SGF1-2.csv", csv);
  const SgfSetOpen r = open_sgf_set(d.path);
  CHECK_FALSE(r.ok);
  CHECK(r.set.groups.empty());
  REQUIRE(r.messages.size() == 101);
  CHECK(r.messages[0] ==
        d.path +
            ": not loaded, 500 problems (the current set is kept; fix the files and load again)");
  CHECK(r.messages[1] ==
        (d / "SGF1-2.csv") + ":2:1: field 'ID': expected a particle ID (integer >= 1), got 'x'");

  const SgfSetOpen ok = open_sgf_set(kData + "/sgf/basic");
  CHECK(ok.ok);
  CHECK(ok.messages.empty());
  CHECK(ok.entries > 0);
  // An empty set still installs a hook that switches forces off.
  const SgfList off = sgf_list_for_sim(SgfSet{});
  REQUIRE(off.files.size() == 1);
  CHECK(off.files[0].rows.empty());
}

TEST_CASE(
    "An SGF folder loads its good files and lists each bad one, in the window and with --sgf alike",
    "[open][sgf]") {
  // One rule (SgfLoadResult): a file loads whole or not at all. SGF1-10.csv is good, SGF20-30.csv
  // has one bad row among good ones (skipping only that row would push the group short of a
  // particle), SGF5.csv has a bad name.
  TempDir d("open_partial");
  put(d / "SGF1-10.csv", "ID,FX,FY,FZ\n1,1,0,0\n2,1,0,0\n");
  put(d / "SGF20-30.csv", "ID,FX,FY,FZ\n3,1,0,0\n4,nan?,0,0\n5,-1,0,0\n");
  put(d / "SGF5.csv", "ID,FX,FY,FZ\n6,1,0,0\n");

  // The library: the good file loads, the others are skipped, each problem located.
  const SgfLoadResult flat = load_sgf_folder(d.path);
  REQUIRE(flat.list.files.size() == 1);
  CHECK(flat.list.files[0].start == 1);
  CHECK(flat.list.files[0].rows.size() == 2);
  REQUIRE(flat.skipped.size() == 2);
  CHECK(fs::path(flat.skipped[0]).filename() == "SGF20-30.csv");
  CHECK(fs::path(flat.skipped[1]).filename() == "SGF5.csv");
  REQUIRE(flat.diagnostics.size() == 2);
  CHECK(std::string(flat.diagnostics[0].what()) ==
        (d / "SGF20-30.csv") + ":3:3: field 'FX': expected a finite number, got 'nan?'");
  CHECK(flat.diagnostics[1].field() == "name");

  // The window (the SGF panel's Load): the same files, the set from the good one, the verdict
  // and each problem listed.
  const SgfSetOpen w = open_sgf_set(d.path);
  REQUIRE(w.ok);
  CHECK(w.files == 1);
  CHECK(w.skipped == flat.skipped);
  CHECK(w.problems == 2);
  REQUIRE(w.set.groups.size() == 1);
  CHECK(w.set.groups[0].ids == std::vector<uint32_t>{1, 2});
  CHECK(sgf_flatten(w.set).row_count() == flat.list.row_count());
  REQUIRE(w.messages.size() == 3);
  CHECK(w.messages[0] ==
        d.path + ": 2 problems, 2 of 3 SGF files skipped (the other files are loaded)");
  CHECK(w.messages[1] == std::string(flat.diagnostics[0].what()));
  CHECK(w.messages[2] == std::string(flat.diagnostics[1].what()));

  // With groups.json: an entry in a skipped file is reported and skipped too, the rest loads.
  SgfSet two;
  SgfGroup a, b;
  a.name = "a";
  a.ids = {1, 2};
  a.entries.push_back(SgfEntry{1, 10, 1.0, 0.0, 0.0});
  b.name = "b";
  b.ids = {3, 5};
  b.entries.push_back(SgfEntry{20, 30, 1.0, 0.0, 0.0});
  two.groups = {a, b};
  save_sgf_set(two, d / "indexed");
  put(d / "indexed/SGF20-30.csv", "ID,FX,FY,FZ\n3,1,0,0\nx,1,0,0\n");
  const SgfSetOpen wi = open_sgf_set(d / "indexed");
  REQUIRE(wi.ok);
  CHECK(wi.files == 1);
  REQUIRE(wi.set.groups.size() == 2);
  CHECK(wi.set.groups[0].entries.size() == 1);
  CHECK(wi.set.groups[1].entries.empty());
  CHECK(any_contains(wi.messages, "SGF20-30.csv:3:1: field 'ID'"));
  CHECK(any_contains(wi.messages, "'SGF20-30.csv' was skipped (its problems are listed)"));

  // An index entry that names rows its (good) file does not hold: the entry is listed and
  // skipped, and the file's rows load as an inferred group, as `--sgf` applies them.
  save_sgf_set(two, d / "hand_edit");
  put(d / "hand_edit/SGF1-10.csv", "ID,FX,FY,FZ\n1,5,0,0\n7,5,0,0\n");
  const SgfSetOpen wh = open_sgf_set(d / "hand_edit");
  REQUIRE(wh.ok);
  CHECK(wh.skipped.empty());
  CHECK(any_contains(wh.messages, "groups.json"));
  CHECK(sgf_flatten(wh.set).row_count() == load_sgf_folder(d / "hand_edit").list.row_count());
}
