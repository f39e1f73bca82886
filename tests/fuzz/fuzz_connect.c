/* Fuzz target for the proxy request head parser (egress-proxy/http.c) and,
 * through what it parses, the address classifier. Besides memory errors it
 * aborts when an invariant of http_parse() breaks:
 * - a complete head lies within the input and PROXY_HEADER_MAX_BYTES, its
 *   spans lie within the head, its host is a NUL-terminated string and
 *   its port is not 0;
 * - the same head alone parses to the same result (bytes after it are
 *   never looked at), and one byte less is HTTP_NEED_MORE;
 * - every answer has a status and a reason;
 * - a CIDR that addr_cidr_parse() accepts contains its own address. */
#include "config.h"

#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress-proxy/addr.h"
#include "egress-proxy/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_check_span(const struct http_request *req, struct http_span s)
{
	if ((size_t)s.off + s.len > req->head_len)
		abort();
}

/* Checks what a complete head must satisfy. */
static void
fuzz_check_complete(const uint8_t *data, size_t size, const struct http_request *req)
{
	struct http_request again;

	if (req->head_len > size || req->head_len > PROXY_HEADER_MAX_BYTES || req->port == 0)
		abort();
	if (memchr(req->host, '\0', sizeof(req->host)) == NULL || req->host[0] == '\0')
		abort();
	if (req->nheaders > HTTP_HEADERS_MAX)
		abort();
	fuzz_check_span(req, req->target);
	fuzz_check_span(req, req->path);
	fuzz_check_span(req, req->fields);
	fuzz_check_span(req, req->host_header);
	for (size_t i = 0; i < req->nheaders; i++) {
		fuzz_check_span(req, req->headers[i].name);
		fuzz_check_span(req, req->headers[i].value);
	}
	if (http_parse(data, req->head_len, &again) != HTTP_OK ||
	    memcmp(&again, req, sizeof(again)) != 0)
		abort();
	if (http_parse(data, req->head_len - 1, &again) != HTTP_NEED_MORE)
		abort();
}

/* Runs the parsed address through the classifier. */
static void
fuzz_classify(const struct http_request *req)
{
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;

	memset(&sin, 0, sizeof(sin));
	memset(&sin6, 0, sizeof(sin6));
	if (req->kind == HTTP_TARGET_IPV4) {
		sin.sin_family = AF_INET;
		memcpy(&sin.sin_addr, req->addr, 4);
		(void)addr_check(NULL, (const struct sockaddr *)&sin, NULL, 0);
	} else if (req->kind == HTTP_TARGET_IPV6) {
		sin6.sin6_family = AF_INET6;
		memcpy(sin6.sin6_addr.s6_addr, req->addr, 16);
		(void)addr_check(NULL, (const struct sockaddr *)&sin6, NULL, 0);
	}
}

/* Reads the input's start as CIDR text too. */
static void
fuzz_cidr(const uint8_t *data, size_t size)
{
	char text[ADDR_CIDR_TEXT_MAX_BYTES + 8];
	struct policy_cidr c;
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

	memcpy(text, data, n);
	text[n] = '\0';
	if (addr_cidr_parse(text, &c) == ADDR_OK && !addr_cidr_contains(&c, c.family, c.addr))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request req;
	enum http_err e = http_parse(data, size, &req);

	if (http_strerror(e) == NULL || http_err_reason(e) == NULL)
		abort();
	if (e == HTTP_OK) {
		fuzz_check_complete(data, size, &req);
		fuzz_classify(&req);
	} else if (e != HTTP_NEED_MORE && http_err_status(e) < 400) {
		abort();
	}
	fuzz_cidr(data, size);
	return 0;
}
