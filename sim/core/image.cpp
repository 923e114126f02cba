#include "sim/core/image.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include "sim/core/atomic_write.h"
#include "sim/core/error.h"
#include "sim/core/file.h"
#include "sim/core/limits.h"

#if defined(PS_HAVE_ZLIB)
#include <zlib.h>
#endif
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

#ifdef PS_HAVE_STB
namespace {

// The formats the sandbox documents (PNG, JPEG), recognised by their magic
// bytes; stb knows more (GIF, BMP, PSD, TGA, HDR, PIC, PNM), but each is attack
// surface a teaching tool does not need.
void check_image_format(const std::string& b, const std::string& name) {
  auto fail = [&](const std::string& why) {
    throw InputError(SourceLoc{name, 0, 0}, "", "cannot read image: " + why);
  };
  static const char kPng[8] = {'\x89', 'P', 'N', 'G', '\r', '\n', '\x1a', '\n'};
  const bool png = b.size() >= 8 && b.compare(0, 8, std::string(kPng, 8)) == 0;
  const bool jpeg = b.size() >= 3 && static_cast<uint8_t>(b[0]) == 0xFF &&
                    static_cast<uint8_t>(b[1]) == 0xD8 && static_cast<uint8_t>(b[2]) == 0xFF;
  if (!png && !jpeg) fail("not a PNG or JPEG file");
}

// A PNG's chunk structure, walked before stb decodes it: stb grows its
// image-data buffer to whatever length a chunk header claims before it finds
// the data missing, so a 2 KB file claiming a 1 GB IDAT chunk made it allocate
// 2 GB (found by the image fuzzer, tests/fuzz/regressions/image).
void check_png_chunks(const std::string& b, const std::string& name) {
  auto fail = [&](const std::string& why) {
    throw InputError(SourceLoc{name, 0, 0}, "", "cannot read image: " + why);
  };
  if (b.size() < 8 || b[1] != 'P') return;  // JPEG (the format was checked first)
  size_t p = 8;
  std::string idat;  // the compressed image data, for the inflate bound below
  for (;;) {
    if (b.size() - p < 12)
      fail("corrupt PNG: the file ends inside a chunk header at byte " + std::to_string(p));
    uint32_t len = 0;
    for (int k = 0; k < 4; ++k)
      len = (len << 8) | static_cast<uint8_t>(b[p + static_cast<size_t>(k)]);
    const std::string type = b.substr(p + 4, 4);
    for (char c : type)
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
        fail("corrupt PNG: bad chunk type at byte " + std::to_string(p));
    if (len > b.size() - p - 12)
      fail("corrupt PNG: chunk '" + type + "' at byte " + std::to_string(p) + " claims " +
           std::to_string(len) + " bytes, the file has " + std::to_string(b.size() - p - 12) +
           " left");
    if (type == "IDAT") idat.append(b, p + 8, len);
    p += 12 + static_cast<size_t>(len);
    if (type == "IEND") break;
  }
#ifdef PS_HAVE_ZLIB
  // The deflate stream may not inflate to more than the image needs: stb
  // expands its output buffer as the stream asks (up to 4 GB), so a small
  // "deflate bomb" would allocate before stb finds the excess. Counted in a
  // streaming pass with a 64 KiB scratch buffer; stops at the first excess.
  if (b.size() < 33) fail("corrupt PNG: no IHDR");
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = (v << 8) | static_cast<uint8_t>(b[at + static_cast<size_t>(k)]);
    return v;
  };
  const uint64_t w = be32(16), h = be32(20);
  const unsigned depth = static_cast<uint8_t>(b[24]), ctype = static_cast<uint8_t>(b[25]);
  const bool interlaced = b[28] != 0;
  const unsigned channels = ctype == 2 ? 3 : ctype == 4 ? 2 : ctype == 6 ? 4 : 1;
  const uint64_t bpp = uint64_t{channels} * depth;  // bits per pixel
  auto rows = [&](uint64_t pw, uint64_t ph) {
    return pw && ph ? ph * (1 + (pw * bpp + 7) / 8) : 0;
  };
  uint64_t need = rows(w, h);
  if (interlaced) {  // Adam7: seven sub-images
    static const int x0[7] = {0, 4, 0, 2, 0, 1, 0}, y0[7] = {0, 0, 4, 0, 2, 0, 1};
    static const int dx[7] = {8, 8, 4, 4, 2, 2, 1}, dy[7] = {8, 8, 8, 4, 4, 2, 2};
    need = 0;
    for (int k = 0; k < 7; ++k)
      need += rows((w + static_cast<uint64_t>(dx[k] - x0[k] - 1)) / static_cast<uint64_t>(dx[k]),
                   (h + static_cast<uint64_t>(dy[k] - y0[k] - 1)) / static_cast<uint64_t>(dy[k]));
  }
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return;  // no memory for zlib: leave it to stb
  z.next_in = reinterpret_cast<Bytef*>(idat.data());
  z.avail_in = static_cast<uInt>(idat.size());
  unsigned char scratch[65536];
  uint64_t out = 0;
  int rc = Z_OK;
  while (rc == Z_OK && out <= need) {
    z.next_out = scratch;
    z.avail_out = sizeof scratch;
    rc = inflate(&z, Z_NO_FLUSH);
    out += sizeof scratch - z.avail_out;
    if (rc == Z_BUF_ERROR && z.avail_out != 0)
      break;  // input ended: stb reports a truncated stream
  }
  inflateEnd(&z);
  if (out > need)
    fail("corrupt PNG: the image data inflates to more than the " + std::to_string(need) +
         " bytes a " + std::to_string(w) + " x " + std::to_string(h) + " image needs");
#endif
}

}  // namespace
#endif

