/// The window's mouse tools, GL-free: what a left-drag does to the world.
///   pick     select the particle under the cursor (the Inspector shows it)
///   grab     particles within the radius follow the cursor (MpmWorld::grab_*)
///   attract  a point force pulling towards the cursor (mpm128's attractor)
///   repel    the same force pushing away
///   paint    emit particles of a chosen material along the mouse path
///   select   click / box / lasso particles for SGF groups (render/cpu/selection.h)
///   body     draw a rigid box (drag corner to corner) or disk (drag centre to
///            rim) that joins the scene as a Box2D body
///   heat     a heat lamp (negative power: a cold spot) under the cursor while
///            the button is held: MpmWorld::heat_tool (sim/mpm/heat.h)
#pragma once
#include <cstdint>
#include <unordered_set>
#include <vector>
#include "sim/core/names.h"
#include "sim/mpm/mpm_world.h"
#include "sim/scene/simulation.h"

namespace ps {

enum class Tool : uint8_t {
  Pick = 0,
  Grab = 1,
  Attract = 2,
  Repel = 3,
  Paint = 4,
  Select = 5,
  Heat = 6,
  Body = 7
};
inline constexpr NameTable<Tool, 8> kToolNames{
    0, {"pick", "grab", "attract", "repel", "paint", "select", "heat", "body"}};
constexpr int kToolCount = static_cast<int>(kToolNames.size());
inline const char* tool_name(Tool t) { return kToolNames(t); }

struct ToolSettings {
  Tool tool = Tool::Grab;
  float radius = 0.06f;           ///< brush radius, world units
  float force = 60.f;             ///< attract / repel acceleration at the centre
  float grab_stiffness = 4000.f;  ///< grab spring stiffness (1/s^2)
  int paint_material = 0;         ///< index into the material table
  float paint_spacing = 0.f;      ///< particle spacing; 0 = half a grid cell
  Vec2 paint_velocity{0.f, 0.f};  ///< initial velocity of painted particles
  float heat_power = 200.f;       ///< heat lamp power, W per unit depth (negative: cooling)
  int body_shape = 0;             ///< body tool: 0 box, 1 disk
  float body_density = 500.f;     ///< kg/m^3 (water is 1000)
  float body_friction = 0.5f;
  float body_restitution = 0.1f;
};

/// Heat lamp power slider range, W per unit depth (either sign).
constexpr float kHeatPowerMax = 1e5f;

/// The point force of the attract / repel tools at `pos` (inactive for other tools).
PointForce tool_point_force(const ToolSettings& s, Vec2 pos, bool pressed);

/// The heat tool's lamps at `pos`: one lamp of the brush radius and
/// heat_power while `pressed` with the heat tool, none otherwise (the window
/// writes them to MpmWorld::heat_tool every frame).
void tool_heat_lamps(const ToolSettings& s, Vec2 pos, bool pressed, std::vector<HeatLamp>& out);

/// Paint: samples a lattice of spacing h (aligned to the world origin) inside
/// the disc of radius r swept along the mouse path (a chain of capsules). Each lattice site is emitted at most
/// once per stroke, never on a site an existing particle already occupies, and
/// only inside [lo, hi] (the domain minus its boundary layer).
class PaintStroke {
 public:
  /// Starts a stroke; `existing` marks occupied sites (may be null).
  void begin(Vec2 p, float spacing, float radius, Vec2 lo, Vec2 hi, const ParticleTable* existing,
             std::vector<Vec2>& out);
  /// Sweeps the disc from the previous point to `p`; appends new sites to `out`.
  void extend(Vec2 p, std::vector<Vec2>& out);
  void end() { active_ = false; }
  bool active() const { return active_; }
  float spacing() const { return h_; }
  size_t emitted() const { return emitted_; }

 private:
  uint64_t key(int64_t i, int64_t j) const;
  void sweep(Vec2 a, Vec2 b, std::vector<Vec2>& out);
  bool active_ = false;
  float h_ = 0.01f, r_ = 0.05f;
  Vec2 lo_, hi_, last_;
  size_t emitted_ = 0;
  std::unordered_set<uint64_t> used_;
};

/// Default paint spacing: half a grid cell (the built-in scenes' spacing).
float default_paint_spacing(const MpmWorld& w);

/// Appends particles at `sites` with material `material`, spacing h (mass =
/// density h^2, rest area h^2), velocity `v` and group `group`, then tells the
/// backend (host_changed). Returns the number added.
size_t add_painted_particles(MpmWorld& w, const std::vector<Vec2>& sites, int material, float h,
                             Vec2 v, uint16_t group);

/// Interior of the domain (inside the sticky/slip boundary layer) where painting is allowed.
void paintable_region(const MpmWorld& w, Vec2& lo, Vec2& hi);

}  // namespace ps
