/// FNV-1a 64-bit hash, used for golden state hashes (Box2D's test_determinism habit).
#pragma once
#include <cstddef>
#include <cstdint>

namespace ps {

struct Fnv1a {
  uint64_t h = 1469598103934665603ull;
  void add(const void* data, size_t bytes) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
  }
  template <class T>
  void add_array(const T* data, size_t count) { add(data, count * sizeof(T)); }
};

}  // namespace ps
