/// Test helpers for files: a fresh temporary folder removed at scope end, and
/// whole-file read / write that bypass the library (so tests of the library's
/// readers and savers do not use what they test).
#pragma once
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace ps::test {

/// A fresh empty folder under the system temp directory, removed at scope end.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& tag) {
    static std::mt19937_64 rng(std::random_device{}());
    path = (std::filesystem::temp_directory_path() / ("ps_" + tag + "_" + std::to_string(rng())))
               .string();
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const {
    return (std::filesystem::path(path) / name).string();
  }
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void put(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace ps::test
