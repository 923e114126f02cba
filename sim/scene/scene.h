/// Scenes: JSON files describing the domain, the solver, named materials and
/// bodies (box, disk, polygon, image mask). See docs/scene-format.md.
/// One scene, three uses: the window, the headless runner, the tests and the
/// benchmark all load scenes through this module.
#pragma once
#include <memory>
#include <string>
#include <vector>
#include "sim/io/json.h"
#include "sim/mpm/material_table.h"
#include "sim/mpm/mpm_world.h"

namespace ps {

struct SceneInfo {
  std::string name;  ///< display name
  std::string description;
  std::string path;          ///< file it came from
  std::string kind = "mpm";  ///< "mpm" or "dem"
  int frames = 200;          ///< default frame count for headless runs
};

/// A loaded MPM scene: the world plus the document it came from (after
/// overrides), kept so the scene can be saved back with edited parameters.
struct MpmScene {
  SceneInfo info;
  Json doc;
  std::unique_ptr<MpmWorld> world;
};

/// Applies one "--set path=value" override to a document. The path uses dots
/// and array indices ("solver.transfer", "bodies.0.velocity"); the value is
/// read as JSON, or as a string when it is not valid JSON. Missing object
/// members are created (and rejected later as unknown fields when they are).
/// Errors, and later errors about the value, name "<flag> <assignment>"
/// (`sandbox compare` passes "--vary").
void apply_override(Json& doc, const std::string& assignment, const std::string& flag = "--set");
/// The same for an override written in a file (a lesson's "set" entry): its
/// errors point at `where` (the entry's file, line and column), name the
/// entry's field (`entry`, e.g. "set[1]") and quote the assignment; the value
/// keeps that location, so a later error about it (a bad transfer name, a
/// value out of range) points at the entry as well.
void apply_override(Json& doc, const std::string& assignment, const SourceLoc& where,
                    const std::string& entry);

/// Reads a scene file and applies overrides. Throws InputError.
Json read_scene_document(const std::string& path, const std::vector<std::string>& overrides);
/// The "kind" of a document ("mpm" unless it says "dem").
std::string scene_kind(const Json& doc);

/// Builds an MPM scene from a document. `scene_dir` resolves relative paths
/// (image masks). Throws InputError naming file, line, column and field.
MpmScene build_mpm_scene(const Json& doc, const std::string& path);
/// read_scene_document + build_mpm_scene.
MpmScene load_mpm_scene(const std::string& path, const std::vector<std::string>& overrides = {});

/// Writes the scene's document with the world's current solver and material
/// parameters folded in (the window's "save scene").
Json mpm_scene_to_json(const MpmScene& scene);
/// Writes `doc` atomically (write_file_atomic): the old file stays whole on
/// any failure. Throws WriteError naming the file and the OS reason.
void save_json_file(const std::string& path, const Json& doc);

/// Directory of the shipped scenes (assets/scenes), found next to the source
/// tree or relative to the executable.
std::string scenes_dir();
/// Resolves a scene argument: an existing path, or a built-in name
/// ("dam_break" -> assets/scenes/dam_break.json). Throws if not found.
std::string resolve_scene_path(const std::string& name_or_path);
/// Built-in scene files (sorted by name).
std::vector<std::string> builtin_scene_paths();
/// The scene the sandbox opens on by default.
std::string default_scene_name();

const char* transfer_name(Transfer t);
const char* kernel_name(Kernel k);
const char* boundary_name(Boundary b);

}  // namespace ps
