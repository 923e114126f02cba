/// Particle resampling for MPM fracture (SEEDS-DIGEST section 3,
/// after Yue et al. 2015): under stretch and shear MPM particles spread apart
/// and leave numerical holes inside the material that look like cracks.
/// `Resampler::run` fills interior holes with new particles (Poisson-disk
/// dart throwing) and merges particles of one material that are too close,
/// while real outside space and real cracks and notches open to the outside
/// stay empty. A pure module: MpmWorld calls it every `interval` substeps.
///
/// Body and signed distance (all in cell units, dx = 1, then scaled by dx):
///   1. The body is the union U of disks of radius r = smoothing around the
///      particles. phi_u = min_p |c - x_p| - r on the cell centres c, stamped
///      from each particle over the cells within r (exact inside U) and
///      gathered for the "rim" (cells outside U next to a cell inside it).
///   2. Topology: cells outside U that connect (4-neighbours) to the domain
///      border through cells outside U are outside. Enclosed regions outside
///      U (cavities) of at most `max_cavity_cells` cells are interior holes
///      and count as inside; larger enclosed regions (a ring's hole) stay
///      outside. So a crack or notch that opens to the outside is outside,
///      wherever its cell centres are not covered by U.
///   3. The inside/outside interface is traced by marching squares on phi_u
///      (cell centres as corners, saddles resolved by the quad average) and
///      every cell within the band gets the distance d to those segments.
///   4. sdf = -d + e inside, d + e outside, clamped to [-band, band], with the
///      erosion e = max(0, r - particle_spacing / 2): U closed by r and eroded
///      by e puts the zero level half a particle spacing outside the
///      outermost particles, where a regularly seeded body's surface is.
///      This is a morphological closing: holes narrower than about 2r are
///      inside whatever their connectivity.
/// Limits: gaps between particle rows narrower than about 2r (1.5 cells of
/// empty space at 4 particles per cell and smoothing 1) are closed by the
/// smoothing, so a real crack that thin counts as interior and is refilled
/// (lower `smoothing` keeps thinner cracks open but lets stretched material
/// with spacing above 2r look like outside); a crack is seen as open only
/// where it is wide enough for cell centres outside U to connect it to the
/// border; the tip of a sharp V notch (opening under about 45 degrees) is
/// closed by the smoothing and may receive particles; enclosed voids up to
/// max_cavity_cells (real void nucleation too) are refilled; the distance is
/// to a piecewise linear interface (errors of a few hundredths of a cell);
/// particles outside the domain are binned into the border cells; the
/// domain walls are not surfaces (material touching a wall is interior).
///
/// Insertion: a cell with sdf <= -inside_margin (at its centre) holding fewer
/// than min_per_cell particles is refilled towards target_per_cell particles
/// (at most max_insert_per_cell per call) by dart throwing: uniform darts in
/// the cell from a generator seeded by (seed, cell index), then the 16 points
/// of a 4 x 4 lattice in the cell (the points the hole count tests for room,
/// so a counted hole is filled whenever it has donors); a dart is kept
/// when the bilinear sdf there is <= -inside_margin, it lies at least
/// insert_spacing from every particle (old and new) and it has donors: the
/// existing particles within the quadratic B-spline support (|dx|, |dy| <
/// 1.5) of the material with the largest summed weight w there whose rest
/// volume is at least half a seeded particle's ((particle_spacing dx)^2 / 2:
/// no particle is drained to a sliver). Donor k gives
/// dm_k = f w_k m_k and f w_k of its vol0, f = min(1 / sum w, 1 / (3 max w)):
/// the new particle gets the w-weighted average donor mass and no donor loses
/// more than a third per insertion. Its velocity is sum dm v / sum dm, its C,
/// J, Jp the dm-weighted averages, its F the dm-weighted mean rotation (the
/// chordal mean of the polar factors R) times the dm-weighted mean stretch S
/// (a plain mean of F shrinks where donors are turned against each other),
/// material and group of the heaviest
/// donor, fext zero, id = next_id++. Mass and linear momentum are conserved
/// to float round-off (a donor's dm is its exact float mass difference).
/// Kinetic energy drops by sum dm |v_k - v_new|^2 / 2 (a perfectly inelastic
/// transfer) and angular momentum changes by sum dm (x_new - x_k) x v_k,
/// since mass moves to a new place with the donors' mean velocity.
///
/// Merging (before insertion): particles are visited in index order; each
/// unmerged one takes its nearest unmerged partner of the same material
/// closer than merge_distance (a particle merges at most once per call). The
/// survivor (smaller ID) gets the summed mass, vol0 and fext, the mass
/// centroid, the momentum / mass velocity, the mass-weighted C, J, Jp and F
/// averaged as for an insertion (mean rotation times mean stretch);
/// the other is removed by stable compaction and its ID retired (next_id is
/// unchanged). Mass, linear momentum and the centre of mass are conserved;
/// kinetic energy drops by m_a m_b |v_a - v_b|^2 / (2 (m_a + m_b)) and the
/// pair's own angular momentum m_a m_b / M (x_a - x_b) x (v_a - v_b) is lost.
///
/// Single-threaded and deterministic: same particles, grid, parameters and
/// seed give bit-identical arrays. All scratch is owned by the Resampler and
/// only grows, so a call allocates nothing once sizes are stable (the
/// particle arrays grow geometrically through push_back).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>
#include "sim/core/vec.h"
#include "sim/mpm/mpm_params.h"
#include "sim/mpm/mpm_particles.h"

