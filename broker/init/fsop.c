/* The file API's operations on folder descriptors. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker/init/fsop.h"

#define FSOP_READ_CHUNK_BYTES 4096      /* a file of unknown size is read in steps of this */
#define FSOP_DIR_MODE 0755              /* folders write creates (umask applies) */
#define FSOP_FILE_MODE 0644             /* files write creates (umask applies) */

/* A folder's names, sorted. */
struct fsop_names {
	char **v;
	size_t n, cap;
};

/* What grep carries down the tree. */
struct fsop_grep_state {
	regex_t re;
	struct fsproto_out *out;
	uint32_t count;
	uint32_t kept;
	size_t n_pos;                   /* where the kept count is, in out */
	char path[PATH_MAX];            /* the file being searched, as shown */
};

/* Replaces whatever OUT holds by an error result; returns -1. */
static int __attribute__((format(printf, 3, 4)))
fsop_fail(struct fsproto_out *out, enum fsproto_status status, const char *fmt, ...)
{
	char msg[FSPROTO_MESSAGE_MAX_BYTES];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One line, whatever the path held: control bytes show as '?'. */
	for (i = 0; msg[i] != '\0'; i++) {
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			msg[i] = '?';
	}
	out->len = 0;
	out->overflow = false;
	fsproto_put_u32(out, status);
	fsproto_put_bytes(out, msg, strlen(msg));
	return -1;
}

int
fsop_out_fail(struct fsproto_out *out, enum fsproto_status status, const char *message)
{
	return fsop_fail(out, status, "%s", message);
}

/* The error result for ERR while opening or using PATH. */
static int
fsop_fail_errno(struct fsproto_out *out, const char *path, int err)
{
	switch (err) {
	case ENOENT:
		return fsop_fail(out, FSPROTO_NOT_FOUND, "%s: no such file or folder", path);
	case EXDEV:
		return fsop_fail(out, FSPROTO_PERMISSION, "%s: leads outside the workspace "
		    "(through '..' or a symbolic link); name a path inside it", path);
	case ELOOP:
		return fsop_fail(out, FSPROTO_PERMISSION, "%s: a symbolic link that is not "
		    "followed here (a loop, or a /proc magic link)", path);
	case EACCES:
	case EPERM:
		return fsop_fail(out, FSPROTO_PERMISSION, "%s: permission denied in the "
		    "sandbox (outside its writable roots, or the file's mode)", path);
	case EROFS:
		return fsop_fail(out, FSPROTO_PERMISSION, "%s: on a read-only root", path);
	case ENOTDIR:
	case EISDIR:
	case ENAMETOOLONG:
		return fsop_fail(out, FSPROTO_INVALID, "%s: %s", path, strerror(err));
	default:
		return fsop_fail(out, FSPROTO_FAILED, "%s: %s", path, strerror(err));
	}
}

/* Opens PATH: relative beneath WS, absolute within ROOT (-1: refused with
 * EXDEV). Magic links (/proc/PID/fd/N and the like) are never followed:
 * they would lead wherever the descriptor they stand for points. */
static int
fsop_open(int ws, int root, const char *path, int flags, mode_t mode)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC), .mode = mode,
		.resolve = RESOLVE_NO_MAGICLINKS };
	int dirfd = ws;

	if (path[0] == '/') {
		if (root == -1) {
			errno = EXDEV;
			return -1;
		}
		dirfd = root;
		how.resolve |= RESOLVE_IN_ROOT;
	} else {
		how.resolve |= RESOLVE_BENEATH;
	}
	if (!(flags & O_CREAT))
		how.mode = 0;
	return (int)syscall(SYS_openat2, dirfd, path[0] != '\0' ? path : ".", &how, sizeof(how));
}

/* Grows *BUF (of *CAP bytes) towards LIMIT; -1 when it cannot. */
static int
fsop_grow(char **buf, size_t *cap, size_t limit)
{
	size_t next = *cap * 2 < limit ? *cap * 2 : limit;
	char *grown = realloc(*buf, next + 1);

	if (grown == NULL)
		return -1;
	*buf = grown;
	*cap = next;
	return 0;
}

/* Reads up to MAX bytes of FD from its start into *DATA (malloc'd, one
 * byte more for a NUL); *MORE when the file holds more. The buffer starts
 * at the file's size (files of /proc say 0) and grows as needed. */
