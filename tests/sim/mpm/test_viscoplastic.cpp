// The von Mises viscoplastic material and the material table:
// return map on / inside the yield surface, the eta limits, stress = dW/dF,
// the uniaxial plateau, and every model's fields through the scene file.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include "mpm_test_util.h"
#include "sim/mpm/material_table.h"
#include "sim/verify/material_point.h"

using namespace ps;

namespace {

MaterialParams vp(float eta, float yield = 50.f) {
  MaterialParams m;
  m.type = MaterialType::Viscoplastic;
  m.kappa = 1e4f;
  m.mu = 2e3f;
  m.yield_stress = yield;
  m.eta = eta;
  return m;
}

/// |dev tau| (Frobenius) of a 2D Kirchhoff stress.
double dev_norm(const Mat2& t) {
  const double p = 0.5 * (t.a00 + t.a11);
  const double a = t.a00 - p, d = t.a11 - p;
  return std::sqrt(a * a + d * d + double(t.a01) * t.a01 + double(t.a10) * t.a10);
}

/// A random deformation: rotation * diag(stretches) * rotation.
Mat2 random_F(std::mt19937& rng, float spread) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto rot = [](float a) { return Mat2{std::cos(a), -std::sin(a), std::sin(a), std::cos(a)}; };
  const float s1 = std::exp(spread * u(rng)), s2 = std::exp(spread * u(rng));
  return rot(3.f * u(rng)) * Mat2::diag(s1, s2) * rot(3.f * u(rng));
}

}  // namespace

TEST_CASE("Viscoplastic return map (eta = 0) lands on the yield surface and keeps the volume",
          "[mpm][viscoplastic]") {
  std::mt19937 rng(7);
  const MaterialParams m = vp(0.f);
  const double k = std::sqrt(2.0 / 3.0) * m.yield_stress;
  int yielded = 0;
  for (int n = 0; n < 2000; ++n) {
    Mat2 F = random_F(rng, 0.1f);
    const float J0 = det(F);
    float Jp = 1.f;
    const Mat2 tau = mpm::constitutive(m, F, 1.f, Jp, Mat2{}, 1e-4f);
    const double s = dev_norm(tau);
    INFO("sample " << n << " s = " << s << " k = " << k);
    CHECK(s <= k * (1 + 1e-4));
    CHECK(det(F) == Approx(J0).epsilon(1e-5));  // det Fp = 1: plastic flow is isochoric
    if (Jp > 1.f) {
      ++yielded;
      CHECK(s == Approx(k).epsilon(1e-4));
    }
  }
  CHECK(yielded > 500);  // the samples do load beyond yield
}

TEST_CASE(
    "Viscoplastic: below yield nothing flows, eta -> infinity is elastic, finite eta relaxes by the closed form",
    "[mpm][viscoplastic]") {
  std::mt19937 rng(11);
  const double k = std::sqrt(2.0 / 3.0) * 50.0;
  const float dt = 1e-4f;
  for (int n = 0; n < 500; ++n) {
    const Mat2 F0 = random_F(rng, 0.1f);
    // The trial state: the same F with no yield limit.
    MaterialParams elastic = vp(0.f, 1e12f);
    Mat2 Fe = F0;
    float Jpe = 1.f;
    const double s_trial = dev_norm(mpm::constitutive(elastic, Fe, 1.f, Jpe, Mat2{}, dt));
    CHECK(Jpe == 1.f);
    // eta = 1e9: 2 mu_bar dt / eta ~ 4e-13, the trial state is kept.
    Mat2 Fi = F0;
    float Jpi = 1.f;
    const double s_inf = dev_norm(mpm::constitutive(vp(1e9f), Fi, 1.f, Jpi, Mat2{}, dt));
    CHECK(s_inf == Approx(s_trial).epsilon(1e-4));
    // eta = 0.2: s - k = (s_trial - k) / (1 + 2 mu_bar dt / eta), mu_bar = mu cosh(2 eps).
    Mat2 U, V;
    Vec2 sig;
    svd2(F0, U, sig, V);
    const double eps = 0.5 * (std::log(std::fabs(sig.x)) - std::log(std::fabs(sig.y)));
    const double mu_bar = 2e3 * std::cosh(2 * eps);
    Mat2 Fv = F0;
    float Jpv = 1.f;
    const double s_v = dev_norm(mpm::constitutive(vp(0.2f), Fv, 1.f, Jpv, Mat2{}, dt));
    const double expect = s_trial > k ? k + (s_trial - k) / (1 + 2 * mu_bar * dt / 0.2) : s_trial;
    INFO("s_trial " << s_trial);
    CHECK(s_v == Approx(expect).epsilon(2e-4));
    if (s_trial <= k) {
      Mat2 Fb = F0;
      float Jpb = 1.f;
      mpm::constitutive(vp(0.f), Fb, 1.f, Jpb, Mat2{}, dt);
      CHECK((Fb.a00 == F0.a00 && Fb.a01 == F0.a01 && Fb.a10 == F0.a10 && Fb.a11 == F0.a11));
      CHECK(Jpb == 1.f);
    }
  }
}

