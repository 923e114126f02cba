/// Small 2D vector / matrix types for the simulation kernels.
/// Plain structs, float precision, usable on host and device. Matrices are
/// row-major: m[r][c] is stored as a(r,c); `Mat2{a,b,c,d}` = [[a,b],[c,d]].
#pragma once
#include <cmath>
#include "sim/core/hd.h"

namespace ps {

struct Vec2 {
  float x = 0.f, y = 0.f;
  PS_HD float& operator[](int i) { return i == 0 ? x : y; }
  PS_HD float operator[](int i) const { return i == 0 ? x : y; }
};

PS_HD Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }
PS_HD Vec2 operator-(Vec2 a, Vec2 b) { return {a.x - b.x, a.y - b.y}; }
PS_HD Vec2 operator-(Vec2 a) { return {-a.x, -a.y}; }
PS_HD Vec2 operator*(float s, Vec2 a) { return {s * a.x, s * a.y}; }
PS_HD Vec2 operator*(Vec2 a, float s) { return {s * a.x, s * a.y}; }
PS_HD Vec2 operator/(Vec2 a, float s) { return {a.x / s, a.y / s}; }
PS_HD Vec2& operator+=(Vec2& a, Vec2 b) {
  a.x += b.x;
  a.y += b.y;
  return a;
}
PS_HD Vec2& operator-=(Vec2& a, Vec2 b) {
  a.x -= b.x;
  a.y -= b.y;
  return a;
}
PS_HD Vec2& operator*=(Vec2& a, float s) {
  a.x *= s;
  a.y *= s;
  return a;
}
PS_HD bool operator==(Vec2 a, Vec2 b) { return a.x == b.x && a.y == b.y; }
PS_HD float dot(Vec2 a, Vec2 b) { return a.x * b.x + a.y * b.y; }
/// z-component of the 3D cross product (a, 0) x (b, 0).
PS_HD float cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }
PS_HD float length2(Vec2 a) { return dot(a, a); }
PS_HD float length(Vec2 a) { return sqrtf(dot(a, a)); }
PS_HD Vec2 perp(Vec2 a) { return {-a.y, a.x}; }  // rotate +90 degrees

struct Mat2 {
  float a00 = 0.f, a01 = 0.f, a10 = 0.f, a11 = 0.f;
  PS_HD static Mat2 identity() { return {1.f, 0.f, 0.f, 1.f}; }
  PS_HD static Mat2 diag(float d0, float d1) { return {d0, 0.f, 0.f, d1}; }
  PS_HD float operator()(int r, int c) const {
    return r == 0 ? (c == 0 ? a00 : a01) : (c == 0 ? a10 : a11);
  }
};

PS_HD Mat2 operator+(const Mat2& a, const Mat2& b) {
  return {a.a00 + b.a00, a.a01 + b.a01, a.a10 + b.a10, a.a11 + b.a11};
}
PS_HD Mat2 operator-(const Mat2& a, const Mat2& b) {
  return {a.a00 - b.a00, a.a01 - b.a01, a.a10 - b.a10, a.a11 - b.a11};
}
PS_HD Mat2 operator*(float s, const Mat2& a) {
  return {s * a.a00, s * a.a01, s * a.a10, s * a.a11};
}
PS_HD Mat2 operator*(const Mat2& a, const Mat2& b) {
  return {a.a00 * b.a00 + a.a01 * b.a10, a.a00 * b.a01 + a.a01 * b.a11,
          a.a10 * b.a00 + a.a11 * b.a10, a.a10 * b.a01 + a.a11 * b.a11};
}
PS_HD Vec2 operator*(const Mat2& a, Vec2 v) {
  return {a.a00 * v.x + a.a01 * v.y, a.a10 * v.x + a.a11 * v.y};
}
PS_HD Mat2& operator+=(Mat2& a, const Mat2& b) {
  a = a + b;
  return a;
}
PS_HD bool operator==(const Mat2& a, const Mat2& b) {
  return a.a00 == b.a00 && a.a01 == b.a01 && a.a10 == b.a10 && a.a11 == b.a11;
}
PS_HD Mat2 transpose(const Mat2& a) { return {a.a00, a.a10, a.a01, a.a11}; }
PS_HD float det(const Mat2& a) { return a.a00 * a.a11 - a.a01 * a.a10; }
PS_HD float trace(const Mat2& a) { return a.a00 + a.a11; }
PS_HD Mat2 outer(Vec2 a, Vec2 b) { return {a.x * b.x, a.x * b.y, a.y * b.x, a.y * b.y}; }
PS_HD float frobenius2(const Mat2& a) {
  return a.a00 * a.a00 + a.a01 * a.a01 + a.a10 * a.a10 + a.a11 * a.a11;
}
PS_HD Mat2 inverse(const Mat2& a) {
  float id = 1.f / det(a);
  return {a.a11 * id, -a.a01 * id, -a.a10 * id, a.a00 * id};
}
PS_HD Mat2 rotation(float c, float s) { return {c, -s, s, c}; }

/// polar2 and svd2 have four-lane twins in sim/mpm/mpm_simd.h (polar4, svd4),
/// compared bit for bit by tests/sim/mpm/test_simd.cpp: change both.
/// Polar decomposition F = R S with R a rotation (det +1), S symmetric.
/// Closed form in 2D (Shoemake & Duff; as in Taichi's polar_decompose2d).
PS_HD void polar2(const Mat2& F, Mat2& R, Mat2& S) {
  float x = F.a00 + F.a11, y = F.a10 - F.a01;
  float scale = 1.f / sqrtf(x * x + y * y);
  if (!(scale < 1e30f)) {
    R = Mat2::identity();
    S = F;
    return;
  }  // F = 0 or degenerate
  float c = x * scale, s = y * scale;
  R = rotation(c, s);
  S = transpose(R) * F;
}

/// min/max clamp that compiles to minss/maxss (fminf/fmaxf are libm calls
/// with NaN rules on the x86-64 baseline).
PS_HD float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

/// SVD F = U diag(sig) V^T with det U = det V = +1 (sig[1] may be negative
/// when det F < 0). Polar decomposition followed by a Jacobi rotation of the
/// symmetric factor, the standard 2D construction (Taichi's svd2d).
PS_HD void svd2(const Mat2& F, Mat2& U, Vec2& sig, Mat2& V) {
  Mat2 R, S;
  polar2(F, R, S);
  float c, s;
  if (fabsf(S.a01) < 1e-12f) {
    c = 1.f;
    s = 0.f;
    sig = {S.a00, S.a11};
  } else {
    float tao = 0.5f * (S.a00 - S.a11);
    float w = sqrtf(tao * tao + S.a01 * S.a01);
    float t = tao > 0.f ? S.a01 / (tao + w) : S.a01 / (tao - w);
    c = 1.f / sqrtf(t * t + 1.f);
    s = -t * c;
    sig.x = c * c * S.a00 - 2.f * c * s * S.a01 + s * s * S.a11;
    sig.y = s * s * S.a00 + 2.f * c * s * S.a01 + c * c * S.a11;
  }
  if (sig.x < sig.y) {
    float tmp = sig.x;
    sig.x = sig.y;
    sig.y = tmp;
    V = {-s, c, -c, -s};
  } else {
    V = {c, s, -s, c};
  }
  U = R * V;
}

}  // namespace ps
