// Single sign-on's pure parts: the role rules (MapRoles), the SSO file's checks (LoadSsoConfig), the ID
// token's checks (VerifyIdToken, on a fixed instant, with tokens signed here by libjwt and keys made here by
// OpenSSL) and the LDAP escapes. The flows against a real OpenID provider and a real slapd:
// tests/e2e/sso_e2e_test.cpp.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <sodium.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "admin/auth/ldap_directory.hpp"
#include "admin/auth/oidc.hpp"
#include "admin/auth/sso_config.hpp"
#include "admin/auth/sso_service.hpp"

namespace cronwheel::admin {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::int64_t kNowMs = 1'795'000'000'000;  // 2026-11-18
constexpr const char* kIssuer = "https://sso.example.com/realms/acme";

// ---------------------------------------------------------------------------------------------- role rules

TEST(MapRoles, EveryMatchingRuleAppliesAndTheHighestRolePerGroupWins) {
  const std::vector<RoleRule> rules = {
      {.value = "ops", .group = "payroll", .role = GroupRole::kOperator},
      {.value = "devs", .group = "payroll", .role = GroupRole::kDeveloper},
      {.value = "devs", .group = "billing", .role = GroupRole::kViewer},
      {.value = "*", .group = "status", .role = GroupRole::kViewer},
      {.value = "root", .admin = true},
  };
  auto m = MapRoles(rules, {"ops", "devs"});
  EXPECT_FALSE(m.admin);
  EXPECT_EQ(m.groups, (std::vector<std::pair<std::string, GroupRole>>{{"billing", GroupRole::kViewer},
                                                                      {"payroll", GroupRole::kDeveloper},
                                                                      {"status", GroupRole::kViewer}}));
  m = MapRoles(rules, {"root"});
  EXPECT_TRUE(m.admin);
  EXPECT_TRUE(m.Any());
  // Matches are exact: case and substrings do not match.
  m = MapRoles({rules[0]}, {"OPS", "ops-team"});
  EXPECT_FALSE(m.Any());
}

// ---------------------------------------------------------------------------------------------- the SSO file

class SsoFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("cronwheel-sso-unit-{}", ::getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Result<SsoConfig> Load(const std::string& text, bool dev = false) {
    const auto path = dir_ / "sso.toml";
    std::ofstream(path) << text;
    return LoadSsoConfig(path.string(), dev);
  }
  std::string Error(const std::string& text, bool dev = false) {
    auto r = Load(text, dev);
    return r ? std::string("(loaded)") : r.error().message;
  }
  fs::path dir_;
};

constexpr const char* kProvider = R"(
[[oidc]]
name = "kc"
issuer = "https://sso.example.com/realms/acme/"
client_id = "cronwheel"
client_secret_file = "SECRET_FILE"
redirect_url = "https://cron.example.com/api/v1/auth/oidc/kc/callback"
[[oidc.roles]]
value = "cw-admins"
admin = true
[[oidc.roles]]
value = "payroll-ops"
group = "payroll"
role = "OPERATOR"
)";

std::string With(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST_F(SsoFile, AProviderIsReadWithItsDefaultsAndItsSecretFromAFile) {
  std::ofstream(dir_ / "secret") << "s3cret\n";
  const auto config = Load(With(kProvider, "SECRET_FILE", (dir_ / "secret").string()));
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->oidc.size(), 1U);
  const auto& p = config->oidc[0];
  EXPECT_EQ(p.issuer, kIssuer) << "the trailing slash is dropped";
  EXPECT_EQ(p.client_secret, "s3cret") << "the file's newline is dropped";
  EXPECT_EQ(p.title, "kc");
  EXPECT_EQ(p.scopes, (std::vector<std::string>{"openid", "profile", "email"}));
  EXPECT_EQ(p.username_claim, "preferred_username");
  ASSERT_EQ(p.roles.size(), 2U);
  EXPECT_EQ(p.roles[1].role, GroupRole::kOperator);
  EXPECT_FALSE(config->ldap);
}

