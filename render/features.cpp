// The window's features (render/feature.h), in order: each line is one
// feature, made by `make_<name>_feature()` in its own file.
#include <memory>

#include "render/feature.h"

#define PS_WINDOW_FEATURES(X) \
  X(resampling)               \
  X(rigid)                    \
  X(dem)                      \
  X(heat)                     \
  X(field)                    \
  X(browser)                  \
  X(sgf)                      \
  X(rewind)

namespace ps {

#define PS_DECLARE_FEATURE(name) std::unique_ptr<Feature> make_##name##_feature();
PS_WINDOW_FEATURES(PS_DECLARE_FEATURE)
#undef PS_DECLARE_FEATURE

FeatureList make_features() {
  FeatureList list;
#define PS_MAKE_FEATURE(name) list.push_back(make_##name##_feature());
  PS_WINDOW_FEATURES(PS_MAKE_FEATURE)
#undef PS_MAKE_FEATURE
  return list;
}

}  // namespace ps
