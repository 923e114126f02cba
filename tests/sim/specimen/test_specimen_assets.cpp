// Regenerates assets/specimens/*.png from sim/specimen/specimen_shapes.cpp
// (hidden: run `sim_tests "[.generate]"`), and checks the committed files
// match the generator.
#include <catch2/catch.hpp>

#include <filesystem>
#include "sim/specimen/specimen_shapes.h"

namespace {
const std::string kAssetDir = std::string(PS_SOURCE_DIR) + "/assets/specimens";
}

TEST_CASE("regenerate specimen images", "[.generate]") {
  if (!ps::image_io_available()) FAIL("no image I/O in this build (stb not found)");
  const auto paths = ps::write_specimen_assets(kAssetDir);
  CHECK(paths.size() == 3);
}

TEST_CASE("committed specimen images match the generator and are small", "[specimen]") {
  if (!ps::image_io_available()) return;  // no reader: nothing to compare
  const std::pair<const char*, ps::Image> cases[] = {{"disk.png", ps::make_disk_image()},
                                                     {"l_shape.png", ps::make_l_image()},
                                                     {"dancer.png", ps::make_dancer_image()}};
  for (const auto& c : cases) {
    INFO(c.first);
    const std::string path = kAssetDir + "/" + c.first;
    REQUIRE(std::filesystem::exists(path));
    CHECK(std::filesystem::file_size(path) < 100u * 1024u);
    const ps::Image img = ps::load_image(path);
    CHECK(img.width == c.second.width);
    CHECK(img.height == c.second.height);
    CHECK(img.rgb == c.second.rgb);
  }
}
