/* Credential grants applied to a sandbox: the copy into its private home
 * and the deleting, each in a child that runs as run_as. See credcopy.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/monitor/credcopy.h"
#include "broker/monitor/monitor-wire.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "policy/grant.h"
#include "policy/match.h"

#define CREDCOPY_FILE_MODE 0600
#define CREDCOPY_DIR_MODE 0700
#define CREDCOPY_IO_BYTES 16384                 /* one read of a copied file */
#define CREDCOPY_KEY_PEEK_BYTES 64              /* enough to see "-----BEGIN ... PRIVATE KEY" */
#define CREDCOPY_DELETE_PASSES 4                /* a folder is read again if a pass left entries */
#define CREDCOPY_MSG_MAX_BYTES 512              /* one line of the child's */
#define CREDCOPY_TEXT_MAX_BYTES (64u * 1024)    /* an expanded env value, the known names */
#define CREDCOPY_SSH_CONFIG_TMP "config.corral-new"
#define CREDCOPY_PUB_SUFFIX ".pub"              /* a public key beside its private twin */
#define CREDCOPY_SSH_OWN "# Your own configuration, as copied:\n"
#define CREDCOPY_KUBECONFIG ".kube/config"
#define CREDCOPY_LINE_MAX_BYTES 1024            /* a kubeconfig line looked at (longer: skipped) */
#define CREDCOPY_PORT_MAX 65535
#define CREDCOPY_HTTPS_PORT 443
#define CREDCOPY_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* The child's report, one record each: a type byte, then NUL-ended fields. */
enum {
	REC_GRANT = 'G',        /* name: the records after it are this grant's */
	REC_COPIED = 'C',       /* path */
	REC_SKIPPED = 'S',      /* path, reason */
	REC_HOST = 'H',         /* "host:port" found in a copied file (kube's server) */
	REC_ERROR = 'E',        /* message: the child failed */
	REC_DONE = 'D',         /* the child finished */
};

/* The child's state while it copies. */
struct credcopy_child {
	const struct credcopy_spec *spec;
	int report_fd;
	const char *grant;              /* the grant being copied */
	size_t files, bytes;            /* copied for it so far */
	size_t files_max, bytes_max;
	bool ssh_top;                   /* copying the files directly in .ssh */
	bool quiet_missing;             /* a missing path is no news (.gitconfig) */
	char first_skip[CREDCOPY_MSG_MAX_BYTES];        /* the grant's first "path: reason" */
	char keys[CREDCOPY_KEYS_MAX][NAME_MAX + 1];
	size_t nkeys;
};

/* ---- both sides ---- */

static int
credcopy_openat2(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = { .flags = (uint64_t)flags | O_CLOEXEC, .mode = mode,
	    .resolve = CREDCOPY_RESOLVE };

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* True for a path that is safe in an ssh config line and in
 * GIT_SSH_COMMAND, which git hands to a shell: no quoting is ever needed. */
static bool
credcopy_plain_text(const char *s)
{
	for (; *s != '\0'; s++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+@-",
		    *s) == NULL)
			return false;
	return true;
}

/* True for a relative path with no empty, "." or ".." component. */
static bool
credcopy_relative_path(const char *p)
{
	const char *c = p;

	if (*p == '\0' || *p == '/' || strlen(p) >= PATH_MAX)
		return false;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (c[n] == '\0')
			return true;
		c += n + 1;
	}
}

/* ---- the child: setting up ---- */

/* Closes every descriptor from 3 up but the N in KEEP (ascending). */
static void
credcopy_close_others(const int *keep, size_t n)
{
	unsigned lo = 3;

	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0 || (unsigned)keep[i] < lo)
			continue;
		if ((unsigned)keep[i] > lo)
			close_range(lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	close_range(lo, ~0U, 0);
}

static void
credcopy_sort3(int *a)
{
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (a[j] < a[i]) {
				int t = a[i];
				a[i] = a[j];
				a[j] = t;
			}
}

/* Becomes UID:GID for good, with the primary group only. Why: every file
 * the child opens or removes is then checked by the kernel as run_as's, so
 * a link or a swapped folder cannot make it reach what run_as could not. */
static int
credcopy_drop(uid_t uid, gid_t gid)
{
	if (setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1)
		return -1;
	if (setresuid(0, 0, 0) != -1 || geteuid() != uid || getegid() != gid)
		return -1;
	/* Not dumpable: run_as may not ptrace the child for the monitor's memory. */
	if (prctl(PR_SET_DUMPABLE, 0) == -1)
		return -1;
	umask(077);
	return 0;
}

static void
credcopy_report(int fd, char type, const char *a, const char *b)
{
	struct iovec v[5];
	int n = 0;

	v[n].iov_base = &type;
	v[n++].iov_len = 1;
	if (a != NULL) {
		v[n].iov_base = (void *)(uintptr_t)a;
		v[n++].iov_len = strlen(a) + 1;
	}
	if (b != NULL) {
		v[n].iov_base = (void *)(uintptr_t)b;
		v[n++].iov_len = strlen(b) + 1;
	}
	/* A short write shows as a malformed report: the parent refuses it. */
	(void)!writev(fd, v, n);
}

