/* The file API (DESIGN sections 4 and 6): not served yet; refused with a
 * clear error until it lands. */
#include "config.h"

#include "broker/api.h"

void
api_fs(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    struct api_pending *p)
{
	Corral__Response resp = CORRAL__RESPONSE__INIT;

	api_error(&resp, WIRE_ERR_UNAVAILABLE, "the file API is not served by this corrald yet");
	api_pending_reply(p, &resp);
	api_response_clear(&resp);
}
