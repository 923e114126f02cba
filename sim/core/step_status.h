/// Outcome of stepping any world: ok, or the first blow-up (which particle,
/// which step), shared by MPM and DEM.
#pragma once
#include <cstdint>
#include <string>

namespace ps {

struct StepStatus {
  bool ok = true;
  int64_t step = 0;          ///< the step (1-based, since scene start) that failed
  int64_t index = -1;        ///< particle index
  uint32_t particle_id = 0;  ///< its stable ID
  std::string message;
};

}  // namespace ps
