/* Unit tests for corrald's configuration loader (broker/config.c). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/conf.h"
#include "policy/diag.h"
#include "tests/unit/yaml-test-util.h"

#define TEST_DIR_MAX_BYTES 200
#define TEST_PATH_MAX_BYTES 256

static struct policy_diags diags;
static struct config *cfg;
static char dir[TEST_DIR_MAX_BYTES];
static char path[TEST_PATH_MAX_BYTES];

static int
setup(void **state)
{
	(void)state;
	policy_diags_init(&diags);
	cfg = NULL;
	snprintf(dir, sizeof(dir), "%s/test_config.XXXXXX", getenv("TMPDIR") != NULL ?
	    getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/corrald.yaml", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	policy_diags_clear(&diags);
	config_free(cfg);
	cfg = NULL;
	unlink(path);
	rmdir(dir);
	return 0;
}

/* Writes TEXT to the test's file with MODE. */
static void
write_file(const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* Loads TEXT from a file only its owner can write, named explicitly. */
static int
load(const char *text)
{
	write_file(text, 0600);
	return config_load(path, true, &cfg, &diags);
}

/* Asserts that diagnostic I is at LINE:COL and its message holds NEEDLE. */
static void
assert_diag(size_t i, unsigned line, unsigned col, const char *needle)
{
	yaml_test_assert_diag(&diags, i, path, line, col, needle);
}

/* Asserts that loading TEXT fails with exactly one error, at LINE:COL,
 * whose message holds NEEDLE. */
static void
assert_one_error(const char *text, unsigned line, unsigned col, const char *needle)
{
	assert_int_equal(load(text), -1);
	assert_null(cfg);
	yaml_test_assert_one_diag(&diags, path, line, col, needle);
}

/* assert_one_error, then a fresh start for the next load of the same test. */
static void
assert_one_error_then_reset(const char *text, unsigned line, unsigned col, const char *needle)
{
	assert_one_error(text, line, col, needle);
	policy_diags_clear(&diags);
	policy_diags_init(&diags);
}

/* Asserts that C holds every default. */
static void
assert_defaults(const struct config *c)
{
	/* The folders configure chose (/etc, /var and /run by default). */
	assert_string_equal(c->socket, RUNSTATEDIR "/corral/corrald.sock");
	assert_string_equal(c->state_dir, LOCALSTATEDIR "/lib/corral");
	assert_string_equal(c->log_dir, LOCALSTATEDIR "/log/corral");
	assert_string_equal(c->profiles_dir, SYSCONFDIR "/corral/profiles");
	assert_string_equal(c->machine_id, "local");
	assert_string_equal(c->user, "corral");
	assert_int_equal(c->max_sandboxes, 20);
	assert_int_equal(c->pool.family, AF_INET);
	assert_memory_equal(c->pool.addr, ((const uint8_t[]){ 10, 231, 0, 0 }), 4);
	assert_int_equal(c->pool.prefix_len, 16);
	assert_int_equal(c->ndns_upstream, 0);
	assert_int_equal(c->nallow_cidrs, 0);
	assert_int_equal(c->egress.connect_timeout_ms, 10000);
	assert_int_equal(c->egress.idle_timeout_s, 300);
	assert_int_equal(c->egress.max_tunnels_per_tenant, 512);
	assert_int_equal(c->egress.handshake_timeout_ms, 10000);
	assert_int_equal(c->egress.header_max_bytes, 8192);
	assert_int_equal(c->egress.max_tunnels, 8192);
	assert_int_equal(c->ncredentials, 0);
	assert_false(c->host_proxy.enabled);
	assert_string_equal(c->host_proxy.listen, "127.0.0.1:3128");
	assert_string_equal(c->host_proxy.profile, "strict");
	assert_null(c->host_proxy.policy);
	assert_null(c->host_proxy.cgroup);
	assert_null(c->host_proxy.transparent);
}

/* ---- defaults and files ---- */

static void
test_defaults_when_default_file_absent(void **state)
{
	(void)state;
	assert_int_equal(config_load(path, false, &cfg, &diags), 0);
	assert_non_null(cfg);
	assert_int_equal(diags.count, 0);
	assert_defaults(cfg);
}

static void
test_new_default_holds_defaults(void **state)
{
	(void)state;
	cfg = config_new_default();
	assert_non_null(cfg);
	assert_defaults(cfg);
}

static void
test_empty_file_gives_defaults(void **state)
{
	(void)state;
	assert_int_equal(load("# nothing set\n"), 0);
	assert_defaults(cfg);
}

static void
test_missing_explicit_file_is_an_error_naming_it(void **state)
{
	(void)state;
	assert_int_equal(config_load(path, true, &cfg, &diags), -1);
	assert_null(cfg);
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].file, path);
	assert_int_equal(diags.items[0].line, 0);
	assert_non_null(strstr(diags.items[0].message, "No such file"));
}

static void
test_world_writable_file_refused(void **state)
{
	(void)state;
	write_file("machine_id: m1\n", 0666);
	assert_int_equal(config_load(path, false, &cfg, &diags), -1);
	assert_null(cfg);
	assert_int_equal(diags.count, 1);
	assert_non_null(strstr(diags.items[0].message, "writable by every user"));
}

