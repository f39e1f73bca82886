/* The sandbox's file system: a tmpfs root holding read-only system
 * folders, the roots and HOME from their detached trees, private /tmp,
 * /run, /dev and /proc; then pivot_root into it. Every mount point inside
 * a tree we did not make is reached by descriptor, one component at a
 * time, never through a symlink. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker/init/mounts.h"
#include "common/buf.h"
#include "common/sysdirs.h"

#define MOUNTS_OURS_MAX 8               /* file systems corral-init made */
#define MOUNTS_TREES_MAX (CORRAL_ROOTS_MAX + 1)      /* roots and HOME */
#define MOUNTS_RESOLV_MAX_BYTES 128
#define MOUNTS_TTY_GID "gid=5"          /* Debian's tty group owns ptys */
#define MOUNTS_SIZE_OPTION_MAX_BYTES 32 /* "size=4294967295m" */
#define MOUNTS_TMP_INODES "nr_inodes=262144"    /* files /tmp holds at most */
#define MOUNTS_SHM_INODES "nr_inodes=65536"     /* ... and /dev/shm */
#define MOUNTS_MASK_DIR "d"             /* the masks' stand-ins, in their tmpfs */
#define MOUNTS_MASK_FILE "f"
/* How far below a root the credential folders are looked for, and how many
 * folders of one root are read at most: a root may be a whole home, or a
 * backup of one, with a keyring a few levels down. */
#define MOUNTS_MASK_DEPTH 4
#define MOUNTS_MASK_SCAN_MAX 4096

/* Read-only, and no setuid or device file of the host works through it. */
#define MOUNTS_RO_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

const char *const mounts_dev_nodes[] = {
	"null", "zero", "full", "random", "urandom", "tty", NULL
};

/* The /proc entries that would let a process change the host's kernel. */
static const char *const mounts_proc_ro[] = {
	"proc/sys", "proc/sysrq-trigger", "proc/irq", "proc/bus", NULL
};

/* What the host's views show of the host that a sandbox must not read,
 * each covered with an empty read-only stand-in (missing ones skipped). */
static const char *const mounts_masked[] = {
	"proc/cmdline", "proc/config.gz", "proc/kallsyms", "proc/kcore", "proc/keys",
	"proc/key-users", "proc/timer_list", "proc/sched_debug", "proc/modules", "proc/iomem",
	"proc/ioports", "proc/vmallocinfo", "proc/slabinfo", "proc/pagetypeinfo",
	"proc/kpagecount", "proc/kpageflags", "proc/kpagecgroup", "proc/latency_stats",
	"proc/acpi", "proc/scsi", "proc/driver",
	"etc/corral", "etc/netns", "etc/shadow", "etc/gshadow", "etc/shadow-", "etc/gshadow-",
	"etc/sudoers", "etc/sudoers.d", "etc/ssl/private", "etc/security/opasswd",
	"etc/ssh/ssh_host_rsa_key", "etc/ssh/ssh_host_ecdsa_key", "etc/ssh/ssh_host_ed25519_key",
	"etc/ssh/ssh_host_dsa_key",
	NULL
};

/* Inside every root, at its top and in its folders down to
 * MOUNTS_MASK_DEPTH: where a user's keys, tokens and agents live. Granted
 * credentials are copies in HOME, so masking these never hides a grant. */
static const char *const mounts_masked_in_roots[] = {
	".gnupg", ".ssh", ".aws", ".docker", ".kube", ".password-store",
	".local/share/keyrings", ".config/gh", NULL
};
/* Folders not searched below: large, and never a home's. */
static const char *const mounts_mask_skipped[] = { ".git", "node_modules", NULL };

static const char *const mounts_dev_links[][2] = {
	{ "ptmx", "pts/ptmx" },
	{ "fd", "/proc/self/fd" },
	{ "stdin", "/proc/self/fd/0" },
	{ "stdout", "/proc/self/fd/1" },
	{ "stderr", "/proc/self/fd/2" },
};

struct mounts_ctx {
	int root;                       /* the new root, a tmpfs */
	dev_t ours[MOUNTS_OURS_MAX];    /* where mount points may be created */
	size_t n_ours;
	char *err;
	size_t errlen;
};

/* One tree of the spec to attach: a root or HOME. */
struct mounts_tree {
	const char *path;
	int fd;
	bool ro;
};

/* Writes the reason, with strerror(errno), and returns -1. */
static int __attribute__((format(printf, 2, 3)))
mounts_fail(struct mounts_ctx *c, const char *fmt, ...)
{
	int saved = errno;
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	n = strlen(c->err);
	snprintf(c->err + n, c->errlen - n, ": %s", strerror(saved));
	errno = saved;
	return -1;
}

/* True when FD lies on a file system corral-init made itself. */
static bool
mounts_is_ours(const struct mounts_ctx *c, int fd)
{
	struct stat st;
	size_t i;

	if (fstat(fd, &st) == -1)
		return false;
	for (i = 0; i < c->n_ours; i++) {
		if (c->ours[i] == st.st_dev)
			return true;
	}
	return false;
}

