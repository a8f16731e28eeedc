#include "report/charts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace commscale {
namespace {

constexpr double kWidth = 760.0;
constexpr std::string_view kGrid = "#e3e3e3";
constexpr std::string_view kAxis = "#555";

// Legend entries in rows below the plot, starting at y; returns the y below the legend.
double draw_legend(SvgWriter& svg, const std::vector<std::pair<std::string, std::string>>& entries, double y) {
  double x = 20.0;
  for (const auto& [name, colour] : entries) {
    const double w = 26.0 + 7.0 * static_cast<double>(name.size());
    if (x + w > kWidth - 10.0) {
      x = 20.0;
      y += 18.0;
    }
    svg.rect(x, y - 9.0, 12.0, 12.0, colour);
    svg.text(x + 16.0, y + 1.0, name, "start", 12.0);
    x += w;
  }
  return y + 18.0;
}

// Rows the legend will take (same wrapping rule as draw_legend).
double legend_height(const std::vector<std::string>& names) {
  double x = 20.0;
  double rows = names.empty() ? 0.0 : 1.0;
  for (const std::string& name : names) {
    const double w = 26.0 + 7.0 * static_cast<double>(name.size());
    if (x + w > kWidth - 10.0) {
      x = 20.0;
      rows += 1.0;
    }
    x += w;
  }
  return rows * 18.0;
}

// Colours by category, in order of first appearance; "compute" blue, "bubble" grey, the rest from
// the palette after blue.
class CategoryColours {
 public:
  std::string operator()(const std::string& name) {
    const auto it = colours_.find(name);
    if (it != colours_.end()) return it->second;
    std::string colour;
    if (name == "compute") {
      colour = std::string(palette_colour(0));
    } else if (name == "bubble") {
      colour = "#BBBBBB";
    } else {
      colour = std::string(palette_colour(1 + next_++));
    }
    order_.push_back(name);
    return colours_[name] = colour;
  }
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> legend() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& n : order_) out.emplace_back(n, colours_.at(n));
    return out;
  }

 private:
  std::map<std::string, std::string> colours_;
  std::vector<std::string> order_;
  std::size_t next_ = 0;
};

}  // namespace

std::string line_chart_svg(const LineChart& chart) {
  const bool log_y = chart.y_scale == AxisScale::kLog2;
  // A point a log axis cannot place is left out.
  const auto drawn = [&](double x, double y) {
    return (chart.x_scale != AxisScale::kLog2 || x > 0.0) && (!log_y || y > 0.0);
  };
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = -x_lo;
  double y_lo = std::numeric_limits<double>::infinity();
  double y_hi = 0.0;
  for (const ChartSeries& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (!drawn(x, y)) continue;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
    }
  }
  for (const Ceiling& c : chart.ceilings) y_hi = std::max(y_hi, c.y);
  if (!std::isfinite(x_lo)) x_lo = x_hi = 1.0;
  if (!std::isfinite(y_lo)) y_lo = y_hi = 1.0;
  const Axis xa = chart.x_scale == AxisScale::kLog2 ? log2_axis(x_lo, x_hi) : linear_axis(x_lo, x_hi);
  const Axis ya = log_y ? log2_axis(y_lo, y_hi) : linear_axis(0.0, y_hi);

  std::vector<std::string> names;
  for (const ChartSeries& s : chart.series) names.push_back(s.name);
  const double left = 70.0;
  const double right = kWidth - 20.0;
  const double top = 34.0;
  const double bottom = 300.0;
  const double height = bottom + 50.0 + legend_height(names) + 6.0;
  SvgWriter svg(kWidth, height, chart.title);
  svg.text(kWidth / 2, 18.0, chart.title, "middle", 14.0);
  const PlotArea area{left, right, top, bottom};
  const auto px = [&](double x) { return area.x(xa, x); };
  const auto py = [&](double y) { return area.y(ya, y); };
  draw_axes(svg, area, xa, ya, chart.x_label, chart.y_label, chart.x_bytes);
  for (const Ceiling& c : chart.ceilings) {
    svg.line(left, py(c.y), right, py(c.y), "#B00020", 1.5, "6 4");
    svg.text(right - 4.0, py(c.y) - 5.0, c.label, "end", 11.0, 0.0, "#B00020");
  }
  std::vector<std::pair<std::string, std::string>> legend;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const std::string colour(palette_colour(i));
    std::vector<std::pair<double, double>> points;
    for (const auto& [x, y] : s.points) {
      if (drawn(x, y)) points.emplace_back(px(x), py(y));
    }
    svg.polyline(points, colour);
    for (const auto& [x, y] : s.points) {
      if (!drawn(x, y)) continue;
      svg.circle(px(x), py(y), 2.5, colour,
                 fmt::format("{}: {} → {}", s.name, chart.x_bytes ? short_bytes(x) : short_number(x), short_number(y)));
    }
    legend.emplace_back(s.name, colour);
  }
  draw_legend(svg, legend, bottom + 56.0);
  return svg.str();
}