static void
test_group_writable_file_refused(void **state)
{
	(void)state;
	write_file("machine_id: m1\n", 0620);
	assert_int_equal(config_load(path, true, &cfg, &diags), -1);
	assert_non_null(strstr(diags.items[0].message, "writable by its group"));
}

static void
test_folder_instead_of_file_refused(void **state)
{
	(void)state;
	assert_int_equal(config_load(dir, true, &cfg, &diags), -1);
	assert_int_equal(diags.count, 1);
	assert_non_null(strstr(diags.items[0].message, "not a regular file"));
}

static void
test_config_free_accepts_null(void **state)
{
	(void)state;
	config_free(NULL);
}

/* ---- a full file ---- */

static const char full_config[] =
	"socket: /tmp/corral//test.sock/\n"
	"state_dir: /srv/corral/state\n"
	"log_dir: /srv/corral/log\n"
	"profiles_dir: /srv/corral/profiles\n"
	"machine_id: build-host_01.example\n"
	"max_sandboxes: 100\n"
	"network:\n"
	"  pool: 10.200.0.0/20\n"
	"dns:\n"
	"  upstream: [192.0.2.53, \"192.0.2.54:5353\", \"[2001:db8::53]:53\", 2001:db8::54]\n"
	"egress:\n"
	"  allow_cidrs: [10.0.0.0/8, fd00::/8]\n"
	"  connect_timeout_ms: 5000\n"
	"  idle_timeout_s: 600\n"
	"  max_tunnels_per_sandbox: 64\n"
	"  handshake_timeout_ms: 2000\n"
	"  header_max_bytes: 4096\n"
	"  max_tunnels: 1000\n"
	"credentials:\n"
	"  - name: npm\n"
	"    paths: [.npmrc, ./.config//npm/]\n"
	"    hosts: [\"registry.npmjs.org:443\", \"*.npmjs.com:443\"]\n"
	"    env: [\"NPM_CONFIG_USERCONFIG=${HOME}/.npmrc\", \"EMPTY=\"]\n"
	"  - name: docker\n"
	"    paths: [.docker/config.json]\n"
	"host_proxy:\n"
	"  listen: \"127.0.0.1:3129\"\n"
	"  profile: standard\n"
	"  cgroup: /sys/fs/cgroup/user.slice/agents\n";

static void
test_full_file_sets_every_key(void **state)
{
	(void)state;
	if (load(full_config) != 0)
		yaml_test_dump_diags(&diags);
	assert_non_null(cfg);
	assert_string_equal(cfg->socket, "/tmp/corral/test.sock");
	assert_string_equal(cfg->state_dir, "/srv/corral/state");
	assert_string_equal(cfg->log_dir, "/srv/corral/log");
	assert_string_equal(cfg->profiles_dir, "/srv/corral/profiles");
	assert_string_equal(cfg->machine_id, "build-host_01.example");
	assert_int_equal(cfg->max_sandboxes, 100);
	assert_memory_equal(cfg->pool.addr, ((const uint8_t[]){ 10, 200, 0, 0 }), 4);
	assert_int_equal(cfg->pool.prefix_len, 20);
	assert_int_equal(cfg->ndns_upstream, 4);
	assert_string_equal(cfg->dns_upstream[0], "192.0.2.53");
	assert_string_equal(cfg->dns_upstream[1], "192.0.2.54:5353");
	assert_string_equal(cfg->dns_upstream[2], "[2001:db8::53]:53");
	assert_string_equal(cfg->dns_upstream[3], "2001:db8::54");
	assert_int_equal(cfg->nallow_cidrs, 2);
	assert_int_equal(cfg->allow_cidrs[0].family, AF_INET);
	assert_int_equal(cfg->allow_cidrs[0].prefix_len, 8);
	assert_int_equal(cfg->allow_cidrs[1].family, AF_INET6);
	assert_int_equal(cfg->allow_cidrs[1].addr[0], 0xfd);
	assert_int_equal(cfg->egress.connect_timeout_ms, 5000);
	assert_int_equal(cfg->egress.idle_timeout_s, 600);
	assert_int_equal(cfg->egress.max_tunnels_per_tenant, 64);
	assert_int_equal(cfg->egress.handshake_timeout_ms, 2000);
	assert_int_equal(cfg->egress.header_max_bytes, 4096);
	assert_int_equal(cfg->egress.max_tunnels, 1000);
	assert_int_equal(cfg->ncredentials, 2);
	assert_string_equal(cfg->credentials[0].name, "npm");
	assert_int_equal(cfg->credentials[0].npaths, 2);
	assert_string_equal(cfg->credentials[0].paths[0], ".npmrc");
	assert_string_equal(cfg->credentials[0].paths[1], ".config/npm");
	assert_int_equal(cfg->credentials[0].nhosts, 2);
	assert_string_equal(cfg->credentials[0].hosts[1], "*.npmjs.com:443");
	assert_int_equal(cfg->credentials[0].nenv, 2);
	assert_string_equal(cfg->credentials[0].env[0], "NPM_CONFIG_USERCONFIG=${HOME}/.npmrc");
	assert_string_equal(cfg->credentials[1].name, "docker");
	assert_int_equal(cfg->credentials[1].nhosts, 0);
	assert_true(cfg->host_proxy.enabled);
	assert_string_equal(cfg->host_proxy.listen, "127.0.0.1:3129");
	assert_string_equal(cfg->host_proxy.profile, "standard");
	assert_null(cfg->host_proxy.policy);
	assert_string_equal(cfg->host_proxy.cgroup, "/sys/fs/cgroup/user.slice/agents");
}

