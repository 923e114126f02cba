/// SGF (Sequence-Group-Force) lists: timed body forces on particle groups,
/// as in the Taichi Hackathon 2022 bonded-DEM "dance" (seeds/000, section 2.3).
///
/// Flat form (the original tool's files): a folder of `SGF<start>-<end>.csv`,
/// steps inclusive, header `ID,FX,FY,FZ`, one row per particle (1-based ID,
/// force in global x, y, z). During every step of the range the force is added
/// to the particle's force before integration. Groups are particle IDs, not
/// boxes, so they survive large deformation.
///
/// Editor form: named, coloured groups of IDs, each with timed entries.
/// Both convert into each other; `SgfSchedule` applies either to a force array
/// at O(active rows) per step. See docs/sgf.md.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include "sim/core/error.h"
#include "sim/core/vec.h"

namespace ps {

// [SECTION] Flat form ------------------------------------------------------------

/// One CSV row: force (fx, fy, fz) on the particle with stable ID `id`.
struct SgfRow {
  uint32_t id = 0;
  double fx = 0.0, fy = 0.0, fz = 0.0;
};

/// One SGF file: the rows applied during steps [start, end] (inclusive).
struct SgfFile {
  int64_t start = 0, end = 0;
  std::vector<SgfRow> rows;  ///< file order
  std::string source;        ///< path it was read from; empty when built in memory
};

/// A set of SGF files, sorted by (start, end) after loading.
struct SgfList {
  std::vector<SgfFile> files;
  size_t row_count() const;
};

/// Loaded data plus what was wrong with the input ("FILE:LINE:COL: field 'FX': ...").
/// One rule for every reader of a folder (the window, `--sgf`, a scene's "sgf"):
/// a file loads whole or not at all. A file with any problem (its name, header
/// or a row) is skipped and each of its problems reported; the good files load.
/// Skipping a single row would apply a move to a group short of a particle, so
/// forces meant to sum to zero no longer would.
struct SgfLoadResult {
  SgfList list;
  std::vector<InputError> diagnostics;
  std::vector<std::string> skipped;  ///< the files not loaded, in name order
  bool ok() const { return diagnostics.empty(); }
};

/// "SGF<start>-<end>.csv".
std::string sgf_file_name(int64_t start, int64_t end);
/// True when `name` (no directory) starts with "SGF" and ends with ".csv", i.e.
/// when the loader considers it an SGF file at all (others are ignored).
bool is_sgf_candidate(const std::string& name);
/// Parses "SGF<start>-<end>.csv" (0 <= start <= end); false when malformed.
bool parse_sgf_file_name(const std::string& name, int64_t& start, int64_t& end);

/// Parses the text of one SGF CSV. `path` names it in diagnostics.
SgfFile parse_sgf_csv(const std::string& text, const std::string& path, int64_t start, int64_t end,
                      std::vector<InputError>& diagnostics);
/// Loads every `SGF*.csv` directly in `dir` (subfolders and other files are
/// ignored); a file with a problem is skipped whole (SgfLoadResult). Files are
/// ordered by (start, end, name) whatever the directory order.
SgfLoadResult load_sgf_folder(const std::string& dir);

/// The CSV text of one file: "ID,FX,FY,FZ\n" then "id,fx,fy,fz\n" per row,
/// numbers in the shortest form that reads back to the same double.
std::string sgf_csv_text(const SgfFile& file);
/// Writes the list into `dir` (created if needed). Files with the same range
/// are merged (rows concatenated in list order). Well-named SGF files already
/// in `dir` that the list does not write are removed, so a save replaces the
/// set. All-or-nothing: the new files are written and synced as temporaries
/// first, then renamed in place, then stale files removed (write_files_atomic;
/// the order is documented at write_sgf_files in sgf.cpp); a failure leaves
/// the previous set as it was. Throws std::runtime_error (WriteError for I/O,
/// naming the file and the OS reason).
void save_sgf_folder(const SgfList& list, const std::string& dir);

// [SECTION] Editor form ----------------------------------------------------------

/// A timed force on every particle of a group: steps [s0, s1] inclusive.
struct SgfEntry {
  int64_t s0 = 1, s1 = 1;
  double fx = 0.0, fy = 0.0, fz = 0.0;
};

struct SgfGroup {
  std::string name;
  float color[3] = {1.f, 0.5f, 0.f};  ///< display colour, linear RGB in [0, 1]
  std::vector<uint32_t> ids;          ///< stable 1-based particle IDs
  std::vector<SgfEntry> entries;
};

/// The editor's whole set.
struct SgfSet {
  std::vector<SgfGroup> groups;
};

/// The group palette: ten distinct colours (Tableau-like), cycling. Groups
/// inferred from CSVs, groups made in the window and the scene's group
/// numbers (the window's group_rgb) all take their colours from it.
std::array<float, 3> group_palette_rgb(size_t k);

/// Editor form -> flat form: one file per distinct range, rows grouped by group
/// order, then entry order, then ID order.
SgfList sgf_flatten(const SgfSet& set);
/// Flat form -> editor form without an index: runs of consecutive rows with
/// the same force become candidate entries; candidates with the same ID list
/// become one group ("group 1", "group 2", ... with palette colours).
SgfSet sgf_infer_groups(const SgfList& list);

/// Saves the set as SGF CSVs plus `groups.json` (names, colours, IDs and, per
/// entry, which file and which rows hold it). Saved like save_sgf_folder, all
/// or nothing, groups.json renamed in place after every CSV. Throws
/// std::runtime_error (WriteError for I/O, naming the file and the OS reason).
void save_sgf_set(const SgfSet& set, const std::string& dir);
/// Loads a folder written by save_sgf_set. Without groups.json the groups are
/// inferred (sgf_infer_groups). Rows of the CSVs that the index does not claim
/// (hand edits) are inferred into extra groups; index entries that do not match
/// their rows, or name a file that was skipped, are reported and skipped.
/// The CSVs load as load_sgf_folder loads them: the good files, each bad one
/// skipped whole and reported.
struct SgfSetLoadResult {
  SgfSet set;
  std::vector<InputError> diagnostics;
  std::vector<std::string> skipped;  ///< the CSVs not loaded (load_sgf_folder)
  size_t files = 0;                  ///< the CSVs loaded
  bool ok() const { return diagnostics.empty(); }
};
SgfSetLoadResult load_sgf_set(const std::string& dir);
/// Name of the index file written next to the CSVs.
constexpr const char* kSgfIndexName = "groups.json";

// [SECTION] ID lists (belt.txt) --------------------------------------------------

/// One ID per line, '\n' line ends (the original tool's belt.txt).
std::string id_list_text(const std::vector<uint32_t>& ids);
/// Writes id_list_text atomically; throws WriteError naming the file.
void save_id_list(const std::vector<uint32_t>& ids, const std::string& path);
/// Blank lines are skipped; bad lines are reported and skipped.
std::vector<uint32_t> load_id_list(const std::string& path, std::vector<InputError>& diagnostics);

// [SECTION] Applying forces ------------------------------------------------------

/// Stable ID -> array index. Dense table when IDs are compact, sorted pairs otherwise.
class IdIndexMap {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  IdIndexMap() = default;
  IdIndexMap(const uint32_t* ids, size_t n) { build(ids, n); }
  void build(const uint32_t* ids, size_t n);
  /// The index of `id`, or kNone.
  uint32_t find(uint32_t id) const;
  size_t size() const { return n_; }

