// The verification report: inline SVG plots, report.html (self-contained:
// inline CSS and SVG, no scripts, no external files) and summary.md.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/atomic_write.h"
#include "sim/core/names.h"
#include "sim/verify/verify.h"

namespace ps {
namespace verify {

namespace {

// [SECTION] Text helpers ---------------------------------------------------------

/// Escapes the XML/HTML special characters of a text or attribute value.
std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c; break;
    }
  }
  return o;
}

/// A number for a table: four significant digits; non-finite values named.
std::string num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  char b[48];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string with_unit(const std::string& s, const std::string& unit) {
  return unit.empty() ? s : s + " " + unit;
}

/// "± 5 %", "± 0.02 s", "≤", "≥": how a check compares.
std::string tolerance_text(const Check& c) {
  switch (c.compare) {
    case Compare::Near: return "± " + with_unit(num(c.tolerance), c.unit);
    case Compare::NearRel: return "± " + num(100.0 * c.tolerance) + " %";
    case Compare::Below: return "≤";
    case Compare::Above: return "≥";
  }
  return "?";
}

/// How far the measurement is from its reference, in the check's own terms.
std::string deviation_text(const Check& c) {
  if (!std::isfinite(c.measured)) return "—";
  const double d = c.measured - c.reference;
  switch (c.compare) {
    case Compare::Near: return with_unit((d >= 0 ? "+" : "") + num(d), c.unit);
    case Compare::NearRel:
      if (c.reference == 0.0) return with_unit((d >= 0 ? "+" : "") + num(d), c.unit);
      return (d >= 0 ? "+" : "") + num(100.0 * d / std::fabs(c.reference)) + " %";
    case Compare::Below: return "margin " + with_unit(num(c.reference - c.measured), c.unit);
    case Compare::Above: return "margin " + with_unit(num(c.measured - c.reference), c.unit);
  }
  return "";
}

/// The reference column (for Below/Above the bound itself).
std::string reference_text(const Check& c) { return with_unit(num(c.reference), c.unit); }

std::string seconds_text(double s) {
  char b[32];
  if (!std::isfinite(s) || s < 0) return "—";
  if (s < 10)
    std::snprintf(b, sizeof b, "%.2f s", s);
  else if (s < 100)
    std::snprintf(b, sizeof b, "%.1f s", s);
  else
    std::snprintf(b, sizeof b, "%.0f s", s);
  return b;
}

/// The summary table's cell: the backend, "(host part)" when some of a device
/// case ran on the host, "fell back" after a device failure; the case's
/// section gives the whole text.
std::string ran_on_short(const RanOn& r) {
  if (r.requested == "cpu") return "cpu";
  if (!r.on_device())
    return "cpu (" + (r.host.empty() ? std::string("no reason given") : std::string("see why")) +
           ")";
  std::string s = r.device;
  if (r.fell_back())
    s += ", fell back to the cpu";
  else if (!r.host.empty())
    s += " (part on the host)";
  return s;
}

enum class Verdict { Pass, Miss, Error };
constexpr NameTable<Verdict, 3> kVerdictNames{0, {"PASS", "MISS", "ERROR"}};

Verdict verdict_of(const CaseResult& r) {
  if (!r.error.empty()) return Verdict::Error;
  return r.passed() ? Verdict::Pass : Verdict::Miss;
}

const char* verdict_name(Verdict v) { return kVerdictNames(v); }

/// CSS class of a verdict badge; a miss of an informative case is amber, of a must-pass case red.
std::string verdict_class(Verdict v, bool must_pass) {
  if (v == Verdict::Pass) return "pass";
  if (v == Verdict::Error) return "error";
  return must_pass ? "miss" : "info-miss";
}

/// An id usable as an HTML anchor.
std::string anchor(const std::string& id) {
  std::string a = "case-";
  for (char c : id)
    a += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '-';
  return a;
}

/// A Markdown table cell: one line, pipes escaped.
std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|')
      o += "\\|";
    else if (c == '\n' || c == '\r')
      o += ' ';
    else
      o += c;
  }
  return o;
}

// [SECTION] Plot axes ------------------------------------------------------------

