/* corral policy render | check: policies without a daemon. */
#include "config.h"
#include "common/limits.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/cli/cli.h"
#include "broker/cli/cli-roots.h"
#include "common/xmalloc.h"
#include "policy/grant.h"
#include "policy/load.h"
#include "policy/profile.h"
#include "policy/render.h"

#define CLI_REGULAR_UID_MIN 1000        /* below it: system accounts, never run_as by default */
#define CLI_RENDER_NOTE_BYTES 1024      /* the comment line on run_as */

/* What `policy render` was asked for. */
struct cli_render_args {
	struct render_root roots[CORRAL_ROOTS_MAX];
	char *root_paths[CORRAL_ROOTS_MAX];
	size_t nroots;
	struct render_grant grants[CORRAL_GRANTS_MAX];
	size_t ngrants;
	const char *profile;
	long uid, gid;                  /* -1: not given */
	char note[CLI_RENDER_NOTE_BYTES];       /* why run_as is what it is, or "" */
};

/* Parses PATH[:ro|:rw] into the next root. */
static int
cli_add_root(struct cli_render_args *a, const char *arg)
{
	char *absolute;
	bool writable;
	int rc;

	if (a->nroots == CORRAL_ROOTS_MAX)
		return cli_fail("too many --root options (at most %d)", CORRAL_ROOTS_MAX);
	if ((rc = cli_root_parse(arg, &absolute, &writable)) != 0)
		return rc;
	a->root_paths[a->nroots] = absolute;
	a->roots[a->nroots].path = absolute;
	a->roots[a->nroots].writable = writable;
	a->nroots++;
	return 0;
}

static int
cli_add_grant(struct cli_render_args *a, const char *name)
{
	const struct grant_def *def = grant_builtin(name);

	if (def == NULL)
		return cli_fail("unknown grant '%s' (known: %s)", name, grant_builtin_names());
	if (a->ngrants == CORRAL_GRANTS_MAX)
		return cli_fail("too many --grant options (at most %d)", CORRAL_GRANTS_MAX);
	a->grants[a->ngrants].name = def->name;
	a->grants[a->ngrants].hosts = def->hosts;
	a->grants[a->ngrants].nhosts = def->nhosts;
	a->ngrants++;
	return 0;
}

/* Parses a uid or gid: decimal, 0 to 2^32-2. */
static int
cli_parse_id(const char *text, const char *option, long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 ||
	    v >= UINT32_MAX)
		return cli_fail("%s %s: not a numeric id", option, text);
	*out = (long)v;
	return 0;
}

/* Takes the caller's own uid and gid for run_as when no writable root's
 * owner can be read (a root that does not exist yet): the daemon runs a
 * non-root caller's sandbox as the caller anyway. Root must say whom. */
static int
cli_caller_ids(struct cli_render_args *a, const char *why)
{
	if (getuid() == 0)
		return cli_fail("%s: pass --uid and --gid (root's sandbox never runs as root)", why);
	a->uid = getuid();
	a->gid = getgid();
	snprintf(a->note, sizeof(a->note), "run_as is the caller's uid %ld and gid %ld: %s",
	    a->uid, a->gid, why);
	return 0;
}

/* Chooses run_as when --uid/--gid were not given: the owner of the first
 * writable root when that is a regular user, else the caller's own ids
 * when that owner cannot be read. Never root: a sandbox whose uid is 0
 * could write /proc/sys/kernel/core_pattern. */
static int
cli_default_ids(struct cli_render_args *a)
{
	char why[CLI_RENDER_NOTE_BYTES];
	struct stat st;

	for (size_t i = 0; i < a->nroots; i++) {
		if (!a->roots[i].writable)
			continue;
		if (stat(a->roots[i].path, &st) == -1) {
			snprintf(why, sizeof(why), "the owner of %s cannot be read (%s)",
			    a->roots[i].path, strerror(errno));
			return cli_caller_ids(a, why);
		}
		if (st.st_uid < CLI_REGULAR_UID_MIN)
			return cli_fail("%s belongs to uid %u, not a regular user, and a "
			    "sandbox never runs as a system account: pass --uid and --gid",
			    a->roots[i].path, (unsigned)st.st_uid);
		a->uid = st.st_uid;
		a->gid = st.st_gid;
		return 0;
	}
	return cli_caller_ids(a, "no writable root to take the sandbox's user from");
}

