#include "sim/io/dump.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include "sim/core/atomic_write.h"
#include "sim/core/error.h"

namespace ps {

bool parse_dump_format(const std::string& s, DumpFormat& out) {
  if (s == "csv") {
    out = DumpFormat::CSV;
    return true;
  }
  if (s == "ply") {
    out = DumpFormat::PLY;
    return true;
  }
  if (s == "vtk") {
    out = DumpFormat::VTK;
    return true;
  }
  if (s == "p4") {
    out = DumpFormat::P4;
    return true;
  }
  return false;
}

const char* dump_extension(DumpFormat f) {
  switch (f) {
    case DumpFormat::CSV: return "csv";
    case DumpFormat::PLY: return "ply";
    case DumpFormat::VTK: return "vtk";
    case DumpFormat::P4: return "p4p";
  }
  return "dat";
}

namespace {

// %.9g round-trips any float exactly.
void put_float(std::string& s, float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  s += buf;
}

}  // namespace

void write_dump(const std::string& path, DumpFormat f, const ParticleTable& t) {
  if (f == DumpFormat::P4)
    throw InputError({path, 0, 0}, "", "P4 files are written from the simulation (p4_particles)");
  const size_t n = t.size();
  std::string s;
  s.reserve(n * 96 + 256);
  if (f == DumpFormat::CSV) {
    s += "id,material,x,y,vx,vy,mass,group";
    for (const auto& e : t.extra_names) s += "," + e;
    s += "\n";
    for (size_t i = 0; i < n; ++i) {
      s += std::to_string(t.id[i]);
      s += ',';
      s += std::to_string(t.material[i]);
      s += ',';
      put_float(s, t.x[i]);
      s += ',';
      put_float(s, t.y[i]);
      s += ',';
      put_float(s, t.vx[i]);
      s += ',';
      put_float(s, t.vy[i]);
      s += ',';
      put_float(s, t.mass[i]);
      s += ',';
      s += std::to_string(t.group[i]);
      for (const auto& col : t.extra) {
        s += ',';
        put_float(s, col[i]);
      }
      s += '\n';
    }
  } else if (f == DumpFormat::PLY) {
    s += "ply\nformat ascii 1.0\ncomment Particle Sandbox dump\nelement vertex " +
         std::to_string(n) + "\n";
    s +=
        "property float x\nproperty float y\nproperty float z\nproperty uint id\nproperty ushort material\n"
        "property float vx\nproperty float vy\nproperty float mass\nproperty ushort group\n";
    for (const auto& e : t.extra_names) s += "property float " + e + "\n";
    s += "end_header\n";
    for (size_t i = 0; i < n; ++i) {
      put_float(s, t.x[i]);
      s += ' ';
      put_float(s, t.y[i]);
      s += " 0 ";
      s += std::to_string(t.id[i]);
      s += ' ';
      s += std::to_string(t.material[i]);
      s += ' ';
      put_float(s, t.vx[i]);
      s += ' ';
      put_float(s, t.vy[i]);
      s += ' ';
      put_float(s, t.mass[i]);
      s += ' ';
      s += std::to_string(t.group[i]);
      for (const auto& col : t.extra) {
        s += ' ';
        put_float(s, col[i]);
      }
      s += '\n';
    }
  } else {
    s += "# vtk DataFile Version 3.0\nParticle Sandbox dump\nASCII\nDATASET POLYDATA\n";
    s += "POINTS " + std::to_string(n) + " float\n";
    for (size_t i = 0; i < n; ++i) {
      put_float(s, t.x[i]);
      s += ' ';
      put_float(s, t.y[i]);
      s += " 0\n";
    }
    s += "VERTICES " + std::to_string(n) + " " + std::to_string(2 * n) + "\n";
    for (size_t i = 0; i < n; ++i) s += "1 " + std::to_string(i) + "\n";
    s += "POINT_DATA " + std::to_string(n) + "\n";
    s += "SCALARS id unsigned_int 1\nLOOKUP_TABLE default\n";
    for (size_t i = 0; i < n; ++i) s += std::to_string(t.id[i]) + "\n";
    s += "SCALARS material unsigned_short 1\nLOOKUP_TABLE default\n";
    for (size_t i = 0; i < n; ++i) s += std::to_string(t.material[i]) + "\n";
    s += "SCALARS mass float 1\nLOOKUP_TABLE default\n";
    for (size_t i = 0; i < n; ++i) {
      put_float(s, t.mass[i]);
      s += '\n';
    }
    s += "SCALARS group unsigned_short 1\nLOOKUP_TABLE default\n";
    for (size_t i = 0; i < n; ++i) s += std::to_string(t.group[i]) + "\n";
    for (size_t e = 0; e < t.extra.size(); ++e) {
      s += "SCALARS " + t.extra_names[e] + " float 1\nLOOKUP_TABLE default\n";
      for (size_t i = 0; i < n; ++i) {
        put_float(s, t.extra[e][i]);
        s += '\n';
      }
    }
    s += "VECTORS velocity float\n";
    for (size_t i = 0; i < n; ++i) {
      put_float(s, t.vx[i]);
      s += ' ';
      put_float(s, t.vy[i]);
      s += " 0\n";
    }
  }
  write_file_atomic(path, s);
}

ParticleTable read_csv_dump(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, 0}, "", "cannot open file");
  ParticleTable t;
  std::string line;
  if (!std::getline(in, line))
    throw InputError({path, 1, 1}, "", "empty file: expected a header row");
  std::vector<std::string> cols;
  {
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) cols.push_back(c);
  }
  static const char* required[] = {"id", "material", "x", "y", "vx", "vy", "mass", "group"};
  for (size_t i = 0; i < 8; ++i)
    if (i >= cols.size() || cols[i] != required[i])
      throw InputError({path, 1, 1}, required[i],
                       "header must start with id,material,x,y,vx,vy,mass,group");
  for (size_t i = 8; i < cols.size(); ++i) t.extra_names.push_back(cols[i]);
  t.extra.resize(t.extra_names.size());
  int lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) f.push_back(c);
    if (f.size() != cols.size())
      throw InputError({path, lineno, 1}, "",
                       "expected " + std::to_string(cols.size()) + " columns, found " +
                           std::to_string(f.size()));
    auto num = [&](size_t k) {
      char* end = nullptr;
      double v = std::strtod(f[k].c_str(), &end);
      if (f[k].empty() || *end != '\0')
        throw InputError({path, lineno, 0}, cols[k], "not a number: '" + f[k] + "'");
      return v;
    };
    t.id.push_back(static_cast<uint32_t>(num(0)));
    t.material.push_back(static_cast<uint16_t>(num(1)));
    t.x.push_back(static_cast<float>(num(2)));
    t.y.push_back(static_cast<float>(num(3)));
    t.vx.push_back(static_cast<float>(num(4)));
    t.vy.push_back(static_cast<float>(num(5)));
    t.mass.push_back(static_cast<float>(num(6)));
    t.group.push_back(static_cast<uint16_t>(num(7)));
    for (size_t e = 0; e < t.extra.size(); ++e)
      t.extra[e].push_back(static_cast<float>(num(8 + e)));
  }
  return t;
}

}  // namespace ps
