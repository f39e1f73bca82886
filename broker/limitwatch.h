/* Watching a sandbox's limits being hit: its cgroups' event counts (OOM
 * kills at the memory limit, forks refused at the pids limit), read once
 * a second from descriptors the monitor opened, so that an auditor reads
 * in the ledger why a run died, not only that it exited 137.
 *
 * The kernel's counts only grow; each interval in which one grew is one
 * report, with how much it grew. cgroup v1 has no notification for
 * pids.events, and one interval's delay is nothing to an auditor, so the
 * counts are polled, at the cost of two preads a second a sandbox. */
#ifndef CORRAL_LIMITWATCH_H
#define CORRAL_LIMITWATCH_H

#include <stdbool.h>
#include <stdint.h>

#define LIMITWATCH_INTERVAL_MS 1000

enum limitwatch_kind {
	LIMITWATCH_MEMORY,              /* processes killed at the memory limit */
	LIMITWATCH_PIDS,                /* forks refused at the pids limit */
	LIMITWATCH_KINDS
};

struct event_base;
struct limitwatch;

/* Called when KIND's count grew by COUNT since the last look. */
typedef void (*limitwatch_fn)(enum limitwatch_kind kind, uint64_t count, void *arg);

/* Watches MEMORY_FD and PIDS_FD (taken, -1: not watched) on BASE; NULL
 * when out of memory or neither is there (the descriptors are closed). */
struct limitwatch *limitwatch_new(struct event_base *base, int memory_fd, int pids_fd,
    limitwatch_fn fn, void *arg);
/* Looks once more (a hit just before a delete is not lost), then stops
 * and closes. NULL is fine. */
void limitwatch_free(struct limitwatch *w);

/* KIND's count as last seen, without reading: a mark for limitwatch_grew.
 * 0 for a NULL W. */
uint64_t limitwatch_seen(const struct limitwatch *w, enum limitwatch_kind kind);
/* Looks now (reporting what grew, as the timer would) and says whether
 * KIND's count is past MARK: a hit since the mark was taken, give or take
 * the last interval before it. False for a NULL W. */
bool limitwatch_grew(struct limitwatch *w, enum limitwatch_kind kind, uint64_t mark);

/* The count KEY ("oom_kill", "max") in TEXT, a cgroup event file's
 * "key value" lines; 0 when it is not there. Pure. */
uint64_t limitwatch_parse(const char *text, const char *key);

/* "memory_limit", "pids_limit": the ledger's word for KIND. */
const char *limitwatch_reason(enum limitwatch_kind kind);

#endif
