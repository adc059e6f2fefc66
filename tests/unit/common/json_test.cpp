// The JSON reader shared by the admin and the executor (cronwheel/json.hpp).
#include "cronwheel/json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace {

using cronwheel::DuplicateKeys;
using cronwheel::ParseJson;
using cronwheel::ParseOrderedJson;
using ::testing::HasSubstr;

// Security review 2, N3: a parameter spliced together from a template and a parent's output could name
// "url" twice, and nlohmann's reader keeps the last one. A parameter is read refusing that.
TEST(Json, N3_ADuplicateKeyIsRefusedAtAnyDepthWhenAskedAndTheLastWinsOtherwise) {
  const std::string twice = R"({"url":"http://ok/report?id=7","method":"GET","url":"http://ok/admin"})";
  const auto refused = ParseJson(twice, "the param", DuplicateKeys::kRefuse);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("the param names the key 'url' twice in one object"));
  const auto nested = ParseJson(R"({"a":[{"b":1,"c":{"d":1,"d":2}}]})", "the param", DuplicateKeys::kRefuse);
  ASSERT_FALSE(nested.ok());
  EXPECT_THAT(nested.status().message(), HasSubstr("'d' twice"));
  EXPECT_FALSE(ParseOrderedJson(twice, "the param", DuplicateKeys::kRefuse).ok());
  // The same key in two objects, or in an object and its member, is not a duplicate.
  const auto siblings =
      ParseJson(R"({"a":{"k":1},"b":{"k":2},"k":{"k":3}})", "the param", DuplicateKeys::kRefuse);
  ASSERT_TRUE(siblings.ok()) << siblings.status();
  EXPECT_EQ((*siblings)["k"]["k"], 3);
  // Request bodies keep nlohmann's reading: the last one.
  const auto last = ParseJson(twice);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->at("url"), "http://ok/admin");
}

TEST(Json, AnOrderedParseKeepsTheKeysInTheOrderOfTheText) {
  const auto j = ParseOrderedJson(R"({"z":1,"a":{"y":2,"b":3}})", "text", DuplicateKeys::kRefuse);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->dump(), R"({"z":1,"a":{"y":2,"b":3}})");
  const auto deep =
      ParseOrderedJson(std::string(100, '[') + std::string(100, ']'), "text", DuplicateKeys::kRefuse);
  ASSERT_FALSE(deep.ok());
  EXPECT_THAT(deep.status().message(), HasSubstr("deeper than 64 levels"));
}

}  // namespace
