/* The control socket: framed protobuf requests (common/corral.proto), one
 * handler per request kind, the caller known by SO_PEERCRED. */
#ifndef CORRAL_API_H
#define CORRAL_API_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "broker/sandbox.h"
#include "common/frame.h"
#include "common/wire.h"

struct api;
struct daemon;

#define API_CONNECTIONS_MAX 256         /* control connections open at once */
#define API_ROOT_CONNECTIONS 16         /* of those, kept for root */
#define API_STREAMS_MAX 512             /* exec, run and logs streams open at once */
#define API_ROOT_STREAMS 32             /* of those, kept for root */
/* What one stream holds in the broker at most: its client, the command's
 * three pipes or terminal, its process. corrald's descriptor budget
 * (corrald.c) counts on it. */
#define API_STREAM_FDS 5
#define API_REFUSAL_MAX_BYTES 256       /* a refusal's one line */
#define API_IDLE_TIMEOUT_S 30           /* a connection that sends no whole request */
#define API_SOCKET_MODE 0660

#define API_LISTEN_BACKLOG 64
#define API_ACCEPT_PAUSE_MS 100         /* out of descriptors: accept again after */

/* Makes the control socket at PATH (removing a stale one), mode 0660,
 * group GROUP ((gid_t)-1: unchanged): done while root, before the drop.
 * The listening descriptor, or -1 (logged). */
int api_listen(const char *path, gid_t group);
/* Serves the control socket FD (taken), made at PATH, for D; NULL (logged). */
struct api *api_new(struct daemon *d, int fd, const char *path);
/* Closes every connection and the socket, and removes it; NULL is fine. */
void api_free(struct api *a);


/* A handler answers REQ into *RESP (whose payload it allocates with
 * malloc, freed by api_response_clear) and returns 0; -1 drops the connection. */
typedef int (*api_handler)(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);

/* Fills RESP with an Error of CODE and a formatted message. */
void api_error(Corral__Response *resp, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

struct api_pending;

/* The handlers, one file per group. */
/* Status: answered once the monitor said what it knows of the firewall. */
void api_status(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct api_pending *p);
/* corral metrics: the Prometheus text (root only). */
int api_metrics(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp);
/* corral reload: corrald.yaml and the profiles again (root only). */
int api_reload(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp);
int api_policy_get(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);
int api_policy_set(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);
int api_policy_update(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);
int api_denials(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);
int api_secret_list(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);
int api_sandbox_get(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);
int api_sandbox_list(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);



int api_run_ack(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);
int api_run_interrupt(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);
int api_run_list(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);

/* A reply that comes later: a deferred handler starts the work and keeps
 * P; whoever finishes it calls api_pending_reply exactly once (also when
 * the client already left: then the reply is dropped). The connection
 * reads nothing more meanwhile. REQ is freed when the handler returns. */
typedef void (*api_deferred_handler)(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct api_pending *p);
/* Sends RESP (not taken) on P's connection, closes it once written, frees P. */
void api_pending_reply(struct api_pending *p, const Corral__Response *resp);
/* Sandbox creation (api-sandbox.c): answered once the monitor built it. */
void api_sandbox_create(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct api_pending *p);
/* Sandbox deletion (api-sandbox.c): answered once the monitor tore them down. */
void api_sandbox_delete(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct api_pending *p);
/* Reaping (api-sandbox.c), root's: answered once the monitor has reaped. */
void api_reap(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct api_pending *p);
/* The file API (api-fs.c): every Fs* request. */
void api_fs(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    struct api_pending *p);

struct bufferevent;
/* A stream's place in its user's share (shares.streams) and in the
 * daemon's API_STREAMS_MAX: the stream gives it back as it ends. */
struct api_slot;
void api_slot_release(struct api_slot *slot);
/* CLOSE(ARG) ends the stream holding SLOT when corrald shuts down; it
 * must give SLOT back. */
void api_slot_on_close(struct api_slot *slot, void (*close)(void *arg), void *arg);
/* A stream: takes the connection (BEV, FRAMES, whose first frame was REQ)
 * and SLOT over whatever happens. REQ is freed when it returns. */
typedef void (*api_attach_fn)(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot);
/* Ends a stream before it starts: one error frame (CODE, MESSAGE), then
 * the connection closes once it is written. Takes BEV and FRAMES. */
void api_stream_refuse(struct bufferevent *bev, struct frame_decoder *frames, const char *code,
    const char *message);
/* Ends a stream with one answer, RESP (not taken), then closes the
 * connection once it is written. Takes BEV and FRAMES. */
void api_stream_answer(struct bufferevent *bev, struct frame_decoder *frames,
    const Corral__Response *resp);
/* The exec stream (api-exec.c), for a first request that is an exec start. */
void api_exec_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot);
/* Shell runs (api-run.c): RunStart and RunResume. */
void api_run_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot);
/* The logs stream (api-logs.c): ledger records in LogsReply frames, the
 * last with end set, or followed until the client closes. */
void api_logs_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot);
/* SB is being deleted: its exec streams end now, each told why. */
void api_exec_sandbox_gone(struct sandbox *sb);
/* "exec:PID" in BUF when PID (in SB's pid namespace) is an exec's running
 * command, else NULL. */
const char *api_exec_run_of(const struct sandbox *sb, pid_t pid, char *buf, size_t size);

struct evbuffer;
/* Feeds IN to FRAMES until a frame is ready (FRAME_READY), the bytes run
 * out (FRAME_NEED_MORE), or the stream is bad (an error status). */
enum frame_status api_read_frame(struct evbuffer *in, struct frame_decoder *frames);

/* Frees what a handler put in RESP. */
void api_response_clear(Corral__Response *resp);

#endif
