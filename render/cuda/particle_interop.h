/// CUDA-OpenGL interop for the particle sprites (MPM and DEM) and the DEM
/// bond lines: the ParticleRenderer's vertex buffers (and the DEM bond line
/// buffer) are registered with CUDA once (again when they are reallocated),
/// mapped on the stepper's stream each frame, filled by kernels straight from
/// the CUDA backend's device arrays (positions, radii and the colour mode's
/// column; bond lines), and unmapped: no device -> host copy of the particles
/// per frame. MPM rows are written in the backend's slot order (slot k holds
/// host particle perm[k]); DEM rows in host order (render/cuda/dem_fill.h
/// holds the DEM kernels, GL-free).
///
/// Plain C++: includers need no CUDA header. The implementation is
/// particle_interop.cu when the build has CUDA (PS_HAVE_CUDA_INTEROP), else
/// particle_interop_off.cpp, whose fill() always declines. Any CUDA error
/// disables the interop for the session (reported once on stderr); the window
/// then draws through its host copy, as on machines without a CUDA device or
/// with an OpenGL driver CUDA cannot share buffers with.
#pragma once
#include <glad/gl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "render/cuda/dem_fill.h"
#include "sim/core/vec.h"

namespace ps {

struct DeviceParticleView;
struct MaterialParams;

/// The column the kernel writes besides positions and radii (the shader
/// reads only the one its mode needs).
enum class InteropFill : int { Color = 0, Velocity = 1, Scalar = 2 };

/// Scalar fields the device evaluates, with the host snapshot's formulas
/// (render/cpu/particle_scalars.h).
enum class InteropScalar : int { Speed = 0, VolumeRatio, Jp, Pressure, VonMises, PlasticStrain };

/// The renderer's buffers (ParticleGpuBuffers): pos vec2, vel vec2, scalar
/// float, color RGBA8, radius float per particle; `capacity` particles each.
struct InteropTargets {
  GLuint pos = 0, vel = 0, scalar = 0, color = 0, radius = 0;
  size_t capacity = 0;
};

/// What to write this frame.
struct InteropFrame {
  InteropFill fill = InteropFill::Color;
  InteropScalar scalar = InteropScalar::Speed;
  /// The world's material table (host): colours and the stress model. Mirrored
  /// to the device when it changes, so edits show while paused.
  const MaterialParams* materials = nullptr;
  int material_count = 0;
  /// Host particle count (must equal the view's). The radius is
  /// 0.5 sqrt(vol0), as mpm_snapshot gives it, from the device's vol0.
  size_t count = 0;
  /// > 0: copy back a strided sample of at most this many scalars (at most
  /// kMaxInteropSamples) for the auto colour range.
  size_t max_samples = 0;
  /// Host index of the selected particle, or -1: its slot and state come back.
  int64_t selected = -1;
};

constexpr size_t kMaxInteropSamples = 4096;

/// The selected particle's state, read back with its slot.
struct InteropParticle {
  Vec2 x, v;
  Mat2 C, F;
  float J = 1.f, Jp = 1.f;
};

struct InteropResult {
  std::vector<float> sample;   ///< strided scalar sample (empty unless asked for)
  float radius_max = 0.f;      ///< the largest radius written (the renderer's culling margin)
  int64_t selected_slot = -1;  ///< the selected particle's row in the buffers, or -1
  InteropParticle selected;    ///< valid when selected_slot >= 0
};

class ParticleInterop {
 public:
  ParticleInterop();
  ~ParticleInterop();
  ParticleInterop(const ParticleInterop&) = delete;
  ParticleInterop& operator=(const ParticleInterop&) = delete;

  /// False when built without CUDA or disabled after a failure; note() says why.
  bool usable() const;
  /// "CUDA-GL interop: on" while it works, else "CUDA-GL interop: off: <reason>".
  const std::string& note() const;

  /// Writes this frame's rows into the mapped buffers on view.stream and
  /// waits for them. Registers the buffers on first use and again when
  /// `targets` differ from the registered ones. Returns false when it could
  /// not (the caller draws through the host path this frame); a CUDA failure
  /// also disables it for the session. The buffers' contents are undefined
  /// after a false return (WriteDiscard): upload everything.
  bool fill(const DeviceParticleView& view, const InteropTargets& targets,
            const InteropFrame& frame, InteropResult& out);

  /// A CUDA DEM world's sprites into the same buffers, by the same rules
  /// (registration, mapping, a false return and its consequences).
  bool fill_dem(const dem::DemDeviceView& view, const InteropTargets& targets,
                const DemFillFrame& frame, DemFillResult& out);

  /// DEM bond lines, phase 1: how many vertices the bonds the frame draws
  /// take (nothing is mapped). False on a CUDA error (then disabled).
  bool count_dem_bonds(const dem::DemDeviceView& view, const DemBondFrame& frame,
                       DemBondCount& out);
  /// Phase 2: writes them into the GL buffer `buffer` of `capacity`
  /// LineVertex (registered on first use and when it changes; release the
  /// bond buffer first when reallocating it), the first `count` of them
  /// (lines past it are left out).
  bool fill_dem_bonds(const dem::DemDeviceView& view, GLuint buffer, size_t capacity, size_t count,
                      const DemBondFrame& frame);

  /// Unregisters the buffers: call before the renderer reallocates (reserve
  /// grows) or deletes them, with the GL context current. fill() registers
  /// them again.
  void release();
  /// Unregisters the bond line buffer (before it is reallocated or deleted).
  void release_bonds();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
