// A child job's parameter naming its parent fire's result (admin/model/parent_refs.hpp).
#include "admin/model/parent_refs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using cronwheel::admin::HasParentRefs;
using cronwheel::admin::ParentResult;
using cronwheel::admin::ResolveParentRefs;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const ParentResult kParent{
    .log_id = 812,
    .handle_msg = "exported 42 rows",
    .output = json{
        {"rows", 42}, {"file", "s3://bucket/2026-11-27.csv"}, {"parts", {{{"name", "a"}}, {{"name", "b"}}}}}};

TEST(ParentRefs, MembersAndValuesReplaceTheirReferencesAndTheRestIsKept) {
  EXPECT_FALSE(HasParentRefs("plain {{not.a.ref}}"));
  EXPECT_TRUE(HasParentRefs("--in {{parent.output.file}}"));
  auto r = ResolveParentRefs(
      "--in {{parent.output.file}} --rows={{parent.output.rows}} --part {{parent.output.parts.1.name}}",
      kParent);
  EXPECT_EQ(r.param, "--in s3://bucket/2026-11-27.csv --rows=42 --part b");
  EXPECT_TRUE(r.notes.empty());
  r = ResolveParentRefs("{{parent.output}}", kParent);
  EXPECT_EQ(json::parse(r.param), *kParent.output) << "a whole object as compact JSON";
  r = ResolveParentRefs("{{parent.handle_msg}} (fire {{parent.log_id}})", kParent);
  EXPECT_EQ(r.param, "exported 42 rows (fire 812)");
  r = ResolveParentRefs("{{parent.output.parts}}", kParent);
  EXPECT_EQ(r.param, R"([{"name":"a"},{"name":"b"}])");
  // A string output is its text, without quotes; an unclosed reference is text.
  r = ResolveParentRefs("x={{parent.output}} {{parent.output",
                        ParentResult{.log_id = 1, .output = json("done")});
  EXPECT_EQ(r.param, "x=done {{parent.output");
}

TEST(ParentRefs, WhatCannotBeResolvedIsEmptyAndSaysWhy) {
  auto r = ResolveParentRefs("a{{parent.output.missing}}b{{parent.output.parts.9}}c{{parent.output.rows.x}}",
                             kParent);
  EXPECT_EQ(r.param, "abc");
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_THAT(
      r.notes[0],
      HasSubstr("{{parent.output.missing}} replaced by '': the output of fire 812 has no member 'missing'"));
  EXPECT_THAT(r.notes[1], HasSubstr("is an array of 2 and '9' is not an index of it"));
  EXPECT_THAT(r.notes[2], HasSubstr("has no member 'x'"));
  r = ResolveParentRefs("{{parent.output.rows}}", ParentResult{.log_id = 5, .handle_msg = "ok"});
  EXPECT_EQ(r.param, "");
  EXPECT_THAT(r.notes, ElementsAre(HasSubstr("fire 5 returned no output")));
  r = ResolveParentRefs("{{parent.exit_code}}", kParent);
  EXPECT_THAT(r.notes, ElementsAre(HasSubstr("unknown reference: use parent.output")));
}

}  // namespace
