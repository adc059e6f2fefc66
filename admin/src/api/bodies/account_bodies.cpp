// The bodies of users, password changes, API tokens and logins (api/request_bodies.hpp).
#include <algorithm>

#include "admin/api/request_bodies.hpp"
#include "admin/model/validation.hpp"
#include "api/bodies/body_reader.hpp"

namespace cronwheel::admin {

using namespace bodies;

namespace {

FieldError PolicyError(const char* field, const Error& why) {
  return {field, why.message, "policy", {{"min", kMinPasswordLength}, {"max", kMaxPasswordLength}}};
}

// An array of at most 1000 group ids: sorted and unique, or nullopt.
std::optional<std::vector<int>> GroupIds(const json& v) {
  if (!v.is_array() || v.size() > 1000) return std::nullopt;
  std::vector<int> ids;
  for (const auto& e : v) {
    if (!e.is_number_integer() || e.get<std::int64_t>() <= 0 || e.get<std::int64_t>() > INT32_MAX) {
      return std::nullopt;
    }
    ids.push_back(e.get<int>());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void ReadUserField(const std::string& k, const json& v, UserFields& f, FieldErrors& errors) {
  if (k == "username") {
    if (!v.is_string() || !ValidUsername(v.get<std::string>())) {
      errors.push_back({k,
                        fmt::format("{} is not valid: 3 to 50 letters, digits, '.', '_' or '-'", Quote(v)),
                        "format",
                        {{"what", "username"}}});
    } else {
      f.username = v.get<std::string>();
    }
  } else if (k == "password") {
    if (!v.is_string()) {
      errors.push_back({k, "expected a string", "type", {{"expected", "string"}}});
    } else if (auto ok = CheckPasswordPolicy(v.get<std::string>()); !ok) {
      errors.push_back(PolicyError("password", ok.error()));
    } else {
      f.password = v.get<std::string>();
    }
  } else if (k == "role") {
    if (!v.is_string() || (v != "ADMIN" && v != "USER")) {
      errors.push_back({k,
                        fmt::format("{} is not valid; use ADMIN or USER", Quote(v)),
                        "enum",
                        {{"allowed", "ADMIN, USER"}}});
    } else {
      f.admin = v == "ADMIN";
    }
  } else if (k == "permitted_group_ids") {
    if (auto ids = GroupIds(v)) {
      f.groups = std::move(*ids);
    } else {
      errors.push_back({k, fmt::format("{} is not valid: an array of at most 1000 group ids", Quote(v))});
    }
  }
}

}  // namespace

Result<UserFields> ReadUserBody(const json& body, bool create) {
  UserFields f;
  FieldErrors errors;
  if (!body.is_object()) {
    errors.push_back(NotAnObject(body));
    return Error::Invalid("the user is not valid", std::move(errors));
  }
  const std::set<std::string> known =
      create ? std::set<std::string>{"username", "password", "role", "permitted_group_ids"}
             : std::set<std::string>{"password", "role", "permitted_group_ids"};
  for (const auto& [k, v] : body.items()) {
    if (known.contains(k)) {
      ReadUserField(k, v, f, errors);
    } else if (k == "username") {
      errors.push_back({k, "cannot be changed; create a new user instead"});
    } else {
      errors.push_back(UnknownField(k, known));
    }
  }
  if (create && !f.username && !body.contains("username")) errors.push_back(Required("username"));
  if (create && !f.password && !body.contains("password")) errors.push_back(Required("password"));
  return Checked(std::move(f), std::move(errors), "the user is not valid");
}

Result<PasswordChange> ReadPasswordChangeBody(const json& body) {
  PasswordChange out;
  FieldErrors errors;
  if (!body.is_object()) {
    errors.push_back({"",
                      "the body must be a JSON object with old_password and new_password",
                      "type",
                      {{"expected", "object"}}});
    return Error::Invalid("the password was not changed", std::move(errors));
  }
  for (const auto& [k, v] : body.items()) {
    if (k != "old_password" && k != "new_password") {
      errors.push_back({k,
                        "unknown field; the fields are: old_password, new_password",
                        "unknown_field",
                        {{"allowed", "old_password, new_password"}}});
    } else if (!v.is_string()) {
      errors.push_back({k, "expected a string", "type", {{"expected", "string"}}});
    } else {
      (k == "old_password" ? out.old_password : out.new_password) = v.get<std::string>();
    }
  }
  if (!body.contains("old_password")) errors.push_back(Required("old_password"));
  if (!body.contains("new_password")) {
    errors.push_back(Required("new_password"));
  } else if (auto ok = CheckPasswordPolicy(out.new_password); !ok) {
    errors.push_back(PolicyError("new_password", ok.error()));
  } else if (out.new_password == out.old_password) {
    errors.push_back({"new_password", "must differ from the old password"});
  }
  return Checked(std::move(out), std::move(errors), "the password was not changed");
}

Result<TokenFields> ReadTokenBody(const json& body) {
  TokenFields out;
  FieldErrors errors;
  if (!body.is_object()) {
    errors.push_back({"", "the body must be a JSON object with a name", "type", {{"expected", "object"}}});
    return Error::Invalid("the token is not valid", std::move(errors));
  }
  const std::set<std::string> known = {"name", "expires_in_days", "scope"};
  for (const auto& [k, v] : body.items()) {
    if (!known.contains(k)) {
      errors.push_back(UnknownField(k, known));
    } else if (k == "name") {
      if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 100) {
        errors.push_back({"name",
                          fmt::format("{} is not valid: a string of 1 to 100 characters", Quote(v)),
                          "length",
                          {{"min", 1}, {"max", 100}}});
      } else {
        out.name = v.get<std::string>();
      }
    } else if (k == "scope") {
      const auto scope = v.is_string() ? ParseTokenScope(v.get<std::string>()) : std::nullopt;
      if (!scope) {
        errors.push_back({"scope",
                          fmt::format("{} is not valid: one of read, operate, write, admin (default {})",
                                      Quote(v), ToString(kDefaultTokenScope)),
                          "enum",
                          {{"allowed", "read, operate, write, admin"}}});
      } else {
        out.scope = *scope;
      }
    } else if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > kMaxTokenDays) {
      errors.push_back({"expires_in_days",
                        fmt::format("{} is not valid: a whole number of days from 1 to {} (default {})",
                                    Quote(v), kMaxTokenDays, kDefaultTokenDays),
                        "range",
                        {{"min", 1}, {"max", kMaxTokenDays}}});
    } else {
      out.expires_in_days = v.get<int>();
    }
  }
  if (!body.contains("name")) errors.push_back(Required("name"));
  return Checked(std::move(out), std::move(errors), "the token is not valid");
}

Result<LoginBody> ReadLoginBody(const json& body) {
  LoginBody out;
  FieldErrors errors;
  if (CheckObject(body, {"username", "password"}, errors)) {
    out.username = StringField(body, "username", true, errors).value_or("");
    out.password = StringField(body, "password", true, errors).value_or("");
  }
  return Checked(std::move(out), std::move(errors), "the login request is not valid");
}

}  // namespace cronwheel::admin
