/* corrald: the daemon. Loads its configuration, opens the ledger, and
 * serves the egress proxy (for now, in host mode: the host's own
 * processes on loopback) from one libevent loop. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "broker/api.h"
#include "broker/checkconf.h"
#include "broker/conf.h"
#include "broker/daemon.h"
#include "broker/metrics.h"
#include "broker/metrics-http.h"
#include "broker/reload.h"
#include "broker/monitor/monitor.h"
#include "broker/privsep.h"
#include "broker/sandbox.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xmalloc.h"
#include "egress-proxy/addr.h"
#include "egress-proxy/ledger.h"
#include "egress-proxy/mitm.h"
#include "egress-proxy/proxy.h"
#include "egress-proxy/resolve.h"

#define CORRALD_EXIT_MONITOR_LOST 3     /* the monitor died: restart (and reap) */
#define CORRALD_LOCK_WAIT_S 30        /* for an old monitor's teardown */
#define CORRALD_LOCK_TEXT_BYTES 48      /* "PID START_TICKS\n" */

static void
corrald_usage(FILE *out)
{
	fprintf(out, "usage: corrald [--config FILE] [--foreground] [--socket PATH] "
	    "[--state-dir DIR] [--log-dir DIR] [--debug]\n"
	    "       corrald --check-config [FILE]\n");
}

/* Creates DIR (and its parents) when missing, mode 0750. */
static int
corrald_mkdirs(const char *dir)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -1;
	for (char *p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0750) == -1 && errno != EEXIST ? -1 : 0;
}

/* Registers the host's own addresses: the proxy never dials them, so an
 * allowed name cannot lead a sandbox to the host's own services. */
