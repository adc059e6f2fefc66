#include "xxljob/protocol.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cronwheel/json.hpp"
#include "cwtest/status_testing.hpp"
#include "xxljob/framing.hpp"
#include "xxljob/token.hpp"

namespace {

using namespace cronwheel::xxljob;
using cwtest::ErrorOf;
using ::testing::HasSubstr;
using json = nlohmann::json;

TEST(Protocol, TriggerParamRoundTripsWithJavaFieldNames) {
  TriggerParam p;
  p.job_id = 7;
  p.executor_handler = "demoJobHandler";
  p.executor_params = "a=b";
  p.executor_block_strategy = "SERIAL_EXECUTION";
  p.executor_timeout = 30;
  p.log_id = 1234567890123;
  p.log_date_time = 1767225600000;
  p.glue_type = "BEAN";
  p.glue_updatetime = 1767225600001;
  p.broadcast_index = 1;
  p.broadcast_total = 3;
  const auto j = ToJson(p);
  EXPECT_EQ(j.at("executorParams"), "a=b");
  EXPECT_EQ(j.at("logDateTime"), 1767225600000);
  EXPECT_EQ(j.at("glueUpdatetime"), 1767225600001);
  std::string err;
  const auto back = ParseTriggerParam(j.dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->job_id, 7);
  EXPECT_EQ(back->log_id, 1234567890123);
  EXPECT_EQ(back->executor_params, "a=b");
  EXPECT_EQ(back->broadcast_index, 1);
  EXPECT_EQ(back->broadcast_total, 3);
}

TEST(Protocol, TriggerParamIsLiberalLikeGson) {
  std::string err;
  // Unknown fields ignored, nulls are zero values, a numeric string is a number, escaped HTML decoded.
  const auto p = ParseTriggerParam(
      R"({"jobId":"12","logId":5,"executorParams":null,"extra":{"x":1},"glueSource":"echo \u003cb\u003e"})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->job_id, 12);
  EXPECT_EQ(p->executor_params, "");
  EXPECT_EQ(p->glue_source, "echo <b>");
}

TEST(Protocol, WrongTypesAreRejectedNamingTheField) {
  std::string err;
  err = ErrorOf(ParseTriggerParam(R"({"jobId":"abc","logId":1})"));
  EXPECT_THAT(err, HasSubstr("field 'jobId'"));
  EXPECT_THAT(err, HasSubstr("\"abc\""));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":1,"logId":1,"executorTimeout":{}})"));
  EXPECT_THAT(err, HasSubstr("field 'executorTimeout'"));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":4294967296,"logId":1})"));
  EXPECT_THAT(err, HasSubstr("out of range"));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":1.5,"logId":1})"));
  EXPECT_THAT(err, HasSubstr("32-bit integer"));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":1,"logId":1,"executorHandler":5})"));
  EXPECT_THAT(err, HasSubstr("field 'executorHandler': expected a string"));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":1})"));
  EXPECT_THAT(err, HasSubstr("field 'logId': is required"));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":1,"logId":1,"executorTimeout":-3})"));
  EXPECT_THAT(err, HasSubstr("executorTimeout"));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":1,"logId":1,"broadcastIndex":3,"broadcastTotal":3})"));
  EXPECT_THAT(err, HasSubstr("broadcastIndex"));
  err = ErrorOf(ParseTriggerParam("[1,2]"));
  EXPECT_THAT(err, HasSubstr("must be a JSON object"));
  err = ErrorOf(ParseTriggerParam("{\"jobId\":"));
  EXPECT_THAT(err, HasSubstr("not valid JSON"));
}

TEST(Protocol, CallbackBodyInBothDialects) {
  std::string err;
  const auto a = ParseCallbackList(R"([{"logId":1,"logDateTim":100,"handleCode":200,"handleMsg":"ok"},
                                      {"logId":2,"logDateTim":101,"handleCode":500}])");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[0].log_date_tim, 100);
  EXPECT_EQ((*a)[1].handle_code, 500);
  EXPECT_EQ((*a)[1].handle_msg, "");
  const auto c = ParseCallbackList(
      R"({"callbackList":[{"logId":3,"logDateTime":102,"handleCode":502,"handleMsg":"timeout"}]})");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->size(), 1u);
  EXPECT_EQ((*c)[0].log_date_tim, 102);
  EXPECT_EQ((*c)[0].handle_code, 502);
  EXPECT_TRUE(ParseCallbackList("[]").ok());
}

