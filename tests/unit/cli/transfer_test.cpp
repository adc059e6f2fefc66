#include "cwcli/transfer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

namespace {

using namespace cronwheel::cli;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A job as GET /api/v1/jobs returns it.
json ApiJob(int id, const std::string& description, std::vector<int> children = {}) {
  return {{"id", id},
          {"group_id", 3},
          {"description", description},
          {"author", "ops"},
          {"alarm_email", ""},
          {"alarm_webhook", ""},
          {"schedule_type", "CRON"},
          {"schedule_conf", "0 0 3 * * ?"},
          {"time_zone", "Europe/Berlin"},
          {"misfire_strategy", "DO_NOTHING"},
          {"route_strategy", "ROUND"},
          {"handler", "demoJobHandler"},
          {"param", "p"},
          {"block_strategy", "SERIAL_EXECUTION"},
          {"timeout_s", 60},
          {"retry_count", 2},
          {"retry_backoff_s", 5},
          {"glue_type", "BEAN"},
          {"glue_source", ""},
          {"glue_remark", ""},
          {"glue_updated_ms", 17},
          {"child_job_ids", children},
          {"tags", {"team:billing", "nightly"}},
          {"calendar_ids", {4}},
          {"start_ms", 1767225600000},
          {"end_ms", 0},
          {"concurrency_policy", "FORBID"},
          {"max_concurrent", 0},
          {"enabled", true},
          {"next_fire_ms", 1767225600000},
          {"last_fire_ms", 0},
          {"stop_reason", ""},
          {"created_ms", 1},
          {"updated_ms", 2}};
}

const json kGroup = {{"id", 3}, {"app_name", "billing"}, {"title", "Billing"}, {"address_type", "AUTO"}};

TEST(MakeDocument, HasTheFormatTheVersionAndNoServerOwnedFields) {
  std::vector<std::string> warnings;
  Problems problems;
  const auto doc = MakeDocument(kGroup, {ApiJob(9, "b job", {8}), ApiJob(8, "a job")}, warnings, problems);
  ASSERT_TRUE(doc);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(doc->at("format"), "cronwheel.jobs");
  EXPECT_EQ(doc->at("version"), 1);
  EXPECT_EQ(doc->at("group"), nlohmann::ordered_json({{"app_name", "billing"}, {"title", "Billing"}}));
  const auto& jobs = doc->at("jobs");
  ASSERT_EQ(jobs.size(), 2U);
  EXPECT_EQ(jobs[0].at("description"), "a job") << "sorted by description";
  EXPECT_EQ(jobs[1].at("child_jobs"), nlohmann::ordered_json({"a job"})) << "children by description";
  std::vector<std::string> keys;
  for (const auto& [k, v] : jobs[1].items())
    keys.push_back(k);
  const auto& portable = cronwheel::cli::PortableJobFields();
  EXPECT_EQ(keys, std::vector<std::string>(portable.begin(), portable.end())) << "every field, in order";
  EXPECT_EQ(jobs[1].at("start_ms"), 1767225600000) << "the window travels";
  EXPECT_EQ(jobs[1].at("concurrency_policy"), "FORBID") << "and the concurrency limit";
  for (const auto* owned : {"id", "group_id", "calendar_ids", "glue_updated_ms", "next_fire_ms",
                            "last_fire_ms", "stop_reason", "created_ms", "updated_ms", "child_job_ids"}) {
    EXPECT_FALSE(jobs[1].contains(owned)) << owned;
  }
  // Deterministic: the same jobs in another order give the same bytes.
  const auto again = MakeDocument(kGroup, {ApiJob(8, "a job"), ApiJob(9, "b job", {8})}, warnings, problems);
  EXPECT_EQ(doc->dump(2), again->dump(2));
}

TEST(MakeDocument, AChildOutsideTheGroupIsLeftOutWithAWarning) {
  std::vector<std::string> warnings;
  Problems problems;
  const auto doc = MakeDocument(kGroup, {ApiJob(9, "b job", {44})}, warnings, problems);
  ASSERT_TRUE(doc);
  EXPECT_TRUE(doc->at("jobs")[0].at("child_jobs").empty());
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("child job 44 is not in group 3"));
}

TEST(MakeDocument, TwoJobsWithOneDescriptionCannotBeExported) {
  std::vector<std::string> warnings;
  Problems problems;
  EXPECT_FALSE(MakeDocument(kGroup, {ApiJob(8, "same"), ApiJob(9, "same")}, warnings, problems));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_THAT(problems[0].message, HasSubstr("'same'"));
  EXPECT_THAT(problems[0].message, HasSubstr("job 8"));
}

