#pragma once
// Aligned text tables for the terminal, the client's default output (`--json` prints the API's JSON
// instead). Each column is as wide as its widest cell, measured in terminal columns: UTF-8 aware, so East
// Asian wide characters (job descriptions are often Chinese in XXL-JOB shops) count 2 and combining marks
// 0 (the rule of Markus Kuhn's wcwidth, from Unicode's East Asian Width property). Columns are separated by
// two spaces; no line ends in spaces. A cell is shown on one line: a line break or tab shows as "\n" or
// "\t", any other control character as "?". A cell wider than its column's limit is cut and ends in "…".
//
// Rendering a table of R rows and C columns is O(R*C) cells. Not thread-safe (a plain value).

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cronwheel::cli {

// The width of `text` in terminal columns (as above). Invalid UTF-8 bytes count 1 each.
std::size_t DisplayWidth(std::string_view text);

// `text` on one line: "\n" for a line break, "\t" for a tab, "?" for other control characters.
std::string OneLine(std::string_view text);

// `text` cut to at most `width` terminal columns, ending in "…" when it was cut (width >= 1).
std::string CutToWidth(std::string_view text, std::size_t width);

class Table {
 public:
  enum class Align { kLeft, kRight };

  explicit Table(std::vector<std::string> headers);

  // Right-aligns column `column` (numbers). Precondition: column < the number of headers.
  Table& AlignRight(std::size_t column);
  // Cuts the cells of `column` to `width` terminal columns (0 = no limit; the default).
  Table& LimitWidth(std::size_t column, std::size_t width);

  // Adds a row; missing trailing cells are empty. Throws std::invalid_argument for more cells than headers.
  void AddRow(std::vector<std::string> cells);
  [[nodiscard]] std::size_t rows() const { return rows_.size(); }

  // The header line and one line per row, each ending in '\n'.
  [[nodiscard]] std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::size_t> limit_;
  std::vector<std::vector<std::string>> rows_;
};

// A two-column FIELD/VALUE listing of one object, in the order given (for `jobs show`).
std::string RenderFields(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace cronwheel::cli
