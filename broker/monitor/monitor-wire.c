/* The monitor's messages: encoding and strict decoding. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/monitor/monitor-wire.h"
#include "common/xmalloc.h"

static int
monitor_wire_bad(void)
{
	errno = EBADMSG;
	return -1;
}

/* Copies S into DST (SIZE bytes); -1 when it does not fit. */
static int
monitor_wire_copy(char *dst, size_t size, const char *s)
{
	return snprintf(dst, size, "%s", s) >= (int)size ? monitor_wire_bad() : 0;
}

static void
monitor_wire_put_u64(struct seqmsg *m, uint64_t v)
{
	seqmsg_put_u32(m, (uint32_t)(v >> 32));
	seqmsg_put_u32(m, (uint32_t)v);
}

static int
monitor_wire_get_u64(struct seqmsg *m, uint64_t *v)
{
	uint32_t hi, lo;

	if (seqmsg_get_u32(m, &hi) == -1 || seqmsg_get_u32(m, &lo) == -1)
		return -1;
	*v = (uint64_t)hi << 32 | lo;
	return 0;
}

static int
monitor_wire_get_bool(struct seqmsg *m, bool *b)
{
	uint32_t v;

	if (seqmsg_get_u32(m, &v) == -1 || v > 1)
		return monitor_wire_bad();
	*b = v == 1;
	return 0;
}

static void
monitor_wire_free_strings(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

void
monitor_grants_free(struct monitor_grants *g)
{
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->ngrants; i++) {
		struct monitor_grant_applied *a = &g->grants[i];

		free(a->name);
		monitor_wire_free_strings(a->hosts, a->nhosts);
		monitor_wire_free_strings(a->copied, a->ncopied);
		for (size_t k = 0; k < a->nskipped; k++) {
			free(a->skipped[k].path);
			free(a->skipped[k].reason);
		}
		free(a->skipped);
	}
	free(g->grants);
	monitor_wire_free_strings(g->env, g->nenv);
	free(g);
}

void
monitor_built_init(struct monitor_built *b)
{
	memset(b, 0, sizeof(*b));
	b->channel_fd = b->diag_fd = b->map_fd = -1;
	b->connect_fd = b->transparent_fd = b->dns_udp_fd = b->dns_tcp_fd = -1;
	b->memory_events_fd = b->pids_events_fd = -1;
}

void
monitor_built_close(struct monitor_built *b)
{
	int *fds[] = { &b->channel_fd, &b->diag_fd, &b->connect_fd, &b->transparent_fd,
	    &b->dns_udp_fd, &b->dns_tcp_fd, &b->memory_events_fd, &b->pids_events_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] != -1)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

void
monitor_wire_hello_encode(struct seqmsg *m, const struct monitor_hello *h)
{
	seqmsg_init(m, MONITOR_HELLO);
	seqmsg_put_u32(m, h->sandboxes);
	seqmsg_put_str(m, h->why);
	seqmsg_put_str(m, h->instance);
	seqmsg_put_u32(m, h->host_watched);
	seqmsg_put_str(m, h->host_why);
	seqmsg_put_str(m, h->bypass_why);
	/* Which descriptors follow: bit 0 the map, bit 1 the bypass log. */
	seqmsg_put_u32(m, (h->map_fd != -1 ? 1u : 0) | (h->bypass_fd != -1 ? 2u : 0));
	if (h->map_fd != -1)
		seqmsg_put_fd(m, h->map_fd);
	if (h->bypass_fd != -1)
		seqmsg_put_fd(m, h->bypass_fd);
}