TEST_F(SsoFile, EachMistakeIsNamedByItsKeyAndValue) {
  std::ofstream(dir_ / "secret") << "s3cret";
  const auto ok = With(kProvider, "SECRET_FILE", (dir_ / "secret").string());
  EXPECT_THAT(Error(ok + "\nstray = 1\n"), HasSubstr("stray is not a known key"));
  EXPECT_THAT(Error(With(ok, "client_id", "clientid")), HasSubstr("oidc[1].clientid is not a known key"));
  EXPECT_THAT(Error(With(ok, "https://sso.example.com", "http://sso.example.com")),
              HasSubstr("oidc[1].issuer = 'http://sso.example.com/realms/acme' must be https://"));
  EXPECT_EQ(Error(With(ok, "https://sso.example.com", "http://sso.example.com"), true), "(loaded)")
      << "dev mode";
  EXPECT_EQ(Error(With(ok, "https://sso.example.com", "http://127.0.0.1:8081")), "(loaded)") << "loopback";
  EXPECT_THAT(Error(With(ok, "name = \"kc\"", "name = \"Key Cloak\"")),
              HasSubstr("oidc[1].name = 'Key Cloak' must be"));
  EXPECT_THAT(Error(With(ok, "role = \"OPERATOR\"", "role = \"BOSS\"")),
              HasSubstr("oidc[1].roles[2].role = 'BOSS' is not one of"));
  EXPECT_THAT(Error(With(ok, "group = \"payroll\"\n", "")), HasSubstr("oidc[1].roles[2].group is required"));
  EXPECT_THAT(Error(With(ok, "client_secret_file = \"" + (dir_ / "secret").string() + "\"", "")),
              HasSubstr("oidc[1].client_secret is required"));
  EXPECT_THAT(Error(With(ok, (dir_ / "secret").string(), "/nonexistent/secret")),
              HasSubstr("cannot be read"));
  EXPECT_THAT(Error(ok + ok), HasSubstr("oidc[2].name = 'kc' is used twice"));
  EXPECT_THAT(Error("[[oidc]\n"), HasSubstr("line 1"));
}

// Issue 44, N7: the loopback exemption from https:// was a prefix of the text, so
// http://127.0.0.1:x@host/ (user info 127.0.0.1:x, host `host`) passed. The host is compared now.
TEST_F(SsoFile, N7_PlainHttpIsAllowedForALoopbackHostNotForATextThatStartsLikeOne) {
  std::ofstream(dir_ / "secret") << "s3cret";
  const auto ok = With(kProvider, "SECRET_FILE", (dir_ / "secret").string());
  for (const char* issuer :
       {"http://127.0.0.1:x@sso.attacker.test", "http://127.0.0.1:8081@sso.attacker.test",
        "http://localhost:8081@sso.attacker.test", "http://[::1]@sso.attacker.test",
        "https://user@sso.example.com"}) {
    EXPECT_THAT(Error(With(ok, "https://sso.example.com/realms/acme/", issuer)),
                AllOf(HasSubstr(fmt::format("oidc[1].issuer = '{}'", issuer)), HasSubstr("user info")))
        << issuer;
  }
  for (const char* issuer : {"http://127.0.0.1.attacker.test", "http://localhost.attacker.test:8081",
                             "http://127.0.0.1.nip.io", "http://[::2]:8081", "http://0.0.0.0:8081"}) {
    EXPECT_THAT(Error(With(ok, "https://sso.example.com/realms/acme/", issuer)),
                HasSubstr(fmt::format("oidc[1].issuer = '{}' must be https://", issuer)))
        << issuer;
  }
  for (const char* issuer :
       {"http://127.0.0.1:8081", "http://127.0.0.2", "http://[::1]:8081", "http://LOCALHOST",
        "http://[::ffff:127.0.0.1]:8081", "http://localhost:8081/realms/acme"}) {
    EXPECT_EQ(Error(With(ok, "https://sso.example.com/realms/acme/", issuer)), "(loaded)") << issuer;
  }
  EXPECT_THAT(
      Error(With(ok, "https://cron.example.com/api", "http://127.0.0.1:8080@cron.attacker.test/api")),
      HasSubstr("oidc[1].redirect_url = 'http://127.0.0.1:8080@cron.attacker.test/api/v1/auth/oidc/kc/"
                "callback'"));
}

