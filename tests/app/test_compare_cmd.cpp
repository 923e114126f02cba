// `sandbox compare` end to end: files written, columns, errors.
#include <unistd.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include "render/cpu/video.h"
#include "sandbox_exe.h"
#include "sim/core/image.h"

namespace fs = std::filesystem;

using ps::test::Result;
using ps::test::sandbox;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("sandbox compare writes side-by-side frames, curves.csv and curves.svg",
          "[app][compare]") {
  const fs::path out = fs::temp_directory_path() / ("ps_compare_out_" + std::to_string(getpid()));
  fs::remove_all(out);
  Result r = sandbox(
      "compare pic_vs_apic --vary solver.transfer=pic,apic,flip --frames 3 --threads 2 --no-progress "
      "--set solver.substeps=4 --out " +
      out.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("pane 1: transfer=pic (--vary solver.transfer=pic), 5776 particles") !=
        std::string::npos);
  CHECK(r.out.find("pane 3: transfer=flip") != std::string::npos);
  // One picture per frame, frames 0..3, three 480-pixel panes side by side.
  if (ps::image_io_available()) {
    for (int f = 0; f <= 3; ++f) {
      char name[32];
      std::snprintf(name, sizeof name, "frame_%05d.png", f);
      CHECK(fs::exists(out / name));
    }
    CHECK_FALSE(fs::exists(out / "frame_00004.png"));
    const ps::Image img = ps::load_image((out / "frame_00003.png").string());
    CHECK(img.width == 3 * 480 + 2 * 4);
    CHECK(img.height == 30 + 480);
  }
  const std::string csv = read_text(out / "curves.csv");
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  CHECK(line ==
        "frame,time,pane,label,steps,kinetic_energy,momentum_x,momentum_y,angular_momentum,hash");
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    CHECK(std::count(line.begin(), line.end(), ',') == 9);
  }
  CHECK(rows == 4 * 3);
  CHECK(csv.find(",3,transfer=flip,12,") != std::string::npos);
  // Four stacked plots, each with the three panes in its legend.
  const std::string svg = read_text(out / "curves.svg");
  CHECK(count_of(svg, "<svg") == 5);
  CHECK(count_of(svg, ">transfer=apic</text>") == 4);
  CHECK(svg.find("Angular momentum") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("sandbox compare --video: an MP4 with ffmpeg, a note without it", "[app][compare]") {
  const fs::path out = fs::temp_directory_path() / ("ps_compare_video_" + std::to_string(getpid()));
  fs::remove_all(out);
  Result r = sandbox(
      "compare pic_vs_apic --vary solver.transfer=pic,apic --frames 2 --set solver.substeps=2 --video "
      "--quiet --out " +
      out.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  if (!ps::image_io_available()) {
    CHECK(r.out.find("no video") != std::string::npos);
  } else if (ps::on_path("ffmpeg")) {
    CHECK(fs::exists(out / "compare.mp4"));
  } else {
    CHECK(r.out.find("note: ffmpeg is not on PATH: no video") != std::string::npos);
    CHECK_FALSE(fs::exists(out / "compare.mp4"));
  }
  fs::remove_all(out);
}

TEST_CASE("sandbox compare rejects bad --vary lists precisely", "[app][compare]") {
  Result r1 = sandbox("compare pic_vs_apic --vary solver.flip_blend=0.5,2 --frames 1");
  CHECK(r1.code == 2);
  CHECK(
      r1.out.find(
          "--vary solver.flip_blend=2: field 'solver.flip_blend': value 2 is out of range [0, 1]") !=
      std::string::npos);
  Result r2 = sandbox("compare pic_vs_apic --vary solver.transfr=pic,apic --frames 1");
  CHECK(r2.code == 2);
  CHECK(r2.out.find("field 'solver.transfr': unknown field") != std::string::npos);
  Result r3 = sandbox(
      "compare pic_vs_apic --vary solver.transfer=pic,apic,flip --vary solver.kernel=quadratic,cubic");
  CHECK(r3.code == 2);
  CHECK(
      r3.out.find(
          "--vary gives 6 panes (solver.transfer: 3 values x solver.kernel: 2 values); compare shows 2 to 4 "
          "panes") != std::string::npos);
  Result r4 = sandbox("compare pic_vs_apic --vary solver.transfer=pic");
  CHECK(r4.code == 2);
  CHECK(r4.out.find("--vary gives 1 pane (solver.transfer: 1 value)") != std::string::npos);
  Result r5 = sandbox("compare pic_vs_apic --vary solver.transfer");
  CHECK(r5.code == 2);
  CHECK(r5.out.find("--vary solver.transfer: expected path=value,value") != std::string::npos);
  Result r6 = sandbox("compare pic_vs_apic --frames 1");
  CHECK(r6.code == 2);
  CHECK(r6.out.find("compare needs at least one --vary") != std::string::npos);
  Result r7 = sandbox(
      "compare pic_vs_apic --vary solver.transfer=pic,apic --vary solver.transfer=flip,pic");
  CHECK(r7.code == 2);
  CHECK(r7.out.find("--vary solver.transfer is given twice") != std::string::npos);
  Result r8 = sandbox(
      "compare pic_vs_apic --vary solver.transfer=pic,apic --set solver.transfer=flip --frames 1");
  CHECK(r8.code == 2);
  CHECK(r8.out.find("also given by --set solver.transfer=flip") != std::string::npos);
  Result r9 = sandbox("compare pic_vs_apic --vary solver.transfer=pic,apic --dump-every 3");
  CHECK(r9.code == 2);
  CHECK(r9.out.find("unknown option '--dump-every' for 'sandbox compare'") != std::string::npos);
}

TEST_CASE("sandbox --help lists compare", "[app][compare]") {
  Result r = sandbox("--help");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("sandbox compare SCENE --vary path=a,b") != std::string::npos);
}
