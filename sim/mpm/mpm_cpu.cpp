#include "sim/mpm/mpm_cpu.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include "sim/mpm/mpm_kernels.h"
#include "sim/mpm/mpm_simd.h"

namespace ps {

MpmCpuBackend::MpmCpuBackend(int threads, bool lanes) : pool_(threads), lanes_(lanes) {}

std::string MpmCpuBackend::name() const {
  return "cpu (" + std::to_string(pool_.size()) + (pool_.size() == 1 ? " thread)" : " threads)");
}

// [SECTION] Bucketing ---------------------------------------------------------------
// Block key of a particle: the 8x8-cell block holding its stencil's base node.

void MpmCpuBackend::bucket(const SubstepInput& in) {
  const GridSpec& g = in.grid;
  const size_t n = p_->size();
  blocks_x_ = (g.nodes_x() + kBlock - 1) / kBlock;
  blocks_y_ = (g.nodes_y() + kBlock - 1) / kBlock;
  const size_t nb = static_cast<size_t>(blocks_x_) * blocks_y_;
  // Keys come from the previous G2P unless the particles, grid or kernel changed.
  const bool keys_valid = keys_valid_ && block_of_.size() == n && key_kernel_ == in.solver.kernel &&
                          key_grid_nx_ == g.nx && key_grid_ny_ == g.ny && key_dx_ == g.dx;
  if (!keys_valid) {
    block_of_.resize(n);
    const Kernel k = in.solver.kernel;
    pool_.parallel_for(static_cast<int64_t>(n), 4096, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) block_of_[i] = block_key(k, g, p_->x[i]);
    });
  }
  order_.resize(n);
  block_start_.assign(nb + 1, 0);
  // Stable counting sort: within a block, particles stay in index order.
  for (size_t i = 0; i < n; ++i) ++block_start_[block_of_[i] + 1];
  for (size_t b = 0; b < nb; ++b) block_start_[b + 1] += block_start_[b];
  cursor_.assign(block_start_.begin(), block_start_.end() - 1);
  for (size_t i = 0; i < n; ++i) order_[cursor_[block_of_[i]]++] = static_cast<uint32_t>(i);
  for (auto& c : color_blocks_) c.clear();
  for (int by = 0; by < blocks_y_; ++by)
    for (int bx = 0; bx < blocks_x_; ++bx) {
      uint32_t b = static_cast<uint32_t>(by * blocks_x_ + bx);
      if (block_start_[b + 1] > block_start_[b])
        color_blocks_[(by & 1) * 2 + (bx & 1)].push_back(b);
    }
}

// [SECTION] P2G ------------------------------------------------------------------------

namespace {
/// Whether a fluid of the scene corrects its volume (mpm::volume_corrected_J):
/// the walls then mirror it (its volume and its stress) and hold matter at
/// their faces.
bool corrects_volume(const SubstepInput& in) {
  for (int k = 0; k < in.material_count; ++k)
    if (mpm::volume_correction_step(in.materials[k], in.dt) > 0.f) return true;
  return false;
}
}  // namespace

void MpmCpuBackend::p2g(const SubstepInput& in) {
  const size_t n = p_->size();
  const float dt = in.dt;
  // Grab: a critically damped spring pulls grabbed particles to the target.
  if (in.grab.count > 0) {
    for (int q = 0; q < in.grab.count; ++q) {
      uint32_t i = in.grab.index[q];
      if (i >= n) continue;
      const float ks = in.grab.stiffness_each ? in.grab.stiffness_each[q] : in.grab.stiffness;
      const float kd = 2.f * std::sqrt(ks);
      Vec2 d = in.grab.target + in.grab.offset[q] - p_->x[i];
      p_->v[i] += dt * (ks * d - kd * p_->v[i]);
    }
  }
  pool_.parallel_for(static_cast<int64_t>(grid_.size()), 16384, [&](int64_t b, int64_t e, int) {
    std::fill(grid_.begin() + b, grid_.begin() + e, Node{0.f, 0.f, 0.f, 0.f});
  });
  const bool poly = in.solver.transfer == Transfer::PolyPIC;
  const bool apic = in.solver.transfer == Transfer::APIC || poly;  // PolyPIC = APIC + higher modes
  const bool flip = in.solver.transfer == Transfer::FLIP;
  if (poly) {
    if (const char* why = mpm::transfer_kernel_error(in.solver.transfer, in.solver.kernel))
      throw std::invalid_argument(why);
    if (p_->poly.size() != n) p_->poly.resize(n);  // arrays filled outside MpmParticles' helpers
  }
  if (flip) {
    pool_.parallel_for(static_cast<int64_t>(grid_v_old_.size()), 16384,
                       [&](int64_t b, int64_t e, int) {
                         std::fill(grid_v_old_.begin() + b, grid_v_old_.begin() + e, Vec2{});
                       });
  }
  switch (in.solver.kernel) {
    case Kernel::Linear:
      flip ? scatter<Kernel::Linear, true>(in, apic) : scatter<Kernel::Linear, false>(in, apic);
      break;
    case Kernel::Cubic:
      flip ? scatter<Kernel::Cubic, true>(in, apic) : scatter<Kernel::Cubic, false>(in, apic);
      break;
    default:
      if (poly)
        scatter<Kernel::Quadratic, false, true>(in, apic);
      else
        flip ? scatter<Kernel::Quadratic, true>(in, apic)
             : scatter<Kernel::Quadratic, false>(in, apic);
      break;
  }
  // The walls' mirror of a correcting fluid's stress (mpm::wall_ghost_stress):
  // one pass in block order, so the sums do not depend on the thread count.
  if (corrects_volume(in)) {
    const GridSpec& g = in.grid;
    const int b = in.solver.boundary_nodes, sx = g.nodes_x();
    const float q = -in.dt * mpm::dinv_factor(in.solver.kernel) / (g.dx * g.dx);
    const auto add = [&](int i, int j, Vec2 dp) {
      Node& nd = grid_[static_cast<size_t>(j) * sx + i];
      nd.vx += dp.x;
      nd.vy += dp.y;
    };
    for (const uint32_t i : order_) {
      const MaterialParams& mat = in.materials[p_->material[i]];
      if (!(mpm::volume_correction_step(mat, in.dt) > 0.f)) continue;
      const auto stress = [&]() {
        return (q * p_->vol0[i]) * mpm::fluid_stress(mat, p_->J[i], p_->C[i]);
      };
      mpm::wall_ghost_stress(g, b, in.solver.kernel, p_->x[i], stress, add);
    }
  }
}

