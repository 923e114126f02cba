#include "sim/io/json_read.h"

#include <cmath>
#include <cstdio>

namespace ps {

std::string describe(const Json& v) {
  switch (v.type()) {
    case Json::Type::String: return "string \"" + v.as_string() + "\"";
    case Json::Type::Number: return "number " + format_number(v.as_number());
    case Json::Type::Bool: return v.as_bool() ? "true" : "false";
    default: return Json::type_name(v.type());
  }
}

static std::string range_text(double lo, double hi) {
  return "[" + format_number(lo) + ", " + format_number(hi) + "]";
}

double json_number(const Json& v, const std::string& field, double lo, double hi) {
  if (!v.is_number()) throw InputError(v.loc(), field, "expected a number, got " + describe(v));
  double x = v.as_number();
  if (!(x >= lo && x <= hi))
    throw InputError(v.loc(), field,
                     "value " + format_number(x) + " is out of range " + range_text(lo, hi));
  return x;
}

Vec2 json_vec2(const Json& v, const std::string& field) {
  if (!v.is_array() || v.size() != 2)
    throw InputError(v.loc(), field, "expected an array of two numbers [x, y], got " + describe(v));
  return {static_cast<float>(json_number(v.at(0), field + "[0]", -1e30, 1e30)),
          static_cast<float>(json_number(v.at(1), field + "[1]", -1e30, 1e30))};
}

ObjReader::ObjReader(const Json& obj, std::string path) : obj_(obj), path_(std::move(path)) {
  if (!obj.is_object())
    throw InputError(obj.loc(), path_, "expected an object {...}, got " + describe(obj));
}

const Json* ObjReader::get(const char* key) {
  used_.insert(key);
  return obj_.find(key);
}

void ObjReader::fail(const char* key, const std::string& msg) const {
  const Json* v = obj_.find(key);
  throw InputError(v ? v->loc() : obj_.loc(), field(key), msg);
}

double ObjReader::number(const char* key, double def, double lo, double hi) {
  const Json* v = get(key);
  return v ? json_number(*v, field(key), lo, hi) : def;
}

double ObjReader::number_required(const char* key, double lo, double hi) {
  const Json* v = get(key);
  if (!v) throw InputError(obj_.loc(), field(key), "required field is missing");
  return json_number(*v, field(key), lo, hi);
}

int ObjReader::integer(const char* key, int def, int lo, int hi) {
  const Json* v = get(key);
  if (!v) return def;
  double x = json_number(*v, field(key), lo, hi);
  if (x != std::floor(x))
    throw InputError(v->loc(), field(key), "expected an integer, got " + format_number(x));
  return static_cast<int>(x);
}

bool ObjReader::boolean(const char* key, bool def) {
  const Json* v = get(key);
  if (!v) return def;
  if (!v->is_bool())
    throw InputError(v->loc(), field(key), "expected true or false, got " + describe(*v));
  return v->as_bool();
}

std::string ObjReader::string(const char* key, const std::string& def) {
  const Json* v = get(key);
  if (!v) return def;
  if (!v->is_string())
    throw InputError(v->loc(), field(key), "expected a string, got " + describe(*v));
  return v->as_string();
}

std::string ObjReader::string_required(const char* key) {
  const Json* v = get(key);
  if (!v) throw InputError(obj_.loc(), field(key), "required field is missing");
  if (!v->is_string())
    throw InputError(v->loc(), field(key), "expected a string, got " + describe(*v));
  return v->as_string();
}

int ObjReader::choice(const char* key, int def, std::initializer_list<const char*> choices) {
  return choice(key, def, std::vector<const char*>(choices));
}

int ObjReader::choice(const char* key, int def, const std::vector<const char*>& choices) {
  const Json* v = get(key);
  if (!v) return def;
  std::string list;
  int i = 0;
  for (const char* c : choices) {
    if (v->is_string() && v->as_string() == c) return i;
    list += (i ? ", " : "") + std::string(c);
    ++i;
  }
  throw InputError(v->loc(), field(key), "expected one of " + list + "; got " + describe(*v));
}

Vec2 ObjReader::vec2(const char* key, Vec2 def) {
  const Json* v = get(key);
  return v ? json_vec2(*v, field(key)) : def;
}

Vec2 ObjReader::vec2_required(const char* key) {
  const Json* v = get(key);
  if (!v) throw InputError(obj_.loc(), field(key), "required field is missing");
  return json_vec2(*v, field(key));
}

void ObjReader::color(const char* key, float out[3]) {
  const Json* v = get(key);
  if (!v) return;
  if (v->is_string()) {
    const std::string& s = v->as_string();
    unsigned r, g, b;
    if (s.size() == 7 && s[0] == '#' && std::sscanf(s.c_str() + 1, "%2x%2x%2x", &r, &g, &b) == 3) {
      out[0] = r / 255.f;
      out[1] = g / 255.f;
      out[2] = b / 255.f;
      return;
    }
  } else if (v->is_array() && v->size() == 3) {
    for (int i = 0; i < 3; ++i)
      out[i] = static_cast<float>(json_number(
          v->at(static_cast<size_t>(i)), field(key) + "[" + std::to_string(i) + "]", 0.0, 1.0));
    return;
  }
  throw InputError(v->loc(), field(key),
                   "expected a colour \"#rrggbb\" or [r, g, b] in 0..1, got " + describe(*v));
}

void ObjReader::finish() const {
  for (const auto& m : obj_.members())
    if (!used_.count(m.first))
      throw InputError(obj_.key_loc(m.first), field(m.first.c_str()), "unknown field");
}

}  // namespace ps
