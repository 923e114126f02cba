/// The window's rigid-body state (internal to render/): the
/// selected body, the Body tool's drag, the panel's edits (applied to the
/// Box2D world at App::sync, like the MPM parameters), the overlay toggles
/// and storage the drawing reuses every frame. Used by panel_rigid.cpp.
#pragma once
#include <optional>
#include <string>
#include <vector>
#include "render/cpu/body_tool.h"
#include "sim/rigid/rigid_world.h"

namespace ps {

struct RigidUi {
  int selected = -1;          ///< body index (the ID shown is index + 1), -1: none
  bool grabbing = false;      ///< the mouse joint holds `selected`
  bool show_contacts = true;  ///< body-body contact points and their normal impulses
  bool show_forces = true;    ///< the matter's force on each body (and its weight, for comparison)
  // The Body tool's drag.
  bool drawing = false;
  BodyDraft draft;
  // Applied at the sync point.
  struct Edit {
    int body = -1;
    int field = 0;  ///< 0 density, 1 friction, 2 restitution
    double value = 0.0;
  };
  std::vector<Edit> edits;
  std::optional<rigid::BodyDef> add;
  // Scale of the force arrows: the heaviest weight (or the largest force seen, without dynamic bodies).
  double force_ref = 0.0;
  // Reused every frame.
  std::vector<rigid::WorldPart> parts;
  std::vector<Vec2> poly;
  std::vector<rigid::BodyContact> contacts;
  size_t drawn_bodies = 0, drawn_contacts = 0;
};

}  // namespace ps
