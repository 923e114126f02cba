/// How fast simulated time runs in the window, GL-free: simulated seconds per
/// wall second measured over the last second of running, the time step that
/// went with it, and the texts the window shows ("x0.24 real time", the slow
/// motion banner). A stiff scene (dem_beam with the bonds' E at its maximum:
/// an automatic dt of 0.11 µs) runs at 1/700 of real time although every
/// frame's substeps fit the budget; the banner says so.
#pragma once
#include <cstdint>
#include <deque>
#include <string>

namespace ps {

/// Below this many simulated seconds per wall second the window shows the
/// slow-motion banner even when every substep ran (the built-in scenes run
/// at 0.12 to 0.24 of real time at 60 frames per second).
constexpr double kSlowMotionRate = 1.0 / 20.0;
/// Below this smoothed share of the wanted substeps run, the frame budget is
/// named as a reason for slow motion.
constexpr double kBudgetCutShare = 0.97;

class SimRate {
 public:
  /// One frame: the wall clock (s), the simulation's time (s) and step count.
  /// Not running (or the time going back: a reset, a rewind) starts over.
  void sample(double wall, double sim_time, int64_t step, bool running);
  void reset() { s_.clear(); }
  /// At least half a second of running measured.
  bool known() const;
  /// Simulated seconds per wall second (0 while not known).
  double rate() const;
  /// Simulated time per step over the same span (0 while not known).
  double dt() const;

 private:
  struct Sample {
    double wall, time;
    int64_t step;
  };
  std::deque<Sample> s_;
};

/// The rate as a factor: "x1.0", "x0.54", "x1/7", "x1/700" (below a half, as a fraction).
std::string rate_text(double rate);
/// A duration with its unit: "0.11 µs", "22 µs", "1.5 ms", "0.2 s".
std::string duration_text(double seconds);

/// The slow-motion banner, "" when the scene runs fast enough: shown when the
/// measured rate is below kSlowMotionRate or when a frame's substeps do not
/// fit the budget (`fit` < kBudgetCutShare: the smoothed share of the wanted substeps
/// that ran; the count it names is that share, so a line that blames the
/// budget never says "200 of 200"). E.g. "slow motion x1/700 of real time:
/// dt 0.11 µs, 200 substeps a frame (22 µs of motion per frame)".
std::string slow_motion_text(const SimRate& rate, int substeps_wanted, double fit,
                             double budget_ms);

}  // namespace ps
