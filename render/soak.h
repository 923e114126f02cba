/// The soak driver (issue #16): with `sandbox gui --soak SECONDS`, the window's
/// own loop runs unattended while this applies, on a fixed frame schedule, what
/// a lecture does: the t / r / s / d presets, the attract and repel tools, a
/// grab dragged in a circle, SGF edits, and a scene reset; every 10 s it
/// samples the process's resident memory and appends it to a CSV. After the
/// time is up it closes the window. scripts/soak.sh runs it under Xvfb on the
/// largest built-in scene; docs/reliability.md records the curve.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace ps {

struct App;

class SoakDriver {
 public:
  /// `seconds` > 0 enables it; `csv` ("" = none) receives "seconds,rss_kib,frame,step,particles".
  void start(double seconds, const std::string& csv);
  bool enabled() const { return seconds_ > 0.0; }
  /// Called once per frame after input handling, before the sync point.
  /// Returns false when the soak is over (the window should close).
  bool tick(App& a);
  ~SoakDriver();

 private:
  double seconds_ = 0.0, t0_ = 0.0, next_sample_ = 0.0;
  int64_t frame_ = 0;
  int preset_ = 0;
  bool grabbing_ = false;
  std::FILE* csv_ = nullptr;
};

/// Resident set size of this process in KiB (/proc/self/statm), 0 if unknown.
int64_t resident_kib();

}  // namespace ps
