// Input limits (sim/core/limits.h): checked before allocation, reported with the
// file and field; hostile paths (devices, folders) refused before reading.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include "sim/core/error.h"
#include "sim/core/file.h"
#include "sim/core/image.h"
#include "sim/core/limits.h"
#include "sim/io/json.h"
#include "sim/scene/scene.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

// Restores the process-wide limits when a test lowers them.
struct LimitsGuard {
  ps::InputLimits saved = ps::input_limits();
  ~LimitsGuard() { ps::input_limits() = saved; }
};

fs::path temp_dir(const char* name) {
  fs::path d = fs::temp_directory_path() / ("ps-limits-" + std::string(name));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A PNG signature and an IHDR chunk claiming w x h RGBA pixels, and no pixel data.
std::string png_header(uint32_t w, uint32_t h) {
  std::string s("\x89PNG\r\n\x1a\n", 8);
  auto be32 = [&](uint32_t v) {
    for (int k = 3; k >= 0; --k) s.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
  };
  be32(13);
  s += "IHDR";
  be32(w);
  be32(h);
  s += std::string("\x08\x06\x00\x00\x00", 5);  // 8 bit, RGBA, deflate, no filter, no interlace
  be32(0);                                      // CRC (stb does not check it)
  return s;
}

}  // namespace

TEST_CASE("read_file_bytes refuses devices, folders and files over the size limit, naming the file",
          "[limits]") {
  LimitsGuard guard;
  // /dev/zero would read forever; a FIFO would block.
  CHECK_THROWS_WITH(ps::read_file_bytes("/dev/zero"),
                    Contains("/dev/zero") && Contains("not a regular file"));
  const fs::path d = temp_dir("read");
  CHECK_THROWS_WITH(ps::read_file_bytes(d.string()), Contains("is a folder"));
  CHECK_THROWS_WITH(ps::read_file_bytes((d / "missing.json").string()),
                    Contains("missing.json") && Contains("no such file"));
  const fs::path f = d / "big.csv";
  std::ofstream(f) << std::string(5000, 'x');
  ps::input_limits().max_file_bytes = 4096;
  CHECK_THROWS_WITH(ps::read_file_bytes(f.string()),
                    Contains("big.csv") && Contains("file too large: 5000 bytes"));
  ps::input_limits().max_file_bytes = 5000;
  CHECK(ps::read_file_bytes(f.string()).size() == 5000);
}

TEST_CASE("an image whose header claims too many pixels is refused before it is decoded",
          "[limits]") {
  if (!ps::image_io_available()) {
    WARN("skipped: this build has no image reader (stb)");
    return;
  }
  // 16000 x 16000 RGBA would be 1 GB (stb itself accepts up to 2^30 bytes): refused from the header alone.
  CHECK_THROWS_WITH(ps::decode_image(png_header(16000, 16000), "huge.png"),
                    Contains("huge.png") && Contains("image too large: 16000 x 16000"));
  // A sane header without pixel data gets past the limit and fails in the decoder, cleanly.
  CHECK_THROWS_WITH(ps::decode_image(png_header(4, 4), "empty.png"),
                    Contains("empty.png") && Contains("cannot read image"));
  LimitsGuard guard;
  ps::input_limits().max_image_pixels = 15;
  CHECK_THROWS_WITH(ps::decode_image(png_header(4, 4), "small.png"),
                    Contains("image too large: 4 x 4"));
}

TEST_CASE("a scene's limits are checked before the grid or the particles are allocated",
          "[limits]") {
  LimitsGuard guard;
  const std::string base = R"({"kind": "mpm", "domain": {"size": [1, 1], "grid": 64},
    "materials": {"w": {"type": "fluid", "density": 1}},
    "bodies": [{"shape": "box", "min": [0.1, 0.1], "max": [0.9, 0.9], "material": "w", "spacing": 0.01}]})";
  ps::input_limits().max_grid_nodes = 1000;
  CHECK_THROWS_WITH(
      ps::build_mpm_scene(ps::Json::parse(base, "lim.json"), "lim.json"),
      Contains("lim.json:1") && Contains("field 'domain.grid'") && Contains("grid too large"));
  ps::input_limits() = guard.saved;
  ps::input_limits().max_mpm_particles = 1000;  // the box holds 80 x 80 lattice points
  CHECK_THROWS_WITH(
      ps::build_mpm_scene(ps::Json::parse(base, "lim.json"), "lim.json"),
      Contains("lim.json:3") && Contains("spacing") && Contains("at most 1000 particles"));
}

