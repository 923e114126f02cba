#include "sim/io/p4.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include "sim/io/text.h"
#include "sim/mpm/mpm_particles.h"

namespace ps {

namespace {

// [SECTION] Text helpers ---------------------------------------------------------------

std::string squote(const std::string& s) { return "'" + s + "'"; }

// [SECTION] Generic block reader ---------------------------------------------------------

/// Reads "TIMESTEP <kind>" / "<t> <n>" / column header / n rows blocks.
/// `columns` are the accepted headers (the first is the writer's); `on_header`
/// is told which one matched; `on_row` parses one row (returns false after
/// reporting a problem).
template <class OnBlock, class OnRow>
void read_blocks(const std::string& text, const std::string& path, const char* kind,
                 const std::vector<std::vector<std::string>>& columns,
                 std::vector<InputError>& diags, OnBlock on_block, OnRow on_row) {
  const std::vector<std::string> lines = split_lines(text);
  size_t i = 0;
  auto loc = [&](size_t li, int col) { return SourceLoc{path, static_cast<int>(li + 1), col}; };
  auto skip_to_next_block = [&]() {
    while (i < lines.size()) {
      std::vector<TextField> t = split_blanks(lines[i]);
      if (!t.empty() && t[0].text == "TIMESTEP") return;
      ++i;
    }
  };
  while (i < lines.size()) {
    std::vector<TextField> t = split_blanks(lines[i]);
    if (t.empty()) {
      ++i;
      continue;
    }
    // Block title.
    if (t.size() != 2 || t[0].text != "TIMESTEP" || t[1].text != kind) {
      diags.emplace_back(loc(i, t[0].column), "TIMESTEP",
                         std::string("expected the block title 'TIMESTEP  ") + kind + "', got " +
                             squote(lines[i]));
      ++i;
      skip_to_next_block();
      continue;
    }
    const size_t title = i++;
    // "<t> <n>".
    if (i >= lines.size()) {
      diags.emplace_back(loc(title, 1), "time",
                         "block ends after its title: expected '<time> <count>'");
      break;
    }
    t = split_blanks(lines[i]);
    double time = 0.0;
    int64_t n = 0;
    if (t.size() != 2) {
      diags.emplace_back(loc(i, t.empty() ? 1 : t[0].column), t.empty() ? "time" : "count",
                         "expected '<time> <count>', got " + squote(lines[i]));
      ++i;
      skip_to_next_block();
      continue;
    }
    if (!parse_double(t[0].text, time)) {
      diags.emplace_back(loc(i, t[0].column), "time",
                         "expected a finite number, got " + squote(t[0].text));
      ++i;
      skip_to_next_block();
      continue;
    }
    if (!parse_i64(t[1].text, n) || n < 0) {
      diags.emplace_back(loc(i, t[1].column), "count",
                         "expected a row count (integer >= 0), got " + squote(t[1].text));
      ++i;
      skip_to_next_block();
      continue;
    }
    ++i;
    // Column header.
    if (i >= lines.size()) {
      diags.emplace_back(loc(i - 1, 1), "header", "block ends before its column header");
      break;
    }
    t = split_blanks(lines[i]);
    int which = -1;
    for (size_t c = 0; c < columns.size() && which < 0; ++c) {
      bool ok = t.size() == columns[c].size();
      for (size_t k = 0; ok && k < t.size(); ++k) ok = t[k].text == columns[c][k];
      if (ok) which = static_cast<int>(c);
    }
    if (which < 0) {
      std::string want;
      for (const auto& name : columns[0]) want += (want.empty() ? "" : "  ") + name;
      diags.emplace_back(loc(i, t.empty() ? 1 : t[0].column), "header",
                         "expected the column header '" + want + "', got " + squote(lines[i]));
      ++i;
      skip_to_next_block();
      continue;
    }
    ++i;
    on_block(time, which);
    const std::vector<std::string>& cols = columns[static_cast<size_t>(which)];
    // Rows: exactly n non-blank lines, unless a new block starts early.
    int64_t got = 0;
    while (got < n && i < lines.size()) {
      t = split_blanks(lines[i]);
      if (t.empty()) {
        ++i;
        continue;
      }
      if (t[0].text == "TIMESTEP") break;
      ++got;
      if (t.size() != cols.size()) {
        size_t k = std::min(t.size(), cols.size());
        int col =
            t.size() > cols.size() ? t[cols.size()].column : static_cast<int>(lines[i].size() + 1);
        diags.emplace_back(
            loc(i, col), t.size() > cols.size() ? std::string("row") : cols[k],
            "expected " + std::to_string(cols.size()) + " fields, got " + std::to_string(t.size()));
      } else {
        on_row(t, loc(i, 0), cols);
      }
      ++i;
    }
    if (got < n)
      diags.emplace_back(
          loc(title, 1), "count",
          "block declares " + std::to_string(n) + " rows but has " + std::to_string(got));
  }
}

/// Field-by-field row parsing with located errors.
struct RowParser {
  const std::vector<TextField>& t;
  SourceLoc at;
  const std::vector<std::string>& cols;
  std::vector<InputError>& diags;
  bool ok = true;

