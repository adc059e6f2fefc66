#include "cwtest/test_database.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <pqxx/pqxx>
#include <random>
#include <stdexcept>

namespace cwtest {
namespace {

// Replaces the database part of a postgresql:// URI (the path after host[:port]).
std::string WithDatabase(const std::string& uri, const std::string& db) {
  const auto scheme = uri.find("://");
  if (scheme == std::string::npos) throw std::runtime_error("CRONWHEEL_TEST_DSN must be a postgresql:// URI");
  const auto slash = uri.find('/', scheme + 3);
  const auto query = uri.find('?', scheme + 3);
  std::string out = uri.substr(0, slash == std::string::npos ? query : slash) + "/" + db;
  if (query != std::string::npos) out += uri.substr(query);
  return out;
}

}  // namespace

std::string TestDatabase::ServerDsn() {
  const char* dsn = std::getenv("CRONWHEEL_TEST_DSN");  // NOLINT(concurrency-mt-unsafe)
  if (dsn == nullptr || *dsn == '\0') {
    throw std::runtime_error(
        "CRONWHEEL_TEST_DSN is not set: pg tests need a PostgreSQL. Run scripts/test, or "
        "`export CRONWHEEL_TEST_DSN=$(scripts/pg up --name test --fast)`");
  }
  return dsn;
}

TestDatabase::TestDatabase() : TestDatabase(ServerDsn()) {}

TestDatabase::TestDatabase(std::string server_dsn) : server_dsn_(std::move(server_dsn)) {
  static std::atomic<int> counter{0};
  std::random_device rd;
  name_ = fmt::format("cwt_{}_{}_{:08x}", ::getpid(), counter++, rd());
  pqxx::connection conn(server_dsn_);
  pqxx::nontransaction tx(conn);
  tx.exec("CREATE DATABASE " + tx.quote_name(name_));
  dsn_ = WithDatabase(server_dsn_, name_);
}

TestDatabase::TestDatabase(std::string dsn, AsIs /*tag*/) : dsn_(std::move(dsn)) {}

TestDatabase::~TestDatabase() {
  if (name_.empty()) return;  // AsIs: not ours to drop
  try {
    pqxx::connection conn(server_dsn_);
    pqxx::nontransaction tx(conn);
    tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(name_) + " WITH (FORCE)");
  } catch (...) {  // NOLINT(bugprone-empty-catch): a leftover test database is harmless
  }
}

}  // namespace cwtest
