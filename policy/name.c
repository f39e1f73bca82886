/* Sandbox names: a closed character set, so a name can never be a path. */
#include "config.h"

#include <stddef.h>

#include "policy/name.h"

static bool
name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

const char *
policy_name_error(const char *name)
{
	size_t i;

	if (name == NULL || name[0] == '\0')
		return "is empty";
	/* '-' first would read as an option on command lines. */
	if (name[0] == '-')
		return "must start with a lower-case letter or a digit";
	for (i = 0; name[i] != '\0'; i++) {
		if (i >= POLICY_NAME_MAX_BYTES)
			return "is longer than 63 characters";
		if (!name_char_ok(name[i]))
			return "may hold only lower-case letters, digits and '-'";
	}
	return NULL;
}

bool
policy_name_valid(const char *name)
{
	return policy_name_error(name) == NULL;
}
