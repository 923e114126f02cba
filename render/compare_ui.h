/// The window's comparison view (render/panel_compare.cpp): the
/// panes (sim/scene/compare.h), their particle renderers and tables, the
/// linked camera, per-pane curves for the overlaid Stats plot, and what the
/// Compare panel edits. Internal to render/.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>
#include "render/cpu/layout.h"
#include "render/gl_draw.h"
#include "sim/scene/compare.h"

namespace ps {

struct CompareUi {
  std::unique_ptr<Comparison> cmp;  ///< null: the single view
  /// What to vary: space-separated `path=v1,v2,...` items; the panes are
  /// their product (2 to 4).
  std::string vary = "solver.transfer=pic,apic,flip";
  std::vector<PaneSpec> panes;  ///< the running comparison's panes (labels, settings)
  std::string error;            ///< the last failed build
  // Drawing.
  std::array<ParticleRenderer, 4> renderers;
  bool renderers_ready = false;
  std::array<ParticleTable, 4> tables;
  std::vector<float> xy, scalar, radius;
  std::vector<uint8_t> rgba;
  bool linked_fit = true;  ///< refit the panes on the next draw
  bool touched = false;    ///< zoomed or panned: a new layout keeps the view
  // Layout (App::compare_layout): the tiling chosen for the scene's aspect and the viewport.
  Tiling tiling;
  float band = 0.f;                         ///< each pane's label band at its top (px)
  ScreenRect laid_for{0.f, 0.f, 0.f, 0.f};  ///< the viewport the tiling was chosen for
  size_t laid_panes = 0;                    ///< and the pane count (0: lay out again)
  bool labels_logged = false;  ///< the labels' places logged for this layout (--verbose)
  Vec2 centre{0.f, 0.f};       ///< linked camera: world point at each pane's centre
  float scale = 1.f;           ///< and its pixels per world unit
  // Curves (one per pane): kinetic energy, |linear momentum|, angular momentum.
  static constexpr int kSamples = 240;
  struct Curves {
    std::vector<float> ke, p, L;
  };
  std::array<Curves, 4> curves;
  double last_sample = -1.0;
  // Tools.
  bool grabbing = false;
  std::vector<uint32_t> grab_rows;
  std::string halted;                ///< the pane that blew up, and why
  double ms_per_pane_substep = 0.0;  ///< one pane's substep, averaged (sizes the catch-up limit)
  bool was_behind = false;  ///< a pane was catching up at the last frame (logged on change)
  // Rewind (the strip and Left / Right / Home while comparing; applied at the sync point).
  int64_t pending_seek = -1;  ///< a frame to restore every pane to
  bool dragging = false;
};

}  // namespace ps
