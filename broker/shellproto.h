/* What the daemon says to a persistent shell's runs (ARCHITECTURE.md,
 * "Sessions: shells and files"). The daemon keeps each shell's state, its
 * working folder and exported variables, and every run's script begins
 * with the code that applies it, generated here from data (each byte
 * quoted as bash's $'...' reads it back), then the run's text verbatim:
 *
 *     unset -v __corral_s; { :; cd -- $'/tmp'; export KEEP=$'yes'; } 2>/dev/null
 *     TEXT
 *
 * The state comes back from the run's shell as it exits normally: its
 * $PWD, then each entry of the environment bash would pass a command,
 * every field NUL-ended (the dump). It is read strictly here, in the
 * broker: a dump that is malformed in any part is refused whole. Pure
 * logic: never logs, never exits. */
#ifndef CORRAL_SHELLPROTO_H
#define CORRAL_SHELLPROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "common/shellwire.h"

#define SHELLPROTO_STATE_ENV_MAX SHELLWIRE_STATE_ENTRIES_MAX    /* exported variables kept */
#define SHELLPROTO_CWD_MAX_BYTES 4096           /* PATH_MAX, NUL included */

/* A shell's state between runs. */
struct shellproto_state {
	char *cwd;                      /* NULL: no run saved one yet */
	char **env;                     /* "NAME=VALUE", in the dump's order */
	size_t nenv;
};

void shellproto_state_init(struct shellproto_state *st);
void shellproto_state_clear(struct shellproto_state *st);

/* True when NAME (LEN bytes) is kept from one run to the next: a shell
 * variable's name, and not one of bash's own per-process variables (PWD,
 * SHLVL, _, SHELLOPTS, BASHOPTS, IFS, PPID, BASH_XTRACEFD, ...) or
 * corral's. */
bool shellproto_name_kept(const char *name, size_t len);

/* True when the entry E ("NAME=VALUE") may be in the environment the
 * shell's supervisor and its zygote bash are started with: not one that
 * makes a program load code or files named by it (what glibc ignores for
 * setuid programs, LD_PRELOAD and GCONV_PATH among them), nor one that
 * bash reads at its start (BASH_ENV, ENV, SHELLOPTS, BASHOPTS, exported
 * functions). A run could write the files those name and have the zygote
 * started again; runs get them through the state instead. */
bool shellproto_zygote_may_have(const char *e);

/* Starts *ST (empty) as the state before any run: no folder, and the
 * entries of ENV (NULL-terminated "K=V") whose names are kept. */
void shellproto_state_start(struct shellproto_state *st, const char *const *env);

/* Reads the dump DUMP (LEN bytes) into *ST, replacing what it held: the
 * first field an absolute folder shorter than SHELLPROTO_CWD_MAX_BYTES,
 * each other NAME=VALUE; entries whose name is not kept (exported
 * functions, BASH_FUNC_f%%, among them) are left out. -1, *ST unchanged,
 * when any part is malformed: no NUL at the end, an empty field, a field
 * without '=', a name twice, more than SHELLPROTO_STATE_ENV_MAX entries
 * kept. */
int shellproto_state_parse(const char *dump, size_t len, struct shellproto_state *st);

/* The script of a run of TEXT in a shell whose state is ST and which
 * started in WORKDIR with the environment BASE (NULL-terminated "K=V"):
 * the code that applies ST as the difference from BASE, then TEXT.
 * malloc'd, its length in *LEN; NULL when out of memory. */
char *shellproto_script(const struct shellproto_state *st, const char *const *base,
    const char *workdir, const char *text, size_t *len);

#endif
