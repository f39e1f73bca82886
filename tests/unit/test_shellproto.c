/* Unit tests for broker/shellproto: the strict reading of a run's exit
 * dump, and each run's script, checked against a real bash (no sandbox
 * needed): the state it applies comes back byte for byte. */
#define _GNU_SOURCE
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/shellproto.h"
#include "common/shellwire.h"

#define TEST_OUT_MAX_BYTES (256 * 1024)
#define TEST_WORKDIR "/"

/* A dump: the fields of ... joined, each NUL-ended; its length in *LEN. */
static char *
dump_of(size_t *len, ...)
{
	static char buf[SHELLWIRE_STATE_MAX_BYTES + 64];
	const char *f;
	va_list ap;
	size_t n = 0;

	va_start(ap, len);
	while ((f = va_arg(ap, const char *)) != NULL) {
		memcpy(buf + n, f, strlen(f) + 1);
		n += strlen(f) + 1;
	}
	va_end(ap);
	*len = n;
	return buf;
}

static const char *
env_of(const struct shellproto_state *st, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < st->nenv; i++) {
		if (strncmp(st->env[i], name, n) == 0 && st->env[i][n] == '=')
			return st->env[i] + n + 1;
	}
	return NULL;
}

static void
test_a_dump_is_read_and_bash_own_variables_are_left_out(void **state)
{
	struct shellproto_state st;
	size_t len;
	char *d = dump_of(&len, "/tmp/a b", "KEEP=yes", "PWD=/tmp/a b", "SHLVL=1", "_=/bin/x",
	    "BASH_FUNC_f%%=() {  echo f\n}", "__corral_s=x", "OLDPWD=/", "EMPTY=", "A=b=c", NULL);

	shellproto_state_init(&st);
	assert_int_equal(shellproto_state_parse(d, len, &st), 0);
	assert_string_equal(st.cwd, "/tmp/a b");
	assert_int_equal(st.nenv, 4);
	assert_string_equal(env_of(&st, "KEEP"), "yes");
	assert_string_equal(env_of(&st, "OLDPWD"), "/");
	assert_string_equal(env_of(&st, "EMPTY"), "");
	assert_string_equal(env_of(&st, "A"), "b=c");
	assert_null(env_of(&st, "PWD"));
	assert_null(env_of(&st, "SHLVL"));
	shellproto_state_clear(&st);
	assert_null(st.cwd);
}

/* Each malformed dump is refused whole, and the state held stays. */
static void
test_a_malformed_dump_is_refused_whole(void **state)
{
	static char big[SHELLPROTO_CWD_MAX_BYTES + 2];
	struct shellproto_state st;
	size_t len;
	char *d;

	shellproto_state_init(&st);
	d = dump_of(&len, "/kept", "KEEP=1", NULL);
	assert_int_equal(shellproto_state_parse(d, len, &st), 0);
	d = dump_of(&len, "/x", "A=1", NULL);
	assert_int_equal(shellproto_state_parse(d, len - 1, &st), -1);         /* no last NUL */
	d = dump_of(&len, "relative", "A=1", NULL);
	assert_int_equal(shellproto_state_parse(d, len, &st), -1);
	d = dump_of(&len, "", "A=1", NULL);
	assert_int_equal(shellproto_state_parse(d, len, &st), -1);
	d = dump_of(&len, "/x", "", "A=1", NULL);
	assert_int_equal(shellproto_state_parse(d, len, &st), -1);             /* empty field */
	d = dump_of(&len, "/x", "NOEQUALS", NULL);
	assert_int_equal(shellproto_state_parse(d, len, &st), -1);
	d = dump_of(&len, "/x", "A=1", "B=2", "A=3", NULL);
	assert_int_equal(shellproto_state_parse(d, len, &st), -1);             /* a name twice */
	assert_int_equal(shellproto_state_parse("", 0, &st), -1);
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(shellproto_state_parse(big, sizeof(big), &st), -1);    /* cwd too long */
	assert_string_equal(st.cwd, "/kept");
	assert_string_equal(env_of(&st, "KEEP"), "1");
	shellproto_state_clear(&st);
}

static void
test_a_dump_over_the_cap_or_with_too_many_entries_is_refused(void **state)
{
	size_t n = 0, per = strlen("V0000=1") + 1;
	char *d = calloc(1, SHELLWIRE_STATE_MAX_BYTES + 2);
	struct shellproto_state st;

	shellproto_state_init(&st);
	memcpy(d, "/", 2);
	n = 2;
	for (int i = 0; n + per <= SHELLWIRE_STATE_MAX_BYTES && i <= SHELLPROTO_STATE_ENV_MAX; i++)
		n += (size_t)snprintf(d + n, per, "V%04d=1", i % 10000) + 1;
	assert_int_equal(shellproto_state_parse(d, n, &st), -1);
	assert_int_equal(shellproto_state_parse(d, SHELLWIRE_STATE_MAX_BYTES + 1, &st), -1);
	assert_null(st.cwd);
	free(d);
}

