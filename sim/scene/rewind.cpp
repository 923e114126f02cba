#include "sim/scene/rewind.h"

#include <algorithm>
#include <stdexcept>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace ps {

namespace {
constexpr size_t kSnapshotBytesPerFrame = size_t{4} << 20;
}  // namespace

size_t default_rewind_budget_for(size_t physical_bytes) {
  constexpr size_t kCap = size_t{512} << 20;
  if (physical_bytes == 0) return kCap;
  return std::min(kCap, physical_bytes / 4);
}

size_t default_rewind_budget() {
  size_t phys = 0;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) phys = static_cast<size_t>(pages) * static_cast<size_t>(page);
#endif
  return default_rewind_budget_for(phys);
}

const char* rewind_action_name(RewindAction::Kind k) {
  switch (k) {
    case RewindAction::Kind::Controls: return "controls";
    case RewindAction::Kind::Preset: return "preset";
    case RewindAction::Kind::Paint: return "paint";
    case RewindAction::Kind::ForceList: return "sgf";
    case RewindAction::Kind::Keyframe: return "keyframe";
  }
  return "?";
}

size_t RewindAction::bytes() const {
  size_t n = sizeof(*this) + controls.size() + sites.size() * sizeof(Vec2);
  if (list) n += sizeof(SgfList) + list->row_count() * 4 * sizeof(double);
  if (state) n += state->bytes();
  return n;
}

void perform_action(Simulation& sim, const RewindAction& a) {
  switch (a.kind) {
    case RewindAction::Kind::Controls: sim.set_controls(a.controls); break;
    case RewindAction::Kind::Preset:
      if (MpmWorld* w = sim.mpm()) w->apply_preset(a.preset, a.speed);
      break;
    case RewindAction::Kind::Paint:
      if (MpmWorld* w = sim.mpm())
        w->add_particles(a.sites, a.material, a.spacing, a.velocity, a.group);
      break;
    case RewindAction::Kind::ForceList: sim.set_force_list(a.list ? *a.list : SgfList{}); break;
    case RewindAction::Kind::Keyframe:
      if (a.state) sim.load_state(*a.state);
      break;
  }
}

// [SECTION] Recording ---------------------------------------------------------------

bool Rewind::reset(Simulation& sim) {
  snaps_.clear();
  actions_.clear();
  calls_.clear();
  cursor_ = 0;
  snap_bytes_ = log_bytes_ = 0;
  branches_ = 0;
  ++generation_;
  start_ = head_ = sim.step_count();
  why_off_ = sim.rewind_unsupported();
  active_ = why_off_.empty();
  if (!active_) return false;
  controls_ = sim.controls();
  interval_ = 1;
  take_snapshot(sim);
  // K starts at one frame, or at as many frames as keep the copying to about
  // kSnapshotBytesPerFrame per frame on average (large scenes).
  const int64_t frame = std::max(1, sim.substeps_per_frame());
  const size_t bytes = snaps_.empty() ? 0 : snaps_.back().bytes;
  interval_ = frame * static_cast<int64_t>(std::max<size_t>(
                          1, (bytes + kSnapshotBytesPerFrame - 1) / kSnapshotBytesPerFrame));
  return true;
}

void Rewind::off(const std::string& why) {
  active_ = false;
  why_off_ = why;
  snaps_.clear();
  actions_.clear();
  calls_.clear();
  cursor_ = 0;
  snap_bytes_ = log_bytes_ = 0;
}

void Rewind::set_budget(size_t bytes) {
  budget_ = bytes;
  trim();
}

size_t Rewind::first_action_at(int64_t step) const {
  auto it = std::lower_bound(actions_.begin(), actions_.end(), step,
                             [](const RewindAction& a, int64_t s) { return a.step < s; });
  return static_cast<size_t>(it - actions_.begin());
}

