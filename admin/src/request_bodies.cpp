#include "admin/request_bodies.hpp"

#include <date/date.h>
#include <date/tz.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "cronwheel/net/http_address.hpp"
#include "ringwheel/schedule.hpp"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

std::string Shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// Reads typed fields of a JSON object body, collecting a FieldError per problem.
class BodyReader {
 public:
  BodyReader(const json& body, FieldErrors& errors) : body_(body), errors_(errors) {
    if (!body_.is_object())
      errors_.push_back({"", fmt::format("the body must be a JSON object, got {}", Shown(body_))});
  }

  const json* Get(const char* name, bool required) {
    known_.insert(name);
    if (!body_.is_object()) return nullptr;
    auto it = body_.find(name);
    if (it == body_.end()) {
      if (required) errors_.push_back({name, "is required"});
      return nullptr;
    }
    return &*it;
  }

  void String(const char* name, std::string& out, bool required, std::size_t max_len,
              std::size_t min_len = 0) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_string()) return Error(name, fmt::format("expected a string, got {}", Shown(*v)));
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() < min_len || s.size() > max_len) {
      return Error(name, min_len > 0
                             ? fmt::format("must be {} to {} characters, got {}", min_len, max_len, s.size())
                             : fmt::format("must be at most {} bytes, got {}", max_len, s.size()));
    }
    out = s;
  }

  void Int(const char* name, int& out, bool required, int min, int max) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_number_integer()) return Error(name, fmt::format("expected an integer, got {}", Shown(*v)));
    const auto n = v->is_number_unsigned()
                       ? static_cast<std::int64_t>(std::min<std::uint64_t>(
                             v->get<std::uint64_t>(), static_cast<std::uint64_t>(INT64_MAX)))
                       : v->get<std::int64_t>();
    if (n < min || n > max) return Error(name, fmt::format("must be from {} to {}, got {}", min, max, n));
    out = static_cast<int>(n);
  }

  void Bool(const char* name, bool& out, bool required) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_boolean()) return Error(name, fmt::format("expected true or false, got {}", Shown(*v)));
    out = v->get<bool>();
  }

  template <class E>
  void Enum(const char* name, E& out, bool required, std::optional<E> (*parse)(std::string_view)) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    const auto e = v->is_string() ? parse(v->get<std::string>()) : std::nullopt;
    if (!e) return Error(name, fmt::format("{} is not valid; use one of {}", Shown(*v), ValidValues(E{})));
    out = *e;
  }

  void IntArray(const char* name, std::vector<int>& out, bool required, std::size_t max_items) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_array()) return Error(name, fmt::format("expected an array of ids, got {}", Shown(*v)));
    if (v->size() > max_items) return Error(name, fmt::format("at most {} items", max_items));
    std::vector<int> items;
    for (const auto& e : *v) {
      if (!e.is_number_integer() || e.get<std::int64_t>() <= 0 || e.get<std::int64_t>() > INT32_MAX) {
        return Error(name, fmt::format("{} is not a job id (a positive integer)", Shown(e)));
      }
      items.push_back(e.get<int>());
    }
    out = std::move(items);
  }

  void StringArray(const char* name, std::vector<std::string>& out, bool required, std::size_t max_items) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_array()) return Error(name, fmt::format("expected an array of strings, got {}", Shown(*v)));
    if (v->size() > max_items) return Error(name, fmt::format("at most {} items", max_items));
    std::vector<std::string> items;
    for (const auto& e : *v) {
      if (!e.is_string()) return Error(name, fmt::format("{} is not a string", Shown(e)));
      items.push_back(e.get<std::string>());
    }
    out = std::move(items);
  }

  void OptionalString(const char* name, std::optional<std::string>& out, std::size_t max_len) {
    const json* v = Get(name, false);
    if (v == nullptr) return;
    if (v->is_null()) {
      out.reset();
      return;
    }
    std::string s;
    String(name, s, false, max_len);
    out = s;
  }

  // Every field not read is unknown.
  void RejectUnknown() {
    if (!body_.is_object()) return;
    for (const auto& [k, v] : body_.items()) {
      if (!known_.contains(k)) {
        std::string list;
        for (const auto& n : known_)
          list += (list.empty() ? "" : ", ") + n;
        errors_.push_back({k, fmt::format("unknown field; the fields are: {}", list)});
      }
    }
  }

  void Error(const char* name, std::string msg) { errors_.push_back({name, std::move(msg)}); }

 private:
  const json& body_;
  FieldErrors& errors_;
  std::set<std::string> known_;
};

