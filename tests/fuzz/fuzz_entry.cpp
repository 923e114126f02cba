// One libFuzzer executable per target: compiled with -DPS_FUZZ_TARGET=<name>.
#include <cstddef>
#include <cstdint>
#include "tests/fuzz/fuzz_targets.h"

#ifndef PS_FUZZ_TARGET
#error "PS_FUZZ_TARGET must name a target in fuzz_targets.h"
#endif

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ps::fuzz::init_limits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ps::fuzz::PS_FUZZ_TARGET(data, size);
}
