// Fake device backends for the self-check and fallback tests (no GPU needed):
// each keeps its own "device" copy of the state, stepped by the CPU reference,
// like the CUDA backends keep theirs; faults are injected on demand.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include "sim/core/backend_error.h"
#include "sim/dem/dem_cpu.h"
#include "sim/mpm/mpm_cpu.h"

namespace ps {
namespace fake {

/// Counters shared with the test (the world owns the backend).
struct Calls {
  int64_t substeps = 0;  ///< substeps done on the "device" in all
  int syncs = 0, uploads = 0;
  int totals = 0, device_saves = 0, device_loads = 0;
  int checkpoints = 0,
      restores = 0;  ///< background checkpoints begun, and written into the host arrays
};

/// A background checkpoint as the CUDA backends keep one (sim/cuda/
/// background_copy.cuh): a copy of the state at checkpoint_begin, "in
/// transfer" until the next query, which a lost device answers with an error.
template <class State>
struct FakeCheckpoint {
  State copy, previous;  // the last begun, and the one before (complete once the next begins)
  bool pending = false, arrived = false, has_previous = false;
  void begin(const State& s) {
    has_previous = pending || arrived;
    if (has_previous) previous = copy;
    copy = s;
    pending = true;
    arrived = false;
  }
  /// The copy to restore: the last (once arrived) or the one before, or null.
  const State* pick(bool prev) const {
    return prev ? (has_previous ? &previous : nullptr) : arrived ? &copy : nullptr;
  }
  bool query(bool dead) {
    if (pending) {
      if (dead) throw BackendError("fake CUDA error in checkpoint: device lost", false);
      pending = false;
      arrived = true;
    }
    return arrived;
  }
};

struct MpmFaults {
  /// Relative noise on v after every substep (a model of reordered float
  /// sums in the grid); deterministic (hash of index and step).
  float noise = 0.f;
  /// Extra downward acceleration (m/s^2) on particles of this material type
  /// under this transfer (< 0 / any: all): a physics bug.
  float gravity_error = 0.f;
  /// Young's / bulk modulus scale the "device" uses (1: right): a stress bug.
  float stiffness_scale = 1.f;
  int bug_material = -1;  ///< MaterialType as int, -1: all
  int bug_transfer = -1;  ///< Transfer as int, -1: all
  /// Throw a BackendError once this many substeps were done (-1: never).
  int64_t fail_after = -1;
  bool fail_state_intact = false;  ///< the thrown error says the state is intact
  bool fail_sync = false;          ///< sync_to_host throws (the device is gone)
  int fail_upload_after = -1;      ///< host_changed throws after this many uploads (-1: never)
  bool dead_after_failure = true;  ///< after the first failure every call throws
  bool background_checkpoints =
      false;  ///< checkpoint_begin copies in the "background" (else the world syncs)
  /// Device-side saves and totals as the CUDA backend has them, with background
  /// checkpoints (off: the world falls back to host copies and sums).
  bool device_state = false;
};

class DeviceMpm final : public MpmBackend {
 public:
  explicit DeviceMpm(MpmFaults f = {}, Calls* calls = nullptr)
      : f_(f), calls_(calls ? calls : &own_), inner_(1) {
    inner_.bind(&dev_);
  }
  std::string name() const override { return "fake-device"; }
  void bind(MpmParticles* host) override { host_ = host; }
  void host_changed() override {
    dead_check("upload");
    if (f_.fail_upload_after >= 0 && calls_->uploads >= f_.fail_upload_after) fail("upload", false);
    dev_ = *host_;
    inner_.host_changed();
    ++calls_->uploads;
  }
  void sync_to_host() override {
    dead_check("sync_to_host");
    if (f_.fail_sync) fail("sync_to_host", false);
    if (dev_.size() != host_->size()) return;
    host_->x = dev_.x;
    host_->v = dev_.v;
    host_->C = dev_.C;
    host_->F = dev_.F;
    host_->J = dev_.J;
    host_->Jp = dev_.Jp;
    ++calls_->syncs;
  }
  SubstepResult substep(const SubstepInput& in) override {
    dead_check("substep");
    if (f_.fail_after >= 0 && calls_->substeps >= f_.fail_after)
      fail("advance", f_.fail_state_intact);
    if (in.use_fext) dev_.fext = host_->fext;
    SubstepResult r;
    if (f_.stiffness_scale != 1.f) {
      std::vector<MaterialParams> m(in.materials, in.materials + in.material_count);
      for (MaterialParams& p : m) {
        p.E *= f_.stiffness_scale;
        p.bulk_modulus *= f_.stiffness_scale;
      }
      SubstepInput in2 = in;
      in2.materials = m.data();
      r = inner_.substep(in2);
    } else {
      r = inner_.substep(in);
    }
    perturb(in);
    ++calls_->substeps;
    return r;
  }
  /// Like the CUDA backend: the clock moves only when the whole call succeeds.
  SubstepResult advance(const SubstepInput& in, int count, const StepRule& rule,
                        StepClock& clock) override {
    StepClock c = clock;
    SubstepResult r = MpmBackend::advance(in, count, rule, c);
    clock = c;
    return r;
  }
  bool checkpoint_begin() override {
    if (!f_.background_checkpoints && !f_.device_state) return false;
    dead_check("checkpoint");
    ckpt_.begin(dev_);
    ++calls_->checkpoints;
    return true;
  }
  bool checkpoint_arrived() override {
    return (f_.background_checkpoints || f_.device_state) && ckpt_.query(dead_);
  }
  bool checkpoint_restore(bool previous) override {
    const MpmParticles* got = ckpt_.pick(previous);
    if (!got || got->size() != host_->size()) return false;
    const MpmParticles& c = *got;
    host_->x = c.x;
    host_->v = c.v;
    host_->C = c.C;
    host_->F = c.F;
    host_->J = c.J;
    host_->Jp = c.Jp;
    ++calls_->restores;
    return true;
  }
  BackendStats stats() const override { return BackendStats{}; }
  void read_grid(GridSpec& spec, std::vector<float>& mass,
                 std::vector<Vec2>& velocity) const override {
    inner_.read_grid(spec, mass, velocity);
  }

