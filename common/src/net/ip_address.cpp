#include "cronwheel/net/ip_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace cronwheel::net {
namespace {

bool Ipv4Char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x' || c == 'X' ||
         c == '.';
}

IpBytes Mapped(const void* v4) {
  IpBytes out{};
  out[10] = 0xff;
  out[11] = 0xff;
  std::memcpy(out.data() + 12, v4, 4);
  return out;
}

// IPv4 as getaddrinfo reads it (glibc's __inet_aton_exact): inet_aton(3) on text that holds nothing but
// the characters of its forms, so inet_aton's leniency (it stops at white space and ignores the rest)
// never applies.
std::optional<NumericHost> ParseIpv4(const std::string& text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), Ipv4Char)) return std::nullopt;
  in_addr v4{};
  if (inet_aton(text.c_str(), &v4) == 0) return std::nullopt;
  NumericHost out;
  out.address = Mapped(&v4);
  // inet_pton reads only the dotted quad of decimal parts without leading zeros: the canonical form.
  in_addr strict{};
  out.form = inet_pton(AF_INET, text.c_str(), &strict) == 1 ? NumericHost::Form::kDottedQuad
                                                            : NumericHost::Form::kOtherIpv4;
  return out;
}

}  // namespace

std::optional<NumericHost> ParseNumericHost(std::string_view host) {
  const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  if (host.empty() || host.find('\0') != std::string_view::npos) return std::nullopt;
  const auto percent = host.find('%');
  const std::string address(host.substr(0, percent));
  if (percent == std::string_view::npos) {
    if (auto v4 = ParseIpv4(address)) return v4;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) != 1) return std::nullopt;
  NumericHost out;
  std::memcpy(out.address.data(), &v6, 16);
  out.form = NumericHost::Form::kIpv6;
  if (percent != std::string_view::npos) out.zone = std::string(host.substr(percent + 1));
  return out;
}

std::optional<IpBytes> FromSocketAddress(const sockaddr* address, std::size_t length) {
  if (address == nullptr) return std::nullopt;
  if (address->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    sockaddr_in in{};
    std::memcpy(&in, address, sizeof in);
    return Mapped(&in.sin_addr);
  }
  if (address->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, address, sizeof in6);
    IpBytes out{};
    std::memcpy(out.data(), &in6.sin6_addr, 16);
    return out;
  }
  return std::nullopt;
}

bool IsIpv4(const IpBytes& a) {
  return std::all_of(a.begin(), a.begin() + 10, [](unsigned char b) { return b == 0; }) && a[10] == 0xff &&
         a[11] == 0xff;
}

std::optional<IpBytes> EmbeddedIpv4(const IpBytes& a) {
  const auto zeros = [&](std::size_t from, std::size_t to) {
    return std::all_of(a.begin() + static_cast<std::ptrdiff_t>(from),
                       a.begin() + static_cast<std::ptrdiff_t>(to), [](unsigned char b) { return b == 0; });
  };
  if (IsIpv4(a)) return a;
  // IPv4-compatible, but :: and ::1 (the unspecified and loopback addresses, RFC 4291 §2.5.5.1).
  if (zeros(0, 12) && !(zeros(12, 15) && a[15] <= 1)) return Mapped(a.data() + 12);
  // NAT64's well-known prefix 64:ff9b::/96 (RFC 6052 §2.1).
  if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && zeros(4, 12))
    return Mapped(a.data() + 12);
  // 6to4 2002:V4ADDR::/48 (RFC 3056 §2).
  if (a[0] == 0x20 && a[1] == 0x02) return Mapped(a.data() + 2);
  return std::nullopt;
}

std::string IpText(const IpBytes& a) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (IsIpv4(a)) {
    if (inet_ntop(AF_INET, a.data() + 12, text.data(), text.size()) != nullptr) return text.data();
    return {};
  }
  if (inet_ntop(AF_INET6, a.data(), text.data(), text.size()) != nullptr) return text.data();
  return {};
}

}  // namespace cronwheel::net
