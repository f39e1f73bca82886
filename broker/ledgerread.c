/* The egress ledger read back, oldest file first; see ledgerread.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "broker/ledgerread.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "egress-proxy/ledger.h"

/* A read always has a chunk's room: what is kept of a line is shorter than a record. */
#define LEDGERREAD_BUFFER_BYTES (LEDGERREAD_CHUNK_BYTES + LEDGER_RECORD_MAX_BYTES)
#define LEDGERREAD_GZIP_SUFFIX ".gz"
#define LEDGERREAD_NS_PER_US 1000

/* A rotated file as listed: the inode is what is read, whatever its name
 * is by then (logrotate renames .1 to .2 while a reader may be at .3). */
struct ledgerread_file {
	char *name;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
};

struct ledgerread {
	int dirfd;
	bool follow;
	struct ledgerread_file *rotated;        /* oldest first */
	size_t nrotated, next_rotated;
	int live_fd;                    /* the live file as it was at the open, until read; or -1 */
	gzFile cur;                     /* the file being read, or NULL */
	bool cur_live;
	dev_t cur_dev;
	ino_t cur_ino;
	bool final_read;                /* following: the writer moved to a new live file, and
	                                 * this read takes what it wrote to the old one before */
	char *buf;                      /* bytes read and not handed out: [start, end) */
	size_t start, end;
	bool skipping;                  /* inside an overlong line: dropped up to its newline */
	uint64_t skipped;
};

/* "egress.jsonl.<something>" or "egress.jsonl-<something>". */
static bool
ledgerread_is_rotated_name(const char *name)
{
	size_t n = strlen(LEDGER_FILE_NAME);

	return strncmp(name, LEDGER_FILE_NAME, n) == 0 && (name[n] == '.' || name[n] == '-') &&
	    name[n + 1] != '\0';
}

static int
ledgerread_mtime_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	if (a->tv_nsec != b->tv_nsec)
		return a->tv_nsec < b->tv_nsec ? -1 : 1;
	return 0;
}

/* Oldest first; files changed in the same nanosecond by name. */
static int
ledgerread_file_cmp(const void *pa, const void *pb)
{
	const struct ledgerread_file *a = pa, *b = pb;
	int by_time = ledgerread_mtime_cmp(&a->mtime, &b->mtime);

	return by_time != 0 ? by_time : strcmp(a->name, b->name);
}

static int64_t
ledgerread_mtime_us(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000 + st->st_mtim.tv_nsec / LEDGERREAD_NS_PER_US;
}

/* Adds NAME to the list; when the list is full, the oldest file goes
 * (the newest are the ones asked for). */
static void
ledgerread_add_file(struct ledgerread *r, const char *name, const struct stat *st)
{
	struct ledgerread_file f = { NULL, st->st_dev, st->st_ino, st->st_mtim };
	size_t oldest = 0;

	if (r->nrotated == LEDGERREAD_FILES_MAX) {
		for (size_t i = 1; i < r->nrotated; i++)
			if (ledgerread_file_cmp(&r->rotated[i], &r->rotated[oldest]) < 0)
				oldest = i;
		if (ledgerread_mtime_cmp(&st->st_mtim, &r->rotated[oldest].mtime) <= 0)
			return;
		free(r->rotated[oldest].name);
		f.name = xstrdup(name);
		r->rotated[oldest] = f;
		return;
	}
	if ((r->nrotated & (r->nrotated - 1)) == 0)     /* 0, 1, 2, 4, ...: grow */
		r->rotated = xreallocarray(r->rotated, r->nrotated == 0 ? 1 : r->nrotated * 2,
		    sizeof(*r->rotated));
	f.name = xstrdup(name);
	r->rotated[r->nrotated++] = f;
}

static bool
ledgerread_listed(const struct ledgerread *r, const char *name, size_t len)
{
	for (size_t i = 0; i < r->nrotated; i++)
		if (strlen(r->rotated[i].name) == len && strncmp(r->rotated[i].name, name, len) == 0)
			return true;
	return false;
}

/* Leaves out "X.gz" while "X" is there too: the compressor has not
 * finished, and X holds the same records whole. */
static void
ledgerread_drop_unfinished_gzip(struct ledgerread *r)
{
	size_t kept = 0, sfx = strlen(LEDGERREAD_GZIP_SUFFIX);

	for (size_t i = 0; i < r->nrotated; i++) {
		const char *name = r->rotated[i].name;
		size_t len = strlen(name);

		if (len > sfx && strcmp(name + len - sfx, LEDGERREAD_GZIP_SUFFIX) == 0 &&
		    ledgerread_listed(r, name, len - sfx)) {
			free(r->rotated[i].name);
			continue;
		}
		r->rotated[kept++] = r->rotated[i];
	}
	r->nrotated = kept;
}

