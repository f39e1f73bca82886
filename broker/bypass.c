/* NFLOG packet messages (nfnetlink_log: NFULNL_MSG_PACKET, the packet's
 * attributes after an nfgenmsg) to bypass packets. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/bypass.h"

#define BYPASS_BUFFER_BYTES 65536
#define BYPASS_READS_PER_TURN 64        /* then the loop serves the others */
#define BYPASS_IP4_FRAGMENT_OFFSET 0x1fff

struct bypass_reader {
	int fd;
	struct event *ev;
	bypass_packet_fn fn;
	void *arg;
	uint64_t lost, malformed;
	char buf[BYPASS_BUFFER_BYTES];
};

/* The protocols named in reasons; others are "protocol_N_not_allowed". */
static const struct {
	uint8_t number;
	const char *name;
} bypass_protocols[] = {
	{ IPPROTO_ICMP, "icmp" }, { IPPROTO_TCP, "tcp" }, { IPPROTO_UDP, "udp" },
	{ IPPROTO_GRE, "gre" }, { IPPROTO_ESP, "esp" }, { IPPROTO_ICMPV6, "icmpv6" },
	{ IPPROTO_SCTP, "sctp" }, { IPPROTO_UDPLITE, "udplite" },
};

static void
bypass_reason(struct bypass_packet *pk)
{
	for (size_t i = 0; i < sizeof(bypass_protocols) / sizeof(bypass_protocols[0]); i++) {
		if (bypass_protocols[i].number == pk->protocol) {
			snprintf(pk->reason, sizeof(pk->reason), "%s_not_allowed",
			    bypass_protocols[i].name);
			return;
		}
	}
	snprintf(pk->reason, sizeof(pk->reason), "protocol_%u_not_allowed",
	    (unsigned int)pk->protocol);
}

/* Whether PROTO's header starts with the source and destination ports. */
static int
bypass_has_ports(uint8_t proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP ||
	    proto == IPPROTO_UDPLITE;
}

/* The destination port in the transport header at P (N bytes), or -1. */
static int
bypass_port(uint8_t proto, const uint8_t *p, size_t n)
{
	if (!bypass_has_ports(proto) || n < 4)
		return -1;
	return (p[2] << 8) | p[3];
}

/* The packet's IP header at P (N bytes: what the group copied) into PK;
 * -1 when it is not a whole IPv4 or IPv6 header. */
static int
bypass_ip(const uint8_t *p, size_t n, struct bypass_packet *pk)
{
	struct ip h4;
	struct ip6_hdr h6;
	size_t hl;

	if (n >= sizeof(h4) && (p[0] >> 4) == 4) {
		memcpy(&h4, p, sizeof(h4));
		hl = (size_t)h4.ip_hl * 4;
		if (hl < sizeof(h4) || hl > n)
			return -1;
		pk->protocol = h4.ip_p;
		pk->bytes = ntohs(h4.ip_len);
		inet_ntop(AF_INET, &h4.ip_dst, pk->ip, sizeof(pk->ip));
		/* Only a first fragment carries the ports. */
		pk->port = (ntohs(h4.ip_off) & BYPASS_IP4_FRAGMENT_OFFSET) != 0 ? -1 :
		    bypass_port(pk->protocol, p + hl, n - hl);
		return 0;
	}
	if (n >= sizeof(h6) && (p[0] >> 4) == 6) {
		memcpy(&h6, p, sizeof(h6));
		/* The next header as given: extension headers are not walked,
		 * and then no port is named. */
		pk->protocol = h6.ip6_nxt;
		pk->bytes = (uint32_t)ntohs(h6.ip6_plen) + (uint32_t)sizeof(h6);
		inet_ntop(AF_INET6, &h6.ip6_dst, pk->ip, sizeof(pk->ip));
		pk->port = bypass_port(pk->protocol, p + sizeof(h6), n - sizeof(h6));
		return 0;
	}
	return -1;
}

