#include "net/http_framing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/beast/http/error.hpp>
#include <limits>

namespace cronwheel::net::detail {
namespace {

bool TakesBodyByDefault(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

std::string Cut(std::string_view text) {
  return std::string(text.substr(0, 200));
}

}  // namespace

HeadScan ScanHead(std::string_view received, HeadScan previous) {
  HeadScan scan = previous;
  if (scan.end > 0) return scan;
  for (std::size_t i = scan.scanned; i < received.size(); ++i) {
    if (received[i] != '\n') continue;
    if (i >= 3 && received.compare(i - 3, 4, "\r\n\r\n") == 0) {
      scan.end = i + 1;
      scan.scanned = scan.end;
      return scan;
    }
    if (i + 1 < received.size() && (received[i + 1] == ' ' || received[i + 1] == '\t')) scan.obs_fold = true;
  }
  // The last three bytes may begin the closing empty line, the last one a line break before a fold.
  scan.scanned = received.size() > 3 ? received.size() - 3 : 0;
  return scan;
}

std::optional<Refusal> CheckMessageFraming(const Request& req, bool obs_fold) {
  if (obs_fold) {
    return Refusal{400,
                   "a header line begins with a space or a tab (obsolete line folding, RFC 9112 §5.2): send "
                   "each field on one line",
                   true};
  }
  const auto codings = req.get_header_value_count("Transfer-Encoding");
  if (codings == 0) return std::nullopt;
  if (codings > 1) {
    return Refusal{
        400,
        fmt::format("the request has {} Transfer-Encoding fields; only one, 'chunked', is accepted", codings),
        true};
  }
  std::string_view value = req.headers.find("Transfer-Encoding")->second;
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
    value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
    value.remove_suffix(1);
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  const bool chunked = value.size() == 7 && std::equal(value.begin(), value.end(), "chunked",
                                                       [&](char a, char b) { return lower(a) == b; });
  if (!chunked) {
    // RFC 9112 §6.3: a request whose Transfer-Encoding is not (only) chunked has no length the server can
    // rely on; no coding but chunked is taken here.
    return Refusal{
        400,
        fmt::format("the Transfer-Encoding '{}' is not valid for a request: only 'chunked', alone, is "
                    "accepted",
                    Cut(value)),
        true};
  }
  if (req.has_header("Content-Length")) {
    // Both headers: how requests are smuggled past a proxy that reads the other one.
    return Refusal{400, "the request has both Transfer-Encoding and Content-Length; send only one", true};
  }
  return std::nullopt;
}

void ConfigureParser(RequestParser& parser, const HttpServerSettings& settings) {
  parser.header_limit(
      static_cast<std::uint32_t>(std::min<std::size_t>(settings.header_max_bytes, UINT32_MAX)));
  // The route's limit is set once the head is read and routed (no body byte is parsed before): a length
  // over it is then refused knowing the request, in its route's dialect.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // not boost::none: Beast 1.74 compares an
  // optional limit with `len > limit`, which is true for any length when the limit is none
}

Refusal ParseFailure(const boost::system::error_code& ec, const HttpServerSettings& settings,
                     std::uint64_t body_limit) {
  if (ec == http::error::header_limit) {
    return {431, fmt::format("the request line and headers are longer than the limit of {} bytes",
                             settings.header_max_bytes)};
  }
  if (ec == http::error::body_limit) {
    return {413, fmt::format("the body is larger than the limit of {} bytes", body_limit)};
  }
  if (ec == http::error::bad_content_length) {
    return {400, "the Content-Length header is not a single non-negative number"};
  }
  if (ec == http::error::bad_transfer_encoding) {
    return {400,
            "the Transfer-Encoding header is not valid for a request: only one, 'chunked', without "
            "Content-Length"};
  }
  if (ec == http::error::bad_chunk || ec == http::error::bad_chunk_extension) {
    return {400, "the chunked body is malformed"};
  }
  if (ec == http::error::bad_version) return {400, "the HTTP version is not HTTP/1.0 or HTTP/1.1"};
  if (ec == http::error::bad_method || ec == http::error::bad_target) {
    return {400, "the request line is malformed"};
  }
  if (ec == http::error::bad_field || ec == http::error::bad_value || ec == http::error::bad_line_ending) {
    return {400, "a header field is malformed"};
  }
  return {400, fmt::format("the request could not be read: {}", ec.message())};
}

std::optional<Refusal> FillRequest(const RequestParser::value_type& head, const HttpServerSettings& settings,
                                   Request& req) {
  req.method = std::string(head.method_string());
  req.target = std::string(head.target());
  req.version = head.version() == 10 ? "HTTP/1.0" : "HTTP/1.1";
  const auto query_at = req.target.find('?');
  const std::string_view raw_path = std::string_view(req.target).substr(0, query_at);
  req.path = PercentDecode(raw_path);
  if (query_at != std::string::npos)
    req.params = ParseQuery(std::string_view(req.target).substr(query_at + 1));
  std::size_t fields = 0;
  for (const auto& field : head) {
    if (++fields > settings.header_max_fields) {
      return Refusal{431,
                     fmt::format("the request has more than {} header fields", settings.header_max_fields)};
    }
    req.headers.emplace(std::string(field.name_string()), std::string(field.value()));
  }
  if (!raw_path.starts_with('/')) {
    return Refusal{400,
                   fmt::format("the request target '{}' is not a path starting with '/'", Cut(req.target))};
  }
  return std::nullopt;
}

RouteMatch FindRoute(const std::vector<RouteEntry>& routes, Request& req) {
  const std::string_view method =
      req.method == "HEAD" ? std::string_view("GET") : std::string_view(req.method);
  std::string allow;
  for (const auto& route : routes) {
    if (route.method == method) {
      if (std::regex_match(req.path, req.matches, route.pattern)) return {&route, {}, {}};
    } else if (std::smatch ignored; std::regex_match(req.path, ignored, route.pattern)) {
      if (allow.find(route.method) == std::string::npos) allow += (allow.empty() ? "" : ", ") + route.method;
    }
  }
  if (!allow.empty()) {
    return {
        nullptr, {405, fmt::format("method {} is not allowed on {}", Cut(req.method), Cut(req.path))}, allow};
  }
  return {nullptr, {404, fmt::format("no such resource: {} {}", Cut(req.method), Cut(req.path))}, {}};
}

std::uint64_t BodyLimit(const RouteEntry& route, const Request& req, const HttpServerSettings& settings) {
  if (route.options.body_max_bytes) return *route.options.body_max_bytes;
  return TakesBodyByDefault(req.method) ? settings.payload_max_bytes : 0;
}

std::optional<Refusal> CheckBodyFraming(const RouteEntry& route, const Request& req,
                                        std::optional<std::uint64_t> content_length, bool chunked,
                                        const HttpServerSettings& settings) {
  if (req.has_header("Transfer-Encoding") && (!chunked || req.has_header("Content-Length"))) {
    // CheckMessageFraming refuses these first; kept so that this rule holds on its own.
    return Refusal{400, "the Transfer-Encoding header is not valid for a request: only 'chunked', alone",
                   true};
  }
  const auto limit = BodyLimit(route, req, settings);
  const bool announced = chunked || (content_length && *content_length > 0);
  if (limit == 0 && announced) {
    return Refusal{400, fmt::format("{} {}: a {} request here has no body; send it without one",
                                    Cut(req.method), Cut(req.path), Cut(req.method))};
  }
  if (content_length && *content_length > limit) {
    return Refusal{413, fmt::format("the body is larger than the limit of {} bytes", limit)};
  }
  if (route.options.body_required && !chunked && !content_length) {
    return Refusal{411,
                   fmt::format("{} {} needs a Content-Length header (or Transfer-Encoding: chunked): its "
                               "body cannot be read without one",
                               Cut(req.method), Cut(req.path)),
                   true};
  }
  return std::nullopt;
}

}  // namespace cronwheel::net::detail
