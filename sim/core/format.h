/// printf-style text of numbers, for report notes, labels and check details:
/// fmt("%.3g m/s > %.3g m/s", a, b). Every argument is passed as a double.
#pragma once
#include <cstdio>
#include <string>

namespace ps {

template <class... A>
std::string fmt(const char* format, A... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, static_cast<double>(args)...);
  return buf;
}

}  // namespace ps