/// Heckbert's nice numbers: 1, 2, 5 times a power of ten.
double nice_number(double x, bool round) {
  const double e = std::floor(std::log10(x));
  const double f = x / std::pow(10.0, e);
  double nf;
  if (round)
    nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  else
    nf = f <= 1.001 ? 1 : f <= 2.001 ? 2 : f <= 5.001 ? 5 : 10;  // slack: 0.2000001 is a 0.2 range
  return nf * std::pow(10.0, e);
}

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;  // in data units
  double step = 0.1;          // linear: tick spacing (for label rounding)
};

/// A tick label: short, no "-0", no 1e-17 for zero.
std::string tick_label(double v, double step) {
  if (step > 0 && std::fabs(v) < 1e-9 * step) v = 0.0;
  char b[48];
  const double a = std::fabs(v);
  if (a != 0.0 && (a >= 1e5 || a < 1e-3)) {
    std::snprintf(b, sizeof b, "%.2e", v);
    // 1.00e+05 -> 1e5, 2.50e-04 -> 2.5e-4
    std::string s = b;
    size_t e = s.find('e');
    if (e != std::string::npos) {
      std::string mant = s.substr(0, e), ex = s.substr(e + 1);
      if (mant.find('.') != std::string::npos) {
        while (!mant.empty() && mant.back() == '0') mant.pop_back();
        if (!mant.empty() && mant.back() == '.') mant.pop_back();
      }
      bool neg = !ex.empty() && ex[0] == '-';
      if (!ex.empty() && (ex[0] == '+' || ex[0] == '-')) ex = ex.substr(1);
      while (ex.size() > 1 && ex[0] == '0') ex = ex.substr(1);
      s = mant + "e" + (neg ? "-" : "") + ex;
    }
    return s;
  }
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

/// A linear axis with nice ticks. Loose: the axis ends on ticks; tight: the
/// axis is the data range and the ticks are the nice values inside it.
Axis linear_axis(double lo, double hi, int target_ticks, bool tight) {
  Axis ax;
  if (!(hi - lo > 1e-12 * std::max(std::fabs(lo), std::fabs(hi)))) {
    // A single value or constant data: open a window around it.
    lo = hi = 0.5 * (lo + hi);
    const double pad = lo != 0.0 ? 0.1 * std::fabs(lo) : 1.0;
    lo -= pad;
    hi += pad;
  }
  const double range = nice_number(hi - lo, false);
  double step = nice_number(range / std::max(1, target_ticks - 1), true);
  if (!(step > 0) || !std::isfinite(step)) step = 1.0;
  const double first = std::floor(lo / step) * step, last = std::ceil(hi / step) * step;
  ax.lo = tight ? lo : first;
  ax.hi = tight ? hi : last;
  ax.step = step;
  const double eps = 1e-9 * step;
  for (int k = 0; k <= 1000; ++k) {
    double t = first + k * step;
    if (t > ax.hi + eps) break;
    if (t < ax.lo - eps) continue;
    ax.ticks.push_back(std::fabs(t) < eps ? 0.0 : t);
  }
  return ax;
}

Axis log_axis(double lo, double hi) {
  Axis ax;
  ax.log = true;
  double elo = std::floor(std::log10(lo)), ehi = std::ceil(std::log10(hi));
  if (ehi <= elo) ehi = elo + 1;
  ax.lo = std::pow(10.0, elo);
  ax.hi = std::pow(10.0, ehi);
  const int decades = static_cast<int>(ehi - elo);
  const int every = std::max(1, (decades + 7) / 8);
  for (int e = static_cast<int>(elo); e <= static_cast<int>(ehi); e += every) {
    const double d = std::pow(10.0, e);
    ax.ticks.push_back(d);
    if (decades <= 2 && e < static_cast<int>(ehi)) {
      ax.ticks.push_back(2 * d);
      ax.ticks.push_back(5 * d);
    }
  }
  std::sort(ax.ticks.begin(), ax.ticks.end());
  ax.step = 0;
  return ax;
}

/// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                          "#E69F00", "#56B4E9", "#000000", "#B8A200"};
constexpr size_t kPaletteSize = 8;

/// Marker outline (one subpath) centred on (x, y), shape by series index.
void marker_path(std::string& d, int shape, double x, double y, double r) {
  char b[160];
  switch (shape % 4) {
    case 0:  // circle: two arcs
      std::snprintf(b, sizeof b, "M%.1f %.1fa%.1f %.1f 0 1 0 %.1f 0a%.1f %.1f 0 1 0 %.1f 0Z", x - r,
                    y, r, r, 2 * r, r, r, -2 * r);
      break;
    case 1:  // square
      std::snprintf(b, sizeof b, "M%.1f %.1fh%.1fv%.1fh%.1fZ", x - 0.9 * r, y - 0.9 * r, 1.8 * r,
                    1.8 * r, -1.8 * r);
      break;
    case 2:  // triangle
      std::snprintf(b, sizeof b, "M%.1f %.1fL%.1f %.1fL%.1f %.1fZ", x, y - 1.15 * r, x + r,
                    y + 0.7 * r, x - r, y + 0.7 * r);
      break;
    default:  // diamond
      std::snprintf(b, sizeof b, "M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ", x, y - 1.2 * r,
                    x + 1.2 * r, y, x, y + 1.2 * r, x - 1.2 * r, y);
      break;
  }
  d += b;
}

/// The legend swatch of a marker, drawn with basic shapes (not <path>, so that
/// a plot holds exactly one <path> per drawn series).
std::string marker_swatch(int shape, double x, double y, double r, const char* colour) {
  char b[256];
  switch (shape % 4) {
    case 0:
      std::snprintf(
          b, sizeof b,
          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.8\"/>",
          x, y, r, colour);
      break;
    case 1:
      std::snprintf(
          b, sizeof b,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#fff\" "
          "stroke-width=\"0.8\"/>",
          x - 0.9 * r, y - 0.9 * r, 1.8 * r, 1.8 * r, colour);
      break;
    case 2:
      std::snprintf(
          b, sizeof b,
          "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.8\"/>",
          x, y - 1.15 * r, x + r, y + 0.7 * r, x - r, y + 0.7 * r, colour);
      break;
    default:
      std::snprintf(
          b, sizeof b,
          "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"#fff\" "
          "stroke-width=\"0.8\"/>",
          x, y - 1.2 * r, x + 1.2 * r, y, x, y + 1.2 * r, x - 1.2 * r, y, colour);
      break;
  }
  return b;
}

/// A value is drawable when finite, not absurdly large (so that ranges and
/// pixel coordinates stay finite) and, on a log axis, positive.
bool drawable(double v, bool log) {
  if (!std::isfinite(v) || std::fabs(v) > 1e300) return false;
  return !log || v > 0.0;
}

double text_width(const std::string& s, double font_px) {
  // Rough width of proportional sans-serif text (UTF-8 continuation bytes not counted).
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return 0.58 * font_px * static_cast<double>(n);
}

}  // namespace

