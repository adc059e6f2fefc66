#include "cronwheel/net/http_address.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