TEST(ReadDocument, AnExportReadsBackToTheBodiesThatRecreateIt) {
  std::vector<std::string> warnings;
  Problems problems;
  const auto made = MakeDocument(kGroup, {ApiJob(9, "b job", {8}), ApiJob(8, "a job")}, warnings, problems);
  const auto doc = ReadDocument(json::parse(made->dump()), {}, warnings, problems);
  ASSERT_TRUE(doc) << cronwheel::cli::FormatProblems(problems);
  ASSERT_EQ(doc->jobs.size(), 2U);
  EXPECT_EQ(doc->jobs[1].child_jobs, std::vector<std::string>{"a job"});
  EXPECT_EQ(doc->jobs[1].fields.at("tags"), (json{"team:billing", "nightly"})) << "tags are kept";
  const auto body = cronwheel::cli::ImportBody(doc->jobs[1], 7, false);
  auto expected = ApiJob(0, "b job");
  for (const auto* owned : {"id", "glue_updated_ms", "next_fire_ms", "last_fire_ms", "stop_reason",
                            "created_ms", "updated_ms", "child_job_ids", "calendar_ids"}) {
    expected.erase(owned);
  }
  expected["group_id"] = 7;
  EXPECT_EQ(body, expected);
  EXPECT_EQ(cronwheel::cli::ImportBody(doc->jobs[1], 7, true).at("enabled"), false) << "--stopped";
  const auto update = cronwheel::cli::ImportBody(doc->jobs[0], std::nullopt, true);
  EXPECT_FALSE(update.contains("group_id"));
  EXPECT_FALSE(update.contains("enabled")) << "an update with --stopped leaves the job's state alone";
  EXPECT_EQ(update.at("child_job_ids"), json::array()) << "no children in the document: none after";
}

