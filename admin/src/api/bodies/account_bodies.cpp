// The bodies of users, password changes, API tokens and logins (api/request_bodies.hpp).
#include <algorithm>
#include <cctype>
#include <map>

#include "admin/api/request_bodies.hpp"
#include "admin/model/validation.hpp"
#include "api/bodies/body_reader.hpp"

namespace cronwheel::admin {

using namespace bodies;

namespace {

FieldError PolicyError(const char* field, const Error& why) {
  return {field, why.message, "policy", {{"min", kMinPasswordLength}, {"max", kMaxPasswordLength}}};
}

constexpr std::size_t kMaxUserGroups = 1000;

// An array of at most 1000 group ids, each given the default role (what a USER had before roles); sorted
// and unique, or nullopt.
std::optional<std::vector<GroupGrant>> GroupIds(const json& v) {
  if (!v.is_array() || v.size() > kMaxUserGroups) return std::nullopt;
  std::vector<GroupGrant> grants;
  for (const auto& e : v) {
    if (!e.is_number_integer() || e.get<std::int64_t>() <= 0 || e.get<std::int64_t>() > INT32_MAX) {
      return std::nullopt;
    }
    grants.push_back({.group_id = e.get<int>(), .role = kDefaultGroupRole});
  }
  std::sort(grants.begin(), grants.end(),
            [](const auto& a, const auto& b) { return a.group_id < b.group_id; });
  grants.erase(std::unique(grants.begin(), grants.end()), grants.end());
  return grants;
}

// group_roles: an array of at most 1000 {"group_id": id, "role": "VIEWER" ...}, one per group. Adds an
// error naming the element's field on the first that is not valid.
std::optional<std::vector<GroupGrant>> GroupRoles(const json& v, FieldErrors& errors) {
  const std::string k = "group_roles";
  if (!v.is_array() || v.size() > kMaxUserGroups) {
    errors.push_back({k,
                      fmt::format("{} is not valid: an array of at most {} {{\"group_id\": id, \"role\": "
                                  "role}}",
                                  Quote(v), kMaxUserGroups),
                      "type",
                      {{"expected", "array"}}});
    return std::nullopt;
  }
  std::map<int, GroupRole> roles;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto& e = v[i];
    const auto at = fmt::format("{}[{}]", k, i);
    if (!e.is_object() || e.size() != 2 || !e.contains("group_id") || !e.contains("role")) {
      errors.push_back({at,
                        fmt::format("{} is not valid: an object with exactly group_id and role", Quote(e)),
                        "type",
                        {{"expected", "object"}}});
      return std::nullopt;
    }
    const auto& id = e.at("group_id");
    if (!id.is_number_integer() || id.get<std::int64_t>() <= 0 || id.get<std::int64_t>() > INT32_MAX) {
      errors.push_back({at + ".group_id",
                        fmt::format("{} is not a group id", Quote(id)),
                        "type",
                        {{"expected", "integer"}}});
      return std::nullopt;
    }
    const auto& name = e.at("role");
    const auto role = name.is_string() ? ParseGroupRole(name.get<std::string>()) : std::nullopt;
    if (!role) {
      errors.push_back({at + ".role",
                        fmt::format("{} is not valid; use {}", Quote(name), ValidValues(GroupRole{})),
                        "enum",
                        {{"allowed", ValidValues(GroupRole{})}}});
      return std::nullopt;
    }
    if (!roles.emplace(id.get<int>(), *role).second) {
      errors.push_back({at + ".group_id",
                        fmt::format("group {} is listed twice: give each group one role", id.get<int>()),
                        "duplicate",
                        {{"id", id.get<int>()}}});
      return std::nullopt;
    }
  }
  std::vector<GroupGrant> grants;
  grants.reserve(roles.size());
  for (const auto& [id, role] : roles)
    grants.push_back({.group_id = id, .role = role});
  return grants;
}

void ReadUserField(const std::string& k, const json& v, UserFields& f, FieldErrors& errors) {
  if (k == "username") {
    if (!v.is_string() || !ValidUsername(v.get<std::string>())) {
      errors.push_back(
          {k,
           fmt::format("{} is not valid: 3 to 100 letters, digits, '.', '_', '-', '@' or '+'", Quote(v)),
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
      f.groups_field = k;
    } else {
      errors.push_back(
          {k, fmt::format("{} is not valid: an array of at most {} group ids", Quote(v), kMaxUserGroups)});
    }
  } else if (k == "group_roles") {
    if (auto grants = GroupRoles(v, errors)) f.groups = std::move(*grants);
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
      create ? std::set<std::string>{"username", "password", "role", "permitted_group_ids", "group_roles"}
             : std::set<std::string>{"password", "role", "permitted_group_ids", "group_roles"};
  for (const auto& [k, v] : body.items()) {
    if (known.contains(k)) {
      ReadUserField(k, v, f, errors);
    } else if (k == "username") {
      errors.push_back({k, "cannot be changed; create a new user instead"});
    } else {
      errors.push_back(UnknownField(k, known));
    }
  }
  if (body.contains("permitted_group_ids") && body.contains("group_roles")) {
    errors.push_back({"group_roles",
                      "give group_roles or permitted_group_ids (each group as DEVELOPER), not both",
                      "conflict",
                      {{"other", "permitted_group_ids"}}});
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

namespace {

// RFC 7636's unreserved characters: [A-Za-z0-9._~-], `min` to `max` of them.
bool Unreserved(const std::string& s, std::size_t min, std::size_t max) {
  return s.size() >= min && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '~' ||
                  c == '-';
         });
}

// A string field of unreserved characters; an error naming it and what is valid otherwise.
std::string UnreservedField(const json& body, const char* name, std::size_t min, std::size_t max,
                            FieldErrors& errors) {
  auto v = StringField(body, name, true, errors);
  if (v && !Unreserved(*v, min, max)) {
    errors.push_back({name,
                      min == max
                          ? fmt::format("{} is not valid: {} of A-Z, a-z, 0-9, '.', '_', '~', '-'",
                                        Quote(body.at(name)), min)
                          : fmt::format("{} is not valid: {} to {} of A-Z, a-z, 0-9, '.', '_', '~', '-'",
                                        Quote(body.at(name)), min, max),
                      "format",
                      {{"what", name}}});
    v.reset();
  }
  return v.value_or("");
}

}  // namespace

Result<CliLoginRequest> ReadCliLoginBody(const json& body) {
  CliLoginRequest out;
  FieldErrors errors;
  const std::set<std::string> token_fields = {"name", "scope", "expires_in_days"};
  if (CheckObject(
          body,
          {"port", "state", "code_challenge", "code_challenge_method", "name", "scope", "expires_in_days"},
          errors)) {
    if (!body.contains("port")) errors.push_back(Required("port"));
    out.port = static_cast<int>(IntField(body, "port", 1, 65535, errors).value_or(0));
    out.state = UnreservedField(body, "state", 1, 128, errors);
    out.code_challenge = UnreservedField(body, "code_challenge", 43, 43, errors);
    if (const auto m = StringField(body, "code_challenge_method", false, errors); m && *m != "S256") {
      errors.push_back({"code_challenge_method",
                        fmt::format("{} is not valid: only S256", Quote(body.at("code_challenge_method"))),
                        "enum",
                        {{"allowed", "S256"}}});
    }
    json token = json::object();
    for (const auto& k : token_fields) {
      if (body.contains(k)) token[k] = body.at(k);
    }
    if (auto fields = ReadTokenBody(token)) {
      out.token = *std::move(fields);
    } else {
      for (const auto& e : fields.error().fields)
        errors.push_back(e);
    }
  }
  return Checked(std::move(out), std::move(errors), "the login request is not valid");
}

Result<bool> ReadAuthPolicyBody(const json& body) {
  FieldErrors errors;
  BodyReader r(body, errors);
  bool require_sso = false;
  r.Bool("require_sso", require_sso, true);
  r.RejectUnknown();
  return Checked(require_sso, std::move(errors), "the policy is not valid");
}

Result<IdentityLink> ReadIdentityLinkBody(const json& body) {
  FieldErrors errors;
  BodyReader r(body, errors);
  IdentityLink link;
  r.String("source", link.source, true, 40, 1);
  r.String("subject", link.subject, true, 255, 1);
  r.RejectUnknown();
  return Checked(std::move(link), std::move(errors), "the identity is not valid");
}

Result<CliTokenRequest> ReadCliTokenBody(const json& body) {
  CliTokenRequest out;
  FieldErrors errors;
  if (CheckObject(body, {"code", "code_verifier"}, errors)) {
    out.code = StringField(body, "code", true, errors).value_or("");
    if (out.code.size() > 200) {
      errors.push_back({"code",
                        fmt::format("is not valid: at most 200 characters, got {}", out.code.size()),
                        "length",
                        {{"min", 1}, {"max", 200}, {"actual", out.code.size()}}});
    }
    out.code_verifier = UnreservedField(body, "code_verifier", 43, 128, errors);
  }
  return Checked(std::move(out), std::move(errors), "the token request is not valid");
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
