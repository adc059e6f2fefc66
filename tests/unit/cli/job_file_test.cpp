#include "cwcli/job_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "cwcli/text_util.hpp"

namespace {

using namespace cronwheel::cli;
using nlohmann::json;
using ::testing::HasSubstr;

TEST(JobFromToml, EveryKindOfFieldBecomesTheJsonOfTheApi) {
  Problems problems;
  const auto job = JobFromToml(R"(
# nightly invoices
group_id = 3
description = "nightly invoices"
schedule_type = "CRON"
schedule_conf = "0 0 3 * * ?"
time_zone = "Europe/Berlin"
glue_type = "GLUE_SHELL"
glue_source = """
#!/bin/sh
echo "hello"
"""
timeout_s = 600
child_job_ids = [4, 5]
enabled = false
)",
                               problems);
  ASSERT_TRUE(job) << cronwheel::cli::FormatProblems(problems);
  EXPECT_EQ(*job, json({{"group_id", 3},
                        {"description", "nightly invoices"},
                        {"schedule_type", "CRON"},
                        {"schedule_conf", "0 0 3 * * ?"},
                        {"time_zone", "Europe/Berlin"},
                        {"glue_type", "GLUE_SHELL"},
                        {"glue_source", "#!/bin/sh\necho \"hello\"\n"},
                        {"timeout_s", 600},
                        {"child_job_ids", {4, 5}},
                        {"enabled", false}}));
}

TEST(JobFromToml, AWrongTypeNamesTheFieldTheValueAndTheLine) {
  struct Case {
    std::string toml;
    std::string field;
    std::vector<std::string> mentions;
  };
  const std::vector<Case> cases = {
      {"description = \"x\"\ntimeout_s = \"ten\"\n",
       "timeout_s",
       {"expected an integer", "\"ten\"", "line 2"}},
      {"timeout_s = 1.5\n", "timeout_s", {"expected an integer", "1.5", "line 1"}},
      {"enabled = \"yes\"\n", "enabled", {"true or false", "\"yes\""}},
      {"description = 12\n", "description", {"expected a string", "12"}},
      {"child_job_ids = [1, \"two\"]\n", "child_job_ids[1]", {"expected an integer", "\"two\""}},
      {"child_job_ids = 3\n", "child_job_ids", {"a list of integers"}},
      {"schedule_conf = 2024-01-01\n", "schedule_conf", {"date or time", "quoted string"}},
      {"[handler]\nname = \"x\"\n", "handler", {"expected a string", "table"}},
  };
  for (const auto& c : cases) {
    Problems problems;
    EXPECT_FALSE(JobFromToml(c.toml, problems)) << c.toml;
    ASSERT_EQ(problems.size(), 1U) << c.toml << cronwheel::cli::FormatProblems(problems);
    EXPECT_EQ(problems[0].field, c.field) << c.toml;
    for (const auto& m : c.mentions)
      EXPECT_THAT(problems[0].message, HasSubstr(m)) << c.toml;
  }
}

TEST(JobFromToml, ASyntaxErrorGivesItsLineAndColumn) {
  Problems problems;
  EXPECT_FALSE(JobFromToml("description = \"x\"\nhandler = \n", problems));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].field, "");
  EXPECT_THAT(problems[0].message, HasSubstr("not valid TOML at line 2"));
}

TEST(JobFromToml, AllProblemsAreReportedAtOnce) {
  Problems problems;
  EXPECT_FALSE(JobFromToml("timeout_s = \"a\"\nretry_count = \"b\"\n", problems));
  EXPECT_EQ(problems.size(), 2U);
  EXPECT_THAT(cronwheel::cli::FormatProblems(problems), HasSubstr("retry_count: expected an integer"));
}

TEST(JobFromToml, AFieldTheClientDoesNotKnowIsLeftForTheAdminToJudge) {
  Problems problems;
  const auto job = JobFromToml("description = \"x\"\nfuture_field = 1.5\n", problems);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->at("future_field"), 1.5);
}

TEST(JobFromJson, TypesAreCheckedLikeToml) {
  Problems problems;
  EXPECT_TRUE(JobFromJson(R"({"description": "x", "timeout_s": 5, "child_job_ids": []})", problems));
  EXPECT_FALSE(JobFromJson(R"({"description": "x", "timeout_s": "5"})", problems));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].field, "timeout_s");
  problems.clear();
  EXPECT_FALSE(JobFromJson(R"([1, 2])", problems));
  EXPECT_THAT(problems.at(0).message, HasSubstr("a job is a JSON object"));
  problems.clear();
  EXPECT_FALSE(JobFromJson(R"({"description": )", problems));
  EXPECT_THAT(problems.at(0).message, HasSubstr("not valid JSON"));
  EXPECT_THAT(problems.at(0).message, ::testing::Not(HasSubstr("[json.exception")));
}

