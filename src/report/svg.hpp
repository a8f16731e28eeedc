#pragma once

// The pieces every chart of `commscale report` is drawn with: XML escaping, axes (linear, or
// logarithmic in base 2 for message sizes) with tick values chosen by hand-checkable rules, and a
// small SVG writer. Pure string building: no browser, no library.

#include <string>
#include <string_view>
#include <vector>

namespace commscale {

// Escapes &, <, >, " and ' for text and attribute values.
[[nodiscard]] std::string xml_escape(std::string_view text);

// A number for a chart label: 3 significant digits, no exponent between 1e-3 and 1e6.
[[nodiscard]] std::string short_number(double value);
// A byte count as "8 B", "1 KiB", "64 MiB", "4 GiB" (powers of 1024; fractional where needed).
[[nodiscard]] std::string short_bytes(double bytes);

// A generous estimate of the width of `text` at font `size` in user units (0.62 em per character, more
// than system-ui's average), for laying out labels so that none is cut.
[[nodiscard]] double text_width(std::string_view text, double size);

enum class AxisScale { kLinear, kLog2 };

struct Axis {
  double lo = 0.0;  // the data range the axis spans (ticks included)
  double hi = 1.0;
  AxisScale scale = AxisScale::kLinear;
  std::vector<double> ticks;

  // Where `value` falls between lo (0) and hi (1).
  [[nodiscard]] double fraction(double value) const;
};

// A linear axis from 0 (or below, for negative data) to a "nice" number at or above `hi` (1, 2, 2.5
// or 5 times a power of ten), with 4 to 6 ticks on multiples of the step. Empty or zero data: 0 to 1.
[[nodiscard]] Axis linear_axis(double lo, double hi);
// A base-2 log axis covering [lo, hi] (both > 0) from the power of two at or below lo to the one at
// or above hi, with ticks at powers of two, thinned to at most 9.
[[nodiscard]] Axis log2_axis(double lo, double hi);

// Writes one <svg> element. Coordinates are in user units; the caller lays out the chart.
class SvgWriter {
 public:
  // `label` becomes the chart's accessible name and <title>.
  SvgWriter(double width, double height, std::string_view label);

  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view tooltip = {});
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1.0,
            std::string_view dash = {});
  // anchor: "start", "middle" or "end"; rotate: degrees around (x, y).
  void text(double x, double y, std::string_view content, std::string_view anchor = "start", double size = 12.0,
            double rotate = 0.0, std::string_view fill = "#222");
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width = 1.5);
  void circle(double x, double y, double r, std::string_view fill, std::string_view tooltip = {});

  // The finished element.
  [[nodiscard]] std::string str() const;

 private:
  double width_;
  double height_;
  std::string label_;
  std::string body_;
};

// The plot rectangle of an x-y chart, and where a value falls in it.
struct PlotArea {
  double left = 0.0;
  double right = 0.0;
  double top = 0.0;
  double bottom = 0.0;
  [[nodiscard]] double x(const Axis& a, double v) const { return left + a.fraction(v) * (right - left); }
  [[nodiscard]] double y(const Axis& a, double v) const { return bottom - a.fraction(v) * (bottom - top); }
};

// Grid lines and tick labels of both axes, the axis lines and their labels (x ticks as sizes with
// `x_bytes`).
void draw_axes(SvgWriter& svg, const PlotArea& area, const Axis& xa, const Axis& ya, std::string_view x_label,
               std::string_view y_label, bool x_bytes = false);

// A categorical colour for series `i` (a fixed palette, repeated).
[[nodiscard]] std::string_view palette_colour(std::size_t i);

}  // namespace commscale
