#pragma once
// What the rules of alert channels (catalog/alert_channel_service.hpp) need from the database, as an
// interface free of libpqxx: PgAlertChannelStore (store/pg_alert_channel_store.hpp) in production,
// cwtest::MemoryAlertChannelStore (tests/support) in unit tests. It holds statements, never rules: which
// names are taken and what a deletion takes with it are AlertChannelService's.
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
#include <string>
#include <vector>

#include "admin/model/alert_channel.hpp"

namespace cronwheel::admin {

// One alert decided (table alert_log): sent, held back, or being delivered.
struct AlertEntry {
  std::int64_t id = 0;
  int job_id = 0;
  int channel_id = 0;
  std::string channel_name;
  std::int64_t log_id = 0;
  std::string event;    // FAILED, TIMEOUT, LOST
  std::string outcome;  // SENT, FAILED, SENDING, RETRYING, SUPPRESSED, BELOW_THRESHOLD
  int attempts = 0;
  std::int64_t next_attempt_ms = 0;
  std::string message;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
};

class AlertChannelStore {
 public:
  // One transaction. Its methods are the statements of the alert channel rules, each O(rows it touches).
  class Tx {
   public:
    virtual ~Tx() = default;

    // Whether a channel other than `except_id` (0 = none excepted) is named `name`.
    virtual bool NameTaken(const std::string& name, int except_id) = 0;
    // Channel `id`, its row locked for update; nullopt when there is none.
    virtual std::optional<AlertChannel> LockChannel(int id) = 0;
    // Inserts `channel` (its id and times ignored) created at `now_ms` (created and updated times); returns
    // the row as stored, with its id.
    virtual AlertChannel InsertChannel(const AlertChannel& channel, std::int64_t now_ms) = 0;
    // Writes the fields of `channel` over row `channel.id`, updated at max(now_ms, its last update + 1);
    // returns the row as stored.
    virtual AlertChannel UpdateChannel(const AlertChannel& channel, std::int64_t now_ms) = 0;
    // Deletes channel `id`'s row; false when there was none.
    virtual bool DeleteChannel(int id) = 0;
    // Takes channel `id` out of every job's alert_channel_ids (job_table::RemoveAlertChannel) and out of
    // every group's (group_table::RemoveAlertChannel), each row's updated time moved on by 1 ms.
    virtual void RemoveFromJobs(int id) = 0;
    virtual void RemoveFromGroups(int id) = 0;
  };

  virtual ~AlertChannelStore() = default;

  // Runs `body` in one transaction, committed when it returns true and rolled back when it returns false or
  // throws (the exception goes on).
  virtual void Transact(const std::function<bool(Tx&)>& body) = 0;

  // Reads, each its own read-only transaction.
  virtual std::optional<AlertChannel> Get(int id) = 0;
  // By name.
  virtual std::vector<AlertChannel> List() = 0;
  // The newest `limit` alerts, of job `job_id` when given, of jobs of `group_ids` when given (nullopt = any,
  // including deleted jobs'), newest first.
  virtual std::vector<AlertEntry> ListAlerts(std::optional<int> job_id,
                                             const std::optional<std::vector<int>>& group_ids, int limit) = 0;
};

}  // namespace cronwheel::admin
