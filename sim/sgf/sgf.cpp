#include "sim/sgf/sgf.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include "sim/core/atomic_write.h"
#include "sim/io/json.h"
#include "sim/io/json_read.h"
#include "sim/io/p4.h"
#include "sim/io/text.h"

namespace fs = std::filesystem;

namespace ps {

// [SECTION] Text helpers ----------------------------------------------------------

namespace {

std::string shortest(double v) { return shortest_number(v, P4Precision::Double); }
std::string shortest(float v) { return shortest_number(v, P4Precision::Float); }

std::string squote(const std::string& s) { return "'" + s + "'"; }

}  // namespace

size_t SgfList::row_count() const {
  size_t n = 0;
  for (const auto& f : files) n += f.rows.size();
  return n;
}

// [SECTION] File names ------------------------------------------------------------

std::string sgf_file_name(int64_t start, int64_t end) {
  return "SGF" + std::to_string(start) + "-" + std::to_string(end) + ".csv";
}

bool is_sgf_candidate(const std::string& name) {
  return name.size() >= 7 && name.compare(0, 3, "SGF") == 0 &&
         name.compare(name.size() - 4, 4, ".csv") == 0;
}

bool parse_sgf_file_name(const std::string& name, int64_t& start, int64_t& end) {
  if (!is_sgf_candidate(name)) return false;
  std::string mid = name.substr(3, name.size() - 7);
  size_t dash = mid.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 >= mid.size()) return false;
  std::string a = mid.substr(0, dash), b = mid.substr(dash + 1);
  for (char c : a + b)
    if (c < '0' || c > '9') return false;
  uint64_t s = 0, e = 0;
  if (!parse_u64(a, s) || !parse_u64(b, e)) return false;
  if (s > static_cast<uint64_t>(INT64_MAX) || e > static_cast<uint64_t>(INT64_MAX) || s > e)
    return false;
  start = static_cast<int64_t>(s);
  end = static_cast<int64_t>(e);
  return true;
}

// [SECTION] Reading ----------------------------------------------------------------

SgfFile parse_sgf_csv(const std::string& text, const std::string& path, int64_t start, int64_t end,
                      std::vector<InputError>& diags) {
  SgfFile f;
  f.start = start;
  f.end = end;
  f.source = path;
  std::vector<std::string> lines = split_lines(text);
  static const char* kNames[4] = {"ID", "FX", "FY", "FZ"};
  bool header_seen = false;
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string& line = lines[li];
    const int ln = static_cast<int>(li + 1);
    if (is_blank_line(line)) continue;
    std::vector<TextField> fields = split_csv(line);
    if (!header_seen) {
      header_seen = true;
      bool ok = fields.size() == 4;
      for (size_t k = 0; ok && k < 4; ++k) {
        std::string up = fields[k].text;
        for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        ok = up == kNames[k];
      }
      if (!ok)
        diags.emplace_back(SourceLoc{path, ln, 1}, "header",
                           "expected the header 'ID,FX,FY,FZ', got " + squote(line));
      continue;
    }
    if (fields.size() != 4) {
      size_t k = std::min<size_t>(fields.size(), 4);
      int col = fields.size() > 4 ? fields[4].column : static_cast<int>(line.size() + 1);
      diags.emplace_back(SourceLoc{path, ln, col}, fields.size() > 4 ? "row" : kNames[k],
                         "expected 4 fields ID,FX,FY,FZ, got " + std::to_string(fields.size()));
      continue;
    }
    SgfRow row;
    if (!parse_id(fields[0].text, row.id)) {
      diags.emplace_back(SourceLoc{path, ln, fields[0].column}, "ID",
                         "expected a particle ID (integer >= 1), got " + squote(fields[0].text));
      continue;
    }
    double* dst[3] = {&row.fx, &row.fy, &row.fz};
    bool ok = true;
    for (int k = 0; k < 3 && ok; ++k) {
      if (!parse_double(fields[k + 1].text, *dst[k])) {
        diags.emplace_back(SourceLoc{path, ln, fields[k + 1].column}, kNames[k + 1],
                           "expected a finite number, got " + squote(fields[k + 1].text));
        ok = false;
      }
    }
    if (ok) f.rows.push_back(row);
  }
  if (!header_seen)
    diags.emplace_back(SourceLoc{path, 1, 1}, "header",
                       "empty file: expected the header 'ID,FX,FY,FZ'");
  return f;
}

