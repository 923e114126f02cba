#include "sim/io/text.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include "sim/core/atomic_write.h"
#include "sim/core/error.h"
#include "sim/core/file.h"

namespace ps {

bool is_blank_char(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool is_blank_line(const std::string& s) {
  for (char c : s)
    if (!is_blank_char(c)) return false;
  return true;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t b = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) b = 3;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    std::string l = text.substr(b, e - b);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(std::move(l));
    b = e + 1;
  }
  return lines;
}

std::vector<TextField> split_blanks(const std::string& line) {
  std::vector<TextField> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank_char(line[i])) ++i;
    if (i >= line.size()) break;
    size_t b = i;
    while (i < line.size() && !is_blank_char(line[i])) ++i;
    out.push_back({line.substr(b, i - b), static_cast<int>(b + 1)});
  }
  return out;
}

std::vector<TextField> split_csv(const std::string& line) {
  std::vector<TextField> out;
  size_t b = 0;
  while (true) {
    size_t e = line.find(',', b);
    size_t end = e == std::string::npos ? line.size() : e;
    size_t s = b;
    while (s < end && is_blank_char(line[s])) ++s;
    size_t t = end;
    while (t > s && is_blank_char(line[t - 1])) --t;
    out.push_back({line.substr(s, t - s), static_cast<int>(s + 1)});
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

template <class T>
static bool parse_whole(const std::string& s, T& v) {
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+') ++b;
  if (b == e) return false;
  auto r = std::from_chars(b, e, v);
  return r.ec == std::errc() && r.ptr == e;
}

bool parse_double(const std::string& s, double& v) { return parse_whole(s, v) && std::isfinite(v); }
bool parse_i64(const std::string& s, int64_t& v) { return parse_whole(s, v); }
bool parse_u64(const std::string& s, uint64_t& v) { return parse_whole(s, v); }

bool parse_id(const std::string& s, uint32_t& id) {
  uint64_t v = 0;
  if (!parse_u64(s, v) || v < 1 || v >= 0xFFFFFFFFull) return false;
  id = static_cast<uint32_t>(v);
  return true;
}

std::string read_file_text(const std::string& path) { return read_file_bytes(path); }

void write_file_text(const std::string& path, const std::string& text) {
  write_file_atomic(path, text);
}

}  // namespace ps
