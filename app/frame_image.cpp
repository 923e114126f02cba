#include "app/frame_image.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace ps {

bool write_image(Simulation& sim, const std::string& path, ParticleTable& table, std::string* err,
                 const ImageColor& color) {
  Image img;
  img.resize(960, 720);
  render_frame(sim, table, color, img);
  return write_png(path, img, err);
}

void create_output_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create output folder: " + ec.message());
}

long png_interval(long every) {
  if (every > 0 && !png_supported()) {
    std::fprintf(stderr, "note: this build cannot write PNG images (no libstb); images skipped\n");
    return 0;
  }
  return every;
}

}  // namespace ps
