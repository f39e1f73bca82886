/* The host mode's tenant, reloads and shutdown. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/api.h"
#include "broker/conf.h"
#include "broker/bypass.h"
#include "broker/daemon.h"
#include "broker/forward.h"
#include "broker/metrics.h"
#include "broker/privsep.h"
#include "broker/registry.h"
#include "broker/reload.h"
#include "broker/sandbox.h"
#include "broker/warm.h"
#include "broker/shell.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/sock.h"
#include "common/xmalloc.h"
#include "egress-proxy/addr.h"
#include "egress-proxy/identify.h"
#include "egress-proxy/ledger.h"
#include "egress-proxy/proxy.h"
#include "egress-proxy/resolve.h"
#include "policy/load.h"
#include "policy/profile.h"

/* Loads the host mode's policy (a file, else a profile of those loaded),
 * logging every error; NULL when it does not load. */
static struct policy *
daemon_host_policy_load(const struct daemon *d)
{
	struct policy_diags diags;
	struct policy *p;
	char *message = NULL, *text;

	policy_diags_init(&diags);
	p = reload_host_policy(d->cfg, d->profiles, &diags, &message);
	if (p == NULL && message != NULL)
		log_error("host proxy: %s", message);
	if (p == NULL && (text = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE)) != NULL) {
		for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n"))
			log_error("%s", line);
		free(text);
	}
	free(message);
	policy_diags_clear(&diags);
	return p;
}

/* Parses "127.0.0.1:3128" or "[::1]:3128" into SA; -1 when malformed. */
static int
daemon_parse_listen(const char *text, struct sockaddr_storage *sa, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(text, ':');
	unsigned long port;
	char *end;

	if (colon == NULL || (size_t)(colon - text) >= sizeof(host))
		return -1;
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = '\0';
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || port > 65535 || colon[1] == '\0')
		return -1;
	memset(sa, 0, sizeof(*sa));
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;

		host[strlen(host) - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return inet_pton(AF_INET6, host + 1, &s6->sin6_addr) == 1 ? 0 : -1;
	}
	((struct sockaddr_in *)sa)->sin_family = AF_INET;
	((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
	*len = sizeof(struct sockaddr_in);
	return inet_pton(AF_INET, host, &((struct sockaddr_in *)sa)->sin_addr) == 1 ? 0 : -1;
}

/* Host mode serves the host's own processes: clients must come from loopback. */
static void
daemon_loopback_net(int family, struct sockaddr_storage *net, unsigned *prefix)
{
	memset(net, 0, sizeof(*net));
	net->ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		((struct sockaddr_in *)net)->sin_addr.s_addr = htonl(INADDR_LOOPBACK & 0xff000000);
		*prefix = 8;
	} else {
		((struct sockaddr_in6 *)net)->sin6_addr = in6addr_loopback;
		*prefix = 128;
	}
}

