// Feeds arbitrary bytes to the admin's request-body readers, as the REST handlers and the XXL-JOB
// endpoints do: parse with cronwheel::ParseJson, then read the value as each kind of body. A reader must
// never crash, leak or hang; it returns what it read or FieldErrors, each naming a field with a bounded,
// non-empty message. What a reader accepted must hold its promises (a job's schedule parses, a group's
// addresses are normalised http(s) addresses, a registration's address parses).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "admin/request_bodies.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/net/http_address.hpp"
#include "ringwheel/schedule.hpp"

namespace {

using namespace cronwheel;
using namespace cronwheel::admin;

void Check(bool ok) {
  if (!ok) std::abort();
}

// Every error has a message, short enough to show (a value is quoted, not echoed whole).
void CheckErrors(const FieldErrors& errors) {
  for (const auto& e : errors) {
    Check(!e.message.empty());
    Check(e.field.size() <= 4096 && e.message.size() <= 4096);
  }
}

void FuzzJob(const nlohmann::json& body, bool create) {
  admin::Job job;
  job.time_zone = "UTC";
  FieldErrors errors;
  ReadJobBody(body, job, create, errors);
  CheckJobFields(job, errors);
  CheckErrors(errors);
  if (errors.empty()) {
    Check(!job.time_zone.empty());
    Check(
        ringwheel::Schedule::Parse(job.schedule_type, job.schedule_conf, job.time_zone, nullptr).has_value());
    if (create) Check(job.group_id >= 1 && !job.description.empty());
  }
}

void FuzzGroup(const nlohmann::json& body, bool create) {
  JobGroup g;
  FieldErrors errors;
  ReadGroupBody(body, g, create, errors);
  CheckErrors(errors);
  if (errors.empty()) {
    if (create) Check(ValidAppName(g.app_name));
    for (const auto& a : g.addresses) {
      Check(cronwheel::net::ParseHttpAddress(a, nullptr).has_value());
      Check(cronwheel::net::NormalizeAddress(a) == a);
    }
    Check(!g.access_token || !g.access_token->empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;

  // The XXL-JOB endpoints of the admin.
  if (const auto p = xxljob::ParseRegistryParam(text, &error)) {
    if (CheckRegistration(*p).empty()) {
      Check(ValidAppName(p->registry_key));
      Check(cronwheel::net::ParseHttpAddress(p->registry_value, nullptr).has_value());
    }
  }
  (void)xxljob::ParseCallbackList(text, &error);

  // The REST bodies.
  const auto body = cronwheel::ParseJson(text, &error);
  if (!body) {
    Check(!error.empty());
    return 0;
  }
  FuzzJob(*body, true);
  FuzzJob(*body, false);
  FuzzGroup(*body, true);
  FuzzGroup(*body, false);
  for (const bool create : {true, false}) {
    FieldErrors errors;
    const auto u = ReadUserBody(*body, create, errors);
    CheckErrors(errors);
    if (errors.empty() && create) Check(u.username && ValidUsername(*u.username) && u.password);
    if (errors.empty() && u.password) Check(CheckPasswordPolicy(*u.password).empty());
  }
  {
    FieldErrors errors;
    const auto p = ReadPasswordChangeBody(*body, errors);
    CheckErrors(errors);
    if (errors.empty())
      Check(CheckPasswordPolicy(p.new_password).empty() && p.new_password != p.old_password);
  }
  {
    FieldErrors errors;
    const auto name = ReadTokenBody(*body, errors);
    CheckErrors(errors);
    if (errors.empty()) Check(!name.empty() && name.size() <= 100);
  }
  {
    FieldErrors errors;
    (void)ReadLoginBody(*body, errors);
    CheckErrors(errors);
  }
  {
    FieldErrors errors;
    const auto p = ReadPreviewBody(*body, errors);
    CheckErrors(errors);
    if (errors.empty()) {
      Check(p.count >= 1 && p.count <= kMaxPreviewCount);
      const auto fires = PreviewFires(p, 1'700'000'000'000, errors);
      CheckErrors(errors);
      if (fires) {
        std::int64_t last = -1;
        for (const auto& f : fires->at("fires")) {
          const auto ms = f.at("ms").get<std::int64_t>();
          Check(ms > last);  // strictly increasing
          last = ms;
        }
        Check(fires->at("fires").size() <= static_cast<std::size_t>(p.count));
      }
    }
  }
  {
    FieldErrors errors;
    (void)ReadTriggerBody(*body, errors);
    CheckErrors(errors);
  }
  {
    FieldErrors errors;
    const auto c = ReadLogClearBody(*body, errors);
    CheckErrors(errors);
    if (errors.empty()) Check(c.older_than_days.has_value() != c.keep_last.has_value());
  }
  return 0;
}
