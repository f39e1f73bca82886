/* The client side of the control socket, shared by the CLI verbs. */
#ifndef CORRAL_CLIENT_H
#define CORRAL_CLIENT_H

#include <stddef.h>

/* Connects to the control socket at PATH. Returns the descriptor, or -1
 * with a one-line reason, written to WHY (WHY_SIZE bytes), that says what
 * is wrong and what would fix it. */
int client_connect(const char *path, char *why, size_t why_size);

#endif
