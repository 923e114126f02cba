/// Labels in headless images (no GL, no font files): a built-in 5x9 pixel
/// font (lowercase, digits and the punctuation of setting names and values;
/// uppercase letters are drawn as lowercase, other characters as '?'),
/// scaled by whole pixels.
#pragma once
#include <cstdint>
#include <string>
#include "sim/core/image.h"

namespace ps {

/// Width and height in pixels of `text` drawn at `scale` (one line).
int text_width(const std::string& text, int scale);
int text_height(int scale);

/// Draws `text` with its top-left corner at (x, y) (pixels, y down), clipped
/// to the image.
void draw_text(Image& img, int x, int y, const std::string& text, int scale, const uint8_t rgb[3]);

/// Fills the rectangle [x0, x1) x [y0, y1) (pixels, y down), clipped.
void fill_rect(Image& img, int x0, int y0, int x1, int y1, const uint8_t rgb[3]);

}  // namespace ps
