// The relying party's HTTP side of OpenID Connect (auth/oidc.hpp): discovery, keys and the token endpoint,
// over libcurl.
#include <curl/curl.h>
#include <fmt/format.h>

#include "admin/auth/oidc.hpp"
#include "admin/results/guarded_curl.hpp"
#include "auth/secrets.hpp"
#include "cronwheel/mutex.hpp"
#include "cronwheel/net/http_message.hpp"

namespace cronwheel::admin {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxAnswerBytes = std::size_t{1} << 20;
constexpr long kRequestTimeoutMs = 10'000;
// The discovery document is read again after an hour; the keys at most once a minute when a token names a
// key id not yet known (the provider rotated its keys).
constexpr std::int64_t kDiscoveryTtlMs = 3'600'000;
constexpr std::int64_t kKeysRefreshMinMs = 60'000;

struct CurlFree {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

struct Sink {
  std::string body;
  bool too_big = false;
};

std::size_t Collect(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const std::size_t n = size * count;
  if (sink->body.size() + n > kMaxAnswerBytes) {
    sink->too_big = true;
    return 0;  // aborts the transfer
  }
  sink->body.append(data, n);
  return n;
}

// application/x-www-form-urlencoded (also a query string).
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [k, v] : fields)
    out += fmt::format("{}{}={}", out.empty() ? "" : "&", k, net::PercentEncode(v));
  return out;
}

class CurlHttpsClient final : public HttpsClient {
 public:
  CurlHttpsClient(bool allow_http, std::shared_ptr<const RegistryGuard> guard)
      : allow_http_(allow_http), guard_(guard ? std::move(guard) : std::make_shared<const RegistryGuard>()) {
    static const auto init = curl_global_init(CURL_GLOBAL_DEFAULT);
    (void)init;
  }

  Result<Answer> Get(const std::string& url, const std::string& ca_file) override {
    return Send(url, nullptr, "", "", ca_file);
  }
  Result<Answer> PostForm(const std::string& url, const std::string& form, const std::string& user,
                          const std::string& password, const std::string& ca_file) override {
    return Send(url, &form, user, password, ca_file);
  }

 private:
  Result<Answer> Send(const std::string& url, const std::string* form, const std::string& user,
                      const std::string& password, const std::string& ca_file) const {
    const std::unique_ptr<CURL, CurlFree> handle(curl_easy_init());
    if (!handle) return Error::Invalid("libcurl could not start");
    CURL* curl = handle.get();
    Sink sink;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, allow_http_ ? "https,http" : "https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, kRequestTimeoutMs);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    if (!ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
    const std::unique_ptr<curl_slist, SlistFree> headers(
        curl_slist_append(nullptr, "Accept: application/json"));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
    if (form != nullptr) {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, form->c_str());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(form->size()));
      // client_secret_basic (RFC 6749 §2.3.1): the id and secret form-encoded, then joined by ':'.
      const std::string u_enc = net::PercentEncode(user);
      const std::string p_enc = net::PercentEncode(password);
      curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
      curl_easy_setopt(curl, CURLOPT_USERNAME, u_enc.c_str());
      curl_easy_setopt(curl, CURLOPT_PASSWORD, p_enc.c_str());  // libcurl copies option strings
    }
    CurlConnectGuard guard(*guard_);
    guard.Install(curl);
    const auto rc = curl_easy_perform(curl);
    return Finish(curl, rc, url, std::move(sink), guard);
  }

  static Result<Answer> Finish(CURL* curl, CURLcode rc, const std::string& url, Sink sink,
                               const CurlConnectGuard& guard) {
    if (sink.too_big) return Error::Invalid(fmt::format("{} answered more than 1 MiB", url));
    if (rc == CURLE_COULDNT_CONNECT && !guard.refused().empty())
      return Error::Invalid(fmt::format("{} was not read, refused: {}", url, guard.refused()));
    if (rc != CURLE_OK)
      return Error::Invalid(fmt::format("{} could not be read: {}", url, curl_easy_strerror(rc)));
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    return Answer{.status = static_cast<int>(status), .body = std::move(sink.body)};
  }

  bool allow_http_;
  std::shared_ptr<const RegistryGuard> guard_;
};

}  // namespace

std::unique_ptr<HttpsClient> MakeCurlHttpsClient(bool allow_http,
                                                 std::shared_ptr<const RegistryGuard> guard) {
  return std::make_unique<CurlHttpsClient>(allow_http, std::move(guard));
}

Result<json> OidcClient::FetchJson(const std::string& url, const std::string& what) {
  auto answer = http_.Get(url, provider_.ca_file);
  if (!answer) {
    return Error::Invalid(
        fmt::format("the {} of provider '{}': {}", what, provider_.name, answer.error().message));
  }
  if (answer->status != 200) {
    return Error::Invalid(fmt::format("the {} of provider '{}' ({}) answered HTTP {}", what, provider_.name,
                                      url, answer->status));
  }
  auto doc = json::parse(answer->body, nullptr, false);
  if (!doc.is_object()) {
    return Error::Invalid(
        fmt::format("the {} of provider '{}' ({}) is not a JSON object", what, provider_.name, url));
  }
  return doc;
}