/* The folder REL beneath the new root (O_PATH), made where missing, but
 * only inside corral-init's own file systems: never a folder in the
 * user's trees or the host's. No component may be a symlink, ".", "..". */
static int
mounts_mkdirs(struct mounts_ctx *c, const char *rel)
{
	char buf[PATH_MAX], *tok, *save = NULL;
	int cur, next;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return mounts_fail(c, "/%s", rel);
	}
	cur = fcntl(c->root, F_DUPFD_CLOEXEC, 0);
	for (tok = strtok_r(buf, "/", &save); cur != -1 && tok != NULL;
	    tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0 || strcmp(tok, "..") == 0) {
			close(cur);
			errno = EINVAL;
			return mounts_fail(c, "/%s has a . or .. component", rel);
		}
		next = openat(cur, tok, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next == -1 && errno == ENOENT && mounts_is_ours(c, cur) &&
		    mkdirat(cur, tok, 0755) == 0)
			next = openat(cur, tok, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	if (cur == -1)
		return mounts_fail(c, "mount point /%s", rel);
	return cur;
}

/* Makes the detached tree TREE private with ATTRS (recursively) and mounts
 * it on the mount point MP. Closes neither. */
static int
mounts_attach_at(struct mounts_ctx *c, int tree, int mp, unsigned long long attrs,
    const char *what)
{
	/* Private: nothing mounted inside later travels back to the host's
	 * peer group the tree was cloned from. */
	struct mount_attr a = { .attr_set = attrs, .propagation = MS_PRIVATE };

	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) == -1)
		return mounts_fail(c, "setting the attributes of %s", what);
	if (move_mount(tree, "", mp, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == -1)
		return mounts_fail(c, "mounting %s", what);
	return 0;
}

/* mounts_attach_at on the folder REL, made if needed. Closes TREE. */
static int
mounts_attach(struct mounts_ctx *c, int tree, const char *rel, unsigned long long attrs)
{
	int mp, rc = -1;

	mp = mounts_mkdirs(c, rel);
	if (mp != -1)
		rc = mounts_attach_at(c, tree, mp, attrs, rel);
	if (mp != -1)
		close(mp);
	close(tree);
	return rc;
}

/* A new file system of TYPE with OPTS ("key=value" or a flag) as a
 * detached mount with ATTRS; -1 on failure. */
static int
mounts_new_fs(struct mounts_ctx *c, const char *type, const char *const *opts,
    unsigned int attrs)
{
	char key[64];
	const char *eq;
	int fs, mnt = -1;

	fs = fsopen(type, FSOPEN_CLOEXEC);
	if (fs == -1)
		return mounts_fail(c, "fsopen %s", type);
	for (; *opts != NULL; opts++) {
		eq = strchr(*opts, '=');
		snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - *opts) : (int)strlen(*opts), *opts);
		if (fsconfig(fs, eq ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key,
		    eq ? eq + 1 : NULL, 0) == -1) {
			mounts_fail(c, "%s option %s", type, *opts);
			goto out;
		}
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1) {
		mounts_fail(c, "creating %s", type);
		goto out;
	}
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	if (mnt == -1)
		mounts_fail(c, "fsmount %s", type);
out:
	close(fs);
	return mnt;
}

/* Mounts a new TYPE at REL; a tmpfs becomes one of ours. */
static int
mounts_fs(struct mounts_ctx *c, const char *type, const char *rel,
    const char *const *opts, unsigned int attrs)
{
	struct stat st;
	int mnt;

	mnt = mounts_new_fs(c, type, opts, attrs);
	if (mnt == -1)
		return -1;
	if (strcmp(type, "tmpfs") == 0 && fstat(mnt, &st) == 0 &&
	    c->n_ours < MOUNTS_OURS_MAX)
		c->ours[c->n_ours++] = st.st_dev;
	return mounts_attach(c, mnt, rel, attrs);
}

/* The new root: a tmpfs over the staging folder of this namespace. */
static int
mounts_root(struct mounts_ctx *c)
{
	static const char *const opts[] = { "mode=0755", NULL };
	struct stat st;
	int mnt;

	/* On systemd hosts / is shared: without this every mount below would
	 * appear on the host. Slave: nothing goes back, ever. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == -1)
		return mounts_fail(c, "making / a slave");
	mnt = mounts_new_fs(c, "tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt == -1)
		return -1;
	if (move_mount(mnt, "", AT_FDCWD, MOUNTS_STAGING_DIR, MOVE_MOUNT_F_EMPTY_PATH) == -1 ||
	    fstat(mnt, &st) == -1) {
		close(mnt);
		return mounts_fail(c, "mounting the new root");
	}
	c->root = mnt;
	c->ours[c->n_ours++] = st.st_dev;
	return 0;
}

/* One host system folder: bound read-only, or copied as a symlink. */
static int
mounts_system_dir(struct mounts_ctx *c, const char *dir)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;
	int tree;

	if (lstat(dir, &st) == -1)
		return errno == ENOENT ? 0 : mounts_fail(c, "%s", dir);
	if (S_ISLNK(st.st_mode)) {
		n = readlink(dir, target, sizeof(target) - 1);
		if (n == -1)
			return mounts_fail(c, "reading the link %s", dir);
		target[n] = '\0';
		if (symlinkat(target, c->root, dir + 1) == -1)
			return mounts_fail(c, "copying the link %s", dir);
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	tree = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree == -1)
		return mounts_fail(c, "cloning %s", dir);
	/* AT_RECURSIVE in mounts_attach_at: a submount of /usr is read-only too. */
	return mounts_attach(c, tree, dir + 1, MOUNTS_RO_ATTRS);
}