// The kernel is a template parameter so the stencil loops unroll. First a
// per-particle pass (split evenly between the threads, in block order) runs
// the constitutive update (plasticity, stress) and folds each particle's
// momentum, stress and affine terms into what the scatter needs; then the
// coloured scatter only spreads them over the stencil. The split keeps the
// expensive part (SVDs, return maps) balanced however unevenly the
// particles fill the blocks of a colour. FLIP also scatters the transferred
// momentum w m_p v_p on its own (the old grid velocity, without this
// substep's stress and external impulses). POLY adds PolyPIC's extra
// modes, m_p sum_r w e_r c_r (mpm_kernels.h).
template <Kernel K, bool FLIP, bool POLY>
void MpmCpuBackend::scatter(const SubstepInput& in, bool apic) {
  static_assert(!POLY || (K == Kernel::Quadratic && !FLIP), "PolyPIC: quadratic kernel, no FLIP");
  constexpr int N = mpm::kernel_support(K);
  const GridSpec& g = in.grid;
  const float dt = in.dt;
  const float inv_dx = 1.f / g.dx;
  const size_t stride = static_cast<size_t>(g.nodes_x());
  const size_t n = order_.size();
  if (pre_.size() < n) pre_.resize(n);
  // What the scatter needs from particle i (at o in block order) and its stress tau.
  auto fold = [&](size_t o, uint32_t i, const Mat2& tau) {
    const float mp = p_->mass[i];
    const Mat2 stress = (-dt * p_->vol0[i]) * tau;
    const Mat2 affine = apic ? mp * p_->C[i] : Mat2{};
    Scatter& q = pre_[o];
    q.mv = mp * p_->v[i] + (in.use_fext ? dt * p_->fext[i] : Vec2{});
    q.vol = mpm::particle_volume(in.materials[p_->material[i]], p_->vol0[i], p_->F[i], p_->Jp[i]);
    if constexpr (K == Kernel::Linear) {
      q.A = affine;
      q.S = stress;
    } else {
      // MLS-MPM (Hu et al. 2018, eq. 29): g_ip = w D^-1 (x_i - x_p), so the
      // stress folds into the affine matrix: Q = -dt vol0 tau D^-1 + m C.
      q.A = (mpm::dinv_factor(K) * inv_dx * inv_dx) * stress + affine;
    }
  };
  auto one = [&](size_t o) {
    const uint32_t i = order_[o];
    fold(o, i,
         mpm::constitutive(in.materials[p_->material[i]], p_->F[i], p_->J[i], p_->Jp[i], p_->C[i],
                           dt));
  };
  // Fluid, jelly and snow four at a time (mpm_simd.h: the same arithmetic
  // per lane), each type apart; the other materials and the rest one by one.
  auto lanes = [&](int64_t o0, int64_t o1) {  // o1 - o0 <= kPrePassChunk
    uint32_t list[3][kPrePassChunk];
    int count[3] = {0, 0, 0};
    for (int64_t o = o0; o < o1; ++o) {
      const MaterialType t = in.materials[p_->material[order_[static_cast<size_t>(o)]]].type;
      const int k = t == MaterialType::Fluid   ? 0
                    : t == MaterialType::Jelly ? 1
                    : t == MaterialType::Snow  ? 2
                                               : -1;
      if (k < 0)
        one(static_cast<size_t>(o));
      else
        list[k][count[k]++] = static_cast<uint32_t>(o);
    }
    for (int k = 0; k < 3; ++k) {
      int g = 0;
      for (; g + 4 <= count[k]; g += 4) {
        uint32_t idx[4];
        for (int l = 0; l < 4; ++l) idx[l] = order_[list[k][g + l]];
        simd::MaterialLanes m{};
        simd::M4 F = simd::load_mats(p_->F.data(), idx), C = simd::load_mats(p_->C.data(), idx);
        simd::f4 J{}, Jp{};
        for (int l = 0; l < 4; ++l) {
          const uint32_t i = idx[l];
          m.set(l, in.materials[p_->material[i]]);
          J[l] = p_->J[i];
          Jp[l] = p_->Jp[i];
        }
        simd::M4 tau;
        if (k == 0)
          tau = simd::fluid_stress4(m, J, C);
        else if (k == 1)
          tau = simd::jelly_stress4(m, F);
        else
          tau = simd::snow_update4(m, F, Jp);
        if (k == 2) {
          simd::store_mats(F, p_->F.data(), idx);
          for (int l = 0; l < 4; ++l) p_->Jp[idx[l]] = Jp[l];
        }
        for (int l = 0; l < 4; ++l)
          fold(list[k][g + l], idx[l], Mat2{tau.a00[l], tau.a01[l], tau.a10[l], tau.a11[l]});
      }
      for (; g < count[k]; ++g) one(list[k][g]);
    }
  };
  // Dynamic chunks: the materials cluster in block order, and a snow particle's
  // return map costs several times a water particle's pressure.
  pool_.parallel_for_dynamic(static_cast<int64_t>(n), kPrePassChunk,
                             [&](int64_t o0, int64_t o1, int) {
                               for (int64_t b = o0; b < o1; b += kPrePassChunk) {
                                 const int64_t e = std::min<int64_t>(o1, b + kPrePassChunk);
                                 if (lanes_)
                                   lanes(b, e);
                                 else
                                   for (int64_t o = b; o < e; ++o) one(static_cast<size_t>(o));
                               }
                             });
  for (int color = 0; color < 4; ++color) {
    const std::vector<uint32_t>& blocks = color_blocks_[color];
    // Each thread takes a run of blocks holding about the same number of
    // particles (static partition by count: block sizes vary a lot, and the
    // result does not depend on the split, blocks of a colour write disjoint nodes).
    const int parts =
        static_cast<int>(std::min<size_t>(static_cast<size_t>(pool_.size()), blocks.size()));
    split_.assign(static_cast<size_t>(parts) + 1, static_cast<int64_t>(blocks.size()));
    split_[0] = 0;
    {
      uint64_t total = 0;
      for (uint32_t blk : blocks) total += block_start_[blk + 1] - block_start_[blk];
      uint64_t acc = 0;
      int k = 1;
      for (size_t bi = 0; bi < blocks.size() && k < parts; ++bi) {
        acc += block_start_[blocks[bi] + 1] - block_start_[blocks[bi]];
        while (k < parts && acc * static_cast<uint64_t>(parts) >= total * static_cast<uint64_t>(k))
          split_[static_cast<size_t>(k++)] = static_cast<int64_t>(bi) + 1;
      }
    }
    pool_.parallel_for(parts, 1, [&](int64_t p0, int64_t p1, int) {
      for (int64_t bi = split_[static_cast<size_t>(p0)]; bi < split_[static_cast<size_t>(p1)];
           ++bi) {
        uint32_t blk = blocks[bi];
        uint32_t o = block_start_[blk];
        if (K == Kernel::Quadratic && lanes_) {
          // Four particles at a time (mpm_simd.h: the scalar loop's arithmetic
          // per lane, each node's terms added in particle order), the rest below.
          for (; o + 4 <= block_start_[blk + 1]; o += 4) {
            simd::ScatterLane lane[4];
            for (int l = 0; l < 4; ++l) {
              const uint32_t i = order_[o + static_cast<uint32_t>(l)];
              const Scatter& q = pre_[o + static_cast<uint32_t>(l)];
              const float mp = p_->mass[i];
              lane[l] = simd::ScatterLane{p_->x[i],
                                          q.mv,
                                          q.A,
                                          mp,
                                          FLIP ? mp * p_->v[i] : Vec2{},
                                          POLY ? &p_->poly[i] : nullptr,
                                          q.vol};
            }
            simd::quad_scatter4<FLIP, POLY>(grid_.data(), grid_v_old_.data(), stride, g, lane);
          }
        }
        for (; o < block_start_[blk + 1]; ++o) {
          const uint32_t i = order_[o];
          const Scatter& q = pre_[o];
          const float mp = p_->mass[i];
          const mpm::Stencil s = mpm::make_stencil(K, g, p_->x[i]);
          if constexpr (K == Kernel::Linear) {
            for (int c = 0; c < N; ++c) {
              const size_t row0 = static_cast<size_t>(s.base_y + c) * stride + s.base_x;
              Node* row = &grid_[row0];
              for (int a = 0; a < N; ++a) {
                const float w = s.wx[a] * s.wy[c];
                if constexpr (FLIP) grid_v_old_[row0 + a] += w * (mp * p_->v[i]);
                const Vec2 dpos{(a - s.fx) * g.dx, (c - s.fy) * g.dx};
                const Vec2 d =
                    w * q.mv + w * (q.A * dpos) + q.S * mpm::grad_vector(K, s, a, c, inv_dx);
                row[a].vx += d.x;
                row[a].vy += d.y;
                row[a].m += w * mp;
                row[a].pad += w * q.vol;
              }
            }
          } else {
            const Vec2 mv0 = mp * p_->v[i];
            mpm::PolyAxis px, py;
            if constexpr (POLY) {
              px = mpm::poly_axis(s.wx, s.fx);
              py = mpm::poly_axis(s.wy, s.fy);
            }
            for (int c = 0; c < N; ++c) {
              const size_t row0 = static_cast<size_t>(s.base_y + c) * stride + s.base_x;
              Node* row = &grid_[row0];
              const float dy = (c - s.fy) * g.dx;
              for (int a = 0; a < N; ++a) {
                const float w = s.wx[a] * s.wy[c];
                if constexpr (FLIP) grid_v_old_[row0 + a] += w * mv0;
                const Vec2 dpos{(a - s.fx) * g.dx, dy};
                Vec2 d = w * (q.mv + q.A * dpos);
                if constexpr (POLY) d += mp * mpm::poly_node_velocity(p_->poly[i], px, py, a, c);
                row[a].vx += d.x;
                row[a].vy += d.y;
                row[a].m += w * mp;
                row[a].pad += w * q.vol;  // the volume channel (mpm::volume_corrected_J)
              }
            }
          }
        }
      }
    });
  }
}