static void
test_names_kept_are_shell_names_but_not_bash_own(void **state)
{
	assert_true(shellproto_name_kept("PATH", 4));
	assert_true(shellproto_name_kept("_x1", 3));
	assert_true(shellproto_name_kept("OLDPWD", 6));
	assert_false(shellproto_name_kept("1A", 2));
	assert_false(shellproto_name_kept("A-B", 3));
	assert_false(shellproto_name_kept("BASH_FUNC_f%%", 13));
	assert_false(shellproto_name_kept("PWD", 3));
	assert_false(shellproto_name_kept("IFS", 3));
	assert_false(shellproto_name_kept("SHELLOPTS", 9));
	assert_false(shellproto_name_kept("__corral_s", 10));
	assert_false(shellproto_name_kept("", 0));
}

/* The zygote never starts with what would make it load a run's file; the
 * state starts as the whole environment, so runs get those as exports. */
static void
test_the_zygote_env_leaves_out_what_loads_files_and_runs_get_it(void **state)
{
	static const char *const full[] = { "PATH=/bin", "LD_PRELOAD=/tmp/x.so",
	    "BASH_ENV=/tmp/rc", "GCONV_PATH=/tmp/g", "BASH_FUNC_f%%=() { :; }", "HOME=/h", NULL };
	static const char *const zygote[] = { "PATH=/bin", "HOME=/h", NULL };
	struct shellproto_state st;
	size_t len;
	char *s;

	assert_true(shellproto_zygote_may_have("PATH=/bin"));
	assert_true(shellproto_zygote_may_have("LDX=1"));
	assert_false(shellproto_zygote_may_have("LD_LIBRARY_PATH=/tmp"));
	assert_false(shellproto_zygote_may_have("BASH_ENV=/tmp/rc"));
	assert_false(shellproto_zygote_may_have("ENV=/tmp/rc"));
	assert_false(shellproto_zygote_may_have("TMPDIR=/tmp"));
	assert_false(shellproto_zygote_may_have("SHELLOPTS=xtrace"));
	assert_false(shellproto_zygote_may_have("BASH_FUNC_eval%%=() { :; }"));
	shellproto_state_init(&st);
	shellproto_state_start(&st, full);
	assert_null(st.cwd);
	assert_int_equal(st.nenv, 5);
	s = shellproto_script(&st, zygote, TEST_WORKDIR, "true", &len);
	assert_string_equal(s, "unset -v __corral_s; { :; export LD_PRELOAD=$'/tmp/x.so'; "
	    "export BASH_ENV=$'/tmp/rc'; export GCONV_PATH=$'/tmp/g'; } 2>/dev/null\ntrue");
	free(s);
	shellproto_state_clear(&st);
}

static void
test_without_state_the_script_is_the_text(void **state)
{
	static const char *const base[] = { "PATH=/bin", NULL };
	struct shellproto_state st;
	size_t len;
	char *s;

	shellproto_state_init(&st);
	s = shellproto_script(&st, base, TEST_WORKDIR, "echo hi", &len);
	assert_string_equal(s, "unset -v __corral_s\necho hi");
	assert_int_equal(len, strlen(s));
	free(s);
}

/* Only the difference from the starting environment is applied. */
static void
test_the_script_applies_only_the_difference(void **state)
{
	static const char *const base[] = { "PATH=/bin", "HOME=/h", "GONE=x", "1BAD=y", NULL };
	struct shellproto_state st;
	size_t len;
	char *s, *d = dump_of(&len, "/tmp", "PATH=/bin", "HOME=/other", "NEW=a'b", NULL);

	shellproto_state_init(&st);
	assert_int_equal(shellproto_state_parse(d, len, &st), 0);
	s = shellproto_script(&st, base, TEST_WORKDIR, "true", &len);
	assert_string_equal(s, "unset -v __corral_s; { :; cd -- $'/tmp'; unset -v GONE; "
	    "export HOME=$'/other'; export NEW=$'a\\x27b'; } 2>/dev/null\ntrue");
	free(s);
	/* In the workdir already: no cd (it would set OLDPWD). */
	d = dump_of(&len, TEST_WORKDIR, "PATH=/bin", "HOME=/h", "GONE=x", NULL);
	assert_int_equal(shellproto_state_parse(d, len, &st), 0);
	s = shellproto_script(&st, base, TEST_WORKDIR, "true", &len);
	assert_string_equal(s, "unset -v __corral_s\ntrue");
	free(s);
	shellproto_state_clear(&st);
}

/* Runs bash -c 'eval "$S"' with S the script and ENV its environment, in
 * the folder /; its stdout, *LEN bytes. */
