// Roles per executor group (admin/model/accounts.hpp, GroupRole; admin/auth/authenticator.hpp, Principal)
// and the user request's group_roles field (admin/api/request_bodies.hpp): the names, their order, the
// role each route scope needs, and what a caller with roles in some groups may do in each.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "admin/api/request_bodies.hpp"
#include "admin/auth/authenticator.hpp"
#include "admin/model/accounts.hpp"

namespace {

using cronwheel::admin::GroupGrant;
using cronwheel::admin::GroupRole;
using cronwheel::admin::ParseGroupRole;
using cronwheel::admin::Principal;
using cronwheel::admin::ReadUserBody;
using cronwheel::admin::RoleFor;
using cronwheel::admin::TokenScope;
using nlohmann::json;

TEST(GroupRole, NamesRoundTripAndNothingElseParses) {
  for (const auto role : {GroupRole::kViewer, GroupRole::kOperator, GroupRole::kDeveloper, GroupRole::kAdmin})
    EXPECT_EQ(ParseGroupRole(ToString(role)), role);
  for (const char* bad : {"", "viewer", "Admin", "USER", "OWNER", "ADMIN "})
    EXPECT_FALSE(ParseGroupRole(bad).has_value()) << "'" << bad << "'";
}

// A route of scope read needs VIEWER in the group it acts on, operate OPERATOR, write DEVELOPER, admin ADMIN.
TEST(GroupRole, EachScopeNeedsTheRoleOfItsRank) {
  EXPECT_EQ(RoleFor(TokenScope::kRead), GroupRole::kViewer);
  EXPECT_EQ(RoleFor(TokenScope::kOperate), GroupRole::kOperator);
  EXPECT_EQ(RoleFor(TokenScope::kWrite), GroupRole::kDeveloper);
  EXPECT_EQ(RoleFor(TokenScope::kAdmin), GroupRole::kAdmin);
}

// A USER with OPERATOR in group 3 and VIEWER in group 5, serving routes of each scope: it sees both groups,
// may act in each as far as its role goes there, and has nothing in group 4. A global ADMIN may do all.
TEST(GroupRole, ACallerMayDoInEachGroupWhatItsRoleThereCovers) {
  Principal who{
      .user_id = 2,
      .username = "op",
      .groups = {{.group_id = 3, .role = GroupRole::kOperator}, {.group_id = 5, .role = GroupRole::kViewer}}};
  EXPECT_TRUE(who.SeesGroup(3));
  EXPECT_TRUE(who.SeesGroup(5));
  EXPECT_FALSE(who.SeesGroup(4));
  const TokenScope scopes[] = {TokenScope::kRead, TokenScope::kOperate, TokenScope::kWrite,
                               TokenScope::kAdmin};
  for (const auto scope : scopes) {
    who.route_scope = scope;
    const auto rank = static_cast<int>(scope);
    EXPECT_EQ(who.CanAccessGroup(3), rank <= 1) << ToString(scope);
    EXPECT_EQ(who.CanAccessGroup(5), rank == 0) << ToString(scope);
    EXPECT_FALSE(who.CanAccessGroup(4)) << ToString(scope);
  }
  who.route_scope = TokenScope::kRead;
  EXPECT_EQ(who.GroupIds(), (std::vector<int>{3, 5}));
  EXPECT_EQ(who.GroupIds(GroupRole::kOperator), (std::vector<int>{3}));
  EXPECT_TRUE(who.GroupIds(GroupRole::kDeveloper).empty());
  const Principal admin{.user_id = 1, .username = "root", .admin = true, .route_scope = TokenScope::kAdmin};
  EXPECT_TRUE(admin.CanAccessGroup(4));
  EXPECT_EQ(admin.RoleIn(4), GroupRole::kAdmin);
}

TEST(GroupRole, AUserBodyGivesRolesByGroupOrGroupsAsDevelopers) {
  auto f = ReadUserBody(
      json{{"group_roles", {{{"group_id", 7}, {"role", "VIEWER"}}, {{"group_id", 2}, {"role", "ADMIN"}}}}},
      false);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->groups);
  EXPECT_EQ(*f->groups, (std::vector<GroupGrant>{{.group_id = 2, .role = GroupRole::kAdmin},
                                                 {.group_id = 7, .role = GroupRole::kViewer}}));
  f = ReadUserBody(json{{"permitted_group_ids", {4, 1, 4}}}, false);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f->groups, (std::vector<GroupGrant>{{.group_id = 1, .role = GroupRole::kDeveloper},
                                                 {.group_id = 4, .role = GroupRole::kDeveloper}}));
  EXPECT_EQ(f->groups_field, "permitted_group_ids");
}

// Each wrong shape is a 400 naming the element's field and what is valid; giving both fields is refused.
TEST(GroupRole, AWrongGroupRolesFieldNamesTheElementAndWhatIsValid) {
  const std::vector<std::pair<json, std::string>> cases = {
      {json{{{"group_id", 1}, {"role", "OWNER"}}}, "group_roles[0].role"},
      {json{{{"group_id", 1}, {"role", "VIEWER"}}, {{"group_id", 0}, {"role", "VIEWER"}}},
       "group_roles[1].group_id"},
      {json{{{"group_id", 1}, {"role", "VIEWER"}}, {{"group_id", 1}, {"role", "ADMIN"}}},
       "group_roles[1].group_id"},
      {json{{{"group_id", 1}}}, "group_roles[0]"},
      {json{{{"group_id", 1}, {"role", "VIEWER"}, {"extra", 1}}}, "group_roles[0]"},
      {json("VIEWER"), "group_roles"},
  };
  for (const auto& [value, field] : cases) {
    const auto r = ReadUserBody(json{{"group_roles", value}}, false);
    ASSERT_FALSE(r) << value.dump();
    ASSERT_FALSE(r.error().fields.empty());
    EXPECT_EQ(r.error().fields[0].field, field) << value.dump() << ": " << r.error().fields[0].message;
  }
  const auto role = ReadUserBody(json{{"group_roles", {{{"group_id", 1}, {"role", "OWNER"}}}}}, false);
  EXPECT_NE(role.error().fields[0].message.find("VIEWER, OPERATOR, DEVELOPER, ADMIN"), std::string::npos);
  const auto both = ReadUserBody(
      json{{"permitted_group_ids", {1}}, {"group_roles", {{{"group_id", 1}, {"role", "VIEWER"}}}}}, false);
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().fields[0].field, "group_roles");
}

}  // namespace
