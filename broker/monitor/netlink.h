/* A sandbox's network plumbing over rtnetlink (libmnl): the veth pair, its
 * addresses, links and default route, IPv6 off on the veth ends, and a
 * watch for deleted links. No `ip` child process anywhere.
 *
 * Every call that talks to the kernel waits for its ACK; on failure it
 * returns -1 with errno set and a one-line reason in nl_reason(). The
 * calls that enter another network namespace (nl_open_in_netns,
 * nl_ipv6_disable) move the calling thread only, and back before they
 * return: the root monitor is single-threaded, so nothing else runs in
 * the borrowed namespace meanwhile. */
#ifndef CORRAL_NETLINK_H
#define CORRAL_NETLINK_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>

/* The longest reason nl_reason() returns, with its NUL. */
#define NL_REASON_MAX_BYTES 256

struct nl;

/* Opens an rtnetlink socket in the caller's network namespace; NULL with
 * errno on failure. */
struct nl *nl_open(void);
/* Opens an rtnetlink socket that lives in the namespace NETNS_FD (the
 * thread setns()es there for the socket() call and back). The socket keeps
 * that namespace alive: close it before the namespace is meant to die. */
struct nl *nl_open_in_netns(int netns_fd);
/* Opens a non-blocking socket subscribed to link events, for
 * nl_watch_read(); poll nl_fd() for POLLIN. */
struct nl *nl_watch_open(void);
/* Closes the socket; NL may be NULL. */
void nl_close(struct nl *nl);

/* The socket's descriptor, for the caller's event loop. */
int nl_fd(const struct nl *nl);
/* Why the last failed call on NL failed: one line, never NULL. */
const char *nl_reason(const struct nl *nl);

/* Creates a veth pair in one RTM_NEWLINK: HOST_NAME here, in interface
 * group GROUP, and PEER_NAME created directly in the namespace
 * PEER_NETNS_FD. Both links stay down. Stores the host end's index. */
int nl_veth_create(struct nl *nl, const char *host_name, const char *peer_name,
    int peer_netns_fd, uint32_t group, int *host_ifindex);
/* The index of the link NAME in NL's namespace; -1 with ENODEV if none. */
int nl_ifindex(struct nl *nl, const char *name);
/* Adds ADDR/PREFIX (ADDR is a struct in_addr for AF_INET, a struct
 * in6_addr for AF_INET6) to the link IFINDEX. */
int nl_addr_add(struct nl *nl, int ifindex, int family, const void *addr,
    unsigned int prefix);
/* Sets the link IFINDEX up. */
int nl_link_up(struct nl *nl, int ifindex);
/* Adds the IPv4 default route via GATEWAY out of the link IFINDEX. */
int nl_route_add_default(struct nl *nl, int ifindex, const struct in_addr *gateway);
/* Deletes the link IFINDEX (and a veth's peer with it). For reaping only:
 * a sandbox's veth normally dies with its namespace, which is cheaper. */
int nl_link_del(struct nl *nl, int ifindex);

/* Turns IPv6 off on the link IFNAME only, in the namespace NETNS_FD (-1:
 * the caller's), by its disable_ipv6 sysctl; never for the whole
 * namespace, whose ::1 local servers need. 0 when the kernel has no IPv6
 * at all; -1 with errno otherwise. */
int nl_ipv6_disable(int netns_fd, const char *ifname);

/* Called by nl_watch_read() for each deleted link. */
typedef void (*nl_dellink_fn)(const char *ifname, int ifindex, void *arg);
/* Reads every pending link event on a watch socket and calls FN for each
 * RTM_DELLINK. Returns the number of deletions reported, or -1 with errno;
 * ENOBUFS means events were lost (the socket overran), so the caller must
 * check the links it waits for with nl_ifindex(). */
int nl_watch_read(struct nl *nl, nl_dellink_fn fn, void *arg);

#endif
