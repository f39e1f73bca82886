/* The proxy's listeners and tenants; one connection's life is in session.c. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/sock.h"
#include "common/timeutil.h"
#include "egress-proxy/addr.h"
#include "egress-proxy/dnsstub.h"
#include "egress-proxy/exetrust.h"
#include "egress-proxy/http.h"
#include "egress-proxy/namemap.h"
#include "egress-proxy/proxy-int.h"
#include "egress-proxy/relay.h"
#include "egress-proxy/secretstore.h"
#include "egress-proxy/tlsca.h"
#include "policy/index.h"
#include "policy/policy.h"

#define PROXY_ACCEPTS_PER_EVENT 64      /* accepts per readiness, so one listener cannot starve the loop */

static void
proxy_on_reap(evutil_socket_t fd, short what, void *arg)
{
	session_reap(arg);
}

struct proxy *
proxy_new(struct event_base *base, struct resolver *resolver, struct ledger *ledger,
    const struct addr_policy *addrs, const struct proxy_limits *limits)
{
	struct proxy *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->base = base;
	p->resolver = resolver;
	p->ledger = ledger;
	p->addrs = addrs;
	p->limits = *limits;
	if (p->limits.header_max_bytes > PROXY_HEADER_MAX_BYTES)
		p->limits.header_max_bytes = PROXY_HEADER_MAX_BYTES;
	p->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/* Two descriptors for every tunnel: a pipe per tunnel would not let
	 * 5,000 idle tunnels fit under the descriptor limit. */
	if (pipe2(p->pipe, O_NONBLOCK | O_CLOEXEC) == -1)
		p->pipe[0] = p->pipe[1] = -1;
	p->scratch = malloc(RELAY_CHUNK_BYTES);
	p->owner = malloc(sizeof(*p->owner));
	p->req = malloc(sizeof(*p->req));
	p->reaper = event_new(base, -1, 0, proxy_on_reap, p);
	if (p->scratch == NULL || p->owner == NULL || p->req == NULL || p->reaper == NULL) {
		proxy_free(p);
		return NULL;
	}
	return p;
}

void
proxy_free(struct proxy *p)
{
	if (p == NULL)
		return;
	while (p->tenants != NULL)
		proxy_tenant_free(p->tenants);
	session_reap(p);
	if (p->reaper != NULL)
		event_free(p->reaper);
	if (p->reserve_fd != -1)
		close(p->reserve_fd);
	if (p->pipe[0] != -1) {
		close(p->pipe[0]);
		close(p->pipe[1]);
	}
	free(p->scratch);
	free(p->owner);
	free(p->req);
	SSL_CTX_free(p->server_ctx);
	SSL_CTX_free(p->upstream_ctx);
	free(p);
}

/* The tunnel count of INFO's owner, shared by its tenants; NULL when it
 * has no share (root), or out of memory. */
static struct proxy_owner *
proxy_owner_take(struct proxy *p, const struct proxy_tenant_info *info)
{
	struct proxy_owner *o;

	if (info->owner_tunnels == 0)
		return NULL;
	for (o = p->owners; o != NULL; o = o->next)
		if (o->uid == info->owner)
			break;
	if (o == NULL && (o = calloc(1, sizeof(*o))) != NULL) {
		o->uid = info->owner;
		o->next = p->owners;
		p->owners = o;
	}
	if (o != NULL) {
		o->share = info->owner_tunnels;
		o->refs++;
	}
	return o;
}