SgfLoadResult load_sgf_folder(const std::string& dir) {
  SgfLoadResult res;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    res.diagnostics.emplace_back(SourceLoc{dir, 0, 0}, "", "not a folder");
    return res;
  }
  std::vector<std::string> names;
  for (const auto& de : fs::directory_iterator(dir, ec)) {
    if (!de.is_regular_file(ec)) continue;  // subfolders are ignored
    std::string name = de.path().filename().string();
    if (is_sgf_candidate(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string path = (fs::path(dir) / name).string();
    int64_t s = 0, e = 0;
    if (!parse_sgf_file_name(name, s, e)) {
      res.diagnostics.emplace_back(
          SourceLoc{path, 0, 0}, "name",
          "expected a file name SGF<start>-<end>.csv with 0 <= start <= end, got " + squote(name));
      res.skipped.push_back(path);
      continue;
    }
    // A file loads whole or not at all (SgfLoadResult): a move applied to part of its group
    // would no longer balance.
    const size_t before = res.diagnostics.size();
    try {
      SgfFile f = parse_sgf_csv(read_file_text(path), path, s, e, res.diagnostics);
      if (res.diagnostics.size() == before) res.list.files.push_back(std::move(f));
    } catch (const InputError& err) {
      res.diagnostics.push_back(err);
    }
    if (res.diagnostics.size() != before) res.skipped.push_back(path);
  }
  std::stable_sort(res.list.files.begin(), res.list.files.end(),
                   [](const SgfFile& a, const SgfFile& b) {
                     return a.start != b.start ? a.start < b.start : a.end < b.end;
                   });
  return res;
}

std::array<float, 3> group_palette_rgb(size_t k) {
  static const float kPalette[10][3] = {{0.306f, 0.475f, 0.655f}, {0.949f, 0.557f, 0.169f},
                                        {0.882f, 0.341f, 0.349f}, {0.463f, 0.718f, 0.698f},
                                        {0.349f, 0.631f, 0.310f}, {0.929f, 0.788f, 0.282f},
                                        {0.690f, 0.478f, 0.631f}, {1.000f, 0.616f, 0.655f},
                                        {0.612f, 0.459f, 0.373f}, {0.729f, 0.690f, 0.675f}};
  const float* c = kPalette[k % 10];
  return {c[0], c[1], c[2]};
}

// [SECTION] Writing ----------------------------------------------------------------

std::string sgf_csv_text(const SgfFile& file) {
  std::string s = "ID,FX,FY,FZ\n";
  for (const SgfRow& r : file.rows) {
    s += std::to_string(r.id);
    s += ',';
    s += shortest(r.fx);
    s += ',';
    s += shortest(r.fy);
    s += ',';
    s += shortest(r.fz);
    s += '\n';
  }
  return s;
}

namespace {

/// Merges files of equal range, keeping first-appearance order of rows.
std::vector<SgfFile> merged_by_range(const SgfList& list) {
  std::map<std::pair<int64_t, int64_t>, SgfFile> by;
  for (const SgfFile& f : list.files) {
    SgfFile& m = by[{f.start, f.end}];
    m.start = f.start;
    m.end = f.end;
    m.rows.insert(m.rows.end(), f.rows.begin(), f.rows.end());
  }
  std::vector<SgfFile> out;
  for (auto& kv : by) out.push_back(std::move(kv.second));
  return out;
}

/// Saves the CSVs of `files` (and `index`, groups.json, when given) into `dir`
/// so that a failure part way leaves the previous set loadable as it was.
/// The order, which the guarantees rest on:
///   1. every new CSV and the index go to temporaries next to their targets,
///      each written, fsynced and closed (write_files_atomic). A full disk or
///      an I/O error stops the save here, before any target is touched;
///   2. the temporaries are renamed over their targets, CSVs in (start, end)
///      order, the index last, so an index never names rows that are not on
///      disk. A failed rename puts back the files already replaced (their old
///      versions are kept as hard links until the end);
///   3. only then are the SGF files of the old set that the new one does not
///      write removed.
/// A crash (not an error) in 2 can leave new CSVs next to the old index:
/// load_sgf_set then reports the entries that no longer match and infers
/// groups for their rows. A crash in 3 leaves stale CSVs that load as extra
/// groups. Either way every file on disk is whole.
void write_sgf_files(const std::vector<SgfFile>& files, const std::string& dir,
                     const std::string* index) {
  std::error_code ec, ec2;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec2)) {
    if (!ec) ec = std::make_error_code(std::errc::not_a_directory);  // a file of that name
    throw WriteError(dir, "cannot create the folder: " + ec.message(), ec.value());
  }
  std::vector<FileWrite> writes;
  std::vector<std::string> written;
  for (const SgfFile& f : files) {
    if (f.start < 0 || f.end < f.start)
      throw std::runtime_error("SGF range [" + std::to_string(f.start) + ", " +
                               std::to_string(f.end) + "] is invalid (need 0 <= start <= end)");
    std::string name = sgf_file_name(f.start, f.end);
    writes.push_back(FileWrite{(fs::path(dir) / name).string(), sgf_csv_text(f)});
    written.push_back(name);
  }
  if (index) writes.push_back(FileWrite{(fs::path(dir) / kSgfIndexName).string(), *index});
  if (!writes.empty()) write_files_atomic(writes);
  // Remove SGF files of an earlier save that this one does not write.
  std::vector<fs::path> stale;
  for (const auto& de : fs::directory_iterator(dir, ec)) {
    if (!de.is_regular_file(ec)) continue;
    std::string name = de.path().filename().string();
    int64_t s, e;
    if (parse_sgf_file_name(name, s, e) &&
        std::find(written.begin(), written.end(), name) == written.end())
      stale.push_back(de.path());
  }
  for (const fs::path& p : stale) {
    fs::remove(p, ec);
    if (ec)
      throw WriteError(
          p.string(),
          "the new set is saved, but this file of the old set could not be removed (its rows would "
          "load with the set): " +
              ec.message(),
          ec.value());
  }
}

}  // namespace

