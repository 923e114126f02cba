/// Plain byte images of trivially copyable values and vectors of them: the
/// rewind's controls (sim/scene/rewind.h) are such an image, so two of them
/// compare with ==. Padding bytes are copied as they are; a difference there
/// only makes two equal values look different (one extra record), never the
/// other way round.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ps {

struct ByteWriter {
  std::string out;
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable<T>::value, "put: trivially copyable values only");
    out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  /// put or put_vec, whichever fits (field visitors).
  template <class T>
  void field(const T& v) {
    put(v);
  }
  template <class T>
  void field(const std::vector<T>& v) {
    put_vec(v);
  }
  template <class T>
  void put_vec(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable<T>::value, "put_vec: trivially copyable values only");
    put(static_cast<uint64_t>(v.size()));
    if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
};

struct ByteReader {
  const std::string& in;
  size_t at = 0;
  explicit ByteReader(const std::string& s) : in(s) {}
  void need(size_t n) const {
    if (in.size() - at < n) throw std::logic_error("ByteReader: image too short");
  }
  template <class T>
  void get(T& v) {
    static_assert(std::is_trivially_copyable<T>::value, "get: trivially copyable values only");
    need(sizeof(T));
    std::memcpy(&v, in.data() + at, sizeof(T));
    at += sizeof(T);
  }
  template <class T>
  void field(T& v) {
    get(v);
  }
  template <class T>
  void field(std::vector<T>& v) {
    get_vec(v);
  }
  template <class T>
  void get_vec(std::vector<T>& v) {
    uint64_t n = 0;
    get(n);
    need(static_cast<size_t>(n) * sizeof(T));
    v.resize(static_cast<size_t>(n));
    if (n) std::memcpy(v.data(), in.data() + at, static_cast<size_t>(n) * sizeof(T));
    at += static_cast<size_t>(n) * sizeof(T);
  }
};

/// The point force as the controls image has it: field by field (a
/// temporary's padding bytes are indeterminate), an inactive one as the default.
template <class PF>
void put_point_force(ByteWriter& b, const PF& p) {
  const PF d{};
  const PF& q = p.active ? p : d;
  b.put(q.active);
  b.put(q.pos);
  b.put(q.radius);
  b.put(q.strength);
}
template <class PF>
void get_point_force(ByteReader& b, PF& p) {
  b.get(p.active);
  b.get(p.pos);
  b.get(p.radius);
  b.get(p.strength);
}

/// The controls image of a world (MpmWorld, DemWorld): its point force, then
/// the members its static `each_control(world, f)` lists.
template <class W>
std::string controls_image(const W& w) {
  ByteWriter b;
  put_point_force(b, w.point_force);
  W::each_control(w, [&b](const auto& v) { b.field(v); });
  return std::move(b.out);
}
/// Applies an image from controls_image to a world of the same kind.
template <class W>
void apply_controls_image(W& w, const std::string& image) {
  ByteReader b(image);
  get_point_force(b, w.point_force);
  W::each_control(w, [&b](auto& v) { b.field(v); });
}

/// Bytes a vector's elements take (its size, not its capacity).
template <class T>
size_t vec_bytes(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

}  // namespace ps
