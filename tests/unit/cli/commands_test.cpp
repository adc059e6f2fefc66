// The commands against a scripted fake of the REST API: what is called, in which order, with which body;
// what is printed; the exit code of every kind of failure.
#include "cwcli/commands.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using cronwheel::cli::ApiReply;
using nlohmann::json;
using ::testing::HasSubstr;

struct Sent {
  std::string method;
  std::string target;
  std::optional<json> body;
};

// Answers each (method, target) from a queue of replies (the last one repeats); records every call.
class FakeApi final : public cronwheel::cli::Api {
 public:
  void On(const std::string& method, const std::string& target, int status, const json& body) {
    replies_[method + " " + target].push_back({.status = status, .body = body.dump()});
  }
  void OnTransportError(const std::string& method, const std::string& target) {
    replies_[method + " " + target].push_back({.status = 0, .error = "Could not establish connection"});
  }
  ApiReply Send(const std::string& method, const std::string& target,
                const std::optional<json>& body) override {
    sent.push_back({method, target, body});
    auto it = replies_.find(method + " " + target);
    if (it == replies_.end()) return {.status = 404, .body = R"({"error":"not scripted"})"};
    auto reply = it->second.front();
    if (it->second.size() > 1) it->second.pop_front();
    return reply;
  }
  [[nodiscard]] std::string Describe() const override { return "http://fake:1"; }

  std::vector<Sent> sent;

 private:
  std::map<std::string, std::deque<ApiReply>> replies_;
};

// A clock whose waits return at once, its steady time moved on to the deadline waited for (the follow loops'
// pace is not under test here; their deadlines are).
class InstantClock final : public ringwheel::Clock {
 public:
  [[nodiscard]] ringwheel::SystemTime WallNow() const override { return {}; }
  [[nodiscard]] ringwheel::SteadyTime SteadyNow() const override { return now_; }
  bool WaitUntil(ringwheel::SteadyTime deadline, std::stop_token) override {
    ++waits;
    now_ = std::max(now_, deadline);
    return true;
  }
  int waits = 0;

 private:
  ringwheel::SteadyTime now_{};
};

struct Harness {
  FakeApi api;
  InstantClock clock;
  std::ostringstream out;
  std::ostringstream err;
  std::istringstream in;
  int Run(const std::vector<std::string>& args, bool interactive = false) {
    auto parsed = cronwheel::cli::ParseCommandLine(args, {});
    EXPECT_TRUE(parsed.invocation) << parsed.err;
    cronwheel::cli::Console console{.out = out, .err = err, .in = in, .interactive = interactive};
    return cronwheel::cli::Run(*parsed.invocation, api, clock, console);
  }
};

json Job(int id, const std::string& description, bool enabled = false) {
  return {{"id", id},
          {"group_id", 3},
          {"description", description},
          {"schedule_type", "CRON"},
          {"schedule_conf", "0 * * * * ?"},
          {"time_zone", "UTC"},
          {"handler", "demoJobHandler"},
          {"glue_type", "BEAN"},
          {"enabled", enabled},
          {"next_fire_ms", enabled ? 1767225600000 : 0},
          {"child_job_ids", json::array()}};
}

