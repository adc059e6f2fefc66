// A child job's or a workflow node's parameter naming a parent fire's result (admin/model/parent_refs.hpp),
// and how each value goes in (security review 2, N3: as data, never spliced into the parameter's syntax).
#include "admin/model/parent_refs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using cronwheel::admin::CheckParamRefs;
using cronwheel::admin::HasParentRefs;
using cronwheel::admin::ParamRefs;
using cronwheel::admin::ParentResult;
using cronwheel::admin::ResolveParentRefs;
using cronwheel::admin::ResolveWorkflowRefs;
using cronwheel::admin::WorkflowRefs;
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
  EXPECT_FALSE(r.refused);
  r = ResolveParentRefs("{{parent.output}}", kParent);
  EXPECT_EQ(json::parse(r.param), *kParent.output) << "a whole object as compact JSON";
  r = ResolveParentRefs(" {{parent.handle_msg}} ", kParent);
  EXPECT_EQ(r.param, " exported 42 rows ") << "alone, a value is the whole parameter, whatever it holds";
  r = ResolveParentRefs("fire {{parent.log_id}}", kParent);
  EXPECT_EQ(r.param, "fire 812");
  r = ResolveParentRefs("{{parent.output.parts}}", kParent);
  EXPECT_EQ(r.param, R"([{"name":"a"},{"name":"b"}])");
  // A string output is its text, without quotes; an unclosed reference is text.
  r = ResolveParentRefs("x={{parent.output}} {{parent.output",
                        ParentResult{.log_id = 1, .output = json("done")});
  EXPECT_EQ(r.param, "x=done {{parent.output");
  EXPECT_FALSE(r.refused);
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
  // Standing alone as a JSON value, it is null.
  r = ResolveParentRefs(R"({"rows": {{parent.output.rows}}})", ParentResult{.log_id = 5});
  EXPECT_EQ(r.param, R"({"rows":null})");
  EXPECT_THAT(r.notes, ElementsAre(HasSubstr("{{parent.output.rows}} replaced by null: fire 5 returned no")));
}

// The finding's attack: a child httpJobHandler job whose param asks for GET /ok/report?id=<the parent's id>,
// and a parent whose output's id closes the string and names "method" and "url" again. Spliced as text, the
// last keys won and the request became DELETE /ok/admin/delete-everything. Now the value is text inside the
// url string, percent-encoded there: one url, one method, the report asked for an odd id.
TEST(ParentRefs, N3_AParentsOutputCannotAddKeysToAChildsJsonParameter) {
  const std::string param =
      R"({"url": "http://127.0.0.1:8080/ok/report?id={{parent.output.id}}", "method": "GET"})";
  const ParentResult crafted{
      .log_id = 9,
      .output = json{
          {"id", R"(7", "method": "DELETE", "url": "http://127.0.0.1:8080/ok/admin/delete-everything)"}}};
  const auto r = ResolveParentRefs(param, crafted);
  ASSERT_FALSE(r.refused) << *r.refused;
  const auto sent = json::parse(r.param);  // would throw on a broken document
  EXPECT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent.at("method"), "GET");
  EXPECT_EQ(
      sent.at("url"),
      "http://127.0.0.1:8080/ok/report?id=7%22%2C%20%22method%22%3A%20%22DELETE%22%2C%20%22url%22%3A%20%22"
      "http%3A%2F%2F127.0.0.1%3A8080%2Fok%2Fadmin%2Fdelete-everything");
  EXPECT_EQ(r.param.find("\"url\""), r.param.rfind("\"url\"")) << "one url key: " << r.param;
  // A plain id goes in as it is, and the keys keep their order.
  const auto plain = ResolveParentRefs(param, ParentResult{.log_id = 9, .output = json{{"id", 7}}});
  EXPECT_EQ(plain.param, R"({"url":"http://127.0.0.1:8080/ok/report?id=7","method":"GET"})");
  // The same attack on a URL parameter (not JSON): encoded.
  const auto url = ResolveParentRefs("http://127.0.0.1:8080/ok/report?id={{parent.output.id}}", crafted);
  ASSERT_FALSE(url.refused);
  EXPECT_EQ(url.param.find(' '), std::string::npos);
  EXPECT_THAT(url.param, HasSubstr("id=7%22%2C%20%22method"));
  // A parameter that is JSON with a duplicate key of its own is refused, at save and at the fire.
  const std::string twice = R"({"url": "http://h/x?id={{parent.output.id}}", "url": "http://h/y"})";
  EXPECT_THAT(CheckParamRefs(twice, ParamRefs::kChildJob).value_or(""),
              HasSubstr("names the key 'url' twice"));
  EXPECT_TRUE(ResolveParentRefs(twice, crafted).refused);
}