// [SECTION] Grid update --------------------------------------------------------------

void MpmCpuBackend::grid_update(const SubstepInput& in) {
  const GridSpec& g = in.grid;
  mpm::GridUpdateParams gp{
      g,        in.solver.gravity,      in.dt, in.solver.boundary, in.solver.boundary_nodes,
      in.point, in.solver.wall_friction};
  const int sx = g.nodes_x(), sy = g.nodes_y();
  const bool keep_old = in.solver.transfer == Transfer::FLIP;
  // Where a fluid corrects its J, the walls hold matter at their faces (their
  // volume joins the channel in finish_volume_channel).
  gp.face_contact = corrects_volume(in);
  pool_.parallel_for(sy, 8, [&](int64_t j0, int64_t j1, int) {
    for (int64_t j = j0; j < j1; ++j)
      for (int i = 0; i < sx; ++i) {
        size_t node = static_cast<size_t>(j) * sx + i;
        if (keep_old) grid_v_old_[node] = mpm::flip_old_velocity(grid_[node].m, grid_v_old_[node]);
        Vec2 mv{grid_[node].vx, grid_[node].vy};
        mpm::grid_update_node(i, static_cast<int>(j), grid_[node].m, mv, gp);
        grid_[node].vx = mv.x;
        grid_[node].vy = mv.y;
      }
  });
}

