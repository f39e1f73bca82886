#!/bin/sh
# Credential grants (corral(1), "--grant"; corrald.yaml(5), "credentials"),
# end to end.
# Sets up: the test bed; two local users made for the test, ctest-ga and
# ctest-gb (uids 1111 and 1112, removed at the end unless they were there
# before); for each a made-up home (0700) with .ssh keys, known_hosts,
# .config/gh/hosts.yml and .gitconfig, and in ctest-ga's a key that is a
# symlink to a root-only file; a workspace of ctest-ga's; corrald in the
# test host, its control socket opened to every local user.
# Does: as ctest-ga, creates a sandbox with --grant ssh --grant gh --home
# its made-up home; looks inside; reads the policy; deletes it; tries to
# grant from ctest-gb's home.
# Expects: HOME inside is the copy, not the real home; the key and the gh
# token readable there, 0600 and ctest-ga's; ~/.ssh/config names the copied
# IdentityFile; GIT_SSH_COMMAND has -F, GH_CONFIG_DIR the copy; the real
# home not visible; the symlinked key not copied; the policy's credentials
# entry has github.com:22 and api.github.com:443; the copy gone after
# delete; another user's --home refused with a message saying why.
# Not yet in TESTS: it passes once the monitor copies grants (credcopy).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root

UID_A=1111
UID_B=1112
KEY_A='-----BEGIN OPENSSH PRIVATE KEY-----
a-key-of-ctest-ga
-----END OPENSSH PRIVATE KEY-----'
TOKEN_A=gho_tokenofctestga

corral_install_traps
corral_user_make ctest-ga "$UID_A"
corral_user_make ctest-gb "$UID_B"
tb_up || { echo "Bail out! no test bed"; exit 1; }

# home_make DIR KEY TOKEN OWNER: a made-up home with ssh, gh and git files.
home_make() {
	mkdir -p "$1/.ssh" "$1/.config/gh"
	printf '%s\n' "$2" >"$1/.ssh/id_ed25519"
	echo "ssh-ed25519 AAAAC3Nz test" >"$1/.ssh/id_ed25519.pub"
	echo "github.com ssh-ed25519 AAAAC3Nz" >"$1/.ssh/known_hosts"
	printf 'github.com:\n    oauth_token: %s\n    user: test\n' "$3" >"$1/.config/gh/hosts.yml"
	printf '[user]\n\tname = Test\n\temail = test@example.com\n' >"$1/.gitconfig"
	chown -R "$4:$4" "$1"
	chmod 0700 "$1" "$1/.ssh"
	chmod 0600 "$1/.ssh/id_ed25519"
}
port=$(tb_free_port)
ha="$TB_DIR/homes/ga"
hb="$TB_DIR/homes/gb"
ws="$TB_DIR/workspace/ga"
home_make "$ha" "$KEY_A" "$TOKEN_A" "$UID_A"
home_make "$hb" "b's key" gho_tokenofctestgb "$UID_B"
# A key that is a symlink to a file ctest-ga cannot read.
echo "root's secret" >"$TB_DIR/root-secret"
chmod 0600 "$TB_DIR/root-secret"
ln -s "$TB_DIR/root-secret" "$ha/.ssh/id_rootlink"
chown -h "$UID_A:$UID_A" "$ha/.ssh/id_rootlink"
mkdir -p "$ws" && chown "$UID_A:$UID_A" "$ws"
chmod 0755 "$TB_DIR" "$TB_DIR/homes" "$TB_DIR/workspace"

# Opened to every local user, as in sandbox-callers.sh.
corral_start_shared "$port"
corral() { corral_cli "$@"; }
as_a() { corral_as "$UID_A" "$@"; }
in_g1() { as_a exec g1 -- sh -c "$1" 2>&1; }
copy="$TB_DIR/state/sandboxes/g1/home"

