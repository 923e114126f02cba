/// A JSON document model that remembers where each value came from (file,
/// line, column), so scene errors can name the exact place. Object members
/// keep their file order. Used for scenes; writes back as indented JSON.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "sim/core/error.h"

namespace ps {

class Json {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };

  Json() = default;
  static Json number(double v) {
    Json j;
    j.type_ = Type::Number;
    j.num_ = v;
    return j;
  }
  static Json boolean(bool v) {
    Json j;
    j.type_ = Type::Bool;
    j.bool_ = v;
    return j;
  }
  static Json string(std::string v) {
    Json j;
    j.type_ = Type::String;
    j.str_ = std::move(v);
    return j;
  }
  static Json array() {
    Json j;
    j.type_ = Type::Array;
    return j;
  }
  static Json object() {
    Json j;
    j.type_ = Type::Object;
    return j;
  }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_number() const { return type_ == Type::Number; }
  bool is_string() const { return type_ == Type::String; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }
  static const char* type_name(Type t);

  double as_number() const { return num_; }
  bool as_bool() const { return bool_; }
  const std::string& as_string() const { return str_; }

  // Arrays.
  size_t size() const { return type_ == Type::Array ? items_.size() : members_.size(); }
  const Json& at(size_t i) const { return items_[i]; }
  Json& at(size_t i) { return items_[i]; }
  void push_back(Json v) { items_.push_back(std::move(v)); }

  // Objects (ordered).
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }
  std::vector<std::pair<std::string, Json>>& members() { return members_; }
  const Json* find(const std::string& key) const;
  Json* find(const std::string& key);
  /// Sets (or replaces) a member, keeping its position when it exists.
  Json& set(const std::string& key, Json v);
  bool erase(const std::string& key);

  const SourceLoc& loc() const { return loc_; }
  void set_loc(const SourceLoc& l) { loc_ = l; }
  /// Location of the key of member `key` (where "unknown field" points).
  SourceLoc key_loc(const std::string& key) const;

  /// Parses text; throws InputError naming file:line:col on syntax errors.
  static Json parse(const std::string& text, const std::string& file);
  static Json parse_file(const std::string& path);
  /// Indented JSON text; short numeric arrays stay on one line.
  std::string dump(int indent = 2) const;

 private:
  friend class JsonParser;
  void dump_to(std::string& out, int indent, int depth) const;

  Type type_ = Type::Null;
  double num_ = 0.0;
  bool bool_ = false;
  std::string str_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
  std::vector<SourceLoc> key_locs_;
  SourceLoc loc_;
};

/// Formats a double so that it reads back to the same value, shortest first.
std::string format_number(double v);
/// A JSON string literal for `s` (quotes and escapes), for hand-laid-out files.
std::string json_quote(const std::string& s);

}  // namespace ps
