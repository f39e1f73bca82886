/* A connection whose TLS the proxy terminates (corral-policy(5), "tls:
 * terminate"), HTTP/1.1 or HTTP/2: the sandbox's TLS is accepted with a leaf of its
 * sandbox's CA for the host the proxy allowed; the upstream's is made
 * with the host's name and verified against the host's trust store (and
 * egress.upstream_ca_file). Between them each request of the kept-alive
 * connection is read (egress-proxy/http.h, origin form), judged, its head
 * rewritten with the sandbox's secrets (secretsub.h), and passed on; one
 * request at a time, its response read to its end (h1body.h) before the
 * next, so that an answer of the proxy's own (403, 502) takes its place
 * among the responses. A 101 turns both ways into a raw relay (WebSocket).
 *
 * A secret goes to its hosts on their ports alone: its hosts are matched
 * against the connection's "host:port".
 *
 * What the upstream sends back is searched for the real value of every
 * secret that may go to this host, plain, as base64 at each of its three
 * alignments (a Basic credential echoed) and in the escapes of
 * secretsub_echo_form: a response that holds one ends the connection
 * ("secret_echoed") before those bytes reach the sandbox. Within a
 * message, its last bytes (as many as the largest form a value of that
 * length could take, whatever they hold) wait for the next ones or
 * MITM_HOLD_MS, counted only while the upstream could send more and from
 * when it last got room to (the sandbox's pace holds it back: the proxy's
 * reading paused, or HTTP/2's window, and gives room when it chooses); the
 * TLS filter toward the sandbox encrypts at most MITM_BUFFER_MAX_BYTES
 * ahead, so that the pace is felt; the bytes passed on are remembered as far back, so a
 * value whose start went on is still found when its end comes; a chunked body is searched as its content (its framing taken
 * off and put on anew, trailers dropped), so a chunk boundary hides
 * nothing; requests toward such a host ask for bodies as they are
 * (Accept-Encoding: identity), and a coded body is refused
 * ("upstream_body_encoded", a 502). Not found: a value the upstream splits
 * across two responses (each response's end lets go of what it held), or
 * that it sends only in part (a Range of a stored copy): corral(1) says so.
 *
 * Both sides speak one protocol: the sandbox's ClientHello is read first;
 * when it offers h2 the upstream is offered h2 and http/1.1 and the sandbox
 * gets what the upstream chose (HTTP/2 is mitm-h2.c's); otherwise both
 * speak HTTP/1.1 and the two handshakes run at once.
 *
 * Runs on its caller's libevent loop (bufferevent_openssl). */
#ifndef CORRAL_MITM_H
#define CORRAL_MITM_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "egress-proxy/secretsub.h"

struct event_base;
struct tlsca;
struct mitm;
struct mitm_sessions;

#define MITM_BUFFER_MAX_BYTES (1024 * 1024)     /* queued for a slow side: reading the other pauses */
#define MITM_HANDSHAKE_TIMEOUT_S 10

/* What a terminated connection works with; the caller keeps it alive. */
struct mitm_config {
	struct tlsca *ca;                       /* the sandbox's */
	SSL_CTX *server_ctx;                    /* toward the sandbox: mitm_server_ctx_new() */
	SSL_CTX *upstream_ctx;                  /* toward the upstream: mitm_upstream_ctx_new() */
	const struct secretsub_secret *secrets;
	size_t nsecrets;
	struct mitm_sessions *sessions;         /* the sandbox's upstream TLS sessions, or NULL */
	unsigned idle_ms;                       /* no byte either way this long: closed (0: never) */
	unsigned response_ms;                   /* a response's bytes stop this long: 504 or closed (0: never) */
};

/* One request, as the ledger records it. */
struct mitm_request {
	const char *method;
	const char *target;                     /* as sent: path and query */
	const char *refused;                    /* the reason it was answered by the proxy, or NULL */
	const char *secret;                     /* with "secret_misuse": whose placeholder it was */
	int status;                             /* the proxy's answer's status, or 0 */
	uint32_t secrets_used;                  /* bit i: secrets[i] swapped in */
};

struct mitm_hooks {
	/* The request METHOD TARGET: NULL passes it; a reason answers 403
	 * (e.g. "path_not_allowed"). May be NULL: every request passes. */
	const char *(*judge)(void *arg, const char *method, const char *target);
	/* Each request as it is passed (before any of it is sent) or
	 * answered: -1 when it cannot be recorded, and a request to pass is
	 * then refused ("ledger_unavailable"). May be NULL. */
	int (*request)(void *arg, const struct mitm_request *r);
	/* The end (called once, from the loop; free the mitm after): WHY is
	 * NULL for a normal close, else a reason ("upstream_certificate");
	 * the plain bytes the sandbox sent and received. */
	void (*done)(void *arg, const char *why, uint64_t up, uint64_t down);
	void *arg;
};

#define MITM_SESSIONS_MAX 64            /* upstream TLS sessions one sandbox keeps */

/* A sandbox's cache of upstream TLS sessions, by host and port: a new
 * connection to a host it reached before resumes (one handshake less of
 * the two a terminated connection makes). Each sandbox has its own, so
 * that no upstream can tell two sandboxes apart by a ticket; a session is
 * used once, and the upstream's next tickets replace it. NULL if out of
 * memory. */
struct mitm_sessions *mitm_sessions_new(void);
void mitm_sessions_free(struct mitm_sessions *c);

/* The context toward sandboxes: TLS 1.2 and up, ALPN h2 or http/1.1. */
SSL_CTX *mitm_server_ctx_new(char **err);
/* The context toward upstreams: TLS 1.2 and up, the system's trust store
 * and EXTRA_CA_FILE (PEM; NULL: none), peer verification; the sessions it
 * makes go to the cache of the connection's sandbox. */
SSL_CTX *mitm_upstream_ctx_new(const char *extra_ca_file, char **err);

/* Terminates the sandbox's connection CLIENT_FD (its first EARLY_LEN bytes,
 * a ClientHello already read, at EARLY) and the upstream's UPSTREAM_FD
 * (connected TCP), both taken, for HOST on PORT. NULL with *ERR (the descriptors
 * are then closed). */
struct mitm *mitm_start(struct event_base *base, const struct mitm_config *cfg,
    const char *host, uint16_t port, int client_fd, const void *early, size_t early_len,
    int upstream_fd, const struct mitm_hooks *hooks, char **err);
/* Stops M at once: no hook of it runs again, nothing more is read or
 * written; mitm_free() it later (from the loop). NULL is fine. */
void mitm_stop(struct mitm *m);
/* The plain bytes the sandbox sent and received so far. */
void mitm_bytes(const struct mitm *m, uint64_t *up, uint64_t *down);
/* Makes OpenSSL wipe every block it frees (common/wipe.h): its record
 * buffers hold what a terminated connection carries, secrets' values among
 * it. Before any other OpenSSL call; -1 when too late. */
int mitm_wipe_openssl_memory(void);

/* Closes both sides and frees M; NULL is fine. */
void mitm_free(struct mitm *m);

#endif
