// The ID token's checks (auth/oidc.hpp, VerifyIdToken) and the JWK → PEM conversion they need.
#include <fmt/format.h>
#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <sodium.h>

#include <algorithm>
#include <memory>

#include "admin/auth/oidc.hpp"
#include "auth/secrets.hpp"
#include "model/time_format.hpp"

namespace cronwheel::admin {
namespace {

using json = nlohmann::json;

std::optional<std::string> Base64UrlDecode(std::string_view in) {
  std::string out(in.size(), '\0');
  std::size_t len = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), in.data(), in.size(),
                        nullptr, &len, nullptr, sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0) {
    return std::nullopt;
  }
  out.resize(len);
  return out;
}

struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct BldFree {
  void operator()(OSSL_PARAM_BLD* b) const { OSSL_PARAM_BLD_free(b); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct CtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct JwtFree {
  void operator()(jwt_t* j) const { jwt_free(j); }
};

Result<std::string> Field(const json& jwk, const char* name) {
  if (!jwk.contains(name) || !jwk[name].is_string())
    return Error::Invalid(fmt::format("the key has no string member '{}'", name));
  auto bytes = Base64UrlDecode(jwk[name].get<std::string>());
  if (!bytes || bytes->empty()) return Error::Invalid(fmt::format("the key's '{}' is not base64url", name));
  return *bytes;
}

Error Refused(const std::string& why) {
  return Error::Unauthenticated(fmt::format("the provider's ID token was refused: {}", why));
}

bool AudienceHas(const json& aud, const std::string& client_id) {
  if (aud.is_string()) return aud.get<std::string>() == client_id;
  if (!aud.is_array()) return false;
  return std::any_of(aud.begin(), aud.end(),
                     [&](const json& a) { return a.is_string() && a.get<std::string>() == client_id; });
}

// The algorithms accepted and the key type each needs.
const char* KeyTypeOf(std::string_view alg) {
  if (alg == "RS256" || alg == "RS384" || alg == "RS512") return "RSA";
  if (alg == "ES256" || alg == "ES384" || alg == "ES512") return "EC";
  return nullptr;
}

}  // namespace

Result<std::string> JwkToPem(const json& jwk) {
  if (!jwk.is_object() || !jwk.contains("kty") || !jwk["kty"].is_string())
    return Error::Invalid("the key has no 'kty'");
  const auto kty = jwk["kty"].get<std::string>();
  std::unique_ptr<OSSL_PARAM_BLD, BldFree> bld(OSSL_PARAM_BLD_new());
  std::vector<std::unique_ptr<BIGNUM, BnFree>> numbers;
  std::string point;
  const char* type = nullptr;
  if (kty == "RSA") {
    type = "RSA";
    for (const char* name : {"n", "e"}) {
      auto bytes = Field(jwk, name);
      if (!bytes) return bytes.error();
      numbers.emplace_back(BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes->data()),
                                     static_cast<int>(bytes->size()), nullptr));
      if (!numbers.back()) return Error::Invalid("the key's numbers cannot be read");
    }
    OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, numbers[0].get());
    OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, numbers[1].get());
  } else if (kty == "EC") {
    type = "EC";
    const std::string crv = jwk.value("crv", "");
    const char* group = crv == "P-256"   ? "prime256v1"
                        : crv == "P-384" ? "secp384r1"
                        : crv == "P-521" ? "secp521r1"
                                         : nullptr;
    if (group == nullptr)
      return Error::Invalid(fmt::format("the EC key's curve '{}' is not P-256, P-384 or P-521", crv));
    auto x = Field(jwk, "x");
    if (!x) return x.error();
    auto y = Field(jwk, "y");
    if (!y) return y.error();
    point = std::string(1, '\x04') + *x + *y;  // an uncompressed point
    OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, 0);
    OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size());
  } else {
    return Error::Invalid(fmt::format("the key type '{}' is not RSA or EC", kty));
  }
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(bld.get()));
  std::unique_ptr<EVP_PKEY_CTX, CtxFree> ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* raw = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) <= 0) {
    return Error::Invalid(fmt::format("the {} key is not a valid public key", kty));
  }
  std::unique_ptr<EVP_PKEY, KeyFree> key(raw);
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key.get()) != 1)
    return Error::Invalid("the key cannot be written");
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

