/// Side-by-side comparison (issue #15): 2 to 4 panes, each its own
/// Simulation built from the same scene with its own `--set` overrides (a
/// transfer scheme, a FLIP blend, a kernel order, a grid resolution, any
/// path), stepped in lockstep. What a user does applies to every pane alike:
/// a velocity preset, a point force, a grab of the same particle rows, an SGF
/// list. Panes share no mutable state, so a setting given to one never
/// reaches another (tested). The window draws them side by side
/// (render/panel_compare.cpp).
#pragma once
#include <memory>
#include <string>
#include <vector>
#include "sim/mpm/mpm_world.h"
#include "sim/scene/simulation.h"

namespace ps {

struct ComparePane {
  std::string label;                   ///< "solver.transfer=pic"
  std::vector<std::string> overrides;  ///< the scene's base overrides, then this pane's
  std::unique_ptr<Simulation> sim;
};

/// One `--vary path=a,b,c` list as panes' overrides: {"path=a", "path=b", "path=c"}.
/// Throws InputError for a malformed list (no '=', an empty value).
std::vector<std::string> parse_vary(const std::string& vary);

/// The panes of several `path=a,b,...` items: their product, the first item
/// varying slowest ("a=1,2 b=x,y" -> a=1 b=x, a=1 b=y, a=2 b=x, a=2 b=y).
/// Items are separated by spaces in one string (the window's field). Throws
/// InputError for a malformed item or for fewer than 2 or more than 4 panes.
std::vector<std::vector<std::string>> vary_product(const std::vector<std::string>& items);
std::vector<std::vector<std::string>> vary_product(const std::string& space_separated);

class Comparison {
 public:
  /// Builds one pane per entry of `variants` (each a list of path=value
  /// overrides applied after `base`). 2 to 4 panes; throws InputError naming
  /// the pane's override for a bad value, and for too few or too many panes.
  Comparison(const std::string& scene, const std::vector<std::string>& base,
             const std::vector<std::vector<std::string>>& variants, const std::string& backend, int threads);

  size_t size() const { return panes_.size(); }
  ComparePane& pane(size_t k) { return panes_[k]; }
  const ComparePane& pane(size_t k) const { return panes_[k]; }

  /// `substeps` substeps in every pane (lockstep by step count). Panes whose
  /// setting changes dt (another grid, say) stay at the same step count, not
  /// the same time; the window and the docs say so. Stops at the first pane
  /// that blows up and returns its status (the label in the message).
  StepStatus step(int substeps);
  /// A velocity preset on every MPM pane.
  void apply_preset(Preset p, float speed);
  /// The same point force (attract / repel) in every pane.
  void set_point_force(const PointForce& f);
  /// Grab the same particle rows in every MPM pane (panes start identical,
  /// so the rows are the same particles); move and release them together.
  void grab_begin(const std::vector<uint32_t>& rows, Vec2 target, float stiffness);
  void grab_move(Vec2 target);
  void grab_end();
  void set_force_list(const SgfList& list);

 private:
  std::vector<ComparePane> panes_;
};

}  // namespace ps
