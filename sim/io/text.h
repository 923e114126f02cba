/// Small, strict text helpers for the line-oriented file formats (SGF CSV,
/// P4P / P4C, ID lists): line splitting, fields with their columns (for
/// "FILE:LINE:COL" errors) and numbers that must use the whole field.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ps {

/// A field's text and its 1-based column in the line.
struct TextField {
  std::string text;
  int column = 1;
};

/// Lines of a text (LF or CRLF), without a leading UTF-8 BOM.
std::vector<std::string> split_lines(const std::string& text);
/// Fields separated by blanks (spaces, tabs).
std::vector<TextField> split_blanks(const std::string& line);
/// Fields separated by ',' with blanks trimmed around each.
std::vector<TextField> split_csv(const std::string& line);
bool is_blank_char(char c);
/// True when the line holds only blanks.
bool is_blank_line(const std::string& s);

/// Whole-field parses (an optional leading '+' is accepted); false on any
/// trailing text, overflow or a non-finite value.
bool parse_double(const std::string& s, double& v);
bool parse_i64(const std::string& s, int64_t& v);
bool parse_u64(const std::string& s, uint64_t& v);
/// A 1-based particle ID in [1, 2^32 - 2] (2^32 - 1 is reserved as "none").
bool parse_id(const std::string& s, uint32_t& id);

/// Whole file as bytes; throws InputError naming the file when it cannot be read.
std::string read_file_text(const std::string& path);
/// Replaces a file's bytes atomically (write_file_atomic, sim/core/atomic_write.h):
/// never a half-written file. Throws WriteError (a std::runtime_error) naming
/// the file and the OS reason; the previous file is then unchanged.
void write_file_text(const std::string& path, const std::string& text);

}  // namespace ps