/* The file make install puts in SYSCONFDIR/corral, made by make from
 * conf/corrald.yaml.in: every key commented out, so it changes nothing. */
static void
test_installed_default_file_loads_as_defaults(void **state)
{
	const char *builddir = getenv("top_builddir");
	char file[TEST_PATH_MAX_BYTES];

	(void)state;
	snprintf(file, sizeof(file), "%s/conf/corrald.yaml", builddir != NULL ? builddir : ".");
	if (config_load(file, true, &cfg, &diags) != 0)
		yaml_test_dump_diags(&diags);
	assert_non_null(cfg);
	assert_defaults(cfg);
}

/* ---- host mode ---- */

static void
test_host_proxy_empty_key_enables_defaults(void **state)
{
	(void)state;
	assert_int_equal(load("host_proxy:\n"), 0);
	assert_true(cfg->host_proxy.enabled);
	assert_string_equal(cfg->host_proxy.listen, "127.0.0.1:3128");
	assert_string_equal(cfg->host_proxy.profile, "strict");
}

static void
test_host_proxy_policy_replaces_profile(void **state)
{
	(void)state;
	assert_int_equal(load("host_proxy: {policy: /etc/corral/host.yaml, listen: \"[::1]:0\"}\n"), 0);
	assert_string_equal(cfg->host_proxy.policy, "/etc/corral/host.yaml");
	assert_null(cfg->host_proxy.profile);
	assert_string_equal(cfg->host_proxy.listen, "[::1]:0");
}

static void
test_host_proxy_listen_on_any_address_refused(void **state)
{
	(void)state;
	assert_one_error("host_proxy:\n  listen: 0.0.0.0:3128\n", 2, 11,
	    "host mode serves loopback only");
}

static void
test_metrics_listen_on_loopback_only(void **state)
{
	(void)state;
	assert_int_equal(load("max_sandboxes: 3\n"), 0);
	assert_null(cfg->metrics_listen);
	config_free(cfg);
	assert_int_equal(load("metrics:\n  listen: 127.0.0.1:9464\n"), 0);
	assert_string_equal(cfg->metrics_listen, "127.0.0.1:9464");
	config_free(cfg);
	assert_one_error("metrics:\n  listen: 0.0.0.0:9464\n", 2, 11,
	    "metrics.listen '0.0.0.0:9464' is not a loopback address: the metrics listener serves "
	    "loopback only");
}

static void
test_warm_pool_counts_by_profile(void **state)
{
	(void)state;
	assert_int_equal(load("max_sandboxes: 6\n"), 0);
	assert_int_equal(cfg->nwarm_pool, 0);
	config_free(cfg);
	assert_int_equal(load("max_sandboxes: 6\nwarm_pool:\n  strict: 2\n  standard: 0\n"), 0);
	assert_int_equal(cfg->nwarm_pool, 2);
	assert_string_equal(cfg->warm_pool[0].profile, "strict");
	assert_int_equal(cfg->warm_pool[0].count, 2);
	assert_string_equal(cfg->warm_pool[1].profile, "standard");
	assert_int_equal(cfg->warm_pool[1].count, 0);
}

static void
test_warm_pool_bad_entries_are_refused(void **state)
{
	(void)state;
	assert_one_error_then_reset("warm_pool: 2\n", 1, 12, "warm_pool");
	assert_one_error_then_reset("warm_pool:\n  Strict: 1\n", 2, 3, "warm_pool: profile 'Strict'");
	assert_one_error_then_reset("warm_pool:\n  strict: -1\n", 2, 11, "warm_pool.strict");
	assert_one_error_then_reset("warm_pool:\n  strict: [1]\n", 2, 11, "warm_pool");
	assert_one_error_then_reset("warm_pool:\n  strict: 1\n  strict: 2\n", 3, 3,
	    "warm_pool: profile 'strict' is given twice");
	assert_one_error_then_reset("max_sandboxes: 3\nwarm_pool:\n  strict: 4\n", 3, 11,
	    "warm_pool.strict");
	assert_one_error_then_reset("max_sandboxes: 3\nwarm_pool:\n  strict: 2\n  standard: 2\n", 3, 3,
	    "warm_pool: 4 warm sandboxes in all, more than max_sandboxes (3)");
}

static void
test_metrics_keys_are_checked(void **state)
{
	(void)state;
	assert_one_error("metrics: {lisen: 127.0.0.1:9464}\n", 1, 11, "lisen");
}