TEST(ReadDocument, TheVersionIsChecked) {
  struct Case {
    json doc;
    std::string field;
    std::string mentions;
  };
  const std::vector<Case> cases = {
      {{{"format", "cronwheel.jobs"}, {"version", 2}, {"jobs", json::array()}}, "version", "newer"},
      {{{"format", "cronwheel.jobs"}, {"version", "1"}, {"jobs", json::array()}}, "version", "integer 1"},
      {{{"format", "cronwheel.jobs"}, {"jobs", json::array()}}, "version", "nothing"},
      {{{"format", "something.else"}, {"version", 1}, {"jobs", json::array()}}, "format", "cronwheel.jobs"},
      {{{"format", "cronwheel.jobs"}, {"version", 1}}, "jobs", "list of jobs"},
      {{{"hello", 1}}, "", "not a job document"},
      {json("text"), "", "not a job document"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> warnings;
    Problems problems;
    EXPECT_FALSE(ReadDocument(c.doc, {}, warnings, problems)) << c.doc;
    ASSERT_EQ(problems.size(), 1U) << c.doc;
    EXPECT_EQ(problems[0].field, c.field) << c.doc;
    EXPECT_THAT(problems[0].message, HasSubstr(c.mentions)) << c.doc;
  }
}

TEST(ReadDocument, JobsAreCheckedFieldByField) {
  const json doc = {{"format", "cronwheel.jobs"},
                    {"version", 1},
                    {"comment", "ignored"},
                    {"jobs",
                     {{{"description", "a"}, {"schedule_type", "NONE"}, {"timeout_s", "60"}},
                      {{"description", "b"}, {"schedule_type", "NONE"}, {"id", 4}},
                      {{"schedule_type", "NONE"}},
                      {{"description", "a"}, {"schedule_type", "NONE"}, {"child_jobs", {"nobody"}}},
                      {{"description", "c"}, {"schedule_type", "NONE"}, {"child_jobs", {1}}}}}};
  std::vector<std::string> warnings;
  Problems problems;
  EXPECT_FALSE(ReadDocument(doc, {}, warnings, problems));
  const auto text = cronwheel::cli::FormatProblems(problems);
  EXPECT_THAT(text, HasSubstr("jobs[0].timeout_s: expected an integer"));
  EXPECT_THAT(text, HasSubstr("jobs[1].id: unknown field"));
  EXPECT_THAT(text, HasSubstr("jobs[2].description: missing"));
  EXPECT_THAT(text, HasSubstr("jobs[4].child_jobs: expected a list of job descriptions"));

  const json dup = {{"format", "cronwheel.jobs"},
                    {"version", 1},
                    {"jobs",
                     {{{"description", "a"}, {"schedule_type", "NONE"}},
                      {{"description", "a"}, {"schedule_type", "NONE"}, {"child_jobs", {"nobody"}}}}}};
  problems.clear();
  EXPECT_FALSE(ReadDocument(dup, {}, warnings, problems));
  const auto dup_text = cronwheel::cli::FormatProblems(problems);
  EXPECT_THAT(dup_text, HasSubstr("jobs[1].description: 'a' is also the description of the job at index 0"));
  EXPECT_THAT(dup_text, HasSubstr("jobs[1].child_jobs[0]: 'nobody' is not the description of a job"));
}

TEST(ReadDocument, AnXxlJobListIsMappedFieldByField) {
  const json page = {
      {"recordsTotal", 2},
      {"data",
       {{{"id", 1},
         {"jobGroup", 1},
         {"jobDesc", "测试任务"},
         {"addTime", "2024-01-01T00:00:00.000+00:00"},
         {"author", "XXL"},
         {"alarmEmail", nullptr},
         {"scheduleType", "CRON"},
         {"scheduleConf", "0 0 0 * * ? *"},
         {"misfireStrategy", "DO_NOTHING"},
         {"executorRouteStrategy", "FIRST"},
         {"executorHandler", "demoJobHandler"},
         {"executorParam", "x"},
         {"executorBlockStrategy", "SERIAL_EXECUTION"},
         {"executorTimeout", 0},
         {"executorFailRetryCount", 1},
         {"glueType", "BEAN"},
         {"glueSource", ""},
         {"glueRemark", "GLUE代码初始化"},
         {"childJobId", "2,99"},
         {"triggerStatus", 1},
         {"triggerLastTime", 0},
         {"triggerNextTime", 0},
         {"somethingNew", true}},
        {{"id", 2}, {"jobDesc", "old style"}, {"jobCron", "0 * * * * ?"}, {"triggerStatus", 0}}}}};
  std::vector<std::string> warnings;
  Problems problems;
  const auto doc = ReadDocument(page, {.xxl_time_zone = "Asia/Shanghai"}, warnings, problems);
  ASSERT_TRUE(doc) << cronwheel::cli::FormatProblems(problems);
  EXPECT_EQ(doc->source, "XXL-JOB 2.x /jobinfo/pageList answer");
  ASSERT_EQ(doc->jobs.size(), 2U);
  EXPECT_EQ(doc->jobs[0].fields, json({{"description", "测试任务"},
                                       {"author", "XXL"},
                                       {"schedule_type", "CRON"},
                                       {"schedule_conf", "0 0 0 * * ? *"},
                                       {"time_zone", "Asia/Shanghai"},
                                       {"misfire_strategy", "DO_NOTHING"},
                                       {"route_strategy", "FIRST"},
                                       {"handler", "demoJobHandler"},
                                       {"param", "x"},
                                       {"block_strategy", "SERIAL_EXECUTION"},
                                       {"timeout_s", 0},
                                       {"retry_count", 1},
                                       {"glue_type", "BEAN"},
                                       {"glue_source", ""},
                                       {"glue_remark", "GLUE代码初始化"},
                                       {"enabled", true}}));
  EXPECT_EQ(doc->jobs[0].child_jobs, std::vector<std::string>{"old style"});
  EXPECT_EQ(doc->jobs[1].fields.at("schedule_type"), "CRON");
  EXPECT_EQ(doc->jobs[1].fields.at("schedule_conf"), "0 * * * * ?");
  EXPECT_EQ(doc->jobs[1].fields.at("enabled"), false);
  EXPECT_THAT(warnings, ::testing::Contains(HasSubstr("child job 99 is not in this list")));
  EXPECT_THAT(warnings, ::testing::Contains(HasSubstr("'somethingNew' has no cronwheel equivalent")));

  // A plain array reads the same; a wrong type names XXL-JOB's field.
  problems.clear();
  EXPECT_TRUE(ReadDocument(page.at("data"), {}, warnings, problems));
  EXPECT_FALSE(
      ReadDocument(json::array({{{"jobDesc", "a"}, {"executorTimeout", "10"}}}), {}, warnings, problems));
  EXPECT_EQ(problems.at(0).field, "[0].executorTimeout");
}

// A fixture of tests/unit/cli/fixtures/: one XXL-JOB version's /jobinfo/pageList answer (its "//" key
// names the version and the sources it follows).
json Fixture(const std::string& name) {
  std::ifstream in(std::string(CRONWHEEL_SOURCE_DIR) + "/tests/unit/cli/fixtures/" + name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return json::parse(text.str());
}

// What `import` reads from `doc`; a test failure names every problem.
JobDocument ReadOk(const json& doc, std::vector<std::string>& warnings,
                   const std::string& time_zone = "UTC") {
  Problems problems;
  auto read = ReadDocument(doc, {.xxl_time_zone = time_zone}, warnings, problems);
  EXPECT_TRUE(read) << cronwheel::cli::FormatProblems(problems);
  return read.value_or(JobDocument{});
}

TEST(ReadDocument, XxlJob2xPageListAnswer) {
  std::vector<std::string> warnings;
  const auto doc = ReadOk(Fixture("xxl-job-2.x-pagelist.json"), warnings, "Asia/Shanghai");
  EXPECT_EQ(doc.source, "XXL-JOB 2.x /jobinfo/pageList answer");
  EXPECT_TRUE(warnings.empty()) << ::testing::PrintToString(warnings) << ": every XxlJobInfo field is known";
  ASSERT_EQ(doc.jobs.size(), 2U);
  EXPECT_EQ(doc.jobs[0].fields, json({{"description", "测试任务1"},
                                      {"author", "XXL"},
                                      {"alarm_email", ""},
                                      {"schedule_type", "CRON"},
                                      {"schedule_conf", "0 0 0 * * ? *"},
                                      {"time_zone", "Asia/Shanghai"},
                                      {"misfire_strategy", "DO_NOTHING"},
                                      {"route_strategy", "FIRST"},
                                      {"handler", "demoJobHandler"},
                                      {"param", ""},
                                      {"block_strategy", "SERIAL_EXECUTION"},
                                      {"timeout_s", 0},
                                      {"retry_count", 0},
                                      {"glue_type", "BEAN"},
                                      {"glue_source", ""},
                                      {"glue_remark", "GLUE代码初始化"},
                                      {"enabled", true}}));
  EXPECT_EQ(doc.jobs[0].child_jobs, std::vector<std::string>{"clean up temp files"}) << "childJobId 2";
  EXPECT_EQ(doc.jobs[1].fields, json({{"description", "clean up temp files"},
                                      {"author", "ops"},
                                      {"alarm_email", "ops@example.com"},
                                      {"schedule_type", "FIX_RATE"},
                                      {"schedule_conf", "3600"},
                                      {"time_zone", "Asia/Shanghai"},
                                      {"misfire_strategy", "FIRE_ONCE_NOW"},
                                      {"route_strategy", "ROUND"},
                                      {"handler", ""},
                                      {"param", "/tmp/billing"},
                                      {"block_strategy", "DISCARD_LATER"},
                                      {"timeout_s", 600},
                                      {"retry_count", 2},
                                      {"glue_type", "GLUE_SHELL"},
                                      {"glue_source", "#!/bin/bash\nfind \"$1\" -mtime +7 -delete\n"},
                                      {"glue_remark", "first version"},
                                      {"enabled", false}}));
  EXPECT_TRUE(doc.jobs[1].child_jobs.empty());
}

TEST(ReadDocument, XxlJob33PageListAnswer) {
  std::vector<std::string> warnings;
  const auto doc = ReadOk(Fixture("xxl-job-3.3-pagelist.json"), warnings);
  EXPECT_EQ(doc.source, "XXL-JOB 3.3+ /jobinfo/pageList answer");
  EXPECT_TRUE(warnings.empty()) << ::testing::PrintToString(warnings);
  ASSERT_EQ(doc.jobs.size(), 2U);
  EXPECT_EQ(doc.jobs[0].description(), "nightly invoices");
  EXPECT_EQ(doc.jobs[0].fields.at("route_strategy"), "CONSISTENT_HASH");
  EXPECT_EQ(doc.jobs[0].fields.at("timeout_s"), 1800);
  EXPECT_EQ(doc.jobs[0].fields.at("time_zone"), "UTC") << "no zone in the answer: --time-zone";
  EXPECT_EQ(doc.jobs[0].fields.at("enabled"), true);
  EXPECT_EQ(doc.jobs[0].child_jobs, std::vector<std::string>{"send invoices"}) << "childJobId 9";
  EXPECT_EQ(doc.jobs[1].fields, json({{"description", "send invoices"},
                                      {"author", "billing"},
                                      {"schedule_type", "NONE"},
                                      {"schedule_conf", ""},
                                      {"time_zone", "UTC"},
                                      {"misfire_strategy", "DO_NOTHING"},
                                      {"route_strategy", "FIRST"},
                                      {"handler", ""},
                                      {"block_strategy", "SERIAL_EXECUTION"},
                                      {"timeout_s", 0},
                                      {"retry_count", 0},
                                      {"glue_type", "GLUE_PYTHON"},
                                      {"glue_source", "#!/usr/bin/env python3\nprint('sending')\n"},
                                      {"glue_remark", "python3"},
                                      {"enabled", false}}))
      << "alarmEmail and executorParam are null: absent, so cronwheel's defaults";
}

TEST(ReadDocument, XxlJob35PageListAnswerNamesTheDescriptionName) {
  std::vector<std::string> warnings;
  const auto doc = ReadOk(Fixture("xxl-job-3.5-pagelist.json"), warnings, "Europe/Berlin");
  EXPECT_EQ(doc.source, "XXL-JOB 3.5+ /jobinfo/pageList answer");
  EXPECT_TRUE(warnings.empty()) << ::testing::PrintToString(warnings) << ": name is known";
  ASSERT_EQ(doc.jobs.size(), 2U);
  EXPECT_EQ(doc.jobs[0].description(), "daily report");
  EXPECT_EQ(doc.jobs[0].fields.at("time_zone"), "Europe/Berlin") << "3.5 has no zone either: --time-zone";
  EXPECT_EQ(doc.jobs[0].fields.at("route_strategy"), "SHARDING_BROADCAST");
  EXPECT_EQ(doc.jobs[0].fields.at("block_strategy"), "COVER_EARLY");
  EXPECT_EQ(doc.jobs[0].child_jobs, std::vector<std::string>{"archive report"}) << "childJobId 12, by name";
  EXPECT_EQ(doc.jobs[1].description(), "archive report");
  EXPECT_EQ(doc.jobs[1].fields.at("time_zone"), "Europe/Berlin");
  EXPECT_EQ(doc.jobs[1].fields.at("glue_type"), "GLUE_NODEJS");
  // The plain list of a 3.5 answer reads the same.
  const auto plain = ReadOk(Fixture("xxl-job-3.5-pagelist.json").at("data").at("data"), warnings);
  EXPECT_EQ(plain.source, "XXL-JOB 3.5+ job list");
  ASSERT_EQ(plain.jobs.size(), 2U);
  EXPECT_EQ(plain.jobs[1].description(), "archive report");
}

TEST(ReadDocument, AScheduleTimezoneIsNoXxlJobFieldAndIsIgnored) {
  // No XXL-JOB release has a job time zone; a list that carries one (a patched admin) keeps --time-zone.
  auto answer = Fixture("xxl-job-3.5-pagelist.json");
  answer["data"]["data"][0]["scheduleTimezone"] = "Asia/Shanghai";
  std::vector<std::string> warnings;
  const auto doc = ReadOk(answer, warnings, "Europe/Berlin");
  EXPECT_EQ(doc.jobs.at(0).fields.at("time_zone"), "Europe/Berlin");
  EXPECT_THAT(warnings, ElementsAre("XXL-JOB field 'scheduleTimezone' has no cronwheel equivalent: ignored"));
}

TEST(ReadDocument, AnXxlJobProblemNamesItsPlaceInTheAnswer) {
  struct Case {
    std::string fixture;
    std::function<void(json&)> spoil;
    std::string place;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"xxl-job-2.x-pagelist.json", [](json& d) { d["data"][1]["executorTimeout"] = "10"; },
       "data[1].executorTimeout", "expected an integer"},
      {"xxl-job-3.3-pagelist.json", [](json& d) { d["data"]["data"][0]["executorTimeout"] = "10"; },
       "data.data[0].executorTimeout", "expected an integer"},
      {"xxl-job-3.3-pagelist.json", [](json& d) { d["data"]["data"][1].erase("jobDesc"); },
       "data.data[1].jobDesc", "missing"},
      {"xxl-job-3.5-pagelist.json", [](json& d) { d["data"]["data"][1]["name"] = nullptr; },
       "data.data[1].name", "missing"},
      {"xxl-job-3.5-pagelist.json", [](json& d) { d["data"]["data"][1]["name"] = "daily report"; },
       "data.data[1].name", "also the description of the job at index 0"},
      {"xxl-job-3.5-pagelist.json", [](json& d) { d["data"]["data"][0]["jobDesc"] = "other"; },
       "data.data[0].name", "differs from the other description field \"other\""},
  };
  for (const auto& c : cases) {
    auto doc = Fixture(c.fixture);
    c.spoil(doc);
    std::vector<std::string> warnings;
    Problems problems;
    EXPECT_FALSE(ReadDocument(doc, {}, warnings, problems)) << c.place;
    ASSERT_EQ(problems.size(), 1U) << c.place << ": " << cronwheel::cli::FormatProblems(problems);
    EXPECT_EQ(problems[0].field, c.place);
    EXPECT_THAT(problems[0].message, HasSubstr(c.says)) << c.place;
  }
}

TEST(ReadDocument, OnePageOfAPageListAnswerIsAWarning) {
  auto v3 = Fixture("xxl-job-3.3-pagelist.json");
  v3["data"]["total"] = 57;
  std::vector<std::string> warnings;
  ReadOk(v3, warnings);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("holds 2 of the 57 jobs its data.total counts"));
  EXPECT_THAT(warnings[0], HasSubstr("pagesize=57"));

  auto v2 = Fixture("xxl-job-2.x-pagelist.json");
  v2["recordsTotal"] = 40;
  warnings.clear();
  ReadOk(v2, warnings);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("holds 2 of the 40 jobs its recordsTotal counts"));
  EXPECT_THAT(warnings[0], HasSubstr("length=40"));
}

