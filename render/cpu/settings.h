/// The window's persistent settings: a small "key = value" text file under
/// $XDG_CONFIG_HOME/particle-sandbox/ (or ~/.config/particle-sandbox/), next
/// to ImGui's own imgui.ini (window positions and sizes).
#pragma once
#include <map>
#include <string>
#include "sim/core/settings_dir.h"  // settings_dir(): shared with the library

namespace ps {

class SettingsFile {
 public:
  /// Reads `path`; a missing file is an empty set (returns false), unknown
  /// keys are kept, malformed lines are skipped.
  bool load(const std::string& path);
  /// Adds the keys of a settings text (the file format above).
  void parse(const std::string& text);
  /// Writes all keys sorted, atomically (the old file stays whole on failure);
  /// creates the folder. Never throws: returns false and sets *error (file
  /// and OS reason) on failure.
  bool save(const std::string& path, std::string* error = nullptr) const;
  /// The file's text as save() writes it (a comment line, then the keys sorted).
  std::string text() const;

  bool has(const std::string& k) const { return values_.count(k) != 0; }
  std::string get(const std::string& k, const std::string& def) const;
  int get_int(const std::string& k, int def, int lo, int hi) const;
  float get_float(const std::string& k, float def, float lo, float hi) const;
  bool get_bool(const std::string& k, bool def) const;

  void set(const std::string& k, const std::string& v) { values_[k] = v; }
  void set_int(const std::string& k, int v) { values_[k] = std::to_string(v); }
  void set_float(const std::string& k, float v);
  void set_bool(const std::string& k, bool v) { values_[k] = v ? "1" : "0"; }

 private:
  std::map<std::string, std::string> values_;
};

/// When to write the settings while the window runs, so a window that is
/// killed (or crashes) keeps them: offered the settings text now and then, it
/// says to write it once it differs from the last written text and has not
/// changed for `delay` seconds (a slider being dragged is written once, after
/// it stops).
class SettingsAutosave {
 public:
  explicit SettingsAutosave(double delay = 2.0) : delay_(delay) {}
  /// `text` is what would be written now (SettingsFile::text()).
  bool due(const std::string& text, double now);
  /// `text` was written (or read at the start: it is what the file holds) at `now`.
  void saved(const std::string& text, double now);

 private:
  double delay_;
  std::string saved_, offered_;
  double changed_ = 0.0;  ///< when the offered text last changed
};

}  // namespace ps
