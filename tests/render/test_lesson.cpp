// Guided lessons (render/cpu/lesson.h): every built-in lesson loads and its
// scene loads with its overrides (so a lesson cannot rot when a scene
// changes); ids resolve by prefix; bad lesson files get located errors.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include "render/cpu/colormap.h"
#include "render/cpu/lesson.h"
#include "render/cpu/particle_fields.h"
#include "sim/core/error.h"
#include "sim/mpm/mpm_world.h"
#include "sim/scene/simulation.h"

using namespace ps;
namespace fs = std::filesystem;

namespace {

std::string write_lesson(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("ps_lesson_tests_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

std::string error_of(const std::string& text) {
  try {
    load_lesson(write_lesson("bad.json", text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("Every built-in lesson loads and opens its scene with its overrides", "[lesson]") {
  const auto paths = builtin_lesson_paths();
  REQUIRE(paths.size() >= 6);
  for (const std::string& p : paths) {
    INFO(p);
    const Lesson l = load_lesson(p);
    CHECK(!l.title.empty());
    CHECK(!l.text.empty());
    std::unique_ptr<Simulation> sim = load_simulation(lesson_scene_arg(l), l.set, "cpu", 1);
    REQUIRE(sim);
    CHECK(sim->diagnostics().mass > 0.0);
    // A selected particle must exist in the scene.
    if (l.select_id > 0) {
      ParticleTable t;
      sim->table(t);
      CHECK(std::find(t.id.begin(), t.id.end(), l.select_id) != t.id.end());
    }
  }
}

TEST_CASE("The first two lessons set PIC and APIC on the same block and spin it", "[lesson]") {
  const Lesson pic = load_lesson(resolve_lesson_path("01"));
  const Lesson apic = load_lesson(resolve_lesson_path("02"));
  CHECK(pic.scene == apic.scene);
  CHECK(pic.set == std::vector<std::string>{"solver.transfer=pic"});
  CHECK(apic.set == std::vector<std::string>{"solver.transfer=apic"});
  CHECK(pic.preset == 1);  // rotation
  CHECK(apic.preset == 1);
}

TEST_CASE("A lesson opens paused unless its file says \"paused\": false", "[lesson]") {
  const std::string base = R"({"title": "t", "scene": "pic_vs_apic", "text": "x")";
  CHECK(parse_lesson(base + "}", "a.json").paused);  // no view
  CHECK(parse_lesson(base + R"(, "view": {"color": "speed"}})", "b.json")
            .paused);  // a view without it
  CHECK(parse_lesson(base + R"(, "view": {"paused": true}})", "c.json").paused);
  CHECK_FALSE(
      parse_lesson(base + R"(, "view": {"paused": false}})", "d.json").paused);  // the opt-out
  // Every built-in lesson waits for the teacher.
  for (const std::string& p : builtin_lesson_paths()) {
    INFO(p);
    CHECK(load_lesson(p).paused);
  }
}

TEST_CASE(
    "A lesson's colour map is named for its colour mode, and lesson 05's zero stress stays visible",
    "[lesson]") {
  const std::string base = R"({"title": "t", "scene": "mpm99", "text": "x")";
  const Lesson l =
      parse_lesson(base + R"(, "view": {"color": "stress", "colormap": "turbo"}})", "a.json");
  CHECK(l.color == 4);
  CHECK(l.colormap == static_cast<int>(Colormap::Turbo));
  CHECK(parse_lesson(base + "}", "b.json").colormap == -1);  // absent: the window's own map stays
  // Without the mode it is for, or a map that does not exist: located errors naming the field.
  auto error = [&](const std::string& view) {
    try {
      parse_lesson(base + R"(, "view": )" + view + "}", "bad.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string alone = error(R"({"colormap": "turbo"})");
  CHECK(alone.find("bad.json:1:") != std::string::npos);
  CHECK(alone.find("view.colormap") != std::string::npos);
  const std::string unknown = error(R"({"color": "stress", "colormap": "rainbow"})");
  CHECK(unknown.find("colormap") != std::string::npos);
  CHECK(unknown.find("turbo") != std::string::npos);  // the choices are listed
  // Lesson 05 shows water's zero von Mises stress in turbo's blue, not viridis's near-black.
  const Lesson stress = load_lesson(resolve_lesson_path("05"));
  REQUIRE(stress.colormap >= 0);
  const auto zero = colormap_rgb(static_cast<Colormap>(stress.colormap), 0.f);
  CHECK(zero[2] > 0.5f);  // a clear blue
  CHECK(zero[0] + zero[1] + zero[2] > 0.8f);
}

TEST_CASE("Lessons 01 and 03 describe the angular momentum curves the way they go", "[lesson]") {
  // The lessons' rotation preset turns the block clockwise: L < 0, so a transfer that loses the
  // rotation draws a curve rising towards zero (PIC quickly, FLIP slowly), not one going down.
  auto run = [](const char* transfer) {
    std::unique_ptr<Simulation> sim =
        load_simulation("pic_vs_apic", {std::string("solver.transfer=") + transfer}, "cpu", 1);
    sim->mpm()->apply_preset(Preset::Rotation, 1.f);
    const double l0 = sim->diagnostics().angular_momentum;
    while (sim->time() < 0.3) REQUIRE(sim->step(sim->substeps_per_frame()).ok);
    return std::pair<double, double>(l0, sim->diagnostics().angular_momentum);
  };
  const auto pic = run("pic"), flip = run("flip"), apic = run("apic");
  REQUIRE(pic.first < 0.0);
  CHECK(pic.second > pic.first);                            // rises
  CHECK(std::abs(pic.second) < 0.1 * std::abs(pic.first));  // to (nearly) zero
  CHECK(flip.second > flip.first);                          // rises too, more slowly
  CHECK(flip.second < 0.5 * flip.first);
  CHECK(apic.second == Approx(apic.first).epsilon(1e-3));  // flat
  auto says = [](const Lesson& l, const std::string& part) {
    for (const std::string& s : l.look_for)
      if (s.find(part) != std::string::npos) return true;
    return false;
  };
  const Lesson l1 = load_lesson(resolve_lesson_path("01"));
  const Lesson l3 = load_lesson(resolve_lesson_path("03"));
  CHECK(says(l1, "rising towards zero"));
  CHECK_FALSE(says(l1, "falling towards zero"));
  CHECK(says(l3, "blue (PIC) quickly up to zero"));
  CHECK(says(l3, "green (FLIP) slowly up towards zero"));
  CHECK_FALSE(says(l3, "slowly down"));
}

TEST_CASE(
    "Lesson 01's speed colours fade from the outside in and a stopped block takes the slow end",
    "[lesson]") {
  // What the window's auto range does for speed (hold_speed_range), on lesson 01's PIC block:
  // the colour of a particle is its speed over the range's top. Following each frame's own
  // maximum instead, the top fell from 0.118 to 0.0019 in a second and the stopped block
  // turned red (its noise stretched over the bar).
  const Lesson l = load_lesson(resolve_lesson_path("01"));
  std::unique_ptr<Simulation> sim = load_simulation(lesson_scene_arg(l), l.set, "cpu", 1);
  sim->mpm()->apply_preset(Preset::Rotation, 1.f);
  std::vector<float> speed, scratch;
  float lo = 0.f, hi = 0.f;
  ParticleTable t;
  auto frame = [&] {
    sim->table(t);
    speed.resize(t.size());
    for (size_t i = 0; i < t.size(); ++i) speed[i] = std::hypot(t.vx[i], t.vy[i]);
    float flo = 0.f, fhi = 0.f;
    robust_range(speed, 0.005f, scratch, flo, fhi);
    hold_speed_range(fhi, lo, hi);
    float top = 0.f;  // the fastest particle's place on the bar
    for (float v : speed) top = std::max(top, v / hi);
    return top;
  };
  const float start = frame();
  const float hi0 = hi;
  CHECK(start == Approx(1.f).margin(0.05f));  // the rim at the top of the bar
  while (sim->time() < 1.0) REQUIRE(sim->step(sim->substeps_per_frame()).ok);
  const float later = frame();
  CHECK(hi == hi0);  // the range held
  CHECK(lo == 0.f);
  CHECK(later < 0.05f);  // stopped: the slow end, not red
  hi = 0.f;              // a reset (load, preset) starts again from this frame's speeds
  frame();
  CHECK(hi < 1e-3f * hi0);
}

TEST_CASE("A lesson's text is staged: a lead of at most two sentences, the rest behind More",
          "[lesson]") {
  using V = std::vector<std::string>;
  CHECK(split_sentences("One. Two! Three? four") == V{"One.", "Two!", "Three? four"});
  // Abbreviations, years and decimals end no sentence; a closing bracket or quote stays with its sentence.
  CHECK(split_sentences(
            "APIC (Jiang et al. 2015) keeps 0.95 of it (e.g. this). Then \"more.\" Last") ==
        V{"APIC (Jiang et al. 2015) keeps 0.95 of it (e.g. this).", "Then \"more.\"", "Last"});
  CHECK(split_sentences("  no end") == V{"no end"});
  CHECK(split_sentences("").empty());

  const LessonPage one = lesson_page({"A block spins."});
  CHECK(one.lead == "A block spins.");
  CHECK(one.more.empty());
  const LessonPage cut = lesson_page({"First. Second. Third. Fourth.", "Another paragraph."});
  CHECK(cut.lead == "First. Second.");
  CHECK(cut.more == V{"Third. Fourth.", "Another paragraph."});

  // The built-in lessons lead with one or two sentences (nothing cut) and short look-for lines:
  // the lead and the look-for lines fit the Lesson panel's first page at 1280x720 (the GUI test
  // gui_lesson_page checks it in the window), the rest of the text is behind More.
  const auto paths = builtin_lesson_paths();
  REQUIRE(paths.size() >= 8);
  for (const std::string& p : paths) {
    INFO(p);
    const Lesson l = load_lesson(p);
    const LessonPage page = lesson_page(l.text);
    const size_t n = split_sentences(l.text[0]).size();
    CHECK(n >= 1);
    CHECK(n <= kLeadSentences);
    CHECK(page.lead == l.text[0]);
    CHECK(page.lead.size() <= 240);
    CHECK(page.more.size() == l.text.size() - 1);
    CHECK(!page.more.empty());
    CHECK(l.look_for.size() <= 3);
    for (const std::string& s : l.look_for) CHECK(s.size() <= 180);
  }
}

TEST_CASE("Lesson names resolve by id or unique prefix, unknown names list the built-ins",
          "[lesson]") {
  CHECK(fs::path(resolve_lesson_path("01_pic_loses_rotation")).stem() == "01_pic_loses_rotation");
  CHECK(fs::path(resolve_lesson_path("04")).stem() == "04_flip_noise_pic_damping");
  try {
    resolve_lesson_path("nope");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("01_pic_loses_rotation") != std::string::npos);
  }
  try {
    resolve_lesson_path("0");  // every built-in starts with 0
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("more than one") != std::string::npos);
  }
}

TEST_CASE("Bad lesson files get located errors", "[lesson]") {
  const std::string e1 =
      error_of(R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "colour": "speed"})");
  CHECK(e1.find("bad.json:1:") != std::string::npos);
  CHECK(e1.find("'colour'") != std::string::npos);
  const std::string e2 = error_of(
      "{\"title\": \"t\", \"scene\": \"pic_vs_apic\", \"text\": \"x\",\n \"view\": {\"color\": \"hue\"}}");
  CHECK(e2.find("bad.json:2:") != std::string::npos);
  CHECK(e2.find("view.color") != std::string::npos);
  const std::string e3 = error_of(R"({"title": "t", "scene": "pic_vs_apic"})");
  CHECK(e3.find("'text'") != std::string::npos);
  const std::string e4 = error_of(
      R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "set": ["solver.transfer"]})");
  CHECK(e4.find("path=value") != std::string::npos);
  const std::string e5 =
      error_of(R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "keys": [["R"]]})");
  CHECK(e5.find("keys[0]") != std::string::npos);
  const std::string e7 = error_of(
      R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "compare": "solver.transfer=pic"})");
  CHECK(e7.find("'compare'") != std::string::npos);
  CHECK(e7.find("2 to 4") != std::string::npos);
  const std::string e6 = error_of(
      R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "start": {"preset": "spin"}})");
  CHECK(e6.find("start.preset") != std::string::npos);
}

namespace {

std::string regression(const std::string& name) {
  return (fs::path(PS_SOURCE_DIR) / "tests" / "fuzz" / "regressions" / "lesson" / name).string();
}

/// The error of opening a lesson as the window and `sandbox --lesson` do ("no error" when it opens).
std::string open_error(const std::string& path, const std::vector<std::string>& extra = {}) {
  try {
    LessonOptions o;
    o.threads = 1;
    o.extra_sets = extra;
    build_lesson(load_lesson(path), o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("Lesson errors name the lesson file, the entry's line and column, and its field",
          "[lesson]") {
  // A bad "set" value: the entry (set[1], line 4, column 32: its opening quote), the assignment and the scene field.
  const std::string set = regression("error-set-bad-value.json");
  CHECK(open_error(set) ==
        set +
            ":4:32: field 'set[1]': \"solver.transfer=bogus\": scene field 'solver.transfer': "
            "expected one of pic, apic, flip, polypic; got string \"bogus\"");
  CHECK(
      open_error(regression("error-set-unknown-field.json"))
          .find(
              "error-set-unknown-field.json:1:60: field 'set[0]': \"solver.transfr=pic\": scene field "
              "'solver.transfr': unknown field") != std::string::npos);
  CHECK(
      open_error(regression("error-set-no-element.json"))
          .find(
              ":1:61: field 'set[0]': \"bodies.7.spacing=0.01\": scene field 'bodies.7': no array element '7'") !=
      std::string::npos);
  // The command line's --set keeps its own form (it is a flag the user typed).
  CHECK(open_error(resolve_lesson_path("01"), {"solver.flip_blend=9"}) ==
        "--set solver.flip_blend=9: field 'solver.flip_blend': value 9 is out of range [0, 1]");
  // "scene": empty (at load), missing, a relative path to nothing.
  CHECK(error_of(R"({"title": "t", "scene": "", "text": "x"})")
            .find("bad.json:1:25: field 'scene': empty") != std::string::npos);
  CHECK(
      open_error(regression("error-scene-missing.json"))
          .find(
              "error-scene-missing.json:1:25: field 'scene': \"no_such_scene\": no such scene file or built-in "
              "scene (built-ins: ") != std::string::npos);
  CHECK(open_error(regression("error-scene-relative-missing.json"))
            .find(":1:25: field 'scene': \"../scenes/none.json\": no such scene file") !=
        std::string::npos);
  // A scene file of the teacher's with an error of its own (its first: no domain, at the object's
  // start): the lesson's entry, then the scene's place.
  const std::string scene =
      write_lesson("broken_scene.json", "{\"kind\": \"mpm\",\n \"solver\": {\"dt\": -1}}");
  const std::string e = error_of(R"({"title": "t", "scene": "broken_scene.json", "text": "x"})");
  CHECK(e == "no error");  // load_lesson does not read the scene
  const std::string lesson = write_lesson(
      "uses_broken.json", R"({"title": "t", "scene": "broken_scene.json", "text": "x"})");
  const std::string broken = open_error(lesson);
  CHECK(broken.find("uses_broken.json:1:25: field 'scene': \"broken_scene.json\": " + scene +
                    ":1:1: field 'domain': required field is missing") != std::string::npos);
}

TEST_CASE(
    "A lesson's compare is checked when it opens (naming the pane), its pane count when it loads",
    "[lesson]") {
  const std::string bad = regression("error-compare-bad-value.json");
  CHECK(open_error(bad) ==
        bad +
            ":5:14: field 'compare': pane 2 (transfer=bogus): scene field 'solver.transfer': "
            "expected one of pic, apic, flip, polypic; got string \"bogus\"");
  CHECK(
      open_error(regression("hang-compare-dt-ratio-1e7.json"))
          .find(
              "hang-compare-dt-ratio-1e7.json:1:57: field 'compare': pane 1 (dt=0.1) takes substeps of 0.1 s, "
              "pane 2 (dt=0.00000001) of 1e-08 s: a ratio of 1e+07") != std::string::npos);
  // Counted from the items when the file is read: 22 two-value items are 4 M panes, never built.
  try {
    load_lesson(regression("oom-compare-22-items-4M-panes.json"));
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(
              "oom-compare-22-items-4M-panes.json:1:57: field 'compare': the settings give "
              "4194304 panes") != std::string::npos);
  }
  CHECK(
      error_of(
          R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "compare": "solver.transfer=pic,apic solver.transfer=flip,pic"})")
          .find("bad.json:1:64: field 'compare': 'solver.transfer': varied twice") !=
      std::string::npos);
}

TEST_CASE("build_lesson builds the lesson's scene with its overrides and its comparison",
          "[lesson]") {
  LessonOptions o;
  o.threads = 1;
  const Lesson pic = load_lesson(resolve_lesson_path("01"));
  LessonBuild b = build_lesson(pic, o);
  REQUIRE(b.sim);
  CHECK_FALSE(b.comparison);
  CHECK(b.overrides == std::vector<std::string>{"solver.transfer=pic"});
  CHECK(b.sim->mpm()->solver.transfer == Transfer::PIC);
  CHECK(b.sim->diagnostics().hash ==
        load_simulation("pic_vs_apic", {"solver.transfer=pic"}, "cpu", 1)->diagnostics().hash);
  // Lesson 03: four panes from one state, each with its transfer.
  LessonBuild c = build_lesson(load_lesson(resolve_lesson_path("03")), o);
  REQUIRE(c.comparison);
  REQUIRE(c.comparison->size() == 4);
  CHECK(c.panes[3].label == "transfer=polypic");
  CHECK(c.comparison->pane(3).sim->mpm()->solver.transfer == Transfer::PolyPIC);
  for (size_t k = 1; k < 4; ++k)
    CHECK(c.comparison->pane(k).curve[0].hash == c.comparison->pane(0).curve[0].hash);
  // A path both set and compared is the panes' own: the set entry stays on the single scene only.
  const std::string both = write_lesson(
      "both.json",
      R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "set": ["solver.transfer=flip"],
                      "compare": "solver.transfer=pic,apic"})");
  LessonBuild d = build_lesson(load_lesson(both), o);
  CHECK(d.sim->mpm()->solver.transfer == Transfer::FLIP);
  CHECK(d.comparison->pane(0).sim->mpm()->solver.transfer == Transfer::PIC);
  CHECK(d.comparison->pane(1).sim->mpm()->solver.transfer == Transfer::APIC);
}

TEST_CASE(
    "The lesson catalog reports a bad file once, lists it as not loading, and re-reads it when it changes",
    "[lesson]") {
  fs::path dir = fs::temp_directory_path() / ("ps_lesson_catalog_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(resolve_lesson_path("01"), dir / "01.json");
  std::ofstream(dir / "02.json")
      << "{\"title\": \"t\",\n \"scene\": \"pic_vs_apic\", \"text\": \"x\", \"colour\": 1}";
  LessonCatalog cat(dir.string());
  std::vector<std::string> fresh = cat.refresh();
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0] == (dir / "02.json").string() + ":2:39: field 'colour': unknown field");
  REQUIRE(cat.entries().size() == 2);
  CHECK(cat.entries()[0].title == "PIC loses rotation");
  CHECK(cat.entries()[1].error == fresh[0]);
  CHECK(cat.refresh().empty());  // unchanged: not reported again
  CHECK(cat.error_of((dir / "02.json").string()) == fresh[0]);
  // One that parses but does not build (found when opened) stays marked until it changes.
  cat.mark_failed((dir / "01.json").string(), "it did not build");
  CHECK(cat.refresh().empty());
  CHECK(cat.error_of((dir / "01.json").string()) == "it did not build");
  // Fixed (a different size): read again, no error.
  std::ofstream(dir / "02.json") << R"({"title": "fixed", "scene": "pic_vs_apic", "text": "x"})";
  CHECK(cat.refresh().empty());
  CHECK(cat.entries()[1].title == "fixed");
  CHECK(cat.error_of((dir / "02.json").string()).empty());
  fs::remove_all(dir);
}
