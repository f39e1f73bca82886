/* The parts of a terminated connection (mitm.h) that its HTTP/1.1 half
 * (mitm.c) and its HTTP/2 half (mitm-h2.c) share: one struct, the end,
 * the ledger's hook, the proxy's own answers and the search for echoed
 * secrets. Private to those two files. */
#ifndef CORRAL_MITM_INT_H
#define CORRAL_MITM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include "egress-proxy/h1body.h"
#include "egress-proxy/mitm.h"
#include "egress-proxy/tlsca.h"

struct bufferevent;
struct evbuffer;
struct evbuffer_cb_entry;
struct event;
struct mitm_h2;
struct secretsub_scan;

#define MITM_ALPN "\x08http/1.1"
#define MITM_ANSWER_MAX_BYTES 2048
#define MITM_METHOD_MAX_BYTES 16
#define MITM_TARGET_MAX_BYTES 2048      /* as the ledger keeps it */
#define MITM_TARGET_SHOWN_BYTES 256     /* in the proxy's own answers */
#define MITM_ECHO_MAX (SECRETSUB_MAX * SECRETSUB_ECHO_FORMS)
/* How long the end of a stream still coming (a WebSocket's, a body's not
 * yet ended) is held back, whatever it holds, in case it begins a value: long
 * enough for the rest of a value a host sent in two writes, short enough
 * for a conversation. */
#define MITM_HOLD_MS 200

enum mitm_stage {
	MITM_REQ_HEAD,                  /* reading the next request's head */
	MITM_REQ_BODY,                  /* passing its body on */
	MITM_SKIP_BODY,                 /* dropping a refused request's body */
	MITM_RESP_HEAD,                 /* reading its response's head */
	MITM_RESP_BODY,                 /* passing the response's body back */
	MITM_RAW,                       /* after a 101: bytes both ways */
	MITM_CLOSING,                   /* the last answer is going out */
};

/* What a search of a response remembers of the bytes it passed on: their
 * last hold_bytes, so that a value whose start went on before a pause is
 * still found when its end comes, and the connection ends before that. */
struct mitm_passed {
	unsigned char *bytes;           /* hold_bytes, made at first use */
	size_t len;
};

/* Where the message being read ends. */
struct mitm_body {
	enum h1_body kind;
	uint64_t left;                  /* H1_BODY_LENGTH */
	struct h1_chunked chunked;
};

struct mitm {
	struct event_base *base;
	const struct mitm_config *cfg;
	struct mitm_hooks hooks;
	char host[TLSCA_HOST_MAX_BYTES + 1];
	uint16_t port;                  /* the connection's: a Host with another is refused */
	char hostport[TLSCA_HOST_MAX_BYTES + 8];        /* "host:port": where secrets may go */
	struct bufferevent *client, *upstream;  /* NULL until made */
	struct bufferevent *under;      /* the sandbox's socket until its TLS starts */
	int upstream_fd;                /* the upstream's socket until its TLS starts */
	struct evbuffer *client_wire;           /* the client's TLS bytes going out */
	struct evbuffer_cb_entry *wire_cb;
	struct event *finish;
	enum mitm_stage stage;
	bool client_up, upstream_up;
	const char *upstream_failed;    /* why its TLS failed, once it did */
	const char *end;                /* why it ends (NULL: normally) */
	bool ended;
	bool notified;                  /* the sandbox's close_notify is written */
	bool head_request, upgrade, close_after;
	bool answered;                  /* some of this response's bytes went back */
	bool client_paced;              /* not read until its answers are (mitm_client_turn) */
	char method[MITM_METHOD_MAX_BYTES];     /* the request passed on, for a 504 */
	char target[MITM_TARGET_SHOWN_BYTES + 1];
	struct mitm_body body;
	uint64_t up, down;
	/* The secrets' values in the forms searched for in what comes back,
	 * and the upstream's bytes waiting to be searched (NULL: no secret
	 * may go to this host, nothing is searched). */
	const char *echo[MITM_ECHO_MAX];
	bool echo_owned[MITM_ECHO_MAX];
	size_t echo_len[MITM_ECHO_MAX], nechoes;
	size_t hold_bytes;              /* what a stream's end waits with (mitm_hold) */
	unsigned char *junction;        /* 2 * hold_bytes: mitm_echo_after's */
	struct mitm_passed passed;      /* of the HTTP/1.1 bodies */
	struct evbuffer *scan;
	struct event *hold;             /* releases what the search holds back */
	struct timeval resumed;         /* HTTP/1.1: the proxy read the upstream again */
	bool rechunk;                   /* the scan holds a chunked body's content: */
					/* it goes out in chunks of ours */
	struct secretsub_scan *body_scan;       /* placeholders in a request's body */
	struct event *idle;
	struct timeval active;          /* the last byte either way */
	/* ALPN: what the sandbox's hello offered, and what both sides speak. */
	bool hello_read;                /* the sandbox's ClientHello is read */
	bool offers_h2;
	bool h2;                        /* HTTP/2 both ways: the h2 half has it */
	struct mitm_h2 *h2s;
};


