/* The monitor's closed list of privileged operations: set up (fence,
 * cgroups, identification), build a sandbox, tear one down, reap. Each
 * says why it is safe where it acts as root; see privop.h. */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <poll.h>
#include <net/if.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/monitor/bpfload.h"
#include "broker/monitor/cgroup.h"
#include "broker/monitor/credcopy.h"
#include "broker/monitor/fwcheck.h"
#include "broker/monitor/fence.h"
#include "broker/monitor/nflog.h"
#include "broker/monitor/opener.h"
#include "broker/monitor/privop.h"
#include "broker/monitor/spawn.h"
#include "broker/monitor/netlink.h"
#include "common/initproto.h"
#include "common/log.h"
#include "common/reason.h"
#include "common/sock.h"
#include "common/xmalloc.h"
#include "policy/name.h"

#define PRIVOP_GROUP_BASE 0x63000000u  /* interface groups: "c" and 24 bits of the instance */
#define PRIVOP_NFLOG_BASE 0x8000u      /* NFLOG groups: the top half, 15 bits of the instance */
#define PRIVOP_HOME_MODE 0700
#define PRIVOP_HOME_MODE_TEXT "0700"
#define PRIVOP_HOME_INODES "524288"      /* files HOME holds at most */
#define PRIVOP_FS_OPTION_MAX_BYTES 32
#define PRIVOP_IFNAME_PREFIX "crs"       /* crs<slot>h, crs<slot>s */
#define PRIVOP_DIR_MODE 0711           /* others may pass through to their own home, not list */

_Static_assert(MONITOR_SOCKETS_MAX == INITPROTO_SOCKETS_MAX &&
    MONITOR_SOCKETS_MAX <= BPFLOAD_UNIX_PATHS_MAX, "one limit of listed unix sockets");
_Static_assert(sizeof(INITPROTO_SOCKETS_DIR "/") + INITPROTO_SOCKET_NAME_MAX_BYTES <=
    BPFLOAD_UNIX_LISTED_MAX_BYTES, "every listed socket's inside path fits the guard");

/* What the monitor keeps of one sandbox, or of a warm one: built ahead
 * (cgroup, corral-init waiting, veth, gateway sockets, identification)
 * and named CGROUP_WARM_PREFIX<slot> until a create claims it. */
struct privop_sandbox {
	char name[64];
	unsigned slot;
	bool warm;                      /* not claimed yet */
	struct monitor_built pre;       /* while warm: what a claim hands the broker */
	uid_t owner;                    /* the caller that created it: may forward into it */
	char gateway[INET_ADDRSTRLEN];  /* spawn reads it again when corral-init is ready */
	struct cgroup_sandbox *cg;
	struct spawn *sp;
	struct bpfload_attachment *watch;
	struct bpfload_unix_guard *unix_guard;  /* NULL: host Unix sockets unguarded */
	struct privop_sandbox *next;
};

struct privop {
	struct monitor_setup cfg;           /* grants point into the configuration */
	char *state_dir;
	char *init_path;
	char *runtime_dir;
	char *sandboxes_dir;            /* <state>/sandboxes: the homes (for messages) */
	int sandboxes_fd;               /* it, opened once: <state> is the broker's, so
	                                 * no path through it is trusted afterwards */
	struct bpfload_attachment *host_watch;  /* host_proxy.cgroup, when watched */
	char instance[MONITOR_INSTANCE_MAX_BYTES];
	uint32_t group;                 /* the interface group of this instance's veths */
	uint16_t log_group;             /* the NFLOG group of its bypass records */
	int bypass_fd;                  /* bound to it, until the HELLO hands it over; -1: none */
	char *bypass_why;               /* why there is none */
	int self_netns;                 /* to come back after work in a sandbox's */
	struct cgroup_host cgh;
	struct fence *fence;
	struct bpfload *bpf;            /* NULL: binaries cannot be identified */
	struct bpfload_unix *unix_bpf;  /* NULL: no sandbox gets the Unix socket guard */
	struct privop_sandbox *sandboxes;
	/* What the monitor read of the ruleset, kept until the watch sees a
	 * change (fwcheck_watch_open; -1: read again every time): the host
	 * firewall's verdict, and whether the fence's table is there. */
	int fw_watch;
	bool fw_known;
	struct fwcheck_result fw_ruleset;
	bool fence_known;
	bool fence_there;
	privop_ca_fn ca_fn;             /* a create's CA, when it follows the request */
	void *ca_arg;
};

/* FNV-1a: the instance id is a stable short name of the state folder, so a
 * test daemon and the real one never touch each other's objects. */
static uint32_t
privop_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Takes over a reason a module allocated, prefixed with what was being done. */
static void
privop_fail_with(char **err, const char *what, char *why)
{
	reason_set(err, "%s: %s", what, why != NULL ? why : "failed");
	free(why);
}

/* <state>/sandboxes: root's, 0711, opened once without following links.
 * <state> belongs to the broker's user, who could put anything there:
 * whatever is at that name must be root's own folder, else refused. */
