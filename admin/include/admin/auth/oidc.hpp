#pragma once
// OpenID Connect, the relying party's side: the authorization code flow with PKCE (OpenID Connect Core 1.0
// §3.1; RFC 7636 S256), the provider's discovery document (OpenID Connect Discovery 1.0 §4) and keys (JWKS,
// RFC 7517), and the ID token's checks (Core §3.1.3.7). Used by SsoService (auth/sso_service.hpp), one
// OidcClient per configured provider (auth/sso_config.hpp).
//
// The ID token's signature is checked by libjwt (Debian's libjwt) with the provider's key, converted from its
// JWK to PEM by OpenSSL; only RS256/384/512 and ES256/384/512 are accepted (an HMAC or "none" token is
// refused before libjwt sees it, so a public key is never used as an HMAC secret). Then, on the injected
// clock with kIdTokenLeeway of skew either way: `iss` is the issuer, `aud` holds the client id (and `azp`
// is the client id when there are several audiences), `exp` is in the future, `iat` not in the future, and
// `nonce` is the one this sign-in sent.
//
// HTTP: the discovery document, the keys and the token endpoint are fetched with libcurl (HttpsClient),
// https:// only unless the provider's configuration allows http:// (dev mode), 10 s per request, answers up
// to 1 MiB, never following a redirect. The URLs come from the operator's configuration and the provider's
// own discovery document, never from a request.
//
// Thread-safety: VerifyIdToken is pure. OidcClient may be used from any thread at once (its cached
// discovery document and keys are guarded by a mutex).

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admin/auth/sso_config.hpp"
#include "admin/dispatch/registry_guard.hpp"
#include "admin/model/result.hpp"
#include "cronwheel/mutex.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

inline constexpr std::chrono::seconds kIdTokenLeeway{60};

struct IdTokenExpectations {
  std::string issuer;
  std::string client_id;
  std::string nonce;
  std::int64_t now_ms = 0;
};

// Checks `id_token` (a compact JWS) against the keys of `jwks` ({"keys": [...]}) and `expect`. Returns its
// claims, or kUnauthenticated naming what failed ("the ID token's signature does not verify ...", "... its
// audience ...", "... expired at ...", "... nonce ...", "... issuer ...", "... algorithm ...").
Result<nlohmann::json> VerifyIdToken(const std::string& id_token, const nlohmann::json& jwks,
                                     const IdTokenExpectations& expect);

// The PEM (SubjectPublicKeyInfo) of an RSA or EC (P-256, P-384, P-521) public JWK; kInvalid otherwise.
Result<std::string> JwkToPem(const nlohmann::json& jwk);

// An HTTP client for the provider's endpoints (a seam: CurlHttpsClient in production).
class HttpsClient {
 public:
  virtual ~HttpsClient() = default;
  struct Answer {
    int status = 0;
    std::string body;
  };
  // kUnavailable-like failures (no connection, timeout, TLS) are kInvalid errors naming the URL and cause.
  virtual Result<Answer> Get(const std::string& url, const std::string& ca_file) = 0;
  // POSTs `form` (application/x-www-form-urlencoded, already encoded) with HTTP Basic `user`:`password`.
  virtual Result<Answer> PostForm(const std::string& url, const std::string& form, const std::string& user,
                                  const std::string& password, const std::string& ca_file) = 0;

 protected:
  HttpsClient() = default;
  HttpsClient(const HttpsClient&) = default;
  HttpsClient& operator=(const HttpsClient&) = default;
};

// libcurl: https:// only unless `allow_http`; 10 s per request, 1 MiB answers, no redirects. Connects only to
// addresses `guard` allows for a service (RegistryGuard::Peer::kService: never into registry_deny, never to
// the admin itself; nullptr = the default guard), checked on the address each connection is made to: the
// issuer is the operator's, but the endpoints come from its discovery document and a name's address from DNS
// (issue 44, F6). libcurl's proxy variables (https_proxy, no_proxy) are honoured; through a proxy, the
// proxy's address is what the guard checks.
std::unique_ptr<HttpsClient> MakeCurlHttpsClient(bool allow_http,
                                                 std::shared_ptr<const RegistryGuard> guard = nullptr);

class OidcClient {
 public:
  // `provider`, `clock` and `http` must outlive this.
  OidcClient(const OidcProviderConfig& provider, ringwheel::Clock& clock, HttpsClient& http)
      : provider_(provider), clock_(clock), http_(http) {}

  // Where the browser goes to sign in: the provider's authorization endpoint with response_type=code, the
  // scopes, redirect_uri, state, nonce and the S256 challenge of `code_verifier`. Errors: the discovery
  // document could not be read or is wrong (kInvalid, naming the URL).
  Result<std::string> AuthorizationUrl(const std::string& state, const std::string& nonce,
                                       const std::string& code_verifier);
  // Trades `code` (and the verifier) at the token endpoint and verifies the ID token it answers with
  // (VerifyIdToken; the keys are read again once when the token names a key id not yet known). Returns the
  // token's claims. kUnauthenticated when the provider refuses the code or the token fails a check.
  Result<nlohmann::json> Redeem(const std::string& code, const std::string& code_verifier,
                                const std::string& nonce);
  // The provider's end_session_endpoint ("" when it has none or discovery failed).
  std::string EndSessionEndpoint();

  [[nodiscard]] const OidcProviderConfig& provider() const { return provider_; }

 private:
  struct Discovery {
    std::string authorization_endpoint;
    std::string token_endpoint;
    std::string jwks_uri;
    std::string end_session_endpoint;
    std::int64_t read_ms = 0;
  };
  Result<Discovery> Discover();
  Result<nlohmann::json> Keys(bool refresh);
  Result<nlohmann::json> FetchJson(const std::string& url, const std::string& what);

  const OidcProviderConfig& provider_;
  ringwheel::Clock& clock_;
  HttpsClient& http_;
  cronwheel::Mutex mu_;
  std::optional<Discovery> discovery_ ABSL_GUARDED_BY(mu_);
  nlohmann::json jwks_ ABSL_GUARDED_BY(mu_);
  std::int64_t jwks_read_ms_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cronwheel::admin
