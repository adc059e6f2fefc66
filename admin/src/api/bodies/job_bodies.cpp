// The bodies of jobs, groups, manual triggers, schedule previews, clearing fires, and XXL-JOB
// registrations (api/request_bodies.hpp).
#include <date/date.h>
#include <date/tz.h>

#include <set>

#include "admin/api/request_bodies.hpp"
#include "admin/model/ics_import.hpp"
#include "admin/model/parent_refs.hpp"
#include "admin/model/validation.hpp"
#include "api/bodies/body_reader.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/text.hpp"
#include "ringwheel/calendar.hpp"
#include "ringwheel/schedule.hpp"

namespace cronwheel::admin {

using namespace bodies;

namespace {

// "2026-03-29T03:00:00+02:00": the instant in `zone`, with the zone's UTC offset at that instant.
std::string IsoInZone(std::int64_t ms, const date::time_zone* zone) {
  const date::sys_seconds t{std::chrono::seconds{ms / 1000}};
  return date::format("%FT%T%Ez", date::make_zoned(zone, t));
}

}  // namespace

Result<void> CheckRegistration(const xxljob::RegistryParam& p) {
  if (!ValidAppName(p.registry_key)) {
    return Error::Invalid(
        fmt::format("field 'registryKey': '{}' is not a valid AppName: 4 to 64 letters, digits, '.', '_' or "
                    "'-', starting "
                    "with a letter or digit",
                    p.registry_key.substr(0, 80)));
  }
  if (const auto address = net::ParseExecutorAddress(p.registry_value); !address.ok()) {
    return Error::Invalid(fmt::format("field 'registryValue': {}", std::string(address.status().message())));
  }
  return {};
}

// The latest instant a job's window may name: 2200-01-01T00:00:00Z, past the end of ringwheel's search.
constexpr std::int64_t kMaxInstantMs = 7'258'118'400'000;

Result<Job> ReadJobBody(const json& body, Job job, bool create) {
  FieldErrors errors;
  BodyReader r(body, errors);
  r.Int("group_id", job.group_id, create, 1, INT32_MAX);
  r.String("description", job.description, create, 255, 1);
  r.String("author", job.author, false, 64);
  r.String("alarm_email", job.alarm_email, false, 255);
  r.String("alarm_webhook", job.alarm_webhook, false, 1024);
  r.String("schedule_type", job.schedule_type, create, 16);
  r.String("schedule_conf", job.schedule_conf, false, 255);
  r.String("time_zone", job.time_zone, false, 64);
  r.Enum("misfire_strategy", job.misfire_strategy, false, &ParseMisfireStrategy);
  r.Enum("route_strategy", job.route_strategy, false, &ParseRouteStrategy);
  r.String("handler", job.handler, false, 255);
  r.String("param", job.param, false, kMaxJobParamBytes);
  r.Enum("block_strategy", job.block_strategy, false, &ParseBlockStrategy);
  r.Int("timeout_s", job.timeout_s, false, 0, 604800);
  r.Int("retry_count", job.retry_count, false, 0, 100);
  r.Int("retry_backoff_s", job.retry_backoff_s, false, 0, 86400);
  r.Enum("glue_type", job.glue_type, false, &ParseGlueType);
  r.String("glue_source", job.glue_source, false, kMaxGlueSourceBytes);
  r.String("glue_remark", job.glue_remark, false, 128);
  r.IntArray("child_job_ids", job.child_job_ids, false, 100);
  r.StringArray("tags", job.tags, false, 100);
  r.IntArray("alert_channel_ids", job.alert_channel_ids, false, 50, "an alert channel id");
  r.IntArray("calendar_ids", job.calendar_ids, false, 20, "a calendar id");
  r.Int64("start_ms", job.start_ms, false, 0, kMaxInstantMs);
  r.Int64("end_ms", job.end_ms, false, 0, kMaxInstantMs);
  r.Enum("concurrency_policy", job.concurrency_policy, false, &ParseConcurrencyPolicy);
  r.Int("max_concurrent", job.max_concurrent, false, 0, kMaxConcurrentLimit);
  r.Bool("enabled", job.enabled, false);
  r.RejectUnknown();
  // A parameter naming a parent's result must take any value as data (admin/model/parent_refs.hpp): it is a
  // child job's ({{parent.…}}) or, without a parameter of its node, a workflow node's.
  for (const auto whose : {ParamRefs::kChildJob, ParamRefs::kWorkflowNode}) {
    if (const auto why = CheckParamRefs(job.param, whose)) {
      errors.push_back({"param", "param: " + *why, "template"});
      break;
    }
  }
  return Checked(std::move(job), std::move(errors), "the job is not valid");
}

Result<AlertChannel> ReadAlertChannelBody(const json& body, AlertChannel c, bool create,
                                          const std::vector<std::string>& webhook_allow) {
  FieldErrors errors;
  BodyReader r(body, errors);
  r.String("name", c.name, create, 64, 1);
  r.Enum("kind", c.kind, create, &ParseAlertKind);
  r.Enum("preset", c.preset, false, &ParseAlertPreset);
  r.String("target", c.target, create, 2048, 1);
  r.String("body_template", c.body_template, false, std::size_t{16} * 1024);
  r.String("secret", c.secret, false, 1024);
  r.StringArray("events", c.events, false, 10);
  r.Int("threshold", c.threshold, false, 1, kMaxAlertThreshold);
  r.Int("silence_s", c.silence_s, false, 0, static_cast<int>(kMaxAlertSilenceMs / 1000));
  r.RejectUnknown();
  if (!errors.empty()) return Error::Invalid("the alert channel is not valid", std::move(errors));
  if (c.kind == AlertKind::kEmail) c.preset = AlertPreset::kJson;
  CheckAlertChannel(c, webhook_allow, errors);
  return Checked(std::move(c), std::move(errors), "the alert channel is not valid");
}

Result<JobGroup> ReadGroupBody(const json& body, JobGroup g, bool create) {
  FieldErrors errors;
  BodyReader r(body, errors);
  r.String("app_name", g.app_name, create, 64, 4);
  r.String("title", g.title, create, 64, 1);
  r.Enum("address_type", g.address_type, false, &ParseAddressType);
  r.StringArray("addresses", g.addresses, false, 1000);
  r.OptionalString("access_token", g.access_token, 255);
  r.IntArray("alert_channel_ids", g.alert_channel_ids, false, 50, "an alert channel id");
  r.Bool("allow_scripts", g.allow_scripts, false);
  r.RejectUnknown();
  if (!g.app_name.empty() && !ValidAppName(g.app_name)) {
    errors.push_back(
        {"app_name",
         fmt::format("'{}' is not valid: 4 to 64 letters, digits, '.', '_' or '-', starting with a "
                     "letter or digit",
                     g.app_name),
         "format",
         {{"what", "app_name"}}});
  }
  for (auto& a : g.addresses) {
    if (const auto address = net::ParseExecutorAddress(a); !address.ok()) {
      errors.push_back(
          {"addresses", std::string(address.status().message()), "format", {{"what", "address"}}});
    } else {
      a = net::NormalizeAddress(a);
    }
  }
  if (g.address_type == AddressType::kManual && g.addresses.empty()) {
    errors.push_back({"addresses", "a MANUAL group needs at least one executor address", "required"});
  }
  if (g.access_token && g.access_token->empty()) g.access_token.reset();
  return Checked(std::move(g), std::move(errors), "the group is not valid");
}

Result<PreviewBody> ReadPreviewBody(const json& body) {
  PreviewBody out;
  FieldErrors errors;
  if (CheckObject(body,
                  {"schedule_type", "schedule_conf", "time_zone", "count", "from_ms", "calendar_ids",
                   "start_ms", "end_ms"},
                  errors)) {
    out.schedule_type = StringField(body, "schedule_type", true, errors).value_or("");
    out.schedule_conf = StringField(body, "schedule_conf", false, errors).value_or("");
    out.time_zone = StringField(body, "time_zone", false, errors).value_or("UTC");
    out.count = static_cast<int>(IntField(body, "count", 1, kMaxPreviewCount, errors).value_or(5));
    out.from_ms = IntField(body, "from_ms", 0, 253'402'300'799'000, errors);  // up to year 9999
    BodyReader r(body, errors);
    r.IntArray("calendar_ids", out.calendar_ids, false, 20, "a calendar id");
    r.Int64("start_ms", out.start_ms, false, 0, kMaxInstantMs);
    r.Int64("end_ms", out.end_ms, false, 0, kMaxInstantMs);
  }
  return Checked(std::move(out), std::move(errors), "the preview request is not valid");
}

Result<json> PreviewFires(const PreviewBody& p, std::int64_t now_ms, std::span<const JobCalendar> calendars) {
  const auto schedule = ringwheel::Schedule::Parse(p.schedule_type, p.schedule_conf, p.time_zone);
  if (!schedule.ok()) {
    return Error::Invalid(
        "the schedule is not valid",
        {{cronwheel::ErrorField(schedule.status()), std::string(schedule.status().message()), "schedule"}});
  }
  std::vector<ringwheel::Calendar> compiled;
  compiled.reserve(calendars.size());
  for (const auto& c : calendars) {
    auto one = c.Compile();
    if (!one.ok()) {
      return Error::Invalid("a calendar is not valid",
                            {{"calendar_ids", fmt::format("calendar {} ('{}'): {}", c.id, c.name,
                                                          std::string(one.status().message()))}});
    }
    compiled.push_back(*std::move(one));
  }
  std::vector<const ringwheel::Calendar*> kept;
  kept.reserve(compiled.size());
  for (const auto& c : compiled)
    kept.push_back(&c);
  const ringwheel::FireWindow window(*schedule, kept, p.start_ms, p.end_ms);
  // The first instant of each day a calendar excluded between `from` and `to` (nullopt: the end).
  json excluded = json::array();
  constexpr std::size_t kMaxExcluded = 10;
  const auto note_excluded = [&](std::int64_t from, std::optional<std::int64_t> to) {
    auto b = schedule->NextFireMs(from);
    while (b && (!to || *b < *to) && excluded.size() < kMaxExcluded) {
      std::size_t k = 0;
      while (k < compiled.size() && !compiled[k].Excludes(*b))
        ++k;
      if (k == compiled.size()) break;  // outside the window, not a calendar's day
      const auto date = compiled[k].LocalDate(*b);
      const auto& days = calendars[k].days;
      const auto it = std::lower_bound(days.begin(), days.end(), date,
                                       [](const CalendarDay& d, std::int32_t v) { return d.day < v; });
      excluded.push_back({{"ms", *b},
                          {"iso", IsoInZone(*b, schedule->zone())},
                          {"date", ringwheel::FormatDate(date)},
                          {"calendar", calendars[k].name},
                          {"name", it != days.end() && it->day == date ? it->name : std::string()}});
      b = schedule->NextFireMs(std::max(*b, compiled[k].NextDayStartMs(*b) - 1));
    }
  };
  json fires = json::array();
  std::int64_t at = p.from_ms.value_or(now_ms);
  for (int i = 0; i < p.count; ++i) {
    const auto next = window.NextFireMs(at);
    if (!compiled.empty()) note_excluded(at, next);
    if (!next) break;
    fires.push_back({{"ms", *next}, {"iso", IsoInZone(*next, schedule->zone())}});
    at = *next;
  }
  return json{{"time_zone", schedule->zone_name()}, {"fires", fires}, {"excluded", excluded}};
}

Result<JobCalendar> ReadCalendarBody(const json& body, JobCalendar c, bool create,
                                     const ringwheel::Clock& clock) {
  const std::int64_t now_ms = clock.NowMs();
  FieldErrors errors;
  BodyReader r(body, errors);
  r.String("name", c.name, create, 64, 1);
  r.String("description", c.description, false, 255);
  r.Enum("kind", c.kind, false, &ParseCalendarKind);
  r.String("time_zone", c.time_zone, false, 64);
  if (c.time_zone.empty()) c.time_zone = "UTC";
  if (const json* days = r.Get("days", false); days != nullptr) {
    if (!days->is_array() || days->size() > kMaxCalendarDays) {
      errors.push_back({"days",
                        fmt::format("must be an array of at most {} days: \"YYYY-MM-DD\" or {{\"date\": "
                                    "\"YYYY-MM-DD\", \"name\": \"...\"}}",
                                    kMaxCalendarDays),
                        "type"});
    } else {
      std::vector<CalendarDay> read;
      for (const auto& d : *days) {
        const auto* text = d.is_string() ? &d : d.is_object() && d.contains("date") ? &d["date"] : nullptr;
        const auto day = text != nullptr && text->is_string() ? ringwheel::ParseDate(text->get<std::string>())
                                                              : absl::InvalidArgumentError("invalid date");
        if (!day.ok()) {
          errors.push_back({"days",
                            fmt::format("{} is not a day: {}", Utf8Prefix(d.dump(), 80),
                                        std::string(day.status().message())),
                            "format",
                            {{"what", "date"}}});
          break;
        }
        std::string name;
        if (d.is_object() && d.contains("name")) {
          if (!d["name"].is_string()) {
            errors.push_back({"days",
                              fmt::format("the name of {} must be a string", ringwheel::FormatDate(*day)),
                              "type"});
            break;
          }
          name = d["name"].get<std::string>();
        }
        read.push_back({.day = *day, .name = std::move(name)});
      }
      c.days = std::move(read);
    }
  }
  std::string ics;
  r.String("ics", ics, false, kMaxIcsBytes);
  const auto year =
      static_cast<int>(date::year_month_day(date::floor<date::days>(date::sys_time<std::chrono::milliseconds>(
                                                std::chrono::milliseconds(now_ms))))
                           .year());
  const auto first_of = [](int y) {
    return static_cast<std::int32_t>(date::sys_days(date::year{y} / 1 / 1).time_since_epoch().count());
  };
  std::int32_t from = first_of(year);
  std::int32_t to = first_of(year + 10) - 1;
  for (const auto& [field, out] :
       {std::pair<const char*, std::int32_t*>{"ics_from", &from}, {"ics_to", &to}}) {
    std::string text;
    r.String(field, text, false, 10);
    if (text.empty()) continue;
    const auto day = ringwheel::ParseDate(text);
    if (!day.ok()) {
      errors.push_back({field, std::string(day.status().message()), "format", {{"what", "date"}}});
    } else {
      *out = *day;
    }
  }
  r.RejectUnknown();
  if (!ics.empty() && errors.empty()) {
    const auto imported = ImportIcs(ics, from, to, clock);
    if (!imported) {
      // A limit passed carries its own FieldError (code "limit"); any other problem is the file's format.
      if (!imported.error().fields.empty()) {
        errors.push_back(imported.error().fields.front());
      } else {
        errors.push_back({"ics", imported.error().message, "format", {{"what", "ics"}}});
      }
    } else {
      c.days.insert(c.days.end(), imported->days.begin(), imported->days.end());
      if (c.name.empty()) c.name = imported->calendar_name;
    }
  }
  NormaliseDays(c.days);
  if (errors.empty()) CheckCalendar(c, errors);
  return Checked(std::move(c), std::move(errors), "the calendar is not valid");
}

Result<DrainBody> ReadDrainBody(const json& body) {
  DrainBody out;
  FieldErrors errors;
  BodyReader r(body, errors);
  r.String("address", out.address, true, 255, 1);
  r.RejectUnknown();
  if (!errors.empty()) return Error::Invalid("the drain request is not valid", std::move(errors));
  return out;
}

Result<TriggerBody> ReadTriggerBody(const json& body) {
  TriggerBody out;
  FieldErrors errors;
  if (!body.is_object()) {
    errors.push_back(NotAnObject(body));
    return Error::Invalid("the trigger request is not valid", std::move(errors));
  }
  for (const auto& [k, v] : body.items()) {
    if ((k == "param" || k == "address") && !v.is_string() && !v.is_null()) {
      errors.push_back(WrongType(k, v, "string", "a string"));
    } else if (k == "param") {
      if (v.is_string()) out.param = v.get<std::string>();
      if (out.param && out.param->size() > kMaxJobParamBytes) {
        errors.push_back(
            {"param",
             fmt::format("must be at most {} bytes, got {}", kMaxJobParamBytes, out.param->size()),
             "length",
             {{"min", 0}, {"max", kMaxJobParamBytes}, {"actual", out.param->size()}}});
      }
    } else if (k == "address") {
      if (v.is_string()) out.address = v.get<std::string>();
    } else {
      errors.push_back({k,
                        "unknown field; the fields are: param, address",
                        "unknown_field",
                        {{"allowed", "param, address"}}});
    }
  }
  return Checked(std::move(out), std::move(errors), "the trigger request is not valid");
}

std::string_view ToString(BulkAction a) {
  switch (a) {
    case BulkAction::kStart:
      return "START";
    case BulkAction::kStop:
      return "STOP";
    case BulkAction::kTrigger:
      return "TRIGGER";
    case BulkAction::kDelete:
      return "DELETE";
    case BulkAction::kTag:
      return "TAG";
    case BulkAction::kUntag:
      return "UNTAG";
  }
  return "START";
}

Result<BulkBody> ReadBulkBody(const json& body) {
  BulkBody out;
  FieldErrors errors;
  BodyReader r(body, errors);
  std::string action;
  r.String("action", action, true, 16, 1);
  r.IntArray("job_ids", out.job_ids, true, kMaxBulkJobs);
  r.OptionalString("param", out.param, kMaxJobParamBytes);
  const bool has_tags = body.is_object() && body.contains("tags");
  r.StringArray("tags", out.tags, false, kMaxBulkJobs);
  r.RejectUnknown();
  constexpr const char* kActions = "START, STOP, TRIGGER, DELETE, TAG, UNTAG";
  bool known = false;
  for (const auto a : {BulkAction::kStart, BulkAction::kStop, BulkAction::kTrigger, BulkAction::kDelete,
                       BulkAction::kTag, BulkAction::kUntag}) {
    if (action == ToString(a)) {
      out.action = a;
      known = true;
    }
  }
  if (!known && !action.empty()) {
    errors.push_back({"action",
                      fmt::format("'{}' is not valid; use one of {}", action, kActions),
                      "enum",
                      {{"allowed", kActions}}});
  }
  if (body.is_object() && body.contains("job_ids") && body["job_ids"].is_array() && body["job_ids"].empty()) {
    errors.push_back({"job_ids",
                      fmt::format("give 1 to {} job ids", kMaxBulkJobs),
                      "length",
                      {{"min", 1}, {"max", kMaxBulkJobs}, {"actual", 0}}});
  }
  std::set<int> seen;
  for (const int id : out.job_ids) {
    if (!seen.insert(id).second) {
      errors.push_back({"job_ids", fmt::format("job {} is listed twice: list each job once", id)});
      break;
    }
  }
  if (out.param && known && out.action != BulkAction::kTrigger) {
    errors.push_back({"param", fmt::format("only TRIGGER takes a param, not {}", action)});
  }
  const bool tagging = out.action == BulkAction::kTag || out.action == BulkAction::kUntag;
  if (known && tagging && !has_tags) errors.push_back(Required("tags"));
  if (known && !tagging && has_tags) {
    errors.push_back({"tags", fmt::format("only TAG and UNTAG take tags, not {}", action)});
  }
  if (known && tagging && has_tags && out.tags.empty()) {
    errors.push_back({"tags",
                      fmt::format("give 1 to {} tags", kMaxJobTags),
                      "length",
                      {{"min", 1}, {"max", kMaxJobTags}, {"actual", 0}}});
  }
  CheckJobTags(out.tags, errors);
  return Checked(std::move(out), std::move(errors), "the bulk request is not valid");
}

Result<RunOnceBody> ReadRunOnceBody(const json& body, std::int64_t now_ms) {
  RunOnceBody out;
  FieldErrors errors;
  constexpr const char* kMessage = "the run-once request is not valid";
  if (!CheckObject(body, {"at_ms", "delay_ms", "param"}, errors))
    return Error::Invalid(kMessage, std::move(errors));
  const auto at = IntField(body, "at_ms", now_ms, now_ms + kMaxRunOnceAheadMs, errors);
  const auto delay = IntField(body, "delay_ms", 0, kMaxRunOnceAheadMs, errors);
  out.param = StringField(body, "param", false, errors);
  if (out.param && out.param->size() > kMaxJobParamBytes) {
    errors.push_back({"param",
                      fmt::format("must be at most {} bytes, got {}", kMaxJobParamBytes, out.param->size()),
                      "length",
                      {{"min", 0}, {"max", kMaxJobParamBytes}, {"actual", out.param->size()}}});
  }
  const bool has_at = body.contains("at_ms") && !body["at_ms"].is_null();
  const bool has_delay = body.contains("delay_ms") && !body["delay_ms"].is_null();
  if (has_at == has_delay) {
    errors.push_back(
        {has_at ? "delay_ms" : "at_ms",
         fmt::format("give exactly one of at_ms (an instant in epoch ms, from now, {}, to a year "
                     "ahead) and delay_ms (milliseconds from now)",
                     now_ms),
         "one_of",
         {{"fields", "at_ms, delay_ms"}}});
  }
  if (at) out.fire_at_ms = *at;
  if (delay) out.fire_at_ms = now_ms + *delay;
  // The time ring sends in whole seconds: an instant between two seconds fires at the later one, never early.
  out.fire_at_ms = (out.fire_at_ms + 999) / 1000 * 1000;
  return Checked(std::move(out), std::move(errors), kMessage);
}

Result<LogClear> ReadLogClearBody(const json& body) {
  LogClear c;
  FieldErrors errors;
  if (CheckObject(body, {"group_id", "job_id", "older_than_days", "keep_last"}, errors)) {
    const auto group = IntField(body, "group_id", 1, INT32_MAX, errors);
    const auto job = IntField(body, "job_id", 1, INT32_MAX, errors);
    const auto older = IntField(body, "older_than_days", 0, 36'500, errors);
    const auto keep = IntField(body, "keep_last", 0, 100'000'000, errors);
    if (group) c.group_id = static_cast<int>(*group);
    if (job) c.job_id = static_cast<int>(*job);
    if (older) c.older_than_days = static_cast<int>(*older);
    if (keep) c.keep_last = static_cast<int>(*keep);
    if (errors.empty() && (c.older_than_days.has_value() == c.keep_last.has_value())) {
      errors.push_back(
          {c.keep_last ? "keep_last" : "older_than_days",
           "give exactly one of older_than_days (delete fires older than N days) or keep_last (keep "
           "the newest N)"});
    }
  }
  return Checked(std::move(c), std::move(errors), "the clear request is not valid");
}

}  // namespace cronwheel::admin
