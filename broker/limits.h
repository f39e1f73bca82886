/* A sandbox's resource limits: the operator's defaults and maximum
 * (corrald.yaml "limits"), derived from the machine when not configured,
 * and each sandbox's values, asked or defaulted, with where each came from.
 *
 * - pids: processes and threads (1024);
 * - memory: bytes, everything the sandbox's processes and its file systems
 *   in RAM hold (half of the machine's RAM);
 * - cpus: thousandths of CPUs (all but one of the machine's, at least 1);
 * - tmpfs: the size of /tmp and of /dev/shm, each (a quarter of RAM);
 * - home: the size of HOME, a file system in RAM (a quarter of RAM).
 * /tmp, /dev/shm and HOME are each held to a quarter of the sandbox's
 * memory too, so filling them says ENOSPC before memory runs out. Pure:
 * no I/O, no logging. */
#ifndef CORRAL_LIMITS_BROKER_H
#define CORRAL_LIMITS_BROKER_H

#include <stdint.h>

#define LIMITS_PIDS_DEFAULT 1024
#define LIMITS_PIDS_MAX_DEFAULT 32768
#define LIMITS_MEMORY_SHARE_DEFAULT 2   /* 1/2 of RAM */
#define LIMITS_FS_SHARE 4               /* tmpfs and HOME: 1/4 of RAM, 1/4 of memory */
#define LIMITS_MIB (1024ull * 1024)
#define LIMITS_FS_MIN_BYTES (16 * LIMITS_MIB)   /* the least /tmp, /dev/shm or HOME gets */

enum limits_kind {
	LIMITS_PIDS,
	LIMITS_MEMORY,
	LIMITS_CPUS,
	LIMITS_TMPFS,
	LIMITS_HOME,
	LIMITS_N,
};

/* Where a value came from, as `sandbox get` says it. */
enum limits_origin {
	LIMITS_DEFAULT,                 /* derived from the machine */
	LIMITS_CONFIG,                  /* corrald.yaml's limits */
	LIMITS_REQUEST,                 /* the create asked it */
};

struct limits_value {
	uint64_t value;
	enum limits_origin origin;
};

/* The operator's: defaults for each kind, maximum of the asked ones. */
struct limits_conf {
	struct limits_value dflt[LIMITS_N];
	uint64_t max[LIMITS_N];         /* pids, memory, cpus only; others: 0 */
};

/* The defaults for a machine of RAM_BYTES and NCPU CPUs. */
void limits_conf_default(struct limits_conf *c, uint64_t ram_bytes, unsigned ncpu);
/* A sandbox's limits: PIDS, MEMORY and CPU_MILLI as asked (0: the default),
 * within the maximum; tmpfs and HOME from the defaults, held to a quarter
 * of the memory. -1 with a one-line reason in *ERR when one is over. */
int limits_resolve(const struct limits_conf *c, uint64_t pids, uint64_t memory,
    uint64_t cpu_milli, struct limits_value out[LIMITS_N], char **err);
/* "pids", "memory", "cpus", "tmpfs", "home". */
const char *limits_name(enum limits_kind k);
/* "default", "config", "request". */
const char *limits_origin_name(enum limits_origin o);
/* The machine's RAM in bytes and its online CPUs (at least 1). */
uint64_t limits_machine_ram(void);
unsigned limits_machine_cpus(void);

#endif