int
monitor_wire_hello_decode(struct seqmsg *m, struct monitor_hello *h)
{
	const char *why, *instance, *host_why, *bypass_why;
	uint32_t has;
	size_t at = 0;

	h->map_fd = -1;
	h->bypass_fd = -1;
	if (m->type != MONITOR_HELLO || monitor_wire_get_bool(m, &h->sandboxes) == -1 ||
	    seqmsg_get_str(m, &why) == -1 || seqmsg_get_str(m, &instance) == -1 ||
	    monitor_wire_get_bool(m, &h->host_watched) == -1 ||
	    seqmsg_get_str(m, &host_why) == -1 || seqmsg_get_str(m, &bypass_why) == -1 ||
	    seqmsg_get_u32(m, &has) == -1 || has > 3 ||
	    seqmsg_get_end(m, (has & 1) + (has >> 1)) == -1)
		return monitor_wire_bad();
	if (monitor_wire_copy(h->why, sizeof(h->why), why) == -1 ||
	    monitor_wire_copy(h->instance, sizeof(h->instance), instance) == -1 ||
	    monitor_wire_copy(h->host_why, sizeof(h->host_why), host_why) == -1 ||
	    monitor_wire_copy(h->bypass_why, sizeof(h->bypass_why), bypass_why) == -1)
		return -1;
	if (has & 1)
		h->map_fd = seqmsg_take_fd(m, at++);
	if (has & 2)
		h->bypass_fd = seqmsg_take_fd(m, at);
	return 0;
}

/* CREATE's host Unix sockets, last: a count, then each path and name. */
static void
monitor_wire_create_encode_sockets(struct seqmsg *m, const struct monitor_create *r)
{
	seqmsg_put_u32(m, (uint32_t)r->n_sockets);
	for (size_t i = 0; i < r->n_sockets; i++) {
		seqmsg_put_str(m, r->sockets[i].path);
		seqmsg_put_str(m, r->sockets[i].name);
	}
	if (r->n_sockets > MONITOR_SOCKETS_MAX)
		m->overflow = true;
}

static int
monitor_wire_create_sockets(struct seqmsg *m, struct monitor_wire_create *out)
{
	uint32_t n;

	if (seqmsg_get_u32(m, &n) == -1 || n > MONITOR_SOCKETS_MAX)
		return monitor_wire_bad();
	for (uint32_t i = 0; i < n; i++)
		if (seqmsg_get_str(m, &out->sockets[i].path) == -1 ||
		    seqmsg_get_str(m, &out->sockets[i].name) == -1)
			return monitor_wire_bad();
	out->req.sockets = out->sockets;
	out->req.n_sockets = n;
	return 0;
}

void
monitor_wire_create_encode(struct seqmsg *m, const struct monitor_create *r)
{
	seqmsg_init(m, MONITOR_CREATE);
	seqmsg_put_fd(m, r->caller_fd);
	seqmsg_put_str(m, r->name);
	seqmsg_put_u32(m, r->uid);
	seqmsg_put_u32(m, r->gid);
	seqmsg_put_u32(m, (uint32_t)r->n_roots);
	for (size_t i = 0; i < r->n_roots; i++) {
		seqmsg_put_str(m, r->roots[i].path);
		seqmsg_put_u32(m, r->roots[i].read_only);
	}
	seqmsg_put_str(m, r->workdir != NULL ? r->workdir : "");
	seqmsg_put_u32(m, r->slot);
	monitor_wire_put_u64(m, r->pids);
	monitor_wire_put_u64(m, r->memory_bytes);
	seqmsg_put_u32(m, r->cpu_milli);
	monitor_wire_put_u64(m, r->tmpfs_bytes);
	monitor_wire_put_u64(m, r->home_bytes);
	seqmsg_put_u32(m, r->hard_requirement);
	seqmsg_put_u32(m, r->warm);
	seqmsg_put_str(m, r->grant_home != NULL ? r->grant_home : "");
	seqmsg_put_u32(m, (uint32_t)r->n_grants);
	for (size_t i = 0; i < r->n_grants; i++)
		seqmsg_put_str(m, r->grants[i]);
	monitor_wire_create_encode_sockets(m, r);
	seqmsg_put_u32(m, (uint32_t)r->n_files);
	for (size_t i = 0; i < r->n_files; i++) {
		seqmsg_put_str(m, r->files[i].path);
		seqmsg_put_str(m, r->files[i].content);
	}
	if (r->n_files > MONITOR_FILES_MAX)
		m->overflow = true;
}

