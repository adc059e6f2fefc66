#pragma once
// A fresh, empty PostgreSQL database for one test, on the server named by CRONWHEEL_TEST_DSN (the
// private server scripts/test starts with scripts/pg). Created in the constructor, dropped (WITH FORCE)
// in the destructor, so tests never see each other's rows and may run in parallel.
//
// Without CRONWHEEL_TEST_DSN the constructor throws with a message telling how to start one: a pg test
// never passes by skipping.

#include <string>

namespace cwtest {

class TestDatabase {
 public:
  TestDatabase();
  // On another server (a libpq URI of any database there).
  explicit TestDatabase(std::string server_dsn);
  // Not a new database: `dsn`'s own, used as it is and not dropped (a server made for one test, such as the
  // Patroni cluster of the HA test, whose replicas may not have replayed a database created a moment ago:
  // libpq does not try the next host of a multi-host DSN when one answers that the database does not exist).
  struct AsIs {};
  TestDatabase(std::string dsn, AsIs /*tag*/);
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  // libpq URI of the new database.
  [[nodiscard]] const std::string& dsn() const { return dsn_; }
  [[nodiscard]] const std::string& name() const { return name_; }

  // The server DSN from the environment, or throws std::runtime_error explaining how to set it.
  static std::string ServerDsn();

 private:
  std::string server_dsn_;
  std::string name_;
  std::string dsn_;
};

}  // namespace cwtest
