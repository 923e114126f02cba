/// Specimens from images (seeds/000, section 2.1): silhouette -> mask ->
/// ordered contours -> equal particles on a regular grid whose centres are
/// inside -> per-particle colour from the pixel under it -> colour groups
/// (the "belt") as ID lists for SGF.
///
/// Frames. Images are stored top row first. Everything else works in y-up
/// pixel coordinates: the image covers [0, W] x [0, H], pixel (column c,
/// image row r) is the square [c, c+1] x [H-1-r, H-r] with centre
/// (c + 0.5, H - r - 0.5). World position = origin + metres_per_pixel * p.
///
/// Two inside tests are offered: the source document's nearest-contour
/// half-plane test, formula (3), implemented literally, and a winding-number
/// test. inside_test_disagreements() lists the grid points where they differ.
/// docs/sgf.md explains why they can differ (the document's sign conventions).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>
#include "sim/core/image.h"
#include "sim/core/vec.h"
#include "sim/sgf/sgf.h"

namespace ps {

struct MpmParticles;
struct P4ParticleFrame;

// [SECTION] Images -------------------------------------------------------------------

// Image, load_image and save_png: sim/core/image.h.

// [SECTION] Mask and contours ----------------------------------------------------------

enum class MaskRule : uint8_t {
  Dark,           ///< inside when luminance 0.299 R + 0.587 G + 0.114 B < threshold
  NotBackground,  ///< inside when some channel differs from `background` by more than `tolerance`
};

struct MaskParams {
  MaskRule rule = MaskRule::Dark;
  int threshold = 128;
  uint8_t background[3] = {255, 255, 255};
  int tolerance = 0;
  bool invert = false;  ///< swap inside and outside
};

/// Inside flags in y-up order: inside[j * width + i] for column i and y-up row j.
struct Mask {
  int width = 0, height = 0;
  std::vector<uint8_t> inside;
  bool at(int i, int j) const {
    return i >= 0 && j >= 0 && i < width && j < height &&
           inside[static_cast<size_t>(j) * width + i] != 0;
  }
  size_t count() const;
};

Mask make_mask(const Image& image, const MaskParams& params = {});

/// A closed contour in y-up pixel coordinates (the last point connects to the
/// first). Material is on the right of the direction of travel: outer
/// boundaries run clockwise, holes counterclockwise.
struct Contour {
  std::vector<Vec2> points;
  bool hole = false;
};

/// Marching squares on the lattice of pixel centres (iso-level between inside
/// and outside): one point per inside/outside neighbour pair, at the midpoint
/// of the two centres, so straight pixel edges give collinear points 1 px
/// apart. Inside pixels touching only at a corner are joined (8-connected
/// inside, 4-connected outside, as OpenCV). The contour separates inside from
/// outside pixel centres exactly.
std::vector<Contour> trace_contours(const Mask& mask);
/// Shoelace area (positive for counterclockwise).
double signed_area(const Contour& c);

// [SECTION] Inside tests ------------------------------------------------------------------

enum class InsideTest : uint8_t {
  NearestContour,          ///< seeds/000 formula (3), literally
  Winding,                 ///< non-zero winding number over all contours
  NearestContourOriented,  ///< formula (3) with the "for all" branch at true convex
                           ///< vertices (right turns of a clockwise contour); see docs/sgf.md
};

/// Nearest-vertex search and winding numbers over a set of contours.
class ContourIndex {
 public:
  explicit ContourIndex(const std::vector<Contour>& contours, float cell = 4.f);

  struct Nearest {
    int contour = -1, index = -1;
    double d2 = 0.0;
  };
  /// The nearest contour point (ties: lowest contour, then lowest index).
  Nearest nearest(Vec2 p) const;

  /// seeds/000 formula (3): nearest contour point A_i, B1 = A_i - A_{i-1},
  /// B2 = A_{i+1} - A_i, R = [[0, 1], [-1, 0]], s_k = B_yk (x - x_i) - B_xk (y - y_i).
  /// If (R B1)^T B2 <= 0 ("convex"): inside when s_k >= 0 for all k;
  /// otherwise ("concave"): inside when s_k >= 0 for some k.
  /// `oriented`: take the "for all" branch where the contour really turns
  /// convex (material on the right: a right turn, (R B1)^T B2 > 0) instead.
  bool inside_nearest(Vec2 p, bool oriented = false) const;
  /// Winding number of the contours around p (ray to +x; 0 outside; -1 inside
  /// a clockwise outer boundary).
  int winding(Vec2 p) const;
  bool inside_winding(Vec2 p) const { return winding(p) != 0; }
  /// Winding flags for many points at once (scanline per distinct y).
  std::vector<uint8_t> inside_winding_many(const std::vector<Vec2>& pts) const;
  bool empty() const { return total_ == 0; }