// After P2G, before G2P (and the MUSL pass, which reads the same channel):
// the walls' mirror images first (mpm::wall_mirrored_volume, folded in place
// along the rows, then along the columns, which sums the corners' four), then
// the filter, rows then columns; last the flags, then the marks, as every
// node reads its neighbours.
void MpmCpuBackend::finish_volume_channel(const SubstepInput& in) {
  const GridSpec& g = in.grid;
  const int sx = g.nodes_x(), sy = g.nodes_y();
  const int b = in.solver.boundary_nodes;
  const auto fold = [&](size_t first, size_t step, int n) {  // one row or column of n nodes
    for (int i = 0; i < n; ++i) {
      const int m = mpm::wall_mirror_node(i, n - 1, b);
      if (m < i) continue;  // each pair once (m == i: the face doubles)
      float& a = grid_[first + step * i].pad;
      float& c = grid_[first + step * m].pad;
      a = c = a + c;
    }
  };
  pool_.parallel_for(sy, 16, [&](int64_t j0, int64_t j1, int) {
    for (int64_t j = j0; j < j1; ++j) fold(static_cast<size_t>(j) * sx, 1, sx);
  });
  pool_.parallel_for(sx, 16, [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) fold(static_cast<size_t>(i), static_cast<size_t>(sx), sy);
  });
  vol_filtered_.resize(grid_.size());
  if (in.collider_count > 0) mirror_bodies(in);
  // The filter (mpm::volume_filter_121): along the rows into the scratch, then along the columns back.
  pool_.parallel_for(sy, 16, [&](int64_t j0, int64_t j1, int) {
    for (int64_t j = j0; j < j1; ++j) {
      const Node* r = &grid_[static_cast<size_t>(j) * sx];
      float* o = &vol_filtered_[static_cast<size_t>(j) * sx];
      const auto at = [&](int i) { return r[i].pad; };
      for (int i = 0; i < sx; ++i) o[i] = mpm::volume_filter_121(at, i, sx);
    }
  });
  pool_.parallel_for(sy, 16, [&](int64_t j0, int64_t j1, int) {
    for (int64_t j = j0; j < j1; ++j) {
      Node* r = &grid_[static_cast<size_t>(j) * sx];
      for (int i = 0; i < sx; ++i) {
        const auto at = [&](int y) { return vol_filtered_[static_cast<size_t>(y) * sx + i]; };
        r[i].pad = mpm::volume_filter_121(at, static_cast<int>(j), sy);
      }
    }
  });
  const float inv_cell = 1.f / (g.dx * g.dx);
  interior_.resize(3 * grid_.size());
  uint8_t* occ = interior_.data();
  uint8_t* rows = occ + grid_.size();
  uint8_t* flags = rows + grid_.size();
  const auto vol = [&](int x, int y) {
    return grid_[static_cast<size_t>(y) * sx + x].pad * inv_cell;
  };
  for (int pass = 0; pass < 3; ++pass)
    pool_.parallel_for(sy, 16, [&](int64_t j0, int64_t j1, int) {
      mpm::volume_interior_pass(pass, static_cast<int>(j0), static_cast<int>(j1), vol, sx, sy,
                                in.solver.kernel, occ, rows, flags);
    });
  pool_.parallel_for(static_cast<int64_t>(grid_.size()), 16384, [&](int64_t b, int64_t e, int) {
    for (int64_t k = b; k < e; ++k)
      if (!flags[k]) grid_[k].pad = mpm::kVolumeNotInterior;
  });
}

// The bodies' mirror in the volume channel (mpm::body_mirrored_volume) on the
// nodes within reach of a part, read from a copy of the channel with the
// walls' mirror in and no body's yet.
void MpmCpuBackend::mirror_bodies(const SubstepInput& in) {
  const GridSpec& g = in.grid;
  const int sx = g.nodes_x(), sy = g.nodes_y();
  float* copy = vol_filtered_.data();
  pool_.parallel_for(static_cast<int64_t>(grid_.size()), 16384, [&](int64_t b, int64_t e, int) {
    for (int64_t k = b; k < e; ++k) copy[k] = grid_[static_cast<size_t>(k)].pad;
  });
  const auto vol = [&](int x, int y) { return copy[static_cast<size_t>(y) * sx + x]; };
  const float inv_dx = 1.f / g.dx;
  const float reach = mpm::body_mirror_reach(g, in.solver.kernel);
  int i0 = sx, i1 = -1, j0 = sy, j1 = -1;  // the parts' reach, all together
  for (int k = 0; k < in.collider_count; ++k) {
    const RigidCollider& c = in.colliders[k];
    i0 = std::min(i0, static_cast<int>(std::ceil((c.lo.x - reach - g.origin.x) * inv_dx)));
    i1 = std::max(i1, static_cast<int>(std::floor((c.hi.x + reach - g.origin.x) * inv_dx)));
    j0 = std::min(j0, static_cast<int>(std::ceil((c.lo.y - reach - g.origin.y) * inv_dx)));
    j1 = std::max(j1, static_cast<int>(std::floor((c.hi.y + reach - g.origin.y) * inv_dx)));
  }
  i0 = std::max(i0, 0);
  j0 = std::max(j0, 0);
  i1 = std::min(i1, sx - 1);
  j1 = std::min(j1, sy - 1);
  if (i1 < i0 || j1 < j0) return;
  pool_.parallel_for(j1 - j0 + 1, 8, [&](int64_t b, int64_t e, int) {
    for (int64_t j = j0 + b; j < j0 + e; ++j)
      for (int i = i0; i <= i1; ++i)
        grid_[static_cast<size_t>(j) * sx + i].pad = mpm::body_mirrored_volume(
            vol, g, in.solver.kernel, in.colliders, in.collider_count, i, static_cast<int>(j));
  });
}

