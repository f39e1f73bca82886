/* Which process opened a proxied connection: the BPF record made at
 * connect time, found by the socket cookie inet_diag reports, then checked
 * and completed from /proc. See identify.h for the contract. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <bpf/bpf.h>

#include "common/proc.h"
#include "egress-proxy/exetrust.h"
#include "egress-proxy/identify.h"

#define IDENTIFY_DIAG_REPLY_MAX_BYTES 8192      /* one inet_diag_msg and its netlink header */
#define IDENTIFY_DIAG_STALE_MAX 8               /* old replies skipped before giving up */
#define IDENTIFY_PROC_PATH_BYTES 32             /* "/proc/" and a pid */
#define IDENTIFY_NS_PER_S 1000000000ull
#define IDENTIFY_ACL_XATTR "system.posix_acl_access"
/* The kernel's dev_t: 12 bits of major above 20 bits of minor. */
#define IDENTIFY_KDEV_MINOR_BITS 20
#define IDENTIFY_KDEV_MINOR_MASK ((1u << IDENTIFY_KDEV_MINOR_BITS) - 1)

/* What broker/monitor/identify.bpf.c records per connect; the same layout as there. */
struct identify_link {
	uint32_t tgid;
	uint32_t exe_dev;
	uint64_t exe_ino;
};

struct identify_record {
	uint32_t tgid;
	uint32_t tid;
	uint64_t start_boottime_ns;
	uint64_t exe_ino;
	uint32_t exe_dev;
	uint32_t n_ancestors;
	struct identify_link ancestors[IDENTIFY_ANCESTORS_MAX];
};
_Static_assert(sizeof(struct identify_record) == 32 + 16 * IDENTIFY_ANCESTORS_MAX,
    "broker/monitor/identify.bpf.c's record layout");

/* One request of inet_diag for one socket, by its exact 4-tuple. */
struct identify_diag_req {
	struct nlmsghdr nlh;
	struct inet_diag_req_v2 req;
};

static const char *const identify_messages[] = {
	[IDENTIFY_OK] = "success",
	[IDENTIFY_ERR_INVALID] = "invalid argument",
	[IDENTIFY_ERR_SYSTEM] = "system call failed",
	[IDENTIFY_ERR_NO_SOCKET] = "no such connection in the client's network namespace",
	/* One literal: clang reads adjacent ones in an array as a missing comma. */
	[IDENTIFY_ERR_NO_RECORD] = "no record of the process that connected (not from the sandbox's cgroup, or the record was evicted)",
	[IDENTIFY_ERR_GONE] = "the process that connected has exited",
	[IDENTIFY_ERR_REUSED] = "the process that connected has exited and its pid was reused",
	[IDENTIFY_ERR_EXECED] = "the process that connected runs another executable since",
	[IDENTIFY_ERR_TOO_LONG] = "the executable paths are too long",
};

const char *
identify_strerror(enum identify_err err)
{
	if ((size_t)err >= sizeof(identify_messages) / sizeof(identify_messages[0]))
		return "unknown identification error";
	return identify_messages[err];
}

/* Copies the port and address of SA into the diag socket id's fields. */
static void
identify_diag_addr(const struct sockaddr_storage *sa, __be16 *port, __be32 addr[4])
{
	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		*port = in->sin_port;
		memcpy(addr, &in->sin_addr, sizeof(in->sin_addr));
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		*port = in6->sin6_port;
		memcpy(addr, &in6->sin6_addr, sizeof(in6->sin6_addr));
	}
}

