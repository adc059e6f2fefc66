#pragma once
// IP addresses as cronwheel reads them: the one parser of a host's text that decides whether it is a numeric
// address, and which one (issue 44, F6: an executor registered as http://[::ffff:127.0.0.5%1]:PORT/ was
// not recognised as an IP address, so the registration guard let it through and the admin connected to
// 127.0.0.5). Everything a connection reaches is decided by the bytes of the address, never by its text:
// the guard (admin/dispatch/registry_guard.hpp) checks these bytes, at registration on what this parser
// returns and at connect time on the socket address the connection is made to.
//
// The text forms are those glibc's getaddrinfo(AI_NUMERICHOST) reads, which is what Boost.Asio's resolver,
// libcurl and the kernel's callers connect to (tests/unit/common/ip_address_test.cpp holds this parser to
// getaddrinfo on random forms):
//  - IPv4 as inet_aton(3) reads it: one to four parts, each decimal, octal (leading 0) or hexadecimal
//    (0x), the last one filling the remaining bytes: 127.0.0.1, 2130706433, 0177.0.0.1, 0x7f.1, 127.1,
//    127.0.0.01 are all 127.0.0.1. No white space, no trailing dot (glibc 2.36 reads "127.0.0.1." as a name);
//  - IPv6 as inet_pton(3) reads it (RFC 4291 §2.2: hexadecimal groups, "::", a dotted-quad tail), with an
//    optional zone id after '%' (RFC 4007 §11: "fe80::1%eth0", "::ffff:127.0.0.5%1"). Any zone id is read
//    as part of a numeric address, also one glibc would refuse (an interface name on a global address):
//    Boost.Asio's make_address accepts those, so they must not pass for names.
//
// Pure functions; thread-safe. Complexity: linear in the text's length.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

struct sockaddr;

namespace cronwheel::net {

// An IP address as 16 bytes in network order; an IPv4 address is held IPv4-mapped (::ffff:a.b.c.d, RFC 4291
// §2.5.5.2), which is also how an IPv4 peer of an IPv6 socket appears.
using IpBytes = std::array<unsigned char, 16>;

// A host's text read as a numeric address.
struct NumericHost {
  enum class Form {
    kDottedQuad,  // IPv4 as four decimal parts without leading zeros, the only form inet_pton reads
    kOtherIpv4,   // IPv4 in another form inet_aton reads: 2130706433, 0177.0.0.1, 0x7f.1, 127.1, 127.0.0.01
    kIpv6,        // IPv6
  };
  IpBytes address{};
  Form form = Form::kDottedQuad;
  std::optional<std::string> zone;  // an IPv6 zone id, the text after '%' as written (may be empty)
};

// The address `host` (a URL's host without its port; brackets around it are accepted) denotes,
// or nullopt when it is not a numeric address: a name to resolve, or text no resolver reads as an address.
std::optional<NumericHost> ParseNumericHost(std::string_view host);

// The address of a socket address (sockaddr_in or sockaddr_in6; an IPv6 scope id is dropped: it chooses an
// interface, not the address), or nullopt for another family or a length too short for it.
std::optional<IpBytes> FromSocketAddress(const sockaddr* address, std::size_t length);

// Whether `address` is an IPv4 address (held IPv4-mapped).
bool IsIpv4(const IpBytes& address);

// The IPv4 address a connection to the IPv6 `address` reaches or is carried to, when it embeds one:
//  - IPv4-mapped ::ffff:0:0/96 (RFC 4291 §2.5.5.2): the IPv4 address itself, through a dual-stack socket;
//  - IPv4-compatible ::/96 (RFC 4291 §2.5.5.1, deprecated), but :: and ::1, which are not;
//  - NAT64's well-known prefix 64:ff9b::/96 (RFC 6052 §2.1): a NAT64 gateway connects to the IPv4 address;
//  - 6to4 2002::/16 (RFC 3056 §2): the packets are tunnelled to the IPv4 address (bits 16..47).
// Not read: Teredo 2001::/32 (the embedded addresses are a relay's and an obfuscated client's, reached over
// UDP) and NAT64 networks of an operator's own prefix (RFC 8215's 64:ff9b:1::/48, any /32../96): deny such
// a prefix as IPv6 where a NAT64 gateway is in reach. nullopt for any other address.
std::optional<IpBytes> EmbeddedIpv4(const IpBytes& address);

// The address's canonical text: dotted quad for IPv4, RFC 5952 for IPv6 (inet_ntop), e.g. "127.0.0.1",
// "fe80::1", "::ffff:127.0.0.5" is "127.0.0.5".
std::string IpText(const IpBytes& address);

}  // namespace cronwheel::net