static void
corrald_add_local_addresses(struct addr_policy *ap)
{
	struct ifaddrs *ifs, *ifa;
	struct policy_cidr c;

	if (getifaddrs(&ifs) == -1)
		fatal("getifaddrs");
	for (ifa = ifs; ifa != NULL; ifa = ifa->ifa_next) {
		if (ifa->ifa_addr == NULL)
			continue;
		memset(&c, 0, sizeof(c));
		c.family = ifa->ifa_addr->sa_family;
		if (c.family == AF_INET) {
			memcpy(c.addr, &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr, 4);
			c.prefix_len = 32;
		} else if (c.family == AF_INET6) {
			memcpy(c.addr, &((struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr, 16);
			c.prefix_len = 128;
		} else {
			continue;
		}
		if (addr_policy_add_local(ap, &c) != ADDR_OK)
			log_warnx("%s: too many local addresses to track", __func__);
	}
	freeifaddrs(ifs);
}

static struct addr_policy *
corrald_addr_policy(const struct config *cfg)
{
	struct addr_policy *ap = addr_policy_new();

	if (ap == NULL)
		fatalx("out of memory");
	corrald_add_local_addresses(ap);
	if (addr_policy_add_pool(ap, &cfg->pool) != ADDR_OK)
		fatalx("cannot register the sandbox pool");
	for (size_t i = 0; i < cfg->nallow_cidrs; i++)
		if (addr_policy_add_allow(ap, &cfg->allow_cidrs[i]) != ADDR_OK)
			fatalx("too many egress.allow_cidrs");
	return ap;
}

/* Loads the configuration, printing every error, or exits. */
static struct config *
corrald_load_config(const char *path)
{
	struct policy_diags diags;
	struct config *cfg = NULL;
	char *text;

	policy_diags_init(&diags);
	if (config_load(path != NULL ? path : CONFIG_PATH_DEFAULT, path != NULL, &cfg,
	    &diags) == -1) {
		if ((text = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE)) != NULL)
			fputs(text, stderr);
		free(text);
		policy_diags_clear(&diags);
		exit(1);
	}
	policy_diags_clear(&diags);
	return cfg;
}

static void
corrald_open_ledger(struct daemon *d)
{
	char *path, *err = NULL;

	xasprintf(&path, "%s/%s", d->cfg->log_dir, LEDGER_FILE_NAME);
	if ((d->ledger = ledger_open(path, &err)) == NULL)
		fatalx("cannot open the egress ledger %s: %s", path, err);
	free(path);
}

/* Where corral-init is: CORRAL_INIT when running from a build folder,
 * else the installed one. */
static const char *
corrald_init_path(void)
{
	const char *env = getenv("CORRAL_INIT");

	return env != NULL && env[0] == '/' ? env : LIBEXECDIR "/corral/corral-init";
}

/* The runtime folder: corral-init's, which holds corral-shell too; shown
 * read-only inside every sandbox at its own path. NULL when it is below a
 * folder every sandbox has its own of (a build folder in /tmp): there is
 * no runtime inside then, and persistent shells say why. */
static const char *
corrald_runtime_dir(void)
{
	static const char *const own[] = { "/tmp/", "/run/", "/dev/", "/proc/", "/sys/", NULL };
	static char dir[PATH_MAX];
	const char *init = corrald_init_path(), *slash = strrchr(init, '/');

	snprintf(dir, sizeof(dir), "%.*s/", (int)(slash - init), init);
	for (size_t i = 0; own[i] != NULL; i++) {
		if (strncmp(dir, own[i], strlen(own[i])) == 0)
			return NULL;
	}
	dir[strlen(dir) - 1] = '\0';
	return dir[0] != '\0' ? dir : NULL;
}

/* Gives PATH to the broker's user (corrald's own folders and files in
 * them: the broker writes the registry and the ledger), mode MODE. A
 * previous broker owned these folders: a link planted there is refused
 * (no link followed, no file with another name), never given. */
static void
corrald_give(const char *path, uid_t uid, gid_t gid, mode_t mode)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd == -1) {
		if (errno == ENOENT)
			return;
		fatal("cannot open %s to give it to the broker's user", path);
	}
	if (fstat(fd, &st) == -1 || (!S_ISDIR(st.st_mode) &&
	    (!S_ISREG(st.st_mode) || st.st_nlink != 1)))
		fatalx("%s is not a plain file or folder of corrald's; remove it", path);
	if ((st.st_uid != uid || st.st_gid != gid) && fchown(fd, uid, gid) == -1)
		fatal("cannot give %s to the broker's user", path);
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) == -1)
		fatal("cannot set the mode of %s", path);
	close(fd);
}

static void
corrald_give_all(const char *dir, const char *const *names, uid_t uid, gid_t gid,
    mode_t dir_mode)
{
	char path[4096];

	corrald_give(dir, uid, gid, dir_mode);
	for (; *names != NULL; names++)
		if (snprintf(path, sizeof(path), "%s/%s", dir, *names) < (int)sizeof(path))
			corrald_give(path, uid, gid, 0600);
}

/* The live corrald that holds the lock FD, by what it wrote there: its
 * broker's pid, and that process's start time (a pid alone may have been
 * reused). 0 when it is gone: the holder is then its monitor, still
 * tearing down. */
static pid_t
corrald_lock_holder(int fd)
{
	char text[CORRALD_LOCK_TEXT_BYTES] = "";
	unsigned long long start;
	long pid;
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	uint64_t live;

	if (n <= 0 || sscanf(text, "%ld %llu", &pid, &start) != 2 || pid <= 0)
		return 0;
	return proc_start_time((pid_t)pid, &live) == 0 && live == start ? (pid_t)pid : 0;
}

/* Writes this process (the broker to be) into the lock file FD. */
static void
corrald_lock_mark(int fd)
{
	char text[CORRALD_LOCK_TEXT_BYTES];
	uint64_t start = 0;
	int n;

	(void)proc_start_time(getpid(), &start);
	n = snprintf(text, sizeof(text), "%ld %llu\n", (long)getpid(), (unsigned long long)start);
	if (ftruncate(fd, 0) == -1 || pwrite(fd, text, (size_t)n, 0) != n)
		log_warnx("cannot write this daemon's pid into its lock file");
}

