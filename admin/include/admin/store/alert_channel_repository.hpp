#pragma once
// Alert channels (table alert_channel, sql/011_alert_channels.sql; admin/model/alert_channel.hpp) on
// PostgreSQL: the table's owner. The REST API reads and checks a channel's fields (ReadAlertChannelBody,
// CheckAlertChannel) before it calls these; here is what needs the database: names are unique, and a
// deleted channel leaves every job and group that named it.
//
// Thread-safety: safe from any thread (pooled connections). Errors: expected outcomes are Results (kInvalid
// with fields, kNotFound); database failures throw.

#include <functional>
#include <optional>
#include <vector>

#include "admin/model/alert_channel.hpp"
#include "admin/model/result.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class AlertChannelRepository {
 public:
  // Edits a channel in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(AlertChannel&)>;

  AlertChannelRepository(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

  // kInvalid when the name is taken.
  Result<AlertChannel> Create(const AlertChannel& channel);
  // Applies `edit` to the stored channel (locked for update) and saves it. kNotFound, kInvalid.
  Result<AlertChannel> Update(int id, const Edit& edit);
  // Deletes it and removes it from every job's and group's alert_channel_ids. kNotFound.
  Result<void> Delete(int id);
  std::optional<AlertChannel> Get(int id);
  // By name.
  std::vector<AlertChannel> List();

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
