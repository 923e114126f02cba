#include "tests/fuzz/fuzz_targets.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include "render/cpu/lesson.h"
#include "render/cpu/settings.h"
#include "sim/core/error.h"
#include "sim/core/image.h"
#include "sim/core/limits.h"
#include "sim/dem/dem_world.h"
#include "sim/io/json.h"
#include "sim/io/p4.h"
#include "sim/io/text.h"
#include "sim/mpm/mpm_particles.h"
#include "sim/scene/compare.h"
#include "sim/scene/mpm_sgf.h"
#include "sim/scene/rewind.h"
#include "sim/scene/scene.h"
#include "sim/scene/simulation.h"
#include "sim/sgf/sgf.h"
#include "sim/specimen/specimen.h"

namespace fs = std::filesystem;

namespace ps::fuzz {
namespace {

std::string bytes(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A violated property is a finding: say what, then abort so libFuzzer keeps the input.
[[noreturn]] void property_failed(const char* what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what);
  std::abort();
}

// Scenes are resolved as if they sat beside the shipped ones, so relative image
// masks and SGF folders reach real files (more of the loader is exercised).
std::string scene_path() { return std::string(PS_SOURCE_DIR) + "/assets/scenes/fuzz.json"; }

// Lessons are read as if they sat beside the shipped ones, so a relative scene
// path reaches the shipped scenes.
std::string lesson_path() { return std::string(PS_SOURCE_DIR) + "/assets/lessons/fuzz.json"; }

// A built-in scene is read from its small copy (tests/fuzz/seeds/scene/small_<name>.json)
// where there is one: an execution then builds hundreds of particles, not the full scene.
// The path stays the real one, so the scene's relative paths (SGF folders, masks) resolve.
Json read_small_scene(const std::string& path) {
  static const fs::path scenes = fs::weakly_canonical(scenes_dir());
  const fs::path p(path);
  std::error_code ec;
  if (fs::weakly_canonical(p.parent_path(), ec) == scenes) {
    const fs::path small = fs::path(PS_SOURCE_DIR) / "tests" / "fuzz" / "seeds" / "scene" /
                           ("small_" + p.filename().string());
    if (fs::is_regular_file(small, ec)) return Json::parse(read_file_text(small.string()), path);
  }
  return Json::parse_file(path);
}

// The next substep of a pane whose world keeps a fixed one (0: adaptive, or none).
double fixed_dt(Simulation& s) {
  if (MpmWorld* w = s.mpm()) return w->solver.adaptive_dt ? 0.0 : static_cast<double>(w->next_dt());
  if (dem::DemWorld* d = s.dem()) return d->next_dt();
  return 0.0;
}

// Builds any scene document on the CPU backend (1 thread: deterministic) and
// steps it a little; every query the window makes after a step, too.
void build_and_step(const Json& doc) {
  std::unique_ptr<Simulation> sim = build_simulation(doc, scene_path(), scene_kind(doc), "cpu", 1);
  for (int k = 0; k < 3; ++k) {
    StepStatus st = sim->step(1);
    if (!st.ok) break;  // a blow-up is reported, not a crash
  }
  (void)sim->diagnostics();
  ParticleTable t;
  sim->table(t);
  Vec2 lo, hi;
  sim->bounds(lo, hi);
}

// Small worlds for the harnesses that need a particle set (SGF forces, P4P).
void make_particles(MpmParticles& p, size_t n) {
  p.clear();
  for (size_t i = 0; i < n; ++i)
    p.add(Vec2{0.1f * static_cast<float>(i), 0.f}, Vec2{}, 1.f, 1.f, 0, 0);
}

bool same_rows(const SgfFile& a, const SgfFile& b) {
  if (a.rows.size() != b.rows.size()) return false;
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const SgfRow &x = a.rows[i], &y = b.rows[i];
    if (x.id != y.id || x.fx != y.fx || x.fy != y.fy || x.fz != y.fz) return false;
  }
  return true;
}

// Applies a force list for a few steps of its range on a small particle set.
void apply_forces(const SgfList& list, const SgfSet* set) {
  MpmParticles p;
  make_particles(p, 16);
  auto hook = set ? make_mpm_force_hook(*set) : make_mpm_force_hook(list);
  for (const SgfFile& f : list.files) {
    for (int64_t s = f.start, k = 0; k < 3; ++k) {
      hook(s, p);
      if (s == f.end) break;
      ++s;
    }
  }
}

// The folder of the sgf_index target: two fixed CSVs; the fuzzer writes groups.json.
std::string index_folder() {
  static std::string dir;
  if (dir.empty()) {
    char tmpl[] = "/tmp/ps-fuzz-sgf-XXXXXX";
    if (!mkdtemp(tmpl)) property_failed("cannot create a temporary folder");
    dir = tmpl;
    std::ofstream(fs::path(dir) / "SGF1-10.csv") << "ID,FX,FY,FZ\n1,0,-1,0\n2,0,-1,0\n3,0.5,0,0\n";
    std::ofstream(fs::path(dir) / "SGF5-20.csv") << "ID,FX,FY,FZ\n4,1,1,0\n5,1,1,0\n";
  }
  return dir;
}

// The built-in scenes the "set" target edits: one MPM, one DEM, both tiny.
const char* kMpmBase = R"({
  "name": "fuzz mpm", "kind": "mpm",
  "domain": {"size": [1, 1], "grid": 32},
  "solver": {"dt": 0.0001, "substeps": 2, "transfer": "apic"},
  "materials": {"jelly": {"type": "jelly", "E": 1000, "nu": 0.2, "density": 1}},
  "bodies": [{"shape": "box", "min": [0.4, 0.4], "max": [0.5, 0.5], "material": "jelly", "spacing": 0.02,
              "velocity": [0.1, 0]}]
})";
const char* kDemBase = R"({
  "name": "fuzz dem", "kind": "dem",
  "domain": {"min": [0, 0], "max": [0.6, 0.6], "walls": ["bottom"]},
  "solver": {"dt": "auto", "substeps": 2, "gravity": [0, -9.81]},
  "materials": {"stone": {"density": 2000, "E": 1e7, "nu": 0.3, "restitution": 0.5, "friction": 0.5}},
  "bond": {"enabled": true, "E": 1e7, "nu": 0.3, "tensile_strength": 4e5},
  "bodies": [{"shape": "box", "center": [0.25, 0.2], "size": [0.1, 0.05], "radius": 0.005, "material": "stone",
              "bonded": true}]
})";

}  // namespace

