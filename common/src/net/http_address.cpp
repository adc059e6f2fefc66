#include "cronwheel/net/http_address.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "cronwheel/net/ip_address.hpp"

namespace cronwheel::net {
namespace {

absl::Status Invalid(std::string_view address, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format(
      "address '{}' is not valid: {}; expected http(s)://host[:port][/path]", address.substr(0, 200), why));
}

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}

// Whether a DNS label reads as a number (decimal, or hexadecimal after 0x): a name's last label never does.
bool NumericLabel(std::string_view label) {
  if (label.size() > 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X')) {
    label.remove_prefix(2);
    return std::all_of(label.begin(), label.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  }
  return !label.empty() &&
         std::all_of(label.begin(), label.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string HttpAddress::Path(std::string_view method) const {
  std::string out = base_path;
  out += '/';
  out += method;
  return out;
}

absl::StatusOr<HttpAddress> ParseHttpAddress(std::string_view address) {
  auto fail = [&](std::string_view why) { return Invalid(address, why); };
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

absl::StatusOr<HttpAddress> ParseExecutorAddress(std::string_view address) {
  auto a = ParseHttpAddress(address);
  if (!a.ok()) return a;
  const std::string& host = a->host;
  const bool bracketed = a->origin.find('[') != std::string::npos;
  const auto numeric = ParseNumericHost(host);
  if (bracketed != (numeric && numeric->form == NumericHost::Form::kIpv6)) {
    return Invalid(address, "brackets are for an IPv6 address, and an IPv6 address needs them");
  }
  if (numeric) {
    if (numeric->zone) {
      return Invalid(address,
                     fmt::format("its host {} has a zone id (%{}), which picks a network interface; give "
                                 "the address without it, e.g. [{}]",
                                 host.substr(0, 80), numeric->zone->substr(0, 40), IpText(numeric->address)));
    }
    if (numeric->form == NumericHost::Form::kOtherIpv4) {
      return Invalid(address,
                     fmt::format("its host {} is the IPv4 address {} in another form; write {}",
                                 host.substr(0, 80), IpText(numeric->address), IpText(numeric->address)));
    }
    return a;
  }
  if (!std::all_of(host.begin(), host.end(), NameChar)) {
    return Invalid(address,
                   fmt::format("its host '{}' is neither an IP address nor a host name (letters, digits, "
                               "'-', '_' and '.')",
                               host.substr(0, 80)));
  }
  std::string_view name = host;
  if (name.ends_with('.')) name.remove_suffix(1);
  if (const auto dotted = ParseNumericHost(name); dotted && !dotted->zone) {
    return Invalid(address, fmt::format("its host {} ends in a dot; write the IPv4 address {}",
                                        host.substr(0, 80), IpText(dotted->address)));
  }
  const auto dot = name.rfind('.');
  if (NumericLabel(dot == std::string_view::npos ? name : name.substr(dot + 1))) {
    return Invalid(address,
                   fmt::format("its host {} is neither an IPv4 address (a.b.c.d, each 0..255) nor a host "
                               "name (whose last label is never a number)",
                               host.substr(0, 80)));
  }
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
