/* rtnetlink requests for a sandbox's veth, addresses and routes, and the
 * watch for deleted links (ARCHITECTURE.md, "A sandbox's life"). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "broker/monitor/netlink.h"
#include "common/log.h"

/* Room for one request: a veth creation, the largest, needs about 120. */
#define NL_REQUEST_MAX_BYTES 1024
/* Room for one read: a link dump message with stats is about 1.5 KiB, and
 * one read may carry several. */
#define NL_RECV_MAX_BYTES 32768
/* A watch socket's receive buffer, so a burst of link events (every
 * sandbox created or torn down makes a few) does not overrun it. */
#define NL_WATCH_RCVBUF_BYTES (1024 * 1024)
/* How long a request may wait for its ACK before it is given up. */
#define NL_ACK_TIMEOUT_MS 2000
#define NL_SYSCTL_PATH_MAX_BYTES 96

struct nl {
	struct mnl_socket *sock;
	unsigned int portid;
	unsigned int seq;
	char reason[NL_REASON_MAX_BYTES];
	char buf[NL_RECV_MAX_BYTES];
};

/* One request in flight: its name for the reason, and where a reply's
 * link index goes (NULL when no reply is wanted). */
struct nl_call {
	struct nl *nl;
	const char *what;
	int *ifindex;
};

/* What nl_watch_read's callback passes on. */
struct nl_watch_ctx {
	nl_dellink_fn fn;
	void *arg;
	int count;
};

/* Records a one-line reason on NL, keeping errno as it was. */
static void __attribute__((format(printf, 2, 3)))
nl_fail(struct nl *nl, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(nl->reason, sizeof(nl->reason), fmt, ap);
	va_end(ap);
	errno = saved;
}

/* A link name the kernel takes and that is safe inside a /proc path. */
static int
nl_name_ok(const char *name)
{
	size_t len = name == NULL ? 0 : strnlen(name, IFNAMSIZ);

	if (len == 0 || len >= IFNAMSIZ || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	return strpbrk(name, "/: \t\n") == NULL;
}

/* Moves the calling thread into NETNS_FD, keeping its own in *SAVED. */
static int
nl_netns_enter(int netns_fd, int *saved)
{
	*saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*saved == -1)
		return -1;
	if (setns(netns_fd, CLONE_NEWNET) == -1) {
		int e = errno;

		close(*saved);
		errno = e;
		return -1;
	}
	return 0;
}

/* Moves the calling thread back to SAVED. A thread left in a sandbox's
 * namespace would configure the wrong network, so failing here is fatal. */
static void
nl_netns_leave(int saved)
{
	int e = errno;

	if (setns(saved, CLONE_NEWNET) == -1)
		fatal("%s: setns back to the daemon's network namespace", __func__);
	close(saved);
	errno = e;
}

