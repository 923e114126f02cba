#include "sim/io/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include "sim/core/limits.h"
#include "sim/io/text.h"

namespace ps {

const char* Json::type_name(Type t) {
  switch (t) {
    case Type::Null: return "null";
    case Type::Bool: return "boolean";
    case Type::Number: return "number";
    case Type::String: return "string";
    case Type::Array: return "array";
    case Type::Object: return "object";
  }
  return "?";
}

const Json* Json::find(const std::string& key) const {
  for (const auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}
Json* Json::find(const std::string& key) {
  for (auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}
Json& Json::set(const std::string& key, Json v) {
  for (auto& m : members_)
    if (m.first == key) {
      m.second = std::move(v);
      return m.second;
    }
  members_.emplace_back(key, std::move(v));
  key_locs_.push_back(members_.back().second.loc());
  return members_.back().second;
}
bool Json::erase(const std::string& key) {
  for (size_t i = 0; i < members_.size(); ++i)
    if (members_[i].first == key) {
      members_.erase(members_.begin() + static_cast<long>(i));
      if (i < key_locs_.size()) key_locs_.erase(key_locs_.begin() + static_cast<long>(i));
      return true;
    }
  return false;
}
SourceLoc Json::key_loc(const std::string& key) const {
  for (size_t i = 0; i < members_.size(); ++i)
    if (members_[i].first == key)
      return i < key_locs_.size() ? key_locs_[i] : members_[i].second.loc();
  return loc_;
}

class JsonParser {
 public:
  JsonParser(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  Json parse_document() {
    skip_ws();
    Json v = parse_value(0);
    skip_ws();
    if (pos_ < s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  SourceLoc here() const { return {file_, line_, col_}; }
  [[noreturn]] void fail(const std::string& msg) const { throw InputError(here(), "", msg); }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void advance() {
    if (pos_ >= s_.size()) return;
    if (s_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skip_ws() {
    for (;;) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
        continue;
      }
      // Comments are not JSON, but scene authors write them; accept // lines.
      if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') advance();
        continue;
      }
      break;
    }
  }
  void expect(char c, const char* what) {
    if (peek() != c)
      fail(std::string("expected ") + what +
           (pos_ < s_.size() ? std::string(", found '") + peek() + "'"
                             : std::string(", found end of file")));
    advance();
  }

  Json parse_value(int depth) {
    if (depth > 200) fail("nesting too deep");
    SourceLoc loc = here();
    Json v;
    char c = peek();
    if (c == '{')
      v = parse_object(depth);
    else if (c == '[')
      v = parse_array(depth);
    else if (c == '"')
      v = Json::string(parse_string());
    else if (c == 't') {
      literal("true");
      v = Json::boolean(true);
    } else if (c == 'f') {
      literal("false");
      v = Json::boolean(false);
    } else if (c == 'n') {
      literal("null");
      v = Json();
    } else if (c == '-' || (c >= '0' && c <= '9'))
      v = Json::number(parse_number());
    else if (c == '\0')
      fail("unexpected end of file, expected a value");
    else
      fail(std::string("unexpected character '") + c + "', expected a value");
    v.set_loc(loc);
    return v;
  }

  void literal(const char* word) {
    for (const char* p = word; *p; ++p) {
      if (peek() != *p) fail(std::string("invalid literal, expected '") + word + "'");
      advance();
    }
  }

  double parse_number() {
    size_t start = pos_;
    if (peek() == '-') advance();
    if (!(peek() >= '0' && peek() <= '9')) fail("invalid number");
    while (peek() >= '0' && peek() <= '9') advance();
    if (peek() == '.') {
      advance();
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number: digits expected after '.'");
      while (peek() >= '0' && peek() <= '9') advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      advance();
      if (peek() == '+' || peek() == '-') advance();
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number: digits expected in exponent");
      while (peek() >= '0' && peek() <= '9') advance();
    }
    std::string tok = s_.substr(start, pos_ - start);
    double v = std::strtod(tok.c_str(), nullptr);
    if (!std::isfinite(v)) fail("number out of range: " + tok);
    return v;
  }

  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80)
      out += static_cast<char>(cp);
    else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  unsigned hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("invalid \\u escape");
      advance();
    }
    return v;
  }

  std::string parse_string() {
    expect('"', "'\"'");
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated string");
      char c = peek();
      if (c == '"') {
        advance();
        break;
      }
      if (c == '\n') fail("unterminated string (newline inside a string)");
      if (c == '\\') {
        advance();
        char e = peek();
        advance();
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            unsigned cp = hex4();
            if (cp >= 0xDC00 && cp < 0xE000)
              fail("invalid \\u escape: a low surrogate without a high one");
            if (cp >= 0xD800 && cp < 0xDC00) {  // UTF-16 pair: the low half must follow
              if (peek() != '\\') fail("invalid \\u escape: a high surrogate without its low half");
              advance();
              if (peek() != 'u') fail("invalid surrogate pair");
              advance();
              unsigned lo = hex4();
              if (lo < 0xDC00 || lo >= 0xE000) fail("invalid surrogate pair");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            put_utf8(out, cp);
            break;
          }
          default: fail(std::string("invalid escape '\\") + e + "'");
        }
        continue;
      }
      out += c;
      advance();
      if (out.size() > max_string_)
        fail("string longer than " + std::to_string(max_string_) + " bytes");
    }
    return out;
  }