void save_sgf_folder(const SgfList& list, const std::string& dir) {
  write_sgf_files(merged_by_range(list), dir, nullptr);
}

// [SECTION] Editor form ------------------------------------------------------------

SgfList sgf_flatten(const SgfSet& set) {
  std::map<std::pair<int64_t, int64_t>, SgfFile> by;
  for (const SgfGroup& g : set.groups)
    for (const SgfEntry& e : g.entries) {
      SgfFile& f = by[{e.s0, e.s1}];
      f.start = e.s0;
      f.end = e.s1;
      for (uint32_t id : g.ids) f.rows.push_back(SgfRow{id, e.fx, e.fy, e.fz});
    }
  SgfList list;
  for (auto& kv : by) list.files.push_back(std::move(kv.second));
  return list;
}

namespace {

struct Candidate {
  std::vector<uint32_t> ids;
  SgfEntry entry;
};

/// Runs of consecutive rows with the same force in each file.
void collect_runs(const SgfFile& f, size_t b, size_t e, std::vector<Candidate>& out) {
  size_t i = b;
  while (i < e) {
    size_t j = i + 1;
    const SgfRow& r = f.rows[i];
    while (j < e && f.rows[j].fx == r.fx && f.rows[j].fy == r.fy && f.rows[j].fz == r.fz) ++j;
    Candidate c;
    c.entry = SgfEntry{f.start, f.end, r.fx, r.fy, r.fz};
    for (size_t k = i; k < j; ++k) c.ids.push_back(f.rows[k].id);
    out.push_back(std::move(c));
    i = j;
  }
}

/// Candidates with the same ID list become one group.
void append_inferred(std::vector<Candidate>& cands, SgfSet& set, const std::string& prefix) {
  std::map<std::vector<uint32_t>, size_t> index;
  for (Candidate& c : cands) {
    auto it = index.find(c.ids);
    if (it == index.end()) {
      SgfGroup g;
      size_t k = set.groups.size();
      g.name = prefix + std::to_string(index.size() + 1);
      const std::array<float, 3> rgb =
          group_palette_rgb(k + 1);  // as the window's "New from selection"
      for (int ch = 0; ch < 3; ++ch) g.color[ch] = rgb[static_cast<size_t>(ch)];
      g.ids = c.ids;
      index.emplace(c.ids, set.groups.size());
      set.groups.push_back(std::move(g));
      it = index.find(c.ids);
    }
    set.groups[it->second].entries.push_back(c.entry);
  }
}

}  // namespace

