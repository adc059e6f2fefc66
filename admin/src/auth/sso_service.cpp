#include "admin/auth/sso_service.hpp"

#include <fmt/format.h>

#include <regex>

#include "admin/model/validation.hpp"
#include "auth/secrets.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::admin {
namespace {

using json = nlohmann::json;

// The values of a groups claim: a string or an array of strings (others are ignored).
std::vector<std::string> ClaimValues(const json& claims, const std::string& name) {
  std::vector<std::string> out;
  if (name.empty() || !claims.contains(name)) return out;
  const auto& v = claims[name];
  if (v.is_string()) out.push_back(v.get<std::string>());
  if (v.is_array()) {
    out.reserve(v.size());
    for (const auto& e : v) {
      if (e.is_string()) out.push_back(e.get<std::string>());
    }
  }
  return out;
}

Error NoRole(const std::string& username, const std::string& source, const std::vector<std::string>& groups) {
  std::string list;
  for (const auto& g : groups)
    list += (list.empty() ? "" : ", ") + g;
  return Error::Forbidden(
      fmt::format("'{}' signed in through {}, but its groups there ({}) give it no role in cronwheel: an "
                  "ADMIN maps groups "
                  "to roles in the SSO file (docs/operations.md, \"Single sign-on\")",
                  username, source, list.empty() ? "none" : list));
}

}  // namespace

Result<std::string> OidcUsername(const OidcProviderConfig& provider, const nlohmann::json& claims) {
  const auto& claim = provider.username_claim;
  const std::string username =
      claims.contains(claim) && claims[claim].is_string() ? claims[claim].get<std::string>() : "";
  if (!ValidUsername(username)) {
    return Error::Forbidden(
        fmt::format("provider '{}' gave the username claim '{}' as '{}', which is not a valid "
                    "cronwheel username (3 to 100 letters, digits, '.', '_', '-', '@', '+')",
                    provider.name, claim, Utf8Prefix(username, 120)));
  }
  // An e-mail address names the user only when the provider vouches for it (OpenID Connect Core 1.0 §5.1:
  // email_verified); absent, a string or false are refused alike (security review 2, N2).
  if (claim == "email") {
    const auto it = claims.find("email_verified");
    if (it == claims.end() || !it->is_boolean() || !it->get<bool>()) {
      const std::string given = it == claims.end() ? "absent" : std::string(Utf8Prefix(it->dump(), 40));
      return Error::Forbidden(
          fmt::format("provider '{}' does not say that the e-mail address '{}' is verified (email_verified "
                      "is {}, must be true): an unverified address cannot name a cronwheel user",
                      provider.name, username, given));
    }
  }
  return username;
}

SsoService::SsoService(SsoConfig config, ringwheel::Clock& clock, AuthService& auth, AccountStore& accounts,
                       SsoStore& store, std::unique_ptr<HttpsClient> http)
    : config_(std::move(config)),
      clock_(clock),
      auth_(auth),
      accounts_(accounts),
      store_(store),
      http_(std::move(http)) {
  for (const auto& p : config_.oidc)
    oidc_.emplace(p.name, std::make_unique<OidcClient>(p, clock_, *http_));
  if (config_.ldap) ldap_.emplace(*config_.ldap);
}

SsoService::Offer SsoService::Offered() {
  Offer offer{.ldap = ldap_.has_value(), .require_sso = store_.Policy().require_sso};
  offer.oidc.reserve(config_.oidc.size());
  for (const auto& p : config_.oidc)
    offer.oidc.push_back({.name = p.name, .title = p.title});
  return offer;
}

Result<SsoService::SignIn> SsoService::Sync(const ExternalUser& who, const std::string& via) {
  std::vector<std::string> skipped;
  auto user = store_.SyncExternalUser(who, clock_.NowMs(), skipped);
  if (!user) return user.error();
  return SignIn{.session = auth_.StartSession(*user), .via = via, .return_to = "", .skipped_groups = skipped};
}

Result<SsoService::SignIn> SsoService::PasswordLogin(const std::string& username, const std::string& password,
                                                     const std::string& client) {
  std::optional<UserLogin> row;
  if (ValidUsername(username)) row = accounts_.FindLogin(username);
  const bool directory = ldap_ && ValidUsername(username) && (!row || row->user.login_source == "ldap");
  if (!directory) {
    auto session = auth_.Login(username, password, client, [&](const User& u) -> Result<void> {
      if (u.login_source != "local") return Error::Unauthenticated("wrong username or password");
      if (!u.admin && store_.Policy().require_sso) {
        return Error::Forbidden(
            "this cronwheel requires single sign-on: sign in with your organisation's "
            "account (only a global ADMIN may use a local password)");
      }
      return {};
    });
    if (!session) return session.error();
    return SignIn{.session = *std::move(session), .via = "password"};
  }
  // The directory's password check, held to the same throttle as local ones.
  const auto now = clock_.NowMs();
  auto admission = auth_.throttle().BeginLogin(username, client, now);
  if (!admission.ticket) return Error::Throttled("too many failed logins", admission.retry_after);
  auto found = ldap_->Authenticate(username, password);
  if (!found) {
    if (found.error().kind == ErrorKind::kUnauthenticated) admission.ticket->Failed(clock_.NowMs());
    return found.error();
  }
  admission.ticket->Succeeded(clock_.NowMs());
  const auto mapped = MapRoles(config_.ldap->roles, found->groups);
  if (!mapped.Any()) return NoRole(username, "LDAP", found->groups);
  return Sync({.source = "ldap",
               .subject = found->subject,
               .username = username,
               .legacy_subject = found->subject == found->dn ? "" : found->dn,
               .admin = mapped.admin,
               .groups = mapped.groups},
              "ldap");
}