  // The CUDA backend's device-side state: the fake's "device" copy.
  struct Copy final : DeviceStateCopy {
    const DeviceMpm* owner = nullptr;
    MpmParticles p;  // stepped columns plus mass, vol0, material (what the device holds)
    size_t bytes() const override { return p.size() * 64; }
    size_t count() const override { return p.size(); }
    bool has_poly() const override { return !p.poly.empty(); }
  };
  static MpmParticles device_columns(const MpmParticles& d) {
    MpmParticles c;
    c.x = d.x;
    c.v = d.v;
    c.C = d.C;
    c.F = d.F;
    c.J = d.J;
    c.Jp = d.Jp;
    c.mass = d.mass;
    c.vol0 = d.vol0;
    c.material = d.material;
    c.poly = d.poly;
    return c;
  }
  bool device_totals(Vec2 centre, ParticleTotals& out) override {
    if (!f_.device_state) return false;
    dead_check("totals");
    double m = 0.0, px = 0.0, py = 0.0, L = 0.0, ke = 0.0;
    float vmax = 0.f;
    for (size_t i = 0; i < dev_.size(); ++i) {
      const double mi = dev_.mass[i], vx = dev_.v[i].x, vy = dev_.v[i].y;
      const double rx = static_cast<double>(dev_.x[i].x) - centre.x,
                   ry = static_cast<double>(dev_.x[i].y) - centre.y;
      m += mi;
      px += mi * vx;
      py += mi * vy;
      L += mi * (rx * vy - ry * vx);
      ke += 0.5 * mi * (vx * vx + vy * vy);
      vmax = std::max(vmax, std::sqrt(dev_.v[i].x * dev_.v[i].x + dev_.v[i].y * dev_.v[i].y));
    }
    out.mass = m;
    out.momentum[0] = px;
    out.momentum[1] = py;
    out.angular_momentum = L;
    out.kinetic_energy = ke;
    out.max_speed = vmax;
    ++calls_->totals;
    return true;
  }
  std::shared_ptr<const DeviceStateCopy> save_device_state() override {
    if (!f_.device_state) return nullptr;
    dead_check("save");
    auto c = std::make_shared<Copy>();
    c->owner = this;
    c->p = device_columns(dev_);
    ++calls_->device_saves;
    return c;
  }
  bool load_device_state(const DeviceStateCopy& copy) override {
    const auto* c = dynamic_cast<const Copy*>(&copy);
    if (!c || c->owner != this) return false;
    dead_check("load");
    const MpmParticles& s = c->p;
    dev_.resize(s.size());
    dev_.x = s.x;
    dev_.v = s.v;
    dev_.C = s.C;
    dev_.F = s.F;
    dev_.J = s.J;
    dev_.Jp = s.Jp;
    dev_.mass = s.mass;
    dev_.vol0 = s.vol0;
    dev_.material = s.material;
    dev_.poly = s.poly;
    inner_.host_changed();
    ++calls_->device_loads;
    return true;
  }