/* One daemon per state folder: the lock lives in root's <state>/sandboxes
 * and is held by the monitor until its teardown is over, so a new start
 * never races an old monitor removing the fence or the socket. Another
 * corrald that still runs is named at once; only an old monitor whose
 * broker is gone is waited for. The descriptor, for the monitor to keep. */
static int
corrald_lock(const char *state_dir)
{
	char path[4096];
	pid_t holder;
	int fd;

	snprintf(path, sizeof(path), "%s/sandboxes", state_dir);
	if (mkdir(path, 0711) == -1 && errno != EEXIST)
		fatal("cannot create %s", path);
	snprintf(path, sizeof(path), "%s/sandboxes/.lock", state_dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1)
		fatal("cannot open %s", path);
	for (int waited = 0; flock(fd, LOCK_EX | LOCK_NB) == -1; waited++) {
		if (errno != EWOULDBLOCK)
			fatal("cannot lock %s", path);
		if ((holder = corrald_lock_holder(fd)) != 0)
			fatalx("another corrald (pid %ld) uses the state folder %s", (long)holder,
			    state_dir);
		if (waited == CORRALD_LOCK_WAIT_S)
			fatalx("another corrald uses the state folder %s (its monitor holds %s)",
			    state_dir, path);
		if (waited == 0)
			log_info("waiting for the previous corrald's monitor to finish");
		sleep(1);
	}
	corrald_lock_mark(fd);
	return fd;
}

/* With ledger_group, the log folder is that group's to read: set-group-ID,
 * so that every file made in it later (the ledger after a rotation, the
 * rotated copies) is the group's too, and the ledger 0640. */
static void
corrald_give_ledger(const struct config *cfg, uid_t uid)
{
	const struct group *gr = getgrnam(cfg->ledger_group);
	char path[4096];

	if (gr == NULL)
		fatalx("ledger_group '%s' is not a group of this machine", cfg->ledger_group);
	corrald_give(cfg->log_dir, uid, gr->gr_gid, 02750);
	if (snprintf(path, sizeof(path), "%s/%s", cfg->log_dir, LEDGER_FILE_NAME) <
	    (int)sizeof(path))
		corrald_give(path, uid, gr->gr_gid, 0640);
}

/* The state and log folders, made and given to the broker's user. */
static void
corrald_folders(const struct config *cfg, uid_t uid, gid_t gid)
{
	static const char *const state[] = { "registry.db", "registry.db-wal", "registry.db-shm",
	    NULL };
	static const char *const logs[] = { LEDGER_FILE_NAME, NULL };

	if (corrald_mkdirs(cfg->state_dir) == -1)
		fatal("cannot create the state folder %s", cfg->state_dir);
	if (corrald_mkdirs(cfg->log_dir) == -1)
		fatal("cannot create the log folder %s", cfg->log_dir);
	corrald_give_all(cfg->state_dir, state, uid, gid, 0711);
	if (cfg->ledger_group == NULL) {
		corrald_give_all(cfg->log_dir, logs, uid, gid, 0750);
		return;
	}
	corrald_give_ledger(cfg, uid);
}

/* Root's part of the start: the folders, the sockets that need binding,
 * the monitor; then the drop. Started by anyone else, corrald serves host
 * mode only, as that user. */
/* corrald's own folders, which no sandbox's root may reach: the state
 * (the registry, every sandbox's home), the ledger's and the profiles'.
 * The control socket needs no entry: a sandbox's process is refused by
 * the socket itself, and connect() to a host socket is refused inside. */
static size_t
corrald_own_dirs(const struct config *cfg, const char **dirs)
{
	size_t n = 0;

	dirs[n++] = cfg->state_dir;
	dirs[n++] = cfg->log_dir;
	dirs[n++] = cfg->profiles_dir;
	return n;
}