void Rewind::branch(Simulation& sim) {
  const int64_t c = sim.step_count();
  if (cursor_ >= actions_.size() && head_ <= c) return;
  for (size_t k = cursor_; k < actions_.size(); ++k) log_bytes_ -= actions_[k].bytes();
  actions_.resize(cursor_);
  while (!calls_.empty() && calls_.back().start >= c) {
    calls_.pop_back();
    log_bytes_ -= sizeof(Call);
  }
  if (!calls_.empty() && calls_.back().start + calls_.back().n > c) {
    calls_.back().n = static_cast<int32_t>(c - calls_.back().start);
    calls_.back().frame_end = true;  // the state shown when the branch began
  }
  while (snaps_.size() > 1 && snaps_.back().step > c) {
    snap_bytes_ -= snaps_.back().bytes;
    snaps_.pop_back();
  }
  head_ = c;
  ++branches_;
}

void Rewind::record(Simulation& sim, RewindAction a) {
  branch(sim);
  a.step = sim.step_count();
  log_bytes_ += a.bytes();
  actions_.push_back(std::move(a));
  cursor_ = actions_.size();
  controls_ = sim.controls();
  trim();
}

void Rewind::apply(Simulation& sim, RewindAction a) {
  note_controls(sim);  // edits made before this action come first in the log
  perform_action(sim, a);
  if (active_) record(sim, std::move(a));
}

bool Rewind::note_controls(Simulation& sim) {
  if (!active_) return false;
  std::string now = sim.controls();
  if (now == controls_) return false;
  RewindAction a;
  a.kind = RewindAction::Kind::Controls;
  a.controls = std::move(now);
  record(sim, std::move(a));
  return true;
}

void Rewind::keyframe(Simulation& sim) {
  if (!active_) return;
  RewindAction a;
  a.kind = RewindAction::Kind::Keyframe;
  a.state = sim.save_state();
  record(sim, std::move(a));
}

void Rewind::apply_pending(Simulation& sim, size_t limit) {
  const int64_t c = sim.step_count();
  const size_t end = std::min(limit, actions_.size());
  bool changed = false;
  while (cursor_ < end && actions_[cursor_].step <= c) {
    if (actions_[cursor_].step == c) {
      perform_action(sim, actions_[cursor_]);
      changed = true;
    }
    ++cursor_;
  }
  if (changed) ++generation_;
  controls_ = sim.controls();
}

StepStatus Rewind::step(Simulation& sim, int n) {
  if (!active_) return sim.step(n);
  if (sim.step_count() == head_)
    apply_pending(sim);  // actions recorded at the head, before live steps
  branch(sim);
  const int64_t before = sim.step_count();
  StepStatus st = sim.step(n);
  const int64_t after = sim.step_count();
  if (after > before) {
    calls_.push_back(Call{before, static_cast<int32_t>(after - before), false});
    log_bytes_ += sizeof(Call);
    head_ = after;
    if (after - snaps_.back().step >= interval_) take_snapshot(sim);
  }
  controls_ = sim.controls();
  return st;
}

void Rewind::end_frame() {
  if (active_ && !calls_.empty() && calls_.back().start + calls_.back().n == head_)
    calls_.back().frame_end = true;
}

void Rewind::take_snapshot(Simulation& sim) {
  // A budget that cannot hold a second snapshot of the start's size keeps the start only.
  if (snaps_.size() == 1 && total_bytes() + snaps_.front().bytes > budget_) return;
  Snap s;
  s.step = sim.step_count();
  s.state = sim.save_state();
  if (!s.state) return;
  s.bytes = s.state->bytes();
  if (!snaps_.empty() && snaps_.back().step == s.step) {
    snap_bytes_ -= snaps_.back().bytes;
    snaps_.pop_back();
  }
  snap_bytes_ += s.bytes;
  snaps_.push_back(std::move(s));
  trim();
}

void Rewind::trim() {
  while (total_bytes() > budget_ && snaps_.size() > 1) {
    // The oldest snapshot whose neighbours are at most 2 K apart goes first.
    size_t drop = 0;
    for (size_t i = 1; i + 1 < snaps_.size(); ++i)
      if (snaps_[i + 1].step - snaps_[i - 1].step <= 2 * interval_) {
        drop = i;
        break;
      }
    if (drop == 0) {
      if (snaps_.size() > 2 && interval_ < (int64_t{1} << 40)) {
        interval_ *= 2;  // every kept pair is wider: coarser spacing from now on
        continue;
      }
      drop = 1;  // only the start and one more (or K is absurd): the newer goes
    }
    snap_bytes_ -= snaps_[drop].bytes;
    snaps_.erase(snaps_.begin() + static_cast<std::ptrdiff_t>(drop));
  }
}

