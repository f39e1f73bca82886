/* Facts about processes that tell a live one from a reused pid. */
#ifndef CORRAL_PROC_H
#define CORRAL_PROC_H

#include <stdint.h>
#include <sys/types.h>

#define BOOT_ID_BYTES 37        /* a UUID as text and its NUL */

/* The start time of PID in clock ticks since boot (field 22 of
 * /proc/PID/stat); 0 and -1 when PID does not exist or cannot be read. */
int proc_start_time(pid_t pid, uint64_t *start);
#define PROC_NS_DEPTH_MAX 33            /* pid namespaces nest 32 deep, the initial one too */

/* PID's number in each pid namespace it is seen in, outermost first, from
 * the NSpid line of /proc/PID/status (0: this process; readable by
 * anyone, no ptrace check): into OUT, at most MAX. Returns how many
 * there are, or -1 when PID is gone. */
int proc_ns_pids(pid_t pid, pid_t *out, size_t max);
/* PID (of this process's pid namespace) as its innermost pid namespace
 * numbers it; -1 when it is gone. */
pid_t proc_ns_pid(pid_t pid);
/* The kernel's boot id (/proc/sys/kernel/random/boot_id); -1 when unreadable. */
int proc_boot_id(char out[BOOT_ID_BYTES]);
/* 1 when PID runs now with the same start time in the same boot, else 0. */
int proc_is_same_process(pid_t pid, uint64_t start, const char *boot_id);

#endif
