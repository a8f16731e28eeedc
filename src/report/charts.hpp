#pragma once

// The five kinds of chart `commscale report` draws, each a pure function from plain data to one
// <svg> element: lines over a linear or log-2 x axis (with optional horizontal ceilings), a heatmap,
// horizontal stacked bars, a timeline of spans in lanes, and a scatter with its Pareto front.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/svg.hpp"

namespace commscale {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
};

struct Ceiling {
  double y = 0.0;
  std::string label;
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  AxisScale x_scale = AxisScale::kLinear;
  bool x_bytes = false;  // label x ticks as sizes (KiB, MiB, ...)
  std::vector<ChartSeries> series;
  std::vector<Ceiling> ceilings;  // dashed lines across the plot; the y axis reaches them
  AxisScale y_scale = AxisScale::kLinear;  // kLog2: log-log with a log x (points at y <= 0 are left out)
};

struct Heatmap {
  std::string title;
  std::string unit;
  std::vector<std::string> rows;
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<double>>> values;  // [row][column]; empty cells grey
};

struct BarSegment {
  std::string name;  // the legend entry; equal names share a colour across bars
  double value = 0.0;
};

struct StackedBar {
  std::string label;
  std::vector<BarSegment> segments;
};

struct StackedBars {
  std::string title;
  std::string value_label;
  std::vector<StackedBar> bars;
};

struct Span {
  std::size_t lane = 0;
  double start = 0.0;
  double end = 0.0;
  std::string name;      // tooltip
  std::string category;  // colour and legend
};

struct TimelineChart {
  std::string title;
  std::string time_label;
  std::vector<std::string> lanes;
  std::vector<Span> spans;
};

// Labelled points, e.g. clusters by throughput (x) and cost (y); the Pareto front (pareto_front) is
// marked and joined.
struct ScatterPoint {
  std::string label;
  double x = 0.0;
  double y = 0.0;
};

struct ScatterChart {
  std::string title;
  std::string x_label;  // more is better
  std::string y_label;  // less is better
  std::vector<ScatterPoint> points;
};

// Whether each point is on the front: no other point has at least its x and at most its y, and is
// better in one of them.
[[nodiscard]] std::vector<bool> pareto_front(const std::vector<ScatterPoint>& points);

[[nodiscard]] std::string line_chart_svg(const LineChart& chart);
[[nodiscard]] std::string scatter_chart_svg(const ScatterChart& chart);
[[nodiscard]] std::string heatmap_svg(const Heatmap& chart);
[[nodiscard]] std::string stacked_bars_svg(const StackedBars& chart);
[[nodiscard]] std::string timeline_svg(const TimelineChart& chart);

}  // namespace commscale
