// The window's panels (Dear ImGui 1.86): two side columns docked to the
// window edges (Scene, Solver, Presets, Materials, Tools on the left; View,
// Inspector, Stats on the right), the legend, banners and the help overlay.
// Panels only edit App's copies and `pending`; App::sync applies them.
#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>

#include "backends/imgui_impl_opengl3.h"
#include "imgui.h"
#include "imgui_stdlib.h"
#include "render/cpu/layout.h"
#include "render/cpu/particle_fields.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/mpm/material_table.h"
#include "sim/mpm/mpm_kernels.h"
#include "sim/scene/coupled.h"
#include "sim/scene/rigid_scene.h"

namespace ps {

namespace fs = std::filesystem;

namespace {
using ui::begin_props;
using ui::help_marker;
using ui::kAccent;
using ui::kError;
using ui::kMuted;
using ui::kWarn;
using ui::prop;
using ui::section_label;

std::string with_commas(size_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace

// [SECTION] Style ----------------------------------------------------------------

void App::setup_style() {
  ImGuiIO& io = ImGui::GetIO();
  const float size = 15.f * ui_scale;
  const char* sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  const char* mono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
  std::error_code ec;
  if (fs::exists(sans, ec))
    io.Fonts->AddFontFromFileTTF(sans, size);
  else {
    ImFontConfig cfg;
    cfg.SizePixels = 13.f * ui_scale;
    io.Fonts->AddFontDefault(&cfg);
  }
  if (fs::exists(mono, ec))
    io.Fonts->AddFontFromFileTTF(mono, size - 1.f * ui_scale);  // ui::mono_font()
  else
    io.Fonts->AddFontDefault();
  if (fs::exists(sans, ec)) io.Fonts->AddFontFromFileTTF(sans, 1.45f * size);  // ui::title_font()

  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0.f;
  s.ChildRounding = 4.f;
  s.FrameRounding = 4.f;
  s.PopupRounding = 4.f;
  s.GrabRounding = 4.f;
  s.TabRounding = 4.f;
  s.ScrollbarRounding = 6.f;
  s.WindowBorderSize = 0.f;
  s.FrameBorderSize = 0.f;
  s.WindowPadding = ImVec2(12, 10);
  s.FramePadding = ImVec2(8, 4);
  s.ItemSpacing = ImVec2(8, 6);
  s.ItemInnerSpacing = ImVec2(6, 4);
  s.IndentSpacing = 14.f;
  s.ScrollbarSize = 12.f;
  s.GrabMinSize = 10.f;
  ImVec4* c = s.Colors;
  c[ImGuiCol_Text] = ImVec4(0.90f, 0.92f, 0.95f, 1.f);
  c[ImGuiCol_TextDisabled] = ImVec4(0.48f, 0.51f, 0.57f, 1.f);
  c[ImGuiCol_WindowBg] = ImVec4(0.085f, 0.092f, 0.113f, 0.97f);
  c[ImGuiCol_PopupBg] = ImVec4(0.10f, 0.11f, 0.135f, 0.98f);
  c[ImGuiCol_Border] = ImVec4(0.20f, 0.22f, 0.27f, 1.f);
  c[ImGuiCol_FrameBg] = ImVec4(0.145f, 0.157f, 0.192f, 1.f);
  c[ImGuiCol_FrameBgHovered] = ImVec4(0.19f, 0.21f, 0.26f, 1.f);
  c[ImGuiCol_FrameBgActive] = ImVec4(0.22f, 0.25f, 0.31f, 1.f);
  c[ImGuiCol_TitleBg] = ImVec4(0.085f, 0.092f, 0.113f, 1.f);
  c[ImGuiCol_TitleBgActive] = ImVec4(0.11f, 0.12f, 0.15f, 1.f);
  c[ImGuiCol_Header] = ImVec4(0.15f, 0.17f, 0.21f, 1.f);
  c[ImGuiCol_HeaderHovered] = ImVec4(0.20f, 0.24f, 0.31f, 1.f);
  c[ImGuiCol_HeaderActive] = ImVec4(0.23f, 0.29f, 0.38f, 1.f);
  c[ImGuiCol_Button] = ImVec4(0.17f, 0.20f, 0.26f, 1.f);
  c[ImGuiCol_ButtonHovered] = ImVec4(0.24f, 0.34f, 0.48f, 1.f);
  c[ImGuiCol_ButtonActive] = ImVec4(0.28f, 0.44f, 0.64f, 1.f);
  c[ImGuiCol_CheckMark] = kAccent;
  c[ImGuiCol_SliderGrab] = ImVec4(0.36f, 0.60f, 0.90f, 1.f);
  c[ImGuiCol_SliderGrabActive] = ImVec4(0.46f, 0.72f, 1.00f, 1.f);
  c[ImGuiCol_Separator] = ImVec4(0.18f, 0.20f, 0.25f, 1.f);
  c[ImGuiCol_PlotLines] = ImVec4(0.40f, 0.72f, 1.00f, 1.f);
  c[ImGuiCol_PlotHistogram] = kAccent;
  c[ImGuiCol_TableRowBg] = ImVec4(0, 0, 0, 0);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(1, 1, 1, 0.025f);
  c[ImGuiCol_ScrollbarBg] = ImVec4(0, 0, 0, 0);
  if (projector) {
    // High contrast for a projector in a lit room: white on black, bright
    // yellow marks, visible frame borders.
    const ImVec4 yellow(1.00f, 0.84f, 0.20f, 1.f);
    c[ImGuiCol_Text] = ImVec4(1.f, 1.f, 1.f, 1.f);
    c[ImGuiCol_TextDisabled] = ImVec4(0.80f, 0.82f, 0.86f, 1.f);
    c[ImGuiCol_WindowBg] = ImVec4(0.f, 0.f, 0.f, 1.f);
    c[ImGuiCol_PopupBg] = ImVec4(0.04f, 0.04f, 0.05f, 1.f);
    c[ImGuiCol_Border] = ImVec4(0.70f, 0.72f, 0.78f, 1.f);
    c[ImGuiCol_FrameBg] = ImVec4(0.10f, 0.11f, 0.14f, 1.f);
    c[ImGuiCol_FrameBgHovered] = ImVec4(0.18f, 0.20f, 0.26f, 1.f);
    c[ImGuiCol_Header] = ImVec4(0.14f, 0.20f, 0.34f, 1.f);
    c[ImGuiCol_HeaderHovered] = ImVec4(0.20f, 0.30f, 0.48f, 1.f);
    c[ImGuiCol_Button] = ImVec4(0.14f, 0.22f, 0.38f, 1.f);
    c[ImGuiCol_ButtonHovered] = ImVec4(0.22f, 0.36f, 0.60f, 1.f);
    c[ImGuiCol_CheckMark] = yellow;
    c[ImGuiCol_SliderGrab] = yellow;
    c[ImGuiCol_SliderGrabActive] = ImVec4(1.f, 0.95f, 0.5f, 1.f);
    c[ImGuiCol_PlotLines] = yellow;
    c[ImGuiCol_PlotHistogram] = yellow;
    s.FrameBorderSize = 1.f;
  }
  s.ScaleAllSizes(ui_scale);
}

void App::rebuild_ui() {
  ui_rebuild = false;
  const float old = ui_scale;
  ui_scale = std::clamp(effective_ui_scale(), 0.5f, 6.f);
  // The panels grow with the text, within their share of the window (render/cpu/layout.h).
  left_pref *= ui_scale / old;
  right_pref *= ui_scale / old;
  const SidePanels sp = clamp_side_panels(left_pref, right_pref, cam.width(),
                                          side_panel_share(projector), 240.f * ui_scale);
  left_w = sp.left;
  right_w = sp.right;
  panels_resized = true;
  ImGui::GetIO().Fonts->Clear();
  ImGui::GetStyle() = ImGuiStyle();
  setup_style();
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  log("ui scale=%.3f user=%.3f projector=%d", static_cast<double>(ui_scale),
      static_cast<double>(user_scale), projector ? 1 : 0);
}

// [SECTION] Layout --------------------------------------------------------------

void App::draw_panels() {
  const ImGuiIO& io = ImGui::GetIO();
  const float H = io.DisplaySize.y, W = io.DisplaySize.x;
  const ImGuiWindowFlags side = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoCollapse;
  // The side panels' background: a scissored clear at the start of each
  // panel's draw list (clear_panel_backgrounds), the colour ImGui would blend over the scene's.
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  const float clear_rgb[3] = {projector ? 0.f : 0.043f, projector ? 0.f : 0.047f,
                              projector ? 0.f : 0.059f};
  const auto begin_side = [&](const char* name, size_t k) {
    ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.f, 0.f, 0.f, 0.f));
    const bool open = ImGui::Begin(name, nullptr, side);
    ImGui::PopStyleColor();
    PanelBackground& b = panel_backgrounds[k];
    const ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
    b.rect = {p.x, p.y, sz.x, sz.y};
    b.rgb = {bg.x * bg.w + clear_rgb[0] * (1.f - bg.w), bg.y * bg.w + clear_rgb[1] * (1.f - bg.w),
             bg.z * bg.w + clear_rgb[2] * (1.f - bg.w)};
    b.draw_list = ImGui::GetWindowDrawList();
    return open;
  };