static void
proxy_owner_drop(struct proxy *p, struct proxy_owner *o)
{
	struct proxy_owner **pp;

	if (o == NULL || --o->refs > 0)
		return;
	for (pp = &p->owners; *pp != NULL; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	free(o);
}

struct proxy_tenant *
proxy_tenant_new(struct proxy *p, const struct proxy_tenant_info *info, struct policy *policy)
{
	struct proxy_tenant *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->proxy = p;
	t->diag_fd = t->map_fd = -1;
	t->host_mode = info->host_mode;
	t->name = strdup(info->name);
	t->session_id = info->session_id != NULL ? strdup(info->session_id) : NULL;
	t->agent = info->agent != NULL ? strdup(info->agent) : NULL;
	t->run_of = info->run_of;
	t->run_of_arg = info->run_of_arg;
	t->denials = denial_ring_new(DENIAL_RING_DEFAULT_ENTRIES);
	t->gen = policy_gen_new(policy, ++p->generations);
	t->owner = proxy_owner_take(p, info);
	t->ca = info->ca != NULL ? info->ca : tlsca_new(info->name, NULL);
	/* The idle limit of tunnels, for a kept-alive terminated connection
	 * and for a response that does not come. */
	t->mitm = (struct mitm_config){ .ca = t->ca, .sessions = mitm_sessions_new(),
	    .idle_ms = p->limits.idle_timeout_s * 1000, .response_ms = p->limits.idle_timeout_s * 1000 };
	if (t->name == NULL || t->denials == NULL || t->gen == NULL || t->ca == NULL ||
	    t->mitm.sessions == NULL ||
	    (info->owner_tunnels != 0 && t->owner == NULL) ||
	    (info->session_id != NULL && t->session_id == NULL) ||
	    (info->agent != NULL && t->agent == NULL)) {
		if (t->gen == NULL)
			policy_free(policy);
		proxy_owner_drop(p, t->owner);
		t->owner = NULL;
		t->proxy = NULL;
		proxy_tenant_free(t);
		return NULL;
	}
	t->next = p->tenants;
	p->tenants = t;
	return t;
}

static void
proxy_listener_free(struct proxy_listener *l)
{
	if (l == NULL)
		return;
	if (l->ev != NULL)
		event_free(l->ev);
	if (l->fd != -1)
		close(l->fd);
	free(l);
}

static void
proxy_tenant_unlink(struct proxy_tenant *t)
{
	struct proxy_tenant **pp;

	if (t->proxy == NULL)
		return;
	for (pp = &t->proxy->tenants; *pp != NULL; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
}

void
proxy_tenant_free(struct proxy_tenant *t)
{
	if (t == NULL)
		return;
	proxy_tenant_unlink(t);
	/* The stub reads the tenant's policy and names: it goes first. */
	dnsstub_free(t->dnsstub);
	proxy_listener_free(t->connect_listener);
	proxy_listener_free(t->transparent_listener);
	while (t->sessions != NULL)
		session_abort(t->sessions);
	if (t->proxy != NULL)
		proxy_owner_drop(t->proxy, t->owner);
	policy_gen_unref(t->gen);
	denial_ring_free(t->denials);
	if (t->diag_fd != -1)
		close(t->diag_fd);
	free(t->trust);
	/* After every session: none reads a value again. */
	secretstore_free(t->secrets);
	mitm_sessions_free(t->mitm.sessions);
	tlsca_free(t->ca);
	free(t->name);
	free(t->session_id);
	free(t->agent);
	free(t);
}

void
proxy_tenant_set_secrets(struct proxy_tenant *t, struct secretstore *store)
{
	secretstore_free(t->secrets);
	t->secrets = store;
	t->mitm.secrets = secretstore_secrets(store, &t->mitm.nsecrets);
}

const struct secretstore *
proxy_tenant_secrets(const struct proxy_tenant *t)
{
	return t->secrets;
}

char *
proxy_tenant_ca_pem(const struct proxy_tenant *t)
{
	return tlsca_cert_pem(t->ca);
}

int
proxy_set_tls(struct proxy *p, const char *upstream_ca_file, char **err)
{
	SSL_CTX *server = mitm_server_ctx_new(err), *upstream;

	if (server == NULL)
		return -1;
	if ((upstream = mitm_upstream_ctx_new(upstream_ca_file, err)) == NULL) {
		SSL_CTX_free(server);
		return -1;
	}
	SSL_CTX_free(p->server_ctx);
	SSL_CTX_free(p->upstream_ctx);
	p->server_ctx = server;
	p->upstream_ctx = upstream;
	return 0;
}

/* True when the client at PEER is inside the listener's client network:
 * a sandbox's listener serves its own address and nobody else. */
static bool
proxy_client_allowed(const struct proxy_listener *l, const struct sockaddr_storage *peer)
{
	struct policy_cidr net = { .family = l->client_net.ss_family,
	    .prefix_len = (uint8_t)l->client_prefix };
	const uint8_t *bytes;

	if (peer->ss_family != l->client_net.ss_family)
		return false;
	if (net.family == AF_INET) {
		memcpy(net.addr, &((const struct sockaddr_in *)&l->client_net)->sin_addr, 4);
		bytes = (const uint8_t *)&((const struct sockaddr_in *)peer)->sin_addr;
	} else {
		memcpy(net.addr, &((const struct sockaddr_in6 *)&l->client_net)->sin6_addr, 16);
		bytes = (const uint8_t *)&((const struct sockaddr_in6 *)peer)->sin6_addr;
	}
	return addr_cidr_contains(&net, net.family, bytes);
}

static void
proxy_on_backoff_end(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_listener *l = arg;
	struct proxy *p = l->tenant->proxy;

	if (p->reserve_fd == -1)
		p->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	event_add(l->ev, NULL);
}

/* Out of descriptors: shed one waiting client with the reserve descriptor
 * and pause accepting instead of spinning on a listener that stays ready. */
static void
proxy_accept_backoff(struct proxy_listener *l)
{
	struct proxy *p = l->tenant->proxy;
	struct timeval tv = { 0, PROXY_ACCEPT_BACKOFF_MS * 1000 };
	int fd;

	log_warnx("%s: out of descriptors; pausing accept for %d ms", __func__,
	    PROXY_ACCEPT_BACKOFF_MS);
	if (p->reserve_fd != -1) {
		close(p->reserve_fd);
		p->reserve_fd = -1;
		if ((fd = accept(l->fd, NULL, NULL)) != -1)
			close(fd);
	}
	event_del(l->ev);
	event_base_once(p->base, -1, EV_TIMEOUT, proxy_on_backoff_end, l, &tv);
}

static void
proxy_on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct proxy_listener *l = arg;
	struct sockaddr_storage peer;
	socklen_t len;
	int fd;

	for (int i = 0; i < PROXY_ACCEPTS_PER_EVENT; i++) {
		len = sizeof(peer);
		fd = accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EMFILE || errno == ENFILE)
				proxy_accept_backoff(l);
			return;
		}
		if (!proxy_client_allowed(l, &peer)) {
			close(fd);
			continue;
		}
		session_start(l->tenant, fd, &peer, l->transparent);
	}
}

