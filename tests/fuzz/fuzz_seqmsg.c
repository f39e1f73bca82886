/* Fuzz target for common/seqmsg, the datagram codec every link between
 * corrald's processes reads with (corral-init's reports and answers in the
 * broker, the broker's requests in the monitor). The input's first byte
 * says how many descriptors go with it (0-3) and seeds which fields are
 * read; the rest is sent as one datagram on a SOCK_SEQPACKET socketpair
 * and received with seqmsg_recv(), as the daemons receive. Besides the
 * sanitizers it aborts when:
 * - a received message is not the datagram sent (type, body, descriptors),
 *   or a refused one is not one that had to be refused;
 * - a field read lies outside the body, moves the cursor by other than
 *   its size, or a text is not the NUL-ended bytes its length says;
 * - the fields read, put into a new message, are not the bytes read, or
 *   that message, sent and received, comes back different;
 * - seqmsg_get_end() disagrees with the cursor and the descriptors;
 * - a descriptor is left open or closed twice. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/seqmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FDS_MAX 3
#define FUZZ_TYPE_BYTES sizeof(uint32_t)
/* Descriptor numbers watched for leaks: a leaked one takes the lowest
 * free number, far below this. */
#define FUZZ_FD_SCAN 64

static struct seqmsg fuzz_in, fuzz_out, fuzz_again;
static int fuzz_sock[2] = { -1, -1 };
static int fuzz_null = -1;
static bool fuzz_open_before[FUZZ_FD_SCAN];    /* which were open before this input */

/* Opens what every input shares, once, and notes which descriptors are
 * open: after the input exactly those must be. Noted for each input, not
 * once: libFuzzer itself opens and closes descriptors between inputs. */
static void
fuzz_setup(void)
{
	if (fuzz_null == -1 &&
	    (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    fuzz_sock) == -1 || (fuzz_null = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1))
		abort();
	for (int fd = 0; fd < FUZZ_FD_SCAN; fd++)
		fuzz_open_before[fd] = fcntl(fd, F_GETFD) != -1;
}

/* Aborts when a descriptor of this input is still open. */
static void
fuzz_check_closed(void)
{
	for (int fd = 0; fd < FUZZ_FD_SCAN; fd++)
		if ((fcntl(fd, F_GETFD) != -1) != fuzz_open_before[fd])
			abort();
}

/* Sends LEN bytes of DATA as one datagram with NFDS copies of /dev/null
 * (closed here once sent, as a sender keeps its own); -1 when the kernel
 * refused it. */
static int
fuzz_send_raw(const uint8_t *data, size_t len, size_t nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * FUZZ_FDS_MAX)];
	} ctl;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)data, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[FUZZ_FDS_MAX];
	ssize_t n;

	for (size_t i = 0; i < nfds; i++)
		if ((fds[i] = fcntl(fuzz_null, F_DUPFD_CLOEXEC, 0)) == -1)
			abort();
	if (nfds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		ctl.align.cmsg_level = SOL_SOCKET;
		ctl.align.cmsg_type = SCM_RIGHTS;
		ctl.align.cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(&ctl.align), fds, sizeof(int) * nfds);
	}
	n = sendmsg(fuzz_sock[0], &mh, MSG_NOSIGNAL);
	for (size_t i = 0; i < nfds; i++)
		if (close(fds[i]) == -1)
			abort();
	return n == (ssize_t)len ? 0 : -1;
}

/* Checks what seqmsg_recv() made of the datagram DATA (LEN bytes, NFDS
 * descriptors): 1 and the same message, or a refusal it had to make. */
static int
fuzz_check_received(int rc, const uint8_t *data, size_t len, size_t nfds)
{
	uint32_t type = 0;

	if (len >= FUZZ_TYPE_BYTES)
		memcpy(&type, data, sizeof(type));
	if (rc == 0 && len == 0)
		return 0;
	if (rc == -1) {
		if (errno != EBADMSG || fuzz_in.n_fds != 0 ||
		    (len >= FUZZ_TYPE_BYTES && type != 0 && type <= SEQMSG_TYPE_MAX))
			abort();
		return 0;
	}
	if (rc != 1 || len < FUZZ_TYPE_BYTES || type == 0 || type > SEQMSG_TYPE_MAX ||
	    fuzz_in.type != type || fuzz_in.len != len - FUZZ_TYPE_BYTES || fuzz_in.off != 0 ||
	    memcmp(fuzz_in.body, data + FUZZ_TYPE_BYTES, fuzz_in.len) != 0 ||
	    fuzz_in.n_fds != nfds)
		abort();
	for (size_t i = 0; i < nfds; i++)
		if ((fcntl(fuzz_in.fds[i], F_GETFD) & FD_CLOEXEC) == 0)
			abort();
	return 1;
}

