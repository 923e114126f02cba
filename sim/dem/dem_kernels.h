/// DEM per-contact, per-bond and per-particle math, written once for every
/// backend (the CPU reference calls these from loops; a CUDA backend would
/// call them from kernels).
///
/// One step (explicit, symplectic Euler):
///   bonds (EBPM forces, stress check, breakage) -> broad phase (uniform grid,
///   counting sort) -> unbonded contacts (Hertz-Mindlin, with history)
///   -> per-particle gather of forces and moments in a fixed order
///   -> integration (v += dt F/m, x += dt v; omega += dt M/I, theta += dt omega)
///   -> bonds advance their shear displacement and bending rotation.
///
/// 2D convention: particles are spheres whose centres move in the plane
/// (LIGGGHTS' enforce2d). Mass, inertia and the Hertz law are those of
/// spheres, so the same contact law serves a 3D build unchanged.
#pragma once
#include <cmath>
#include "sim/dem/dem_params.h"
#include "sim/dem/dem_vec.h"

namespace ps {
namespace dem {

constexpr double kPi = 3.14159265358979323846;

/// [SECTION] Particle properties ---------------------------------------------

PS_HD double sphere_mass(double density, double r) {
  return density * (4.0 / 3.0) * kPi * r * r * r;
}
PS_HD double sphere_inertia(double mass, double r) { return 0.4 * mass * r * r; }

/// [SECTION] Hertz-Mindlin contact --------------------------------------------

/// Effective properties of a contact pair (material a with material b).
struct PairProps {
  double E_star = 0.0;  ///< 1/E* = (1 - nu_a^2)/E_a + (1 - nu_b^2)/E_b
  double G_star = 0.0;  ///< 1/G* = 2(2 - nu_a)(1 + nu_a)/E_a + 2(2 - nu_b)(1 + nu_b)/E_b
  double beta = 0.0;    ///< ln e / sqrt(ln^2 e + pi^2) (<= 0)
  double mu = 0.0;      ///< sliding friction
  double mu_r = 0.0;    ///< rolling friction
  double eta_r = 0.0;   ///< rolling viscous damping ratio (Ai et al. 2011, model C)
};

/// Damping ratio from the coefficient of restitution (Tsuji et al. 1992;
/// LIGGGHTS hertz model): beta = ln e / sqrt(ln^2 e + pi^2). With the
/// sqrt(5/6) factor in the damping coefficient below, an isolated Hertz
/// impact rebounds with exactly e, independent of the impact speed (the
/// damping grows as delta^(1/4), like the stiffness's square root).
PS_HD double restitution_beta(double e) {
  if (e >= 1.0) return 0.0;
  double le = log(e > 1e-6 ? e : 1e-6);
  return le / sqrt(le * le + kPi * kPi);
}

/// Pair properties. e, mu, mu_r and eta_r are the means of the two materials (equal
/// materials give their own values); E* and G* are the Hertz/Mindlin
/// combinations (Johnson 1985, eq. 4.22; Mindlin 1949).
PS_HD PairProps pair_props(const DemMaterial& a, const DemMaterial& b) {
  PairProps p;
  p.E_star = 1.0 / ((1.0 - a.nu * a.nu) / a.E + (1.0 - b.nu * b.nu) / b.E);
  p.G_star =
      1.0 / (2.0 * (2.0 - a.nu) * (1.0 + a.nu) / a.E + 2.0 * (2.0 - b.nu) * (1.0 + b.nu) / b.E);
  p.beta = restitution_beta(0.5 * (a.restitution + b.restitution));
  p.mu = 0.5 * (a.friction + b.friction);
  p.mu_r = 0.5 * (a.rolling_friction + b.rolling_friction);
  p.eta_r = 0.5 * (a.rolling_damping + b.rolling_damping);
  return p;
}

/// Per-contact history carried from step to step.
struct ContactHistory {
  double xi = 0.0;  ///< Mindlin tangential spring elongation along t = perp(n), m
  double mr = 0.0;  ///< rolling-resistance moment on particle i, N m
};

/// Contact forces in the contact frame. Force on j is fn n + ft t; force on
/// i is its negative. m_roll acts on i (and -m_roll on j).
struct ContactForce {
  double fn = 0.0, ft = 0.0, m_roll = 0.0;
};

/// Equivalent rolling inertia of a contact (Ai et al. 2011, eq. 16):
///   I_r = (1 / (I_i + m_i r_i^2) + 1 / (I_j + m_j r_j^2))^-1,
/// each particle's inertia about the contact point. A wall has I = infinity:
/// pass Ij = mj = 0 for "no second particle" and get I_i + m_i r_i^2.
PS_HD double rolling_inertia(double Ii, double mi, double ri, double Ij, double mj, double rj) {
  const double a = Ii + mi * ri * ri;
  const double b = Ij + mj * rj * rj;
  return b > 0.0 ? a * b / (a + b) : a;
}

/// Hertz-Mindlin with Tsuji damping, Coulomb cap and EPSD rolling resistance
/// (the LIGGGHTS hertz/history model with rolling_friction epsd).
///   overlap delta > 0; vn, vt: velocity of j relative to i at the contact
///   point along n (i -> j) and t = perp(n); w_rel = omega_i - omega_j.
///   R*, m*: effective radius and mass (a wall has R = m = infinity);
///   I_r: equivalent rolling inertia (rolling_inertia).
///
/// Normal (Hertz 1882, the 3D sphere law also for the 2D disks):
///   F_n = 4/3 E* sqrt(R*) delta^1.5 - gamma_n vn,
///   S_n = 2 E* sqrt(R* delta), gamma_n = -2 sqrt(5/6) beta sqrt(S_n m*).
/// Tangential (Mindlin 1949, no-slip stiffness):
///   S_t = 8 G* sqrt(R* delta), xi += vt dt, F_t = -S_t xi - gamma_t vt,
///   gamma_t = -2 sqrt(5/6) beta sqrt(S_t m*);
///   if S_t |xi| > mu F_n the contact slides: F_t = -mu F_n sign(xi) and the
///   spring is truncated to xi = mu F_n / S_t (Cundall & Strack 1979).
/// Rolling (Ai, Chen, Rotter & Ooi 2011, model C, elastic-plastic
/// spring-dashpot "EPSD"):
///   spring: k_r = 2.25 S_n mu_r^2 R*^2, M_k -= k_r w_rel dt, |M_k| <= mu_r R* F_n;
///   dashpot: M_d = -C_r w_rel, C_r = eta_r 2 sqrt(I_r k_r), only while the
///   spring is below its cap (full mobilisation switches it off, Ai's f = 0);
///   the moment on i is M_k + M_d; only M_k is history.
/// The net normal force may turn slightly attractive at the end of a damped
/// impact; it is not clipped, because clipping changes the restitution.
PS_HD ContactForce hertz_mindlin(const PairProps& p, double R_eff, double m_eff, double I_roll,
                                 double delta, double vn, double vt, double w_rel, double dt,
                                 ContactHistory& h) {
  ContactForce f;
  const double sq = sqrt(R_eff * delta);
  const double Sn = 2.0 * p.E_star * sq;
  const double St = 8.0 * p.G_star * sq;
  const double c = -2.0 * 0.91287092917527685 * p.beta;  // -2 sqrt(5/6) beta
  const double gn = c * sqrt(Sn * m_eff);
  const double gt = c * sqrt(St * m_eff);
  f.fn = (4.0 / 3.0) * p.E_star * sq * delta - gn * vn;
  const double fcap = p.mu * (f.fn > 0.0 ? f.fn : 0.0);

  h.xi += vt * dt;
  const double fs = St * fabs(h.xi);
  if (fs > fcap) {
    const double s = h.xi > 0.0 ? 1.0 : -1.0;
    f.ft = -fcap * s;
    h.xi = St > 0.0 ? s * fcap / St : 0.0;
  } else {
    f.ft = -St * h.xi - gt * vt;
  }

  const double mcap = p.mu_r * R_eff * (f.fn > 0.0 ? f.fn : 0.0);
  const double kr = 2.25 * Sn * p.mu_r * p.mu_r * R_eff * R_eff;
  h.mr -= kr * w_rel * dt;
  bool mobilised = false;
  if (h.mr > mcap) {
    h.mr = mcap;
    mobilised = true;
  }
  if (h.mr < -mcap) {
    h.mr = -mcap;
    mobilised = true;
  }
  f.m_roll = h.mr;
  if (!mobilised && p.eta_r > 0.0) f.m_roll -= p.eta_r * 2.0 * sqrt(I_roll * kr) * w_rel;
  return f;
}

/// [SECTION] Walls ------------------------------------------------------------------

/// A Polygon wall's contact (after Box2D's b2CollidePolygonAndCircle): the
/// edge of largest separation s = (x - v_k).n_k (n_k its outward normal)
/// decides. Any s > r: no contact (the polygon is convex). Centre outside
/// (s > 0): the closest boundary point q is on that edge or at one of its
/// two vertices, and n = (x - q)/|x - q| (on the edge that is n_k itself),
/// delta = r - |x - q|. Centre inside or on the boundary (s <= 0): the
/// nearest edge, n = n_k, delta = r - s = r + depth. Either way one contact
/// per particle and polygon, also at a corner.
PS_HD bool polygon_contact(const DemWall& w, Vec2d x, double r, Vec2d& n, double& delta) {
  const int m = w.count < kMaxWallVertices ? w.count : kMaxWallVertices;
  double best = -1e300;
  int e = -1;
  Vec2d ne{0.0, 0.0};
  for (int k = 0; k < m; ++k) {
    const Vec2d p0 = w.v[k], p1 = w.v[k + 1 < m ? k + 1 : 0];
    const Vec2d d = p1 - p0;
    const double L = length(d);
    if (!(L > 0.0)) continue;
    const Vec2d nk{d.y / L, -d.x / L};  // outward: the vertices turn counter-clockwise
    const double s = dot(x - p0, nk);
    if (s > r) return false;
    if (s > best) {
      best = s;
      e = k;
      ne = nk;
    }
  }
  if (e < 0) return false;  // no edge, or a non-finite centre
  const Vec2d p0 = w.v[e], p1 = w.v[e + 1 < m ? e + 1 : 0];
  Vec2d q;
  if (best > 0.0 && dot(x - p0, p1 - p0) <= 0.0) {
    q = p0;
  } else if (best > 0.0 && dot(x - p1, p0 - p1) <= 0.0) {
    q = p1;
  } else {  // the edge's face, or the centre inside
    n = ne;
    delta = r - best;
    return delta > 0.0;
  }
  const Vec2d d = x - q;
  const double dist = length(d);  // >= best > 0
  delta = r - dist;
  if (!(delta > 0.0)) return false;
  n = d / dist;
  return true;
}

/// Particle-wall geometry: the unit normal n from the wall to the particle
/// and the overlap delta (> 0 in contact) of a particle of centre x, radius r.
PS_HD bool wall_contact(const DemWall& w, Vec2d x, double r, Vec2d& n, double& delta) {
  if (w.type == WallType::Plane) {
    double dist = dot(x - w.a, w.n);
    delta = r - dist;
    n = w.n;
    return delta > 0.0;
  }
  if (w.type == WallType::Polygon) return polygon_contact(w, x, r, n, delta);
  if (w.type == WallType::Disk) {
    const Vec2d d = x - w.a;
    const double dist = length(d);
    delta = r + w.radius - dist;
    if (!(delta > 0.0)) return false;
    n = dist > 0.0 ? d / dist : Vec2d{1.0, 0.0};
    return true;
  }
  Vec2d ab = w.b - w.a;
  double L2 = length2(ab);
  double s = L2 > 0.0 ? dot(x - w.a, ab) / L2 : 0.0;
  s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
  Vec2d d = x - (w.a + s * ab);
  double dist = length(d);
  delta = r - dist;
  if (!(delta > 0.0) || dist <= 0.0) return false;
  n = d / dist;
  return true;
}

/// Velocity of the wall's material point at p: vel + omega x (p - c).
PS_HD Vec2d wall_velocity(const DemWall& w, Vec2d p) { return w.vel + w.omega * perp(p - w.c); }

/// One particle-wall contact's result.
struct WallContact {
  Vec2d point;       ///< contact point: the middle of the overlap
  Vec2d f;           ///< force on the particle (on the wall: -f, at `point`)
  double t_p = 0.0;  ///< moment on the particle about its centre
  double t_w = 0.0;  ///< moment on the wall about its reference point c
  double overlap = 0.0;
};

/// Hertz-Mindlin between a wall (the pair's "i": infinite radius, mass and
/// inertia, so R* = R, m* = m, I_r = I + m R^2) and a particle ("j"; centre
/// x, velocity v, spin omega), for the geometry wall_contact gave. The
/// relative velocity is taken at the contact point against the wall's
/// velocity there (wall_velocity), and the rolling term against the wall's
/// spin: w_rel = omega_wall - omega. The wall receives -f at the contact
/// point and the opposite rolling moment, so
///   t_w = -(point - c) x f + M_roll,  and  t_w + t_p + (x - c) x f = 0.
PS_HD WallContact wall_force(const DemWall& w, const PairProps& pp, Vec2d nrm, double delta,
                             Vec2d x, Vec2d v, double omega, double R, double m, double I,
                             double dt, ContactHistory& h) {
  WallContact c;
  const Vec2d t = perp(nrm);
  const double a = R - 0.5 * delta;  // centre to contact point
  c.point = x - a * nrm;
  const Vec2d dv = v - wall_velocity(w, c.point);
  const double vn = dot(dv, nrm);
  const double vt = dot(dv, t) - a * omega;
  const double I_roll = rolling_inertia(I, m, R, 0.0, 0.0, 0.0);  // wall: I = inf
  const ContactForce f = hertz_mindlin(pp, R, m, I_roll, delta, vn, vt, -(omega - w.omega), dt, h);
  c.f = f.fn * nrm + f.ft * t;
  c.t_p = -a * f.ft - f.m_roll;
  c.t_w = f.m_roll - cross(c.point - w.c, c.f);
  c.overlap = delta;
  return c;
}

PS_HD Vec2d rotate(Vec2d r, double cs, double sn) {
  return {cs * r.x - sn * r.y, sn * r.x + cs * r.y};
}

/// Moves a wall rigidly over dt with its own motion: c advances by vel dt
/// and the geometry (a, b, n, the vertices) turns by omega dt about c. A
/// wall without motion is left untouched (bit for bit).
PS_HD void move_wall(DemWall& w, double dt) {
  if (w.vel.x == 0.0 && w.vel.y == 0.0 && w.omega == 0.0) return;
  const int m = w.count < kMaxWallVertices ? w.count : kMaxWallVertices;
  const Vec2d d = dt * w.vel;
  if (w.omega == 0.0) {
    w.a += d;
    w.b += d;
    for (int k = 0; k < m; ++k) w.v[k] += d;
    w.c += d;
    return;
  }
  const double th = w.omega * dt, cs = cos(th), sn = sin(th);
  const Vec2d c0 = w.c, c1 = w.c + d;
  w.a = c1 + rotate(w.a - c0, cs, sn);
  w.b = c1 + rotate(w.b - c0, cs, sn);
  for (int k = 0; k < m; ++k) w.v[k] = c1 + rotate(w.v[k] - c0, cs, sn);
  const Vec2d n = rotate(w.n, cs, sn);
  w.n = n / length(n);
  w.c = c1;
}

/// [SECTION] EBPM bonds ---------------------------------------------------------

/// Bond cross-section (a cylinder of radius r_b = lambda min(R_i, R_j);
/// Potyondy & Cundall 2004 eq. 9 for the 3D parallel bond):
///   A = pi r_b^2, I = pi r_b^4 / 4 (bending), J = pi r_b^4 / 2 (torsion, 3D).
struct BondSection {
  double r = 0.0, A = 0.0, I = 0.0, J = 0.0;
};
PS_HD BondSection bond_section(const DemBondParams& bp, double Ri, double Rj) {
  BondSection s;
  s.r = bp.radius_ratio * (Ri < Rj ? Ri : Rj);
  s.A = kPi * s.r * s.r;
  s.I = 0.25 * kPi * s.r * s.r * s.r * s.r;
  s.J = 2.0 * s.I;
  return s;
}

/// One bond's state and outputs for a step.
struct BondResult {
  Vec2d f_i;             ///< force on i (force on j is -f_i)
  double t_i = 0.0;      ///< moment on i
  double t_j = 0.0;      ///< moment on j
  double sigma = 0.0;    ///< max tensile stress  T/A + |M_b| r_b / I
  double sigma_c = 0.0;  ///< max compressive stress -T/A + |M_b| r_b / I
  double tau = 0.0;      ///< max shear stress |F_s| / A
  Vec2d point;           ///< contact point
};

/// Bond frame: unit normal n (i -> j), tangent t = perp(n), and the arms
/// from each centre to the contact point (the middle of the gap or overlap).
struct BondFrame {
  Vec2d n, t;
  double d = 0.0, ai = 0.0, aj = 0.0;
};
PS_HD BondFrame bond_frame(Vec2d xi, Vec2d xj, double Ri, double Rj) {
  BondFrame f;
  Vec2d dx = xj - xi;
  f.d = length(dx);
  f.n = f.d > 0.0 ? dx / f.d : Vec2d{1.0, 0.0};
  f.t = perp(f.n);
  double gap = f.d - Ri - Rj;
  f.ai = Ri + 0.5 * gap;
  f.aj = Rj + 0.5 * gap;
  return f;
}

/// EBPM bond force (Brown, Chen & Ooi 2014, after Potyondy & Cundall 2004), 2D.
/// Per unit area stiffnesses from the *current* parameters:
///   k_n = E_b / L0, k_s = G_b / L0, G_b = E_b / (2 (1 + nu_b)).
/// The bond stores displacements, not forces: delta_n = |x_j - x_i| - L0
/// (exact), the shear displacement delta_s and the bending rotation theta_b
/// (accumulated by bond_advance). P&C eq. 10-11 integrate dF = -k dU; here U
/// is integrated and F = -k U, which is the same for constant k and lets an
/// edit of E act at once:
///   T = k_n A delta_n (tension +), F_s = k_s A delta_s, M_b = k_n I theta_b.
/// On j: F = -T n - F_s t, moment -M_b + a_j F_s; on i the opposite force and
/// moment +M_b + a_i F_s (a_i, a_j: centre-to-contact-point arms).
/// Optional viscous damping: a fraction `damping` of each spring's critical
/// coefficient 2 sqrt(k m*) (m* or I* of the pair).
PS_HD BondResult bond_force(const DemBondParams& bp, Vec2d xi, Vec2d xj, Vec2d vi, Vec2d vj,
                            double wi, double wj, double Ri, double Rj, double mi, double mj,
                            double Ii, double Ij, double L0, double shear_disp, double bend_angle) {
  BondResult r;
  const BondFrame f = bond_frame(xi, xj, Ri, Rj);
  r.point = xi + f.ai * f.n;
  const BondSection s = bond_section(bp, Ri, Rj);
  const double kn = bp.E / L0;
  const double ks = bp.E / (2.0 * (1.0 + bp.nu)) / L0;

  const double T = kn * s.A * (f.d - L0);
  const double Fs = ks * s.A * shear_disp;
  const double Mb = kn * s.I * bend_angle;

  double Tv = T, Fsv = Fs, Mbv = Mb;
  if (bp.damping > 0.0) {
    const Vec2d dv = vj - vi;
    const double vn = dot(dv, f.n);
    const double vt = dot(dv, f.t) - (f.ai * wi + f.aj * wj);
    const double m_eff = mi * mj / (mi + mj);
    const double I_eff = Ii * Ij / (Ii + Ij);
    Tv += 2.0 * bp.damping * sqrt(kn * s.A * m_eff) * vn;
    Fsv += 2.0 * bp.damping * sqrt(ks * s.A * m_eff) * vt;
    Mbv += 2.0 * bp.damping * sqrt(kn * s.I * I_eff) * (wj - wi);
  }
  r.f_i = Tv * f.n + Fsv * f.t;
  r.t_i = Mbv + f.ai * Fsv;
  r.t_j = -Mbv + f.aj * Fsv;

  // Stresses (P&C 2004 eq. 13; Brown et al. 2014 eq. 12), elastic parts only.
  const double bend = s.I > 0.0 ? fabs(Mb) * s.r / s.I : 0.0;
  r.sigma = T / s.A + bend;
  r.sigma_c = -T / s.A + bend;
  r.tau = fabs(Fs) / s.A;
  return r;
}

/// Advances a bond's accumulated displacements over a step, with the
/// kinematics *after* the step's integration (x^{n+1}, v^{n+1}): in
/// symplectic Euler x^{n+1} - x^n = dt v^{n+1}, so this increment is exactly
/// the step's relative motion and delta_s, theta_b stay consistent with the
/// positions (as delta_n is):
///   d(delta_s) = [(v_j - v_i).t - (a_i w_i + a_j w_j)] dt   (relative tangential
///                velocity of the two material points at the contact point),
///   d(theta_b) = (w_j - w_i) dt.
/// In 2D delta_s is a scalar along t, so it turns with the bond by itself; a
/// 3D version rotates the vector into the new tangent plane first.
PS_HD void bond_advance(Vec2d xi, Vec2d xj, Vec2d vi, Vec2d vj, double wi, double wj, double Ri,
                        double Rj, double dt, double& shear_disp, double& bend_angle) {
  const BondFrame f = bond_frame(xi, xj, Ri, Rj);
  shear_disp += (dot(vj - vi, f.t) - (f.ai * wi + f.aj * wj)) * dt;
  bend_angle += (wj - wi) * dt;
}

/// Which strength the stresses reach first (largest stress/strength ratio,
/// ties in the order tensile, compressive, shear); None while all are below.
/// 0 = none, 1 tensile, 2 compressive, 3 shear (BondBreak values).
PS_HD int bond_break_mode(const DemBondParams& bp, double sigma, double sigma_c, double tau) {
  double rt = sigma / bp.tensile_strength;
  double rc = sigma_c / bp.compressive_strength;
  double rs = tau / bp.shear_strength;
  int mode = 0;
  double best = 1.0;
  if (rt >= best) {
    best = rt;
    mode = 1;
  }
  if (rc > best || (mode == 0 && rc >= best)) {
    best = rc;
    mode = 2;
  }
  if (rs > best || (mode == 0 && rs >= best)) {
    best = rs;
    mode = 3;
  }
  return mode;
}

/// [SECTION] Integration ---------------------------------------------------------

/// Cundall's local damping (P&C 2004 sec. 2.4): each force component loses
/// alpha |F| in the direction of the velocity component.
PS_HD double local_damp(double f, double v, double alpha) {
  if (alpha <= 0.0 || v == 0.0) return f;
  return f - alpha * fabs(f) * (v > 0.0 ? 1.0 : -1.0);
}

/// [SECTION] Stable time step -------------------------------------------------

/// Rayleigh time (Li, Xu & Thornton 2005): the time a Rayleigh wave takes to
/// cross a particle, pi R sqrt(rho / G) / (0.1631 nu + 0.8766).
PS_HD double rayleigh_time(double R, double density, double E, double nu) {
  double G = E / (2.0 * (1.0 + nu));
  return kPi * R * sqrt(density / G) / (0.1631 * nu + 0.8766);
}

/// Hertz impact: maximum overlap, peak force and contact duration of an
/// undamped impact at relative speed v (Johnson 1985, sec. 11.4):
///   delta_max = (15 m* v^2 / (16 E* sqrt(R*)))^(2/5),
///   F_max = 4/3 E* sqrt(R*) delta_max^(3/2),
///   t_c = 2 (delta_max / v) int_0^1 (1 - x^(5/2))^(-1/2) dx = 2.9432 delta_max / v.
PS_HD double hertz_max_overlap(double m_eff, double R_eff, double E_star, double v) {
  return pow(15.0 * m_eff * v * v / (16.0 * E_star * sqrt(R_eff)), 0.4);
}
PS_HD double hertz_peak_force(double R_eff, double E_star, double delta_max) {
  return (4.0 / 3.0) * E_star * sqrt(R_eff) * pow(delta_max, 1.5);
}
PS_HD double hertz_duration(double m_eff, double R_eff, double E_star, double v) {
  return 2.94327518 * hertz_max_overlap(m_eff, R_eff, E_star, v) / v;
}

}  // namespace dem
}  // namespace ps
