// Where a verification case's worlds run (case_backend.h): the one place a
// case's worlds get their backend, and the record of where they ran.
#include "sim/verify/case_backend.h"

#include <algorithm>
#include "sim/cuda/cuda_info.h"
#include "sim/dem/dem_cpu.h"
#include "sim/dem/dem_world.h"
#include "sim/io/json.h"
#include "sim/mpm/mpm_cpu.h"

namespace ps {
namespace verify {

namespace {

void add_once(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::unique_ptr<MpmBackend> make_mpm(const Options& opt) {
  return opt.factory.mpm ? opt.factory.mpm(opt.backend, opt.threads)
                         : make_backend(opt.backend, opt.threads);
}

std::unique_ptr<dem::DemBackend> make_dem(const Options& opt) {
  return opt.factory.dem ? opt.factory.dem(opt.backend, opt.threads)
                         : dem::make_dem_backend(opt.backend, opt.threads);
}

}  // namespace

// [SECTION] BackendRecord --------------------------------------------------------------

void BackendRecord::device(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  add_once(devices_, name);
}

void BackendRecord::host(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  add_once(host_, why);
}

void BackendRecord::fallback(const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  fallbacks_.push_back(message);
}

RanOn BackendRecord::ran_on(const std::string& requested) const {
  std::lock_guard<std::mutex> lock(mutex_);
  RanOn r;
  r.requested = requested;
  if (requested == "cpu") return r;  // the reference: everything ran there
  r.host = join(host_, "; ");
  if (devices_.empty())
    return r;  // nothing went on the device: counted on the CPU, with the reasons
  r.backend = requested;
  r.device = join(devices_, ", ");
  r.fallback = join(fallbacks_, "; ");
  return r;
}

// [SECTION] Putting worlds on the case's backend -------------------------------------

void use_backend(MpmWorld& w, const Options& opt) {
  w.fallback_threads = opt.threads;
  w.set_backend(make_mpm(opt));
  // What the world will step with decides what is recorded (a factory may
  // hand out a CPU backend whatever it was asked for).
  if (dynamic_cast<const MpmCpuBackend*>(&w.backend()) != nullptr) return;
  if (w.heat.enabled) {
    // A device backend runs a heat pass's transfers on the host (the state
    // comes back and goes out again); the linear solve can run on the device,
    // and does here for every pass, so that the case verifies the device's
    // solve and not only the host's (auto would keep small systems on the host).
    w.heat.device_solve = HeatDeviceSolve::On;
    on_host(
        opt,
        "the heat passes move the state to the host for their transfers (as on any device backend); "
        "their linear solves run on the device");
  }
  if (!opt.record) return;
  opt.record->device(w.backend_name());
  std::shared_ptr<BackendRecord> record = opt.record;
  w.on_fallback = [record](const BackendFallback& f) { record->fallback(f.message()); };
}

void use_backend(dem::DemWorld& w, const Options& opt) {
  w.fallback_threads = opt.threads;
  w.set_backend(make_dem(opt));
  if (dynamic_cast<const dem::DemCpuBackend*>(&w.backend()) != nullptr || !opt.record) return;
  opt.record->device(w.backend_name());
  std::shared_ptr<BackendRecord> record = opt.record;
  w.on_fallback = [record](const BackendFallback& f) { record->fallback(f.message()); };
}

void use_backend(Simulation& sim, const Options& opt) {
  if (MpmWorld* m = sim.mpm()) use_backend(*m, opt);
  if (dem::DemWorld* d = sim.dem()) use_backend(*d, opt);
}

MpmScene mpm_scene(const std::string& json, const std::string& name, const Options& opt) {
  MpmScene s = build_mpm_scene(Json::parse(json, name), name);
  use_backend(*s.world, opt);
  return s;
}

std::unique_ptr<Simulation> simulation(const std::string& json, const std::string& name,
                                       const Options& opt) {
  // Built on the CPU, then every world moves to the case's backend before its
  // first step (the state goes over through the host arrays), so a factory
  // the tests inject reaches the worlds of a composed scene too.
  const Json doc = Json::parse(json, name);
  std::unique_ptr<Simulation> sim =
      build_simulation(doc, name, scene_kind(doc), "cpu", opt.threads);
  use_backend(*sim, opt);
  return sim;
}

std::unique_ptr<MpmBackend> device_backend(const Options& opt) {
  if (opt.backend == "cpu") return nullptr;
  std::unique_ptr<MpmBackend> b = make_mpm(opt);
  if (opt.record && dynamic_cast<const MpmCpuBackend*>(b.get()) == nullptr)
    opt.record->device(b->name());
  return b;
}

std::string backend_unavailable(const std::string& backend) {
  if (backend != "cuda") return "";
  if (!cuda_compiled())
    return "this build has no CUDA support (nvcc was not found at configure time)";
  std::string why;
  if (cuda_devices(&why).empty())
    return "no CUDA device is present" + (why.empty() ? std::string() : " (" + why + ")");
  return "";
}

void on_host(const Options& opt, const std::string& why) {
  if (opt.record) opt.record->host(why);
}

}  // namespace verify
}  // namespace ps
