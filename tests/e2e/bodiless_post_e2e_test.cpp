// POSTs without a body, as `curl -X POST` sends them (neither Content-Length nor Transfer-Encoding; RFC 9112
// §6.3: the body is empty), checked with raw bytes over a TCP socket so that no client library adds a
// "Content-Length: 0":
// - every REST route whose body is optional (web/openapi.json: a POST with no requestBody, or one not
//   required) answers 2xx and does its work, one after another on one keep-alive connection;
// - a POST to a route that needs a body, sent with a body but no length, gets 411 naming Content-Length and
//   changes nothing (the server cannot read a body it is not told the length of).
// The routes come from the OpenAPI document, so a new action route cannot be left out of this test.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cluster.hpp"
#include "cwtest/raw_connection.hpp"
#include "http_client.hpp"

namespace {

using namespace cwtest::e2e;
using ::testing::HasSubstr;

constexpr const char* kPassword = "bodiless-admin-password";

using cwtest::RawConnection;

// "POST <path> HTTP/1.1" with these header lines and nothing after the blank line.
std::string BodilessPost(const std::string& path, const std::string& header_lines) {
  return fmt::format("POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\n{}\r\n", path, header_lines);
}

json OpenApi() {
  std::ifstream in(std::string(CRONWHEEL_SOURCE_DIR) + "/web/openapi.json");
  return json::parse(in);
}

// The POST routes of the OpenAPI document whose body is optional (`optional` true) or required.
std::set<std::string> PostRoutes(bool optional) {
  std::set<std::string> out;
  const auto doc = OpenApi();  // a local: a range-for over a temporary's member would dangle
  for (const auto& [path, ops] : doc.at("paths").items()) {
    if (!ops.contains("post")) continue;
    const auto& op = ops.at("post");
    const bool required = op.contains("requestBody") && op.at("requestBody").value("required", false);
    if (required != optional) out.insert(path);
  }
  return out;
}

class BodilessPostE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<Cluster>(Cluster::Options{
        .admins = 1, .executors = 1, .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}}});
    http_ = std::make_unique<HttpCaller>(cluster_->admin_port(0));
    const auto session = cwtest::Login(*http_, "admin", kPassword);
    ASSERT_TRUE(session);
    const auto r = http_->Send("POST", "/api/v1/tokens", cwtest::SessionHeaders(*session),
                               json{{"name", "bodiless-e2e"}, {"scope", "admin"}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
    token_ = r.Json()->at("token").get<std::string>();
    group_ = cluster_->AddGroup();
  }

  int CreateJob(const std::string& description, const std::string& schedule_type, const std::string& conf) {
    const auto r = http_->Send("POST", "/api/v1/jobs", cwtest::BearerHeaders(token_),
                               json{{"group_id", group_},
                                    {"description", description},
                                    {"schedule_type", schedule_type},
                                    {"schedule_conf", conf},
                                    {"handler", "demoJobHandler"}}
                                   .dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()->at("id").get<int>();
  }

  json Get(const std::string& path) {
    const auto r = http_->Send("GET", path, cwtest::BearerHeaders(token_), "", "");
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return r.Json().value_or(json());
  }

  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<HttpCaller> http_;
  std::string token_;
  int group_ = 0;
};

TEST_F(BodilessPostE2E, EveryRouteWhoseBodyIsOptionalAnswersABodilessPostWith2xx) {
  const int job = CreateJob("bodiless actions", "CRON", "0 0 3 * * ?");
  // A fire that runs for a minute, for /kill.
  const int sleeper = CreateJob("bodiless sleeper", "NONE", "");
  auto r = http_->Send("POST", fmt::format("/api/v1/jobs/{}/trigger", sleeper), cwtest::BearerHeaders(token_),
                       json{{"param", "60"}}.dump());
  ASSERT_EQ(r.status, 202) << r.body;
  const auto running = r.Json()->at("log_id").get<std::int64_t>();
  ASSERT_TRUE(cwtest::Eventually(
      [&] { return Get(fmt::format("/api/v1/logs/{}", running)).value("status", "") == "RUNNING"; }, 30s))
      << cluster_->executor(0).LogTail();
  // An e-mail channel to test (no SMTP server here: the answer says the e-mail was not sent).
  r = http_->Send("POST", "/api/v1/alert-channels", cwtest::BearerHeaders(token_),
                  json{{"name", "bodiless"}, {"kind", "EMAIL"}, {"target", "ops@example.com"}}.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const auto channel = r.Json()->at("id").get<int>();
  // Workflows: one to trigger, and a run of another that sleeps a minute, to kill and then re-run its node.
  const auto workflow = [&](int node_job, const std::string& param) {
    const auto w = http_->Send("POST", "/api/v1/workflows", cwtest::BearerHeaders(token_),
                               json{{"group_id", group_},
                                    {"name", "bodiless"},
                                    {"nodes", {{{"key", "a"}, {"job_id", node_job}, {"param", param}}}}}
                                   .dump());
    EXPECT_EQ(w.status, 201) << w.body;
    return w.Json().value_or(json::object()).value("id", 0);
  };
  const int quick = workflow(job, "0");
  const int slow = workflow(CreateJob("bodiless workflow sleeper", "NONE", ""), "60");
  r = http_->Send("POST", fmt::format("/api/v1/workflows/{}/trigger", slow), cwtest::BearerHeaders(token_),
                  "{}");
  ASSERT_EQ(r.status, 202) << r.body;
  const auto run = r.Json()->at("run_id").get<std::int64_t>();
  ASSERT_TRUE(cwtest::Eventually(
      [&] {
        const auto fires = Get(fmt::format("/api/v1/workflow-runs/{}", run)).at("nodes").at(0).at("log_ids");
        return !fires.empty() &&
               Get(fmt::format("/api/v1/logs/{}", fires.back().get<std::int64_t>())).value("status", "") ==
                   "RUNNING";
      },
      30s))
      << cluster_->executor(0).LogTail();
  // A console session to log out of.
  const auto session = cwtest::Login(*http_, "admin", kPassword);
  ASSERT_TRUE(session);

  struct Action {
    std::string route;  // as documented
    std::string path;
    std::string auth;  // header lines
    int status;
  };
  const auto bearer = fmt::format("Authorization: Bearer {}\r\n", token_);
  const std::vector<Action> actions = {
      {"/api/v1/jobs/{id}/start", fmt::format("/api/v1/jobs/{}/start", job), bearer, 200},
      {"/api/v1/jobs/{id}/trigger", fmt::format("/api/v1/jobs/{}/trigger", job), bearer, 202},
      {"/api/v1/jobs/{id}/stop", fmt::format("/api/v1/jobs/{}/stop", job), bearer, 200},
      {"/api/v1/jobs/{id}/copy", fmt::format("/api/v1/jobs/{}/copy", job), bearer, 201},
      {"/api/v1/logs/{id}/kill", fmt::format("/api/v1/logs/{}/kill", running), bearer, 200},
      {"/api/v1/alert-channels/{id}/test", fmt::format("/api/v1/alert-channels/{}/test", channel), bearer,
       200},
      {"/api/v1/workflows/{id}/trigger", fmt::format("/api/v1/workflows/{}/trigger", quick), bearer, 202},
      {"/api/v1/workflow-runs/{id}/kill", fmt::format("/api/v1/workflow-runs/{}/kill", run), bearer, 200},
      {"/api/v1/workflow-runs/{id}/nodes/{key}/rerun",
       fmt::format("/api/v1/workflow-runs/{}/nodes/a/rerun", run), bearer, 200},
      {"/api/v1/auth/logout", "/api/v1/auth/logout",
       fmt::format("Cookie: {}\r\nX-CSRF-Token: {}\r\n", session->cookie, session->csrf), 200},
  };
  std::set<std::string> tested;
  for (const auto& a : actions)
    tested.insert(a.route);
  EXPECT_EQ(tested, PostRoutes(true)) << "every POST whose body is optional, and only those";

  // All on one keep-alive connection: each answer is read by its length, so a server that waited for a
  // body, or read the next request as one, would stall or answer out of step.
  RawConnection conn(cluster_->admin_port(0));
  std::map<std::string, json> answers;
  for (const auto& a : actions) {
    const auto bytes = BodilessPost(a.path, a.auth);
    ASSERT_THAT(bytes, ::testing::Not(HasSubstr("Content-Length")));
    conn.Send(bytes);
    const auto answer = conn.Read();
    EXPECT_EQ(answer.status, a.status) << "POST " << a.path << "\n" << answer.head << "\n" << answer.body;
    answers[a.route] = answer.Json();
  }

  // Each did its work.
  EXPECT_GT(answers["/api/v1/jobs/{id}/start"].value("next_fire_ms", std::int64_t{0}), 0);
  const auto log = answers["/api/v1/jobs/{id}/trigger"].value("log_id", std::int64_t{0});
  ASSERT_GT(log, 0);
  EXPECT_EQ(Get(fmt::format("/api/v1/logs/{}", log)).value("trigger_type", ""), "MANUAL");
  EXPECT_FALSE(Get(fmt::format("/api/v1/jobs/{}", job)).value("enabled", true)) << "stopped";
  EXPECT_EQ(answers["/api/v1/jobs/{id}/copy"].value("description", ""), "bodiless actions (copy)");
  EXPECT_EQ(answers["/api/v1/logs/{id}/kill"].value("handle_code", 0), 500);
  EXPECT_THAT(answers["/api/v1/alert-channels/{id}/test"].value("message", ""), HasSubstr("no SMTP server"));
  EXPECT_GT(answers["/api/v1/workflows/{id}/trigger"].value("run_id", std::int64_t{0}), 0);
  EXPECT_EQ(answers["/api/v1/workflow-runs/{id}/kill"].value("state", ""), "KILLED");
  EXPECT_EQ(answers["/api/v1/workflow-runs/{id}/nodes/{key}/rerun"].value("state", ""), "RUNNING");
  EXPECT_EQ(answers["/api/v1/auth/logout"].value("logged_out", false), true);
  r = http_->Send("GET", "/api/v1/auth/me", {{"Cookie", session->cookie}}, "", "");
  EXPECT_EQ(r.status, 401) << "the session ended: " << r.body;

  // `curl -X POST` sends Connection: close on its own connection; same answer.
  RawConnection once(cluster_->admin_port(0));
  once.Send(BodilessPost(fmt::format("/api/v1/jobs/{}/start", job), bearer + "Connection: close\r\n"));
  EXPECT_EQ(once.Read().status, 200);
}

TEST_F(BodilessPostE2E, ARouteThatNeedsABodyRefusesOneSentWithoutALength) {
  const auto jobs_before = Get("/api/v1/jobs").value("total", -1);
  const auto bearer = fmt::format("Authorization: Bearer {}\r\n", token_);
  const std::map<std::string, std::string> bodies = {
      {"/api/v1/auth/login", json{{"username", "admin"}, {"password", kPassword}}.dump()},
      {"/api/v1/users", json{{"username", "mallory"}, {"password", "0123456789ab"}}.dump()},
      {"/api/v1/users/me/password",
       json{{"old_password", kPassword}, {"new_password", "x0123456789"}}.dump()},
      {"/api/v1/tokens", json{{"name", "t"}}.dump()},
      {"/api/v1/auth/cli/authorize",
       json{{"port", 9}, {"state", "s"}, {"code_challenge", std::string(43, 'c')}, {"name", "t"}}.dump()},
      {"/api/v1/auth/cli/token", json{{"code", "c"}, {"code_verifier", std::string(43, 'v')}}.dump()},
      {"/api/v1/schedules/preview", json{{"schedule_type", "NONE"}}.dump()},
      {"/api/v1/groups", json{{"app_name", "new-app"}, {"title", "t"}}.dump()},
      {"/api/v1/groups/{id}/drain", json{{"address", "http://127.0.0.1:1/"}}.dump()},
      {"/api/v1/jobs",
       json{{"group_id", group_}, {"description", "never"}, {"schedule_type", "NONE"}, {"handler", "h"}}
           .dump()},
      {"/api/v1/jobs/bulk", json{{"action", "STOP"}, {"job_ids", {1}}}.dump()},
      {"/api/v1/jobs/{id}/run-once", json{{"delay_ms", 60'000}}.dump()},
      {"/api/v1/logs/clear", json{{"keep_last", 0}}.dump()},
      {"/api/v1/alert-channels",
       json{{"name", "never"}, {"kind", "EMAIL"}, {"target", "a@example.com"}}.dump()},
      {"/api/v1/calendars", json{{"name", "never"}}.dump()},
      {"/api/v1/workflows",
       json{{"group_id", group_}, {"name", "never"}, {"nodes", {{{"key", "a"}, {"job_id", 1}}}}}.dump()},
  };
  std::set<std::string> tested;
  for (const auto& [route, body] : bodies)
    tested.insert(route);
  EXPECT_EQ(tested, PostRoutes(false)) << "every POST whose body is required";
  for (const auto& [route, body] : bodies) {
    RawConnection conn(cluster_->admin_port(0));
    std::string target = route;  // a path id: the test's group
    if (const auto id = target.find("{id}"); id != std::string::npos)
      target.replace(id, 4, std::to_string(group_));
    conn.Send(fmt::format("POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\n{}Content-Type: application/json\r\n\r\n{}",
                          target, bearer, body));
    const auto answer = conn.Read();
    EXPECT_EQ(answer.status, 411) << route << "\n" << answer.head << "\n" << answer.body;
    EXPECT_THAT(answer.Json().value("error", ""), HasSubstr("Content-Length"))
        << route << ": " << answer.body;
    // The body's bytes are never read as a request: the answer ends the connection (httplib closes it
    // after its keep-alive wait, 2 s here, so the wait is checked once).
    EXPECT_THAT(answer.head, HasSubstr("Connection: close")) << route;
    if (route == "/api/v1/tokens") {
      EXPECT_EQ(conn.Read().status, 0) << "a second answer came";
    }
  }
  EXPECT_EQ(Get("/api/v1/jobs").value("total", -1), jobs_before) << "nothing was created";
  EXPECT_EQ(cluster_->Scalar("SELECT count(*) FROM app_user WHERE username = 'mallory'"), 0);
}

}  // namespace
