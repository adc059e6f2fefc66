// The admin's HTTP API against a real database, served in-process on a loopback port.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <sstream>
#include <tuple>

#include "admin/api/server.hpp"
#include "admin/catalog/group_service.hpp"
#include "admin/catalog/job_service.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/results/callback_service.hpp"
#include "admin/schedule/next_fire.hpp"
#include "admin/schedule/scheduler.hpp"
#include "admin/store/pg_group_store.hpp"
#include "admin/store/pg_job_store.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "api_fixture.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1767225600000;
constexpr const char* kToken = "test-token-0123456789";
constexpr const char* kWebhookAllow = "http://127.0.0.1:8/hooks/";

// Authenticates from a test header: "X-Test-User: admin" or "X-Test-User: user:<group>,<group>", each
// group as DEVELOPER (what a USER could do before roles) unless written <group>=<ROLE>.
class HeaderAuthenticator final : public Authenticator {
 public:
  Result<Principal> Authenticate(const cronwheel::net::Request& req) override {
    const auto who = req.get_header_value("X-Test-User");
    if (who.empty()) return Error::Unauthenticated("not logged in");
    if (who == "admin") return Principal{.user_id = 1, .username = "admin", .admin = true};
    Principal p{.user_id = 2, .username = "user"};
    std::stringstream groups(who.substr(5));
    for (std::string g; std::getline(groups, g, ',');) {
      const auto eq = g.find('=');
      p.groups.push_back({.group_id = std::stoi(g.substr(0, eq)),
                          .role = eq == std::string::npos
                                      ? GroupRole::kDeveloper
                                      : ParseGroupRole(g.substr(eq + 1)).value_or(GroupRole::kViewer)});
    }
    return p;
  }
};

class RecordingSink final : public FireSink {
 public:
  void Dispatch(std::vector<Fire> fires) override {
    std::lock_guard lock(mu);
    for (auto& f : fires)
      sent.push_back(std::move(f));
  }
  std::mutex mu;
  std::vector<Fire> sent;
};

class ApiTest : public cwtest::ApiServerFixture {
 protected:
  void SetUp() override {
    PgFixture::SetUp();
    BuildServices(kT0, sink_, [this](std::vector<Fire> f) { scheduler_->Submit(std::move(f)); });
    health_details_ = [] { return json{{"scheduler", {{"scans", 7}}}}; };
    ASSERT_NO_FATAL_FAILURE(StartServer({.access_token = kToken, .webhook_allow = {kWebhookAllow}}, auth_));
  }

  struct Reply {
    int status = 0;
    json body;
  };
  Reply Call(const std::string& method, const std::string& path, const std::string& body = "",
             const std::string& user = "admin") {
    httplib::Headers h;
    if (!user.empty()) h.emplace("X-Test-User", user);
    httplib::Result r = Send(method, path, h, body);
    EXPECT_TRUE(r) << method << " " << path;
    if (!r) return {};
    Reply out{r->status, json::parse(r->body, nullptr, false)};
    EXPECT_FALSE(out.body.is_discarded()) << "not JSON: " << r->body;
    return out;
  }
  Reply Executor(const std::string& path, const std::string& body, const std::string& token = kToken) {
    httplib::Headers h{{"XXL-JOB-ACCESS-TOKEN", token}};
    auto r = client_->Post(path, h, body, "application/json");
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 200) << "the executor API always answers HTTP 200 with an envelope";
    return {r->status, json::parse(r->body)};
  }
  int CreateGroup(const std::string& app) {
    const auto r = Call("POST", "/api/v1/groups", json{{"app_name", app}, {"title", "T"}}.dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", 0);
  }
  json JobBody(int group) {
    return {{"group_id", group},
            {"description", "d"},
            {"schedule_type", "CRON"},
            {"schedule_conf", "0/2 * * * * ?"},
            {"time_zone", "Europe/Berlin"},
            {"handler", "demoJobHandler"}};
  }

  HeaderAuthenticator auth_;
  RecordingSink sink_;
  std::unique_ptr<PgPool> dead_pool_;  // a database that does not answer (stopped in TearDown, before this)
};

// Security review (issue 21), finding 6: the health check, which needs no credentials, showed the
// scheduler's statistics and, with the database down, its error text (host and port). Without credentials
// (a load balancer) it answers the status alone; an ADMIN's credentials get the details, a USER's do not.
TEST_F(ApiTest, HealthShowsTheStatusToAnyoneAndTheDetailsToAnAdminOnly) {
  auto r = Call("GET", "/api/v1/health", "", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, (json{{"status", "ok"}}));
  EXPECT_EQ(Call("GET", "/api/v1/health", "", "user:1").body, (json{{"status", "ok"}}));
  r = Call("GET", "/api/v1/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.at("status"), "ok");
  EXPECT_EQ(r.body.value("node_id", ""), "node-a") << r.body.dump();
  EXPECT_EQ(r.body.value("/scheduler/scans"_json_pointer, 0), 7) << r.body.dump();
  // The same server over a database that does not answer.
  server_->Stop();
  dead_pool_ =
      std::make_unique<PgPool>(PgPool::Settings{.dsn = "postgresql://nobody@127.0.0.1:1/none", .size = 1});
  group_store_ = std::make_unique<PgGroupStore>(*dead_pool_);
  groups_ = std::make_unique<GroupService>(*clock_, *group_store_);
  ASSERT_NO_FATAL_FAILURE(StartServer({.access_token = kToken}, auth_));
  r = Call("GET", "/api/v1/health", "", "");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, (json{{"status", "unavailable"}})) << "no error text, no host, no port";
  r = Call("GET", "/api/v1/health", "", "user:1");
  EXPECT_EQ(r.body, (json{{"status", "unavailable"}}));
  r = Call("GET", "/api/v1/health");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body.at("status"), "unavailable");
  EXPECT_THAT(r.body.value("error", ""), HasSubstr("port 1")) << "the admin sees why: " << r.body.dump();
}

TEST_F(ApiTest, JobLifecycle) {
  const int g = CreateGroup("sample-app");
  auto r = Call("POST", "/api/v1/jobs", JobBody(g).dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int id = r.body.at("id");
  EXPECT_EQ(r.body.at("enabled"), false);
  EXPECT_EQ(r.body.at("time_zone"), "Europe/Berlin");
  EXPECT_EQ(r.body.at("route_strategy"), "FIRST");
  r = Call("POST", fmt::format("/api/v1/jobs/{}/start", id));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("enabled"), true);
  EXPECT_EQ(r.body.at("next_fire_ms"), kT0 + 6000) << "first fire computed from now + 5 s, as XXL-JOB";
  r = Call("PUT", fmt::format("/api/v1/jobs/{}", id), json{{"param", "x=1"}, {"retry_count", 2}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("param"), "x=1");
  EXPECT_EQ(r.body.at("schedule_conf"), "0/2 * * * * ?") << "a partial update keeps the other fields";
  r = Call("GET", "/api/v1/jobs?group_id=" + std::to_string(g));
  EXPECT_EQ(r.body.at("total"), 1);
  r = Call("POST", fmt::format("/api/v1/jobs/{}/stop", id));
  EXPECT_EQ(r.body.at("enabled"), false);
  EXPECT_EQ(r.body.at("next_fire_ms"), 0);
  r = Call("DELETE", fmt::format("/api/v1/jobs/{}", id));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/jobs/{}", id)).status, 404);
}

TEST_F(ApiTest, ValidationNamesEachFieldAndChangesNothing) {
  const int g = CreateGroup("sample-app");
  auto body = JobBody(g);
  body["schedule_conf"] = "0 0 25 * * ?";
  body["time_zone"] = "Mars/Base";
  body["route_strategy"] = "NEAREST";
  body["timeout_s"] = -1;
  body["colour"] = "red";
  auto r = Call("POST", "/api/v1/jobs", body.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(Fields(r.body), ::testing::IsSupersetOf({"route_strategy", "timeout_s", "colour"}));
  body = JobBody(g);
  body["schedule_conf"] = "0 0 25 * * ?";
  r = Call("POST", "/api/v1/jobs", body.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"schedule_conf"});
  EXPECT_THAT(r.body.at("errors")[0].at("message").get<std::string>(), HasSubstr("25"));
  body = JobBody(g);
  body["time_zone"] = "Mars/Base";
  r = Call("POST", "/api/v1/jobs", body.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"time_zone"});
  r = Call("POST", "/api/v1/jobs", "{not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body.at("error").get<std::string>(), HasSubstr("not valid JSON"));
  r = Call("POST", "/api/v1/jobs",
           json{{"group_id", 999}, {"description", "d"}, {"schedule_type", "NONE"}, {"handler", "h"}}.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"group_id"});
  EXPECT_EQ(Count("SELECT count(*) FROM job"), 0);
}

