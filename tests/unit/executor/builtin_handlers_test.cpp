#include "executor/builtin_handlers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "cwtest/fake_clock.hpp"

namespace {

using namespace cronwheel::executor;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

class MemorySink final : public JobLogSink {
 public:
  void Write(std::string_view text) override {
    std::lock_guard lock(mu_);
    lines_.emplace_back(text);
  }
  [[nodiscard]] std::filesystem::path Path() const override { return {}; }
  std::string All() {
    std::lock_guard lock(mu_);
    std::string s;
    for (const auto& l : lines_)
      s += l + "\n";
    return s;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST(UrlAllowed, PrefixRules) {
  const std::vector<std::string> allow{"https://api.example.com/hooks/", "http://10.0.0.5:8080"};
  EXPECT_TRUE(UrlAllowed("https://api.example.com/hooks/x?a=1", allow));
  EXPECT_TRUE(UrlAllowed("http://10.0.0.5:8080", allow));
  EXPECT_TRUE(UrlAllowed("http://10.0.0.5:8080/any", allow));
  EXPECT_TRUE(UrlAllowed("http://10.0.0.5:8080?q", allow));
  EXPECT_FALSE(UrlAllowed("http://10.0.0.5:80800/", allow));
  EXPECT_FALSE(UrlAllowed("http://10.0.0.5:8080.evil.net/", allow));
  EXPECT_FALSE(UrlAllowed("https://api.example.com/hooksX", allow));
  EXPECT_FALSE(UrlAllowed("https://api.example.com/hooks/../admin", allow));
  EXPECT_FALSE(UrlAllowed("https://api.example.com/hooks/%2e%2e/admin", allow));
  EXPECT_FALSE(UrlAllowed("http://10.0.0.5:8080@evil.net/", allow));
  EXPECT_FALSE(UrlAllowed("file:///etc/passwd", allow));
  EXPECT_FALSE(UrlAllowed("https://api.example.com/hooks/x", {}));
}

TEST(BuiltinHandlers, HttpJobHandlerRefusesUrlsNotAllowed) {
  cwtest::FakeClock clock;
  MemorySink sink;
  const std::stop_source stop;
  JobContext ctx(FireInfo{1, 1, 0, "http://127.0.0.1:1/x", 0, 0, 0}, sink, stop.get_token(), clock);
  cronwheel::executor::HttpJobHandler(BuiltinHandlerOptions{})(ctx);
  ASSERT_TRUE(ctx.result());
  EXPECT_EQ(ctx.result()->code, 500);
  EXPECT_THAT(ctx.result()->msg, HasSubstr("not under an allowed prefix"));
  JobContext bad(FireInfo{1, 2, 0, "{\"nourl\":1}", 0, 0, 0}, sink, stop.get_token(), clock);
  cronwheel::executor::HttpJobHandler(BuiltinHandlerOptions{{"http://127.0.0.1:1/"}, 1s, 100})(bad);
  EXPECT_THAT(bad.result()->msg, HasSubstr("the param must be a URL"));
}

// Issue 21: a 400,000-level nested httpJobHandler param crashed the executor (SIGSEGV: printing the body
// recursed once per level). The param is parsed with the depth bound of every JSON body (kMaxJsonDepth).
TEST(BuiltinHandlers, HttpJobHandlerRefusesAParamNestedTooDeep) {
  cwtest::FakeClock clock;
  MemorySink sink;
  const std::stop_source stop;
  const BuiltinHandlerOptions options{{"http://127.0.0.1:1/"}, 1s, 100};
  // The param object is level 0, so a body of n nested arrays reaches level n.
  const auto param = [](std::size_t levels) {
    return R"({"url":"http://127.0.0.1:1/x","body":)" + std::string(levels, '[') + std::string(levels, ']') +
           "}";
  };
  for (const std::size_t levels : {std::size_t{64}, std::size_t{400'000}}) {
    JobContext ctx(FireInfo{1, 1, 0, param(levels), 0, 0, 0}, sink, stop.get_token(), clock);
    cronwheel::executor::HttpJobHandler(options)(ctx);
    ASSERT_TRUE(ctx.result()) << levels;
    EXPECT_EQ(ctx.result()->code, 500) << levels;
    EXPECT_THAT(ctx.result()->msg, HasSubstr("httpJobHandler: the param nests JSON arrays and objects deeper "
                                             "than 64 levels"))
        << levels;
  }
  // At the bound the param is used: the request is made (and fails: nothing listens on port 1).
  JobContext ctx(FireInfo{1, 2, 0, param(63), 0, 0, 0}, sink, stop.get_token(), clock);
  cronwheel::executor::HttpJobHandler(options)(ctx);
  ASSERT_TRUE(ctx.result());
  EXPECT_THAT(ctx.result()->msg, HasSubstr("httpJobHandler: request failed"));
}

// A field of the param object with the wrong type is named, not an exception's text.
TEST(BuiltinHandlers, HttpJobHandlerNamesAParamFieldOfTheWrongType) {
  cwtest::FakeClock clock;
  MemorySink sink;
  const std::stop_source stop;
  const BuiltinHandlerOptions options{{"http://127.0.0.1:1/"}, 1s, 100};
  for (const auto& [param, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"url":"http://127.0.0.1:1/x","method":1})", "method"},
           {R"({"url":"http://127.0.0.1:1/x","contentType":["a"]})", "contentType"},
           {R"({"url":7})", "url"}}) {
    JobContext ctx(FireInfo{1, 1, 0, param, 0, 0, 0}, sink, stop.get_token(), clock);
    cronwheel::executor::HttpJobHandler(options)(ctx);
    ASSERT_TRUE(ctx.result()) << param;
    EXPECT_EQ(ctx.result()->code, 500) << param;
    EXPECT_THAT(ctx.result()->msg, HasSubstr("'" + field + "'")) << param;
    EXPECT_THAT(ctx.result()->msg, ::testing::Not(HasSubstr("json.exception"))) << param;
  }
}

// Security review 2, N3: a child's param {"url": "http://.../ok/report?id={{parent.output.id}}"} spliced
// with a parent's output id `7","method":"DELETE","url":"http://.../ok/admin/delete-everything` named
// "method" and "url" twice, and the last ones won: a DELETE inside http_handler_allow. The admin now
// inserts values as data (tests/unit/admin/parent_refs_test.cpp); the handler also refuses a param that names
// a key twice, before any request: the server sees none.
TEST(BuiltinHandlers, N3_HttpJobHandlerRefusesAParamWithADuplicateKeyAndSendsNothing) {
  httplib::Server server;
  std::mutex mu;
  std::vector<std::string> seen;
  const auto record = [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    seen.push_back(req.method + " " + req.path);
    res.set_content("ok", "text/plain");
  };
  server.Get(R"(/ok/.*)", record);
  server.Delete(R"(/ok/.*)", record);
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  while (!server.is_running())
    std::this_thread::yield();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  const BuiltinHandlerOptions options{{base + "/ok/"}, 5s, 100};
  cwtest::FakeClock clock;
  MemorySink sink;
  const std::stop_source stop;
  const auto run = [&](const std::string& param) {
    JobContext ctx(FireInfo{1, 1, 0, param, 0, 0, 0}, sink, stop.get_token(), clock);
    cronwheel::executor::HttpJobHandler(options)(ctx);
    return ctx.result();
  };
  // The text the admin used to write: the template with the output spliced in.
  const std::string spliced = R"({"url": ")" + base + R"(/ok/report?id=7","method":"DELETE","url":")" + base +
                              R"(/ok/admin/delete-everything"})";
  const auto refused = run(spliced);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, 500);
  EXPECT_THAT(refused->msg, HasSubstr("the param names the key 'url' twice in one object"));
  // The request the template meant is made as before.
  const auto meant = run(R"({"url": ")" + base + R"(/ok/report?id=7"})");
  ASSERT_TRUE(meant);
  EXPECT_EQ(meant->code, 200) << meant->msg;
  server.stop();
  serving.join();
  std::lock_guard lock(mu);
  EXPECT_EQ(seen, std::vector<std::string>{"GET /ok/report"});
}

