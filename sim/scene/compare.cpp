#include "sim/scene/compare.h"

#include "sim/core/error.h"
#include "sim/dem/dem_world.h"

namespace ps {

std::vector<std::string> parse_vary(const std::string& vary) {
  const size_t eq = vary.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError({"--vary", 0, 0}, vary, "expected path=value1,value2,... (e.g. solver.transfer=pic,apic,flip)");
  const std::string path = vary.substr(0, eq);
  std::vector<std::string> out;
  size_t b = eq + 1;
  for (;;) {
    const size_t e = vary.find(',', b);
    const std::string v = vary.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (v.empty()) throw InputError({"--vary", 0, 0}, path, "an empty value in '" + vary + "'");
    out.push_back(path + "=" + v);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

std::vector<std::vector<std::string>> vary_product(const std::vector<std::string>& items) {
  std::vector<std::vector<std::string>> out{{}};
  for (const std::string& item : items) {
    const std::vector<std::string> values = parse_vary(item);
    std::vector<std::vector<std::string>> next;
    for (const auto& prefix : out)
      for (const std::string& v : values) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    out.swap(next);
    if (out.size() > 4) break;
  }
  if (items.empty() || out.size() < 2 || out.size() > 4)
    throw InputError({"--vary", 0, 0}, "compare",
                     "the varied settings give " + std::to_string(items.empty() ? 0 : out.size()) +
                         " panes; a comparison has 2 to 4");
  return out;
}

std::vector<std::vector<std::string>> vary_product(const std::string& space_separated) {
  std::vector<std::string> items;
  size_t b = 0;
  while (b < space_separated.size()) {
    const size_t e = space_separated.find(' ', b);
    const std::string item = space_separated.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (!item.empty()) items.push_back(item);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return vary_product(items);
}

Comparison::Comparison(const std::string& scene, const std::vector<std::string>& base,
                       const std::vector<std::vector<std::string>>& variants, const std::string& backend, int threads) {
  if (variants.size() < 2 || variants.size() > 4)
    throw InputError({scene, 0, 0}, "compare",
                     "a comparison has 2 to 4 panes, got " + std::to_string(variants.size()));
  for (const auto& v : variants) {
    ComparePane p;
    p.overrides = base;
    for (const std::string& s : v) {
      p.overrides.push_back(s);
      p.label += (p.label.empty() ? "" : "  ") + s;
    }
    if (p.label.empty()) p.label = "as the scene file";
    p.sim = load_simulation(scene, p.overrides, backend, threads);  // InputError names the field
    panes_.push_back(std::move(p));
  }
}

StepStatus Comparison::step(int substeps) {
  for (ComparePane& p : panes_) {
    StepStatus st = p.sim->step(substeps);
    if (!st.ok) {
      st.message = p.label + ": " + st.message;
      return st;
    }
  }
  return StepStatus{};
}

void Comparison::apply_preset(Preset preset, float speed) {
  for (ComparePane& p : panes_)
    if (MpmWorld* w = p.sim->mpm()) w->apply_preset(preset, speed);
}

void Comparison::set_point_force(const PointForce& f) {
  for (ComparePane& p : panes_) {
    if (MpmWorld* w = p.sim->mpm()) w->point_force = f;
    if (dem::DemWorld* d = p.sim->dem()) d->point_force = f;
  }
}

void Comparison::grab_begin(const std::vector<uint32_t>& rows, Vec2 target, float stiffness) {
  for (ComparePane& p : panes_)
    if (MpmWorld* w = p.sim->mpm()) {
      w->grab_stiffness = stiffness;
      w->grab_begin(rows, target);
    }
}

void Comparison::grab_move(Vec2 target) {
  for (ComparePane& p : panes_)
    if (MpmWorld* w = p.sim->mpm()) w->grab_move(target);
}

void Comparison::grab_end() {
  for (ComparePane& p : panes_)
    if (MpmWorld* w = p.sim->mpm()) w->grab_end();
}

void Comparison::set_force_list(const SgfList& list) {
  for (ComparePane& p : panes_) p.sim->set_force_list(list);
}

}  // namespace ps
