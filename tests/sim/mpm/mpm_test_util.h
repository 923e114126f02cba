// Helpers shared by the MPM tests: build worlds from inline JSON scenes.
#pragma once
#include <string>
#include "sim/mpm/mpm_collider.h"
#include "sim/scene/scene.h"

namespace ps::test {

inline MpmScene scene_from(const std::string& json, const std::string& name = "inline.json") {
  return build_mpm_scene(Json::parse(json, name), name);
}

/// Two rigid parts for a block of matter in 0.3..0.6 x 0.1..0.4 of a unit
/// domain: a static box (0.2..0.8 x 0.2..0.3, friction 0.4, body 0) and a
/// disk over the block's top right corner, moving and spinning (friction
/// 0.2, body 1).
inline void box_and_disk(RigidCollider& box, RigidCollider& disk) {
  box = RigidCollider{};
  box.shape = ColliderShape::Polygon;
  box.count = 4;
  box.v[0] = {0.20f, 0.20f};
  box.v[1] = {0.80f, 0.20f};
  box.v[2] = {0.80f, 0.30f};
  box.v[3] = {0.20f, 0.30f};
  box.lo = {0.20f, 0.20f};
  box.hi = {0.80f, 0.30f};
  box.c = {0.5f, 0.25f};
  box.friction = 0.4f;
  box.body = 0;
  disk = RigidCollider{};
  disk.shape = ColliderShape::Disk;
  disk.v[0] = {0.62f, 0.42f};
  disk.radius = 0.07f;
  disk.lo = {0.55f, 0.35f};
  disk.hi = {0.69f, 0.49f};
  disk.c = {0.62f, 0.42f};
  disk.vel = {-0.8f, 0.2f};
  disk.omega = 5.f;
  disk.friction = 0.2f;
  disk.body = 1;
}

/// The lecture's pic_vs_apic block with a transfer scheme and preset.
inline MpmScene teaching_block(const char* transfer, const char* preset,
                               const char* extra_solver = "") {
  std::string s = std::string(R"({
    "domain": {"size": [1, 1], "grid": 32},
    "solver": {"transfer": ")") +
                  transfer + R"(", "dt": 0.0005, "boundary": "sticky", "gravity": [0, 0])" +
                  extra_solver + R"(},
    "materials": {"t": {"type": "tracer"}},
    "bodies": [{"shape": "box", "min": [0.2, 0.2], "max": [0.8, 0.8], "material": "t",
                "spacing": 0.0078125, "preset": ")" +
                  preset + R"("}]
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
