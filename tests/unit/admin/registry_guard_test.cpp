// The registration guard (admin/dispatch/registry_guard.hpp): which executor addresses the admin stores at
// registration and connects to (issue 21: registration was an SSRF).
#include "admin/dispatch/registry_guard.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace {

using cronwheel::admin::ErrorKind;
using cronwheel::admin::RegistryGuard;
using cronwheel::admin::Result;
using ::testing::HasSubstr;

RegistryGuard Make(const RegistryGuard::Settings& s) {
  auto g = RegistryGuard::Make(s);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g ? *g : RegistryGuard();
}

// What a check refused, or nullopt when it allowed; a refusal is always Forbidden.
std::optional<std::string> Why(const Result<void>& check) {
  if (check.ok()) return std::nullopt;
  EXPECT_EQ(check.error().kind, ErrorKind::kForbidden) << check.error().message;
  return check.error().message;
}

TEST(RegistryGuard, ByDefaultLinkLocalAndUnspecifiedAreRefusedLoopbackAndPrivateAllowed) {
  const RegistryGuard g;
  for (const char* ip : {"169.254.169.254", "169.254.0.1", "fe80::1", "febf::1", "::ffff:169.254.169.254",
                         "0.0.0.0", "0.1.2.3", "::"}) {
    const auto why = Why(g.CheckEndpoint(ip, 80));
    ASSERT_TRUE(why) << ip;
    EXPECT_THAT(*why, HasSubstr("setting registry_deny")) << ip;
  }
  for (const char* ip : {"127.0.0.1", "::1", "10.1.2.3", "172.16.5.4", "192.168.0.9", "fd00::5", "8.8.8.8",
                         "2001:db8::1", "169.255.0.1", "fec0::1"}) {
    EXPECT_EQ(Why(g.CheckEndpoint(ip, 9999)), std::nullopt) << ip;
  }
}

TEST(RegistryGuard, AtRegistrationAnIpLiteralIsCheckedAndANameIsLeftForConnectTime) {
  const RegistryGuard g;
  const auto why = Why(g.CheckAddress("http://169.254.169.254/latest/meta-data"));
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("'http://169.254.169.254/latest/meta-data'"));  // the address
  EXPECT_THAT(*why, HasSubstr("registry_deny"));                              // and the setting
  EXPECT_TRUE(Why(g.CheckAddress("http://[fe80::1]:9999/")));
  EXPECT_TRUE(Why(g.CheckAddress("http://[::ffff:169.254.169.254]:80/")));
  EXPECT_TRUE(Why(g.CheckAddress("http://0.0.0.0:8080/")));
  EXPECT_EQ(Why(g.CheckAddress("http://127.0.0.1:9999/")), std::nullopt);
  EXPECT_EQ(Why(g.CheckAddress("https://executor-1.internal:9999/xxl")),
            std::nullopt);                                         // a name: at connect time
  EXPECT_EQ(Why(g.CheckAddress("not an address")), std::nullopt);  // the registration's own check refuses it
}

TEST(RegistryGuard, AnAllowListAdmitsOnlyItsNetworksAndDenyWins) {
  const auto g = Make({.allow = {"10.0.0.0/8", "fd00::/8", "169.254.10.0/24"}});
  EXPECT_EQ(Why(g.CheckEndpoint("10.20.30.40", 9999)), std::nullopt);
  EXPECT_EQ(Why(g.CheckEndpoint("fd12::1", 9999)), std::nullopt);
  for (const char* ip : {"127.0.0.1", "192.168.1.1", "8.8.8.8", "::1"}) {
    const auto why = Why(g.CheckEndpoint(ip, 9999));
    ASSERT_TRUE(why) << ip;
    EXPECT_THAT(*why, HasSubstr("setting registry_allow")) << ip;
  }
  // 169.254.10.0/24 is allowed, but the default deny list still covers it.
  const auto why = Why(g.CheckEndpoint("169.254.10.5", 80));
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("registry_deny"));
}

TEST(RegistryGuard, AnEmptyDenyListRefusesNothingButTheAdminItself) {
  const auto g = Make({.deny = {}, .self = {"127.0.0.1"}, .self_port = 8080});
  EXPECT_EQ(Why(g.CheckEndpoint("169.254.169.254", 80)), std::nullopt);
  EXPECT_EQ(Why(g.CheckEndpoint("127.0.0.1", 8081)), std::nullopt);
  const auto why = Why(g.CheckEndpoint("127.0.0.1", 8080));
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("this admin's own address (setting listen)"));
}

TEST(RegistryGuard, TheAdminsOwnListenAddressAndPortAreRefused) {
  const auto own = RegistryGuard::SelfAddresses({"127.0.0.1", 8080});
  EXPECT_EQ(own, std::vector<std::string>{"127.0.0.1"});
  const auto g = Make({.self = own, .self_port = 8080});
  EXPECT_TRUE(Why(g.CheckEndpoint("127.0.0.1", 8080)));
  EXPECT_TRUE(Why(g.CheckAddress("http://127.0.0.1:8080/")));
  EXPECT_EQ(Why(g.CheckEndpoint("127.0.0.1", 9999)), std::nullopt);  // an executor beside it
  EXPECT_EQ(Why(g.CheckEndpoint("127.0.0.2", 8080)), std::nullopt);  // a listener on 127.0.0.1 is not there

  // A wildcard listener answers on loopback, the unspecified address and every interface of the host.
  const auto any = RegistryGuard::SelfAddresses({"0.0.0.0", 8080});
  EXPECT_THAT(any, ::testing::IsSupersetOf({"127.0.0.0/8", "::1", "127.0.0.1"}));
  const auto wild = Make({.self = any, .self_port = 8080});
  for (const char* ip : {"127.0.0.1", "127.1.2.3", "::1"}) {
    const auto why = Why(wild.CheckEndpoint(ip, 8080));
    ASSERT_TRUE(why) << ip;
    EXPECT_THAT(*why, HasSubstr("setting listen")) << ip;
  }
  EXPECT_THAT(RegistryGuard::SelfAddresses({"localhost", 8080}),
              ::testing::ElementsAre("127.0.0.0/8", "::1"));
}

TEST(RegistryGuard, ABadEntryIsNamedWithItsSetting) {
  for (const auto& [settings, setting, entry] :
       std::vector<std::tuple<RegistryGuard::Settings, std::string, std::string>>{
           {{.allow = {"10.0.0.0/8", "intranet"}}, "registry_allow", "intranet"},
           {{.deny = {"169.254.0.0/33"}}, "registry_deny", "169.254.0.0/33"}}) {
    const auto made = RegistryGuard::Make(settings);
    ASSERT_FALSE(made.ok()) << entry;
    EXPECT_EQ(made.error().kind, cronwheel::admin::ErrorKind::kInvalid);
    const std::string& error = made.error().message;
    EXPECT_THAT(error, HasSubstr("setting " + setting)) << error;
    EXPECT_THAT(error, HasSubstr("'" + entry + "'")) << error;
  }
}

}  // namespace
