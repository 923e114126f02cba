/// What the particle snapshot keeps about DEM grains (internal to render/): the CUDA-GL
/// interop's fill and its read-back, each grain's bonds (rebuilt when the bond topology
/// changes) and the selected grain as the last frame saw it. The snapshot writes it
/// (window_app.cpp); the DEM feature (render/feature_dem.h) draws and inspects from it.
#pragma once
#include <vector>
#include "render/cpu/dem_view.h"

namespace ps {

struct DemView {
  DemFillResult fill;               ///< the last particle fill's read-back
  std::vector<float> material_rgb;  ///< 3 floats per material for the fill
  DemBondIndex bond_index;          ///< each grain's bonds and the longest rest length
  DemSelected selected;             ///< from the host arrays or the interop's read-back
  /// Contact-force chains are drawn: they come from a host copy of every contact, so the
  /// interop leaves the frame to the host path (set by the DEM feature at the sync point).
  bool contact_chains = false;
};

}  // namespace ps