static int
monitor_wire_create_files(struct seqmsg *m, struct monitor_wire_create *out)
{
	uint32_t n;

	if (seqmsg_get_u32(m, &n) == -1 || n > MONITOR_FILES_MAX)
		return monitor_wire_bad();
	for (uint32_t i = 0; i < n; i++)
		if (seqmsg_get_str(m, &out->files[i].path) == -1 ||
		    seqmsg_get_str(m, &out->files[i].content) == -1 ||
		    strlen(out->files[i].content) > MONITOR_FILE_MAX_BYTES)
			return monitor_wire_bad();
	out->req.files = out->files;
	out->req.n_files = n;
	return 0;
}

/* run_as. Who the caller is travels as its connection, not as numbers:
 * the monitor reads it there itself. */
static int
monitor_wire_create_ids(struct seqmsg *m, struct monitor_wire_create *out)
{
	uint32_t uid, gid;

	if (seqmsg_get_u32(m, &uid) == -1 || seqmsg_get_u32(m, &gid) == -1)
		return monitor_wire_bad();
	out->req.uid = uid;
	out->req.gid = gid;
	return 0;
}

static int
monitor_wire_create_roots(struct seqmsg *m, struct monitor_wire_create *out)
{
	uint32_t n;

	if (seqmsg_get_u32(m, &n) == -1 || n == 0 || n > CORRAL_ROOTS_MAX)
		return monitor_wire_bad();
	for (uint32_t i = 0; i < n; i++)
		if (seqmsg_get_str(m, &out->roots[i].path) == -1 ||
		    monitor_wire_get_bool(m, &out->roots[i].read_only) == -1)
			return monitor_wire_bad();
	out->req.roots = out->roots;
	out->req.n_roots = n;
	return 0;
}

static int
monitor_wire_create_grants(struct seqmsg *m, struct monitor_wire_create *out)
{
	const char *home;
	uint32_t n;

	if (seqmsg_get_str(m, &home) == -1 || seqmsg_get_u32(m, &n) == -1 ||
	    n > CORRAL_GRANTS_MAX)
		return monitor_wire_bad();
	for (uint32_t i = 0; i < n; i++)
		if (seqmsg_get_str(m, &out->grants[i]) == -1)
			return monitor_wire_bad();
	out->req.grant_home = home[0] != '\0' ? home : NULL;
	out->req.grants = out->grants;
	out->req.n_grants = n;
	return 0;
}

int
monitor_wire_create_decode(struct seqmsg *m, struct monitor_wire_create *out)
{
	struct monitor_create *r = &out->req;
	const char *workdir;
	uint32_t slot, cpu;

	memset(out, 0, sizeof(*out));
	if (m->type != MONITOR_CREATE || seqmsg_get_str(m, &r->name) == -1 ||
	    monitor_wire_create_ids(m, out) == -1 || monitor_wire_create_roots(m, out) == -1 ||
	    seqmsg_get_str(m, &workdir) == -1 || seqmsg_get_u32(m, &slot) == -1 ||
	    monitor_wire_get_u64(m, &r->pids) == -1 ||
	    monitor_wire_get_u64(m, &r->memory_bytes) == -1 || seqmsg_get_u32(m, &cpu) == -1 ||
	    monitor_wire_get_u64(m, &r->tmpfs_bytes) == -1 ||
	    monitor_wire_get_u64(m, &r->home_bytes) == -1 ||
	    monitor_wire_get_bool(m, &r->hard_requirement) == -1 ||
	    monitor_wire_get_bool(m, &r->warm) == -1 ||
	    monitor_wire_create_grants(m, out) == -1 ||
	    monitor_wire_create_sockets(m, out) == -1 || monitor_wire_create_files(m, out) == -1 ||
	    seqmsg_get_end(m, 1) == -1)
		return monitor_wire_bad();
	r->caller_fd = seqmsg_take_fd(m, 0);
	r->workdir = workdir[0] != '\0' ? workdir : NULL;
	r->slot = slot;
	r->cpu_milli = cpu;
	return 0;
}

