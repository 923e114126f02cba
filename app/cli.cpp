#include "app/cli.h"

#include <cstdlib>
#include <set>

namespace ps {

namespace {

struct FlagSpec {
  std::set<std::string> value_flags;
  std::set<std::string> switches;
};

FlagSpec spec_for(const std::string& cmd) {
  FlagSpec s;
  if (cmd == "run" || cmd == "") {
    s.value_flags = {"steps",      "frames", "backend", "threads", "set",   "out",
                     "dump-every", "format", "images",  "sgf",     "color", "refine"};
    s.switches = {"quiet", "verbose", "no-progress"};
    if (cmd == "")
      s.value_flags.insert("lesson");  // `sandbox --lesson 01`: the window, or its scene headless
  } else if (cmd == "compare") {
    s.value_flags = {"vary",    "set", "steps",  "frames", "backend",
                     "threads", "out", "images", "fps",    "sgf"};
    s.switches = {"video", "quiet", "no-progress"};
  } else if (cmd == "gui") {
    s.value_flags = {"backend",    "threads", "set",     "screenshot", "screenshot-after",
                     "quit-after", "size",    "out",     "soak",       "soak-log",
                     "soak-plan",  "lesson",  "compare", "refine",     "interop",
                     "vsync",      "seconds", "gl"};
    s.switches = {"verbose", "log-hashes", "paused"};
  } else if (cmd == "specimen") {
    s.value_flags = {"radius-px", "test", "mask", "threshold", "tolerance", "belt", "out"};
    s.switches = {"invert"};
  } else if (cmd == "bench") {
    s.value_flags = {"backend", "threads", "steps", "scenes", "set", "warmup", "sizes", "csv"};
    s.switches = {"phases"};
  } else if (cmd == "verify") {
    s.value_flags = {"out", "threads", "only", "backend"};
    s.switches = {"quick", "list"};
  } else if (cmd == "info") {
    s.switches = {"self-check"};
  }
  return s;
}

}  // namespace

long Args::get_int(const std::string& k, long def, long lo, long hi) const {
  auto it = opt.find(k);
  if (it == opt.end()) return def;
  const std::string& v = it->second;
  char* end = nullptr;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0')
    throw UsageError("--" + k + ": expected an integer, got '" + v + "'");
  if (x < lo || x > hi)
    throw UsageError("--" + k + ": " + v + " is out of range [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  return x;
}

Args parse_args(int argc, char** argv) {
  Args a;
  int i = 1;
  if (i < argc && argv[i][0] != '-') {
    std::string c = argv[i];
    if (c == "run" || c == "compare" || c == "bench" || c == "info" || c == "gui" || c == "help" ||
        c == "specimen" || c == "verify") {
      a.command = c;
      ++i;
    }
  }
  if (i < argc && (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h")) {
    a.command = "help";
    return a;
  }
  if (i < argc && std::string(argv[i]) == "--version") {
    a.command = "version";
    return a;
  }
  FlagSpec spec = spec_for(a.command);
  for (; i < argc; ++i) {
    std::string t = argv[i];
    if (t == "--help" || t == "-h") {
      a.opt["help"] = "1";
      continue;
    }
    if (t.size() > 2 && t.compare(0, 2, "--") == 0) {
      std::string name = t.substr(2), value;
      bool inline_value = false;
      size_t eq = name.find('=');
      if (eq != std::string::npos && name.compare(0, 3, "set") != 0) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inline_value = true;
      }
      if (spec.switches.count(name)) {
        if (inline_value) throw UsageError("--" + name + " takes no value");
        a.opt[name] = "1";
        continue;
      }
      if (!spec.value_flags.count(name)) {
        std::string cmd = a.command.empty() ? "sandbox" : "sandbox " + a.command;
        throw UsageError("unknown option '--" + name + "' for '" + cmd + "' (see sandbox --help)");
      }
      if (!inline_value) {
        if (i + 1 >= argc) throw UsageError("--" + name + " needs a value");
        value = argv[++i];
      }
      if (name == "set")
        a.sets.push_back(value);
      else if (name == "vary")
        a.varies.push_back(value);
      else
        a.opt[name] = value;
      continue;
    }
    if (t.size() > 1 && t[0] == '-')
      throw UsageError("unknown option '" + t + "' (see sandbox --help)");
    a.positional.push_back(t);
  }
  return a;
}

}  // namespace ps
