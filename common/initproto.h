/* The exec channel between corrald and a sandbox's corral-init (DESIGN
 * sections 1, 2 and 5): one SOCK_SEQPACKET socketpair per sandbox, so each
 * message is one datagram and descriptors travel beside it by SCM_RIGHTS.
 *
 * A message is a 32-bit type, then fields in the order its type fixes:
 * numbers as 32-bit host-order words, text as a 32-bit length (NUL
 * included) and the bytes. Both ends are on one machine, so host order is
 * the order. Any message that is short, long, truncated, holds text
 * without its NUL or with one inside, or brings another number of
 * descriptors than its type says, is refused whole (PROTOCOL: see
 * initproto_* below and ARCHITECTURE.md).
 *
 * The conversation:
 *   daemon -> init  SPEC      the sandbox; fds: each root's tree, HOME's tree
 *   init -> daemon  READY     flags (INITPROTO_READY_*), the Landlock ABI
 *                             in force (0: none): set up, dropped, serving
 *                or ERROR     text; corral-init exits after sending it
 *   daemon -> init  EXEC      id, a command; fds: stdin, stdout, stderr
 *                             (pipes mode) or none (tty mode), then the
 *                             extra descriptor when its flag is set (the
 *                             command's fd 3)
 *   init -> daemon  STARTED   id, pid in the sandbox; fd: the pty master
 *                             (tty mode only)
 *                or FAILED    id, text: the command did not start
 *   init -> daemon  EXITED    id, exit code (128+N for signal N)
 *   daemon -> init  KILL      id, signal: sent to the command's process group
 *   daemon -> init  KILLFG    id, signal: sent to the foreground process group
 *                             of the command's terminal (a shell's job)
 *   daemon -> init  FSOP      id, a file operation (broker/init/fsop.h);
 *                             fds: the result's file, then the input's
 *                             (write and edit); answered as EXEC is
 *                             (STARTED, then EXITED: 0 when the result
 *                             says done, 1 when it holds a refusal, 127
 *                             when it could not start and holds nothing)
 * corral-init exits when the channel closes; the kernel then kills every
 * process of the sandbox's pid namespace. Library-like: nothing here logs. */
#ifndef CORRAL_INITPROTO_H
#define CORRAL_INITPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INITPROTO_FD 3                          /* corral-init's end, as it starts */
#define INITPROTO_MSG_MAX_BYTES (128 * 1024)    /* one datagram, under the socket buffer */
#define INITPROTO_FDS_MAX 40                    /* descriptors in one message */
#define INITPROTO_ROOTS_MAX 32                  /* roots of one sandbox */
#define INITPROTO_ARGS_MAX 1024                 /* argv entries of one command */
#define INITPROTO_ENV_MAX 256                   /* environment entries of one command */
#define INITPROTO_ERR_MAX_BYTES 512             /* text of an ERROR or FAILED */
#define INITPROTO_READY_SECCOMP 0x1u            /* READY: the workload filter applies */
#define INITPROTO_TYPE_MAX 255                  /* types 1..255: the exec channel's and others' (monitor) */

enum initproto_type {
	INITPROTO_SPEC = 1,
	INITPROTO_READY,
	INITPROTO_ERROR,
	INITPROTO_EXEC,
	INITPROTO_STARTED,
	INITPROTO_FAILED,
	INITPROTO_EXITED,
	INITPROTO_KILL,
	INITPROTO_FSOP,
	INITPROTO_KILLFG,
};

/* One message being built or read. Received descriptors belong to it until
 * taken (initproto_take_fd) and are closed by initproto_msg_clear. */
struct initproto_msg {
	uint32_t type;
	size_t len;                             /* bytes of body */
	size_t off;                             /* read cursor into body */
	bool overflow;                          /* a put did not fit */
	size_t n_fds;
	int fds[INITPROTO_FDS_MAX];
	unsigned char body[INITPROTO_MSG_MAX_BYTES];
};

/* The sandbox as corral-init builds it. Text points into the message it
 * was decoded from. root_fd and home_fd are detached mount trees. */
struct initproto_spec {
	uint32_t uid, gid;                      /* run_as; never 0 */
	const char *hostname;                   /* the sandbox's name */
	const char *gateway;                    /* nameserver of resolv.conf */
	const char *home;                       /* HOME, at its own path */
	const char *workdir;                    /* default cwd of commands */
	const char *runtime;                    /* corral's runtime folder, or "" */
	size_t n_roots;
	const char *root_path[INITPROTO_ROOTS_MAX];
	bool root_ro[INITPROTO_ROOTS_MAX];
	int root_fd[INITPROTO_ROOTS_MAX];
	int home_fd;
};