static void
test_host_proxy_transparent_on_loopback_is_kept(void **state)
{
	(void)state;
	assert_int_equal(load("host_proxy:\n  transparent: 127.0.0.1:15001\n"), 0);
	assert_string_equal(cfg->host_proxy.transparent, "127.0.0.1:15001");
}

static void
test_host_proxy_transparent_off_loopback_refused(void **state)
{
	(void)state;
	assert_one_error("host_proxy:\n  transparent: 0.0.0.0:15001\n", 2, 16,
	    "host_proxy.transparent '0.0.0.0:15001' is not a loopback address");
}

static void
test_host_proxy_listen_on_private_address_refused(void **state)
{
	(void)state;
	assert_one_error("host_proxy:\n  listen: 10.0.0.1:3128\n", 2, 11,
	    "'10.0.0.1:3128' is not a loopback address");
}

static void
test_host_proxy_listen_on_ipv4_mapped_loopback_refused(void **state)
{
	(void)state;
	assert_one_error("host_proxy: {listen: \"[::ffff:127.0.0.1]:3128\"}\n", 1, 22,
	    "loopback only");
}

static void
test_host_proxy_listen_without_port_refused(void **state)
{
	(void)state;
	assert_one_error("host_proxy: {listen: 127.0.0.1}\n", 1, 22, "has no port");
}

static void
test_host_proxy_policy_and_profile_both_refused(void **state)
{
	(void)state;
	assert_one_error("host_proxy:\n  policy: /etc/corral/host.yaml\n  profile: strict\n", 2, 3,
	    "both 'policy' and 'profile'");
}

static void
test_host_proxy_cgroup_outside_cgroupfs_refused(void **state)
{
	(void)state;
	assert_one_error("host_proxy:\n  cgroup: /tmp/agents\n", 2, 11, "not under /sys/fs/cgroup/");
}

static void
test_host_proxy_bad_profile_name_refused(void **state)
{
	(void)state;
	assert_one_error("host_proxy:\n  profile: ../strict\n", 2, 12, "host_proxy.profile");
}

static void
test_host_proxy_as_boolean_refused(void **state)
{
	(void)state;
	assert_one_error("host_proxy: true\n", 1, 13, "must be a mapping, but it is a single value");
}

/* ---- validation errors ---- */

static void
test_limits_and_shares_are_read(void **state)
{
	(void)state;
	assert_int_equal(load("limits:\n  pids: 512\n  memory: 2G\n  cpus: 1.5\n"
	    "  tmpfs: 100M\n  home: 25%\n  max: {pids: 4096, memory: 8G, cpus: 2}\n"
	    "max_sandboxes: 9\n"
	    "shares: {connections: 5, streams: 6, buffered_bytes: 1M, tunnels: 77}\n"), 0);
	assert_int_equal(cfg->limits.dflt[LIMITS_PIDS].value, 512);
	assert_int_equal(cfg->limits.dflt[LIMITS_PIDS].origin, LIMITS_CONFIG);
	assert_true(cfg->limits.dflt[LIMITS_MEMORY].value == 2ull << 30);
	assert_int_equal(cfg->limits.dflt[LIMITS_CPUS].value, 1500);
	assert_true(cfg->limits.dflt[LIMITS_TMPFS].value == 100ull << 20);
	/* A share of the machine's memory, in whole MiB. */
	assert_true(cfg->limits.dflt[LIMITS_HOME].value == limits_machine_ram() / 4 >> 20 << 20);
	assert_int_equal(cfg->limits.max[LIMITS_PIDS], 4096);
	assert_true(cfg->limits.max[LIMITS_MEMORY] == 8ull << 30);
	assert_int_equal(cfg->limits.max[LIMITS_CPUS], 2000);
	assert_int_equal(cfg->shares.connections, 5);
	assert_int_equal(cfg->shares.streams, 6);
	assert_true(cfg->shares.buffered_bytes == 1ull << 20);
	assert_int_equal(cfg->shares.tunnels, 77);
	/* Not given: half of max_sandboxes, rounded up. */
	assert_int_equal(cfg->max_sandboxes_per_user, 5);
}

static void
test_limits_defaults_follow_the_machine(void **state)
{
	(void)state;
	assert_int_equal(load("max_sandboxes: 3\n"), 0);
	assert_int_equal(cfg->limits.dflt[LIMITS_PIDS].value, 1024);
	assert_int_equal(cfg->limits.dflt[LIMITS_PIDS].origin, LIMITS_DEFAULT);
	assert_true(cfg->limits.dflt[LIMITS_MEMORY].value >= limits_machine_ram() / 2 - (1 << 20));
	assert_int_equal(cfg->max_sandboxes_per_user, 2);
	assert_int_equal(cfg->shares.tunnels, cfg->egress.max_tunnels / 4);
	assert_int_equal(cfg->shares.streams, 32);
}