static void credcopy_child_fail(struct credcopy_child *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Reports the failure and ends the child: the whole copy is refused. */
static void
credcopy_child_fail(struct credcopy_child *c, const char *fmt, ...)
{
	char msg[CREDCOPY_MSG_MAX_BYTES];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	credcopy_report(c->report_fd, REC_ERROR, msg, NULL);
	_exit(1);
}

static void
credcopy_note_skip(struct credcopy_child *c, const char *rel, const char *why)
{
	if (c->first_skip[0] == '\0')
		snprintf(c->first_skip, sizeof(c->first_skip), "%s: %s", rel, why);
	credcopy_report(c->report_fd, REC_SKIPPED, rel, why);
}

/* The reason an open or stat of REL failed with ERRNO_, as a skip. */
static void
credcopy_skip_errno(struct credcopy_child *c, const char *rel, int errno_)
{
	if (errno_ == ENOENT && c->quiet_missing)
		return;
	if (errno_ == ENOENT)
		credcopy_note_skip(c, rel, "not in the home");
	else if (errno_ == ELOOP || errno_ == EXDEV)
		credcopy_note_skip(c, rel, "a symbolic link on its way (links are never followed)");
	else if (errno_ == EACCES || errno_ == EPERM)
		credcopy_note_skip(c, rel, "run_as may not read it");
	else if (errno_ == ENOTDIR)
		credcopy_note_skip(c, rel, "a file where a folder should be");
	else
		credcopy_note_skip(c, rel, strerror(errno_));
}

/* ---- the child: copying ---- */

static bool
credcopy_is_private_key(const char *head, size_t len)
{
	const char *nl = memchr(head, '\n', len);
	size_t line = nl != NULL ? (size_t)(nl - head) : len;

	return line > 11 && memcmp(head, "-----BEGIN ", 11) == 0 &&
	    memmem(head, line, "PRIVATE KEY-----", 16) != NULL;
}

/* True when NAME in the folder SRC has a public twin, NAME.pub, a regular
 * file beside it (as ssh-keygen writes them): a private key whatever its
 * first line (a key that does not start with a PEM header). */
static bool
credcopy_has_pub_twin(int src, const char *name)
{
	static const char pub[] = CREDCOPY_PUB_SUFFIX;
	char twin[NAME_MAX + 1];
	size_t n = strlen(name);
	struct stat st;

	if (n + sizeof(pub) > sizeof(twin) ||
	    (n >= sizeof(pub) - 1 && strcmp(name + n - (sizeof(pub) - 1), pub) == 0))
		return false;
	memcpy(twin, name, n);
	memcpy(twin + n, pub, sizeof(pub));
	/* One name in the folder itself: nothing is followed. */
	return fstatat(src, twin, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* Remembers NAME, a private key directly in .ssh (its PEM header, or its
 * .pub twin in SRC, says so), for the config block. */
static void
credcopy_note_key(struct credcopy_child *c, int src, const char *name, const char *head,
    size_t len)
{
	if (!c->ssh_top || c->nkeys == CREDCOPY_KEYS_MAX || !credcopy_plain_text(name) ||
	    strlen(name) > NAME_MAX ||
	    (!credcopy_is_private_key(head, len) && !credcopy_has_pub_twin(src, name)))
		return;
	strcpy(c->keys[c->nkeys++], name);
}

/* Copies IN to OUT within the grant's byte budget; the first bytes to HEAD. */
static void
credcopy_copy_bytes(struct credcopy_child *c, int in, int out, const char *rel, char *head,
    size_t *hlen)
{
	char buf[CREDCOPY_IO_BYTES];
	ssize_t n;

	*hlen = 0;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			credcopy_child_fail(c, "grant %s: cannot read %s: %s", c->grant, rel, strerror(errno));
		if ((c->bytes += (size_t)n) > c->bytes_max)
			credcopy_child_fail(c, "grant %s: copies more than %zu bytes (the limit per grant), at %s",
			    c->grant, c->bytes_max, rel);
		if (*hlen < CREDCOPY_KEY_PEEK_BYTES) {
			size_t k = (size_t)n < CREDCOPY_KEY_PEEK_BYTES - *hlen ? (size_t)n :
			    CREDCOPY_KEY_PEEK_BYTES - *hlen;
			memcpy(head + *hlen, buf, k);
			*hlen += k;
		}
		if (write(out, buf, (size_t)n) != n)
			credcopy_child_fail(c, "grant %s: cannot write the copy of %s", c->grant, rel);
	}
	explicit_bzero(buf, sizeof(buf));
}

/* Copies the regular file NAME of SRC into DST (REL in reports). */
static void
credcopy_copy_file(struct credcopy_child *c, int src, int dst, const char *name, const char *rel)
{
	char head[CREDCOPY_KEY_PEEK_BYTES];
	struct stat st;
	size_t hlen;
	int in, out;

	/* O_NONBLOCK and O_NOCTTY: a FIFO or a terminal swapped in after the
	 * stat must neither block nor change anything; fstat then skips it. */
	if ((in = credcopy_openat2(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0)) == -1) {
		credcopy_skip_errno(c, rel, errno);
		return;
	}
	if (fstat(in, &st) == -1 || !S_ISREG(st.st_mode)) {
		credcopy_note_skip(c, rel, "not a regular file");
		close(in);
		return;
	}
	out = credcopy_openat2(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, CREDCOPY_FILE_MODE);
	if (out == -1 && errno == EEXIST) {
		credcopy_note_skip(c, rel, "already copied by an earlier grant");
		close(in);
		return;
	}
	if (out == -1 || fchmod(out, CREDCOPY_FILE_MODE) == -1)
		credcopy_child_fail(c, "grant %s: cannot create the copy of %s: %s", c->grant, rel,
		    strerror(errno));
	if (++c->files > c->files_max)
		credcopy_child_fail(c, "grant %s: copies more than %zu files (the limit per grant), at %s",
		    c->grant, c->files_max, rel);
	credcopy_copy_bytes(c, in, out, rel, head, &hlen);
	close(in);
	if (close(out) == -1)
		credcopy_child_fail(c, "grant %s: cannot write the copy of %s", c->grant, rel);
	credcopy_note_key(c, src, name, head, hlen);
	explicit_bzero(head, sizeof(head));
	credcopy_report(c->report_fd, REC_COPIED, rel, NULL);
}

/* The folder NAME in DST, made 0700 when missing; its descriptor. */
static int
credcopy_dst_dir(struct credcopy_child *c, int dst, const char *name, const char *rel)
{
	int fd;

	if (mkdirat(dst, name, CREDCOPY_DIR_MODE) == -1 && errno != EEXIST)
		credcopy_child_fail(c, "grant %s: cannot make the folder %s in the copy: %s", c->grant,
		    rel, strerror(errno));
	if ((fd = credcopy_openat2(dst, name, O_RDONLY | O_DIRECTORY, 0)) == -1)
		credcopy_child_fail(c, "grant %s: cannot open the folder %s in the copy: %s", c->grant,
		    rel, strerror(errno));
	return fd;
}

static void credcopy_copy_entry(struct credcopy_child *c, int src, int dst, const char *name,
    const char *rel, int depth);

/* Copies what the folder NAME of SRC holds into the folder of the same
 * name in DST, DEPTH folders below the granted path. */
static void
credcopy_copy_dir(struct credcopy_child *c, int src, int dst, const char *name, const char *rel,
    int depth)
{
	char sub[PATH_MAX];
	struct dirent *de;
	int in, out;
	DIR *d;

	if (depth > CREDCOPY_DEPTH_MAX)
		credcopy_child_fail(c, "grant %s: %s is more than %d folders deep (the limit)", c->grant,
		    rel, CREDCOPY_DEPTH_MAX);
	if ((in = credcopy_openat2(src, name, O_RDONLY | O_DIRECTORY, 0)) == -1) {
		credcopy_skip_errno(c, rel, errno);
		return;
	}
	if ((d = fdopendir(in)) == NULL)
		credcopy_child_fail(c, "grant %s: cannot read %s: %s", c->grant, rel, strerror(errno));
	out = credcopy_dst_dir(c, dst, name, rel);
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name) >= (int)sizeof(sub))
			credcopy_child_fail(c, "grant %s: a path under %s is too long", c->grant, rel);
		c->ssh_top = strcmp(c->grant, "ssh") == 0 && depth == 0;
		credcopy_copy_entry(c, dirfd(d), out, de->d_name, sub, depth + 1);
	}
	if (errno != 0)
		credcopy_child_fail(c, "grant %s: cannot read %s: %s", c->grant, rel, strerror(errno));
	closedir(d);
	close(out);
}