TEST(ReadDocument, AnUnknownShapeIsRefusedNamingWhatWasFoundAndTheShapesRead) {
  struct Case {
    json doc;
    std::string found;
  };
  const std::vector<Case> cases = {
      // xxl-tool's other PageModel (pageData, totalCount): no XXL-JOB release of ours answers it.
      {{{"code", 200}, {"data", {{"pageData", json::array()}, {"totalCount", 0}}}},
       R"(found an object with the keys "code", "data" whose "data" is an object with the keys "pageData", "totalCount")"},
      {{{"content", {{"data", json::array()}}}}, R"(found an object with the key "content")"},
      {{{"data", {{"rows", json::array()}}}}, R"(whose "data" is an object with the key "rows")"},
      {json("jobs"), R"(found a string ("jobs"))"},
      {json(), "found null"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> warnings;
    Problems problems;
    EXPECT_FALSE(ReadDocument(c.doc, {}, warnings, problems)) << c.doc;
    ASSERT_EQ(problems.size(), 1U) << c.doc;
    EXPECT_EQ(problems[0].field, "") << c.doc;
    const auto& m = problems[0].message;
    EXPECT_THAT(m, HasSubstr(c.found)) << c.doc;
    EXPECT_THAT(m, HasSubstr(R"({"format": "cronwheel.jobs", "version": 1, "jobs": [...]})"));
    EXPECT_THAT(m,
                HasSubstr(R"(XXL-JOB 2.x /jobinfo/pageList: {"recordsTotal": n, "data": [XxlJobInfo...]})"));
    EXPECT_THAT(
        m,
        HasSubstr(
            R"(XXL-JOB 3.3+ /jobinfo/pageList: {"code": 200, "data": {"data": [XxlJobInfo...], "total": n}})"));
    EXPECT_THAT(m, HasSubstr("3.5: jobs with name instead of jobDesc"));
  }
}

TEST(ReadDocument, AnXxlJobRefusalIsNotAJobList) {
  std::vector<std::string> warnings;
  Problems problems;
  EXPECT_FALSE(
      ReadDocument(json{{"code", 500}, {"msg", "权限拦截"}, {"data", nullptr}}, {}, warnings, problems));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].field, "code");
  EXPECT_THAT(problems[0].message, HasSubstr("XXL-JOB answered code 500 (\"权限拦截\")"));
  EXPECT_THAT(problems[0].message, HasSubstr("code 200"));
}