// [SECTION] plot_svg ---------------------------------------------------------------

const char* plot_colour(size_t series) { return kPalette[series % kPaletteSize]; }

std::string plot_svg(const Plot& plot, int width, int height) {
  const double W = std::max(200, width), H = std::max(150, height);
  const double font = 12, small = 11;

  // Data ranges over the drawable points of every series.
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  size_t skipped = 0;
  std::vector<size_t> drawn(plot.series.size(), 0);
  for (size_t s = 0; s < plot.series.size(); ++s) {
    const Series& se = plot.series[s];
    const size_t n = std::min(se.x.size(), se.y.size());
    skipped += std::max(se.x.size(), se.y.size()) - n;
    for (size_t i = 0; i < n; ++i) {
      if (!drawable(se.x[i], false) || !drawable(se.y[i], plot.log_y)) {
        ++skipped;
        continue;
      }
      ++drawn[s];
      xlo = std::min(xlo, se.x[i]);
      xhi = std::max(xhi, se.x[i]);
      ylo = std::min(ylo, se.y[i]);
      yhi = std::max(yhi, se.y[i]);
    }
  }
  const bool any = xlo <= xhi;
  if (!any) {
    xlo = 0;
    xhi = 1;
    ylo = plot.log_y ? 1 : 0;
    yhi = plot.log_y ? 10 : 1;
  }
  // x tight (curves run edge to edge), y loose (ends on ticks).
  const Axis ax = linear_axis(xlo, xhi, 6, true);
  const Axis ay = plot.log_y ? log_axis(ylo, yhi) : linear_axis(ylo, yhi, 5, false);

  // Layout: title on top, tick labels and axis titles left and below, then the legend rows.
  double label_w = 0;
  for (double t : ay.ticks) label_w = std::max(label_w, text_width(tick_label(t, ay.step), small));
  const double left = 14 + (plot.ylabel.empty() ? 0 : 18) + label_w + 6;
  // Room for half of the last x tick label when it sits on the right edge.
  const double right = std::max(
      16.0,
      ax.ticks.empty() ? 0.0 : 0.5 * text_width(tick_label(ax.ticks.back(), ax.step), small) + 6);
  const double top = plot.title.empty() ? 14 : 34;
  // Legend: items laid out in rows under the x-axis title.
  struct Item {
    size_t s;
    double x, row;
  };
  std::vector<Item> items;
  int rows = 0;
  if (!plot.series.empty()) {
    double cx = left, row = 0;
    const double avail = W - left - right;
    for (size_t s = 0; s < plot.series.size(); ++s) {
      std::string lab =
          plot.series[s].label.empty() ? "series " + std::to_string(s + 1) : plot.series[s].label;
      if (drawn[s] == 0) lab += " (no data)";
      const double w = 30 + text_width(lab, small) + 16;
      if (cx > left && cx + w > left + avail) {
        cx = left;
        row += 1;
      }
      items.push_back({s, cx, row});
      cx += w;
    }
    rows = static_cast<int>(row) + 1;
  }
  const double bottom = 22 + (plot.xlabel.empty() ? 0 : 18) + rows * 17 + 6;
  const double pw = std::max(40.0, W - left - right), ph = std::max(40.0, H - top - bottom);

  // x: markers on the first or last value get a few pixels of room inside the frame.
  bool any_points = false;
  for (size_t s = 0; s < plot.series.size(); ++s)
    any_points = any_points || (drawn[s] > 0 && plot.series[s].points);
  const double xpad = any_points ? std::min(7.0, 0.03 * pw) : 0.0, pwh = pw - 2 * xpad;
  auto px = [&](double x) { return left + xpad + (x - ax.lo) / (ax.hi - ax.lo) * pwh; };
  // y: a few pixels inside the frame, so that curves on an axis bound stay visible.
  const double ypad = std::min(8.0, 0.05 * ph), pyh = ph - 2 * ypad;
  auto py = [&](double y) {
    if (ay.log)
      return top + ypad + pyh -
             (std::log10(y) - std::log10(ay.lo)) / (std::log10(ay.hi) - std::log10(ay.lo)) * pyh;
    return top + ypad + pyh - (y - ay.lo) / (ay.hi - ay.lo) * pyh;
  };

  std::ostringstream o;
  char b[512];
  std::snprintf(
      b, sizeof b,
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 "
      "%.0f %.0f\" role=\"img\" font-family=\"system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, "
      "sans-serif\" font-size=\"%.0f\">\n",
      W, H, W, H, font);
  o << b;
  o << "<title>" << esc(plot.title.empty() ? "plot" : plot.title) << "</title>\n";
  o << "<rect x=\"0\" y=\"0\" width=\"" << W << "\" height=\"" << H << "\" fill=\"#ffffff\"/>\n";
  if (!plot.title.empty()) {
    std::snprintf(
        b, sizeof b,
        "<text x=\"%.1f\" y=\"20\" text-anchor=\"middle\" font-weight=\"600\" font-size=\"13\">",
        left + pw / 2);
    o << b << esc(plot.title) << "</text>\n";
  }

  // Grid and ticks.
  o << "<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n";
  for (double t : ax.ticks) {
    std::snprintf(b, sizeof b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px(t),
                  top, px(t), top + ph);
    o << b;
  }
  for (double t : ay.ticks) {
    std::snprintf(b, sizeof b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", left,
                  py(t), left + pw, py(t));
    o << b;
  }
  o << "</g>\n";
  std::snprintf(
      b, sizeof b,
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\" "
      "stroke-width=\"1\"/>\n",
      left, top, pw, ph);
  o << b;
  o << "<g fill=\"#333\" font-size=\"" << small << "\">\n";
  for (double t : ax.ticks) {
    std::snprintf(
        b, sizeof b,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/><text x=\"%.1f\" y=\"%.1f\" "
        "text-anchor=\"middle\">",
        px(t), top + ph, px(t), top + ph + 4, px(t), top + ph + 16);
    o << b << esc(tick_label(t, ax.step)) << "</text>\n";
  }
  for (double t : ay.ticks) {
    std::snprintf(
        b, sizeof b,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/><text x=\"%.1f\" y=\"%.1f\" "
        "text-anchor=\"end\">",
        left - 4, py(t), left, py(t), left - 6, py(t) + 4);
    o << b << esc(tick_label(t, ay.step)) << "</text>\n";
  }
  o << "</g>\n";
  // Axis titles.
  if (!plot.xlabel.empty()) {
    std::snprintf(b, sizeof b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", left + pw / 2,
                  top + ph + 34);
    o << b << esc(plot.xlabel) << "</text>\n";
  }
  if (!plot.ylabel.empty()) {
    std::snprintf(b, sizeof b,
                  "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\">",
                  16.0, top + ph / 2);
    o << b << esc(plot.ylabel + (plot.log_y ? " (log scale)" : "")) << "</text>\n";
  }

  // Series: exactly one <path> per series with drawable points; markers first,
  // so that reference curves stay visible over dense measured data.
  std::vector<size_t> order;
  for (size_t s = 0; s < plot.series.size(); ++s)
    if (drawn[s] > 0 && plot.series[s].points) order.push_back(s);
  for (size_t s = 0; s < plot.series.size(); ++s)
    if (drawn[s] > 0 && !plot.series[s].points) order.push_back(s);
  for (size_t s : order) {
    const Series& se = plot.series[s];
    const char* colour = plot_colour(s);
    const size_t n = std::min(se.x.size(), se.y.size());
    std::string d;
    const int shape = static_cast<int>(s);
    if (se.points) {
      for (size_t i = 0; i < n; ++i)
        if (drawable(se.x[i], false) && drawable(se.y[i], plot.log_y))
          marker_path(d, shape, px(se.x[i]), py(se.y[i]), drawn[s] > 60 ? 2.7 : 3.6);
      o << "<path d=\"" << d << "\" fill=\"" << colour
        << "\" stroke=\"#ffffff\" stroke-width=\"0.8\"/>\n";
    } else {
      // A gap (undrawable value) starts a new subpath; a lone point gets a short mark.
      bool pen = false;
      size_t run = 0;
      for (size_t i = 0; i < n; ++i) {
        if (!drawable(se.x[i], false) || !drawable(se.y[i], plot.log_y)) {
          if (pen && run == 1) d += "h0.01";
          pen = false;
          continue;
        }
        std::snprintf(b, sizeof b, "%s%.1f %.1f", pen ? "L" : "M", px(se.x[i]), py(se.y[i]));
        d += b;
        run = pen ? run + 1 : 1;
        pen = true;
      }
      if (pen && run == 1) d += "h0.01";
      o << "<path d=\"" << d << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" "
        << "stroke-linejoin=\"round\" stroke-linecap=\"round\""
        << (se.dashed ? " stroke-dasharray=\"7 5\"" : "") << "/>\n";
    }
  }
  if (!any) {
    std::snprintf(
        b, sizeof b,
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n",
        left + pw / 2, top + ph / 2);
    o << b;
  }
  if (skipped > 0) {
    std::snprintf(b, sizeof b,
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#888\" font-size=\"10\">",
                  left + pw - 4, top + 12);
    o << b << skipped << (skipped == 1 ? " value" : " values") << " not shown ("
      << (plot.log_y ? "non-finite or &#8804; 0" : "non-finite") << ")</text>\n";
  }

  // Legend.
  const double legend_top = top + ph + 22 + (plot.xlabel.empty() ? 0 : 18);
  for (const Item& it : items) {
    const Series& se = plot.series[it.s];
    const char* colour = plot_colour(it.s);
    const double y = legend_top + it.row * 17 + 5;
    if (se.points) {
      o << marker_swatch(static_cast<int>(it.s), it.x + 12, y, 4.0, colour) << "\n";
    } else {
      std::snprintf(
          b, sizeof b,
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
          it.x, y, it.x + 24, y, colour, se.dashed ? " stroke-dasharray=\"7 5\"" : "");
      o << b;
    }
    std::string lab = se.label.empty() ? "series " + std::to_string(it.s + 1) : se.label;
    if (drawn[it.s] == 0) lab += " (no data)";
    std::snprintf(b, sizeof b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\">", it.x + 30, y + 4,
                  small);
    o << b << esc(lab) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

// [SECTION] write_report --------------------------------------------------------------

namespace {

std::string now_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M UTC", &tm);
  return b;
}

std::string build_text() {
  std::string s = "Particle Sandbox";
#if defined(PS_GIT_COMMIT)
  s += std::string(", commit ") + PS_GIT_COMMIT;
#endif
#if defined(__clang__)
  s += ", clang " __clang_version__;
#elif defined(__GNUC__)
  s += ", GCC " __VERSION__;
#endif
#if defined(NDEBUG)
  s += ", optimised build";
#else
  s += ", debug build (assertions on)";
#endif
#if defined(PS_HAVE_CUDA)
  s += ", CUDA compiled";
#endif
  return s;
}

std::string threads_text(const Options& opt) {
  if (opt.threads > 0) return std::to_string(opt.threads);
  return std::to_string(std::max(1u, std::thread::hardware_concurrency())) +
         " (hardware concurrency)";
}

struct Tally {
  int pass = 0, miss = 0, error = 0, must_fail = 0;
};

Tally tally(const std::vector<CaseResult>& results) {
  Tally t;
  for (const auto& r : results) {
    Verdict v = verdict_of(r);
    if (v == Verdict::Pass)
      ++t.pass;
    else if (v == Verdict::Miss)
      ++t.miss;
    else
      ++t.error;
    if (v != Verdict::Pass && r.must_pass) ++t.must_fail;
  }
  return t;
}

std::string tally_text(const std::vector<CaseResult>& results, const Tally& t) {
  char b[256];
  std::snprintf(b, sizeof b, "%zu case%s: %d passed, %d missed, %d error%s. %s", results.size(),
                results.size() == 1 ? "" : "s", t.pass, t.miss, t.error, t.error == 1 ? "" : "s",
                t.must_fail == 0 ? "Every must-pass case passed."
                                 : (std::to_string(t.must_fail) + " must-pass case" +
                                    (t.must_fail == 1 ? "" : "s") + " did not pass.")
                                       .c_str());
  return b;
}

const char* kCss = R"(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d1d1f;
       max-width: 1100px; margin: 0 auto; padding: 24px 28px 60px; line-height: 1.45; background: #fff; }
h1 { font-size: 1.7em; margin: 0 0 6px; }
h2 { font-size: 1.3em; margin: 0 0 6px; }
.meta { color: #555; margin: 0 0 14px; }
.meta span { margin-right: 18px; white-space: nowrap; }
.banner { padding: 10px 14px; border-radius: 6px; font-weight: 600; margin: 10px 0 18px; }
.banner.ok { background: #e6f4ea; color: #14532d; border: 1px solid #9bd3ae; }
.banner.bad { background: #fdecea; color: #7f1d1d; border: 1px solid #f1a7a0; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 0.95em; }
th, td { border-bottom: 1px solid #ddd; padding: 5px 10px; text-align: left; vertical-align: top; }
th { background: #f4f5f7; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.badge { display: inline-block; min-width: 3.6em; text-align: center; padding: 1px 7px; border-radius: 4px;
         font-weight: 700; font-size: 0.85em; letter-spacing: 0.03em; color: #fff; }
.badge.pass { background: #1a7f37; }
.badge.miss { background: #c62828; }
.badge.info-miss { background: #b26a00; }
.badge.error { background: #4a148c; }
.kind { color: #555; font-size: 0.9em; }
section.case { border-top: 2px solid #e5e5e5; padding-top: 16px; margin-top: 26px; }
section.case h2 .badge { vertical-align: 2px; margin-right: 8px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 8px 0 12px; }
dt { font-weight: 600; color: #444; }
dd { margin: 0; }
.notes { white-space: pre-wrap; background: #f8f8fa; border-left: 3px solid #9aa4b2; padding: 8px 12px; }
.err { white-space: pre-wrap; background: #fdecea; border-left: 3px solid #c62828; padding: 8px 12px;
       font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.9em; }
.plots { display: flex; flex-wrap: wrap; gap: 14px; }
figure { margin: 0; }
svg.plot { max-width: 100%; height: auto; border: 1px solid #e5e5e5; border-radius: 4px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.92em; }
a { color: #0b57a4; text-decoration: none; }
@media print { section.case { break-inside: avoid-page; } body { max-width: none; } }
)";

bool write_file(const std::filesystem::path& p, const std::string& text, std::string* err) {
  try {
    write_file_atomic(p.string(), text);
  } catch (const WriteError& e) {
    if (err) *err = e.what();
    return false;
  }
  return true;
}

}  // namespace

bool write_report(const std::string& dir, const std::vector<CaseResult>& results,
                  const Options& opt, std::string* err) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    if (err) *err = dir + ": cannot create the report folder: " + ec.message();
    return false;
  }
  const Tally t = tally(results);
  const std::string when = now_text(), build = build_text(), threads = threads_text(opt);
  const std::string mode = opt.quick ? "quick (the ctest subset, smaller sizes)" : "full";
  const std::string ran = backend_tally_text(results, opt.backend);

  // ---- report.html
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>Particle Sandbox — verification report</title>\n<style>" << kCss
    << "</style>\n</head>\n<body>\n";
  h << "<h1>Particle Sandbox — verification report</h1>\n";
  h << "<p class=\"meta\"><span>" << esc(when) << "</span><span>" << esc(build)
    << "</span><span>threads: " << esc(threads) << "</span><span>run: " << esc(mode)
    << "</span><span>backend: " << esc(opt.backend) << "</span></p>\n";
  h << "<p>Each case runs a model on the backend asked for (<code>--backend</code>: the CPU, the reference, or "
       "CUDA) against a cited reference (an analytical solution, a conservation law or published measurements) and "
       "compares the measured values with a stated tolerance; references and tolerances are the same on every "
       "backend. <i>Ran on</i> says where each case ran: a case with nothing to put on a device says why it ran on "
       "the CPU, and a device world that failed mid-case and went on on the CPU is named. "
       "<b>PASS</b>: every check is within its tolerance. <b>MISS</b>: at least one check is not (the notes give the "
       "reason). <b>ERROR</b>: the case could not run. A tolerance of ± x % is relative to the reference; ≤ and ≥ mean the reference is an upper or lower bound. Only <i>must-pass</i> cases decide the exit status of "
       "<code>sandbox verify</code>; <i>informative</i> cases show how far a model is from a reference it is not "
       "expected to match exactly.</p>\n";
  h << "<div class=\"banner " << (t.must_fail == 0 ? "ok" : "bad") << "\">"
    << esc(tally_text(results, t)) << "<br>Ran on: " << esc(ran) << ".</div>\n";

  h << "<table class=\"summary\">\n<thead><tr><th>case</th><th>group</th><th>verdict</th><th>kind</th><th>time</th>"
       "<th>ran on</th><th>title</th></tr></thead>\n<tbody>\n";
  for (const auto& r : results) {
    const Verdict v = verdict_of(r);
    h << "<tr><td><a href=\"#" << anchor(r.id) << "\"><code>" << esc(r.id) << "</code></a></td><td>"
      << esc(r.group) << "</td><td><span class=\"badge " << verdict_class(v, r.must_pass) << "\">"
      << verdict_name(v) << "</span></td><td class=\"kind\">"
      << (r.must_pass ? "must-pass" : "informative") << "</td><td class=\"num\">"
      << esc(seconds_text(r.seconds)) << "</td><td class=\"kind\">" << esc(ran_on_short(r.ran_on))
      << "</td><td>" << esc(r.title) << "</td></tr>\n";
  }
  if (results.empty()) h << "<tr><td colspan=\"7\"><i>no cases were run</i></td></tr>\n";
  h << "</tbody>\n</table>\n";

  for (const auto& r : results) {
    const Verdict v = verdict_of(r);
    h << "<section class=\"case\" id=\"" << anchor(r.id) << "\">\n<h2><span class=\"badge "
      << verdict_class(v, r.must_pass) << "\">" << verdict_name(v) << "</span>"
      << esc(r.title.empty() ? r.id : r.title) << "</h2>\n";
    h << "<p class=\"kind\"><code>" << esc(r.id) << "</code>"
      << (r.group.empty() ? "" : " · " + esc(r.group)) << " · "
      << (r.must_pass ? "must-pass" : "informative") << " · " << esc(seconds_text(r.seconds))
      << "</p>\n";
    {
      h << "<dl>\n";
      h << "<dt>Ran on</dt><dd>" << esc(r.ran_on.text()) << "</dd>\n";
      if (!r.model.empty()) h << "<dt>Model</dt><dd>" << esc(r.model) << "</dd>\n";
      if (!r.setup.empty()) h << "<dt>Setup</dt><dd>" << esc(r.setup) << "</dd>\n";
      if (!r.reference.empty()) h << "<dt>Reference</dt><dd>" << esc(r.reference) << "</dd>\n";
      h << "</dl>\n";
    }
    if (!r.error.empty())
      h << "<p><b>Error:</b></p>\n<div class=\"err\">" << esc(r.error) << "</div>\n";
    if (!r.checks.empty()) {
      h << "<table class=\"checks\">\n<thead><tr><th>quantity</th><th>measured</th><th>reference</th>"
           "<th>tolerance</th><th>deviation</th><th>verdict</th></tr></thead>\n<tbody>\n";
      for (const Check& c : r.checks) {
        h << "<tr><td>" << esc(c.quantity) << "</td><td class=\"num\">"
          << esc(with_unit(num(c.measured), c.unit)) << "</td><td class=\"num\">"
          << esc(reference_text(c)) << "</td><td class=\"num\">" << esc(tolerance_text(c))
          << "</td><td class=\"num\">" << esc(deviation_text(c)) << "</td><td><span class=\"badge "
          << (c.pass ? "pass" : (r.must_pass ? "miss" : "info-miss")) << "\">"
          << (c.pass ? "PASS" : "MISS") << "</span></td></tr>\n";
      }
      h << "</tbody>\n</table>\n";
    } else if (r.error.empty()) {
      h << "<p class=\"kind\"><i>This case has no checks.</i></p>\n";
    }
    if (!r.plots.empty()) {
      h << "<div class=\"plots\">\n";
      for (const Plot& p : r.plots) h << "<figure>\n" << plot_svg(p) << "</figure>\n";
      h << "</div>\n";
    }
    if (!r.notes.empty()) h << "<div class=\"notes\">" << esc(r.notes) << "</div>\n";
    h << "</section>\n";
  }
  h << "</body>\n</html>\n";

  // ---- summary.md
  std::ostringstream m;
  m << "# Particle Sandbox — verification report\n\n";
  m << "- date: " << when << "\n- build: " << md_cell(build) << "\n- threads: " << threads
    << "\n- run: " << mode << "\n- backend: " << md_cell(opt.backend) << "\n\n";
  m << "**" << tally_text(results, t) << "**\n\n";
  m << "Ran on: " << md_cell(ran) << ".\n\n";
  m << "| case | group | verdict | kind | time | ran on | title |\n|---|---|---|---|---:|---|---|\n";
  for (const auto& r : results)
    m << "| `" << md_cell(r.id) << "` | " << md_cell(r.group) << " | "
      << verdict_name(verdict_of(r)) << " | " << (r.must_pass ? "must-pass" : "informative")
      << " | " << seconds_text(r.seconds) << " | " << md_cell(ran_on_short(r.ran_on)) << " | "
      << md_cell(r.title) << " |\n";
  for (const auto& r : results) {
    // Each block is preceded by one blank line.
    m << "\n## " << verdict_name(verdict_of(r)) << " `" << md_cell(r.id) << "`"
      << (r.title.empty() ? "" : " — " + md_cell(r.title)) << "\n";
    m << "\n"
      << (r.must_pass ? "must-pass" : "informative")
      << (r.group.empty() ? "" : ", " + md_cell(r.group)) << ", " << seconds_text(r.seconds)
      << "\n";
    m << "\nRan on: " << md_cell(r.ran_on.text()) << "\n";
    if (!r.reference.empty()) m << "\nReference: " << md_cell(r.reference) << "\n";
    if (!r.error.empty()) m << "\nError: " << md_cell(r.error) << "\n";
    if (!r.checks.empty()) {
      m << "\n| quantity | measured | reference | tolerance | deviation | verdict |\n|---|---:|---:|---:|---:|---|\n";
      for (const Check& c : r.checks)
        m << "| " << md_cell(c.quantity) << " | " << md_cell(with_unit(num(c.measured), c.unit))
          << " | " << md_cell(reference_text(c)) << " | " << md_cell(tolerance_text(c)) << " | "
          << md_cell(deviation_text(c)) << " | " << (c.pass ? "PASS" : "MISS") << " |\n";
    }
    if (!r.notes.empty()) m << "\nNotes: " << md_cell(r.notes) << "\n";
  }

  const fs::path d(dir);
  if (!write_file(d / "report.html", h.str(), err)) return false;
  if (!write_file(d / "summary.md", m.str(), err)) return false;
  return true;
}

}  // namespace verify
}  // namespace ps
