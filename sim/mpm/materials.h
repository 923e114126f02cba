/// The material models: each model's parameters, its constitutive update
/// (plastic projection of the elastic F and the Kirchhoff stress), its wave
/// speed and its stored energy, written once for every backend (PS_HD: the
/// CPU loops and the CUDA kernels call the same functions).
///
/// A material is one unit (docs/architecture.md, "Materials"):
///   1. its enum value and parameter fields here (MaterialParams is one flat
///      POD so the CUDA backend keeps the table in constant memory),
///   2. its model function below and one case in `constitutive`,
///      `wave_speed` and `energy_density`,
///   3. one row in the material table (sim/mpm/material_table.cpp): name,
///      reference, default colour and its fields with ranges and help. The
///      scene reader and writer and the window's Materials panel read that
///      table; none of them has a per-material switch.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include "sim/core/hd.h"
#include "sim/core/vec.h"

namespace ps {

enum class MaterialType : uint8_t {
  Tracer = 0,        ///< no stress: pure transfer (the PIC-vs-APIC teaching block)
  Fluid = 1,         ///< weakly compressible, J-based (mpm88), optional viscosity
  Jelly = 2,         ///< elastic, fixed-corotated (mpm99)
  Snow = 3,          ///< fixed-corotated + singular-value clamping + hardening (Stomakhin 2013)
  Sand = 4,          ///< Drucker-Prager in Hencky strain (Klar et al. 2016)
  Viscoplastic = 5,  ///< von Mises viscoplastic (Yue et al. 2015; the MPM fracture paper)
};
constexpr int kMaterialTypeCount = 6;

/// One material's parameters, all models in one flat struct (the panel can
/// switch a material's model without losing values). POD so the CUDA backend can keep a table in
/// constant memory. Units are the scene's (demos use mpm99's: domain 1).
struct MaterialParams {
  MaterialType type = MaterialType::Jelly;
  float density = 1.f;        ///< mass per unit area
  float E = 5e3f;             ///< Young's modulus (jelly, snow, sand)
  float nu = 0.2f;            ///< Poisson's ratio
  float bulk_modulus = 4e3f;  ///< fluid: tau = K J (J - 1) I
  float viscosity = 0.f;      ///< fluid: dynamic viscosity
  /// fluid: rate (1/s) at which J relaxes to the volume the particles fill on
  /// the grid (mpm::volume_corrected_J); 20 by default (water keeps its
  /// volume); 0: off, J alone as in mpm88
  float volume_correction = 20.f;
  float theta_c = 2.5e-2f;      ///< snow: critical compression
  float theta_s = 4.5e-3f;      ///< snow: critical stretch
  float hardening = 10.f;       ///< snow: xi in exp(xi (1 - Jp))
  float friction_angle = 30.f;  ///< sand: degrees
  float cohesion =
      0.f;  ///< sand: Mohr-Coulomb cohesion c (a stress, scene units); 0 = cohesionless
  float dilatancy =
      0.f;  ///< sand: dilatancy angle psi, degrees (0: no volume change in plastic flow)
  float dilation_limit =
      0.15f;  ///< sand: plastic volume strain ln Jp at which dilatancy has died out (critical state)
  float kappa = 1e4f;         ///< viscoplastic: bulk modulus
  float mu = 2e3f;            ///< viscoplastic: shear modulus
  float yield_stress = 50.f;  ///< viscoplastic: von Mises yield stress tau_Y
  float eta = 0.1f;  ///< viscoplastic: viscosity of the plastic flow (0: perfectly plastic)
  // Heat (every model; sim/mpm/heat.h). Temperatures in deg C.
  float conductivity = 1.f;             ///< thermal conductivity k, W / (m K)
  float heat_capacity = 1000.f;         ///< specific heat c, J / (kg K)
  float melting_point = 0.f;            ///< deg C (used when latent_heat > 0 and melts_into is set)
  float latent_heat = 0.f;              ///< J / kg; 0: does not melt
  int melts_into = -1;                  ///< index of the material its melt becomes (-1: none)
  float color[3] = {0.9f, 0.9f, 0.9f};  ///< display colour (linear RGB in [0,1])
};

/// Lame parameters from E and nu (plane strain form used by mpm99).
PS_HD void lame(const MaterialParams& m, float& mu, float& lambda) {
  mu = m.E / (2.f * (1.f + m.nu));
  lambda = m.E * m.nu / ((1.f + m.nu) * (1.f - 2.f * m.nu));
}

namespace mpm {

// [SECTION] Fluid ------------------------------------------------------------------
//
// fluid_stress, jelly_stress and snow_update (and svd2 / polar2 in vec.h) have
// a four-lane twin in sim/mpm/mpm_simd.h that the CPU backend runs; change
// both: tests/sim/mpm/test_simd.cpp compares them bit for bit.

/// Weakly compressible fluid (mpm88/mpm99): tau = K J (J - 1) I, plus a
/// Newtonian viscous term tau_v = J mu (C + C^T). Its state is J alone.
PS_HD Mat2 fluid_stress(const MaterialParams& m, float J, const Mat2& C) {
  const float p = m.bulk_modulus * J * (J - 1.f);
  Mat2 tau = Mat2::diag(p, p);
  if (m.viscosity > 0.f) tau += (J * m.viscosity) * (C + transpose(C));
  return tau;
}

// [SECTION] Jelly: fixed-corotated elasticity ----------------------------------------

/// Fixed-corotated (Stomakhin et al. 2012): tau = 2 mu (F - R) F^T + lambda J (J - 1) I.
PS_HD Mat2 jelly_stress(const MaterialParams& m, const Mat2& F) {
  float mu, la;
  lame(m, mu, la);
  Mat2 R, S;
  polar2(F, R, S);
  const float Jf = det(F);
  return (2.f * mu) * ((F - R) * transpose(F)) +
         Mat2::diag(la * Jf * (Jf - 1.f), la * Jf * (Jf - 1.f));
}

// [SECTION] Snow -----------------------------------------------------------------------

/// Stomakhin et al. 2013: clamp singular values to [1 - theta_c, 1 + theta_s],
/// move the rest into Jp, harden Lame parameters by exp(xi (1 - Jp)).
PS_HD Mat2 snow_update(const MaterialParams& m, Mat2& F, float& Jp) {
  float mu, la;
  lame(m, mu, la);
  Mat2 U, V;
  Vec2 sig;
  svd2(F, U, sig, V);
  const float old_j = sig.x * sig.y;
  sig.x = clampf(sig.x, 1.f - m.theta_c, 1.f + m.theta_s);
  sig.y = clampf(sig.y, 1.f - m.theta_c, 1.f + m.theta_s);
  const float new_j = sig.x * sig.y;
  // Jp is bounded to [0.01, 100]: the hardening factor is already clamped
  // at Jp ~ 0.84 and ~ 1.23, so this only keeps torn-off particles finite.
  Jp = clampf(Jp * (old_j / new_j), 1e-2f, 1e2f);
  F = U * Mat2::diag(sig.x, sig.y) * transpose(V);
  // mpm128 clamps the hardening factor to [0.1, 5] so snow neither liquefies nor locks.
  const float h = clampf(expf(m.hardening * (1.f - Jp)), 0.1f, 5.f);
  mu *= h;
  la *= h;
  const Mat2 R = U * transpose(V);
  return (2.f * mu) * ((F - R) * transpose(F)) +
         Mat2::diag(la * new_j * (new_j - 1.f), la * new_j * (new_j - 1.f));
}

// [SECTION] Sand -----------------------------------------------------------------------

/// The trace t of the cone's apex in Hencky strain: the hydrostatic state whose
/// Cauchy stress is the apex c cot(phi), (mu + lambda) t = exp(t) c cot(phi)
/// (t = 0 without cohesion: stress-free; with cohesion a few Newton steps from
/// t = c cot(phi) / (mu + lambda)).
PS_HD float sand_apex_trace(float mu, float la, float sin_phi, float cos_phi, float cohesion) {
  float t = 0.f;
  if (cohesion > 0.f && sin_phi > 0.f) {
    const float a = cohesion * cos_phi / sin_phi;  // apex Cauchy stress c cot(phi)
    const float k = mu + la;
    t = a / k;
    for (int it = 0; it < 4; ++it) {
      const float e = a * expf(t);
      const float g = k * t - e, dg = k - e;
      if (!(dg > 0.f)) break;
      t -= g / dg;
    }
  }
  return t;
}

/// Sand with dilatancy (a non-associated flow rule, dilatancy angle psi): the
/// return of a trial state outside the cone (see sand_return_map below for the
/// cone in Hencky strain; phi in this function and in sand_return_map is the
/// cone's own angle phi_mc, which sand_update sets from the scene's angle of
/// repose by sand_cone_sin). The flow potential is Mohr-Coulomb's with psi in
/// place of phi, g = |tau1 - tau2| / 2 + (tau1 + tau2) / 2 sin(psi), so with
/// e1 >= e2 the plastic strain increment is
///   d eps_p = dgamma (1/2 (1 + sin psi), 1/2 (-1 + sin psi)):
/// the principal strain difference falls by dgamma and the trace by
/// dgamma sin(psi) (the material expands while it shears; psi = phi is the
/// associated rule, psi = 0 the deviatoric return). On the cone afterwards,
///   mu (d - dgamma) + (mu + lambda) (tr - dgamma sin psi) sin phi
///     = c cos phi exp(tr - dgamma sin psi),      d = |e1 - e2|,
/// linear in dgamma without cohesion, a few Newton steps with it. Davis
/// (1968, "Theories of plasticity and the failure of soil masses", in Lee
/// (ed.), Soil Mechanics: Selected Topics) shows what psi does in plane
/// strain: a layer shearing along a plane (an infinite slope, a shear box)
/// holds a stress ratio tau / sigma_n = sin phi cos psi / (1 - sin phi sin psi),
/// sin phi for psi = 0 and tan phi for psi = phi. Dilatancy is what lets a
/// confined layer build the lateral stress that holds a slope steeper than
/// its constant-volume angle atan(sin phi). The same layer's cohesion is
/// c cos phi (at psi = 0): a sheared cohesive layer holds
/// tau = c cos phi_mc + sigma_n tan(angle of repose).
/// A trial state in tension returns the same way: the flow direction reaches
/// the cone (in compression) when tr <= d sin(psi) without cohesion, so a
/// dilatant layer stretched in one direction and pressed in the other keeps
/// its friction where the constant-volume rule (psi = 0) leaves it stress-free.
/// When the return would pass the cone's axis (d - dgamma < 0) the state goes
/// to the apex.
PS_HD void sand_dilatant_return(float mu, float la, float sin_phi, float cos_phi, float cohesion,
                                float sin_psi, Vec2& eps) {
  const float tr = eps.x + eps.y;
  const float d = fabsf(eps.x - eps.y);
  const float k = mu + la;
  const float slope = mu + k * sin_phi * sin_psi;  // -d f / d dgamma without cohesion
  const float c_cos = cohesion * cos_phi;
  float dg = (mu * d + k * tr * sin_phi - c_cos * expf(tr)) / slope;
  if (c_cos > 0.f) {
    for (int it = 0; it < 3; ++it) {
      const float ej = c_cos * expf(tr - dg * sin_psi);
      const float f = mu * (d - dg) + k * (tr - dg * sin_psi) * sin_phi - ej;
      const float df = -slope + ej * sin_psi;
      if (!(df < 0.f)) break;
      dg -= f / df;
    }
  }
  if (!(dg < d)) {
    // Past the axis: the apex (stress-free without cohesion; with it the
    // hydrostatic state c cot(phi)).
    const float t = sand_apex_trace(mu, la, sin_phi, cos_phi, cohesion);
    eps = Vec2{0.5f * t, 0.5f * t};
    return;
  }
  if (dg < 0.f) dg = 0.f;
  const float s = eps.x >= eps.y ? 1.f : -1.f;
  eps.x -= dg * 0.5f * (s + sin_psi);
  eps.y -= dg * 0.5f * (-s + sin_psi);
}

/// Sand: projects the principal Hencky strains eps = (e1, e2) of the elastic
/// F onto the plane-strain Mohr-Coulomb cone (friction angle phi, cohesion c),
/// returning along the deviatoric direction at fixed trace (no dilatancy,
/// as in the Hencky-strain return mapping of Klar et al. 2016, "Drucker-Prager
/// Elastoplasticity for Sand Animation", ACM TOG 35(4) 103), or to the apex
/// in tension.
///
/// Derivation for this solver's 2D state. The stress is the Kirchhoff stress
/// of the Hencky model with two principal values,
///   tau_i = 2 mu e_i + lambda (e1 + e2),  i = 1, 2,
/// and Cauchy sigma = tau / J with J = det F = exp(e1 + e2). In 2D (the in-plane
/// Mohr circle; e.g. Nedderman 1992, "Statics and Kinematics of Granular
/// Materials", ch. 2) Mohr-Coulomb is exactly (tension positive)
///   |s1 - s2| / 2 <= -(s1 + s2) / 2 sin(phi) + c cos(phi).
/// With tr = e1 + e2, dev = eps - tr/2 (1, 1) (the 2D deviator, trace over 2
/// dims) and |dev| = |e1 - e2| / sqrt(2):
///   (tau1 - tau2) / 2 = mu (e1 - e2)      ->  |tau1 - tau2| / 2 = sqrt(2) mu |dev|
///   (tau1 + tau2) / 2 = (mu + lambda) tr  (the 2D mean Kirchhoff stress p)
/// and multiplying the Cauchy criterion by J,
///   sqrt(2) mu |dev| <= -(mu + lambda) tr sin(phi) + J c cos(phi),
/// i.e. the yield function
///   y = |dev| + (mu + lambda) / mu * alpha * tr - J c cos(phi) / (sqrt(2) mu),
///   alpha = sin(phi) / sqrt(2)   (the 2D coefficient).
/// Klar's alpha = sqrt(2/3) 2 sin(phi) / (3 - sin(phi)) is the 3D (triaxial
/// compression) cone with a 3D deviator; used with this 2D deviator it is a
/// plane-strain cone of sin(phi_eff) = sqrt(2) alpha (27.5 deg for 30 deg).
/// A return along dev keeps tr and therefore J fixed, so the projection is
/// closed form: |dev| -> r = (J c cos(phi) - p sin(phi)) / (sqrt(2) mu).
/// When r < 0 (p sin(phi) > J c cos(phi): the mean Cauchy stress is beyond the
/// apex sigma_m = c cot(phi), the tension cut-off) the state goes to the apex:
/// dev = 0 and the hydrostatic stress equals the apex, (mu + lambda) t =
/// exp(t) c cot(phi) for the new trace t (t = 0 without cohesion: stress-free;
/// with cohesion a few Newton steps from t = c cot(phi) / (mu + lambda)).
/// Hydrostatic compression and every state inside the cone is untouched.
PS_HD void sand_return_map(float mu, float la, float sin_phi, float cos_phi, float cohesion,
                           Vec2& eps, float sin_psi = 0.f) {
  const float tr = eps.x + eps.y;
  const Vec2 dev{0.5f * (eps.x - eps.y), 0.5f * (eps.y - eps.x)};
  const float dev_norm = length(dev);
  const float J = expf(tr);
  const float p = (mu + la) * tr;  // mean (2D) Kirchhoff stress
  const float cj = cohesion * J * cos_phi;
  if (sin_psi > 0.f) {
    // Dilatant flow: any state outside the cone returns along the flow
    // direction, which reaches the cone from a tensile trial too when the
    // shear is large enough (tr <= |e1 - e2| sin psi without cohesion); the
    // apex only when it would pass the axis.
    if (1.41421356f * mu * dev_norm + p * sin_phi > cj)
      sand_dilatant_return(mu, la, sin_phi, cos_phi, cohesion, sin_psi, eps);
    return;
  }
  if (p >= 0.f && p * sin_phi >= cj) {
    // Beyond the apex (pure tension without cohesion): project to it.
    const float t = sand_apex_trace(mu, la, sin_phi, cos_phi, cohesion);
    eps = Vec2{0.5f * t, 0.5f * t};
    return;
  }
  const float r = (cj - p * sin_phi) / (1.41421356f * mu);  // admissible |dev| (>= 0 here)
  if (dev_norm > r) {
    const float s = r / dev_norm;
    eps = Vec2{0.5f * tr + s * dev.x, 0.5f * tr + s * dev.y};
  }
}

/// The largest friction_angle a sand takes (degrees): the cone below needs
/// tan(phi) < 1 (at 44 deg its own angle is 75 deg).
constexpr float kSandMaxFrictionAngle = 44.f;

/// sin of the Mohr-Coulomb cone's angle for a sand whose friction_angle phi
/// is its angle of repose. A layer sheared at constant volume (psi = 0) in
/// plane strain drives its stress to sigma_xx = sigma_yy and then slides at
/// tan(slope) = sin(phi_mc) (Davis 1968, see sand_dilatant_return), so the
/// slope a user sees flowing is phi when sin(phi_mc) = tan(phi): the cone is
/// wider than phi (25 -> 27.8, 30 -> 35.3, 35 -> 44.4 deg), and a sand set to phi
/// keeps a poured pile and a tilted layer at phi (mpm.angle_of_repose).
/// Cohesion c is the cone's: the apex lies at c cot(phi_mc).
PS_HD float sand_cone_sin(float friction_angle_deg) {
  // Clamped to [0, 44] by comparisons, so a NaN angle stays NaN (and the
  // blow-up check reports it) instead of becoming a cone.
  float a = friction_angle_deg > kSandMaxFrictionAngle ? kSandMaxFrictionAngle : friction_angle_deg;
  a = a < 0.f ? 0.f : a;
  return tanf(a * 3.14159265f / 180.f);
}

/// Sand: Mohr-Coulomb return mapping in Hencky strain (Klar et al. 2016,
/// with the plane-strain cone of sand_return_map above, its angle set from
/// the angle of repose by sand_cone_sin), optional cohesion.
PS_HD Mat2 sand_update(const MaterialParams& m, Mat2& F, float& Jp) {
  float mu, la;
  lame(m, mu, la);
  Mat2 U, V;
  Vec2 sig;
  svd2(F, U, sig, V);
  Vec2 eps{logf(fmaxf(fabsf(sig.x), 1e-6f)), logf(fmaxf(fabsf(sig.y), 1e-6f))};
  // With dilatancy the old volume comes from the strains the return map sees
  // (positive even for an inverted F, whose det would clamp Jp and bring full
  // psi back); without it, the previous bits exactly.
  const float old_j = m.dilatancy > 0.f ? expf(eps.x + eps.y) : sig.x * sig.y;
  const float phi = m.friction_angle * 3.14159265f / 180.f;
  // Dilatancy dies out as the grains loosen: psi falls linearly with the
  // plastic volume strain ln Jp and is 0 from dilation_limit on (the critical
  // state, where sand shears at constant volume; the stress-dilatancy picture
  // of Rowe 1962 and Bolton 1986, "The strength and dilatancy of sands",
  // Geotechnique 36(1)).
  float sin_psi = 0.f;
  if (m.dilatancy > 0.f) {
    const float left =
        m.dilation_limit > 0.f ? 1.f - logf(fmaxf(Jp, 1e-6f)) / m.dilation_limit : 0.f;
    if (left > 0.f)
      sin_psi = sinf(fminf(m.dilatancy * 3.14159265f / 180.f, phi) * fminf(left, 1.f));
  }
  const float sin_mc = sand_cone_sin(m.friction_angle);
  sand_return_map(mu, la, sin_mc, sqrtf(1.f - sin_mc * sin_mc), m.cohesion, eps, sin_psi);
  sig = Vec2{expf(eps.x), expf(eps.y)};
  F = U * Mat2::diag(sig.x, sig.y) * transpose(V);
  Jp = clampf(Jp * (old_j / (sig.x * sig.y)), 1e-2f, 1e2f);
  const float t = eps.x + eps.y;
  const Mat2 d = Mat2::diag(2.f * mu * eps.x + la * t, 2.f * mu * eps.y + la * t);
  return U * d * transpose(U);
}

// [SECTION] Viscoplastic (von Mises) ---------------------------------------------------

/// The viscoplastic return map on the deviatoric stress norm s = |dev tau|
/// (Perzyna overstress flow, backward Euler; Simo & Hughes 1998,
/// "Computational Inelasticity", sec. 2.7 and 9.3; the flow rule of Yue et
/// al. 2015 used by the MPM fracture paper). With k = sqrt(2/3) tau_Y the
/// flow rate is max(0, s - k) / eta and a step of length dt relaxes the trial
/// overstress to
///   s_new - k = (s_trial - k) / (1 + 2 mu_bar dt / eta),  mu_bar = mu tr(b_bar) / 2,
/// so eta -> 0 lands on the yield surface (perfect plasticity) and
/// eta -> infinity keeps the trial state (elastic). dt = 0 with eta > 0 leaves
/// s unchanged (the display evaluates the stress that way).
PS_HD float viscoplastic_return(float s_trial, float k, float mu_bar, float eta, float dt) {
  if (!(s_trial > k)) return s_trial;
  if (!(eta > 0.f)) return k;
  return k + (s_trial - k) / (1.f + 2.f * mu_bar * dt / eta);
}

/// von Mises viscoplastic solid (the MPM fracture paper after
/// Yue et al. 2015). F = Fe Fp with det Fp = 1, energy
///   W = kappa/2 (1/2 (J^2 - 1) - ln J) + mu/2 (tr b_bar - 2),  b_bar = J^-1 Fe Fe^T
/// (J^(-2/d) with d = 2), Kirchhoff stress tau = kappa/2 (J^2 - 1) I + mu dev(b_bar).
///
/// In principal axes Fe = U diag(s1, s2) V^T, J = s1 s2 and b_bar =
/// diag(e^(2 eps), e^(-2 eps)) with the deviatoric Hencky strain
/// eps = (ln s1 - ln s2) / 2, so dev b_bar = sinh(2 eps) diag(1, -1) and
/// s = |dev tau| = sqrt(2) mu |sinh 2 eps|. The return sets s to
/// viscoplastic_return(s) by solving for eps at fixed J: volume is elastic
/// (det Fp = 1 exactly) and the stress lands exactly on the relaxed value.
/// Note: in 2D an isochoric b_bar has one free invariant, so tr b_bar =
/// 2 cosh(2 eps) is fixed by its deviator; the 3D map's "trace-preserving"
/// update of dev b_bar cannot also keep det Fp = 1 here, and this one keeps
/// det Fp = 1 (tr b_bar then falls with the deviator, as plastic flow
/// should release the isochoric energy).
/// Jp holds 1 + the accumulated equivalent plastic strain
/// sum sqrt(2/3) |delta dev(ln V)| = sum (2 / sqrt(3)) |delta eps|.
PS_HD Mat2 viscoplastic_update(const MaterialParams& m, Mat2& F, float& Jp, float dt) {
  Mat2 U, V;
  Vec2 sig;
  svd2(F, U, sig, V);
  const float s1 = fmaxf(fabsf(sig.x), 1e-6f), s2 = fmaxf(fabsf(sig.y), 1e-6f);
  const float J = s1 * s2;
  float eps = 0.5f * (logf(s1) - logf(s2));
  float sh = sinhf(2.f * eps);
  const float s = 1.41421356f * m.mu * fabsf(sh);
  const float k = 0.81649658f * m.yield_stress;  // sqrt(2/3) tau_Y
  if (s > k) {
    const float mu_bar = m.mu * coshf(2.f * eps);
    const float s_new = viscoplastic_return(s, k, mu_bar, m.eta, dt);
    if (s_new < s) {
      const float e_new = copysignf(0.5f * asinhf(s_new / (1.41421356f * m.mu)), eps);
      Jp += 1.15470054f * fabsf(eps - e_new);  // 2 / sqrt(3)
      eps = e_new;
      sh = sinhf(2.f * eps);
      const float r = sqrtf(J);
      F = U * Mat2::diag(r * expf(eps), r * expf(-eps)) * transpose(V);
    }
  }
  const float p = 0.5f * m.kappa * (J * J - 1.f);
  const float d = m.mu * sh;
  return U * Mat2::diag(p + d, p - d) * transpose(U);
}

// [SECTION] Dispatch -------------------------------------------------------------------

/// Applies the material's plasticity to F (and its plastic state Jp) and
/// returns the Kirchhoff stress tau. `J` is the fluid's volume ratio, `C`
/// the particle's velocity gradient (fluid viscosity), `dt` the substep
/// (viscoplastic flow; 0 evaluates the stress without flow).
PS_HD Mat2 constitutive(const MaterialParams& m, Mat2& F, float J, float& Jp, const Mat2& C,
                        float dt) {
  switch (m.type) {
    case MaterialType::Tracer: return Mat2{};
    case MaterialType::Fluid: return fluid_stress(m, J, C);
    case MaterialType::Jelly: return jelly_stress(m, F);
    case MaterialType::Snow: return snow_update(m, F, Jp);
    case MaterialType::Viscoplastic: return viscoplastic_update(m, F, Jp, dt);
    case MaterialType::Sand:
    default: return sand_update(m, F, Jp);
  }
}

/// Largest elastic wave speed of a material, for the CFL bound.
inline float wave_speed(const MaterialParams& m) {
  float mu, la;
  lame(m, mu, la);
  switch (m.type) {
    case MaterialType::Tracer: return 0.f;
    case MaterialType::Fluid: return sqrtf(m.bulk_modulus / m.density);
    case MaterialType::Snow: return sqrtf(5.f * (la + 2.f * mu) / m.density);  // max hardening 5
    case MaterialType::Viscoplastic: return sqrtf((m.kappa + 2.f * m.mu) / m.density);
    default: return sqrtf((la + 2.f * mu) / m.density);
  }
}

/// Stored elastic energy per unit rest volume of one particle (host, double):
/// fixed-corotated jelly and snow psi = mu sum (sigma_i - 1)^2 + lambda/2 (J - 1)^2
/// (Stomakhin et al. 2012; snow with its current hardening), weakly
/// compressible fluid psi = K/2 (J - 1)^2 (its tau = K J (J - 1) = J dpsi/dJ),
/// sand psi = mu |eps|^2 + lambda/2 tr(eps)^2 in Hencky strain, viscoplastic
/// W above; tracers 0.
inline double energy_density(const MaterialParams& m, const Mat2& F, float J, float Jp) {
  float mu, la;
  lame(m, mu, la);
  switch (m.type) {
    case MaterialType::Tracer: return 0.0;
    case MaterialType::Fluid: {
      const double dj = static_cast<double>(J) - 1.0;
      return 0.5 * m.bulk_modulus * dj * dj;
    }
    default: break;
  }
  Mat2 U, V;
  Vec2 sig;
  svd2(F, U, sig, V);
  const double a1 = std::fabs(sig.x) > 1e-6f ? std::fabs(sig.x) : 1e-6,
               a2 = std::fabs(sig.y) > 1e-6f ? std::fabs(sig.y) : 1e-6;
  switch (m.type) {
    case MaterialType::Sand: {
      const double e1 = std::log(a1), e2 = std::log(a2);
      return mu * (e1 * e1 + e2 * e2) + 0.5 * la * (e1 + e2) * (e1 + e2);
    }
    case MaterialType::Viscoplastic: {
      const double j = a1 * a2, e = 0.5 * (std::log(a1) - std::log(a2));
      return 0.5 * m.kappa * (0.5 * (j * j - 1.0) - std::log(j)) +
             m.mu * (std::cosh(2.0 * e) - 1.0);
    }
    default: {
      double h = 1.0;
      if (m.type == MaterialType::Snow)
        h = std::min(std::max(std::exp(m.hardening * (1.0 - Jp)), 0.1), 5.0);
      const double s1 = sig.x - 1.0, s2 = sig.y - 1.0,
                   dj = static_cast<double>(sig.x) * sig.y - 1.0;
      return h * (mu * (s1 * s1 + s2 * s2) + 0.5 * la * dj * dj);
    }
  }
}

}  // namespace mpm
}  // namespace ps