/* Copies NAME of SRC (a file or a folder) into DST; anything else is skipped. */
static void
credcopy_copy_entry(struct credcopy_child *c, int src, int dst, const char *name, const char *rel,
    int depth)
{
	struct stat st;

	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		credcopy_skip_errno(c, rel, errno);
		return;
	}
	/* Why: a link may lead out of the granted folder, to what run_as may
	 * read but did not grant; it is never followed, never copied. */
	if (S_ISLNK(st.st_mode))
		credcopy_note_skip(c, rel, "a symbolic link (links are never followed)");
	else if (S_ISDIR(st.st_mode))
		credcopy_copy_dir(c, src, dst, name, rel, depth);
	else if (S_ISREG(st.st_mode))
		credcopy_copy_file(c, src, dst, name, rel);
	else
		credcopy_note_skip(c, rel, "not a regular file (a socket, FIFO or device)");
}

/* The folder REL (made 0700, component by component) in the copy. */
static int
credcopy_dst_parents(struct credcopy_child *c, const char *rel)
{
	char part[PATH_MAX];
	const char *p = rel;
	int fd = dup(c->spec->dst_home_fd), next;

	if (fd == -1)
		credcopy_child_fail(c, "cannot use the sandbox's home: %s", strerror(errno));
	while (*p != '\0') {
		size_t n = strcspn(p, "/");

		memcpy(part, p, n);
		part[n] = '\0';
		next = credcopy_dst_dir(c, fd, part, rel);
		close(fd);
		fd = next;
		p += n + (p[n] == '/');
	}
	return fd;
}

/* Copies the granted path REL (a file or a folder) of the home. */
static void
credcopy_copy_path(struct credcopy_child *c, const char *rel)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	const char *name = slash != NULL ? slash + 1 : rel;
	int src = c->spec->src_home_fd, dst;
	struct stat st;

	snprintf(parent, sizeof(parent), "%.*s", slash != NULL ? (int)(slash - rel) : 0, rel);
	if (slash != NULL && (src = credcopy_openat2(src, parent, O_PATH | O_DIRECTORY, 0)) == -1) {
		credcopy_skip_errno(c, rel, errno);
		return;
	}
	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		credcopy_skip_errno(c, rel, errno);
	} else {
		dst = credcopy_dst_parents(c, parent);
		credcopy_copy_entry(c, src, dst, name, rel, 0);
		close(dst);
	}
	if (slash != NULL)
		close(src);
}

