// The admin's settings that depend on each other (admin/app/admin_config.hpp).
#include "admin/app/admin_config.hpp"

#include <gtest/gtest.h>

namespace {

using cronwheel::admin::AdminConfig;

// Security review (issue 21), finding 7: the session cookie was not Secure unless set. Now cookie_secure
// defaults by mode (production: on, since a production console is served over TLS; dev: off, plain HTTP on
// loopback), and an explicit value wins either way.
TEST(AdminConfig, TheSessionCookieIsSecureByDefaultInProductionMode) {
  const struct {
    const char* mode = nullptr;
    std::optional<bool> cookie_secure;
    bool secure = false;
  } cases[] = {
      {"production", std::nullopt, true},
      {"dev", std::nullopt, false},
      {"production", false, false},
      {"dev", true, true},
  };
  for (const auto& c : cases) {
    AdminConfig config;
    config.mode = c.mode;
    config.cookie_secure = c.cookie_secure;
    EXPECT_EQ(config.CookieSecure(), c.secure)
        << c.mode << ", cookie_secure "
        << (c.cookie_secure ? (*c.cookie_secure ? "true" : "false") : "unset");
  }
  EXPECT_TRUE(AdminConfig{}.CookieSecure()) << "the default mode is production";
}

// The fire output archive's cap: 1 MiB by default, 0 turns it off, anything between 1 and 1023 bytes is
// refused naming the key and what is valid.
TEST(AdminConfig, TheOutputArchiveCapIsOneMebibyteZeroOrAtLeastOneKibibyte) {
  AdminConfig config;
  config.dsn = "postgresql://x@127.0.0.1/db";
  config.mode = "dev";
  EXPECT_EQ(config.output_archive_max_bytes, 1024 * 1024);
  EXPECT_TRUE(config.Validate());
  config.output_archive_max_bytes = 0;
  EXPECT_TRUE(config.Validate());
  config.output_archive_max_bytes = 1000;
  const auto refused = config.Validate();
  ASSERT_FALSE(refused);
  EXPECT_NE(
      refused.error().message.find("output_archive_max_bytes 1000 is not valid: use 0 (no archive) or 1024"),
      std::string::npos)
      << refused.error().message;
}

}  // namespace
