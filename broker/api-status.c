/* The control socket's status request. */
#include "config.h"

#include "broker/api.h"
#include "broker/daemon.h"
#include "broker/kernel.h"
#include "broker/sandbox.h"
#include "common/xmalloc.h"

int
api_status(struct daemon *d, const struct sandbox_caller *caller, const Corral__Request *req,
    Corral__Response *resp)
{
	char lines[KERNEL_LAYERS][KERNEL_LAYER_LINE_MAX_BYTES];
	Corral__StatusReply *r = xmalloc(sizeof(*r));

	corral__status_reply__init(r);
	r->version = xstrdup(PACKAGE_VERSION);
	r->sandboxes = sandbox_count(d);
	kernel_layers(lines);
	r->n_layers = KERNEL_LAYERS;
	r->layers = xcalloc(KERNEL_LAYERS, sizeof(*r->layers));
	for (size_t i = 0; i < KERNEL_LAYERS; i++)
		r->layers[i] = xstrdup(lines[i]);
	resp->response_case = CORRAL__RESPONSE__RESPONSE_STATUS;
	resp->status = r;
	return 0;
}
