#pragma once
// Schema migrations: the ordered files sql/NNN_name.sql, compiled into the admin. At start every admin
// calls ApplyMigrations(); it takes a PostgreSQL advisory lock, so when several admins start together
// each migration is applied exactly once and the others wait, then find nothing to do.
//
// Each migration runs in its own transaction together with its row in schema_migrations (version, name,
// SHA-256 of the file, applied_ms). A migration already applied whose file has changed since is an
// error: a schema is never silently different from what the code expects.
//
// Upgrades (docs/operations.md, "Upgrades"). Most migrations add tables, columns with defaults or indexes,
// which the admins of the previous release running beside the new one ignore: a rolling upgrade starts
// the new admins, which migrate, and then replaces the old ones. A migration that rewrites what running
// admins use says so in its first line, `-- cronwheel: stop every admin` (005, which predates the marker,
// is listed in the code): it is not applied while another admin is alive (its admin_node lease runs), and
// the admin starting refuses to run, naming the migration and the live admins. An admin older than its
// database (a migration it does not know) refuses to start too: rolling back means the previous release's
// database, restored from the backup taken before the upgrade, or a newer admin.

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
  // Applied only while no other admin is alive: the file's first line is "-- cronwheel: stop every admin"
  // (or it is 005, which rebuilds job_log).
  [[nodiscard]] bool StopsEveryAdmin() const;
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

// Applies the migrations not yet recorded in schema_migrations. `now_ms` stamps applied_ms and tells which
// admins are alive (admin_node.lease_until_ms > now_ms) for a migration that stops every admin.
// Throws MigrationError (changed or unknown applied migration; a migration that stops every admin while
// another admin is alive, naming them), pqxx::sql_error (a failing statement; that migration's transaction
// is rolled back and the lock released).
MigrationReport ApplyMigrations(pqxx::connection& conn, std::span<const Migration> migrations,
                                std::int64_t now_ms);

// The key of the session-level advisory lock held while migrating.
inline constexpr std::int64_t kMigrationLockKey = 0x63726f6e77686c31;  // "cronwhl1"

}  // namespace cronwheel::admin
