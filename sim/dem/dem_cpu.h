/// The CPU reference DEM backend: multi-threaded and bit-deterministic
/// whatever the thread count.
///
/// Determinism without atomics: every parallel loop writes disjoint data.
///  - Bonds: one task per bond writes that bond's force and moments.
///  - Contacts: particles are split into contiguous index ranges; each range
///    finds the pairs (i, j > i) of its particles, sorted by j, computes
///    their forces into its own list, and the lists are concatenated in range
///    order. The result (sorted by i, then j) is the same for any split.
///  - Gather: each particle sums, in one fixed order, its contacts as i
///    (CSR by i), its contacts as j (CSR by j, built by a stable counting
///    sort), its wall contacts, its bonds as i, then its bonds as j.
///  - Wall reactions: after the parallel part, one pass over the wall
///    contacts (sorted by particle, then wall) in particle index order.
#pragma once
#include <memory>
#include <vector>
#include "sim/core/thread_pool.h"
#include "sim/dem/dem_backend.h"
#include "sim/dem/dem_kernels.h"

namespace ps {
namespace dem {

class DemCpuBackend final : public DemBackend {
 public:
  explicit DemCpuBackend(int threads);
  std::string name() const override;
  void bind(DemParticles* particles, DemBonds* bonds) override;
  void host_changed() override;
  void sync_to_host() override {}
  DemStepResult step(const DemStepInput& in) override;
  void read_contacts(std::vector<DemContact>& pairs, std::vector<DemContact>& walls) const override;
  bool save_history(DemHistory& h) const override;
  bool load_history(const DemHistory& h) override;

  int threads() const { return pool_.size(); }

 private:
  void build_bond_topology();
  /// Bond forces and breakage; returns how many broke (first_broken_: the lowest index, or -1).
  int bond_pass(const DemStepInput& in);
  void broad_phase();
  void contact_pass(const DemStepInput& in);
  DemStepResult integrate(const DemStepInput& in);
  void bond_advance_pass(const DemStepInput& in);
  void wall_reaction(const DemStepInput& in) const;

  ThreadPool pool_;
  DemParticles* p_ = nullptr;
  DemBonds* b_ = nullptr;
  size_t topo_particles_ = 0, topo_bonds_ = 0;

  // Bond topology (static between host_changed calls): bonds are sorted by
  // (i, j), so bond_start_ is the CSR by i; bonds_by_j_ lists bond indices
  // per j (CSR bond_j_start_).
  std::vector<uint32_t> bond_start_, bond_j_start_, bonds_by_j_;
  std::vector<Vec2d> bond_f_;  // force on i
  std::vector<double> bond_ti_, bond_tj_;
  std::vector<uint8_t> bond_newly_broken_;
  int64_t first_broken_ = -1;

  // Broad phase: uniform grid, cell size = 2 max radius, rebuilt each step.
  Vec2d grid_lo_;
  double cell_ = 1.0;
  int gx_ = 1, gy_ = 1;
  std::vector<uint32_t> cell_of_, cell_start_, cell_items_, cursor_;

  // Contacts of this step (sorted by i then j) and of the previous step (history).
  std::vector<PairProps> pair_props_;               // material pair table, reused
  std::vector<std::vector<uint32_t>> worker_cand_;  // per-worker candidate lists, reused
  std::vector<std::vector<DemContact>> worker_pairs_, worker_walls_;
  std::vector<DemContact> pairs_, walls_, prev_pairs_, prev_walls_;
  std::vector<uint32_t> pair_start_, wall_start_, prev_pair_start_, prev_wall_start_;
  std::vector<uint32_t> pair_j_start_, pairs_by_j_;

  std::vector<int32_t> grab_slot_;
  std::vector<int64_t> worker_bad_;
  std::vector<double> worker_vmax2_;
};

}  // namespace dem
}  // namespace ps