/* Writes FD's text S whole, or ends the copy. */
static void
credcopy_write_all(struct credcopy_child *c, int fd, const char *s, size_t len)
{
	if (write(fd, s, len) != (ssize_t)len)
		credcopy_child_fail(c, "grant ssh: cannot write .ssh/config in the copy: %s",
		    strerror(errno));
}

/* The block at the top of the copy's .ssh/config: ssh takes ~ from the
 * password file (the real home, not visible inside), so every file is
 * named by its absolute path in the copy. */
static void
credcopy_ssh_block(struct credcopy_child *c, int out)
{
	const char *home = c->spec->dst_home_path;
	char line[PATH_MAX + NAME_MAX + 64];

	snprintf(line, sizeof(line), "# Written by corral: the keys and known_hosts copied "
	    "for this sandbox.\nHost *\n\tUserKnownHostsFile %s/.ssh/known_hosts\n", home);
	credcopy_write_all(c, out, line, strlen(line));
	for (size_t i = 0; i < c->nkeys; i++) {
		snprintf(line, sizeof(line), "\tIdentityFile %s/.ssh/%s\n", home, c->keys[i]);
		credcopy_write_all(c, out, line, strlen(line));
	}
	credcopy_write_all(c, out, "\n", 1);
}

/* Writes <copy>/.ssh/config: corral's block, then the user's own config. */
static void
credcopy_ssh_config(struct credcopy_child *c)
{
	char buf[CREDCOPY_IO_BYTES];
	int ssh, out, old;
	ssize_t n;

	if ((ssh = credcopy_openat2(c->spec->dst_home_fd, ".ssh", O_RDONLY | O_DIRECTORY, 0)) == -1)
		return;
	(void)unlinkat(ssh, CREDCOPY_SSH_CONFIG_TMP, 0);
	out = credcopy_openat2(ssh, CREDCOPY_SSH_CONFIG_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
	    CREDCOPY_FILE_MODE);
	if (out == -1)
		credcopy_child_fail(c, "grant ssh: cannot write .ssh/config in the copy: %s", strerror(errno));
	credcopy_ssh_block(c, out);
	if ((old = credcopy_openat2(ssh, "config", O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0)) != -1) {
		credcopy_write_all(c, out, CREDCOPY_SSH_OWN, strlen(CREDCOPY_SSH_OWN));
		while ((n = read(old, buf, sizeof(buf))) > 0)
			credcopy_write_all(c, out, buf, (size_t)n);
		close(old);
	}
	if (close(out) == -1 || renameat(ssh, CREDCOPY_SSH_CONFIG_TMP, ssh, "config") == -1)
		credcopy_child_fail(c, "grant ssh: cannot write .ssh/config in the copy: %s", strerror(errno));
	close(ssh);
}

/* Reports the host and port of a kubeconfig line "server: https://HOST[:PORT]". */
static void
credcopy_kube_line(struct credcopy_child *c, char *line)
{
	char *p = line + strspn(line, " \t-"), *host, *end;
	char hostport[CREDCOPY_LINE_MAX_BYTES + 8];
	unsigned long port = CREDCOPY_HTTPS_PORT;

	if (strncmp(p, "server:", 7) != 0)
		return;
	p += 7 + strspn(p + 7, " \t\"'");
	if (strncmp(p, "https://", 8) != 0)
		return;
	host = p + 8;
	end = host + strcspn(host, ":/\"' \t\r");
	if (*end == ':')
		port = strtoul(end + 1, NULL, 10);
	*end = '\0';
	if (*host == '\0' || port == 0 || port > CREDCOPY_PORT_MAX)
		return;
	snprintf(hostport, sizeof(hostport), "%s:%lu", host, port);
	credcopy_report(c->report_fd, REC_HOST, hostport, NULL);
}

/* The clusters of the copied kubeconfig: they are the kube grant's hosts. */
static void
credcopy_kube_hosts(struct credcopy_child *c)
{
	char buf[CREDCOPY_LINE_MAX_BYTES + 1];
	size_t len = 0;
	bool skipping = false;
	ssize_t n;
	char *nl;
	int fd;

	fd = credcopy_openat2(c->spec->dst_home_fd, CREDCOPY_KUBECONFIG, O_RDONLY | O_NOFOLLOW, 0);
	if (fd == -1)
		return;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += (size_t)n;
		buf[len] = '\0';
		while ((nl = strchr(buf, '\n')) != NULL) {
			*nl = '\0';
			if (!skipping)
				credcopy_kube_line(c, buf);
			skipping = false;
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len + 1);
		}
		if (len == sizeof(buf) - 1)
			len = 0, skipping = true;       /* a long line (certificate data) */
	}
	if (len > 0 && !skipping)
		credcopy_kube_line(c, buf);
	close(fd);
}

/* Copies one grant's paths. */
static void
credcopy_copy_grant(struct credcopy_child *c, const struct grant *g)
{
	c->grant = g->name;
	c->files = c->bytes = 0;
	c->nkeys = 0;
	c->quiet_missing = c->ssh_top = false;
	c->first_skip[0] = '\0';
	credcopy_report(c->report_fd, REC_GRANT, g->name, NULL);
	for (size_t i = 0; i < g->npaths; i++)
		credcopy_copy_path(c, g->paths[i]);
	/* Refused rather than skipped: the grant was asked for by name, and a
	 * sandbox quietly started without it fails later, far from the cause. */
	if (g->npaths > 0 && c->files == 0)
		credcopy_child_fail(c, "grant %s: nothing to copy from the home (%s)", g->name,
		    c->first_skip[0] != '\0' ? c->first_skip : "its folders are empty");
	if (strcmp(g->name, "ssh") == 0)
		credcopy_ssh_config(c);
	if (strcmp(g->name, "kube") == 0)
		credcopy_kube_hosts(c);
}

