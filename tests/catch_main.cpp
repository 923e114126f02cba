// Catch2's main, compiled once: "auto" resolves through the CUDA self-check
// gate, as in sandbox (sim/scene/auto_backend.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include "sim/selfcheck/verdict.h"

int main(int argc, char* argv[]) {
  ps::install_auto_backend();
  return Catch::Session().run(argc, argv);
}
