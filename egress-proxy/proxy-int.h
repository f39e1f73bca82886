/* What the proxy's own files share: proxy.c (listeners, tenants), session.c
 * (one connection's life) and reply.c (what a refused client reads). */
#ifndef CORRAL_PROXY_INT_H
#define CORRAL_PROXY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress-proxy/identify.h"
#include "egress-proxy/ledger.h"
#include "egress-proxy/mitm.h"
#include "egress-proxy/policygen.h"
#include "egress-proxy/proxy.h"

struct event;
struct http_request;
struct session;

struct proxy_listener {
	struct proxy_tenant *tenant;
	bool transparent;               /* the fence's redirected connections */
	int fd;
	uint16_t port;
	struct event *ev;
	struct sockaddr_storage client_net;     /* who may connect */
	unsigned client_prefix;
};

/* The tunnels of one owner's tenants together, against its share. */
struct proxy_owner {
	uid_t uid;
	unsigned tunnels;
	unsigned share;                 /* 0: none */
	unsigned refs;                  /* its tenants */
	struct proxy_owner *next;
};

struct proxy_tenant {
	struct proxy *proxy;
	struct proxy_owner *owner;
	char *name;
	char *session_id;
	char *agent;
	proxy_run_of_fn run_of;
	void *run_of_arg;
	bool host_mode;                         /* the host's own processes: no sandbox */
	struct policy_gen *gen;
	struct denial_ring *denials;
	struct proxy_listener *connect_listener;
	struct proxy_listener *transparent_listener;
	struct dnsstub *dnsstub;                /* the tenant's DNS stub, or NULL */
	int diag_fd;                            /* identification: -1 when off */
	int map_fd;
	struct identify_boundary boundary;
	struct exetrust *trust;                 /* what binary rules may match; NULL: host mode */
	struct tlsca *ca;                       /* its CA, for the endpoints it terminates */
	struct mitm_config mitm;                /* what its terminated connections work with */
	struct secretstore *secrets;            /* its secrets (mitm.secrets points in), or NULL */
	struct session *sessions;               /* every open connection */
	unsigned tunnels;
	struct proxy_tenant *next;
};

/* Timeouts every session arms with the same duration are libevent common
 * timeouts (a queue per duration instead of the loop's heap): the
 * handshake, connect, silent-client and idle times. */
#define PROXY_TIMEOUTS_MAX 4

struct proxy_timeout {
	uint64_t ms;
	const struct timeval *tv;       /* libevent's token for MS; NULL: slot free */
};

struct proxy {
	struct event_base *base;
	struct resolver *resolver;
	struct ledger *ledger;
	const struct addr_policy *addrs;
	struct proxy_limits limits;
	char *scratch;                          /* RELAY_CHUNK_BYTES, shared by every relay */
	int pipe[2];                            /* the relays' splice pipe (-1: they copy) */
	struct http_request *req;               /* a head being parsed, shared by every session */
	struct identify_owner *owner;           /* one identification's answer, reused */
	unsigned tunnels;
	uint64_t generations;
	int reserve_fd;                         /* given back on EMFILE so accept can shed */
	struct event *accept_backoff;
	struct proxy_tenant *tenants;
	struct proxy_owner *owners;             /* of the tenants that have a share */
	struct session *closing;                /* freed from the loop by REAPER */
	struct event *reaper;
	struct proxy_timeout timeouts[PROXY_TIMEOUTS_MAX];     /* made by session.c on first use */
	/* TLS of terminated endpoints (proxy_set_tls); NULL: they are refused */
	SSL_CTX *server_ctx, *upstream_ctx;
};

/* session.c */
/* Takes over the accepted FD of a client of T. */
void session_start(struct proxy_tenant *t, int fd, const struct sockaddr_storage *peer,
    bool transparent);
/* The name the DNS stub gave T for ADDR that G allows on PORT; NULL if none. */
const char *proxy_tenant_name_for(struct proxy_tenant *t, const struct sockaddr_storage *addr,
    uint16_t port, const struct policy_gen *g);
/* Closes S now (teardown of its tenant): no callback of it runs again. */
void session_abort(struct session *s);
/* The tenant's policy changed: S is closed if its TLS is terminated (its
 * requests were judged by the rules it opened under), or, with
 * CLOSE_REVOKED, if the new policy would refuse its tunnel or terminate
 * it; true if it was. A session still being decided, resolved or dialled
 * is decided again when it connects (session.c). */
bool session_policy_changed(struct session *s, bool close_revoked);
/* Frees the sessions marked closing (from the loop, never from their own callbacks). */
void session_reap(struct proxy *p);
struct session *session_next(const struct session *s);

/* reply.c */
/* A 403 into OUT whose JSON body names the host, port, binary and reason, and
 * the command that would allow it; returns its length. */
int reply_forbidden(char *out, size_t size, const char *host, int port, const char *binary,
    const char *reason, const char *sandbox);
/* A short error response (400, 405, 431, 502, 503, 504, 505) into OUT. */
int reply_error(char *out, size_t size, int status, const char *reason);
/* The page of SANDBOX: status 200 with its N denials D (oldest first) and
 * a suggestion for each host, port and binary refused by name; 405 for a
 * method other than GET or HEAD (BODY false: HEAD, the head alone). Its
 * length, or -1 when it does not fit SIZE. */
struct denial;
int reply_info(char *out, size_t size, const char *sandbox, const struct denial *d, size_t n,
    bool body);

#define REPLY_MAX_BYTES 2048
/* The sandbox's own page on its gateway (corral(1), "FROM INSIDE"): its
 * recent denials and what would allow them, as JSON. */
#define PROXY_INFO_HOST "corral.internal"
#define PROXY_INFO_PORT 80
#define PROXY_INFO_DENIALS_MAX 50       /* the newest, so the answer fits one send */
#define PROXY_INFO_MAX_BYTES (96 * 1024)
#define REPLY_CONNECTED "HTTP/1.1 200 Connection established\r\n\r\n"

#endif