static int
bypass_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (mnl_attr_type_valid(a, NFULA_MAX) > 0)
		tb[type] = a;
	return MNL_CB_OK;
}

/* One message; -1 when malformed (a message of another type is no error). */
static int
bypass_message(const struct nlmsghdr *nlh, bypass_packet_fn fn, void *arg)
{
	const struct nlattr *tb[NFULA_MAX + 1] = { 0 };
	struct bypass_packet pk = { .port = -1 };

	if (nlh->nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET))
		return 0;
	if (mnl_attr_parse(nlh, sizeof(struct nfgenmsg), bypass_attr, tb) != MNL_CB_OK ||
	    tb[NFULA_IFINDEX_INDEV] == NULL || tb[NFULA_PAYLOAD] == NULL ||
	    mnl_attr_validate(tb[NFULA_IFINDEX_INDEV], MNL_TYPE_U32) == -1)
		return -1;
	pk.ifindex = (int)ntohl(mnl_attr_get_u32(tb[NFULA_IFINDEX_INDEV]));
	if (bypass_ip(mnl_attr_get_payload(tb[NFULA_PAYLOAD]),
	    mnl_attr_get_payload_len(tb[NFULA_PAYLOAD]), &pk) == -1)
		return -1;
	bypass_reason(&pk);
	fn(&pk, arg);
	return 0;
}

size_t
bypass_parse(const void *buf, size_t len, bypass_packet_fn fn, void *arg)
{
	const char *p = buf;
	struct nlmsghdr h;
	size_t at = 0, whole, malformed = 0;

	/* Not mnl_nlmsg_ok/next: they take the length as an int, and a length
	 * past INT_MAX passes their check and then wraps the walk. */
	while (len - at >= sizeof(h)) {
		memcpy(&h, p + at, sizeof(h));
		whole = MNL_ALIGN((size_t)h.nlmsg_len);

		/* The attribute walk reads up to the aligned end: it must be in. */
		if (h.nlmsg_len < sizeof(h) || whole > len - at)
			return malformed + 1;   /* the rest of the datagram is not trusted */
		if (h.nlmsg_len < mnl_nlmsg_size(sizeof(struct nfgenmsg)) ||
		    bypass_message((const struct nlmsghdr *)(const void *)(p + at), fn, arg) == -1)
			malformed++;
		at += whole;
	}
	return malformed;
}

static void
bypass_on_read(evutil_socket_t fd, short what, void *arg)
{
	struct bypass_reader *r = arg;
	ssize_t n;

	(void)what;
	for (int i = 0; i < BYPASS_READS_PER_TURN; i++) {
		n = recv(fd, r->buf, sizeof(r->buf), MSG_DONTWAIT);
		if (n == -1 && errno == ENOBUFS) {
			/* The kernel dropped copies: counted, and reading goes on. */
			r->lost++;
			continue;
		}
		if (n <= 0)
			return;
		r->malformed += bypass_parse(r->buf, (size_t)n, r->fn, r->arg);
	}
}

struct bypass_reader *
bypass_reader_new(struct event_base *base, int fd, bypass_packet_fn fn, void *arg)
{
	struct bypass_reader *r = calloc(1, sizeof(*r));

	if (r == NULL || (r->ev = event_new(base, fd, EV_READ | EV_PERSIST, bypass_on_read,
	    r)) == NULL || event_add(r->ev, NULL) == -1) {
		if (r != NULL && r->ev != NULL)
			event_free(r->ev);
		free(r);
		close(fd);
		return NULL;
	}
	r->fd = fd;
	r->fn = fn;
	r->arg = arg;
	return r;
}

void
bypass_reader_free(struct bypass_reader *r)
{
	if (r == NULL)
		return;
	event_free(r->ev);
	close(r->fd);
	free(r);
}

uint64_t
bypass_reader_lost(const struct bypass_reader *r)
{
	return r == NULL ? 0 : r->lost;
}

uint64_t
bypass_reader_malformed(const struct bypass_reader *r)
{
	return r == NULL ? 0 : r->malformed;
}
