// The scene browser, a feature (render/feature.h): a window over the scene
// (key B, or "Browse scenes and lessons" at the top of the Scene panel) that
// lists every built-in lesson and scene by title, with a one-line description
// and a thumbnail, grouped as render/cpu/scene_catalog.h decides from the scene
// documents (Lessons, MPM, Heat, Fracture, DEM, Rigid bodies), as MuJoCo
// simulate's and Taichi's example galleries do. A click opens the entry (a
// scene through Pending::open_path, a lesson through Pending::open_lesson, as
// the Lessons list); B, Esc or the close button close it.
//
// Thumbnails are the entries' initial states drawn by the software rasteriser.
// Those cached in the settings folder (thumbnails/<content hash>.png) are read
// when the browser opens; the others are built one at a time on a worker
// thread, which never holds up a frame; each shows "rendering..." until it is
// there, and an entry that does not build shows its located error instead.
// Closing the browser cancels the build under way (sim/core/progress.h) and
// frees the textures.
#include <glad/gl.h>  // before GLFW (window_state.h includes it)

#include <GLFW/glfw3.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "imgui.h"
#include "render/cpu/scene_catalog.h"
#include "render/feature.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/core/progress.h"
#include "sim/scene/scene.h"

namespace fs = std::filesystem;

namespace ps {

namespace {

/// What the worker hands the frame: a thumbnail drawn, or the reason it was not.
struct Drawn {
  size_t index = 0;
  Image image;
  std::string error;
  std::string cache_error;  ///< drawn, but not written to the cache
};

/// Shared by the frame and the worker (the worker may outlive a close: it is joined at the next open).
struct WorkerState {
  std::mutex m;
  std::vector<Drawn> drawn;
  std::atomic<bool> cancel{false};
};

/// One thumbnail's job: the entry and where its PNG is cached ("" when there is no settings folder).
struct Job {
  size_t index;
  CatalogEntry entry;
  std::string cache;
};

void work(std::shared_ptr<WorkerState> s, std::vector<Job> jobs) {
  ProgressScope scope([&s](const std::string&, double) { return !s->cancel.load(); });
  for (Job& j : jobs) {
    if (s->cancel) return;
    Drawn d;
    d.index = j.index;
    try {
      d.image = render_thumbnail(j.entry);
      if (!j.cache.empty()) {
        try {
          std::error_code ec;
          fs::create_directories(fs::path(j.cache).parent_path(), ec);
          save_png(j.cache, d.image);
        } catch (const std::exception& e) {
          d.cache_error = e.what();
        }
      }
    } catch (const Cancelled&) {
      return;
    } catch (const std::exception& e) {
      d.error = e.what();
    }
    std::lock_guard<std::mutex> lock(s->m);
    s->drawn.push_back(std::move(d));
  }
}

/// Up to `max_lines` lines of `text` wrapped at `width` with the current font (at word breaks, or
/// within a word wider than the line, such as a path); the last one cut with "..." when the text
/// goes on. Returns whether it was cut.
bool wrap_lines(const std::string& text, float width, int max_lines,
                std::vector<std::string>& out) {
  out.clear();
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  const auto wide = [](const char* a, const char* b) { return ImGui::CalcTextSize(a, b).x; };
  const auto back = [](const char* p, const char* lo) {  // one UTF-8 character back
    do --p;
    while (p > lo && (static_cast<unsigned char>(*p) & 0xC0) == 0x80);
    return p;
  };
  const char* p = text.c_str();
  const char* end = p + text.size();
  while (p < end && static_cast<int>(out.size()) < max_lines) {
    const char* brk = font->CalcWordWrapPositionA(size / font->FontSize, p, end, width);
    if (brk == p) brk = end;
    while (brk > p && wide(p, brk) > width) {
      const char* b = back(brk, p);
      if (b == p) break;  // one character wider than the line: it goes on it alone
      brk = b;
    }
    std::string line(p, brk);
    p = brk;
    while (p < end && (*p == ' ' || *p == '\n')) ++p;
    if (static_cast<int>(out.size()) == max_lines - 1 && p < end) {
      // The last line: cut so that "..." fits after it.
      while (!line.empty() && wide(line.c_str(), nullptr) + wide("...", nullptr) > width)
        line.erase(
            static_cast<size_t>(back(line.c_str() + line.size(), line.c_str()) - line.c_str()));
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out.push_back(line + "...");
      return true;
    }
    out.push_back(std::move(line));
  }
  return false;
}

/// A located error for a small box: the file named without its folder ("99_broken.json:5:5: ...").
std::string short_error(const std::string& error, const std::string& path) {
  if (error.rfind(path, 0) == 0)
    return fs::path(path).filename().string() + error.substr(path.size());
  return error;
}

class BrowserFeature final : public Feature {
 public:
  ~BrowserFeature() override {
    stop_worker();
  }  // no GL here: the context is gone (shutdown freed the textures)