static void
proxy_close_keep_errno(int fd)
{
	int saved = errno;

	close(fd);
	errno = saved;
}

/* A listener of T on FD (taken: closed on failure) for clients in
 * CLIENT_NET/CLIENT_PREFIX; NULL with errno. */
static struct proxy_listener *
proxy_listener_new(struct proxy_tenant *t, int fd, const struct sockaddr *client_net,
    unsigned client_prefix, bool transparent)
{
	struct proxy_listener *l;

	if (sock_check(fd, client_net->sa_family, SOCK_STREAM) == -1 ||
	    (l = calloc(1, sizeof(*l))) == NULL) {
		proxy_close_keep_errno(fd);
		return NULL;
	}
	/* The relay writes what it reads at once, often small records (a TLS
	 * handshake's): with Nagle's algorithm a small write after another not
	 * yet acked waits for the client's delayed ACK, 40 ms. Accepted
	 * sockets take the option from their listener: no call per tunnel. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	l->tenant = t;
	l->fd = fd;
	l->port = sock_port(fd);
	l->transparent = transparent;
	l->client_prefix = client_prefix;
	memcpy(&l->client_net, client_net, client_net->sa_family == AF_INET ?
	    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	l->ev = event_new(t->proxy->base, l->fd, EV_READ | EV_PERSIST, proxy_on_accept, l);
	if (l->ev == NULL || event_add(l->ev, NULL) == -1) {
		proxy_listener_free(l);
		errno = ENOMEM;
		return NULL;
	}
	return l;
}

int
proxy_tenant_adopt_connect(struct proxy_tenant *t, int fd, const struct sockaddr *client_net,
    unsigned client_prefix)
{
	struct proxy_listener *l = proxy_listener_new(t, fd, client_net, client_prefix, false);

	if (l == NULL)
		return -1;
	proxy_listener_free(t->connect_listener);
	t->connect_listener = l;
	return 0;
}

int
proxy_tenant_adopt_transparent(struct proxy_tenant *t, int fd,
    const struct sockaddr *client_net, unsigned client_prefix)
{
	struct proxy_listener *l = proxy_listener_new(t, fd, client_net, client_prefix, true);

	if (l == NULL)
		return -1;
	proxy_listener_free(t->transparent_listener);
	t->transparent_listener = l;
	return 0;
}

int
proxy_tenant_listen_connect(struct proxy_tenant *t, const struct sockaddr *addr,
    socklen_t len, const struct sockaddr *client_net, unsigned client_prefix)
{
	int fd = sock_bind(addr, len, SOCK_STREAM);

	return fd == -1 ? -1 : proxy_tenant_adopt_connect(t, fd, client_net, client_prefix);
}

int
proxy_tenant_listen_transparent(struct proxy_tenant *t, const struct sockaddr *addr,
    socklen_t len, const struct sockaddr *client_net, unsigned client_prefix)
{
	int fd = sock_bind(addr, len, SOCK_STREAM);

	return fd == -1 ? -1 : proxy_tenant_adopt_transparent(t, fd, client_net, client_prefix);
}

uint16_t
proxy_tenant_transparent_port(const struct proxy_tenant *t)
{
	return t->transparent_listener != NULL ? t->transparent_listener->port : 0;
}

static int
proxy_tenant_use_stub(struct proxy_tenant *t, struct dnsstub *stub,
    const struct sockaddr *client_net, unsigned client_prefix)
{
	if (stub == NULL)
		return -1;
	dnsstub_set_client_net(stub, client_net, client_prefix);
	dnsstub_free(t->dnsstub);
	t->dnsstub = stub;
	return 0;
}

int
proxy_tenant_listen_dns(struct proxy_tenant *t, const struct sockaddr *addr, socklen_t len,
    const struct sockaddr *client_net, unsigned client_prefix)
{
	return proxy_tenant_use_stub(t, dnsstub_new(t, addr, len), client_net, client_prefix);
}

int
proxy_tenant_adopt_dns(struct proxy_tenant *t, int udp_fd, int tcp_fd,
    const struct sockaddr *client_net, unsigned client_prefix)
{
	return proxy_tenant_use_stub(t, dnsstub_adopt(t, udp_fd, tcp_fd), client_net,
	    client_prefix);
}

uint16_t
proxy_tenant_dns_port(const struct proxy_tenant *t)
{
	return t->dnsstub != NULL ? dnsstub_port(t->dnsstub) : 0;
}

uint16_t
proxy_tenant_connect_port(const struct proxy_tenant *t)
{
	return t->connect_listener != NULL ? t->connect_listener->port : 0;
}

void
proxy_tenant_set_identity(struct proxy_tenant *t, int diag_fd, int map_fd,
    const pid_t *boundary, size_t nboundary)
{
	if (t->diag_fd != -1)
		close(t->diag_fd);
	t->diag_fd = diag_fd;
	t->map_fd = map_fd;
	if (nboundary > IDENTIFY_BOUNDARIES_MAX)
		nboundary = IDENTIFY_BOUNDARIES_MAX;
	t->boundary.n = nboundary;
	if (nboundary > 0)
		memcpy(t->boundary.pids, boundary, nboundary * sizeof(*boundary));
}

int
proxy_tenant_set_exetrust(struct proxy_tenant *t, const struct exetrust *trust)
{
	struct exetrust *copy = malloc(sizeof(*copy));

	if (copy == NULL)
		return -1;
	*copy = *trust;
	free(t->trust);
	t->trust = copy;
	return 0;
}

int
proxy_tenant_set_policy(struct proxy_tenant *t, struct policy *next, bool close_revoked,
    size_t *closed)
{
	struct policy_gen *g = policy_gen_new(next, ++t->proxy->generations);
	struct session *s, *following;
	size_t count = 0;

	if (g == NULL) {
		policy_free(next);
		return -1;
	}
	policy_gen_unref(t->gen);
	t->gen = g;
	for (s = t->sessions; s != NULL; s = following) {
		following = session_next(s);
		if (session_policy_changed(s, close_revoked))
			count++;
	}
	if (closed != NULL)
		*closed = count;
	return 0;
}

const char *
proxy_tenant_name_for(struct proxy_tenant *t, const struct sockaddr_storage *addr,
    uint16_t port, const struct policy_gen *g)
{
	const char *names[NAMEMAP_LOOKUP_MAX_NAMES];
	const uint8_t *bytes;
	struct policy_match m;
	size_t n;

	if (t->dnsstub == NULL)
		return NULL;
	bytes = addr->ss_family == AF_INET ?
	    (const uint8_t *)&((const struct sockaddr_in *)addr)->sin_addr :
	    (const uint8_t *)&((const struct sockaddr_in6 *)addr)->sin6_addr;
	n = namemap_lookup(dnsstub_namemap(t->dnsstub), addr->ss_family, bytes, time_mono_ns(),
	    names, NAMEMAP_LOOKUP_MAX_NAMES);
	/* Several names may share the address: the first the policy allows
	 * on this port names the connection. */
	for (size_t i = 0; i < n; i++)
		if (policy_index_decide(g->index, names[i], port, NULL, 0, &m) != POLICY_DENY_NO_RULE)
			return names[i];
	return NULL;
}

