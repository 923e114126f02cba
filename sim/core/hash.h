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
  void add_array(const T* data, size_t count) {
    add(data, count * sizeof(T));
  }
};

/// SplitMix64 step (Steele, Lea & Flood 2014): a small, seedable generator
/// for deterministic sampling (resampling darts, heat photons).
inline uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace ps