  const char* name() const override { return "browser"; }

  bool key(App& a, int key, int) override {
    if (key == GLFW_KEY_B) {
      if (open_)
        close(a);
      else
        open(a);
      return true;
    }
    if (key == GLFW_KEY_ESCAPE && open_) {
      close(a);
      return true;
    }
    return false;
  }

  void scene_panel(App& a) override {
    // The longest label that fits the column (projector mode's column is narrow).
    const float room = ImGui::GetContentRegionAvail().x - 2.f * ImGui::GetStyle().FramePadding.x;
    const char* label = "Browse...  B";
    for (const char* l : {"Browse scenes and lessons...   B", "Scenes and lessons  B"})
      if (ImGui::CalcTextSize(l).x <= room) {
        label = l;
        break;
      }
    if (ImGui::Button(label, ImVec2(-FLT_MIN, 0.f))) {
      if (open_)
        close(a);
      else
        open(a);
    }
    if (ImGui::IsItemHovered())
      ui::wrapped_tooltip(
          "Every built-in scene and lesson with a picture and a line about it, grouped: "
          "lessons, MPM, heat, fracture, DEM, rigid bodies. Click one to open it.");
  }

  void overlay(App& a) override {
    if (!open_) return;
    take_drawn(a);
    draw(a);
  }

  void shutdown(App& a) override {
    if (open_) close(a);
    stop_worker();
  }

  void help(std::vector<HelpRow>& rows) const override {
    rows.push_back(
        {"B", "scene and lesson browser: open / close (Esc closes it; a click opens an entry)"});
  }

 private:
  struct Thumb {
    GLuint tex = 0;
    bool done = false;  ///< drawn (tex) or failed (error)
    std::string error;  ///< the entry's located error, shown in place of the picture
  };

  void open(App& a) {
    stop_worker();  // a worker cancelled by the last close ends at its next progress report
    entries_ = read_catalog(builtin_scene_paths(), builtin_lesson_paths());
    thumbs_.assign(entries_.size(), Thumb{});
    logged_rects_.assign(entries_.size(), {-1, -1, -1, -1, -1});
    canonical_.clear();
    for (const CatalogEntry& e : entries_) canonical_.push_back(same_form(e.path));
    std::vector<Job> jobs;
    int cached = 0;
    for (size_t i = 0; i < entries_.size(); ++i) {
      const CatalogEntry& e = entries_[i];
      Thumb& t = thumbs_[i];
      if (!e.error.empty()) {
        fail(a, i, e.error);
        continue;
      }
      const std::string cache =
          a.config_dir.empty() ? std::string() : thumbnail_cache_path(a.config_dir, e.key);
      std::error_code ec;
      if (!cache.empty() && fs::is_regular_file(cache, ec)) {
        try {
          const Image img = load_image(cache);
          if (img.width == kThumbWidth && img.height == kThumbHeight) {
            upload(t, img);
            ++cached;
            continue;
          }
        } catch (const std::exception&) {
          // A damaged cache file: drawn again (and written again) below.
        }
      }
      jobs.push_back(Job{i, e, cache});
    }
    open_ = true;
    first_frame_ = true;
    a.log("browser open entries=%zu", entries_.size());
    a.log("browser thumbnails cached %d", cached);
    ready_logged_ = -1;
    if (!jobs.empty()) {
      worker_state_ = std::make_shared<WorkerState>();
      worker_ = std::thread(work, worker_state_, std::move(jobs));
    }
  }