/* Bounds how long a blocking socket waits for an answer. */
static int
nl_set_timeout(struct nl *nl)
{
	struct timeval tv = { .tv_sec = NL_ACK_TIMEOUT_MS / 1000,
		.tv_usec = (NL_ACK_TIMEOUT_MS % 1000) * 1000 };

	return setsockopt(nl_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Opens and binds a socket; GROUPS are the multicast groups to join. */
static struct nl *
nl_socket_new(unsigned int groups, int flags)
{
	struct nl *nl = calloc(1, sizeof(*nl));
	int one = 1;

	if (nl == NULL)
		return NULL;
	nl->sock = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | flags);
	if (nl->sock == NULL || mnl_socket_bind(nl->sock, groups, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	if (!(flags & SOCK_NONBLOCK) && nl_set_timeout(nl) == -1)
		goto fail;
	/* Extended ACKs carry the kernel's own reason; capped ACKs do not
	 * echo the request back. Both are optional, so failures are fine. */
	(void)mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	(void)mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (unsigned int)time(NULL);
	snprintf(nl->reason, sizeof(nl->reason), "no error");
	return nl;
fail:
	one = errno;
	nl_close(nl);
	errno = one;
	return NULL;
}

struct nl *
nl_open(void)
{
	return nl_socket_new(0, 0);
}

struct nl *
nl_open_in_netns(int netns_fd)
{
	struct nl *nl;
	int saved;

	if (nl_netns_enter(netns_fd, &saved) == -1)
		return NULL;
	nl = nl_socket_new(0, 0);
	nl_netns_leave(saved);
	return nl;
}

struct nl *
nl_watch_open(void)
{
	struct nl *nl = nl_socket_new(RTMGRP_LINK, SOCK_NONBLOCK);
	int size = NL_WATCH_RCVBUF_BYTES;

	if (nl == NULL)
		return NULL;
	/* FORCE passes rmem_max for root; the plain one is the fallback. */
	if (setsockopt(nl_fd(nl), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) == -1)
		(void)setsockopt(nl_fd(nl), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return nl;
}

void
nl_close(struct nl *nl)
{
	if (nl == NULL)
		return;
	if (nl->sock != NULL)
		mnl_socket_close(nl->sock);
	free(nl);
}

int
nl_fd(const struct nl *nl)
{
	return mnl_socket_get_fd(nl->sock);
}

const char *
nl_reason(const struct nl *nl)
{
	return nl->reason;
}

/* Records an error reply's errno text and, when the kernel sent one,
 * its extended-ACK message as CALL's reason. */
static void
nl_ack_reason(const struct nl_call *call, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct nlattr *attr;   /* not const: mnl_attr_for_each casts it to char * */
	size_t off = sizeof(*e);

	nl_fail(call->nl, "%s: %s", call->what, strerror(-e->error));
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	mnl_attr_for_each(attr, nlh, off) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			nl_fail(call->nl, "%s: %s (%s)", call->what, strerror(-e->error),
			    mnl_attr_get_str(attr));
	}
}

/* An ACK ends the request; an error reply fails it with its errno. */
static int
nl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nl_call *call = data;
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		nl_fail(call->nl, "%s: short netlink error message", call->what);
		return MNL_CB_ERROR;
	}
	if (e->error == 0)
		return MNL_CB_STOP;
	nl_ack_reason(call, nlh);
	errno = -e->error;
	return MNL_CB_ERROR;
}

/* Takes an RTM_NEWLINK reply's index, when the request wants one. */
static int
nl_link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nl_call *call = data;
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type == RTM_NEWLINK && call->ifindex != NULL &&
	    nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*ifm)))
		*call->ifindex = ifm->ifi_index;
	return MNL_CB_OK;
}

/* Sends REQ, then reads replies until its ACK; WHAT names the request in
 * the reason. A link in the replies leaves its index in *IFINDEX. */
static int
nl_request(struct nl *nl, struct nlmsghdr *req, const char *what, int *ifindex)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = nl_error_cb };
	struct nl_call call = { .nl = nl, .what = what, .ifindex = ifindex };
	ssize_t n;
	int ret;

	req->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	req->nlmsg_seq = ++nl->seq;
	nl->reason[0] = '\0';
	if (mnl_socket_sendto(nl->sock, req, req->nlmsg_len) < 0) {
		nl_fail(nl, "%s: sending the request: %s", what, strerror(errno));
		return -1;
	}
	do {
		n = mnl_socket_recvfrom(nl->sock, nl->buf, sizeof(nl->buf));
		if (n < 0) {
			nl_fail(nl, "%s: reading the answer: %s", what, strerror(errno));
			return -1;
		}
		ret = mnl_cb_run2(nl->buf, (size_t)n, req->nlmsg_seq, nl->portid,
		    nl_link_cb, &call, ctl, NLMSG_MIN_TYPE);
	} while (ret == MNL_CB_OK);
	if (ret == MNL_CB_ERROR && nl->reason[0] == '\0')
		nl_fail(nl, "%s: %s", what, strerror(errno));
	return ret == MNL_CB_STOP ? 0 : -1;
}

