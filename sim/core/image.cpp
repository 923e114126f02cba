#include "sim/core/image.h"

#include <cstdint>
#include <stdexcept>
#include "sim/core/atomic_write.h"
#include "sim/core/error.h"
#include "sim/core/limits.h"
#include "sim/core/file.h"

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
  std::string bytes;
  try {
    bytes = read_file_bytes(path);
  } catch (const InputError& e) {
    throw InputError(e.loc(), e.field(), "cannot read image: " + e.message());
  }
  return decode_image(bytes, path);
#else
  throw InputError(SourceLoc{path, 0, 0}, "", "this build has no image reader (stb was not found)");
#endif
}

Image decode_image(const std::string& bytes, const std::string& name) {
#ifdef PS_HAVE_STB
  if (bytes.size() > static_cast<size_t>(INT32_MAX))
    throw InputError(SourceLoc{name, 0, 0}, "", "image file too large");
  const auto* buf = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = static_cast<int>(bytes.size());
  int w = 0, h = 0, n = 0;
  if (!stbi_info_from_memory(buf, len, &w, &h, &n)) {
    const char* why = stbi_failure_reason();
    throw InputError(SourceLoc{name, 0, 0}, "", std::string("cannot read image: ") + (why ? why : "unknown format"));
  }
  const InputLimits& lim = input_limits();
  if (w <= 0 || h <= 0 || w > lim.max_image_side || h > lim.max_image_side ||
      static_cast<int64_t>(w) * h > lim.max_image_pixels)
    throw InputError(SourceLoc{name, 0, 0}, "",
                     "image too large: " + std::to_string(w) + " x " + std::to_string(h) + " pixels (at most " +
                         std::to_string(lim.max_image_side) + " per side and " + std::to_string(lim.max_image_pixels) +
                         " in all)");
  int dw = 0, dh = 0;
  unsigned char* data = stbi_load_from_memory(buf, len, &dw, &dh, &n, 4);
  if (!data) {
    const char* why = stbi_failure_reason();
    throw InputError(SourceLoc{name, 0, 0}, "", std::string("cannot read image: ") + (why ? why : "unknown error"));
  }
  if (dw != w || dh != h) {  // the header and the decoder must agree (never seen; checked, not assumed)
    stbi_image_free(data);
    throw InputError(SourceLoc{name, 0, 0}, "", "cannot read image: inconsistent size in the header");
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
  (void)bytes;
  throw InputError(SourceLoc{name, 0, 0}, "", "this build has no image reader (stb was not found)");
#endif
}

void save_png(const std::string& path, const Image& image) {
#ifdef PS_HAVE_STB
  // Encoded in memory, then written atomically: never a half-written PNG.
  std::string png;
  auto append = [](void* ctx, void* data, int size) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, image.width, image.height, 3, image.rgb.data(), image.width * 3))
    throw std::runtime_error(path + ": cannot encode PNG");
  write_file_atomic(path, png);
#else
  (void)image;
  throw std::runtime_error(path + ": this build has no image writer (stb was not found)");
#endif
}

}  // namespace ps
