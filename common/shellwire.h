/* The link between the broker and a persistent shell's supervisor,
 * corral-shell (broker/init/corral-shell.c, ARCHITECTURE.md "Sessions:
 * shells and files"): one SOCK_SEQPACKET socketpair per shell, the
 * supervisor's fd 3, its messages in the codec of common/seqmsg.h with
 * types of their own range. Every message about a run carries the broker's
 * run number; the supervisor knows no request ids and never sees a client.
 *
 *   shell -> broker  HELLO    version, mode, Landlock ABI, flags: first, once
 *   broker -> shell  RUN      run, the script's length, its first chunk; fd:
 *                             the write end of the run's output pipe (the
 *                             broker keeps the read end)
 *   broker -> shell  MORE     run, the next chunk, until the length is there
 *   broker -> shell  SIGNAL   run, SIGINT or SIGKILL, for the run's process
 *                             group (its own session)
 *   shell -> broker  STARTED  run, the pid of the run's shell in the
 *                             sandbox's pid namespace: the ledger's run
 *                             of the connections its processes open
 *   shell -> broker  EXITED   run, how (SHELLWIRE_EXIT_*), code or signal,
 *                             dump (SHELLWIRE_DUMP_*): the kernel's word,
 *                             from waitpid; with dump SENT, then text
 *                             fields: the cwd, then each NAME=VALUE the
 *                             run's shell exported as it exited normally
 *                             (the exit dump, not parsed by the supervisor)
 *   shell -> broker  FAILED   run (0: the shell as a whole), text: no
 *                             process could be made for the run
 *   shell -> broker  NOTE     text, for the broker's log
 *
 * The broker sends one run at a time and anything else it sends only
 * about the run in the shell; the supervisor ends on a message that breaks
 * this, and the broker drops a supervisor that does. Library-like:
 * nothing here logs. */
#ifndef CORRAL_SHELLWIRE_H
#define CORRAL_SHELLWIRE_H

#include <stddef.h>
#include <stdint.h>

#define SHELLWIRE_FD 3                          /* the supervisor's end, as it starts */
#define SHELLWIRE_VERSION 1
#define SHELLWIRE_MODE_ZYGOTE 1                 /* runs are clones of one pristine bash */
#define SHELLWIRE_HELLO_SCOPED 0x1u             /* HELLO flags: the runs' domain is signal-scoped */
#define SHELLWIRE_CHUNK_MAX_BYTES (60 * 1024)   /* script text in one RUN or MORE */
#define SHELLWIRE_SCRIPT_MAX_BYTES (512 * 1024) /* a whole script */
#define SHELLWIRE_STATE_MAX_BYTES (64 * 1024)   /* a dump kept: cwd and entries, NULs included */
#define SHELLWIRE_STATE_ENTRIES_MAX 4096        /* exported variables a dump may hold */
#define SHELLWIRE_STATE_FIELDS_MAX (SHELLWIRE_STATE_ENTRIES_MAX + 1)    /* and its cwd */
#define SHELLWIRE_TEXT_MAX_BYTES 512            /* FAILED and NOTE */
#define SHELLWIRE_SCRIPT_VAR "__corral_s"       /* the script, in the run's shell */

enum shellwire_type {
	SHELLWIRE_HELLO = 96,                   /* 1-10: the exec channel's; 64-75: the monitor's */
	SHELLWIRE_RUN,
	SHELLWIRE_MORE,
	SHELLWIRE_SIGNAL,
	SHELLWIRE_EXITED,
	SHELLWIRE_FAILED,
	SHELLWIRE_NOTE,
	SHELLWIRE_STARTED,
};

/* EXITED's how. */
enum shellwire_exit {
	SHELLWIRE_EXIT_CODE = 0,                /* exited: code is the status */
	SHELLWIRE_EXIT_SIGNAL = 1,              /* killed: code is the signal */
};

/* EXITED's dump: what became of the run's state. */
enum shellwire_dump {
	SHELLWIRE_DUMP_NONE = 0,                /* no normal exit, or no dump from the run's shell */
	SHELLWIRE_DUMP_SENT = 1,                /* its fields follow */
	SHELLWIRE_DUMP_TOO_BIG = 2,             /* over SHELLWIRE_STATE_MAX_BYTES: dropped */
	SHELLWIRE_DUMP_SAME = 3,                /* byte for byte the last one this supervisor sent */
};

/* Sends a message of TYPE holding the N numbers NUMS, and FD when it is
 * not -1. 0, or -1 with errno. */
int shellwire_send_nums(int sock, enum shellwire_type type, const uint32_t *nums, size_t n,
    int fd);
/* Sends FAILED or NOTE: RUN (FAILED only) and TEXT, cut to fit. */
int shellwire_send_text(int sock, enum shellwire_type type, uint32_t run, const char *text);

#endif
