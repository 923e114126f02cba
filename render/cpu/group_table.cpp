#include "render/cpu/group_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include "render/cpu/colormap.h"

namespace ps {

GroupRow sgf_group_row(const SgfGroup& g) {
  return GroupRow{g.name, {g.color[0], g.color[1], g.color[2]}, 0};
}

void GroupTable::build(const SgfSet& set, const ParticleTable& t, size_t sgf_rows) {
  const size_t n = t.size();
  rows_.clear();
  row_of_.assign(n, 0);
  sgf_ = !set.groups.empty();
  if (!sgf_) {
    uint16_t gmax = 0;
    for (uint16_t g : t.group) gmax = std::max(gmax, g);
    for (unsigned g = 0; g <= gmax && !t.group.empty(); ++g)
      rows_.push_back(GroupRow{"group " + std::to_string(g), group_rgb(g), 0});
    for (size_t i = 0; i < n && i < t.group.size(); ++i) {
      row_of_[i] = t.group[i];
      ++rows_[t.group[i]].particles;
    }
    return;
  }
  for (const SgfGroup& g : set.groups) rows_.push_back(sgf_group_row(g));
  const size_t ns = std::min(n, sgf_rows);
  uint32_t max_id = 0;
  for (size_t i = 0; i < ns; ++i) max_id = std::max(max_id, t.id[i]);
  by_id_.assign(static_cast<size_t>(max_id) + 1, 0);
  for (size_t g = set.groups.size(); g-- > 0;)  // backwards: the first group listing an ID wins
    for (uint32_t id : set.groups[g].ids)
      if (id <= max_id) by_id_[id] = static_cast<uint32_t>(g + 1);
  const uint32_t none = static_cast<uint32_t>(rows_.size());
  size_t in_none = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t g = i < ns ? by_id_[t.id[i]] : 0;
    row_of_[i] = g ? g - 1 : none;
    if (g)
      ++rows_[g - 1].particles;
    else
      ++in_none;
  }
  if (in_none)
    rows_.push_back(GroupRow{"no SGF group", kNoGroupRgb, in_none});
  else if (n == 0)
    row_of_.clear();
}

std::vector<GroupRow> group_legend(const GroupTable& t, size_t max_rows) {
  std::vector<GroupRow> out;
  // The scene's group numbers cycle through the palette's ten colours: no more rows than that.
  if (!t.from_sgf()) max_rows = std::min<size_t>(max_rows, 10);
  for (const GroupRow& r : t.rows())
    if (r.particles > 0 || t.from_sgf()) out.push_back(r);
  if (max_rows >= 1 && out.size() > max_rows) {
    const size_t more = out.size() - (max_rows - 1);
    out.resize(max_rows - 1);
    out.push_back(GroupRow{
        t.from_sgf() ? "... " + std::to_string(more) + " more groups" : "... (colours repeat)",
        t.from_sgf() ? kNoGroupRgb : group_rgb(10), 0});
  }
  return out;
}

std::string group_rows_text(const std::vector<GroupRow>& rows) {
  std::string out;
  for (const GroupRow& r : rows) {
    char hex[16];
    auto q = [](float v) { return static_cast<int>(std::lround(std::clamp(v, 0.f, 1.f) * 255.f)); };
    std::snprintf(hex, sizeof hex, " #%02x%02x%02x", q(r.rgb[0]), q(r.rgb[1]), q(r.rgb[2]));
    out += (out.empty() ? "" : "|") + r.name + hex;
  }
  return out;
}

}  // namespace ps