/* One command to start. */
struct initproto_exec {
	uint32_t id;                            /* the daemon's, echoed in replies */
	bool tty;                               /* a pty of the sandbox's devpts */
	uint32_t rows, cols;                    /* its window size */
	const char *cwd;                        /* "" for the spec's workdir */
	size_t argc, envc;
	const char *argv[INITPROTO_ARGS_MAX + 1];       /* NULL-terminated */
	const char *envp[INITPROTO_ENV_MAX + 1];        /* NULL-terminated */
	int stdio[3];                           /* pipes mode; -1 in tty mode */
	int extra_fd;                           /* the command's fd 3; -1: none */
};

/* One file operation to run under a workload's layers. */
struct initproto_fsop {
	uint32_t id;                            /* the daemon's, echoed in replies */
	uint32_t op;                            /* enum fsop_op */
	const char *path;                       /* "" : the workspace (list, grep) */
	const char *pattern;                    /* grep; "" otherwise */
	int out_fd;                             /* the file the result is written to */
	int in_fd;                              /* write: the content; edit: u64 old
						 * length, old, new; -1 otherwise */
};

/* Starts an empty message of TYPE. */
void initproto_msg_init(struct initproto_msg *m, enum initproto_type type);
/* Closes the descriptors M still owns and empties it. */
void initproto_msg_clear(struct initproto_msg *m);
/* Appends a field; a message that overflows is refused by initproto_send. */
void initproto_put_u32(struct initproto_msg *m, uint32_t v);
void initproto_put_str(struct initproto_msg *m, const char *s);
/* Attaches FD (not owned: the caller keeps and closes it). */
void initproto_put_fd(struct initproto_msg *m, int fd);
/* Reads the next field; -1 (EBADMSG) when the body has no such field. */
int initproto_get_u32(struct initproto_msg *m, uint32_t *v);
int initproto_get_str(struct initproto_msg *m, const char **s);
/* -1 (EBADMSG) unless the whole body was read and N_FDS came with it. */
int initproto_get_end(const struct initproto_msg *m, size_t n_fds);
/* Moves received descriptor I out of M (then the caller closes it). */
int initproto_take_fd(struct initproto_msg *m, size_t i);

/* Sends M as one datagram on SOCK. 0, or -1 with errno. */
int initproto_send(int sock, const struct initproto_msg *m);
/* Receives one datagram into M (descriptors close-on-exec). 1 on a message,
 * 0 when the peer closed, -1 with errno (EBADMSG for a truncated one or an
 * type outside 1..INITPROTO_TYPE_MAX, EAGAIN on a non-blocking socket with
 * nothing to read). Receivers check the types they expect: the same
 * codec carries the monitor's messages (broker/monitor/monitor-wire.h). */
int initproto_recv(int sock, struct initproto_msg *m);

/* Encodes S as a SPEC message (its descriptors attached, not owned). */
void initproto_spec_encode(struct initproto_msg *m, const struct initproto_spec *s);
/* Decodes a SPEC; takes its descriptors into S. -1 (EBADMSG) when bad. */
int initproto_spec_decode(struct initproto_msg *m, struct initproto_spec *s);
/* The same for EXEC (three descriptors in pipes mode, none for a tty;
 * then extra_fd when it is not -1). */
void initproto_exec_encode(struct initproto_msg *m, const struct initproto_exec *e);
int initproto_exec_decode(struct initproto_msg *m, struct initproto_exec *e);

/* The same for FSOP (the result's descriptor, then the input's when
 * in_fd is not -1). The decoder refuses an unknown op. */
void initproto_fsop_encode(struct initproto_msg *m, const struct initproto_fsop *f);
int initproto_fsop_decode(struct initproto_msg *m, struct initproto_fsop *f);

/* Sends a message of TYPE holding ID and NUM (READY, STARTED, EXITED,
 * KILL) and FD when it is not -1 (STARTED of a tty: the master). */
int initproto_send_nums(int sock, enum initproto_type type, uint32_t id, uint32_t num, int fd);
/* Sends ERROR (ID unused) or FAILED carrying TEXT, cut to fit. */
int initproto_send_text(int sock, enum initproto_type type, uint32_t id, const char *text);

#endif
