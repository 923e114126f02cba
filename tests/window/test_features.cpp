// Window features without a window (render/feature.h): an ImGui context with a
// built font atlas and a small simulation are enough to draw a feature's panel,
// click its controls (ImGui's ActivateItem, as the keyboard's activate does)
// and press its keys; no OpenGL context, no GLFW window.
#include <catch2/catch.hpp>

#include <glad/gl.h>

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "imgui.h"
#include "imgui_internal.h"
#include "render/feature.h"
#include "render/window_state.h"
#include "sim/dem/dem_world.h"
#include "sim/io/json.h"
#include "sim/rigid/rigid_world.h"
#include "sim/scene/simulation.h"

namespace ps {
namespace {

// A jelly bar whose scene asks for resampling (off): the panel opens by default.
const char* kScene = R"({"kind": "mpm", "domain": {"size": [1, 1], "grid": 32},
  "materials": {"jelly": {"type": "jelly", "E": 1e4}},
  "resampling": {"enabled": false, "interval": 10},
  "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.7, 0.5], "material": "jelly", "spacing": 0.0156}]})";

struct ImGuiFixture {
  ImGuiFixture() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(1280, 720);
    io.IniFilename = nullptr;
    unsigned char* px = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);  // the atlas is built; no texture is made
  }
  ~ImGuiFixture() { ImGui::DestroyContext(); }
  /// One frame with the feature's panel in a window named "panel".
  template <class Fn>
  void frame(Fn&& inside) {
    ImGui::GetIO().DeltaTime = 1.f / 60;
    ImGui::NewFrame();
    ImGui::SetNextWindowSize(ImVec2(340, 700));
    ImGui::Begin("panel");
    inside();
    ImGui::End();
    ImGui::EndFrame();
  }
};

Feature& feature_named(App& app, const std::string& name) {
  for (auto& f : app.features)
    if (name == f->name()) return *f;
  FAIL("no feature named " << name);
  throw;
}

/// An App without a window: scenes build on this thread, on the CPU backend with one thread.
void headless(App& app) {
  app.opt.threads = 1;
  app.backend = "cpu";
}

std::unique_ptr<Simulation> small_scene() {
  Json doc = Json::parse(kScene, "bar.json");
  return build_simulation(doc, "bar.json", scene_kind(doc), "cpu", 1);
}

}  // namespace

TEST_CASE("The features are listed once each, in frame order, resampling first",
          "[window][features]") {
  FeatureList list = make_features();
  REQUIRE(!list.empty());
  CHECK(std::string(list.front()->name()) == "resampling");
  for (size_t i = 0; i < list.size(); ++i)
    for (size_t j = i + 1; j < list.size(); ++j)
      CHECK(std::string(list[i]->name()) != list[j]->name());
}

TEST_CASE("The resampling feature's panel and key switch the world's resampling at the sync point",
          "[window][features]") {
  ImGuiFixture gui;
  App app;
  app.sim = small_scene();
  app.adopt_world_params();  // the window's copies from the world (Feature::pull)
  Feature& f = feature_named(app, "resampling");
  MpmWorld* w = app.world();
  REQUIRE(w != nullptr);
  REQUIRE_FALSE(w->resampling.enabled);
  REQUIRE(w->resampling.interval == 10);

  // Clicking the checkbox: the panel's copy changes, the world only at push (the sync point).
  ImGuiID box = 0;
  gui.frame([&] { f.panel(app); });
  gui.frame([&] {
    box = ImGui::GetID("resample particles (P)");
    ImGui::ActivateItem(box);
    f.panel(app);
  });
  gui.frame([&] { f.panel(app); });  // the activation lands on the item here
  gui.frame([&] { f.panel(app); });
  CHECK(box != 0);
  CHECK_FALSE(w->resampling.enabled);
  f.push(app);
  CHECK(w->resampling.enabled);
  CHECK(w->resampling.interval == 10);  // the rest of the copy is the world's

  // P switches it back; another key is not the feature's.
  CHECK_FALSE(f.key(app, GLFW_KEY_Q, 0));
  CHECK(f.key(app, GLFW_KEY_P, 0));
  f.push(app);
  CHECK_FALSE(w->resampling.enabled);

  // Settings round trip, and the keys overlay's row.
  SettingsFile s;
  f.save_settings(s);
  CHECK(s.get_bool("view.resample_marks", false));
  std::vector<HelpRow> rows;
  f.help(rows);
  REQUIRE(rows.size() == 1);
  CHECK(std::string(rows[0].key) == "P");
}

