/// Where a verification case's worlds run. Every MPM world, DEM world,
/// Simulation and device solver a case builds goes through these functions,
/// so Options::backend reaches all of them, and the case's BackendRecord says
/// what actually ran where: which device took a world, what stayed on the
/// host and why, which device world fell back to the CPU mid-case. run_case
/// (verify.h) turns the record into CaseResult::ran_on.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include "sim/scene/scene.h"
#include "sim/scene/simulation.h"
#include "sim/verify/verify.h"

namespace ps {

namespace dem {
class DemWorld;
}

namespace verify {

/// What one case ran on, filled while it builds and steps its worlds.
/// Thread-safe: a case may build worlds on several threads (angle_of_repose).
class BackendRecord {
 public:
  /// A world or solver went on a device backend called `name`.
  void device(const std::string& name);
  /// A part of the case runs on the host although a device was requested: why.
  void host(const std::string& why);
  /// A device world fell back to the CPU mid-case (BackendFallback::message()).
  void fallback(const std::string& message);
  /// What the record says, for a run that asked for `requested`.
  RanOn ran_on(const std::string& requested) const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> devices_, host_, fallbacks_;  ///< each distinct text once
};

/// Gives `w` a backend of opt.backend (made by opt.factory), with opt.threads
/// for the CPU backend it would fall back to, and records it. On a device its
/// heat passes solve their linear systems there too (heat.device_solve on):
/// the transfers of a heat pass run on the host for any device backend.
void use_backend(MpmWorld& w, const Options& opt);
void use_backend(dem::DemWorld& w, const Options& opt);
/// Every world of a simulation: its MPM matter, its DEM grains or DEM matter
/// (Box2D bodies always step on the host; the device steppers take their
/// parts as moving boundaries).
void use_backend(Simulation& sim, const Options& opt);

/// An MPM scene document (JSON text) built and put on opt.backend.
MpmScene mpm_scene(const std::string& json, const std::string& name, const Options& opt);
/// Any scene document (JSON text: MPM, DEM, rigid bodies, grains beside
/// matter) built into a Simulation and put on opt.backend.
std::unique_ptr<Simulation> simulation(const std::string& json, const std::string& name,
                                       const Options& opt);

/// A backend of opt.backend for work without a world (the heat solver's
/// linear solves on the device), recorded; null when opt.backend is the CPU.
std::unique_ptr<MpmBackend> device_backend(const Options& opt);

/// Records that part of the case runs on the host whatever opt.backend says,
/// and why (the report shows it when a device was requested).
void on_host(const Options& opt, const std::string& why);

}  // namespace verify
}  // namespace ps
