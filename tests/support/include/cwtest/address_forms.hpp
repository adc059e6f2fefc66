#pragma once
// Random text forms of IP addresses, for the property tests of the address parser and the registration guard
// (issue 44, F6): every spelling a resolver reads as the same address (IPv4 in inet_aton's decimal, octal,
// hexadecimal and short forms; IPv6 with any zero compression, leading zeros and case; IPv4-mapped,
// -compatible, NAT64 and 6to4 forms; zone ids), near misses no resolver reads (a trailing dot, a part too
// large, white space, a fifth part), and URLs with user info. What a text really denotes is for the test to
// ask the system (getaddrinfo, Boost.Asio), never this generator.
//
// Deterministic for a seed (std::mt19937); not thread-safe. Header-only: the common and the admin tests use
// it.

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace cwtest {

class AddressForms {
 public:
  using V4 = std::array<std::uint8_t, 4>;
  using V6 = std::array<std::uint8_t, 16>;

  explicit AddressForms(std::uint32_t seed) : rng_(seed) {}

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int percent) { return Uniform(1, 100) <= percent; }
  std::uint8_t Byte() { return static_cast<std::uint8_t>(Uniform(0, 255)); }

  // A random address in `network` (its first `bits` bits kept), or anywhere for bits 0.
  V4 In(V4 network, int bits) {
    for (int i = 0; i < 4; ++i) {
      const int keep = std::clamp(bits - i * 8, 0, 8);
      const auto mask = static_cast<std::uint8_t>(keep == 0 ? 0 : 0xff << (8 - keep));
      network[static_cast<std::size_t>(i)] =
          static_cast<std::uint8_t>((network[static_cast<std::size_t>(i)] & mask) | (Byte() & ~mask));
    }
    return network;
  }
  V6 In(V6 network, int bits) {
    for (int i = 0; i < 16; ++i) {
      const int keep = std::clamp(bits - i * 8, 0, 8);
      const auto mask = static_cast<std::uint8_t>(keep == 0 ? 0 : 0xff << (8 - keep));
      network[static_cast<std::size_t>(i)] =
          static_cast<std::uint8_t>((network[static_cast<std::size_t>(i)] & mask) | (Byte() & ~mask));
    }
    return network;
  }

  // An IPv4 address in one of inet_aton's forms: one to four parts, the last filling the remaining bytes,
  // each decimal, octal (0...) or hexadecimal (0x..., 0X..., any case), with leading zeros where the radix
  // allows them.
  std::string Ipv4Text(const V4& a) {
    const int parts = Chance(50) ? 4 : Uniform(1, 4);
    std::string out;
    for (int i = 0; i < parts; ++i) {
      std::uint64_t value = 0;
      const int last = i == parts - 1 ? 3 : i;
      for (int b = i; b <= last; ++b)
        value = (value << 8) | a[static_cast<std::size_t>(b)];
      if (i > 0) out += '.';
      out += Number(value);
    }
    return out;
  }

  // An IPv6 address: its eight groups with random leading zeros and case, any run of zero groups (or none)
  // written "::", and sometimes the last 32 bits as a dotted quad.
  std::string Ipv6Text(const V6& a) {
    std::array<unsigned, 8> groups{};
    for (std::size_t i = 0; i < 8; ++i)
      groups[i] = static_cast<unsigned>(a[2 * i] << 8 | a[2 * i + 1]);
    const bool dotted_tail = Chance(35);
    const int n = dotted_tail ? 6 : 8;
    // Runs of zero groups that "::" may stand for; one is picked, or none.
    std::vector<std::pair<int, int>> runs;
    for (int i = 0; i < n; ++i) {
      for (int j = i; j < n && groups[static_cast<std::size_t>(j)] == 0; ++j)
        runs.emplace_back(i, j + 1);
    }
    std::pair<int, int> gap{-1, -1};
    if (!runs.empty() && Chance(80)) gap = runs[static_cast<std::size_t>(Uniform(0, int(runs.size()) - 1))];
    std::string out;
    for (int i = 0; i < n; ++i) {
      if (i == gap.first) {
        out += "::";
        i = gap.second - 1;
        continue;
      }
      if (!out.empty() && !out.ends_with(':')) out += ':';
      out += Hex(groups[static_cast<std::size_t>(i)], Uniform(0, 3), Chance(30));
    }
    if (dotted_tail) {
      if (!out.empty() && !out.ends_with(':')) out += ':';
      out += std::to_string(a[12]) + "." + std::to_string(a[13]) + "." + std::to_string(a[14]) + "." +
             std::to_string(a[15]);
    }
    return out;
  }

  // IPv6 forms that embed an IPv4 address.
  static V6 Mapped(const V4& v4) {
    return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, v4[0], v4[1], v4[2], v4[3]};
  }
  static V6 Compatible(const V4& v4) {
    return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, v4[0], v4[1], v4[2], v4[3]};
  }
  static V6 Nat64(const V4& v4) {
    return {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, v4[0], v4[1], v4[2], v4[3]};
  }
  V6 SixToFour(const V4& v4) {
    V6 out{0x20, 0x02, v4[0], v4[1], v4[2], v4[3]};
    for (std::size_t i = 6; i < 16; ++i)
      out[i] = Chance(50) ? 0 : Byte();
    return out;
  }

  // A zone id: a number (with leading zeros), an interface name, or nonsense.
  std::string Zone() {
    switch (Uniform(0, 5)) {
      case 0:
        return "1";
      case 1:
        return std::string(static_cast<std::size_t>(Uniform(0, 3)), '0') + std::to_string(Uniform(0, 9));
      case 2:
        return "lo";
      case 3:
        return "eth0";
      case 4:
        return "25";  // RFC 6874's percent-encoded '%' left in
      default:
        return Chance(50) ? "" : "x y";
    }
  }

  // A change that may make a text no address at all: a trailing dot, a part too many or too large, white
  // space, a sign, a bracket.
  std::string Mutate(const std::string& text) {
    switch (Uniform(0, 7)) {
      case 0:
        return text + ".";
      case 1:
        return text + ".1";
      case 2:
        return text + " ";
      case 3:
        return " " + text;
      case 4:
        return "+" + text;
      case 5:
        return text + "0";
      case 6:
        return "0x" + text;
      default:
        return "[" + text + "]";
    }
  }

 private:
  std::string Number(std::uint64_t value) {
    switch (Uniform(0, 2)) {
      case 0:
        return std::to_string(value);
      case 1: {  // octal: a leading 0, and maybe more
        std::string digits;
        for (std::uint64_t v = value; v > 0; v /= 8)
          digits.insert(digits.begin(), static_cast<char>('0' + v % 8));
        return std::string(static_cast<std::size_t>(Uniform(1, 3)), '0') + digits;
      }
      default:
        return (Chance(50) ? "0x" : "0X") + Hex(value, Uniform(0, 2), Chance(50));
    }
  }

  static std::string Hex(std::uint64_t value, int leading_zeros, bool upper) {
    static constexpr char kLower[] = "0123456789abcdef";
    static constexpr char kUpper[] = "0123456789ABCDEF";
    std::string digits;
    do {
      digits.insert(digits.begin(), (upper ? kUpper : kLower)[value % 16]);
      value /= 16;
    } while (value > 0);
    while (leading_zeros-- > 0 && digits.size() < 4)
      digits.insert(digits.begin(), '0');
    return digits;
  }

  std::mt19937 rng_;
};

}  // namespace cwtest