TEST_CASE("Without an MPM world the resampling feature takes no key and draws no panel",
          "[window][features]") {
  ImGuiFixture gui;
  App app;
  Feature& f = feature_named(app, "resampling");
  CHECK_FALSE(f.key(app, GLFW_KEY_P, 0));
  gui.frame([&] {
    f.panel(app);
    CHECK(ImGui::GetCurrentWindow()->DC.CursorPos.y ==
          ImGui::GetCurrentWindow()->DC.CursorStartPos.y);  // nothing
  });
}

TEST_CASE(
    "The whole-field feature pulls every particle towards the cursor while held, nothing otherwise",
    "[window][features][field]") {
  ImGuiFixture gui;
  App app;
  app.sim = small_scene();
  app.adopt_world_params();
  Feature& f = feature_named(app, "field");
  MpmWorld* w = app.world();
  REQUIRE(w != nullptr);
  w->solver.gravity = Vec2{0.f, 0.f};  // only the tool's force moves the bar
  app.tools.tool = Tool::Grab;
  CHECK(f.key(app, GLFW_KEY_M, 0));
  CHECK(app.tools.tool == Tool::Attract);  // the switch brings the attract tool

  auto max_speed = [w] {
    float v = 0.f;
    for (size_t i = 0; i < w->particles.size(); ++i) v = std::max(v, length(w->particles.v[i]));
    return v;
  };
  const Vec2 cursor{0.5f, 0.9f};  // above the bar (0.3..0.7 x 0.3..0.5)

  // Not held: no force, nothing moves.
  app.left_down = false;
  f.pointer(app, cursor, true);
  CHECK_FALSE(w->point_force.active);
  REQUIRE(w->step(1).ok);
  CHECK(max_speed() == 0.f);

  // Held: every particle is pushed towards the cursor, wherever it is in the bar (the brush,
  // 0.06 wide, reaches none of them).
  app.left_down = true;
  f.pointer(app, cursor, true);
  REQUIRE(w->point_force.active);
  CHECK(w->point_force.pos.x == cursor.x);
  CHECK(w->point_force.pos.y == cursor.y);
  CHECK(w->point_force.strength > 0.f);
  REQUIRE(w->step(1).ok);
  size_t towards = 0;
  for (size_t i = 0; i < w->particles.size(); ++i) {
    const Vec2 to = cursor - w->particles.x[i];
    if (dot(w->particles.v[i], to) > 0.9f * length(w->particles.v[i]) * length(to))
      ++towards;  // within ~25 deg
  }
  CHECK(towards == w->particles.size());
  CHECK(max_speed() > 0.f);

  // Repel: the repel tool, or Shift with attract; the strength capped for the scene.
  ImGui::GetIO().KeyShift = true;
  f.pointer(app, cursor, true);
  CHECK(w->point_force.strength < 0.f);
  ImGui::GetIO().KeyShift = false;
  app.tools.force = 1e9f;
  f.pointer(app, cursor, true);
  const float cap = w->point_force.strength;
  CHECK(std::isfinite(cap));
  CHECK(cap > 0.f);
  CHECK(cap < 1e9f);
  // The cap keeps matter falling the whole diagonal under half a cell per step.
  const float L = std::hypot(w->grid.width(), w->grid.height());
  CHECK(std::sqrt(2.f * cap * L) * w->solver.dt <= 0.5f * w->grid.dx * 1.001f);

  // Released: off again; M off leaves the brush tools as they were.
  app.left_down = false;
  f.pointer(app, cursor, true);
  CHECK_FALSE(w->point_force.active);
  CHECK(f.key(app, GLFW_KEY_M, 0));
  w->point_force = PointForce{};
  app.left_down = true;
  f.pointer(app, cursor, true);
  CHECK_FALSE(w->point_force.active);  // the app's brush force stays the app's
  std::vector<HelpRow> rows;
  f.help(rows);
  REQUIRE(rows.size() == 1);
  CHECK(std::string(rows[0].key) == "M");
}