TEST_F(SsoFile, AnLdapDirectoryMustUseTlsAndSayHowToFindItsUsers) {
  const std::string roles = "[[ldap.roles]]\nvalue = \"admins\"\nadmin = true\n";
  const auto config = Load(
      "[ldap]\nurl = \"ldaps://ldap.example.org\"\nuser_dn = "
      "\"uid={username},ou=people,dc=example,dc=org\"\n" +
      roles);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->ldap->timeout, std::chrono::seconds(5));
  EXPECT_EQ(config->ldap->subject_attribute, "entryUUID") << "a lasting id, not the DN (review 2, N2)";
  EXPECT_THAT(
      Error("[ldap]\nurl = \"ldaps://x\"\nuser_dn = \"uid={username}\"\nsubject_attribute = \"\"\n" + roles),
      HasSubstr("ldap.subject_attribute must name an attribute"));
  EXPECT_THAT(Error("[ldap]\nurl = \"ldap://ldap.example.org\"\nuser_dn = \"uid={username}\"\n" + roles),
              HasSubstr("ldap.url = 'ldap://ldap.example.org' is plain LDAP"));
  EXPECT_EQ(
      Error("[ldap]\nurl = \"ldap://ldap.example.org\"\nstart_tls = true\nuser_dn = \"uid={username}\"\n" +
            roles),
      "(loaded)");
  EXPECT_THAT(Error("[ldap]\nurl = \"ldaps://x\"\n" + roles), HasSubstr("ldap.user_base is required"));
  EXPECT_THAT(Error("[ldap]\nurl = \"ldaps://x\"\nuser_dn = \"uid=alice\"\n" + roles),
              HasSubstr("must contain {username}"));
  EXPECT_THAT(Error("[ldap]\nurl = \"ldaps://x\"\nuser_base = \"dc=x\"\nbind_dn = \"cn=r\"\n" + roles),
              HasSubstr("ldap.bind_password is required"));
  EXPECT_THAT(Error("[ldap]\nurl = \"ldaps://x\"\nuser_dn = \"uid={username}\"\n"),
              HasSubstr("ldap.roles has no rule"));
  EXPECT_THAT(Error("[ldap]\nurl = \"ldaps://x\"\nuser_dn = \"uid={username}\"\ntimeout_s = 0\n" + roles),
              HasSubstr("ldap.timeout_s must be a whole number of seconds from 1 to 60"));
}

// ---------------------------------------------------------------------------------------------- ID tokens

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct JwtFree {
  void operator()(jwt_t* j) const { jwt_free(j); }
};