static void
monitor_wire_put_list(struct seqmsg *m, char *const *v, size_t n, size_t max)
{
	n = n < max ? n : max;
	seqmsg_put_u32(m, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		seqmsg_put_str(m, v[i]);
}

/* What the grants copied; lists past their bound are cut (the broker only
 * shows them). */
static void
monitor_wire_creds_encode(struct seqmsg *m, const struct monitor_grants *r)
{
	size_t n = r != NULL ? r->ngrants : 0;

	seqmsg_put_u32(m, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		const struct monitor_grant_applied *a = &r->grants[i];
		size_t nskip = a->nskipped < MONITOR_WIRE_LIST_MAX ? a->nskipped :
		    MONITOR_WIRE_LIST_MAX;

		seqmsg_put_str(m, a->name);
		monitor_wire_put_list(m, a->hosts, a->nhosts, MONITOR_WIRE_LIST_MAX);
		monitor_wire_put_list(m, a->copied, a->ncopied, MONITOR_WIRE_LIST_MAX);
		seqmsg_put_u32(m, (uint32_t)nskip);
		for (size_t k = 0; k < nskip; k++) {
			seqmsg_put_str(m, a->skipped[k].path);
			seqmsg_put_str(m, a->skipped[k].reason);
		}
	}
	monitor_wire_put_list(m, r != NULL ? r->env : NULL, r != NULL ? r->nenv : 0,
	    MONITOR_WIRE_LIST_MAX);
}

/* A list of at most MONITOR_WIRE_LIST_MAX texts into *V (malloc'd). */
static int
monitor_wire_get_list(struct seqmsg *m, char ***v, size_t *n)
{
	const char *s;
	uint32_t count;

	if (seqmsg_get_u32(m, &count) == -1 || count > MONITOR_WIRE_LIST_MAX)
		return monitor_wire_bad();
	*v = xcalloc(count + 1, sizeof(**v));
	for (*n = 0; *n < count; (*n)++) {
		if (seqmsg_get_str(m, &s) == -1)
			return monitor_wire_bad();
		(*v)[*n] = xstrdup(s);
	}
	return 0;
}

static int
monitor_wire_applied_decode(struct seqmsg *m, struct monitor_grant_applied *a)
{
	const char *s, *reason;
	uint32_t n;

	if (seqmsg_get_str(m, &s) == -1)
		return monitor_wire_bad();
	a->name = xstrdup(s);
	if (monitor_wire_get_list(m, &a->hosts, &a->nhosts) == -1 ||
	    monitor_wire_get_list(m, &a->copied, &a->ncopied) == -1 ||
	    seqmsg_get_u32(m, &n) == -1 || n > MONITOR_WIRE_LIST_MAX)
		return monitor_wire_bad();
	a->skipped = xcalloc(n + 1, sizeof(*a->skipped));
	for (; a->nskipped < n; a->nskipped++) {
		if (seqmsg_get_str(m, &s) == -1 || seqmsg_get_str(m, &reason) == -1)
			return monitor_wire_bad();
		a->skipped[a->nskipped].path = xstrdup(s);
		a->skipped[a->nskipped].reason = xstrdup(reason);
	}
	return 0;
}

/* The grants' result into *OUT (NULL when there were none). */
static int
monitor_wire_creds_decode(struct seqmsg *m, struct monitor_grants **out)
{
	struct monitor_grants *r;
	uint32_t n;

	*out = NULL;
	if (seqmsg_get_u32(m, &n) == -1 || n > CORRAL_GRANTS_MAX + 1)
		return monitor_wire_bad();
	r = xcalloc(1, sizeof(*r));
	r->grants = xcalloc(n + 1, sizeof(*r->grants));
	for (; r->ngrants < n; r->ngrants++)
		if (monitor_wire_applied_decode(m, &r->grants[r->ngrants]) == -1) {
			r->ngrants++;
			monitor_grants_free(r);
			return -1;
		}
	if (monitor_wire_get_list(m, &r->env, &r->nenv) == -1) {
		monitor_grants_free(r);
		return -1;
	}
	if (n == 0)
		monitor_grants_free(r);
	else
		*out = r;
	return 0;
}

void
monitor_wire_built_encode(struct seqmsg *m, const struct monitor_built *b)
{
	seqmsg_init(m, MONITOR_BUILT);
	seqmsg_put_u32(m, (uint32_t)b->init_pid);
	seqmsg_put_u32(m, b->gateway.s_addr);
	seqmsg_put_u32(m, b->address.s_addr);
	seqmsg_put_u32(m, (uint32_t)b->host_ifindex);
	seqmsg_put_str(m, b->home);
	seqmsg_put_u32(m, (uint32_t)b->landlock_abi);
	seqmsg_put_u32(m, b->seccomp);
	seqmsg_put_u32(m, (uint32_t)b->n_missing);
	for (size_t i = 0; i < b->n_missing; i++)
		seqmsg_put_str(m, b->missing[i]);
	for (size_t i = 0; i < 3; i++)
		seqmsg_put_str(m, b->limit_source[i] != NULL ? b->limit_source[i] : "none");
	monitor_wire_creds_encode(m, b->creds);
	/* Which event counts follow the six sockets: bit 0 memory, bit 1 pids. */
	seqmsg_put_u32(m, (b->memory_events_fd != -1 ? 1u : 0) | (b->pids_events_fd != -1 ? 2u : 0));
	seqmsg_put_fd(m, b->channel_fd);
	seqmsg_put_fd(m, b->diag_fd);
	seqmsg_put_fd(m, b->connect_fd);
	seqmsg_put_fd(m, b->transparent_fd);
	seqmsg_put_fd(m, b->dns_udp_fd);
	seqmsg_put_fd(m, b->dns_tcp_fd);
	if (b->memory_events_fd != -1)
		seqmsg_put_fd(m, b->memory_events_fd);
	if (b->pids_events_fd != -1)
		seqmsg_put_fd(m, b->pids_events_fd);
}

/* Copies text S into B's store; the copy, or NULL when the store is full. */
static const char *
monitor_wire_store(struct monitor_built *b, size_t *used, const char *s)
{
	size_t len = strlen(s) + 1;
	char *at = b->text_store + *used;

	if (len > sizeof(b->text_store) - *used)
		return NULL;
	memcpy(at, s, len);
	*used += len;
	return at;
}

static int
monitor_wire_built_texts(struct seqmsg *m, struct monitor_built *b)
{
	const char *s;
	size_t used = 0;
	uint32_t n;

	if (seqmsg_get_u32(m, &n) == -1 || n > MONITOR_MISSING_MAX)
		return monitor_wire_bad();
	for (uint32_t i = 0; i < n; i++)
		if (seqmsg_get_str(m, &s) == -1 ||
		    (b->missing[i] = monitor_wire_store(b, &used, s)) == NULL)
			return monitor_wire_bad();
	b->n_missing = n;
	for (size_t i = 0; i < 3; i++)
		if (seqmsg_get_str(m, &s) == -1 ||
		    (b->limit_source[i] = monitor_wire_store(b, &used, s)) == NULL)
			return monitor_wire_bad();
	return 0;
}

int
monitor_wire_built_decode(struct seqmsg *m, struct monitor_built *b)
{
	int *fds[MONITOR_WIRE_BUILT_FDS + MONITOR_WIRE_EVENTS_FDS] = { &b->channel_fd, &b->diag_fd,
	    &b->connect_fd, &b->transparent_fd, &b->dns_udp_fd, &b->dns_tcp_fd,
	    &b->memory_events_fd, &b->pids_events_fd };
	uint32_t pid, gw, addr, ifindex, abi, events;
	size_t nfds, taken = 0;
	const char *home;

	memset(b, 0, sizeof(*b));
	b->map_fd = -1;
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		*fds[i] = -1;
	if (m->type != MONITOR_BUILT || seqmsg_get_u32(m, &pid) == -1 ||
	    seqmsg_get_u32(m, &gw) == -1 || seqmsg_get_u32(m, &addr) == -1 ||
	    seqmsg_get_u32(m, &ifindex) == -1 || ifindex > INT32_MAX ||
	    seqmsg_get_str(m, &home) == -1 || seqmsg_get_u32(m, &abi) == -1 ||
	    monitor_wire_get_bool(m, &b->seccomp) == -1 || monitor_wire_built_texts(m, b) == -1 ||
	    monitor_wire_creds_decode(m, &b->creds) == -1 || seqmsg_get_u32(m, &events) == -1 ||
	    events > 3)
		goto bad;
	nfds = MONITOR_WIRE_BUILT_FDS + (events & 1) + (events >> 1);
	if (seqmsg_get_end(m, nfds) == -1 || monitor_wire_copy(b->home, sizeof(b->home), home) == -1)
		goto bad;
	b->init_pid = (pid_t)pid;
	b->gateway.s_addr = gw;
	b->address.s_addr = addr;
	b->host_ifindex = (int)ifindex;
	b->landlock_abi = (int)abi;
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]) && taken < nfds; i++)
		if (i < MONITOR_WIRE_BUILT_FDS || (events & (1u << (i - MONITOR_WIRE_BUILT_FDS))))
			*fds[i] = seqmsg_take_fd(m, taken++);
	return 0;