  void fail(size_t k, const std::string& msg) {
    if (!ok) return;
    SourceLoc l = at;
    l.column = t[k].column;
    diags.emplace_back(l, cols[k], msg);
    ok = false;
  }
  void number(size_t k, double& v) {
    if (ok && !parse_double(t[k].text, v))
      fail(k, "expected a finite number, got " + squote(t[k].text));
  }
  void id(size_t k, uint32_t& v) {
    if (ok && !parse_id(t[k].text, v))
      fail(k, "expected a particle ID (integer >= 1), got " + squote(t[k].text));
  }
  void integer(size_t k, int64_t& v) {
    if (ok && !parse_i64(t[k].text, v)) fail(k, "expected an integer, got " + squote(t[k].text));
  }
};

const std::vector<std::vector<std::string>>& p4p_columns() {
  static const std::vector<std::vector<std::string>> c = {
      {"ID", "GROUP", "VOLUME", "MASS", "PX", "PY", "PZ", "VX", "VY", "VZ"}};
  return c;
}

const std::vector<std::vector<std::string>>& p4c_columns() {
  static const std::vector<std::vector<std::string>> c = {
      {"P1", "P2", "CX", "CY", "CZ", "FX", "FY", "FZ", "CONTACT_IS_BONDED"},
      {"P1", "P2", "CX", "CY", "CZ", "FX", "FY", "FZ"}};
  return c;
}

}  // namespace

// [SECTION] Numbers --------------------------------------------------------------------------

namespace {

/// Shortest round-trip text of v (T = double or float) laid out like Python's
/// repr: fixed notation when the decimal exponent E is in [-4, 16), else
/// exponent notation; integers have no ".0" ("400000", as the original files).
template <class T>
std::string shortest_text(T v) {
  char buf[128];
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  if (!std::isfinite(v)) {
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
  }
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const int exponent = std::atoi(sci.c_str() + sci.find('e') + 1);
  if (exponent < -4 || exponent >= 16) return sci;
  r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

}  // namespace

std::string shortest_number(double v, P4Precision precision) {
  if (precision == P4Precision::Float) {
    const float f = static_cast<float>(v);
    std::string s = shortest_text(f);
    // The reader parses doubles and the converter rounds to float: check that
    // this double-rounding path gives f back; otherwise use the double's text.
    double back = 0.0;
    std::from_chars(s.data(), s.data() + s.size(), back);
    if (static_cast<float>(back) == f || std::isnan(f)) return s;
    return shortest_text(static_cast<double>(f));
  }
  return shortest_text(v);
}

// [SECTION] P4P ------------------------------------------------------------------------------

P4pLoad parse_p4p(const std::string& text, const std::string& path) {
  P4pLoad res;
  read_blocks(
      text, path, "PARTICLES", p4p_columns(), res.diagnostics,
      [&](double time, int) {
        res.frames.emplace_back();
        res.frames.back().time = time;
      },
      [&](const std::vector<TextField>& t, const SourceLoc& at,
          const std::vector<std::string>& cols) {
        RowParser rp{t, at, cols, res.diagnostics};
        P4Particle p;
        rp.id(0, p.id);
        rp.integer(1, p.group);
        rp.number(2, p.volume);
        rp.number(3, p.mass);
        rp.number(4, p.px);
        rp.number(5, p.py);
        rp.number(6, p.pz);
        rp.number(7, p.vx);
        rp.number(8, p.vy);
        rp.number(9, p.vz);
        if (rp.ok) res.frames.back().particles.push_back(p);
      });
  return res;
}

std::string p4p_text(const std::vector<P4ParticleFrame>& frames, P4Precision pr) {
  std::string s;
  for (const P4ParticleFrame& f : frames) {
    s += "TIMESTEP  PARTICLES\n";
    s += shortest_number(f.time) + " " + std::to_string(f.particles.size()) + "\n";
    s += "ID  GROUP  VOLUME  MASS  PX  PY  PZ  VX  VY  VZ\n";
    for (const P4Particle& p : f.particles) {
      s += std::to_string(p.id);
      s += ' ';
      s += std::to_string(p.group);
      for (double v : {p.volume, p.mass, p.px, p.py, p.pz, p.vx, p.vy, p.vz}) {
        s += ' ';
        s += shortest_number(v, pr);
      }
      s += '\n';
    }
  }
  return s;
}

// [SECTION] P4C ------------------------------------------------------------------------------

P4cLoad parse_p4c(const std::string& text, const std::string& path) {
  P4cLoad res;
  read_blocks(
      text, path, "CONTACTS", p4c_columns(), res.diagnostics,
      [&](double time, int which) {
        res.frames.emplace_back();
        res.frames.back().time = time;
        res.frames.back().has_bonded_column = which == 0;
      },
      [&](const std::vector<TextField>& t, const SourceLoc& at,
          const std::vector<std::string>& cols) {
        RowParser rp{t, at, cols, res.diagnostics};
        P4Contact c;
        rp.id(0, c.p1);
        rp.id(1, c.p2);
        rp.number(2, c.cx);
        rp.number(3, c.cy);
        rp.number(4, c.cz);
        rp.number(5, c.fx);
        rp.number(6, c.fy);
        rp.number(7, c.fz);
        if (cols.size() == 9) rp.integer(8, c.bonded);
        if (rp.ok) res.frames.back().contacts.push_back(c);
      });
  return res;
}

std::string p4c_text(const std::vector<P4ContactFrame>& frames, P4Precision pr) {
  std::string s;
  for (const P4ContactFrame& f : frames) {
    s += "TIMESTEP  CONTACTS\n";
    s += shortest_number(f.time) + " " + std::to_string(f.contacts.size()) + "\n";
    s += f.has_bonded_column ? "P1  P2  CX  CY  CZ  FX  FY  FZ  CONTACT_IS_BONDED\n"
                             : "P1  P2  CX  CY  CZ  FX  FY  FZ\n";
    for (const P4Contact& c : f.contacts) {
      s += std::to_string(c.p1);
      s += ' ';
      s += std::to_string(c.p2);
      for (double v : {c.cx, c.cy, c.cz, c.fx, c.fy, c.fz}) {
        s += ' ';
        s += shortest_number(v, pr);
      }
      if (f.has_bonded_column) {
        s += ' ';
        s += std::to_string(c.bonded);
      }
      s += '\n';
    }
  }
  return s;
}

// [SECTION] Files --------------------------------------------------------------------------

P4pLoad load_p4p(const std::string& path) {
  try {
    return parse_p4p(read_file_text(path), path);
  } catch (const InputError& e) {
    P4pLoad r;
    r.diagnostics.push_back(e);
    return r;
  }
}

P4cLoad load_p4c(const std::string& path) {
  try {
    return parse_p4c(read_file_text(path), path);
  } catch (const InputError& e) {
    P4cLoad r;
    r.diagnostics.push_back(e);
    return r;
  }
}

void save_p4p(const std::string& path, const std::vector<P4ParticleFrame>& frames,
              P4Precision precision) {
  write_file_text(path, p4p_text(frames, precision));
}

void save_p4c(const std::string& path, const std::vector<P4ContactFrame>& frames,
              P4Precision precision) {
  write_file_text(path, p4c_text(frames, precision));
}

// [SECTION] MPM conversion ------------------------------------------------------------------

P4ParticleFrame p4_from_mpm(const MpmParticles& p, double time) {
  P4ParticleFrame f;
  f.time = time;
  f.particles.resize(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    P4Particle& q = f.particles[i];
    q.id = p.id[i];
    q.group = p.group[i];
    q.volume = p.vol0[i];
    q.mass = p.mass[i];
    q.px = p.x[i].x;
    q.py = p.x[i].y;
    q.vx = p.v[i].x;
    q.vy = p.v[i].y;
  }
  return f;
}

void mpm_from_p4(const P4ParticleFrame& frame, MpmParticles& p, uint8_t material) {
  for (const P4Particle& q : frame.particles)
    if (q.group < 0 || q.group > 65535)
      throw InputError(SourceLoc{}, "GROUP",
                       "particle " + std::to_string(q.id) + ": group " + std::to_string(q.group) +
                           " does not fit an MPM group (0..65535)");
  p.clear();
  p.reserve(frame.particles.size());
  for (const P4Particle& q : frame.particles) {
    size_t i =
        p.add(Vec2{static_cast<float>(q.px), static_cast<float>(q.py)},
              Vec2{static_cast<float>(q.vx), static_cast<float>(q.vy)}, static_cast<float>(q.mass),
              static_cast<float>(q.volume), material, static_cast<uint16_t>(q.group));
    p.id[i] = q.id;
  }
  p.note_ids();
}

}  // namespace ps
