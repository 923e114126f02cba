// The CUDA deterministic mode's fixed-point arithmetic (sim/mpm/mpm_fixed.h),
// checked on the host with the same functions the kernels call.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>
#include "sim/mpm/mpm_fixed.h"

using namespace ps;

TEST_CASE("Fixed-point node sums do not depend on the order of contributions", "[mpm][fixed]") {
  // One node's P2G contributions: weights w in (0, 1), particle masses around
  // mpm99's (dx^2 / 4 per particle), velocities up to 20 plus stress terms.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> w(0.f, 0.5625f), vel(-20.f, 20.f), jitter(0.5f, 1.f);
  const float m0 = 1.f / (128.f * 128.f) / 4.f;
  std::vector<float> dm, dp;
  for (int k = 0; k < 500; ++k) {
    const float m = m0 * jitter(rng);
    dm.push_back(w(rng) * m);
    dp.push_back(w(rng) * m * vel(rng));
  }
  const FixedScale fs = fixed_scale_for(m0);
  CHECK(fs.mass == std::ldexp(1.f, 40 - static_cast<int>(std::ceil(std::log2(m0)))));
  auto sum = [&](const std::vector<float>& v, float scale) {
    uint64_t s = 0;
    for (float x : v) s += to_fixed(x, scale);
    return s;
  };
  const uint64_t m_ref = sum(dm, fs.mass), p_ref = sum(dp, fs.momentum);
  // Float sums change with the order; the integer sums must not.
  bool float_order_mattered = false;
  float f_ref = 0.f;
  for (float x : dp) f_ref += x;
  for (int shuffle = 0; shuffle < 20; ++shuffle) {
    std::vector<size_t> order(dm.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<float> a, b;
    for (size_t i : order) {
      a.push_back(dm[i]);
      b.push_back(dp[i]);
    }
    CHECK(sum(a, fs.mass) == m_ref);
    CHECK(sum(b, fs.momentum) == p_ref);
    float f = 0.f;
    for (float x : b) f += x;
    if (f != f_ref) float_order_mattered = true;
  }
  CHECK(float_order_mattered);  // the reason the mode exists
  // The fixed-point sum is as accurate as the float sum (double reference).
  double m_exact = 0.0, p_exact = 0.0;
  for (float x : dm) m_exact += x;
  for (float x : dp) p_exact += x;
  CHECK(from_fixed(m_ref, fs.mass) == Approx(m_exact).epsilon(1e-6));
  CHECK(std::fabs(from_fixed(p_ref, fs.momentum) - p_exact) < 1e-6 * m0 * 20.f * 500.f);
}

TEST_CASE("Fixed-point conversion is exact for representable values and signed", "[mpm][fixed]") {
  const FixedScale fs = fixed_scale_for(1.f);
  CHECK(fs.mass == std::ldexp(1.f, 40));
  CHECK(fs.momentum == std::ldexp(1.f, 36));
  CHECK(from_fixed(to_fixed(0.75f, fs.mass), fs.mass) == 0.75f);
  CHECK(from_fixed(to_fixed(-3.5f, fs.momentum), fs.momentum) == -3.5f);
  // Two's complement: +x and -x cancel exactly in unsigned arithmetic.
  CHECK(to_fixed(1.25f, fs.momentum) + to_fixed(-1.25f, fs.momentum) == 0u);
  // Headroom: 10^4 particles of the heaviest mass at the default velocity
  // limit (1e4) still fit in a node's momentum.
  const double max_momentum = 1e4 * 1e4;
  CHECK(max_momentum * fs.momentum < std::ldexp(1.0, 63));
  // Degenerate inputs give unit scales, not NaN.
  CHECK(fixed_scale_for(0.f).mass == 1.f);
  CHECK(fixed_scale_for(NAN).momentum == 1.f);
}
