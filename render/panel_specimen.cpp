// The specimen-from-image window (seeds/000 section 2.1): load a
// PNG / JPG silhouette, mask it, trace its contours, fill it with equal
// particles, and show both inside tests on the image (winding number and the
// document's nearest-contour test) with their disagreements highlighted.
// Exports the ID,R,G,B table and the belt ID list, and builds a bonded DEM
// soft body scene from the specimen (a generated scene file with an "image"
// body, opened like any scene; the belt becomes an SGF group of that scene).
#include <glad/gl.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "imgui.h"
#include "imgui_stdlib.h"
#include "render/cpu/file_open.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/io/json.h"
#include "sim/scene/scene.h"

namespace ps {

namespace fs = std::filesystem;

namespace {
using ui::kError;
using ui::kGood;
using ui::kMuted;

// Marker colours (also the legend's).
const ImU32 kBoth = IM_COL32(90, 220, 140, 200);
const ImU32 kWindingOnly = IM_COL32(255, 150, 40, 255);
const ImU32 kNearestOnly = IM_COL32(235, 70, 235, 255);
const ImU32 kContour = IM_COL32(60, 200, 255, 230);
const ImU32 kHole = IM_COL32(255, 230, 60, 230);

const char* kTests[] = {"nearest contour (document)", "winding number",
                        "nearest contour (oriented)"};

void sep(const char* text) {
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
  ImGui::TextUnformatted(text);
  ImGui::PopStyleColor();
  ImGui::Separator();
}

void upload_texture(SpecimenUi& sp) {
  if (!sp.texture) glGenTextures(1, &sp.texture);
  glBindTexture(GL_TEXTURE_2D, sp.texture);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, sp.image.width, sp.image.height, 0, GL_RGB,
               GL_UNSIGNED_BYTE, sp.image.rgb.data());
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glBindTexture(GL_TEXTURE_2D, 0);
  sp.tex_w = sp.image.width;
  sp.tex_h = sp.image.height;
}

MaskParams mask_params(const SpecimenUi& sp) {
  MaskParams mp;
  mp.rule = sp.rule == 0 ? MaskRule::Dark : MaskRule::NotBackground;
  mp.threshold = sp.threshold;
  mp.tolerance = sp.tolerance;
  mp.invert = sp.invert;
  return mp;
}

void compute(App& a) {
  SpecimenUi& sp = a.sgf.spec;
  sp.dirty = false;
  if (sp.image.width <= 0) return;
  auto t0 = std::chrono::steady_clock::now();
  const MaskParams mp = mask_params(sp);
  sp.mask = make_mask(sp.image, mp);
  sp.contours = trace_contours(sp.mask);
  GridParams gp;
  gp.radius_px = sp.radius_px;
  sp.grid = grid_points(sp.image.width, sp.image.height, gp);
  const size_t n = sp.grid.size();
  sp.by_winding.assign(n, 0);
  sp.by_nearest.assign(n, 0);
  sp.both = sp.winding_only = sp.nearest_only = 0;
  if (!sp.contours.empty()) {
    ContourIndex idx(sp.contours);
    sp.by_winding = idx.inside_winding_many(sp.grid);
    for (size_t i = 0; i < n; ++i) {
      sp.by_nearest[i] = idx.inside_nearest(sp.grid[i], sp.compare == 1) ? 1 : 0;
      const bool w = sp.by_winding[i] != 0, c = sp.by_nearest[i] != 0;
      if (w && c)
        ++sp.both;
      else if (w)
        ++sp.winding_only;
      else if (c)
        ++sp.nearest_only;
    }
  }
  SpecimenParams spp;
  spp.mask = mp;
  spp.grid = gp;
  spp.test = static_cast<InsideTest>(sp.test);
  spp.metres_per_pixel = sp.width_m / static_cast<float>(sp.image.width);
  sp.specimen = make_specimen(sp.image, sp.mask, sp.contours, spp);
  sp.belt = select_bright(sp.specimen, sp.belt_t);
  sp.compute_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  a.log(
      "specimen compute particles=%zu both=%zu winding_only=%zu nearest_only=%zu contours=%zu belt=%zu test=%d "
      "radius_px=%.3g",
      sp.specimen.size(), sp.both, sp.winding_only, sp.nearest_only, sp.contours.size(),
      sp.belt.size(), sp.test, static_cast<double>(sp.radius_px));
}

void load(App& a) {
  SpecimenUi& sp = a.sgf.spec;
  // Decoded into a fresh image (render/cpu/file_open.h); the shown image and
  // its results change only when it loaded. The running scene is not touched.
  ImageOpen r = open_image_file(sp.path);
  if (!r.ok) {
    sp.error = r.message;
    a.log("specimen load error %s", r.message.c_str());
    return;
  }
  try {
    sp.image = std::move(r.image);
    sp.loaded_path = sp.path;
    sp.error.clear();
    sp.status.clear();
    upload_texture(sp);
    sp.out_folder =
        (fs::path(a.out_dir) / ("specimen-" + fs::path(sp.path).stem().string())).string();
    // Fit the image in about 420 px.
    sp.zoom = std::clamp(
        std::floor(520.f / static_cast<float>(std::max(sp.image.width, sp.image.height)) * 2.f) /
            2.f,
        0.5f, 8.f);
    sp.dirty = true;
    a.log("specimen load path=%s width=%d height=%d", sp.path.c_str(), sp.image.width,
          sp.image.height);
  } catch (const std::exception& e) {
    sp.error = e.what();
    a.log("specimen load error %s", e.what());
  }
}

std::string hex_colour(double r, double g, double b) {
  char s[16];
  auto q = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
  std::snprintf(s, sizeof s, "#%02x%02x%02x", q(r), q(g), q(b));
  return s;
}

Json num_array(std::initializer_list<double> v) {
  Json j = Json::array();
  for (double x : v) j.push_back(Json::number(x));
  return j;
}

/// Writes <folder>/<stem>-soft-body.json (an "image" body, bonded or not) and
/// <folder>/sgf/groups.json with the belt as a group; returns the scene path.
std::string write_soft_body(App& a) {
  SpecimenUi& sp = a.sgf.spec;
  const Specimen& s = sp.specimen;
  if (s.size() == 0) throw std::runtime_error("the specimen has no particles (check the mask)");
  const std::string stem = fs::path(sp.loaded_path).stem().string();
  fs::create_directories(sp.out_folder);
  const double W = sp.width_m,
               H = sp.width_m * sp.image.height / static_cast<double>(sp.image.width);
  const double dom_w = std::max(2.2 * W, 1.2 * H), dom_h = std::max(1.5 * H, 0.8 * dom_w);
  const double ox = 0.5 * (dom_w - W), oy = sp.gravity ? 0.08 * H + 0.01 : 0.5 * (dom_h - H);
  const double radius = sp.radius_px * W / sp.image.width;

  // Mean colours of the body and the belt (the materials' colours).
  std::vector<uint8_t> is_belt(s.size() + 1, 0);
  for (uint32_t id : sp.belt)
    if (id <= s.size()) is_belt[id] = 1;
  double sum[2][3] = {{0, 0, 0}, {0, 0, 0}};
  size_t cnt[2] = {0, 0};
  for (size_t i = 0; i < s.size(); ++i) {
    const int k = is_belt[s.id[i]] ? 1 : 0;
    for (int c = 0; c < 3; ++c) sum[k][c] += s.rgb[i][static_cast<size_t>(c)];
    ++cnt[k];
  }
  auto mean_hex = [&](int k, const char* fallback) {
    if (!cnt[k]) return std::string(fallback);
    return hex_colour(sum[k][0] / cnt[k], sum[k][1] / cnt[k], sum[k][2] / cnt[k]);
  };

  Json doc = Json::object();
  doc.set("kind", Json::string("dem"));
  doc.set("name", Json::string("Soft body: " + fs::path(sp.loaded_path).filename().string()));
  doc.set("description",
          Json::string("Made in the window from " + sp.loaded_path + " (" +
                       std::to_string(s.size()) + " particles, " + kTests[sp.test] +
                       " inside test" + (sp.bonded ? ", EBPM bonds" : ", no bonds") +
                       "). The belt (pixels with R, G, B > " + std::to_string(sp.belt_t) +
                       ") is group 2 and the SGF group 'belt'."));
  doc.set("frames", Json::number(600));
  doc.set("sgf", Json::string("sgf"));
  Json domain = Json::object();
  domain.set("min", num_array({0, 0}));
  domain.set("max", num_array({dom_w, dom_h}));
  domain.set("walls", Json::boolean(true));
  domain.set("wall_material", Json::string("floor"));
  doc.set("domain", domain);
  Json solver = Json::object();
  solver.set("dt", Json::string("auto"));
  solver.set("dt_safety", Json::number(0.3));
  solver.set("substeps", Json::number(100));
  solver.set("gravity", num_array({0, sp.gravity ? -9.81 : 0.0}));
  solver.set("velocity_limit", Json::number(50));
  solver.set("local_damping", Json::number(0.02));
  doc.set("solver", solver);
  auto material = [](double density, double E, double nu, double rest, double fric,
                     const std::string& colour) {
    Json m = Json::object();
    m.set("density", Json::number(density));
    m.set("E", Json::number(E));
    m.set("nu", Json::number(nu));
    m.set("restitution", Json::number(rest));
    m.set("friction", Json::number(fric));
    if (!colour.empty()) m.set("color", Json::string(colour));
    return m;
  };
  Json mats = Json::object();
  mats.set("floor", material(2500, 1e7, 0.25, 0.3, 0.8, ""));
  mats.set("body", material(1000, 2e5, 0.3, 0.3, 0.6, mean_hex(0, "#243a6b")));
  mats.set("belt", material(1000, 2e5, 0.3, 0.3, 0.6, mean_hex(1, "#f5c9a0")));
  doc.set("materials", mats);
  Json bond = Json::object();
  bond.set("enabled", Json::boolean(sp.bonded));
  bond.set("E", Json::number(2e5));
  bond.set("nu", Json::number(0.3));
  bond.set("radius_ratio", Json::number(1.0));
  bond.set("contact_radius_multiplier", Json::number(1.05));
  bond.set("tensile_strength", Json::number(2e6));
  bond.set("compressive_strength", Json::number(2e6));
  bond.set("shear_strength", Json::number(2e6));
  bond.set("damping", Json::number(0.1));
  doc.set("bond", bond);
  Json body = Json::object();
  body.set("shape", Json::string("image"));
  body.set("file", Json::string(fs::absolute(sp.loaded_path).lexically_normal().string()));
  body.set("origin", num_array({ox, oy}));
  body.set("width", Json::number(W));
  body.set("radius", Json::number(radius));
  body.set("material", Json::string("body"));
  body.set("group", Json::number(1));
  body.set("bonded", Json::boolean(sp.bonded));
  body.set("mask", Json::string(sp.rule == 0 ? "dark" : "not_background"));
  body.set("threshold", Json::number(sp.threshold));
  body.set("tolerance", Json::number(sp.tolerance));
  body.set("invert", Json::boolean(sp.invert));
  const char* test_names[] = {"nearest_contour", "winding", "nearest_contour_oriented"};
  body.set("inside_test", Json::string(test_names[sp.test]));
  Json belt = Json::object();
  belt.set("threshold", Json::number(sp.belt_t));
  belt.set("group", Json::number(2));
  belt.set("material", Json::string("belt"));
  body.set("belt", belt);
  Json bodies = Json::array();
  bodies.push_back(body);
  doc.set("bodies", bodies);

  // The belt as an SGF group of the new scene (IDs = specimen IDs: one image body).
  SgfSet set;
  if (!sp.belt.empty()) {
    const float c[3] = {1.f, 0.78f, 0.35f};
    set.groups.push_back(make_group("belt", sp.belt, c));
  }
  save_sgf_set(set, (fs::path(sp.out_folder) / "sgf").string());
  const std::string path = (fs::path(sp.out_folder) / (stem + "-soft-body.json")).string();
  save_json_file(path, doc);
  return path;
}

void controls(App& a) {
  SpecimenUi& sp = a.sgf.spec;
  const float label_w = ImGui::GetFontSize() * 6.5f;
  ImGui::SetNextItemWidth(-(ImGui::CalcTextSize("Load").x + 2 * ImGui::GetStyle().FramePadding.x +
                            ImGui::GetStyle().ItemSpacing.x));
  bool enter = ImGui::InputTextWithHint("##img", "PNG or JPG file", &sp.path,
                                        ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button("Load") || enter) load(a);
  if (!sp.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kError);
    ImGui::TextWrapped("%s", sp.error.c_str());
    ImGui::PopStyleColor();
  }
  if (sp.image.width <= 0) {
    ImGui::TextDisabled("load an image to start");
    return;
  }
  ImGui::TextDisabled("%s  %d x %d px", fs::path(sp.loaded_path).filename().string().c_str(),
                      sp.image.width, sp.image.height);

