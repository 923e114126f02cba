// A moving-wall scene shared by the DEM wall tests and the CUDA-vs-CPU test:
// a loose cluster of grains (no gravity) hit by a turning box wall that
// moves at constant velocity (advance_walls), with reactions requested.
#pragma once
#include <cmath>
#include <cstdint>
#include "sim/dem/dem_build.h"
#include "sim/dem/dem_world.h"

namespace ps {
namespace dem {
namespace test {

/// nx x ny grains of radius ~R on a square grid 2.1 R apart (not touching),
/// small random velocities and spins, two materials with friction and
/// rolling friction; the box wall (half 3 R x 1.2 ny R, turned 2 degrees)
/// starts just right of the last column (grains of every index range),
/// moving left at `speed` and turning at `omega`. The time step is the world's recommended one at `speed`.
inline void make_moving_wall_scene(DemWorld& w, int nx, int ny, double speed = 0.5,
                                   double omega = 2.0) {
  const double R = 0.005;
  w.solver.gravity = {0.0, 0.0};
  w.solver.expected_speed = 2.0 * speed;
  DemMaterial a, b, steel;
  a.E = 1e7;
  a.restitution = 0.6;
  a.friction = 0.5;
  a.rolling_friction = 0.05;
  a.density = 2000.0;
  b.E = 3e7;
  b.restitution = 0.8;
  b.friction = 0.3;
  b.rolling_friction = 0.02;
  b.density = 3000.0;
  steel.E = 2e8;
  steel.restitution = 0.7;
  steel.friction = 0.4;
  steel.rolling_friction = 0.03;
  steel.density = 7800.0;
  const int ma = w.add_material("a", a), mb = w.add_material("b", b),
            ms = w.add_material("steel", steel);
  uint64_t s = 987654321;
  auto rnd = [&s] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) / 9007199254740992.0 - 0.5;
  };
  for (int yy = 0; yy < ny; ++yy)
    for (int xx = 0; xx < nx; ++xx) {
      const double r = R * (0.9 + 0.2 * (rnd() + 0.5));
      const size_t i = add_particle(w, {xx * 2.1 * R, yy * 2.1 * R}, r, (xx + yy) % 3 ? ma : mb, 0,
                                    {0.05 * rnd(), 0.05 * rnd()});
      w.particles.omega[i] = 20.0 * rnd();
    }
  const double cy = 0.5 * (ny - 1) * 2.1 * R, right = (nx - 1) * 2.1 * R + R;
  const double hx = 3.0 * R, hy = 1.2 * ny * R, th = 2.0 * 3.14159265358979323846 / 180.0;
  // Leftmost corner of the turned box 0.2 R right of the last column.
  const double reach = hx * std::cos(th) + hy * std::sin(th);
  DemWall box = make_box_wall({right + 0.2 * R + reach, cy}, {hx, hy}, th, ms);
  box.vel = {-speed, 0.0};
  box.omega = omega;
  w.walls.push_back(box);
  w.want_wall_reaction = true;
  w.advance_walls = true;
  w.host_changed();
  w.solver.dt = w.estimate_time_step().recommended;
}

}  // namespace test
}  // namespace dem
}  // namespace ps
