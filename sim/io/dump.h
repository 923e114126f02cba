/// Particle dumps that ParaView and Houdini open: CSV (header row), PLY
/// (ASCII, vertex elements) and legacy VTK (POLYDATA with point data).
#pragma once
#include <string>
#include <vector>
#include "sim/core/particle_table.h"

namespace ps {

/// P4 writes the original tool's P4P (particles) and P4C (contacts) files,
/// one block per dump appended to particles.p4p / contacts.p4c.
enum class DumpFormat { CSV, PLY, VTK, P4 };

/// Parses "csv", "ply", "vtk" or "p4"; returns false otherwise.
bool parse_dump_format(const std::string& s, DumpFormat& out);
const char* dump_extension(DumpFormat f);

/// Writes the table; columns id, material, x, y, vx, vy, mass, then group
/// and the extras. The file is replaced atomically (write_file_atomic);
/// throws WriteError naming the file and the OS reason when it cannot be.
void write_dump(const std::string& path, DumpFormat f, const ParticleTable& t);

/// Reads a CSV dump back (used by tests and tools); throws InputError with
/// file and line on malformed rows.
ParticleTable read_csv_dump(const std::string& path);

}  // namespace ps