static void
corrald_split(struct daemon *d)
{
	static const char *own[MONITOR_OWN_DIRS_MAX];
	struct monitor_setup setup = {
		.state_dir = d->cfg->state_dir, .pool_prefix = d->cfg->pool.prefix_len,
		.init_path = corrald_init_path(), .runtime_dir = d->runtime_dir,
		.grants = d->cfg->grants, .ngrants = d->cfg->ncredentials,
		.host_cgroup = d->cfg->host_proxy.enabled ? d->cfg->host_proxy.cgroup : NULL,
		.socket_path = d->cfg->socket,
		.own_dirs = own, .n_own_dirs = corrald_own_dirs(d->cfg, own),
	};
	struct privsep *ps;
	char *err = NULL;
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0) {
		if (corrald_mkdirs(d->cfg->state_dir) == -1 || corrald_mkdirs(d->cfg->log_dir) == -1)
			fatal("cannot create corrald's folders");
		if (daemon_bind(d, (gid_t)-1) == -1)
			exit(1);
		daemon_monitor_started(d, NULL);
		return;
	}
	if (privsep_user(d->cfg->user, &uid, &gid, &err) == -1)
		fatalx("%s", err);
	corrald_folders(d->cfg, uid, gid);
	setup.lock_fd = corrald_lock(d->cfg->state_dir);
	if (daemon_bind(d, gid) == -1)
		exit(1);
	memcpy(&setup.pool, d->cfg->pool.addr, 4);
	if ((ps = privsep_start(&setup, &err)) == NULL)
		fatalx("%s", err);
	close(setup.lock_fd);           /* the monitor holds it */
	if (privsep_drop(d->cfg->user, &err) == -1)
		fatalx("%s", err);
	/* The registry and the ledger are the broker's alone. */
	umask(077);
	log_info("broker running as %s; monitor pid %d", d->cfg->user, (int)privsep_pid(ps));
	daemon_monitor_started(d, ps);
}

/* A reload reads the configuration as the broker: say at the start, not
 * at the first SIGHUP, when it cannot. */
static void
corrald_check_reloadable(const struct daemon *d)
{
	if (access(d->config_path, R_OK) == -1 && (errno != ENOENT || d->config_explicit))
		log_warnx("%s: %s: the broker (user %s) cannot read it, so a reload will fail; "
		    "make it readable by that user", d->config_path, strerror(errno), d->cfg->user);
}

static void
corrald_start_proxy(struct daemon *d)
{
	char *err = NULL;

	d->resolver = resolver_new(d->base, (const char *const *)d->cfg->dns_upstream,
	    d->cfg->ndns_upstream, &err);
	if (d->resolver == NULL)
		fatalx("cannot start the resolver: %s", err);
	d->addrs = corrald_addr_policy(d->cfg);
	if ((d->proxy = proxy_new(d->base, d->resolver, d->ledger, d->addrs,
	    &d->cfg->egress)) == NULL)
		fatalx("out of memory");
	/* What upstreams of terminated endpoints are verified against: a CA
	 * file that does not load stops the start, it is not left out. */
	if (proxy_set_tls(d->proxy, d->cfg->upstream_ca_file, &err) == -1)
		fatalx("cannot terminate TLS (egress.upstream_ca_file): %s", err);
	if (d->cfg->host_proxy.enabled && daemon_host_proxy_start(d) == -1)
		exit(1);
}

/* Tells the service manager what corrald is doing (sd_notify(3); the unit
 * is Type=notify). Nothing is sent when NOTIFY_SOCKET is unset: started by
 * hand, or by a manager that does not listen. */
static void
corrald_notify(const char *state)
{
	int rc = sd_notify(0, state);

	if (rc < 0)
		log_warnx("%s: cannot tell the service manager %.*s: %s", __func__,
		    (int)strcspn(state, "\n"), state, strerror(-rc));
}

/* READY=1, once the control socket listens and the monitor has said
 * whether sandboxes can be made; STATUS= says which. */