/* Starts a request of TYPE with FLAGS in BUF (NL_REQUEST_MAX_BYTES long),
 * zeroed first: libmnl leaves attribute padding as it finds it. */
static struct nlmsghdr *
nl_msg_new(char *buf, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh;

	memset(buf, 0, NL_REQUEST_MAX_BYTES);
	nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	return nlh;
}

/* Appends an ifinfomsg for IFINDEX (0: none), with FLAGS changed to FLAGS. */
static void
nl_put_ifinfo(struct nlmsghdr *nlh, int ifindex, unsigned int flags)
{
	struct ifinfomsg *ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));

	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = ifindex;
	ifm->ifi_flags = flags;
	ifm->ifi_change = flags;
}

int
nl_veth_create(struct nl *nl, const char *host_name, const char *peer_name,
    int peer_netns_fd, uint32_t group, int *host_ifindex)
{
	char buf[NL_REQUEST_MAX_BYTES];
	struct nlmsghdr *nlh = nl_msg_new(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	struct nlattr *linkinfo, *data, *peer;

	if (!nl_name_ok(host_name) || !nl_name_ok(peer_name)) {
		errno = EINVAL;
		nl_fail(nl, "veth names must be 1 to %d characters without '/'", IFNAMSIZ - 1);
		return -1;
	}
	nl_put_ifinfo(nlh, 0, 0);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, host_name);
	mnl_attr_put_u32(nlh, IFLA_GROUP, group);
	linkinfo = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	peer = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	nl_put_ifinfo(nlh, 0, 0);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, peer_name);
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)peer_netns_fd);
	mnl_attr_nest_end(nlh, peer);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, linkinfo);
	if (nl_request(nl, nlh, "creating the veth pair", NULL) == -1)
		return -1;
	*host_ifindex = nl_ifindex(nl, host_name);
	return *host_ifindex == -1 ? -1 : 0;
}

int
nl_ifindex(struct nl *nl, const char *name)
{
	char buf[NL_REQUEST_MAX_BYTES];
	struct nlmsghdr *nlh = nl_msg_new(buf, RTM_GETLINK, 0);
	int ifindex = -1;

	if (!nl_name_ok(name)) {
		errno = EINVAL;
		nl_fail(nl, "bad link name");
		return -1;
	}
	nl_put_ifinfo(nlh, 0, 0);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	if (nl_request(nl, nlh, "looking up the link", &ifindex) == -1)
		return -1;
	if (ifindex <= 0) {
		errno = ENODEV;
		nl_fail(nl, "looking up the link: no answer for %s", name);
		return -1;
	}
	return ifindex;
}

/* The byte length of an address of FAMILY, 0 for an unknown family. */
static size_t
nl_addr_len(int family)
{
	if (family == AF_INET)
		return sizeof(struct in_addr);
	if (family == AF_INET6)
		return sizeof(struct in6_addr);
	return 0;
}

