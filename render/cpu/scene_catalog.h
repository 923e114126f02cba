/// The scene browser's catalogue, GL-free: every built-in scene and lesson
/// with its title, a one-line description and its group (Lessons, MPM, Heat,
/// Fracture, DEM, Rigid bodies), decided from the scene document itself, not
/// from a list of file names; the thumbnail of each (the initial state drawn by
/// the software rasteriser, render/cpu/frame_render.h) and where it is cached:
/// the settings folder's `thumbnails/`, keyed by a hash of the file's content,
/// so an edited scene gets a new one. The window's browser is
/// render/feature_browser.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "sim/core/image.h"
#include "sim/io/json.h"

namespace ps {

/// The browser's groups, in the order it shows them.
enum class SceneGroup : int { Lessons = 0, Mpm, Heat, Fracture, Dem, Rigid };
inline constexpr int kSceneGroupCount = 6;
/// The group's header ("MPM (fluids & solids)").
const char* scene_group_title(SceneGroup g);

/// Bonds that break before they stretch by this share of their length (the
/// weakest bond strength over the bond modulus) make a DEM scene a fracture
/// scene; the soft bodies' bonds (strength 10 x the modulus) never break.
inline constexpr double kBondBreakStrain = 1.0;

/// The group of a scene document (as read from its file), the first that
/// applies:
///   Heat      a "heat" section, or a material with a melting point, latent heat or conductivity;
///   Rigid     kind "rigid", or a "rigid" section (Box2D bodies with particles);
///   Fracture  an MPM body of a viscoplastic material (it yields, necks and tears apart),
///             or enabled DEM bonds that break below kBondBreakStrain;
///   DEM       kind "dem";
///   MPM       the rest.
/// Tolerant of any document: a field of the wrong type counts as absent.
SceneGroup classify_scene(const Json& doc);

/// The first sentence of a text (lesson.h's split_sentences), "" for none.
std::string first_sentence(const std::string& text);

/// Thumbnails are drawn at this size (4:3) and shown scaled down.
inline constexpr int kThumbWidth = 256, kThumbHeight = 192;

/// One entry of the browser.
struct CatalogEntry {
  std::string path;  ///< the scene or lesson file
  bool lesson = false;
  SceneGroup group = SceneGroup::Mpm;
  std::string title;  ///< the scene's "name" / the lesson's "title" (the file's stem when absent)
  std::string description;  ///< the scene's "description" / the first sentence of the lesson's text
  std::string error;        ///< the file does not read: its located error ("FILE:LINE:COL: ...")
  uint64_t key = 0;         ///< thumbnail_key of the file (and a lesson's scene file)
};

/// The thumbnail cache key of file contents: a hash of the thumbnail's
/// drawing version and size and of each content in turn.
uint64_t thumbnail_key(const std::vector<std::string>& contents);
/// Where the thumbnail of `key` is cached: `dir`/thumbnails/<16 hex digits>.png.
std::string thumbnail_cache_path(const std::string& dir, uint64_t key);

/// Reads the scenes and lessons into entries: the lessons first (in the
/// order given), then the scenes by group and within a group by title. A
/// file that does not read is an entry with its error (in the MPM group for
/// a scene), not an exception.
std::vector<CatalogEntry> read_catalog(const std::vector<std::string>& scene_paths,
                                       const std::vector<std::string>& lesson_paths);

/// Builds the entry's initial state (a scene: its file as it stands; a
/// lesson: its scene with its `set` entries, no comparison) on the CPU with
/// one thread and draws it at kThumbWidth x kThumbHeight. Throws the
/// loader's errors (InputError, located) and Cancelled (sim/core/progress.h).
Image render_thumbnail(const CatalogEntry& e);

}  // namespace ps