static void
corrald_notify_ready(const struct daemon *d)
{
	char state[512];

	snprintf(state, sizeof(state), "READY=1\nSTATUS=serving %s; sandboxes: %s",
	    d->cfg->socket, d->sandboxes_ok ? "available" : d->monitor_why);
	corrald_notify(state);
}

/* RELOADING=1 with the time systemd 253 and later want beside it. */
static void
corrald_notify_reloading(void)
{
	struct timespec ts;
	char state[64];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
	corrald_notify(state);
}

static void
corrald_on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("signal %d: shutting down", (int)sig);
		event_base_loopexit(d->base, NULL);
		break;
	case SIGHUP: {
		struct reload_result r;

		log_info("SIGHUP: reloading %s and the profiles", d->config_path);
		corrald_notify_reloading();
		(void)daemon_reload(d, false, &r);
		reload_result_clear(&r);
		corrald_notify("READY=1");
		break;
	}
	case SIGUSR1:
		log_info("SIGUSR1: reopening the ledger");
		ledger_reopen(d->ledger);
		break;
	}
}

static void
corrald_add_signals(struct daemon *d, struct event **evs)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1 };

	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		evs[i] = evsignal_new(d->base, sigs[i], corrald_on_signal, d);
		if (evs[i] == NULL || event_add(evs[i], NULL) == -1)
			fatalx("cannot watch signal %d", sigs[i]);
	}
}

/* Applies the command-line options over the configuration file's values. */
static void
corrald_override(struct config *cfg, const char *socket_path, const char *state_dir,
    const char *log_dir)
{
	if (socket_path != NULL) {
		free(cfg->socket);
		cfg->socket = xstrdup(socket_path);
	}
	if (state_dir != NULL) {
		free(cfg->state_dir);
		cfg->state_dir = xstrdup(state_dir);
	}
	if (log_dir != NULL) {
		free(cfg->log_dir);
		cfg->log_dir = xstrdup(log_dir);
	}
}

/* What the broker holds for one sandbox at most, besides its tunnels and
 * streams: its listeners and channels, the DNS stub's TCP clients
 * (DNSSTUB_TCP_CONNS_MAX), its shells and their runs' output pipes
 * (SHELL_PIPES_MAX). */
#define CORRALD_SANDBOX_FDS 96
#define CORRALD_SPARE_FDS 256   /* the registry, the ledger, the monitor, libevent */
#define CORRALD_TUNNELS_MIN 64  /* fewer, and the limit is too low for the shares */

/* Sets the descriptor limit to what CFG's limits can take at once, so that
 * every refusal is a share's or a limit's, named, and never an EMFILE in
 * the middle of a message from the monitor. Root may raise the hard limit;
 * when it cannot, egress.max_tunnels is lowered to fit, and says so. */
