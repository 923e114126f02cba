#include "sim/core/progress.h"

#include <utility>

namespace ps {

namespace {
thread_local ProgressListener* t_listener = nullptr;
}

ProgressScope::ProgressScope(ProgressListener listener)
    : listener_(std::move(listener)), previous_(t_listener) {
  t_listener = &listener_;
}

ProgressScope::~ProgressScope() { t_listener = previous_; }

bool progress_listened() { return t_listener != nullptr && *t_listener; }

void progress(const std::string& stage, double fraction) {
  if (!progress_listened()) return;
  if (!(*t_listener)(stage, fraction)) throw Cancelled();
}

}  // namespace ps
