#include "cronwheel/net/http_address.hpp"

#include <fmt/format.h>

#include <charconv>

namespace cronwheel::net {
namespace {}  // namespace

std::string HttpAddress::Path(std::string_view method) const {
  std::string out = base_path;
  out += '/';
  out += method;
  return out;
}

absl::StatusOr<HttpAddress> ParseHttpAddress(std::string_view address) {
  auto fail = [&](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format(
        "address '{}' is not valid: {}; expected http(s)://host[:port][/path]", address.substr(0, 200), why));
  };
  HttpAddress a;
  std::string_view rest = address;
  int default_port = 0;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
    default_port = 80;
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    default_port = 443;
  } else {
    return fail("the scheme must be http:// or https://");
  }
  if (rest.find_first_of("?#@ \t\r\n\\") != std::string_view::npos) {
    return fail("user info, query, fragment, spaces and backslashes are not allowed");
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  std::string_view host;
  std::string_view port_text;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return fail("unterminated IPv6 literal");
    host = authority.substr(1, close - 1);
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("unexpected text after the IPv6 literal");
      port_text = after.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return fail("an IPv6 host must be in brackets");
  }
  if (host.empty()) return fail("the host is empty");
  a.port = default_port;
  if (!port_text.empty() || authority.ends_with(':')) {
    int port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || port < 1 || port > 65535) {
      return fail("the port must be 1..65535");
    }
    a.port = port;
  }
  while (path.ends_with('/'))
    path.remove_suffix(1);
  if (path.find("//") != std::string_view::npos || path.find("/../") != std::string_view::npos ||
      path.ends_with("/..")) {
    return fail("the path must not contain '//' or '..'");
  }
  a.host = std::string(host);
  a.base_path = std::string(path);
  a.origin = std::string(address.substr(0, address.size() - rest.size())) + std::string(authority);
  return a;
}

std::string NormalizeAddress(std::string_view address) {
  const auto a = ParseHttpAddress(address);
  if (!a.ok()) return std::string(address);
  return a->origin + a->base_path + "/";
}

absl::StatusOr<HostPort> ParseHostPort(std::string_view listen) {
  const auto fail = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not valid: {}; use host:port, e.g. 127.0.0.1:8080, "
                    "0.0.0.0:0 or [::1]:9999 (port 0 = any free port)",
                    listen.substr(0, 200), why));
  };
  const auto colon = listen.rfind(':');
  if (colon == std::string_view::npos) return fail("there is no port");
  std::string_view host = listen.substr(0, colon);
  if (host.starts_with('[')) {
    if (!host.ends_with(']')) return fail("unterminated IPv6 literal");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return fail("an IPv6 host must be in brackets");
  }
  if (host.empty()) return fail("the host is empty");
  const auto port_text = listen.substr(colon + 1);
  int port = -1;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return fail("the port must be 0..65535");
  }
  return HostPort{std::string(host), port};
}

}  // namespace cronwheel::net
