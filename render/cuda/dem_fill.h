/// The DEM half of the CUDA-GL interop, GL-free: kernels that write a DEM
/// world's sprite columns and its bond lines from the CUDA backend's device
/// arrays (dem::DemDeviceView) into device memory, with the host path's
/// formulas (render/cpu/dem_draw_rules.h). ParticleInterop
/// (particle_interop.h) maps the renderer's buffers and hands their device
/// pointers here; tests/cuda hands plain device allocations and compares the
/// result with the host table. Rows are host indices (the DEM backend keeps
/// host order). Plain C++: includers need no CUDA header. Built only with
/// CUDA (PS_HAVE_CUDA_INTEROP); every call synchronises its stream before it
/// returns, so no error of this file surfaces later.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "render/cpu/dem_draw_rules.h"
#include "sim/dem/dem_params.h"
#include "sim/dem/dem_vec.h"

namespace ps {

namespace dem {
struct DemDeviceView;
}

/// The column the particle fill writes besides positions and radii.
enum class DemFillColumn : int { Color = 0, Velocity = 1, Scalar = 2 };
/// The scalars a DEM particle shows: speed, and the host table's extra
/// columns "omega" and "theta" (DemSimulation::table).
enum class DemScalar : int { Speed = 0, Omega = 1, Theta = 2 };

constexpr int kDemGroupColors = 10;  ///< group_rgb's palette (it cycles)
constexpr size_t kDemMaxSamples = 4096;
constexpr int kDemMaxSelectedBonds = 32;

/// What the particle fill writes this frame.
struct DemFillFrame {
  DemFillColumn column = DemFillColumn::Color;
  DemScalar scalar = DemScalar::Speed;
  /// Colour column: group colours (group_rgb) instead of the material colours.
  bool group_colors = false;
  const float* material_rgb = nullptr;  ///< 3 floats per material (DemMaterial::color), host memory
  int material_count = 0;
  float group_rgb[kDemGroupColors][3] = {};
  size_t count = 0;  ///< host particle count (must equal the view's)
  /// > 0: a strided sample of at most this many scalars (<= kDemMaxSamples)
  /// comes back for the auto colour range.
  size_t max_samples = 0;
  int64_t selected = -1;  ///< host index of the selected particle, or -1
  /// For the selected particle's bonds' stresses (the world's bond parameters).
  dem::DemBondParams bond;
};

/// Device pointers the particle fill writes (null: not written): positions
/// (2 floats), velocities (2 floats), the scalar, RGBA8 colours, radii.
struct DemFillTargets {
  float* pos = nullptr;
  float* vel = nullptr;
  float* scalar = nullptr;
  uint8_t* color = nullptr;
  float* radius = nullptr;
};

/// One bond of the selected particle, as the inspector shows it.
struct DemSelectedBond {
  int64_t bond = -1;   ///< index into the world's bonds
  uint32_t other = 0;  ///< the other particle's index
  dem::Vec2d other_x;  ///< its position now
  bool broken = false;
  dem::BondBreak mode = dem::BondBreak::None;
  int64_t break_step = 0;
  BondStress stress;  ///< now (zero for a broken bond)
};

/// The selected particle's state and bonds, current every frame (the
/// inspector and the overlay of its bonds read this on both paths).
struct DemSelected {
  bool valid = false;
  uint32_t index = 0;
  dem::Vec2d x, v;
  double theta = 0.0, omega = 0.0;
  int bond_total = 0;  ///< all its bonds; at most kDemMaxSelectedBonds are in `bonds`
  std::vector<DemSelectedBond> bonds;  ///< in bond index order
};

struct DemFillResult {
  std::vector<float> sample;  ///< strided scalar sample (empty unless asked for)
  float radius_max = 0.f;     ///< the largest radius written (the renderer's culling margin)
  DemSelected selected;       ///< valid when the selected particle was found
};

/// The bond overlay's frame: which bonds, the view, the colours.
struct DemBondFrame {
  bool intact = true;  ///< intact bonds, coloured by stress / strength
  bool broken = true;  ///< broken bonds, dashed
  BondView view;
  dem::DemBondParams bond;
  float hi = 1.f;  ///< top of the stress colour bar (ratio)
  /// The colour map as kDemBondLut packed RGBA8 entries over t in [0, 1]
  /// (host memory; uploaded when it changes).
  const uint32_t* lut = nullptr;
  uint32_t broken_rgba = 0;  ///< packed colour of the dashes
  size_t max_samples = 0;  ///< > 0: a strided sample of the ratios (-1 for broken bonds) comes back
};
constexpr int kDemBondLut = 4096;

/// Phase 1's answer: how many vertices the drawn bonds take (6 per line).
struct DemBondCount {
  size_t vertices = 0;
  size_t intact = 0, broken = 0;  ///< bonds drawn
  std::vector<float> sample;
};

class DemFill {
 public:
  DemFill();
  ~DemFill();
  DemFill(const DemFill&) = delete;
  DemFill& operator=(const DemFill&) = delete;

  /// Writes the particles' columns into `t` and reads back the selected
  /// particle, the largest radius and the sample. False on a CUDA error
  /// (`error` says which call and why; the device state is then unknown).
  bool particles(const dem::DemDeviceView& view, const DemFillFrame& f, const DemFillTargets& t,
                 DemFillResult& out, std::string& error);
  /// Counts the vertices of the bonds the frame draws (one line per intact
  /// bond, one per dash of a broken one, by the rules of dem_draw_rules.h)
  /// and samples their ratios. Keeps the per-bond offsets for write_bonds.
  bool count_bonds(const dem::DemDeviceView& view, const DemBondFrame& f, DemBondCount& out,
                   std::string& error);
  /// Writes the vertices counted by the last count_bonds (same view and
  /// frame) into `verts`, the first `capacity` of them (a bond past it is
  /// left out; its vertices inside are written as empty triangles).
  bool write_bonds(const dem::DemDeviceView& view, const DemBondFrame& f, LineVertex* verts,
                   size_t capacity, std::string& error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
