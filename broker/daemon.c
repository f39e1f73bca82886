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

#include "broker/api.h"
#include "broker/conf.h"
#include "broker/daemon.h"
#include "broker/monitor.h"
#include "broker/registry.h"
#include "broker/sandbox.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "egress-proxy/addr.h"
#include "egress-proxy/identify.h"
#include "egress-proxy/ledger.h"
#include "egress-proxy/proxy.h"
#include "egress-proxy/resolve.h"
#include "policy/load.h"
#include "policy/profile.h"

/* Loads the host mode's policy (a file, else a profile), logging every
 * error; NULL when it does not load. */
static struct policy *
daemon_host_policy_load(const struct daemon *d)
{
	const struct config_host_proxy *hp = &d->cfg->host_proxy;
	struct policy_diags diags;
	struct policy *p = NULL;
	char *message = NULL, *text;

	policy_diags_init(&diags);
	if (hp->policy != NULL)
		policy_load_file(hp->policy, &p, &diags);
	else if (profile_load(d->cfg->profiles_dir, hp->profile != NULL ? hp->profile :
	    PROFILE_DEFAULT_NAME, &p, &diags, &message) != PROFILE_OK && message != NULL)
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

typedef int (*daemon_listen_fn)(struct proxy_tenant *, const struct sockaddr *, socklen_t,
    const struct sockaddr *, unsigned);

/* One more host-mode listener (transparent, DNS) at WHERE, the config's
 * KEY. Bound to loopback, it can only be reached by the host's own
 * processes, whatever their source address, so any client is taken. */
static int
daemon_host_listener(struct daemon *d, const char *key, const char *where,
    daemon_listen_fn listen_fn)
{
	struct sockaddr_storage sa, any = { 0 };
	socklen_t len;

	if (where == NULL)
		return 0;
	if (daemon_parse_listen(where, &sa, &len) == -1) {
		log_error("host_proxy.%s %s: not ADDRESS:PORT", key, where);
		return -1;
	}
	any.ss_family = sa.ss_family;
	if (listen_fn(d->host, (struct sockaddr *)&sa, len, (struct sockaddr *)&any, 0) == -1) {
		log_error("host proxy: cannot listen on %s for %s: %s", where, key,
		    strerror(errno));
		return -1;
	}
	log_info("host proxy: %s listener on %s", key, where);
	return 0;
}

/* Watches host_proxy.cgroup: connections its processes open are recorded
 * with their executables, so binary-scoped entries can be judged. */
static int
daemon_host_identify_start(struct daemon *d)
{
	const char *path = d->cfg->host_proxy.cgroup;
	enum identify_err e;
	int cg, diag;

	if (path == NULL)
		return 0;
	if ((cg = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		log_error("host_proxy.cgroup %s: %s", path, strerror(errno));
		return -1;
	}
	if ((e = identify_load(&d->identify)) == IDENTIFY_OK)
		e = identify_attach(d->identify, cg, &d->host_watch);
	close(cg);
	if (e != IDENTIFY_OK || (diag = identify_diag_open()) == -1) {
		log_error("host_proxy.cgroup %s: cannot identify binaries: %s", path,
		    e != IDENTIFY_OK ? identify_strerror(e) : strerror(errno));
		return -1;
	}
	proxy_tenant_set_identity(d->host, diag, identify_map_fd(d->identify), NULL, 0);
	log_info("host proxy: identifying the binaries of cgroup %s", path);
	return 0;
}

int
daemon_host_proxy_start(struct daemon *d)
{
	struct proxy_tenant_info info = { .name = DAEMON_HOST_TENANT, .host_mode = true };
	struct sockaddr_storage sa, net;
	struct policy *p;
	socklen_t len;
	unsigned prefix;

	if (daemon_parse_listen(d->cfg->host_proxy.listen, &sa, &len) == -1) {
		log_error("host_proxy.listen %s: not ADDRESS:PORT", d->cfg->host_proxy.listen);
		return -1;
	}
	if ((p = daemon_host_policy_load(d)) == NULL)
		return -1;
	if ((d->host = proxy_tenant_new(d->proxy, &info, p)) == NULL) {
		log_error("%s: out of memory", __func__);
		return -1;
	}
	daemon_loopback_net(sa.ss_family, &net, &prefix);
	if (proxy_tenant_listen_connect(d->host, (struct sockaddr *)&sa, len,
	    (struct sockaddr *)&net, prefix) == -1) {
		log_error("host proxy: cannot listen on %s: %s", d->cfg->host_proxy.listen,
		    strerror(errno));
		return -1;
	}
	log_info("host proxy listening on %s, port %u", d->cfg->host_proxy.listen,
	    proxy_tenant_connect_port(d->host));
	if (daemon_host_identify_start(d) == -1 ||
	    daemon_host_listener(d, "transparent", d->cfg->host_proxy.transparent,
	    proxy_tenant_listen_transparent) == -1)
		return -1;
	return daemon_host_listener(d, "dns", d->cfg->host_proxy.dns, proxy_tenant_listen_dns);
}

void
daemon_reload(struct daemon *d)
{
	struct policy *p;

	if (d->host == NULL)
		return;
	if ((p = daemon_host_policy_load(d)) == NULL) {
		log_error("reload: the host policy did not load; the running one stays");
		return;
	}
	if (proxy_tenant_set_policy(d->host, p, false, NULL) == -1)
		log_error("reload: out of memory; the running policy stays");
	else
		log_info("reload: host policy in force");
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

/* Creates the folder that holds PATH when missing (/run/corral). */
static int
daemon_socket_dir(const char *path)
{
	char dir[4096];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -1;
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return 0;
	*slash = '\0';
	return mkdir(dir, 0755) == -1 && errno != EEXIST ? -1 : 0;
}

int
daemon_api_start(struct daemon *d)
{
	if (daemon_socket_dir(d->cfg->socket) == -1) {
		log_error("cannot create the folder of %s: %s", d->cfg->socket, strerror(errno));
		return -1;
	}
	if ((d->api = api_new(d, d->cfg->socket)) == NULL)
		return -1;
	log_info("control socket %s", d->cfg->socket);
	return 0;
}

/* Where corral-init is: CORRAL_INIT when running from a build folder,
 * else the installed one. */
static const char *
daemon_init_path(void)
{
	const char *env = getenv("CORRAL_INIT");

	return env != NULL && env[0] == '/' ? env : LIBEXECDIR "/corral/corral-init";
}

static void
daemon_monitor_start(struct daemon *d)
{
	struct monitor_config mc = {
		.state_dir = d->cfg->state_dir, .pool = { 0 }, .pool_prefix = d->cfg->pool.prefix_len,
		.init_path = daemon_init_path(), .runtime_dir = NULL,
		.connect_port = SANDBOX_CONNECT_PORT, .transparent_port = SANDBOX_TRANSPARENT_PORT,
		.dns_port = SANDBOX_DNS_PORT,
	};

	memcpy(&mc.pool, d->cfg->pool.addr, 4);
	if ((d->monitor = monitor_new(&mc, &d->monitor_why)) == NULL)
		log_warnx("sandboxes unavailable: %s", d->monitor_why);
	else
		log_info("sandboxes: instance %s, corral-init %s", monitor_instance(d->monitor),
		    mc.init_path);
}

int
daemon_sandboxes_start(struct daemon *d)
{
	char *path, *err = NULL;
	size_t n;

	xasprintf(&path, "%s/registry.db", d->cfg->state_dir);
	d->registry = registry_open(path, &err);
	free(path);
	if (d->registry == NULL) {
		log_error("registry: %s", err);
		free(err);
		return -1;
	}
	daemon_monitor_start(d);
	if ((n = daemon_reap(d, NULL, NULL, NULL, NULL)) > 0)
		log_info("reaped %zu leftovers of a broker that is gone", n);
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
		if (d->monitor != NULL)
			monitor_destroy(d->monitor, dead.rows[i].name, NULL);
		if (registry_remove(d->registry, dead.rows[i].name, NULL) == 0) {
			n++;
			if (row != NULL)
				row(dead.rows[i].name, arg);
		}
	}
	registry_list_clear(&dead);
	return n;
}

size_t
daemon_reap(struct daemon *d, daemon_reap_fn row, void *row_arg, daemon_reap_fn object,
    void *object_arg)
{
	const char **live = xcalloc(sandbox_count(d) + 1, sizeof(*live));
	size_t n = 0, removed;

	for (struct sandbox *sb = d->sandboxes; sb != NULL; sb = sb->next)
		live[n++] = sb->name;
	removed = daemon_reap_rows(d, row, row_arg);
	if (d->monitor != NULL)
		removed += monitor_reap(d->monitor, live, n, object, object_arg);
	free(live);
	return removed;
}

void
daemon_shutdown(struct daemon *d)
{
	api_free(d->api);
	d->api = NULL;
	while (d->sandboxes != NULL)
		sandbox_delete(d, d->sandboxes);
	monitor_free(d->monitor);
	d->monitor = NULL;
	free(d->monitor_why);
	registry_close(d->registry);
	proxy_free(d->proxy);
	d->proxy = NULL;
	d->host = NULL;
	identify_detach(d->host_watch);
	identify_unload(d->identify);
	resolver_free(d->resolver);
	addr_policy_free(d->addrs);
	ledger_close(d->ledger);
}
