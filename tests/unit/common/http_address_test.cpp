#include "cronwheel/net/http_address.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using namespace cronwheel::net;
using ::testing::HasSubstr;

TEST(HttpAddress, AddressesWithAndWithoutSlashOrPrefix) {
  auto a = ParseHttpAddress("http://10.0.0.5:9999/");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->origin, "http://10.0.0.5:9999");
  EXPECT_EQ(a->host, "10.0.0.5");
  EXPECT_EQ(a->port, 9999);
  EXPECT_EQ(a->Path("run"), "/run");
  a = ParseHttpAddress("http://exec.local:9999/xxl-job-executor");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->Path("beat"), "/xxl-job-executor/beat");
  a = ParseHttpAddress("https://[::1]/p/");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 443);
  EXPECT_EQ(NormalizeAddress("http://a:1"), "http://a:1/");
  EXPECT_EQ(NormalizeAddress("http://a:1/"), "http://a:1/");
  EXPECT_EQ(NormalizeAddress("http://a:1/x//"), "http://a:1/x/");
  for (const char* bad : {"a:1", "ftp://a/", "http://", "http://a:0/", "http://a:70000", "http://u@a/",
                          "http://a/?q", "http://a/../etc", "http://a:1:2/", "http://a:/"}) {
    const auto refused = ParseHttpAddress(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("is not valid")) << bad;
  }
}

TEST(HttpAddress, F6_AnExecutorAddressWithAZoneIdOrAnotherIpv4FormIsRefusedSayingWhatToWrite) {
  for (const auto& [address, says] : std::vector<std::pair<std::string, std::string>>{
           {"http://[::ffff:127.0.0.5%1]:9999/",
            "has a zone id (%1), which picks a network interface; give the "
            "address without it, e.g. [127.0.0.5]"},
           {"http://[fe80::1%25eth0]:9999/", "has a zone id (%25eth0)"},
           {"http://2130706433:9999/",
            "its host 2130706433 is the IPv4 address 127.0.0.1 in another form; "
            "write 127.0.0.1"},
           {"http://0177.0.0.1:9999/", "is the IPv4 address 127.0.0.1 in another form"},
           {"http://0x7f.1:9999/", "is the IPv4 address 127.0.0.1 in another form"},
           {"http://127.1:9999/", "is the IPv4 address 127.0.0.1 in another form"},
           {"http://127.0.0.1.:9999/", "its host 127.0.0.1. ends in a dot; write the IPv4 address 127.0.0.1"},
           {"http://1.2.3.4.5:9999/", "is neither an IPv4 address (a.b.c.d, each 0..255) nor a host name"},
           {"http://127.0.0.256:9999/", "is neither an IPv4 address"},
           {"http://[127.0.0.1]:9999/", "brackets are for an IPv6 address"},
           {"http://exec%31.local:9999/", "is neither an IP address nor a host name"},
           {"http://user@127.0.0.1:9999/", "user info"},
           {"http://127.0.0.1:80@169.254.169.254/", "user info"}}) {
    const auto refused = ParseExecutorAddress(address);
    ASSERT_FALSE(refused.ok()) << address;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << address;
    EXPECT_THAT(refused.status().message(), HasSubstr("address '" + address + "' is not valid")) << address;
    EXPECT_THAT(refused.status().message(), HasSubstr(says)) << address;
    EXPECT_THAT(refused.status().message(), HasSubstr("expected http(s)://host[:port][/path]")) << address;
  }
  for (const char* good : {"http://127.0.0.1:9999/", "http://[::1]:9999/", "http://[::ffff:10.0.0.5]:9999/",
                           "https://executor-1.internal:9999/xxl", "http://cronwheel_executor_1:9999/",
                           "http://localhost.:9999/", "http://10.0.0.5/"}) {
    EXPECT_TRUE(ParseExecutorAddress(good).ok()) << good << ": " << ParseExecutorAddress(good).status();
  }
}

TEST(HttpAddress, ListenAddressesTakeHostAndPortWithIpv6InBrackets) {
  auto hp = ParseHostPort("127.0.0.1:8080");
  ASSERT_TRUE(hp.ok()) << hp.status();
  EXPECT_EQ(hp->host, "127.0.0.1");
  EXPECT_EQ(hp->port, 8080);
  hp = ParseHostPort("[::1]:0");
  ASSERT_TRUE(hp.ok()) << hp.status();
  EXPECT_EQ(hp->host, "::1");
  EXPECT_EQ(hp->port, 0);
  hp = ParseHostPort("0.0.0.0:65535");
  ASSERT_TRUE(hp.ok()) << hp.status();
  for (const char* bad : {"8080", ":8080", "::1:80", "[::1:80", "h:65536", "h:-1", "h:x", "h:"}) {
    const auto refused = ParseHostPort(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("is not valid")) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("host:port")) << bad;
  }
}

}  // namespace
