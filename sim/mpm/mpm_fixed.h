/// Fixed-point accumulation for the CUDA backend's deterministic mode: each
/// P2G contribution is rounded to a 64-bit integer before the scatter, so the
/// sum does not depend on the order the atomics land in (integer addition is
/// associative; float addition is not).
///
/// Scales are powers of two chosen from the heaviest particle m: mass
/// resolution m 2^-40, momentum resolution m 2^-36 (in mass x velocity
/// units). A node then overflows only past 2^22 heavy particles (mass) or
/// 2^26 particles at unit speed (momentum), far beyond any real stencil load;
/// the velocity limit's blow-up check stops a run long before. The fluids'
/// volume channel (mpm::volume_corrected_J) takes its own scale from the
/// largest rest volume V: resolution V 2^-40, as the mass's; a node
/// overflows past 2^22 V (a solid brings V det F Jp, its current volume,
/// which grows that far only in a run that has blown up long before).
#pragma once
#include <cmath>
#include <cstdint>
#include "sim/core/hd.h"

namespace ps {

struct FixedScale {
  float mass = 1.f;      ///< integer units per unit of mass
  float momentum = 1.f;  ///< integer units per unit of momentum
  float volume = 1.f;    ///< integer units per unit of volume (the volume channel)
};

/// Scales for particles no heavier than `max_mass` and of rest volume at
/// most `max_volume` (each > 0; else that one's unit scale).
inline FixedScale fixed_scale_for(float max_mass, float max_volume = 0.f) {
  FixedScale s;
  auto exponent = [](float v) {
    return static_cast<int>(std::ceil(std::log2(static_cast<double>(v))));
  };
  if (max_volume > 0.f && std::isfinite(max_volume))
    s.volume = std::ldexp(1.f, 40 - exponent(max_volume));
  if (!(max_mass > 0.f) || !std::isfinite(max_mass)) return s;
  const int e = exponent(max_mass);
  s.mass = std::ldexp(1.f, 40 - e);
  s.momentum = std::ldexp(1.f, 36 - e);
  return s;
}

/// v * scale rounded to the nearest integer (ties to even), as two's
/// complement bits so unsigned atomics add it.
PS_HD uint64_t to_fixed(float v, float scale) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__float2ll_rn(v * scale));
#else
  return static_cast<uint64_t>(std::llrint(v * scale));
#endif
}

/// Back to float: exact division by a power of two, one rounding to float.
PS_HD float from_fixed(uint64_t q, float scale) {
  return static_cast<float>(static_cast<double>(static_cast<int64_t>(q)) /
                            static_cast<double>(scale));
}

}  // namespace ps