cronwheel::cli::JobDocument Doc(const std::vector<std::string>& descriptions) {
  cronwheel::cli::JobDocument d;
  for (const auto& s : descriptions) {
    cronwheel::cli::PortableJob j;
    j.fields = {{"description", s}, {"schedule_type", "NONE"}};
    d.jobs.push_back(j);
  }
  return d;
}

TEST(PlanImport, MatchesByDescriptionAndFollowsOnConflict) {
  const auto doc = Doc({"new", "old", "twice"});
  const std::vector<json> target = {ApiJob(5, "old"), ApiJob(6, "twice"), ApiJob(7, "twice"),
                                    ApiJob(8, "unrelated")};
  Problems problems;
  auto steps = PlanImport(doc, target, OnConflict::kSkip, problems);
  ASSERT_TRUE(steps);
  ASSERT_EQ(steps->size(), 3U);
  EXPECT_EQ((*steps)[0].action, ImportStep::Action::kCreate);
  EXPECT_EQ((*steps)[1].action, ImportStep::Action::kSkip);
  EXPECT_EQ((*steps)[1].existing_ids, std::vector<int>{5});
  EXPECT_EQ((*steps)[2].action, ImportStep::Action::kSkip);

  EXPECT_FALSE(PlanImport(doc, target, OnConflict::kFail, problems));
  ASSERT_EQ(problems.size(), 2U);
  EXPECT_THAT(problems[0].message, HasSubstr("'old' exists in the target group as job 5"));
  EXPECT_THAT(problems[0].message, HasSubstr("--on-conflict"));

  problems.clear();
  EXPECT_FALSE(PlanImport(doc, target, OnConflict::kUpdate, problems));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_THAT(problems[0].message, HasSubstr("jobs 6, 7"));

  problems.clear();
  steps = PlanImport(Doc({"new", "old"}), target, OnConflict::kUpdate, problems);
  ASSERT_TRUE(steps);
  EXPECT_EQ((*steps)[1].action, ImportStep::Action::kUpdate);
  EXPECT_EQ((*steps)[1].existing_ids, std::vector<int>{5});
}

