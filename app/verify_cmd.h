// `sandbox verify`: runs the verification cases (sim/verify) and writes the report.
#pragma once
#include "app/cli.h"

namespace ps {

/// sandbox verify [--quick] [--out DIR] [--threads K] [--only ID,...] [--list]
/// Returns 0 when every must-pass case passed, 1 otherwise (or when the report
/// cannot be written). Throws UsageError for bad command-line input.
int cmd_verify(const Args& a);

}  // namespace ps
