/// The CPU reference backend: multi-threaded and bit-deterministic whatever
/// the thread count.
///
/// Deterministic scatter: particles are bucketed (stable counting sort, by
/// index) into 8x8-cell blocks by their stencil's base node. Blocks are
/// coloured 2x2; blocks of one colour never write the same node (a stencil
/// reaches at most 3 nodes past its block), so each colour runs in parallel
/// without atomics and every node receives its contributions in one fixed
/// order: colour by colour, particle index within a block.
#pragma once
#include <algorithm>
#include <memory>
#include <vector>
#include "sim/core/thread_pool.h"
#include "sim/mpm/mpm_backend.h"
#include "sim/mpm/mpm_kernels.h"

namespace ps {

class MpmCpuBackend final : public MpmBackend {
 public:
  /// `lanes` false: the quadratic transfers and the fluid, jelly and snow
  /// constitutive updates one particle at a time instead of four
  /// (mpm_simd.h); the results are the same bit for bit (tests/sim/mpm/test_simd.cpp
  /// compares the two).
  explicit MpmCpuBackend(int threads, bool lanes = true);
  std::string name() const override;
  void bind(MpmParticles* host) override { p_ = host; }
  void host_changed() override { keys_valid_ = false; }
  void sync_to_host() override {}
  SubstepResult substep(const SubstepInput& in) override;
  void read_grid(GridSpec& spec, std::vector<float>& mass,
                 std::vector<Vec2>& velocity) const override;
  BackendStats stats() const override;

  int threads() const { return pool_.size(); }

 private:
  /// One substep with the parts where `in` has them (substep() moves them first).
  SubstepResult substep_placed(const SubstepInput& in);
  void bucket(const SubstepInput& in);
  void p2g(const SubstepInput& in);
  void grid_update(const SubstepInput& in);
  /// The rigid parts' grid rule (mpm_collider.h), serial in node order per
  /// part (deterministic sums); `impulses` false for MUSL's second grid.
  void collide_grid(const SubstepInput& in, bool impulses);
  /// The fluids' volume correction's channel, from what P2G deposited to what
  /// G2P reads: the walls' mirror images added (mpm::wall_mirrored_volume),
  /// the whole filtered (mpm::volume_filter_121), the nodes outside the
  /// interior marked (mpm::volume_node_interior).
  void finish_volume_channel(const SubstepInput& in);
  void mirror_bodies(const SubstepInput& in);
  SubstepResult g2p(const SubstepInput& in);
  /// POLY: PolyPIC's extra modes (quadratic kernel, not FLIP).
  template <Kernel K, bool FLIP, bool POLY = false>
  void scatter(const SubstepInput& in, bool apic);
  template <Kernel K, bool FLIP, bool POLY = false>
  SubstepResult gather(const SubstepInput& in);
  template <bool FLIP>
  SubstepResult musl_linear(const SubstepInput& in);
  /// F, J, position, next block key and blow-up test of particle i after its
  /// velocity is set; `phi` is the volume fraction at the particle (the fluids'
  /// volume correction, mpm::volume_corrected_J). Returns false when it blew
  /// up (|v|^2 > vlim2 or not finite).
  bool finish_particle(size_t i, Kernel k, const Mat2& B, Vec2 v_move, float dt, float vlim2,
                       const SubstepInput& in, float phi);
  /// Runs `body(i)` (returns false on blow-up) over all particles in parallel;
  /// when kFinal, reduces the lowest blown-up index and the max speed and
  /// marks the block keys valid (body wrote them).
  template <bool kFinal, class Body>
  SubstepResult for_particles(const SubstepInput& in, Body body);
  /// As for_particles, for loops that take particles in runs (four at a
  /// time): `run(b, e, report)` handles particles [b, e) and calls
  /// report(i, ok) once for each, in any order.
  template <bool kFinal, class Run>
  SubstepResult for_particle_runs(const SubstepInput& in, Run run);
  /// The block a particle's stencil starts in (inline: it runs per particle per substep).
  uint32_t block_key(Kernel k, const GridSpec& g, Vec2 x) const {
    const float inv_dx =
        1.f / g.dx;  // hoisted out of the particle loops by the compiler once inlined
    const int ix = mpm::stencil_base(k, (x.x - g.origin.x) * inv_dx);
    const int iy = mpm::stencil_base(k, (x.y - g.origin.y) * inv_dx);
    const int bx =
        std::min(static_cast<int>(static_cast<unsigned>(std::max(ix, 0)) / kBlock), blocks_x_ - 1);
    const int by =
        std::min(static_cast<int>(static_cast<unsigned>(std::max(iy, 0)) / kBlock), blocks_y_ - 1);
    return static_cast<uint32_t>(by * blocks_x_ + bx);
  }

  static constexpr int kBlock = 8;
  static constexpr int kPrePassChunk = 256;  ///< particles per chunk of the constitutive pass
  ThreadPool pool_;
  bool lanes_ = true;
  MpmParticles* p_ = nullptr;
  // Grid (node arrays, (nx+1) x (ny+1), row-major in y).
  /// One grid node: momentum (velocity after the grid update), mass and the
  /// matter's volume (`pad`: sum w V_p, the fluids' volume correction),
  /// interleaved so a stencil row touches one cache line per node and the
  /// scatter is a single 4-wide add.
  struct alignas(16) Node {
    float vx, vy, m, pad;
  };
  std::vector<Node> grid_;
  struct NodeRows;  ///< grid_ as mpm::g2p_gather reads it
  /// FLIP only: P2G accumulates the transferred momentum sum w m_p v_p here,
  /// the grid update turns it into the old velocity (mpm::flip_old_velocity).
  std::vector<Vec2> grid_v_old_;
  std::vector<uint8_t> interior_;    ///< finish_volume_channel's scratch: 3 bytes a node
  std::vector<float> vol_filtered_;  ///< ... and its filter's, along the rows: a float a node
  // Bucketing.
  int blocks_x_ = 0, blocks_y_ = 0;
  std::vector<uint32_t> block_of_;     // per particle
  std::vector<uint32_t> block_start_;  // per block + 1
  std::vector<uint32_t> order_;        // particle indices sorted by block
  std::vector<uint32_t> color_blocks_[4];
  std::vector<uint32_t> cursor_;  // counting-sort scratch
  bool keys_valid_ = false;       // block_of_ was computed by the last G2P
  Kernel key_kernel_ = Kernel::Quadratic;
  int key_grid_nx_ = 0, key_grid_ny_ = 0;
  float key_dx_ = 0.f;
  std::vector<int64_t> worker_bad_;  // per-worker reductions
  std::vector<float> worker_vmax2_;
  GridSpec last_grid_;
  double phase_ms_[4] = {0.0, 0.0, 0.0, 0.0};  // bucket, P2G, grid, G2P
  double collide_ms_ = 0.0;                    // the rigid-body grid rule, part of "grid update"
  bool had_colliders_ = false;
  std::vector<RigidCollider> moved_colliders_;  // the moving parts at this substep's start
  int64_t timed_substeps_ = 0;
  std::vector<int64_t> split_;
  /// Per particle in block order: what the scatter spreads (momentum with
  /// external impulse; MLS: the folded affine-stress matrix; linear: the
  /// affine and stress matrices apart). Filled by the constitutive pass.
  struct Scatter {
    Mat2 A, S;
    Vec2 mv;
    float vol;  ///< the particle's volume now (mpm::particle_volume): the node's volume channel
  };
  std::vector<Scatter>
      pre_;  // per colour: block runs of about equal particle counts, one per thread
};

}  // namespace ps