static int
privop_setup_dirs(struct privop *p, char **err)
{
	struct stat st;
	int state;

	xasprintf(&p->sandboxes_dir, "%s/sandboxes", p->state_dir);
	state = open(p->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (state == -1 || (mkdirat(state, "sandboxes", PRIVOP_DIR_MODE) == -1 &&
	    errno != EEXIST) || (p->sandboxes_fd = openat(state, "sandboxes",
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    fstat(p->sandboxes_fd, &st) == -1) {
		reason_set(err, "cannot open %s: %s", p->sandboxes_dir, strerror(errno));
		if (state != -1)
			close(state);
		return -1;
	}
	close(state);
	if (st.st_uid != 0 || fchmod(p->sandboxes_fd, PRIVOP_DIR_MODE) == -1) {
		reason_set(err, "%s is not root's own folder; remove it", p->sandboxes_dir);
		return -1;
	}
	return 0;
}

/* The NFLOG socket first: the fence copies packets to the group only
 * when this instance holds it, never to a group another process bound. */
static int
privop_setup_fence(struct privop *p, char **err)
{
	struct fence_ports ports = { GATEWAY_CONNECT_PORT, GATEWAY_CONNECT_LISTEN_PORT,
	    GATEWAY_DNS_PORT, GATEWAY_TRANSPARENT_PORT };

	if ((p->fence = fence_new(p->instance)) == NULL) {
		reason_set(err, "fence: %s", strerror(errno));
		return -1;
	}
	if ((p->bypass_fd = nflog_open(p->log_group, &p->bypass_why)) == -1)
		log_warnx("no bypass records (%s): rejected packets are only counted", p->bypass_why);
	else
		fence_set_log_group(p->fence, p->log_group);
	if (fence_install(p->fence, p->group, &ports) == -1) {
		reason_set(err, "fence: %s", fence_reason(p->fence));
		return -1;
	}
	return 0;
}

/* The Unix socket guard, loaded once (Linux 6.7's connect_unix hooks).
 * Without it, every sandbox lacks the layer: hard_requirement refuses
 * them, best_effort starts them partial. */
static void
privop_setup_unix_guard(struct privop *p)
{
	if ((p->unix_bpf = bpfload_unix_open()) == NULL)
		log_warnx("unix socket guard unavailable (%s): sandboxes lack the "
		    "unix-socket guard layer", strerror(errno));
}

struct privop *
privop_new(const struct monitor_setup *cfg, char **err)
{
	struct privop *p = xcalloc(1, sizeof(*p));
	char *why = NULL;
	uint32_t h;

	p->cfg = *cfg;
	p->state_dir = xstrdup(cfg->state_dir);
	p->init_path = xstrdup(cfg->init_path);
	p->runtime_dir = cfg->runtime_dir != NULL ? xstrdup(cfg->runtime_dir) : NULL;
	h = privop_hash(p->state_dir);
	snprintf(p->instance, sizeof(p->instance), "i%08x", h);
	p->group = PRIVOP_GROUP_BASE | (h & 0xffffff);
	p->log_group = (uint16_t)(PRIVOP_NFLOG_BASE | (h & 0x7fff));
	p->bypass_fd = -1;
	p->sandboxes_fd = -1;
	/* Before the first listing: a change after it is then seen. */
	p->fw_watch = fwcheck_watch_open();
	p->self_netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (p->self_netns == -1 || privop_setup_dirs(p, err) == -1)
		goto fail;
	if (cgroup_host_discover(&p->cgh, &why) == -1) {
		privop_fail_with(err, "cgroups", why);
		goto fail;
	}
	if (privop_setup_fence(p, err) == -1)
		goto fail;
	/* Without the program, binary-scoped entries refuse (fail closed). */
	if ((p->bpf = bpfload_open()) == NULL) {
		log_warnx("identification unavailable: binary-scoped policy entries will refuse");
		p->bpf = NULL;
	}
	privop_setup_unix_guard(p);
	return p;
fail:
	privop_free(p);
	return NULL;
}

void
privop_free(struct privop *p)
{
	if (p == NULL)
		return;
	while (p->sandboxes != NULL)
		privop_destroy(p, p->sandboxes->name, NULL);
	/* This instance's cgroup roots go too: a stopped daemon leaves nothing. */
	if (p->cgh.v2.base[0] != '\0')
		cgroup_instance_remove(&p->cgh, p->instance, NULL);
	if (p->fence != NULL) {
		fence_remove(p->fence);
		fence_free(p->fence);
	}
	bpfload_detach(p->host_watch);
	bpfload_close(p->bpf);
	bpfload_unix_close(p->unix_bpf);
	if (p->self_netns != -1)
		close(p->self_netns);
	if (p->sandboxes_fd != -1)
		close(p->sandboxes_fd);
	if (p->bypass_fd != -1)
		close(p->bypass_fd);
	if (p->fw_watch != -1)
		close(p->fw_watch);
	free(p->bypass_why);
	free(p->state_dir);
	free(p->init_path);
	free(p->runtime_dir);
	free(p->sandboxes_dir);
	free(p);
}

int
privop_watch_host(struct privop *p, const char *cgroup_path, char **err)
{
	int cg, saved;

	if (p->bpf == NULL) {
		reason_set(err, "the identification program is not loaded");
		return -1;
	}
	/* The operator's config names it; opened without following a link. */
	if ((cg = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		reason_set(err, "%s: %s", cgroup_path, strerror(errno));
		return -1;
	}
	p->host_watch = bpfload_attach(p->bpf, cg);
	saved = errno;
	close(cg);
	if (p->host_watch == NULL) {
		reason_set(err, "%s: the identification program cannot watch it: %s",
		    cgroup_path, strerror(saved));
		return -1;
	}
	return 0;
}

/* Forgets what was read of the ruleset when the watch saw it change. */
static void
privop_ruleset_news(struct privop *p)
{
	if (fwcheck_watch_changed(p->fw_watch))
		p->fw_known = p->fence_known = false;
}

/* Whether the fence's table is in the ruleset: listed once per change
 * (a listing costs about 0.5 ms, a create's largest single step). */
static bool
privop_fence_there(struct privop *p)
{
	int present;

	privop_ruleset_news(p);
	if (p->fence_known)
		return p->fence_there;
	present = fence_present(p->fence);
	/* An error is never kept: the next create asks again. */
	p->fence_known = present != -1;
	p->fence_there = present == 1;
	return p->fence_there;
}

void
privop_firewall(struct privop *p, char *line, size_t size)
{
	struct fwcheck_target t = {
		.pool_addr = ntohl(p->cfg.pool.s_addr), .pool_prefix = p->cfg.pool_prefix,
		/* What the input hook sees: after the fence's redirects. */
		.tcp_ports = { GATEWAY_CONNECT_LISTEN_PORT, GATEWAY_TRANSPARENT_PORT,
		    GATEWAY_DNS_PORT },
		.n_tcp_ports = 3, .udp_ports = { GATEWAY_DNS_PORT }, .n_udp_ports = 1,
		.ifname_prefix = PRIVOP_IFNAME_PREFIX, .ifgroup = p->group,
	};
	struct fwcheck_result r;

	t.own_table = fence_table(p->fence);
	privop_ruleset_news(p);
	if (!p->fw_known) {
		fwcheck_ruleset(&t, &p->fw_ruleset);
		p->fw_known = true;
	}
	r = p->fw_ruleset;
	fwcheck_legacy(&r);
	if (r.verdict == FWCHECK_OK)
		snprintf(line, size, "%s", fwcheck_verdict_name(r.verdict));
	else
		snprintf(line, size, "%s: %s", fwcheck_verdict_name(r.verdict), r.reason);
}

int
privop_map_fd(const struct privop *p)
{
	return p->bpf != NULL ? bpfload_map_fd(p->bpf) : -1;
}

int
privop_take_bypass_fd(struct privop *p, const char **why)
{
	int fd = p->bypass_fd;

	p->bypass_fd = -1;
	*why = p->bypass_why != NULL ? p->bypass_why : "";
	return fd;
}

const char *
privop_instance(const struct privop *p)
{
	return p->instance;
}

/* The two /30 addresses of SLOT: .1 the gateway, .2 the sandbox. */
static int
privop_slot_addresses(const struct privop *p, unsigned slot, struct in_addr *gw,
    struct in_addr *sb)
{
	uint32_t base = ntohl(p->cfg.pool.s_addr);
	uint32_t slots = p->cfg.pool_prefix >= 30 ? 1 : 1u << (30 - p->cfg.pool_prefix);

	if (slot >= slots || slot >= MONITOR_SLOTS_MAX)
		return -1;
	gw->s_addr = htonl(base + slot * 4 + 1);
	sb->s_addr = htonl(base + slot * 4 + 2);
	return 0;
}

static void privop_remove_home(struct privop *p, const char *name);

/* Makes folder NAME in DIRFD (MODE) and opens it, never through a link. */
static int
privop_mkdir_open(int dirfd, const char *name, mode_t mode)
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

/* A file system in RAM of SIZE bytes for HOME, owned by run_as, as a
 * detached mount (its descriptor): bounded, counted in the sandbox's
 * memory (its pages are charged to the processes that write them), and
 * gone with the sandbox's mount namespace. */
static int
privop_home_fs(const struct monitor_create *req, char **err)
{
	char opt[PRIVOP_FS_OPTION_MAX_BYTES];
	int fs = fsopen("tmpfs", FSOPEN_CLOEXEC), mnt = -1;

	if (fs == -1)
		return reason_set(err, "cannot make the sandbox's home: fsopen: %s", strerror(errno));
	snprintf(opt, sizeof(opt), "%llu", (unsigned long long)req->home_bytes);
	if (fsconfig(fs, FSCONFIG_SET_STRING, "size", opt, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", PRIVOP_HOME_INODES, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", PRIVOP_HOME_MODE_TEXT, 0) == 0 &&
	    snprintf(opt, sizeof(opt), "%u", (unsigned)req->uid) > 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "uid", opt, 0) == 0 &&
	    snprintf(opt, sizeof(opt), "%u", (unsigned)req->gid) > 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "gid", opt, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt == -1)
		reason_set(err, "cannot make the sandbox's home (a %llu-byte tmpfs): %s",
		    (unsigned long long)req->home_bytes, strerror(errno));
	close(fs);
	return mnt;
}

/* The sandbox's private HOME: a tmpfs (its descriptor in *HOME_FD), shown
 * inside at <state>/sandboxes/<name>/home, a folder made fresh and owned
 * by run_as that stays empty on the host. The folders above it are root's:
 * run_as cannot swap them for links. */
static int
privop_make_home(struct privop *p, const struct monitor_create *req, char *home,
    size_t size, int *home_fd, char **err)
{
	int dir, place = -1;

	if (snprintf(home, size, "%s/%s/home", p->sandboxes_dir, req->name) >= (int)size) {
		reason_set(err, "the state folder's path is too long");
		return -1;
	}
	/* Whatever an earlier sandbox of that name left goes first: a home
	 * is never handed on. */
	privop_remove_home(p, req->name);
	if ((dir = privop_mkdir_open(p->sandboxes_fd, req->name, PRIVOP_DIR_MODE)) == -1 ||
	    (place = privop_mkdir_open(dir, "home", PRIVOP_HOME_MODE)) == -1 ||
	    fchown(place, req->uid, req->gid) == -1) {
		reason_set(err, "cannot make the sandbox's home %s: %s", home, strerror(errno));
		if (dir != -1)
			close(dir);
		if (place != -1)
			close(place);
		return -1;
	}
	close(dir);
	close(place);
	return (*home_fd = privop_home_fs(req, err)) == -1 ? -1 : 0;
}

/* Removes what is inside DIRFD without following any link: a sandbox's
 * user controls these files, so nothing here may lead out of them. */
static void
privop_empty_dir(int dirfd)
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
			privop_empty_dir(sub);
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
privop_clear_home(int dirfd)
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
privop_remove_home(struct privop *p, const char *name)
{
	int sub = openat(p->sandboxes_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (sub != -1) {
		privop_clear_home(sub);
		privop_empty_dir(sub);
		close(sub);
		unlinkat(p->sandboxes_fd, name, AT_REMOVEDIR);
	}
}

/* Runs FN with the calling thread in the network namespace NETNS_FD. */
static int
privop_in_netns(struct privop *p, int netns_fd, int (*fn)(void))
{
	int r, saved;

	if (setns(netns_fd, CLONE_NEWNET) == -1)
		return -1;
	r = fn();
	saved = errno;
	/* Failing to come back would leave root in a sandbox's network. */
	if (setns(p->self_netns, CLONE_NEWNET) == -1)
		fatal("cannot return to corrald's network namespace");
	errno = saved;
	return r;
}

/* The veth of SLOT: host end in this instance's group (the fence matches
 * the group), sandbox end in NETNS with its address and default route.
 * IPv6 off on both ends only: ::1 stays for local dev servers. */
static int
privop_wire(struct privop *p, unsigned slot, int netns, struct in_addr gw,
    struct in_addr sb, int *host_ifindex, char **err)
{
	char host[IF_NAMESIZE], peer[IF_NAMESIZE];
	struct nl *nl = nl_open(), *in = NULL;
	int hidx, pidx, rc = -1;

	snprintf(host, sizeof(host), PRIVOP_IFNAME_PREFIX "%uh", slot);
	snprintf(peer, sizeof(peer), PRIVOP_IFNAME_PREFIX "%us", slot);
	if (nl == NULL || nl_veth_create(nl, host, peer, netns, p->group, &hidx) == -1 ||
	    nl_ipv6_disable(-1, host) == -1 || nl_addr_add(nl, hidx, AF_INET, &gw, 30) == -1 ||
	    nl_link_up(nl, hidx) == -1)
		goto out;
	*host_ifindex = hidx;
	if ((in = nl_open_in_netns(netns)) == NULL || nl_ipv6_disable(netns, peer) == -1 ||
	    (pidx = nl_ifindex(in, peer)) == -1 || nl_addr_add(in, pidx, AF_INET, &sb, 30) == -1 ||
	    nl_link_up(in, pidx) == -1 || nl_link_up(in, 1) == -1 ||
	    nl_route_add_default(in, pidx, &gw) == -1)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		reason_set(err, "network: %s", in != NULL ? nl_reason(in) :
		    nl != NULL ? nl_reason(nl) : strerror(errno));
	nl_close(in);
	nl_close(nl);
	return rc;
}

static struct privop_sandbox *
privop_find(struct privop *p, const char *name)
{
	for (struct privop_sandbox *s = p->sandboxes; s != NULL; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

/* Takes S out of the monitor's list. */
static void
privop_unlink(struct privop *p, struct privop_sandbox *s)
{
	for (struct privop_sandbox **pp = &p->sandboxes; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			return;
		}
}

/* A new record of a sandbox (or warm sandbox) NAME in SLOT. */
static struct privop_sandbox *
privop_sandbox_new(const char *name, unsigned slot)
{
	struct privop_sandbox *s = xcalloc(1, sizeof(*s));

	snprintf(s->name, sizeof(s->name), "%s", name);
	s->slot = slot;
	monitor_built_init(&s->pre);
	return s;
}

/* Ends S, undoing what privop_create built of it: its cgroups (every process in them), its programs, corral-init's
 * handle, its home. -1 when its cgroups could not be removed, the reason
 * in *ERR (logged when ERR is NULL): processes may be left. */
static int
privop_sandbox_end(struct privop *p, struct privop_sandbox *s, char **err)
{
	char *why = NULL;
	int rc = 0;

	if (s->cg != NULL && cgroup_sandbox_remove(s->cg, &why) == -1) {
		rc = -1;
		if (err != NULL)
			reason_set(err, "its cgroups could not be removed: %s", why);
		else
			log_error("%s: %s: %s", __func__, s->name, why);
		free(why);
	}
	bpfload_detach(s->watch);
	bpfload_unix_detach(s->unix_guard);
	spawn_free(s->sp);
	cgroup_sandbox_free(s->cg);
	monitor_built_close(&s->pre);
	if (!s->warm)
		privop_remove_home(p, s->name);
	free(s);
	return rc;
}

/* Undoes what privop_create built of S, and forgets it. */
static void
privop_sandbox_free(struct privop *p, struct privop_sandbox *s)
{
	(void)privop_sandbox_end(p, s, NULL);
}

/* Fills the facts of OUT that decide enforcement, and says what is missing. */
static void
privop_layers_of(struct privop *p, struct privop_sandbox *s, struct monitor_built *out)
{
	out->landlock_abi = spawn_landlock_abi(s->sp);
	out->seccomp = spawn_seccomp(s->sp);
	out->n_missing = 0;
	if (out->landlock_abi < 6)
		out->missing[out->n_missing++] = out->landlock_abi == 0 ? "Landlock" :
		    "Landlock ABI 6 (scopes)";
	if (!out->seccomp)
		out->missing[out->n_missing++] = "seccomp";
	if (!privop_fence_there(p))
		out->missing[out->n_missing++] = "nftables fence";
	if (cgroup_sandbox_v2_fd(s->cg) == -1)
		out->missing[out->n_missing++] = "cgroup v2 tracking";
	if (s->unix_guard == NULL)
		out->missing[out->n_missing++] = "unix-socket guard";
	out->limit_source[0] = cgroup_limit_source(s->cg, CGROUP_PIDS);
	out->limit_source[1] = cgroup_limit_source(s->cg, CGROUP_MEMORY);
	out->limit_source[2] = cgroup_limit_source(s->cg, CGROUP_CPU);
}

/* Opens REQ's grant home as the caller: a non-root caller may only name
 * its own (corral(1), "--grant"). -1 with the reason in *ERR. */
static int
privop_grant_home(const struct monitor_create *req, char **err)
{
	struct opener_who who = { req->caller_uid, req->caller_gid, req->caller_groups,
	    req->n_caller_groups };
	struct opener_item home = { req->grant_home, true };
	struct stat st;
	char *why = NULL;
	int fd;

	if (opener_open(&who, OPENER_DIR, &home, 1, &fd, &why) == -1) {
		privop_fail_with(err, "--home refused", why);
		return -1;
	}
	if (req->caller_uid != 0 && (fstat(fd, &st) == -1 || st.st_uid != req->caller_uid)) {
		reason_set(err, "--home %s refused: it is not yours; grants copy only from your own home",
		    req->grant_home);
		close(fd);
		return -1;
	}
	return fd;
}

/* Copies REQ's grants into HOME_FD as run_as (broker/monitor/credcopy.c). */
static int
privop_grants(struct privop *p, const struct monitor_create *req, int home_fd,
    struct monitor_built *out, char **err)
{
	struct grant grants[CORRAL_GRANTS_MAX];
	struct credcopy_spec spec = { .uid = req->uid, .gid = req->gid, .dst_home_fd = home_fd,
	    .dst_home_path = out->home, .grants = grants, .ngrants = req->n_grants,
	    .files = req->files, .nfiles = req->n_files, .src_home_fd = -1 };
	char *why = NULL;
	int rc = -1;

	if (req->n_grants == 0 && req->n_files == 0)
		return 0;
	if (req->n_grants > CORRAL_GRANTS_MAX || (req->n_grants > 0 && req->grant_home == NULL)) {
		reason_set(err, "refused: at most %d grants, and a home to copy them from",
		    CORRAL_GRANTS_MAX);
		return -1;
	}
	for (size_t i = 0; i < req->n_grants; i++)
		if (grant_find(req->grants[i], p->cfg.grants, p->cfg.ngrants, &grants[i]) == -1) {
			reason_set(err, "refused: unknown grant '%s'", req->grants[i]);
			return -1;
		}
	if (req->n_grants > 0 && (spec.src_home_fd = privop_grant_home(req, err)) == -1)
		return -1;
	if (credcopy_copy(&spec, &out->creds, &why) == 0)
		rc = 0;
	else
		privop_fail_with(err, "grants", why);
	if (spec.src_home_fd != -1)
		close(spec.src_home_fd);
	return rc;
}

/* Starts corral-init in fresh namespaces, inside S's cgroups: first, so
 * that it builds what no spec changes while the monitor does the rest. */
static int
privop_launch_init(struct privop *p, struct privop_sandbox *s, char **err)
{
	char *why = NULL;

	if ((s->sp = spawn_launch(p->init_path, cgroup_sandbox_v2_fd(s->cg), &why)) == NULL) {
		privop_fail_with(err, "sandbox", why);
		return -1;
	}
	/* corral-init waits for its spec: it joins the v1 limits before
	 * any workload can run. */
	if (cgroup_sandbox_join(s->cg, spawn_pid(s->sp), &why) == -1) {
		privop_fail_with(err, "cgroups", why);
		return -1;
	}
	return 0;
}

/* Gives S's corral-init what REQ names: its roots opened as the caller,
 * HOME, the host sockets. */
static int
privop_give_init(struct privop *p, const struct monitor_create *req,
    struct privop_sandbox *s, struct monitor_built *out, int home_fd, char **err)
{
	char *why = NULL;
	struct spawn_spec spec = {
		.name = req->name, .uid = req->uid, .gid = req->gid,
		.caller_uid = req->caller_uid, .caller_gid = req->caller_gid,
		.caller_groups = req->caller_groups, .n_caller_groups = req->n_caller_groups,
		.roots = req->roots, .n_roots = req->n_roots, .home = out->home, .home_fd = home_fd,
		.workdir = req->workdir, .gateway = s->gateway, .runtime = p->runtime_dir,
		.own_dirs = p->cfg.own_dirs, .n_own_dirs = p->cfg.n_own_dirs,
		.tmpfs_bytes = req->tmpfs_bytes,
		.sockets = req->sockets, .n_sockets = req->n_sockets,
	};

	inet_ntop(AF_INET, &out->gateway, s->gateway, sizeof(s->gateway));
	if (spawn_prepare(s->sp, &spec, &why) == -1) {
		privop_fail_with(err, "sandbox", why);
		return -1;
	}
	return 0;
}

/* The sandbox's identification: the diag socket opened inside its network
 * namespace, the program watching its cgroup. */
static int
privop_watch(struct privop *p, struct privop_sandbox *s, struct monitor_built *out,
    char **err)
{
	out->map_fd = -1;
	out->diag_fd = privop_in_netns(p, spawn_netns_fd(s->sp), sock_diag_open);
	if (out->diag_fd == -1) {
		reason_set(err, "identification: %s", strerror(errno));
		return -1;
	}
	if (p->bpf == NULL)
		return 0;
	if ((s->watch = bpfload_attach(p->bpf, cgroup_sandbox_v2_fd(s->cg))) == NULL) {
		reason_set(err, "identification: cannot watch the sandbox's cgroup");
		return -1;
	}
	out->map_fd = bpfload_map_fd(p->bpf);
	return 0;
}

/* The kernel's Unix socket guard on S's cgroup, its corral-init the
 * supervisor and the listed sockets reachable at their inside paths;
 * then corral-init supervises connect(). Where it cannot be put on, the
 * sandbox lacks the layer (privop_layers_of): hard_requirement refuses
 * it. -1 only for a request no broker sends. */
static int
privop_unix_guard(struct privop *p, struct privop_sandbox *s, const struct monitor_create *req,
    char **err)
{
	char store[MONITOR_SOCKETS_MAX][BPFLOAD_UNIX_LISTED_MAX_BYTES];
	const char *paths[MONITOR_SOCKETS_MAX];

	if (req->n_sockets > MONITOR_SOCKETS_MAX || req->n_sockets > BPFLOAD_UNIX_PATHS_MAX)
		return reason_set(err, "refused: at most %d unix sockets", MONITOR_SOCKETS_MAX);
	for (size_t i = 0; i < req->n_sockets; i++) {
		if (snprintf(store[i], sizeof(store[i]), "%s/%s", INITPROTO_SOCKETS_DIR,
		    req->sockets[i].name) >= (int)sizeof(store[i]))
			return reason_set(err, "refused: unix socket name %s is too long",
			    req->sockets[i].name);
		paths[i] = store[i];
	}
	if (p->unix_bpf == NULL || cgroup_sandbox_v2_fd(s->cg) == -1)
		return 0;
	s->unix_guard = bpfload_unix_attach(p->unix_bpf, cgroup_sandbox_v2_fd(s->cg),
	    spawn_pid(s->sp), paths, req->n_sockets);
	if (s->unix_guard == NULL) {
		log_warnx("sandbox %s: the unix socket guard cannot be put on: %s", s->name,
		    strerror(errno));
		return 0;
	}
	spawn_set_unix_guard(s->sp, true);
	return 0;
}

/* A socket of TYPE on the gateway's PORT: the broker serves it, but
 * binding the DNS port takes privilege. -1 with the reason in *ERR. */
static int
privop_gateway_socket(struct in_addr gw, uint16_t port, int type, char **err)
{
	struct sockaddr_in at = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = gw };
	int fd = sock_bind((struct sockaddr *)&at, sizeof(at), type);

	if (fd == -1)
		reason_set(err, "cannot listen on the sandbox's gateway port %u: %s",
		    (unsigned)port, strerror(errno));
	return fd;
}

/* The proxy's and the DNS stub's sockets on the sandbox's gateway. */
static int
privop_listeners(struct privop *p, struct monitor_built *out, char **err)
{
	if ((out->connect_fd = privop_gateway_socket(out->gateway, GATEWAY_CONNECT_LISTEN_PORT,
	    SOCK_STREAM, err)) == -1 ||
	    (out->transparent_fd = privop_gateway_socket(out->gateway, GATEWAY_TRANSPARENT_PORT,
	    SOCK_STREAM, err)) == -1 ||
	    (out->dns_udp_fd = privop_gateway_socket(out->gateway, GATEWAY_DNS_PORT,
	    SOCK_DGRAM, err)) == -1 ||
	    (out->dns_tcp_fd = privop_gateway_socket(out->gateway, GATEWAY_DNS_PORT,
	    SOCK_STREAM, err)) == -1)
		return -1;
	return 0;
}

void
privop_on_ca(struct privop *p, privop_ca_fn fn, void *arg)
{
	p->ca_fn = fn;
	p->ca_arg = arg;
}

/* The CA that follows every create, into S's spec: waited for only now,
 * so the broker makes it while the monitor builds. */
static int
privop_take_ca(struct privop *p, struct privop_sandbox *s, char **err)
{
	const char *pem, *why = "no CA came";

	if (p->ca_fn == NULL || (pem = p->ca_fn(p->ca_arg, &why)) == NULL)
		return reason_set(err, "sandbox: %s", why);
	spawn_set_ca(s->sp, pem);
	return 0;
}

/* Lets corral-init build the sandbox and checks the layers it has. */
static int
privop_finish(struct privop *p, const struct monitor_create *req,
    struct privop_sandbox *s, struct monitor_built *out, char **err)
{
	char *why = NULL;

	if (privop_take_ca(p, s, err) == -1)
		return -1;
	if (spawn_ready(s->sp, SPAWN_READY_TIMEOUT_MS, &why) == -1) {
		privop_fail_with(err, "sandbox", why);
		return -1;
	}
	privop_layers_of(p, s, out);
	/* Fail closed: under hard_requirement a missing layer is a refusal
	 * that names it, never a sandbox silently missing it. */
	if (req->hard_requirement && out->n_missing > 0) {
		reason_set(err, "%s is not available on this machine (landlock.compatibility "
		    "is hard_requirement; best_effort would start it as partial)", out->missing[0]);
		return -1;
	}
	out->init_pid = spawn_pid(s->sp);
	out->channel_fd = spawn_take_channel(s->sp);
	/* The broker records each limit hit; a count the kernel lacks is
	 * simply not watched (-1). */
	out->memory_events_fd = cgroup_sandbox_events_fd(s->cg, CGROUP_MEMORY);
	out->pids_events_fd = cgroup_sandbox_events_fd(s->cg, CGROUP_PIDS);
	return 0;
}

/* Checked again here, each refusal with its reason: the broker's word is
 * not enough for root. */
static int
privop_check(struct privop *p, const struct monitor_create *req, struct monitor_built *out,
    char **err)
{
	const char *why = NULL;

	if (!policy_name_valid(req->name))
		why = "the sandbox name is not valid";
	else if (req->uid == 0 || req->gid == 0)
		why = "a sandbox never runs as root (uid or gid 0)";
	else if (privop_find(p, req->name) != NULL)
		why = "a sandbox of that name already exists";
	else if (privop_slot_addresses(p, req->slot, &out->gateway, &out->address) == -1)
		why = "its address slot lies outside the sandbox pool";
	else if (req->grant_home != NULL && req->grant_home[0] != '/')
		why = "the home grants are copied from is not an absolute path";
	if (why == NULL)
		return 0;
	reason_set(err, "refused: %s", why);
	return -1;
}

/* The end of a create: S joins the monitor's sandboxes (RC 0), or goes
 * with what OUT holds (RC -1). Returns RC. */
static int
privop_create_end(struct privop *p, struct privop_sandbox *s, struct monitor_built *out,
    int home_fd, int rc)
{
	if (home_fd != -1)
		close(home_fd);
	if (rc == 0) {
		s->next = p->sandboxes;
		p->sandboxes = s;
		return 0;
	}
	monitor_built_close(out);
	monitor_grants_free(out->creds);
	out->creds = NULL;
	privop_sandbox_free(p, s);
	return -1;
}

/* The warm sandbox built in SLOT, if there is one and its corral-init
 * still waits; one whose corral-init died goes (a cold create follows). */
static struct privop_sandbox *
privop_warm_take(struct privop *p, unsigned slot)
{
	struct pollfd gone = { .events = POLLIN };
	struct privop_sandbox *s;
	struct nl *nl;

	for (s = p->sandboxes; s != NULL && !(s->warm && s->slot == slot); s = s->next)
		;
	if (s == NULL)
		return NULL;
	gone.fd = spawn_pidfd(s->sp);
	if (poll(&gone, 1, 0) == 0)
		return s;
	log_warnx("warm sandbox %s: its corral-init is gone; building the sandbox cold",
	    s->name);
	/* Its veth would go only with its namespace, later: the cold create
	 * needs the slot's names now. */
	if ((nl = nl_open()) != NULL) {
		nl_link_del(nl, s->pre.host_ifindex);
		nl_close(nl);
	}
	privop_unlink(p, s);
	privop_sandbox_free(p, s);
	return NULL;
}

/* Removes the warm sandbox S (taken, not claimed); NULL is fine. */
static void
privop_warm_discard(struct privop *p, struct privop_sandbox *s)
{
	if (s == NULL)
		return;
	privop_unlink(p, s);
	privop_sandbox_free(p, s);
}

void
privop_warm_refused(struct privop *p, unsigned slot)
{
	privop_warm_discard(p, privop_warm_take(p, slot));
}

/* S's network, for the address slot SLOT: the veth, the gateway's
 * listeners into OUT, the watch of corral-init. */
static int
privop_network(struct privop *p, struct privop_sandbox *s, unsigned slot,
    struct monitor_built *out, char **err)
{
	if (privop_wire(p, slot, spawn_netns_fd(s->sp), out->gateway, out->address,
	    &out->host_ifindex, err) == -1 ||
	    privop_listeners(p, out, err) == -1 || privop_watch(p, s, out, err) == -1)
		return -1;
	return 0;
}

/* What REQ asks of S's launched corral-init: the home (its descriptor into
 * *HOME_FD), the grants, the spec; then, for a COLD create, the network,
 * wired while corral-init builds its tree; then the Unix-socket guard, and
 * corral-init's answer checked. A claim and a cold create take the same
 * steps, in the same order. */
static int
privop_build(struct privop *p, const struct monitor_create *req, struct privop_sandbox *s,
    bool cold, struct monitor_built *out, int *home_fd, char **err)
{
	if (privop_make_home(p, req, out->home, sizeof(out->home), home_fd, err) == -1 ||
	    privop_grants(p, req, *home_fd, out, err) == -1 ||
	    privop_give_init(p, req, s, out, *home_fd, err) == -1 ||
	    (cold && privop_network(p, s, req->slot, out, err) == -1) ||
	    privop_unix_guard(p, s, req, err) == -1 || privop_finish(p, req, s, out, err) == -1)
		return -1;
	return 0;
}

/* Builds what REQ asks on the warm sandbox S: the same steps a cold create
 * takes after the network, on the same corral-init, checked the same way. */
static int
privop_claim(struct privop *p, const struct monitor_create *req, struct privop_sandbox *s,
    struct monitor_built *out, char **err)
{
	struct cgroup_limits lim = { req->pids, req->memory_bytes, req->cpu_milli };
	char *why = NULL;
	int home_fd = -1;

	privop_unlink(p, s);
	*out = s->pre;
	monitor_built_init(&s->pre);
	s->warm = false;
	snprintf(s->name, sizeof(s->name), "%s", req->name);
	s->owner = req->caller_uid;
	if (cgroup_sandbox_limit(s->cg, &lim, &why) == -1) {
		privop_fail_with(err, "cgroups", why);
		return privop_create_end(p, s, out, home_fd, -1);
	}
	if (privop_build(p, req, s, false, out, &home_fd, err) == -1)
		return privop_create_end(p, s, out, home_fd, -1);
	return privop_create_end(p, s, out, home_fd, 0);
}

int
privop_warm(struct privop *p, unsigned slot, char **err)
{
	struct monitor_built *pre;
	struct privop_sandbox *s;
	struct cgroup_limits none = { 0, 0, 0 };
	char name[64], *why = NULL;

	snprintf(name, sizeof(name), CGROUP_WARM_PREFIX "%u", slot);
	for (s = p->sandboxes; s != NULL; s = s->next)
		if (s->slot == slot)
			return reason_set(err, "refused: address slot %u is taken", slot);
	s = privop_sandbox_new(name, slot);
	s->warm = true;
	pre = &s->pre;
	if (privop_slot_addresses(p, slot, &pre->gateway, &pre->address) == -1) {
		reason_set(err, "refused: address slot %u lies outside the sandbox pool", slot);
		goto fail;
	}
	if (cgroup_sandbox_create(&p->cgh, p->instance, name, &none, &s->cg, &why) == -1) {
		privop_fail_with(err, "cgroups", why);
		goto fail;
	}
	if (privop_launch_init(p, s, err) == -1 || privop_network(p, s, slot, pre, err) == -1)
		goto fail;
	s->next = p->sandboxes;
	p->sandboxes = s;
	return 0;
fail:
	privop_sandbox_free(p, s);
	return -1;
}

int
privop_create(struct privop *p, const struct monitor_create *req,
    struct monitor_built *out, char **err)
{
	struct cgroup_limits lim = { req->pids, req->memory_bytes, req->cpu_milli };
	struct privop_sandbox *s;
	char *why = NULL;
	int home_fd = -1;

	monitor_built_init(out);
	/* Taken before any check: a claim refused goes with its warm sandbox,
	 * which the broker no longer counts (it builds another). */
	s = req->warm ? privop_warm_take(p, req->slot) : NULL;
	if (privop_check(p, req, out, err) == -1) {
		privop_warm_discard(p, s);
		return -1;
	}
	if (s != NULL)
		return privop_claim(p, req, s, out, err);
	s = privop_sandbox_new(req->name, req->slot);
	s->owner = req->caller_uid;
	if (cgroup_sandbox_create(&p->cgh, p->instance, req->name, &lim, &s->cg, &why) == -1) {
		privop_fail_with(err, "cgroups", why);
		return privop_create_end(p, s, out, home_fd, -1);
	}
	if (privop_launch_init(p, s, err) == -1 ||
	    privop_build(p, req, s, true, out, &home_fd, err) == -1)
		return privop_create_end(p, s, out, home_fd, -1);
	return privop_create_end(p, s, out, home_fd, 0);
}

/* A TCP socket for the sandbox's loopback: IPv6 with IPv4 mapped, so
 * that one kind reaches 127.0.0.1 and ::1; IPv4 where IPv6 is off. */
static int
privop_loopback_socket(void)
{
	int off = 0, fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd != -1 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) == -1) {
		close(fd);
		fd = -1;
	}
	if (fd == -1 && errno == EAFNOSUPPORT)
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	return fd;
}

int
privop_sandbox_socket(struct privop *p, const char *name, uid_t caller, int *fd, char **err)
{
	struct privop_sandbox *s = privop_find(p, name);

	/* The broker checked it too; the kernel's word on the caller is what
	 * counts here, as for a create. */
	if (s == NULL || s->warm || (caller != 0 && caller != s->owner))
		return reason_set(err, "refused: no sandbox %s of yours", name);
	*fd = privop_in_netns(p, spawn_netns_fd(s->sp), privop_loopback_socket);
	if (*fd == -1)
		return reason_set(err, "a socket in its network: %s", strerror(errno));
	return 0;
}

int
privop_destroy(struct privop *p, const char *name, char **err)
{
	struct privop_sandbox **pp, *s;

	for (pp = &p->sandboxes; *pp != NULL; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, name) != 0)
			continue;
		s = *pp;
		*pp = s->next;
		return privop_sandbox_end(p, s, err);
	}
	/* Not ours (any more): what may be left of it still goes. */
	if (policy_name_valid(name)) {
		cgroup_remove_by_name(&p->cgh, p->instance, name, err);
		privop_remove_home(p, name);
	}
	return 0;
}

struct privop_reap_ctx {
	struct privop *p;
	const char *const *live;
	size_t nlive;
	size_t removed;
	void (*report)(const char *what, void *arg);
	void *arg;
};

static void
privop_reap_report(struct privop_reap_ctx *c, const char *kind, const char *name)
{
	char what[384];

	c->removed++;
	if (c->report == NULL)
		return;
	snprintf(what, sizeof(what), "%s %s", kind, name);
	c->report(what, c->arg);
}

/* Whether NAME is a live sandbox's, or the leaves' name of one the
 * monitor holds (a claimed warm sandbox's cgroup keeps its warm name). */
static bool
privop_is_live(const struct privop_reap_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->nlive; i++)
		if (strcmp(c->live[i], name) == 0)
			return true;
	for (struct privop_sandbox *s = c->p->sandboxes; s != NULL; s = s->next)
		if (strcmp(s->name, name) == 0 ||
		    (s->cg != NULL && strcmp(cgroup_sandbox_name(s->cg), name) == 0))
			return true;
	return false;
}

static void
privop_reap_one(const char *name, void *arg)
{
	struct privop_reap_ctx *c = arg;

	if (privop_is_live(c, name) || !cgroup_leaf_name_valid(name))
		return;
	cgroup_remove_by_name(&c->p->cgh, c->p->instance, name, NULL);
	privop_reap_report(c, "cgroup", name);
}

/* Homes under the state folder with no live sandbox. */
static void
privop_reap_homes(struct privop_reap_ctx *c)
{
	int fd = fcntl(c->p->sandboxes_fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd != -1 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (d == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && !privop_is_live(c, de->d_name) &&
		    policy_name_valid(de->d_name)) {
			privop_remove_home(c->p, de->d_name);
			privop_reap_report(c, "home", de->d_name);
		}
	closedir(d);
}

size_t
privop_reap(struct privop *p, const char *const *live, size_t nlive,
    void (*removed)(const char *what, void *arg), void *arg)
{
	struct privop_reap_ctx c = { p, live, nlive, 0, removed, arg };

	cgroup_list_sandboxes(&p->cgh, p->instance, privop_reap_one, &c, NULL);
	privop_reap_homes(&c);
	return c.removed;
}
