/* The client side of shell runs (client-run.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/cli/client-run.h"
#include "broker/cli/client.h"
#include "common/frame.h"

#define CLIENT_RUN_CHUNK_BYTES (64 * 1024)      /* one recv */

/* Acts on one Response frame; -1 while the run goes on. */
static int
client_run_frame(const uint8_t *payload, size_t len, client_run_output_fn output, void *arg,
    Corral__RunResult **result, struct client_run_error *err)
{
	const char *bad = NULL;
	Corral__Response *resp = wire_response_unpack(payload, len, &bad);
	int end = -1;

	if (resp == NULL) {
		snprintf(err->why, sizeof(err->why), "corrald sent a frame that is not a response: %s",
		    bad != NULL ? bad : "unreadable");
		return CLIENT_RUN_LOST;
	}
	if (resp->response_case == CORRAL__RESPONSE__RESPONSE_ERROR) {
		snprintf(err->why, sizeof(err->why), "%s", resp->error->message);
		snprintf(err->code, sizeof(err->code), "%s", resp->error->code);
		end = CLIENT_RUN_REFUSED;
	} else if (resp->response_case != CORRAL__RESPONSE__RESPONSE_RUN_EVENT) {
		snprintf(err->why, sizeof(err->why), "corrald answered something else than a run event");
		end = CLIENT_RUN_LOST;
	} else if (resp->run_event->event_case == CORRAL__RUN_EVENT__EVENT_RESULT) {
		*result = resp->run_event->result;
		resp->run_event->result = NULL;
		resp->run_event->event_case = CORRAL__RUN_EVENT__EVENT__NOT_SET;
		end = CLIENT_RUN_RESULT;
	} else if (resp->run_event->event_case == CORRAL__RUN_EVENT__EVENT_OUTPUT &&
	    output != NULL && output(arg, resp->run_event->output->offset,
	    resp->run_event->output->data.data, resp->run_event->output->data.len) != 0) {
		end = CLIENT_RUN_STOPPED;
	}
	corral__response__free_unpacked(resp, NULL);
	return end;
}

enum client_run_end
client_run(int fd, const Corral__Request *req, client_run_output_fn output, void *arg,
    Corral__RunResult **result, struct client_run_error *err)
{
	struct frame_decoder *dec = frame_decoder_new();
	uint8_t *frame, *chunk = malloc(CLIENT_RUN_CHUNK_BYTES);
	const uint8_t *payload, *at;
	int end = CLIENT_RUN_LOST;
	size_t len, used, plen;
	enum frame_status st;
	ssize_t n;

	*result = NULL;
	*err = (struct client_run_error){ .code = "unavailable" };
	snprintf(err->why, sizeof(err->why), "connection to corrald lost");
	if (dec == NULL || chunk == NULL || (frame = wire_pack(&req->base, &len)) == NULL)
		goto out;
	n = client_send_all(fd, frame, len);
	free(frame);
	if (n == -1)
		goto out;
	for (end = -1; end == -1;) {
		n = recv(fd, chunk, CLIENT_RUN_CHUNK_BYTES, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			end = CLIENT_RUN_LOST;
			break;
		}
		for (at = chunk; n > 0 && end == -1; at += used, n -= (ssize_t)used) {
			st = frame_decoder_feed(dec, at, (size_t)n, &used);
			if (st == FRAME_NEED_MORE)
				continue;
			if (st != FRAME_READY) {
				snprintf(err->why, sizeof(err->why), "corrald sent a bad frame: %s",
				    frame_decoder_error(dec));
				end = CLIENT_RUN_LOST;
				break;
			}
			payload = frame_decoder_payload(dec, &plen);
			end = client_run_frame(payload, plen, output, arg, result, err);
			frame_decoder_next(dec);
		}
	}
out:
	free(chunk);
	frame_decoder_free(dec);
	return (enum client_run_end)end;
}