// [SECTION] Playback ----------------------------------------------------------------

int64_t Rewind::restore_for(Simulation& sim, int64_t step) {
  if (!active_ || snaps_.empty()) return sim.step_count();
  step = std::clamp(step, start_, head_);
  auto it = std::upper_bound(snaps_.begin(), snaps_.end(), step,
                             [](int64_t s, const Snap& x) { return s < x.step; });
  const Snap& snap = *(it == snaps_.begin() ? it : it - 1);
  const int64_t c = sim.step_count();
  if (c <= step && c >= snap.step) return c;  // stepping on is no longer than restoring
  restore_snapshot(sim, step);
  return sim.step_count();
}

void Rewind::restore_snapshot(Simulation& sim, int64_t step) {
  auto it = std::upper_bound(snaps_.begin(), snaps_.end(), step,
                             [](int64_t s, const Snap& x) { return s < x.step; });
  const Snap& snap = *(it == snaps_.begin() ? it : it - 1);
  sim.load_state(*snap.state);  // a snapshot is the state before its step's actions
  cursor_ = first_action_at(snap.step);
  controls_ = sim.controls();
  ++generation_;
}

int64_t Rewind::seek_applied(Simulation& sim, int64_t step, size_t applied) {
  if (!active_ || snaps_.empty()) return sim.step_count();
  step = std::clamp(step, start_, head_);
  if (sim.step_count() == step && cursor_ > applied)
    restore_snapshot(sim, step);  // holds edits it should not
  const int64_t reached = seek(sim, step);
  if (reached == step) apply_pending(sim, applied);  // this step's actions, up to the count
  return reached;
}

StepStatus Rewind::replay_call(Simulation& sim, int64_t target, int& steps) {
  steps = 0;
  const int64_t c = sim.step_count();
  target = std::min(target, head_);
  if (!active_ || c >= target)
    return StepStatus{};  // the state at a step is the one before its actions
  apply_pending(sim);
  // The recorded call that contains step c (calls are contiguous).
  auto it = std::upper_bound(calls_.begin(), calls_.end(), c,
                             [](int64_t s, const Call& x) { return s < x.start; });
  int64_t n = target - c;
  if (it != calls_.begin()) {
    const Call& call = *(it - 1);
    if (call.start + call.n > c) n = std::min(n, call.start + call.n - c);
  }
  StepStatus st = sim.step(static_cast<int>(std::min<int64_t>(n, 1 << 30)));
  steps = static_cast<int>(sim.step_count() - c);
  controls_ = sim.controls();
  return st;
}

int64_t Rewind::seek(Simulation& sim, int64_t step) {
  if (!active_) return sim.step_count();
  step = std::clamp(step, start_, head_);
  restore_for(sim, step);
  for (;;) {
    int done = 0;
    StepStatus st = replay_call(sim, step, done);
    if (!st.ok || done == 0) break;
  }
  return sim.step_count();
}

int64_t Rewind::prev_boundary(int64_t step) const {
  // Calls are contiguous: their ends rise with their index.
  auto it = std::lower_bound(calls_.begin(), calls_.end(), step,
                             [](const Call& x, int64_t s) { return x.start + x.n < s; });
  while (it != calls_.begin()) {
    --it;
    if (it->frame_end) return it->start + it->n;
  }
  return start_;
}

int64_t Rewind::next_boundary(int64_t step) const {
  auto it = std::upper_bound(calls_.begin(), calls_.end(), step,
                             [](int64_t s, const Call& x) { return s < x.start + x.n; });
  for (; it != calls_.end(); ++it)
    if (it->frame_end) return it->start + it->n;
  return head_;
}

std::vector<int64_t> Rewind::snapshot_steps() const {
  std::vector<int64_t> out;
  out.reserve(snaps_.size());
  for (const Snap& s : snaps_) out.push_back(s.step);
  return out;
}

RewindStats Rewind::stats() const {
  RewindStats s;
  s.snapshots = snaps_.size();
  s.snapshot_bytes = snap_bytes_;
  s.log_bytes = log_bytes_;
  s.budget = budget_;
  s.interval = interval_;
  s.actions = actions_.size();
  s.branches = branches_;
  return s;
}

}  // namespace ps