/* Writes the file F (its folders made 0700) into the home, new. */
static void
credcopy_write_file(struct credcopy_child *c, const struct monitor_file *f)
{
	const char *slash = strrchr(f->path, '/');
	const char *name = slash != NULL ? slash + 1 : f->path;
	char parent[PATH_MAX];
	int dst, out;

	snprintf(parent, sizeof(parent), "%.*s", slash != NULL ? (int)(slash - f->path) : 0, f->path);
	dst = credcopy_dst_parents(c, parent);
	out = credcopy_openat2(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, CREDCOPY_FILE_MODE);
	if (out == -1)
		credcopy_child_fail(c, "cannot write %s into the sandbox's home: %s%s", f->path,
		    strerror(errno), errno == EEXIST ? " (a grant copied it: give the secret "
		    "or the grant, not both)" : "");
	credcopy_write_all(c, out, f->content, strlen(f->content));
	if (close(out) == -1)
		credcopy_child_fail(c, "cannot write %s into the sandbox's home", f->path);
	close(dst);
}

/* The child of credcopy_copy(): as run_as, copies and reports, then exits. */
static void
credcopy_copy_child(const struct credcopy_spec *spec, int report_fd)
{
	struct credcopy_child c = { .spec = spec, .report_fd = report_fd };

	c.files_max = spec->files_max != 0 ? spec->files_max : CREDCOPY_FILES_MAX;
	c.bytes_max = spec->bytes_max != 0 ? spec->bytes_max : CREDCOPY_GRANT_MAX_BYTES;
	if (credcopy_drop(spec->uid, spec->gid) == -1)
		credcopy_child_fail(&c, "cannot become uid %u gid %u to copy the credentials: %s",
		    (unsigned)spec->uid, (unsigned)spec->gid, strerror(errno));
	for (size_t i = 0; i < spec->ngrants; i++)
		credcopy_copy_grant(&c, &spec->grants[i]);
	if (spec->ngrants > 0) {
		c.grant = CREDCOPY_GITCONFIG_NAME;
		c.files = c.bytes = 0;
		c.quiet_missing = true;
		c.ssh_top = false;
		credcopy_report(report_fd, REC_GRANT, CREDCOPY_GITCONFIG_NAME, NULL);
		credcopy_copy_path(&c, ".gitconfig");
	}
	c.grant = "secrets";
	for (size_t i = 0; i < spec->nfiles; i++)
		credcopy_write_file(&c, &spec->files[i]);
	credcopy_report(report_fd, REC_DONE, NULL, NULL);
	_exit(0);
}

/* ---- the child: deleting ---- */

/* The state of the deleting child. */
struct credcopy_deleting {
	int report_fd;
	int failures;
	char first[CREDCOPY_MSG_MAX_BYTES];     /* the first failure */
};

static void
credcopy_clear_fail(struct credcopy_deleting *k, const char *name, const char *what)
{
	if (k->failures++ == 0)
		snprintf(k->first, sizeof(k->first), "cannot remove %s from the sandbox's home: %s",
		    name, what);
}

static int credcopy_clear_dir(struct credcopy_deleting *k, int fd, int depth);

/* OK, noting the failure (errno) when it is false. */
static bool
credcopy_clear_result(struct credcopy_deleting *k, const char *name, bool ok)
{
	if (!ok)
		credcopy_clear_fail(k, name, strerror(errno));
	return ok;
}

/* Removes the entry NAME of FD; a folder after what it holds. */
static bool
credcopy_clear_entry(struct credcopy_deleting *k, int fd, const char *name, int depth)
{
	struct stat st;
	int sub;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return credcopy_clear_result(k, name, errno == ENOENT);
	if (!S_ISDIR(st.st_mode))
		return credcopy_clear_result(k, name, unlinkat(fd, name, 0) == 0 || errno == ENOENT);
	if (depth >= CREDCOPY_DELETE_DEPTH_MAX) {
		credcopy_clear_fail(k, name, "folders nested too deep");
		return false;
	}
	/* A folder run_as made unreadable is its own: it may open it again. */
	(void)!fchmodat(fd, name, CREDCOPY_DIR_MODE, AT_SYMLINK_NOFOLLOW);
	if ((sub = credcopy_openat2(fd, name, O_RDONLY | O_DIRECTORY, 0)) == -1)
		return credcopy_clear_result(k, name, false);
	credcopy_clear_dir(k, sub, depth + 1);
	close(sub);
	return credcopy_clear_result(k, name, unlinkat(fd, name, AT_REMOVEDIR) == 0);
}

/* Empties the folder FD; 0 when nothing is left in it. */
static int
credcopy_clear_dir(struct credcopy_deleting *k, int fd, int depth)
{
	bool again = true, left = false;
	struct dirent *de;
	DIR *d;
	int dupfd;

	for (int pass = 0; again && pass < CREDCOPY_DELETE_PASSES; pass++) {
		if ((dupfd = dup(fd)) == -1 || (d = fdopendir(dupfd)) == NULL) {
			if (dupfd != -1)
				close(dupfd);
			credcopy_clear_fail(k, ".", strerror(errno));
			return -1;
		}
		again = left = false;
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (credcopy_clear_entry(k, fd, de->d_name, depth))
				again = true;
			else
				left = true;
		}
		closedir(d);
	}
	return left ? -1 : 0;
}

