/* The metrics' HTTP listener. See metrics-http.h.
 *
 * A scraper sends one GET and reads one answer, so this is all of HTTP it
 * speaks: one request a connection, its head read within a deadline from
 * the accept (a byte at a time does not extend it), the answer written and
 * the connection closed. Connections are capped, and a listener out of
 * descriptors pauses instead of spinning: the port is open to every local
 * user, who must not be able to take the broker's descriptors with it. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "broker/metrics-http.h"
#include "common/log.h"
#include "common/timeutil.h"

#define METRICS_HTTP_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_HTTP_PATH "/metrics"
#define METRICS_HTTP_HEAD_MAX_BYTES 8192        /* a request head; longer is refused */
#define METRICS_HTTP_ACCEPT_PAUSE_MS 100        /* out of descriptors: accept again after */
#define METRICS_HTTP_WARN_EVERY_S 10            /* the pause is logged once in this */

struct metrics_http {
	struct evconnlistener *listener;
	struct event *accept_again;
	char *(*text)(void *arg);
	void *arg;
	unsigned nconns;
	int64_t warned_ns;
	struct metrics_http_conn *conns;
};

struct metrics_http_conn {
	struct metrics_http *h;
	struct bufferevent *bev;
	struct event *deadline;
	bool answered;                  /* close once written */
	struct metrics_http_conn *prev, *next;
};

static void
metrics_http_conn_free(struct metrics_http_conn *c)
{
	struct metrics_http *h = c->h;

	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	h->nconns--;
	if (c->deadline != NULL)
		event_free(c->deadline);
	bufferevent_free(c->bev);
	free(c);
}

/* Queues the answer STATUS with BODY (BODY_LEN bytes; HEAD: none sent)
 * and closes once it is written. */
static void
metrics_http_answer(struct metrics_http_conn *c, const char *status, const char *body,
    size_t body_len, bool head_only)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	evbuffer_add_printf(out, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n", status, METRICS_HTTP_CONTENT_TYPE, body_len);
	if (!head_only)
		evbuffer_add(out, body, body_len);
	c->answered = true;
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_enable(c->bev, EV_WRITE);
}

/* Answers the request line LINE ("GET /metrics HTTP/1.1"). */
static void
metrics_http_serve(struct metrics_http_conn *c, const char *line)
{
	static const char not_found[] = "only " METRICS_HTTP_PATH " is here\n";
	static const char bad_method[] = "only GET and HEAD\n";
	char method[8], path[256];
	bool head;
	char *text;

	if (sscanf(line, "%7s %255s HTTP/1.%*1[01]", method, path) != 2) {
		metrics_http_answer(c, "400 Bad Request", "", 0, false);
		return;
	}
	head = strcmp(method, "HEAD") == 0;
	if (!head && strcmp(method, "GET") != 0) {
		metrics_http_answer(c, "405 Method Not Allowed", bad_method, sizeof(bad_method) - 1,
		    false);
		return;
	}
	/* The query, if any, does not choose anything. */
	path[strcspn(path, "?")] = '\0';
	if (strcmp(path, METRICS_HTTP_PATH) != 0) {
		metrics_http_answer(c, "404 Not Found", not_found, sizeof(not_found) - 1, head);
		return;
	}
	if ((text = c->h->text(c->h->arg)) == NULL) {
		metrics_http_answer(c, "503 Service Unavailable", "", 0, head);
		return;
	}
	metrics_http_answer(c, "200 OK", text, strlen(text), head);
	free(text);
}

static void
metrics_http_on_read(struct bufferevent *bev, void *arg)
{
	struct metrics_http_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr end;
	char *line;

	if (c->answered)
		return;
	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos == -1) {
		if (evbuffer_get_length(in) > METRICS_HTTP_HEAD_MAX_BYTES)
			metrics_http_answer(c, "431 Request Header Fields Too Large", "", 0, false);
		return;
	}
	if ((line = evbuffer_readln(in, NULL, EVBUFFER_EOL_CRLF_STRICT)) == NULL) {
		metrics_http_conn_free(c);
		return;
	}
	metrics_http_serve(c, line);
	free(line);
}

