#include "render/build_progress.h"

#include <glad/gl.h>

#include <GLFW/glfw3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "backends/imgui_impl_glfw.h"
#include "backends/imgui_impl_opengl3.h"
#include "imgui.h"
#include "imgui_internal.h"  // GImGui->WithinFrameScope: is a frame open
#include "render/recorder.h"
#include "render/window_state.h"
#include "sim/core/progress.h"

namespace ps {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kQuietSeconds = 1.0;  // builds shorter than this draw nothing

struct Shared {
  std::mutex m;
  std::string stage;
  std::atomic<double> fraction{0.0};
  std::atomic<bool> cancel{false}, done{false};
  std::exception_ptr error;
};

void begin_imgui_frame() {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

// One frame: the window's background and the progress box. True when Cancel
// (the button, Esc or closing the window) was asked for.
bool draw_progress_frame(App& app, const std::string& what, Shared& s, double seconds) {
  glfwPollEvents();
  bool cancel = glfwWindowShouldClose(app.window) != 0, shot = false;
  for (const App::KeyPress& k : app.key_queue) {
    cancel |= k.key == GLFW_KEY_ESCAPE;
    shot |= k.key == GLFW_KEY_F12;  // a screenshot, as in any frame
  }
  app.key_queue.clear();  // keys pressed while building are not replayed on the new scene
  begin_imgui_frame();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + 0.5f * vp->Size.x, vp->Pos.y + 0.5f * vp->Size.y),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(vp->Size.x * 0.8f, 30.f * ImGui::GetFontSize()), 0.f));
  ImGui::Begin("Building a scene##build_progress", nullptr,
               ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoCollapse |
                   ImGuiWindowFlags_NoSavedSettings);
  ImGui::TextWrapped("%s", what.c_str());
  std::string stage;
  {
    std::lock_guard<std::mutex> lock(s.m);
    stage = s.stage;
  }
  const double f = std::clamp(s.fraction.load(), 0.0, 1.0);
  ImGui::TextDisabled("%s, %.0f s", stage.empty() ? "starting" : stage.c_str(), seconds);
  ImGui::ProgressBar(static_cast<float>(f), ImVec2(-1.f, 0.f));
  if (s.cancel)
    ImGui::TextUnformatted("Cancelling...");
  else if (ImGui::Button("Cancel (Esc)"))
    cancel = true;
  ImGui::End();
  ImGui::Render();
  int fbw = 0, fbh = 0;
  glfwGetFramebufferSize(app.window, &fbw, &fbh);
  glViewport(0, 0, fbw, fbh);
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (shot) {
    char name[96];
    std::snprintf(name, sizeof name, "screenshot-%s-%02d.png", timestamp().c_str(),
                  ++app.screenshots);
    app.take_screenshot((std::filesystem::path(app.out_dir) / name).string());
  }
  if (app.present) app.present();
  return cancel;
}

}  // namespace

void build_with_progress(App& app, const std::string& what, const std::function<void()>& build) {
  if (!ImGui::GetCurrentContext() || !app.window) {
    build();
    return;
  }
  Shared s;
  std::thread worker([&] {
    ProgressScope scope([&](const std::string& stage, double fraction) {
      {
        std::lock_guard<std::mutex> lock(s.m);
        s.stage = stage;
      }
      s.fraction = fraction;
      return !s.cancel.load();
    });
    try {
      build();
    } catch (...) {
      s.error = std::current_exception();
    }
    s.done = true;
  });
  const auto t0 = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  while (!s.done && seconds() < kQuietSeconds)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (!s.done) {
    const bool in_frame = GImGui->WithinFrameScope;
    if (in_frame)
      ImGui::EndFrame();  // this frame's input was handled; its drawing starts again below
    app.log("build progress what=\"%s\"", what.c_str());
    while (!s.done) {
      if (draw_progress_frame(app, what, s, seconds()) && !s.cancel) {
        s.cancel = true;
        app.log("build cancel what=\"%s\" at=%.2f", what.c_str(), s.fraction.load());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    }
    if (in_frame) begin_imgui_frame();
  }
  worker.join();
  if (s.error) std::rethrow_exception(s.error);
}

}  // namespace ps
