#include "sim/core/settings_dir.h"

#include <cstdlib>
#include <filesystem>

namespace ps {

std::string settings_dir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return (std::filesystem::path(xdg) / "particle-sandbox").string();
  const char* home = std::getenv("HOME");
  if (home && *home) return (std::filesystem::path(home) / ".config" / "particle-sandbox").string();
  return "";
}

}  // namespace ps
