#pragma once
// Schedule partitions: how several admins scan at the same time instead of queueing on one lock
// (XXL-JOB has one global lock row, docs/xxl-job-protocol.md §15 item 1). The cluster has P partitions
// (table schedule_partition, rows 0..P-1; the admin setting schedule_partitions); a job belongs to
// partition job.id % P, a stable rule that needs no column. Every scan of an admin:
//   1. computes the partitions assigned to it from the live admins (AssignedPartitions, below);
//   2. locks, in one statement with FOR UPDATE SKIP LOCKED, its assigned partitions and any partition no
//      admin has scanned for `takeover_after` (a dead admin's, or one lost while views of the membership
//      disagree): a locked partition is skipped, never waited for;
//   3. reads, writes and advances only the jobs of the partitions it locked, then records them as scanned.
// The row locks last for the scan transaction, so no partition is scanned by two admins at once; an admin
// that scans a partition right after another one finds nothing new to write (the job's next_fire_ms moved
// and the unique key on (job, instant, shard) holds). Every partition is assigned to some live admin in
// every admin's view, and a partition nobody scanned for `takeover_after` is taken by whoever scans next,
// so none is left unscanned for longer than that, even while admins join, leave or die.
//
// Assignment: the live admins sorted by node id; partition p goes to the admin of rank p mod n. The split is
// even (partition counts differ by at most one) and moves partitions the moment the membership changes. An
// admin not (yet) in the live list ranks as if it were (its first scan, before its first heartbeat).
//
// Default P = 60: divisible by 1 to 6, so 1 to 6 admins hold exactly equal shares; 60 lock rows cost
// microseconds per scan; a share of 1/60 is fine-grained enough to move work off an admin whose scans fall
// behind (its partitions go stale and are taken over).
//
// Thread-safety: pure functions. Time: epoch milliseconds, passed in.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel::admin {

inline constexpr int kDefaultSchedulePartitions = 60;

// What the membership table says of one admin (table admin_node).
struct NodeBeat {
  std::string node_id;
  std::int64_t heartbeat_ms = 0;
  std::int64_t lease_until_ms = 0;
};

// The admins alive at `now_ms`: lease not expired and a heartbeat within `grace`. Sorted, unique.
std::vector<std::string> LiveNodes(std::span<const NodeBeat> nodes, std::int64_t now_ms,
                                   std::int64_t grace_ms);

// The partitions of 0..total-1 that `self` scans when `live` (sorted, unique) are the live admins.
std::vector<int> AssignedPartitions(int total, std::span<const std::string> live, std::string_view self);

// The partition of a job.
inline int PartitionOf(int job_id, int total) {
  return total <= 0 ? 0 : job_id % total;
}

}  // namespace cronwheel::admin
