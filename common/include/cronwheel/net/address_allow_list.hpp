#pragma once
// A list of IP addresses and CIDR ranges a request's peer address is checked against (who may read
// /metrics without credentials: the setting metrics_allow of the admin and the executor).
//
//   auto list = AddressAllowList::Parse({"127.0.0.1/8", "::1", "10.0.0.0/8"});  // absl::StatusOr
//   list->Allows("10.1.2.3")   // true
//
// Entries: an IPv4 or IPv6 address (one host) or address/prefix length ("10.0.0.0/8", "fd00::/8"). An
// IPv4 peer seen through an IPv6 socket ("::ffff:10.1.2.3") is checked as the IPv4 address it is. Host
// bits beyond the prefix are ignored ("127.0.0.1/8" is 127.0.0.0/8). Names (localhost) are not resolved:
// a list must not depend on DNS.
//
// Thread-safety: immutable after Parse; Allows may be called from any thread. Complexity: Allows is
// O(entries).

#include <absl/status/statusor.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cronwheel/net/ip_address.hpp"

namespace cronwheel::net {

class AddressAllowList final {
 public:
  // The list, or an InvalidArgument status naming the first entry that does not parse and what is valid:
  //   "'10.0.0.0/33' is not valid (the prefix length must be 0..32): use an IPv4 or IPv6 address or
  //   address/prefix, e.g. 127.0.0.1, 10.0.0.0/8, ::1, fd00::/8".
  static absl::StatusOr<AddressAllowList> Parse(const std::vector<std::string>& entries);

  // Whether `address` (a peer address as the HTTP server reports it, without port) is in the list. An
  // address that ParseIpAddress does not read is not.
  [[nodiscard]] bool Allows(std::string_view address) const;
  // Whether the address is in the list (an IPv4 address held IPv4-mapped, as ip_address.hpp holds it).
  [[nodiscard]] bool Allows(const IpBytes& address) const;
  [[nodiscard]] bool empty() const { return ranges_.empty(); }

 private:
  struct Range {
    IpBytes prefix{};  // IPv6, IPv4 as ::ffff:a.b.c.d
    int bits = 128;
  };
  std::vector<Range> ranges_;
};

// The address as 16 bytes (IPv4 mapped into ::ffff:0:0/96), for the canonical forms only: an IPv4 dotted quad
// or an IPv6 address, without a zone id, brackets accepted (ParseNumericHost, ip_address.hpp, reads every
// form a resolver reads); nullopt for anything else. For settings and peer addresses, whose forms are ours.
std::optional<IpBytes> ParseIpAddress(std::string_view text);

}  // namespace cronwheel::net
