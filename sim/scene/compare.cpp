#include "sim/scene/compare.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <utility>
#include "sim/core/error.h"
#include "sim/dem/dem_world.h"
#include "sim/scene/scene.h"

namespace ps {

namespace {

SourceLoc vary_loc(const std::string& spec) { return SourceLoc{"--vary " + spec, 0, 0}; }

/// The path of an assignment "path=value" (the whole text when it has no '=').
std::string path_of(const std::string& assignment) {
  return assignment.substr(0, assignment.find('='));
}

std::string last_segment(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

/// The next substep's size of a pane and whether it stays fixed from one
/// substep to the next (dt 0: the pane's world does not say).
struct StepSize {
  double dt = 0.0;
  bool fixed = true;
};

StepSize step_size(Simulation& s) {
  if (MpmWorld* w = s.mpm()) return {static_cast<double>(w->next_dt()), !w->solver.adaptive_dt};
  if (dem::DemWorld* d = s.dem())
    return {d->next_dt(), true};  // the stable estimate changes only with materials
  return {};
}

bool same_loc(const SourceLoc& a, const SourceLoc& b) {
  return a.file == b.file && a.line == b.line && a.column == b.column;
}

/// "%g" of a double.
std::string short_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string pane_count_text(uint64_t n) {
  if (n == UINT64_MAX) return "more than 18446744073709551614 panes";
  return std::to_string(n) + " pane" + (n == 1 ? "" : "s");
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

}  // namespace

// [SECTION] --vary -------------------------------------------------------------------

VaryAxis parse_vary(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos)
    throw InputError(vary_loc(spec), "",
                     "expected path=value,value,... (e.g. solver.transfer=pic,apic)");
  VaryAxis a;
  a.path = spec.substr(0, eq);
  if (a.path.empty()) throw InputError(vary_loc(spec), "", "empty setting path before '='");
  const std::string list = spec.substr(eq + 1);
  int depth = 0;
  bool quoted = false;
  std::string cur;
  auto push = [&] {
    if (cur.empty())
      throw InputError(vary_loc(spec), a.path,
                       "empty value in the list '" + list + "' (values are separated by commas)");
    a.values.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (c == '"' && (i == 0 || list[i - 1] != '\\')) quoted = !quoted;
    if (!quoted && (c == '[' || c == '{')) ++depth;
    if (!quoted && (c == ']' || c == '}')) --depth;
    if (c == ',' && depth == 0 && !quoted) {
      push();
      continue;
    }
    cur += c;
  }
  push();
  return a;
}

uint64_t vary_pane_count(const std::vector<VaryAxis>& axes) {
  if (axes.empty()) return 0;
  uint64_t n = 1;
  for (const VaryAxis& a : axes) {
    const uint64_t k = a.values.size();
    if (k != 0 && n > (UINT64_MAX - 1) / k)
      return UINT64_MAX;  // saturates: far beyond any pane limit
    n *= k;
  }
  return n;
}

std::string vary_shape(const std::vector<VaryAxis>& axes) {
  constexpr size_t kShown = 4;  // a fuzzed or mistyped list may have thousands of items
  std::string shape;
  for (size_t k = 0; k < axes.size() && k < kShown; ++k) {
    const size_t n = axes[k].values.size();
    shape += (k ? " x " : "") + axes[k].path + ": " + std::to_string(n) +
             (n == 1 ? " value" : " values");
  }
  if (axes.size() > kShown) shape += " x ... (" + std::to_string(axes.size()) + " settings in all)";
  return shape;
}

/// "" when the axes give 2 to 4 panes, else the error naming the count.
static std::string vary_count_error(const std::vector<VaryAxis>& axes) {
  const uint64_t n = vary_pane_count(axes);
  if (n >= Comparison::kMinPanes && n <= Comparison::kMaxPanes) return "";
  return "the settings give " + pane_count_text(n) + " (" + vary_shape(axes) +
         "); a comparison shows " + std::to_string(Comparison::kMinPanes) + " to " +
         std::to_string(Comparison::kMaxPanes);
}

std::vector<PaneSpec> vary_panes(const std::vector<VaryAxis>& axes) {
  // The count first, from the lengths of the lists: a product of many lists
  // would otherwise be built in full (2^22 panes from 22 two-value items)
  // before its size could be refused.
  if (vary_pane_count(axes) > Comparison::kMaxPanes)
    throw InputError(SourceLoc{"--vary", 0, 0}, "", vary_count_error(axes));
  std::vector<std::string> names;
  for (const VaryAxis& a : axes) {
    bool clash = false;
    for (const VaryAxis& b : axes)
      if (&a != &b && last_segment(a.path) == last_segment(b.path)) clash = true;
    names.push_back(clash ? a.path : last_segment(a.path));
  }
  std::vector<PaneSpec> panes(1);
  for (size_t k = 0; k < axes.size(); ++k) {
    std::vector<PaneSpec> next;
    for (const PaneSpec& p : panes)
      for (const std::string& v : axes[k].values) {
        PaneSpec q = p;
        q.label += (q.label.empty() ? "" : " ") + names[k] + "=" + v;
        q.settings.push_back(axes[k].path + "=" + v);
        next.push_back(std::move(q));
      }
    panes = std::move(next);
  }
  if (axes.empty()) panes.clear();
  return panes;
}

std::vector<PaneSpec> vary_panes_text(const std::string& space_separated) {
  const SourceLoc loc{"--vary " + space_separated, 0, 0};
  std::vector<VaryAxis> axes;
  size_t b = 0;
  while (b < space_separated.size()) {
    const size_t e = space_separated.find(' ', b);
    const std::string item =
        space_separated.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (!item.empty()) axes.push_back(parse_vary(item));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  const std::string count = vary_count_error(axes);
  if (!count.empty()) throw InputError(loc, "", count);
  for (size_t i = 0; i < axes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (axes[i].path == axes[j].path)
        throw InputError(loc, axes[i].path,
                         "varied twice (items " + std::to_string(j + 1) + " and " +
                             std::to_string(i + 1) + "); give all its values in one item");
  return vary_panes(axes);
}

// [SECTION] Comparison ----------------------------------------------------------------

Comparison::Comparison(const std::string& scene, const std::vector<std::string>& sets,
                       const std::vector<PaneSpec>& panes, const std::string& backend,
                       int threads) {
  if (panes.size() < kMinPanes || panes.size() > kMaxPanes) {
    throw InputError(SourceLoc{"--vary", 0, 0}, "",
                     "the settings give " + std::to_string(panes.size()) + " pane" +
                         (panes.size() == 1 ? "" : "s") + "; a comparison shows " +
                         std::to_string(kMinPanes) + " to " + std::to_string(kMaxPanes));
  }
  for (const PaneSpec& p : panes)
    for (const std::string& s : p.settings)
      for (const std::string& set : sets)
        if (path_of(set) == path_of(s))
          throw InputError(
              vary_loc(s), path_of(s),
              "also given by --set " + set + " (a setting is either common or varied)");
  const std::string path = resolve_scene_path(scene);
  build(read_scene_document(path, sets), path, panes, backend, threads, nullptr, "");
}

Comparison::Comparison(const Json& base, const std::string& path,
                       const std::vector<PaneSpec>& panes, const std::string& backend, int threads,
                       const SourceLoc& where, const std::string& entry) {
  if (panes.size() < kMinPanes || panes.size() > kMaxPanes)
    throw InputError(where, entry,
                     "the settings give " + std::to_string(panes.size()) + " pane" +
                         (panes.size() == 1 ? "" : "s") + "; a comparison shows " +
                         std::to_string(kMinPanes) + " to " + std::to_string(kMaxPanes));
  build(base, path, panes, backend, threads, &where, entry);
}

void Comparison::build(const Json& base, const std::string& path,
                       const std::vector<PaneSpec>& panes, const std::string& backend, int threads,
                       const SourceLoc* where, const std::string& entry) {
  for (size_t k = 0; k < panes.size(); ++k) {
    const PaneSpec& p = panes[k];
    Json doc = base;  // a deep copy: the pane's own document
    ComparePane pane;
    pane.spec = p;
    if (!where) {
      for (const std::string& s : p.settings) apply_override(doc, s, "--vary");
      pane.sim = simulation_from_document(std::move(doc), path, backend, threads);
    } else {
      // From a file (a lesson's "compare"): every error is the entry's, naming the pane; an
      // error elsewhere in the scene keeps its own location in the message.
      const std::string which = "pane " + std::to_string(k + 1) + " (" + p.label + "): ";
      try {
        for (const std::string& s : p.settings) apply_override(doc, s, *where, entry);
        pane.sim = simulation_from_document(std::move(doc), path, backend, threads);
      } catch (const InputError& e) {
        if (!same_loc(e.loc(), *where)) throw InputError(*where, entry, which + e.what());
        if (e.field() == entry) throw InputError(*where, entry, which + e.message());
        throw InputError(*where, entry, which + "scene field '" + e.field() + "': " + e.message());
      }
    }
    panes_.push_back(std::move(pane));
  }
  check_step_ratio(where ? *where : SourceLoc{"--vary", 0, 0}, entry);
  record();
}

void Comparison::check_step_ratio(const SourceLoc& where, const std::string& entry) const {
  // Lockstep of simulated time makes the pane with the smallest substep take
  // (largest dt / its dt) substeps for each of the largest one's: beyond
  // kMaxDtRatio a displayed frame would cost that many single views (a
  // ratio of 10^7 is half an hour a frame), and the panes could not be
  // watched side by side anyway (docs/compare.md).
  size_t lo = panes_.size(), hi = panes_.size();
  double dlo = 0.0, dhi = 0.0;
  for (size_t k = 0; k < panes_.size(); ++k) {
    const double dt = step_size(*panes_[k].sim).dt;
    if (!(dt > 0.0)) continue;  // no dt of its own: it takes the first pane's substep count
    if (lo == panes_.size() || dt < dlo) lo = k, dlo = dt;
    if (hi == panes_.size() || dt > dhi) hi = k, dhi = dt;
  }
  // (dt is a float in the world: 5e-4 and 5e-6 are 100 times apart to within its rounding)
  if (lo == panes_.size() || !(dhi / dlo > kMaxDtRatio * (1.0 + 1e-6))) return;
  const double ratio = dhi / dlo;
  throw InputError(
      where, entry,
      "pane " + std::to_string(hi + 1) + " (" + panes_[hi].spec.label + ") takes substeps of " +
          short_number(dhi) + " s, pane " + std::to_string(lo + 1) + " (" + panes_[lo].spec.label +
          ") of " + short_number(dlo) + " s: a ratio of " + short_number(ratio) +
          ". Panes advance in lockstep of simulated time, so pane " + std::to_string(lo + 1) +
          " would take " + short_number(ratio) + " substeps for each of pane " +
          std::to_string(hi + 1) + "'s; a comparison allows time steps at most " +
          short_number(kMaxDtRatio) + " times apart");
}

void Comparison::record() {
  for (ComparePane& p : panes_) {
    const Diagnostics d = p.sim->diagnostics();
    CurveSample s;
    s.frame = frame_;
    s.time = p.sim->time();
    s.steps = p.sim->step_count();
    s.kinetic_energy = d.kinetic_energy;
    s.momentum[0] = d.momentum[0];
    s.momentum[1] = d.momentum[1];
    s.angular_momentum = d.angular_momentum;
    s.hash = d.hash;
    if (!p.curve.empty() && p.curve.back().frame == frame_)
      p.curve.back() = s;
    else
      p.curve.push_back(s);
  }
}

bool Comparison::short_of(ComparePane& pane, double target) {
  const StepSize ss = step_size(*pane.sim);
  return ss.dt > 0.0 && target - pane.sim->time() >= 0.5 * ss.dt;
}

StepStatus Comparison::catch_up(ComparePane& pane, double target, int ref_substeps,
                                bool& left_short) {
  Simulation& sim = *pane.sim;
  StepSize ss = step_size(sim);
  if (!(ss.dt > 0.0)) return ref_substeps > 0 ? pane_step(pane, ref_substeps) : StepStatus{};
  int64_t budget = catch_up_limit_ > 0 ? catch_up_limit_ : INT64_MAX;
  StepStatus st;
  for (;;) {
    ss = step_size(sim);
    const double left = target - sim.time();
    if (!(ss.dt > 0.0) || left < 0.5 * ss.dt) return st;
    if (budget <= 0) {
      left_short = true;  // the rest in the next call, the clock waiting
      return st;
    }
    const double n = std::min(
        {ss.fixed ? std::floor(left / ss.dt + 0.5) : 1.0, 1e9, static_cast<double>(budget)});
    st = pane_step(pane, static_cast<int>(n));
    budget -= static_cast<int64_t>(n);
    if (!st.ok) return st;
  }
}

StepStatus Comparison::catch_up_all(int ref_substeps) {
  const double target = panes_.front().sim->time();
  behind_ = false;
  for (size_t k = 1; k < panes_.size(); ++k) {
    bool left_short = false;
    StepStatus st = catch_up(panes_[k], target, ref_substeps, left_short);
    if (!st.ok) {
      st.message =
          "pane " + std::to_string(k + 1) + " (" + panes_[k].spec.label + "): " + st.message;
      return st;
    }
    behind_ = behind_ || left_short;
  }
  return {};
}

void Comparison::update_behind() {
  behind_ = false;
  const double target = panes_.front().sim->time();
  for (size_t k = 1; k < panes_.size(); ++k) behind_ = behind_ || short_of(panes_[k], target);
}

std::string Comparison::behind_text() {
  std::string out;
  const double target = panes_.front().sim->time();
  for (size_t k = 1; k < panes_.size(); ++k)
    if (short_of(panes_[k], target))
      out += (out.empty() ? "" : ", ") + std::string("pane ") + std::to_string(k + 1) + " (" +
             panes_[k].spec.label + ") " + short_number(target - panes_[k].sim->time()) +
             " s behind";
  return out;
}

StepStatus Comparison::pane_step(ComparePane& pane, int n) {
  return pane.rewind ? pane.rewind->step(*pane.sim, n) : pane.sim->step(n);
}

StepStatus Comparison::step_frame(int substeps) {
  if (rewinding_ && frame_ < head_frame()) {  // the recorded future: replay its next frame
    const int64_t at = frame_;
    StepStatus st = seek_frame(at + 1);
    if (st.ok && recording_) record();
    return st;
  }
  StepStatus st = step_part(substeps);
  if (st.ok) finish_frame();
  return st;
}

StepStatus Comparison::step_part(int substeps) {
  playback_ = false;
  if (behind_) return catch_up_all(0);  // the clock waits for the panes behind it
  Simulation& ref = *panes_.front().sim;
  const int n = substeps > 0 ? substeps : ref.substeps_per_frame();
  StepStatus st = pane_step(panes_[0], n);
  if (!st.ok) {
    st.message = "pane 1 (" + panes_[0].spec.label + "): " + st.message;
    return st;
  }
  return catch_up_all(n);
}

void Comparison::finish_frame() {
  ++frame_;
  end_frame_recording();
  if (recording_) record();
}

void Comparison::set_point_force(const PointForce& f) {
  for (ComparePane& p : panes_) {
    if (MpmWorld* w = p.sim->mpm()) w->point_force = f;
    if (dem::DemWorld* d = p.sim->dem()) d->point_force = f;
  }
  note_controls();
}

void Comparison::grab_begin(const std::vector<uint32_t>& rows, Vec2 target, float stiffness) {
  for (ComparePane& p : panes_)
    if (MpmWorld* w = p.sim->mpm()) {
      w->grab_stiffness = stiffness;
      w->grab_begin(rows, target);
    }
  note_controls();
}

void Comparison::grab_move(Vec2 target) {
  for (ComparePane& p : panes_)
    if (MpmWorld* w = p.sim->mpm()) w->grab_move(target);
  note_controls();
}

void Comparison::grab_end() {
  for (ComparePane& p : panes_)
    if (MpmWorld* w = p.sim->mpm()) w->grab_end();
  note_controls();
}

void Comparison::note_controls() {
  bool changed = false;
  for (ComparePane& p : panes_)
    if (p.rewind) changed = p.rewind->note_controls(*p.sim) || changed;
  if (changed) after_action();
}

void Comparison::set_force_list(const SgfList& list) {
  auto shared = std::make_shared<const SgfList>(list);
  for (ComparePane& p : panes_) {
    if (!p.rewind) {
      p.sim->set_force_list(list);
      continue;
    }
    RewindAction a;  // recorded with its step; perform_action sets the list
    a.kind = RewindAction::Kind::ForceList;
    a.list = shared;
    p.rewind->apply(*p.sim, std::move(a));
  }
  after_action();
}

size_t Comparison::apply_preset(Preset preset, float speed) {
  size_t n = 0;
  for (ComparePane& p : panes_)
    if (p.sim->mpm()) {
      RewindAction a;
      a.kind = RewindAction::Kind::Preset;
      a.preset = preset;
      a.speed = speed;
      if (p.rewind)
        p.rewind->apply(*p.sim, std::move(a));
      else
        perform_action(*p.sim, a);
      ++n;
    }
  if (n > 0) after_action();
  return n;
}

// [SECTION] Rewind --------------------------------------------------------------------

bool Comparison::enable_rewind(size_t budget_bytes) {
  rewinding_ = false;
  playback_ = false;
  marks_.clear();
  for (ComparePane& p : panes_) {
    const std::string why = p.sim->rewind_unsupported();
    if (!why.empty()) {
      rewind_off_ = "pane " + p.spec.label + ": " + why;
      for (ComparePane& q : panes_) q.rewind.reset();
      return false;
    }
  }
  const size_t each = budget_bytes / panes_.size();
  for (ComparePane& p : panes_) {
    p.rewind = std::make_unique<Rewind>(each);
    if (!p.rewind->reset(*p.sim)) {
      rewind_off_ = "pane " + p.spec.label + ": " + p.rewind->why_off();
      for (ComparePane& q : panes_) q.rewind.reset();
      return false;
    }
  }
  rewinding_ = true;
  rewind_off_.clear();
  first_frame_ = frame_;
  mark_frame();
  return true;
}

void Comparison::mark_frame() {
  const size_t base = static_cast<size_t>(frame_ - first_frame_) * panes_.size();
  marks_.resize(base + panes_.size());  // (a branch already cut the rest)
  for (size_t k = 0; k < panes_.size(); ++k)
    marks_[base + k] = FrameMark{panes_[k].sim->step_count(), panes_[k].rewind->applied()};
}

void Comparison::end_frame_recording() {
  if (!rewinding_) return;
  for (ComparePane& p : panes_) p.rewind->end_frame();
  mark_frame();
}

void Comparison::after_action() {
  playback_ = false;
  if (rewinding_) mark_frame();  // drops the later frames, and frame_ now holds the action
}

StepStatus Comparison::seek_frame(int64_t f) {
  if (!rewinding_) return {};
  f = std::clamp(f, first_frame_, head_frame());
  const size_t base = static_cast<size_t>(f - first_frame_) * panes_.size();
  for (size_t k = 0; k < panes_.size(); ++k) {
    ComparePane& p = panes_[k];
    const FrameMark m = marks_[base + k];
    const int64_t reached = p.rewind->seek_applied(*p.sim, m.step, m.applied);
    if (reached != m.step) {
      StepStatus st;
      st.ok = false;
      st.step = reached;
      st.message = "pane " + std::to_string(k + 1) + " (" + p.spec.label +
                   "): the replay stopped at step " + std::to_string(reached) + " of " +
                   std::to_string(m.step);
      return st;
    }
  }
  frame_ = f;
  playback_ = true;
  update_behind();               // a frame may have been recorded with a pane still catching up
  for (ComparePane& p : panes_)  // samples after f are re-recorded as the replay passes them
    while (!p.curve.empty() && p.curve.back().frame > f) p.curve.pop_back();
  return {};
}

size_t Comparison::rewind_bytes() const {
  size_t n = marks_.capacity() * sizeof(FrameMark);
  for (const ComparePane& p : panes_)
    if (p.rewind) {
      const RewindStats st = p.rewind->stats();
      n += st.snapshot_bytes + st.log_bytes;
    }
  return n;
}

std::string Comparison::curves_csv() const {
  std::string out =
      "frame,time,pane,label,steps,kinetic_energy,momentum_x,momentum_y,angular_momentum,hash\n";
  char buf[320];
  const size_t frames = panes_.front().curve.size();
  for (size_t f = 0; f < frames; ++f)
    for (size_t k = 0; k < panes_.size(); ++k) {
      if (f >= panes_[k].curve.size()) continue;
      const CurveSample& s = panes_[k].curve[f];
      std::snprintf(buf, sizeof buf, "%" PRId64 ",%.9g,%zu,", s.frame, s.time, k + 1);
      out += buf;
      out += csv_field(panes_[k].spec.label);
      std::snprintf(buf, sizeof buf, ",%" PRId64 ",%.17g,%.17g,%.17g,%.17g,%016" PRIx64 "\n",
                    s.steps, s.kinetic_energy, s.momentum[0], s.momentum[1], s.angular_momentum,
                    s.hash);
      out += buf;
    }
  return out;
}

}  // namespace ps