# --- A sandbox with ssh and gh.
out=$(as_a sandbox create --root "$ws" --grant ssh --grant gh --home "$ha" --name g1 --json 2>&1)
check_eq "create --grant ssh --grant gh --home (the caller's own) exits 0" 0 "$?"
check "its credentials list ssh and gh, and the symlinked key as skipped" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
c = {x['name']: x for x in o['credentials']}
assert 'ssh' in c and 'gh' in c, c
assert '.ssh/id_ed25519' in c['ssh']['copied'], c['ssh']
assert any(s['path'] == '.ssh/id_rootlink' for s in c['ssh']['skipped']), c['ssh']
" "$out"
check_eq "HOME inside is the copy" "$copy" "$(in_g1 'echo $HOME')"
check_eq "the key is readable there" "$KEY_A" "$(in_g1 'cat ~/.ssh/id_ed25519')"
check_contains "the gh token is readable there" "$(in_g1 'cat ~/.config/gh/hosts.yml')" "$TOKEN_A"
check_eq "the copied key is 0600 and ctest-ga's" "600 $UID_A" \
	"$(in_g1 'stat -c "%a %u" ~/.ssh/id_ed25519')"
check_eq "the copied .ssh is 0700" "700" "$(in_g1 'stat -c %a ~/.ssh')"
check_contains ".gitconfig is copied" "$(in_g1 'cat ~/.gitconfig')" "name = Test"
check_contains "~/.ssh/config names the copied IdentityFile" \
	"$(in_g1 'cat ~/.ssh/config')" "IdentityFile $copy/.ssh/id_ed25519"
check_contains "GIT_SSH_COMMAND has -F and the copy's config" \
	"$(in_g1 'echo "$GIT_SSH_COMMAND"')" "ssh -F $copy/.ssh/config"
check_eq "GH_CONFIG_DIR is the copy's" "$copy/.config/gh" "$(in_g1 'echo "$GH_CONFIG_DIR"')"
out=$(in_g1 "ls '$ha'; cat '$ha/.ssh/id_ed25519'")
check_lacks "the real home is not visible" "$out" "$KEY_A"
check_contains "... not even listed" "$out" "No such file or directory"
check_eq "the symlinked key is not copied" "absent" \
	"$(in_g1 'test -e ~/.ssh/id_rootlink || test -L ~/.ssh/id_rootlink || echo absent')"
check_lacks "and root's file is not readable through it" \
	"$(in_g1 'cat ~/.ssh/id_rootlink')" "root's secret"
check_eq "the copy is ctest-ga's and 0600" "600 $UID_A" \
	"$(in_g1 "stat -c '%a %u' ~/.ssh/id_ed25519" 2>&1)"
check_eq "and HOME is a file system in RAM: nothing of it on the host's disk" "" \
	"$(ls -A "$copy" 2>&1)"

check "the policy's credentials entry has github.com:22 and api.github.com:443" python3 -c "
import sys, yaml
p = yaml.safe_load(sys.argv[1])
e = p['network_policies']['credentials']
have = set()
for ep in e['endpoints']:
    for port in ep.get('ports', [ep.get('port')]):
        have.add('%s:%s' % (ep['host'], port))
assert {'github.com:22', 'api.github.com:443', 'github.com:443'} <= have, have
" "$(as_a policy get g1 2>&1)"

as_a sandbox delete g1 >/dev/null 2>&1
check_eq "delete exits 0" 0 "$?"
[ ! -e "$copy" ] && [ ! -e "$TB_DIR/state/sandboxes/g1" ]
tap_result $? "after delete the copy is gone"
check_eq "the real home is untouched" "$KEY_A" "$(cat "$ha/.ssh/id_ed25519")"
[ -e "$TB_DIR/root-secret" ]; tap_result $? "and the symlink's target is kept"

# --- Another user's home.
out=$(as_a sandbox create --root "$ws" --grant ssh --home "$hb" --name g2 2>&1)
check_eq "--grant with ctest-gb's --home is refused (by the monitor: 4)" 4 "$?"
check_contains "with a message naming --home" "$out" "--home"
out=$(as_a exec g2 -- sh -c 'cat ~/.ssh/id_ed25519' 2>&1)
check_lacks "and no sandbox shows b's key" "$out" "b's key"

# --- A grant that finds nothing.
rm -rf "$ha/.aws"
out=$(as_a sandbox create --root "$ws" --grant aws --home "$ha" --name g3 2>&1)
check_eq "--grant aws without ~/.aws is refused (by the monitor: 6)" 6 "$?"
check_contains "naming the grant and what is missing" "$out" "grant aws: nothing to copy"
out=$(as_a sandbox create --root "$ws" --grant nosuch --home "$ha" --name g4 2>&1)
check_eq "an unknown grant is refused" 1 "$?"
check_contains "listing the known ones" "$out" "ssh, gh, aws, kube"

tap_done