static int
mounts_tree_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mounts_tree *)a)->path,
	    ((const struct mounts_tree *)b)->path);
}

/* The roots and HOME, parents before what they hold, so that a nested
 * root lands on top of its parent and never under it. */
static int
mounts_trees(struct mounts_ctx *c, struct initproto_spec *s)
{
	struct mounts_tree t[MOUNTS_TREES_MAX];
	size_t i, n = 0;
	int rc = 0;

	for (i = 0; i < s->n_roots; i++) {
		t[n++] = (struct mounts_tree){ s->root_path[i], s->root_fd[i], s->root_ro[i] };
		s->root_fd[i] = -1;
	}
	t[n++] = (struct mounts_tree){ s->home, s->home_fd, false };
	s->home_fd = -1;
	qsort(t, n, sizeof(t[0]), mounts_tree_cmp);
	for (i = 0; i < n; i++) {
		if (rc == 0 && (t[i].path[0] != '/' || t[i].path[1] == '\0')) {
			errno = EINVAL;
			rc = mounts_fail(c, "root %s is not an absolute path below /", t[i].path);
		}
		if (rc == 0) {
			rc = mounts_attach(c, t[i].fd, t[i].path + 1,
			    (t[i].ro ? MOUNT_ATTR_RDONLY : 0) | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
		} else {
			close(t[i].fd);
		}
	}
	return rc;
}

/* Joins the symlink TARGET found in folder DIR into one absolute path
 * without "." or ".." in OUT. */
static int
mounts_join_link(const char *dir, const char *target, char *out, size_t outlen)
{
	char buf[PATH_MAX * 2], *tok, *save = NULL, *slash;
	size_t n = 0;

	if (snprintf(buf, sizeof(buf), "%s/%s", target[0] == '/' ? "" : dir, target) >=
	    (int)sizeof(buf))
		return -1;
	out[0] = '\0';
	for (tok = strtok_r(buf, "/", &save); tok != NULL; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			slash = strrchr(out, '/');
			n = slash ? (size_t)(slash - out) : 0;
			out[n] = '\0';
			continue;
		}
		if (n + 1 + strlen(tok) + 1 > outlen)
			return -1;
		n += (size_t)sprintf(out + n, "/%s", tok);
	}
	return 0;
}

/* Writes TEXT into a new file at REL (folders made in our file systems);
 * returns it open, or -1. */
static int
mounts_write_file(struct mounts_ctx *c, const char *rel, const char *text)
{
	char dir[PATH_MAX];
	const char *base = strrchr(rel, '/');
	int dfd, fd;
	size_t len = strlen(text);

	snprintf(dir, sizeof(dir), "%.*s", base ? (int)(base - rel) : 0, rel);
	base = base ? base + 1 : rel;
	dfd = mounts_mkdirs(c, dir);
	if (dfd == -1)
		return -1;
	fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	close(dfd);
	if (fd == -1 || write(fd, text, len) != (ssize_t)len) {
		if (fd != -1)
			close(fd);
		return mounts_fail(c, "writing /%s", rel);
	}
	return fd;
}

/* Binds the file FD (one of ours), read-only, over the file MP (what
 * names it: PATH). */
static int
mounts_bind_file_at(struct mounts_ctx *c, int fd, int mp, const char *path)
{
	int tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH), rc = -1;

	if (tree == -1)
		mounts_fail(c, "binding %s", path);
	else
		rc = mounts_attach_at(c, tree, mp, MOUNTS_RO_ATTRS | MOUNT_ATTR_NOEXEC, path);
	if (tree != -1)
		close(tree);
	return rc;
}

/* The same over the file at PATH (absolute) in the new root, no link
 * followed. */
static int
mounts_bind_file(struct mounts_ctx *c, int fd, const char *path)
{
	int mp = openat(c->root, path + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC), rc;

	if (mp == -1)
		return mounts_fail(c, "binding %s", path);
	rc = mounts_bind_file_at(c, fd, mp, path);
	close(mp);
	return rc;
}

/* Whether REL (relative to the new root) lies in one of S's roots: a root
 * is mounted after the system's folders and hides what was made there. */
static bool
mounts_under_root(const struct initproto_spec *s, const char *rel)
{
	for (size_t i = 0; i < s->n_roots; i++)
		if (sysdirs_path_within(rel, s->root_path[i] + 1))
			return true;
	return false;
}

