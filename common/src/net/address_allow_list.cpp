#include "cronwheel/net/address_allow_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "cronwheel/text.hpp"

namespace cronwheel::net {

std::optional<IpBytes> ParseIpAddress(std::string_view text) {
  const auto host = ParseNumericHost(text);
  if (!host || host->form == NumericHost::Form::kOtherIpv4 || host->zone) return std::nullopt;
  return host->address;
}

absl::StatusOr<AddressAllowList> AddressAllowList::Parse(const std::vector<std::string>& entries) {
  AddressAllowList list;
  for (const auto& raw : entries) {
    const auto entry = Trim(raw);
    if (entry.empty()) continue;
    const auto slash = entry.find('/');
    const auto host = entry.substr(0, slash);
    const auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(fmt::format(
          "'{}' is not valid ({}): use an IPv4 or IPv6 address or address/prefix, e.g. 127.0.0.1, "
          "10.0.0.0/8, ::1, fd00::/8",
          entry, why));
    };
    const auto address = ParseIpAddress(host);
    if (!address) return bad("not an IP address");
    Range r;
    r.prefix = *address;
    const bool v4 = host.find(':') == std::string_view::npos;
    r.bits = 128;
    if (slash != std::string_view::npos) {
      const auto len = entry.substr(slash + 1);
      int n = -1;
      const auto [p, ec] = std::from_chars(len.data(), len.data() + len.size(), n);
      const int max = v4 ? 32 : 128;
      if (ec != std::errc{} || p != len.data() + len.size() || n < 0 || n > max) {
        return bad(fmt::format("the prefix length must be 0..{}", max));
      }
      r.bits = v4 ? 96 + n : n;
    }
    // Clear the host bits, so the comparison is a plain prefix match.
    for (int bit = r.bits; bit < 128; ++bit) {
      r.prefix[static_cast<std::size_t>(bit / 8)] &= static_cast<unsigned char>(~(0x80U >> (bit % 8)));
    }
    list.ranges_.push_back(r);
  }
  return list;
}

bool AddressAllowList::Allows(std::string_view address) const {
  const auto a = ParseIpAddress(address);
  return a && Allows(*a);
}

bool AddressAllowList::Allows(const IpBytes& a) const {
  for (const auto& r : ranges_) {
    bool match = true;
    for (int bit = 0; bit < r.bits && match; bit += 8) {
      const auto i = static_cast<std::size_t>(bit / 8);
      const int n = std::min(8, r.bits - bit);
      const auto mask = static_cast<unsigned char>(0xffU << (8 - n));
      match = (a[i] & mask) == r.prefix[i];
    }
    if (match) return true;
  }
  return false;
}

}  // namespace cronwheel::net
