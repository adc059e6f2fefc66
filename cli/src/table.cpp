#include "cwcli/table.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace cronwheel::cli {
namespace {

// One code point of `s` from `i`: its value and length; an invalid byte is {-1, 1}.
std::pair<long, std::size_t> Decode(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return {b0, 1};
  std::size_t len = 0;
  long cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return {-1, 1};
  }
  if (i + len > s.size()) return {-1, 1};
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return {-1, 1};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, len};
}

struct Range {
  long first;
  long last;
};

bool In(long cp, const Range* begin, const Range* end) {
  const auto it = std::upper_bound(begin, end, cp, [](long v, const Range& r) { return v < r.first; });
  return it != begin && cp <= (it - 1)->last;
}

// Zero-width: the main blocks of combining marks, zero-width spaces and joiners, variation selectors.
constexpr std::array<Range, 14> kZeroWidth = {{{0x0300, 0x036F},
                                               {0x0483, 0x0489},
                                               {0x0591, 0x05BD},
                                               {0x0610, 0x061A},
                                               {0x064B, 0x065F},
                                               {0x0E31, 0x0E3A},
                                               {0x1AB0, 0x1AFF},
                                               {0x1DC0, 0x1DFF},
                                               {0x200B, 0x200F},
                                               {0x20D0, 0x20FF},
                                               {0xFE00, 0xFE0F},
                                               {0xFE20, 0xFE2F},
                                               {0xFEFF, 0xFEFF},
                                               {0xE0100, 0xE01EF}}};

// Wide (East Asian Wide and Fullwidth, and the emoji blocks terminals draw two columns wide).
constexpr std::array<Range, 16> kWide = {{{0x1100, 0x115F},
                                          {0x231A, 0x231B},
                                          {0x2E80, 0x303E},
                                          {0x3041, 0x33FF},
                                          {0x3400, 0x4DBF},
                                          {0x4E00, 0x9FFF},
                                          {0xA000, 0xA4CF},
                                          {0xAC00, 0xD7A3},
                                          {0xF900, 0xFAFF},
                                          {0xFE30, 0xFE4F},
                                          {0xFF00, 0xFF60},
                                          {0xFFE0, 0xFFE6},
                                          {0x1F300, 0x1F64F},
                                          {0x1F900, 0x1F9FF},
                                          {0x20000, 0x2FFFD},
                                          {0x30000, 0x3FFFD}}};

std::size_t CodePointWidth(long cp) {
  if (cp < 0) return 1;
  if (In(cp, kZeroWidth.data(), kZeroWidth.data() + kZeroWidth.size())) return 0;
  if (In(cp, kWide.data(), kWide.data() + kWide.size())) return 2;
  return 1;
}

std::string Pad(const std::string& cell, std::size_t width, Table::Align align) {
  const auto w = DisplayWidth(cell);
  if (w >= width) return cell;
  const std::string fill(width - w, ' ');
  return align == Table::Align::kRight ? fill + cell : cell + fill;
}

void RenderLine(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths,
                const std::vector<Table::Align>& align, std::string& out) {
  std::string line;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) line += "  ";
    line += Pad(cells[c], widths[c], align[c]);
  }
  while (!line.empty() && line.back() == ' ')
    line.pop_back();
  out += line;
  out += '\n';
}

}  // namespace

std::size_t DisplayWidth(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, len] = Decode(text, i);
    width += CodePointWidth(cp);
    i += len;
  }
  return width;
}

std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7F) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out;
}

std::string CutToWidth(std::string_view text, std::size_t width) {
  if (DisplayWidth(text) <= width) return std::string(text);
  std::string out;
  std::size_t used = 0;
  const std::size_t room = width > 0 ? width - 1 : 0;  // one column for the ellipsis
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, len] = Decode(text, i);
    const auto w = CodePointWidth(cp);
    if (used + w > room) break;
    out.append(cp < 0 ? std::string_view("?") : text.substr(i, len));
    used += w;
    i += len;
  }
  return out + "…";
}

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)), align_(headers_.size(), Align::kLeft), limit_(headers_.size(), 0) {}

Table& Table::AlignRight(std::size_t column) {
  align_.at(column) = Align::kRight;
  return *this;
}

Table& Table::LimitWidth(std::size_t column, std::size_t width) {
  limit_.at(column) = width;
  return *this;
}

void Table::AddRow(std::vector<std::string> cells) {
  if (cells.size() > headers_.size()) {
    throw std::invalid_argument("a table row has more cells than the table has columns");
  }
  cells.resize(headers_.size());
  for (std::size_t c = 0; c < cells.size(); ++c) {
    cells[c] = OneLine(cells[c]);
    if (limit_[c] > 0) cells[c] = CutToWidth(cells[c], limit_[c]);
  }
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<std::size_t> widths(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    widths[c] = DisplayWidth(headers_[c]);
    for (const auto& row : rows_)
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  std::string out;
  RenderLine(headers_, widths, align_, out);
  for (const auto& row : rows_)
    RenderLine(row, widths, align_, out);
  return out;
}

std::string RenderFields(const std::vector<std::pair<std::string, std::string>>& fields) {
  Table t({"FIELD", "VALUE"});
  for (const auto& [name, value] : fields)
    t.AddRow({name, value});
  return t.Render();
}

}  // namespace cronwheel::cli