static void
test_bad_limit_values_are_refused_with_their_place(void **state)
{
	(void)state;
	assert_one_error_then_reset("limits:\n  memory: lots\n", 2, 11,
	    "limits.memory 'lots' is not a size (512M, 4G) or a share of the machine's memory");
	assert_one_error_then_reset("limits:\n  cpus: 1.2345\n", 2, 9,
	    "limits.cpus '1.2345' is not a number of CPUs with at most 3 decimals");
	assert_one_error_then_reset("limits:\n  max:\n    pids: 0\n", 3, 11,
	    "limits.max.pids '0' is not a count from 1 to 4194304");
	assert_one_error_then_reset("limits:\n  memory: 150%\n", 2, 11, "is not a size");
	assert_one_error_then_reset("limits:\n  pids: 5000\n  max: {pids: 100}\n", 2, 9,
	    "limits.pids is over limits.max.pids");
	assert_one_error_then_reset("shares: {buffered_bytes: 100}\n", 1, 26,
	    "shares.buffered_bytes '100' is not a size of at least 64K");
	assert_one_error_then_reset("shares: {connections: 0}\n", 1, 23,
	    "shares.connections 0 is out of range");
	assert_one_error_then_reset("shares: {streams: 10001}\n", 1, 19,
	    "shares.streams 10001 is out of range");
	assert_one_error_then_reset("ledger_group: -adm\n", 1, 15,
	    "ledger_group '-adm' must be an account name: 1-32 letters, digits, '_' or '-', "
	    "not starting with '-'");
	assert_one_error_then_reset("limits: {swap: 1G}\n", 1, 10, "unknown key 'swap' in limits");
}

static void
test_unknown_key_lists_accepted_keys(void **state)
{
	(void)state;
	assert_one_error("socket: /run/c.sock\nsokcet: /run/d.sock\n", 2, 1,
	    "unknown key 'sokcet' in the configuration (expected socket, state_dir, log_dir, "
	    "profiles_dir, machine_id, max_sandboxes, max_sandboxes_per_user, user, ledger_group, limits, "
	    "shares, network, dns, egress, credentials, secrets, host_proxy, metrics, warm_pool)");
}

static void
test_unknown_nested_key_lists_its_mapping_keys(void **state)
{
	(void)state;
	assert_one_error("egress:\n  connect_timeout: 100\n", 2, 3,
	    "unknown key 'connect_timeout' in egress (expected allow_cidrs, connect_timeout_ms,");
}

static void
test_wrong_type_refused(void **state)
{
	(void)state;
	assert_one_error("max_sandboxes: [1, 2]\n", 1, 16,
	    "'max_sandboxes' in the configuration must be a single value, but it is a list");
}

static void
test_list_item_of_wrong_type_refused(void **state)
{
	(void)state;
	assert_one_error("egress:\n  allow_cidrs:\n    - {net: 10.0.0.0/8}\n", 3, 7,
	    "each item of 'allow_cidrs' must be a single value, but this one is a mapping");
}

static void
test_user_names_the_brokers_account(void **state)
{
	(void)state;
	assert_int_equal(load("user: corral-broker\n"), 0);
	assert_string_equal(cfg->user, "corral-broker");
}

static void
test_user_that_is_not_an_account_name_refused(void **state)
{
	(void)state;
	assert_one_error("user: ../root\n", 1, 7, "user '../root' must be an account name");
}

static void
test_duplicate_key_refused(void **state)
{
	(void)state;
	assert_one_error("machine_id: a\nmachine_id: b\n", 2, 1,
	    "duplicate key 'machine_id' in the configuration (first given at line 1, column 1)");
}

static void
test_anchor_and_alias_refused(void **state)
{
	(void)state;
	assert_int_equal(load("state_dir: &d /srv/a\nlog_dir: *d\n"), -1);
	assert_diag(0, 1, 12, "anchors are not allowed");
	assert_diag(1, 2, 10, "aliases are not allowed");
	assert_int_equal(diags.count, 2);
}

static void
test_invalid_utf8_refused(void **state)
{
	(void)state;
	assert_one_error("machine_id: ok\nlog_dir: /srv/\xff\n", 2, 15, "invalid UTF-8");
}

static void
test_top_level_list_refused(void **state)
{
	(void)state;
	assert_one_error("- socket\n", 1, 1, "must be a mapping");
}

static void
test_bad_cidr_refused(void **state)
{
	(void)state;
	assert_one_error("network:\n  pool: 10.231.0.300/16\n", 2, 9,
	    "network.pool '10.231.0.300/16' has no valid IPv4 or IPv6 address");
}

static void
test_cidr_with_host_bits_refused(void **state)
{
	(void)state;
	assert_one_error("egress: {allow_cidrs: [10.0.0.1/8]}\n", 1, 24, "bits set past its prefix");
}

static void
test_allow_cidrs_naming_loopback_refused(void **state)
{
	(void)state;
	assert_one_error("egress:\n  allow_cidrs:\n    - 127.0.0.1/32\n", 3, 7,
	    "egress.allow_cidrs '127.0.0.1/32' overlaps the loopback range 127.0.0.0/8");
}

static void
test_allow_cidrs_covering_loopback_refused(void **state)
{
	(void)state;
	assert_one_error("egress:\n  allow_cidrs: [10.0.0.0/8, 64.0.0.0/2]\n", 2, 29,
	    "'64.0.0.0/2' overlaps the loopback range");
}

