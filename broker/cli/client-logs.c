/* The client side of the logs stream (client-logs.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "broker/cli/client-logs.h"
#include "broker/cli/client.h"
#include "common/frame.h"

#define CLIENT_LOGS_CHUNK_BYTES (64 * 1024)     /* one recv */
#define CLIENT_LOGS_GOING_ON (-1)               /* a frame that did not end the stream */

/* Acts on one Response frame: a client_logs_end, or CLIENT_LOGS_GOING_ON. */
static int
client_logs_frame(const uint8_t *payload, size_t len, client_logs_record_fn record, void *arg,
    char *why, size_t why_size)
{
	const char *bad = NULL;
	Corral__Response *resp = wire_response_unpack(payload, len, &bad);
	int end = CLIENT_LOGS_GOING_ON;

	if (resp == NULL) {
		snprintf(why, why_size, "corrald sent a frame that is not a response: %s",
		    bad != NULL ? bad : "unreadable");
		return CLIENT_LOGS_LOST;
	}
	if (resp->response_case == CORRAL__RESPONSE__RESPONSE_ERROR) {
		snprintf(why, why_size, "%s", resp->error->message);
		end = CLIENT_LOGS_REFUSED;
	} else if (resp->response_case != CORRAL__RESPONSE__RESPONSE_LOGS) {
		snprintf(why, why_size, "corrald answered something else than logs");
		end = CLIENT_LOGS_LOST;
	} else {
		for (size_t i = 0; i < resp->logs->n_records && end == CLIENT_LOGS_GOING_ON; i++)
			if (record(arg, resp->logs->records[i], strlen(resp->logs->records[i])) != 0)
				end = CLIENT_LOGS_STOPPED;
		if (end == CLIENT_LOGS_GOING_ON && resp->logs->end)
			end = CLIENT_LOGS_DONE;
	}
	corral__response__free_unpacked(resp, NULL);
	return end;
}

/* Waits for bytes on FD (forever when FOLLOW) and reads them into CHUNK:
 * the count, or -1 with WHY. */
static ssize_t
client_logs_recv(int fd, bool follow, uint8_t *chunk, char *why, size_t why_size)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ready;
	ssize_t n;

	for (;;) {
		ready = poll(&pfd, 1, follow ? -1 : CLIENT_TIMEOUT_MS);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready == 0) {
			snprintf(why, why_size, "corrald sent nothing for %d s", CLIENT_TIMEOUT_MS / 1000);
			return -1;
		}
		n = ready < 0 ? -1 : recv(fd, chunk, CLIENT_LOGS_CHUNK_BYTES, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			return n;
		snprintf(why, why_size, "connection to corrald lost%s%s", n < 0 ? ": " : "",
		    n < 0 ? strerror(errno) : "");
		return -1;
	}
}

/* Feeds N bytes at AT to DEC, handing out each whole frame: a
 * client_logs_end, or CLIENT_LOGS_GOING_ON. */
static int
client_logs_feed(struct frame_decoder *dec, const uint8_t *at, size_t n,
    client_logs_record_fn record, void *arg, char *why, size_t why_size)
{
	int end = CLIENT_LOGS_GOING_ON;
	const uint8_t *payload;
	size_t used, plen;
	enum frame_status st;

	while (n > 0 && end == CLIENT_LOGS_GOING_ON) {
		st = frame_decoder_feed(dec, at, n, &used);
		at += used;
		n -= used;
		if (st == FRAME_NEED_MORE)
			continue;
		if (st != FRAME_READY) {
			snprintf(why, why_size, "corrald sent a bad frame: %s", frame_decoder_error(dec));
			return CLIENT_LOGS_LOST;
		}
		payload = frame_decoder_payload(dec, &plen);
		end = client_logs_frame(payload, plen, record, arg, why, why_size);
		frame_decoder_next(dec);
	}
	return end;
}

enum client_logs_end
client_logs(int fd, const Corral__Request *req, client_logs_record_fn record, void *arg,
    char *why, size_t why_size)
{
	struct frame_decoder *dec = frame_decoder_new();
	uint8_t *frame, *chunk = malloc(CLIENT_LOGS_CHUNK_BYTES);
	bool follow = req->logs != NULL && req->logs->follow;
	int end = CLIENT_LOGS_LOST;
	size_t len;
	ssize_t n;

	snprintf(why, why_size, "out of memory");
	if (dec == NULL || chunk == NULL || (frame = wire_pack(&req->base, &len)) == NULL)
		goto out;
	/* A send that fails is not the end yet: a daemon that refused the
	 * connection at once wrote why before it closed, and that is read next. */
	(void)client_send_all(fd, frame, len);
	free(frame);
	for (end = CLIENT_LOGS_GOING_ON; end == CLIENT_LOGS_GOING_ON;) {
		if ((n = client_logs_recv(fd, follow, chunk, why, why_size)) < 0)
			end = CLIENT_LOGS_LOST;
		else
			end = client_logs_feed(dec, chunk, (size_t)n, record, arg, why, why_size);
	}
out:
	free(chunk);
	frame_decoder_free(dec);
	return (enum client_logs_end)end;
}
