#pragma once
// Small helpers for libpqxx 6.4 code in the admin (private to admin/src).
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <span>
#include <string>
#include <utility>

#include "admin/store/pg_pool.hpp"

namespace cronwheel::admin {

// "{1,2,3}": a bigint[] literal for `= ANY($1::bigint[])` (libpqxx 6.4 cannot bind arrays).
template <class Int>
std::string PgArray(std::span<const Int> values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ',';
    out += std::to_string(values[i]);
  }
  out += '}';
  return out;
}

// {"a","b\"c"}: a text[] literal for `$1::text[]`, every element quoted with \ and " escaped.
inline std::string PgTextArray(std::span<const std::string> values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ',';
    out += '"';
    for (const char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// Whether a statement's error means the connection is of no further use: the server is read-only (SQLSTATE
// 25006: a standby, or a primary being demoted), shutting down or restarting (class 57P: admin_shutdown,
// crash_shutdown, cannot_connect_now), or the connection itself failed (class 08).
inline bool ServerGone(const pqxx::sql_error& e) {
  const std::string& state = e.sqlstate();
  return state == "25006" || state.starts_with("57P") || state.starts_with("08");
}

// Runs fn(connection) with a pooled connection, discarding the connection if it broke or met a server that
// cannot take writes (ServerGone), so the pool reconnects next time (to the new primary, with a multi-host
// DSN). A connection that cannot be made or broke becomes DatabaseUnavailable (and PoolExhausted is one); a
// connection lost during COMMIT becomes CommitOutcomeUnknown (model/result.hpp), counted by the pool
// (PgPool::NoteCommitInDoubt): the areas above the store see no libpqxx type. Other exceptions propagate.
// fn is never run twice: whether what it did before a failure may be done again is its caller's to judge.
template <class Fn>
auto WithConnection(PgPool& pool, Fn&& fn) {
  std::optional<PgPool::Lease> lease;
  try {
    lease.emplace(pool.Acquire());
    return std::forward<Fn>(fn)(**lease);
  } catch (const pqxx::in_doubt_error& e) {
    if (lease) lease->Discard();
    pool.NoteCommitInDoubt();
    throw CommitOutcomeUnknown(
        std::string("the connection to the database was lost while committing; whether "
                    "the change was made is not known: ") +
        e.what());
  } catch (const pqxx::broken_connection& e) {
    if (lease) lease->Discard();
    throw DatabaseUnavailable(std::string("the database is unavailable: ") + e.what());
  } catch (const pqxx::sql_error& e) {
    if (!ServerGone(e)) throw;
    if (lease) lease->Discard();
    throw DatabaseUnavailable(std::string("the database is unavailable (the server cannot take writes now, "
                                          "SQLSTATE ") +
                              e.sqlstate() + "): " + e.what());
  }
}

}  // namespace cronwheel::admin