void MpmCpuBackend::collide_grid(const SubstepInput& in, bool impulses) {
  const GridSpec& g = in.grid;
  const int sx = g.nodes_x(), sy = g.nodes_y();
  const float inv_dx = 1.f / g.dx;
  const float skin = mpm::kColliderSkin * g.dx;
  for (int k = 0; k < in.collider_count; ++k) {
    const RigidCollider& c = in.colliders[k];
    const int i0 = std::max(0, static_cast<int>(std::ceil((c.lo.x - skin - g.origin.x) * inv_dx)));
    const int i1 =
        std::min(sx - 1, static_cast<int>(std::floor((c.hi.x + skin - g.origin.x) * inv_dx)));
    const int j0 = std::max(0, static_cast<int>(std::ceil((c.lo.y - skin - g.origin.y) * inv_dx)));
    const int j1 =
        std::min(sy - 1, static_cast<int>(std::floor((c.hi.y + skin - g.origin.y) * inv_dx)));
    double jx = 0.0, jy = 0.0, L = 0.0;
    for (int j = j0; j <= j1; ++j)
      for (int i = i0; i <= i1; ++i) {
        Node& nd = grid_[static_cast<size_t>(j) * sx + i];
        const Vec2 xi{g.origin.x + i * g.dx, g.origin.y + j * g.dx};
        if (!(nd.m > 0.f)) continue;
        Vec2 v{nd.vx, nd.vy};
        const Vec2 v0 = v;
        if (!mpm::collide_node(c, xi, v, skin)) continue;
        nd.vx = v.x;
        nd.vy = v.y;
        // The matter's momentum change, taken from the body.
        const double dpx = static_cast<double>(nd.m) * (static_cast<double>(v.x) - v0.x);
        const double dpy = static_cast<double>(nd.m) * (static_cast<double>(v.y) - v0.y);
        jx -= dpx;
        jy -= dpy;
        L -= (static_cast<double>(xi.x) - c.c.x) * dpy - (static_cast<double>(xi.y) - c.c.y) * dpx;
      }
    if (impulses && in.collider_impulse) {
      in.collider_impulse[3 * k] += jx;
      in.collider_impulse[3 * k + 1] += jy;
      in.collider_impulse[3 * k + 2] += L;
    }
  }
}

// [SECTION] G2P ------------------------------------------------------------------------

SubstepResult MpmCpuBackend::g2p(const SubstepInput& in) {
  const bool flip = in.solver.transfer == Transfer::FLIP;
  const bool poly = in.solver.transfer == Transfer::PolyPIC;  // quadratic only (checked in p2g)
  switch (in.solver.kernel) {
    case Kernel::Linear:
      return flip ? gather<Kernel::Linear, true>(in) : gather<Kernel::Linear, false>(in);
    case Kernel::Cubic:
      return flip ? gather<Kernel::Cubic, true>(in) : gather<Kernel::Cubic, false>(in);
    default:
      if (poly) return gather<Kernel::Quadratic, false, true>(in);
      return flip ? gather<Kernel::Quadratic, true>(in) : gather<Kernel::Quadratic, false>(in);
  }
}

template <bool kFinal, class Body>
SubstepResult MpmCpuBackend::for_particles(const SubstepInput& in, Body body) {
  return for_particle_runs<kFinal>(in, [&](int64_t b, int64_t e, auto&& report) {
    for (int64_t i = b; i < e; ++i) report(static_cast<size_t>(i), body(static_cast<size_t>(i)));
  });
}

template <bool kFinal, class Run>
SubstepResult MpmCpuBackend::for_particle_runs(const SubstepInput& in, Run run) {
  if constexpr (!kFinal) {  // a first pass (MUSL follows): no checks, keys not yet written
    pool_.parallel_for(static_cast<int64_t>(p_->size()), 2048,
                       [&](int64_t b, int64_t e, int) { run(b, e, [](size_t, bool) {}); });
    return SubstepResult{};
  }
  const size_t n = p_->size();
  std::vector<int64_t>& bad = worker_bad_;
  std::vector<float>& vmax2 = worker_vmax2_;
  bad.assign(static_cast<size_t>(pool_.size()), std::numeric_limits<int64_t>::max());
  vmax2.assign(static_cast<size_t>(pool_.size()), 0.f);
  pool_.parallel_for_dynamic(static_cast<int64_t>(n), 512, [&](int64_t b, int64_t e, int worker) {
    int64_t my_bad = std::numeric_limits<int64_t>::max();
    float my_vmax2 = 0.f;
    run(b, e, [&](size_t i, bool ok) {
      if (!ok)
        my_bad = std::min<int64_t>(my_bad, static_cast<int64_t>(i));
      else
        my_vmax2 = std::max(my_vmax2, length2(p_->v[i]));
    });
    bad[static_cast<size_t>(worker)] = std::min(bad[static_cast<size_t>(worker)], my_bad);
    vmax2[static_cast<size_t>(worker)] = std::max(vmax2[static_cast<size_t>(worker)], my_vmax2);
  });
  const GridSpec& g = in.grid;
  keys_valid_ = true;
  key_kernel_ = in.solver.kernel;
  key_grid_nx_ = g.nx;
  key_grid_ny_ = g.ny;
  key_dx_ = g.dx;
  SubstepResult r;
  int64_t first_bad = *std::min_element(bad.begin(), bad.end());
  if (first_bad != std::numeric_limits<int64_t>::max()) {
    r.ok = false;
    r.bad_index = first_bad;
  }
  r.max_speed = std::sqrt(*std::max_element(vmax2.begin(), vmax2.end()));
  return r;
}

