/* The exec channel between corrald and a sandbox's corral-init: one
 * SOCK_SEQPACKET socketpair per sandbox, its messages in the codec of
 * common/seqmsg.h. The monitor speaks it to send the SPEC; the broker
 * for everything after READY; corral-init answers both.
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
 *   daemon -> init  FSOP      id, a file operation (broker/init/fsop.h);
 *                             fds: the result's file, then the input's
 *                             (write and edit); answered as EXEC is
 *                             (STARTED, then EXITED: 0 when the result
 *                             says done, 1 when it holds a refusal, 127
 *                             when it could not start and holds nothing)
 *   init -> daemon  UNIX      decision (INITPROTO_UNIX_*), unreported (how
 *                             many were dropped before it), path, listed
 *                             path, executable; fd: a pidfd of the process
 *                             when known (its host pid, for the ledger). A
 *                             Unix socket connect() corral-init refused or
 *                             made to a listed socket; sent without waiting
 *                             (broker/init/sockguard.h)
 * corral-init exits when the channel closes; the kernel then kills every
 * process of the sandbox's pid namespace. Library-like: nothing here logs. */
#ifndef CORRAL_INITPROTO_H
#define CORRAL_INITPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/limits.h"
#include "common/seqmsg.h"

#define INITPROTO_FD 3                          /* corral-init's end, as it starts */
#define INITPROTO_ARGS_MAX 1024                 /* argv entries of one command */
#define INITPROTO_ENV_MAX 256                   /* environment entries of one command */
#define INITPROTO_ERR_MAX_BYTES 512             /* text of an ERROR or FAILED */
#define INITPROTO_READY_SECCOMP 0x1u            /* READY: the workload filter applies */
#define INITPROTO_SOCKETS_MAX 16                /* host sockets bound into one sandbox */
#define INITPROTO_SOCKETS_DIR "/run/corral/sockets"     /* where, inside, read-only */
/* The trust bundle inside: the system's and the sandbox CA's certificate
 * (the spec's ca_pem), which the variables of every command name. */
#define INITPROTO_CA_BUNDLE_PATH "/run/corral/ca-bundle.pem"
#define INITPROTO_SOCKET_NAME_MAX_BYTES 64      /* a socket's name there */
#define INITPROTO_UNIX_TEXT_MAX_BYTES 1024      /* each text of a UNIX report, NUL included */
#define INITPROTO_UNIX_ALLOW 1                  /* UNIX: a listed socket was connected */
#define INITPROTO_UNIX_DENY 2                   /* UNIX: a host socket was refused */

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
	INITPROTO_KILLFG_RETIRED,       /* was the terminal's foreground job; never sent, refused */
	INITPROTO_UNIX = 32,    /* numbered apart: reports, not part of a command's exchange */
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
	const char *ca_pem;                     /* the sandbox CA's certificate, or "" */
	uint32_t tmp_mib;                       /* size of /tmp and of /dev/shm, each */
	size_t n_roots;
	const char *root_path[CORRAL_ROOTS_MAX];
	bool root_ro[CORRAL_ROOTS_MAX];
	int root_fd[CORRAL_ROOTS_MAX];
	int home_fd;
	/* Host Unix sockets (broker/init/sockguard.h): whether the kernel
	 * guard is on (then every connect() is supervised), and the
	 * policy's sockets, each a detached clone of the host's socket file
	 * to bind at INITPROTO_SOCKETS_DIR/NAME. */
	bool unix_guard;
	size_t n_sockets;
	const char *socket_name[INITPROTO_SOCKETS_MAX];
	int socket_fd[INITPROTO_SOCKETS_MAX];
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
	uint32_t op;                            /* enum fsproto_op */
	const char *path;                       /* "" : the workspace (list, grep) */
	const char *pattern;                    /* grep; "" otherwise */
	int out_fd;                             /* the file the result is written to */
	int in_fd;                              /* write: the content; edit: u64 old
						 * length, old, new; -1 otherwise */
};

/* Encodes S as a SPEC message (its descriptors attached, not owned). */
void initproto_spec_encode(struct seqmsg *m, const struct initproto_spec *s);
/* Decodes a SPEC; takes its descriptors into S. -1 (EBADMSG) when bad. */
int initproto_spec_decode(struct seqmsg *m, struct initproto_spec *s);
/* The same for EXEC (three descriptors in pipes mode, none for a tty;
 * then extra_fd when it is not -1). */
void initproto_exec_encode(struct seqmsg *m, const struct initproto_exec *e);
int initproto_exec_decode(struct seqmsg *m, struct initproto_exec *e);

/* The same for FSOP (the result's descriptor, then the input's when
 * in_fd is not -1). The decoder refuses an unknown op. */
void initproto_fsop_encode(struct seqmsg *m, const struct initproto_fsop *f);
int initproto_fsop_decode(struct seqmsg *m, struct initproto_fsop *f);

/* A UNIX report. */
struct initproto_unix {
	uint32_t decision;                      /* INITPROTO_UNIX_ALLOW or _DENY */
	uint32_t unreported;                    /* reports dropped before this one */
	const char *path;                       /* as the process named it, made absolute */
	const char *listed;                     /* the policy's host path (allow), or "" */
	const char *binary;                     /* its executable inside, or "" */
	int pidfd;                              /* the process, or -1 */
};

/* Sends U on SOCK without waiting (EAGAIN when the channel is full), each
 * text cut to INITPROTO_UNIX_TEXT_MAX_BYTES; uses no heap, so a thread may
 * send it beside the channel's other traffic. */
int initproto_unix_send(int sock, const struct initproto_unix *u);
/* Decodes a UNIX; its texts point into M, its pidfd is taken. -1 (EBADMSG). */
int initproto_unix_decode(struct seqmsg *m, struct initproto_unix *u);

/* Sends a message of TYPE holding ID and NUM (READY, STARTED, EXITED,
 * KILL) and FD when it is not -1 (STARTED of a tty: the master). */
int initproto_send_nums(int sock, enum initproto_type type, uint32_t id, uint32_t num, int fd);
/* Sends ERROR (ID unused) or FAILED carrying TEXT, cut to fit. */
int initproto_send_text(int sock, enum initproto_type type, uint32_t id, const char *text);

#endif
