#include "cwcli/transfer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using namespace cronwheel::cli;
using nlohmann::json;
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
  for (const auto* owned : {"id", "group_id", "glue_updated_ms", "next_fire_ms", "last_fire_ms",
                            "stop_reason", "created_ms", "updated_ms", "child_job_ids"}) {
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
  const auto body = cronwheel::cli::ImportBody(doc->jobs[1], 7, false);
  auto expected = ApiJob(0, "b job");
  for (const auto* owned : {"id", "glue_updated_ms", "next_fire_ms", "last_fire_ms", "stop_reason",
                            "created_ms", "updated_ms", "child_job_ids"}) {
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
  EXPECT_EQ(doc->source, "XXL-JOB job list");
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

}  // namespace
