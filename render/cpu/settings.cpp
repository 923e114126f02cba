#include "render/cpu/settings.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include "sim/core/atomic_write.h"
#include "sim/core/error.h"
#include "sim/core/file.h"

namespace ps {

namespace {
std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}
}  // namespace

bool SettingsFile::load(const std::string& path) {
  std::string text;
  try {
    text = read_file_bytes(path);  // regular files only, size-limited
  } catch (const InputError&) {
    return false;
  }
  parse(text);
  return true;
}

void SettingsFile::parse(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t eq = t.find('=');
    if (eq == std::string::npos) continue;
    std::string k = trim(t.substr(0, eq));
    if (!k.empty()) values_[k] = trim(t.substr(eq + 1));
  }
}

bool SettingsFile::save(const std::string& path, std::string* error) const {
  // Best effort, never throws: a settings file that cannot be written only
  // loses the settings. Written atomically, so a full disk or a crash on exit
  // never leaves a truncated file (which would reset every setting).
  std::error_code ec;
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string text = this->text();
  try {
    write_file_atomic(path, text);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
  return true;
}

std::string SettingsFile::text() const {
  std::string text = "# Particle Sandbox window settings (written when they change and on exit)\n";
  for (const auto& kv : values_) text += kv.first + " = " + kv.second + "\n";
  return text;
}

bool SettingsAutosave::due(const std::string& text, double now) {
  if (text != offered_) {
    offered_ = text;
    changed_ = now;
  }
  return text != saved_ && now - changed_ >= delay_;
}

void SettingsAutosave::saved(const std::string& text, double now) {
  saved_ = offered_ = text;
  changed_ = now;
}

std::string SettingsFile::get(const std::string& k, const std::string& def) const {
  auto it = values_.find(k);
  return it == values_.end() ? def : it->second;
}

int SettingsFile::get_int(const std::string& k, int def, int lo, int hi) const {
  auto it = values_.find(k);
  if (it == values_.end()) return def;
  char* end = nullptr;
  long v = std::strtol(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || v < lo || v > hi) return def;
  return static_cast<int>(v);
}

float SettingsFile::get_float(const std::string& k, float def, float lo, float hi) const {
  auto it = values_.find(k);
  if (it == values_.end()) return def;
  char* end = nullptr;
  float v = std::strtof(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) return def;
  return v;
}

bool SettingsFile::get_bool(const std::string& k, bool def) const {
  auto it = values_.find(k);
  if (it == values_.end()) return def;
  if (it->second == "1" || it->second == "true") return true;
  if (it->second == "0" || it->second == "false") return false;
  return def;
}

void SettingsFile::set_float(const std::string& k, float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  values_[k] = buf;
}

}  // namespace ps