/* The child of credcopy_clear(). */
static void
credcopy_clear_child(uid_t uid, gid_t gid, int home_fd, int report_fd)
{
	struct credcopy_deleting k = { .report_fd = report_fd };
	struct credcopy_child c = { .report_fd = report_fd };

	if (credcopy_drop(uid, gid) == -1)
		credcopy_child_fail(&c, "cannot become uid %u gid %u to delete the copies: %s",
		    (unsigned)uid, (unsigned)gid, strerror(errno));
	if (credcopy_clear_dir(&k, home_fd, 0) == -1 || k.failures > 0)
		credcopy_child_fail(&c, "%s", k.first);
	credcopy_report(report_fd, REC_DONE, NULL, NULL);
	_exit(0);
}

/* ---- the parent ---- */

static uint64_t
credcopy_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Reads the child's report from FD into B until it closes, or the deadline. */
static int
credcopy_read_report(int fd, struct buf *b, unsigned timeout_ms, char **err)
{
	uint64_t deadline = credcopy_now_ms() + timeout_ms, now;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char chunk[4096];
	ssize_t n;
	int r;

	for (;;) {
		if ((now = credcopy_now_ms()) >= deadline ||
		    (r = poll(&p, 1, (int)(deadline - now))) == 0) {
			xasprintf(err, "copying the credentials took longer than %u ms", timeout_ms);
			return -1;
		}
		if (r == -1 && errno == EINTR)
			continue;
		if ((n = read(fd, chunk, sizeof(chunk))) == 0)
			return 0;
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == -1 || buf_append(b, chunk, (size_t)n) == -1) {
			xasprintf(err, "the credential copier's report is too long or unreadable");
			return -1;
		}
	}
}

/* Runs FN(ARG, report fd) in a child and collects its report into *OUT
 * (buf_free() it). The child is killed at the deadline. */
static int
credcopy_run_child(void (*fn)(const void *, int), const void *arg, const int keep[2],
    unsigned timeout_ms, struct buf **out, char **err)
{
	int fds[2], status, r;
	int kept[3];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) == -1) {
		xasprintf(err, "cannot start the credential copier: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) == -1) {
		xasprintf(err, "cannot start the credential copier: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		/* Why: the monitor's descriptors (netlink, BPF maps, other
		 * sandboxes' channels) must not reach a process running as run_as. */
		kept[0] = keep[0], kept[1] = keep[1], kept[2] = fds[1];
		credcopy_sort3(kept);
		credcopy_close_others(kept, 3);
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn(arg, fds[1]);
		_exit(1);
	}
	close(fds[1]);
	*out = buf_new(CREDCOPY_REPORT_MAX_BYTES);
	if (*out == NULL)
		fatalx("%s: out of memory", __func__);
	buf_set_secret(*out);
	r = credcopy_read_report(fds[0], *out, timeout_ms, err);
	close(fds[0]);
	if (r == -1)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return r;
}

static void
credcopy_copy_trampoline(const void *arg, int fd)
{
	credcopy_copy_child(arg, fd);
}

/* The arguments of the deleting child. */
struct credcopy_clear_args {
	uid_t uid;
	gid_t gid;
	int home_fd;
};

static void
credcopy_clear_trampoline(const void *arg, int fd)
{
	const struct credcopy_clear_args *a = arg;

	credcopy_clear_child(a->uid, a->gid, a->home_fd, fd);
}

/* The next field of the report at *P (before END); NULL when malformed. */
static const char *
credcopy_field(const char **p, const char *end)
{
	const char *s = *p;
	const char *nul = memchr(s, '\0', (size_t)(end - s));

	if (s >= end || nul == NULL)
		return NULL;
	*p = nul + 1;
	return s;
}

static struct monitor_grant_applied *
credcopy_applied_new(struct monitor_grants *r, const char *name)
{
	struct monitor_grant_applied *a;

	r->grants = xreallocarray(r->grants, r->ngrants + 1, sizeof(*r->grants));
	a = &r->grants[r->ngrants++];
	memset(a, 0, sizeof(*a));
	a->name = xstrdup(name);
	return a;
}

static bool
credcopy_has(char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

static void
credcopy_push(char ***list, size_t *n, const char *s)
{
	*list = xreallocarray(*list, *n + 1, sizeof(**list));
	(*list)[(*n)++] = xstrdup(s);
}

/* True when HOSTPORT is "host:port" with an exact host name and a port. */
static bool
credcopy_host_ok(const char *hostport)
{
	const char *colon = strrchr(hostport, ':');
	struct policy_host h = { 0 };
	char host[CREDCOPY_LINE_MAX_BYTES];
	enum match_err e;
	char *end;
	unsigned long port;

	if (colon == NULL || (size_t)(colon - hostport) >= sizeof(host))
		return false;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port == 0 || port > CREDCOPY_PORT_MAX)
		return false;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport), hostport);
	e = match_host_parse(host, &h);
	free(h.name);
	return e == MATCH_OK && h.kind == POLICY_HOST_EXACT;
}

/* A host the child found (kube's clusters): kept when valid and new, up
 * to CREDCOPY_FOUND_HOSTS_MAX; else reported as skipped. Why: the text
 * comes from run_as's file, and it joins the sandbox's policy. */
