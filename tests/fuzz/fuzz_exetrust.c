/* Fuzz target for exetrust_parse() (egress-proxy/exetrust.h): the mount
 * table of a sandbox's corral-init, whose mount points hold names the
 * sandbox's user chose (roots, sockets). The input is the table; it is
 * parsed without exclusions and with a few folders excluded, one of them
 * below a system folder. Besides the sanitizers it aborts when:
 * - a parse that succeeds holds more than EXETRUST_MOUNTS_MAX mounts, or
 *   a mount id 0, or one that a plain reading of the table (lines, six
 *   space-ended fields, octal escapes) does not make trusted;
 * - excluding folders trusts a mount that no exclusion did not, or turns
 *   a refused table into an accepted one for any reason but the count;
 * - a refusal has no reason;
 * - exetrust_allows() trusts a file off those mounts, or one that is not
 *   root's or is writable by group or others, or has an ACL. */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/sysdirs.h"
#include "egress-proxy/exetrust.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_TEXT_MAX_BYTES EXETRUST_MOUNTINFO_MAX_BYTES
#define FUZZ_FIELDS 6

static const char *const fuzz_excluded[] = { "/usr/local/src", "/opt/proj", "/home/u" };
#define FUZZ_NEXCLUDED (sizeof(fuzz_excluded) / sizeof(fuzz_excluded[0]))

static char fuzz_text[FUZZ_TEXT_MAX_BYTES + 1];

/* The plain reading: field I (0-5) of the line at LINE, unescaped into
 * OUT (SIZE bytes); false when the line has no such non-empty field. */
static bool
fuzz_ref_field(const char *line, int want, char *out, size_t size)
{
	const char *s = line;
	size_t n = 0;

	for (int i = 0; i < want; i++) {
		s += strcspn(s, " \n");
		if (*s != ' ')
			return false;
		s++;
	}
	while (*s != ' ' && *s != '\n' && *s != '\0') {
		char c = *s++;

		if (c == '\\' && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' &&
		    s[2] >= '0' && s[2] <= '7') {
			c = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0'));
			s += 3;
		}
		if (n + 1 >= size)
			return false;
		out[n++] = c;
	}
	out[n] = '\0';
	return n > 0;
}

/* True when the plain reading trusts mount ID: some line has it as its
 * id, "ro" as its first option and a point in a system folder outside
 * every one of the NEXCLUDED folders. */
static bool
fuzz_ref_trusted(const char *text, uint32_t id, size_t nexcluded)
{
	static char point[PATH_MAX], field[PATH_MAX];

	for (const char *line = text; *line != '\0'; line += strcspn(line, "\n"),
	    line += *line == '\n') {
		bool system = false;

		if (!fuzz_ref_field(line, 0, field, sizeof(field)) ||
		    strtoul(field, NULL, 10) != id || !fuzz_ref_field(line, 4, point, sizeof(point)) ||
		    !fuzz_ref_field(line, 5, field, sizeof(field)) ||
		    (strcmp(field, "ro") != 0 && strncmp(field, "ro,", 3) != 0))
			continue;
		for (const char *const *d = sysdirs_shown; *d != NULL; d++)
			system |= sysdirs_path_within(point, *d);
		for (size_t i = 0; i < nexcluded; i++)
			system &= !sysdirs_path_within(point, fuzz_excluded[i]);
		if (system)
			return true;
	}
	return false;
}

/* The reason a table with a line that cannot be read is refused with. */
static const char *
fuzz_why_line(void)
{
	static const char *why;
	struct exetrust t;

	if (why == NULL && exetrust_parse(&t, "x\n", NULL, 0, &why) != -1)
		abort();
	return why;
}

/* Checks one successful parse against the plain reading and the caps. */
static void
fuzz_check_parse(const struct exetrust *t, size_t nexcluded)
{
	if (t->n > EXETRUST_MOUNTS_MAX)
		abort();
	for (size_t i = 0; i < t->n; i++)
		if (t->mounts[i] == 0 || !fuzz_ref_trusted(fuzz_text, t->mounts[i], nexcluded))
			abort();
}

/* True when every mount of SUB is one of ALL's, in the same order. */
static bool
fuzz_subsequence(const struct exetrust *sub, const struct exetrust *all)
{
	size_t j = 0;

	for (size_t i = 0; i < sub->n; i++) {
		while (j < all->n && all->mounts[j] != sub->mounts[i])
			j++;
		if (j++ == all->n)
			return false;
	}
	return true;
}

/* exetrust_allows() on T: its own mounts with a root-owned, unwritable,
 * ACL-less file only; nothing else. */
static void
fuzz_check_allows(const struct exetrust *t)
{
	struct exetrust_file f = { .uid = 0, .mode = S_IFREG | 0755, .acl = false };

	for (size_t i = 0; i < t->n; i++) {
		f.mnt_id = t->mounts[i];
		f.uid = 0;
		f.mode = S_IFREG | 0755;
		f.acl = false;
		if (!exetrust_allows(t, &f))
			abort();
		f.mode = S_IFREG | 0775;
		if (exetrust_allows(t, &f))
			abort();
		f.mode = S_IFREG | 0757;
		if (exetrust_allows(t, &f))
			abort();
		f.mode = S_IFREG | 0755;
		f.uid = 1000;
		if (exetrust_allows(t, &f))
			abort();
		f.uid = 0;
		f.acl = true;
		if (exetrust_allows(t, &f))
			abort();
	}
	f.mnt_id = 0;
	f.acl = false;
	if (exetrust_allows(t, &f))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct exetrust all, some;
	const char *why_all = NULL, *why_some = NULL;
	int rc_all, rc_some;

	if (size > FUZZ_TEXT_MAX_BYTES)
		size = FUZZ_TEXT_MAX_BYTES;
	memcpy(fuzz_text, data, size);
	fuzz_text[size] = '\0';
	rc_all = exetrust_parse(&all, fuzz_text, NULL, 0, &why_all);
	rc_some = exetrust_parse(&some, fuzz_text, fuzz_excluded, FUZZ_NEXCLUDED, &why_some);
	if ((rc_all == -1 && why_all == NULL) || (rc_some == -1 && why_some == NULL))
		abort();
	if (rc_all == 0) {
		fuzz_check_parse(&all, 0);
		fuzz_check_allows(&all);
		/* Fewer folders to trust never fails where more did not. */
		if (rc_some != 0 || !fuzz_subsequence(&some, &all))
			abort();
	}
	if (rc_some == 0) {
		fuzz_check_parse(&some, FUZZ_NEXCLUDED);
		fuzz_check_allows(&some);
		/* Exclusions only drop mounts: a line the parse cannot read is
		 * refused with or without them. */
		if (rc_all != 0 && why_all == fuzz_why_line())
			abort();
	}
	return 0;
}