// The JSON object `body` holds only `allowed` fields; records an error for anything else.
bool CheckObject(const json& body, const std::set<std::string>& allowed, FieldErrors& errors) {
  if (!body.is_object()) {
    errors.push_back({"", fmt::format("the body must be a JSON object, got {}", Shown(body))});
    return false;
  }
  for (const auto& [k, v] : body.items()) {
    if (!allowed.contains(k)) {
      errors.push_back({k, fmt::format("unknown field; the fields are: {}", fmt::join(allowed, ", "))});
    }
  }
  return true;
}

std::optional<std::string> StringField(const json& body, const char* name, bool required,
                                       FieldErrors& errors) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) {
    if (required) errors.push_back({name, "is required"});
    return std::nullopt;
  }
  if (!it->is_string()) {
    errors.push_back({name, fmt::format("expected a string, got {}", Shown(*it))});
    return std::nullopt;
  }
  return it->get<std::string>();
}

std::optional<std::int64_t> IntField(const json& body, const char* name, std::int64_t min, std::int64_t max,
                                     FieldErrors& errors) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX) ||
      it->get<std::int64_t>() < min || it->get<std::int64_t>() > max) {
    errors.push_back({name, fmt::format("{} is not valid: an integer from {} to {}", Shown(*it), min, max)});
    return std::nullopt;
  }
  return it->get<std::int64_t>();
}

// "2026-03-29T03:00:00+02:00": the instant in `zone`, with the zone's UTC offset at that instant.
std::string IsoInZone(std::int64_t ms, const date::time_zone* zone) {
  const date::sys_seconds t{std::chrono::seconds{ms / 1000}};
  return date::format("%FT%T%Ez", date::make_zoned(zone, t));
}

bool ValidEmailList(const std::string& list) {
  if (list.empty()) return true;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(',', start);
    auto part = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    const auto at = part.find('@');
    if (at == std::string::npos || at == 0 || at + 1 >= part.size() ||
        part.find_first_of(" <>\"\r\n") != std::string::npos) {
      return false;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return true;
}

}  // namespace

