/// P4P (particles) and P4C (contacts) files of the Taichi DEM / Hackathon 2022
/// tool (seeds/000). Layout, as the original tool writes it (one block per
/// saved time, blocks appended to the same file):
///
///   TIMESTEP  PARTICLES
///   <t> <n>
///   ID  GROUP  VOLUME  MASS  PX  PY  PZ  VX  VY  VZ
///   <n rows, fields separated by one space>
///
///   TIMESTEP  CONTACTS
///   <t> <n>
///   P1  P2  CX  CY  CZ  FX  FY  FZ  CONTACT_IS_BONDED
///   <n rows>
///
/// The reader splits on any blanks, skips blank lines between blocks, accepts
/// the older P4C header without CONTACT_IS_BONDED (8 columns), and reports
/// errors as "FILE:LINE:COL: field 'PX': ...". The writer uses the original's
/// headers (two spaces between names), single spaces in rows, '\n' line ends,
/// and the shortest number text that reads back bit-identical. See docs/sgf.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "sim/core/error.h"

namespace ps {

struct MpmParticles;

/// One particle row. Doubles, so any file value survives a round trip.
struct P4Particle {
  uint32_t id = 0;  ///< stable 1-based ID
  int64_t group = 0;
  double volume = 0.0, mass = 0.0;
  double px = 0.0, py = 0.0, pz = 0.0;
  double vx = 0.0, vy = 0.0, vz = 0.0;
};

/// One contact row: particles p1, p2 (IDs), contact point, force on p1.
struct P4Contact {
  uint32_t p1 = 0, p2 = 0;
  double cx = 0.0, cy = 0.0, cz = 0.0;
  double fx = 0.0, fy = 0.0, fz = 0.0;
  int64_t bonded = 0;  ///< CONTACT_IS_BONDED (0 or 1 in the original's files)
};

struct P4ParticleFrame {
  double time = 0.0;
  std::vector<P4Particle> particles;
};

struct P4ContactFrame {
  double time = 0.0;
  bool has_bonded_column = true;  ///< false for the older 8-column header
  std::vector<P4Contact> contacts;
};

/// How numbers are written: the shortest text that reads back to the same
/// double, or (Float) the shortest that reads back, via double, to the same
/// float — for values that came from float solver state.
enum class P4Precision : uint8_t { Double, Float };

/// Frames read so far plus the problems found. A bad row is reported and
/// skipped; a bad block header is reported and the reader resumes at the next
/// "TIMESTEP" line.
struct P4pLoad {
  std::vector<P4ParticleFrame> frames;
  std::vector<InputError> diagnostics;
  bool ok() const { return diagnostics.empty(); }
};
struct P4cLoad {
  std::vector<P4ContactFrame> frames;
  std::vector<InputError> diagnostics;
  bool ok() const { return diagnostics.empty(); }
};

P4pLoad parse_p4p(const std::string& text, const std::string& path);
P4cLoad parse_p4c(const std::string& text, const std::string& path);
/// Reads a file (a missing file is one diagnostic).
P4pLoad load_p4p(const std::string& path);
P4cLoad load_p4c(const std::string& path);

std::string p4p_text(const std::vector<P4ParticleFrame>& frames,
                     P4Precision precision = P4Precision::Double);
std::string p4c_text(const std::vector<P4ContactFrame>& frames,
                     P4Precision precision = P4Precision::Double);
/// Writes (replaces) the file atomically (write_file_atomic): the old file
/// stays whole on failure. Throws WriteError naming the file and the OS reason.
void save_p4p(const std::string& path, const std::vector<P4ParticleFrame>& frames,
              P4Precision precision = P4Precision::Double);
void save_p4c(const std::string& path, const std::vector<P4ContactFrame>& frames,
              P4Precision precision = P4Precision::Double);

/// The shortest text that reads back (std::from_chars / strtod) as `v`
/// (Float: as float(v) after rounding the parsed double), laid out like
/// Python's repr: fixed notation for decimal exponents in [-4, 16), exponent
/// notation otherwise ("1e-05", "2.5e+20"), integers without ".0" ("400000").
/// P4P/P4C and SGF files are written with it.
std::string shortest_number(double v, P4Precision precision = P4Precision::Double);

// [SECTION] MPM conversion -----------------------------------------------------------

/// MPM particles -> P4P rows: ID, GROUP = group, VOLUME = vol0 (area in 2D),
/// MASS, PX PY = x, VX VY = v, PZ = VZ = 0. Index order.
P4ParticleFrame p4_from_mpm(const MpmParticles& p, double time = 0.0);
/// P4P rows -> MPM particles at rest state (F = I, C = 0, J = Jp = 1, fext = 0),
/// all of material `material`. z is dropped. Throws InputError (field 'GROUP')
/// when a group does not fit uint16.
void mpm_from_p4(const P4ParticleFrame& frame, MpmParticles& p, uint8_t material = 0);

}  // namespace ps
