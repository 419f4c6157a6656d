#include "core/html_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sift {
namespace {

constexpr const char* kStyle =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}"
    "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 8px;"
    "text-align:right}th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}.chart{margin:0}figcaption{font-weight:600}"
    "svg{max-width:100%;height:auto}.tick{font-size:10px;fill:#555}.count{font-size:11px}.legend "
    "span{margin-right:12px;font-size:12px}"
    ".legend i{display:inline-block;width:10px;height:10px;margin-right:4px}"
    ".note{color:#666;font-style:italic}.warn{color:#b00;font-weight:600}"
    "pre{background:#f6f6f6;padding:8px;overflow:auto;max-height:400px}"
    "tr.best td{font-weight:600;background:#eef6ee}td{overflow-wrap:anywhere}"
    "td.values{text-align:left;font-size:12px}"
    "td.reason{text-align:left;max-width:280px;font-size:12px}"
    "td.texts{text-align:left;max-width:700px;font-size:12px}td.texts "
    "ul{margin:0;padding-left:16px}";

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
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
      default:
        out += c;
    }
  }
  return out;
}

std::string tick(double v) {
  return std::abs(v) >= 1e4 || (std::abs(v) < 1e-2 && v != 0) ? fmt::format("{:.2e}", v)
                                                              : fmt::format("{:.3g}", v);
}

namespace {

// About `count` round values (1, 2 or 5 times a power of ten apart) from at or below `lo`
// to at or above `hi`: an axis reads 0, 50, 100, not 56.2 or 8.18e+03.
std::vector<double> round_ticks(double lo, double hi, int count) {
  const double raw = (hi - lo) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double v = first; v < hi + step * (1 - 1e-9); v += step) {
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  if (ticks.size() < 2) ticks.push_back(ticks.back() + step);
  return ticks;
}

// A tick of an axis whose ticks are `step` apart: as many decimals as the step needs,
// thousands as k and millions as M.
std::string tick_label(double v, double step) {
  if (std::abs(step) >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (std::abs(step) >= 1e3 && std::abs(v) >= 1e4) return fmt::format("{:g}k", v / 1e3);
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
  return fmt::format("{:.{}f}", v, decimals);
}

}  // namespace

std::string svg_chart(const std::string& title, const std::string& x_label,
                      const std::vector<Series>& series, bool dots) {
  double x0 = std::numeric_limits<double>::max(), x1 = -x0, y0 = x0, y1 = -x0;
  size_t points = 0;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
      ++points;
    }
  }
  std::string svg =
      fmt::format("<figure class=\"chart\"><figcaption>{}</figcaption>", escape(title));
  if (points == 0) return svg + "<p class=\"note\">no data</p></figure>";
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + (y0 == 0 ? 1 : std::abs(y0) * 0.1);
  const std::vector<double> xs = round_ticks(x0, x1, 4), ys = round_ticks(y0, y1, 4);
  x0 = xs.front(), x1 = xs.back(), y0 = ys.front(), y1 = ys.back();
  const double w = 440, h = 220, left = 60, right = 30, top = 10, bottom = 35;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * (w - left - right); };
  auto py = [&](double y) { return top + (1 - (y - y0) / (y1 - y0)) * (h - top - bottom); };
  svg += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\">",
      w, h, w, h);
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" "
      "stroke=\"#ccc\"/>",
      left, top, w - left - right, h - top - bottom);
  for (const double y : ys) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>",
                       left - 4, py(y) + 4, tick_label(y, ys[1] - ys[0]));
  }
  for (const double x : xs) {
    svg +=
        fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
                    px(x), h - bottom + 14, tick_label(x, xs[1] - xs[0]));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
                     (left + w - right) / 2, h - 4, escape(x_label));
  for (const auto& s : series) {
    if (dots || s.dots || s.points.size() == 1) {
      for (const auto& [x, y] : s.points) {
        svg += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{} "
            "({}, {})</title></circle>",
            px(x), py(y), s.color, escape(s.name), tick(x), tick(y));
      }
      continue;
    }
    std::string path;
    for (const auto& [x, y] : s.points) path += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    svg += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\">"
        "<title>{}</title></polyline>",
        s.color, path, escape(s.name));
  }
  svg += "</svg><div class=\"legend\">";
  for (const auto& s : series) {
    svg += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", s.color, escape(s.name));
  }
  return svg + "</div></figure>";
}

std::string html_page_start(const std::string& title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\"><title>{}</title><style>{}</style></head><body><h1>{}</h1>\n",
      escape(title), kStyle, escape(title));
}

std::string html_page_end() { return "\n</body></html>\n"; }

}  // namespace sift
