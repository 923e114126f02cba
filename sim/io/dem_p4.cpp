#include "sim/io/dem_p4.h"

#include "sim/dem/dem_kernels.h"

namespace ps {
namespace dem {

P4ParticleFrame p4_from_dem(const DemParticles& p, double time) {
  P4ParticleFrame f;
  f.time = time;
  f.particles.resize(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    P4Particle& r = f.particles[i];
    const double rad = p.radius[i];
    r.id = p.id[i];
    r.group = p.group[i];
    r.volume = (4.0 / 3.0) * kPi * rad * rad * rad;
    r.mass = p.mass[i];
    r.px = p.x[i].x;
    r.py = p.x[i].y;
    r.vx = p.v[i].x;
    r.vy = p.v[i].y;
  }
  return f;
}

P4ContactFrame p4_from_contacts(const std::vector<ContactRecord>& contacts, double time) {
  P4ContactFrame f;
  f.time = time;
  f.contacts.resize(contacts.size());
  for (size_t k = 0; k < contacts.size(); ++k) {
    const ContactRecord& c = contacts[k];
    P4Contact& r = f.contacts[k];
    r.p1 = c.p1;
    r.p2 = c.p2;
    r.cx = c.c[0];
    r.cy = c.c[1];
    r.cz = c.c[2];
    r.fx = c.f[0];
    r.fy = c.f[1];
    r.fz = c.f[2];
    r.bonded = c.bonded ? 1 : 0;
  }
  return f;
}

}  // namespace dem
}  // namespace ps