/* Ends M for WHY (NULL: normally): the owner hears it from the loop. */
void mitm_end(struct mitm *m, const char *why);
/* The last answer is out: then it ends (WHY, NULL: normally). */
void mitm_close_after_write(struct mitm *m, const char *why);
/* Tells the owner of a request; -1 when it could not record it. */
int mitm_tell(struct mitm *m, const char *method, const char *target, const char *refused,
    const char *secret, int status, uint32_t used);
/* A byte moved: the idle time starts again. */
void mitm_touch(struct mitm *m);
/* The JSON body of the proxy's answer of STATUS for REASON to METHOD
 * TARGET (cut to what is shown), malloc'd, *LEN bytes; NULL when out of
 * memory. */
char *mitm_answer_body(const struct mitm *m, int status, const char *reason, const char *method,
    const char *target, size_t *len);
/* True when DATA (LEN bytes) holds a secret's value in a form searched for. */
bool mitm_echo_in(const struct mitm *m, const void *data, size_t len);
/* True when DATA (LEN bytes, not passed on yet) holds a value's form
 * within it or across its start and the bytes P passed on before it. */
bool mitm_echo_after(struct mitm *m, const struct mitm_passed *p, const void *data,
    size_t len);
/* Notes that the N bytes at DATA were passed on after P's; -1 out of
 * memory. */
int mitm_passed_add(struct mitm *m, struct mitm_passed *p, const void *data, size_t n);
void mitm_passed_free(struct mitm_passed *p);
/* Arms M's hold timer again: what is held waits another MITM_HOLD_MS. */
void mitm_hold_again(struct mitm *m);
/* True when less than MITM_HOLD_MS have passed since WHEN (the loop's time). */
bool mitm_within_hold(struct mitm *m, const struct timeval *when);
/* How many of the last LEN bytes searched wait for the next ones before
 * they may go: as many as the largest form a value of that length could
 * take, less one (hold_bytes), whatever they hold
 * (a hold that depended on them would tell the sandbox, a byte at a time,
 * which bytes begin a value), released by M's hold timer, armed here,
 * when nothing follows. */
size_t mitm_hold(struct mitm *m, size_t len);
/* Searches the next LEN bytes at DATA of a request's body (its search
 * *SC, made at first use; reset it for each body) for the sandbox's
 * placeholders: the misused secret's name, or NULL. A placeholder may go
 * in no body (secretsub.h): the caller refuses the request before those
 * bytes go on. Out of memory the connection ends and *FAILED is set. */
const char *mitm_body_misuse(struct mitm *m, struct secretsub_scan **sc, const void *data,
    size_t len, bool *failed);
/* The sandbox's own HOST:PORT check: NAME (LEN bytes, a Host or :authority)
 * names M's host, and its port when it gives one. */
bool mitm_authority_is_ours(const struct mitm *m, const char *name, size_t len);

/* The free callback of evbuffer_add_reference for bytes that held a
 * secret's value: wiped, then freed. */
void mitm_wipe_free(const void *data, size_t len, void *arg);
/* Wipes what B's input holds (it may echo a value), before it is freed. */
void mitm_wipe_input(struct bufferevent *b);

/* The HTTP/2 half (mitm-h2.c). Both sides chose h2: sessions made and
 * the prefaces queued; -1 out of memory. */
int mitm_h2_start(struct mitm *m);
/* What the sandbox or the upstream sent, read and answered. */
void mitm_h2_client_turn(struct mitm *m);
void mitm_h2_upstream_turn(struct mitm *m);
/* Frees the h2 half; NULL is fine. */
void mitm_h2_free(struct mitm_h2 *h);
/* The hold timer went off: what every stream's search held goes on. */
void mitm_h2_release(struct mitm *m);
/* What the proxy had for the upstream has all left (its write callback). */
void mitm_h2_upstream_drained(struct mitm *m);

#endif