/* Where systems keep their trust bundle: Debian and Ubuntu (Arch's a link
 * to another), Fedora and RHEL, Alpine. */
static const char *const mounts_bundle_paths[] = { "/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem", NULL };

/* The system's trust bundle in the new root, links followed inside it
 * only; -1 when no usual path holds a file. *PATH: which. */
static int
mounts_open_bundle(struct mounts_ctx *c, const char **path)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC,
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	struct stat st;
	int fd;

	for (const char *const *p = mounts_bundle_paths; *p != NULL; p++) {
		fd = (int)syscall(SYS_openat2, c->root, *p + 1, &how, sizeof(how));
		if (fd == -1)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			*path = *p;
			return fd;
		}
		close(fd);
	}
	return -1;
}

/* Appends what FD holds to TEXT; -1 on a read error or past its maximum. */
static int
mounts_read_all(int fd, struct buf *text)
{
	char chunk[16384];
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (buf_append(text, chunk, (size_t)n) == -1)
			return -1;
	return n == 0 ? 0 : -1;
}

/* The trust bundle inside: the system's (the host's, shown read-only),
 * written before the spec comes, and the sandbox CA's certificate, added
 * with it. */
struct mounts_bundle {
	int sys;                        /* the system's bundle, or -1 */
	const char *sys_path;
	int ours;                       /* ours, open for writing, or -1 */
	size_t len;
};

/* Writes the system's bundle into ours, at INITPROTO_CA_BUNDLE_PATH. */
static int
mounts_bundle_begin(struct mounts_ctx *c, struct mounts_bundle *b)
{
	struct buf *text;
	int rc = -1;

	b->sys = b->ours = -1;
	if ((text = buf_new(MOUNTS_BUNDLE_MAX_BYTES)) == NULL)
		return mounts_fail(c, "the trust bundle: out of memory");
	b->sys = mounts_open_bundle(c, &b->sys_path);
	if (b->sys != -1 && mounts_read_all(b->sys, text) == -1)
		mounts_fail(c, "reading %s", b->sys_path);
	else if ((buf_len(text) > 0 && buf_append_str(text, "\n") == -1) ||
	    buf_append(text, "", 1) == -1)
		mounts_fail(c, "the trust bundle is over %d bytes", MOUNTS_BUNDLE_MAX_BYTES);
	else if ((b->ours = mounts_write_file(c, &INITPROTO_CA_BUNDLE_PATH[1], buf_data(text))) != -1)
		rc = 0;
	b->len = buf_len(text) > 0 ? buf_len(text) - 1 : 0;
	buf_free(text);
	return rc;
}

/* Adds the sandbox CA's certificate PEM to ours and binds it over the
 * system's: tools that read either, or the variables naming the first,
 * trust the endpoints the proxy terminates, and every other host as
 * before. A system with no bundle at a usual path gets the CA's alone
 * there (its tools verified nothing before either). No PEM: no bundle. */
static int
mounts_bundle_finish(struct mounts_ctx *c, struct mounts_bundle *b, const char *pem,
    const struct initproto_spec *s)
{
	size_t len = strlen(pem);
	int dir;

	if (pem[0] == '\0') {
		if ((dir = mounts_mkdirs(c, "run/corral")) == -1)
			return -1;
		if (unlinkat(dir, strrchr(INITPROTO_CA_BUNDLE_PATH, '/') + 1, 0) == -1) {
			close(dir);
			return mounts_fail(c, "removing %s", INITPROTO_CA_BUNDLE_PATH);
		}
		close(dir);
		return 0;
	}
	if (b->len + len >= MOUNTS_BUNDLE_MAX_BYTES) {
		errno = EFBIG;
		return mounts_fail(c, "the trust bundle");
	}
	if (write(b->ours, pem, len) != (ssize_t)len)
		return mounts_fail(c, "writing %s", INITPROTO_CA_BUNDLE_PATH);
	if (b->sys == -1)
		return 0;
	/* A root over the bundle's folder (the host's own, shown at its
	 * path) hides the file read before: bind over the one seen now. */
	if (mounts_under_root(s, b->sys_path + 1)) {
		close(b->sys);
		if ((b->sys = mounts_open_bundle(c, &b->sys_path)) == -1)
			return 0;
	}
	return mounts_bind_file_at(c, b->ours, b->sys, b->sys_path);
}

static void
mounts_bundle_close(struct mounts_bundle *b)
{
	if (b->ours != -1)
		close(b->ours);
	if (b->sys != -1)
		close(b->sys);
	b->ours = b->sys = -1;
}

/* A resolv.conf naming only the gateway: over /etc/resolv.conf, or, when
 * that is a symlink into /run, as the file it names in our /run. */