static void
test_allow_cidrs_covering_mapped_loopback_refused(void **state)
{
	(void)state;
	assert_one_error("egress:\n  allow_cidrs: [\"::ffff:127.0.0.0/104\"]\n", 2, 17,
	    "overlaps the loopback range");
}

static void
test_allow_cidrs_covering_link_local_refused(void **state)
{
	(void)state;
	assert_one_error("egress:\n  allow_cidrs: [169.254.169.254/32]\n", 2, 17, "link-local");
}

static void
test_allow_cidrs_covering_everything_refused(void **state)
{
	(void)state;
	assert_one_error("egress:\n  allow_cidrs: [0.0.0.0/0]\n", 2, 17, "covers every address");
}

static void
test_pool_too_small_refused(void **state)
{
	(void)state;
	assert_one_error("network:\n  pool: 10.231.0.0/29\n", 2, 9,
	    "too small: its prefix must be /8 to /28 (each sandbox takes a /30)");
}

static void
test_pool_ipv6_refused(void **state)
{
	(void)state;
	assert_one_error("network:\n  pool: fd00::/64\n", 2, 9, "the pool is an IPv4 range");
}

static void
test_pool_on_loopback_refused(void **state)
{
	(void)state;
	assert_one_error("network:\n  pool: 127.10.0.0/16\n", 2, 9, "overlaps the loopback range");
}

static void
test_pool_smaller_than_max_sandboxes_refused(void **state)
{
	(void)state;
	assert_one_error("max_sandboxes: 100\nnetwork:\n  pool: 10.231.0.0/24\n", 3, 9,
	    "holds 64 sandboxes (a /30 each), fewer than max_sandboxes 100");
}

static void
test_pool_of_exact_capacity_accepted(void **state)
{
	(void)state;
	assert_int_equal(load("max_sandboxes: 4\nnetwork:\n  pool: 10.231.0.0/28\n"), 0);
	assert_int_equal(cfg->pool.prefix_len, 28);
	assert_int_equal(cfg->max_sandboxes, 4);
}

static void
test_out_of_range_numbers_refused(void **state)
{
	(void)state;
	assert_int_equal(load("max_sandboxes: 0\n"
	    "egress:\n"
	    "  connect_timeout_ms: 99\n"
	    "  idle_timeout_s: 86401\n"
	    "  max_tunnels_per_sandbox: 100001\n"
	    "  handshake_timeout_ms: 600001\n"
	    "  header_max_bytes: 1023\n"
	    "  max_tunnels: 99999999999999999999999\n"), -1);
	assert_diag(0, 1, 16, "max_sandboxes 0 is out of range (1-10000)");
	assert_diag(1, 3, 23, "egress.connect_timeout_ms 99 is out of range (100-600000)");
	assert_diag(2, 4, 19, "egress.idle_timeout_s 86401 is out of range (1-86400)");
	assert_diag(3, 5, 28, "egress.max_tunnels_per_sandbox 100001 is out of range (1-100000)");
	assert_diag(4, 6, 25, "egress.handshake_timeout_ms 600001 is out of range (100-600000)");
	assert_diag(5, 7, 21, "egress.header_max_bytes 1023 is out of range (1024-8192)");
	assert_diag(6, 8, 16, "is out of range (1-1000000)");
	assert_int_equal(diags.count, 7);
}

static void
test_negative_number_refused(void **state)
{
	(void)state;
	assert_one_error("egress: {idle_timeout_s: -5}\n", 1, 26, "out of range");
}

static void
test_quoted_number_refused(void **state)
{
	(void)state;
	assert_one_error("max_sandboxes: \"20\"\n", 1, 16, "is quoted");
}

static void
test_relative_paths_refused(void **state)
{
	(void)state;
	assert_int_equal(load("socket: run/corral.sock\nstate_dir: var/lib\nhost_proxy: {policy: host.yaml}\n"), -1);
	assert_diag(0, 1, 9, "socket 'run/corral.sock' is not absolute");
	assert_diag(1, 2, 12, "state_dir 'var/lib' is not absolute");
	assert_diag(2, 3, 22, "host_proxy.policy 'host.yaml' is not absolute");
	assert_int_equal(diags.count, 3);
}

static void
test_path_with_dotdot_refused(void **state)
{
	(void)state;
	assert_one_error("log_dir: /var/log/../../etc\n", 1, 10, "has a '..' segment");
}

static void
test_socket_path_longer_than_sun_path_refused(void **state)
{
	char text[256];

	(void)state;
	snprintf(text, sizeof(text), "socket: /run/%0120d.sock\n", 0);
	assert_one_error(text, 1, 9, "socket is too long (at most 107 bytes)");
}

static void
test_bad_machine_id_refused(void **state)
{
	(void)state;
	assert_one_error("machine_id: \"my host\"\n", 1, 13, "machine_id 'my host' must be 1-63");
}

