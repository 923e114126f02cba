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
bool ParticleInterop::fill(const DeviceParticleView&, const InteropTargets&, const InteropFrame&, InteropResult& out) {
  out.sample.clear();
  out.selected_slot = -1;
  return false;
}
void ParticleInterop::release() {}

}  // namespace ps
