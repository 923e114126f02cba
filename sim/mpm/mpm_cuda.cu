// CUDA MPM backend: the same per-particle / per-node math as the CPU reference
// (sim/mpm/mpm_kernels.h), one thread per particle or node. State stays on the
// device between substeps; host copies happen on host_changed() (uploads after
// edits), sync_to_host() (dumps, picking, statistics) and read_grid().
//
// P2G scatters with float atomics (fast, not bit-deterministic); the CPU
// backend is the reference it is tested against.
#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cuda/cuda_info.h"
#include "sim/mpm/mpm_backend.h"
#include "sim/mpm/mpm_kernels.h"

namespace ps {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

struct DevParticles {
  Vec2* x = nullptr;
  Vec2* v = nullptr;
  Mat2* C = nullptr;
  Mat2* F = nullptr;
  float* J = nullptr;
  float* Jp = nullptr;
  float* mass = nullptr;
  float* vol0 = nullptr;
  uint8_t* material = nullptr;
  Vec2* fext = nullptr;
};

struct DevStatus {
  unsigned long long bad;  // lowest blown-up particle index, or ~0
  unsigned int vmax2_bits;  // max |v|^2 as the bits of a non-negative float
};

__global__ void grab_kernel(DevParticles p, int n, const uint32_t* idx, const Vec2* off, int count, Vec2 target,
                            float ks, float dt) {
  int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= count) return;
  uint32_t i = idx[q];
  if (i >= static_cast<uint32_t>(n)) return;
  const float kd = 2.f * sqrtf(ks);
  Vec2 d = target + off[q] - p.x[i];
  p.v[i] += dt * (ks * d - kd * p.v[i]);
}

template <Kernel K>
__global__ void p2g_kernel(DevParticles p, int n, const MaterialParams* mats, GridSpec g, float dt, bool apic,
                           bool use_fext, float* gm, Vec2* gv) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr int N = mpm::kernel_support(K);
  const MaterialParams& mat = mats[p.material[i]];
  Mat2 F = p.F[i];
  float Jp = p.Jp[i];
  const Mat2 C = p.C[i];
  const Mat2 tau = mpm::constitutive(mat, F, p.J[i], Jp, C);
  p.F[i] = F;
  p.Jp[i] = Jp;
  const float mp = p.mass[i];
  const Vec2 mv = mp * p.v[i] + (use_fext ? dt * p.fext[i] : Vec2{});
  const Mat2 stress = (-dt * p.vol0[i]) * tau;
  const Mat2 affine = apic ? mp * C : Mat2{};
  const float inv_dx = 1.f / g.dx;
  const mpm::Stencil s = mpm::make_stencil(K, g, p.x[i]);
  const int stride = g.nodes_x();
  Mat2 Q{};
  if (K != Kernel::Linear) Q = (mpm::dinv_factor(K) * inv_dx * inv_dx) * stress + affine;
#pragma unroll
  for (int c = 0; c < N; ++c)
#pragma unroll
    for (int a = 0; a < N; ++a) {
      const float w = s.wx[a] * s.wy[c];
      const Vec2 dpos{(a - s.fx) * g.dx, (c - s.fy) * g.dx};
      Vec2 dmv;
      if (K == Kernel::Linear) dmv = w * mv + w * (affine * dpos) + stress * mpm::grad_vector(K, s, a, c, inv_dx);
      else dmv = w * (mv + Q * dpos);
      const int node = (s.base_y + c) * stride + s.base_x + a;
      atomicAdd(&gm[node], w * mp);
      atomicAdd(&gv[node].x, dmv.x);
      atomicAdd(&gv[node].y, dmv.y);
    }
}

__global__ void grid_kernel(mpm::GridUpdateParams gp, float* gm, Vec2* gv, Vec2* gv_old, bool keep_old) {
  const int sx = gp.grid.nodes_x(), sy = gp.grid.nodes_y();
  int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= sx * sy) return;
  Vec2 old;
  mpm::grid_update_node(node % sx, node / sx, gm[node], gv[node], old, gp);
  if (keep_old) gv_old[node] = old;
}

