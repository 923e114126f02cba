#include "sim/scene/auto_backend.h"

#include <mutex>
#include <utility>

namespace ps {

namespace {

std::mutex& rule_mutex() {
  static std::mutex m;
  return m;
}

std::function<AutoChoice()>& rule() {
  static std::function<AutoChoice()> r;
  return r;
}

}  // namespace

void set_auto_backend_rule(std::function<AutoChoice()> r) {
  std::lock_guard<std::mutex> lock(rule_mutex());
  rule() = std::move(r);
}

AutoChoice resolve_backend(const std::string& requested) {
  if (requested != "auto") return {requested, ""};
  std::function<AutoChoice()> r;
  {
    std::lock_guard<std::mutex> lock(rule_mutex());
    r = rule();
  }
  if (!r)
    return {"cpu", "backend auto: this program installs no CUDA self-check, so it runs on the CPU"};
  return r();
}

}  // namespace ps
