// A scatter of labelled points with a front joined by a line: cost against throughput, with the
// clusters no other beats on both (the Pareto front) marked.

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "report/charts.hpp"

namespace commscale {
namespace {

constexpr double kWidth = 760.0;
constexpr std::string_view kFront = "#B00020";

}  // namespace

std::vector<bool> pareto_front(const std::vector<ScatterPoint>& points) {
  std::vector<bool> out(points.size(), true);
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = 0; j < points.size() && out[i]; ++j) {
      const ScatterPoint& a = points[i];
      const ScatterPoint& b = points[j];
      // b dominates a: at least the throughput for at most the cost, better in one.
      const bool dominated = b.x >= a.x && b.y <= a.y && (b.x > a.x || b.y < a.y);
      if (j != i && dominated) out[i] = false;
    }
  }
  return out;
}

std::string scatter_chart_svg(const ScatterChart& chart) {
  double x_hi = 0.0;
  double y_hi = 0.0;
  for (const ScatterPoint& p : chart.points) {
    x_hi = std::max(x_hi, p.x);
    y_hi = std::max(y_hi, p.y);
  }
  const Axis xa = linear_axis(0.0, x_hi);
  const Axis ya = linear_axis(0.0, y_hi);
  const double left = 70.0;
  const double right = kWidth - 30.0;
  const double top = 34.0;
  const double bottom = 320.0;
  SvgWriter svg(kWidth, bottom + 62.0, chart.title);
  svg.text(kWidth / 2, 18.0, chart.title, "middle", 14.0);
  const PlotArea area{left, right, top, bottom};
  const auto px = [&](double x) { return area.x(xa, x); };
  const auto py = [&](double y) { return area.y(ya, y); };
  draw_axes(svg, area, xa, ya, chart.x_label, chart.y_label);
  const std::vector<bool> front = pareto_front(chart.points);
  std::vector<std::pair<double, double>> line;
  for (std::size_t i = 0; i < chart.points.size(); ++i) {
    if (front[i]) line.emplace_back(chart.points[i].x, chart.points[i].y);
  }
  std::sort(line.begin(), line.end());
  for (auto& [x, y] : line) x = px(x), y = py(y);
  if (line.size() > 1) svg.polyline(line, kFront, 1.5);
  for (std::size_t i = 0; i < chart.points.size(); ++i) {
    const ScatterPoint& p = chart.points[i];
    const std::string tip = fmt::format("{}: {} {}, {} {}{}", p.label, short_number(p.x), chart.x_label,
                                        short_number(p.y), chart.y_label, front[i] ? " (on the Pareto front)" : "");
    svg.circle(px(p.x), py(p.y), front[i] ? 5.5 : 4.0, front[i] ? kFront : palette_colour(0), tip);
    svg.text(px(p.x) + 8.0, py(p.y) - 6.0, p.label, "start", 11.0);
  }
  svg.text(left, bottom + 54.0, "red: the Pareto front (no other cluster has more throughput for less cost)", "start",
           11.0, 0.0, kFront);
  return svg.str();
}

}  // namespace commscale