std::string heatmap_svg(const Heatmap& chart) {
  const double cell_w = 78.0;
  const double cell_h = 34.0;
  const double left = 90.0;
  const double top = 62.0;
  double hi = 0.0;
  for (const auto& row : chart.values) {
    for (const auto& v : row) hi = std::max(hi, v.value_or(0.0));
  }
  const std::string caption = fmt::format("{} (darker: higher; from rows to columns)", chart.unit);
  // Wide enough for the cells, the title and the caption under the cells.
  const double width = std::max({320.0, left + cell_w * static_cast<double>(chart.columns.size()) + 20.0,
                                 text_width(chart.title, 14.0) + 40.0, left + text_width(caption, 11.0) + 20.0});
  const double height = top + cell_h * static_cast<double>(chart.rows.size()) + 30.0;
  SvgWriter svg(width, height, chart.title);
  svg.text(width / 2, 18.0, chart.title, "middle", 14.0);
  svg.text(left, 38.0, "to (columns) →", "start", 11.0, 0.0, "#555");
  for (std::size_t c = 0; c < chart.columns.size(); ++c) {
    svg.text(left + cell_w * (static_cast<double>(c) + 0.5), top - 6.0, chart.columns[c], "middle", 12.0);
  }
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const double y = top + cell_h * static_cast<double>(r);
    svg.text(left - 8.0, y + cell_h / 2 + 4.0, chart.rows[r], "end", 12.0);
    for (std::size_t c = 0; c < chart.columns.size(); ++c) {
      const double x = left + cell_w * static_cast<double>(c);
      const std::optional<double> v =
          r < chart.values.size() && c < chart.values[r].size() ? chart.values[r][c] : std::nullopt;
      if (!v) {
        svg.rect(x + 1, y + 1, cell_w - 2, cell_h - 2, "#eeeeee",
                 fmt::format("{} → {}: n/a", chart.rows[r], chart.columns[c]));
        svg.text(x + cell_w / 2, y + cell_h / 2 + 4.0, "–", "middle", 12.0, 0.0, "#888");
        continue;
      }
      // White to blue (#0072B2) by value / maximum.
      const double f = hi > 0 ? std::clamp(*v / hi, 0.0, 1.0) : 0.0;
      const auto mix = [f](int full) { return static_cast<int>(std::lround(255.0 + (full - 255.0) * f)); };
      const std::string fill = fmt::format("#{:02x}{:02x}{:02x}", mix(0x00), mix(0x72), mix(0xB2));
      svg.rect(x + 1, y + 1, cell_w - 2, cell_h - 2, fill,
               fmt::format("{} → {}: {} {}", chart.rows[r], chart.columns[c], short_number(*v), chart.unit));
      svg.text(x + cell_w / 2, y + cell_h / 2 + 4.0, short_number(*v), "middle", 12.0, 0.0, f > 0.55 ? "#fff" : "#222");
    }
  }
  svg.text(left, height - 10.0, caption, "start", 11.0, 0.0, "#555");
  return svg.str();
}

