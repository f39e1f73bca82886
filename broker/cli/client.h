/* The client side of the control socket, shared by the CLI verbs. */
#ifndef CORRAL_CLIENT_H
#define CORRAL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"

#define CLIENT_TIMEOUT_MS 60000         /* the longest wait for an answer */

/* Connects to the control socket at PATH. Returns the descriptor, or -1
 * with a one-line reason, written to WHY (WHY_SIZE bytes), that says what
 * is wrong and what would fix it. */
int client_connect(const char *path, char *why, size_t why_size);

/* Sends all LEN bytes at DATA on the socket FD (no SIGPIPE); -1 with errno
 * on error. */
int client_send_all(int fd, const uint8_t *data, size_t len);

/* Sends REQ on FD and reads one response into *RESP (free it with
 * corral__response__free_unpacked). -1 with a one-line reason in WHY. */
int client_call(int fd, const Corral__Request *req, Corral__Response **resp, char *why,
    size_t why_size);

/* Connects to PATH, sends REQ and reads the response: client_connect and
 * client_call in one. */
int client_request(const char *path, const Corral__Request *req, Corral__Response **resp,
    char *why, size_t why_size);

#endif