bad:
	monitor_grants_free(b->creds);
	b->creds = NULL;
	return monitor_wire_bad();
}

bool
monitor_wire_refusal(const char *why)
{
	return strstr(why, "refused:") != NULL;
}

void
monitor_wire_text_encode(struct seqmsg *m, enum monitor_wire_type type, const char *text,
    int fd)
{
	seqmsg_init(m, type);
	seqmsg_put_str(m, text);
	if (fd != -1)
		seqmsg_put_fd(m, fd);
}

int
monitor_wire_text_decode(struct seqmsg *m, enum monitor_wire_type type,
    const char **text, int *fd)
{
	if (m->type != (uint32_t)type || seqmsg_get_str(m, text) == -1 ||
	    seqmsg_get_end(m, fd != NULL ? 1 : 0) == -1)
		return monitor_wire_bad();
	if (fd != NULL)
		*fd = seqmsg_take_fd(m, 0);
	return 0;
}

void
monitor_wire_list_encode(struct seqmsg *m, enum monitor_wire_type type, uint32_t count,
    const char *const *texts, size_t n)
{
	seqmsg_init(m, type);
	seqmsg_put_u32(m, count);
	seqmsg_put_u32(m, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		seqmsg_put_str(m, texts[i]);
}

int
monitor_wire_list_decode(struct seqmsg *m, enum monitor_wire_type type, size_t max,
    uint32_t *count, void (*each)(const char *text, void *arg), void *arg)
{
	const char *s;
	uint32_t n;

	if (m->type != (uint32_t)type || seqmsg_get_u32(m, count) == -1 ||
	    seqmsg_get_u32(m, &n) == -1 || n > max)
		return monitor_wire_bad();
	for (uint32_t i = 0; i < n; i++) {
		if (seqmsg_get_str(m, &s) == -1)
			return monitor_wire_bad();
		each(s, arg);
	}
	return seqmsg_get_end(m, 0) == -1 ? monitor_wire_bad() : 0;
}

void
monitor_wire_warm_encode(struct seqmsg *m, unsigned slot)
{
	seqmsg_init(m, MONITOR_WARM);
	seqmsg_put_u32(m, slot);
}

int
monitor_wire_warm_decode(struct seqmsg *m, unsigned *slot)
{
	uint32_t v;

	if (m->type != MONITOR_WARM || seqmsg_get_u32(m, &v) == -1 ||
	    seqmsg_get_end(m, 0) == -1)
		return monitor_wire_bad();
	*slot = v;
	return 0;
}

void
monitor_wire_owned_encode(struct seqmsg *m, uid_t uid, gid_t gid)
{
	seqmsg_init(m, MONITOR_OWNED);
	seqmsg_put_u32(m, uid);
	seqmsg_put_u32(m, gid);
}

int
monitor_wire_owned_decode(struct seqmsg *m, uid_t *uid, gid_t *gid)
{
	uint32_t u, g;

	if (m->type != MONITOR_OWNED || seqmsg_get_u32(m, &u) == -1 ||
	    seqmsg_get_u32(m, &g) == -1 || seqmsg_get_end(m, 0) == -1)
		return monitor_wire_bad();
	*uid = u;
	*gid = g;
	return 0;
}
