// The headless label font (render/cpu/text.h).
#include <catch2/catch.hpp>
#include "render/cpu/text.h"

using namespace ps;

namespace {

/// Lit pixels (any channel above 128) in the image.
int lit(const Image& img) {
  int n = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) n += img.at(x, y)[0] > 128;
  return n;
}

}  // namespace

TEST_CASE("draw_text draws the glyphs at their size, clipped, unknown characters as '?'",
          "[render][text]") {
  const uint8_t white[3] = {255, 255, 255};
  CHECK(text_width("", 2) == 0);
  CHECK(text_width("abc", 1) == 17);  // 3 x 6 - 1
  CHECK(text_width("abc", 3) == 51);
  CHECK(text_height(2) == 18);
  Image a, b;
  a.resize(64, 32, 0, 0, 0);
  b.resize(64, 32, 0, 0, 0);
  draw_text(a, 2, 2, "l", 1, white);
  CHECK(lit(a) == 10);  // the l glyph: 2 + 5 + 3 pixels
  draw_text(b, 2, 2, "l", 2, white);
  CHECK(lit(b) == 40);  // each pixel becomes 2 x 2
  // Uppercase is drawn as lowercase; characters without a glyph as '?'.
  Image u, l, q, qq;
  for (Image* im : {&u, &l, &q, &qq}) im->resize(32, 16, 0, 0, 0);
  draw_text(u, 0, 0, "T", 1, white);
  draw_text(l, 0, 0, "t", 1, white);
  CHECK(u.rgb == l.rgb);
  draw_text(q, 0, 0, "@", 1, white);
  draw_text(qq, 0, 0, "?", 1, white);
  CHECK(q.rgb == qq.rgb);
  CHECK(lit(q) > 0);
  // Clipped at every edge without writing outside the image.
  Image c;
  c.resize(8, 8, 0, 0, 0);
  draw_text(c, -3, -4, "transfer=pic", 2, white);
  draw_text(c, 5, 6, "w", 3, white);
  CHECK(c.rgb.size() == 8u * 8u * 3u);
  CHECK(lit(c) > 0);
  // Different text, different pixels.
  Image p1, p2;
  p1.resize(80, 12, 0, 0, 0);
  p2.resize(80, 12, 0, 0, 0);
  draw_text(p1, 0, 0, "transfer=pic", 1, white);
  draw_text(p2, 0, 0, "transfer=apic", 1, white);
  CHECK(p1.rgb != p2.rgb);
}
