/* An allocator whose free wipes what it frees, for libraries that hold a
 * secret's value in memory of their own (OpenSSL's record buffers, an
 * HTTP/2 session's header blocks toward a host a secret goes to): freed
 * heap is no place for one. The size wiped is the block's whole usable
 * size (malloc_usable_size). */
#ifndef CORRAL_WIPE_H
#define CORRAL_WIPE_H

#include <stddef.h>

void *wipe_malloc(size_t n);
void *wipe_calloc(size_t nmemb, size_t size);
/* Never resizes in place: the old block is wiped once copied. */
void *wipe_realloc(void *p, size_t n);
void wipe_free(void *p);

#endif