// A workflow as GET /api/v1/workflows returns it: extract (job `first`) -> load (job `second`).
json ApiWorkflow(int id, const std::string& name, int first, int second) {
  return {{"id", id},
          {"group_id", 3},
          {"name", name},
          {"nodes",
           {{{"key", "extract"}, {"job_id", first}, {"param", nullptr}},
            {{"key", "load"}, {"job_id", second}, {"param", "{{parents.extract.output}}"}}}},
          {"edges", {{{"from", "extract"}, {"to", "load"}, {"condition", "SUCCESS"}}}},
          {"param", "day"},
          {"schedule_type", "CRON"},
          {"schedule_conf", "0 0 4 * * ?"},
          {"time_zone", "UTC"},
          {"misfire_strategy", "DO_NOTHING"},
          {"enabled", true},
          {"next_fire_ms", 1767225600000},
          {"last_fire_ms", 0},
          {"stop_reason", ""},
          {"created_ms", 1},
          {"updated_ms", 2}};
}

TEST(MakeDocument, WorkflowsNameTheirNodesJobsByDescription) {
  std::vector<std::string> warnings;
  Problems problems;
  const auto doc =
      MakeDocument(kGroup, {ApiJob(8, "a job"), ApiJob(9, "b job")},
                   {ApiWorkflow(21, "z etl", 8, 9), ApiWorkflow(20, "a etl", 9, 8)}, warnings, problems);
  ASSERT_TRUE(doc) << FormatProblems(problems);
  EXPECT_TRUE(warnings.empty());
  const auto& workflows = doc->at("workflows");
  ASSERT_EQ(workflows.size(), 2U);
  EXPECT_EQ(workflows[0].at("name"), "a etl") << "sorted by name";
  EXPECT_EQ(workflows[1].dump(),
            nlohmann::ordered_json(
                {{"name", "z etl"},
                 {"param", "day"},
                 {"schedule_type", "CRON"},
                 {"schedule_conf", "0 0 4 * * ?"},
                 {"time_zone", "UTC"},
                 {"misfire_strategy", "DO_NOTHING"},
                 {"enabled", true},
                 {"nodes",
                  {{{"key", "extract"}, {"job", "a job"}, {"param", nullptr}},
                   {{"key", "load"}, {"job", "b job"}, {"param", "{{parents.extract.output}}"}}}},
                 {"edges", {{{"from", "extract"}, {"to", "load"}, {"condition", "SUCCESS"}}}}})
                .dump())
      << "every writable field but group_id, in order; no id, times or next fire";

  // No workflows: no key, so a group without them exports the same bytes as before workflows.
  EXPECT_FALSE(MakeDocument(kGroup, {ApiJob(8, "a job")}, {}, warnings, problems)->contains("workflows"));
}

