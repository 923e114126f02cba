// `sandbox compare`: builds the panes from the --vary lists, steps them in
// lockstep, draws each frame's panes side by side and writes the curves.
#include "app/compare_cmd.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "app/frame_image.h"
#include "app/sgf_flag.h"
#include "render/cpu/raster.h"
#include "render/cpu/text.h"
#include "render/cpu/video.h"
#include "sim/core/atomic_write.h"
#include "sim/scene/compare.h"
#include "sim/verify/verify.h"

namespace fs = std::filesystem;

namespace ps {

namespace {

// [SECTION] Frames ------------------------------------------------------------------

constexpr int kTileWidth = 480, kBar = 30, kGap = 4;
/// Width for the label: the tile less the swatch and the margins.
constexpr int kLabelRoom = kTileWidth - 30 - 8 - 16;
/// The time as wide as it gets in practice (reserved beside every label).
const char* const kTimeWidest = "t=000.0000";

/// "#rrggbb" -> bytes.
void hex_rgb(const char* hex, uint8_t out[3]) {
  unsigned v = 0;
  std::sscanf(hex + 1, "%6x", &v);
  out[0] = static_cast<uint8_t>(v >> 16);
  out[1] = static_cast<uint8_t>(v >> 8);
  out[2] = static_cast<uint8_t>(v);
}

/// The panes side by side: per pane a label bar (a swatch in the pane's curve
/// colour in curves.svg, the label, the pane's time) over its picture.
class FrameComposer {
 public:
  explicit FrameComposer(Comparison& cmp) : cmp_(cmp) {
    Vec2 lo, hi;
    cmp.pane(0).sim->bounds(lo, hi);
    const float w = hi.x - lo.x, h = hi.y - lo.y;
    tile_h_ = w > 0.f ? static_cast<int>(std::lround(kTileWidth * h / w)) : kTileWidth;
    tile_h_ = std::clamp(tile_h_ & ~1, 240, 720);
    const int n = static_cast<int>(cmp.size());
    frame_.resize(n * kTileWidth + (n - 1) * kGap, kBar + tile_h_, 40, 42, 48);
    tile_.resize(kTileWidth, tile_h_);
    // One size for every pane's label and time: twice the font's when every
    // label fits beside the time, else the time smaller, then the labels (a
    // label still too long is cut short with "..").
    size_t longest = 0;
    for (size_t k = 0; k < cmp.size(); ++k)
      longest = std::max(longest, cmp.pane(k).spec.label.size());
    const std::string widest(longest, 'm');
    auto fits = [&](int ls, int ts) {
      return text_width(widest, ls) + text_width(kTimeWidest, ts) <= kLabelRoom;
    };
    time_scale_ = fits(2, 2) ? 2 : 1;
    label_scale_ = fits(2, time_scale_) ? 2 : 1;
    time_room_ = text_width(kTimeWidest, time_scale_);
  }

  const Image& compose() {
    const uint8_t bar[3] = {24, 26, 32}, ink[3] = {235, 235, 235}, dim[3] = {170, 175, 185};
    for (size_t k = 0; k < cmp_.size(); ++k) {
      const int x0 = static_cast<int>(k) * (kTileWidth + kGap);
      ComparePane& p = cmp_.pane(k);
      render_frame(*p.sim, table_, ImageColor{}, tile_);
      for (int y = 0; y < tile_h_; ++y)
        std::copy_n(tile_.at(0, y), 3 * kTileWidth, frame_.at(x0, kBar + y));
      fill_rect(frame_, x0, 0, x0 + kTileWidth, kBar, bar);
      uint8_t swatch[3];
      hex_rgb(verify::plot_colour(k), swatch);
      fill_rect(frame_, x0 + 8, 8, x0 + 22, 22, swatch);
      char t[48];
      std::snprintf(t, sizeof t, "t=%.4f", p.sim->time());
      std::string label = p.spec.label;
      while (text_width(label, label_scale_) + time_room_ > kLabelRoom && label.size() > 3)
        label = label.substr(0, label.size() - 4) + "..";
      const int tw = text_width(t, time_scale_);
      draw_text(frame_, x0 + 30, (kBar - text_height(label_scale_)) / 2 + 1, label, label_scale_,
                ink);
      draw_text(frame_, x0 + kTileWidth - 8 - tw, (kBar - text_height(time_scale_)) / 2 + 1, t,
                time_scale_, dim);
    }
    return frame_;
  }

