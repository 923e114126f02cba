/// Colour maps for scalar fields (speed, J, stress, any per-particle column).
/// The same table feeds the GPU (a 1D texture) and the ImGui legend, so the
/// legend always matches the particles exactly.
#pragma once
#include <array>
#include "sim/core/names.h"

namespace ps {

/// IceWater: pale ice to deep water blue (the melt-fraction mode).
enum class Colormap : int { Viridis = 0, Inferno = 1, Turbo = 2, Coolwarm = 3, IceWater = 4 };
inline constexpr NameTable<Colormap, 5> kColormapNames{
    0, {"viridis", "inferno", "turbo", "cool-warm", "ice-water"}};
constexpr int kColormapCount = static_cast<int>(kColormapNames.size());
inline const char* colormap_name(Colormap c) { return kColormapNames(c); }

/// What the particles' colour shows (the View panel's "colour"). Temperature and MeltFraction:
/// heat and melting (render/feature_heat.cpp).
enum class ColorMode : int {
  Material = 0,
  Speed,
  Direction,
  VolumeRatio,
  Stress,
  Group,
  Scalar,
  PlasticStrain,
  Temperature,
  MeltFraction
};
/// The names a lesson file uses ("color": "direction").
inline constexpr NameTable<ColorMode, 10> kColorModeNames{
    0,
    {"material", "speed", "direction", "J", "stress", "group", "scalar", "plastic_strain",
     "temperature", "melt_fraction"}};
/// The window's labels (the View panel, the legend's title, the log's `color` lines).
inline constexpr NameTable<ColorMode, 10> kColorModeLabels{
    0,
    {"material", "speed", "velocity direction", "volume ratio J", "stress (von Mises)", "group",
     "scalar field", "plastic strain", "temperature", "melt fraction"}};
constexpr int kColorModeCount = static_cast<int>(kColorModeNames.size());
inline const char* color_mode_name(ColorMode m) { return kColorModeLabels(m); }

/// Colour (linear 0..1 RGB) of t in [0, 1] (clamped).
std::array<float, 3> colormap_rgb(Colormap c, float t);

/// Turbo's darkest tenth is left out: its own t = 0 is near black (35, 23, 27),
/// and a stopped block coloured by speed vanished into the dark background
/// (students thought it had gone). From t = 0.1 the slow end is a clear blue,
/// at least 3:1 against black (the non-text contrast of WCAG 2.1, 1.4.11).
inline constexpr float kTurboFloor = 0.1f;

/// Direction colouring: hue from the angle of (vx, vy) (east red, north
/// yellow-green, west cyan, south violet), full saturation, value 1.
std::array<float, 3> direction_rgb(float vx, float vy);

/// Distinct colours for group indices: the group palette (group_palette_rgb,
/// sim/sgf/sgf.h), cycling. The window's group table (render/cpu/group_table.h)
/// uses it for the scene's group numbers.
std::array<float, 3> group_rgb(unsigned group);

}  // namespace ps
