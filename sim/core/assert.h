/// PS_ASSERT(cond, what): an invariant the code relies on, checked in every
/// build on the host. The checks sit where modules meet (a world taking edited
/// particles, a step starting), never in per-particle loops. A broken one
/// throws ps::InvariantError naming the file, the line, the condition and
/// `what`; callers report it like any other error (the window shows it and
/// keeps running, the command line exits non-zero). Device code compiles it
/// out.
#pragma once
#include <stdexcept>
#include <string>

namespace ps {

/// A broken invariant: a defect in the program, not in its input.
class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] inline void invariant_failed(const char* file, int line, const char* cond,
                                          const std::string& what) {
  throw InvariantError(std::string(file) + ":" + std::to_string(line) +
                       ": internal check failed: " + cond +
                       (what.empty() ? std::string() : " (" + what + ")"));
}

}  // namespace ps

#if defined(__CUDA_ARCH__)
#define PS_ASSERT(cond, what) ((void)0)
#else
#define PS_ASSERT(cond, what) \
  ((cond) ? (void)0 : ::ps::invariant_failed(__FILE__, __LINE__, #cond, (what)))
#endif
