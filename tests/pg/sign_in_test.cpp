// Sign-in against a real database: the links of single sign-on users to their identities (security review
// 2, N2: admin/store/pg_sso_store.cpp) and the login throttle's familiar addresses kept in PostgreSQL
// (F5 (b): admin/store/pg_familiar_addresses.cpp), across a restart of the service.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "admin/auth/auth_service.hpp"
#include "admin/store/pg_account_store.hpp"
#include "admin/store/pg_familiar_addresses.hpp"
#include "admin/store/pg_sso_store.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr const char* kAdminPassword = "admin-password-1";

class SignInTest : public cwtest::PgFixture {
 protected:
  void SetUp() override {
    PgFixture::SetUp();
    accounts_ = std::make_unique<PgAccountStore>(*pool_);
    sso_ = std::make_unique<PgSsoStore>(*pool_);
  }
  // Argon2id at libsodium's minimum cost: the tests check behaviour, not hashing strength.
  static AuthService::Settings AuthSettings() {
    AuthService::Settings s;
    s.hashing.ops_limit = 1;
    s.hashing.mem_limit = 8192;
    return s;
  }
  Result<User> Sync(const std::string& source, const std::string& subject, const std::string& username,
                    const std::string& legacy = "") {
    std::vector<std::string> skipped;
    return sso_->SyncExternalUser(
        {.source = source, .subject = subject, .username = username, .legacy_subject = legacy, .admin = true},
        kT0, skipped);
  }
  int Tokens(int user_id) {
    return Count(
        fmt::format("SELECT count(*) FROM api_token WHERE user_id = {} AND revoked_ms = 0", user_id));
  }
  void AddToken(int user_id) {
    Exec(
        fmt::format("INSERT INTO api_token (user_id, name, token_hash, created_ms, expires_ms) VALUES ({}, "
                    "'t{}', 'h{}-' || random(), 1, {})",
                    user_id, user_id, user_id, kT0 + 86'400'000));
  }

  cwtest::FakeClock clock_{kT0};
  std::unique_ptr<PgAccountStore> accounts_;
  std::unique_ptr<PgSsoStore> sso_;
};

// N2: a second identity of the same provider whose user-name claim equalled an existing user's signed in as
// that user (and re-linked it to itself). A user is now found by its link alone; a taken name is refused.
TEST_F(SignInTest, N2_ASignInNeverBecomesAnExistingUserByItsName) {
  const auto alice = Sync("oidc:kc", "sub-alice", "alice");
  ASSERT_TRUE(alice) << alice.error().message;
  EXPECT_EQ(alice->external_subject, "sub-alice");
  // Another subject of the same provider, the same name (in any case): refused, naming the identity.
  for (const char* name : {"alice", "ALICE"}) {
    const auto mallory = Sync("oidc:kc", "sub-mallory", name);
    ASSERT_FALSE(mallory) << name;
    EXPECT_EQ(mallory.error().kind, ErrorKind::kConflict);
    EXPECT_THAT(mallory.error().message, HasSubstr("subject 'sub-mallory'"));
    EXPECT_THAT(mallory.error().message, HasSubstr("Ask an ADMIN to link"));
  }
  EXPECT_EQ(Count("SELECT count(*) FROM app_user WHERE external_subject = 'sub-alice'"), 1) << "link kept";
  // A local user's name, and another source's user's name: refused alike.
  Exec(
      "INSERT INTO app_user (username, password_hash, role, created_ms, updated_ms) VALUES ('bob', '!', "
      "'USER', 1, 1)");
  EXPECT_THAT(Sync("oidc:kc", "sub-bob", "bob").error().message, HasSubstr("already a local user"));
  EXPECT_THAT(Sync("ldap", "uuid-alice", "alice").error().message, HasSubstr("already a oidc:kc user"));
  // The linked identity renamed at its provider follows when the name is free, keeps its own when not.
  auto renamed = Sync("oidc:kc", "sub-alice", "alice.smith");
  ASSERT_TRUE(renamed);
  EXPECT_EQ(renamed->id, alice->id);
  EXPECT_EQ(renamed->username, "alice.smith");
  renamed = Sync("oidc:kc", "sub-alice", "bob");
  ASSERT_TRUE(renamed) << renamed.error().message;
  EXPECT_EQ(renamed->username, "alice.smith");
  // LDAP users of earlier versions were linked by their DN: the first sign-in re-links them to the subject.
  const auto carol = Sync("ldap", "uid=carol,ou=people,dc=example,dc=org", "carol");
  ASSERT_TRUE(carol);
  const auto again = Sync("ldap", "uuid-carol", "carol", "uid=carol,ou=people,dc=example,dc=org");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->id, carol->id);
  EXPECT_EQ(again->external_subject, "uuid-carol");
  // A new entry given the old DN later (a deleted user's uid reused) is someone else: refused.
  EXPECT_FALSE(Sync("ldap", "uuid-new-carol", "carol", "uid=carol,ou=people,dc=example,dc=org"));
}

