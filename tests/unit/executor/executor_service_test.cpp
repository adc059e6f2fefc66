#include "executor_service.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "cwtest/fake_clock.hpp"
#include "handler_registry.hpp"
#include "metrics.hpp"
#include "test_util.hpp"
#include "xxljob/vocabulary.hpp"

namespace {

using namespace cwtest::executor_test;

// The parts under an ExecutorService, on a fake clock and a temporary log directory.
class ExecutorPartsTest : public ::testing::Test {
 protected:
  cwtest::TempDir dir_;
  cwtest::FakeClock clock_{kDay};
  JobLogFiles logs_{{dir_.path()}, clock_};
  cwtest::RecordingSink sink_;
  WheelTimer timer_{clock_};
  ScriptRunner scripts_{{dir_.path() / "gluesource", 1s, ""}, clock_};
  HandlerRegistry handlers_{false, &scripts_};
};

class ServiceTest : public ExecutorPartsTest {
 protected:
  JobDispatcher dispatcher_{
      {}, [this](const TriggerParam& p) { return handlers_.Resolve(p); }, logs_, sink_, timer_, clock_};
  ExecutorService service_{dispatcher_, logs_};

  void TearDown() override {
    dispatcher_.Stop();
    timer_.Stop();
  }
  cronwheel::xxljob::Envelope Call(std::string_view method, std::string_view body) {
    return service_.Handle(method, body, method);
  }
};

TEST_F(ServiceTest, BeatRunLogAndKill) {
  handlers_.Register("hello", [](JobContext& ctx) { ctx.Log("hello {}", ctx.param()); });
  EXPECT_EQ(Call("/beat", "").code, 200);
  EXPECT_EQ(Call("/beat", "\"\"").code, 200);  // the dialect-A admin sends a JSON string
  EXPECT_EQ(Call("/run", R"({"jobId":1,"logId":10,"executorHandler":"hello","executorParams":"world",
                             "glueType":"BEAN","logDateTime":1767225600000})")
                .code,
            200);
  ASSERT_TRUE(sink_.WaitFor(1));
  const auto log = Call("/log", R"({"logDateTim":1767225600000,"logId":10,"fromLineNum":1})");
  ASSERT_EQ(log.code, 200);
  EXPECT_THAT(log.content.at("logContent").get<std::string>(), HasSubstr("hello world\n"));
  EXPECT_GE(log.content.at("toLineNum").get<int>(), 3);
  EXPECT_FALSE(log.content.at("isEnd").get<bool>());
  // Dialect C spellings: /trigger and logDateTime.
  EXPECT_EQ(Call("/trigger", R"({"jobId":1,"logId":11,"executorHandler":"hello"})").code, 200);
  EXPECT_EQ(Call("/log", R"({"logDateTime":1767225600000,"logId":10,"fromLineNum":1})").code, 200);
  ASSERT_TRUE(sink_.WaitFor(2));  // both fires finished: job 1 is idle
  EXPECT_EQ(Call("/idleBeat", R"({"jobId":1})").code, 200);
  EXPECT_EQ(Call("/kill", R"({"jobId":1})").code, 200);
}

// Issue 25, item 5: while the executor drains, /run, /beat and /idleBeat answer code 500 with the draining
// message (so FAILOVER and BUSYOVER move on and a cronwheel admin sends the fire elsewhere); /log and
// /kill are served as before.
TEST_F(ServiceTest, ADrainingExecutorRefusesRunsAndBeatsSayingSo) {
  handlers_.Register("hello", [](JobContext& ctx) { ctx.Log("hello {}", ctx.param()); });
  ASSERT_EQ(
      Call("/run", R"({"jobId":1,"logId":10,"executorHandler":"hello","logDateTime":1767225600000})").code,
      200);
  ASSERT_TRUE(sink_.WaitFor(1));
  dispatcher_.BeginDrain(std::chrono::minutes(1));
  for (const auto& [method, body] :
       {std::pair{"/beat", ""}, std::pair{"/idleBeat", R"({"jobId":1})"},
        std::pair{"/run", R"({"jobId":1,"logId":11,"executorHandler":"hello"})"}}) {
    const auto answer = Call(method, body);
    EXPECT_EQ(answer.code, 500) << method;
    EXPECT_EQ(answer.msg, std::string(cronwheel::xxljob::kDrainingMsg)) << method;
  }
  EXPECT_EQ(Call("/log", R"({"logDateTim":1767225600000,"logId":10,"fromLineNum":1})").code, 200);
  EXPECT_EQ(Call("/kill", R"({"jobId":1})").code, 200);
  EXPECT_EQ(sink_.Get().size(), 1u) << "the refused fire was not run";
}