const struct policy *
proxy_tenant_policy(const struct proxy_tenant *t)
{
	return t->gen->policy;
}

size_t
proxy_tenant_denials(const struct proxy_tenant *t, int64_t since_us, struct denial *out,
    size_t max)
{
	return denial_ring_since(t->denials, since_us, out, max);
}

/* The host path T's policy lists under NAME, or NAME when it lists none. */
static const char *
proxy_tenant_socket_path(const struct proxy_tenant *t, const char *name)
{
	const struct policy *p = proxy_tenant_policy(t);

	for (size_t i = 0; p != NULL && i < p->nunix_sockets; i++)
		if (p->unix_sockets[i].name != NULL && strcmp(p->unix_sockets[i].name, name) == 0)
			return p->unix_sockets[i].path;
	return name;
}

/* A record of EVENT about T's sandbox: its name, session and agent set,
 * every other field null. */
static void
proxy_tenant_record_init(const struct proxy_tenant *t, struct ledger_record *rec,
    enum ledger_event event)
{
	ledger_record_init(rec, event);
	rec->sandbox = t->host_mode ? NULL : t->name;
	rec->session_id = t->session_id;
	rec->agent = t->agent;
}

void
proxy_tenant_record_unix(struct proxy_tenant *t, const struct proxy_unix_event *e)
{
	struct ledger_record rec;

	proxy_tenant_record_init(t, &rec, LEDGER_EVENT_UNIX);
	rec.pid = e->pid >= 0 ? e->pid : LEDGER_NULL_INT;
	rec.binary = e->binary;
	rec.host = e->path;
	rec.decision = e->allowed ? LEDGER_DECISION_ALLOW : LEDGER_DECISION_DENY;
	rec.policy = e->allowed && e->listed != NULL ? proxy_tenant_socket_path(t, e->listed) : NULL;
	rec.reason = e->allowed ? NULL : PROXY_UNIX_REFUSED_REASON;
	/* After the fact: the connect was made or refused in the sandbox. A
	 * full queue loses the line, which the log says. */
	if (ledger_write(t->proxy->ledger, &rec) == -1)
		log_warnx("sandbox %s: a unix socket record could not be written", t->name);
	if (!e->allowed)
		denial_ring_add(t->denials, time_now_us(), e->path, 0, e->binary, e->pid,
		    PROXY_UNIX_REFUSED_REASON);
}

