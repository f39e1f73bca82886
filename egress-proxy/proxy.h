/* The egress proxy: listeners, tenants and the connections between them.
 * A tenant is one sandbox (or, in host mode, the host's own processes): a
 * name, its policy generation, its denial ring, its tunnels. The proxy
 * runs in the broker's libevent loop, unprivileged. */
#ifndef CORRAL_PROXY_H
#define CORRAL_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "egress-proxy/denials.h"
#include "egress-proxy/http.h"
#include "egress-proxy/ledger.h"

struct addr_policy;
struct event_base;
struct ledger;
struct policy;
struct proxy;
struct proxy_tenant;
struct resolver;
struct tlsca;

/* Limits, each with a sane default in proxy_limits_default(); corrald.yaml's
 * egress section sets them (the configuration holds this struct). */
struct proxy_limits {
	unsigned header_max_bytes;      /* a request head; at most PROXY_HEADER_MAX_BYTES */
	unsigned handshake_timeout_ms;  /* accept to a complete head (or ClientHello) */
	unsigned connect_timeout_ms;    /* dialling the upstream */
	unsigned idle_timeout_s;        /* a tunnel with nothing moving */
	unsigned max_tunnels_per_tenant;
	unsigned max_tunnels;           /* every tenant together */
};

#define PROXY_HANDSHAKE_TIMEOUT_DEFAULT_MS 10000
#define PROXY_CONNECT_TIMEOUT_DEFAULT_MS 10000
#define PROXY_IDLE_TIMEOUT_DEFAULT_S 300
#define PROXY_TUNNELS_PER_TENANT_DEFAULT 512
#define PROXY_TUNNELS_DEFAULT 8192
#define PROXY_ACCEPT_BACKOFF_MS 100     /* pause of accept after EMFILE */
#define PROXY_SILENT_CLIENT_MS 1000     /* transparent: silence after which the server may speak first */

/* Fills L with the defaults (inline: the configuration, which holds the
 * limits, is loaded without the proxy). */
static inline void
proxy_limits_default(struct proxy_limits *l)
{
	l->header_max_bytes = PROXY_HEADER_MAX_BYTES;
	l->handshake_timeout_ms = PROXY_HANDSHAKE_TIMEOUT_DEFAULT_MS;
	l->connect_timeout_ms = PROXY_CONNECT_TIMEOUT_DEFAULT_MS;
	l->idle_timeout_s = PROXY_IDLE_TIMEOUT_DEFAULT_S;
	l->max_tunnels_per_tenant = PROXY_TUNNELS_PER_TENANT_DEFAULT;
	l->max_tunnels = PROXY_TUNNELS_DEFAULT;
}

/* A proxy on BASE resolving with RESOLVER, recording to LEDGER, checking
 * addresses with ADDRS; none of them is owned. NULL if out of memory. */
struct proxy *proxy_new(struct event_base *base, struct resolver *resolver,
    struct ledger *ledger, const struct addr_policy *addrs, const struct proxy_limits *limits);
/* Closes every listener and connection and frees P; NULL is fine. */
void proxy_free(struct proxy *p);
/* Lets P terminate the TLS of the endpoints that ask for it
 * (corral-policy(5), "tls: terminate"): upstreams are verified against the
 * system's trust store and UPSTREAM_CA_FILE (PEM; NULL: none). -1 with a
 * one-line reason in *ERR (malloc'd). Until it succeeds such connections
 * are refused (tls_unavailable). */
int proxy_set_tls(struct proxy *p, const char *upstream_ca_file, char **err);

/* Who a tenant is, for the ledger. */
/* The run (a shell run's request id, or an exec's name) that the process
 * PID, with its ANCESTORS (N, parent first, all in the initial pid
 * namespace), belongs to; NULL when none is known. The text lives until
 * the next call. */
typedef const char *(*proxy_run_of_fn)(void *arg, pid_t pid, const pid_t *ancestors,
    size_t n);