Result<OidcClient::Discovery> OidcClient::Discover() {
  const auto now = clock_.NowMs();
  {
    cronwheel::MutexLock lock(mu_);
    if (discovery_ && now - discovery_->read_ms < kDiscoveryTtlMs) return *discovery_;
  }
  const auto url = provider_.issuer + "/.well-known/openid-configuration";
  auto doc = FetchJson(url, "discovery document");
  if (!doc) return doc.error();
  // OpenID Connect Discovery §4.3: the document's issuer is exactly the one it was read for.
  if (doc->value("issuer", "") != provider_.issuer) {
    return Error::Invalid(
        fmt::format("the discovery document of provider '{}' names the issuer '{}', not the "
                    "configured '{}'",
                    provider_.name, doc->value("issuer", ""), provider_.issuer));
  }
  Discovery d{.authorization_endpoint = doc->value("authorization_endpoint", ""),
              .token_endpoint = doc->value("token_endpoint", ""),
              .jwks_uri = doc->value("jwks_uri", ""),
              .end_session_endpoint = doc->value("end_session_endpoint", ""),
              .read_ms = now};
  if (d.authorization_endpoint.empty() || d.token_endpoint.empty() || d.jwks_uri.empty()) {
    return Error::Invalid(
        fmt::format("the discovery document of provider '{}' lacks authorization_endpoint, "
                    "token_endpoint or jwks_uri",
                    provider_.name));
  }
  cronwheel::MutexLock lock(mu_);
  discovery_ = d;
  return d;
}

Result<json> OidcClient::Keys(bool refresh) {
  const auto now = clock_.NowMs();
  {
    cronwheel::MutexLock lock(mu_);
    const bool fresh = jwks_read_ms_ > 0 && (!refresh || now - jwks_read_ms_ < kKeysRefreshMinMs);
    if (fresh) return jwks_;
  }
  auto d = Discover();
  if (!d) return d.error();
  auto keys = FetchJson(d->jwks_uri, "keys (jwks_uri)");
  if (!keys) return keys.error();
  cronwheel::MutexLock lock(mu_);
  jwks_ = *keys;
  jwks_read_ms_ = now;
  return jwks_;
}

Result<std::string> OidcClient::AuthorizationUrl(const std::string& state, const std::string& nonce,
                                                 const std::string& code_verifier) {
  auto d = Discover();
  if (!d) return d.error();
  std::string scopes;
  for (const auto& s : provider_.scopes)
    scopes += (scopes.empty() ? "" : " ") + s;
  const auto query = FormEncode({{"response_type", "code"},
                                 {"client_id", provider_.client_id},
                                 {"redirect_uri", provider_.redirect_url},
                                 {"scope", scopes},
                                 {"state", state},
                                 {"nonce", nonce},
                                 {"code_challenge", PkceChallenge(code_verifier)},
                                 {"code_challenge_method", "S256"}});
  const char sep = d->authorization_endpoint.find('?') == std::string::npos ? '?' : '&';
  return fmt::format("{}{}{}", d->authorization_endpoint, sep, query);
}

Result<json> OidcClient::Redeem(const std::string& code, const std::string& code_verifier,
                                const std::string& nonce) {
  auto d = Discover();
  if (!d) return d.error();
  const auto form = FormEncode({{"grant_type", "authorization_code"},
                                {"code", code},
                                {"redirect_uri", provider_.redirect_url},
                                {"code_verifier", code_verifier}});
  auto answer = http_.PostForm(d->token_endpoint, form, provider_.client_id, provider_.client_secret,
                               provider_.ca_file);
  if (!answer)
    return Error::Unauthenticated(fmt::format("provider '{}': {}", provider_.name, answer.error().message));
  const auto body = json::parse(answer->body, nullptr, false);
  if (answer->status != 200 || !body.is_object()) {
    const std::string why =
        body.is_object() ? fmt::format("{} {}", body.value("error", ""), body.value("error_description", ""))
                         : std::string("no JSON answer");
    return Error::Unauthenticated(fmt::format("provider '{}' refused the sign-in's code (HTTP {}): {}",
                                              provider_.name, answer->status, why));
  }
  const auto id_token = body.value("id_token", "");
  if (id_token.empty()) {
    return Error::Unauthenticated(fmt::format(
        "provider '{}' answered without an ID token (is 'openid' among the scopes?)", provider_.name));
  }
  const IdTokenExpectations expect{
      .issuer = provider_.issuer, .client_id = provider_.client_id, .nonce = nonce, .now_ms = clock_.NowMs()};
  auto keys = Keys(false);
  if (!keys) return Error::Unauthenticated(keys.error().message);
  auto claims = VerifyIdToken(id_token, *keys, expect);
  if (!claims && claims.error().message.find("publishes no") != std::string::npos) {
    keys = Keys(true);  // the provider may have rotated its keys
    if (!keys) return Error::Unauthenticated(keys.error().message);
    claims = VerifyIdToken(id_token, *keys, expect);
  }
  return claims;
}

std::string OidcClient::EndSessionEndpoint() {
  auto d = Discover();
  return d ? d->end_session_endpoint : "";
}

}  // namespace cronwheel::admin