SgfSet sgf_infer_groups(const SgfList& list) {
  std::vector<Candidate> cands;
  for (const SgfFile& f : list.files) collect_runs(f, 0, f.rows.size(), cands);
  SgfSet set;
  append_inferred(cands, set, "group ");
  return set;
}

// [SECTION] groups.json ------------------------------------------------------------

namespace {}  // namespace

void save_sgf_set(const SgfSet& set, const std::string& dir) {
  // Files by range; remember where each entry's rows land.
  struct Span {
    std::string file;
    size_t row, count;
  };
  std::map<std::pair<int64_t, int64_t>, SgfFile> by;
  std::vector<std::vector<Span>> spans(set.groups.size());
  for (size_t gi = 0; gi < set.groups.size(); ++gi) {
    const SgfGroup& g = set.groups[gi];
    for (const SgfEntry& e : g.entries) {
      SgfFile& f = by[{e.s0, e.s1}];
      f.start = e.s0;
      f.end = e.s1;
      spans[gi].push_back(Span{sgf_file_name(e.s0, e.s1), f.rows.size(), g.ids.size()});
      for (uint32_t id : g.ids) f.rows.push_back(SgfRow{id, e.fx, e.fy, e.fz});
    }
  }
  std::vector<SgfFile> files;
  for (auto& kv : by) files.push_back(std::move(kv.second));

  std::string j =
      "{\n  \"format\": \"particle-sandbox-sgf-groups\",\n  \"version\": 1,\n  \"groups\": [";
  for (size_t gi = 0; gi < set.groups.size(); ++gi) {
    const SgfGroup& g = set.groups[gi];
    j += gi ? ",\n    {\n" : "\n    {\n";
    j += "      \"name\": " + json_quote(g.name) + ",\n";
    j += "      \"color\": [" + shortest(g.color[0]) + ", " + shortest(g.color[1]) + ", " +
         shortest(g.color[2]) + "],\n";
    j += "      \"ids\": [";
    for (size_t k = 0; k < g.ids.size(); ++k) {
      if (k) j += (k % 16 == 0) ? ",\n        " : ", ";
      j += std::to_string(g.ids[k]);
    }
    j += "],\n      \"entries\": [";
    for (size_t k = 0; k < spans[gi].size(); ++k) {
      const Span& sp = spans[gi][k];
      j += k ? ",\n        " : "\n        ";
      j += "{\"file\": " + json_quote(sp.file) + ", \"row\": " + std::to_string(sp.row) +
           ", \"count\": " + std::to_string(sp.count) + "}";
    }
    j += spans[gi].empty() ? "]\n    }" : "\n      ]\n    }";
  }
  j += set.groups.empty() ? "]\n}\n" : "\n  ]\n}\n";
  write_sgf_files(files, dir, &j);  // the CSVs, then the index, then stale CSVs removed
}

