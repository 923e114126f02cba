#include <catch2/catch.hpp>
#include <random>
#include "sim/core/vec.h"

using namespace ps;

TEST_CASE("svd2 reconstructs F with proper rotations", "[core]") {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int k = 0; k < 20000; ++k) {
    Mat2 F{1.f + 0.5f * u(gen), 0.5f * u(gen), 0.5f * u(gen), 1.f + 0.5f * u(gen)};
    Mat2 U, V;
    Vec2 s;
    svd2(F, U, s, V);
    Mat2 R = U * Mat2::diag(s.x, s.y) * transpose(V);
    REQUIRE(frobenius2(R - F) < 1e-10f);
    REQUIRE(det(U) == Approx(1.f).margin(1e-5));
    REQUIRE(det(V) == Approx(1.f).margin(1e-5));
    REQUIRE(s.x >= s.y);
  }
  // A pure shear: the reconstruction keeps the off-diagonal where it was.
  Mat2 F{1.f, 0.001f, 0.f, 1.f}, U, V;
  Vec2 s;
  svd2(F, U, s, V);
  Mat2 R = U * Mat2::diag(s.x, s.y) * transpose(V);
  CHECK(R.a01 == Approx(0.001f).margin(1e-6));
  CHECK(R.a10 == Approx(0.f).margin(1e-6));
}

TEST_CASE("polar2 gives a rotation and a symmetric factor", "[core]") {
  Mat2 F{0.8f, -0.6f, 0.9f, 1.1f}, R, S;
  polar2(F, R, S);
  CHECK(det(R) == Approx(1.f));
  CHECK(S.a01 == Approx(S.a10).margin(1e-6));
  Mat2 back = R * S;
  CHECK(frobenius2(back - F) < 1e-10f);
}