TEST(Commands, JobsListReadsEveryPageAndPrintsATable) {
  Harness h;
  json first = json::array();
  for (int i = 1; i <= 1000; ++i)
    first.push_back(Job(i, "job " + std::to_string(i)));
  h.api.On("GET", "/api/v1/jobs?group_id=3&limit=1000&offset=0", 200, {{"total", 1001}, {"items", first}});
  h.api.On("GET", "/api/v1/jobs?group_id=3&limit=1000&offset=1000", 200,
           {{"total", 1001}, {"items", {Job(1001, "数据同步", true)}}});
  EXPECT_EQ(h.Run({"jobs", "list", "--group", "3"}), 0) << h.err.str();
  EXPECT_EQ(h.api.sent.size(), 2U);
  const auto text = h.out.str();
  EXPECT_THAT(text, HasSubstr("ID  GROUP  DESCRIPTION"));
  EXPECT_THAT(text, HasSubstr("1001      3  数据同步  "));
  EXPECT_THAT(text, HasSubstr("CRON 0 * * * * ?  demoJobHandler  running  2026-01-01T00:00:00Z"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1002);
}

TEST(Commands, JobsListFiltersByEveryTagGivenAndSearchesAndShowsTheTags) {
  Harness h;
  auto tagged = Job(7, "payments sweep", true);
  tagged["tags"] = {"team:payments", "nightly"};
  h.api.On("GET", "/api/v1/jobs?tag=team%3Apayments&tag=nightly&q=sweep%20all&limit=1000&offset=0", 200,
           {{"total", 1}, {"items", {tagged}}});
  EXPECT_EQ(h.Run({"jobs", "list", "--tag", "team:payments", "--tag", "nightly", "--search", "sweep all"}), 0)
      << h.err.str();
  ASSERT_EQ(h.api.sent.size(), 1U);
  EXPECT_THAT(h.out.str(), HasSubstr("NEXT FIRE (UTC)       TAGS"));
  EXPECT_THAT(h.out.str(), HasSubstr("2026-01-01T00:00:00Z  team:payments, nightly"));
}

TEST(Commands, BulkTagSendsTheTagsAndNeedsAtLeastOne) {
  Harness h;
  auto job = Job(4, "x");
  job["tags"] = {"a", "b"};
  h.api.On("POST", "/api/v1/jobs/bulk", 200,
           {{"action", "TAG"},
            {"succeeded", 1},
            {"failed", 0},
            {"results", {{{"job_id", 4}, {"status", 200}, {"job", job}}}}});
  EXPECT_EQ(h.Run({"jobs", "bulk", "tag", "4", "--tag", "b"}), 0) << h.err.str();
  ASSERT_EQ(h.api.sent.size(), 1U);
  EXPECT_EQ(h.api.sent[0].body, (json{{"action", "TAG"}, {"job_ids", {4}}, {"tags", {"b"}}}));
  EXPECT_THAT(h.out.str(), HasSubstr("4     200  tags: a, b"));

  Harness none;
  EXPECT_EQ(none.Run({"jobs", "bulk", "untag", "4"}), 2);
  EXPECT_THAT(none.err.str(), HasSubstr("needs at least one --tag TAG"));
  Harness wrong;
  EXPECT_EQ(wrong.Run({"jobs", "bulk", "stop", "4", "--tag", "x"}), 2);
  EXPECT_THAT(wrong.err.str(), HasSubstr("--tag is for jobs bulk tag and untag"));
  EXPECT_TRUE(none.api.sent.empty());
  EXPECT_TRUE(wrong.api.sent.empty());
}

TEST(Commands, JsonPrintsTheApisJson) {
  Harness h;
  h.api.On("GET", "/api/v1/jobs/4", 200, Job(4, "x"));
  EXPECT_EQ(h.Run({"jobs", "show", "4", "--json"}), 0);
  EXPECT_EQ(json::parse(h.out.str()), Job(4, "x"));
}

TEST(Commands, ActionsArePostsWithoutABody) {
  Harness h;
  h.api.On("POST", "/api/v1/jobs/4/start", 200, Job(4, "x", true));
  h.api.On("POST", "/api/v1/jobs/4/trigger", 202, {{"log_id", 77}});
  EXPECT_EQ(h.Run({"jobs", "start", "4"}), 0);
  EXPECT_EQ(h.Run({"jobs", "trigger", "4"}), 0);
  EXPECT_EQ(h.Run({"jobs", "trigger", "4", "--param", "p"}), 0);
  ASSERT_EQ(h.api.sent.size(), 3U);
  EXPECT_FALSE(h.api.sent[0].body);
  EXPECT_FALSE(h.api.sent[1].body);
  EXPECT_EQ(h.api.sent[2].body, json({{"param", "p"}}));
  EXPECT_THAT(h.out.str(), HasSubstr("job 4 started; next fire 2026-01-01T00:00:00Z"));
  EXPECT_THAT(h.out.str(), HasSubstr("fire 77"));
}

TEST(Commands, ARefusalExits1WithTheServersFieldErrors) {
  Harness h;
  h.api.On("PUT", "/api/v1/jobs/4", 400,
           {{"error", "the job is not valid"},
            {"code", "invalid"},
            {"errors", {{{"field", "timeout_s"}, {"message", "must be from 0 to 604800, got -1"}}}}});
  const auto dir = std::filesystem::temp_directory_path() / ("cwcli-cmd-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "job.toml") << "timeout_s = -1\n";
  EXPECT_EQ(h.Run({"jobs", "update", "4", (dir / "job.toml").string()}), 1);
  EXPECT_EQ(h.api.sent.at(0).body, json({{"timeout_s", -1}}));
  EXPECT_THAT(h.err.str(), HasSubstr("PUT /api/v1/jobs/4 -> HTTP 400: the job is not valid"));
  EXPECT_THAT(h.err.str(), HasSubstr("  timeout_s: must be from 0 to 604800, got -1"));

  // A file that is not a valid job is refused before anything is sent.
  h.api.sent.clear();
  std::ofstream(dir / "bad.toml") << "timeout_s = \"ten\"\n";
  EXPECT_EQ(h.Run({"jobs", "create", (dir / "bad.toml").string()}), 1);
  EXPECT_TRUE(h.api.sent.empty());
  EXPECT_THAT(h.err.str(), HasSubstr("timeout_s: expected an integer"));
  std::filesystem::remove_all(dir);
}

TEST(Commands, NoAnswerOrA5xxExits3) {
  Harness h;
  h.api.OnTransportError("GET", "/api/v1/groups");
  EXPECT_EQ(h.Run({"groups", "list"}), 3);
  EXPECT_THAT(h.err.str(), HasSubstr("cannot reach the admin at http://fake:1"));
  Harness h5;
  h5.api.On("GET", "/api/v1/groups", 503, {{"error", "the database is unavailable"}});
  EXPECT_EQ(h5.Run({"groups", "list"}), 3);
  EXPECT_THAT(h5.err.str(), HasSubstr("HTTP 503: the database is unavailable"));
  Harness odd;
  odd.api.On("GET", "/api/v1/groups", 200, {{"unexpected", true}});
  EXPECT_EQ(odd.Run({"groups", "list"}), 3);
  EXPECT_THAT(odd.err.str(), HasSubstr("unexpected shape"));
}

TEST(Commands, DeleteAsksOnATerminalAndNeedsYesElsewhere) {
  Harness h;
  h.api.On("GET", "/api/v1/jobs/4", 200, Job(4, "x"));
  h.api.On("DELETE", "/api/v1/jobs/4", 200, {{"deleted", 4}});
  EXPECT_EQ(h.Run({"jobs", "delete", "4"}), 2);
  EXPECT_THAT(h.err.str(), HasSubstr("without --yes"));
  EXPECT_TRUE(h.api.sent.empty());
  h.in.str("n\n");
  EXPECT_EQ(h.Run({"jobs", "delete", "4"}, true), 0);
  EXPECT_THAT(h.err.str(), HasSubstr("not deleted"));
  h.in.clear();
  h.in.str("y\n");
  EXPECT_EQ(h.Run({"jobs", "delete", "4"}, true), 0);
  EXPECT_EQ(h.api.sent.back().method, "DELETE");
  EXPECT_EQ(h.Run({"jobs", "delete", "4", "--yes"}), 0);
}

TEST(Commands, ExecutorsListShowsEachGroupsAddresses) {
  Harness h;
  h.api.On("GET", "/api/v1/groups", 200,
           {{"items",
             {{{"id", 1},
               {"app_name", "app-a"},
               {"address_type", "AUTO"},
               {"online_addresses", {"http://10.0.0.1:9999/", "http://10.0.0.2:9999/"}}},
              {{"id", 2},
               {"app_name", "app-b"},
               {"address_type", "MANUAL"},
               {"online_addresses", json::array()}}}}});
  EXPECT_EQ(h.Run({"executors", "list"}), 0);
  EXPECT_EQ(h.out.str(),
            "GROUP  APP NAME  SOURCE      ADDRESS\n"
            "    1  app-a     registered  http://10.0.0.1:9999/\n"
            "    1  app-a     registered  http://10.0.0.2:9999/\n"
            "    2  app-b     configured  (none)\n");
}

TEST(Commands, JobsNextPreviewsTheJobWithinItsWindowAndCalendarsAndListsTheSkippedDays) {
  Harness h;
  auto job = Job(4, "report", true);
  job["calendar_ids"] = {2};
  job["start_ms"] = 1767225600000;
  h.api.On("GET", "/api/v1/jobs/4", 200, job);
  h.api.On("POST", "/api/v1/schedules/preview", 200,
           {{"time_zone", "UTC"},
            {"fires", {{{"ms", 1798534800000}, {"iso", "2026-12-29T09:00:00+00:00"}}}},
            {"excluded",
             {{{"date", "2026-12-25"}, {"name", "Christmas Day"}, {"calendar", "uk"}},
              {{"date", "2026-12-26"}, {"name", ""}, {"calendar", "uk"}}}}});
  EXPECT_EQ(h.Run({"jobs", "next", "4", "--count", "1"}), 0);
  ASSERT_EQ(h.api.sent.size(), 2u);
  const auto& body = *h.api.sent[1].body;
  EXPECT_EQ(body.at("calendar_ids"), json({2}));
  EXPECT_EQ(body.at("start_ms"), 1767225600000);
  EXPECT_EQ(body.at("count"), 1);
  EXPECT_EQ(body.at("schedule_conf"), "0 * * * * ?");
  EXPECT_EQ(h.out.str(),
            "2026-12-29T09:00:00+00:00\n"
            "skipped 2026-12-25 Christmas Day (uk)\n"
            "skipped 2026-12-26 (uk)\n");
}

TEST(Commands, CalendarsImportSendsTheFileAndListShowsTheirDays) {
  const auto file = std::filesystem::temp_directory_path() / fmt::format("cw-cal-{}.ics", ::getpid());
  std::ofstream(file) << "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n";
  Harness h;
  const json made{
      {"id", 3},
      {"name", "uk"},
      {"kind", "BUSINESS_DAYS"},
      {"time_zone", "Europe/London"},
      {"days", {{{"date", "2026-12-25"}, {"name", "Christmas Day"}}, {{"date", "2026-12-28"}, {"name", ""}}}},
      {"jobs", 1}};
  h.api.On("POST", "/api/v1/calendars", 201, made);
  EXPECT_EQ(h.Run({"calendars", "import", file.string(), "--name", "uk", "--kind", "BUSINESS_DAYS", "--zone",
                   "Europe/London"}),
            0);
  ASSERT_EQ(h.api.sent.size(), 1u);
  EXPECT_EQ(*h.api.sent[0].body, (json{{"ics", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"},
                                       {"name", "uk"},
                                       {"kind", "BUSINESS_DAYS"},
                                       {"time_zone", "Europe/London"}}));
  EXPECT_EQ(h.out.str(), "created calendar 3 (uk, BUSINESS_DAYS): 2 days\n");
  Harness add;
  add.api.On("PUT", "/api/v1/calendars/3", 200, made);
  EXPECT_EQ(add.Run({"calendars", "import", file.string(), "--calendar", "3"}), 0);
  EXPECT_EQ(*add.api.sent[0].body, (json{{"ics", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"}}));
  Harness list;
  list.api.On("GET", "/api/v1/calendars", 200, {{"items", {made}}});
  EXPECT_EQ(list.Run({"calendars", "list"}), 0);
  EXPECT_EQ(list.out.str(),
            "ID  NAME  KIND           ZONE           DAYS  FIRST       LAST        JOBS\n"
            " 3  uk    BUSINESS_DAYS  Europe/London     2  2026-12-25  2026-12-28     1\n");
  std::filesystem::remove(file);
}

TEST(Commands, ExecutorsDrainAsksTheAdminAndPrintsTheExecutorsAnswer) {
  Harness h;
  h.api.On("POST", "/api/v1/groups/1/drain", 200,
           {{"address", "http://10.0.0.1:9999/"}, {"msg", "drain started: no new fires"}});
  EXPECT_EQ(h.Run({"executors", "drain", "--group", "1", "http://10.0.0.1:9999"}), 0);
  ASSERT_EQ(h.api.sent.size(), 1u);
  EXPECT_EQ(h.api.sent[0].body, (json{{"address", "http://10.0.0.1:9999"}}));
  EXPECT_EQ(h.out.str(), "http://10.0.0.1:9999/: drain started: no new fires\n");
  Harness bad;
  bad.api.On("POST", "/api/v1/groups/1/drain", 400, {{"error", "the drain request is not valid"}});
  EXPECT_NE(bad.Run({"executors", "drain", "--group", "1", "http://10.9.9.9:1/"}), 0);
}

TEST(Commands, RunOnceAsksListsAndCancelsThroughTheJobsRequests) {
  Harness h;
  const json waiting{{"id", 12},          {"job_id", 4},        {"fire_at_ms", 1767225600000},
                     {"param", "x"},      {"state", "WAITING"}, {"log_id", nullptr},
                     {"cancelled_ms", 0}, {"cancelled_by", ""}, {"created_by", "alice"},
                     {"created_ms", 1}};
  json fired = waiting;
  fired.update({{"id", 11}, {"param", nullptr}, {"state", "FIRED"}, {"log_id", 900}});
  json cancelled = waiting;
  cancelled.update({{"state", "CANCELLED"}, {"cancelled_ms", 2}, {"cancelled_by", "bob"}});
  h.api.On("POST", "/api/v1/jobs/4/run-once", 201, waiting);
  h.api.On("GET", "/api/v1/jobs/4/run-once?limit=20", 200, {{"items", {waiting, fired}}});
  h.api.On("DELETE", "/api/v1/jobs/4/run-once/12", 200, cancelled);
  EXPECT_EQ(h.Run({"jobs", "run-once", "4", "--in", "10m", "--param", "x"}), 0) << h.err.str();
  EXPECT_EQ(h.Run({"jobs", "run-once", "4", "--at", "2026-01-01T00:00:00Z"}), 0) << h.err.str();
  EXPECT_EQ(h.Run({"jobs", "run-once-list", "4"}), 0) << h.err.str();
  EXPECT_EQ(h.Run({"jobs", "run-once-cancel", "4", "12"}), 0) << h.err.str();
  ASSERT_EQ(h.api.sent.size(), 4U);
  EXPECT_EQ(h.api.sent[0].body, (json{{"delay_ms", 600'000}, {"param", "x"}}));
  EXPECT_EQ(h.api.sent[1].body, (json{{"at_ms", 1767225600000}}));
  const auto text = h.out.str();
  EXPECT_THAT(text,
              HasSubstr("run once 12 of job 4: fires at 2026-01-01T00:00:00Z (cancel it: cronwheel jobs "
                        "run-once-cancel 4 12)"));
  EXPECT_THAT(text, HasSubstr("ID  FIRE AT (UTC)         STATE    FIRE  PARAM        BY"));
  EXPECT_THAT(text, HasSubstr("12  2026-01-01T00:00:00Z  WAITING     -  x            alice"));
  EXPECT_THAT(text, HasSubstr("11  2026-01-01T00:00:00Z  FIRED     900  (the job's)  alice"));
  EXPECT_THAT(text, HasSubstr("run once 12 of job 4 cancelled (it was to fire at 2026-01-01T00:00:00Z)"));

  Harness none;
  EXPECT_EQ(none.Run({"jobs", "run-once", "4"}), 2) << "when is required";
  EXPECT_THAT(none.err.str(), HasSubstr("--at INSTANT or --in DURATION"));
  EXPECT_TRUE(none.api.sent.empty());
  Harness late;
  late.api.On("DELETE", "/api/v1/jobs/4/run-once/12", 409,
              {{"error", "run once 12 has fired already: fire 900 is being sent or was sent"}});
  EXPECT_EQ(late.Run({"jobs", "run-once-cancel", "4", "12"}), 1);
  EXPECT_THAT(late.err.str(), HasSubstr("fire 900"));
}

TEST(Commands, BulkPrintsEachJobsOutcomeAndExits1WhenAnyFailed) {
  Harness h;
  h.api.On("POST", "/api/v1/jobs/bulk", 200,
           {{"action", "STOP"},
            {"succeeded", 1},
            {"failed", 1},
            {"results",
             {{{"job_id", 4}, {"status", 200}, {"job", Job(4, "x", false)}},
              {{"job_id", 9}, {"status", 404}, {"error", "job 9 not found"}, {"code", "not_found"}}}}});
  EXPECT_EQ(h.Run({"jobs", "bulk", "stop", "4", "9"}), 1);
  ASSERT_EQ(h.api.sent.size(), 1u);
  EXPECT_EQ(h.api.sent[0].body, (json{{"action", "STOP"}, {"job_ids", {4, 9}}}));
  EXPECT_EQ(h.out.str(),
            "JOB  STATUS  RESULT\n"
            "  4     200  stopped\n"
            "  9     404  job 9 not found\n");
  EXPECT_THAT(h.err.str(), HasSubstr("stop: 1 of 2 job(s) done, 1 failed"));

  Harness ok;
  ok.api.On("POST", "/api/v1/jobs/bulk", 200,
            {{"action", "TRIGGER"},
             {"succeeded", 1},
             {"failed", 0},
             {"results", {{{"job_id", 4}, {"status", 202}, {"log_id", 77}}}}});
  EXPECT_EQ(ok.Run({"jobs", "bulk", "trigger", "4", "--param", "p"}), 0) << ok.err.str();
  EXPECT_EQ(ok.api.sent[0].body, (json{{"action", "TRIGGER"}, {"job_ids", {4}}, {"param", "p"}}));
  EXPECT_THAT(ok.out.str(), HasSubstr("4     202  fire 77"));

  Harness del;
  EXPECT_EQ(del.Run({"jobs", "bulk", "delete", "4", "5"}), 2) << "no --yes and no terminal";
  EXPECT_THAT(del.err.str(), HasSubstr("refusing to delete 2 job(s) without --yes"));
  EXPECT_TRUE(del.api.sent.empty());
}

TEST(Commands, LogsTailFollowsUntilTheEndPagingByLine) {
  Harness h;
  h.api.On("GET", "/api/v1/logs/9/output?from_line=1", 200,
           {{"from_line", 1}, {"to_line", 2}, {"content", "a\nb\n"}, {"end", false}});
  h.api.On("GET", "/api/v1/logs/9/output?from_line=3", 200,
           {{"from_line", 3}, {"to_line", 0}, {"content", ""}, {"end", false}});
  h.api.On("GET", "/api/v1/logs/9/output?from_line=3", 200,
           {{"from_line", 3}, {"to_line", 3}, {"content", "c\n"}, {"end", false}});
  h.api.On("GET", "/api/v1/logs/9/output?from_line=4", 200,
           {{"from_line", 4}, {"to_line", 0}, {"content", ""}, {"end", true}});
  h.api.On("GET", "/api/v1/logs/9", 200, {{"status", "SUCCESS"}, {"handle_code", 200}, {"handle_msg", ""}});
  EXPECT_EQ(h.Run({"logs", "tail", "9", "--follow"}), 0) << h.err.str();
  EXPECT_EQ(h.out.str(), "a\nb\nc\n");
  EXPECT_EQ(h.clock.waits, 3);
  EXPECT_THAT(h.err.str(), HasSubstr("fire 9: SUCCESS (handle_code 200)"));
  // Without --follow: one look.
  Harness once;
  once.api.On("GET", "/api/v1/logs/9/output?from_line=1", 200,
              {{"from_line", 1}, {"to_line", 1}, {"content", "a\n"}, {"end", false}});
  EXPECT_EQ(once.Run({"logs", "tail", "9"}), 0);
  EXPECT_EQ(once.out.str(), "a\n");
  EXPECT_EQ(once.clock.waits, 0);
}

// The fire output archive: `logs tail` says on stderr where the output it prints comes from, once and again
// when that changes (the executor while the fire runs, the admin's archive once it ended); stdout holds the
// output alone.
TEST(Commands, LogsTailSaysWhetherItReadsTheExecutorOrTheArchive) {
  Harness h;
  h.api.On("GET", "/api/v1/logs/9/output?from_line=1", 200,
           {{"from_line", 1}, {"to_line", 1}, {"content", "a\n"}, {"end", false}, {"source", "executor"}});
  h.api.On("GET", "/api/v1/logs/9/output?from_line=2", 200,
           {{"from_line", 2}, {"to_line", 1}, {"content", ""}, {"end", false}, {"source", "executor"}});
  h.api.On("GET", "/api/v1/logs/9/output?from_line=2", 200,
           {{"from_line", 2},
            {"to_line", 3},
            {"content", "b\nc\n"},
            {"end", true},
            {"source", "archive"},
            {"archive", {{"state", "archived"}, {"via", "push"}, {"log_bytes", 9}, {"left_out_bytes", 0}}}});
  h.api.On("GET", "/api/v1/logs/9", 200, {{"status", "SUCCESS"}, {"handle_code", 200}, {"handle_msg", ""}});
  EXPECT_EQ(h.Run({"logs", "tail", "9", "--follow"}), 0) << h.err.str();
  EXPECT_EQ(h.out.str(), "a\nb\nc\n");
  EXPECT_EQ(h.err.str(),
            "fire 9: output from its executor (the fire is running)\n"
            "fire 9: output from the admin's archive (sent by the executor with its result)\n"
            "fire 9: SUCCESS (handle_code 200)\n");

  Harness failed;  // ended, its executor still has the log, the archive could not get it
  failed.api.On("GET", "/api/v1/logs/9/output?from_line=1", 200,
                {{"from_line", 1},
                 {"to_line", 1},
                 {"content", "a\n"},
                 {"end", true},
                 {"source", "executor"},
                 {"archive", {{"state", "failed"}, {"via", "pull"}, {"error", "no answer"}}}});
  EXPECT_EQ(failed.Run({"logs", "tail", "9"}), 0);
  EXPECT_EQ(failed.out.str(), "a\n");
  EXPECT_EQ(failed.err.str(), "fire 9: output from its executor (the archive has no copy: no answer)\n");

  Harness cut;  // pulled, its middle left out
  cut.api.On(
      "GET", "/api/v1/logs/9/output?from_line=1", 200,
      {{"from_line", 1},
       {"to_line", 1},
       {"content", "a\n"},
       {"end", true},
       {"source", "archive"},
       {"archive", {{"state", "archived"}, {"via", "pull"}, {"log_bytes", 5000}, {"left_out_bytes", 3000}}}});
  EXPECT_EQ(cut.Run({"logs", "tail", "9"}), 0);
  EXPECT_EQ(cut.err.str(),
            "fire 9: output from the admin's archive (read from the executor after its result; 3000 of its "
            "5000 bytes left out in the middle)\n");
}

class ImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cwcli-import-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    h_.api.On("GET", "/api/v1/groups/8", 200, {{"id", 8}, {"app_name", "target"}, {"title", "T"}});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const json& doc) {
    const auto path = dir_ / "doc.json";
    std::ofstream(path) << doc.dump();
    return path.string();
  }
  static json Document() {
    return {{"format", "cronwheel.jobs"},
            {"version", 1},
            {"jobs",
             {{{"description", "parent"},
               {"schedule_type", "NONE"},
               {"enabled", false},
               {"child_jobs", {"child"}}},
              {{"description", "child"}, {"schedule_type", "NONE"}, {"child_jobs", json::array()}},
              {{"description", "kept"}, {"schedule_type", "NONE"}}}}};
  }
  std::filesystem::path dir_;
  Harness h_;
};

TEST_F(ImportTest, CreatesTheNewJobsThenLinksTheirChildrenByTheirNewIds) {
  h_.api.On("GET", "/api/v1/jobs?group_id=8&limit=1000&offset=0", 200,
            {{"total", 1}, {"items", {Job(30, "kept")}}});
  h_.api.On("POST", "/api/v1/jobs", 201, Job(41, "parent"));
  h_.api.On("POST", "/api/v1/jobs", 201, Job(42, "child"));
  h_.api.On("PUT", "/api/v1/jobs/41", 200, Job(41, "parent"));
  EXPECT_EQ(h_.Run({"import", Write(Document()), "--group", "8", "--on-conflict", "skip"}), 0)
      << h_.err.str();
  std::vector<std::string> calls;
  for (const auto& s : h_.api.sent)
    calls.push_back(s.method + " " + s.target);
  EXPECT_EQ(calls, (std::vector<std::string>{
                       "GET /api/v1/groups/8", "GET /api/v1/jobs?group_id=8&limit=1000&offset=0",
                       "POST /api/v1/jobs", "POST /api/v1/jobs", "PUT /api/v1/jobs/41"}));
  EXPECT_EQ(
      h_.api.sent[2].body,
      json({{"description", "parent"}, {"schedule_type", "NONE"}, {"enabled", false}, {"group_id", 8}}));
  EXPECT_EQ(h_.api.sent[4].body, json({{"child_job_ids", {42}}}));
  EXPECT_THAT(h_.out.str(), HasSubstr("skipped   30  kept"));
  EXPECT_THAT(h_.err.str(), HasSubstr("2 created, 0 updated, 1 skipped"));
}

TEST_F(ImportTest, AConflictFailsBeforeAnythingChangesAndADryRunChangesNothing) {
  h_.api.On("GET", "/api/v1/jobs?group_id=8&limit=1000&offset=0", 200,
            {{"total", 1}, {"items", {Job(30, "kept")}}});
  EXPECT_EQ(h_.Run({"import", Write(Document()), "--group", "8"}), 1);
  EXPECT_THAT(h_.err.str(), HasSubstr("nothing was changed"));
  EXPECT_THAT(h_.err.str(), HasSubstr("'kept' exists in the target group as job 30"));
  h_.api.sent.clear();
  EXPECT_EQ(h_.Run({"import", Write(Document()), "--group", "8", "--on-conflict", "update", "--dry-run"}), 0);
  for (const auto& s : h_.api.sent)
    EXPECT_EQ(s.method, "GET");
  EXPECT_THAT(h_.out.str(), HasSubstr("create    -  parent"));
  EXPECT_THAT(h_.out.str(), HasSubstr("update   30  kept"));
}

TEST_F(ImportTest, ARefusalMidwaySaysWhereItStoppedAndWhatWasDone) {
  h_.api.On("GET", "/api/v1/jobs?group_id=8&limit=1000&offset=0", 200,
            {{"total", 0}, {"items", json::array()}});
  h_.api.On("POST", "/api/v1/jobs", 201, Job(41, "parent"));
  h_.api.On(
      "POST", "/api/v1/jobs", 400,
      {{"error", "the job is not valid"}, {"errors", {{{"field", "schedule_conf"}, {"message", "bad"}}}}});
  EXPECT_EQ(h_.Run({"import", Write(Document()), "--group", "8"}), 1);
  EXPECT_THAT(h_.err.str(), HasSubstr("import stopped at jobs[1] 'child'"));
  EXPECT_THAT(h_.err.str(), HasSubstr("schedule_conf: bad"));
  EXPECT_THAT(h_.err.str(), HasSubstr("1 created and 0 updated before it"));
}

TEST(Commands, ExportWritesTheDocument) {
  Harness h;
  h.api.On("GET", "/api/v1/groups/3", 200, {{"id", 3}, {"app_name", "billing"}, {"title", "Billing"}});
  h.api.On("GET", "/api/v1/jobs?group_id=3&limit=1000&offset=0", 200,
           {{"total", 2}, {"items", {Job(5, "b"), Job(4, "a")}}});
  EXPECT_EQ(h.Run({"export", "--group", "3"}), 0) << h.err.str();
  const auto doc = json::parse(h.out.str());
  EXPECT_EQ(doc.at("format"), "cronwheel.jobs");
  EXPECT_EQ(doc.at("jobs").size(), 2U);
  EXPECT_EQ(doc.at("jobs")[0].at("description"), "a");
}

// --- workflows ---------------------------------------------------------------------------------------------

json Workflow(int id, const std::string& name, int group, bool enabled) {
  return {{"id", id},
          {"group_id", group},
          {"name", name},
          {"nodes",
           {{{"key", "extract"}, {"job_id", 11}, {"param", nullptr}},
            {{"key", "load"}, {"job_id", 12}, {"param", "{{parents.extract.output}}"}}}},
          {"edges", {{{"from", "extract"}, {"to", "load"}, {"condition", "SUCCESS"}}}},
          {"param", ""},
          {"schedule_type", enabled ? "CRON" : "NONE"},
          {"schedule_conf", enabled ? "0 0 4 * * ?" : ""},
          {"time_zone", "UTC"},
          {"misfire_strategy", "DO_NOTHING"},
          {"enabled", enabled},
          {"next_fire_ms", enabled ? json(1767225600000) : json(nullptr)},
          {"last_fire_ms", 0},
          {"stop_reason", ""},
          {"created_ms", 1767225600000},
          {"updated_ms", 1767225600000}};
}

// Run 9 of workflow 4 in `state`, its nodes in `extract` and `load` with their fires.
json WorkflowRun(const std::string& state, const std::string& extract, const std::string& load) {
  const auto node = [](const std::string& key, int job, const std::string& s, json log_ids) {
    return json{{"key", key},
                {"job_id", job},
                {"state", s},
                {"log_ids", std::move(log_ids)},
                {"start_ms", s == "WAITING" ? 0 : 1767225600000},
                {"end_ms", 0}};
  };
  return {{"id", 9},
          {"workflow_id", 4},
          {"group_id", 3},
          {"trigger_type", "MANUAL"},
          {"scheduled_ms", 1767225600000},
          {"param", ""},
          {"state", state},
          {"start_ms", 1767225600000},
          {"end_ms", state == "RUNNING" ? 0 : 1767225660000},
          {"note", state == "FAILED" ? "node load FAILED" : ""},
          {"created_by", "alice"},
          {"nodes",
           {node("extract", 11, extract, extract == "WAITING" ? json::array() : json{77}),
            node("load", 12, load, load == "WAITING" || load == "SKIPPED" ? json::array() : json{78})}},
          {"edges", {{{"from", "extract"}, {"to", "load"}, {"condition", "SUCCESS"}}}}};
}

TEST(Workflows, ListPrintsATableOfTheGroupsAskedForAndShowTheWorkflowWithItsNodesAndEdges) {
  Harness h;
  h.api.On("GET", "/api/v1/workflows", 200,
           {{"total", 2}, {"items", {Workflow(4, "nightly etl", 3, true), Workflow(5, "ad hoc", 7, false)}}});
  EXPECT_EQ(h.Run({"workflows", "list"}), 0) << h.err.str();
  EXPECT_EQ(h.out.str(),
            "ID  GROUP  NAME         SCHEDULE          NODES  ENABLED  NEXT FIRE (UTC)\n"
            " 4      3  nightly etl  CRON 0 0 4 * * ?      2  yes      2026-01-01T00:00:00Z\n"
            " 5      7  ad hoc       NONE                  2  no       -\n");
  Harness one;
  one.api.On(
      "GET", "/api/v1/workflows", 200,
      {{"total", 2}, {"items", {Workflow(4, "nightly etl", 3, true), Workflow(5, "ad hoc", 7, false)}}});
  EXPECT_EQ(one.Run({"workflows", "list", "--group", "7", "--json"}), 0);
  const auto listed = json::parse(one.out.str());
  EXPECT_EQ(listed.at("total"), 1);
  EXPECT_EQ(listed.at("items")[0].at("id"), 5);

  Harness show;
  show.api.On("GET", "/api/v1/workflows/4", 200, Workflow(4, "nightly etl", 3, true));
  EXPECT_EQ(show.Run({"workflows", "show", "4"}), 0) << show.err.str();
  const auto text = show.out.str();
  EXPECT_THAT(text, HasSubstr("name              nightly etl\n"));
  EXPECT_THAT(text, HasSubstr("next_fire_ms      2026-01-01T00:00:00Z\n"));
  EXPECT_THAT(text, HasSubstr("\nNODE     JOB  PARAM\n"
                              "extract   11  (the job's)\n"
                              "load      12  {{parents.extract.output}}\n"));
  EXPECT_THAT(text, HasSubstr("\nFROM     TO    CONDITION\n"
                              "extract  load  SUCCESS\n"));
  Harness json_show;
  json_show.api.On("GET", "/api/v1/workflows/4", 200, Workflow(4, "nightly etl", 3, true));
  EXPECT_EQ(json_show.Run({"workflows", "show", "4", "--json"}), 0);
  EXPECT_EQ(json::parse(json_show.out.str()), Workflow(4, "nightly etl", 3, true));
}

TEST(Workflows, TriggerPrintsTheRunIdAndSendsNoBodyWithoutAParam) {
  Harness h;
  h.api.On("POST", "/api/v1/workflows/4/trigger", 202, {{"run_id", 9}});
  EXPECT_EQ(h.Run({"workflows", "trigger", "4"}), 0) << h.err.str();
  EXPECT_EQ(h.Run({"workflows", "trigger", "4", "--param", "2026-01-01"}), 0) << h.err.str();
  ASSERT_EQ(h.api.sent.size(), 2U);
  EXPECT_FALSE(h.api.sent[0].body);
  EXPECT_EQ(h.api.sent[1].body, (json{{"param", "2026-01-01"}}));
  EXPECT_THAT(h.out.str(), HasSubstr("triggered workflow 4: run 9 (follow it: cronwheel workflows run 9)\n"));
  EXPECT_EQ(h.clock.waits, 0);
}

TEST(Workflows, TriggerWaitPrintsEachNodesChangesAndExits0OnSuccess) {
  Harness h;
  h.api.On("POST", "/api/v1/workflows/4/trigger", 202, {{"run_id", 9}});
  h.api.On("GET", "/api/v1/workflow-runs/9", 200, WorkflowRun("RUNNING", "RUNNING", "WAITING"));
  h.api.On("GET", "/api/v1/workflow-runs/9", 200, WorkflowRun("RUNNING", "RUNNING", "WAITING"));
  h.api.On("GET", "/api/v1/workflow-runs/9", 200, WorkflowRun("RUNNING", "SUCCESS", "RUNNING"));
  h.api.On("GET", "/api/v1/workflow-runs/9", 200, WorkflowRun("SUCCESS", "SUCCESS", "SUCCESS"));
  EXPECT_EQ(h.Run({"workflows", "trigger", "4", "--wait"}), 0) << h.err.str();
  EXPECT_EQ(h.out.str(),
            "triggered workflow 4: run 9 (follow it: cronwheel workflows run 9)\n"
            "node extract: RUNNING (fire 77)\n"
            "node extract: SUCCESS (fire 77)\n"
            "node load: RUNNING (fire 78)\n"
            "node load: SUCCESS (fire 78)\n"
            "workflow run 9: SUCCESS\n");
  EXPECT_EQ(h.clock.waits, 3) << "one wait between two polls, on the clock";
  EXPECT_TRUE(h.err.str().empty()) << h.err.str();
}

TEST(Workflows, TriggerWaitExits1WhenTheRunFailsOrOutlastsTheTimeout) {
  Harness h;
  h.api.On("POST", "/api/v1/workflows/4/trigger", 202, {{"run_id", 9}});
  h.api.On("GET", "/api/v1/workflow-runs/9", 200, WorkflowRun("RUNNING", "RUNNING", "WAITING"));
  h.api.On("GET", "/api/v1/workflow-runs/9", 200, WorkflowRun("FAILED", "FAILED", "SKIPPED"));
  EXPECT_EQ(h.Run({"workflows", "trigger", "4", "--wait"}), 1);
  EXPECT_THAT(h.out.str(), HasSubstr("node extract: FAILED (fire 77)\n"
                                     "node load: SKIPPED\n"
                                     "workflow run 9: FAILED (node load FAILED)\n"));
  EXPECT_THAT(h.err.str(), HasSubstr("cronwheel: workflow run 9 ended FAILED"));

  Harness json_wait;
  json_wait.api.On("POST", "/api/v1/workflows/4/trigger", 202, {{"run_id", 9}});
  json_wait.api.On("GET", "/api/v1/workflow-runs/9", 200, WorkflowRun("KILLED", "KILLED", "WAITING"));
  EXPECT_EQ(json_wait.Run({"workflows", "trigger", "4", "--wait", "--json"}), 1);
  std::istringstream lines(json_wait.out.str());
  std::string first;
  std::string last;
  std::getline(lines, first);
  std::getline(lines, last);
  EXPECT_EQ(json::parse(first), (json{{"run_id", 9}}));
  EXPECT_EQ(json::parse(last).at("state"), "KILLED");

  Harness slow;
  slow.api.On("POST", "/api/v1/workflows/4/trigger", 202, {{"run_id", 9}});
  slow.api.On("GET", "/api/v1/workflow-runs/9", 200, WorkflowRun("RUNNING", "RUNNING", "WAITING"));
  EXPECT_EQ(slow.Run({"workflows", "trigger", "4", "--wait", "--wait-timeout", "5"}), 1);
  EXPECT_EQ(slow.clock.waits, 5) << "a poll a second for 5 s on the clock, no real sleep";
  EXPECT_EQ(slow.api.sent.size(), 7U) << "the trigger and 6 polls";
  EXPECT_THAT(slow.err.str(), HasSubstr("workflow run 9 is still RUNNING after 5 s; it goes on"));
}

TEST(Workflows, RunsRunKillAndRerun) {
  Harness h;
  h.api.On("GET", "/api/v1/workflows/4/runs?limit=5", 200,
           {{"total", 1}, {"items", {WorkflowRun("FAILED", "FAILED", "SKIPPED")}}});
  h.api.On("GET", "/api/v1/workflow-runs/9", 200, WorkflowRun("FAILED", "SUCCESS", "FAILED"));
  auto killed = WorkflowRun("KILLED", "KILLED", "WAITING");
  killed["kill_notes"] = {"fire 77: the executor http://e:1/ did not kill job 11: gone"};
  h.api.On("POST", "/api/v1/workflow-runs/9/kill", 200, killed);
  h.api.On("POST", "/api/v1/workflow-runs/9/nodes/load/rerun", 200,
           WorkflowRun("RUNNING", "SUCCESS", "RUNNING"));
  EXPECT_EQ(h.Run({"workflows", "runs", "4", "--limit", "5"}), 0) << h.err.str();
  EXPECT_THAT(h.out.str(),
              HasSubstr("ID  TYPE    SCHEDULED (UTC)       STATE   STARTED (UTC)         ENDED (UTC)"));
  EXPECT_THAT(h.out.str(), HasSubstr(" 9  MANUAL  2026-01-01T00:00:00Z  FAILED  2026-01-01T00:00:00Z  "
                                     "2026-01-01T00:01:00Z  alice  node load FAILED\n"));
  h.out.str("");
  EXPECT_EQ(h.Run({"workflows", "run", "9"}), 0) << h.err.str();
  EXPECT_THAT(h.out.str(), HasSubstr("state         FAILED\n"));
  EXPECT_THAT(h.out.str(), HasSubstr("NODE     JOB  STATE    FIRES  STARTED (UTC)         ENDED (UTC)\n"
                                     "extract   11  SUCCESS  77     2026-01-01T00:00:00Z  -\n"
                                     "load      12  FAILED   78     2026-01-01T00:00:00Z  -\n"));
  h.out.str("");
  EXPECT_EQ(h.Run({"workflows", "kill", "9"}), 0) << h.err.str();
  EXPECT_EQ(h.out.str(), "workflow run 9 killed: KILLED\n");
  EXPECT_THAT(h.err.str(), HasSubstr("warning: fire 77: the executor http://e:1/ did not kill job 11"));
  h.out.str("");
  EXPECT_EQ(h.Run({"workflows", "rerun", "9", "load"}), 0) << h.err.str();
  EXPECT_EQ(h.out.str(),
            "workflow run 9: node load re-run, the run is RUNNING (follow it: cronwheel workflows run 9)\n");
  EXPECT_FALSE(h.api.sent[2].body) << "kill takes no body";
  EXPECT_FALSE(h.api.sent[3].body) << "nor does rerun";
}

TEST(Workflows, CreateSendsTheFileAndARefusalPrintsTheServersFieldErrors) {
  const auto dir = std::filesystem::temp_directory_path() / ("cwcli-wf-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "wf.toml") << "name = \"etl\"\n[[nodes]]\nkey = \"extract\"\njob_id = 99\n";
  Harness h;
  h.api.On("POST", "/api/v1/workflows", 400,
           {{"error", "the workflow is not valid"},
            {"code", "invalid"},
            {"errors",
             {{{"field", "nodes[0].job_id"},
               {"message", "nodes[0].job_id: job 99 does not exist"},
               {"code", "not_found"}}}}});
  EXPECT_EQ(h.Run({"workflows", "create", "--file", (dir / "wf.toml").string(), "--group", "3"}), 1);
  ASSERT_EQ(h.api.sent.size(), 1U);
  EXPECT_EQ(h.api.sent[0].body,
            (json{{"name", "etl"}, {"group_id", 3}, {"nodes", {{{"key", "extract"}, {"job_id", 99}}}}}));
  EXPECT_THAT(h.err.str(), HasSubstr("POST /api/v1/workflows -> HTTP 400: the workflow is not valid"));
  EXPECT_THAT(h.err.str(), HasSubstr("  nodes[0].job_id: nodes[0].job_id: job 99 does not exist"));

  Harness ok;
  ok.api.On("PUT", "/api/v1/workflows/4", 200, Workflow(4, "etl", 3, false));
  EXPECT_EQ(ok.Run({"workflows", "update", "4", (dir / "wf.toml").string()}), 0) << ok.err.str();
  EXPECT_EQ(ok.out.str(), "updated workflow 4 (enabled: no): etl\n");

  // A file that is not a valid workflow is refused before anything is sent.
  std::ofstream(dir / "bad.json") << R"({"name": "etl", "nodes": {"key": "x"}})";
  Harness bad;
  EXPECT_EQ(bad.Run({"workflows", "create", (dir / "bad.json").string()}), 1);
  EXPECT_TRUE(bad.api.sent.empty());
  EXPECT_THAT(bad.err.str(), HasSubstr("is not a valid workflow:\n  nodes: expected a list of tables"));
  std::filesystem::remove_all(dir);
}

TEST(Workflows, DeleteNeedsYesOffATerminal) {
  Harness h;
  h.api.On("DELETE", "/api/v1/workflows/4", 200, {{"deleted", 4}});
  EXPECT_EQ(h.Run({"workflows", "delete", "4"}), 2);
  EXPECT_TRUE(h.api.sent.empty());
  EXPECT_EQ(h.Run({"workflows", "delete", "4", "--yes"}), 0);
  EXPECT_EQ(h.out.str(), "deleted workflow 4\n");
}

TEST(Commands, ExportCarriesTheGroupsWorkflowsAndImportRecreatesThemWithTheNewJobIds) {
  Harness h;
  h.api.On("GET", "/api/v1/groups/3", 200, {{"id", 3}, {"app_name", "billing"}, {"title", "Billing"}});
  h.api.On("GET", "/api/v1/jobs?group_id=3&limit=1000&offset=0", 200,
           {{"total", 2}, {"items", {Job(11, "extract invoices"), Job(12, "load invoices")}}});
  h.api.On(
      "GET", "/api/v1/workflows", 200,
      {{"total", 2}, {"items", {Workflow(4, "nightly etl", 3, true), Workflow(5, "elsewhere", 7, false)}}});
  EXPECT_EQ(h.Run({"export", "--group", "3"}), 0) << h.err.str();
  const auto doc = json::parse(h.out.str());
  ASSERT_EQ(doc.at("workflows").size(), 1U) << "only the group's";
  EXPECT_EQ(doc.at("workflows")[0].at("nodes")[0],
            (json{{"key", "extract"}, {"job", "extract invoices"}, {"param", nullptr}}));

  const auto dir = std::filesystem::temp_directory_path() / ("cwcli-wf-import-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "doc.json") << doc.dump();
  Harness imp;
  imp.api.On("GET", "/api/v1/groups/8", 200, {{"id", 8}, {"app_name", "target"}, {"title", "T"}});
  // The target group has "load invoices" already, as job 30; "extract invoices" is created as 41.
  imp.api.On("GET", "/api/v1/jobs?group_id=8&limit=1000&offset=0", 200,
             {{"total", 1}, {"items", {Job(30, "load invoices")}}});
  imp.api.On("GET", "/api/v1/workflows", 200,
             {{"total", 1}, {"items", {Workflow(6, "nightly etl", 3, false)}}});
  imp.api.On("POST", "/api/v1/jobs", 201, Job(41, "extract invoices"));
  imp.api.On("POST", "/api/v1/workflows", 201, Workflow(50, "nightly etl", 8, false));
  EXPECT_EQ(
      imp.Run({"import", (dir / "doc.json").string(), "--group", "8", "--on-conflict", "skip", "--stopped"}),
      0)
      << imp.err.str();
  std::vector<std::string> calls;
  for (const auto& s : imp.api.sent)
    calls.push_back(s.method + " " + s.target);
  EXPECT_EQ(calls, (std::vector<std::string>{
                       "GET /api/v1/groups/8", "GET /api/v1/jobs?group_id=8&limit=1000&offset=0",
                       "GET /api/v1/workflows", "POST /api/v1/jobs", "POST /api/v1/workflows"}))
      << "workflow 6 is in group 3, not a conflict in group 8";
  const auto& body = *imp.api.sent.back().body;
  EXPECT_EQ(body.at("group_id"), 8);
  EXPECT_EQ(body.at("enabled"), false) << "--stopped";
  EXPECT_EQ(body.at("nodes"),
            (json{{{"key", "extract"}, {"job_id", 41}, {"param", nullptr}},
                  {{"key", "load"}, {"job_id", 30}, {"param", "{{parents.extract.output}}"}}}))
      << "nodes run the target group's jobs";
  EXPECT_EQ(body.at("edges"), doc.at("workflows")[0].at("edges"));
  EXPECT_THAT(imp.out.str(), HasSubstr("\nACTION   WORKFLOW  NAME\ncreated        50  nightly etl\n"));
  EXPECT_THAT(imp.err.str(),
              HasSubstr("1 created, 0 updated, 1 skipped; workflows: 1 created, 0 updated, 0 skipped"));

  // Run again: the workflow is there now; --on-conflict fail changes nothing and names it.
  Harness again;
  again.api.On("GET", "/api/v1/groups/8", 200, {{"id", 8}});
  again.api.On("GET", "/api/v1/jobs?group_id=8&limit=1000&offset=0", 200,
               {{"total", 2}, {"items", {Job(30, "load invoices"), Job(41, "extract invoices")}}});
  again.api.On("GET", "/api/v1/workflows", 200,
               {{"total", 1}, {"items", {Workflow(50, "nightly etl", 8, false)}}});
  EXPECT_EQ(again.Run({"import", (dir / "doc.json").string(), "--group", "8"}), 1);
  EXPECT_THAT(again.err.str(),
              HasSubstr("workflows[0]: 'nightly etl' exists in the target group as workflow 50"));
  for (const auto& s : again.api.sent)
    EXPECT_EQ(s.method, "GET");
  std::filesystem::remove_all(dir);
}

}  // namespace