 private:
  size_t n_ = 0;
  std::vector<uint32_t> dense_;                        // dense_[id] = index
  std::vector<std::pair<uint32_t, uint32_t>> sparse_;  // (id, index), sorted
};

/// A step-sorted event list over an SGF list. Each query costs O(active rows)
/// plus the events passed since the last query; queries usually move forward
/// one step at a time, and going backwards rewinds (O(events)).
class SgfSchedule {
 public:
  SgfSchedule() = default;
  explicit SgfSchedule(const SgfList& list) { set(list); }
  explicit SgfSchedule(const SgfSet& set_) { set(sgf_flatten(set_)); }
  void set(const SgfList& list);

  /// Indices (into the list's files, sorted by (start, end)) active at `step`.
  const std::vector<uint32_t>& active(int64_t step);
  /// Adds the forces active at `step` to fext[map.find(id)] (z is ignored).
  /// IDs with no particle are skipped and counted in missing(). Returns true
  /// when at least one force was added. The rows keep the file's doubles;
  /// `V` is any vector with x and y: a float one (MPM's Vec2) gets each row
  /// rounded to float, a double one (DEM's) the row exactly as read.
  template <class V>
  bool add_forces(int64_t step, const IdIndexMap& map, V* fext, size_t n);
  /// Rows active at the last add_forces whose ID had no particle.
  size_t missing() const { return missing_; }
  /// IDs that had no particle for the first time since set() (each ID is
  /// reported once), sorted; cleared by the call.
  std::vector<uint32_t> take_new_missing();
  size_t file_count() const { return files_.size(); }
  /// First start and last end over all files (0, -1 when empty).
  int64_t first_step() const { return first_; }
  int64_t last_step() const { return last_; }