TEST_CASE(
    "The rigid feature draws a body into a scene without one, picks it and lists it in its panel",
    "[window][features][rigid]") {
  ImGuiFixture gui;
  App app;
  app.sim = small_scene();  // matter only
  app.adopt_world_params();
  app.cam.set(Vec2{0.5f, 0.5f}, 600.f);  // 600 px per metre
  Feature& f = feature_named(app, "rigid");
  REQUIRE(app.rigid_world() == nullptr);
  const double mass_before = app.world()->diagnostics().mass;

  // Not the Body tool and no bodies: the press is not the feature's.
  app.tools.tool = Tool::Pick;
  CHECK_FALSE(f.press(app, Vec2{0.5f, 0.8f}));

  // The Body tool: press, drag, release draw a box; it is added at the sync point, which gives
  // the scene a rigid world around the same matter.
  app.tools.tool = Tool::Body;
  app.tools.body_shape = 0;
  app.tools.body_density = 500.f;
  CHECK(f.press(app, Vec2{0.40f, 0.70f}));
  f.drag(app, Vec2{0.50f, 0.75f});
  f.release(app, Vec2{0.60f, 0.80f});
  CHECK(app.rigid_world() == nullptr);  // not before the sync point
  f.sync(app);
  rigid::RigidWorld* rw = app.rigid_world();
  REQUIRE(rw != nullptr);
  REQUIRE(rw->body_count() == 1);
  const rigid::BodyState s = rw->state(0);
  CHECK(s.com.x == Approx(0.5).margin(1e-6));
  CHECK(s.com.y == Approx(0.75).margin(1e-6));
  CHECK(s.mass == Approx(500.0 * 0.2 * 0.1 * rw->depth()).epsilon(1e-6));  // per the world's depth
  REQUIRE(app.world() != nullptr);
  CHECK(app.world()->diagnostics().mass == mass_before);  // the matter is the same

  // A drag too small to hold (under two grid cells) is refused, with the reason in the status line.
  f.press(app, Vec2{0.2f, 0.8f});
  f.release(app, Vec2{0.201f, 0.801f});
  f.sync(app);
  CHECK(rw->body_count() == 1);
  CHECK(app.status_line.find("no body drawn") != std::string::npos);

  // Pick: a press on the body is the feature's (the app's particle pick skips it), one beside it is not.
  app.tools.tool = Tool::Pick;
  app.selected_id = 7;
  CHECK(f.press(app, Vec2{0.5f, 0.75f}));
  f.release(app, Vec2{0.5f, 0.75f});
  CHECK(app.selected_id == 0);  // a body's pick clears the particle's
  CHECK_FALSE(f.press(app, Vec2{0.9f, 0.9f}));

  // Its panel lists the body; the Body tool's part of the Tools panel is the feature's alone.
  gui.frame([&] {
    f.panel(app);
    CHECK(ImGui::GetCurrentWindow()->DC.CursorPos.y >
          ImGui::GetCurrentWindow()->DC.CursorStartPos.y);
    CHECK(f.tool_panel(app, Tool::Body));
    CHECK_FALSE(f.tool_panel(app, Tool::Grab));
  });

  // A new scene starts the feature's state again: a press beside the bodies selects nothing.
  f.on_scene(app);
  app.tools.tool = Tool::Grab;
  CHECK_FALSE(f.press(app, Vec2{0.9f, 0.9f}));
}

TEST_CASE(
    "The DEM feature keeps the window's parameter copies: written at the sync point, kept "
    "by a reset, taken from the world after the rewind changes it",
    "[window][features][dem]") {
  App app;
  headless(app);
  REQUIRE(app.load_scene("dem_beam", {}));
  dem::DemWorld* d = app.dem_world();
  REQUIRE(d != nullptr);
  Feature& f = feature_named(app, "dem");
  const double E0 = d->bond.E;

  // The world's bond stiffness changed behind the window's back: the sync point writes the
  // window's copy (the panel's) back.
  d->bond.E = 2.0 * E0;
  f.sync(app);
  CHECK(d->bond.E == E0);

  // After the recording changed the world (a rewind restore), the copy is taken from it.
  d->bond.E = 3.0 * E0;
  f.pull(app);
  f.sync(app);
  CHECK(d->bond.E == 3.0 * E0);

  // A reset of the same scene keeps the edit; another scene starts from its file.
  app.pending.reset = true;
  app.sync();
  REQUIRE(app.dem_world() != nullptr);
  CHECK(app.dem_world() != d);  // a new world
  CHECK(app.scene_reloaded);
  CHECK(app.dem_world()->bond.E == 3.0 * E0);
  REQUIRE(app.load_scene("dem_beam", {}, false));  // as a lesson opens it: the file's values
  CHECK(app.dem_world()->bond.E == E0);

  // The velocity presets are MPM teaching fields: a DEM scene drops the request.
  app.pending.preset = Preset::Rotation;
  f.sync(app);
  CHECK_FALSE(app.pending.preset.has_value());

  // In a scene without grains the feature takes no row of the Inspector.
  App mpm;
  mpm.sim = small_scene();
  mpm.adopt_world_params();
  CHECK_FALSE(feature_named(mpm, "dem").inspect_row(mpm, 0));
}

