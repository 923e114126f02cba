// Colour maps and the settings file (render/cpu/colormap.*, settings.*).
#include <unistd.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include <cstdlib>
#include <filesystem>

#include "render/cpu/colormap.h"
#include "render/cpu/particle_fields.h"
#include "render/cpu/settings.h"

using namespace ps;

TEST_CASE("colour maps hit their end points and clamp", "[render]") {
  auto v0 = colormap_rgb(Colormap::Viridis, 0.f), v1 = colormap_rgb(Colormap::Viridis, 1.f);
  CHECK(v0[0] == Approx(0.267004f));
  CHECK(v1[1] == Approx(0.906157f));
  CHECK(colormap_rgb(Colormap::Viridis, -3.f) == v0);
  CHECK(colormap_rgb(Colormap::Viridis, 7.f) == v1);
  CHECK(colormap_rgb(Colormap::Inferno, std::nanf("")) == colormap_rgb(Colormap::Inferno, 0.f));
  // Cool-warm is neutral grey in the middle (J = 1 shows no colour).
  auto mid = colormap_rgb(Colormap::Coolwarm, 0.5f);
  CHECK(mid[0] == Approx(mid[2]));
  for (int c = 0; c < kColormapCount; ++c)
    for (float t = 0.f; t <= 1.f; t += 0.05f)
      for (float x : colormap_rgb(static_cast<Colormap>(c), t)) {
        CHECK(x >= 0.f);
        CHECK(x <= 1.f);
      }
}

TEST_CASE("The slow end of turbo stays visible on the dark and the projector's black background",
          "[render]") {
  // WCAG 2.1 relative luminance of an sRGB colour and the contrast ratio of two.
  auto lum = [](std::array<float, 3> c) {
    auto ch = [](float v) {
      return v <= 0.03928f ? v / 12.92f : std::pow((v + 0.055f) / 1.055f, 2.4f);
    };
    return 0.2126f * ch(c[0]) + 0.7152f * ch(c[1]) + 0.0722f * ch(c[2]);
  };
  auto contrast = [&](std::array<float, 3> a, std::array<float, 3> b) {
    const float la = lum(a), lb = lum(b);
    return (std::max(la, lb) + 0.05f) / (std::min(la, lb) + 0.05f);
  };
  const std::array<float, 3> window_bg{0.043f, 0.047f, 0.059f}, projector_bg{0.f, 0.f, 0.f};
  const auto slow = colormap_rgb(Colormap::Turbo, 0.f);
  INFO("turbo at 0: " << slow[0] << " " << slow[1] << " " << slow[2]);
  CHECK(contrast(slow, projector_bg) >= 3.f);
  CHECK(contrast(slow, window_bg) >= 3.f);
  CHECK(slow[2] > slow[0]);  // still the blue end
  // The fast end is Turbo's own.
  const auto fast = colormap_rgb(Colormap::Turbo, 1.f);
  CHECK(fast[0] > 0.4f);
  CHECK(fast[2] < 0.1f);
}

TEST_CASE("direction colours follow the angle", "[render]") {
  auto east = direction_rgb(1.f, 0.f), west = direction_rgb(-1.f, 0.f);
  CHECK(east[0] == Approx(1.f));
  CHECK(east[2] == Approx(0.f).margin(1e-5));
  CHECK(west[0] == Approx(0.f).margin(1e-5));
  CHECK(west[2] == Approx(1.f));
  CHECK(direction_rgb(2.f, 2.f) == direction_rgb(0.5f, 0.5f));  // magnitude does not matter
}

TEST_CASE("value_range ignores non-finite values", "[render]") {
  float lo, hi;
  value_range({3.f, -1.f, std::nanf(""), 1e38f * 10.f, 2.f}, lo, hi);
  CHECK(lo == -1.f);
  CHECK(hi == 3.f);
  value_range({}, lo, hi);
  CHECK(lo == 0.f);
  CHECK(hi == 0.f);
}

TEST_CASE("robust_range drops the extreme tails", "[render]") {
  std::vector<float> v, scratch;
  for (int i = 0; i <= 1000; ++i) v.push_back(static_cast<float>(i));
  v.push_back(1e6f);  // one splashing particle
  v.push_back(std::nanf(""));
  float lo, hi;
  robust_range(v, 0.01f, scratch, lo, hi);
  CHECK(lo == 10.f);
  CHECK(hi == 991.f);
  robust_range(v, 0.f, scratch, lo, hi);
  CHECK(lo == 0.f);
  CHECK(hi == 1e6f);
  robust_range({}, 0.01f, scratch, lo, hi);
  CHECK(hi == 0.f);
}

TEST_CASE("settings file round trip, ranges and the config folder", "[render]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("ps_settings_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string path = (dir / "sub" / "settings.ini").string();
  SettingsFile a;
  a.set_int("tool", 3);
  a.set_float("tool.radius", 0.0625f);
  a.set_bool("view.grid", true);
  a.set("output.folder", "my captures");
  REQUIRE(a.save(path));
  SettingsFile b;
  REQUIRE(b.load(path));
  CHECK(b.get_int("tool", 0, 0, 4) == 3);
  CHECK(b.get_int("tool", 1, 0, 2) == 1);  // out of range: default
  CHECK(b.get_float("tool.radius", 0.f, 0.f, 1.f) == 0.0625f);
  CHECK(b.get_bool("view.grid", false));
  CHECK(b.get("output.folder", "") == "my captures");
  CHECK(b.get("missing", "dflt") == "dflt");
  CHECK_FALSE(SettingsFile().load((dir / "nope.ini").string()));

  const char* old = std::getenv("XDG_CONFIG_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CONFIG_HOME", dir.c_str(), 1);
  CHECK(settings_dir() == (dir / "particle-sandbox").string());
  if (old)
    setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CONFIG_HOME");
  fs::remove_all(dir);
}
