/* The metrics' HTTP listener: GET /metrics on a loopback address, the
 * Prometheus text format, in the broker's loop: one request a connection,
 * at most METRICS_HTTP_CONNECTIONS_MAX at once, each head whole within
 * METRICS_HTTP_DEADLINE_S of its accept. */
#ifndef CORRAL_METRICS_HTTP_H
#define CORRAL_METRICS_HTTP_H

#define METRICS_HTTP_CONNECTIONS_MAX 16  /* corrald's descriptor budget counts them */
#define METRICS_HTTP_DEADLINE_S 5

struct event_base;
struct metrics_http;

/* Listens on LISTEN ("127.0.0.1:9464", "[::1]:9464": the configuration's
 * reader kept it to loopback) and answers GET /metrics with TEXT(ARG)
 * (malloc'd, freed here). NULL (logged) when it cannot listen. */
struct metrics_http *metrics_http_start(struct event_base *base, const char *listen,
    char *(*text)(void *arg), void *arg);
/* Closes the listener and its connections; NULL is fine. */
void metrics_http_stop(struct metrics_http *h);

#endif
