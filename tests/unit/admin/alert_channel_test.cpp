// Alert channels (admin/model/alert_channel.hpp): templates render each value with its format's escaping,
// a channel's fields are checked before it is saved, and the DingTalk and Feishu signatures match what
// those services compute (vectors computed with Python's hmac and base64 modules).
#include "admin/model/alert_channel.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "admin/results/alarm.hpp"

namespace {

using cronwheel::admin::AlarmEvent;
using cronwheel::admin::AlarmValues;
using cronwheel::admin::AlertChannel;
using cronwheel::admin::AlertKind;
using cronwheel::admin::AlertPreset;
using cronwheel::admin::DefaultAlarmSender;
using cronwheel::admin::FieldErrors;
using cronwheel::admin::PresetTemplate;
using cronwheel::admin::RenderAlertTemplate;
using nlohmann::json;
using ::testing::HasSubstr;

AlarmEvent Hostile() {
  return {.log_id = 42,
          .job_id = 7,
          .job_description = "nightly \"billing\"\n}, \"injected\": {\"x\": 1",
          .app_name = "billing-app",
          .trigger_type = "CRON",
          .scheduled_ms = 1767225600000,
          .trigger_code = 200,
          .trigger_msg = "sent",
          .handle_code = 500,
          .handle_msg = "exit 1\\n\ttab \x01 and \xff bad UTF-8"};
}

std::vector<std::string> Fields(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors)
    out.push_back(e.field);
  return out;
}

TEST(AlertTemplate, EveryPresetRendersToTheBodyItsServiceDocumentsWhateverTheValuesHold) {
  const auto values = AlarmValues(Hostile());
  const auto text = DefaultAlarmSender::Describe(Hostile());
  for (const auto preset : {AlertPreset::kSlack, AlertPreset::kDingTalk, AlertPreset::kWeCom,
                            AlertPreset::kFeishu, AlertPreset::kJson}) {
    SCOPED_TRACE(std::string(ToString(preset)));
    const auto body = RenderAlertTemplate(*PresetTemplate(preset), values, true);
    ASSERT_TRUE(body) << body.error().message;
    const auto j = json::parse(*body);  // throws on a broken body
    ASSERT_TRUE(j.is_object());
    EXPECT_FALSE(j.contains("injected")) << *body;
    switch (preset) {
      case AlertPreset::kSlack:
        EXPECT_EQ(j.size(), 1U);
        EXPECT_THAT(j.at("text").get<std::string>(), HasSubstr("nightly \"billing\"\n}"));
        break;
      case AlertPreset::kDingTalk:
      case AlertPreset::kWeCom:
        EXPECT_EQ(j.at("msgtype"), "text");
        EXPECT_THAT(j.at("text").at("content").get<std::string>(), HasSubstr("job 7 (nightly"));
        break;
      case AlertPreset::kFeishu:
        EXPECT_EQ(j.at("msg_type"), "text");
        EXPECT_THAT(j.at("content").at("text").get<std::string>(), HasSubstr("Result: code 500"));
        break;
      default:
        // The body of a job's alarm_webhook, field for field.
        EXPECT_EQ(j.at("event"), "fire_failed");
        EXPECT_EQ(j.at("log_id"), 42);
        EXPECT_EQ(j.at("job_id"), 7);
        EXPECT_EQ(j.at("job_description"), Hostile().job_description);
        EXPECT_EQ(j.at("scheduled_ms"), 1767225600000);
        EXPECT_EQ(j.at("handle_code"), 500);
        EXPECT_THAT(j.at("handle_msg").get<std::string>(), HasSubstr("\\n\ttab \x01 and "));
        EXPECT_EQ(j.at("text").get<std::string>().substr(0, 20), text.substr(0, 20));
    }
  }
}

TEST(AlertTemplate, TextIsSubstitutedAsItIsAndANameOutsideTheFieldsIsRefusedByName) {
  const auto values = AlarmValues(Hostile());
  auto r = RenderAlertTemplate("Job {{ job_id }} of {{app_name}} at {{scheduled}}: {{handle_code}}", values,
                               false);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "Job 7 of billing-app at 2026-01-01T00:00:00Z: 500");
  // A value holding "{{...}}" is not read again as a template.
  auto event = Hostile();
  event.job_description = "{{secret}}";
  r = RenderAlertTemplate("{{job_description}}", AlarmValues(event), false);
  EXPECT_EQ(*r, "{{secret}}");
  r = RenderAlertTemplate("{{jb_id}}", values, false);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("unknown field {{jb_id}}"));
  EXPECT_THAT(r.error().message, HasSubstr("job_id"));
  r = RenderAlertTemplate("a {{job_id", values, false);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("has no '}}'"));
}