struct proxy_tenant_info {
	const char *name;               /* the sandbox's name, or "host" */
	const char *session_id;         /* may be NULL */
	const char *agent;              /* may be NULL */
	bool host_mode;                 /* the host's own processes: the ledger's sandbox is null */
	uid_t owner;                    /* who made it: tenants of one owner share a tunnel count */
	unsigned owner_tunnels;         /* that owner's share of tunnels; 0: none (root) */
	proxy_run_of_fn run_of;         /* the ledger's run of an identified process; may be NULL */
	void *run_of_arg;
	struct tlsca *ca;               /* its CA (taken, also on failure); NULL: one is made */
};

/* A tenant under POLICY (owned from now on). NULL if out of memory. */
struct proxy_tenant *proxy_tenant_new(struct proxy *p, const struct proxy_tenant_info *info,
    struct policy *policy);
/* Closes the tenant's listeners and tunnels and frees it. */
void proxy_tenant_free(struct proxy_tenant *t);
struct secretstore;
/* Gives T the secrets of STORE (taken; NULL: none), swapped in toward
 * their hosts, whose connections are terminated; the store is wiped when
 * T is freed. Once, before T serves: connections borrow its memory. */
void proxy_tenant_set_secrets(struct proxy_tenant *t, struct secretstore *store);
/* T's secrets, or NULL. */
const struct secretstore *proxy_tenant_secrets(const struct proxy_tenant *t);
/* T's own CA certificate (PEM, malloc'd): what the sandbox trusts for the
 * endpoints the proxy terminates; NULL when out of memory. */
char *proxy_tenant_ca_pem(const struct proxy_tenant *t);

/* Listens for CONNECT (and absolute-form plain HTTP) requests of T at
 * ADDR. Clients are accepted only from CLIENT_NET/CLIENT_PREFIX (the
 * sandbox's own address; loopback in host mode). -1 with errno. */
int proxy_tenant_listen_connect(struct proxy_tenant *t, const struct sockaddr *addr,
    socklen_t len, const struct sockaddr *client_net, unsigned client_prefix);
/* The port a listener of T got (after binding port 0); 0 if none. */
uint16_t proxy_tenant_connect_port(const struct proxy_tenant *t);

/* Listens at ADDR for T's connections that the fence redirected (they
 * keep their original destination); clients as for the CONNECT listener. */
int proxy_tenant_listen_transparent(struct proxy_tenant *t, const struct sockaddr *addr,
    socklen_t len, const struct sockaddr *client_net, unsigned client_prefix);
uint16_t proxy_tenant_transparent_port(const struct proxy_tenant *t);

/* Serves T's DNS stub (UDP and TCP) at ADDR for clients as above. */
int proxy_tenant_listen_dns(struct proxy_tenant *t, const struct sockaddr *addr, socklen_t len,
    const struct sockaddr *client_net, unsigned client_prefix);
uint16_t proxy_tenant_dns_port(const struct proxy_tenant *t);

/* The same on sockets bound elsewhere (the monitor binds a sandbox's,
 * whose DNS port needs privilege): FD is a listening TCP socket, UDP_FD
 * and TCP_FD a bound UDP socket and a listening TCP one on one port. The
 * descriptors are checked and taken (closed on failure too). */
int proxy_tenant_adopt_connect(struct proxy_tenant *t, int fd, const struct sockaddr *client_net,
    unsigned client_prefix);
int proxy_tenant_adopt_transparent(struct proxy_tenant *t, int fd,
    const struct sockaddr *client_net, unsigned client_prefix);
int proxy_tenant_adopt_dns(struct proxy_tenant *t, int udp_fd, int tcp_fd,
    const struct sockaddr *client_net, unsigned client_prefix);

/* Lets T identify the binary behind a connection (corral-policy(5),
 * "BINARIES"): DIAG_FD is a NETLINK_SOCK_DIAG socket in the clients' network
 * namespace (T owns it from now on), MAP_FD the identification map (not
 * owned), BOUNDARY the pids where ancestors stop (corral-init, the shell). */
void proxy_tenant_set_identity(struct proxy_tenant *t, int diag_fd, int map_fd,
    const pid_t *boundary, size_t nboundary);
