#include "sim/dem/dem_cpu.h"

#include <tuple>
#include "sim/cuda/cuda_info.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include "sim/dem/dem_kernels.h"

namespace ps {
namespace dem {

// Grain sizes: small systems (tests, a beam of 20 particles) run in one chunk
// and never wake the pool; scenes of thousands split across all threads.
static constexpr int64_t kParticleGrain = 256;
static constexpr int64_t kBondGrain = 512;

DemCpuBackend::DemCpuBackend(int threads) : pool_(threads) {
  worker_pairs_.resize(static_cast<size_t>(pool_.size()));
  worker_walls_.resize(static_cast<size_t>(pool_.size()));
}

std::string DemCpuBackend::name() const {
  return "cpu (" + std::to_string(pool_.size()) + (pool_.size() == 1 ? " thread)" : " threads)");
}

void DemCpuBackend::bind(DemParticles* particles, DemBonds* bonds) {
  p_ = particles;
  b_ = bonds;
  host_changed();
}

void DemCpuBackend::host_changed() {
  // Contact history belongs to the old state: drop it (tangential and rolling
  // springs restart from zero, as for a newly formed contact).
  pairs_.clear();
  walls_.clear();
  pair_start_.clear();
  wall_start_.clear();
  build_bond_topology();
}

// [SECTION] Bond topology --------------------------------------------------------

void DemCpuBackend::build_bond_topology() {
  const size_t n = p_ ? p_->size() : 0;
  const size_t nb = b_ ? b_->size() : 0;
  topo_particles_ = n;
  topo_bonds_ = nb;
  bond_start_.assign(n + 1, 0);
  bond_j_start_.assign(n + 1, 0);
  bonds_by_j_.resize(nb);
  for (size_t k = 0; k < nb; ++k) {
    ++bond_start_[b_->i[k] + 1];
    ++bond_j_start_[b_->j[k] + 1];
  }
  for (size_t i = 0; i < n; ++i) {
    bond_start_[i + 1] += bond_start_[i];
    bond_j_start_[i + 1] += bond_j_start_[i];
  }
  // Stable counting sort of bond indices by j.
  cursor_.assign(bond_j_start_.begin(), bond_j_start_.end() - 1);
  for (size_t k = 0; k < nb; ++k) bonds_by_j_[cursor_[b_->j[k]]++] = static_cast<uint32_t>(k);
  bond_f_.assign(nb, Vec2d{});
  bond_ti_.assign(nb, 0.0);
  bond_tj_.assign(nb, 0.0);
  bond_newly_broken_.assign(nb, 0);
}

// [SECTION] Bonds (EBPM) ------------------------------------------------------------

int DemCpuBackend::bond_pass(const DemStepInput& in) {
  const size_t nb = b_->size();
  const DemParticles& p = *p_;
  DemBonds& b = *b_;
  const DemBondParams& bp = in.bond;
  pool_.parallel_for(static_cast<int64_t>(nb), kBondGrain, [&](int64_t k0, int64_t k1, int) {
    for (int64_t k = k0; k < k1; ++k) {
      bond_newly_broken_[k] = 0;
      if (b.broken[k]) {
        bond_f_[k] = Vec2d{};
        bond_ti_[k] = bond_tj_[k] = 0.0;
        b.force[k] = Vec2d{};
        b.sigma[k] = b.tau[k] = 0.f;
        continue;
      }
      const uint32_t i = b.i[k], j = b.j[k];
      BondResult r = bond_force(bp, p.x[i], p.x[j], p.v[i], p.v[j], p.omega[i], p.omega[j],
                                p.radius[i], p.radius[j], p.mass[i], p.mass[j], p.inertia[i],
                                p.inertia[j], b.length0[k], b.shear_disp[k], b.bend_angle[k]);
      b.sigma[k] = static_cast<float>(r.sigma);
      b.tau[k] = static_cast<float>(r.tau);
      int mode = bond_break_mode(bp, r.sigma, r.sigma_c, r.tau);
      if (mode != 0) {
        // Broken this step: it carries no load from now on and never re-forms;
        // the pair meets the contact pass below as an ordinary contact.
        b.broken[k] = 1;
        b.mode[k] = static_cast<BondBreak>(mode);
        b.break_step[k] = in.step;
        bond_newly_broken_[k] = 1;
        bond_f_[k] = Vec2d{};
        bond_ti_[k] = bond_tj_[k] = 0.0;
        b.force[k] = Vec2d{};
        continue;
      }
      bond_f_[k] = r.f_i;
      bond_ti_[k] = r.t_i;
      bond_tj_[k] = r.t_j;
      b.force[k] = r.f_i;
    }
  });
  int broken = 0;
  first_broken_ = -1;
  for (size_t k = 0; k < nb; ++k) {
    if (bond_newly_broken_[k] && first_broken_ < 0) first_broken_ = static_cast<int64_t>(k);
    broken += bond_newly_broken_[k];
  }
  return broken;
}

// [SECTION] Broad phase -----------------------------------------------------------

void DemCpuBackend::broad_phase() {
  const size_t n = p_->size();
  double rmax = 0.0;
  Vec2d lo{std::numeric_limits<double>::max(), std::numeric_limits<double>::max()};
  Vec2d hi{-std::numeric_limits<double>::max(), -std::numeric_limits<double>::max()};
  for (size_t i = 0; i < n; ++i) {
    const Vec2d x = p_->x[i];
    if (!std::isfinite(x.x) || !std::isfinite(x.y)) continue;
    lo.x = std::min(lo.x, x.x);
    lo.y = std::min(lo.y, x.y);
    hi.x = std::max(hi.x, x.x);
    hi.y = std::max(hi.y, x.y);
    rmax = std::max(rmax, p_->radius[i]);
  }
  if (!(lo.x <= hi.x)) {
    lo = hi = Vec2d{};
  }
  // Two particles touch only when |x_i - x_j| < R_i + R_j <= 2 R_max, so with
  // cells of 2 R_max every contact lies in the 3x3 cells around a particle.
  cell_ = rmax > 0.0 ? 2.0 * rmax : 1.0;
  const double cap = std::max<double>(1024.0, 4.0 * static_cast<double>(n));
  for (;;) {
    double w = (hi.x - lo.x) / cell_ + 1.0, h = (hi.y - lo.y) / cell_ + 1.0;
    if (w * h <= cap) break;
    cell_ *= 2.0;  // sparse, spread-out state: coarser cells keep memory O(n)
  }
  grid_lo_ = lo;
  gx_ = static_cast<int>((hi.x - lo.x) / cell_) + 1;
  gy_ = static_cast<int>((hi.y - lo.y) / cell_) + 1;
  const size_t nc = static_cast<size_t>(gx_) * static_cast<size_t>(gy_);
  cell_of_.resize(n);
  cell_items_.resize(n);
  cell_start_.assign(nc + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const Vec2d x = p_->x[i];
    int cx = 0, cy = 0;
    if (std::isfinite(x.x) && std::isfinite(x.y)) {
      cx = std::min(std::max(static_cast<int>((x.x - lo.x) / cell_), 0), gx_ - 1);
      cy = std::min(std::max(static_cast<int>((x.y - lo.y) / cell_), 0), gy_ - 1);
    }
    cell_of_[i] = static_cast<uint32_t>(cy * gx_ + cx);
    ++cell_start_[cell_of_[i] + 1];
  }
  for (size_t c = 0; c < nc; ++c) cell_start_[c + 1] += cell_start_[c];
  // Stable counting sort: within a cell, particles stay in index order.
  cursor_.assign(cell_start_.begin(), cell_start_.end() - 1);
  for (size_t i = 0; i < n; ++i) cell_items_[cursor_[cell_of_[i]]++] = static_cast<uint32_t>(i);
}

// [SECTION] Unbonded contacts (Hertz-Mindlin) --------------------------------------

void DemCpuBackend::contact_pass(const DemStepInput& in) {
  const size_t n = p_->size();
  const DemParticles& p = *p_;
  const DemBonds& b = *b_;
  const double dt = in.dt;
  const int mc = in.material_count;
  std::vector<PairProps>& props = pair_props_;  // reused: no per-step allocation
  props.resize(static_cast<size_t>(mc) * mc);
  for (int a = 0; a < mc; ++a)
    for (int c = 0; c < mc; ++c)
      props[static_cast<size_t>(a) * mc + c] = pair_props(in.materials[a], in.materials[c]);
  worker_cand_.resize(worker_pairs_.size());

  // Last step's contacts become this step's history.
  prev_pairs_.swap(pairs_);
  prev_walls_.swap(walls_);
  prev_pair_start_.swap(pair_start_);
  prev_wall_start_.swap(wall_start_);
  const bool have_prev = prev_pair_start_.size() == n + 1 && prev_wall_start_.size() == n + 1;

  for (auto& w : worker_pairs_) w.clear();
  for (auto& w : worker_walls_) w.clear();

  pool_.parallel_for(
      static_cast<int64_t>(n), kParticleGrain, [&](int64_t i0, int64_t i1, int worker) {
        std::vector<DemContact>& out = worker_pairs_[static_cast<size_t>(worker)];
        std::vector<DemContact>& wout = worker_walls_[static_cast<size_t>(worker)];
        std::vector<uint32_t>& cand = worker_cand_[static_cast<size_t>(worker)];
        for (int64_t ii = i0; ii < i1; ++ii) {
          const uint32_t i = static_cast<uint32_t>(ii);
          const Vec2d xi = p.x[i];
          const double Ri = p.radius[i];
          // Candidates j > i in the 3x3 cells, in ascending j.
          cand.clear();
          const int cx = static_cast<int>(cell_of_[i] % static_cast<uint32_t>(gx_));
          const int cy = static_cast<int>(cell_of_[i] / static_cast<uint32_t>(gx_));
          for (int yy = std::max(cy - 1, 0); yy <= std::min(cy + 1, gy_ - 1); ++yy)
            for (int xx = std::max(cx - 1, 0); xx <= std::min(cx + 1, gx_ - 1); ++xx) {
              const size_t c = static_cast<size_t>(yy) * gx_ + xx;
              for (uint32_t o = cell_start_[c]; o < cell_start_[c + 1]; ++o) {
                const uint32_t j = cell_items_[o];
                if (j <= i) continue;
                const double rr = Ri + p.radius[j];
                if (length2(p.x[j] - xi) < rr * rr) cand.push_back(j);
              }
            }
          std::sort(cand.begin(), cand.end());
          uint32_t bk = bond_start_[i];
          const uint32_t bk_end = bond_start_[i + 1];
          uint32_t hk = have_prev ? prev_pair_start_[i] : 0;
          const uint32_t hk_end = have_prev ? prev_pair_start_[i + 1] : 0;
          for (uint32_t j : cand) {
            // Bonded pairs are handled by the bond pass only.
            while (bk < bk_end && b.j[bk] < j) ++bk;
            if (bk < bk_end && b.j[bk] == j && !b.broken[bk]) continue;
            ContactHistory h;
            while (hk < hk_end && prev_pairs_[hk].j < j) ++hk;
            if (hk < hk_end && prev_pairs_[hk].j == j) {
              h.xi = prev_pairs_[hk].xi;
              h.mr = prev_pairs_[hk].mr;
            }

            const Vec2d dx = p.x[j] - xi;
            const double d = length(dx);
            const Vec2d nrm = d > 0.0 ? dx / d : Vec2d{1.0, 0.0};
            const Vec2d t = perp(nrm);
            const double Rj = p.radius[j];
            const double delta = Ri + Rj - d;
            const double ai = Ri - 0.5 * delta, aj = Rj - 0.5 * delta;
            const Vec2d dv = p.v[j] - p.v[i];
            const double vn = dot(dv, nrm);
            const double vt = dot(dv, t) - (ai * p.omega[i] + aj * p.omega[j]);
            const double R_eff = Ri * Rj / (Ri + Rj);
            const double m_eff = p.mass[i] * p.mass[j] / (p.mass[i] + p.mass[j]);
            const PairProps& pp = props[static_cast<size_t>(p.material[i]) * mc + p.material[j]];
            const double I_roll =
                rolling_inertia(p.inertia[i], p.mass[i], Ri, p.inertia[j], p.mass[j], Rj);
            ContactForce f = hertz_mindlin(pp, R_eff, m_eff, I_roll, delta, vn, vt,
                                           p.omega[i] - p.omega[j], dt, h);
            DemContact c;
            c.i = i;
            c.j = j;
            c.point = xi + ai * nrm;
            c.f_i = -(f.fn * nrm + f.ft * t);
            // Moments of the contact force about each centre, plus rolling.
            c.t_i = -ai * f.ft + f.m_roll;
            c.t_j = -aj * f.ft - f.m_roll;
            c.overlap = delta;
            c.xi = h.xi;
            c.mr = h.mr;
            out.push_back(c);
          }
          // Walls: the wall plays "i" (infinite radius, mass and inertia; it may
          // move), the particle "j"; the normal points from the wall to the particle.
          uint32_t wk = have_prev ? prev_wall_start_[i] : 0;
          const uint32_t wk_end = have_prev ? prev_wall_start_[i + 1] : 0;
          for (int w = 0; w < in.wall_count; ++w) {
            const DemWall& wall = in.walls[w];
            Vec2d nrm;
            double delta;
            if (!wall_contact(wall, xi, Ri, nrm, delta)) continue;
            ContactHistory h;
            while (wk < wk_end && prev_walls_[wk].j < static_cast<uint32_t>(w)) ++wk;
            if (wk < wk_end && prev_walls_[wk].j == static_cast<uint32_t>(w)) {
              h.xi = prev_walls_[wk].xi;
              h.mr = prev_walls_[wk].mr;
            }
            const PairProps& pp = props[static_cast<size_t>(wall.material) * mc + p.material[i]];
            const WallContact f = wall_force(wall, pp, nrm, delta, xi, p.v[i], p.omega[i], Ri,
                                             p.mass[i], p.inertia[i], dt, h);
            DemContact c;
            c.i = i;
            c.j = static_cast<uint32_t>(w);
            c.point = f.point;
            c.f_i = f.f;
            c.t_i = f.t_p;
            c.t_j = f.t_w;
            c.overlap = delta;
            c.xi = h.xi;
            c.mr = h.mr;
            wout.push_back(c);
          }
        }
      });

  // Concatenate in worker (= index range) order and index by i and by j.
  pairs_.clear();
  walls_.clear();
  for (auto& w : worker_pairs_) pairs_.insert(pairs_.end(), w.begin(), w.end());
  for (auto& w : worker_walls_) walls_.insert(walls_.end(), w.begin(), w.end());
  pair_start_.assign(n + 1, 0);
  wall_start_.assign(n + 1, 0);
  pair_j_start_.assign(n + 1, 0);
  for (const DemContact& c : pairs_) {
    ++pair_start_[c.i + 1];
    ++pair_j_start_[c.j + 1];
  }
  for (const DemContact& c : walls_) ++wall_start_[c.i + 1];
  for (size_t i = 0; i < n; ++i) {
    pair_start_[i + 1] += pair_start_[i];
    wall_start_[i + 1] += wall_start_[i];
    pair_j_start_[i + 1] += pair_j_start_[i];
  }
  pairs_by_j_.resize(pairs_.size());
  cursor_.assign(pair_j_start_.begin(), pair_j_start_.end() - 1);
  for (size_t k = 0; k < pairs_.size(); ++k)
    pairs_by_j_[cursor_[pairs_[k].j]++] = static_cast<uint32_t>(k);
}

// [SECTION] Gather and integrate ------------------------------------------------

DemStepResult DemCpuBackend::integrate(const DemStepInput& in) {
  const size_t n = p_->size();
  DemParticles& p = *p_;
  const double dt = in.dt;
  const double alpha = in.solver.local_damping;
  const Vec2d g = in.solver.gravity;
  const double vlim2 = in.solver.velocity_limit * in.solver.velocity_limit;

  // Loads: total force shared equally by the particles of the group.
  std::vector<Vec2d> load_share(static_cast<size_t>(in.load_count));
  for (int l = 0; l < in.load_count; ++l) {
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) count += p.group[i] == in.loads[l].group ? 1 : 0;
    Vec2d total = in.loads[l].force + in.time * in.loads[l].rate;
    load_share[l] = count ? total / static_cast<double>(count) : Vec2d{};
  }
  // Grab slots.
  grab_slot_.assign(in.grab.count > 0 ? n : 0, -1);
  for (int q = 0; q < in.grab.count; ++q)
    if (in.grab.index[q] < n) grab_slot_[in.grab.index[q]] = q;
  const double ks = in.grab.stiffness, kd = 2.0 * std::sqrt(in.grab.stiffness);
  const PointForce& pf = in.point;

