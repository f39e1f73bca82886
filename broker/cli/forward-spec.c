/* corral forward's first argument (forward-spec.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/cli/forward-spec.h"

/* A port of 1-65535 (0 too when ZERO_OK) in TEXT, all of it, into *PORT. */
static int
forward_port(const char *text, bool zero_ok, uint16_t *port)
{
	char *end;
	unsigned long v;

	if (text[0] < '0' || text[0] > '9')
		return -1;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno != 0 || *end != '\0' || v > 65535 || (v == 0 && !zero_ok))
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* ADDR (brackets taken off an IPv6 one) and HOST_PORT into SPEC. */
static int
forward_tcp_addr(const char *addr, uint16_t host_port, struct forward_spec *spec, char *why,
    size_t why_size)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)&spec->addr;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&spec->addr;

	if (strcmp(addr, "localhost") == 0)
		addr = "127.0.0.1";
	if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
		/* Loopback only: a forward is for the host's own users. */
		if ((ntohl(v4->sin_addr.s_addr) >> 24) != 127)
			goto not_loopback;
		v4->sin_family = AF_INET;
		v4->sin_port = htons(host_port);
		spec->addr_len = sizeof(*v4);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr))
			goto not_loopback;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(host_port);
		spec->addr_len = sizeof(*v6);
		return 0;
	}
	snprintf(why, why_size, "%.64s is not an IP address (127.0.0.1, [::1] or localhost)", addr);
	return -1;
not_loopback:
	snprintf(why, why_size, "%.64s is not a loopback address: a forward listens on the "
	    "host's loopback only (127.0.0.0/8 or [::1])", addr);
	return -1;
}

/* PATH:SANDBOX_PORT. */
static int
forward_unix(const char *text, const char *colon, struct forward_spec *spec, char *why,
    size_t why_size)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&spec->addr;
	size_t n = (size_t)(colon - text);

	if (n >= sizeof(un->sun_path)) {
		snprintf(why, why_size, "the socket's path is longer than %zu bytes",
		    sizeof(un->sun_path) - 1);
		return -1;
	}
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path, text, n);
	un->sun_path[n] = '\0';
	spec->unix_socket = true;
	spec->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

int
forward_spec_parse(const char *text, struct forward_spec *spec, char *why, size_t why_size)
{
	const char *last = strrchr(text, ':'), *rest;
	char addr[INET6_ADDRSTRLEN + 2], port[8];
	uint16_t host_port;
	size_t n;

	memset(spec, 0, sizeof(*spec));
	if (last == NULL || forward_port(last + 1, false, &spec->sandbox_port) == -1) {
		snprintf(why, why_size, "%.64s does not end with :SANDBOX_PORT (1-65535)", text);
		return -1;
	}
	if (text[0] == '/' || strncmp(text, "./", 2) == 0)
		return forward_unix(text, last, spec, why, why_size);
	/* [ADDR:]HOST_PORT before the last colon; ADDR may be "[v6]". */
	rest = text;
	for (const char *c = last - 1; c >= text; c--)
		if (*c == ':' && (text[0] != '[' || c > strchr(text, ']'))) {
			rest = c + 1;
			break;
		}
	n = (size_t)(last - rest);
	if (n == 0 || n >= sizeof(port)) {
		snprintf(why, why_size, "%.64s: HOST_PORT must be a port (0-65535)", text);
		return -1;
	}
	memcpy(port, rest, n);
	port[n] = '\0';
	if (forward_port(port, true, &host_port) == -1) {
		snprintf(why, why_size, "%.64s: HOST_PORT must be a port (0-65535)", text);
		return -1;
	}
	if (rest == text)
		return forward_tcp_addr("127.0.0.1", host_port, spec, why, why_size);
	n = (size_t)(rest - 1 - text);
	if (n >= 2 && text[0] == '[' && text[n - 1] == ']') {
		text++;
		n -= 2;
	}
	if (n == 0 || n >= sizeof(addr)) {
		snprintf(why, why_size, "the address before HOST_PORT is empty or too long");
		return -1;
	}
	memcpy(addr, text, n);
	addr[n] = '\0';
	return forward_tcp_addr(addr, host_port, spec, why, why_size);
}
