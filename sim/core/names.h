/// Name tables: the names of an enum's values, in value order from `first`, as one list that both
/// the writers (`kTransferNames(t)` → "apic") and the scene reader (`ObjReader::choice` with the
/// table) use, so a name cannot be added to one and not the other (the habit of Jolt's and Box2D's
/// name tables). Values outside the table name as "?".
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace ps {

template <class E, size_t N>
struct NameTable {
  int first;                         ///< the value of names[0]
  std::array<const char*, N> names;  ///< in value order

  constexpr const char* operator()(E e) const {
    const int i = index(e);
    return i >= 0 && i < static_cast<int>(N) ? names[static_cast<size_t>(i)] : "?";
  }
  constexpr int index(E e) const { return static_cast<int>(e) - first; }
  constexpr E value(int index) const { return static_cast<E>(index + first); }
  /// The value named `name` (exact match), if any.
  constexpr std::optional<E> find(std::string_view name) const {
    for (size_t i = 0; i < N; ++i)
      if (name == names[i]) return value(static_cast<int>(i));
    return std::nullopt;
  }
  static constexpr size_t size() { return N; }
};

}  // namespace ps
