/// printf-style text of numbers, for report notes, labels and check details:
/// fmt("%.3g m/s > %.3g m/s", a, b). Every argument is passed as a double.
#pragma once
#include <cstdio>
#include <string>

namespace ps {

template <class... A>
std::string fmt(const char* format, A... args) {
  char buf[256];
  const int n = std::snprintf(buf, sizeof buf, format, static_cast<double>(args)...);
  if (n < static_cast<int>(sizeof buf)) return buf;
  std::string out(static_cast<size_t>(n) + 1,
                  '\0');  // longer texts (scene documents in verify cases)
  std::snprintf(&out[0], out.size(), format, static_cast<double>(args)...);
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace ps
