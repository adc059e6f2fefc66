// The console's server side against a real database, served in-process on a loopback port with the real
// AuthService (sessions, CSRF, API tokens, throttle) on a fake clock, and a recording executor client.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "admin/api/server.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/results/callback_service.hpp"
#include "admin/schedule/scheduler.hpp"
#include "admin/store/job_repository.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "api_fixture.hpp"
#include "cwtest/answering_executor_client.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using cronwheel::xxljob::Envelope;
using nlohmann::json;
using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr const char* kToken = "test-token-0123456789";
constexpr const char* kAdminPassword = "admin-password-1";
constexpr const char* kUserPassword = "user-password-1";

class NullSink final : public FireSink {
 public:
  void Dispatch(std::vector<Fire> /*fires*/) override {}
};

// Records /log and /kill and answers what the test set.
class FakeExecutors final : public cwtest::AnsweringExecutorClient {
 public:
  Envelope Kill(const std::string& address, const std::string& token, int job_id) override {
    {
      std::lock_guard lock(mu);
      kills.push_back(fmt::format("{} {} {}", address, token, job_id));
    }
    if (on_kill) on_kill();  // what the executor does meanwhile (its callback may come first)
    return kill_reply;
  }
  Envelope Log(const std::string& address, const std::string& token,
               const cronwheel::xxljob::LogParam& p) override {
    std::lock_guard lock(mu);
    logs.push_back(fmt::format("{} {} {} {} {}", address, token, p.log_date_tim, p.log_id, p.from_line_num));
    return log_reply;
  }
  std::mutex mu;
  std::vector<std::string> kills;
  std::vector<std::string> logs;
  Envelope kill_reply = Envelope::Success();
  std::function<void()> on_kill;
  Envelope log_reply = Envelope::Success(
      json{{"fromLineNum", 1}, {"toLineNum", 2}, {"logContent", "line 1\nline 2\n"}, {"isEnd", false}});
};

// A caller: a session (cookie + CSRF token), a Bearer token, or nobody.
struct Caller {
  std::string cookie;
  std::string csrf;
  std::string bearer;
};

class ConsoleTest : public cwtest::ApiServerFixture {
 protected:
  void SetUp() override {
    PgFixture::SetUp();
    BuildServices(kT0, sink_, [](const std::vector<Fire>&) {});
    auth_ = std::make_unique<AuthService>(AuthSettings(), *clock_, *pool_);
    accounts_ = std::make_unique<Accounts>(*auth_, *clock_, *pool_);
    audit_ = std::make_unique<AuditLog>(*clock_, *pool_);
    console_store_ = std::make_unique<ConsoleRepository>(*clock_, *pool_);
    console_ = std::make_unique<ConsoleServices>(ConsoleServices{.auth = *auth_,
                                                                 .accounts = *accounts_,
                                                                 .audit = *audit_,
                                                                 .store = *console_store_,
                                                                 .executors = executors_,
                                                                 .web_dir = ""});
    ASSERT_NO_FATAL_FAILURE(StartServer({.access_token = kToken}, *auth_, console_.get()));
    ASSERT_TRUE(auth_->EnsureAdminUser(kAdminPassword));
    admin_ = Login("admin", kAdminPassword);
  }
  // Argon2id at libsodium's minimum cost: the tests check behaviour, not hashing strength.
  static AuthService::Settings AuthSettings() {
    AuthService::Settings s;
    s.hashing.ops_limit = 1;
    s.hashing.mem_limit = 8192;
    return s;
  }

