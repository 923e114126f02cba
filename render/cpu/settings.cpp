#include "render/cpu/settings.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ps {

std::string settings_dir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return (std::filesystem::path(xdg) / "particle-sandbox").string();
  const char* home = std::getenv("HOME");
  if (home && *home) return (std::filesystem::path(home) / ".config" / "particle-sandbox").string();
  return "";
}

namespace {
std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}
}  // namespace

bool SettingsFile::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t eq = t.find('=');
    if (eq == std::string::npos) continue;
    std::string k = trim(t.substr(0, eq));
    if (!k.empty()) values_[k] = trim(t.substr(eq + 1));
  }
  return true;
}

bool SettingsFile::save(const std::string& path) const {
  std::error_code ec;
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream out(path, std::ios::trunc);
  if (!out) return false;
  out << "# Particle Sandbox window settings (written on exit)\n";
  for (const auto& kv : values_) out << kv.first << " = " << kv.second << "\n";
  return static_cast<bool>(out);
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
