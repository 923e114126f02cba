#include "render/cpu/selection.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace ps {

const char* select_op_name(SelectOp op) { return kSelectOpNames(op); }

SelectOp select_op_from_mods(bool shift, bool ctrl) {
  if (shift) return SelectOp::Add;
  if (ctrl) return SelectOp::Remove;
  return SelectOp::Replace;
}

void normalize_ids(std::vector<uint32_t>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (!ids.empty() && ids.front() == 0) ids.erase(ids.begin());
}

std::vector<uint32_t> select_box(const ParticleTable& t, Vec2 a, Vec2 b, size_t rows) {
  const float x0 = std::min(a.x, b.x), x1 = std::max(a.x, b.x);
  const float y0 = std::min(a.y, b.y), y1 = std::max(a.y, b.y);
  std::vector<uint32_t> out;
  for (size_t i = 0; i < std::min(t.size(), rows); ++i)
    if (t.x[i] >= x0 && t.x[i] <= x1 && t.y[i] >= y0 && t.y[i] <= y1) out.push_back(t.id[i]);
  normalize_ids(out);
  return out;
}

bool point_in_polygon(const std::vector<Vec2>& poly, Vec2 p) {
  const size_t n = poly.size();
  if (n < 3) return false;
  bool inside = false;
  for (size_t i = 0, j = n - 1; i < n; j = i++) {
    const Vec2 a = poly[i], b = poly[j];
    // Edge crosses the horizontal line through p (half-open in y).
    if ((a.y > p.y) != (b.y > p.y)) {
      const double x = a.x + (static_cast<double>(p.y) - a.y) * (static_cast<double>(b.x) - a.x) /
                                 (static_cast<double>(b.y) - a.y);
      if (static_cast<double>(p.x) < x) inside = !inside;
    }
  }
  return inside;
}

std::vector<uint32_t> select_lasso(const ParticleTable& t, const std::vector<Vec2>& poly,
                                   size_t rows) {
  std::vector<uint32_t> out;
  if (poly.size() < 3) return out;
  // Bounding box first: most particles of a large scene are far from a small lasso.
  Vec2 lo = poly[0], hi = poly[0];
  for (const Vec2& q : poly) {
    lo = Vec2{std::min(lo.x, q.x), std::min(lo.y, q.y)};
    hi = Vec2{std::max(hi.x, q.x), std::max(hi.y, q.y)};
  }
  for (size_t i = 0; i < std::min(t.size(), rows); ++i) {
    const Vec2 p{t.x[i], t.y[i]};
    if (p.x < lo.x || p.x > hi.x || p.y < lo.y || p.y > hi.y) continue;
    if (point_in_polygon(poly, p)) out.push_back(t.id[i]);
  }
  normalize_ids(out);
  return out;
}

void apply_selection(std::vector<uint32_t>& selection, const std::vector<uint32_t>& hits,
                     SelectOp op) {
  std::vector<uint32_t> out;
  switch (op) {
    case SelectOp::Replace: out = hits; break;
    case SelectOp::Add:
      out.reserve(selection.size() + hits.size());
      std::set_union(selection.begin(), selection.end(), hits.begin(), hits.end(),
                     std::back_inserter(out));
      break;
    case SelectOp::Remove:
      out.reserve(selection.size());
      std::set_difference(selection.begin(), selection.end(), hits.begin(), hits.end(),
                          std::back_inserter(out));
      break;
  }
  selection.swap(out);
}

std::string format_id_ranges(const std::vector<uint32_t>& ids, size_t max_chars) {
  std::string s;
  size_t i = 0;
  const size_t n = ids.size();
  while (i < n) {
    size_t j = i;
    while (j + 1 < n && ids[j + 1] == ids[j] + 1) ++j;
    std::string item;
    if (j == i)
      item = std::to_string(ids[i]);
    else if (j == i + 1)
      item = std::to_string(ids[i]) + ", " + std::to_string(ids[j]);
    else
      item = std::to_string(ids[i]) + "-" + std::to_string(ids[j]);
    if (max_chars > 0 && !s.empty() && s.size() + 2 + item.size() > max_chars) {
      s += " ... (" + std::to_string(n - i) + " more)";
      return s;
    }
    if (!s.empty()) s += ", ";
    s += item;
    i = j + 1;
  }
  return s;
}

bool parse_id_ranges(const std::string& text, std::vector<uint32_t>& out, std::string& error) {
  out.clear();
  error.clear();
  const size_t n = text.size();
  size_t i = 0;
  constexpr uint64_t kMaxId = 0xFFFFFFFEull;
  auto read_number = [&](uint64_t& v, size_t& at) -> bool {
    at = i;
    size_t b = i;
    while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == b) return false;
    auto r = std::from_chars(text.data() + b, text.data() + i, v);
    return r.ec == std::errc();
  };
  auto skip_blanks = [&] {
    while (i < n && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
  };
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  uint64_t total = 0;
  while (true) {
    skip_blanks();
    while (i < n && (text[i] == ',' || text[i] == ';')) {
      ++i;
      skip_blanks();
    }
    if (i >= n) break;
    uint64_t a = 0, b = 0;
    size_t at = 0;
    if (!read_number(a, at)) {
      error = "character " + std::to_string(i + 1) +
              ": expected an ID or a range like 12-40, got '" +
              text.substr(i, std::min<size_t>(12, n - i)) + "'";
      return false;
    }
    b = a;
    skip_blanks();
    if (i < n && text[i] == '-') {
      ++i;
      skip_blanks();
      size_t at2 = 0;
      if (!read_number(b, at2)) {
        error = "character " + std::to_string(i + 1) + ": expected the end of the range after '-'";
        return false;
      }
    }
    if (a < 1 || b > kMaxId || a > b) {
      error = "character " + std::to_string(at + 1) + ": '" + std::to_string(a) +
              (a == b ? std::string() : "-" + std::to_string(b)) +
              "' is not a valid ID range (IDs are 1-based, a <= b)";
      return false;
    }
    total += b - a + 1;
    if (total > 100'000'000ull) {
      error = "more than 100000000 IDs";
      return false;
    }
    ranges.emplace_back(a, b);
    skip_blanks();
    if (i < n && text[i] != ',' && text[i] != ';' &&
        !std::isdigit(static_cast<unsigned char>(text[i]))) {
      error =
          "character " + std::to_string(i + 1) + ": unexpected '" + std::string(1, text[i]) + "'";
      return false;
    }
  }
  out.reserve(static_cast<size_t>(total));
  for (const auto& r : ranges)
    for (uint64_t v = r.first; v <= r.second; ++v) out.push_back(static_cast<uint32_t>(v));
  normalize_ids(out);
  return true;
}

void rows_of_ids(const ParticleTable& t, const std::vector<uint32_t>& ids,
                 std::vector<uint32_t>& rows) {
  rows.clear();
  if (ids.empty()) return;
  for (size_t i = 0; i < t.size(); ++i)
    if (std::binary_search(ids.begin(), ids.end(), t.id[i]))
      rows.push_back(static_cast<uint32_t>(i));
}

Vec2 mean_velocity(const ParticleTable& t, const std::vector<uint32_t>& ids, bool inside,
                   size_t& count) {
  double sx = 0.0, sy = 0.0;
  count = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (std::binary_search(ids.begin(), ids.end(), t.id[i]) != inside) continue;
    sx += t.vx[i];
    sy += t.vy[i];
    ++count;
  }
  if (count == 0) return Vec2{};
  return Vec2{static_cast<float>(sx / count), static_cast<float>(sy / count)};
}

}  // namespace ps