  worker_bad_.assign(static_cast<size_t>(pool_.size()), std::numeric_limits<int64_t>::max());
  worker_vmax2_.assign(static_cast<size_t>(pool_.size()), 0.0);
  pool_.parallel_for(
      static_cast<int64_t>(n), kParticleGrain, [&](int64_t i0, int64_t i1, int worker) {
        int64_t my_bad = std::numeric_limits<int64_t>::max();
        double my_vmax2 = 0.0;
        for (int64_t ii = i0; ii < i1; ++ii) {
          const uint32_t i = static_cast<uint32_t>(ii);
          // Fixed summation order (see dem_cpu.h).
          Vec2d F{};
          double M = 0.0;
          for (uint32_t k = pair_start_[i]; k < pair_start_[i + 1]; ++k) {
            F += pairs_[k].f_i;
            M += pairs_[k].t_i;
          }
          for (uint32_t k = pair_j_start_[i]; k < pair_j_start_[i + 1]; ++k) {
            const DemContact& c = pairs_[pairs_by_j_[k]];
            F -= c.f_i;
            M += c.t_j;
          }
          for (uint32_t k = wall_start_[i]; k < wall_start_[i + 1]; ++k) {
            F += walls_[k].f_i;
            M += walls_[k].t_i;
          }
          for (uint32_t k = bond_start_[i]; k < bond_start_[i + 1]; ++k) {
            F += bond_f_[k];
            M += bond_ti_[k];
          }
          for (uint32_t k = bond_j_start_[i]; k < bond_j_start_[i + 1]; ++k) {
            const uint32_t bk = bonds_by_j_[k];
            F -= bond_f_[bk];
            M += bond_tj_[bk];
          }
          const double m = p.mass[i];
          F += m * g;
          if (in.use_fext) F += p.fext[i];
          for (int l = 0; l < in.load_count; ++l)
            if (p.group[i] == in.loads[l].group) F += load_share[l];
          if (pf.active) {
            Vec2d d = Vec2d{pf.pos.x, pf.pos.y} - p.x[i];
            double r = length(d);
            if (r < pf.radius && r > 1e-12) F += (m * pf.strength * (1.0 - r / pf.radius) / r) * d;
          }
          F.x = local_damp(F.x, p.v[i].x, alpha);
          F.y = local_damp(F.y, p.v[i].y, alpha);
          M = local_damp(M, p.omega[i], alpha);
          if (!grab_slot_.empty() && grab_slot_[i] >= 0) {
            const int q = grab_slot_[i];
            Vec2d d = in.grab.target + in.grab.offset[q] - p.x[i];
            F += m * (ks * d - kd * p.v[i]);
          }
          // Symplectic Euler. Fixed particles are kinematic: they keep their
          // velocity and spin whatever the forces (clamps, driven walls of grains).
          if (!p.fixed[i]) {
            p.v[i] += (dt / m) * F;
            p.omega[i] += dt * M / p.inertia[i];
          }
          p.x[i] += dt * p.v[i];
          p.theta[i] += dt * p.omega[i];
          const double s2 = length2(p.v[i]);
          if (!(s2 <= vlim2) || !std::isfinite(p.x[i].x) || !std::isfinite(p.x[i].y) ||
              !std::isfinite(p.omega[i]) || !std::isfinite(p.theta[i])) {
            my_bad = std::min<int64_t>(my_bad, ii);
          } else {
            my_vmax2 = std::max(my_vmax2, s2);
          }
        }
        worker_bad_[static_cast<size_t>(worker)] =
            std::min(worker_bad_[static_cast<size_t>(worker)], my_bad);
        worker_vmax2_[static_cast<size_t>(worker)] =
            std::max(worker_vmax2_[static_cast<size_t>(worker)], my_vmax2);
      });
  DemStepResult r;
  const int64_t first_bad = *std::min_element(worker_bad_.begin(), worker_bad_.end());
  if (first_bad != std::numeric_limits<int64_t>::max()) {
    r.ok = false;
    r.bad_index = first_bad;
  }
  r.max_speed = std::sqrt(*std::max_element(worker_vmax2_.begin(), worker_vmax2_.end()));
  return r;
}

void DemCpuBackend::bond_advance_pass(const DemStepInput& in) {
  const DemParticles& p = *p_;
  DemBonds& b = *b_;
  const double dt = in.dt;
  pool_.parallel_for(static_cast<int64_t>(b.size()), kBondGrain, [&](int64_t k0, int64_t k1, int) {
    for (int64_t k = k0; k < k1; ++k) {
      if (b.broken[k]) continue;
      const uint32_t i = b.i[k], j = b.j[k];
      bond_advance(p.x[i], p.x[j], p.v[i], p.v[j], p.omega[i], p.omega[j], p.radius[i], p.radius[j],
                   dt, b.shear_disp[k], b.bend_angle[k]);
    }
  });
}

DemStepResult DemCpuBackend::step(const DemStepInput& in) {
  if (p_->size() != topo_particles_ || b_->size() != topo_bonds_) host_changed();
  const int broken = bond_pass(in);
  broad_phase();
  contact_pass(in);
  DemStepResult r = integrate(in);
  bond_advance_pass(in);
  if (in.wall_reaction) wall_reaction(in);
  r.bonds_broken = broken;
  r.first_broken = first_broken_;
  if (first_broken_ >= 0) r.first_broken_mode = b_->mode[static_cast<size_t>(first_broken_)];
  r.contacts = pairs_.size();
  r.wall_contacts = walls_.size();
  return r;
}

void DemCpuBackend::wall_reaction(const DemStepInput& in) const {
  // walls_ is sorted by particle, then wall: the sums run in particle index
  // order whatever the thread count.
  double* out = in.wall_reaction;
  std::fill(out, out + 3 * static_cast<size_t>(std::max(in.wall_count, 0)), 0.0);
  for (const DemContact& c : walls_) {
    double* r = out + 3 * static_cast<size_t>(c.j);
    r[0] -= c.f_i.x;
    r[1] -= c.f_i.y;
    r[2] += c.t_j;
  }
}

void DemCpuBackend::read_contacts(std::vector<DemContact>& pairs,
                                  std::vector<DemContact>& walls) const {
  pairs = pairs_;
  walls = walls_;
}

bool DemCpuBackend::save_history(DemHistory& h) const {
  h = DemHistory{pairs_, walls_, pair_start_, wall_start_};
  return true;
}

bool DemCpuBackend::load_history(const DemHistory& h) {
  std::tie(pairs_, walls_, pair_start_, wall_start_) =
      std::tie(h.pairs, h.walls, h.pair_start, h.wall_start);
  return true;
}

// [SECTION] Factory ------------------------------------------------------------------

#if defined(PS_HAVE_CUDA)
std::unique_ptr<DemBackend> make_dem_cuda_backend();  // dem_cuda.cu
#endif

std::unique_ptr<DemBackend> make_dem_backend(const std::string& kind, int threads) {
  if (kind == "cpu") return std::make_unique<DemCpuBackend>(threads);
  if (kind ==
      "auto")  // a caller's bug, not a user's: "auto" needs the self-check gate above this layer
    throw std::logic_error(
        "backend 'auto' must be resolved with choose_auto_backend() (sim/selfcheck/verdict.h) first");
  if (kind == "cuda") {
#if defined(PS_HAVE_CUDA)
    if (cuda_device_available()) return make_dem_cuda_backend();
    throw std::runtime_error("backend 'cuda': no CUDA device is present");
#else
    throw std::runtime_error("backend 'cuda': this build has no CUDA support (nvcc was not found)");
#endif
  }
  throw std::runtime_error("unknown DEM backend '" + kind + "' (expected cpu, cuda or auto)");
}

}  // namespace dem
}  // namespace ps
