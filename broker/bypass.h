/* The ledger's bypass records (corral-ledger(5)): the packets the fence
 * rejected outright, as its NFLOG group copies them (broker/monitor/fence.h,
 * rate-limited per sandbox in the kernel), read by the broker from the
 * socket the monitor bound and handed over. What is read is a sandbox's
 * packet, so every length in it is checked before use. */
#ifndef CORRAL_BYPASS_H
#define CORRAL_BYPASS_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

#define BYPASS_REASON_MAX_BYTES 32      /* "protocol_255_not_allowed" */

/* One rejected packet. */
struct bypass_packet {
	int ifindex;                    /* the interface it came in on */
	uint8_t protocol;               /* IPPROTO_* */
	char ip[INET6_ADDRSTRLEN];      /* its destination */
	int port;                       /* its destination port; -1 when it has none */
	uint32_t bytes;                 /* its IP length */
	char reason[BYPASS_REASON_MAX_BYTES];   /* "udp_not_allowed", ... */
};

typedef void (*bypass_packet_fn)(const struct bypass_packet *pk, void *arg);

/* Calls FN for each packet message in BUF (LEN bytes, one datagram of the
 * socket); returns the number of messages skipped as malformed. */
size_t bypass_parse(const void *buf, size_t len, bypass_packet_fn fn, void *arg);

struct bypass_reader;

/* Reads FD (taken: closed by bypass_reader_free) on BASE, FN for each
 * packet. NULL when out of memory (FD closed). */
struct bypass_reader *bypass_reader_new(struct event_base *base, int fd, bypass_packet_fn fn,
    void *arg);
void bypass_reader_free(struct bypass_reader *r);
/* Reads (with ENOBUFS: the kernel dropped copies, the socket being full)
 * and messages skipped as malformed, so far; 0 for a NULL R. The metrics
 * count them (corral_bypass_lost_total). */
uint64_t bypass_reader_lost(const struct bypass_reader *r);
uint64_t bypass_reader_malformed(const struct bypass_reader *r);

#endif