static char *
run_bash(const char *script, char *const *env, size_t *len)
{
	char *out = malloc(TEST_OUT_MAX_BYTES), *argv[] = { (char *)(uintptr_t)"bash",
	    (char *)(uintptr_t)"--norc", (char *)(uintptr_t)"--noprofile",
	    (char *)(uintptr_t)"-c", (char *)(uintptr_t)"eval \"$__corral_s\"", NULL };
	char **full;
	size_t n = 0;
	int p[2], status;
	ssize_t got;
	pid_t pid;

	for (n = 0; env[n] != NULL; n++)
		;
	full = calloc(n + 2, sizeof(*full));
	memcpy(full, env, n * sizeof(*full));
	if (asprintf(&full[n], "__corral_s=%s", script) == -1)
		fail();
	assert_int_equal(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(2);       /* the broken text's complaint */
		open("/dev/null", O_WRONLY);
		if (chdir(TEST_WORKDIR) == -1)
			_exit(127);
		execve("/bin/bash", argv, full);
		_exit(127);
	}
	close(p[1]);
	n = 0;
	while ((got = read(p[0], out + n, TEST_OUT_MAX_BYTES - n)) > 0)
		n += (size_t)got;
	close(p[0]);
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status));
	for (size_t i = 0; full[i] != NULL; i++) {
		if (strncmp(full[i], "__corral_s=", 11) == 0)
			free(full[i]);
	}
	free(full);
	*len = n;
	return out;
}

/* The dump a real bash makes ($PWD, then env -0 as the environment it
 * passes a command), read and applied to a fresh bash: every value comes
 * back byte for byte, unset ones stay unset, the folder is applied. */
static void
test_a_real_bash_gets_the_state_back_byte_for_byte(void **state)
{
	static char *const base[] = { (char *)(uintptr_t)"PATH=/usr/bin:/bin",
	    (char *)(uintptr_t)"GONE=soon", (char *)(uintptr_t)"LANG=C", NULL };
	static const char weird[] = "a\nb\001c\"d$e`f\\g'h\xff\xc3\xa9 ;|&*?[x]{y} #";
	struct shellproto_state st;
	char *script, *out;
	size_t len;

	shellproto_state_init(&st);
	script = shellproto_script(&st, (const char *const *)base, TEST_WORKDIR,
	    "cd /tmp && export KEEP=yes WEIRD=$'a\\nb\\001c\"d$e`f\\\\g\\'h\\xff\\xc3\\xa9 ;|&*?[x]{y} #'; "
	    "unset GONE; printf '%s\\0' \"$PWD\"; env -0", &len);
	out = run_bash(script, base, &len);
	free(script);
	assert_int_equal(shellproto_state_parse(out, len, &st), 0);
	free(out);
	assert_string_equal(st.cwd, "/tmp");
	assert_string_equal(env_of(&st, "WEIRD"), weird);
	script = shellproto_script(&st, (const char *const *)base, TEST_WORKDIR,
	    "printf '%s|%s|%s|' \"$PWD\" \"$KEEP\" \"${GONE-unset}\"; printf %s \"$WEIRD\"", &len);
	out = run_bash(script, base, &len);
	free(script);
	assert_int_equal(len, strlen("/tmp|yes|unset|") + strlen(weird));
	assert_memory_equal(out, "/tmp|yes|unset|", strlen("/tmp|yes|unset|"));
	assert_memory_equal(out + strlen("/tmp|yes|unset|"), weird, strlen(weird));
	free(out);
	shellproto_state_clear(&st);
}

/* A syntax error in the text does not stop the state from being applied
 * first (eval parses one command at a time). */
static void
test_a_broken_text_still_gets_the_state(void **state)
{
	static char *const base[] = { (char *)(uintptr_t)"PATH=/usr/bin:/bin", NULL };
	struct shellproto_state st;
	char *script, *out, *d;
	size_t len;

	shellproto_state_init(&st);
	d = dump_of(&len, "/tmp", "PATH=/usr/bin:/bin", "KEEP=1", NULL);
	assert_int_equal(shellproto_state_parse(d, len, &st), 0);
	script = shellproto_script(&st, (const char *const *)base, TEST_WORKDIR,
	    "echo \"$KEEP $PWD\"\nif then fi", &len);
	out = run_bash(script, base, &len);
	free(script);
	assert_int_equal(len, 7);
	assert_memory_equal(out, "1 /tmp\n", 7);
	free(out);
	shellproto_state_clear(&st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_dump_is_read_and_bash_own_variables_are_left_out),
		cmocka_unit_test(test_a_malformed_dump_is_refused_whole),
		cmocka_unit_test(test_a_dump_over_the_cap_or_with_too_many_entries_is_refused),
		cmocka_unit_test(test_names_kept_are_shell_names_but_not_bash_own),
		cmocka_unit_test(test_the_zygote_env_leaves_out_what_loads_files_and_runs_get_it),
		cmocka_unit_test(test_without_state_the_script_is_the_text),
		cmocka_unit_test(test_the_script_applies_only_the_difference),
		cmocka_unit_test(test_a_real_bash_gets_the_state_back_byte_for_byte),
		cmocka_unit_test(test_a_broken_text_still_gets_the_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
