#include "admin/store/migrations.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <stdexcept>

#include "embedded.hpp"

namespace cronwheel::admin {
namespace {

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  std::string hex;
  hex.reserve(sizeof digest * 2);
  for (unsigned char b : digest)
    hex += fmt::format("{:02x}", b);
  return hex;
}

// Releases the advisory lock however the migration ends.
class AdvisoryLock {
 public:
  explicit AdvisoryLock(pqxx::connection& conn) : conn_(conn) {
    pqxx::nontransaction tx(conn_);
    tx.exec_params(R"sql(SELECT pg_advisory_lock($1))sql", kMigrationLockKey);
  }
  ~AdvisoryLock() {
    try {
      pqxx::nontransaction tx(conn_);
      tx.exec_params(R"sql(SELECT pg_advisory_unlock($1))sql", kMigrationLockKey);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a broken connection drops the lock anyway
    }
  }
  AdvisoryLock(const AdvisoryLock&) = delete;
  AdvisoryLock& operator=(const AdvisoryLock&) = delete;

 private:
  pqxx::connection& conn_;
};

// The admins other than the one migrating whose lease runs at `now_ms` (none before admin_node exists).
std::vector<std::string> LiveAdmins(pqxx::connection& conn, std::int64_t now_ms) {
  pqxx::read_transaction tx(conn);
  if (tx.exec1(R"sql(SELECT to_regclass('admin_node') IS NULL)sql")[0].as<bool>()) return {};
  std::vector<std::string> out;
  for (const auto& r : tx.exec_params(
           R"sql(SELECT node_id FROM admin_node WHERE lease_until_ms > $1 ORDER BY node_id)sql", now_ms))
    out.push_back(r[0].as<std::string>());
  return out;
}

}  // namespace

bool Migration::StopsEveryAdmin() const {
  // 005 rebuilds job_log and copies every fire into it (it predates the marker; applied files never change).
  constexpr std::string_view kMarker = "-- cronwheel: stop every admin";
  return version == 5 || sql.substr(0, sql.find('\n')).starts_with(kMarker);
}

std::vector<Migration> BuiltInMigrations() {
  std::vector<Migration> out;
  for (const auto& f : EmbeddedMigrations()) {
    const std::string_view name = f.path;
    int version = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), version);
    if (ec != std::errc{} || end == name.data() || *end != '_' || !name.ends_with(".sql") || version <= 0) {
      throw MigrationError(
          fmt::format("migration file '{}': the name must be NNN_name.sql with NNN >= 1", name));
    }
    out.push_back({version, std::string(name), f.data});
  }
  std::sort(out.begin(), out.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i].version == out[i - 1].version) {
      throw MigrationError(fmt::format("migrations '{}' and '{}' have the same version {}", out[i - 1].name,
                                       out[i].name, out[i].version));
    }
  }
  return out;
}

MigrationReport ApplyMigrations(pqxx::connection& conn, std::span<const Migration> migrations,
                                std::int64_t now_ms) {
  AdvisoryLock lock(conn);
  {
    pqxx::work tx(conn);
    tx.exec(R"sql(
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL, applied_ms BIGINT NOT NULL)
    )sql");
    tx.commit();
  }
  std::map<int, std::pair<std::string, std::string>> applied;  // version -> (name, sha256)
  {
    pqxx::read_transaction tx(conn);
    for (const auto& row : tx.exec(R"sql(SELECT version, name, sha256 FROM schema_migrations)sql")) {
      applied[row["version"].as<int>()] = {row["name"].as<std::string>(), row["sha256"].as<std::string>()};
    }
  }
  MigrationReport report;
  for (const auto& m : migrations) {
    const auto sha = Sha256Hex(m.sql);
    if (auto it = applied.find(m.version); it != applied.end()) {
      if (it->second.second != sha) {
        throw MigrationError(fmt::format(
            "migration {} was applied as '{}' with SHA-256 {}, but this build's '{}' has {}: applied "
            "migrations must never change; add a new one instead",
            m.version, it->second.first, it->second.second, m.name, sha));
      }
      continue;
    }
    if (m.StopsEveryAdmin()) {
      // This admin's own row, from a run before, is as dead as the others must be: the process starting is
      // not yet in admin_node's live set (its lease starts after the migrations).
      if (const auto live = LiveAdmins(conn, now_ms); !live.empty()) {
        std::string names;
        for (const auto& n : live)
          names += (names.empty() ? "" : ", ") + n;
        throw MigrationError(fmt::format(
            "migration '{}' rewrites what running admins use and needs every admin stopped, but these are "
            "alive: {}. Stop them, start this admin, then the others with this release (docs/operations.md, "
            "Upgrades)",
            m.name, names));
      }
    }
    pqxx::work tx(conn);
    tx.exec(std::string(m.sql));
    tx.exec_params(R"sql(
      INSERT INTO schema_migrations (version, name, sha256, applied_ms) VALUES ($1, $2, $3, $4)
    )sql",
                   m.version, m.name, sha, now_ms);
    tx.commit();
    ++report.applied;
  }
  int highest = 0;
  for (const auto& [v, _] : applied)
    highest = std::max(highest, v);
  for (const auto& m : migrations)
    highest = std::max(highest, m.version);
  for (const auto& [v, entry] : applied) {
    if (std::none_of(migrations.begin(), migrations.end(),
                     [v = v](const Migration& m) { return m.version == v; })) {
      throw MigrationError(fmt::format(
          "the database has migration {} ('{}') that this build does not know: it is newer than this admin. "
          "Start an admin of the database's release or later; to go back to this release, restore the backup "
          "taken before the upgrade (docs/operations.md, Upgrades)",
          v, entry.first));
    }
  }
  report.schema_version = highest;
  return report;
}

}  // namespace cronwheel::admin
