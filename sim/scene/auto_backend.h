/// How the scene builder turns the backend "auto" into "cpu" or "cuda".
///
/// The choice needs the CUDA self-check (sim/selfcheck/verdict.h), and the
/// self-check builds scenes of its own, so it sits a layer above the scene
/// builder and the builder cannot call it. A program installs the rule once at
/// start instead (ps::install_auto_backend() from verdict.h: sandbox, the test
/// and fuzz mains); build_simulation then asks the rule after the scene has
/// loaded, so a bad file fails before any self-check runs. Without a rule,
/// "auto" is the CPU, with a notice saying so.
#pragma once
#include <functional>
#include <string>

namespace ps {

/// What "auto" became and why (shown once, as the world's notice; "" when there is nothing to say).
struct AutoChoice {
  std::string kind;  ///< "cpu" or "cuda"
  std::string notice;
};

/// Installs the rule (process-wide; an empty function removes it).
void set_auto_backend_rule(std::function<AutoChoice()> rule);
/// `requested` itself, or for "auto" what the installed rule chooses.
AutoChoice resolve_backend(const std::string& requested);

}  // namespace ps