bool MpmCpuBackend::finish_particle(size_t i, Kernel k, const Mat2& B, Vec2 v_move, float dt,
                                    float vlim2, const SubstepInput& in, float phi) {
  const MaterialParams& mat = in.materials[p_->material[i]];
  p_->J[i] = mpm::volume_corrected_J(p_->J[i], phi, mpm::volume_correction_step(mat, dt));
  mpm::update_deformation(mat.type, B, dt, p_->F[i], p_->J[i]);
  Vec2 xn = p_->x[i] + dt * v_move;
  if (in.collider_count > 0) {
    const float r = 0.5f * std::sqrt(p_->vol0[i]);
    for (int k = 0; k < in.collider_count; ++k) mpm::push_out(in.colliders[k], xn, r);
  }
  xn = mpm::clamp_to_grid(in.grid, xn);
  p_->x[i] = xn;
  block_of_[i] = block_key(k, in.grid, xn);  // bucket key for the next substep
  const Mat2& F = p_->F[i];
  return length2(p_->v[i]) <= vlim2 && std::isfinite(p_->J[i]) &&
         std::isfinite(F.a00 + F.a01 + F.a10 + F.a11);
}

/// The CPU grid's rows as mpm::g2p_gather reads them: velocity and volume
/// from the interleaved nodes, FLIP's old velocity beside them.
struct MpmCpuBackend::NodeRows {
  struct Row {
    const Node* n;
    const Vec2* o;
    Vec2 v(int a) const { return Vec2{n[a].vx, n[a].vy}; }
    float vol(int a) const { return n[a].pad; }
    Vec2 old(int a) const { return o[a]; }
  };
  const Node* grid;
  const Vec2* old_v;
  size_t stride;
  template <bool>
  Row row(int x, int y) const {
    const size_t at = static_cast<size_t>(y) * stride + static_cast<size_t>(x);
    return Row{grid + at, old_v + at};
  }
};

template <Kernel K, bool FLIP, bool POLY>
SubstepResult MpmCpuBackend::gather(const SubstepInput& in) {
  static_assert(!POLY || (K == Kernel::Quadratic && !FLIP), "PolyPIC: quadratic kernel, no FLIP");
  // The linear kernel finishes F and x in a second (MUSL) pass, see musl_linear.
  constexpr bool kMusl = K == Kernel::Linear;
  const GridSpec& g = in.grid;
  const float alpha = in.solver.flip_blend;
  const float dt = in.dt;
  const float inv_dx = 1.f / g.dx;
  const size_t stride = static_cast<size_t>(g.nodes_x());
  const float vlim2 = in.solver.velocity_limit * in.solver.velocity_limit;
  const float inv_area = 1.f / (g.dx * g.dx);  // node volume -> volume fraction
  // After the sums: the new velocity, C, and F, J, x and the key (finish_particle).
  auto finish = [&](size_t i, Vec2 v_pic, Vec2 dv, const Mat2& B, float vol) {
    const Vec2 v =
        FLIP ? mpm::transfer_velocity(Transfer::FLIP, alpha, p_->v[i], v_pic, dv) : v_pic;
    p_->v[i] = v;
    p_->C[i] = B;
    if constexpr (kMusl) return true;
    const Vec2 v_adv =
        FLIP ? mpm::advect_velocity(Transfer::FLIP, in.solver.flip_advect, v, v_pic) : v;
    return finish_particle(i, K, B, v_adv, dt, vlim2, in, vol * inv_area);
  };
  const NodeRows rows{grid_.data(), grid_v_old_.data(), stride};
  auto body = [&, rows](size_t i) {
    const mpm::Stencil s = mpm::make_stencil(K, g, p_->x[i]);
    const mpm::G2PSums q =
        mpm::g2p_gather<K, FLIP, POLY, true>(s, inv_dx, rows, POLY ? &p_->poly[i] : nullptr);
    // B as a local: handing finish a member of q by reference kept all of q
    // in memory (the cubic kernel's step 7 % slower).
    const Mat2 B = q.B;
    return finish(i, q.v_pic, q.dv, B, q.vol);
  };
  SubstepResult r;
  if (K == Kernel::Quadratic && lanes_) {
    const simd::Finish4 fin{&g, dt, blocks_x_, blocks_y_, kBlock};
    // Four particles at a time (mpm_simd.h: the same arithmetic per lane),
    // the rest of a run one by one.
    r = for_particle_runs<true>(in, [&](int64_t b, int64_t e, auto&& report) {
      int64_t i = b;
      for (; i + 4 <= e; i += 4) {
        const size_t i0 = static_cast<size_t>(i);
        simd::f4 px, py;
        simd::load_positions(&p_->x[i0], px, py);
        simd::PolyModes4 modes;
        const simd::Gather4 q = simd::quad_gather4<FLIP, POLY>(grid_.data(), grid_v_old_.data(),
                                                               stride, g, px, py, &modes);
        if constexpr (POLY)
          for (int l = 0; l < 4; ++l) p_->poly[i0 + static_cast<size_t>(l)] = modes.lane(l);
        if (in.collider_count > 0) {  // finish_particle pushes them out of the bodies
          for (int l = 0; l < 4; ++l)
            report(i0 + l, finish(i0 + l, q.v_pic(l), q.dv(l), q.B(l), q.vol[l]));
          continue;
        }
        simd::f4 ax{}, ay{};  // the advection velocity
        simd::i4 fluid{};
        simd::f4 beta{};
        for (int l = 0; l < 4; ++l) {
          const size_t k = i0 + static_cast<size_t>(l);
          const Vec2 v_pic = q.v_pic(l);
          const Vec2 v =
              FLIP ? mpm::transfer_velocity(Transfer::FLIP, alpha, p_->v[k], v_pic, q.dv(l))
                   : v_pic;
          const Vec2 v_adv =
              FLIP ? mpm::advect_velocity(Transfer::FLIP, in.solver.flip_advect, v, v_pic) : v;
          p_->v[k] = v;
          ax[l] = v_adv.x;
          ay[l] = v_adv.y;
          const MaterialParams& mat = in.materials[p_->material[k]];
          fluid[l] = mat.type == MaterialType::Fluid ? -1 : 0;
          beta[l] = mpm::volume_correction_step(mat, dt);
        }
        simd::f4 c[4];
        simd::transpose4(q.b00, q.b01, q.b10, q.b11, c);
        static_assert(sizeof(Mat2) == sizeof(simd::f4), "Mat2 is four floats");
        __builtin_memcpy(static_cast<void*>(&p_->C[i0]), c, sizeof c);
        simd::quad_finish4(fin, fluid, q, ax, ay, &p_->F[i0], &p_->J[i0], &p_->x[i0],
                           &block_of_[i0], beta, q.vol * inv_area);
        for (int l = 0; l < 4; ++l) {
          const size_t k = i0 + static_cast<size_t>(l);
          const Mat2& F = p_->F[k];
          report(k, length2(p_->v[k]) <= vlim2 && std::isfinite(p_->J[k]) &&
                        std::isfinite(F.a00 + F.a01 + F.a10 + F.a11));
        }
      }
      for (; i < e; ++i) report(static_cast<size_t>(i), body(static_cast<size_t>(i)));
    });
  } else {
    r = for_particles<!kMusl>(in, body);
  }
  if constexpr (kMusl) return musl_linear<FLIP>(in);
  return r;
}

