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

}  // namespace