void init_limits() {
  InputLimits& l = input_limits();
  l.max_file_bytes = 1 << 20;
  l.max_image_pixels = 256 * 256;
  l.max_image_side = 1024;
  l.max_mpm_particles = 4000;
  l.max_grid_nodes = 20000;
  l.max_dem_particles = 2000;
  l.max_string_bytes = 4096;
}

int scene(const uint8_t* data, size_t size) {
  try {
    Json doc = Json::parse(bytes(data, size), scene_path());
    build_and_step(doc);
  } catch (const InputError&) {
  } catch (const std::runtime_error&) {  // e.g. an unavailable backend: reported by the program too
  }
  return 0;
}

int set(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool dem = data[0] & 1;
  try {
    Json doc = Json::parse(dem ? kDemBase : kMpmBase, scene_path());
    std::string text = bytes(data + 1, size - 1);
    size_t b = 0;
    while (b <= text.size()) {
      size_t e = text.find('\n', b);
      if (e == std::string::npos) e = text.size();
      std::string line = text.substr(b, e - b);
      if (!line.empty()) apply_override(doc, line);
      b = e + 1;
    }
    build_and_step(doc);
  } catch (const InputError&) {
  } catch (const std::runtime_error&) {}
  return 0;
}

int lesson(const uint8_t* data, size_t size) {
  try {
    const Lesson l = parse_lesson(bytes(data, size), lesson_path());
    LessonOptions o;
    o.threads = 1;
    o.read_scene = read_small_scene;
    LessonBuild b = build_lesson(l, o);
    // The window's opening: the start preset on the scene, or on every pane of the comparison.
    if (l.preset >= 0) {
      RewindAction a;
      a.kind = RewindAction::Kind::Preset;
      a.preset = static_cast<Preset>(l.preset);
      a.speed = l.preset_speed;
      if (b.sim->mpm()) perform_action(*b.sim, a);
      if (b.comparison) b.comparison->apply_preset(a.preset, a.speed);
    }
    if (!b.comparison) {
      (void)b.sim->step(1);
      return 0;
    }
    // One displayed frame as the window steps it, its catch-up bounded (the window's budget).
    Comparison& c = *b.comparison;
    c.set_catch_up_limit(64);
    if (!c.step_part(1).ok) return 0;  // a blow-up is reported, not a crash
    c.finish_frame();
    // Lockstep: unless a pane is still catching up, every fixed-dt pane is within half its
    // substep of the first pane's time.
    if (!c.behind()) {
      const double t0 = c.pane(0).sim->time();
      for (size_t k = 1; k < c.size(); ++k) {
        const double dt = fixed_dt(*c.pane(k).sim);
        if (dt > 0.0 && fixed_dt(*c.pane(0).sim) > 0.0 &&
            std::abs(c.pane(k).sim->time() - t0) > 0.5 * dt * (1.0 + 1e-6) + 1e-9 * std::abs(t0))
          property_failed(
              "a pane not behind is more than half a substep from the first pane's time");
      }
    }
  } catch (const InputError& e) {
    // Every error of a lesson is located in the lesson file.
    if (e.loc().file != lesson_path() || e.loc().line <= 0) {
      std::fprintf(stderr, "unlocated lesson error: %s\n", e.what());
      property_failed("a lesson error does not name the lesson file and line");
    }
  } catch (const std::runtime_error&) {}
  return 0;
}