// Modified update-stress-last (MUSL; Sulsky, Zhou & Schreyer 1995) for the
// linear kernel. Its weight gradient does not vanish with its weight, so a
// node that a particle barely touches gets a finite stress force on a tiny
// mass: a huge velocity, which the gradient sum v_i grad w^T turns into a
// huge velocity gradient (the cell-crossing / small-mass instability; Steffen,
// Kirby & Berzins 2008). MUSL maps the particles' new momentum back to the
// grid (same masses), v_i' = sum w m_p v_p^{n+1} / m_i, applies the boundary,
// and takes F's velocity gradient and the motion from v_i': a mass-weighted
// average that stays bounded. Velocities (and APIC's C) come from the first
// pass, so momentum is transferred exactly as before; C (APIC's affine field,
// the viscous stress's gradient) is B' too, since the first pass's gradient is
// the unbounded one. Linear APIC therefore keeps angular momentum only
// approximately (the verify report shows how much).
template <bool FLIP>
SubstepResult MpmCpuBackend::musl_linear(const SubstepInput& in) {
  constexpr Kernel K = Kernel::Linear;
  constexpr int N = mpm::kernel_support(K);
  const GridSpec& g = in.grid;
  const float dt = in.dt;
  const float inv_dx = 1.f / g.dx;
  const size_t stride = static_cast<size_t>(g.nodes_x());
  const float vlim2 = in.solver.velocity_limit * in.solver.velocity_limit;
  // Momentum scatter over the same coloured blocks as P2G (positions have not moved).
  // PIC form (no affine term): the first pass's C is what went unbounded.
  pool_.parallel_for(static_cast<int64_t>(grid_.size()), 16384, [&](int64_t b, int64_t e, int) {
    for (int64_t k = b; k < e; ++k) grid_[k].vx = grid_[k].vy = 0.f;
  });
  for (int color = 0; color < 4; ++color) {
    const std::vector<uint32_t>& blocks = color_blocks_[color];
    pool_.parallel_for(static_cast<int64_t>(blocks.size()), 1, [&](int64_t b0, int64_t b1, int) {
      for (int64_t bi = b0; bi < b1; ++bi) {
        const uint32_t blk = blocks[bi];
        for (uint32_t o = block_start_[blk]; o < block_start_[blk + 1]; ++o) {
          const uint32_t i = order_[o];
          const Vec2 mv = p_->mass[i] * p_->v[i];
          const mpm::Stencil s = mpm::make_stencil(K, g, p_->x[i]);
          for (int c = 0; c < N; ++c) {
            Node* row = &grid_[static_cast<size_t>(s.base_y + c) * stride + s.base_x];
            for (int a = 0; a < N; ++a) {
              const Vec2 d = (s.wx[a] * s.wy[c]) * mv;
              row[a].vx += d.x;
              row[a].vy += d.y;
            }
          }
        }
      }
    });
  }
  mpm::GridUpdateParams gp{
      g,        in.solver.gravity,      in.dt, in.solver.boundary, in.solver.boundary_nodes,
      in.point, in.solver.wall_friction};
  gp.face_contact = corrects_volume(in);
  const int sx = g.nodes_x(), sy = g.nodes_y();
  pool_.parallel_for(sy, 8, [&](int64_t j0, int64_t j1, int) {
    for (int64_t j = j0; j < j1; ++j)
      for (int i = 0; i < sx; ++i) {
        Node& nd = grid_[static_cast<size_t>(j) * sx + i];
        Vec2 v = mpm::musl_node_velocity(i, static_cast<int>(j), nd.m, Vec2{nd.vx, nd.vy}, gp);
        nd.vx = v.x;
        nd.vy = v.y;
      }
  });
  // The bodies bound the mass-averaged velocities too; the momentum exchange
  // was counted on the first grid.
  if (in.collider_count > 0) collide_grid(in, false);
  return for_particles<true>(in, [&](size_t i) {
    const mpm::Stencil s = mpm::make_stencil(K, g, p_->x[i]);
    Vec2 v_grid{};
    Mat2 B{};
    float vol = 0.f;
    for (int c = 0; c < N; ++c) {
      const size_t row = static_cast<size_t>(s.base_y + c) * stride + s.base_x;
      for (int a = 0; a < N; ++a) {
        const Vec2 vi{grid_[row + a].vx, grid_[row + a].vy};
        v_grid += (s.wx[a] * s.wy[c]) * vi;
        vol += (s.wx[a] * s.wy[c]) * grid_[row + a].pad;
        B += outer(vi, mpm::grad_vector(K, s, a, c, inv_dx));
      }
    }
    const Vec2 v = p_->v[i];
    p_->C[i] = B;  // APIC's affine field and the viscosity's velocity gradient
    const Vec2 v_adv =
        FLIP ? mpm::advect_velocity(Transfer::FLIP, in.solver.flip_advect, v, v_grid) : v_grid;
    return finish_particle(i, K, B, v_adv, dt, vlim2, in, vol / (g.dx * g.dx));
  });
}