// The admin posts alarms only to URLs under the operator's prefixes (alarm_webhook_allow): a job naming
// another is refused when saved, not only when its alarm would be sent; a webhook saved before the list
// changed does not block editing other fields.
TEST_F(ApiTest, AWebhookOutsideTheAllowedPrefixesIsRefusedWhenSaved) {
  const int g = CreateGroup("sample-app");
  auto body = JobBody(g);
  body["alarm_webhook"] = "http://10.1.2.3/steal";
  auto r = Call("POST", "/api/v1/jobs", body.dump());
  ASSERT_EQ(r.status, 400) << r.body.dump();
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"alarm_webhook"});
  EXPECT_THAT(
      r.body.at("errors")[0].at("message").get<std::string>(),
      AllOf(HasSubstr("http://10.1.2.3/steal"), HasSubstr(kWebhookAllow), HasSubstr("alarm_webhook_allow")));
  EXPECT_EQ(Count("SELECT count(*) FROM job"), 0);
  body["alarm_webhook"] = std::string(kWebhookAllow) + "ops";
  r = Call("POST", "/api/v1/jobs", body.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int id = r.body.at("id");
  r = Call("PUT", fmt::format("/api/v1/jobs/{}", id), json{{"alarm_webhook", "http://127.0.0.1:9/"}}.dump());
  EXPECT_EQ(r.status, 400);
  Exec(fmt::format("UPDATE job SET alarm_webhook = 'http://old.example/hook' WHERE id = {}", id));
  r = Call("PUT", fmt::format("/api/v1/jobs/{}", id), json{{"param", "p"}}.dump());
  EXPECT_EQ(r.status, 200) << "an unchanged webhook is not checked again: " << r.body.dump();
}

TEST_F(ApiTest, ChildJobCyclesAreRefusedWhenSaved) {
  const int g = CreateGroup("sample-app");
  const int a = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  const int b = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/jobs/{}", a), json{{"child_job_ids", {b}}}.dump()).status, 200);
  const auto r = Call("PUT", fmt::format("/api/v1/jobs/{}", b), json{{"child_job_ids", {a}}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body.at("errors")[0].at("message").get<std::string>(), HasSubstr("cycle"));
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/jobs/{}", b), json{{"child_job_ids", {b}}}.dump()).status, 400);
}

// Security review (issue 21), finding 1: a USER saved a job whose child was another group's job (checked
// only for existence, and the error said which ids exist), and that job ran after the parent. A child
// outside the caller's groups is "not found", word for word as an id no job has, and nothing is saved.
TEST_F(ApiTest, AChildJobOutsideTheCallersGroupsIsNotFoundLikeOneThatDoesNotExist) {
  const int mine = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  const int foreign = Call("POST", "/api/v1/jobs", JobBody(other).dump()).body.at("id");
  const int own = Call("POST", "/api/v1/jobs", JobBody(mine).dump()).body.at("id");
  const int missing = foreign + 1000;
  const std::string user = fmt::format("user:{}", mine);
  const auto expect_not_found = [&](const Reply& r, int child) {
    EXPECT_EQ(r.status, 400) << r.body.dump();
    ASSERT_EQ(Fields(r.body), std::vector<std::string>{"child_job_ids"}) << r.body.dump();
    const auto& e = r.body.at("errors")[0];
    EXPECT_EQ(e.at("message"), fmt::format("job {} not found", child));
    EXPECT_EQ(e.at("code"), "not_found");
    EXPECT_EQ(e.at("params"), (json{{"id", child}}));
  };
  const auto jobs_before =
      Exec("SELECT string_agg(id || ':' || child_job_ids::text, ',' ORDER BY id) FROM job");
  for (const int child : {foreign, missing}) {
    SCOPED_TRACE(child == foreign ? "another group's job" : "no such job");
    auto body = JobBody(mine);
    body["child_job_ids"] = {child};
    expect_not_found(Call("POST", "/api/v1/jobs", body.dump(), user), child);
    expect_not_found(
        Call("PUT", fmt::format("/api/v1/jobs/{}", own), json{{"child_job_ids", {child}}}.dump(), user),
        child);
  }
  EXPECT_EQ(
      Exec("SELECT string_agg(id || ':' || child_job_ids::text, ',' ORDER BY id) FROM job")[0][0].c_str(),
      std::string(jobs_before[0][0].c_str()))
      << "nothing was saved";
  // An admin may link any group's job; the link it made stays, and the user may still edit the job's
  // other fields (an unchanged child is not checked again, as an unchanged webhook).
  ASSERT_EQ(
      Call("PUT", fmt::format("/api/v1/jobs/{}", own), json{{"child_job_ids", {foreign}}}.dump()).status,
      200);
  auto r = Call("PUT", fmt::format("/api/v1/jobs/{}", own), json{{"param", "p"}}.dump(), user);
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("child_job_ids"), (json{foreign}));
  // A user permitted on both groups may link them.
  r = Call("PUT", fmt::format("/api/v1/jobs/{}", own), json{{"child_job_ids", {foreign}}}.dump(),
           fmt::format("user:{},{}", mine, other));
  EXPECT_EQ(r.status, 200) << r.body.dump();
}

TEST_F(ApiTest, PathTricksAndHugeIdsAreNotFound) {
  for (const char* path : {"/api/v1/jobs/abc", "/api/v1/jobs/-1", "/api/v1/jobs/99999999999999999999",
                           "/api/v1/jobs/1%2F..", "/api/v1/logs/0x10", "/api/v1/groups/1e3"}) {
    const auto r = Call("GET", path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_TRUE(r.body.contains("error")) << path;
  }
  EXPECT_EQ(Call("GET", "/api/v1/logs?limit=100000").status, 400);
  EXPECT_EQ(Call("GET", "/api/v1/logs?status=DONE").status, 400);
}

TEST_F(ApiTest, EveryRouteDeniesStrangersAndUsersOutsideTheirGroups) {
  const int mine = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  const int job = Call("POST", "/api/v1/jobs", JobBody(other).dump()).body.at("id");
  const std::string user = fmt::format("user:{}", mine);
  // Strangers: 401 on every route but health.
  for (const auto& [m, p] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/api/v1/groups"},
           {"POST", "/api/v1/groups"},
           {"GET", "/api/v1/jobs"},
           {"POST", "/api/v1/jobs"},
           {"GET", "/api/v1/logs"},
           {"GET", fmt::format("/api/v1/jobs/{}", job)},
           {"POST", fmt::format("/api/v1/jobs/{}/trigger", job)}}) {
    EXPECT_EQ(Call(m, p, "{}", "").status, 401) << m << " " << p;
  }
  // A user permitted on `mine` sees nothing of `other`.
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/jobs/{}", job), "", user).status, 404);
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/jobs/{}", job), "{}", user).status, 404);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/jobs/{}", job), "", user).status, 404);
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/jobs/{}/start", job), "", user).status, 404);
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/jobs/{}/trigger", job), "", user).status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/jobs", "", user).body.at("total"), 0);
  EXPECT_EQ(Call("POST", "/api/v1/jobs", JobBody(other).dump(), user).status, 403);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/groups/{}", other), "", user).status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/groups", "", user).body.at("items").size(), 1u);
  // Groups are managed by admins only.
  EXPECT_EQ(Call("POST", "/api/v1/groups", json{{"app_name", "x-app"}, {"title", "t"}}.dump(), user).status,
            403);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/groups/{}", mine), "", user).status, 403);
  // But a job in its own group works.
  EXPECT_EQ(Call("POST", "/api/v1/jobs", JobBody(mine).dump(), user).status, 201);
}