/* Builds the request for the socket whose own end is T->local. */
static void
identify_diag_request(const struct identify_tuple *t, uint32_t seq, struct identify_diag_req *r)
{
	memset(r, 0, sizeof(*r));
	r->nlh.nlmsg_len = sizeof(*r);
	r->nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	r->nlh.nlmsg_flags = NLM_F_REQUEST;
	r->nlh.nlmsg_seq = seq;
	r->req.sdiag_family = (uint8_t)t->local.ss_family;
	r->req.sdiag_protocol = IPPROTO_TCP;
	r->req.idiag_states = ~0u;
	identify_diag_addr(&t->local, &r->req.id.idiag_sport, r->req.id.idiag_src);
	identify_diag_addr(&t->remote, &r->req.id.idiag_dport, r->req.id.idiag_dst);
	r->req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	r->req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
}

/* Takes the cookie out of one reply to REQ. The kernel may answer an exact
 * lookup with a listener on the same local address; the reply must name
 * the very 4-tuple asked for, or it is not the client's socket. */
static enum identify_err
identify_diag_parse(const struct nlmsghdr *h, size_t len, const struct identify_diag_req *req,
    uint64_t *cookie)
{
	/* NLMSG_DATA casts its argument to char *: spelled out to keep const. */
	const struct inet_diag_msg *m = (const void *)((const char *)h + NLMSG_HDRLEN);
	const struct inet_diag_sockid *want = &req->req.id;

	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = (const void *)((const char *)h + NLMSG_HDRLEN);

		if (len < NLMSG_LENGTH(sizeof(*e)))
			return IDENTIFY_ERR_SYSTEM;
		errno = -e->error;
		return e->error == -ENOENT ? IDENTIFY_ERR_NO_SOCKET : IDENTIFY_ERR_SYSTEM;
	}
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || len < NLMSG_LENGTH(sizeof(*m)))
		return IDENTIFY_ERR_SYSTEM;
	if (m->idiag_state == TCP_LISTEN || m->id.idiag_sport != want->idiag_sport ||
	    m->id.idiag_dport != want->idiag_dport ||
	    memcmp(m->id.idiag_src, want->idiag_src, sizeof(want->idiag_src)) != 0 ||
	    memcmp(m->id.idiag_dst, want->idiag_dst, sizeof(want->idiag_dst)) != 0)
		return IDENTIFY_ERR_NO_SOCKET;
	*cookie = (uint64_t)m->id.idiag_cookie[0] | (uint64_t)m->id.idiag_cookie[1] << 32;
	return IDENTIFY_OK;
}

/* Receives the reply to REQ, skipping replies to earlier requests that a
 * failed call left queued on the socket. The kernel answers a sock_diag
 * request while sending it, so the reply is already there. */
static enum identify_err
identify_diag_recv(int fd, const struct identify_diag_req *req, uint64_t *cookie)
{
	union {
		struct nlmsghdr h;
		char bytes[IDENTIFY_DIAG_REPLY_MAX_BYTES];
	} buf;
	ssize_t n;
	int stale;

	for (stale = 0; stale < IDENTIFY_DIAG_STALE_MAX; stale++) {
		n = recv(fd, &buf, sizeof(buf), MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return IDENTIFY_ERR_SYSTEM;
		if (!NLMSG_OK(&buf.h, (size_t)n))
			return IDENTIFY_ERR_SYSTEM;
		if (buf.h.nlmsg_seq == req->nlh.nlmsg_seq)
			return identify_diag_parse(&buf.h, buf.h.nlmsg_len, req, cookie);
	}
	errno = EPROTO;
	return IDENTIFY_ERR_SYSTEM;
}

/* Asks inet_diag through FD for the cookie of T's client socket. */
static enum identify_err
identify_diag_cookie(int fd, const struct identify_tuple *t, uint64_t *cookie)
{
	static uint32_t seq;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct identify_diag_req req;
	ssize_t n;

	identify_diag_request(t, ++seq, &req);
	do
		n = sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel));
	while (n == -1 && errno == EINTR);
	if (n != (ssize_t)sizeof(req))
		return IDENTIFY_ERR_SYSTEM;
	return identify_diag_recv(fd, &req, cookie);
}

