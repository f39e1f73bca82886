/* The DNS stub of one sandbox on gateway:53, UDP and TCP (corral-policy(5)).
 * It answers A queries only for names some entry of the sandbox's current
 * policy allows (any port), with the addresses the resolver found that pass
 * the address check; it never sends a refused name upstream, so names cannot
 * carry data out through it.
 *
 * What each query gets:
 * - a name no entry allows (or that is not a host name: escaped bytes, an
 *   address literal, the root): NXDOMAIN, whatever the type; a `dns` deny
 *   record (reason "dns_name_not_allowed") and a denial with port 0;
 * - an allowed name, type A: the resolver's addresses that pass the check,
 *   with the TTL cut to [DNSSTUB_TTL_MIN_S, DNSSTUB_TTL_MAX_S], each put in
 *   the sandbox's address-to-name map, and a `dns` allow record naming
 *   the entry; when every address fails the check: NODATA (never
 *   NXDOMAIN), a deny record and a denial with the address's reason
 *   ("loopback", "internal", ...); the upstream's NXDOMAIN and NODATA are
 *   passed on, and an upstream failure is SERVFAIL, each with an allow
 *   record whose reason says so ("name_not_found", "no_address",
 *   "resolution_failed");
 * - an allowed name, any other type (AAAA, TXT, ...): NODATA, no record,
 *   nothing upstream;
 * - a message that is no query, or has no parsable header: dropped (UDP)
 *   or the connection closed (TCP); a query with a header but a bad
 *   question, opcode or class gets FORMERR, NOTIMP or REFUSED over UDP (so
 *   clients fail at once instead of timing out), a closed connection over
 *   TCP.
 * When the ledger cannot take a record, the answer is SERVFAIL (fail
 * closed); an allowed A query is then not even sent upstream.
 *
 * The address check passes an internal address when the operator's
 * egress.allow_cidrs or the allowed_ips of any entry naming the host (on
 * any port) contain it: the stub does not know the port the client will
 * use, and the proxy checks the address again, with the entry of that
 * port, when the connection comes.
 *
 * The stub belongs to the event loop of the tenant's proxy. It must be
 * freed before its tenant and before the proxy's resolver. */
#ifndef CORRAL_DNSSTUB_H
#define CORRAL_DNSSTUB_H

#include <stdint.h>
#include <sys/socket.h>

struct dnsstub;
struct namemap;
struct proxy_tenant;

#define DNSSTUB_TCP_CONNS_MAX 16        /* TCP clients at once; more are closed at accept */
#define DNSSTUB_TCP_IDLE_TIMEOUT_S 10   /* a TCP client with nothing moving is closed */
#define DNSSTUB_TCP_IN_MAX_BYTES 4096   /* a TCP client's unread queries; a longer one closes it */
#define DNSSTUB_PENDING_MAX 256         /* queries waiting for the resolver; more get SERVFAIL */
#define DNSSTUB_TTL_MIN_S 5             /* TTLs given out, seconds */
#define DNSSTUB_TTL_MAX_S 300
#define DNSSTUB_UDP_BATCH 32            /* datagrams read per wakeup */
#define DNSSTUB_BIND_TRIES 32           /* ephemeral UDP ports tried when TCP finds one taken */
#define DNSSTUB_EXPIRE_INTERVAL_S 60    /* between sweeps of the address-to-name map */

/* A stub for T listening on UDP and TCP at LISTEN_ADDR (IPv4 or IPv6).
 * Port 0 picks one free for both protocols (see dnsstub_port). Queries are
 * taken from every client until dnsstub_set_client_net says otherwise.
 * NULL with errno (EADDRINUSE, ENOMEM, ...). */
struct dnsstub *dnsstub_new(struct proxy_tenant *t, const struct sockaddr *listen_addr,
    socklen_t len);
/* The same on sockets bound elsewhere: UDP_FD bound, TCP_FD listening,
 * both on one port (checked). Takes them (closed on failure too). */
struct dnsstub *dnsstub_adopt(struct proxy_tenant *t, int udp_fd, int tcp_fd);
/* Closes S's sockets, cancels its pending queries (no answer is sent) and
 * frees it with its address-to-name map; NULL is fine. */
void dnsstub_free(struct dnsstub *s);

/* Takes queries only from clients inside NET/PREFIX (the sandbox's own
 * address): others are dropped (UDP) or closed at accept (TCP). */
void dnsstub_set_client_net(struct dnsstub *s, const struct sockaddr *net, unsigned prefix);

/* The port S listens on, UDP and TCP alike. */
uint16_t dnsstub_port(const struct dnsstub *s);

/* The address-to-name map of S's answers (see namemap.h), for the
 * transparent proxy; owned by S. */
struct namemap *dnsstub_namemap(const struct dnsstub *s);

#endif