// N2: the only way to an existing user is an ADMIN's explicit link; changing or removing a link ends what
// the old identity held (its sessions and API tokens).
TEST_F(SignInTest, N2_AnAdminLinksAnIdentityToAUserAndRelinkingRevokesTheOldOnesTokens) {
  Exec(
      "INSERT INTO app_user (username, password_hash, role, created_ms, updated_ms) VALUES ('dave', '!', "
      "'USER', 1, 1)");
  const int dave = Count("SELECT id FROM app_user WHERE username = 'dave'");
  AddToken(dave);
  ASSERT_FALSE(Sync("oidc:kc", "sub-dave", "dave"));
  // Linking a local user keeps its tokens (the same person, now through the provider).
  const auto linked = sso_->LinkIdentity(dave, "oidc:kc", "sub-dave", kT0);
  ASSERT_TRUE(linked) << linked.error().message;
  EXPECT_EQ(linked->before->login_source, "local");
  EXPECT_EQ(linked->after->login_source, "oidc:kc");
  EXPECT_EQ(linked->after->external_subject, "sub-dave");
  EXPECT_EQ(Tokens(dave), 1);
  const auto signed_in = Sync("oidc:kc", "sub-dave", "dave");
  ASSERT_TRUE(signed_in) << signed_in.error().message;
  EXPECT_EQ(signed_in->id, dave);
  // The identity is one user's: linking it to another is refused.
  const auto erin = Sync("oidc:kc", "sub-erin", "erin");
  ASSERT_TRUE(erin);
  const auto taken = sso_->LinkIdentity(erin->id, "oidc:kc", "sub-dave", kT0);
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().kind, ErrorKind::kConflict);
  EXPECT_THAT(taken.error().message, HasSubstr(fmt::format("already linked to user {}", dave)));
  // Re-linking to another subject (the wrong person had it) revokes what the old identity made.
  ASSERT_TRUE(sso_->LinkIdentity(dave, "oidc:kc", "sub-dave-2", kT0));
  EXPECT_EQ(Tokens(dave), 0);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM api_token WHERE user_id = {} AND revoked_reason = "
                              "'identity_changed'",
                              dave)),
            1);
  EXPECT_FALSE(Sync("oidc:kc", "sub-dave", "dave")) << "the old subject is nobody's now, and the name taken";
  // Unlinking: local, no password, sessions ended; twice is refused.
  AddToken(dave);
  const auto unlinked = sso_->UnlinkIdentity(dave, kT0);
  ASSERT_TRUE(unlinked) << unlinked.error().message;
  EXPECT_EQ(unlinked->after->login_source, "local");
  EXPECT_EQ(unlinked->after->external_subject, "");
  EXPECT_EQ(Tokens(dave), 0);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM app_user WHERE id = {} AND password_hash = '!'", dave)),
            1);
  EXPECT_EQ(sso_->UnlinkIdentity(dave, kT0).error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(sso_->LinkIdentity(999'999, "oidc:kc", "x", kT0).error().kind, ErrorKind::kNotFound);
}

// F5 (b): familiar addresses lived in the throttle's memory, so an admin's restart forgot them and guesses
// from elsewhere locked the user out of their own address again. They are kept in PostgreSQL now.
TEST_F(SignInTest, F5b_FamiliarAddressesSurviveARestartOfTheService) {
  const auto key = PgFamiliarAddresses::KeyFrom("test-token-0123456789");
  {
    PgFamiliarAddresses familiar(*pool_, key, {});
    AuthService auth(AuthSettings(), clock_, *accounts_, &familiar);
    ASSERT_TRUE(auth.EnsureAdminUser(kAdminPassword));
    ASSERT_TRUE(auth.Login("admin", kAdminPassword, "10.1.2.3"));
  }
  // Only a keyed hash of the address is stored.
  EXPECT_EQ(Count("SELECT count(*) FROM login_familiar_address"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM login_familiar_address WHERE address_hash LIKE '%10.1.2.3%'"), 0);
  // The admin restarts: a new throttle and service on the same database.
  PgFamiliarAddresses familiar(*pool_, key, {});
  AuthService auth(AuthSettings(), clock_, *accounts_, &familiar);
  clock_.Advance(std::chrono::minutes(1));
  for (int i = 0; i < 5; ++i) {
    const auto r = auth.Login("admin", "wrong-password", fmt::format("10.9.9.{}", i));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::kUnauthenticated) << i;
  }
  const auto elsewhere = auth.Login("admin", kAdminPassword, "10.9.9.99");
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error().kind, ErrorKind::kThrottled) << "the name waits, from unfamiliar addresses";
  EXPECT_TRUE(auth.Login("admin", kAdminPassword, "10.1.2.3")) << "the familiar address is still exempt";
  // Another cluster's key knows nothing of it.
  PgFamiliarAddresses other(*pool_, PgFamiliarAddresses::KeyFrom("another-token"), {});
  EXPECT_FALSE(other.Known("admin", "10.1.2.3", clock_.NowMs()));
}

TEST_F(SignInTest, F5b_StoredFamiliarAddressesAreBoundedPerUserAndExpire) {
  Exec(
      "INSERT INTO app_user (username, password_hash, role, created_ms, updated_ms) VALUES ('Alice', '!', "
      "'USER', 1, 1)");
  PgFamiliarAddresses familiar(*pool_, PgFamiliarAddresses::KeyFrom("k"), {.per_user = 3});
  for (int i = 0; i < 5; ++i)
    familiar.Remember("alice", fmt::format("10.0.0.{}", i), kT0 + i);
  EXPECT_EQ(Count("SELECT count(*) FROM login_familiar_address"), 3) << "the 3 most recent";
  EXPECT_FALSE(familiar.Known("alice", "10.0.0.1", kT0 + 10));
  EXPECT_TRUE(familiar.Known("alice", "10.0.0.4", kT0 + 10));
  EXPECT_TRUE(familiar.Known("ALICE", "10.0.0.2", kT0 + 10)) << "names in any case, as the throttle's";
  // 30 days after the last sign-in from it, an address is unfamiliar, and the next sign-in deletes it.
  const std::int64_t month = 30LL * 86'400'000;
  EXPECT_TRUE(familiar.Known("alice", "10.0.0.4", kT0 + 4 + month - 1));
  EXPECT_FALSE(familiar.Known("alice", "10.0.0.4", kT0 + 4 + month));
  familiar.Remember("alice", "10.0.0.9", kT0 + 4 + month);
  EXPECT_EQ(Count("SELECT count(*) FROM login_familiar_address"), 1);
  // A name no account has leaves nothing; a deleted user's rows go with it.
  familiar.Remember("nobody", "10.0.0.9", kT0);
  EXPECT_EQ(Count("SELECT count(*) FROM login_familiar_address"), 1);
  Exec("DELETE FROM app_user WHERE username = 'Alice'");
  EXPECT_EQ(Count("SELECT count(*) FROM login_familiar_address"), 0);
}

}  // namespace