int sgf_csv(const uint8_t* data, size_t size) {
  const std::string in = bytes(data, size);
  const size_t nl = in.find('\n');
  const std::string name = in.substr(0, nl);
  const std::string text = nl == std::string::npos ? std::string() : in.substr(nl + 1);
  int64_t s = 1, e = 5;
  if (is_sgf_candidate(name) && parse_sgf_file_name(name, s, e) && s > e)
    property_failed("file name range reversed");
  if (!parse_sgf_file_name(name, s, e)) s = 1, e = 5;
  std::vector<InputError> diags;
  SgfFile f = parse_sgf_csv(text, "fuzz/" + name, s, e, diags);
  // Round trip: what the sandbox writes, it reads back identically and cleanly.
  std::vector<InputError> diags2;
  SgfFile g = parse_sgf_csv(sgf_csv_text(f), "fuzz/roundtrip.csv", s, e, diags2);
  if (!diags2.empty() || !same_rows(f, g)) property_failed("SGF CSV round trip");
  SgfList list;
  list.files.push_back(std::move(f));
  SgfSet inferred = sgf_infer_groups(list);
  if (sgf_flatten(inferred).row_count() != list.row_count())
    property_failed("SGF groups lose or add rows");
  apply_forces(list, nullptr);
  return 0;
}

