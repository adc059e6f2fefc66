#include "executor/builtin_handlers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <mutex>
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
