// Helpers shared by the MPM tests: build worlds from inline JSON scenes.
#pragma once
#include <string>
#include "sim/scene/scene.h"

namespace ps::test {

inline MpmScene scene_from(const std::string& json, const std::string& name = "inline.json") {
  return build_mpm_scene(Json::parse(json, name), name);
}

/// The lecture's pic_vs_apic block with a transfer scheme and preset.
inline MpmScene teaching_block(const char* transfer, const char* preset, const char* extra_solver = "") {
  std::string s = std::string(R"({
    "domain": {"size": [1, 1], "grid": 32},
    "solver": {"transfer": ")") + transfer + R"(", "dt": 0.0005, "boundary": "sticky", "gravity": [0, 0])" +
                  extra_solver + R"(},
    "materials": {"t": {"type": "tracer"}},
    "bodies": [{"shape": "box", "min": [0.2, 0.2], "max": [0.8, 0.8], "material": "t",
                "spacing": 0.0078125, "preset": ")" + preset + R"("}]
  })";
  return scene_from(s);
}

/// Mass and momentum on the backend's grid after its last substep.
struct GridTotals {
  double mass = 0, px = 0, py = 0;
};
inline GridTotals grid_totals(MpmWorld& w) {
  GridSpec g;
  std::vector<float> m;
  std::vector<Vec2> v;
  w.backend().read_grid(g, m, v);
  GridTotals t;
  for (size_t i = 0; i < m.size(); ++i) {
    t.mass += m[i];
    t.px += static_cast<double>(m[i]) * v[i].x;
    t.py += static_cast<double>(m[i]) * v[i].y;
  }
  return t;
}

}  // namespace ps::test
