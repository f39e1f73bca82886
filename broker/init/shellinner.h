/* What corral-shell (the supervisor, corral-shell.c) says to its zygote
 * bash and to each run's shell through the loadable builtin
 * (shellbuiltin.c), on private SOCK_SEQPACKET socketpairs that no broker
 * and no other run ever holds. Each datagram is one kind byte, then bytes.
 *
 *   supervisor -> zygote, its fd SHELLINNER_ZYGOTE_FD:
 *     SPAWN        no bytes; 2 descriptors by SCM_RIGHTS: the spare's
 *                  input socket and its state socket. The zygote clones a
 *                  spare with CLONE_PARENT (the supervisor's child) that
 *                  holds them.
 *   spare -> supervisor, on the state socket (SO_PASSCRED: the sender's
 *   pid comes with every datagram and only the spare's own counts):
 *     READY        no bytes: its own session and Landlock domain are made
 *     DUMP, DUMP_END  the exit dump in chunks: $PWD, NUL, then each entry
 *                  of the exported environment, NUL-ended, exactly as
 *                  bash would pass it to a command
 *     DUMP_TOO_BIG no bytes: the dump would be over SHELLWIRE_STATE_MAX_BYTES
 *   supervisor -> spare, on the input socket:
 *     SCRIPT, SCRIPT_END  the script in chunks, the first with 1 descriptor:
 *                  the write end of the run's output pipe (the broker's),
 *                  its stdout and stderr; then the input closes */
#ifndef CORRAL_SHELLINNER_H
#define CORRAL_SHELLINNER_H

#define SHELLINNER_ZYGOTE_FD 3          /* the zygote's socket to the supervisor */
#define SHELLINNER_IN_FD 60             /* a spare's input, close-on-exec; above the
					 * 3-9 that scripts use for their own */
#define SHELLINNER_STATE_FD 61          /* a spare's state socket, close-on-exec */
#define SHELLINNER_SPAWN_FDS 2
#define SHELLINNER_CHUNK_MAX_BYTES (60 * 1024)  /* under the smallest socket buffer */
#define SHELLINNER_EXIT_NO_BUILTIN 97   /* the zygote could not load the builtin */

enum shellinner_kind {
	SHELLINNER_SPAWN = 'S',
	SHELLINNER_READY = 'R',
	SHELLINNER_DUMP = 'd',
	SHELLINNER_DUMP_END = 'D',
	SHELLINNER_DUMP_TOO_BIG = 'T',
	SHELLINNER_SCRIPT = 'c',
	SHELLINNER_SCRIPT_END = 'C',
};

#endif