  ImGui::PushItemWidth(-label_w);
  sep("mask");
  const char* rules[] = {"dark pixels", "not background"};
  sp.dirty |= ImGui::Combo("inside is", &sp.rule, rules, 2);
  if (sp.rule == 0)
    sp.dirty |= ImGui::SliderInt("threshold", &sp.threshold, 1, 255, "luminance < %d");
  else
    sp.dirty |= ImGui::SliderInt("tolerance", &sp.tolerance, 0, 255, "%d");
  sp.dirty |= ImGui::Checkbox("invert", &sp.invert);
  sep("particles");
  sp.dirty |= ImGui::SliderFloat("radius", &sp.radius_px, 0.5f, 6.f, "%.2f px");
  sp.dirty |= ImGui::Combo("inside test", &sp.test, kTests, 3);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The test that decides the particles of the specimen (exports and soft body).");
  const char* cmp[] = {"document's formula", "oriented variant"};
  sp.dirty |= ImGui::Combo("compare", &sp.compare, cmp, 2);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Which nearest-contour test the picture compares with the winding number.\n"
        "The document's formula swaps its convex / concave branches (docs/sgf.md).");
  ImGui::PopItemWidth();

  // Legend with counts.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto legend = [&](ImU32 c, bool ring, const char* fmt, size_t n) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    const float fs = ImGui::GetFontSize();
    ImVec2 cc(p.x + 0.5f * fs, p.y + 0.55f * fs);
    if (ring)
      dl->AddCircle(cc, 0.38f * fs, c, 16, 2.f);
    else
      dl->AddCircleFilled(cc, 0.25f * fs, c, 12);
    ImGui::SetCursorScreenPos(ImVec2(p.x + 1.3f * fs, p.y));
    ImGui::Text(fmt, n);
  };
  legend(kBoth, false, "%zu inside by both tests", sp.both);
  legend(kWindingOnly, true, "%zu inside by winding only", sp.winding_only);
  legend(kNearestOnly, true, "%zu inside by nearest contour only", sp.nearest_only);
  ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
  ImGui::Text("%zu contours (cyan; holes yellow)", sp.contours.size());
  ImGui::Text("specimen: %zu particles (%s)", sp.specimen.size(),
              sp.test == 1 ? "winding" : "nearest contour");
  ImGui::PopStyleColor();

  sep("colours and belt");
  ImGui::PushItemWidth(-label_w);
  sp.dirty |= ImGui::SliderInt("belt t", &sp.belt_t, 0, 254, "R,G,B > %d");
  ImGui::PopItemWidth();
  ImGui::Text("belt: %zu particles", sp.belt.size());
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::InputTextWithHint("##out", "export folder", &sp.out_folder);
  const float bw = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  if (ImGui::Button("Save ID,R,G,B", ImVec2(bw, 0))) {
    try {
      fs::create_directories(sp.out_folder);
      const std::string p = (fs::path(sp.out_folder) / "colors.csv").string();
      save_color_csv(sp.specimen, p);  // atomic: a failure keeps the previous file
      sp.error.clear();
      sp.status = "wrote " + p;
      a.log("specimen export colors path=%s n=%zu", p.c_str(), sp.specimen.size());
    } catch (const std::exception& e) {
      sp.status.clear();
      sp.error = std::string("not saved: ") + e.what();
      a.log("specimen export error %s", e.what());
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("Save belt IDs", ImVec2(bw, 0))) {
    try {
      fs::create_directories(sp.out_folder);
      const std::string p = (fs::path(sp.out_folder) / "belt.txt").string();
      save_id_list(sp.belt, p);  // atomic: a failure keeps the previous file
      sp.error.clear();
      sp.status =
          "wrote " + p + " (" + std::to_string(sp.belt.size()) + " IDs, usable as an SGF group)";
      a.log("specimen export belt path=%s n=%zu", p.c_str(), sp.belt.size());
    } catch (const std::exception& e) {
      sp.status.clear();
      sp.error = std::string("not saved: ") + e.what();
      a.log("specimen export error %s", e.what());
    }
  }

  sep("DEM soft body");
  ImGui::PushItemWidth(-label_w);
  if (ImGui::SliderFloat("width", &sp.width_m, 0.05f, 2.f, "%.3f m", ImGuiSliderFlags_Logarithmic))
    sp.dirty = true;
  ImGui::PopItemWidth();
  ImGui::Checkbox("bonded (EBPM)", &sp.bonded);
  ImGui::SameLine();
  ImGui::Checkbox("gravity", &sp.gravity);
  const bool create = ImGui::Button("Create DEM soft body and open it", ImVec2(-FLT_MIN, 0));
  if (a.opt.verbose) {
    const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
    static ImVec2 last(-1, -1);
    if (lo.x != last.x || lo.y != last.y) {
      last = lo;
      a.log("ui name=spec_create x=%d y=%d w=%d h=%d visible=%d", static_cast<int>(lo.x),
            static_cast<int>(lo.y), static_cast<int>(hi.x - lo.x), static_cast<int>(hi.y - lo.y),
            ImGui::IsItemVisible() ? 1 : 0);
    }
  }
  if (create) {
    try {
      const std::string path = write_soft_body(a);
      a.pending.open_path = path;
      sp.error.clear();
      sp.status = "wrote " + path;
      sp.open = false;  // show the new scene
      a.log("specimen soft body scene=%s particles=%zu belt=%zu bonded=%d", path.c_str(),
            sp.specimen.size(), sp.belt.size(), sp.bonded ? 1 : 0);
    } catch (const std::exception& e) {
      sp.status.clear();
      sp.error = std::string("not created: ") + e.what();
      a.log("specimen soft body error %s", e.what());
    }
  }
  if (!sp.status.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kGood);
    ImGui::TextWrapped("%s", sp.status.c_str());
    ImGui::PopStyleColor();
  }
}

