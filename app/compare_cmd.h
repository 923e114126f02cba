// `sandbox compare`: one scene, 2 to 4 settings side by side (sim/scene/compare.h).
#pragma once
#include "app/cli.h"

namespace ps {

/// sandbox compare SCENE --vary path=a,b[,...] [--vary ...] [--set ...] [--frames N | --steps N]
///                 [--out DIR] [--images K] [--video] [--fps F] [--backend B] [--threads K] [--quiet]
/// Writes DIR/frame_NNNNN.png (the panes side by side, labelled), curves.csv,
/// curves.svg and, with --video and ffmpeg on PATH, compare.mp4. Returns 0, or
/// 1 when a pane blew up. Throws UsageError / InputError for bad input.
int cmd_compare(const Args& a);

}  // namespace ps
