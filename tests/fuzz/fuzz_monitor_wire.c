/* Fuzz target for broker/monitor/monitor-wire: the monitor decodes what
 * the broker sends as untrusted (a subverted broker could send anything),
 * and the broker what the monitor answers. The input's first byte picks
 * the message type, its second how many descriptors come with it (0-7, as
 * SCM_RIGHTS would bring them); the rest is the body. Every decoder runs
 * on it; whatever one takes is closed, and a leaked or double-closed
 * descriptor aborts. */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/monitor/monitor-wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FDS_MAX 7
#define FUZZ_TYPES (MONITOR_FIREWALL_IS - MONITOR_HELLO + 1)

static struct seqmsg fuzz_msg;
static unsigned fuzz_listed;

static void
fuzz_close(int fd)
{
	if (fd != -1 && close(fd) == -1)
		abort();
}

/* Fills fuzz_msg from the input; the descriptors are fresh /dev/null ones. */
static void
fuzz_fill(const uint8_t *data, size_t size, uint32_t type)
{
	size_t nfds = size > 1 ? data[1] % (FUZZ_FDS_MAX + 1) : 0;
	size_t len = size > 2 ? size - 2 : 0;

	seqmsg_init(&fuzz_msg, type);
	if (len > sizeof(fuzz_msg.body))
		len = sizeof(fuzz_msg.body);
	memcpy(fuzz_msg.body, data + 2, len);
	fuzz_msg.len = len;
	for (size_t i = 0; i < nfds; i++)
		fuzz_msg.fds[fuzz_msg.n_fds++] = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void
fuzz_each(const char *text, void *arg)
{
	(void)arg;
	if (strlen(text) >= SEQMSG_MAX_BYTES)
		abort();
	fuzz_listed++;
}

/* Runs the decoder of the message's own type (the others refuse it at
 * once) and closes what it took. */
static void
fuzz_decode(void)
{
	struct monitor_wire_create *create = malloc(sizeof(*create));
	struct monitor_hello hello;
	struct monitor_built built;
	const char *text;
	uint32_t count;
	uid_t uid;
	gid_t gid;
	int fd = -1;

	if (create != NULL && monitor_wire_create_decode(&fuzz_msg, create) == 0) {
		if (create->req.n_roots == 0 || create->req.n_roots > CORRAL_ROOTS_MAX ||
		    create->req.n_grants > CORRAL_GRANTS_MAX ||
		    create->req.n_sockets > MONITOR_SOCKETS_MAX)
			abort();
		fuzz_close(create->req.caller_fd);
	}
	free(create);
	fuzz_msg.off = 0;
	if (monitor_wire_hello_decode(&fuzz_msg, &hello) == 0)
		fuzz_close(hello.map_fd);
	fuzz_msg.off = 0;
	if (monitor_wire_built_decode(&fuzz_msg, &built) == 0) {
		monitor_built_close(&built);
		monitor_grants_free(built.creds);
	}
	fuzz_msg.off = 0;
	if (monitor_wire_text_decode(&fuzz_msg, (enum monitor_wire_type)fuzz_msg.type, &text,
	    &fd) == 0)
		fuzz_close(fd);
	fuzz_msg.off = 0;
	(void)monitor_wire_text_decode(&fuzz_msg, (enum monitor_wire_type)fuzz_msg.type, &text,
	    NULL);
	fuzz_msg.off = 0;
	(void)monitor_wire_list_decode(&fuzz_msg, (enum monitor_wire_type)fuzz_msg.type,
	    MONITOR_WIRE_LIVE_MAX, &count, fuzz_each, NULL);
	fuzz_msg.off = 0;
	(void)monitor_wire_owned_decode(&fuzz_msg, &uid, &gid);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	fuzz_fill(data, size, MONITOR_HELLO + data[0] % FUZZ_TYPES);
	fuzz_decode();
	seqmsg_clear(&fuzz_msg);
	return 0;
}