void picture(App& a) {
  SpecimenUi& sp = a.sgf.spec;
  if (!sp.texture || sp.image.width <= 0) return;
  ImGui::SetNextItemWidth(160.f * a.ui_scale);
  ImGui::SliderFloat("zoom", &sp.zoom, 0.5f, 12.f, "%.1fx", ImGuiSliderFlags_Logarithmic);
  ImGui::SameLine();
  ImGui::Checkbox("contours", &sp.show_contours);
  ImGui::SameLine();
  ImGui::Checkbox("particles", &sp.show_points);
  ImGui::BeginChild("##pic", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  const float z = sp.zoom;
  const float W = static_cast<float>(sp.image.width), H = static_cast<float>(sp.image.height);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::Image(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(sp.texture)),
               ImVec2(W * z, H * z));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto to_screen = [&](Vec2 p) { return ImVec2(p0.x + p.x * z, p0.y + (H - p.y) * z); };
  // Only what is visible is drawn (large images at high zoom).
  const ImVec2 clip0 = ImGui::GetWindowPos(),
               clip1(clip0.x + ImGui::GetWindowWidth(), clip0.y + ImGui::GetWindowHeight());
  auto visible = [&](ImVec2 s) {
    return s.x >= clip0.x - 8 && s.y >= clip0.y - 8 && s.x <= clip1.x + 8 && s.y <= clip1.y + 8;
  };
  // Dim the image slightly so markers read on any colour.
  dl->AddRectFilled(p0, ImVec2(p0.x + W * z, p0.y + H * z), IM_COL32(0, 0, 0, 70));
  if (sp.show_contours) {
    for (const Contour& c : sp.contours) {
      const ImU32 col = c.hole ? kHole : kContour;
      for (size_t k = 0; k < c.points.size(); ++k) {
        ImVec2 a0 = to_screen(c.points[k]), a1 = to_screen(c.points[(k + 1) % c.points.size()]);
        if (visible(a0) || visible(a1)) dl->AddLine(a0, a1, col, 1.2f);
      }
    }
  }
  const float rs = sp.radius_px * z;
  if (sp.show_points) {
    for (size_t i = 0; i < sp.grid.size(); ++i) {
      const bool w = sp.by_winding[i] != 0, c = sp.by_nearest[i] != 0;
      if (!w && !c) continue;
      const ImVec2 s = to_screen(sp.grid[i]);
      if (!visible(s)) continue;
      if (w && c) {
        const float r = std::max(0.8f, 0.35f * rs);
        dl->AddRectFilled(ImVec2(s.x - r, s.y - r), ImVec2(s.x + r, s.y + r), kBoth);
      }
    }
  }
  // Disagreements on top, always, with rings large enough to find.
  for (size_t i = 0; i < sp.grid.size(); ++i) {
    const bool w = sp.by_winding[i] != 0, c = sp.by_nearest[i] != 0;
    if (w == c) continue;
    const ImVec2 s = to_screen(sp.grid[i]);
    if (!visible(s)) continue;
    const ImU32 col = w ? kWindingOnly : kNearestOnly;
    const float r = std::max(5.f, 1.2f * rs);
    dl->AddCircle(s, r + 1.5f, IM_COL32(0, 0, 0, 200), 16, 3.5f);
    dl->AddCircle(s, r, col, 16, 2.f);
    dl->AddCircleFilled(s, std::max(1.5f, 0.4f * rs), col, 8);
  }
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const float px = (m.x - p0.x) / z, py = H - (m.y - p0.y) / z;
    const int c = std::clamp(static_cast<int>(px), 0, sp.image.width - 1);
    const int r = std::clamp(static_cast<int>((m.y - p0.y) / z), 0, sp.image.height - 1);
    const uint8_t* rgb = sp.image.at(c, r);
    ImGui::SetTooltip("pixel (%d, %d)  y-up (%.1f, %.1f)\nRGB %d %d %d", c, r,
                      static_cast<double>(px), static_cast<double>(py), rgb[0], rgb[1], rgb[2]);
  }
  ImGui::EndChild();
}

}  // namespace

void sgf_draw_specimen(App& a) {
  SpecimenUi& sp = a.sgf.spec;
  if (!sp.open) return;
  if (sp.image.width <= 0 && sp.error.empty() && sp.loaded_path.empty()) load(a);
  if (sp.dirty) compute(a);
  // Centred in the window, inside it whatever its size.
  const ImVec2 ds = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(0.5f * ds.x, 0.5f * ds.y), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(
      ImVec2(std::min(860.f * a.ui_scale, ds.x - 40.f), std::min(640.f * a.ui_scale, ds.y - 40.f)),
      ImGuiCond_Appearing);
  if (ImGui::Begin("Specimen from image", &sp.open, ImGuiWindowFlags_NoCollapse)) {
    ImGui::BeginChild("##ctl", ImVec2(330.f * a.ui_scale, 0), false);
    controls(a);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginGroup();
    picture(a);
    ImGui::EndGroup();
  }
  ImGui::End();
  if (!sp.open) a.log("specimen close");
}

void sgf_shutdown(App& a) {
  SpecimenUi& sp = a.sgf.spec;
  if (sp.texture) glDeleteTextures(1, &sp.texture);
  sp.texture = 0;
}

}  // namespace ps
