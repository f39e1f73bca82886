/* corral forward's first argument: where the host side listens. Pure: no
 * I/O, so the unit tests read it as the CLI does. */
#ifndef CORRAL_FORWARD_SPEC_H
#define CORRAL_FORWARD_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#define FORWARD_SPEC_REASON_MAX_BYTES 160

/* [ADDR:]HOST_PORT:SANDBOX_PORT, or PATH:SANDBOX_PORT (PATH begins with
 * "/" or "./": a Unix socket). ADDR is a loopback address (127.0.0.0/8,
 * "[::1]", "localhost"; 127.0.0.1 when left out); HOST_PORT 0 lets the
 * kernel choose. */
struct forward_spec {
	bool unix_socket;
	struct sockaddr_storage addr;   /* the host side: sockaddr_in, _in6 or _un */
	socklen_t addr_len;
	uint16_t sandbox_port;
};

/* Parses TEXT into *SPEC; -1 with a one-line reason in WHY. */
int forward_spec_parse(const char *text, struct forward_spec *spec, char *why,
    size_t why_size);

#endif