  void close(App& a) {
    if (worker_state_) worker_state_->cancel = true;  // joined at the next open or at shutdown
    for (Thumb& t : thumbs_)
      if (t.tex) glDeleteTextures(1, &t.tex);
    thumbs_.clear();
    entries_.clear();
    open_ = false;
    a.log("browser close");
  }

  void stop_worker() {
    if (worker_state_) worker_state_->cancel = true;
    if (worker_.joinable()) worker_.join();
    worker_state_.reset();
  }

  void fail(App& a, size_t i, const std::string& error) {
    thumbs_[i].done = true;
    thumbs_[i].error = error;
    a.log("browser thumbnail error %s: %s", entries_[i].path.c_str(), error.c_str());
  }

  static void upload(Thumb& t, const Image& img) {
    glGenTextures(1, &t.tex);
    glBindTexture(GL_TEXTURE_2D, t.tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, img.width, img.height, 0, GL_RGB, GL_UNSIGNED_BYTE,
                 img.rgb.data());
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, 0);
    t.done = true;
  }

  /// The worker's thumbnails into textures (a frame's worth: all there are, each is small).
  void take_drawn(App& a) {
    std::vector<Drawn> got;
    if (worker_state_) {
      std::lock_guard<std::mutex> lock(worker_state_->m);
      got.swap(worker_state_->drawn);
    }
    for (Drawn& d : got) {
      if (d.index >= thumbs_.size()) continue;
      if (!d.error.empty()) {
        fail(a, d.index, d.error);
        continue;
      }
      upload(thumbs_[d.index], d.image);
      if (!d.cache_error.empty()) a.log("browser cache error %s", d.cache_error.c_str());
    }
    int ready = 0, failed = 0;
    for (const Thumb& t : thumbs_) {
      ready += t.done ? 1 : 0;
      failed += t.error.empty() ? 0 : 1;
    }
    if (ready != ready_logged_) {
      ready_logged_ = ready;
      a.log("browser thumbnails %d/%zu ready failed=%d", ready, thumbs_.size(), failed);
    }
  }

  void choose(App& a, size_t i) {
    const CatalogEntry& e = entries_[i];
    if (e.lesson)
      a.pending.open_lesson = e.path;
    else
      a.pending.open_path = e.path;
    a.log("browser choose %s", e.path.c_str());
    close(a);
  }

  /// A path as the browser compares them (the entries' and the running scene's may be written differently).
  static std::string same_form(const std::string& p) {
    std::error_code ec;
    const fs::path c = fs::weakly_canonical(p, ec);
    return ec ? p : c.string();
  }

  /// What runs now, in same_form: the open lesson's file, else the scene's ("" for none).
  static std::string running_path(const App& a) {
    if (a.lesson) return same_form(a.lesson->path);
    return a.sim ? same_form(a.sim->info().path) : std::string();
  }

