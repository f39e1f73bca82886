/* The daemon's state, shared by corrald.c (start and stop), daemon.c (the
 * host tenant, reload, shutdown) and the control-socket API (api*.c). */
#ifndef CORRAL_DAEMON_H
#define CORRAL_DAEMON_H

#include <stdint.h>
#include <sys/types.h>

struct addr_policy;
struct api;
struct monitor;
struct registry;
struct sandbox;
struct identify_attachment;
struct identify_bpf;
struct config;
struct event_base;
struct ledger;
struct policy;
struct proxy;
struct proxy_tenant;
struct resolver;

#define DAEMON_HOST_TENANT "host"       /* the name of the host mode's tenant */

struct daemon {
	struct config *cfg;
	struct event_base *base;
	struct ledger *ledger;
	struct resolver *resolver;
	struct addr_policy *addrs;
	struct proxy *proxy;
	struct proxy_tenant *host;      /* the host mode's tenant, or NULL */
	struct identify_bpf *identify;  /* the identification program, when loaded */
	struct identify_attachment *host_watch;  /* it, on host_proxy.cgroup */
	struct api *api;
	struct registry *registry;
	struct monitor *monitor;        /* NULL: sandboxes cannot be built here (said why) */
	char *monitor_why;
	struct sandbox *sandboxes;
};

typedef void (*daemon_reap_fn)(const char *what, void *arg);

/* Opens the registry and sets up the monitor, then reaps what a dead
 * broker left. -1 (logged) when the registry cannot be opened. */
int daemon_sandboxes_start(struct daemon *d);
/* Reaps: registry rows whose server is gone (ROW hears each name), then
 * kernel objects and homes no live sandbox owns (OBJECT hears each).
 * Returns the number of things removed. */
size_t daemon_reap(struct daemon *d, daemon_reap_fn row, void *row_arg,
    daemon_reap_fn object, void *object_arg);

/* Starts the host mode's proxy on its loopback address; -1 (logged) on failure. */
int daemon_host_proxy_start(struct daemon *d);
/* Reloads every policy that comes from a file (SIGHUP). A file that does
 * not load changes nothing and is logged with its FILE:LINE:COL errors. */
void daemon_reload(struct daemon *d);
/* The tenant called NAME, or NULL. */
struct proxy_tenant *daemon_tenant(struct daemon *d, const char *name);
/* May the caller UID change or read tenant T? */
int daemon_may_manage(const struct daemon *d, const struct proxy_tenant *t, uid_t uid);
/* Opens the control socket; -1 (logged) on failure. */
int daemon_api_start(struct daemon *d);
/* Closes the control socket, every tenant and the proxy, the resolver and the ledger. */
void daemon_shutdown(struct daemon *d);

#endif