void
proxy_tenant_record_bypass(struct proxy_tenant *t, const char *ip, int port, const char *reason,
    uint32_t bytes)
{
	struct ledger_record rec;

	proxy_tenant_record_init(t, &rec, LEDGER_EVENT_BYPASS);
	rec.ip = ip;
	rec.port = port >= 0 ? port : LEDGER_NULL_INT;
	rec.reason = reason;
	rec.bytes_up = bytes;
	/* After the fact, like a unix record: the fence rejected the packet. */
	if (ledger_write(t->proxy->ledger, &rec) == -1)
		log_warnx("sandbox %s: a bypass record could not be written", t->name);
	denial_ring_add(t->denials, time_now_us(), ip, port >= 0 ? (uint16_t)port : 0, NULL, -1,
	    reason);
}

int
proxy_tenant_record_inbound(struct proxy_tenant *t, const struct proxy_inbound_event *e)
{
	struct ledger_record rec;
	bool opening = e->decision != LEDGER_DECISION_NONE;

	proxy_tenant_record_init(t, &rec, LEDGER_EVENT_INBOUND);
	rec.id = e->id;
	rec.pid = e->pid > 0 ? e->pid : LEDGER_NULL_INT;
	rec.host = e->listen;
	rec.port = e->port;
	rec.ip = e->ip;
	rec.decision = e->decision;
	rec.reason = e->reason;
	if (!opening) {
		rec.bytes_up = e->bytes_up;
		rec.bytes_down = e->bytes_down;
		rec.duration_ms = e->duration_ms;
	}
	return ledger_write(t->proxy->ledger, &rec);
}

/* A lifecycle record of T's sandbox: WHAT, about RUN or POLICY (either NULL). */
static int
proxy_tenant_lifecycle(struct proxy_tenant *t, const char *what, const char *run,
    const char *policy)
{
	struct ledger_record rec;

	proxy_tenant_record_init(t, &rec, LEDGER_EVENT_LIFECYCLE);
	rec.run = run;
	rec.policy = policy;
	rec.reason = what;
	return ledger_write(t->proxy->ledger, &rec);
}

int
proxy_tenant_record_lifecycle(struct proxy_tenant *t, const char *what, const char *run)
{
	return proxy_tenant_lifecycle(t, what, run, NULL);
}

int
proxy_tenant_record_lifecycle_policy(struct proxy_tenant *t, const char *what,
    const char *policy)
{
	return proxy_tenant_lifecycle(t, what, NULL, policy);
}

unsigned
proxy_tunnels_open(const struct proxy *p)
{
	return p->tunnels;
}

unsigned
proxy_tenant_tunnels(const struct proxy_tenant *t)
{
	return t->tunnels;
}