  void draw(App& a) {
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const float s = a.ui_scale;
    // The whole height (the side panels' titles do not peek over it), a margin at the sides.
    const ImVec2 size(std::min(vp->Size.x - 24.f * s, 1400.f * s), vp->Size.y);
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + 0.5f * vp->Size.x, vp->Pos.y + 0.5f * vp->Size.y),
                            ImGuiCond_Always, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(size, ImGuiCond_Always);
    ImGui::SetNextWindowBgAlpha(1.f);
    if (first_frame_) ImGui::SetNextWindowFocus();
    bool keep = true;
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(14.f * s, 10.f * s));
    const bool shown = ImGui::Begin(
        "Scenes and lessons###scene_browser", &keep,
        ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
            ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoScrollbar);
    ImGui::PopStyleVar();
    if (shown) {
      int ready = 0;
      for (const Thumb& t : thumbs_) ready += t.done ? 1 : 0;
      ImGui::TextUnformatted("Click a lesson or a scene to open it.");
      ImGui::SameLine();
      ImGui::TextDisabled(ready < static_cast<int>(thumbs_.size())
                              ? "  B or Esc closes.   Pictures: %d of %zu drawn"
                              : "  B or Esc closes.",
                          ready, thumbs_.size());
      ImGui::Spacing();
      if (ImGui::BeginChild("##browser_cards", ImVec2(0.f, 0.f), false)) {
        if (first_frame_) ImGui::SetScrollY(0.f);
        cards(a);
      }
      ImGui::EndChild();
    }
    ImGui::End();
    first_frame_ = false;
    if (!keep && open_) close(a);
  }

  void cards(App& a) {
    const float s = a.ui_scale;
    const ImGuiStyle& st = ImGui::GetStyle();
    const float pad = 8.f * s, gap = 10.f * s;
    const float thumb_w = 128.f * s, thumb_h = 96.f * s;
    const float avail = ImGui::GetContentRegionAvail().x;
    const int cols = std::max(1, static_cast<int>((avail + gap) / (360.f * s + gap)));
    const float card_w = (avail - gap * static_cast<float>(cols - 1)) / static_cast<float>(cols);
    const float card_h = thumb_h + 2.f * pad;
    const float text_w = card_w - thumb_w - 3.f * pad;
    const float line_h = ImGui::GetTextLineHeight();
    const ImVec2 clip_lo = ImGui::GetWindowPos(),
                 clip_hi(clip_lo.x + ImGui::GetWindowWidth(), clip_lo.y + ImGui::GetWindowHeight());
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const std::string running = running_path(a);
    std::vector<std::string> lines;
    for (int g = 0; g < kSceneGroupCount; ++g) {
      int col = 0;
      bool header = false;
      for (size_t i = 0; i < entries_.size(); ++i) {
        const CatalogEntry& e = entries_[i];
        if (static_cast<int>(e.group) != g) continue;
        if (!header) {
          header = true;
          if (g > 0) ImGui::Spacing();
          if (ImFont* big = ui::title_font()) ImGui::PushFont(big);
          ImGui::PushStyleColor(ImGuiCol_Text, ui::kAccent);
          ImGui::TextUnformatted(scene_group_title(e.group));
          ImGui::PopStyleColor();
          if (ui::title_font()) ImGui::PopFont();
          ImGui::Separator();
        }
        if (col > 0) ImGui::SameLine(0.f, gap);
        ImGui::PushID(static_cast<int>(i));
        const ImVec2 p0 = ImGui::GetCursorScreenPos();
        const bool clicked = ImGui::InvisibleButton("##card", ImVec2(card_w, card_h));
        const bool hovered = ImGui::IsItemHovered();
        const bool now = canonical_[i] == running && e.lesson == (a.lesson.has_value());
        log_rect(a, i, p0, ImVec2(card_w, card_h), clip_lo, clip_hi);
        dl->AddRectFilled(p0, ImVec2(p0.x + card_w, p0.y + card_h),
                          ImGui::GetColorU32(hovered ? ImGuiCol_FrameBgHovered : ImGuiCol_FrameBg),
                          6.f * s);
        if (now || hovered)
          dl->AddRect(p0, ImVec2(p0.x + card_w, p0.y + card_h), ImGui::GetColorU32(ui::kAccent),
                      6.f * s, 0, 2.f * s);
        // The picture, or what stands in for it.
        const ImVec2 t0(p0.x + pad, p0.y + pad), t1(t0.x + thumb_w, t0.y + thumb_h);
        const Thumb& t = thumbs_[i];
        if (t.tex) {
          dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(t.tex)), t0, t1);
        } else {
          dl->AddRectFilled(t0, t1, IM_COL32(18, 20, 26, 255), 3.f * s);
          dl->AddRect(t0, t1, ImGui::GetColorU32(ImGuiCol_Border), 3.f * s);
          if (!t.error.empty()) {
            // The located error (file:line:col: field: what), wrapped within the box; whole in the tooltip.
            wrap_lines(short_error(t.error, e.path), thumb_w - 8.f * s,
                       static_cast<int>((thumb_h - 8.f * s) / line_h), lines);
            float y = t0.y + 4.f * s;
            for (const std::string& l : lines) {
              dl->AddText(ImVec2(t0.x + 4.f * s, y), ImGui::GetColorU32(ui::kError), l.c_str());
              y += line_h;
            }
          } else {
            const char* msg = "rendering...";
            const ImVec2 ts = ImGui::CalcTextSize(msg);
            dl->AddText(ImVec2(t0.x + 0.5f * (thumb_w - ts.x), t0.y + 0.5f * (thumb_h - ts.y)),
                        ImGui::GetColorU32(ImGuiCol_TextDisabled), msg);
          }
        }
        // Bold title (drawn twice, a pixel apart: the UI has one weight), then the description.
        const float x = t1.x + pad;
        float y = p0.y + pad;
        const bool title_cut = wrap_lines(e.title, text_w, 2, lines);
        const ImU32 title_col = ImGui::GetColorU32(now ? ui::kAccent : st.Colors[ImGuiCol_Text]);
        for (const std::string& l : lines) {
          dl->AddText(ImVec2(x, y), title_col, l.c_str());
          dl->AddText(ImVec2(x + std::max(1.f, std::floor(s)), y), title_col, l.c_str());
          y += line_h;
        }
        y += 0.25f * line_h;
        const std::string& desc =
            e.error.empty() ? e.description : std::string("This file does not load.");
        const int desc_lines =
            std::max(1, std::min(2, static_cast<int>((p0.y + card_h - pad - y) / line_h)));
        wrap_lines(desc, text_w, desc_lines, lines);
        for (const std::string& l : lines) {
          dl->AddText(ImVec2(x, y), ImGui::GetColorU32(ui::kMuted), l.c_str());
          y += line_h;
        }
        if (hovered) {
          // The whole title and description, and what is wrong with an entry that does not load.
          ImGui::BeginTooltip();
          ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.f);
          if (title_cut) ImGui::TextUnformatted(e.title.c_str());
          ImGui::TextUnformatted(desc.c_str());
          if (!t.error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ui::kError);
            ImGui::TextUnformatted(t.error.c_str());
            ImGui::PopStyleColor();
          }
          ImGui::TextDisabled("%s", fs::path(e.path).filename().string().c_str());
          ImGui::PopTextWrapPos();
          ImGui::EndTooltip();
        }
        ImGui::PopID();
        if (clicked) {
          choose(a, i);
          return;  // the entries are gone
        }
        col = (col + 1) % cols;
      }
    }
  }

  /// "browser entry PATH x= y= w= h= visible=" when an entry's card appears or moves (verbose):
  /// where a GUI test clicks.
  void log_rect(App& a, size_t i, ImVec2 p, ImVec2 sz, ImVec2 clip_lo, ImVec2 clip_hi) {
    const bool vis =
        p.y >= clip_lo.y && p.y + sz.y <= clip_hi.y && p.x >= clip_lo.x && p.x + sz.x <= clip_hi.x;
    const std::array<int, 5> r{static_cast<int>(p.x), static_cast<int>(p.y), static_cast<int>(sz.x),
                               static_cast<int>(sz.y), vis ? 1 : 0};
    if (logged_rects_[i] == r) return;
    logged_rects_[i] = r;
    a.log("browser entry %s x=%d y=%d w=%d h=%d visible=%d", entries_[i].path.c_str(), r[0], r[1],
          r[2], r[3], r[4]);
  }

  bool open_ = false;
  bool first_frame_ = false;
  std::vector<CatalogEntry> entries_;
  std::vector<Thumb> thumbs_;
  std::vector<std::string> canonical_;  ///< the entries' paths in same_form
  std::vector<std::array<int, 5>> logged_rects_;
  int ready_logged_ = -1;
  std::shared_ptr<WorkerState> worker_state_;
  std::thread worker_;
};

}  // namespace

std::unique_ptr<Feature> make_browser_feature() { return std::make_unique<BrowserFeature>(); }

}  // namespace ps
