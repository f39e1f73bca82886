/* The control socket's status request. */
#include "config.h"

#include <stdlib.h>

#include "broker/api.h"
#include "broker/daemon.h"
#include "broker/kernel.h"
#include "broker/privsep.h"
#include "broker/sandbox.h"
#include "common/xmalloc.h"

/* "Firewall: ok", or what in the host's firewall may stop the fence. */
static char *
api_status_firewall(struct daemon *d)
{
	char *line = NULL, *err = NULL, *out;

	if (!d->sandboxes_ok)
		xasprintf(&out, "Firewall: unknown (sandboxes unavailable: %s)", d->monitor_why);
	else if (privsep_firewall(d->privsep, &line, &err) == -1)
		xasprintf(&out, "Firewall: unknown (%s)", err != NULL ? err : "no answer");
	else
		xasprintf(&out, "Firewall: %s", line);
	free(line);
	free(err);
	return out;
}

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
	r->layers = xcalloc(KERNEL_LAYERS + 1, sizeof(*r->layers));
	for (size_t i = 0; i < KERNEL_LAYERS; i++)
		r->layers[r->n_layers++] = xstrdup(lines[i]);
	r->layers[r->n_layers++] = api_status_firewall(d);
	resp->response_case = CORRAL__RESPONSE__RESPONSE_STATUS;
	resp->status = r;
	return 0;
}