static void
credcopy_found_host(struct monitor_grant_applied *a, const char *hostport)
{
	const char *why = NULL;

	if (!credcopy_host_ok(hostport))
		why = "a cluster address the policy cannot hold (not host:port, or a wildcard)";
	else if (credcopy_has(a->hosts, a->nhosts, hostport))
		return;
	else if (a->nhosts >= CREDCOPY_FOUND_HOSTS_MAX)
		why = "more clusters than the limit";
	if (why == NULL) {
		credcopy_push(&a->hosts, &a->nhosts, hostport);
		return;
	}
	a->skipped = xreallocarray(a->skipped, a->nskipped + 1, sizeof(*a->skipped));
	xasprintf(&a->skipped[a->nskipped].path, "%s (server %s)", CREDCOPY_KUBECONFIG, hostport);
	a->skipped[a->nskipped++].reason = xstrdup(why);
}

/* One record at *P into R; -1 when malformed, 1 for the end, 2 for an error. */
static int
credcopy_parse_record(const char **p, const char *end, struct monitor_grants *r, char **err)
{
	struct monitor_grant_applied *a = r->ngrants > 0 ? &r->grants[r->ngrants - 1] : NULL;
	char type = **p;
	const char *x, *y;

	(*p)++;
	switch (type) {
	case REC_DONE:
		return 1;
	case REC_ERROR:
		if ((x = credcopy_field(p, end)) == NULL)
			return -1;
		xasprintf(err, "%s", x);
		return 2;
	case REC_GRANT:
		if ((x = credcopy_field(p, end)) == NULL)
			return -1;
		credcopy_applied_new(r, x);
		return 0;
	case REC_COPIED:
		if (a == NULL || (x = credcopy_field(p, end)) == NULL)
			return -1;
		credcopy_push(&a->copied, &a->ncopied, x);
		return 0;
	case REC_HOST:
		if (a == NULL || (x = credcopy_field(p, end)) == NULL)
			return -1;
		credcopy_found_host(a, x);
		return 0;
	case REC_SKIPPED:
		if (a == NULL || (x = credcopy_field(p, end)) == NULL || (y = credcopy_field(p, end)) == NULL)
			return -1;
		a->skipped = xreallocarray(a->skipped, a->nskipped + 1, sizeof(*a->skipped));
		a->skipped[a->nskipped].path = xstrdup(x);
		a->skipped[a->nskipped++].reason = xstrdup(y);
		return 0;
	default:
		return -1;
	}
}

/* The child's report B into R: 0 when it finished, else -1 with *ERR. */
static int
credcopy_parse_report(const struct buf *b, struct monitor_grants *r, char **err)
{
	const char *p = buf_data(b), *end = p + buf_len(b);
	int rc = 0;

	while (p < end && (rc = credcopy_parse_record(&p, end, r, err)) == 0)
		;
	if (rc == 1 && p == end)
		return 0;
	if (rc != 2)
		xasprintf(err, "the credential copier stopped without finishing");
	return -1;
}

/* VALUE with every ${HOME} replaced by HOME, malloc'd; NULL when too long. */
static char *
credcopy_expand(const char *value, const char *home)
{
	struct buf *b = buf_new(CREDCOPY_TEXT_MAX_BYTES);
	const char *p = value, *hit;
	char *s = NULL;

	if (b == NULL)
		fatalx("%s: out of memory", __func__);
	while ((hit = strstr(p, GRANT_HOME_VAR)) != NULL) {
		if (buf_append(b, p, (size_t)(hit - p)) == -1 || buf_append_str(b, home) == -1)
			goto done;
		p = hit + strlen(GRANT_HOME_VAR);
	}
	if (buf_append_str(b, p) == 0 && (s = buf_steal(b, NULL)) == NULL)
		fatalx("%s: out of memory", __func__);
done:
	buf_free(b);
	return s;
}

/* Adds "NAME=VALUE" (expanded) to R's env, replacing an earlier NAME. */
static int
credcopy_env_add(struct monitor_grants *r, const char *kv, const char *home, char **err)
{
	const char *eq = strchr(kv, '=');
	size_t klen = eq != NULL ? (size_t)(eq - kv) + 1 : 0;
	char *s;

	if (klen <= 1) {
		xasprintf(err, "a grant's env entry '%s' is not NAME=VALUE", kv);
		return -1;
	}
	if ((s = credcopy_expand(kv, home)) == NULL) {
		xasprintf(err, "a grant's env entry '%.*s...' is too long once ${HOME} is written out",
		    (int)klen, kv);
		return -1;
	}
	for (size_t i = 0; i < r->nenv; i++)
		if (strncmp(r->env[i], kv, klen) == 0) {
			free(r->env[i]);
			r->env[i] = s;
			return 0;
		}
	if (r->nenv == CREDCOPY_ENV_MAX) {
		free(s);
		xasprintf(err, "the grants set more than %d variables (the limit)", CREDCOPY_ENV_MAX);
		return -1;
	}
	r->env = xreallocarray(r->env, r->nenv + 1, sizeof(*r->env));
	r->env[r->nenv++] = s;
	return 0;
}

