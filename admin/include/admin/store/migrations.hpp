#pragma once
// Schema migrations: the ordered files sql/NNN_name.sql, compiled into the admin. At start every admin
// calls ApplyMigrations(); it takes a PostgreSQL advisory lock, so when several admins start together
// each migration is applied exactly once and the others wait, then find nothing to do.
//
// Each migration runs in its own transaction together with its row in schema_migrations (version, name,
// SHA-256 of the file, applied_ms). A migration already applied whose file has changed since is an
// error: a schema is never silently different from what the code expects.

#include <cstdint>
#include <pqxx/pqxx>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel::admin {

struct Migration {
  int version = 0;       // NNN
  std::string name;      // file name, e.g. "001_schema.sql"
  std::string_view sql;  // file contents
};

// A migration file is malformed, or one applied earlier was changed.
class MigrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MigrationReport {
  int applied = 0;         // migrations applied by this call
  int schema_version = 0;  // highest version present afterwards
};

// The migrations compiled into this binary, ordered by version. Throws MigrationError on a bad file name
// or a duplicate version.
std::vector<Migration> BuiltInMigrations();

// Applies the migrations not yet recorded in schema_migrations. `now_ms` stamps applied_ms.
// Throws MigrationError (changed or unknown applied migration), pqxx::sql_error (a failing statement;
// that migration's transaction is rolled back and the lock released).
MigrationReport ApplyMigrations(pqxx::connection& conn, std::span<const Migration> migrations,
                                std::int64_t now_ms);

// The key of the session-level advisory lock held while migrating.
inline constexpr std::int64_t kMigrationLockKey = 0x63726f6e77686c31;  // "cronwhl1"

}  // namespace cronwheel::admin