std::string Base64Url(const std::string& bytes) {
  std::string out(sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                    bytes.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  out.resize(out.find('\0'));
  return out;
}

// An RSA key pair: its private PEM (to sign) and its public JWK (what a provider publishes).
struct RsaKey {
  std::string private_pem;
  std::string public_pem;
  json jwk;
};

RsaKey MakeRsaKey(const std::string& kid) {
  std::unique_ptr<EVP_PKEY, KeyFree> key(EVP_RSA_gen(2048));
  RsaKey out;
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  out.private_pem.assign(data, static_cast<std::size_t>(len));
  std::unique_ptr<BIO, BioFree> pub(BIO_new(BIO_s_mem()));
  PEM_write_bio_PUBKEY(pub.get(), key.get());
  len = BIO_get_mem_data(pub.get(), &data);
  out.public_pem.assign(data, static_cast<std::size_t>(len));
  json jwk{{"kty", "RSA"}, {"kid", kid}, {"use", "sig"}, {"alg", "RS256"}};
  for (const auto& [name, param] :
       {std::pair{"n", OSSL_PKEY_PARAM_RSA_N}, std::pair{"e", OSSL_PKEY_PARAM_RSA_E}}) {
    BIGNUM* bn = nullptr;
    EVP_PKEY_get_bn_param(key.get(), param, &bn);
    std::string bytes(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
    BN_free(bn);
    jwk[name] = Base64Url(bytes);
  }
  out.jwk = jwk;
  return out;
}

// A token with `claims`, signed by libjwt with `alg` and `key` (a PEM, or an HMAC secret), header kid `kid`.
std::string Sign(const json& claims, jwt_alg_t alg, const std::string& key, const std::string& kid) {
  jwt_t* raw = nullptr;
  jwt_new(&raw);
  std::unique_ptr<jwt_t, JwtFree> jwt(raw);
  jwt_add_grants_json(jwt.get(), claims.dump().c_str());
  if (!kid.empty()) jwt_add_header(jwt.get(), "kid", kid.c_str());
  jwt_set_alg(jwt.get(), alg,
              alg == JWT_ALG_NONE ? nullptr : reinterpret_cast<const unsigned char*>(key.data()),
              alg == JWT_ALG_NONE ? 0 : static_cast<int>(key.size()));
  char* token = jwt_encode_str(jwt.get());
  std::string out = token != nullptr ? token : "";
  free(token);  // NOLINT(cppcoreguidelines-no-malloc): libjwt allocates it with malloc
  return out;
}

class IdToken : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_GE(sodium_init(), 0);
    key_ = new RsaKey(MakeRsaKey("k1"));
    other_ = new RsaKey(MakeRsaKey("k1"));  // another key under the same id
  }
  static void TearDownTestSuite() {
    delete key_;
    delete other_;
  }
  static json Claims() {
    return {{"iss", kIssuer},
            {"aud", "cronwheel"},
            {"sub", "u-1"},
            {"nonce", "n-123"},
            {"exp", kNowMs / 1000 + 300},
            {"iat", kNowMs / 1000 - 5},
            {"preferred_username", "alice"}};
  }
  static json Keys() { return {{"keys", {key_->jwk}}}; }
  static Result<json> Verify(const std::string& token, const json& keys = Keys()) {
    return VerifyIdToken(token, keys,
                         {.issuer = kIssuer, .client_id = "cronwheel", .nonce = "n-123", .now_ms = kNowMs});
  }
  static std::string Refusal(const std::string& token, const json& keys = Keys()) {
    auto r = Verify(token, keys);
    if (r) return "(accepted)";
    EXPECT_EQ(r.error().kind, ErrorKind::kUnauthenticated);
    return r.error().message;
  }
  static RsaKey* key_;
  static RsaKey* other_;
};
RsaKey* IdToken::key_ = nullptr;
RsaKey* IdToken::other_ = nullptr;

TEST_F(IdToken, AGoodTokenGivesItsClaims) {
  const auto claims = Verify(Sign(Claims(), JWT_ALG_RS256, key_->private_pem, "k1"));
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_EQ((*claims)["preferred_username"], "alice");
  // Without a kid, the provider's only RSA signing key is used; several audiences need azp.
  auto c = Claims();
  c["aud"] = {"other", "cronwheel"};
  c["azp"] = "cronwheel";
  EXPECT_TRUE(Verify(Sign(c, JWT_ALG_RS256, key_->private_pem, "")));
  // Within the minute of leeway either way.
  c = Claims();
  c["exp"] = kNowMs / 1000 - 30;
  c["iat"] = kNowMs / 1000 + 30;
  EXPECT_TRUE(Verify(Sign(c, JWT_ALG_RS256, key_->private_pem, "k1")));
}