Result<json> VerifyIdToken(const std::string& id_token, const json& jwks, const IdTokenExpectations& expect) {
  InitSodium();
  const auto dot1 = id_token.find('.');
  const auto dot2 = dot1 == std::string::npos ? dot1 : id_token.find('.', dot1 + 1);
  if (dot2 == std::string::npos || id_token.find('.', dot2 + 1) != std::string::npos)
    return Refused("it is not a signed JWT (three dot-separated parts)");
  const auto header_text = Base64UrlDecode(std::string_view(id_token).substr(0, dot1));
  const json header = header_text ? json::parse(*header_text, nullptr, false) : json();
  if (!header.is_object() || !header.contains("alg") || !header["alg"].is_string())
    return Refused("its header is not a JSON object with an 'alg'");
  const auto alg = header["alg"].get<std::string>();
  const char* kty = KeyTypeOf(alg);
  if (kty == nullptr) {
    return Refused(
        fmt::format("its algorithm '{}' is not accepted (RS256, RS384, RS512, ES256, ES384, ES512)", alg));
  }
  const std::string kid =
      header.contains("kid") && header["kid"].is_string() ? header["kid"].get<std::string>() : "";

  // The provider's key: the one of the token's kid, or the only key of the right type when it names none.
  const json* key = nullptr;
  int candidates = 0;
  if (jwks.is_object() && jwks.contains("keys") && jwks["keys"].is_array()) {
    for (const auto& k : jwks["keys"]) {
      if (!k.is_object() || k.value("kty", "") != kty) continue;
      if (k.contains("use") && k["use"] != "sig") continue;
      if (!kid.empty() ? k.value("kid", "") == kid : ++candidates == 1) key = &k;
    }
  }
  if (key == nullptr || (kid.empty() && candidates != 1)) {
    return Refused(
        kid.empty()
            ? "it names no key id, and the provider does not publish exactly one signing key of its type"
            : fmt::format("the provider publishes no {} key with id '{}'", kty, kid));
  }
  const auto pem = JwkToPem(*key);
  if (!pem) return Refused(fmt::format("the provider's key '{}': {}", kid, pem.error().message));

  jwt_t* raw = nullptr;
  const int rc = jwt_decode(&raw, id_token.c_str(), reinterpret_cast<const unsigned char*>(pem->data()),
                            static_cast<int>(pem->size()));
  std::unique_ptr<jwt_t, JwtFree> jwt(raw);
  if (rc != 0 || !jwt) return Refused("its signature does not verify with the provider's key");
  if (std::string_view(jwt_alg_str(jwt_get_alg(jwt.get()))) != alg)
    return Refused("its algorithm changed while it was checked");

  const auto payload_text = Base64UrlDecode(std::string_view(id_token).substr(dot1 + 1, dot2 - dot1 - 1));
  json claims = payload_text ? json::parse(*payload_text, nullptr, false) : json();
  if (!claims.is_object()) return Refused("its claims are not a JSON object");

  const auto iss = claims.value("iss", "");
  if (iss != expect.issuer)
    return Refused(fmt::format("its issuer '{}' is not the configured issuer '{}'", iss, expect.issuer));
  if (!claims.contains("aud") || !AudienceHas(claims["aud"], expect.client_id)) {
    return Refused(fmt::format("its audience {} does not include this client, '{}'",
                               claims.contains("aud") ? claims["aud"].dump() : "(none)", expect.client_id));
  }
  if (claims["aud"].is_array() && claims["aud"].size() > 1 && claims.value("azp", "") != expect.client_id) {
    return Refused(
        fmt::format("it has several audiences and its authorized party (azp) is not '{}'", expect.client_id));
  }
  const auto leeway_ms = std::chrono::duration_cast<std::chrono::milliseconds>(kIdTokenLeeway).count();
  if (!claims.contains("exp") || !claims["exp"].is_number()) return Refused("it has no expiry (exp)");
  const auto exp_ms = static_cast<std::int64_t>(claims["exp"].get<double>() * 1000);
  if (exp_ms + leeway_ms <= expect.now_ms)
    return Refused(fmt::format("it expired at {} (now {})", FormatUtc(exp_ms), FormatUtc(expect.now_ms)));
  if (claims.contains("iat") && claims["iat"].is_number()) {
    const auto iat_ms = static_cast<std::int64_t>(claims["iat"].get<double>() * 1000);
    if (iat_ms - leeway_ms > expect.now_ms) {
      return Refused(fmt::format("it was issued in the future, at {} (now {}): check the clocks",
                                 FormatUtc(iat_ms), FormatUtc(expect.now_ms)));
    }
  }
  const auto nonce =
      claims.contains("nonce") && claims["nonce"].is_string() ? claims["nonce"].get<std::string>() : "";
  if (nonce.empty() || !SameSecret(nonce, expect.nonce))
    return Refused("its nonce is not the one this sign-in sent (a replayed or foreign token)");
  if (!claims.contains("sub") || !claims["sub"].is_string() || claims["sub"].get<std::string>().empty())
    return Refused("it has no subject (sub)");
  return claims;
}

}  // namespace cronwheel::admin