template <Kernel K, bool FLIP>
__global__ void g2p_kernel(DevParticles p, int n, const MaterialParams* mats, GridSpec g, float dt, float alpha,
                           float vlim2, const Vec2* gv, const Vec2* gv_old, DevStatus* status) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr int N = mpm::kernel_support(K);
  const float inv_dx = 1.f / g.dx;
  const int stride = g.nodes_x();
  const Vec2 xp = p.x[i];
  const mpm::Stencil s = mpm::make_stencil(K, g, xp);
  Vec2 v_pic{}, dv{};
  Mat2 B{};
#pragma unroll
  for (int c = 0; c < N; ++c)
#pragma unroll
    for (int a = 0; a < N; ++a) {
      const float w = s.wx[a] * s.wy[c];
      const int node = (s.base_y + c) * stride + s.base_x + a;
      const Vec2 vi = gv[node];
      v_pic += w * vi;
      if (FLIP) dv += w * (vi - gv_old[node]);
      if (K == Kernel::Linear) B += outer(vi, mpm::grad_vector(K, s, a, c, inv_dx));
      else B += outer(w * vi, Vec2{a - s.fx, c - s.fy});
    }
  if (K != Kernel::Linear) B = (mpm::dinv_factor(K) * inv_dx) * B;
  const Vec2 v = FLIP ? mpm::transfer_velocity(Transfer::FLIP, alpha, p.v[i], v_pic, dv) : v_pic;
  p.v[i] = v;
  p.C[i] = B;
  const Mat2 F = (Mat2::identity() + dt * B) * p.F[i];
  p.F[i] = F;
  float J = p.J[i];
  if (mats[p.material[i]].type == MaterialType::Fluid) {
    J *= 1.f + dt * trace(B);
    p.J[i] = J;
  }
  p.x[i] = mpm::clamp_to_grid(g, xp + dt * v);
  const float s2 = length2(v);
  if (!(s2 <= vlim2) || !isfinite(J) || !isfinite(F.a00 + F.a01 + F.a10 + F.a11)) {
    atomicMin(&status->bad, static_cast<unsigned long long>(i));
  } else {
    atomicMax(&status->vmax2_bits, __float_as_uint(s2));
  }
}

template <class T>
void dev_alloc(T*& ptr, size_t count) {
  if (ptr) cudaFree(ptr);
  ptr = nullptr;
  if (count) check(cudaMalloc(reinterpret_cast<void**>(&ptr), count * sizeof(T)), "cudaMalloc");
}