static int
mounts_resolv(struct mounts_ctx *c, const char *gateway)
{
	char text[MOUNTS_RESOLV_MAX_BYTES], target[PATH_MAX], abs[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, rc;

	/* No search domains: a short name must not leak the host's domain. */
	snprintf(text, sizeof(text), "nameserver %s\n", gateway);
	if (fstatat(c->root, "etc/resolv.conf", &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : mounts_fail(c, "/etc/resolv.conf");
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(c->root, "etc/resolv.conf", target, sizeof(target) - 1);
		if (n == -1)
			return mounts_fail(c, "reading the link /etc/resolv.conf");
		target[n] = '\0';
		if (mounts_join_link("/etc", target, abs, sizeof(abs)) == -1 ||
		    strncmp(abs, "/run/", 5) != 0) {
			errno = EXDEV;
			return mounts_fail(c, "/etc/resolv.conf links to %s, outside /run", target);
		}
		fd = mounts_write_file(c, abs + 1, text);
		if (fd != -1)
			close(fd);
		return fd == -1 ? -1 : 0;
	}
	fd = mounts_write_file(c, &MOUNTS_RESOLV_PATH[1], text);  /* without its leading / */
	if (fd == -1)
		return -1;
	rc = mounts_bind_file(c, fd, "/etc/resolv.conf");
	close(fd);
	return rc;
}

/* Binds the host's /dev/NAME onto an empty file of the new /dev (DEV). */
static int
mounts_dev_node(struct mounts_ctx *c, int dev, const char *name)
{
	char host[PATH_MAX];
	int fd, tree = -1, rc = -1;

	snprintf(host, sizeof(host), "/dev/%s", name);
	fd = openat(dev, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd == -1)
		return mounts_fail(c, "creating /dev/%s", name);
	close(fd);
	fd = openat(dev, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	tree = open_tree(AT_FDCWD, host, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fd == -1 || tree == -1)
		mounts_fail(c, "binding %s", host);
	else
		rc = mounts_attach_at(c, tree, fd, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, host);
	if (fd != -1)
		close(fd);
	if (tree != -1)
		close(tree);
	return rc;
}

/* /dev: the host's harmless nodes, a devpts of our own, links; /dev/shm
 * comes with the spec (mounts_shm). */
static int
mounts_dev(struct mounts_ctx *c)
{
	static const char *const dev_opts[] = { "mode=0755", "size=64k", NULL };
	/* newinstance: never the host's ptys; ptmxmode: anyone inside opens it. */
	static const char *const pts_opts[] = { "newinstance", "ptmxmode=0666",
		"mode=0620", MOUNTS_TTY_GID, NULL };
	size_t i;
	int dev, rc = 0;

	if (mounts_fs(c, "tmpfs", "dev", dev_opts,
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC) == -1)
		return -1;
	dev = mounts_mkdirs(c, "dev");
	if (dev == -1)
		return -1;
	for (i = 0; rc == 0 && mounts_dev_nodes[i] != NULL; i++)
		rc = mounts_dev_node(c, dev, mounts_dev_nodes[i]);
	for (i = 0; rc == 0 && i < sizeof(mounts_dev_links) / sizeof(mounts_dev_links[0]); i++) {
		if (symlinkat(mounts_dev_links[i][1], dev, mounts_dev_links[i][0]) == -1)
			rc = mounts_fail(c, "linking /dev/%s", mounts_dev_links[i][0]);
	}
	close(dev);
	if (rc == 0)
		rc = mounts_fs(c, "devpts", "dev/pts", pts_opts,
		    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	return rc;
}

/* /dev/shm, SIZE ("size=...") as /tmp. */
static int
mounts_shm(struct mounts_ctx *c, const char *size)
{
	const char *const shm_opts[] = { "mode=1777", size, MOUNTS_SHM_INODES, NULL };

	return mounts_fs(c, "tmpfs", "dev/shm", shm_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

/* vm.memfd_noexec 2 in the sandbox's pid namespace (it is that
 * namespace's, and can only be raised): every memfd is made sealed
 * non-executable, so none can be run through /proc/self/fd. The workload
 * filter refuses the rest when this kernel has no such knob. */
static void
mounts_memfd_noexec(struct mounts_ctx *c)
{
	int fd = openat(c->root, "proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);

	if (fd == -1)
		return;
	if (write(fd, "2\n", 2) != 2) {
		/* Left as it was: the workload filter refuses plain memfds then. */
	}
	close(fd);
}

/* A /proc of the sandbox's pid namespace, its kernel knobs read-only. */
static int
mounts_proc(struct mounts_ctx *c)
{
	static const char *const opts[] = { NULL };
	const char *const *p;
	int tree, mp, rc = 0;

	if (mounts_fs(c, "proc", "proc", opts,
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) == -1)
		return -1;
	mounts_memfd_noexec(c);
	for (p = mounts_proc_ro; rc == 0 && *p != NULL; p++) {
		tree = open_tree(c->root, *p, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
		    AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
		if (tree == -1) {
			if (errno != ENOENT)
				rc = mounts_fail(c, "cloning /%s", *p);
			continue;
		}
		mp = openat(c->root, *p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (mp == -1)
			rc = mounts_fail(c, "/%s", *p);
		else
			rc = mounts_attach_at(c, tree, mp, MOUNTS_RO_ATTRS | MOUNT_ATTR_NOEXEC, *p);
		if (mp != -1)
			close(mp);
		close(tree);
	}
	return rc;
}

/* Empty stand-ins for what a sandbox must not read: a tmpfs holding an
 * empty folder and an empty file, cloned over each. */
struct mounts_masker {
	int fs;                         /* the tmpfs (detached) */
	size_t n;                       /* masks made */
};

static int
mounts_masker_open(struct mounts_ctx *c, struct mounts_masker *m)
{
	static const char *const opts[] = { "mode=0555", "size=4k", NULL };
	int fd;

	m->n = 0;
	/* Writable while the stand-ins are made; every clone is read-only. */
	if ((m->fs = mounts_new_fs(c, "tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	    MOUNT_ATTR_NOEXEC)) == -1)
		return -1;
	if (mkdirat(m->fs, MOUNTS_MASK_DIR, 0555) == -1 ||
	    (fd = openat(m->fs, MOUNTS_MASK_FILE, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
	    0444)) == -1)
		return mounts_fail(c, "making the masks' stand-ins");
	close(fd);
	return 0;
}

/* Covers REL beneath the new root, when it exists, with an empty read-only
 * stand-in of its kind (a folder, or a file for anything else: a link is
 * covered itself, never followed). No symlink is followed on the way. */
static int
mounts_mask(struct mounts_ctx *c, struct mounts_masker *m, const char *rel)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH };
	struct stat st;
	int mp, tree, rc;

	mp = (int)syscall(SYS_openat2, c->root, rel, &how, sizeof(how));
	if (mp == -1)
		return errno == ENOENT || errno == ELOOP || errno == ENOTDIR ? 0 :
		    mounts_fail(c, "/%s, to mask it", rel);
	if (fstat(mp, &st) == -1 || (tree = open_tree(m->fs, S_ISDIR(st.st_mode) ?
	    MOUNTS_MASK_DIR : MOUNTS_MASK_FILE, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) == -1) {
		close(mp);
		return mounts_fail(c, "masking /%s", rel);
	}
	rc = mounts_attach_at(c, tree, mp, MOUNTS_RO_ATTRS | MOUNT_ATTR_NOEXEC, rel);
	m->n += rc == 0;
	close(tree);
	close(mp);
	return rc;
}

/* True when NAME is one of LIST. */
static bool
mounts_name_in(const char *name, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(name, *list) == 0)
			return true;
	return false;
}

/* Masks what of mounts_masked_in_roots the entry NAME of the folder REL
 * is or holds; true when it is one (it is not searched further). */
static bool
mounts_mask_entry(struct mounts_ctx *c, struct mounts_masker *m, const char *rel,
    const char *name, int *rc)
{
	char path[PATH_MAX];
	size_t len = strlen(name);

	for (const char *const *n = mounts_masked_in_roots; *rc == 0 && *n != NULL; n++) {
		/* ".gnupg" is the entry; ".config/gh" is below the entry ".config". */
		if (strncmp(*n, name, len) != 0 || ((*n)[len] != '\0' && (*n)[len] != '/'))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", rel, *n) < (int)sizeof(path))
			*rc = mounts_mask(c, m, path);
		if ((*n)[len] == '\0')
			return true;
	}
	return false;
}

/* Masks the credential folders in the folder NAME of PARENT (REL from the
 * new root: a root, or DEPTH below one; REL is a PATH_MAX buffer, given
 * back as it came) and in its folders, reading at most *LEFT folders in
 * all. Below a root, no symlink is followed and no mount is crossed: a
 * mount there is another root's (searched as one) or corral-init's own. */
static int
mounts_mask_tree(struct mounts_ctx *c, struct mounts_masker *m, int parent, const char *name,
    char *rel, unsigned depth, unsigned *left)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH |
	    (depth > 0 ? RESOLVE_NO_XDEV : 0) };
	size_t len = strlen(rel);
	struct dirent *e;
	int fd, rc = 0;
	DIR *dir;

	if (*left == 0)
		return 0;
	(*left)--;
	if ((fd = (int)syscall(SYS_openat2, parent, name, &how, sizeof(how))) == -1)
		return 0;       /* gone, not a folder, or a mount: nothing to mask in it */
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while (rc == 0 && (e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.' && (e->d_name[1] == '\0' ||
		    (e->d_name[1] == '.' && e->d_name[2] == '\0')))
			continue;
		if (mounts_mask_entry(c, m, rel, e->d_name, &rc) || depth + 1 >= MOUNTS_MASK_DEPTH ||
		    mounts_name_in(e->d_name, mounts_mask_skipped) ||
		    (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) ||
		    len + 1 + strlen(e->d_name) >= PATH_MAX)
			continue;
		snprintf(rel + len, PATH_MAX - len, "/%s", e->d_name);
		rc = mounts_mask_tree(c, m, dirfd(dir), e->d_name, rel, depth + 1, left);
		rel[len] = '\0';
	}
	closedir(dir);
	return rc;
}

/* Masks what the host's /proc and /etc hold of the host: its boot line,
 * kernel symbols and memory maps; corrald's own files, password hashes,
 * host keys. */
static int
mounts_host_masks(struct mounts_ctx *c, struct mounts_masker *m)
{
	int rc = 0;

	for (const char *const *p = mounts_masked; rc == 0 && *p != NULL; p++)
		rc = mounts_mask(c, m, *p);
	return rc;
}

/* Whether REL exists and no mask is on it: the host replaced the file
 * (a new /etc/shadow renamed over the old, as useradd writes it) after
 * the mask was made, and the mount on the old one went with it. A warm
 * sandbox's tree is made long before its claim. */
static bool
mounts_mask_gone(struct mounts_ctx *c, struct mounts_masker *m, const char *rel)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH };
	struct stat st, fs;
	int fd = (int)syscall(SYS_openat2, c->root, rel, &how, sizeof(how));
	bool gone;

	if (fd == -1)
		return false;
	gone = fstat(fd, &st) == 0 && fstat(m->fs, &fs) == 0 && st.st_dev != fs.st_dev;
	close(fd);
	return gone;
}

/* The host's masks again where none is now: over the roots that hide
 * them (a root at /etc/ssl is mounted on top of the mask over
 * /etc/ssl/private, which was made before the roots came), and over a
 * file the host replaced since the mask was made. */
static int
mounts_host_masks_again(struct mounts_ctx *c, struct mounts_masker *m,
    const struct initproto_spec *s)
{
	int rc = 0;

	for (const char *const *p = mounts_masked; rc == 0 && *p != NULL; p++)
		if (mounts_under_root(s, *p) || mounts_mask_gone(c, m, *p))
			rc = mounts_mask(c, m, *p);
	return rc;
}

/* Masks, in every root, the folders that hold a user's credentials or
 * agents' sockets (a root may be a whole home). */
static int
mounts_root_masks(struct mounts_ctx *c, struct mounts_masker *m,
    const struct initproto_spec *s)
{
	char rel[PATH_MAX];
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < s->n_roots; i++) {
		unsigned left = MOUNTS_MASK_SCAN_MAX;

		snprintf(rel, sizeof(rel), "%s", s->root_path[i] + 1);
		rc = mounts_mask_tree(c, m, c->root, rel, rel, 0, &left);
	}
	return rc;
}

/* corral's runtime folder, read-only at its own path. */
static int
mounts_runtime(struct mounts_ctx *c, const char *runtime)
{
	int tree;

	if (runtime[0] == '\0')
		return 0;
	if (runtime[0] != '/' || runtime[1] == '\0') {
		errno = EINVAL;
		return mounts_fail(c, "runtime folder %s", runtime);
	}
	tree = open_tree(AT_FDCWD, runtime, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree == -1)
		return mounts_fail(c, "cloning %s", runtime);
	return mounts_attach(c, tree, runtime + 1, MOUNTS_RO_ATTRS);
}

/* Makes the new root read-only and the process's root, and drops the
 * host's tree from the namespace. */
static int
mounts_pivot(struct mounts_ctx *c)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };

	if (mount_setattr(c->root, "", AT_EMPTY_PATH, &ro, sizeof(ro)) == -1)
		return mounts_fail(c, "making the new root read-only");
	if (fchdir(c->root) == -1)
		return mounts_fail(c, "entering the new root");
	/* pivot_root(".", ".") stacks the old root on the new one; detaching
	 * "." then removes every host mount from this namespace. */
	if (syscall(SYS_pivot_root, ".", ".") == -1)
		return mounts_fail(c, "pivot_root");
	if (umount2(".", MNT_DETACH) == -1)
		return mounts_fail(c, "detaching the host's root");
	if (chdir("/") == -1)
		return mounts_fail(c, "chdir /");
	return 0;
}

/* The policy's host sockets (broker/init/sockguard.h), each bound
 * read-only on an empty file of root's INITPROTO_SOCKETS_DIR in our /run,
 * which the sandbox cannot write: no link or file of its own can take a
 * listed name. Consumes the spec's socket trees. */
static int
mounts_sockets(struct mounts_ctx *c, struct initproto_spec *s)
{
	char rel[PATH_MAX];
	int dir = -1, fd, rc = 0;

	if (s->n_sockets > 0 && (dir = mounts_mkdirs(c, &INITPROTO_SOCKETS_DIR[1])) == -1)
		rc = -1;
	for (size_t i = 0; i < s->n_sockets; i++) {
		snprintf(rel, sizeof(rel), "%s/%s", INITPROTO_SOCKETS_DIR, s->socket_name[i]);
		if (rc == 0 && (fd = openat(dir, s->socket_name[i], O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0644)) == -1)
			rc = mounts_fail(c, "creating %s", rel);
		else if (rc == 0)
			close(fd);
		if (rc == 0 && (fd = openat(dir, s->socket_name[i], O_PATH | O_NOFOLLOW |
		    O_CLOEXEC)) == -1)
			rc = mounts_fail(c, "%s", rel);
		else if (rc == 0) {
			rc = mounts_attach_at(c, s->socket_fd[i], fd, MOUNTS_RO_ATTRS |
			    MOUNT_ATTR_NOEXEC, rel);
			close(fd);
		}
		close(s->socket_fd[i]);
		s->socket_fd[i] = -1;
	}
	if (dir != -1)
		close(dir);
	return rc;
}

/* Closes the spec's descriptors that are still open. */
static void
mounts_close_spec(struct initproto_spec *s)
{
	size_t i;

	for (i = 0; i < s->n_roots; i++) {
		if (s->root_fd[i] != -1)
			close(s->root_fd[i]);
		s->root_fd[i] = -1;
	}
	if (s->home_fd != -1)
		close(s->home_fd);
	s->home_fd = -1;
	for (i = 0; i < s->n_sockets; i++) {
		if (s->socket_fd[i] != -1)
			close(s->socket_fd[i]);
		s->socket_fd[i] = -1;
	}
}

/* What mounts_prepare built, kept for mounts_build. */
struct mounts {
	struct mounts_ctx c;
	struct mounts_masker masker;
	struct mounts_bundle bundle;
	int rc;                         /* mounts_prepare's: -1 with ERR */
	char err[INITPROTO_ERR_MAX_BYTES];
};

/* The part of the tree no spec changes. */
static int
mounts_prepare_tree(struct mounts *m)
{
	static const char *const run_opts[] = { "mode=0755", NULL };
	struct mounts_ctx *c = &m->c;

	if (mounts_root(c) == -1)
		return -1;
	for (const char *const *d = sysdirs_shown; *d != NULL; d++) {
		if (mounts_system_dir(c, *d) == -1)
			return -1;
	}
	/* No root may lie below /run, /dev or /proc (rootcheck): made before
	 * the roots, they hide none. */
	if (mounts_fs(c, "tmpfs", "run", run_opts,
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) == -1 ||
	    mounts_dev(c) == -1 || mounts_proc(c) == -1 ||
	    mounts_masker_open(c, &m->masker) == -1 || mounts_host_masks(c, &m->masker) == -1 ||
	    mounts_bundle_begin(c, &m->bundle) == -1)
		return -1;
	return 0;
}

struct mounts *
mounts_prepare(void)
{
	struct mounts *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	m->c.root = m->masker.fs = m->bundle.sys = m->bundle.ours = -1;
	m->c.err = m->err;
	m->c.errlen = sizeof(m->err);
	m->rc = mounts_prepare_tree(m);
	return m;
}

/* The spec's part of the tree, then the pivot. */
static int
mounts_build_spec(struct mounts *m, struct initproto_spec *s)
{
	char size[MOUNTS_SIZE_OPTION_MAX_BYTES];
	const char *const tmp_opts[] = { "mode=1777", size, MOUNTS_TMP_INODES, NULL };
	struct mounts_ctx *c = &m->c;

	/* /tmp and /dev/shm are bounded: their pages are the sandbox's memory,
	 * and filling them says ENOSPC before the memory limit kills. */
	snprintf(size, sizeof(size), "size=%um", (unsigned)s->tmp_mib);
	/* The cgroup namespace first: the monitor has put corral-init in every
	 * cgroup of the sandbox, so inside each shows as "/", never a host path. */
	if (unshare(CLONE_NEWCGROUP) == -1)
		return mounts_fail(c, "a cgroup namespace");
	/* Before the roots: a root under /tmp goes into the private /tmp. */
	if (mounts_fs(c, "tmpfs", "tmp", tmp_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) == -1 ||
	    mounts_trees(c, s) == -1 || mounts_runtime(c, s->runtime) == -1 ||
	    mounts_resolv(c, s->gateway) == -1 || mounts_bundle_finish(c, &m->bundle, s->ca_pem, s) == -1 ||
	    mounts_sockets(c, s) == -1 || mounts_shm(c, size) == -1 ||
	    mounts_host_masks_again(c, &m->masker, s) == -1 ||
	    mounts_root_masks(c, &m->masker, s) == -1 || mounts_pivot(c) == -1)
		return -1;
	return 0;
}

int
mounts_build(struct mounts *m, struct initproto_spec *s, char *err, size_t errlen)
{
	int rc = -1;

	if (m == NULL)
		snprintf(err, errlen, "corral-init: out of memory");
	else if (m->rc == -1)
		snprintf(err, errlen, "%s", m->err);
	else {
		m->c.err = err;
		m->c.errlen = errlen;
		rc = mounts_build_spec(m, s);
	}
	mounts_close_spec(s);
	if (m != NULL) {
		if (m->c.root != -1)
			close(m->c.root);
		if (m->masker.fs != -1)
			close(m->masker.fs);
		mounts_bundle_close(&m->bundle);
		free(m);
	}
	return rc;
}