static void
test_bad_dns_upstream_refused(void **state)
{
	(void)state;
	assert_int_equal(load("dns:\n  upstream: [dns.google, \"1.1.1.1:0\", \"[::1\", 0.0.0.0]\n"), -1);
	assert_diag(0, 2, 14, "'dns.google' has no valid IPv4 or IPv6 address");
	assert_diag(1, 2, 26, "has port 0");
	assert_diag(2, 2, 39, "has no ']'");
	assert_diag(3, 2, 47, "unspecified address");
	assert_int_equal(diags.count, 4);
}

static void
test_too_many_dns_upstreams_refused(void **state)
{
	(void)state;
	assert_one_error("dns:\n  upstream: [1.0.0.1, 1.0.0.2, 1.0.0.3, 1.0.0.4, 1.0.0.5, 1.0.0.6, "
	    "1.0.0.7, 1.0.0.8, 1.0.0.9]\n", 2, 13, "lists 9 servers, over the limit of 8");
}

static void
test_secrets_are_read(void **state)
{
	(void)state;
	assert_int_equal(load("secrets:\n"
	    "  - name: npm\n"
	    "    from: env:NPM_TOKEN\n"
	    "    hosts: [registry.npmjs.org:443]\n"
	    "    env: [NPM_TOKEN]\n"
	    "  - name: pypi\n"
	    "    from: file:${HOME}/.pypi-token\n"
	    "    hosts: [upload.pypi.org:443, Test.PyPI.org.:443]\n"
	    "    headers: [Authorization, X-Api-Key]\n"
	    "    query: [api_key]\n"), 0);
	assert_int_equal(cfg->nsecrets, 2);
	assert_string_equal(cfg->secrets[0].name, "npm");
	assert_string_equal(cfg->secrets[0].from, "env:NPM_TOKEN");
	assert_string_equal(cfg->secret_kinds[0].hosts[0], "registry.npmjs.org:443");
	assert_string_equal(cfg->secret_kinds[0].env[0], "NPM_TOKEN");
	assert_int_equal(cfg->secret_kinds[0].nheaders, 0);
	assert_int_equal(cfg->secret_kinds[1].nhosts, 2);
	/* Kept as the proxy names a host: lower case, no trailing dot. */
	assert_string_equal(cfg->secret_kinds[1].hosts[1], "test.pypi.org:443");
	assert_string_equal(cfg->secret_kinds[1].headers[1], "X-Api-Key");
	assert_int_equal(cfg->secret_kinds[0].nquery, 0);
	assert_int_equal(cfg->secret_kinds[1].nquery, 1);
	assert_string_equal(cfg->secret_kinds[1].query[0], "api_key");
	assert_false(cfg->secret_kinds[1].builtin);
}

static void
test_bad_secrets_are_refused_with_their_place(void **state)
{
	(void)state;
	assert_one_error_then_reset("secrets:\n  - {name: gh, from: env:X, hosts: [a.example.com:443]}\n",
	    2, 12, "secret name 'gh' is a built-in secret (gh)");
	assert_one_error_then_reset("secrets:\n  - {name: x, hosts: [a.example.com:443]}\n", 2, 5,
	    "required: where the CLI reads the value");
	assert_one_error_then_reset("secrets:\n  - {name: x, from: vault:x, hosts: [a.example.com:443]}\n",
	    2, 21, "secret source 'vault:x' is not a source (env:NAME, file:PATH or gh-hosts)");
	assert_one_error_then_reset("secrets:\n  - {name: x, from: env:X, hosts: ['*.example.com:443']}\n",
	    2, 36, "is a wildcard: a secret goes to exact host names only");
	assert_one_error_then_reset("secrets:\n  - {name: x, from: env:X, hosts: [a.example.com]}\n",
	    2, 36, "is not HOST:PORT");
	assert_one_error_then_reset("secrets:\n  - {name: x, from: env:X, hosts: [a.example.com:443], "
	    "env: [LD_PRELOAD]}\n", 2, 62, "is the dynamic loader's");
	assert_one_error_then_reset("secrets:\n  - {name: x, from: env:X, hosts: [a.example.com:443], "
	    "env: [PATH]}\n", 2, 62, "one the sandbox's commands need");
	assert_one_error_then_reset("secrets:\n  - {name: x, from: env:X, hosts: [a.example.com:443], "
	    "env: [no_proxy]}\n", 2, 62, "one the sandbox's commands need");
	assert_one_error_then_reset("secrets:\n  - {name: x, from: env:X, hosts: [a.example.com:443], "
	    "headers: [Host]}\n", 2, 66, "frames or routes the request");
	assert_one_error_then_reset("secrets:\n  - {name: x, from: env:X, hosts: [a.example.com:443], "
	    "query: ['a&b']}\n", 2, 64, "secret query parameter 'a&b' is not a query parameter's name");
	assert_one_error_then_reset("secrets:\n  - {name: x, from: env:X, hosts: [a.example.com:443]}\n"
	    "  - {name: x, from: env:Y, hosts: [b.example.com:443]}\n", 3, 12,
	    "secret name 'x' is defined twice");
}

static void
test_credential_name_colliding_with_builtin_refused(void **state)
{
	(void)state;
	assert_one_error("credentials:\n  - name: ssh\n    paths: [.ssh2]\n", 2, 11,
	    "credential name 'ssh' is a built-in grant (ssh, gh, aws, kube)");
}