// [SECTION] Substep ---------------------------------------------------------------------

void MpmCpuBackend::read_grid(GridSpec& spec, std::vector<float>& mass,
                              std::vector<Vec2>& velocity) const {
  spec = last_grid_;
  mass.resize(grid_.size());
  velocity.resize(grid_.size());
  for (size_t k = 0; k < grid_.size(); ++k) {
    mass[k] = grid_[k].m;
    velocity[k] = Vec2{grid_[k].vx, grid_[k].vy};
  }
}

SubstepResult MpmCpuBackend::substep(const SubstepInput& in) {
  // Moving parts: this substep sees them where their rigid motion has taken
  // them since they were placed (the same pose the CUDA collide kernel computes).
  if (in.collider_count > 0 && in.colliders_move) {
    const float tau = static_cast<float>(in.time - in.collider_time);
    if (tau != 0.f) {
      moved_colliders_.resize(static_cast<size_t>(in.collider_count));
      for (int k = 0; k < in.collider_count; ++k)
        moved_colliders_[static_cast<size_t>(k)] = mpm::collider_moved(in.colliders[k], tau);
      SubstepInput moved = in;
      moved.colliders = moved_colliders_.data();
      return substep_placed(moved);
    }
  }
  return substep_placed(in);
}

SubstepResult MpmCpuBackend::substep_placed(const SubstepInput& in) {
  const size_t nodes = static_cast<size_t>(in.grid.nodes_x()) * in.grid.nodes_y();
  if (grid_.size() != nodes) {
    grid_.assign(nodes, Node{0.f, 0.f, 0.f, 0.f});
    grid_v_old_.assign(nodes, Vec2{});
  }
  last_grid_ = in.grid;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  bucket(in);
  const Clock::time_point t1 = Clock::now();
  p2g(in);
  const Clock::time_point t2 = Clock::now();
  grid_update(in);
  if (in.collider_count > 0) {
    const Clock::time_point tc = Clock::now();
    collide_grid(in, true);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - tc).count();
    collide_ms_ += (had_colliders_ ? 0.05 : 1.0) * (ms - collide_ms_);
    had_colliders_ = true;
  }
  if (corrects_volume(in)) finish_volume_channel(in);
  const Clock::time_point t3 = Clock::now();
  SubstepResult r = g2p(in);
  const Clock::time_point t4 = Clock::now();
  const Clock::time_point t[5] = {t0, t1, t2, t3, t4};
  // Moving average: the first substep sets it, later ones blend in at 5 %.
  const double a = timed_substeps_ == 0 ? 1.0 : 0.05;
  for (int k = 0; k < 4; ++k) {
    const double ms = std::chrono::duration<double, std::milli>(t[k + 1] - t[k]).count();
    phase_ms_[k] += a * (ms - phase_ms_[k]);
  }
  ++timed_substeps_;
  return r;
}

BackendStats MpmCpuBackend::stats() const {
  BackendStats s;
  s.device = "CPU, " + std::to_string(pool_.size()) + (pool_.size() == 1 ? " thread" : " threads");
  const size_t n = p_ ? p_->size() : 0;
  s.state_bytes = n * (sizeof(Vec2) * 3 + sizeof(Mat2) * 2 + sizeof(float) * 4 + 1 + 2 + 4 +
                       sizeof(PolyModes)) +
                  grid_.size() * (sizeof(Node) + sizeof(Vec2)) + n * sizeof(uint32_t) * 2;
  static const char* names[4] = {"bucket (8x8 blocks)", "P2G + constitutive", "grid update",
                                 "G2P + advect (+ MUSL, linear)"};
  s.ms_per_substep = 0.0;
  for (int k = 0; k < 4; ++k) {
    s.phases.push_back(PhaseTiming{names[k], phase_ms_[k]});
    s.ms_per_substep += phase_ms_[k];
  }
  s.notes = "deterministic coloured-block scatter";
  if (had_colliders_) {
    s.phases.push_back(PhaseTiming{"  of which rigid-body grid rule", collide_ms_});
    s.rigid_grid_ms = collide_ms_;
  }
  return s;
}

}  // namespace ps
