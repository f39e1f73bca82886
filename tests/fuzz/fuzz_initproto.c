/* Fuzz target for the exec channel's requests (common/initproto.h) as
 * corral-init decodes them: SPEC from the monitor, EXEC and FSOP from the
 * broker (a subverted broker may send anything; the UNIX report, which the
 * broker decodes, has fuzz_initproto_unix). The input's first byte picks
 * the message (SPEC, EXEC, FSOP, or a type none of them takes), its second
 * how many descriptors come with it (0-40, as SCM_RIGHTS would bring
 * them); the rest is the body. Besides the sanitizers it aborts when:
 * - a decoded message breaks its header's bounds (counts, flags, op,
 *   socket names, NULL-ended argv and envp);
 * - encoding what was decoded does not give back the same body and the
 *   same descriptors in the same order (every decoder is exact);
 * - a descriptor taken is not one that came, or one is left open or
 *   closed twice. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsproto.h"
#include "common/initproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FDS_MAX SEQMSG_FDS_MAX
#define FUZZ_KINDS 4

static struct seqmsg fuzz_msg, fuzz_out;
static int fuzz_fds[FUZZ_FDS_MAX];     /* what came with the message, in order */
static size_t fuzz_nfds;
static int fuzz_null = -1;

/* Fills fuzz_msg from the input; the descriptors are copies of /dev/null. */
static void
fuzz_fill(const uint8_t *data, size_t size, uint32_t type)
{
	size_t len = size > 2 ? size - 2 : 0;

	if (fuzz_null == -1 && (fuzz_null = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		abort();
	seqmsg_init(&fuzz_msg, type);
	if (len > sizeof(fuzz_msg.body))
		len = sizeof(fuzz_msg.body);
	memcpy(fuzz_msg.body, data + 2, len);
	fuzz_msg.len = len;
	fuzz_nfds = size > 1 ? data[1] % (FUZZ_FDS_MAX + 1) : 0;
	for (size_t i = 0; i < fuzz_nfds; i++) {
		if ((fuzz_fds[i] = fcntl(fuzz_null, F_DUPFD_CLOEXEC, 0)) == -1)
			abort();
		fuzz_msg.fds[fuzz_msg.n_fds++] = fuzz_fds[i];
	}
}

/* Aborts unless the message encoded from what was decoded is the one that
 * came: same type, body and descriptors. */
static void
fuzz_check_same(void)
{
	if (fuzz_out.overflow || fuzz_out.type != fuzz_msg.type || fuzz_out.len != fuzz_msg.len ||
	    memcmp(fuzz_out.body, fuzz_msg.body, fuzz_msg.len) != 0 ||
	    fuzz_out.n_fds != fuzz_nfds ||
	    memcmp(fuzz_out.fds, fuzz_fds, fuzz_nfds * sizeof(int)) != 0)
		abort();
}

/* Closes FD, which the decoder took: it must be open, and closed once. */
static void
fuzz_close_taken(int fd)
{
	if (fd != -1 && close(fd) == -1)
		abort();
}

static bool
fuzz_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= INITPROTO_SOCKET_NAME_MAX_BYTES && name[0] != '.' &&
	    strchr(name, '/') == NULL;
}

static void
fuzz_spec(void)
{
	struct initproto_spec s;

	if (initproto_spec_decode(&fuzz_msg, &s) == -1)
		return;
	if (s.n_roots > CORRAL_ROOTS_MAX || s.n_sockets > INITPROTO_SOCKETS_MAX ||
	    s.tmp_mib == 0 || s.n_roots + 1 + s.n_sockets != fuzz_nfds)
		abort();
	for (size_t i = 0; i < s.n_sockets; i++)
		if (!fuzz_name_ok(s.socket_name[i]))
			abort();
	initproto_spec_encode(&fuzz_out, &s);
	fuzz_check_same();
	for (size_t i = 0; i < s.n_roots; i++)
		fuzz_close_taken(s.root_fd[i]);
	fuzz_close_taken(s.home_fd);
	for (size_t i = 0; i < s.n_sockets; i++)
		fuzz_close_taken(s.socket_fd[i]);
}

static void
fuzz_exec(void)
{
	/* Two arrays of a thousand pointers: too big for a fuzzer's stack frame. */
	static struct initproto_exec e;
	size_t want;

	if (initproto_exec_decode(&fuzz_msg, &e) == -1)
		return;
	want = (e.tty ? 0 : 3) + (e.extra_fd != -1 ? 1 : 0);
	if (e.argc == 0 || e.argc > INITPROTO_ARGS_MAX || e.envc > INITPROTO_ENV_MAX ||
	    e.argv[e.argc] != NULL || e.envp[e.envc] != NULL || want != fuzz_nfds ||
	    (e.tty && (e.stdio[0] != -1 || e.stdio[1] != -1 || e.stdio[2] != -1)))
		abort();
	initproto_exec_encode(&fuzz_out, &e);
	fuzz_check_same();
	for (size_t i = 0; i < 3; i++)
		fuzz_close_taken(e.stdio[i]);
	fuzz_close_taken(e.extra_fd);
}

static void
fuzz_fsop(void)
{
	struct initproto_fsop f;

	if (initproto_fsop_decode(&fuzz_msg, &f) == -1)
		return;
	if (f.op == 0 || f.op > FSPROTO_OP_MAX || f.out_fd == -1 ||
	    fuzz_nfds != (f.in_fd != -1 ? 2u : 1u))
		abort();
	initproto_fsop_encode(&fuzz_out, &f);
	fuzz_check_same();
	fuzz_close_taken(f.out_fd);
	fuzz_close_taken(f.in_fd);
}

/* Each decoder refuses a message of another type, taking nothing. */
static void
fuzz_wrong_types(void)
{
	static struct initproto_exec e;
	struct initproto_spec s;
	struct initproto_fsop f;

	if ((fuzz_msg.type != INITPROTO_SPEC && initproto_spec_decode(&fuzz_msg, &s) == 0) ||
	    (fuzz_msg.type != INITPROTO_EXEC && initproto_exec_decode(&fuzz_msg, &e) == 0) ||
	    (fuzz_msg.type != INITPROTO_FSOP && initproto_fsop_decode(&fuzz_msg, &f) == 0) ||
	    errno != EBADMSG)
		abort();
	for (size_t i = 0; i < fuzz_nfds; i++)
		if (fuzz_msg.fds[i] != fuzz_fds[i])
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t types[FUZZ_KINDS] = { INITPROTO_SPEC, INITPROTO_EXEC,
	    INITPROTO_FSOP, INITPROTO_READY };

	if (size == 0)
		return 0;
	fuzz_fill(data, size, types[data[0] % FUZZ_KINDS]);
	if (fuzz_msg.type == INITPROTO_SPEC)
		fuzz_spec();
	else if (fuzz_msg.type == INITPROTO_EXEC)
		fuzz_exec();
	else if (fuzz_msg.type == INITPROTO_FSOP)
		fuzz_fsop();
	fuzz_msg.off = 0;
	if (fuzz_msg.type == INITPROTO_READY)
		fuzz_wrong_types();
	seqmsg_clear(&fuzz_msg);
	/* Whatever came is closed now, by the decoder's taker or by the clear. */
	for (size_t i = 0; i < fuzz_nfds; i++)
		if (fcntl(fuzz_fds[i], F_GETFD) != -1)
			abort();
	return 0;
}
