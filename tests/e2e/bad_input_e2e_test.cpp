// Bad input on loopback, against real processes: one cronwheel-admin and one cronwheel-executor (scripts
// off). The REST routes come from the admin's own GET /api/v1/openapi.json, so a new route is covered
// without editing this file; each (method, path) gets its path id as a real id, a missing id and tricks,
// then malformed JSON, a wrong type for every body field, unknown fields, invalid cron expressions and
// time zones, negative and huge numbers, SQL-looking strings, bodies at and over the 5 MiB limit, bad
// query parameters, wrong methods and missing or wrong credentials. The XXL-JOB endpoints of the admin
// (/api/registry, /api/registryRemove, /api/callback, also under /xxl-job-admin) and every executor
// endpoint (/beat, /idleBeat, /run, /trigger, /kill, /log) get the same kinds of input plus wrong
// access tokens; a few requests break HTTP framing itself.
//
// What must hold: a REST answer is a 4xx whose JSON body has a non-empty "error" (free-text query values
// may answer 2xx, never 5xx); an XXL-JOB endpoint answers HTTP 200 with a code-500 envelope whose msg says
// what is wrong ("The access token is wrong." for a token); both processes still run and answer their
// health checks afterwards; the database is as it was (every table's row count and content digest, minus
// the columns that move on their own, listed in Snapshot()); and the executor ran nothing. Each test prints
// its request counts per category with a histogram of the answers.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cluster.hpp"
#include "http_client.hpp"

namespace {

using namespace std::chrono_literals;
using namespace cwtest;
using nlohmann::json;

constexpr const char* kAdminPassword = "bad-input-admin-password";
constexpr std::size_t kLimit = std::size_t{5} * 1024 * 1024;  // admin and executor body limit
constexpr const char* kWrongToken = "The access token is wrong.";

// --- what an answer must look like -----------------------------------------------------------------------

enum class Expect {
  kRest4xx,       // 400..499, JSON object with a non-empty "error"
  kRestNot5xx,    // below 500 with a JSON body (free-text values that are valid input)
  kEnvelopeFail,  // HTTP 200, {"code":500,"msg":"<non-empty>"} (msg containing `contains`)
  kEnvelopeAny,   // HTTP 200 and an envelope (lenient XXL-JOB parsing: unknown fields are ignored)
  kNot5xx,        // raw HTTP framing: anything below 500, or the connection closed without an answer
};

struct Probe {
  std::string category;
  std::string method;
  std::string target;  // path and query, already encoded
  httplib::Headers headers;
  std::string body;
  Expect expect = Expect::kRest4xx;
  std::string contains;  // kEnvelopeFail: substring of msg
  std::string content_type = "application/json";
};

std::string Cut(const std::string& s, std::size_t n = 160) {
  std::string out = s.size() > n ? s.substr(0, n) + fmt::format("...({} bytes)", s.size()) : s;
  for (auto& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = '.';
  }
  return out;
}

// "" when the reply is what `p` expects, else why not.
std::string Verdict(const Probe& p, const HttpReply& r) {
  if (p.expect == Expect::kNot5xx) return r.status >= 500 ? "a 5xx" : "";
  if (r.status == 0) return "no HTTP answer: " + r.error;
  const auto body = r.Json();
  switch (p.expect) {
    case Expect::kRest4xx:
      if (r.status < 400 || r.status >= 500) return fmt::format("HTTP {} is not a 4xx", r.status);
      if (!body || !body->is_object() || !body->contains("error") || !body->at("error").is_string() ||
          body->at("error").get<std::string>().empty()) {
        return "the 4xx body has no non-empty \"error\"";
      }
      return "";
    case Expect::kRestNot5xx:
      if (r.status >= 500) return fmt::format("HTTP {}", r.status);
      if (!body) return "the body is not JSON";
      return "";
    case Expect::kEnvelopeFail:
    case Expect::kEnvelopeAny: {
      if (r.status != 200) return fmt::format("HTTP {} instead of 200 with an envelope", r.status);
      if (!body || !body->is_object() || !body->contains("code") || !body->at("code").is_number_integer()) {
        return "the body is not a {code,msg} envelope";
      }
      if (p.expect == Expect::kEnvelopeAny) return "";
      if (body->at("code") != 500)
        return fmt::format("envelope code {} instead of 500", body->at("code").dump());
      const auto& msg = body->value("msg", json());
      if (!msg.is_string() || msg.get<std::string>().empty()) return "the envelope has no message";
      if (!p.contains.empty() && msg.get<std::string>().find(p.contains) == std::string::npos) {
        return fmt::format("the message does not say '{}'", p.contains);
      }
      return "";
    }
    case Expect::kNot5xx:
      break;
  }
  return "";
}

// What each category received, and the answers.
class Tally {
 public:
  void Add(const std::string& category, const Probe& p, const HttpReply& r) {
    std::string key = r.status == 0 ? "closed" : std::to_string(r.status);
    if (p.expect == Expect::kEnvelopeFail || p.expect == Expect::kEnvelopeAny) {
      const auto body = r.Json();
      if (body && body->is_object() && body->contains("code")) key += "/code" + body->at("code").dump();
    }
    ++counts_[category][key];
    ++total_;
  }
  void Print(const std::string& title, std::chrono::steady_clock::duration took) const {
    std::printf("[%s] %d requests in %.1f s\n", title.c_str(), total_,
                std::chrono::duration<double>(took).count());
    for (const auto& [category, histogram] : counts_) {
      int n = 0;
      std::string h;
      for (const auto& [status, count] : histogram) {
        n += count;
        h += fmt::format(" {}x{}", status, count);
      }
      std::printf("  %-15s %5d:%s\n", category.c_str(), n, h.c_str());
    }
  }
  [[nodiscard]] int total() const { return total_; }

