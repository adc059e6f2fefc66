#pragma once
// What the rules of executor groups (catalog/group_service.hpp) need from the database, as an interface free
// of libpqxx: PgGroupStore (store/pg_group_store.hpp) in production, cwtest::MemoryGroupStore (tests/support)
// in unit tests. It holds statements, never rules: which app_names are taken, which alert channels a group
// may name and when a group may be deleted are GroupService's.
//
// Transactions: Transact runs a body against one Tx, in one database transaction; the body says whether to
// commit. Reads inside it see the transaction's own writes. Locks are taken where a method says so.
//
// Errors: database failures throw (DatabaseUnavailable and the driver's exceptions, as the other stores);
// nothing here returns a Result. Thread-safety: implementations are safe from several threads; a Tx belongs
// to the thread running its body.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "admin/model/model.hpp"

namespace cronwheel::admin {

class GroupStore {
 public:
  // One transaction. Its methods are the statements of the group rules, each O(rows it touches).
  class Tx {
   public:
    virtual ~Tx() = default;

    // Whether a group other than `except_id` (0 = none excepted) has app_name `app_name`.
    virtual bool AppNameTaken(const std::string& app_name, int except_id) = 0;
    // The ids of `ids` that name no alert channel, in the order given.
    virtual std::vector<int> MissingAlertChannels(std::span<const int> ids) = 0;
    // Group `id`, its row locked for update; nullopt when there is none.
    virtual std::optional<JobGroup> LockGroup(int id) = 0;
    // Inserts `group` (its id and times ignored) created at `now_ms` (created and updated times); returns
    // the row as stored, with its id.
    virtual JobGroup InsertGroup(const JobGroup& group, std::int64_t now_ms) = 0;
    // Writes the fields of `group` over row `group.id`, updated at `now_ms`; returns the row as stored.
    virtual JobGroup UpdateGroup(const JobGroup& group, std::int64_t now_ms) = 0;
    // How many jobs group `id` has. O(its jobs).
    virtual int CountJobs(int id) = 0;
    // Deletes group `id`'s row.
    virtual void DeleteGroup(int id) = 0;
  };

  virtual ~GroupStore() = default;

  // Runs `body` in one transaction, committed when it returns true and rolled back when it returns false or
  // throws (the exception goes on).
  virtual void Transact(const std::function<bool(Tx&)>& body) = 0;

  // Reads, each its own read-only transaction.
  virtual std::optional<JobGroup> GetGroup(int id) = 0;
  // By id.
  virtual std::vector<JobGroup> ListGroups() = 0;
};

}  // namespace cronwheel::admin
