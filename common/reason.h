/* One-line reasons handed up to a caller: every module that refuses or
 * fails with a `char **err` argument writes it through reason_set, so the
 * formatting, the ownership (malloc'd, the caller frees it) and the
 * out-of-memory case are written once. */
#ifndef CORRAL_REASON_H
#define CORRAL_REASON_H

/* Sets *REASON, when REASON is not NULL, to the formatted text, freeing
 * the reason it held (so *REASON must be NULL or an earlier reason).
 * Out of memory, *REASON becomes NULL: callers show a generic text then.
 * Returns -1, for `return reason_set(err, ...);`. Never aborts, so the
 * library-like modules (policy/) may use it too. */
int reason_set(char **reason, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