TEST_CASE("a scene whose image mask names a device is an error on the field, not a hang",
          "[limits]") {
  const std::string doc = R"({"kind": "mpm", "domain": {"size": [1, 1], "grid": 32},
    "materials": {"w": {"type": "fluid", "density": 1}},
    "bodies": [{"shape": "image", "file": "/dev/zero", "width": 0.5, "material": "w", "spacing": 0.02}]})";
  CHECK_THROWS_WITH(ps::build_mpm_scene(ps::Json::parse(doc, "dev.json"), "dev.json"),
                    Contains("dev.json:3") && Contains("file") && Contains("not a regular file"));
}

TEST_CASE("JSON strings are bounded and unicode escapes must be valid UTF-16", "[limits]") {
  LimitsGuard guard;
  ps::input_limits().max_string_bytes = 8;
  CHECK(ps::Json::parse(R"({"name": "12345678"})", "s.json").find("name")->as_string() ==
        "12345678");
  CHECK_THROWS_WITH(ps::Json::parse("{\n  \"name\": \"123456789\"}", "s.json"),
                    Contains("s.json:2") && Contains("string longer than 8 bytes"));
  ps::input_limits() = guard.saved;
  // A pair decodes to one code point (U+1F600, 4 bytes of UTF-8).
  CHECK(ps::Json::parse(R"(["\ud83d\ude00"])", "u.json").at(0).as_string() == "\xF0\x9F\x98\x80");
  // Halves alone, or a high half followed by something else, are errors with a place.
  CHECK_THROWS_WITH(ps::Json::parse(R"(["\ude00"])", "u.json"),
                    Contains("u.json:1") && Contains("low surrogate"));
  CHECK_THROWS_WITH(ps::Json::parse(R"(["\ud83d"])", "u.json"), Contains("high surrogate"));
  CHECK_THROWS_WITH(ps::Json::parse(R"(["\ud83d\u0041"])", "u.json"),
                    Contains("invalid surrogate pair"));
}

TEST_CASE(
    "a PNG chunk that claims more bytes than the file holds is refused before stb allocates for it",
    "[limits]") {
  if (!ps::image_io_available()) {
    WARN("skipped: this build has no image reader (stb)");
    return;
  }
  // The image fuzzer's finding: a 1929-byte 128 x 192 PNG whose second IDAT chunk claims
  // 1116179504 bytes; stb grew its buffer to 2 GB before noticing the data was missing.
  const std::string path =
      std::string(PS_SOURCE_DIR) + "/tests/fuzz/regressions/image/oom-idat-length-claims-1GB.png";
  CHECK_THROWS_WITH(ps::load_image(path),
                    Contains("oom-idat-length-claims-1GB.png") &&
                        Contains("chunk 'IDAT' at byte 1746 claims 1116179504 bytes"));
  // Formats other than PNG and JPEG are not decoded at all.
  CHECK_THROWS_WITH(ps::decode_image(std::string("GIF89a\x01\x00\x01\x00", 10), "a.gif"),
                    Contains("not a PNG or JPEG file"));
}

#if defined(PS_HAVE_ZLIB)
#include <zlib.h>
namespace {
// A greyscale 8-bit PNG whose IDAT holds `raw` compressed (CRCs zero: neither check reads them).
std::string grey_png(uint32_t w, uint32_t h, const std::string& raw) {
  std::string s = png_header(w, h);
  s[8 + 8 + 8 + 1] = 0;  // colour type 0: greyscale
  uLongf n = compressBound(raw.size());
  std::string z(n, '\0');
  compress(reinterpret_cast<Bytef*>(z.data()), &n, reinterpret_cast<const Bytef*>(raw.data()),
           raw.size());
  z.resize(n);
  auto be32 = [&](uint32_t v) {
    for (int k = 3; k >= 0; --k) s.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
  };
  be32(static_cast<uint32_t>(z.size()));
  s += "IDAT" + z;
  be32(0);
  be32(0);
  s += "IEND";
  be32(0);
  return s;
}
}  // namespace

TEST_CASE(
    "a PNG whose image data inflates to more than the image needs is refused before stb expands it",
    "[limits]") {
  if (!ps::image_io_available()) {
    WARN("skipped: this build has no image reader (stb)");
    return;
  }
  // 16 x 16 grey: 16 rows of a filter byte and 16 pixels = 272 bytes.
  const ps::Image ok = ps::decode_image(grey_png(16, 16, std::string(272, '\0')), "ok.png");
  CHECK(ok.width == 16);
  CHECK(ok.height == 16);
  // 10 MB of zeros compresses to about 10 KB: a "deflate bomb" for a 16 x 16 image.
  const std::string bomb = grey_png(16, 16, std::string(10 << 20, '\0'));
  CHECK(bomb.size() < 20000);
  CHECK_THROWS_WITH(ps::decode_image(bomb, "bomb.png"),
                    Contains("bomb.png") &&
                        Contains("inflates to more than the 272 bytes a 16 x 16 image needs"));
}
#endif
