/* The daemon's state, shared by corrald.c (start and stop), daemon.c (the
 * host tenant, reload, shutdown) and the control-socket API (api*.c). */
#ifndef CORRAL_DAEMON_H
#define CORRAL_DAEMON_H

#include "broker/sandbox.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct addr_policy;
struct api;
struct bypass_reader;
struct privsep;
struct registry;
struct sandbox;
struct sandbox_creating;
struct warm_sandbox;
struct broker_metrics;
struct config;
struct event_base;
struct ledger;
struct policy;
struct profile_set;
struct proxy;
struct proxy_tenant;
struct resolver;

#define DAEMON_HOST_TENANT "host"       /* the name of the host mode's tenant */

/* Sockets bound before the drop (host mode's, and the control socket),
 * adopted once the loop runs; -1 when not used. */
struct daemon_sockets {
	int api;
	int host_connect, host_transparent, host_dns_udp, host_dns_tcp;
};

/* The last reload (SIGHUP or corral reload), for status. */
struct daemon_reload_state {
	int64_t at_us;                  /* 0: none since the start */
	bool ok;
	char *error;                    /* its first error when it did not take */
};

struct daemon {
	struct config *cfg;
	const char *config_path;        /* what a reload reads again */
	bool config_explicit;           /* given by --config: it must exist */
	struct profile_set *profiles;   /* creates take their profile from it */
	uint64_t profiles_version;      /* 1 at the start, one more each good reload */
	struct daemon_reload_state reload;
	struct daemon_sockets socks;
	struct event_base *base;
	struct ledger *ledger;
	struct broker_metrics *metrics; /* metrics.c's */
	struct resolver *resolver;
	struct addr_policy *addrs;
	struct proxy *proxy;
	struct proxy_tenant *host;      /* the host mode's tenant, or NULL */
	struct api *api;
	struct registry *registry;
	struct privsep *privsep;        /* the monitor, or NULL (not started as root) */
	struct bypass_reader *bypass;   /* the fence's rejected packets, or NULL */
	bool sandboxes_ok;              /* else monitor_why says why not */
	bool closing;                   /* shutting down: late builds are not adopted */
	bool monitor_lost;              /* the monitor went: every sandbox ended, exiting */
	char *monitor_why;
	const char *runtime_dir;        /* corral-init's folder: corral-shell's too */
	struct sandbox *sandboxes;
	struct sandbox_creating *creating;      /* creates the monitor is building */
	struct sandbox_destroying *destroying;  /* teardowns the monitor has not done yet */
	struct api_status_wait *status_waits;   /* statuses waiting for the firewall's state */
	struct warm_sandbox *warm;      /* the warm pool (warm.c) */
	struct event *warm_timer;       /* ... its next try after a failed build */
	bool warm_held;                 /* ... until then */
	bool warm_busy;                 /* warm_fill runs: a callback it causes does not
	                                 * run it again */
	sandbox_gone_fn gone_hooks[SANDBOX_GONE_HOOKS_MAX];     /* sandbox_on_gone() */
	sandbox_run_of_fn run_of;       /* the ledger's run of a sandbox's process */
	size_t ngone_hooks;
};

typedef void (*daemon_reap_fn)(const char *what, void *arg);

/* Binds what needs binding before the drop: the control socket (group
 * GROUP) and host mode's listeners. -1 (logged) on failure. */
int daemon_bind(struct daemon *d, gid_t group);
/* Takes the monitor's word on what it set up (PS may be NULL: corrald
 * was not started as root). */
void daemon_monitor_started(struct daemon *d, struct privsep *ps);
/* Reads the fence's rejected packets from the socket the monitor handed
 * over, on D's loop, into bypass records (logged when there is none). */
void daemon_bypass_start(struct daemon *d);
/* Opens the registry, then reaps what a dead broker left. -1 (logged)
 * when the registry cannot be opened. */
int daemon_sandboxes_start(struct daemon *d);
/* How many things a reap removed in all. */
typedef void (*daemon_reaped_fn)(size_t removed, void *arg);
/* Reaps: registry rows whose server is gone (ROW hears each name, at
 * once), then kernel objects and homes no live sandbox owns (OBJECT hears
 * each), in the monitor's turn; DONE hears the end, from the loop, or
 * before this returns when WAIT (the start, before the loop serves). Each
 * may be NULL; all hear ARG. */
void daemon_reap(struct daemon *d, bool wait, daemon_reap_fn row, daemon_reap_fn object,
    daemon_reaped_fn done, void *arg);

/* Starts the host mode's proxy on its loopback address; -1 (logged) on failure. */
int daemon_host_proxy_start(struct daemon *d);
/* Loads the profiles at the start; -1 (logged, FILE:LINE:COL) when one
 * does not load: corrald does not start on a broken profile. */
int daemon_profiles_start(struct daemon *d);
/* The tenant called NAME, or NULL. */
struct proxy_tenant *daemon_tenant(struct daemon *d, const char *name);
/* May the caller UID change or read tenant T? */
int daemon_may_manage(const struct daemon *d, const struct proxy_tenant *t, uid_t uid);
/* Opens the control socket; -1 (logged) on failure. */
int daemon_api_start(struct daemon *d);
/* Closes the control socket, every tenant and the proxy, the resolver and the ledger. */
void daemon_shutdown(struct daemon *d);

#endif
