#include "sim/core/image.h"

#include <stdexcept>
#include "sim/core/error.h"

#if defined(PS_HAVE_STB)
#include <stb_image.h>
#include <stb_image_write.h>
#endif

namespace ps {

void Image::resize(int w, int h, uint8_t r, uint8_t g, uint8_t b) {
  width = w;
  height = h;
  rgb.resize(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = r;
    rgb[i + 1] = g;
    rgb[i + 2] = b;
  }
}

bool image_io_available() {
#ifdef PS_HAVE_STB
  return true;
#else
  return false;
#endif
}

Image load_image(const std::string& path) {
#ifdef PS_HAVE_STB
  int w = 0, h = 0, n = 0;
  unsigned char* data = stbi_load(path.c_str(), &w, &h, &n, 4);
  if (!data) {
    const char* why = stbi_failure_reason();
    throw InputError(SourceLoc{path, 0, 0}, "", std::string("cannot read image: ") + (why ? why : "unknown error"));
  }
  Image img;
  img.resize(w, h);
  for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i) {
    const unsigned a = data[i * 4 + 3];
    for (int c = 0; c < 3; ++c)  // composite on white
      img.rgb[i * 3 + c] = static_cast<uint8_t>((data[i * 4 + c] * a + 255u * (255u - a) + 127u) / 255u);
  }
  stbi_image_free(data);
  return img;
#else
  throw InputError(SourceLoc{path, 0, 0}, "", "this build has no image reader (stb was not found)");
#endif
}

void save_png(const std::string& path, const Image& image) {
#ifdef PS_HAVE_STB
  if (!stbi_write_png(path.c_str(), image.width, image.height, 3, image.rgb.data(), image.width * 3))
    throw std::runtime_error(path + ": cannot write PNG");
#else
  (void)image;
  throw std::runtime_error(path + ": this build has no image writer (stb was not found)");
#endif
}

}  // namespace ps