SgfSetLoadResult load_sgf_set(const std::string& dir) {
  SgfSetLoadResult res;
  SgfLoadResult flat = load_sgf_folder(dir);
  res.diagnostics = std::move(flat.diagnostics);
  res.skipped = std::move(flat.skipped);
  res.files = flat.list.files.size();
  const std::string index_path = (fs::path(dir) / kSgfIndexName).string();
  std::error_code ec;
  if (!fs::exists(index_path, ec)) {
    res.set = sgf_infer_groups(flat.list);
    return res;
  }
  // Rows claimed by the index, per file name.
  std::map<std::string, const SgfFile*> by_name;
  std::map<std::string, std::vector<char>> claimed;
  for (const SgfFile& f : flat.list.files) {
    std::string name = fs::path(f.source).filename().string();
    by_name[name] = &f;
    claimed[name].assign(f.rows.size(), 0);
  }
  try {
    Json root = Json::parse_file(index_path);
    ObjReader top(root, "");
    top.string("format", "particle-sandbox-sgf-groups");
    top.integer("version", 1, 1, 1);
    const Json* groups = top.get("groups");
    if (groups && !groups->is_array())
      top.fail("groups", "expected an array, got " + describe(*groups));
    top.finish();
    for (size_t gi = 0; groups && gi < groups->size(); ++gi) {
      std::string path = "groups[" + std::to_string(gi) + "]";
      try {
        ObjReader gr(groups->at(gi), path);
        SgfGroup g;
        g.name = gr.string_required("name");
        gr.color("color", g.color);
        if (const Json* ids = gr.get("ids")) {
          if (!ids->is_array())
            gr.fail("ids", "expected an array of particle IDs, got " + describe(*ids));
          for (size_t k = 0; k < ids->size(); ++k)
            g.ids.push_back(static_cast<uint32_t>(json_number(
                ids->at(k), gr.field("ids") + "[" + std::to_string(k) + "]", 1, 4294967294.0)));
        }
        const Json* entries = gr.get("entries");
        if (entries && !entries->is_array())
          gr.fail("entries", "expected an array, got " + describe(*entries));
        gr.finish();
        for (size_t ei = 0; entries && ei < entries->size(); ++ei) {
          std::string epath = gr.field("entries") + "[" + std::to_string(ei) + "]";
          try {
            ObjReader er(entries->at(ei), epath);
            std::string file = er.string_required("file");
            double row = er.number_required("row", 0, 1e12);
            double count = er.number_required("count", 0, 1e12);
            er.finish();
            auto it = by_name.find(file);
            if (it == by_name.end()) {
              const bool skipped = std::any_of(
                  res.skipped.begin(), res.skipped.end(),
                  [&](const std::string& p) { return fs::path(p).filename().string() == file; });
              er.fail("file",
                      skipped
                          ? squote(file) +
                                " was skipped (its problems are listed): the entry is not loaded"
                          : "no loaded SGF file named " + squote(file));
            }
            const SgfFile& f = *it->second;
            size_t r0 = static_cast<size_t>(row), n = static_cast<size_t>(count);
            bool match = r0 + n <= f.rows.size() && n == g.ids.size();
            for (size_t k = 0; match && k < n; ++k) {
              const SgfRow& a = f.rows[r0 + k];
              const SgfRow& b = f.rows[r0];
              match = a.id == g.ids[k] && a.fx == b.fx && a.fy == b.fy && a.fz == b.fz;
            }
            if (!match)
              er.fail("row", "rows " + std::to_string(r0 + 2) + ".." + std::to_string(r0 + n + 1) +
                                 " of " + file + " do not hold group '" + g.name +
                                 "' with one force");
            if (n == 0) continue;  // an empty group's entry leaves no rows and cannot be recovered
            std::vector<char>& cl = claimed[file];
            for (size_t k = 0; k < n; ++k) cl[r0 + k] = 1;
            g.entries.push_back(
                SgfEntry{f.start, f.end, f.rows[r0].fx, f.rows[r0].fy, f.rows[r0].fz});
          } catch (const InputError& err) {
            res.diagnostics.push_back(err);
          }
        }
        res.set.groups.push_back(std::move(g));
      } catch (const InputError& err) {
        res.diagnostics.push_back(err);
      }
    }
  } catch (const InputError& err) {
    res.diagnostics.push_back(err);
  }
  // Rows nobody claimed (hand edits, or a bad index) become inferred groups.
  std::vector<Candidate> cands;
  for (const SgfFile& f : flat.list.files) {
    const std::vector<char>& cl = claimed[fs::path(f.source).filename().string()];
    size_t i = 0;
    while (i < f.rows.size()) {
      if (cl[i]) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < f.rows.size() && !cl[j]) ++j;
      collect_runs(f, i, j, cands);
      i = j;
    }
  }
  append_inferred(cands, res.set, "unassigned ");
  return res;
}

