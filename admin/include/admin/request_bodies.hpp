#pragma once
// The admin's request bodies read and checked without a database: pure functions of their input, so a
// fuzzer can drive them (fuzz/admin) and the handlers stay thin. The REST handlers call these first, then
// check what needs PostgreSQL (a group exists, child jobs exist and form no cycle, a name is free). The
// XXL-JOB endpoints parse with xxljob::Parse* and then CheckRegistration.
//
// A body is any JSON value (the caller parsed it with cronwheel::ParseJson); a reader records one
// FieldError per problem, each naming the field, the value and what would be valid ("" as the field for
// the body itself), and leaves its output unchanged for a field in error. Unknown fields are errors.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/console_repository.hpp"
#include "admin/job_repository.hpp"
#include "admin/model.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/net/http_address.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {

inline constexpr std::size_t kMinPasswordLength = 10;
inline constexpr std::size_t kMaxPasswordLength = 1024;
inline constexpr int kMaxPreviewCount = 100;

// An executor's AppName (a group's app_name, a registration's registryKey): 4 to 64 ASCII letters, digits,
// '.', '_' or '-', starting with a letter or digit.
bool ValidAppName(const std::string& name);
// A username: 3 to 50 ASCII letters, digits, '.', '_' or '-'.
bool ValidUsername(const std::string& name);
// The password policy: an error message, or "" when acceptable.
std::string CheckPasswordPolicy(std::string_view password);

// What is wrong with a registration (/api/registry, /api/registryRemove) that parsed: "" when it is valid.
// The registryKey must be an AppName and the registryValue an http(s) address
// (cronwheel::net::ParseHttpAddress), so nothing but an address the admin could call reaches
// executor_registry.
std::string CheckRegistration(const xxljob::RegistryParam& p);

// --- jobs and groups (POST creates: required fields; PUT updates: fields over the stored values) ---

// Reads the job fields of `body` over `job` (group_id, description and schedule_type required on create).
void ReadJobBody(const nlohmann::json& body, Job& job, bool create, FieldErrors& errors);
// The checks of a job that need no database: the schedule parses in its time zone (an empty zone becomes
// UTC), a BEAN job names a handler, a NONE schedule is not enabled, alarm e-mails and webhook are valid.
// Strips '\r' from a shell script.
void CheckJobFields(Job& job, FieldErrors& errors);
// Reads the group fields of `body` over `g` (app_name and title required on create) and checks them:
// an AppName, http(s) addresses (normalised), a MANUAL group has addresses; an empty token is none.
void ReadGroupBody(const nlohmann::json& body, JobGroup& g, bool create, FieldErrors& errors);

// --- console bodies ---

struct UserBody {
  std::optional<std::string> username;
  std::optional<std::string> password;
  std::optional<bool> admin;
  std::optional<std::vector<int>> groups;  // sorted, unique
};
// POST /api/v1/users (create: username and password required) and PUT /api/v1/users/{id}.
UserBody ReadUserBody(const nlohmann::json& body, bool create, FieldErrors& errors);

struct PasswordChangeBody {
  std::string old_password;
  std::string new_password;
};
// POST /api/v1/users/me/password: both required; the new one meets the policy and differs.
PasswordChangeBody ReadPasswordChangeBody(const nlohmann::json& body, FieldErrors& errors);

// POST /api/v1/tokens: the token's name (1 to 100 characters).
std::string ReadTokenBody(const nlohmann::json& body, FieldErrors& errors);

struct LoginBody {
  std::string username;
  std::string password;
};
// POST /api/v1/auth/login: both strings required.
LoginBody ReadLoginBody(const nlohmann::json& body, FieldErrors& errors);

struct PreviewBody {
  std::string schedule_type;
  std::string schedule_conf;
  std::string time_zone = "UTC";
  int count = 5;                        // 1..kMaxPreviewCount
  std::optional<std::int64_t> from_ms;  // epoch ms, 0 .. end of year 9999; nullopt = now
};
// POST /api/v1/schedules/preview.
PreviewBody ReadPreviewBody(const nlohmann::json& body, FieldErrors& errors);
// {"time_zone", "fires": [{"ms", "iso"}...]}: the next `count` fires after `from_ms` (else `now_ms`), or
// an error naming the schedule field that is wrong.
std::optional<nlohmann::json> PreviewFires(const PreviewBody& p, std::int64_t now_ms, FieldErrors& errors);

struct TriggerBody {
  std::optional<std::string> param;    // at most 64 KiB; nullopt = the job's own
  std::optional<std::string> address;  // must then be an address of the job's group (checked by the caller)
};
// POST /api/v1/jobs/{id}/trigger (an empty body is {}).
TriggerBody ReadTriggerBody(const nlohmann::json& body, FieldErrors& errors);

// POST /api/v1/logs/clear: exactly one of older_than_days and keep_last; optional group_id, job_id.
LogClear ReadLogClearBody(const nlohmann::json& body, FieldErrors& errors);

}  // namespace cronwheel::admin
