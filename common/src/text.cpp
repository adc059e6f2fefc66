#include "cronwheel/text.hpp"

namespace cronwheel {
namespace {

constexpr std::string_view kSpaces = " \t\r\n";

bool IsContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U;
}

}  // namespace

bool IsBlank(std::string_view s) {
  return s.find_first_not_of(kSpaces) == std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  const auto begin = s.find_first_not_of(kSpaces);
  if (begin == std::string_view::npos) return {};
  const auto end = s.find_last_not_of(kSpaces);
  return s.substr(begin, end - begin + 1);
}

std::vector<std::string> SplitCommas(std::string_view s) {
  std::vector<std::string> out;
  while (true) {
    const auto comma = s.find(',');
    const auto part = Trim(s.substr(0, comma));
    if (!part.empty()) out.emplace_back(part);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

std::string_view Utf8Prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t n = max_bytes;
  // s[n] is the first byte left out: while it continues a sequence, the sequence started before the cut.
  while (n > 0 && IsContinuation(s[n]))
    --n;
  return s.substr(0, n);
}

std::string Utf8Truncate(std::string_view s, std::size_t max_bytes, std::string_view marker) {
  if (s.size() <= max_bytes) return std::string(s);
  std::string out(Utf8Prefix(s, max_bytes));
  out += marker;
  return out;
}

std::string WithoutNulBytes(std::string s) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  for (auto at = s.find('\0'); at != std::string::npos; at = s.find('\0', at + kReplacement.size()))
    s.replace(at, 1, kReplacement);
  return s;
}

}  // namespace cronwheel