struct exetrust;
/* Lets T's binary-scoped entries match only the executables TRUST allows
 * (a copy is taken; exetrust.h). A sandbox's tenant is given one before it
 * serves; one without (the host's processes) matches by path alone. -1
 * when out of memory (nothing changed). */
int proxy_tenant_set_exetrust(struct proxy_tenant *t, const struct exetrust *trust);

/* Swaps T's policy for NEXT (owned from now on; already validated) at
 * once: connections decided from now on use it. With CLOSE_REVOKED, open
 * tunnels that NEXT would refuse are closed (and recorded); the others
 * keep running. *CLOSED (may be NULL) counts the tunnels closed. -1 when
 * out of memory: T keeps its policy and NEXT is freed. */
int proxy_tenant_set_policy(struct proxy_tenant *t, struct policy *next, bool close_revoked,
    size_t *closed);
/* T's current policy (valid until the next proxy_tenant_set_policy()). */
const struct policy *proxy_tenant_policy(const struct proxy_tenant *t);

/* T's refusals since SINCE_US, oldest first; see denials.h. */
size_t proxy_tenant_denials(const struct proxy_tenant *t, int64_t since_us,
    struct denial *out, size_t max);
/* T's open tunnels. */
unsigned proxy_tenant_tunnels(const struct proxy_tenant *t);
/* The tunnels open through P, every tenant's together. */
unsigned proxy_tunnels_open(const struct proxy *p);

/* A Unix socket connect decided in T's sandbox by corral-init
 * (broker/init/sockguard.h): a host socket refused, or a listed one
 * connected. */
#define PROXY_UNIX_REFUSED_REASON "unix_socket_not_allowed"
struct proxy_unix_event {
	bool allowed;                   /* a listed socket, connected */
	const char *path;               /* as the process named it, absolute */
	const char *listed;             /* the listed socket's name (allowed), or NULL */
	const char *binary;             /* its executable inside, or NULL */
	int64_t pid;                    /* in the host's pid namespace; -1: unknown */
};
/* Writes E to the ledger (a unix record, corral-ledger(5)) and, when
 * refused, to T's denials. */
void proxy_tenant_record_unix(struct proxy_tenant *t, const struct proxy_unix_event *e);

/* Writes a bypass record of T's sandbox (corral-ledger(5)): a packet to IP
 * (PORT, or -1 when its protocol has none) of BYTES that the fence
 * rejected for REASON ("udp_not_allowed"), and adds it to T's denials. */
void proxy_tenant_record_bypass(struct proxy_tenant *t, const char *ip, int port,
    const char *reason, uint32_t bytes);

/* A connection from the host into T's sandbox through corral forward:
 * its opening (DECISION allow or deny) or its end (DECISION none, with
 * the byte counts and duration). */
struct proxy_inbound_event {
	uint64_t id;                    /* the same in the opening and the end */
	enum ledger_decision decision;
	const char *listen;             /* the forward's host side, as its CLI listens */
	int port;                       /* on the sandbox's loopback */
	const char *ip;                 /* the loopback address dialled inside, or NULL */
	int64_t pid;                    /* the forwarding CLI, as the host sees it */
	const char *reason;             /* a refusal's, or why it ended; NULL: none */
	int64_t bytes_up, bytes_down;   /* the end only: sent by the sandbox, received */
	int64_t duration_ms;
};
/* Writes E as an inbound record of T's sandbox (corral-ledger(5)); -1
 * when the ledger refused it (an opening is then refused too). */
int proxy_tenant_record_inbound(struct proxy_tenant *t, const struct proxy_inbound_event *e);

/* Writes a lifecycle record of T's sandbox (corral-ledger(5)): WHAT is
 * its reason ("created", "deleted", "memory_limit", "pids_limit"), RUN
 * the run it concerns or NULL. -1 when the ledger refused it. */
int proxy_tenant_record_lifecycle(struct proxy_tenant *t, const char *what, const char *run);
/* The same with POLICY ("strict#3": the profile and its version) in
 * place of a run: the record of a policy put in force by a reload. */
int proxy_tenant_record_lifecycle_policy(struct proxy_tenant *t, const char *what,
    const char *policy);

#endif
