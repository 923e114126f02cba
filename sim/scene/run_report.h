/// The lines `sandbox run` reports about a scene's worlds (stdout and the
/// summary file): what each world has to say, asked of any Simulation, so the
/// runner does not branch on the kind of world.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "sim/scene/simulation.h"

namespace ps {

/// "heat TAG t=... ice=... water=... heat=... J in=... drift=..." (the heat
/// ledger's balance): one line for a scene with heat, none otherwise.
std::vector<std::string> heat_state_lines(Simulation& sim, const char* tag);
/// "body TAG N NAME x=(...) angle=... v=(...) omega=... mass=...": one line per rigid body.
std::vector<std::string> body_lines(Simulation& sim, const char* tag);
/// What parts of the step cost over a run of `steps` steps in `seconds`: the
/// rigid coupling, the resampling passes, the heat passes (a line each, where
/// the scene has them).
std::vector<std::string> cost_lines(Simulation& sim, double seconds, int64_t steps);

}  // namespace ps
