/// What the window shows of heat and melting (sim/mpm/heat.h),
/// GL-free so it is unit tested and a headless image writer can use it: the
/// melt-fraction and temperature colours, the temperature range, and the
/// energy balance of the heat ledger that the Heat panel prints.
///
/// Melt-fraction mode: a particle of a melting material (latent_heat > 0 and a
/// melts_into material) shows its melt fraction (0 ice .. 1 water); a particle
/// of a material that does not melt but is some material's melt target (the
/// water ice melts into) shows 1; every other particle is grey.
#pragma once
#include <array>
#include <cstdint>
#include <vector>
#include "render/cpu/colormap.h"
#include "sim/mpm/mpm_world.h"

namespace ps {

/// How the melt-fraction mode shows a material's particles.
enum class MeltRole : uint8_t {
  Melts = 0,   ///< melts: its particles' melt fraction
  Target = 1,  ///< does not melt, but a material melts into it: 1 (water)
  Inert = 2,   ///< neither: grey
};

/// A material melts when it has a latent heat and a material to melt into.
inline bool material_melts(const MaterialParams& m) {
  return m.latent_heat > 0.f && m.melts_into >= 0;
}

/// The role of every material (out[k] for materials[k]).
void melt_roles(const std::vector<MaterialParams>& materials, std::vector<MeltRole>& out);

/// The value the melt-fraction mode shows: the melt fraction clamped to
/// [0, 1] (Melts), 1 (Target), NaN (Inert: drawn grey).
float melt_display_value(MeltRole role, float melt);

/// Grey of the particles that take no part in melting.
constexpr std::array<float, 3> kNoMeltGrey{0.42f, 0.43f, 0.46f};

/// Colour of a melt-fraction display value: the map at v, grey for NaN.
std::array<float, 3> melt_rgb(Colormap c, float v);

/// Colour of temperature t (deg C) on the map over [lo, hi].
std::array<float, 3> temperature_rgb(Colormap c, float t, float lo, float hi);

/// The particles' lowest and highest temperature (0, 0 when there are none).
void temperature_range(const MpmParticles& p, float& lo, float& hi);

enum class HeatColor : uint8_t { Temperature = 0, MeltFraction = 1 };

/// Per-particle colours of a heat colour mode (row i for particle i). The
/// temperature map spans [lo, hi] deg C; pass lo >= hi for the particles'
/// own min / max. The melt-fraction map spans 0..1 whatever lo and hi.
void heat_particle_rgb(const MpmParticles& p, const std::vector<MaterialParams>& materials,
                       HeatColor mode, Colormap c, float lo, float hi,
                       std::vector<std::array<float, 3>>& out);

/// The heat ledger's balance (J per unit depth): what came in from walls
/// (and plates), air and lamps against the change of the heat content.
struct HeatBalance {
  double initial = 0.0;   ///< heat content before the first pass (now, when none ran)
  double now = 0.0;       ///< heat content now (sensible + latent)
  double inflow = 0.0;    ///< walls + air + lamps
  double drift = 0.0;     ///< now - initial - inflow: what the passes created or lost
  double relative = 0.0;  ///< |drift| / max(|inflow|, |now - initial|), 0 when both vanish
};
HeatBalance heat_balance(const HeatLedger& ledger, const HeatTotals& totals);

}  // namespace ps