namespace ps {

struct ResampleParams {
  bool enabled = false;        ///< for the caller (the world); run() always resamples
  int interval = 10;           ///< run every K substeps (the world uses this)
  float smoothing = 1.0f;      ///< radius, in cells, of the particle disks whose union is the body
  float band = 3.0f;           ///< half width of the narrow band, in cells (beyond it: +/- band)
  float inside_margin = 0.5f;  ///< insert only where sdf <= -inside_margin dx (never on the skin)
  /// An interior cell with fewer particles than this is a hole and gets darts
  /// (a dart needs insert_spacing of room). 2 finds the holes a tear or a
  /// shear band leaves; 4 (the seeding's count) also refills the sparse
  /// stripes a stretched lattice leaves (about 2.5 per cell; the toffee scene
  /// uses it) but then darts also reach the cells a surface cuts, and near a
  /// sharp notch tip, closed by the smoothing, they may land in the notch.
  int min_per_cell = 2;
  int target_per_cell = 4;  ///< a hole is refilled towards this many particles
  /// Poisson-disk distance of new particles to all others, in cells. Below the
  /// 4-per-cell spacing 0.5 on purpose: a regular 4-per-cell lattice is already
  /// saturated at 0.5, so darts at 0.5 put about one particle into a one-cell
  /// hole of it; at 0.4 they put about three.
  float insert_spacing = 0.4f;
  /// Typical spacing of the particles, in cells (4 per cell: 0.5): the surface
  /// is put half of it outside the outermost particles.
  float particle_spacing = 0.5f;
  float merge_distance = 0.2f;  ///< same-material particles closer than this (cells) merge
  int max_insert_per_cell = 4;  ///< new particles per cell and call
  int max_cavity_cells = 64;    ///< enclosed regions outside the disks up to this size are holes
  int darts_per_cell = 32;      ///< darts thrown in each hole cell
};

struct ResampleReport {
  int inserted = 0, merged = 0;  ///< this call (merged: pairs)
  int interior_holes_before =
      0;  ///< holes (see count_interior_holes) after merging, before inserting
  int interior_holes_after = 0;       ///< holes counted again with the new particles
  std::vector<uint32_t> new_ids;      ///< IDs of the inserted particles (fresh, >= the old next_id)
  std::vector<uint32_t> retired_ids;  ///< IDs removed by merges (the larger ID of each pair)
  std::vector<uint32_t> merged_ids;   ///< IDs that survived a merge (the smaller ID of each pair)
  double ms = 0.0;                    ///< wall time of the call
};

class Resampler {
 public:
  /// Merges, then inserts (see the file comment). Only particles of models
  /// whose MaterialKind::resampled is set take part (jelly and
  /// viscoplastic; not fluid, sand, snow or tracer); particles whose material index
  /// is outside the table are left alone (never merged, never donors). The
  /// body whose signed distance is computed is made of the resampled
  /// particles only (the gap between a jelly and the water it lands in is
  /// outside), and a new particle keeps insert_spacing from every particle.
  /// The report lives in the Resampler
  /// and is overwritten by the next call (no allocation once warm).
  const ResampleReport& run(MpmParticles& p, const GridSpec& g,
                            const std::vector<MaterialParams>& materials, const ResampleParams& rp,
                            uint64_t seed);