// [SECTION] ID lists ----------------------------------------------------------------

std::string id_list_text(const std::vector<uint32_t>& ids) {
  std::string s;
  for (uint32_t id : ids) {
    s += std::to_string(id);
    s += '\n';
  }
  return s;
}

void save_id_list(const std::vector<uint32_t>& ids, const std::string& path) {
  write_file_text(path, id_list_text(ids));
}

std::vector<uint32_t> load_id_list(const std::string& path, std::vector<InputError>& diags) {
  std::vector<uint32_t> ids;
  std::string text;
  try {
    text = read_file_text(path);
  } catch (const InputError& e) {
    diags.push_back(e);
    return ids;
  }
  std::vector<std::string> lines = split_lines(text);
  for (size_t li = 0; li < lines.size(); ++li) {
    if (is_blank_line(lines[li])) continue;
    TextField f = split_csv(lines[li])[0];
    uint32_t id = 0;
    if (lines[li].find(',') != std::string::npos || !parse_id(f.text, id)) {
      diags.emplace_back(
          SourceLoc{path, static_cast<int>(li + 1), f.column}, "ID",
          "expected one particle ID (integer >= 1) per line, got " + squote(lines[li]));
      continue;
    }
    ids.push_back(id);
  }
  return ids;
}

// [SECTION] ID map -------------------------------------------------------------------

void IdIndexMap::build(const uint32_t* ids, size_t n) {
  n_ = n;
  dense_.clear();
  sparse_.clear();
  uint32_t max_id = 0;
  for (size_t i = 0; i < n; ++i) max_id = std::max(max_id, ids[i]);
  if (static_cast<uint64_t>(max_id) <= 4ull * n + 1024ull) {
    dense_.assign(static_cast<size_t>(max_id) + 1, kNone);
    for (size_t i = 0; i < n; ++i) dense_[ids[i]] = static_cast<uint32_t>(i);
  } else {
    sparse_.reserve(n);
    for (size_t i = 0; i < n; ++i) sparse_.emplace_back(ids[i], static_cast<uint32_t>(i));
    std::sort(sparse_.begin(), sparse_.end());
  }
}

uint32_t IdIndexMap::find(uint32_t id) const {
  if (!dense_.empty() || sparse_.empty()) return id < dense_.size() ? dense_[id] : kNone;
  auto it = std::lower_bound(sparse_.begin(), sparse_.end(), std::make_pair(id, 0u));
  return it != sparse_.end() && it->first == id ? it->second : kNone;
}

// [SECTION] Schedule -------------------------------------------------------------------