TEST_F(ApiTest, ManualTriggerWritesAFireAndSendsItOnlyToAKnownAddress) {
  const int g = CreateGroup("sample-app");
  const int job = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  auto r = Call("POST", fmt::format("/api/v1/jobs/{}/trigger", job), json{{"param", "p1"}}.dump());
  ASSERT_EQ(r.status, 202) << r.body.dump();
  const std::int64_t log_id = r.body.at("log_id");
  {
    std::lock_guard lock(sink_.mu);
    ASSERT_EQ(sink_.sent.size(), 1u);
    EXPECT_EQ(sink_.sent[0].log_id, log_id);
    EXPECT_EQ(sink_.sent[0].param, "p1");
    EXPECT_EQ(sink_.sent[0].type, TriggerType::kManual);
    // The fire sent carries its row's instant: the trigger result finds its row in job_log by it.
    EXPECT_EQ(
        sink_.sent[0].scheduled_ms,
        Exec(fmt::format("SELECT scheduled_ms FROM job_log WHERE id = {}", log_id))[0][0].as<std::int64_t>());
  }
  r = Call("GET", fmt::format("/api/v1/logs/{}", log_id));
  EXPECT_EQ(r.body.at("trigger_type"), "MANUAL");
  EXPECT_EQ(r.body.at("executor_param"), "p1");
  // An address nobody registered for the group is refused: no request to a caller-typed address.
  r = Call("POST", fmt::format("/api/v1/jobs/{}/trigger", job),
           json{{"address", "http://169.254.169.254/"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"address"});
  EXPECT_EQ(Count("SELECT count(*) FROM job_log"), 1);
}

TEST_F(ApiTest, RunOnceIsAskedListedAndCancelledAndABadRequestNamesItsFieldAndWritesNothing) {
  const int g = CreateGroup("sample-app");
  const int job = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  const auto path = fmt::format("/api/v1/jobs/{}/run-once", job);
  const std::vector<std::pair<json, std::string>> bad = {
      {json::object(), "at_ms"},
      {{{"at_ms", kT0 - 1}}, "at_ms"},
      {{{"at_ms", kT0 + 367LL * 86'400'000}}, "at_ms"},
      {{{"at_ms", kT0 + 1000}, {"delay_ms", 5}}, "delay_ms"},
      {{{"delay_ms", -1}}, "delay_ms"},
      {{{"delay_ms", 1.5}}, "delay_ms"},
      {{{"delay_ms", 1000}, {"param", 5}}, "param"},
      {{{"delay_ms", 1000}, {"param", std::string(65537, 'p')}}, "param"},
      {{{"delay_ms", 1000}, {"when", "now"}}, "when"},
  };
  for (const auto& [body, field] : bad) {
    const auto r = Call("POST", path, body.dump());
    EXPECT_EQ(r.status, 400) << body.dump().substr(0, 100);
    EXPECT_THAT(Fields(r.body), ::testing::Contains(field)) << r.body.dump().substr(0, 300);
  }
  EXPECT_EQ(Count("SELECT count(*) FROM run_once"), 0) << "no bad request wrote anything";

  auto r = Call("POST", path, json{{"delay_ms", 60'000}, {"param", "p"}}.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const std::int64_t id = r.body.at("id");
  EXPECT_EQ(r.body.at("fire_at_ms"), kT0 + 60'000);
  EXPECT_EQ(r.body.at("state"), "WAITING");
  EXPECT_EQ(r.body.at("param"), "p");
  EXPECT_TRUE(r.body.at("log_id").is_null());
  r = Call("POST", path, json{{"at_ms", kT0 + 3'600'000}}.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_TRUE(r.body.at("param").is_null()) << "the job's own when it fires";
  r = Call("GET", path);
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.body.at("items").size(), 2u);
  EXPECT_EQ(r.body.at("items")[0].at("fire_at_ms"), kT0 + 3'600'000) << "latest instant first";
  EXPECT_EQ(Call("GET", path + "?limit=0").status, 400);

  r = Call("DELETE", fmt::format("{}/{}", path, id));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("state"), "CANCELLED");
  EXPECT_EQ(Call("DELETE", fmt::format("{}/{}", path, id)).status, 409) << "cancelled before";
  EXPECT_EQ(Call("DELETE", path + "/abc").status, 404);
  EXPECT_EQ(Call("DELETE", path + "/999999").status, 404);
  const int other = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/jobs/{}/run-once/{}", other, id)).status, 404)
      << "through its own job only";
  EXPECT_EQ(Call("POST", "/api/v1/jobs/999999/run-once", json{{"delay_ms", 1}}.dump()).status, 404);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log"), 0) << "nothing fired yet";
}

TEST_F(ApiTest, BulkActionsAnswerEachJobAsItsOwnRouteWouldAndABadRequestChangesNothing) {
  const int g = CreateGroup("sample-app");
  std::vector<int> ids;
  for (int i = 0; i < 5; ++i) {
    auto body = JobBody(g);
    body["description"] = fmt::format("bulk {}", i);
    ids.push_back(Call("POST", "/api/v1/jobs", body.dump()).body.at("id"));
  }
  const auto running = [&] { return Count("SELECT count(*) FROM job WHERE enabled"); };
  auto started = Call("POST", "/api/v1/jobs/bulk", json{{"action", "START"}, {"job_ids", ids}}.dump());
  ASSERT_EQ(started.status, 200) << started.body.dump();
  EXPECT_EQ(started.body.at("succeeded"), 5) << started.body.dump();
  const int before = running();
  ASSERT_EQ(before, 5);
  const std::vector<std::pair<json, std::string>> bad = {
      {{{"action", "PAUSE"}, {"job_ids", ids}}, "action"},
      {{{"action", "stop"}, {"job_ids", ids}}, "action"},
      {{{"action", ""}, {"job_ids", ids}}, "action"},
      {{{"job_ids", ids}}, "action"},
      {{{"action", "STOP"}}, "job_ids"},
      {{{"action", "STOP"}, {"job_ids", json::array()}}, "job_ids"},
      {{{"action", "STOP"}, {"job_ids", {ids[0], ids[0]}}}, "job_ids"},
      {{{"action", "STOP"}, {"job_ids", {ids[0], -1}}}, "job_ids"},
      {{{"action", "STOP"}, {"job_ids", std::vector<int>(1001, 1)}}, "job_ids"},
      {{{"action", "STOP"}, {"job_ids", ids}, {"param", "p"}}, "param"},
      {{{"action", "STOP"}, {"job_ids", ids}, {"force", true}}, "force"},
  };
  for (const auto& [body, field] : bad) {
    const auto r = Call("POST", "/api/v1/jobs/bulk", body.dump());
    EXPECT_EQ(r.status, 400) << body.dump().substr(0, 100);
    EXPECT_THAT(Fields(r.body), ::testing::Contains(field)) << r.body.dump().substr(0, 300);
  }
  EXPECT_EQ(running(), before) << "no bad request changed anything";

  // Stop three and a job that does not exist: each answered on its own, in the order given.
  auto r = Call("POST", "/api/v1/jobs/bulk",
                json{{"action", "STOP"}, {"job_ids", {ids[0], 999999, ids[1], ids[2]}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("succeeded"), 3);
  EXPECT_EQ(r.body.at("failed"), 1);
  const auto& results = r.body.at("results");
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].at("job_id"), ids[0]);
  EXPECT_EQ(results[0].at("status"), 200);
  EXPECT_EQ(results[0].at("job").at("enabled"), false);
  EXPECT_EQ(results[1].at("job_id"), 999999);
  EXPECT_EQ(results[1].at("status"), 404);
  EXPECT_EQ(results[1].at("code"), "not_found");
  EXPECT_EQ(running(), before - 3);

  r = Call("POST", "/api/v1/jobs/bulk",
           json{{"action", "TRIGGER"}, {"job_ids", {ids[3], ids[4]}}, {"param", "bp"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  for (const auto& item : r.body.at("results")) {
    EXPECT_EQ(item.at("status"), 202);
    EXPECT_EQ(Exec(fmt::format("SELECT executor_param FROM job_log WHERE id = {}",
                               item.at("log_id").get<std::int64_t>()))[0][0]
                  .as<std::string>(),
              "bp");
  }
  r = Call("POST", "/api/v1/jobs/bulk", json{{"action", "START"}, {"job_ids", {ids[0], ids[1]}}}.dump());
  EXPECT_EQ(r.body.at("succeeded"), 2) << r.body.dump();
  EXPECT_EQ(running(), before - 1);
  r = Call("POST", "/api/v1/jobs/bulk", json{{"action", "DELETE"}, {"job_ids", {ids[2], ids[3]}}}.dump());
  EXPECT_EQ(r.body.at("results")[1].at("deleted"), ids[3]) << r.body.dump();
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job WHERE id IN ({}, {})", ids[2], ids[3])), 0);
}

TEST_F(ApiTest, TagsAreKeptInLowerCaseFilterAndSearchTheListAndAreCountedPerVisibleGroup) {
  const int mine = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  const auto create = [&](int group, const std::string& description, const json& tags) {
    auto body = JobBody(group);
    body["description"] = description;
    body["tags"] = tags;
    const auto r = Call("POST", "/api/v1/jobs", body.dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body;
  };
  const auto pay = create(mine, "payments sweep", {"Team:Payments", "nightly", "team:payments"});
  EXPECT_EQ(pay.at("tags"), (json{"team:payments", "nightly"}))
      << "lower case, each once, in the order given";
  const int pay_id = pay.at("id");
  const int report_id = create(mine, "report", {"team:reports", "nightly"}).at("id");
  const int other_id = create(other, "other", {"team:payments"}).at("id");
  create(mine, "untagged", json::array());

  const auto ids = [&](const std::string& query, const std::string& as = "admin") {
    const auto r = Call("GET", "/api/v1/jobs?" + query, "", as);
    EXPECT_EQ(r.status, 200) << query << " " << r.body.dump();
    std::vector<int> out;
    for (const auto& j : r.body.at("items"))
      out.push_back(j.at("id"));
    EXPECT_EQ(r.body.at("total"), out.size()) << query;
    return out;
  };
  EXPECT_EQ(ids("tag=nightly"), (std::vector<int>{pay_id, report_id}));
  EXPECT_EQ(ids("tag=NIGHTLY&tag=team:payments"), (std::vector<int>{pay_id})) << "every tag given";
  EXPECT_EQ(ids("tag=nightly,team:reports"), (std::vector<int>{report_id})) << "comma-separated";
  EXPECT_EQ(ids("tag=team:payments"), (std::vector<int>{pay_id, other_id}));
  EXPECT_EQ(ids("tag=team:payments", fmt::format("user:{}", mine)), (std::vector<int>{pay_id}))
      << "a user sees only its groups' jobs";
  EXPECT_EQ(ids("tag=absent"), (std::vector<int>{}));
  EXPECT_EQ(ids("q=REPORTS"), (std::vector<int>{report_id})) << "the search reads tags too";

  auto r = Call("GET", "/api/v1/jobs?tag=" + std::string("bad%20tag"));
  EXPECT_EQ(r.status, 400) << r.body.dump();
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"tag"}) << r.body.dump();

  // The tags in use, counted over the jobs the caller may see.
  r = Call("GET", "/api/v1/tags");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("items"), (json{{{"tag", "nightly"}, {"jobs", 2}},
                                      {{"tag", "team:payments"}, {"jobs", 2}},
                                      {{"tag", "team:reports"}, {"jobs", 1}}}));
  r = Call("GET", "/api/v1/tags", "", fmt::format("user:{}", other));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("items"), (json{{{"tag", "team:payments"}, {"jobs", 1}}})) << r.body.dump();

  // A tag that is not valid, or too many, names the field and the value, and changes nothing.
  const auto stored = [&] {
    return Exec("SELECT string_agg(id || ':' || tags::text, ',' ORDER BY id) FROM job")[0][0]
        .as<std::string>();
  };
  const auto before = stored();
  std::vector<std::string> many;
  many.reserve(21);
  for (int i = 0; i < 21; ++i)
    many.push_back(fmt::format("t{}", i));
  for (const json& tags : {json{"ok", "has space"}, json{"-lead"}, json{std::string(41, 'a')}, json{""},
                           json{"é"}, json{1}, json("nightly"), json(many)}) {
    r = Call("PUT", fmt::format("/api/v1/jobs/{}", pay_id), json{{"tags", tags}}.dump());
    EXPECT_EQ(r.status, 400) << tags.dump();
    EXPECT_EQ(Fields(r.body), std::vector<std::string>{"tags"}) << r.body.dump();
  }
  r = Call("PUT", fmt::format("/api/v1/jobs/{}", pay_id), json{{"tags", {"ok", "has space"}}}.dump());
  EXPECT_THAT(r.body.at("errors")[0].at("message").get<std::string>(), ::testing::HasSubstr("'has space'"));
  EXPECT_EQ(stored(), before);

  // Bulk: add and remove tags on many jobs, each answered with its job.
  r = Call(
      "POST", "/api/v1/jobs/bulk",
      json{{"action", "TAG"}, {"job_ids", {pay_id, report_id}}, {"tags", {"Quarterly", "nightly"}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("succeeded"), 2);
  EXPECT_EQ(r.body.at("results")[0].at("job").at("tags"), (json{"team:payments", "nightly", "quarterly"}));
  EXPECT_EQ(ids("tag=quarterly"), (std::vector<int>{pay_id, report_id}));
  r = Call("POST", "/api/v1/jobs/bulk",
           json{{"action", "UNTAG"}, {"job_ids", {report_id}}, {"tags", {"nightly", "absent"}}}.dump());
  EXPECT_EQ(r.body.at("results")[0].at("job").at("tags"), (json{"team:reports", "quarterly"}));
  EXPECT_EQ(ids("tag=nightly"), (std::vector<int>{pay_id}));
  for (const auto& [body, field] : std::vector<std::pair<json, std::string>>{
           {{{"action", "TAG"}, {"job_ids", {pay_id}}}, "tags"},
           {{{"action", "TAG"}, {"job_ids", {pay_id}}, {"tags", json::array()}}, "tags"},
           {{{"action", "TAG"}, {"job_ids", {pay_id}}, {"tags", {"bad tag"}}}, "tags"},
           {{{"action", "STOP"}, {"job_ids", {pay_id}}, {"tags", {"x"}}}, "tags"}}) {
    r = Call("POST", "/api/v1/jobs/bulk", body.dump());
    EXPECT_EQ(r.status, 400) << body.dump();
    EXPECT_THAT(Fields(r.body), ::testing::Contains(field)) << r.body.dump();
  }
  // Past 20 tags the job is refused, on its own.
  r = Call("POST", "/api/v1/jobs/bulk",
           json{{"action", "TAG"},
                {"job_ids", {pay_id}},
                {"tags", std::vector<std::string>(many.begin(), many.begin() + 18)}}
               .dump());
  EXPECT_EQ(r.body.at("failed"), 1) << r.body.dump();
  EXPECT_EQ(r.body.at("results")[0].at("status"), 400);
}

TEST_F(ApiTest, AlertChannelsAreCheckedKeptWithoutShowingTheirSecretAndLeaveTheJobsThatNamedThemWhenDeleted) {
  const int g = CreateGroup("sample-app");
  const std::string hook = std::string(kWebhookAllow) + "ding/robot/send?access_token=t0k";
  auto r = Call("POST", "/api/v1/alert-channels",
                json{{"name", "ops DingTalk"},
                     {"kind", "WEBHOOK"},
                     {"preset", "DINGTALK"},
                     {"target", hook},
                     {"secret", "SECabc"}}
                    .dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int ding = r.body.at("id");
  EXPECT_EQ(r.body.at("target"), hook);
  EXPECT_EQ(r.body.at("has_secret"), true);
  EXPECT_FALSE(r.body.contains("secret")) << "the secret is never shown";
  r = Call("POST", "/api/v1/alert-channels",
           json{{"name", "dba mail"},
                {"kind", "EMAIL"},
                {"target", "dba@example.com"},
                {"body_template", "Job {{job_id}} failed: {{handle_msg}}"}}
               .dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int mail = r.body.at("id");
  EXPECT_EQ(r.body.at("preset"), nullptr);
  EXPECT_EQ(r.body.at("events"), (json{"FAILED", "TIMEOUT", "LOST", "MISFIRE", "RECOVERED"}))
      << "every kind by default";
  EXPECT_EQ(r.body.at("threshold"), 1);
  EXPECT_EQ(r.body.at("silence_s"), 0);
  r = Call("PUT", fmt::format("/api/v1/alert-channels/{}", r.body.at("id").get<int>()),
           json{{"events", {"TIMEOUT"}}, {"threshold", 3}, {"silence_s", 600}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("events"), (json{"TIMEOUT"}));
  EXPECT_EQ(r.body.at("silence_s"), 600);

  // Bad input names the field and writes nothing.
  const auto stored = [&] {
    return Exec(
               "SELECT count(*) || ':' || string_agg(name || target || secret, ',' ORDER BY id) FROM "
               "alert_channel")[0][0]
        .as<std::string>();
  };
  const auto before = stored();
  for (const auto& [body, field] : std::vector<std::pair<json, std::string>>{
           {{{"name", "x"}, {"kind", "WEBHOOK"}, {"target", "https://10.0.0.1/steal"}}, "target"},
           {{{"name", "x"}, {"kind", "WEBHOOK"}, {"preset", "TEAMS"}, {"target", hook}}, "preset"},
           {{{"name", "x"}, {"kind", "SMS"}, {"target", hook}}, "kind"},
           {{{"name", "ops DingTalk"}, {"kind", "EMAIL"}, {"target", "a@example.com"}}, "name"},
           {{{"name", "x"}, {"kind", "WEBHOOK"}, {"preset", "SLACK"}, {"target", hook}, {"secret", "s"}},
            "secret"},
           {{{"name", "x"}, {"kind", "WEBHOOK"}, {"preset", "CUSTOM"}, {"target", hook}}, "body_template"},
           {{{"name", "x"},
             {"kind", "WEBHOOK"},
             {"preset", "CUSTOM"},
             {"target", hook},
             {"body_template", R"({"t": {{text}}})"}},
            "body_template"},
           {{{"name", "x"}, {"kind", "EMAIL"}, {"target", "a@example.com"}, {"body_template", "{{nope}}"}},
            "body_template"},
           {{{"kind", "EMAIL"}, {"target", "a@example.com"}}, "name"},
           {{{"name", "x"}, {"kind", "EMAIL"}, {"target", "a@example.com"}, {"events", {"FAILED", "BOGUS"}}},
            "events"},
           {{{"name", "x"}, {"kind", "EMAIL"}, {"target", "a@example.com"}, {"events", {"LOST", "LOST"}}},
            "events"},
           {{{"name", "x"}, {"kind", "EMAIL"}, {"target", "a@example.com"}, {"threshold", 0}}, "threshold"},
           {{{"name", "x"}, {"kind", "EMAIL"}, {"target", "a@example.com"}, {"silence_s", 604801}},
            "silence_s"},
           {{{"name", "x"}, {"kind", "EMAIL"}, {"target", "a@example.com"}, {"colour", "red"}}, "colour"}}) {
    r = Call("POST", "/api/v1/alert-channels", body.dump());
    EXPECT_EQ(r.status, 400) << body.dump();
    EXPECT_THAT(Fields(r.body), ::testing::Contains(field)) << r.body.dump();
  }
  r = Call("PUT", fmt::format("/api/v1/alert-channels/{}", ding), json{{"preset", "SLACK"}}.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"secret"})
      << "Slack is not signed: clear the secret first";
  EXPECT_EQ(stored(), before);
  r = Call("PUT", fmt::format("/api/v1/alert-channels/{}", ding), json{{"name", "ops ding"}}.dump());
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(Exec(fmt::format("SELECT secret FROM alert_channel WHERE id = {}", ding))[0][0].as<std::string>(),
            "SECabc")
      << "an update without secret keeps it";

  // Jobs and groups name channels; a channel that does not exist is not found, by id.
  auto job = JobBody(g);
  job["alert_channel_ids"] = {ding, 999};
  r = Call("POST", "/api/v1/jobs", job.dump());
  ASSERT_EQ(r.status, 400) << r.body.dump();
  EXPECT_EQ(r.body.at("errors")[0].at("message"), "alert channel 999 not found");
  job["alert_channel_ids"] = {ding, mail};
  r = Call("POST", "/api/v1/jobs", job.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int job_id = r.body.at("id");
  EXPECT_EQ(r.body.at("alert_channel_ids"), (json{ding, mail}));
  r = Call("PUT", fmt::format("/api/v1/groups/{}", g), json{{"alert_channel_ids", {mail, 998}}}.dump());
  EXPECT_EQ(r.status, 400) << r.body.dump();
  r = Call("PUT", fmt::format("/api/v1/groups/{}", g), json{{"alert_channel_ids", {mail}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("alert_channel_ids"), (json{mail}));

  // A test alarm says what happened: nothing listens on the allowed port here.
  r = Call("POST", fmt::format("/api/v1/alert-channels/{}/test", ding), "");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("ok"), false);
  EXPECT_THAT(r.body.at("message").get<std::string>(), HasSubstr("channel ops ding (DINGTALK): failed"));
  // A USER sees names only, and may not change or test channels.
  const std::string user = fmt::format("user:{}", g);
  r = Call("GET", "/api/v1/alert-channels", "", user);
  ASSERT_EQ(r.status, 200);
  EXPECT_FALSE(r.body.at("items")[0].contains("target"));
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/alert-channels/{}/test", ding), "", user).status, 403);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/alert-channels/{}", ding), "", user).status, 403);

  // Deleted: it leaves the job and the group that named it.
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/alert-channels/{}", mail)).status, 200);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/jobs/{}", job_id)).body.at("alert_channel_ids"), (json{ding}));
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/groups/{}", g)).body.at("alert_channel_ids"), json::array());
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/alert-channels/{}", mail)).status, 404);
  r = Call("GET", "/api/v1/alerts?limit=0");
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"limit"});
  EXPECT_EQ(Call("GET", "/api/v1/alerts", "", user).status, 200);
}

// Issue 25, calendars and windows: a calendar imported from an iCalendar file (England and Wales' bank
// holidays, tests/fixtures/calendars), kept by a job with a window; the preview leaves the excluded days out
// and lists them; bad input names its field and saves nothing; a calendar a job keeps is not deleted.
TEST_F(ApiTest, ACalendarImportedFromAnIcsFileIsKeptByAJobAndThePreviewSkipsItsDays) {
  std::ifstream in(
      std::string(CRONWHEEL_SOURCE_DIR) + "/tests/fixtures/calendars/gb-england-and-wales-2026-2027.ics",
      std::ios::binary);
  std::stringstream ics;
  ics << in.rdbuf();
  ASSERT_FALSE(ics.str().empty());
  auto r = Call("POST", "/api/v1/calendars",
                json{{"name", "UK business days"},
                     {"kind", "BUSINESS_DAYS"},
                     {"time_zone", "Europe/London"},
                     {"days", {{{"date", "2026-12-24"}, {"name", "Office party"}}}},
                     {"ics", ics.str()}}
                    .dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int uk = r.body.at("id");
  ASSERT_EQ(r.body.at("days").size(), 17u) << "16 bank holidays and the day typed in";
  EXPECT_EQ(r.body.at("days")[7], (json{{"date", "2026-12-25"}, {"name", "Christmas Day"}}));
  // Bad input: each names its field, and nothing is saved.
  for (const auto& [body, field] : std::vector<std::pair<json, std::string>>{
           {{{"name", "x"}, {"ics", "Date,Name\n2026-12-25,Christmas\n"}}, "ics"},
           {{{"name", "x"}, {"days", {"2026-02-30"}}}, "days"},
           {{{"name", "x"}, {"time_zone", "Mars/Base"}}, "time_zone"},
           {{{"name", "x"}, {"kind", "HOLIDAYS"}}, "kind"},
           {{{"name", "UK business days"}}, "name"},
           {{{"name", "x"}, {"ics_from", "2026-13-01"}, {"ics", ics.str()}}, "ics_from"},
           {{{"name", "x"}, {"colour", "red"}}, "colour"},
       }) {
    r = Call("POST", "/api/v1/calendars", body.dump());
    EXPECT_EQ(r.status, 400) << body.dump();
    EXPECT_THAT(Fields(r.body), ::testing::Contains(field)) << r.body.dump();
  }
  EXPECT_EQ(Call("GET", "/api/v1/calendars").body.at("items").size(), 1u);
  const int g = CreateGroup("sample-app");
  r = Call("POST", "/api/v1/calendars", json{{"name", "x"}}.dump(), fmt::format("user:{}", g));
  EXPECT_EQ(r.status, 403) << "only an admin writes calendars";
  EXPECT_EQ(Call("GET", "/api/v1/calendars", "", fmt::format("user:{}", g)).body.at("items").size(), 1u)
      << "a user reads them, to keep them on its jobs";

  // A job keeps it, with a window from 2026 on; unknown calendars and a window that ends before it starts
  // are refused.
  auto job = JobBody(g);
  job["schedule_conf"] = "0 0 9 * * ?";
  job["time_zone"] = "Europe/London";
  job["calendar_ids"] = {uk, 999};
  r = Call("POST", "/api/v1/jobs", job.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body.dump(), HasSubstr("calendar 999 not found"));
  job["calendar_ids"] = {uk};
  job["start_ms"] = kT0 + 86'400'000;
  job["end_ms"] = kT0;
  r = Call("POST", "/api/v1/jobs", job.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"end_ms"}) << r.body.dump();
  job["end_ms"] = 0;
  r = Call("POST", "/api/v1/jobs", job.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int job_id = r.body.at("id");
  EXPECT_EQ(r.body.at("calendar_ids"), json({uk}));
  EXPECT_EQ(r.body.at("start_ms"), kT0 + 86'400'000);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/calendars/{}", uk)).body.at("jobs"), 1);

  // The preview from Wednesday 23 December 2026: Thursday the 24th is the office party, then Christmas,
  // the weekend and the Boxing Day substitute; the next fires are Tuesday the 29th on.
  r = Call("POST", "/api/v1/schedules/preview",
           json{{"schedule_type", "CRON"},
                {"schedule_conf", "0 0 9 * * ?"},
                {"time_zone", "Europe/London"},
                {"count", 3},
                {"from_ms", 1'798'020'000'000},  // 2026-12-23T10:00:00Z
                {"calendar_ids", {uk}}}
               .dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  std::vector<std::string> fires;
  for (const auto& f : r.body.at("fires"))
    fires.push_back(f.at("iso"));
  EXPECT_EQ(fires, (std::vector<std::string>{"2026-12-29T09:00:00+00:00", "2026-12-30T09:00:00+00:00",
                                             "2026-12-31T09:00:00+00:00"}));
  std::vector<std::string> skipped;
  for (const auto& e : r.body.at("excluded"))
    skipped.push_back(e.at("date").get<std::string>() + " " + e.at("name").get<std::string>());
  EXPECT_EQ(skipped,
            (std::vector<std::string>{"2026-12-24 Office party", "2026-12-25 Christmas Day", "2026-12-26 ",
                                      "2026-12-27 ", "2026-12-28 Boxing Day (substitute day)"}));
  EXPECT_EQ(r.body.at("excluded")[1].at("calendar"), "UK business days");
  r = Call(
      "POST", "/api/v1/schedules/preview",
      json{{"schedule_type", "CRON"}, {"schedule_conf", "0 0 9 * * ?"}, {"calendar_ids", {uk + 1}}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"calendar_ids"});

  // Kept by a job, the calendar stays; once the job lets it go, it is deleted.
  r = Call("DELETE", fmt::format("/api/v1/calendars/{}", uk));
  EXPECT_EQ(r.status, 409) << r.body.dump();
  EXPECT_THAT(r.body.dump(), HasSubstr(fmt::format("job(s) {}", job_id)));
  ASSERT_EQ(Call("PUT", fmt::format("/api/v1/jobs/{}", job_id), json{{"calendar_ids", json::array()}}.dump())
                .status,
            200);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/calendars/{}", uk)).status, 200);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/calendars/{}", uk)).status, 404);
}

TEST_F(ApiTest, AJobsConcurrencyLimitIsSavedShownAndCheckedNamingTheField) {
  const int g = CreateGroup("sample-app");
  auto job = JobBody(g);
  auto r = Call("POST", "/api/v1/jobs", job.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body.at("concurrency_policy"), "ALLOW") << "XXL-JOB's behaviour by default";
  EXPECT_EQ(r.body.at("max_concurrent"), 0);
  const int id = r.body.at("id");
  const auto path = fmt::format("/api/v1/jobs/{}", id);

  r = Call("PUT", path, json{{"concurrency_policy", "FORBID"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(Call("GET", path).body.at("concurrency_policy"), "FORBID");
  EXPECT_EQ(
      Count(fmt::format("SELECT count(*) FROM job WHERE id = {} AND concurrency_policy = 'FORBID'", id)), 1);
  // Bad input names its field and changes nothing.
  for (const auto& [body, field, says] : std::vector<std::tuple<json, std::string, std::string>>{
           {{{"max_concurrent", 3}}, "max_concurrent", "FORBID runs one fire at a time"},
           {{{"concurrency_policy", "REPLACE"}}, "concurrency_policy", "use one of ALLOW, FORBID"},
           {{{"concurrency_policy", "ALLOW"}, {"max_concurrent", 1001}}, "max_concurrent", "1000"},
           {{{"concurrency_policy", "ALLOW"}, {"max_concurrent", -1}}, "max_concurrent", ""},
       }) {
    r = Call("PUT", path, body.dump());
    EXPECT_EQ(r.status, 400) << body.dump();
    EXPECT_EQ(Fields(r.body), std::vector<std::string>{field}) << r.body.dump();
    EXPECT_THAT(r.body.dump(), HasSubstr(says));
  }
  r = Call("GET", path);
  EXPECT_EQ(r.body.at("concurrency_policy"), "FORBID");
  EXPECT_EQ(r.body.at("max_concurrent"), 0);
  r = Call("PUT", path, json{{"concurrency_policy", "ALLOW"}, {"max_concurrent", 3}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("max_concurrent"), 3);
}

TEST_F(ApiTest, RegistryWithTheRightTokenOnlyAndUnderBothPrefixes) {
  const json reg{{"registryGroup", "EXECUTOR"},
                 {"registryKey", "sample-app"},
                 {"registryValue", "http://127.0.0.1:9999"}};
  auto r = Executor("/api/registry", reg.dump(), "wrong");
  EXPECT_EQ(r.body.at("code"), 500);
  EXPECT_EQ(r.body.at("msg"), "The access token is wrong.");
  EXPECT_EQ(Count("SELECT count(*) FROM executor_registry"), 0);
  r = Executor("/xxl-job-admin/api/registry", reg.dump());
  EXPECT_EQ(r.body.at("code"), 200);
  EXPECT_EQ(Exec("SELECT registry_value FROM executor_registry")[0][0].as<std::string>(),
            "http://127.0.0.1:9999/");
  r = Executor("/api/registry", R"({"registryKey":"","registryValue":"x"})");
  EXPECT_EQ(r.body.at("code"), 500);
  EXPECT_THAT(r.body.at("msg").get<std::string>(), HasSubstr("registryKey"));
  r = Executor("/api/registryRemove", reg.dump());
  EXPECT_EQ(r.body.at("code"), 200);
  EXPECT_EQ(Count("SELECT count(*) FROM executor_registry"), 0);
  r = Executor("/api/nothing", "{}");
  EXPECT_EQ(r.body.at("code"), 500);
}

// Issue 21: registration was an SSRF. Any holder of a group's or the global token could register any
// address, and the admin then sent /run (with the token and the job's data) to it: the cloud metadata
// service, loopback services, the admin itself. The guard's defaults refuse link-local and unspecified
// addresses at registration, naming the address and the setting; nothing is stored.
TEST_F(ApiTest, RegistryRefusesAnAddressTheRegistrationGuardRefusesNamingItAndTheSetting) {
  for (const char* value :
       {"http://169.254.169.254/", "http://169.254.169.254:80/latest/meta-data", "http://[fe80::1]:9999/",
        "http://[::ffff:169.254.169.254]/", "http://0.0.0.0:9999/"}) {
    const json reg{{"registryGroup", "EXECUTOR"}, {"registryKey", "sample-app"}, {"registryValue", value}};
    const auto r = Executor("/api/registry", reg.dump());
    EXPECT_EQ(r.body.at("code"), 500) << value;
    const auto msg = r.body.value("msg", "");
    EXPECT_THAT(msg, HasSubstr(value)) << msg;
    EXPECT_THAT(msg, HasSubstr("registry_deny")) << msg;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM executor_registry"), 0);
  // Loopback and private addresses stay allowed by default, and a host name is stored: the admin checks
  // what it resolves to each time it connects.
  for (const char* value :
       {"http://127.0.0.1:9999/", "http://10.0.0.5:9999/", "http://executor.internal:9999/"}) {
    const json reg{{"registryGroup", "EXECUTOR"}, {"registryKey", "sample-app"}, {"registryValue", value}};
    EXPECT_EQ(Executor("/api/registry", reg.dump()).body.at("code"), 200) << value;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM executor_registry"), 3);
}

// Found by the bad-input e2e suite: registrations with any registryKey and registryValue were stored.
TEST_F(ApiTest, RegistryRefusesAKeyThatIsNoAppNameAndAValueThatIsNoAddress) {
  for (const auto& [key, value, field] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"'; DROP TABLE job; --", "http://127.0.0.1:9999", "registryKey"},
           {"a", "http://127.0.0.1:9999", "registryKey"},
           {"sample-app", "javascript:alert(1)", "registryValue"},
           {"sample-app", "127.0.0.1:9999", "registryValue"},
           {"sample-app", "http://127.0.0.1:99999/", "registryValue"}}) {
    const json reg{{"registryGroup", "EXECUTOR"}, {"registryKey", key}, {"registryValue", value}};
    for (const char* path : {"/api/registry", "/api/registryRemove"}) {
      const auto r = Executor(path, reg.dump());
      EXPECT_EQ(r.body.at("code"), 500) << key << " " << value;
      EXPECT_THAT(r.body.at("msg").get<std::string>(), HasSubstr(field)) << key << " " << value;
    }
  }
  EXPECT_EQ(Count("SELECT count(*) FROM executor_registry"), 0);
}

// Found by the bad-input e2e suite: a callback naming only log ids no fire has was accepted with a wrong
// token (an oracle for which ids exist).
// Issue 26, item 5: the trigger result of a fire sent ahead is kept back for its callback. The console shows
// it all the same (a fire read without a trigger result writes the kept-back ones first), and the callback
// writes it with its handle result.
TEST_F(ApiTest, AFireSentAheadShowsItsKeptBackTriggerResultAndItsCallbackWritesBoth) {
  const int g = CreateGroup("sample-app");
  const int job = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  const auto sent_ahead = [&](std::int64_t log_id) {
    const auto instant =
        Exec(fmt::format("SELECT scheduled_ms FROM job_log WHERE id = {}", log_id))[0][0].as<std::int64_t>();
    writer_->Record({.log_id = log_id,
                     .scheduled_ms = instant,
                     .trigger_ms = kT0,
                     .trigger_code = 200,
                     .trigger_msg = "held; starts at runAtMs 1",
                     .executor_address = "http://127.0.0.1:9999/",
                     .executor_handler = "demoJobHandler",
                     .sent_ahead = true});
  };
  const std::int64_t shown = Call("POST", fmt::format("/api/v1/jobs/{}/trigger", job)).body.at("log_id");
  sent_ahead(shown);
  ASSERT_EQ(writer_->held(), 1u);
  auto r = Call("GET", fmt::format("/api/v1/logs/{}", shown));
  EXPECT_EQ(r.body.at("trigger_code"), 200) << r.body.dump();
  EXPECT_EQ(r.body.at("executor_address"), "http://127.0.0.1:9999/");
  EXPECT_EQ(writer_->held(), 0u) << "written to be shown";

  const std::int64_t called_back =
      Call("POST", fmt::format("/api/v1/jobs/{}/trigger", job)).body.at("log_id");
  sent_ahead(called_back);
  ASSERT_EQ(writer_->held(), 1u);
  const auto cb =
      Executor("/api/callback",
               json::array({{{"logId", called_back}, {"handleCode", 200}, {"handleMsg", "done"}}}).dump());
  ASSERT_EQ(cb.body.at("code"), 200) << cb.body.dump();
  EXPECT_EQ(writer_->taken(), 1u) << "the callback took the kept-back result";
  const auto row = Exec(
      fmt::format("SELECT trigger_code, trigger_msg, executor_address, handle_msg FROM job_log WHERE id = {}",
                  called_back));
  EXPECT_EQ(row[0][0].as<int>(), 200);
  EXPECT_EQ(row[0][1].as<std::string>(), "held; starts at runAtMs 1");
  EXPECT_EQ(row[0][2].as<std::string>(), "http://127.0.0.1:9999/");
  EXPECT_EQ(row[0][3].as<std::string>(), "done");
  EXPECT_EQ(writer_->held(), 0u);
  EXPECT_EQ(writer_->pending(), 0u) << "nothing left for the writer to write";
}

TEST_F(ApiTest, ACallbackForUnknownLogIdsNeedsTheToken) {
  auto r = Executor("/api/callback", R"([{"logId":987654321,"handleCode":500}])", "wrong");
  EXPECT_EQ(r.body.at("code"), 500);
  EXPECT_EQ(r.body.at("msg"), "The access token is wrong.");
  r = Executor("/api/callback", R"([{"logId":987654321,"handleCode":500}])");
  EXPECT_EQ(r.body.at("code"), 200);
}

// Security review (issue 21), finding 4: registration refuses the global token for an app whose group has a
// token of its own, but a callback for that group's fires accepted it. Now a callback needs, for every fire
// it names, the token of the fire's group (its own, else the global one), as registration does.
TEST_F(ApiTest, ACallbackForAGroupWithItsOwnTokenNeedsThatToken) {
  constexpr const char* kGroupToken = "group-token-0123456789";
  const int tokened = CreateGroup("tokened-app");
  const int plain = CreateGroup("plain-app");
  ASSERT_EQ(Call("PUT", fmt::format("/api/v1/groups/{}", tokened), json{{"access_token", kGroupToken}}.dump())
                .status,
            200);
  const int job = Call("POST", "/api/v1/jobs", JobBody(tokened).dump()).body.at("id");
  const int plain_job = Call("POST", "/api/v1/jobs", JobBody(plain).dump()).body.at("id");
  const auto fire = [&](int j) {
    return Call("POST", fmt::format("/api/v1/jobs/{}/trigger", j)).body.at("log_id").get<std::int64_t>();
  };
  const auto result = [](std::int64_t log) {
    return json::array({{{"logId", log}, {"handleCode", 200}}}).dump();
  };
  // Registration, for comparison: the group's token only.
  const json reg{{"registryGroup", "EXECUTOR"},
                 {"registryKey", "tokened-app"},
                 {"registryValue", "http://127.0.0.1:9999"}};
  EXPECT_EQ(Executor("/api/registry", reg.dump(), kToken).body.at("msg"), "The access token is wrong.");
  EXPECT_EQ(Executor("/api/registry", reg.dump(), kGroupToken).body.at("code"), 200);
  // A callback: the global token is refused for the tokened group's fire, which stays open.
  const auto log = fire(job);
  auto r = Executor("/api/callback", result(log), kToken);
  EXPECT_EQ(r.body.at("msg"), "The access token is wrong.");
  EXPECT_EQ(Count(fmt::format("SELECT handle_code FROM job_log WHERE id = {}", log)), 0);
  // A batch with fires of both groups has no one token that fits: refused whole.
  const auto plain_log = fire(plain_job);
  const auto both =
      json::array({{{"logId", log}, {"handleCode", 200}}, {{"logId", plain_log}, {"handleCode", 200}}});
  EXPECT_EQ(Executor("/api/callback", both.dump(), kToken).body.at("code"), 500);
  EXPECT_EQ(Executor("/api/callback", both.dump(), kGroupToken).body.at("code"), 500);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE handle_code <> 0")), 0);
  // Each with its own token.
  EXPECT_EQ(Executor("/api/callback", result(log), kGroupToken).body.at("code"), 200);
  EXPECT_EQ(Executor("/api/callback", result(plain_log), kToken).body.at("code"), 200);
  EXPECT_EQ(Count(fmt::format("SELECT handle_code FROM job_log WHERE id = {}", log)), 200);
  EXPECT_EQ(Count(fmt::format("SELECT handle_code FROM job_log WHERE id = {}", plain_log)), 200);
  // A repeated callback (the fire is closed, found in job_log) is held to the same rule.
  EXPECT_EQ(Executor("/api/callback", result(log), kToken).body.at("msg"), "The access token is wrong.");
  EXPECT_EQ(Executor("/api/callback", result(log), kGroupToken).body.at("code"), 200);
}

// Found by the bad-input e2e suite: errors under the XXL-JOB paths answered JSON with 404/413 instead of
// the protocol's envelope; a GET with a body left the body in the connection, read as the next request.
TEST_F(ApiTest, ExecutorApiErrorsAreEnvelopesAndAGetWithABodyIsRefused) {
  for (const char* path : {"/api/registry/", "/api//registry", "/xxl-job-admin/api/callback/x"}) {
    const auto r = Executor(path, "{}");
    EXPECT_EQ(r.body.at("code"), 500) << path;
  }
  auto res = client_->Get("/api/registry", {{"XXL-JOB-ACCESS-TOKEN", kToken}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("HttpMethod not support"));
  res = client_->Post("/api/callback", {{"XXL-JOB-ACCESS-TOKEN", kToken}},
                      std::string(std::size_t{6} * 1024 * 1024, ' '), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("larger than the limit"));
  httplib::Request get;
  get.method = "GET";
  get.path = "/api/v1/health";
  get.body = "GET /api/v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n";
  get.set_header("Content-Type", "text/plain");
  res = client_->send(get);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("has no body"));
  EXPECT_EQ(res->get_header_value("Connection"), "close");
  res = client_->Get("/api/v1/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << "the next request on the client gets its own answer";
}

// Found by the bad-input e2e suite: 1e400 answered 500 (nlohmann's out_of_range escaped), and deep nesting
// crashed the process.
TEST_F(ApiTest, RestBodiesBeyondADoubleOrTooDeepAreA400) {
  auto r = Call("POST", "/api/v1/groups", R"({"app_name":1e400})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body.at("error").get<std::string>(), HasSubstr("1e400"));
  r = Call("POST", "/api/v1/groups", std::string(100'000, '[') + std::string(100'000, ']'));
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body.at("error").get<std::string>(), HasSubstr("deeper than 64"));
}

// Data passing (issue 23): a callback's `output` is kept with the fire and shown with it; a child job's
// parameter naming it is resolved when the child's fire is written (the executor gets the value), and what
// cannot be resolved is empty with a note; an output over 16 KiB is dropped, the result kept, saying so.
TEST_F(ApiTest, AParentsOutputIsKeptAndResolvedIntoItsChildsParameter) {
  const int g = CreateGroup("sample-app");
  const int parent = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  auto child_body = JobBody(g);
  child_body["param"] = "--file {{parent.output.file}} --rows={{parent.output.rows}} {{parent.output.nope}}";
  const int child = Call("POST", "/api/v1/jobs", child_body.dump()).body.at("id");
  ASSERT_EQ(Call("POST", fmt::format("/api/v1/jobs/{}/start", child)).status, 200);
  ASSERT_EQ(
      Call("PUT", fmt::format("/api/v1/jobs/{}", parent), json{{"child_job_ids", {child}}}.dump()).status,
      200);
  const std::int64_t log = Call("POST", fmt::format("/api/v1/jobs/{}/trigger", parent)).body.at("log_id");
  const json output{{"file", "s3://exports/2026-11-27.csv"}, {"rows", 42}};
  auto r = Executor(
      "/api/callback",
      json::array({{{"logId", log}, {"handleCode", 200}, {"handleMsg", "exported"}, {"output", output}}})
          .dump());
  ASSERT_EQ(r.body.at("code"), 200) << r.body.dump();
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}", log)).body.at("output"), output);
  const auto row = Exec(fmt::format(
      "SELECT id, executor_param, trigger_msg FROM job_log WHERE job_id = {} AND parent_log_id = {}", child,
      log));
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0][1].as<std::string>(), "--file s3://exports/2026-11-27.csv --rows=42 ");
  EXPECT_THAT(row[0][2].as<std::string>(),
              HasSubstr(fmt::format("{{{{parent.output.nope}}}} replaced by '': the output of fire {} has no "
                                    "member 'nope'",
                                    log)));
  EXPECT_TRUE(
      Call("GET", fmt::format("/api/v1/logs/{}", row[0][0].as<std::int64_t>())).body.at("output").is_null());

  // Too big: the result stands, the output is not kept, the fire says why.
  const std::int64_t big = Call("POST", fmt::format("/api/v1/jobs/{}/trigger", parent)).body.at("log_id");
  r = Executor("/api/callback", json::array({{{"logId", big},
                                              {"handleCode", 200},
                                              {"handleMsg", "exported"},
                                              {"output", std::string(20'000, 'x')}}})
                                    .dump());
  ASSERT_EQ(r.body.at("code"), 200) << r.body.dump();
  const auto fire = Call("GET", fmt::format("/api/v1/logs/{}", big)).body;
  EXPECT_EQ(fire.at("status"), "SUCCESS");
  EXPECT_TRUE(fire.at("output").is_null());
  EXPECT_THAT(fire.at("handle_msg").get<std::string>(),
              HasSubstr("output of 20002 bytes dropped: at most 16384 bytes are kept"));
}

TEST_F(ApiTest, CallbacksRecordOnceTriggerChildrenAndAreLiberalInDialect) {
  const int g = CreateGroup("sample-app");
  const int parent = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  const int child = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  ASSERT_EQ(Call("POST", fmt::format("/api/v1/jobs/{}/start", child)).status, 200)
      << "a stopped child is not fired (FireTablesPg.AStoppedChildJobIsNotFiredAndItsParentSaysSo)";
  ASSERT_EQ(
      Call("PUT", fmt::format("/api/v1/jobs/{}", parent), json{{"child_job_ids", {child}}}.dump()).status,
      200);
  const std::int64_t ok = Call("POST", fmt::format("/api/v1/jobs/{}/trigger", parent)).body.at("log_id");
  const std::int64_t bad = Call("POST", fmt::format("/api/v1/jobs/{}/trigger", parent)).body.at("log_id");
  // Dialect A: an array with logDateTim.
  auto r = Executor(
      "/api/callback",
      json::array({{{"logId", ok}, {"logDateTim", kT0}, {"handleCode", 200}, {"handleMsg", "done"}}}).dump());
  EXPECT_EQ(r.body.at("code"), 200);
  // Dialect C: {callbackList} with logDateTime.
  r = Executor("/api/callback",
               json{{"callbackList",
                     {{{"logId", bad}, {"logDateTime", kT0}, {"handleCode", 500}, {"handleMsg", "boom"}}}}}
                   .dump());
  EXPECT_EQ(r.body.at("code"), 200);
  // A repeat is ignored.
  Executor("/api/callback",
           json::array({{{"logId", ok}, {"handleCode", 500}, {"handleMsg", "late"}}}).dump());
  EXPECT_EQ(Exec(fmt::format("SELECT status FROM job_log WHERE id = {}", ok))[0][0].as<std::string>(),
            "SUCCESS");
  EXPECT_EQ(Exec(fmt::format("SELECT status FROM job_log WHERE id = {}", bad))[0][0].as<std::string>(),
            "FAILED");
  // The success triggered the child once; the failure did not.
  EXPECT_EQ(
      Count(fmt::format("SELECT count(*) FROM job_log WHERE trigger_type = 'PARENT' AND job_id = {} AND "
                        "parent_log_id = {}",
                        child, ok)),
      1);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE trigger_type = 'PARENT'"), 1);
  // The parent's handle message names the child fire (XXL-JOB's "Trigger child job" block).
  const auto parent_fires = Exec("SELECT id FROM job_log WHERE trigger_type = 'PARENT'");
  ASSERT_EQ(parent_fires.size(), 1u);
  const auto child_log = parent_fires[0][0].as<std::int64_t>();
  EXPECT_EQ(Exec(fmt::format("SELECT handle_msg FROM job_log WHERE id = {}", ok))[0][0].as<std::string>(),
            fmt::format("done\n>>>>>>>>>>> Trigger child job <<<<<<<<<<<\nchild job {}: fire {}", child,
                        child_log));
  EXPECT_EQ(Exec(fmt::format("SELECT handle_msg FROM job_log WHERE id = {}", bad))[0][0].as<std::string>(),
            "boom");
  // Malformed: an envelope saying what is wrong, nothing changed.
  r = Executor("/api/callback", R"([{"logId":"x","handleCode":200}])");
  EXPECT_EQ(r.body.at("code"), 500);
  EXPECT_THAT(r.body.at("msg").get<std::string>(), HasSubstr("[0].logId"));
  r = Executor("/api/callback", json::array({{{"logId", bad}, {"handleCode", 200}}}).dump(), "wrong");
  EXPECT_EQ(r.body.at("msg"), "The access token is wrong.");
}

// Issue 26, item 4: the executor's start instant (cronwheel's handleStartTime) is stored with the result and
// shown with the fire; a callback without it (an XXL-JOB executor) leaves 0; a bad one is refused whole,
// naming the field, and records nothing.
TEST_F(ApiTest, ACallbackRecordsWhenTheExecutorStartedTheFire) {
  const int g = CreateGroup("sample-app");
  const int job = Call("POST", "/api/v1/jobs", JobBody(g).dump()).body.at("id");
  const auto fire = [&] {
    return Call("POST", fmt::format("/api/v1/jobs/{}/trigger", job)).body.at("log_id").get<std::int64_t>();
  };
  const std::int64_t started = fire();
  const std::int64_t plain = fire();
  const std::int64_t refused = fire();
  auto r = Executor("/api/callback",
                    json::array({{{"logId", started}, {"handleCode", 200}, {"handleStartTime", kT0 + 12}},
                                 {{"logId", plain}, {"handleCode", 200}}})
                        .dump());
  EXPECT_EQ(r.body.at("code"), 200);
  r = Executor("/api/callback",
               json::array({{{"logId", refused}, {"handleCode", 200}, {"handleStartTime", "later"}}}).dump());
  EXPECT_EQ(r.body.at("code"), 500);
  EXPECT_THAT(r.body.at("msg").get<std::string>(), HasSubstr("[0].handleStartTime"));
  const auto start_of = [&](std::int64_t log) {
    return Exec(fmt::format("SELECT start_ms FROM job_log WHERE id = {}", log))[0][0].as<std::int64_t>();
  };
  EXPECT_EQ(start_of(started), kT0 + 12);
  EXPECT_EQ(start_of(plain), 0);
  EXPECT_EQ(Count(fmt::format("SELECT handle_code FROM job_log WHERE id = {}", refused)), 0);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}", started)).body.at("start_ms"), kT0 + 12);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}", plain)).body.at("start_ms"), 0);
}

TEST_F(ApiTest, FixDelayWaitsForTheRunToFinish) {
  const int g = CreateGroup("sample-app");
  auto body = JobBody(g);
  body["schedule_type"] = "FIX_DELAY";
  body["schedule_conf"] = "30";
  const int job = Call("POST", "/api/v1/jobs", body.dump()).body.at("id");
  Exec(fmt::format("UPDATE job SET enabled = true WHERE id = {}", job));
  SetNextFire(job, kAwaitingCompletion);
  // A FIX_DELAY job whose run is not awaited (its next fire is set) keeps its next fire on a callback.
  const int other = Call("POST", "/api/v1/jobs", body.dump()).body.at("id");
  Exec(fmt::format("UPDATE job SET enabled = true WHERE id = {}", other));
  SetNextFire(other, kT0 + 90'000);
  const std::int64_t log = Call("POST", fmt::format("/api/v1/jobs/{}/trigger", job)).body.at("log_id");
  const std::int64_t other_log =
      Call("POST", fmt::format("/api/v1/jobs/{}/trigger", other)).body.at("log_id");
  clock_->Advance(std::chrono::seconds(7));
  Executor("/api/callback",
           json::array({{{"logId", log}, {"handleCode", 200}}, {{"logId", other_log}, {"handleCode", 200}}})
               .dump());
  EXPECT_EQ(NextFire(job), kT0 + 7000 + 30'000);
  EXPECT_EQ(NextFire(other), kT0 + 90'000);
}

}  // namespace
