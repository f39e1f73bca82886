#!/bin/sh
# ledger_group (corrald.yaml(5)): a group whose members read the ledger.
# Sets up: the test bed; a local group ctest-aud, the group of its member
# user ctest-aud (uid 1131) and a user outside it (uid 1132); corrald in the
# test host with ledger_group: ctest-aud.
# Does: reads the ledger as each user; rotates it (rename, SIGUSR1) and
# reads the new file.
# Expects: the folder is the group's, mode 2750, the ledger 0640 and the
# group's; the member reads it, the other user does not; the file made
# after the rotation is the group's too.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root

UID_AUD=1131
UID_OTHER=1132
corral_install_traps
corral_user_make ctest-aud "$UID_AUD"
corral_user_make ctest-oth "$UID_OTHER"
# The member's group: ctest-aud's own, named in ledger_group.
tb_up || { echo "Bail out! no test bed"; exit 1; }
port=$(tb_free_port)
chmod 0755 "$TB_DIR"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
ledger_group: ctest-aud
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
ledger="$TB_DIR/log/egress.jsonl"
check_eq "the log folder is the group's, set-group-ID" "2750 ctest-aud" \
	"$(stat -c '%a %G' "$TB_DIR/log")"
# A record, so that the file exists and holds something.
tb_exec_host curl -sS -o /dev/null --max-time 5 -x "http://127.0.0.1:$port" \
	https://evil.com/ 2>/dev/null
_i=0
while [ ! -s "$ledger" ] && [ "$_i" -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
check_eq "the ledger is 0640 and the group's" "640 ctest-aud" "$(stat -c '%a %G' "$ledger")"
read_as() {
	setpriv --reuid="$1" --regid="$1" --clear-groups head -c 1 "$2" >/dev/null 2>&1
}
check "a member of the group reads it" read_as "$UID_AUD" "$ledger"
check_eq "another user does not" 1 "$(read_as "$UID_OTHER" "$ledger"; echo $?)"
mv "$ledger" "$ledger.1"
kill -USR1 "$(tb_pid corrald)"
tb_exec_host curl -sS -o /dev/null --max-time 5 -x "http://127.0.0.1:$port" \
	https://evil.com/ 2>/dev/null
_i=0
while [ ! -s "$ledger" ] && [ "$_i" -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
check_eq "the ledger made after a rotation is the group's too" "ctest-aud" \
	"$(stat -c '%G' "$ledger" 2>/dev/null)"
check "and its member reads it" read_as "$UID_AUD" "$ledger"
tap_done