static int
fsop_slurp(int fd, size_t max, char **data, size_t *len, bool *more)
{
	struct stat st;
	size_t got = 0, cap = FSOP_READ_CHUNK_BYTES;
	char *buf;
	ssize_t n;

	if (fstat(fd, &st) == 0 && st.st_size > 0)
		cap = (size_t)st.st_size < max ? (size_t)st.st_size + 1 : max + 1;
	else if (cap > max + 1)
		cap = max + 1;
	if ((buf = malloc(cap + 1)) == NULL)
		return -1;
	for (;;) {
		/* MAX + 1 bytes read: enough to know there is more. */
		if (got == cap && cap > max)
			break;
		if (got == cap && fsop_grow(&buf, &cap, max + 1) == -1)
			goto fail;
		n = pread(fd, buf + got, cap - got, (off_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto fail;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	*more = got > max;
	*len = *more ? max : got;
	buf[*len] = '\0';
	*data = buf;
	return 0;
fail:
	free(buf);
	return -1;
}

/* Opens PATH as a regular file (FLAGS: O_RDONLY or O_RDWR). */
static int
fsop_open_regular(int ws, int root, const char *path, int flags, struct fsproto_out *out)
{
	struct stat st;
	int fd;

	/* O_NONBLOCK: opening a FIFO must not hang the operation. */
	fd = fsop_open(ws, root, path, flags | O_NONBLOCK | O_NOCTTY, 0);
	if (fd == -1)
		return fsop_fail_errno(out, path, errno);
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fsop_fail(out, FSPROTO_INVALID, "%s: not a regular file", path);
	}
	return fd;
}

int
fsop_read(int ws, int root, const char *path, struct fsproto_out *out)
{
	char *data;
	size_t len;
	bool more;
	int fd, rc;

	if ((fd = fsop_open_regular(ws, root, path, O_RDONLY, out)) == -1)
		return -1;
	rc = fsop_slurp(fd, FSPROTO_READ_MAX_BYTES, &data, &len, &more);
	close(fd);
	if (rc == -1)
		return fsop_fail_errno(out, path, errno);
	fsproto_put_u32(out, FSPROTO_OK);
	fsproto_put_u32(out, more);
	fsproto_put_bytes(out, data, len);
	free(data);
	return 0;
}

/* Creates PATH's missing parent folders beneath WS. Each one is made in
 * its parent as opened from WS again, so a symbolic link met on the way
 * cannot lead out. */
static int
fsop_make_parents(int ws, const char *path)
{
	char prefix[PATH_MAX];
	const char *slash;
	size_t at = 0;
	int dirfd = fsop_open(ws, -1, "", O_PATH | O_DIRECTORY, 0), rc;

	while (dirfd != -1 && (slash = strchr(path + at, '/')) != NULL) {
		if ((size_t)(slash - path) >= sizeof(prefix)) {
			close(dirfd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(prefix, path, (size_t)(slash - path));
		prefix[slash - path] = '\0';
		rc = mkdirat(dirfd, prefix + at, FSOP_DIR_MODE);
		close(dirfd);
		if (rc == -1 && errno != EEXIST)
			return -1;
		dirfd = fsop_open(ws, -1, prefix, O_PATH | O_DIRECTORY, 0);
		at = (size_t)(slash - path) + 1;
	}
	if (dirfd == -1)
		return -1;
	close(dirfd);
	return 0;
}

/* Writes all of DATA at the start of FD and cuts the file there. */
static int
fsop_overwrite(int fd, const void *data, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(fd, (const char *)data + done, len - done, (off_t)done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		done += (size_t)n;
	}
	return ftruncate(fd, (off_t)len);
}

/* Opens PATH for writing, beneath WS: created anew when missing (*CREATED),
 * else the regular file that is there. */
static int
fsop_open_for_write(int ws, const char *path, bool *created, struct fsproto_out *out)
{
	int fd;

	if (path[0] == '\0' || path[strlen(path) - 1] == '/')
		return fsop_fail(out, FSPROTO_INVALID, "'%s': a file name is needed", path);
	if (path[0] == '/')
		return fsop_fail_errno(out, path, EXDEV);
	if (fsop_make_parents(ws, path) == -1)
		return fsop_fail_errno(out, path, errno);
	*created = true;
	fd = fsop_open(ws, -1, path, O_WRONLY | O_CREAT | O_EXCL, FSOP_FILE_MODE);
	if (fd != -1 || errno != EEXIST)
		return fd != -1 ? fd : fsop_fail_errno(out, path, errno);
	*created = false;
	return fsop_open_regular(ws, -1, path, O_WRONLY, out);
}

/* The result of a write or an edit. */
static int
fsop_written(struct fsproto_out *out, size_t len, bool created)
{
	fsproto_put_u32(out, FSPROTO_OK);
	fsproto_put_u64(out, len);
	fsproto_put_u32(out, created);
	return 0;
}

int
fsop_write(int ws, const char *path, const void *data, size_t len, struct fsproto_out *out)
{
	bool created = false;
	int fd, rc;

	if (len > FSPROTO_WRITE_MAX_BYTES)
		return fsop_fail(out, FSPROTO_LIMIT, "%s: %zu bytes is more than a write may "
		    "hold (%d)", path, len, FSPROTO_WRITE_MAX_BYTES);
	if ((fd = fsop_open_for_write(ws, path, &created, out)) == -1)
		return -1;
	rc = fsop_overwrite(fd, data, len);
	if (rc == -1)
		rc = fsop_fail_errno(out, path, errno);
	if (close(fd) == -1 && rc == 0)
		rc = fsop_fail_errno(out, path, errno);
	return rc == 0 ? fsop_written(out, len, created) : -1;
}

/* How often NEEDLE occurs in HAY, not overlapping; the first at *FIRST. */
static size_t
fsop_occurrences(const char *hay, size_t len, const char *needle, size_t n, size_t *first)
{
	const char *p = hay, *hit;
	size_t count = 0;

	while ((hit = memmem(p, len - (size_t)(p - hay), needle, n)) != NULL) {
		if (count++ == 0)
			*first = (size_t)(hit - hay);
		p = hit + n;
	}
	return count;
}

/* DATA with the OLD_LEN bytes at AT replaced by NEW, malloc'd. */
static char *
fsop_splice(const char *data, size_t len, size_t at, size_t old_len, const char *new_text,
    size_t new_len, size_t *out_len)
{
	char *buf;

	*out_len = len - old_len + new_len;
	buf = malloc(*out_len + 1);
	if (buf == NULL)
		return NULL;
	memcpy(buf, data, at);
	memcpy(buf + at, new_text, new_len);
	memcpy(buf + at + new_len, data + at + old_len, len - at - old_len);
	return buf;
}

/* The edit's checks on the file's DATA; -1 with the refusal in OUT. */
static int
fsop_edit_check(const char *path, const char *data, size_t len, bool more, const char *old,
    size_t old_len, size_t new_len, size_t *at, struct fsproto_out *out)
{
	size_t n;

	if (more)
		return fsop_fail(out, FSPROTO_LIMIT, "%s: larger than an edit may change (%d "
		    "bytes)", path, FSPROTO_WRITE_MAX_BYTES);
	n = fsop_occurrences(data, len, old, old_len, at);
	if (n != 1)
		return fsop_fail(out, FSPROTO_INVALID, "%s: the old text occurs %zu times; it "
		    "must occur exactly once%s", path, n,
		    n == 0 ? "" : " (give more of the text around it)");
	if (len - old_len + new_len > FSPROTO_WRITE_MAX_BYTES)
		return fsop_fail(out, FSPROTO_LIMIT, "%s: the edited file would be larger than "
		    "%d bytes", path, FSPROTO_WRITE_MAX_BYTES);
	return 0;
}

int
fsop_edit(int ws, const char *path, const char *old, size_t old_len, const char *new_text,
    size_t new_len, struct fsproto_out *out)
{
	char *data = NULL, *edited = NULL;
	size_t len, at = 0, edited_len = 0;
	bool more;
	int fd, rc = -1;

	if (old_len == 0)
		return fsop_fail(out, FSPROTO_INVALID, "%s: the old text is empty; give the text "
		    "to replace", path);
	if (path[0] == '/')
		return fsop_fail_errno(out, path, EXDEV);
	if ((fd = fsop_open_regular(ws, -1, path, O_RDWR, out)) == -1)
		return -1;
	if (fsop_slurp(fd, FSPROTO_WRITE_MAX_BYTES, &data, &len, &more) == -1) {
		fsop_fail_errno(out, path, errno);
		goto out;
	}
	if (fsop_edit_check(path, data, len, more, old, old_len, new_len, &at, out) == -1)
		goto out;
	edited = fsop_splice(data, len, at, old_len, new_text, new_len, &edited_len);
	if (edited == NULL || fsop_overwrite(fd, edited, edited_len) == -1) {
		fsop_fail_errno(out, path, edited == NULL ? ENOMEM : errno);
		goto out;
	}
	rc = fsop_written(out, edited_len, false);
out:
	close(fd);
	free(data);
	free(edited);
	return rc;
}

static int
fsop_names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
fsop_names_clear(struct fsop_names *names)
{
	size_t i;

	for (i = 0; i < names->n; i++)
		free(names->v[i]);
	free(names->v);
	memset(names, 0, sizeof(*names));
}

static int
fsop_names_add(struct fsop_names *names, const char *name)
{
	char **grown;

	if (names->n == names->cap) {
		names->cap = names->cap == 0 ? 64 : names->cap * 2;
		grown = realloc(names->v, names->cap * sizeof(*names->v));
		if (grown == NULL)
			return -1;
		names->v = grown;
	}
	if ((names->v[names->n] = strdup(name)) == NULL)
		return -1;
	names->n++;
	return 0;
}

/* The names of the folder FD (taken: closed), without . and .., sorted;
 * at most MAX of them (the first by name when more). */
static int
fsop_names_read(int fd, size_t max, struct fsop_names *names)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	memset(names, 0, sizeof(*names));
	if (d == NULL) {
		close(fd);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			rc = fsop_names_add(names, de->d_name);
	}
	closedir(d);
	if (rc == -1) {
		fsop_names_clear(names);
		return -1;
	}
	if (names->n > 1)
		qsort(names->v, names->n, sizeof(*names->v), fsop_names_cmp);
	while (names->n > max)
		free(names->v[--names->n]);
	return 0;
}

static enum fsproto_type
fsop_type_of(mode_t mode)
{
	if (S_ISREG(mode))
		return FSPROTO_TYPE_FILE;
	if (S_ISDIR(mode))
		return FSPROTO_TYPE_DIR;
	if (S_ISLNK(mode))
		return FSPROTO_TYPE_SYMLINK;
	return FSPROTO_TYPE_OTHER;
}

/* Opens PATH as a folder to read (O_DIRECTORY). */
static int
fsop_open_dir(int ws, int root, const char *path, struct fsproto_out *out)
{
	int fd = fsop_open(ws, root, path, O_RDONLY | O_DIRECTORY, 0);

	if (fd == -1)
		return fsop_fail_errno(out, path, errno);
	return fd;
}

int
fsop_list(int ws, int root, const char *path, struct fsproto_out *out)
{
	struct fsop_names names;
	struct stat st;
	size_t i;
	int fd, dfd;

	if ((fd = fsop_open_dir(ws, root, path, out)) == -1)
		return -1;
	/* A second descriptor for fstatat: fdopendir takes the first. */
	if ((dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1 ||
	    fsop_names_read(fd, FSPROTO_LIST_ENTRIES_MAX, &names) == -1) {
		if (dfd != -1)
			close(dfd);
		return fsop_fail_errno(out, path, errno);
	}
	fsproto_put_u32(out, FSPROTO_OK);
	fsproto_put_u32(out, (uint32_t)names.n);
	for (i = 0; i < names.n; i++) {
		if (fstatat(dfd, names.v[i], &st, AT_SYMLINK_NOFOLLOW) == -1)
			memset(&st, 0, sizeof(st));
		fsproto_put_bytes(out, names.v[i], strlen(names.v[i]));
		fsproto_put_u32(out, fsop_type_of(st.st_mode));
		fsproto_put_u64(out, (uint64_t)st.st_size);
	}
	close(dfd);
	fsop_names_clear(&names);
	return out->overflow ? fsop_fail(out, FSPROTO_LIMIT, "%s: the listing is larger than "
	    "%d bytes", path, FSPROTO_OUT_MAX_BYTES) : 0;
}

/* Counts the line TEXT (number LINE) of the current file, and keeps it
 * while matches and room for whole records remain. */
static void
fsop_grep_hit(struct fsop_grep_state *g, uint32_t line, const char *text)
{
	size_t n = strlen(text), path_len = strlen(g->path), record;

	if (n > FSOP_GREP_TEXT_MAX_BYTES)
		n = FSOP_GREP_TEXT_MAX_BYTES;
	record = 3 * sizeof(uint32_t) + path_len + n;
	g->count++;
	if (g->kept == FSPROTO_GREP_MATCHES_MAX || record > FSPROTO_OUT_MAX_BYTES - g->out->len)
		return;
	fsproto_put_bytes(g->out, g->path, path_len);
	fsproto_put_u32(g->out, line);
	fsproto_put_bytes(g->out, text, n);
	g->kept++;
}

/* Searches the regular file FD (closed here), as g->path. Binary files
 * (a NUL near the start) and files over the cap are skipped. */
static void
fsop_grep_file(struct fsop_grep_state *g, int fd)
{
	char *data, *line, *nl;
	size_t len;
	uint32_t n = 0;
	bool more;

	if (fsop_slurp(fd, FSOP_GREP_FILE_MAX_BYTES, &data, &len, &more) == -1) {
		close(fd);
		return;
	}
	close(fd);
	if (!more && memchr(data, '\0', len < FSOP_GREP_BINARY_PROBE_BYTES ? len :
	    FSOP_GREP_BINARY_PROBE_BYTES) == NULL) {
		for (line = data; line < data + len; line = nl + 1) {
			nl = memchr(line, '\n', len - (size_t)(line - data));
			if (nl == NULL)
				nl = data + len;
			*nl = '\0';
			n++;
			if (regexec(&g->re, line, 0, NULL, 0) == 0)
				fsop_grep_hit(g, n, line);
		}
	}
	free(data);
}

static void fsop_grep_dir(struct fsop_grep_state *g, int fd, unsigned depth);

/* Searches the entry NAME of the folder DFD; never follows a symbolic
 * link (each entry is opened with O_NOFOLLOW beside its folder). */
static void
fsop_grep_entry(struct fsop_grep_state *g, int dfd, const char *name, unsigned depth)
{
	size_t at = strlen(g->path);
	const char *sep = at > 0 && g->path[at - 1] != '/' ? "/" : "";
	struct stat st;
	int fd;

	if (snprintf(g->path + at, sizeof(g->path) - at, "%s%s", sep, name) >=
	    (int)(sizeof(g->path) - at))
		goto out;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		goto out;
	if (S_ISREG(st.st_mode)) {
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd != -1)
			fsop_grep_file(g, fd);
	} else if (S_ISDIR(st.st_mode) && depth < FSOP_GREP_DEPTH_MAX) {
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd != -1)
			fsop_grep_dir(g, fd, depth + 1);
	}
out:
	g->path[at] = '\0';
}

/* Searches every entry of the folder FD (taken), by name. */
static void
fsop_grep_dir(struct fsop_grep_state *g, int fd, unsigned depth)
{
	struct fsop_names names;
	size_t i;
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	if (dfd == -1) {
		close(fd);
		return;
	}
	if (fsop_names_read(fd, SIZE_MAX, &names) == 0) {
		for (i = 0; i < names.n; i++)
			fsop_grep_entry(g, dfd, names.v[i], depth);
		fsop_names_clear(&names);
	}
	close(dfd);
}

/* Compiles PATTERN into G; -1 with the refusal in OUT. */
static int
fsop_grep_compile(struct fsop_grep_state *g, const char *pattern, struct fsproto_out *out)
{
	char why[FSPROTO_MESSAGE_MAX_BYTES / 2];
	int rc;

	if (pattern[0] == '\0' || strlen(pattern) > FSPROTO_PATTERN_MAX_BYTES)
		return fsop_fail(out, FSPROTO_INVALID, "the pattern must have 1 to %d bytes",
		    FSPROTO_PATTERN_MAX_BYTES);
	rc = regcomp(&g->re, pattern, REG_EXTENDED | REG_NOSUB | REG_NEWLINE);
	if (rc != 0) {
		regerror(rc, &g->re, why, sizeof(why));
		return fsop_fail(out, FSPROTO_INVALID, "the pattern is not a valid extended "
		    "regular expression: %s", why);
	}
	return 0;
}

int
fsop_grep(int ws, int root, const char *pattern, const char *path, struct fsproto_out *out)
{
	struct fsop_grep_state *g = calloc(1, sizeof(*g));
	struct stat st;
	int fd, rc = -1;

	if (g == NULL)
		return fsop_fail(out, FSPROTO_FAILED, "out of memory");
	g->out = out;
	if (fsop_grep_compile(g, pattern, out) == -1) {
		free(g);
		return -1;
	}
	if ((fd = fsop_open(ws, root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0)) == -1 ||
	    fstat(fd, &st) == -1) {
		fsop_fail_errno(out, path, errno);
		goto out;
	}
	fsproto_put_u32(out, FSPROTO_OK);
	g->n_pos = out->len;
	fsproto_put_u32(out, 0);           /* count and kept, set at the end */
	fsproto_put_u32(out, 0);
	snprintf(g->path, sizeof(g->path), "%s", strcmp(path, ".") == 0 ? "" : path);
	if (S_ISDIR(st.st_mode))
		fsop_grep_dir(g, fd, 0);
	else if (S_ISREG(st.st_mode))
		fsop_grep_file(g, fd);
	else
		close(fd);
	fd = -1;
	if (out->overflow) {
		fsop_fail(out, FSPROTO_FAILED, "%s: out of memory", path);
		goto out;
	}
	memcpy(out->data + g->n_pos, &g->count, sizeof(uint32_t));
	memcpy(out->data + g->n_pos + sizeof(uint32_t), &g->kept, sizeof(uint32_t));
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	regfree(&g->re);
	free(g);
	return rc;
}
