/* The monitor's messages (DESIGN section 1): the broker asks over a
 * SOCK_SEQPACKET socketpair, the monitor answers each request in order.
 * They ride the exec channel's codec (common/initproto.h: one
 * datagram per message, fields in a fixed order, descriptors by
 * SCM_RIGHTS), with their own types. The monitor decodes what the broker
 * sends as untrusted: every count is bounded here and every field is
 * checked again by monitor_create. Library-like: nothing here logs.
 *
 *   monitor -> broker  HELLO    set-up result, instance; fd: the identification map
 *   broker -> monitor  CREATE   a sandbox to build; fd: the client's connection
 *                                                        -> BUILT (6 fds) or FAILED
 *   broker -> monitor  DESTROY  a sandbox's name         -> DONE
 *   broker -> monitor  REAP     the live sandboxes       -> REAPED (what went)
 *   broker -> monitor  OWNER    a path; fd: the client's connection (root only)
 *                                                        -> OWNED or FAILED
 *   broker -> monitor  FIREWALL ""                       -> FIREWALL_IS (one line)
 * Closing the socket asks the monitor to tear everything down and exit. */
#ifndef CORRAL_MONITOR_WIRE_H
#define CORRAL_MONITOR_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/initproto.h"
#include "broker/monitor/privop.h"

#define MONITOR_WIRE_ROOTS_MAX 32       /* roots of one sandbox */
#define MONITOR_WIRE_LIVE_MAX 4096      /* live names in one REAP */
#define MONITOR_WIRE_REAPED_MAX 256     /* removals listed in one REAPED (all are counted) */
#define MONITOR_WIRE_TEXT_MAX 512       /* a reason */
#define MONITOR_WIRE_LIST_MAX 64        /* hosts, files, skips, env entries of one grant's report */
#define MONITOR_WIRE_BUILT_FDS 6        /* channel, diag, connect, transparent, dns udp, dns tcp */

enum monitor_wire_type {
	MONITOR_HELLO = 64,
	MONITOR_CREATE,
	MONITOR_BUILT,
	MONITOR_FAILED,
	MONITOR_DESTROY,
	MONITOR_DONE,
	MONITOR_REAP,
	MONITOR_REAPED,
	MONITOR_OWNER,
	MONITOR_OWNED,
	MONITOR_FIREWALL,
	MONITOR_FIREWALL_IS,
};

/* What the monitor says once it is set up. */
struct monitor_hello {
	bool sandboxes;                 /* sandboxes can be built */
	char why[MONITOR_WIRE_TEXT_MAX];        /* else, why not */
	char instance[MONITOR_INSTANCE_MAX_BYTES];
	bool host_watched;              /* host_proxy.cgroup is watched */
	char host_why[MONITOR_WIRE_TEXT_MAX];   /* else, why not ("" when not asked) */
	int map_fd;                     /* the identification map, or -1 */
};

/* A decoded CREATE: the request and the storage its pointers lead into.
 * Its caller_* fields are left empty: the monitor fills them from
 * req.caller_fd. */
struct monitor_wire_create {
	struct monitor_create req;
	struct spawn_root roots[MONITOR_WIRE_ROOTS_MAX];
	const char *grants[MONITOR_GRANTS_MAX];
};

/* A decoded REAPED. */
struct monitor_wire_reaped {
	uint32_t count;                 /* everything removed */
	size_t n;                       /* of which listed */
	char what[MONITOR_WIRE_REAPED_MAX][96];
};

void monitor_wire_hello_encode(struct seqmsg *m, const struct monitor_hello *h);
int monitor_wire_hello_decode(struct seqmsg *m, struct monitor_hello *h);

void monitor_wire_create_encode(struct seqmsg *m, const struct monitor_create *r);
/* Strings of OUT point into M: keep M until OUT is used. OUT->req.caller_fd
 * is taken from M (the caller closes it). */
int monitor_wire_create_decode(struct seqmsg *m, struct monitor_wire_create *out);

/* BUILT carries B's descriptors (attached, not owned). */
void monitor_wire_built_encode(struct seqmsg *m, const struct monitor_built *b);
/* Takes the descriptors into B; its texts are copied into B, the grants'
 * result allocated (B->creds: credcopy_result_free it). */
int monitor_wire_built_decode(struct seqmsg *m, struct monitor_built *b);

/* A message of TYPE holding one text (FAILED, DESTROY, DONE with "" on
 * success, OWNER: then FD is attached, else -1) or a list of texts (REAP,
 * REAPED after a count). */
void monitor_wire_text_encode(struct seqmsg *m, enum monitor_wire_type type,
    const char *text, int fd);
/* *FD (may be NULL when none is expected) takes the attached descriptor. */
int monitor_wire_text_decode(struct seqmsg *m, enum monitor_wire_type type,
    const char **text, int *fd);
void monitor_wire_list_encode(struct seqmsg *m, enum monitor_wire_type type,
    uint32_t count, const char *const *texts, size_t n);
/* Calls EACH for every text (at most MAX); -1 when malformed or too many. */
int monitor_wire_list_decode(struct seqmsg *m, enum monitor_wire_type type,
    size_t max, uint32_t *count, void (*each)(const char *text, void *arg), void *arg);

/* OWNED: the owner of the path asked. */
void monitor_wire_owned_encode(struct seqmsg *m, uid_t uid, gid_t gid);
int monitor_wire_owned_decode(struct seqmsg *m, uid_t *uid, gid_t *gid);

#endif