TEST(JobFile, TheFormatComesFromTheExtensionOrTheFlag) {
  EXPECT_EQ(cronwheel::cli::FormatFromExtension("a/job.TOML"), FileFormat::kToml);
  EXPECT_EQ(cronwheel::cli::FormatFromExtension("job.json"), FileFormat::kJson);
  EXPECT_EQ(cronwheel::cli::FormatFromExtension("job.txt"), FileFormat::kAuto);

  const auto dir = std::filesystem::temp_directory_path() / ("cwcli-unit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto txt = dir / "job.txt";
  std::ofstream(txt) << "description = \"from a .txt\"\n";
  Problems problems;
  EXPECT_FALSE(cronwheel::cli::ReadJobFile(txt, FileFormat::kAuto, problems));
  EXPECT_THAT(problems.at(0).message, HasSubstr("--format json|toml"));
  problems.clear();
  const auto job = cronwheel::cli::ReadJobFile(txt, FileFormat::kToml, problems);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->at("description"), "from a .txt");
  EXPECT_FALSE(cronwheel::cli::ReadJobFile(dir / "missing.json", FileFormat::kAuto, problems));
  EXPECT_THAT(problems.back().message, HasSubstr("cannot read"));
  EXPECT_THAT(problems.back().message, HasSubstr("missing.json"));
  std::filesystem::remove_all(dir);
}

TEST(WorkflowFile, TomlNodesAndEdgesAreListsOfTablesAndGiveTheSameBodyAsJson) {
  Problems problems;
  const auto toml = cronwheel::cli::WorkflowFromToml(R"(
group_id = 3
name = "etl"
schedule_type = "NONE"

[[nodes]]
key = "extract"
job_id = 11

[[nodes]]
key = "load"
job_id = 12
param = "{{parents.extract.output}}"

[[edges]]
from = "extract"
to = "load"
condition = "SUCCESS"
)",
                                                     problems);
  ASSERT_TRUE(toml) << cronwheel::cli::FormatProblems(problems);
  const json expected = {{"group_id", 3},
                         {"name", "etl"},
                         {"schedule_type", "NONE"},
                         {"nodes",
                          {{{"key", "extract"}, {"job_id", 11}},
                           {{"key", "load"}, {"job_id", 12}, {"param", "{{parents.extract.output}}"}}}},
                         {"edges", {{{"from", "extract"}, {"to", "load"}, {"condition", "SUCCESS"}}}}};
  EXPECT_EQ(*toml, expected);
  const auto from_json = cronwheel::cli::WorkflowFromJson(expected.dump(), problems);
  ASSERT_TRUE(from_json);
  EXPECT_EQ(*from_json, expected);

  EXPECT_FALSE(cronwheel::cli::WorkflowFromToml("name = 4\nnodes = [1]\n", problems));
  const auto text = cronwheel::cli::FormatProblems(problems);
  EXPECT_THAT(text, HasSubstr("name: expected a string, got an integer (4) (line 1)"));
  EXPECT_THAT(text, HasSubstr("nodes[0]: expected a table, got an integer (1) (line 2)"));
  problems.clear();
  EXPECT_FALSE(cronwheel::cli::WorkflowFromJson("[]", problems));
  EXPECT_THAT(problems.at(0).message, HasSubstr("a workflow is a JSON object of fields"));
}

// The client's job fields are JobInput's in web/openapi.json, with the same types: when the API gains or
// changes a field, this fails until the client knows it too.
TEST(JobInputFields, AreTheFieldsOfJobInputInTheOpenApiDocument) {
  const auto text = cronwheel::cli::ReadTextFile(std::string(CRONWHEEL_SOURCE_DIR) + "/web/openapi.json");
  ASSERT_TRUE(text.ok()) << text.status();
  const auto doc = json::parse(*text);
  const auto& props = doc.at("components").at("schemas").at("JobInput").at("properties");
  std::set<std::string> documented;
  for (const auto& [name, schema] : props.items()) {
    documented.insert(name);
    const auto* field = cronwheel::cli::FindJobField(name);
    ASSERT_NE(field, nullptr) << name << " is in JobInput but not in JobInputFields()";
    const auto type = schema.at("type").get<std::string>();
    switch (field->type) {
      case cronwheel::cli::FieldType::kString:
        EXPECT_EQ(type, "string") << name;
        break;
      case cronwheel::cli::FieldType::kInteger:
        EXPECT_EQ(type, "integer") << name;
        break;
      case cronwheel::cli::FieldType::kBoolean:
        EXPECT_EQ(type, "boolean") << name;
        break;
      case cronwheel::cli::FieldType::kIntegerList:
        EXPECT_EQ(type, "array") << name;
        EXPECT_EQ(schema.at("items").at("type"), "integer") << name;
        break;
      case cronwheel::cli::FieldType::kStringList:
        EXPECT_EQ(type, "array") << name;
        EXPECT_EQ(schema.at("items").at("type"), "string") << name;
        break;
      case cronwheel::cli::FieldType::kObjectList:
        ADD_FAILURE() << name << ": a job has no list of tables";
        break;
    }
  }
  for (const auto& f : cronwheel::cli::JobInputFields())
    EXPECT_TRUE(documented.contains(std::string(f.name))) << f.name << " is not in JobInput";
}

}  // namespace
