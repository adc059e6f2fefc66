// JobRepository's reads and writes of a job's fires on their way to executors
// (admin/store/job_repository.hpp): those sent ahead of their instant that executors hold, those a stop
// withdrew after an admin had claimed them, and the record of those the executors dropped. The stop, change
// and delete that withdraw them are job_repository.cpp's.
#include <pqxx/pqxx>

#include "admin/store/fire_log.hpp"
#include "admin/store/job_repository.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {

std::vector<SentAheadFire> JobRepository::SentAhead(int job_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return fire_log::SentAhead(tx, job_id, clock_.NowMs());
  });
}

std::vector<std::int64_t> JobRepository::WithdrawnClaims(int job_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return fire_log::WithdrawnOfJob(tx, job_id, clock_.NowMs());
  });
}

void JobRepository::MarkWithdrawnAhead(std::span<const std::int64_t> log_ids, std::string_view note) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    fire_log::MarkWithdrawnAhead(tx, log_ids, note);
    tx.commit();
  });
}

}  // namespace cronwheel::admin