/* The kernel's dev_t encoding as user space's. */
static dev_t
identify_dev(uint32_t kdev)
{
	return makedev(kdev >> IDENTIFY_KDEV_MINOR_BITS, kdev & IDENTIFY_KDEV_MINOR_MASK);
}

/* Whether a binary-scoped entry may match the executable STATX describes
 * (reached by LINK): always without TRUST (the host's own processes), else
 * as exetrust_allows() judges, the ACL read only when the rest allows. */
static bool
identify_exe_trusted(const struct exetrust *trust, const char *link, const struct statx *sx)
{
	struct exetrust_file f = { .mnt_id = (uint32_t)sx->stx_mnt_id, .uid = sx->stx_uid,
	    .mode = sx->stx_mode };

	if (trust == NULL)
		return true;
	if ((sx->stx_mask & STATX_MNT_ID) == 0)
		return false;
	if (!exetrust_allows(trust, &f))
		return false;
	/* An ACL may grant the user what the mode bits do not; one that
	 * cannot be read counts as there. */
	f.acl = getxattr(link, IDENTIFY_ACL_XATTR, NULL, 0) >= 0 ||
	    (errno != ENODATA && errno != ENOTSUP);
	return !f.acl;
}

/* Appends PID's executable's path to OUT->text and sets *PATH to it, if
 * that executable is still the file DEV and INO recorded at connect time;
 * *WRITABLE says whether the sandbox could have written it (TRUST). The
 * path is read before the inode is checked: an exec in between shows as a
 * changed inode, never as the old inode with a new path. */
static enum identify_err
identify_read_exe(pid_t pid, uint32_t dev, uint64_t ino, const struct exetrust *trust,
    struct identify_owner *out, size_t *used, const char **path, bool *writable)
{
	char link[IDENTIFY_PROC_PATH_BYTES];
	size_t room = sizeof(out->text) - *used;
	char *dst = out->text + *used;
	struct statx sx;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%ld/exe", (long)pid);
	n = readlink(link, dst, room);
	if (n == -1)
		return errno == ENOENT || errno == ESRCH ? IDENTIFY_ERR_GONE : IDENTIFY_ERR_SYSTEM;
	if ((size_t)n >= room)
		return IDENTIFY_ERR_TOO_LONG;
	if (statx(AT_FDCWD, link, 0, STATX_BASIC_STATS | STATX_MNT_ID, &sx) != 0)
		return errno == ENOENT || errno == ESRCH ? IDENTIFY_ERR_GONE : IDENTIFY_ERR_SYSTEM;
	if (ino == 0 || sx.stx_ino != ino ||
	    makedev(sx.stx_dev_major, sx.stx_dev_minor) != identify_dev(dev))
		return IDENTIFY_ERR_EXECED;
	dst[n] = '\0';
	*used += (size_t)n + 1;
	*path = dst;
	*writable = !identify_exe_trusted(trust, link, &sx);
	return IDENTIFY_OK;
}

/* The recorded start time in clock ticks, as /proc/PID/stat counts it. */
static uint64_t
identify_record_ticks(const struct identify_record *rec)
{
	static uint64_t ns_per_tick;

	if (ns_per_tick == 0)
		ns_per_tick = IDENTIFY_NS_PER_S / (uint64_t)sysconf(_SC_CLK_TCK);
	return rec->start_boottime_ns / ns_per_tick;
}

/* Checks that the recorded process still runs, with the recorded start
 * time and executable, and fills OUT's own fields. Between the start time
 * check and the exe check its pid could only be reused by a process of the
 * same executable (the inode is checked), so the answer's binary holds. */
static enum identify_err
identify_owner_fill(const struct identify_record *rec, const struct exetrust *trust,
    struct identify_owner *out, size_t *used)
{
	uint64_t start;
	enum identify_err e;