static void
metrics_http_on_write(struct bufferevent *bev, void *arg)
{
	struct metrics_http_conn *c = arg;

	if (c->answered)
		metrics_http_conn_free(c);
}

static void
metrics_http_on_event(struct bufferevent *bev, short what, void *arg)
{
	metrics_http_conn_free(arg);
}

/* The head did not come whole in time: the connection goes. */
static void
metrics_http_on_deadline(evutil_socket_t fd, short what, void *arg)
{
	metrics_http_conn_free(arg);
}

static void
metrics_http_on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int len, void *arg)
{
	struct metrics_http *h = arg;
	struct timeval limit = { METRICS_HTTP_DEADLINE_S, 0 };
	struct metrics_http_conn *c;

	if (h->nconns >= METRICS_HTTP_CONNECTIONS_MAX || (c = calloc(1, sizeof(*c))) == NULL) {
		evutil_closesocket(fd);
		return;
	}
	c->h = h;
	if ((c->bev = bufferevent_socket_new(evconnlistener_get_base(l), fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    (c->deadline = evtimer_new(evconnlistener_get_base(l), metrics_http_on_deadline,
	    c)) == NULL) {
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		else
			evutil_closesocket(fd);
		free(c);
		return;
	}
	h->nconns++;
	c->next = h->conns;
	if (h->conns != NULL)
		h->conns->prev = c;
	h->conns = c;
	bufferevent_setwatermark(c->bev, EV_READ, 0, METRICS_HTTP_HEAD_MAX_BYTES + 1);
	bufferevent_setcb(c->bev, metrics_http_on_read, metrics_http_on_write,
	    metrics_http_on_event, c);
	bufferevent_enable(c->bev, EV_READ);
	evtimer_add(c->deadline, &limit);
}

static void
metrics_http_on_accept_again(evutil_socket_t fd, short what, void *arg)
{
	struct metrics_http *h = arg;

	evconnlistener_enable(h->listener);
}

/* Out of descriptors (or another error): pause rather than spin. */
static void
metrics_http_on_accept_error(struct evconnlistener *l, void *arg)
{
	struct metrics_http *h = arg;
	struct timeval pause = { 0, METRICS_HTTP_ACCEPT_PAUSE_MS * 1000 };
	int err = EVUTIL_SOCKET_ERROR();
	int64_t now = time_mono_ns();

	if (h->warned_ns == 0 || now - h->warned_ns > (int64_t)METRICS_HTTP_WARN_EVERY_S *
	    1000000000) {
		log_warnx("metrics: accept: %s; pausing for %d ms", strerror(err),
		    METRICS_HTTP_ACCEPT_PAUSE_MS);
		h->warned_ns = now;
	}
	evconnlistener_disable(l);
	evtimer_add(h->accept_again, &pause);
}

struct metrics_http *
metrics_http_start(struct event_base *base, const char *listen, char *(*text)(void *arg),
    void *arg)
{
	struct sockaddr_storage ss;
	int sslen = (int)sizeof(ss);
	struct metrics_http *h;

	if (evutil_parse_sockaddr_port(listen, (struct sockaddr *)&ss, &sslen) != 0 ||
	    (h = calloc(1, sizeof(*h))) == NULL) {
		log_error("metrics: cannot listen on %s", listen);
		return NULL;
	}
	h->text = text;
	h->arg = arg;
	h->accept_again = evtimer_new(base, metrics_http_on_accept_again, h);
	h->listener = evconnlistener_new_bind(base, metrics_http_on_accept, h,
	    LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
	    (struct sockaddr *)&ss, sslen);
	if (h->listener == NULL || h->accept_again == NULL) {
		log_error("metrics: cannot listen on %s: %s", listen, strerror(errno));
		metrics_http_stop(h);
		return NULL;
	}
	evconnlistener_set_error_cb(h->listener, metrics_http_on_accept_error);
	log_info("metrics at http://%s" METRICS_HTTP_PATH, listen);
	return h;
}

void
metrics_http_stop(struct metrics_http *h)
{
	if (h == NULL)
		return;
	while (h->conns != NULL)
		metrics_http_conn_free(h->conns);
	if (h->listener != NULL)
		evconnlistener_free(h->listener);
	if (h->accept_again != NULL)
		event_free(h->accept_again);
	free(h);
}
