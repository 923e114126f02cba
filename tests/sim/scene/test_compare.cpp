// Side by side (sim/scene/compare.h): panes built from one scene with their own
// settings, stepped in lockstep, independent of each other.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>
#include "sim/core/error.h"
#include "sim/scene/compare.h"
#include "sim/scene/scene.h"

using namespace ps;

namespace {

PaneSpec pane(const std::string& setting) {
  const size_t eq = setting.find('=');
  const size_t dot = setting.rfind('.', eq);
  return PaneSpec{setting.substr(dot + 1), {setting}};
}

std::vector<PaneSpec> panes(std::initializer_list<const char*> settings) {
  std::vector<PaneSpec> v;
  for (const char* s : settings) v.push_back(pane(s));
  return v;
}

/// The message of the InputError that building the comparison throws ("" when none).
std::string error_of(const std::vector<PaneSpec>& specs,
                     const std::vector<std::string>& sets = {}) {
  try {
    Comparison c("pic_vs_apic", sets, specs, "cpu", 1);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("parse_vary splits values at top-level commas and rejects malformed lists", "[compare]") {
  VaryAxis a = parse_vary("solver.transfer=pic,apic,flip");
  CHECK(a.path == "solver.transfer");
  CHECK(a.values == std::vector<std::string>{"pic", "apic", "flip"});
  VaryAxis g = parse_vary("solver.gravity=[0,-9.8],[0,0]");
  CHECK(g.values == std::vector<std::string>{"[0,-9.8]", "[0,0]"});
  VaryAxis q = parse_vary("name=\"a,b\",c");
  CHECK(q.values == std::vector<std::string>{"\"a,b\"", "c"});
  auto message = [](const std::string& spec) {
    try {
      parse_vary(spec);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message("solver.transfer").find("--vary solver.transfer: expected path=value,value") !=
        std::string::npos);
  CHECK(message("=pic,apic").find("--vary =pic,apic: empty setting path") != std::string::npos);
  CHECK(message("solver.transfer=pic,,flip")
            .find("field 'solver.transfer': empty value in the list 'pic,,flip'") !=
        std::string::npos);
  CHECK(message("solver.transfer=").find("empty value") != std::string::npos);
}

TEST_CASE("vary_panes is the cartesian product with short labels", "[compare]") {
  std::vector<PaneSpec> p = vary_panes(
      {parse_vary("solver.transfer=pic,apic"), parse_vary("solver.kernel=quadratic,cubic")});
  REQUIRE(p.size() == 4);
  CHECK(p[0].label == "transfer=pic kernel=quadratic");
  CHECK(p[1].label == "transfer=pic kernel=cubic");
  CHECK(p[3].label == "transfer=apic kernel=cubic");
  CHECK(p[2].settings ==
        std::vector<std::string>{"solver.transfer=apic", "solver.kernel=quadratic"});
  // Two paths ending alike are named in full.
  std::vector<PaneSpec> m =
      vary_panes({parse_vary("materials.a.E=1,2"), parse_vary("materials.b.E=3")});
  REQUIRE(m.size() == 2);
  CHECK(m[1].label == "materials.a.E=2 materials.b.E=3");
  CHECK(vary_panes({}).empty());
}

TEST_CASE("Panes start bit-identical, same settings stay bit-identical, pic and apic differ",
          "[compare]") {
  Comparison cmp("pic_vs_apic", {"solver.substeps=5"},
                 panes({"solver.transfer=pic", "solver.transfer=pic", "solver.transfer=apic"}),
                 "cpu", 2);
  REQUIRE(cmp.size() == 3);
  // transfer does not touch the initial state: the three panes hash alike at step 0.
  REQUIRE(cmp.pane(0).curve.size() == 1);
  CHECK(cmp.pane(0).curve[0].hash == cmp.pane(1).curve[0].hash);
  CHECK(cmp.pane(0).curve[0].hash == cmp.pane(2).curve[0].hash);
  for (int f = 0; f < 12; ++f) REQUIRE(cmp.step_frame().ok);
  CHECK(cmp.frame() == 12);
  for (size_t k = 0; k < 3; ++k) {
    REQUIRE(cmp.pane(k).curve.size() == 13);
    CHECK(cmp.pane(k).sim->step_count() == 60);  // lockstep: the same substeps
  }
  CHECK(cmp.pane(0).sim->time() == cmp.pane(2).sim->time());
  for (int f = 0; f <= 12; ++f) CHECK(cmp.pane(0).curve[f].hash == cmp.pane(1).curve[f].hash);
  CHECK(cmp.pane(0).curve.back().hash != cmp.pane(2).curve.back().hash);
  CHECK(cmp.pane(0).curve.back().angular_momentum != cmp.pane(2).curve.back().angular_momentum);
}

TEST_CASE("Each pane equals a standalone run with its settings: nothing leaks between panes",
          "[compare]") {
  Comparison cmp("pic_vs_apic", {"solver.substeps=4"},
                 panes({"solver.transfer=flip", "solver.flip_blend=0.5", "solver.kernel=cubic"}),
                 "cpu", 1);
  // Each pane holds its own setting and the scene's value of the others.
  const SolverParams& s0 = cmp.pane(0).sim->mpm()->solver;
  const SolverParams& s1 = cmp.pane(1).sim->mpm()->solver;
  const SolverParams& s2 = cmp.pane(2).sim->mpm()->solver;
  CHECK(s0.transfer == Transfer::FLIP);
  CHECK(s1.transfer == Transfer::APIC);
  CHECK(s2.transfer == Transfer::APIC);
  CHECK(s1.flip_blend == 0.5f);
  CHECK(s0.flip_blend == 0.95f);
  CHECK(s2.flip_blend == 0.95f);
  CHECK(s2.kernel == Kernel::Cubic);
  CHECK(s0.kernel == Kernel::Quadratic);
  CHECK(s1.kernel == Kernel::Quadratic);
  // Editing one pane's world between frames reaches only that pane.
  cmp.pane(1).sim->mpm()->solver.gravity = Vec2{0.f, -3.f};
  CHECK(cmp.pane(0).sim->mpm()->solver.gravity == Vec2{0.f, 0.f});
  CHECK(cmp.pane(2).sim->mpm()->solver.gravity == Vec2{0.f, 0.f});
  cmp.pane(1).sim->mpm()->solver.gravity = Vec2{0.f, 0.f};
  for (int f = 0; f < 6; ++f) REQUIRE(cmp.step_frame().ok);
  // Bit for bit what the same settings give alone.
  for (size_t k = 0; k < cmp.size(); ++k) {
    std::unique_ptr<Simulation> alone = load_simulation(
        "pic_vs_apic", {"solver.substeps=4", cmp.pane(k).spec.settings[0]}, "cpu", 1);
    alone->step(24);
    INFO("pane " << k + 1 << " " << cmp.pane(k).spec.label);
    CHECK(alone->diagnostics().hash == cmp.pane(k).sim->diagnostics().hash);
  }
}

TEST_CASE("Rotating block: PIC loses angular momentum much faster than APIC",
          "[compare][physics]") {
  // The lesson "PIC loses rotation": the pic_vs_apic block set spinning by its
  // rotation preset, no gravity, 0.1 s (200 substeps of 5e-4 s).
  Comparison cmp("pic_vs_apic", {}, panes({"solver.transfer=pic", "solver.transfer=apic"}), "cpu",
                 2);
  for (int f = 0; f < 20; ++f) REQUIRE(cmp.step_frame().ok);
  const CurveSample &p0 = cmp.pane(0).curve.front(), &p1 = cmp.pane(0).curve.back();
  const CurveSample &a0 = cmp.pane(1).curve.front(), &a1 = cmp.pane(1).curve.back();
  REQUIRE(p0.angular_momentum == a0.angular_momentum);
  REQUIRE(std::abs(p0.angular_momentum) > 0.0);
  const double pic_kept = p1.angular_momentum / p0.angular_momentum;
  const double apic_kept = a1.angular_momentum / a0.angular_momentum;
  const double pic_loss = 1.0 - pic_kept, apic_loss = 1.0 - apic_kept;
  char line[200];
  std::snprintf(line, sizeof line,
                "after t=%.3f s: PIC keeps %.6f of L0 (loss %.3e), APIC keeps %.6f (loss %.3e)",
                p1.time, pic_kept, pic_loss, apic_kept, apic_loss);
  WARN(line);
  CHECK(p1.time == Approx(0.1).epsilon(1e-6));
  CHECK(pic_kept < 0.6);              // PIC damps the spin away
  CHECK(std::abs(apic_loss) < 1e-3);  // APIC keeps it
  CHECK(pic_loss > 100.0 * std::abs(apic_loss));
  // Kinetic energy goes with it.
  CHECK(p1.kinetic_energy < 0.5 * p0.kinetic_energy);
  CHECK(a1.kinetic_energy > 0.99 * a0.kinetic_energy);
}

TEST_CASE("Panes with different dt step to the same simulated time", "[compare]") {
  Comparison cmp("pic_vs_apic", {"solver.substeps=4"},
                 panes({"solver.dt=0.0005", "solver.dt=0.00025", "solver.dt=0.0003"}), "cpu", 1);
  for (int f = 0; f < 5; ++f) REQUIRE(cmp.step_frame().ok);
  CHECK(cmp.pane(0).sim->step_count() == 20);
  CHECK(cmp.pane(1).sim->step_count() == 40);
  const double t = cmp.pane(0).sim->time();
  CHECK(t == Approx(0.01).epsilon(1e-6));
  CHECK(std::abs(cmp.pane(1).sim->time() - t) < 1e-9);
  // 0.01 / 0.0003 = 33.3: 33 substeps, within half a substep of the clock.
  CHECK(cmp.pane(2).sim->step_count() == 33);
  CHECK(std::abs(cmp.pane(2).sim->time() - t) <= 0.5 * 0.0003);
  for (size_t k = 0; k < 3; ++k) CHECK(cmp.pane(k).curve.back().time == cmp.pane(k).sim->time());
}

TEST_CASE("Presets and body forces reach every pane", "[compare]") {
  Comparison cmp("pic_vs_apic", {"solver.substeps=2"},
                 panes({"solver.transfer=pic", "solver.transfer=apic"}), "cpu", 1);
  CHECK(cmp.apply_preset(Preset::Translation, 0.5f) == 2);
  cmp.record();  // replaces frame 0's samples
  REQUIRE(cmp.pane(0).curve.size() == 1);
  const double mass = cmp.pane(0).sim->diagnostics().mass;
  for (size_t k = 0; k < 2; ++k)
    CHECK(cmp.pane(k).curve[0].momentum[0] == Approx(0.5 * mass).epsilon(1e-5));
  // An SGF force on particle 1 during steps 1..2 pushes it up in both panes.
  SgfList list;
  SgfFile f;
  f.start = 1;
  f.end = 2;
  f.rows.push_back(SgfRow{1, 0.0, 1.0, 0.0});
  list.files.push_back(f);
  cmp.set_force_list(list);
  REQUIRE(cmp.step_frame().ok);
  for (size_t k = 0; k < 2; ++k) {
    INFO("pane " << k + 1);
    CHECK(cmp.pane(k).curve.back().momentum[1] > 1e-6);
  }
}

TEST_CASE("Bad --vary settings are rejected as precisely as --set", "[compare]") {
  CHECK(
      error_of(panes({"solver.flip_blend=0.5", "solver.flip_blend=2"}))
          .find(
              "--vary solver.flip_blend=2: field 'solver.flip_blend': value 2 is out of range [0, 1]") !=
      std::string::npos);
  CHECK(
      error_of(panes({"solver.transfer=pic", "solver.transfer=pik"}))
          .find(
              "--vary solver.transfer=pik: field 'solver.transfer': expected one of pic, apic, flip") !=
      std::string::npos);
  CHECK(error_of(panes({"solver.transfr=pic", "solver.transfr=apic"}))
            .find("field 'solver.transfr': unknown field") != std::string::npos);
  CHECK(error_of(panes({"bodies.3.spacing=0.01", "bodies.0.spacing=0.01"}))
            .find("--vary bodies.3.spacing=0.01: field 'bodies.3': no array element '3'") !=
        std::string::npos);
  // Pane counts and settings both common and varied.
  CHECK(error_of(panes({"solver.transfer=pic"}))
            .find("the settings give 1 pane; a comparison shows 2 to 4") != std::string::npos);
  CHECK(error_of(panes({"solver.dt=1e-4", "solver.dt=2e-4", "solver.dt=3e-4", "solver.dt=4e-4",
                        "solver.dt=5e-4"}))
            .find("the settings give 5 panes") != std::string::npos);
  CHECK(
      error_of(panes({"solver.transfer=pic", "solver.transfer=apic"}), {"solver.transfer=flip"})
          .find(
              "--vary solver.transfer=pic: field 'solver.transfer': also given by --set solver.transfer=flip") !=
      std::string::npos);
  CHECK(error_of(panes({"solver.transfer=pic", "solver.transfer=apic"})).empty());
}

TEST_CASE("curves_csv has a header and one row per pane per recorded frame", "[compare]") {
  Comparison cmp("pic_vs_apic", {"solver.substeps=2"},
                 panes({"solver.transfer=pic", "solver.transfer=apic"}), "cpu", 1);
  for (int f = 0; f < 3; ++f) REQUIRE(cmp.step_frame().ok);
  std::istringstream in(cmp.curves_csv());
  std::string line;
  std::getline(in, line);
  CHECK(line ==
        "frame,time,pane,label,steps,kinetic_energy,momentum_x,momentum_y,angular_momentum,hash");
  std::vector<std::string> rows;
  while (std::getline(in, line)) rows.push_back(line);
  REQUIRE(rows.size() == 8);  // frames 0..3 x 2 panes
  CHECK(rows[0].rfind("0,0,1,transfer=pic,0,", 0) == 0);
  CHECK(rows[7].rfind("3,", 0) == 0);
  CHECK(rows[7].find(",2,transfer=apic,6,") != std::string::npos);
  for (const std::string& r : rows) CHECK(std::count(r.begin(), r.end(), ',') == 9);
}

TEST_CASE("Comparison: grab and point force act on the same particles in every pane", "[compare]") {
  Comparison c("pic_vs_apic", {}, panes({"solver.transfer=apic", "solver.transfer=apic"}), "cpu",
               1);
  const float y0 = c.pane(1).sim->mpm()->particles.x[10].y;
  c.grab_begin({10, 11, 12, 100}, Vec2{0.5f, 0.9f}, 4000.f);
  REQUIRE(c.step_frame(50).ok);
  c.grab_end();
  PointForce f;
  f.active = true;
  f.pos = Vec2{0.3f, 0.3f};
  f.radius = 0.2f;
  f.strength = 50.f;
  c.set_point_force(f);
  REQUIRE(c.step_frame(50).ok);
  CHECK(c.pane(0).sim->diagnostics().hash == c.pane(1).sim->diagnostics().hash);
  CHECK(c.pane(1).sim->mpm()->particles.x[10].y >
        y0 + 0.01f);  // pulled up towards the target, in both panes
}

TEST_CASE("The window's vary text: items separated by spaces, 2 to 4 panes", "[compare]") {
  const std::vector<PaneSpec> four =
      vary_panes_text("solver.transfer=pic,apic  solver.kernel=quadratic,cubic");
  REQUIRE(four.size() == 4);
  CHECK(four[1].settings == std::vector<std::string>{"solver.transfer=pic", "solver.kernel=cubic"});
  CHECK(four[2].settings ==
        std::vector<std::string>{"solver.transfer=apic", "solver.kernel=quadratic"});
  CHECK(four[2].label == "transfer=apic kernel=quadratic");
  CHECK_THROWS_AS(vary_panes_text("solver.transfer=pic,apic,flip solver.kernel=quadratic,cubic"),
                  InputError);                                          // 6
  CHECK_THROWS_AS(vary_panes_text("solver.transfer=pic"), InputError);  // 1
  CHECK_THROWS_AS(vary_panes_text("solver.transfer"), InputError);
}

TEST_CASE("Comparison: with recording off a frame adds no curve sample", "[compare]") {
  Comparison c("pic_vs_apic", {}, panes({"solver.transfer=pic", "solver.transfer=apic"}), "cpu", 1);
  c.set_recording(false);
  REQUIRE(c.step_frame(5).ok);
  CHECK(c.pane(0).curve.size() == 1);  // frame 0 only
  CHECK(c.frame() == 1);
  c.set_recording(true);
  REQUIRE(c.step_frame(5).ok);
  CHECK(c.pane(1).curve.size() == 2);
}

namespace {

std::vector<uint64_t> pane_hashes(Comparison& c) {
  std::vector<uint64_t> h;
  for (size_t k = 0; k < c.size(); ++k) h.push_back(c.pane(k).sim->diagnostics().hash);
  return h;
}

}  // namespace

TEST_CASE(
    "Comparison rewind: seek to the start and replay reproduce every pane's hashes, an action branches",
    "[compare][rewind]") {
  Comparison c("pic_vs_apic", {}, panes({"solver.transfer=pic", "solver.transfer=apic"}), "cpu", 2);
  c.set_recording(false);
  REQUIRE(c.enable_rewind(size_t{256} << 20));
  // recorded[f]: the panes as last shown at frame f (after the edits made there).
  std::vector<std::vector<uint64_t>> recorded;
  PointForce f;
  f.pos = Vec2{0.3f, 0.3f};
  f.radius = 0.2f;
  f.strength = 50.f;
  for (int frame = 0; frame < 8; ++frame) {
    if (frame == 1) c.apply_preset(Preset::Rotation, 1.f);
    if (frame == 2) c.grab_begin({10, 11, 12}, Vec2{0.5f, 0.9f}, 4000.f);
    if (frame == 3) c.grab_move(Vec2{0.6f, 0.8f});
    if (frame == 4) c.grab_end();
    f.active = frame == 5;
    c.set_point_force(f);
    recorded.push_back(pane_hashes(c));
    REQUIRE(c.step_frame(20).ok);
  }
  recorded.push_back(pane_hashes(c));
  REQUIRE(c.head_frame() == 8);
  REQUIRE(recorded[8] != recorded[1]);
  REQUIRE(c.seek_frame(0).ok);
  CHECK(c.frame() == 0);
  CHECK(pane_hashes(c) == recorded[0]);
  CHECK(c.playing_back());
  REQUIRE(c.seek_frame(1).ok);  // frame 1 as shown last: with its preset
  CHECK(pane_hashes(c) == recorded[1]);
  REQUIRE(c.seek_frame(0).ok);
  for (int frame = 1; frame <= 8; ++frame) {  // the recorded future, edits included
    REQUIRE(c.step_frame().ok);
    CHECK(c.frame() == frame);
    CHECK(pane_hashes(c) == recorded[static_cast<size_t>(frame)]);
  }
  REQUIRE(c.seek_frame(5).ok);
  CHECK(pane_hashes(c) == recorded[5]);
  CHECK(c.apply_preset(Preset::Shear, 1.f) == 2);  // a branch: frames 6-8 are gone
  CHECK(c.head_frame() == 5);
  CHECK_FALSE(c.playing_back());
  REQUIRE(c.step_frame(20).ok);
  CHECK(c.head_frame() == 6);
  CHECK(pane_hashes(c) != recorded[6]);
  CHECK(c.rewind_bytes() > 0);
}

TEST_CASE(
    "Comparison rewind: an edit between frames in which a pane took no substep is kept and replayed",
    "[compare][rewind]") {
  // Pane 2's dt is 4 times pane 1's: stepping one substep a frame, pane 2 steps
  // every fourth frame only, so several frames share its step count.
  Comparison c("pic_vs_apic", {"solver.transfer=apic"},
               panes({"solver.dt=0.0005", "solver.dt=0.002"}), "cpu", 1);
  c.set_recording(false);
  REQUIRE(c.enable_rewind(size_t{128} << 20));
  std::vector<std::vector<uint64_t>> recorded;
  std::vector<int64_t> steps2;
  for (int frame = 0; frame < 12; ++frame) {
    if (frame == 3) c.apply_preset(Preset::Shear, 1.f);
    if (frame == 4) c.apply_preset(Preset::Dilation, 0.5f);
    recorded.push_back(pane_hashes(c));
    steps2.push_back(c.pane(1).sim->step_count());
    REQUIRE(c.step_frame(1).ok);
  }
  recorded.push_back(pane_hashes(c));
  steps2.push_back(c.pane(1).sim->step_count());
  REQUIRE(steps2[3] == steps2[4]);  // the two presets hit pane 2 at one step (frames 2-5 share it)
  REQUIRE(steps2[3] == steps2[2]);
  REQUIRE(recorded[3][1] != recorded[4][1]);
  REQUIRE(recorded[2][1] != recorded[3][1]);
  for (int64_t frame : {4, 3, 2, 4, 12, 0, 3, 5}) {
    REQUIRE(c.seek_frame(frame).ok);
    CHECK(pane_hashes(c) == recorded[static_cast<size_t>(frame)]);
  }
  // From frame 3 (after its preset, before frame 4's), an edit branches: frame 4's preset is gone.
  REQUIRE(c.seek_frame(3).ok);
  c.apply_preset(Preset::Translation, 0.1f);
  CHECK(c.head_frame() == 3);
  REQUIRE(c.step_frame(1).ok);
  REQUIRE(c.seek_frame(3).ok);
  CHECK(pane_hashes(c) != recorded[3]);  // now with the translation
  REQUIRE(c.seek_frame(0).ok);
  CHECK(pane_hashes(c) == recorded[0]);
}

TEST_CASE("Comparison rewind is refused with a reason for rigid-body scenes",
          "[compare][rewind][rigid]") {
  Comparison c("rigid_float", {}, panes({"solver.transfer=pic", "solver.transfer=apic"}), "cpu", 1);
  CHECK_FALSE(c.enable_rewind(size_t{64} << 20));
  CHECK_FALSE(c.rewinding());
  CHECK(c.rewind_off().find("rigid") != std::string::npos);
  REQUIRE(c.step_frame(2).ok);  // it still runs, unrecorded
  CHECK(c.seek_frame(0).ok);
  CHECK(c.frame() == 1);
}

TEST_CASE("Comparison: a frame stepped in parts is one frame, one mark and one sample",
          "[compare][rewind]") {
  Comparison a("pic_vs_apic", {}, panes({"solver.transfer=pic", "solver.transfer=apic"}), "cpu", 1);
  Comparison b("pic_vs_apic", {}, panes({"solver.transfer=pic", "solver.transfer=apic"}), "cpu", 1);
  REQUIRE(b.enable_rewind(size_t{64} << 20));
  REQUIRE(a.step_frame(10).ok);
  for (int part : {3, 3, 4}) REQUIRE(b.step_part(part).ok);
  b.finish_frame();
  CHECK(b.frame() == 1);
  CHECK(b.head_frame() == 1);
  CHECK(b.pane(1).curve.size() == 2);       // frames 0 and 1
  CHECK(pane_hashes(b) == pane_hashes(a));  // the parts add up to the same state
  const std::vector<uint64_t> h1 = pane_hashes(b);
  REQUIRE(b.seek_frame(0).ok);
  REQUIRE(b.step_frame().ok);  // the replay takes the whole frame
  CHECK(b.frame() == 1);
  CHECK(pane_hashes(b) == h1);
}

TEST_CASE(
    "Pane counts come from the list lengths: a huge product is refused before any pane is made",
    "[compare]") {
  std::vector<VaryAxis> axes(22, parse_vary("a=1,2"));
  CHECK(vary_pane_count(axes) == 4194304u);
  CHECK(vary_pane_count({}) == 0u);
  CHECK(vary_pane_count({parse_vary("a=1,2,3"), parse_vary("b=x")}) == 3u);
  // 2^70 panes: the count saturates; building them could never finish, so a pass here shows
  // that nothing was built.
  std::vector<VaryAxis> many(70, parse_vary("a=1,2"));
  CHECK(vary_pane_count(many) == UINT64_MAX);
  auto error = [](auto&& f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error([&] {
          vary_panes(many);
        }).find("the settings give more than 18446744073709551614 panes") != std::string::npos);
  const std::string e22 = error([&] { vary_panes(axes); });
  CHECK(
      e22.find(
          "the settings give 4194304 panes (a: 2 values x a: 2 values x a: 2 values x a: 2 values x ... (22 "
          "settings in all)); a comparison shows 2 to 4") != std::string::npos);
  // The text form (lessons, the window's panel): the same count, then a path given twice.
  std::string text;
  for (int k = 0; k < 22; ++k)
    text += (k ? " " : "") + std::string("a") + std::to_string(k) + "=1,2";
  CHECK(error([&] { vary_panes_text(text); }).find("the settings give 4194304 panes") !=
        std::string::npos);
  CHECK(error([&] {
          vary_panes_text("solver.transfer=pic,apic solver.transfer=flip,pic");
        }).find("field 'solver.transfer': varied twice (items 1 and 2)") != std::string::npos);
  CHECK(vary_panes_text("solver.transfer=pic,apic solver.kernel=linear,cubic").size() == 4);
}

TEST_CASE("Panes whose time steps are more than 100 times apart are refused, naming the ratio",
          "[compare]") {
  const std::string e = error_of(panes({"solver.dt=0.1", "solver.dt=0.00000001"}));
  CHECK(
      e.find(
          "--vary: pane 1 (dt=0.1) takes substeps of 0.1 s, pane 2 (dt=0.00000001) of 1e-08 s: a ratio of "
          "1e+07") != std::string::npos);
  CHECK(e.find("at most 100 times apart") != std::string::npos);
  // The smaller one first: the same ratio (it would take a huge number of the first pane's substeps
  // before the second took one).
  CHECK(error_of(panes({"solver.dt=0.00001", "solver.dt=0.0005", "solver.dt=0.002"}))
            .find("a ratio of 200") != std::string::npos);
  // 100 itself is allowed (built only: stepping it takes 100 substeps per substep of the first pane).
  CHECK(error_of(panes({"solver.dt=0.0005", "solver.dt=0.000005"})).empty());
}

TEST_CASE(
    "A catch-up limit keeps each call bounded, the clock waits, and the result is the unlimited one",
    "[compare]") {
  // Pane 2's dt is 20 times smaller: one frame of 4 substeps of pane 1 is 80 of pane 2.
  const std::vector<std::string> sets = {"solver.substeps=4"};
  const auto specs = panes({"solver.dt=0.0005", "solver.dt=0.000025"});
  Comparison whole("pic_vs_apic", sets, specs, "cpu", 1);
  Comparison parts("pic_vs_apic", sets, specs, "cpu", 1);
  parts.set_catch_up_limit(30);
  REQUIRE(whole.step_part(4).ok);
  CHECK_FALSE(whole.behind());
  CHECK(whole.pane(1).sim->step_count() == 80);
  REQUIRE(parts.step_part(4).ok);
  CHECK(parts.pane(0).sim->step_count() == 4);
  CHECK(parts.pane(1).sim->step_count() == 30);  // the limit, not the 80 the time asks for
  CHECK(parts.behind());
  CHECK(parts.behind_text().find("pane 2 (dt=0.000025) 0.00125 s behind") != std::string::npos);
  // While a pane is behind, the first pane does not step.
  REQUIRE(parts.step_part(4).ok);
  CHECK(parts.pane(0).sim->step_count() == 4);
  CHECK(parts.pane(1).sim->step_count() == 60);
  REQUIRE(parts.step_part(4).ok);
  CHECK(parts.pane(1).sim->step_count() == 80);
  CHECK_FALSE(parts.behind());
  CHECK(parts.behind_text().empty());
  // Caught up: the same state as the unlimited catch-up, bit for bit.
  for (size_t k = 0; k < 2; ++k) {
    CHECK(parts.pane(k).sim->time() == whole.pane(k).sim->time());
    CHECK(parts.pane(k).sim->diagnostics().hash == whole.pane(k).sim->diagnostics().hash);
  }
  // The next call steps the clock again.
  REQUIRE(parts.step_part(4).ok);
  CHECK(parts.pane(0).sim->step_count() == 8);
}
