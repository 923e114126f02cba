#include "render/cpu/colormap.h"

#include "sim/sgf/sgf.h"

#include <algorithm>
#include <cmath>

namespace ps {

namespace {

// Samples at t = 0, 0.1, ..., 1 of matplotlib's viridis and inferno (van der
// Walt & Smith), and Moreland's cool-warm diverging map at 0, 0.25, ..., 1.
const float kViridis[11][3] = {{0.267004f, 0.004874f, 0.329415f}, {0.282623f, 0.140926f, 0.457517f},
                               {0.253935f, 0.265254f, 0.529983f}, {0.206756f, 0.371758f, 0.553117f},
                               {0.163625f, 0.471133f, 0.558148f}, {0.127568f, 0.566949f, 0.550556f},
                               {0.134692f, 0.658636f, 0.517649f}, {0.266941f, 0.748751f, 0.440573f},
                               {0.477504f, 0.821444f, 0.318195f}, {0.741388f, 0.873449f, 0.149561f},
                               {0.993248f, 0.906157f, 0.143936f}};
const float kInferno[11][3] = {{0.001462f, 0.000466f, 0.013866f}, {0.087411f, 0.044556f, 0.224813f},
                               {0.258234f, 0.038571f, 0.406485f}, {0.416331f, 0.090834f, 0.432943f},
                               {0.578304f, 0.148039f, 0.404411f}, {0.735683f, 0.215906f, 0.330245f},
                               {0.865006f, 0.316822f, 0.226055f}, {0.954506f, 0.468744f, 0.099874f},
                               {0.987622f, 0.645320f, 0.039886f}, {0.964394f, 0.843848f, 0.273391f},
                               {0.988362f, 0.998364f, 0.644924f}};
const float kCoolwarm[5][3] = {{0.230f, 0.299f, 0.754f},
                               {0.552f, 0.690f, 0.996f},
                               {0.865f, 0.865f, 0.865f},
                               {0.956f, 0.603f, 0.486f},
                               {0.706f, 0.016f, 0.150f}};

// Melt fraction: ice (0, near white with a blue tint, as ice_cube's ice) to
// water (1, the blue of its water); monotonic in lightness.
const float kIceWater[5][3] = {{0.930f, 0.965f, 1.000f},
                               {0.720f, 0.855f, 0.985f},
                               {0.470f, 0.700f, 0.950f},
                               {0.250f, 0.510f, 0.900f},
                               {0.090f, 0.320f, 0.800f}};

std::array<float, 3> lerp_table(const float (*tab)[3], int n, float t) {
  float u = t * static_cast<float>(n - 1);
  int i = std::min(static_cast<int>(u), n - 2);
  float f = u - static_cast<float>(i);
  return {tab[i][0] + f * (tab[i + 1][0] - tab[i][0]), tab[i][1] + f * (tab[i + 1][1] - tab[i][1]),
          tab[i][2] + f * (tab[i + 1][2] - tab[i][2])};
}

// Turbo (Mikhailov 2019), degree-5 polynomial fit.
std::array<float, 3> turbo(float x) {
  auto poly = [x](float a0, float a1, float a2, float a3, float a4, float a5) {
    return std::clamp(a0 + x * (a1 + x * (a2 + x * (a3 + x * (a4 + x * a5)))), 0.f, 1.f);
  };
  return {
      poly(0.13572138f, 4.61539260f, -42.66032258f, 132.13108234f, -152.94239396f, 59.28637943f),
      poly(0.09140261f, 2.19418839f, 4.84296658f, -14.18503333f, 4.27729857f, 2.82956604f),
      poly(0.10667330f, 12.64194608f, -60.58204836f, 110.36276771f, -89.90310912f, 27.34824973f)};
}

}  // namespace

std::array<float, 3> colormap_rgb(Colormap c, float t) {
  if (!(t >= 0.f)) t = 0.f;  // also catches NaN
  if (t > 1.f) t = 1.f;
  switch (c) {
    case Colormap::Inferno: return lerp_table(kInferno, 11, t);
    case Colormap::Turbo: return turbo(kTurboFloor + (1.f - kTurboFloor) * t);
    case Colormap::Coolwarm: return lerp_table(kCoolwarm, 5, t);
    case Colormap::IceWater: return lerp_table(kIceWater, 5, t);
    case Colormap::Viridis:
    default: return lerp_table(kViridis, 11, t);
  }
}

std::array<float, 3> direction_rgb(float vx, float vy) {
  // HSV with h = angle / 2pi, s = v = 1 (the shader does the same).
  float h = std::atan2(vy, vx) / 6.2831853f;
  if (h < 0.f) h += 1.f;
  float r = std::clamp(std::fabs(h * 6.f - 3.f) - 1.f, 0.f, 1.f);
  float g = std::clamp(2.f - std::fabs(h * 6.f - 2.f), 0.f, 1.f);
  float b = std::clamp(2.f - std::fabs(h * 6.f - 4.f), 0.f, 1.f);
  return {r, g, b};
}

std::array<float, 3> group_rgb(unsigned group) { return group_palette_rgb(group); }

}  // namespace ps
