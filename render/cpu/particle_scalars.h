/// The scalar fields the colour modes show for an MPM particle (volume ratio,
/// Cauchy stress, pressure, von Mises stress), written once for the host
/// snapshot (particle_fields.cpp) and the CUDA-GL interop kernel
/// (render/cuda/particle_interop.cu), as sim/mpm/mpm_kernels.h is for the
/// steppers. Everything is evaluated on copies: nothing is changed.
#pragma once
#include "sim/core/hd.h"
#include "sim/mpm/mpm_kernels.h"

namespace ps {

/// The "J" column: fluids track J directly; solids through det F (as the
/// runner's dumps).
PS_HD float display_volume_ratio(const MaterialParams& m, const Mat2& F, float J) {
  return m.type == MaterialType::Fluid ? J : det(F);
}

/// Cauchy stress sigma = tau / J from the material's constitutive model (the
/// kernels' `constitutive`, applied to copies of F and Jp; J is det of the
/// projected F for solids). Zero where J is degenerate.
PS_HD Mat2 display_cauchy_stress(const MaterialParams& m, Mat2 F, float J, float Jp,
                                 const Mat2& C) {
  const Mat2 tau = mpm::constitutive(m, F, J, Jp, C, 0.f);
  const float Jd = m.type == MaterialType::Fluid ? J : det(F);
  if (!(fabsf(Jd) > 1e-6f)) return Mat2{};
  return (1.f / Jd) * tau;
}

/// The "plastic strain" colour mode: the
/// equivalent plastic strain of a viscoplastic particle (Jp - 1), |ln Jp|
/// for snow and sand (their plastic volume change); 0 otherwise.
PS_HD float display_plastic_strain(const MaterialParams& m, float Jp) {
  switch (m.type) {
    case MaterialType::Viscoplastic: return Jp - 1.f;
    case MaterialType::Snow:
    case MaterialType::Sand: return fabsf(logf(fmaxf(Jp, 1e-6f)));
    default: return 0.f;
  }
}

/// 2D pressure p = -tr(sigma)/2 and the von Mises stress of the in-plane
/// deviator s' = sigma + p I: sqrt(3/2 s':s').
PS_HD void display_pressure_mises(const Mat2& sigma, float& pressure, float& mises) {
  pressure = -0.5f * trace(sigma);
  const Mat2 dev = sigma + Mat2::diag(pressure, pressure);
  mises = sqrtf(1.5f * frobenius2(dev));
}

}  // namespace ps
