#include "sim/mpm/mpm_backend.h"

#include <stdexcept>
#include "sim/cuda/cuda_info.h"
#include "sim/mpm/mpm_cpu.h"

namespace ps {

#if defined(PS_HAVE_CUDA_MPM)
// Defined in mpm_cuda.cu.
std::unique_ptr<MpmBackend> make_cuda_backend();
#endif

SubstepResult MpmBackend::advance(const SubstepInput& in0, int count, const StepRule& rule,
                                  StepClock& clock) {
  SubstepInput in = in0;
  SubstepResult r;
  for (int s = 0; s < count; ++s) {
    in.dt = next_substep_dt(rule, clock.last_max_speed);
    in.time = clock.time;
    r = substep(in);
    ++clock.step;
    clock.time += in.dt;
    clock.last_dt = in.dt;
    clock.last_max_speed = r.max_speed;
    if (!r.ok) break;
  }
  return r;
}

std::vector<std::string> available_backends() {
  std::vector<std::string> out{"cpu"};
#if defined(PS_HAVE_CUDA_MPM)
  if (cuda_device_available()) out.push_back("cuda");
#endif
  return out;
}

std::unique_ptr<MpmBackend> make_backend(const std::string& kind, int threads) {
  if (kind == "cpu") return std::make_unique<MpmCpuBackend>(threads);
  if (kind ==
      "auto")  // a caller's bug, not a user's: "auto" needs the self-check gate above this layer
    throw std::logic_error(
        "backend 'auto' must be resolved with choose_auto_backend() (sim/selfcheck/verdict.h) first");
  if (kind == "cuda") {
#if defined(PS_HAVE_CUDA_MPM)
    if (cuda_device_available()) return make_cuda_backend();
    throw std::runtime_error("backend 'cuda': no CUDA device is present");
#else
    throw std::runtime_error("backend 'cuda': this build has no CUDA MPM stepper");
#endif
  }
  throw std::runtime_error("unknown backend '" + kind + "' (expected cpu, cuda or auto)");
}

}  // namespace ps
