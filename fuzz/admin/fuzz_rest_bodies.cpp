// Feeds arbitrary bytes to the admin's request-body readers, as the REST handlers and the XXL-JOB
// endpoints do: parse with cronwheel::ParseJson, then read the value as each kind of body. A reader must
// never crash, leak or hang; it returns what it read or an Error whose FieldErrors each name a field with a
// bounded, non-empty message. What a reader accepted must hold its promises (a job's schedule parses, a
// group's addresses are normalised http(s) addresses, a registration's address parses).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "admin/api/request_bodies.hpp"
#include "admin/model/validation.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/net/http_address.hpp"
#include "ringwheel/schedule.hpp"

namespace {

using namespace cronwheel;
using namespace cronwheel::admin;

void Check(bool ok) {
  if (!ok) std::abort();
}

// Every error has a message, short enough to show (a value is quoted, not echoed whole); so does each
// field of it.
template <class T>
bool Accepted(const Result<T>& r) {
  if (r) return true;
  const auto& e = r.error();
  Check(!e.message.empty() || !e.fields.empty());
  for (const auto& f : e.fields) {
    Check(!f.message.empty());
    Check(f.field.size() <= 4096 && f.message.size() <= 4096);
  }
  return false;
}

void FuzzJob(const nlohmann::json& body, bool create) {
  admin::Job base;
  base.time_zone = "UTC";
  auto job = ReadJobBody(body, base, create);
  if (!Accepted(job)) return;
  FieldErrors errors;
  CheckJobFields(*job, errors);
  if (!Accepted(errors.empty() ? Result<void>() : Result<void>(Error::Invalid("", errors)))) return;
  Check(!job->time_zone.empty());
  Check(ringwheel::Schedule::Parse(job->schedule_type, job->schedule_conf, job->time_zone).ok());
  if (create) Check(job->group_id >= 1 && !job->description.empty());
}

void FuzzGroup(const nlohmann::json& body, bool create) {
  const auto g = ReadGroupBody(body, JobGroup{}, create);
  if (!Accepted(g)) return;
  if (create) Check(ValidAppName(g->app_name));
  for (const auto& a : g->addresses) {
    Check(cronwheel::net::ParseHttpAddress(a).ok());
    Check(cronwheel::net::NormalizeAddress(a) == a);
  }
  Check(!g->access_token || !g->access_token->empty());
}

void FuzzAccounts(const nlohmann::json& body) {
  for (const bool create : {true, false}) {
    const auto u = ReadUserBody(body, create);
    if (!Accepted(u)) continue;
    if (create) Check(u->username && ValidUsername(*u->username) && u->password);
    if (u->password) Check(CheckPasswordPolicy(*u->password).ok());
  }
  if (const auto p = ReadPasswordChangeBody(body); Accepted(p)) {
    Check(CheckPasswordPolicy(p->new_password).ok() && p->new_password != p->old_password);
  }
  if (const auto t = ReadTokenBody(body); Accepted(t)) {
    Check(!t->name.empty() && t->name.size() <= 100 && t->expires_in_days >= 1 &&
          t->expires_in_days <= cronwheel::admin::kMaxTokenDays);
  }
  (void)Accepted(ReadLoginBody(body));
}

void FuzzPreview(const nlohmann::json& body) {
  const auto p = ReadPreviewBody(body);
  if (!Accepted(p)) return;
  Check(p->count >= 1 && p->count <= kMaxPreviewCount);
  const auto fires = PreviewFires(*p, 1'700'000'000'000);
  if (!Accepted(fires)) return;
  std::int64_t last = -1;
  for (const auto& f : fires->at("fires")) {
    const auto ms = f.at("ms").get<std::int64_t>();
    Check(ms > last);  // strictly increasing
    last = ms;
  }
  Check(fires->at("fires").size() <= static_cast<std::size_t>(p->count));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The XXL-JOB endpoints of the admin.
  if (const auto p = xxljob::ParseRegistryParam(text); p.ok()) {
    if (CheckRegistration(*p)) {
      Check(ValidAppName(p->registry_key));
      Check(cronwheel::net::ParseHttpAddress(p->registry_value).ok());
    }
  }
  (void)xxljob::ParseCallbackList(text);

  // The REST bodies.
  const auto body = cronwheel::ParseJson(text);
  if (!body.ok()) {
    Check(!body.status().message().empty());
    return 0;
  }
  FuzzJob(*body, true);
  FuzzJob(*body, false);
  FuzzGroup(*body, true);
  FuzzGroup(*body, false);
  FuzzAccounts(*body);
  FuzzPreview(*body);
  (void)Accepted(ReadTriggerBody(*body));
  if (const auto c = ReadLogClearBody(*body); Accepted(c)) {
    Check(c->older_than_days.has_value() != c->keep_last.has_value());
  }
  return 0;
}
