#pragma once
// The request and the response of cronwheel's HTTP servers (cronwheel/net/http_server.hpp) as route
// handlers see them: plain values, no I/O.
//
// Names follow what the route code has always called them (cpp-httplib's vocabulary: `get_header_value`,
// `has_param`, `set_content`), so a handler reads the same whichever server fills it.
//
// A Request is neither copyable nor movable: `matches` holds iterators into `path`, which a copy or a move
// of a short string would leave dangling. The server builds each one in place.
//
// Thread-safety: none; a request and its response belong to the one thread running their handler.

#include <any>
#include <cstddef>
#include <map>
#include <regex>
#include <string>
#include <string_view>

namespace cronwheel::net {

// Header names compare case-insensitively (RFC 9110 §5.1).
struct CaseInsensitiveLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const;
};
using Headers = std::multimap<std::string, std::string, CaseInsensitiveLess>;
// Query parameters, percent-decoded, in the order given; a name may repeat.
using Params = std::multimap<std::string, std::string, std::less<>>;

struct Request {
  Request() = default;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  Request(Request&&) = delete;
  Request& operator=(Request&&) = delete;
  ~Request() = default;

  std::string method;   // "GET", "POST", ... as sent (upper case by RFC 9110 §9.1)
  std::string target;   // the request target as sent: path and query
  std::string path;     // the target's path, percent-decoded ("/api/v1/jobs/7")
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  Headers headers;
  Params params;
  std::string body;
  std::string remote_addr;  // the peer's IP address ("127.0.0.1", "::1")
  int remote_port = 0;
  std::smatch matches;  // the matched route's captures, into `path`
  // What a route's admission step found out about the caller (say, who it is), for its handler.
  std::any admitted;
  // Set by a route's check_head or admit when the caller presented valid credentials (a token, a session):
  // the server then counts the connection among authenticated ones (cronwheel/net/connection_quota.hpp),
  // which a peer without credentials cannot crowd out.
  bool authenticated = false;

  [[nodiscard]] bool has_header(std::string_view name) const;
  // The id-th value of header `name`, or "" when there is none.
  [[nodiscard]] std::string get_header_value(std::string_view name, std::size_t id = 0) const;
  [[nodiscard]] std::size_t get_header_value_count(std::string_view name) const;
  [[nodiscard]] bool has_param(std::string_view name) const;
  // The id-th value of query parameter `name`, or "" when there is none.
  [[nodiscard]] std::string get_param_value(std::string_view name, std::size_t id = 0) const;
};

struct Response {
  int status = 200;
  Headers headers;
  std::string body;

  // Replaces every value of header `name` with `value`. A value holding CR or LF is not set (it would end
  // the header).
  void set_header(std::string_view name, std::string_view value);
  [[nodiscard]] bool has_header(std::string_view name) const;
  [[nodiscard]] std::string get_header_value(std::string_view name) const;
  // The body and its Content-Type.
  void set_content(std::string content, std::string_view content_type);
};

// "/a%20b" -> "/a b". A '%' not followed by two hex digits stays as it is; '+' stays '+' (it means a space
// only in a query). Never fails.
std::string PercentDecode(std::string_view text, bool plus_is_space = false);

// "a b/c" -> "a%20b%2Fc": every byte but RFC 3986's unreserved characters (letters, digits, '-', '.', '_',
// '~') as %XX, for a query value, a path segment or an application/x-www-form-urlencoded field.
std::string PercentEncode(std::string_view text);

// "a=1&b=x%20y&a=2" -> {a:1, a:2, b:"x y"}; a name without '=' has the value "".
Params ParseQuery(std::string_view query);

}  // namespace cronwheel::net
