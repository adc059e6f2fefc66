#include "cronwheel/net/http_message.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>

namespace cronwheel::net {
namespace {

char LowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool CaseInsensitiveLess::operator()(std::string_view a, std::string_view b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](char x, char y) { return LowerAscii(x) < LowerAscii(y); });
}

bool Request::has_header(std::string_view name) const {
  return headers.find(name) != headers.end();
}

std::string Request::get_header_value(std::string_view name, std::size_t id) const {
  auto [it, end] = headers.equal_range(name);
  for (std::size_t i = 0; it != end; ++it, ++i) {
    if (i == id) return it->second;
  }
  return "";
}

std::size_t Request::get_header_value_count(std::string_view name) const {
  const auto [begin, end] = headers.equal_range(name);
  return static_cast<std::size_t>(std::distance(begin, end));
}

bool Request::has_param(std::string_view name) const {
  return params.find(name) != params.end();
}

std::string Request::get_param_value(std::string_view name, std::size_t id) const {
  auto [it, end] = params.equal_range(name);
  for (std::size_t i = 0; it != end; ++it, ++i) {
    if (i == id) return it->second;
  }
  return "";
}

void Response::set_header(std::string_view name, std::string_view value) {
  if (value.find_first_of("\r\n") != std::string_view::npos ||
      name.find_first_of("\r\n:") != std::string_view::npos) {
    return;
  }
  const auto [begin, end] = headers.equal_range(name);
  headers.erase(begin, end);
  headers.emplace(std::string(name), std::string(value));
}

bool Response::has_header(std::string_view name) const {
  return headers.find(name) != headers.end();
}

std::string Response::get_header_value(std::string_view name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

void Response::set_content(std::string content, std::string_view content_type) {
  body = std::move(content);
  set_header("Content-Type", content_type);
}

std::string PercentEncode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

std::string PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

Params ParseQuery(std::string_view query) {
  Params params;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) {
      params.emplace(PercentDecode(pair, true), "");
    } else {
      params.emplace(PercentDecode(pair.substr(0, eq), true), PercentDecode(pair.substr(eq + 1), true));
    }
  }
  return params;
}

}  // namespace cronwheel::net
