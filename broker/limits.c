/* A sandbox's resource limits; see limits.h. */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "broker/limits.h"
#include "common/reason.h"
#include "common/units.h"

#define LIMITS_MILLI 1000

static const char *const limits_names[LIMITS_N] = {
	[LIMITS_PIDS] = "pids", [LIMITS_MEMORY] = "memory", [LIMITS_CPUS] = "cpus",
	[LIMITS_TMPFS] = "tmpfs", [LIMITS_HOME] = "home",
};

const char *
limits_name(enum limits_kind k)
{
	return (unsigned)k < LIMITS_N ? limits_names[k] : "?";
}

const char *
limits_origin_name(enum limits_origin o)
{
	switch (o) {
	case LIMITS_CONFIG: return "config";
	case LIMITS_REQUEST: return "request";
	default: return "default";
	}
}

uint64_t
limits_machine_ram(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

unsigned
limits_machine_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

static uint64_t
limits_at_least(uint64_t v, uint64_t floor)
{
	return v > floor ? v : floor;
}

/* A file system's size in whole MiB (tmpfs takes sizes in MiB). */
static uint64_t
limits_mib(uint64_t bytes)
{
	return bytes / LIMITS_MIB * LIMITS_MIB;
}

void
limits_conf_default(struct limits_conf *c, uint64_t ram, unsigned ncpu)
{
	uint64_t fs = limits_mib(limits_at_least(ram / LIMITS_FS_SHARE, LIMITS_FS_MIN_BYTES));

	c->dflt[LIMITS_PIDS] = (struct limits_value){ LIMITS_PIDS_DEFAULT, LIMITS_DEFAULT };
	c->dflt[LIMITS_MEMORY] = (struct limits_value){
	    limits_at_least(ram / LIMITS_MEMORY_SHARE_DEFAULT, LIMITS_FS_SHARE * LIMITS_FS_MIN_BYTES),
	    LIMITS_DEFAULT };
	/* One CPU stays for the host (the daemon among it), unless there is one. */
	c->dflt[LIMITS_CPUS] = (struct limits_value){
	    (uint64_t)(ncpu > 1 ? ncpu - 1 : 1) * LIMITS_MILLI, LIMITS_DEFAULT };
	c->dflt[LIMITS_TMPFS] = (struct limits_value){ fs, LIMITS_DEFAULT };
	c->dflt[LIMITS_HOME] = (struct limits_value){ fs, LIMITS_DEFAULT };
	c->max[LIMITS_PIDS] = LIMITS_PIDS_MAX_DEFAULT;
	c->max[LIMITS_MEMORY] = limits_at_least(ram, c->dflt[LIMITS_MEMORY].value);
	c->max[LIMITS_CPUS] = (uint64_t)ncpu * LIMITS_MILLI;
	c->max[LIMITS_TMPFS] = c->max[LIMITS_HOME] = 0;
}

/* A value as people write it, for messages. */
static void
limits_text(enum limits_kind k, uint64_t v, char *out, size_t size)
{
	if (k == LIMITS_CPUS)
		snprintf(out, size, "%llu.%03llu", (unsigned long long)(v / LIMITS_MILLI),
		    (unsigned long long)(v % LIMITS_MILLI));
	else if (k == LIMITS_PIDS)
		snprintf(out, size, "%llu", (unsigned long long)v);
	else
		units_format_size(v, out, size);
}

/* The value of kind K: ASKED within the maximum, else the default. */
static int
limits_pick(const struct limits_conf *c, enum limits_kind k, uint64_t asked,
    struct limits_value *out, char **err)
{
	char a[UNITS_SIZE_TEXT_MAX_BYTES], m[UNITS_SIZE_TEXT_MAX_BYTES];

	if (asked == 0) {
		*out = c->dflt[k];
		return 0;
	}
	if (c->max[k] != 0 && asked > c->max[k]) {
		limits_text(k, asked, a, sizeof(a));
		limits_text(k, c->max[k], m, sizeof(m));
		return reason_set(err, "--%s %s is over the most this daemon gives a sandbox (%s; "
		    "corrald.yaml limits.max.%s)", limits_name(k), a, m, limits_name(k));
	}
	*out = (struct limits_value){ asked, LIMITS_REQUEST };
	return 0;
}

/* A file system's size: its default, held to a quarter of the memory
 * (then it comes from where the memory did). */
static struct limits_value
limits_fs(struct limits_value dflt, struct limits_value memory)
{
	uint64_t cap = limits_mib(limits_at_least(memory.value / LIMITS_FS_SHARE,
	    LIMITS_FS_MIN_BYTES));

	return dflt.value > cap ? (struct limits_value){ cap, memory.origin } : dflt;
}

int
limits_resolve(const struct limits_conf *c, uint64_t pids, uint64_t memory, uint64_t cpu_milli,
    struct limits_value out[LIMITS_N], char **err)
{
	if (limits_pick(c, LIMITS_PIDS, pids, &out[LIMITS_PIDS], err) == -1 ||
	    limits_pick(c, LIMITS_MEMORY, memory, &out[LIMITS_MEMORY], err) == -1 ||
	    limits_pick(c, LIMITS_CPUS, cpu_milli, &out[LIMITS_CPUS], err) == -1)
		return -1;
	out[LIMITS_TMPFS] = limits_fs(c->dflt[LIMITS_TMPFS], out[LIMITS_MEMORY]);
	out[LIMITS_HOME] = limits_fs(c->dflt[LIMITS_HOME], out[LIMITS_MEMORY]);
	return 0;
}
