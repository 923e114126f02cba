#include "sim/core/particle_table.h"

#include "sim/core/assert.h"

#include <algorithm>
#include <limits>

namespace ps {

void append_table_rows(ParticleTable& t, const ParticleTable& more, uint16_t material_offset) {
  const size_t n0 = t.size(), n1 = more.size();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  t.extra.resize(t.extra_names.size());
  for (auto& col : t.extra) col.resize(n0, nan);
  for (const std::string& name : more.extra_names)
    if (std::find(t.extra_names.begin(), t.extra_names.end(), name) == t.extra_names.end()) {
      t.extra_names.push_back(name);
      t.extra.emplace_back(n0, nan);
    }
  t.id.insert(t.id.end(), more.id.begin(), more.id.end());
  t.group.insert(t.group.end(), more.group.begin(), more.group.end());
  for (size_t i = 0; i < n1; ++i)
    t.material.push_back(static_cast<uint16_t>(more.material[i] + material_offset));
  t.x.insert(t.x.end(), more.x.begin(), more.x.end());
  t.y.insert(t.y.end(), more.y.begin(), more.y.end());
  t.vx.insert(t.vx.end(), more.vx.begin(), more.vx.end());
  t.vy.insert(t.vy.end(), more.vy.begin(), more.vy.end());
  t.mass.insert(t.mass.end(), more.mass.begin(), more.mass.end());
  t.radius.insert(t.radius.end(), more.radius.begin(), more.radius.end());
  t.color.insert(t.color.end(), more.color.begin(), more.color.end());
  for (size_t c = 0; c < t.extra_names.size(); ++c) {
    const auto it = std::find(more.extra_names.begin(), more.extra_names.end(), t.extra_names[c]);
    std::vector<float>& col = t.extra[c];
    if (it == more.extra_names.end() ||
        static_cast<size_t>(it - more.extra_names.begin()) >= more.extra.size()) {
      col.resize(n0 + n1, nan);
    } else {
      const std::vector<float>& src =
          more.extra[static_cast<size_t>(it - more.extra_names.begin())];
      col.insert(col.end(), src.begin(), src.end());
      col.resize(n0 + n1, nan);
    }
  }
  PS_ASSERT(t.consistent(), "the appended table's columns hold one row a particle");
}

}  // namespace ps