/* The next field kind from a small generator: 0 a number, 1 a text. */
static unsigned
fuzz_next_kind(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return (*state >> 16) % 3 == 1;
}

/* Reads one field of M into OUT as its writer would have put it; 0 while
 * fields are left, -1 at the first that is not there. */
static int
fuzz_read_field(struct seqmsg *m, unsigned kind, struct seqmsg *out)
{
	size_t before = m->off;
	const char *s;
	uint32_t v, n;

	if (kind == 0) {
		if (seqmsg_get_u32(m, &v) == -1) {
			if (errno != EBADMSG || m->off != before || m->len - before >= sizeof(v))
				abort();
			return -1;
		}
		if (m->off != before + sizeof(v) || m->off > m->len ||
		    memcmp(&v, m->body + before, sizeof(v)) != 0)
			abort();
		seqmsg_put_u32(out, v);
		return 0;
	}
	if (seqmsg_get_str(m, &s) == -1) {
		/* The cursor stays, or is past the length word when the text
		 * after it is bad: either way the message is refused. */
		if (errno != EBADMSG ||
		    (m->off != before && m->off != before + sizeof(n)) || m->off > m->len)
			abort();
		return -1;
	}
	memcpy(&n, m->body + before, sizeof(n));
	if (s != (const char *)m->body + before + sizeof(n) || strlen(s) + 1 != n ||
	    m->off != before + sizeof(n) + n || m->off > m->len)
		abort();
	seqmsg_put_str(out, s);
	return 0;
}

/* Reads M as fields whose kinds come from SEED, and checks that the same
 * fields written again are the bytes read. */
static void
fuzz_read_all(struct seqmsg *m, uint32_t seed)
{
	uint32_t state = seed;
	bool refused = false;

	seqmsg_init(&fuzz_out, m->type);
	while (m->off < m->len && !refused)
		refused = fuzz_read_field(m, fuzz_next_kind(&state), &fuzz_out) == -1;
	if (fuzz_out.overflow || fuzz_out.len > m->off ||
	    memcmp(fuzz_out.body, m->body, fuzz_out.len) != 0)
		abort();
	if (!refused && fuzz_out.len != m->len)
		abort();
	if ((seqmsg_get_end(m, m->n_fds) == 0) != (m->off == m->len) ||
	    seqmsg_get_end(m, m->n_fds + 1) == 0)
		abort();
}

/* Takes every other descriptor out of M and closes it; seqmsg_clear()
 * must close the rest. */
static void
fuzz_take_some(struct seqmsg *m)
{
	int fd;

	for (size_t i = 0; i < m->n_fds; i += 2) {
		if ((fd = seqmsg_take_fd(m, i)) < 0 || seqmsg_take_fd(m, i) != -1 ||
		    close(fd) == -1)
			abort();
	}
	if (seqmsg_take_fd(m, m->n_fds) != -1)
		abort();
}

/* Sends what was read again with seqmsg_send(), with NFDS descriptors,
 * and checks that it comes back whole. */
static void
fuzz_resend(size_t nfds)
{
	for (size_t i = 0; i < nfds; i++)
		seqmsg_put_fd(&fuzz_out, fuzz_null);
	if (seqmsg_send(fuzz_sock[0], &fuzz_out) == -1)
		abort();
	if (seqmsg_recv(fuzz_sock[1], &fuzz_again) != 1 || fuzz_again.type != fuzz_out.type ||
	    fuzz_again.len != fuzz_out.len ||
	    memcmp(fuzz_again.body, fuzz_out.body, fuzz_out.len) != 0 ||
	    fuzz_again.n_fds != nfds)
		abort();
	seqmsg_clear(&fuzz_again);
}

/* Reads and drops whatever is still queued, so no input sees another's. */
static void
fuzz_drain(void)
{
	while (seqmsg_recv(fuzz_sock[1], &fuzz_again) != -1 || errno != EAGAIN)
		seqmsg_clear(&fuzz_again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t nfds, len;
	int rc;

	if (size == 0)
		return 0;
	fuzz_setup();
	nfds = data[0] % (FUZZ_FDS_MAX + 1);
	len = size - 1;
	if (len > SEQMSG_MAX_BYTES)
		len = SEQMSG_MAX_BYTES;
	if (fuzz_send_raw(data + 1, len, nfds) == 0) {
		rc = seqmsg_recv(fuzz_sock[1], &fuzz_in);
		if (fuzz_check_received(rc, data + 1, len, nfds) == 1) {
			fuzz_read_all(&fuzz_in, data[0]);
			fuzz_take_some(&fuzz_in);
			fuzz_resend(nfds);
		}
		seqmsg_clear(&fuzz_in);
	}
	fuzz_drain();
	fuzz_check_closed();
	return 0;
}