static int
cli_render_parse(int argc, char **argv, struct cli *cli, struct cli_render_args *a)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "profile", required_argument, NULL, 'P' },
		{ "uid", required_argument, NULL, 'u' },
		{ "gid", required_argument, NULL, 'g' },
		{ "grant", required_argument, NULL, 'G' },
		{ "profiles-dir", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc = 0;

	while (rc == 0 && (opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': rc = cli_add_root(a, optarg); break;
		case 'P': a->profile = optarg; break;
		case 'u': rc = cli_parse_id(optarg, "--uid", &a->uid); break;
		case 'g': rc = cli_parse_id(optarg, "--gid", &a->gid); break;
		case 'G': rc = cli_add_grant(a, optarg); break;
		case 'd': cli->profiles_dir = optarg; break;
		default: return cli_usage(cli_find("policy render"));
		}
	}
	if (rc != 0)
		return rc;
	if (optind != argc || (a->uid < 0) != (a->gid < 0))
		return cli_usage(cli_find("policy render"));
	if (a->nroots == 0)
		rc = cli_add_root(a, ".");
	return rc;
}

/* Loads the named profile, printing why it cannot be. */
static struct policy *
cli_load_profile(const struct cli *cli, const char *name)
{
	const char *dir = cli->profiles_dir != NULL ? cli->profiles_dir : profile_dir_default();
	struct policy_diags diags;
	struct policy *profile = NULL;
	char *message = NULL, *text;

	policy_diags_init(&diags);
	if (profile_load(dir, name, &profile, &diags, &message) != PROFILE_OK) {
		cli_fail("%s", message != NULL ? message : "cannot load the profile");
		if ((text = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE)) != NULL)
			fputs(text, stderr);
		free(text);
	}
	free(message);
	policy_diags_clear(&diags);
	return profile;
}

static int
cli_render_print(struct cli_render_args *a, const struct policy *profile)
{
	struct render_spec spec = {
		.roots = a->roots, .nroots = a->nroots, .profile = profile,
		.uid = (uid_t)a->uid, .gid = (gid_t)a->gid,
		.grants = a->grants, .ngrants = a->ngrants,
	};
	struct policy *rendered = NULL;
	enum render_err err;
	char *yaml = NULL;

	if ((err = render_policy(&spec, &rendered)) == RENDER_OK)
		err = render_yaml(rendered, &yaml, NULL);
	policy_free(rendered);
	if (err != RENDER_OK)
		return cli_fail("cannot render the policy: %s", render_strerror(err));
	if (a->note[0] != '\0') {
		char line[CLI_RENDER_NOTE_BYTES + 4];

		render_comment(a->note, line, sizeof(line));
		fputs(line, stdout);
	}
	fputs(yaml, stdout);
	free(yaml);
	return fflush(stdout) == 0 ? CLI_EXIT_OK : cli_fail("writing the policy failed");
}

int
cli_policy_render(struct cli *cli, int argc, char **argv)
{
	struct cli_render_args a = { .profile = PROFILE_DEFAULT_NAME, .uid = -1, .gid = -1 };
	struct policy *profile = NULL;
	int rc;

	rc = cli_render_parse(argc, argv, cli, &a);
	if (rc == 0 && (profile = cli_load_profile(cli, a.profile)) == NULL)
		rc = CLI_EXIT_FAILED;
	if (rc == 0 && a.uid < 0)
		rc = cli_default_ids(&a);
	if (rc == 0)
		rc = cli_render_print(&a, profile);
	policy_free(profile);
	for (size_t i = 0; i < a.nroots; i++)
		free(a.root_paths[i]);
	return rc;
}

int
cli_policy_check(struct cli *cli, int argc, char **argv)
{
	struct policy_diags diags;
	struct policy *p = NULL;
	char *text;
	int rc;

	if (argc != 2 || argv[1][0] == '\0')
		return cli_usage(cli_find("policy check"));
	policy_diags_init(&diags);
	if (strcmp(argv[1], "-") == 0)
		rc = policy_load_stream(STDIN_FILENO, "<stdin>", &p, &diags);
	else
		rc = policy_load_file(argv[1], &p, &diags);
	if (rc == 0) {
		printf("%s: valid policy, %zu network entr%s\n", argv[1], p->nrules,
		    p->nrules == 1 ? "y" : "ies");
	} else if ((text = policy_diags_format(&diags, POLICY_DIAG_ONE_LINE)) != NULL) {
		fputs(text, stderr);
		free(text);
	}
	policy_free(p);
	policy_diags_clear(&diags);
	return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}
