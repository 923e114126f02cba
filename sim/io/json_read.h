/// Typed, located field access for JSON objects (scene files, overrides).
/// Every read checks type and range and throws InputError naming the file,
/// line, column and the field's dotted path; finish() rejects unknown fields.
#pragma once
#include <array>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>
#include "sim/core/names.h"
#include "sim/core/vec.h"
#include "sim/io/json.h"

namespace ps {

class ObjReader {
 public:
  /// `path` is the dotted path of this object ("solver", "bodies[2]").
  ObjReader(const Json& obj, std::string path);

  bool has(const char* key) const { return obj_.find(key) != nullptr; }
  const Json* get(const char* key);  ///< marks the key used; null when absent
  std::string field(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& path() const { return path_; }
  const Json& json() const { return obj_; }

  double number(const char* key, double def, double lo, double hi);
  double number_required(const char* key, double lo, double hi);
  int integer(const char* key, int def, int lo, int hi);
  bool boolean(const char* key, bool def);
  std::string string(const char* key, const std::string& def);
  std::string string_required(const char* key);
  /// One of `choices`; returns its index.
  int choice(const char* key, int def, std::initializer_list<const char*> choices);
  int choice(const char* key, int def, const std::vector<const char*>& choices);
  /// One of a name table's names, as an index (-1 for `def` = -1: required).
  template <size_t N>
  int choice(const char* key, int def, const std::array<const char*, N>& names) {
    return choice(key, def, std::vector<const char*>(names.begin(), names.end()));
  }
  /// One of a name table's values (sim/core/names.h), `def` when absent.
  template <class E, size_t N>
  E choice(const char* key, E def, const NameTable<E, N>& table) {
    return table.value(choice(key, table.index(def), table.names));
  }
  Vec2 vec2(const char* key, Vec2 def);
  Vec2 vec2_required(const char* key);
  /// Colour as [r, g, b] in 0..1 or "#rrggbb".
  void color(const char* key, float out[3]);

  /// Throws for the first member that no read asked for.
  void finish() const;
  [[noreturn]] void fail(const char* key, const std::string& msg) const;

 private:
  const Json& obj_;
  std::string path_;
  std::set<std::string> used_;
};

/// Reads a number from a JSON value with a location-aware error.
double json_number(const Json& v, const std::string& field, double lo, double hi);
Vec2 json_vec2(const Json& v, const std::string& field);
/// "expected a number, got string \"abc\"".
std::string describe(const Json& v);

}  // namespace ps
