/* The write guard of the file API: which paths a write or edit may name.
 * An absolute path or one with a ".." segment is refused here, with a
 * message; a relative one is allowed and later opened beneath the
 * workspace with openat2(RESOLVE_BENEATH), which is the real wall (the
 * file operations also run under the sandbox's Landlock). */
#ifndef CORRAL_POLICY_GUARD_H
#define CORRAL_POLICY_GUARD_H

#define GUARD_DENY_REASON_DEFAULT "Writes must stay inside the workspace."

enum guard_verdict {
	GUARD_ALLOW = 0,                /* relative, no ".." segment */
	GUARD_REFUSE_EMPTY,             /* "" */
	GUARD_REFUSE_ABSOLUTE,          /* starts with '/' */
	GUARD_REFUSE_DOTDOT,            /* some segment is ".." */
	GUARD_REFUSE_CONTROL,           /* a byte below 0x20, or 0x7f */
};

/* Classifies PATH (NULL counts as empty). */
enum guard_verdict guard_check(const char *path);

/* The one-line message for a refusal of PATH, for the workspace ROOT, in a
 * malloc'd string: "<reason> outside <root>/: <path>" for an absolute or
 * ".." path. DENY_REASON NULL means GUARD_DENY_REASON_DEFAULT. NULL when
 * VERDICT is GUARD_ALLOW or memory runs out. */
char *guard_message(enum guard_verdict verdict, const char *deny_reason,
    const char *root, const char *path);

#endif
