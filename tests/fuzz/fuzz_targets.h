/// libFuzzer harnesses for every input file the sandbox reads.
/// Each target takes the raw bytes of one input and drives the same code the
/// program runs on it: parse, build, and a few steps where the input is a
/// scene. A target returns normally for any input (bad input is an InputError,
/// which the target swallows, as the program reports it); a crash, sanitizer
/// report, leak or a violated property (abort()) is a finding.
///
/// The same functions are compiled twice: into the fuzzers (tests/fuzz/
/// fuzz_entry.cpp, clang -fsanitize=fuzzer,address,undefined; PS_FUZZ=ON) and
/// into the normal test suite, which replays every committed regression input
/// under tests/fuzz/regressions/<target>/ (test_fuzz_regressions.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace ps::fuzz {

using Target = int (*)(const uint8_t* data, size_t size);

struct TargetInfo {
  const char* name;  ///< "scene", "set", ...: the corpus and regression folder name
  Target run;
  const char* what;  ///< one line for docs and the script
};

/// Lowers input_limits() so one execution stays small (particles, grid, image
/// size, file size); called once before the first input.
void init_limits();

int scene(const uint8_t* data, size_t size);  ///< scene JSON: parse, build (MPM or DEM), 3 substeps
int set(const uint8_t* data,
        size_t size);  ///< --set overrides (one per line) on a small built-in scene
int lesson(const uint8_t* data,
           size_t size);  ///< lesson JSON: what `sandbox --lesson` and the window's opening build
int sgf_csv(const uint8_t* data,
            size_t size);  ///< line 1: SGF file name; rest: CSV text; round trip; forces
int sgf_index(const uint8_t* data,
              size_t size);  ///< groups.json of an SGF set folder beside two fixed CSVs
int p4p(const uint8_t* data,
        size_t size);  ///< P4P particles: parse, round trip, into MPM particles
int p4c(const uint8_t* data, size_t size);  ///< P4C contacts: parse, round trip
int image(const uint8_t* data,
          size_t size);  ///< PNG/JPG/...: decode (size-limited), mask, contours, specimen
int settings(const uint8_t* data,
             size_t size);  ///< window settings file: parse and read every key the window reads

/// All targets, in the order the script runs them.
const TargetInfo* targets(size_t& count);

}  // namespace ps::fuzz