TEST(ParentRefs, N3_InJsonAValueStandsAloneAsItselfOrGoesIntoAStringEscaped) {
  const ParentResult p{.log_id = 3,
                       .handle_msg = "line 1\n\"quoted\"",
                       .output = json{{"rows", 42}, {"tags", {"a", "b"}}, {"name", R"(x"}, "y": {")"}}};
  auto r = ResolveParentRefs(
      R"({"rows": {{parent.output.rows}}, "tags": {{parent.output.tags}}, "msg": "said: {{parent.handle_msg}}",)"
      R"( "name": "{{parent.output.name}}", "all": [{{parent.output.rows}}, "{{parent.log_id}}"]})",
      p);
  ASSERT_FALSE(r.refused) << *r.refused;
  EXPECT_EQ(json::parse(r.param), (json{{"rows", 42},
                                        {"tags", {"a", "b"}},
                                        {"msg", "said: line 1\n\"quoted\""},
                                        {"name", R"(x"}, "y": {")"},
                                        {"all", {42, "3"}}}));
  // Text and references that are not the parameter's stay; escapes in the template's strings are kept.
  r = ResolveParentRefs(R"({"t": "{{other}} \"{{parent.log_id}}\"", "n": 1.5})", p);
  EXPECT_EQ(r.param, R"({"t":"{{other}} \"3\"","n":1.5})");
}

TEST(ParentRefs, N3_WhatNoRuleMakesSafeIsRefusedAtSaveOrAtTheFire) {
  // At save: the structure cannot be known to be safe, whatever the values.
  const auto check = [](const std::string& param) {
    return CheckParamRefs(param, ParamRefs::kChildJob).value_or("");
  };
  EXPECT_THAT(check(R"({"a": x{{parent.output}}})"), HasSubstr("is read as JSON"));
  EXPECT_THAT(check(R"({ {{parent.output.key}}: 1})"), HasSubstr("a reference stands in an object key"));
  EXPECT_THAT(check(R"({"{{parent.output.key}}": 1})"), HasSubstr("a reference stands in an object key"));
  EXPECT_THAT(check("http://{{parent.output.host}}/x"), HasSubstr("scheme or host of the URL"));
  EXPECT_THAT(check(R"({"url": "https://h{{parent.output.port}}/x"})"), HasSubstr("scheme or host"));
  EXPECT_EQ(check("--in {{parent.output.file}}"), "");
  EXPECT_EQ(check(R"({"url": "http://h/x?id={{parent.output.id}}", "n": {{parent.output.n}}})"), "");
  EXPECT_EQ(check("{{workflow.param}} {{ not ours }}"), "")
      << "a child job's parameter names its parent only";
  EXPECT_THAT(CheckParamRefs(R"({"a": {{workflow.param}}x})", ParamRefs::kWorkflowNode).value_or(""),
              HasSubstr("is read as JSON"));
  // At the fire: a value a text parameter cannot take, or a dot segment in a URL.
  auto r = ResolveParentRefs("--message {{parent.handle_msg}}", kParent);
  ASSERT_TRUE(r.refused);
  EXPECT_THAT(*r.refused,
              HasSubstr("the value of {{parent.handle_msg}} ('exported 42 rows') cannot go into a "
                        "text parameter"));
  r = ResolveParentRefs("--rows={{parent.output.rows}} --x {{parent.output.parts}}", kParent);
  EXPECT_THAT(r.refused.value_or(""), HasSubstr("{{parent.output.parts}}"));
  r = ResolveParentRefs("http://h/files/{{parent.output}}/x", ParentResult{.output = json("..")});
  EXPECT_THAT(r.refused.value_or(""), HasSubstr("a dot segment"));
}

TEST(ParentRefs, AWorkflowNodesParameterTakesTheSameRules) {
  const WorkflowRefs refs{.run_id = 77,
                          .workflow_param = R"(a", "b": "c)",
                          .parents = {{"load", ParentResult{.log_id = 5, .output = json{{"n", 3}}}}}};
  auto r = ResolveWorkflowRefs(
      R"({"p": "{{workflow.param}}", "run": {{workflow.run_id}}, "n": {{parent.output.n}}})", refs);
  ASSERT_FALSE(r.refused) << *r.refused;
  EXPECT_EQ(json::parse(r.param), (json{{"p", R"(a", "b": "c)"}, {"run", 77}, {"n", 3}}));
  r = ResolveWorkflowRefs("--n={{parents.load.output.n}} --p={{workflow.param}}", refs);
  EXPECT_THAT(r.refused.value_or(""), HasSubstr("{{workflow.param}}"));
  r = ResolveWorkflowRefs("{{workflow.param}}", refs);
  EXPECT_EQ(r.param, refs.workflow_param) << "the run's parameter as the whole parameter";
}

}  // namespace