// POST /drain (cronwheel's extension): an admin's request starts the embedder's drain once; an executor
// whose embedder gave no way to drain says so, and one that drains already starts nothing new.
TEST_F(ServiceTest, ADrainRequestStartsTheDrainOnceOrSaysWhyNot) {
  EXPECT_EQ(Call("/drain", "{}").code, 500);
  EXPECT_EQ(Call("/drain", "{}").msg, std::string(cronwheel::xxljob::kNoDrainRequestsMsg));

  int requested = 0;
  ExecutorService drainable(dispatcher_, logs_, nullptr, [&] { ++requested; });
  const auto first = drainable.Handle("/drain", "{}", "/drain");
  EXPECT_EQ(first.code, 200);
  EXPECT_EQ(first.msg, std::string(cronwheel::xxljob::kDrainStartedMsg));
  EXPECT_EQ(requested, 1);
  const auto again = drainable.Handle("/drain", "{}", "/drain");
  EXPECT_EQ(again.code, 200);
  EXPECT_EQ(again.msg, std::string(cronwheel::xxljob::kAlreadyDrainingMsg));
  EXPECT_EQ(requested, 1);

  // A drain that began another way (SIGTERM) is not started a second time either.
  int other = 0;
  ExecutorService after_signal(dispatcher_, logs_, nullptr, [&] { ++other; });
  dispatcher_.BeginDrain(std::chrono::minutes(1));
  EXPECT_EQ(after_signal.Handle("/drain", "{}", "/drain").msg,
            std::string(cronwheel::xxljob::kAlreadyDrainingMsg));
  EXPECT_EQ(other, 0);
}

TEST_F(ServiceTest, XxlJobMessagesForRefusals) {
  EXPECT_EQ(Call("/run", R"({"jobId":1,"logId":1,"executorHandler":"missing"})").msg,
            "job handler [missing] not found.");
  EXPECT_EQ(Call("/run", R"({"jobId":1,"logId":2,"glueType":"GLUE_RUBY"})").msg,
            "glueType[GLUE_RUBY] is not valid.");
  EXPECT_THAT(Call("/run", R"({"jobId":1,"logId":3,"glueType":"GLUE_GROOVY"})").msg.value_or(""),
              HasSubstr("not supported by this executor"));
  EXPECT_EQ(Call("/nope", "{}").msg, "invalid request, uri-mapping(/nope) not found.");
}

TEST_F(ServiceTest, ScriptsAreRefusedUnlessEnabledAndTheMessageSaysHow) {
  const auto r = Call("/run", R"({"jobId":1,"logId":1,"glueType":"GLUE_SHELL","glueSource":"echo hi"})");
  EXPECT_EQ(r.code, 500);
  EXPECT_THAT(r.msg.value_or(""), HasSubstr("script jobs are disabled"));
  EXPECT_THAT(r.msg.value_or(""), HasSubstr("CRONWHEEL_ENABLE_SCRIPTS=true"));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "gluesource"));
}

TEST_F(ServiceTest, EnabledShellScriptRunsAndItsOutputIsInTheLog) {
  handlers_.SetScripts(true, &scripts_);
  const auto r = Call("/run", R"({"jobId":3,"logId":30,"glueType":"GLUE_SHELL","glueUpdatetime":5,
      "glueSource":"echo \"out $1 $2/$3\"","executorParams":"p","broadcastIndex":1,"broadcastTotal":2,
      "logDateTime":1767225600000})");
  EXPECT_EQ(r.code, 200);
  ASSERT_TRUE(sink_.WaitFor(1));
  EXPECT_EQ(sink_.For(30).handle_code, 200);
  const auto log = Call("/log", R"({"logDateTim":1767225600000,"logId":30,"fromLineNum":1})");
  EXPECT_THAT(log.content.at("logContent").get<std::string>(), HasSubstr("\nout p 1/2\n"));
}