TEST_CASE("Viscoplastic stress is the derivative of its energy: tau = dW/dF F^T",
          "[mpm][viscoplastic]") {
  std::mt19937 rng(3);
  const MaterialParams m = vp(0.f, 1e12f);  // elastic: no projection
  for (int n = 0; n < 50; ++n) {
    const Mat2 F = random_F(rng, 0.15f);
    Mat2 Fc = F;
    float Jp = 1.f;
    const Mat2 tau = mpm::constitutive(m, Fc, 1.f, Jp, Mat2{}, 0.f);
    // P = dW/dF by central differences, tau = P F^T.
    const float h = 1e-3f;
    Mat2 P;
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) {
        Mat2 a = F, b = F;
        float* pa = r == 0 ? (c == 0 ? &a.a00 : &a.a01) : (c == 0 ? &a.a10 : &a.a11);
        float* pb = r == 0 ? (c == 0 ? &b.a00 : &b.a01) : (c == 0 ? &b.a10 : &b.a11);
        *pa += h;
        *pb -= h;
        const double d =
            (mpm::energy_density(m, a, 1.f, 1.f) - mpm::energy_density(m, b, 1.f, 1.f)) / (2.0 * h);
        (r == 0 ? (c == 0 ? P.a00 : P.a01) : (c == 0 ? P.a10 : P.a11)) = static_cast<float>(d);
      }
    const Mat2 num = P * transpose(F);
    const double scale = std::sqrt(frobenius2(tau)) + 1.0;
    CHECK(std::sqrt(frobenius2(num - tau)) / scale < 2e-2);
  }
}

TEST_CASE("Viscoplastic uniaxial tension: plateau at 2 tau_Y / sqrt(3) plus 2 eta rate",
          "[mpm][viscoplastic]") {
  for (float eta : {0.f, 1.f}) {
    const verify::UniaxialCurve c = verify::uniaxial_tension(vp(eta), 1.0, 1e-4, 0.2);
    const double plateau = 2.0 * 50.0 / std::sqrt(3.0) + 2.0 * eta * 1.0;
    INFO("eta " << eta);
    CHECK(c.stress.back() == Approx(plateau).epsilon(5e-3));
    // Before yield the curve is elastic and below the plateau.
    CHECK(c.stress.front() < plateau);
    // The plastic strain grows with the pull: most of 0.2 is plastic.
    CHECK(c.plastic.back() > 0.8 * 2.0 / std::sqrt(3.0) * 0.15);
  }
}

TEST_CASE("Material table: every model's fields are read from and written to the scene file",
          "[mpm][materials]") {
  for (int t = 0; t < kMaterialTypeCount; ++t) {
    const MaterialKind& kind = material_kinds()[t];
    REQUIRE(static_cast<int>(kind.type) == t);
    REQUIRE(find_material_kind(kind.name) == t);
    // A value inside each field's range, distinct from the default.
    std::string fields;
    for (int f = 0; f < kind.field_count; ++f) {
      const MaterialField& fd = kind.fields[f];
      const double v = fd.min + 0.37 * (std::min(fd.max, fd.min + 10.0) - fd.min);
      fields += std::string(", \"") + fd.key + "\": " + std::to_string(v);
    }
    const std::string doc = std::string(R"({"domain": {"size": [1, 1], "grid": 16},
      "materials": {"m": {"type": ")") +
                            kind.name + "\"" + fields + R"(}},
      "bodies": [{"shape": "box", "min": [0.4, 0.4], "max": [0.5, 0.5], "material": "m"}]})";
    MpmScene s = test::scene_from(doc);
    const MaterialParams& m = s.world->materials[0];
    CHECK(m.type == kind.type);
    for (int f = 0; f < kind.field_count; ++f) {
      const MaterialField& fd = kind.fields[f];
      const double v = fd.min + 0.37 * (std::min(fd.max, fd.min + 10.0) - fd.min);
      INFO(kind.name << "." << fd.key);
      CHECK(m.*fd.member == Approx(v).epsilon(1e-6));
    }
    // Edit every field in the world, write, read back.
    MaterialParams& w = s.world->materials[0];
    for (int f = 0; f < kind.field_count; ++f)
      w.*kind.fields[f].member = static_cast<float>(
          kind.fields[f].min +
          0.25 * (std::min(kind.fields[f].max, kind.fields[f].min + 1.0) - kind.fields[f].min));
    MpmScene back = test::scene_from(mpm_scene_to_json(s).dump());
    for (int f = 0; f < kind.field_count; ++f) {
      INFO(kind.name << "." << kind.fields[f].key << " after a save");
      CHECK(back.world->materials[0].*kind.fields[f].member == w.*kind.fields[f].member);
    }
  }
  // An unknown type names every model.
  try {
    test::scene_from(
        R"({"domain": {"size": [1, 1], "grid": 16}, "materials": {"m": {"type": "toffee"}}, "bodies": []})");
    FAIL("accepted an unknown material type");
  } catch (const InputError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("viscoplastic") != std::string::npos);
  }
}