template <class T>
void upload(T* dst, const std::vector<T>& src) {
  if (!src.empty()) check(cudaMemcpy(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
}

template <class T>
void download(std::vector<T>& dst, const T* src) {
  if (!dst.empty()) check(cudaMemcpy(dst.data(), src, dst.size() * sizeof(T), cudaMemcpyDeviceToHost), "download");
}

}  // namespace

class MpmCudaBackend final : public MpmBackend {
 public:
  MpmCudaBackend() {
    auto devs = cuda_devices();
    device_name_ = devs.empty() ? std::string("?") : devs[0].name;
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaMalloc(reinterpret_cast<void**>(&status_), sizeof(DevStatus)), "cudaMalloc");
  }
  ~MpmCudaBackend() override {
    free_particles();
    cudaFree(gm_); cudaFree(gv_); cudaFree(gv_old_);
    cudaFree(mats_); cudaFree(grab_idx_); cudaFree(grab_off_); cudaFree(status_);
  }

  std::string name() const override { return "cuda (" + device_name_ + ")"; }
  void bind(MpmParticles* host) override { host_ = host; }

  void host_changed() override {
    const size_t n = host_->size();
    if (n > capacity_) {
      free_particles();
      capacity_ = n + n / 4;
      dev_alloc(d_.x, capacity_); dev_alloc(d_.v, capacity_); dev_alloc(d_.C, capacity_); dev_alloc(d_.F, capacity_);
      dev_alloc(d_.J, capacity_); dev_alloc(d_.Jp, capacity_); dev_alloc(d_.mass, capacity_);
      dev_alloc(d_.vol0, capacity_); dev_alloc(d_.material, capacity_); dev_alloc(d_.fext, capacity_);
    }
    n_ = n;
    upload(d_.x, host_->x); upload(d_.v, host_->v); upload(d_.C, host_->C); upload(d_.F, host_->F);
    upload(d_.J, host_->J); upload(d_.Jp, host_->Jp); upload(d_.mass, host_->mass); upload(d_.vol0, host_->vol0);
    upload(d_.material, host_->material); upload(d_.fext, host_->fext);
  }

  void sync_to_host() override {
    if (n_ != host_->size()) return;
    check(cudaDeviceSynchronize(), "sync");
    download(host_->x, d_.x); download(host_->v, d_.v); download(host_->C, d_.C); download(host_->F, d_.F);
    download(host_->J, d_.J); download(host_->Jp, d_.Jp);
  }

  SubstepResult substep(const SubstepInput& in) override {
    const int n = static_cast<int>(n_);
    const size_t nodes = static_cast<size_t>(in.grid.nodes_x()) * in.grid.nodes_y();
    if (nodes != nodes_) {
      dev_alloc(gm_, nodes); dev_alloc(gv_, nodes); dev_alloc(gv_old_, nodes);
      nodes_ = nodes;
    }
    last_grid_ = in.grid;
    // Material table: uploaded only when it changed (a few hundred bytes).
    const size_t mat_bytes = sizeof(MaterialParams) * static_cast<size_t>(in.material_count);
    if (mat_cache_.size() != mat_bytes || std::memcmp(mat_cache_.data(), in.materials, mat_bytes) != 0) {
      if (mat_cache_.size() != mat_bytes) dev_alloc(mats_, static_cast<size_t>(in.material_count));
      mat_cache_.assign(reinterpret_cast<const char*>(in.materials), reinterpret_cast<const char*>(in.materials) + mat_bytes);
      check(cudaMemcpy(mats_, in.materials, mat_bytes, cudaMemcpyHostToDevice), "materials");
    }
    if (in.use_fext && n > 0)
      check(cudaMemcpy(d_.fext, host_->fext.data(), n_ * sizeof(Vec2), cudaMemcpyHostToDevice), "fext");
    if (in.grab.count > 0) {
      const bool same = grab_cache_idx_.size() == static_cast<size_t>(in.grab.count) &&
                        std::memcmp(grab_cache_idx_.data(), in.grab.index, in.grab.count * sizeof(uint32_t)) == 0;
      if (!same) {
        grab_cache_idx_.assign(in.grab.index, in.grab.index + in.grab.count);
        dev_alloc(grab_idx_, grab_cache_idx_.size());
        dev_alloc(grab_off_, grab_cache_idx_.size());
        check(cudaMemcpy(grab_idx_, in.grab.index, in.grab.count * sizeof(uint32_t), cudaMemcpyHostToDevice), "grab");
        check(cudaMemcpy(grab_off_, in.grab.offset, in.grab.count * sizeof(Vec2), cudaMemcpyHostToDevice), "grab");
      }
      grab_kernel<<<(in.grab.count + 255) / 256, 256>>>(d_, n, grab_idx_, grab_off_, in.grab.count, in.grab.target,
                                                        in.grab.stiffness, in.dt);
    } else {
      grab_cache_idx_.clear();
    }
    check(cudaMemsetAsync(gm_, 0, nodes * sizeof(float)), "clear");
    check(cudaMemsetAsync(gv_, 0, nodes * sizeof(Vec2)), "clear");
    DevStatus init{~0ull, 0u};
    check(cudaMemcpyAsync(status_, &init, sizeof init, cudaMemcpyHostToDevice), "status");
    const int pb = (n + 255) / 256;
    const bool apic = in.solver.transfer == Transfer::APIC;
    const bool flip = in.solver.transfer == Transfer::FLIP;
    if (n > 0) {
      switch (in.solver.kernel) {
        case Kernel::Linear: p2g_kernel<Kernel::Linear><<<pb, 256>>>(d_, n, mats_, in.grid, in.dt, apic, in.use_fext, gm_, gv_); break;
        case Kernel::Cubic: p2g_kernel<Kernel::Cubic><<<pb, 256>>>(d_, n, mats_, in.grid, in.dt, apic, in.use_fext, gm_, gv_); break;
        default: p2g_kernel<Kernel::Quadratic><<<pb, 256>>>(d_, n, mats_, in.grid, in.dt, apic, in.use_fext, gm_, gv_); break;
      }
    }
    mpm::GridUpdateParams gp{in.grid, in.solver.gravity, in.dt, in.solver.boundary, in.solver.boundary_nodes, in.point};
    grid_kernel<<<static_cast<int>((nodes + 255) / 256), 256>>>(gp, gm_, gv_, gv_old_, flip);
    const float vlim2 = in.solver.velocity_limit * in.solver.velocity_limit;
    const float alpha = in.solver.flip_blend;
    if (n > 0) {
#define PS_G2P(KK, FF) g2p_kernel<KK, FF><<<pb, 256>>>(d_, n, mats_, in.grid, in.dt, alpha, vlim2, gv_, gv_old_, status_)
      switch (in.solver.kernel) {
        case Kernel::Linear: if (flip) PS_G2P(Kernel::Linear, true); else PS_G2P(Kernel::Linear, false); break;
        case Kernel::Cubic: if (flip) PS_G2P(Kernel::Cubic, true); else PS_G2P(Kernel::Cubic, false); break;
        default: if (flip) PS_G2P(Kernel::Quadratic, true); else PS_G2P(Kernel::Quadratic, false); break;
      }
#undef PS_G2P
    }
    DevStatus st;
    check(cudaMemcpy(&st, status_, sizeof st, cudaMemcpyDeviceToHost), "status");
    SubstepResult r;
    if (st.bad != ~0ull) {
      r.ok = false;
      r.bad_index = static_cast<int64_t>(st.bad);
    }
    float vmax2;
    std::memcpy(&vmax2, &st.vmax2_bits, sizeof vmax2);
    r.max_speed = sqrtf(vmax2);
    return r;
  }

  void read_grid(GridSpec& spec, std::vector<float>& mass, std::vector<Vec2>& velocity) const override {
    spec = last_grid_;
    mass.resize(nodes_);
    velocity.resize(nodes_);
    download(mass, gm_);
    download(velocity, gv_);
  }

 private:
  void free_particles() {
    cudaFree(d_.x); cudaFree(d_.v); cudaFree(d_.C); cudaFree(d_.F); cudaFree(d_.J); cudaFree(d_.Jp);
    cudaFree(d_.mass); cudaFree(d_.vol0); cudaFree(d_.material); cudaFree(d_.fext);
    d_ = DevParticles{};
    capacity_ = 0;
  }

  MpmParticles* host_ = nullptr;
  std::string device_name_;
  DevParticles d_;
  size_t n_ = 0, capacity_ = 0, nodes_ = 0;
  float* gm_ = nullptr;
  Vec2* gv_ = nullptr;
  Vec2* gv_old_ = nullptr;
  MaterialParams* mats_ = nullptr;
  std::vector<char> mat_cache_;
  uint32_t* grab_idx_ = nullptr;
  Vec2* grab_off_ = nullptr;
  std::vector<uint32_t> grab_cache_idx_;
  DevStatus* status_ = nullptr;
  GridSpec last_grid_;
};

std::unique_ptr<MpmBackend> make_cuda_backend() { return std::make_unique<MpmCudaBackend>(); }

}  // namespace ps