  Json parse_array(int depth) {
    Json arr = Json::array();
    expect('[', "'['");
    skip_ws();
    if (peek() == ']') {
      advance();
      return arr;
    }
    for (;;) {
      skip_ws();
      arr.items_.push_back(parse_value(depth + 1));
      skip_ws();
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == ']') {
        advance();
        break;
      }
      fail("expected ',' or ']' in array");
    }
    return arr;
  }

  Json parse_object(int depth) {
    Json obj = Json::object();
    expect('{', "'{'");
    skip_ws();
    if (peek() == '}') {
      advance();
      return obj;
    }
    for (;;) {
      skip_ws();
      if (peek() != '"') fail("expected a quoted field name");
      SourceLoc kloc = here();
      std::string key = parse_string();
      for (const auto& m : obj.members_)
        if (m.first == key) throw InputError(kloc, key, "duplicate field");
      skip_ws();
      expect(':', "':' after field name");
      skip_ws();
      Json v = parse_value(depth + 1);
      obj.members_.emplace_back(std::move(key), std::move(v));
      obj.key_locs_.push_back(kloc);
      skip_ws();
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == '}') {
        advance();
        break;
      }
      fail("expected ',' or '}' in object");
    }
    return obj;
  }

  const std::string& s_;
  std::string file_;
  size_t pos_ = 0;
  const size_t max_string_ = static_cast<size_t>(input_limits().max_string_bytes);
  int line_ = 1, col_ = 1;
};

Json Json::parse(const std::string& text, const std::string& file) {
  JsonParser p(text, file);
  return p.parse_document();
}

Json Json::parse_file(const std::string& path) { return parse(read_file_text(path), path); }

std::string format_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[40];
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

static void dump_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

std::string json_quote(const std::string& s) {
  std::string out;
  dump_string(out, s);
  return out;
}

void Json::dump_to(std::string& out, int indent, int depth) const {
  auto nl = [&](int d) {
    out += '\n';
    out.append(static_cast<size_t>(d * indent), ' ');
  };
  switch (type_) {
    case Type::Null: out += "null"; break;
    case Type::Bool: out += bool_ ? "true" : "false"; break;
    case Type::Number: out += format_number(num_); break;
    case Type::String: dump_string(out, str_); break;
    case Type::Array: {
      bool flat = items_.size() <= 8;
      for (const auto& it : items_) flat = flat && (it.is_number() || it.is_bool() || it.is_null());
      out += '[';
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out += flat ? ", " : ",";
        if (!flat) nl(depth + 1);
        items_[i].dump_to(out, indent, depth + 1);
      }
      if (!flat && !items_.empty()) nl(depth);
      out += ']';
      break;
    }
    case Type::Object: {
      out += '{';
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i) out += ',';
        nl(depth + 1);
        dump_string(out, members_[i].first);
        out += ": ";
        members_[i].second.dump_to(out, indent, depth + 1);
      }
      if (!members_.empty()) nl(depth);
      out += '}';
      break;
    }
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  out += '\n';
  return out;
}

}  // namespace ps