// Each bar's label on a line of its own above the bar, so that a label as long as a full plan is
// never cut: the chart widens to the longest label.
std::string stacked_bars_svg(const StackedBars& chart) {
  const double left = 20.0;
  const double top = 34.0;
  const double label_h = 16.0;
  const double bar_h = 20.0;
  const double gap = 8.0;
  const double row_h = label_h + bar_h + gap;
  double hi = 0.0;
  double width = std::max(kWidth, text_width(chart.title, 14.0) + 40.0);
  CategoryColours colours;
  for (const StackedBar& b : chart.bars) {
    double total = 0.0;
    for (const BarSegment& s : b.segments) {
      total += std::max(s.value, 0.0);
      (void)colours(s.name);
    }
    hi = std::max(hi, total);
    width = std::max(width, left + text_width(b.label, 12.0) + 20.0);
  }
  const double right = width - 30.0;
  const Axis xa = linear_axis(0.0, hi);
  const double bottom = top + row_h * static_cast<double>(chart.bars.size());
  std::vector<std::string> names;
  for (const auto& [n, c] : colours.legend()) names.push_back(n);
  const double height = bottom + 46.0 + legend_height(names) + 6.0;
  SvgWriter svg(width, height, chart.title);
  svg.text(width / 2, 18.0, chart.title, "middle", 14.0);
  const auto px = [&](double v) { return left + xa.fraction(v) * (right - left); };
  for (const double t : xa.ticks) {
    svg.line(px(t), top, px(t), bottom, kGrid);
    svg.text(px(t), bottom + 14.0, short_number(t), "middle", 11.0);
  }
  svg.text((left + right) / 2, bottom + 32.0, chart.value_label, "middle", 12.0);
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const StackedBar& b = chart.bars[i];
    const double y = top + row_h * static_cast<double>(i);
    svg.text(left, y + 12.0, b.label, "start", 12.0);
    double at = 0.0;
    for (const BarSegment& s : b.segments) {
      const double v = std::max(s.value, 0.0);
      svg.rect(px(at), y + label_h, px(at + v) - px(at), bar_h, colours(s.name),
               fmt::format("{}: {} {}", s.name, short_number(s.value), chart.value_label));
      at += v;
    }
  }
  svg.line(left, top, left, bottom, kAxis);
  draw_legend(svg, colours.legend(), bottom + 52.0);
  return svg.str();
}

std::string timeline_svg(const TimelineChart& chart) {
  const double left = 150.0;
  const double right = kWidth - 20.0;
  const double top = 34.0;
  const double lane_h = 16.0;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  CategoryColours colours;
  for (const Span& s : chart.spans) {
    lo = std::min(lo, s.start);
    hi = std::max(hi, s.end);
    (void)colours(s.category);
  }
  if (!std::isfinite(lo)) lo = hi = 0.0;
  const Axis xa = linear_axis(0.0, hi - lo);
  const double bottom = top + lane_h * static_cast<double>(chart.lanes.size());
  std::vector<std::string> names;
  for (const auto& [n, c] : colours.legend()) names.push_back(n);
  const double height = bottom + 46.0 + legend_height(names) + 6.0;
  SvgWriter svg(kWidth, height, chart.title);
  svg.text(kWidth / 2, 18.0, chart.title, "middle", 14.0);
  const auto px = [&](double t) { return left + xa.fraction(t - lo) * (right - left); };
  for (const double t : xa.ticks) {
    svg.line(px(lo + t), top, px(lo + t), bottom, kGrid);
    svg.text(px(lo + t), bottom + 14.0, short_number(t), "middle", 11.0);
  }
  svg.text((left + right) / 2, bottom + 32.0, chart.time_label, "middle", 12.0);
  for (std::size_t l = 0; l < chart.lanes.size(); ++l) {
    svg.text(left - 6.0, top + lane_h * (static_cast<double>(l) + 0.75), chart.lanes[l], "end", 10.0);
  }
  for (const Span& s : chart.spans) {
    const double y = top + lane_h * static_cast<double>(s.lane) + 2.0;
    // At least half a unit wide, so that short ops stay visible.
    svg.rect(px(s.start), y, std::max(px(s.end) - px(s.start), 0.5), lane_h - 4.0, colours(s.category),
             fmt::format("{} ({}): {} {}", s.name, s.category, short_number(s.end - s.start), chart.time_label));
  }
  svg.line(left, top, left, bottom, kAxis);
  draw_legend(svg, colours.legend(), bottom + 52.0);
  return svg.str();
}

}  // namespace commscale