TEST(AlertChannelCheck, NamesEachFieldThatIsNotValid) {
  const std::vector<std::string> allow = {"https://hooks.example.com", "https://oapi.dingtalk.com/robot"};
  const auto check = [&](const AlertChannel& c) {
    FieldErrors errors;
    CheckAlertChannel(c, allow, errors);
    return Fields(errors);
  };
  const AlertChannel ding{.name = "ops",
                          .kind = AlertKind::kWebhook,
                          .preset = AlertPreset::kDingTalk,
                          .target = "https://oapi.dingtalk.com/robot/send?access_token=abc123",
                          .secret = "SECxyz"};
  EXPECT_TRUE(check(ding).empty()) << "a query is allowed (DingTalk's access_token)";
  auto c = ding;
  c.target = "https://evil.example.org/robot/send?access_token=abc";
  EXPECT_EQ(check(c), std::vector<std::string>{"target"}) << "outside alarm_webhook_allow";
  c = ding;
  c.target = "https://oapi.dingtalk.com/robot/send?a=b c";
  EXPECT_EQ(check(c), std::vector<std::string>{"target"}) << "a space in the query";
  c = ding;
  c.preset = AlertPreset::kSlack;
  EXPECT_EQ(check(c), std::vector<std::string>{"secret"}) << "Slack is not signed";
  c = ding;
  c.body_template = "{\"x\": 1}";
  EXPECT_EQ(check(c), std::vector<std::string>{"body_template"}) << "only CUSTOM takes a template";
  c = ding;
  c.name = "";
  EXPECT_EQ(check(c), std::vector<std::string>{"name"});

  AlertChannel custom{.name = "c", .preset = AlertPreset::kCustom, .target = "https://hooks.example.com/x"};
  EXPECT_EQ(check(custom), std::vector<std::string>{"body_template"}) << "CUSTOM needs a template";
  custom.body_template = R"({"summary": "{{title}}", "id": {{job_id}}})";
  EXPECT_TRUE(check(custom).empty());
  custom.body_template = R"({"summary": {{title}}})";
  EXPECT_EQ(check(custom), std::vector<std::string>{"body_template"}) << "a text field outside a JSON string";
  custom.body_template = R"(["{{title}}"])";
  EXPECT_EQ(check(custom), std::vector<std::string>{"body_template"}) << "not an object";
  custom.body_template = R"({"a": "{{nope}}"})";
  EXPECT_EQ(check(custom), std::vector<std::string>{"body_template"});

  AlertChannel mail{.name = "m", .kind = AlertKind::kEmail, .target = "ops@example.com, dba@example.com"};
  EXPECT_TRUE(check(mail).empty());
  mail.body_template = "Job {{job_id}} failed:\n{{text}}";
  EXPECT_TRUE(check(mail).empty()) << "e-mail takes a text template";
  mail.target = "not an address";
  EXPECT_EQ(check(mail), std::vector<std::string>{"target"});
}

TEST(AlertSigning, DingTalkAndFeishuSignaturesMatchTheServicesAlgorithms) {
  // Python: base64.b64encode(hmac.new(secret, f"{ts}\n{secret}", sha256).digest())
  EXPECT_EQ(DefaultAlarmSender::DingTalkSign(1767225600000, "SEC0123456789abcdef"),
            "B0RWzLp5DJ68eWPlqN2is7j/CJw7WP3nV1RkTFHU+F4=");
  // Python: base64.b64encode(hmac.new(f"{ts}\n{secret}", b"", sha256).digest())
  EXPECT_EQ(DefaultAlarmSender::FeishuSign(1767225600, "SEC0123456789abcdef"),
            "lhApIVyDpG9gvzJVLszopHlzeRhChg0MoDPN71YXJ1U=");
}

}  // namespace