 private:
  [[noreturn]] void fail(const char* what, bool intact) {
    dead_ = f_.dead_after_failure;
    throw BackendError(
        std::string("fake CUDA error in ") + what + ": an illegal memory access was encountered",
        intact);
  }
  void dead_check(const char* what) {
    if (dead_)
      throw BackendError(std::string("fake CUDA error in ") + what + ": device lost", false);
  }
  static float hash_noise(uint64_t a, uint64_t b) {
    uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b + 0x632BE59BD9B4E019ull);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return static_cast<float>(static_cast<double>(h >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  void perturb(const SubstepInput& in) {
    const bool transfer_hit =
        f_.bug_transfer < 0 || static_cast<int>(in.solver.transfer) == f_.bug_transfer;
    for (size_t i = 0; i < dev_.size(); ++i) {
      if (f_.noise > 0.f) {
        const uint64_t k = static_cast<uint64_t>(calls_->substeps) * 2;
        dev_.v[i].x *= 1.f + f_.noise * hash_noise(i, k);
        dev_.v[i].y *= 1.f + f_.noise * hash_noise(i, k + 1);
      }
      if (f_.gravity_error != 0.f && transfer_hit &&
          (f_.bug_material < 0 ||
           static_cast<int>(in.materials[dev_.material[i]].type) == f_.bug_material))
        dev_.v[i].y -= f_.gravity_error * in.dt;
    }
  }

  MpmFaults f_;
  Calls own_;
  Calls* calls_;
  MpmParticles* host_ = nullptr;
  MpmParticles dev_;
  MpmCpuBackend inner_;
  FakeCheckpoint<MpmParticles> ckpt_;
  bool dead_ = false;
};

struct DemFaults {
  double noise = 0.0;          ///< relative noise on v after every step
  double gravity_error = 0.0;  ///< extra downward acceleration, m/s^2
  int64_t fail_after = -1;     ///< throw once this many steps were done
  bool fail_sync = false;
  bool dead_after_failure = true;
  bool background_checkpoints =
      false;  ///< checkpoint_begin copies in the "background" (else the world syncs)
};

class DeviceDem final : public dem::DemBackend {
 public:
  explicit DeviceDem(DemFaults f = {}, Calls* calls = nullptr)
      : f_(f), calls_(calls ? calls : &own_), inner_(1) {}
  std::string name() const override { return "fake-device"; }
  void bind(dem::DemParticles* p, dem::DemBonds* b) override {
    p_ = p;
    b_ = b;
    host_changed();
  }
  void host_changed() override {
    dead_check("upload");
    dp_ = *p_;
    db_ = *b_;
    inner_.bind(&dp_, &db_);
    ++calls_->uploads;
  }
  void sync_to_host() override {
    dead_check("sync_to_host");
    if (f_.fail_sync) fail("sync_to_host");
    if (dp_.size() != p_->size() || db_.size() != b_->size()) return;
    *p_ = dp_;
    *b_ = db_;
    ++calls_->syncs;
  }
  dem::DemStepResult step(const dem::DemStepInput& in) override {
    dead_check("step");
    if (f_.fail_after >= 0 && calls_->substeps >= f_.fail_after) fail("step");
    if (in.use_fext) dp_.fext = p_->fext;
    dem::DemStepResult r = inner_.step(in);
    for (size_t i = 0; i < dp_.size(); ++i) {
      if (f_.noise > 0.0) {
        const double s = std::sin(static_cast<double>(i) * 12.9898 +
                                  static_cast<double>(calls_->substeps) * 78.233);
        dp_.v[i].x *= 1.0 + f_.noise * s;
        dp_.v[i].y *= 1.0 - f_.noise * s;
      }
      if (f_.gravity_error != 0.0 && !dp_.fixed[i]) dp_.v[i].y -= f_.gravity_error * in.dt;
    }
    ++calls_->substeps;
    return r;
  }
  void read_contacts(std::vector<dem::DemContact>& pairs,
                     std::vector<dem::DemContact>& walls) const override {
    inner_.read_contacts(pairs, walls);
  }
  bool checkpoint_begin() override {
    if (!f_.background_checkpoints) return false;
    dead_check("checkpoint");
    ckpt_.begin(State{dp_, db_});
    ++calls_->checkpoints;
    return true;
  }
  bool checkpoint_arrived() override { return f_.background_checkpoints && ckpt_.query(dead_); }
  bool checkpoint_restore(bool previous) override {
    const State* got = ckpt_.pick(previous);
    if (!got || got->p.size() != p_->size() || got->b.size() != b_->size()) return false;
    // What a step changes (as the CUDA backend's checkpoint holds).
    const dem::DemParticles& p = got->p;
    const dem::DemBonds& b = got->b;
    p_->x = p.x;
    p_->v = p.v;
    p_->theta = p.theta;
    p_->omega = p.omega;
    b_->shear_disp = b.shear_disp;
    b_->bend_angle = b.bend_angle;
    b_->broken = b.broken;
    b_->mode = b.mode;
    b_->break_step = b.break_step;
    b_->sigma = b.sigma;
    b_->tau = b.tau;
    b_->force = b.force;
    ++calls_->restores;
    return true;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    dead_ = f_.dead_after_failure;
    throw BackendError(std::string("fake CUDA error in ") + what + ": unspecified launch failure",
                       false);
  }
  void dead_check(const char* what) {
    if (dead_)
      throw BackendError(std::string("fake CUDA error in ") + what + ": device lost", false);
  }

  DemFaults f_;
  Calls own_;
  Calls* calls_;
  dem::DemParticles* p_ = nullptr;
  dem::DemBonds* b_ = nullptr;
  dem::DemParticles dp_;
  dem::DemBonds db_;
  dem::DemCpuBackend inner_;
  struct State {
    dem::DemParticles p;
    dem::DemBonds b;
  };
  FakeCheckpoint<State> ckpt_;
  bool dead_ = false;
};

}  // namespace fake
}  // namespace ps