  // Tab (presenter view): no side panels; the legend, strips, banners and help stay.
  if (panels_hidden) {
    draw_overlays();
    return;
  }
  // The panels' widths within their share of the window, every frame: a resize, the widths
  // imgui.ini brought from a larger screen, projector mode (render/cpu/layout.h).
  const float share = side_panel_share(projector), min_w = 240.f * ui_scale;
  {
    const SidePanels sp = clamp_side_panels(left_pref, right_pref, W, share, min_w);
    if (std::abs(sp.left - left_w) > 1.f || std::abs(sp.right - right_w) > 1.f) {
      left_w = sp.left;
      right_w = sp.right;
      panels_resized = true;
    }
  }
  const bool set_widths = panels_resized;
  if (set_widths)
    log("panels left=%.0f right=%.0f window=%.0f share=%.2f", static_cast<double>(left_w),
        static_cast<double>(right_w), static_cast<double>(W), static_cast<double>(share));
  // A width ImGui reports that is not the one set: the user dragged the edge (or imgui.ini
  // brought it); it becomes the wanted width, which a larger window gives back in full.
  const auto took = [set_widths](float got, float& w, float& pref) {
    if (!set_widths && std::abs(got - w) > 1.f) pref = got;
    w = got;
  };
  const float min_each = std::min(min_w, 0.5f * share * W);
  // Left column: docked to the left edge, full height, width resizable (kept in imgui.ini).
  ImGui::SetNextWindowPos(ImVec2(0, 0), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(left_w, H),
                           panels_resized ? ImGuiCond_Always : ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSizeConstraints(ImVec2(min_each, H),
                                      ImVec2(std::max(min_each, share * W - right_w), H));
  if (begin_side("Particle Sandbox", 0)) {
    panel_lesson();
    panel_compare();
    panel_scene();
    panel_presets();
    panel_tools();
    if (!compare.cmp) {  // these edit the single scene; the panes keep their own settings
      panel_solver();
      for (auto& f : features) f->panel(*this);
      panel_materials();
    }
  }
  took(ImGui::GetWindowWidth(), left_w, left_pref);
  ImGui::End();

  // Right column.
  ImGui::SetNextWindowSizeConstraints(ImVec2(min_each, H),
                                      ImVec2(std::max(min_each, share * W - left_w), H));
  ImGui::SetNextWindowSize(ImVec2(right_w, H),
                           panels_resized ? ImGuiCond_Always : ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowPos(ImVec2(W, 0), ImGuiCond_Always, ImVec2(1.f, 0.f));
  if (begin_side("Inspect", 1)) {
    if (ImGui::BeginTabBar("##right_tabs")) {
      if (ImGui::BeginTabItem("Particles")) {
        panel_view();
        if (compare.cmp) {
          panel_compare_stats();
        } else {
          panel_inspector();
          panel_stats();
        }
        ImGui::EndTabItem();
      }
      for (auto& f : features) f->right_tab(*this);  // "SGF forces" (render/feature_sgf.cpp)
      ImGui::EndTabBar();
    }
  }
  took(ImGui::GetWindowWidth(), right_w, right_pref);
  panels_resized = false;
  ImGui::End();
  draw_overlays();
}

Vec2 App::status_box() const {
  // Twelve characters wide at least: a column as narrow as "H  help" broke messages mid-word.
  const ImVec2 hint = ImGui::CalcTextSize("H  help");
  return Vec2{std::max(hint.x, 12.f * ImGui::GetFontSize()) + 12.f * ui_scale,
              hint.y + 12.f * ui_scale};
}

void App::measure_overlays() {
  overlay_flow.begin_measure(overlay_gap());
  overlay_slot(status_box());
  draw_legend();
  for (auto& f : features) f->legend_box(*this);
  overlay_boxes = overlay_flow.boxes();
}

void App::draw_overlays() {
  // The legends beside the scene (render/cpu/layout.h): the status line's box first, then each legend's.
  overlay_flow.begin(overlay_dock, overlay_gap());
  const Vec2 status_at = overlay_slot(status_box());
  draw_legend();
  for (auto& f : features) f->legend_box(*this);
  draw_status_line(status_at, 6.f * ui_scale);
  for (auto& f : features) f->strip(*this);  // the SGF timeline, the rewind strip under it
  for (auto& f : features) f->overlay(*this);
  draw_banners();
  if (show_help) draw_help();
}

namespace {

/// ImDrawCallback: a side panel's background, where ImGui would have drawn it
/// (first in the panel's draw list). The backend's scissor test is on; every
/// later command sets its own scissor box.
void clear_panel_background(const ImDrawList*, const ImDrawCmd* cmd) {
  const auto* b = static_cast<const App::PanelBackground*>(cmd->UserCallbackData);
  const ImDrawData* dd = ImGui::GetDrawData();
  if (!b || !dd) return;
  // The backend's mapping of a clip rectangle to framebuffer pixels.
  const ImVec2 s = dd->FramebufferScale;
  const float x0 = (b->rect[0] - dd->DisplayPos.x) * s.x,
              x1 = (b->rect[0] + b->rect[2] - dd->DisplayPos.x) * s.x;
  const float y0 = (b->rect[1] - dd->DisplayPos.y) * s.y,
              y1 = (b->rect[1] + b->rect[3] - dd->DisplayPos.y) * s.y;
  const float fb_h = dd->DisplaySize.y * s.y;
  if (!(x1 > x0 && y1 > y0)) return;
  GLfloat previous[4];
  glGetFloatv(GL_COLOR_CLEAR_VALUE, previous);
  glScissor(static_cast<GLint>(x0), static_cast<GLint>(fb_h - y1), static_cast<GLsizei>(x1 - x0),
            static_cast<GLsizei>(y1 - y0));
  glClearColor(b->rgb[0], b->rgb[1], b->rgb[2], 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  glClearColor(previous[0], previous[1], previous[2], previous[3]);
}

}  // namespace

void App::clear_panel_backgrounds() {
  for (PanelBackground& b : panel_backgrounds) {
    auto* dl = static_cast<ImDrawList*>(b.draw_list);
    b.draw_list = nullptr;
    if (!dl || dl->CmdBuffer.Size == 0) continue;
    ImDrawCmd cmd = dl->CmdBuffer[0];  // its offsets, clip and texture: nothing is drawn by it
    cmd.ElemCount = 0;
    cmd.UserCallback = clear_panel_background;
    cmd.UserCallbackData = &b;
    dl->CmdBuffer.push_front(cmd);
  }
}

// [SECTION] Scene ------------------------------------------------------------------

void App::panel_scene() {
  if (!ImGui::CollapsingHeader("Scene", ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (sim) {
    ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
    ImGui::TextWrapped("%s", sim->info().name.c_str());
    ImGui::PopStyleColor();
    if (!sim->info().description.empty() && ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.f);
      ImGui::TextUnformatted(sim->info().description.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
  }
  for (auto& f : features)
    f->scene_panel(*this);  // the scene browser's button (render/feature_browser.cpp)
  lessons_list();
  float bw = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  if (ImGui::Button(running ? "Pause  (Space)" : "Run  (Space)", ImVec2(bw, 0))) {
    running = !running;
    log_run_state();
  }
  ImGui::SameLine();
  if (ImGui::Button("Reset  (Shift+R)", ImVec2(bw, 0))) pending.reset = true;

  if (ImGui::TreeNode("Open file")) {
    ImGui::SetNextItemWidth(-FLT_MIN);
    ImGui::InputTextWithHint("##folder", "folder", &open_folder);
    std::error_code ec;
    if (ImGui::BeginListBox("##files",
                            ImVec2(-FLT_MIN, 5.5f * ImGui::GetTextLineHeightWithSpacing()))) {
      if (fs::is_directory(open_folder, ec)) {
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(open_folder, ec))
          if (e.path().extension() == ".json") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
          bool sel = open_path == f.string();
          if (ImGui::Selectable(f.filename().string().c_str(), sel,
                                ImGuiSelectableFlags_AllowDoubleClick)) {
            open_path = f.string();
            if (ImGui::IsMouseDoubleClicked(0)) pending.open_path = open_path;
          }
        }
        if (files.empty()) ImGui::TextDisabled("no .json files here");
      } else {
        ImGui::TextDisabled("not a folder");
      }
      ImGui::EndListBox();
    }
    ImGui::SetNextItemWidth(-FLT_MIN - ImGui::CalcTextSize("Open").x -
                            2 * ImGui::GetStyle().FramePadding.x - ImGui::GetStyle().ItemSpacing.x);
    bool enter = ImGui::InputTextWithHint("##path", "scene file", &open_path,
                                          ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if ((ImGui::Button("Open") || enter) && !open_path.empty()) pending.open_path = open_path;
    ImGui::TreePop();
  }
  if (MpmScene* sc = mpm_scene()) {
    if (ImGui::TreeNode("Save scene")) {
      ImGui::TextDisabled("with the parameters edited here");
      ImGui::SetNextItemWidth(-FLT_MIN - ImGui::CalcTextSize("Save").x -
                              2 * ImGui::GetStyle().FramePadding.x -
                              ImGui::GetStyle().ItemSpacing.x);
      ImGui::InputText("##save", &save_path);
      ImGui::SameLine();
      if (ImGui::Button("Save") && !save_path.empty()) {
        try {
          std::error_code ec;
          if (fs::path(save_path).has_parent_path())
            fs::create_directories(fs::path(save_path).parent_path(), ec);
          Json doc = mpm_scene_to_json(*sc);
          if (auto* c = dynamic_cast<CoupledSimulation*>(sim.get())) {
            doc.set("rigid", rigid::rigid_section_json(*c->rigid(), c->rigid_doc()));
            if (c->grains()) doc.set("dem", c->grains_doc());  // the grains as loaded
          }
          save_json_file(save_path, doc);
          set_status("scene saved: " + save_path);
          log("save path=%s", save_path.c_str());
        } catch (const std::exception& e) {
          load_error = std::string("scene not saved: ") + e.what();  // WriteError: file, OS reason
          log("save error %s", e.what());
        }
      }
      ImGui::TreePop();
    }
  }
  if (!load_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kError);
    ImGui::TextWrapped("%s", load_error.c_str());
    ImGui::PopStyleColor();
  }
}

// [SECTION] Solver -------------------------------------------------------------------

void App::panel_solver() {
  MpmWorld* w = world();
  if (!w) return;
  if (!ImGui::CollapsingHeader("Solver", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const float label_w = ImGui::GetFontSize() * 6.f;
  ImGui::PushItemWidth(-label_w);

  std::string bname = w->backend_name();
  if (ImGui::BeginCombo("backend", bname.c_str())) {
    for (const auto& b : available_backends())
      if (ImGui::Selectable(b.c_str(), bname.rfind(b, 0) == 0)) pending.backend = b;
    ImGui::EndCombo();
  }

  int t = static_cast<int>(solver.transfer);
  section_label("transfer");
  for (int k = 0; k < static_cast<int>(kTransferLabels.size()); ++k) {
    if (k > 0) ImGui::SameLine();
    if (ImGui::RadioButton(kTransferLabels.names[static_cast<size_t>(k)], t == k)) t = k;
  }
  help_marker(
      "PIC averages particle velocities onto the grid and loses rotation and shear.\n"
      "APIC also carries each particle's affine field C, so rotation survives.\n"
      "FLIP transfers velocity changes; the blend mixes FLIP with PIC.  Key A toggles PIC / APIC.\n"
      "PolyPIC (Fu et al. 2017) carries six more polynomial modes (quadratic kernel only, CPU backend):\n"
      "it conserves what APIC does and dissipates less.");
  if (t != static_cast<int>(solver.transfer)) {
    solver.transfer = static_cast<Transfer>(t);
    if (solver.transfer == Transfer::PolyPIC && solver.kernel != Kernel::Quadratic) {
      solver.kernel = Kernel::Quadratic;
      log("PolyPIC needs the quadratic kernel: kernel quadratic");
    }
    log("transfer %s", transfer_name(solver.transfer));
  }
  ImGui::BeginDisabled(solver.transfer != Transfer::FLIP);
  ImGui::SliderFloat("FLIP blend", &solver.flip_blend, 0.f, 1.f, "%.3f");
  int adv = static_cast<int>(solver.flip_advect);
  const char* advects[] = {"grid (PIC) velocity", "FLIP-blended velocity"};
  if (ImGui::Combo("advection", &adv, advects, 2)) {
    solver.flip_advect = static_cast<FlipAdvect>(adv);
    log("FLIP advects with the %s", advects[adv]);
  }
  help_marker(
      "How FLIP particles move. Grid (PIC) velocity, the default: x += dt sum w v_i, the same\n"
      "motion that updates F (Brackbill's FLIP, Sulsky's MPM). Blended velocity: x += dt v_p,\n"
      "as the lecture's demo and many FLIP fluid codes do. Velocities are FLIP-blended either way.");
  ImGui::EndDisabled();

  int k = static_cast<int>(solver.kernel) - 1;
  const char* kernels[] = {"linear", "quadratic", "cubic"};
  if (ImGui::Combo("kernel", &k, kernels, 3)) {
    solver.kernel = static_cast<Kernel>(k + 1);
    if (mpm::transfer_kernel_error(solver.transfer, solver.kernel)) {
      solver.transfer = Transfer::APIC;  // PolyPIC has quadratic modes only
      log("PolyPIC needs the quadratic kernel: transfer apic");
    }
  }
  ImGui::SliderFloat("dt", &solver.dt, 1e-6f, 1e-2f, "%.2e", ImGuiSliderFlags_Logarithmic);
  ImGui::SliderInt("substeps", &solver.substeps, 1, 400, "%d / frame",
                   ImGuiSliderFlags_Logarithmic);
  ImGui::Checkbox("adaptive dt (CFL)", &solver.adaptive_dt);
  ImGui::BeginDisabled(!solver.adaptive_dt);
  ImGui::SliderFloat("CFL", &solver.cfl, 0.05f, 1.f, "%.2f");
  ImGui::EndDisabled();
  int b = static_cast<int>(solver.boundary);
  const char* bounds[] = {"sticky", "slip", "separate"};
  if (ImGui::Combo("boundary", &b, bounds, 3)) solver.boundary = static_cast<Boundary>(b);
  bool rough = solver.wall_friction >= 0.f;
  if (ImGui::Checkbox("wall friction", &rough)) solver.wall_friction = rough ? 0.5f : -1.f;
  ImGui::SameLine();
  help_marker(
      "Coulomb friction on the walls' surface (solver.wall_friction): matter pressed against a wall "
      "slides only against friction mu times the pressing force; a film thinner than a cell then "
      "stops at mu g instead of sliding on. Off: the surface nodes move freely.");
  if (rough) ImGui::SliderFloat("mu (walls)", &solver.wall_friction, 0.f, 2.f, "%.2f");
  ImGui::DragFloat2("gravity", &solver.gravity.x, 0.05f, -100.f, 100.f, "%.2f");

  ImGui::InputInt("grid", &grid_edit, 8, 32);
  grid_edit = std::clamp(grid_edit, 8, 8192);  // 1 M-particle scenes need grids past 1024
  ImGui::SameLine();
  help_marker(
      "Cells along x. Applying re-initialises the scene at this resolution "
      "(--set domain.grid=N), keeping the parameters edited here.");
  if (grid_edit != w->grid.nx) {
    if (ImGui::Button("Apply grid and restart", ImVec2(-FLT_MIN, 0))) pending.grid = grid_edit;
  }
  ImGui::PopItemWidth();
}

// [SECTION] Presets -------------------------------------------------------------------

void App::panel_presets() {
  if (!world()) return;
  if (!ImGui::CollapsingHeader("Presets", ImGuiTreeNodeFlags_DefaultOpen)) return;
  ImGui::TextDisabled("velocity fields of the lecture's demo");
  float bw = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  if (ImGui::Button("Translation  T", ImVec2(bw, 0))) pending.preset = Preset::Translation;
  ImGui::SameLine();
  if (ImGui::Button("Rotation  R", ImVec2(bw, 0))) pending.preset = Preset::Rotation;
  if (ImGui::Button("Shear  S", ImVec2(bw, 0))) pending.preset = Preset::Shear;
  ImGui::SameLine();
  if (ImGui::Button("Dilation  D", ImVec2(bw, 0))) pending.preset = Preset::Dilation;
  ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 6.f);
  ImGui::SliderFloat("speed", &preset_speed, 0.05f, 10.f, "%.2f", ImGuiSliderFlags_Logarithmic);
  if (compare.cmp) return;  // each pane keeps its own transfer
  const char* toggle =
      solver.transfer == Transfer::PIC ? "Switch to APIC  (A)" : "Switch to PIC  (A)";
  if (ImGui::Button(toggle, ImVec2(-FLT_MIN, 0))) {
    solver.transfer = solver.transfer == Transfer::PIC ? Transfer::APIC : Transfer::PIC;
    log("transfer %s", transfer_name(solver.transfer));
  }
}

// [SECTION] Materials ---------------------------------------------------------------

void App::panel_materials() {
  MpmWorld* w = world();
  if (!w) return;
  const bool materials_open = ImGui::CollapsingHeader("Materials");
  ui_mark(*this, "materials_header");
  if (!materials_open) return;
  const float label_w = ImGui::GetFontSize() * 6.f;
  for (size_t i = 0; i < materials.size(); ++i) {
    MaterialParams& m = materials[i];
    const std::string& name =
        i < w->material_names.size() ? w->material_names[i] : std::string("material");
    ImGui::PushID(static_cast<int>(i));
    ImGui::ColorEdit3("##c", m.color, ImGuiColorEditFlags_NoInputs | ImGuiColorEditFlags_NoLabel);
    ImGui::SameLine();
    bool open = ImGui::TreeNodeEx("##m", ImGuiTreeNodeFlags_DefaultOpen, "%s  (%s)", name.c_str(),
                                  material_type_name(m.type));
    if (open) {
      ImGui::PushItemWidth(-label_w);
      ImGui::SliderFloat("density", &m.density, 0.01f, 100.f, "%.3g", ImGuiSliderFlags_Logarithmic);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Mass per area of particles painted from now on.");
      const MaterialKind& kind = material_kind(m.type);
      if (kind.field_count == 0) ImGui::TextDisabled("%s", kind.summary);
      for (int f = 0; f < kind.field_count; ++f) {
        const MaterialField& fd = kind.fields[f];
        float& value = m.*fd.member;
        if (ImGui::SliderFloat(
                fd.key, &value, fd.ui_min, fd.ui_max, fd.format,
                fd.log_slider ? ImGuiSliderFlags_Logarithmic : ImGuiSliderFlags_None))
          value =
              static_cast<float>(std::min(std::max(static_cast<double>(value), fd.min), fd.max));
        if (ImGui::IsItemHovered()) ui::wrapped_tooltip(fd.help);
      }
      // psi <= phi (the scene reader refuses more, so a saved scene reloads).
      if (m.type == MaterialType::Sand && m.dilatancy > m.friction_angle)
        m.dilatancy = m.friction_angle;
      for (auto& f : features)
        f->material(*this, m);  // e.g. heat: conductivity, heat capacity, melting point
      ImGui::PopItemWidth();
      ImGui::TreePop();
    }
    ImGui::PopID();
  }
}

// [SECTION] Tools ------------------------------------------------------------------------

void App::panel_tools() {
  if (!ImGui::CollapsingHeader("Tools", ImGuiTreeNodeFlags_DefaultOpen)) return;
  MpmWorld* w = world();
  const char* labels[kToolCount] = {"Pick 1",  "Grab 2",   "Attract 3", "Repel 4",
                                    "Paint 5", "Select 6", "Heat 7",    "Body 8"};
  float bw = (ImGui::GetContentRegionAvail().x - 2 * ImGui::GetStyle().ItemSpacing.x) / 3.f;
  for (int k = 0; k < kToolCount; ++k) {
    if (k % 3) ImGui::SameLine();
    bool on = static_cast<int>(tools.tool) == k;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.26f, 0.45f, 0.70f, 1.f));
    // Pick works on any scene; grab, attract and repel on MPM and DEM; paint and heat on MPM.
    // Grab and Body also work on a scene of bodies alone.
    const bool bodies_ok =
        rigid_world() && (k == static_cast<int>(Tool::Grab) || k == static_cast<int>(Tool::Body));
    ImGui::BeginDisabled(
        !w && k != 0 && !bodies_ok &&
        !(dem_world() && k != static_cast<int>(Tool::Paint) && k != static_cast<int>(Tool::Heat)));
    if (ImGui::Button(labels[k], ImVec2(bw, 0))) {
      tools.tool = static_cast<Tool>(k);
      log("tool %s", tool_name(tools.tool));
    }
    if (k == static_cast<int>(Tool::Heat) && ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Heat lamp: hold the left button over the material to heat it (negative power cools).");
    if (k == static_cast<int>(Tool::Body) && ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Draw a rigid box or disk with the mouse; it falls into the matter and floats or sinks.");
    ImGui::EndDisabled();
    if (on) ImGui::PopStyleColor();
  }
  const float label_w = ImGui::GetFontSize() * 6.f;
  ImGui::PushItemWidth(-label_w);
  if (sim) {
    Vec2 lo, hi;
    sim->bounds(lo, hi);
    float size = std::max(hi.x - lo.x, hi.y - lo.y);
    ImGui::SliderFloat("radius", &tools.radius, 0.005f * size, 0.5f * size, "%.3g",
                       ImGuiSliderFlags_Logarithmic);
  }
  switch (tools.tool) {
    case Tool::Pick: ImGui::TextDisabled("click a particle to inspect it"); break;
    case Tool::Select:
      ImGui::TextDisabled("click, box or lasso (SGF forces tab);\nShift adds, Ctrl removes");
      break;
    case Tool::Grab:
      ImGui::SliderFloat("stiffness", &tools.grab_stiffness, 10.f, 1e5f, "%.0f",
                         ImGuiSliderFlags_Logarithmic);
      ImGui::TextDisabled("drag: particles in the radius follow");
      break;
    case Tool::Attract:
    case Tool::Repel:
      ImGui::SliderFloat("strength", &tools.force, 1.f, 2000.f, "%.0f",
                         ImGuiSliderFlags_Logarithmic);
      for (auto& f : features)  // the whole-field switch (render/feature_field.cpp)
        if (f->tool_panel(*this, tools.tool)) break;
      break;
    case Tool::Paint:
      if (w && !materials.empty()) {
        tools.paint_material =
            std::clamp(tools.paint_material, 0, static_cast<int>(materials.size()) - 1);
        const std::string& cur = w->material_names[static_cast<size_t>(tools.paint_material)];
        if (ImGui::BeginCombo("material", cur.c_str())) {
          for (size_t i = 0; i < w->material_names.size(); ++i)
            if (ImGui::Selectable(w->material_names[i].c_str(),
                                  static_cast<int>(i) == tools.paint_material))
              tools.paint_material = static_cast<int>(i);
          ImGui::EndCombo();
        }
        float def = default_paint_spacing(*w);
        float h = tools.paint_spacing > 0.f ? tools.paint_spacing : def;
        if (ImGui::SliderFloat("spacing", &h, 0.25f * def, 4.f * def, "%.4g",
                               ImGuiSliderFlags_Logarithmic))
          tools.paint_spacing = h;
        ImGui::DragFloat2("velocity", &tools.paint_velocity.x, 0.02f, -20.f, 20.f, "%.2f");
      } else if (dem_world()) {
        ImGui::TextDisabled("painting works on MPM scenes only");
      }
      break;
    case Tool::Heat:
      for (auto& f : features)
        if (f->tool_panel(*this, tools.tool)) break;
      break;
    case Tool::Body:
      for (auto& f : features)  // render/feature_rigid.cpp
        if (f->tool_panel(*this, tools.tool)) break;
      break;
  }
  ImGui::PopItemWidth();
}

// [SECTION] View -------------------------------------------------------------------------

void App::panel_view() {
  if (!ImGui::CollapsingHeader("View", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const float label_w = ImGui::GetFontSize() * 6.f;
  ImGui::PushItemWidth(-label_w);
  int mode = static_cast<int>(color_mode);
  if (ImGui::BeginCombo(ui::field_label("colour").c_str(), color_mode_name(color_mode))) {
    for (int m = 0; m < kColorModeCount; ++m)
      if (ImGui::Selectable(color_mode_name(static_cast<ColorMode>(m)), m == mode)) mode = m;
    ImGui::EndCombo();
  }
  if (mode != static_cast<int>(color_mode)) {
    color_mode = static_cast<ColorMode>(mode);
    range_lo = 0.f;
    range_hi = 0.f;
    log("color %s", color_mode_name(color_mode));
  }
  bool scalar_mode = color_mode != ColorMode::Material && color_mode != ColorMode::Group &&
                     color_mode != ColorMode::Direction && color_mode != ColorMode::MeltFraction;
  if (color_mode == ColorMode::Scalar && !table.extra_names.empty()) {
    scalar_column = std::clamp(scalar_column, 0, static_cast<int>(table.extra_names.size()) - 1);
    if (ImGui::BeginCombo(ui::field_label("field").c_str(),
                          table.extra_names[static_cast<size_t>(scalar_column)].c_str())) {
      for (size_t k = 0; k < table.extra_names.size(); ++k)
        if (ImGui::Selectable(table.extra_names[k].c_str(), static_cast<int>(k) == scalar_column))
          scalar_column = static_cast<int>(k);
      ImGui::EndCombo();
    }
  }
  if (scalar_mode || color_mode == ColorMode::MeltFraction) {
    int c = static_cast<int>(cmap[static_cast<size_t>(color_mode)]);
    if (ImGui::BeginCombo(ui::field_label("colour map").c_str(),
                          colormap_name(static_cast<Colormap>(c)))) {
      for (int k = 0; k < kColormapCount; ++k)
        if (ImGui::Selectable(colormap_name(static_cast<Colormap>(k)), k == c)) c = k;
      ImGui::EndCombo();
    }
    cmap[static_cast<size_t>(color_mode)] = static_cast<Colormap>(c);
  }
  if (color_mode == ColorMode::MeltFraction) {
    ImGui::TextDisabled("0 ice to 1 water; what ice melts into\n(water) shows 1, the rest grey");
  } else if (color_mode == ColorMode::Temperature) {
    // Its own range, kept in the settings: a class compares runs on one scale.
    ImGui::Checkbox("auto range (min / max)", &temp_auto);
    ImGui::BeginDisabled(temp_auto);
    ImGui::DragFloatRange2(ui::field_label("range").c_str(), &temp_lo, &temp_hi, 0.25f, -273.15f,
                           1e5f,
                           "%.1f \xC2\xB0"
                           "C",
                           "%.1f \xC2\xB0"
                           "C");
    ImGui::EndDisabled();
    if (!(temp_hi > temp_lo)) temp_hi = temp_lo + 0.1f;
  } else if (scalar_mode) {
    ImGui::Checkbox("auto range", &auto_range);
    ImGui::BeginDisabled(auto_range);
    ImGui::DragFloatRange2(ui::field_label("range").c_str(), &range_lo, &range_hi,
                           0.001f * std::max(1e-3f, std::fabs(range_hi - range_lo)) + 1e-4f, 0.f,
                           0.f, "%.4g", "%.4g");
    ImGui::EndDisabled();
  }
  ImGui::SliderFloat(ui::field_label("particle size").c_str(), &sprite_scale, 0.25f, 3.f, "%.2fx");
  ImGui::PopItemWidth();

  section_label("overlays");
  ImGui::Checkbox("grid  (G)", &show_grid);
  ImGui::Checkbox("grid velocities  (V)", &show_grid_velocity);
  ImGui::Checkbox("particle velocities", &show_particle_velocity);
  const bool narrow = ui::narrow_panel();
  ImGui::Checkbox(narrow ? "affine field C###affine" : "affine field C of the selection###affine",
                  &show_affine);
  help_marker(
      "Arrows of C (x - x_p) around the selected particle, normalised to half a cell. "
      "APIC carries this field to the grid; PIC drops it (drawn faded in PIC).");

  // Three buttons in a row; in a narrow panel two, and Record below them.
  const float avail = ImGui::GetContentRegionAvail().x, sp = ImGui::GetStyle().ItemSpacing.x;
  float bw = narrow ? (avail - sp) / 2.f : (avail - 2 * sp) / 3.f;
  if (ImGui::Button("Fit  F", ImVec2(bw, 0))) pending.fit_view = true;
  ImGui::SameLine();
  if (ImGui::Button("Shot  F12", ImVec2(bw, 0))) pending.screenshot = true;
  if (!narrow) ImGui::SameLine();
  if (recorder.active()) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.70f, 0.20f, 0.22f, 1.f));
  if (ImGui::Button(recorder.active() ? "Stop  F9" : "Record  F9",
                    ImVec2(narrow ? -FLT_MIN : bw, 0)))
    pending.toggle_record = true;
  if (recorder.active()) ImGui::PopStyleColor();
  ImGui::Checkbox("vsync", &vsync);
  if (!narrow) ImGui::SameLine();
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::InputTextWithHint("##out", "output folder", &out_dir);
  // Once filled the hint is gone: the field says what it is on hover.
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Folder for screenshots (F12) and recordings (F9)");
  // Projector mode and the UI scale: fonts are rebuilt between frames.
  if (ImGui::Checkbox("projector  F2", &projector)) ui_rebuild = true;
  help_marker(
      "High contrast (white on black, yellow marks), text 35 % larger and particles 30 % larger:\n"
      "readable from the back of a room at 1280x720. Ctrl+= / Ctrl+- scale the whole UI, Ctrl+0 resets.");
  if (!narrow) ImGui::SameLine();
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::SliderFloat("##uiscale", &user_scale, 0.6f, 3.f, "UI scale %.2f");
  if (ImGui::IsItemDeactivatedAfterEdit()) ui_rebuild = true;
}

// [SECTION] Inspector ------------------------------------------------------------------

void App::panel_inspector() {
  if (!ImGui::CollapsingHeader("Inspector", ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (selected_row < 0 || static_cast<size_t>(selected_row) >= table.size()) {
    ImGui::TextDisabled("click a particle (pick or grab tool)");
    return;
  }
  const size_t r = static_cast<size_t>(selected_row);
  for (auto& f : features)  // a grain: the DEM feature's (every row of a DEM scene)
    if (f->inspect_row(*this, r)) return;
  std::vector<std::string> names = sim->material_names();
  const char* mat = table.material[r] < names.size() ? names[table.material[r]].c_str() : "?";
  MpmWorld* w = world();
  if (begin_props("insp")) {
    prop("ID", "%u", table.id[r]);
    if (w)
      prop("material", "%s (%s)", mat, material_type_name(w->materials[table.material[r]].type));
    else
      prop("material", "%s", mat);
    prop("group", "%u", static_cast<unsigned>(table.group[r]));
    prop("position", "%.5f, %.5f", static_cast<double>(table.x[r]),
         static_cast<double>(table.y[r]));
    prop("velocity", "%.4f, %.4f", static_cast<double>(table.vx[r]),
         static_cast<double>(table.vy[r]));
    prop("mass", "%.4g", static_cast<double>(table.mass[r]));
    if (w && r < w->particles.size()) {
      const Mat2& C = w->particles.C[r];
      const Mat2& F = w->particles.F[r];
      prop("C", "%+.3f %+.3f", static_cast<double>(C.a00), static_cast<double>(C.a01));
      prop("", "%+.3f %+.3f", static_cast<double>(C.a10), static_cast<double>(C.a11));
      if (w->materials[table.material[r]].type == MaterialType::Fluid) {
        prop("J", "%.5f", static_cast<double>(w->particles.J[r]));
      } else {
        prop("F", "%+.4f %+.4f", static_cast<double>(F.a00), static_cast<double>(F.a01));
        prop("", "%+.4f %+.4f", static_cast<double>(F.a10), static_cast<double>(F.a11));
        prop("J = det F", "%.5f", static_cast<double>(det(F)));
      }
      prop("Jp", "%.5f", static_cast<double>(w->particles.Jp[r]));
      Mat2 s = particle_cauchy_stress(*w, r);
      float p = -0.5f * trace(s) + 0.f;
      if (p == 0.f) p = 0.f;  // no "-0"
      Mat2 dev = s + Mat2::diag(p, p);
      prop("pressure", "%.4g", static_cast<double>(p));
      prop("von Mises", "%.4g", static_cast<double>(std::sqrt(1.5f * frobenius2(dev))));
      for (auto& f : features) f->inspector(*this, r);
    } else {
      for (size_t k = 0; k < table.extra_names.size(); ++k)
        prop(table.extra_names[k].c_str(), "%.5g", static_cast<double>(table.extra[k][r]));
    }
    ImGui::EndTable();
  }
}

// [SECTION] Stats ----------------------------------------------------------------------

void App::panel_stats() {
  if (!ImGui::CollapsingHeader("Stats", ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (begin_props("stats")) {
    prop("frame", "%.0f fps  (%.1f ms)", fps, frame_ms);
    if (sim) {
      prop("substep", "%.3f ms", ms_per_substep);
      prop("per frame", "%d / %d", substeps_last, sim->substeps_per_frame());
      prop("particles", "%s", with_commas(table.size()).c_str());
      prop("step", "%" PRId64 "  (t = %.4f)", sim->step_count(), sim->time());
      prop("backend", "%s", sim->backend_name().c_str());
      for (auto& f : features) f->stats_rows(*this);
    }
    // "llvmpipe (LLVM 15.0.6, 256 bits)" -> "llvmpipe": the short name fits the column.
    std::string r = gl_renderer.substr(0, gl_renderer.find(" ("));
    prop("renderer", "%s", r.c_str());
    ImGui::EndTable();
  }
  if (!sim) return;
  panel_backend_stats();
  // PlotLines (1.86) takes an explicit size: negative widths are not resolved.
  const ImVec2 plot(ImGui::GetContentRegionAvail().x, 52.f * ui_scale);
  char over[64];
  std::snprintf(over, sizeof over, "kinetic energy %.4g", static_cast<double>(ke.last()));
  ImGui::PlotLines("##ke", ke.v.data(), ke.count, ke.offset(), over, FLT_MAX, FLT_MAX, plot);
  std::snprintf(over, sizeof over, "momentum x %.4g", static_cast<double>(momentum_x.last()));
  ImGui::PlotLines("##px", momentum_x.v.data(), momentum_x.count, momentum_x.offset(), over,
                   FLT_MAX, FLT_MAX, plot);
  std::snprintf(over, sizeof over, "momentum y %.4g", static_cast<double>(momentum_y.last()));
  ImGui::PlotLines("##py", momentum_y.v.data(), momentum_y.count, momentum_y.offset(), over,
                   FLT_MAX, FLT_MAX, plot);
  std::snprintf(over, sizeof over, "angular momentum %.4g", static_cast<double>(angular.last()));
  ImGui::PlotLines("##L", angular.v.data(), angular.count, angular.offset(), over, FLT_MAX, FLT_MAX,
                   plot);
  for (auto& f : features) f->stats(*this);
}

/// Where the time of a substep goes, and what the backend holds in memory.
void App::panel_backend_stats() {
  MpmWorld* w = world();
  if (!w) return;
  // Polled a few times a second: cudaMemGetInfo is a driver call.
  if (++stats_poll_ % 15 == 1 || backend_stats.phases.empty()) backend_stats = w->backend_stats();
  const BackendStats& bs = backend_stats;
  if (!ImGui::TreeNodeEx("Backend timing", ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (begin_props("backend_stats")) {
    prop("device", "%s", bs.device.c_str());
    if (bs.memory_total > 0)
      prop("GPU memory", "%.0f / %.0f MiB", bs.memory_used / 1048576.0,
           bs.memory_total / 1048576.0);
    prop("state", "%.1f MiB", bs.state_bytes / 1048576.0);
    if (bs.ms_per_substep > 0.0) {
      const double ps = static_cast<double>(table.size()) / (bs.ms_per_substep * 1e-3);
      prop("particle-steps/s", "%.3g", ps);
    }
    ImGui::EndTable();
  }
  double total = 0.0;
  for (const PhaseTiming& p : bs.phases) total += p.ms;
  for (const PhaseTiming& p : bs.phases) {
    char overlay[96];
    std::snprintf(overlay, sizeof overlay, "%s  %.3f ms", p.name.c_str(), p.ms);
    ImGui::ProgressBar(total > 0.0 ? static_cast<float>(p.ms / total) : 0.f, ImVec2(-1.f, 0.f),
                       overlay);
  }
  if (!bs.notes.empty()) ImGui::TextDisabled("%s", bs.notes.c_str());
  if (sim && sim->has_device_view()) {
    // Interop off draws through the host copy (a device -> host copy of every particle each frame).
    if (ImGui::Checkbox("CUDA-GL interop", &interop_wanted)) {
      host_table_stale = true;
      log("interop %s", interop_wanted ? "on" : "off");
    }
  }
  if (!interop_note.empty()) ImGui::TextDisabled("%s", interop_note.c_str());
  ImGui::TreePop();
}

// [SECTION] Legend ------------------------------------------------------------------------

void App::draw_legend() {
  if (!sim) return;
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  const float pad = 12.f * ui_scale, fs_ = ImGui::GetFontSize();
  const ImU32 text = IM_COL32(228, 232, 240, 255), muted = IM_COL32(150, 158, 175, 255);
  const ImU32 bg = IM_COL32(16, 18, 24, 215);
  auto col = [](const std::array<float, 3>& c) {
    return IM_COL32(static_cast<int>(c[0] * 255.f + 0.5f), static_cast<int>(c[1] * 255.f + 0.5f),
                    static_cast<int>(c[2] * 255.f + 0.5f), 255);
  };
  const char* title = color_mode_name(color_mode);
  if (color_mode == ColorMode::Scalar && scalar_column < static_cast<int>(table.extra_names.size()))
    title = table.extra_names[static_cast<size_t>(scalar_column)].c_str();
  for (auto& f : features)
    if (f->legend(*this)) return;  // e.g. heat: temperature, melt fraction
  // A heat mode on a scene without heat (DEM) shows the material colours.
  const bool heat_mode =
      color_mode == ColorMode::Temperature || color_mode == ColorMode::MeltFraction;
  if (heat_mode) title = color_mode_name(ColorMode::Material);

  if (color_mode == ColorMode::Material || color_mode == ColorMode::Group || heat_mode) {
    std::vector<std::string> names;
    std::vector<std::array<float, 3>> colors;
    if (color_mode != ColorMode::Group) {
      names = sim->material_names();
      MpmWorld* w = world();
      for (size_t i = 0; i < names.size(); ++i) {
        if (w && i < w->materials.size()) {
          colors.push_back(
              {w->materials[i].color[0], w->materials[i].color[1], w->materials[i].color[2]});
          continue;
        }
        // DEM materials (after the MPM's when the scene has both).
        const size_t k = i - (w ? w->materials.size() : 0);
        if (dem::DemWorld* d = dem_world(); d && k < d->materials.size()) {
          colors.push_back(
              {d->materials[k].color[0], d->materials[k].color[1], d->materials[k].color[2]});
          continue;
        }
        // Other simulations: the colour the table gives this material's particles.
        std::array<float, 3> c = group_rgb(static_cast<unsigned>(i));
        for (size_t r = 0; r < table.size(); ++r)
          if (table.material[r] == i) {
            c = table.color[r];
            break;
          }
        colors.push_back(c);
      }
    } else {
      // One table with the SGF tab (render/cpu/group_table.h): the SGF groups' names and colours
      // when the scene has some, else the scene's group numbers.
      for (const GroupRow& r : group_legend(group_table())) {
        names.push_back(r.name);
        colors.push_back(r.rgb);
      }
      if (group_table().from_sgf()) title = "SGF group";
      const std::string logged =
          std::string(title) + ": " + group_rows_text(group_legend(group_table()));
      if (logged != legend_logged) {
        legend_logged = logged;
        log("legend group title=\"%s\" entries=\"%s\"", title,
            group_rows_text(group_legend(group_table())).c_str());
      }
    }
    // Entries in columns of at most five (a scene's ten SGF groups: two columns), so the box stays low.
    const size_t per_col = 5, ncol = std::max<size_t>(1, (names.size() + per_col - 1) / per_col);
    const size_t nrow = std::min(names.size(), per_col);
    float entry_w = 0.f;
    for (const auto& n : names)
      entry_w = std::max(entry_w, ImGui::CalcTextSize(n.c_str()).x + fs_ * 1.4f);
    const float col_gap = fs_;
    const float wmax =
        std::max(ImGui::CalcTextSize(title).x, entry_w * ncol + col_gap * (ncol - 1));
    float line = fs_ * 1.35f;
    ImVec2 size(wmax + 2 * pad, line * (nrow + 1) + pad * 1.5f);
    const Vec2 at = overlay_slot(Vec2{size.x, size.y});
    const ImVec2 p0(at.x, at.y);
    dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), bg, 6.f * ui_scale);
    dl->AddText(ImVec2(p0.x + pad, p0.y + pad * 0.75f), muted, title);
    for (size_t i = 0; i < names.size(); ++i) {
      const float x = p0.x + pad + static_cast<float>(i / per_col) * (entry_w + col_gap);
      const float y = p0.y + pad * 0.75f + line * static_cast<float>(i % per_col + 1);
      dl->AddCircleFilled(ImVec2(x + fs_ * 0.45f, y + fs_ * 0.55f), fs_ * 0.4f, col(colors[i]), 20);
      dl->AddText(ImVec2(x + fs_ * 1.4f, y), text, names[i].c_str());
    }
    return;
  }
  if (color_mode == ColorMode::Direction) {
    float r = 34.f * ui_scale;
    ImVec2 size(2 * r + 2 * pad + fs_ * 2.f, 2 * r + 2 * pad + fs_ * 1.6f);
    const Vec2 at = overlay_slot(Vec2{size.x, size.y});
    const ImVec2 p0(at.x, at.y);
    dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), bg, 6.f * ui_scale);
    dl->AddText(ImVec2(p0.x + pad, p0.y + pad * 0.75f), muted, "velocity direction");
    ImVec2 c(p0.x + size.x * 0.5f, p0.y + pad + fs_ * 1.4f + r);
    const int seg = 72;
    for (int k = 0; k < seg; ++k) {
      float a0 = 6.2831853f * k / seg, a1 = 6.2831853f * (k + 1) / seg;
      // Screen y points down: world angle a is drawn at -a.
      ImU32 cc =
          col(direction_rgb(std::cos(a0 + 0.5f * (a1 - a0)), std::sin(a0 + 0.5f * (a1 - a0))));
      dl->AddTriangleFilled(c, ImVec2(c.x + r * std::cos(a0), c.y - r * std::sin(a0)),
                            ImVec2(c.x + r * std::cos(a1), c.y - r * std::sin(a1)), cc);
    }
    dl->AddCircleFilled(c, r * 0.35f, bg, 32);
    return;
  }
  // Scalar colour bar: the title on the bar's line, the values under it (two lines, so a
  // band under the comparison's panes stays low).
  Colormap cm = cmap[static_cast<size_t>(color_mode)];
  const float bar_w = 220.f * ui_scale, bar_h = 12.f * ui_scale;
  const float title_w = ImGui::CalcTextSize(title).x + fs_;
  ImVec2 size(title_w + bar_w + 2 * pad, 2.35f * fs_ + 1.5f * pad);
  const Vec2 at = overlay_slot(Vec2{size.x, size.y});
  const ImVec2 p0(at.x, at.y);
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), bg, 6.f * ui_scale);
  dl->AddText(ImVec2(p0.x + pad, p0.y + pad * 0.75f), muted, title);
  const float x0 = p0.x + pad + title_w, y0 = p0.y + pad * 0.75f + 0.5f * (fs_ - bar_h);
  const int n = 64;
  for (int k = 0; k < n; ++k) {
    float xa = x0 + bar_w * k / n, xb = x0 + bar_w * (k + 1) / n;
    ImU32 a = col(colormap_rgb(cm, static_cast<float>(k) / n)),
          b = col(colormap_rgb(cm, static_cast<float>(k + 1) / n));
    dl->AddRectFilledMultiColor(ImVec2(xa, y0), ImVec2(xb + 0.5f, y0 + bar_h), a, b, b, a);
  }
  char lo[32], hi[32], mid[32];
  std::snprintf(lo, sizeof lo, "%.3g", static_cast<double>(range_lo));
  std::snprintf(hi, sizeof hi, "%.3g", static_cast<double>(range_hi));
  std::snprintf(mid, sizeof mid, "%.3g", 0.5 * (static_cast<double>(range_lo) + range_hi));
  float ty = p0.y + pad * 0.75f + 1.3f * fs_;
  dl->AddText(ImVec2(x0, ty), text, lo);
  dl->AddText(ImVec2(x0 + 0.5f * (bar_w - ImGui::CalcTextSize(mid).x), ty), text, mid);
  dl->AddText(ImVec2(x0 + bar_w - ImGui::CalcTextSize(hi).x, ty), text, hi);
}

// [SECTION] Banners -----------------------------------------------------------------

void App::draw_banners() {
  const ScreenRect v = cam.viewport();
  const ImGuiWindowFlags f = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                             ImGuiWindowFlags_NoSavedSettings |
                             ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav |
                             ImGuiWindowFlags_NoMove;
  float y = v.y + 12.f * ui_scale;
  const float wrap = std::min(v.w - 40.f * ui_scale, 720.f * ui_scale);

  if (compare.cmp) compare_labels();
  // Title: scene, transfer, state.
  if (sim && !compare.cmp) {
    ImGui::SetNextWindowPos(ImVec2(v.x + 12.f * ui_scale, y), ImGuiCond_Always);
    ImGui::SetNextWindowBgAlpha(0.0f);
    if (ImGui::Begin("##title", nullptr, f | ImGuiWindowFlags_NoInputs)) {
      if (ImFont* big = ui::title_font()) ImGui::PushFont(big);
      ImGui::TextUnformatted(sim->info().name.c_str());
      if (ui::title_font()) ImGui::PopFont();
      MpmWorld* w = world();
      const bool halted = sim->halted() != nullptr;
      // The real-time factor (simulated seconds per wall second), while running (a halted
      // scene's clock stands: no "x0 real time").
      const std::string rate_note = running && !halted && sim_rate.known()
                                        ? "  |  " + rate_text(sim_rate.rate()) + " real time"
                                        : "";
      ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
      if (w) {
        const char* tn = kTransferLabels(w->solver.transfer);
        char blend[32] = "";
        if (w->solver.transfer == Transfer::FLIP)
          std::snprintf(blend, sizeof blend, " %.2f", static_cast<double>(w->solver.flip_blend));
        ImGui::Text("%s%s  |  %s particles  |  t = %.3f s%s", tn, blend,
                    with_commas(table.size()).c_str(), sim->time(), rate_note.c_str());
      } else
        ImGui::Text("%s particles  |  t = %.3f s%s", with_commas(table.size()).c_str(), sim->time(),
                    rate_note.c_str());
      ImGui::PopStyleColor();
      if (!running && !halted) {
        ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
        ImGui::TextUnformatted("PAUSED   Space runs, N steps one frame");
        ImGui::PopStyleColor();
      } else if (running && !halted) {
        // Slower than kSlowMotionRate of real time (a tiny dt: stiff bonds, a fine grid), or substeps
        // cut by the frame budget: said, with the dt and the motion a frame covers.
        const std::string slow =
            slow_motion_text(sim_rate, sim->substeps_per_frame(), speed_ratio, 12.0);
        const bool cut = speed_ratio < kBudgetCutShare;
        if (slow.empty() != !slow_shown ||
            (slow_shown &&
             ((!slow_rate_logged && sim_rate.rate() > 0.0) || cut != slow_cut_logged))) {
          // Logged when it appears, once more when the rate is first measured (a line cut by the
          // frame budget can come up before the rate has a second of frames behind it), and when the
          // budget starts or stops being a reason (a loaded start-up, then every substep fitting).
          slow_shown = !slow.empty();
          if (slow_shown) {
            log("slow motion rate=%.6g dt=%.6g text=\"%s\"", sim_rate.rate(), sim_rate.dt(),
                slow.c_str());
            slow_rate_logged = sim_rate.rate() > 0.0;
            slow_cut_logged = cut;
          } else {
            log("slow motion end");
            slow_rate_logged = slow_cut_logged = false;
          }
        }
        if (!slow.empty()) {
          ImGui::PushStyleColor(ImGuiCol_Text, kWarn);
          ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
          ImGui::TextUnformatted(slow.c_str());
          ImGui::PopTextWrapPos();
          ImGui::PopStyleColor();
        }
      }
      if (recorder.active()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kError);
        ImGui::Text("REC  %d frames", recorder.frames());
        ImGui::PopStyleColor();
      }
    }
    ImGui::End();
  }

  // Blow-up: stepping has stopped until reset.
  const StepStatus* halt = sim ? sim->halted() : nullptr;
  if (halt) {
    ImGui::SetNextWindowPos(ImVec2(v.x + v.w * 0.5f, v.y + v.h * 0.5f), ImGuiCond_Always,
                            ImVec2(0.5f, 0.5f));
    ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.40f, 0.07f, 0.09f, 0.96f));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 8.f * ui_scale);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(18.f * ui_scale, 14.f * ui_scale));
    if (ImGui::Begin("##halt", nullptr, f)) {
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap * 0.8f);
      ImGui::TextUnformatted("Numerical blow-up: the simulation has stopped.");
      ImGui::TextWrapped("%s", halt->message.c_str());
      ImGui::TextDisabled("%s", sim->halt_advice());
      ImGui::PopTextWrapPos();
      if (ImGui::Button("Reset  (Shift+R)")) pending.reset = true;
    }
    ImGui::End();
    ImGui::PopStyleVar(2);
    ImGui::PopStyleColor();
  }

