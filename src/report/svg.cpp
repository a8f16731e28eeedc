#include "report/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

namespace commscale {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string short_number(double value) {
  if (value == 0.0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e6 || magnitude < 1e-3) return fmt::format("{:.2e}", value);
  std::string s = fmt::format("{:.3g}", value);
  if (s.find('e') != std::string::npos) s = fmt::format("{:.0f}", value);  // 3 significant digits of 123456
  return s;
}

std::string short_bytes(double bytes) {
  static constexpr std::array<const char*, 6> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < kUnits.size()) {
    bytes /= 1024.0;
    ++unit;
  }
  return fmt::format("{} {}", short_number(bytes), kUnits[unit]);
}

double text_width(std::string_view text, double size) {
  // Characters, not bytes: UTF-8 continuation bytes (10xxxxxx) do not start a character.
  const auto characters = std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; });
  return 0.62 * size * static_cast<double>(characters);
}

double Axis::fraction(double value) const {
  if (scale == AxisScale::kLog2) {
    const double v = std::max(value, lo);
    return (std::log2(v) - std::log2(lo)) / (std::log2(hi) - std::log2(lo));
  }
  return (value - lo) / (hi - lo);
}

namespace {

// The smallest of 1, 2, 2.5 and 5 times a power of ten that is at least `x` (> 0).
double nice_step(double x) {
  const double power = std::pow(10.0, std::floor(std::log10(x)));
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * power >= x * (1 - 1e-12)) return m * power;
  }
  return 10.0 * power;
}

}  // namespace

Axis linear_axis(double lo, double hi) {
  Axis a;
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {
    a.ticks = {0.0, 0.25, 0.5, 0.75, 1.0};
    return a;
  }
  // At most 5 intervals: step = nice(span / 5).
  const double step = nice_step((hi - lo) / 5.0);
  a.lo = std::floor(lo / step) * step;
  a.hi = std::ceil(hi / step) * step;
  const auto intervals = static_cast<int>(std::lround((a.hi - a.lo) / step));
  for (int i = 0; i <= intervals; ++i) {
    const double t = a.lo + step * i;
    a.ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return a;
}

Axis log2_axis(double lo, double hi) {
  Axis a;
  a.scale = AxisScale::kLog2;
  if (!(lo > 0.0) || !(hi > 0.0) || !std::isfinite(lo) || !std::isfinite(hi)) lo = hi = 1.0;
  const int first = static_cast<int>(std::floor(std::log2(lo)));
  int last = static_cast<int>(std::ceil(std::log2(hi)));
  if (last == first) ++last;
  a.lo = std::ldexp(1.0, first);
  a.hi = std::ldexp(1.0, last);
  // Every power of two, or every k-th so that no more than 9 remain (k = ceil(span / 8)).
  const int span = last - first;
  const int every = (span + 7) / 8;
  for (int e = first; e <= last; e += every) a.ticks.push_back(std::ldexp(1.0, e));
  return a;
}

SvgWriter::SvgWriter(double width, double height, std::string_view label)
    : width_(width), height_(height), label_(label) {}

namespace {
// Geometry from figures of 1e308 or NaN would print "inf" and "-nan", which no browser draws: every
// coordinate is clamped to a finite range far beyond any chart (non-finite: 0).
double drawable(double v) {
  constexpr double kLimit = 1e7;
  return std::isfinite(v) ? std::clamp(v, -kLimit, kLimit) : 0.0;
}

std::string tooltip_element(std::string_view tooltip) {
  return tooltip.empty() ? std::string() : fmt::format("<title>{}</title>", xml_escape(tooltip));
}
}  // namespace

void SvgWriter::rect(double x, double y, double w, double h, std::string_view fill, std::string_view tooltip) {
  const std::string inner = tooltip_element(tooltip);
  body_ += fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}")", drawable(x),
                       drawable(y), std::max(drawable(w), 0.0), std::max(drawable(h), 0.0), xml_escape(fill));
  body_ += inner.empty() ? "/>\n" : fmt::format(">{}</rect>\n", inner);
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
                     std::string_view dash) {
  body_ += fmt::format(R"(<line x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}" stroke-width="{}")",
                       drawable(x1), drawable(y1), drawable(x2), drawable(y2), xml_escape(stroke), drawable(width));
  if (!dash.empty()) body_ += fmt::format(R"( stroke-dasharray="{}")", xml_escape(dash));
  body_ += "/>\n";
}

void SvgWriter::text(double x, double y, std::string_view content, std::string_view anchor, double size, double rotate,
                     std::string_view fill) {
  body_ += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="{}" text-anchor="{}" fill="{}")", drawable(x),
                       drawable(y), drawable(size), xml_escape(anchor), xml_escape(fill));
  if (rotate != 0.0) {
    body_ += fmt::format(R"x( transform="rotate({} {:.2f} {:.2f})")x", drawable(rotate), drawable(x), drawable(y));
  }
  body_ += fmt::format(">{}</text>\n", xml_escape(content));
}

void SvgWriter::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width) {
  std::string coordinates;
  for (const auto& [x, y] : points) {
    coordinates += fmt::format("{}{:.2f},{:.2f}", coordinates.empty() ? "" : " ", drawable(x), drawable(y));
  }
  body_ += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"/>\n", coordinates,
                       xml_escape(stroke), drawable(width));
}

void SvgWriter::circle(double x, double y, double r, std::string_view fill, std::string_view tooltip) {
  const std::string inner = tooltip_element(tooltip);
  body_ += fmt::format(R"(<circle cx="{:.2f}" cy="{:.2f}" r="{}" fill="{}")", drawable(x), drawable(y),
                       std::max(drawable(r), 0.0), xml_escape(fill));
  body_ += inner.empty() ? "/>\n" : fmt::format(">{}</circle>\n", inner);
}

std::string SvgWriter::str() const {
  return fmt::format(
      R"(<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" role="img" aria-label="{2}">)"
      "\n<title>{2}</title>\n{3}</svg>\n",
      drawable(width_), drawable(height_), xml_escape(label_), body_);
}

std::string_view palette_colour(std::size_t i) {
  // Colour-blind-safe categorical palette (Okabe-Ito, without black and yellow).
  static constexpr std::array<std::string_view, 8> kColours = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                               "#56B4E9", "#E69F00", "#8C564B", "#7F7F7F"};
  return kColours[i % kColours.size()];
}

void draw_axes(SvgWriter& svg, const PlotArea& area, const Axis& xa, const Axis& ya, std::string_view x_label,
               std::string_view y_label, bool x_bytes) {
  constexpr std::string_view kGrid = "#e3e3e3";
  constexpr std::string_view kAxis = "#555";
  for (const double t : ya.ticks) {
    svg.line(area.left, area.y(ya, t), area.right, area.y(ya, t), kGrid);
    svg.text(area.left - 6.0, area.y(ya, t) + 4.0, short_number(t), "end", 11.0);
  }
  for (const double t : xa.ticks) {
    svg.line(area.x(xa, t), area.top, area.x(xa, t), area.bottom, kGrid);
    svg.text(area.x(xa, t), area.bottom + 16.0, x_bytes ? short_bytes(t) : short_number(t), "middle", 11.0);
  }
  svg.line(area.left, area.bottom, area.right, area.bottom, kAxis);
  svg.line(area.left, area.top, area.left, area.bottom, kAxis);
  svg.text((area.left + area.right) / 2, area.bottom + 34.0, x_label, "middle", 12.0);
  svg.text(16.0, (area.top + area.bottom) / 2, y_label, "middle", 12.0, -90.0);
}

}  // namespace commscale
