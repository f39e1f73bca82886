/* What the daemon and a persistent bash say to each other (ARCHITECTURE.md,
 * "Sessions: shells and files"). bash reads its commands from a socket (its
 * fd 0, our end kept by the daemon) and writes to its terminal. Each run is
 * one line,
 *     __corral_n=NONCE; eval $'COMMAND' </dev/null
 * and, before its next prompt, bash writes a marker "\037corral-NONCE\037"
 * to the terminal (so the daemon knows where the run's output ends) and a
 * status record "NONCE\0CODE\0CWD\0" to the socket. The command's stdin is
 * /dev/null and the socket is not among its descriptors, so its output
 * cannot fake the status: at worst a copied marker cuts its own output
 * short. Pure logic: never logs, never exits. */
#ifndef CORRAL_SHELLPROTO_H
#define CORRAL_SHELLPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHELLPROTO_NONCE_BYTES 16               /* hex digits */
#define SHELLPROTO_STATUS_MAX_BYTES 8192        /* a status record, cwd included */
#define SHELLPROTO_MARKER_MAX_BYTES (SHELLPROTO_NONCE_BYTES + 16)

/* The text bash reads first: quiet prompts, no history, the status hook;
 * it ends with the first nonce, whose marker says the shell is ready.
 * malloc'd. */
char *shellproto_init_script(const char *nonce);
/* The line that runs COMMAND (LEN bytes) under NONCE; malloc'd, *OUT_LEN set. */
char *shellproto_run_line(const char *nonce, const char *command, size_t len, size_t *out_len);

/* One status record. */
struct shellproto_status {
	char nonce[SHELLPROTO_NONCE_BYTES + 1];
	int code;
	char cwd[SHELLPROTO_STATUS_MAX_BYTES];
};

/* Parses a status record at the start of DATA (LEN bytes): 1 with *ST and
 * *USED set, 0 when more bytes are needed, -1 when it is malformed (a
 * field too long, a code that is not a number). */
int shellproto_status_parse(const uint8_t *data, size_t len, struct shellproto_status *st,
    size_t *used);

/* Finds the marker in a terminal's byte stream, fed in any chunks. */
struct shellproto_marker {
	char pat[SHELLPROTO_MARKER_MAX_BYTES];
	size_t plen;
	size_t matched;                 /* bytes of pat seen and held back */
	bool found;
};

/* Arms M for NONCE. */
void shellproto_marker_init(struct shellproto_marker *m, const char *nonce);
/* Feeds LEN bytes of IN: the output before the marker goes to OUT (room
 * for LEN + SHELLPROTO_MARKER_MAX_BYTES bytes; held-back bytes that turn
 * out not to be the marker come out late), *OUT_LEN says how much.
 * Returns how many bytes of IN it took: all of them, or up to the
 * marker's last byte once it is found (then M->found). */
size_t shellproto_marker_feed(struct shellproto_marker *m, const uint8_t *in, size_t len,
    uint8_t *out, size_t *out_len);

#endif
