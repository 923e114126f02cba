// Runs the built `sandbox` executable as a user would, capturing its exit
// status and output (shared by the app tests).
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace ps::test {

struct Result {
  int code = -1;
  std::string out;
};

/// `sandbox ARGS` with stdout and stderr in one log (one per process: ctest
/// runs test cases in parallel processes).
inline Result sandbox(const std::string& args) {
  namespace fs = std::filesystem;
  fs::path log = fs::temp_directory_path() / ("ps_app_test_" + std::to_string(getpid()) + ".log");
  std::string cmd = std::string(PS_SANDBOX_EXE) + " " + args + " > " + log.string() + " 2>&1";
  int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  r.out = ss.str();
  fs::remove(log);
  return r;
}

}  // namespace ps::test
