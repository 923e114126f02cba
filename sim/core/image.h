/// 8-bit RGB images and PNG/JPG file I/O (stb from libstb-dev, when found).
/// Shared by the specimen tools, the scene loader and the headless renderer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ps {

/// 8-bit RGB image, row 0 at the top (as in PNG / JPG files).
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  ///< 3 bytes per pixel, row-major
  void resize(int w, int h, uint8_t r = 255, uint8_t g = 255, uint8_t b = 255);
  uint8_t* at(int column, int row) { return &rgb[(static_cast<size_t>(row) * width + column) * 3]; }
  const uint8_t* at(int column, int row) const {
    return &rgb[(static_cast<size_t>(row) * width + column) * 3];
  }
};

/// True when this build can read and write image files (stb, PS_HAVE_STB).
bool image_io_available();
/// Loads a PNG or JPG (any stb format). Transparent pixels are composited on
/// white. Throws InputError naming the file when it cannot be read or when the
/// build has no image I/O.
Image load_image(const std::string& path);
/// Decodes an image file's bytes (`name` is used in errors). The header's size
/// is checked against input_limits() before any pixel is decoded.
Image decode_image(const std::string& bytes, const std::string& name);
/// Writes a PNG atomically (write_file_atomic). Throws std::runtime_error
/// (WriteError for I/O, naming the file) on failure or without image I/O.
void save_png(const std::string& path, const Image& image);

}  // namespace ps
