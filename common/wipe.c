/* An allocator whose free wipes (wipe.h). */
#include "config.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "common/wipe.h"

void *
wipe_malloc(size_t n)
{
	return malloc(n);
}

void *
wipe_calloc(size_t nmemb, size_t size)
{
	return calloc(nmemb, size);
}

void
wipe_free(void *p)
{
	if (p == NULL)
		return;
	explicit_bzero(p, malloc_usable_size(p));
	free(p);
}

void *
wipe_realloc(void *p, size_t n)
{
	size_t old;
	void *q;

	if (p == NULL)
		return malloc(n);
	if (n == 0) {
		wipe_free(p);
		return NULL;
	}
	if ((q = malloc(n)) == NULL)
		return NULL;
	old = malloc_usable_size(p);
	memcpy(q, p, old < n ? old : n);
	wipe_free(p);
	return q;
}
