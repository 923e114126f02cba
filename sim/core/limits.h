/// Limits that protect the machine from hostile or mistaken input files: every
/// reader checks them *before* it allocates, and reports a violation as an
/// InputError naming the file, line and field. One table, read by every reader
/// (scene loader, image decoder, SGF / P4 / ID-list / settings readers), so a
/// limit is changed in one place. The fuzz harnesses (tests/fuzz) lower them to
/// keep each execution small; the program uses the defaults.
#pragma once
#include <cstdint>

namespace ps {

struct InputLimits {
  /// Any input file is read whole; larger files are refused before reading.
  /// 256 MiB holds a 2-million-particle P4P file in double precision.
  int64_t max_file_bytes = int64_t{256} << 20;
  /// Images (scene masks, specimens): pixels and side length, checked from the
  /// header before decoding. 8192 x 8192 RGBA is 256 MiB of decoded pixels.
  int64_t max_image_pixels = int64_t{8192} * 8192;
  int max_image_side = 16384;
  /// MPM: particles a scene may create (about 2.7 GB of host memory while it
  /// steps, see the costs below) and grid nodes.
  double max_mpm_particles = 20e6;
  int64_t max_grid_nodes = int64_t{17} * 1024 * 1024;
  /// Host memory an MPM scene may need while it steps; 0: what the machine has
  /// available when the scene loads (MemAvailable in /proc/meminfo; no check
  /// where that is unknown).
  int64_t max_memory_bytes = 0;
  /// One JSON string (names, descriptions, paths): 1 MiB.
  int64_t max_string_bytes = int64_t{1} << 20;
  /// DEM: particles a scene may create.
  double max_dem_particles = 2e6;
};

/// What an MPM scene costs in host memory while it steps on the CPU backend:
/// the peak resident size measured for 4 M and 8.4 M particles on 512^2 and
/// 4096^2 grids (docs/reliability.md), per particle and per grid node.
struct MpmMemoryCost {
  static constexpr double kPerParticle = 136.0;         ///< PIC, APIC, FLIP
  static constexpr double kPerParticlePolyPic = 184.0;  ///< PolyPIC's modes on top
  static constexpr double kPerNode = 24.0;
  static constexpr double kFixed = 16.0 * 1024 * 1024;  ///< the program itself
};
/// The estimate for `particles` and `nodes` (bytes).
double mpm_memory_estimate(double particles, double nodes, bool polypic);
/// The memory a scene may use: max_memory_bytes, else MemAvailable; -1 when unknown.
double memory_budget_bytes();

/// The process-wide limits (defaults above). Not thread-safe to modify: set
/// once at start-up (the fuzz harnesses do it in LLVMFuzzerInitialize).
InputLimits& input_limits();

}  // namespace ps
