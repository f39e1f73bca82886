/* What a client reads when the proxy refuses or fails its request. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/timeutil.h"
#include "egress-proxy/denials.h"
#include "egress-proxy/proxy-int.h"

#define REPLY_INFO_HEAD_BYTES 256

static const char *
reply_status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 405: return "Method Not Allowed";
	case 411: return "Length Required";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/* Writes a response with BODY (JSON) and Connection: close into OUT. */
static int
reply_with_body(char *out, size_t size, int status, const char *body, size_t body_len)
{
	int n = snprintf(out, size, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", status,
	    reply_status_text(status), body_len, body);

	return n < 0 || (size_t)n >= size ? -1 : n;
}

int
reply_forbidden(char *out, size_t size, const char *host, int port, const char *binary,
    const char *reason, const char *sandbox)
{
	char hint[512];
	struct json *j = json_new(REPLY_MAX_BYTES / 2);
	const char *body;
	size_t len;
	int n = -1;

	if (j == NULL)
		return -1;
	/* Say what would allow it: an agent reads this, and so does its user. */
	snprintf(hint, sizeof(hint), "%s:%d refused for sandbox %s (%s); to allow it: "
	    "corral policy update %s --add-endpoint %s:%d", host, port, sandbox, reason,
	    sandbox, host, port);
	json_object_begin(j);
	json_kv_string(j, "error", "policy_denied");
	json_kv_string(j, "host", host);
	json_kv_int(j, "port", port);
	json_kv_string(j, "binary", binary);
	json_kv_string(j, "reason", reason);
	json_kv_string(j, "message", hint);
	json_object_end(j);
	if ((body = json_text(j, &len)) != NULL)
		n = reply_with_body(out, size, 403, body, len);
	json_free(j);
	return n;
}

int
reply_error(char *out, size_t size, int status, const char *reason)
{
	struct json *j = json_new(REPLY_MAX_BYTES / 2);
	const char *body;
	size_t len;
	int n = -1;

	if (j == NULL)
		return -1;
	json_object_begin(j);
	json_kv_string(j, "error", status == 502 || status == 504 ? "upstream_failed" :
	    status == 503 ? "unavailable" : "bad_request");
	json_kv_string(j, "reason", reason);
	json_object_end(j);
	if ((body = json_text(j, &len)) != NULL)
		n = reply_with_body(out, size, status, body, len);
	json_free(j);
	return n;
}

/* Whether refusal D is one a policy entry for its host, port and binary
 * would have allowed: a name refused for itself or for the binary that
 * asked, not an address, a Unix socket or a packet the fence rejected. */
static bool
reply_suggestible(const struct denial *d)
{
	return d->port != 0 && d->host[0] != '\0' && (strcmp(d->reason, "host_not_allowed") == 0 ||
	    strcmp(d->reason, "binary_not_allowed") == 0);
}

/* Whether D's host, port and binary are those of a suggestible refusal
 * before it in the N at FIRST (its suggestion is written once). */
static bool
reply_seen(const struct denial *first, const struct denial *d)
{
	for (const struct denial *e = first; e < d; e++)
		if (reply_suggestible(e) && e->port == d->port && strcmp(e->host, d->host) == 0 &&
		    strcmp(e->binary, d->binary) == 0)
			return true;
	return false;
}

/* One suggestion: the endpoint, the binary, how many refusals it answers,
 * the command that applies it. */
static void
reply_suggestion(struct json *j, const char *sandbox, const struct denial *d, size_t n,
    const struct denial *all)
{
	char endpoint[DENIAL_TEXT_MAX_BYTES + 8], command[3 * DENIAL_TEXT_MAX_BYTES + 96];
	uint64_t answers = 0;

	for (size_t i = 0; i < n; i++)
		if (reply_suggestible(&all[i]) && all[i].port == d->port &&
		    strcmp(all[i].host, d->host) == 0 && strcmp(all[i].binary, d->binary) == 0)
			answers += all[i].count;
	snprintf(endpoint, sizeof(endpoint), "%s:%u", d->host, (unsigned)d->port);
	snprintf(command, sizeof(command), "corral policy update %s --add-endpoint %s%s%s",
	    sandbox, endpoint, d->binary[0] != '\0' ? " --binary " : "", d->binary);
	json_object_begin(j);
	json_kv_string(j, "add_endpoint", endpoint);
	json_kv_string(j, "binary", d->binary[0] != '\0' ? d->binary : NULL);
	json_kv_uint(j, "denials", answers);
	json_kv_string(j, "command", command);
	json_object_end(j);
}

int
reply_info(char *out, size_t size, const char *sandbox, const struct denial *d, size_t n,
    bool body)
{
	/* Room for the head before the body. */
	struct json *j = json_new(size > REPLY_INFO_HEAD_BYTES ? size - REPLY_INFO_HEAD_BYTES : size);
	char ts[RFC3339_US_BYTES];
	const char *text;
	size_t len;
	int w = -1;

	if (j == NULL)
		return -1;
	json_object_begin(j);
	json_kv_string(j, "sandbox", sandbox);
	json_key(j, "denials");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		time_format_rfc3339_us(d[i].ts_us, ts);
		json_object_begin(j);
		json_kv_string(j, "ts", ts);
		json_kv_string(j, "host", d[i].host);
		json_kv_uint(j, "port", d[i].port);
		json_kv_string(j, "binary", d[i].binary[0] != '\0' ? d[i].binary : NULL);
		json_kv_string(j, "reason", d[i].reason);
		json_kv_uint(j, "count", d[i].count);
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "suggestions");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		if (reply_suggestible(&d[i]) && !reply_seen(d, &d[i]))
			reply_suggestion(j, sandbox, &d[i], n, d);
	json_array_end(j);
	json_object_end(j);
	if ((text = json_text(j, &len)) != NULL) {
		w = snprintf(out, size, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n%s",
		    len, body ? text : "");
		if (w < 0 || (size_t)w >= size)
			w = -1;
	}
	json_free(j);
	return w;
}
