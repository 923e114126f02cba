#include "sim/mpm/material_table.h"

namespace ps {
namespace {

using M = MaterialParams;

// The elastic pair shared by jelly, snow and sand.
#define PS_ELASTIC_FIELDS                                             \
  {"E",  &M::E,  1e-6,                                                \
   1e12, 1.f,    1e7f,                                                \
   true, "%.4g", "Young's modulus (a stress in the scene's units)."}, \
  {                                                                   \
    "nu", &M::nu, 0.0, 0.49, 0.f, 0.49f, false, "%.3f",               \
        "Poisson's ratio (plane strain Lame parameters)."             \
  }

const MaterialField kFluid[] = {
    {"bulk_modulus", &M::bulk_modulus, 1e-6, 1e12, 1.f, 1e6f, true, "%.4g",
     "Bulk modulus K of the weakly compressible fluid: tau = K J (J - 1) I."},
    {"viscosity", &M::viscosity, 0.0, 1e9, 0.f, 10.f, false, "%.3g",
     "Dynamic viscosity: tau_v = J mu (C + C^T); 0 is inviscid."},
    {"volume_correction", &M::volume_correction, 0.0, 1e6, 0.f, 200.f, false, "%.3g",
     "Volume correction rate, 1/s: where the particles crowd closer than their J says (volume measured on the "
     "grid), J relaxes to the measured volume at this rate, so water keeps its volume over long runs "
     "(20, the default, holds a tank's depth within 1 %); 0: off (J alone, as in mpm88: the water slowly compacts)."},
};
const MaterialField kJelly[] = {PS_ELASTIC_FIELDS};
const MaterialField kSnow[] = {
    PS_ELASTIC_FIELDS,
    {"theta_c", &M::theta_c, 0.0, 0.99, 0.f, 0.2f, false, "%.4f",
     "Critical compression: singular values below 1 - theta_c become plastic."},
    {"theta_s", &M::theta_s, 0.0, 10.0, 0.f, 0.05f, false, "%.4f",
     "Critical stretch: singular values above 1 + theta_s become plastic."},
    {"hardening", &M::hardening, 0.0, 100.0, 0.f, 30.f, false, "%.2f",
     "Hardening xi: Lame parameters scale by exp(xi (1 - Jp))."},
};
const MaterialField kSand[] = {
    PS_ELASTIC_FIELDS,
    {"friction_angle", &M::friction_angle, 0.0, 44.0, 0.f, 44.f, false, "%.1f deg",
     "Friction angle phi = the angle of repose (degrees, at most 44): a poured pile stands and a sheared layer "
     "slides at phi. The plane-strain Mohr-Coulomb cone behind it is wider, sin(phi_mc) = tan(phi) (Davis 1968)."},
    {"cohesion", &M::cohesion, 0.0, 1e12, 0.f, 1e5f, true, "%.4g",
     "Mohr-Coulomb cohesion c, a stress in the scene's units (0: dry, cohesionless sand)."},
    {"dilatancy", &M::dilatancy, 0.0, 89.0, 0.f, 60.f, false, "%.1f deg",
     "Dilatancy angle psi (degrees, at most phi): dense sand expands as it shears, which lets it hold slopes "
     "steeper than phi until it has loosened to the critical state; 0: plastic flow at constant volume."},
    {"dilation_limit", &M::dilation_limit, 0.0, 4.6, 0.f, 0.5f, false, "%.3f",
     "Plastic volume strain ln Jp at which dilatancy has died out (the critical state): psi falls linearly to 0 "
     "as the grains loosen (0: no dilatancy; at most 4.6, ln of Jp's clamp 100)."},
};
const MaterialField kViscoplastic[] = {
    {"kappa", &M::kappa, 1e-6, 1e12, 1.f, 1e7f, true, "%.4g",
     "Bulk modulus kappa: tau_vol = kappa/2 (J^2 - 1) I."},
    {"mu", &M::mu, 1e-6, 1e12, 1.f, 1e7f, true, "%.4g",
     "Shear modulus mu: tau_dev = mu dev(b_bar)."},
    {"yield_stress", &M::yield_stress, 0.0, 1e12, 0.f, 1e5f, true, "%.4g",
     "von Mises yield stress tau_Y: elastic while |dev tau| <= sqrt(2/3) tau_Y."},
    {"eta", &M::eta, 0.0, 1e9, 0.f, 100.f, true, "%.3g",
     "Viscosity of the plastic flow (rate (s - sqrt(2/3) tau_Y) / eta): 0 is perfectly plastic, "
     "large values nearly elastic; the paper shows 0.01, 0.1, 1, 10."},
};

#undef PS_ELASTIC_FIELDS

const MaterialField kThermal[] = {
    {"conductivity", &M::conductivity, 0.0, 1e9, 0.f, 1e4f, true, "%.4g",
     "Thermal conductivity k, W/(m K) (ice 2.2, water 0.6; scenes may scale time instead)."},
    {"heat_capacity", &M::heat_capacity, 1e-6, 1e9, 1.f, 1e5f, true, "%.4g",
     "Specific heat capacity c, J/(kg K) (ice 2100, water 4186)."},
    {"melting_point", &M::melting_point, -273.15, 1e5, -50.f, 100.f, false, "%.2f C",
     "Melting point, deg C: above it absorbed heat melts the material (with latent_heat and melts_into)."},
    {"latent_heat", &M::latent_heat, 0.0, 1e12, 0.f, 1e6f, false, "%.4g",
     "Latent heat of fusion L, J/kg (ice 334000); 0: the material does not melt."},
};

template <size_t N>
constexpr int count(const MaterialField (&)[N]) {
  return static_cast<int>(N);
}

const MaterialKind kKinds[kMaterialTypeCount] = {
    {MaterialType::Tracer,
     "tracer",
     "no stress: transfer only",
     "GAMES201 lecture 7 (the PIC-vs-APIC block)",
     {0.85f, 0.85f, 0.90f},
     nullptr,
     0,
     false},
    {MaterialType::Fluid,
     "fluid",
     "weakly compressible fluid, state J",
     "Hu et al. 2018 (mpm88 / mpm99 fluid)",
     {0.20f, 0.55f, 0.95f},
     kFluid,
     count(kFluid),
     false},
    {MaterialType::Jelly,
     "jelly",
     "elastic, fixed-corotated",
     "Stomakhin et al. 2012 (mpm99 jelly)",
     {0.95f, 0.45f, 0.35f},
     kJelly,
     count(kJelly),
     true},
    {MaterialType::Snow,
     "snow",
     "fixed-corotated, singular-value clamping, hardening",
     "Stomakhin et al. 2013",
     {0.92f, 0.95f, 1.00f},
     kSnow,
     count(kSnow),
     false},
    {MaterialType::Sand,
     "sand",
     "Mohr-Coulomb in Hencky strain",
     "Klar et al. 2016 (plane-strain cone)",
     {0.90f, 0.75f, 0.45f},
     kSand,
     count(kSand),
     false},
    {MaterialType::Viscoplastic,
     "viscoplastic",
     "von Mises viscoplastic: stretches, necks and tears",
     "Yue et al. 2015; the MPM fracture paper (J. CAD & CG 2023)",
     {0.80f, 0.55f, 0.25f},
     kViscoplastic,
     count(kViscoplastic),
     true},
};

}  // namespace

const MaterialKind* material_kinds() { return kKinds; }
const MaterialField* thermal_fields() { return kThermal; }
int thermal_field_count() { return count(kThermal); }

int find_material_kind(const std::string& name) {
  for (int i = 0; i < kMaterialTypeCount; ++i)
    if (name == kKinds[i].name) return i;
  return -1;
}

std::string material_kind_list() {
  std::string s;
  for (int i = 0; i < kMaterialTypeCount; ++i) {
    if (i > 0) s += i + 1 == kMaterialTypeCount ? " or " : ", ";
    s += kKinds[i].name;
  }
  return s;
}

}  // namespace ps