  struct Reply {
    int status = 0;
    json body;
    httplib::Headers headers;
  };
  Reply Call(const std::string& method, const std::string& path, const Caller& who,
             const std::string& body = "", bool send_csrf = true) {
    httplib::Headers h;
    if (!who.cookie.empty()) h.emplace("Cookie", std::string(kSessionCookie) + "=" + who.cookie);
    if (!who.csrf.empty() && send_csrf) h.emplace(kCsrfHeader, who.csrf);
    if (!who.bearer.empty()) h.emplace("Authorization", "Bearer " + who.bearer);
    httplib::Result r = Send(method, path, h, body);
    EXPECT_TRUE(r) << method << " " << path;
    if (!r) return {};
    Reply out{r->status, json::parse(r->body, nullptr, false), r->headers};
    EXPECT_FALSE(out.body.is_discarded()) << method << " " << path << " answered non-JSON: " << r->body;
    return out;
  }
  Reply Call(const std::string& method, const std::string& path, const std::string& body = "") {
    return Call(method, path, admin_, body);
  }
  Reply RawLogin(const std::string& username, const std::string& password) {
    return Call("POST", "/api/v1/auth/login", Caller{},
                json{{"username", username}, {"password", password}}.dump());
  }
  Caller Login(const std::string& username, const std::string& password) {
    const auto r = RawLogin(username, password);
    EXPECT_EQ(r.status, 200) << r.body.dump();
    const auto set_cookie = r.headers.find("Set-Cookie");
    if (set_cookie == r.headers.end()) return {};
    const auto& v = set_cookie->second;
    const auto start = v.find('=') + 1;
    return Caller{.cookie = v.substr(start, v.find(';') - start), .csrf = r.body.value("csrf_token", "")};
  }
  int CreateGroup(const std::string& app) {
    const auto r = Call("POST", "/api/v1/groups", json{{"app_name", app}, {"title", "T"}}.dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", 0);
  }
  int CreateJob(int group, const std::string& description = "d") {
    const auto r = Call("POST", "/api/v1/jobs",
                        json{{"group_id", group},
                             {"description", description},
                             {"schedule_type", "CRON"},
                             {"schedule_conf", "0/2 * * * * ?"},
                             {"handler", "demoJobHandler"}}
                            .dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", 0);
  }
  int CreateUser(const std::string& name, const std::vector<int>& groups, const std::string& role = "USER") {
    const auto r = Call(
        "POST", "/api/v1/users",
        json{{"username", name}, {"password", kUserPassword}, {"role", role}, {"permitted_group_ids", groups}}
            .dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", 0);
  }
  // A fire of `job` accepted by the executor at `address`, without a result yet.
  std::int64_t AddRunningFire(int job, int group, const std::string& address = "http://127.0.0.1:9999/") {
    return AddFire(job, group, "MANUAL", kT0, 200, 0, 0, address, kT0 + 5);
  }

  NullSink sink_;
  FakeExecutors executors_;
  std::unique_ptr<AuthService> auth_;
  std::unique_ptr<Accounts> accounts_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<ConsoleRepository> console_store_;
  std::unique_ptr<ConsoleServices> console_;
  Caller admin_;
};

TEST_F(ConsoleTest, FirstStartCreatesOneAdminEvenWhenAdminsStartTogether) {
  Exec("DELETE FROM app_user");
  std::vector<std::optional<std::string>> created(3);
  std::vector<std::thread> threads;
  threads.reserve(3);
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      AuthService auth(AuthSettings(), *clock_, *pool_);
      created[static_cast<std::size_t>(i)] = auth.EnsureAdminUser("");
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(Count("SELECT count(*) FROM app_user"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM app_user WHERE username = 'admin' AND role = 'ADMIN'"), 1);
  const auto made =
      std::count_if(created.begin(), created.end(), [](const auto& p) { return p.has_value(); });
  ASSERT_EQ(made, 1) << "exactly one admin created the user and printed its password";
  for (const auto& p : created) {
    if (p) {
      EXPECT_EQ(RawLogin("admin", *p).status, 200) << "the printed password works";
    }
  }
  EXPECT_EQ(Exec("SELECT password_hash FROM app_user")[0][0].as<std::string>().rfind("$argon2id$", 0), 0u);
  // Users exist now: the setting is ignored, nothing is created.
  AuthService again(AuthSettings(), *clock_, *pool_);
  EXPECT_FALSE(again.EnsureAdminUser("another-password"));
  EXPECT_THROW(again.EnsureAdminUser("short"), std::invalid_argument);
}

TEST_F(ConsoleTest, LoginSetsAHardenedCookieAndStateChangesNeedTheCsrfToken) {
  const auto r = RawLogin("admin", kAdminPassword);
  ASSERT_EQ(r.status, 200);
  const auto cookie = r.headers.find("Set-Cookie")->second;
  EXPECT_THAT(cookie, HasSubstr("HttpOnly"));
  EXPECT_THAT(cookie, HasSubstr("SameSite=Strict"));
  EXPECT_THAT(cookie, HasSubstr("Path=/"));
  EXPECT_THAT(cookie, ::testing::Not(HasSubstr("Secure")));
  EXPECT_EQ(r.body.at("user").at("role"), "ADMIN");
  EXPECT_FALSE(r.body.at("user").contains("password_hash"));
  // The database keeps only a hash of the session secret.
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM user_session WHERE token_hash = '{}'", admin_.cookie)),
            0);
  const auto me = Call("GET", "/api/v1/auth/me", admin_);
  EXPECT_EQ(me.body.at("user").at("username"), "admin");
  EXPECT_EQ(me.body.at("csrf_token"), admin_.csrf);
  // Without or with a wrong CSRF token: 403, nothing changes.
  const auto body = json{{"app_name", "csrf-app"}, {"title", "T"}}.dump();
  EXPECT_EQ(Call("POST", "/api/v1/groups", admin_, body, false).status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/groups", Caller{.cookie = admin_.cookie, .csrf = "forged"}, body).status,
            403);
  EXPECT_EQ(Count("SELECT count(*) FROM job_group"), 0);
  EXPECT_EQ(Call("POST", "/api/v1/groups", admin_, body).status, 201);
  // A form post (not JSON) cannot log anyone in.
  auto form =
      client_->Post("/api/v1/auth/login", "username=admin&password=x", "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
  // Wrong credentials say nothing about which part was wrong.
  EXPECT_EQ(RawLogin("admin", "wrong-password").body.at("error"), "wrong username or password");
  EXPECT_EQ(RawLogin("nobody", "wrong-password").body.at("error"), "wrong username or password");
  // Logout ends the session.
  EXPECT_EQ(Call("POST", "/api/v1/auth/logout", admin_).status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", admin_).status, 401);
}

TEST_F(ConsoleTest, FailedLoginsAreThrottledPerUsernameAndPerClientOnTheClock) {
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(RawLogin("admin", "wrong-password").status, 401) << i;
  auto r = RawLogin("admin", kAdminPassword);
  EXPECT_EQ(r.status, 429) << "the right password is refused too while throttled";
  EXPECT_EQ(r.headers.find("Retry-After")->second, "300");
  EXPECT_EQ(RawLogin("ADMIN", kAdminPassword).status, 429) << "the username key ignores case";
  // The client address is throttled as well: another username from the same address is refused.
  EXPECT_EQ(RawLogin("someone-else", "wrong-password").status, 429);
  clock_->Advance(std::chrono::seconds(299));
  EXPECT_EQ(RawLogin("admin", kAdminPassword).status, 429);
  clock_->Advance(std::chrono::seconds(1));
  EXPECT_EQ(RawLogin("admin", kAdminPassword).status, 200);
}

TEST_F(ConsoleTest, SessionsEndWhenIdleAndAtTheLatestAfterTheMaximum) {
  // 12 h idle: a request within it renews; one after it finds the session gone.
  clock_->Advance(std::chrono::hours(11));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", admin_).status, 200);
  clock_->Advance(std::chrono::hours(11));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", admin_).status, 200) << "renewed by the previous request";
  clock_->Advance(std::chrono::hours(12) + std::chrono::seconds(1));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", admin_).status, 401);
  // 7 days at most, however busy: requests every 11 h keep it for 165 h, not past 168 h.
  const auto busy = Login("admin", kAdminPassword);
  for (int i = 0; i < 15; ++i) {
    clock_->Advance(std::chrono::hours(11));
    EXPECT_EQ(Call("GET", "/api/v1/auth/me", busy).status, 200) << i;
  }
  clock_->Advance(std::chrono::hours(4));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", busy).status, 401);
}

TEST_F(ConsoleTest, ApiTokensActAsTheirUserAreShownOnceAndCanBeDeleted) {
  const int g = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  CreateUser("alice", {g});
  const auto alice = Login("alice", kUserPassword);
  auto r = Call("POST", "/api/v1/tokens", alice, json{{"name", "ci"}}.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const std::string secret = r.body.at("token");
  const int token_id = r.body.at("id");
  EXPECT_EQ(secret.rfind("cwt_", 0), 0u);
  EXPECT_EQ(
      Count(fmt::format("SELECT count(*) FROM api_token WHERE token_hash LIKE '%{}%'", secret.substr(4))), 0);
  const Caller bearer{.bearer = secret};
  // No CSRF token needed, alice's groups only.
  EXPECT_EQ(
      Call("POST", "/api/v1/jobs", bearer,
           json{{"group_id", g}, {"description", "d"}, {"schedule_type", "NONE"}, {"handler", "h"}}.dump())
          .status,
      201);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/groups/{}", other), bearer).status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/users", bearer).status, 403);
  r = Call("GET", "/api/v1/tokens", alice);
  ASSERT_EQ(r.body.at("items").size(), 1u);
  EXPECT_EQ(r.body.at("items")[0].at("last_used_ms"), kT0);
  EXPECT_FALSE(r.body.at("items")[0].contains("token"));
  EXPECT_EQ(Call("GET", "/api/v1/tokens?all=true", alice).status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/tokens?all=true").body.at("items").size(), 1u);
  EXPECT_EQ(Call("GET", "/api/v1/tokens").body.at("items").size(), 0u) << "the admin's own list";
  // A wrong or malformed bearer never falls back to a cookie.
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", Caller{.bearer = "cwt_nope"}).status, 401);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/tokens/{}", token_id), alice).status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", bearer).status, 401);
  EXPECT_EQ(Call("POST", "/api/v1/tokens", alice, json{{"name", ""}}.dump()).status, 400);
  EXPECT_EQ(Fields(Call("POST", "/api/v1/tokens", alice, json{{"nom", "x"}}.dump()).body),
            (std::vector<std::string>{"nom", "name"}));
}

TEST_F(ConsoleTest, UsersAreManagedByAdminsWithoutLockingThemselvesOut) {
  const int g = CreateGroup("mine-app");
  auto r = Call("POST", "/api/v1/users",
                json{{"username", "a b"}, {"password", "short"}, {"role", "ROOT"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(Fields(r.body), ::testing::UnorderedElementsAre("username", "password", "role"));
  EXPECT_EQ(
      Call("POST", "/api/v1/users",
           json{{"username", "bob"}, {"password", kUserPassword}, {"permitted_group_ids", {999}}}.dump())
          .status,
      400);
  const int bob = CreateUser("bob", {g});
  EXPECT_EQ(
      Fields(
          Call("POST", "/api/v1/users", json{{"username", "bob"}, {"password", kUserPassword}}.dump()).body),
      std::vector<std::string>{"username"});
  const int admin_id = Call("GET", "/api/v1/auth/me").body.at("user").at("id");
  // Not yourself, not the last admin.
  r = Call("DELETE", fmt::format("/api/v1/users/{}", admin_id));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/users/{}", admin_id), json{{"role", "USER"}}.dump()).status,
            409);
  const int carol = CreateUser("carol", {}, "ADMIN");
  const auto carol_session = Login("carol", kUserPassword);
  EXPECT_EQ(
      Call("PUT", fmt::format("/api/v1/users/{}", admin_id), carol_session, json{{"role", "USER"}}.dump())
          .status,
      200);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/users/{}", carol), carol_session).status, 409);
  EXPECT_EQ(Call("GET", "/api/v1/users").status, 403) << "the demoted admin acts as a USER at once";
  // An admin's new password for bob ends bob's sessions.
  const auto bob_session = Login("bob", kUserPassword);
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/users/{}", bob), carol_session,
                 json{{"password", "another-password"}}.dump())
                .status,
            200);
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", bob_session).status, 401);
  EXPECT_EQ(
      Call("PUT", fmt::format("/api/v1/users/{}", bob), carol_session, json{{"username", "robert"}}.dump())
          .status,
      400);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/users/{}", bob), carol_session).status, 200);
}

TEST_F(ConsoleTest, OwnPasswordChangeChecksTheOldOneAndEndsOtherSessions) {
  const auto other = Login("admin", kAdminPassword);
  auto r = Call("POST", "/api/v1/users/me/password",
                json{{"old_password", "wrong-password"}, {"new_password", "new-password-1"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"old_password"});
  r = Call("POST", "/api/v1/users/me/password",
           json{{"old_password", kAdminPassword}, {"new_password", "short"}}.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"new_password"});
  r = Call("POST", "/api/v1/users/me/password",
           json{{"old_password", kAdminPassword}, {"new_password", "new-password-1"}}.dump());
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(Call("GET", "/api/v1/auth/me").status, 200) << "this session stays";
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", other).status, 401) << "the others end";
  EXPECT_EQ(RawLogin("admin", "new-password-1").status, 200);
}

TEST_F(ConsoleTest, SchedulePreviewGivesFiresInTheZoneAndNamesTheBadField) {
  // 2026-03-29: Europe/Berlin leaves +01:00 for +02:00 at 02:00 (there is no 02:30 that day).
  const auto from = 1774652400000;  // 2026-03-28T00:00:00+01:00
  auto r = Call("POST", "/api/v1/schedules/preview",
                json{{"schedule_type", "CRON"},
                     {"schedule_conf", "0 30 2 * * ?"},
                     {"time_zone", "Europe/Berlin"},
                     {"count", 3},
                     {"from_ms", from}}
                    .dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  ASSERT_EQ(r.body.at("fires").size(), 3u);
  EXPECT_EQ(r.body.at("fires")[0].at("iso"), "2026-03-28T02:30:00+01:00");
  EXPECT_THAT(r.body.at("fires")[1].at("iso").get<std::string>(), HasSubstr("+02:00"));
  EXPECT_EQ(r.body.at("fires")[0].at("ms"), from + 9'000'000);
  r = Call("POST", "/api/v1/schedules/preview",
           json{{"schedule_type", "CRON"}, {"schedule_conf", "0 0 25 * * ?"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"schedule_conf"});
  r = Call(
      "POST", "/api/v1/schedules/preview",
      json{{"schedule_type", "CRON"}, {"schedule_conf", "0 * * * * ?"}, {"time_zone", "Mars/Base"}}.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"time_zone"});
  r = Call("POST", "/api/v1/schedules/preview", json{{"schedule_type", "CRON"}, {"count", 1000}}.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"count"});
  r = Call("POST", "/api/v1/schedules/preview", json{{"schedule_type", "NONE"}}.dump());
  EXPECT_EQ(r.body.at("fires").size(), 0u);
  r = Call("POST", "/api/v1/schedules/preview",
           json{{"schedule_type", "FIX_RATE"}, {"schedule_conf", "30"}}.dump());
  EXPECT_EQ(r.body.at("fires")[1].at("ms"), kT0 + 60'000);
}

TEST_F(ConsoleTest, OutputComesFromTheFiresOwnExecutorUntilTheEnd) {
  const int g = CreateGroup("sample-app");
  const int job = CreateJob(g);
  const auto log = AddRunningFire(job, g);
  auto r = Call("GET", fmt::format("/api/v1/logs/{}/output", log));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("content"), "line 1\nline 2\n");
  EXPECT_EQ(r.body.at("to_line"), 2);
  EXPECT_EQ(r.body.at("end"), false);
  {
    std::lock_guard lock(executors_.mu);
    ASSERT_EQ(executors_.logs.size(), 1u);
    EXPECT_EQ(executors_.logs[0], fmt::format("http://127.0.0.1:9999/ {} {} {} 1", kToken, kT0 + 5, log))
        << "the recorded address, the global token, logDateTim = trigger_ms";
  }
  // No new lines and no result yet: not the end. With a result: the end (XXL-JOB, docs/xxl-job-protocol.md
  // §2).
  executors_.log_reply =
      Envelope::Success(json{{"fromLineNum", 3}, {"toLineNum", 0}, {"logContent", ""}, {"isEnd", false}});
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=3", log)).body.at("end"), false);
  Exec(fmt::format("UPDATE job_log SET handle_code = 200 WHERE id = {}", log));
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=3", log)).body.at("end"), true);
  // The executor's failure is a 502 naming it; bad input is a 400.
  executors_.log_reply = Envelope::Fail("connection refused");
  r = Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=3", log));
  EXPECT_EQ(r.status, 502);
  EXPECT_THAT(r.body.at("error").get<std::string>(), HasSubstr("connection refused"));
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=0", log)).status, 400);
  // A fire never sent has no output: not ended while pending.
  const auto pending =
      Exec(fmt::format("INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, "
                       "created_ms) VALUES ({}, {}, 'CRON', {}, {}) RETURNING id",
                       job, g, kT0 + 60'000, kT0))[0][0]
          .as<std::int64_t>();
  r = Call("GET", fmt::format("/api/v1/logs/{}/output", pending));
  EXPECT_EQ(r.body.at("end"), false);
  std::lock_guard lock(executors_.mu);
  EXPECT_EQ(executors_.logs.size(), 4u) << "no request for a fire without an executor";
}

TEST_F(ConsoleTest, KillStopsTheRunOnItsExecutorAndTheLaterCallbackIsARepeat) {
  const int g = CreateGroup("sample-app");
  Exec(fmt::format("UPDATE job_group SET access_token = 'group-token-123' WHERE id = {}", g));
  const int job = CreateJob(g);
  const auto log = AddRunningFire(job, g);
  auto r = Call("POST", fmt::format("/api/v1/logs/{}/kill", log));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("handle_code"), 500);
  EXPECT_EQ(r.body.at("status"), "FAILED");
  EXPECT_THAT(r.body.at("handle_msg").get<std::string>(), HasSubstr("Manual operation, kill job: "));
  {
    std::lock_guard lock(executors_.mu);
    ASSERT_EQ(executors_.kills.size(), 1u);
    EXPECT_EQ(executors_.kills[0], fmt::format("http://127.0.0.1:9999/ group-token-123 {}", job));
  }
  EXPECT_EQ(Count(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", log)), 1)
      << "no retry, no alarm";
  // The executor's callback afterwards changes nothing.
  callbacks_->Handle(
      std::vector<cronwheel::xxljob::HandleCallbackParam>{{.log_id = log, .handle_code = 500}});
  EXPECT_THAT(Exec(fmt::format("SELECT handle_msg FROM job_log WHERE id = {}", log))[0][0].as<std::string>(),
              HasSubstr("Manual operation"));
  // Finished or never accepted: 409. The executor refusing: 502 and the row unchanged.
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/logs/{}/kill", log)).status, 409);
  const auto other = AddRunningFire(job, g);
  executors_.kill_reply = Envelope::Fail("no such job thread");
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/logs/{}/kill", other)).status, 502);
  EXPECT_EQ(Count(fmt::format("SELECT handle_code FROM job_log WHERE id = {}", other)), 0);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/audit?entity=log&entity_id={}", log)).body.at("total"), 1);
}

// The executor reports the killed fire (a failed callback) before the admin records the kill: the kill still
// stands, and the fire is neither retried nor alarmed.
TEST_F(ConsoleTest, AKillWhoseCallbackArrivesFirstStillStands) {
  const int g = CreateGroup("sample-app");
  const int job = CreateJob(g);
  const auto log = AddRunningFire(job, g);
  executors_.on_kill = [&] {
    callbacks_->Handle(std::vector<cronwheel::xxljob::HandleCallbackParam>{
        {.log_id = log,
         .handle_code = 500,
         .handle_msg = "scheduling center kill job. [job running, killed]"}});
  };
  const auto r = Call("POST", fmt::format("/api/v1/logs/{}/kill", log));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("handle_code"), 500);
  EXPECT_THAT(r.body.at("handle_msg").get<std::string>(), HasSubstr("Manual operation, kill job: "));
  EXPECT_EQ(Count(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", log)), 1)
      << "no retry, no alarm";
}

TEST_F(ConsoleTest, ClearDeletesOnlyFinishedFiresOfTheChosenScope) {
  const int g = CreateGroup("sample-app");
  const int job = CreateJob(g);
  const int other = CreateJob(g);
  const auto day = std::int64_t{86'400'000};
  for (int i = 0; i < 10; ++i) {
    Exec(fmt::format(
        "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, trigger_code, handle_code,"
        " created_ms) VALUES ({}, {}, 'MANUAL', {}, 200, 200, 1)",
        job, g, kT0 - i * day));
  }
  AddRunningFire(job, g);  // scheduled at kT0, running
  Exec(fmt::format("UPDATE job_log SET scheduled_ms = {} WHERE trigger_code = 200 AND handle_code = 0",
                   kT0 - 30 * day));
  Exec(fmt::format("UPDATE fire_open SET scheduled_ms = {}", kT0 - 30 * day));
  Exec(fmt::format(
      "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, trigger_code, handle_code,"
      " created_ms) VALUES ({}, {}, 'MANUAL', {}, 200, 200, 1)",
      other, g, kT0 - 30 * day));
  auto r = Call("POST", "/api/v1/logs/clear", json{{"job_id", job}, {"older_than_days", 5}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("deleted"), 4) << "days 6..9 ago; the running fire stays";
  r = Call("POST", "/api/v1/logs/clear", json{{"job_id", job}, {"keep_last", 2}}.dump());
  EXPECT_EQ(r.body.at("deleted"), 4);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", job)), 3);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", other)), 1);
  EXPECT_EQ(Fields(Call("POST", "/api/v1/logs/clear", json{{"job_id", job}}.dump()).body),
            std::vector<std::string>{"older_than_days"});
  EXPECT_EQ(Call("POST", "/api/v1/logs/clear", json{{"older_than_days", 1}, {"keep_last", 1}}.dump()).status,
            400);
}

TEST_F(ConsoleTest, DashboardCountsTheGroupsTheCallerMaySee) {
  const int mine = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  CreateJob(mine);
  const int o = CreateJob(other);
  Call("POST", fmt::format("/api/v1/jobs/{}/start", o));
  Exec(fmt::format(
      "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, handle_code, created_ms)"
      " VALUES ({}, {}, 'MANUAL', {}, 200, 1)",
      o, other, kT0 + 1000));
  Exec(
      "INSERT INTO log_report (day, running_count, success_count, failed_count, updated_ms) VALUES"
      " ('2026-01-01', 1, 2, 3, 1), ('2025-12-30', 0, 5, 0, 1), ('2025-12-01', 9, 9, 9, 1)");
  ASSERT_TRUE(registry_->Register({.registry_key = "other-app", .registry_value = "http://127.0.0.1:9999/"}));
  catalog_->RefreshRegistry();
  auto r = Call("GET", "/api/v1/dashboard?days=7");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("totals"),
            (json{{"jobs", 2}, {"enabled_jobs", 1}, {"fires_today", 1}, {"executors_online", 1}}));
  ASSERT_EQ(r.body.at("days").size(), 7u);
  EXPECT_EQ(r.body.at("days")[6],
            (json{{"day", "2026-01-01"}, {"running", 0}, {"success", 1}, {"failed", 0}}))
      << "today is counted live, not read from the report the monitor renews every minute";
  EXPECT_EQ(r.body.at("days")[4].at("success"), 5);
  EXPECT_EQ(r.body.at("days")[0].at("day"), "2025-12-26");
  CreateUser("alice", {mine});
  const auto alice = Login("alice", kUserPassword);
  r = Call("GET", "/api/v1/dashboard", alice);
  EXPECT_EQ(r.body.at("totals"),
            (json{{"jobs", 1}, {"enabled_jobs", 0}, {"fires_today", 0}, {"executors_online", 0}}));
  EXPECT_EQ(r.body.at("days")[6].at("success"), 0) << "counted over alice's groups, not the global report";
  EXPECT_EQ(Call("GET", "/api/v1/dashboard?days=0").status, 400);
}

TEST_F(ConsoleTest, CopyMakesAStoppedJobAndGlueVersionsAreListed) {
  const int g = CreateGroup("sample-app");
  auto r = Call("POST", "/api/v1/jobs",
                json{{"group_id", g},
                     {"description", "script"},
                     {"schedule_type", "CRON"},
                     {"schedule_conf", "0 * * * * ?"},
                     {"glue_type", "GLUE_SHELL"},
                     {"glue_source", "echo one"},
                     {"enabled", true}}
                    .dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int job = r.body.at("id");
  clock_->Advance(std::chrono::seconds(1));
  Call("PUT", fmt::format("/api/v1/jobs/{}", job),
       json{{"glue_source", "echo two"}, {"glue_remark", "v2"}}.dump());
  r = Call("GET", fmt::format("/api/v1/jobs/{}/glue", job));
  ASSERT_EQ(r.body.at("items").size(), 2u);
  EXPECT_EQ(r.body.at("items")[0].at("glue_source"), "echo two");
  EXPECT_EQ(r.body.at("items")[0].at("glue_remark"), "v2");
  r = Call("POST", fmt::format("/api/v1/jobs/{}/copy", job));
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body.at("description"), "script (copy)");
  EXPECT_EQ(r.body.at("enabled"), false);
  EXPECT_EQ(r.body.at("glue_source"), "echo two");
  EXPECT_NE(r.body.at("id"), job);
  r = Call("GET", "/api/v1/audit?action=job.copy");
  ASSERT_EQ(r.body.at("total"), 1);
  EXPECT_EQ(r.body.at("items")[0].at("after").at("copied_from"), job);
}

TEST_F(ConsoleTest, AuditRecordsWhoChangedWhatWithoutSecrets) {
  const int g = CreateGroup("sample-app");
  Call("PUT", fmt::format("/api/v1/groups/{}", g), json{{"access_token", "group-secret-token"}}.dump());
  const int job = CreateJob(g);
  Call("PUT", fmt::format("/api/v1/jobs/{}", job), json{{"description", "renamed"}}.dump());
  CreateUser("alice", {g});
  Call("POST", "/api/v1/tokens", json{{"name", "ci"}}.dump());
  const auto all =
      Exec("SELECT string_agg(coalesce(before::text, '') || coalesce(after::text, ''), ' ') FROM audit_log")
          [0][0]
              .as<std::string>();
  EXPECT_THAT(all, ::testing::Not(HasSubstr("group-secret-token")));
  EXPECT_THAT(all, ::testing::Not(HasSubstr(kUserPassword)));
  EXPECT_THAT(all, ::testing::Not(HasSubstr("argon2")));
  EXPECT_THAT(all, ::testing::Not(HasSubstr("cwt_")));
  auto r = Call("GET", fmt::format("/api/v1/audit?entity=job&entity_id={}", job));
  ASSERT_EQ(r.body.at("total"), 2);
  const auto& update = r.body.at("items")[0];
  EXPECT_EQ(update.at("action"), "job.update");
  EXPECT_EQ(update.at("username"), "admin");
  EXPECT_EQ(update.at("before").at("description"), "d");
  EXPECT_EQ(update.at("after").at("description"), "renamed");
  EXPECT_EQ(update.at("at_ms"), kT0);
  EXPECT_EQ(Call("GET", "/api/v1/audit?action=user.login").body.at("total"), 1);
}

TEST_F(ConsoleTest, PagesAreServedWithTheSecurityHeaders) {
  auto r = client_->Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->get_header_value("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(r->get_header_value("Content-Security-Policy"), HasSubstr("default-src 'self'"));
  EXPECT_THAT(r->get_header_value("Content-Security-Policy"), ::testing::Not(HasSubstr("unsafe-inline")));
  EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(r->get_header_value("Referrer-Policy"), "no-referrer");
  EXPECT_EQ(r->get_header_value("X-Frame-Options"), "DENY");
  EXPECT_THAT(r->body, ::testing::Not(HasSubstr("<script>"))) << "no inline script";
  r = client_->Get("/js/app.js");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->get_header_value("Content-Type"), HasSubstr("text/javascript"));
  for (const char* path :
       {"/nothing.js", "/js/../index.html", "/.hidden", "/js//app.js", "/vendor/%2e%2e/x"}) {
    r = client_->Get(path);
    ASSERT_TRUE(r);
    EXPECT_GE(r->status, 400) << path;
    EXPECT_LT(r->status, 500) << path;
  }
  r = client_->Get("/api/v1/nothing");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_THAT(r->body, HasSubstr("error")) << "API paths never fall through to the pages";
}

// --- every route: documented, and denying what it must -------------------------------------------------

// Every registered /api/v1 route appears in web/openapi.json with its method, and nothing more.
TEST_F(ConsoleTest, EveryRouteIsInTheOpenApiDocument) {
  const auto r = Call("GET", "/api/v1/openapi.json", Caller{});
  ASSERT_EQ(r.status, 200);
  const auto& paths = r.body.at("paths");
  std::set<std::string> documented;
  for (const auto& [path, ops] : paths.items()) {
    for (const auto& [method, op] : ops.items()) {
      documented.insert(fmt::format("{} {}", method, path));
      EXPECT_TRUE(op.contains("responses")) << method << " " << path;
    }
  }
  std::set<std::string> served;
  for (const auto& route : console_->routes) {
    std::string m = route.method;
    std::transform(m.begin(), m.end(), m.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    served.insert(fmt::format("{} {}", m, route.path));
  }
  EXPECT_GE(served.size(), 37u);
  EXPECT_EQ(served, documented);
}

TEST_F(ConsoleTest, EveryRouteDeniesStrangersUsersOutsideTheirGroupsAndCookiesWithoutCsrf) {
  const int mine = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  const int job = CreateJob(other);
  const auto log = AddRunningFire(job, other);
  const int alice_id = CreateUser("alice", {mine});
  const auto alice = Login("alice", kUserPassword);
  const int token_id = Call("POST", "/api/v1/tokens", json{{"name", "admin's"}}.dump()).body.at("id");

  struct Case {
    std::string method;
    std::string path;      // the template, as registered
    std::string concrete;  // with ids of `other`'s resources
    std::string body;
    int stranger;  // 401, or 200 for public routes
    int user;      // alice (USER on `mine`): 403 admin-only, 404 outside her groups, 0 = allowed
  };
  const auto id = [](auto v) { return std::to_string(v); };
  const std::string job_body =
      json{{"group_id", other}, {"description", "d"}, {"schedule_type", "NONE"}, {"handler", "h"}}.dump();
  const std::vector<Case> cases = {
      {"GET", "/api/v1/health", "/api/v1/health", "", 200, 0},
      {"GET", "/api/v1/openapi.json", "/api/v1/openapi.json", "", 200, 0},
      {"POST", "/api/v1/auth/login", "/api/v1/auth/login", "{}", 400, 0},
      {"POST", "/api/v1/auth/logout", "/api/v1/auth/logout", "", 401, 0},
      {"GET", "/api/v1/auth/me", "/api/v1/auth/me", "", 401, 0},
      {"GET", "/api/v1/groups", "/api/v1/groups", "", 401, 0},
      {"POST", "/api/v1/groups", "/api/v1/groups", R"({"app_name":"new-app","title":"t"})", 401, 403},
      {"GET", "/api/v1/groups/{id}", "/api/v1/groups/" + id(other), "", 401, 404},
      {"PUT", "/api/v1/groups/{id}", "/api/v1/groups/" + id(other), R"({"title":"x"})", 401, 403},
      {"DELETE", "/api/v1/groups/{id}", "/api/v1/groups/" + id(other), "", 401, 403},
      {"GET", "/api/v1/jobs", "/api/v1/jobs", "", 401, 0},
      {"POST", "/api/v1/jobs", "/api/v1/jobs", job_body, 401, 403},
      {"GET", "/api/v1/jobs/{id}", "/api/v1/jobs/" + id(job), "", 401, 404},
      {"PUT", "/api/v1/jobs/{id}", "/api/v1/jobs/" + id(job), R"({"param":"x"})", 401, 404},
      {"DELETE", "/api/v1/jobs/{id}", "/api/v1/jobs/" + id(job), "", 401, 404},
      {"POST", "/api/v1/jobs/{id}/start", "/api/v1/jobs/" + id(job) + "/start", "", 401, 404},
      {"POST", "/api/v1/jobs/{id}/stop", "/api/v1/jobs/" + id(job) + "/stop", "", 401, 404},
      {"POST", "/api/v1/jobs/{id}/trigger", "/api/v1/jobs/" + id(job) + "/trigger", "", 401, 404},
      {"POST", "/api/v1/jobs/{id}/copy", "/api/v1/jobs/" + id(job) + "/copy", "", 401, 404},
      {"GET", "/api/v1/jobs/{id}/glue", "/api/v1/jobs/" + id(job) + "/glue", "", 401, 404},
      {"GET", "/api/v1/logs", "/api/v1/logs", "", 401, 0},
      {"GET", "/api/v1/logs/{id}", "/api/v1/logs/" + id(log), "", 401, 404},
      {"GET", "/api/v1/logs/{id}/output", "/api/v1/logs/" + id(log) + "/output", "", 401, 404},
      {"POST", "/api/v1/logs/{id}/kill", "/api/v1/logs/" + id(log) + "/kill", "", 401, 404},
      {"POST", "/api/v1/logs/clear", "/api/v1/logs/clear", json{{"group_id", other}, {"keep_last", 0}}.dump(),
       401, 404},
      {"GET", "/api/v1/dashboard", "/api/v1/dashboard", "", 401, 0},
      {"POST", "/api/v1/schedules/preview", "/api/v1/schedules/preview", R"({"schedule_type":"NONE"})", 401,
       0},
      {"GET", "/api/v1/users", "/api/v1/users", "", 401, 403},
      {"POST", "/api/v1/users", "/api/v1/users", R"({"username":"mallory","password":"0123456789"})", 401,
       403},
      {"GET", "/api/v1/users/{id}", "/api/v1/users/" + id(alice_id), "", 401, 403},
      {"PUT", "/api/v1/users/{id}", "/api/v1/users/" + id(alice_id), R"({"role":"ADMIN"})", 401, 403},
      {"DELETE", "/api/v1/users/{id}", "/api/v1/users/" + id(alice_id), "", 401, 403},
      {"POST", "/api/v1/users/me/password", "/api/v1/users/me/password", "{}", 401, 0},
      {"GET", "/api/v1/tokens", "/api/v1/tokens?all=true", "", 401, 403},
      {"POST", "/api/v1/tokens", "/api/v1/tokens", R"({"name":"t"})", 401, 0},
      {"DELETE", "/api/v1/tokens/{id}", "/api/v1/tokens/" + id(token_id), "", 401, 404},
      {"GET", "/api/v1/audit", "/api/v1/audit", "", 401, 403},
  };
  // The walk covers every registered route: a new route must be added here.
  std::set<std::string> walked;
  std::set<std::string> served;
  for (const auto& c : cases)
    walked.insert(c.method + " " + c.path);
  for (const auto& route : console_->routes)
    served.insert(route.method + " " + route.path);
  EXPECT_EQ(walked, served);

  const auto changes = [this] {
    return Exec(
               "SELECT (SELECT count(*) FROM job) || '/' || (SELECT count(*) FROM job_group) || '/' ||"
               " (SELECT count(*) FROM app_user) || '/' || (SELECT count(*) FROM api_token) || '/' ||"
               " (SELECT count(*) FROM job_log) || '/' || (SELECT string_agg(role, ',' ORDER BY id) FROM "
               "app_user)")[0][0]
        .as<std::string>();
  };
  const auto before = changes();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.method + " " + c.concrete);
    // Strangers.
    const auto anon = Call(c.method, c.concrete, Caller{}, c.body);
    if (c.stranger == 401) {
      EXPECT_EQ(anon.status, 401);
    } else {
      EXPECT_NE(anon.status, 401);
    }
    if (c.stranger != 401) continue;
    // A cookie without the CSRF token on a state-changing method: 403 before anything happens.
    if (c.method != "GET") {
      EXPECT_EQ(Call(c.method, c.concrete, admin_, c.body, false).status, 403);
    }
    // Alice, a USER on `mine`, on `other`'s resources and admin-only routes.
    if (c.user != 0) {
      EXPECT_EQ(Call(c.method, c.concrete, alice, c.body).status, c.user);
    }
  }
  EXPECT_EQ(changes(), before) << "no denied request changed anything";
  // What alice may list holds nothing of `other`.
  EXPECT_EQ(Call("GET", "/api/v1/jobs", alice).body.at("total"), 0);
  EXPECT_EQ(Call("GET", "/api/v1/logs", alice).body.at("total"), 0);
  EXPECT_EQ(Call("GET", "/api/v1/groups", alice).body.at("items").size(), 1u);
  EXPECT_EQ(Call("GET", "/api/v1/tokens", alice).body.at("items").size(), 0u);
}

TEST_F(ConsoleTest, BadInputIsA4xxNamingTheFieldNeverA5xx) {
  const int g = CreateGroup("sample-app");
  const int job = CreateJob(g);
  const std::vector<std::pair<std::string, std::string>> posts = {
      {"/api/v1/auth/login", R"({"username":1})"},
      {"/api/v1/users", R"([1,2])"},
      {"/api/v1/users", R"({"username":"x","password":"0123456789","permitted_group_ids":[-1]})"},
      {"/api/v1/users/me/password", R"({"old_password":null})"},
      {"/api/v1/tokens", R"({"name":7})"},
      {"/api/v1/schedules/preview", R"({"schedule_type":"HOURLY"})"},
      {"/api/v1/schedules/preview", R"({"schedule_type":"CRON","from_ms":-5})"},
      {"/api/v1/logs/clear", R"({"job_id":"x","keep_last":1})"},
      {"/api/v1/logs/clear", R"({"older_than_days":99999999999999999999})"},
      {"/api/v1/users", "{not json"},
  };
  for (const auto& [path, body] : posts) {
    const auto r = Call("POST", path, admin_, body);
    EXPECT_GE(r.status, 400) << path << " " << body;
    EXPECT_LT(r.status, 500) << path << " " << body << " " << r.body.dump();
    EXPECT_TRUE(r.body.contains("error")) << path;
  }
  for (const char* path : {"/api/v1/audit?limit=0", "/api/v1/dashboard?days=x", "/api/v1/tokens?all=yes",
                           "/api/v1/users/abc", "/api/v1/jobs/abc/glue", "/api/v1/logs/1e3/output"}) {
    const auto r = Call("GET", path);
    EXPECT_GE(r.status, 400) << path;
    EXPECT_LT(r.status, 500) << path;
  }
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/jobs/{}/copy", job + 1000)).status, 404);
}

}  // namespace