TEST_F(IdToken, EachFailedCheckIsRefusedWithItsReason) {
  const auto& k = key_->private_pem;
  EXPECT_THAT(Refusal(Sign(Claims(), JWT_ALG_RS256, other_->private_pem, "k1")),
              HasSubstr("signature does not verify"));
  auto token = Sign(Claims(), JWT_ALG_RS256, k, "k1");
  token[token.size() - 10] = token[token.size() - 10] == 'A' ? 'B' : 'A';
  EXPECT_THAT(Refusal(token), HasSubstr("signature does not verify"));
  auto c = Claims();
  c["aud"] = "someone-else";
  EXPECT_THAT(Refusal(Sign(c, JWT_ALG_RS256, k, "k1")),
              HasSubstr("audience \"someone-else\" does not include"));
  c = Claims();
  c["aud"] = {"other", "cronwheel"};
  EXPECT_THAT(Refusal(Sign(c, JWT_ALG_RS256, k, "k1")), HasSubstr("authorized party (azp)"));
  c = Claims();
  c["exp"] = kNowMs / 1000 - 61;
  EXPECT_THAT(Refusal(Sign(c, JWT_ALG_RS256, k, "k1")), HasSubstr("expired at"));
  c = Claims();
  c.erase("exp");
  EXPECT_THAT(Refusal(Sign(c, JWT_ALG_RS256, k, "k1")), HasSubstr("no expiry"));
  c = Claims();
  c["iat"] = kNowMs / 1000 + 3600;
  EXPECT_THAT(Refusal(Sign(c, JWT_ALG_RS256, k, "k1")), HasSubstr("issued in the future"));
  c = Claims();
  c["nonce"] = "n-999";
  EXPECT_THAT(Refusal(Sign(c, JWT_ALG_RS256, k, "k1")), HasSubstr("nonce is not the one"));
  c.erase("nonce");
  EXPECT_THAT(Refusal(Sign(c, JWT_ALG_RS256, k, "k1")), HasSubstr("nonce is not the one"));
  c = Claims();
  c["iss"] = "https://evil.example";
  EXPECT_THAT(Refusal(Sign(c, JWT_ALG_RS256, k, "k1")), HasSubstr("issuer 'https://evil.example' is not"));
  c = Claims();
  c.erase("sub");
  EXPECT_THAT(Refusal(Sign(c, JWT_ALG_RS256, k, "k1")), HasSubstr("no subject"));
  EXPECT_THAT(Refusal(Sign(Claims(), JWT_ALG_RS256, k, "k2")), HasSubstr("no RSA key with id 'k2'"));
  EXPECT_THAT(Refusal("not.a-jwt"), HasSubstr("three dot-separated parts"));
}

TEST_F(IdToken, UnsignedAndHmacTokensAreRefusedBeforeTheirSignatureIsLookedAt) {
  EXPECT_THAT(Refusal(Sign(Claims(), JWT_ALG_NONE, "", "k1")), HasSubstr("algorithm 'none' is not accepted"));
  // The classic confusion: HS256 "signed" with the provider's public key as the secret.
  EXPECT_THAT(Refusal(Sign(Claims(), JWT_ALG_HS256, key_->public_pem, "k1")),
              HasSubstr("algorithm 'HS256' is not accepted"));
}

