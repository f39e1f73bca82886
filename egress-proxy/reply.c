/* What a client reads when the proxy refuses or fails its request. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/timeutil.h"
#include "egress-proxy/denials.h"
#include "egress-proxy/proxy-int.h"
#include "policy/suggest.h"

#define REPLY_INFO_HEAD_BYTES 256

static const char *
reply_status_text(int status)
{
	switch (status) {
	case 200: return "OK";
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

/* Writes a response with BODY (JSON, BODY_LEN bytes, sent only when SEND:
 * a HEAD gets the head alone) and Connection: close into OUT. */
static int
reply_head_body(char *out, size_t size, int status, const char *body, size_t body_len,
    bool send)
{
	int n = snprintf(out, size, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n%s",
	    status, reply_status_text(status), body_len, send ? body : "");

	return n < 0 || (size_t)n >= size ? -1 : n;
}

static int
reply_with_body(char *out, size_t size, int status, const char *body, size_t body_len)
{
	return reply_head_body(out, size, status, body, body_len, true);
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

/* One suggestion: the endpoint, the binary, how many refusals it answers,
 * what else it lets through, the command that applies it. */
static void
reply_suggestion(struct json *j, const char *sandbox, const struct suggestion *g)
{
	char endpoint[sizeof(g->host) + 8], command[sizeof(endpoint) + sizeof(g->binary) + 96];

	snprintf(endpoint, sizeof(endpoint), "%s:%u", g->host, (unsigned)g->port);
	snprintf(command, sizeof(command), "corral policy update %s --add-endpoint %s%s%s",
	    sandbox, endpoint, g->binary[0] != '\0' ? " --binary " : "", g->binary);
	json_object_begin(j);
	json_kv_string(j, "add_endpoint", endpoint);
	json_kv_string(j, "binary", g->binary[0] != '\0' ? g->binary : NULL);
	json_kv_uint(j, "denials", g->denials);
	json_kv_string(j, "risk", g->risk);
	json_kv_string(j, "command", command);
	json_object_end(j);
}

/* The suggestions for the N denials D, into J's array. */
static void
reply_suggestions(struct json *j, const char *sandbox, const struct denial *d, size_t n)
{
	struct suggest_denial *in = calloc(n > 0 ? n : 1, sizeof(*in));
	struct suggestion *out = calloc(n > 0 ? n : 1, sizeof(*out));
	size_t made = 0;

	for (size_t i = 0; in != NULL && i < n; i++)
		in[i] = (struct suggest_denial){ d[i].host, d[i].port, d[i].binary, d[i].reason,
		    d[i].count };
	if (in != NULL && out != NULL)
		made = suggest_make(in, n, out, n);
	for (size_t i = 0; i < made; i++)
		reply_suggestion(j, sandbox, &out[i]);
	free(in);
	free(out);
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
	reply_suggestions(j, sandbox, d, n);
	json_array_end(j);
	json_object_end(j);
	if ((text = json_text(j, &len)) != NULL)
		w = reply_head_body(out, size, 200, text, len, body);
	json_free(j);
	return w;
}