TEST(Protocol, BadCallbackElementNamesItsIndex) {
  std::string err;
  err = ErrorOf(
      ParseCallbackList(R"({"callbackList":[{"logId":1,"handleCode":200},{"logId":2,"handleCode":"x"}]})"));
  EXPECT_THAT(err, HasSubstr("callbackList[1].handleCode"));
  err = ErrorOf(ParseCallbackList(R"([{"logId":1,"handleCode":200}, 7])"));
  EXPECT_THAT(err, HasSubstr("[1]"));
  err = ErrorOf(ParseCallbackList(R"({"list":[]})"));
  EXPECT_THAT(err, HasSubstr("callbackList"));
  err = ErrorOf(ParseCallbackList(R"([{"handleCode":200}])"));
  EXPECT_THAT(err, HasSubstr("[0].logId': is required"));
}

TEST(Protocol, CallbackIsSentAsDialectAArray) {
  const auto j = ToJson(std::vector<HandleCallbackParam>{{1, 100, 200, "ok"}});
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j[0].at("logDateTim"), 100);
  EXPECT_FALSE(j[0].contains("logDateTime"));
  // Without a start instant, the four fields XXL-JOB's executors send, nothing else.
  EXPECT_EQ(j[0].size(), 4u) << j.dump();
}

// cronwheel's extension: the executor's start instant travels as handleStartTime, sent only when known,
// read back, and checked as an instant (a callback without it is XXL-JOB's, start 0).
// cronwheel's extension: a handler's output (any JSON value) travels as `output`, sent only when set; a
// callback without it is XXL-JOB's.
TEST(Protocol, CallbackCarriesTheHandlersOutputAsAnExtensionField) {
  HandleCallbackParam p{.log_id = 7, .log_date_tim = 1000, .handle_code = 200};
  EXPECT_FALSE(ToJson(p).contains("output"));
  p.output = json{{"rows", 42}, {"files", {"a.csv", "b.csv"}}};
  const auto j = ToJson(p);
  EXPECT_EQ(j.at("output"), *p.output);
  const auto back = ParseCallbackList(json::array({j}).dump());
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE((*back)[0].output);
  EXPECT_EQ((*back)[0].output->at("rows"), 42);
  const auto text = ParseCallbackList(
      R"([{"logId":1,"handleCode":200,"output":"done"},{"logId":2,"handleCode":200,"output":null}])");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*(*text)[0].output, "done");
  EXPECT_FALSE((*text)[1].output) << "null is no output";
}

// cronwheel's extension for the fire output archive: the fire's job log travels as `jobLog`, sent only when
// set, read back, and checked (content required, 0 <= leftOut <= bytes), the field named on a refusal.
TEST(Protocol, CallbackCarriesTheFiresJobLogAsAnExtensionField) {
  HandleCallbackParam p{.log_id = 7, .log_date_tim = 1000, .handle_code = 200};
  EXPECT_FALSE(ToJson(p).contains("jobLog")) << "what an XXL-JOB executor sends";
  p.job_log = HandleCallbackParam::JobLog{.content = "a\nb\n", .bytes = 900, .left_out = 896};
  const auto j = ToJson(p);
  EXPECT_EQ(j.at("jobLog"), (json{{"content", "a\nb\n"}, {"bytes", 900}, {"leftOut", 896}}));
  const auto back = ParseCallbackList(json::array({j}).dump());
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE((*back)[0].job_log);
  EXPECT_EQ((*back)[0].job_log->content, "a\nb\n");
  EXPECT_EQ((*back)[0].job_log->bytes, 900);
  EXPECT_EQ((*back)[0].job_log->left_out, 896);
  const auto bare = ParseCallbackList(R"([{"logId":1,"handleCode":200,"jobLog":{"content":"x\n"}}])");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ((*bare)[0].job_log->bytes, 2) << "the content's size";
  EXPECT_EQ((*bare)[0].job_log->left_out, 0);
  EXPECT_FALSE((*ParseCallbackList(R"([{"logId":1,"handleCode":200,"jobLog":null}])"))[0].job_log);
  auto err = ErrorOf(
      ParseCallbackList(R"([{"logId":1,"handleCode":200},{"logId":2,"handleCode":200,"jobLog":{}}])"));
  EXPECT_THAT(err, HasSubstr("[1].jobLog.content': is required"));
  err = ErrorOf(ParseCallbackList(R"([{"logId":1,"handleCode":200,"jobLog":"text"}])"));
  EXPECT_THAT(err, HasSubstr("[0].jobLog': expected an object"));
  err = ErrorOf(
      ParseCallbackList(R"([{"logId":1,"handleCode":200,"jobLog":{"content":"","bytes":5,"leftOut":9}}])"));
  EXPECT_THAT(err, HasSubstr("[0].jobLog.leftOut': must be from 0 to bytes (5), got 9"));
}

