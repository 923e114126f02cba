/// Errors that carry where they come from: a file, a line and column, a field.
#pragma once
#include <stdexcept>
#include <string>

namespace ps {

struct SourceLoc {
  std::string file;  ///< path, or "--set" for command-line overrides
  int line = 0;      ///< 1-based; 0 when unknown
  int column = 0;    ///< 1-based; 0 when unknown
};

/// An input error: "FILE:LINE:COL: field 'FIELD': MESSAGE".
class InputError : public std::runtime_error {
 public:
  InputError(const SourceLoc& loc, const std::string& field, const std::string& message)
      : std::runtime_error(format(loc, field, message)),
        loc_(loc),
        field_(field),
        message_(message) {}
  const SourceLoc& loc() const { return loc_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

  static std::string format(const SourceLoc& loc, const std::string& field,
                            const std::string& msg) {
    std::string s = loc.file.empty() ? std::string("<input>") : loc.file;
    if (loc.line > 0) {
      s += ":" + std::to_string(loc.line);
      if (loc.column > 0) s += ":" + std::to_string(loc.column);
    }
    s += ": ";
    if (!field.empty()) s += "field '" + field + "': ";
    return s + msg;
  }

 private:
  SourceLoc loc_;
  std::string field_, message_;
};

}  // namespace ps
