/// Where per-user state lives: the window's settings and imgui.ini, and the
/// CUDA self-check verdicts (sim/selfcheck). Shared by the library and the
/// window, so the library does not depend on render/.
#pragma once
#include <string>

namespace ps {

/// $XDG_CONFIG_HOME/particle-sandbox, else $HOME/.config/particle-sandbox,
/// else "" (no persistence). Does not create it.
std::string settings_dir();

}  // namespace ps
