/* Shell runs (DESIGN section 5): not served yet; the requests are refused
 * with a clear error until the persistent shells land. */
#include "config.h"

#include "broker/api.h"

void
api_run_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames)
{
	api_stream_refuse(bev, frames, WIRE_ERR_UNAVAILABLE,
	    "shell runs are not served by this corrald yet");
}

static int
api_run_unavailable(Corral__Response *resp)
{
	api_error(resp, WIRE_ERR_UNAVAILABLE, "shell runs are not served by this corrald yet");
	return 0;
}

int
api_run_ack(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	return api_run_unavailable(resp);
}

int
api_run_interrupt(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp)
{
	return api_run_unavailable(resp);
}

int
api_run_list(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	return api_run_unavailable(resp);
}