Result<std::string> SsoService::BeginOidc(const std::string& name, const std::string& browser_secret,
                                          const std::string& return_to) {
  const auto it = oidc_.find(name);
  if (it == oidc_.end())
    return Error::NotFound(fmt::format("no OpenID provider is named '{}'", Utf8Prefix(name, 40)));
  static const std::regex kConsoleRoute("#/[A-Za-z0-9/_.?=&%-]{0,200}");
  const std::string state = RandomSecret();
  const auto now = clock_.NowMs();
  const OidcLoginRecord login{.state_hash = SecretHash(state),
                              .provider = name,
                              .browser_hash = SecretHash(browser_secret),
                              .nonce = RandomSecret(),
                              .code_verifier = RandomSecret(),
                              .return_to = std::regex_match(return_to, kConsoleRoute) ? return_to : "",
                              .created_ms = now,
                              .expires_ms = now + kOidcLoginMs};
  auto url = it->second->AuthorizationUrl(state, login.nonce, login.code_verifier);
  if (!url) return url.error();
  store_.AddOidcLogin(login, now);
  return url;
}

Result<SsoService::SignIn> SsoService::FinishOidc(const std::string& name, const std::string& code,
                                                  const std::string& state,
                                                  const std::string& browser_secret) {
  const auto it = oidc_.find(name);
  if (it == oidc_.end()) return Error::NotFound(fmt::format("no OpenID provider is named '{}'", name));
  if (code.empty() || state.empty() || state.size() > 200 || code.size() > 4096)
    return Error::Invalid("the provider's answer has no code or state");
  const auto login = store_.TakeOidcLogin(SecretHash(state), clock_.NowMs());
  if (!login || login->provider != name) {
    return Error::Unauthenticated("this sign-in is unknown, used or older than ten minutes: sign in again");
  }
  if (browser_secret.empty() || !SameSecret(SecretHash(browser_secret), login->browser_hash)) {
    return Error::Unauthenticated(
        "this sign-in was begun in another browser (its cookie is missing or "
        "different): sign in again from this one");
  }
  const auto& provider = it->second->provider();
  auto claims = it->second->Redeem(code, login->code_verifier, login->nonce);
  if (!claims) return claims.error();
  const auto& c = *claims;
  auto username = OidcUsername(provider, c);
  if (!username) return username.error();
  if (!c.contains("sub") || !c["sub"].is_string() || c["sub"].get<std::string>().empty()) {
    return Error::Unauthenticated(
        fmt::format("provider '{}' gave an ID token without a subject (sub)", name));
  }
  const auto groups = ClaimValues(c, provider.groups_claim);
  const auto mapped = MapRoles(provider.roles, groups);
  const std::string source = "oidc:" + name;
  if (!mapped.Any()) return NoRole(*username, provider.title, groups);
  auto signed_in = Sync({.source = source,
                         .subject = c["sub"].get<std::string>(),
                         .username = *username,
                         .admin = mapped.admin,
                         .groups = mapped.groups},
                        source);
  if (signed_in) signed_in->return_to = login->return_to;
  return signed_in;
}

std::string SsoService::EndSessionUrl(const std::string& login_source) {
  if (login_source.rfind("oidc:", 0) != 0) return "";
  const auto it = oidc_.find(login_source.substr(5));
  if (it == oidc_.end()) return "";
  const auto endpoint = it->second->EndSessionEndpoint();
  if (endpoint.empty()) return "";
  return fmt::format("{}{}client_id={}", endpoint, endpoint.find('?') == std::string::npos ? '?' : '&',
                     it->second->provider().client_id);
}

Result<UserChange> SsoService::LinkIdentity(int user_id, const std::string& source,
                                            const std::string& subject) {
  const bool known =
      (source == "ldap" && ldap_) || (source.rfind("oidc:", 0) == 0 && oidc_.contains(source.substr(5)));
  if (!known) {
    std::string valid = ldap_ ? "ldap" : "";
    for (const auto& p : config_.oidc)
      valid += (valid.empty() ? "oidc:" : ", oidc:") + p.name;
    return Error::Invalid(
        "the identity was not linked",
        {{"source", fmt::format("'{}' is not a single sign-on source of this cronwheel; valid: {}",
                                Utf8Prefix(source, 60), valid.empty() ? "none (no sso_config)" : valid)}});
  }
  if (subject.empty() || subject.size() > kMaxSubjectBytes) {
    return Error::Invalid(
        "the identity was not linked",
        {{"subject", fmt::format("must be 1 to {} bytes (the ID token's sub, or the directory "
                                 "entry's subject_attribute), not {}",
                                 kMaxSubjectBytes, subject.size())}});
  }
  return store_.LinkIdentity(user_id, source, subject, clock_.NowMs());
}

Result<int> SsoService::SetRequireSso(bool require_sso, const std::string& by) {
  if (require_sso && config_.Empty()) {
    return Error::Invalid("the policy was not changed",
                          {{"require_sso",
                            "single sign-on is not configured (the admin's sso_config names no file), "
                            "so requiring it would lock every non-ADMIN out"}});
  }
  return store_.SetRequireSso(require_sso, by, clock_.NowMs());
}

}  // namespace cronwheel::admin