static void
test_credential_defined_twice_refused(void **state)
{
	(void)state;
	assert_one_error("credentials:\n  - {name: npm, paths: [.npmrc]}\n  - {name: npm, paths: [.yarnrc]}\n",
	    3, 12, "'npm' is defined twice");
}

static void
test_credential_paths_outside_home_refused(void **state)
{
	(void)state;
	assert_int_equal(load("credentials:\n  - name: x\n    paths: [/etc/passwd, ../other/.ssh, ., .a/../b]\n"), -1);
	assert_diag(0, 3, 13, "credential path '/etc/passwd' is absolute");
	assert_diag(1, 3, 26, "'../other/.ssh' has a '..' segment");
	assert_diag(2, 3, 41, "names no file (the home itself)");
	assert_diag(3, 3, 44, "has a '..' segment");
	assert_int_equal(diags.count, 4);
}

static void
test_credential_bad_host_and_env_refused(void **state)
{
	(void)state;
	assert_int_equal(load("credentials:\n  - name: x\n    hosts: [\"*.com:443\", example.org]\n"
	    "    env: [\"1A=b\", NOEQUALS]\n"), -1);
	assert_diag(0, 3, 13, "credential host '*.com:443'");
	assert_diag(1, 3, 26, "is not HOST:PORT");
	assert_diag(2, 4, 11, "credential env '1A=b' is not NAME=VALUE");
	assert_diag(3, 4, 19, "is not NAME=VALUE");
	assert_int_equal(diags.count, 4);
}

static void
test_credential_without_name_or_grants_refused(void **state)
{
	(void)state;
	assert_int_equal(load("credentials:\n  - paths: [.x]\n  - name: y\n"), -1);
	assert_diag(0, 2, 5, "a credential has no 'name'");
	assert_diag(1, 3, 5, "grants nothing");
	assert_int_equal(diags.count, 2);
}

/* ---- several at once ---- */

static void
test_several_errors_reported_at_once_in_order(void **state)
{
	(void)state;
	assert_int_equal(load("socket: relative.sock\n"
	    "bogus: 1\n"
	    "network:\n"
	    "  pool: 10.0.0.0/30\n"
	    "egress:\n"
	    "  allow_cidrs: [127.0.0.0/8]\n"
	    "  idle_timeout_s: 0\n"
	    "credentials:\n"
	    "  - {name: gh, paths: [.config/gh]}\n"
	    "host_proxy:\n"
	    "  listen: 0.0.0.0:3128\n"
	    "  policy: /etc/corral/host.yaml\n"
	    "  profile: strict\n"), -1);
	assert_diag(0, 1, 9, "is not absolute");
	assert_diag(1, 2, 1, "unknown key 'bogus'");
	assert_diag(2, 4, 9, "too small");
	assert_diag(3, 6, 17, "overlaps the loopback range");
	assert_diag(4, 7, 19, "out of range");
	assert_diag(5, 9, 12, "built-in grant");
	assert_diag(6, 11, 3, "both 'policy' and 'profile'");
	assert_diag(7, 11, 11, "loopback only");
	assert_int_equal(diags.count, 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults_when_default_file_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_default_holds_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_file_gives_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_explicit_file_is_an_error_naming_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_world_writable_file_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_writable_file_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folder_instead_of_file_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_free_accepts_null, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_file_sets_every_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_installed_default_file_loads_as_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_empty_key_enables_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_policy_replaces_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_listen_on_any_address_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_listen_on_loopback_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_keys_are_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warm_pool_counts_by_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warm_pool_bad_entries_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_transparent_on_loopback_is_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_transparent_off_loopback_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_listen_on_private_address_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_listen_on_ipv4_mapped_loopback_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_listen_without_port_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_policy_and_profile_both_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_cgroup_outside_cgroupfs_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_bad_profile_name_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_proxy_as_boolean_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_key_lists_accepted_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_secrets_are_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_secrets_are_refused_with_their_place, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_limits_and_shares_are_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits_defaults_follow_the_machine, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_limit_values_are_refused_with_their_place,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_nested_key_lists_its_mapping_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_type_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_item_of_wrong_type_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_names_the_brokers_account, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_that_is_not_an_account_name_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_key_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_anchor_and_alias_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_utf8_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_top_level_list_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_cidr_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cidr_with_host_bits_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allow_cidrs_naming_loopback_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allow_cidrs_covering_loopback_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allow_cidrs_covering_mapped_loopback_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allow_cidrs_covering_link_local_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allow_cidrs_covering_everything_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_too_small_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_ipv6_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_on_loopback_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_smaller_than_max_sandboxes_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_of_exact_capacity_accepted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_range_numbers_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_negative_number_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quoted_number_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relative_paths_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_with_dotdot_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_path_longer_than_sun_path_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_machine_id_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_dns_upstream_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_dns_upstreams_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credential_name_colliding_with_builtin_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credential_defined_twice_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credential_paths_outside_home_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credential_bad_host_and_env_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credential_without_name_or_grants_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_several_errors_reported_at_once_in_order, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
