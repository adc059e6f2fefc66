#pragma once
// HTTP addresses as cronwheel reads them: an admin's or executor's base URL, and a "host:port" to
// listen on. Pure functions; thread-safe.

#include <absl/status/statusor.h>

#include <optional>
#include <string>
#include <string_view>

namespace cronwheel::net {

// A base address split for an HTTP client: "http://10.0.0.5:9999/xxl/" -> {origin "http://10.0.0.5:9999",
// host "10.0.0.5", port 9999, base_path "/xxl"}. Accepts http and https, with or without a trailing '/' or a
// path prefix (XXL-JOB executors register "http://host:port/"; admins may sit under /xxl-job-admin).
struct HttpAddress {
  std::string origin;     // scheme://host[:port], as given
  std::string host;       // host name or IP literal, without brackets
  int port = 0;           // explicit or the scheme's default
  std::string base_path;  // "" or "/prefix" (never ends in '/')
  // Path for one call: base_path + "/" + method, e.g. Path("run") == "/xxl/run".
  [[nodiscard]] std::string Path(std::string_view method) const;
};

// The parsed address, or an InvalidArgument status naming the address and what is wrong for anything but
// http(s)://host[:port][/path]: no scheme, user info, query, fragment, white space, backslashes, a port
// outside 1..65535, an IPv6 host without brackets, "//" or ".." in the path, e.g.
//   "address 'ftp://x' is not valid: the scheme must be http:// or https://; expected
//   http(s)://host[:port][/path]".
absl::StatusOr<HttpAddress> ParseHttpAddress(std::string_view address);

// An executor's address as the admin accepts it (registration, a MANUAL group's addresses): what
// ParseHttpAddress accepts, whose host is one of
//  - a DNS name of letters, digits, '-', '_' and '.' whose last label is not a number (RFC 1123 §2.1: a name
//    never has the form of an IPv4 address; "127.0.0.1." and "1.2.3.4.5" are neither names nor addresses);
//  - an IPv4 address as a dotted quad (127.0.0.1), not another form a resolver reads as the same address
//    (2130706433, 0177.0.0.1, 0x7f.1, 127.1: issue 44, F6);
//  - an IPv6 address in brackets without a zone id ("%eth0" picks an interface: issue 44, F6).
// Else an InvalidArgument status naming the address, what is wrong and what is valid, e.g.
//   "address 'http://0x7f.1:9999/' is not valid: its host 0x7f.1 is the IPv4 address 127.0.0.1 in
//   another form; write 127.0.0.1; expected http(s)://host[:port][/path]".
// Which networks the admin sends to is not decided here: the registration guard checks the address
// (admin/dispatch/registry_guard.hpp).
absl::StatusOr<HttpAddress> ParseExecutorAddress(std::string_view address);

// Canonical spelling used as the registry and routing key: origin + base_path + "/", so "http://a:1" and
// "http://a:1/" name the same executor. Returns the input unchanged if it does not parse.
std::string NormalizeAddress(std::string_view address);

// A local address to listen on.
struct HostPort {
  std::string host;  // "127.0.0.1", "0.0.0.0", "::1" (brackets removed)
  int port = 0;      // 0..65535; 0 = any free port
};

// "127.0.0.1:8080", "0.0.0.0:0", "[::1]:9999" -> HostPort. An InvalidArgument status naming the value and
// the forms that are valid for anything else: no port, a port outside 0..65535, an empty host, an IPv6 host
// without brackets, e.g. "'localhost' is not valid: there is no port; use host:port, e.g. 127.0.0.1:8080,
// 0.0.0.0:0 or [::1]:9999 (port 0 = any free port)".
absl::StatusOr<HostPort> ParseHostPort(std::string_view listen);

}  // namespace cronwheel::net