int
nl_addr_add(struct nl *nl, int ifindex, int family, const void *addr, unsigned int prefix)
{
	char buf[NL_REQUEST_MAX_BYTES];
	struct nlmsghdr *nlh = nl_msg_new(buf, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	size_t len = nl_addr_len(family);
	struct ifaddrmsg *ifa;

	if (len == 0 || prefix > len * 8) {
		errno = EINVAL;
		nl_fail(nl, "adding an address: bad family or prefix length %u", prefix);
		return -1;
	}
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (unsigned char)family;
	ifa->ifa_prefixlen = (unsigned char)prefix;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (unsigned int)ifindex;
	/* A point-to-point pair has no one to collide with: skip IPv6 DAD. */
	ifa->ifa_flags = family == AF_INET6 ? IFA_F_NODAD : 0;
	mnl_attr_put(nlh, IFA_LOCAL, len, addr);
	mnl_attr_put(nlh, IFA_ADDRESS, len, addr);
	return nl_request(nl, nlh, "adding an address", NULL);
}

int
nl_link_up(struct nl *nl, int ifindex)
{
	char buf[NL_REQUEST_MAX_BYTES];
	struct nlmsghdr *nlh = nl_msg_new(buf, RTM_NEWLINK, 0);

	nl_put_ifinfo(nlh, ifindex, IFF_UP);
	return nl_request(nl, nlh, "setting the link up", NULL);
}

int
nl_route_add_default(struct nl *nl, int ifindex, const struct in_addr *gateway)
{
	char buf[NL_REQUEST_MAX_BYTES];
	struct nlmsghdr *nlh = nl_msg_new(buf, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 0;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put(nlh, RTA_GATEWAY, sizeof(*gateway), gateway);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	return nl_request(nl, nlh, "adding the default route", NULL);
}

int
nl_link_del(struct nl *nl, int ifindex)
{
	char buf[NL_REQUEST_MAX_BYTES];
	struct nlmsghdr *nlh = nl_msg_new(buf, RTM_DELLINK, 0);

	nl_put_ifinfo(nlh, ifindex, 0);
	return nl_request(nl, nlh, "deleting the link", NULL);
}

/* Opens IFNAME's disable_ipv6 sysctl in the caller's namespace. */
static int
nl_ipv6_sysctl_open(const char *ifname)
{
	char path[NL_SYSCTL_PATH_MAX_BYTES];

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
	return open(path, O_WRONLY | O_CLOEXEC);
}

/* Whether the caller's namespace has IPv6 at all. */
static int
nl_ipv6_present(void)
{
	return access("/proc/sys/net/ipv6", F_OK) == 0;
}

int
nl_ipv6_disable(int netns_fd, const char *ifname)
{
	int fd, saved, present, ret = -1;

	if (!nl_name_ok(ifname)) {
		errno = EINVAL;
		return -1;
	}
	/* /proc/sys/net answers for the namespace of whoever opens it, so the
	 * file is opened inside the sandbox's namespace. */
	if (netns_fd != -1 && nl_netns_enter(netns_fd, &saved) == -1)
		return -1;
	fd = nl_ipv6_sysctl_open(ifname);
	present = fd != -1 || nl_ipv6_present();
	if (netns_fd != -1)
		nl_netns_leave(saved);
	if (fd == -1)
		return present ? -1 : 0;
	if (write(fd, "1\n", 2) == 2)
		ret = 0;
	close(fd);
	return ret;
}

/* Reports one RTM_DELLINK to the nl_watch_ctx in DATA. */
static int
nl_watch_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_watch_ctx *ctx = data;
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct nlattr *attr;   /* not const: mnl_attr_for_each casts it to char * */

	if (nlh->nlmsg_type != RTM_DELLINK || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifm)))
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(*ifm)) {
		if (mnl_attr_get_type(attr) != IFLA_IFNAME ||
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == -1)
			continue;
		ctx->fn(mnl_attr_get_str(attr), ifm->ifi_index, ctx->arg);
		ctx->count++;
	}
	return MNL_CB_OK;
}

int
nl_watch_read(struct nl *nl, nl_dellink_fn fn, void *arg)
{
	struct nl_watch_ctx ctx = { .fn = fn, .arg = arg, .count = 0 };
	ssize_t n;

	for (;;) {
		n = mnl_socket_recvfrom(nl->sock, nl->buf, sizeof(nl->buf));
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return ctx.count;
		if (n < 0) {
			nl_fail(nl, "reading link events: %s", strerror(errno));
			return -1;
		}
		/* Events carry sequence 0 and port 0: accept any. */
		if (mnl_cb_run(nl->buf, (size_t)n, 0, 0, nl_watch_cb, &ctx) == MNL_CB_ERROR) {
			nl_fail(nl, "reading link events: %s", strerror(errno));
			return -1;
		}
	}
}