 private:
  struct File {
    int64_t start, end;
    size_t row_begin, row_end;  // into ids_ / fx_ / fy_
  };
  struct Event {
    int64_t step;  // the step at which it happens
    uint32_t file;
    bool on;  // true: file becomes active; false: inactive
  };
  void rewind();
  void note_missing(uint32_t id);
  std::vector<File> files_;
  std::vector<uint32_t> ids_;
  std::vector<double> fx_, fy_;  // per row, the file's values (double: DEM needs them exact)
  std::vector<Event> events_;    // sorted by (step, off before on, file)
  size_t cursor_ = 0;
  int64_t last_query_ = INT64_MIN;
  std::vector<uint32_t> active_;  // kept in file order
  size_t missing_ = 0;
  std::vector<uint32_t> missing_seen_;  ///< sorted: IDs already reported
  std::vector<uint32_t> missing_new_;   ///< not yet taken
  int64_t first_ = 0, last_ = -1;
};

/// Generic form for any solver (the DEM world): adds the forces active at
/// `step` to fext[i] of the particle with ids[i]. Keeps an ID map inside and
/// rebuilds it when the ID array changes. Returns true when any force was added.
class SgfForceApplier {
 public:
  SgfForceApplier() = default;
  explicit SgfForceApplier(const SgfList& list) : schedule_(list) {}
  explicit SgfForceApplier(const SgfSet& set) : schedule_(set) {}
  template <class V>
  bool operator()(int64_t step, const uint32_t* ids, size_t n, V* fext) {
    update_map(ids, n);
    return schedule_.add_forces(step, map_, fext, n);
  }
  SgfSchedule& schedule() { return schedule_; }

 private:
  void update_map(const uint32_t* ids, size_t n);
  SgfSchedule schedule_;
  IdIndexMap map_;
  std::vector<uint32_t> ids_seen_;
};

template <class V>
bool SgfSchedule::add_forces(int64_t step, const IdIndexMap& map, V* fext, size_t n) {
  using S = decltype(fext->x);
  missing_ = 0;
  bool any = false;
  for (uint32_t fi : active(step)) {
    const File& f = files_[fi];
    for (size_t r = f.row_begin; r < f.row_end; ++r) {
      const uint32_t i = map.find(ids_[r]);
      if (i == IdIndexMap::kNone || i >= n) {
        ++missing_;
        note_missing(ids_[r]);
        continue;
      }
      fext[i].x += static_cast<S>(fx_[r]);
      fext[i].y += static_cast<S>(fy_[r]);
      any = true;
    }
  }
  return any;
}

/// The notice text for such a batch ("SGF rows name 2 particles with no
/// particle at step 40 (ID 7, 9; retired: merged away by resampling): their
/// forces are skipped"). `retired(id)` says whether resampling merged that ID
/// away (MpmWorld::id_retired); the others never existed.
std::string sgf_missing_notice(int64_t step, const std::vector<uint32_t>& ids,
                               const std::function<bool(uint32_t)>& retired);

}  // namespace ps
