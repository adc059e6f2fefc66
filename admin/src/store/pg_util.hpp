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

// Runs fn(connection) with a pooled connection, discarding the connection if it broke, so the pool
// reconnects next time. A connection that cannot be made or broke becomes DatabaseUnavailable (and
// PoolExhausted is one): the areas above the store see no libpqxx type. Other exceptions propagate.
template <class Fn>
auto WithConnection(PgPool& pool, Fn&& fn) {
  std::optional<PgPool::Lease> lease;
  try {
    lease.emplace(pool.Acquire());
    return std::forward<Fn>(fn)(**lease);
  } catch (const pqxx::broken_connection& e) {
    if (lease) lease->Discard();
    throw DatabaseUnavailable(std::string("the database is unavailable: ") + e.what());
  } catch (const pqxx::in_doubt_error&) {
    if (lease) lease->Discard();
    throw;
  }
}

}  // namespace cronwheel::admin
