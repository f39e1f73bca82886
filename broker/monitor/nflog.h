/* The fence's NFLOG group (broker/monitor/fence.h): a netfilter netlink
 * socket bound to it, opened by the monitor (binding takes CAP_NET_ADMIN)
 * and handed to the broker, which only reads it (broker/bypass.h). */
#ifndef CORRAL_NFLOG_H
#define CORRAL_NFLOG_H

#include <stdint.h>

/* How much of each packet the group copies: the IP header and the
 * transport ports, all a bypass record names. */
#define NFLOG_COPY_BYTES 96
/* The socket's receive buffer: what a burst of every sandbox's rate limit
 * needs, with room to spare. */
#define NFLOG_RCVBUF_BYTES (1024 * 1024)

/* A non-blocking socket bound to GROUP in the calling network namespace,
 * copying NFLOG_COPY_BYTES of each packet; -1 with a malloc'd reason in
 * *ERR (another process may hold the group: EBUSY). */
int nflog_open(uint16_t group, char **err);

#endif
