#include "sim/core/backend_error.h"

#include <mutex>

namespace ps {

namespace {
std::mutex g_mutex;
bool g_failed = false;
std::string g_reason;
}  // namespace

void note_backend_failure(const std::string& reason) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_failed) return;
  g_failed = true;
  g_reason = reason;
}

bool backend_failure_noted(std::string* reason) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_failed && reason) *reason = g_reason;
  return g_failed;
}

void reset_backend_failures_for_tests() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_failed = false;
  g_reason.clear();
}

}  // namespace ps

namespace ps {

std::string BackendFallback::message() const {
  if (!happened) return "";
  std::string m = backend + " failed" + (during.empty() ? "" : " while " + during) + " (" + reason +
                  "); continuing on the CPU backend from step " + std::to_string(resumed_step);
  const int64_t lost = failed_step - resumed_step;
  if (lost > 0)
    m += ", the last state copied to the host (" + std::to_string(lost) + " step" +
         (lost == 1 ? "" : "s") + " rolled back)";
  else
    m += " (no steps rolled back)";
  return m;
}

}  // namespace ps