	out->pid = (pid_t)rec->tgid;
	out->tid = (pid_t)rec->tid;
	/* No process has such a pid; proc_start_time() refuses it without
	 * setting errno, which the next test reads. */
	if (out->pid <= 0)
		return IDENTIFY_ERR_GONE;
	if (proc_start_time(out->pid, &start) != 0)
		return errno == ENOENT || errno == ESRCH ? IDENTIFY_ERR_GONE : IDENTIFY_ERR_SYSTEM;
	if (start != identify_record_ticks(rec))
		return IDENTIFY_ERR_REUSED;
	e = identify_read_exe(out->pid, rec->exe_dev, rec->exe_ino, trust, out, used, &out->exe,
	    &out->exe_writable);
	if (e != IDENTIFY_OK)
		return e;
	out->start_time = start;
	out->exe_dev = identify_dev(rec->exe_dev);
	out->exe_ino = (ino_t)rec->exe_ino;
	return IDENTIFY_OK;
}

static bool
identify_is_boundary(const struct identify_boundary *b, pid_t pid)
{
	size_t i;

	if (pid <= 1)
		return true;
	for (i = 0; b != NULL && i < b->n; i++)
		if (b->pids[i] == pid)
			return true;
	return false;
}

/* Fills OUT's ancestors from the recorded ones, up to the boundary. One
 * that exited or runs another executable since ends them as truncated:
 * fewer ancestors can only match fewer policy entries, so this fails
 * closed; only a text overflow is an error. */
static enum identify_err
identify_ancestors_fill(const struct identify_record *rec, const struct identify_boundary *b,
    const struct exetrust *trust, struct identify_owner *out, size_t *used)
{
	const struct identify_link *l;
	enum identify_err e;
	size_t i;

	for (i = 0; i < rec->n_ancestors && i < IDENTIFY_ANCESTORS_MAX; i++) {
		l = &rec->ancestors[i];
		if (identify_is_boundary(b, (pid_t)l->tgid))
			return IDENTIFY_OK;
		e = identify_read_exe((pid_t)l->tgid, l->exe_dev, l->exe_ino, trust, out, used,
		    &out->ancestors[out->n_ancestors], &out->ancestor_writable[out->n_ancestors]);
		if (e == IDENTIFY_ERR_TOO_LONG)
			return e;
		if (e != IDENTIFY_OK) {
			out->ancestors_truncated = true;
			return IDENTIFY_OK;
		}
		out->ancestor_pids[out->n_ancestors++] = (pid_t)l->tgid;
	}
	/* The program stops at pid 1 or at the cap: only the cap leaves some out. */
	out->ancestors_truncated = rec->n_ancestors == IDENTIFY_ANCESTORS_MAX;
	return IDENTIFY_OK;
}

static bool
identify_tuple_ok(const struct identify_tuple *t)
{
	sa_family_t f = t->local.ss_family;

	return (f == AF_INET || f == AF_INET6) && t->remote.ss_family == f;
}

enum identify_err
identify_lookup(int diag_fd, int map_fd, const struct identify_tuple *tuple,
    const struct identify_boundary *boundary, const struct exetrust *trust,
    struct identify_owner *out)
{
	struct identify_record rec;
	enum identify_err e;
	size_t used = 0;
	uint64_t cookie;

	memset(out, 0, offsetof(struct identify_owner, text));
	if (!identify_tuple_ok(tuple) || (boundary != NULL && boundary->n > IDENTIFY_BOUNDARIES_MAX))
		return IDENTIFY_ERR_INVALID;
	e = identify_diag_cookie(diag_fd, tuple, &cookie);
	if (e != IDENTIFY_OK)
		return e;
	if (bpf_map_lookup_elem(map_fd, &cookie, &rec) != 0)
		return errno == ENOENT ? IDENTIFY_ERR_NO_RECORD : IDENTIFY_ERR_SYSTEM;
	e = identify_owner_fill(&rec, trust, out, &used);
	if (e != IDENTIFY_OK)
		return e;
	return identify_ancestors_fill(&rec, boundary, trust, out, &used);
}