 private:
  std::map<std::string, std::map<std::string, int>> counts_;
  int total_ = 0;
};

// --- values ---------------------------------------------------------------------------------------------

// Bodies that are not JSON, or not the JSON object every body must be. None of them is a valid request.
std::vector<std::string> MalformedBodies() {
  std::vector<std::string> out = {
      "{",
      "}",
      "{\"a\":",
      "{\"a\":}",
      "{'a':1}",
      "{a:1}",
      "not json",
      "[1,2",
      "{\"a\":1}garbage",
      "{\"a\":1,}",
      "{\"a\":NaN}",
      "{\"a\":Infinity}",
      "{\"a\":-}",
      "{\"a\":0x10}",
      "{\"a\":01}",
      "{\"a\":.5}",
      "{\"a\":1e400}",
      "{\"a\":-1e400}",
      "/* comment */ {}",
      "\xEF\xBB\xBF{\"a\":",             // a byte-order mark before broken JSON
      "{\"a\":\"\xFF\xFE\"}",            // invalid UTF-8 in a string
      "{\"a\":\"\xC0\xAE\xC0\xAE\"}",    // over-long UTF-8 ("..")
      R"({"a":"\ud800"})",               // a lone surrogate escape
      std::string("{\"a\":\"\0\"}", 8),  // a raw NUL in a string
      std::string("{\0}", 3),
      R"({"a":"unterminated)",
      "\"a string\"",
      "42",
      "-1e400",
      "null",
      "true",
      "[]",
      "[{}]",
      " ",
  };
  // Deep nesting: 100 000 arrays in an object field, and 100 000 arrays alone.
  out.push_back("{\"a\":" + std::string(100'000, '[') + std::string(100'000, ']') + "}");
  out.push_back(std::string(100'000, '[') + std::string(100'000, ']'));
  out.emplace_back(100'000, '{');
  return out;
}

const std::vector<std::string> kSqlStrings = {
    "'; DROP TABLE job; --",      "1 OR 1=1", "' OR '1'='1", "admin'--", "1; DELETE FROM job_group",
    "$$; DROP TABLE job_log; $$",
};

// Raw JSON numbers (and number-like strings) for integer fields; those inside a field's range are skipped.
const std::vector<std::string> kNumbers = {
    "-1",
    "0",
    "2147483648",
    "-2147483649",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "99999999999999999999999",
    "1e308",
    "-1e308",
    "1e400",
    "0.5",
    "-0.0",
    "1E2",
    "4.0",
    "\"NaN\"",
    "\"Infinity\"",
    "\"-1\"",
    "\"1e3\"",
    "\"0x10\"",
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<std::int64_t> PlainInteger(const std::string& raw) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec != std::errc{} || end != raw.data() + raw.size()) return std::nullopt;
  return v;
}

// The valid range of an integer field or query parameter: the document's minimum/maximum, else what the
// server enforces (ids are positive int32; a body's from_ms is an instant up to the year 9999).
std::pair<std::int64_t, std::int64_t> Range(const std::string& name, const json& schema, bool in_query) {
  static const std::map<std::string, std::pair<std::int64_t, std::int64_t>> kKnown = {
      {"group_id", {1, INT32_MAX}},
      {"job_id", {1, INT32_MAX}},
      {"permitted_group_ids", {1, INT32_MAX}},
      {"child_job_ids", {1, INT32_MAX}},
      {"from_ms", {0, INT64_MAX}},
      {"to_ms", {0, INT64_MAX}},
      {"offset", {0, INT32_MAX}},
      {"from_line", {1, INT32_MAX}},
      {"keep_last", {0, 100'000'000}},
      {"count", {1, 100}},
  };
  std::pair<std::int64_t, std::int64_t> r{INT32_MIN, INT32_MAX};
  if (auto it = kKnown.find(name); it != kKnown.end()) r = it->second;
  if (name == "from_ms" && !in_query) r = {0, 253'402'300'799'000};
  if (schema.contains("minimum")) r.first = schema.at("minimum").get<std::int64_t>();
  if (schema.contains("maximum")) r.second = schema.at("maximum").get<std::int64_t>();
  return r;
}

// Values of other JSON types than `type`.
std::vector<json> WrongTypes(const std::string& type) {
  if (type == "string") return {123, true, json::array(), json::object(), 1.5};
  if (type == "integer") return {"1", 1.5, true, json::array(), json::object(), "abc"};
  if (type == "boolean") return {"true", 1, "yes", json::array(), json::object()};
  if (type == "array") return {"x", json::object(), 7, true};
  return {json::object()};
}

// Path segments that are not ids (already encoded). `real` is a real id of the resource.
std::vector<std::string> IdTricks(std::int64_t real) {
  const auto r = std::to_string(real);
  std::string fullwidth;
  for (char c : r)
    fullwidth += fmt::format("%EF%BC%{:02X}", 0x90 + (c - '0'));  // U+FF10.. (fullwidth digits)
  return {"0",
          "-1",
          "-0",
          "%2B" + r,  // +<id>
          r + ".0",
          r + "e0",
          fmt::format("0x{:x}", real),
          r + "%3B2",  // <id>;2
          r + ";2",
          r + "%00",
          "%00",
          "%20" + r,
          r + "%20",
          fullwidth,
          "..",
          "%2e%2e",
          "..%2F" + r,
          "%2e%2e%2f" + r,
          ".",
          "%C0%AE%C0%AE",
          "%",
          "%ZZ",
          "2147483648",
          "9223372036854775808",
          "99999999999999999999999",
          "1e3",
          "NaN",
          "abc",
          "%27%20OR%20%271%27%3D%271",            // ' OR '1'='1
          r + "%20OR%201%3D1",                    // <id> OR 1=1
          "%27%3B%20DROP%20TABLE%20job%3B%20--",  // '; DROP TABLE job; --
          std::string(3000, '1'),
          ""};
}

// Query values (encoded) for a parameter of the given schema; `valid_if_empty` for parameters that read
// "" as absent.
std::vector<std::pair<std::string, Expect>> QueryValues(const std::string& name, const json& schema) {
  std::vector<std::pair<std::string, Expect>> out;
  const auto type = schema.value("type", "string");
  if (type == "integer") {
    const auto [lo, hi] = Range(name, schema, true);
    for (const std::string v : {"abc", "-1", "0", "2147483648", "9223372036854775808", "99999999999999999999",
                                "1e3", "1.0", "0x10", "", "%20", "1%20", "1%3B2", "%EF%BC%91", "NaN",
                                "%27%3B%20DROP%20TABLE%20job%3B%20--", "1%20OR%201%3D1", "%00", "%2B1"}) {
      if (const auto n = PlainInteger(v); n && *n >= lo && *n <= hi) continue;  // a valid value
      out.emplace_back(v, Expect::kRest4xx);
    }
  } else if (type == "boolean") {
    for (const std::string& v :
         std::vector<std::string>{"yes", "1", "TRUE", "%00", "true%20", "%27%20OR%201%3D1"})
      out.emplace_back(v, Expect::kRest4xx);
    out.emplace_back("", Expect::kRestNot5xx);  // some read "" as absent
  } else if (schema.contains("enum")) {
    for (const std::string& v :
         std::vector<std::string>{"", "running", "%27%3B%20DROP%20TABLE%20job%3B%20--", "SUCCESS%00"})
      out.emplace_back(v, Expect::kRest4xx);
  } else {
    // Free text is valid input: it must not break the query or the server.
    for (const std::string& v :
         std::vector<std::string>{"%27%3B%20DROP%20TABLE%20job%3B%20--", "1%20OR%201%3D1", "%25", "_%25_",
                                  "%00", "%5C", "%27", std::string(10'000, 'x')})
      out.emplace_back(v, Expect::kRestNot5xx);
  }
  return out;
}

// --- the fixture: one admin, one executor, state to aim at, a snapshot -------------------------------------

class BadInputE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // A server may close a connection while a large body is still being written to it.
    std::signal(SIGPIPE, SIG_IGN);
    cluster_ = new Cluster(
        {.admins = 1, .executors = 1, .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kAdminPassword}}});
    HttpCaller http(cluster_->admin_port(0));
    session_ = new cwtest::Session(cwtest::Login(http, "admin", kAdminPassword).value());
    const auto as_admin = cwtest::SessionHeaders(*session_);
    auto r = http.Send("POST", "/api/v1/tokens", as_admin, R"({"name":"bad-input","scope":"admin"})");
    ASSERT_EQ(r.status, 201) << r.body;
    bearer_ = r.Json()->at("token").get<std::string>();
    ids_["token"] = r.Json()->at("id").get<std::int64_t>();
    ids_["user"] = session_->user_id;
    // The executors' group, and a disabled job that only runs when triggered.
    r = http.Send("POST", "/api/v1/groups", as_admin, R"({"app_name":"e2e-app","title":"bad input"})");
    ASSERT_EQ(r.status, 201) << r.body;
    ids_["group"] = r.Json()->at("id").get<std::int64_t>();
    r = http.Send("POST", "/api/v1/jobs", as_admin,
                  json{{"group_id", ids_["group"]},
                       {"description", "target of bad input"},
                       {"schedule_type", "NONE"},
                       {"handler", "noopJobHandler"}}
                      .dump());
    ASSERT_EQ(r.status, 201) << r.body;
    ids_["job"] = r.Json()->at("id").get<std::int64_t>();
    r = http.Send("POST", "/api/v1/alert-channels", as_admin,
                  json{{"name", "bad input"}, {"kind", "EMAIL"}, {"target", "ops@example.com"}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
    ids_["channel"] = r.Json()->at("id").get<std::int64_t>();
    r = http.Send("POST", "/api/v1/calendars", as_admin,
                  json{{"name", "bad input"}, {"days", {"2026-12-25"}}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
    ids_["calendar"] = r.Json()->at("id").get<std::int64_t>();
    // A workflow over the job, and an ended run of it (written directly: a triggered one would run the job).
    r = http.Send("POST", "/api/v1/workflows", as_admin,
                  json{{"group_id", ids_["group"]},
                       {"name", "bad input"},
                       {"nodes", {{{"key", "a"}, {"job_id", ids_["job"]}}}}}
                      .dump());
    ASSERT_EQ(r.status, 201) << r.body;
    ids_["workflow"] = r.Json()->at("id").get<std::int64_t>();
    // An ended run of it, written directly (a triggered one would run the job), started now: log retention
    // deletes ended runs that started before its cutoff.
    const auto started = Cluster::NowMs();
    ids_["workflow_run"] = cluster_->Scalar(fmt::format(
        "WITH r AS (INSERT INTO workflow_run (workflow_id, group_id, trigger_type, scheduled_ms, graph, "
        "state,"
        " start_ms, end_ms) SELECT id, group_id, 'MANUAL', {1}, jsonb_build_object('nodes', nodes, 'edges',"
        " edges), 'FAILED', {1}, {1} FROM workflow WHERE id = {0} RETURNING id),"
        " n AS (INSERT INTO workflow_run_node (run_id, key, job_id, state) SELECT id, 'a', {2}, 'FAILED' "
        "FROM r)"
        " SELECT id FROM r",
        ids_["workflow"], started, ids_["job"]));
    // A finished fire (accepted by the executor, succeeded): its output comes from the executor.
    const auto now = Cluster::NowMs();
    ids_["log"] = cluster_->Scalar(fmt::format(
        "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, executor_address, "
        "executor_handler,"
        " trigger_ms, trigger_code, handle_ms, handle_code, alarm_status, created_ms)"
        " VALUES ({}, {}, 'MANUAL', {}, '{}', 'noopJobHandler', {}, 200, {}, 200, 1, {}) RETURNING id",
        ids_["job"], ids_["group"], now, cluster_->executor_address(0), now, now, now));
  }
  static void TearDownTestSuite() {
    delete session_;
    session_ = nullptr;
    delete cluster_;
    cluster_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(cluster_, nullptr);
    before_ = Snapshot();
    started_ = std::chrono::steady_clock::now();
  }

  // Both processes alive and healthy, the database unchanged, nothing run; then the counts.
  void TearDown() override {
    const auto took = std::chrono::steady_clock::now() - started_;
    EXPECT_TRUE(cluster_->admin(0).running()) << cluster_->admin(0).LogTail();
    EXPECT_TRUE(cluster_->executor(0).running()) << cluster_->executor(0).LogTail();
    HttpCaller admin(cluster_->admin_port(0));
    const auto health = admin.Send("GET", "/api/v1/health");
    EXPECT_EQ(health.status, 200) << health.body;
    HttpCaller executor(cluster_->executor_port(0));
    const auto beat = executor.Send("POST", "/beat", {{"XXL-JOB-ACCESS-TOKEN", cluster_->token()}}, "");
    EXPECT_EQ(beat.status, 200);
    EXPECT_NE(beat.body.find("\"code\":200"), std::string::npos) << beat.body;
    const auto after = Snapshot();
    for (const auto& [table, digest] : before_) {
      EXPECT_EQ(after.at(table), digest) << "table " << table << " changed";
    }
    EXPECT_EQ(after.size(), before_.size());
    EXPECT_TRUE(cluster_->ExecutedLogIds().empty()) << "the executor ran a job";
    tally_.Print(::testing::UnitTest::GetInstance()->current_test_info()->name(), took);
    if (failures_ > kShownFailures) {
      std::printf("  (%d failures, the first %d shown)\n", failures_, kShownFailures);
    }
  }

  // table -> "<rows> <md5 of the rows>", over the columns that do not move by themselves.
  static std::map<std::string, std::string> Snapshot() {
    // Columns and rows that change without any request, each for a reason:
    static const std::map<std::string, std::set<std::string>> kMoving = {
        {"admin_node", {"heartbeat_ms", "lease_until_ms"}},  // the admin renews its lease every second
        // the executor's heartbeat (every 2 s here), with its clock measured again each time; and what the
        // executor API's probes register for its address (an XXL-JOB body: no runAt, no clock) until the next
        {"executor_registry", {"updated_ms", "run_at", "clock_offset_ms", "clock_error_ms"}},
        {"api_token", {"last_used_ms"}},                       // recorded at most once a minute per token
        {"user_session", {"expires_ms"}},                      // the sliding idle expiry of the session
        {"schedule_partition", {"owner_node", "scanned_ms"}},  // every scan stamps the partitions it held
    };
    // log_report holds per-day counts the admin's report task recomputes from job_log (digested here)
    // and stamps with updated_ms on every run.
    static const std::set<std::string> kSkipped = {"log_report"};
    // A failed login is recorded in the audit log by design: that row is the audit of the bad input.
    static const std::map<std::string, std::string> kRowFilter = {
        {"audit_log", "action <> 'user.login_failed'"}};
    std::map<std::string, std::string> out;
    for (const auto& t : cluster_->Exec("SELECT table_name FROM information_schema.tables WHERE"
                                        " table_schema = 'public' AND table_type = 'BASE TABLE'")) {
      const auto table = t[0].as<std::string>();
      if (kSkipped.contains(table)) continue;
      std::string columns;
      for (const auto& c :
           cluster_->Exec(fmt::format("SELECT column_name FROM information_schema.columns WHERE"
                                      " table_schema = 'public' AND table_name = '{}'"
                                      " ORDER BY ordinal_position",
                                      table))) {
        const auto column = c[0].as<std::string>();
        if (kMoving.contains(table) && kMoving.at(table).contains(column)) continue;
        columns += (columns.empty() ? "\"" : ", \"") + column + "\"";
      }
      const auto filter = kRowFilter.contains(table) ? " WHERE " + kRowFilter.at(table) : std::string();
      const auto row = cluster_->Exec(
          fmt::format("SELECT count(*) || ' ' || coalesce(md5(string_agg(x::text, ',' ORDER BY x::text)), '')"
                      " FROM (SELECT {} FROM \"{}\"{}) x",
                      columns, table, filter));
      out[table] = row[0][0].as<std::string>();
    }
    return out;
  }

  // Sends a probe and checks the answer.
  HttpReply Run(HttpCaller& http, const Probe& p) {
    auto r = http.Send(p.method, p.target, p.headers, p.body, p.content_type);
    tally_.Add(p.category, p, r);
    if (const auto why = Verdict(p, r); !why.empty()) {
      if (++failures_ <= kShownFailures) {
        ADD_FAILURE() << "[" << p.category << "] " << p.method << " " << Cut(p.target, 120)
                      << " body=" << Cut(p.body) << ": " << why << "; answer " << r.status << " "
                      << Cut(r.body, 300);
      } else {
        ADD_FAILURE() << "[" << p.category << "] " << p.method << " " << Cut(p.target, 60)
                      << " body=" << Cut(p.body, 80) << ": " << why;
      }
    }
    return r;
  }

  static httplib::Headers Bearer() { return cwtest::BearerHeaders(bearer_); }
  static httplib::Headers Token(const std::string& token) { return {{"XXL-JOB-ACCESS-TOKEN", token}}; }
  // add(category, method, target, body, expect, contains = "", headers = {}) for an XXL-JOB protocol
  // endpoint: appends a probe to `probes`, with the right token unless it has headers of its own.
  static auto ProtocolProbeAdder(std::vector<Probe>& probes, const std::string& token) {
    return [&probes, token](const std::string& category, const std::string& method, const std::string& target,
                            const std::string& body, Expect expect, const std::string& contains = "",
                            const httplib::Headers& headers = {}) {
      probes.push_back(Probe{.category = category,
                             .method = method,
                             .target = target,
                             .headers = headers.empty() ? Token(token) : headers,
                             .body = body,
                             .expect = expect,
                             .contains = contains});
    };
  }

  static constexpr int kShownFailures = 40;
  static Cluster* cluster_;
  static cwtest::Session* session_;
  static std::string bearer_;
  static std::map<std::string, std::int64_t> ids_;

  std::map<std::string, std::string> before_;
  std::chrono::steady_clock::time_point started_;
  Tally tally_;
  int failures_ = 0;
};

Cluster* BadInputE2E::cluster_ = nullptr;
cwtest::Session* BadInputE2E::session_ = nullptr;
std::string BadInputE2E::bearer_;
std::map<std::string, std::int64_t> BadInputE2E::ids_;

// --- the REST API, route by route from the OpenAPI document ----------------------------------------------

struct Route {
  std::string method;  // GET, POST, ...
  std::string path;    // template, e.g. /api/v1/jobs/{id}/start
  bool is_public = false;
  std::string schema;  // request body schema name ("" = none)
  bool body_required = false;
  json query;  // [{name, schema}]
};

TEST_F(BadInputE2E, EveryRestRouteAnswersBadInputWithA4xxAndChangesNothing) {
  HttpCaller http(cluster_->admin_port(0));
  const auto doc_reply = http.Send("GET", "/api/v1/openapi.json");
  ASSERT_EQ(doc_reply.status, 200);
  const auto doc = doc_reply.Json().value();
  const auto& schemas = doc.at("components").at("schemas");
  std::vector<Route> routes;
  for (const auto& [path, ops] : doc.at("paths").items()) {
    for (const auto& [method, op] : ops.items()) {
      Route r{.method = method, .path = path};
      std::transform(r.method.begin(), r.method.end(), r.method.begin(), ::toupper);
      r.is_public = op.contains("security") && op.at("security").empty();
      if (op.contains("requestBody")) {
        const auto ref = op.at("requestBody")
                             .at("content")
                             .at("application/json")
                             .at("schema")
                             .at("$ref")
                             .get<std::string>();
        r.schema = ref.substr(ref.rfind('/') + 1);
        r.body_required = op.at("requestBody").value("required", false);
      }
      r.query = json::array();
      for (const auto& p : op.value("parameters", json::array())) {
        if (p.at("in") == "query") r.query.push_back(p);
      }
      routes.push_back(std::move(r));
    }
  }
  ASSERT_GE(routes.size(), 37u) << "the OpenAPI document lists fewer routes than the admin serves";

  // Which real id a path's {id} names.
  const auto resource = [](const std::string& path) {
    for (const auto& [prefix, name] :
         std::vector<std::pair<std::string, std::string>>{{"/api/v1/groups/", "group"},
                                                          {"/api/v1/jobs/", "job"},
                                                          {"/api/v1/logs/", "log"},
                                                          {"/api/v1/users/", "user"},
                                                          {"/api/v1/tokens/", "token"},
                                                          {"/api/v1/alert-channels/", "channel"},
                                                          {"/api/v1/calendars/", "calendar"},
                                                          {"/api/v1/workflows/", "workflow"},
                                                          {"/api/v1/workflow-runs/", "workflow_run"}}) {
      if (path.starts_with(prefix)) return name;
    }
    return std::string();
  };
  const auto with_id = [](const std::string& path, const std::string& id) {
    const auto at = path.find("{id}");
    return at == std::string::npos ? path : path.substr(0, at) + id + path.substr(at + 4);
  };
  // A request body that is valid for the route: each probe breaks exactly one thing in it.
  const auto base_body = [&](const Route& r) -> json {
    const bool update = r.method == "PUT";
    if (r.schema == "LoginRequest") return {{"username", "admin"}, {"password", kAdminPassword}};
    if (r.schema == "CliLoginRequest") {
      return {{"port", 9}, {"state", "s"}, {"code_challenge", std::string(43, 'c')}, {"name", "bad-input"}};
    }
    if (r.schema == "CliTokenRequest") return {{"code", "c"}, {"code_verifier", std::string(43, 'v')}};
    if (r.schema == "AuthPolicyChange") return {{"require_sso", false}};
    if (r.schema == "UserCreate") {
      return {{"username", "bad-input-user"},
              {"password", "bad-input-password-1"},
              {"role", "USER"},
              {"permitted_group_ids", {ids_["group"]}}};
    }
    if (r.schema == "UserUpdate") return json::object();
    if (r.schema == "PasswordChange")
      return {{"old_password", kAdminPassword}, {"new_password", "another-password-2"}};
    if (r.schema == "TokenCreate") return {{"name", "bad-input-2"}};
    if (r.schema == "PreviewRequest") {
      return {{"schedule_type", "CRON"},
              {"schedule_conf", "0 0 * * * ?"},
              {"time_zone", "UTC"},
              {"count", 5},
              {"from_ms", 0}};
    }
    if (r.schema == "GroupInput") {
      return update ? json::object()
                    : json{{"app_name", "bad-input-app"},
                           {"title", "t"},
                           {"address_type", "AUTO"},
                           {"addresses", json::array()}};
    }
    if (r.schema == "JobInput") {
      json j{{"schedule_type", "CRON"}, {"schedule_conf", "0 0 * * * ?"}, {"time_zone", "UTC"}};
      if (!update) {
        j.update({{"group_id", ids_["group"]},
                  {"description", "bad input"},
                  {"handler", "noopJobHandler"},
                  {"enabled", false}});
      }
      return j;
    }
    if (r.schema == "TriggerRequest") return json::object();
    // A request that got through would stop the job.
    if (r.schema == "BulkRequest") return {{"action", "STOP"}, {"job_ids", {ids_["job"]}}};
    // An hour ahead: a request that got through would be a new run_once row.
    if (r.schema == "RunOnceRequest") return {{"delay_ms", 3'600'000}, {"param", "p"}};
    // The group's executor: a request that got through would drain it.
    if (r.schema == "DrainRequest") return {{"address", cluster_->executor_address(0)}};
    // A request that got through would be a new channel, or change the test's one.
    if (r.schema == "AlertChannelInput") {
      return update ? json::object()
                    : json{{"name", "bad-input-channel"}, {"kind", "EMAIL"}, {"target", "ops@example.com"}};
    }
    // A request that got through would be a new calendar, or change the test's one.
    if (r.schema == "CalendarInput") {
      return update ? json::object() : json{{"name", "bad-input-calendar"}, {"days", {"2026-12-25"}}};
    }
    // A request that got through would be a new workflow, or change the test's one.
    if (r.schema == "WorkflowInput") {
      json w{{"schedule_type", "CRON"}, {"schedule_conf", "0 0 * * * ?"}, {"time_zone", "UTC"}};
      if (!update) {
        w.update({{"group_id", ids_["group"]},
                  {"name", "bad-input-workflow"},
                  {"nodes", {{{"key", "a"}, {"job_id", ids_["job"]}}}},
                  {"edges", json::array()},
                  {"enabled", false}});
      }
      return w;
    }
    // A request that got through would be a new run.
    if (r.schema == "WorkflowTriggerRequest") return {{"param", "p"}};
    if (r.schema == "LogClear") return {{"older_than_days", 36500}, {"job_id", ids_["job"]}};
    // A request that got through would link the user to an LDAP identity.
    if (r.schema == "IdentityLink") return {{"source", "ldap"}, {"subject", "bad-input-subject"}};
    ADD_FAILURE() << "no valid base body for schema " << r.schema << ": add one";
    return json::object();
  };
  // String fields whose values are checked (enums, names, addresses, schedules): a SQL-looking string in
  // them is invalid. Free-text fields (description, password, ...) accept any text and are left out.
  const std::set<std::string> checked_strings = {
      "app_name", "addresses", "schedule_conf", "time_zone", "alarm_email", "alarm_webhook", "username",
      "address",  "tags",      "target",        "ics",       "ics_from",    "ics_to"};

  std::vector<Probe> probes;
  const auto add = [&](const std::string& category, const std::string& method, const std::string& target,
                       const std::string& body, Expect expect = Expect::kRest4xx,
                       const httplib::Headers& headers = {}) {
    Probe p{.category = category, .method = method, .target = target, .body = body, .expect = expect};
    p.headers = headers.empty() ? Bearer() : headers;
    probes.push_back(std::move(p));
  };

  std::set<std::string> method_probed;
  for (const auto& route : routes) {
    const auto name = resource(route.path);
    const bool has_id = route.path.find("{id}") != std::string::npos;
    const auto real = has_id ? std::to_string(ids_.at(name)) : std::string();
    const auto target = with_id(route.path, real);
    const bool mutating = route.method != "GET";
    const json base = route.schema.empty() ? json() : base_body(route);
    const auto base_text = route.schema.empty() ? std::string() : base.dump();

    // Credentials: none, wrong or misplaced; a session without or with a wrong CSRF token. Each carries
    // the valid base body, so a request that got through would change something.
    if (!route.is_public) {
      const std::vector<httplib::Headers> wrong = {
          {{"X-No-Credentials", "1"}},
          {{"Authorization", "Bearer cwt_wrong-token-000000000000000000000000"}},
          {{"Authorization", "Bearer "}},
          {{"Authorization", "Bearer"}},
          {{"Authorization", "Basic YWRtaW46YmFkLWlucHV0LWFkbWluLXBhc3N3b3Jk"}},
          {{"Authorization", "Bearer " + bearer_ + "x"}},
          {{"Authorization", "Bearer " + std::string(10'000, 'a')}},
          {{"Authorization",
            "Bearer " + cluster_->token()}},  // the executors' access token is not an API token
          {{"Cookie", "cw_session=forged"}, {"X-CSRF-Token", session_->csrf}},
          {{"Cookie", "cw_session="}},
          {{"Authorization", "Bearer cwt_wrong"},
           {"Cookie", session_->cookie},
           {"X-CSRF-Token", session_->csrf}},
      };
      for (const auto& h : wrong)
        add("auth", route.method, target, base_text, Expect::kRest4xx, h);
      if (mutating) {
        add("auth", route.method, target, base_text, Expect::kRest4xx,
            cwtest::SessionHeaders(*session_, false));
        add("auth", route.method, target, base_text, Expect::kRest4xx,
            {{"Cookie", session_->cookie}, {"X-CSRF-Token", session_->csrf + "x"}});
        add("auth", route.method, target, base_text, Expect::kRest4xx,
            {{"Cookie", session_->cookie}, {"X-CSRF-Token", ""}});
      }
    }

    // Path ids: missing and tricks. The valid base body goes along; the id must stop the request.
    if (has_id) {
      add("path-id", route.method, with_id(route.path, std::to_string(ids_.at(name) + 1'000'000)), base_text);
      for (const auto& trick : IdTricks(ids_.at(name)))
        add("path-id", route.method, with_id(route.path, trick), base_text);
    }

    // Query parameters.
    for (const auto& q : route.query) {
      const auto qn = q.at("name").get<std::string>();
      for (const auto& [value, expect] : QueryValues(qn, q.at("schema"))) {
        add("query", route.method, fmt::format("{}?{}={}", target, qn, value), base_text, expect);
      }
    }
    if (!route.query.empty()) {
      add("query", route.method, target + "?limit=1&limit=abc&unknown=1&%ZZ=%ZZ&=&&", base_text,
          Expect::kRestNot5xx);
    }

    // Methods the path does not have (a missing id, so a route that exists under another method cannot act).
    if (method_probed.insert(route.path).second) {
      std::set<std::string> documented;
      for (const auto& other : routes) {
        if (other.path == route.path) documented.insert(other.method);
      }
      const auto missing = with_id(route.path, "999999999");
      for (const std::string& m : std::vector<std::string>{"GET", "POST", "PUT", "DELETE", "PATCH"}) {
        if (documented.contains(m)) continue;
        // /api/v1/logs/clear is also /api/v1/logs/{id} for GET: a missing log either way.
        add("method", m, missing, "{}");
      }
    }

    // Bodies: only on routes that read one, with the real id so the body is what stops the request.
    if (route.schema.empty()) {
      if (route.method == "GET") {
        // A body where none belongs is refused (httplib would read it as the next request). A small one
        // gets the 400; for one over the limit the server answers at once and closes the connection,
        // so a client still writing it sees the connection reset: anything but a 5xx.
        add("oversize", "GET", target, "{}", Expect::kRest4xx);
        add("oversize", "GET", target, std::string(kLimit + 1, ' '), Expect::kNot5xx);
      }
      continue;
    }
    for (const auto& text : MalformedBodies())
      add("malformed-json", route.method, target, text);
    if (route.body_required) add("malformed-json", route.method, target, "");
    add("oversize", route.method, target, R"({"x":")" + std::string(kLimit + 1 - 8, 'a') + "\"}");
    add("oversize", route.method, target,
        R"({"x":")" + std::string(kLimit - 8, 'a') + "\"}");  // at the limit

    const auto& props = schemas.at(route.schema).value("properties", json::object());
    std::set<std::string> required;
    for (const auto& n : schemas.at(route.schema).value("required", json::array()))
      required.insert(n.get<std::string>());
    for (const auto& extra : {json{{"unknown_field", 1}}, json{{"id", 1}}, json{{"", 0}},
                              json{{"__proto__", json::object()}}, json{{"UNKNOWN", nullptr}}}) {
      auto b = base;
      b.update(extra);
      add("unknown-field", route.method, target, b.dump());
    }
    if (!base.empty()) {
      // The same field twice, the second of the wrong type: the last one counts, and is refused.
      auto text = base.dump();
      text.insert(text.size() - 1, fmt::format(R"(,"{}":{{"x":1}})", base.begin().key()));
      add("unknown-field", route.method, target, text);
    }
    for (const auto& [field, schema] : props.items()) {
      const auto type = schema.value("type", "string");
      for (const auto& wrong : WrongTypes(type)) {
        auto b = base;
        b[field] = wrong;
        add("wrong-type", route.method, target, b.dump());
      }
      if (required.contains(field)) {
        auto b = base;
        b[field] = nullptr;
        add("wrong-type", route.method, target, b.dump());
        b.erase(field);
        add("wrong-type", route.method, target, b.dump());
      }
      const bool int_array = type == "array" && schema.at("items").value("type", "") == "integer";
      if (type == "integer" || int_array) {
        const auto [lo, hi] = Range(field, schema, false);
        for (const auto& raw : kNumbers) {
          if (const auto n = PlainInteger(raw); n && *n >= lo && *n <= hi) continue;
          auto b = base;
          b[field] = "@@NUMBER@@";
          auto text = b.dump();
          text.replace(text.find("\"@@NUMBER@@\""), 12, int_array ? "[" + raw + "]" : raw);
          add("number", route.method, target, text);
        }
        if (int_array) {
          for (const auto& e : {json("1"), json::object(), json(1.5), json(true), json(nullptr)}) {
            auto b = base;
            b[field] = json::array({e});
            add("wrong-type", route.method, target, b.dump());
          }
        }
      }
      if (type == "array" && schema.at("items").value("type", "") == "string") {
        for (const auto& e : {json(1), json(nullptr), json::array()}) {
          auto b = base;
          b[field] = json::array({e});
          add("wrong-type", route.method, target, b.dump());
        }
      }
      if (schema.contains("enum") || checked_strings.contains(field)) {
        for (const auto& s : kSqlStrings) {
          auto b = base;
          b[field] = type == "array" ? json::array({s}) : json(s);
          add("sql", route.method, target, b.dump());
        }
        if (schema.contains("enum")) {
          // The first value in the other case (enums are matched exactly: XXL-JOB's upper-case names, the
          // token scopes' lower-case ones).
          const auto first = schema.at("enum")[0].get<std::string>();
          auto other_case = Lower(first);
          if (other_case == first) {
            std::transform(other_case.begin(), other_case.end(), other_case.begin(),
                           [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
          }
          for (const auto& s : {std::string(""), std::string(" "), std::string("x"), other_case, first + " ",
                                first + std::string(1, '\0')}) {
            auto b = base;
            b[field] = s;
            add("sql", route.method, target, b.dump());
          }
        }
      }
    }
    // Schedules: invalid cron expressions and fixed intervals, unknown time zones.
    if (props.contains("schedule_conf")) {
      for (const std::string& cron : std::vector<std::string>{"",
                                                              " ",
                                                              "*/5 * * * *",
                                                              "0 0 0 1 1 ? 2030 x",
                                                              "60 * * * * ?",
                                                              "* 60 * * * ?",
                                                              "0 0 24 * * ?",
                                                              "0 0 0 32 * ?",
                                                              "0 0 0 0 * ?",
                                                              "0 0 0 * 13 ?",
                                                              "0 0 0 * 0 ?",
                                                              "0 0 0 ? * 8",
                                                              "0 0 12 * * *",
                                                              "0 0 12 ? * ?",
                                                              "0 0/0 * * * ?",
                                                              "*/-1 * * * * ?",
                                                              "0 0 0 L-31 * ?",
                                                              "0 0 0 ? * MON#6",
                                                              "0 0 0 ? * FOO",
                                                              "0 0 0 1 JANX ?",
                                                              "0 0 0 1-5W * ?",
                                                              "0 0 12 * * ? 1969",
                                                              "0 0 12 * * ? 99999",
                                                              "0 0 12 * * ? 2010-2005",
                                                              "99999999999999999999 * * * * ?",
                                                              "@reboot",
                                                              "0 0 12 * * ?\n0",
                                                              std::string("0 0 12 * * ?\0", 13),
                                                              "0 1,,2 12 * * ?",
                                                              std::string(300, '*')}) {
        auto b = base;
        b["schedule_type"] = "CRON";
        b["schedule_conf"] = cron;
        add("cron", route.method, target, b.dump());
      }
      for (const std::string& type : std::vector<std::string>{"FIX_RATE", "FIX_DELAY"}) {
        for (const std::string& conf : std::vector<std::string>{"0", "-5", "1.5", "", " 5", "2147483648",
                                                                "99999999999", "abc", "1e3", "0x10"}) {
          auto b = base;
          b["schedule_type"] = type;
          b["schedule_conf"] = conf;
          add("cron", route.method, target, b.dump());
        }
      }
    }
    if (props.contains("time_zone")) {
      for (const std::string& zone : std::vector<std::string>{
               "Mars/Olympus_Mons", "UTC+25", "GMT+99", "Etc/GMT+99", "../../../../etc/passwd",
               "/etc/localtime", "Europe/../../etc/passwd", "posixrules/../../../etc/shadow", " UTC", "UTC ",
               "utc\n", std::string("UTC\0x", 5), "America/New_York;", std::string(70, 'Z'),
               "%2e%2e%2fetc"}) {
        auto b = base;
        b["time_zone"] = zone;
        add("time-zone", route.method, target, b.dump());
      }
    }
  }

  // Login with the right credentials in a body a cross-site form could send (not application/json), or
  // without a Content-Type: refused before the password is looked at.
  for (const std::string& ct : std::vector<std::string>{"application/x-www-form-urlencoded", "text/plain",
                                                        "multipart/form-data", ""}) {
    probes.push_back(Probe{.category = "wrong-type",
                           .method = "POST",
                           .target = "/api/v1/auth/login",
                           .headers = {{"X-No-Credentials", "1"}},
                           .body = json{{"username", "admin"}, {"password", kAdminPassword}}.dump(),
                           .content_type = ct});
  }
  // Unknown routes under /api/v1.
  for (const std::string& t : std::vector<std::string>{
           "/api/v1/nothing", "/api/v1/", "/api/v1", "/api/v1/jobs/1/nothing", "/api/v2/jobs",
           "/api/v1/../v1/jobs", "/api/v1/jobs/../users", std::string(9000, '/')}) {
    add("method", "GET", t, "", Expect::kRest4xx);
  }
  // httplib decodes the path before routing: an encoded '/' names the same resource, with the same checks.
  add("method", "GET", fmt::format("/api/v1/jobs%2F{}", ids_["job"]), "", Expect::kRestNot5xx);

  std::printf("[EveryRestRoute...] %zu routes from openapi.json, %zu probes\n", routes.size(), probes.size());
  for (const auto& p : probes)
    Run(http, p);
}

// --- the admin's XXL-JOB endpoints -------------------------------------------------------------------------

TEST_F(BadInputE2E, TheAdminsExecutorApiAnswersACode500EnvelopeSayingWhatIsWrong) {
  HttpCaller http(cluster_->admin_port(0));
  const auto& token = cluster_->token();
  const auto registry = json{{"registryGroup", "EXECUTOR"},
                             {"registryKey", "e2e-app"},
                             {"registryValue", cluster_->executor_address(0)}};
  const auto callback = json::array({{{"logId", ids_["log"]}, {"handleCode", 500}, {"handleMsg", "x"}}});
  const auto unknown_callback = json::array({{{"logId", 987654321}, {"handleCode", 500}}});
  std::vector<Probe> probes;
  const auto add = ProtocolProbeAdder(probes, token);
  for (const std::string& prefix : std::vector<std::string>{"", "/xxl-job-admin"}) {
    for (const std::string& name : std::vector<std::string>{"registry", "registryRemove", "callback"}) {
      const auto target = fmt::format("{}/api/{}", prefix, name);
      const bool is_callback = name == "callback";
      const json valid = is_callback ? callback : registry;
      // Tokens: missing, empty, wrong, almost right, huge; the body is valid, the token must stop it.
      for (const auto& h : std::vector<httplib::Headers>{
               {{"X-No-Token", "1"}},
               {{"XXL-JOB-ACCESS-TOKEN", ""}},
               {{"XXL-JOB-ACCESS-TOKEN", "wrong"}},
               {{"XXL-JOB-ACCESS-TOKEN", token + "x"}},
               {{"XXL-JOB-ACCESS-TOKEN", token.substr(0, token.size() - 1)}},
               // One byte wrong. (A leading or trailing space is not: HTTP drops it from every header value.)
               {{"XXL-JOB-ACCESS-TOKEN",
                 token.substr(0, token.size() - 1) + (token.back() == 'a' ? "b" : "a")}},
               {{"XXL-JOB-ACCESS-TOKEN", std::string(4'000, 't')}},
               {{"XXL-JOB-ACCESS-TOKEN", "wrong"}, {"XXL-JOB-ACCESS-TOKEN", token}},
               {{"Authorization", "Bearer " + bearer_}},
           }) {
        add("token", "POST", target, valid.dump(), Expect::kEnvelopeFail, kWrongToken, h);
      }
      // A header over httplib's 8 KiB limit: the request is not read at all; still an envelope.
      add("token", "POST", target, valid.dump(), Expect::kEnvelopeFail, "",
          {{"XXL-JOB-ACCESS-TOKEN", std::string(10'000, 't')}});
      if (is_callback) {
        // A log id no fire has: the global token is still required.
        add("token", "POST", target, unknown_callback.dump(), Expect::kEnvelopeFail, kWrongToken,
            {{"XXL-JOB-ACCESS-TOKEN", "wrong"}});
        add("token", "POST", target, "[]", Expect::kEnvelopeFail, kWrongToken,
            {{"XXL-JOB-ACCESS-TOKEN", "wrong"}});
      }
      for (const auto& text : MalformedBodies()) {
        if (is_callback && (text == "[]" || text == "[{}]")) continue;  // [] is an empty batch; [{}] below
        add("malformed-json", "POST", target, text, Expect::kEnvelopeFail);
      }
      add("malformed-json", "POST", target, "", Expect::kEnvelopeFail);
      add("oversize", "POST", target, "[\"" + std::string(kLimit + 1 - 4, 'a') + "\"]",
          Expect::kEnvelopeFail);
      for (const std::string& m : std::vector<std::string>{"GET", "PUT", "DELETE", "PATCH"})
        add("method", m, target, valid.dump(), Expect::kEnvelopeFail, "HttpMethod not support");
      if (is_callback) {
        const std::vector<std::pair<std::string, json>> fields = {
            {"logId", 1}, {"handleCode", 1}, {"handleMsg", "s"}, {"logDateTim", 1}};
        for (const auto& [field, kind] : fields) {
          for (const auto& wrong : kind.is_string() ? WrongTypes("string")
                                                    : std::vector<json>{json::array(), json::object(), true,
                                                                        1.5, "abc", "1.5", "0x10", ""}) {
            auto b = callback;
            b[0][field] = wrong;
            add("wrong-type", "POST", target, b.dump(), Expect::kEnvelopeFail, field);
          }
        }
        for (const auto& b :
             {json::array({1}), json::array({"x"}), json::array({nullptr}), json::array({json::array()}),
              json{{"callbackList", json::object()}}, json{{"callbackList", "x"}},
              json{{"callbackList", nullptr}}, json{{"list", callback}}, json::array({json::object()}),
              json::array({{{"logId", ids_["log"]}}}), json::array({{{"handleCode", 200}}})}) {
          add("wrong-type", "POST", target, b.dump(), Expect::kEnvelopeFail);
        }
        for (const std::string& raw : std::vector<std::string>{"9223372036854775808", "-9223372036854775809",
                                                               "1e308", "0.5", "18446744073709551616"}) {
          add("number", "POST", target, fmt::format(R"([{{"logId":{},"handleCode":500}}])", raw),
              Expect::kEnvelopeFail, "logId");
        }
        // Beyond a double: the JSON itself is refused, naming the number.
        add("number", "POST", target, R"([{"logId":1e400,"handleCode":500}])", Expect::kEnvelopeFail,
            "1e400");
        for (const std::string& raw :
             std::vector<std::string>{"2147483648", "-2147483649", "9223372036854775808", "1e308", "0.5"}) {
          add("number", "POST", target, fmt::format(R"([{{"logId":{},"handleCode":{}}}])", ids_["log"], raw),
              Expect::kEnvelopeFail, "handleCode");
        }
        // Lenient like XXL-JOB: unknown fields are ignored; the fire has finished, so nothing changes.
        auto extra = callback;
        extra[0]["unknownField"] = json::object();
        add("unknown-field", "POST", target, extra.dump(), Expect::kEnvelopeAny);
        add("unknown-field", "POST", target, json{{"callbackList", callback}, {"x", 1}}.dump(),
            Expect::kEnvelopeAny);
        for (const auto& s : kSqlStrings) {
          auto b = unknown_callback;
          b[0]["handleMsg"] = s;
          add("sql", "POST", target, b.dump(), Expect::kEnvelopeAny);
        }
      } else {
        for (const std::string& field :
             std::vector<std::string>{"registryGroup", "registryKey", "registryValue"}) {
          for (const auto& wrong : WrongTypes("string")) {
            auto b = registry;
            b[field] = wrong;
            add("wrong-type", "POST", target, b.dump(), Expect::kEnvelopeFail, field);
          }
          for (const std::string& blank : std::vector<std::string>{"", " ", "\t\n"}) {
            auto b = registry;
            b[field] = blank;
            add("wrong-type", "POST", target, b.dump(), Expect::kEnvelopeFail, field);
          }
          auto b = registry;
          b[field] = std::string(256, 'a');
          add("wrong-type", "POST", target, b.dump(), Expect::kEnvelopeFail, field);
          for (const auto& s : kSqlStrings) {
            auto sql = registry;
            sql[field] = s;
            add("sql", "POST", target, sql.dump(), Expect::kEnvelopeFail, field);
          }
        }
        for (const std::string& value : std::vector<std::string>{
                 "127.0.0.1:9999", "ftp://127.0.0.1:9999/", "http://", "http://:80/",
                 "http://127.0.0.1:99999/", "http://127.0.0.1:-1/", "javascript:alert(1)",
                 "http://127.0.0.1:9999/a b", "file:///etc/passwd"}) {
          auto b = registry;
          b["registryValue"] = value;
          add("sql", "POST", target, b.dump(), Expect::kEnvelopeFail, "registryValue");
        }
        for (const std::string& key : std::vector<std::string>{"a", "-app", "app name", "app/../x",
                                                               std::string(65, 'a'), "e2e-app\n"}) {
          auto b = registry;
          b["registryKey"] = key;
          add("sql", "POST", target, b.dump(), Expect::kEnvelopeFail, "registryKey");
        }
        // Unknown fields are ignored (XXL-JOB's Gson): this is the executor's own registration again.
        if (name == "registry") {
          auto extra = registry;
          extra["unknownField"] = json::array();
          add("unknown-field", "POST", target, extra.dump(), Expect::kEnvelopeAny);
        }
      }
    }
    // Paths that are not endpoints.
    for (const std::string& t :
         std::vector<std::string>{"/api/nope", "/api/registry/", "/api//registry", "/api/registry%00",
                                  "/api/REGISTRY", "/api/callback;x=1", "/api/%2e%2e/api/registry"}) {
      add("path", "POST", prefix + t, registry.dump(), Expect::kEnvelopeFail);
    }
  }
  std::printf("[TheAdminsExecutorApi...] %zu probes\n", probes.size());
  for (const auto& p : probes)
    Run(http, p);
}

// --- the executor ---------------------------------------------------------------------------------------

TEST_F(BadInputE2E, EveryExecutorEndpointAnswersACode500EnvelopeAndRunsNothing) {
  HttpCaller http(cluster_->executor_port(0));
  const auto& token = cluster_->token();
  // Valid bodies of each endpoint, for a job no thread has (the executor has run nothing).
  const auto trigger = json{{"jobId", 424242},
                            {"executorHandler", "noopJobHandler"},
                            {"executorParams", ""},
                            {"executorBlockStrategy", "SERIAL_EXECUTION"},
                            {"executorTimeout", 0},
                            {"logId", 898989},
                            {"logDateTime", Cluster::NowMs()},
                            {"glueType", "BEAN"},
                            {"glueSource", ""},
                            {"glueUpdatetime", 0},
                            {"broadcastIndex", 0},
                            {"broadcastTotal", 1}};
  const std::map<std::string, json> valid = {
      {"/beat", json::object()},
      {"/idleBeat", {{"jobId", 424242}}},
      {"/run", trigger},
      {"/trigger", trigger},
      {"/kill", {{"jobId", 424242}}},
      {"/log", {{"logDateTim", Cluster::NowMs()}, {"logId", 898989}, {"fromLineNum", 1}}},
  };
  std::vector<Probe> probes;
  const auto add = ProtocolProbeAdder(probes, token);
  for (const auto& [path, body] : valid) {
    // A run that got past its token would run: the token must stop every one of them.
    for (const auto& h : std::vector<httplib::Headers>{
             {{"X-No-Token", "1"}},
             {{"XXL-JOB-ACCESS-TOKEN", ""}},
             {{"XXL-JOB-ACCESS-TOKEN", "wrong"}},
             {{"XXL-JOB-ACCESS-TOKEN", token + "x"}},
             {{"XXL-JOB-ACCESS-TOKEN", token.substr(1)}},
             {{"XXL-JOB-ACCESS-TOKEN", std::string(4'000, 't')}},
             {{"XXL-JOB-ACCESS-TOKEN", "wrong"}, {"XXL-JOB-ACCESS-TOKEN", token}},
         }) {
      add("token", "POST", path, body.dump(), Expect::kEnvelopeFail, kWrongToken, h);
    }
    // A header over httplib's 8 KiB limit: the request is not read at all; still an envelope.
    add("token", "POST", path, body.dump(), Expect::kEnvelopeFail, "",
        {{"XXL-JOB-ACCESS-TOKEN", std::string(10'000, 't')}});
    add("oversize", "POST", path, R"({"x":")" + std::string(kLimit + 1 - 8, 'a') + "\"}",
        Expect::kEnvelopeFail, "5242880");
    for (const std::string& m : std::vector<std::string>{"GET", "PUT", "DELETE", "PATCH"})
      add("method", m, path, body.dump(), Expect::kEnvelopeFail, "HttpMethod not support");
    if (path == "/beat") continue;  // its body is ignored (XXL-JOB)
    for (const auto& text : MalformedBodies())
      add("malformed-json", "POST", path, text, Expect::kEnvelopeFail);
    add("malformed-json", "POST", path, "", Expect::kEnvelopeFail);
    // Every field of the wrong type, as null where it is required, out of range.
    for (const auto& [field, value] : body.items()) {
      const bool is_int = value.is_number();
      for (const auto& wrong :
           is_int ? std::vector<json>{json::array(), json::object(), true, 1.5, "abc", "1.5", "0x10", " 1"}
                  : std::vector<json>{123, true, json::array(), json::object()}) {
        auto b = body;
        b[field] = wrong;
        add("wrong-type", "POST", path, b.dump(), Expect::kEnvelopeFail, field);
      }
      if (!is_int) continue;
      const bool wide =
          field == "logId" || field == "logDateTime" || field == "logDateTim" || field == "glueUpdatetime";
      std::vector<std::string> raws = {"9223372036854775808", "-9223372036854775809", "1e308", "1e400",
                                       "18446744073709551616"};
      if (!wide) raws.insert(raws.end(), {"2147483648", "-2147483649"});
      // Ids are positive; instants are from 1970 to the year 9999; a timeout is not negative.
      if (field == "jobId" || field == "logId") raws.insert(raws.end(), {"0", "-1", "-2147483648"});
      if (field == "logDateTime" || field == "logDateTim")
        raws.insert(raws.end(), {"-1", "9223372036854775807"});
      if (field == "executorTimeout") raws.emplace_back("-1");
      if (field == "broadcastIndex") raws.insert(raws.end(), {"-1", "1", "5"});
      if (field == "broadcastTotal") raws.emplace_back("-1");
      for (const auto& raw : raws) {
        auto b = body;
        b[field] = "@@NUMBER@@";
        auto text = b.dump();
        text.replace(text.find("\"@@NUMBER@@\""), 12, raw);
        add("number", "POST", path, text, Expect::kEnvelopeFail);
      }
    }
    for (const auto& required : {"jobId", "logId"}) {
      if (!body.contains(required)) continue;
      auto b = body;
      b[required] = nullptr;
      add("wrong-type", "POST", path, b.dump(), Expect::kEnvelopeFail, required);
      b.erase(required);
      add("wrong-type", "POST", path, b.dump(), Expect::kEnvelopeFail, required);
    }
  }
  for (const auto& run : {"/run", "/trigger"}) {
    // Handlers, glue types and strategies that do not exist; SQL-looking strings in each; script jobs on an
    // executor without scripts.
    for (const auto& s : kSqlStrings) {
      auto b = trigger;
      b["executorHandler"] = s;
      add("sql", "POST", run, b.dump(), Expect::kEnvelopeFail, "not found");
      b = trigger;
      b["glueType"] = s;
      add("sql", "POST", run, b.dump(), Expect::kEnvelopeFail, "glueType");
    }
    for (const std::string& glue : std::vector<std::string>{"GLUE_SHELL", "GLUE_PYTHON", "GLUE_NODEJS",
                                                            "GLUE_PHP", "GLUE_POWERSHELL", "GLUE_GROOVY"}) {
      auto b = trigger;
      b["glueType"] = glue;
      b["glueSource"] = "#!/bin/sh\ntouch /tmp/cronwheel-bad-input-ran\n";
      add("sql", "POST", run, b.dump(), Expect::kEnvelopeFail);
    }
    for (const std::string& strategy :
         std::vector<std::string>{"", "serial_execution", "'; DROP TABLE job; --"}) {
      auto b = trigger;
      b["executorHandler"] = "noSuchHandler";
      b["executorBlockStrategy"] = strategy;
      add("sql", "POST", run, b.dump(), Expect::kEnvelopeFail);
    }
    auto b = trigger;
    b["executorHandler"] = "noSuchHandler";
    b["unknownField"] = json::object();
    add("unknown-field", "POST", run, b.dump(), Expect::kEnvelopeFail, "not found");
  }
  // Lenient like XXL-JOB: unknown fields are ignored. Nothing runs for these job ids.
  for (const std::string& path : std::vector<std::string>{"/idleBeat", "/kill", "/log"}) {
    auto b = valid.at(path);
    b["unknownField"] = json::array();
    add("unknown-field", "POST", path, b.dump(), Expect::kEnvelopeAny);
  }
  for (const std::string& t :
       std::vector<std::string>{"/nope", "/run/", "//run", "/RUN", "/run%00", "/../run", "/%2e%2e/run",
                                "/run;x=1", "/beat/../run", "/", "/" + std::string(9000, 'r')}) {
    add("path", "POST", t, trigger.dump(), Expect::kEnvelopeFail);
  }
  std::printf("[EveryExecutorEndpoint...] %zu probes\n", probes.size());
  for (const auto& p : probes)
    Run(http, p);
  EXPECT_FALSE(std::filesystem::exists("/tmp/cronwheel-bad-input-ran")) << "a script ran";
}

// --- HTTP framing ----------------------------------------------------------------------------------------

// Sends raw bytes on a new connection and returns the status of the answer (0 if the connection closed
// without one, or none came within `wait`). The write side stays open: httplib drops a half-closed
// connection without answering.
int RawExchange(int port, const std::string& bytes, std::chrono::milliseconds wait = 3s) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{.tv_sec = wait.count() / 1000,
             .tv_usec = static_cast<suseconds_t>((wait.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const auto n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may stop reading early (and answer)
    sent += static_cast<std::size_t>(n);
  }
  std::string in;
  char buf[4096];
  while (in.find("\r\n") == std::string::npos) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  int status = 0;
  if (in.starts_with("HTTP/1."))
    std::from_chars(in.data() + 9, in.data() + std::min<std::size_t>(in.size(), 12), status);
  return status;
}

TEST_F(BadInputE2E, BrokenHttpFramingIsRefusedWithoutA5xx) {
  const auto& token = cluster_->token();
  const std::string chunked_big = [] {
    std::string s;
    const std::string chunk(1 << 20, 'a');
    for (int i = 0; i < 6; ++i)
      s += fmt::format("{:x}\r\n{}\r\n", chunk.size(), chunk);
    return s + "0\r\n\r\n";
  }();
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"content-length-huge",
       "POST {} HTTP/1.1\r\nHost: x\r\n{}Content-Type: application/json\r\n"
       "Content-Length: 99999999999\r\nConnection: close\r\n\r\n{{}}"},
      {"content-length-negative",
       "POST {} HTTP/1.1\r\nHost: x\r\n{}Content-Length: -5\r\nConnection: close\r\n\r\n{{}}"},
      {"content-length-text",
       "POST {} HTTP/1.1\r\nHost: x\r\n{}Content-Length: abc\r\nConnection: close\r\n\r\n{{}}"},
      {"content-length-twice",
       "POST {} HTTP/1.1\r\nHost: x\r\n{}Content-Length: 2\r\nContent-Length: 100\r\n"
       "Connection: close\r\n\r\n{{}}"},
      {"chunked-over-limit",
       "POST {} HTTP/1.1\r\nHost: x\r\n{}Content-Type: application/json\r\n"
       "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
           chunked_big},
      {"chunked-broken",
       "POST {} HTTP/1.1\r\nHost: x\r\n{}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
       "zz\r\n{{}}\r\n0\r\n\r\n"},
      {"no-request-line", "\r\n\r\n"},
      {"garbage", "GARBAGE\r\n\r\n"},
      {"bad-version", "POST {} HTTP/9.9\r\n{}Content-Length: 2\r\nConnection: close\r\n\r\n{{}}"},
      {"header-too-long", "POST {} HTTP/1.1\r\nHost: x\r\n{}X-Long: " + std::string(20'000, 'h') +
                              "\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"},
      {"uri-too-long",
       "GET /" + std::string(20'000, 'u') + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"},
      {"nul-in-header", ""},  // built below: a NUL byte inside a header value
  };
  const std::vector<std::tuple<std::string, int, std::string, std::string>> endpoints = {
      {"admin-rest", cluster_->admin_port(0), "/api/v1/groups", "Authorization: Bearer " + bearer_ + "\r\n"},
      {"admin-xxl", cluster_->admin_port(0), "/api/callback", "XXL-JOB-ACCESS-TOKEN: " + token + "\r\n"},
      {"executor", cluster_->executor_port(0), "/run", "XXL-JOB-ACCESS-TOKEN: " + token + "\r\n"},
  };
  for (const auto& [where, port, path, auth] : endpoints) {
    for (const auto& [name, pattern] : requests) {
      std::string bytes;
      if (name == "nul-in-header") {
        bytes = fmt::format("POST {} HTTP/1.1\r\nHost: x\r\n{}", path, auth);
        bytes += std::string("X-Nul: a\0b\r\n", 11);
        bytes += "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
      } else if (pattern.find("{}") == std::string::npos) {
        bytes = pattern;
      } else {
        bytes = fmt::format(fmt::runtime(pattern), path, auth);
      }
      // An answer comes at once or not at all (a body announced but never sent is waited for until the
      // server's read timeout): 700 ms is plenty on loopback.
      const int status = RawExchange(port, bytes, 700ms);
      HttpReply r;
      r.status = status < 0 ? 0 : status;
      Probe p{.category = "framing",
              .method = fmt::format("{}:{}", where, name),
              .target = path,
              .expect = Expect::kNot5xx};
      tally_.Add("framing-" + where, p, r);
      EXPECT_GE(status, 0) << where << " " << name << ": cannot connect";
      EXPECT_LT(status, 500) << where << " " << name;
      std::printf("  %-10s %-24s -> %s\n", where.c_str(), name.c_str(),
                  status == 0 ? "closed without an answer" : std::to_string(status).c_str());
    }
  }
}

}  // namespace
