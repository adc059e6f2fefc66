// API token scopes (admin/model/accounts.hpp) and the token request's scope field
// (admin/api/request_bodies.hpp): the names, their order, and the default of a request that names none.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "admin/api/request_bodies.hpp"
#include "admin/auth/authenticator.hpp"
#include "admin/model/accounts.hpp"

namespace {

using cronwheel::admin::ParseTokenScope;
using cronwheel::admin::Principal;
using cronwheel::admin::ReadTokenBody;
using cronwheel::admin::TokenScope;
using nlohmann::json;

TEST(TokenScope, NamesRoundTripAndNothingElseParses) {
  for (const auto scope : {TokenScope::kRead, TokenScope::kOperate, TokenScope::kWrite, TokenScope::kAdmin})
    EXPECT_EQ(ParseTokenScope(ToString(scope)), scope);
  for (const char* bad : {"", "READ", "Read", "root", "read ", "admin\n", "writer"})
    EXPECT_FALSE(ParseTokenScope(bad).has_value()) << "'" << bad << "'";
}

// Each scope covers the routes of the scopes before it and none after; a session (no token) covers all.
TEST(TokenScope, EachScopeAllowsExactlyItselfAndTheLesserOnes) {
  const TokenScope order[] = {TokenScope::kRead, TokenScope::kOperate, TokenScope::kWrite,
                              TokenScope::kAdmin};
  for (const auto held : order) {
    const Principal who{.user_id = 1, .username = "u", .via = "token", .scope = held};
    for (const auto needed : order) {
      EXPECT_EQ(who.Allows(needed), static_cast<int>(needed) <= static_cast<int>(held))
          << ToString(held) << " needing " << ToString(needed);
    }
  }
  const Principal session{.user_id = 1, .username = "u", .via = "session"};
  EXPECT_TRUE(session.Allows(TokenScope::kAdmin));
}

TEST(TokenScope, ATokenRequestReadsOnlyUnlessItNamesAScope) {
  auto fields = ReadTokenBody(json{{"name", "monitor"}});
  ASSERT_TRUE(fields);
  EXPECT_EQ(fields->scope, TokenScope::kRead);
  fields = ReadTokenBody(json{{"name", "deploy"}, {"scope", "write"}});
  ASSERT_TRUE(fields);
  EXPECT_EQ(fields->scope, TokenScope::kWrite);
  for (const auto& bad : {json("WRITE"), json(2), json(nullptr), json::array({"read"})}) {
    const auto r = ReadTokenBody(json{{"name", "x"}, {"scope", bad}});
    ASSERT_FALSE(r) << bad;
    ASSERT_EQ(r.error().fields.size(), 1u) << bad;
    EXPECT_EQ(r.error().fields[0].field, "scope");
    EXPECT_EQ(r.error().fields[0].code, "enum");
  }
}

}  // namespace