  // A scene that failed to load: the message names file:line:col and field.
  if (!load_error.empty()) {
    ImGui::SetNextWindowPos(ImVec2(v.x + v.w * 0.5f, v.y + v.h - 16.f * ui_scale), ImGuiCond_Always,
                            ImVec2(0.5f, 1.f));
    ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.33f, 0.19f, 0.05f, 0.96f));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 6.f * ui_scale);
    if (ImGui::Begin("##loaderr", nullptr, f)) {
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
      ImGui::TextUnformatted(sim ? "Could not do that; the current scene keeps running:"
                                 : "Could not open the scene:");
      ImGui::TextUnformatted(load_error.c_str());
      ImGui::PopTextWrapPos();
      if (ImGui::SmallButton("Dismiss")) load_error.clear();
    }
    ImGui::End();
    ImGui::PopStyleVar();
    ImGui::PopStyleColor();
  }
}

/// The status line at the bottom left of the overlays' dock: a message for 4 s after
/// it is set (cut in the middle to the room the legends leave), else "H  help".
void App::draw_status_line(Vec2 at, float pad) {
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  if (!status_line.empty() && glfwGetTime() - status_time < 4.0) {
    // The band: one line, cut to the room the legends leave; the column: wrapped to its width.
    const float room = std::max(0.f, overlay_flow.status_room() - 2.f * pad);
    const auto width = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
    std::string shown;
    if (!overlay_dock.column) {
      shown = ui::elide_middle(status_line, room);
    } else {  // wrapped at spaces, a word wider than the column cut in its middle
      const std::string lines = wrap_at_spaces(status_line, room, width);
      size_t k = 0;
      while (k <= lines.size()) {
        const size_t e = std::min(lines.find('\n', k), lines.size());
        shown += (shown.empty() ? "" : "\n") + ui::elide_middle(lines.substr(k, e - k), room);
        k = e + 1;
      }
    }
    const float wrap = 0.f;
    const ImVec2 ts = ImGui::CalcTextSize(shown.c_str());
    dl->AddRectFilled(ImVec2(at.x, at.y), ImVec2(at.x + ts.x + 2.f * pad, at.y + ts.y + 2.f * pad),
                      IM_COL32(38, 44, 58, 235), 6.f * ui_scale);
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(at.x + pad, at.y + pad),
                IM_COL32(228, 232, 240, 255), shown.c_str(), nullptr, wrap);
  } else if (!show_help && load_error.empty()) {
    dl->AddText(ImVec2(at.x + pad, at.y + pad), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                "H  help");
  }
}

