/* The cgroups of sandboxes: finding the hierarchies, making a sandbox's
 * leaves with its limits, joining, killing, removing, and listing what is
 * left for the reaper. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "broker/monitor/cgroup.h"
#include "common/reason.h"
#include "common/xmalloc.h"
#include "policy/name.h"

#define CGROUP_PROC_FILE_MAX_BYTES (1024 * 1024)  /* /proc/self/mountinfo and /proc/self/cgroup */
#define CGROUP_SMALL_FILE_MAX_BYTES 4096          /* cgroup.events, cgroup.controllers, /proc/PID/cgroup */
#define CGROUP_LEAVES (1 + CGROUP_RESOURCES)      /* v2 and at most one v1 hierarchy per resource */
#define CGROUP_LIST_MAX 65536                     /* sandbox names one listing holds */
#define CGROUP_POLL_FIRST_US 100
#define CGROUP_POLL_LAST_US 10000

/* The controller names, as cgroup.controllers and mount options spell them. */
static const char *const cgroup_controller[CGROUP_RESOURCES] = {
	[CGROUP_PIDS] = "pids",
	[CGROUP_MEMORY] = "memory",
	[CGROUP_CPU] = "cpu",
};

/* A sandbox's cgroup in one hierarchy. */
struct cgroup_leaf {
	char *path;                     /* absolute */
	char *rel;                      /* as /proc/PID/cgroup names it */
	char *root;                     /* its instance root, absolute */
	const char *key;                /* NULL for v2, else a v1 controller name */
	bool made;                      /* created by this handle (undone on failure) */
};

struct cgroup_sandbox {
	char *name;
	struct cgroup_leaf leaf[CGROUP_LEAVES];
	size_t leaves;
	int res_leaf[CGROUP_RESOURCES]; /* the leaf enforcing each resource; -1: none */
	int v2_fd;                      /* the v2 leaf; -1 when it has none */
	bool kill_by_signals;
};

