#include "sim/core/limits.h"

namespace ps {

InputLimits& input_limits() {
  static InputLimits limits;
  return limits;
}

}  // namespace ps