TEST(MakeDocument, AWorkflowRunningAJobOutsideTheGroupIsLeftOutAndTwoWithOneNameCannotBeExported) {
  std::vector<std::string> warnings;
  Problems problems;
  const auto doc =
      MakeDocument(kGroup, {ApiJob(8, "a job")}, {ApiWorkflow(21, "etl", 8, 44)}, warnings, problems);
  ASSERT_TRUE(doc);
  EXPECT_FALSE(doc->contains("workflows")) << "none left to export";
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0],
              HasSubstr("workflow 21 ('etl'): node 'load' runs job 44, which is not in group 3"));

  EXPECT_FALSE(MakeDocument(kGroup, {ApiJob(8, "a job")},
                            {ApiWorkflow(21, "etl", 8, 8), ApiWorkflow(22, "etl", 8, 8)}, warnings,
                            problems));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].field, "workflow 22");
  EXPECT_THAT(problems[0].message, HasSubstr("has the name 'etl' of workflow 21"));
}

TEST(ReadDocument, WorkflowsReadBackAndImportWithTheTargetGroupsJobIds) {
  std::vector<std::string> warnings;
  Problems problems;
  const auto made = MakeDocument(kGroup, {ApiJob(8, "a job"), ApiJob(9, "b job")},
                                 {ApiWorkflow(21, "etl", 8, 9)}, warnings, problems);
  const auto doc = ReadDocument(json::parse(made->dump()), {}, warnings, problems);
  ASSERT_TRUE(doc) << FormatProblems(problems);
  ASSERT_EQ(doc->workflows.size(), 1U);
  const auto& w = doc->workflows[0];
  EXPECT_EQ(w.name(), "etl");
  ASSERT_EQ(w.nodes.size(), 2U);
  EXPECT_EQ(w.nodes[0].job, "a job");
  EXPECT_FALSE(w.nodes[0].param);
  EXPECT_EQ(w.nodes[1].param, "{{parents.extract.output}}");

  // In the target group "a job" is 108 and "b job" 109.
  const std::map<std::string, std::vector<int>> ids = {{"a job", {108}}, {"b job", {109}}};
  const auto body = WorkflowImportBody(w, ids, 7, false, problems);
  ASSERT_TRUE(body) << FormatProblems(problems);
  auto expected = ApiWorkflow(0, "etl", 108, 109);
  for (const auto* owned : {"id", "next_fire_ms", "last_fire_ms", "stop_reason", "created_ms", "updated_ms"})
    expected.erase(owned);
  expected["group_id"] = 7;
  EXPECT_EQ(*body, expected);
  EXPECT_EQ(WorkflowImportBody(w, ids, 7, true, problems)->at("enabled"), false) << "--stopped";
  const auto update = WorkflowImportBody(w, ids, std::nullopt, true, problems);
  EXPECT_FALSE(update->contains("group_id"));
  EXPECT_FALSE(update->contains("enabled")) << "an update with --stopped leaves the workflow's state alone";

  EXPECT_FALSE(WorkflowImportBody(w, {{"a job", {108, 110}}}, 7, false, problems));
  const auto text = FormatProblems(problems);
  EXPECT_THAT(text, HasSubstr("node 'extract': its job 'a job' is ambiguous in the target group"));
  EXPECT_THAT(text, HasSubstr("node 'load': its job 'b job' is missing in the target group"));
}

