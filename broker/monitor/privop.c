/* The monitor's closed list of privileged operations: set up (fence,
 * cgroups, identification), build a sandbox, tear one down, reap. Each
 * says why it is safe where it acts as root. */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <net/if.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/monitor/cgroup.h"
#include "broker/monitor/credcopy.h"
#include "broker/monitor/fwcheck.h"
#include "broker/monitor/fence.h"
#include "broker/monitor/privop.h"
#include "broker/monitor/netlink.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/xmalloc.h"
#include "egress-proxy/identify.h"
#include "policy/name.h"

#define MONITOR_GROUP_BASE 0x63000000u  /* interface groups: "c" and 24 bits of the instance */
#define MONITOR_HOME_MODE 0700
#define MONITOR_IFNAME_PREFIX "crs"       /* crs<slot>h, crs<slot>s */
#define MONITOR_DIR_MODE 0711           /* others may pass through to their own home, not list */

/* What the monitor keeps of one sandbox. */
struct monitor_sandbox {
	char name[64];
	char gateway[INET_ADDRSTRLEN];  /* spawn reads it again when corral-init is ready */
	struct cgroup_sandbox *cg;
	struct spawn *sp;
	struct identify_attachment *watch;
	struct monitor_sandbox *next;
};

struct monitor {
	struct monitor_config cfg;
	char *state_dir;
	char *init_path;
	char *runtime_dir;
	char *sandboxes_dir;            /* <state>/sandboxes: the homes (for messages) */
	int sandboxes_fd;               /* it, opened once: <state> is the broker's, so
	                                 * no path through it is trusted afterwards */
	struct identify_attachment *host_watch;  /* host_proxy.cgroup, when watched */
	char instance[MONITOR_INSTANCE_MAX_BYTES];
	uint32_t group;                 /* the interface group of this instance's veths */
	int self_netns;                 /* to come back after work in a sandbox's */
	struct cgroup_host cgh;
	struct fence *fence;
	struct identify_bpf *bpf;       /* NULL: binaries cannot be identified */
	struct monitor_sandbox *sandboxes;
};

/* FNV-1a: the instance id is a stable short name of the state folder, so a
 * test daemon and the real one never touch each other's objects. */
static uint32_t
monitor_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static void
monitor_fail(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
monitor_fail(char **err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	free(*err);
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) == -1)
		*err = NULL;
	va_end(ap);
}

/* Takes over a reason a module allocated, prefixed with what was being done. */
static void
monitor_fail_with(char **err, const char *what, char *why)
{
	monitor_fail(err, "%s: %s", what, why != NULL ? why : "failed");
	free(why);
}

/* <state>/sandboxes: root's, 0711, opened once without following links.
 * <state> belongs to the broker's user, who could put anything there:
 * whatever is at that name must be root's own folder, else refused. */
