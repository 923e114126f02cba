/// The soak driver: with `sandbox gui --soak SECONDS`, the window's
/// own loop runs unattended while this applies, on a fixed frame schedule, what
/// a lecture does: the t / r / s / d presets, the attract and repel tools, a
/// grab dragged in a circle, SGF edits, and a scene reset; every 10 s it
/// samples the process's resident memory and appends it to a CSV. After the
/// time is up it closes the window. scripts/soak.sh runs it under Xvfb on the
/// largest built-in scene; docs/reliability.md records the curve.
///
/// The classroom plan (`--soak-plan classroom`) does what a teacher does with
/// the lessons instead: every cycle it pages to the next lesson (after the last,
/// back to the first), starts a comparison of the lesson's scene (PIC against
/// APIC on MPM scenes) unless the lesson opened one, ends it, scrubs the rewind
/// strip back to the middle of the recording and forward to its head, and runs
/// on; the lecture plan's presets and tools act throughout.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace ps {

struct App;

class SoakDriver {
 public:
  /// `seconds` > 0 enables it; `csv` ("" = none) receives "seconds,rss_kib,frame,step,particles".
  /// `plan`: "lecture" (the default: presets, tools, SGF, resets on one scene)
  /// or "classroom" (lessons, comparisons and rewind as well).
  void start(double seconds, const std::string& csv, const std::string& plan = "lecture");
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
  bool classroom_ = false;
  int64_t lessons_opened_ = 0, compares_started_ = 0, seeks_ = 0;
  void classroom_tick(App& a, int64_t f);
  std::FILE* csv_ = nullptr;
};

/// Resident set size of this process in KiB (/proc/self/statm), 0 if unknown.
int64_t resident_kib();

}  // namespace ps
