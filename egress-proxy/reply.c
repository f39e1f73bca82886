/* What a client reads when the proxy refuses or fails its request. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "egress-proxy/proxy-int.h"

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
