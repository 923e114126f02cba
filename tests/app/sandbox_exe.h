// Runs the built `sandbox` executable as a user would, capturing its exit
// status and output (shared by the app tests).
#pragma once
#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ps::test {

struct Result {
  int code = -1;
  std::string out;
};

inline Result sandbox_in(const std::string& shell, const std::string& args, int seconds = 0);

/// `sandbox ARGS` with stdout and stderr in one log (one per process: ctest
/// runs test cases in parallel processes).
inline Result sandbox(const std::string& args) { return sandbox_in("", args); }

/// The same with shell commands run first in its subshell (`ulimit -v KB`,
/// `unset DISPLAY`), and `timeout SECONDS` before it when `seconds` > 0 (exit 124 when it ran out).
inline Result sandbox_in(const std::string& shell, const std::string& args, int seconds) {
  namespace fs = std::filesystem;
  fs::path log = fs::temp_directory_path() / ("ps_app_test_" + std::to_string(getpid()) + ".log");
  const std::string exe =
      (seconds > 0 ? "timeout " + std::to_string(seconds) + " " : std::string()) + PS_SANDBOX_EXE;
  std::string cmd = "(" + (shell.empty() ? std::string() : shell + "; ") + "exec " + exe + " " +
                    args + ") > " + log.string() + " 2>&1";
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