/* Binds host mode's socket of TYPE at WHERE (the config's KEY); -1 (logged). */
static int
daemon_host_bind(const char *key, const char *where, int type, int *fd)
{
	struct sockaddr_storage sa;
	socklen_t len;

	if (where == NULL)
		return 0;
	if (daemon_parse_listen(where, &sa, &len) == -1) {
		log_error("host_proxy.%s %s: not ADDRESS:PORT", key, where);
		return -1;
	}
	if ((*fd = sock_bind((struct sockaddr *)&sa, len, type)) == -1) {
		log_error("host proxy: cannot listen on %s for %s: %s", where, key,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* The DNS stub's TCP socket on the port its UDP one got. */
static int
daemon_host_bind_dns(struct daemon *d)
{
	const char *where = d->cfg->host_proxy.dns;
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (daemon_host_bind("dns", where, SOCK_DGRAM, &d->socks.host_dns_udp) == -1)
		return -1;
	if (where == NULL)
		return 0;
	if (getsockname(d->socks.host_dns_udp, (struct sockaddr *)&sa, &len) == -1 ||
	    (d->socks.host_dns_tcp = sock_bind((struct sockaddr *)&sa, len, SOCK_STREAM)) == -1) {
		log_error("host proxy: cannot listen on %s (TCP) for dns: %s", where,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* Creates the folder that holds PATH when missing (/run/corral). When
 * corrald is root, it must be root's and writable by root alone: the
 * socket is made there as root. */
static int
daemon_socket_dir(const char *path)
{
	char dir[4096];
	struct stat st;
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -1;
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return -1;
	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode))
		return -1;
	if (geteuid() == 0 && (st.st_uid != 0 || (st.st_mode & 022) != 0)) {
		log_error("the control socket's folder %s must be root's and writable by root "
		    "alone", dir);
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
daemon_bind(struct daemon *d, gid_t group)
{
	const struct config_host_proxy *hp = &d->cfg->host_proxy;

	d->socks = (struct daemon_sockets){ -1, -1, -1, -1, -1 };
	if (daemon_socket_dir(d->cfg->socket) == -1) {
		log_error("cannot create the folder of %s: %s", d->cfg->socket, strerror(errno));
		return -1;
	}
	if ((d->socks.api = api_listen(d->cfg->socket, group)) == -1)
		return -1;
	if (!hp->enabled)
		return 0;
	if (daemon_host_bind("listen", hp->listen, SOCK_STREAM, &d->socks.host_connect) == -1 ||
	    daemon_host_bind("transparent", hp->transparent, SOCK_STREAM,
	    &d->socks.host_transparent) == -1 || daemon_host_bind_dns(d) == -1)
		return -1;
	return 0;
}

/* Host mode's other listeners (transparent, DNS), bound on loopback: only
 * the host's own processes reach them, whatever their source address, so
 * any client is taken. */
static int
daemon_host_listeners(struct daemon *d)
{
	const struct config_host_proxy *hp = &d->cfg->host_proxy;
	struct sockaddr_storage any = { 0 };

	if (hp->transparent != NULL) {
		any.ss_family = (sa_family_t)sock_family(d->socks.host_transparent);
		if (proxy_tenant_adopt_transparent(d->host, d->socks.host_transparent,
		    (struct sockaddr *)&any, 0) == -1) {
			log_error("host proxy: transparent listener %s: %s", hp->transparent,
			    strerror(errno));
			return -1;
		}
		log_info("host proxy: transparent listener on %s", hp->transparent);
	}
	if (hp->dns != NULL) {
		any.ss_family = (sa_family_t)sock_family(d->socks.host_dns_udp);
		if (proxy_tenant_adopt_dns(d->host, d->socks.host_dns_udp, d->socks.host_dns_tcp,
		    (struct sockaddr *)&any, 0) == -1) {
			log_error("host proxy: dns listener %s: %s", hp->dns, strerror(errno));
			return -1;
		}
		log_info("host proxy: dns listener on %s", hp->dns);
	}
	d->socks.host_transparent = d->socks.host_dns_udp = d->socks.host_dns_tcp = -1;
	return 0;
}

/* Identifies the binaries of host_proxy.cgroup's processes: the monitor
 * watches the cgroup and handed the map; inet_diag needs no privilege. */
static int
daemon_host_identify_start(struct daemon *d)
{
	const struct monitor_hello *h = d->privsep != NULL ? privsep_hello(d->privsep) : NULL;
	const char *path = d->cfg->host_proxy.cgroup;
	int diag;

	if (path == NULL)
		return 0;
	if (h == NULL || !h->host_watched || h->map_fd == -1) {
		log_error("host_proxy.cgroup %s: cannot identify binaries: %s", path,
		    h == NULL ? "corrald was not started as root" : h->host_why);
		return -1;
	}
	if ((diag = sock_diag_open()) == -1) {
		log_error("host_proxy.cgroup %s: inet_diag: %s", path, strerror(errno));
		return -1;
	}
	proxy_tenant_set_identity(d->host, diag, h->map_fd, NULL, 0);
	log_info("host proxy: identifying the binaries of cgroup %s", path);
	return 0;
}

int
daemon_host_proxy_start(struct daemon *d)
{
	struct proxy_tenant_info info = { .name = DAEMON_HOST_TENANT, .host_mode = true };
	struct sockaddr_storage net;
	struct policy *p;
	unsigned prefix;
	int fd = d->socks.host_connect;

	if ((p = daemon_host_policy_load(d)) == NULL)
		return -1;
	if ((d->host = proxy_tenant_new(d->proxy, &info, p)) == NULL) {
		log_error("%s: out of memory", __func__);
		return -1;
	}
	daemon_loopback_net(sock_family(fd), &net, &prefix);
	d->socks.host_connect = -1;
	if (proxy_tenant_adopt_connect(d->host, fd, (struct sockaddr *)&net, prefix) == -1) {
		log_error("host proxy: cannot listen on %s: %s", d->cfg->host_proxy.listen,
		    strerror(errno));
		return -1;
	}
	log_info("host proxy listening on %s, port %u", d->cfg->host_proxy.listen,
	    proxy_tenant_connect_port(d->host));
	if (daemon_host_identify_start(d) == -1)
		return -1;
	return daemon_host_listeners(d);
}

struct proxy_tenant *
daemon_tenant(struct daemon *d, const char *name)
{
	if (d->host != NULL && strcmp(name, DAEMON_HOST_TENANT) == 0)
		return d->host;
	return NULL;
}

int
daemon_may_manage(const struct daemon *d, const struct proxy_tenant *t, uid_t uid)
{
	/* The host tenant's policy covers every process of the machine: root only. */
	return uid == 0 || uid == geteuid();
}

int
daemon_api_start(struct daemon *d)
{
	int fd = d->socks.api;

	d->socks.api = -1;
	if ((d->api = api_new(d, fd, d->cfg->socket)) == NULL)
		return -1;
	log_info("control socket %s", d->cfg->socket);
	return 0;
}

/* The monitor is gone (killed, crashed, or it refused what this broker
 * sent): nobody can vouch for a sandbox any more, or tear one down. Every
 * sandbox's channel closes, so its corral-init and with it every process
 * of the sandbox end; its registry row stays, so the next start reaps its
 * cgroups and home; then the broker exits non-zero and a supervisor
 * (systemd) restarts the daemon. It never says ready or deleted for what
 * it cannot vouch for. */
static void
daemon_monitor_lost(void *arg)
{
	struct daemon *d = arg;
	size_t n = 0;

	if (d->closing)
		return;
	log_error("the monitor is gone: ending every sandbox, then exiting (a restart reaps "
	    "what is left)");
	warm_forget(d);
	d->monitor_lost = true;
	d->sandboxes_ok = false;
	free(d->monitor_why);
	d->monitor_why = xstrdup("the monitor is gone: corrald is exiting");
	while (d->sandboxes != NULL) {
		sandbox_abandon(d, d->sandboxes);
		n++;
	}
	log_error("%zu sandboxes ended", n);
	event_base_loopexit(d->base, NULL);
}

/* A packet the fence rejected: a bypass record of the sandbox whose veth
 * it came in on (the kernel's word, which a sandbox cannot forge as it
 * could a source address). Packets of no live sandbox are dropped. */
static void
daemon_on_bypass(const struct bypass_packet *pk, void *arg)
{
	struct daemon *d = arg;

	for (struct sandbox *sb = d->sandboxes; sb != NULL; sb = sb->next) {
		if (sb->host_ifindex == pk->ifindex && sb->tenant != NULL) {
			proxy_tenant_record_bypass(sb->tenant, pk->ip, pk->port, pk->reason,
			    pk->bytes);
			return;
		}
	}
}

void
daemon_bypass_start(struct daemon *d)
{
	const struct monitor_hello *h;
	int fd;

	if (d->privsep == NULL || !d->sandboxes_ok)
		return;
	h = privsep_hello(d->privsep);
	fd = privsep_take_bypass_fd(d->privsep);
	if (fd == -1) {
		log_warnx("no bypass records: %s", h->bypass_why[0] != '\0' ? h->bypass_why :
		    "the monitor bound no log group");
		return;
	}
	if ((d->bypass = bypass_reader_new(d->base, fd, daemon_on_bypass, d)) == NULL)
		log_warnx("no bypass records: out of memory");
}

void
daemon_monitor_started(struct daemon *d, struct privsep *ps)
{
	const struct monitor_hello *h;

	d->privsep = ps;
	if (ps != NULL)
		privsep_on_lost(ps, daemon_monitor_lost, d);
	if (ps == NULL) {
		d->monitor_why = xstrdup("corrald was not started as root");
	} else if (!(h = privsep_hello(ps))->sandboxes) {
		d->monitor_why = xstrdup(h->why);
	} else {
		d->sandboxes_ok = true;
		log_info("sandboxes: instance %s", h->instance);
		return;
	}
	log_warnx("sandboxes unavailable: %s", d->monitor_why);
}

/* Which run of SB the process PID or one of its ANCESTORS is under: the
 * first whose innermost pid is a running run's shell or an exec's command.
 * Nothing is read from /proc while SB runs neither. */
static const char *
daemon_run_of(struct daemon *d, struct sandbox *sb, pid_t pid, const pid_t *ancestors,
    size_t n)
{
	const char *run;
	pid_t inner;

	(void)d;
	if (sb->streams == NULL && !shell_sandbox_running(sb))
		return NULL;
	for (size_t i = 0; i <= n; i++) {
		if ((inner = proc_ns_pid(i == 0 ? pid : ancestors[i - 1])) <= 0)
			continue;
		if ((run = shell_run_of(sb, inner)) != NULL ||
		    (run = api_exec_run_of(sb, inner, sb->run_name, sizeof(sb->run_name))) != NULL)
			return run;
	}
	return NULL;
}

static void
daemon_reaped_at_start(size_t removed, void *arg)
{
	(void)arg;
	if (removed > 0)
		log_info("reaped %zu leftovers of a broker that is gone", removed);
}

int
daemon_sandboxes_start(struct daemon *d)
{
	char *path, *err = NULL;

	xasprintf(&path, "%s/registry.db", d->cfg->state_dir);
	d->registry = registry_open(path, &err);
	free(path);
	if (d->registry == NULL) {
		log_error("registry: %s", err);
		free(err);
		return -1;
	}
	/* Before the loop serves anyone: what is left goes first. */
	daemon_reap(d, true, NULL, NULL, daemon_reaped_at_start, NULL);
	/* Exec streams and shells let go of a sandbox before it goes. */
	sandbox_on_gone(d, api_exec_sandbox_gone);
	sandbox_on_gone(d, shell_sandbox_gone);
	sandbox_on_gone(d, forward_sandbox_gone);
	d->run_of = daemon_run_of;
	warm_fill(d);
	return 0;
}

/* Registry rows whose server is gone: their sandboxes died with it. */
static size_t
daemon_reap_rows(struct daemon *d, daemon_reap_fn row, void *arg)
{
	struct registry_list dead = { 0 };
	size_t n = 0;

	if (registry_dead_rows(d->registry, &dead, NULL) == -1)
		return 0;
	for (size_t i = 0; i < dead.len; i++) {
		if (d->sandboxes_ok)
			sandbox_destroy(d, dead.rows[i].name, NULL, NULL);
		if (registry_remove(d->registry, dead.rows[i].name, NULL) == 0) {
			n++;
			if (row != NULL)
				row(dead.rows[i].name, arg);
		}
	}
	registry_list_clear(&dead);
	return n;
}

/* A reap under way: what it removed so far, and who hears the rest. */
struct daemon_reaping {
	size_t removed;
	daemon_reap_fn object;
	daemon_reaped_fn done;
	void *arg;
};

static void
daemon_on_reaped(size_t count, const char *const *what, size_t n, const char *why, void *arg)
{
	struct daemon_reaping *r = arg;

	if (why != NULL)
		log_error("reap: %s", why);
	for (size_t i = 0; r->object != NULL && i < n; i++)
		r->object(what[i], r->arg);
	r->removed += count;
	if (r->done != NULL)
		r->done(r->removed, r->arg);
	free(r);
}

void
daemon_reap(struct daemon *d, bool wait, daemon_reap_fn row, daemon_reap_fn object,
    daemon_reaped_fn done, void *arg)
{
	const char **live = xcalloc(sandbox_count(d) + 1, sizeof(*live));
	struct daemon_reaping *r = xmalloc(sizeof(*r));
	char *err = NULL;
	size_t n = 0;

	for (struct sandbox *sb = d->sandboxes; sb != NULL; sb = sb->next)
		live[n++] = sb->name;
	*r = (struct daemon_reaping){ daemon_reap_rows(d, row, arg), object, done, arg };
	if (!d->sandboxes_ok) {
		daemon_on_reaped(0, NULL, 0, NULL, r);
	} else if (wait) {
		privsep_reap(d->privsep, live, n, daemon_on_reaped, r);
	} else if (privsep_reap_async(d->privsep, live, n, daemon_on_reaped, r, &err) == -1) {
		daemon_on_reaped(0, NULL, 0, err, r);
		free(err);
	}
	free(live);
}

void
daemon_shutdown(struct daemon *d)
{
	d->closing = true;
	api_free(d->api);
	d->api = NULL;
	while (d->sandboxes != NULL)
		sandbox_delete(d, d->sandboxes, NULL, NULL);
	metrics_stop(d);
	/* The monitor tears the warm sandboxes down with the rest. */
	warm_forget(d);
	bypass_reader_free(d->bypass);
	d->bypass = NULL;
	/* The monitor removes the fence and the cgroup roots, then exits. */
	privsep_stop(d->privsep);
	d->privsep = NULL;
	free(d->monitor_why);
	registry_close(d->registry);
	proxy_free(d->proxy);
	d->proxy = NULL;
	d->host = NULL;
	resolver_free(d->resolver);
	addr_policy_free(d->addrs);
	ledger_close(d->ledger);
	profile_set_free(d->profiles);
	d->profiles = NULL;
	free(d->reload.error);
}
