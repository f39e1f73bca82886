/* Facts about processes from /proc that tell a live process from a reused
 * pid or a process of an earlier boot. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/proc.h"

#define PROC_STAT_MAX_BYTES 4096        /* comm is at most 16 bytes; the rest is numbers */
#define PROC_STAT_PATH_BYTES 64         /* "/proc/" and a pid */
#define PROC_STAT_STARTTIME_FIELD 22    /* proc(5), counting from 1 */
#define PROC_STAT_STATE_FIELD 3         /* the first field after comm's ')' */
#define PROC_BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
#define PROC_BOOT_ID_LEN (BOOT_ID_BYTES - 1)

/* Reads at most SIZE-1 bytes of PATH into OUT, NUL-terminated; the length or -1. */
static ssize_t
proc_read_small_file(const char *path, char *out, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1)
		return -1;
	do
		n = read(fd, out, size - 1);
	while (n == -1 && errno == EINTR);
	close(fd);
	if (n == -1)
		return -1;
	out[n] = '\0';
	return n;
}

/* Parses the state letter and start time of a /proc/PID/stat line. comm
 * (field 2) may hold spaces and parentheses, so the numbered fields are
 * counted from the LAST ')' of the line, which no comm can follow. */
static int
proc_parse_stat(const char *line, char *state, uint64_t *start)
{
	const char *p = strrchr(line, ')');
	char *end;
	int field;

	if (p == NULL)
		return -1;
	p++;
	for (field = PROC_STAT_STATE_FIELD; field < PROC_STAT_STARTTIME_FIELD; field++) {
		while (*p == ' ')
			p++;
		if (field == PROC_STAT_STATE_FIELD)
			*state = *p;
		p = strchr(p, ' ');
		if (p == NULL)
			return -1;
	}
	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	*start = strtoull(p, &end, 10);
	if (errno != 0 || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -1;
	return 0;
}

/* The state letter and start time of PID; -1 when it does not exist. */
static int
proc_stat(pid_t pid, char *state, uint64_t *start)
{
	char path[PROC_STAT_PATH_BYTES];
	char line[PROC_STAT_MAX_BYTES];

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (proc_read_small_file(path, line, sizeof(line)) == -1)
		return -1;
	return proc_parse_stat(line, state, start);
}

int
proc_start_time(pid_t pid, uint64_t *start)
{
	char state;

	return proc_stat(pid, &state, start);
}

/* True when TEXT is a UUID as the kernel prints it (lowercase hex, 8-4-4-4-12). */
static int
proc_is_uuid_text(const char *text)
{
	for (int i = 0; i < PROC_BOOT_ID_LEN; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? text[i] != '-' :
		    !((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f')))
			return 0;
	}
	return 1;
}

int
proc_boot_id(char out[BOOT_ID_BYTES])
{
	char text[BOOT_ID_BYTES + 8];
	ssize_t n;

	n = proc_read_small_file(PROC_BOOT_ID_PATH, text, sizeof(text));
	if (n < PROC_BOOT_ID_LEN || !proc_is_uuid_text(text))
		return -1;
	if (n > PROC_BOOT_ID_LEN && text[PROC_BOOT_ID_LEN] != '\n')
		return -1;
	memcpy(out, text, PROC_BOOT_ID_LEN);
	out[PROC_BOOT_ID_LEN] = '\0';
	return 0;
}

/* A zombie ('Z') or dying ('X') process has exited even though its pid
 * still shows in /proc, so it counts as gone: the server it was no longer
 * owns anything. */
int
proc_is_same_process(pid_t pid, uint64_t start, const char *boot_id)
{
	char now_boot[BOOT_ID_BYTES];
	uint64_t now_start;
	char state;

	if (boot_id == NULL || proc_boot_id(now_boot) == -1)
		return 0;
	if (strcmp(boot_id, now_boot) != 0)
		return 0;
	if (proc_stat(pid, &state, &now_start) == -1)
		return 0;
	return now_start == start && state != 'Z' && state != 'X' && state != 'x';
}

int
proc_ns_pids(pid_t pid, pid_t *out, size_t max)
{
	char path[64], line[256];
	int n = -1;
	FILE *f;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/status");
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		n = 0;
		for (long v = strtol(p, &end, 10); end != p; v = strtol(p, &end, 10)) {
			if ((size_t)n < max)
				out[n] = (pid_t)v;
			n++;
			p = end;
		}
		break;
	}
	fclose(f);
	return n;
}

pid_t
proc_ns_pid(pid_t pid)
{
	pid_t pids[PROC_NS_DEPTH_MAX];
	int n = proc_ns_pids(pid, pids, PROC_NS_DEPTH_MAX);

	/* The last number is the innermost namespace's. */
	return n > 0 && n <= PROC_NS_DEPTH_MAX && pids[n - 1] > 0 ? pids[n - 1] : -1;
}