TEST_F(ServiceTest, ANewGlueVersionReplacesTheJobThread) {
  handlers_.SetScripts(true, &scripts_);
  EXPECT_EQ(
      Call("/run",
           R"({"jobId":4,"logId":40,"glueType":"GLUE_SHELL","glueUpdatetime":1,"glueSource":"sleep 30"})")
          .code,
      200);
  EXPECT_EQ(Call("/run",
                 R"({"jobId":4,"logId":41,"glueType":"GLUE_SHELL","glueUpdatetime":2,"glueSource":"exit 0"})")
                .code,
            200);
  ASSERT_TRUE(sink_.WaitFor(2));
  // Running or still queued when replaced, depending on timing; either way reported at once.
  EXPECT_THAT(
      sink_.For(40).handle_msg,
      ::testing::StartsWith("change job source or glue type, and terminate the old job thread. [job "));
  EXPECT_EQ(sink_.For(41).handle_code, 200);
  EXPECT_TRUE(
      std::filesystem::exists(dir_.path() / "gluesource" / "4_2.sh"));  // never deleted by the old thread
}

TEST_F(ServiceTest, MalformedBodiesNameTheField) {
  EXPECT_THAT(Call("/run", "{").msg.value_or(""), HasSubstr("not valid JSON"));
  EXPECT_THAT(Call("/run", R"({"jobId":"x","logId":1})").msg.value_or(""), HasSubstr("'jobId'"));
  EXPECT_THAT(Call("/kill", R"({})").msg.value_or(""), HasSubstr("'jobId'"));
  EXPECT_THAT(Call("/log", R"({"logId":[1]})").msg.value_or(""), HasSubstr("'logId'"));
}

// Ahead-of-time dispatch: /cancel (cronwheel's extension) drops the fires held for their instant among the
// log ids it names, answers which it dropped, and sends no callback for them (the admin records them); a
// fire not held there is left alone. A malformed body names the field.
TEST_F(ServiceTest, CancelDropsTheNamedHeldFiresAndSaysWhichWithoutACallback) {
  handlers_.Register("hello", [](JobContext&) {});
  const auto run_at =
      fmt::format(R"({{"jobId":1,"logId":{},"executorHandler":"hello","runAtMs":{}}})", 20, kDay + 5000);
  ASSERT_EQ(Call("/run", run_at).code, 200);
  ASSERT_EQ(Call("/run", fmt::format(R"({{"jobId":2,"logId":21,"executorHandler":"hello","runAtMs":{}}})",
                                     kDay + 5000))
                .code,
            200);
  const auto r = Call("/cancel", R"({"logIds":[20,99]})");
  ASSERT_EQ(r.code, 200) << r.msg.value_or("");
  EXPECT_EQ(r.msg, "1 held fire(s) dropped");
  EXPECT_EQ(r.content.at("cancelled"), nlohmann::json::array({20}));
  EXPECT_EQ(dispatcher_.HeldFires(), 1U);
  EXPECT_EQ(Call("/run", run_at).msg.value_or(""),
            "logId:20 was already run by this executor; the redelivery is not run again")
      << "a withdrawn log id does not run later either";
  EXPECT_THAT(Call("/cancel", R"({"logIds":[0]})").msg.value_or(""), HasSubstr("'logIds[0]'"));
  EXPECT_THAT(Call("/cancel", R"({"logIds":"20"})").msg.value_or(""), HasSubstr("'logIds'"));
  EXPECT_THAT(Call("/cancel", R"({})").msg.value_or(""), HasSubstr("'logIds'"));
  dispatcher_.Stop();
  ASSERT_TRUE(sink_.WaitFor(1));
  const auto callbacks = sink_.Get();
  ASSERT_EQ(callbacks.size(), 1U) << "only the held fire the stop reported, not the withdrawn one";
  EXPECT_EQ(callbacks[0].log_id, 21);
}