/* Joins DIR and NAME into OUT (PATH_MAX bytes); -1 and ENAMETOOLONG if too long. */
static int
path_join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Reads at most SIZE - 1 bytes of DIR/FILE into BUF, NUL-terminated. */
static ssize_t
file_read(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n = -1;
	int fd;

	if (path_join(path, dir, file) == -1 || (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return n;
}

/* Reads the whole file PATH (at most CGROUP_PROC_FILE_MAX_BYTES) into a new string. */
static char *
file_slurp(const char *path)
{
	size_t len = 0, cap = CGROUP_SMALL_FILE_MAX_BYTES;
	char *buf = xmalloc(cap);
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	while (fd != -1 && len + 1 < cap && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap && cap < CGROUP_PROC_FILE_MAX_BYTES) {
			buf = xreallocarray(buf, 2, cap);
			cap *= 2;
		}
	}
	if (fd != -1)
		close(fd);
	if (fd == -1 || n < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* Writes VALUE to DIR/FILE in one write(), as cgroup files want. */
static int
file_write(const char *dir, const char *file, const char *value, char **err)
{
	char path[PATH_MAX];
	size_t len = strlen(value);
	int fd, ret = -1;

	if (path_join(path, dir, file) == -1 || (fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return reason_set(err, "cgroup: opening %s/%s: %s", dir, file, strerror(errno));
	if (write(fd, value, len) == (ssize_t)len)
		ret = 0;
	else
		reason_set(err, "cgroup: writing \"%s\" to %s: %s", value, path, strerror(errno));
	close(fd);
	return ret;
}

/* Like file_write, but a file this kernel does not have is no error. */
static int
file_write_optional(const char *dir, const char *file, const char *value, char **err)
{
	char path[PATH_MAX];

	if (path_join(path, dir, file) == 0 && access(path, F_OK) == -1 && errno == ENOENT)
		return 0;
	return file_write(dir, file, value, err);
}

/* True when WORD is an item of LIST, items separated by spaces, commas or newlines. */
static bool
list_has(const char *list, const char *word)
{
	size_t wlen = strlen(word);

	while (*list != '\0') {
		size_t len = strcspn(list, " ,\n");

		if (len == wlen && strncmp(list, word, len) == 0)
			return true;
		list += len + (list[len] != '\0');
	}
	return false;
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void
unescape_octal(char *s)
{
	char *out = s;

	for (; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else
			*out++ = *s;
	}
	*out = '\0';
}

/* Records MOUNT as HIER's mount point unless one was found first. */
static void
hier_set_mount(struct cgroup_hier *hier, const char *mount)
{
	if (hier->mount[0] == '\0')
		snprintf(hier->mount, sizeof(hier->mount), "%s", mount);
}

/* Takes one line of /proc/self/mountinfo: ID PARENT DEV ROOT MOUNT OPTS
 * [OPTIONAL...] - FSTYPE SOURCE SUPER. Only mounts of a hierarchy's root
 * are used: a bind mount of a subtree would put the base elsewhere. */
static void
discover_mount(struct cgroup_host *host, char *line)
{
	char *field[6], *fstype = NULL, *super = NULL, *save = NULL, *tok;
	int i = 0;

	for (tok = strtok_r(line, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
		if (i < 6)
			field[i++] = tok;
		else if (strcmp(tok, "-") == 0 && (fstype = strtok_r(NULL, " ", &save)) != NULL &&
		    strtok_r(NULL, " ", &save) != NULL)
			super = strtok_r(NULL, " ", &save);
	}
	if (i < 6 || fstype == NULL || strcmp(field[3], "/") != 0)
		return;
	unescape_octal(field[4]);
	if (strcmp(fstype, "cgroup2") == 0)
		hier_set_mount(&host->v2, field[4]);
	for (int r = 0; r < CGROUP_RESOURCES && super != NULL && strcmp(fstype, "cgroup") == 0; r++)
		if (list_has(super, cgroup_controller[r]))
			hier_set_mount(&host->v1[r], field[4]);
}

/* Takes one line of /proc/self/cgroup: ID:CONTROLLERS:PATH. */
static void
discover_membership(struct cgroup_host *host, char *line)
{
	char *ctl = strchr(line, ':'), *path = ctl == NULL ? NULL : strchr(ctl + 1, ':');

	if (path == NULL)
		return;
	*ctl++ = '\0';
	*path++ = '\0';
	if (strcmp(line, "0") == 0 && *ctl == '\0')
		snprintf(host->v2.rel, sizeof(host->v2.rel), "%s", path);
	for (int r = 0; r < CGROUP_RESOURCES && *ctl != '\0'; r++)
		if (list_has(ctl, cgroup_controller[r]))
			snprintf(host->v1[r].rel, sizeof(host->v1[r].rel), "%s", path);
}

/* Calls FN on each line of TEXT (a copy is cut up). */
static void
each_line(struct cgroup_host *host, const char *text, void (*fn)(struct cgroup_host *, char *))
{
	char *copy = xstrdup(text), *save = NULL, *line;

	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
		fn(host, line);
	free(copy);
}

/* Fills HIER's base from its mount and rel; clears HIER when either is missing. */
static void
hier_finish(struct cgroup_hier *hier)
{
	int n;

	if (hier->mount[0] == '\0' || hier->rel[0] != '/') {
		memset(hier, 0, sizeof(*hier));
		return;
	}
	n = snprintf(hier->base, sizeof(hier->base), "%s%s", hier->mount,
	    strcmp(hier->rel, "/") == 0 ? "" : hier->rel);
	if (n < 0 || (size_t)n >= sizeof(hier->base))
		memset(hier, 0, sizeof(*hier));
}

/* When corrald already sits in its own leaf, the base is that leaf's parent. */
static void
discover_own_leaf(struct cgroup_hier *v2)
{
	char *slash = strrchr(v2->rel, '/');

	if (slash == NULL || strncmp(slash + 1, CGROUP_LEAF_PREFIX, strlen(CGROUP_LEAF_PREFIX)) != 0)
		return;
	if (slash == v2->rel)
		slash[1] = '\0';
	else
		*slash = '\0';
}

/* Pure v2: whether the base must be emptied before enabling controllers.
 * The root is exempt from the "no internal processes" rule. */
static bool
discover_needs_leaf(const struct cgroup_host *host)
{
	char subtree[CGROUP_SMALL_FILE_MAX_BYTES], procs[16];
	bool missing = false;

	if (strcmp(host->v2.rel, "/") == 0)
		return false;
	if (file_read(host->v2.base, "cgroup.subtree_control", subtree, sizeof(subtree)) == -1)
		subtree[0] = '\0';
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		missing |= host->v2_controller[r] && !list_has(subtree, cgroup_controller[r]);
	return missing && file_read(host->v2.base, "cgroup.procs", procs, sizeof(procs)) > 0;
}

int
cgroup_host_discover_from(struct cgroup_host *host, const char *mountinfo,
    const char *self_cgroup, char **err)
{
	char controllers[CGROUP_SMALL_FILE_MAX_BYTES];

	memset(host, 0, sizeof(*host));
	each_line(host, mountinfo, discover_mount);
	each_line(host, self_cgroup, discover_membership);
	discover_own_leaf(&host->v2);
	hier_finish(&host->v2);
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		hier_finish(&host->v1[r]);
	if (host->v2.base[0] == '\0')
		return 0;
	if (file_read(host->v2.base, "cgroup.controllers", controllers, sizeof(controllers)) == -1)
		return reason_set(err, "cgroup: reading %s/cgroup.controllers: %s",
		    host->v2.base, strerror(errno));
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		host->v2_controller[r] = list_has(controllers, cgroup_controller[r]);
	host->v2_needs_leaf = discover_needs_leaf(host);
	return 0;
}

int
cgroup_host_discover(struct cgroup_host *host, char **err)
{
	char *mountinfo = file_slurp("/proc/self/mountinfo");
	char *self_cgroup = file_slurp("/proc/self/cgroup");
	int ret;

	if (mountinfo == NULL || self_cgroup == NULL)
		ret = reason_set(err, "cgroup: reading /proc/self/%s: %s",
		    mountinfo == NULL ? "mountinfo" : "cgroup", strerror(errno));
	else
		ret = cgroup_host_discover_from(host, mountinfo, self_cgroup, err);
	free(mountinfo);
	free(self_cgroup);
	return ret;
}

enum cgroup_source
cgroup_host_source(const struct cgroup_host *host, enum cgroup_resource res)
{
	if (host->v2.base[0] != '\0' && host->v2_controller[res])
		return CGROUP_SOURCE_V2;
	if (host->v1[res].base[0] != '\0')
		return CGROUP_SOURCE_V1;
	return CGROUP_SOURCE_NONE;
}

bool
cgroup_leaf_name_valid(const char *name)
{
	size_t n = strlen(CGROUP_WARM_PREFIX);
	const char *d;

	if (policy_name_valid(name))
		return true;
	if (name == NULL || strncmp(name, CGROUP_WARM_PREFIX, n) != 0 || name[n] == '\0' ||
	    strlen(name + n) > 5)
		return false;
	for (d = name + n; *d >= '0' && *d <= '9'; d++)
		;
	return *d == '\0';
}

/* Instance ids and sandbox names share the sandbox-name syntax: both become
 * path components, so nothing like "..", "/" or "" may pass. */
static int
check_names(const char *instance, const char *name, char **err)
{
	if (!policy_name_valid(instance))
		return reason_set(err, "cgroup: instance id \"%s\" %s", instance == NULL ? "" : instance,
		    instance == NULL ? "is missing" : policy_name_error(instance));
	if (name != NULL && !cgroup_leaf_name_valid(name))
		return reason_set(err, "cgroup: sandbox name \"%s\" %s", name, policy_name_error(name));
	return 0;
}

int
cgroup_host_enter_leaf(struct cgroup_host *host, const char *instance, char **err)
{
	char leaf[PATH_MAX], procs[16];
	ssize_t n;

	if (!host->v2_needs_leaf)
		return 0;
	if (check_names(instance, NULL, err) == -1)
		return -1;
	if (snprintf(leaf, sizeof(leaf), "%s/%s%s", host->v2.base, CGROUP_LEAF_PREFIX, instance) >= PATH_MAX)
		return reason_set(err, "cgroup: %s: path too long", host->v2.base);
	if (mkdir(leaf, 0755) == -1 && errno != EEXIST)
		return reason_set(err, "cgroup: mkdir %s: %s", leaf, strerror(errno));
	/* "0" is the writer: the whole process, every thread, moves. */
	if (file_write(leaf, "cgroup.procs", "0", err) == -1)
		return -1;
	if ((n = file_read(host->v2.base, "cgroup.procs", procs, sizeof(procs))) == -1)
		return reason_set(err, "cgroup: reading %s/cgroup.procs: %s", host->v2.base, strerror(errno));
	if (n > 0)
		return reason_set(err, "cgroup: other processes remain in %s, so controllers cannot "
		    "be enabled below it: run corrald as its own unit with Delegate=yes", host->v2.base);
	host->v2_needs_leaf = false;
	return 0;
}

/* Adds the leaf of NAME in hierarchy HIER (KEY: NULL for v2) to SB unless
 * SB has it already; returns its index. */
static int
sandbox_add_leaf(struct cgroup_sandbox *sb, const struct cgroup_hier *hier, const char *key,
    const char *instance)
{
	const char *rel = strcmp(hier->rel, "/") == 0 ? "" : hier->rel;
	struct cgroup_leaf *leaf;
	char *root;

	xasprintf(&root, "%s/%s%s", hier->base, CGROUP_ROOT_PREFIX, instance);
	for (size_t i = 0; i < sb->leaves; i++)
		if (strcmp(sb->leaf[i].root, root) == 0) {
			free(root);
			return (int)i;
		}
	leaf = &sb->leaf[sb->leaves];
	leaf->root = root;
	leaf->key = key;
	xasprintf(&leaf->path, "%s/%s", root, sb->name);
	xasprintf(&leaf->rel, "%s/%s%s/%s", rel, CGROUP_ROOT_PREFIX, instance, sb->name);
	return (int)sb->leaves++;
}

/* A handle on NAME's leaves: v2 and the v1 hierarchy of each resource v1
 * enforces; with ALL, every mounted v1 hierarchy of the three resources. */
static struct cgroup_sandbox *
sandbox_new(const struct cgroup_host *host, const char *instance, const char *name, bool all)
{
	struct cgroup_sandbox *sb = xcalloc(1, sizeof(*sb));

	sb->name = xstrdup(name);
	sb->v2_fd = -1;
	sb->kill_by_signals = host->kill_by_signals;
	if (host->v2.base[0] != '\0')
		sandbox_add_leaf(sb, &host->v2, NULL, instance);
	for (int r = 0; r < CGROUP_RESOURCES; r++) {
		enum cgroup_source src = cgroup_host_source(host, r);
		int v1 = -1;

		if (src == CGROUP_SOURCE_V1 || (all && host->v1[r].base[0] != '\0'))
			v1 = sandbox_add_leaf(sb, &host->v1[r], cgroup_controller[r], instance);
		sb->res_leaf[r] = src == CGROUP_SOURCE_V2 ? 0 : src == CGROUP_SOURCE_V1 ? v1 : -1;
	}
	return sb;
}

void
cgroup_sandbox_free(struct cgroup_sandbox *sb)
{
	if (sb == NULL)
		return;
	for (size_t i = 0; i < sb->leaves; i++) {
		free(sb->leaf[i].path);
		free(sb->leaf[i].rel);
		free(sb->leaf[i].root);
	}
	if (sb->v2_fd != -1)
		close(sb->v2_fd);
	free(sb->name);
	free(sb);
}

/* The controllers SB takes from v2, as subtree_control wants them ("+pids +cpu"). */
static void
v2_enable_list(const struct cgroup_sandbox *sb, char *out, size_t size)
{
	out[0] = '\0';
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		if (sb->res_leaf[r] == 0 && sb->leaf[0].key == NULL)
			snprintf(out + strlen(out), size - strlen(out), "%s+%s",
			    out[0] == '\0' ? "" : " ", cgroup_controller[r]);
}

/* Makes the instance roots (already there is fine) and, in v2, enables the
 * controllers SB uses below the base and below the root. */
static int
make_roots(const struct cgroup_host *host, const struct cgroup_sandbox *sb, char **err)
{
	char enable[64];

	v2_enable_list(sb, enable, sizeof(enable));
	if (enable[0] != '\0' && file_write(host->v2.base, "cgroup.subtree_control", enable, NULL) == -1)
		return reason_set(err, "cgroup: cannot enable \"%s\" below %s: %s%s", enable,
		    host->v2.base, strerror(errno), errno != EBUSY ? "" :
		    " (it holds processes: run corrald as its own unit with Delegate=yes)");
	for (size_t i = 0; i < sb->leaves; i++)
		if (mkdir(sb->leaf[i].root, 0755) == -1 && errno != EEXIST)
			return reason_set(err, "cgroup: mkdir %s: %s", sb->leaf[i].root, strerror(errno));
	if (enable[0] != '\0' && file_write(sb->leaf[0].root, "cgroup.subtree_control", enable, err) == -1)
		return -1;
	return 0;
}

/* Makes SB's leaves. They are root's, mode 0755: a workload, never uid 0,
 * can neither move itself out, nor raise a limit, nor add sub-cgroups. */
static int
make_leaves(struct cgroup_sandbox *sb, char **err)
{
	for (size_t i = 0; i < sb->leaves; i++) {
		if (mkdir(sb->leaf[i].path, 0755) == -1)
			return reason_set(err, "cgroup: mkdir %s: %s%s", sb->leaf[i].path, strerror(errno),
			    errno == EEXIST ? " (a leftover: corral reap removes it)" : "");
		sb->leaf[i].made = true;
	}
	sb->v2_fd = open(sb->leaf[0].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sb->v2_fd == -1)
		return reason_set(err, "cgroup: opening %s: %s", sb->leaf[0].path, strerror(errno));
	return 0;
}

static int
limit_pids(const char *dir, uint64_t pids, char **err)
{
	char value[32];

	snprintf(value, sizeof(value), "%llu", (unsigned long long)pids);
	return file_write(dir, "pids.max", value, err);
}

/* Memory without swap: the swap limit equals the memory limit (v1: memsw
 * counts memory plus swap, and must be written after the memory limit). */
static int
limit_memory(const char *dir, bool v2, uint64_t bytes, char **err)
{
	char value[32];

	snprintf(value, sizeof(value), "%llu", (unsigned long long)bytes);
	if (v2)
		return file_write(dir, "memory.max", value, err) == -1 ? -1 :
		    file_write_optional(dir, "memory.swap.max", "0", err);
	if (file_write(dir, "memory.limit_in_bytes", value, err) == -1)
		return -1;
	return file_write_optional(dir, "memory.memsw.limit_in_bytes", value, err);
}

static int
limit_cpu(const char *dir, bool v2, uint32_t milli, char **err)
{
	unsigned long long quota = (unsigned long long)milli * CGROUP_CPU_PERIOD_US / 1000;
	char value[64];

	if (v2) {
		snprintf(value, sizeof(value), "%llu %d", quota, CGROUP_CPU_PERIOD_US);
		return file_write(dir, "cpu.max", value, err);
	}
	snprintf(value, sizeof(value), "%d", CGROUP_CPU_PERIOD_US);
	if (file_write(dir, "cpu.cfs_period_us", value, err) == -1)
		return -1;
	snprintf(value, sizeof(value), "%llu", quota);
	return file_write(dir, "cpu.cfs_quota_us", value, err);
}

/* Writes each non-zero limit where its resource is enforced; a fresh
 * cgroup has no limit, so zero needs no write. */
static int
apply_limits(const struct cgroup_sandbox *sb, const struct cgroup_limits *lim, char **err)
{
	int pl = sb->res_leaf[CGROUP_PIDS], ml = sb->res_leaf[CGROUP_MEMORY];
	int cl = sb->res_leaf[CGROUP_CPU];

	if (lim->pids != 0 && pl != -1 && limit_pids(sb->leaf[pl].path, lim->pids, err) == -1)
		return -1;
	if (lim->memory_bytes != 0 && ml != -1 &&
	    limit_memory(sb->leaf[ml].path, ml == 0, lim->memory_bytes, err) == -1)
		return -1;
	if (lim->cpu_milli != 0 && cl != -1 && limit_cpu(sb->leaf[cl].path, cl == 0, lim->cpu_milli, err) == -1)
		return -1;
	return 0;
}

static int
check_limits(const struct cgroup_limits *lim, char **err)
{
	if (lim->cpu_milli != 0 && (lim->cpu_milli < CGROUP_CPU_MIN_MILLI || lim->cpu_milli > CGROUP_CPU_MAX_MILLI))
		return reason_set(err, "cgroup: a CPU limit of %u milli-CPUs is outside %d..%d",
		    lim->cpu_milli, CGROUP_CPU_MIN_MILLI, CGROUP_CPU_MAX_MILLI);
	return 0;
}

int
cgroup_sandbox_limit(const struct cgroup_sandbox *sb, const struct cgroup_limits *lim,
    char **err)
{
	return check_limits(lim, err) == -1 ? -1 : apply_limits(sb, lim, err);
}

int
cgroup_sandbox_create(const struct cgroup_host *host, const char *instance, const char *name,
    const struct cgroup_limits *lim, struct cgroup_sandbox **out, char **err)
{
	struct cgroup_sandbox *sb;

	*out = NULL;
	if (check_names(instance, name, err) == -1 || check_limits(lim, err) == -1)
		return -1;
	/* Without v2 nothing could track, kill or identify the sandbox. */
	if (host->v2.base[0] == '\0')
		return reason_set(err, "cgroup: no cgroup v2 hierarchy is mounted; corral needs one "
		    "to track sandboxes");
	sb = sandbox_new(host, instance, name, false);
	if (make_roots(host, sb, err) == -1 || make_leaves(sb, err) == -1 ||
	    apply_limits(sb, lim, err) == -1) {
		for (size_t i = 0; i < sb->leaves; i++)
			if (sb->leaf[i].made)
				rmdir(sb->leaf[i].path);
		cgroup_sandbox_free(sb);
		return -1;
	}
	*out = sb;
	return 0;
}

/* Keeps only the leaves of SB that exist, the v2 one first. */
static void
sandbox_keep_existing(struct cgroup_sandbox *sb)
{
	int map[CGROUP_LEAVES];
	size_t kept = 0;
	struct stat st;

	for (size_t i = 0; i < sb->leaves; i++) {
		map[i] = -1;
		if (stat(sb->leaf[i].path, &st) == 0 && S_ISDIR(st.st_mode)) {
			map[i] = (int)kept;
			sb->leaf[kept++] = sb->leaf[i];
		} else {
			free(sb->leaf[i].path);
			free(sb->leaf[i].rel);
			free(sb->leaf[i].root);
		}
	}
	sb->leaves = kept;
	for (int r = 0; r < CGROUP_RESOURCES; r++)
		sb->res_leaf[r] = sb->res_leaf[r] == -1 ? -1 : map[sb->res_leaf[r]];
}

/* Like cgroup_sandbox_open, but a sandbox with no leaf left is no error. */
static int
sandbox_open(const struct cgroup_host *host, const char *instance, const char *name,
    struct cgroup_sandbox **out, char **err)
{
	struct cgroup_sandbox *sb;

	*out = NULL;
	if (check_names(instance, name, err) == -1)
		return -1;
	sb = sandbox_new(host, instance, name, true);
	sandbox_keep_existing(sb);
	if (sb->leaves > 0 && sb->leaf[0].key == NULL)
		sb->v2_fd = open(sb->leaf[0].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*out = sb;
	return 0;
}

int
cgroup_sandbox_open(const struct cgroup_host *host, const char *instance, const char *name,
    struct cgroup_sandbox **out, char **err)
{
	if (sandbox_open(host, instance, name, out, err) == -1)
		return -1;
	if ((*out)->leaves == 0) {
		cgroup_sandbox_free(*out);
		*out = NULL;
		return reason_set(err, "cgroup: sandbox %s has no cgroup under instance %s", name, instance);
	}
	return 0;
}

const char *
cgroup_limit_source(const struct cgroup_sandbox *sb, enum cgroup_resource res)
{
	int i = sb->res_leaf[res];

	if (i == -1)
		return "none";
	return sb->leaf[i].key == NULL ? "v2" : "v1";
}

int
cgroup_sandbox_events_fd(const struct cgroup_sandbox *sb, enum cgroup_resource res)
{
	int i = sb->res_leaf[res];
	const char *file;
	char *path;
	int fd;

	if (i == -1 || (res != CGROUP_MEMORY && res != CGROUP_PIDS))
		return -1;
	if (res == CGROUP_PIDS)
		file = "pids.events";
	else
		file = sb->leaf[i].key == NULL ? "memory.events" : "memory.oom_control";
	xasprintf(&path, "%s/%s", sb->leaf[i].path, file);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(path);
	return fd;
}

int
cgroup_sandbox_v2_fd(const struct cgroup_sandbox *sb)
{
	return sb->v2_fd;
}

const char *
cgroup_sandbox_name(const struct cgroup_sandbox *sb)
{
	return sb->name;
}

int
cgroup_sandbox_join(const struct cgroup_sandbox *sb, pid_t pid, char **err)
{
	char value[32];

	snprintf(value, sizeof(value), "%ld", (long)pid);
	for (size_t i = 0; i < sb->leaves; i++)
		if (file_write(sb->leaf[i].path, "cgroup.procs", value, err) == -1)
			return -1;
	return 0;
}

/* Calls FN on each pid in DIR's cgroup.procs and in those of the cgroups
 * below it; returns how many there were, or -1. */
static ssize_t
tree_each_pid(const char *dir, void (*fn)(pid_t, void *), void *arg)
{
	char path[PATH_MAX];
	ssize_t count = 0, sub;
	struct dirent *de;
	FILE *procs;
	DIR *d;
	long pid;

	if (path_join(path, dir, "cgroup.procs") == -1 || (procs = fopen(path, "re")) == NULL)
		return -1;
	while (fscanf(procs, "%ld", &pid) == 1) {
		fn((pid_t)pid, arg);
		count++;
	}
	fclose(procs);
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && count >= 0) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' || path_join(path, dir, de->d_name) == -1)
			continue;
		sub = tree_each_pid(path, fn, arg);
		count = sub == -1 && errno != ENOENT ? -1 : count + (sub > 0 ? sub : 0);
	}
	closedir(d);
	return count;
}

struct pid_sink {
	pid_t *pids;
	size_t max, len;
};

static void
pid_store(pid_t pid, void *arg)
{
	struct pid_sink *sink = arg;

	if (sink->len < sink->max)
		sink->pids[sink->len++] = pid;
}

ssize_t
cgroup_sandbox_procs(const struct cgroup_sandbox *sb, pid_t *pids, size_t max, char **err)
{
	struct pid_sink sink = { pids, max, 0 };
	ssize_t n;

	if (sb->leaves == 0 || sb->leaf[0].key != NULL)
		return 0;
	n = tree_each_pid(sb->leaf[0].path, pid_store, &sink);
	if (n == -1)
		return reason_set(err, "cgroup: reading the processes of %s: %s", sb->leaf[0].path,
		    strerror(errno));
	return n;
}

static void
pid_ignore(pid_t pid, void *arg)
{
}

/* 1 while any leaf of SB holds a process, 0 once none does, -1 on error. */
static int
sandbox_populated(const struct cgroup_sandbox *sb, char **err)
{
	char events[CGROUP_SMALL_FILE_MAX_BYTES], *p;
	ssize_t n;

	for (size_t i = 0; i < sb->leaves; i++) {
		if (sb->leaf[i].key == NULL &&
		    file_read(sb->leaf[i].path, "cgroup.events", events, sizeof(events)) > 0 &&
		    (p = strstr(events, "populated ")) != NULL) {
			if (p[strlen("populated ")] == '1')
				return 1;
			continue;
		}
		n = tree_each_pid(sb->leaf[i].path, pid_ignore, NULL);
		if (n == -1 && errno != ENOENT)
			return reason_set(err, "cgroup: reading %s: %s", sb->leaf[i].path, strerror(errno));
		if (n > 0)
			return 1;
	}
	return 0;
}

/* True when process PID's cgroup in LEAF's hierarchy is LEAF or below it. */
static bool
pid_in_leaf(pid_t pid, const struct cgroup_leaf *leaf)
{
	char path[64], text[CGROUP_SMALL_FILE_MAX_BYTES], *save = NULL, *line;
	size_t rlen = strlen(leaf->rel);

	snprintf(path, sizeof(path), "/proc/%ld", (long)pid);
	if (file_read(path, "cgroup", text, sizeof(text)) <= 0)
		return false;
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *ctl = strchr(line, ':'), *cg = ctl == NULL ? NULL : strchr(ctl + 1, ':');

		if (cg == NULL)
			continue;
		*cg++ = '\0';
		if ((leaf->key == NULL ? ctl[1] != '\0' || strncmp(line, "0:", 2) != 0 :
		    !list_has(ctl + 1, leaf->key)))
			continue;
		return strncmp(cg, leaf->rel, rlen) == 0 && (cg[rlen] == '\0' || cg[rlen] == '/');
	}
	return false;
}

/* Sends SIGKILL to PID only if, once a pidfd pins it, it is still in the
 * leaf: a pid read from cgroup.procs may have been reused since, and this
 * runs as root. Without pidfds (before 5.3, or under valgrind) the check
 * and the kill are two steps, a window of microseconds. */
static void
pid_kill_member(pid_t pid, void *arg)
{
	const struct cgroup_leaf *leaf = arg;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (pidfd == -1 && errno == ENOSYS && pid_in_leaf(pid, leaf))
		kill(pid, SIGKILL);
	if (pidfd == -1)
		return;
	if (pid_in_leaf(pid, leaf))
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	close(pidfd);
}

static long
elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Waits until SB is empty, signalling what is left in each leaf (in v2
 * only when cgroup.kill is not used); -1 after CGROUP_KILL_WAIT_MS. */
static int
kill_wait(const struct cgroup_sandbox *sb, bool signal_v2, char **err)
{
	useconds_t step = CGROUP_POLL_FIRST_US;
	struct timespec start;
	int populated;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((populated = sandbox_populated(sb, err)) == 1) {
		if (elapsed_ms(&start) >= CGROUP_KILL_WAIT_MS)
			return reason_set(err, "cgroup: sandbox %s still holds processes %d ms after "
			    "being killed", sb->name, CGROUP_KILL_WAIT_MS);
		for (size_t i = 0; i < sb->leaves; i++) {
			struct cgroup_leaf leaf = sb->leaf[i];

			if (signal_v2 || leaf.key != NULL)
				tree_each_pid(leaf.path, pid_kill_member, &leaf);
		}
		usleep(step);
		step = step * 2 > CGROUP_POLL_LAST_US ? CGROUP_POLL_LAST_US : step * 2;
	}
	return populated;
}

int
cgroup_sandbox_kill(const struct cgroup_sandbox *sb, char **err)
{
	const char *v2 = sb->leaves > 0 && sb->leaf[0].key == NULL ? sb->leaf[0].path : NULL;
	bool by_signals = v2 == NULL || sb->kill_by_signals;
	char path[PATH_MAX];
	int populated, ret;

	if ((populated = sandbox_populated(sb, err)) <= 0)
		return populated;
	if (v2 != NULL && !by_signals && path_join(path, v2, "cgroup.kill") == 0 && access(path, W_OK) == 0)
		return file_write(v2, "cgroup.kill", "1", err) == -1 ? -1 : kill_wait(sb, false, err);
	/* Before cgroup.kill (5.14): freeze first, so nothing forks while the
	 * pids are read and signalled; SIGKILL still ends frozen processes. */
	if (v2 != NULL)
		file_write_optional(v2, "cgroup.freeze", "1", NULL);
	ret = kill_wait(sb, true, err);
	if (v2 != NULL)
		file_write_optional(v2, "cgroup.freeze", "0", NULL);
	return ret;
}

/* Removes the cgroup DIR and any below it; an emptied cgroup can stay busy
 * a moment, so EBUSY is retried for CGROUP_RMDIR_WAIT_MS. */
static int
rmdir_tree(const char *dir, char **err)
{
	char path[PATH_MAX];
	struct timespec start;
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d != NULL && (de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && de->d_name[0] != '.' && path_join(path, dir, de->d_name) == 0)
			rmdir_tree(path, NULL);
	if (d != NULL)
		closedir(d);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (rmdir(dir) == -1) {
		if (errno == ENOENT)
			return 0;
		if (errno != EBUSY || elapsed_ms(&start) >= CGROUP_RMDIR_WAIT_MS)
			return reason_set(err, "cgroup: rmdir %s: %s", dir, strerror(errno));
		usleep(CGROUP_POLL_FIRST_US);
	}
	return 0;
}

int
cgroup_sandbox_remove(const struct cgroup_sandbox *sb, char **err)
{
	int ret = 0;

	if (cgroup_sandbox_kill(sb, err) == -1)
		return -1;
	for (size_t i = 0; i < sb->leaves; i++)
		if (rmdir_tree(sb->leaf[i].path, ret == 0 ? err : NULL) == -1)
			ret = -1;
	return ret;
}

int
cgroup_remove_by_name(const struct cgroup_host *host, const char *instance, const char *name,
    char **err)
{
	struct cgroup_sandbox *sb;
	int ret;

	if (sandbox_open(host, instance, name, &sb, err) == -1)
		return -1;
	ret = cgroup_sandbox_remove(sb, err);
	cgroup_sandbox_free(sb);
	return ret;
}

struct name_list {
	char **names;
	size_t len;
};

/* Adds the sandbox-named subfolders of ROOT to LIST, once each. */
static int
collect_names(const char *root, struct name_list *list, char **err)
{
	struct dirent *de;
	DIR *d = opendir(root);
	size_t i;

	if (d == NULL)
		return errno == ENOENT ? 0 : reason_set(err, "cgroup: opening %s: %s", root, strerror(errno));
	while ((de = readdir(d)) != NULL && list->len < CGROUP_LIST_MAX) {
		if (de->d_type != DT_DIR || !cgroup_leaf_name_valid(de->d_name))
			continue;
		for (i = 0; i < list->len && strcmp(list->names[i], de->d_name) != 0; i++)
			;
		if (i < list->len)
			continue;
		list->names = xreallocarray(list->names, list->len + 1, sizeof(*list->names));
		list->names[list->len++] = xstrdup(de->d_name);
	}
	closedir(d);
	return 0;
}

static int
names_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of INSTANCE's sandboxes in every hierarchy, into LIST. */
static int
list_names(const struct cgroup_host *host, const char *instance, struct name_list *list, char **err)
{
	struct cgroup_sandbox *probe;
	int ret = 0;

	list->names = NULL;
	list->len = 0;
	if (check_names(instance, NULL, err) == -1)
		return -1;
	/* A probe handle knows every hierarchy's instance root. */
	probe = sandbox_new(host, instance, "probe", true);
	for (size_t i = 0; i < probe->leaves && ret == 0; i++)
		ret = collect_names(probe->leaf[i].root, list, err);
	cgroup_sandbox_free(probe);
	if (list->len > 0)
		qsort(list->names, list->len, sizeof(*list->names), names_compare);
	return ret;
}

static void
list_clear(struct name_list *list)
{
	for (size_t i = 0; i < list->len; i++)
		free(list->names[i]);
	free(list->names);
}

int
cgroup_list_sandboxes(const struct cgroup_host *host, const char *instance,
    void (*fn)(const char *name, void *arg), void *arg, char **err)
{
	struct name_list list;
	int ret = list_names(host, instance, &list, err);

	for (size_t i = 0; ret == 0 && i < list.len; i++)
		fn(list.names[i], arg);
	list_clear(&list);
	return ret;
}

int
cgroup_instance_remove(const struct cgroup_host *host, const char *instance, char **err)
{
	struct cgroup_sandbox *probe;
	struct name_list list;
	int ret = list_names(host, instance, &list, err);

	for (size_t i = 0; ret == 0 && i < list.len; i++)
		ret = cgroup_remove_by_name(host, instance, list.names[i], err);
	list_clear(&list);
	if (ret == -1)
		return -1;
	probe = sandbox_new(host, instance, "probe", true);
	for (size_t i = 0; i < probe->leaves && ret == 0; i++)
		ret = rmdir_tree(probe->leaf[i].root, err);
	cgroup_sandbox_free(probe);
	return ret;
}