static void
corrald_fd_budget(struct config *cfg)
{
	rlim_t others = API_CONNECTIONS_MAX + METRICS_HTTP_CONNECTIONS_MAX +
	    (rlim_t)API_STREAMS_MAX * API_STREAM_FDS +
	    (rlim_t)cfg->max_sandboxes * CORRALD_SANDBOX_FDS + CORRALD_SPARE_FDS;
	rlim_t need = others + (rlim_t)cfg->egress.max_tunnels * 2;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= need)
		return;
	if (rl.rlim_max < need) {
		struct rlimit want = { need, need };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			return;
	}
	rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur >= need)
		return;
	/* Below even that, corrald runs, and says plainly that its shares no
	 * longer keep it from running out: the operator chose the limit. */
	if (rl.rlim_cur < others + 2 * CORRALD_TUNNELS_MIN) {
		if (cfg->egress.max_tunnels > CORRALD_TUNNELS_MIN)
			cfg->egress.max_tunnels = CORRALD_TUNNELS_MIN;
		log_warnx("the descriptor limit (%llu) is below the %llu that corrald's connections, "
		    "streams, sandboxes and %d tunnels need: it can run out of descriptors, and a "
		    "sandbox create or a tunnel then fails; raise LimitNOFILE (to %llu for every "
		    "limit), or lower max_sandboxes", (unsigned long long)rl.rlim_cur,
		    (unsigned long long)(others + 2 * CORRALD_TUNNELS_MIN), CORRALD_TUNNELS_MIN,
		    (unsigned long long)need);
		return;
	}
	cfg->egress.max_tunnels = (unsigned)((rl.rlim_cur - others) / 2);
	log_warnx("the descriptor limit (%llu) is below the %llu that corrald's limits need: "
	    "egress.max_tunnels lowered to %u (raise LimitNOFILE, or lower max_sandboxes)",
	    (unsigned long long)rl.rlim_cur, (unsigned long long)need, cfg->egress.max_tunnels);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "log-dir", required_argument, NULL, 'L' },
		{ "debug", no_argument, NULL, 'd' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = NULL, *socket_path = NULL, *state_dir = NULL, *log_dir = NULL;
	struct daemon d = { 0 };
	struct event *sigevs[4];
	bool foreground = false, debug = false, check_config = false;
	int opt;

	/* Before any OpenSSL call: its freed buffers are wiped (secrets pass
	 * through them where the proxy terminates TLS). */
	if (mitm_wipe_openssl_memory() == -1)
		fprintf(stderr, "corrald: OpenSSL allocated before its memory could be wiped\n");
	while ((opt = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': config_path = optarg; break;
		case 'f': foreground = true; break;
		case 's': socket_path = optarg; break;
		case 'S': state_dir = optarg; break;
		case 'L': log_dir = optarg; break;
		case 'd': debug = true; break;
		case 'C': check_config = true; break;
		case 'V': printf("corrald %s\n", PACKAGE_VERSION); return 0;
		case 'h': corrald_usage(stdout); return 0;
		default: corrald_usage(stderr); return 2;
		}
	}
	/* --check-config [FILE]: loads what a start would, starts nothing. */
	if (check_config && argc - optind <= 1)
		return checkconf_run(optind < argc ? argv[optind] : config_path, stdout, stderr);
	if (optind != argc) {
		corrald_usage(stderr);
		return 2;
	}
	log_init("corrald", foreground, debug ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	d.cfg = corrald_load_config(config_path);
	d.config_path = config_path != NULL ? config_path : CONFIG_PATH_DEFAULT;
	d.config_explicit = config_path != NULL;
	corrald_override(d.cfg, socket_path, state_dir, log_dir);
	corrald_fd_budget(d.cfg);
	d.runtime_dir = corrald_runtime_dir();
	/* Before any thread or loop: the monitor is a fork of this process. */
	corrald_split(&d);
	if ((d.base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	if (d.privsep != NULL && privsep_attach(d.privsep, d.base) == -1)
		fatalx("cannot watch the monitor's answers");
	daemon_bypass_start(&d);
	corrald_add_signals(&d, sigevs);
	corrald_open_ledger(&d);
	corrald_check_reloadable(&d);
	if (daemon_profiles_start(&d) == -1)
		fatalx("a profile in %s does not load, or warm_pool names none: corrald does "
		    "not start on it", d.cfg->profiles_dir);
	corrald_start_proxy(&d);
	if (daemon_sandboxes_start(&d) == -1 || metrics_start(&d) == -1)
		exit(1);
	if (daemon_api_start(&d) == -1)
		exit(1);
	log_info("corrald %s ready", PACKAGE_VERSION);
	corrald_notify_ready(&d);
	event_base_dispatch(d.base);
	corrald_notify("STOPPING=1");
	daemon_shutdown(&d);
	for (size_t i = 0; i < sizeof(sigevs) / sizeof(sigevs[0]); i++)
		event_free(sigevs[i]);
	event_base_free(d.base);
	config_free(d.cfg);
	if (d.monitor_lost) {
		log_error("corrald stopped: its monitor is gone");
		return CORRALD_EXIT_MONITOR_LOST;
	}
	log_info("corrald stopped");
	return 0;
}