TEST_CASE(
    "The SGF feature's timeline takes its strip from the scene's area and its seek takes "
    "the frame's stepping",
    "[window][features][sgf]") {
  App app;
  headless(app);
  app.cam.set_window(1280.f, 720.f, 1.f);
  REQUIRE(app.load_scene("pic_vs_apic", {}));
  Feature& f = feature_named(app, "sgf");

  // Hidden: no strip. Shown: the scene's area is that much shorter.
  app.sgf.show_timeline = false;
  CHECK(f.strip_height(app) == 0.f);
  const float full = app.scene_area().h;
  app.sgf.show_timeline = true;
  const float strip = f.strip_height(app);
  CHECK(strip > 0.f);
  CHECK(app.scene_area().h == Approx(full - strip));

  // A seek to step 5 (the timeline's scrub): the feature steps the simulation there and the app's
  // own stepping is skipped; then it lets go of the frame.
  REQUIRE(app.sim->step_count() == 0);
  app.sgf.seek_target = 5;
  CHECK(f.step(app));
  CHECK(app.sim->step_count() == 5);
  CHECK(app.sgf.seek_target == -1);
  CHECK_FALSE(f.step(app));
}

TEST_CASE(
    "The rewind feature: Home asks for the recording's first frame and the sync point "
    "restores it, with the state hash it had",
    "[window][features][rewind]") {
  App app;
  headless(app);
  REQUIRE(app.load_scene("pic_vs_apic", {}));
  Feature& f = feature_named(app, "rewind");
  const uint64_t start_hash = app.sim->diagnostics().hash;
  for (int k = 0; k < 3; ++k) REQUIRE(app.rw.ring.step(*app.sim, 10).ok);  // recorded steps
  REQUIRE(app.sim->step_count() == 30);
  CHECK_FALSE(f.key(app, GLFW_KEY_Q, 0));  // not the rewind's
  CHECK(f.key(app, GLFW_KEY_HOME, 0));
  CHECK(app.sim->step_count() == 30);  // only at the sync point
  app.sync();
  CHECK(app.sim->step_count() == 0);
  CHECK(app.sim->diagnostics().hash == start_hash);
  // Right: forward to the next recorded frame, again at the sync point.
  CHECK(f.key(app, GLFW_KEY_RIGHT, 0));
  app.sync();
  CHECK(app.sim->step_count() > 0);
  CHECK(app.sim->step_count() <= 30);
}

TEST_CASE("The Solver panel's grid control scales dt with the cells and says so in the status line",
          "[window][regrid]") {
  App app;
  headless(app);
  REQUIRE(app.load_scene("dam_break", {}));
  REQUIRE(app.world()->grid.nx == 192);
  REQUIRE(app.solver.dt == Approx(2e-4));
  app.pending.grid = 384;  // "Apply grid and restart"
  app.sync();
  REQUIRE(app.world() != nullptr);
  CHECK(app.world()->grid.nx == 384);
  CHECK(app.world()->solver.dt == Approx(1e-4));  // as --refine: the CFL number stays
  CHECK(app.world()->solver.substeps == 40);      // a frame covers the same simulated time
  CHECK(app.status_line.find("dt 0.0002 -> 0.0001 s") != std::string::npos);
  // A reset keeps the re-gridded scene with its dt (the window's copies).
  app.pending.reset = true;
  app.sync();
  CHECK(app.world()->grid.nx == 384);
  CHECK(app.world()->solver.dt == Approx(1e-4));
}

TEST_CASE("Settings are written when they change, not only on a clean quit", "[window][settings]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ps_autosave_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  App app;
  app.settings_path = (dir / "settings.ini").string();
  app.settings_autosave.saved(app.settings.text(), 0.0);  // as load_settings: no file yet
  auto file = [&] {
    std::ifstream in(app.settings_path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  CHECK_FALSE(
      app.autosave_settings(0.0));  // the full settings differ from the (missing) file: 2 s later
  CHECK_FALSE(fs::exists(app.settings_path));
  CHECK(app.autosave_settings(2.5));
  REQUIRE(fs::exists(app.settings_path));
  CHECK_FALSE(app.autosave_settings(5.0));  // nothing changed since
  // A change (the repel tool) is written once it has held for 2 s; a kill after that keeps it.
  app.tools.tool = Tool::Repel;
  CHECK_FALSE(app.autosave_settings(6.0));
  CHECK_FALSE(app.autosave_settings(7.0));
  CHECK(file().find("tool = 3\n") == std::string::npos);
  CHECK(app.autosave_settings(8.1));
  CHECK(file().find("tool = 3\n") != std::string::npos);
  CHECK_FALSE(app.autosave_settings(20.0));
  fs::remove_all(dir);
}

}  // namespace ps
