// `sandbox verify`: runs the verification cases (sim/verify) and writes the report.
#pragma once
#include "app/cli.h"

namespace ps {

/// sandbox verify [--quick] [--out DIR] [--threads K] [--only ID,...] [--list] [--backend cpu|cuda]
/// Returns 0 when every must-pass case passed (and, on a device, no case fell
/// back to the CPU), 1 otherwise (or when the report cannot be written).
/// Throws UsageError for bad command-line input, and for a backend this
/// machine cannot run (cuda without a device): no case runs then.
int cmd_verify(const Args& a);

}  // namespace ps
