#include "render/cpu/time_rate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ps {

namespace {
constexpr double kSpan = 1.0;     // seconds of wall time the rate is measured over
constexpr double kMinSpan = 0.5;  // before this, the rate is not known
}  // namespace

void SimRate::sample(double wall, double sim_time, int64_t step, bool running) {
  if (!running || (!s_.empty() &&
                   (sim_time < s_.back().time || step < s_.back().step || wall < s_.back().wall))) {
    s_.clear();
    if (!running) return;
  }
  s_.push_back({wall, sim_time, step});
  // Keep the oldest sample that still spans kSpan (so the span never drops below it once reached).
  while (s_.size() > 2 && wall - s_[1].wall >= kSpan) s_.pop_front();
}

bool SimRate::known() const {
  return s_.size() >= 2 && s_.back().wall - s_.front().wall >= kMinSpan;
}

double SimRate::rate() const {
  if (!known()) return 0.0;
  return (s_.back().time - s_.front().time) / (s_.back().wall - s_.front().wall);
}

double SimRate::dt() const {
  if (!known() || s_.back().step <= s_.front().step) return 0.0;
  return (s_.back().time - s_.front().time) / static_cast<double>(s_.back().step - s_.front().step);
}

std::string rate_text(double rate) {
  char b[48];
  if (!(rate > 0.0)) return "x0";
  if (rate >= 0.5) {
    std::snprintf(b, sizeof b, "x%.2g", rate);
  } else {
    const double n = 1.0 / rate;
    // Two significant figures: x1/7, x1/23, x1/700, x1/4500.
    const double mag = std::pow(10.0, std::floor(std::log10(n)) - 1.0);
    const double r = n < 10.0 ? std::round(n) : std::round(n / mag) * mag;
    std::snprintf(b, sizeof b, "x1/%.0f", r);
  }
  return b;
}

std::string duration_text(double s) {  // µ: UTF-8, the window's fonts cover Latin-1
  char b[48];
  const double a = std::fabs(s);
  if (a >= 1.0)
    std::snprintf(b, sizeof b, "%.3g s", s);
  else if (a >= 1e-3)
    std::snprintf(b, sizeof b, "%.3g ms", s * 1e3);
  else if (a >= 1e-8 || a == 0.0)
    std::snprintf(b, sizeof b, "%.3g \u00b5s", s * 1e6);  // 0.11 µs, not 110 ns
  else
    std::snprintf(b, sizeof b, "%.3g ns", s * 1e9);
  return b;
}

std::string slow_motion_text(const SimRate& rate, int substeps_wanted, double fit,
                             double budget_ms) {
  const bool slow = rate.known() && rate.rate() < kSlowMotionRate;
  const bool cut = fit < kBudgetCutShare;
  if (!slow && !cut) return "";
  std::string t = "slow motion ";
  char b[160];
  if (rate.known()) {
    t += rate_text(rate.rate()) + " of real time";
    if (const double dt = rate.dt(); dt > 0.0)
      t += ": dt " + duration_text(dt) + ", " + std::to_string(substeps_wanted) +
           " substeps a frame (" + duration_text(dt * substeps_wanted) + " of motion per frame)";
  } else {
    std::snprintf(b, sizeof b, "x%.2f", fit);
    t += b;
  }
  if (cut) {
    // The smoothed share as a count (a loaded frame or two must not read as "200 of 200 fit").
    const long fitted =
        std::clamp(std::lround(fit * substeps_wanted), 0L, static_cast<long>(substeps_wanted));
    std::snprintf(b, sizeof b, "%s%d of %d substeps per frame fit the %.0f ms budget",
                  rate.known() ? "; " : "  (", static_cast<int>(fitted), substeps_wanted,
                  budget_ms);
    t += b;
    if (!rate.known()) t += ")";
  }
  return t;
}

}  // namespace ps