TEST(BuiltinHandlers, DemoJobHandlerSleepsOnTheClockAndStopsEarly) {
  cwtest::FakeClock clock;
  MemorySink sink;
  std::stop_source stop;
  JobContext ctx(FireInfo{1, 1, 0, "2.5", 0, 0, 0}, sink, stop.get_token(), clock);
  auto done = std::async(std::launch::async, [&] { cronwheel::executor::DemoJobHandler()(ctx); });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(1s);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(1s);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(500ms);
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(ctx.result()->code, 200);
  EXPECT_EQ(ctx.result()->msg, "slept 2500 ms");
  EXPECT_THAT(sink.All(), HasSubstr("beat 3 at 2500 ms"));

  JobContext ctx2(FireInfo{1, 2, 0, "60", 0, 0, 0}, sink, stop.get_token(), clock);
  auto stopped = std::async(std::launch::async, [&] { cronwheel::executor::DemoJobHandler()(ctx2); });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  stop.request_stop();
  ASSERT_EQ(stopped.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(ctx2.result());
  EXPECT_THAT(sink.All(), HasSubstr("stopped after 0 ms"));
}

TEST(BuiltinHandlers, ShardingAndNoop) {
  cwtest::FakeClock clock;
  MemorySink sink;
  const std::stop_source stop;
  JobContext ctx(FireInfo{1, 1, 0, "", 2, 3, 0}, sink, stop.get_token(), clock);
  cronwheel::executor::ShardingJobHandler()(ctx);
  cronwheel::executor::NoopJobHandler()(ctx);
  EXPECT_THAT(sink.All(), HasSubstr("shard index = 2, total = 3"));
  EXPECT_FALSE(ctx.result());
}

}  // namespace
