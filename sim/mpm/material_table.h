/// The material table: one row per material model with its name, reference,
/// default colour and parameter fields (key, range, slider, help). The scene
/// reader and writer (sim/scene) and the window's Materials panel read it,
/// so a new model is added by one row here plus its function in
/// sim/mpm/materials.h (docs/architecture.md, "Materials").
#pragma once
#include <string>
#include "sim/mpm/materials.h"

namespace ps {

/// One editable parameter of a material model.
struct MaterialField {
  const char* key;                ///< scene-file key ("E", "yield_stress")
  float MaterialParams::*member;  ///< where it lives in MaterialParams
  double min, max;                ///< accepted range in scene files and --set
  float ui_min, ui_max;           ///< slider range in the Materials panel
  bool log_slider;                ///< logarithmic slider
  const char* format;             ///< slider printf format
  const char* help;               ///< tooltip and docs/scene-format.md text
};

/// One material model.
struct MaterialKind {
  MaterialType type;
  const char* name;       ///< scene-file "type" value
  const char* summary;    ///< one line for the panel
  const char* reference;  ///< the published model it implements
  float color[3];         ///< default display colour
  const MaterialField* fields;
  int field_count;
  /// Particle resampling may merge and insert particles of this model
  /// (sim/mpm/resample.h): the elastic and viscoplastic solids, whose
  /// particles should stay a continuum until the material tears. Off for
  /// fluids and sand, whose particle spacing changes for real (splashing,
  /// dilatancy: refilling a settled sand pile kept it moving and multiplied
  /// its particles by 12, measured on sand_column); off for snow, whose
  /// fracture is particles drifting apart once the plasticity has yielded
  /// (refilling healed mpm99's broken snow into a denser lump); off for
  /// tracers (no stress, nothing to tear).
  bool resampled;
};

/// The heat fields every model has (conductivity, heat capacity, melting
/// point, latent heat; sim/mpm/heat.h). The melt material ("melts_into") is a
/// name, read beside them.
const MaterialField* thermal_fields();
int thermal_field_count();

/// Every model, indexed by MaterialType.
const MaterialKind* material_kinds();
inline const MaterialKind& material_kind(MaterialType t) {
  return material_kinds()[static_cast<int>(t)];
}
/// The model of a scene-file type name, or -1.
int find_material_kind(const std::string& name);
/// "tracer, fluid, jelly, snow, sand or viscoplastic" (error messages).
std::string material_kind_list();
/// The scene-file name of a type ("jelly").
inline const char* material_type_name(MaterialType t) {
  return static_cast<int>(t) < kMaterialTypeCount ? material_kind(t).name : "?";
}
}  // namespace ps
