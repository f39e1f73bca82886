/* Credential grants applied to a sandbox (corral(1), "--grant"): the granted
 * files of the caller's home are copied (never mounted) into the sandbox's
 * private home, files 0600 and folders 0700, owned by run_as; regular files
 * only, no symbolic link followed. The copying and, later, the deleting run
 * in a child process that has dropped to run_as (never as root through
 * paths run_as can change) and opens everything with openat2(RESOLVE_BENEATH
 * | RESOLVE_NO_SYMLINKS), on both sides. The caller (the root monitor)
 * waits for it with a bounded timeout.
 *
 * Rules:
 * - a grant names files or folders relative to the home; a folder is
 *   copied whole (depth, file count and bytes bounded per grant: over a
 *   bound, the whole copy is refused with a message naming it);
 * - a symbolic link anywhere (a key, a folder, a path's parent) is not
 *   followed and not copied: it is skipped and reported, as are sockets,
 *   FIFOs and devices;
 * - a grant that copies no file at all is refused (it was asked for and
 *   would silently give nothing), unless it names no paths (a config grant
 *   may give only hosts and env);
 * - .gitconfig is copied when present, reported as the entry "gitconfig";
 * - kube: the grant's hosts are its kubeconfig's clusters ("server:
 *   https://HOST[:PORT]" lines of <copy>/.kube/config, port 443 by
 *   default), exact host names only; others are reported as skipped;
 * - ssh: a block naming the copied private keys (IdentityFile) and
 *   known_hosts (UserKnownHostsFile) is written at the top of
 *   <copy>/.ssh/config, the user's own config (if any) following it;
 * - env values may write ${HOME} (nothing else is expanded): it becomes the
 *   copy's absolute path, as the sandbox sees it. A later grant's variable
 *   replaces an earlier one of the same name;
 * - files given whole (a secret's placeholder in a tool's configuration)
 *   are written last, 0600 in folders made 0700; one that a grant already
 *   copied refuses the sandbox (it would hide one or the other). With no
 *   grants, only they are written and no home is read. */
#ifndef CORRAL_CREDCOPY_H
#define CORRAL_CREDCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/limits.h"
#include "policy/grant.h"

#define CREDCOPY_FILES_MAX 256                          /* files one grant copies */
#define CREDCOPY_GRANT_MAX_BYTES (8u * 1024 * 1024)     /* bytes one grant copies */
#define CREDCOPY_DEPTH_MAX 8                            /* folders below a granted path */
#define CREDCOPY_DELETE_DEPTH_MAX 64                    /* folders the deleting goes down */
#define CREDCOPY_TIMEOUT_MS 10000                       /* for the child to finish */
#define CREDCOPY_REPORT_MAX_BYTES (256u * 1024)         /* the child's report */
#define CREDCOPY_KEYS_MAX 16                            /* IdentityFile lines written */
#define CREDCOPY_ENV_MAX 64                             /* variables of all grants */
#define CREDCOPY_FOUND_HOSTS_MAX 8                      /* kube clusters taken from a kubeconfig */
#define CREDCOPY_GITCONFIG_NAME "gitconfig"             /* the entry .gitconfig is reported in */

/* What to copy, from where, to where, as whom. */
struct credcopy_spec {
	uid_t uid;                      /* run_as; never 0 */
	gid_t gid;                      /* its primary group; never 0 */
	int src_home_fd;                /* the caller's home (O_PATH or O_DIRECTORY) */
	int dst_home_fd;                /* the sandbox's private home (O_DIRECTORY) */
	const char *dst_home_path;      /* its absolute path (as the sandbox sees it) */
	const struct grant *grants;
	size_t ngrants;
	const struct monitor_file *files;       /* written after the copies (secrets' placeholders) */
	size_t nfiles;
	size_t files_max;               /* 0: CREDCOPY_FILES_MAX */
	size_t bytes_max;               /* 0: CREDCOPY_GRANT_MAX_BYTES */
	unsigned timeout_ms;            /* 0: CREDCOPY_TIMEOUT_MS */
};

struct monitor_grants;
struct monitor_file;

/* Copies SPEC's grants (and .gitconfig) in a child running as run_as, into
 * *OUT (monitor_grants_free() it). -1 with *ERR (malloc'd, one line) when
 * anything is refused or fails; what was copied is then left for
 * credcopy_clear(). */
int credcopy_copy(const struct credcopy_spec *spec, struct monitor_grants **out,
    char **err);

/* Empties the sandbox's home HOME_FD (not the folder itself) in a child
 * running as UID:GID, following no link. -1 with *ERR when something could
 * not be removed. */
int credcopy_clear(uid_t uid, gid_t gid, int home_fd, unsigned timeout_ms, char **err);

#endif