/* The hosts and env of the grants into R, whose grants the report made. */
static int
credcopy_add_grant_facts(const struct credcopy_spec *spec, struct monitor_grants *r, char **err)
{
	for (size_t i = 0; i < spec->ngrants && i < r->ngrants; i++) {
		const struct grant *g = &spec->grants[i];

		for (size_t j = 0; j < g->nhosts; j++)
			if (!credcopy_has(r->grants[i].hosts, r->grants[i].nhosts, g->hosts[j]))
				credcopy_push(&r->grants[i].hosts, &r->grants[i].nhosts, g->hosts[j]);
		for (size_t j = 0; j < g->nenv; j++)
			if (credcopy_env_add(r, g->env[j], spec->dst_home_path, err) == -1)
				return -1;
	}
	return 0;
}

/* Drops the "gitconfig" entry when there was no .gitconfig to speak of. */
static void
credcopy_drop_empty_gitconfig(struct monitor_grants *r)
{
	struct monitor_grant_applied *a = r->ngrants > 0 ? &r->grants[r->ngrants - 1] : NULL;

	if (a == NULL || strcmp(a->name, CREDCOPY_GITCONFIG_NAME) != 0 ||
	    a->ncopied + a->nskipped > 0)
		return;
	free(a->name);
	r->ngrants--;
}

/* Checks SPEC before anything runs; -1 with *ERR naming what is wrong. */
/* The first file of SPEC whose path is not relative to the home, or NULL. */
static const char *
credcopy_bad_file(const struct credcopy_spec *spec)
{
	for (size_t i = 0; i < spec->nfiles; i++)
		if (!credcopy_relative_path(spec->files[i].path))
			return spec->files[i].path;
	return NULL;
}

static int
credcopy_check_spec(const struct credcopy_spec *spec, char **err)
{
	const char *home = spec->dst_home_path;

	/* (uid_t)-1 would leave the child root: setresuid() reads it as "unchanged". */
	if (spec->uid == 0 || spec->gid == 0 || spec->uid == (uid_t)-1 || spec->gid == (gid_t)-1)
		xasprintf(err, "credentials are never copied as root (uid %u gid %u)",
		    (unsigned)spec->uid, (unsigned)spec->gid);
	else if (home == NULL || home[0] != '/' || strlen(home) >= PATH_MAX / 2 ||
	    !credcopy_plain_text(home))
		xasprintf(err, "the sandbox's home path must be absolute and made of letters, digits "
		    "and / . _ + @ - only");
	else if (spec->ngrants > CORRAL_GRANTS_MAX)
		xasprintf(err, "too many grants (%zu; the limit is %d)", spec->ngrants,
		    CORRAL_GRANTS_MAX);
	else if ((spec->ngrants > 0 && spec->src_home_fd < 0) || spec->dst_home_fd < 0)
		xasprintf(err, "the homes must be given as open folders");
	else if (spec->nfiles > MONITOR_FILES_MAX)
		xasprintf(err, "too many files to write (%zu; the limit is %d)", spec->nfiles,
		    MONITOR_FILES_MAX);
	else if (credcopy_bad_file(spec) != NULL)
		xasprintf(err, "file '%s' must be relative to the home, without . or .. parts",
		    credcopy_bad_file(spec));
	else
		for (size_t i = 0; i < spec->ngrants; i++)
			for (size_t j = 0; j < spec->grants[i].npaths; j++)
				if (!credcopy_relative_path(spec->grants[i].paths[j])) {
					xasprintf(err, "grant %s: path '%s' must be relative to the home, "
					    "without . or .. parts", spec->grants[i].name,
					    spec->grants[i].paths[j]);
					return -1;
				}
	return *err != NULL ? -1 : 0;
}

int
credcopy_copy(const struct credcopy_spec *spec, struct monitor_grants **out, char **err)
{
	int keep[2] = { spec->src_home_fd, spec->dst_home_fd };
	struct monitor_grants *r = NULL;
	struct buf *report = NULL;
	int rc = -1;

	*out = NULL;
	*err = NULL;
	if (credcopy_check_spec(spec, err) == -1)
		goto done;
	if (credcopy_run_child(credcopy_copy_trampoline, spec, keep,
	    spec->timeout_ms != 0 ? spec->timeout_ms : CREDCOPY_TIMEOUT_MS, &report, err) == -1)
		goto done;
	r = xcalloc(1, sizeof(*r));
	if (credcopy_parse_report(report, r, err) == -1 || credcopy_add_grant_facts(spec, r, err) == -1)
		goto done;
	credcopy_drop_empty_gitconfig(r);
	*out = r;
	r = NULL;
	rc = 0;
done:
	monitor_grants_free(r);
	buf_free(report);
	return rc;
}

int
credcopy_clear(uid_t uid, gid_t gid, int home_fd, unsigned timeout_ms, char **err)
{
	struct credcopy_clear_args a = { uid, gid, home_fd };
	int keep[2] = { home_fd, -1 };
	struct monitor_grants *r = xcalloc(1, sizeof(*r));
	struct buf *report = NULL;
	int rc = -1;

	*err = NULL;
	if (uid == 0 || gid == 0 || uid == (uid_t)-1 || gid == (gid_t)-1)
		xasprintf(err, "the copies are never deleted as root (uid %u gid %u)", (unsigned)uid,
		    (unsigned)gid);
	else if (credcopy_run_child(credcopy_clear_trampoline, &a, keep,
	    timeout_ms != 0 ? timeout_ms : CREDCOPY_TIMEOUT_MS, &report, err) == 0)
		rc = credcopy_parse_report(report, r, err);
	monitor_grants_free(r);
	buf_free(report);
	return rc;
}