/* Lists the rotated files, leaving out the live file R holds (renamed by
 * a rotation since it was opened: it is read last, as the live file) and
 * those last modified before SINCE_US. -1 with errno. */
static int
ledgerread_list(struct ledgerread *r, int64_t since_us, const struct stat *live)
{
	int fd = fcntl(r->dirfd, F_DUPFD_CLOEXEC, 0);
	struct dirent *de;
	struct stat st;
	DIR *dir;

	if (fd == -1 || (dir = fdopendir(fd)) == NULL) {
		int saved = errno;

		if (fd != -1)
			close(fd);
		errno = saved;
		return -1;
	}
	while ((de = readdir(dir)) != NULL) {
		if (!ledgerread_is_rotated_name(de->d_name) ||
		    fstatat(r->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (live != NULL && st.st_dev == live->st_dev && st.st_ino == live->st_ino)
			continue;
		if (since_us > 0 && ledgerread_mtime_us(&st) < since_us)
			continue;       /* every record in it is older than its last write */
		ledgerread_add_file(r, de->d_name, &st);
	}
	closedir(dir);
	ledgerread_drop_unfinished_gzip(r);
	if (r->nrotated > 1)
		qsort(r->rotated, r->nrotated, sizeof(*r->rotated), ledgerread_file_cmp);
	return 0;
}

/* Opens NAME in R's folder, a regular file, never through a link; -1. */
static int
ledgerread_open_name(const struct ledgerread *r, const char *name, struct stat *st)
{
	int fd = openat(r->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd == -1)
		return -1;
	if (fstat(fd, st) == -1 || !S_ISREG(st->st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* The listed file F, by its inode: at its name, or, renamed since, at
 * whatever name it has now. -1 when it is gone. */
static int
ledgerread_open_listed(const struct ledgerread *r, const struct ledgerread_file *f)
{
	struct dirent *de;
	struct stat st;
	int fd = ledgerread_open_name(r, f->name, &st), dup_fd;
	DIR *dir;

	if (fd != -1 && st.st_dev == f->dev && st.st_ino == f->ino)
		return fd;
	if (fd != -1)
		close(fd);
	fd = -1;
	if ((dup_fd = fcntl(r->dirfd, F_DUPFD_CLOEXEC, 0)) == -1)
		return -1;
	if ((dir = fdopendir(dup_fd)) == NULL) {
		close(dup_fd);
		return -1;
	}
	rewinddir(dir);
	while (fd == -1 && (de = readdir(dir)) != NULL)
		if (ledgerread_is_rotated_name(de->d_name) &&
		    fstatat(r->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_dev == f->dev && st.st_ino == f->ino)
			fd = ledgerread_open_name(r, de->d_name, &st);
	closedir(dir);
	if (fd == -1)
		errno = ENOENT;
	return fd;
}

/* Starts reading FD (taken), gzip or plain. */
static int
ledgerread_start(struct ledgerread *r, int fd, bool live)
{
	struct stat st;

	if (fstat(fd, &st) == -1 || (r->cur = gzdopen(fd, "rb")) == NULL) {
		close(fd);
		return -1;
	}
	r->cur_live = live;
	r->cur_dev = st.st_dev;
	r->cur_ino = st.st_ino;
	r->final_read = false;
	return 0;
}

/* Drops the current file and what is left of its last line, which was
 * cut (a rotated file's fragment is whole in the next one). */
static void
ledgerread_stop(struct ledgerread *r)
{
	if (r->cur != NULL)
		gzclose(r->cur);
	r->cur = NULL;
	r->start = r->end = 0;
	r->skipping = false;
}

/* Opens the next file to read; false when there is none now. */
static bool
ledgerread_advance(struct ledgerread *r)
{
	struct stat st;
	int fd;

	while (r->next_rotated < r->nrotated) {
		const struct ledgerread_file *f = &r->rotated[r->next_rotated++];

		if ((fd = ledgerread_open_listed(r, f)) != -1 && ledgerread_start(r, fd, false) == 0)
			return true;
		log_warnx("%s: ledger file %s left out: %s", __func__, f->name, strerror(errno));
	}
	if (r->live_fd != -1) {
		fd = r->live_fd;
		r->live_fd = -1;
		return ledgerread_start(r, fd, true) == 0;
	}
	/* Following, the live file is read whenever there is one. */
	if (r->follow && (fd = ledgerread_open_name(r, LEDGER_FILE_NAME, &st)) != -1)
		return ledgerread_start(r, fd, true) == 0;
	return false;
}

/* Hands out the next whole line of the buffer, if there is one. */
static bool
ledgerread_take(struct ledgerread *r, const char **line, size_t *len)
{
	while (r->start < r->end) {
		char *p = r->buf + r->start, *nl = memchr(p, '\n', r->end - r->start);
		size_t n;

		if (nl == NULL) {
			/* No room for a newline within a record's length: too long. */
			if (r->end - r->start >= LEDGER_RECORD_MAX_BYTES) {
				r->skipping = true;
				r->start = r->end;
			}
			return false;
		}
		n = (size_t)(nl - p);
		r->start += n + 1;
		if (r->skipping || n + 1 > LEDGER_RECORD_MAX_BYTES) {
			r->skipping = false;
			r->skipped++;
			continue;
		}
		if (n == 0)
			continue;
		*nl = '\0';
		*line = p;
		*len = n;
		return true;
	}
	return false;
}

/* One read into the buffer: its byte count, 0 at the end, -1 on error. */
static int
ledgerread_fill(struct ledgerread *r)
{
	int errnum;
	int n;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	n = gzread(r->cur, r->buf + r->end, LEDGERREAD_CHUNK_BYTES);
	if (n > 0) {
		r->end += (size_t)n;
		return n;
	}
	if (n < 0 || gzerror(r->cur, &errnum) == NULL || errnum != Z_OK)
		return -1;
	return 0;
}

/* Following, at the end of the live file: true when it was rotated and
 * the writer has moved on (the new file has records), so the old one is
 * read once more, to its very end, and then left. */
static bool
ledgerread_writer_moved(const struct ledgerread *r)
{
	struct stat st;

	return fstatat(r->dirfd, LEDGER_FILE_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode) && (st.st_dev != r->cur_dev || st.st_ino != r->cur_ino) &&
	    st.st_size > 0;
}

/* At the end of the current file: false when the caller is to wait. */
static bool
ledgerread_at_end(struct ledgerread *r)
{
	if (!r->cur_live || !r->follow || r->final_read) {
		ledgerread_stop(r);
		return true;
	}
	gzclearerr(r->cur);     /* to read on as the file grows */
	if (!ledgerread_writer_moved(r))
		return false;
	r->final_read = true;
	return true;
}

/* A file that fails in the middle: a rotated one is left behind; the
 * live one is tried again later. False when the caller is to wait. */
static bool
ledgerread_failed(struct ledgerread *r)
{
	int errnum;
	const char *why = gzerror(r->cur, &errnum);

	log_warnx("%s: reading the ledger: %s", __func__, errnum == Z_ERRNO ? strerror(errno) :
	    why != NULL ? why : "unknown error");
	if (r->cur_live && r->follow) {
		gzclearerr(r->cur);
		return false;
	}
	ledgerread_stop(r);
	return true;
}

enum ledgerread_status
ledgerread_next(struct ledgerread *r, const char **line, size_t *len)
{
	for (int step = 0; step < LEDGERREAD_STEPS_PER_CALL; step++) {
		int n;

		if (ledgerread_take(r, line, len))
			return LEDGERREAD_LINE;
		if (r->cur == NULL && !ledgerread_advance(r))
			return r->follow ? LEDGERREAD_WAIT : LEDGERREAD_END;
		if ((n = ledgerread_fill(r)) > 0)
			continue;
		if (n < 0 ? !ledgerread_failed(r) : !ledgerread_at_end(r))
			return LEDGERREAD_WAIT;
	}
	return LEDGERREAD_BUSY;
}

struct ledgerread *
ledgerread_open(const char *dir, int64_t since_us, bool follow)
{
	struct ledgerread *r = xcalloc(1, sizeof(*r));
	struct stat live;
	int saved;

	r->follow = follow;
	r->live_fd = -1;
	if ((r->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		saved = errno;
		free(r);
		errno = saved;
		return NULL;
	}
	/* The live file first: one rotated after it was opened is then
	 * recognised in the listing by its inode, and read once. */
	r->live_fd = ledgerread_open_name(r, LEDGER_FILE_NAME, &live);
	if (ledgerread_list(r, since_us, r->live_fd != -1 ? &live : NULL) == -1) {
		saved = errno;
		ledgerread_free(r);
		errno = saved;
		return NULL;
	}
	r->buf = xmalloc(LEDGERREAD_BUFFER_BYTES);
	return r;
}

uint64_t
ledgerread_skipped(const struct ledgerread *r)
{
	return r->skipped;
}

void
ledgerread_free(struct ledgerread *r)
{
	if (r == NULL)
		return;
	ledgerread_stop(r);
	if (r->live_fd != -1)
		close(r->live_fd);
	for (size_t i = 0; i < r->nrotated; i++)
		free(r->rotated[i].name);
	free(r->rotated);
	free(r->buf);
	close(r->dirfd);
	free(r);
}