 private:
  const std::vector<Contour>& c_;
  float cell_;
  Vec2 min_{};
  int nx_ = 0, ny_ = 0;
  size_t total_ = 0;
  std::vector<uint32_t> start_;             // bucket offsets
  std::vector<std::pair<int, int>> items_;  // (contour, index) per bucket slot
};

// [SECTION] Specimen --------------------------------------------------------------------------

/// Regular particle grid: centres at origin_px + 2 r (i, j), i, j >= 0, inside
/// the image. The default origin puts a centre on the bottom-left pixel
/// centre, so with r = 0.5 or 1 px every centre is a pixel centre.
struct GridParams {
  float radius_px = 1.f;
  Vec2 origin_px{0.5f, 0.5f};
};

/// The grid's points in ID order: image rows top to bottom, then left to
/// right (the original tool's order), in y-up pixel coordinates.
std::vector<Vec2> grid_points(int width, int height, const GridParams& grid);

struct SpecimenParams {
  MaskParams mask;
  GridParams grid;
  InsideTest test = InsideTest::Winding;
  float metres_per_pixel = 1.f;
  Vec2 origin{0.f, 0.f};  ///< world position of the image's bottom-left corner
};

struct Specimen {
  int image_width = 0, image_height = 0;
  float radius_px = 1.f, metres_per_pixel = 1.f;
  Vec2 origin{};
  std::vector<uint32_t> id;                 ///< 1..n
  std::vector<Vec2> pos_px;                 ///< y-up pixel coordinates
  std::vector<Vec2> pos;                    ///< world
  std::vector<std::array<uint8_t, 3>> rgb;  ///< colour of the pixel under the centre
  size_t size() const { return id.size(); }
  float radius() const { return radius_px * metres_per_pixel; }
};

/// The pixel under a y-up pixel position (column, image row), clamped to the image.
void pixel_under(int width, int height, Vec2 p, int& column, int& row);

Specimen make_specimen(const Image& image, const SpecimenParams& params = {});
/// Same, with a mask and contours already made (the app shows them).
Specimen make_specimen(const Image& image, const Mask& mask, const std::vector<Contour>& contours,
                       const SpecimenParams& params);

/// A grid point where a nearest-contour test and the winding test disagree.
struct Disagreement {
  Vec2 pos_px;
  bool nearest_inside = false;
  bool winding_inside = false;
};
/// Grid points where `test` (NearestContour by default) and Winding differ.
std::vector<Disagreement> inside_test_disagreements(const Mask& mask,
                                                    const std::vector<Contour>& contours,
                                                    const GridParams& grid,
                                                    InsideTest test = InsideTest::NearestContour);

// [SECTION] Colours and groups ---------------------------------------------------------------

/// The original tool's colour table (input_data/color_diffuse.csv): header
/// "ID, R, G, B", then "id,r,g,b" with channels c / 255 printed like C++
/// streams (6 significant digits), '\n' line ends.
std::string color_csv_text(const Specimen& s);
/// Writes color_csv_text atomically; throws WriteError naming the file.
void save_color_csv(const Specimen& s, const std::string& path);

/// IDs whose pixel has every channel > t (formula (4); the "belt", t = 160).
std::vector<uint32_t> select_bright(const Specimen& s, int t = 160);
/// IDs whose pixel has lo[c] <= channel c <= hi[c] for all three channels.
std::vector<uint32_t> select_color_range(const Specimen& s, const uint8_t lo[3],
                                         const uint8_t hi[3]);
/// An SGF editor group holding `ids` (no entries yet).
SgfGroup make_group(const std::string& name, const std::vector<uint32_t>& ids,
                    const float color[3]);

// [SECTION] Conversions ------------------------------------------------------------------------

/// Appends the specimen to MPM particles: square cells of side 2 r (world),
/// vol0 = (2 r)^2, mass = density vol0, at rest. The new particles get IDs
/// offset + specimen ID, where offset is the last existing ID (0 when empty);
/// returns the offset (shift SGF IDs by it).
uint32_t append_to_mpm(const Specimen& s, MpmParticles& p, float density, uint8_t material = 0,
                       uint16_t group = 0);
/// P4P rows as the original tool wrote them: spheres of radius r (world),
/// VOLUME = 4/3 pi r^3, MASS = density VOLUME, PZ = 0, at rest, GROUP = group.
P4ParticleFrame p4_from_specimen(const Specimen& s, double density, int64_t group = 0);

}  // namespace ps