TEST(Jwk, AnRsaOrP256KeyBecomesAPemAndOtherKeysAreRefused) {
  ASSERT_GE(sodium_init(), 0);
  const auto rsa = MakeRsaKey("a");
  const auto pem = JwkToPem(rsa.jwk);
  ASSERT_TRUE(pem) << pem.error().message;
  EXPECT_EQ(*pem, rsa.public_pem);
  // RFC 7517 appendix A.1's P-256 example key.
  const auto ec = JwkToPem({{"kty", "EC"},
                            {"crv", "P-256"},
                            {"x", "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4"},
                            {"y", "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}});
  ASSERT_TRUE(ec) << ec.error().message;
  EXPECT_THAT(*ec, HasSubstr("BEGIN PUBLIC KEY"));
  EXPECT_FALSE(JwkToPem({{"kty", "oct"}, {"k", "c2VjcmV0"}}));
  EXPECT_FALSE(JwkToPem({{"kty", "EC"}, {"crv", "P-192"}, {"x", "AA"}, {"y", "AA"}}));
  EXPECT_FALSE(JwkToPem({{"kty", "RSA"}, {"n", "!!"}, {"e", "AQAB"}}));
}

// ---------------------------------------------------------------------------------------------- LDAP

// Security review 2, N2: an `email` user-name claim was refused only when email_verified was explicitly
// false; absent (or a string) let an unverified address name a user.
TEST(OidcUsernameN2, AnEmailNamesAUserOnlyWhenTheProviderSaysItIsVerified) {
  OidcProviderConfig by_mail{.name = "google", .username_claim = "email"};
  const auto name = [&](const json& claims) {
    const auto r = OidcUsername(by_mail, claims);
    return r ? *r : "refused: " + r.error().message;
  };
  EXPECT_EQ(name({{"email", "ann@example.org"}, {"email_verified", true}}), "ann@example.org");
  EXPECT_THAT(name({{"email", "ann@example.org"}}), HasSubstr("email_verified is absent, must be true"));
  EXPECT_THAT(name({{"email", "ann@example.org"}, {"email_verified", false}}),
              HasSubstr("email_verified is false, must be true"));
  EXPECT_THAT(name({{"email", "ann@example.org"}, {"email_verified", "true"}}),
              HasSubstr("email_verified is \"true\", must be true"));
  EXPECT_EQ(OidcUsername(by_mail, {{"email", "ann@example.org"}}).error().kind, ErrorKind::kForbidden);
  // Another claim needs no e-mail verification; a missing or malformed name is refused, naming the claim.
  const OidcProviderConfig by_name{.name = "kc", .username_claim = "preferred_username"};
  EXPECT_EQ(*OidcUsername(by_name, {{"preferred_username", "ann"}}), "ann");
  EXPECT_THAT(OidcUsername(by_name, {{"preferred_username", "a b"}}).error().message,
              HasSubstr("gave the username claim 'preferred_username' as 'a b'"));
  EXPECT_FALSE(OidcUsername(by_name, {{"preferred_username", 42}}));
}

TEST(LdapSubjectN2, ABinaryIdIsShownInHexAndTextAsItIs) {
  EXPECT_EQ(SubjectText("6b1f0c6e-0000-4000-8000-000000000001"), "6b1f0c6e-0000-4000-8000-000000000001");
  EXPECT_EQ(SubjectText(std::string("\x01\xab\x00\xff", 4)), "01ab00ff");
  EXPECT_EQ(SubjectText(""), "");
}

TEST(LdapEscapes, FilterAndDnSpecialsAreEscaped) {
  EXPECT_EQ(EscapeFilterValue("a*)(uid=*"), "a\\2a\\29\\28uid=\\2a");
  EXPECT_EQ(EscapeFilterValue(std::string("x\\y\0z", 5)), "x\\5cy\\00z");
  EXPECT_EQ(EscapeFilterValue("alice@example.org"), "alice@example.org");
  EXPECT_EQ(EscapeDnValue("a,b+c=d"), "a\\,b\\+c\\=d");
  EXPECT_EQ(EscapeDnValue(" #lead"), "\\ #lead");
  EXPECT_EQ(EscapeDnValue("trail "), "trail\\ ");
  EXPECT_EQ(EscapeDnValue("alice"), "alice");
}

}  // namespace
}  // namespace cronwheel::admin