int sgf_index(const uint8_t* data, size_t size) {
  const std::string dir = index_folder();
  {
    std::ofstream out(fs::path(dir) / kSgfIndexName, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  SgfSetLoadResult r = load_sgf_set(dir);
  SgfList flat = sgf_flatten(r.set);
  // Every row of the two CSVs (5 rows) is either claimed by the index or inferred.
  if (flat.row_count() < 5) property_failed("SGF set lost rows of its CSVs");
  apply_forces(flat, &r.set);
  return 0;
}

int p4p(const uint8_t* data, size_t size) {
  P4pLoad a = parse_p4p(bytes(data, size), "fuzz.p4p");
  P4pLoad b = parse_p4p(p4p_text(a.frames), "roundtrip.p4p");
  if (!b.ok() || b.frames.size() != a.frames.size()) property_failed("P4P round trip");
  for (size_t f = 0; f < a.frames.size(); ++f) {
    const auto &x = a.frames[f], &y = b.frames[f];
    if (x.time != y.time || x.particles.size() != y.particles.size())
      property_failed("P4P round trip (frame)");
    for (size_t i = 0; i < x.particles.size(); ++i)
      if (std::memcmp(&x.particles[i], &y.particles[i], sizeof(P4Particle)) != 0 &&
          !(x.particles[i].id == y.particles[i].id &&
            x.particles[i].group == y.particles[i].group &&
            x.particles[i].mass == y.particles[i].mass &&
            x.particles[i].volume == y.particles[i].volume &&
            x.particles[i].px == y.particles[i].px && x.particles[i].py == y.particles[i].py &&
            x.particles[i].pz == y.particles[i].pz && x.particles[i].vx == y.particles[i].vx &&
            x.particles[i].vy == y.particles[i].vy && x.particles[i].vz == y.particles[i].vz))
        property_failed("P4P round trip (row)");
  }
  if (!a.frames.empty()) {
    MpmParticles p;
    try {
      mpm_from_p4(a.frames.front(), p);
    } catch (const InputError&) {}
  }
  return 0;
}

int p4c(const uint8_t* data, size_t size) {
  P4cLoad a = parse_p4c(bytes(data, size), "fuzz.p4c");
  P4cLoad b = parse_p4c(p4c_text(a.frames), "roundtrip.p4c");
  if (!b.ok() || b.frames.size() != a.frames.size()) property_failed("P4C round trip");
  for (size_t f = 0; f < a.frames.size(); ++f) {
    const auto &x = a.frames[f], &y = b.frames[f];
    if (x.time != y.time || x.contacts.size() != y.contacts.size())
      property_failed("P4C round trip (frame)");
    for (size_t i = 0; i < x.contacts.size(); ++i) {
      const P4Contact &c = x.contacts[i], &d = y.contacts[i];
      if (c.p1 != d.p1 || c.p2 != d.p2 || c.cx != d.cx || c.cy != d.cy || c.cz != d.cz ||
          c.fx != d.fx || c.fy != d.fy || c.fz != d.fz || c.bonded != d.bonded)
        property_failed("P4C round trip (row)");
    }
  }
  return 0;
}

int image(const uint8_t* data, size_t size) {
  Image img;
  try {
    img = decode_image(bytes(data, size), "fuzz.img");
  } catch (const InputError&) {
    return 0;
  }
  if (img.width <= 0 || img.height <= 0 ||
      img.rgb.size() != static_cast<size_t>(img.width) * img.height * 3)
    property_failed("decoded image has an inconsistent size");
  SpecimenParams sp;
  sp.mask.threshold = size > 0 ? data[0] : 128;
  sp.grid.radius_px = 1.f + static_cast<float>(size > 1 ? data[1] % 4 : 0);
  const Mask m = make_mask(img, sp.mask);
  const std::vector<Contour> contours = trace_contours(m);
  const Specimen s = make_specimen(img, m, contours, sp);
  (void)select_bright(s);
  return 0;
}

int settings(const uint8_t* data, size_t size) {
  SettingsFile s;
  s.parse(bytes(data, size));
  // The keys and ranges the window reads (render/window_app.cpp load_settings).
  (void)s.get_int("tool", 0, 0, 4);
  (void)s.get_float("tool.radius", 0.1f, 1e-6f, 1e6f);
  (void)s.get_float("tool.force", 1.f, 0.f, 1e9f);
  (void)s.get_int("view.color_mode", 0, 0, 8);
  (void)s.get_bool("view.auto_range", true);
  (void)s.get_float("view.sprite_scale", 1.f, 0.25f, 4.f);
  (void)s.get("output.folder", "out");
  (void)s.get("scene.folder", "");
  for (const char* k : {"window.width", "window.height", "window.x", "window.y", "ui.scale"})
    (void)s.get_int(k, 100, -100000, 100000);
  return 0;
}

const TargetInfo* targets(size_t& count) {
  static const TargetInfo all[] = {
      {"scene", scene, "scene JSON: parse, build the MPM or DEM world, 3 substeps"},
      {"set", set, "--set overrides, one per line, on a small MPM or DEM scene; build and step"},
      {"lesson", lesson,
       "lesson JSON: parse, its scene (small copies) with its set entries, preset, comparison, a frame"},
      {"sgf_csv", sgf_csv,
       "SGF CSV file (line 1: its file name): parse, round trip, groups, forces"},
      {"sgf_index", sgf_index, "SGF set index groups.json beside two CSVs: load, flatten, forces"},
      {"p4p", p4p, "P4P particle file: parse, round trip, into MPM particles"},
      {"p4c", p4c, "P4C contact file: parse, round trip"},
      {"image", image, "specimen image: decode (size-limited), mask, contours, particles"},
      {"settings", settings, "window settings file: parse, read every key"},
  };
  count = sizeof(all) / sizeof(all[0]);
  return all;
}

}  // namespace ps::fuzz