bool ValidAppName(const std::string& name) {
  if (name.size() < 4 || name.size() > 64 || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

bool ValidUsername(const std::string& s) {
  static const std::regex re("^[A-Za-z0-9._-]{3,50}$");
  return std::regex_match(s, re);
}

std::string CheckPasswordPolicy(std::string_view password) {
  if (password.size() < kMinPasswordLength)
    return fmt::format("must be at least {} characters, got {}", kMinPasswordLength, password.size());
  if (password.size() > kMaxPasswordLength)
    return fmt::format("must be at most {} characters, got {}", kMaxPasswordLength, password.size());
  return "";
}

std::string CheckRegistration(const xxljob::RegistryParam& p) {
  if (!ValidAppName(p.registry_key)) {
    return fmt::format(
        "field 'registryKey': '{}' is not a valid AppName: 4 to 64 letters, digits, '.', '_' or '-', "
        "starting "
        "with a letter or digit",
        p.registry_key.substr(0, 80));
  }
  std::string why;
  if (!cronwheel::net::ParseHttpAddress(p.registry_value, &why))
    return fmt::format("field 'registryValue': {}", why);
  return "";
}

// --- jobs and groups ---

void ReadJobBody(const json& body, Job& job, bool create, FieldErrors& errors) {
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
  r.Bool("enabled", job.enabled, false);
  r.RejectUnknown();
}

void CheckJobFields(Job& job, FieldErrors& errors) {
  ringwheel::ScheduleError se;
  if (!ringwheel::Schedule::Parse(job.schedule_type, job.schedule_conf, job.time_zone, &se)) {
    errors.push_back({se.field, se.message});
  }
  if (job.time_zone.empty()) job.time_zone = "UTC";
  if (job.glue_type == GlueType::kBean && job.handler.empty()) {
    errors.push_back(
        {"handler", "is required for a BEAN job (the name of a handler registered in the executor)"});
  }
  if (job.glue_type == GlueType::kShell) std::erase(job.glue_source, '\r');
  if (job.enabled && job.schedule_type == "NONE") {
    errors.push_back(
        {"enabled", "a job with schedule_type NONE cannot be enabled: it runs only when triggered"});
  }
  if (!ValidEmailList(job.alarm_email)) {
    errors.push_back({"alarm_email", fmt::format("'{}' is not a comma-separated list of e-mail addresses",
                                                 job.alarm_email)});
  }
  if (!job.alarm_webhook.empty()) {
    std::string why;
    if (!cronwheel::net::ParseHttpAddress(job.alarm_webhook, &why)) errors.push_back({"alarm_webhook", why});
  }
}

void ReadGroupBody(const json& body, JobGroup& g, bool create, FieldErrors& errors) {
  BodyReader r(body, errors);
  r.String("app_name", g.app_name, create, 64, 4);
  r.String("title", g.title, create, 64, 1);
  r.Enum("address_type", g.address_type, false, &ParseAddressType);
  r.StringArray("addresses", g.addresses, false, 1000);
  r.OptionalString("access_token", g.access_token, 255);
  r.RejectUnknown();
  if (!g.app_name.empty() && !ValidAppName(g.app_name)) {
    errors.push_back({"app_name", fmt::format("'{}' is not valid: 4 to 64 letters, digits, '.', '_' or '-', "
                                              "starting with a letter or digit",
                                              g.app_name)});
  }
  for (auto& a : g.addresses) {
    std::string why;
    if (!cronwheel::net::ParseHttpAddress(a, &why)) {
      errors.push_back({"addresses", why});
    } else {
      a = cronwheel::net::NormalizeAddress(a);
    }
  }
  if (g.address_type == AddressType::kManual && g.addresses.empty()) {
    errors.push_back({"addresses", "a MANUAL group needs at least one executor address"});
  }
  if (g.access_token && g.access_token->empty()) g.access_token.reset();
}

// --- console bodies ---

UserBody ReadUserBody(const json& body, bool create, FieldErrors& errors) {
  UserBody f;
  if (!body.is_object()) {
    errors.push_back({"", fmt::format("the body must be a JSON object, got {}", Shown(body))});
    return f;
  }
  const std::set<std::string> known =
      create ? std::set<std::string>{"username", "password", "role", "permitted_group_ids"}
             : std::set<std::string>{"password", "role", "permitted_group_ids"};
  for (const auto& [k, v] : body.items()) {
    if (!known.contains(k)) {
      errors.push_back({k, k == "username"
                               ? "cannot be changed; create a new user instead"
                               : fmt::format("unknown field; the fields are: {}", fmt::join(known, ", "))});
    } else if (k == "username") {
      if (!v.is_string() || !ValidUsername(v.get<std::string>())) {
        errors.push_back(
            {k, fmt::format("{} is not valid: 3 to 50 letters, digits, '.', '_' or '-'", Shown(v))});
      } else {
        f.username = v.get<std::string>();
      }
    } else if (k == "password") {
      if (!v.is_string()) {
        errors.push_back({k, "expected a string"});
      } else if (auto why = CheckPasswordPolicy(v.get<std::string>()); !why.empty()) {
        errors.push_back({k, why});
      } else {
        f.password = v.get<std::string>();
      }
    } else if (k == "role") {
      if (!v.is_string() || (v != "ADMIN" && v != "USER")) {
        errors.push_back({k, fmt::format("{} is not valid; use ADMIN or USER", Shown(v))});
      } else {
        f.admin = v == "ADMIN";
      }
    } else if (k == "permitted_group_ids") {
      std::vector<int> ids;
      bool ok = v.is_array() && v.size() <= 1000;
      for (const auto& e : ok ? v : json::array()) {
        if (!e.is_number_integer() || e.get<std::int64_t>() <= 0 || e.get<std::int64_t>() > INT32_MAX) {
          ok = false;
          break;
        }
        ids.push_back(e.get<int>());
      }
      if (!ok) {
        errors.push_back({k, fmt::format("{} is not valid: an array of at most 1000 group ids", Shown(v))});
      } else {
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        f.groups = std::move(ids);
      }
    }
  }
  if (create && !f.username && !body.contains("username")) errors.push_back({"username", "is required"});
  if (create && !f.password && !body.contains("password")) errors.push_back({"password", "is required"});
  return f;
}

PasswordChangeBody ReadPasswordChangeBody(const json& body, FieldErrors& errors) {
  PasswordChangeBody out;
  if (!body.is_object()) {
    errors.push_back({"", "the body must be a JSON object with old_password and new_password"});
    return out;
  }
  for (const auto& [k, v] : body.items()) {
    if (k != "old_password" && k != "new_password") {
      errors.push_back({k, "unknown field; the fields are: old_password, new_password"});
    } else if (!v.is_string()) {
      errors.push_back({k, "expected a string"});
    } else {
      (k == "old_password" ? out.old_password : out.new_password) = v.get<std::string>();
    }
  }
  if (!body.contains("old_password")) errors.push_back({"old_password", "is required"});
  if (!body.contains("new_password")) {
    errors.push_back({"new_password", "is required"});
  } else if (auto why = CheckPasswordPolicy(out.new_password); !why.empty()) {
    errors.push_back({"new_password", why});
  } else if (out.new_password == out.old_password) {
    errors.push_back({"new_password", "must differ from the old password"});
  }
  return out;
}

std::string ReadTokenBody(const json& body, FieldErrors& errors) {
  std::string name;
  if (!body.is_object()) {
    errors.push_back({"", "the body must be a JSON object with a name"});
    return name;
  }
  for (const auto& [k, v] : body.items()) {
    if (k != "name") {
      errors.push_back({k, "unknown field; the only field is: name"});
    } else if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 100) {
      errors.push_back({"name", fmt::format("{} is not valid: a string of 1 to 100 characters", Shown(v))});
    } else {
      name = v.get<std::string>();
    }
  }
  if (!body.contains("name")) errors.push_back({"name", "is required"});
  return name;
}

LoginBody ReadLoginBody(const json& body, FieldErrors& errors) {
  LoginBody out;
  if (CheckObject(body, {"username", "password"}, errors)) {
    out.username = StringField(body, "username", true, errors).value_or("");
    out.password = StringField(body, "password", true, errors).value_or("");
  }
  return out;
}

PreviewBody ReadPreviewBody(const json& body, FieldErrors& errors) {
  PreviewBody out;
  if (!CheckObject(body, {"schedule_type", "schedule_conf", "time_zone", "count", "from_ms"}, errors))
    return out;
  out.schedule_type = StringField(body, "schedule_type", true, errors).value_or("");
  out.schedule_conf = StringField(body, "schedule_conf", false, errors).value_or("");
  out.time_zone = StringField(body, "time_zone", false, errors).value_or("UTC");
  out.count = static_cast<int>(IntField(body, "count", 1, kMaxPreviewCount, errors).value_or(5));
  out.from_ms = IntField(body, "from_ms", 0, 253'402'300'799'000, errors);  // up to year 9999
  return out;
}

std::optional<json> PreviewFires(const PreviewBody& p, std::int64_t now_ms, FieldErrors& errors) {
  ringwheel::ScheduleError se;
  const auto schedule = ringwheel::Schedule::Parse(p.schedule_type, p.schedule_conf, p.time_zone, &se);
  if (!schedule) {
    errors.push_back({se.field, se.message});
    return std::nullopt;
  }
  json fires = json::array();
  std::int64_t at = p.from_ms.value_or(now_ms);
  for (int i = 0; i < p.count; ++i) {
    const auto next = schedule->NextFireMs(at);
    if (!next) break;
    fires.push_back({{"ms", *next}, {"iso", IsoInZone(*next, schedule->zone())}});
    at = *next;
  }
  return json{{"time_zone", schedule->zone_name()}, {"fires", fires}};
}

TriggerBody ReadTriggerBody(const json& body, FieldErrors& errors) {
  TriggerBody out;
  if (!body.is_object()) {
    errors.push_back({"", fmt::format("the body must be a JSON object, got {}", Shown(body))});
    return out;
  }
  for (const auto& [k, v] : body.items()) {
    if ((k == "param" || k == "address") && !v.is_string() && !v.is_null()) {
      errors.push_back({k, fmt::format("expected a string, got {}", Shown(v))});
    } else if (k == "param") {
      if (v.is_string()) out.param = v.get<std::string>();
      if (out.param && out.param->size() > kMaxJobParamBytes) {
        errors.push_back(
            {"param", fmt::format("must be at most {} bytes, got {}", kMaxJobParamBytes, out.param->size())});
      }
    } else if (k == "address") {
      if (v.is_string()) out.address = v.get<std::string>();
    } else {
      errors.push_back({k, "unknown field; the fields are: param, address"});
    }
  }
  return out;
}

LogClear ReadLogClearBody(const json& body, FieldErrors& errors) {
  LogClear c;
  if (!CheckObject(body, {"group_id", "job_id", "older_than_days", "keep_last"}, errors)) return c;
  const auto group = IntField(body, "group_id", 1, INT32_MAX, errors);
  const auto job = IntField(body, "job_id", 1, INT32_MAX, errors);
  const auto older = IntField(body, "older_than_days", 0, 36'500, errors);
  const auto keep = IntField(body, "keep_last", 0, 100'000'000, errors);
  if (group) c.group_id = static_cast<int>(*group);
  if (job) c.job_id = static_cast<int>(*job);
  if (older) c.older_than_days = static_cast<int>(*older);
  if (keep) c.keep_last = static_cast<int>(*keep);
  if (errors.empty() && (c.older_than_days.has_value() == c.keep_last.has_value())) {
    errors.push_back({c.keep_last ? "keep_last" : "older_than_days",
                      "give exactly one of older_than_days (delete fires older than N days) or keep_last "
                      "(keep the newest N)"});
  }
  return c;
}

}  // namespace cronwheel::admin