  /// Computes the signed distance of `p` (see sdf()) and returns the number
  /// of holes: interior cells (sdf <= -inside_margin dx at the centre)
  /// holding fewer than min_per_cell particles and with room for one more (a
  /// point of a 4 x 4 lattice in the cell inside the body and at least
  /// insert_spacing from every particle). Does not modify the particles.
  /// This form treats every particle as resampled; the form with the
  /// material table only the models whose MaterialKind::resampled is set
  /// (as run() does).
  int count_interior_holes(const MpmParticles& p, const GridSpec& g, const ResampleParams& rp);
  int count_interior_holes(const MpmParticles& p, const GridSpec& g,
                           const std::vector<MaterialParams>& materials, const ResampleParams& rp);

  /// The narrow-band signed distance of the last run or count (for run: before
  /// insertion), one value per cell, nx * ny row-major, cell (i, j) centred
  /// at origin + (i + 0.5, j + 0.5) dx; negative inside, in world units.
  const std::vector<float>& sdf() const { return sdf_; }
  /// Particles per cell, same layout as sdf(): of the last count, or after the
  /// last run (merged pairs counted once, inserted particles included).
  const std::vector<int>& cell_counts() const { return cell_count_; }
  /// 1 for the cells the last count found to be holes (interior, fewer than
  /// min_per_cell particles, room for one more at insert_spacing), same layout.
  const std::vector<uint8_t>& holes() const { return hole_; }

  /// Bytes of scratch capacity held (grows only; tests check it settles).
  size_t scratch_bytes() const;

 private:
  void bucket(const MpmParticles& p, const GridSpec& g);
  void compute_sdf(const MpmParticles& p, const GridSpec& g, const ResampleParams& rp);
  /// Counts the holes and marks them in hole_ (needs clear_new() first).
  int count_holes(const MpmParticles& p, const GridSpec& g, const ResampleParams& rp);
  /// No particle (existing or new) closer than sp cells to u (cell units).
  bool has_room(const MpmParticles& p, const GridSpec& g, Vec2 u, float sp) const;
  void clear_new();
  int count_now(const MpmParticles& p, const GridSpec& g, const ResampleParams& rp);
  void set_materials(
      const std::vector<MaterialParams>* materials);  ///< null: every particle eligible
  bool eligible(uint8_t m) const { return all_eligible_ || (m < mat_ok_.size() && mat_ok_[m]); }
  void merge(MpmParticles& p, const GridSpec& g, const ResampleParams& rp);
  void insert(MpmParticles& p, const GridSpec& g, const std::vector<MaterialParams>& materials,
              const ResampleParams& rp, uint64_t seed);
  float sdf_at(Vec2 u) const;  ///< bilinear, u in cell units

  struct Segment {
    Vec2 a, b;
  };

  int nx_ = 0, ny_ = 0;
  int bi0_ = 0, bi1_ = -1, bj0_ = 0,
      bj1_ = -1;  ///< cells holding particles (bounding box; bucket())
  int wi0_ = 0, wi1_ = -1, wj0_ = 0,
      wj1_ = -1;  ///< the window the distance is computed in (compute_sdf())
  // Bucketing of the particles by cell (stable counting sort).
  std::vector<int> cell_count_;
  std::vector<int> cell_start_;  ///< nx * ny + 1
  std::vector<int> order_;       ///< particle indices sorted by cell
  std::vector<int> cell_of_;     ///< per particle
  // Signed distance.
  std::vector<float>
      phi_u_;  ///< distance to the union of disks (cells): exact inside and on the rim
  std::vector<uint8_t> state_;  ///< per cell: covered / outside / cavity / void
  std::vector<int> queue_;
  std::vector<Segment> segments_;
  std::vector<float> dist_;  ///< distance to the interface (cells)
  std::vector<float> sdf_;   ///< world units
  // Merging.
  std::vector<uint8_t> merged_;  ///< per particle: 0 untouched, 1 merged survivor, 2 removed
  // Insertion.
  std::vector<uint8_t> hole_;  ///< per cell: 1 where the last count found a hole
  std::vector<int> new_head_;  ///< per cell: first new particle (index into new_pos_) or -1
  std::vector<int> new_next_;
  std::vector<Vec2> new_pos_;  ///< cell units
  std::vector<int> donor_idx_;
  std::vector<float> donor_w_;
  std::vector<float> mat_w_;
  std::vector<uint8_t> mat_ok_;  ///< per material: resampled (MaterialKind::resampled)
  bool all_eligible_ = true;     ///< per material: summed kernel weight of the donors
  ResampleReport report_;
};

}  // namespace ps