// [SECTION] Help ------------------------------------------------------------------------

void App::draw_help() {
  const ScreenRect v = cam.viewport();
  ImGui::SetNextWindowPos(ImVec2(v.x + v.w * 0.5f, v.y + v.h * 0.5f), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowBgAlpha(
      1.f);  // opaque: at 0.96 the side panels' widgets showed through where it overlaps them
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 8.f * ui_scale);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(20.f * ui_scale, 16.f * ui_scale));
  if (ImGui::Begin("Keys and mouse", &show_help,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                       ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoMove)) {
    // The app's keys, the features' (render/feature.h) after "A", then the rest.
    std::vector<HelpRow> rows = {
        {"Space", "pause / resume (after a rewind: replay the recorded future, then live)"},
        {"N", "step one frame (its substeps) and pause"},
        {"Left / Right", "rewind: back / forward one recorded frame"},
        {"Home", "rewind: back to the start of the recording"},
        {"Shift+R", "reset the scene (keeps edited parameters)"},
        {"T  R  S  D", "preset velocity: translation, rotation, shear, dilation"},
        {"A", "toggle PIC / APIC"},
    };
    for (const auto& f : features) f->help(rows);
    rows.insert(
        rows.end(),
        {
            {"1 ... 8", "tool: pick, grab, attract, repel, paint, select, heat lamp, draw a body"},
            {"left drag", "use the current tool (pick and grab also select)"},
            {"right drag", "pan"},
            {"wheel", "zoom about the cursor"},
            {"F", "fit the domain in the view"},
            {"G / V", "grid lines / grid velocity arrows"},
            {"F12", "screenshot (PNG in the output folder)"},
            {"Shift+F12", "the scene alone, without panels, legends or text (for slides)"},
            {"F9", "start / stop recording the view"},
            {"Page Down / Up", "next / previous lesson (the first one when none is open)"},
            {"F2", "projector mode: high contrast, larger text and particles"},
            {"F11", "full screen on the window's monitor / back to the window"},
            {"Tab", "hide / show the side panels (the scene takes the window)"},
            {"Ctrl+= / Ctrl+-", "scale the whole UI up / down (Ctrl+0: back to 1)"},
            {"H / Esc", "show / hide this help"},
            {"Ctrl+Q", "quit"},
        });
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg)) {
      ImGui::TableSetupColumn("k", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 7.f);
      ImGui::TableSetupColumn("v", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 24.f);
      for (const HelpRow& r : rows) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
        ImGui::TextUnformatted(r.key);
        ImGui::PopStyleColor();
        ImGui::TableSetColumnIndex(1);
        ImGui::TextWrapped(
            "%s", r.action);  // long entries take a second line instead of being cut at the column
      }
      ImGui::EndTable();
    }
    ImGui::TextDisabled("Settings and window layout are kept in %s",
                        config_dir.empty() ? "(nowhere: no $HOME)" : config_dir.c_str());
  }
  ImGui::End();
  ImGui::PopStyleVar(2);
}

}  // namespace ps