Image decode_image(const std::string& bytes, const std::string& name) {
#ifdef PS_HAVE_STB
  if (bytes.size() > static_cast<size_t>(INT32_MAX))
    throw InputError(SourceLoc{name, 0, 0}, "", "image file too large");
  check_image_format(bytes, name);
  const auto* buf = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = static_cast<int>(bytes.size());
  int w = 0, h = 0, n = 0;
  if (!stbi_info_from_memory(buf, len, &w, &h, &n)) {
    const char* why = stbi_failure_reason();
    throw InputError(SourceLoc{name, 0, 0}, "",
                     std::string("cannot read image: ") + (why ? why : "unknown format"));
  }
  const InputLimits& lim = input_limits();
  if (w <= 0 || h <= 0)
    throw InputError(
        SourceLoc{name, 0, 0}, "",
        "cannot read image: empty (" + std::to_string(w) + " x " + std::to_string(h) + " pixels)");
  if (w > lim.max_image_side || h > lim.max_image_side ||
      static_cast<int64_t>(w) * h > lim.max_image_pixels)
    throw InputError(SourceLoc{name, 0, 0}, "",
                     "image too large: " + std::to_string(w) + " x " + std::to_string(h) +
                         " pixels (at most " + std::to_string(lim.max_image_side) +
                         " per side and " + std::to_string(lim.max_image_pixels) + " in all)");
  check_png_chunks(bytes, name);  // after the size: stbi_info reads only the header
  int dw = 0, dh = 0;
  unsigned char* data = stbi_load_from_memory(buf, len, &dw, &dh, &n, 4);
  if (!data) {
    const char* why = stbi_failure_reason();
    throw InputError(SourceLoc{name, 0, 0}, "",
                     std::string("cannot read image: ") + (why ? why : "unknown error"));
  }
  if (dw != w ||
      dh != h) {  // the header and the decoder must agree (never seen; checked, not assumed)
    stbi_image_free(data);
    throw InputError(SourceLoc{name, 0, 0}, "",
                     "cannot read image: inconsistent size in the header");
  }
  Image img;
  img.resize(w, h);
  for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i) {
    const unsigned a = data[i * 4 + 3];
    for (int c = 0; c < 3; ++c)  // composite on white
      img.rgb[i * 3 + c] =
          static_cast<uint8_t>((data[i * 4 + c] * a + 255u * (255u - a) + 127u) / 255u);
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
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data),
                                           static_cast<size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, image.width, image.height, 3, image.rgb.data(),
                              image.width * 3))
    throw std::runtime_error(path + ": cannot encode PNG");
  write_file_atomic(path, png);
#else
  (void)image;
  throw std::runtime_error(path + ": this build has no image writer (stb was not found)");
#endif
}

}  // namespace ps