static int
monitor_setup_dirs(struct monitor *m, char **err)
{
	struct stat st;
	int state;

	xasprintf(&m->sandboxes_dir, "%s/sandboxes", m->state_dir);
	state = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (state == -1 || (mkdirat(state, "sandboxes", MONITOR_DIR_MODE) == -1 &&
	    errno != EEXIST) || (m->sandboxes_fd = openat(state, "sandboxes",
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    fstat(m->sandboxes_fd, &st) == -1) {
		monitor_fail(err, "cannot open %s: %s", m->sandboxes_dir, strerror(errno));
		if (state != -1)
			close(state);
		return -1;
	}
	close(state);
	if (st.st_uid != 0 || fchmod(m->sandboxes_fd, MONITOR_DIR_MODE) == -1) {
		monitor_fail(err, "%s is not root's own folder; remove it", m->sandboxes_dir);
		return -1;
	}
	return 0;
}

static int
monitor_setup_fence(struct monitor *m, char **err)
{
	struct fence_ports ports = { m->cfg.connect_port, m->cfg.dns_port,
	    m->cfg.transparent_port };

	if ((m->fence = fence_new(m->instance)) == NULL) {
		monitor_fail(err, "fence: %s", strerror(errno));
		return -1;
	}
	if (fence_install(m->fence, m->group, &ports) == -1) {
		monitor_fail(err, "fence: %s", fence_reason(m->fence));
		return -1;
	}
	return 0;
}

struct monitor *
monitor_new(const struct monitor_config *cfg, char **err)
{
	struct monitor *m = xcalloc(1, sizeof(*m));
	char *why = NULL;
	uint32_t h;

	m->cfg = *cfg;
	m->state_dir = xstrdup(cfg->state_dir);
	m->init_path = xstrdup(cfg->init_path);
	m->runtime_dir = cfg->runtime_dir != NULL ? xstrdup(cfg->runtime_dir) : NULL;
	h = monitor_hash(m->state_dir);
	snprintf(m->instance, sizeof(m->instance), "i%08x", h);
	m->group = MONITOR_GROUP_BASE | (h & 0xffffff);
	m->sandboxes_fd = -1;
	m->self_netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (m->self_netns == -1 || monitor_setup_dirs(m, err) == -1)
		goto fail;
	if (cgroup_host_discover(&m->cgh, &why) == -1) {
		monitor_fail_with(err, "cgroups", why);
		goto fail;
	}
	if (monitor_setup_fence(m, err) == -1)
		goto fail;
	/* Without the program, binary-scoped entries refuse (fail closed). */
	if (identify_load(&m->bpf) != IDENTIFY_OK) {
		log_warnx("identification unavailable: binary-scoped policy entries will refuse");
		m->bpf = NULL;
	}
	return m;
fail:
	monitor_free(m);
	return NULL;
}

void
monitor_free(struct monitor *m)
{
	if (m == NULL)
		return;
	while (m->sandboxes != NULL)
		monitor_destroy(m, m->sandboxes->name, NULL);
	/* This instance's cgroup roots go too: a stopped daemon leaves nothing. */
	if (m->cgh.v2.base[0] != '\0')
		cgroup_instance_remove(&m->cgh, m->instance, NULL);
	if (m->fence != NULL) {
		fence_remove(m->fence);
		fence_free(m->fence);
	}
	identify_detach(m->host_watch);
	identify_unload(m->bpf);
	if (m->self_netns != -1)
		close(m->self_netns);
	if (m->sandboxes_fd != -1)
		close(m->sandboxes_fd);
	free(m->state_dir);
	free(m->init_path);
	free(m->runtime_dir);
	free(m->sandboxes_dir);
	free(m);
}

int
monitor_watch_host(struct monitor *m, const char *cgroup_path, char **err)
{
	enum identify_err e;
	int cg;

	if (m->bpf == NULL) {
		monitor_fail(err, "the identification program is not loaded");
		return -1;
	}
	/* The operator's config names it; opened without following a link. */
	if ((cg = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		monitor_fail(err, "%s: %s", cgroup_path, strerror(errno));
		return -1;
	}
	e = identify_attach(m->bpf, cg, &m->host_watch);
	close(cg);
	if (e != IDENTIFY_OK) {
		monitor_fail(err, "%s: %s", cgroup_path, identify_strerror(e));
		return -1;
	}
	return 0;
}

void
monitor_firewall(struct monitor *m, char *line, size_t size)
{
	struct fwcheck_target t = {
		.pool_addr = ntohl(m->cfg.pool.s_addr), .pool_prefix = m->cfg.pool_prefix,
		.tcp_ports = { m->cfg.connect_port, m->cfg.transparent_port, m->cfg.dns_port },
		.n_tcp_ports = 3, .udp_ports = { m->cfg.dns_port }, .n_udp_ports = 1,
		.ifname_prefix = MONITOR_IFNAME_PREFIX, .ifgroup = m->group,
	};
	struct fwcheck_result r;

	t.own_table = fence_table(m->fence);
	fwcheck_run(&t, &r);
	if (r.verdict == FWCHECK_OK)
		snprintf(line, size, "%s", fwcheck_verdict_name(r.verdict));
	else
		snprintf(line, size, "%s: %s", fwcheck_verdict_name(r.verdict), r.reason);
}

int
monitor_map_fd(const struct monitor *m)
{
	return m->bpf != NULL ? identify_map_fd(m->bpf) : -1;
}

const char *
monitor_instance(const struct monitor *m)
{
	return m->instance;
}

/* The two /30 addresses of SLOT: .1 the gateway, .2 the sandbox. */
static int
monitor_slot_addresses(const struct monitor *m, unsigned slot, struct in_addr *gw,
    struct in_addr *sb)
{
	uint32_t base = ntohl(m->cfg.pool.s_addr);
	uint32_t slots = m->cfg.pool_prefix >= 30 ? 1 : 1u << (30 - m->cfg.pool_prefix);

	if (slot >= slots || slot >= MONITOR_SLOTS_MAX)
		return -1;
	gw->s_addr = htonl(base + slot * 4 + 1);
	sb->s_addr = htonl(base + slot * 4 + 2);
	return 0;
}

static void monitor_remove_home(struct monitor *m, const char *name);

/* Makes folder NAME in DIRFD (MODE) and opens it, never through a link. */
static int
monitor_mkdir_open(int dirfd, const char *name, mode_t mode)
{
	int fd;

	if (mkdirat(dirfd, name, mode) == -1 && errno != EEXIST)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd != -1 && fchmod(fd, mode) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The sandbox's private HOME, made fresh, owned by run_as; its descriptor
 * in *HOME_FD. The folders above it are root's: run_as cannot swap them
 * for links. */
static int
monitor_make_home(struct monitor *m, const struct monitor_create *req, char *home,
    size_t size, int *home_fd, char **err)
{
	int dir;

	if (snprintf(home, size, "%s/%s/home", m->sandboxes_dir, req->name) >= (int)size) {
		monitor_fail(err, "the state folder's path is too long");
		return -1;
	}
	/* Whatever an earlier sandbox of that name left goes first: a home
	 * is never handed on. */
	monitor_remove_home(m, req->name);
	if ((dir = monitor_mkdir_open(m->sandboxes_fd, req->name, MONITOR_DIR_MODE)) == -1 ||
	    (*home_fd = monitor_mkdir_open(dir, "home", MONITOR_HOME_MODE)) == -1 ||
	    fchown(*home_fd, req->uid, req->gid) == -1) {
		monitor_fail(err, "cannot make the sandbox's home %s: %s", home, strerror(errno));
		if (dir != -1)
			close(dir);
		return -1;
	}
	close(dir);
	return 0;
}

/* Removes what is inside DIRFD without following any link: a sandbox's
 * user controls these files, so nothing here may lead out of them. */
static void
monitor_empty_dir(int dirfd)
{
	DIR *d = fdopendir(dup(dirfd));
	struct dirent *de;
	struct stat st;
	int sub;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (S_ISDIR(st.st_mode) && (sub = openat(dirfd, de->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1) {
			monitor_empty_dir(sub);
			close(sub);
			unlinkat(dirfd, de->d_name, AT_REMOVEDIR);
		} else {
			unlinkat(dirfd, de->d_name, 0);
		}
	}
	closedir(d);
}

/* Empties HOME (a sandbox's, in DIRFD) as its owner: the copies of
 * credentials are the sandbox user's files, deleted with its rights. */
static void
monitor_clear_home(int dirfd)
{
	int home = openat(dirfd, "home", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *why = NULL;

	if (home == -1)
		return;
	if (fstat(home, &st) == 0 && st.st_uid != 0 && st.st_gid != 0 &&
	    credcopy_clear(st.st_uid, st.st_gid, home, 0, &why) == -1) {
		log_warnx("%s: %s", __func__, why != NULL ? why : "failed");
		free(why);
	}
	close(home);
}

/* Deletes <state>/sandboxes/NAME and all it holds. */
static void
monitor_remove_home(struct monitor *m, const char *name)
{
	int sub = openat(m->sandboxes_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (sub != -1) {
		monitor_clear_home(sub);
		monitor_empty_dir(sub);
		close(sub);
		unlinkat(m->sandboxes_fd, name, AT_REMOVEDIR);
	}
}

/* Runs FN with the calling thread in the network namespace NETNS_FD. */
static int
monitor_in_netns(struct monitor *m, int netns_fd, int (*fn)(void))
{
	int r, saved;

	if (setns(netns_fd, CLONE_NEWNET) == -1)
		return -1;
	r = fn();
	saved = errno;
	/* Failing to come back would leave root in a sandbox's network. */
	if (setns(m->self_netns, CLONE_NEWNET) == -1)
		fatal("cannot return to corrald's network namespace");
	errno = saved;
	return r;
}

/* The veth of SLOT: host end in this instance's group (the fence matches
 * the group), sandbox end in NETNS with its address and default route.
 * IPv6 off on both ends only: ::1 stays for local dev servers. */
static int
monitor_wire(struct monitor *m, unsigned slot, int netns, struct in_addr gw,
    struct in_addr sb, char **err)
{
	char host[IF_NAMESIZE], peer[IF_NAMESIZE];
	struct nl *nl = nl_open(), *in = NULL;
	int hidx, pidx, rc = -1;

	snprintf(host, sizeof(host), MONITOR_IFNAME_PREFIX "%uh", slot);
	snprintf(peer, sizeof(peer), MONITOR_IFNAME_PREFIX "%us", slot);
	if (nl == NULL || nl_veth_create(nl, host, peer, netns, m->group, &hidx) == -1 ||
	    nl_ipv6_disable(-1, host) == -1 || nl_addr_add(nl, hidx, AF_INET, &gw, 30) == -1 ||
	    nl_link_up(nl, hidx) == -1)
		goto out;
	if ((in = nl_open_in_netns(netns)) == NULL || nl_ipv6_disable(netns, peer) == -1 ||
	    (pidx = nl_ifindex(in, peer)) == -1 || nl_addr_add(in, pidx, AF_INET, &sb, 30) == -1 ||
	    nl_link_up(in, pidx) == -1 || nl_link_up(in, 1) == -1 ||
	    nl_route_add_default(in, pidx, &gw) == -1)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		monitor_fail(err, "network: %s", in != NULL ? nl_reason(in) :
		    nl != NULL ? nl_reason(nl) : strerror(errno));
	nl_close(in);
	nl_close(nl);
	return rc;
}

static struct monitor_sandbox *
monitor_find(struct monitor *m, const char *name)
{
	for (struct monitor_sandbox *s = m->sandboxes; s != NULL; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

/* Undoes what monitor_create built of S, and forgets it. */
static void
monitor_sandbox_free(struct monitor *m, struct monitor_sandbox *s)
{
	char *why = NULL;

	if (s->cg != NULL && cgroup_sandbox_remove(s->cg, &why) == -1) {
		log_error("%s: %s: %s", __func__, s->name, why);
		free(why);
	}
	identify_detach(s->watch);
	spawn_free(s->sp);
	cgroup_sandbox_free(s->cg);
	monitor_remove_home(m, s->name);
	free(s);
}

/* Fills the facts of OUT that decide enforcement, and says what is missing. */
static void
monitor_layers_of(struct monitor *m, struct monitor_sandbox *s, struct monitor_built *out)
{
	out->landlock_abi = spawn_landlock_abi(s->sp);
	out->seccomp = spawn_seccomp(s->sp);
	out->n_missing = 0;
	if (out->landlock_abi < 6)
		out->missing[out->n_missing++] = out->landlock_abi == 0 ? "Landlock" :
		    "Landlock ABI 6 (scopes)";
	if (!out->seccomp)
		out->missing[out->n_missing++] = "seccomp";
	if (fence_present(m->fence) != 1)
		out->missing[out->n_missing++] = "nftables fence";
	if (cgroup_sandbox_v2_fd(s->cg) == -1)
		out->missing[out->n_missing++] = "cgroup v2 tracking";
	out->limit_source[0] = cgroup_limit_source(s->cg, CGROUP_PIDS);
	out->limit_source[1] = cgroup_limit_source(s->cg, CGROUP_MEMORY);
	out->limit_source[2] = cgroup_limit_source(s->cg, CGROUP_CPU);
}

/* Opens REQ's grant home as the caller: a non-root caller may only name
 * its own (DESIGN section 9). -1 with the reason in *ERR. */
static int
monitor_grant_home(const struct monitor_create *req, char **err)
{
	struct stat st;
	char *why = NULL;
	int fd;

	fd = spawn_open_dir_as(req->caller_uid, req->caller_gid, req->caller_groups,
	    req->n_caller_groups, req->grant_home, &why);
	if (fd == -1) {
		monitor_fail_with(err, "--home", why);
		return -1;
	}
	if (req->caller_uid != 0 && (fstat(fd, &st) == -1 || st.st_uid != req->caller_uid)) {
		monitor_fail(err, "--home %s is not yours: grants copy only from your own home",
		    req->grant_home);
		close(fd);
		return -1;
	}
	return fd;
}

/* Copies REQ's grants into HOME_FD as run_as (broker/monitor/credcopy.c). */
static int
monitor_grants(struct monitor *m, const struct monitor_create *req, int home_fd,
    struct monitor_built *out, char **err)
{
	struct credcopy_grant grants[MONITOR_GRANTS_MAX];
	struct credcopy_spec spec = { .uid = req->uid, .gid = req->gid, .dst_home_fd = home_fd,
	    .dst_home_path = out->home, .grants = grants, .ngrants = req->n_grants };
	char *why = NULL;
	int rc = -1;

	if (req->n_grants == 0)
		return 0;
	if (req->n_grants > MONITOR_GRANTS_MAX || req->grant_home == NULL) {
		monitor_fail(err, "refused: at most %d grants, and a home to copy them from",
		    MONITOR_GRANTS_MAX);
		return -1;
	}
	for (size_t i = 0; i < req->n_grants; i++)
		if (credcopy_grant_find(req->grants[i], m->cfg.credentials, m->cfg.ncredentials,
		    &grants[i], &why) == -1) {
			monitor_fail_with(err, "grant", why);
			return -1;
		}
	if ((spec.src_home_fd = monitor_grant_home(req, err)) == -1)
		return -1;
	if (credcopy_copy(&spec, &out->creds, &why) == 0)
		rc = 0;
	else
		monitor_fail_with(err, "grants", why);
	close(spec.src_home_fd);
	return rc;
}

/* Starts corral-init for REQ in fresh namespaces, inside S's cgroups. */
static int
monitor_start_init(struct monitor *m, const struct monitor_create *req,
    struct monitor_sandbox *s, struct monitor_built *out, int home_fd, char **err)
{
	char *gateway = s->gateway, *why = NULL;
	struct spawn_spec spec = {
		.name = req->name, .uid = req->uid, .gid = req->gid,
		.caller_uid = req->caller_uid, .caller_gid = req->caller_gid,
		.caller_groups = req->caller_groups, .n_caller_groups = req->n_caller_groups,
		.roots = req->roots, .n_roots = req->n_roots, .home = out->home, .home_fd = home_fd,
		.workdir = req->workdir, .gateway = gateway, .runtime = m->runtime_dir,
		.init_path = m->init_path, .cgroup_fd = cgroup_sandbox_v2_fd(s->cg),
	};

	inet_ntop(AF_INET, &out->gateway, s->gateway, sizeof(s->gateway));
	if ((s->sp = spawn_start(&spec, &why)) == NULL) {
		monitor_fail_with(err, "sandbox", why);
		return -1;
	}
	/* corral-init waits for its spec: it joins the v1 limits before
	 * any workload can run. */
	if (cgroup_sandbox_join(s->cg, spawn_pid(s->sp), &why) == -1) {
		monitor_fail_with(err, "cgroups", why);
		return -1;
	}
	return 0;
}

/* The sandbox's identification: the diag socket opened inside its network
 * namespace, the program watching its cgroup. */
static int
monitor_watch(struct monitor *m, struct monitor_sandbox *s, struct monitor_built *out,
    char **err)
{
	out->map_fd = -1;
	out->diag_fd = monitor_in_netns(m, spawn_netns_fd(s->sp), identify_diag_open);
	if (out->diag_fd == -1) {
		monitor_fail(err, "identification: %s", strerror(errno));
		return -1;
	}
	if (m->bpf == NULL)
		return 0;
	if (identify_attach(m->bpf, cgroup_sandbox_v2_fd(s->cg), &s->watch) != IDENTIFY_OK) {
		monitor_fail(err, "identification: cannot watch the sandbox's cgroup");
		return -1;
	}
	out->map_fd = identify_map_fd(m->bpf);
	return 0;
}

/* A socket of TYPE on the gateway's PORT: the broker serves it, but
 * binding the DNS port takes privilege. -1 with the reason in *ERR. */
static int
monitor_gateway_socket(struct in_addr gw, uint16_t port, int type, char **err)
{
	struct sockaddr_in at = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = gw };
	int fd = sock_bind((struct sockaddr *)&at, sizeof(at), type);

	if (fd == -1)
		monitor_fail(err, "cannot listen on the sandbox's gateway port %u: %s",
		    (unsigned)port, strerror(errno));
	return fd;
}

/* The proxy's and the DNS stub's sockets on the sandbox's gateway. */
static int
monitor_listeners(struct monitor *m, struct monitor_built *out, char **err)
{
	if ((out->connect_fd = monitor_gateway_socket(out->gateway, m->cfg.connect_port,
	    SOCK_STREAM, err)) == -1 ||
	    (out->transparent_fd = monitor_gateway_socket(out->gateway, m->cfg.transparent_port,
	    SOCK_STREAM, err)) == -1 ||
	    (out->dns_udp_fd = monitor_gateway_socket(out->gateway, m->cfg.dns_port,
	    SOCK_DGRAM, err)) == -1 ||
	    (out->dns_tcp_fd = monitor_gateway_socket(out->gateway, m->cfg.dns_port,
	    SOCK_STREAM, err)) == -1)
		return -1;
	return 0;
}

/* Lets corral-init build the sandbox and checks the layers it has. */
static int
monitor_finish(struct monitor *m, const struct monitor_create *req,
    struct monitor_sandbox *s, struct monitor_built *out, char **err)
{
	char *why = NULL;

	if (spawn_ready(s->sp, SPAWN_READY_TIMEOUT_MS, &why) == -1) {
		monitor_fail_with(err, "sandbox", why);
		return -1;
	}
	monitor_layers_of(m, s, out);
	/* Fail closed: under hard_requirement a missing layer is a refusal
	 * that names it, never a sandbox silently missing it. */
	if (req->hard_requirement && out->n_missing > 0) {
		monitor_fail(err, "%s is not available on this machine (landlock.compatibility "
		    "is hard_requirement; best_effort would start it as partial)", out->missing[0]);
		return -1;
	}
	out->init_pid = spawn_pid(s->sp);
	out->channel_fd = spawn_take_channel(s->sp);
	return 0;
}

/* Checked again here, each refusal with its reason: the broker's word is
 * not enough for root. */
static int
monitor_check(struct monitor *m, const struct monitor_create *req, struct monitor_built *out,
    char **err)
{
	const char *why = NULL;

	if (!policy_name_valid(req->name))
		why = "the sandbox name is not valid";
	else if (req->uid == 0 || req->gid == 0)
		why = "a sandbox never runs as root (uid or gid 0)";
	else if (monitor_find(m, req->name) != NULL)
		why = "a sandbox of that name already exists";
	else if (monitor_slot_addresses(m, req->slot, &out->gateway, &out->address) == -1)
		why = "its address slot lies outside the sandbox pool";
	else if (req->grant_home != NULL && req->grant_home[0] != '/')
		why = "the home grants are copied from is not an absolute path";
	if (why == NULL)
		return 0;
	monitor_fail(err, "refused: %s", why);
	return -1;
}

int
monitor_create(struct monitor *m, const struct monitor_create *req,
    struct monitor_built *out, char **err)
{
	struct cgroup_limits lim = { req->pids, req->memory_bytes, req->cpu_milli };
	struct monitor_sandbox *s;
	char *why = NULL;
	int home_fd = -1;

	memset(out, 0, sizeof(*out));
	out->channel_fd = out->diag_fd = out->map_fd = -1;
	out->connect_fd = out->transparent_fd = out->dns_udp_fd = out->dns_tcp_fd = -1;
	if (monitor_check(m, req, out, err) == -1)
		return -1;
	s = xcalloc(1, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", req->name);
	if (cgroup_sandbox_create(&m->cgh, m->instance, req->name, &lim, &s->cg, &why) == -1) {
		monitor_fail_with(err, "cgroups", why);
		goto fail;
	}
	if (monitor_make_home(m, req, out->home, sizeof(out->home), &home_fd, err) == -1 ||
	    monitor_grants(m, req, home_fd, out, err) == -1 ||
	    monitor_start_init(m, req, s, out, home_fd, err) == -1 ||
	    monitor_wire(m, req->slot, spawn_netns_fd(s->sp), out->gateway, out->address, err) == -1 ||
	    monitor_listeners(m, out, err) == -1 ||
	    monitor_watch(m, s, out, err) == -1 || monitor_finish(m, req, s, out, err) == -1)
		goto fail;
	close(home_fd);
	s->next = m->sandboxes;
	m->sandboxes = s;
	return 0;
fail:
	if (home_fd != -1)
		close(home_fd);
	monitor_built_close(out);
	credcopy_result_free(out->creds);
	out->creds = NULL;
	monitor_sandbox_free(m, s);
	return -1;
}

int
monitor_destroy(struct monitor *m, const char *name, char **err)
{
	struct monitor_sandbox **pp, *s;

	for (pp = &m->sandboxes; *pp != NULL; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, name) != 0)
			continue;
		s = *pp;
		*pp = s->next;
		monitor_sandbox_free(m, s);
		return 0;
	}
	/* Not ours (any more): what may be left of it still goes. */
	if (policy_name_valid(name)) {
		cgroup_remove_by_name(&m->cgh, m->instance, name, err);
		monitor_remove_home(m, name);
	}
	return 0;
}

struct monitor_reap_ctx {
	struct monitor *m;
	const char *const *live;
	size_t nlive;
	size_t removed;
	void (*report)(const char *what, void *arg);
	void *arg;
};

static void
monitor_reap_report(struct monitor_reap_ctx *c, const char *kind, const char *name)
{
	char what[384];

	c->removed++;
	if (c->report == NULL)
		return;
	snprintf(what, sizeof(what), "%s %s", kind, name);
	c->report(what, c->arg);
}

static bool
monitor_is_live(const struct monitor_reap_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->nlive; i++)
		if (strcmp(c->live[i], name) == 0)
			return true;
	return monitor_find(c->m, name) != NULL;
}

static void
monitor_reap_one(const char *name, void *arg)
{
	struct monitor_reap_ctx *c = arg;

	if (monitor_is_live(c, name) || !policy_name_valid(name))
		return;
	cgroup_remove_by_name(&c->m->cgh, c->m->instance, name, NULL);
	monitor_reap_report(c, "cgroup", name);
}

/* Homes under the state folder with no live sandbox. */
static void
monitor_reap_homes(struct monitor_reap_ctx *c)
{
	int fd = fcntl(c->m->sandboxes_fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd != -1 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (d == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && !monitor_is_live(c, de->d_name) &&
		    policy_name_valid(de->d_name)) {
			monitor_remove_home(c->m, de->d_name);
			monitor_reap_report(c, "home", de->d_name);
		}
	closedir(d);
}

size_t
monitor_reap(struct monitor *m, const char *const *live, size_t nlive,
    void (*removed)(const char *what, void *arg), void *arg)
{
	struct monitor_reap_ctx c = { m, live, nlive, 0, removed, arg };

	cgroup_list_sandboxes(&m->cgh, m->instance, monitor_reap_one, &c, NULL);
	monitor_reap_homes(&c);
	return c.removed;
}
