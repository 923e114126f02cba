// Builds without CUDA: the interop is never usable and the window always
// draws through its host copy (see particle_interop.h).
#include "render/cuda/particle_interop.h"

namespace ps {

struct ParticleInterop::Impl {
  std::string note = "CUDA-GL interop: off: built without CUDA";
};

ParticleInterop::ParticleInterop() : impl_(std::make_unique<Impl>()) {}
ParticleInterop::~ParticleInterop() = default;
bool ParticleInterop::usable() const { return false; }
const std::string& ParticleInterop::note() const { return impl_->note; }
bool ParticleInterop::fill(const DeviceParticleView&, const InteropTargets&, const InteropFrame&,
                           InteropResult& out) {
  out.sample.clear();
  out.selected_slot = -1;
  return false;
}
bool ParticleInterop::fill_dem(const dem::DemDeviceView&, const InteropTargets&,
                               const DemFillFrame&, DemFillResult& out) {
  out.sample.clear();
  out.selected = DemSelected{};
  return false;
}
bool ParticleInterop::count_dem_bonds(const dem::DemDeviceView&, const DemBondFrame&,
                                      DemBondCount& out) {
  out = DemBondCount{};
  return false;
}
bool ParticleInterop::fill_dem_bonds(const dem::DemDeviceView&, GLuint, size_t, size_t,
                                     const DemBondFrame&) {
  return false;
}
void ParticleInterop::release() {}
void ParticleInterop::release_bonds() {}

}  // namespace ps