TEST(ReadDocument, WorkflowsAreCheckedFieldByField) {
  const json doc = {
      {"format", "cronwheel.jobs"},
      {"version", 1},
      {"jobs", {{{"description", "a"}, {"schedule_type", "NONE"}}}},
      {"workflows",
       {{{"name", "w"}, {"enabled", "yes"}, {"group_id", 3}, {"nodes", {{{"key", "x"}, {"job", "nobody"}}}}},
        {{"name", "v"},
         {"nodes", {{{"key", "x"}, {"job", "a"}, {"job_id", 4}}, {{"key", "x"}, {"job", "a"}, {"param", 5}}}},
         {"edges", {{{"from", "x"}, {"to", "y"}}}}},
        {{"name", "w"}}}}};
  std::vector<std::string> warnings;
  Problems problems;
  EXPECT_FALSE(ReadDocument(doc, {}, warnings, problems));
  const auto text = FormatProblems(problems);
  EXPECT_THAT(text, HasSubstr("workflows[0].enabled: expected true or false"));
  EXPECT_THAT(text, HasSubstr("workflows[0].group_id: unknown field"));
  EXPECT_THAT(
      text,
      HasSubstr("workflows[0].nodes[0].job: 'nobody' is not the description of a job in this document"));
  EXPECT_THAT(text, HasSubstr("workflows[1].nodes[0].job_id: unknown field"));
  EXPECT_THAT(text, HasSubstr("workflows[1].nodes[1].key: 'x' is the key of another node"));
  EXPECT_THAT(text, HasSubstr("workflows[1].nodes[1].param: expected a string or null"));
  EXPECT_THAT(text, HasSubstr("workflows[1].edges[0].to: 'y' is not the key of a node of this workflow"));
  EXPECT_THAT(text, HasSubstr("workflows[2].nodes: missing"));
  EXPECT_THAT(text, HasSubstr("workflows[2].name: 'w' is also the name of the workflow at index 0"));
}

TEST(PlanWorkflowImport, MatchesByNameLikeJobs) {
  JobDocument doc;
  doc.workflows.resize(2);
  doc.workflows[0].fields["name"] = "etl";
  doc.workflows[1].fields["name"] = "new";
  const std::vector<json> target = {ApiWorkflow(5, "etl", 1, 2)};
  Problems problems;
  EXPECT_FALSE(PlanWorkflowImport(doc, target, OnConflict::kFail, problems));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].field, "workflows[0]");
  EXPECT_THAT(problems[0].message, HasSubstr("'etl' exists in the target group as workflow 5"));
  const auto steps = PlanWorkflowImport(doc, target, OnConflict::kUpdate, problems);
  ASSERT_TRUE(steps);
  EXPECT_EQ((*steps)[0].action, ImportStep::Action::kUpdate);
  EXPECT_EQ((*steps)[0].existing_ids, std::vector<int>{5});
  EXPECT_EQ((*steps)[1].action, ImportStep::Action::kCreate);
}

}  // namespace