 private:
  Comparison& cmp_;
  int tile_h_ = 0;
  int label_scale_ = 2, time_scale_ = 2, time_room_ = 0;
  Image frame_, tile_;
  ParticleTable table_;
};

// [SECTION] Curves ------------------------------------------------------------------

/// curves.svg: kinetic energy, momentum x and y and angular momentum against
/// time, one series per pane (the legend names the panes), stacked.
std::string curves_svg(const Comparison& cmp) {
  struct Quantity {
    const char* title;
    const char* ylabel;
    double (*get)(const CurveSample&);
  };
  const Quantity qs[] = {
      {"Kinetic energy", "kinetic energy", [](const CurveSample& s) { return s.kinetic_energy; }},
      {"Linear momentum x", "momentum x", [](const CurveSample& s) { return s.momentum[0]; }},
      {"Linear momentum y", "momentum y", [](const CurveSample& s) { return s.momentum[1]; }},
      {"Angular momentum about the domain centre", "angular momentum",
       [](const CurveSample& s) { return s.angular_momentum; }},
  };
  constexpr int W = 720, H = 300;
  std::string body;
  int y = 0;
  for (const Quantity& q : qs) {
    verify::Plot plot;
    plot.title = q.title;
    plot.xlabel = "time";
    plot.ylabel = q.ylabel;
    for (size_t k = 0; k < cmp.size(); ++k) {
      verify::Series s;
      s.label = cmp.pane(k).spec.label;
      for (const CurveSample& c : cmp.pane(k).curve) {
        s.x.push_back(c.time);
        s.y.push_back(q.get(c));
      }
      plot.series.push_back(std::move(s));
    }
    body += "<g transform=\"translate(0 " + std::to_string(y) + ")\">\n" +
            verify::plot_svg(plot, W, H) + "</g>\n";
    y += H;
  }
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(W) + "\" height=\"" +
         std::to_string(y) + "\" viewBox=\"0 0 " + std::to_string(W) + " " + std::to_string(y) +
         "\">\n" + body + "</svg>\n";
}

}  // namespace

// [SECTION] compare ------------------------------------------------------------------

int cmd_compare(const Args& a) {
  // Setup: the panes from the --vary lists.
  if (a.positional.size() != 1)
    throw UsageError(a.positional.empty()
                         ? "compare needs a scene (a file or a built-in name; see `sandbox info`)"
                         : "compare takes one scene, got '" + a.positional[1] + "' as well");
  if (a.varies.empty())
    throw UsageError(
        "compare needs at least one --vary path=a,b,... (e.g. --vary solver.transfer=pic,apic)");
  if (a.has("steps") && a.has("frames")) throw UsageError("--steps and --frames are exclusive");
  const std::string backend = a.get("backend", "auto");
  if (backend != "cpu" && backend != "cuda" && backend != "auto")
    throw UsageError("--backend: expected cpu, cuda or auto, got '" + backend + "'");
  const int threads = static_cast<int>(a.get_int("threads", 0, 0, 1024));
  const long images_flag = a.get_int("images", 1, 0, 1L << 40);
  const int fps = static_cast<int>(a.get_int("fps", 30, 1, 240));
  const bool quiet = a.has("quiet"), video = a.has("video");
  std::vector<VaryAxis> axes;
  std::set<std::string> paths;
  for (const std::string& v : a.varies) {
    axes.push_back(parse_vary(v));  // InputError located at "--vary ..."
    if (!paths.insert(axes.back().path).second)
      throw UsageError("--vary " + axes.back().path + " is given twice");
  }
  // Counted from the list lengths before any pane is built (22 two-value lists are 4 M panes).
  const uint64_t count = vary_pane_count(axes);
  if (count > Comparison::kMaxPanes || count < Comparison::kMinPanes)
    throw UsageError("--vary gives " + std::to_string(count) + " pane" + (count == 1 ? "" : "s") +
                     " (" + vary_shape(axes) + "); compare shows 2 to 4 panes");
  const std::vector<PaneSpec> specs = vary_panes(axes);
  Comparison cmp(a.positional[0], a.sets, specs, backend, threads);
  for (size_t k = 0; k < cmp.size(); ++k) {
    const std::string n = cmp.pane(k).sim->take_notice();
    if (!n.empty())
      std::fprintf(stderr, "sandbox: pane %zu (%s): %s\n", k + 1, cmp.pane(k).spec.label.c_str(),
                   n.c_str());
  }
  if (a.has("sgf")) cmp.set_force_list(load_sgf_flag(a.get("sgf", ""), quiet));
  const std::string out_dir =
      a.get("out", "out/compare_" + fs::path(cmp.info().path).stem().string());
  create_output_dir(out_dir);
  const long image_every = png_interval(images_flag);
  bool make_video = video && image_every > 0;
  if (video && image_every == 0)
    std::fprintf(stderr,
                 "note: --video needs the PNG frames (--images 0 given or no libstb); no video\n");
  if (make_video && !on_path("ffmpeg")) {
    std::fprintf(stderr, "note: ffmpeg is not on PATH: no video (the PNG frames are in %s/)\n",
                 out_dir.c_str());
    make_video = false;
  }

  // The clock: frames of the first pane (--steps N: N of its substeps, in frames).
  const int spf = cmp.pane(0).sim->substeps_per_frame();
  const bool by_steps = a.has("steps");
  const int64_t total_steps = by_steps ? a.get_int("steps", 0, 0, 1L << 40)
                                       : a.get_int("frames", cmp.info().frames, 0, 1L << 40) * spf;
  if (!quiet) {
    std::printf("compare %s (%s): %zu panes, %" PRId64
                " steps of the first pane (%d per frame), backend %s\n",
                cmp.info().name.c_str(), cmp.info().path.c_str(), cmp.size(), total_steps, spf,
                cmp.pane(0).sim->backend_name().c_str());
    for (size_t k = 0; k < cmp.size(); ++k) {
      std::string set;
      for (const std::string& s : cmp.pane(k).spec.settings) set += " " + s;
      std::printf("  pane %zu: %s (--vary%s), %zu particles\n", k + 1,
                  cmp.pane(k).spec.label.c_str(), set.c_str(),
                  cmp.pane(k).sim->diagnostics().count);
    }
    std::fflush(stdout);
  }

  // Main loop: a frame at a time; a picture every image_every frames.
  FrameComposer composer(cmp);
  int images = 0;
  auto image = [&]() {
    char name[64];
    std::snprintf(name, sizeof name, "frame_%05d.png", images++);
    std::string err;
    if (!write_png((fs::path(out_dir) / name).string(), composer.compose(), &err))
      throw std::runtime_error(err);
  };
  if (image_every > 0) image();
  int64_t done = 0;
  int status = 0;
  int last_decile = 0;
  while (done < total_steps) {
    const int chunk = static_cast<int>(std::min<int64_t>(spf, total_steps - done));
    const int64_t before = cmp.pane(0).sim->step_count();
    const StepStatus st = cmp.step_frame(chunk);
    done += cmp.pane(0).sim->step_count() - before;
    for (size_t k = 0; k < cmp.size(); ++k) {
      const std::string n = cmp.pane(k).sim->take_notice();
      if (!n.empty()) std::fprintf(stderr, "sandbox: pane %zu: %s\n", k + 1, n.c_str());
    }
    if (!st.ok) {
      std::fprintf(stderr, "error: %s\n", st.message.c_str());
      status = 1;
      break;
    }
    if (image_every > 0 && cmp.frame() % image_every == 0) image();
    const int decile = static_cast<int>(10 * done / std::max<int64_t>(total_steps, 1));
    if (!quiet && !a.has("no-progress") && decile != last_decile) {
      std::fprintf(stderr, "progress %3d%% (frame %" PRId64 ")\n", 10 * decile, cmp.frame());
      last_decile = decile;
    }
  }

  // The curves (also after a blow-up: up to the last good frame).
  write_file_atomic((fs::path(out_dir) / "curves.csv").string(), cmp.curves_csv());
  write_file_atomic((fs::path(out_dir) / "curves.svg").string(), curves_svg(cmp));
  if (!quiet) {
    // Final values, with their ratio to the start where the start is not zero.
    auto ratio = [](double end, double start) {
      char b[32] = "";
      if (start != 0.0) std::snprintf(b, sizeof b, " (x%.4g)", end / start);
      return std::string(b);
    };
    for (size_t k = 0; k < cmp.size(); ++k) {
      const std::vector<CurveSample>& c = cmp.pane(k).curve;
      const CurveSample &s0 = c.front(), &s1 = c.back();
      std::printf("  pane %zu %-28s t=%.6f steps=%" PRId64
                  " kinetic_energy=%.9g%s angular_momentum=%.9g%s "
                  "momentum=(%.9g, %.9g) hash=%016" PRIx64 "\n",
                  k + 1, cmp.pane(k).spec.label.c_str(), s1.time, s1.steps, s1.kinetic_energy,
                  ratio(s1.kinetic_energy, s0.kinetic_energy).c_str(), s1.angular_momentum,
                  ratio(s1.angular_momentum, s0.angular_momentum).c_str(), s1.momentum[0],
                  s1.momentum[1], s1.hash);
    }
  }
  if (make_video) {
    const std::string mp4 = (fs::path(out_dir) / "compare.mp4").string();
    std::string err;
    if (encode_png_sequence((fs::path(out_dir) / "frame_%05d.png").string(), fps, mp4, &err)) {
      if (!quiet) std::printf("video %s (%d frames at %d fps)\n", mp4.c_str(), images, fps);
    } else {
      std::fprintf(stderr, "note: no video: %s\n", err.c_str());
    }
  }
  if (!quiet)
    std::printf("output written to %s/: %d frame%s, curves.csv, curves.svg\n", out_dir.c_str(),
                images, images == 1 ? "" : "s");
  return status;
}

}  // namespace ps
