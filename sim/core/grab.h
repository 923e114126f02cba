/// The grab tool's state, shared by the MPM and DEM worlds: a set of particle
/// indices that follow a moving target, each keeping its offset from it.
#pragma once
#include <cstdint>
#include <vector>

namespace ps {

template <class V>
struct GrabSet {
  std::vector<uint32_t> index;  ///< grabbed particle indices
  std::vector<V> offset;        ///< their offsets from the target at grab time
  V target{};

  /// Starts a grab of `indices` (out-of-range ones are skipped) at `at`.
  void begin(const std::vector<uint32_t>& indices, const std::vector<V>& positions, V at) {
    end();
    for (uint32_t i : indices) {
      if (i >= positions.size()) continue;
      index.push_back(i);
      offset.push_back(positions[i] - at);
    }
    target = at;
  }
  void end() {
    index.clear();
    offset.clear();
  }
  bool active() const { return !index.empty(); }
};

}  // namespace ps
