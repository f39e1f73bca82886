/* The metrics' HTTP listener. See metrics-http.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "broker/metrics-http.h"
#include "common/log.h"

#define METRICS_HTTP_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_HTTP_HOST_MAX_BYTES 64  /* "::1" and the like */
#define METRICS_HTTP_PATH "/metrics"
#define METRICS_HTTP_TIMEOUT_S 10       /* a scraper that sends nothing is let go */

struct metrics_http {
	struct evhttp *http;
	char *(*text)(void *arg);
	void *arg;
};

/* GET /metrics; any other path is 404 (evhttp refuses other methods). */
static void
metrics_http_on_request(struct evhttp_request *req, void *arg)
{
	struct metrics_http *h = arg;
	const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	struct evbuffer *body;
	char *text;

	if (path == NULL || strcmp(path, METRICS_HTTP_PATH) != 0) {
		evhttp_send_error(req, HTTP_NOTFOUND, "only " METRICS_HTTP_PATH " is here");
		return;
	}
	if ((text = h->text(h->arg)) == NULL || (body = evbuffer_new()) == NULL) {
		free(text);
		evhttp_send_error(req, HTTP_SERVUNAVAIL, "out of memory");
		return;
	}
	evbuffer_add(body, text, strlen(text));
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
	    METRICS_HTTP_CONTENT_TYPE);
	evhttp_send_reply(req, HTTP_OK, "OK", body);
	evbuffer_free(body);
	free(text);
}

struct metrics_http *
metrics_http_start(struct event_base *base, const char *listen, char *(*text)(void *arg),
    void *arg)
{
	char host[METRICS_HTTP_HOST_MAX_BYTES];
	const char *colon = strrchr(listen, ':');
	struct metrics_http *h;
	size_t n;

	if (colon == NULL || (n = (size_t)(colon - listen)) >= sizeof(host) ||
	    (h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	/* evhttp takes an IPv6 address without its brackets. */
	if (listen[0] == '[' && n >= 2)
		snprintf(host, sizeof(host), "%.*s", (int)(n - 2), listen + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)n, listen);
	h->text = text;
	h->arg = arg;
	if ((h->http = evhttp_new(base)) == NULL) {
		free(h);
		return NULL;
	}
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_timeout(h->http, METRICS_HTTP_TIMEOUT_S);
	evhttp_set_gencb(h->http, metrics_http_on_request, h);
	if (evhttp_bind_socket(h->http, host, (uint16_t)strtoul(colon + 1, NULL, 10)) != 0) {
		log_error("metrics: cannot listen on %s", listen);
		metrics_http_stop(h);
		return NULL;
	}
	log_info("metrics at http://%s" METRICS_HTTP_PATH, listen);
	return h;
}

void
metrics_http_stop(struct metrics_http *h)
{
	if (h == NULL)
		return;
	evhttp_free(h->http);
	free(h);
}