// /accepted answers which of the named fires this executor took: held for an instant, queued or run, a
// withdrawn one too (it must never be sent again), and not one it refused or never got. The admin asks it
// before the instant of the fires it sent ahead; a bad body names the field.
TEST_F(ServiceTest, AcceptedNamesTheFiresThisExecutorTookHeldRunOrWithdrawnAndNoOther) {
  handlers_.Register("hello", [](JobContext&) {});
  const auto held = [](int log_id) {
    return fmt::format(R"({{"jobId":{},"logId":{},"executorHandler":"hello","runAtMs":{}}})", log_id, log_id,
                       kDay + 5000);
  };
  ASSERT_EQ(Call("/run", held(30)).code, 200);
  ASSERT_EQ(Call("/run", held(31)).code, 200);
  ASSERT_EQ(Call("/run", R"({"jobId":32,"logId":32,"executorHandler":"hello"})").code, 200);
  ASSERT_EQ(Call("/run", R"({"jobId":33,"logId":33,"executorHandler":"nobody"})").code, 500);
  ASSERT_EQ(Call("/cancel", R"({"logIds":[31]})").code, 200);
  const auto r = Call("/accepted", R"({"logIds":[30,31,32,33,34]})");
  ASSERT_EQ(r.code, 200) << r.msg.value_or("");
  EXPECT_EQ(r.msg, "3 of 5 fire(s) accepted here");
  EXPECT_EQ(r.content.at("accepted"), nlohmann::json::array({30, 31, 32}));
  EXPECT_EQ(dispatcher_.HeldFires(), 1U) << "asking changes nothing";
  EXPECT_THAT(Call("/accepted", R"({"logIds":[-1]})").msg.value_or(""), HasSubstr("'logIds[0]'"));
  EXPECT_THAT(Call("/accepted", "[]").msg.value_or(""), HasSubstr("JSON object"));
}

// /runs takes many /run bodies in one request and answers each in order, as /run would have: a bad one
// names its field ("runs[2].logId") and the others still run. A body that is not a batch is one refusal.
TEST_F(ServiceTest, RunsAnswersEachRunOfTheBatchInOrderAsRunWould) {
  handlers_.Register("hello", [](JobContext&) {});
  const auto body = fmt::format(
      R"({{"runs":[{{"jobId":1,"logId":40,"executorHandler":"hello","runAtMs":{}}},)"
      R"({{"jobId":2,"logId":41,"executorHandler":"nobody","runAtMs":{}}},{{"jobId":3,"executorHandler":"hello"}},)"
      R"({{"jobId":1,"logId":40,"executorHandler":"hello","runAtMs":{}}}]}})",
      kDay + 5000, kDay + 5000, kDay + 5000);
  const auto r = Call("/runs", body);
  ASSERT_EQ(r.code, 200) << r.msg.value_or("");
  EXPECT_EQ(r.msg, "4 run(s) answered");
  const auto& a = r.content.at("answers");
  ASSERT_EQ(a.size(), 4U);
  EXPECT_EQ(a[0].at("code"), 200);
  EXPECT_EQ(a[0].at("msg"), fmt::format("held; starts at runAtMs {}", kDay + 5000));
  EXPECT_EQ(a[1].at("code"), 500);
  EXPECT_EQ(a[1].at("msg"), "job handler [nobody] not found.");
  EXPECT_EQ(a[2].at("code"), 500);
  EXPECT_THAT(a[2].at("msg").get<std::string>(), HasSubstr("'runs[2].logId'"));
  EXPECT_EQ(a[3].at("msg"), cronwheel::xxljob::RepeatTriggerMsg(40)) << "in order: the first one holds it";
  EXPECT_EQ(dispatcher_.HeldFires(), 1U);
  EXPECT_THAT(Call("/runs", R"({"runs":[]})").msg.value_or(""), HasSubstr("'runs'"));
  EXPECT_THAT(Call("/runs", R"({"runs":[7]})").content.at("answers")[0].at("msg").get<std::string>(),
              HasSubstr("'runs[0]'"));
}