TEST(Protocol, CallbackCarriesTheHandlerStartAsAnExtensionField) {
  const auto j = ToJson(HandleCallbackParam{
      .log_id = 7, .log_date_tim = 1000, .handle_code = 200, .handle_msg = "", .handle_start_ms = 1012});
  EXPECT_EQ(j.at("handleStartTime"), 1012);
  const auto back = ParseCallbackList(json::array({j}).dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)[0].handle_start_ms, 1012);
  const auto plain = ParseCallbackList(R"([{"logId":1,"handleCode":200}])");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)[0].handle_start_ms, 0);
  auto err = ErrorOf(ParseCallbackList(R"([{"logId":1,"handleCode":200,"handleStartTime":-5}])"));
  EXPECT_THAT(err, HasSubstr("[0].handleStartTime"));
  EXPECT_THAT(err, HasSubstr("epoch milliseconds"));
  EXPECT_THAT(err, HasSubstr("-5"));
  err = ErrorOf(ParseCallbackList(R"([{"logId":1,"handleCode":200,"handleStartTime":"soon"}])"));
  EXPECT_THAT(err, HasSubstr("handleStartTime"));
}

// Ahead-of-time dispatch: runAtMs on a /run, runAt and clockMs on a registration. Sent only when set, so
// what goes to an XXL-JOB executor or admin stays byte for byte XXL-JOB's.
TEST(Protocol, RunAtAndTheRegistrationsCapabilityAreExtensionFieldsSentOnlyWhenSet) {
  TriggerParam t;
  t.job_id = 1;
  t.log_id = 2;
  EXPECT_FALSE(ToJson(t).contains("runAtMs"));
  t.run_at_ms = 1'767'225'601'000;
  EXPECT_EQ(ToJson(t).at("runAtMs"), 1'767'225'601'000);
  const auto back = ParseTriggerParam(ToJson(t).dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->run_at_ms, 1'767'225'601'000);
  auto err = ErrorOf(ParseTriggerParam(R"({"jobId":1,"logId":2,"runAtMs":-1})"));
  EXPECT_THAT(err, HasSubstr("runAtMs"));
  EXPECT_THAT(err, HasSubstr("epoch milliseconds"));
  EXPECT_FALSE(ToJson(t).contains("replaceHeld"));
  t.replace_held = true;
  EXPECT_EQ(ToJson(t).at("replaceHeld"), true);
  EXPECT_TRUE(ParseTriggerParam(ToJson(t).dump())->replace_held);
  EXPECT_THAT(ErrorOf(ParseTriggerParam(R"({"jobId":1,"logId":2,"replaceHeld":"yes"})")),
              HasSubstr("'replaceHeld'"));

  RegistryParam r;
  r.registry_key = "app";
  r.registry_value = "http://127.0.0.1:9999/";
  EXPECT_EQ(ToJson(r).size(), 3U) << "what an XXL-JOB executor sends";
  r.run_at = true;
  EXPECT_EQ(ToJson(r).size(), 4U) << "no clock until it is measured";
  r.clock_offset_ms = -7;
  r.clock_error_ms = 2;
  const auto reg = ParseRegistryParam(ToJson(r).dump());
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_TRUE(reg->run_at);
  EXPECT_EQ(reg->clock_offset_ms, -7);
  EXPECT_EQ(reg->clock_error_ms, 2);
  err = ErrorOf(ParseRegistryParam(R"({"registryKey":"a","registryValue":"v","runAt":"yes"})"));
  EXPECT_THAT(err, HasSubstr("runAt"));
  EXPECT_THAT(err, HasSubstr("true or false"));
  err = ErrorOf(ParseRegistryParam(R"({"registryKey":"a","registryValue":"v","clockOffsetMs":3})"));
  EXPECT_THAT(err, HasSubstr("clockErrorMs"));
  EXPECT_THAT(err, HasSubstr("required"));
  err = ErrorOf(
      ParseRegistryParam(R"({"registryKey":"a","registryValue":"v","clockOffsetMs":3,"clockErrorMs":-1})"));
  EXPECT_THAT(err, HasSubstr("clockErrorMs"));
  EXPECT_THAT(err, HasSubstr("-1"));
}

