/* Allocators for the daemon and the CLI that exit on failure. Library-like
 * modules (policy/) use plain malloc and return errors instead. */
#ifndef CORRAL_XMALLOC_H
#define CORRAL_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
int xasprintf(char **ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Overwrites LEN bytes at P in a way the compiler keeps, then frees P. */
void freezero(void *p, size_t len);

#endif
