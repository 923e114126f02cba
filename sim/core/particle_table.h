/// The particles as plain columns: what dumps, images, picking and the window
/// read from any simulation (Simulation::table fills it). In sim/core so that
/// readers and writers (sim/io) need nothing from the scene layer.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ps {

/// A snapshot of the particles in plain columns (dumps, images, picking).
struct ParticleTable {
  std::vector<uint32_t> id;
  std::vector<uint16_t> material;
  std::vector<uint16_t> group;
  std::vector<float> x, y, vx, vy, mass, radius;
  std::vector<std::array<float, 3>> color;  ///< material colour
  std::vector<std::string> extra_names;     ///< e.g. "J", "Jp", "omega"
  std::vector<std::vector<float>> extra;    ///< one column per name
  size_t size() const { return id.size(); }
  /// Whether every column (and every extra column) holds size() rows, one name per extra column.
  bool consistent() const {
    const size_t n = size();
    bool ok = material.size() == n && group.size() == n && x.size() == n && y.size() == n &&
              vx.size() == n && vy.size() == n && mass.size() == n && radius.size() == n &&
              color.size() == n && extra_names.size() == extra.size();
    for (const std::vector<float>& c : extra) ok = ok && c.size() == n;
    return ok;
  }
};

/// Appends `more`'s rows to `t` (a scene's second kind of matter): materials
/// shifted by `material_offset`, the extra columns the union of both (NaN
/// where a column does not apply to a row).
void append_table_rows(ParticleTable& t, const ParticleTable& more, uint16_t material_offset);

}  // namespace ps
