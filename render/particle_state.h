/// The particles as the window shows them (internal to render/; part of App, window_state.h):
/// the host table the snapshot fills every frame (reused: no allocation once sizes are stable),
/// the selected particle, the CUDA-GL interop's state, and the group table the legend and the
/// SGF tab share (rebuilt by App::group_table).
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "render/cpu/group_table.h"
#include "render/cuda/particle_interop.h"
#include "sim/core/particle_table.h"
#include "sim/mpm/mpm_params.h"

namespace ps {

struct ParticleState {
  ParticleTable table;
  ParticleTable grain_table;  ///< DEM grains beside MPM matter, appended to `table` (reused)
  /// With MPM matter and DEM grains in one scene `table` holds the MPM rows,
  /// then the grains': the first DEM row (0 in a DEM scene), and how many
  /// rows the SGF selection may take (the MPM's; all rows otherwise).
  size_t dem_row0 = 0;
  size_t sgf_rows = SIZE_MAX;
  std::vector<float> xy, vxy, scalar, range_scratch;
  std::vector<uint8_t> rgba;
  std::vector<float> grid_mass;
  std::vector<Vec2> grid_vel;
  GridSpec grid_spec;
  uint32_t selected_id = 0;   ///< 0: none
  int64_t selected_row = -1;  ///< host row (table, host arrays)

  // CUDA-GL interop (render/cuda/particle_interop.h).
  // With the CUDA backend the particle buffers are filled on the device, in
  // slot order, and `table` is rebuilt only when stale
  // (loads, edits) and on demand (refresh_host_table: clicks, tools); the
  // selected particle's row is patched every frame and the plots' totals are
  // summed on the device.
  ParticleInterop interop;
  /// The Stats panel's switch (--interop off): draw from the host copy.
  bool interop_wanted = true;
  InteropResult interop_result;
  /// "CUDA-GL interop: on", or "CUDA-GL interop: off: <reason>" (for the Stats panel).
  std::string interop_note = "CUDA-GL interop: off: not started";
  /// The last snapshot drew through the interop (buffers in slot order).
  bool interop_frame = false;
  /// The selected particle's row in the GPU buffers when interop_frame.
  int64_t selected_slot = -1;
  double host_table_time = -1.0;  ///< glfwGetTime() of the last host table rebuild
  bool host_table_stale = true;   ///< rebuild the host table at the next snapshot
  /// The particle groups shown (render/cpu/group_table.h): the "group" colour mode's colours and
  /// legend and the SGF tab's list of groups, one table. Rebuilt by group_table() when the host
  /// table was rebuilt or the SGF set changed (`groups_key`).
  GroupTable groups;
  double groups_time = -2.0;
  size_t groups_rows = 0;
  uint64_t groups_key = 0;
  std::string legend_logged;  ///< the group legend as last logged (verbose)
};

}  // namespace ps