void SgfSchedule::set(const SgfList& list) {
  files_.clear();
  ids_.clear();
  missing_seen_.clear();
  missing_new_.clear();
  fx_.clear();
  fy_.clear();
  events_.clear();
  // Step order whatever the list order: sort by (start, end), stable.
  std::vector<uint32_t> order(list.files.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const SgfFile& fa = list.files[a];
    const SgfFile& fb = list.files[b];
    return fa.start != fb.start ? fa.start < fb.start : fa.end < fb.end;
  });
  first_ = 0;
  last_ = -1;
  for (uint32_t k : order) {
    const SgfFile& f = list.files[k];
    if (f.end < f.start) continue;
    File rec{f.start, f.end, ids_.size(), 0};
    for (const SgfRow& r : f.rows) {
      ids_.push_back(r.id);
      fx_.push_back(r.fx);
      fy_.push_back(r.fy);
    }
    rec.row_end = ids_.size();
    uint32_t fi = static_cast<uint32_t>(files_.size());
    if (files_.empty() || f.start < first_) first_ = f.start;
    if (files_.empty() || f.end > last_) last_ = f.end;
    files_.push_back(rec);
    events_.push_back(Event{f.start, fi, true});
    if (f.end < INT64_MAX) events_.push_back(Event{f.end + 1, fi, false});
  }
  std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
    if (a.step != b.step) return a.step < b.step;
    if (a.on != b.on) return !a.on;  // deactivate before activate
    return a.file < b.file;
  });
  rewind();
}

void SgfSchedule::rewind() {
  cursor_ = 0;
  active_.clear();
  last_query_ = INT64_MIN;
}

const std::vector<uint32_t>& SgfSchedule::active(int64_t step) {
  if (step < last_query_) rewind();
  last_query_ = step;
  while (cursor_ < events_.size() && events_[cursor_].step <= step) {
    const Event& ev = events_[cursor_++];
    if (ev.on) {
      // Keep file order so sums are deterministic (same order every run).
      active_.insert(std::upper_bound(active_.begin(), active_.end(), ev.file), ev.file);
    } else {
      auto it = std::lower_bound(active_.begin(), active_.end(), ev.file);
      if (it != active_.end() && *it == ev.file) active_.erase(it);
    }
  }
  return active_;
}

void SgfSchedule::note_missing(uint32_t id) {
  auto it = std::lower_bound(missing_seen_.begin(), missing_seen_.end(), id);
  if (it == missing_seen_.end() || *it != id) {
    missing_seen_.insert(it, id);
    missing_new_.push_back(id);
  }
}

std::vector<uint32_t> SgfSchedule::take_new_missing() {
  std::vector<uint32_t> out;
  out.swap(missing_new_);
  std::sort(out.begin(), out.end());
  return out;
}

void SgfForceApplier::update_map(const uint32_t* ids, size_t n) {
  if (ids_seen_.size() != n || !std::equal(ids, ids + n, ids_seen_.begin())) {
    ids_seen_.assign(ids, ids + n);
    map_.build(ids, n);
  }
}

std::string sgf_missing_notice(int64_t step, const std::vector<uint32_t>& ids,
                               const std::function<bool(uint32_t)>& is_retired) {
  size_t retired = 0;
  for (uint32_t id : ids)
    if (is_retired && is_retired(id)) ++retired;
  std::string list;
  for (size_t k = 0; k < ids.size() && k < 8; ++k) list += (k ? ", " : "") + std::to_string(ids[k]);
  if (ids.size() > 8) list += ", ...";
  std::string why;
  if (retired == ids.size())
    why = "retired: merged away by resampling";
  else if (retired == 0)
    why = "no particle ever had these IDs";
  else
    why = std::to_string(retired) + " retired by resampling, the others never existed";
  return "SGF rows name " + std::to_string(ids.size()) +
         (ids.size() == 1 ? " particle" : " particles") + " with no particle at step " +
         std::to_string(step) + " (ID " + list + "; " + why + "): their forces are skipped";
}

}  // namespace ps
