#include "sim/core/limits.h"

#include <cstdio>
#include <cstring>

namespace ps {

InputLimits& input_limits() {
  static InputLimits limits;
  return limits;
}

double mpm_memory_estimate(double particles, double nodes, bool polypic) {
  const double per = polypic ? MpmMemoryCost::kPerParticlePolyPic : MpmMemoryCost::kPerParticle;
  return MpmMemoryCost::kFixed + particles * per + nodes * MpmMemoryCost::kPerNode;
}

double memory_budget_bytes() {
  if (input_limits().max_memory_bytes > 0)
    return static_cast<double>(input_limits().max_memory_bytes);
  // Linux: what can be allocated without swapping (free plus reclaimable caches).
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return -1.0;
  char line[256];
  double kb = -1.0;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "MemAvailable:", 13) == 0) {
      long long v = 0;
      if (std::sscanf(line + 13, "%lld", &v) == 1) kb = static_cast<double>(v);
      break;
    }
  std::fclose(f);
  return kb < 0.0 ? -1.0 : kb * 1024.0;
}

}  // namespace ps