TEST(Protocol, RegistryParamNeedsNonBlankFields) {
  std::string err;
  const auto p = ParseRegistryParam(
      R"({"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://127.0.0.1:9999/"})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->registry_key, "app");
  err = ErrorOf(ParseRegistryParam(R"({"registryKey":" ","registryValue":"http://a:1/"})"));
  EXPECT_THAT(err, HasSubstr("registryKey"));
  err = ErrorOf(ParseRegistryParam(R"({"registryGroup":"OTHER","registryKey":"a","registryValue":"v"})"));
  EXPECT_THAT(err, HasSubstr("EXECUTOR or ADMIN"));
  err = ErrorOf(ParseRegistryParam(R"({"registryKey":"a"})"));
  EXPECT_THAT(err, HasSubstr("registryValue"));
}

TEST(Protocol, LogParamAcceptsBothDateSpellings) {
  std::string err;
  auto p = ParseLogParam(R"({"logDateTim":5,"logId":9,"fromLineNum":3})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->log_date_tim, 5);
  EXPECT_EQ(p->from_line_num, 3);
  p = ParseLogParam(R"({"logDateTime":6,"logId":9,"fromLineNum":0})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->log_date_tim, 6);
  EXPECT_EQ(p->from_line_num, 1);
}

TEST(Protocol, EnvelopeCarriesContentAndDataAndReadsEither) {
  const auto j = ToJson(Envelope::Success(ToJson(LogResult{1, 2, "a\nb\n", false})));
  EXPECT_EQ(j.at("content"), j.at("data"));
  EXPECT_TRUE(j.at("msg").is_null());
  std::string err;
  auto e = ParseEnvelope(
      R"({"code":200,"msg":null,"data":{"fromLineNum":1,"toLineNum":0,"logContent":"","end":true}})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->ok());
  const auto r = ParseLogResult(e->content);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->is_end);
  e = ParseEnvelope(R"({"code":500,"msg":"The access token is wrong."})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->ok());
  EXPECT_EQ(e->msg, "The access token is wrong.");
  EXPECT_FALSE(ParseEnvelope(R"({"msg":"no code"})").ok());
}

}  // namespace

namespace {

TEST(Protocol, TokenMatchesOnlyTheExactToken) {
  using cronwheel::xxljob::TokenMatches;
  EXPECT_TRUE(TokenMatches("s3cret", "s3cret"));
  EXPECT_FALSE(TokenMatches("s3cret ", "s3cret"));
  EXPECT_FALSE(TokenMatches("", "s3cret"));
  EXPECT_FALSE(TokenMatches("S3cret", "s3cret"));
  EXPECT_FALSE(TokenMatches("s3cre", "s3cret"));  // a prefix is not the token
  EXPECT_TRUE(TokenMatches("anything", ""));      // no token configured
}

}  // namespace

namespace {

// Found by fuzz_protocol: nlohmann throws out_of_range (not parse_error) for a number that overflows a
// double; every parser must turn that into an error, not an exception.
TEST(Protocol, AnOverflowingNumberIsAnErrorNotAnException) {
  std::string err;
  err = ErrorOf(cronwheel::xxljob::ParseCallbackList(R"({"callbackList":[{"logId":12E888834}]})"));
  EXPECT_THAT(err, ::testing::HasSubstr("not valid JSON"));
  err = ErrorOf(cronwheel::xxljob::ParseTriggerParam(R"({"jobId":1e999,"logId":1})"));
  EXPECT_THAT(err, ::testing::HasSubstr("not valid JSON"));
  EXPECT_FALSE(cronwheel::xxljob::ParseEnvelope(R"({"code":-1e400})").ok());
}

// Found by the bad-input e2e suite: a body of 100 000 '[' crashed the executor (printing it for the error
// message recursed once per level). The parse stops at the first level too deep; brackets in strings are
// text.
// cpp-httplib 0.11 reads bodies only for POST, PUT, PATCH and DELETE: any other method with a body is one
// both servers must refuse (the body would be read as the next request).
TEST(Protocol, ABodyIsLeftUnreadOnlyOnMethodsHttplibDoesNotReadBodiesFor) {
  using cronwheel::xxljob::HasUnreadBody;
  for (const char* m : {"POST", "PUT", "PATCH", "DELETE"}) {
    EXPECT_FALSE(HasUnreadBody(m, true, "12")) << m;
  }
  EXPECT_FALSE(HasUnreadBody("GET", false, ""));
  EXPECT_FALSE(HasUnreadBody("GET", false, "0"));
  EXPECT_TRUE(HasUnreadBody("GET", false, "5"));
  EXPECT_TRUE(HasUnreadBody("GET", true, ""));
  EXPECT_TRUE(HasUnreadBody("OPTIONS", false, "1"));
}

TEST(Protocol, DeepNestingIsAnErrorNotACrash) {
  using cronwheel::kMaxJsonDepth;
  std::string err;
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  err = ErrorOf(cronwheel::xxljob::ParseTriggerParam(deep));
  EXPECT_THAT(err, ::testing::HasSubstr("deeper than 64 levels"));
  err = ErrorOf(cronwheel::xxljob::ParseCallbackList(deep));
  EXPECT_THAT(err, ::testing::HasSubstr("deeper than 64 levels"));
  std::string objects;
  for (int i = 0; i < 100'000; ++i)
    objects += "{\"a\":";
  err = ErrorOf(cronwheel::xxljob::ParseJobIdParam("{\"jobId\":" + objects));
  EXPECT_THAT(err, ::testing::HasSubstr("deeper than 64 levels"));
  // At the limit it parses; brackets in strings (escaped quotes included) are text.
  const std::string limit =
      "{\"a\":" + std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']') + "}";
  EXPECT_EQ(cronwheel::ParseJson(limit).status(), absl::OkStatus());
  EXPECT_FALSE(cronwheel::ParseJson("[" + limit + "]").ok());
  const auto text = cronwheel::ParseJson(R"({"a":"[[[[\"[[[[","b":"{{{{"})");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->at("b"), "{{{{");
  EXPECT_EQ(
      cronwheel::xxljob::ParseJobIdParam(R"({"jobId":1,"x":")" + std::string(1000, '[') + "\"}").status(),
      absl::OkStatus());
}

}  // namespace

namespace {

// Found by the bad-input e2e suite: /run with jobId 0 or -1, logId 0, or logDateTime -1 ran the handler.
TEST(Protocol, IdsArePositiveAndInstantsWithinYearsZeroToNineThousandNineHundredNinetyNine) {
  using namespace cronwheel::xxljob;
  std::string err;
  err = ErrorOf(ParseTriggerParam(R"({"jobId":0,"logId":1})"));
  EXPECT_THAT(err, ::testing::HasSubstr("'jobId': must be a positive id, got 0"));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":1,"logId":-1})"));
  EXPECT_THAT(err, ::testing::HasSubstr("'logId'"));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":1,"logId":1,"logDateTime":-1})"));
  EXPECT_THAT(err, ::testing::HasSubstr("'logDateTime'"));
  err = ErrorOf(ParseTriggerParam(R"({"jobId":1,"logId":1,"logDateTim":9223372036854775807})"));
  EXPECT_THAT(err, ::testing::HasSubstr("'logDateTim'"));
  EXPECT_EQ(ParseTriggerParam(R"({"jobId":1,"logId":1,"logDateTime":253402300799999})").status(),
            absl::OkStatus());
  err = ErrorOf(ParseJobIdParam(R"({"jobId":-2147483648})"));
  EXPECT_THAT(err, ::testing::HasSubstr("'jobId'"));
  err = ErrorOf(ParseLogParam(R"({"logId":0,"logDateTim":1})"));
  EXPECT_THAT(err, ::testing::HasSubstr("'logId'"));
  err = ErrorOf(ParseLogParam(R"({"logId":1,"logDateTim":-1})"));
  EXPECT_THAT(err, ::testing::HasSubstr("'logDateTim'"));
}

// The refusal of a log id an executor holds already: either spelling, this id only, nothing around it.
TEST(Protocol, ARepeatTriggerRefusalIsRecognisedForItsLogIdInEitherSpelling) {
  EXPECT_EQ(RepeatTriggerMsg(42), "repeat trigger job, logId:42");
  EXPECT_TRUE(IsRepeatTrigger("repeat trigger job, logId:42", 42));
  EXPECT_TRUE(IsRepeatTrigger("repeate trigger job, logId:42", 42));
  EXPECT_FALSE(IsRepeatTrigger("repeat trigger job, logId:421", 42));
  EXPECT_FALSE(IsRepeatTrigger("repeat trigger job, logId:4", 42));
  EXPECT_FALSE(IsRepeatTrigger("job handler [x] not found. repeat trigger job, logId:42", 42));
  EXPECT_FALSE(IsRepeatTrigger("", 42));
}

}  // namespace
