// Command-line parsing for `sandbox`: subcommands and flags with precise errors.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Args {
  std::string command;  // "", run, compare, bench, info, gui, help
  std::vector<std::string> positional;
  std::map<std::string, std::string> opt;  // last value of single-valued flags
  std::vector<std::string> sets;           // --set (repeatable)
  std::vector<std::string> varies;         // --vary (repeatable, compare)
  bool has(const std::string& k) const { return opt.count(k) != 0; }
  std::string get(const std::string& k, const std::string& def) const {
    auto it = opt.find(k);
    return it == opt.end() ? def : it->second;
  }
  long get_int(const std::string& k, long def, long lo, long hi) const;
};

/// Parses argv. `allowed` lists the flags of the command, each "name" taking
/// a value or "name!" for a switch. Throws UsageError.
Args parse_args(int argc, char** argv);

}  // namespace ps