TEST(HandlerRegistry, RegisterRefusesBlankEmptyAndDuplicateNames) {
  HandlerRegistry r(false, nullptr);
  r.Register("a", [](JobContext&) {});
  EXPECT_THROW(r.Register("a", [](JobContext&) {}), std::invalid_argument);
  EXPECT_THROW(r.Register(" ", [](JobContext&) {}), std::invalid_argument);
  EXPECT_THROW(r.Register("b", nullptr), std::invalid_argument);
  TriggerParam p;
  p.executor_handler = "a";
  EXPECT_EQ(r.Resolve(p).identity, "bean:a");
  p.glue_type = "BEAN";
  EXPECT_TRUE(r.Resolve(p).error.empty());
}

}  // namespace

// The executor's metrics (src/metrics.hpp): each /run counted once by result, handlers counted as running
// while they run and their run time observed by result.
class MeteredServiceTest : public ExecutorPartsTest {
 protected:
  cronwheel::metrics::Registry registry_;
  cronwheel::executor::ExecutorMetrics metrics_{registry_};
  JobDispatcher dispatcher_{{},
                            [this](const TriggerParam& p) {
                              auto r = handlers_.Resolve(p);
                              if (r.handler) r.handler = metrics_.Meter(std::move(r.handler), clock_);
                              return r;
                            },
                            logs_,
                            sink_,
                            timer_,
                            clock_};
  ExecutorService service_{dispatcher_, logs_, &metrics_};

  void TearDown() override {
    dispatcher_.Stop();
    timer_.Stop();
  }
  int Run(int log_id, const std::string& handler, const std::string& block = "SERIAL_EXECUTION") {
    const auto body = fmt::format(
        R"({{"jobId":7,"logId":{},"executorHandler":"{}","glueType":"BEAN","executorBlockStrategy":"{}"}})",
        log_id, handler, block);
    return service_.Handle("/run", body, "/run").code;
  }
};

TEST_F(MeteredServiceTest, EveryRunIsCountedOnceByResult) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  bool started = false;
  handlers_.Register("wait", [&](JobContext&) {
    std::unique_lock lock(mu);
    started = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  });
  handlers_.Register("fail", [](JobContext& ctx) { ctx.Fail("no"); });

  EXPECT_EQ(Run(1, "wait"), 200);  // accepted, runs and blocks
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return started; }));
  }
  EXPECT_EQ(metrics_.jobs_running.value(), 1);
  EXPECT_EQ(Run(1, "wait"), 500);                   // the same log id while it runs: duplicate
  EXPECT_EQ(Run(2, "wait", "DISCARD_LATER"), 500);  // busy job, DISCARD_LATER: refused
  EXPECT_EQ(Run(3, "missing"), 500);                // unknown handler: refused
  EXPECT_EQ(service_.Handle("/run", "{not json", "/run").code, 500);  // invalid
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  ASSERT_TRUE(sink_.WaitFor(1));
  EXPECT_EQ(Run(1, "wait"), 200);  // a finished log id delivered again: answered, not run: duplicate
  EXPECT_EQ(Run(4, "fail"), 200);  // another handler: the idle thread is replaced, accepted
  ASSERT_TRUE(sink_.WaitFor(2));

  EXPECT_EQ(metrics_.runs_accepted.value(), 2U);
  EXPECT_EQ(metrics_.runs_duplicate.value(), 2U);
  EXPECT_EQ(metrics_.runs_refused.value(), 2U);
  EXPECT_EQ(metrics_.runs_invalid.value(), 1U);
  EXPECT_EQ(metrics_.jobs_running.value(), 0);
  EXPECT_EQ(metrics_.job_run_success.snapshot().count(), 1U);
  EXPECT_EQ(metrics_.job_run_failure.snapshot().count(), 1U);
  const auto text = registry_.Render();
  EXPECT_THAT(text, HasSubstr("cronwheel_executor_runs_received_total{result=\"duplicate\"} 2\n"));
}
